"""The reasoning metrics of forecast graphs, scored against gated hindsight graphs.

:func:`reasoning_graph_metrics` scores forecast graphs against the hindsight
graphs that pass the quality gates (:func:`hindsight_graph_quality`, in
:mod:`._graph_quality`): key-event precision and recall, event
precision/recall/F1, recall of the hindsight events visible at the simulated
date ("accessible"), the date error of matched events, edge precision and
recall and causal-direction accuracy, and forecast-graph depth.

Array layer: :func:`relation_polarity`.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from itertools import pairwise
from typing import Any

import numpy as np
import pandas as pd

from .._parameters import check_choice
from .._parameters import check_float
from .._parameters import check_int
from .._parameters import check_resampling
from .._resampling import MEAN_KINDS
from .._resampling import cluster_mean_interval
from .._resampling import rows_by_key
from .._results import CoherenceResult
from .._results import ConfidenceInterval
from .._rng import RNGLike
from .._rng import check_rng
from .._validation import as_dataframe
from .._validation import column_error
from .._validation import flag_column
from .._validation import listed
from .._validation import no_missing
from .._validation import one_or_pair
from .._validation import param_error
from .._validation import require_columns
from .._validation import same_within
from .._warnings import DegenerateDataWarning
from .._warnings import DeprecatedAlias
from .._warnings import KeywordMerge
from .._warnings import deprecated_keywords
from .._warnings import second_of_pair
from ._dates import check_formats_across
from ._dates import check_same_awareness
from ._dates import is_missing
from ._dates import parse_dates
from ._dates import to_days
from ._graph_quality import GraphQualityReport
from ._graph_quality import graph_depth
from ._graph_quality import hindsight_graph_quality
from ._graph_quality import missing_or_in
from ._graph_quality import rejected_rows
from ._ids import check_edge_ends
from ._ids import check_ids
from ._ids import check_ids_within
from ._ids import label_rows
from ._ids import not_pooled
from ._matching import THRESHOLDS
from ._matching import EventColumns
from ._matching import MatchSettings
from ._matching import check_listed
from ._matching import event_text
from ._matching import event_tokens
from ._matching import hindsight_texts
from ._matching import key_event_positions
from ._matching import match_one
from ._matching import warn_undated

__all__ = [
    "NEGATIVE_RELATIONS",
    "POSITIVE_RELATIONS",
    "REASONING_METRICS",
    "ReasoningGraphResult",
    "reasoning_graph_metrics",
    "relation_polarity",
]

#: Relation labels read as a positive (promoting) causal link.
POSITIVE_RELATIONS = frozenset({"causes", "enables", "triggers", "amplifies", "positive"})
#: Relation labels read as a negative (inhibiting) causal link.
NEGATIVE_RELATIONS = frozenset({"prevents", "inhibits", "negative"})
#: The per-forecast metrics of :func:`reasoning_graph_metrics`.
REASONING_METRICS = (
    "key_event_precision", "key_event_recall", "event_precision", "event_recall", "event_f1",
    "accessible_precision", "accessible_recall", "accessible_f1", "date_error_days",
    "edge_precision", "edge_recall", "direction_accuracy", "forecast_depth")
#: What each metric's values are, which sets its interval (``cluster_mean_interval``):
#: the date error (days) and the depth (edges) have no upper bound, the rest are fractions.
METRIC_KINDS = {metric: "nonnegative" if metric in ("date_error_days", "forecast_depth")
                else "fraction" for metric in REASONING_METRICS}
CONVENTIONS = ("paper", "code")


# --------------------------------------------------------------------------- array layer
def relation_polarity(relation: Any) -> int:
    """+1 for a positive relation label, -1 for a negative one, 0 otherwise.

    Labels are compared case-insensitively after removing an
    ``'ImpactDirection.'`` prefix; see :data:`POSITIVE_RELATIONS` and
    :data:`NEGATIVE_RELATIONS`.

    Examples
    --------
    >>> from coherence._scoring._graphs import relation_polarity
    >>> relation_polarity("Causes"), relation_polarity("inhibits"), relation_polarity("correlates")
    (1, -1, 0)
    """
    if is_missing(relation):
        return 0
    text = str(relation).strip().lower().replace("impactdirection.", "")
    if text in POSITIVE_RELATIONS:
        return 1
    if text in NEGATIVE_RELATIONS:
        return -1
    return 0


# --------------------------------------------------------------------------- reasoning metrics
@dataclass(frozen=True, slots=True)
class ReasoningGraphResult(CoherenceResult, test_name="reasoning_graph_metrics",
                           settings=("by", "metric", "convention", "k", "min_impact", "threshold",
                                     "date_window_days", "n_resamples", "gated",
                                     "n_excluded_questions", "n_excluded_forecasts",
                                     "n_rejected_events")):
    """Reasoning metrics of forecast graphs against gated hindsight graphs.

    ``statistic`` is the mean over forecasts of the metric named in
    ``metric`` (where defined) and ``confidence_interval`` its interval over
    questions (Wilson's at the cluster-robust effective sample
    size with a t quantile for a fraction, the cluster bootstrap-t with Student's
    small-sample factor, from 0, for ``date_error_days`` and ``forecast_depth``);
    ``pvalue`` is NaN.

    Attributes
    ----------
    by : str
        Column naming the forecaster.
    metric : str
        The headline metric.
    convention : str
        ``'paper'`` or ``'code'``.
    k, min_impact, threshold, date_window_days :
        Key-event and matching settings.
    n_resamples : int
        Bootstrap resamples (drawn for ``date_error_days`` and ``forecast_depth``).
    gated : bool
        Whether the hindsight-graph quality gates were applied.
    n_excluded_questions : int
        Questions whose hindsight graph failed a gate.
    n_excluded_forecasts : int
        Forecasts on those questions (not scored).
    n_rejected_events : int
        Hindsight events removed as rejected by annotators.
    table : pandas.DataFrame
        One row per scored forecast: counts and every metric of
        :data:`REASONING_METRICS` (NaN where undefined).
    summary_table : pandas.DataFrame
        Per model and pooled (``'(all)'``): for each metric its mean over the
        forecasts where it is defined and that count (``n_<metric>``).
    matches : pandas.DataFrame
        Every matched (forecast event, hindsight event) pair on the full
        hindsight graph: ``by``, ``question``, ``forecast_event``,
        ``hindsight_event``, ``score``, ``date_error_days``, ``is_key``.
    quality : GraphQualityReport or None
        The gates' report.
    excluded_forecasts : pandas.DataFrame
        The (``by``, ``question``) forecasts not scored, with the question's
        reasons.
    """

    by: str
    metric: str
    convention: str
    k: int
    min_impact: float
    threshold: float
    date_window_days: float | None
    n_resamples: int
    gated: bool
    n_excluded_questions: int
    n_excluded_forecasts: int
    n_rejected_events: int
    table: pd.DataFrame
    summary_table: pd.DataFrame
    matches: pd.DataFrame
    quality: GraphQualityReport | None = field(repr=False, compare=False)
    excluded_forecasts: pd.DataFrame

    per_forecast = DeprecatedAlias("table")


@dataclass(frozen=True, slots=True)
class _GraphColumns(EventColumns):
    """The column names of :func:`reasoning_graph_metrics`'s tables, passed as one: those of
    its events tables and of its graphs."""

    review_status: str
    simulated_date: str
    source: str
    target: str
    relation: str


def _graph_settings_iv(convention: str, key_events: Any, threshold: float | None,
                       date_window_days: float | None, owner: str) -> MatchSettings:
    """The matching settings checked (``key_events``: k or (k, min_impact)), with the
    convention's defaults filled in."""
    convention = check_choice(convention, "convention", owner, CONVENTIONS)
    k, min_impact = one_or_pair(key_events, "key_events", owner,
                                "an int >= 1 or a pair (k, min_impact)", None)
    k = check_int(k, "key_events", owner, low=1)
    if min_impact is None:
        min_impact = 0.0 if convention == "paper" else 0.2
    min_impact = check_float(min_impact, "min_impact", owner, low=0.0)
    # a hybrid score is at most 1, and a threshold below 0 would match unrelated events
    threshold = check_float(THRESHOLDS["hybrid"] if threshold is None else threshold,
                            "threshold", owner, low=0.0, high=1.0)
    if date_window_days is not None:
        date_window_days = check_float(date_window_days, "date_window_days", owner, low=0.0)
    return MatchSettings(convention=convention, k=k, min_impact=min_impact,
                         threshold=threshold, date_window_days=date_window_days)


def _event_tables(forecast_events: Any, hindsight_events: Any, c: _GraphColumns, owner: str
                  ) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The two event tables checked: required columns, ids present, forecast events once."""
    by, question, event = c.by, c.question, c.event
    fev = as_dataframe(forecast_events, name="forecast_events", owner=owner)
    hev = as_dataframe(hindsight_events, name="hindsight_events", owner=owner)
    require_columns(fev, {"by": by, "question": question, "event": event, "title": c.title},
                    owner=owner)
    require_columns(hev, {"question": question, "event": event, "title": c.title,
                          "magnitude": c.magnitude, "confidence": c.confidence}, owner=owner)
    no_missing(fev, [by, question, event], owner=owner)
    no_missing(hev, [question, event], owner=owner)
    not_pooled(fev, by, owner)   # a model '(all)' and the summary's pooled row: one label
    dup = fev.duplicated([by, question, event], keep=False).to_numpy()
    if dup.any():
        raise ValueError(column_error(event, f"name each event of a ({by}, {question}) "
                                      "forecast once", list(fev.index[np.flatnonzero(dup)]),
                                      owner=owner))
    return fev, hev


def _check_joins(fev: pd.DataFrame, hev: pd.DataFrame, forecasts: Any, forecast_edges: Any,
                 hindsight_edges: Any, c: _GraphColumns, owner: str) -> None:
    """Raise when an id the tables are joined on is written two ways (``'Q1'`` and ``'q1'``,
    ``1`` and ``'1'``): question and model ids across the tables, and the event ids at the
    edges' ends against their events. Matched exactly, a question would have no hindsight
    events, and an edge would be dropped, its scores and depth 0, without a word."""
    fed = None if forecast_edges is None else as_dataframe(
        forecast_edges, name="forecast_edges", owner=owner)
    hed = None if hindsight_edges is None else as_dataframe(
        hindsight_edges, name="hindsight_edges", owner=owner)
    units = None if forecasts is None else as_dataframe(forecasts, name="forecasts",
                                                        owner=owner)
    named = [("forecast_events", fev), ("hindsight_events", hev), ("forecasts", units),
             ("forecast_edges", fed), ("hindsight_edges", hed)]
    tables = [(name, df) for name, df in named if df is not None]
    check_ids([t for t in tables if c.question in t[1].columns], c.question, owner=owner)
    check_ids([(name, df) for name, df in tables if c.by in df.columns
               and name in ("forecast_events", "forecasts", "forecast_edges")], c.by,
              owner=owner)
    check_ids_within(hev, [c.question], c.event, name="hindsight_events", owner=owner)
    ends = (c.source, c.target)
    if fed is not None and {c.by, c.question, *ends} <= set(fed.columns):
        check_edge_ends(fed, ends, fev, c.event, (c.by, c.question), edges_name="forecast_edges",
                        events_name="forecast_events", owner=owner)
    if hed is not None and {c.question, *ends} <= set(hed.columns):
        check_edge_ends(hed, ends, hev, c.event, (c.question,), edges_name="hindsight_edges",
                        events_name="hindsight_events", owner=owner)


def _quality_gates(gates: Any, hev: pd.DataFrame, hindsight_edges: Any, c: _GraphColumns,
                   owner: str) -> GraphQualityReport | None:
    """Step 1: the quality gates (a report, the paper's gates, or none)."""
    if isinstance(gates, GraphQualityReport):
        # a report on 'Q1' beside tables on 'q1' excluded every forecast as 'not built'
        gated = pd.DataFrame({c.question: gates.table["question"].astype(object)})
        check_ids([("hindsight_events", hev), ("gates", gated)], c.question, owner=owner)
        return gates
    if gates is True:
        if hindsight_edges is None:
            raise ValueError(param_error("hindsight_edges", owner, "a table of hindsight "
                                         "edges when gates=True (or pass gates=False)", None))
        return hindsight_graph_quality(hev, hindsight_edges, question=c.question,
                                       event=c.event, review_status=c.review_status,
                                       source=c.source, target=c.target)
    if gates is False:
        return None
    raise TypeError(param_error("gates", owner, "True, False or a GraphQualityReport", gates))


def _kept_hindsight_events(hev: pd.DataFrame, c: _GraphColumns, owner: str
                           ) -> tuple[pd.DataFrame, np.ndarray, np.ndarray,
                                      set[tuple[Any, Any]]]:
    """Step 2: the hindsight records kept (rejected events and outcomes out), their
    magnitudes and confidences, and the (question, event) keys of the events rejected
    outright (every record rejected)."""
    rejected = np.zeros(len(hev), dtype=bool)
    if c.review_status in hev.columns:
        rejected = rejected_rows(hev[c.review_status])
    hev_all = hev
    hev = hev.loc[~rejected]
    removed = set(zip(hev_all.loc[rejected, c.question], hev_all.loc[rejected, c.event],
                      strict=True)) - set(zip(hev[c.question], hev[c.event], strict=True))
    mag = missing_or_in(hev, c.magnitude, owner, np.inf)
    conf = missing_or_in(hev, c.confidence, owner, 1.0)
    if c.is_outcome is not None and c.is_outcome in hev.columns:
        flag = flag_column(hev, c.is_outcome, owner=owner, missing=False)
        hev, mag, conf = hev.loc[~flag], mag[~flag], conf[~flag]
    # both blank: an event without an impact record; one blank: a value lost, whose
    # record would have left the key events without a word
    for blank, values, other, given in ((c.confidence, conf, c.magnitude, mag),
                                        (c.magnitude, mag, c.confidence, conf)):
        half = np.flatnonzero(np.isnan(values) & ~np.isnan(given))
        if len(half):
            raise ValueError(column_error(
                blank, f"hold a value where '{other}' does (a record with one of them is an "
                "impact record whose other value is missing; an event without one leaves "
                "both blank)", list(hev.index[half]), owner=owner))
    return hev, mag, conf, removed


def _relation_polarities(df: pd.DataFrame, relation: str) -> list[int]:
    rel = (df[relation].to_numpy(dtype=object) if relation in df.columns
           else [None] * len(df))
    return [relation_polarity(r) for r in rel]


def _hindsight_edge_lists(quality: GraphQualityReport | None, hindsight_edges: Any,
                          c: _GraphColumns, owner: str, removed: set[tuple[Any, Any]]
                          ) -> dict[Any, list[tuple[Any, Any, int]]] | None:
    """Step 3a: the kept hindsight edges by question (None without hindsight edges).
    Without the gates, an edge touching an event rejected outright (``removed``) goes with
    it, as the gates remove it: no forecast edge can hit it, and it counted against edge
    recall."""
    if quality is not None:
        hed_kept = quality.edges
        require_columns(hed_kept, {"question": c.question, "source": c.source,
                                   "target": c.target}, owner=f"{owner} (the gates' edges)")
    elif hindsight_edges is not None:
        hed_kept = as_dataframe(hindsight_edges, name="hindsight_edges", owner=owner)
        require_columns(hed_kept, {"question": c.question, "source": c.source,
                                   "target": c.target}, owner=owner)
        # as the gates do: an edge without an end can never be hit, yet counted in recall
        no_missing(hed_kept, [c.question, c.source, c.target], owner=owner)
    else:
        return None
    h_edges: dict[Any, list[tuple[Any, Any, int]]] = defaultdict(list)
    for q, s, t, pol in zip(hed_kept[c.question], hed_kept[c.source], hed_kept[c.target],
                            _relation_polarities(hed_kept, c.relation), strict=True):
        if quality is None and ((q, s) in removed or (q, t) in removed):
            continue
        h_edges[q].append((s, t, pol))
    return h_edges


def _forecast_edge_lists(forecast_edges: Any, c: _GraphColumns, owner: str
                         ) -> dict[tuple[Any, Any], list[tuple[Any, Any, int]]] | None:
    """Step 3b: the forecast edges by (model, question) (None without forecast edges)."""
    if forecast_edges is None:
        return None
    fed = as_dataframe(forecast_edges, name="forecast_edges", owner=owner)
    require_columns(fed, {"by": c.by, "question": c.question, "source": c.source,
                          "target": c.target}, owner=owner)
    no_missing(fed, [c.by, c.question, c.source, c.target], owner=owner)
    f_edges: dict[tuple[Any, Any], list[tuple[Any, Any, int]]] = defaultdict(list)
    for m, q, s, t, pol in zip(fed[c.by], fed[c.question], fed[c.source], fed[c.target],
                               _relation_polarities(fed, c.relation), strict=True):
        f_edges[(m, q)].append((s, t, pol))
    return f_edges


def _forecast_units(forecasts: Any, fev: pd.DataFrame, c: _GraphColumns, owner: str
                    ) -> tuple[pd.DataFrame, np.ndarray]:
    """Step 4: the (model, question) forecasts scored and their simulated dates (days)."""
    by, question = c.by, c.question
    if forecasts is None:
        units = fev[[by, question]].drop_duplicates()
        return units, np.full(len(units), np.nan)
    units = as_dataframe(forecasts, name="forecasts", owner=owner)
    require_columns(units, {"by": by, "question": question,
                            "simulated_date": c.simulated_date}, owner=owner)
    no_missing(units, [by, question], owner=owner)
    not_pooled(units, by, owner)
    dupu = units.duplicated([by, question], keep=False).to_numpy()
    if dupu.any():
        raise ValueError(column_error(question, f"name each ({by}, {question}) forecast "
                                      "once", list(units.index[np.flatnonzero(dupu)]),
                                      owner=owner))
    sim, miss = parse_dates(units[c.simulated_date], units.index, c.simulated_date, owner,
                            require_tz=False)
    no_missing(units, c.simulated_date, owner=owner, missing=miss)
    return units, sim.astype(np.int64) / 86_400e9


def _event_texts(df: pd.DataFrame, c: _GraphColumns) -> list[frozenset[str]]:
    """The matcher's tokens of each event's title and description."""
    desc = (df[c.description].to_numpy(dtype=object) if c.description is not None
            and c.description in df.columns else [None] * len(df))
    return [event_tokens(t, d) for t, d in zip(df[c.title].to_numpy(dtype=object), desc,
                                                 strict=True)]


def _event_days(df: pd.DataFrame, c: _GraphColumns, owner: str) -> np.ndarray:
    return (to_days(df[c.date], df.index, c.date, owner) if c.date is not None
            and c.date in df.columns else np.full(len(df), np.nan))


def _one_date_per_event(hev: pd.DataFrame, days: np.ndarray, c: _GraphColumns,
                        owner: str) -> None:
    """Raise when the dated records of one hindsight event give different dates: which
    record's date a match used would be an accident of row order."""
    if c.date is None or c.date not in hev.columns or not len(hev):
        return
    same_within(hev, pd.to_datetime(days, unit="D"), [c.question, c.event], c.date,
                owner=owner, rows=~np.isnan(days))


def _check_date_awareness(fev: pd.DataFrame, hev: pd.DataFrame, units: pd.DataFrame,
                          forecasts: Any, c: _GraphColumns, owner: str) -> None:
    """Raise when the tables mix timezone-aware and naive dates (a naive date is not
    read as UTC), or day/month/year strings read month first in one and day first in
    another (:func:`check_formats_across`)."""
    tables = []
    if c.date is not None and c.date in fev.columns:
        tables.append((f"forecast_events['{c.date}']", fev[c.date]))
    if c.date is not None and c.date in hev.columns:
        tables.append((f"hindsight_events['{c.date}']", hev[c.date]))
    if forecasts is not None:
        tables.append((f"forecasts['{c.simulated_date}']", units[c.simulated_date]))
    tables = [(name, v) for name, v in tables if not all(is_missing(x) for x in v)]
    for (name_a, a), (name_b, b) in pairwise(tables):
        check_same_awareness(a, b, what=f"{name_a} and {name_b}", owner=owner)
    # each table read one way ('12/01/2024' month first), but not all alike ('13/01/2024')
    check_formats_across([(name, v, v.index) for name, v in tables], owner)


def _hindsight_questions(hev: pd.DataFrame, impact_rec: np.ndarray, c: _GraphColumns,
                         k: int, min_impact: float, owner: str) -> dict[Any, dict[str, Any]]:
    """Step 5: per question, its hindsight events (ids, tokens, days, impact) and the
    positions of its key events."""
    h_days_all = _event_days(hev, c, owner)
    _one_date_per_event(hev, h_days_all, c, owner)
    h_text_all = hindsight_texts(hev, c.title, c.description, [c.question, c.event], owner)
    questions: dict[Any, dict[str, Any]] = {}
    he_ids = hev[c.event].to_numpy(dtype=object)
    for (q, _e), rows in (rows_by_key(hev, [c.question, c.event]).items() if len(hev) else []):
        qd = questions.setdefault(q, {"ids": [], "tok": [], "days": [], "impact": []})
        qd["ids"].append(he_ids[rows[0]])
        qd["tok"].append(event_tokens(*event_text(h_text_all, rows)))
        days = h_days_all[rows]
        dated = days[~np.isnan(days)]          # one date (checked), on any of its records
        qd["days"].append(dated[0] if len(dated) else np.nan)
        imp = impact_rec[rows]
        qd["impact"].append(np.nan if np.all(np.isnan(imp)) else float(np.nanmax(imp)))
    for qd in questions.values():
        qd["key"] = set(key_event_positions(qd["impact"], k, min_impact).tolist())
    return questions


def _score_units(unit_list: list[tuple[Any, Any]], sim_days: np.ndarray, fev: pd.DataFrame,
                 f_tok: list[frozenset[str]], f_days: np.ndarray,
                 questions: dict[Any, dict[str, Any]], quality: GraphQualityReport | None,
                 f_edges: dict[tuple[Any, Any], list[tuple[Any, Any, int]]] | None,
                 h_edges: dict[Any, list[tuple[Any, Any, int]]] | None, c: _GraphColumns,
                 settings: MatchSettings
                 ) -> tuple[list[dict[str, Any]], list[dict[str, Any]], list[dict[str, Any]]]:
    """Step 6: score every forecast of a passing question; its rows, its matches, and the
    forecasts excluded by the gates."""
    by, question = c.by, c.question
    passed = None if quality is None else set(quality.passed)
    reasons = ({} if quality is None else
               dict(zip(quality.table["question"], quality.table["reasons"], strict=True)))
    f_rows_of = rows_by_key(fev, [by, question]) if len(fev) else {}
    f_ids = fev[c.event].to_numpy(dtype=object)
    empty_q: dict[str, Any] = {"ids": [], "tok": [], "days": [], "impact": [], "key": set()}
    per_rows, match_rows, excluded = [], [], []
    for u, (model, q) in enumerate(unit_list):
        if passed is not None and q not in passed:
            excluded.append({by: model, "question": q,
                             "reasons": reasons.get(q, "not built")})
            continue
        rows = f_rows_of.get((model, q), np.empty(0, dtype=np.int64))
        qd = questions.get(q, empty_q)
        row = _score_unit(rows, qd, f_tok, f_days, f_ids, settings.threshold,
                          settings.date_window_days, sim_days[u], settings.convention,
                          None if f_edges is None else f_edges.get((model, q), []),
                          h_edges.get(q, []) if h_edges is not None else None)
        matches = row.pop("_matches")
        per_rows.append({by: model, "question": q, **row})
        for h, f, s in matches:
            de = abs(f_days[rows[f]] - qd["days"][h])
            match_rows.append({by: model, "question": q, "forecast_event": f_ids[rows[f]],
                               "hindsight_event": qd["ids"][h], "score": s,
                               "date_error_days": float(de), "is_key": h in qd["key"]})
    return per_rows, match_rows, excluded


@deprecated_keywords(k="key_events", min_impact=KeywordMerge(
    "key_events", second_of_pair("reasoning_graph_metrics", "key_events", "minimum impact"),
    "key_events=(k, min_impact)"))
def reasoning_graph_metrics(
    forecast_events: Any,
    hindsight_events: Any,
    *,
    forecast_edges: Any = None,
    hindsight_edges: Any = None,
    forecasts: Any = None,
    gates: bool | GraphQualityReport = True,
    metric: str = "key_event_precision",
    convention: str = "paper",
    key_events: int | tuple[int, float | None] = 5,
    threshold: float | None = None,
    date_window_days: float | None = 7.0,
    by: str = "model",
    question: str = "question",
    event: str = "event",
    title: str = "title",
    description: str | None = "description",
    date: str | None = "date",
    magnitude: str = "magnitude",
    confidence: str = "confidence",
    is_outcome: str | None = "is_outcome",
    review_status: str = "review_status",
    simulated_date: str = "simulated_date",
    source: str = "source",
    target: str = "target",
    relation: str = "relation",
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
) -> ReasoningGraphResult:
    """Evidence and reasoning metrics of forecast graphs, as the benchmark's evaluator
    computes them, after the hindsight-graph quality gates.

    The metrics of the benchmark's evaluator for a forecast's causal graph against the
    question's hindsight graph: event precision, recall and F1, key-event recall and
    precision, the same over the events accessible at the simulated date, date errors
    and depth. Each is given per forecast and per model, the headline with an interval
    over questions; questions whose hindsight graph fails
    :func:`hindsight_graph_quality` are left out first.

    Parameters
    ----------
    forecast_events : pandas.DataFrame or convertible
        One row per event of a forecast's graph: ``by``, ``question``,
        ``event`` (its id within the forecast, referenced by
        ``forecast_edges``), ``title``, optional ``description`` and ``date``. A model
        named ``'(all)'``, the label of ``summary_table``'s pooled row, raises.
    hindsight_events : pandas.DataFrame or convertible
        One row per impact record of a hindsight event (as for
        :func:`key_event_recall`): ``question``, ``event``, ``title``,
        optional ``description``, ``date``, ``magnitude``, ``confidence``,
        ``is_outcome``, ``review_status``, ``sources``. The records of one event
        may leave its title, description or date blank; where given they must agree
        (a clash raises, naming the rows). A row with ``magnitude`` and ``confidence``
        both blank is no impact record (its event is no key event under either
        convention unless another record gives one); one of them blank raises.
    forecast_edges : pandas.DataFrame or convertible, optional
        ``by``, ``question``, ``source``, ``target`` (forecast event ids) and
        ``relation``. Without it the edge metrics and depth are NaN. The tables
        are joined on the model, question and event ids exactly: an id written two
        ways (``'Q1'`` and ``'q1'``, ``1`` and ``'1'``; an edge's end against its
        events) raises, naming the rows.
    hindsight_edges : pandas.DataFrame or convertible, optional
        ``question``, ``source``, ``target``, ``relation``, ``confidence``,
        ``strength``. Required when ``gates`` is True.
    forecasts : pandas.DataFrame or convertible, optional
        The (``by``, ``question``) forecasts with their ``simulated_date``
        (needed for accessible recall; a forecast with no event is listed
        here; every pair of ``forecast_events`` must have a row). Default: the
        pairs of ``forecast_events``, accessible metrics NaN.
    gates : bool or GraphQualityReport
        True (default): :func:`hindsight_graph_quality` with the paper's
        gates on the two hindsight tables, and only passing questions scored;
        a :class:`GraphQualityReport` to use its gates (its questions written as
        ``hindsight_events`` writes them: ``'Q1'`` against ``'q1'`` raises); False to
        score every question (rejected events are removed all the same, with the
        hindsight edges touching them).
    metric : str
        The headline metric, one of :data:`REASONING_METRICS`.
    convention : {'paper', 'code'}
        ``'paper'`` (default): key events among events with an impact record
        (``min_impact`` 0); a forecast with no events scores 0 on key-event
        recall, and its precisions, with the F1s built on them, are NaN; event F1
        of a forecast whose events match none is 0 (NaN where the question keeps
        no hindsight event: recall is undefined); accessible events are those dated
        strictly before
        the simulated date (the temporal gateway's rule). ``'code'``: the
        released evaluator: ``min_impact`` 0.2, key-event metrics NaN for a
        forecast with no events, F1 NaN when precision + recall = 0,
        accessible events dated on or before the simulated date.
    key_events : int or (int, float), default 5
        The key events of a question: its top ``k`` hindsight events by impact,
        at or above the convention's minimum impact (0 under ``'paper'``, 0.2
        under ``'code'``); ``key_events=k`` sets ``k``, a pair ``(k, min_impact)``
        sets the minimum too, e.g. ``key_events=(5, 0.1)``. The result keeps both
        as ``k`` and ``min_impact``. The keywords ``k=`` and ``min_impact=`` (of
        :func:`key_event_recall`) still work here, with a
        :class:`DeprecationWarning`, for one release.
    threshold : float, optional
        Match threshold (hybrid matcher, default 0.45).
    date_window_days : float or None
        Date gate of a match (default 7, "in all reported experiments"; days of 24
        hours between instants: across a daylight-saving change aware noons a day
        apart are 23 hours apart); a pair missing a date fails it under
        ``convention='paper'`` and skips it under ``'code'``.
    by, question, event, title, description, date, magnitude, confidence : str
        Column names.
    is_outcome, review_status, simulated_date, source, target, relation : str
        Column names.
    n_resamples, confidence_level, rng
        The interval over questions of the headline metric (the bootstrap-t of
        ``date_error_days`` and ``forecast_depth`` draws ``n_resamples``; the
        fractions' Wilson interval draws nothing).

    Returns
    -------
    ReasoningGraphResult
        ``statistic`` the mean of ``metric`` over the forecasts where it is defined,
        with its interval over questions (``pvalue`` NaN); every
        metric per forecast in ``table``, per model in ``summary_table``.

    See Also
    --------
    hindsight_graph_quality : the quality gates applied first.
    graph_depth : the longest chain of a graph.
    key_event_recall : how many of a question's key events a forecast found.

    Notes
    -----
    Per forecast with forecast events :math:`F`, non-outcome hindsight events
    :math:`H` and greedy one-to-one matches :math:`M` (the hybrid BM25 +
    token-F1 matcher of :func:`key_event_recall`):

    * event precision :math:`|M|/|F|`, recall :math:`|M|/|H|`, F1 their
      harmonic mean;
    * key events :math:`K`: the top :math:`k` of :math:`H` by impact
      (max magnitude x confidence over records) at or above the minimum;
      key-event recall :math:`|M_K|/|K|`, key-event precision
      :math:`|M_K|/|F|`;
    * accessible: :math:`H_a` the events of :math:`H` dated before the
      simulated date (undated ones excluded), matched afresh;
      accessible recall :math:`|M_a|/|H_a|`, precision :math:`|M_a|/|F|`;
    * date error: mean :math:`|t_f - t_h|` in days over matched pairs with
      both dates;
    * edges: a forecast edge :math:`(u, v)` is aligned when its ends match
      hindsight events :math:`(u', v')` and :math:`(u', v')` is a kept
      hindsight edge; edge precision = aligned forecast edges / forecast
      edges, edge recall = distinct hindsight edges hit / kept hindsight
      edges; direction accuracy = share of aligned edges whose relation
      polarities (:func:`relation_polarity`, both non-zero) agree;
    * depth: :func:`graph_depth` of the forecast's edges.

    Examples
    --------
    >>> import coherence
    >>> hind = {"question": ["q"] * 2, "event": ["e1", "e2"],
    ...         "title": ["Central bank raises rates", "Dock workers strike"],
    ...         "date": ["2024-01-05", "2024-01-20"],
    ...         "magnitude": [0.9, 0.5], "confidence": [1.0, 1.0]}
    >>> fe = {"model": ["m"], "question": ["q"], "event": ["f1"],
    ...       "title": ["Central bank raises rates again"], "date": ["2024-01-06"]}
    >>> fc = {"model": ["m"], "question": ["q"], "simulated_date": ["2024-01-10"]}
    >>> res = coherence.reasoning_graph_metrics(fe, hind, forecasts=fc, gates=False, rng=0)
    >>> res.table[["key_event_recall", "accessible_recall", "date_error_days"]].values.tolist()
    [[0.5, 1.0, 1.0]]
    """
    owner = "reasoning_graph_metrics"
    metric = check_choice(metric, "metric", owner, REASONING_METRICS)
    settings = _graph_settings_iv(convention, key_events, threshold, date_window_days, owner)
    n_resamples, confidence_level = check_resampling(owner, n_resamples, confidence_level)
    gen = check_rng(rng, owner=owner)
    cols = _GraphColumns(by=by, question=question, event=event, title=title,
                         description=description, date=date, magnitude=magnitude,
                         confidence=confidence, is_outcome=is_outcome,
                         review_status=review_status, simulated_date=simulated_date,
                         source=source, target=target, relation=relation)
    fev, hev = _event_tables(forecast_events, hindsight_events, cols, owner)
    _check_joins(fev, hev, forecasts, forecast_edges, hindsight_edges, cols, owner)
    quality = _quality_gates(gates, hev, hindsight_edges, cols, owner)
    hev, mag, conf, removed = _kept_hindsight_events(hev, cols, owner)
    h_edges = _hindsight_edge_lists(quality, hindsight_edges, cols, owner, removed)
    f_edges = _forecast_edge_lists(forecast_edges, cols, owner)
    units, sim_days = _forecast_units(forecasts, fev, cols, owner)
    unit_list = list(units[[by, question]].itertuples(index=False, name=None))
    _check_listed(unit_list, fev, f_edges, [by, question], owner)
    _check_date_awareness(fev, hev, units, forecasts, cols, owner)
    f_tok, f_days = _event_texts(fev, cols), _event_days(fev, cols, owner)
    warn_undated(f_days, _event_days(hev, cols, owner), settings.date_window_days, convention,
                 owner)
    questions = _hindsight_questions(hev, mag * conf, cols, settings.k, settings.min_impact,
                                     owner)
    per_rows, match_rows, excluded = _score_units(
        unit_list, sim_days, fev, f_tok, f_days, questions, quality, f_edges, h_edges, cols,
        settings)
    count_cols = ["n_forecast_events", "n_hindsight_events", "n_matched", "n_key_events",
                  "n_key_matched", "n_accessible", "n_accessible_matched", "n_forecast_edges",
                  "n_hindsight_edges", "n_aligned_edges"]
    per = pd.DataFrame(per_rows, columns=[by, "question", *count_cols, *REASONING_METRICS])
    values = per[metric].to_numpy(dtype=np.float64)
    defined = ~np.isnan(values)
    if not defined.any():
        # stacklevel 3: past deprecated_keywords' wrapper, at the caller's line
        warnings.warn(f"{owner}: '{metric}' is undefined for every scored forecast.",
                      DegenerateDataWarning, stacklevel=3)
        stat = np.nan
    else:
        stat = float(values[defined].mean())
    lo, hi = cluster_mean_interval(values, per["question"].to_numpy(dtype=object),
                                   n_resamples, confidence_level, gen,
                                   kind=METRIC_KINDS[metric], estimate=stat)
    return ReasoningGraphResult(
        statistic=stat, pvalue=np.nan,
        confidence_interval=ConfidenceInterval(lo, hi, confidence_level),
        n_obs=int(defined.sum()), method=f"{MEAN_KINDS[METRIC_KINDS[metric]]} over questions",
        by=by, metric=metric, convention=convention, k=settings.k,
        min_impact=settings.min_impact, threshold=settings.threshold,
        date_window_days=settings.date_window_days, n_resamples=n_resamples,
        gated=quality is not None,
        n_excluded_questions=0 if quality is None else quality.n_excluded,
        n_excluded_forecasts=len(excluded), n_rejected_events=len(removed), table=per,
        summary_table=_metric_means(per, by),
        matches=pd.DataFrame(match_rows, columns=[by, "question", "forecast_event",
                                                  "hindsight_event", "score",
                                                  "date_error_days", "is_key"]),
        quality=quality,
        excluded_forecasts=pd.DataFrame(excluded, columns=[by, "question", "reasons"]))


def _check_listed(unit_list: list[tuple[Any, ...]], fev: pd.DataFrame,
                  f_edges: dict[tuple[Any, ...], Any] | None, key: list[str],
                  owner: str) -> None:
    """Every forecast with events or edges is one of ``unit_list`` (the forecasts table's,
    when given), so none is scored as a forecast that found nothing, or dropped."""
    given = set(unit_list)
    check_listed(fev, given, key, owner)
    stray = [k for k in (f_edges or {}) if k not in given]
    if stray:
        raise ValueError(param_error("forecast_edges", owner, "edges of listed forecasts only",
                                     f"edges of {len(stray)} unlisted forecast(s): "
                                     f"{listed(stray, show=repr)}"))


def _ratio(num: int, den: int) -> float:
    return num / den if den else np.nan


def _f1(p: float, r: float, convention: str) -> float:
    if np.isnan(p) or np.isnan(r):
        return np.nan
    if p + r == 0:
        return 0.0 if convention == "paper" else np.nan
    return 2 * p * r / (p + r)


def _score_unit(rows: np.ndarray, qd: dict[str, Any], f_tok: list[frozenset[str]],
                f_days: np.ndarray, f_ids: np.ndarray, threshold: float,
                date_window_days: float | None, sim_day: float, convention: str,
                f_edges: Sequence[tuple[Any, Any, int]] | None,
                h_edges: Sequence[tuple[Any, Any, int]] | None) -> dict[str, Any]:
    nf, nh = len(rows), len(qd["ids"])
    ftok = [f_tok[i] for i in rows]
    fd = f_days[rows]
    hd = np.asarray(qd["days"], dtype=np.float64)
    m = match_one(ftok, qd["tok"], fd, hd, threshold=threshold,
                  date_window_days=date_window_days, undated_pass=convention == "code")
    pairs = m.pairs
    n_match = len(pairs)
    key = qd["key"]
    n_key_hit = sum(1 for h, _, _ in pairs if h in key)
    if nf == 0 and convention == "code":
        ker, kep = np.nan, np.nan
    else:
        ker, kep = _ratio(n_key_hit, len(key)), _ratio(n_key_hit, nf)
    ep, er = _ratio(n_match, nf), _ratio(n_match, nh)
    # accessible
    n_acc = n_acc_match = 0
    ap = ar = af = np.nan
    if not np.isnan(sim_day):
        with np.errstate(invalid="ignore"):
            vis = (hd < sim_day) if convention == "paper" else (hd <= sim_day)
        acc = np.flatnonzero(vis & ~np.isnan(hd))
        n_acc = len(acc)
        ma = match_one(ftok, [qd["tok"][i] for i in acc], fd, hd[acc], threshold=threshold,
                       date_window_days=date_window_days, undated_pass=convention == "code")
        n_acc_match = len(ma.pairs)
        ap, ar = _ratio(n_acc_match, nf), _ratio(n_acc_match, n_acc)
        af = _f1(ap, ar, convention)
    errs = [abs(fd[f] - hd[h]) for h, f, _ in pairs if not (np.isnan(fd[f]) or np.isnan(hd[h]))]
    out: dict[str, Any] = {
        "n_forecast_events": nf, "n_hindsight_events": nh, "n_matched": n_match,
        "n_key_events": len(key), "n_key_matched": n_key_hit, "n_accessible": n_acc,
        "n_accessible_matched": n_acc_match,
        "key_event_precision": kep, "key_event_recall": ker, "event_precision": ep,
        "event_recall": er, "event_f1": _f1(ep, er, convention), "accessible_precision": ap,
        "accessible_recall": ar, "accessible_f1": af,
        "date_error_days": float(np.mean(errs)) if errs else np.nan}
    out.update(_edge_metrics(rows, f_ids, f_edges, h_edges, pairs, qd["ids"]))
    out["_matches"] = pairs
    return out


def _edge_metrics(rows: np.ndarray, f_ids: np.ndarray,
                  f_edges: Sequence[tuple[Any, Any, int]] | None,
                  h_edges: Sequence[tuple[Any, Any, int]] | None,
                  pairs: Sequence[tuple[int, int, Any]], h_ids: Sequence[Any]) -> dict[str, Any]:
    """The edge metrics of one forecast graph against the hindsight graph, through the
    matched events ``pairs`` (hindsight, forecast, score): edges aligned, their
    precision and recall, the relations' direction accuracy, the forecast's depth."""
    n_fe = n_he = n_aligned = 0
    eprec = erec = dacc = depth = np.nan
    if f_edges is not None:
        node_ids = {f_ids[i] for i in rows}
        depth = float(graph_depth([(s, t) for s, t, _ in f_edges], node_ids))
        # an edge is a distinct (source, target) pair: a repeated row counts once, with
        # the relation of its last row (as the code keeps the last of duplicate edges)
        f_map = {(s, t): p for s, t, p in f_edges}
        n_fe = len(f_map)
        if h_edges is not None:
            h_map = {(s, t): p for s, t, p in h_edges}
            n_he = len(h_map)
            to_h = {f_ids[rows[f]]: h_ids[h] for h, f, _ in pairs}
            hit: set[tuple[Any, Any]] = set()
            checks = []
            for (s, t), p in f_map.items():
                hs, ht = to_h.get(s), to_h.get(t)
                if hs is None or ht is None or (hs, ht) not in h_map:
                    continue
                n_aligned += 1
                hit.add((hs, ht))
                hp = h_map[(hs, ht)]
                if hp != 0 and p != 0:
                    checks.append(hp == p)
            eprec = _ratio(n_aligned, n_fe)
            erec = _ratio(len(hit), n_he)
            dacc = float(np.mean(checks)) if checks else np.nan
    return {"n_forecast_edges": n_fe, "n_hindsight_edges": n_he,
            "n_aligned_edges": n_aligned, "edge_precision": eprec, "edge_recall": erec,
            "direction_accuracy": dacc, "forecast_depth": depth}


def _metric_means(per: pd.DataFrame, by: str) -> pd.DataFrame:
    from ._forecast import POOLED

    rows = []
    # each model's rows in one pass over the rows (not one pass per model)
    groups = [*((m, per.iloc[at]) for m, at in zip(pd.unique(per[by]), label_rows(per[by]),
                                                    strict=True)), (POOLED, per)]
    for name, sub in groups:
        row: dict[str, Any] = {by: name, "n_forecasts": len(sub)}
        for col in REASONING_METRICS:
            v = sub[col].to_numpy(dtype=np.float64)
            ok = ~np.isnan(v)
            row[col] = float(v[ok].mean()) if ok.any() else np.nan
            row[f"n_{col}"] = int(ok.sum())
        rows.append(row)
    return pd.DataFrame(rows)
