r"""The regression-adjusted statistic of :func:`coherence.ci_test`'s permutation p-value.

With continuous evidence the plug-in strata must be cells of two or more values, and
cells narrow enough to keep the test's size hold few contexts: the statistic then
spends its degrees of freedom on many small strata. This statistic instead removes
the smooth dependence of the action and of the outcome on the conditioning values
by least squares, and measures what is left between them over the whole study:

.. math::

    T = \frac{r_y^\top P_{R_a}\, r_y}{r_y^\top r_y},
    \qquad r_y = (I - H)\, y, \quad R_a = (I - H)\, A,

with :math:`A` the indicators of the actions (the first level left out),
:math:`y` the outcome (0/1; with more than two classes the matrix of every class's
indicator, numerator and denominator summed over the classes, so that the labels'
order does not matter), :math:`H` the projection on a basis of the conditioning
values (an intercept, an indicator of each discrete evidence stratum, for each
belief or continuous evidence value a cubic B-spline with knots at five of its
quantiles, or an indicator of each level where it takes few values, and the cross
terms of a cubic polynomial in the values) and
:math:`P_{R_a}` the projection on the columns of :math:`R_a`: the share of the
outcome's residual that the actions' residuals explain (the generalised
covariance measure of Shah and Peters 2020, over all actions at once).

Its p-value is the same local permutation's as the plug-in statistic's
(:func:`._citest_plugin.permutation_null`): the permutation blocks, not the
regression, carry the test's validity, and the regression removes the trend that a
block of not quite equal contexts would otherwise leave between action and
outcome, so that a leak of one sign is pooled over the whole study without that
trend being pooled with it. A leak whose sign changes with the conditioning values
is what it sees least; the plug-in statistic (``test_statistic='plugin'``) sees it
within each stratum (docs/validation_ci.md measures both).
"""

from __future__ import annotations

import itertools
import warnings
from collections.abc import Callable

import numpy as np

from .._warnings import SmallSampleWarning

__all__ = ["SMALL_STUDY", "adjustment_basis", "permutation_statistic", "regression_of",
           "resolve_statistic", "smaller_p"]

#: Quantiles of a continuous value that are the knots of its cubic B-spline.
N_KNOTS = 5


def _levels(x: np.ndarray) -> np.ndarray:
    """An indicator of each level of ``x`` but the first."""
    out: np.ndarray = (x[:, None] == np.unique(x)[None, 1:]).astype(np.float64)
    return out


def _value_columns(x: np.ndarray) -> np.ndarray:
    """Columns of one conditioning value: an indicator of each level but the first where
    it takes at most ``N_KNOTS + 3`` values (as many as the spline has columns), else the
    cubic B-spline on knots at its quantiles (the first column left out: the columns
    sum to 1, which the intercept already spans)."""
    from scipy.interpolate import BSpline

    if len(np.unique(x)) <= N_KNOTS + 3:
        return _levels(x)
    knots = np.unique(np.quantile(x, np.linspace(0.0, 1.0, N_KNOTS)))
    t = np.r_[np.repeat(knots[0], 3), knots, np.repeat(knots[-1], 3)]
    spline = BSpline.design_matrix(x, t, 3).toarray()
    out: np.ndarray = spline[:, 1:]
    return out


def _cross_terms(values: np.ndarray) -> np.ndarray:
    """The cross terms of a cubic polynomial in the standardised values (columns): for
    each pair ``z_i z_j``, ``z_i^2 z_j``, ``z_i z_j^2``, for each triple ``z_i z_j z_k``
    (none for one value)."""
    sd = values.std(axis=0)
    z = (values - values.mean(axis=0)) / np.where(sd > 0, sd, 1.0)
    d = z.shape[1]
    terms = [t for i, j in itertools.combinations(range(d), 2)
             for t in (z[:, i] * z[:, j], z[:, i] ** 2 * z[:, j], z[:, i] * z[:, j] ** 2)]
    terms += [z[:, i] * z[:, j] * z[:, k] for i, j, k in itertools.combinations(range(d), 3)]
    return np.column_stack(terms) if terms else np.empty((len(z), 0))


def adjustment_basis(cond: np.ndarray) -> np.ndarray:
    """An orthonormal basis (rows x columns) of the adjustment: the intercept, the
    discrete evidence strata ``cond[:, 0]``, each value ``cond[:, 1:]``
    (:func:`_value_columns`) and the values' cross terms (:func:`_cross_terms`);
    columns that the others span are dropped."""
    from scipy.linalg import qr

    columns = [np.ones((len(cond), 1)), _levels(cond[:, 0]),
               *(_value_columns(cond[:, j]) for j in range(1, cond.shape[1])),
               _cross_terms(cond[:, 1:])]
    x = np.hstack(columns)
    q, r, _ = qr(x, mode="economic", pivoting=True)
    diag = np.abs(np.diag(r))
    keep = diag > 1e-9 * max(float(diag.max(initial=0.0)), 1.0) * max(x.shape)
    out: np.ndarray = np.ascontiguousarray(q[:, keep])
    return out


def orthonormal_columns(a: np.ndarray) -> np.ndarray:
    """An orthonormal basis of the column space of each matrix of ``a`` (ba, n, m), as
    ``m`` columns, a column of zeros for each direction whose squared singular value is
    below 1e-15 of the largest (the rank rule of a pseudo-inverse). Two passes of
    whitening by the Gram matrix's eigenvectors (Cholesky QR twice, in eigenvector
    form): the first pass's columns span ``a``'s to round-off but are orthonormal only
    to ``eps`` times the Gram's condition number, which the second pass, on a
    well-conditioned Gram, removes. A single inverse of the Gram matrix squares the
    condition number: with a nearly spanned action (14 rows, 12 basis columns) it gave
    shares of 1 + 5e-7, noise above the p-value's tie tolerance. As accurate as ``a``'s
    singular vectors, and several times cheaper than a batched SVD of tall matrices."""
    u = a
    for cut in (1e-15, 0.5):  # the rank rule, then the columns kept (near 1) or not (0)
        lam, v = np.linalg.eigh(np.swapaxes(u, 1, 2) @ u)
        keep = lam > cut * (lam[:, -1:] if cut < 0.5 else 1.0)
        u = u @ (v * np.where(keep, 1.0 / np.sqrt(np.where(keep, lam, 1.0)), 0.0)[:, None, :])
    return u


def regression_of(q: np.ndarray, action: np.ndarray, n_outcomes: int = 2
                  ) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """:math:`T` (module docstring) as a statistic of ``(actions, outcomes)`` copies for
    :func:`._citest_plugin.permutation_null`: each argument 1-d (the data's) or 2-d (a
    permuted copy a row, one of the two); ``q`` from :func:`adjustment_basis`. The data's
    ``action`` fixes the levels, and its residuals are computed once, for the outcome
    permutations that keep it. A copy whose outcome the basis explains has ``T = 0``.

    Outcomes are codes ``0..n_outcomes - 1``. With more than two, :math:`y` is the
    matrix of the indicators of every class and numerator and denominator are summed
    over them: the codes as numbers would make :math:`T` (and the p-value) depend on
    the order of the labels (a leak into the middle class was seen as a slope of 0).
    With two, the indicator of class 1 gives the same :math:`T` (the other class's
    residual is its negative)."""
    levels = np.unique(action)

    def residual_basis(a2: np.ndarray) -> np.ndarray:
        """An orthonormal basis of the columns of each copy's :math:`R_a` (ba, n, m),
        a column of zeros for each direction the adjustment already spans."""
        ind = (a2[:, :, None] == levels[None, None, 1:]).astype(np.float64)  # (ba, n, m)
        return orthonormal_columns(ind - q @ (q.T @ ind))

    fixed = residual_basis(action[None, :])

    def statistic(actions: np.ndarray, outcomes: np.ndarray) -> np.ndarray:
        u = fixed if np.ndim(actions) == 1 else residual_basis(actions)
        y2 = np.atleast_2d(outcomes)
        if n_outcomes > 2:  # every class's indicator, summed over the classes
            y3 = (y2[:, None, :] == np.arange(n_outcomes)[None, :, None]).astype(np.float64)
            ry3 = y3 - (y3 @ q) @ q.T                                     # (by, K, n)
            proj3 = ry3 @ u                                               # (b, K, m)
            explained = np.einsum("bkm,bkm->b", proj3, proj3)
            total = np.einsum("bkn,bkn->b", ry3, ry3)
            scale = np.einsum("kn,kn->", y3[0], y3[0]) + 1.0
        else:
            y2 = y2.astype(np.float64)
            ry = y2 - (y2 @ q) @ q.T                                      # (by, n)
            proj = (ry[:, None, :] @ u)[:, 0, :]                          # (b, m)
            explained = np.einsum("bm,bm->b", proj, proj)
            total = np.einsum("bn,bn->b", ry, ry)
            scale = np.einsum("n,n->", y2[0], y2[0]) + 1.0
        # a share: with orthonormal u it exceeds 1 by round-off alone
        out: np.ndarray = np.where(total > 1e-12 * scale,
                                   np.minimum(explained / np.maximum(total, 1e-300), 1.0), 0.0)
        return out

    return statistic


def smaller_p(observed: np.ndarray, copies: np.ndarray) -> tuple[float, np.ndarray]:
    """Several statistics on the data (``observed``, one value each) and on the same
    permuted copies (``copies``, copies x statistics) combined into one: each value's
    permutation p-value among the data and the copies (``#{values >= it} / (B + 1)``,
    ties as :func:`coherence._resampling.monte_carlo_pvalue` counts them), the smaller
    over the statistics, and minus its log (larger is more extreme). Returns the data's
    combined value and the copies'; their Monte Carlo p-value is a valid p-value, as
    the copies are exchangeable with the data under the null (Westfall and Young's
    min-p, over statistics rather than hypotheses)."""
    from coherence._resampling import MC_TIE_RTOL

    values = np.vstack([observed[None, :], copies])                      # (B + 1, k)
    m = len(values)
    p = np.empty_like(values)
    for j in range(values.shape[1]):
        v = values[:, j]
        bound = v - MC_TIE_RTOL * np.maximum(1.0, np.abs(v))
        p[:, j] = (m - np.searchsorted(np.sort(v), bound, side="left")) / m
    combined = 0.0 - np.log(p.min(axis=1))  # 0.0, not -0.0, where p = 1
    return float(combined[0]), combined[1:]


def permutation_statistic(name: str, cond: np.ndarray, groups: np.ndarray,
                          action: np.ndarray, outcome: np.ndarray,
                          moves: tuple[str, tuple[np.ndarray, ...]], n_resamples: int,
                          gen: np.random.Generator) -> tuple[float, np.ndarray, int]:
    """``(the statistic on the data, on the permuted copies, plug-in strata)`` for
    ``name``: ``'plugin'`` (:mod:`._citest_plugin`), ``'regression'`` (this module) or
    ``'combined'`` (the smaller of the two p-values, :func:`smaller_p`, on the same
    copies). ``cond`` is ``[discrete stratum, values...]`` per row."""
    from ._citest_plugin import permutation_null
    from ._citest_plugin import plugin_statistic
    from ._citest_plugin import strata_of_rows

    statistics = []
    n_strata = 0
    if name in ("plugin", "combined"):
        strata = strata_of_rows(cond, groups)
        n_strata = int(strata.max()) + 1
        statistics.append(plugin_statistic(strata, action, outcome))
    width = 1
    if name in ("regression", "combined"):
        n_outcomes = int(outcome.max()) + 1
        statistics.append(regression_of(adjustment_basis(cond), action, n_outcomes))
        # a copy's action indicators and residuals, and its outcome's
        width = 2 * (int(action.max()) + 1) + (2 * n_outcomes if n_outcomes > 2 else 0)

    def statistic(actions: np.ndarray, outcomes: np.ndarray) -> np.ndarray:
        return np.column_stack([f(actions, outcomes) for f in statistics])

    observed = statistic(action, outcome)[0]
    copies = permutation_null(statistic, action, outcome, moves, n_resamples, gen, width)
    if name == "combined":
        return (*smaller_p(observed, copies), n_strata)
    return float(observed[0]), copies[:, 0], n_strata


#: Below this many contexts ``test_statistic='auto'`` is the regression-adjusted statistic:
#: the plug-in one, whose permutation blocks then merge contexts of distant beliefs, was
#: measured liberal there (rational studies, 199 permutations, alpha 0.05: 0.073 at 15 x 3
#: on the 0.05 grid, 0.082 at 20 x 3 and 0.065-0.068 at 30 x 5 and 30 x 10 with
#: continuous beliefs, 0.08 at 10 x 5 with beliefs varying within contexts; 0.049 at
#: 40 x 5; the regression-adjusted one 0.038-0.058 on the same studies; docs/cmi.md).
SMALL_STUDY = 40


def resolve_statistic(name: str, n_groups: int, n_values: int) -> str:
    """The statistic ``test_statistic`` names for a study of ``n_groups`` contexts and
    ``n_values`` conditioning values (the belief and continuous evidence); an explicit
    statistic other than the regression-adjusted one is warned below ``SMALL_STUDY``."""
    if name == "auto":
        return ("regression" if n_groups < SMALL_STUDY
                else "combined" if n_values > 1 else "plugin")
    if name != "regression" and n_groups < SMALL_STUDY:
        warnings.warn(f"ci_test: {n_groups} contexts (< {SMALL_STUDY}) with "
                      f"test_statistic={name!r}: with few contexts its permutation p-value "
                      "was measured liberal (a true null rejected 0.073-0.082 of the time at "
                      "15-20 contexts, alpha 0.05), as the blocks merge contexts of distant "
                      "beliefs; test_statistic='auto' uses the regression-adjusted one "
                      "there.", SmallSampleWarning, stacklevel=4)
    return name
