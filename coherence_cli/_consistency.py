"""``coherence consistency``: the consistency checks of Paleka et al. (2025) on tuple files."""

from __future__ import annotations

import argparse
import textwrap
from pathlib import Path
from typing import Any

from ._common import EXIT_OK
from ._common import UsageError
from ._common import add_resamples
from ._common import add_seed
from ._common import print_frame
from ._common import read_table

__all__ = ["add_parser", "run"]

#: below this many tuples the output says the intervals are unreliable (their measured
#: coverage falls short with 20 tuples already: docs/consistency_checks.md)
_FEW_TUPLES = 20


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register the ``consistency`` command on the sub-parsers ``sub``."""
    from coherence import CHECKERS

    cons = sub.add_parser(
        "consistency", help="consistency checks (negation, and, or, cond, ...) of tuple files",
        description="Arbitrage and frequentist violations of Paleka et al.'s (2025) "
        "consistency checkers, per file: the authors' JSON-lines tuple files "
        "(NegChecker.jsonl, ...: the checker is taken from the file name unless --checker "
        "is given) or tables (CSV, TSV, parquet, JSON records) with one column per "
        "question of the checker (--checker required). Mean, median and share flagged of "
        "both violations, with bootstrap-t intervals over tuples.",
        epilog="checkers: " + ", ".join(CHECKERS) + ". example: coherence consistency "
        "NegChecker.jsonl AndChecker.jsonl --definition code")
    cons.add_argument("files", nargs="+", metavar="FILE",
                      help="tuple files (.jsonl, or a table with --checker)")
    cons.add_argument("--checker", default=None, metavar="NAME",
                      help="the checker of every file (a name listed below, or the authors' class "
                      "name, e.g. NegChecker); default: from each .jsonl file's name")
    cons.add_argument("--definition", choices=("paper", "code"), default="paper",
                      help="the paper's definitions of the metrics, or the authors' code's "
                      "(default paper)")
    cons.add_argument("--tolerance", type=float, default=0.01,
                      help="arbitrage flagged at >= this many nats, > 0 (default 0.01)")
    add_resamples(cons, 999, "bootstrap resamples over tuples (default 999; "
                  "consistency_check in Python defaults to 9999)")
    add_seed(cons)
    cons.add_argument("--csv", default=None, metavar="PATH",
                      help="write the per-tuple table (forecasts, violations, flags, file) "
                      "as CSV")
    return cons


def _read(path: str, checker: str | None) -> Any:
    from coherence import read_consistency_tuples

    p = Path(path)
    if not p.is_file():
        raise UsageError(f"no such file: {path}")
    if p.suffix.lower() in (".jsonl", ".ndjson"):
        try:
            return read_consistency_tuples(p, checker=checker)
        except (ValueError, UnicodeDecodeError) as exc:  # the file and the line named
            message = str(exc).splitlines()[0].removeprefix("read_consistency_tuples: ")
            raise UsageError(f"{path}: {message}") from exc
    if checker is None:
        raise UsageError(f"{path}: --checker is needed for a table (only .jsonl files name "
                         "their checker)")
    data = read_table(path)
    data.attrs["checker"] = checker
    return data


def run(args: argparse.Namespace) -> int:
    """Run ``coherence consistency``: one row per file, and the per-tuple CSV on request."""
    import pandas as pd

    from coherence import consistency_check
    from coherence._validation import listed

    rows: list[dict[str, Any]] = []
    tables = []
    few: list[str] = []  # files of fewer than _FEW_TUPLES tuples
    # a file's name labels its rows, or its path as given where two files share a name (one
    # folder per forecaster, the same checker files in each)
    names = [Path(p).name for p in args.files]
    labels = {p: (n if names.count(n) == 1 else str(p)) for p, n in zip(args.files, names,
                                                                         strict=True)}
    for path in args.files:
        data = _read(path, args.checker)
        try:
            res = consistency_check(data, data.attrs["checker"], definition=args.definition,
                                    tolerance=args.tolerance, n_resamples=args.resamples,
                                    rng=args.seed)
        except ValueError as exc:
            raise UsageError(f"{path}: {str(exc).splitlines()[0]}") from exc
        arb, freq = res.confidence_interval, res.frequentist_interval
        rows.append({"file": labels[path], "checker": res.checker, "n": res.n_obs,
                     "mean_arb": res.mean_arbitrage, "arb_low": arb.low, "arb_high": arb.high,
                     "median_arb": res.median_arbitrage,
                     "flag_arb": res.share_arbitrage_above,
                     "mean_freq": res.mean_frequentist, "freq_low": freq.low,
                     "freq_high": freq.high, "median_freq": res.median_frequentist,
                     "flag_freq": res.share_frequentist_above})
        tables.append(res.table.assign(file=labels[path], checker=res.checker))
        if res.n_obs < _FEW_TUPLES:
            few.append(labels[path])
    print_frame(pd.DataFrame(rows))
    level = round(arb.confidence_level * 100)  # settings are shared by every file
    note = (f"arb: arbitrage violation (nats), flagged at >= {res.tolerance:g}; freq: "
            f"frequentist violation, flagged at >= {res.gamma * res.sigma:g}; flag: share "
            f"flagged; low, high: {level}% bootstrap-t interval of the mean over tuples "
            f"({res.n_resamples} resamples); definition {res.definition}.")
    if few:
        note += (f" Intervals from fewer than {_FEW_TUPLES} tuples ({listed(few, 3)}) "
                 "are unreliable: their upper ends can lie far above every violation seen; "
                 "read the median and the share flagged.")
    print("\n" + textwrap.fill(note, width=100))
    if args.csv:
        pd.concat(tables, ignore_index=True).to_csv(args.csv, index=False)
    return EXIT_OK
