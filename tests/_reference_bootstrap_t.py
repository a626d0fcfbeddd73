"""By loops: the cluster bootstrap-t interval of a mean score (the cluster-robust
standard error, the sample's where a resample's is 0), for forecast_scores' and
brier_decomposition's intervals, and with Student's small-sample factor for the log
score's and consistency_check's."""

from __future__ import annotations

import math

import numpy as np
from scipy import stats


def bootstrap_t_by_loops(values: np.ndarray, units: np.ndarray, draws: np.ndarray,
                          level: float) -> tuple[float, float]:
    """The documented interval: pivots (mean* - mean) / se* with the cluster-robust se
    (the sample's where a resample's is 0), by loops over the drawn clusters."""
    labels = sorted(set(units))
    members = [values[units == u] for u in labels]
    c = len(labels)

    def mean_se(picked: list[int]) -> tuple[float, float]:
        stacked = np.concatenate([members[k] for k in picked])
        xbar = stacked.mean()
        ss = sum((members[k].sum() - len(members[k]) * xbar) ** 2 for k in picked)
        scale = sum(members[k].sum() ** 2 + (len(members[k]) * xbar) ** 2 for k in picked)
        if ss <= 1e-12 * scale:  # copies of one cluster: 0, not a rounding residue
            ss = 0.0
        return xbar, float(np.sqrt(c / (c - 1) * ss / len(stacked) ** 2))

    mean, se = mean_se(list(range(c)))
    pivots = []
    for row in draws:
        m_b, se_b = mean_se(list(row))
        pivots.append((m_b - mean) / (se_b if se_b > 0 else se))
    lo_q, hi_q = np.quantile(pivots, [(1 - level) / 2, (1 + level) / 2])
    return mean - hi_q * se, mean - lo_q * se


def heavy_tailed_by_loops(values: np.ndarray, units: np.ndarray, draws: np.ndarray, level: float,
             bounds: tuple[float, float]) -> tuple[float, float]:
    """The documented interval by loops: the bootstrap-t interval about the mean, its
    distances from the mean times sqrt(C / (C - 1)) t_{nu, 1 - alpha/2} / z_{1 - alpha/2},
    nu = 2C / (k - (C - 3) / (C - 1)) between 1 and C - 1 for the kurtosis k of the
    clusters' residuals S_c - m_c mean (scipy's, uncorrected); cut at ``bounds``."""
    lo, hi = bootstrap_t_by_loops(values, units, draws, level)
    labels = sorted(set(units))
    c, mean = len(labels), float(values.mean())
    resid = np.array([values[units == u].sum() - (units == u).sum() * mean for u in labels])
    # the kurtosis does not depend on the scale: residuals of 1e-150 (fourth powers
    # underflow) taken relative to the largest
    kurt = stats.kurtosis(resid / np.max(np.abs(resid)), fisher=False, bias=True)
    nu = min(max(2 * c / (kurt - (c - 3) / (c - 1)), 1.0), c - 1.0)
    tail = 1 - (1 - level) / 2
    f = math.sqrt(c / (c - 1)) * stats.t.ppf(tail, nu) / stats.norm.ppf(tail)
    return max(mean - f * (mean - lo), bounds[0]), min(mean + f * (hi - mean), bounds[1])


def fraction_interval_by_hand(values: np.ndarray, units: np.ndarray,
                              level: float) -> tuple[float, float]:
    """The documented interval of a mean of fractions, by loops and statsmodels: Wilson's
    score interval at n = mean(1 - mean) / se^2 (the cluster-robust se over ``units``;
    the number of units where the mean is 0 or 1 or se is 0), its normal quantile
    replaced by Student's t on Satterthwaite's degrees of freedom: 2C / (k - (C - 3) /
    (C - 1)) for the kurtosis k of the units' residuals (scipy's, uncorrected), between 1
    and C - 1; C - 1 (at least 1) where se is 0. NaN values are left out."""
    from scipy.stats import kurtosis
    from scipy.stats import norm
    from scipy.stats import t as student_t
    from statsmodels.stats.proportion import proportion_confint

    keep = ~np.isnan(values)
    values, units = values[keep], np.asarray(units, dtype=object)[keep]
    labels = sorted(set(units))
    c, n, mean = len(labels), len(values), float(values.mean())
    sums = [float(values[units == u].sum()) for u in labels]
    sizes = [int((units == u).sum()) for u in labels]
    ss = sum((s - k * mean) ** 2 for s, k in zip(sums, sizes, strict=True))
    scale = sum(s * s + (k * mean) ** 2 for s, k in zip(sums, sizes, strict=True))
    se = np.sqrt(c / (c - 1) * (ss if ss > 1e-12 * scale else 0.0) / n**2) if c > 1 else 0.0
    n_eff = mean * (1 - mean) / se**2 if se > 0 and 0 < mean < 1 else float(c)
    df = float(max(c - 1, 1))
    if se > 0:
        resid = np.array([s - k * mean for s, k in zip(sums, sizes, strict=True)])
        # scale-free: residuals of 1e-98 (fourth powers underflow) relative to the largest
        k4 = float(kurtosis(resid / np.max(np.abs(resid)), fisher=False, bias=True))
        df = min(max(2 * c / (k4 - (c - 3) / (c - 1)), 1.0), c - 1.0)
    q = student_t.ppf((1 + level) / 2, df)
    with np.errstate(invalid="ignore", divide="ignore"):  # statsmodels' own 0/0 at 0 or 1
        low, high = proportion_confint(mean * n_eff, n_eff, alpha=2 * norm.sf(q),
                                       method="wilson")
    return float(low), float(high)
