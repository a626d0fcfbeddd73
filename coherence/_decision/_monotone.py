"""Monotone pairwise choice probabilities (decision coherence, method 1).

A rational random-utility agent choosing between two actions ``a1`` and ``a2``
picks ``a1`` more often the more the belief favours it: the share
``P(a1 | belief, a in {a1, a2})`` is monotone in the belief. The paper's
procedure bins the belief into quantile bins, flags every pair of bins whose
share goes the wrong way and tests each flagged pair with a one-sided Fisher
exact test. We add one calibrated global test per action pair: an
isotonic-regression likelihood-ratio statistic whose null distribution comes
from permuting the beliefs of whole contexts among contexts with the same
number of rows in the pair (the least favourable configuration of the
composite null "the share is non-decreasing", a flat share, at which the
belief is exchangeable with the pair's choices).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import TYPE_CHECKING
from typing import Any
from typing import Literal

import numpy as np
import pandas as pd

from .._docstrings import fill_doc
from .._parameters import check_choice
from .._parameters import check_int
from .._resampling import group_codes
from .._resampling import min_p_pvalue
from .._resampling import monte_carlo_pvalue
from .._resampling import row_units
from .._results import CoherenceResult
from .._results import ConfidenceInterval
from .._rng import RNGLike
from .._rng import check_rng
from .._validation import as_dataframe
from .._validation import check_column_names
from .._validation import label_column
from .._validation import label_key
from .._validation import label_pairs
from .._validation import nonempty
from .._validation import param_error
from .._validation import probability_column
from .._validation import require_columns
from .._warnings import DegenerateDataWarning
from .._warnings import DeprecatedAlias
from .._warnings import NotCalibratedWarning
from .._warnings import SmallSampleWarning
from .._warnings import TiesWarning
from ._design import distinct_roles
from ._design import no_reversed_pairs
from ._monotone_bins import ALPHA
from ._monotone_bins import BIN_COLUMNS
from ._monotone_bins import COMPARISON_COLUMNS
from ._monotone_bins import paper_comparisons
from ._monotone_isotonic import belief_windows
from ._monotone_isotonic import isotonic_lr_test
from ._monotone_isotonic import not_testable
from ._monotone_isotonic import permutation_null
from ._monotone_isotonic import quantile_bins
from ._monotone_isotonic import untestable_note
from ._monotone_isotonic import unused_options
from ._monotone_local import MIN_CONTEXTS
from ._monotone_local import LocalComparisons
from ._monotone_local import local_calibration
from ._monotone_local import local_comparisons
from ._monotone_local import small_study_note

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = ["MonotonicityResult", "monotonicity_test", "plot_choice_shares"]

_OWNER = "monotonicity_test"
DEFAULT_PAIRS: tuple[tuple[str, str], ...] = (("yes", "no"), ("yes", "defer"), ("defer", "no"))
PAIR_COLUMNS: tuple[str, ...] = (
    "pair", "action_1", "action_2", "n_bins", "n_comparisons", "n_flagged", "n_significant",
    "global_statistic",
)
#: Columns of ``table`` after ``statistic`` and ``pvalue``.
PAIR_TAIL_COLUMNS: tuple[str, ...] = ("n_obs", "n_contexts", "n_windows", "testable",
                                      "reason")
METHODS: tuple[str, ...] = ("local", "permutation", "bootstrap")
#: What the global test's likelihood ratio is computed over.
LR_ON: tuple[str, ...] = ("both", "bins", "values")
#: Columns of ``local_table`` (the localised comparisons of ``method='local'``).
LOCAL_COLUMNS: tuple[str, ...] = (
    "pair", "scale", "belief_low_from", "belief_low_to", "belief_high_from", "belief_high_to",
    "share_low", "share_high", "n_low", "n_high", "difference", "se", "z", "pvalue_adjusted",
)


@dataclass(frozen=True, slots=True)
class MonotonicityResult(CoherenceResult, test_name="monotonicity_test",
                         settings=("n_bins", "direction", "p_adjust", "n_resamples", "group",
                                   "n_windows", "lr_on", "lr_bins", "min_contexts", "n_draws")):
    """Result of :func:`monotonicity_test`.

    Attributes
    ----------
    statistic : float
        Headline: the percentage of all bin-pair comparisons, pooled over the
        action pairs, with a significant violation (the paper's Table 2); a pair
        one of whose actions is never chosen makes no comparison.
    pvalue : float
        Global p-value across action pairs. ``method='local'`` (default): the
        largest localised fall statistic over every pair, calibrated jointly
        (no Bonferroni factor); otherwise the smallest per-pair isotonic
        likelihood-ratio p-value, Bonferroni-adjusted for the number of
        testable pairs (capped at 1). NaN when no pair is testable.
    confidence_interval : ConfidenceInterval
        Not computed (NaN, NaN): the violation percentage is a descriptive
        figure; use the p-values for inference.
    n_obs : int
        Rows of ``data`` whose action belongs to at least one tested pair.
    method : str
        The global test: ``'local'`` (the default: localised comparisons of
        adjacent belief windows, max-T calibrated by a context multiplier
        bootstrap), ``'permutation'`` (the isotonic likelihood ratio with whole
        contexts' beliefs permuted within strata of equal size) or
        ``'bootstrap'`` (the parametric bootstrap, not calibrated).
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
        Permutations (or bootstrap resamples) of the global test; with
        ``method='local'`` the most multiplier draws (sequential: see ``n_draws``).
    n_draws : int
        Draws actually made (``method='local'`` stops early, by Besag and
        Clifford's rule, once 20 draws reach the observed statistic).
    min_contexts : int
        Contexts per window at the finest scale of ``method='local'``.
    group : str or None
        The context column the permutation moved whole (None: rows as units).
    n_windows : int
        Belief windows requested for the permutation (windows used per pair in
        :attr:`table`).
    lr_bins : int
        Quantile bins of the global test's likelihood ratio.
    lr_on : str
        What the global test's likelihood ratio is computed over: ``'both'`` (the
        default: bins and distinct values, min-p), ``'bins'`` (the ``lr_bins``
        quantile bins) or ``'values'`` (every distinct belief value, the
        statistic of the first releases).
    table : pandas.DataFrame
        One row per action pair (the paper's Table 2): ``pair``, ``action_1``,
        ``action_2``, bins used (``n_bins``), comparisons, flagged and
        significant comparisons, the violation percentage (``statistic``), the
        isotonic LR statistic (``global_statistic``, over the bins unless
        ``lr_on='values'``), its p-value (``pvalue``),
        the rows choosing either action (``n_obs``), their contexts
        (``n_contexts``), whether the global test could be run (``testable``)
        and, when not, why (``reason``; ``''`` when testable).
    bin_table : pandas.DataFrame
        One row per pair and bin: belief range, centre (mean belief), counts of
        each action and the share of the first.
    comparison_table : pandas.DataFrame
        One row per pair and bin pair ``bin_low < bin_high``: the shares,
        whether the share goes the wrong way (``flagged``), the one-sided
        Fisher p-value (NaN when not flagged), the adjusted p-value and
        whether it is below 0.05.
    local_table : pandas.DataFrame
        ``method='local'``: one row per localised comparison (:data:`LOCAL_COLUMNS`):
        the pair, the window size in contexts (``scale``), the belief ranges of the
        lower and the upper window, their shares and rows, the fall
        ``difference = share_low - share_high`` (positive: the share falls as the
        belief rises), its standard error, the statistic ``z`` and the max-T
        adjusted p-value (the share of draws whose largest statistic, over every
        comparison of every pair, reaches ``z``): where the violation is.
    """

    pairs: tuple[tuple[str, str], ...]
    n_bins: int
    direction: str
    p_adjust: str
    n_resamples: int
    group: str | None
    n_windows: int
    lr_on: str
    lr_bins: int
    table: pd.DataFrame
    bin_table: pd.DataFrame
    comparison_table: pd.DataFrame
    local_table: pd.DataFrame = field(
        default_factory=lambda: pd.DataFrame(columns=list(LOCAL_COLUMNS)))
    min_contexts: int = MIN_CONTEXTS
    n_draws: int = 0

    pair_table = DeprecatedAlias("table")

    _summary_table = ("per action pair", ("pair", "n_bins", "n_comparisons", "n_flagged",
                                          "n_significant", "statistic", "pvalue", "reason"))

    def plot(self, ax: Any = None) -> Any:
        """Shortcut for :func:`plot_choice_shares` (``self``)."""
        return plot_choice_shares(self, ax=ax)


# --------------------------------------------------------------------------- array layer
#: one pair's (row of the pair table, bin table, comparison table, localised comparisons)
_PairPart = tuple[dict[str, Any], pd.DataFrame, pd.DataFrame, "LocalComparisons | None"]


def _one_pair(belief: np.ndarray, is_first: np.ndarray, groups: np.ndarray, n_groups: int,
              name: str, labels: tuple[str, str], iv: _MonotonicityInput) -> _PairPart:
    """Both procedures for one pair; rows already in canonical order. ``groups`` are
    the study's context codes (``0..n_groups-1``); with ``method='local'`` the
    pair's localised comparisons are returned for the joint calibration."""
    n_bins, p_adjust, method, n_windows = iv.n_bins, iv.p_adjust, iv.method, iv.n_windows
    n_resamples, rng, lr_on, lr_bins = iv.n_resamples, iv.gen, iv.lr_on, iv.lr_bins
    min_contexts = iv.min_contexts
    bins, comparisons = paper_comparisons(belief, is_first, n_bins, p_adjust, name)
    k = len(bins)
    n_comp = len(comparisons)
    n_sig = int(comparisons["significant"].sum())
    _, local = np.unique(groups, return_inverse=True)
    local = local.astype(np.int64).ravel()
    window = belief_windows(belief, local, n_windows if method == "permutation" else 1)
    lr, p_global = math.nan, math.nan
    found: LocalComparisons | None = None
    if method == "local":
        reason = not_testable(belief, is_first, local, labels, None)
        if not reason:
            found = local_comparisons(belief, is_first, groups, n_groups, min_contexts)
            if len(found) == 0:
                reason = (f"too few contexts for two windows of {min_contexts // 2} contexts "
                          "each side of a belief value")
                found = None
        window = np.zeros(len(belief), dtype=np.int64)
    else:
        reason = not_testable(belief, is_first, local, labels, window)
    if not reason and method != "local":
        _, value_codes = np.unique(belief, return_inverse=True)
        value_codes = np.asarray(value_codes, dtype=np.int64).ravel()
        # the paper's quantile bins, a function of the value (invariant under the permutation)
        bin_codes = np.asarray(quantile_bins(belief, lr_bins)[0], dtype=np.int64).ravel()
        if method == "permutation" and lr_on == "both":
            coarse = np.zeros(int(value_codes.max()) + 1, dtype=np.int64)
            coarse[value_codes] = bin_codes
            both, null = permutation_null(value_codes, is_first, local, n_resamples, rng,
                                          window, coarse=coarse)
            lr, p_global = float(both[1]), min_p_pvalue(list(both), [null[:, 0], null[:, 1]])
        elif method == "permutation":
            lr, null = permutation_null(bin_codes if lr_on == "bins" else value_codes,
                                        is_first, local, n_resamples, rng, window)
            p_global = monte_carlo_pvalue(null, lr)
        else:
            codes = value_codes if lr_on == "values" else bin_codes
            mv = np.bincount(codes)
            xv = np.bincount(codes, weights=is_first).astype(np.int64)
            lr, p_global = isotonic_lr_test(xv, mv, n_resamples, rng)
    if found is not None:
        lr = float(found.z.max())
    row = {
        "pair": name, "n_bins": k, "n_comparisons": n_comp,
        "n_flagged": int(comparisons["flagged"].sum()), "n_significant": n_sig,
        "statistic": 100.0 * n_sig / n_comp if n_comp else math.nan,
        "global_statistic": lr, "pvalue": p_global, "n_obs": len(belief),
        "n_contexts": int(np.unique(groups).size),
        "n_windows": int(window.max()) + 1 if len(window) else 0,
        "testable": not reason, "reason": reason,
    }
    return row, bins, comparisons, found


def _local_frame(parts: list[LocalComparisons | None], names: list[str],
                 adjusted: np.ndarray, decreasing: bool) -> pd.DataFrame:
    """``local_table``: one row per localised comparison, beliefs on the data's scale."""
    frames = []
    for found, name in zip(parts, names, strict=True):
        if found is None:
            continue
        lo = [found.lo_low, found.lo_high, found.hi_low, found.hi_high]
        if decreasing:  # the comparison ran on 1 - belief
            lo = [1.0 - v for v in lo]
        frames.append(pd.DataFrame({
            "pair": name, "scale": found.scale.astype(np.int64),
            "belief_low_from": lo[0], "belief_low_to": lo[1],
            "belief_high_from": lo[2], "belief_high_to": lo[3],
            "share_low": found.share_lo, "share_high": found.share_hi,
            "n_low": found.n_lo.astype(np.int64), "n_high": found.n_hi.astype(np.int64),
            "difference": found.diff, "se": found.se, "z": found.z,
        }))
    if not frames:
        return pd.DataFrame(columns=list(LOCAL_COLUMNS))
    out = pd.concat(frames, ignore_index=True)
    out["pvalue_adjusted"] = adjusted
    return out[list(LOCAL_COLUMNS)]


# --------------------------------------------------------------------------- public layer
@dataclass(frozen=True, slots=True)
class _MonotonicityInput:
    """Validated input of :func:`monotonicity_test`: beliefs, codes and settings."""

    b: np.ndarray
    codes: np.ndarray
    labels: np.ndarray
    groups: np.ndarray
    group: str | None
    pairs: tuple[tuple[str, str], ...]
    n_bins: int
    direction: str
    p_adjust: str
    method: str
    n_windows: int
    n_resamples: int
    gen: np.random.Generator
    lr_on: str
    lr_bins: int
    min_contexts: int


def _monotonicity_test_iv(data: Any, belief: Any, action: Any, group: Any, pairs: Any,
                          n_bins: Any, direction: Any, p_adjust: Any, method: Any,
                          n_windows: Any, n_resamples: Any, rng: RNGLike,
                          lr_on: Any = "both", lr_bins: Any = 10,
                          min_contexts: Any = MIN_CONTEXTS) -> _MonotonicityInput:
    df = as_dataframe(data, owner=_OWNER)
    check_column_names(_OWNER, {"belief": belief, "action": action}, {"group": group})
    distinct_roles({"belief": belief, "action": action, "group": group}, _OWNER)
    require_columns(df, {"belief": belief, "action": action, "group": group}, owner=_OWNER)
    nonempty(df, owner=_OWNER)
    n_bins = check_int(n_bins, "n_bins", _OWNER, low=2)
    direction = check_choice(direction, "direction", _OWNER, ("increasing", "decreasing"))
    p_adjust = check_choice(p_adjust, "p_adjust", _OWNER, ("none", "holm", "bh"))
    method = check_choice(method, "method", _OWNER, METHODS)
    n_windows = check_int(n_windows, "n_windows", _OWNER, low=1)
    lr_on = lr_on_given = check_choice(lr_on, "lr_on", _OWNER, LR_ON)
    if method == "bootstrap" and lr_on == "both":
        # the bootstrap has no min-p combination: under 'both' it takes the distinct values,
        # its statistic as first published
        lr_on = "values"
    lr_bins = check_int(lr_bins, "lr_bins", _OWNER, low=2)
    if n_resamples is None:
        n_resamples = 9999 if method == "local" else 999
    n_resamples = check_int(n_resamples, "n_resamples", _OWNER, low=1)
    min_contexts = check_int(min_contexts, "min_contexts", _OWNER, low=2)
    unused_options(_OWNER, method, lr_on, {"n_windows": n_windows, "lr_on": lr_on_given,
                                           "lr_bins": lr_bins, "min_contexts": min_contexts})
    gen = check_rng(rng, owner=_OWNER)
    clean = label_pairs(pairs, "pairs", _OWNER)
    no_reversed_pairs(clean, [(label_key(a1), label_key(a2)) for a1, a2 in clean], _OWNER)
    b = probability_column(df, belief, owner=_OWNER)
    codes, labels = label_column(df, action, owner=_OWNER, discrete=True)
    # group=None: each row its own context, numbered by its values, not its position
    groups = (row_units([codes, b]) if group is None
              else group_codes(df, group, owner=_OWNER))
    return _MonotonicityInput(
        b=b, codes=codes, labels=labels, groups=groups, group=group, pairs=clean,
        n_bins=n_bins, direction=direction, p_adjust=p_adjust, method=method,
        n_windows=n_windows, n_resamples=n_resamples, gen=gen, lr_on=lr_on, lr_bins=lr_bins,
        min_contexts=min_contexts)


def monotonicity_test(
    data: Any,
    *,
    belief: str = "belief",
    action: str = "action",
    group: str | None = "context",
    pairs: Sequence[tuple[str, str]] = DEFAULT_PAIRS,
    n_bins: int = 5,
    direction: Literal["increasing", "decreasing"] = "increasing",
    p_adjust: Literal["none", "holm", "bh"] = "none",
    method: Literal["local", "permutation", "bootstrap"] = "local",
    n_windows: int = 5,
    n_resamples: int | None = None,
    rng: RNGLike = None,
    lr_on: Literal["both", "bins", "values"] = "both",
    lr_bins: int = 10,
    min_contexts: int = MIN_CONTEXTS,
) -> MonotonicityResult:
    r"""Test whether pairwise choice shares are monotone in the stated belief.

    For each action pair ``(a1, a2)`` only rows choosing ``a1`` or ``a2`` are
    kept; their beliefs are cut into quantile bins; per bin the share of
    ``a1`` is computed. Every bin pair ``b < b'`` whose share goes the wrong
    way is flagged and tested with a one-sided Fisher exact test; the pair's
    statistic is the percentage of all bin-pair comparisons with a significant
    violation at alpha = 0.05 (after ``p_adjust``): the paper's procedure,
    descriptive. A calibrated global test per pair asks whether the shares are
    monotone at all.

    Parameters
    ----------
    data : pandas.DataFrame or convertible
        The belief/action table, one row per elicitation.
    belief, action : str
        Column names: the stated probability in [0, 1] and the action label.
    group : str or None
        The context column: repetitions of a context share whatever the
        context does to the choice, so the global test's permutation moves
        whole contexts. ``None`` treats every row as its own context (valid
        only when rows are independent given the belief, as the paper assumes;
        the rows are numbered by their values, so their order does not matter).
    pairs : sequence of (str, str)
        Action pairs ``(a1, a2)``; the share of ``a1`` among the two is tested
        (a pair and its reverse, opposite directions, raise: see ``direction``).
        Items are labels (str or int) matched to the column's labels by value:
        ``(2, 0)`` names integer actions 2 and 0 (as does ``("2", "0")``).
        A pair whose actions are never (both) chosen is kept in :attr:`table`
        as not testable (NaN p-value, ``reason`` says why), with a
        :class:`DegenerateDataWarning`; the other pairs are still tested.
    n_bins : int
        Number of quantile bins of the belief for the paper's procedure (>= 2;
        default 5, the paper's: its Table 2 percentages are multiples of 1/10 and
        1/3, the comparisons of 5 bins; the first releases used 10).
        With heavy ties equal edges are merged and fewer bins are used (a
        :class:`TiesWarning` says so; ``table['n_bins']`` gives the number
        used). The global test's likelihood ratio uses its own ``lr_bins``.
    direction : {'increasing', 'decreasing'}
        How the share of ``a1`` should move as the belief grows.
    p_adjust : {'none', 'holm', 'bh'}
        Adjustment of the flagged comparisons' Fisher p-values within each
        pair: none (the paper), Holm, or Benjamini-Hochberg.
    method : {'local', 'permutation', 'bootstrap'}
        The global test. ``'local'`` (default): every pair of adjacent belief
        windows (each side holding ``min_contexts``, ``2 min_contexts``, ...
        contexts) compared by the fall in the share, studentized by a
        context-level jackknife with a floor; the largest statistic over all
        comparisons and pairs is calibrated by a context multiplier bootstrap
        (see Notes). It has power where a violation is local, which a global
        statistic dilutes. ``'permutation'``
        permutes the beliefs of whole contexts among contexts in the same
        belief window with the same number of rows in the pair, with an isotonic
        likelihood-ratio statistic (the default of earlier releases; exact at flat
        shares, weak against a local fall); ``'bootstrap'`` is the parametric
        bootstrap from the isotonic fit of the first releases, kept for
        comparability: it is not a calibrated test (it warns
        :class:`NotCalibratedWarning`).
    n_windows : int
        Belief windows of the permutation (>= 1): quantile bins of the
        contexts' mean beliefs; contexts exchange beliefs only within their
        window. ``1`` calibrates at a share flat over the whole range (exact
        there, conservative and weak when shares rise steeply); more windows
        need the share flat only within a window and keep power against a
        local fall in a steep share. Windows with too few contexts lose power.
    n_resamples : int or None
        Permutations (or bootstrap resamples) of the global test; default 999.
        With ``method='local'`` the most multiplier draws (default 9999): draws stop
        as soon as 20 of them reach the observed statistic (Besag and Clifford's
        sequential p-value, exact), so a clearly non-significant study costs a few
        dozen draws and a significant one resolves down to ``1 / (n_resamples + 1)``.
        A ``SmallSampleWarning`` says when ``n_resamples`` is too small for any
        p-value to fall below 0.05.
    rng : int, numpy.random.Generator or None
        Randomness of the global test (the pairs in turn).
    lr_on : {'both', 'bins', 'values'}
        What the global test's likelihood ratio is computed over: ``'values'``
        every distinct belief value (the statistic before the power fix: with
        continuous beliefs every value is its own bin and a broad fall in the share
        is lost in the noise of single rows); ``'bins'`` the ``lr_bins`` quantile
        bins of the pair's beliefs, which the permutation leaves unchanged (it only
        moves beliefs, so every bin keeps its rows' count): more power against a
        broad fall, less against a narrow one; ``'both'`` (default) both on the
        same permutations, combined by their smaller p-value (min-p, calibrated
        on the permutations). Every choice is valid: the permutation null holds
        for any statistic (see ``docs/validation_monotonicity.md`` for power).
        With ``method='bootstrap'``, ``'both'`` means ``'values'``, the statistic of the
        first releases (the result records ``'values'``).
    lr_bins : int
        Quantile bins of the global test's likelihood ratio (>= 2; default 10, the
        validated setting), apart from the paper's ``n_bins``.
    min_contexts : int
        ``method='local'``: contexts in each window at the finest scale (>= 2,
        default 15); the scales double from there while four windows fit.

    Returns
    -------
    MonotonicityResult
        ``statistic`` the pooled violation percentage, ``pvalue`` the global
        p-value over the testable pairs (see the attribute ``pvalue``); per-pair
        figures in ``table``, per-bin counts in ``bin_table``, per-comparison
        p-values in ``comparison_table``.

    Warns
    -----
    TiesWarning
        When tied beliefs leave fewer than ``n_bins`` bins for a pair.
    SmallSampleWarning
        When a pair with rows has fewer than 2 bins (its figures are NaN); when no
        pair is testable, so the overall p-value is NaN (it names each pair's reason,
        e.g. too few contexts for two windows of ``min_contexts // 2`` contexts).
    DegenerateDataWarning
        When an action of a pair is never chosen (the pair is not testable),
        no row chooses an action of any pair, or, with the default pairs, some rows
        have an action outside every pair (they are not used; the warning counts them
        by label: a label such as ``'Yes '`` or ``1`` is a mapping to fix).
    SmallSampleWarning
        When ``n_resamples`` is too small for any p-value below 0.05; with ``'local'``,
        below 3 x ``min_contexts`` contexts (re-studentized draws; size up to 0.07).
    NotCalibratedWarning
        With ``method='bootstrap'``.

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
    independent given the belief, as in the paper, so :math:`V` is descriptive.

    **The localised test** (``method='local'``, the default; our addition). For
    each pair, the rows choosing either action are sorted by belief; at every
    boundary between two distinct belief values, a lower window (the values just
    below, holding at least :math:`t` contexts) and an upper window (just above,
    likewise) are compared, for :math:`t =` ``min_contexts``, :math:`2t, 4t, \dots`
    while four windows fit (boundaries thinned to every :math:`t/4` contexts with
    continuous beliefs). Windows depend on the beliefs and contexts only, never
    on the choices. With :math:`\hat s` the share of ``a1`` among a window's rows,

    .. math:: z = \frac{\hat s_{low} - \hat s_{high}}{\sqrt{\max(V_{jk}, V_0)}},

    :math:`V_{jk}` the delete-one-context jackknife variance of the difference
    (the repetitions of a context move together) and :math:`V_0` a floor, the
    variance of the difference at the two windows' pooled share with the rows of
    a context correlated as estimated (one-way ANOVA over contexts): a window
    whose rows all chose one action has no spread of its own, and without the
    floor the smallest difference next to it reads as a certain fall (the
    simple adjacent-values comparison rejects a true monotone null 44-53% of the
    time on heaped beliefs for that reason). Under the null every expected
    difference :math:`s_{low} - s_{high}` is :math:`\le 0`, so the largest
    :math:`z` is at most the largest *centred* statistic, whose distribution a
    multiplier bootstrap over contexts estimates: each draw gives every context
    one standard normal multiplier and sums its jackknife contributions to every comparison
    (each comparison scaled to unit variance), so comparisons keep their
    correlation (overlapping windows, shared contexts, and across pairs the same
    contexts). The p-value of the largest statistic over all pairs is Besag and
    Clifford's sequential Monte Carlo p-value (``n_draws``); a pair's p-value
    compares its own largest statistic with the same draws. Validity rests on
    the jackknife's normal approximation across contexts; sizes measured on
    nulls with context shocks, heaped, continuous and deterministic (every
    repetition alike) choices, unequal repetitions and one row per context are
    in ``docs/validation_monotonicity.md``. A threshold agent with uniform
    trembles is rightly rejected when its shares fall (a tremble that sends more
    mass to an action below the threshold than above is a fall of the share).

    The isotonic test (``method='permutation'``) compares, over the bins :math:`v` (or, with
    ``lr_on='values'``, the distinct belief values), the binomial likelihood of the
    unrestricted shares with that of the weighted isotonic fit :math:`\hat s^{iso}`
    (pool-adjacent-violators); ``lr_on='both'`` computes it on both and combines
    their p-values by Westfall and Young's min-p (the smaller p-value, referred to the
    smaller p-values of the same permutations):

    .. math:: T = 2 \sum_v \left[\ell(x_v; s_v) - \ell(x_v; \hat s^{iso}_v)\right],
              \qquad \ell(x; p) = x \log p + (m - x) \log(1 - p).

    The null "the share is non-decreasing" is composite; its least favourable
    point is a flat share, where the pair's choices carry no information about
    the belief. There the beliefs of contexts with the same number :math:`m_c`
    of rows in the pair are exchangeable with respect to the choices, whatever
    the contexts share (a context-level taste for an action) and however the
    number of rows depends on the belief. The contexts are cut into
    ``n_windows`` quantile windows of their mean belief; one permutation gives
    each context the beliefs of another context of its stratum (same window,
    same :math:`m_c`), in random order within the context (the repetitions
    being exchangeable); the choices do not move. The test is exact when the
    share is flat within every window and conservative when it rises there
    (permuting within a window can only add falls). The
    p-value is :math:`(1 + \#\{T^* \ge T\}) / (1 + B)`, exact at flat shares
    and conservative when shares rise (see ``docs/validation_monotonicity.md``).
    A pair is not testable (NaN, ``reason`` in :attr:`table`) when an action is
    never chosen, all beliefs are equal, or no stratum holds two contexts with
    different beliefs.

    Mirrored data (beliefs :math:`1 - b`, each pair's actions swapped; what
    ``direction='decreasing'`` computes) give another test, not the same figures:
    the bins are lower quantiles closed above (a tied block at a cut joins the lower
    bin; on distinct beliefs the rows left over when ``n_bins`` does not divide
    their number go to the lowest bins), the local test thins the boundaries between
    belief values from the lowest value up, and the rows are drawn in an order
    by belief. Over 12 studies per design of the validation matrix the overall
    p-value moved by 0.03 on average on a 0.05 grid, 0.10 with heaped beliefs and
    0.24 with continuous ones (at most 0.63); each orientation holds its size
    (``docs/monotonicity.md``).

    See Also
    --------
    plot_choice_shares : the shares by belief bin, the paper's Figure 1.
    cyclic_monotonicity_test : every action at once, ordered by payoff, without IIA.
    iia_test : whether the pairwise odds depend on the menu (the assumption of this test).
    ci_test : whether the action carries information about the outcome beyond the belief.
    leakage_test : how much the outcome improves a prediction of the action.
    prompt_consistency : whether the belief moves with the wording.

    References
    ----------
    Besag, J. and Clifford, P. (1991). Sequential Monte Carlo p-values.
    Biometrika 78(2), 301-304.

    Chernozhukov, V., Chetverikov, D. and Kato, K. (2013). Gaussian approximations
    and multiplier bootstrap for maxima of sums of high-dimensional random vectors.
    Ann. Statist. 41(6), 2786-2819.

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
    >>> study = coherence.simulate("nonmonotone", n_contexts=1000, rng=0)
    >>> res = coherence.monotonicity_test(study.data, n_resamples=199, rng=0)
    >>> res.table[["pair", "n_bins"]].to_numpy().tolist()
    [['yes/no', 5], ['yes/defer', 5], ['defer/no', 5]]
    >>> bool(res.pvalue < 0.05)
    True
    """
    iv = _monotonicity_test_iv(data, belief, action, group, pairs, n_bins, direction, p_adjust,
                               method, n_windows, n_resamples, rng, lr_on, lr_bins,
                               min_contexts)
    labels, codes = iv.labels, iv.codes
    n_groups = int(iv.groups.max()) + 1 if len(iv.groups) else 0
    smallest = (1.0 if iv.method == "local" else len(iv.pairs)) / (iv.n_resamples + 1.0)
    if smallest > ALPHA:
        warnings.warn(f"{_OWNER}: with n_resamples={iv.n_resamples} the smallest p-value the "
                      f"test can return is {min(1.0, smallest):.3g}, above {ALPHA}: it cannot "
                      "reject at that level. Use more resamples.", SmallSampleWarning,
                      stacklevel=2)
    if iv.method == "bootstrap":
        warnings.warn(f"{_OWNER}(method='bootstrap') draws from the isotonic fit and treats "
                      "rows as independent; it is kept for comparability and is not a "
                      "calibrated test. Use method='permutation'.", NotCalibratedWarning,
                      stacklevel=2)
    # pair items match labels by value: 2 names the label 2 (or '2', or 2.0)
    label_list = [label_key(x) for x in labels.tolist()]
    absent = sorted({label_key(a) for pair in iv.pairs for a in pair
                     if label_key(a) not in label_list})
    if absent:
        warnings.warn(f"{_OWNER}: action {', '.join(map(repr, absent))} never occurs in column "
                      f"'{action}' (labels present: {', '.join(map(repr, label_list))}); "
                      "pairs with it are not testable.", DegenerateDataWarning, stacklevel=2)
    parts = []
    used = np.zeros(len(iv.b), dtype=bool)
    for pair in iv.pairs:
        keep, part = _pair_part(iv, pair, label_list, n_groups)
        used |= keep
        parts.append(part)
    pair_table, local_frame, statistic, pvalue, n_draws = _summary(iv, parts, n_groups)
    if not used.any():
        warnings.warn(f"{_OWNER}: no row chooses an action of the requested pairs.",
                      DegenerateDataWarning, stacklevel=2)
    elif not used.all() and iv.pairs == DEFAULT_PAIRS:  # named pairs leave rows out on purpose
        left = pd.Series(np.asarray(labels, dtype=object)[codes[~used]]).value_counts()
        named = ", ".join(f"{lab!r} ({n} rows)" for lab, n in left.items())
        warnings.warn(f"{_OWNER}: {int((~used).sum())} of {len(used)} rows have an action "
                      f"outside every tested pair and are not used: {named}. Map the labels "
                      "onto the pairs' actions (or name the pairs) to use them.",
                      DegenerateDataWarning, stacklevel=2)
    return MonotonicityResult(
        statistic=float(statistic), pvalue=pvalue,
        confidence_interval=ConfidenceInterval(math.nan, math.nan, 0.95),
        n_obs=int(used.sum()), method=iv.method, pairs=iv.pairs, n_bins=iv.n_bins,
        direction=iv.direction, p_adjust=iv.p_adjust, n_resamples=iv.n_resamples,
        group=iv.group, n_windows=iv.n_windows, lr_on=iv.lr_on, lr_bins=iv.lr_bins,
        table=pair_table, local_table=local_frame, min_contexts=iv.min_contexts,
        n_draws=int(n_draws),
        bin_table=pd.concat([p[1] for p in parts], ignore_index=True)[list(BIN_COLUMNS)],
        comparison_table=pd.concat([p[2] for p in parts],
                                   ignore_index=True)[list(COMPARISON_COLUMNS)],
    )


def _pair_part(iv: _MonotonicityInput, pair: tuple[str, str], label_list: list[str],
               n_groups: int) -> tuple[np.ndarray, _PairPart]:
    """One action pair: the rows it uses and its part of the result (in the user's
    direction); warns of too few bins and of tied beliefs."""
    a1, a2 = pair
    codes, direction, n_bins = iv.codes, iv.direction, iv.n_bins
    k1, k2 = label_key(a1), label_key(a2)
    c1 = label_list.index(k1) if k1 in label_list else -1
    c2 = label_list.index(k2) if k2 in label_list else -1
    keep = ((codes == c1) | (codes == c2)) & (codes >= 0)
    name = f"{a1}/{a2}"
    bp = iv.b[keep]
    first = (codes[keep] == c1).astype(np.float64)
    gp = iv.groups[keep]
    if direction == "decreasing":
        # a share that should fall in b is a share that should rise in 1 - b
        bp = 1.0 - bp
    order = np.lexsort((first, bp, gp))  # canonical: the input's row order is irrelevant
    row, bins, comps, found = _one_pair(bp[order], first[order], gp[order], n_groups, name,
                                        (a1, a2), iv)
    k = row["n_bins"]
    if direction == "decreasing" and k:
        bins = bins.iloc[::-1].reset_index(drop=True)
        bins["bin"] = np.arange(k)
        bins[["belief_low", "belief_high"]] = 1.0 - bins[["belief_high", "belief_low"]]
        bins["centre"] = 1.0 - bins["centre"]
        comps[["bin_low", "bin_high"]] = (k - 1) - comps[["bin_high", "bin_low"]].to_numpy()
        comps[["share_low", "share_high"]] = comps[["share_high", "share_low"]].to_numpy()
    if len(bp) > 0 and k < 2:  # stacklevel 3: the caller of monotonicity_test
        warnings.warn(f"{_OWNER}: pair {name} has {len(bp)} rows and "
                      f"{k} distinct belief bin(s); its figures are NaN.",
                      SmallSampleWarning, stacklevel=3)
    elif 2 <= k < n_bins:  # distinct beliefs, at least n_bins of them, fill every bin
        why = "tied beliefs leave" if len(bp) >= n_bins else f"{len(bp)} rows (< n_bins) leave"
        warnings.warn(f"{_OWNER}: {why} {k} of {n_bins} quantile bins for pair {name} "
                      "(equal edges merged).", TiesWarning, stacklevel=3)
    row.update({"action_1": a1, "action_2": a2})
    return keep, (row, bins, comps, found)


def _summary(iv: _MonotonicityInput, parts: list[_PairPart],
             n_groups: int) -> tuple[pd.DataFrame, pd.DataFrame, float, float, int]:
    """The pair table, the localised comparisons' table, the statistic, the p-value and
    the draws used: a joint max-T calibration with ``method='local'``, else Bonferroni
    over the pairs' global p-values."""
    rows = [p[0] for p in parts]
    n_draws = iv.n_resamples
    local_frame = pd.DataFrame(columns=list(LOCAL_COLUMNS))
    p_joint = math.nan
    if iv.method == "local":
        found_parts = [p[3] for p in parts]
        if (note := small_study_note(_OWNER, n_groups, iv.min_contexts)) and any(found_parts):
            warnings.warn(note, SmallSampleWarning, stacklevel=3)
        p_joint, pair_p, adjusted, n_draws = local_calibration(found_parts, n_groups,
                                                                iv.n_resamples, iv.gen)
        for row, p_pair in zip(rows, pair_p, strict=True):
            row["pvalue"] = p_pair
        local_frame = _local_frame(found_parts, [r["pair"] for r in rows], adjusted,
                                   iv.direction == "decreasing")
    pair_table = pd.DataFrame(rows)[[*PAIR_COLUMNS, "statistic", "pvalue", *PAIR_TAIL_COLUMNS]]
    n_comp = pair_table["n_comparisons"].sum()
    statistic = (100.0 * pair_table["n_significant"].sum() / n_comp) if n_comp else math.nan
    pv = pair_table["pvalue"].to_numpy(dtype=float)
    pv = pv[~np.isnan(pv)]
    if iv.method == "local":
        pvalue = p_joint
    else:
        pvalue = min(1.0, float(pv.min()) * len(pv)) if len(pv) else math.nan
    if math.isnan(pvalue):  # stacklevel 3: the caller of monotonicity_test
        warnings.warn(untestable_note(_OWNER, pair_table), SmallSampleWarning, stacklevel=3)
    return pair_table, local_frame, statistic, pvalue, n_draws


@fill_doc
def plot_choice_shares(result: MonotonicityResult, *, ax: Any = None) -> Axes:
    """Plot each pair's share of the first action by belief bin, violations marked.

    The paper's Figure 1: one line per action pair (share against bin centre);
    a bin that is the lower end of at least one significant violation is
    circled in red, and each significant violation is drawn as a dotted segment
    between its two bins (a higher-belief bin whose share is lower, with an
    adjusted one-sided Fisher p-value below 0.05). With ``method='local'``, each
    pair's strongest localised fall whose max-T adjusted p-value is below 0.05 is
    a dashed arrow from the lower window's share to the upper window's (at the
    windows' belief midpoints). The legend explains every mark the figure has.

    Parameters
    ----------
    result : MonotonicityResult
        The output of :func:`monotonicity_test`.
    %(ax)s

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on: one line of first-action shares per action pair.

    See Also
    --------
    monotonicity_test : the result this plots.
    MonotonicityResult : its ``bin_table`` and ``local_table`` hold the numbers drawn.
    """
    import matplotlib.pyplot as plt

    if not isinstance(result, MonotonicityResult):
        raise TypeError(param_error("result", "plot_choice_shares", "a MonotonicityResult",
                                    type(result).__name__))
    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    bins, comps = result.bin_table, result.comparison_table
    any_marked = False
    colours: dict[str, Any] = {}
    for name, part in bins.groupby("pair", sort=False):
        line = ax.plot(part["centre"], part["share"], marker="o", label=str(name))[0]
        colours[str(name)] = line.get_color()
        sig = comps[(comps["pair"] == name) & comps["significant"]]
        centre = part["centre"].to_numpy()
        share = part["share"].to_numpy()
        for lo, hi in zip(sig["bin_low"], sig["bin_high"], strict=True):
            ax.plot([centre[lo], centre[hi]], [share[lo], share[hi]], linestyle=":",
                    color=line.get_color(), alpha=0.6)
        marked = np.unique(sig["bin_low"].to_numpy()).astype(int)
        if len(marked):
            any_marked = True
            ax.scatter(centre[marked], share[marked], s=120, facecolors="none",
                       edgecolors="red", zorder=3)
    # the localised test's strongest significant fall per pair: an arrow from the lower
    # window's share to the upper window's, at the windows' belief midpoints
    local = result.local_table
    any_fall = False
    if len(local):
        for name, part in local[local["pvalue_adjusted"] < ALPHA].groupby("pair", sort=False):
            top = part.loc[part["z"].idxmax()]
            x0 = 0.5 * (top["belief_low_from"] + top["belief_low_to"])
            x1 = 0.5 * (top["belief_high_from"] + top["belief_high_to"])
            ax.annotate("", xy=(x1, top["share_high"]), xytext=(x0, top["share_low"]),
                        arrowprops={"arrowstyle": "->", "linestyle": "--", "lw": 1.5,
                                    "color": colours.get(str(name), "red")}, zorder=4)
            any_fall = True
    ax.set(xlabel="belief (bin centre)", ylabel="share of the first action of the pair",
           ylim=(-0.02, 1.02),
           title=f"Pairwise choice shares ({result.statistic:.1f}% significant violations)")
    handles, labels = ax.get_legend_handles_labels()
    if any_marked:  # explain the marks: a ring and a dotted segment per violation
        from matplotlib.lines import Line2D

        handles += [Line2D([], [], marker="o", linestyle="none", markersize=9,
                           markerfacecolor="none", markeredgecolor="red"),
                    Line2D([], [], linestyle=":", color="grey")]
        labels += ["lower bin of a significant violation",
                   "bins of a significant violation"]
    if any_fall:  # explain the arrow: the localised test's strongest fall
        from matplotlib.lines import Line2D

        handles += [Line2D([], [], linestyle="--", color="grey")]
        labels += ["strongest localised fall (adjusted p < 0.05)"]
    ax.legend(handles, labels, title="pair", fontsize="small")
    return ax
