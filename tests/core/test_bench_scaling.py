"""A fast run of ``benchmarks/bench_scaling.py``: the growth exponent, the JSON it writes,
and the run on the package at another commit (in a temporary git worktree)."""

from __future__ import annotations

import json
import math
import shutil
from pathlib import Path

import pytest

from benchmarks import bench_scaling as bench

ROOT = Path(__file__).resolve().parents[2]


def test_growth_is_the_exponent_between_the_last_two_sizes():
    row = {"sizes": [10, 40, 160], "seconds": [0.01, 0.1, 1.6]}
    assert bench.growth(row) == pytest.approx(2.0)       # 16 times the time at 4 times n
    assert bench.growth({"sizes": [1, 4, 16], "seconds": [0.0, 0.01, 0.04]}) is None
    assert bench.growth({"error": "ValueError: x"}) is None


def test_a_case_the_package_refuses_is_recorded_not_raised(monkeypatch):
    def build(n):
        raise ValueError(f"no input of size {n}")
    monkeypatch.setitem(bench.CASES, "refused", ("test", 1, build))
    assert bench.time_case("refused", (1, 4, 16), 1) == {
        "error": "ValueError: no input of size 1"}


def test_one_case_writes_its_timings_without_touching_the_docs(tmp_path):
    doc = (ROOT / "docs" / "speed.md").read_text(encoding="utf-8")
    out = tmp_path / "scaling.json"
    assert bench.main(["--only", "line breaks", "--repeat", "1", "--out", str(out)]) == 0
    results = json.loads(out.read_text())
    (name, row), = results["cases"].items()
    assert name == "parse a reply with a run of line breaks"
    assert row["sizes"] == [1000, 4000, 16000] and len(row["seconds"]) == 3
    assert all(s > 0 and math.isfinite(s) for s in row["seconds"])
    assert results["environment"]["versions"]["numpy"]
    assert (ROOT / "docs" / "speed.md").read_text(encoding="utf-8") == doc
    assert "| parse a reply with a run of line breaks | 1,000 / 4,000 / 16,000 |" in (
        bench._table(results))


@pytest.mark.skipif(not (ROOT / ".git").exists() or shutil.which("git") is None,
                    reason="needs the repository's git history")
def test_before_runs_the_cases_on_the_package_at_a_commit(tmp_path):
    out = tmp_path / "scaling.json"
    assert bench.main(["--only", "line breaks", "--repeat", "1", "--before", "HEAD",
                       "--out", str(out)]) == 0
    results = json.loads(out.read_text())
    before = results["before"]["parse a reply with a run of line breaks"]
    assert before["sizes"] == [1000, 4000, 16000] and len(before["seconds"]) == 3
    assert len(results["before_commit"]) == 40
    assert "before / after" in bench._table(results)
