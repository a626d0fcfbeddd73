"""The validation matrices' shared command line (benchmarks/_harness.py): ``--only``."""

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
