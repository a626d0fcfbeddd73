"""A fast subset of the forecast-scoring matrix (benchmarks/validate_forecast_scores.py,
whose tables are in docs/forecast_scoring.md): the script runs end to end and writes its
JSON and table, a cell's figures do not depend on which other cells ran, and the
population's expected scores the matrix covers are the library's own scores on a large
sample of the design."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks import validate_forecast_scores as vfs
from benchmarks.forecast_designs import FORECAST_DESIGNS
from benchmarks.forecast_designs import expected_scores
from benchmarks.forecast_designs import sample
from coherence import forecast_scores
from tests._matrices import tables_text


def test_script_writes_json_and_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                      ) -> None:
    out = tmp_path / "f.json"
    small = ["--reps", "3", "--power-reps", "2", "--resamples", "49", "--out", str(out)]
    assert vfs.main(["--only", "equal Brier n=30", *small]) == 0
    alone = json.loads(out.read_text())
    assert alone["cluster_option"] is True
    (row,) = alone["cells"]
    assert row["n"] == 30 and row["reps"] == 3 and row["part"] == "size"
    assert 0.0 <= row["compare"]["rate"] <= 1.0 and 0.0 <= row["coverage_brier"]["rate"] <= 1
    assert 0.0 <= row["forecastbench_index"]["rate"] <= 1.0  # a null cell of <= 400
    # the plain sign flip on the same studies, and every test's rejections by side
    for test in ("compare", "compare_plain", "t_test"):
        below, above = row[f"{test}_below"]["k"], row[f"{test}_above"]["k"]
        assert below + above == row[test]["k"]
    assert 0.0 <= row["coverage_difference_plain"]["rate"] <= 1.0
    # with another cell before it, the same cell gives the same figures (its own seed)
    assert vfs.main(["--only", "noise 0.1 vs 0.1 n=20,equal Brier n=30",
                     *small]) == 0
    both = json.loads(out.read_text())["cells"]
    assert [c["n"] for c in both] == [20, 30]
    assert both[1]["compare"] == row["compare"] and both[1]["truth"] == row["truth"]
    text = tables_text(vfs, out, tmp_path, monkeypatch)
    assert "| sharp (noise 0.15) vs hedged, equal Brier | 30 | 3 | size " in text
    assert "*By side*" in text


@pytest.mark.parametrize("name", ["sharp (noise 0.15) vs hedged, equal Brier",
                                  "topic errors (sd 0.15) by 10 questions, noise 0.05 vs 0.05",
                                  "heaped on 0.05 (0 and 1 stated), noise 0.15 vs 0.15"])
def test_expected_scores_are_the_scores_of_a_large_sample(name):
    """The truth the matrix covers: forecast_scores on 200,000 questions of the design is
    within 4 standard errors of it, for both forecasters and all three scores; the nulls
    give the two forecasters one expected Brier score."""
    design = FORECAST_DESIGNS[name]
    truth = expected_scores(design)
    df = sample(design, 200_000, np.random.default_rng(1))
    res = forecast_scores(df, timestamp=None, n_resamples=1, rng=0)
    per = res.per_forecast
    for model in ("a", "b"):
        mine = per[per["model"] == model]
        for j, score in enumerate(("brier", "log_score", "accuracy")):
            values = mine[score].to_numpy()
            se = values.std() / np.sqrt(values.size)
            assert abs(values.mean() - truth[model][j]) < 4 * se + 1e-4
    assert truth["a"][0] == pytest.approx(truth["b"][0], abs=2e-4)
