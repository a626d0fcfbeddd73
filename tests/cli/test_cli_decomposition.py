"""``coherence scores --decomposition [--checker NAME]``, in process."""

import warnings

import numpy as np
import pandas as pd
import pytest

from coherence import SmallSampleWarning
from coherence import brier_decomposition
from tests.cli.test_cli import one_line_error


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    """Two models, 30 negation sets each (P and not_P), outcomes a possible world."""
    rng = np.random.default_rng(0)
    rows, worlds = [], {}
    for model in ("m1", "m2"):
        for s in range(30):
            y = worlds.setdefault(s, int(rng.integers(0, 2)))  # one world per set
            p, p_not = rng.uniform(size=2).round(2)
            rows += [{"model": model, "set": s, "role": "P", "question": f"q{s}",
                      "probability": p, "outcome": y},
                     {"model": model, "set": s, "role": "not_P", "question": f"not q{s}",
                      "probability": p_not, "outcome": 1 - y}]
    frame = pd.DataFrame(rows)
    path = tmp_path_factory.mktemp("decomposition") / "f.csv"
    frame.to_csv(path, index=False)
    return frame, path


def test_decomposition_with_a_checker(run, table):
    frame, path = table
    out = run("scores", str(path), "--decomposition", "--checker", "negation",
              "--resamples", "50")
    assert out.returncode == 0, out.stderr
    assert "Brier decomposition per model" in out.stdout
    assert max(map(len, out.stdout.splitlines())) <= 100
    res = brier_decomposition(frame[frame["model"] == "m2"], checker="negation",
                              n_resamples=50, rng=0)
    assert res.incoherence > 0
    assert f"{res.incoherence:.4g}" in out.stdout


def test_decomposition_without_sets(run, table):
    frame, path = table
    out = run("scores", str(path), "--decomposition", "--resamples", "50")
    assert out.returncode == 0, out.stderr
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallSampleWarning)
        res = brier_decomposition(frame[frame["model"] == "m1"], n_resamples=50, rng=0)
    assert res.incoherence == 0.0
    assert f"{res.reliability:.4g}" in out.stdout


def test_decomposition_the_filter_leaves_incomplete_is_said(run, table, tmp_path):
    """With --cutoffs the decomposition is computed after the filter too; where the filter
    leaves a set incomplete, the output says so in place of the filtered table."""
    frame, _ = table
    early = (frame["set"] < 5) & (frame["role"] == "P")
    frame = frame.assign(opened=np.where(early, "2020-01-01", "2025-01-01"))
    path, cutoffs = tmp_path / "f.csv", tmp_path / "cutoffs.json"
    frame.to_csv(path, index=False)
    cutoffs.write_text('{"m1": "2023"}')
    out = run("scores", str(path), "--cutoffs", str(cutoffs), "--decomposition",
              "--checker", "negation", "--resamples", "50")
    assert out.returncode == 0, out.stderr
    text = " ".join(out.stdout.split())
    assert "[before the contamination filter] Brier decomposition" in text
    assert ("[after the contamination filter] Brier decomposition per model: not computed "
            "on the 115 forecasts the filter kept: Column 'set'") in text
    assert "must hold complete sets" in text


@pytest.mark.parametrize(("extra", "message"), [
    (("--checker", "negation"), "--checker goes with --decomposition"),
    (("--decomposition", "--checker", "nand"), "--checker must be one of"),
    (("--decomposition", "--checker", "negation", "--role", "kind"), "--role names column"),
])
def test_usage_errors(run, table, extra, message):
    out = run("scores", str(table[1]), *extra)
    one_line_error(out)
    assert message in out.stderr and out.stdout == ""
