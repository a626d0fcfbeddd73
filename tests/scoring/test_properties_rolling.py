"""Hypothesis properties of rolling_accuracy and horizon_positions: invariance of the
rolling accuracy to the order of the rows (ties in start time included, count and time
windows), and the horizon labels against the documented bands computed with fractions.
"""

from __future__ import annotations

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence

_rows = st.lists(st.tuples(st.sampled_from(["m1", "m2"]), st.integers(0, 6),
                           st.sampled_from([0.0, 0.5, 1.0])), min_size=1, max_size=20)


def _frame(rows) -> pd.DataFrame:
    # a forecast id keeps forecasts alike in every other column apart (deliberate repeats)
    return pd.DataFrame({"model": [r[0] for r in rows],
                         "start": pd.Timestamp("2024-01-01")
                         + pd.to_timedelta([r[1] for r in rows], unit="D"),
                         "correct": [r[2] for r in rows], "forecast": range(len(rows))})


@settings(max_examples=40)
@given(_rows, st.one_of(st.integers(1, 4), st.sampled_from(["1D", "2D", "5D"])),
       st.integers(1, 3), st.randoms(use_true_random=False))
def test_rolling_accuracy_does_not_depend_on_row_order(rows, window, min_periods, rnd):
    """Several forecasts with one start time (a tie): shuffled rows give the same table,
    and tied rows of a model share one value."""
    df = _frame(rows)
    perm = list(range(len(df)))
    rnd.shuffle(perm)
    if isinstance(window, int) and min_periods > window:
        with pytest.raises(ValueError, match="'min_periods' parameter"):
            coherence.rolling_accuracy(df, window=window, min_periods=min_periods)
        return
    a = coherence.rolling_accuracy(df, window=window, min_periods=min_periods)
    b = coherence.rolling_accuracy(df.iloc[perm], window=window, min_periods=min_periods)
    key = ["model", "start"]
    norm_a = a.sort_values(key, kind="stable").reset_index(drop=True)
    norm_b = b.sort_values(key, kind="stable").reset_index(drop=True)
    pd.testing.assert_frame_equal(norm_a, norm_b)
    per_tie = a.groupby(key)[["accuracy", "n"]].nunique(dropna=False)
    assert (per_tie <= 1).all().all()
    assert ((a["accuracy"].isna()) | ((a["accuracy"] >= 0) & (a["accuracy"] <= 1))).all()


def test_rolling_accuracy_count_window_ties_regression():
    """Regression: with a count window, tied start times were taken in row order, so
    listing the same forecasts in another order changed the accuracies."""
    df = pd.DataFrame({"model": "m", "start": ["2024-01-01", "2024-01-02", "2024-01-02"],
                       "correct": [1.0, 0.0, 1.0]})
    a = coherence.rolling_accuracy(df, window=2, min_periods=1)
    b = coherence.rolling_accuracy(df.iloc[[0, 2, 1]], window=2, min_periods=1)
    assert a["accuracy"].tolist() == b["accuracy"].tolist()
    assert a["accuracy"].iloc[1] == a["accuracy"].iloc[2]


@settings(max_examples=40)
@given(st.integers(2, 400), st.data())
def test_horizon_positions_follow_the_bands_in_exact_arithmetic(span_hours, data):
    """The label of each simulated date from f = elapsed / window computed with
    fractions: early f < 1/3, mid f < 2/3, late f <= 0.95, near_resolution within one
    day of resolution, other between."""
    offsets = data.draw(st.lists(st.integers(0, span_hours - 1), min_size=1, max_size=10))
    start = pd.Timestamp("2024-01-01")
    df = pd.DataFrame({"start": start, "resolution_date": start + pd.Timedelta(hours=span_hours),
                       "simulated_date": [start + pd.Timedelta(hours=h) for h in offsets]})
    got = coherence.horizon_positions(df).tolist()
    expected = []
    for h in offsets:
        f = Fraction(h, span_hours)
        if span_hours - h <= 24:
            expected.append("near_resolution")
        elif f < Fraction(1, 3):
            expected.append("early")
        elif f < Fraction(2, 3):
            expected.append("mid")
        elif f <= Fraction(95, 100):
            expected.append("late")
        else:
            expected.append("other")
    assert got == expected
    assert np.all(pd.Series(got).isin(["early", "mid", "late", "other", "near_resolution"]))
