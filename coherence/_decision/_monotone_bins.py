"""The reference paper's procedure of :func:`coherence.monotonicity_test` for one action
pair: quantile bins of the belief, the share of the first action per bin, and the
one-sided Fisher test of every pair of bins whose shares fall (see the Notes of
:func:`coherence.monotonicity_test`)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

from ._monotone_isotonic import quantile_bins

__all__ = ["ALPHA", "BIN_COLUMNS", "COMPARISON_COLUMNS", "adjust", "fisher_one_sided",
           "paper_comparisons"]

ALPHA = 0.05
BIN_COLUMNS: tuple[str, ...] = (
    "pair", "bin", "belief_low", "belief_high", "centre", "n_action_1", "n_action_2", "share",
)
COMPARISON_COLUMNS: tuple[str, ...] = (
    "pair", "bin_low", "bin_high", "share_low", "share_high", "flagged", "pvalue",
    "pvalue_adjusted", "significant",
)


def fisher_one_sided(x1: int, n1: int, x2: int, n2: int) -> float:
    """P-value of 'the share in the lower bin exceeds the share in the upper bin'."""
    table = np.array([[x1, n1 - x1], [x2, n2 - x2]])
    return float(stats.fisher_exact(table, alternative="greater").pvalue)


def adjust(p: np.ndarray, how: str) -> np.ndarray:
    """P-values adjusted for multiplicity by ``how`` (``'none'``: a copy)."""
    if how == "none" or len(p) == 0:
        return p.copy()
    from .._multiplicity import adjust_pvalues

    return adjust_pvalues(p, how)


def paper_comparisons(belief: np.ndarray, is_first: np.ndarray, n_bins: int,
                      p_adjust: str, name: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The paper's procedure for one pair: quantile bins and Fisher-flagged comparisons."""
    if len(belief) == 0:
        return (pd.DataFrame({c: [] for c in BIN_COLUMNS}),
                pd.DataFrame({c: [] for c in COMPARISON_COLUMNS}))
    codes, _ = quantile_bins(belief, n_bins)
    k = int(codes.max()) + 1
    m = np.bincount(codes, minlength=k)
    x = np.bincount(codes, weights=is_first, minlength=k).astype(np.int64)
    centre = np.bincount(codes, weights=belief, minlength=k) / np.maximum(m, 1)
    share = x / np.maximum(m, 1)
    low = np.array([belief[codes == j].min() for j in range(k)])
    high = np.array([belief[codes == j].max() for j in range(k)])
    bins = pd.DataFrame({
        "pair": name, "bin": np.arange(k), "belief_low": low, "belief_high": high,
        "centre": centre, "n_action_1": x, "n_action_2": m - x, "share": share,
    })
    # one action never chosen: a share of 0 or 1 in every bin, nothing to compare (its
    # comparisons, never flagged, would dilute the pooled violation percentage)
    lo_idx, hi_idx = np.triu_indices(0 if is_first.min() == is_first.max() else k, 1)
    flagged = share[lo_idx] > share[hi_idx]
    pvals = np.full(len(lo_idx), np.nan)
    for j in np.flatnonzero(flagged):
        a, b = lo_idx[j], hi_idx[j]
        pvals[j] = fisher_one_sided(int(x[a]), int(m[a]), int(x[b]), int(m[b]))
    adjusted = np.full(len(lo_idx), np.nan)
    adjusted[flagged] = adjust(pvals[flagged], p_adjust)
    significant = flagged & (np.nan_to_num(adjusted, nan=1.0) < ALPHA)
    comparisons = pd.DataFrame({
        "pair": name, "bin_low": lo_idx, "bin_high": hi_idx, "share_low": share[lo_idx],
        "share_high": share[hi_idx], "flagged": flagged, "pvalue": pvals,
        "pvalue_adjusted": adjusted, "significant": significant,
    })
    return bins, comparisons
