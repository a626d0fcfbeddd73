"""Brute-force reference of the random tie rule of
:func:`coherence._resampling.monte_carlo_pvalue`: every p-value the rule can give, one
per place the data's statistic can take among the resamples that tie it, counted one
resample at a time."""

from __future__ import annotations

import math

from coherence._resampling import MC_TIE_RTOL


def tie_ranks(null, observed: float) -> list[float]:
    """The data's possible ranks over ``1 + B`` (NaN resamples left out), lowest first:
    the first is every tie placed below the data, the last the counting rule's p-value."""
    kept = [float(t) for t in null if not math.isnan(t)]
    tol = MC_TIE_RTOL * max(1.0, abs(observed))
    above = sum(1 for t in kept if t > observed + tol)
    tied = sum(1 for t in kept if abs(t - observed) <= tol)
    return [(1 + above + j) / (1 + len(kept)) for j in range(tied + 1)]
