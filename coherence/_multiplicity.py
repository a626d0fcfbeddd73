"""Multiplicity adjustment of a family of p-values (Holm, Benjamini-Hochberg), shared
by the report and the command line."""

from __future__ import annotations

import numpy as np

__all__ = ["ADJUST_METHODS", "adjust_label", "adjust_pvalues", "benjamini_hochberg", "holm"]

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
    out[finite] = (holm if adjust == "holm" else benjamini_hochberg)(p[finite])
    return out


def holm(p: np.ndarray) -> np.ndarray:
    r"""Holm's step-down adjusted p-values: with :math:`p_{(1)} \le \dots \le p_{(m)}`,
    :math:`\tilde p_{(i)} = \max_{j \le i} \min(1, (m - j + 1) p_{(j)})`.

    Written here rather than taken from statsmodels (equal to its ``multipletests``
    to rounding, tested): importing statsmodels costs seconds, and the report adjusts
    on every call.
    """
    p = np.asarray(p, dtype=np.float64)
    m = len(p)
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    stepped = np.minimum(1.0, (m - np.arange(m)) * p[order])
    out = np.empty(m)
    out[order] = np.maximum.accumulate(stepped)
    return out


def benjamini_hochberg(p: np.ndarray) -> np.ndarray:
    r"""Benjamini and Hochberg's adjusted p-values (false discovery rate):
    :math:`\tilde p_{(i)} = \min_{j \ge i} \min(1, m\, p_{(j)} / j)`."""
    p = np.asarray(p, dtype=np.float64)
    m = len(p)
    if m == 0:
        return p.copy()
    order = np.argsort(p, kind="stable")
    scaled = np.minimum(1.0, m * p[order] / np.arange(1, m + 1))
    out = np.empty(m)
    out[order] = np.minimum.accumulate(scaled[::-1])[::-1]
    return out


def adjust_label(adjust: str) -> str:
    """How the p-values were adjusted, in words."""
    return {"holm": "Holm-adjusted", "bh": "Benjamini-Hochberg-adjusted",
            "none": "unadjusted"}.get(adjust, str(adjust))
