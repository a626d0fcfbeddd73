"""``turning_points(convention='paper')`` finds every row's window at once (a Python step
per row took 1.8 s on 40,000 prices): the rows it keeps are those of the per-row loop, kept
here as the reference, to the last bit of the comparison; the window extremes and the
shifted window starts are checked against brute force."""

from __future__ import annotations

import numpy as np
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from coherence._scoring._dates import shifted
from coherence._scoring._dates import shifted_many
from coherence._scoring._market_checks import _turning_paper
from coherence._scoring._markets import window_extremes
from coherence._validation import DECIMAL_SLACK

DAY = 86_400 * 10**9


def _turning_loop(t, p, min_change, window_ns):
    """The per-row loop the vectorised path replaced."""
    keep = []
    for i in range(len(t)):
        lo = np.searchsorted(t, shifted(t[i], -window_ns), side="left")
        hi = np.searchsorted(t, t[i], side="left")
        if hi > lo and np.max(np.abs(p[lo:hi] - p[i])) >= min_change - DECIMAL_SLACK:
            keep.append(i)
    return np.asarray(keep, dtype=np.int64)


series = st.lists(st.tuples(st.integers(0, 40), st.sampled_from(
    [0.0, 0.1, 0.2, 0.3, 0.35, 0.7, 1.0, 0.123456789, 1 / 3, 2 / 3, 0.1 + 0.2])),
    min_size=0, max_size=60)


@settings(max_examples=300, deadline=None)
@given(series, st.sampled_from([0.0, 0.05, 0.1, 0.2, 0.3, 0.5]),
       st.sampled_from([1, DAY // 2, DAY, 3 * DAY, 100 * DAY]))
def test_turning_points_are_the_per_row_loop_s(rows, min_change, window_ns):
    rows = sorted(rows, key=lambda r: r[0])   # tied times kept, in drawn order
    t = np.array([np.datetime64("2024-01-01", "ns") + np.timedelta64(d * DAY // 4, "ns")
                  for d, _ in rows], dtype="datetime64[ns]")
    p = np.array([x for _, x in rows], dtype=np.float64)
    np.testing.assert_array_equal(_turning_paper(t, p, min_change, window_ns),
                                  _turning_loop(t, p, min_change, window_ns))


@settings(max_examples=300, deadline=None)
@given(st.lists(st.floats(-1e6, 1e6), min_size=1, max_size=70), st.data())
def test_window_extremes_are_the_windows_max_and_min(values, data):
    p = np.array(values)
    n = len(p)
    lo = np.array(data.draw(st.lists(st.integers(0, n), min_size=n, max_size=n)))
    hi = np.array([data.draw(st.integers(0, n)) for _ in range(n)])
    top, bottom = window_extremes(p, lo, hi)
    for i in range(n):
        if hi[i] > lo[i]:
            assert top[i] == p[lo[i]:hi[i]].max() and bottom[i] == p[lo[i]:hi[i]].min()
        else:
            assert top[i] == p[i] == bottom[i]


def test_shifted_many_is_shifted_at_each_instant_ends_of_the_range_included():
    far = [np.datetime64("1677-09-22T00:12:43.145224193", "ns"),
           np.datetime64("2262-04-11T23:47:16.854775807", "ns")]
    cases = [np.array(["2024-01-01", "2024-03-01"], dtype="datetime64[ns]"),
             np.array(far, dtype="datetime64[ns]"), np.array([], dtype="datetime64[ns]")]
    for when in cases:
        for delta in (0, -DAY, 3 * DAY, -(2**63), 2**64, -(2**62) - 1):
            expect = np.array([shifted(x, delta) for x in when], dtype="datetime64[ns]")
            np.testing.assert_array_equal(shifted_many(when, delta), expect)
