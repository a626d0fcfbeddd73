"""Hypothesis properties of key_event_recall (the hybrid matcher): the key events against
the documented ranking, KER and event precision/recall/F1 against the matched pairs,
bounds, invariance of values and interval to the order of the forecasts (rows of one
forecast kept in order: ties are documented as row order) and to model names, and a
duplicated model leaving the mean unchanged.
"""

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
from tests._reference_bootstrap_t import fraction_interval_by_hand


def _ker(*args, **kw):
    """key_event_recall, quiet when no forecast's question has a key event, or a
    forecast's question no hindsight event (both drawn here on purpose)."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", coherence.DegenerateDataWarning)
        warnings.simplefilter("ignore", coherence.SkippedRecordsWarning)
        return coherence.key_event_recall(*args, **kw)


_words = ["central bank raises rates", "strike closes ports", "election called early",
          "court blocks merger", "storm floods coast", "rates raised again by bank"]
_impact = st.sampled_from([0.0, 0.1, 0.2, 0.5, 1.0])


@st.composite
def _events(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame]:
    hind, fc = [], []
    for q in range(draw(st.integers(1, 3))):
        for e in range(draw(st.integers(0, 4))):
            day = draw(st.integers(1, 20))              # an event has one date
            for _ in range(draw(st.integers(1, 2))):   # an event may have two records
                hind.append({"question": f"q{q}", "event": f"e{e}",
                             "title": _words[(e + q) % len(_words)],
                             "date": f"2024-03-{day:02d}",
                             "magnitude": draw(_impact), "confidence": draw(_impact)})
        for m in ("m1", "m2"):
            for _ in range(draw(st.integers(0, 3))):
                fc.append({"model": m, "question": f"q{q}",
                           "title": draw(st.sampled_from(_words)),
                           "date": f"2024-03-{draw(st.integers(1, 20)):02d}"})
    if not hind:
        hind.append({"question": "q0", "event": "e0", "title": _words[0],
                     "date": "2024-03-01", "magnitude": 1.0, "confidence": 1.0})
    if not fc:
        fc.append({"model": "m1", "question": "q0", "title": _words[0], "date": "2024-03-01"})
    # an event given twice in one forecast is refused: keep each once
    return pd.DataFrame(fc).drop_duplicates(ignore_index=True), pd.DataFrame(hind)


@settings(max_examples=30)
@given(_events(), st.sampled_from(["paper", "code"]), st.integers(1, 3))
def test_key_events_and_ker_follow_the_definitions(case, convention, k):
    """Key events: the top k (ties by first appearance) of max(magnitude x confidence)
    over records, among those >= min_impact; KER, precision, recall and F1 of each
    forecast are those of its matched pairs; everything lies in [0, 1]."""
    fc, hind = case
    res = _ker(fc, hind, convention=convention, k=k, n_resamples=20,
                                     rng=0)
    min_impact = 0.0 if convention == "paper" else 0.2
    for q, sub in hind.groupby("question", sort=False):
        impact: dict[str, float] = {}
        for e, m, c in zip(sub["event"], sub["magnitude"], sub["confidence"], strict=True):
            impact[e] = max(impact.get(e, -1.0), m * c)
        ranked = sorted((e for e in impact if impact[e] >= min_impact),
                        key=lambda e: -impact[e])[:k]   # stable: first appearance
        got = res.key_events.loc[res.key_events["question"] == q]
        assert list(got["event"]) == ranked
        np.testing.assert_allclose(got["impact"].to_numpy(dtype=np.float64),
                                   [impact[e] for e in ranked])
    for r in res.table.to_dict("records"):
        pairs = res.matches[(res.matches["model"] == r["model"])
                            & (res.matches["question"] == r["question"])]
        assert r["n_matched"] == len(pairs)
        assert r["n_key_matched"] == int(pairs["is_key"].sum())
        assert r["n_key_matched"] <= r["n_key_events"] <= k
        assert r["n_matched"] <= min(r["n_forecast_events"], r["n_hindsight_events"])
        if r["n_key_events"]:
            assert r["ker"] == pytest.approx(r["n_key_matched"] / r["n_key_events"])
        else:
            assert math.isnan(r["ker"])
        if r["n_forecast_events"] + r["n_hindsight_events"]:
            assert r["f1"] == pytest.approx(2 * r["n_matched"] / (r["n_forecast_events"]
                                                                   + r["n_hindsight_events"]))
        assert pairs["hindsight_event"].is_unique and pairs["forecast_row"].is_unique
        assert (pairs["score"] >= res.threshold - 1e-12).all()
    ker = res.table["ker"].dropna()
    if len(ker):
        assert res.statistic == pytest.approx(ker.mean())
        lo, hi = res.confidence_interval.low, res.confidence_interval.high
        # Wilson's interval of a mean of fractions over questions, by hand
        ref = fraction_interval_by_hand(res.table["ker"].to_numpy(dtype=float),
                                        res.table["question"].to_numpy(dtype=object), 0.95)
        np.testing.assert_allclose((lo, hi), ref, rtol=1e-9, atol=1e-12)
        assert 0.0 <= lo <= res.statistic <= hi <= 1.0


def _cells(res, back=None) -> dict:
    back = back or {}
    cols = ["n_forecast_events", "n_key_events", "n_matched", "n_key_matched", "ker",
            "precision", "recall", "f1"]
    return {(back.get(r["model"], r["model"]), r["question"]): [r[c] for c in cols]
            for r in res.table.to_dict("records")}


@settings(max_examples=25)
@given(_events(), st.randoms(use_true_random=False))
def test_forecast_order_model_names_and_a_duplicated_model(case, rnd):
    """Forecasts listed in another order (each forecast's own rows kept in order) and
    models renamed in reverse order give the same table and, for the same rng, the same
    interval; a copy of every forecast under a new model name leaves the mean KER and
    the event precision unchanged."""
    fc, hind = case
    a = _ker(fc, hind, n_resamples=40, rng=1)
    units = list(dict.fromkeys(zip(fc["model"], fc["question"], strict=True)))
    rnd.shuffle(units)
    key = {u: i for i, u in enumerate(units)}
    order = sorted(range(len(fc)), key=lambda i: key[(fc["model"].iloc[i],
                                                      fc["question"].iloc[i])])
    rev = {"m1": "zz", "m2": "aa"}
    b = _ker(fc.iloc[order].assign(model=lambda d: d["model"].map(rev)),
                                   hind, n_resamples=40, rng=1)
    back = {v: k for k, v in rev.items()}
    ca, cb = _cells(a), _cells(b, back)
    assert set(ca) == set(cb)
    for u, vals in ca.items():
        np.testing.assert_allclose(cb[u], vals, rtol=1e-12, atol=1e-12)
    for name in ("statistic", "event_precision", "event_recall", "event_f1"):
        np.testing.assert_allclose(getattr(b, name), getattr(a, name), rtol=1e-12)
    np.testing.assert_allclose(b.confidence_interval[:2], a.confidence_interval[:2],
                               rtol=1e-12, atol=1e-12)
    doubled = pd.concat([fc, fc.assign(model=fc["model"] + "-copy")], ignore_index=True)
    c = _ker(doubled, hind, n_resamples=40, rng=1)
    np.testing.assert_allclose([c.statistic, c.event_precision],
                               [a.statistic, a.event_precision], rtol=1e-12)
