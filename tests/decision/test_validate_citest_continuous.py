"""A fast subset of benchmarks/validate_citest_continuous.py (ci_test with continuous
evidence; docs/validation_ci.md): its generator and the script end to end."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from benchmarks import validate_citest_continuous as vc
from tests._matrices import tables_text


@pytest.mark.parametrize("name", list(vc.NULLS))
def test_the_leak_alone_moves_the_actions(name: str) -> None:
    # the null designs are the power designs without the leak: the same beliefs,
    # evidence and outcomes, and actions moved only towards the outcome
    null = vc.generate(vc.NULLS[name], 7)
    leaky = vc.generate(vc.NULLS[name].with_(leak=2.0), 7)
    for column in ("context", "belief", "outcome", "evidence"):
        np.testing.assert_array_equal(null[column], leaky[column])
    up = leaky["action"].to_numpy() - null["action"].to_numpy()
    y = null["outcome"].to_numpy()
    assert np.all(up[y == 1] >= 0) and np.all(up[y == 0] <= 0) and np.any(up != 0)
    # the evidence moves the action and the outcome: conditioning on it matters
    by_ev = null["evidence"] > null["evidence"].median()
    assert null["action"][by_ev].mean() > null["action"][~by_ev].mean() + 0.2
    assert null["outcome"][by_ev].mean() > null["outcome"][~by_ev].mean()


def test_script_writes_json_and_tables(tmp_path: Path, monkeypatch: pytest.MonkeyPatch
                                       ) -> None:
    out = tmp_path / "continuous.json"
    assert vc.main(["--only", "small study,power: leak 1.0", "--reps", "4",
                    "--power-reps", "3", "--n-resamples", "19", "--jobs", "1",
                    "--out", str(out)]) == 0
    results = json.loads(out.read_text())
    (small,) = results["size"]
    assert small["design"] == "small study: 40 x 3" and small["reps"] == 4
    assert small["n_nan_pvalue"] == 0
    flips = "leak 1.0 whose sign flips with the belief, evidence per context"
    assert [r["design"] for r in results["power"]] == [
        "leak 1.0, evidence per context", "leak 1.0, evidence per row", flips]
    for leak in results["power"]:
        assert leak["reps"] == 3
        assert leak["rejection"]["rate"] >= (2 / 3 if leak["design"] == flips else 1.0)
        assert leak["test_statistic"] == "auto"
        assert set(leak["competitor"]) == {f"{b}x{e}" for b, e in vc.COMPETITOR_BINS}
        assert all(c["n"] == 3 for c in leak["competitor"].values())
    text = tables_text(vc, out, tmp_path, monkeypatch)
    assert "| small study: 40 x 3 | 4 |" in text and "Power with continuous evidence" in text
    assert "competitor 5 x 8" in text


def test_outcome_per_row_cells_permute_actions_and_skip_the_competitor(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    name = "outcome and evidence per row, beliefs that miss it (actions permuted)"
    data = vc.generate(vc.NULLS[name], 3)
    assert data.groupby("context")["outcome"].nunique().max() == 2
    out = tmp_path / "rows.json"
    assert vc.main(["--only", "size: outcome and evidence per row", "--reps", "3",
                    "--n-resamples", "19", "--jobs", "1", "--out", str(out)]) == 0
    (cell,) = json.loads(out.read_text())["size"]
    assert cell["design"] == name and cell["competitor"] == {} and cell["n_nan_pvalue"] == 0
    assert "does not apply" in tables_text(vc, out, tmp_path, monkeypatch)


def test_unequal_repetitions_and_a_nominal_site():
    uneven = vc.generate(vc.NULLS["unequal repetitions (1-9 rows), evidence per row"], 2)
    sizes = uneven.groupby("context").size()
    assert sizes.min() >= 1 and sizes.max() <= 9 and sizes.nunique() > 4
    assert uneven.groupby("context")["outcome"].nunique().max() == 1
    sited = vc.generate(vc.NULLS["nominal site (4 levels) with continuous evidence"], 2)
    assert sited["site"].nunique() == 4
    assert sited.groupby("context")["site"].nunique().max() == 1
    # the site moves the outcome: its levels' outcome rates differ
    rates = sited.groupby("site")["outcome"].mean()
    assert rates.max() - rates.min() > 0.15
    # ci_test conditions on it with the continuous evidence; the competitor does not apply
    row = vc._pvalue((vc.NULLS["nominal site (4 levels) with continuous evidence"], 2, 19,
                      "auto"))
    assert np.isfinite(row[0]) and all(np.isnan(row[1:]))


def test_a_second_evidence_column_and_a_leak_whose_sign_flips():
    two = vc.NULLS["two continuous evidence columns, beliefs that miss the second"]
    data = vc.generate(two, 4)
    assert vc.evidence_columns(two) == ["evidence", "evidence2"]
    assert data.groupby("context")["evidence2"].nunique().max() == 1
    high = data["evidence2"] > data["evidence2"].median()
    assert data["outcome"][high].mean() > data["outcome"][~high].mean() + 0.1
    assert data["action"][high].mean() > data["action"][~high].mean() + 0.2
    row = vc._pvalue((two, 4, 19, "auto"))  # the competitor bins one column only
    assert np.isfinite(row[0]) and all(np.isnan(row[1:]))
    # the flipping leak moves actions towards the outcome above a belief of 0.5 and away
    # from it below
    flips = vc.POWER["leak 1.0 whose sign flips with the belief, evidence per context"]
    null = vc.generate(flips.with_(leak=0.0), 5)
    leaky = vc.generate(flips.with_(leak=3.0), 5)
    up = leaky["action"].to_numpy() - null["action"].to_numpy()
    toward = np.where(null["outcome"] == 1, up, -up)
    high_belief = null["belief"].to_numpy() >= 0.5
    assert np.all(toward[high_belief] >= 0) and np.all(toward[~high_belief] <= 0)
    assert np.any(toward[high_belief] > 0) and np.any(toward[~high_belief] < 0)


@pytest.mark.parametrize("design", [
    vc.REF.with_(grid=None, sees=0.0, ev_action=3.0, ev_outcome=2.0, leak=2.5),
    vc.REF.with_(grid=None, sees=0.5, shock_sd=1.0, leak=2.0),
    vc.REF.with_(within=True, outcome_per_row=True, grid=None, leak=1.5, interaction=1.0),
])
def test_exact_cmi_matches_a_large_sample(design) -> None:
    """The quadrature against the kNN estimate on 40,000 independent rows (k = 30, whose
    bias is small at that size), and the quadrature converged."""
    from coherence import cmi

    exact = vc.exact_cmi(design)
    assert exact > 0.03
    assert vc.exact_cmi(design, n_nodes=160) == pytest.approx(exact, abs=1e-5)
    data = vc.generate(design.with_(n_contexts=40_000, repetitions=1), 1)
    estimate = cmi(data["action"], data["outcome"], data[["belief", "evidence"]], k=30)
    assert estimate == pytest.approx(exact, abs=0.008)
    assert vc.exact_cmi(design.with_(leak=0.0)) == pytest.approx(0.0, abs=1e-12)
    target = exact / 2
    assert vc.exact_cmi(design.with_(leak=vc.leak_for(design, target))) == pytest.approx(
        target, rel=1e-6)


def test_exact_cmi_refuses_designs_it_cannot_compute() -> None:
    for design in (vc.REF, vc.REF.with_(grid=None, within=True),
                   vc.REF.with_(grid=None, sites=4), vc.REF.with_(grid=None, second=1.0)):
        with pytest.raises(ValueError, match="exact_cmi needs"):
            vc.exact_cmi(design)
