"""Tests of the ForecastBench leaderboard scores."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from coherence import (
    FORECASTBENCH_SCORES,
    ForecastBenchComparisonResult,
    ForecastBenchResult,
    forecastbench_scores,
)
from coherence._scoring._forecastbench import _scores
from tests._reference_forecastbench import reference_adjusted_brier


def panel(rng: np.random.Generator, n_models: int = 4, n_questions: int = 30,
          missing: float = 0.3) -> pd.DataFrame:
    rows = []
    skill = rng.uniform(0.1, 0.4, n_models)
    for q in range(n_questions):
        y = int(rng.integers(0, 2))
        for m in range(n_models):
            if m > 0 and rng.uniform() < missing:  # model 0 answers everything
                continue
            p = float(np.clip(y + rng.normal(0, skill[m]) * (1 if y == 0 else -1), 0, 1))
            rows.append({"model": f"m{m}", "question": f"q{q:02d}", "probability": abs(p),
                         "outcome": y})
    return pd.DataFrame(rows)


def by_model(res: ForecastBenchResult) -> pd.DataFrame:
    return res.table.set_index("model")


def test_matches_dummy_variable_ols_reference():
    rng = np.random.default_rng(0)
    df = panel(rng)
    res = forecastbench_scores(df, n_resamples=9, rng=0)
    ref = reference_adjusted_brier(df)
    got = by_model(res)["difficulty_adjusted_brier"]
    for m, value in ref.items():
        assert got[m] == pytest.approx(value, abs=1e-12)


def test_fixed_effects_subset_matches_reference():
    rng = np.random.default_rng(1)
    df = panel(rng, n_models=5)
    res = forecastbench_scores(df, fixed_effects_models=["m0", "m1", "m2"], n_resamples=9,
                               rng=0)
    ref = reference_adjusted_brier(df, fe_models=["m0", "m1", "m2"])
    got = by_model(res)["difficulty_adjusted_brier"]
    for m, value in ref.items():
        assert got[m] == pytest.approx(value, abs=1e-12)
    assert res.fixed_effects_models == ("m0", "m1", "m2")


def test_complete_panel_adjusted_equals_brier_and_always_half_is_fifty():
    rng = np.random.default_rng(2)
    df = panel(rng, missing=0.0)
    half = df[df["model"] == "m0"].assign(model="half", probability=0.5)
    res = forecastbench_scores(pd.concat([df, half]), naive="half", n_resamples=9, rng=0)
    t = by_model(res)
    np.testing.assert_allclose(t["difficulty_adjusted_brier"], t["brier"], atol=1e-12)
    assert t.loc["half", "brier_index"] == pytest.approx(50.0, abs=1e-9)
    assert t.loc["half", "bss"] == 0.0 and t.loc["half", "bss_relative"] == 0.0
    assert t["peer_score"].mean() == pytest.approx(0.0, abs=1e-12)  # balanced panel


def test_difficulty_adjustment_removes_question_set_advantage():
    """brier = skill + difficulty exactly: forecasters on easy and on hard questions
    are ranked by skill alone."""
    skills = {"easy_only": 0.05, "hard_only": 0.02, "bridge": 0.04}
    difficulty = np.linspace(0.0, 0.4, 20)
    rows = []
    for q, c in enumerate(difficulty):
        for m, a in skills.items():
            if (m == "easy_only" and q >= 10) or (m == "hard_only" and q < 10):
                continue
            rows.append({"model": m, "question": q, "probability": 1 - np.sqrt(a + c),
                         "outcome": 1})
    res = forecastbench_scores(pd.DataFrame(rows), n_resamples=9, rng=0)
    t = by_model(res)
    assert t.loc["easy_only", "brier"] < t.loc["hard_only", "brier"]  # raw Brier misleads
    adj = t["difficulty_adjusted_brier"]
    assert adj["easy_only"] - adj["hard_only"] == pytest.approx(0.03, abs=1e-12)
    assert adj["bridge"] - adj["hard_only"] == pytest.approx(0.02, abs=1e-12)
    assert list(res.table["model"]) == ["hard_only", "bridge", "easy_only"]


def test_bootstrap_weights_equal_duplicated_questions():
    """A bootstrap draw weights questions by their counts; the same scores come from
    the table with each drawn question copied under a new id (as ForecastBench does)."""
    rng = np.random.default_rng(3)
    df = panel(rng, n_models=3, n_questions=12)
    full = forecastbench_scores(df, naive="m0", n_resamples=9, rng=0)
    brier = np.full((12, 3), np.nan)
    qc = pd.factorize(df["question"], sort=True)[0]
    mc = pd.factorize(df["model"], sort=True)[0]
    brier[qc, mc] = (df["probability"] - df["outcome"]) ** 2
    w = np.array([2, 0, 1, 3, 0, 1, 1, 0, 2, 1, 1, 0], dtype=float)
    weighted = _scores(brier, np.ones(3, dtype=bool), 0, w)
    copies = []
    questions = sorted(df["question"].unique())
    for j, q in enumerate(questions):
        for k in range(int(w[j])):
            copies.append(df[df["question"] == q].assign(question=f"{q}_{k}"))
    dup = forecastbench_scores(pd.concat(copies), naive="m0", n_resamples=9, rng=0)
    expected = by_model(dup)[list(FORECASTBENCH_SCORES)].loc[list(full.models)].to_numpy()
    np.testing.assert_allclose(weighted, expected, atol=1e-12)


def test_intervals_and_compare():
    rng = np.random.default_rng(4)
    df = panel(rng, n_questions=40)
    res = forecastbench_scores(df, naive="m0", n_resamples=199, rng=5)
    again = forecastbench_scores(df, naive="m0", n_resamples=199, rng=5)
    pd.testing.assert_frame_equal(res.table, again.table)
    t = res.table
    for name in FORECASTBENCH_SCORES:
        ok = t[name].notna() & (t["model"] != "m0")
        assert (t.loc[ok, f"{name}_ci_low"] <= t.loc[ok, name] + 1e-12).all()
        assert (t.loc[ok, name] <= t.loc[ok, f"{name}_ci_high"] + 1e-12).all()
    cmp = res.compare("m1", "m2", score="brier_index")
    assert isinstance(cmp, ForecastBenchComparisonResult)
    tb = by_model(res)
    assert cmp.statistic == pytest.approx(tb.loc["m1", "brier_index"] - tb.loc["m2", "brier_index"])
    assert 0.0 < cmp.pvalue <= 1.0
    assert cmp.confidence_interval.low <= cmp.statistic <= cmp.confidence_interval.high
    assert cmp.to_frame().loc[0, "test"] == "ForecastBenchResult.compare"
    same = res.compare("m1", "m1".replace("1", "2"), score="brier")
    assert same.higher_is_better is False
    with pytest.raises(ValueError, match="'model_b' parameter"):
        res.compare("m1", "m1")
    with pytest.raises(ValueError, match="'score' parameter"):
        res.compare("m1", "m2", score="nope")


def test_compare_identical_forecasters_has_large_pvalue():
    rng = np.random.default_rng(6)
    df = panel(rng, n_models=2, missing=0.0)
    twin = df[df["model"] == "m0"].assign(model="twin")
    res = forecastbench_scores(pd.concat([df, twin]), n_resamples=99, rng=0)
    cmp = res.compare("m0", "twin", score="brier")
    assert cmp.statistic == 0.0
    assert cmp.pvalue == 1.0


@pytest.mark.parametrize("mutate, match", [
    (lambda d: d.assign(probability=d["probability"].where(d.index != 3, 1.5)), "probability"),
    (lambda d: d.assign(outcome=d["outcome"].where(d.index != 2, 2)), "outcome"),
    (lambda d: pd.concat([d, d.iloc[[0]]]), "once per 'model'"),
    (lambda d: d.drop(columns="question"), "column 'question'"),
    (lambda d: d.iloc[:0], "at least one forecast"),
])
def test_data_errors(mutate, match):
    df = panel(np.random.default_rng(7), n_models=2, n_questions=6)
    with pytest.raises(ValueError, match=match):
        forecastbench_scores(mutate(df), n_resamples=9)


def test_naive_and_fixed_effects_errors():
    df = panel(np.random.default_rng(8), n_models=3, n_questions=10, missing=0.5)
    with pytest.raises(ValueError, match="'naive' parameter"):
        forecastbench_scores(df, naive="nobody", n_resamples=9)
    skipper = df["model"].value_counts().idxmin()
    if (df["model"] == skipper).sum() < 10:
        with pytest.raises(ValueError, match=r"'naive' forecaster.*must forecast every question"):
            forecastbench_scores(df, naive=skipper, n_resamples=9)
    with pytest.raises(ValueError, match="'fixed_effects_models' parameter"):
        forecastbench_scores(df, fixed_effects_models=["zzz"], n_resamples=9)
    two_groups = pd.DataFrame({"model": ["a", "a", "b", "b"], "question": [1, 2, 3, 4],
                               "probability": [0.2, 0.4, 0.6, 0.8], "outcome": [0, 1, 0, 1]})
    with pytest.raises(ValueError, match="2 groups with no forecaster in common"):
        forecastbench_scores(two_groups, n_resamples=9)
    with pytest.raises(ValueError, match="no forecast from a fixed-effects forecaster "
                       r"\('fixed_effects_models'\)"):
        forecastbench_scores(pd.concat([two_groups, two_groups.iloc[[0]].assign(
            model="c", question=5)]), fixed_effects_models=["a", "b"], n_resamples=9)


@given(st.integers(0, 10_000))
@settings(max_examples=15)
def test_property_relabel_and_row_order_invariance(seed):
    rng = np.random.default_rng(seed)
    df = panel(rng, n_models=3, n_questions=8)
    res = forecastbench_scores(df, n_resamples=5, rng=1)
    shuffled = df.sample(frac=1.0, random_state=seed).reset_index(drop=True)
    res2 = forecastbench_scores(shuffled, n_resamples=5, rng=1)
    pd.testing.assert_frame_equal(res.table, res2.table)
    renamed = df.assign(model=df["model"].map({"m0": "z", "m1": "y", "m2": "x"}))
    t3 = by_model(forecastbench_scores(renamed, n_resamples=5, rng=1))
    t1 = by_model(res)
    for old, new in (("m0", "z"), ("m1", "y"), ("m2", "x")):
        assert t3.loc[new, "difficulty_adjusted_brier"] == pytest.approx(
            t1.loc[old, "difficulty_adjusted_brier"], abs=1e-12)
    adj = t1["difficulty_adjusted_brier"]
    idx = t1["brier_index"]
    ok = adj >= 0
    np.testing.assert_allclose(idx[ok], 100 * (1 - np.sqrt(adj[ok])))
    assert idx[~ok].isna().all()


def test_naive_without_every_question_names_the_parameter():
    # fuzz: a stray model label left the naive forecaster without question 1; the
    # error named no parameter
    df = pd.DataFrame({"model": ["a"] * 4 + ["b"] * 3 + ["c"], "question": [1, 2, 3, 4] * 2,
                       "probability": [0.9, 0.2, 0.7, 0.4, 0.5, 0.5, 0.5, 0.5],
                       "outcome": [1, 0, 1, 1] * 2})
    with pytest.raises(ValueError, match="the 'naive' forecaster 'b' has no forecast"):
        forecastbench_scores(df, naive="b", n_resamples=9, rng=0)
