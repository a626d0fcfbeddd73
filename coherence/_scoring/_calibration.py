"""Calibration error beyond binned ECE: a debiased estimate and the smooth ECE.

Public layer: :func:`calibration_error` (the debiased binned calibration error of Kumar,
Liang and Ma 2019, with a bootstrap interval), :func:`smooth_ece` (the SmoothECE of
Blasiok and Nakkiran 2023 and its smoothed reliability diagram, drawn by
:func:`plot_smooth_reliability` in :mod:`._reliability_plots`). The array layer
(``_bin_codes``, ``_binned`` here; ``smooth_ece_sigma``, ``smooth_ece_code``,
``fixed_point`` in :mod:`._smooth_ece`) is what the tests compare with brute-force loops
in ``tests/_reference_calibration.py``.

The binned, uncorrected ECE and the Murphy decomposition stay where they were,
in :func:`coherence.forecast_scores`: with ``binning='equal_width'`` the
``plugin`` value here is that ECE (``norm=1``) or that reliability term
(``norm=2``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import NamedTuple

import numpy as np
import pandas as pd

from .._parameters import check_choice
from .._parameters import check_float
from .._parameters import check_int
from .._parameters import check_resampling
from .._resampling import cluster_draw_chunks
from .._resampling import cluster_weights
from .._resampling import point_at_value
from .._results import CoherenceResult
from .._results import ConfidenceInterval
from .._rng import RNGLike
from .._rng import check_rng
from .._validation import param_error
from .._warnings import DegenerateDataWarning
from .._warnings import NotCalibratedWarning
from .._warnings import SmallSampleWarning
from .._warnings import TiesWarning
from ._calibration_input import forecast_arrays
from ._forecast import bin_index
from ._profile import calibration_interval
from ._profile import l1_debiased
from ._smooth_ece import MAX_N_GRID
from ._smooth_ece import SIGMA_MIN
from ._smooth_ece import Smoother
from ._smooth_ece import code_smece_at
from ._smooth_ece import fixed_point
from ._smooth_ece import relplot_103_at
from ._smooth_ece import relplot_search
from ._smooth_ece import round_to_grid
from ._smooth_ece import smooth_band
from ._smooth_ece import smooth_curve
from ._smooth_ece import smooth_ece_code
from ._smooth_ece import smooth_ece_sigma
from ._smooth_ece import smooth_grid

__all__ = [
    "CALIBRATION_BINNINGS",
    "CalibrationErrorResult",
    "SmoothECEResult",
    "calibration_error",
    "smooth_ece",
]

#: Bin rules of :func:`calibration_error`: ``'equal_mass'`` (quantile bins, the
#: default of Kumar et al. 2019) and ``'equal_width'`` (``[k/B, (k+1)/B)``, as in
#: :func:`coherence.forecast_scores`).
CALIBRATION_BINNINGS = ("equal_mass", "equal_width")
_INTERVALS = ("profile", "bootstrap-t", "basic")
#: ``'code'`` is the name kept for ``'relplot-1.0.1'``
_DEFINITIONS = ("paper", "relplot-1.0.3", "relplot-1.0.1", "code")


# --------------------------------------------------------------------------- array layer
def _bin_codes(p: np.ndarray, n_bins: int, binning: str) -> np.ndarray:
    """Bin of each forecast, codes in [0, n_bins).

    ``equal_width``: the bins of :func:`coherence.forecast_scores`. ``equal_mass``:
    the sorted forecasts split into ``n_bins`` runs of sizes differing by at most
    one; an edge is the midpoint of the last forecast of a run and the first of
    the next, a forecast equal to an edge goes to the lower bin, so tied forecasts
    always share a bin (then fewer than ``n_bins`` bins are used).
    """
    if binning == "equal_width":
        return bin_index(p, n_bins)
    s = np.sort(p)
    n = len(s)
    cuts = (np.arange(1, n_bins) * n) // n_bins
    cuts = cuts[(cuts > 0) & (cuts < n)]
    edges = np.unique((s[cuts - 1] + s[cuts]) / 2.0)
    out: np.ndarray = np.searchsorted(edges, p, side="left")
    return out


def _binned(p: np.ndarray, y: np.ndarray, w: np.ndarray, codes: np.ndarray,
            n_bins: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Per-bin (weighted count, mean forecast, observed frequency); empty bins NaN."""
    n = np.bincount(codes, weights=w, minlength=n_bins)
    sp = np.bincount(codes, weights=w * p, minlength=n_bins)
    sy = np.bincount(codes, weights=w * y, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        return n, sp / n, sy / n


def _frequency_variance(codes: np.ndarray, y: np.ndarray, w: np.ndarray,
                        groups: np.ndarray | None, n: np.ndarray,
                        freq: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    r"""Per bin: the estimated variance of the observed frequency and the number of
    independent units (forecasts, or clusters of ``groups``) behind it.

    With :math:`C_k` units, unit *c* holding :math:`m_c` of the bin's forecasts with
    :math:`S_c` outcomes, and weight (bootstrap multiplicity) :math:`w_c`,

    .. math::

        v_k = rac{C_k}{C_k - 1} rac{\sum_c w_c (S_c - m_c ar y_k)^2}{n_k^2},
        \qquad C_k = \sum_c w_c,

    unbiased for :math:`\operatorname{Var}(ar y_k)` when the units' totals are
    exchangeable; for single forecasts (no ``groups``) it is
    :math:`ar y_k(1 - ar y_k)/(n_k - 1)`, Kumar et al.'s. A bin of fewer than two
    units has variance 0.
    """
    n_bins = n.size
    if groups is None:
        units = n
        var = freq * (1.0 - freq) / np.maximum(n - 1.0, 1.0)
    else:
        # runs of one (cluster, bin): contiguous in the canonical order (rows sorted by
        # cluster, then forecast), so no sort unless the rows come otherwise
        key = groups.astype(np.int64) * n_bins + codes
        if np.any(key[1:] < key[:-1]):
            order = np.argsort(key, kind="stable")
            key, codes, y, w = key[order], codes[order], y[order], w[order]
        first = np.flatnonzero(np.concatenate(([True], key[1:] != key[:-1])))
        bin_of = codes[first]
        s_c = np.add.reduceat(y, first)
        m_c = np.diff(first, append=key.size).astype(np.float64)
        w_c = w[first]
        with np.errstate(invalid="ignore"):
            dev = s_c - m_c * freq[bin_of]
        units = np.bincount(bin_of, weights=w_c, minlength=n_bins)
        ss = np.bincount(bin_of, weights=w_c * dev * dev, minlength=n_bins)
        with np.errstate(invalid="ignore", divide="ignore"):
            var = units / np.maximum(units - 1.0, 1.0) * ss / (n * n)
    return np.where(units >= 2, var, 0.0), units


class _Binned(NamedTuple):
    """The non-empty bins of the forecasts of positive weight, and per kept row its
    bin's position, its residual from the bin's frequency, weight and cluster."""

    bins: np.ndarray
    n: np.ndarray
    mean_p: np.ndarray
    freq: np.ndarray
    var: np.ndarray
    units: np.ndarray
    row_bin: np.ndarray
    row_resid: np.ndarray
    row_weight: np.ndarray
    row_unit: np.ndarray | None


def _bins(p: np.ndarray, y: np.ndarray, w: np.ndarray, n_bins: int, binning: str,
          groups: np.ndarray | None) -> _Binned:
    """Bin the forecasts of positive weight (:class:`_Binned`)."""
    keep = w > 0
    p, y, w = p[keep], y[keep], w[keep]
    unit = None if groups is None else groups[keep]
    codes = _bin_codes(p, n_bins, binning)
    n, mp, fy = _binned(p, y, w, codes, n_bins)
    var, units = _frequency_variance(codes, y, w, unit, n, fy)
    used = np.flatnonzero(n > 0)
    position = np.zeros(n_bins, dtype=np.int64)
    position[used] = np.arange(used.size)
    return _Binned(used, n[used], mp[used], fy[used], var[used], units[used],
                   position[codes], y - fy[codes], w, unit)


def _ce_terms(mean_p: np.ndarray, freq: np.ndarray, var: np.ndarray,
              norm: int) -> tuple[np.ndarray, np.ndarray]:
    """Per-bin plug-in term and debiasing correction (weights not applied), from the
    bins' estimated frequency variance ``var`` (:func:`_frequency_variance`).

    ``norm=2``: plug-in (f - p)^2, correction ``var``, for single forecasts
    f(1 - f)/(n - 1), the unbiased estimate of Var(f) under Bernoulli outcomes (0 for
    a bin of one forecast). ``norm=1``: plug-in |f - p|, correction E|d + s Z| - |d|
    (Z standard normal, d = f - p, s^2 = ``var``), the limit of the Gaussian
    resampling correction of Kumar et al.'s code as its number of resamples grows.
    """
    d = freq - mean_p
    if norm == 2:
        return d * d, var
    # 2|d| - E|d + sZ| is the debiased term, so the correction is E|d + sZ| - |d|
    return np.abs(d), np.abs(d) - l1_debiased(d, np.sqrt(var))


def _linear_variance(b: _Binned, coef: np.ndarray) -> float:
    r"""Clustered variance of the linear statistic :math:`\sum_k (n_k/n)\, c_k \bar y_k`
    (per-bin coefficients ``coef``) with the bins held fixed. A unit *c* (a forecast,
    or a cluster of ``groups``) enters through :math:`t_c = \sum_{i \in c} c_{k(i)}
    (y_i - \bar y_{k(i)}) / n`, so forecasts of one question in different bins covary;
    with :math:`C = \sum_c w_c` units of weight :math:`w_c`, it is :math:`\frac{C}{C - 1}
    \sum_c w_c t_c^2` (0 with fewer than two units)."""
    contrib = coef[b.row_bin] * b.row_resid / b.n.sum()
    if b.row_unit is None:
        t, w_c = contrib, b.row_weight
    else:
        rows = np.bincount(b.row_unit)
        present = rows > 0  # a cluster's rows share its weight
        t = np.bincount(b.row_unit, weights=contrib)[present]
        w_c = np.bincount(b.row_unit, weights=b.row_weight)[present] / rows[present]
    c = float(w_c.sum())
    return c / (c - 1.0) * float(np.sum(w_c * t * t)) if c > 1 else 0.0


def _ce_se(b: _Binned, norm: int) -> float:
    r"""Standard error of the debiased binned error with the bins held fixed.

    ``norm=2``: the delta-method variance of the linear part (:func:`_linear_variance`
    with :math:`c_k = 2 d_k`, :math:`d_k = \bar y_k - \bar p_k`) plus each bin's
    quadratic part :math:`(n_k/n)^2\, 2 v_k^2`, :math:`\operatorname{Var}(\hat d_k^2 -
    v_k)` at :math:`d_k = 0` for a Gaussian frequency, which keeps the error positive
    for a calibrated forecaster. ``norm=1``: :math:`\sum_k (n_k/n)^2 v_k`. It scales
    the bootstrap-t pivot of :func:`calibration_error`.
    """
    share = b.n / b.n.sum()
    if norm == 1:
        return float(np.sqrt(np.sum(share * share * b.var)))
    linear = _linear_variance(b, 2.0 * (b.freq - b.mean_p))
    return float(np.sqrt(linear + np.sum(share * share * 2.0 * b.var * b.var)))


def _debiased_ce(p: np.ndarray, y: np.ndarray, w: np.ndarray, n_bins: int, binning: str,
                 norm: int, zero_single: bool = False,
                 groups: np.ndarray | None = None) -> tuple[float, float, float]:
    """(debiased, plug-in, standard error) of the binned calibration error of forecasts
    ``p`` weighted ``w`` (rows of a cluster of ``groups`` share one weight);
    ``zero_single``: a bin of fewer than 2 units (forecasts or clusters) has error 0
    (Kumar et al.'s code)."""
    return _binned_ce(_bins(p, y, w, n_bins, binning, groups), norm, zero_single)[:3]


def _binned_ce(b: _Binned, norm: int, zero_single: bool
               ) -> tuple[float, float, float, np.ndarray, np.ndarray]:
    """(debiased, plug-in, standard error, per-bin plug-in terms, per-bin corrections)."""
    plug, corr = _ce_terms(b.mean_p, b.freq, b.var, norm)
    if zero_single:
        corr = np.where(b.units < 2, plug, corr)
    share = b.n / b.n.sum()
    return (float(np.sum(share * (plug - corr))), float(np.sum(share * plug)),
            _ce_se(b, norm), plug, corr)


# --------------------------------------------------------------------------- results
@dataclass(frozen=True, slots=True)
class CalibrationErrorResult(CoherenceResult, test_name="calibration_error",
                             settings=("plugin", "norm", "binning", "n_bins", "n_bins_used",
                                       "group",
                                       "n_resamples", "single_forecast_bins",
                                       "interval", "se")):
    """Result of :func:`calibration_error`.

    ``statistic`` is the debiased binned calibration error: for ``norm=2`` an
    unbiased estimate of the **squared** l2 calibration error (it can be
    negative; its square root, clipped at 0, is the l2-CE Kumar et al. report,
    see :attr:`l2_estimate` and :attr:`l2_interval`), for ``norm=1`` the bias-corrected l1 ECE.
    ``confidence_interval`` is the bootstrap interval (see Notes of
    :func:`calibration_error`); ``pvalue`` is NaN.

    Attributes
    ----------
    plugin : float
        The uncorrected binned value on the same scale (for ``equal_width``
        bins, the ECE or Murphy reliability of :func:`forecast_scores`).
    norm : int
        1 or 2.
    binning : str
        ``'equal_mass'`` or ``'equal_width'``.
    n_bins : int
        Bins asked for.
    n_bins_used : int
        Bins the estimate used, the non-empty ones (the rows of ``table``): fewer than
        ``n_bins`` where tied forecasts share an equal-mass bin, where there are fewer
        forecasts than bins, or where equal-width bins hold no forecast.
    group : str or None
        The cluster column of the bootstrap (None: rows resampled).
    n_resamples : int
    single_forecast_bins : str
        ``'plugin'`` or ``'zero'`` (see :func:`calibration_error`).
    interval : str
        The interval used: ``'profile'``, ``'bootstrap-t'`` or ``'basic'`` (also where
        ``se`` is 0).
    se : float
        The statistic's approximate standard error with the bins held fixed, the
        scale of the bootstrap-t pivot.
    table : pandas.DataFrame
        One row per non-empty bin: ``bin``, ``n``, ``mean_forecast``,
        ``observed_frequency``, ``plugin_term``, ``correction``.
    replicates : numpy.ndarray
        The bootstrap replicates of the debiased statistic.
    """

    plugin: float = np.nan
    norm: int = 2
    binning: str = "equal_mass"
    n_bins: int = 10
    n_bins_used: int = 0
    group: str | None = None
    n_resamples: int = 0
    single_forecast_bins: str = "plugin"
    interval: str = "profile"
    se: float = np.nan
    table: pd.DataFrame = field(default_factory=pd.DataFrame)
    replicates: np.ndarray = field(default_factory=lambda: np.empty(0))

    @property
    def l2_interval(self) -> ConfidenceInterval:
        """For ``norm=2``: the interval mapped through sqrt(max(., 0)), an interval for
        the l2 calibration error (the map is monotone, so the coverage is kept)."""
        if self.norm != 2:
            raise ValueError("l2_interval is defined for norm=2 results only.")
        ci = self.confidence_interval
        return ConfidenceInterval(math.sqrt(max(ci.low, 0.0)), math.sqrt(max(ci.high, 0.0)),
                                  ci.confidence_level)

    @property
    def l2_estimate(self) -> float:
        """sqrt(max(statistic, 0)) for ``norm=2`` (the value Kumar et al.'s code returns)."""
        if self.norm != 2:
            raise ValueError("l2_estimate is defined for norm=2 results only.")
        return math.sqrt(max(self.statistic, 0.0))


@dataclass(frozen=True, slots=True)
class SmoothECEResult(CoherenceResult, test_name="smooth_ece",
                      settings=("sigma", "definition", "n_grid", "n_resamples", "group")):
    """Result of :func:`smooth_ece`.

    ``statistic`` is the SmoothECE at the bandwidth ``sigma`` (the fixed point
    smECE_sigma = sigma); ``pvalue`` and ``confidence_interval`` are NaN (see
    Notes of :func:`smooth_ece`).

    Attributes
    ----------
    sigma : float
        The kernel bandwidth used.
    definition : str
        ``'paper'`` or ``'code'``.
    n_grid : int
        Points of the integration and diagram grid (at least 20 / sigma).
    n_resamples : int
        Bootstrap resamples of the diagram's band (0: no band).
    group : str or None
    table : pandas.DataFrame
        The smoothed reliability diagram, one row per grid point ``t``:
        ``smoothed`` (t + r(t), the estimated frequency of the outcome among
        forecasts near t), ``residual`` (r(t)), ``density`` (kernel density of the
        forecasts), ``band_low``, ``band_high`` (pointwise bootstrap band).
    """

    sigma: float = np.nan
    definition: str = "paper"
    n_grid: int = 0
    n_resamples: int = 0
    group: str | None = None
    table: pd.DataFrame = field(default_factory=pd.DataFrame)


# --------------------------------------------------------------------------- public layer
def _bootstrap_weight_chunks(n: int, groups: np.ndarray | None, n_resamples: int,
                             gen: np.random.Generator,
                             max_elements: int = 4_000_000) -> Iterator[np.ndarray]:
    """The (B, n) row multiplicities of a row (or cluster) bootstrap in chunks of rows (the
    same stream as drawing them at once), each at most ``max_elements`` weights (one at
    least), so memory stays O(n)."""
    n_groups = n if groups is None else int(groups.max()) + 1
    rows = max(1, max_elements // n)  # rows of n weights per chunk
    for _, _, draws in cluster_draw_chunks(n_groups, n_resamples, gen,
                                           max_elements=rows * n_groups):
        w = cluster_weights(draws, n_groups)
        yield w if groups is None else w[:, groups]


def calibration_error(data: Any, *, probability: str = "probability",
                      outcome: str = "outcome", group: str | None = None, n_bins: int = 10,
                      binning: str = "equal_mass", norm: int = 2,
                      n_resamples: int = 999, confidence_level: float = 0.95,
                      single_forecast_bins: str = "plugin", interval: str = "profile",
                      rng: RNGLike = None) -> CalibrationErrorResult:
    r"""Debiased binned calibration error with a bootstrap interval.

    The plug-in binned calibration error (the reliability term of the Brier score) is
    biased upward: even a perfectly calibrated forecaster scores above 0, the more so
    the fewer forecasts per bin. This estimator removes that bias (Kumar, Liang and Ma
    2019), so it can be negative, and its interval resamples the forecasts (or the
    clusters of ``group``).

    Parameters
    ----------
    data : pandas.DataFrame or convertible
        One row per forecast.
    probability, outcome : str
        Columns: the forecast probability in [0, 1] and the outcome (0 or 1).
        For multiple-choice forecasts pass ``forecast_scores(...).per_forecast``'s
        (``confidence``, ``correct``) less every forecast with a tie at the top, not
        only the rows where ``correct`` is NaN (the tied hits): the tied misses would
        stay and lower the frequency (forecast_scores counts a tied hit 1/m right).
    group : str, optional
        Cluster column (e.g. ``'question'`` when several forecasters, or several
        samples of one model, answered the same questions): the bootstrap resamples
        its clusters, and the debiasing uses the cluster-robust variance of each
        bin's observed frequency, since forecasts of one question share its outcome
        (see Notes). With None, rows are resampled and the correction is Kumar et
        al.'s, which assumes independent outcomes. Labels that differ only in case,
        surrounding spaces or type (``'Q1'`` and ``'q1'``, ``1`` and ``'1'``) raise.
    n_bins : int >= 1, default 10
    binning : {'equal_mass', 'equal_width'}, default 'equal_mass'
        Quantile bins (Kumar et al.'s recommendation) or equal-width bins.
    norm : {2, 1}, default 2
        2: the squared l2 calibration error of the paper (unbiased estimate);
        1: the l1 ECE with the bias correction of the authors' code.
    n_resamples : int >= 1, default 999
    confidence_level : float in (0, 1), default 0.95
    single_forecast_bins : {'plugin', 'zero'}, default 'plugin'
        A bin of one forecast (with ``group``, of one cluster) has no variance
        estimate, so its term cannot be debiased: ``'plugin'`` keeps its plug-in
        term (correction 0, with a :class:`SmallSampleWarning`); ``'zero'``
        counts its error as 0, as Kumar et al.'s code does
        (``unbiased_square_ce``: a bin error is 0 when it holds fewer than 2
        forecasts; for ``norm=1`` their code refuses such bins). The two differ
        by up to 0.025 at n = 50 with equal-width bins; in bootstrap resamples a
        bin of fewer than 2 drawn forecasts follows the same rule.
    interval : {'profile', 'bootstrap-t', 'basic'}, default 'profile'
        ``'bootstrap-t'``: studentized by the statistic's standard error (the
        previous default); ``'profile'``: for ``norm=2`` the same with its upper end
        raised to the Gaussian profile bound where that is higher, for ``norm=1`` with
        its lower end lowered to the l1 profile bound and its upper end the plug-in
        plus z standard errors; ``'basic'``: the basic (pivotal) interval used before
        that (see Notes).
    rng : int, numpy.random.Generator or None

    Returns
    -------
    CalibrationErrorResult
        ``statistic`` the debiased calibration error (for ``norm=2`` the squared l2
        error, which can be negative) with its bootstrap interval, ``plugin`` the
        uncorrected value, one row per bin in ``table``; ``pvalue`` is NaN.

    Raises
    ------
    ValueError
        For a missing column, a probability outside [0, 1], a non-binary
        outcome, fewer than two forecasts, or a bad option.

    Warns
    -----
    SmallSampleWarning
        With ``single_forecast_bins='plugin'``, when a non-empty bin holds a
        single forecast or cluster (its correction is 0, so its term is not debiased);
        use fewer bins. With ``'zero'``, when every bin holds one (the estimate is then 0
        by construction). Also when the interval is the point itself (no bin's outcomes
        vary and every resample gives the same error).
    TiesWarning
        With ``binning='equal_mass'``, when tied forecasts share a bin, so that fewer
        than ``n_bins`` bins (and fewer than the forecasts) are used; ``n_bins_used``
        says how many. With fewer forecasts than ``n_bins`` and no ties, the bins of
        one forecast each give the :class:`SmallSampleWarning` above instead.
    NotCalibratedWarning
        For ``norm=1`` with ``interval='bootstrap-t'`` or ``'basic'``: the l1
        correction leaves a bias near 0, and these intervals under-cover there.

    See Also
    --------
    smooth_ece : a calibration error without bins.
    forecast_scores : accuracy, Brier and log scores per model, with calibration.
    brier_decomposition : the calibration term of the Brier score.
    report : this measure and the tests on every (model, dataset) cell.

    Notes
    -----
    With bins :math:`B_k` of :math:`n_k` of the :math:`n` forecasts, mean
    forecast :math:`\bar p_k` and observed frequency :math:`\bar y_k`, the
    plug-in squared l2 calibration error is the Murphy reliability
    :math:`\sum_k \frac{n_k}{n}(\bar y_k - \bar p_k)^2`. Its expectation
    exceeds the binned calibration error by
    :math:`\sum_k \frac{n_k}{n}\operatorname{Var}(\bar y_k)`, so even a
    perfectly calibrated forecaster scores above 0. Kumar, Liang and Ma (2019)
    subtract the unbiased estimate of that variance:

    .. math::

        \widehat{\mathrm{CE}}^2 = \sum_k \frac{n_k}{n}\Big[(\bar y_k - \bar p_k)^2
        - \frac{\bar y_k(1 - \bar y_k)}{n_k - 1}\Big],

    unbiased when the outcomes of a bin are independent and share one probability
    (biased slightly low when the probabilities vary within a bin) and never
    clipped at 0. Forecasts that share an outcome (several forecasters or samples
    per question) are not independent, and that correction then leaves a bias
    (measured: 1.65e-2 for a true 1.35e-2 with three forecasters per question at
    n = 600, 2.52e-2 at n = 150). With ``group``, the variance of bin *k*'s
    frequency is the cluster-robust :math:`\frac{C_k}{C_k - 1}\sum_c (S_c - m_c \bar
    y_k)^2 / n_k^2` over its :math:`C_k` clusters (cluster *c* holding :math:`m_c` of
    its forecasts with :math:`S_c` outcomes), which is Kumar et al.'s for clusters of
    one forecast and unbiased when the clusters' totals are exchangeable (measured:
    1.39e-2 and 1.64e-2 in the same studies). For ``norm=1`` there is no
    unbiased estimator; the authors' code (``normal_debiased_ce``) uses
    :math:`2\,\mathrm{ECE} - \mathrm{E}[\sum_k \frac{n_k}{n}|\bar y_k + s_k Z -
    \bar p_k|]` with :math:`s_k^2 = \bar y_k(1-\bar y_k)/n_k` estimated by
    Gaussian resampling; here the expectation is the exact folded-normal mean
    and :math:`s_k^2` uses :math:`n_k - 1`, the same as the l2 correction.

    The interval is a bootstrap over rows (or clusters of ``group``), the bins recomputed
    in every resample; equal-mass bins split the distinct rows drawn, each counted once
    whatever its multiplicity (the measured coverage is of this rule). The bootstrap
    world's true value is the plug-in :math:`\hat\theta_{pl}`, which the debiased
    replicates :math:`\theta^*` estimate without bias. The error's spread grows with the
    error itself, so the pivot is studentized (bootstrap-t): with the standard error
    :math:`se` of the bins held fixed (for ``norm=2``, :math:`se^2 = \sum_k (n_k/n)^2 (4
    d_k^2 v_k + 2 v_k^2)`, :math:`d_k = \bar y_k - \bar p_k`, :math:`v_k = \bar y_k(1-\bar
    y_k)/(n_k-1)`; for ``norm=1``, :math:`\sum_k (n_k/n)^2 v_k`) and :math:`t^* =
    (\theta^* - \hat\theta_{pl}) / se^*`, the interval is :math:`[\hat\theta -
    t^*_{1-\alpha/2}\, se,\ \hat\theta - t^*_{\alpha/2}\, se]`. When every bin's
    outcomes agree, :math:`se = 0` and the basic interval is used (``interval`` of the
    result says which). The default, ``interval='profile'`` (``norm=2``), raises its
    upper end to the Gaussian profile bound where that is higher: the largest error
    at which, with each bin's gap normal around its true value with variance
    :math:`v_k`, the excess in the least precise bin and the others at their debiased
    gaps, at least :math:`\alpha/2` of ``n_resamples`` model draws of the statistic
    lie at or below the observed one. The plain bootstrap-t (``'bootstrap-t'``, the
    previous default) misses above: a gap that comes out near 0 in the bin carrying
    the error gives a bootstrap world with almost none (rare outcomes: 0.877-0.924;
    the profile interval 0.976-0.977, and 0.955-0.993 on every design, 2-29% wider).
    For ``norm=1`` the bootstrap-t misses the other way: near 0 the l1 correction
    leaves a bias, and a calibrated forecaster's interval lies above 0 in a quarter of
    studies. ``'profile'`` lowers its lower end to the smallest error along the
    observed gaps (:math:`\lambda \hat g`, :math:`\lambda \ge 0`) at which at least
    :math:`\alpha/2` of the Gaussian model's statistics lie at or above the observed
    one, and takes as upper end the plug-in plus :math:`z_{1-\alpha/2}` times the
    clustered standard error of :math:`\sum_k \frac{n_k}{n}\operatorname{sign}(\hat
    d_k)\bar y_k`: the plug-in is never below :math:`\sum_k \frac{n_k}{n}
    \operatorname{sign}(d_k)\hat d_k`, whose mean is the l1 error, so that end needs
    no profile.
    ``interval='basic'`` gives the basic (pivotal) interval
    :math:`[\hat\theta + \hat\theta_{pl} - q^*_{1-\alpha/2}, \hat\theta +
    \hat\theta_{pl} - q^*_{\alpha/2}]` of the same replicates, the one before.
    The measured coverage of all three is in ``docs/forecast_scoring.md``
    (``benchmarks/validate_calibration.py``).

    References
    ----------
    .. [1] A. Kumar, P. Liang, T. Ma (2019). Verified uncertainty calibration.
       NeurIPS 32.
    .. [2] C. A. T. Ferro, T. E. Fricker (2012). A bias-corrected decomposition
       of the Brier score. QJRMS 138.
    .. [3] A. H. Murphy (1973). A new vector partition of the probability score.
       Journal of Applied Meteorology 12(4).

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from coherence import calibration_error
    >>> gen = np.random.default_rng(0)
    >>> p = gen.uniform(size=2000)
    >>> df = pd.DataFrame({"probability": p, "outcome": gen.uniform(size=2000) < p})
    >>> res = calibration_error(df, n_resamples=199, rng=0)
    >>> bool(abs(res.statistic) < res.plugin)   # the bias of the plug-in removed
    True
    """
    owner = "calibration_error"
    n_resamples, confidence_level = check_resampling(owner, n_resamples, confidence_level)
    n_bins = check_int(n_bins, "n_bins", owner, low=1)
    binning = check_choice(binning, "binning", owner, CALIBRATION_BINNINGS)
    single_forecast_bins = check_choice(single_forecast_bins, "single_forecast_bins", owner,
                                        ("plugin", "zero"))
    interval = check_choice(interval, "interval", owner, _INTERVALS)
    zero_single = single_forecast_bins == "zero"
    if isinstance(norm, bool) or norm not in (1, 2):
        raise ValueError(param_error("norm", owner, "1 or 2", norm))
    norm = int(norm)
    gen = check_rng(rng, owner=owner)
    p, y, groups = forecast_arrays(data, probability, outcome, group, owner)
    n = len(p)
    point = _bins(p, y, np.ones(n), n_bins, binning, groups)
    stat, plug, se, plug_t, corr_t = _binned_ce(point, norm, zero_single)
    unit = "forecast" if groups is None else f"'{group}' cluster"
    if binning == "equal_mass" and point.bins.size < min(n_bins, n):
        warnings.warn(f"{owner}: n_bins={n_bins} asked, {point.bins.size} equal-mass bin(s) "
                      f"used: tied forecasts share a bin ({np.unique(p).size} distinct "
                      "values); 'n_bins_used' and the table give the bins used.",
                      TiesWarning, stacklevel=2)
    if not zero_single and np.any(point.units == 1):
        warnings.warn(f"{owner}: {int(np.sum(point.units == 1))} bin(s) hold a single "
                      f"{unit}, whose term cannot be debiased; use fewer bins.",
                      SmallSampleWarning, stacklevel=2)
    if zero_single and np.all(point.units < 2):
        warnings.warn(f"{owner}: each of the {point.bins.size} bin(s) holds a single {unit}, "
                      "whose error single_forecast_bins='zero' counts as 0: the estimate 0 is "
                      "so by construction, not a finding; use fewer bins.",
                      SmallSampleWarning, stacklevel=2)
    if norm == 1 and interval != "profile":
        warnings.warn(f"{owner}: with norm=1, interval={interval!r} is not calibrated near "
                      "0 (coverage 0.72-0.78 for a calibrated forecaster, 0.81-0.94 with "
                      "a real error); the default interval='profile' is.",
                      NotCalibratedWarning, stacklevel=2)
    # the resampled weights in blocks (the same stream as one (n_resamples, n) draw): O(n) memory
    boot = np.array([_debiased_ce(p, y, w, n_bins, binning, norm, zero_single, groups)[::2]
                     for block in _bootstrap_weight_chunks(n, groups, n_resamples, gen)
                     for w in block]).reshape(-1, 2)
    reps = boot[:, 0]
    # a bin whose term is counted as 0 (zero_single) does not enter the profile's model
    share = np.where(zero_single & (point.units < 2), 0.0, point.n / n)
    gaps = point.freq - point.mean_p
    # the l1 upper end's coefficients: sign(gap), +1 at 0 so that its spread still counts
    low, high, used_t = calibration_interval(
        interval, stat, plug, se, boot, (share, gaps, point.var), confidence_level, gen,
        l1_se=math.sqrt(_linear_variance(point, np.where(gaps < 0, -1.0, 1.0)))
        if norm == 1 and interval == "profile" else None)
    low, high = point_at_value(stat, (low, high))  # a point to rounding: the estimate
    if high - low <= 1e-12:  # every resample gave the estimate (to rounding): no uncertainty
        warnings.warn(f"calibration_error: the interval is the point {low:.4g} itself (no "
                      "bin's outcomes vary, and every resample gives the same error); it "
                      "does not reflect what a larger sample could show.",
                      SmallSampleWarning, stacklevel=2)
    table = pd.DataFrame({"bin": point.bins.astype(np.int64),
                          "n": point.n.astype(np.int64),
                          "mean_forecast": point.mean_p, "observed_frequency": point.freq,
                          "plugin_term": plug_t, "correction": corr_t})
    scale = "squared l2" if norm == 2 else "l1"
    fallback = (" (standard error 0: no bin's outcomes vary)" if used_t == "basic" != interval
                else "")
    debias = "" if group is None else f"; correction cluster-robust over '{group}'"
    label = {"profile": "bootstrap-t", "bootstrap-t": "bootstrap-t",
             "basic": "basic bootstrap"}[used_t]
    raised = {2: ", its upper end at least the Gaussian profile bound",
              1: ", its lower end at most the Gaussian profile bound, its upper end the "
                 "plug-in + z se"}[norm] if used_t == "profile" else ""
    return CalibrationErrorResult(
        statistic=stat, pvalue=np.nan,
        confidence_interval=ConfidenceInterval(low, high, confidence_level), n_obs=n,
        method=f"debiased {scale} binned calibration error (Kumar et al. 2019{debias}), "
               f"{label} interval over {'rows' if group is None else group}{raised}"
               f"{fallback}",
        plugin=plug, norm=norm, binning=binning, n_bins=n_bins,
        n_bins_used=int(point.bins.size), group=group,
        n_resamples=n_resamples, single_forecast_bins=single_forecast_bins,
        interval=used_t, se=se, table=table,
        replicates=reps)


def smooth_ece(data: Any, *, probability: str = "probability", outcome: str = "outcome",
               group: str | None = None, sigma: float | None = None,
               definition: str = "paper", n_grid: int = 1000, n_resamples: int = 200,
               confidence_level: float = 0.95, rng: RNGLike = None) -> SmoothECEResult:
    r"""SmoothECE and the smoothed reliability diagram (Blasiok and Nakkiran 2023).

    A binned calibration error depends on its bins. SmoothECE replaces them by a
    Gaussian kernel, reflected at 0 and 1, whose bandwidth the data choose (a fixed
    point: the bandwidth equals the error it gives), which makes it a consistent
    calibration measure; it comes with the smoothed reliability diagram and a bootstrap
    band.

    Parameters
    ----------
    data : pandas.DataFrame or convertible
        One row per forecast.
    probability, outcome : str
        Columns: the forecast in [0, 1] and the outcome (0 or 1).
    group : str, optional
        Cluster column of the diagram's bootstrap band (labels as for
        :func:`calibration_error`'s ``group``).
    sigma : float in [1e-4, 1], optional
        A fixed kernel bandwidth; default the fixed point
        :math:`\mathrm{smECE}_\sigma = \sigma` of the paper (searched in
        [1e-4, 1]: a SmoothECE below 1e-4 is reported at sigma = 1e-4).
    definition : {'paper', 'relplot-1.0.3', 'relplot-1.0.1', 'code'}, default 'paper'
        ``'paper'``: the definition below, kernel sums to 1e-12 (see
        Computation), integral by the midpoint rule, fixed point by Brent's
        method to 1e-7. The authors' package, relplot, computes it two ways:
        ``'relplot-1.0.3'`` (relplot 1.0.2 and 1.0.3, ``smECE``): residuals
        and ones split onto a mesh of max(2000, 20 / sigma) / 2 + 1 points,
        smoothed with one reflection at each end, interpolated at
        max(200, 10 / sigma) points, and averaged weighted by the smoothed
        density plus 1e-4; ``'relplot-1.0.1'`` (relplot 1.0 and 1.0.1,
        ``smECE_fast``; ``'code'`` is its former name): residuals rounded onto
        a 200-point mesh (refined 4x while 20 / sigma exceeds it), a single
        reflection at each end, the mean absolute smoothed residual. Both take
        the bandwidth after 10 bisection steps (precision 1/1024) and agree
        with their relplot release to 4e-16; they differ from each other by up
        to 0.02. The diagram is drawn with the paper's kernel at the chosen
        bandwidth in every case.
    n_grid : int in [10, 100000], default 1000
        Grid points on [0, 1] (raised to 20 / sigma when the kernel is narrow,
        at most 200,000).
    n_resamples : int >= 0, default 200
        Bootstrap resamples of the diagram's pointwise band (bandwidth held
        fixed); 0 for no band.
    confidence_level : float in (0, 1), default 0.95
        Level of the band.
    rng : int, numpy.random.Generator or None

    Returns
    -------
    SmoothECEResult
        ``statistic`` the SmoothECE at the bandwidth ``sigma`` (``pvalue`` and interval
        NaN); the smoothed reliability diagram, with its bootstrap band, in ``table``.

    See Also
    --------
    calibration_error : the debiased binned calibration error.
    plot_smooth_reliability : the smoothed reliability diagram of this result.
    report : this measure and the tests on every (model, dataset) cell.

    Notes
    -----
    With residuals :math:`r_i = y_i - f_i` and :math:`K_\sigma(t, f)` the
    density at :math:`t` of :math:`f + \sigma Z` reflected into [0, 1] (a
    Gaussian summed over its mirror images at the even and odd integers),

    .. math::

        \hat r(t) = \frac{\sum_i K_\sigma(t, f_i) r_i}{\sum_i K_\sigma(t, f_i)},
        \quad \hat\delta(t) = \frac1n \sum_i K_\sigma(t, f_i),
        \quad \mathrm{smECE}_\sigma = \int_0^1 |\hat r(t)|\,\hat\delta(t)\,dt.

    :math:`\mathrm{smECE}_\sigma` falls as :math:`\sigma` grows, and the
    SmoothECE is its value at the unique :math:`\sigma^*` with
    :math:`\mathrm{smECE}_{\sigma^*} = \sigma^*`; it is a consistent calibration
    measure (within constant factors of the distance to calibration, up to a
    square root). The diagram plots :math:`t + \hat r(t)` with thickness
    :math:`\hat\delta(t)`.

    **Computation.** The kernel sums :math:`\sum_i K_\sigma(t, f_i) v_i`
    at the grid points are not formed point by point (O(n x grid)): each
    forecast is written :math:`f_i = g_j + d_i` with :math:`g_j` the nearest
    point of a lattice of spacing :math:`h \le \min(1 / (4\,\mathrm{grid}), \sigma / 80)`,
    :math:`K_\sigma(t, g_j + d)` is expanded in :math:`d` to :math:`q` terms,
    the moments :math:`\sum v_i d_i^p / p!` are binned on the lattice and each
    derivative sum is one FFT convolution (the reflections make the kernel
    periodic): O(n q + q grid log grid) per bandwidth, and O(n) memory. By
    Cramér's bound on Hermite functions the remainder of each kernel value is
    at most :math:`2.173 (1 + \sqrt\pi \sigma) (h / 2\sigma)^q / \sqrt{q!}`
    times the kernel's peak :math:`1 / (\sqrt{2\pi}\sigma)`, and :math:`q`
    (4 to 6) is the least that makes this at most 1e-12; so
    :math:`\mathrm{smECE}_\sigma` and the density are within
    1e-12 x :math:`\overline{|v|} / (\sqrt{2\pi}\sigma)` of their exact
    values (measured: 1e-15 relative), and the curve to 2e-6 where the density
    is above 1e-6 of that scale. Below it (a constant or clustered forecast) the
    curve and density are summed exactly, in logs, over the distinct forecasts:
    finite everywhere (NaN, with a DegenerateDataWarning, only where that would
    take more than about 5 s). The bootstrap band holds the
    resampled weights in blocks, O(n) memory.

    The SmoothECE is a plug-in of an absolute value, biased upwards at small
    n (a calibrated forecaster scores about :math:`n^{-1/2}`), so no
    confidence interval of it is given (NaN): a bootstrap interval would not
    cover 0. For an estimate with an interval use :func:`calibration_error`.

    References
    ----------
    .. [1] J. Blasiok, P. Nakkiran (2023). Smooth ECE: principled reliability
       diagrams via kernel smoothing. arXiv:2309.12236 (ICLR 2024); code:
       github.com/apple/ml-calibration (relplot).
    .. [2] J. Blasiok, P. Gopalan, L. Hu, P. Nakkiran (2023). A unifying
       theory of distance from calibration. STOC 2023.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> from coherence import smooth_ece
    >>> gen = np.random.default_rng(0)
    >>> p = gen.uniform(size=200)
    >>> df = pd.DataFrame({"probability": p, "outcome": gen.uniform(size=200) < p ** 2})
    >>> res = smooth_ece(df, n_resamples=0)
    >>> bool(abs(res.statistic - res.sigma) < 1e-5)   # the fixed point
    True
    """
    owner = "smooth_ece"
    definition = check_choice(definition, "definition", owner, _DEFINITIONS)
    n_grid = check_int(n_grid, "n_grid", owner, low=10, high=MAX_N_GRID)
    n_resamples = check_int(n_resamples, "n_resamples", owner, low=0)
    confidence_level = check_float(confidence_level, "confidence_level", owner, low=0.0,
                                   high=1.0, low_open=True, high_open=True)
    if sigma is not None:
        sigma = check_float(sigma, "sigma", owner, low=SIGMA_MIN, high=1.0)
    gen = check_rng(rng, owner=owner)
    f, y, groups = forecast_arrays(data, probability, outcome, group, owner)
    r = y - f
    lattices: dict[int, tuple[np.ndarray, np.ndarray]] = {}  # the binning, per lattice size
    if definition == "relplot-1.0.3":
        if sigma is None:
            sigma = relplot_search(lambda a: relplot_103_at(f, y, a))
        stat = relplot_103_at(f, y, sigma)
    elif definition in ("code", "relplot-1.0.1"):
        if sigma is None:
            stat, sigma = smooth_ece_code(f, y)
        else:
            m = 200
            while round(20.0 / sigma) > m:
                m *= 4
            stat = code_smece_at(round_to_grid(f, f - y, m) / len(f), sigma)
    else:
        if sigma is None:
            sigma = fixed_point(lambda s: smooth_ece_sigma(f, r, s, n_grid, lattices), 1e-7,
                                 SIGMA_MIN)
        stat = smooth_ece_sigma(f, r, sigma, n_grid, lattices)
    t = smooth_grid(sigma, n_grid)
    smoother = Smoother(f, sigma, len(t), lattices)
    curve, dens, unresolved = smooth_curve(smoother, f, y, np.ones((1, len(f))), t)
    table = pd.DataFrame({"t": t, "smoothed": curve[0], "residual": curve[0] - t,
                          "density": dens[0]})
    band_low = np.full(len(t), np.nan)
    band_high = np.full(len(t), np.nan)
    if n_resamples > 0:
        band_low, band_high, left = smooth_band(
            smoother, f, y, t, _bootstrap_weight_chunks(len(f), groups, n_resamples, gen),
            confidence_level)
        unresolved = max(unresolved, left)
    if unresolved:
        warnings.warn(f"smooth_ece: the smoothed curve or its band is NaN at {unresolved} of "
                      f"{len(t)} grid points, where the forecasts' density is below 1e-6 of "
                      "the kernel's peak and its exact sum over "
                      f"{len(np.unique(f))} distinct forecasts would take too long; round the "
                      "forecasts or lower n_resamples to have them.", DegenerateDataWarning,
                      stacklevel=2)
    table["band_low"] = band_low
    table["band_high"] = band_high
    return SmoothECEResult(
        statistic=float(stat), pvalue=np.nan,
        confidence_interval=ConfidenceInterval(np.nan, np.nan, confidence_level),
        n_obs=len(f),
        method=f"SmoothECE (Blasiok and Nakkiran 2023), reflected Gaussian kernel, "
               f"{definition} definition",
        sigma=float(sigma), definition=definition, n_grid=len(t), n_resamples=n_resamples,
        group=group, table=table)
