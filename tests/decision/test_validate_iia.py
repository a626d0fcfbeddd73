"""A fast subset of the coverage part of benchmarks/validate_iia.py (its 400-study cells
are in docs/iia.md): the true log odds ratios the intervals are checked against, and the
coverage code on a tiny cell, with its table."""

from __future__ import annotations

import json
import math
from pathlib import Path

import pytest

from benchmarks import validate_iia as vi
from benchmarks.iia_designs import Design
from benchmarks.iia_designs import comparisons
from benchmarks.iia_designs import known_log_odds_ratio
from benchmarks.iia_designs import population_log_odds_ratio


def test_comparisons_are_named_as_iia_test_names_them():
    import coherence

    design = Design(n_actions=4, n_contexts=100)
    res = coherence.iia_test(vi.generate(design, 0), n_resamples=19, rng=0)
    assert sorted(vi._label(*c) for c in comparisons(design)) == sorted(res.table["comparison"])


def test_true_log_odds_ratios():
    odds = Design(agent="odds", factor=2.0, n_actions=4)
    truth = vi.true_log_odds_ratios(odds)
    assert next(iter(truth)) == "no/yes without defer"
    assert truth["no/yes without defer"] == pytest.approx(-math.log(2.0))
    assert truth["abstain/yes without defer"] == pytest.approx(-math.log(2.0))
    assert sum(v != 0.0 for v in truth.values()) == 2 and len(truth) == 12
    assert all(v == 0.0 for v in vi.true_log_odds_ratios(Design()).values())
    # the Monte Carlo estimand agrees with the known one where every context has it
    for c in (("no", "yes", "defer"), ("defer", "no", "yes")):
        mc = population_log_odds_ratio(odds.with_(per_menu=(1, 9), drop_menu=0.2), *c,
                                       n=100_000)
        assert mc == pytest.approx(known_log_odds_ratio(odds, *c), abs=0.03)
    nested = vi.COVERAGE["nested logit (yes, defer) lam 0.5, 3 actions, mostly defers, "
                         "200 x 5"]
    assert math.isnan(known_log_odds_ratio(nested, "no", "yes", "defer"))


def test_coverage_part_runs_on_a_tiny_cell(tmp_path: Path):
    out = tmp_path / "validate_iia.json"
    assert vi.main(["--reps", "5", "--n-resamples", "49", "--out", str(out), "--only",
                    "coverage: yes/no odds x1.5"]) == 0
    results = json.loads(out.read_text())
    assert list(results) == ["environment", "settings", "coverage"]
    (row,) = results["coverage"]
    assert row["reps"] == 5 and next(iter(row["coverage"])) == "no/yes without defer"
    own = row["coverage"]["no/yes without defer"]
    assert own["truth"] == pytest.approx(-math.log(1.5))
    assert own["coverage"]["n"] + own["n_nan"] == 5
    text = vi.tables(results)
    assert "### Coverage of the odds-ratio intervals" in text
    assert ("| yes/no odds x1.5 without defer, 3 actions, defer rare, 60 x 3 | "
            "no/yes without defer (-0.405) | ") in text
