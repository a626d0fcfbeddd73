"""Market checks across questions: net direction, pooled pressure-price correlation,
event-local agreement, turning points, and the market-signal and turning-point
recall and precision of forecast graphs (the last in ``_market_signal``).

Each question has dated hindsight events with a signed impact toward YES
(direction x magnitude x confidence, as in :func:`causal_pressure`) and a
market price series. :func:`market_checks` pools the per-question checks;
:func:`turning_points` finds the moments the market moved;
:func:`market_signal_metrics` (in ``_market_signal``) asks whether forecast graphs
found the events the market reacted to.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._parameters import check_choice
from .._parameters import check_float
from .._parameters import check_resampling
from .._resampling import cluster_mean_interval
from .._resampling import rows_by_key
from .._results import CoherenceResult
from .._results import ConfidenceInterval
from .._rng import RNGLike
from .._rng import check_rng
from .._rng import spawn
from .._validation import DECIMAL_SLACK
from .._validation import as_dataframe
from .._validation import column_error
from .._validation import listed
from .._validation import no_missing
from .._validation import numeric_column
from .._validation import param_error
from .._validation import plain_repr
from .._validation import require_columns
from .._validation import same_within
from .._warnings import DegenerateDataWarning
from .._warnings import DeprecatedAlias
from .._warnings import SkippedRecordsWarning
from ._dates import check_same_awareness
from ._dates import in_source_zone
from ._dates import ns_between
from ._dates import parse_dates
from ._dates import shifted
from ._dates import shifted_many
from ._dates import window_in_ns
from ._ids import check_ids
from ._markets import power_of_two_scale
from ._markets import window_extremes

__all__ = [
    "CONVENTIONS",
    "MarketChecksResult",
    "checked_prices",
    "local_price_moves",
    "market_checks",
    "signed_events",
    "turning_points",
    "warn_undated_records",
]

CONVENTIONS = ("paper", "code")


# --------------------------------------------------------------------------- array layer
def local_price_moves(event_t: np.ndarray, price_t: np.ndarray, price: np.ndarray,
                      window_ns: int, *, convention: str = "paper") -> np.ndarray:
    """Price move around each event: first price in the window after minus last before.

    ``price_t`` must be sorted. ``'paper'``: before is the last price in
    :math:`[t - w, t)`, after the first in :math:`[t, t + w]` (a price at
    :math:`t` counts as after, as in :func:`market_alignment`). ``'code'``:
    the released evaluator's windows, :math:`[t - w, t]` and :math:`[t, t + w]`
    (a price at :math:`t` is on both sides). NaN when a side has no price.
    """
    out = np.full(len(event_t), np.nan)
    for i, t in enumerate(event_t):
        # held at the ends of the datetime64[ns] range, not wrapped around (shifted)
        lo = np.searchsorted(price_t, shifted(t, -window_ns), side="left")
        mid_b = np.searchsorted(price_t, t, side="right" if convention == "code" else "left")
        mid_a = np.searchsorted(price_t, t, side="left")
        hi = np.searchsorted(price_t, shifted(t, window_ns), side="right")
        if mid_b > lo and hi > mid_a:
            out[i] = price[mid_a] - price[mid_b - 1]
    return out


def _turning_paper(t: np.ndarray, p: np.ndarray, min_change: float,
                   window_ns: int) -> np.ndarray:
    """Indices i with |p_i - p_j| >= min_change for some j observed in [t_i - w, t_i)
    (strictly earlier: another observation at the same time is not a move before it)."""
    # every row's window at once (a Python step per row took 1.8 s on 40,000 prices):
    # the largest |p_j - p_i| of a window is max(top - p_i, p_i - bottom) to the last
    # bit, as rounding keeps the order of differences from one p_i
    lo = np.searchsorted(t, shifted_many(t, -window_ns), side="left")
    hi = np.searchsorted(t, t, side="left")
    top, bottom = window_extremes(p, lo, hi)
    swing = np.maximum(top - p, p - bottom)
    return np.flatnonzero((hi > lo) & (swing >= min_change - DECIMAL_SLACK)).astype(np.int64)


def _turning_code(t: np.ndarray, p: np.ndarray, min_change: float,
                  min_gap_hours: float = 6.0, window: int = 5) -> np.ndarray:
    """Reversals (peaks and troughs) with a total swing >= min_change, as the authors'
    docs describe their detector (adaptive look-back/look-ahead windows, 6 h gap)."""
    n = len(t)
    w = min(window, max(2, (n - 1) // 3))
    kept: list[tuple[int, float]] = []
    gap = min_gap_hours * 3600e9
    for i in range(1, n - 1):
        back, ahead = p[max(0, i - w):i], p[i + 1:i + 1 + w]
        cb, ca = p[i] - back[0], ahead[-1] - p[i]
        peak = p[i] >= back.max() and p[i] >= ahead.max() and cb > 0 and ca < 0
        trough = p[i] <= back.min() and p[i] <= ahead.min() and cb < 0 and ca > 0
        sig = abs(cb) + abs(ca)
        if not (peak or trough) or sig < min_change - DECIMAL_SLACK:
            continue
        if kept and ns_between(t[i], t[kept[-1][0]]) < gap:  # no wrap-around
            if sig > kept[-1][1] + DECIMAL_SLACK:  # equal swings (decimals): the earlier
                kept[-1] = (i, sig)
            continue
        kept.append((i, sig))
    return np.asarray([i for i, _ in kept], dtype=np.int64)


def checked_prices(prices: Any, owner: str, question: str | None, price_date: str,
            price: str, *, one_per_time: bool = True) -> pd.DataFrame:
    pdf = as_dataframe(prices, name="prices", owner=owner)
    require_columns(pdf, {"question": question, "price_date": price_date, "price": price},
                    owner=owner)
    pv = numeric_column(pdf, price, owner=owner)
    bad = np.flatnonzero((pv < 0) | (pv > 1))
    if len(bad):
        raise ValueError(column_error(price, "hold prices in [0, 1]", list(pdf.index[bad]),
                                      list(pv[bad]), owner=owner))
    pt, miss = parse_dates(pdf[price_date], pdf.index, price_date, owner, require_tz=False)
    no_missing(pdf, price_date, owner=owner, missing=miss)
    if question is not None:
        no_missing(pdf, question, owner=owner)
        check_ids([("prices", pdf)], question, owner=owner)
    if one_per_time:  # two prices of a market at one time: the moves (the first price
        # after, the last before, the last minus the first) would depend on the rows' order
        keys = pd.DataFrame({price_date: pt}, index=pdf.index)
        if question is not None:
            keys.insert(0, question, pdf[question].to_numpy(dtype=object))
        same_within(keys, pv, list(keys.columns), price, owner=owner)
    out = pd.DataFrame({"_t": pt, "_p": pv}, index=pdf.index)
    if question is not None:
        out["_q"] = pdf[question].to_numpy(dtype=object)
    # a repeated row is one price: twice, it weighed twice in a correlation and gave a
    # turning point twice
    return out.loc[~out.duplicated().to_numpy()]


def turning_points(prices: Any, *, min_change: float = 0.05, window_days: float = 3.0,
                   convention: str = "paper", question: str | None = None,
                   price_date: str = "date", price: str = "price") -> pd.DataFrame:
    """Times at which a market moved by at least ``min_change``.

    A turning point is a price that differs by at least ``min_change`` from a price of
    the previous ``window_days`` (the paper's rule; ``convention='code'``, the authors'
    reversal detector). The turning points are the reference of the turning-point
    metrics of :func:`market_signal_metrics`.

    Parameters
    ----------
    prices : pandas.DataFrame or convertible
        Prices (probability of YES) with ``price_date`` and ``price``, and a
        ``question`` column when several markets share the table. With
        ``convention='code'``, one price per market and time (two different prices at
        one time raise: the sorted series would take them in row order). A repeated row
        is one price.
    min_change : float
        Size of the move (default 0.05).
    window_days : float
        Time within which the move happens (default 3 days; ``'paper'`` only), in
        days of 24 hours between instants, not calendar days: across a daylight-saving
        change New York 12:00 on 9 and 10 March 2024 (aware) are 23 hours apart, and a
        move between them is a turning point at ``window_days=23.5/24``; naive, not.
    convention : {'paper', 'code'}
        ``'paper'`` (default): a price observation at :math:`t_i` is a turning
        point when some observation in :math:`[t_i - w, t_i)` differs from it
        by at least ``min_change`` (the move has completed by :math:`t_i`).
        ``'code'``: the reversal detector the authors document (a local peak
        or trough over adaptive windows of min(5, max(2, (n - 1) // 3))
        points each side, rising then falling or the reverse, total swing
        >= ``min_change``, turning points closer than 6 hours merged keeping
        the larger swing, the earlier of two equal ones to the stated decimals).
    question, price_date, price : str
        Column names. Without ``question`` the prices are one market's; a
        ``'question'`` column naming several markets then raises (pass
        ``question='question'``).

    Returns
    -------
    pandas.DataFrame
        One row per turning point: ``question`` (when given), ``date``
        (timezone-aware, in the zone given, when the prices' dates are aware), ``price``.

    See Also
    --------
    market_signal_metrics : whether forecast graphs found these moves.
    market_checks : direction and pressure-price checks across questions.

    Examples
    --------
    >>> import coherence
    >>> px = {"date": ["2024-01-01", "2024-01-02", "2024-01-10", "2024-01-11"],
    ...       "price": [0.40, 0.47, 0.47, 0.48]}
    >>> [str(d.date()) for d in coherence.turning_points(px)["date"]]
    ['2024-01-02']
    """
    owner = "turning_points"
    min_change = check_float(min_change, "min_change", owner, low=0.0, low_open=True)
    window_days = check_float(window_days, "window_days", owner, low=0.0, low_open=True)
    convention = check_choice(convention, "convention", owner, CONVENTIONS)
    # 'paper' compares each price with strictly earlier ones (prices at one time: no
    # order); 'code' follows the sorted series, where tied times would be in row order
    px = checked_prices(prices, owner, question, price_date, price,
                 one_per_time=convention == "code")
    if question is None:
        _one_market(as_dataframe(prices), owner)
    groups = rows_by_key(px, ["_q"]) if question is not None else {(None,): np.arange(len(px))}
    rows = []
    for (q,), idx in groups.items():
        order = idx[np.argsort(px["_t"].to_numpy()[idx], kind="stable")]
        t = px["_t"].to_numpy()[order]
        p = px["_p"].to_numpy(dtype=np.float64)[order]
        # rounded, as market_checks' windows: int() cut 13 minutes (13/1440 days, 1 ns short
        # in binary) to 779,999,999,999 ns, and a move 13 minutes earlier fell outside
        hits = (_turning_paper(t, p, min_change, window_in_ns(window_days))
                if convention == "paper" else _turning_code(t, p, min_change))
        for i in hits:
            rows.append({"question": q, "date": t[i], "price": float(p[i])})
    out = pd.DataFrame(rows, columns=["question", "date", "price"])
    out["date"] = in_source_zone(pd.to_datetime(out["date"]),
                                 as_dataframe(prices)[price_date])
    return out if question is not None else out.drop(columns="question")


def _one_market(pdf: pd.DataFrame, owner: str) -> None:
    """Without ``question``, the prices are one market's: a ``'question'`` column naming
    several markets would pool their series into one (a move between two markets' prices
    read as a turning point), so it raises."""
    if "question" in pdf.columns and pdf["question"].nunique(dropna=False) > 1:
        raise ValueError(param_error(
            "question", owner, "the column naming each price's market when the prices hold "
            "several (pass question='question'; without it the prices are one series)",
            f"None, with {pdf['question'].nunique(dropna=False)} markets in 'question'"))


def signed_events(events: Any, owner: str, question: str, date: str, direction: str,
                   magnitude: str, confidence: str) -> pd.DataFrame:
    """Dated events with their signed impact d * m * c (undated rows counted, left out)."""
    from ._markets import signed_pressure

    df = as_dataframe(events, name="events", owner=owner)
    require_columns(df, {"question": question}, owner=owner)
    no_missing(df, question, owner=owner)
    curve = signed_pressure(df, owner, date=date, direction=direction, magnitude=magnitude,
                            confidence=confidence)
    return curve


# --------------------------------------------------------------------------- market checks
@dataclass(frozen=True, slots=True)
class MarketChecksResult(CoherenceResult, test_name="market_checks",
                         settings=("window_days", "min_move", "min_price_range", "convention",
                                   "n_questions", "n_direction_excluded", "pooled_correlation",
                                   "n_eligible", "event_agreement", "n_events_counted",
                                   "n_undated_events")):
    """Market checks pooled across questions.

    ``statistic`` is the net-direction agreement: the share of counted
    questions whose net causal pressure has the sign of the net price move;
    ``pvalue`` the exact two-sided binomial test of 1/2 (questions are
    independent units) and ``confidence_interval`` the Clopper-Pearson interval.

    Attributes
    ----------
    window_days, min_move, min_price_range : float
        Settings (see :func:`market_checks`).
    convention : str
        Price-window convention of the event-local moves.
    n_questions : int
        Questions with events or prices.
    n_direction_excluded : int
        Questions left out of the net-direction check (zero net pressure,
        absolute net move below ``min_move``, fewer than 2 prices).
    pooled_correlation : float
        Pooled within-question pressure-price correlation over eligible questions; NaN,
        with a :class:`~coherence.DegenerateDataWarning`, when none is eligible.
    n_eligible : int
        Questions eligible for the correlation.
    event_agreement : float
        Share of counted events (pooled across questions) whose impact has the
        sign of the local price move; NaN, with a :class:`~coherence.DegenerateDataWarning`,
        when no event is counted.
    event_agreement_ci : ConfidenceInterval
        Its interval over questions (Wilson's at the cluster-robust effective sample
        size, t quantile).
    n_events_counted : int
        Events counted in that share.
    n_undated_events : int
        Events without a date (left out of every check; a
        :class:`~coherence.SkippedRecordsWarning` names their rows).
    table : pandas.DataFrame
        One row per question: ``net_pressure``, ``net_move``,
        ``direction_counted``, ``direction_agrees``, ``n_prices``,
        ``price_range``, ``eligible``, ``correlation``, ``n_events``,
        ``n_counted``, ``n_agree``.
    """

    window_days: float
    min_move: float
    min_price_range: float
    convention: str
    n_questions: int
    n_direction_excluded: int
    pooled_correlation: float
    n_eligible: int
    event_agreement: float
    event_agreement_ci: ConfidenceInterval
    n_events_counted: int
    n_undated_events: int
    table: pd.DataFrame

    per_question = DeprecatedAlias("table")


def market_checks(events: Any, prices: Any, *, window_days: float = 3.0,
                  min_move: float = 0.03, min_price_range: float = 0.05,
                  convention: str = "paper", question: str = "question", date: str = "date",
                  direction: str = "direction", magnitude: str = "magnitude",
                  confidence: str = "confidence", price_date: str = "date",
                  price: str = "price", n_resamples: int = 2000,
                  confidence_level: float = 0.95, rng: RNGLike = None) -> MarketChecksResult:
    """Net-direction check, pooled pressure-price correlation and event-local agreement
    across questions.

    Three checks of forecast graphs against market prices over many questions: whether
    each question's net pressure has the sign of its net price move, the correlation of
    the pressure curve with the price pooled within questions, and the agreement of
    events with the local price moves. The net-direction share has an exact binomial
    p-value and a Clopper-Pearson interval.

    Parameters
    ----------
    events : pandas.DataFrame or convertible
        Hindsight events of every question: ``question``, ``date``,
        ``direction`` (+1 toward YES, 0, -1), ``magnitude``, ``confidence``. Every
        dated row is used: a ``review_status`` or ``is_outcome`` column is not read
        (unlike :func:`market_signal_metrics`, which removes rejected records and the
        outcome's), so remove the records to leave out first.
    prices : pandas.DataFrame or convertible
        Market prices of every question: ``question``, ``price_date``, ``price``; one
        price per question and time (two different prices at one time raise: the moves
        would depend on the rows' order; a repeated row is one price).
    window_days : float
        Window on each side of an event for its local move (default 3), in days of
        24 hours between instants (across a daylight-saving change aware noons a day
        apart are 23 hours apart; see :func:`turning_points`).
    min_move : float
        Smallest absolute move that counts, for events and for the net move
        (default 0.03).
    min_price_range : float
        Eligibility for the correlation: the question's prices span at least
        this much (max - min, default 0.05, to 1e-12: 0.40 to 0.45 spans 0.05 although
        its binary difference is 0.04999999999999999) and its pressure takes at least
        two values at the price times.
    convention : {'paper', 'code'}
        Price windows of the event-local moves (see :func:`local_price_moves`).
    question, date, direction, magnitude, confidence, price_date, price : str
        Column names. The tables are joined on ``question`` exactly: a question
        written two ways (``1`` and ``'1'``, ``'Q1'`` and ``'q1'``, within a table
        or between them) raises. A question with dated events and no prices (or
        prices and no dated event) keeps its row in ``table`` (``n_prices`` or
        ``n_events`` 0), enters no check (counted in ``n_direction_excluded``) and is
        named by a :class:`~coherence.SkippedRecordsWarning`; so are the undated events'
        rows (counted in ``n_undated_events``).
    n_resamples, confidence_level, rng
        The interval over questions of the event-local agreement, which draws nothing
        (``n_resamples`` is recorded, unused).

    Returns
    -------
    MarketChecksResult
        ``statistic`` the share of counted questions whose net pressure has the sign of
        the net price move (exact binomial ``pvalue``, Clopper-Pearson interval), the
        pooled correlation and event agreement; one row per question in ``table``.
        Where no question is counted, the statistic is NaN with a
        :class:`~coherence.DegenerateDataWarning`.

    See Also
    --------
    market_alignment : the checks on one question.
    market_signal_metrics : whether forecast graphs found the market's events.
    turning_points : the times at which a market moved.

    Notes
    -----
    *Net direction.* Per question, the net pressure is :math:`\\sum_i d_i m_i
    c_i` over its dated events and the net move the last price minus the
    first. A question counts when both are non-zero and :math:`|\\text{move}|
    \\ge` ``min_move``; it agrees when their signs do. Impacts that cancel
    exactly in decimal (0.1 + 0.2 - 0.3) give a zero net pressure: a sum within
    1e-12 of :math:`\\sum_i |d_i m_i c_i|` is zero, whatever its binary rounding.

    *Pooled correlation.* Per eligible question the pressure curve is
    evaluated at each price time; both series are standardised within the
    question and the standardised pairs of all eligible questions are
    correlated, which equals the mean of the within-question Pearson
    correlations weighted by their numbers of prices. Pooling raw values
    instead would mix questions' price levels into the correlation. It is
    descriptive (both series are autocorrelated; no p-value).

    *Event-local agreement.* Every dated event with non-zero impact and a
    local move of at least ``min_move`` is counted; the statistic pools the
    counted events of all questions. Events of one question are not
    independent, hence an interval over questions.

    Examples
    --------
    >>> import coherence
    >>> ev = {"question": ["a", "b"], "date": ["2024-01-05", "2024-01-05"],
    ...       "direction": [1, -1], "magnitude": [1.0, 1.0], "confidence": [1.0, 1.0]}
    >>> px = {"question": ["a"] * 3 + ["b"] * 3,
    ...       "date": ["2024-01-04", "2024-01-06", "2024-01-08"] * 2,
    ...       "price": [0.4, 0.6, 0.65, 0.5, 0.6, 0.62]}
    >>> res = coherence.market_checks(ev, px, rng=0)
    >>> res.statistic, res.event_agreement
    (0.5, 0.5)
    """
    from scipy import stats

    owner = "market_checks"
    window_days = check_float(window_days, "window_days", owner, low=0.0)
    min_move = check_float(min_move, "min_move", owner, low=0.0)
    min_price_range = check_float(min_price_range, "min_price_range", owner, low=0.0)
    convention = check_choice(convention, "convention", owner, CONVENTIONS)
    n_resamples, confidence_level = check_resampling(owner, n_resamples, confidence_level)
    gen = check_rng(rng, owner=owner)
    edf = as_dataframe(events, name="events", owner=owner)
    curve = signed_events(edf, owner, question, date, direction, magnitude, confidence)
    n_undated = len(edf) - len(curve)
    px = checked_prices(prices, owner, question, price_date, price)
    # 1 and '1', 'Q1' and 'q1': one question written two ways would not be joined
    check_ids([("events", edf), ("prices", as_dataframe(prices))], question, owner=owner)
    if len(curve) and len(px):
        check_same_awareness(edf[date], as_dataframe(prices)[price_date],
                             what="event and price dates", owner=owner)
    ev_groups = rows_by_key(curve, [question]) if len(curve) else {}
    px_groups = rows_by_key(px, ["_q"]) if len(px) else {}
    qs = list(dict.fromkeys([k[0] for k in ev_groups] + [k[0] for k in px_groups]))
    ev_t_all = curve[date].to_numpy(dtype="datetime64[ns]")
    imp_all = curve["impact"].to_numpy(dtype=np.float64)
    w_ns = window_in_ns(window_days)
    rows, z_x, z_y = [], [], []
    ev_agree_vals, ev_agree_q = [], []
    for q in qs:
        er = ev_groups.get((q,), np.empty(0, dtype=np.int64))
        pr = px_groups.get((q,), np.empty(0, dtype=np.int64))
        et, imp = ev_t_all[er], imp_all[er]
        order = pr[np.argsort(px["_t"].to_numpy()[pr], kind="stable")]
        pt = px["_t"].to_numpy()[order]
        pv = px["_p"].to_numpy(dtype=np.float64)[order]
        # impacts are decimals (0.1 + 0.2 - 0.3 is 5.6e-17 in binary, of either sign
        # with the row order): a net pressure or a pressure change within DECIMAL_SLACK
        # of the sum of |impact| is zero
        ptol = DECIMAL_SLACK * float(np.abs(imp).sum())
        net_p = float(imp.sum())
        if abs(net_p) <= ptol:
            net_p = 0.0
        net_m = float(pv[-1] - pv[0]) if len(pv) >= 2 else np.nan
        counted_dir = (len(pv) >= 2 and net_p != 0 and abs(net_m) >= min_move - DECIMAL_SLACK
                       and net_m != 0)
        agrees_dir = bool(counted_dir and np.sign(net_p) == np.sign(net_m))
        # pressure at each price time (events at or before it), in units of a power of
        # two near the largest |impact|: exact, and the correlation is the same, but
        # magnitudes of 1e300 or 1e-300 no longer overflow or vanish in its squares
        scale = power_of_two_scale(imp)
        cum = np.concatenate([[0.0], np.cumsum(np.ldexp(imp, -scale))])
        at_price = cum[np.searchsorted(et, pt, side="right")] if len(pt) else np.empty(0)
        prange = float(pv.max() - pv.min()) if len(pv) else np.nan
        # prices are decimals too: 0.45 - 0.40 is 0.04999999999999999, a span of 0.05
        eligible = (len(pv) >= 3 and prange >= min_price_range - DECIMAL_SLACK and prange > 0
                    and float(np.ptp(at_price)) > np.ldexp(ptol, -scale))
        corr = np.nan
        if eligible:
            corr = float(np.corrcoef(at_price, pv)[0, 1])
            z_x.append((at_price - at_price.mean()) / at_price.std())
            z_y.append((pv - pv.mean()) / pv.std())
        move = local_price_moves(et, pt, pv, w_ns, convention=convention)
        counted = (~np.isnan(move) & (np.abs(np.nan_to_num(move)) >= min_move - DECIMAL_SLACK)
                   & (imp != 0))
        agree = counted & (np.sign(imp) == np.sign(np.nan_to_num(move)))
        ev_agree_vals.extend(agree[counted].astype(np.float64))
        ev_agree_q.extend([q] * int(counted.sum()))
        rows.append({"question": q, "net_pressure": net_p, "net_move": net_m,
                     "direction_counted": bool(counted_dir), "direction_agrees": agrees_dir,
                     "n_prices": len(pv), "price_range": prange, "eligible": bool(eligible),
                     "correlation": corr, "n_events": len(et), "n_counted": int(counted.sum()),
                     "n_agree": int(agree.sum())})
    table = pd.DataFrame(rows, columns=[
        "question", "net_pressure", "net_move", "direction_counted", "direction_agrees",
        "n_prices", "price_range", "eligible", "correlation", "n_events", "n_counted",
        "n_agree"])
    n = int(table["direction_counted"].sum())
    hits = int(table["direction_agrees"].sum())
    if n:
        test = stats.binomtest(hits, n, 0.5)
        low, high = test.proportion_ci(confidence_level, method="exact")
        stat, pvalue = hits / n, float(test.pvalue)
        ci = ConfidenceInterval(float(low), float(high), confidence_level)
    else:
        stat, pvalue = np.nan, np.nan
        ci = ConfidenceInterval(np.nan, np.nan, confidence_level)
    pooled = float(np.mean(np.concatenate(z_x) * np.concatenate(z_y))) if z_x else np.nan
    vals = np.asarray(ev_agree_vals, dtype=np.float64)
    ea = float(vals.mean()) if len(vals) else np.nan
    _warn_unjoined(owner, table, edf, curve, question, date)
    _warn_undefined(owner, n, len(z_x), len(vals))
    (g,) = spawn(gen, 1)
    lo, hi = cluster_mean_interval(vals, np.asarray(ev_agree_q, dtype=object),
                                   n_resamples, confidence_level, g, kind="fraction",
                                   estimate=ea)
    return MarketChecksResult(
        statistic=stat, pvalue=pvalue, confidence_interval=ci, n_obs=n,
        method="exact binomial test of net-direction agreement = 1/2 over questions; "
               "Clopper-Pearson interval",
        window_days=window_days, min_move=min_move, min_price_range=min_price_range,
        convention=convention, n_questions=len(table), n_direction_excluded=len(table) - n,
        pooled_correlation=pooled, n_eligible=int(table["eligible"].sum()),
        event_agreement=ea, event_agreement_ci=ConfidenceInterval(lo, hi, confidence_level),
        n_events_counted=len(vals), n_undated_events=n_undated, table=table)


def _warn_undefined(owner: str, n_direction: int, n_eligible: int, n_events: int) -> None:
    """Where no question or event enters one of the three checks (its figure NaN), a
    :class:`DegenerateDataWarning` naming the checks nothing entered, at the caller's line
    (the pooled correlation and the event agreement were NaN without a word where the
    net-direction statistic was defined)."""
    counts = {"net direction (statistic)": n_direction, "pooled correlation": n_eligible,
              "event agreement": n_events}
    empty = [name for name, n in counts.items() if n == 0]
    if empty:
        warnings.warn(f"{owner}: no question or event enters: {', '.join(empty)} "
                      "(too few prices, moves below min_move or min_price_range, or no "
                      "dated event with an impact); each is NaN.", DegenerateDataWarning,
                      stacklevel=3)


def _shown(values: Any) -> str:
    return listed(list(values), show=plain_repr)


def _warn_unjoined(owner: str, table: pd.DataFrame, edf: pd.DataFrame, curve: pd.DataFrame,
                   question: str, date: str) -> None:
    """A :class:`SkippedRecordsWarning` for each kind of record that enters no check while
    the result only counts it: events without a date (``n_undated_events``), questions with
    dated events and no prices, questions with prices and no dated event (both in
    ``n_direction_excluded``); each names its rows or questions (at the caller's line)."""
    warn_undated_records(owner, edf, curve, question, date, "enter no check (counted in "
                          "n_undated_events)", stacklevel=4)
    q = table["question"].to_numpy(dtype=object)
    for lacking, has, what in ((table["n_prices"].to_numpy() == 0, "dated events", "prices"),
                               (table["n_events"].to_numpy() == 0, "prices", "dated event")):
        if lacking.any():
            warnings.warn(f"{owner}: {int(lacking.sum())} question(s) have {has} but no "
                          f"{what} ({_shown(q[lacking])}): they enter no check (counted in "
                          f"n_direction_excluded); check that the events and the prices use "
                          f"the same '{question}' ids.", SkippedRecordsWarning, stacklevel=3)


def warn_undated_records(owner: str, edf: pd.DataFrame, curve: pd.DataFrame, question: str,
                          date: str, fate: str, *, stacklevel: int = 3) -> None:
    """A :class:`SkippedRecordsWarning` naming the event records without a date (the rows
    of ``edf`` that ``curve``, the dated ones, lacks) and what became of them (``fate``)."""
    if len(curve) < len(edf):
        undated = np.flatnonzero(parse_dates(edf[date], edf.index, date, owner,
                                             require_tz=False)[1])
        warnings.warn(f"{owner}: {len(edf) - len(curve)} event(s) have no '{date}' (rows "
                      f"{_shown(edf.index[undated])}; questions "
                      f"{_shown(dict.fromkeys(edf[question].to_numpy(dtype=object)[undated]))})"
                      f": they {fate}.", SkippedRecordsWarning, stacklevel=stacklevel)
