"""Independence of irrelevant alternatives (IIA) across menus of the same context.

The monotone pairwise-choice test reads the share of ``a1`` among the rows that chose
``a1`` or ``a2`` as the agent's preference between the two. That reading assumes IIA: the
odds of choosing ``a1`` over ``a2`` do not depend on which other actions are offered. This
module tests that assumption from choices elicited under several menus of the same
context: the full menu and menus with actions removed. For every reduced menu and every
pair of its actions, the odds of the pair under the reduced menu are compared with the
odds under the full menu within each context (a stratified, Mantel-Haenszel-type score);
contexts are the unit of inference (a context-level sign-flip null), and the comparisons
are tested jointly by the step-down max-T procedure, which also gives the share of
comparisons that violate IIA with a lower confidence bound.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._parameters import check_resampling
from .._resampling import cluster_draw_chunks
from .._resampling import cluster_weights
from .._resampling import group_codes
from .._resampling import monte_carlo_pvalue
from .._resampling import percentile_interval
from .._results import CoherenceResult
from .._results import ConfidenceInterval
from .._rng import RNGLike
from .._rng import check_rng
from .._text import result_level
from .._validation import as_dataframe
from .._validation import check_column_names
from .._validation import column_error
from .._validation import label_column
from .._validation import listed
from .._validation import no_missing
from .._validation import nonempty
from .._validation import param_error
from .._validation import probability_column
from .._validation import require_columns
from .._warnings import DegenerateDataWarning
from .._warnings import DeprecatedAlias
from .._warnings import SmallSampleWarning
from ._design import distinct_roles

__all__ = ["IIAResult", "iia_test"]

_OWNER = "iia_test"
#: The separator of the actions in a ``menu`` cell.
MENU_SEPARATOR = "|"
#: Informative contexts below which a comparison's sign-flip null is coarse (warned).
MIN_CONTEXTS = 20
COMPARISON_COLUMNS: tuple[str, ...] = (
    "comparison", "action_1", "action_2", "menu", "removed", "n_obs", "n_contexts",
    "odds_ratio", "log_odds_ratio", "ci_low", "ci_high", "statistic", "pvalue",
    "pvalue_adjusted", "violates", "testable", "reason",
)
MENU_COLUMNS: tuple[str, ...] = ("menu", "n_actions", "n_obs", "n_contexts", "mean_belief",
                                 "action", "n_chosen", "share")


@dataclass(frozen=True, slots=True)
class IIAResult(CoherenceResult, test_name="iia_test",
                settings=("full_menu", "group", "n_contexts", "n_comparisons", "n_resamples")):
    """Result of :func:`iia_test`.

    Attributes
    ----------
    statistic : float
        The share of testable comparisons (pair of actions x reduced menu) whose odds
        differ significantly from the full menu's: step-down max-T adjusted p-value
        at most ``1 - confidence_level`` (NaN when no comparison is testable).
    pvalue : float
        The omnibus p-value of "IIA holds for every comparison": the max-T test over
        the comparisons (equal to the smallest adjusted p-value).
    confidence_interval : ConfidenceInterval
        ``(statistic, 1)``: a one-sided lower confidence bound for the share of
        comparisons that truly violate IIA (the step-down procedure controls the
        family-wise error, so with probability at least ``confidence_level`` every
        flagged comparison is a violation). The upper end is 1: no finite study can
        show that a violation is exactly zero.
    n_obs : int
        Rows used: rows under the full menu or a menu compared with it.
    method : str
        ``'sign-flip'``: the context-level sign-flip (Rademacher multiplier) null.
    full_menu : str
        The full menu (every action offered on the table's menus), its actions joined
        by ``'|'``.
    group : str
        The context column (the unit of resampling).
    n_contexts : int
        Contexts with at least one used row.
    n_comparisons : int
        Testable comparisons.
    n_resamples : int
        Sign flips (and cluster-bootstrap resamples of the odds-ratio intervals).
    table : pandas.DataFrame
        One row per comparison: ``comparison`` (``'a/b without c'``), ``action_1``,
        ``action_2``, the reduced ``menu`` and the actions it lacks (``removed``), rows
        of the two menus choosing either action (``n_obs``), informative contexts
        (``n_contexts``), the Mantel-Haenszel odds ratio of ``action_1`` over
        ``action_2`` under the reduced menu relative to the full menu (``odds_ratio``,
        1 under IIA), its log and interval (``ci_low``, ``ci_high``, on the log scale:
        the hull of a cluster-bootstrap percentile interval and a cluster-robust Wald
        interval), the studentised score (``statistic``; positive:
        ``action_1`` gains on ``action_2`` when the others are removed), its sign-flip
        p-value, the step-down max-T adjusted p-value, ``violates``, ``testable`` and
        ``reason`` (``''`` when testable). ``action_1`` and ``action_2`` are in sorted
        order whatever the order of a ``pairs`` item (``("yes", "no")`` gives the odds of
        ``'no'`` over ``'yes'``). The interval and the p-value are different
        constructions (the interval for the odds ratio, the p-value the score test), so
        near the level they can disagree: on 40 studies of 40 contexts they did in 2, one
        with ``pvalue`` 0.035 and the interval (-0.007, 1.036) holding 0.
    menu_table : pandas.DataFrame
        One row per menu and offered action: the menu's rows, contexts and mean
        belief (NaN without a belief column), and how often the action was chosen.
    """

    full_menu: str
    group: str
    n_contexts: int
    n_comparisons: int
    n_resamples: int
    table: pd.DataFrame
    menu_table: pd.DataFrame

    comparison_table = DeprecatedAlias("table")

    _summary_table = ("per comparison", ("comparison", "n_contexts", "odds_ratio",
                                         "statistic", "pvalue", "pvalue_adjusted",
                                         "violates"))


# --------------------------------------------------------------------------- array layer
def menu_counts(groups: np.ndarray, actions: np.ndarray, menus: np.ndarray, n_groups: int,
                n_menus: int, n_actions: int) -> np.ndarray:
    """Counts ``(G, M, K)``: rows of context g under menu m choosing action k."""
    flat = (groups * n_menus + menus) * n_actions + actions
    counts = np.bincount(flat, minlength=n_groups * n_menus * n_actions)
    return counts.reshape(n_groups, n_menus, n_actions).astype(np.float64)


def comparison_scores(counts: np.ndarray, full: int, menu: int, a: int,
                      b: int) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    r"""Per-context pieces of one comparison: pair ``(a, b)``, ``menu`` against ``full``.

    Within context c, among the rows choosing a or b: ``x`` choose a under ``menu`` (of
    ``n1`` there), ``y`` choose a under ``full`` (of ``n0``), ``N = n0 + n1``,
    ``t = x + y``. Returns the score :math:`U_c = x - n_1 t / N` (the conditional mean of
    ``x`` given the margins is :math:`n_1 t / N` when the odds are equal under the two
    menus), the Mantel-Haenszel terms :math:`R_c = x (n_0 - y) / N` and
    :math:`S_c = (n_1 - x) y / N`, and whether the context is informative (both menus
    and both actions present among its rows, so that :math:`U_c` can be non-zero).
    Contexts without rows of the pair give zeros.
    """
    x = counts[:, menu, a]
    n1 = x + counts[:, menu, b]
    y = counts[:, full, a]
    n0 = y + counts[:, full, b]
    n = n0 + n1
    t = x + y
    safe = np.where(n > 0, n, 1.0)
    u = np.where(n > 0, x - n1 * t / safe, 0.0)
    r = np.where(n > 0, x * (n0 - y) / safe, 0.0)
    s = np.where(n > 0, (n1 - x) * y / safe, 0.0)
    informative = (n0 > 0) & (n1 > 0) & (t > 0) & (t < n)
    return u, r, s, informative


def sign_flip_null(scores: np.ndarray, n_resamples: int, rng: np.random.Generator,
                   *, max_elements: int = 2_000_000) -> tuple[np.ndarray, np.ndarray]:
    r"""Studentised scores and their context-level sign-flip null.

    ``scores`` is ``(G, J)``: the score of each of J comparisons in each of G contexts,
    mean zero per context under the null. The statistic of comparison j is
    :math:`Z_j = \sum_c U_{cj} / \sqrt{\sum_c U_{cj}^2}`; a resample multiplies every
    context's scores (all comparisons together, keeping their dependence) by one
    Rademacher sign :math:`w_c`: :math:`Z^*_j = \sum_c w_c U_{cj} / \sqrt{\sum_c U_{cj}^2}`
    (:math:`w_c^2 = 1`, so the denominator is the same). A column with no non-zero score
    (every context's counts exactly at their expectation) gives 0 and a null of zeros: no
    deviation, so its p-value is 1 (the caller sets apart the comparisons that no context
    informs). Returns ``(z, null)`` with ``null`` of shape ``(n_resamples, J)``.
    """
    scores = np.ascontiguousarray(scores, dtype=np.float64)
    n_groups, n_comp = scores.shape
    scale = np.sqrt(np.sum(scores ** 2, axis=0))
    ok = scale > 0
    inv = np.where(ok, 1.0 / np.where(ok, scale, 1.0), 0.0)
    z = scores.sum(axis=0) * inv
    null = np.empty((n_resamples, n_comp))
    chunk = max(1, max_elements // max(1, n_groups))
    for start in range(0, n_resamples, chunk):
        stop = min(n_resamples, start + chunk)
        signs = 2.0 * rng.integers(0, 2, size=(stop - start, n_groups)) - 1.0
        null[start:stop] = (signs @ scores) * inv
    return z, null


def step_down_maxt(observed: np.ndarray, null: np.ndarray) -> np.ndarray:
    r"""Westfall-Young step-down max-T adjusted p-values (larger statistics are extreme).

    ``observed`` (J,) and ``null`` (B, J) hold absolute statistics; NaN columns are
    left out (NaN adjusted p-value). With the statistics ordered
    :math:`T_{(1)} \ge \dots \ge T_{(J)}`, the adjusted p-value of the i-th is
    :math:`\max_{k \le i} (1 + \#\{b : \max_{l \ge k} T^*_{b,(l)} \ge T_{(k)}\}) / (1 + B)`
    (the Monte Carlo tie rule of :func:`~coherence._resampling.monte_carlo_pvalue`).
    Controls the family-wise error rate under subset pivotality.
    """
    observed = np.asarray(observed, dtype=np.float64)
    out = np.full(observed.shape, np.nan)
    keep = np.flatnonzero(~np.isnan(observed))
    if keep.size == 0:
        return out
    order = keep[np.argsort(-observed[keep], kind="stable")]
    sub = null[:, order]
    # successive maxima from the least extreme upwards: tail_max[:, k] = max over l >= k
    tail_max = np.maximum.accumulate(sub[:, ::-1], axis=1)[:, ::-1]
    running = 0.0
    for k, j in enumerate(order):
        running = max(running, monte_carlo_pvalue(tail_max[:, k], observed[j]))
        out[j] = running
    return out


# --------------------------------------------------------------------------- public layer
def parse_menus(df: pd.DataFrame, column: str, *, owner: str) -> list[frozenset[str]]:
    """The menu of every row as a set of action labels (cells ``'a|b|c'``)."""
    no_missing(df, column, owner=owner)
    values = df[column].to_numpy(dtype=object)
    bad = np.flatnonzero([not isinstance(v, str) for v in values])
    if len(bad):
        raise ValueError(column_error(column, "hold menus as strings of action labels joined "
                                      f"by {MENU_SEPARATOR!r}", [df.index[i] for i in bad],
                                      [values[i] for i in bad], owner=owner))
    cache: dict[str, frozenset[str]] = {}
    out = []
    empty = []
    for i, v in enumerate(values):
        menu = cache.get(v)
        if menu is None:
            parts = [p.strip() for p in v.split(MENU_SEPARATOR)]
            menu = frozenset(parts) if all(parts) else frozenset()
            cache[v] = menu
        if not menu:
            empty.append(i)
        out.append(menu)
    if empty:
        raise ValueError(column_error(column, "hold non-empty action labels joined by "
                                      f"{MENU_SEPARATOR!r} (no empty label)",
                                      [df.index[i] for i in empty],
                                      [values[i] for i in empty], owner=owner))
    return out


def _is_number(value: Any) -> bool:
    """Whether an action label is a number (not a bool, which compares as its own label)."""
    return (isinstance(value, int | float | np.integer | np.floating)
            and not isinstance(value, bool | np.bool_))


def _number_label(text: str) -> str | None:
    """A menu's label read as a whole number and named as the action column's numbers are
    (``'1'``, ``'1.0'``, ``'1e0'`` -> ``'1'``); None when it is not one."""
    try:
        return str(int(text))
    except ValueError:
        pass
    try:
        value = float(text)
    except ValueError:
        return None
    return str(int(value)) if math.isfinite(value) and value.is_integer() else None


def _pair_label(value: Any, numeric: bool) -> str | None:
    """One action of ``pairs`` named as the actions are (None: not a whole number where the
    actions are numbers)."""
    if not numeric:
        return str(value)
    if isinstance(value, str):
        return _number_label(value.strip())
    if _is_number(value) and math.isfinite(value) and float(value).is_integer():
        return str(int(value))
    return None


def _number_menus(df: pd.DataFrame, column: str, action: str,
                  menus: list[frozenset[str]]) -> list[frozenset[str]]:
    """The menus of a table whose actions are numbers, each label read as a number
    (``'1.0|2'`` offers the actions 1 and 2); a label that is not a whole number raises."""
    cache: dict[frozenset[str], frozenset[str] | None] = {}
    out: list[frozenset[str]] = []
    bad = []
    for i, m in enumerate(menus):
        if m not in cache:
            named = [_number_label(label) for label in m]
            cache[m] = None if None in named else frozenset(n for n in named if n is not None)
        menu = cache[m]
        if menu is None:
            bad.append(i)
        else:
            out.append(menu)
    if bad:
        raise ValueError(column_error(
            column, f"hold whole numbers joined by {MENU_SEPARATOR!r}, as the actions of "
            f"column '{action}' are numbers (a menu's labels are compared with the actions "
            "as numbers: '1' and '1.0' both offer the action 1)",
            [df.index[i] for i in bad], [df[column].iloc[i] for i in bad], owner=_OWNER))
    return out


def _wanted_pairs(pairs: Any, numeric: bool,
                  action: str) -> frozenset[frozenset[str]] | None:
    """The action pairs asked for, as sets of two action names (None: every pair).
    With numeric actions, a pair names them by number."""
    if pairs is None:
        return None
    if isinstance(pairs, str) or not isinstance(pairs, Sequence) or len(pairs) == 0:
        raise TypeError(param_error("pairs", _OWNER, "None or a non-empty sequence of "
                                    "(action, action) pairs", pairs))
    clean: list[frozenset[str]] = []
    for pair in pairs:
        named = ([_pair_label(v, numeric) for v in pair]
                 if not isinstance(pair, str) and isinstance(pair, Sequence) else [])
        known = [n for n in named if n is not None]
        if len(named) != 2 or len(known) != 2 or known[0] == known[1]:
            rule = ("a sequence of pairs of two different action labels"
                    + (f" (whole numbers, as column '{action}' holds)" if numeric else ""))
            raise ValueError(param_error("pairs", _OWNER, rule, pair))
        clean.append(frozenset(known))
    return frozenset(clean)


def _iia_test_iv(data: Any, belief: Any, action: Any, menu: Any, group: Any, pairs: Any,
                 n_resamples: Any, confidence_level: Any, rng: RNGLike) -> tuple[Any, ...]:
    df = as_dataframe(data, owner=_OWNER)
    check_column_names(_OWNER, {"action": action, "menu": menu, "group": group},
                       {"belief": belief})
    distinct_roles({"belief": belief, "action": action, "menu": menu, "group": group}, _OWNER)
    require_columns(df, {"belief": belief, "action": action, "menu": menu, "group": group},
                    owner=_OWNER)
    nonempty(df, owner=_OWNER)
    n_resamples, confidence_level = check_resampling(_OWNER, n_resamples, confidence_level)
    gen = check_rng(rng, owner=_OWNER)
    b = (np.full(len(df), np.nan) if belief is None
         else probability_column(df, belief, owner=_OWNER))
    codes, labels = label_column(df, action, owner=_OWNER, discrete=True)
    # numbers (1, 1.0, and the menus' '1' and '1.0') are compared as numbers, as the
    # action column compares them, and named as integers (label_column: whole numbers)
    numeric = all(_is_number(x) for x in labels.tolist())
    names = [str(int(x)) if numeric else str(x) for x in labels.tolist()]
    menus = parse_menus(df, menu, owner=_OWNER)
    if numeric:
        menus = _number_menus(df, menu, action, menus)
    wanted = _wanted_pairs(pairs, numeric, action)
    chosen = np.array(names, dtype=object)[codes]
    off = np.flatnonzero([a not in m for a, m in zip(chosen, menus, strict=True)])
    if len(off):
        raise ValueError(column_error(
            action, f"hold an action offered by the row's menu (column '{menu}')",
            [df.index[i] for i in off],
            [f"{chosen[i]} not in {df[menu].iloc[i]}" for i in off], owner=_OWNER))
    groups = group_codes(df, group, owner=_OWNER)
    if wanted is not None:
        universe = frozenset().union(*menus)
        absent = sorted({a for pair in wanted for a in pair} - universe)
        if absent:
            raise ValueError(param_error("pairs", _OWNER, "pairs of actions offered in the "
                                         f"table ({', '.join(sorted(universe))})",
                                         pairs))
    return (b, codes, names, menus, groups, group, wanted, n_resamples, confidence_level,
            gen)


def iia_test(
    data: Any,
    *,
    belief: str | None = "belief",
    action: str = "action",
    menu: str = "menu",
    group: str = "context",
    pairs: Sequence[tuple[str, str]] | None = None,
    n_resamples: int = 999,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
) -> IIAResult:
    r"""Test independence of irrelevant alternatives from choices under several menus.

    Under IIA the odds of choosing ``a`` over ``b`` do not depend on which other actions
    are on the menu. The table holds choices elicited, for the same contexts, under the
    full menu (every action of the table) and under reduced menus (for example each menu
    with one action removed). For every reduced menu and every pair of its actions the
    odds of the pair under the reduced menu are compared with those under the full menu,
    within each context; the comparisons are tested together, with contexts as the unit
    of inference.

    Parameters
    ----------
    data : pandas.DataFrame or convertible
        The decision table plus a menu column, one row per elicitation.
    belief : str or None
        The stated-probability column, in [0, 1]; only described per menu in
        :attr:`IIAResult.menu_table` (a menu that moves the stated belief is worth
        knowing about). ``None``: no belief column.
    action : str
        The chosen action; it must be on the row's menu.
    menu : str
        The offered actions joined by ``'|'`` (``'defer|no|yes'``; order and surrounding
        spaces do not matter). The menu holding every action offered on any menu (one
        that nobody chose included) is the full menu, the reference; menus with a single
        action carry no odds and are not used.
        Where the actions are numbers (ints, or floats holding whole numbers), the
        menu's labels are read as numbers too: ``'1|2'`` and ``'1.0|2.0'`` both offer
        the actions 1 and 2, named ``'1'`` and ``'2'`` in the tables; a label that is
        not a whole number is then an error.
    group : str
        The context column. Contexts are the strata of the comparison (the odds may
        differ from context to context) and the unit of the sign-flip null, so any
        dependence among a context's rows is allowed for.
    pairs : sequence of (str, str) or None
        The action pairs to compare (in either order; ``[("yes", "no")]``), under every
        reduced menu that offers both; None (default): every pair of every reduced menu.
        Naming in advance the pairs a later analysis relies on spends the family-wise
        error on them alone. A requested pair that no reduced menu offers has no row
        (a :class:`DegenerateDataWarning` names it).
    n_resamples : int
        Sign flips of the null, and cluster-bootstrap resamples of the odds-ratio
        intervals.
    confidence_level : float
        Level of the odds-ratio intervals and of the lower confidence bound of the share
        of violating comparisons; ``1 - confidence_level`` is the family-wise error rate
        at which a comparison is flagged as a violation.
    rng : int, numpy.random.Generator or None
        Randomness of the sign flips and of the bootstrap.

    Returns
    -------
    IIAResult
        ``statistic`` the share of comparisons flagged, ``pvalue`` the omnibus p-value,
        ``confidence_interval`` the lower confidence bound of the share of violating
        comparisons; per-comparison odds ratios and p-values in ``table``, choice shares
        per menu in ``menu_table``.

    Raises
    ------
    ValueError
        When a row's action is not on its menu, a menu cell is empty or no menu holds
        every action of the table (the full menu).

    Warns
    -----
    DegenerateDataWarning
        When the table has no reduced menu (of the requested ``pairs``), a requested pair
        is on no reduced menu, or a comparison has no informative context (its row says
        why; it is left out of the tests).
    DegenerateDataWarning
        When a testable comparison's odds ratio is 0 or infinite (no context has both a
        choice of one action under the reduced menu and of the other under the full
        menu): ``odds_ratio`` is then 0 or ``inf``, ``log_odds_ratio`` ``-inf`` or
        ``inf``, and the interval unbounded on that side (on both when every bootstrap
        resample is separated the same way).
    SmallSampleWarning
        When a testable comparison has fewer than 20 informative contexts (the sign-flip
        null is coarse and its normal-score reasoning rough; on 20-context studies the
        odds-ratio interval covered the true log odds ratio in 0.95-0.97 of comparisons,
        the percentile interval alone in 0.91-0.94).

    See Also
    --------
    monotonicity_test : the pairwise-share test whose reading of the shares assumes IIA.
    cyclic_monotonicity_test : choice over ordered actions, a test that needs no IIA.
    prompt_consistency : whether stated beliefs change with the wording of the prompt.
    leakage_test : whether choices depend on the context beyond the stated belief.

    Notes
    -----
    For a comparison of the pair ``(a, b)`` under reduced menu :math:`m` against the full
    menu :math:`M`, take in context :math:`c` the rows of the two menus that chose ``a``
    or ``b``: :math:`x_c` of the :math:`n_{1c}` rows under :math:`m` and :math:`y_c` of
    the :math:`n_{0c}` rows under :math:`M` chose ``a``; :math:`N_c = n_{0c} + n_{1c}`,
    :math:`t_c = x_c + y_c`. If the context's odds of ``a`` over ``b`` are the same under
    both menus (IIA), then given the margins :math:`x_c` is hypergeometric, and the score

    .. math:: U_c = x_c - n_{1c} t_c / N_c

    has mean zero, whatever the context's own odds (context shocks, beliefs). The
    comparison's statistic is the self-normalised sum
    :math:`Z = \sum_c U_c / \sqrt{\sum_c U_c^2}` (the Cochran-Mantel-Haenszel score with
    a variance robust to dependence within contexts). Its null comes from flipping the
    sign of each context's scores, all comparisons of a context with one sign (Rademacher
    multipliers: exact when the scores are symmetric, asymptotically valid as the number
    of contexts grows); p-values are :math:`(1 + \#\{|Z^*| \ge |Z|\}) / (1 + B)`. The
    omnibus test takes :math:`\max_j |Z_j|` over the comparisons; the per-comparison
    adjusted p-values are Westfall and Young's step-down max-T, which controls the
    family-wise error, so the number :math:`R` of comparisons flagged at level
    :math:`\alpha = 1 - \text{confidence_level}` is a :math:`1 - \alpha` lower confidence
    bound for the number of comparisons that violate IIA, and :math:`R / J` is reported
    with the interval :math:`[R / J, 1]`.

    The effect size is the Mantel-Haenszel common odds ratio

    .. math:: \widehat{OR} = \frac{\sum_c x_c (n_{0c} - y_c) / N_c}
                                  {\sum_c (n_{1c} - x_c) y_c / N_c},

    the odds of ``a`` over ``b`` under the reduced menu relative to the full menu (1
    under IIA; 2 when removing the other actions doubles the odds of ``a``). The
    interval of its log :math:`\hat\theta` is the hull (lower of the lower ends, higher
    of the upper ends) of two intervals, both with contexts as the unit: the percentile
    interval of a cluster bootstrap of the contexts (a resample whose numerator or
    denominator is 0 has log odds ratio ``-inf`` or ``inf`` and is kept; one with both 0
    is left out), and the Wald interval
    :math:`\hat\theta \pm t_{n-1,\,1-\alpha/2}\, \widehat{se}` with the cluster-robust
    (linearised) standard error
    :math:`\widehat{se}^2 = \frac{n}{n-1} \sum_c (R_c / \sum R - S_c / \sum S)^2` over
    the :math:`n` informative contexts (:math:`R_c`, :math:`S_c` the numerator's and
    denominator's terms). The percentile interval alone was short with few contexts
    (0.920 coverage of the true log odds ratio on 30 contexts x 3, the hull 0.957,
    1,600 studies); the hull is 3-6% wider. A comparison whose odds ratio is 0 or
    infinite keeps the percentile interval, unbounded on that side.

    IIA is a property of each context's choice probabilities: an agent whose choice
    depends on a quantity that varies between elicitations of a context (a belief drawn
    anew each time, say) is a mixture of logits, which need not satisfy IIA within the
    context even when each draw does.

    References
    ----------
    Luce, R. D. (1959). Individual Choice Behavior. Wiley. (The choice axiom.)

    McFadden, D., Train, K. and Tye, W. B. (1977). An application of diagnostic tests for
    the independence from irrelevant alternatives property of the multinomial logit
    model. Transportation Research Record 637, 39-46.

    Mantel, N. and Haenszel, W. (1959). Statistical aspects of the analysis of data from
    retrospective studies of disease. J. Natl. Cancer Inst. 22(4), 719-748.

    Westfall, P. H. and Young, S. S. (1993). Resampling-Based Multiple Testing. Wiley.

    The decision-coherence paper (design notes, docs/design.md), Definition 3.5.

    Examples
    --------
    >>> import pandas as pd
    >>> import coherence
    >>> rows = []
    >>> for c in range(40):
    ...     for menu, acts in (("defer|no|yes", ["yes", "no", "defer", "yes"]),
    ...                        ("no|yes", ["yes", "no", "yes", "no"])):
    ...         rows += [{"context": c, "belief": 0.6, "action": a, "menu": menu}
    ...                  for a in acts[c % 2:] + acts[:c % 2]]
    >>> res = coherence.iia_test(pd.DataFrame(rows), n_resamples=199, rng=0)
    >>> res.table["comparison"].tolist()
    ['no/yes without defer']
    >>> res.n_contexts
    40
    """
    (b, codes, names, menus, groups, group, wanted, n_resamples, confidence_level,
     gen) = _iia_test_iv(data, belief, action, menu, group, pairs, n_resamples,
                         confidence_level, rng)
    universe = frozenset().union(*menus)
    distinct = sorted(set(menus), key=lambda m: (-len(m), sorted(m)))
    if universe not in distinct:
        shown = listed(distinct, show=lambda m: repr(MENU_SEPARATOR.join(sorted(m))))
        raise ValueError(f"{_OWNER}: no menu offers every action of the table "
                         f"({MENU_SEPARATOR.join(sorted(universe))!r}); the full menu is the "
                         f"reference of every comparison. Menus found: {shown}.")
    full_name = MENU_SEPARATOR.join(sorted(universe))
    menu_index = {m: i for i, m in enumerate(distinct)}
    mcodes = np.array([menu_index[m] for m in menus], dtype=np.int64)
    act_index = {a: i for i, a in enumerate(sorted(universe))}
    acodes = np.array([act_index[names[k]] for k in codes], dtype=np.int64)
    n_groups = int(groups.max()) + 1
    counts = menu_counts(groups, acodes, mcodes, n_groups, len(distinct), len(act_index))
    full = menu_index[universe]
    acts = sorted(universe)
    plan = [(m, a, b2) for m in distinct if m != universe and len(m) >= 2
            for a, b2 in _pairs(sorted(m))
            if wanted is None or frozenset((a, b2)) in wanted]
    if not plan:
        warnings.warn(f"{_OWNER}: the table has no menu with two or more actions (of the "
                      f"requested pairs) besides the full menu {full_name!r}; there is "
                      "nothing to compare.",
                      DegenerateDataWarning, stacklevel=2)
    else:
        _warn_unmatched(plan, wanted)
    rows, scores = _comparison_rows(plan, counts, full, menu_index, act_index, acts)
    if rows:
        _test_comparisons(rows, scores, n_groups, n_resamples, confidence_level, gen)
        for row in rows:
            if not row["testable"]:
                warnings.warn(f"{_OWNER}: comparison {row['comparison']} is not testable: "
                              f"{row['reason']}.", DegenerateDataWarning, stacklevel=2)
            elif row["odds_ratio"] in (0.0, math.inf):
                warnings.warn(f"{_OWNER}: comparison {row['comparison']} has odds ratio "
                              f"{row['odds_ratio']:g}: {_separation(row)}, so the odds ratio "
                              "is unbounded and its interval (on the log scale) unbounded on "
                              "that side at least.",
                              DegenerateDataWarning, stacklevel=2)
            if row["testable"] and row["n_contexts"] < MIN_CONTEXTS:
                warnings.warn(f"{_OWNER}: comparison {row['comparison']} has "
                              f"{row['n_contexts']} informative contexts (< {MIN_CONTEXTS}); "
                              "its sign-flip null is coarse and its odds-ratio interval "
                              "may be short.", SmallSampleWarning,
                              stacklevel=2)
    table = pd.DataFrame(rows, columns=list(COMPARISON_COLUMNS))
    n_testable = int(table["testable"].sum())
    if n_testable:
        share = float(table["violates"].sum()) / n_testable
        pvalue = float(np.nanmin(table["pvalue_adjusted"].to_numpy(dtype=float)))
    else:
        share, pvalue = math.nan, math.nan
    used_menus = {full} | {menu_index[m] for m, _, _ in plan}
    used = np.isin(mcodes, list(used_menus))
    menu_table = _menu_table(distinct, mcodes, acodes, acts, groups, b)
    return IIAResult(
        statistic=share, pvalue=pvalue,
        confidence_interval=ConfidenceInterval(share, 1.0 if n_testable else math.nan,
                                               confidence_level),
        n_obs=int(used.sum()), method="sign-flip", full_menu=full_name, group=group,
        n_contexts=int(np.unique(groups[used]).size), n_comparisons=n_testable,
        n_resamples=n_resamples, table=table, menu_table=menu_table)


#: per comparison, the per-context U, R and S scores of :func:`comparison_scores`
_Scores = tuple[list[np.ndarray], list[np.ndarray], list[np.ndarray]]


def _comparison_rows(plan: list[tuple[frozenset[str], str, str]], counts: np.ndarray,
                     full: int, menu_index: dict[frozenset[str], int],
                     act_index: dict[str, int], acts: list[str]
                     ) -> tuple[list[dict[str, Any]], _Scores]:
    """One table row per planned comparison (pair and smaller menu) and the per-context
    scores: ``U`` and the Mantel-Haenszel ``R`` and ``S``, one array per comparison."""
    u_cols: list[np.ndarray] = []
    r_cols: list[np.ndarray] = []
    s_cols: list[np.ndarray] = []
    rows: list[dict[str, Any]] = []
    for m, a, b2 in plan:
        mi, ai, bi = menu_index[m], act_index[a], act_index[b2]
        u, r, s, informative = comparison_scores(counts, full, mi, ai, bi)
        n_inf = int(informative.sum())
        n_obs = int(counts[:, [full, mi]][:, :, [ai, bi]].sum())
        removed = MENU_SEPARATOR.join(x for x in acts if x not in m)
        reason = "" if n_inf else ("no context has rows of the pair under both menus with "
                                    "both actions chosen")
        rows.append({"comparison": f"{a}/{b2} without {removed.replace(MENU_SEPARATOR, ', ')}",
                     "action_1": a, "action_2": b2, "menu": MENU_SEPARATOR.join(sorted(m)),
                     "removed": removed, "n_obs": n_obs, "n_contexts": n_inf,
                     "testable": bool(n_inf), "reason": reason})
        u_cols.append(u)
        r_cols.append(r)
        s_cols.append(s)
    return rows, (u_cols, r_cols, s_cols)


def _test_comparisons(rows: list[dict[str, Any]], scores: _Scores, n_groups: int,
                      n_resamples: int, confidence_level: float,
                      gen: np.random.Generator) -> None:
    """Complete each comparison's row: the pooled odds ratio and its context-bootstrap
    interval, the sign-flip statistic, its p-value and the step-down max-T adjusted
    p-value (NaN where the comparison is not testable)."""
    # the level as read (0.05 for 0.95, not 0.050000000000000044): an adjusted p-value
    # just above 0.05 was flagged beside a shown p above 0.05
    alpha = result_level(confidence_level)
    n_comp = len(rows)
    u_cols, r_cols, s_cols = scores
    u = np.column_stack(u_cols)
    rr, ss = np.column_stack(r_cols), np.column_stack(s_cols)
    z, null = sign_flip_null(u, n_resamples, gen)
    absz, absnull = np.abs(z), np.abs(null)
    testable = np.array([row["testable"] for row in rows])
    absz = np.where(testable, absz, np.nan)
    pvals = np.array([monte_carlo_pvalue(absnull[:, j], absz[j]) for j in range(n_comp)])
    adjusted = step_down_maxt(absz, absnull)
    with np.errstate(divide="ignore", invalid="ignore"):
        odds = rr.sum(axis=0) / ss.sum(axis=0)
    boot = np.empty((n_resamples, n_comp))
    for start, stop, draws in cluster_draw_chunks(n_groups, n_resamples, gen):
        w = cluster_weights(draws, n_groups)
        with np.errstate(divide="ignore", invalid="ignore"):
            # a resample whose R (S) sum is 0 has log odds ratio -inf (+inf): it stays in
            # the percentile interval; only 0 / 0 (no informative context drawn) is NaN
            boot[start:stop] = np.log((w @ rr) / (w @ ss))
    for j, row in enumerate(rows):
        ok = testable[j]
        # a testable comparison has R + S > 0, so its odds ratio is in [0, inf]
        o = float(odds[j]) if ok else math.nan
        log_o = math.nan if o != o else (-math.inf if o == 0.0 else math.log(o))
        low, high = (odds_ratio_interval(log_o, boot[:, j], rr[:, j], ss[:, j],
                                         confidence_level) if ok else (math.nan, math.nan))
        row.update({"odds_ratio": o, "log_odds_ratio": log_o,
                    "ci_low": low, "ci_high": high,
                    "statistic": float(z[j]) if ok else math.nan,
                    "pvalue": float(pvals[j]), "pvalue_adjusted": float(adjusted[j]),
                    "violates": bool(ok and adjusted[j] <= alpha)})


def odds_ratio_interval(log_odds: float, boot: np.ndarray, r: np.ndarray, s: np.ndarray,
                        confidence_level: float) -> tuple[float, float]:
    r"""Interval of a Mantel-Haenszel log odds ratio: the hull of the cluster-bootstrap
    percentile interval and a cluster-robust Wald interval.

    ``boot`` holds the bootstrap log odds ratios (``-inf``, ``inf`` where a resample's
    ``R`` or ``S`` sum is 0, NaN where both are), ``r`` and ``s`` the per-context
    Mantel-Haenszel terms. With :math:`n` contexts with :math:`R_c + S_c > 0` (the
    informative ones) and the linearised influence
    :math:`L_c = R_c / \sum R - S_c / \sum S` of context c on
    :math:`\log(\sum R / \sum S)`, the Wald interval is
    :math:`\hat\theta \pm t_{n-1,\,1-\alpha/2} \sqrt{n/(n-1) \sum_c L_c^2}` (the
    sandwich variance with the small-sample factor and Student quantile of Hesterberg's
    expanded interval), and the interval runs from the lower of the two lower ends to
    the higher of the two upper ends. A separated comparison (``log_odds`` infinite) or
    one with fewer than 2 informative contexts keeps the percentile interval; where
    every resample is separated the same way the interval is ``(-inf, inf)``.

    Where no resample draws an informative context (every one NaN: a few resamples of
    many contexts), the percentile interval is not formed: a separated comparison, or one
    with a single informative context, then has the percentile interval that every
    resample drawing one gives (each resample's log odds ratio is ``log_odds``), and any
    other the Wald interval alone.
    """
    low, high = percentile_interval(boot, confidence_level)
    n = int(np.sum((r + s) > 0))
    one_value = not math.isfinite(log_odds) or n < 2
    if math.isnan(low) and one_value:
        low = high = log_odds
    if low == high and math.isinf(low):
        # every resample separated the same way: the data bound neither end
        return -math.inf, math.inf
    if one_value:
        return low, high
    from scipy.stats import t

    influence = r / r.sum() - s / s.sum()
    se = math.sqrt(n / (n - 1.0) * float(np.sum(influence ** 2)))
    half = float(t.ppf(0.5 + confidence_level / 2.0, n - 1)) * se
    if math.isnan(low):  # min() and max() would keep the NaN: the hull is the Wald interval
        return log_odds - half, log_odds + half
    return min(low, log_odds - half), max(high, log_odds + half)


def _separation(row: dict[str, Any]) -> str:
    """Why a comparison's Mantel-Haenszel odds ratio is 0 or infinite, in words: its
    ``R`` (odds ratio 0) or ``S`` (infinite) terms are 0 in every context."""
    a, b = row["action_1"], row["action_2"]
    under_menu, under_full = (b, a) if row["odds_ratio"] > 1 else (a, b)
    return (f"no context has both a choice of {under_menu!r} under menu {row['menu']!r} "
            f"and a choice of {under_full!r} under the full menu")


def _warn_unmatched(plan: list[tuple[frozenset[str], str, str]],
                    wanted: frozenset[frozenset[str]] | None) -> None:
    """Warn of requested pairs that no reduced menu offers together (they get no row of
    the table: without the warning they would be left out without a word)."""
    if wanted is None:
        return
    missing = sorted("/".join(sorted(p)) for p in wanted - {frozenset((a, b)) for _, a, b in plan})
    if missing:
        warnings.warn(f"{_OWNER}: no reduced menu offers both actions of the requested "
                      f"pair(s) {', '.join(missing)}; they are not compared (the table has "
                      "no row for them).", DegenerateDataWarning, stacklevel=3)


def _pairs(actions: list[str]) -> list[tuple[str, str]]:
    return [(a, b) for i, a in enumerate(actions) for b in actions[i + 1:]]


def _menu_table(distinct: list[frozenset[str]], mcodes: np.ndarray, acodes: np.ndarray,
                acts: list[str], groups: np.ndarray, belief: np.ndarray) -> pd.DataFrame:
    rows = []
    for i, m in enumerate(distinct):
        here = mcodes == i
        n = int(here.sum())
        mean_belief = float(np.mean(belief[here])) if n else math.nan
        for a in sorted(m):
            k = int(np.sum(here & (acodes == acts.index(a))))
            rows.append({"menu": MENU_SEPARATOR.join(sorted(m)), "n_actions": len(m),
                         "n_obs": n, "n_contexts": int(np.unique(groups[here]).size),
                         "mean_belief": mean_belief, "action": a, "n_chosen": k,
                         "share": k / n if n else math.nan})
    return pd.DataFrame(rows, columns=list(MENU_COLUMNS))
