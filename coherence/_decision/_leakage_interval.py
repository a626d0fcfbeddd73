"""The leakage test's interval: the context bootstrap widened for the random folds.

:func:`coherence.leakage_test` keeps one fold assignment's out-of-fold losses and
resamples contexts; the statistic also moves with the folds. These two pure functions
estimate the part of that fold variance which the bootstrap cannot see (the covariance
between contexts that share a fold's fitted model) and add it to the percentile
interval. See the Notes of :func:`coherence.leakage_test` and docs/leakage.md.
"""

from __future__ import annotations

import math

import numpy as np
from scipy import stats

from .._resampling import percentile_interval

__all__ = ["between_context_fold_variance", "widened_interval"]


def between_context_fold_variance(sum_base: np.ndarray, sum_full: np.ndarray) -> float:
    """The part of the statistic's variance over fold draws that a context bootstrap
    cannot see: the covariances between contexts.

    ``sum_base`` and ``sum_full`` are (draws, contexts) per-context out-of-fold loss sums,
    one row per fold assignment of the same data. The statistic is linearised at the
    draws' mean totals ``B``, ``F``: context ``g`` contributes ``psi_g = 100 (F/B
    sum_base_g - sum_full_g) / B``. Over the draws, the variance of ``sum_g psi_g`` is the
    sum of every context's own variance, which the bootstrap sees (it resamples the
    contexts' values, noise and all), and of the covariances between contexts (all the
    contexts of a fold share its fitted model), which it does not. Returns the second
    part, ``var(sum_g psi_g) - sum_g var(psi_g)`` (sample variances), at least 0.
    """
    if sum_base.shape[0] < 2:
        return 0.0
    total_base = sum_base.sum(axis=1).mean()
    total_full = sum_full.sum(axis=1).mean()
    psi = (100.0 / total_base) * ((total_full / total_base) * sum_base - sum_full)
    own = float(np.var(psi, axis=0, ddof=1).sum())
    return max(float(np.var(psi.sum(axis=1), ddof=1)) - own, 0.0)


def widened_interval(statistic: float, boot: np.ndarray, extra_variance: float,
                     confidence_level: float) -> tuple[float, float]:
    """The bootstrap percentile interval with ``extra_variance`` added on each side.

    Each end's distance ``h`` from the statistic becomes ``sqrt(h**2 + z**2 v)`` for
    the normal quantile ``z`` of the level and ``v = extra_variance``: the variance of
    a part of the statistic's randomness that the bootstrap holds fixed, added to the
    bootstrap's (whose ends are ``z`` of its standard deviations away when it is
    normal). ``extra_variance = 0`` gives the percentile interval unchanged.
    """
    low, high = percentile_interval(boot, confidence_level)
    if not extra_variance > 0.0 or not np.isfinite(statistic):
        return low, high
    zv = stats.norm.ppf(0.5 + confidence_level / 2.0) ** 2 * extra_variance
    h_low, h_high = max(statistic - low, 0.0), max(high - statistic, 0.0)
    return (statistic - math.sqrt(h_low**2 + zv), statistic + math.sqrt(h_high**2 + zv))
