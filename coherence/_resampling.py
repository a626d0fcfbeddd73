"""Resampling that respects the design: repetitions of one context move together.

Array layer only (integer group codes in, index arrays out). Public functions
convert a ``group`` column with :func:`group_codes` once and pass the codes
down.

Every resampling test of the package uses the pieces here, written once:

* :func:`monte_carlo_pvalue`, the one Monte Carlo p-value and its tie rule;
* the cluster bootstrap: :func:`cluster_draws` draws the clusters of every
  resample in one call (``rng.integers(0, G, size=(B, G))``, the same stream as
  B calls of size G); :func:`cluster_draw_chunks` yields them in memory-bounded
  chunks; :func:`cluster_weights` turns them into multiplicities,
  :func:`cluster_resample_rows` into the rows of each resample, and
  :func:`cluster_bootstrap_means` into replicates of means, :func:`cluster_mean_pivots` (over
  :func:`weighted_mean_pivots`) into replicates of means with their cluster-robust
  standard errors, and :func:`mean_interval` the bootstrap-t interval they give
  (:func:`heavy_tailed_mean_interval` with Student's small-sample factor on its pivot);
* :func:`wilson_interval`: Wilson's score interval of a proportion at the effective
  sample size of its cluster-robust standard error; :func:`fraction_interval` the same
  for a mean of fractions (uncapped, Student's t quantile on the degrees of freedom of
  :func:`satterthwaite_df`); :func:`cluster_mean_interval`
  the interval of a mean over clusters by what its values are;
* :func:`min_p_pvalue`: the p-value of the smallest of several statistics' Monte Carlo
  p-values on the same resamples (Westfall and Young's min-p);
* :func:`percentile_interval` (with :func:`expanded_level`, the level of the
  expanded percentile interval) and :func:`grouped_folds`.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "LEFT_OUT_SHARE",
    "MC_TIE_RTOL",
    "MEAN_KINDS",
    "cluster_bootstrap_means",
    "cluster_draw_chunks",
    "cluster_draws",
    "cluster_mean_interval",
    "cluster_mean_pivots",
    "cluster_members",
    "cluster_resample_rows",
    "cluster_weights",
    "expanded_level",
    "fraction_interval",
    "group_codes",
    "grouped_folds",
    "heavy_tailed_mean_interval",
    "mean_interval",
    "min_p_pvalue",
    "monte_carlo_pvalue",
    "percentile_interval",
    "point_at_value",
    "round_off_difference",
    "row_units",
    "rows_by_key",
    "satterthwaite_df",
    "sequential_pvalue",
    "sorted_codes",
    "streams_by_label",
    "studentized_interval",
    "tie_bound",
    "weighted_mean_pivots",
    "wilson_interval",
]

#: Relative tolerance of the Monte Carlo tie rule (see :func:`monte_carlo_pvalue`).
MC_TIE_RTOL = 1e-9
#: The share of bootstrap replicates left out of an interval (its statistic undefined
#: there) above which a function warns and names what it left out: the interval then rests
#: on the other replicates only (the ForecastBench scores, the LIE check's interval).
LEFT_OUT_SHARE = 0.01


def monte_carlo_pvalue(null: Any, observed: float, *,
                       break_ties: np.random.Generator | None = None) -> float:
    r"""The one Monte Carlo p-value: :math:`(1 + \#\{b : T_b \ge T\}) / (1 + B)`.

    ``null`` holds the statistic on B resamples drawn under the null (larger is
    more extreme: pass absolute values for a two-sided test); ``observed`` is
    the statistic on the data.

    Tie rule: a resample counts as at least as extreme when
    ``null >= observed - MC_TIE_RTOL * max(1, |observed|)``, with
    ``MC_TIE_RTOL = 1e-9``. Statistics that are equal in exact arithmetic but
    were summed in another order differ by a few ulps (about 1e-16 relative);
    they count as ties, while real differences between resamples (of order
    1/n for the statistics here) are far larger than the tolerance.

    Random ties: with ``break_ties`` (a generator), the data's statistic takes a
    place among the resamples that tie it (within the tolerance above, on either
    side) uniformly at random, and the p-value is its rank over ``1 + B``:
    :math:`(1 + \#\{T_b > T\} + K) / (1 + B)` with :math:`K` uniform on
    :math:`0, \dots, \#\{T_b = T\}`. A statistic with few distinct values
    under the permutations (few permutable units, a binary outcome) then keeps
    the test's size (the rank is uniform on :math:`1, \dots, 1 + B` under
    exchangeability) where counting every tie as more extreme makes it
    conservative. The p-value is never below :math:`1 / (1 + B)`. Without ties
    it equals the counting rule's, and so it does when every resample ties the
    data (the resamples cannot move the statistic: 1, not a coin's throw); in
    both cases no draw is made and ``break_ties`` is left as it was. The second
    only raises the p-value above the random rank's, so the size stays at most
    the level.

    NaN handling: a NaN in ``null`` is a resample on which the statistic is
    undefined; it is left out, and B counts only the resamples kept. The
    p-value is NaN when ``observed`` is NaN or no resample is kept.
    """
    arr = np.asarray(null, dtype=np.float64).ravel()
    arr = arr[~np.isnan(arr)]
    observed = float(observed)
    if np.isnan(observed) or arr.size == 0:
        return float("nan")
    bound = tie_bound(observed)
    at_least = int(np.count_nonzero(arr >= bound))
    if break_ties is not None:
        upper = observed + (observed - bound) if math.isfinite(observed) else observed
        above = int(np.count_nonzero(arr > upper))
        if 0 < at_least - above < arr.size:  # some ties, not all: the data's place drawn
            place = int(break_ties.integers(0, at_least - above + 1))
            return float((1.0 + above + place) / (1.0 + arr.size))
    return float((1.0 + at_least) / (1.0 + arr.size))


def round_off_difference(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """``a - b``, 0 where the two agree to within ``MC_TIE_RTOL`` (1e-9) of the larger in
    size: quantities equal in exact arithmetic (a squared violation and its noise
    expectation on heaped forecasts, a squared difference and its noise estimate) differ
    by round-off, which a square root or a sum scaled by its own size would magnify.
    NaN stays NaN."""
    out = a - b
    with np.errstate(invalid="ignore"):
        small = np.abs(out) <= MC_TIE_RTOL * np.maximum(np.abs(a), np.abs(b))
    return np.where(small, 0.0, out)


def tie_bound(observed: Any) -> Any:
    """The smallest null statistic that counts as at least as extreme as ``observed``
    (the tie rule of :func:`monte_carlo_pvalue`; elementwise on an array); an infinite
    statistic has no relative tolerance (``inf - inf`` is NaN), only an equal infinity
    ties it."""
    if np.ndim(observed) == 0:
        x = float(observed)
        return x if math.isinf(x) else x - MC_TIE_RTOL * max(1.0, abs(x))
    arr = np.asarray(observed, dtype=np.float64)
    with np.errstate(invalid="ignore"):
        return np.where(np.isinf(arr), arr, arr - MC_TIE_RTOL * np.maximum(1.0, np.abs(arr)))


def sequential_pvalue(draw: Callable[[int], np.ndarray], observed: float, *,
                      max_draws: int, stop_after: int = 20, batch: int = 512
                      ) -> tuple[float, np.ndarray]:
    r"""Besag and Clifford's sequential Monte Carlo p-value: draw until ``stop_after``
    null statistics reach the observed one, or ``max_draws`` are made.

    ``draw(b)`` returns ``b`` new null statistics (shape ``(b,)``) or rows of
    statistics whose first column is the one tested (shape ``(b, k)``). Stopped at
    the draw ``L`` that brings the ``h``-th exceedance (``h = stop_after``), the
    p-value is :math:`h / L`; after ``n = max_draws`` draws with :math:`k < h`
    exceedances it is :math:`(k + 1) / (n + 1)`, the fixed-count p-value. Either way
    it is exact (:math:`P(p \le \alpha) \le \alpha` under the null): a clearly
    non-significant statistic stops after about ``h / p`` draws, a significant one
    keeps drawing and resolves down to ``1 / (max_draws + 1)``. Ties count as
    exceedances by the rule of :func:`monte_carlo_pvalue`.

    Returns the p-value and the draws made (the first ``L`` when stopped early), so
    that statistics read off the same draws use the same resamples.

    References
    ----------
    Besag, J. and Clifford, P. (1991). Sequential Monte Carlo p-values.
    Biometrika 78(2), 301-304.
    """
    observed = float(observed)
    if np.isnan(observed):
        return float("nan"), np.empty(0)
    bound = tie_bound(observed)
    parts: list[np.ndarray] = []
    made = exceed = 0
    while made < max_draws:
        new = np.asarray(draw(min(batch, max_draws - made)), dtype=np.float64)
        tested = new if new.ndim == 1 else new[:, 0]
        hits = np.flatnonzero(tested >= bound)
        if exceed + len(hits) >= stop_after:
            last = int(hits[stop_after - exceed - 1]) + 1  # draws of this batch kept
            parts.append(new[:last])
            return stop_after / float(made + last), np.concatenate(parts)
        exceed += len(hits)
        made += len(new)
        parts.append(new)
    return (exceed + 1.0) / (made + 1.0), np.concatenate(parts)


def min_p_pvalue(observed: list[float], draws: list[np.ndarray]) -> float:
    r"""P-value of the smallest of K Monte Carlo p-values, calibrated on the same draws.

    ``observed[k]`` is statistic *k* on the data and ``draws[k]`` (B,) the same
    statistic on B resamples, the k statistics of one resample in the same
    position (larger is more extreme). Each statistic's p-value of every
    member of the pool (the data and the B resamples) is its share of the pool
    at least as large, :math:`p_{kj} = \#\{i : T_{ki} \ge T_{kj}\} / (B + 1)`;
    with :math:`m_j = \min_k p_{kj}` the result is
    :math:`\#\{j : m_j \le m_{data}\} / (B + 1)` (Westfall and Young's
    min-p). For one statistic it is :func:`monte_carlo_pvalue`. Ties follow
    the same relative tolerance; infinite statistics (no spread) rank
    beyond every finite one. A statistic undefined on the data (NaN) is left out, as
    is a resample on which a kept one is undefined; with none left the p-value is NaN,
    as :func:`monte_carlo_pvalue`'s.
    """
    kept = [(t, d) for t, d in zip(observed, draws, strict=True) if not math.isnan(t)]
    if len(kept) <= 1:
        return monte_carlo_pvalue(kept[0][1], kept[0][0]) if kept else math.nan
    pool = np.column_stack([np.concatenate([[t], np.asarray(d, dtype=np.float64)])
                            for t, d in kept])
    pool = pool[~np.isnan(pool).any(axis=1)]
    size = pool.shape[0]
    if size == 1:
        return math.nan
    pvals = np.empty_like(pool)
    for k in range(pool.shape[1]):
        col = pool[:, k]
        tol = MC_TIE_RTOL * np.maximum(1.0, np.abs(np.where(np.isfinite(col), col, 0.0)))
        ranks = np.searchsorted(np.sort(col), col - tol, side="left")
        pvals[:, k] = (size - ranks) / size
    smallest = pvals.min(axis=1)
    return float(np.count_nonzero(smallest <= smallest[0] * (1.0 + 1e-12)) / size)


def group_codes(df: pd.DataFrame, column: str, *, owner: str | None = None) -> np.ndarray:
    """Integer codes 0..G-1 of a grouping column (any hashable values; no missing)."""
    from ._validation import label_column

    codes, _ = label_column(df, column, owner=owner)
    return codes


def row_units(keys: Sequence[np.ndarray]) -> np.ndarray:
    """Codes 0..n-1 making each row its own unit (``group=None``), numbered in the order
    of the rows' values: ``np.lexsort(keys)`` (the last key sorts first).

    Numbering by position would make every draw that goes unit by unit depend on the
    order of the input rows; numbered by value, the rows' order does not matter (rows
    equal in every key are interchangeable)."""
    order = np.lexsort([np.asarray(k) for k in keys])
    units = np.empty(len(order), dtype=np.int64)
    units[order] = np.arange(len(order), dtype=np.int64)
    return units


def rows_by_key(df: pd.DataFrame, columns: Sequence[str]) -> dict[tuple[Any, ...], np.ndarray]:
    """Row positions of each distinct key, in order of first appearance.

    A key is the tuple of the values of ``columns`` as stored (objects, not
    pandas' inferred scalars); rows are grouped by ``pandas.DataFrame.groupby``
    (missing values form their own key; callers check them first).
    """
    cols = list(columns)
    frame = df[cols].astype(object)
    values = frame.to_numpy()
    groups = frame.groupby(cols, sort=False, dropna=False).indices.values()
    return {tuple(values[rows[0]]): np.asarray(rows, dtype=np.int64) for rows in groups}


def cluster_members(groups: np.ndarray, n_groups: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Rows sorted by group and the start offsets: rows of group g are
    ``order[starts[g]:starts[g + 1]]`` (at least ``n_groups`` groups, empty ones included)."""
    groups = np.asarray(groups, dtype=np.int64)
    order = np.argsort(groups, kind="stable")
    counts = np.bincount(groups, minlength=n_groups)
    starts = np.concatenate([[0], np.cumsum(counts)])
    return order, starts


def cluster_draws(n_groups: int, n_resamples: int, rng: np.random.Generator) -> np.ndarray:
    """The clusters of ``n_resamples`` bootstrap resamples: ``(n_resamples, n_groups)`` codes.

    Each row draws G clusters with replacement from the G observed ones. One
    call; the stream equals ``n_resamples`` calls ``rng.integers(0, G, size=G)``.
    """
    out: np.ndarray = rng.integers(0, n_groups, size=(n_resamples, n_groups))
    return out


def cluster_draw_chunks(n_groups: int, n_resamples: int, rng: np.random.Generator, *,
                        max_elements: int = 2_000_000) -> Iterator[tuple[int, int, np.ndarray]]:
    """:func:`cluster_draws` in chunks of at most ``max_elements`` codes: ``(start, stop,
    draws)`` with ``draws`` the rows ``start:stop`` (same stream as one call)."""
    chunk = max(1, max_elements // max(1, n_groups))
    for start in range(0, n_resamples, chunk):
        stop = min(n_resamples, start + chunk)
        yield start, stop, cluster_draws(n_groups, stop - start, rng)


def cluster_weights(draws: np.ndarray, n_groups: int) -> np.ndarray:
    """How often each cluster is drawn in each resample: ``(B, G)`` float counts."""
    n_resamples = draws.shape[0]
    flat = (draws + (np.arange(n_resamples) * n_groups)[:, None]).ravel()
    return np.bincount(flat, minlength=n_resamples * n_groups).reshape(
        n_resamples, n_groups).astype(np.float64)


def cluster_resample_rows(groups: np.ndarray,
                          draws: Iterable[np.ndarray]) -> tuple[np.ndarray, np.ndarray]:
    """Rows of each resample (all rows of each drawn cluster, in draw order), flattened:
    resample b is ``rows[offsets[b]:offsets[b + 1]]``.

    ``draws`` is any sequence of cluster-code arrays (bootstrap draws, or
    subsamples without replacement).
    """
    order, starts = cluster_members(groups)
    sizes = np.diff(starts)
    parts = []
    offsets = [0]
    for drawn in draws:
        lens = sizes[drawn]
        total = int(lens.sum())
        base = np.repeat(starts[drawn] - (np.cumsum(lens) - lens), lens)
        parts.append(order[base + np.arange(total)])
        offsets.append(offsets[-1] + total)
    rows = np.concatenate(parts) if parts else np.empty(0, dtype=np.int64)
    return (np.ascontiguousarray(rows, dtype=np.int64), np.asarray(offsets, dtype=np.int64))


def grouped_folds(groups: np.ndarray, n_splits: int,
                  rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """K-fold (train, test) row indices with whole groups in one fold, groups shuffled.

    Groups are assigned to folds in a random order so that fold sizes (in rows)
    are as equal as the group sizes allow (largest groups first, each to the
    currently smallest fold).
    """
    groups = np.asarray(groups, dtype=np.int64)
    counts = np.bincount(groups)
    n_groups = len(counts)
    if n_splits > n_groups:
        raise ValueError(f"The 'n_splits' parameter must be <= the number of groups "
                         f"({n_groups}); got {n_splits}.")
    perm = rng.permutation(n_groups)
    by_size = perm[np.argsort(-counts[perm], kind="stable")]
    fold_of_group = np.empty(n_groups, dtype=np.int64)
    load = np.zeros(n_splits, dtype=np.int64)
    for g in by_size:
        f = int(np.argmin(load))
        fold_of_group[g] = f
        load[f] += counts[g]
    fold = fold_of_group[groups]
    rows = np.arange(len(groups))
    return [(rows[fold != f], rows[fold == f]) for f in range(n_splits)]


def percentile_interval(samples: Any, confidence_level: float) -> tuple[float, float]:
    """Equal-tailed percentile interval of bootstrap replicates (NaNs ignored).

    Infinite replicates are allowed: an end that falls between two equal infinite
    ones, or strictly between a finite one and an infinite one, is that infinity
    (numpy's interpolation would give inf - inf = NaN); an end strictly between -inf
    and +inf is the wider choice (-inf for the lower end, +inf for the upper).
    """
    arr = np.asarray(samples, dtype=np.float64)
    arr = arr[~np.isnan(arr)]
    if arr.size == 0:
        return (np.nan, np.nan)
    alpha = (1.0 - confidence_level) / 2.0
    qs = np.array([alpha, 1.0 - alpha])
    with np.errstate(invalid="ignore"):
        ends = np.quantile(arr, qs)
    if np.isnan(ends).any():
        s = np.sort(arr)
        pos = qs * (s.size - 1)
        below, above = s[np.floor(pos).astype(np.int64)], s[np.ceil(pos).astype(np.int64)]
        frac = pos - np.floor(pos)
        lerp = np.where(frac == 0.0, below, np.where(below == above, below, np.where(
            np.isinf(above) & ~np.isinf(below), above, np.where(
                np.isinf(below) & ~np.isinf(above), below, [-np.inf, np.inf]))))
        ends = np.where(np.isnan(ends), lerp, ends)
    return float(ends[0]), float(ends[1])


def studentized_interval(estimate: float, plug: float, se: float, replicates: Any,
                         replicate_se: Any, confidence_level: float) -> tuple[float, float]:
    r"""Bootstrap-t interval of a debiased estimate whose bootstrap world's true value is
    the plug-in ``plug``.

    The pivot of a resample is :math:`t^* = (\theta^* - \hat\theta_{pl}) / se^*`, scaled by
    the sample's ``se`` instead where :math:`se^* = 0`, and the interval is
    :math:`[\hat\theta - t^*_{1-\alpha/2}\, se,\ \hat\theta - t^*_{\alpha/2}\, se]`
    (``se`` > 0; the caller decides what a zero ``se`` gives).
    """
    rse = np.asarray(replicate_se, dtype=np.float64)
    scale = np.where(rse > 0, rse, se)
    t_lo, t_hi = percentile_interval((np.asarray(replicates, dtype=np.float64) - plug) / scale,
                                     confidence_level)
    return estimate - t_hi * se, estimate - t_lo * se


def expanded_level(confidence_level: float, n_clusters: int) -> float:
    """The level at which to take a percentile interval so that it is Hesterberg's
    (2015) *expanded* percentile interval at ``confidence_level`` for ``n_clusters``
    independent units.

    The percentile interval is too narrow in small samples: it uses the normal
    quantile :math:`z_{1-\\alpha/2}` where Student's t and the divisor ``n - 1``
    belong. The expanded interval takes the percentiles at
    :math:`\\alpha'/2` and :math:`1-\\alpha'/2` with
    :math:`z_{1-\\alpha'/2} = \\sqrt{n/(n-1)}\\, t_{n-1,\\,1-\\alpha/2}`, so the
    interval widens by that ratio for a normal statistic (6% at n = 30, 2% at
    n = 100) and keeps the percentile interval's shape otherwise. NaN for
    ``n_clusters < 2``.

    References
    ----------
    Hesterberg, T. C. (2015). What teachers should know about the bootstrap:
    resampling in the undergraduate statistics curriculum. *The American
    Statistician* 69(4), 371-386.
    """
    if n_clusters < 2:
        return math.nan
    from scipy.stats import norm
    from scipy.stats import t

    alpha = 1.0 - confidence_level
    z = math.sqrt(n_clusters / (n_clusters - 1.0)) * float(t.ppf(1.0 - alpha / 2.0,
                                                                n_clusters - 1))
    return float(1.0 - 2.0 * norm.sf(z))


def streams_by_label(rng: np.random.Generator, labels: Any) -> list[np.random.Generator]:
    """One child stream of ``rng`` per label, then one more (a pooled row's): the stream
    of a label is chosen by its rank in sorted order (:func:`sorted_codes`), so that a
    label's resampling does not depend on where it first appears in the rows."""
    children = list(rng.spawn(len(labels) + 1))
    return [children[i] for i in [*sorted_codes(labels), len(labels)]]


def sorted_codes(labels: Any) -> np.ndarray:
    """Integer codes 0..G-1 of cluster labels in sorted label order.

    Resampling draws clusters by code, so codes in sorted (not first-appearance)
    order make a resampled result independent of the order of the input rows for
    a given ``rng``. Labels that cannot be sorted together (mixed types) fall back
    to first-appearance order.
    """
    try:
        codes, _ = pd.factorize(np.asarray(labels, dtype=object), sort=True)
    except TypeError:
        codes, _ = pd.factorize(np.asarray(labels, dtype=object))
    return codes.astype(np.int64)


def cluster_bootstrap_means(values: np.ndarray, clusters: np.ndarray, n_resamples: int,
                   rng: np.random.Generator) -> np.ndarray:
    """Cluster-bootstrap replicates of column means: ``(n_resamples, n_metrics)``.

    Clusters are drawn with replacement; a replicate's mean is the sum over the
    drawn clusters' rows divided by their row count (the mean of the stacked rows).
    """
    _, codes = np.unique(clusters, return_inverse=True)
    n_groups = int(codes.max()) + 1
    sums = np.zeros((n_groups, values.shape[1]))
    np.add.at(sums, codes, values)
    counts = np.bincount(codes, minlength=n_groups).astype(np.float64)
    weights = cluster_weights(cluster_draws(n_groups, n_resamples, rng), n_groups)
    out: np.ndarray = (weights @ sums) / (weights @ counts)[:, None]
    return out


def mean_interval(mean: float, se: float, replicates: np.ndarray, replicate_se: np.ndarray,
                  confidence_level: float, bounds: tuple[float, float]) -> tuple[float, float]:
    """The bootstrap-t interval of a mean (:func:`studentized_interval`, the pivots of
    :func:`cluster_mean_pivots` or :func:`weighted_mean_pivots`) within the range
    ``bounds`` where the population's mean lies; the point itself when the values do not
    vary (``se`` 0), the percentile interval of the replicate means when ``se`` is
    undefined (a single cluster), and also where the bootstrap-t interval lies wholly
    outside ``bounds`` (:func:`_cut_to_bounds`)."""
    if se > 0:
        low, high = studentized_interval(mean, mean, se, replicates, replicate_se,
                                         confidence_level)
        return _cut_to_bounds(low, high, bounds, replicates, confidence_level)
    if se == 0:
        return mean, mean
    return percentile_interval(replicates, confidence_level)


def point_at_value(value: float, interval: tuple[float, float], *,
                   tol: float = 1e-12) -> tuple[float, float]:
    """An interval that is a point to rounding (its ends within ``tol``, on a scale of
    about 1, of each other and of ``value``) is ``value`` itself: where every resample
    gives the estimate, the resamples and the estimate are still sums in other orders,
    which left the reported value an ulp outside its own point interval (a constant
    forecast of 0.09: Brier 0.008099999999999998, interval (0.0081, 0.0081)). Any other
    interval is returned as it is."""
    low, high = interval
    if high - low <= tol and low - tol <= value <= high + tol:
        return value, value
    return low, high


def heavy_tailed_mean_interval(mean: float, se: float, replicates: np.ndarray,
                               replicate_se: np.ndarray, residuals: np.ndarray,
                               confidence_level: float,
                               bounds: tuple[float, float]) -> tuple[float, float]:
    r"""The bootstrap-t interval of :func:`mean_interval` for a mean of heavy-tailed values
    (a log score), its pivot's quantiles widened by Student's small-sample factor

    .. math::

        f = \sqrt{C / (C - 1)}\; t_{\nu,\,1-\alpha/2} / z_{1-\alpha/2},

    :math:`\nu` :func:`satterthwaite_df` of the clusters' ``residuals`` :math:`S_c - m_c
    \bar x` (:math:`C` of them), so the interval is :math:`[\bar x - f\,t^*_{1-\alpha/2}\,
    se,\ \bar x - f\,t^*_{\alpha/2}\, se]` within ``bounds``. The bootstrap-t keeps the
    skewness of the pivot; the factor is Hesterberg's (2015) expansion (Student's t and the
    divisor :math:`C - 1` where the normal quantile stands) on the degrees of freedom that
    the kurtosis of the residuals leaves the standard error (Satterthwaite 1946). A mean
    set by rare large values (a sharp forecaster's misses) is the case: a small sample
    often holds none of them, and then neither its standard error nor its bootstrap shows
    them (``benchmarks/validate_forecast_scores.py --log-recheck``: coverage 0.92 at 30
    questions with the plain bootstrap-t, 0.94 with the factor), and so is a skewed value
    without an upper bound (lognormal date errors at 20 questions in
    ``benchmarks/validate_question_metrics.py``: 0.91 plain). Since :math:`f > 1` it holds
    the plain bootstrap-t interval; where ``se`` is 0 or undefined it is
    :func:`mean_interval`'s (the point itself; the percentile interval for one cluster),
    and where the cut interval would be empty :func:`_cut_to_bounds`'s.

    References
    ----------
    Satterthwaite, F. E. (1946). An approximate distribution of estimates of variance
    components. *Biometrics Bulletin* 2(6), 110-114.

    Hesterberg, T. C. (2015). What teachers should know about the bootstrap: resampling
    in the undergraduate statistics curriculum. *The American Statistician* 69(4),
    371-386.
    """
    if not se > 0:
        return mean_interval(mean, se, replicates, replicate_se, confidence_level, bounds)
    from scipy.stats import norm
    from scipy.stats import t as student_t

    n_units = residuals.size
    tail = 0.5 + confidence_level / 2.0
    factor = (math.sqrt(n_units / (n_units - 1.0))
              * float(student_t.ppf(tail, satterthwaite_df(residuals))) / float(norm.ppf(tail)))
    low, high = studentized_interval(mean, mean, se, replicates, replicate_se, confidence_level)
    return _cut_to_bounds(mean - factor * (mean - low), mean + factor * (high - mean), bounds,
                          replicates, confidence_level)


def _cut_to_bounds(low: float, high: float, bounds: tuple[float, float],
                   replicates: np.ndarray, confidence_level: float) -> tuple[float, float]:
    """A bootstrap-t interval of a mean cut to ``bounds``, the range of its population
    value. Where the interval lies wholly outside it (its high end below ``bounds[0]`` or
    its low end above ``bounds[1]``: with a few resamples, every pivot can fall on one
    side), the cut would leave the low end above the high one; the interval is then the
    percentile interval of the replicate means, as where ``se`` is undefined (means of
    values within ``bounds`` stay within them)."""
    low, high = max(low, bounds[0]), min(high, bounds[1])
    if low > high:
        return percentile_interval(replicates, confidence_level)
    return low, high


def wilson_interval(mean: float, se: float, n_rows: int, n_units: int,
                    confidence_level: float) -> tuple[float, float]:
    r"""Wilson's score interval of a proportion (a mean of values in [0, 1], such as an
    accuracy) at the effective sample size :math:`\bar a(1 - \bar a) / se^2` of its
    cluster-robust standard error ``se`` (at most ``n_rows``; ``n_units``, the number
    of clusters, where the proportion is 0 or 1 or ``se`` is 0 or undefined).

    A bootstrap cannot reach past the sample's own misses, so its interval of an
    accuracy near 1 is too short (``benchmarks/validate_forecast_scores.py``: 0.836-0.859
    coverage with rare outcomes at 100 questions, 0.939-0.965 with this interval).
    """
    from scipy.stats import norm

    if se > 0 and 0.0 < mean < 1.0:
        n_eff = min(mean * (1.0 - mean) / (se * se), float(n_rows))
    else:
        n_eff = float(n_units)
    return _wilson_score(mean, n_eff, float(norm.ppf(0.5 + confidence_level / 2.0)))


def _wilson_score(mean: float, n: float, q: float) -> tuple[float, float]:
    """Wilson's score interval of a proportion ``mean`` of ``n`` trials at the quantile
    ``q`` (statsmodels' ``proportion_confint(method="wilson")`` for a normal quantile,
    written here because it takes a level, not a quantile, and a Student quantile
    turned into a normal level underflows for one cluster); it holds the mean, rounding
    aside."""
    shrink = 1.0 + q * q / n
    centre = (mean + q * q / (2.0 * n)) / shrink
    half = q / shrink * math.sqrt(mean * (1.0 - mean) / n + q * q / (4.0 * n * n))
    return max(min(centre - half, mean), 0.0), min(max(centre + half, mean), 1.0)


def satterthwaite_df(residuals: np.ndarray) -> float:
    r"""Satterthwaite's degrees of freedom of a cluster-robust variance, from the
    clusters' residuals :math:`r_c` (which sum to 0) and their kurtosis
    :math:`\hat\kappa = C \sum_c r_c^4 / (\sum_c r_c^2)^2`:

    .. math::

        \nu = \frac{2C}{\hat\kappa - (C - 3)/(C - 1)}, \quad 1 \le \nu \le C - 1,

    twice the inverse of the variance of :math:`s^2 / \sigma^2` for :math:`C` values of
    kurtosis :math:`\kappa`. Normal residuals (:math:`\kappa = 3`) give :math:`C - 1`;
    a variance held by a few clusters (rare hits in a few questions) gives fewer, so
    Student's quantile widens where the standard error is itself uncertain; where the
    residuals do not vary, :math:`C - 1` (at least 1).
    """
    c = residuals.size
    top = float(np.max(np.abs(residuals))) if c else 0.0
    if c < 2 or not top > 0.0:
        return float(max(c - 1, 1))
    r = residuals / top  # the kurtosis does not depend on the scale; no under- or overflow
    ss = float(r @ r)
    kappa = c * float(np.sum(r**4)) / (ss * ss)
    return max(1.0, min(c - 1.0, 2.0 * c / (kappa - (c - 3.0) / (c - 1.0))))


def fraction_interval(mean: float, se: float, n_units: int, confidence_level: float,
                      df: float | None = None) -> tuple[float, float]:
    r"""Wilson's score interval of a mean of values in [0, 1] (fractions: a recall, a
    precision) at the effective sample size :math:`n = \bar a(1 - \bar a) / se^2` of
    its cluster-robust standard error ``se``, with Student's t quantile on ``df``
    degrees of freedom in place of the normal one (:func:`satterthwaite_df` of the
    clusters' residuals where :func:`cluster_mean_interval` gives it; :math:`C - 1`
    when ``None``, :math:`C` = ``n_units``, at least 1):

    .. math::

        \frac{\bar a + t^2/(2n)}{1 + t^2/n} \pm \frac{t}{1 + t^2/n}
        \sqrt{\frac{\bar a(1 - \bar a)}{n} + \frac{t^2}{4n^2}}.

    Unlike :func:`wilson_interval`'s, :math:`n` is not capped at the rows: a fraction
    varies less than a 0/1 value of the same mean, so a row can carry more than one
    trial's information. Where the mean is 0 or 1, or ``se`` is 0 or undefined,
    :math:`n = C`. The interval stays in [0, 1] and reaches past a sample of zeros,
    where a bootstrap gives the point 0 (``benchmarks/validate_question_metrics.py``).
    """
    from scipy.stats import t as student_t

    n = mean * (1.0 - mean) / (se * se) if se > 0 and 0.0 < mean < 1.0 else float(n_units)
    dof = float(max(n_units - 1, 1)) if df is None else df
    q = float(student_t.ppf(0.5 + confidence_level / 2.0, dof))
    return _wilson_score(mean, n, q)


#: What :func:`cluster_mean_interval` may be told the values are, and the name of the
#: interval it gives for each (a result's ``method`` adds what the clusters are).
MEAN_KINDS = {
    "proportion": "Wilson interval at the cluster-robust effective sample size",
    "fraction": "Wilson interval at the cluster-robust effective sample size, t quantile "
                "on Satterthwaite's degrees of freedom",
    "nonnegative": "cluster bootstrap-t interval with Student's small-sample factor",
    "heavy-tailed": "cluster bootstrap-t interval with Student's small-sample factor",
}


def cluster_mean_interval(values: Any, clusters: Any, n_resamples: int,
                          confidence_level: float, rng: np.random.Generator, *,
                          kind: str, upper: float = math.inf,
                          estimate: float | None = None) -> tuple[float, float]:
    """The interval of a mean of ``values`` over independent ``clusters`` (NaN values left
    out; ``(nan, nan)`` when none is left), around ``estimate`` (the caller's statistic,
    the values' mean; default, or NaN: that mean as the clusters' sums give it), by what
    the values are (``kind``):

    * ``'proportion'``, 0/1 values (an accuracy, a share of events):
      :func:`wilson_interval` at the cluster-robust standard error;
    * ``'fraction'``, values in [0, 1] (a recall, a precision): :func:`fraction_interval`
      on the degrees of freedom of :func:`satterthwaite_df`;
    * ``'nonnegative'``, values >= 0 without an upper bound (a count, days), and
      ``'heavy-tailed'``, values >= 0 whose mean is set by rare large values (violations
      that are mostly 0 or small): the cluster bootstrap-t interval of
      :func:`cluster_mean_pivots` with Student's small-sample factor on Satterthwaite's
      degrees of freedom (:func:`heavy_tailed_mean_interval`), cut at 0 and at ``upper``
      (the largest value one of them can take, where there is one). The plain
      bootstrap-t fell short above the mean with few questions (lognormal date errors:
      0.910 at 20 questions, 0.919 at 100; ``benchmarks/validate_question_metrics.py``).

    Only ``'nonnegative'`` and ``'heavy-tailed'`` draw from ``rng``. Clusters are coded in
    sorted label order (:func:`sorted_codes`), so the interval does not depend on the order
    of the rows. The interval is built around ``estimate``, so that one that is the point
    itself (values that do not vary) is the statistic the caller reports, not the same
    mean summed in another order an ulp away (six values of 0.49 have the interval
    ``(0.49, 0.49)`` and ``numpy.mean`` 0.49000000000000005).
    """
    if kind not in MEAN_KINDS:
        raise ValueError(f"cluster_mean_interval: kind must be one of {tuple(MEAN_KINDS)}, "
                         f"got {kind!r}")
    values = np.asarray(values, dtype=np.float64)
    ok = ~np.isnan(values)
    if not ok.any():
        return (np.nan, np.nan)
    centre = math.nan if estimate is None else float(estimate)
    codes = sorted_codes(np.asarray(clusters, dtype=object)[ok])
    n_units = int(codes.max()) + 1
    sums = np.bincount(codes, weights=values[ok], minlength=n_units)
    counts = np.bincount(codes, minlength=n_units).astype(np.float64)
    if kind in ("nonnegative", "heavy-tailed"):
        means, ses, reps, reps_se = cluster_mean_pivots(values[ok][:, None], codes,
                                                        n_resamples, rng)
        mean = float(means[0]) if math.isnan(centre) else centre
        se = float(ses[0])
        return heavy_tailed_mean_interval(mean, se, reps[:, 0], reps_se[:, 0],
                                          sums - counts * mean, confidence_level,
                                          (0.0, upper))
    m, s = weighted_mean_pivots(np.ones((1, n_units)), sums[:, None], counts)
    mean = float(m[0, 0]) if math.isnan(centre) else centre
    se = float(s[0, 0])
    if kind == "proportion":
        return wilson_interval(mean, se, int(ok.sum()), n_units, confidence_level)
    df = satterthwaite_df(sums - mean * counts) if se > 0 else None
    return fraction_interval(mean, se, n_units, confidence_level, df)


def weighted_mean_pivots(weights: np.ndarray, sums: np.ndarray,
                         counts: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Means of columns and their cluster-robust standard errors under cluster weights.

    ``weights`` is ``(B, C)`` (how often each cluster is drawn; ones give the sample),
    ``sums`` ``(C, k)`` the clusters' column sums :math:`S_c`, ``counts`` ``(C,)`` their
    rows :math:`m_c`. With :math:`N = \sum_c w_c m_c`, the mean is
    :math:`\bar x = \sum_c w_c S_c / N` and its standard error

    .. math::

        se^2 = \frac{C}{C - 1} \frac{\sum_c w_c (S_c - m_c \bar x)^2}{N^2}

    (:math:`C` clusters are drawn in every resample). The sum of squares is expanded
    about the sample's mean (one matrix product for all its terms), and summed directly
    in the resamples where that expansion cancels (a sum within ``1e-6`` of its terms:
    clusters whose means differ by a small share of their size, 1.0 and 0.99999, whose
    spread the expansion knows to 1e-6 of itself), so every spread holds to about 1e-11.
    A sum of squares within ``1e-12`` of its scale :math:`\sum_c w_c (S_c^2 + m_c^2 \bar
    x^2)` (drawn clusters of one mean, summed in floating point) is 0; ``se`` is NaN for
    ``C < 2``. Returns ``(means, se)``, each ``(B, k)``.
    """
    n_groups, k = counts.size, sums.shape[1]
    centre = sums.sum(axis=0) / counts.sum()
    dev = sums - counts[:, None] * centre  # the clusters' sums about the sample's mean
    # every weighted sum in one product: n, sum m^2, then per column S, D, D^2, D m, S^2
    terms = weights @ np.column_stack([counts, counts * counts, sums, dev, dev * dev,
                                       dev * counts[:, None], sums * sums])
    n, mm = terms[:, 0], terms[:, 1:2]
    total, moved, sq, cross, raw = (terms[:, 2 + j * k:2 + (j + 1) * k] for j in range(5))
    mean = total / n[:, None]
    shift = moved / n[:, None]  # the resample's mean less the sample's
    ss = sq - 2.0 * shift * cross + shift * shift * mm
    scale = raw + mean * mean * mm
    cancels = np.flatnonzero(np.any(ss <= 1e-6 * (sq + shift * shift * mm), axis=1))
    if cancels.size:  # few resamples: their residuals one by one
        resid = sums[None, :, :] - counts[None, :, None] * mean[cancels][:, None, :]
        ss[cancels] = np.einsum("bc,bck->bk", weights[cancels], resid * resid)
    ss = np.where(ss > 1e-12 * scale, ss, 0.0)
    if n_groups < 2:
        return mean, np.full_like(mean, np.nan)
    return mean, np.sqrt(n_groups / (n_groups - 1.0) * ss / (n * n)[:, None])


def cluster_mean_pivots(values: np.ndarray, codes: np.ndarray, n_resamples: int,
                        rng: np.random.Generator
                        ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Cluster-bootstrap replicates of column means with their standard errors, for a
    bootstrap-t interval (:func:`studentized_interval`).

    ``values`` is ``(n, k)``, ``codes`` the rows' clusters coded 0..C-1; the means and
    standard errors are :func:`weighted_mean_pivots`', and a resample weights the clusters
    by their multiplicities (the draws of :func:`cluster_bootstrap_means`, so its replicate
    means are those), drawn in memory-bounded blocks (:func:`cluster_draw_chunks`).
    Returns ``(means, se)`` of the sample, each ``(k,)``, and the replicates' ``(means,
    se)``, each ``(n_resamples, k)``.
    """
    n_groups = int(codes.max()) + 1
    sums = np.zeros((n_groups, values.shape[1]))
    np.add.at(sums, codes, values)
    counts = np.bincount(codes, minlength=n_groups).astype(np.float64)
    mean, se = weighted_mean_pivots(np.ones((1, n_groups)), sums, counts)
    reps = np.empty((n_resamples, values.shape[1]))
    reps_se = np.empty_like(reps)
    # the draws in memory-bounded blocks, the same stream as one call
    for start, stop, draws in cluster_draw_chunks(n_groups, n_resamples, rng):
        reps[start:stop], reps_se[start:stop] = weighted_mean_pivots(
            cluster_weights(draws, n_groups), sums, counts)
    return mean[0], se[0], reps, reps_se
