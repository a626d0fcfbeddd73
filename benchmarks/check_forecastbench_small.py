"""The size of ForecastBench's paired comparison (``forecastbench_scores(...).compare``)
and the coverage of its leaderboard's percentile intervals in studies of few questions,
below and around the 20 questions where ``benchmarks/validate_forecast_scores.py``
starts, on two of its null designs (``benchmarks/forecast_designs.py``): exchangeable
forecasters, and a sharp forecaster against a hedged one of the same expected Brier
score (skewed differences).

Per study, on the Brier score and the Brier Index: the centred bootstrap p-value with
no minimum of questions (``compare`` with its minimum patched to 0: what it gave before
it had one), and what ``compare`` gives now (NaN below the minimum: counted apart, not as
a rejection); beside them the competitor the docs point to, the sign-flip comparison of
``forecast_scores(...).compare`` on the Brier score. Then whether the 95% intervals hold
the population's expected Brier score (:data:`COVERAGE`): the leaderboard's of ``a``
and of the pooled score, and ``forecast_scores``' bootstrap-t interval of ``a``::

    python -m benchmarks.check_forecastbench_small  # writes the JSON (2-100 questions)
    python -m benchmarks.check_forecastbench_small --tables  # the table in the docs
"""

from __future__ import annotations

import argparse
import contextlib
import json
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any
from unittest import mock

import numpy as np

from benchmarks._harness import appended_note
from benchmarks._harness import coverage_columns
from benchmarks._harness import environment
from benchmarks._harness import format_rate
from benchmarks._harness import generated_by
from benchmarks._harness import map_jobs
from benchmarks._harness import markdown_table
from benchmarks._harness import rejection_columns
from benchmarks._harness import with_appended_environment
from benchmarks._harness import write_json
from benchmarks._harness import write_tables
from benchmarks.forecast_designs import FORECAST_DESIGNS
from benchmarks.forecast_designs import expected_scores
from benchmarks.forecast_designs import sample

ROOT = Path(__file__).resolve().parent.parent
RESULTS = ROOT / "benchmarks" / "results" / "check_forecastbench_small.json"
DOC = ROOT / "docs" / "forecastbench.md"
ALPHA = 0.05
DESIGNS = ("uniform, noise 0.1 vs 0.1", "sharp (noise 0.15) vs hedged, equal Brier")
LABELS = ("centred_brier", "centred_index", "compare_brier", "compare_index",
          "sign_flip_brier")
#: 0/1 coverage of the population's expected Brier score: a's by the leaderboard's
#: percentile interval, the pooled one by its ``confidence_interval``, and a's by
#: ``forecast_scores``' cluster bootstrap-t interval (drawn from a generator of its own)
COVERAGE = ("cover_percentile_a", "cover_percentile_pooled", "cover_bootstrap_t_a")


def _study(job: tuple[str, int, int, int]) -> list[float]:
    """The five p-values (:data:`LABELS`) of one study, then the low and high ends of its
    three intervals (:data:`COVERAGE`); the centred p-values are ``compare``'s own with
    its minimum of questions set to 0."""
    from coherence import forecast_scores
    from coherence import forecastbench_scores
    from coherence._scoring import _forecastbench

    name, n, seed, resamples = job
    gen = np.random.default_rng(seed)
    df = sample(FORECAST_DESIGNS[name], n, gen)[["model", "question", "probability",
                                                 "outcome"]]
    scores = ("brier", "brier_index")
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fb = forecastbench_scores(df, n_resamples=resamples, rng=gen)
        with mock.patch.object(_forecastbench, "MIN_COMPARE_QUESTIONS", 0):
            out = [float(fb.compare("a", "b", score=s).pvalue) for s in scores]
        out += [float(fb.compare("a", "b", score=s).pvalue) for s in scores]
        fs = forecast_scores(df, n_resamples=99, rng=gen)
        out.append(float(fs.compare("a", "b", n_resamples=resamples, rng=gen).pvalue))
        own = forecast_scores(df, n_resamples=resamples, rng=np.random.default_rng([seed, 1]))
    fb_a = fb.table.set_index("model").loc["a"]
    fs_a = own.table.set_index("model").loc["a"]
    return [*out, fb_a["brier_ci_low"], fb_a["brier_ci_high"], *fb.confidence_interval[:2],
            fs_a["brier_ci_low"], fs_a["brier_ci_high"]]


def _coverage(rows: Any, name: str) -> dict[str, Any]:
    """Per :data:`COVERAGE` interval of ``rows`` (the studies' :func:`_study`): the
    :func:`coverage_columns` rate of the population's expected Brier score (a's, or the
    pooled one's) over the intervals that are not NaN, and ``label_n_nan``."""
    truth = expected_scores(FORECAST_DESIGNS[name])
    a, pooled = truth["a"][0], (truth["a"][0] + truth["b"][0]) / 2
    ends = np.asarray(rows, dtype=np.float64)[:, len(LABELS):]
    out: dict[str, Any] = {}
    for j, (label, value) in enumerate(zip(COVERAGE, (a, pooled, a), strict=True)):
        held = coverage_columns(ends[:, 2 * j], ends[:, 2 * j + 1], value)
        out[label], out[f"{label}_n_nan"] = held["coverage"], held["n_nan"]
    return out


def _row(c: dict[str, Any]) -> list[str]:
    def rate(label: str) -> str:
        nan = c[f"{label}_n_nan"]
        return ("no p-value" if nan == c["studies"] else format_rate(c[label])
                + (f" ({nan} NaN)" if nan else ""))

    return [c["design"], str(c["n"]), *map(rate, LABELS)]


def _coverage_row(c: dict[str, Any]) -> list[str]:
    def rate(label: str) -> str:
        nan = c[f"{label}_n_nan"]
        return format_rate(c[label]) + (f" ({nan} NaN)" if nan else "")

    return [c["design"], str(c["n"]), *map(rate, COVERAGE)]


def tables(results: dict[str, Any]) -> str:
    env = results["environment"]
    lines = markdown_table(
        ("design", "questions", "centred, Brier", "centred, Brier Index",
         "compare, Brier", "compare, Brier Index", "sign flip (forecast_scores), Brier"),
        map(_row, results["cells"]))
    cells = [c for c in results["cells"] if "cover_percentile_a" in c]
    coverage = markdown_table(
        ("design", "questions", "percentile, a's Brier", "percentile, pooled Brier",
         "bootstrap-t (forecast_scores), a's Brier"), map(_coverage_row, cells))
    return "\n".join([*lines, "", "Coverage of the 95% intervals on the same studies (of the "
                      "population's expected Brier score; the leaderboard warns below "
                      "40 questions):", "", *coverage, "",
                      generated_by("check_forecastbench_small", env)
                      + f"; {results['studies']} studies a cell, {results['resamples']} "
                      "replicates, rejection rate at 0.05 and coverage with their Wilson 95% "
                      "intervals)." + appended_note(results)])


def _appended(results: dict[str, Any]) -> dict[str, Any]:
    """``results`` merged into the stored JSON: its cells added to the stored ones (in
    design and size order, replacing a cell run again), the stored environment kept and
    this run's as ``environment_appended`` (an earlier one's moves to
    ``environment_appended_earlier``). The settings must be the stored ones."""
    old = json.loads(RESULTS.read_text())
    if (old["studies"], old["resamples"]) != (results["studies"], results["resamples"]):
        raise SystemExit("--append: the JSON was written with other --studies or --resamples")
    new = {(c["design"], c["n"]) for c in results["cells"]}
    cells = [c for c in old["cells"] if (c["design"], c["n"]) not in new] + results["cells"]
    cells.sort(key=lambda c: (DESIGNS.index(c["design"]), c["n"]))
    return {**with_appended_environment(old, results["environment"]), "cells": cells}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("sizes", nargs="*", type=int,
                        default=[2, 3, 5, 10, 15, 20, 30, 40, 50, 75, 100])
    parser.add_argument("--studies", type=int, default=400)
    parser.add_argument("--resamples", type=int, default=999)
    parser.add_argument("--workers", type=int, default=2, help="processes (1: this one)")
    parser.add_argument("--append", action="store_true",
                        help="keep the cells already in the JSON (a cell run again "
                        "replaces its earlier row; this run's environment is "
                        "'environment_appended')")
    parser.add_argument("--tables", action="store_true",
                        help="only write the docs table from the JSON")
    args = parser.parse_args(argv)
    if not args.tables:
        cells = []
        with (ProcessPoolExecutor(args.workers) if args.workers > 1
              else contextlib.nullcontext()) as pool:
            for name in DESIGNS:
                for n in args.sizes:
                    jobs = [(name, n, 9_000_000 + 1000 * n + s, args.resamples)
                            for s in range(args.studies)]
                    p = map_jobs(_study, jobs, pool)
                    cells.append({"design": name, "n": n, "studies": args.studies,
                                  **rejection_columns(np.asarray(p)[:, :len(LABELS)],
                                                      LABELS, ALPHA, none_if_untested=True),
                                  **_coverage(p, name)})
                    print(name, n, {k: cells[-1][k] and cells[-1][k]["rate"]
                                    for k in (*LABELS, *COVERAGE)}, flush=True)
        results = {"environment": environment(()), "alpha": ALPHA,
                   "studies": args.studies, "resamples": args.resamples, "cells": cells}
        write_json(RESULTS, _appended(results) if args.append else results)
    write_tables(DOC, "check_forecastbench_small.py",
                 tables(json.loads(RESULTS.read_text())))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
