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
