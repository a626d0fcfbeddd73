"""A fast subset of the matrix of the intervals over questions
(benchmarks/validate_question_metrics.py, whose table is in docs/reasoning_quality.md):
the script runs end to end and writes its JSON and table, a cell's figures do not depend
on which other cells ran, the population means it covers are the means of large samples,
and the interval it measures is the one each public function gives."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks import validate_question_metrics as vqm
from benchmarks.question_metric_designs import METRIC_DESIGNS
from benchmarks.question_metric_designs import population_mean
from benchmarks.question_metric_designs import sample
from coherence._scoring._graphs import METRIC_KINDS
from tests._matrices import tables_text


def test_script_writes_json_and_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                      ) -> None:
    out = tmp_path / "q.json"
    small = ["--reps", "4", "--resamples", "49", "--out", str(out)]
    assert vqm.main(["--only", "(mean 0.06) n=30", *small]) == 0
    (row,) = json.loads(out.read_text())["cells"]
    assert row["n"] == 30 and row["reps"] == 4 and row["kind"] == "fraction"
    for label in ("shipped", "previous"):
        assert 0.0 <= row[f"coverage_{label}"]["rate"] <= 1.0
        assert row[f"width_{label}"] >= 0.0 and 0.0 <= row[f"point_{label}"] <= 1.0
    # with another cell before it, the same cell gives the same figures (its own seed)
    assert vqm.main(["--only", "Poisson with question shocks n=15,(mean 0.06) n=30",
                     *small]) == 0
    both = json.loads(out.read_text())["cells"]
    assert [c["n"] for c in both] == [30, 15] and both[1]["kind"] == "nonnegative"
    assert both[0]["coverage_shipped"] == row["coverage_shipped"]
    assert both[0]["width_previous"] == row["width_previous"]
    text = tables_text(vqm, out, tmp_path, monkeypatch)
    assert "| rare hits, 10 key events (mean 0.06) | 30 | 4 | " in text


@pytest.mark.parametrize("name", list(METRIC_DESIGNS))
def test_population_mean_is_the_mean_of_a_large_sample(name):
    """The truth the matrix covers: an independent sample of 200,000 questions has a
    pooled mean within 4 cluster-robust standard errors of it; fractions stay in [0, 1]."""
    design = METRIC_DESIGNS[name]
    values, questions = sample(design, 200_000, np.random.default_rng(7))
    sums = np.bincount(questions, weights=values)
    sizes = np.bincount(questions)
    mean = values.sum() / values.size
    se = np.sqrt(np.sum((sums - sizes * mean) ** 2)) / values.size
    assert abs(mean - population_mean(design)) < 4 * se
    if design.kind != "nonnegative":
        assert values.min() >= 0.0 and values.max() <= 1.0
    if design.family == "events":
        assert set(np.unique(values)) <= {0.0, 1.0}


def test_the_designs_kinds_are_the_functions_kinds():
    """The matrix measures the interval the functions give such values: the graph
    metrics' kinds, and the fraction kind for KER, source precision, signal recall and
    event agreement (their method names it)."""
    assert METRIC_KINDS["date_error_days"] == METRIC_KINDS["forecast_depth"] == "nonnegative"
    assert {METRIC_KINDS[m] for m in METRIC_KINDS
            if m not in ("date_error_days", "forecast_depth")} == {"fraction"}
    kinds = {d.kind for d in METRIC_DESIGNS.values()}
    assert kinds == {"fraction", "nonnegative"}
