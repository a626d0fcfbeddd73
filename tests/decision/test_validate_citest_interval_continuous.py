"""A fast run of ``benchmarks/validate_citest_interval_continuous.py`` (coverage of
ci_test's interval with float evidence; docs/validation_ci.md)."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks import validate_citest_continuous as cc
from benchmarks import validate_citest_interval_continuous as vi
from tests._matrices import tables_text


def test_runs_the_continuous_nulls_at_the_defaults(tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "interval.json"
    seen: list[int] = []
    one = vi._one

    def spy(job):
        seen.append(job[1])
        return one(job)

    monkeypatch.setattr(vi, "_one", spy)
    assert vi.main(["--reps", "2", "--jobs", "1", "--only", "small study", "--out",
                    str(out)]) == 0
    (row,) = json.loads(out.read_text())["designs"]
    assert row["design"] == "small study: 40 x 3" and row["reps"] == 2
    assert row["covers_zero"]["n"] + row["n_nan_interval"] == 2
    assert row["settings"] == cc.NULLS["small study: 40 x 3"].settings()
    base = 10_000 * (cc.ORDER.index("small study: 40 x 3") + 1)
    assert seen == [base, base + 1]  # validate_citest_continuous's studies
    # --merge keeps it beside a new design; the budget starts no design once spent
    assert vi.main(["--reps", "1", "--jobs", "1", "--only", "one row per context",
                    "--merge", "--out", str(out)]) == 0
    assert vi.main(["--reps", "1", "--jobs", "1", "--only", "context shocks", "--merge",
                    "--budget", "-1", "--out", str(out)]) == 0
    names = [r["design"] for r in json.loads(out.read_text())["designs"]]
    assert names == ["small study: 40 x 3", "one row per context: 1000 x 1"]
    text = tables_text(vi, out, tmp_path, monkeypatch)
    assert "| small study: 40 x 3 | 2 |" in text


def test_the_known_part_records_coverage_of_the_exact_cmi(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "interval.json"
    name = "small study: 40 x 3, continuous beliefs, CMI 0.176"
    assert vi.main(["--reps", "2", "--jobs", "1", "--only", "small study: 40 x 3",
                    "--out", str(out)]) == 0
    assert vi.main(["--known", "--reps", "2", "--jobs", "1", "--only", "small study",
                    "--merge", "--out", str(out)]) == 0
    stored = json.loads(out.read_text())
    assert [r["design"] for r in stored["designs"]] == ["small study: 40 x 3"]
    assert [r["design"] for r in stored["known"]] == [name.replace("176", "09"), name]
    row = stored["known"][1]
    # --new runs only the designs the file does not hold yet
    ran: list[str] = []
    known = vi.run_known
    monkeypatch.setattr(vi, "run_known", lambda n, reps, pool: ran.append(n) or known(
        n, reps, pool))
    assert vi.main(["--known", "--reps", "1", "--jobs", "1", "--only", "small study,held out: "
                    "belief", "--merge", "--new", "--out", str(out)]) == 0
    assert ran == ["held out: belief x evidence interaction, unequal repetitions, CMI 0.09"]
    assert json.loads(out.read_text())["known"][1] == row
    assert row["design"] == name and row["exact_cmi"] == pytest.approx(0.176, rel=1e-6)
    assert row["coverage"]["n"] + row["n_nan_interval"] == 2
    assert row["power"]["n"] == 2 and 0.0 <= row["below"]["rate"] <= 1.0
    assert cc.exact_cmi(cc.Design(**row["settings"])) == pytest.approx(row["exact_cmi"])
    text = tables_text(vi, out, tmp_path, monkeypatch)
    assert f"| {name} | 0.176 |" in text


def test_diagnose_records_the_centre_the_interval_uses(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "interval.json"
    name = "small study: 40 x 3, continuous beliefs, CMI 0.176"
    assert vi.main(["--diagnose", name, "--reps", "3", "--jobs", "1", "--out",
                    str(out)]) == 0
    (row,) = json.loads(out.read_text())["diagnosis"]
    assert row["design"] == name and row["reps"] == 3
    # the centre is the estimate minus the recorded bias, and the bias was recorded
    assert np.isfinite(row["mean_bias"]) and row["mean_bias"] != 0.0
    assert row["sd_centre"] > 0 and row["sd_estimate"] > 0 and row["mean_half_width"] > 0
    assert f"| {name} | 3 |" in tables_text(vi, out, tmp_path, monkeypatch)
    job = (cc.Design(), 1)
    with_bias = vi._one_diagnosed(job)
    assert with_bias[:4] == vi._one(job)  # recording leaves the answer alone
    assert len(with_bias) == 6 and np.isfinite(with_bias[4])
    assert with_bias[5] >= 1.0  # the spread ratio (float evidence: the refit ran)
    assert "spread ratio" in tables_text(vi, out, tmp_path, monkeypatch)
    # a diagnosis at another commit stays beside this one (before and after a change)
    stored = json.loads(out.read_text())
    stored["diagnosis"][0]["commit"] = "0" * 40
    out.write_text(json.dumps(stored))
    assert vi.main(["--diagnose", name, "--reps", "2", "--jobs", "1", "--merge", "--out",
                    str(out)]) == 0
    rows = json.loads(out.read_text())["diagnosis"]
    assert [r["reps"] for r in rows] == [3, 2] and rows[0]["commit"] == "0" * 40
