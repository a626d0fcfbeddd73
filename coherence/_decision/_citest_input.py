"""Input checking of :func:`ci_test`: the table's columns read into the design's arrays
and the options checked, before any statistic is computed."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from .._parameters import check_choice
from .._parameters import check_float
from .._parameters import check_int
from .._resampling import group_codes
from .._resampling import row_units
from .._rng import RNGLike
from .._rng import check_rng
from .._validation import as_dataframe
from .._validation import binary_column
from .._validation import finite_column
from .._validation import label_column
from .._validation import param_error
from .._validation import probability_column
from ._cmi import combine
from ._design import evidence_columns
from ._design import numeric_evidence
from ._design import require_design_columns
from ._design import warn_constant_belief

_OWNER = "ci_test"
_METHODS = ("permutation", "bootstrap")
_CI_METHODS = ("auto", "debiased", "subsampling", "bootstrap", None)
_CONDITION_ON = ("row", "context_mean")
_CALIBRATE = ("cross-fitted", "in-sample")
_PERMUTE = ("auto", "outcomes", "contexts", "rows")
_TEST_STATISTICS = ("auto", "plugin", "regression", "combined", "knn")

@dataclass(frozen=True, slots=True)
class Design:
    """Validated arrays of one test (the output of :func:`ci_test_inputs`)."""

    action: np.ndarray
    outcome: np.ndarray
    belief: np.ndarray
    groups: np.ndarray
    ev_disc: np.ndarray
    ev_cont: np.ndarray
    outcome_binary: bool


def _class_codes(df: Any, column: str, *, discrete: bool = False) -> tuple[np.ndarray,
                                                                          np.ndarray]:
    """:func:`label_column`'s codes, numbered in the order of the sorted label values.

    :func:`label_column` already codes a pandas categorical by its values (its order of
    categories would give other codes, hence another reference level in the bias model
    and other random draws row by row); what this adds is one order for labels that
    cannot be compared with each other: by type name and representation.
    """
    codes, labels = label_column(df, column, owner=_OWNER, discrete=discrete)
    values = np.asarray(labels, dtype=object)
    try:
        order = np.argsort(values, kind="stable")
    except TypeError:
        order = np.argsort(np.array([f"{type(v).__name__}:{v!r}" for v in values]),
                           kind="stable")
    rank = np.empty(len(order), dtype=np.int64)
    rank[order] = np.arange(len(order))
    return np.ascontiguousarray(rank[codes]), values[order]


def _event_indicator(df: Any, outcome: str) -> np.ndarray:
    """The outcome as 0/1 for ``calibrate``: numbers 0 and 1 or bools, 1 (True) the event
    that the isotonic calibration predicts; other labels raise naming the rows (their sort
    order would pick the event by the spelling of the labels)."""
    try:
        return binary_column(df, outcome, owner=_OWNER)
    except ValueError as err:
        raise ValueError(f"{err} With calibrate set, the outcome must be coded 0/1 (or "
                         "False/True), 1 the event whose probability the belief states; "
                         "recode it, or set calibrate=False.") from err


def _evidence_arrays(df: Any, evidence: tuple[str, ...]) -> tuple[np.ndarray, np.ndarray]:
    import pandas as pd
    from scipy.stats import rankdata

    codes: list[np.ndarray] = []
    cont: list[np.ndarray] = []
    for col in evidence:
        if pd.api.types.is_float_dtype(df[col].dtype):
            # by its ranks: the kNN distances (max norm) then weigh it as the belief,
            # whatever its unit of measurement or any increasing transformation
            values = finite_column(df, col, owner=_OWNER)
            if np.ptp(values) > 0.0:
                cont.append(rankdata(values) / len(values))
                continue
            # a constant conditions on nothing: one class, as the same column of integers
            # (as continuous it turned on the continuous-evidence statistic and blocks)
        codes.append(_class_codes(df, col)[0])
    n = len(df)
    disc = combine(codes, n)
    return disc, (np.column_stack(cont) if cont else np.empty((n, 0)))


def _method_options(method: str, permute: Any, k_perm: Any, test_statistic: Any,
                    ci_method: Any) -> tuple[Any, Any, Any, Any]:
    """The permutation method's options with their defaults filled in (``None``, and
    ``ci_method='auto'``, stand for the method's default). ``method='bootstrap'`` uses
    none of them: one passed with it raises rather than be recorded and ignored."""
    if method == "bootstrap":
        given = {"permute": permute, "k_perm": k_perm, "test_statistic": test_statistic}
        given = {name: value for name, value in given.items() if value is not None}
        if ci_method not in ("auto", "bootstrap"):
            given["ci_method"] = ci_method
        for name, value in given.items():
            raise ValueError(param_error(
                name, _OWNER, "left unset with method='bootstrap', which does not use it "
                "(only method='permutation' does; the bootstrap method's interval is the "
                "cluster-bootstrap percentile one and it has no p-value)", value))
        return "auto", 3, "auto", "bootstrap"
    return ("auto" if permute is None else permute, 3 if k_perm is None else k_perm,
            "auto" if test_statistic is None else test_statistic,
            "debiased" if isinstance(ci_method, str) and ci_method == "auto" else ci_method)


def ci_test_inputs(data: Any, belief: Any, action: Any, outcome: Any, evidence: Any, group: Any,
                k: Any, method: Any, n_resamples: Any, confidence_level: Any, calibrate: Any,
                condition_on: Any, permute: Any, k_perm: Any, ci_method: Any,
                resolution: Any, test_statistic: Any,
                rng: RNGLike) -> tuple[Design, dict[str, Any], np.random.Generator]:
    df = as_dataframe(data, owner=_OWNER)
    evidence = evidence_columns(evidence, _OWNER)
    require_design_columns(df, {"belief": belief, "action": action, "outcome": outcome,
                                "group": group}, evidence, _OWNER)
    df = numeric_evidence(df, evidence)
    clash = [c for c in evidence if c in (belief, action, outcome, group)]
    if clash:  # the tested variable: statistic 0, p = 1; the belief: another test path
        raise ValueError(param_error("evidence", _OWNER, "columns other than the belief, "
                                     "action, outcome and group columns", clash))
    method = check_choice(method, "method", _OWNER, _METHODS)
    permute, k_perm, test_statistic, ci_method = _method_options(
        method, permute, k_perm, test_statistic, ci_method)
    condition_on = check_choice(condition_on, "condition_on", _OWNER, _CONDITION_ON)
    permute = check_choice(permute, "permute", _OWNER, _PERMUTE)
    ci_method = check_choice(ci_method, "ci_method", _OWNER, _CI_METHODS)
    test_statistic = check_choice(test_statistic, "test_statistic", _OWNER, _TEST_STATISTICS)
    if isinstance(calibrate, str):
        calibrate = check_choice(calibrate, "calibrate", _OWNER, _CALIBRATE)
    elif not isinstance(calibrate, bool):
        raise TypeError(param_error("calibrate", _OWNER, "a bool, 'cross-fitted' or "
                                    "'in-sample'", calibrate))
    if calibrate is True:
        calibrate = "cross-fitted"
    n_resamples = check_int(n_resamples, "n_resamples", _OWNER, low=1)
    confidence_level = check_float(confidence_level, "confidence_level", _OWNER, low=0.0,
                                   high=1.0, low_open=True, high_open=True)
    k_perm = check_int(k_perm, "k_perm", _OWNER, low=1)
    if resolution is not None:
        resolution = check_float(resolution, "resolution", _OWNER, low=0.0, low_open=True)
    n = len(df)
    if n < 3:
        raise ValueError(param_error("data", _OWNER, "a table of at least 3 rows",
                                     f"{n} rows"))
    if not (isinstance(k, str) and k == "auto"):
        k = check_int(k, "k", _OWNER, low=1, high=n - 1)
    p = probability_column(df, belief, owner=_OWNER)
    warn_constant_belief(p, belief, _OWNER, "conditioning on it conditions on nothing the "
                         "agent stated, so the test is of plain dependence of the action on "
                         f"the outcome{' given the evidence' if evidence else ''}, which a "
                         "coherent agent whose beliefs track the outcome fails too")
    a, _ = _class_codes(df, action, discrete=True)
    y, y_labels = _class_codes(df, outcome, discrete=True)
    ev_disc, ev_cont = _evidence_arrays(df, evidence)
    # group=None: each row its own context, numbered by its values (not its position,
    # which would make the canonical order, hence the result, follow the input's order)
    groups = (row_units([*(ev_cont[:, j] for j in range(ev_cont.shape[1] - 1, -1, -1)),
                         ev_disc, a, y, p]) if group is None
              else group_codes(df, group, owner=_OWNER))
    if calibrate and len(y_labels) > 2:
        raise ValueError(param_error("calibrate", _OWNER, "False when the outcome has more "
                                     "than two classes", calibrate))
    if calibrate == "cross-fitted" and np.unique(groups).size < 2:
        raise ValueError(param_error("calibrate", _OWNER, "'in-sample' or False when the data "
                                     "hold one context (the cross-fitted calibration is read "
                                     "on each context from a fit on the others)", calibrate))
    if calibrate:  # the isotonic calibration predicts the outcome 1: code it as given
        y = _event_indicator(df, outcome)
    design = Design(a, y, p, groups, ev_disc, ev_cont, len(y_labels) <= 2)
    options = {"k": k, "method": method, "n_resamples": n_resamples,
               "confidence_level": confidence_level, "calibrate": calibrate,
               "condition_on": condition_on, "permute": permute, "k_perm": k_perm,
               "ci_method": ci_method, "resolution": resolution, "evidence": evidence,
               "test_statistic": test_statistic, "group": group}
    return design, options, check_rng(rng, owner=_OWNER)
