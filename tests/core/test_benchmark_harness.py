"""The validation matrices' shared command line (benchmarks/_harness.py): --only, --append."""

from __future__ import annotations

from pathlib import Path

from benchmarks._harness import matrix_parser
from benchmarks._harness import only_words


def _words(*argv: str) -> list[str]:
    parser = matrix_parser(None, results=Path("x.json"), page="x.md", n_resamples=99)
    return only_words(parser.parse_args(list(argv)))


def test_only_keeps_a_design_name_with_its_own_commas_whole():
    # a comma followed by a space belongs to the name ('Beta(0.5, 9.5)'); split at every
    # comma, the name could not be selected whole
    name = "rare outcomes (Beta(0.5, 9.5) p), over-forecasts"
    assert _words("--only", f"{name},small study") == [name, "small study"]


def test_only_may_be_repeated_and_defaults_to_every_cell():
    assert _words() == []
    assert _words("--only", "a,b", "--only", "c") == ["a", "b", "c"]
    assert _words("--only", ",a,,") == ["a"]


def test_every_benchmark_script_imports():
    # a script whose import of a package private fails cannot rerun its matrix nor
    # rewrite its docs tables (validate_pairs imported a removed _pairs._ttest)
    import importlib
    import pkgutil

    folder = Path(__file__).resolve().parents[2] / "benchmarks"
    for module in pkgutil.iter_modules([str(folder)]):
        importlib.import_module(f"benchmarks.{module.name}")


def test_conditional_forecasting_page_quotes_the_matrix_band_counts():
    # the page quoted "73 of the 81" null cells in band (a generator replaced since)
    # while the generated table of validation_pairs.md read 94/96
    import json
    import re

    root = Path(__file__).resolve().parents[2]
    cells = json.loads((root / "benchmarks/results/validate_pairs.json").read_text())["cells"]
    nulls = [c for c in cells if c["null"]]

    def inside(key: str) -> int:
        return sum(0.03 <= c[key] <= 0.07 for c in nulls)

    text = re.sub(r"\s+", " ", (root / "docs/conditional_forecasting.md").read_text())
    assert (f"in [0.03, 0.07] on {inside('reject bernoulli two-sided')} of the "
            f"{len(nulls)} null cells") in text
    assert f"counting ties in full: {inside('reject bernoulli-conservative two-sided')})" in text


def test_an_appended_sized_cell_keeps_the_stored_cells_environment(tmp_path):
    # run_sized_cells --append replaced the JSON's environment by this run's: the table's
    # head then named today's commit for every row, most of which ran at another
    import argparse
    import json

    from benchmarks._harness import run_sized_cells

    out = tmp_path / "m.json"
    stored = {"environment": {"commit": "old"}, "settings": {"reps": 2},
              "cells": [{"design": "a", "n": 10, "v": 1}, {"design": "b", "n": 10, "v": 2}]}
    out.write_text(json.dumps(stored))
    args = argparse.Namespace(append=True, out=out, sizes="10", only=["b"])
    head = {"environment": {"commit": "new"}, "settings": {"reps": 2}, "cells": []}
    run_sized_cells(args, head, ["a", "b"], (10,), "n",
                    lambda name, n: {"design": name, "n": n, "v": 3})
    written = json.loads(out.read_text())
    assert written["environment"] == {"commit": "old"}
    assert written["environment_appended"] == {"commit": "new"}
    assert [c["v"] for c in written["cells"]] == [1, 3]
