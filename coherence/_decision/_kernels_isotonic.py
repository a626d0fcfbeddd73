"""Numba kernels of the monotonicity test's isotonic likelihood-ratio null:
pool-adjacent-violators and the per-row binomial likelihood ratio.

Arrays in, arrays out; the public layer in ``_monotone.py`` validates once.
"""

from __future__ import annotations

import numpy as np
from numba import njit

__all__ = ["isotonic_lr_rows", "pava"]

@njit(cache=True)
def pava(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted non-decreasing isotonic regression of ``y`` (pool adjacent violators).

    A stack of blocks (weighted mean, weight, length); each new point is pushed and
    merged with the block below while that block's mean is not smaller. Equal to
    :func:`sklearn.isotonic.isotonic_regression` up to rounding (the means are summed
    in another order; ``tests/decision/test_monotone.py`` checks 1e-12).
    """
    n = len(y)
    mean = np.empty(n)
    weight = np.empty(n)
    length = np.empty(n, dtype=np.int64)
    top = -1
    for i in range(n):
        top += 1
        mean[top] = y[i]
        weight[top] = w[i]
        length[top] = 1
        while top > 0 and mean[top - 1] >= mean[top]:
            total = weight[top - 1] + weight[top]
            mean[top - 1] = (weight[top - 1] * mean[top - 1] + weight[top] * mean[top]) / total
            weight[top - 1] = total
            length[top - 1] += length[top]
            top -= 1
    out = np.empty(n)
    k = 0
    for b in range(top + 1):
        for _ in range(length[b]):
            out[k] = mean[b]
            k += 1
    return out


@njit(cache=True)
def _binom_loglik(x: float, m: float, p: float) -> float:
    out = 0.0
    if x > 0.0:
        out += x * np.log(p)
    if m - x > 0.0:
        out += (m - x) * np.log1p(-p)
    return out


@njit(cache=True)
def isotonic_lr_rows(xs: np.ndarray, m: np.ndarray) -> np.ndarray:
    """The isotonic likelihood-ratio statistic of each row of successes ``xs`` (b, V)
    out of the trials ``m`` (V,), all positive: 0 when the shares are non-decreasing,
    else ``2 sum_k [l(x_k; x_k/m_k) - l(x_k; p_iso_k)]`` (values within 1e-10 of 0
    clipped at 0, as :func:`coherence._decision._monotone.isotonic_lr`)."""
    b, v = xs.shape
    out = np.empty(b)
    share = np.empty(v)
    for r in range(b):
        monotone = True
        for k in range(v):
            share[k] = xs[r, k] / m[k]
            if k > 0 and share[k] < share[k - 1]:
                monotone = False
        if monotone:
            out[r] = 0.0
            continue
        iso = pava(share, m)
        value = 0.0
        for k in range(v):
            value += _binom_loglik(xs[r, k], m[k], share[k]) - _binom_loglik(xs[r, k], m[k],
                                                                             iso[k])
        value *= 2.0
        out[r] = max(value, 0.0) if abs(value) < 1e-10 else value
    return out
