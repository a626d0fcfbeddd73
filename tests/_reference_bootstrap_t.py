"""By loops: the cluster bootstrap-t interval of a mean score (the cluster-robust
standard error, the sample's where a resample's is 0), for forecast_scores' and
brier_decomposition's intervals."""

from __future__ import annotations

import numpy as np


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
