"""Where a Brier score comes from: incoherence, calibration, resolution, uncertainty.

:func:`brier_decomposition` splits the Brier score of forecasts of related questions
(sets with one of the consistency checkers of Paleka et al.) into the part that making
each set coherent would remove, and Murphy's decomposition of the coherent forecasts:

    Brier = incoherence + reliability - resolution + uncertainty + within_bin.

Each set is projected onto the nearest coherent forecasts in the Brier score's own
geometry (the Brier analogue of the log-score arbitrage of :func:`consistency_check`):
the projection never raises the set's Brier score, whatever the outcome. The array
layer (:func:`brier_projection`, :func:`decomposition_replicates`) is what the tests
check against hand computations.
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._parameters import check_int
from .._parameters import check_resampling
from .._probability._checks import CHECKERS
from .._probability._checks import possible_worlds
from .._resampling import cluster_draw_chunks
from .._resampling import cluster_weights
from .._resampling import mean_interval
from .._resampling import percentile_interval
from .._resampling import point_at_value
from .._resampling import sorted_codes
from .._resampling import studentized_interval
from .._resampling import weighted_mean_pivots
from .._results import CoherenceResult
from .._results import ConfidenceInterval
from .._rng import RNGLike
from .._rng import check_rng
from .._validation import as_dataframe
from .._validation import check_column_names
from .._validation import column_error
from .._validation import label_column
from .._validation import nonempty
from .._validation import numeric_column
from .._validation import param_error
from .._validation import probability_column
from .._validation import require_columns
from .._validation import same_within
from .._warnings import DeprecatedAlias
from .._warnings import SmallSampleWarning
from ._forecast import bin_index
from ._forecast import murphy
from ._projection import brier_projection

__all__ = ["BrierDecompositionResult", "brier_decomposition"]

_OWNER = "brier_decomposition"
#: Clusters below which the bootstrap intervals are rough (warned).
MIN_CLUSTERS = 20
COMPONENTS: tuple[str, ...] = ("brier", "incoherence", "coherent_brier", "reliability",
                               "resolution", "uncertainty", "within_bin")
TABLE_COLUMNS: tuple[str, ...] = ("component", "value", "ci_low", "ci_high")
#: the components that are means of a per-forecast score (bootstrap-t intervals)
_MEANS = ("brier", "incoherence", "coherent_brier")


# --------------------------------------------------------------------------- array layer
def decomposition_replicates(weights: np.ndarray, p: np.ndarray, q: np.ndarray,
                             y: np.ndarray, clusters: np.ndarray, n_bins: int) -> np.ndarray:
    """The decomposition under cluster weights: ``(B, 7)`` in the order of COMPONENTS.

    ``weights`` is ``(B, G)`` (how often each cluster is drawn; ones give the point
    estimate). Every component is a function of per-cluster, per-bin sums."""
    n_groups = weights.shape[1]
    n_gk, q_gk, y_gk = _cell_sums(q, y, clusters, n_groups, n_bins)
    bp_g = np.bincount(clusters, weights=(p - y) ** 2, minlength=n_groups)
    bq_g = np.bincount(clusters, weights=(q - y) ** 2, minlength=n_groups)
    n_k, sq_k, sy_k = weights @ n_gk, weights @ q_gk, weights @ y_gk
    n = n_k.sum(axis=1)
    ybar = sy_k.sum(axis=1) / n
    safe = np.where(n_k > 0, n_k, 1.0)
    mean_q, freq = sq_k / safe, sy_k / safe
    w = n_k / n[:, None]
    reliability = np.sum(w * (mean_q - freq) ** 2, axis=1)
    resolution = np.sum(w * (freq - ybar[:, None]) ** 2, axis=1)
    uncertainty = ybar * (1.0 - ybar)
    brier = (weights @ bp_g) / n
    coherent = (weights @ bq_g) / n
    within = coherent - (reliability - resolution + uncertainty)
    return np.column_stack([brier, brier - coherent, coherent, reliability, resolution,
                            uncertainty, within])


def _cell_sums(q: np.ndarray, y: np.ndarray, clusters: np.ndarray, n_groups: int,
               n_bins: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per cluster and bin ``(G, K)``: the forecasts' count, their sum and the outcomes'."""
    cell = clusters * n_bins + bin_index(q, n_bins)
    size = n_groups * n_bins
    n_gk = np.bincount(cell, minlength=size).reshape(n_groups, n_bins).astype(np.float64)
    q_gk, y_gk = (np.bincount(cell, weights=v, minlength=size).reshape(n_groups, n_bins)
                  for v in (q, y))
    return n_gk, q_gk, y_gk


def _robust_variance(units: np.ndarray, ss: np.ndarray, total: np.ndarray) -> np.ndarray:
    """Cluster-robust variance of a mean from its clusters' squared residual sum ``ss``
    over ``units`` clusters, of ``total`` forecasts; 0 from a single cluster."""
    var = units / np.maximum(units - 1.0, 1.0) * np.maximum(ss, 0.0) / (total * total)
    return np.where(units > 1, var, 0.0)


def _frequency_variance(weights: np.ndarray, n_gk: np.ndarray, y_gk: np.ndarray,
                        freq: np.ndarray, safe: np.ndarray) -> np.ndarray:
    """``(B, K)``: the cluster-robust variance of each bin's frequency under the weights."""
    ss = (weights @ (y_gk * y_gk) - 2.0 * freq * (weights @ (y_gk * n_gk))
          + freq**2 * (weights @ (n_gk * n_gk)))
    return _robust_variance(weights @ (n_gk > 0), ss, safe)


def resolution_pivots(weights: np.ndarray, q: np.ndarray, y: np.ndarray,
                      clusters: np.ndarray, n_bins: int) -> np.ndarray:
    r"""The resolution under cluster weights ``(B, G)``: ``(B, 3)`` columns (plug-in,
    debiased, standard error), for its bootstrap-t interval.

    With bins of :math:`n_k` forecasts, frequency :math:`\bar y_k`, mean outcome
    :math:`\bar y` and :math:`v_k`, :math:`v` the cluster-robust variances of
    :math:`\bar y_k` and :math:`\bar y` (:math:`C/(C-1) \sum_c w_c (S_c - m_c \bar
    y)^2 / n^2` over the clusters; for clusters of one forecast :math:`\bar y(1 - \bar
    y)/(n - 1)`), the debiased resolution is Ferro and Fricker's (2012)
    :math:`\mathrm{RES} - \sum_k \frac{n_k}{n} v_k + v`, and the standard error is the
    delta method's with the bins' edges held fixed: the clustered variance of the linear
    part, cluster *c* entering through
    :math:`\frac{1}{n}\sum_k \left[m_{ck} (r_k^2 - \mathrm{RES})
    + 2 r_k (S_{ck} - m_{ck} \bar y_k)\right]` (:math:`r_k = \bar y_k - \bar y`: the
    bins' shares move, and their frequencies; the mean outcome's own variation cancels),
    plus :math:`\sum_k (n_k/n)^2\, 2 v_k^2`. The shares' part is what carries the
    resolution's variation when each bin holds one outcome only (a forecaster who
    separates the outcomes: the resolution is then the uncertainty).
    """
    n_gk, _, y_gk = _cell_sums(q, y, clusters, weights.shape[1], n_bins)
    n_k, y_k = weights @ n_gk, weights @ y_gk
    n = n_k.sum(axis=1)
    ybar = y_k.sum(axis=1) / n
    safe = np.where(n_k > 0, n_k, 1.0)
    freq = y_k / safe
    share = n_k / n[:, None]
    v_k = _frequency_variance(weights, n_gk, y_gk, freq, safe)
    n_g, y_g = n_gk.sum(axis=1), y_gk.sum(axis=1)
    drawn = weights.sum(axis=1)
    v = _robust_variance(drawn, weights @ (y_g * y_g) - 2.0 * ybar * (weights @ (y_g * n_g))
               + ybar**2 * (weights @ (n_g * n_g)), n)
    r = np.where(n_k > 0, freq - ybar[:, None], 0.0)
    plug = np.sum(share * r * r, axis=1)
    debiased = plug - np.sum(share * v_k, axis=1) + v
    t = ((r * r) @ n_gk.T - plug[:, None] * n_g[None, :]  # the shares' part, and
         + 2.0 * (r @ y_gk.T - (freq * r) @ n_gk.T)) / n[:, None]  # the frequencies' (B, G)
    linear = drawn / np.maximum(drawn - 1.0, 1.0) * np.sum(weights * t * t, axis=1)
    se = np.sqrt(linear + np.sum(share * share * 2.0 * v_k * v_k, axis=1))
    return np.column_stack([plug, debiased, se])


def reliability_pivots(weights: np.ndarray, q: np.ndarray, y: np.ndarray,
                       clusters: np.ndarray, n_bins: int) -> np.ndarray:
    r"""The reliability under cluster weights ``(B, G)``: ``(B, 3)`` columns (plug-in,
    debiased, standard error), for the bootstrap-t interval in its hull.

    With bins of :math:`n_k` forecasts, mean forecast :math:`\bar q_k`, frequency
    :math:`\bar y_k`, :math:`d_k = \bar y_k - \bar q_k` and :math:`v_k` the
    cluster-robust variance of :math:`\bar y_k` (as :func:`resolution_pivots`'), the
    debiased reliability is :func:`calibration_error`'s, :math:`\sum_k \frac{n_k}{n}
    (d_k^2 - v_k)`, and the standard error the delta method's with the bins' edges held
    fixed: the clustered variance of the linear part, cluster *c* entering through
    :math:`\frac{1}{n}\sum_k [m_{ck} (d_k^2 - \mathrm{REL}) + 2 d_k (S_{ck} - Q_{ck}
    - m_{ck} d_k)]` (:math:`S_{ck}`, :math:`Q_{ck}` its outcomes' and forecasts' sums in
    bin *k*: the bins' shares move, their frequencies and their mean forecasts), plus
    :math:`\sum_k (n_k/n)^2\, 2 v_k^2`. :func:`calibration_error`'s standard error moves
    the frequencies alone, and is 0 when each bin holds one outcome (a forecaster who
    separates the outcomes), whose reliability moves with the shares and mean forecasts.
    """
    n_gk, q_gk, y_gk = _cell_sums(q, y, clusters, weights.shape[1], n_bins)
    n_k, y_k, q_k = weights @ n_gk, weights @ y_gk, weights @ q_gk
    n = n_k.sum(axis=1)
    safe = np.where(n_k > 0, n_k, 1.0)
    freq, share = y_k / safe, n_k / n[:, None]
    v_k = _frequency_variance(weights, n_gk, y_gk, freq, safe)
    d = np.where(n_k > 0, freq - q_k / safe, 0.0)
    plug = np.sum(share * d * d, axis=1)
    t = ((d * d) @ n_gk.T - plug[:, None] * n_gk.sum(axis=1)[None, :]
         + 2.0 * (d @ (y_gk - q_gk).T - (d * d) @ n_gk.T)) / n[:, None]  # (B, G)
    drawn = weights.sum(axis=1)
    linear = drawn / np.maximum(drawn - 1.0, 1.0) * np.sum(weights * t * t, axis=1)
    se = np.sqrt(linear + np.sum(share * share * 2.0 * v_k * v_k, axis=1))
    return np.column_stack([plug, plug - np.sum(share * v_k, axis=1), se])


def within_jackknife(q: np.ndarray, y: np.ndarray, clusters: np.ndarray,
                     n_bins: int) -> tuple[float, np.ndarray]:
    r"""The debiased within-bin part and its delete-one-cluster jackknife values.

    The plug-in part is :math:`\frac{1}{n}\sum_i u_i` with
    :math:`u_i = (q_i - \bar q_k)^2 - 2 (q_i - \bar q_k)(y_i - \bar y_k)` in forecast
    *i*'s bin *k* (the Murphy remainder of :func:`decomposition_replicates`): a bin's
    variance of the forecasts less twice their covariance with the outcomes, each with
    the divisor :math:`n_k`. The debiased part takes :math:`n_k - 1` instead (bins of one
    forecast add 0). Returns the debiased part of the sample and ``(C,)``: the debiased
    part with cluster *c* left out, for each of the *C* clusters (the bins' edges fixed,
    their means recomputed; each from the bins' sums less the cluster's, the forecasts
    centred on their bins' means first so that bins of one forecast value give 0
    exactly).
    """
    n_groups = int(clusters.max()) + 1
    k = bin_index(q, n_bins)
    n_k = np.bincount(k, minlength=n_bins).astype(np.float64)
    safe = np.where(n_k > 0, n_k, 1.0)
    dq = q - (np.bincount(k, weights=q, minlength=n_bins) / safe)[k]
    dy = y - (np.bincount(k, weights=y, minlength=n_bins) / safe)[k]
    cell = clusters * n_bins + k
    parts = [np.bincount(cell, weights=v, minlength=n_groups * n_bins).reshape(n_groups, n_bins)
             for v in (np.ones_like(q), dq, dy, dq * dq, dq * dy)]
    totals = [part.sum(axis=0) for part in parts]

    def debiased_sum(m: np.ndarray, sq: np.ndarray, sy: np.ndarray, sqq: np.ndarray,
                     sqy: np.ndarray) -> np.ndarray:
        s = np.where(m > 0, m, 1.0)
        u = sqq - sq * sq / s - 2.0 * (sqy - sq * sy / s)  # n_k times var - 2 cov
        return np.sum(np.where(m > 1, u * m / np.maximum(m - 1.0, 1.0), 0.0), axis=-1)

    n = float(len(q))
    left = n - parts[0].sum(axis=1)
    loo = debiased_sum(*(t[None, :] - part for t, part in zip(totals, parts, strict=True)))
    return float(debiased_sum(*totals)) / n, loo / np.where(left > 0, left, 1.0)


def link_clusters(questions: np.ndarray, sets: np.ndarray | None) -> np.ndarray:
    """Resampling clusters: rows joined by a shared question or a shared set (connected
    components of the question-set graph), coded in sorted order of their questions."""
    q = sorted_codes(questions)
    if sets is None:
        return q
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    s = sorted_codes(sets)
    n_q, n_s = int(q.max()) + 1, int(s.max()) + 1
    graph = coo_matrix((np.ones(len(q)), (q, n_q + s)), shape=(n_q + n_s, n_q + n_s))
    _, labels = connected_components(graph, directed=False)
    comp = labels[q]
    _, codes = np.unique(comp, return_inverse=True)
    return np.asarray(codes, dtype=np.int64)


# --------------------------------------------------------------------------- result
@dataclass(frozen=True, slots=True)
class BrierDecompositionResult(CoherenceResult, test_name="brier_decomposition",
                               settings=("checker", "n_bins", "n_resamples", "n_sets",
                                         "n_incoherent", "n_clusters", "incoherence", "reliability",
                                         "resolution", "uncertainty", "within_bin")):
    """Result of :func:`brier_decomposition`.

    ``statistic`` is the Brier score of the forecasts as given, with its cluster-bootstrap
    interval; ``pvalue`` is NaN (a decomposition is an estimate, not a test).

    Attributes
    ----------
    checker : str or None
        The checker whose possible worlds define coherence of a set (None: no sets, the
        incoherence part is 0).
    n_bins : int
        Equal-width bins of the Murphy decomposition (on the coherent forecasts).
    n_resamples : int
        Cluster-bootstrap resamples.
    n_sets : int
        Related sets (0 without a checker).
    n_incoherent : int
        Sets that the projection moved.
    n_clusters : int
        Resampling clusters: forecasts joined by a shared question or a shared set.
    brier, incoherence, coherent_brier, reliability, resolution, uncertainty, within_bin : float
        The components: ``brier = incoherence + reliability - resolution + uncertainty +
        within_bin`` and ``coherent_brier = brier - incoherence``.
    table : pandas.DataFrame
        One row per component: ``component``, ``value``, ``ci_low``, ``ci_high``.
    per_forecast : pandas.DataFrame
        One row per scored forecast: ``question``, ``set`` and ``role`` (with a checker),
        ``probability``, ``projected``, ``outcome``, ``brier``, ``projected_brier``.
    """

    checker: str | None
    n_bins: int
    n_resamples: int
    n_sets: int
    n_incoherent: int
    n_clusters: int
    brier: float
    incoherence: float
    coherent_brier: float
    reliability: float
    resolution: float
    uncertainty: float
    within_bin: float
    table: pd.DataFrame
    per_forecast: pd.DataFrame

    components = DeprecatedAlias("table")

    _summary_table = ("components", None)


# --------------------------------------------------------------------------- public layer
def _brier_decomposition_iv(data: Any, checker: Any, question: Any, probability: Any,
                            outcome: Any, group: Any, role: Any, n_bins: Any,
                            n_resamples: Any, confidence_level: Any,
                            rng: RNGLike) -> tuple[Any, ...]:
    df = as_dataframe(data, owner=_OWNER)
    if checker is not None and (not isinstance(checker, str) or checker not in CHECKERS):
        raise ValueError(param_error("checker", _OWNER, "None or one of "
                                     + ", ".join(map(repr, CHECKERS)), checker))
    names = {"question": question, "probability": probability, "outcome": outcome}
    if checker is not None:
        names |= {"group": group, "role": role}
    check_column_names(_OWNER, names)
    require_columns(df, names, owner=_OWNER)
    nonempty(df, owner=_OWNER)
    n_bins = check_int(n_bins, "n_bins", _OWNER, low=1)
    n_resamples, confidence_level = check_resampling(_OWNER, n_resamples, confidence_level)
    gen = check_rng(rng, owner=_OWNER)
    label_column(df, question, owner=_OWNER)
    p = probability_column(df, probability, owner=_OWNER)
    # True/False as 1/0 (a nullable column's pd.NA: an annulled outcome)
    y = numeric_column(df, outcome, owner=_OWNER, allow_nan=checker is not None, bools=True)
    bad = np.flatnonzero(~np.isnan(y) & (y != 0.0) & (y != 1.0))
    if len(bad):
        raise ValueError(column_error(outcome, "hold 0 or 1 (or be missing for an annulled "
                                      "conditional question)", [df.index[i] for i in bad],
                                      [y[i] for i in bad], owner=_OWNER))
    qs = df[question].to_numpy(dtype=object)
    same_within(df, y, question, outcome, owner=_OWNER, rows=~np.isnan(y))
    return df, p, y, qs, n_bins, n_resamples, confidence_level, gen


def _sets(df: pd.DataFrame, checker: str, group: str, role: str, p: np.ndarray,
          y: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each set's rows in role order, its forecasts and the world its outcomes form."""
    roles = CHECKERS[checker]
    label_column(df, role, owner=_OWNER)
    label_column(df, group, owner=_OWNER)
    rv = df[role].astype(str).to_numpy(dtype=object)
    bad = np.flatnonzero(~np.isin(rv, list(roles)))
    if len(bad):
        raise ValueError(column_error(role, f"name a question of the '{checker}' checker "
                                      f"({', '.join(roles)})", [df.index[i] for i in bad],
                                      [rv[i] for i in bad], owner=_OWNER))
    codes = sorted_codes(df[group].to_numpy(dtype=object))
    n_sets = int(codes.max()) + 1
    rows = np.full((n_sets, len(roles)), -1, dtype=np.int64)
    dup = []
    for i, (g, r) in enumerate(zip(codes, rv, strict=True)):
        j = roles.index(r)
        if rows[g, j] >= 0:
            dup.append(i)
        rows[g, j] = i
    if dup:
        raise ValueError(column_error(role, f"name each question of a set (column '{group}') "
                                      "once", [df.index[i] for i in dup],
                                      [rv[i] for i in dup], owner=_OWNER))
    incomplete = np.flatnonzero((rows < 0).any(axis=1))
    if len(incomplete):
        first = [int(rows[g][rows[g] >= 0][0]) for g in incomplete]
        raise ValueError(column_error(group, f"hold complete sets: one row for each of "
                                      f"{', '.join(roles)}", [df.index[i] for i in first],
                                      [df[group].iloc[i] for i in first], owner=_OWNER))
    worlds = possible_worlds(checker)
    observed = np.where(np.isnan(y[rows]), -1, y[rows]).astype(np.int64)
    possible = (observed[:, None, :] == worlds[None, :, :]).all(axis=2).any(axis=1)
    impossible = np.flatnonzero(~possible)
    if len(impossible):
        first = [int(rows[g, 0]) for g in impossible]
        raise ValueError(column_error(group, f"hold outcomes that form a possible world of the "
                                      f"'{checker}' checker (missing where a conditional "
                                      "question is annulled)", [df.index[i] for i in first],
                                      [df[group].iloc[i] for i in first], owner=_OWNER))
    return rows, p[rows]


def _component_intervals(boot: np.ndarray, mean_outcome: np.ndarray,
                         confidence_level: float) -> dict[str, tuple[float, float]]:
    r"""Each component's interval for the population's value, from the cluster bootstrap.

    Percentile intervals for every component (replaced by :func:`mean_interval`,
    :func:`_resolution_interval`, :func:`_within_interval` and the reliability's
    :func:`calibration_error` interval for all but the uncertainty). The uncertainty
    :math:`\bar y(1 - \bar y)` is at its maximum when :math:`\bar y = 1/2`, where no
    replicate exceeds the population value: its interval maps the percentile interval
    of the mean outcome through :math:`u(1 - u)` (up to 1/4 when it holds 1/2).
    """
    out = {}
    for j, name in enumerate(COMPONENTS):
        out[name] = percentile_interval(boot[:, j], confidence_level)
    lo_y, hi_y = percentile_interval(mean_outcome, confidence_level)
    ends = (lo_y * (1.0 - lo_y), hi_y * (1.0 - hi_y))
    out["uncertainty"] = (min(ends), 0.25 if lo_y <= 0.5 <= hi_y else max(ends))
    return out


#: A resolution's standard error at or below this is rounding (resolutions are <= 1/4).
_FLAT_SE = 1e-12


def _studentized(point: np.ndarray, pivots: np.ndarray,
                 confidence_level: float) -> tuple[float, float] | None:
    """Bootstrap-t interval (:func:`studentized_interval`) around a debiased term:
    ``point`` the sample's (plug-in, debiased, se), ``pivots`` the resamples' (debiased,
    se). A standard error within rounding of 0 is 0: a resample's then takes the sample's
    place in its pivot, and with the sample's 0 there is no interval (None)."""
    plug, debiased, se = (float(v) for v in point)
    if se <= _FLAT_SE:
        return None
    rse = np.where(pivots[:, 1] > _FLAT_SE, pivots[:, 1], 0.0)
    return studentized_interval(debiased, plug, se, pivots[:, 0], rse, confidence_level)


def _resolution_interval(point: np.ndarray, pivots: np.ndarray,
                         confidence_level: float) -> tuple[float, float]:
    """Bootstrap-t interval (:func:`studentized_interval`) of the population resolution
    around the debiased one, its upper end cut at 1/4 (the resolution is at most the
    uncertainty). ``point`` is the sample's (plug-in, debiased, se), ``pivots`` the
    resamples' (debiased, se). A standard error within rounding of 0 is 0 (the
    resolution is flat to first order: one bin, or bins that each hold one outcome with
    the outcomes balanced), and a resample's then takes the sample's place in its pivot;
    with the sample's 0, the percentile interval of the resamples' debiased values."""
    interval = _studentized(point, pivots, confidence_level)
    low, high = (percentile_interval(pivots[:, 0], confidence_level) if interval is None
                 else interval)
    return low, min(high, 0.25)


def _within_interval(percentile: tuple[float, float], debiased: float, loo: np.ndarray,
                     confidence_level: float) -> tuple[float, float]:
    r"""The within-bin part's interval: the hull of its percentile interval and the
    jackknife-t interval :math:`\hat\theta \pm t_{C-1,\,1-\alpha/2}\, se_J` around the
    debiased part :math:`\hat\theta`, with :math:`se_J^2 = \frac{C-1}{C}\sum_c
    (\hat\theta_{(c)} - \bar\theta_{(\cdot)})^2` over the ``loo`` values
    :math:`\hat\theta_{(c)}` of :func:`within_jackknife` (*C* clusters). The percentile
    interval covers where the outcomes are mixed within the bins and the part's sampling
    noise dominates; where each bin holds one outcome the part is the forecasts' spread
    within their bins, which the plug-in underestimates and the bootstrap's duplicates
    again, and the debiased part's interval reaches the population's value. The jackknife
    sees bins of one or two forecasts (leaving one out of a bin of two leaves a bin that
    adds 0), which the delta method's standard error and the bootstrap-t missed
    (docs/brier_decomposition.md). Fewer than two clusters, or a standard error within
    rounding of 0, leave the percentile interval."""
    n_clusters = len(loo)
    if n_clusters < 2:
        return percentile
    se = math.sqrt((n_clusters - 1) / n_clusters * float(np.sum((loo - loo.mean()) ** 2)))
    if se <= _FLAT_SE:
        return percentile
    from scipy.stats import t as student_t

    half = float(student_t.ppf(0.5 + confidence_level / 2.0, n_clusters - 1)) * se
    return min(debiased - half, percentile[0]), max(debiased + half, percentile[1])


def _reliability_interval(q: np.ndarray, y: np.ndarray, clusters: np.ndarray, n_bins: int,
                          n_resamples: int, confidence_level: float,
                          gen: np.random.Generator, pivots: np.ndarray) -> tuple[float, float]:
    """The hull of :func:`calibration_error`'s interval (equal-width bins, the resampling
    clusters) of the coherent forecasts and the bootstrap-t interval of
    :func:`reliability_pivots` (``pivots``: the resamples' debiased reliability and
    standard error), for the population reliability. The first's standard error moves
    the bins' frequencies alone: where each bin holds one outcome it is 0, and its basic
    bootstrap interval's upper end fell short of a right-skewed reliability (covered
    0.923 of 1,600 studies, docs/brier_decomposition.md); the second's moves the bins'
    shares and mean forecasts too. The first's bins of a single cluster keep their
    plug-in term, so it errs wide there; its warning is not passed on (the decomposition
    warns about few clusters itself). NaN for a single forecast; the first alone for a
    single cluster or a standard error within rounding of 0."""
    from ._calibration import calibration_error

    if q.size < 2:  # no interval from a single forecast
        return math.nan, math.nan
    table = pd.DataFrame({"probability": q, "outcome": y,
                          "cluster": clusters})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallSampleWarning)
        res = calibration_error(table, binning="equal_width", n_bins=n_bins, group="cluster",
                                n_resamples=n_resamples, confidence_level=confidence_level,
                                rng=gen)
    low, high = res.confidence_interval.low, res.confidence_interval.high
    n_clusters = int(clusters.max()) + 1
    t_interval = None if n_clusters < 2 else _studentized(
        reliability_pivots(np.ones((1, n_clusters)), q, y, clusters, n_bins)[0], pivots,
        confidence_level)
    if t_interval is None:
        return low, high
    return min(low, t_interval[0]), max(high, t_interval[1])


def _component_table(values: dict[str, float],
                     intervals: dict[str, tuple[float, float]]) -> pd.DataFrame:
    """The components' table; warns (for :func:`brier_decomposition`'s caller) of an
    interval that is the point itself: every resample gave the same value (a forecaster
    stating 0 and 1 and always right, outcomes all equal), so the point is right but no
    confidence statement. Not the incoherence's [0, 0] (documented), nor an uncertainty
    above 0: every cluster then holds the same share of true outcomes, which sets fix by
    design (negation pairs); nor a resolution or within-bin part of 0, which the forecasts
    fix (one value a bin, as on a grid; one bin for a constant forecast)."""
    structural = {"incoherence"} | {name for name in ("resolution", "within_bin")
                                    if abs(values[name]) <= 1e-12}
    flat = [name for name in COMPONENTS if name not in structural
            and not (name == "uncertainty" and values[name] > 0.0)
            and intervals[name][1] - intervals[name][0] <= 1e-12]  # (to rounding)
    if flat:
        warnings.warn(f"{_OWNER}: the interval(s) of {', '.join(flat)} are the point itself: "
                      "every resample gives the same value (a forecaster stating 0 and 1 "
                      "and always right, or outcomes all equal, say), so the sample shows no "
                      "uncertainty; they do not reflect what more questions could show.",
                      SmallSampleWarning, stacklevel=3)
    return pd.DataFrame([{"component": name, "value": float(values[name]),
                          "ci_low": intervals[name][0], "ci_high": intervals[name][1]}
                         for name in COMPONENTS], columns=list(TABLE_COLUMNS))


def brier_decomposition(
    data: Any,
    *,
    checker: str | None = None,
    question: str = "question",
    probability: str = "probability",
    outcome: str = "outcome",
    group: str = "set",
    role: str = "role",
    n_bins: int = 10,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
) -> BrierDecompositionResult:
    r"""Split a Brier score into incoherence, calibration, resolution and uncertainty.

    The Brier score of linked questions is split into what coherence alone would save
    (the incoherence: the Brier counterpart of the arbitrage of
    :func:`arbitrage_violation`), then the reliability, resolution and uncertainty of
    the coherent forecasts and the within-bin remainder. Each part comes with an
    interval that resamples the linked questions.

    Parameters
    ----------
    data : pandas.DataFrame or convertible
        One row per forecast of a binary question: the question, the forecast P(YES)
        and the outcome. With a ``checker``, the forecasts come in related sets (the
        tuples of :func:`consistency_check`, in long form): a set column and a role
        column naming each row's place in the checker (``'P'``, ``'not_P'``, ...).
    checker : str, optional
        One of the ten checkers of :func:`consistency_check` (``'negation'``,
        ``'and'``, ``'cond'``, ...); its possible worlds define which forecasts of a set
        are coherent. None (default): no sets; the incoherence part is 0.
    question, probability, outcome : str
        Columns: the question label (forecasts of one question share its outcome), the
        forecast in [0, 1] and the 0/1 (or bool) outcome. With a checker, an outcome may be missing
        where a conditional question is annulled (its condition failed): such a forecast
        takes part in its set's projection but is not scored.
    group, role : str
        With a checker: the set column and the role column (a key of
        ``CHECKERS[checker]``). Every set has one row per role, and its outcomes form
        one of the checker's possible worlds.
    n_bins : int
        Equal-width bins on [0, 1] of Murphy's decomposition.
    n_resamples : int
        Cluster-bootstrap resamples of the intervals.
    confidence_level : float
        Level of the intervals.
    rng : int, numpy.random.Generator or None
        Randomness of the bootstrap.

    Returns
    -------
    BrierDecompositionResult
        ``statistic`` the Brier score, with its interval; the components, each with an
        interval, in ``table``; per-forecast projections in ``per_forecast``.

    Raises
    ------
    ValueError
        For a forecast outside [0, 1], an outcome other than 0 or 1 (or missing without
        a checker), forecasts of one question with different outcomes, an incomplete
        set, a role outside the checker's, or a set whose outcomes are impossible.

    Warns
    -----
    SmallSampleWarning
        When there are fewer than 20 resampling clusters (the intervals are rough), and
        when an interval is the point itself: every resample gives the same value (a
        forecaster stating 0 and 1 and always right, or outcomes all equal), so the sample
        shows no uncertainty. Not for the incoherence part's [0, 0] of coherent forecasts,
        nor for an uncertainty above 0 (sets such as negation pairs fix the share of true
        outcomes).

    See Also
    --------
    forecast_scores : accuracy, Brier and log scores per model, with the Murphy decomposition.
    consistency_check : the arbitrage and frequentist violations of the same sets.
    calibration_error : the debiased calibration error.

    Notes
    -----
    Each set's forecasts :math:`p` are replaced by the coherent forecasts :math:`q` that
    beat them most surely under the Brier score: the best guaranteed reduction
    :math:`\max_q \min_\omega \sum_i [(p_i - \omega_i)^2 - (q_i - \omega_i)^2]` over the
    possible worlds :math:`\omega` (annulled questions score 0) equals, by the minimax
    theorem,

    .. math:: \min_{\mu} \sum_i \frac{(t_i(\mu) - p_i m_i(\mu))^2}{m_i(\mu)},

    over distributions :math:`\mu` on the worlds (:math:`t_i`, :math:`m_i`: the
    probabilities that question i is true and that it resolves), attained by
    :math:`q_i = t_i / m_i`. This is the Brier counterpart of the log-score arbitrage of
    :func:`arbitrage_violation`; without conditional questions it is the Euclidean
    projection onto the convex hull of the worlds (de Finetti's dominance), computed
    exactly face by face; with conditional ones, numerically, by a log-barrier
    interior-point method for all sets at once, certified by the objective above less
    the reduction q guarantees (at most 1.7e-8 measured). The projection never raises a
    set's Brier score in any possible world (to rounding), and leaves a coherent set (to
    1e-10) unchanged, bit for bit. With :math:`\bar B(p)` the mean Brier score over the
    scored forecasts,

    .. math::

        \bar B(p) = \underbrace{\bar B(p) - \bar B(q)}_{\text{incoherence}}
        + \mathrm{REL}(q) - \mathrm{RES}(q) + \mathrm{UNC} + \mathrm{WB}(q),

    where REL, RES and UNC are Murphy's (1973) reliability, resolution and uncertainty
    of the coherent forecasts in ``n_bins`` equal-width bins (as in
    :func:`forecast_scores`) and WB the within-bin remainder of Stephenson et al.
    (2008), 0 when the coherent forecasts are constant within bins; the identity is
    exact. The intervals come from a cluster bootstrap whose clusters are the forecasts
    joined by a shared question or a shared set (the connected components of the
    question-set graph), so that outcomes shared by forecasts, and the sets' logical
    ties, move together. Each is for the population's component: for the Brier scores
    and the incoherence part, means of a per-forecast score, bootstrap-t intervals with
    the cluster-robust standard error (as :func:`forecast_scores`'), within [0, 1];
    for the within-bin part the hull of its percentile interval and a jackknife-t
    interval around the debiased part (:math:`n_k - 1` for :math:`n_k` in a bin), the
    delete-one-cluster jackknife's standard error with Student's quantile on *C* - 1
    degrees of freedom for *C* clusters (the first covers where the outcomes are mixed
    within bins, the second where each bin holds one outcome, and where bins hold one or
    two forecasts, which the jackknife sees); for the reliability the hull of
    :func:`calibration_error`'s interval (equal-width bins, the resampling clusters) and
    a bootstrap-t interval around the same debiased reliability studentized by a
    standard error in which the bins' shares and mean forecasts move as well as their
    frequencies (where each bin holds one outcome only they move);
    for the resolution a bootstrap-t interval around Ferro and Fricker's (2012)
    debiased resolution (studentized by the delta method's standard error, in which the
    bins' shares move as well as their frequencies), at most 1/4; for the uncertainty
    the mean outcome's percentile interval mapped through :math:`u(1 - u)`. The plug-in
    reliability and resolution in the ``value`` column are biased upward, so their
    intervals need not contain them (``docs/brier_decomposition.md``, measured
    coverage).

    References
    ----------
    Murphy, A. H. (1973). A new vector partition of the probability score. Journal of
    Applied Meteorology 12(4), 595-600.

    Stephenson, D. B., Coelho, C. A. S. and Jolliffe, I. T. (2008). Two extra components
    in the Brier score decomposition. Weather and Forecasting 23, 752-757.

    de Finetti, B. (1974). Theory of Probability, vol. 1. Wiley. (Coherence as
    non-dominance under the Brier score.)

    Paleka, D. et al. (2025). Consistency checks for language model forecasters. ICLR.

    Examples
    --------
    >>> import pandas as pd
    >>> import coherence
    >>> rows = []
    >>> for s, (p, p_not, y) in enumerate([(0.7, 0.5, 1), (0.2, 0.8, 0), (0.6, 0.4, 0)]):
    ...     rows += [{"set": s, "role": "P", "question": f"q{s}", "probability": p,
    ...               "outcome": y},
    ...              {"set": s, "role": "not_P", "question": f"not q{s}",
    ...               "probability": p_not, "outcome": 1 - y}]
    >>> import warnings
    >>> with warnings.catch_warnings():
    ...     warnings.simplefilter("ignore")
    ...     res = coherence.brier_decomposition(rows, checker="negation", rng=0)
    >>> round(res.brier, 4), round(res.incoherence, 4)   # set 0: 0.34 -> 0.32 when projected
    (0.19, 0.0033)
    >>> res.per_forecast["projected"].round(2).tolist()
    [0.6, 0.4, 0.2, 0.8, 0.6, 0.4]
    >>> parts = res.incoherence + res.reliability - res.resolution + res.uncertainty
    >>> abs(parts + res.within_bin - res.brier) < 1e-12
    True
    """
    (df, p, y, qs, n_bins, n_resamples, confidence_level,
     gen) = _brier_decomposition_iv(data, checker, question, probability, outcome, group,
                                    role, n_bins, n_resamples, confidence_level, rng)
    q = p.copy()
    n_sets = n_incoherent = 0
    sets: np.ndarray | None = None
    if checker is not None:
        rows, f = _sets(df, checker, group, role, p, y)
        projected = brier_projection(possible_worlds(checker), f)
        q[rows] = projected
        n_sets = len(rows)
        n_incoherent = int(np.any(projected != f, axis=1).sum())
        sets = df[group].to_numpy(dtype=object)
    clusters_all = link_clusters(qs, sets)
    scored = ~np.isnan(y)
    if not scored.any():
        raise ValueError(column_error(outcome, "hold at least one resolved outcome",
                                      list(df.index[:5]), owner=_OWNER))
    clusters = np.unique(clusters_all[scored], return_inverse=True)[1].astype(np.int64)
    n_clusters = int(clusters.max()) + 1
    if n_clusters < MIN_CLUSTERS:
        warnings.warn(f"{_OWNER}: {n_clusters} resampling clusters (< {MIN_CLUSTERS}: "
                      "questions joined by shared sets); the bootstrap intervals are rough.",
                      SmallSampleWarning, stacklevel=2)
    ps, qs_, ys = p[scored], q[scored], y[scored]
    point = murphy(qs_, ys, n_bins)
    brier = float(np.mean((ps - ys) ** 2))
    values = {"brier": brier, "incoherence": brier - point["brier"],
              "coherent_brier": point["brier"], "reliability": point["reliability"],
              "resolution": point["resolution"], "uncertainty": point["uncertainty"],
              "within_bin": point["within_bin"]}
    boot = np.empty((n_resamples, len(COMPONENTS)))
    mean_outcome = np.empty(n_resamples)
    pivots = np.empty((n_resamples, 2))
    rel_pivots = np.empty((n_resamples, 2))
    scores = np.empty((2, n_resamples, len(_MEANS)))  # the mean scores' replicates and se
    n_g = np.bincount(clusters, minlength=n_clusters).astype(np.float64)
    y_g = np.bincount(clusters, weights=ys, minlength=n_clusters)
    s_g = np.zeros((n_clusters, len(_MEANS)))
    np.add.at(s_g, clusters, np.column_stack([(ps - ys) ** 2, (ps - ys) ** 2 - (qs_ - ys) ** 2,
                                              (qs_ - ys) ** 2]))
    for start, stop, draws in cluster_draw_chunks(n_clusters, n_resamples, gen):
        w = cluster_weights(draws, n_clusters)
        boot[start:stop] = decomposition_replicates(w, ps, qs_, ys, clusters, n_bins)
        mean_outcome[start:stop] = (w @ y_g) / (w @ n_g)
        pivots[start:stop] = resolution_pivots(w, qs_, ys, clusters, n_bins)[:, 1:]
        rel_pivots[start:stop] = reliability_pivots(w, qs_, ys, clusters, n_bins)[:, 1:]
        scores[:, start:stop] = weighted_mean_pivots(w, s_g, n_g)
    intervals = _component_intervals(boot, mean_outcome, confidence_level)
    point_mean, point_se = weighted_mean_pivots(np.ones((1, n_clusters)), s_g, n_g)
    for j, name in enumerate(_MEANS):
        intervals[name] = mean_interval(float(point_mean[0, j]), float(point_se[0, j]),
                                        scores[0, :, j], scores[1, :, j], confidence_level,
                                        (0.0, 1.0))
    point_res = resolution_pivots(np.ones((1, n_clusters)), qs_, ys, clusters, n_bins)[0]
    intervals["resolution"] = _resolution_interval(point_res, pivots, confidence_level)
    intervals["within_bin"] = _within_interval(intervals["within_bin"],
                                               *within_jackknife(qs_, ys, clusters, n_bins),
                                               confidence_level)
    intervals["reliability"] = _reliability_interval(qs_, ys, clusters, n_bins, n_resamples,
                                                     confidence_level, gen, rel_pivots)
    intervals = {name: point_at_value(values[name], iv) for name, iv in intervals.items()}
    table = _component_table(values, intervals)
    per = {"question": qs[scored]}
    if checker is not None:
        per |= {"set": df[group].to_numpy(dtype=object)[scored],
                "role": df[role].astype(str).to_numpy(dtype=object)[scored]}
    per |= {"probability": ps, "projected": qs_, "outcome": ys, "brier": (ps - ys) ** 2,
            "projected_brier": (qs_ - ys) ** 2}
    per_forecast = pd.DataFrame(per, index=df.index[scored])
    low, high = intervals["brier"]
    return BrierDecompositionResult(
        statistic=brier, pvalue=math.nan,
        confidence_interval=ConfidenceInterval(low, high, confidence_level),
        n_obs=int(scored.sum()),
        method="cluster bootstrap over linked questions (Brier scores and incoherence "
               "bootstrap-t; reliability and resolution bootstrap-t of the debiased terms, "
               "the reliability's hulled with calibration_error's; "
               "uncertainty from the mean outcome's; within-bin the hull of its percentile and "
               "jackknife-t intervals)",
        checker=checker, n_bins=n_bins, n_resamples=n_resamples, n_sets=n_sets,
        n_incoherent=n_incoherent, n_clusters=n_clusters, table=table,
        per_forecast=per_forecast, **{k: float(v) for k, v in values.items()})
