"""Brute-force reference of the skew-corrected sign-flip test
(:mod:`coherence._skewflip`): the statistic from each flipped vector's values by
two-pass moments, one vector at a time."""

from __future__ import annotations

import itertools
import math
from collections.abc import Iterable

import numpy as np

from coherence._resampling import MC_TIE_RTOL


def hall_t(values: np.ndarray) -> float:
    """|sqrt(C) (U + g U^2 / 3 + g^2 U^3 / 27 + g / (6C))| of the values, U = mean / sd,
    g their skewness (divisor C); inf for equal nonzero values, 0 for all zeros."""
    c = values.size
    largest = float(np.max(np.abs(values)))
    if largest == 0.0:
        return 0.0
    values = values / largest  # the statistic does not depend on the scale
    mean = float(values.mean())
    centred = values - mean
    var = float(np.mean(centred**2))
    if var <= 1e-12 * float(np.mean(values**2)):
        return math.inf if np.any(values != 0) else 0.0
    u = mean / math.sqrt(var)
    g = float(np.mean(centred**3)) / var**1.5
    return abs(math.sqrt(c) * (u + g * u**2 / 3 + g**2 * u**3 / 27 + g / (6 * c)))


def hall_pvalue(sums: np.ndarray, sizes: np.ndarray, delta: float,
                signs: Iterable[np.ndarray] | None = None) -> float:
    """Share of all 2^C sign vectors (``signs`` None) whose statistic of s (D - delta m)
    is at least the observed one, or (1 + count) / (1 + B) over the given vectors."""
    e = sums - delta * sizes
    observed = hall_t(e)
    bound = observed if math.isinf(observed) else observed - MC_TIE_RTOL * max(1.0, observed)
    if signs is None:
        every = [np.array(s) for s in itertools.product((1.0, -1.0), repeat=e.size)]
        return sum(hall_t(s * e) >= bound for s in every) / len(every)
    drawn = list(signs)
    return (1 + sum(hall_t(s * e) >= bound for s in drawn)) / (1 + len(drawn))
