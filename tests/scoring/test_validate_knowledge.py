"""A fast subset of the validation matrix of coherence_by_knowledge
(benchmarks/validate_knowledge.py, whose 400-study cells are in docs/forecast_scoring.md):
the script runs end to end, writes its JSON and tables, and its rates are sane."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from benchmarks import validate_knowledge as vk
from benchmarks.knowledge_designs import Design
from benchmarks.knowledge_designs import generate
from benchmarks.knowledge_designs import measure_sd
from benchmarks.knowledge_designs import welch_bonferroni


def test_generator_follows_its_design():
    design = Design(n_models=3, answer_share=(1.0, 0.5, 0.4), repetitions=(1, 4))
    data = generate(design, 0)
    asked = data.groupby("model")["question"].nunique()
    assert asked.to_dict() == {"m0": 100, "m1": 50, "m2": 40}
    rows = data.groupby(["model", "question"]).size()
    assert rows.min() == 1 and rows.max() == 4
    # one resolution date and one cutoff per question / model
    assert (data.groupby("question")["resolved"].nunique() == 1).all()
    assert (data.groupby("model")["cutoff"].nunique() == 1).all()
    # the shift lands exactly on the rows resolved on or after the model's cutoff
    shifted = generate(design.with_(effect=0.5), 0)
    after = (data["resolved"] >= data["cutoff"]).to_numpy()
    gap = (shifted["violation"] - data["violation"]).to_numpy()
    assert np.allclose(gap[after], 0.5 * measure_sd(design))
    assert np.allclose(gap[~after], 0.0)
    heaped = generate(design.with_(measure="heaped"), 1)["violation"]
    assert set(heaped.round(12)) == {0.0, 0.05, 0.1, 0.15, 0.2}
    assert set(generate(design.with_(measure="flag"), 1)["violation"]) == {0.0, 1.0}


def test_exact_designs_take_the_exact_path():
    for name, design in vk.NULLS.items():
        if name.startswith("exact"):
            p, _, exact = vk._run_one(design, 3, 199)
            assert exact == 1.0 and 0.0 < p <= 1.0


def test_competitor_by_hand():
    data = pd.DataFrame({"model": "m", "question": range(6), "cutoff": pd.Timestamp("2024-01-01"),
                         "resolved": pd.to_datetime(["2023-01-01"] * 3 + ["2024-06-01"] * 3),
                         "violation": [0.0, 0.1, 0.2, 0.3, 0.5, 0.4]})
    from scipy import stats

    ref = stats.ttest_ind([0.3, 0.5, 0.4], [0.0, 0.1, 0.2], equal_var=False).pvalue
    assert welch_bonferroni(data) == pytest.approx(ref)
    two = pd.concat([data, data.assign(model="n", violation=data["violation"][::-1].to_numpy())])
    assert welch_bonferroni(two) == pytest.approx(min(1.0, 2 * ref))


def test_fast_subset_runs_and_rates_are_sane(tmp_path: Path):
    out = tmp_path / "validate_knowledge.json"
    assert vk.main(["--reps", "40", "--out", str(out), "--only",
                    "heaped (5 values),answering,(2/2/2"]) == 0
    results = json.loads(out.read_text())
    assert "power" not in results
    assert results["settings"]["n_resamples"] == 199
    assert results["environment"]["commit"]
    sizes = {r["design"]: r for r in results["size"]}
    assert list(sizes) == [
        "2 models, 100 questions, 1-4 rows, heaped (5 values)",
        "3 models answering 100%/50%/40%, 100 questions, 1-4 rows, lognormal",
        "exact: 2 models, 6 questions (2/2/2 by date class: 90 arrangements)"]
    for r in sizes.values():
        assert r["knowledge"]["n"] == 40
        assert r["knowledge"]["rate"] <= 0.2
    assert sizes["exact: 2 models, 6 questions (2/2/2 by date class: 90 arrangements)"][
        "share_exact"] == 1.0
    name = "3 models, 100 questions, shift 0.5 sd"
    power = vk._cell(name, vk.POWER[name], 40, 199, 5_000_000)
    assert power["knowledge"]["rate"] >= 0.7
    assert power["shift"] == pytest.approx(0.5 * measure_sd(vk.POWER[name]))
    results["power"] = [power]
    # the tables render from the JSON
    text = vk.tables(results)
    assert "| design | reps | p-value | coherence_by_knowledge | Welch + Bonferroni |" in text
    assert "shift 0.5 sd" in text


def test_even_cutoff_leaves_the_asked_number_before():
    from benchmarks.knowledge_designs import even_cutoff

    for n, k in ((30, 2), (30, 15), (100, 10), (60, 10)):
        design = Design(n_questions=n, n_models=1, dates="even", cutoffs=(even_cutoff(n, k),))
        rows = generate(design, 0).groupby("question").first()
        assert int((rows["resolved"] < rows["cutoff"]).sum()) == k


def test_coverage_part_runs_on_a_tiny_cell(tmp_path: Path):
    """The coverage code (benchmarks/_harness.coverage_cell) on a few studies: its row,
    the true shift it checks against, and its table."""
    out = tmp_path / "validate_knowledge.json"
    assert vk.main(["--reps", "6", "--out", str(out), "--only",
                    "coverage: shift 0.5 sd: 1 model"]) == 0
    results = json.loads(out.read_text())
    assert list(results) == ["environment", "settings", "coverage"]
    (row,) = results["coverage"]
    name = "shift 0.5 sd: 1 model, 30 questions, 3 before the cutoff, lognormal"
    assert row["design"] == name and row["reps"] == 6 and row["n_resamples"] == 199
    overall = row["coverage"]["overall"]
    assert overall["truth"] == pytest.approx(0.5 * measure_sd(vk.COVERAGE[name]))
    assert overall["coverage"]["n"] == 6 and overall["n_nan"] == 0
    assert overall["coverage"]["rate"] >= 0.5 and overall["median_width"] > 0
    assert set(row["coverage"]) == {"overall", "m0"}
    # the 999-permutation rerun uses the same studies (seeds) as its coverage cell
    fine = vk._coverage_cell(name, vk.COVERAGE[name], 2, vk.FINE_RESAMPLES, 20_000_000
                             + 100_000 * list(vk.COVERAGE).index(name))
    assert fine["n_resamples"] == 999 and fine["coverage"]["overall"]["coverage"]["n"] == 2
    results["coverage_999"] = [fine]
    text = vk.tables(results)
    assert "### Coverage of the interval" in text
    assert "### Coverage at 999 permutations (the same studies as above)" in text
    assert f"| {name} | 6 | {overall['truth']:.4f} | " in text


def test_coverage_columns_by_hand():
    from benchmarks._harness import coverage_columns

    low = [-1.0, 0.5, -np.inf, np.nan, -2.0]
    high = [1.0, 2.0, 0.2, np.nan, -1.0]
    c = coverage_columns(low, high, 0.0)
    assert c["coverage"]["k"] == 2 and c["coverage"]["n"] == 4 and c["n_nan"] == 1
    assert (c["share_above"], c["share_below"], c["share_unbounded"]) == (0.25, 0.25, 0.25)
    assert c["median_width"] == pytest.approx(1.5)
