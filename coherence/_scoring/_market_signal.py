"""The market-signal and turning-point recall and precision of forecast graphs.

:func:`market_signal_metrics` asks whether forecast graphs found the hindsight events the
market reacted to: the events whose local price move agrees with their direction
(:func:`~coherence.local_price_moves`) and those near a turning point
(:func:`~coherence.turning_points`), matched to the graphs' records.
"""

from __future__ import annotations

import warnings
from collections import defaultdict
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._docstrings import fill_doc
from .._parameters import check_choice
from .._parameters import check_float
from .._parameters import check_resampling
from .._resampling import MEAN_KINDS
from .._resampling import cluster_mean_interval
from .._resampling import rows_by_key
from .._results import CoherenceResult
from .._results import ConfidenceInterval
from .._rng import RNGLike
from .._rng import check_rng
from .._validation import DECIMAL_SLACK
from .._validation import as_dataframe
from .._validation import no_missing
from .._validation import param_error
from .._validation import require_columns
from .._warnings import DegenerateDataWarning
from ._dates import check_same_awareness
from ._dates import in_source_zone
from ._dates import ns_between
from ._dates import parse_dates
from ._dates import window_in_ns
from ._ids import check_edge_ends
from ._ids import check_ids
from ._ids import check_ids_within
from ._market_checks import CONVENTIONS
from ._market_checks import checked_prices
from ._market_checks import local_price_moves
from ._market_checks import signed_events
from ._market_checks import turning_points
from ._market_checks import warn_undated_records
from ._matching import decimal_impacts

__all__ = ["MarketSignalResult", "market_signal_metrics"]


@dataclass(frozen=True, slots=True)
class MarketSignalResult(CoherenceResult, test_name="market_signal_metrics",
                         settings=("by", "window_days", "min_move", "turning_min_change",
                                   "convention", "n_resamples")):
    """Market-signal and turning-point recall and precision of forecast graphs.

    ``statistic`` is the mean market-signal recall over forecasts where it is
    defined, with its interval over questions (Wilson's at the cluster-robust effective
    sample size, t quantile); ``pvalue`` is NaN.

    Attributes
    ----------
    by : str
        Column naming the forecaster.
    window_days, min_move, turning_min_change : float
        Settings.
    convention : str
        ``'paper'`` or ``'code'``.
    n_resamples : int
        As given (the interval draws nothing).
    table : pandas.DataFrame
        One row per scored forecast: ``n_signal_events``, ``n_signal_matched``,
        ``signal_recall``, ``signal_precision``, ``n_turning_events``,
        ``n_turning_matched``, ``turning_recall``, ``turning_precision`` and
        ``n_undated_records`` (the question's non-outcome records without a date, left
        out of every signal).
    signal_events : pandas.DataFrame
        Per question, the hindsight events that are market signals, with ``date``
        (timezone-aware, in the zone given, when the events' dates are aware), ``impact``,
        ``move``, ``near_turning_point`` and ``n_undated_records`` (the event's records
        without a date, left out before its largest record was chosen).
    """

    by: str
    window_days: float
    min_move: float
    turning_min_change: float
    convention: str
    n_resamples: int
    table: pd.DataFrame
    signal_events: pd.DataFrame


def _signal_curve(hdf: pd.DataFrame, owner: str, question: str, date: str, direction: str,
                  magnitude: str, confidence: str) -> pd.DataFrame:
    """:func:`market_signal_metrics`' dated records with their signed impact; the undated
    ones named by a warning (at the line that called it)."""
    curve = signed_events(hdf, owner, question, date, direction, magnitude, confidence)
    warn_undated_records(owner, hdf, curve, question, date, "are left out before each "
                          "event's largest record is chosen (an undated record is never a "
                          "market signal)", stacklevel=4)
    return curve


def _undated_counts(hdf: pd.DataFrame, owner: str, question: str, event: str, date: str
                    ) -> tuple[dict[tuple[Any, Any], int], dict[Any, int]]:
    """The records without a date that :func:`market_signal_metrics` leaves out, counted
    per (question, event) and per question, for its tables."""
    missing = parse_dates(hdf[date], hdf.index, date, owner, require_tz=False)[1]
    keys = hdf.loc[missing, [question, event]].itertuples(index=False, name=None)
    per_event: dict[tuple[Any, Any], int] = {}
    per_question: dict[Any, int] = {}
    for q, e in keys:
        per_event[(q, e)] = per_event.get((q, e), 0) + 1
        per_question[q] = per_question.get(q, 0) + 1
    return per_event, per_question


def _signal_table(reasoning: Any, signals: pd.DataFrame, undated_of_question: dict[Any, int]
                  ) -> pd.DataFrame:
    """:func:`market_signal_metrics`' table: per scored forecast of ``reasoning``, its
    signals found (``signals``, matched through the result's matches), recall, precision,
    and the question's undated records."""
    by = reasoning.by
    matched = reasoning.matches
    # the signals of each question and the matches of each forecast gathered in one pass
    # (filtered per forecast, each cost a pass over every row: quadratic in the questions)
    ids_of: dict[Any, set[Any]] = defaultdict(set)
    tids_of: dict[Any, set[Any]] = defaultdict(set)
    for q, e, near in zip(signals["question"], signals["event"],
                          signals["near_turning_point"], strict=True):
        ids_of[q].add(e)
        if near:
            tids_of[q].add(e)
    hits_of: dict[tuple[Any, Any], set[Any]] = defaultdict(set)
    for m, q, e in zip(matched[by], matched["question"], matched["hindsight_event"],
                       strict=True):
        hits_of[(m, q)].add(e)
    out = []
    for _, r in reasoning.table.iterrows():
        q = r["question"]
        hit = hits_of.get((r[by], q), set())
        ids = ids_of.get(q, set())
        tids = tids_of.get(q, set())
        nf = int(r["n_forecast_events"])
        out.append({by: r[by], "question": q, "n_signal_events": len(ids),
                    "n_signal_matched": len(ids & hit),
                    "signal_recall": len(ids & hit) / len(ids) if ids else np.nan,
                    "signal_precision": len(ids & hit) / nf if nf else np.nan,
                    "n_turning_events": len(tids), "n_turning_matched": len(tids & hit),
                    "turning_recall": len(tids & hit) / len(tids) if tids else np.nan,
                    "turning_precision": len(tids & hit) / nf if nf else np.nan,
                    "n_undated_records": undated_of_question.get(q, 0)})
    table = pd.DataFrame(out, columns=[
        by, "question", "n_signal_events", "n_signal_matched", "signal_recall",
        "signal_precision", "n_turning_events", "n_turning_matched", "turning_recall",
        "turning_precision", "n_undated_records"])
    return table


def _kept_records(hdf: pd.DataFrame, is_outcome: str | None, review_status: str,
                  owner: str) -> pd.DataFrame:
    """The hindsight records :func:`market_signal_metrics` reads: those rejected by the
    annotators removed first (as :func:`reasoning_graph_metrics` removes them), then the
    outcome's."""
    from .._validation import flag_column
    from ._graph_quality import rejected_rows

    if review_status in hdf.columns:
        hdf = hdf.loc[~rejected_rows(hdf[review_status])]
    if is_outcome is not None and is_outcome in hdf.columns:
        hdf = hdf.loc[~flag_column(hdf, is_outcome, owner=owner, missing=False)]
    return hdf


def _warn_no_signal(owner: str) -> None:
    """The warning of a signal recall undefined for every forecast (at the caller's line)."""
    warnings.warn(f"{owner}: no scored forecast's question has a market signal (a dated "
                  "event whose local price move is at least min_move and agrees with its "
                  "impact); signal recall is undefined (NaN).", DegenerateDataWarning,
                  stacklevel=3)


def _check_signal_joins(reasoning: Any, hdf: pd.DataFrame, pdf: pd.DataFrame, question: str,
                        event: str, owner: str) -> None:
    """Raise when a question id is written two ways (``'Q1'`` and ``'q1'``, ``1`` and
    ``'1'``) across the hindsight events, the prices and the reasoning result's forecasts,
    or a matched hindsight event's id differs from the events' in that way: matched
    exactly, the forecasts would have no signals (NaN) or miss them (recall 0)."""
    table, matches = reasoning.table, reasoning.matches
    scored = pd.DataFrame({question: table["question"].to_numpy(dtype=object)},
                          index=table.index)
    check_ids([("hindsight_events", hdf), ("prices", pdf), ("reasoning.table", scored)],
              question, owner=owner)
    check_ids_within(hdf, [question], event, name="hindsight_events", owner=owner)
    pairs = pd.DataFrame({question: matches["question"].to_numpy(dtype=object),
                          "hindsight_event": matches["hindsight_event"].to_numpy(dtype=object)},
                         index=matches.index)
    check_edge_ends(pairs, ("hindsight_event",), hdf, event, (question,),
                    edges_name="reasoning.matches", events_name="hindsight_events",
                    owner=owner, lost="the match would not count as a signal found")


@fill_doc
def market_signal_metrics(reasoning: Any, hindsight_events: Any, prices: Any, *,
                          window_days: float = 3.0, min_move: float = 0.03,
                          turning_min_change: float = 0.05, convention: str = "paper",
                          question: str = "question", event: str = "event",
                          date: str = "date", direction: str = "direction",
                          magnitude: str = "magnitude", confidence: str = "confidence",
                          is_outcome: str | None = "is_outcome",
                          review_status: str = "review_status", price_date: str = "date",
                          price: str = "price", n_resamples: int = 2000,
                          confidence_level: float = 0.95,
                          rng: RNGLike = None) -> MarketSignalResult:
    """Did forecast graphs find the events the market reacted to?

    A market signal is a hindsight event after which the price moved by at least
    ``min_move`` in the direction of its impact. The metrics ask how many of those
    signals, and of those near a turning point of the market, a forecast's graph found
    (recall), and how many of its events were signals (precision); the mean recall's
    interval takes the question as its unit.

    Parameters
    ----------
    reasoning : ReasoningGraphResult
        From :func:`reasoning_graph_metrics` (its matches and forecasts).
    hindsight_events : pandas.DataFrame or convertible
        Impact records: ``question``, ``event``, ``date``, ``direction``,
        ``magnitude``, ``confidence``, optional ``is_outcome`` and ``review_status``
        (a record whose status is ``'rejected'``, any case, is removed, as
        :func:`reasoning_graph_metrics` removes it: an event it can never match is no
        signal).
    prices : pandas.DataFrame or convertible
        ``question``, ``price_date``, ``price``; one price per question and time (as in
        :func:`market_checks`).
    window_days, min_move : float
        Local-move window and threshold (3 days of 24 hours between instants: across a
        daylight-saving change aware noons a day apart are 23 hours apart; 0.03).
    turning_min_change : float
        Size of a turning point (0.05), see :func:`turning_points`.
    convention : {'paper', 'code'}
        Price windows (:func:`local_price_moves`) and turning points
        (:func:`turning_points`).
    question, event, date, direction, magnitude, confidence, is_outcome, price_date, price : str
        Column names.
    review_status : str
        Column name of the annotators' verdict on a record, used when present.
    %(wilson_over_questions)s

    Returns
    -------
    MarketSignalResult
        ``statistic`` the mean market-signal recall over the forecasts where it is
        defined, with its interval over questions (``pvalue`` NaN); signal and
        turning-point recall and precision per forecast in ``table``.

    See Also
    --------
    turning_points : the market moves matched.
    market_checks : direction and pressure-price checks across questions.

    Notes
    -----
    An event's signed impact is the record of largest :math:`|d m c|` (the
    earliest of equal ones, compared at 12 significant digits: 0.3 x 0.6 and 0.2 x 0.9
    are equal; none when the largest disagree in sign), among its dated records: the
    undated ones are left out first, named by a
    :class:`~coherence.SkippedRecordsWarning` and counted in the ``n_undated_records``
    columns of ``table`` (per question) and ``signal_events`` (per event). A
    market signal is a dated, non-outcome hindsight event with non-zero
    signed impact whose local price move is at least ``min_move`` in size
    and has the same sign; a turning-point signal is a market signal within
    ``window_days`` of a turning point. Per forecast, signal recall = matched
    signals / signals, signal precision = matched signals / forecast events
    (likewise for turning points); NaN when the denominator is 0, with a
    :class:`~coherence.DegenerateDataWarning` when no forecast has a signal. Question
    ids written two ways (``'Q1'`` and ``'q1'``, ``1`` and ``'1'``) across the tables and
    the result's forecasts, or hindsight event ids written otherwise than in its matches,
    raise, naming the rows.
    """
    from ._graphs import ReasoningGraphResult

    owner = "market_signal_metrics"
    if not isinstance(reasoning, ReasoningGraphResult):
        raise TypeError(param_error("reasoning", owner, "a ReasoningGraphResult",
                                    type(reasoning).__name__))
    window_days = check_float(window_days, "window_days", owner, low=0.0)
    min_move = check_float(min_move, "min_move", owner, low=0.0)
    turning_min_change = check_float(turning_min_change, "turning_min_change", owner,
                                     low=0.0, low_open=True)
    convention = check_choice(convention, "convention", owner, CONVENTIONS)
    n_resamples, confidence_level = check_resampling(owner, n_resamples, confidence_level)
    gen = check_rng(rng, owner=owner)
    hdf = as_dataframe(hindsight_events, name="hindsight_events", owner=owner)
    require_columns(hdf, {"question": question, "event": event}, owner=owner)
    no_missing(hdf, [question, event], owner=owner)
    hdf = _kept_records(hdf, is_outcome, review_status, owner)
    curve = _signal_curve(hdf, owner, question, date, direction, magnitude, confidence)
    undated_of_event, undated_of_question = _undated_counts(hdf, owner, question, event, date)
    px = checked_prices(prices, owner, question, price_date, price)
    _check_signal_joins(reasoning, hdf, as_dataframe(prices), question, event, owner)
    if len(curve) and len(px):
        check_same_awareness(hdf[date], as_dataframe(prices)[price_date],
                             what="event and price dates", owner=owner)
    w_ns = window_in_ns(window_days)
    tps = turning_points(prices, min_change=turning_min_change, window_days=window_days,
                         convention=convention, question=question, price_date=price_date,
                         price=price)
    px_groups = rows_by_key(px, ["_q"]) if len(px) else {}
    # the columns as arrays once, and the turning points per question: taken inside the
    # loop, each event cost a pass over every row (quadratic in the questions)
    impacts = curve["impact"].to_numpy(dtype=np.float64)
    event_t = curve[date].to_numpy(dtype="datetime64[ns]")
    px_t, px_p = px["_t"].to_numpy(), px["_p"].to_numpy(dtype=np.float64)
    tp_t = tps["date"].to_numpy(dtype="datetime64[ns]")
    tp_rows = rows_by_key(tps, ["question"]) if len(tps) else {}
    sig_rows = []
    for (q, e), rows in (rows_by_key(curve, [question, event]).items() if len(curve) else []):
        imp = impacts[rows]
        dec = decimal_impacts(imp)  # 0.3 x 0.6 and 0.2 x 0.9: equal, whatever the binary
        j = int(np.argmax(np.abs(dec)))
        top = dec[np.abs(dec) == abs(dec[j])]
        if imp[j] == 0 or ((top > 0).any() and (top < 0).any()):  # none, or no one sign
            continue
        t = event_t[rows[j]]
        pr = px_groups.get((q,))
        if pr is None:
            continue
        order = pr[np.argsort(px_t[pr], kind="stable")]
        move = local_price_moves(np.array([t]), px_t[order], px_p[order], w_ns,
                                 convention=convention)[0]
        if (np.isnan(move) or abs(move) < min_move - DECIMAL_SLACK
                or np.sign(move) != np.sign(imp[j])):
            continue
        tq = tp_t[tp_rows.get((q,), np.empty(0, dtype=np.int64))]
        near = bool(len(tq) and np.min(np.abs(ns_between(tq, np.full(len(tq), t)))) <= w_ns)
        sig_rows.append({"question": q, "event": e, "date": t, "impact": float(imp[j]),
                         "move": float(move), "near_turning_point": near,
                         "n_undated_records": undated_of_event.get((q, e), 0)})
    signals = pd.DataFrame(sig_rows, columns=["question", "event", "date", "impact", "move",
                                              "near_turning_point", "n_undated_records"])
    signals["date"] = in_source_zone(pd.to_datetime(signals["date"]), hdf[date])
    by = reasoning.by
    table = _signal_table(reasoning, signals, undated_of_question)
    v = table["signal_recall"].to_numpy(dtype=np.float64)
    ok = ~np.isnan(v)
    if not ok.any():
        _warn_no_signal(owner)
    stat = float(v[ok].mean()) if ok.any() else np.nan
    lo, hi = cluster_mean_interval(v, table["question"].to_numpy(dtype=object),
                                   n_resamples, confidence_level, gen, kind="fraction",
                                   estimate=stat)
    return MarketSignalResult(
        statistic=stat, pvalue=np.nan,
        confidence_interval=ConfidenceInterval(lo, hi, confidence_level), n_obs=int(ok.sum()),
        method=f"{MEAN_KINDS['fraction']} over questions", by=by,
        window_days=window_days, min_move=min_move, turning_min_change=turning_min_change,
        convention=convention, n_resamples=n_resamples, table=table, signal_events=signals)

