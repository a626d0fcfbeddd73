"""A fast subset of the calibration-error matrix (benchmarks/validate_calibration.py,
whose table is in docs/forecast_scoring.md): the script runs end to end and writes its
JSON and table, a cell's figures do not depend on which other cells ran, the shipped
interval holds the plain bootstrap-t one drawn on the same resamples, and the truths of
the designs added with the profile bound are the binned errors of large samples."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks import validate_calibration as vc
from tests._matrices import tables_text


def test_script_writes_json_and_table(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                      ) -> None:
    out = tmp_path / "c.json"
    small = ["--reps", "6", "--resamples", "19", "--out", str(out), "--no-docs"]
    vc.main(["--only", "under-forecasts (1.3 p) n=300 norm=2", *small])
    (row,) = json.loads(out.read_text())["cells"]
    assert row["n"] == 300 and row["truth"] > 0
    for kind in ("profile", "bootstrap_t", "basic"):
        assert 0.0 <= row[kind]["coverage"]["rate"] <= 1.0 and row[kind]["mean_width"] > 0
    # the profile interval holds the plain one: never less coverage, never narrower
    assert row["profile"]["coverage"]["k"] >= row["bootstrap_t"]["coverage"]["k"]
    assert row["profile"]["mean_width"] >= row["bootstrap_t"]["mean_width"]
    # with another cell before it, the same cell gives the same figures (its own seed)
    vc.main(["--only", "calibrated n=100 norm=2,under-forecasts (1.3 p) n=300 norm=2",
             *small])
    both = json.loads(out.read_text())["cells"]
    assert [c["n"] for c in both] == [100, 300]
    assert both[1]["profile"] == row["profile"] and both[1]["basic"] == row["basic"]
    text = tables_text(vc, out, tmp_path, monkeypatch)
    assert "| uniform p, calibrated | 100 | 2 | " in text


def test_append_keeps_the_other_cells_in_the_matrix_order(tmp_path: Path) -> None:
    """``--append``: a later run adds its cells to the JSON's, in the order of DESIGNS,
    each stamped with its commit and studies; a cell run again replaces its row."""
    out = tmp_path / "c.json"
    small = ["--resamples", "19", "--out", str(out), "--no-docs"]
    vc.main(["--only", "under-forecasts (1.3 p) n=300 norm=1", "--reps", "4", *small])
    vc.main(["--only", "calibrated n=100 norm=1", "--reps", "5", "--append", *small])
    vc.main(["--only", "calibrated n=100 norm=1", "--reps", "3", "--append", *small])
    cells = json.loads(out.read_text())["cells"]
    assert [(c["n"], c["norm"], c["reps"]) for c in cells] == [(100, 1, 3), (300, 1, 4)]
    assert all(len(c["commit"]) == 40 for c in cells)
    # the l1 design's truth is its binned l1 error: > 0, and 0 for the calibrated one
    assert cells[0]["truth"] == 0.0 and cells[1]["truth"] > 0.0


L2_ADDED = [i for i, d in enumerate(vc.DESIGNS) if d.norm == 2][-3:-1]
L1 = [i for i, d in enumerate(vc.DESIGNS)
      if d.norm == 1 and d.forecasters is None and d.curve != "calibrated"]


@pytest.mark.parametrize("index", L2_ADDED + L1[:1] + L1[-1:])
def test_designs_truth_is_the_binned_error_of_a_large_sample(index):
    """The quadrature truth of a design without clusters against the binned squared (l1:
    absolute) error of 2,000,000 forecasts' population bins computed from their expected
    outcomes (no outcome noise), within 2% of it."""
    design = vc.DESIGNS[index]
    gen = np.random.default_rng(11)
    t = vc._latent(design, 2_000_000, gen)
    s = vc._stated(design, t)
    k = vc._bins(design, s, t)
    mass = np.bincount(k, minlength=vc.N_BINS).astype(float)
    used = mass > 0
    mp = np.bincount(k, s, minlength=vc.N_BINS)[used] / mass[used]
    mc = np.bincount(k, vc.CURVES[design.curve](t), minlength=vc.N_BINS)[used] / mass[used]
    power = 2 if design.norm == 2 else 1
    sampled = float(np.sum(mass[used] / mass.sum() * np.abs(mc - mp) ** power))
    assert vc.truth(design) == pytest.approx(sampled, rel=0.02)
