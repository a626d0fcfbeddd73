"""The rows of each model (and horizon, question) found in one pass give exactly the
answers of the old path, which filtered the whole table once per label (``df[by] == m``,
quadratic in the number of models or questions): label_rows against that filter, and
accuracy_by_horizon, question_scores, rolling_accuracy, reasoning_graph_metrics' means
and market_signal_metrics' table against the old filters kept here as the reference."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any
from unittest import mock

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence
from coherence._resampling import cluster_mean_interval
from coherence._scoring import _graphs
from coherence._scoring import _horizons
from coherence._scoring import _questions
from coherence._scoring._ids import POOLED
from coherence._scoring._ids import label_rows
from coherence._scoring._ids import rows_of_codes
from coherence._scoring._market_signal import _signal_table

_LABELS = st.sampled_from(["b", "a", "late", "early", "mid", "zz", "x y"])


def _brute_rows(values: Any) -> list[np.ndarray]:
    """The old path: one ``==`` filter over every row per distinct label."""
    s = pd.Series(values) if not isinstance(values, pd.Series) else values
    return [np.flatnonzero((s == m).to_numpy()) for m in pd.unique(s)]


@contextmanager
def _old_grouping(*modules: Any) -> Iterator[None]:
    with mock.patch.multiple(modules[0], label_rows=_brute_rows):
        if len(modules) > 1:
            with _old_grouping(*modules[1:]):
                yield
        else:
            yield


@settings(max_examples=60, deadline=None)
@given(st.lists(st.one_of(_LABELS, st.integers(0, 3)), min_size=1, max_size=30),
       st.sampled_from(["object", "string", "category"]))
def test_label_rows_is_the_filter_per_label(values, dtype):
    if dtype != "object":
        values = [str(v) for v in values]
    s = pd.Series(values, dtype=dtype)
    got = label_rows(s)
    want = _brute_rows(s)
    assert len(got) == len(want)
    for a, b in zip(got, want, strict=True):
        np.testing.assert_array_equal(a, b)


@given(st.lists(st.integers(0, 5), max_size=30), st.integers(0, 3))
def test_rows_of_codes_is_the_filter_per_code(codes, extra):
    n_groups = (max(codes) + 1 if codes else 0) + extra
    got = rows_of_codes(np.array(codes, dtype=np.int64), n_groups)
    assert len(got) == n_groups
    for g, at in enumerate(got):
        np.testing.assert_array_equal(at, np.flatnonzero(np.array(codes) == g))


_HORIZON_ROWS = st.lists(st.tuples(st.sampled_from(["m2", "m1", "gpt", "m3"]), _LABELS,
                                   st.integers(0, 5), st.integers(0, 1)),
                         min_size=1, max_size=40)


@settings(max_examples=40, deadline=None)
@given(_HORIZON_ROWS, st.integers(0, 3))
def test_accuracy_by_horizon_cells_as_the_old_filter(rows, seed):
    # each cell's interval gets exactly the rows (values and order) of the old filter
    # ``(horizon == h) & (model == m)``; its stream is chosen as before, by the cell
    df = pd.DataFrame(rows, columns=["model", "horizon", "question", "correct"])
    df["question"] = "q" + df["question"].astype(str)
    df["forecast"] = range(len(df))  # deliberate repeats told apart
    calls: list[tuple[np.ndarray, np.ndarray]] = []

    def recorded(values, clusters, *args, **kwargs):
        calls.append((values, clusters))
        return cluster_mean_interval(values, clusters, *args, **kwargs)

    with mock.patch.object(_horizons, "cluster_mean_interval", recorded):
        res = coherence.accuracy_by_horizon(df, n_resamples=30, rng=seed)
    c = df["correct"].to_numpy(dtype=np.float64)
    qs = df["question"].to_numpy(dtype=object)
    assert len(calls) == len(res.table) + 1   # the cells, then the overall interval
    for (m, h, n, n_q, acc), (values, clusters) in zip(
            res.table[["model", "horizon", "n", "n_questions", "accuracy"]].itertuples(
                index=False), calls, strict=False):
        mask = (df["horizon"] == h).to_numpy()
        if m != POOLED:
            mask = mask & (df["model"] == m).to_numpy()
        np.testing.assert_array_equal(values, c[mask])
        assert list(clusters) == list(qs[mask])
        assert (n, n_q, acc) == (mask.sum(), len(set(qs[mask])), float(c[mask].mean()))
    # every non-empty cell has its row
    cells = {(m, h) for m in [*pd.unique(df["model"]), POOLED] for h in pd.unique(df["horizon"])}
    assert set(zip(res.table["model"], res.table["horizon"], strict=True)) == cells - {
        (m, h) for m, h in cells if m != POOLED
        and not ((df["model"] == m) & (df["horizon"] == h)).any()}


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["m2", "m1", "gpt"]), st.integers(0, 5),
                          st.booleans(), st.floats(0.01, 0.99)), min_size=1, max_size=30),
       st.integers(0, 3))
def test_question_scores_models_as_the_old_filter(rows, seed):
    # one forecast per (model, question): the question's type and outcome from its id
    rows = list({(m, q): (m, q, b, p) for m, q, b, p in rows}.values())
    df = pd.DataFrame({
        "model": [r[0] for r in rows], "question": [f"q{r[1]}" for r in rows],
        "type": ["binary" if r[1] % 2 else "quantity" for r in rows],
        "probability": [r[3] if r[1] % 2 else None for r in rows],
        "prediction": [None if r[1] % 2 else 100.0 + 20 * r[3] for r in rows],
        "outcome": [int(r[1] % 4 == 1) if r[1] % 2 else 105.0 for r in rows]})
    new = coherence.question_scores(df, n_resamples=20, rng=seed)
    with _old_grouping(_questions):
        old = coherence.question_scores(df, n_resamples=20, rng=seed)
    pd.testing.assert_frame_equal(new.table, old.table, check_exact=True)
    pd.testing.assert_frame_equal(new.by_type, old.by_type, check_exact=True)
    assert new.statistic == old.statistic
    assert new.confidence_interval == old.confidence_interval


@settings(max_examples=30, deadline=None)
@given(st.lists(st.tuples(st.sampled_from(["m2", "m1", "gpt"]), st.integers(0, 40),
                          st.integers(0, 1)), min_size=1, max_size=40),
       st.sampled_from(["7D", 3]))
def test_rolling_accuracy_models_as_the_old_filter(rows, window):
    df = pd.DataFrame({"model": [r[0] for r in rows],
                       "start": pd.Timestamp("2024-01-01")
                       + pd.to_timedelta([r[1] for r in rows], unit="D"),
                       "correct": [r[2] for r in rows], "forecast": range(len(rows))})
    new = coherence.rolling_accuracy(df, window=window, min_periods=1)
    with _old_grouping(_horizons):
        old = coherence.rolling_accuracy(df, window=window, min_periods=1)
    pd.testing.assert_frame_equal(new, old, check_exact=True)


_WORDS = ["central", "bank", "raises", "interest", "rates", "dock", "workers", "strike",
          "closes", "ports", "election", "early", "drought", "wheat", "harvest", "minister",
          "resigns", "oil", "price", "jumps"]


def _graph_inputs(seed: int, n_q: int = 6, n_models: int = 3
                  ) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """Hindsight events, forecast events and daily prices of ``n_q`` questions."""
    gen = np.random.default_rng(seed)
    day = pd.Timestamp("2024-01-01")
    hind, fore = [], []
    for q in range(n_q):
        titles = [" ".join(gen.choice(_WORDS, 4)) for _ in range(6)]
        dates = [str((day + pd.Timedelta(days=int(gen.integers(2, 40)))).date())
                 for _ in range(6)]
        for e, title in enumerate(titles):
            hind.append({"question": f"q{q}", "event": f"e{e}", "title": title,
                         "date": dates[e], "direction": int(gen.choice([-1, 1])),
                         "magnitude": float(gen.uniform(0.2, 1)), "confidence": 1.0})
        for m in range(n_models):
            for f in range(int(gen.integers(1, 5))):
                e = int(gen.integers(0, 6))  # most forecast events copy a hindsight one
                copy = gen.uniform() < 0.7
                fore.append({"model": f"m{m}", "question": f"q{q}", "event": f"f{f}",
                             "title": titles[e] if copy else "weather turns cold",
                             "date": dates[e]})
    days = pd.date_range(day, periods=45, freq="D").strftime("%Y-%m-%d")
    prices = pd.DataFrame({
        "question": np.repeat([f"q{q}" for q in range(n_q)], len(days)),
        "date": np.tile(days, n_q),
        "price": np.clip(0.5 + np.cumsum(gen.normal(0, 0.04, n_q * len(days))), 0.02, 0.98)})
    return pd.DataFrame(hind), pd.DataFrame(fore), prices


def _old_signal_counts(reasoning: Any, signals: pd.DataFrame) -> list[tuple[int, ...]]:
    """Per scored forecast, its signal and turning events and those it matched, by the old
    filters (one pass over the signals and the matches per forecast)."""
    by, matched, out = reasoning.by, reasoning.matches, []
    for _, r in reasoning.table.iterrows():
        q = r["question"]
        sq = signals.loc[signals["question"] == q]
        hit = set(matched.loc[(matched[by] == r[by]) & (matched["question"] == q),
                              "hindsight_event"])
        ids = set(sq["event"])
        tids = set(sq.loc[sq["near_turning_point"], "event"])
        out.append((len(ids), len(ids & hit), len(tids), len(tids & hit)))
    return out


@pytest.mark.parametrize("seed", range(4))
def test_reasoning_means_and_signal_table_as_the_old_filters(seed):
    hind, fore, prices = _graph_inputs(seed)
    new = coherence.reasoning_graph_metrics(fore, hind, gates=False, n_resamples=10, rng=0)
    with _old_grouping(_graphs):
        old = coherence.reasoning_graph_metrics(fore, hind, gates=False, n_resamples=10,
                                                rng=0)
    pd.testing.assert_frame_equal(new.summary_table, old.summary_table,
                                  check_exact=True)
    res = coherence.market_signal_metrics(new, hind, prices, n_resamples=10, rng=0)
    signals = res.signal_events
    assert len(signals) and signals["near_turning_point"].any()  # the table is exercised
    assert res.table["n_signal_matched"].sum() > 0
    table = _signal_table(new, signals, {})
    counts = ["n_signal_events", "n_signal_matched", "n_turning_events", "n_turning_matched"]
    assert list(table[counts].itertuples(index=False, name=None)) == _old_signal_counts(
        new, signals)
