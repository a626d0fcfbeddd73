"""hindsight_graph_quality, reasoning_graph_metrics, graph_depth and relation_polarity."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence
from coherence import DegenerateDataWarning
from coherence._scoring._graphs import relation_polarity
from tests._reference_bootstrap_t import fraction_interval_by_hand

GATES = {"min_nodes": 5, "min_sources": 5}   # the fixture is smaller than the paper's gates


def hindsight() -> pd.DataFrame:
    return pd.DataFrame({
        "question": ["q"] * 7 + ["q3", "q3"],
        "event": ["e1", "e1", "e2", "e3", "e4", "e5", "out", "x1", "x2"],
        "title": ["Central bank raises interest rates", "Central bank raises interest rates",
                  "Dock workers strike closes ports", "Election called early",
                  "Drought destroys wheat harvest", "Rumour about minister",
                  "Question resolves yes", "Thin one", "Thin two"],
        "date": ["2024-01-05", "2024-01-05", "2024-01-10", "2024-01-20", "2024-02-01",
                 "2024-01-03", "2024-02-10", "2024-01-01", "2024-01-02"],
        # impact e1 = max(0.9, 0.45) = 0.9, e2 0.5, e3 0.4, e4 0.15 (< 0.2), e5 rejected
        "magnitude": [0.9, 0.9, 0.5, 0.4, 0.3, 0.8, 1.0, 0.5, 0.5],
        "confidence": [1.0, 0.5, 1.0, 1.0, 0.5, 1.0, 1.0, 1.0, 1.0],
        "is_outcome": [False] * 6 + [True, False, False],
        "review_status": [None, None, "accepted", None, None, "rejected", None, None, None],
        "sources": [["s1", "s2"], ["s2"], ["s3"], ["s4"], "s5", ["s9"], [], ["t"], ["t"]],
    })


def hindsight_edges() -> pd.DataFrame:
    return pd.DataFrame({
        "question": ["q"] * 6 + ["q3"],
        "source": ["e1", "e2", "e3", "e4", "e1", "e5", "x1"],
        "target": ["e2", "e3", "out", "out", "e3", "e1", "x2"],
        "relation": ["causes", "enables", "causes", "prevents", "correlates", "causes",
                     "causes"],
        "confidence": [0.9, 0.8, 0.7, 0.9, 0.5, 0.9, 0.9],
        "strength": [0.5, 0.4, 0.6, 0.9, 0.9, 0.9, 0.9],
    })


def forecast_events() -> pd.DataFrame:
    return pd.DataFrame({
        "model": ["m"] * 3, "question": ["q"] * 3, "event": ["f1", "f2", "f3"],
        "title": ["Central bank raises interest rates", "Port strike by dock workers closes ports",
                  "Weather turns cold"],
        "date": ["2024-01-06", "2024-01-12", None]})


def forecast_edges() -> pd.DataFrame:
    return pd.DataFrame({"model": ["m", "m"], "question": ["q", "q"],
                         "source": ["f1", "f2"], "target": ["f2", "f3"],
                         "relation": ["causes", "causes"]})


def forecasts(sim: str = "2024-01-15") -> pd.DataFrame:
    return pd.DataFrame({"model": ["m", "m2"], "question": ["q", "q"],
                         "simulated_date": [sim, sim]})


# --------------------------------------------------------------------------- gates
def test_quality_gates_hand_computed():
    gq = coherence.hindsight_graph_quality(hindsight(), hindsight_edges(),
                                           questions=["q", "q2", "q3"], **GATES)
    t = gq.table.set_index("question")
    q = t.loc["q"]
    # rejected e5 out; e1->e3 below confidence; e5->e1 touches a rejected event
    assert (q["n_nodes"], q["n_rejected"], q["n_sources"]) == (5, 1, 5)
    assert (q["n_edges"], q["n_edges_kept"], q["hops"]) == (6, 4, 3)
    assert (q["n_edges_dangling"], q["n_edges_below_gate"]) == (1, 1)
    assert q["passes"] and q["reasons"] == ""
    assert t.loc["q2", "reasons"] == "not built" and not t.loc["q2", "built"]
    assert t.loc["q3", "reasons"] == "hops < 3; nodes < 5; sources < 5"
    assert gq.passed == ("q",) and gq.n_excluded == 2
    ex = dict(zip(gq.excluded["reason"], gq.excluded["n"], strict=True))
    assert ex == {"not built": 1, "hops < 3": 1, "nodes < 5": 1, "sources < 5": 1,
                  "edges < 1": 0, "any": 2}
    assert len(gq.edges) == 5 and "e5" not in set(gq.events["event"])


def test_paper_gates_are_the_defaults():
    gq = coherence.hindsight_graph_quality(hindsight(), hindsight_edges())
    assert gq.settings == {"min_hops": 3, "min_nodes": 10, "min_sources": 20, "min_edges": 1,
                           "min_edge_confidence": 0.6, "min_edge_strength": 0.3,
                           "exclude_rejected": True}
    assert gq.table.set_index("question").loc["q", "reasons"] == "nodes < 10; sources < 20"


def test_edges_missing_scores_are_not_kept_and_rejection_can_be_kept():
    ed = hindsight_edges().assign(strength=[None, 0.4, 0.6, 0.9, 0.9, 0.9, 0.9])
    gq = coherence.hindsight_graph_quality(hindsight(), ed, **GATES)
    assert gq.table.set_index("question").loc["q", "hops"] == 2      # e1->e2 lost
    keep = coherence.hindsight_graph_quality(hindsight(), hindsight_edges(),
                                             exclude_rejected=False, **GATES)
    q = keep.table.set_index("question").loc["q"]
    assert (q["n_nodes"], q["n_rejected"], q["hops"]) == (6, 0, 4)  # e5->e1->e2->e3->out


def test_quality_validation():
    with pytest.raises(ValueError, match="'sources' parameter"):
        coherence.hindsight_graph_quality(hindsight().drop(columns="sources"),
                                          hindsight_edges())
    gq = coherence.hindsight_graph_quality(hindsight().drop(columns="sources"),
                                           hindsight_edges(), min_sources=0, min_nodes=5)
    assert gq.passed == ("q",)
    with pytest.raises(ValueError, match="column 'strength'"):
        coherence.hindsight_graph_quality(hindsight(), hindsight_edges().drop(
            columns="strength"))
    with pytest.raises(ValueError, match="'min_hops' parameter"):
        coherence.hindsight_graph_quality(hindsight(), hindsight_edges(), min_hops=-1)


@pytest.mark.parametrize(("column", "value"), [("confidence", 1.5), ("confidence", np.inf),
                                               ("confidence", -0.5), ("strength", np.inf),
                                               ("strength", -0.5)])
def test_edge_scores_out_of_range_raise(column, value):
    # fuzz: an edge confidence of 1.5 or inf, a strength of inf, passed the gates silently
    ed = hindsight_edges()
    ed[column] = ed[column].astype(float)
    ed.loc[0, column] = value
    with pytest.raises(ValueError, match=rf"Column '{column}'.*or be missing"):
        coherence.hindsight_graph_quality(hindsight(), ed, **GATES)


# --------------------------------------------------------------------------- metrics
def run(**kw):
    args = {"forecast_edges": forecast_edges(), "hindsight_edges": hindsight_edges(),
            "forecasts": forecasts(), "gates": coherence.hindsight_graph_quality(
                hindsight(), hindsight_edges(), **GATES), "n_resamples": 20, "rng": 0}
    args.update(kw)
    return coherence.reasoning_graph_metrics(forecast_events(), hindsight(), **args)


def test_reasoning_metrics_hand_computed():
    res = run()
    row = res.table.set_index("model").loc["m"]
    assert (row["n_forecast_events"], row["n_hindsight_events"], row["n_matched"]) == (3, 4, 2)
    assert row["event_precision"] == pytest.approx(2 / 3)
    assert row["event_recall"] == 0.5
    assert row["event_f1"] == pytest.approx(4 / 7)
    # paper: key events = every event with an impact record (e1..e4)
    assert (row["n_key_events"], row["n_key_matched"]) == (4, 2)
    assert row["key_event_recall"] == 0.5 and row["key_event_precision"] == pytest.approx(2 / 3)
    # accessible before 2024-01-15: e1, e2
    assert (row["n_accessible"], row["n_accessible_matched"]) == (2, 2)
    assert row["accessible_recall"] == 1.0 and row["accessible_precision"] == pytest.approx(2 / 3)
    assert row["date_error_days"] == 1.5
    # f1->f2 is e1->e2 (both 'causes'); f2->f3 has an unmatched end; 4 kept hindsight edges
    assert (row["n_forecast_edges"], row["n_hindsight_edges"], row["n_aligned_edges"]) == (
        2, 4, 1)
    assert row["edge_precision"] == 0.5 and row["edge_recall"] == 0.25
    assert row["direction_accuracy"] == 1.0 and row["forecast_depth"] == 2
    assert res.statistic == pytest.approx(2 / 3) and res.metric == "key_event_precision"
    assert res.n_rejected_events == 1 and res.gated
    m = res.matches.set_index("forecast_event")
    assert m.loc["f1", "hindsight_event"] == "e1" and m.loc["f2", "date_error_days"] == 2.0


def test_empty_forecast_graph_under_both_conventions():
    paper = run().table.set_index("model").loc["m2"]
    assert paper["key_event_recall"] == 0.0 and math.isnan(paper["key_event_precision"])
    assert paper["event_recall"] == 0.0 and math.isnan(paper["event_f1"])
    code = run(convention="code").table.set_index("model").loc["m2"]
    assert math.isnan(code["key_event_recall"])


def test_code_convention_min_impact_and_accessible_boundary():
    code = run(convention="code")
    row = code.table.set_index("model").loc["m"]
    assert row["n_key_events"] == 3 and row["key_event_recall"] == pytest.approx(2 / 3)
    assert code.min_impact == 0.2
    on_day = forecasts("2024-01-10")
    assert run(forecasts=on_day).table["n_accessible"].iloc[0] == 1     # strictly before
    assert run(forecasts=on_day, convention="code").table["n_accessible"].iloc[0] == 2
    assert run(key_events=2).table.set_index("model").loc["m", "key_event_recall"] == 1.0


def test_f1_when_nothing_matches():
    fe = forecast_events().assign(title=["Nothing", "Alike", "Here"])
    paper = coherence.reasoning_graph_metrics(fe, hindsight(), gates=False, n_resamples=10,
                                              rng=0)
    assert paper.table["event_f1"].iloc[0] == 0.0
    code = coherence.reasoning_graph_metrics(fe, hindsight(), gates=False, convention="code",
                                             n_resamples=10, rng=0)
    assert math.isnan(code.table["event_f1"].iloc[0])


def test_paper_gates_exclude_and_count():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.warns(DegenerateDataWarning, match="undefined for every"):
            res = coherence.reasoning_graph_metrics(
                forecast_events(), hindsight(), forecast_edges=forecast_edges(),
                hindsight_edges=hindsight_edges(), forecasts=forecasts(), n_resamples=10,
                rng=0)
    assert res.n_excluded_questions == 2 and res.n_excluded_forecasts == 2
    assert len(res.table) == 0
    assert set(res.excluded_forecasts["reasons"]) == {"nodes < 10; sources < 20"}
    assert res.quality is not None and res.quality.n_excluded == 2


def test_metrics_validation():
    with pytest.raises(ValueError, match="'hindsight_edges' parameter"):
        coherence.reasoning_graph_metrics(forecast_events(), hindsight())
    with pytest.raises(ValueError, match="'metric' parameter"):
        coherence.reasoning_graph_metrics(forecast_events(), hindsight(), gates=False,
                                          metric="vibes")
    with pytest.raises(TypeError, match="'gates' parameter"):
        coherence.reasoning_graph_metrics(forecast_events(), hindsight(), gates="yes")
    dup = pd.concat([forecast_events(), forecast_events().iloc[:1]], ignore_index=True)
    with pytest.raises(ValueError, match=r"Column 'event'.*once"):
        coherence.reasoning_graph_metrics(dup, hindsight(), gates=False)
    with pytest.raises(ValueError, match=r"'forecasts' parameter.*no row for"):
        coherence.reasoning_graph_metrics(forecast_events(), hindsight(), gates=False,
                                          forecasts=forecasts().iloc[1:])
    with pytest.raises(ValueError, match="'forecast_edges' parameter"):
        coherence.reasoning_graph_metrics(forecast_events(), hindsight(), gates=False,
                                          forecast_edges=forecast_edges().assign(model="z"))
    with pytest.raises(ValueError, match="Column 'simulated_date'"):
        coherence.reasoning_graph_metrics(forecast_events(), hindsight(), gates=False,
                                          forecasts=forecasts().assign(simulated_date=None))


@pytest.mark.parametrize(("column", "value"), [("confidence", 1.5), ("confidence", -np.inf),
                                               ("magnitude", np.inf), ("magnitude", -0.5)])
def test_hindsight_impacts_out_of_range_raise(column, value):
    # fuzz: a confidence of 1.5 or a magnitude of inf gave an impact silently
    hev = hindsight()
    hev[column] = hev[column].astype(float)
    hev.loc[0, column] = value
    with pytest.raises(ValueError, match=rf"Column '{column}'.*or be missing"):
        coherence.reasoning_graph_metrics(forecast_events(), hev, gates=False)


@pytest.mark.parametrize("flags", [
    ["False"] * 6 + ["TRUE", "0", "no"],
    # 't'/'f', 'y'/'n' and '1.0' are flags to key_event_recall (the package's one flag
    # reader); reasoning_graph_metrics raised on them with a reader of its own
    ["f", "N", "0.0", "f", "n", "F", "t", "n", "f"],
    ["0.0"] * 6 + ["1.0", "0.0", "0.0"],
], ids=["true-false", "t-f-y-n", "1.0-0.0"])
def test_outcome_flags_as_strings_are_read_not_cast(flags):
    as_text = hindsight().assign(is_outcome=flags)
    res = coherence.reasoning_graph_metrics(forecast_events(), as_text, forecasts=forecasts(),
                                            gates=False, n_resamples=10, rng=0)
    ref = coherence.reasoning_graph_metrics(forecast_events(), hindsight(),
                                            forecasts=forecasts(), gates=False,
                                            n_resamples=10, rng=0)
    pd.testing.assert_frame_equal(res.table, ref.table)
    with pytest.raises(ValueError, match=r"Column 'is_outcome'.*yes/no flags"):
        coherence.reasoning_graph_metrics(forecast_events(), hindsight().assign(
            is_outcome="maybe"), gates=False)


def test_paper_convention_f1_of_empty_and_unmatched_forecasts():
    """As the docstring says: no events -> key-event recall 0, precisions and F1 NaN;
    events matching none -> F1 0; a question keeping no hindsight event -> NaN."""
    unmatched = pd.DataFrame({"model": ["m3"], "question": ["q"], "event": ["z1"],
                              "title": ["Unrelated zebra parade"], "date": ["2024-01-06"]})
    listed = pd.concat([forecasts(), pd.DataFrame({
        "model": ["m3", "m"], "question": ["q", "q3"],
        "simulated_date": ["2024-01-15"] * 2})], ignore_index=True)
    hev = hindsight()
    hev.loc[hev["question"] == "q3", "review_status"] = "rejected"
    res = coherence.reasoning_graph_metrics(
        pd.concat([forecast_events(), unmatched], ignore_index=True), hev, forecasts=listed,
        gates=False, n_resamples=10, rng=0)
    t = res.table.set_index(["model", "question"])
    empty, none_matched, no_hindsight = t.loc[("m2", "q")], t.loc[("m3", "q")], t.loc[("m", "q3")]
    assert empty["key_event_recall"] == 0.0 and empty["event_recall"] == 0.0
    assert np.isnan(empty["event_precision"]) and np.isnan(empty["event_f1"])
    assert none_matched["event_precision"] == 0.0 and none_matched["event_f1"] == 0.0
    assert np.isnan(no_hindsight["event_recall"]) and np.isnan(no_hindsight["event_f1"])


def test_summary_table_means_over_defined_values():
    res = run()
    s = res.summary_table.set_index("model")
    assert s.loc["(all)", "key_event_recall"] == pytest.approx(0.25)
    assert s.loc["(all)", "n_key_event_precision"] == 1
    assert s.loc["m2", "n_forecasts"] == 1


# --------------------------------------------------------------------------- array layer
def _brute_depth(edges: list[tuple[int, int]], nodes: set[int]) -> int:
    """Released-evaluator semantics by enumeration: over every simple path v0..vk, its
    k edges plus one when vk has an edge back onto the path."""
    out: dict[int, set[int]] = {n: set() for n in nodes}
    for s, t in edges:
        if s in nodes and t in nodes:
            out[s].add(t)
    best = 0

    def extend(path: list[int]) -> None:
        nonlocal best
        end = path[-1]
        best = max(best, len(path) - 1 + (1 if out[end] & set(path) else 0))
        for nxt in out[end]:
            if nxt not in path:
                extend([*path, nxt])

    for n in nodes:
        extend([n])
    return best


@given(st.lists(st.tuples(st.integers(0, 5), st.integers(0, 5)), max_size=12),
       st.booleans())
def test_graph_depth_matches_brute_force(edges, acyclic):
    if acyclic:
        edges = [(min(a, b), max(a, b)) for a, b in edges if a != b]
    nodes = set(range(6))
    assert coherence.graph_depth(edges, nodes) == _brute_depth(edges, nodes)


def test_graph_depth_cases():
    assert coherence.graph_depth([]) == 0
    assert coherence.graph_depth([("a", "a")]) == 1
    assert coherence.graph_depth([("a", "b"), ("b", "a")]) == 2
    assert coherence.graph_depth([("a", "b"), ("b", "c")], nodes={"a", "b"}) == 1


def test_relation_polarity():
    assert [relation_polarity(r) for r in ["causes", "ENABLES", "ImpactDirection.positive",
                                           "prevents", "negative", "correlates", None,
                                           np.nan]] == [1, 1, 1, -1, -1, 0, 0, 0]


VOCAB = ["rates", "bank", "strike", "port", "election", "drought", "harvest", "tariff",
         "summit", "merger"]


@settings(max_examples=20)
@given(st.lists(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=3), min_size=1,
                max_size=6),
       st.lists(st.lists(st.sampled_from(VOCAB), min_size=1, max_size=3), min_size=1,
                max_size=6),
       st.lists(st.floats(0.05, 1.0), min_size=6, max_size=6))
def test_key_event_recall_agrees_with_key_event_recall(h_titles, f_titles, impacts):
    """Under the code convention and without a date gate, the key-event recall and the
    event precision/recall equal those of coherence.key_event_recall (same matcher)."""
    hind = pd.DataFrame({"question": "q", "event": [f"h{i}" for i in range(len(h_titles))],
                         "title": [" ".join(t) for t in h_titles],
                         "magnitude": impacts[:len(h_titles)], "confidence": 1.0})
    fe = pd.DataFrame({"model": "m", "question": "q",
                       "event": [f"f{i}" for i in range(len(f_titles))],
                       "title": [" ".join(t) for t in f_titles]})
    ours = coherence.reasoning_graph_metrics(fe, hind, gates=False, convention="code",
                                             date_window_days=None, n_resamples=5, rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        ref = coherence.key_event_recall(fe, hind, convention="code", n_resamples=5, rng=0)
    a, b = ours.table.iloc[0], ref.table.iloc[0]
    for mine, theirs in (("key_event_recall", "ker"), ("event_precision", "precision"),
                         ("event_recall", "recall")):
        assert a[mine] == pytest.approx(b[theirs], nan_ok=True)
    assert a["n_key_events"] == b["n_key_events"]


def test_undated_pair_fails_the_paper_gate_and_skips_the_code_one():
    # as key_event_recall: under the paper's 7-day gate an undated pair cannot be shown to
    # lie within 7 days; the released code lets it skip the gate
    fe = forecast_events().assign(date=[None, "2024-01-12", None])  # f1 loses its date
    paper = coherence.reasoning_graph_metrics(fe, hindsight(), gates=False, n_resamples=10,
                                              rng=0)
    code = coherence.reasoning_graph_metrics(fe, hindsight(), gates=False, convention="code",
                                             date_window_days=7.0, n_resamples=10, rng=0)
    assert "f1" not in set(paper.matches["forecast_event"])
    assert "f1" in set(code.matches["forecast_event"])
    assert paper.table["n_matched"].iloc[0] == code.table["n_matched"].iloc[0] - 1


@pytest.mark.parametrize("metric", coherence.REASONING_METRICS)
def test_each_metric_gets_the_interval_of_its_values(metric):
    """Fractions get Wilson's interval with a t quantile (by hand here), the date error
    and the depth, which have no upper bound, a bootstrap-t interval from 0 with Student's
    small-sample factor."""
    res = run(metric=metric)
    ci = res.confidence_interval
    if metric in ("date_error_days", "forecast_depth"):
        assert res.method.startswith("cluster bootstrap-t interval with Student's "
                                     "small-sample factor over questions")
        assert 0.0 <= ci.low <= res.statistic <= ci.high
    else:
        assert res.method.endswith("degrees of freedom over questions")
        ref = fraction_interval_by_hand(res.table[metric].to_numpy(dtype=float),
                                        res.table["question"].to_numpy(dtype=object), 0.95)
        np.testing.assert_allclose((ci.low, ci.high), ref, rtol=1e-9, atol=1e-12)


# --------------------------------------------------------------------------- repeated rows
_REP_HEV = {"question": ["q"] * 3, "event": ["a", "b", "c"],
            "title": ["Central bank raises rates", "Bond yields jump sharply",
                      "Housing market slows down"],
            "date": ["2024-01-05", "2024-01-06", "2024-01-07"],
            "magnitude": [0.9, 0.5, 0.4], "confidence": [1.0] * 3}
_REP_FEV = {"model": ["m"] * 3, "question": ["q"] * 3, "event": ["x", "y", "z"],
            "title": _REP_HEV["title"], "date": _REP_HEV["date"]}
_REP_HED = {"question": ["q"] * 2, "source": ["a", "b"], "target": ["b", "c"],
            "relation": ["causes"] * 2, "confidence": [0.9] * 2, "strength": [0.9] * 2}


def _edge_row(fe, he):
    res = coherence.reasoning_graph_metrics(_REP_FEV, _REP_HEV, forecast_edges=fe,
                                            hindsight_edges=he, gates=False, rng=0,
                                            metric="edge_recall", n_resamples=10)
    return res.table.iloc[0]


def test_edge_metrics_count_a_repeated_edge_once():
    # edges are distinct (source, target) pairs: a repeated row changes nothing
    fe = {"model": ["m"] * 2, "question": ["q"] * 2, "source": ["x", "y"],
          "target": ["y", "x"], "relation": ["causes"] * 2}
    base = _edge_row(fe, _REP_HED)
    h_dup = _edge_row(fe, {k: [*v, v[0]] for k, v in _REP_HED.items()})
    f_dup = _edge_row({k: [*v, v[0]] for k, v in fe.items()}, _REP_HED)
    for row in (h_dup, f_dup):
        assert (row.edge_recall, row.edge_precision) == (base.edge_recall, base.edge_precision)
        assert (row.n_hindsight_edges, row.n_forecast_edges) == (2, 2)
    assert (base.edge_recall, base.edge_precision) == (0.5, 0.5)


def test_min_edges_gate_counts_a_repeated_edge_once():
    ev = {"question": ["q"] * 4, "event": list("abcd"), "sources": [["s1"]] * 4}
    ed = {"question": ["q"] * 2, "source": ["a", "a"], "target": ["b", "b"],
          "confidence": [0.9] * 2, "strength": [0.5] * 2}
    g = coherence.hindsight_graph_quality(ev, ed, min_nodes=0, min_sources=0, min_hops=0,
                                          min_edges=2)
    assert g.table["reasons"].tolist() == ["edges < 2"]
    assert not g.table["passes"].iloc[0]


def test_graph_quality_refuses_a_repeated_question():
    ev = {"question": ["q"] * 2, "event": ["a", "b"], "sources": [["s1"]] * 2}
    ed = {"question": ["q"], "source": ["a"], "target": ["b"], "confidence": [0.9],
          "strength": [0.5]}
    with pytest.raises(ValueError, match=r"'questions'.*1 repeated: 'r'"):
        coherence.hindsight_graph_quality(ev, ed, questions=["q", "r", "r"])


def test_reasoning_metrics_refuse_mixed_timezones():
    fc = {"model": ["m"], "question": ["q"], "simulated_date": ["2024-01-10 22:00+05:00"]}
    with pytest.raises(ValueError, match="timezone-aware or both naive"):
        coherence.reasoning_graph_metrics(_REP_FEV, _REP_HEV, forecasts=fc, gates=False,
                                          rng=0)
    fe = dict(_REP_FEV, date=[d + " 00:00+00:00" for d in _REP_FEV["date"]])
    with pytest.raises(ValueError, match=r"forecast_events\['date'\] and hindsight_events"):
        coherence.reasoning_graph_metrics(fe, _REP_HEV, gates=False, rng=0)


def test_reasoning_metrics_refuse_an_event_with_two_dates():
    hev = {k: [*v, v[0]] for k, v in _REP_HEV.items()}
    hev["date"][-1] = "2024-03-01"                 # a's second record, another date
    with pytest.raises(ValueError, match=r"Column 'date'.*'question' and 'event'.*'a'"):
        coherence.reasoning_graph_metrics(_REP_FEV, hev, gates=False, rng=0)
    # the same date written twice, or missing on one record, is one date
    hev["date"][-1] = None
    res = coherence.reasoning_graph_metrics(_REP_FEV, pd.DataFrame(hev).iloc[::-1],
                                            gates=False, rng=0, n_resamples=10)
    assert res.table["n_matched"].tolist() == [3]


def test_reasoning_metrics_refuse_an_event_with_two_titles():
    hev = {k: [*v, v[0]] for k, v in _REP_HEV.items()}
    hev["title"][-1] = "Housing market slows down"      # a's second record, c's text
    with pytest.raises(ValueError, match=r"Column 'title'.*'question' and 'event'.*'a'"):
        coherence.reasoning_graph_metrics(_REP_FEV, hev, gates=False, rng=0)
    # a blank first record takes the event's text from the other: a is matched in either
    # row order (before, the first record's blank text missed it when it came first)
    hev["title"][0], hev["title"][-1] = None, "Central bank raises rates"
    for order in (slice(None), slice(None, None, -1)):
        res = coherence.reasoning_graph_metrics(_REP_FEV, pd.DataFrame(hev).iloc[order],
                                                gates=False, rng=0, n_resamples=10)
        assert res.table["n_matched"].tolist() == [3]


@pytest.mark.parametrize(("kw", "name"), [({"threshold": -0.5}, "threshold"),
                                          ({"threshold": 1.5}, "threshold"),
                                          ({"key_events": (5, -0.1)}, "min_impact")])
def test_reasoning_metrics_bound_threshold_and_min_impact(kw, name):
    with pytest.raises(ValueError, match=f"'{name}' parameter"):
        coherence.reasoning_graph_metrics(_REP_FEV, _REP_HEV, gates=False, rng=0, **kw)


def test_ungated_edges_to_a_rejected_event_go_with_it():
    """With gates=False a rejected event is removed, and the hindsight edges touching it
    too, as the gates remove them: the edge b -> c to the rejected c stayed in the
    edge-recall denominator, 1 hit of 2 edges (0.5) where the gated run gave 1 of 1."""
    hind = pd.DataFrame({
        "question": ["q"] * 3, "event": ["a", "b", "c"],
        "title": ["Central bank raises rates", "Dock workers strike", "Stocks fall sharply"],
        "date": ["2024-01-05", "2024-01-06", "2024-01-07"],
        "magnitude": [0.9, 0.5, 0.5], "confidence": [1.0] * 3,
        "review_status": ["accepted", "accepted", "rejected"]})
    hed = pd.DataFrame({"question": ["q", "q"], "source": ["a", "b"], "target": ["b", "c"],
                        "relation": ["causes"] * 2, "confidence": [0.9] * 2,
                        "strength": [0.9] * 2})
    fe = pd.DataFrame({"model": ["m"] * 2, "question": ["q"] * 2, "event": ["f1", "f2"],
                       "title": ["Central bank raises rates", "Dock workers strike"],
                       "date": ["2024-01-05", "2024-01-06"]})
    fed = pd.DataFrame({"model": ["m"], "question": ["q"], "source": ["f1"],
                        "target": ["f2"], "relation": ["causes"]})
    gates = coherence.hindsight_graph_quality(hind, hed, min_hops=0, min_nodes=0,
                                              min_sources=0, sources=None)
    cols = ["n_hindsight_edges", "n_aligned_edges", "edge_recall", "edge_precision"]
    ungated = coherence.reasoning_graph_metrics(fe, hind, forecast_edges=fed,
                                                hindsight_edges=hed, gates=False, rng=0)
    gated = coherence.reasoning_graph_metrics(fe, hind, forecast_edges=fed,
                                              hindsight_edges=hed, gates=gates, rng=0)
    assert ungated.table[cols].values.tolist() == [[1, 1, 1.0, 1.0]]
    assert gated.table[cols].values.tolist() == ungated.table[cols].values.tolist()
    assert ungated.n_rejected_events == 1


def test_key_events_of_equal_impact_tie_by_row_order():
    """Impacts 0.3 x 0.6 and 0.2 x 0.9 are both 0.18: a tie, broken by row order (e1 is
    the one key event at k=1, and the forecast naming it has key-event recall 1.0). In
    binary the second is 0.18000000000000002 and was ranked first (recall 0.0)."""
    hind = pd.DataFrame({"question": ["q"] * 2, "event": ["e1", "e2"],
                         "title": ["Central bank raises interest rates",
                                   "Strike closes ports"],
                         "magnitude": [0.3, 0.2], "confidence": [0.6, 0.9]})
    fe = pd.DataFrame({"model": ["m"], "question": ["q"], "event": ["f1"],
                       "title": ["Central bank raises interest rates"]})
    res = coherence.reasoning_graph_metrics(fe, hind, gates=False, key_events=(1, 0.18),
                                            date_window_days=None, rng=0)
    assert res.table[["n_key_events", "key_event_recall"]].values.tolist() == [[1, 1.0]]


def test_renamed_edge_ends_reach_the_gates():
    # source= and target= named the edges' end columns for the metrics but not for the
    # gates that gates=True runs, which then asked for a 'source' column the caller renamed
    ends = {"source": "from", "target": "to"}
    with pytest.warns(DegenerateDataWarning, match="undefined for every"):
        plain = run(gates=True)    # the paper's gates exclude both questions
    with pytest.warns(DegenerateDataWarning, match="undefined for every"):
        renamed = run(gates=True, forecast_edges=forecast_edges().rename(columns=ends),
                      hindsight_edges=hindsight_edges().rename(columns=ends),
                      source="from", target="to")
    pd.testing.assert_frame_equal(renamed.excluded_forecasts, plain.excluded_forecasts)
    assert renamed.n_excluded_questions == plain.n_excluded_questions == 2
    # a report built on other column names says so (it was a bare KeyError)
    with pytest.raises(ValueError, match=r"the gates' edges.*'from'"):
        run(forecast_edges=forecast_edges().rename(columns=ends),
            hindsight_edges=hindsight_edges().rename(columns=ends), source="from",
            target="to")


def test_quality_gates_refuse_source_lists_written_as_text():
    # a CSV stores ['s1', 's2'] as text: each cell counted as one source named so, and
    # 4 events citing 6 sources had 4 (failing min_sources=6 without a word)
    ev = {"question": ["q"] * 4, "event": ["a", "b", "c", "d"],
          "sources": [["s1", "s2"], ["s3", "s4"], ["s5"], ["s6"]]}
    ed = {"question": ["q"] * 3, "source": ["a", "b", "c"], "target": ["b", "c", "d"],
          "confidence": [0.9] * 3, "strength": [0.5] * 3}
    gq = coherence.hindsight_graph_quality(ev, ed, min_nodes=4, min_sources=6)
    assert gq.table["n_sources"].tolist() == [6] and gq.passed == ("q",)
    as_text = dict(ev, sources=[str(s) for s in ev["sources"]])
    with pytest.raises(ValueError, match="not lists written as text"):
        coherence.hindsight_graph_quality(as_text, ed, min_nodes=4, min_sources=6)


def test_a_model_named_like_the_pooled_row_raises():
    # summary_table had two rows '(all)': the model's and the pooled one
    fe = forecast_events().assign(model="(all)")
    with pytest.raises(ValueError, match="labels the pooled row"):
        coherence.reasoning_graph_metrics(fe, hindsight(), gates=False, rng=0)
    with pytest.raises(ValueError, match="labels the pooled row"):
        run(forecasts=forecasts().assign(model=["m", "(all)"]))


def test_ungated_hindsight_edge_without_an_end_raises():
    # the gates refuse it; without them it was counted among the hindsight edges (edge
    # recall 0.2 became 1/6) though no forecast edge could ever hit it
    extra = pd.DataFrame({"question": ["q"], "source": [np.nan], "target": ["e2"],
                          "relation": ["causes"], "confidence": [0.9], "strength": [0.9]})
    edges = pd.concat([hindsight_edges(), extra], ignore_index=True)
    with pytest.raises(ValueError, match=r"'source'.*missing"):
        run(gates=False, hindsight_edges=edges)


def test_quality_gates_refuse_one_string_as_the_questions():
    # questions='q3' was read letter by letter: rows 'q' and '3', the second 'not built'
    with pytest.raises(TypeError, match=r"'questions' parameter.*not one string"):
        coherence.hindsight_graph_quality(hindsight(), hindsight_edges(), questions="q3",
                                          **GATES)
    gq = coherence.hindsight_graph_quality(hindsight(), hindsight_edges(), questions=["q3"],
                                           **GATES)
    assert gq.table["question"].tolist() == ["q3", "q"]


def test_a_report_on_questions_written_another_way_raises():
    # gates on 'Q' beside tables on 'q': every forecast was excluded as 'not built'
    upper = coherence.hindsight_graph_quality(
        hindsight().assign(question=lambda d: d["question"].str.upper()),
        hindsight_edges().assign(question=lambda d: d["question"].str.upper()), **GATES)
    with pytest.raises(ValueError, match=r"hindsight_events and gates.*'Q' / 'q'"):
        run(gates=upper)


@pytest.mark.parametrize("column", ["magnitude", "confidence"])
def test_a_half_blank_impact_record_raises(column):
    # e2's record (0.5 x 1.0) with its magnitude or confidence lost read as "no impact
    # record": e2 left the key events without a word (3 key events where there are 4)
    hev = hindsight()
    hev.loc[2, column] = np.nan
    other = "confidence" if column == "magnitude" else "magnitude"
    with pytest.raises(ValueError, match=rf"Column '{column}' \(input to "
                       rf"reasoning_graph_metrics\) must hold a value where '{other}' does"
                       r".*1 offending row \(first: row 2\)"):
        coherence.reasoning_graph_metrics(forecast_events(), hev, gates=False)
    # both blank: an event without an impact record, no key event (as before)
    hev.loc[2, ["magnitude", "confidence"]] = np.nan
    res = coherence.reasoning_graph_metrics(forecast_events(), hev, gates=False,
                                            n_resamples=10, rng=0)
    assert res.table["n_key_events"].tolist() == [3]
    # the rejected e5 and the outcome are removed before the check
    hev = hindsight()
    hev.loc[[5, 6], column] = np.nan
    res = coherence.reasoning_graph_metrics(forecast_events(), hev, gates=False,
                                            n_resamples=10, rng=0)
    assert res.table["n_key_events"].tolist() == [4]


def test_source_ids_typed_apart_are_one_source_in_the_gates():
    # sources s1..s5 of question q, with s2 given once as the number 2 and once as the
    # text '2' (and s4 as 4.0): counted as 6 sources, the question passed min_sources=6
    hev = hindsight()
    hev["sources"] = pd.Series([[1, 2], ["2"], [3], [4.0], "5", [9], [], ["t"], ["t"]],
                               dtype=object)
    gq = coherence.hindsight_graph_quality(hev, hindsight_edges(), min_nodes=5,
                                           min_sources=6)
    q = gq.table.set_index("question").loc["q"]
    assert q["n_sources"] == 5 and q["reasons"] == "sources < 6"


@pytest.mark.parametrize("item", [None, np.nan, "", " "])
def test_quality_gates_refuse_a_missing_source_item(item):
    """A missing id inside a source list ('s2' lost as None, NaN or a blank) was dropped:
    4 events citing ['s1'], ['s2', None], ['s3'], ['s4'] had 4 sources and passed
    min_sources=4. It now raises, as source_precision does, naming the column, the row and
    its cell; a whole blank cell still lists no sources."""
    ev = {"question": ["q"] * 4, "event": ["a", "b", "c", "d"],
          "sources": [["s1"], ["s2", item], ["s3"], ["s4"]]}
    ed = {"question": ["q"] * 3, "source": ["a", "b", "c"], "target": ["b", "c", "d"],
          "confidence": [0.9] * 3, "strength": [0.5] * 3}
    with pytest.raises(ValueError, match=r"Column 'sources' \(input to "
                                         r"hindsight_graph_quality\) must not contain missing "
                                         r"values .*inside a list.*1 offending row \(first: "
                                         r"row 1 = \['s2', "):
        coherence.hindsight_graph_quality(ev, ed, min_nodes=4, min_sources=4)
    blank_cell = dict(ev, sources=[["s1"], item, ["s3"], ["s4"]])
    gq = coherence.hindsight_graph_quality(blank_cell, ed, min_nodes=4, min_sources=3)
    assert gq.table["n_sources"].tolist() == [3]
