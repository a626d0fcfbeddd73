"""The kNN estimate of :func:`coherence.ci_test` on other copies of the data: permuted
(the null of ``test_statistic='knn'``, and the bias at CMI = 0), resampled (the
interval) and simulated from a fitted model (the bias at the data's own dependence, for
``ci_method='debiased'``). One numba kernel call each when at most one conditioning
coordinate is continuous, the same values as :func:`estimate` on each copy otherwise.
"""

from __future__ import annotations

import numpy as np

from ._cmi import Prepared
from ._cmi import estimate
from ._cmi import keys_1d
from ._cmi import psi_table

__all__ = ["estimates_on", "model_bias", "outcome_null", "permutation_null",
           "simulated_estimates"]


def model_bias(prep: Prepared, k: int, belief: np.ndarray, ev_cont: np.ndarray,
               groups: np.ndarray, n_replicates: int, gen: np.random.Generator,
               outcome_per_row: bool = False) -> float:
    """The estimator's bias at the data's own dependence, by a parametric bootstrap.

    Fits P(action | belief, evidence, outcome) (multinomial logistic regression
    on a cubic-spline basis of the belief, one-hot discrete evidence, the
    continuous evidence, the outcome and its interactions with the belief
    basis) and P(outcome | belief, evidence); computes the exact CMI of the
    fitted model over the observed rows; simulates studies from it (one outcome
    per context, drawn from the mean of its rows' fitted probabilities, or with
    ``outcome_per_row`` (the data's outcome varies within a context) one per row from
    its own; the actions of the rows given their own belief and the simulated
    outcome) and
    returns the mean estimate on them minus the model's CMI. NaN when a model
    cannot be fitted (a constant action or outcome).
    """
    from sklearn.linear_model import LogisticRegression
    from sklearn.preprocessing import SplineTransformer
    from threadpoolctl import threadpool_limits

    action, outcome, ev_disc = prep.disc["x"], prep.disc["y"], prep.disc["z"]
    n_a = int(action.max()) + 1
    n_y = int(outcome.max()) + 1
    if n_a < 2 or n_y < 2:
        return float("nan")
    n = len(action)
    basis = SplineTransformer(n_knots=5, degree=3).fit_transform(belief[:, None])
    parts = [basis]
    if ev_disc.max() > 0:
        parts.append(np.eye(int(ev_disc.max()) + 1)[ev_disc][:, 1:])
    if ev_cont.shape[1]:
        sd = ev_cont.std(axis=0)
        parts.append((ev_cont - ev_cont.mean(axis=0)) / np.where(sd > 0, sd, 1.0))
    base = np.column_stack(parts)

    def with_outcome(y: np.ndarray) -> np.ndarray:
        onehot = np.eye(n_y)[y][:, 1:]
        inter = (onehot[:, :, None] * basis[:, None, :]).reshape(n, -1)
        return np.column_stack([base, onehot, inter])

    # small fits: scikit-learn's OpenMP threads (started after any limit the caller set,
    # when scikit-learn is first imported here) only spin; one thread, same numbers
    with threadpool_limits(1):
        try:
            m_a = LogisticRegression(C=10.0, max_iter=2000).fit(with_outcome(outcome), action)
            m_y = LogisticRegression(C=10.0, max_iter=2000).fit(base, outcome)
        except ValueError:
            return float("nan")
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
    return float(np.mean(sims) - theta) if sims.size else float("nan")


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
