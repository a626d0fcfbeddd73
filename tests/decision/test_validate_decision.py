"""A fast subset of benchmarks/validate_decision_tests.py (the tables of
docs/validation_decision.md): the script runs end to end on one leakage and one
monotone-choice cell, writes its JSON and its tables."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from benchmarks import validate_decision_tests as vd
from tests._matrices import tables_text


def test_script_writes_json_and_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                       ) -> None:
    out = tmp_path / "decision.json"
    assert vd.main(["--only", "strength 0.5 (default),monotone: nonmonotone",
                    "--reps", "4", "--n-resamples", "19", "--monotone-reps", "3",
                    "--out", str(out)]) == 0
    results = json.loads(out.read_text())
    (leak,) = results["leakage"]
    assert leak["design"] == "leaky, strength 0.5 (default)" and leak["reps"] == 2
    # a strong leak: both p-values reject in every study
    assert leak["permutation"]["rate"] == 1.0 and leak["paired"]["rate"] == 1.0
    (mono,) = results["monotone"]
    assert mono["reps"] == 3 and len(mono["pairs"]) == len(mono["isotonic"]) == 3
    assert results["settings"]["n_permutations"] == 19
    text = tables_text(vd, out, tmp_path, monkeypatch)
    assert "| leaky, strength 0.5 (default) |" in text and "Fisher procedure" in text
