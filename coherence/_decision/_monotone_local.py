r"""The localised monotone-choice test: adjacent belief windows compared, at several
scales, by context-clustered shares; calibrated by the maximum over comparisons.

For an action pair ``(a1, a2)`` only the rows choosing ``a1`` or ``a2`` count,
sorted by belief. At each boundary between two distinct belief values, a lower
window (the values just below it, grown until it holds ``t`` distinct contexts) and
an upper window (just above, likewise) are compared, for the scales
``t = t0, 2 t0, 4 t0, ...`` (boundaries thinned to one every ``t / 4`` contexts with
continuous beliefs): narrow windows see a narrow fall in the share, wide ones a
broad fall. Windows depend on the beliefs and the contexts only, never on the
choices. Each comparison's statistic is

.. math:: z = \frac{\hat s_{low} - \hat s_{high}}{\sqrt{\max(V_{jk}, V_{0})}},

:math:`\hat s` the share of ``a1`` among a window's rows, :math:`V_{jk}` the
delete-one-context jackknife variance of the difference (the repetitions of a
context move together, whatever they share) and :math:`V_0` a floor: the variance
of the difference at the two windows' pooled share
:math:`\tilde p = (X_{low} + X_{high} + 1/2) / (M_{low} + M_{high} + 1)`, the rows of a
context correlated by the intra-context correlation estimated over the pair. A
window whose rows all chose one action has no spread of its own; without the floor
the smallest difference next to it would read as a certain fall.

Under the null (each pair's share non-decreasing in the belief)
:math:`s_{low} - s_{high} \le 0` for every comparison, so :math:`z` is at most its
centred version, and the maximum of the centred statistics over all comparisons
bounds the maximum of the statistics: its distribution calibrates the test at
every point of the null, not only at flat shares. That distribution comes from a
multiplier (wild) bootstrap over contexts: each draw multiplies every context's
jackknife contribution to every comparison (each comparison scaled to unit
variance) by one standard normal multiplier (Chernozhukov, Chetverikov and Kato's
Gaussian multiplier bootstrap for maxima), so the comparisons keep their correlation
(overlapping windows, shared contexts and, across action pairs, the same
contexts). In a study too small for four windows of ``min_contexts`` contexts each
comparison's sum is also divided by its standard error re-estimated on the draw (a
wild bootstrap-t, :func:`max_t_null`): with few contexts per window the observed
:math:`z` has heavier tails than a normal, and so do those draws. The p-value
of a pair is :math:`(1 + \#\{T^* \ge T\}) / (1 + B)`, with
:math:`T` the pair's largest :math:`z`; the global p-value uses the largest over all
pairs against the joint draws (no Bonferroni factor), sequentially
(:func:`coherence._resampling.sequential_pvalue`).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

from .._resampling import MC_TIE_RTOL
from .._resampling import monte_carlo_pvalue
from .._resampling import sequential_pvalue

__all__ = ["LocalComparisons", "local_calibration", "local_comparisons", "max_t_null",
           "scales_for", "small_study_note"]

#: contexts per cell at the finest scale
MIN_CONTEXTS = 15
#: draws of the multiplier bootstrap per block (memory: block x contexts floats)
_BLOCK = 256


@dataclass(frozen=True)
class LocalComparisons:
    """Adjacent-cell comparisons of one action pair, over every scale.

    ``z`` the studentized falls (positive: the share falls as the belief rises),
    ``diff`` the differences of shares, ``se`` their standard errors; ``lo_low``,
    ``lo_high``, ``hi_low``, ``hi_high`` the belief ranges of the two cells;
    ``share_lo``, ``share_hi`` the shares; ``n_lo``, ``n_hi`` rows; ``scale`` the
    cell size in contexts; ``contrib`` the (contexts x comparisons) matrix of
    jackknife contributions of the comparisons, each scaled to unit variance
    (``scipy.sparse.csc_matrix``); ``n_units`` the contexts in a comparison's two
    windows; ``bootstrap_t`` True where the comparison's draws are re-studentized
    (:func:`max_t_null`): its windows hold fewer than ``min_contexts`` contexts (a study
    too small for four windows of ``min_contexts``) and its column holds jackknife
    contributions (not the contexts' residuals from the pooled share).
    """

    z: np.ndarray
    diff: np.ndarray
    se: np.ndarray
    scale: np.ndarray
    lo_low: np.ndarray
    lo_high: np.ndarray
    hi_low: np.ndarray
    hi_high: np.ndarray
    share_lo: np.ndarray
    share_hi: np.ndarray
    n_lo: np.ndarray
    n_hi: np.ndarray
    contrib: object
    n_units: np.ndarray
    bootstrap_t: np.ndarray

    def __len__(self) -> int:
        return len(self.z)


def scales_for(n_contexts: int, min_contexts: int = MIN_CONTEXTS) -> list[int]:
    """Cell sizes (contexts per cell): ``t0, 2 t0, 4 t0, ...`` while at least four
    windows fit; a study too small for four windows of ``t0`` gets one scale, a third
    of its contexts (at least three)."""
    scales = []
    t = min_contexts
    while 4 * t <= n_contexts:
        scales.append(t)
        t *= 2
    if not scales:
        scales.append(max(3, n_contexts // 3))
    return scales


def small_study_note(owner: str, n_contexts: int, min_contexts: int) -> str | None:
    """The warning of a study whose windows hold fewer than ``min_contexts`` contexts
    (fewer than four windows of ``min_contexts`` fit, and a third of the contexts is
    fewer: :func:`scales_for`), where the draws are re-studentized and the measured size
    still reaches the top of the band; None otherwise."""
    window = scales_for(n_contexts, min_contexts)[0]
    if window >= min_contexts:
        return None
    return (f"{owner}: windows of {window} contexts (a third of {n_contexts}) are fewer "
            f"than min_contexts = {min_contexts}, so their jackknife variances rest on few "
            "contexts. The draws are re-studentized for it (a wild bootstrap-t), and with "
            "context shocks the size at alpha 0.05 was measured at 0.045-0.072 with 20-40 "
            "contexts, at the top of the band with 25-30 "
            "(benchmarks/check_monotonicity_small.py). Read a p-value near the level with "
            "care, elicit more contexts, or use monotonicity_test(method='permutation'), "
            "valid but conservative here (0.017 with 30 contexts).")


def _side(first: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Contexts of a window's rows with their choices of a1 and rows."""
    ctx, inv = np.unique(groups, return_inverse=True)
    inv = inv.ravel()
    return ctx, np.bincount(inv, weights=first), np.bincount(inv).astype(np.float64)


def _extend(groups: np.ndarray, row_start: np.ndarray, start: int, step: int,
            t: int) -> tuple[int, int]:
    """From value ``start`` outwards (``step`` -1: down, +1: up), the last value a
    window needs to hold ``t`` distinct contexts, and the contexts it holds (fewer
    at the edge of the beliefs)."""
    n_values = len(row_start) - 1
    seen: set[int] = set()
    v = start
    while 0 <= v < n_values:
        seen.update(groups[row_start[v]:row_start[v + 1]].tolist())
        if len(seen) >= t:
            return v, len(seen)
        v += step
    return v - step, len(seen)


def _cuts(cum: np.ndarray, t: int) -> list[int]:
    """Cut positions (after value ``i``) at scale ``t``: every boundary between
    distinct values, thinned so that consecutive cuts are at least ``t / 4``
    (context, value) pairs apart (continuous beliefs have a boundary per row)."""
    step = max(1.0, t / 4.0)
    cuts, last = [], -np.inf
    for i in range(len(cum) - 2):  # cut after value i; cum[i + 1] pairs on the left
        if cum[i + 1] - last >= step:
            cuts.append(i)
            last = cum[i + 1]
    return cuts


def local_comparisons(belief: np.ndarray, first: np.ndarray, groups: np.ndarray,
                      n_groups: int, min_contexts: int = MIN_CONTEXTS
                      ) -> LocalComparisons:
    """Every local comparison of one pair (see the module's docstring).

    ``belief`` (already oriented so that the share should rise), ``first`` (1 where
    the row chose the pair's first action) and ``groups`` (context codes in
    ``0..n_groups-1``, shared by every pair of the study) are the pair's rows.
    """
    from scipy import sparse

    order = np.lexsort((groups, belief))
    belief, first, groups = belief[order], first[order], groups[order]
    values, value_of_row = np.unique(belief, return_inverse=True)
    value_of_row = value_of_row.ravel().astype(np.int64)
    n_values = len(values)
    n_contexts = int(np.unique(groups).size)
    if n_values < 2:
        return _empty(n_groups)
    row_start = np.searchsorted(value_of_row, np.arange(n_values + 1))
    # (value, context) pairs per value: the windows' size in contexts
    pairs_per_value = np.array([np.unique(groups[row_start[v]:row_start[v + 1]]).size
                                for v in range(n_values)], dtype=np.float64)
    cum = np.concatenate([[0.0], np.cumsum(pairs_per_value)])
    scales = scales_for(n_contexts, min_contexts)
    coarse = np.searchsorted(cum, cum[-1] * np.arange(1, 5) / 5.0)  # for the correlation
    rho = within_context_correlation(first, groups, np.searchsorted(
        np.unique(np.clip(coarse - 1, 0, n_values - 1)), value_of_row))
    cols: list[np.ndarray] = []
    rows_idx: list[np.ndarray] = []
    bootstrap_t: list[bool] = []
    out: dict[str, list[float]] = {k: [] for k in (
        "z", "diff", "se", "scale", "lo_low", "lo_high", "hi_low", "hi_high", "share_lo",
        "share_hi", "n_lo", "n_hi", "n_units")}
    seen: set[tuple[int, int, int]] = set()
    for t in scales:
        half = max(3.0, t / 2.0)
        for i in _cuts(cum, t):
            # left window: values l..i holding >= t contexts; right: i+1..r likewise
            l_, n_left = _extend(groups, row_start, i, -1, t)
            r_, n_right = _extend(groups, row_start, i + 1, 1, t)
            if n_left < half or n_right < half:
                continue
            key = (l_, i, r_)
            if key in seen:
                continue
            seen.add(key)
            lo = slice(row_start[l_], row_start[i + 1])
            hi = slice(row_start[i + 1], row_start[r_ + 1])
            ctx_a, xa_c0, ma_c0 = _side(first[lo], groups[lo])
            ctx_b, xb_c0, mb_c0 = _side(first[hi], groups[hi])
            xa, ma, xb, mb = xa_c0.sum(), ma_c0.sum(), xb_c0.sum(), mb_c0.sum()
            sa, sb = xa / ma, xb / mb
            diff = sa - sb
            both = np.union1d(ctx_a, ctx_b)
            n_both = len(both)
            xa_c, ma_c = np.zeros(n_both), np.zeros(n_both)
            xb_c, mb_c = np.zeros(n_both), np.zeros(n_both)
            ia, ib = np.searchsorted(both, ctx_a), np.searchsorted(both, ctx_b)
            xa_c[ia], ma_c[ia] = xa_c0, ma_c0
            xb_c[ib], mb_c[ib] = xb_c0, mb_c0
            # delete-one-context differences (a context alone in a window leaves the
            # window's share undefined: its deletion keeps the share)
            with np.errstate(invalid="ignore", divide="ignore"):
                sa_del = np.where(ma - ma_c > 0, (xa - xa_c) / (ma - ma_c), sa)
                sb_del = np.where(mb - mb_c > 0, (xb - xb_c) / (mb - mb_c), sb)
            d = (sa_del - sb_del) - diff
            d = d - d.mean()
            contrib = d * (math.sqrt((n_both - 1) / n_both) if n_both > 1 else 0.0)
            v_jk = float(np.sum(contrib ** 2))
            pooled = (xa + xb + 0.5) / (ma + mb + 1.0)
            v_floor = pooled * (1.0 - pooled) * (_design_weight(ma_c0, rho)
                                                 + _design_weight(mb_c0, rho))
            se = math.sqrt(max(v_jk, v_floor))
            out["z"].append(diff / se)
            out["diff"].append(diff)
            out["se"].append(se)
            out["scale"].append(t)
            out["lo_low"].append(float(values[l_]))
            out["lo_high"].append(float(values[i]))
            out["hi_low"].append(float(values[i + 1]))
            out["hi_high"].append(float(values[r_]))
            out["share_lo"].append(sa)
            out["share_hi"].append(sb)
            out["n_lo"].append(ma)
            out["n_hi"].append(mb)
            out["n_units"].append(n_both)
            bootstrap_t.append(v_jk > 0 and t < min_contexts)
            rows_idx.append(both)
            cols.append(_unit_column(contrib, v_jk, xa_c, ma_c, xb_c, mb_c, ma, mb, pooled))
    if not cols:
        return _empty(n_groups)
    indptr = np.concatenate([[0], np.cumsum([len(c) for c in cols])])
    matrix = sparse.csc_matrix((np.concatenate(cols), np.concatenate(rows_idx), indptr),
                               shape=(n_groups, len(cols)))
    arrays = {k: np.asarray(v, dtype=np.float64) for k, v in out.items()}
    return LocalComparisons(contrib=matrix, bootstrap_t=np.array(bootstrap_t, dtype=bool),
                            **arrays)


def within_context_correlation(first: np.ndarray, groups: np.ndarray,
                               cell_of_row: np.ndarray) -> float:
    """One-way ANOVA estimate of the intra-context correlation of the choices, on
    their residuals from the cells' shares, clipped to [0, 1] (0 with one row per
    context)."""
    cell_x = np.bincount(cell_of_row, weights=first)
    cell_m = np.bincount(cell_of_row).astype(np.float64)
    resid = first - cell_x[cell_of_row] / cell_m[cell_of_row]
    _, ctx = np.unique(groups, return_inverse=True)
    ctx = ctx.ravel()
    n_c = np.bincount(ctx).astype(np.float64)
    k, n = len(n_c), float(len(resid))
    if n <= k or k < 2:
        return 0.0
    mean_c = np.bincount(ctx, weights=resid) / n_c
    ssw = float(np.sum((resid - mean_c[ctx]) ** 2))
    ssb = float(np.sum(n_c * (mean_c - resid.mean()) ** 2))
    msw, msb = ssw / (n - k), ssb / (k - 1)
    n0 = (n - float(np.sum(n_c ** 2)) / n) / (k - 1)
    denominator = msb + (n0 - 1.0) * msw
    if denominator <= 0:
        return 1.0 if msb > 0 else 0.0
    return float(min(1.0, max(0.0, (msb - msw) / denominator)))


def _design_weight(m: np.ndarray, rho: float) -> float:
    """``Var(share) / (p (1 - p))`` of a cell whose contexts have ``m`` rows each,
    rows of a context correlated ``rho``: ``sum(m + m (m - 1) rho) / M^2``."""
    total = float(m.sum())
    return float(np.sum(m + m * (m - 1.0) * rho)) / total ** 2


def _unit_column(contrib: np.ndarray, v_jk: float, xa_c: np.ndarray, ma_c: np.ndarray,
                 xb_c: np.ndarray, mb_c: np.ndarray, ma: float, mb: float,
                 pooled: float) -> np.ndarray:
    """A comparison's column of the multiplier bootstrap, scaled to unit variance: the
    jackknife contributions (their correlation with the other comparisons), or, when
    both windows have no spread of their own, the contexts' residuals from the pooled
    share. Unit variance matches the observed statistic's null variance also where the
    floor sets its standard error."""
    if v_jk > 0:
        return contrib / math.sqrt(v_jk)
    resid = (xa_c - pooled * ma_c) / ma - (xb_c - pooled * mb_c) / mb
    resid = resid - resid.mean()
    total = float(np.sum(resid ** 2))
    return resid / math.sqrt(total) if total > 0 else resid


def _empty(n_groups: int) -> LocalComparisons:
    from scipy import sparse

    e = np.empty(0)
    return LocalComparisons(e, e, e, e, e, e, e, e, e, e, e, e,
                            sparse.csc_matrix((n_groups, 0)), e, e.astype(bool))


def max_t_null(parts: list[LocalComparisons], n_groups: int, n_resamples: int,
               rng: np.random.Generator, restudentize: bool = True) -> np.ndarray:
    """(B, len(parts)) maxima of the bootstrap statistics of each part (pair), from
    the same multipliers per context for every part; ``-inf`` for a part
    without comparisons.

    A draw's statistic of a comparison is its multiplier sum ``S* = sum w u`` (``u``
    its unit contributions over its ``n`` contexts, ``w`` standard normal). Where
    ``bootstrap_t`` (windows of fewer than ``min_contexts`` contexts: a small study) it
    is divided by the standard error re-estimated on the draw, as the observed ``z`` is
    by its own jackknife: ``sqrt(V*)``, ``V* = n/(n-1) sum (w u - S*/n)^2`` (a wild
    bootstrap-t). There the observed ``z`` has heavier tails than a normal, and ``S*``
    alone made the test liberal (0.095 at 30 x 5 with context shocks; 0.069 with
    ``V*``, ``benchmarks/check_monotonicity_small.py``). Larger windows keep ``S*``:
    re-studentized there, the draws' tails outgrow the observed ones (binary choices
    give steadier variances than the normal multipliers' ``V*``), the size at
    1,000 x 1 fell to 0.003 and power by up to a fifth. The observed ``z``'s floor is
    left out of ``V*``: any floor in the draws made the small studies liberal again
    (0.14 at 30 x 5). ``restudentize=False`` turns ``V*`` off everywhere (the earlier
    calibration, for comparison).
    """
    from scipy import sparse

    sizes = [len(p) for p in parts]
    out = np.full((n_resamples, len(parts)), -np.inf)
    if sum(sizes) == 0:
        return out
    kept = [p for p in parts if len(p)]
    matrix = sparse.hstack([p.contrib for p in kept]).tocsr()  # (G, J)
    # the re-studentized columns only (none in a study of 45 contexts or more: no extra
    # product on the draws there)
    t_cols = (np.flatnonzero(np.concatenate([p.bootstrap_t for p in kept])) if restudentize
              else np.empty(0, dtype=np.int64))
    squares = matrix[:, t_cols].multiply(matrix[:, t_cols]).tocsr()
    n_units = np.concatenate([p.n_units for p in kept])[t_cols]
    inflate = n_units / np.maximum(n_units - 1.0, 1.0)
    bounds = np.concatenate([[0], np.cumsum([s for s in sizes if s])])
    which = [i for i, s in enumerate(sizes) if s]
    done = 0
    while done < n_resamples:
        b = min(_BLOCK, n_resamples - done)
        # Gaussian multipliers: Rademacher signs, bounded, made the largest of many sums
        # over few contexts too light-tailed (sizes up to 0.09 at flat nulls)
        weights = rng.standard_normal((b, n_groups))
        stats = np.asarray(matrix.T @ weights.T).T  # (b, J)
        if len(t_cols):
            sums = stats[:, t_cols]
            spread = np.asarray(squares.T @ (weights ** 2).T).T - sums ** 2 / n_units
            stats[:, t_cols] = sums / np.sqrt(np.maximum(inflate * spread, 1e-300))
        for k, i in enumerate(which):
            out[done:done + b, i] = stats[:, bounds[k]:bounds[k + 1]].max(axis=1)
        done += b
    return out


def local_calibration(parts: list[LocalComparisons | None], n_groups: int,
                      max_draws: int, rng: np.random.Generator
                      ) -> tuple[float, list[float], np.ndarray, int]:
    """The joint multiplier-bootstrap calibration of the parts' localised comparisons
    (the pairs of :func:`monotonicity_test`, the levels of
    :func:`cyclic_monotonicity_test`): the global p-value (largest statistic over every
    part, sequential), each part's p-value and, per comparison, the single-step max-T
    adjusted p-value, all from the same draws; a part that is ``None`` gets NaN."""
    present = [p for p in parts if p is not None]
    if not present:
        return math.nan, [math.nan] * len(parts), np.empty(0), 0
    observed = np.array([float(p.z.max()) for p in present])

    def draw(b: int) -> np.ndarray:
        maxima = max_t_null(present, n_groups, b, rng)  # (b, parts)
        return np.column_stack([maxima.max(axis=1), maxima])

    p_global, draws = sequential_pvalue(draw, float(observed.max()), max_draws=max_draws)
    part_p = iter([monte_carlo_pvalue(draws[:, 1 + i], observed[i]) for i in range(len(present))])
    pvalues = [next(part_p) if p is not None else math.nan for p in parts]
    joint = np.sort(draws[:, 0])
    z = np.concatenate([p.z for p in present])
    at_least = len(joint) - np.searchsorted(joint, z - MC_TIE_RTOL * np.maximum(1.0, np.abs(z)))
    adjusted = (1.0 + at_least) / (1.0 + len(joint))
    return p_global, pvalues, adjusted, len(joint)
