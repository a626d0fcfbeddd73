"""Day windows are fixed lengths between instants (as pandas' '1D'), not calendar days:
across a daylight-saving change, aware dates keep their true spacing. New York 12:00 on
9 and 10 March 2024 are 23 hours apart; the naive spelling of the same wall times, 24.
A change that buckets by calendar day would make the two spellings agree, and fail here."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

import coherence

NAIVE = pd.DatetimeIndex(["2024-03-09 12:00", "2024-03-10 12:00"])
AWARE = NAIVE.tz_localize("America/New_York")
DOCS = Path(__file__).resolve().parents[2] / "docs"


def test_rolling_accuracy_one_day_window_across_dst():
    def last(start):
        fc = pd.DataFrame({"model": "m", "start": start, "correct": [1, 0]})
        out = coherence.rolling_accuracy(fc, window="1D", min_periods=1)
        return out["n"].iloc[-1], out["accuracy"].iloc[-1]

    assert last(AWARE) == (2, 0.5)     # 23 hours apart: both in the day before 10 March
    assert last(NAIVE) == (1, 0.0)     # 24 hours apart: the first just outside


def test_turning_points_window_across_dst():
    def points(date):
        px = pd.DataFrame({"date": date, "price": [0.40, 0.50]})
        return len(coherence.turning_points(px, window_days=23.5 / 24))

    assert points(AWARE) == 1
    assert points(NAIVE) == 0


@pytest.mark.parametrize("name", ["rolling_accuracy", "turning_points", "market_alignment",
                                  "market_checks", "market_signal_metrics",
                                  "key_event_recall", "reasoning_graph_metrics"])
def test_day_windows_say_they_are_measured_between_instants(name):
    doc = " ".join(getattr(coherence, name).__doc__.split())
    assert "daylight-saving" in doc and "23 hours" in doc


@pytest.mark.parametrize("page", ["forecast_scoring.md", "reasoning_quality.md"])
def test_docs_say_day_windows_are_measured_between_instants(page):
    text = " ".join((DOCS / page).read_text(encoding="utf-8").split())
    assert "daylight-saving" in text and "23 hours apart" in text
