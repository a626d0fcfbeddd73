"""A fast subset of the LIE validation matrix (benchmarks/validate_lie.py, whose cells are
in docs/validation_lie.md): the script runs end to end, writes its JSON and its tables, a
cell's figures do not depend on which other cells ran, and the attained level of the
exact sign test is the brute-force one."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
from scipy.stats import binomtest

from benchmarks import validate_lie as vl
from tests._matrices import tables_text


def test_attained_level_is_the_largest_rejected_tail() -> None:
    for n in (1, 5, 29, 30, 100):
        levels = [binomtest(k, n, 0.5, alternative="greater").pvalue for k in range(n + 1)]
        brute = max((p for p in levels if p <= vl.ALPHA), default=0.0)
        assert vl.attained_level(np.array([n])) == pytest.approx(brute)
    assert vl.attained_level(np.array([30, 100])) == pytest.approx(
        (vl.attained_level(np.array([30])) + vl.attained_level(np.array([100]))) / 2)


def test_script_writes_json_and_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                       ) -> None:
    out = tmp_path / "lie.json"
    small = ["--reps", "4", "--n-studies", "2", "--out", str(out)]
    assert vl.main(["--only", "size: asia rational 30", *small]) == 0
    alone = json.loads(out.read_text())
    assert [r["design"] for r in alone["size"]] == ["asia rational 30 contexts"]
    row = alone["size"][0]
    assert row["reps"] == 4 and 0.0 <= row["rejection"]["rate"] <= 1.0
    assert row["median_informative"] <= 30 and 0.0 < row["attained_level"] <= vl.ALPHA
    assert set(row["competitors"]) == set(vl.COMPETITORS)
    assert all(r["n"] == 4 for r in row["competitors"].values())
    assert alone["environment"]["commit"] and alone["settings"]["n_studies"] == 2
    # with another cell before it, the same cell gives the same figures (its own seed)
    assert vl.main(["--only", "size: child rational 30,size: asia rational 30", *small]) == 0
    both = json.loads(out.read_text())
    assert [r["design"] for r in both["size"]] == ["child rational 30 contexts",
                                                  "asia rational 30 contexts"]
    assert both["size"][1]["median_ratio_quantiles"] == row["median_ratio_quantiles"]
    text = tables_text(vl, out, tmp_path, monkeypatch)
    assert "| asia | rational | 30 |" in text and "### Size of the sign test" in text
    assert "Wilcoxon signed-rank, same studies" in text


def test_the_wilcoxon_competitor_is_the_checks_wilcoxon_option() -> None:
    """The competitor column's p-value is ``iterated_expectation_check(test='wilcoxon')``'s
    (and the t-test's that of scipy on the same differences)."""
    from scipy import stats

    from coherence import iterated_expectation_check

    study = vl.bayesnets.lie_study("asia", n_contexts=30, report_noise=vl.NOISE,
                                   n_ground_truth=1, rng=3)
    a, b = study.redraw(rng=4), study.redraw(rng=5)
    sign = iterated_expectation_check(a, baseline=b, n_resamples=1, rng=0)
    wilcoxon = iterated_expectation_check(a, baseline=b, n_resamples=1, rng=0, test="wilcoxon")
    got = vl.competitor_pvalues(sign.table)
    assert got[0] == pytest.approx(wilcoxon.pvalue, rel=1e-12)
    t = sign.table
    d = (t["agent_error"] - t["baseline_error"]).groupby(t["context"]).mean().to_numpy()
    d = d[np.abs(d) >= 1e-12]
    assert got[1] == pytest.approx(stats.ttest_1samp(d, 0.0, alternative="greater").pvalue,
                                   rel=1e-12)


def test_coverage_cell_and_its_before_column(tmp_path: Path,
                                             monkeypatch: pytest.MonkeyPatch) -> None:
    out = tmp_path / "lie.json"
    assert vl.main(["--only", "coverage: interval asia rational 30", "--n-coverage", "20",
                    "--n-boot", "19", "--out", str(out)]) == 0
    row = json.loads(out.read_text())["coverage"][0]
    assert row["design"] == "interval asia rational 30 contexts" and row["reps"] == 20
    assert 0.0 <= row["coverage"]["rate"] <= 1.0 and row["mean_width"] > 0.0
    text = tables_text(vl, out, tmp_path, monkeypatch)
    assert "### Coverage of the expanded percentile interval" in text
    if vl.BEFORE.exists():  # the earlier interval's figures, matched by design
        before = json.loads(vl.BEFORE.read_text())["coverage"]
        old = next(r for r in before if r["design"] == row["design"])
        assert f"| {old['coverage']['rate']:.3f} [" in text


def test_skewed_null_cell_runs_and_its_differences_have_median_zero(tmp_path: Path,
                                                                      monkeypatch) -> None:
    """The non-exchangeable null: agent errors skewed to the right about a steady baseline
    error at their median, so half the differences are positive; the cell records the
    three tests' rates and the table shows them."""
    rng = np.random.default_rng(0)
    for shape in vl.SKEWED:
        big = vl._skewed_errors(shape, 200_000, rng)
        d = vl._skewed_errors(shape, 200_000, rng) - np.median(big)
        assert abs(np.mean(d > 0) - 0.5) < 0.01 and np.mean(d) > 0  # median 0, mean above
    out = tmp_path / "lie.json"
    assert vl.main(["--only", "skewed null: folded standard normal", "--reps", "5",
                    "--out", str(out)]) == 0
    rows = json.loads(out.read_text())["skewed"]
    assert [r["settings"]["n_contexts"] for r in rows] == [30, 100]
    assert all(r["reps"] == 50 and set(r["competitors"]) == set(vl.COMPETITORS)
               for r in rows)
    text = tables_text(vl, out, tmp_path, monkeypatch)
    assert "| folded standard normal | 30 | 50 |" in text
