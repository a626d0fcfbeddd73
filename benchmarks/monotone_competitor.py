"""The simple competitor of the monotone-choice test: adjacent belief values compared
by their context-clustered shares, Bonferroni over the comparisons.

For each action pair, the distinct belief values of the pair's rows are taken in
order; for every two adjacent values (each with rows from at least two contexts)
the one-sided z statistic of a fall, ``(s_low - s_high) / se``, with ``se`` the
cluster-robust (contexts) standard error of the difference of the two shares; the
pair's p-value is the smallest normal p-value times the number of comparisons, and
the study's is the smallest pair p-value times the number of pairs.

``floor=False`` is the competitor as first written: a value whose rows all chose one
action has zero variance, and a small difference next to it becomes a certain
fall (invalid on heaped beliefs). ``floor=True`` is the simplest valid version: the
variance is at least the binomial variance of the difference at the pooled share
with contexts as units.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
from scipy import stats

__all__ = ["adjacent_bonferroni"]

PAIRS = (("yes", "no"), ("yes", "defer"), ("defer", "no"))


def _cluster_var(x: np.ndarray, m: np.ndarray, total_m: float, share: float) -> float:
    """Cluster-robust variance of a ratio share: sum over contexts of the squared
    residual totals, with the small-sample factor G / (G - 1)."""
    g = len(x)
    resid = (x - share * m) / total_m
    return float(np.sum(resid ** 2)) * (g / (g - 1.0) if g > 1 else 1.0)


def _pair_pvalue(belief: np.ndarray, first: np.ndarray, groups: np.ndarray,
                 floor: bool) -> float:
    values = np.unique(belief)
    z_best, n_comp = -math.inf, 0
    sums = []
    for v in values:
        rows = belief == v
        ctx, inv = np.unique(groups[rows], return_inverse=True)
        x = np.bincount(inv.ravel(), weights=first[rows])
        m = np.bincount(inv.ravel()).astype(float)
        sums.append((x, m, len(ctx)))
    for (xa, ma, ga), (xb, mb, gb) in itertools.pairwise(sums):
        if ga < 2 or gb < 2:
            continue
        n_comp += 1
        sa, sb = xa.sum() / ma.sum(), xb.sum() / mb.sum()
        var = _cluster_var(xa, ma, ma.sum(), sa) + _cluster_var(xb, mb, mb.sum(), sb)
        if floor:
            pooled = (xa.sum() + xb.sum() + 0.5) / (ma.sum() + mb.sum() + 1.0)
            var = max(var, pooled * (1 - pooled) * (1.0 / ga + 1.0 / gb))
        z = (math.inf if sa > sb else 0.0) if var <= 0 else (sa - sb) / math.sqrt(var)
        z_best = max(z_best, z)
    if n_comp == 0:
        return math.nan
    return min(1.0, float(stats.norm.sf(z_best)) * n_comp)


def adjacent_bonferroni(data: pd.DataFrame, *, floor: bool = True) -> float:
    """The study's p-value (see the module docstring)."""
    belief = data["belief"].to_numpy(dtype=np.float64)
    action = data["action"].astype(str).to_numpy()
    groups = pd.factorize(data["context"])[0]
    pvalues = []
    for a1, a2 in PAIRS:
        keep = (action == a1) | (action == a2)
        p = _pair_pvalue(belief[keep], (action[keep] == a1).astype(float), groups[keep], floor)
        if not math.isnan(p):
            pvalues.append(p)
    return min(1.0, min(pvalues) * len(pvalues)) if pvalues else math.nan
