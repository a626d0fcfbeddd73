r"""The Gaussian profile bounds of :func:`calibration_error`'s intervals: for the
debiased squared binned error an upper bound, which raises the bootstrap-t upper end
where the error sits in an imprecise bin whose gap happens to come out near 0; for the
l1 error a lower bound and a linear upper bound (below).

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

For the l1 error :math:`\theta = \sum_k w_k |g_k|` (``norm=1``) the bootstrap-t misses
the other way: Kumar et al.'s correction leaves a bias near 0, so a calibrated
forecaster's interval lies above 0 a quarter of the time. There the lower end is
lowered to the Gaussian model's bound along the observed gaps
(:func:`l1_profile_lower_bound`), and the upper end is the plug-in plus
:math:`z_{1-\alpha/2}` times the standard error of :math:`\sum_k w_k
\operatorname{sign}(\hat g_k)\hat g_k`, a bound that needs no profile: the plug-in
:math:`\sum_k w_k|\hat g_k|` is never below the linear statistic
:math:`\sum_k w_k \operatorname{sign}(g_k) \hat g_k`, whose mean is :math:`\theta`.
"""

from __future__ import annotations

import math

import numpy as np
from scipy.special import ndtr
from scipy.special import ndtri

from .._resampling import percentile_interval
from .._resampling import studentized_interval

__all__ = ["calibration_interval", "l1_debiased", "l1_profile_lower_bound",
           "profile_upper_bound"]


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


def l1_debiased(gaps: np.ndarray, sds: np.ndarray) -> np.ndarray:
    r"""Per bin (along the last axis), Kumar et al.'s debiased l1 term :math:`2|d| -
    \mathrm{E}|d + sZ|` (the folded-normal mean; :math:`|d|` where :math:`s = 0`)."""
    d = np.asarray(gaps, dtype=np.float64)
    s = np.broadcast_to(np.asarray(sds, dtype=np.float64), d.shape)
    pos = s > 0
    with np.errstate(invalid="ignore", divide="ignore"):
        z = np.where(pos, d / np.where(pos, s, 1.0), 0.0)
        folded = np.where(pos, s * math.sqrt(2.0 / math.pi) * np.exp(-0.5 * z * z)
                          + d * (1.0 - 2.0 * ndtr(-z)), np.abs(d))
    out: np.ndarray = 2.0 * np.abs(d) - folded
    return out


def l1_profile_lower_bound(weights: np.ndarray, gaps: np.ndarray, variances: np.ndarray,
                           statistic: float, confidence_level: float,
                           normals: np.ndarray, *, reach: float = 2.0,
                           steps: int = 200) -> float:
    r"""The smallest l1 error along the observed gaps that the Gaussian model does not
    reject from above at :math:`(1 - \text{level})/2`.

    The family is :math:`\gamma(\lambda) = \lambda \hat g` (every bin's gap scaled
    alike, :math:`0 \le \lambda \le` ``reach``), of error :math:`\theta(\lambda) =
    \lambda \sum_k w_k |\hat g_k|`. With ``normals`` *Z* (``(B, K)``), the model's
    statistics are :math:`T^*_b(\lambda) = \sum_k w_k\, h(\lambda \hat g_k +
    \sqrt{v_k} Z_{bk})`, *h* the debiased term of :func:`l1_debiased`, and
    :math:`\lambda^*` is the least :math:`\lambda` at which at least
    :math:`\lceil B (1 - \text{level})/2 \rceil` of them lie at or above the statistic
    *T*: the first of ``steps`` + 1 equally spaced values that qualifies, refined by
    bisection between it and the one before. It is 0 when :math:`\lambda = 0` (a
    calibrated forecaster) qualifies, :math:`\theta(\text{reach})` when no value
    does, and NaN when no bin's frequency varies (every :math:`v_k = 0`).
    """
    w = np.asarray(weights, dtype=np.float64)
    g = np.asarray(gaps, dtype=np.float64)
    sd = np.sqrt(np.asarray(variances, dtype=np.float64))
    if not np.any(w * sd > 0):
        return float("nan")
    need = math.ceil(normals.shape[0] * (1.0 - confidence_level) / 2.0 - 1e-9)
    noise = sd * normals

    def holds(lam: np.ndarray) -> np.ndarray:
        """Per value of ``lam``: whether enough model statistics reach ``statistic``
        (in chunks of about a million model terms)."""
        step = max(1, 1_000_000 // noise.size)
        counts = [np.sum(l1_debiased(part[:, None, None] * g + noise, sd) @ w >= statistic,
                         axis=1) for part in np.split(lam, range(step, lam.size, step))]
        return np.concatenate(counts) >= need

    grid = np.linspace(0.0, reach, steps + 1)
    ok = np.flatnonzero(holds(grid))
    if ok.size == 0:
        return float(reach * np.sum(w * np.abs(g)))
    if ok[0] == 0:
        return 0.0
    lo, hi = float(grid[ok[0] - 1]), float(grid[ok[0]])
    for _ in range(40):
        mid = 0.5 * (lo + hi)
        if holds(np.array([mid]))[0]:
            hi = mid
        else:
            lo = mid
    return float(hi * np.sum(w * np.abs(g)))


def calibration_interval(interval: str, statistic: float, plugin: float, se: float,
                         boot: np.ndarray, bins: tuple[np.ndarray, np.ndarray, np.ndarray],
                         confidence_level: float, rng: np.random.Generator, *,
                         l1_se: float | None = None) -> tuple[float, float, str]:
    r""":func:`calibration_error`'s interval, and which was used, from the debiased
    replicates and their standard errors ``boot`` (``(B, 2)``) and, for ``'profile'``,
    the bins' ``(weights, gaps, variances)``:

    * ``'bootstrap-t'``: :func:`studentized_interval` around the plug-in;
    * ``'profile'``, squared l2 (``l1_se`` None): the same, its upper end raised to
      :func:`profile_upper_bound` (with ``B`` standard normal draws per bin from
      ``rng``) where that is higher;
    * ``'profile'``, l1 (``l1_se`` the standard error of the linear statistic
      :math:`\sum_k w_k \operatorname{sign}(\hat g_k) \hat g_k`): the bootstrap-t's
      lower end lowered to :func:`l1_profile_lower_bound` (the same draws) where that
      is lower, and the upper end ``plugin + z * l1_se``;
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
        if l1_se is not None:
            bound = l1_profile_lower_bound(weights, gaps, variances, statistic,
                                           confidence_level, normals)
            if not math.isnan(bound):  # NaN: no bin's frequency varies
                low = min(low, bound)
            high = plugin + float(ndtri(0.5 + confidence_level / 2.0)) * l1_se
            return float(low), float(high), interval
        bound = profile_upper_bound(weights, gaps, variances, statistic, confidence_level,
                                    normals)
        if not math.isnan(bound):  # NaN: no bin's frequency varies
            high = max(high, bound)
    return float(low), float(high), interval
