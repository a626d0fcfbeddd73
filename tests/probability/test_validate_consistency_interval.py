"""The fast subset of benchmarks/validate_consistency_interval.py: a cell runs and writes its
JSON and table; the 'before' interval is the percentile interval of resampled means."""

from __future__ import annotations

import json

import numpy as np
import pytest

from coherence._resampling import percentile_interval
from tests._matrices import tables_text


def test_a_cell_writes_json_and_table(tmp_path, monkeypatch):
    from benchmarks import validate_consistency_interval as matrix

    monkeypatch.setattr(matrix, "TRUTH_TUPLES", 400)  # the population's means, smaller
    out = tmp_path / "vci.json"
    assert matrix.main(["--reps", "3", "--n-resamples", "49", "--sizes", "20", "--only",
                        "negation", "--out", str(out)]) == 0
    results = json.loads(out.read_text())
    assert results["settings"] == {"n_resamples": 49, "reps": 3, "truth_tuples": 400}
    assert [c["design"] for c in results["cells"]] == [
        name for name in matrix.DESIGNS if name.startswith("negation")]
    cell = results["cells"][0]
    assert (cell["n_tuples"], cell["reps"]) == (20, 3)
    for key in ("arbitrage_shipped", "arbitrage_percentile", "frequentist_shipped",
                "frequentist_percentile"):
        assert cell[key]["n"] == 3 and 0.0 <= cell[key]["rate"] <= 1.0
    assert cell["mean_arbitrage"] > 0 and all(w > 0 for w in cell["median_width"])
    text = tables_text(matrix, out, tmp_path, monkeypatch)
    assert "| negation, normal noise sd 0.03-0.10 | 20 | 3 | " in text


def test_the_interval_before_is_the_percentile_of_resampled_means():
    from benchmarks.validate_consistency_interval import percentile_before

    values = np.random.default_rng(1).exponential(size=17) * (np.arange(17) % 3 == 0)
    got = percentile_before(values, 99, np.random.default_rng(5))
    counts = np.random.default_rng(5).multinomial(17, np.full(17, 1 / 17), size=99)
    ordered = np.sort(values)
    means = [np.repeat(ordered, c).mean() for c in counts]  # each resample written out
    assert got == pytest.approx(percentile_interval(np.array(means), 0.95), rel=1e-12)


def test_the_share_of_incoherent_tuples_varies_between_studies():
    # the population's mean is over tuples each incoherent with a chance; a study with
    # exactly that share (the first 10% of its tuples) is a stratified sample, whose mean
    # varies less than the interval over tuples assumes: coverage read 0.98-0.998
    from benchmarks.checker_noise_designs import generate
    from benchmarks.validate_consistency_interval import DESIGNS

    for name, design in DESIGNS.items():
        if design.share_incoherent:
            shares = {generate(design.with_(n_tuples=50), s).groupby("set")["incoherent"]
                      .first().mean() for s in range(8)}
            assert len(shares) > 1, name
