"""Hypothesis properties of the values ``dataset_statistics`` returns: its counts,
shares and horizon summaries against a loop over the task table (dates parsed with
the standard library), invariance to the order of the rows and to the column names."""

from __future__ import annotations

import datetime as dt
import math
import statistics

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence

TYPES = ("binary", "multiple_choice", "quantity", "interval", "timeframe")
DOMAINS = ("politics", "sports", "science", None, "", "  ")  # the last three: missing
OUTCOME = {"binary": 1, "multiple_choice": "b", "quantity": 3.5, "interval": 12.0,
           "timeframe": "2025-01-01"}
EPOCH = dt.datetime(2023, 12, 30)


@st.composite
def task_tables(draw: st.DrawFn) -> tuple[pd.DataFrame, bool]:
    """Up to 15 questions of random types and domains; start and resolution times
    in minutes after an epoch, naive or with UTC offsets (each date its own)."""
    n = draw(st.integers(1, 15))
    aware = draw(st.booleans())
    rows = []
    for i in range(n):
        kind = draw(st.sampled_from(TYPES))
        start = draw(st.integers(0, 60 * 24 * 400))
        length = draw(st.integers(1, 60 * 24 * 200))
        stamps = []
        for minutes in (start, start + length):
            when = EPOCH + dt.timedelta(minutes=minutes)
            if aware:  # the same instant written at another offset
                offset = dt.timezone(dt.timedelta(hours=draw(st.integers(-11, 12))))
                when = when.replace(tzinfo=dt.UTC).astimezone(offset)
            stamps.append(when.isoformat())
        rows.append({"question": f"q{i}", "type": kind, "start": stamps[0],
                     "resolution_date": stamps[1], "outcome": OUTCOME[kind],
                     "domain": draw(st.sampled_from(DOMAINS))})
    return pd.DataFrame(rows), aware


def brute_force(df: pd.DataFrame) -> dict:
    days: dict[str, list[float]] = {}
    types: dict[str, int] = {}
    domains: dict[str, int] = {}
    for row in df.to_dict("records"):
        elapsed = (dt.datetime.fromisoformat(row["resolution_date"])
                   - dt.datetime.fromisoformat(row["start"]))
        days.setdefault(row["type"], []).append(elapsed / dt.timedelta(days=1))
        types[row["type"]] = types.get(row["type"], 0) + 1
        dom = row["domain"]
        # None comes back from the frame as NaN; blank strings are missing too
        missing = dom is None or (isinstance(dom, float) and math.isnan(dom))
        key = "(missing)" if missing or not str(dom).strip() else dom
        domains[key] = domains.get(key, 0) + 1
    days["(all)"] = [d for v in days.values() for d in v]
    return {"days": days, "types": types, "domains": domains}


def as_dict(frame: pd.DataFrame, key: str) -> dict:
    return dict(zip(frame[key], frame["n"], strict=True))


@given(task_tables())
@settings(max_examples=50)
def test_counts_shares_and_horizons_equal_a_loop(case):
    df, _aware = case
    res = coherence.dataset_statistics(df)
    ref = brute_force(df)
    n = len(df)
    assert res.n_questions == n
    assert as_dict(res.types, "type") == ref["types"]
    assert as_dict(res.domains, "domain") == ref["domains"]
    for frame in (res.types, res.domains):
        assert frame["n"].sum() == n
        np.testing.assert_allclose(frame["share"], frame["n"] / n, rtol=1e-15)
        assert list(frame["n"]) == sorted(frame["n"], reverse=True)  # most frequent first
    assert list(res.table.columns) == ["section", "group", "n", "share"]
    assert len(res.table) == len(res.types) + len(res.domains)
    h = res.horizons.set_index("type")
    assert set(h.index) == set(ref["days"])
    for kind, days in ref["days"].items():
        row = h.loc[kind]
        assert row["n"] == len(days)
        assert row["min"] == pytest.approx(min(days), abs=1e-9)
        assert row["max"] == pytest.approx(max(days), abs=1e-9)
        assert row["median"] == pytest.approx(statistics.median(days), abs=1e-9)
        assert row["mean"] == pytest.approx(statistics.fmean(days), abs=1e-9)
        assert 0 < row["min"] <= row["median"] <= row["max"]
        # to round-off: the mean of 13 horizons of one minute is 1 ulp above it
        assert row["min"] * (1 - 1e-12) <= row["mean"] <= row["max"] * (1 + 1e-12)


@given(task_tables(), st.randoms(use_true_random=False))
@settings(max_examples=30)
def test_row_order_and_column_names_do_not_change_the_numbers(case, shuffle):
    df, _aware = case
    order = list(range(len(df)))
    shuffle.shuffle(order)
    a = coherence.dataset_statistics(df)
    b = coherence.dataset_statistics(df.iloc[order])
    names = {"question": "id", "type": "kind", "start": "opened", "resolution_date": "closed",
             "outcome": "answer", "domain": "topic"}
    c = coherence.dataset_statistics(df.rename(columns=names), question="id", type="kind",
                                     start="opened", resolution_date="closed",
                                     outcome="answer", domain="topic")
    for other in (b, c):
        assert other.n_questions == a.n_questions
        assert as_dict(other.types, "type") == as_dict(a.types, "type")
        assert as_dict(other.domains, "domain") == as_dict(a.domains, "domain")
        left = a.horizons.set_index("type").sort_index()
        right = other.horizons.set_index("type").sort_index()
        pd.testing.assert_frame_equal(left, right, rtol=1e-12)
