"""Hypothesis properties of market_checks and turning_points: the net-direction check
against a loop in exact decimal arithmetic (impacts that cancel are zero, a move of
exactly ``min_move`` counts), its binomial p-value and interval against scipy, invariance
to the order of the rows (ties in time included) and to question names, and the turning
points of both conventions against scans written here, with their mirror symmetry.
"""

from __future__ import annotations

import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from scipy import stats

import coherence

#: heaped magnitudes and confidences (tenths), so that impacts can cancel exactly
_tenth = st.sampled_from([0.1, 0.2, 0.3, 0.5, 0.6, 1.0])
_price = st.sampled_from([0.3, 0.33, 0.4, 0.43, 0.5, 0.55, 0.58, 0.6, 0.9])


@st.composite
def _markets(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame]:
    """2..5 questions, each with 0..4 events on a few shared dates (ties in time) and
    0..5 prices."""
    ev, px = [], []
    for q in range(draw(st.integers(2, 5))):
        for _ in range(draw(st.integers(0, 4))):
            ev.append({"question": f"q{q}", "date": f"2024-01-{draw(st.integers(3, 8)):02d}",
                       "direction": draw(st.sampled_from([-1, 0, 1])),
                       "magnitude": draw(_tenth), "confidence": draw(_tenth)})
        days = draw(st.lists(st.integers(1, 12), max_size=5, unique=True))
        for d in days:
            px.append({"question": f"q{q}", "date": f"2024-01-{d:02d}", "price": draw(_price)})
    if draw(st.booleans()):  # a question whose impacts cancel exactly in decimal
        day = f"2024-01-{draw(st.integers(3, 8)):02d}"
        triple = [(1, 0.1), (1, 0.2), (-1, 0.3)]
        for d, m in draw(st.permutations(triple)):
            ev.append({"question": "q8", "date": day, "direction": d, "magnitude": m,
                       "confidence": 1.0})
        for d in (1, 10, 12):
            px.append({"question": "q8", "date": f"2024-01-{d:02d}", "price": draw(_price)})
    if not ev:
        ev.append({"question": "q0", "date": "2024-01-05", "direction": 1, "magnitude": 0.5,
                   "confidence": 1.0})
    return pd.DataFrame(ev), pd.DataFrame(px, columns=["question", "date", "price"])


def _dec(x: float) -> Fraction:
    return Fraction(str(x))


def _net_direction_by_hand(ev: pd.DataFrame, px: pd.DataFrame,
                           min_move: float) -> dict[str, tuple[bool, bool]]:
    """Per question (counted, agrees) from the documented rule, in exact decimals."""
    out = {}
    for q in sorted(set(ev["question"]) | set(px["question"])):
        e, p = ev[ev["question"] == q], px[px["question"] == q].sort_values("date")
        net_p = sum((_dec(d) * _dec(m) * _dec(c) for d, m, c in
                     zip(e["direction"], e["magnitude"], e["confidence"], strict=True)),
                    Fraction(0))
        if len(p) < 2:
            out[q] = (False, False)
            continue
        net_m = _dec(p["price"].iloc[-1]) - _dec(p["price"].iloc[0])
        counted = net_p != 0 and net_m != 0 and abs(net_m) >= _dec(min_move)
        out[q] = (counted, counted and (net_p > 0) == (net_m > 0))
    return out


# drawn markets may have no question with a net move (the statistic NaN, warned), and
# questions with events and no prices or the reverse (named, warned)
@pytest.mark.filterwarnings("ignore:market_checks:coherence.DegenerateDataWarning")
@pytest.mark.filterwarnings("ignore:market_checks:coherence.SkippedRecordsWarning")
@settings(max_examples=40)
@given(_markets(), st.sampled_from([0.03, 0.1, 0.0]))
def test_market_checks_net_direction_matches_exact_arithmetic(market, min_move):
    """Which questions count and agree, the share, its exact binomial p-value and its
    Clopper-Pearson interval are those of the documented rule in exact decimals."""
    ev, px = market
    res = coherence.market_checks(ev, px, min_move=min_move, n_resamples=10, rng=0)
    expected = _net_direction_by_hand(ev, px, min_move)
    table = res.table.set_index("question")
    assert set(table.index) == set(expected)
    for q, (counted, agrees) in expected.items():
        assert (table.loc[q, "direction_counted"], table.loc[q, "direction_agrees"]) == (
            counted, agrees), q
    n = sum(c for c, _ in expected.values())
    hits = sum(a for _, a in expected.values())
    assert res.n_obs == n
    assert res.n_direction_excluded == len(expected) - n
    if n == 0:
        assert math.isnan(res.statistic) and math.isnan(res.pvalue)
        return
    test = stats.binomtest(hits, n, 0.5)
    ci = test.proportion_ci(0.95, method="exact")
    assert res.statistic == pytest.approx(hits / n, abs=1e-15)
    assert res.pvalue == pytest.approx(test.pvalue, rel=1e-12)
    assert 0.0 < res.pvalue <= 1.0
    assert res.confidence_interval.low == pytest.approx(ci.low, abs=1e-12)
    assert res.confidence_interval.high == pytest.approx(ci.high, abs=1e-12)
    assert res.confidence_interval.low <= res.statistic <= res.confidence_interval.high


# drawn markets may have no question with a net move (the statistic NaN, warned), and
# questions with events and no prices or the reverse (named, warned)
@pytest.mark.filterwarnings("ignore:market_checks:coherence.DegenerateDataWarning")
@pytest.mark.filterwarnings("ignore:market_checks:coherence.SkippedRecordsWarning")
@settings(max_examples=30)
@given(_markets(), st.randoms(use_true_random=False))
def test_market_checks_row_order_and_question_names(market, rnd):
    """Shuffled events and prices (events tied in time included) and questions renamed in
    reverse order give the same test, the same per-question table and the same pooled
    correlation; shuffled rows also the same event-agreement interval for the same rng."""
    ev, px = market
    a = coherence.market_checks(ev, px, n_resamples=30, rng=2)
    pe, pp = list(range(len(ev))), list(range(len(px)))
    rnd.shuffle(pe)
    rnd.shuffle(pp)
    b = coherence.market_checks(ev.iloc[pe], px.iloc[pp], n_resamples=30, rng=2)
    rename = {f"q{i}": f"z{9 - i}" for i in range(10)}
    c = coherence.market_checks(ev.assign(question=ev["question"].map(rename)),
                                px.assign(question=px["question"].map(rename)),
                                n_resamples=30, rng=2)
    ta = a.table.set_index("question").sort_index()
    back = {v: k for k, v in rename.items()}
    for other in (b, c):
        to = other.table.assign(question=other.table["question"].map(lambda q: back.get(q, q)))
        pd.testing.assert_frame_equal(to.set_index("question").sort_index(), ta,
                                      check_exact=False, rtol=1e-9, atol=1e-12)
        for name in ("statistic", "pvalue", "pooled_correlation", "event_agreement"):
            np.testing.assert_allclose(getattr(other, name), getattr(a, name), rtol=1e-9,
                                       atol=1e-12)
        assert other.n_eligible == a.n_eligible
    np.testing.assert_allclose(b.event_agreement_ci[:2], a.event_agreement_ci[:2],
                               rtol=1e-12, atol=1e-12)


@pytest.mark.parametrize("order", [[0, 1, 2], [2, 1, 0], [1, 2, 0], [2, 0, 1]])
def test_impacts_that_cancel_exactly_leave_a_question_out(order):
    """Regression: impacts 0.1 + 0.2 - 0.3 on one day sum to 5.6e-17 (or -5.6e-17 in
    another row order) in binary, so the question was counted as agreeing (or disagreeing)
    with the market while its net pressure is zero; and its pressure curve, 0 then 5.6e-17,
    made it eligible for the pooled correlation."""
    ev = pd.DataFrame({"question": "a", "date": ["2024-01-10"] * 3, "direction": [1, 1, -1],
                       "magnitude": [0.1, 0.2, 0.3], "confidence": 1.0}).iloc[order]
    px = pd.DataFrame({"question": "a", "date": ["2024-01-01", "2024-01-05", "2024-01-20"],
                       "price": [0.4, 0.5, 0.6]})
    with pytest.warns(coherence.DegenerateDataWarning, match="net direction"):
        res = coherence.market_checks(ev, px, n_resamples=5, rng=0)
    row = res.table.iloc[0]
    assert not row["direction_counted"] and not row["direction_agrees"]
    assert row["net_pressure"] == 0.0
    assert res.n_obs == 0 and math.isnan(res.pvalue)
    assert not row["eligible"] and math.isnan(res.pooled_correlation)


# --------------------------------------------------------------------------- turning points
@st.composite
def _series(draw: st.DrawFn) -> pd.DataFrame:
    """One market: 2..12 prices at hours (ties in time allowed), heaped prices."""
    n = draw(st.integers(2, 12))
    hours = draw(st.lists(st.integers(0, 24 * 8), min_size=n, max_size=n))
    prices = draw(st.lists(_price, min_size=n, max_size=n))
    t = pd.Timestamp("2024-01-01") + pd.to_timedelta(hours, unit="h")
    return pd.DataFrame({"date": t, "price": prices})


def _paper_by_hand(df: pd.DataFrame, min_change: float, window_days: float) -> list:
    """Observations with some strictly earlier observation within the window that differs
    by at least min_change (decimal arithmetic); a repeated (time, price) row is one."""
    w = pd.Timedelta(days=window_days)
    hits = []
    once = df.drop_duplicates(["date", "price"])
    for t, p in zip(once["date"], once["price"], strict=True):
        if any(t - w <= t2 < t and abs(_dec(p) - _dec(p2)) >= _dec(min_change)
               for t2, p2 in zip(df["date"], df["price"], strict=True)):
            hits.append((t, p))
    return sorted(hits)


@settings(max_examples=40)
@given(_series(), st.sampled_from([0.03, 0.05, 0.1]), st.sampled_from([1.0, 3.0]),
       st.randoms(use_true_random=False))
def test_turning_points_paper_matches_a_scan_and_ignores_row_order(df, min_change, window,
                                                                   rnd):
    """'paper': the points are those of a scan over every earlier observation, in exact
    decimals; shuffled rows, mirrored prices (1 - p) and a second market in the same table
    give the same points."""
    res = coherence.turning_points(df, min_change=min_change, window_days=window)
    got = sorted(zip(res["date"], res["price"], strict=True))
    assert got == _paper_by_hand(df, min_change, window)
    perm = list(range(len(df)))
    rnd.shuffle(perm)
    shuffled = coherence.turning_points(df.iloc[perm], min_change=min_change,
                                        window_days=window)
    assert sorted(zip(shuffled["date"], shuffled["price"], strict=True)) == got
    mirrored = coherence.turning_points(df.assign(price=1.0 - df["price"]),
                                        min_change=min_change, window_days=window)
    assert sorted(mirrored["date"]) == sorted(t for t, _ in got)
    two = pd.concat([df.assign(question="b"), df.assign(question="a", price=0.5)])
    both = coherence.turning_points(two.iloc[::-1], min_change=min_change,
                                    window_days=window, question="question")
    assert sorted(both.loc[both["question"] == "b", "date"]) == sorted(t for t, _ in got)
    assert (both["question"] == "a").sum() == 0


def test_turning_points_code_equal_swings_keep_the_earlier_in_both_mirrors():
    """A trough at 02:00 and a peak at 03:00, each a swing of 0.23 in decimals, an hour
    apart (merged): the earlier is kept. In floating point the swings differed by an ulp,
    one way for the prices and the other for their mirror (1 - p), which kept 02:00 for
    one and 03:00 for the other."""
    df = pd.DataFrame({"date": pd.date_range("2024-01-01", periods=5, freq="h"),
                       "price": [0.60, 0.50, 0.40, 0.58, 0.43]})
    for prices in (df, df.assign(price=1.0 - df["price"])):
        res = coherence.turning_points(prices, min_change=0.03, convention="code")
        assert list(res["date"]) == [pd.Timestamp("2024-01-01 02:00")]


@settings(max_examples=40)
@given(_series(), st.sampled_from([0.03, 0.05, 0.1]))
def test_turning_points_code_is_mirror_symmetric_and_follows_the_time_order(df, min_change):
    """'code': a reversal is a peak or a trough, so mirrored prices (1 - p) give the same
    dates; with distinct times, the rows' order does not matter; every point is a local
    extreme of its swing, at least min_change in total."""
    df = df.drop_duplicates("date")
    res = coherence.turning_points(df, min_change=min_change, convention="code")
    mirrored = coherence.turning_points(df.assign(price=1.0 - df["price"]),
                                        min_change=min_change, convention="code")
    assert list(mirrored["date"]) == list(res["date"])
    backwards = coherence.turning_points(df.iloc[::-1], min_change=min_change,
                                         convention="code")
    assert list(backwards["date"]) == list(res["date"])
    s = df.sort_values("date").reset_index(drop=True)
    n = len(s)
    w = min(5, max(2, (n - 1) // 3))
    for t in res["date"]:
        i = int(np.flatnonzero(s["date"] == t)[0])
        assert 0 < i < n - 1
        p = [_dec(v) for v in s["price"]]
        back, ahead = p[max(0, i - w):i], p[i + 1:i + 1 + w]
        assert abs(p[i] - back[0]) + abs(ahead[-1] - p[i]) >= _dec(min_change)
        assert p[i] >= max(back + ahead) or p[i] <= min(back + ahead)
