"""Hypothesis properties of reasoning_graph_metrics: the table, statistic and (same rng)
interval do not depend on the order of the forecasts (each forecast's own rows kept in
order: match ties are documented as row order), on the interleaving of the questions'
hindsight rows, on model names (order-reversing too) or on question names renamed in the
same sorted order; metrics are shares in [0, 1].
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence

_words = ["central bank raises rates", "strike closes ports", "election called early",
          "court blocks merger", "storm floods coast", "rates raised again by bank"]


@st.composite
def _graphs(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame]:
    hind, fc = [], []
    for q in range(draw(st.integers(2, 4))):
        for e in range(draw(st.integers(1, 4))):
            hind.append({"question": f"q{q}", "event": f"e{e}",
                         "title": _words[(e + q) % len(_words)],
                         "date": f"2024-03-{draw(st.integers(1, 20)):02d}",
                         "magnitude": draw(st.sampled_from([0.1, 0.2, 0.5, 1.0])),
                         "confidence": draw(st.sampled_from([0.5, 1.0]))})
        for m in ("m1", "m2", "m3"):
            for j in range(draw(st.integers(0, 3))):
                fc.append({"model": m, "question": f"q{q}", "event": f"f{j}",
                           "title": draw(st.sampled_from(_words)),
                           "date": f"2024-03-{draw(st.integers(1, 20)):02d}"})
    if not fc:
        fc.append({"model": "m1", "question": "q0", "event": "f0", "title": _words[0],
                   "date": "2024-03-01"})
    return pd.DataFrame(fc), pd.DataFrame(hind)


def _metrics(fe, hind, rng=3):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", coherence.DegenerateDataWarning)
        return coherence.reasoning_graph_metrics(fe, hind, gates=False, n_resamples=40,
                                                 metric="event_recall", rng=rng)


def _norm(res, back=None):
    t = res.table
    if back is not None:
        t = t.assign(model=t["model"].map(back))
    return t.sort_values(["model", "question"]).reset_index(drop=True)


@settings(max_examples=25)
@given(_graphs(), st.randoms(use_true_random=False))
def test_reasoning_graph_metrics_forecast_order_and_names(graph, rnd):
    fe, hind = graph
    a = _metrics(fe, hind)
    shares = a.table[list(coherence.REASONING_METRICS)].drop(
        columns=["date_error_days", "forecast_depth"]).to_numpy(dtype=float)
    assert np.all(np.isnan(shares) | ((shares >= 0) & (shares <= 1)))
    # forecasts in another order, each forecast's rows kept in order
    units = list(dict.fromkeys(zip(fe["model"], fe["question"], strict=True)))
    rnd.shuffle(units)
    rank = {u: i for i, u in enumerate(units)}
    order = sorted(range(len(fe)), key=lambda i: rank[(fe["model"].iloc[i],
                                                        fe["question"].iloc[i])])
    # hindsight rows of the questions interleaved at random, each question's order kept
    hq = list(hind["question"])
    rnd.shuffle(hq)
    pos = {q: [i for i in range(len(hind)) if hind["question"].iloc[i] == q] for q in set(hq)}
    horder = [pos[q].pop(0) for q in hq]
    rev = {"m1": "z", "m2": "k", "m3": "a"}
    back = {v: k for k, v in rev.items()}
    b = _metrics(fe.iloc[order].assign(model=lambda d: d["model"].map(rev)),
                 hind.iloc[horder])
    keep = {f"q{i}": f"a{i}" for i in range(5)}
    c = _metrics(fe.assign(question=fe["question"].map(keep)),
                 hind.assign(question=hind["question"].map(keep)))
    pd.testing.assert_frame_equal(_norm(b, back), _norm(a))
    pd.testing.assert_frame_equal(
        _norm(c).assign(question=lambda d: d["question"].str.replace("a", "q")), _norm(a))
    for other in (b, c):
        np.testing.assert_allclose([other.statistic, *other.confidence_interval[:2]],
                                   [a.statistic, *a.confidence_interval[:2]],
                                   rtol=0, atol=1e-12)
        assert other.n_obs == a.n_obs
