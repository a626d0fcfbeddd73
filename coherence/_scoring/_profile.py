r"""The Gaussian profile upper bound of a debiased squared binned error, which raises
:func:`calibration_error`'s bootstrap-t upper end where the error sits in an imprecise
bin whose gap happens to come out near 0.

Array layer: per bin the weight :math:`w_k = n_k/n`, the estimated gap
:math:`\hat g_k = \bar y_k - \bar p_k` and the estimated variance :math:`v_k` of the
observed frequency; the statistic :math:`T = \sum_k w_k(\hat g_k^2 - v_k)`.

Why: the bootstrap-t studentizes by a standard error that is proportional to
:math:`|\hat g_k|`, and the bootstrap world is centred on the sample's gaps. A sample
whose gap in the one bin that carries the error comes out near 0 therefore gets an
interval near 0, which the true error lies above: its misses are one-sided (measured
in ``benchmarks/validate_calibration.py``). A test of a given error value under the
Gaussian model :math:`\hat g_k \sim N(g_k, v_k)` does not share that weakness: a gap
observed near 0 rejects a true gap only beyond about two of its standard errors, the
noncentral chi-square's inversion for one bin.
"""

from __future__ import annotations

import math

import numpy as np

from .._resampling import percentile_interval
from .._resampling import studentized_interval

__all__ = ["calibration_interval", "profile_upper_bound"]


def profile_upper_bound(weights: np.ndarray, gaps: np.ndarray, variances: np.ndarray,
                        statistic: float, confidence_level: float,
                        normals: np.ndarray) -> float:
    r"""The largest error :math:`\theta` that the Gaussian model does not reject from
    below at :math:`(1 - \text{level})/2`, profiled over the least precise bin.

    The bin *m* with the largest :math:`w_m v_m` carries the hypothesised excess; every
    other bin keeps its debiased gap :math:`\tilde g_k = \operatorname{sign}(\hat g_k)
    \sqrt{\max(\hat g_k^2 - v_k, 0)}`, so :math:`\theta(a) = w_m a^2 + \sum_{k \ne m}
    w_k \tilde g_k^2` for the gap :math:`a \ge 0` of bin *m*. With ``normals`` *Z*
    (``(B, K)`` standard normal draws), the model's statistics are
    :math:`T^*_b(a) = \sum_k w_k((\gamma_k + \sqrt{v_k} Z_{bk})^2 - v_k)` with
    :math:`\gamma_m = a` and :math:`\gamma_k = \tilde g_k`, and the bound is
    :math:`\theta(a^*)`, :math:`a^*` the largest *a* at which at least a share
    :math:`(1 - \text{level})/2` of them lie at or below the statistic *T*. Exactly: draw
    *b*'s statistic is at most *T* on an interval of *a*, the solutions of
    :math:`(a + \sqrt{v_m} Z_{bm})^2 \le (T - R_b)/w_m + v_m` (:math:`R_b` the other
    bins' part), so :math:`a^*` is the largest right end of these intervals that at
    least :math:`\lceil B (1 - \text{level})/2 \rceil` of them hold. It is
    :math:`\theta(0)` when no :math:`a \ge 0` qualifies, and NaN when no bin's
    frequency varies (every :math:`v_k = 0`).
    """
    w = np.asarray(weights, dtype=np.float64)
    g = np.asarray(gaps, dtype=np.float64)
    v = np.asarray(variances, dtype=np.float64)
    spread = w * v
    if not np.any(spread > 0):
        return float("nan")
    m = int(np.argmax(spread))
    others = np.arange(w.size) != m
    kept = np.sign(g) * np.sqrt(np.maximum(g * g - v, 0.0))
    base = float(np.sum(w[others] * kept[others] ** 2))
    sd = np.sqrt(v)
    rest = np.sum(w[others] * ((kept[others] + sd[others] * normals[:, others]) ** 2
                               - v[others]), axis=1)
    room = (statistic - rest) / w[m] + v[m]       # (a + sd_m Z_m)^2 <= room
    centre = -sd[m] * normals[:, m]
    radius = np.sqrt(np.where(room >= 0.0, room, np.nan))
    low = np.maximum(centre - radius, 0.0)
    high = centre + radius
    ok = high >= low                              # NaN (no solution) compares False
    low, high = np.sort(low[ok]), np.sort(high[ok])
    need = math.ceil(normals.shape[0] * (1.0 - confidence_level) / 2.0 - 1e-9)
    # intervals holding each right end c: those with low <= c minus those ending before c
    holding = (np.searchsorted(low, high, side="right")
               - np.searchsorted(high, high, side="left"))
    qualified = high[holding >= need]
    a_star = float(qualified.max()) if qualified.size else 0.0
    return float(base + w[m] * a_star * a_star)


def calibration_interval(interval: str, statistic: float, plugin: float, se: float,
                         boot: np.ndarray, bins: tuple[np.ndarray, np.ndarray, np.ndarray],
                         confidence_level: float, rng: np.random.Generator
                         ) -> tuple[float, float, str]:
    """:func:`calibration_error`'s interval, and which was used, from the debiased
    replicates and their standard errors ``boot`` (``(B, 2)``) and, for ``'profile'``,
    the bins' ``(weights, gaps, variances)``:

    * ``'bootstrap-t'``: :func:`studentized_interval` around the plug-in;
    * ``'profile'``: the same, its upper end raised to :func:`profile_upper_bound` (with
      ``B`` standard normal draws per bin from ``rng``) where that is higher;
    * ``'basic'``: the basic (pivotal) interval of the replicates, also where ``se`` is 0
      (no bin's outcomes vary), whatever was asked for.
    """
    if not se > 0 or interval == "basic":
        q_lo, q_hi = percentile_interval(boot[:, 0], confidence_level)
        return statistic + plugin - q_hi, statistic + plugin - q_lo, "basic"
    low, high = studentized_interval(statistic, plugin, se, boot[:, 0], boot[:, 1],
                                     confidence_level)
    if interval == "profile":
        weights, gaps, variances = bins
        normals = rng.standard_normal((boot.shape[0], weights.size))
        bound = profile_upper_bound(weights, gaps, variances, statistic, confidence_level,
                                    normals)
        if not math.isnan(bound):  # NaN: no bin's frequency varies
            high = max(high, bound)
    return float(low), float(high), interval
