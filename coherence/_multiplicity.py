"""Multiplicity adjustment of a family of p-values (Holm, Benjamini-Hochberg), shared
by the report and the command line."""

from __future__ import annotations

import numpy as np

__all__ = ["ADJUST_METHODS", "adjust_label", "adjust_pvalues"]

#: Values of ``report(adjust=...)``.
ADJUST_METHODS: tuple[str, ...] = ("holm", "bh", "none")


def adjust_pvalues(pvalues: np.ndarray, adjust: str) -> np.ndarray:
    """P-values adjusted for multiplicity across every finite entry of ``pvalues``.

    ``adjust`` is ``"holm"`` (Holm's step-down, family-wise error), ``"bh"``
    (Benjamini-Hochberg, false discovery rate) or ``"none"``; NaN entries (tests
    with no p-value, tests that failed) stay NaN and do not count in the family.

    Examples
    --------
    >>> adjust_pvalues(np.array([0.01, 0.04, np.nan, 0.03]), "holm").round(3)
    array([0.03, 0.06,  nan, 0.06])
    >>> adjust_pvalues(np.array([0.01, 0.04, np.nan, 0.03]), "bh").round(3)
    array([0.03, 0.04,  nan, 0.04])
    """
    p = np.asarray(pvalues, dtype=np.float64)
    out = p.copy()
    finite = np.isfinite(p)
    if adjust == "none" or not finite.any():
        return out
    from statsmodels.stats.multitest import multipletests

    method = {"holm": "holm", "bh": "fdr_bh"}[adjust]
    out[finite] = multipletests(p[finite], method=method)[1]
    return out


def adjust_label(adjust: str) -> str:
    """How the p-values were adjusted, in words."""
    return {"holm": "Holm-adjusted", "bh": "Benjamini-Hochberg-adjusted",
            "none": "unadjusted"}.get(adjust, str(adjust))
