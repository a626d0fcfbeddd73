"""Causal pressure and market alignment: the cumulative curve sum_i d_i m_i c_i
over dated events, its agreement with market price moves, and its plot.
"""

from __future__ import annotations

import warnings
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any

import numpy as np
import pandas as pd

from .._docstrings import fill_doc
from .._parameters import check_float
from .._results import CoherenceResult
from .._results import ConfidenceInterval
from .._validation import DECIMAL_SLACK
from .._validation import as_dataframe
from .._validation import column_error
from .._validation import no_missing
from .._validation import nonempty
from .._validation import numeric_column
from .._validation import param_error
from .._validation import plain_value
from .._validation import probability_column
from .._validation import require_columns
from .._validation import same_within
from .._warnings import DegenerateDataWarning
from .._warnings import DeprecatedAlias
from ._dates import check_same_awareness
from ._dates import in_source_zone
from ._dates import parse_datetimes
from ._dates import shifted
from ._dates import window_in_ns

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = [
    "MarketAlignmentResult",
    "causal_pressure",
    "market_alignment",
    "plot_causal_pressure",
    "power_of_two_scale",
    "signed_pressure",
    "window_extremes",
]


# --------------------------------------------------------------------------- causal pressure
def causal_pressure(events: Any, *, date: str = "date", direction: str = "direction",
                    magnitude: str = "magnitude", confidence: str = "confidence") -> pd.DataFrame:
    """Cumulative causal pressure :math:`P_k = \\sum_{i \\le k} d_i m_i c_i` over dated events.

    Each event of a forecast's causal graph pushes the question toward YES or NO
    (direction d) with a magnitude m and a confidence c; the running sum of their
    impacts over time is the pressure the graph says the question was under, to be set
    beside a market's price (:func:`market_alignment`, :func:`market_checks`).

    Parameters
    ----------
    events : pandas.DataFrame or convertible
        One row per event: ``date``, ``direction`` (+1 toward YES, 0, -1 toward
        NO), ``magnitude`` (>= 0) and ``confidence`` (in [0, 1]). Every dated row
        enters the curve: a ``review_status`` or ``is_outcome`` column is not read, so
        remove rejected hindsight records (and the outcome's, if wanted) first.
    date, direction, magnitude, confidence : str
        Column names.

    Returns
    -------
    pandas.DataFrame
        The dated events in time order (ties keep row order), with
        ``impact`` = :math:`d_i m_i c_i` and ``pressure`` = its running sum: a
        step curve, constant between events. Undated events are left out. ``date``
        is parsed: timezone-aware dates come back aware, in the zone given (UTC when
        the dates mix zones).

    See Also
    --------
    market_alignment : whether the market moved the way the pressure says.
    plot_causal_pressure : plot this curve.

    Examples
    --------
    >>> import coherence
    >>> ev = {"date": ["2024-01-03", "2024-01-01", None], "direction": [-1, 1, 1],
    ...       "magnitude": [0.5, 0.8, 1.0], "confidence": [1.0, 0.5, 1.0]}
    >>> coherence.causal_pressure(ev)["pressure"].round(3).tolist()
    [0.4, -0.1]
    """
    return signed_pressure(events, "causal_pressure", date=date, direction=direction,
                           magnitude=magnitude, confidence=confidence)


def signed_pressure(events: Any, owner: str, *, date: str, direction: str, magnitude: str,
                    confidence: str) -> pd.DataFrame:
    """:func:`causal_pressure` for the function ``owner`` (market_alignment, market_checks),
    whose name its errors give: a bad ``direction`` of market_checks' events was reported
    as an input to causal_pressure, which the caller never called."""
    df = as_dataframe(events, name="events", owner=owner)
    require_columns(df, {"date": date, "direction": direction, "magnitude": magnitude,
                         "confidence": confidence}, owner=owner)
    d = numeric_column(df, direction, owner=owner)
    bad = np.flatnonzero(~np.isin(d, (-1.0, 0.0, 1.0)))
    if len(bad):
        raise ValueError(column_error(direction, "be -1, 0 or 1", list(df.index[bad]),
                                      list(d[bad]), owner=owner))
    m = numeric_column(df, magnitude, owner=owner)
    bad = np.flatnonzero(~np.isfinite(m) | (m < 0))
    if len(bad):
        raise ValueError(column_error(magnitude, "hold finite numbers >= 0",
                                      list(df.index[bad]), list(m[bad]), owner=owner))
    c = numeric_column(df, confidence, owner=owner)
    bad = np.flatnonzero((c < 0) | (c > 1))
    if len(bad):
        raise ValueError(column_error(confidence, "hold probabilities in [0, 1]",
                                      list(df.index[bad]), list(c[bad]), owner=owner))
    when, missing = parse_datetimes(df[date], df.index, date, owner)
    out = df.loc[~missing].copy()
    out["_when"] = when[~missing]
    out["impact"] = (d * m * c)[~missing] + 0.0  # -1 x 0: 0, not -0.0
    out = out.sort_values("_when", kind="stable")
    out["pressure"] = np.cumsum(out["impact"].to_numpy())
    out[date] = in_source_zone(out.pop("_when"), df[date])
    return out


@dataclass(frozen=True, slots=True)
class MarketAlignmentResult(CoherenceResult, test_name="market_alignment",
                            settings=("window_days", "min_move", "correlation")):
    """Agreement between event impacts and market price moves.

    ``statistic`` is the share of counted events (``|move| >= min_move``,
    non-zero impact) whose signed impact has the sign of the move;
    ``pvalue`` the two-sided exact binomial test of share = 1/2 and
    ``confidence_interval`` the Clopper-Pearson interval.

    Attributes
    ----------
    window_days : float
        Price window on each side of an event.
    min_move : float
        Smallest absolute move counted.
    correlation : float
        Pearson correlation of the pressure curve (evaluated at each price
        time) with the price series; descriptive only (both are
        autocorrelated, so no p-value is given). NaN when the curve is flat:
        within 1e-12 of the sum of :math:`|d_i m_i c_i|` (impacts that cancel
        exactly in decimal, 0.1 + 0.2 - 0.3, do not cancel in binary).
    table : pandas.DataFrame
        One row per dated event: ``date`` (timezone-aware, in the zone given, when the
        events' dates are aware), ``impact``, ``price_before``, ``price_after``, ``move``,
        ``counted``, ``agrees``.
    """

    window_days: float
    min_move: float
    correlation: float
    table: pd.DataFrame

    per_event = DeprecatedAlias("table")


def power_of_two_scale(impact: np.ndarray) -> int:
    """The exponent ``e`` with ``max |impact|`` in [2**(e-1), 2**e) (0 for no or zero
    impacts): dividing by ``2**e`` is exact, so a correlation of the scaled pressure is
    the same number, while its squares neither overflow (1e300) nor underflow (1e-300)."""
    top = float(np.max(np.abs(impact))) if len(impact) else 0.0
    return int(np.frexp(top)[1]) if top > 0 else 0


def window_extremes(p: np.ndarray, lo: np.ndarray, hi: np.ndarray
                     ) -> tuple[np.ndarray, np.ndarray]:
    """The largest and smallest of ``p[lo[i]:hi[i]]`` for each ``i`` (``p[i]`` itself
    where the window is empty), from a sparse table of maxima and minima over runs of
    2^k values: two overlapping runs cover any window."""
    length = hi - lo
    top, bottom = p.copy(), p.copy()
    ok = np.flatnonzero(length > 0)
    if not len(ok):
        return top, bottom
    level = np.frexp(length[ok].astype(np.float64))[1] - 1  # floor(log2(length)), exact
    highs, lows = [p], [p]
    for k in range(1, int(level.max()) + 1):
        half = 1 << (k - 1)
        highs.append(np.maximum(highs[-1][:-half], highs[-1][half:]))
        lows.append(np.minimum(lows[-1][:-half], lows[-1][half:]))
    for k in np.unique(level):
        at = ok[level == k]
        a, b = lo[at], hi[at] - (1 << int(k))
        top[at] = np.maximum(highs[k][a], highs[k][b])
        bottom[at] = np.minimum(lows[k][a], lows[k][b])
    return top, bottom


def _one_market(edf: pd.DataFrame, pdf: pd.DataFrame, owner: str,
                column: str = "question") -> None:
    """Raise when the tables of :func:`market_alignment` hold several markets (a
    ``question`` column with two values, in one table or between them): their prices
    would be read as one series, and its moves would jump between markets."""
    seen: dict[Any, str] = {}
    for name, df in (("events", edf), ("prices", pdf)):
        if column not in df.columns:
            continue
        values = df[column].dropna().unique()
        for v in values:
            seen.setdefault(plain_value(v), name)
        if len(seen) > 1:
            (first, where), (second, other) = list(seen.items())[:2]
            rows = np.flatnonzero((df[column] == second).to_numpy())
            raise ValueError(column_error(
                column, f"hold one market (market_alignment checks one question's prices; "
                f"{where} has {first!r}, {other} {second!r}): select one market, or use "
                "market_checks across questions", list(df.index[rows]),
                [second] * len(rows), owner=owner))


def market_alignment(events: Any, prices: Any, *, window_days: float = 3.0,
                     min_move: float = 0.03, confidence_level: float = 0.95,
                     date: str = "date", direction: str = "direction",
                     magnitude: str = "magnitude", confidence: str = "confidence",
                     price_date: str = "date", price: str = "price") -> MarketAlignmentResult:
    """Do events move the market the way the forecast's causal graph says?

    Each dated event of a forecast's graph has an impact (direction times magnitude
    times confidence); it is aligned when the market price moved in the impact's
    direction around it. The share of aligned events is set against one half by an exact
    binomial test, descriptive only, since the events of one question are not
    independent draws.

    Parameters
    ----------
    events : pandas.DataFrame or convertible
        As for :func:`causal_pressure`.
    prices : pandas.DataFrame or convertible
        One market's prices (probability of YES, in [0, 1]: prices in cents raise)
        with ``price_date`` and ``price``; one price per time (two different prices at
        one time raise: the moves would depend on the rows' order; a repeated row is one
        price). A ``question`` column, in ``prices`` or ``events``, must hold one value,
        the same in both: several markets' prices would be read as one series (select
        one market, or use :func:`market_checks` across questions).
    window_days : float
        Window on each side of an event (default 3 days), in days of 24 hours between
        instants (across a daylight-saving change aware noons a day apart are 23 hours
        apart; see :func:`turning_points`).
    min_move : float
        Smallest absolute price move that counts (default 0.03).
    confidence_level : float
        Level of the Clopper-Pearson interval.
    date, direction, magnitude, confidence, price_date, price : str
        Column names.

    Returns
    -------
    MarketAlignmentResult
        ``statistic`` the share of counted events whose impact has the sign of the
        price move, ``pvalue`` the exact binomial test of 1/2, ``confidence_interval``
        the Clopper-Pearson interval; one row per dated event in ``table``.

    See Also
    --------
    causal_pressure : the pressure curve behind this check.
    plot_causal_pressure : plot the curve with the market price.
    market_checks : the same checks across questions.

    Notes
    -----
    For an event at time :math:`t`, the move is the first price in
    :math:`[t, t + w]` minus the last price in :math:`[t - w, t)`; a price
    stamped exactly at :math:`t` counts as after. Events lacking either price,
    with :math:`|\\text{move}| <` ``min_move`` or with zero impact are not
    counted. Events on one question are not independent draws, so read the
    binomial p-value as descriptive.

    Examples
    --------
    >>> import coherence
    >>> ev = {"date": ["2024-01-05"], "direction": [1], "magnitude": [1.0],
    ...       "confidence": [1.0]}
    >>> px = {"date": ["2024-01-04", "2024-01-06"], "price": [0.40, 0.55]}
    >>> res = coherence.market_alignment(ev, px)
    >>> res.statistic, float(res.table["move"].round(2).iloc[0])
    (1.0, 0.15)
    """
    from scipy import stats

    owner = "market_alignment"
    window_days = check_float(window_days, "window_days", owner, low=0.0)
    min_move = check_float(min_move, "min_move", owner, low=0.0)
    confidence_level = check_float(confidence_level, "confidence_level", owner, low=0.0,
                                   high=1.0, low_open=True, high_open=True)
    curve = signed_pressure(events, owner, date=date, direction=direction,
                            magnitude=magnitude, confidence=confidence)
    pdf = as_dataframe(prices, name="prices", owner=owner)
    require_columns(pdf, {"price_date": price_date, "price": price}, owner=owner)
    nonempty(pdf, name="prices", owner=owner)
    _one_market(as_dataframe(events, name="events", owner=owner), pdf, owner)
    pv = probability_column(pdf, price, owner=owner)  # prices in cents (40, 55) refused
    pt, pmiss = parse_datetimes(pdf[price_date], pdf.index, price_date, owner)
    no_missing(pdf, price_date, owner=owner, missing=pmiss)
    # one price per time: two at one time would make the moves depend on the rows' order
    same_within(pd.DataFrame({price_date: pt}, index=pdf.index), pv, price_date, price,
                owner=owner)
    # a repeated row is one price (twice, it weighed twice in the correlation)
    order = np.flatnonzero(~pd.DataFrame({"t": pt, "p": pv}).duplicated().to_numpy())
    order = order[np.argsort(pt[order], kind="stable")]
    pt, pv = pt[order], pv[order]
    ev_t = curve[date].to_numpy(dtype="datetime64[ns]")
    if len(ev_t) and len(pt):
        check_same_awareness(as_dataframe(events)[date], as_dataframe(prices)[price_date],
                             what="event and price dates", owner=owner)
    w = window_in_ns(window_days)  # a million days covers every date, as it does
    impact = curve["impact"].to_numpy(dtype=np.float64)
    before = np.full(len(ev_t), np.nan)
    after = np.full(len(ev_t), np.nan)
    for i, t in enumerate(ev_t):
        # held at the ends of the datetime64[ns] range, not wrapped around (shifted)
        lo = np.searchsorted(pt, shifted(t, -w), side="left")
        mid = np.searchsorted(pt, t, side="left")
        hi = np.searchsorted(pt, shifted(t, w), side="right")
        if mid > lo:
            before[i] = pv[mid - 1]
        if hi > mid:
            after[i] = pv[mid]
    move = after - before
    counted = (~np.isnan(move) & (np.abs(np.nan_to_num(move)) >= min_move - DECIMAL_SLACK)
               & (impact != 0))
    agrees = counted & (np.sign(impact) == np.sign(np.nan_to_num(move)))
    n, hits = int(counted.sum()), int(agrees.sum())
    if n == 0:
        warnings.warn("market_alignment: no event has a price move >= min_move on both "
                      "sides; the agreement share is undefined.", DegenerateDataWarning,
                      stacklevel=2)
        stat, pvalue, ci = np.nan, np.nan, ConfidenceInterval(np.nan, np.nan,
                                                               confidence_level)
    else:
        test = stats.binomtest(hits, n, 0.5)
        low, high = test.proportion_ci(confidence_level, method="exact")
        stat, pvalue = hits / n, float(test.pvalue)
        ci = ConfidenceInterval(float(low), float(high), confidence_level)
    # pressure curve evaluated at each price time (events at or before it)
    # in units of a power of two near the largest |impact| (power_of_two_scale): exact,
    # the same correlation, without overflow at magnitudes of 1e300 or underflow at 1e-300
    scale = power_of_two_scale(impact)
    cum = np.concatenate([[0.0], np.cumsum(np.ldexp(impact, -scale))])
    at_price = cum[np.searchsorted(ev_t, pt, side="right")]
    # a curve that varies by less than DECIMAL_SLACK of the sum of |impact| is flat:
    # impacts that cancel in decimal (+0.1 +0.2 -0.3) leave 5.6e-17 in binary
    ptol = DECIMAL_SLACK * float(np.abs(np.ldexp(impact, -scale)).sum())
    corr = np.nan
    # a flat price series is flat exactly (np.std of 0.4, 0.4, 0.4 is 5.6e-17, not 0)
    if len(pt) >= 2 and float(np.ptp(at_price)) > ptol and np.ptp(pv) > 0:
        corr = float(np.corrcoef(at_price, pv)[0, 1])
    per = pd.DataFrame({date: in_source_zone(ev_t, curve[date]), "impact": impact,
                        "price_before": before, "price_after": after, "move": move,
                        "counted": counted, "agrees": agrees})
    return MarketAlignmentResult(
        statistic=stat, pvalue=pvalue, confidence_interval=ci, n_obs=n,
        method="exact binomial test of agreement = 1/2; Clopper-Pearson interval",
        window_days=window_days, min_move=min_move, correlation=corr, table=per)


@fill_doc
def plot_causal_pressure(curve: pd.DataFrame, prices: Any = None, *, date: str = "date",
                         price_date: str = "date", price: str = "price",
                         ax: Axes | None = None) -> Axes:
    """Step plot of the causal pressure curve, with an optional market-price line.

    Draws a curve of :func:`causal_pressure` as steps over time; with ``prices``, the
    market's price on the same time axis, to see whether the market moved when the graph
    says the pressure did.

    Parameters
    ----------
    curve : pandas.DataFrame
        From :func:`causal_pressure`.
    prices : pandas.DataFrame or convertible, optional
        Market prices, drawn on a second y axis.
    date, price_date, price : str
        Column names.
    %(ax)s

    Returns
    -------
    matplotlib.axes.Axes
        The axes of the pressure curve.

    See Also
    --------
    causal_pressure : the curve plotted.
    market_alignment : whether the market moved the way the pressure says.
    """
    owner = "plot_causal_pressure"
    if not isinstance(curve, pd.DataFrame) or "pressure" not in curve.columns:
        raise TypeError(param_error("curve", owner, "the DataFrame from causal_pressure",
                                    type(curve).__name__))
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.5))
    ax.step(curve[date], curve["pressure"], where="post", color="C0",
            label="causal pressure")
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set(xlabel="date", ylabel="cumulative pressure toward YES")
    if prices is not None:
        pdf = as_dataframe(prices, name="prices", owner=owner)
        require_columns(pdf, {"price_date": price_date, "price": price}, owner=owner)
        t, _ = parse_datetimes(pdf[price_date], pdf.index, price_date, owner)
        twin = ax.twinx()
        twin.plot(t, pdf[price].to_numpy(dtype=np.float64), color="C1", label="market price")
        twin.set(ylabel="market price", ylim=(0, 1))
    ax.set_title("Causal pressure")
    return ax
