"""The date parser (coherence/_scoring/_dates.py), through its public callers: numbers are
not dates, and a cutoff must be timezone-aware (compared as an instant, kept in its zone)."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from coherence import TemporalGateway
from coherence import contamination_filter
from coherence import key_event_recall
from coherence import reasoning_graph_metrics


# --------------------------------------------------------------------------- cutoffs
def test_gateway_accepts_aware_datetime():
    cut = dt.datetime(2024, 3, 1, tzinfo=dt.timezone(dt.timedelta(hours=-5)))
    gate = TemporalGateway(cut)
    assert gate.cutoff == pd.Timestamp("2024-03-01T05:00:00Z")
    assert gate.cutoff.utcoffset() == dt.timedelta(hours=-5)     # the zone given, kept


@pytest.mark.parametrize("cutoff, shown", [
    ("2024-03-01T00:00:00+02:00", "2024-03-01T00:00:00+02:00"),
    ("2024-03-01T00:00:00Z", "2024-03-01T00:00:00+00:00"),
    (pd.Timestamp("2024-03-01", tz="America/New_York"), "2024-03-01T00:00:00-05:00"),
])
def test_gateway_keeps_and_shows_the_zone_it_was_given(cutoff, shown):
    # the cutoff and the repr were in UTC ('2024-02-29T22:00:00+00:00' for midnight at
    # +02:00) while the package's other results give dates back in the zone given; the
    # instant compared is the same
    gate = TemporalGateway(cutoff)
    assert gate.cutoff.isoformat() == shown
    assert repr(gate) == f"TemporalGateway(cutoff={shown!r})"
    assert gate.cutoff == pd.Timestamp(cutoff)
    instant = pd.Timestamp(shown).tz_convert("UTC")
    records = {"id": ["before", "at", "at_local", "after"],
               "published": [(instant - pd.Timedelta("1ns")).isoformat(), instant.isoformat(),
                             shown, (instant + pd.Timedelta("1min")).isoformat()]}
    part = gate.partition(records, date="published")
    assert list(part.visible["id"]) == ["before"]
    assert list(part.hidden["id"]) == ["at", "at_local", "after"]
    report = gate.validate({"sources": [{"id": "s", "published": shown}]})
    assert not report.ok and report.cutoff.isoformat() == shown


@pytest.mark.parametrize("cutoff", ["2024-03-01", dt.datetime(2024, 3, 1),
                                    pd.Timestamp("2024-03-01"), dt.date(2024, 3, 1)])
def test_naive_cutoff_is_an_error(cutoff):
    with pytest.raises(ValueError, match="'cutoff' parameter of TemporalGateway must be a "
                                         "timezone-aware date"):
        TemporalGateway(cutoff)


# --------------------------------------------------------------------------- date columns
def test_numbers_are_not_dates():
    # pandas would read 2024 as 2024 ns after 1970; we refuse
    t = pd.DataFrame({"model": ["m"], "question": ["q"], "opened": [2024]})
    with pytest.raises(ValueError, match=r"Column 'opened'.*hold dates.*2024"):
        contamination_filter(t, {"m": "2024-01-01"})


# --------------------------------------------------------------------------- quarters
@pytest.mark.parametrize("text", ["2023Q4", "2023-Q4", "2023 q4", "Q4 2023", "Q4/2023",
                                  "4Q2023"])
def test_a_quarter_in_a_date_column_is_its_first_day(text):
    # an opening date written as a quarter is its first day, as a month is (a cutoff
    # written so is its end, tests/scoring/test_temporal.py); pandas read only some of
    # these spellings, with a deprecation warning
    df = pd.DataFrame({"model": "m", "question": ["a", "b"], "opened": [text, "2023-09-30"]})
    rep = contamination_filter(df, {"m": "2023-10-01"})
    assert list(rep.kept["question"]) == ["a"]
    rep = contamination_filter(df, {"m": "2023-09-30T12:00"})
    assert list(rep.kept["question"]) == ["a"]


@pytest.mark.parametrize("text", ["2023Q5", "2023Q0", "Q4 23", "2023QQ4"])
def test_not_a_quarter_is_not_a_date(text):
    df = pd.DataFrame({"model": "m", "question": ["a"], "opened": [text]})
    with pytest.raises(ValueError, match="hold dates"):
        contamination_filter(df, {"m": "2023-10-01"})


# --------------------------------------------------------------------------- across tables
def test_day_first_dates_read_two_ways_across_tables_raise():
    # each table is read one way by itself: the forecast's '12/01/2024' (12 January, as
    # the hindsight dates are written) month first, 1 December; the hindsight dates, with
    # days above 12, day first. The pair failed the 7-day window: KER 0 instead of 0.5
    hind = {"question": ["q"] * 2, "event": ["e1", "e2"],
            "title": ["Central bank raises interest rates", "Strike closes ports"],
            "date": ["13/01/2024", "20/01/2024"], "magnitude": [0.9, 0.5],
            "confidence": [0.9, 0.8]}
    fc = {"model": ["m"], "question": ["q"], "event": ["f1"],
          "title": ["Central bank raises interest rates again"], "date": ["12/01/2024"]}
    iso = dict(fc, date=["2024-01-12"])
    assert key_event_recall(iso, hind, rng=0).statistic == 0.5
    with pytest.raises(ValueError, match=r"read day first .*hindsight_events\['date'\]"):
        key_event_recall(fc, hind, rng=0)
    with pytest.raises(ValueError, match=r"read day first .*hindsight_events\['date'\]"):
        reasoning_graph_metrics(fc, hind, gates=False, rng=0)
    # ISO dates in one table beside year-last ones in another: each is read one way
    assert key_event_recall(iso, dict(hind, date=["01/13/2024", "01/20/2024"]),
                            rng=0).statistic == 0.5


def test_day_first_cutoff_read_month_first_raises():
    # the cutoff '01/10/2023' (1 October, as the openings are written) was read as
    # 10 January: the question opened 13 September was kept as clean
    table = pd.DataFrame({"model": ["m"] * 2, "question": ["a", "b"],
                          "opened": ["13/09/2023", "20/11/2023"]})
    with pytest.raises(ValueError, match=r"month first elsewhere \(row \"cutoffs\['m'\]\""):
        contamination_filter(table, {"m": "01/10/2023"})
    with pytest.raises(ValueError, match=r"month first elsewhere \(row 'cut\[0\]'"):
        contamination_filter(table.assign(cut="01/10/2023"), "cut")
    rep = contamination_filter(table, {"m": "2023-10-01"})
    assert list(rep.dropped["question"]) == ["a"]


# --------------------------------------------------------------------------- two-digit years
@pytest.mark.parametrize("dates", [["24-01-05", "24-01-20"], ["24/01/05", "24/01/20"],
                                   ["05.01.24", "20.01.24"]])
def test_a_two_digit_year_first_or_last_raises(dates):
    # '24-01-05' (5 January 2024 written year first) was read as 24 January 2005: the
    # forecast dated 2024-01-06 missed the 7-day window and KER was 0.0, not 0.5
    hind = {"question": ["q"] * 2, "event": ["e1", "e2"],
            "title": ["Central bank raises interest rates", "Strike closes ports"],
            "date": dates, "magnitude": [0.9, 0.5], "confidence": [0.9, 0.8]}
    fc = {"model": ["m"], "question": ["q"], "title": ["Central bank raises interest rates"],
          "date": ["2024-01-06"]}
    assert key_event_recall(fc, dict(hind, date=["2024-01-05", "2024-01-20"]),
                            rng=0).statistic == 0.5
    with pytest.raises(ValueError, match=r"Column 'date' \(input to key_event_recall\) "
                       r"must hold dates whose year can be told.*2 offending rows \(first: "
                       rf"row 0 = '{dates[0]}', row 1 = '{dates[1]}'\)"):
        key_event_recall(fc, hind, rng=0)
    with pytest.raises(ValueError, match="whose year can be told"):
        contamination_filter(pd.DataFrame({"model": ["m"], "question": ["a"],
                                           "opened": [dates[0]]}), {"m": "2024-10-01"})


@pytest.mark.parametrize("text, day", [("99-01-05", "1999-01-05"), ("24-01-32", "2032-01-24"),
                                       ("5.1.24", "2024-05-01"), ("24-13-05 x", None)])
def test_a_two_digit_year_read_one_way_passes(text, day):
    # only year first ('99' is no day), only year last (no day 32), a one-digit first
    # field (no year): one reading each, as before; '24-13-05' has no month 13
    df = pd.DataFrame({"model": ["m"], "question": ["a"], "opened": [text]})
    if day is None:
        with pytest.raises(ValueError, match="hold dates"):
            contamination_filter(df, {"m": "2024-10-01"})
        return
    rep = contamination_filter(df, {"m": pd.Timestamp(day) + pd.Timedelta(hours=12)})
    assert list(rep.dropped["question"]) == ["a"]
    rep = contamination_filter(df, {"m": pd.Timestamp(day) - pd.Timedelta(hours=12)})
    assert list(rep.kept["question"]) == ["a"]


# --------------------------------------------------------------------------- the ns range
def test_a_gateway_cutoff_beyond_nanosecond_timestamps_names_the_parameter():
    # was pandas' OutOfBoundsDatetime ("Cannot cast ... to unit='ns'")
    with pytest.raises(ValueError, match=r"The 'cutoff' parameter of TemporalGateway must be "
                       r"a timezone-aware date between 1677-09-22 and 2262-04-11"):
        TemporalGateway("2300-01-01T00:00Z")


@pytest.mark.parametrize("date", ["2300-01-01", "1500-06-30"])
def test_a_date_beyond_nanosecond_timestamps_names_the_column_and_row(date):
    fc = pd.DataFrame({"model": ["a", "a"], "question": ["q1", "q2"],
                       "opened": ["2024-01-01", date]})
    with pytest.raises(ValueError, match=r"Column 'opened' \(input to contamination_filter\) "
                       rf"must hold dates between .*; 1 offending row \(first: row 1 = '{date}'\)"):
        contamination_filter(fc, {"a": "2024-06-01"})


def test_a_year_cutoff_ending_after_the_last_timestamp_is_that_instant():
    # '2262' stands for its end, 2263-01-01, past the last nanosecond timestamp: every
    # date is before it (it raised pandas' OutOfBoundsDatetime)
    fc = pd.DataFrame({"model": ["a", "a"], "question": ["q1", "q2"],
                       "opened": ["2024-01-01", "2262-04-01"]})
    res = contamination_filter(fc, {"a": "2262"})
    assert len(res.kept) == 0 and res.n_dropped == 2
