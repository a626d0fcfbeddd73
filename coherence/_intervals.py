"""Closed-form intervals and tests shared by the checks, each written once over scipy.

* :func:`wilson_interval`: Wilson score interval of a share (``scipy.stats.binomtest``);
* :func:`ttest_pvalue`: one-sample t-test p-value of mean 0 (``scipy.stats.ttest_1samp``);
* :func:`normal_interval`: mean +- z SE (``scipy.stats.norm.interval``).

Resampling intervals (percentile, cluster bootstrap) live in :mod:`coherence._resampling`.
"""

from __future__ import annotations

import math

import numpy as np

from ._results import ConfidenceInterval

__all__ = [
    "FLAT_SD",
    "is_flat",
    "normal_interval",
    "ttest_pvalue",
    "wilson_interval",
]

#: Values whose standard deviation is below this are treated as all equal (floating-point
#: noise); a t statistic is then undefined.
FLAT_SD = 1e-12


def is_flat(x: np.ndarray) -> bool:
    """Fewer than 2 values, or all equal up to :data:`FLAT_SD`."""
    return x.size < 2 or float(x.std(ddof=1)) <= FLAT_SD


def wilson_interval(k: int, n: int, confidence_level: float = 0.95) -> ConfidenceInterval:
    """Wilson score interval for a share k / n (NaN when n = 0)."""
    if n == 0:
        return ConfidenceInterval(np.nan, np.nan, confidence_level)
    from scipy.stats import binomtest

    ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=confidence_level,
                                                 method="wilson")
    return ConfidenceInterval(float(ci.low), float(ci.high), confidence_level)


def ttest_pvalue(x: np.ndarray, alternative: str = "two-sided") -> float:
    """One-sample t-test of mean 0 (``alternative`` as in ``scipy.stats.ttest_1samp``);
    NaN when undefined (:func:`is_flat`)."""
    if is_flat(x):
        return float("nan")
    from scipy.stats import ttest_1samp

    return float(ttest_1samp(x, 0.0, alternative=alternative).pvalue)


def normal_interval(x: np.ndarray, confidence_level: float) -> tuple[float, float, float]:
    """(sd, low, high) of the normal interval mean +- z SE; NaN for fewer than 2 values."""
    if x.size < 2:
        return (np.nan, np.nan, np.nan)
    from scipy.stats import norm

    sd = float(x.std(ddof=1))
    if sd == 0.0:  # all equal: the point (scipy rejects scale 0)
        return sd, float(x.mean()), float(x.mean())
    low, high = norm.interval(confidence_level, loc=float(x.mean()), scale=sd / math.sqrt(x.size))
    return sd, float(low), float(high)
