"""Hypothesis properties of the values of causal_pressure, market_alignment,
market_signal_metrics and hindsight_graph_quality: brute-force references written here
from the documented definitions (scans over every price, loops over every edge), symmetries
and invariance to the order of the rows.
"""

from __future__ import annotations

import functools
import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import event
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence
from tests._reference_bootstrap_t import fraction_interval_by_hand

from ._helpers import forecast_events
from ._helpers import hindsight

_T0 = pd.Timestamp("2024-01-01")


def _stamp(hours: int | None) -> str | None:
    return None if hours is None else (_T0 + pd.Timedelta(hours=hours)).isoformat()


def _shuffle(df: pd.DataFrame, rnd) -> pd.DataFrame:
    perm = list(range(len(df)))
    rnd.shuffle(perm)
    return df.iloc[perm]


# --------------------------------------------------------------------------- causal_pressure
_event_rows = st.lists(
    st.tuples(st.one_of(st.none(), st.integers(0, 30)), st.sampled_from([-1, 0, 1]),
              st.floats(0.0, 3.0), st.floats(0.0, 1.0)),
    min_size=1, max_size=12)


def _event_frame(rows) -> pd.DataFrame:
    return pd.DataFrame({"date": [_stamp(None if d is None else 24 * d) for d, *_ in rows],
                         "direction": [r[1] for r in rows], "magnitude": [r[2] for r in rows],
                         "confidence": [r[3] for r in rows]})


@settings(max_examples=40)
@given(_event_rows)
def test_causal_pressure_is_the_running_sum_in_time_order(rows):
    """Dated events sorted by date (ties in row order), impact d m c, pressure its running
    sum; undated rows left out."""
    out = coherence.causal_pressure(_event_frame(rows))
    dated = sorted((d, i, s * m * c) for i, (d, s, m, c) in enumerate(rows) if d is not None)
    assert len(out) == len(dated)
    assert list(out.index) == [i for _, i, _ in dated]
    running = 0.0
    for (d, _, imp), got_imp, got_p, when in zip(dated, out["impact"], out["pressure"],
                                                 out["date"], strict=True):
        running += imp
        assert got_imp == pytest.approx(imp, abs=1e-12)
        assert got_p == pytest.approx(running, abs=1e-9)
        assert when == _T0 + pd.Timedelta(days=d)


@settings(max_examples=30)
@given(_event_rows, st.randoms(use_true_random=False), st.floats(0.25, 4.0))
def test_causal_pressure_order_sign_and_scale(rows, rnd, k):
    """Shuffled rows give the same pressure at the end of each date; reversing every
    direction negates it, scaling every magnitude by k scales it by k."""
    df = _event_frame(rows)

    def at_dates(curve: pd.DataFrame) -> pd.Series:
        return curve.groupby("date")["pressure"].last()

    base = at_dates(coherence.causal_pressure(df))
    pd.testing.assert_series_equal(at_dates(coherence.causal_pressure(_shuffle(df, rnd))),
                                   base, atol=1e-9, rtol=0)
    pd.testing.assert_series_equal(
        at_dates(coherence.causal_pressure(df.assign(direction=-df["direction"]))),
        -base, atol=1e-9, rtol=0)
    pd.testing.assert_series_equal(
        at_dates(coherence.causal_pressure(df.assign(magnitude=k * df["magnitude"]))),
        k * base, atol=1e-9, rtol=1e-12)


# --------------------------------------------------------------------------- market_alignment
_price_hours = st.lists(st.integers(0, 120), min_size=6, max_size=14, unique=True)
_alignment_events = st.lists(
    st.tuples(st.one_of(st.none(), st.integers(0, 120)), st.sampled_from([-1, 0, 1, 1]),
              st.sampled_from([0.5, 1.0, 2.0]), st.sampled_from([0.5, 1.0])),
    min_size=3, max_size=8)


@st.composite
def _markets(draw):
    hours = draw(_price_hours)
    levels = draw(st.lists(st.integers(0, 100), min_size=len(hours), max_size=len(hours)))
    events = draw(_alignment_events)
    window = draw(st.sampled_from([1.0, 2.0, 3.0]))
    return hours, [v / 100 for v in levels], events, window


def _alignment_inputs(hours, levels, events):
    ev = pd.DataFrame({"date": [_stamp(h) for h, *_ in events],
                       "direction": [e[1] for e in events], "magnitude": [e[2] for e in events],
                       "confidence": [e[3] for e in events]})
    px = pd.DataFrame({"date": [_stamp(h) for h in hours], "price": levels})
    return ev, px


def _align(ev, px, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", coherence.DegenerateDataWarning)
        return coherence.market_alignment(ev, px, **kw)


def _binom_two_sided(k: int, n: int) -> float:
    """P(X <= min(k, n-k)) + P(X >= max(k, n-k)) for X ~ Bin(n, 1/2), by hand."""
    lo, hi = min(k, n - k), max(k, n - k)
    if lo == hi:
        return 1.0
    pmf = [math.comb(n, i) / 2**n for i in range(n + 1)]
    return min(1.0, sum(pmf[: lo + 1]) + sum(pmf[hi:]))


def _pearson(x: list[float], y: list[float]) -> float:
    mx, my = sum(x) / len(x), sum(y) / len(y)
    sxy = sum((a - mx) * (b - my) for a, b in zip(x, y, strict=True))
    sxx = sum((a - mx) ** 2 for a in x)
    syy = sum((b - my) ** 2 for b in y)
    return sxy / math.sqrt(sxx * syy)


@settings(max_examples=50)
@given(_markets(), st.sampled_from([0.0, 0.03, 0.1]))
def test_market_alignment_matches_a_scan_over_the_prices(market, min_move):
    """Per event: last price in [t - w, t), first in [t, t + w], counted when both exist,
    |move| >= min_move and impact != 0; the share of agreeing signs, its exact binomial
    p-value and a Clopper-Pearson interval that holds the share; the correlation of the
    pressure at each price time (events at or before it) with the price."""
    hours, levels, events, window = market
    ev, px = _alignment_inputs(hours, levels, events)
    res = _align(ev, px, window_days=window, min_move=min_move)
    w = 24 * window
    prices = sorted(zip(hours, levels, strict=True))
    dated = sorted((h, i, s * m * c) for i, (h, s, m, c) in enumerate(events) if h is not None)
    n = hits = 0
    for row, (h, _, imp) in zip(res.table.itertuples(index=False), dated, strict=True):
        before = [p for t, p in prices if h - w <= t < h]
        after = [p for t, p in prices if h <= t <= h + w]
        move = after[0] - before[-1] if before and after else math.nan
        # decided on the stated decimals: 0.42 - 0.32 (0.09999999999999998) is a move of 0.1
        counted = not math.isnan(move) and abs(move) >= min_move - 1e-12 and imp != 0
        agrees = counted and (move > 0) == (imp > 0) and move != 0
        assert row.impact == pytest.approx(imp, abs=1e-12)
        assert (math.isnan(row.move) and math.isnan(move)) or row.move == pytest.approx(move)
        assert (bool(row.counted), bool(row.agrees)) == (counted, agrees)
        n, hits = n + counted, hits + agrees
    assert len(res.table) == len(dated)
    assert res.n_obs == n
    event(f"events counted: {min(n, 2)}{'+' if n >= 2 else ''}")
    if n:
        assert res.statistic == pytest.approx(hits / n)
        assert res.pvalue == pytest.approx(_binom_two_sided(hits, n), rel=1e-9)
        ci = res.confidence_interval
        assert 0.0 <= ci.low <= res.statistic <= ci.high <= 1.0
    else:
        assert math.isnan(res.statistic) and math.isnan(res.pvalue)
    pressure = [sum(imp for h, _, imp in dated if h <= t) for t, _ in prices]
    price = [p for _, p in prices]
    spread = (len(prices) >= 2 and max(pressure) - min(pressure) > 1e-12
              and max(price) > min(price))
    if spread:
        assert res.correlation == pytest.approx(_pearson(pressure, price), abs=1e-9)
        assert -1.0 - 1e-12 <= res.correlation <= 1.0 + 1e-12
    else:
        assert math.isnan(res.correlation)


@settings(max_examples=30)
@given(_markets(), st.randoms(use_true_random=False))
def test_market_alignment_symmetries_and_row_order(market, rnd):
    """Reversing every direction and reading the market for NO (1 - price) changes
    nothing; reversing the directions alone turns the share a into 1 - a and negates the
    correlation; shuffled rows change nothing."""
    hours, levels, events, window = market
    ev, px = _alignment_inputs(hours, levels, events)
    a = _align(ev, px, window_days=window)
    mirror = _align(ev.assign(direction=-ev["direction"]), px.assign(price=1 - px["price"]),
                    window_days=window)
    flipped = _align(ev.assign(direction=-ev["direction"]), px, window_days=window)
    shuffled = _align(_shuffle(ev, rnd), _shuffle(px, rnd), window_days=window)

    def same(x: float, y: float, tol: float = 1e-9) -> bool:
        return (math.isnan(x) and math.isnan(y)) or abs(x - y) <= tol

    for other in (mirror, shuffled):
        assert other.n_obs == a.n_obs
        assert same(other.statistic, a.statistic) and same(other.pvalue, a.pvalue)
        assert same(other.confidence_interval.low, a.confidence_interval.low)
        assert same(other.correlation, a.correlation, 1e-7)
    assert flipped.n_obs == a.n_obs
    assert same(flipped.statistic, 1 - a.statistic) and same(flipped.pvalue, a.pvalue)
    assert same(flipped.correlation, -a.correlation, 1e-7)


# --------------------------------------------------------------------------- market signals
@functools.cache
def _reasoning():
    """Forecast graphs of two models on two questions, matched against the helpers'
    hindsight graph (events h1, h2, h3 and the outcome, on questions 'q' and 'r')."""
    hind = hindsight()
    hind = pd.concat([hind, hind.assign(question="r")], ignore_index=True)
    fe = forecast_events()
    fe = pd.concat([fe, fe.assign(question="r").iloc[[0, 1, 3]]], ignore_index=True)
    fe = fe.assign(event=[f"f{i}" for i in range(len(fe))])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return coherence.reasoning_graph_metrics(fe, hind, gates=False, n_resamples=5, rng=0)


_EVENTS = [(q, e) for q in ("q", "r") for e in ("h1", "h2", "h3", "out")]


@st.composite
def _signal_inputs(draw):
    recs = []
    # distinct magnitudes, or two values only: records of one event then tie on |impact|
    mags = iter(draw(st.one_of(
        st.lists(st.integers(1, 1000), min_size=16, max_size=16, unique=True),
        st.lists(st.sampled_from([500, 1000]), min_size=16, max_size=16))))
    for q, e in _EVENTS:
        for _ in range(draw(st.integers(1, 2))):
            recs.append({"question": q, "event": e,
                         "date": _stamp(draw(st.one_of(st.none(), st.integers(0, 120)))),
                         "direction": draw(st.sampled_from([-1, 0, 1])),
                         "magnitude": next(mags) / 1000, "confidence": 1.0,
                         "is_outcome": e == "out"})
    hev = pd.DataFrame(recs, columns=["question", "event", "date", "direction", "magnitude",
                                      "confidence", "is_outcome"])
    prices = []
    for q in ("q", "r"):
        hours = draw(st.lists(st.integers(0, 120), min_size=6, max_size=12, unique=True))
        prices += [{"question": q, "date": _stamp(h), "price": draw(st.integers(0, 20)) / 20}
                   for h in hours]
    px = pd.DataFrame(prices, columns=["question", "date", "price"])
    return hev, px, draw(st.sampled_from([1.0, 3.0]))


def _signals_by_hand(hev, px, window, min_move=0.03, min_change=0.05):
    """Market signals {(q, e): near_turning_point} from the Notes' definition, by scans."""
    w = pd.Timedelta(days=window)
    out = {}
    for (q, e), g in hev.loc[~hev["is_outcome"] & hev["date"].notna()].groupby(
            ["question", "event"]):
        imp = (g["direction"] * g["magnitude"] * g["confidence"]).to_numpy()
        top = np.abs(imp) == np.abs(imp).max()
        if imp[top][0] == 0 or len(set(np.sign(imp[top]))) > 1:
            continue  # no impact, or the largest records disagree in sign
        sign = np.sign(imp[top][0])
        t = min(pd.Timestamp(d) for d in g["date"].to_numpy()[top])  # the earliest
        p = sorted((pd.Timestamp(d), v) for d, v in
                   px.loc[px["question"] == q, ["date", "price"]].itertuples(index=False))
        before = [v for s, v in p if t - w <= s < t]
        after = [v for s, v in p if t <= s <= t + w]
        if not (before and after):
            continue
        move = after[0] - before[-1]
        if abs(move) < min_move or (move > 0) != (sign > 0):
            continue
        turning = [s for i, (s, v) in enumerate(p)
                   if any(s - w <= s2 < s and abs(v - v2) >= min_change - 1e-12
                          for s2, v2 in p[:i])]
        out[(q, e)] = any(abs(s - t) <= w for s in turning)
    return out


def _signal_metrics(hev, px, window, rng=0):
    """The metrics; a SkippedRecordsWarning exactly when a non-outcome record has no date
    (it is left out), a DegenerateDataWarning exactly when no forecast has a signal (the
    statistic NaN), and no other warning."""
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = coherence.market_signal_metrics(_reasoning(), hev, px, window_days=window,
                                              n_resamples=20, rng=rng)
    kinds = [w.category for w in caught]
    undated = (hev["date"].isna() & ~hev["is_outcome"].astype(bool)).any()
    assert kinds == ([coherence.SkippedRecordsWarning] if undated else []) + (
        [coherence.DegenerateDataWarning] if math.isnan(res.statistic) else [])
    return res


@settings(max_examples=40)
@given(_signal_inputs())
def test_market_signal_metrics_match_the_definition(inputs):
    hev, px, window = inputs
    res = _signal_metrics(hev, px, window)
    signals = _signals_by_hand(hev, px, window)
    got = {(r.question, r.event): bool(r.near_turning_point)
           for r in res.signal_events.itertuples(index=False)}
    assert got == signals
    event(f"signals: {len(signals)}, near a turning point: {sum(signals.values())}")
    reasoning = _reasoning()
    m = reasoning.matches
    recalls = []
    for fc, row in zip(reasoning.table.itertuples(index=False),
                       res.table.itertuples(index=False), strict=True):
        hit = set(m.loc[(m["model"] == fc.model) & (m["question"] == fc.question),
                        "hindsight_event"])
        ids = {e for (q, e) in signals if q == fc.question}
        tids = {e for (q, e), near in signals.items() if q == fc.question and near}
        nf = fc.n_forecast_events
        assert (row.model, row.question) == (fc.model, fc.question)
        assert (row.n_signal_events, row.n_signal_matched) == (len(ids), len(ids & hit))
        assert (row.n_turning_events, row.n_turning_matched) == (len(tids), len(tids & hit))
        for value, num, den in ((row.signal_recall, ids & hit, len(ids)),
                                (row.signal_precision, ids & hit, nf),
                                (row.turning_recall, tids & hit, len(tids)),
                                (row.turning_precision, tids & hit, nf)):
            if den:
                assert value == pytest.approx(len(num) / den)
                assert 0.0 <= value <= 1.0
            else:
                assert math.isnan(value)
        if ids:
            recalls.append(len(ids & hit) / len(ids))
    assert res.n_obs == len(recalls)
    if recalls:
        assert res.statistic == pytest.approx(sum(recalls) / len(recalls))
        ci = res.confidence_interval
        # Wilson's interval of a mean of fractions over questions, by hand
        ref = fraction_interval_by_hand(res.table["signal_recall"].to_numpy(dtype=float),
                                        res.table["question"].to_numpy(dtype=object),
                                        ci.confidence_level)
        np.testing.assert_allclose((ci.low, ci.high), ref, rtol=1e-9, atol=1e-12)
        assert 0.0 <= ci.low <= res.statistic <= ci.high <= 1.0
    else:
        assert math.isnan(res.statistic)


@settings(max_examples=25)
@given(_signal_inputs(), st.randoms(use_true_random=False))
def test_market_signal_metrics_mirror_and_row_order(inputs, rnd):
    """Every direction reversed with the market read for NO (1 - price), or the rows of
    both tables shuffled: the same signals, table, statistic and (same rng) interval."""
    hev, px, window = inputs
    a = _signal_metrics(hev, px, window, rng=4)
    mirror = _signal_metrics(hev.assign(direction=-hev["direction"]),
                             px.assign(price=1 - px["price"]), window, rng=4)
    shuffled = _signal_metrics(_shuffle(hev, rnd), _shuffle(px, rnd), window, rng=4)
    key = ["question", "event"]
    for other in (mirror, shuffled):
        pd.testing.assert_frame_equal(other.table, a.table)
        sa = a.signal_events.sort_values(key).reset_index(drop=True)
        so = other.signal_events.sort_values(key).reset_index(drop=True)
        pd.testing.assert_frame_equal(so[[*key, "date", "near_turning_point"]],
                                      sa[[*key, "date", "near_turning_point"]])
        for x, y in ((other.statistic, a.statistic),
                     (other.confidence_interval.low, a.confidence_interval.low),
                     (other.confidence_interval.high, a.confidence_interval.high)):
            assert (math.isnan(x) and math.isnan(y)) or x == pytest.approx(y, abs=1e-12)


# --------------------------------------------------------------------------- graph quality
_NODES = ["e0", "e1", "e2", "e3", "e4"]


@st.composite
def _graphs(draw):
    """Events and edges drawn by a seeded generator (hypothesis' own draws of small lists
    repeat their first element, which gave graphs of depth 0 or 1 only)."""
    gen = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    n_ev, n_ed = draw(st.integers(0, 15)), draw(st.integers(0, 20))
    n_ev, n_ed = (n_ev + 6) % 16, (n_ed + 10) % 21  # mostly larger graphs, still some empty
    sources = [f"s{i}" for i in range(6)]
    events = [(str(gen.choice(["q1", "q1", "q1", "q2", "q3"])), str(gen.choice(_NODES)),
               [str(x) for x in gen.choice(sources, size=gen.integers(0, 4))],
               [None, "accepted", "rejected", " Rejected "][gen.choice(4, p=[.5, .3, .1, .1])])
              for _ in range(n_ev)]
    events += [("q1", e, [], None) for e in _NODES if gen.uniform() < 0.7]  # a denser q1
    ends = [*_NODES, "x"]
    edges = [(str(gen.choice(["q1", "q1", "q1", "q2", "q4"])), str(gen.choice(ends)),
              str(gen.choice(ends)), float(gen.choice([math.nan, 0.3, 0.6, 0.9, 0.9, 0.9])),
              float(gen.choice([math.nan, 0.1, 0.3, 2.0, 2.0, 2.0])))
             for _ in range(n_ed)]
    return events, edges


_gates = st.tuples(st.integers(0, 4), st.integers(0, 5), st.integers(0, 6), st.integers(0, 3))


def _graph_frames(events, edges):
    ev = pd.DataFrame(events, columns=["question", "event", "sources", "review_status"])
    ev["sources"] = ev["sources"].map(list)
    ed = pd.DataFrame(edges, columns=["question", "source", "target", "confidence",
                                      "strength"])
    return ev, ed


def _depth_by_hand(edges: set[tuple[str, str]]) -> int:
    """Longest walk v0 -> ... -> vk with v0..v(k-1) distinct (the last step may close a
    cycle): every ordered tuple of distinct nodes tried."""
    nodes = sorted({n for e in edges for n in e})
    best = 0
    for k in range(1, len(nodes) + 1):
        for walk in itertools.permutations(nodes, k):
            if all((a, b) in edges for a, b in itertools.pairwise(walk)):
                best = max(best, k - 1 + any(s == walk[-1] for s, _ in edges))
    return best


@settings(max_examples=50)
@given(_graphs(), _gates)
def test_hindsight_graph_quality_matches_hand_counts(graph, gates):
    events, edges = graph
    min_hops, min_nodes, min_sources, min_edges = gates
    ev, ed = _graph_frames(events, edges)
    rep = coherence.hindsight_graph_quality(ev, ed, min_hops=min_hops, min_nodes=min_nodes,
                                            min_sources=min_sources, min_edges=min_edges)
    questions = {q for q, *_ in events} | {q for q, *_ in edges}
    assert set(rep.table["question"]) == questions and len(rep.table) == len(questions)
    for row in rep.table.itertuples(index=False):
        q = row.question
        recs = [(e, s, st_) for qq, e, s, st_ in events if qq == q]
        kept = [(e, s) for e, s, st_ in recs if st_ is None or st_.strip().lower() != "rejected"]
        nodes = {e for e, _ in kept}
        rejected = {e for e, *_ in recs} - nodes
        srcs = {x for _, s in kept for x in s}
        given_e = [e for e in edges if e[0] == q]
        dangling = [e for e in given_e if e[1] not in nodes or e[2] not in nodes]
        below = [e for e in given_e if e not in dangling
                 and not (e[3] >= 0.6 and e[4] >= 0.3)]  # NaN compares False: not kept
        kept_edges = [e for e in given_e if e not in dangling and e not in below]
        hops = _depth_by_hand({(s, t) for _, s, t, *_ in kept_edges})
        event(f"hops: {hops}")
        built = bool(recs)
        assert (row.built, row.n_nodes, row.n_rejected, row.n_sources) == (
            built, len(nodes), len(rejected), len(srcs))
        assert (row.n_edges, row.n_edges_dangling, row.n_edges_below_gate,
                row.n_edges_kept, row.hops) == (len(given_e), len(dangling), len(below),
                                                 len(kept_edges), hops)
        # the edge gate counts distinct (source, target) pairs; n_edges_kept counts rows
        distinct = {(s, t) for _, s, t, *_ in kept_edges}
        ok = built and hops >= min_hops and len(nodes) >= min_nodes and (
            len(srcs) >= min_sources and len(distinct) >= min_edges)
        assert row.passes == ok and (row.reasons == "") == ok
    ex = rep.excluded.set_index("reason")["n"]
    assert ex["any"] == rep.n_excluded == int((~rep.table["passes"]).sum())
    assert ex["not built"] == int((~rep.table["built"]).sum())
    assert max(ex.drop(["any", "not built"]).tolist(), default=0) <= ex["any"]
    assert set(rep.passed) == set(rep.table.loc[rep.table["passes"], "question"])


@settings(max_examples=30)
@given(_graphs(), st.randoms(use_true_random=False))
def test_hindsight_graph_quality_row_order_and_relabelling(graph, rnd):
    """Shuffled rows, or events renamed by a bijection on both tables, give the same table
    (rows matched by question)."""
    events, edges = graph
    ev, ed = _graph_frames(events, edges)
    kw = {"min_hops": 1, "min_nodes": 2, "min_sources": 1}
    a = coherence.hindsight_graph_quality(ev, ed, **kw).table.set_index("question")
    b = coherence.hindsight_graph_quality(_shuffle(ev, rnd), _shuffle(ed, rnd),
                                          **kw).table.set_index("question")
    rename = dict(zip([*_NODES, "x"], ["z9", "a1", "m5", "b2", "y0", "c3"], strict=True))
    c = coherence.hindsight_graph_quality(
        ev.assign(event=ev["event"].map(rename)),
        ed.assign(source=ed["source"].map(rename), target=ed["target"].map(rename)),
        **kw).table.set_index("question")
    pd.testing.assert_frame_equal(b.loc[a.index], a)
    pd.testing.assert_frame_equal(c.loc[a.index], a)


def test_graph_depth_by_hand_examples():
    """The reference itself: a chain, a diamond, a 2-cycle and a self-loop."""
    assert _depth_by_hand({("a", "b"), ("b", "c")}) == 2
    assert _depth_by_hand({("a", "b"), ("b", "d"), ("a", "c"), ("c", "d")}) == 2
    assert _depth_by_hand({("a", "b"), ("b", "a")}) == 2
    assert _depth_by_hand({("a", "a")}) == 1
    assert _depth_by_hand(set()) == 0


@settings(max_examples=60)
@given(st.lists(st.tuples(st.sampled_from(_NODES), st.sampled_from(_NODES)), max_size=9))
def test_graph_depth_matches_the_longest_walk_by_hand(pairs):
    """The hops of the quality gates, on acyclic and cyclic graphs alike."""
    from coherence._scoring._graph_quality import graph_depth

    assert graph_depth(pairs) == _depth_by_hand(set(pairs))


@pytest.mark.parametrize(("before", "after"), [(0.40, 0.43), (0.55, 0.58), (0.30, 0.33),
                                               (0.43, 0.40), (0.58, 0.55)])
def test_a_move_of_exactly_min_move_counts_whatever_its_binary_rounding(before, after):
    """Regression: 0.43 - 0.40 is 0.0299...97 in binary, so a 3-cent move was not counted
    at min_move=0.03 while 0.33 - 0.30 (0.0300...03) was; both count now, in
    market_alignment, market_checks (net and event-local moves) and market signals."""
    sign = 1 if after > before else -1
    ev = pd.DataFrame({"question": "q", "event": "e", "date": ["2024-01-05"],
                       "direction": [sign], "magnitude": [1.0], "confidence": [1.0]})
    px = pd.DataFrame({"question": "q", "date": ["2024-01-04", "2024-01-06"],
                       "price": [before, after]})
    res = coherence.market_alignment(ev, px[["date", "price"]], min_move=0.03)
    assert (res.n_obs, res.statistic) == (1, 1.0)
    # two prices: no pooled correlation, said
    with pytest.warns(coherence.DegenerateDataWarning, match="enters: pooled correlation"):
        checks = coherence.market_checks(ev, px, min_move=0.03, n_resamples=5, rng=0)
    assert (checks.n_obs, checks.n_events_counted) == (1, 1)
    # an undated forecast event: nothing matches under the paper's date gate (warned)
    with pytest.warns(coherence.DegenerateDataWarning, match="no row of forecast_events"):
        reasoning = coherence.reasoning_graph_metrics(
            pd.DataFrame({"model": ["m"], "question": ["q"], "event": ["f"], "title": ["E"],
                          "date": [None]}),
            ev.assign(title="E"), gates=False, n_resamples=5, rng=0)
    signals = coherence.market_signal_metrics(reasoning, ev, px, min_move=0.03,
                                              n_resamples=5, rng=0)
    assert list(signals.signal_events["event"]) == ["e"]
