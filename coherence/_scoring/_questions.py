"""Question types of the forecasting-at-a-simulated-date benchmark, the task table
and its statistics.

:func:`question_scores` scores one table that mixes binary, multiple-choice,
quantity, interval and timeframe questions: accuracy for every type, Brier and
log scores for the probabilistic ones. :func:`validate_tasks` checks the task
table (question, start, simulated date, resolution date, outcome, type) and
:func:`dataset_statistics` describes it (types, domains, horizon lengths).

The array layer (:func:`normalise_label`, :func:`quantity_correct`,
:func:`interval_correct`) is small and exact.
"""

from __future__ import annotations

import datetime as _dt
import math
import numbers
import re
import unicodedata
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import numpy as np
import pandas as pd

from .._parameters import check_choice
from .._parameters import check_float
from .._parameters import check_resampling
from .._resampling import MEAN_KINDS
from .._resampling import cluster_mean_interval
from .._resampling import streams_by_label
from .._results import CoherenceResult
from .._results import ConfidenceInterval
from .._rng import RNGLike
from .._rng import check_rng
from .._validation import DECIMAL_SLACK
from .._validation import UnsetName
from .._validation import as_dataframe
from .._validation import check_case_distinct
from .._validation import column_error
from .._validation import narrow_float
from .._validation import narrow_float_decimals
from .._validation import no_missing
from .._validation import param_error
from .._validation import require_columns
from .._validation import same_within
from .._warnings import DeprecatedAlias
from ._dates import any_aware
from ._dates import is_missing
from ._dates import ns_between
from ._dates import parse_dates
from ._ids import check_ids
from ._ids import label_rows
from ._ids import no_blank_ids
from ._ids import not_pooled
from ._ids import reserved_by

__all__ = [
    "QUESTION_TYPES",
    "TASK_COLUMNS",
    "DatasetStatistics",
    "QuestionScoresResult",
    "dataset_statistics",
    "interval_correct",
    "normalise_label",
    "quantity_correct",
    "question_scores",
    "validate_tasks",
]

#: The question types, as written in the ``type`` column.
QUESTION_TYPES = ("binary", "multiple_choice", "quantity", "interval", "timeframe")
#: Types scored by Brier and log score (the others by accuracy only).
PROBABILISTIC_TYPES = ("binary", "multiple_choice")
#: The task table: column -> what it holds.
TASK_COLUMNS = {
    "question": "question id, unique",
    "start": "when the question opened (start of the forecast window)",
    "simulated_date": "optional: the date the agent forecasts at (missing: the window midpoint)",
    "resolution_date": "when the question resolved (end of the window), after start",
    "outcome": "what happened: 0/1 (binary), the option (multiple choice), a number "
               "(quantity, interval), a date or period label (timeframe)",
    "type": "one of " + ", ".join(QUESTION_TYPES),
    "domain": "optional: topic (politics, economics, ...)",
}
CONVENTIONS = ("paper", "code")
_OWNER = "question_scores"
#: Columns of the result's tables beside the ``by`` column (per_forecast, table,
#: by_type): a ``by`` column of one of these names would be overwritten by it.
RESERVED_COLUMNS = ("question", "type", "rule_correct", "judged", "correct", "brier",
                    "log_score", "n_forecasts", "n_questions", "accuracy", "accuracy_ci_low",
                    "accuracy_ci_high", "n_probabilistic", "n")
_WS = re.compile(r"\s+")


# --------------------------------------------------------------------------- array layer
def normalise_label(value: Any) -> str:
    """The normalised form of a label: NFKC, case-folded, whitespace collapsed, trimmed.

    A date object (``datetime.date``, ``datetime``, ``pandas.Timestamp``,
    ``numpy.datetime64``) is first written in ISO form, as ``'2024-06-30'`` when
    it is a naive midnight, so that it equals the same date written as text, and a
    whole number stored as a float (``2.0``, as in a column with gaps) is written as
    the integer, so that it equals ``2`` and ``'2'``.

    Examples
    --------
    >>> from coherence._scoring._questions import normalise_label
    >>> normalise_label("  Q3   2025 ") == normalise_label("q3 2025")
    True
    """
    if isinstance(value, float | np.floating) and np.isfinite(value) and value.is_integer():
        value = int(value)  # a whole number read as a float (a column with gaps): 2.0 is 2
    if isinstance(value, _dt.date | np.datetime64):
        ts = pd.Timestamp(value)
        midnight = ts == ts.normalize()
        value = ts.date().isoformat() if midnight and ts.tzinfo is None else ts.isoformat()
    text = unicodedata.normalize("NFKC", str(value)).casefold()
    return _WS.sub(" ", text).strip()


def quantity_correct(prediction: np.ndarray, outcome: np.ndarray,
                     tolerance: float) -> np.ndarray:
    """1 where ``|prediction - outcome| <= tolerance * |outcome|`` (bounds included).

    The bound is compared with a relative slack of ``DECIMAL_SLACK`` (1e-12) of the
    larger magnitude: decimals are not exact in binary (``1.1 - 1.0`` is
    ``0.10000000000000009``), and a forecast exactly 10% off must count at
    ``tolerance=0.1`` whatever its rounding.
    """
    slack = DECIMAL_SLACK * np.maximum(np.abs(prediction), np.abs(outcome))
    return (np.abs(prediction - outcome) <= tolerance * np.abs(outcome) + slack
            ).astype(np.float64)


def interval_correct(lower: np.ndarray, upper: np.ndarray, outcome: np.ndarray) -> np.ndarray:
    """1 where ``lower <= outcome <= upper`` (bounds included)."""
    return ((lower <= outcome) & (outcome <= upper)).astype(np.float64)


def _as_float(value: Any) -> float:
    """A number from a cell (numbers, numeric strings); NaN when it is not one. A float32
    (or float16) scalar is read as the shortest decimal that gives it back (:func:`_cells`)."""
    if isinstance(value, bool | np.bool_):
        return math.nan
    if isinstance(value, numbers.Real):
        return float(narrow_float(value))
    if isinstance(value, str):
        try:
            return float(value.strip())
        except ValueError:
            return math.nan
    return math.nan


def _cells(df: pd.DataFrame, column: str) -> np.ndarray:
    """A column's cells as objects. A float32 (or float16) column, numpy or nullable, is
    read value by value as the shortest decimal that gives it back (``float32(1.1)`` as
    1.1, not 1.100000024), as :func:`numeric_column` reads such columns: otherwise a
    quantity 10% off, or an outcome on an interval's bound, would count as wrong in a
    float32 column and right in a float64 one. Missing cells stay missing (NaN)."""
    decimals = narrow_float_decimals(df[column])
    return df[column].to_numpy(dtype=object) if decimals is None else decimals.astype(object)


def _binary_value(value: Any) -> float:
    """0/1 from a binary outcome cell (0, 1, True, False); NaN otherwise."""
    if isinstance(value, bool | np.bool_):
        return float(value)
    if isinstance(value, numbers.Real) and float(value) in (0.0, 1.0):
        return float(value)
    return math.nan


# --------------------------------------------------------------------------- result
@dataclass(frozen=True, slots=True)
class QuestionScoresResult(CoherenceResult, test_name="question_scores",
                           settings=("by", "convention", "tolerance", "floor", "n_resamples",
                                     "n_judged", "n_judge_correct")):
    """Accuracy over every question type; Brier and log scores over binary and
    multiple-choice questions.

    ``statistic`` is the pooled accuracy (all models, all rows) and
    ``confidence_interval`` its Wilson interval at the effective sample size of the
    cluster-robust standard error over questions;
    ``pvalue`` is NaN (a score, not a test).

    Attributes
    ----------
    by : str
        Column naming the forecaster.
    convention : str
        ``'paper'`` or ``'code'`` (see :func:`question_scores`).
    tolerance : float
        Relative tolerance of quantity questions.
    floor : float
        Floor of the probability before the log.
    n_resamples : int
        Bootstrap resamples.
    n_judged : int
        Rows the judge was asked about.
    n_judge_correct : int
        Of those, rows the judge called correct.
    table : pandas.DataFrame
        One row per model plus the pooled row ``'(all)'``: ``n_forecasts``,
        ``n_questions``, ``accuracy`` with ``accuracy_ci_low``/``_ci_high``,
        ``n_probabilistic``, ``brier``, ``log_score``.
    by_type : pandas.DataFrame
        One row per (model, type) plus pooled rows: ``n``, ``accuracy``,
        ``brier``, ``log_score`` (NaN for types without a probability).
    per_forecast : pandas.DataFrame
        One row per input row (same index): ``by``, ``question``, ``type``,
        ``rule_correct`` (the deterministic rule), ``judged``, ``correct``,
        ``brier``, ``log_score``.
    """

    by: str
    convention: str
    tolerance: float
    floor: float
    n_resamples: int
    n_judged: int
    n_judge_correct: int
    table: pd.DataFrame
    by_type: pd.DataFrame
    per_forecast: pd.DataFrame

    scores = DeprecatedAlias("table")


def question_scores(
    forecasts: Any,
    *,
    by: str = "model",
    question: str = "question",
    type: str = "type",
    prediction: str = "prediction",
    probability: str = "probability",
    outcome: str = "outcome",
    lower: str = "lower",
    upper: str = "upper",
    tolerance: float = 0.1,
    judge: Callable[[dict[str, Any]], Any] | None = None,
    judge_types: Sequence[str] = ("binary", "multiple_choice"),
    convention: str = "paper",
    floor: float = 1e-10,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
) -> QuestionScoresResult:
    """Score a table that mixes question types: accuracy for all, Brier and log
    score for binary and multiple choice.

    For a benchmark whose questions are binary, multiple choice, quantities, intervals
    or timeframes: every row gets an accuracy, the binary and multiple-choice rows a
    Brier and a log score as well. Scores are per model and per question type, with
    intervals over questions.

    Parameters
    ----------
    forecasts : pandas.DataFrame or convertible
        One row per (model, question) forecast, with a ``type`` column. What a
        row needs depends on its type:

        * ``binary``: ``probability`` = P(YES) and ``outcome`` 0/1 (or bool);
        * ``multiple_choice``: ``prediction`` = the chosen option,
          ``probability`` = the confidence in it, ``outcome`` = the option
          that happened;
        * ``quantity``: ``prediction`` and ``outcome`` numbers;
        * ``interval``: ``lower`` and/or ``upper`` numbers (a missing bound is
          unbounded; see ``convention``) and an ``outcome`` number;
        * ``timeframe``: ``prediction`` and ``outcome`` labels (a date, a
          period such as ``'Q3 2025'``).

        Columns a table's types do not use may be absent. The ``by`` value
        ``'(all)'`` is reserved for the pooled row. A question's
        ``outcome`` and ``type`` are the same on all its rows (every forecaster's);
        rows that disagree raise.
    by, question, type, prediction, probability, outcome, lower, upper : str
        Column names. ``by`` may not name a column of the result's tables
        (``'question'``, ``'type'``, ``'correct'``, ``'accuracy'``, ``'brier'``,
        ``'n_forecasts'`` and the others of :class:`QuestionScoresResult`), which would
        overwrite it: that raises (rename the column).
    tolerance : float
        A quantity is correct when :math:`|\\hat x - x| \\le` ``tolerance``
        :math:`\\cdot |x|` (default 0.1, the benchmark's 10%), the bound included
        whatever its binary rounding (1.1 against 1.0 counts at 0.1).
    judge : callable, optional
        Fallback for rows the deterministic rule marks wrong whose type is in
        ``judge_types``: called with the row as a dict, it returns True/False
        (or 1/0). Its verdict replaces the rule's; ``per_forecast`` keeps both.
        The benchmark's code uses an LLM judge here; any function works.
    judge_types : sequence of str
        Types the judge is asked about: by default binary and multiple
        choice, as in the benchmark's paper and code (a timeframe is an exact
        match after normalisation; add ``'timeframe'`` to judge it too). A
        judged binary row's accuracy follows the judge; its Brier and log
        scores stay those of its probability.
    convention : {'paper', 'code'}
        ``'paper'`` (default): multiple-choice options and timeframes match
        after :func:`normalise_label` (case, Unicode form and spacing ignored);
        a missing interval bound is unbounded. ``'code'``: the released
        evaluator's rules, exact equality of the raw values, and a missing
        lower bound of an interval reads as 0.
    floor : float
        Floor of the probability given to what happened, before the log.
    n_resamples, confidence_level, rng
        Cluster bootstrap over questions.

    Returns
    -------
    QuestionScoresResult
        ``statistic`` the pooled accuracy with its Wilson interval (the effective
        sample size of the cluster-robust standard error over questions; ``pvalue``
        NaN); per-model scores in ``table``, per question type in
        ``by_type``, per input row in ``per_forecast``.

    Raises
    ------
    ValueError
        A type outside :data:`QUESTION_TYPES`, a row lacking what its type
        needs (named by row), a probability outside [0, 1], an interval with
        lower > upper, a judge verdict that is not True/False, two outcomes of
        one question, a ``by`` column named like a column of the result, a blank
        (``''`` or spaces) model or question id.

    See Also
    --------
    forecast_scores : scores of binary forecasts, with calibration.
    forecastbench_scores : the ForecastBench leaderboard scores.
    validate_tasks : check the task table these forecasts answer.
    accuracy_by_horizon : accuracy at each horizon position.

    Notes
    -----
    Binary accuracy is :math:`1[p \\ge 0.5] = y` (the paper's rule: a
    forecast of exactly 0.5 counts as YES). Brier score: binary
    :math:`(p - y)^2`; multiple choice one-vs-rest on the chosen option,
    :math:`(1 - c)^2` if right and :math:`c^2` if wrong. Log score:
    :math:`\\ln \\max(q, \\text{floor})` with :math:`q` the probability given to
    what happened (:math:`p` or :math:`1 - p`; :math:`c` or :math:`1 - c`).
    For multiple choice the Brier and log scores follow the judged
    correctness, so a judge that accepts an answer scores it as right
    everywhere. Quantity, interval and timeframe rows have no probability:
    their Brier and log scores are NaN and they enter accuracy only.

    Examples
    --------
    >>> import coherence
    >>> table = {"model": ["m"] * 4, "question": ["b", "c", "q", "t"],
    ...          "type": ["binary", "multiple_choice", "quantity", "timeframe"],
    ...          "probability": [0.8, 0.6, None, None],
    ...          "prediction": [None, "Paris", 105, "Q3 2025"],
    ...          "outcome": [1, "paris", 100, "q3 2025"]}
    >>> res = coherence.question_scores(table, rng=0)
    >>> res.statistic, list(res.per_forecast["brier"].round(2))
    (1.0, [0.04, 0.16, nan, nan])
    """
    df = as_dataframe(forecasts, name="forecasts", owner=_OWNER)
    convention = check_choice(convention, "convention", _OWNER, CONVENTIONS)
    tolerance = check_float(tolerance, "tolerance", _OWNER, low=0.0)
    floor = check_float(floor, "floor", _OWNER, low=0.0, high=1.0, low_open=True,
                        high_open=True)
    n_resamples, confidence_level = check_resampling(_OWNER, n_resamples, confidence_level)
    if judge is not None and not callable(judge):
        raise TypeError(param_error("judge", _OWNER, "a callable or None",
                                    judge.__class__.__name__))
    if isinstance(judge_types, str):
        raise TypeError(param_error("judge_types", _OWNER, "a sequence of type names",
                                    judge_types))
    for t in judge_types:
        check_choice(t, "judge_types", _OWNER, QUESTION_TYPES)
    gen = check_rng(rng, owner=_OWNER)
    reserved_by(by, _OWNER, RESERVED_COLUMNS)
    require_columns(df, {"by": by, "question": question, "type": type, "outcome": outcome},
                    owner=_OWNER)
    no_missing(df, [by, question, type], owner=_OWNER)
    no_blank_ids(df, [by, question], _OWNER)  # '' or spaces: a lost label, not a model
    not_pooled(df, by, _OWNER)
    for col in (by, question):  # 1 and '1', 'Q1' and 'q1': one id written two ways
        check_ids([("forecasts", df)], col, owner=_OWNER)
    kinds = df[type].to_numpy(dtype=object)
    bad = np.flatnonzero([k not in QUESTION_TYPES for k in kinds])
    if len(bad):
        raise ValueError(column_error(type, "hold one of " + ", ".join(QUESTION_TYPES),
                                      list(df.index[bad]), list(kinds[bad]), owner=_OWNER))
    dup = df.duplicated([by, question], keep=False).to_numpy()
    if dup.any():
        raise ValueError(column_error(question, f"name each ({by}, {question}) pair once",
                                      list(df.index[np.flatnonzero(dup)]), owner=_OWNER))
    # a question is of one type and resolves one way for every forecaster
    same_within(df, kinds, question, type, owner=_OWNER)
    same_within(df, df[outcome].to_numpy(dtype=object), question, outcome, owner=_OWNER)
    rule, brier, log = _score_rows(df, kinds, prediction, probability, outcome, lower, upper,
                                   tolerance, convention, floor)
    correct = rule.copy()
    judged = np.zeros(len(df), dtype=bool)
    n_judge_correct = 0
    if judge is not None:
        correct, judged, n_judge_correct = _apply_judge(df, kinds, rule, judge,
                                                        tuple(judge_types))
        # the probabilistic scores follow the judged correctness (chosen option right or not)
        mc = (kinds == "multiple_choice") & judged
        if mc.any():
            conf = np.array([_as_float(v) for v in _cells(df, probability)])
            q = np.where(correct == 1.0, conf, 1.0 - conf)
            brier[mc] = ((1.0 - q) ** 2)[mc]
            log[mc] = np.log(np.maximum(q, floor))[mc]
    per = pd.DataFrame({
        by: df[by].to_numpy(dtype=object), "question": df[question].to_numpy(dtype=object),
        "type": kinds, "rule_correct": rule, "judged": judged, "correct": correct,
        "brier": brier, "log_score": log}, index=df.index)
    return _summarise(per, by, convention, tolerance, floor, n_resamples, confidence_level,
                      int(judged.sum()), n_judge_correct, gen)


def _need(df: pd.DataFrame, column: str, rows: np.ndarray, rule: str) -> None:
    """Raise when ``column`` is absent but some rows of a type need it."""
    if len(rows) and column not in df.columns:
        raise ValueError(column_error(column, rule + " (the column is missing)",
                                      list(df.index[rows]), owner=_OWNER))


def _numbers(df: pd.DataFrame, column: str, rows: np.ndarray, what: str,
             allow_missing: bool = False) -> np.ndarray:
    """Numbers of ``column`` at ``rows``; NaN for missing cells when allowed."""
    if len(rows) == 0:
        return np.empty(0)
    cells = _cells(df, column)[rows]
    vals = np.array([_as_float(c) for c in cells])
    missing = np.array([is_missing(c) for c in cells])
    bad = np.isnan(vals) & ~(missing & allow_missing)
    bad |= np.isinf(vals)
    if bad.any():
        pos = rows[bad]
        raise ValueError(column_error(column, f"hold a finite number for {what} rows",
                                      list(df.index[pos]), list(cells[bad]), owner=_OWNER))
    return vals


def _labels_agree(df: pd.DataFrame, prediction: str, outcome: str, r: np.ndarray, kind: str,
                  convention: str) -> np.ndarray:
    """Whether each row's predicted label equals its outcome: after normalisation
    (``convention="paper"``) or as written (``"code"``)."""
    pred = _labels(df, prediction, r, kind)
    truth = _labels(df, outcome, r, kind)
    same = (lambda a, b: normalise_label(a) == normalise_label(b)) if convention == "paper" \
        else (lambda a, b: a == b)
    return np.array([same(a, b) for a, b in zip(pred, truth, strict=True)], dtype=bool)


def _labels(df: pd.DataFrame, column: str, rows: np.ndarray, what: str) -> np.ndarray:
    cells = df[column].to_numpy(dtype=object)[rows]
    missing = np.array([is_missing(c) for c in cells], dtype=bool)
    if missing.any():
        raise ValueError(column_error(column, f"hold a value for {what} rows",
                                      list(df.index[rows[missing]]), owner=_OWNER))
    return cells


def _score_rows(df: pd.DataFrame, kinds: np.ndarray, prediction: str, probability: str,
                outcome: str, lower: str, upper: str, tolerance: float, convention: str,
                floor: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    n = len(df)
    rule = np.full(n, np.nan)
    brier = np.full(n, np.nan)
    log = np.full(n, np.nan)
    rows = {k: np.flatnonzero(kinds == k) for k in QUESTION_TYPES}
    prob_rows = np.concatenate([rows["binary"], rows["multiple_choice"]])
    _need(df, probability, prob_rows, "hold a probability for binary and multiple-choice rows")
    _need(df, prediction, np.concatenate([rows["multiple_choice"], rows["quantity"],
                                          rows["timeframe"]]),
          "hold the prediction of multiple-choice, quantity and timeframe rows")
    if len(prob_rows):
        p = _numbers(df, probability, prob_rows, "binary and multiple-choice")
        bad = (p < 0) | (p > 1)
        if bad.any():
            raise ValueError(column_error(probability, "hold probabilities in [0, 1]",
                                          list(df.index[prob_rows[bad]]), list(p[bad]),
                                          owner=_OWNER))
    outcomes = df[outcome].to_numpy(dtype=object)
    # binary
    r = rows["binary"]
    if len(r):
        p = _numbers(df, probability, r, "binary")
        y = np.array([_binary_value(v) for v in outcomes[r]])
        if np.isnan(y).any():
            bad = np.isnan(y)
            raise ValueError(column_error(outcome, "be 0 or 1 (or a bool) on binary rows",
                                          list(df.index[r[bad]]), list(outcomes[r][bad]),
                                          owner=_OWNER))
        rule[r] = ((p >= 0.5) == (y == 1.0)).astype(np.float64)
        brier[r] = (p - y) ** 2
        log[r] = np.log(np.maximum(np.where(y == 1.0, p, 1.0 - p), floor))
    # multiple choice
    r = rows["multiple_choice"]
    if len(r):
        c = _numbers(df, probability, r, "multiple-choice")
        right = _labels_agree(df, prediction, outcome, r, "multiple-choice", convention)
        rule[r] = right.astype(np.float64)
        q = np.where(right, c, 1.0 - c)
        brier[r] = (1.0 - q) ** 2
        log[r] = np.log(np.maximum(q, floor))
    # quantity
    r = rows["quantity"]
    if len(r):
        x = _numbers(df, prediction, r, "quantity")
        y = _numbers(df, outcome, r, "quantity")
        rule[r] = quantity_correct(x, y, tolerance)
    # interval
    r = rows["interval"]
    if len(r):
        if lower not in df.columns and upper not in df.columns:
            _need(df, lower, r, "hold the interval bounds of interval rows")
        lo = (_numbers(df, lower, r, "interval", allow_missing=True) if lower in df.columns
              else np.full(len(r), np.nan))
        hi = (_numbers(df, upper, r, "interval", allow_missing=True) if upper in df.columns
              else np.full(len(r), np.nan))
        both = np.isnan(lo) & np.isnan(hi)
        if both.any():
            raise ValueError(column_error(f"{lower}/{upper}", "hold at least one bound on "
                                          "interval rows", list(df.index[r[both]]),
                                          owner=_OWNER))
        lo = np.where(np.isnan(lo), 0.0 if convention == "code" else -np.inf, lo)
        hi = np.where(np.isnan(hi), np.inf, hi)
        inverted = lo > hi
        if inverted.any():
            raise ValueError(column_error(lower, f"be <= '{upper}' on interval rows",
                                          list(df.index[r[inverted]]), list(lo[inverted]),
                                          owner=_OWNER))
        y = _numbers(df, outcome, r, "interval")
        rule[r] = interval_correct(lo, hi, y)
    # timeframe
    r = rows["timeframe"]
    if len(r):
        rule[r] = _labels_agree(df, prediction, outcome, r, "timeframe",
                                convention).astype(np.float64)
    return rule, brier, log


def _apply_judge(df: pd.DataFrame, kinds: np.ndarray, rule: np.ndarray,
                 judge: Callable[[dict[str, Any]], Any], judge_types: tuple[str, ...]
                 ) -> tuple[np.ndarray, np.ndarray, int]:
    correct = rule.copy()
    ask = np.flatnonzero((rule == 0.0) & np.isin(kinds, judge_types))
    judged = np.zeros(len(df), dtype=bool)
    n_yes = 0
    records = df.to_dict(orient="records")
    for i in ask:
        verdict = judge(dict(records[i]))
        if isinstance(verdict, bool | np.bool_):
            ok = bool(verdict)
        elif isinstance(verdict, numbers.Real) and float(verdict) in (0.0, 1.0):
            ok = float(verdict) == 1.0
        else:
            raise ValueError(param_error("judge", _OWNER, "a function returning True/False "
                                         f"(or 1/0); on row {df.index[i]!r} it returned",
                                         verdict))
        judged[i] = True
        correct[i] = 1.0 if ok else 0.0
        n_yes += int(ok)
    return correct, judged, n_yes


def _summarise(per: pd.DataFrame, by: str, convention: str, tolerance: float, floor: float,
               n_resamples: int, confidence_level: float, n_judged: int,
               n_judge_correct: int, gen: np.random.Generator) -> QuestionScoresResult:
    from ._forecast import POOLED

    seen = pd.unique(per[by])
    # each model's rows found in one pass (not one pass over every row per model)
    groups: list[tuple[Any, np.ndarray]] = [*zip(seen, label_rows(per[by]), strict=True),
                                            (POOLED, np.arange(len(per)))]
    # each model's bootstrap stream by its rank in sorted order (the pooled row's last),
    # so that an interval does not depend on which model comes first in the rows
    streams = streams_by_label(gen, seen)
    rows, type_rows = [], []
    pooled_ci = (np.nan, np.nan)
    for (name, rows_of), g in zip(groups, streams, strict=True):
        sub = per.iloc[rows_of]
        acc = sub["correct"].to_numpy(dtype=np.float64)
        accuracy = float(acc.mean()) if len(acc) else np.nan
        lo, hi = cluster_mean_interval(acc, sub["question"].to_numpy(dtype=object),
                                       n_resamples, confidence_level, g, kind="proportion",
                                       estimate=accuracy)
        if name == POOLED:
            pooled_ci = (lo, hi)
        prob = sub["type"].isin(PROBABILISTIC_TYPES).to_numpy()
        rows.append({by: name, "n_forecasts": len(sub),
                     "n_questions": int(sub["question"].nunique()),
                     "accuracy": accuracy,
                     "accuracy_ci_low": lo, "accuracy_ci_high": hi,
                     "n_probabilistic": int(prob.sum()),
                     "brier": float(sub["brier"][prob].mean()) if prob.any() else np.nan,
                     "log_score": float(sub["log_score"][prob].mean()) if prob.any()
                     else np.nan})
        for t in QUESTION_TYPES:
            st = sub.loc[sub["type"] == t]
            if len(st) == 0:
                continue
            type_rows.append({by: name, "type": t, "n": len(st),
                              "accuracy": float(st["correct"].mean()),
                              "brier": float(st["brier"].mean()) if t in PROBABILISTIC_TYPES
                              else np.nan,
                              "log_score": float(st["log_score"].mean())
                              if t in PROBABILISTIC_TYPES else np.nan})
    table = pd.DataFrame(rows)
    pooled_acc = float(table.iloc[-1]["accuracy"])
    return QuestionScoresResult(
        statistic=pooled_acc, pvalue=np.nan,
        confidence_interval=ConfidenceInterval(pooled_ci[0], pooled_ci[1], confidence_level),
        n_obs=len(per), method=f"{MEAN_KINDS['proportion']} over questions", by=by,
        convention=convention, tolerance=tolerance, floor=floor, n_resamples=n_resamples,
        n_judged=n_judged, n_judge_correct=n_judge_correct, table=table,
        by_type=pd.DataFrame(type_rows, columns=[by, "type", "n", "accuracy", "brier",
                                                 "log_score"]),
        per_forecast=per)


# --------------------------------------------------------------------------- tasks
#: The optional task columns' defaults: absent, they are skipped; named, they must exist.
_SIMULATED_DATE = UnsetName("simulated_date")
_DOMAIN = UnsetName("domain")
#: dataset_statistics' label of the missing domains.
_NO_DOMAIN = "(missing)"


def validate_tasks(tasks: Any, *, question: str = "question", start: str = "start",
                   simulated_date: str = _SIMULATED_DATE,
                   resolution_date: str = "resolution_date", outcome: str = "outcome",
                   type: str = "type", domain: str = _DOMAIN) -> pd.DataFrame:
    """Check a task table against the benchmark's schema and return it with parsed dates.

    Run it first on a benchmark's task table: the required columns, the question types,
    the outcomes and the dates (a resolution after the start, a simulated date between
    them) are checked, a ``ValueError`` names the offending rows, and the table comes
    back with its dates parsed and the horizon in days.

    Parameters
    ----------
    tasks : pandas.DataFrame or convertible
        One row per question; the columns of :data:`TASK_COLUMNS`
        (``simulated_date`` and ``domain`` optional).
    question, start, simulated_date, resolution_date, outcome, type, domain : str
        Column names. The optional ``simulated_date`` and ``domain`` may be absent
        when left at their defaults; named explicitly, the column must exist (a
        misspelt ``domain="topic"`` raises rather than count no domain).

    Returns
    -------
    pandas.DataFrame
        A copy with ``start``, ``resolution_date`` and (when present)
        ``simulated_date`` as ``datetime64[ns]`` (aware dates converted to UTC
        and stored naive), and ``horizon_days`` = resolution - start in days (a
        ``horizon_days`` column of the table must hold the same, else it raises).

    Raises
    ------
    ValueError
        A missing column or value, a blank question id (``''`` or spaces, a lost id; a
        blank domain is a missing one), a duplicated question, a question or domain
        written two ways (``'Q1'`` and ``'q1'``, ``1`` and ``'1'``, ``'Politics'`` and
        ``'politics'``), an unknown type, a
        date that does not parse, dates mixing naive and aware, a resolution
        not after the start, a simulated date outside [start, resolution), an
        outcome that does not fit its type (binary: 0/1; quantity and
        interval: a number), an optional column named but absent.

    See Also
    --------
    dataset_statistics : counts and horizon lengths of a task table.
    question_scores : score forecasts of the tasks.

    Examples
    --------
    >>> import coherence
    >>> tasks = {"question": ["q1"], "start": ["2024-01-01"],
    ...          "resolution_date": ["2024-01-31"], "outcome": [1], "type": ["binary"]}
    >>> float(coherence.validate_tasks(tasks)["horizon_days"].iloc[0])
    30.0
    """
    owner = "validate_tasks"
    df = as_dataframe(tasks, name="tasks", owner=owner)
    require_columns(df, {"question": question, "start": start,
                         "resolution_date": resolution_date, "outcome": outcome,
                         "type": type}, owner=owner)
    for name, col, default in (("simulated_date", simulated_date, _SIMULATED_DATE),
                               ("domain", domain, _DOMAIN)):
        if col is not default and col not in df.columns:  # named, not there: a misspelling
            raise ValueError(param_error(
                name, owner, "a column of 'tasks' (it is optional: leave it out when the "
                f"table has none); columns: {list(map(str, df.columns))}", col))
    no_missing(df, [question, type], owner=owner)
    no_blank_ids(df, [question], owner)  # '' or spaces: a lost id, not a question
    dup = df[question].duplicated(keep=False).to_numpy()
    if dup.any():
        raise ValueError(column_error(question, "name each question once",
                                      list(df.index[np.flatnonzero(dup)]),
                                      list(df[question].to_numpy(dtype=object)[dup]),
                                      owner=owner))
    # 'Q1' and 'q1', 1 and '1': one question written twice; 'Politics' and 'politics':
    # one domain counted as two
    check_ids([("tasks", df)], question, owner=owner)
    if domain in df.columns:  # blank ones are all '(missing)'
        check_case_distinct(df.loc[[not is_missing(v) for v in df[domain]]], domain,
                            owner=owner)
    kinds = df[type].to_numpy(dtype=object)
    bad = np.flatnonzero([k not in QUESTION_TYPES for k in kinds])
    if len(bad):
        raise ValueError(column_error(type, "hold one of " + ", ".join(QUESTION_TYPES),
                                      list(df.index[bad]), list(kinds[bad]), owner=owner))
    date_cols, parsed = _task_dates(df, start, resolution_date, simulated_date, owner)
    s, r = parsed[start], parsed[resolution_date]
    _check_outcomes(df, outcome, kinds, owner)
    out = df.copy()
    for col in date_cols:
        out[col] = parsed[col]
    days = ns_between(r, s) / 86_400e9  # no wrap-around over more than 292 years
    if "horizon_days" in df.columns:  # the table's own horizons: replaced only where equal
        given = pd.to_numeric(df["horizon_days"], errors="coerce").to_numpy(dtype=np.float64)
        off = np.flatnonzero(~np.isclose(given, days, rtol=0.0, atol=1e-9))
        if len(off):
            raise ValueError(column_error(
                "horizon_days", f"equal '{resolution_date}' - '{start}' in days, the column "
                "validate_tasks writes (drop or rename the table's own)", list(df.index[off]),
                list(df["horizon_days"].to_numpy(dtype=object)[off]), owner=owner))
    out["horizon_days"] = days
    return out


def _task_dates(df: pd.DataFrame, start: str, resolution_date: str, simulated_date: str,
                owner: str) -> tuple[list[str], dict[str, np.ndarray]]:
    """The task table's date columns parsed: all aware or all naive, each resolution after
    its start, each simulated date in [start, resolution). Returns the columns and their
    parsed dates."""
    date_cols = [start, resolution_date] + ([simulated_date] if simulated_date in df.columns
                                            else [])
    parsed, aware = {}, set()
    for col in date_cols:
        when, missing = parse_dates(df[col], df.index, col, owner, require_tz=False)
        if col != simulated_date:
            no_missing(df, col, owner=owner, missing=missing)
        parsed[col] = when
        if not missing.all():
            aware.add(any_aware(df[col]))
    if len(aware) > 1:
        raise ValueError(f"{owner}: the date columns {date_cols} must all be timezone-aware "
                         "or all naive.")
    s, r = parsed[start], parsed[resolution_date]
    bad = np.flatnonzero(~(r > s))
    if len(bad):
        raise ValueError(column_error(resolution_date, f"be after '{start}'",
                                      list(df.index[bad]),
                                      list(df[resolution_date].to_numpy(dtype=object)[bad]),
                                      owner=owner))
    if simulated_date in parsed:
        sim = parsed[simulated_date]
        ok = np.isnat(sim) | ((sim >= s) & (sim < r))
        bad = np.flatnonzero(~ok)
        if len(bad):
            raise ValueError(column_error(
                simulated_date, f"lie in ['{start}', '{resolution_date}')",
                list(df.index[bad]), list(df[simulated_date].to_numpy(dtype=object)[bad]),
                owner=owner))
    return date_cols, parsed


def _check_outcomes(df: pd.DataFrame, outcome: str, kinds: np.ndarray, owner: str) -> None:
    """Every outcome present and fitting its question's type (binary: 0/1; quantity and
    interval: a number)."""
    outcomes = df[outcome].to_numpy(dtype=object)
    miss = np.array([is_missing(v) for v in outcomes], dtype=bool)
    if miss.any():
        raise ValueError(column_error(outcome, "not contain missing values",
                                      list(df.index[np.flatnonzero(miss)]), owner=owner))
    for kind, test, rule in (
            ("binary", lambda v: not math.isnan(_binary_value(v)), "be 0 or 1 on binary rows"),
            ("quantity", lambda v: math.isfinite(_as_float(v)), "be a number on quantity rows"),
            ("interval", lambda v: math.isfinite(_as_float(v)),
             "be a number on interval rows")):
        rows = np.flatnonzero(kinds == kind)
        wrong = [i for i in rows if not test(outcomes[i])]
        if wrong:
            pos = np.asarray(wrong)
            raise ValueError(column_error(outcome, rule, list(df.index[pos]),
                                          list(outcomes[pos]), owner=owner))


@dataclass(frozen=True, slots=True)
class DatasetStatistics:
    """The dataset-statistics table of a task table.

    Attributes
    ----------
    types : pandas.DataFrame
        ``type``, ``n``, ``share``.
    domains : pandas.DataFrame
        ``domain``, ``n``, ``share`` (empty without a domain column).
    horizons : pandas.DataFrame
        Horizon length (resolution - start, days) per type and overall
        (``'(all)'``): ``n``, ``min``, ``median``, ``mean``, ``max``.
    n_questions : int
        Rows of the task table.
    """

    types: pd.DataFrame = field(repr=False)
    domains: pd.DataFrame = field(repr=False)
    horizons: pd.DataFrame = field(repr=False)
    n_questions: int

    @property
    def table(self) -> pd.DataFrame:
        """One long table: ``section`` ('type', 'domain'), ``group``, ``n``, ``share``."""
        parts = [self.types.rename(columns={"type": "group"}).assign(section="type")]
        if len(self.domains):
            parts.append(self.domains.rename(columns={"domain": "group"})
                         .assign(section="domain"))
        out = pd.concat(parts, ignore_index=True)
        return out[["section", "group", "n", "share"]]


def dataset_statistics(tasks: Any, *, question: str = "question", start: str = "start",
                       simulated_date: str = _SIMULATED_DATE,
                       resolution_date: str = "resolution_date", outcome: str = "outcome",
                       type: str = "type", domain: str = _DOMAIN
                       ) -> DatasetStatistics:
    """Counts of question types and domains and the horizon lengths of a task table.

    The table is checked with :func:`validate_tasks` first. A missing domain
    is counted as ``'(missing)'``, never dropped; a domain written ``'(missing)'``
    raises rather than be pooled with them.

    See Also
    --------
    validate_tasks : check a task table against the schema.

    Examples
    --------
    >>> import coherence
    >>> tasks = {"question": ["a", "b", "c"], "type": ["binary", "binary", "quantity"],
    ...          "start": ["2024-01-01"] * 3,
    ...          "resolution_date": ["2024-01-11", "2024-01-31", "2024-03-01"],
    ...          "outcome": [1, 0, 3.5], "domain": ["politics", "sports", None]}
    >>> st = coherence.dataset_statistics(tasks)
    >>> st.types["n"].tolist(), st.horizons.set_index("type").loc["(all)", "median"]
    ([2, 1], np.float64(30.0))
    """
    checked = validate_tasks(tasks, question=question, start=start,
                             simulated_date=simulated_date, resolution_date=resolution_date,
                             outcome=outcome, type=type, domain=domain)
    n = len(checked)
    if n == 0:
        raise ValueError(param_error("tasks", "dataset_statistics",
                                     "a table with at least one task", "an empty table"))

    def counts(col: str, values: pd.Series) -> pd.DataFrame:
        c = values.value_counts(sort=True, dropna=False)
        return pd.DataFrame({col: c.index.to_numpy(dtype=object), "n": c.to_numpy(),
                             "share": c.to_numpy() / n if n else np.nan})

    types = counts("type", checked[type].astype(object))
    if domain in checked.columns:
        # a domain written '(missing)' would be pooled with the missing ones without a word
        taken = np.flatnonzero((checked[domain].astype(object) == _NO_DOMAIN).to_numpy())
        if len(taken):
            raise ValueError(column_error(
                domain, f"not use the name {_NO_DOMAIN!r}, which counts the missing domains "
                "(leave the cell blank for a missing domain, or rename the domain)",
                list(checked.index[taken]), owner="dataset_statistics"))
        dom = checked[domain].astype(object).map(lambda v: _NO_DOMAIN if is_missing(v)
                                                 else v)
        domains = counts("domain", dom)
    else:
        domains = pd.DataFrame(columns=["domain", "n", "share"])
    rows = []
    for name, sub in [*checked.groupby(type, sort=False), ("(all)", checked)]:
        h = sub["horizon_days"].to_numpy(dtype=np.float64)
        rows.append({"type": name, "n": len(h), "min": float(h.min()),
                     "median": float(np.median(h)), "mean": float(h.mean()),
                     "max": float(h.max())})
    return DatasetStatistics(types=types, domains=domains, horizons=pd.DataFrame(rows),
                             n_questions=n)
