"""Monotone pairwise choice probabilities (decision coherence, method 1).

A rational random-utility agent choosing between two actions ``a1`` and ``a2``
picks ``a1`` more often the more the belief favours it: the share
``P(a1 | belief, a in {a1, a2})`` is monotone in the belief. The paper's
procedure bins the belief into quantile bins, flags every pair of bins whose
share goes the wrong way and tests each flagged pair with a one-sided Fisher
exact test. We add one calibrated global test per action pair: an
isotonic-regression likelihood-ratio statistic with a parametric-bootstrap
null.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar, Literal

import numpy as np
import pandas as pd
from scipy import stats

from .._resampling import monte_carlo_pvalue
from .._results import CoherenceResult, ConfidenceInterval, Summary
from .._rng import RNGLike, check_rng
from .._validation import (
    as_dataframe,
    check_choice,
    check_int,
    label_column,
    param_error,
    probability_column,
    require_columns,
)
from .._warnings import DegenerateDataWarning, SmallSampleWarning, TiesWarning

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["MonotonicityResult", "monotonicity_test", "plot_choice_shares"]

_OWNER = "monotonicity_test"
ALPHA = 0.05
DEFAULT_PAIRS: tuple[tuple[str, str], ...] = (("yes", "no"), ("yes", "defer"), ("defer", "no"))
PAIR_COLUMNS: tuple[str, ...] = (
    "pair", "action_1", "action_2", "n_bins", "n_comparisons", "n_flagged", "n_significant",
    "global_statistic",
)
BIN_COLUMNS: tuple[str, ...] = (
    "pair", "bin", "belief_low", "belief_high", "centre", "n_action_1", "n_action_2", "share",
)
COMPARISON_COLUMNS: tuple[str, ...] = (
    "pair", "bin_low", "bin_high", "share_low", "share_high", "flagged", "pvalue",
    "pvalue_adjusted", "significant",
)


@dataclass(frozen=True, slots=True)
class MonotonicityResult(CoherenceResult):
    """Result of :func:`monotonicity_test`.

    Attributes
    ----------
    statistic : float
        Headline: the percentage of all bin-pair comparisons, pooled over the
        action pairs, with a significant violation (the paper's Table 2).
    pvalue : float
        Global p-value across action pairs: the smallest per-pair isotonic
        likelihood-ratio p-value, Bonferroni-adjusted for the number of pairs
        (capped at 1).
    confidence_interval : ConfidenceInterval
        Not computed (NaN, NaN): the violation percentage is a descriptive
        figure; use the p-values for inference.
    n_obs : int
        Rows of ``data`` whose action belongs to at least one tested pair.
    method : str
        ``'fisher+isotonic-lr'``.
    pairs : tuple of (str, str)
        The action pairs tested, in order.
    n_bins : int
        Number of bins requested (bins actually used per pair are in
        :attr:`table`).
    direction : str
        ``'increasing'`` or ``'decreasing'``: the direction the share of the
        first action of each pair should move as the belief grows.
    p_adjust : str
        Multiple-comparison adjustment of the Fisher p-values within each pair.
    n_resamples : int
        Parametric-bootstrap resamples of the global test.
    table : pandas.DataFrame
        One row per action pair (the paper's Table 2): ``pair``, ``action_1``,
        ``action_2``, bins used (``n_bins``), comparisons, flagged and
        significant comparisons, the violation percentage (``statistic``), the
        isotonic LR statistic (``global_statistic``), its p-value (``pvalue``)
        and the rows choosing either action (``n_obs``).
    bin_table : pandas.DataFrame
        One row per pair and bin: belief range, centre (mean belief), counts of
        each action and the share of the first.
    comparison_table : pandas.DataFrame
        One row per pair and bin pair ``bin_low < bin_high``: the shares,
        whether the share goes the wrong way (``flagged``), the one-sided
        Fisher p-value (NaN when not flagged), the adjusted p-value and
        whether it is below 0.05.
    """

    pairs: tuple[tuple[str, str], ...]
    n_bins: int
    direction: str
    p_adjust: str
    n_resamples: int
    table: pd.DataFrame = field(repr=False, compare=False)
    bin_table: pd.DataFrame = field(repr=False, compare=False)
    comparison_table: pd.DataFrame = field(repr=False, compare=False)

    _test_name: ClassVar[str] = "monotonicity_test"
    _extra_columns: ClassVar[tuple[str, ...]] = ("n_bins", "direction", "p_adjust",
                                                 "n_resamples")

    @property
    def pair_table(self) -> pd.DataFrame:
        """Alias of :attr:`table`: one row per action pair."""
        return self.table

    def summary(self) -> Summary:
        """The headline figures followed by the per-pair table."""
        table = self.table[["pair", "n_bins", "n_comparisons", "n_flagged",
                            "n_significant", "statistic", "pvalue"]]
        body = table.to_string(index=False, float_format=lambda x: f"{x:.4g}")
        return CoherenceResult.summary(self).extend(
            "\n" + "\n".join("  " + line for line in body.splitlines()),
            tables=[("per action pair", table)])

    def plot(self, ax: Any = None) -> Any:
        """Shortcut for :func:`plot_choice_shares` (``self``)."""
        return plot_choice_shares(self, ax=ax)


# --------------------------------------------------------------------------- array layer
def quantile_bins(belief: np.ndarray, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Bin codes (0..K-1) and cut points of quantile bins of the belief.

    The cut points are the ``inverted_cdf`` quantiles at levels ``j / n_bins``,
    ``j = 1..n_bins-1`` (observed values), deduplicated; bin ``j`` is
    ``(c_j, c_{j+1}]`` (the first open below, the last open above), so bin
    ``j`` holds at least ``j / n_bins`` of the rows cumulatively. Empty bins
    (possible with heavy ties) are dropped, so fewer than ``n_bins`` bins may
    remain; every bin returned holds at least one row.
    """
    levels = np.arange(1, n_bins) / n_bins
    cuts = np.unique(np.quantile(belief, levels, method="inverted_cdf"))
    raw = np.searchsorted(cuts, belief, side="left")
    _, codes = np.unique(raw, return_inverse=True)
    return codes.astype(np.int64).ravel(), cuts


def _fisher_one_sided(x1: int, n1: int, x2: int, n2: int) -> float:
    """P-value of 'the share in the lower bin exceeds the share in the upper bin'."""
    table = np.array([[x1, n1 - x1], [x2, n2 - x2]])
    return float(stats.fisher_exact(table, alternative="greater").pvalue)


def _adjust(p: np.ndarray, how: str) -> np.ndarray:
    if how == "none" or len(p) == 0:
        return p.copy()
    from statsmodels.stats.multitest import multipletests

    method = "holm" if how == "holm" else "fdr_bh"
    return np.asarray(multipletests(p, alpha=ALPHA, method=method)[1], dtype=np.float64)


def _pava(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted isotonic (non-decreasing) regression by pool-adjacent-violators."""
    from sklearn.isotonic import isotonic_regression

    return np.asarray(isotonic_regression(y, sample_weight=w, increasing=True),
                      dtype=np.float64)


def _binom_loglik(x: np.ndarray, m: np.ndarray, p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(x > 0, x * np.log(p), 0.0)
        b = np.where(m - x > 0, (m - x) * np.log1p(-p), 0.0)
    return a + b


def isotonic_lr(x: np.ndarray, m: np.ndarray) -> float:
    """Likelihood-ratio statistic of 'shares non-decreasing' against 'any shares'.

    ``x[k]`` successes out of ``m[k]`` trials in ordered bin ``k``:
    ``2 * sum_k [l(x_k; x_k/m_k) - l(x_k; p_iso_k)]`` with ``p_iso`` the
    weighted isotonic fit of the shares.
    """
    keep = m > 0
    x, m = x[keep].astype(np.float64), m[keep].astype(np.float64)
    share = x / m
    iso = _pava(share, m)
    value = 2.0 * float(np.sum(_binom_loglik(x, m, share) - _binom_loglik(x, m, iso)))
    return max(value, 0.0) if abs(value) < 1e-10 else value


def isotonic_lr_test(x: np.ndarray, m: np.ndarray, n_resamples: int,
                     rng: np.random.Generator) -> tuple[float, float]:
    """The isotonic LR statistic and its parametric-bootstrap p-value.

    The null is simulated from the isotonic fit: ``x*_k ~ Binomial(m_k,
    p_iso_k)``; ``p = (1 + #{T* >= T}) / (1 + B)``.
    """
    keep = m > 0
    x, m = x[keep], m[keep]
    if len(m) < 2:
        return math.nan, math.nan
    observed = isotonic_lr(x, m)
    iso = _pava(x / m, m.astype(np.float64))
    draws = rng.binomial(m[None, :], iso[None, :], size=(n_resamples, len(m)))
    null = np.array([isotonic_lr(d, m) for d in draws])
    return observed, monte_carlo_pvalue(null, observed)


def _one_pair(belief: np.ndarray, is_first: np.ndarray, n_bins: int, p_adjust: str,
              n_resamples: int, rng: np.random.Generator,
              name: str) -> tuple[dict[str, Any], pd.DataFrame, pd.DataFrame]:
    codes, _ = quantile_bins(belief, n_bins)
    k = int(codes.max()) + 1 if len(codes) else 0
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
    lo_idx, hi_idx = np.triu_indices(k, 1)
    flagged = share[lo_idx] > share[hi_idx]
    pvals = np.full(len(lo_idx), np.nan)
    for j in np.flatnonzero(flagged):
        a, b = lo_idx[j], hi_idx[j]
        pvals[j] = _fisher_one_sided(int(x[a]), int(m[a]), int(x[b]), int(m[b]))
    adjusted = np.full(len(lo_idx), np.nan)
    adjusted[flagged] = _adjust(pvals[flagged], p_adjust)
    significant = flagged & (np.nan_to_num(adjusted, nan=1.0) < ALPHA)
    comparisons = pd.DataFrame({
        "pair": name, "bin_low": lo_idx, "bin_high": hi_idx, "share_low": share[lo_idx],
        "share_high": share[hi_idx], "flagged": flagged, "pvalue": pvals,
        "pvalue_adjusted": adjusted, "significant": significant,
    })
    n_comp = len(lo_idx)
    # the global test uses every distinct belief value, not the bins
    _, value_codes = np.unique(belief, return_inverse=True)
    mv = np.bincount(value_codes)
    xv = np.bincount(value_codes, weights=is_first).astype(np.int64)
    lr, p_global = isotonic_lr_test(xv, mv, n_resamples, rng)
    row = {
        "pair": name, "n_bins": k, "n_comparisons": n_comp,
        "n_flagged": int(flagged.sum()), "n_significant": int(significant.sum()),
        "statistic": 100.0 * significant.sum() / n_comp if n_comp else math.nan,
        "global_statistic": lr, "pvalue": p_global, "n_obs": len(belief),
    }
    return row, bins, comparisons


# --------------------------------------------------------------------------- public layer
def _monotonicity_test_iv(data: Any, belief: Any, action: Any, pairs: Any, n_bins: Any,
                          direction: Any, p_adjust: Any, n_resamples: Any,
                          rng: RNGLike) -> tuple[Any, ...]:
    df = as_dataframe(data, owner=_OWNER)
    for name, value in (("belief", belief), ("action", action)):
        if not isinstance(value, str):
            raise TypeError(param_error(name, _OWNER, "a column name (str)", value))
    require_columns(df, {"belief": belief, "action": action}, owner=_OWNER)
    n_bins = check_int(n_bins, "n_bins", _OWNER, low=2)
    direction = check_choice(direction, "direction", _OWNER, ("increasing", "decreasing"))
    p_adjust = check_choice(p_adjust, "p_adjust", _OWNER, ("none", "holm", "bh"))
    n_resamples = check_int(n_resamples, "n_resamples", _OWNER, low=1)
    gen = check_rng(rng, owner=_OWNER)
    if isinstance(pairs, str) or not isinstance(pairs, Sequence) or len(pairs) == 0:
        raise TypeError(param_error("pairs", _OWNER, "a non-empty sequence of (action, action) "
                                    "pairs", pairs))
    clean: list[tuple[str, str]] = []
    for pair in pairs:
        if (isinstance(pair, str) or not isinstance(pair, Sequence) or len(pair) != 2
                or pair[0] == pair[1]):
            raise ValueError(param_error("pairs", _OWNER, "a sequence of pairs of two "
                                         "different action labels", pair))
        clean.append((pair[0], pair[1]))
    if len(set(clean)) != len(clean):
        raise ValueError(param_error("pairs", _OWNER, "free of duplicate pairs", pairs))
    b = probability_column(df, belief, owner=_OWNER)
    codes, labels = label_column(df, action, owner=_OWNER)
    present = set(labels.tolist())
    for pair in clean:
        for a in pair:
            if a not in present:
                raise ValueError(
                    f"{_OWNER}: action {a!r} of pair {pair!r} does not occur in column "
                    f"'{action}'; labels present: {', '.join(map(repr, labels.tolist()))}.")
    return b, codes, labels, tuple(clean), n_bins, direction, p_adjust, n_resamples, gen


def monotonicity_test(
    data: Any,
    *,
    belief: str = "belief",
    action: str = "action",
    pairs: Sequence[tuple[str, str]] = DEFAULT_PAIRS,
    n_bins: int = 10,
    direction: Literal["increasing", "decreasing"] = "increasing",
    p_adjust: Literal["none", "holm", "bh"] = "none",
    n_resamples: int = 999,
    rng: RNGLike = None,
) -> MonotonicityResult:
    r"""Test whether pairwise choice shares are monotone in the stated belief.

    For each action pair ``(a1, a2)`` only rows choosing ``a1`` or ``a2`` are
    kept; their beliefs are cut into quantile bins; per bin the share of
    ``a1`` is computed. Every bin pair ``b < b'`` whose share goes the wrong
    way is flagged and tested with a one-sided Fisher exact test; the pair's
    statistic is the percentage of all bin-pair comparisons with a significant
    violation at alpha = 0.05 (after ``p_adjust``). A global test per pair
    asks whether the shares are monotone at all.

    Parameters
    ----------
    data : pandas.DataFrame or convertible
        The belief/action table, one row per elicitation.
    belief, action : str
        Column names: the stated probability in [0, 1] and the action label.
    pairs : sequence of (str, str)
        Action pairs ``(a1, a2)``; the share of ``a1`` among the two is tested.
        Every label must occur in the ``action`` column.
    n_bins : int
        Number of quantile bins of the belief (>= 2). With heavy ties equal
        edges are merged and fewer bins are used (a :class:`TiesWarning` says
        so; ``table['n_bins']`` gives the number used).
    direction : {'increasing', 'decreasing'}
        How the share of ``a1`` should move as the belief grows.
    p_adjust : {'none', 'holm', 'bh'}
        Adjustment of the flagged comparisons' Fisher p-values within each
        pair: none (the paper), Holm, or Benjamini-Hochberg.
    n_resamples : int
        Parametric-bootstrap resamples of the global isotonic test.
    rng : int, numpy.random.Generator or None
        Randomness of the parametric bootstrap.

    Returns
    -------
    MonotonicityResult
        ``statistic`` the pooled violation percentage, ``pvalue`` the
        Bonferroni-combined global p-value; per-pair figures in
        ``table``, per-bin counts in ``bin_table``,
        per-comparison p-values in ``comparison_table``.

    Warns
    -----
    TiesWarning
        When tied beliefs leave fewer than ``n_bins`` bins for a pair.
    SmallSampleWarning
        When a pair has fewer than 2 bins (its figures are NaN).

    Notes
    -----
    Bins are cut at the ``inverted_cdf`` quantiles :math:`c_j` of the pair's
    beliefs at levels :math:`j / K` (observed values, duplicates merged);
    bin ``j`` is :math:`(c_j, c_{j+1}]`; empty bins are dropped, so centres
    (mean beliefs) are increasing and every bin is non-empty. With
    :math:`x_j` rows choosing ``a1`` out of :math:`m_j` in bin ``j`` and
    share :math:`s_j = x_j / m_j`, a comparison ``j < k`` is
    flagged when :math:`s_j > s_k` (``increasing``) and tested with Fisher's
    exact test of the 2x2 table :math:`[[x_j, m_j - x_j], [x_k, m_k - x_k]]`
    against the one-sided alternative that the odds of ``a1`` are higher in
    bin ``j``. The pair's statistic is

    .. math:: V = 100 \cdot \#\{j < k : \text{flagged and } p_{jk} < 0.05\} / \binom{K}{2}.

    Unflagged comparisons count as non-significant. Rows are treated as
    independent given the belief, as in the paper.

    The global test (our addition) compares the binomial likelihood of the
    unrestricted shares with that of the weighted isotonic fit
    :math:`\hat s^{iso}` (pool-adjacent-violators):

    .. math:: T = 2 \sum_j \left[\ell(x_j; s_j) - \ell(x_j; \hat s^{iso}_j)\right],
              \qquad \ell(x; p) = x \log p + (m - x) \log(1 - p).

    Its null distribution is simulated by drawing
    :math:`x^*_j \sim \mathrm{Binomial}(m_j, \hat s^{iso}_j)`; the p-value is
    :math:`(1 + \#\{T^* \ge T\}) / (1 + B)`. The null is composite: the test
    is exact in size near flat shares (the least favourable case) and
    conservative when the true shares rise steeply (see
    ``docs/validation_decision.md`` for measured size and power).

    References
    ----------
    Fisher, R. A. (1922). On the interpretation of chi-square from
    contingency tables. J. R. Stat. Soc. 85(1), 87-94.

    Robertson, T., Wright, F. T. and Dykstra, R. L. (1988). Order
    Restricted Statistical Inference. Wiley. (Likelihood-ratio tests under
    order restrictions.)

    The decision-coherence paper (design notes, docs/design.md, method 1): monotone
    pairwise choice probabilities, Table 2 and Figure 1.

    Examples
    --------
    >>> import coherence
    >>> study = coherence.simulate("nonmonotone", n_contexts=300, rng=0)
    >>> res = coherence.monotonicity_test(study.data, n_resamples=199, rng=0)
    >>> res.table[["pair", "n_bins"]].to_numpy().tolist()
    [['yes/no', 10], ['yes/defer', 10], ['defer/no', 10]]
    >>> bool(res.pvalue < 0.05)
    True
    """
    (b, codes, labels, pairs_t, n_bins, direction, p_adjust, n_resamples,
     gen) = _monotonicity_test_iv(data, belief, action, pairs, n_bins, direction, p_adjust,
                                  n_resamples, rng)
    label_list = labels.tolist()
    rows, bin_frames, comp_frames = [], [], []
    used = np.zeros(len(b), dtype=bool)
    for a1, a2 in pairs_t:
        c1, c2 = label_list.index(a1), label_list.index(a2)
        keep = (codes == c1) | (codes == c2)
        used |= keep
        name = f"{a1}/{a2}"
        bp = b[keep]
        first = (codes[keep] == c1).astype(np.float64)
        if direction == "decreasing":
            # a share that should fall in b is a share that should rise in 1 - b
            bp = 1.0 - bp
        row, bins, comps = _one_pair(bp, first, n_bins, p_adjust, n_resamples, gen, name)
        if direction == "decreasing":
            bins = bins.iloc[::-1].reset_index(drop=True)
            k = row["n_bins"]
            bins["bin"] = np.arange(k)
            bins[["belief_low", "belief_high"]] = 1.0 - bins[["belief_high", "belief_low"]]
            bins["centre"] = 1.0 - bins["centre"]
            comps[["bin_low", "bin_high"]] = (k - 1) - comps[["bin_high", "bin_low"]].to_numpy()
            comps[["share_low", "share_high"]] = comps[["share_high", "share_low"]].to_numpy()
        if row["n_bins"] < 2:
            warnings.warn(f"{_OWNER}: pair {name} has {int(keep.sum())} rows and "
                          f"{row['n_bins']} distinct belief bin(s); its figures are NaN.",
                          SmallSampleWarning, stacklevel=2)
        elif row["n_bins"] < n_bins:
            warnings.warn(f"{_OWNER}: tied beliefs leave {row['n_bins']} of {n_bins} quantile "
                          f"bins for pair {name} (equal edges merged).", TiesWarning,
                          stacklevel=2)
        row.update({"action_1": a1, "action_2": a2})
        rows.append(row)
        bin_frames.append(bins)
        comp_frames.append(comps)
    pair_table = pd.DataFrame(rows)[[*PAIR_COLUMNS, "statistic", "pvalue", "n_obs"]]
    n_comp = pair_table["n_comparisons"].sum()
    statistic = (100.0 * pair_table["n_significant"].sum() / n_comp) if n_comp else math.nan
    pv = pair_table["pvalue"].to_numpy(dtype=float)
    pv = pv[~np.isnan(pv)]
    pvalue = min(1.0, float(pv.min()) * len(pv)) if len(pv) else math.nan
    if not used.any():
        warnings.warn(f"{_OWNER}: no row chooses an action of the requested pairs.",
                      DegenerateDataWarning, stacklevel=2)
    return MonotonicityResult(
        statistic=float(statistic), pvalue=pvalue,
        confidence_interval=ConfidenceInterval(math.nan, math.nan, 0.95),
        n_obs=int(used.sum()), method="fisher+isotonic-lr", pairs=pairs_t, n_bins=n_bins,
        direction=direction, p_adjust=p_adjust, n_resamples=n_resamples,
        table=pair_table,
        bin_table=pd.concat(bin_frames, ignore_index=True)[list(BIN_COLUMNS)],
        comparison_table=pd.concat(comp_frames, ignore_index=True)[list(COMPARISON_COLUMNS)],
    )


def plot_choice_shares(result: MonotonicityResult, *, ax: Any = None) -> Axes:
    """Plot each pair's share of the first action by belief bin, violations marked.

    The paper's Figure 1: one line per action pair (share against bin centre);
    a bin that is the lower end of at least one significant violation is
    circled, and each significant violation is drawn as a dotted segment
    between its two bins.

    Parameters
    ----------
    result : MonotonicityResult
        The output of :func:`monotonicity_test`.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on; a new figure is made when omitted.

    Returns
    -------
    matplotlib.axes.Axes
    """
    import matplotlib.pyplot as plt

    if not isinstance(result, MonotonicityResult):
        raise TypeError(param_error("result", "plot_choice_shares", "a MonotonicityResult",
                                    type(result).__name__))
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    bins, comps = result.bin_table, result.comparison_table
    for name, part in bins.groupby("pair", sort=False):
        line = ax.plot(part["centre"], part["share"], marker="o", label=str(name))[0]
        sig = comps[(comps["pair"] == name) & comps["significant"]]
        centre = part["centre"].to_numpy()
        share = part["share"].to_numpy()
        for lo, hi in zip(sig["bin_low"], sig["bin_high"], strict=True):
            ax.plot([centre[lo], centre[hi]], [share[lo], share[hi]], linestyle=":",
                    color=line.get_color(), alpha=0.6)
        marked = np.unique(sig["bin_low"].to_numpy()).astype(int)
        if len(marked):
            ax.scatter(centre[marked], share[marked], s=120, facecolors="none",
                       edgecolors="red", zorder=3)
    ax.set_xlabel("belief (bin centre)")
    ax.set_ylabel("share of the first action of the pair")
    ax.set_ylim(-0.02, 1.02)
    ax.set_title(f"Pairwise choice shares ({result.statistic:.1f}% significant violations)")
    ax.legend(title="pair")
    return ax
