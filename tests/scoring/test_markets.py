"""Causal pressure and market alignment."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import coherence
from coherence import DegenerateDataWarning
from coherence import MarketAlignmentResult
from coherence import causal_pressure
from coherence import market_alignment
from coherence import plot_causal_pressure


# --------------------------------------------------------------------------- causal pressure
def events() -> pd.DataFrame:
    return pd.DataFrame({
        "date": ["2024-01-05", "2024-01-10", "2024-01-20", "2024-01-30", None],
        "direction": [1, -1, 1, 1, -1],
        "magnitude": [1.0, 0.5, 1.0, 0.2, 1.0],
        "confidence": [1.0, 1.0, 0.5, 1.0, 1.0],
    })


def test_causal_pressure_by_hand():
    curve = causal_pressure(events())
    # impacts 1, -0.5, 0.5, 0.2 (undated event dropped); running sum 1, 0.5, 1, 1.2
    np.testing.assert_allclose(curve["impact"], [1.0, -0.5, 0.5, 0.2])
    np.testing.assert_allclose(curve["pressure"], [1.0, 0.5, 1.0, 1.2])
    ties = causal_pressure({"date": ["2024-01-02", "2024-01-01", "2024-01-02"],
                            "direction": [1, 1, -1], "magnitude": [1, 2, 4],
                            "confidence": [1, 1, 1]})
    # sorted by date, ties keep row order: 2, 1, -4
    np.testing.assert_allclose(ties["pressure"], [2.0, 3.0, -1.0])


def test_causal_pressure_validation():
    with pytest.raises(ValueError, match=r"Column 'direction'.*be -1, 0 or 1"):
        causal_pressure(events().assign(direction=2))
    with pytest.raises(ValueError, match=r"Column 'magnitude'.*>= 0"):
        causal_pressure(events().assign(magnitude=-1.0))
    with pytest.raises(ValueError, match=r"Column 'confidence'.*\[0, 1\]"):
        causal_pressure(events().assign(confidence=1.5))


PRICES = pd.DataFrame({
    "date": ["2024-01-04", "2024-01-06", "2024-01-09", "2024-01-10", "2024-01-19",
             "2024-01-21"],
    "price": [0.40, 0.55, 0.60, 0.62, 0.70, 0.60],
})


def test_market_alignment_by_hand():
    res = market_alignment(events(), PRICES)
    assert isinstance(res, MarketAlignmentResult)
    per = res.table
    # e1 (+1): 0.55 - 0.40 = +0.15 agrees; e2 (-0.5): the price stamped at the event counts
    # as after: 0.62 - 0.60 = +0.02 < 0.03, not counted; e3 (+0.5): 0.60 - 0.70 = -0.10
    # disagrees; e4: no price within 3 days -> not counted
    np.testing.assert_allclose(per["move"].to_numpy()[:3], [0.15, 0.02, -0.10], atol=1e-12)
    assert np.isnan(per["move"].iloc[3])
    assert per["counted"].tolist() == [True, False, True, False]
    assert res.statistic == 0.5 and res.n_obs == 2
    assert res.pvalue == pytest.approx(1.0)   # binomial(1 of 2, 1/2), two-sided
    # pressure at each price time: 0, 1, 1, 0.5, 0.5, 1
    expected = np.corrcoef([0, 1, 1, 0.5, 0.5, 1], PRICES["price"])[0, 1]
    assert res.correlation == pytest.approx(expected)


def test_market_alignment_no_counted_events():
    with pytest.warns(DegenerateDataWarning, match="agreement share is undefined"):
        res = market_alignment(events(), PRICES, min_move=0.5)
    assert np.isnan(res.statistic) and res.n_obs == 0


def test_market_alignment_validation():
    with pytest.raises(ValueError, match="'window_days' parameter of market_alignment"):
        market_alignment(events(), PRICES, window_days=-1)
    with pytest.raises(ValueError, match="column 'price'"):
        market_alignment(events(), PRICES.drop(columns="price"))
    with pytest.raises(ValueError, match="both be timezone-aware or both naive"):
        market_alignment(events(), PRICES.assign(date=PRICES["date"] + "T00:00Z"))
    # two prices at one time: the move would depend on the rows' order
    two = pd.concat([PRICES, PRICES.iloc[[1]].assign(price=0.45)], ignore_index=True)
    with pytest.raises(ValueError, match=r"Column 'price'.*same on every row of a 'date' "
                       r"value.*has 0.45, 0.55.*row 1 = 0.55, row 6 = 0.45"):
        market_alignment(events(), two)
    # the same price twice is one observation
    same = pd.concat([PRICES, PRICES.iloc[[1]]], ignore_index=True)
    assert market_alignment(events(), same).statistic == market_alignment(
        events(), PRICES).statistic


def test_plot_causal_pressure():
    import matplotlib.pyplot as plt

    ax = plot_causal_pressure(causal_pressure(events()), PRICES)
    assert ax.get_title() == "Causal pressure"
    assert (ax.get_xlabel(), ax.get_ylabel()) == ("date", "cumulative pressure toward YES")
    twin, = (other for other in ax.figure.axes if other is not ax)
    assert (twin.get_ylabel(), twin.get_ylim()) == ("market price", (0, 1))
    plt.close("all")
    with pytest.raises(TypeError, match="'curve' parameter of plot_causal_pressure"):
        plot_causal_pressure(events())


def test_prices_in_cents_refused():
    # issue 17: prices 40, 55 (cents) used to give moves of 15 "probability points"
    ev = {"date": ["2024-01-05"], "direction": [1], "magnitude": [0.5], "confidence": [0.9]}
    px = {"date": ["2024-01-04", "2024-01-06"], "price": [40, 55]}
    with pytest.raises(ValueError, match=r"Column 'price' \(input to market_alignment\) must "
                       r"hold probabilities in \[0, 1\]; 2 offending rows \(first: row 0 = 40.0"):
        market_alignment(ev, px)
    probs = market_alignment(ev, {"date": px["date"], "price": [0.40, 0.55]})
    assert probs.table["move"].iloc[0] == pytest.approx(0.15)


def test_aware_event_dates_come_back_aware_in_their_zone():
    # 20:00 at -05:00 is 01:00 UTC the next day: returned naive, it read as a local
    # time a day later than the event; returned in UTC, as another wall time
    ev = {"date": ["2024-01-03T20:00-05:00", "2024-01-01T00:00-05:00"],
          "direction": [-1, 1], "magnitude": [0.5, 0.8], "confidence": [1.0, 1.0]}
    px = {"date": ["2024-01-01T12:00-05:00", "2024-01-03T12:00-05:00",
                   "2024-01-04T12:00-05:00"], "price": [0.4, 0.5, 0.3]}
    curve = causal_pressure(ev)
    expected = pd.to_datetime(["2024-01-01T05:00Z", "2024-01-04T01:00Z"])
    assert str(curve["date"].dtype) == "datetime64[ns, UTC-05:00]"
    assert list(curve["date"]) == list(expected)  # the same instants
    assert [str(d) for d in curve["date"]] == ["2024-01-01 00:00:00-05:00",
                                               "2024-01-03 20:00:00-05:00"]
    table = market_alignment(ev, px).table
    assert list(table["date"]) == list(expected)
    naive = causal_pressure({**ev, "date": ["2024-01-03", "2024-01-01"]})
    assert naive["date"].dt.tz is None


@pytest.mark.parametrize("zone", ["America/New_York", "Asia/Tokyo", "UTC"])
def test_dates_in_a_named_zone_come_back_in_that_zone(zone):
    # they came back in UTC: New York's midnight read 05:00, another wall time than given;
    # the figures are those of the naive spelling of the same wall times
    naive = pd.Series(pd.to_datetime(["2024-01-03 00:00", "2024-01-01 23:30",
                                        "2024-01-02 12:00"]))
    given = naive.dt.tz_localize(zone)
    ev = pd.DataFrame({"date": given, "direction": [-1, 1, 1], "magnitude": [0.5, 0.8, 1.0],
                       "confidence": [1.0, 0.5, 1.0]})
    curve = causal_pressure(ev)
    assert str(curve["date"].dt.tz) == zone
    assert list(curve["date"]) == sorted(given)  # the same instants and wall times
    assert curve["pressure"].tolist() == causal_pressure(ev.assign(date=naive))[
        "pressure"].tolist()
    fc = pd.DataFrame({"model": ["m"] * 3, "start": given, "correct": [1, 0, 1]})
    ra = coherence.rolling_accuracy(fc, window="1D", min_periods=1)
    assert list(ra["start"]) == sorted(given) and str(ra["start"].dt.tz) == zone
    assert ra["accuracy"].tolist() == coherence.rolling_accuracy(
        fc.assign(start=naive), window="1D", min_periods=1)["accuracy"].tolist()
    px = pd.DataFrame({"date": given, "price": [0.5, 0.4, 0.47]})
    tps = coherence.turning_points(px)
    assert [str(d) for d in tps["date"]] == [str(d) for d in sorted(given)[1:]]
    tasks = pd.DataFrame({"question": ["q"], "start": given[1:2].to_numpy(),
                          "resolution_date": given[:1].to_numpy()})
    sim = coherence.simulated_dates(tasks)["simulated_date"]
    assert str(sim[0]) == str(pd.Timestamp("2024-01-02 11:45", tz=zone))


# --------------------------------------------------------------------------- numeric extremes
@pytest.mark.parametrize("scale", [1e300, 1e-300, 1e-320])
def test_market_alignment_correlation_is_scale_free_at_extreme_magnitudes(scale):
    # magnitudes of 1e300 overflowed in the correlation's squares and 1e-300 vanished
    # there: a NaN correlation and numpy's RuntimeWarnings (errors under this suite)
    ev = events().assign(magnitude=events()["magnitude"] * scale)
    res = market_alignment(ev, PRICES)
    assert res.correlation == pytest.approx(market_alignment(events(), PRICES).correlation,
                                            rel=1e-12)


def test_market_alignment_at_the_ends_of_nanosecond_timestamps():
    # a window three days before 1677-09-23 (or after 2262-04-09) wrapped around to the
    # other end of the range and held no price: neither move was counted
    px = pd.DataFrame({"date": ["1677-09-22", "1677-09-23", "2262-04-09", "2262-04-10"],
                       "price": [0.4, 0.6, 0.3, 0.7]})
    ev = pd.DataFrame({"date": ["1677-09-22 12:00", "2262-04-09 12:00"], "direction": [1, 1],
                       "magnitude": [1.0, 1.0], "confidence": [1.0, 1.0]})
    res = market_alignment(ev, px)
    np.testing.assert_allclose(res.table["move"], [0.2, 0.4], atol=1e-12)
    assert res.statistic == 1.0 and res.n_obs == 2


@pytest.mark.parametrize("window_days", [1e6, 1e300])
def test_market_alignment_window_longer_than_every_date(window_days):
    # was OverflowError ('int too big to convert'): such a window covers every price, so
    # the event of 01-30, with no price within 3 days, has the last one before it
    per = market_alignment(events(), PRICES, window_days=window_days).table
    assert np.isnan(market_alignment(events(), PRICES).table["price_before"].iloc[3])
    assert per["price_before"].iloc[3] == 0.60 and np.isnan(per["price_after"].iloc[3])


def test_no_negative_zero_impact():
    # direction -1 with magnitude or confidence 0 gave an impact of -0.0
    curve = causal_pressure(events().assign(magnitude=0.0))
    assert not np.signbit(curve["impact"].to_numpy()).any()
    assert not np.signbit(curve["pressure"].to_numpy()).any()
