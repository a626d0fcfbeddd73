"""Hypothesis properties of contamination_filter (which rows are dropped against the
documented rule and a prefix match written here, a cutoff mapping and the same cutoffs
as a column agreeing, the order of the rows, renamed columns, an added column, aware
dates compared in UTC) and of grounding_split (the per-group means against a loop over
the forecasts, invariance to the order of the rows and to model names).
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

# --------------------------------------------------------------------------- contamination
#: keys with distinct normalised names; 'gpt-4o' is a prefix of 'gpt-4o-mini'
_CUTOFFS = {"gpt-4o": "2023-10-01", "gpt-4o-mini": "2023-12-01", "claude-3": "2023-08-01",
            "Llama": "2023-11-15"}
_MODELS = ["gpt-4o", "openai/gpt-4o-2024-05-13", "openai/GPT-4o-mini-2024-07-18",
           "anthropic/claude-3-opus", "meta/llama-3-70b", "mystery", "gpt-4"]
#: opening dates on, just before and just after the cutoffs
_OPENED = ["2023-08-01", "2023-09-30", "2023-10-01", "2023-10-02", "2023-11-15",
           "2023-12-01", "2024-01-01", "2023-11-14T23:59:59"]


def _key_by_hand(model: str) -> str | None:
    """Exact key, else the longest key whose lower-cased name prefixes the model's last
    path segment, lower-cased."""
    if model in _CUTOFFS:
        return model
    name = model.rsplit("/", 1)[-1].lower()
    hits = [k for k in _CUTOFFS if name.startswith(k.lower())]
    return max(hits, key=len) if hits else None


_rows = st.lists(st.tuples(st.sampled_from(_MODELS), st.sampled_from(["q1", "q2", "q3", "q4"]),
                           st.sampled_from(_OPENED)), min_size=1, max_size=14)


def _table(rows) -> pd.DataFrame:
    # a question opens once: its label carries its opening date
    return pd.DataFrame([(m, f"{q}@{o}", o) for m, q, o in rows],
                        columns=["model", "question", "opened"],
                        index=[f"r{i}" for i in range(len(rows))])


@settings(max_examples=50)
@given(_rows, st.randoms(use_true_random=False))
def test_contamination_filter_follows_the_rule(rows, rnd):
    """A row is dropped exactly when its model's key is known and its question opened
    strictly before the key's cutoff; shuffled rows, renamed columns plus an added
    column, and the same cutoffs given as a column drop the same rows."""
    df = _table(rows)
    rep = coherence.contamination_filter(df, _CUTOFFS)
    expected = set()
    for label, (m, _, o) in zip(df.index, rows, strict=True):
        key = _key_by_hand(m)
        if key is not None and pd.Timestamp(o) < pd.Timestamp(_CUTOFFS[key]):
            expected.add(label)
    assert set(rep.dropped.index) == expected
    assert set(rep.kept.index) == set(df.index) - expected
    assert list(rep.kept.index) == [i for i in df.index if i not in expected]  # row order
    assert set(rep.unknown_models) == {m for m, *_ in rows if _key_by_hand(m) is None}
    # (an unknown model's key is missing: None, or NaN in a pandas string column)
    assert {m: None if pd.isna(k) else k for m, k in zip(
        rep.matches["model"], rep.matches["key"], strict=True)} == {
        m: _key_by_hand(m) for m, *_ in rows}

    perm = list(range(len(df)))
    rnd.shuffle(perm)
    shuffled = coherence.contamination_filter(df.iloc[perm], _CUTOFFS)
    renamed = coherence.contamination_filter(
        df.rename(columns={"model": "who", "question": "id", "opened": "asked"}).assign(
            x=1.0), _CUTOFFS, model="who", question="id", opened="asked")
    per_row = [None if _key_by_hand(m) is None else _CUTOFFS[_key_by_hand(m)]
               for m, *_ in rows]
    column = coherence.contamination_filter(df.assign(cutoff=per_row), "cutoff")
    for other in (shuffled, renamed, column):
        assert set(other.dropped.index) == expected
        assert set(other.unknown_models) == set(rep.unknown_models)


@settings(max_examples=30)
@given(_rows, st.sampled_from([-5, 0, 1, 9]))
def test_contamination_filter_compares_aware_dates_in_utc(rows, hours):
    """The same instants written in another UTC offset drop the same rows: on the
    boundary, an opening at the cutoff instant is kept."""
    df = _table(rows)
    base = coherence.contamination_filter(df.assign(opened=[pd.Timestamp(o).isoformat() +
                                                            "+00:00" for o in df["opened"]]),
                                          {k: v + "T00:00+00:00" for k, v in _CUTOFFS.items()})
    shift = pd.Timedelta(hours=hours)
    tz = f"{'+' if hours >= 0 else '-'}{abs(hours):02d}:00"
    moved = df.assign(opened=[(pd.Timestamp(o) + shift).isoformat() + tz
                              for o in df["opened"]])
    cut = {k: (pd.Timestamp(v) + shift).isoformat() + tz for k, v in _CUTOFFS.items()}
    other = coherence.contamination_filter(moved, cut)
    assert set(other.dropped.index) == set(base.dropped.index)


# --------------------------------------------------------------------------- grounding split
@st.composite
def _grounding(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """Binary forecasts of 2..3 models on 2..5 questions (some 0.5, some repeated in
    time), the sources they cite (some none) and the reference sources."""
    fc, cites = [], []
    questions = [f"q{i}" for i in range(draw(st.integers(2, 5)))]
    outcome = {q: draw(st.integers(0, 1)) for q in questions}
    for m in ["m1", "m2", "m3"][: draw(st.integers(2, 3))]:
        for q in questions:
            if not draw(st.booleans()) and q != "q0":
                continue
            for t in range(draw(st.integers(1, 2))):   # an earlier forecast is replaced
                fc.append({"model": m, "question": q, "forecast_date": f"2024-01-0{t + 1}",
                           "probability": draw(st.sampled_from([0.1, 0.5, 0.5, 0.7, 0.9])),
                           "outcome": outcome[q]})
            if draw(st.booleans()):
                cites.append({"model": m, "question": q,
                              "sources": draw(st.lists(st.sampled_from("abcde"), max_size=3))})
    if not cites:
        cites.append({"model": fc[0]["model"], "question": fc[0]["question"],
                      "sources": ["a"]})
    ref = {q: draw(st.lists(st.sampled_from("abcz"), max_size=3)) for q in questions}
    return pd.DataFrame(fc), pd.DataFrame(cites), ref


def _split(fc: pd.DataFrame, cites: pd.DataFrame, ref: dict, convention: str,
           acc: str) -> pd.DataFrame:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        scores = coherence.forecast_scores(fc, accuracy_convention=acc, n_resamples=5, rng=0)
        src = coherence.source_precision(cites, ref, convention=convention, n_resamples=5,
                                         rng=0)
    return coherence.grounding_split(scores, sources=src)


def _split_by_hand(fc: pd.DataFrame, cites: pd.DataFrame, ref: dict, convention: str,
                   acc: str) -> dict[str, tuple[int, float]]:
    latest = fc.sort_values("forecast_date", kind="stable").groupby(
        ["model", "question"]).tail(1)
    cited: dict[tuple[str, str], set[str]] = {}
    for m, q, s in cites.itertuples(index=False):
        cited.setdefault((m, q), set()).update(s)
    vals: dict[str, list[float]] = {"correct": [], "incorrect": []}
    for m, q, _, p, y in latest.itertuples(index=False):
        if (m, q) not in cited:
            continue
        if acc == "code" and p == 0.5:
            continue   # split credit: left out
        group = "correct" if (p >= 0.5) == (y == 1) else "incorrect"
        c = cited[(m, q)]
        if not c:
            if convention == "code":
                continue
            vals[group].append(0.0)
        else:
            vals[group].append(len(c & set(ref[q])) / len(c))
    return {g: (len(v), sum(v) / len(v) if v else math.nan) for g, v in vals.items()}


@settings(max_examples=40)
@given(_grounding(), st.sampled_from(["paper", "code"]), st.sampled_from(["paper", "code"]),
       st.randoms(use_true_random=False))
def test_grounding_split_matches_a_loop_and_ignores_order_and_names(data, convention, acc,
                                                                    rnd):
    fc, cites, ref = data
    out = _split(fc, cites, ref, convention, acc)
    assert list(out["metric"]) == ["source_precision"] * 2
    assert list(out["group"]) == ["correct", "incorrect"]
    expected = _split_by_hand(fc, cites, ref, convention, acc)
    for row in out.itertuples(index=False):
        n, mean = expected[row.group]
        assert row.n == n
        assert (math.isnan(row.mean) and math.isnan(mean)) or row.mean == pytest.approx(
            mean, abs=1e-12)
        assert math.isnan(row.mean) or 0.0 <= row.mean <= 1.0
    pf, pc = list(range(len(fc))), list(range(len(cites)))
    rnd.shuffle(pf)
    rnd.shuffle(pc)
    rev = {"m1": "z9", "m2": "b5", "m3": "a0"}
    for f2, c2 in ((fc.iloc[pf], cites.iloc[pc]),
                   (fc.assign(model=fc["model"].map(rev)),
                    cites.assign(model=cites["model"].map(rev)))):
        other = _split(f2, c2, ref, convention, acc)
        pd.testing.assert_frame_equal(other, out, check_exact=False, rtol=0, atol=1e-12)


def test_grounding_split_of_a_duplicated_study_is_unchanged():
    """Every forecast and citation repeated under a second set of model names: the
    counts double and the means stay."""
    fc = pd.DataFrame({"model": ["m", "m", "m"], "question": ["a", "b", "c"],
                       "forecast_date": "2024-01-01", "probability": [0.9, 0.2, 0.6],
                       "outcome": [1, 1, 0]})
    cites = pd.DataFrame({"model": ["m"] * 3, "question": ["a", "b", "c"],
                          "sources": [["x", "y"], ["x"], ["z"]]})
    ref = {"a": ["x"], "b": ["x"], "c": ["x"]}
    one = _split(fc, cites, ref, "paper", "paper")
    two = _split(pd.concat([fc, fc.assign(model="n")]),
                 pd.concat([cites, cites.assign(model="n")]), ref, "paper", "paper")
    np.testing.assert_array_equal(two["n"], 2 * one["n"])
    np.testing.assert_allclose(two["mean"], one["mean"], rtol=0, atol=1e-15)
    assert one["n"].tolist() == [1, 2] and one["mean"].tolist() == [0.5, 0.5]


def test_forecast_scores_count_each_row_of_a_repeated_index_once():
    """Regression: the latest forecast per (model, question) was kept by index label, so
    that tables concatenated without a new index (labels 0, 1, 2 twice) counted each
    forecast once per row with its label: here 14 forecasts instead of 8, model b's
    Brier score 0.295 instead of 0.270 and its accuracy 0.375 instead of 0.4; and
    grounding_split's counts doubled."""
    a = pd.DataFrame({"model": "a", "question": ["q0", "q1", "q2"],
                      "forecast_date": "2024-01-01", "probability": [0.9, 0.2, 0.6],
                      "outcome": [1, 1, 0]})
    b = pd.DataFrame({"model": "b", "question": ["q0", "q1", "q2", "q3", "q4"],
                      "forecast_date": "2024-01-01",
                      "probability": [0.9, 0.2, 0.6, 0.7, 0.5], "outcome": [1, 1, 0, 1, 0]})
    stacked = pd.concat([a, b])                      # index 0, 1, 2, 0, 1, 2, 3, 4
    fresh = stacked.reset_index(drop=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = coherence.forecast_scores(stacked, n_resamples=20, rng=1)
        ref = coherence.forecast_scores(fresh, n_resamples=20, rng=1)
    assert len(got.per_forecast) == 8
    assert list(got.per_forecast.index) == list(stacked.index)
    pd.testing.assert_frame_equal(got.table, ref.table)
    brier_b = got.table.set_index("model").loc["b", "brier"]
    assert brier_b == pytest.approx(np.mean([0.01, 0.64, 0.36, 0.09, 0.25]))
