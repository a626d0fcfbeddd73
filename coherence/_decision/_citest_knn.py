"""The kNN estimate of :func:`coherence.ci_test` on other copies of the data: permuted
(the null of ``test_statistic='knn'``, and the bias at CMI = 0), resampled (the
interval) and simulated from a fitted model (the bias at the data's own dependence, for
``ci_method='debiased'``). One numba kernel call each when at most one conditioning
coordinate is continuous, the same values as :func:`estimate` on each copy otherwise.
"""

from __future__ import annotations

from typing import Any
from typing import NamedTuple

import numpy as np

from ._cmi import Prepared
from ._cmi import estimate
from ._cmi import keys_1d
from ._cmi import psi_table

__all__ = ["estimates_on", "model_bias", "outcome_null", "permutation_null",
           "simulated_estimates"]


class _BiasModel(NamedTuple):
    """The two small models of the debiased interval, fitted on some rows."""

    p_a: np.ndarray  # P(action | row, outcome y): (n_y, n, n_a)
    pi: np.ndarray  # P(outcome | row): (n, n_y)
    theta: float  # their exact CMI over the rows
    m_a: Any  # the fitted LogisticRegression of the action
    m_y: Any  # the fitted LogisticRegression of the outcome


def _bias_features(belief: np.ndarray, ev_disc: np.ndarray,
                   ev_cont: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The belief's cubic-spline basis and the features of P(outcome | belief, evidence):
    the basis, one-hot discrete evidence, the standardised continuous evidence."""
    from sklearn.preprocessing import SplineTransformer

    basis = SplineTransformer(n_knots=5, degree=3).fit_transform(belief[:, None])
    parts = [basis]
    if ev_disc.max() > 0:
        parts.append(np.eye(int(ev_disc.max()) + 1)[ev_disc][:, 1:])
    if ev_cont.shape[1]:
        sd = ev_cont.std(axis=0)
        parts.append((ev_cont - ev_cont.mean(axis=0)) / np.where(sd > 0, sd, 1.0))
    return basis, np.column_stack(parts)


def _fit_bias_model(action: np.ndarray, outcome: np.ndarray, basis: np.ndarray,
                    base: np.ndarray, n_a: int, n_y: int,
                    start: _BiasModel | None = None) -> _BiasModel | None:
    """Fit P(action | belief, evidence, outcome) and P(outcome | belief, evidence) on the
    rows given (from ``start``'s coefficients when given: a half-sample's refit) and
    their exact CMI over those rows; None when either cannot be fitted."""
    import copy

    from sklearn.linear_model import LogisticRegression

    n = len(action)

    def with_outcome(y: np.ndarray) -> np.ndarray:
        onehot = np.eye(n_y)[y][:, 1:]
        inter = (onehot[:, :, None] * basis[:, None, :]).reshape(n, -1)
        return np.column_stack([base, onehot, inter])

    if start is None:
        m_a = LogisticRegression(C=10.0, max_iter=2000)
        m_y = LogisticRegression(C=10.0, max_iter=2000)
    else:
        m_a, m_y = copy.deepcopy(start.m_a), copy.deepcopy(start.m_y)
        m_a.warm_start = m_y.warm_start = True
    try:
        m_a.fit(with_outcome(outcome), action)
        m_y.fit(base, outcome)
    except ValueError:  # a constant action or outcome, or a class missing from the rows
        return None
    # class probabilities in code order (classes absent from the fit get 0)
    p_a = np.zeros((n_y, n, n_a))
    for y in range(n_y):
        p_a[y][:, m_a.classes_] = m_a.predict_proba(with_outcome(np.full(n, y)))
    pi = np.zeros((n, n_y))
    pi[:, m_y.classes_] = m_y.predict_proba(base)
    mix = np.einsum("iy,yia->ia", pi, p_a)
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(p_a > 0, p_a * np.log(p_a / mix[None]), 0.0).sum(axis=2)
    theta = float(np.mean(np.sum(pi * terms.T, axis=1)))
    return _BiasModel(p_a, pi, theta, m_a, m_y)


def model_bias(prep: Prepared, k: int, belief: np.ndarray, ev_cont: np.ndarray,
               groups: np.ndarray, n_replicates: int, gen: np.random.Generator,
               outcome_per_row: bool = False,
               half_samples: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None,
               ) -> tuple[float, float]:
    """The estimator's bias at the data's own dependence, by a parametric bootstrap, and
    how much more the debiased centre varies than the estimate.

    Fits P(action | belief, evidence, outcome) (multinomial logistic regression
    on a cubic-spline basis of the belief, one-hot discrete evidence, the
    continuous evidence, the outcome and its interactions with the belief
    basis) and P(outcome | belief, evidence); computes the exact CMI of the
    fitted model over the observed rows; simulates studies from it (one outcome
    per context, drawn from the mean of its rows' fitted probabilities, or with
    ``outcome_per_row`` (the data's outcome varies within a context) one per row from
    its own; the actions of the rows given their own belief and the simulated
    outcome). The bias is the mean estimate on them minus the model's CMI.

    With ``half_samples = (rows, offsets, estimates)`` (some of the interval's
    half-samples and the estimate on each), the two models are refitted on each
    half-sample (from the full fit's coefficients). The bias moves with the fitted
    CMI, so the centre (estimate minus bias) varies more than the estimate: the
    second value is the ratio of the half-samples' spread of ``estimate - s theta``
    (``s`` the bias per nat of the full fit, clipped to [-1, 0]) to that of the
    estimate, at least 1 (1 without ``half_samples``). NaN, 1 when a model cannot be
    fitted (a constant action or outcome).
    """
    from threadpoolctl import threadpool_limits

    action, outcome, ev_disc = prep.disc["x"], prep.disc["y"], prep.disc["z"]
    n_a = int(action.max()) + 1
    n_y = int(outcome.max()) + 1
    if n_a < 2 or n_y < 2:
        return float("nan"), 1.0
    n = len(action)
    basis, base = _bias_features(belief, ev_disc, ev_cont)
    # small fits: scikit-learn's OpenMP threads (started after any limit the caller set,
    # when scikit-learn is first imported here) only spin; one thread, same numbers
    with threadpool_limits(1):
        fit = _fit_bias_model(action, outcome, basis, base, n_a, n_y)
        if fit is None:
            return float("nan"), 1.0
        spread = None if half_samples is None else _centre_spread(
            fit, action, outcome, basis, base, half_samples)
    p_a, pi, theta = fit.p_a, fit.pi, fit.theta
    n_groups = int(groups.max()) + 1
    cnt = np.bincount(groups, minlength=n_groups).astype(np.float64)
    pi_context = np.column_stack([np.bincount(groups, weights=pi[:, y], minlength=n_groups)
                                  for y in range(n_y)]) / cnt[:, None]
    cum_context = np.cumsum(pi_context, axis=1)
    cum_a = np.cumsum(p_a, axis=2)
    rows = np.arange(n)
    a_sims = np.empty((n_replicates, n), dtype=np.int64)
    y_sims = np.empty((n_replicates, n), dtype=np.int64)
    # the outcome's units: rows where it varies within a context, else the contexts
    cum_y = np.cumsum(pi, axis=1) if outcome_per_row else cum_context
    row_unit = rows if outcome_per_row else groups
    for b in range(n_replicates):
        y_unit = np.minimum((gen.random(len(cum_y))[:, None] > cum_y).sum(axis=1), n_y - 1)
        y_sims[b] = y_unit[row_unit]
        a_sims[b] = np.minimum((gen.random(n)[:, None] > cum_a[y_sims[b], rows]).sum(axis=1),
                               n_a - 1)
    sims = simulated_estimates(prep, k, a_sims, y_sims)
    sims = sims[np.isfinite(sims)]
    bias = float(np.mean(sims) - theta) if sims.size else float("nan")
    if not np.isfinite(bias) or spread is None:
        return bias, 1.0
    return bias, _spread_ratio(bias, theta, *spread)


def _centre_spread(fit: _BiasModel, action: np.ndarray, outcome: np.ndarray,
                   basis: np.ndarray, base: np.ndarray,
                   half_samples: tuple[np.ndarray, np.ndarray, np.ndarray],
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The fitted CMI on each half-sample (refitted from ``fit``) and the estimate on it,
    both over the half-samples where both are finite."""
    rows, offsets, estimates = half_samples
    n_a, n_y = fit.p_a.shape[2], fit.p_a.shape[0]
    thetas = np.full(len(estimates), np.nan)
    for h in range(len(estimates)):
        idx = rows[offsets[h]:offsets[h + 1]]
        sub = _fit_bias_model(action[idx], outcome[idx], basis[idx], base[idx], n_a, n_y,
                              start=fit)
        if sub is not None:
            thetas[h] = sub.theta
    ok = np.isfinite(thetas) & np.isfinite(estimates)
    return thetas[ok], np.asarray(estimates)[ok]


def _spread_ratio(bias: float, theta: float, thetas: np.ndarray,
                  estimates: np.ndarray) -> float:
    """sd(estimate - s theta) / sd(estimate) over the half-samples, at least 1; ``s`` the
    bias per nat of fitted CMI, clipped to [-1, 0] (1 with fewer than 10 half-samples)."""
    if len(estimates) < 10:
        return 1.0
    sd = float(np.std(estimates, ddof=1))
    slope = float(np.clip(bias / theta, -1.0, 0.0)) if theta > 0 else 0.0
    if not sd > 0:
        return 1.0
    return max(1.0, float(np.std(estimates - slope * thetas, ddof=1)) / sd)


def simulated_estimates(prep: Prepared, k: int, a_sims: np.ndarray,
                        y_sims: np.ndarray) -> np.ndarray:
    """The estimate on each simulated study (row ``b``: its actions and outcomes; the
    conditioning values are the data's), in one kernel call when at most one
    coordinate is continuous (the same values as :func:`estimate` on each)."""
    if prep.n_continuous <= 1:
        from ._kernels_cmi import simulated_estimates as kernel

        keys = keys_1d(prep)
        m_x = int(max(a_sims.max(initial=0), prep.disc["x"].max(initial=0))) + 1
        m_y = int(max(y_sims.max(initial=0), prep.disc["y"].max(initial=0))) + 1
        return np.asarray(kernel(keys.c, a_sims, y_sims, m_x, m_y, keys.kz,
                                              int(keys.kz.max(initial=0)) + 1, keys.has_c,
                                              k, psi_table(prep.n)))
    out = np.empty(len(a_sims))
    for b in range(len(a_sims)):
        disc = dict(prep.disc, x=a_sims[b], y=y_sims[b])
        out[b] = estimate(Prepared(n=prep.n, cont=prep.cont, disc=disc), k)
    return out


def outcome_null(prep: Prepared, k: int, y_unit: np.ndarray, groups: np.ndarray,
                 block_start: np.ndarray, block_units: np.ndarray,
                 seeds: np.ndarray) -> np.ndarray:
    """Estimates after permuting the contexts' outcomes inside blocks, one per seed."""
    if prep.n_continuous <= 1:
        from ._kernels_cmi import unit_permutation_null

        keys = keys_1d(prep)
        m_z = int(keys.kz.max()) + 1
        m_y = int(y_unit.max()) + 1
        return np.asarray(unit_permutation_null(
            keys.c, prep.disc["x"], y_unit, groups, m_y, keys.kz, m_z, keys.has_c, k,
            psi_table(prep.n), block_start, block_units, seeds))
    # several continuous conditioning coordinates: the same permutations in Python
    out = np.empty(len(seeds))
    for b, seed in enumerate(seeds):
        gen = np.random.default_rng(int(seed))
        source = np.arange(len(y_unit))
        for j in range(len(block_start) - 1):
            units = block_units[block_start[j]:block_start[j + 1]]
            source[units] = units[gen.permutation(len(units))]
        disc = dict(prep.disc, y=y_unit[source[groups]])
        out[b] = estimate(Prepared(n=prep.n, cont=prep.cont, disc=disc), k)
    return out


def estimates_on(prep: Prepared, k: int, rows: np.ndarray, offsets: np.ndarray) -> np.ndarray:
    if prep.n_continuous <= 1:
        from ._kernels_cmi import resample_estimates

        keys = keys_1d(prep)
        longest = int(np.max(np.diff(offsets)))
        return np.asarray(resample_estimates(keys.c, keys.kxyz, keys.kxz, keys.kyz, keys.kz,
                                             keys.has_c, k, psi_table(longest), rows, offsets))
    out = np.empty(len(offsets) - 1)
    for b in range(len(out)):
        idx = rows[offsets[b]:offsets[b + 1]]
        sub = Prepared(n=len(idx), cont={r: v[idx] for r, v in prep.cont.items()},
                        disc={r: v[idx] for r, v in prep.disc.items()})
        out[b] = estimate(sub, k)
    return out


def permutation_null(prep: Prepared, k: int, blocks: tuple[np.ndarray, ...],
                     seeds: np.ndarray) -> np.ndarray:
    unit_start, unit_rows, block_start, block_units = blocks
    if prep.n_continuous <= 1:
        from ._kernels_cmi import permutation_null

        keys = keys_1d(prep)
        m_yz = int(keys.kyz.max()) + 1
        m_z = int(keys.kz.max()) + 1
        return np.asarray(permutation_null(
            keys.c, prep.disc["x"], keys.kyz, m_yz, keys.kz, m_z, keys.has_c, k,
            psi_table(prep.n), unit_start, unit_rows, block_start, block_units, seeds))
    # several continuous conditioning coordinates: the same permutations in Python
    out = np.empty(len(seeds))
    dx = prep.disc["x"]
    for b, seed in enumerate(seeds):
        gen = np.random.default_rng(int(seed))
        src = np.arange(prep.n)
        for j in range(len(block_start) - 1):
            units = block_units[block_start[j]:block_start[j + 1]]
            shuffled = units[gen.permutation(len(units))]
            for u, v in zip(units, shuffled, strict=True):
                src[unit_rows[unit_start[u]:unit_start[u + 1]]] = \
                    unit_rows[unit_start[v]:unit_start[v + 1]]
        disc = dict(prep.disc, x=dx[src])
        out[b] = estimate(Prepared(n=prep.n, cont=prep.cont, disc=disc), k)
    return out
