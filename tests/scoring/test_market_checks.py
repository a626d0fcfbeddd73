"""market_checks, turning_points, local_price_moves and market_signal_metrics."""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence
from coherence._scoring._market_checks import local_price_moves
from tests._reference_bootstrap_t import fraction_interval_by_hand


def events() -> pd.DataFrame:
    return pd.DataFrame({
        "question": ["A", "A", "A", "B", "C"],
        "date": ["2024-01-05", "2024-01-15", None, "2024-01-10", "2024-01-10"],
        "direction": [1, -1, 1, 1, 1], "magnitude": [1.0, 0.5, 1.0, 1.0, 1.0],
        "confidence": [1.0, 1.0, 1.0, 0.8, 1.0]})


def prices() -> pd.DataFrame:
    return pd.DataFrame({
        "question": ["A"] * 6 + ["B"] * 4 + ["C"] * 2,
        "date": ["2024-01-01", "2024-01-04", "2024-01-06", "2024-01-14", "2024-01-16",
                 "2024-01-31", "2024-01-01", "2024-01-09", "2024-01-11", "2024-01-31",
                 "2024-01-01", "2024-01-31"],
        "price": [0.40, 0.42, 0.55, 0.56, 0.54, 0.70, 0.60, 0.60, 0.50, 0.45, 0.50, 0.51]})


#: the warning of a NaN pooled correlation (no question eligible), the other checks defined
NO_CORRELATION = r"no question or event enters: pooled correlation \(too few prices"

#: the warning of events() 's undated row (left out of every check, counted)
UNDATED = "1 event\\(s\\) have no 'date' \\(rows 2; questions 'A'\\): they enter no check"


def test_market_checks_hand_computed():
    with pytest.warns(coherence.SkippedRecordsWarning, match=UNDATED):
        res = coherence.market_checks(events(), prices(), n_resamples=50, rng=0)
    t = res.table.set_index("question")
    assert t.loc["A", "net_pressure"] == pytest.approx(0.5)
    assert t.loc["A", "net_move"] == pytest.approx(0.30)
    assert t.loc["A", "direction_agrees"] and not t.loc["B", "direction_agrees"]
    assert not t.loc["C", "direction_counted"]                # |0.01| < 0.03
    assert res.statistic == 0.5 and res.n_obs == 2 and res.pvalue == 1.0
    assert res.n_direction_excluded == 1 and res.n_undated_events == 1
    # A: +0.13 after the first event agrees, -0.02 after the second is too small;
    # B: -0.10 against a positive impact; C: no price before its event
    assert (t.loc["A", "n_counted"], t.loc["A", "n_agree"]) == (1, 1)
    assert (t.loc["B", "n_counted"], t.loc["B", "n_agree"]) == (1, 0)
    assert res.event_agreement == 0.5 and res.n_events_counted == 2
    assert list(t["eligible"]) == [True, True, False] and res.n_eligible == 2
    # Wilson's interval of the events' 0/1 agreement over questions, from the counts
    # (one counted event each: A's agrees, B's does not)
    ref = fraction_interval_by_hand(np.array([1.0, 0.0]), np.array(["A", "B"], dtype=object),
                                    0.95)
    np.testing.assert_allclose(res.event_agreement_ci[:2], ref, rtol=1e-9)


def test_pooled_correlation_is_the_weighted_mean_of_within_question_correlations():
    with pytest.warns(coherence.SkippedRecordsWarning, match=UNDATED):
        res = coherence.market_checks(events(), prices(), n_resamples=10, rng=0)
    t = res.table.set_index("question")
    pa = np.array([0, 0, 1, 1, 0.5, 0.5])
    ya = prices()["price"].to_numpy()[:6]
    pb = np.array([0, 0, 0.8, 0.8])
    yb = prices()["price"].to_numpy()[6:10]
    ra, rb = np.corrcoef(pa, ya)[0, 1], np.corrcoef(pb, yb)[0, 1]
    assert t.loc["A", "correlation"] == pytest.approx(ra)
    assert res.pooled_correlation == pytest.approx((6 * ra + 4 * rb) / 10)


def test_market_checks_validation_and_degenerate():
    with pytest.raises(ValueError, match=r"Column 'price'.*\[0, 1\]"):
        coherence.market_checks(events(), prices().assign(price=1.5))
    with pytest.raises(ValueError, match="column 'question'"):
        coherence.market_checks(events().drop(columns="question"), prices())
    with pytest.raises(ValueError, match="'convention' parameter"):
        coherence.market_checks(events(), prices(), convention="both")
    # two prices of one market at one time (the net move and the windows would depend on
    # the rows' order); another market's price at that time is not a clash
    two = pd.concat([prices(), prices().iloc[[1]].assign(price=0.5)], ignore_index=True)
    with pytest.raises(ValueError, match=r"Column 'price'.*same on every row of a "
                       r"'question' and 'date' value.*\('A', Timestamp\('2024-01-04"):
        coherence.market_checks(events(), two)
    with pytest.raises(ValueError, match=r"Column 'price'"):
        coherence.turning_points(two, question="question", convention="code")
    coherence.turning_points(two, question="question")  # 'paper': tied times have no order
    aware = prices().assign(date=prices()["date"] + "T00:00Z")
    with pytest.raises(ValueError, match="timezone-aware or both naive"):
        coherence.market_checks(events(), aware)
    with pytest.warns(coherence.DegenerateDataWarning,
                      match="net direction.*pooled correlation, event agreement"), \
            pytest.warns(coherence.SkippedRecordsWarning, match=UNDATED):
        flat = coherence.market_checks(events(), prices().assign(price=0.5), n_resamples=10,
                                       rng=0)
    assert math.isnan(flat.statistic) and flat.n_eligible == 0
    assert math.isnan(flat.pooled_correlation) and math.isnan(flat.event_agreement)


def test_questions_in_one_table_only_are_named():
    # 'D' has a dated event and no price, 'E' prices and no event: both were kept in the
    # table and counted in n_direction_excluded (3, with C's small move) without a word,
    # as were the undated event's row; the figures are unchanged (statistic 0.5 over A, B)
    ev = pd.concat([events(), events().iloc[[4]].assign(question="D")], ignore_index=True)
    px = pd.concat([prices(), prices().iloc[[10, 11]].assign(question="E", price=[0.3, 0.6])],
                   ignore_index=True)
    with pytest.warns(coherence.SkippedRecordsWarning, match=UNDATED), \
            pytest.warns(coherence.SkippedRecordsWarning,
                         match="1 question\\(s\\) have dated events but no prices \\('D'\\): "
                               "they enter no check \\(counted in n_direction_excluded\\); "
                               "check that the events and the prices use the same 'question'"), \
            pytest.warns(coherence.SkippedRecordsWarning,
                         match="1 question\\(s\\) have prices but no dated event \\('E'\\)"):
        res = coherence.market_checks(ev, px, n_resamples=10, rng=0)
    t = res.table.set_index("question")
    assert (t.loc["D", "n_prices"], t.loc["E", "n_events"]) == (0, 0)
    assert res.n_direction_excluded == 3 and res.n_undated_events == 1
    assert res.statistic == 0.5 and res.n_obs == 2


def test_undated_events_named_by_row_and_question():
    # a question whose only event has no date is a question with prices and no dated event
    ev = events().assign(date=["2024-01-05", "2024-01-15", None, "2024-01-10", ""])
    ev.index = [f"e{i}" for i in range(5)]
    with pytest.warns(coherence.SkippedRecordsWarning,
                      match="2 event\\(s\\) have no 'date' \\(rows 'e2', 'e4'; questions 'A', "
                            "'C'\\).*counted in n_undated_events"), \
            pytest.warns(coherence.SkippedRecordsWarning, match="no dated event \\('C'\\)"):
        res = coherence.market_checks(ev, prices(), n_resamples=10, rng=0)
    assert res.n_undated_events == 2


def test_local_moves_conventions():
    t = np.array(["2024-01-04", "2024-01-05", "2024-01-07"], dtype="datetime64[ns]")
    p = np.array([0.40, 0.50, 0.60])
    ev = np.array(["2024-01-05"], dtype="datetime64[ns]")
    w = int(3 * 86_400e9)
    assert local_price_moves(ev, t, p, w)[0] == pytest.approx(0.10)      # 0.50 - 0.40
    assert local_price_moves(ev, t, p, w, convention="code")[0] == pytest.approx(0.0)


def _brute_turning(days: np.ndarray, p: np.ndarray, change: float, window: float):
    return [i for i in range(len(days))
            if any(days[i] - window <= days[j] < days[i] and abs(p[i] - p[j]) >= change - 1e-12
                   for j in range(len(days)))]


@given(st.lists(st.tuples(st.integers(0, 30), st.floats(0, 1)), min_size=1, max_size=20),
       st.floats(0.01, 0.5), st.integers(1, 5), st.randoms(use_true_random=False))
def test_paper_turning_points_match_brute_force(rows, change, window, shuffle):
    """Days may repeat: an observation at the same time is not earlier (row order free);
    a repeated (time, price) row is one price."""
    rows = sorted(rows)
    days = np.array([r[0] for r in rows], dtype=float)
    p = np.array([r[1] for r in rows])
    px = pd.DataFrame({"date": pd.Timestamp("2024-01-01") + pd.to_timedelta(days, unit="D"),
                       "price": p})
    once = px.drop_duplicates().reset_index(drop=True)
    expected = once.iloc[_brute_turning(days[~px.duplicated().to_numpy()],
                                        once["price"].to_numpy(), change, window)]
    order = list(range(len(px)))
    shuffle.shuffle(order)
    for table in (px, px.iloc[order]):
        got = coherence.turning_points(table, min_change=change, window_days=window)
        assert sorted(zip(got["date"], got["price"], strict=True)) == sorted(
            zip(expected["date"], expected["price"], strict=True))


def test_code_turning_points_are_reversals():
    px = pd.DataFrame({"date": pd.date_range("2024-01-01", periods=7, freq="D"),
                       "price": [0.4, 0.5, 0.6, 0.5, 0.4, 0.45, 0.5]})
    got = coherence.turning_points(px, convention="code")
    assert [d.day for d in got["date"]] == [3, 5]        # the peak and the trough
    mono = px.assign(price=np.linspace(0.1, 0.9, 7))
    assert len(coherence.turning_points(mono, convention="code")) == 0
    assert len(coherence.turning_points(mono)) == 7 - 1  # the paper's rule: every move
    several = pd.concat([px.assign(q="a"), mono.assign(q="b")], ignore_index=True)
    out = coherence.turning_points(several, question="q", convention="code")
    assert list(out["question"]) == ["a", "a"]


def _signal_inputs(fe: pd.DataFrame, hind: pd.DataFrame) -> tuple[Any, pd.DataFrame]:
    """The reasoning result of one question's forecast, and four prices that turn up on
    2024-01-06: market_signal_metrics' inputs."""
    px = pd.DataFrame({"question": ["q"] * 4,
                       "date": ["2024-01-04", "2024-01-06", "2024-01-09", "2024-01-11"],
                       "price": [0.40, 0.55, 0.55, 0.60]})
    reasoning = coherence.reasoning_graph_metrics(fe, hind, gates=False, n_resamples=10,
                                                  rng=0)
    return reasoning, px


def test_market_signal_metrics_hand_computed():
    hind = pd.DataFrame({
        "question": ["q", "q"], "event": ["e1", "e2"],
        "title": ["Central bank raises interest rates", "Dock workers strike"],
        "date": ["2024-01-05", "2024-01-10"], "direction": [1, -1],
        "magnitude": [0.9, 0.5], "confidence": [1.0, 1.0]})
    fe = pd.DataFrame({"model": ["m", "m"], "question": ["q", "q"], "event": ["f1", "f2"],
                       "title": ["Central bank raises interest rates", "Weather"],
                       "date": ["2024-01-05", None]})
    reasoning, px = _signal_inputs(fe, hind)
    res = coherence.market_signal_metrics(reasoning, hind, px, n_resamples=10, rng=0)
    row = res.table.iloc[0]
    # e1: +0.15 with a positive impact (a signal, 1 day from the turning point of
    # 2024-01-06); e2: +0.05 against a negative impact (not a signal)
    assert list(res.signal_events["event"]) == ["e1"]
    assert bool(res.signal_events["near_turning_point"].iloc[0])
    assert res.signal_events["n_undated_records"].tolist() == [0]
    assert row["n_undated_records"] == 0
    assert (row["n_signal_events"], row["n_signal_matched"]) == (1, 1)
    assert row["signal_recall"] == 1.0 and row["signal_precision"] == 0.5
    assert row["turning_recall"] == 1.0 and row["turning_precision"] == 0.5
    assert res.statistic == 1.0
    with pytest.raises(TypeError, match="ReasoningGraphResult"):
        coherence.market_signal_metrics(res, hind, px)


# drawn paths may move less than min_move overall (the statistic NaN, warned)
@pytest.mark.filterwarnings("ignore:market_checks:coherence.DegenerateDataWarning")
@settings(max_examples=20)
@given(st.lists(st.tuples(st.integers(0, 20), st.sampled_from([-1, 1]), st.floats(0.1, 1)),
                min_size=1, max_size=8),
       st.lists(st.floats(0.05, 0.95), min_size=21, max_size=21))
def test_flipping_every_direction_flips_the_agreements(evs, path):
    """Reversing every event's direction turns agreement a into 1 - a, for the net
    direction and the event-local checks alike; the counts do not change."""
    ev = pd.DataFrame({"question": "q",
                       "date": [(pd.Timestamp("2024-01-01") + pd.Timedelta(days=d)).isoformat()
                                for d, _, _ in evs],
                       "direction": [s for _, s, _ in evs], "magnitude": [m for _, _, m in evs],
                       "confidence": 1.0})
    px = pd.DataFrame({"question": "q", "date": pd.date_range("2024-01-01", periods=21,
                                                             freq="D").astype(str),
                       "price": path})
    a = coherence.market_checks(ev, px, n_resamples=5, rng=0)
    b = coherence.market_checks(ev.assign(direction=-ev["direction"]), px, n_resamples=5,
                                rng=0)
    assert a.n_obs == b.n_obs and a.n_events_counted == b.n_events_counted
    if a.n_obs:
        assert b.statistic == pytest.approx(1 - a.statistic)
    if a.n_events_counted:
        assert b.event_agreement == pytest.approx(1 - a.event_agreement)
    assert b.pooled_correlation == pytest.approx(-a.pooled_correlation, nan_ok=True)


def test_turning_points_of_several_markets_without_question_raise():
    """Prices of two markets with question=None were one series: a step from one market's
    price to the other's was read as a turning point (six against five here: r's 0.5 on
    2024-01-06, 0.1 above q's 0.4 three days before, while r had not moved)."""
    px = pd.DataFrame({"question": ["q"] * 4 + ["r"] * 4,
                       "date": ["2024-01-01", "2024-01-03", "2024-01-06", "2024-01-08"] * 2,
                       "price": [0.3, 0.4, 0.5, 0.6, 0.6, 0.5, 0.5, 0.4]})
    with pytest.raises(ValueError, match=r"'question' parameter of turning_points.*"
                                         r"2 markets in 'question'"):
        coherence.turning_points(px)
    one = coherence.turning_points(px.loc[px["question"] == "q"])  # one market: one series
    each = coherence.turning_points(px, question="question")
    assert one["date"].tolist() == each.loc[each["question"] == "q", "date"].tolist()


def test_aware_dates_of_turning_points_and_signals_come_back_aware_in_utc():
    hind = pd.DataFrame({"question": ["q"], "event": ["e1"], "title": ["Rates rise"],
                         "date": ["2024-01-05T00:00+00:00"], "direction": [1],
                         "magnitude": [0.9], "confidence": [1.0]})
    fe = pd.DataFrame({"model": ["m"], "question": ["q"], "event": ["f1"],
                       "title": ["Rates rise"], "date": ["2024-01-05T00:00+00:00"]})
    px = pd.DataFrame({"question": ["q"] * 3, "price": [0.40, 0.55, 0.55],
                       "date": ["2024-01-04T00:00-05:00", "2024-01-05T20:00-05:00",
                                "2024-01-09T00:00-05:00"]})
    tps = coherence.turning_points(px, question="question")
    assert list(tps["date"]) == [pd.Timestamp("2024-01-06T01:00Z")]
    reasoning = coherence.reasoning_graph_metrics(fe, hind, gates=False, n_resamples=10,
                                                  rng=0)
    res = coherence.market_signal_metrics(reasoning, hind, px, n_resamples=10, rng=0)
    assert list(res.signal_events["date"]) == [pd.Timestamp("2024-01-05T00:00Z")]
    assert coherence.turning_points(px.assign(date=["2024-01-04", "2024-01-06",
                                                    "2024-01-09"]))["date"].dt.tz is None


def test_a_repeated_price_row_is_one_price():
    """A price row given twice (as a concatenated export gives it) weighed twice in the
    correlations and n_prices, and listed a turning point twice."""
    ev = pd.DataFrame({"question": ["q", "q"], "date": ["2024-01-05", "2024-01-09"],
                       "direction": [1, -1], "magnitude": [1.0, 0.5],
                       "confidence": [1.0, 1.0]})
    px = pd.DataFrame({"question": ["q"] * 5, "price": [0.40, 0.55, 0.50, 0.45, 0.47],
                       "date": ["2024-01-04", "2024-01-06", "2024-01-08", "2024-01-10",
                                "2024-01-12"]})
    twice = pd.concat([px, px.iloc[[0, 0, 1]]])
    want, got = coherence.market_checks(ev, px, rng=0), coherence.market_checks(ev, twice, rng=0)
    pd.testing.assert_frame_equal(got.table, want.table)
    assert got.pooled_correlation == want.pooled_correlation
    one, two = (coherence.market_alignment(ev, p) for p in (px, twice))
    assert two.correlation == one.correlation
    for convention in ("paper", "code"):
        pd.testing.assert_frame_equal(coherence.turning_points(twice, convention=convention),
                                      coherence.turning_points(px, convention=convention))


def _two_records(dates, directions, magnitudes, confidences, prices):
    """One question, one hindsight event e1 with two records, one forecast event matching
    it, and two prices around 2024-01-05: (the ungated graph result, the events, prices)."""
    hind = pd.DataFrame({
        "question": ["q", "q"], "event": ["e1", "e1"],
        "title": ["Central bank raises interest rates"] * 2, "date": dates,
        "direction": directions, "magnitude": magnitudes, "confidence": confidences})
    fe = pd.DataFrame({"model": ["m"], "question": ["q"], "event": ["f1"],
                       "title": ["Central bank raises interest rates"],
                       "date": ["2024-01-05"]})
    px = pd.DataFrame({"question": ["q"] * 2, "date": ["2024-01-04", "2024-01-06"],
                       "price": prices})
    reasoning = coherence.reasoning_graph_metrics(fe, hind, gates=False, n_resamples=10,
                                                  rng=0)
    return reasoning, hind, px


def test_records_of_equal_impact_and_opposite_sign_give_no_signal():
    """An event whose largest records have equal |d m c| of opposite signs has no signed
    impact: 0.3 x 0.6 and 0.2 x 0.9 are both 0.18, but in binary the second is
    0.18000000000000002, and its sign (+, with the price rising) made the event a signal
    (signal recall 1.0 where it is undefined)."""
    reasoning, hind, px = _two_records(["2024-01-05"] * 2, [-1, 1], [0.3, 0.2], [0.6, 0.9],
                                       [0.40, 0.55])
    with pytest.warns(coherence.DegenerateDataWarning, match="no scored forecast"):
        res = coherence.market_signal_metrics(reasoning, hind, px, n_resamples=10, rng=0)
    assert res.signal_events.empty
    assert res.table["n_signal_events"].tolist() == [0] and math.isnan(res.statistic)


def test_undated_records_left_out_of_the_signals_are_named():
    """Regression: an undated record (here e1's largest, +0.9) was left out before the
    event's largest record was chosen, without a word, while market_checks names such
    rows: e1 became a signal on its dated -0.1 record. The rows are now named."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reasoning, hind, px = _two_records([None, "2024-01-05"], [1, -1], [0.9, 0.1],
                                           [1.0, 1.0], [0.55, 0.40])
    with pytest.warns(coherence.SkippedRecordsWarning,
                      match=r"1 event\(s\) have no 'date' \(rows 0; questions 'q'\).*largest "
                            r"record") as rec:
        res = coherence.market_signal_metrics(reasoning, hind, px, n_resamples=10, rng=0)
    assert rec[0].filename == __file__
    assert res.signal_events["event"].tolist() == ["e1"]  # the dated record, as documented
    # and counted in the result, not only warned about: e1's signal rests on 1 of its 2
    # records, and the forecast's question has 1 record that entered no signal
    assert res.signal_events["n_undated_records"].tolist() == [1]
    assert res.table["n_undated_records"].tolist() == [1]
    assert res.statistic == 1.0 and res.signal_events["impact"].tolist() == [-0.1]


def test_a_price_span_of_exactly_min_price_range_is_eligible():
    # 0.45 - 0.40 is 0.04999999999999999 in binary: the span of 0.05 was read as below
    # min_price_range=0.05, and the question silently left the pooled correlation
    ev = {"question": ["a", "a"], "date": ["2024-01-02", "2024-01-04"],
          "direction": [1, 1], "magnitude": [1.0, 1.0], "confidence": [1.0, 1.0]}
    px = {"question": ["a"] * 4,
          "date": ["2024-01-01", "2024-01-03", "2024-01-05", "2024-01-06"],
          "price": [0.40, 0.42, 0.45, 0.44]}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = coherence.market_checks(ev, px, rng=0)
    pressure = np.array([0.0, 1.0, 2.0, 2.0])
    price = np.array([0.40, 0.42, 0.45, 0.44])
    assert res.n_eligible == 1
    assert bool(res.table["eligible"].iloc[0])
    assert res.pooled_correlation == pytest.approx(np.corrcoef(pressure, price)[0, 1])


@pytest.mark.parametrize(("window_days", "later"), [(13 / 1440, "2024-01-01 10:13"),
                                                    (1.14, "2024-01-02 13:21:36")])
def test_a_move_exactly_window_days_earlier_is_a_turning_point(window_days, later):
    # window_days * 86400e9 falls 1 ns short of the whole number in binary (13 minutes:
    # 779999999999.9999), and the window was cut to 779,999,999,999 ns, so a price exactly
    # window_days earlier was outside [t - w, t) and the move was no turning point
    px = {"date": ["2024-01-01 10:00", later], "price": [0.40, 0.50]}
    out = coherence.turning_points(px, window_days=window_days)
    assert [str(d) for d in out["date"]] == [str(pd.Timestamp(later))]


def test_rejected_records_are_no_signals():
    """An event its annotators rejected is removed by reasoning_graph_metrics, so no
    forecast can match it; market_signal_metrics counted it as a signal all the same:
    signal recall 0.5 for a forecast that found both events (e2 rejected), now 1.0."""
    hind = pd.DataFrame({
        "question": ["q", "q"], "event": ["e1", "e2"],
        "title": ["Central bank raises interest rates", "Dock workers strike"],
        "date": ["2024-01-05", "2024-01-10"], "direction": [1, 1],
        "magnitude": [0.9, 0.5], "confidence": [1.0, 1.0],
        "review_status": [None, " Rejected"]})
    fe = pd.DataFrame({"model": ["m", "m"], "question": ["q", "q"], "event": ["f1", "f2"],
                       "title": ["Central bank raises interest rates", "Dock workers strike"],
                       "date": ["2024-01-05", "2024-01-10"]})
    reasoning, px = _signal_inputs(fe, hind)
    res = coherence.market_signal_metrics(reasoning, hind, px, n_resamples=10, rng=0)
    assert res.signal_events["event"].tolist() == ["e1"]
    assert res.table["n_signal_events"].tolist() == [1] and res.statistic == 1.0
    # without the verdict (another column name) e2, rising with the price, is a signal
    res = coherence.market_signal_metrics(reasoning, hind, px, review_status="verdict",
                                          n_resamples=10, rng=0)
    assert res.signal_events["event"].tolist() == ["e1", "e2"] and res.statistic == 0.5


def test_market_checks_and_causal_pressure_use_every_row_review_status_aside():
    """As their docstrings say: no review_status or is_outcome column is read (unlike
    market_signal_metrics), so a rejected record enters the pressure: the net pressure of
    question a is 1.0 - 0.5 = 0.5 with the rejected -0.5 record, and 1.0 once it is
    removed by the caller."""
    ev = pd.DataFrame({"question": ["a", "a"], "date": ["2024-01-05", "2024-01-06"],
                       "direction": [1, -1], "magnitude": [1.0, 0.5],
                       "confidence": [1.0, 1.0], "review_status": [None, "rejected"],
                       "is_outcome": [False, True]})
    px = {"question": ["a", "a"], "date": ["2024-01-04", "2024-01-08"], "price": [0.4, 0.6]}
    # two prices: no correlation (said, as every NaN figure of market_checks is)
    with pytest.warns(coherence.DegenerateDataWarning, match=NO_CORRELATION):
        res = coherence.market_checks(ev, px, rng=0)
    assert res.table["net_pressure"].tolist() == pytest.approx([0.5])
    assert coherence.causal_pressure(ev)["pressure"].tolist() == pytest.approx([1.0, 0.5])
    kept = ev[ev["review_status"] != "rejected"]
    with pytest.warns(coherence.DegenerateDataWarning, match=NO_CORRELATION):
        assert coherence.market_checks(kept, px, rng=0).table["net_pressure"].tolist() == [1.0]


@pytest.mark.parametrize("column, value", [("direction", 2), ("magnitude", -1.0),
                                           ("confidence", 1.5)])
def test_event_errors_name_the_function_called(column, value):
    # a bad event column of market_checks or market_alignment was reported as an input to
    # causal_pressure, a function the caller never called
    bad = events().assign(**{column: [value, *events()[column].iloc[1:]]})
    for name, call in (("market_checks", lambda: coherence.market_checks(
            bad, prices(), n_resamples=20, rng=0)),
            ("market_alignment", lambda: coherence.market_alignment(
                bad.loc[bad["question"] == "A"], prices().loc[prices()["question"] == "A"],
                price_date="date"))):
        with pytest.raises(ValueError, match=rf"Column '{column}' \(input to {name}\)"):
            call()
    with pytest.raises(ValueError, match=rf"Column '{column}' \(input to causal_pressure\)"):
        coherence.causal_pressure(bad)


# --------------------------------------------------------------------------- numeric extremes
def test_turning_points_at_the_ends_of_nanosecond_timestamps():
    # three days before 1677-09-23 wrapped around to 2262: its move of 0.2 was lost
    px = pd.DataFrame({"date": ["1677-09-22", "1677-09-23", "2262-04-09", "2262-04-10"],
                       "price": [0.4, 0.6, 0.3, 0.7]})
    out = coherence.turning_points(px)
    assert out["date"].tolist() == [pd.Timestamp("1677-09-23"), pd.Timestamp("2262-04-10")]
    assert local_price_moves(np.array(["1677-09-22T12"], dtype="datetime64[ns]"),
                             px["date"].to_numpy(dtype="datetime64[ns]"),
                             px["price"].to_numpy(), int(3 * 86_400e9))[0] == pytest.approx(0.2)


@pytest.mark.parametrize("window_days", [1e6, 1e300])
def test_windows_longer_than_every_date(window_days):
    # was OverflowError ('int too big to convert', 'cannot convert float infinity'); such
    # a window covers every price, as 40 days do here
    with pytest.warns(coherence.SkippedRecordsWarning, match=UNDATED):
        res = coherence.market_checks(events(), prices(), window_days=window_days,
                                      n_resamples=10, rng=0)
    with pytest.warns(coherence.SkippedRecordsWarning, match=UNDATED):
        month = coherence.market_checks(events(), prices(), window_days=40, n_resamples=10,
                                        rng=0)
    assert res.to_frame().drop(columns="window_days").equals(
        month.to_frame().drop(columns="window_days"))
    pd.testing.assert_frame_equal(
        coherence.turning_points(prices(), window_days=window_days, question="question"),
        coherence.turning_points(prices(), window_days=40, question="question"))


@pytest.mark.parametrize("scale", [1e300, 1e-300])
def test_pooled_correlation_is_scale_free_at_extreme_magnitudes(scale):
    # 1e300 overflowed and 1e-300 vanished in the standardisation: NaN, RuntimeWarnings
    ev = events().assign(magnitude=events()["magnitude"] * scale)
    with pytest.warns(coherence.SkippedRecordsWarning, match=UNDATED):
        base = coherence.market_checks(events(), prices(), n_resamples=10, rng=0)
    with pytest.warns(coherence.SkippedRecordsWarning, match=UNDATED):
        res = coherence.market_checks(ev, prices(), n_resamples=10, rng=0)
    assert math.isfinite(base.pooled_correlation)
    assert res.pooled_correlation == pytest.approx(base.pooled_correlation, rel=1e-12)
    assert res.table["correlation"].to_numpy() == pytest.approx(
        base.table["correlation"].to_numpy(), rel=1e-12, nan_ok=True)


def test_a_nan_pooled_correlation_or_event_agreement_is_said():
    # with the net-direction statistic defined, both were NaN without a word: here the
    # events' impacts are all 0 but A's second (-0.5), no price is within half a day
    # of it, and no question's prices span 0.5
    ev = events().assign(confidence=[0.0, 1.0, 0.0, 0.0, 0.0])
    with (pytest.warns(coherence.SkippedRecordsWarning, match=UNDATED),
          pytest.warns(coherence.DegenerateDataWarning,
                       match=r"no question or event enters: pooled correlation, event "
                             r"agreement \(")):
        res = coherence.market_checks(ev, prices(), window_days=0.5, min_price_range=0.5,
                                      n_resamples=10, rng=0)
    assert math.isfinite(res.statistic)
    assert math.isnan(res.pooled_correlation) and math.isnan(res.event_agreement)
