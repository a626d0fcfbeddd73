"""The fast subset of benchmarks/validate_axiom_interval.py: a cell of each check runs and
writes its JSON and table; the 'before' interval is Student's t interval; the designs'
drawn incoherent share varies from sample to sample around the share asked for."""

from __future__ import annotations

import json

import numpy as np
import pytest
from scipy import stats

from tests._matrices import tables_text

# per-row values read from one row (or rows of one violation): the interval's
# point-interval warning is asserted in test_axiom_interval_edges.py, not here
pytestmark = pytest.mark.filterwarnings(
    "ignore:.*is the point itself:coherence.SmallSampleWarning")


def test_a_cell_of_each_check_writes_json_and_table(tmp_path, monkeypatch):
    from benchmarks import validate_axiom_interval as matrix

    monkeypatch.setattr(matrix, "TRUTH_TUPLES", 400)  # the population's means, smaller
    matrix.population_mean.cache_clear()
    first = {}  # the first design of each check
    for name, design in matrix.DESIGNS.items():
        first.setdefault(design.checker, (name, design))
    monkeypatch.setattr(matrix, "DESIGNS", dict(first.values()))
    out = tmp_path / "vai.json"
    assert matrix.main(["--reps", "3", "--n-resamples", "49", "--sizes", "20", "--out",
                        str(out)]) == 0
    matrix.population_mean.cache_clear()
    results = json.loads(out.read_text())
    assert results["settings"] == {"n_resamples": 49, "reps": 3, "truth_rows": 400}
    assert [c["check"] for c in results["cells"]] == [
        "negation_check", "conditional_tuple_check", "bayes_check"]
    for cell in results["cells"]:
        assert (cell["n_rows"], cell["reps"]) == (20, 3)
        for key in ("shipped", "t_before"):
            assert cell[key]["n"] == 3 and 0.0 <= cell[key]["rate"] <= 1.0
        assert cell["population_mean"] > 0 and all(w > 0 for w in cell["median_width"])
    text = tables_text(matrix, out, tmp_path, monkeypatch)
    assert "| negation_check, normal noise sd 0.03-0.10 | 20 | 3 | " in text


def test_the_interval_before_is_students_t():
    from benchmarks.validate_axiom_interval import t_before

    values = np.random.default_rng(1).exponential(size=17)
    half = stats.t.ppf(0.975, 16) * values.std(ddof=1) / np.sqrt(17)
    assert t_before(values) == pytest.approx((values.mean() - half, values.mean() + half),
                                             rel=1e-12)


def test_a_drawn_incoherent_share_varies_around_the_share():
    from benchmarks.checker_noise_designs import Design
    from benchmarks.checker_noise_designs import generate

    design = Design(checker="bayes", repetitions=(1, 1), n_tuples=50, share_incoherent=0.2,
                    delta=0.3, incoherent_drawn=True)
    shares = [generate(design, seed).groupby("set")["incoherent"].first().mean()
              for seed in range(40)]
    assert len(set(shares)) > 3 and abs(np.mean(shares) - 0.2) < 0.03
    fixed = generate(design.with_(incoherent_drawn=False), 0)
    assert fixed.groupby("set")["incoherent"].first().mean() == 0.2
