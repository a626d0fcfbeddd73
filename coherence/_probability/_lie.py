"""The law of iterated expectation: P(y|x) against sum_z P(y|x, z) P(z|x).

:func:`iterated_expectation_check` normalises the agent's error by the same
error of a baseline predictor (:func:`random_forest_baseline`, fitted to
ground truth) and tests the paired difference over contexts with an exact sign test
(or the Wilcoxon signed-rank test); :func:`_plot_lie` draws the ratio plot.
"""

from __future__ import annotations

import numbers
import warnings
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import numpy as np
import pandas as pd

from .._docstrings import fill_doc
from .._parameters import check_float
from .._results import CoherenceResult
from .._results import ConfidenceInterval
from .._rng import RNGLike
from .._validation import case_collisions
from .._validation import collisions_text
from .._validation import listed
from .._validation import param_error
from .._validation import plain_value
from .._warnings import DegenerateDataWarning
from .._warnings import DeprecatedAlias
from .._warnings import SmallSampleWarning
from ._lie_inputs import forest_options
from ._lie_inputs import require_every_state
from ._lie_inputs import require_known_states
from ._lie_inputs import require_matching_labels
from ._lie_inputs import require_one_evidence_per_context


def _median(values: np.ndarray) -> float:
    v = values[~np.isnan(values)]
    return float(np.median(v)) if v.size else float("nan")

__all__ = [
    "LIE_COLUMNS",
    "IteratedExpectationResult",
    "iterated_expectation_check",
    "lie_table",
    "random_forest_baseline",
    "require_same_label_types",
]


# --------------------------------------------------------------------------- iterated expectation
#: Errors below this are treated as exactly 0 (floating-point sums of exact beliefs).
_ZERO_ERROR = 1e-12

#: Columns of the long LIE table, by role (the defaults of iterated_expectation_check).
LIE_COLUMNS: tuple[str, ...] = ("context", "variable", "state", "p_y_given_x", "p_y_given_xz",
                                "p_z_given_x")


@dataclass(frozen=True, slots=True)
class IteratedExpectationResult(CoherenceResult, test_name="iterated_expectation_check",
                                settings=("median_agent_error", "median_baseline_error", "baseline",
                                          "normalize", "n_contexts", "n_resamples", "alternative",
                                          "pvalue_method", "n_agent_worse", "n_informative",
                                          "n_undefined")):
    """Result of :func:`iterated_expectation_check`.

    ``statistic`` is the median, over (context, auxiliary variable) units, of
    the agent's error divided by the baseline's error; its interval is a
    percentile bootstrap over contexts (all variables of a context move
    together). ``pvalue`` is the exact sign test (or, with ``test='wilcoxon'``, the
    Wilcoxon signed-rank test) over contexts of the paired error difference (see
    :func:`iterated_expectation_check`, Notes).

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (context, variable) unit: ``context, variable, agent_error,
        baseline_error, ratio, agent_z_mass, baseline_z_mass`` (the z masses
        are the sums of P(z|x) over the listed states, 1 when coherent).
    median_agent_error, median_baseline_error : float
        Medians of the two errors.
    baseline : str
        ``"table"`` (a supplied baseline table), ``"random_forest"`` (the
        cross-validated default) or ``"estimator"`` (a supplied estimator).
    normalize : bool
        Whether P(z|x) was renormalised to sum to 1 before the sum.
    n_contexts : int
        Number of contexts.
    n_resamples : int
        Bootstrap resamples.
    alternative : str
        The test's alternative (``'greater'``: the agent's error exceeds
        the baseline's).
    pvalue_method : str
        Which test over contexts (the ``test`` argument) gave ``pvalue``: ``'sign'`` or
        ``'wilcoxon'``.
    n_agent_worse, n_informative : int
        Contexts whose mean error difference (agent minus baseline) is
        positive, and contexts where it is not 0 (the sign test's ``k`` and
        ``n``).
    n_undefined : int
        Bootstrap resamples left out of the interval: their median ratio is undefined
        (NaN), every unit drawn having a ratio of 0/0 (both errors 0). A
        :class:`SmallSampleWarning` says so when they are over 1% of ``n_resamples``.
    """

    table: pd.DataFrame = field(default_factory=pd.DataFrame)
    median_agent_error: float = np.nan
    median_baseline_error: float = np.nan
    baseline: str = "table"
    normalize: bool = False
    n_contexts: int = 0
    n_resamples: int = 9999
    alternative: str = "greater"
    pvalue_method: str = "sign"
    n_agent_worse: int = 0
    n_informative: int = 0
    n_undefined: int = 0

    units = DeprecatedAlias("table")

    def per_row(self) -> pd.DataFrame:
        """A copy of the per-(context, variable) table :attr:`table`."""
        return self.table.copy()

    @fill_doc
    def plot(self, ax: Any = None) -> Any:
        """The distribution of the per-unit error ratios, log scale, median marked.

        As the reference paper's Figure 2: one point per (context, variable)
        unit at its ratio :math:`e_{\\mathrm{agent}} / e_{\\mathrm{base}}`
        (jittered vertically, one row per auxiliary variable), a box per
        variable, a dashed line at ratio 1 (as coherent as the baseline) and a
        solid line at the median (:attr:`statistic`) with its interval shaded.
        Ratios that are 0 (agent error below 1e-12), infinite or NaN cannot
        be drawn on a log axis and are counted in the title instead.

        Parameters
        ----------
        %(ax)s

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on. Its first collection holds one point per
            plotted unit, in the row order of :attr:`table`.
        """
        return _plot_lie(self, ax)


def _plot_lie(result: IteratedExpectationResult, ax: Any) -> Any:
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6.0, 3.5))
    units = result.table
    ratio = units["ratio"].to_numpy(dtype=float)
    drawable = np.isfinite(ratio) & (ratio > 0)
    variables = list(pd.unique(units["variable"]))
    row = units["variable"].map({v: i for i, v in enumerate(variables)}).to_numpy(dtype=float)
    # deterministic jitter: the unit's rank within its variable
    jitter = np.zeros(len(units))
    for i in range(len(variables)):
        members = np.flatnonzero(row == i)
        if len(members) > 1:
            jitter[members] = np.linspace(-0.25, 0.25, len(members))
    ax.scatter(ratio[drawable], (row + jitter)[drawable], s=10, alpha=0.5, color="C0",
               linewidths=0)
    for i in range(len(variables)):
        values = ratio[drawable & (row == i)]
        if values.size:
            ax.boxplot(values, positions=[i], orientation="horizontal", widths=0.6,
                       showfliers=False, manage_ticks=False)
    ax.set_xscale("log")
    ax.axvline(1.0, color="0.4", linestyle="--", linewidth=1.0, label="ratio 1")
    if np.isfinite(result.statistic) and result.statistic > 0:
        ax.axvline(result.statistic, color="C3", linewidth=1.5,
                   label=f"median {result.statistic:.3g}")
        ci = result.confidence_interval
        if np.isfinite(ci.low) and np.isfinite(ci.high) and ci.low > 0:
            ax.axvspan(ci.low, ci.high, color="C3", alpha=0.15)
    ax.set_yticks(range(len(variables)), [str(v) for v in variables])
    ax.set_xlabel("agent LIE error / baseline LIE error")
    hidden = int((~drawable).sum())
    ax.set_title("Law of iterated expectation" + (f" ({hidden} unit(s) with ratio 0, inf "
                                                   "or NaN not shown)" if hidden else ""))
    ax.legend(loc="best", fontsize="small")
    return ax


def lie_table(df: pd.DataFrame, cols: dict[str, str], owner: str,
               name: str) -> pd.DataFrame:
    """Validate a long LIE table and return it with the default column names.

    The messages of its columns name the table (``name``) beside ``owner``: the elicited
    and the baseline tables share their column names, so a column and rows alone would
    not say which table to look in."""
    from .._validation import as_dataframe
    from .._validation import check_case_distinct
    from .._validation import column_error
    from .._validation import no_missing
    from .._validation import probability_column
    from .._validation import require_columns

    df = as_dataframe(df, name=name, owner=owner)
    where = f"{owner}, in '{name}'"
    require_columns(df, cols, owner=where)
    if len(df) == 0:
        raise ValueError(param_error(name, owner, "a table with at least one row",
                                     "an empty table"))
    owner = where
    out = pd.DataFrame(index=df.index)
    for role in ("context", "variable", "state"):
        no_missing(df, cols[role], owner=owner)
        # 1 / '1', True / 1, True / 'True': one unit, not two
        check_case_distinct(df, cols[role], owner=owner)
        out[role] = df[cols[role]].astype(object)
    for role in ("p_y_given_x", "p_y_given_xz", "p_z_given_x"):
        out[role] = probability_column(df, cols[role], owner=owner)
    dup = out.duplicated(["context", "variable", "state"]).to_numpy()
    if dup.any():
        labels = [df.index[i] for i in np.flatnonzero(dup)]
        raise ValueError(column_error(cols["state"], "be unique within each (context, "
                                      "variable) (a state listed twice, or written twice as "
                                      "equal numbers, 1 and 1.0)", labels,
                                      df[cols["state"]].to_numpy()[dup], owner=owner))
    spread = out.groupby("context", sort=False)["p_y_given_x"].transform(
        lambda v: v.max() - v.min()).to_numpy()
    bad = np.flatnonzero(spread > 1e-12)
    if len(bad):
        labels = [df.index[i] for i in bad]
        raise ValueError(column_error(cols["p_y_given_x"], "be constant within each context "
                                      "(P(y|x) does not depend on the withheld variable)",
                                      labels, out["p_y_given_x"].to_numpy()[bad], owner=owner))
    return out.reset_index(drop=True)


def _label_kind(value: Any) -> str:
    if isinstance(value, numbers.Number) and not isinstance(value, bool | np.bool_):
        return "numbers"
    return "text" if isinstance(value, str) else type(value).__name__


def require_same_label_types(table: pd.DataFrame, base: pd.DataFrame, cols: dict[str, str],
                              owner: str) -> None:
    """Raise when a key column holds numbers in one table and text in the other (ids read
    back from a CSV as text): the tables' units would never match."""
    for role in ("context", "variable", "state"):
        kinds = [sorted({_label_kind(v) for v in t[role]}) for t in (table, base)]
        if kinds[0] == kinds[1]:
            continue
        clash = case_collisions([*table[role].unique(), *base[role].unique()])
        shown = collisions_text(clash)
        if not shown:  # True in one table, 1 in the other: equal in Python, pooled by unique()
            shown = listed(_bool_number_clashes(table[role], base[role]), sep="; ")
        raise ValueError(
            f"{owner}: column '{cols[role]}' holds {' and '.join(kinds[0])} in 'elicited' "
            f"but {' and '.join(kinds[1])} in 'baseline'"
            + (f" (the same labels typed two ways: {shown})" if shown else "")
            + "; the tables' units are matched on it, so give it one type in both (e.g. "
            f"baseline['{cols[role]}'] = baseline['{cols[role]}'].astype(int)).")


def _bool_number_clashes(first: pd.Series, second: pd.Series) -> list[str]:
    """``'True' / 1``-style pairs of a bool in one column and an equal number in the other
    (``True == 1``), which ``unique()`` and :func:`case_collisions` pool."""
    out = []
    for a, b in ((first, second), (second, first)):
        bools = {bool(v) for v in a.to_numpy() if isinstance(v, bool | np.bool_)}
        nums = {plain_value(v) for v in b.to_numpy() if _label_kind(v) == "numbers"}
        out += [f"{flag!r} / {n!r}" for flag in sorted(bools) for n in sorted(nums)
                if n == flag and f"{flag!r} / {n!r}" not in out]
    return out


def _lie_errors(table: pd.DataFrame, normalize: bool, owner: str = "iterated_expectation_check",
                name: str = "elicited", column: str = "p_z_given_x") -> pd.DataFrame:
    """|P(y|x) - sum_z P(y|x,z) P(z|x)| per (context, variable). With ``normalize``, a
    unit whose P(z|x) sum to 0 has no mixture: it raises (its error was NaN, and the
    unit left the median and its context the test without a word)."""
    t = table.assign(prod=table["p_y_given_xz"] * table["p_z_given_x"])
    g = t.groupby(["context", "variable"], sort=False)
    agg = g.agg(p_y=("p_y_given_x", "first"), mix=("prod", "sum"), mass=("p_z_given_x", "sum"))
    empty = agg.index[(agg["mass"] <= 0).to_numpy()] if normalize else []
    if len(empty):
        raise ValueError(
            f"{owner}: normalize=True divides by the sum of '{column}' over the states of z, "
            f"which is 0 for {len(empty)} (context, variable) unit(s) of '{name}' (first: "
            f"{list(empty[:5])}); the normalised mixture is undefined there: give P(z|x) for "
            "those units, or leave normalize=False.")
    if normalize:
        with np.errstate(invalid="ignore", divide="ignore"):
            agg["mix"] = agg["mix"] / agg["mass"]
    agg["error"] = (agg["p_y"] - agg["mix"]).abs()
    return agg.reset_index()


def require_same_states(table: pd.DataFrame, base: pd.DataFrame, owner: str) -> None:
    """Raise unless every (context, variable) unit of ``table`` lists the same states of z in
    ``base``: a state listed in one table only would count as probability 0 in the other."""
    keys = ["context", "variable", "state"]
    units = table[["context", "variable"]].drop_duplicates()
    ref = base[keys].merge(units, on=["context", "variable"], how="inner")
    both = table[keys].merge(ref, on=keys, how="outer", indicator=True)
    odd = both[both["_merge"] != "both"]
    if odd.empty:
        return
    where = {"left_only": "elicited", "right_only": "baseline"}
    n_units = len(odd[["context", "variable"]].drop_duplicates())
    shown = [f"({c!r}, {v!r}) state {z!r} only in '{where[m]}'"
             for c, v, z, m in odd.head(5).itertuples(index=False)]
    more = ", ..." if len(odd) > 5 else ""
    raise ValueError(
        f"{owner}: the states of z listed in 'elicited' and 'baseline' differ for {n_units} "
        f"(context, variable) unit(s), {len(odd)} row(s) (first: {'; '.join(shown)}{more}); "
        "every state of z must be listed in both, with the same labels (a missing state "
        "would count as probability 0).")


def random_forest_baseline(
    ground_truth: Any, contexts: Any, queries: Any, *, evidence: Any, outcome: str = "y",
    context: str = "context", variable: str = "variable", state: str = "state",
    estimator: Any = None, n_estimators: int | None = None,
    min_samples_leaf: tuple[int, ...] | None = None, n_splits: int | None = None,
    states: Any = None, rng: RNGLike = None,
) -> pd.DataFrame:
    """Baseline probabilities for :func:`iterated_expectation_check` from a ground-truth sample.

    Even an estimator fitted to finite data is not exactly coherent, so
    :func:`iterated_expectation_check` sets the agent's gap beside a baseline's. This
    fits that baseline on a ground-truth sample: cross-validated random forests (or a
    scikit-learn classifier of yours) for P(y | x), P(y | x, z) and P(z | x).

    Parameters
    ----------
    ground_truth : pandas.DataFrame
        A sample from the ground-truth distribution: the ``evidence`` columns,
        every auxiliary variable named in ``queries``, and the binary
        ``outcome`` column.
    contexts : pandas.DataFrame
        One row per context: the ``context`` id column and the ``evidence``
        columns (the values that make up x).
    queries : pandas.DataFrame
        The (context, variable, state) rows to predict, e.g. the elicited table.
    evidence : list of str
        The columns forming x. Non-numeric columns are one-hot encoded
        (consistently over ground truth and contexts).
    outcome : str, default "y"
        The binary outcome column of ``ground_truth``.
    context, variable, state : str
        Column names in ``contexts`` / ``queries``.
    estimator : scikit-learn classifier, optional
        Used (cloned, fitted once per model, no tuning) instead of the
        cross-validated random forest; the forest's options (``n_estimators``,
        ``min_samples_leaf``, ``n_splits``) are then refused, as they would go unused.
    n_estimators : int, default 200
        Trees per forest (None: the default).
    min_samples_leaf : tuple of int, default (1, 5, 20, 50)
        The grid searched by ``n_splits``-fold cross-validation on log-loss (None: the
        default).
    n_splits : int, default 5
        Folds of the grid search (None: the default).
    states : mapping, optional
        Each variable's states as the network defines them (a column name to a sequence
        of its states, e.g. ``bayesnets.Network.states``). An evidence value of
        ``contexts`` or ``ground_truth``, or a state of ``queries``, that is not among
        its variable's states (a misspelt ``'hihg'``) is then refused; a state that is
        merely absent from the sample is fitted as unseen. Without it, a value the
        ground truth never holds cannot be told from a misspelling and is predicted as
        an unseen category.
    rng : int, numpy.random.Generator or None
        Seeds the forests and the fold assignment. Inside
        ``joblib.parallel_config(n_jobs=k)`` the grid searches' fits run on ``k``
        workers: the same forests, the same baseline.

    Returns
    -------
    pandas.DataFrame
        ``queries``' (context, variable, state) with ``p_y_given_x``,
        ``p_y_given_xz``, ``p_z_given_x`` from the fitted models: one model of
        y on x, and per auxiliary variable z one of y on (x, z) and one of z on x.

    Raises
    ------
    ValueError
        For a missing column, an outcome not 0/1 or of one value only, a missing value
        (NaN, None) in an auxiliary variable's column of ``ground_truth`` or in an evidence
        column of ``contexts``, a context of
        ``queries`` that ``contexts`` lacks or lists twice with different evidence
        (the rows are named), or a label written otherwise than in the
        ground truth: an evidence value of ``contexts`` or a state of ``queries`` that
        differs from one of ``ground_truth`` only in type, case or surrounding spaces
        (``'1'`` and ``1``, or ``True`` and ``1``, which pandas would pool), or a context
        id of ``queries`` written otherwise than in ``contexts`` (the same
        differences), or a variable none of whose queried states the ground truth
        holds (each would count as never seen, P(z|x) = 0); or a (context, variable) unit
        of ``queries`` that leaves out a state the ground truth holds (it would count as
        P(z|x) = 0 in the sum over states); with ``states``, a value not among its
        variable's states (the variable, the values, the rows and the valid states are
        named), or a bool for a variable whose states are not bools.
    TypeError
        For a forest option (``n_estimators``, ``min_samples_leaf``, ``n_splits``) given
        together with ``estimator``.

    See Also
    --------
    iterated_expectation_check : the check whose baseline this is.
    bayesnets.auxiliary : exact ground truth when the data come from a Bayesian network.
    """
    from sklearn.base import clone
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import GridSearchCV
    from sklearn.model_selection import StratifiedKFold

    from .._rng import check_rng
    from .._validation import as_dataframe
    from .._validation import binary_column
    from .._validation import no_missing
    from .._validation import nonempty
    from .._validation import require_columns

    owner = "random_forest_baseline"
    n_estimators, min_samples_leaf, n_splits = forest_options(
        estimator, n_estimators, min_samples_leaf, n_splits, owner)
    gen = check_rng(rng, owner=owner)
    gt = as_dataframe(ground_truth, name="ground_truth", owner=owner)
    ctx = as_dataframe(contexts, name="contexts", owner=owner)
    q = as_dataframe(queries, name="queries", owner=owner)
    for table, name in ((gt, "ground_truth"), (ctx, "contexts"), (q, "queries")):
        nonempty(table, name=name, owner=owner)
    evidence = [evidence] if isinstance(evidence, str) else list(evidence)
    if not evidence:
        raise ValueError(param_error("evidence", owner, "a non-empty list of column names",
                                     evidence))
    require_columns(q, {"context": context, "variable": variable, "state": state}, owner=owner)
    variables = list(pd.unique(q[variable].astype(object)))
    require_columns(gt, [*evidence, outcome, *[str(v) for v in variables]], owner=owner)
    require_columns(ctx, [context, *evidence], owner=owner)
    y = binary_column(gt, outcome, owner=owner)
    # a missing z would be one more state (factorize's code -1) that no query lists: the
    # listed states' P(z|x) would sum below 1 and the baseline's error grow without a word
    no_missing(gt, [str(v) for v in variables], owner=owner)
    if y.min() == y.max():
        raise ValueError(f"Column '{outcome}' (input to {owner}) must hold both 0 and 1; "
                         f"every row is {int(y[0])}.")
    # with the network's states, a value none holds is named with its rows first
    require_known_states(states, gt, ctx, q, evidence, (variable, state), owner)
    require_matching_labels(gt, ctx, q, evidence, variables, variable, state, owner)

    n_gt = len(gt)
    both = pd.concat([gt[evidence], ctx[evidence]], ignore_index=True)
    encoded = pd.get_dummies(both, columns=[c for c in evidence if not
                                            pd.api.types.is_numeric_dtype(both[c])],
                             dtype=float).to_numpy(dtype=float)
    x_gt, x_ctx = encoded[:n_gt], encoded[n_gt:]
    # the sample in a canonical order (rows sorted on everything the models see), so that
    # the forests' bootstrap and folds, hence the baseline, do not depend on its row order
    z_all = {v: pd.factorize(gt[str(v)].astype(object).to_numpy(), sort=True)
             for v in variables}
    keys = [x_gt[:, j] for j in range(x_gt.shape[1])] + [y.astype(float)] + [
        z_all[v][0].astype(float) for v in sorted(variables, key=str)]
    canon = np.lexsort(keys[::-1])
    x_gt, y = x_gt[canon], y[canon]
    z_all = {v: (codes[canon], levels) for v, (codes, levels) in z_all.items()}
    require_one_evidence_per_context(ctx, q, context, evidence, owner)
    ctx_pos = {c: i for i, c in enumerate(ctx[context].astype(object).to_numpy())}
    require_every_state(q, z_all, context, variable, state, owner)

    def fit(features: np.ndarray, target: np.ndarray) -> Any:
        seed = int(gen.integers(2**31 - 1))
        if estimator is not None:
            return clone(estimator).fit(features, target)
        _, counts = np.unique(target, return_counts=True)
        folds = max(2, min(n_splits, int(counts.min())))
        search = GridSearchCV(
            RandomForestClassifier(n_estimators=n_estimators, random_state=seed, n_jobs=1),
            {"min_samples_leaf": list(min_samples_leaf)}, scoring="neg_log_loss",
            cv=StratifiedKFold(folds, shuffle=True, random_state=seed))
        return search.fit(features, target).best_estimator_

    def proba(model: Any, features: np.ndarray, label: Any) -> np.ndarray:
        classes = list(model.classes_)
        if label not in classes:
            return np.zeros(len(features))
        return model.predict_proba(features)[:, classes.index(label)]

    p_y_x = proba(fit(x_gt, y), x_ctx, 1)
    # each variable's models get their seeds in the sorted order of the variables, not in
    # the order the queries list them
    fitted = {}
    for v in sorted(variables, key=str):
        z_codes = z_all[v][0]
        fitted[v] = (fit(x_gt, z_codes), fit(np.column_stack([x_gt, z_codes]), y))
    rows: list[pd.DataFrame] = []
    for v in variables:
        zq = q.loc[(q[variable].astype(object) == v).to_numpy()]
        z_levels = list(z_all[v][1])
        model_z, model_y = fitted[v]
        pz = model_z.predict_proba(x_ctx)
        z_classes = list(model_z.classes_)
        i = np.array([ctx_pos[c] for c in zq[context].astype(object)], dtype=np.int64)
        states = zq[state].astype(object).tolist()
        k = np.array([z_levels.index(s) if s in z_levels else -1 for s in states],
                     dtype=np.int64)
        col = np.array([z_classes.index(c) if c in z_classes else -1 for c in k],
                       dtype=np.int64)
        p_z = np.where(col >= 0, pz[i, np.maximum(col, 0)], 0.0)
        p_yz = proba(model_y, np.column_stack([x_ctx[i], k]), 1)
        # a state never seen in the ground truth: P(z|x) = 0 and P(y|x,z) := P(y|x)
        p_yz = np.where(k >= 0, p_yz, p_y_x[i])
        rows.append(pd.DataFrame({"context": zq[context].to_numpy(), "variable": v,
                                  "state": zq[state].to_numpy(), "p_y_given_x": p_y_x[i],
                                  "p_y_given_xz": p_yz, "p_z_given_x": p_z}))
    return pd.concat(rows, ignore_index=True).loc[:, list(LIE_COLUMNS)]


def iterated_expectation_check(
    elicited: Any, *, baseline: Any = None, ground_truth: Any = None, contexts: Any = None,
    evidence: Any = None, outcome: str | None = None, estimator: Any = None,
    baseline_options: dict[str, Any] | None = None, context: str = "context",
    variable: str = "variable", state: str = "state",
    p_y_given_x: str = "p_y_given_x", p_y_given_xz: str = "p_y_given_xz",
    p_z_given_x: str = "p_z_given_x", normalize: bool = False,
    alternative: str = "greater", test: str = "sign", confidence_level: float = 0.95,
    n_resamples: int = 9999, rng: RNGLike = None,
) -> IteratedExpectationResult:
    r"""Law-of-iterated-expectation check of elicited probabilities.

    A coherent agent's P(y | x) is the average over a withheld variable z of its P(y |
    x, z), weighted by its P(z | x). The check measures how far the elicited numbers are
    from that identity and sets the gap beside a baseline's (exact posteriors, or a
    model fitted to a ground-truth sample), since even a good estimator fitted to finite
    data is not exactly coherent; the statistic is the median ratio of the two, with a
    bootstrap interval over contexts.

    Parameters
    ----------
    elicited : pandas.DataFrame
        The long table of elicited probabilities, one row per (context,
        auxiliary variable z, state of z), with columns ``context``,
        ``variable`` (the name of z, withheld from the context's evidence),
        ``state`` (one value of z), ``p_y_given_x`` (the agent's P(y=1 | x),
        the same on every row of a context), ``p_y_given_xz`` (P(y=1 | x,
        z = state)) and ``p_z_given_x`` (P(z = state | x)). Every state of z
        must be listed.
    baseline : pandas.DataFrame, optional
        The same layout (and column names) holding a reference predictor's
        probabilities for the same (context, variable, state) rows: exact
        Bayesian-network posteriors, or any model's predictions. It may hold
        further (context, variable) units; for each unit of ``elicited`` it must
        list the same states (else ``ValueError`` naming them).
    ground_truth, contexts, evidence, outcome, estimator
        Without ``baseline`` (with it, passing any of them raises ``ValueError``, as
        ``baseline_options`` does), the baseline is fitted by
        :func:`random_forest_baseline` on the ground-truth sample
        ``ground_truth`` (columns ``evidence``, every auxiliary variable and
        ``outcome``), for the contexts described by ``contexts`` (the
        ``context`` id and ``evidence`` columns); ``outcome`` left None means
        ``"y"``; ``estimator`` replaces the
        cross-validated random forest by a user's scikit-learn classifier. States and
        evidence must be written as in ``ground_truth`` (``1``, not ``'1'``): a
        ``ValueError`` names those written otherwise.
    baseline_options : dict, optional
        Further keyword arguments of :func:`random_forest_baseline`
        (``n_estimators``, ``min_samples_leaf``, ``n_splits``, not with ``estimator``;
        ``states``, the network's states, to refuse a misspelt evidence value).
    context, variable, state, p_y_given_x, p_y_given_xz, p_z_given_x : str
        Column names of ``elicited`` (and ``baseline``).
    normalize : bool, default False
        Divide :math:`\sum_z P(y|x,z) P(z|x)` by :math:`\sum_z P(z|x)` (use
        when the elicited P(z|x) are known not to sum to 1 and only the
        mixture is to be judged). A unit whose P(z|x) sum to 0 then raises
        ``ValueError`` (the mixture is undefined there).
    alternative : {'greater', 'less', 'two-sided'}, default 'greater'
        Alternative of the test: ``'greater'``, the agent's error
        tends to exceed the baseline's (null: it does not).
    test : {'sign', 'wilcoxon'}, default 'sign'
        The test over contexts of the paired error differences: the exact sign test,
        valid whatever the differences' distribution (null: their median is at most
        0), or the Wilcoxon signed-rank test (:func:`scipy.stats.wilcoxon`), valid
        when the differences are symmetric under the null, as when agent and baseline
        are exchangeable (two conditions of one agent, one of which is the baseline),
        and more powerful there (Notes).
    confidence_level : float, default 0.95
        Level of the bootstrap interval of the median ratio (the expanded percentile
        interval, see Notes).
    n_resamples : int, default 9999
        Bootstrap resamples (contexts drawn with replacement).
    rng : int, numpy.random.Generator or None
        Randomness of the bootstrap (and of the forests).

    Returns
    -------
    IteratedExpectationResult
        ``statistic`` is the median ratio of the agent's error to the
        baseline's; per-unit values are in ``units``.

    Warns
    -----
    DegenerateDataWarning
        When a baseline error is 0 (below 1e-12; the ratio is then infinite, or NaN when the
        agent's error is 0 too, and NaN ratios are left out of the median); when the
        agent's and the baseline's errors are equal in every context (no informative
        context: ``pvalue`` is NaN).
    SmallSampleWarning
        With one context: the bootstrap over contexts has no interval (NaN). When more
        than 1% of the bootstrap resamples have an undefined median ratio (every unit
        drawn 0/0) and are left out of the interval (``n_undefined`` counts them).

    See Also
    --------
    random_forest_baseline : the baseline probabilities this check compares against.
    total_probability_check : the law of total probability for one binary condition.
    report : this test and the others on every (model, dataset) cell.
    bayesnets.lie_study : a simulated study with exact ground truth for this check.
    elicitation.run_lie : elicit the quantities this check needs from a model.

    Notes
    -----
    For a context x and an auxiliary variable z withheld from it, coherent
    beliefs satisfy the law of iterated expectation
    :math:`P(y|x) = \sum_z P(y | x, z)\, P(z | x)`. The error of a unit is

    .. math::

        e_{\mathrm{agent}}(x, z) = \Big| P(y|x) - \sum_z P(y|x,z)\,P(z|x) \Big|

    from the elicited numbers, and :math:`e_{\mathrm{base}}(x, z)` the same
    quantity from the baseline. Even a good estimator fitted to finite data
    is not exactly coherent, so the ratio
    :math:`r = e_{\mathrm{agent}} / e_{\mathrm{base}}` says how much less
    coherent the agent is than a statistical model of the same ground truth;
    the summary is the median of r over units, as in the reference paper's
    Figure 2. The default baseline is a random forest whose
    ``min_samples_leaf`` is chosen by 5-fold cross-validated log-loss; an
    exact baseline (a Bayesian network's posteriors) has error 0, so use it to
    report :math:`e_{\mathrm{agent}}` itself, not the ratio.

    The interval draws the :math:`n` contexts with replacement ``n_resamples``
    times and takes the expanded percentile interval of the resampled median
    ratios (Hesterberg, 2015): the percentiles at the level whose normal
    quantile is :math:`\sqrt{n/(n-1)}\, t_{n-1}` instead of :math:`z`, which
    widens the plain percentile interval by about 6% at 30 contexts and 2% at
    100. The plain interval covered 0.906 at 10 contexts and 0.925 at 30 in the
    validation. The contexts are drawn in the sorted order of their ids, so the
    interval does not depend on the order of the rows but, for one ``rng``, does
    depend on how the ids are written: ids 0..19 and the same contexts named
    ``'c0'``..``'c19'`` (which sort ``'c0', 'c1', 'c10', ...``) draw other
    resamples (an upper end of 4.57 against 4.48 on one table, 999 resamples), a
    Monte Carlo difference that more resamples shrink. An order free of the ids
    would change the draws, and with them the published figures, of every
    seeded study; the median ratio and ``pvalue`` do not depend on the ids.

    The median ratio and its interval describe; ``pvalue`` tests. For each
    context :math:`c`, let :math:`d_c` be the mean over its auxiliary
    variables of :math:`e_{\mathrm{agent}} - e_{\mathrm{base}}`; contexts
    with :math:`|d_c| < 10^{-12}` are dropped, :math:`k` of the remaining
    :math:`n` have :math:`d_c > 0`, and ``pvalue`` is the exact binomial
    (sign) test of :math:`k` against :math:`\mathrm{Bin}(n, 1/2)`
    (:func:`scipy.stats.binomtest`). With ``alternative='greater'`` the null
    is "the median of :math:`d_c` is at most 0": the agent is no less
    coherent than the baseline. Contexts are the independent units (a
    context's variables share its P(y|x)); the test is exact when the
    :math:`d_c` are independent given the baseline, and conservative for
    :math:`P(d_c > 0) < 1/2`. It is a test of the paired differences, not of
    the median ratio: the two can disagree when the errors' scales differ
    across contexts. With ``test='wilcoxon'`` the p-value is the Wilcoxon
    signed-rank test of the same :math:`d_c` (exact up to 50 contexts without ties,
    else its normal approximation), whose null is that the :math:`d_c` are symmetric
    about 0: it holds when agent and baseline are exchangeable, not in general against
    a fitted baseline (a forest's errors and an agent's need not be spread alike). On
    exchangeable nulls both tests hold their size (``benchmarks/validate_lie.py``);
    against Prelec-weighted agents at 30 and 100 contexts the Wilcoxon test finds the
    violation more often where neither is near 0 or 1 (0.715 against 0.583 at
    :math:`\gamma` = 0.8 and 100 contexts, 0.892 against 0.785 at 0.6 and 30). The
    figures are in the validation page of the documentation.

    References
    ----------
    Hesterberg, T. C. (2015). What teachers should know about the bootstrap:
    resampling in the undergraduate statistics curriculum. *The American
    Statistician* 69(4), 371-386.

    Examples
    --------
    >>> import pandas as pd
    >>> from coherence import iterated_expectation_check
    >>> elicited = pd.DataFrame({
    ...     "context": [1, 1, 2, 2], "variable": ["z"] * 4, "state": [0, 1, 0, 1],
    ...     "p_y_given_x": [0.5, 0.5, 0.2, 0.2], "p_y_given_xz": [0.3, 0.8, 0.1, 0.4],
    ...     "p_z_given_x": [0.6, 0.4, 0.5, 0.5]})
    >>> base = elicited.assign(p_y_given_x=[0.52, 0.52, 0.27, 0.27])
    >>> res = iterated_expectation_check(elicited, baseline=base, rng=0)
    >>> res.table[["agent_error", "baseline_error", "ratio"]].round(3).values.tolist()
    [[0.0, 0.02, 0.0], [0.05, 0.02, 2.5]]
    >>> round(res.statistic, 3)
    1.25
    """
    from .._parameters import check_choice
    from .._parameters import check_int
    from .._rng import check_rng

    owner = "iterated_expectation_check"
    confidence_level = check_float(confidence_level, "confidence_level", owner, low=0.0,
                                   high=1.0, low_open=True, high_open=True)
    n_resamples = check_int(n_resamples, "n_resamples", owner, low=1)
    alternative = check_choice(alternative, "alternative", owner,
                               ("greater", "less", "two-sided"))
    test = check_choice(test, "test", owner, ("sign", "wilcoxon"))
    if not isinstance(normalize, bool):
        raise TypeError(param_error("normalize", owner, "a bool", normalize))
    gen = check_rng(rng, owner=owner)
    cols = {"context": context, "variable": variable, "state": state,
            "p_y_given_x": p_y_given_x, "p_y_given_xz": p_y_given_xz,
            "p_z_given_x": p_z_given_x}
    table = lie_table(elicited, cols, owner, "elicited")
    if baseline is not None:
        _require_no_forest_inputs(owner, ground_truth, contexts, evidence, outcome,
                                  estimator, baseline_options)
        base = lie_table(baseline, cols, owner, "baseline")
        kind = "table"
    else:
        if ground_truth is None or contexts is None or evidence is None:
            raise ValueError(param_error(
                "baseline", owner, "a table, or else 'ground_truth', 'contexts' and "
                "'evidence' must all be given", None))
        base = random_forest_baseline(
            ground_truth, contexts, table.rename(columns={"context": context,
                                                          "variable": variable,
                                                          "state": state}),
            evidence=evidence, outcome="y" if outcome is None else outcome,
            context=context, variable=variable,
            state=state, estimator=estimator, rng=gen, **(baseline_options or {}))
        kind = "estimator" if estimator is not None else "random_forest"

    require_same_label_types(table, base, cols, owner)
    agent = _lie_errors(table, normalize, owner, "elicited", p_z_given_x)
    ref = _lie_errors(base, normalize, owner, "baseline", p_z_given_x)
    keys = ["context", "variable"]
    units = agent.merge(ref, on=keys, how="left", suffixes=("_agent", "_base"))
    lost = units["error_base"].isna().to_numpy()
    if lost.any():
        shown = units.loc[lost, keys].head(5).to_records(index=False).tolist()
        raise ValueError(f"{owner}: the baseline has no rows for {int(lost.sum())} (context, "
                         f"variable) unit(s) of 'elicited' (first: {shown}).")
    require_same_states(table, base, owner)
    # errors below 1e-12 are rounding of an exact identity: exactly 0
    e_agent = units["error_agent"].to_numpy(dtype=float)
    e_agent = np.where(e_agent < _ZERO_ERROR, 0.0, e_agent)
    e_base = units["error_base"].to_numpy(dtype=float)
    e_base = np.where(e_base < _ZERO_ERROR, 0.0, e_base)
    zero = e_base < _ZERO_ERROR
    if np.any(zero):
        warnings.warn(f"{owner}: the baseline error is 0 (below {_ZERO_ERROR:g}) for "
                      f"{int(np.sum(zero))} unit(s); their ratio is inf (or NaN when the "
                      "agent's error is 0 too).", DegenerateDataWarning, stacklevel=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(zero, np.where(e_agent < _ZERO_ERROR, np.nan, np.inf),
                         e_agent / np.where(zero, 1.0, e_base))
    out = pd.DataFrame({
        "context": units["context"].to_numpy(), "variable": units["variable"].to_numpy(),
        "agent_error": e_agent, "baseline_error": e_base, "ratio": ratio,
        "agent_z_mass": units["mass_agent"].to_numpy(dtype=float),
        "baseline_z_mass": units["mass_base"].to_numpy(dtype=float)})

    from .._resampling import sorted_codes

    codes = sorted_codes(out["context"])
    n_ctx = int(codes.max()) + 1
    statistic = _median(ratio)
    low, high, n_undefined = _ratio_interval(ratio, codes, n_resamples, confidence_level,
                                             gen, owner)
    diff = np.bincount(codes, weights=e_agent - e_base, minlength=n_ctx) / np.bincount(
        codes, minlength=n_ctx)
    informative = np.abs(diff) >= _ZERO_ERROR
    n_inf = int(informative.sum())
    k = int((diff[informative] > 0).sum())
    pvalue = context_pvalue(diff[informative], test, alternative)
    _warn_few_contexts(owner, n_ctx, n_inf)
    return IteratedExpectationResult(
        statistic=statistic, pvalue=pvalue,
        confidence_interval=ConfidenceInterval(low, high, confidence_level), n_obs=len(out),
        method="median error ratio, context bootstrap expanded percentile interval; "
               f"{_TESTS[test]} over contexts", table=out,
        median_agent_error=_median(e_agent), median_baseline_error=_median(e_base),
        baseline=kind, normalize=normalize, n_contexts=n_ctx, n_resamples=n_resamples,
        alternative=alternative, pvalue_method=test, n_agent_worse=k, n_informative=n_inf,
        n_undefined=n_undefined)


def _ratio_interval(ratio: np.ndarray, codes: np.ndarray, n_resamples: int,
                    confidence_level: float, gen: np.random.Generator,
                    owner: str) -> tuple[float, float, int]:
    """The context bootstrap's expanded percentile interval of the median ratio, and the
    resamples left out of it (median undefined: every unit drawn 0/0), warned of over 1%
    (unless every ratio is 0/0: the median ratio itself is then NaN, said already)."""
    from .._resampling import LEFT_OUT_SHARE
    from .._resampling import cluster_draws
    from .._resampling import cluster_resample_rows
    from .._resampling import expanded_level
    from .._resampling import percentile_interval

    n_ctx = int(codes.max()) + 1
    rows, offsets = cluster_resample_rows(codes, cluster_draws(n_ctx, n_resamples, gen))
    boot = np.array([_median(ratio[rows[offsets[b]:offsets[b + 1]]])
                     for b in range(n_resamples)])
    if n_ctx < 2:
        return np.nan, np.nan, 0
    # a resample's median ratio may be inf (a baseline error of 0): percentile_interval
    # gives an end between two infinite medians as inf, and leaves out NaN medians
    low, high = percentile_interval(boot, expanded_level(confidence_level, n_ctx))
    n_undefined = int(np.isnan(boot).sum())
    if n_undefined > LEFT_OUT_SHARE * n_resamples and not np.isnan(_median(ratio)):
        warnings.warn(f"{owner}: {n_undefined} of {n_resamples} bootstrap resamples "
                      f"({n_undefined / n_resamples:.1%}) are left out of the interval: "
                      "every unit drawn has a ratio of 0/0 (both errors 0), so their median "
                      "ratio is undefined and the interval rests on the other resamples "
                      "only ('n_undefined' counts them).", SmallSampleWarning, stacklevel=3)
    return low, high, n_undefined


def _require_no_forest_inputs(owner: str, *values: Any) -> None:
    """Refuse the random forest's inputs (``ground_truth, contexts, evidence, outcome,
    estimator, baseline_options``, in this order) next to a baseline table: they would go
    unused (the table is the baseline) without a word."""
    names = ("ground_truth", "contexts", "evidence", "outcome", "estimator",
             "baseline_options")
    unused = [name for name, value in zip(names, values, strict=True) if value is not None]
    if unused:
        raise ValueError(param_error(
            "baseline", owner, "None when " + ", ".join(map(repr, unused)) + " "
            + ("is" if len(unused) == 1 else "are") + " given (they fit the random "
            "forest baseline, which a baseline table replaces): give one or the other",
            "a table"))


def _warn_few_contexts(owner: str, n_contexts: int, n_informative: int) -> None:
    """Say why the interval or the p-value is NaN: one context gives no bootstrap over
    contexts; contexts whose agent and baseline errors are all equal give no test."""
    if n_contexts < 2:
        warnings.warn(f"{owner}: one context; the bootstrap over contexts needs two or more, "
                      "so the interval is NaN, and the test over one context cannot reject "
                      "at any usual level.", SmallSampleWarning, stacklevel=3)
    if n_informative == 0:
        warnings.warn(f"{owner}: the agent's and the baseline's errors are equal (within "
                      f"{_ZERO_ERROR:g}) in all {n_contexts} context(s); the test over "
                      "contexts has nothing to count, so pvalue is NaN.",
                      DegenerateDataWarning, stacklevel=3)


#: the tests over contexts, as ``method`` names them
_TESTS = {"sign": "sign test", "wilcoxon": "Wilcoxon signed-rank test"}


def context_pvalue(diff: np.ndarray, test: str, alternative: str) -> float:
    """The p-value over contexts of the informative (non-zero) differences ``diff``: the
    exact sign test of how many are positive, or the Wilcoxon signed-rank test; NaN
    without any."""
    if diff.size == 0:
        return np.nan
    from scipy.stats import binomtest
    from scipy.stats import wilcoxon

    if test == "sign":
        k = int((diff > 0).sum())
        return float(binomtest(k, diff.size, 0.5, alternative=alternative).pvalue)
    return float(wilcoxon(diff, alternative=alternative).pvalue)
