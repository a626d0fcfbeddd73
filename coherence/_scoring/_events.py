"""Evidence and reasoning quality of forecasts: source precision, key-event recall,
causal pressure and its alignment with market prices.

Array layer: :func:`event_tokens`, :func:`token_f1`, :func:`bm25_scores` and
:func:`greedy_match` are small, exact and tested against hand computations; the
public table layer (:func:`source_precision`, :func:`key_event_recall`,
:func:`causal_pressure`, :func:`market_alignment`, :func:`grounding_split`)
validates the tables once and loops over questions.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any

import numpy as np
import pandas as pd

from .._docstrings import fill_doc
from .._parameters import check_choice
from .._parameters import check_float
from .._parameters import check_int
from .._results import CoherenceResult
from .._results import ConfidenceInterval
from .._rng import RNGLike
from .._rng import check_rng
from .._validation import as_dataframe
from .._validation import column_error
from .._validation import finite_column
from .._validation import flag_column
from .._validation import no_missing
from .._validation import nonempty
from .._validation import param_error
from .._validation import probability_column
from .._validation import require_columns
from .._validation import same_within
from .._warnings import DegenerateDataWarning
from .._warnings import DeprecatedAlias
from .._warnings import SkippedRecordsWarning

if TYPE_CHECKING:  # pragma: no cover

    from ._forecast import ForecastScoresResult
from .._parameters import check_resampling
from .._resampling import MEAN_KINDS
from .._resampling import cluster_mean_interval
from .._resampling import rows_by_key
from ._dates import check_formats_across
from ._dates import check_same_awareness
from ._dates import is_missing
from ._dates import to_days
from ._graph_quality import rejected_rows
from ._ids import check_ids
from ._ids import check_ids_within
from ._matching import THRESHOLDS
from ._matching import EventColumns
from ._matching import MatchSettings
from ._matching import check_listed
from ._matching import cosine
from ._matching import default_embedder
from ._matching import event_text
from ._matching import event_tokens
from ._matching import hindsight_texts
from ._matching import key_event_positions
from ._matching import match_one
from ._matching import text_of
from ._matching import warn_undated
from ._sources import SourcePrecisionResult

__all__ = [
    "KeyEventRecallResult",
    "grounding_split",
    "key_event_recall",
]
# --------------------------------------------------------------------------- key-event recall
@dataclass(frozen=True, slots=True)
class KeyEventRecallResult(CoherenceResult, test_name="key_event_recall",
                           settings=("by", "convention", "k", "min_impact", "threshold",
                                     "date_window_days", "matcher", "n_resamples",
                                     "n_no_key_events", "n_rejected_events",
                                     "event_precision", "event_recall", "event_f1")):
    """Key-event recall (KER) of forecast event graphs against hindsight events.

    ``statistic`` is the mean KER over forecasts whose question has at least
    one key event; ``confidence_interval`` its interval over questions (Wilson's
    at the cluster-robust effective sample size, t quantile); ``pvalue`` is NaN.

    Attributes
    ----------
    by : str
        Column naming the forecaster.
    convention : str
        ``'paper'`` or ``'code'`` (see :func:`key_event_recall`).
    k : int
        Key events per question (top ``k`` by impact).
    min_impact : float
        Minimum impact score of a key event.
    threshold : float
        Match threshold used.
    date_window_days : float or None
        Date window of a match (None: no date gate).
    matcher : str
        ``'hybrid'``, ``'semantic'`` or ``'custom'`` (a user embedder).
    n_resamples : int
        As given (the interval draws nothing).
    n_no_key_events : int
        Forecasts whose question has no key event (KER undefined).
    n_rejected_events : int
        Hindsight events removed as rejected by annotators (every record rejected).
    event_precision, event_recall, event_f1 : float
        Means over forecasts where each is defined.
    table : pandas.DataFrame
        One row per forecast: ``by``, ``question``, ``n_forecast_events``,
        ``n_hindsight_events``, ``n_key_events``, ``n_matched``,
        ``n_key_matched``, ``ker``, ``precision``, ``recall``, ``f1``.
    matches : pandas.DataFrame
        One row per matched pair: ``by``, ``question``, ``hindsight_event``,
        ``forecast_row`` (index label in ``forecast_events``), ``score``,
        ``bm25``, ``token_f1``, ``is_key``.
    key_events : pandas.DataFrame
        Per question, the key events and their impact score, ranked.
    """

    by: str
    convention: str
    k: int
    min_impact: float
    threshold: float
    date_window_days: float | None
    matcher: str
    n_resamples: int
    n_no_key_events: int
    n_rejected_events: int
    event_precision: float
    event_recall: float
    event_f1: float
    table: pd.DataFrame
    matches: pd.DataFrame
    key_events: pd.DataFrame

    per_forecast = DeprecatedAlias("table")


@fill_doc
def key_event_recall(
    forecast_events: Any,
    hindsight_events: Any,
    *,
    convention: str = "paper",
    k: int = 5,
    min_impact: float | None = None,
    threshold: float | None = None,
    date_window_days: float | str | None = "convention",
    matcher: str | Callable[[list[str]], Any] = "hybrid",
    forecasts: Any = None,
    by: str = "model",
    question: str = "question",
    title: str = "title",
    description: str | None = "description",
    date: str | None = "date",
    event: str = "event",
    magnitude: str = "magnitude",
    confidence: str = "confidence",
    is_outcome: str | None = "is_outcome",
    review_status: str = "review_status",
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
) -> KeyEventRecallResult:
    """Key-event recall: how many of a question's most important events a forecast found.

    A question's key events are its hindsight events of largest impact (magnitude times
    confidence); a forecast's recall is the share of them its own graph contains, events
    matched by their text (BM25 and token F1) and, optionally, their dates. The mean
    recall's interval takes the question as its unit.

    Parameters
    ----------
    forecast_events : pandas.DataFrame or convertible
        The events of each forecast's graph: one row per event with ``by``,
        ``question``, ``title`` and optionally ``description`` and ``date``
        (an event given twice, rows alike in these columns and ``event`` when
        present, raises). Dates here and in ``hindsight_events``
        must be all timezone-aware or all naive.
    hindsight_events : pandas.DataFrame or convertible
        The reference events: one row per impact record with ``question``,
        ``event`` (an id), ``title``, optional ``description``/``date``,
        ``magnitude`` (finite, >= 0) and ``confidence`` (in [0, 1]); a
        missing magnitude or confidence raises (it is never dropped). An
        event with several records may leave its title, description or date blank
        on some of them; where given they must agree (a clash raises, naming the
        rows; surrounding white space aside). Two event ids of one question that
        differ only in case, surrounding spaces or type (``1`` and ``'1'``) raise. Rows flagged
        in ``is_outcome`` (the outcome event: bools, 0/1 or the strings
        true/false, t/f, yes/no, y/n, 1/0 as a CSV gives them; blank is false) are left
        out of matching and counting, and so are records whose ``review_status``
        is ``'rejected'`` (any case, surrounding spaces aside; any other value, or
        a blank, keeps the record), as :func:`reasoning_graph_metrics` removes them.
    convention : {'paper', 'code'}
        ``'paper'`` (default, the WorldReasoner paper): the key events are the
        top ``k`` among all events with an impact record (``min_impact`` 0),
        and a match must fall within 7 days (``date_window_days`` 7, "in all
        reported experiments"); a pair where either event has no date cannot
        be shown to fall within the window, so it does not match. ``'code'``
        (the authors' released code and this toolkit's earlier default):
        ``min_impact`` 0.2, no date gate, and with an explicit window an
        undated pair skips the gate. See the table in the Notes.
    k : int
        Number of key events per question (default 5).
    min_impact : float, optional
        Minimum impact score of a key event; overrides the convention's (0
        under ``'paper'``, 0.2 under ``'code'``).
    threshold : float in [0, 1], optional
        Match threshold: 0.45 for ``'hybrid'`` (default), 0.55 for
        ``'semantic'`` and custom embedders.
    date_window_days : float or None, optional
        A match also needs ``|date_f - date_h| <= window`` days (of 24 hours
        between instants: across a daylight-saving change aware noons a day apart are
        23 hours apart); ``None`` turns the gate off. Default: the convention's (7
        under ``'paper'``, None under ``'code'``). A pair missing either date fails the gate
        under ``'paper'`` and skips it under ``'code'``; where no forecast event (or
        no hindsight event) has a date, nothing can match under ``'paper'``, and a
        :class:`~coherence.DegenerateDataWarning` says so.
    matcher : {'hybrid', 'semantic'} or callable
        ``'hybrid'``: BM25 and token F1 (see Notes). ``'semantic'``: cosine
        similarity of all-MiniLM-L6-v2 sentence embeddings (optional extra).
        A callable ``texts -> (n, d) array`` is used as the embedder.
    forecasts : pandas.DataFrame or convertible, optional
        The (``by``, ``question``) forecasts to evaluate; a forecast without
        any event (an empty graph) is listed here; every pair of
        ``forecast_events`` must have a row, and a pair on two rows raises (it is
        one graph, scored once). Default: the pairs present in ``forecast_events``.
    by, question, title, description, date, event, magnitude, confidence, is_outcome : str
        Column names (``description``, ``date`` and ``is_outcome`` are used
        when present).
    review_status : str
        Column name of the annotators' verdict on a hindsight record, used when
        present (without it no record is removed as rejected).
    %(wilson_over_questions)s

    Returns
    -------
    KeyEventRecallResult
        ``statistic`` the mean key-event recall over the forecasts whose question has a
        key event, with its interval over questions (``pvalue``
        NaN); one row per forecast in ``table``, the matched pairs in ``matches``.

    See Also
    --------
    source_precision : the share of cited sources among the reference sources.
    grounding_split : KER of correct versus incorrect forecasts.
    reasoning_graph_metrics : the evidence and reasoning metrics of forecast graphs.

    Notes
    -----
    *Text.* An event's text is ``title + ". " + description``; its tokens are
    the set of lower-case ``[a-z0-9]+`` words longer than 2 characters, minus
    {the, and, for, with, that, this}.

    *Scores.* Token F1 is :math:`2|F \\cap H| / (|F| + |H|)`. BM25
    (:math:`k_1 = 1.5`, :math:`b = 0.75`, see :func:`bm25_scores`) is computed
    with the searched side as the corpus: the forecast graph's events for
    hindsight -> forecast, the question's hindsight events for forecast ->
    hindsight; each query's scores are divided by their maximum.

    *Matching.* For each hindsight event the candidates are the top 5 forecast
    events by BM25 hindsight -> forecast (ties by row order). A candidate pair
    scores :math:`s = 0.6\\,\\mathrm{BM25}_{f \\to h} + 0.4\\,F_1` and matches
    when :math:`s \\ge` threshold and, with a window, the dates agree. Matches
    are assigned greedily one-to-one by descending score (ties by hindsight,
    then forecast order). The semantic matcher scores every pair by cosine
    similarity.

    *Key events.* The impact score of a hindsight event is the maximum of
    magnitude x confidence over its records; the key events are the top
    :math:`k` (ties by first appearance; impacts compared at 12 significant digits,
    so 0.3 x 0.6 and 0.2 x 0.9 tie at 0.18 whatever their binary rounding) among those
    with impact
    :math:`\\ge` ``min_impact``. KER = matched key events / key events;
    event precision = matches / forecast events, recall = matches / hindsight
    events, F1 = :math:`2m / (|F| + |H|)`. A question without key events
    leaves KER undefined (NaN), counted in ``n_no_key_events``; so does a
    question absent from ``hindsight_events``, or whose every record is rejected or the
    outcome, with a :class:`~coherence.SkippedRecordsWarning` naming such questions (and
    for the latter how many rows each had, how many rejected and how many the outcome).
    The tables are joined on ``question`` (and ``by``) exactly: an id written two ways (``'Q2'``
    and ``'q2'``, ``1`` and ``'1'``, within a table or between them) raises.

    *Conventions.* The defaults of the two conventions:

    ==========================  ===================  =====================
    quantity                    ``'paper'``          ``'code'``
    ==========================  ===================  =====================
    ``min_impact``              0                    0.2
    ``date_window_days``        7                    None (no gate)
    undated pair, with a gate   fails (no match)     skips the gate
    ==========================  ===================  =====================

    References
    ----------
    .. [1] S. Robertson, H. Zaragoza (2009). The probabilistic relevance
       framework: BM25 and beyond. Foundations and Trends in IR 3(4).
    .. [2] N. Reimers, I. Gurevych (2019). Sentence-BERT: sentence embeddings
       using Siamese BERT-networks. EMNLP.

    Examples
    --------
    >>> import coherence
    >>> hind = {"question": ["q"] * 2, "event": ["e1", "e2"],
    ...         "title": ["Central bank raises interest rates", "Strike closes ports"],
    ...         "date": ["2024-03-01", "2024-03-04"],
    ...         "magnitude": [0.9, 0.5], "confidence": [0.9, 0.8]}
    >>> fc = {"model": ["m"], "question": ["q"],
    ...       "title": ["Central bank raises interest rates again"], "date": ["2024-03-05"]}
    >>> res = coherence.key_event_recall(fc, hind, rng=0)
    >>> res.statistic, list(res.table["n_key_events"])
    (0.5, [2])
    >>> coherence.key_event_recall(fc, hind, date_window_days=3, rng=0).statistic
    0.0
    """
    columns = EventColumns(
        by=by, question=question, title=title, description=description, date=date,
        event=event, magnitude=magnitude, confidence=confidence, is_outcome=is_outcome,
        review_status=review_status)
    options = _KeyEventOptions(
        convention=convention, k=k, min_impact=min_impact, threshold=threshold,
        date_window_days=date_window_days, matcher=matcher, n_resamples=n_resamples,
        confidence_level=confidence_level, rng=rng)
    iv = _key_event_recall_iv(forecast_events, hindsight_events, forecasts, columns, options)
    return _key_event_recall(iv)


@dataclass(frozen=True, slots=True)
class _KeyEventOptions:
    """The options given to :func:`key_event_recall`, as given (checked by
    :func:`_key_event_recall_iv`)."""

    convention: str
    k: int
    min_impact: float | None
    threshold: float | None
    date_window_days: float | str | None
    matcher: str | Callable[[list[str]], Any]
    n_resamples: int
    confidence_level: float
    rng: RNGLike


@dataclass(frozen=True, slots=True)
class _KeyEventInput:
    """Validated input of :func:`key_event_recall`: the tables with missing keys and
    outcome records removed, texts, tokens and dates parsed, options checked."""

    fdf: pd.DataFrame
    hdf: pd.DataFrame
    units: list[tuple[Any, Any]]
    f_text: list[tuple[Any, Any]]
    f_tok: list[frozenset[str]]
    f_days: np.ndarray
    h_text: list[tuple[Any, Any]]
    h_days: np.ndarray
    impact: np.ndarray
    n_rejected_events: int
    emptied: dict[Any, tuple[int, int, int]]
    removal_columns: tuple[str, str]
    by: str
    question: str
    event: str
    settings: MatchSettings
    matcher: str
    embedder: Callable[[list[str]], Any] | None
    n_resamples: int
    confidence_level: float
    gen: np.random.Generator


def _check_event_rows(fdf: pd.DataFrame, hdf: pd.DataFrame, h_days: np.ndarray,
                      units: pd.DataFrame | None, columns: EventColumns,
                      owner: str) -> None:
    """The checks across rows of :func:`key_event_recall`'s tables: each forecast event
    once, every forecast listed in ``forecasts`` (when given), one date per hindsight
    event, and dates all timezone-aware or all naive across the two tables."""
    by, question, date = columns.by, columns.question, columns.date
    same = [c for c in (by, question, columns.event, columns.title, columns.description, date)
            if c is not None and c in fdf.columns]
    dup = fdf.duplicated(same, keep=False).to_numpy()
    if dup.any():
        raise ValueError(column_error(
            columns.title, f"name each event of a ({by}, {question}) forecast once (rows "
            f"alike in {same} are one event given twice)",
            list(fdf.index[np.flatnonzero(dup)]), owner=owner))
    if units is not None:
        check_listed(fdf, set(units.itertuples(index=False, name=None)), [by, question], owner)
    if date is None or date not in hdf.columns:
        return
    if len(hdf):
        same_within(hdf, pd.to_datetime(h_days, unit="D"), [question, columns.event], date,
                    owner=owner, rows=~np.isnan(h_days))
    # a table without a date present has no awareness to mix (as reasoning_graph_metrics)
    if (date in fdf.columns and not fdf[date].map(is_missing).all()
            and not hdf[date].map(is_missing).all()):
        check_same_awareness(fdf[date], hdf[date], owner=owner,
                             what=f"forecast_events['{date}'] and hindsight_events['{date}']")
        # '12/01/2024' here read month first, '13/01/2024' there day first: each table
        # is read one way, but not the two alike
        check_formats_across([(f"forecast_events['{date}']", fdf[date], fdf.index),
                              (f"hindsight_events['{date}']", hdf[date], hdf.index)], owner)


def _listed_forecasts(forecasts: Any, fdf: pd.DataFrame, by: str, question: str,
                    owner: str) -> pd.DataFrame:
    """The (``by``, ``question``) forecasts scored: ``forecasts`` checked, or the pairs of
    ``forecast_events``."""
    if forecasts is None:
        return fdf[[by, question]].drop_duplicates()
    units = as_dataframe(forecasts, name="forecasts", owner=owner)
    require_columns(units, {"by": by, "question": question}, owner=owner)
    no_missing(units, [by, question], owner=owner)
    # a pair on two rows (a table of dated forecasts) is one graph, scored once:
    # collapsing the rows without a word would hide what was counted
    dup = np.flatnonzero(units.duplicated([by, question], keep=False).to_numpy())
    if len(dup):
        raise ValueError(column_error(
            question, f"name each ({by}, {question}) pair of 'forecasts' once (one row "
            "per forecast graph; for a table of several forecasts per pair pass "
            f"forecasts[['{by}', '{question}']].drop_duplicates())",
            list(units.index[dup]), owner=owner))
    return units[[by, question]]


def _key_event_recall_iv(forecast_events: Any, hindsight_events: Any, forecasts: Any,
                         columns: EventColumns, options: _KeyEventOptions) -> _KeyEventInput:
    owner = "key_event_recall"
    by, question, title, description, date, event, magnitude, confidence, is_outcome = (
        columns.by, columns.question, columns.title, columns.description, columns.date,
        columns.event, columns.magnitude, columns.confidence, columns.is_outcome)
    convention, k, min_impact, threshold, date_window_days, matcher = (
        options.convention, options.k, options.min_impact, options.threshold,
        options.date_window_days, options.matcher)
    convention = check_choice(convention, "convention", owner, ("paper", "code"))
    k = check_int(k, "k", owner, low=1)
    if min_impact is None:
        min_impact = 0.0 if convention == "paper" else 0.2
    min_impact = check_float(min_impact, "min_impact", owner, low=0.0)
    embedder: Callable[[list[str]], Any] | None = None
    if callable(matcher):
        embedder, matcher_name = matcher, "custom"
    else:
        matcher_name = check_choice(matcher, "matcher", owner, ("hybrid", "semantic"))
    if threshold is None:
        threshold = THRESHOLDS["hybrid" if matcher_name == "hybrid" else "semantic"]
    # every similarity (hybrid, cosine of a semantic or custom embedder) is at most 1, and a
    # threshold below 0 would match unrelated events
    threshold = check_float(threshold, "threshold", owner, low=0.0, high=1.0)
    if isinstance(date_window_days, str) and date_window_days == "convention":
        date_window_days = 7.0 if convention == "paper" else None
    window: float | None = None
    if date_window_days is not None:
        window = check_float(date_window_days, "date_window_days", owner, low=0.0)
    n_resamples, confidence_level = check_resampling(owner, options.n_resamples,
                                                     options.confidence_level)

    fdf = as_dataframe(forecast_events, name="forecast_events", owner=owner)
    hdf = as_dataframe(hindsight_events, name="hindsight_events", owner=owner)
    require_columns(fdf, {"by": by, "question": question, "title": title}, owner=owner)
    require_columns(hdf, {"question": question, "event": event, "title": title,
                          "magnitude": magnitude, "confidence": confidence}, owner=owner)
    no_missing(fdf, [by, question], owner=owner)
    nonempty(hdf, name="hindsight_events", owner=owner)
    no_missing(hdf, [question, event], owner=owner)
    # a record the annotators rejected is removed, as reasoning_graph_metrics removes it;
    # an event counts as rejected when every record of it is
    rejected = (rejected_rows(hdf[columns.review_status])
                if columns.review_status in hdf.columns else np.zeros(len(hdf), dtype=bool))
    n_rejected = len(set(zip(hdf.loc[rejected, question], hdf.loc[rejected, event],
                             strict=True))
                     - set(zip(hdf.loc[~rejected, question], hdf.loc[~rejected, event],
                               strict=True)))
    given_q = hdf[question].to_numpy(dtype=object)
    hdf = hdf.loc[~rejected]
    outcome_q = np.empty(0, dtype=object)
    if is_outcome is not None and is_outcome in hdf.columns:
        # 'False', '0', 'no' from a CSV are false (never astype(bool)); blank is false
        flag = flag_column(hdf, is_outcome, owner=owner, missing=False)
        outcome_q = hdf[question].to_numpy(dtype=object)[flag]
        hdf = hdf.loc[~flag]
    emptied = _emptied_questions(given_q, given_q[rejected], outcome_q,
                                 hdf[question].to_numpy(dtype=object))
    mag = finite_column(hdf, magnitude, owner=owner)
    bad = np.flatnonzero(mag < 0.0)
    if len(bad):
        raise ValueError(column_error(magnitude, "hold finite numbers >= 0",
                                      list(hdf.index[bad]), list(mag[bad]), owner=owner))
    conf = probability_column(hdf, confidence, owner=owner)
    units = _listed_forecasts(forecasts, fdf, by, question, owner)
    # 'Q2' and 'q2', 1 and '1': one id written two ways, which the joins would not match
    tables = [("forecast_events", fdf), ("hindsight_events", hdf)]
    if forecasts is not None:
        tables.append(("forecasts", units))
    check_ids(tables, question, owner=owner)
    check_ids([t for t in tables if t[0] != "hindsight_events"], by, owner=owner)
    check_ids_within(hdf, [question], event, name="hindsight_events", owner=owner)
    gen = check_rng(options.rng, owner=owner)

    def texts_of(df: pd.DataFrame) -> list[tuple[Any, Any]]:
        desc = (df[description].to_numpy(dtype=object) if description is not None
                and description in df.columns else [None] * len(df))
        return list(zip(df[title].to_numpy(dtype=object), desc, strict=True))

    f_days = (to_days(fdf[date], fdf.index, date, owner) if date is not None
              and date in fdf.columns else np.full(len(fdf), np.nan))
    h_days = (to_days(hdf[date], hdf.index, date, owner) if date is not None
              and date in hdf.columns else np.full(len(hdf), np.nan))
    _check_event_rows(fdf, hdf, h_days, units if forecasts is not None else None, columns,
                      owner)
    f_text = texts_of(fdf)
    f_tok = [event_tokens(t, d) for t, d in f_text]
    h_text = hindsight_texts(hdf, title, description, [question, event], owner)
    return _KeyEventInput(
        fdf=fdf, hdf=hdf, units=list(units.itertuples(index=False, name=None)), f_text=f_text,
        f_tok=f_tok, f_days=f_days, h_text=h_text, h_days=h_days, impact=mag * conf,
        n_rejected_events=n_rejected, emptied=emptied,
        removal_columns=(columns.review_status, str(is_outcome)), by=by,
        question=question, event=event,
        settings=MatchSettings(convention=convention, k=k, min_impact=min_impact,
                               threshold=threshold, date_window_days=window),
        matcher=matcher_name, embedder=embedder,
        n_resamples=n_resamples, confidence_level=confidence_level, gen=gen)


def _emptied_questions(given: np.ndarray, rejected: np.ndarray, outcome: np.ndarray,
                       kept: np.ndarray) -> dict[Any, tuple[int, int, int]]:
    """The questions with rows in hindsight_events of which none is kept: per question
    its number of rows, of rejected records and of outcome records (a rejected outcome
    record counts as rejected: it is removed first)."""
    kept_q = set(kept.tolist())

    def count(values: np.ndarray) -> dict[Any, int]:
        out: dict[Any, int] = {}
        for q in values.tolist():
            out[q] = out.get(q, 0) + 1
        return out

    n_given, n_rej, n_out = count(given), count(rejected), count(outcome)
    return {q: (n, n_rej.get(q, 0), n_out.get(q, 0)) for q, n in n_given.items()
            if q not in kept_q}


def _warn_absent(units: list[tuple[Any, Any]], questions: dict[Any, Any],
                 emptied: dict[Any, tuple[int, int, int]], names: tuple[str, str]) -> None:
    """A :class:`SkippedRecordsWarning` naming the forecasts' questions without a kept
    hindsight record: those with no row at all, and those whose every row is rejected or
    the outcome (with how many rows each had and why none was kept)."""
    absent = list(dict.fromkeys(q for _, q in units if q not in questions))
    for lost, what in (([q for q in absent if q not in emptied], "no row in"),
                       ([q for q in absent if q in emptied], "rows, none kept, in")):
        if not lost:
            continue
        shown = "; ".join(repr(q) if q not in emptied else _emptied_text(q, *emptied[q], names)
                          for q in lost[:5])
        more = "; ..." if len(lost) > 5 else ""
        warnings.warn(f"key_event_recall: {len(lost)} question(s) of the forecasts have "
                      f"{what} hindsight_events ({shown}{more}); their forecasts have no key "
                      "events and are left out of KER (counted in n_no_key_events).",
                      SkippedRecordsWarning, stacklevel=4)


def _emptied_text(q: Any, n_rows: int, n_rejected: int, n_outcome: int,
                  names: tuple[str, str]) -> str:
    """"'q1': 3 rows, 2 rejected in 'review_status', 1 the outcome in 'is_outcome'"."""
    parts = [f"{n_rejected} rejected in '{names[0]}'"] * bool(n_rejected)
    parts += [f"{n_outcome} the outcome in '{names[1]}'"] * bool(n_outcome)
    return f"{q!r}: {n_rows} row{'s' * (n_rows != 1)}, {', '.join(parts)}"


def _hindsight_questions(iv: _KeyEventInput) -> dict[Any, dict[str, Any]]:
    """The hindsight events of each question: their ids, the text and date their records
    give (one each, checked; a blank record takes its event's), as tokens and text, and
    their impact (the largest over records; NaN without one)."""
    h_text_all, h_days_all, impact_rec = iv.h_text, iv.h_days, iv.impact
    he = iv.hdf[iv.event].to_numpy(dtype=object)
    by_event = rows_by_key(iv.hdf, [iv.question, iv.event])
    first = np.array([rows[0] for rows in by_event.values()], dtype=np.int64)
    h_text = {rows[0]: event_text(h_text_all, rows) for rows in by_event.values()}
    day_of = {}
    for rows in by_event.values():
        dated = h_days_all[rows][~np.isnan(h_days_all[rows])]
        day_of[rows[0]] = dated[0] if len(dated) else np.nan
    impact = np.array([np.nan if np.all(np.isnan(impact_rec[rows]))
                       else np.nanmax(impact_rec[rows]) for rows in by_event.values()])
    questions: dict[Any, dict[str, Any]] = {}
    for (q,), pos in rows_by_key(iv.hdf.iloc[first], [iv.question]).items():
        rows = first[pos]
        questions[q] = {
            "ids": list(he[rows]),
            "tokens": [event_tokens(*h_text[i]) for i in rows],
            "texts": [f"{text_of(h_text[i][0])}. {text_of(h_text[i][1])}" for i in rows],
            "days": [day_of[i] for i in rows], "impact": list(impact[pos])}
    return questions


def _key_event_recall(iv: _KeyEventInput) -> KeyEventRecallResult:
    """The computation of :func:`key_event_recall` on validated input: key events per
    question, matching per (model, question) unit, KER and its interval over
    questions. Warnings point at the caller of the public function."""
    by, fdf, f_text, f_tok, f_days = iv.by, iv.fdf, iv.f_text, iv.f_tok, iv.f_days
    settings, matcher_name, embedder = iv.settings, iv.matcher, iv.embedder
    n_resamples, confidence_level, gen = iv.n_resamples, iv.confidence_level, iv.gen
    questions = _hindsight_questions(iv)
    key_rows: list[dict[str, Any]] = []
    for q, qd in questions.items():
        imp = np.array(qd["impact"], dtype=np.float64)
        ranked = key_event_positions(imp, settings.k, settings.min_impact)
        qd["key"] = set(ranked.tolist())
        key_rows.extend({"question": q, "rank": r + 1, "event": qd["ids"][j],
                         "impact": float(imp[j])} for r, j in enumerate(ranked))

    embed = None
    if matcher_name != "hybrid":
        embed = embedder if embedder is not None else default_embedder()

    f_rows_of = rows_by_key(fdf, [by, iv.question])
    per_rows, match_rows = [], []
    empty_q: dict[str, Any] = {"ids": [], "tokens": [], "days": [], "impact": [],
                               "key": set(), "texts": []}
    for model, q in iv.units:
        rows = f_rows_of.get((model, q), np.empty(0, dtype=np.int64))
        qd = questions.get(q, empty_q)
        nh, nf = len(qd["ids"]), len(rows)
        sim = None
        if embed is not None and nf and nh:
            fe = np.asarray(embed([f"{text_of(f_text[i][0])}. {text_of(f_text[i][1])}"
                                   for i in rows]), dtype=np.float64)
            he_ = np.asarray(embed(list(qd["texts"])), dtype=np.float64)
            sim = cosine(fe, he_)
        m = match_one([f_tok[i] for i in rows], qd["tokens"], f_days[rows],
                      np.asarray(qd["days"], dtype=np.float64), threshold=settings.threshold,
                      date_window_days=settings.date_window_days, similarity=sim,
                      undated_pass=settings.convention == "code")
        n_key = len(qd["key"])
        n_key_hit = sum(1 for h, _, _ in m.pairs if h in qd["key"])
        n_match = len(m.pairs)
        per_rows.append({
            by: model, "question": q, "n_forecast_events": nf, "n_hindsight_events": nh,
            "n_key_events": n_key, "n_matched": n_match, "n_key_matched": n_key_hit,
            "ker": n_key_hit / n_key if n_key else np.nan,
            "precision": n_match / nf if nf else np.nan,
            "recall": n_match / nh if nh else np.nan,
            "f1": 2.0 * n_match / (nf + nh) if nf + nh else np.nan,
        })
        for h, f, s in m.pairs:
            match_rows.append({by: model, "question": q, "hindsight_event": qd["ids"][h],
                               "forecast_row": fdf.index[rows[f]], "score": s,
                               "bm25": float(m.bm25_fh[f, h]), "token_f1": float(m.f1[f, h]),
                               "is_key": h in qd["key"]})
    per = pd.DataFrame(per_rows, columns=[by, "question", "n_forecast_events",
                                          "n_hindsight_events", "n_key_events", "n_matched",
                                          "n_key_matched", "ker", "precision", "recall", "f1"])
    matches = pd.DataFrame(match_rows, columns=[by, "question", "hindsight_event",
                                                "forecast_row", "score", "bm25", "token_f1",
                                                "is_key"])
    warn_undated(iv.f_days, iv.h_days, settings.date_window_days, settings.convention,
                 "key_event_recall")
    _warn_absent(iv.units, questions, iv.emptied, iv.removal_columns)
    ker = per["ker"].to_numpy(dtype=np.float64)
    n_undef = int(np.isnan(ker).sum())
    if len(ker) == 0 or n_undef == len(ker):
        warnings.warn("key_event_recall: no forecast's question has a key event; KER is "
                      "undefined.", DegenerateDataWarning, stacklevel=3)
        stat = np.nan
    else:
        stat = float(np.nanmean(ker))
    low, high = cluster_mean_interval(ker, per["question"].to_numpy(dtype=object),
                                      n_resamples, confidence_level, gen, kind="fraction",
                                      estimate=stat)

    def nanmean(col: str) -> float:
        v = per[col].to_numpy(dtype=np.float64)
        return float(np.nanmean(v)) if np.any(~np.isnan(v)) else np.nan

    return KeyEventRecallResult(
        statistic=stat, pvalue=np.nan,
        confidence_interval=ConfidenceInterval(low, high, confidence_level),
        n_obs=len(per) - n_undef, method=f"{MEAN_KINDS['fraction']} over questions",
        by=by, convention=settings.convention, k=settings.k, min_impact=settings.min_impact,
        threshold=settings.threshold, date_window_days=settings.date_window_days,
        matcher=matcher_name, n_resamples=n_resamples,
        n_no_key_events=n_undef, n_rejected_events=iv.n_rejected_events,
        event_precision=nanmean("precision"),
        event_recall=nanmean("recall"), event_f1=nanmean("f1"), table=per,
        matches=matches,
        key_events=pd.DataFrame(key_rows, columns=["question", "rank", "event", "impact"]))


# --------------------------------------------------------------------------- grounding split
def _warn_unscored(keys: pd.DataFrame, scored: pd.DataFrame, param: str, by: str) -> None:
    """A :class:`SkippedRecordsWarning` naming the (``by``, question) rows of a metric's
    result that have no forecast in ``scores``: the split leaves them out (question ids
    typed two ways, 'Q1' against 'q1', matched nothing and gave n = 0 without a word)."""
    found = keys.merge(scored.drop_duplicates(), on=[by, "question"], how="left",
                       indicator=True)
    lost = found.loc[(found["_merge"] == "left_only").to_numpy(), [by, "question"]]
    if lost.empty:
        return
    shown = ", ".join(f"({m!r}, {q!r})" for m, q in lost.head(5).itertuples(index=False))
    more = ", ..." if len(lost) > 5 else ""
    warnings.warn(f"grounding_split: {len(lost)} of {len(keys)} ({by}, question) rows of "
                  f"'{param}' have no forecast in 'scores' ({shown}{more}) and are left out "
                  "of the split; check that both use the same ids.", SkippedRecordsWarning,
                  stacklevel=3)


def grounding_split(scores: ForecastScoresResult, *,
                    key_events: KeyEventRecallResult | None = None,
                    sources: SourcePrecisionResult | None = None) -> pd.DataFrame:
    """KER and source precision of correct versus incorrect forecasts.

    Do correct forecasts rest on better evidence? The key-event recall and the source
    precision of each forecast are split by whether the forecast was right, as
    :func:`forecast_scores` judged it; the means are descriptive, with no interval.

    Parameters
    ----------
    scores : ForecastScoresResult
        Gives each (model, question) forecast's correctness (accuracy 1 is
        correct, 0 incorrect; split credit from exact ties, as under
        ``accuracy_convention='code'``, is left out).
    key_events, sources : optional
        Results of :func:`key_event_recall` and :func:`source_precision`
        with the same ``by`` column.

    Returns
    -------
    pandas.DataFrame
        One row per (metric, group): ``metric`` ('ker' or
        'source_precision'), ``group`` ('correct', 'incorrect'), ``n``
        (forecasts with the metric defined) and ``mean``. A forecast of ``scores``
        without a row in the metric's result is not counted: list an empty graph in
        ``forecasts`` of :func:`key_event_recall` to count its KER.

    Warns
    -----
    SkippedRecordsWarning
        When rows of ``key_events`` or ``sources`` have no forecast in ``scores``
        (matched on ``by`` and question): they are left out, and named.

    See Also
    --------
    key_event_recall : the key-event recall split.
    source_precision : the source precision split.
    forecast_scores : the scores that say which forecasts were correct.
    """
    from ._forecast import ForecastScoresResult

    owner = "grounding_split"
    if not isinstance(scores, ForecastScoresResult):
        raise TypeError(param_error("scores", owner, "a ForecastScoresResult",
                                    type(scores).__name__))
    for param, res, cls in (("key_events", key_events, KeyEventRecallResult),
                            ("sources", sources, SourcePrecisionResult)):
        if res is not None and not isinstance(res, cls):
            raise TypeError(param_error(param, owner, f"a {cls.__name__} or None",
                                        type(res).__name__))
    by = scores.by
    pf = scores.per_forecast[[by, "question", "accuracy"]]
    rows = []
    for name, param, res, col in (("ker", "key_events", key_events, "ker"),
                                  ("source_precision", "sources", sources, "precision")):
        if res is None:
            continue
        if res.by != by:
            raise ValueError(param_error(param, owner, f"a result keyed by '{by}'", res.by))
        _warn_unscored(res.table[[by, "question"]], pf[[by, "question"]], param, by)
        merged = pf.merge(res.table[[by, "question", col]], on=[by, "question"],
                          how="inner")
        for group, acc in (("correct", 1.0), ("incorrect", 0.0)):
            v = merged.loc[merged["accuracy"] == acc, col].to_numpy(dtype=np.float64)
            v = v[~np.isnan(v)]
            rows.append({"metric": name, "group": group, "n": len(v),
                         "mean": float(v.mean()) if len(v) else np.nan})
    return pd.DataFrame(rows, columns=["metric", "group", "n", "mean"])


