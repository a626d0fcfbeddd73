"""The date parser (coherence/_scoring/_dates.py), through its public callers: numbers are
not dates, and a cutoff must be timezone-aware (compared in UTC)."""

from __future__ import annotations

import datetime as dt

import pandas as pd
import pytest

from coherence import TemporalGateway
from coherence import contamination_filter


# --------------------------------------------------------------------------- cutoffs
def test_gateway_accepts_aware_datetime():
    cut = dt.datetime(2024, 3, 1, tzinfo=dt.timezone(dt.timedelta(hours=-5)))
    gate = TemporalGateway(cut)
    assert gate.cutoff == pd.Timestamp("2024-03-01T05:00:00Z")


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
