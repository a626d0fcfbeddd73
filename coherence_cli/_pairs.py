"""``coherence pairs``: conditional-forecasting coherence of question-pair result files."""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from pathlib import Path
from typing import Any

from ._common import EXIT_OK
from ._common import UsageError
from ._common import add_resamples
from ._common import add_seed
from ._common import print_frame

__all__ = ["add_parser", "read_pairs_file", "run"]


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register the ``pairs`` command on the sub-parsers ``sub``."""
    from coherence import PAIRS_ALTERNATIVES
    from coherence import PAIRS_CI_METHODS
    from coherence import PAIRS_TESTS

    pairs = sub.add_parser(
        "pairs", help="conditional-forecasting coherence of question-pair files",
        description="Brier improvement, sensitivity, win rate, update direction and "
        "axiom checks per run, variant and category for pair result files (JSON of the "
        "field's layout, CSV or parquet). Each run (a model and its settings) is its own "
        "cell; failed records are skipped, named and counted (n_failed); a run without "
        "resolutions gets the metrics that need none (update direction, total probability, "
        "Bayes consistency).")
    pairs.add_argument("results", nargs="+", help="pair result files")
    pairs.add_argument("--resolutions", nargs="+", default=[], metavar="FILE",
                       help="result files whose resolutions are given, by pair id, to the "
                       "runs that have none (e.g. a one-direction run for a Bayes run)")
    pairs.add_argument("--pool", action="store_true",
                       help="pool the runs and variants of each model into one cell "
                       "(a pair may then appear only once per model)")
    pairs.add_argument("--by", default="category", help="grouping column (default category), "
                       "under its own name in the table and the --csv file")
    pairs.add_argument("--test", choices=PAIRS_TESTS, default=None,
                       help="the p-value in the 'pvalue' column (default: the library's)")
    pairs.add_argument("--alternative", choices=PAIRS_ALTERNATIVES, default=None,
                       help="alternative of p-values and intervals (default: the library's)")
    pairs.add_argument("--ci-method", choices=PAIRS_CI_METHODS, default=None,
                       help="the interval in 'ci_low, ci_high' (default: the library's)")
    add_resamples(pairs, None, "Monte Carlo resamples (default: the library's)")
    add_seed(pairs)
    pairs.add_argument("--csv", default=None, metavar="PATH",
                       help="write the whole per-cell table as CSV")
    return pairs


def read_pairs_file(path: str) -> Any:
    """A pairs file (the field's JSON result file, or a pairs table) as ``read_pairs``
    reads it; a missing file or bad JSON is a usage error. ``coherence pairs`` and
    ``coherence plan --test conditional_forecasting`` read their files with it."""
    from coherence import read_pairs

    if not Path(path).is_file():
        raise UsageError(f"no such file: {path}")
    try:
        return read_pairs(path)
    except json.JSONDecodeError as exc:
        raise UsageError(f"{path} is not valid JSON: {exc}") from exc


def run(args: argparse.Namespace) -> int:
    """Run ``coherence pairs``; warnings (skipped records) go to stderr, one line each."""
    frames = [read_pairs_file(p) for p in args.results]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        result = _analyse(args, frames)
    for w in caught:
        print(f"coherence pairs: warning: {str(w.message).splitlines()[0]}", file=sys.stderr)
    _show(args, result)
    return EXIT_OK


def _analyse(args: argparse.Namespace, frames: list[Any]) -> Any:
    import pandas as pd

    from coherence import attach_outcomes
    from coherence import conditional_forecasting

    if args.resolutions:
        if all({"a_outcome", "b_outcome"} <= set(f.columns) for f in frames):
            # nothing would take them: the option would be read and dropped without a word
            raise UsageError("--resolutions gives resolutions to the runs that have none, "
                             "and every results file given has its own; drop --resolutions")
        source = pd.concat([read_pairs_file(p) for p in args.resolutions], ignore_index=True)
        frames = [f if {"a_outcome", "b_outcome"} <= set(f.columns) else
                  attach_outcomes(f, source, missing="skip") for f in frames]
    data = pd.concat(frames, ignore_index=True)
    options = {name: value for name, value in (
        ("test", args.test), ("alternative", args.alternative), ("ci_method", args.ci_method),
        ("n_resamples", args.resamples)) if value is not None}
    return conditional_forecasting(data, by=args.by, pool=args.pool, rng=args.seed, **options)


def _show(args: argparse.Namespace, result: Any) -> None:
    from coherence import PAIRS_COLUMNS

    table = result.table
    # the library labels the --by groups 'category' whatever the column: named as grouped
    label = args.by if args.by not in table.columns else "category"
    table = table.rename(columns={"category": label})
    cells = [c for c in ("run", "model", "variant") if c in table.columns]
    if "run" in cells and "model" in cells:
        cells.remove("model")  # the run label starts with the model
    columns = [*cells, *(label if c == "category" else c for c in PAIRS_COLUMNS), "n_failed"]
    if table["n_bayes"].gt(0).any():
        columns += ["lotp_feasible_b", "lotp_error_a_mean", "lotp_error_b_mean"]
    print_frame(table.loc[:, columns])
    print(f"\nmean_improvement: Brier improvement of P(A | B = b) over P(A); CI and p-value: "
          f"{result.method}.")
    for note in table["note"].dropna().unique():
        print(f"NaN where noted: {note}.")
    if table["n_bayes"].eq(0).any():
        print("bayes_consistent, bayes_error_mean: blank where n_bayes is 0, no pair of the "
              "cell has P(B) and P(B | A) (a Bayes run asks for them).")
    if args.csv:
        table.to_csv(args.csv, index=False)
