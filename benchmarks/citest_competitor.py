"""The simple competitor of :func:`coherence.ci_test`: outcomes permuted among the
contexts of one belief stratum, a chi-square statistic of the actions against the
outcome summed over strata.

A context is the unit (its repetitions share one outcome). Its stratum is its mean
stated belief, taken as it is when the study has at most ``2 * bins`` distinct values
(a grid), else one of ``bins`` quantile bins; with ``evidence`` constant within a
context, the stratum is also split by the evidence. Within stratum ``s``, with
``n_sj`` the rows choosing action ``j`` and ``n1_sj`` those of contexts whose outcome is
1, ``r_s`` the share of the stratum's rows in such contexts, the statistic is

    sum_s sum_j (n1_sj - r_s n_sj)^2 / (r_s (1 - r_s) n_sj)

(Cochran-Mantel-Haenszel's per-action comparison, strata of one context and actions
no one in the stratum chose left out). Its p-value is ``(1 + #{T* >= T}) / (B + 1)`` over
``B`` draws that permute the outcomes among the contexts of each stratum; with
``break_ties=True``, the data's rank among the draws with its ties broken at random, as
:func:`coherence.ci_test` reports it (``(1 + #{T* > T} + K) / (B + 1)``, ``K`` uniform on
``0..#{T* = T}``), so that neither side of a comparison is conservative where the other
is not. Under the
null the outcome is exchangeable among contexts of one belief, so the test is valid
where the strata are exact (a grid of beliefs constant within a context) and nearly so
where a bin mixes close beliefs.

A continuous (float) evidence column has no levels to split by: with
``evidence_bins=m`` the context's mean evidence is cut into ``m`` quantile bins, and the
stratum is (belief bin, evidence bin). A bin then mixes close evidence values as it
mixes close beliefs: the test is nearly valid where the bins are narrow against the
evidence's effects.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from coherence._resampling import monte_carlo_pvalue

__all__ = ["quantile_codes", "strata_permutation_pvalue"]


def quantile_codes(values: np.ndarray, bins: int) -> np.ndarray:
    """Codes 0..bins-1 of ``bins`` quantile bins of ``values`` (ties stay together)."""
    edges = np.quantile(values, np.linspace(0.0, 1.0, bins + 1)[1:-1])
    out: np.ndarray = np.searchsorted(edges, values, side="right")
    return out


def _strata(mean_belief: np.ndarray, evidence: np.ndarray | None, bins: int) -> np.ndarray:
    values = np.round(mean_belief, 9)
    if np.unique(values).size <= 2 * bins:
        codes = np.unique(values, return_inverse=True)[1]
    else:
        codes = quantile_codes(values, bins)
    if evidence is not None:
        codes = np.unique(np.c_[codes, evidence], axis=0, return_inverse=True)[1].ravel()
    out: np.ndarray = codes
    return out


def _statistic(ones: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The stratum's statistic for each row of ``ones`` (B, m): which of its m contexts
    have outcome 1 in each draw; ``counts`` (m, J) the contexts' action counts."""
    n = counts.sum(axis=0)                               # an action no one chose adds 0
    n1 = ones @ counts                                   # (B, J)
    r = n1.sum(axis=1, keepdims=True) / n.sum()          # share of rows with outcome 1
    var = r * (1.0 - r) * n
    with np.errstate(invalid="ignore", divide="ignore"):
        t = np.where(var > 0, (n1 - r * n) ** 2 / var, 0.0)
    out: np.ndarray = t.sum(axis=1)
    return out


def _g_statistic(ones: np.ndarray, counts: np.ndarray) -> np.ndarray:
    """The stratum's likelihood-ratio statistic G = 2 sum n log(n / expected) over the
    actions and the two outcomes (2 N times the stratum's plug-in CMI), per draw."""
    n = counts.sum(axis=0)                               # an action no one chose adds 0
    n1 = ones @ counts
    n0 = n - n1
    total = n.sum()
    e1 = n1.sum(axis=1, keepdims=True) * n / total
    e0 = n0.sum(axis=1, keepdims=True) * n / total
    with np.errstate(invalid="ignore", divide="ignore"):
        g = (np.where(n1 > 0, n1 * np.log(n1 / e1), 0.0).sum(axis=1)
             + np.where(n0 > 0, n0 * np.log(n0 / e0), 0.0).sum(axis=1))
    out: np.ndarray = 2.0 * g
    return out


STATISTICS = {"chi2": _statistic, "g": _g_statistic}


def strata_permutation_pvalue(data: pd.DataFrame, *, n_resamples: int = 199, bins: int = 20,
                              rng: np.random.Generator | int | None = None,
                              evidence: str | None = None, statistic: str = "chi2",
                              evidence_bins: int | None = None,
                              break_ties: bool = False) -> float:
    """The competitor's p-value for a study (columns ``context, belief, action,
    outcome``, and ``evidence`` when named); see the module's docstring. ``statistic="g"``
    sums the likelihood-ratio G (a plug-in CMI) over strata instead of the chi-square,
    on the same permutations: what separates the statistic from the estimator.
    ``evidence_bins``: cut the context's mean of a continuous ``evidence`` into that many
    quantile bins (None: the evidence's own levels, constant within a context)."""
    stat = STATISTICS[statistic]
    gen = np.random.default_rng(rng)
    codes = np.unique(data["context"].to_numpy(), return_inverse=True)[1]
    n_ctx = int(codes.max()) + 1
    actions = np.unique(data["action"].to_numpy(), return_inverse=True)[1]
    counts = np.zeros((n_ctx, int(actions.max()) + 1))
    np.add.at(counts, (codes, actions), 1.0)
    y = np.zeros(n_ctx)
    y[codes] = data["outcome"].to_numpy(dtype=float)
    def context_mean(column: str) -> np.ndarray:
        out: np.ndarray = (np.bincount(codes, weights=data[column].to_numpy(dtype=float))
                           / np.bincount(codes))
        return out

    mean_belief = context_mean("belief")
    ev = None
    if evidence is not None and evidence_bins is not None:
        ev = quantile_codes(context_mean(evidence), evidence_bins)
    elif evidence is not None:
        ev = np.zeros(n_ctx, dtype=np.int64)
        ev[codes] = np.unique(data[evidence].to_numpy(), return_inverse=True)[1]
    strata = _strata(mean_belief, ev, bins)
    observed = 0.0
    draws = np.zeros(n_resamples)
    for s in np.unique(strata):
        members = np.flatnonzero(strata == s)
        if members.size < 2:
            continue
        observed += float(stat(y[members][None, :], counts[members])[0])
        keys = gen.random((n_resamples, members.size))
        shuffled = y[members][np.argsort(keys, axis=1)]
        draws += stat(shuffled, counts[members])
    # the statistic is a sum of squares (>= 0): the tie rule of monte_carlo_pvalue is
    # observed - 1e-9 max(observed, 1), as it always was here
    return monte_carlo_pvalue(draws, observed, break_ties=gen if break_ties else None)
