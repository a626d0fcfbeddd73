"""The whole forecasting-at-a-simulated-date benchmark on a small synthetic example:
the same calls as the end-to-end section of docs/forecast_scoring.md."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import coherence

WORDS = ["tariff", "ceasefire", "harvest", "strike", "budget", "summit", "drought", "merger",
         "recall", "ruling", "launch", "audit", "boycott", "pipeline", "election", "default"]


def synthetic_benchmark() -> dict[str, pd.DataFrame]:
    """Tasks, articles, hindsight graphs, two models' forecasts and graphs, and prices.

    Questions b1 and b2 have full hindsight graphs (11 events in a chain, 22
    sources); b3's graph is thin (3 events), so the quality gates exclude it.
    Model 'oracle' names every hindsight event of b1 and b2 on its date and links
    them as the hindsight graph does; model 'guess' names none.
    """
    tasks = pd.DataFrame({
        "question": ["b1", "b2", "b3", "mc1", "qty1", "tf1"],
        "start": ["2024-01-01", "2024-02-01", "2024-03-01", "2024-01-15", "2024-02-15",
                  "2024-03-15"],
        "resolution_date": ["2024-01-31", "2024-03-02", "2024-03-31", "2024-02-14",
                            "2024-03-16", "2024-04-14"],
        "outcome": [1, 0, 1, "Lyon", 42.0, "2024-Q2"],
        "type": ["binary", "binary", "binary", "multiple_choice", "quantity", "timeframe"],
        "domain": ["economics", "politics", "politics", "sports", "economics", "science"]})
    hind_rows, edge_rows, article_rows = [], [], []
    for q, start, n_events, sign in (("b1", "2024-01-01", 11, 1), ("b2", "2024-02-01", 11, -1),
                                     ("b3", "2024-03-01", 3, 1)):
        t0 = pd.Timestamp(start)
        for k in range(n_events):
            day = t0 + pd.Timedelta(days=2 * k + 1)
            srcs = [f"{q}-a{2 * k}", f"{q}-a{2 * k + 1}"]
            hind_rows.append({
                "question": q, "event": f"{q}e{k}",
                "title": f"{WORDS[k]} {WORDS[(k + 5) % 16]} news {q}",
                "date": day.date().isoformat(), "direction": sign if k % 3 else -sign,
                "magnitude": 0.2 + 0.07 * k, "confidence": 0.9, "sources": srcs,
                "is_outcome": False})
            article_rows += [{"id": s, "question": q,
                              "published": f"{day.date().isoformat()}T08:00:00+00:00"}
                             for s in srcs]
            if k:
                edge_rows.append({"question": q, "source": f"{q}e{k - 1}",
                                  "target": f"{q}e{k}", "relation": "causes",
                                  "confidence": 0.8, "strength": 0.5})
    hindsight = pd.DataFrame(hind_rows)
    edges = pd.DataFrame(edge_rows)
    articles = pd.DataFrame(article_rows)
    # forecasts: the oracle answers everything right, the guesser everything wrong
    answers = pd.DataFrame({
        "question": tasks["question"], "type": tasks["type"],
        "oracle_p": [0.8, 0.3, 0.9, 0.7, None, None],
        "oracle_pred": [None, None, None, "lyon", 40.0, "2024-q2"],
        "guess_p": [0.2, 0.6, 0.4, 0.6, None, None],
        "guess_pred": [None, None, None, "Paris", 30.0, "2024-Q3"]})
    forecasts = pd.concat([
        answers.assign(model=m, probability=answers[f"{m}_p"], prediction=answers[f"{m}_pred"])
        for m in ("oracle", "guess")], ignore_index=True)
    forecasts = forecasts.merge(tasks[["question", "outcome", "start", "resolution_date"]],
                                on="question")[["model", "question", "type", "probability",
                                                "prediction", "outcome", "start",
                                                "resolution_date"]]
    fe = hindsight.loc[hindsight["question"].isin(["b1", "b2"])]
    forecast_events = pd.concat([
        fe.assign(model="oracle", event="f" + fe["event"])[
            ["model", "question", "event", "title", "date"]],
        pd.DataFrame({"model": ["guess"] * 2, "question": ["b1", "b2"], "event": ["g1", "g2"],
                      "title": ["unrelated gossip", "weather report"], "date": [None] * 2})],
        ignore_index=True)
    fed = edges.loc[edges["question"].isin(["b1", "b2"])]
    forecast_edges = fed.assign(model="oracle", source="f" + fed["source"],
                                target="f" + fed["target"])[
        ["model", "question", "source", "target", "relation"]]
    price_rows = []
    for q, start, sign in (("b1", "2024-01-01", 1), ("b2", "2024-02-01", -1)):
        t0 = pd.Timestamp(start)
        p = 0.5
        for d in range(30):
            k = (d - 1) // 2
            if d % 2 == 1 and 0 <= k < 11:      # the day after event k: move its way
                p += 0.04 * (sign if k % 3 else -sign)
            price_rows.append({"question": q, "date": (t0 + pd.Timedelta(days=d)).date()
                               .isoformat(), "price": round(p, 4)})
    prices = pd.DataFrame(price_rows)
    return {"tasks": tasks, "articles": articles, "hindsight": hindsight, "edges": edges,
            "forecasts": forecasts, "forecast_events": forecast_events,
            "forecast_edges": forecast_edges, "prices": prices}


def test_the_benchmark_end_to_end():
    b = synthetic_benchmark()
    # 1. the task table and its statistics
    tasks = coherence.validate_tasks(b["tasks"])
    stats = coherence.dataset_statistics(b["tasks"])
    assert stats.n_questions == 6 and stats.types.set_index("type").loc["binary", "n"] == 3
    assert stats.horizons.set_index("type").loc["(all)", "median"] == 30.0
    # 2. simulated dates (window midpoints) and what the agent may read then
    sim = coherence.simulated_dates(tasks)
    b1_date = sim.set_index("question").loc["b1", "simulated_date"]
    assert b1_date == pd.Timestamp("2024-01-16")
    gate = coherence.TemporalGateway(b1_date.tz_localize("UTC"))
    visible = gate.filter_articles(b["articles"].query("question == 'b1'"))
    assert len(visible) == 14       # events of Jan 2, 4, ..., 14, two articles each
    # 3. outcome scores over a table mixing types
    scores = coherence.question_scores(b["forecasts"], n_resamples=200, rng=0)
    acc = scores.table.set_index("model")["accuracy"]
    assert acc["oracle"] == 1.0 and acc["guess"] == 0.0
    assert scores.table.set_index("model").loc["oracle", "brier"] == pytest.approx(
        np.mean([0.04, 0.09, 0.01, 0.09]))
    # 4. accuracy by horizon: every forecast made at the window midpoint
    per = scores.per_forecast.join(b["forecasts"][["start", "resolution_date"]])
    per = per.merge(sim[["question", "simulated_date"]], on="question")
    per["horizon"] = coherence.horizon_positions(per).to_numpy()
    assert set(per["horizon"]) == {"mid"}
    by_h = coherence.accuracy_by_horizon(per, n_resamples=200, rng=0)
    assert by_h.table.set_index(["model", "horizon"]).loc[("oracle", "mid"), "accuracy"] == 1
    roll = coherence.rolling_accuracy(per, window="60D", min_periods=1)
    assert roll.loc[roll["model"] == "guess", "accuracy"].eq(0).all()
    # 5. quality gates, then the reasoning metrics of the forecast graphs
    gq = coherence.hindsight_graph_quality(b["hindsight"], b["edges"],
                                           questions=b["tasks"]["question"])
    assert gq.passed == ("b1", "b2") and gq.n_excluded == 4
    fc = sim.rename(columns={"position": "_"}).merge(
        pd.DataFrame({"model": ["oracle", "guess"]}), how="cross")
    fc = fc.loc[fc["question"].isin(["b1", "b2", "b3"]), ["model", "question",
                                                           "simulated_date"]]
    reasoning = coherence.reasoning_graph_metrics(
        b["forecast_events"], b["hindsight"], forecast_edges=b["forecast_edges"],
        hindsight_edges=b["edges"], forecasts=fc, gates=gq, n_resamples=200, rng=0)
    s = reasoning.summary_table.set_index("model")
    assert s.loc["oracle", "key_event_recall"] == 1.0
    assert s.loc["oracle", "edge_recall"] == 1.0 and s.loc["oracle", "direction_accuracy"] == 1
    assert s.loc["oracle", "forecast_depth"] == 10.0
    assert s.loc["oracle", "date_error_days"] == 0.0
    assert s.loc["guess", "key_event_recall"] == 0.0
    # the oracle names all 11 events; 7 of b1's happened before 2024-01-16
    b1 = reasoning.table.set_index(["model", "question"]).loc[("oracle", "b1")]
    assert b1["n_accessible"] == 7 and b1["accessible_precision"] == pytest.approx(7 / 11)
    assert b1["accessible_recall"] == 1.0
    assert reasoning.n_excluded_forecasts == 2           # both models' b3 forecasts
    # 6. market checks across questions, and the market signals the graphs found
    with pytest.warns(coherence.SkippedRecordsWarning, match="no prices \\('b3'\\)"):
        market = coherence.market_checks(b["hindsight"], b["prices"], n_resamples=200, rng=0)
    assert market.event_agreement == 1.0 and market.n_events_counted == 22
    assert market.pooled_correlation > 0.9
    signals = coherence.market_signal_metrics(reasoning, b["hindsight"], b["prices"],
                                              n_resamples=200, rng=0)
    sig = signals.table.set_index("model")
    assert (sig.loc["oracle", "signal_recall"] == 1.0).all()
    assert (sig.loc["guess", "signal_recall"] == 0.0).all()
