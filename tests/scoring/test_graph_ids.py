"""Ids written two ways (1 and '1', 'Q' and 'q') between the tables that the graph metrics
join: hindsight_graph_quality, reasoning_graph_metrics and market_signal_metrics raise,
naming the column, instead of dropping edges, questions or matches without a word (the
edges came out dangling: depth and edge precision 0; signal recall 0 or NaN)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence


def _hindsight() -> pd.DataFrame:
    return pd.DataFrame({
        "question": ["q"] * 3, "event": [1, 2, 3],
        "title": ["Central bank raises rates", "Dock workers strike", "Ports close"],
        "date": ["2024-01-05", "2024-01-06", "2024-01-07"],
        "magnitude": [0.9, 0.5, 0.4], "confidence": [1.0] * 3, "direction": [1, 1, -1]})


def _forecast_events() -> pd.DataFrame:
    return pd.DataFrame({
        "model": ["m"] * 3, "question": ["q"] * 3, "event": [1, 2, 3],
        "title": ["Central bank raises rates again", "Dock workers strike", "Ports close"],
        "date": ["2024-01-06", "2024-01-06", "2024-01-07"]})


def _hindsight_edges() -> pd.DataFrame:
    return pd.DataFrame({"question": ["q", "q"], "source": [1, 2], "target": [2, 3],
                         "confidence": [0.9, 0.9], "strength": [0.9, 0.9],
                         "relation": ["causes"] * 2})


def _forecast_edges() -> pd.DataFrame:
    return pd.DataFrame({"model": ["m", "m"], "question": ["q", "q"], "source": [1, 2],
                         "target": [2, 3], "relation": ["causes"] * 2})


def _prices() -> pd.DataFrame:
    return pd.DataFrame({"question": ["q"] * 6,
                         "date": [f"2024-01-{d:02d}" for d in (1, 3, 5, 7, 9, 11)],
                         "price": [0.3, 0.3, 0.5, 0.6, 0.55, 0.7]})


def _metrics(fe=None, he=None, fed=None, hed=None):
    return coherence.reasoning_graph_metrics(
        _forecast_events() if fe is None else fe, _hindsight() if he is None else he,
        forecast_edges=_forecast_edges() if fed is None else fed,
        hindsight_edges=_hindsight_edges() if hed is None else hed, gates=False,
        metric="edge_precision", rng=0)


def test_consistent_ids_score_the_edges():
    res = _metrics()
    row = res.table.iloc[0]
    assert (row["edge_precision"], row["edge_recall"], row["forecast_depth"]) == (1.0, 1.0, 2.0)


@pytest.mark.parametrize("which", ["fed", "hed"])
def test_edge_ends_written_as_text_raise(which):
    """Event ids 1, 2, 3 in the events, '1', '2', '3' at the edges' ends: the edges were
    dropped as dangling (edge precision 0.0 and depth 0 instead of 1.0 and 2)."""
    edges = (_forecast_edges() if which == "fed" else _hindsight_edges()).astype(
        {"source": str, "target": str})
    table = "forecast_edges" if which == "fed" else "hindsight_edges"
    with pytest.raises(ValueError, match=rf"Column 'source'.*{table}.*found '1' where it "
                                         r"has 1.*row 0 = '1'"):
        _metrics(**{which: edges})


def test_question_written_two_ways_raises():
    """'Q' in the forecast tables, 'q' in the hindsight ones: key-event precision was 0
    and edge precision 0 without a word."""
    with pytest.raises(ValueError, match=r"Column 'question'.*'Q' / 'q'"):
        _metrics(fe=_forecast_events().assign(question="Q"),
                 fed=_forecast_edges().assign(question="Q"))


def test_model_written_two_ways_raises():
    with pytest.raises(ValueError, match=r"Column 'model'.*forecast_events and forecasts"
                                         r".*'M' / 'm'"):
        coherence.reasoning_graph_metrics(
            _forecast_events(), _hindsight(), forecasts={"model": ["M"], "question": ["q"],
                                                         "simulated_date": ["2024-01-10"]},
            gates=False, rng=0)


def test_hindsight_graph_quality_ids_written_two_ways_raise():
    gates = {"min_nodes": 0, "min_sources": 0, "min_hops": 2}
    ok = coherence.hindsight_graph_quality(_hindsight(), _hindsight_edges(), **gates)
    assert ok.table["hops"].tolist() == [2] and ok.passed == ("q",)
    with pytest.raises(ValueError, match=r"Column 'target'.*hindsight_edges.*found '2'"):
        coherence.hindsight_graph_quality(
            _hindsight(), _hindsight_edges().astype({"target": str}), **gates)
    with pytest.raises(ValueError, match=r"Column 'question'.*'Q' / 'q'"):
        coherence.hindsight_graph_quality(
            _hindsight(), _hindsight_edges().assign(question="Q"), **gates)
    # a question listed in `questions` the other way: was a 'not built' question beside 'q'
    with pytest.raises(ValueError, match=r"Column 'question'.*questions.*'Q' / 'q'"):
        coherence.hindsight_graph_quality(_hindsight(), _hindsight_edges(),
                                          questions=iter(["Q"]), **gates)
    listed = coherence.hindsight_graph_quality(_hindsight(), _hindsight_edges(),
                                               questions=iter(["q", "r"]), **gates)
    assert listed.table["question"].tolist() == ["q", "r"]


def test_market_signal_metrics_ids_written_two_ways():
    reasoning = coherence.reasoning_graph_metrics(_forecast_events(), _hindsight(),
                                                  gates=False, rng=0)
    res = coherence.market_signal_metrics(reasoning, _hindsight(), _prices(), rng=0)
    assert res.statistic == 1.0
    # event ids read as text: the matches were not found (recall 0.0, not 1.0)
    with pytest.raises(ValueError, match=r"Column 'hindsight_event'.*reasoning.matches"):
        coherence.market_signal_metrics(reasoning, _hindsight().astype({"event": str}),
                                        _prices(), rng=0)
    # the question written 'Q' in the prices (or the events): NaN without a warning
    for hind, px in ((_hindsight(), _prices().assign(question="Q")),
                     (_hindsight().assign(question="Q"), _prices().assign(question="Q"))):
        with pytest.raises(ValueError, match=r"Column 'question'.*'Q' / 'q'"):
            coherence.market_signal_metrics(reasoning, hind, px, rng=0)


def test_market_signal_metrics_without_signals_warns():
    reasoning = coherence.reasoning_graph_metrics(_forecast_events(), _hindsight(),
                                                  gates=False, rng=0)
    with pytest.warns(coherence.DegenerateDataWarning, match="no scored forecast") as rec:
        res = coherence.market_signal_metrics(reasoning, _hindsight(),
                                              _prices().assign(price=0.5), rng=0)
    assert np.isnan(res.statistic)
    assert [w.filename for w in rec] == [__file__]  # at the caller's line


@settings(max_examples=30, deadline=None)
@given(st.lists(st.sampled_from([0, 1, 2]), min_size=1, max_size=4),
       st.sampled_from(["source", "target"]))
def test_relabelled_ids_same_result_and_mixed_raise(edge_rows, end):
    """Every event id written as text in every table gives the same metrics as the ints;
    text in one edge end only raises."""
    fed = _forecast_edges().iloc[[i % 2 for i in edge_rows]].reset_index(drop=True)
    base = _metrics(fed=fed).table
    as_text = _metrics(fe=_forecast_events().astype({"event": str}),
                       he=_hindsight().astype({"event": str}),
                       fed=fed.astype({"source": str, "target": str}),
                       hed=_hindsight_edges().astype({"source": str, "target": str})).table
    pd.testing.assert_frame_equal(as_text, base)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        with pytest.raises(ValueError, match=rf"Column '{end}'"):
            _metrics(fed=fed.astype({end: str}))


def test_no_dates_under_the_paper_gate_warn():
    """Forecast events without a date under convention='paper': every pair fails the 7-day
    gate, so KER and key-event precision were 0 without a word (1.0 and 1.0 with the
    dates); the warning names the table and the way out."""
    fe = _forecast_events().drop(columns="date")
    for call in (lambda: coherence.key_event_recall(fe, _hindsight(), rng=0),
                 lambda: coherence.reasoning_graph_metrics(fe, _hindsight(), gates=False,
                                                           rng=0)):
        with pytest.warns(coherence.DegenerateDataWarning,
                          match=r"no row of forecast_events has a date.*date_window_days"
                                r"=None") as rec:
            res = call()
        assert res.statistic == 0.0
        assert [w.filename for w in rec] == [__file__]
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        dated = coherence.key_event_recall(_forecast_events(), _hindsight(), rng=0)
        ungated = coherence.key_event_recall(fe, _hindsight(), date_window_days=None, rng=0)
        code = coherence.key_event_recall(fe, _hindsight(), convention="code", rng=0)
    assert dated.statistic == ungated.statistic == 1.0 and code.statistic == 1.0


@pytest.mark.parametrize("ids", [[1, "1", 2, 3], ["E1", "e1", "e2", "e3"],
                                 ["e1", " e1", "e2", "e3"]])
def test_hindsight_event_written_two_ways_within_a_question_raises(ids):
    """Two records of one hindsight event, the id written two ways: they were two events
    (KER 1/4 instead of 1/3 on the shared fixture: four key events, not three)."""
    from ._helpers import forecast_events
    from ._helpers import hindsight

    h = hindsight().iloc[:4].assign(event=ids)
    h4 = pd.concat([h, _hindsight().assign(question="other", event=[1, 2, 3])],
                   ignore_index=True)
    fe = _forecast_events().assign(event=["f1", "f2", "f3"])
    with pytest.raises(ValueError, match=r"Column 'event'.*each event of a question one way"
                                         r".*in 'q'.*row 0"):
        coherence.key_event_recall(forecast_events(), h4, rng=0)
    for call in (lambda: coherence.reasoning_graph_metrics(fe, h4, gates=False, rng=0),
                 lambda: coherence.hindsight_graph_quality(h4, _hindsight_edges(),
                                                           min_sources=0)):
        with pytest.raises(ValueError, match=r"Column 'event'.*one way"):
            call()
    # the same ids in different questions are left alone: each question numbers its own
    ok = h4.assign(event=[*ids[:1], *ids[:1], *ids[2:], *ids[:1], "x", "y"])
    assert coherence.key_event_recall(forecast_events(), ok, rng=0).n_obs == 2
