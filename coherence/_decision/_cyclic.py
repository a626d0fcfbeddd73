r"""Cyclic monotonicity of choice among ordered actions: every "at or above" share
non-decreasing in the belief.

With more than two actions (no / defer / yes, sell / hold / buy), an expected-utility
agent's payoff of action :math:`a_k` is linear in the belief :math:`p` of the event,
:math:`c_k + s_k p`, with slope :math:`s_k` (the payoff when the event happens minus the
payoff when it does not). Order the actions by their slope. With random utility
noise whose distribution does not depend on the belief (any joint distribution: context
shocks, correlated tastes), the utility :math:`c_k + s_k p + \varepsilon_k` has
increasing differences in (level, belief), so for every draw of the noise the chosen
level is non-decreasing in the belief (Topkis; Milgrom and Shannon), and the
distribution of the chosen level rises in the belief in the first-order stochastic
sense: for every level :math:`k`, :math:`F_k(p) = P(\text{level} \ge k \mid p)` is
non-decreasing. This is the scalar-belief, ordered-action form of the cyclic
monotonicity of the choice probabilities (the choice-probability vector is the gradient
of the convex surplus function, Rochet 1987, McFadden 1981), and it needs no IIA: it
holds for the nested logit, the probit and any other additive random-utility model.

Each :math:`F_k` is a binary outcome ("chose level k or above") of every row, tested for
a fall by the localised machinery of :mod:`coherence._decision._monotone_local`
(adjacent belief windows at several scales, context jackknife with a floor); the
:math:`K - 1` outcomes enter one Gaussian multiplier max-T with the same multipliers per
context, so their correlation is kept.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._parameters import check_int
from .._resampling import group_codes
from .._resampling import row_units
from .._results import CoherenceResult
from .._results import ConfidenceInterval
from .._rng import RNGLike
from .._rng import check_rng
from .._validation import as_dataframe
from .._validation import check_column_names
from .._validation import column_error
from .._validation import is_label_item
from .._validation import label_column
from .._validation import label_key
from .._validation import nonempty
from .._validation import param_error
from .._validation import probability_column
from .._validation import require_columns
from .._warnings import DegenerateDataWarning
from .._warnings import SmallSampleWarning
from ._design import distinct_roles
from ._monotone_isotonic import quantile_bins
from ._monotone_local import MIN_CONTEXTS
from ._monotone_local import LocalComparisons
from ._monotone_local import local_calibration
from ._monotone_local import local_comparisons
from ._monotone_local import small_study_note

__all__ = ["CyclicMonotonicityResult", "cyclic_monotonicity_test", "distance_to_monotone"]

_OWNER = "cyclic_monotonicity_test"
ALPHA = 0.05
DEFAULT_ORDER: tuple[str, ...] = ("no", "defer", "yes")
LEVEL_COLUMNS: tuple[str, ...] = (
    "level", "threshold", "n_obs", "n_contexts", "share", "n_comparisons", "statistic",
    "pvalue", "testable", "reason",
)
COMPARISON_COLUMNS: tuple[str, ...] = (
    "level", "threshold", "scale", "belief_low_from", "belief_low_to", "belief_high_from",
    "belief_high_to", "share_low", "share_high", "n_low", "n_high", "difference", "se", "z",
    "pvalue_adjusted",
)
BIN_COLUMNS: tuple[str, ...] = ("bin", "belief_low", "belief_high", "n_obs", "level",
                                "threshold", "share", "fitted")


@dataclass(frozen=True, slots=True)
class CyclicMonotonicityResult(CoherenceResult, test_name="cyclic_monotonicity_test",
                               settings=("group", "n_contexts", "distance", "n_bins", "n_resamples",
                                         "n_draws", "min_contexts")):
    """Result of :func:`cyclic_monotonicity_test`.

    Attributes
    ----------
    statistic : float
        The largest standardised fall of any cumulative share ("chose this action or one
        above it in ``order``") between adjacent belief windows (NaN when nothing is
        testable). Positive: some cumulative share falls as the belief rises.
    pvalue : float
        The p-value of "every cumulative share is non-decreasing in the belief": the
        largest statistic over every level and comparison against the joint Gaussian
        multiplier draws (sequential; no Bonferroni factor).
    confidence_interval : ConfidenceInterval
        Not computed (NaN, NaN): the statistic is a test statistic.
    n_obs : int
        Rows used (every row: each row's action is a level of ``order``).
    method : str
        ``'local max-T'``.
    order : tuple of str
        The actions from the lowest payoff slope to the highest.
    group : str or None
        The context column (None: every row its own context).
    n_contexts : int
        Contexts.
    distance : float
        Distance to rationalisability: over ``n_bins`` quantile bins of the belief, the
        row-weighted mean of :math:`\\sum_k |\\hat F_{kb} - \\tilde F_{kb}|`, with
        :math:`\\tilde F_k` the weighted isotonic (non-decreasing) fit of the cumulative
        shares :math:`\\hat F_k`: the share of choices that must move, counted in steps
        between adjacent levels, to make the binned shares rationalisable (0 when they
        already are; descriptive, positive under the null by sampling noise).
    n_bins : int
        Quantile bins of ``distance`` requested (used: ``bin_table``).
    n_resamples : int
        The most multiplier draws.
    n_draws : int
        Draws made (Besag and Clifford's rule stops after 20 reach the statistic).
    min_contexts : int
        Contexts per window at the finest scale.
    table : pandas.DataFrame
        One row per cumulative level ``k = 1 .. K-1``: ``threshold`` (the action at level
        ``k``; the outcome is "chose it or an action above"), rows, contexts, the overall
        share, the number of window comparisons, the largest ``z`` (``statistic``), its
        p-value against the same joint draws, ``testable`` and ``reason``.
    comparison_table : pandas.DataFrame
        One row per window comparison (:data:`COMPARISON_COLUMNS`): the level, the
        window size in contexts (``scale``), the belief ranges of the lower and the
        upper window, their cumulative shares and rows, the fall
        ``difference = share_low - share_high``, its standard error, ``z`` and the
        single-step max-T adjusted p-value: where the violation is.
    bin_table : pandas.DataFrame
        One row per belief bin and level: the bin's range and rows, the cumulative share
        and its isotonic fit (the inputs of ``distance``).
    """

    order: tuple[str, ...]
    group: str | None
    n_contexts: int
    distance: float
    n_bins: int
    n_resamples: int
    n_draws: int
    min_contexts: int
    table: pd.DataFrame
    comparison_table: pd.DataFrame
    bin_table: pd.DataFrame

    _summary_table = ("per cumulative level", ("level", "threshold", "share",
                                               "n_comparisons", "statistic", "pvalue",
                                               "reason"))


# --------------------------------------------------------------------------- array layer
def cumulative_outcomes(levels: np.ndarray, n_levels: int) -> np.ndarray:
    """``(n, K - 1)`` float array: column ``k - 1`` is 1 where ``levels >= k``."""
    return (levels[:, None] >= np.arange(1, n_levels)[None, :]).astype(np.float64)


def isotonic_fit(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted least-squares non-decreasing fit of ``y`` (pool adjacent violators)."""
    values: list[float] = []
    weights: list[float] = []
    sizes: list[int] = []
    for yi, wi in zip(y.tolist(), w.tolist(), strict=True):
        values.append(yi)
        weights.append(wi)
        sizes.append(1)
        while len(values) > 1 and values[-2] > values[-1]:
            wt = weights[-2] + weights[-1]
            values[-2] = (weights[-2] * values[-2] + weights[-1] * values[-1]) / wt
            weights[-2] = wt
            sizes[-2] += sizes[-1]
            del values[-1], weights[-1], sizes[-1]
    return np.repeat(np.asarray(values), sizes)


def distance_to_monotone(shares: np.ndarray, weights: np.ndarray) -> tuple[float, np.ndarray]:
    r"""The distance to rationalisability of binned cumulative shares.

    ``shares`` is ``(B, K - 1)``: the cumulative share of level ``k`` in belief bin ``b``
    (bins in increasing belief); ``weights`` the bins' rows. Each column is replaced by
    its weighted isotonic fit :math:`\tilde F_k` (the fit preserves the columns' order,
    so the fitted columns are again cumulative shares, non-increasing in ``k``); the
    distance is :math:`\sum_b w_b \sum_k |F_{bk} - \tilde F_{bk}| / \sum_b w_b`. Returns
    the distance and the fitted shares.
    """
    fitted = np.column_stack([isotonic_fit(shares[:, k], weights)
                              for k in range(shares.shape[1])]) if shares.size else shares
    total = float(weights.sum())
    if total <= 0 or shares.size == 0:
        return math.nan, fitted
    return float(np.sum(weights[:, None] * np.abs(shares - fitted)) / total), fitted


# --------------------------------------------------------------------------- public layer
def _cyclic_monotonicity_test_iv(data: Any, belief: Any, action: Any, group: Any, order: Any,
                                 n_bins: Any, n_resamples: Any, min_contexts: Any,
                                 rng: RNGLike) -> tuple[Any, ...]:
    df = as_dataframe(data, owner=_OWNER)
    check_column_names(_OWNER, {"belief": belief, "action": action}, {"group": group})
    distinct_roles({"belief": belief, "action": action, "group": group}, _OWNER)
    rule = ("a sequence of two or more distinct action labels (str or int), lowest payoff "
            "slope first")
    if isinstance(order, str) or not isinstance(order, Sequence):
        raise TypeError(param_error("order", _OWNER, rule, order))
    if not all(is_label_item(a) for a in order):
        raise TypeError(param_error("order", _OWNER, rule, order))
    # labels matched by value: 2 names the label 2 (or '2', or 2.0)
    keys = [label_key(a) for a in order]
    if len(order) < 2 or len(set(keys)) != len(keys):
        raise ValueError(param_error("order", _OWNER, rule, order))
    n_bins = check_int(n_bins, "n_bins", _OWNER, low=2)
    n_resamples = check_int(n_resamples, "n_resamples", _OWNER, low=1)
    min_contexts = check_int(min_contexts, "min_contexts", _OWNER, low=2)
    gen = check_rng(rng, owner=_OWNER)
    require_columns(df, {"belief": belief, "action": action, "group": group}, owner=_OWNER)
    nonempty(df, owner=_OWNER)
    b = probability_column(df, belief, owner=_OWNER)
    codes, labels = label_column(df, action, owner=_OWNER, discrete=True)
    names = [label_key(x) for x in labels.tolist()]
    level_of_label = np.array([keys.index(a) if a in keys else -1 for a in names],
                              dtype=np.int64)
    levels = level_of_label[codes]
    off = np.flatnonzero(levels < 0)
    if len(off):
        raise ValueError(column_error(
            action, f"hold actions named in 'order' ({', '.join(map(repr, order))}); a row "
            "left out would bias the cumulative shares", [df.index[i] for i in off],
            [df[action].iloc[i] for i in off], owner=_OWNER))
    # group=None: each row its own context, numbered by its values, not its position
    groups = (row_units([levels, b]) if group is None
              else group_codes(df, group, owner=_OWNER))
    return b, levels, groups, group, tuple(order), n_bins, n_resamples, min_contexts, gen


def cyclic_monotonicity_test(
    data: Any,
    *,
    belief: str = "belief",
    action: str = "action",
    group: str | None = "context",
    order: Sequence[str] = DEFAULT_ORDER,
    n_bins: int = 10,
    n_resamples: int = 9999,
    min_contexts: int = MIN_CONTEXTS,
    rng: RNGLike = None,
) -> CyclicMonotonicityResult:
    r"""Test that the choice among ordered actions rises with the belief, all levels at once.

    With actions ordered by how much their payoff rises with the event (``order``, lowest
    first: ``("no", "defer", "yes")``), a rational random-utility agent chooses "this
    action or one above it" no less often as its belief rises, for every action of the
    order. The test asks whether any of these cumulative shares falls, comparing
    adjacent belief windows with contexts as the unit of inference; unlike the pairwise
    test it needs no independence of irrelevant alternatives.

    Parameters
    ----------
    data : pandas.DataFrame or convertible
        The belief/action table, one row per elicitation.
    belief, action : str
        Column names: the stated probability in [0, 1] and the chosen action; every
        action must be named in ``order``.
    group : str or None
        The context column: the repetitions of a context move together in the jackknife
        and in the multiplier bootstrap, whatever they share. ``None`` treats every row
        as its own context.
    order : sequence of str or int
        The actions (labels matched by value: ``(0, 1, 2)`` names integer actions, as
        does ``("0", "1", "2")``) from the lowest payoff slope (the action that pays most when the
        event does not happen) to the highest. Default ``("no", "defer", "yes")``, the
        labels of :func:`report` and :func:`simulate`. Reverse it to test a belief about
        the complement (with beliefs ``1 - b`` the test is as valid, but its belief
        windows and the distance's bins are built anew on the mirrored values; where
        beliefs are tied, as on a grid, the ties split differently, so the statistic and
        the distance can differ: 0.684 against 0.671 and 0.0077 against 0.0100 on one
        simulated study of 150 contexts with beliefs on a 0.05 grid).
    n_bins : int
        Quantile bins of the belief for the descriptive ``distance`` (>= 2; ties merge
        bins).
    n_resamples : int
        The most Gaussian multiplier draws; draws stop once 20 reach the statistic
        (Besag and Clifford), so a clearly non-significant study costs a few dozen.
    min_contexts : int
        Contexts in each window at the finest scale (>= 2); scales double while four
        windows fit.
    rng : int, numpy.random.Generator or None
        Randomness of the multiplier draws.

    Returns
    -------
    CyclicMonotonicityResult
        ``statistic`` the largest standardised fall, ``pvalue`` its max-T p-value,
        ``distance`` the distance to rationalisability; per-level figures in ``table``,
        the window comparisons in ``comparison_table``, binned shares in ``bin_table``.

    Raises
    ------
    ValueError
        When a row's action is not in ``order``, ``order`` repeats a label or has fewer
        than two, or a column is missing or malformed.

    Warns
    -----
    DegenerateDataWarning
        When a level cannot be tested (no row, or every row, chose it or above; one
        distinct belief; too few contexts for two windows): its row says why; and when an
        action of ``order`` between two chosen ones never occurs (its level repeats the
        level above it).
    SmallSampleWarning
        When ``n_resamples`` is too small for a p-value below 0.05, and when a third of
        the contexts is fewer than ``min_contexts`` (below 45 by default): the windows'
        variances rest on few contexts and the draws are re-studentized (measured 0.052
        at 30 x 5, 0.040 at 40 x 3 with four actions; 0.075 and 0.056 before).

    See Also
    --------
    monotonicity_test : the pairwise shares, each tested for monotonicity (assumes IIA).
    iia_test : whether the pairwise odds depend on the menu (IIA itself).
    leakage_test : whether the action depends on the outcome beyond the belief.

    Notes
    -----
    **What is tested.** Action :math:`a_k` (level :math:`k = 0, \dots, K-1` of
    ``order``) pays :math:`c_k + s_k p` in expectation at belief :math:`p`, with
    :math:`s_0 \le s_1 \le \dots \le s_{K-1}`. An agent choosing
    :math:`\arg\max_k \{c_k + s_k p + \varepsilon_k\}`, with noise
    :math:`\varepsilon` drawn from any distribution that does not depend on :math:`p`
    (it may depend on the context), has for every draw of :math:`\varepsilon` a
    utility with increasing differences in :math:`(k, p)`, so its chosen level is
    non-decreasing in :math:`p` (Topkis 1978; Milgrom and Shannon 1994). Hence for every
    :math:`k \ge 1`

    .. math:: F_k(p) = P(\text{level} \ge k \mid p) \quad \text{is non-decreasing in } p,

    the null hypothesis of the test. For a scalar belief, cyclic monotonicity of the
    choice probabilities (they are the gradient of the convex surplus
    :math:`W(v) = E \max_k (v_k + \varepsilon_k)`, Rochet 1987, McFadden 1981) along
    :math:`v = c + s p` says only that :math:`\sum_k s_k P_k(p)`, the expected slope of
    the chosen action, is non-decreasing; the cumulative condition implies it for every
    ordered slope vector (:math:`\sum_k s_k P_k = s_0 + \sum_{k \ge 1} (s_k - s_{k-1})
    F_k`), and is what the ordering of the actions adds. With two actions it is the
    monotonicity of one share; unlike :func:`monotonicity_test`, whose pairwise shares
    ``P(a | a or b)`` are monotone only under IIA, it holds for nested logits, probits
    and context-dependent tastes. It does not hold when the noise depends on the belief
    (an agent more erratic at middling beliefs may still comply; one that trades "yes"
    for "defer" at high beliefs does not).

    **The statistic.** For each :math:`k`, the binary outcome "level :math:`\ge k`" of
    every row enters the localised comparisons of :func:`monotonicity_test`'s default
    method: at every boundary between distinct belief values a lower and an upper
    window, each holding ``min_contexts``, :math:`2\times`, :math:`4\times`, ... contexts,
    are compared by

    .. math:: z = \frac{\hat F_{k,low} - \hat F_{k,high}}{\sqrt{\max(V_{jk}, V_0)}},

    :math:`V_{jk}` the delete-one-context jackknife variance and :math:`V_0` a floor at
    the pooled share with the estimated intra-context correlation. The statistic is the
    largest :math:`z` over every level and comparison. Under the null every expected fall
    is :math:`\le 0`, so the largest centred statistic bounds it; its distribution comes
    from one Gaussian multiplier per context applied to the jackknife contributions of
    every comparison of every level (Chernozhukov, Chetverikov and Kato 2013), which
    keeps their correlation (the outcomes of one row are nested). The p-value is Besag
    and Clifford's sequential :math:`(1 + \#\{T^* \ge T\}) / (1 + B)`; a level's p-value
    and the comparisons' adjusted p-values are read off the same draws. Sizes measured
    on logit and nested-logit agents with context shocks, heaped beliefs and unequal
    repetitions are in ``docs/cyclic_monotonicity.md``.

    **Distance to rationalisability.** Over quantile bins :math:`b` of the belief, the
    cumulative shares :math:`\hat F_{bk}` are replaced by their weighted isotonic fits
    :math:`\tilde F_{bk}` (pool adjacent violators, weights the bins' rows; the fit
    keeps :math:`\tilde F_{b,k} \ge \tilde F_{b,k+1}`, so it is a choice distribution);
    ``distance`` :math:`= \sum_b w_b \sum_k |\hat F_{bk} - \tilde F_{bk}| / \sum_b w_b`,
    the mass of choices that must move (in steps between adjacent levels) for the binned
    shares to be rationalisable. It is descriptive: sampling noise makes it positive
    under the null, and falls within a bin are invisible to it.

    References
    ----------
    Topkis, D. M. (1978). Minimizing a submodular function on a lattice. Operations
    Research 26(2), 305-321.

    Milgrom, P. and Shannon, C. (1994). Monotone comparative statics. Econometrica
    62(1), 157-180.

    Rochet, J.-C. (1987). A necessary and sufficient condition for rationalizability in a
    quasi-linear context. J. Math. Econ. 16(2), 191-200.

    McFadden, D. (1981). Econometric models of probabilistic choice. In Manski and
    McFadden (eds.), Structural Analysis of Discrete Data, MIT Press, 198-272.

    Chernozhukov, V., Chetverikov, D. and Kato, K. (2013). Gaussian approximations and
    multiplier bootstrap for maxima of sums of high-dimensional random vectors. Ann.
    Statist. 41(6), 2786-2819.

    Besag, J. and Clifford, P. (1991). Sequential Monte Carlo p-values. Biometrika
    78(2), 301-304.

    The decision-coherence paper (design notes, docs/design.md), Remark 3.7.

    Examples
    --------
    >>> import coherence
    >>> study = coherence.simulate("rational", n_contexts=300, rng=0)
    >>> res = coherence.cyclic_monotonicity_test(study.data, n_resamples=999, rng=0)
    >>> res.table["threshold"].tolist()
    ['defer', 'yes']
    >>> bool(res.pvalue > 0.05)
    True
    """
    (b, levels, groups, group, order_t, n_bins, n_resamples, min_contexts,
     gen) = _cyclic_monotonicity_test_iv(data, belief, action, group, order, n_bins,
                                         n_resamples, min_contexts, rng)
    if 1.0 / (n_resamples + 1.0) > ALPHA:
        warnings.warn(f"{_OWNER}: with n_resamples={n_resamples} the smallest p-value the "
                      f"test can return is {1.0 / (n_resamples + 1.0):.3g}, above {ALPHA}.",
                      SmallSampleWarning, stacklevel=2)
    n_levels = len(order_t)
    _warn_absent(order_t, levels, action)
    n_groups = int(groups.max()) + 1
    # canonical row order: the input's order is irrelevant
    canon = np.lexsort((levels, b, groups))
    b, levels, groups = b[canon], levels[canon], groups[canon]
    outcomes = cumulative_outcomes(levels, n_levels)
    n_contexts = int(np.unique(groups).size)
    rows: list[dict[str, Any]] = []
    parts: list[LocalComparisons | None] = []
    distinct = np.unique(b).size
    for k in range(1, n_levels):
        y = outcomes[:, k - 1]
        chosen = int(y.sum())
        reason = ""
        if chosen == 0:
            reason = f"no row chose {order_t[k]!r} or an action above it"
        elif chosen == len(y):
            reason = f"every row chose {order_t[k]!r} or an action above it"
        elif distinct < 2:
            reason = "one distinct belief value"
        found: LocalComparisons | None = None
        if not reason:
            found = local_comparisons(b, y, groups, n_groups, min_contexts)
            if len(found) == 0:
                found = None
                reason = (f"too few contexts for two windows of {max(3, min_contexts // 2)} "
                          "contexts each side of a belief value")
        if reason:
            warnings.warn(f"{_OWNER}: level {k} ({order_t[k]!r} or above) is not testable: "
                          f"{reason}.", DegenerateDataWarning, stacklevel=2)
        parts.append(found)
        rows.append({"level": k, "threshold": order_t[k], "n_obs": len(y),
                     "n_contexts": n_contexts, "share": chosen / len(y),
                     "n_comparisons": 0 if found is None else len(found),
                     "statistic": math.nan if found is None else float(found.z.max()),
                     "testable": found is not None, "reason": reason})
    note = small_study_note(_OWNER, n_groups, min_contexts)
    if note is not None and any(p is not None for p in parts):
        warnings.warn(note, SmallSampleWarning, stacklevel=2)
    p_global, level_p, adjusted, n_draws = local_calibration(parts, n_groups, n_resamples,
                                                             gen)
    for row, p in zip(rows, level_p, strict=True):
        row["pvalue"] = p
    table = pd.DataFrame(rows, columns=list(LEVEL_COLUMNS))
    comparisons = _comparison_frame(parts, order_t, adjusted)
    stats = table["statistic"].to_numpy(dtype=float)
    statistic = float(np.nanmax(stats)) if np.isfinite(stats).any() else math.nan
    distance, bins = _binned(b, outcomes, order_t, n_bins)
    return CyclicMonotonicityResult(
        statistic=statistic, pvalue=float(p_global),
        confidence_interval=ConfidenceInterval(math.nan, math.nan, 0.95), n_obs=len(b),
        method="local max-T", order=order_t, group=group, n_contexts=n_contexts,
        distance=distance, n_bins=n_bins, n_resamples=n_resamples, n_draws=int(n_draws),
        min_contexts=min_contexts, table=table, comparison_table=comparisons,
        bin_table=bins)


def _warn_absent(order: tuple[Any, ...], levels: np.ndarray, action: str) -> None:
    """Warn of actions of ``order`` between the lowest and the highest chosen that no row
    chose: the cumulative outcome of such a level is that of the level above, so the
    table repeats it without a word (an action below the lowest chosen one, or above the
    highest, leaves a level that every row, or none, reaches: untestable, warned apart)."""
    chosen = np.bincount(levels, minlength=len(order)) > 0
    absent = [a for k, a in enumerate(order)
              if not chosen[k] and levels.min() < k < levels.max()]
    if absent:  # stacklevel 3: the caller of cyclic_monotonicity_test
        warnings.warn(f"{_OWNER}: action(s) {', '.join(map(repr, absent))} of 'order' never "
                      f"occur in column '{action}'; a level whose action no row chose has "
                      "the outcome of the level above it (the same rows), so the table "
                      "repeats that level's figures. Leave the action out of 'order' if "
                      "it was not offered.", DegenerateDataWarning, stacklevel=3)


def _comparison_frame(parts: list[LocalComparisons | None], order: tuple[str, ...],
                      adjusted: np.ndarray) -> pd.DataFrame:
    frames = []
    for k, found in enumerate(parts, start=1):
        if found is None:
            continue
        frames.append(pd.DataFrame({
            "level": k, "threshold": order[k], "scale": found.scale.astype(np.int64),
            "belief_low_from": found.lo_low, "belief_low_to": found.lo_high,
            "belief_high_from": found.hi_low, "belief_high_to": found.hi_high,
            "share_low": found.share_lo, "share_high": found.share_hi,
            "n_low": found.n_lo.astype(np.int64), "n_high": found.n_hi.astype(np.int64),
            "difference": found.diff, "se": found.se, "z": found.z}))
    if not frames:
        return pd.DataFrame(columns=list(COMPARISON_COLUMNS))
    out = pd.concat(frames, ignore_index=True)
    out["pvalue_adjusted"] = adjusted
    return out[list(COMPARISON_COLUMNS)]


def _binned(b: np.ndarray, outcomes: np.ndarray, order: tuple[str, ...],
            n_bins: int) -> tuple[float, pd.DataFrame]:
    codes, _ = quantile_bins(b, n_bins)
    n_b = int(codes.max()) + 1
    m = np.bincount(codes, minlength=n_b).astype(np.float64)
    shares = np.column_stack([np.bincount(codes, weights=outcomes[:, j], minlength=n_b) / m
                              for j in range(outcomes.shape[1])])
    distance, fitted = distance_to_monotone(shares, m)
    low = np.array([b[codes == j].min() for j in range(n_b)])
    high = np.array([b[codes == j].max() for j in range(n_b)])
    rows = [{"bin": j, "belief_low": low[j], "belief_high": high[j], "n_obs": int(m[j]),
             "level": k, "threshold": order[k], "share": float(shares[j, k - 1]),
             "fitted": float(fitted[j, k - 1])}
            for j in range(n_b) for k in range(1, len(order))]
    return distance, pd.DataFrame(rows, columns=list(BIN_COLUMNS))
