"""``coherence study CONFIG.toml``: design, elicit, test and report a whole study.

The runner is :func:`elicitation.run_study`; this command reads the file,
runs it and prints what was asked, how many calls were made, the p-values and
where everything was written. A second run with the same file makes no call.
"""

from __future__ import annotations

import argparse
import sys
import warnings
from typing import Any

from ._common import EXIT_FAILURE
from ._common import EXIT_OK
from ._common import UsageError

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    p = sub.add_parser(
        "study", help="a whole study from one TOML file: design, elicit, test, report",
        description="Run the study a TOML file describes (kind decision, pairs, "
        "consistency or forecasting): contexts, question pairs, consistency tuples or "
        "questions asked at a simulated date, "
        "asked of each configured model (an OpenAI-compatible server or a simulated agent) "
        "through a SQLite cache (an interrupted study resumes; a second run makes no "
        "call), the coherence tests on the table, and the HTML report. Writes table.csv, "
        "raw.csv, report.html and cache.sqlite to the file's 'out' folder; an 'out' holding "
        "another study's outputs (files this study does not write) is refused, naming them, "
        "and nothing is deleted.",
        epilog="example configs: docs/studies/ (see docs/study_config.md)")
    p.add_argument("config", help="the study's TOML file")
    p.add_argument("--quiet", action="store_true", help="no progress bars")


def _print_scores(report: Any, simulated_date: str) -> None:
    """The forecasting study's scores: one line per model and metric, with the interval."""
    level = report["confidence_level"].iloc[0] if len(report) else 0.95
    print(f"forecasts at the simulated date {simulated_date}, scored against the "
          f"resolutions (estimate and {level:.0%} interval)")
    shown = report.assign(
        interval=[f"[{lo:.4g}, {hi:.4g}]" if lo == lo else "" for lo, hi in
                  zip(report["ci_low"], report["ci_high"], strict=True)])
    print(shown[["model", "metric", "estimate", "interval", "n_questions"]].to_string(
        index=False, float_format=lambda x: f"{x:.4g}"))


def run(args: argparse.Namespace) -> int:
    import elicitation

    try:
        config = elicitation.load_study(args.config)
    except ValueError as exc:
        raise UsageError(f"{args.config}: {exc}") from None
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        try:
            result = elicitation.run_study(config, progress=False if args.quiet else None)
        finally:   # also when the study stops: what came before it was dropped
            _print_warnings(caught)
    print(result.summary())
    print()
    if result.config["kind"] == "consistency":
        table = result.report.pivot_table(index=["model", "checker"], columns="forecaster",
                                          values="statistic", sort=True, dropna=False)
        print("consistency checks: mean arbitrage violation (nats) by model and checker")
        print(table.round(4).to_string())
        return _not_computed(result.report, "checker", "forecaster")
    if result.config["kind"] == "forecasting":
        _print_scores(result.report, result.config["design"]["simulated_date"])
        return _not_computed(result.report, "metric")
    if result.spread is not None:
        first = result.config["seeds"][0]
        print(f"seed {first} (the first of seeds "
              f"{', '.join(map(str, result.config['seeds']))}; every seed's report is in "
              f"{_shown_folder(result.config['out'])}/seed-<s>/):")
    print(result.report.summary())
    if result.spread is not None:
        print()
        print(f"between-seed spread over seeds {', '.join(map(str, result.config['seeds']))}:")
        print(result.spread[["model", "test", "n_seeds", "statistic_mean", "statistic_sd",
                             "pvalue_min", "pvalue_max"]].round(4).to_string(index=False))
    lost = _models_without_rows(result)
    if result.config["kind"] != "decision":
        return EXIT_FAILURE if lost else EXIT_OK
    return max(_failed_tests(result), EXIT_FAILURE if lost else EXIT_OK)


def _models_without_rows(result: Any) -> bool:
    """Name every configured model (on every seed of a study over several) with no usable
    row in table.csv, every reply failed: it was left out of the report and the results,
    the command exiting 0 with the other models' grid (the parser's warning named no
    model)."""
    seeds = result.config.get("seeds", [None])
    lost = [(m["name"], s) for s in seeds for m in result.config["models"]
            if not ((result.data["model"] == m["name"])
                    & (True if s is None else result.data["seed"] == s)).any()]
    for name, s in lost:
        print(f"  no usable row from model {name}{'' if s is None else f' (seed {s})'}: every "
              "reply failed to parse (see raw.csv); it is left out of the "
              f"{'report' if result.config['kind'] == 'decision' else 'results'}"[:300])
    return bool(lost)


def _print_warnings(caught: list[Any]) -> None:
    """One line each, once (the tests' and the parser's notes), on standard error."""
    seen = set()
    for w in caught:
        line = str(w.message).splitlines()[0] if str(w.message) else w.category.__name__
        if line not in seen:
            seen.add(line)
            print(f"coherence study: warning: {line}"[:300], file=sys.stderr)


def _shown_folder(path: str) -> str:
    """A folder relative to the working directory when it is below it."""
    import os

    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def _not_computed(report: Any, what: str, *more: str) -> int:
    """Name every check (consistency) or score (forecasting) of ``report`` that could not
    be computed, its statistic or estimate NaN and its ``method`` saying why (no reply
    parsed), and the exit code: 1 when any could not (the command exited 0, the rows
    absent from the table it printed)."""
    value = "statistic" if "statistic" in report.columns else "estimate"
    failed = report[report[value].isna()] if len(report) else report
    for row in failed.to_dict("records"):
        at = ", ".join(str(row[c]) for c in more)
        print(f"  {row[what]} failed on {row['model']}{f' ({at})' if at else ''}: "
              f"{row['method']}"[:300])
    return EXIT_FAILURE if len(failed) else EXIT_OK


def _failed_tests(result: Any) -> int:
    """Name every test that failed to compute (on every seed of a study over several) and
    the exit code: 1 when any did."""
    import pandas as pd

    if result.spread is None:
        frame = result.report.to_frame()
        where = [""] * len(frame)
    else:   # every seed's rows, not only the first seed's report
        frame = pd.read_csv(result.paths["seeds"], keep_default_na=False,
                            dtype={"error": str})
        where = [f" (seed {s})" for s in frame["seed"]]
    failed = [(row, at) for row, at in zip(frame.itertuples(index=False), where, strict=True)
              if str(row.error) != ""]
    for row, at in failed:
        print(f"  {row.test} failed on {row.model}{at}: {row.error}"[:300])
    # tests named on purpose that ran on no model (a test that needs an action, with
    # decision = ""): said, and when none of them ran the study fails, as `coherence test`
    named = result.config["tests"]["tests"]
    named = [named] if isinstance(named, str) else list(named)
    absent = [] if "all" in named else [
        name for name in dict.fromkeys(named) if name not in set(frame["test"])]
    if absent:
        print(f"coherence study: {', '.join(absent)} did not run: "
              f"{'it does' if len(absent) == 1 else 'they do'} not apply to the study's table "
              "(with decision = \"\" no action is asked; the report says what each test "
              "needs)", file=sys.stderr)
    return EXIT_FAILURE if failed or len(absent) == len(set(named)) else EXIT_OK
