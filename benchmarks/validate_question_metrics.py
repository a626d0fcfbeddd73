"""Coverage of the intervals over questions of the per-forecast metrics: key-event
recall, source precision, the reasoning-graph metrics, the market checks' event
agreement and signal recall, on the designs of :mod:`benchmarks.question_metric_designs`.

Each of those functions averages a per-forecast (or per-event) value and gives the
interval of :func:`coherence._resampling.cluster_mean_interval` over questions, by what
the values are: Wilson's score interval with Student's t on Satterthwaite's degrees of
freedom for fractions, Wilson's for 0/1 values, the cluster bootstrap-t with Student's
small-sample factor for values without an upper bound. A study draws ``n`` questions of a
design and computes that interval from the values and their questions, the function's
last step (tests tie each function's interval to it); the previous release's, a
percentile cluster bootstrap, and the previous default (for fractions the Wilson interval
with t on (questions - 1), for values without an upper bound the plain bootstrap-t), on
the same study beside it.
Recorded per cell: the coverage of the population's mean by each 95% interval, their
mean widths, and the share of studies whose interval is a single point.

Run: ``python -m benchmarks.validate_question_metrics [--reps 2000] [--only WORDS]
[--jobs 2]`` (a word selects the cells whose ``design n=N`` holds it, ``n=20`` not
``n=200``); JSON to ``benchmarks/results/validate_question_metrics.json``, the tables
to ``docs/reasoning_quality.md`` (``--tables``: from the JSON alone).
"""

from __future__ import annotations

import json
import time
from typing import Any

import numpy as np

from benchmarks._harness import ROOT
from benchmarks._harness import environment
from benchmarks._harness import format_rate
from benchmarks._harness import generated_by
from benchmarks._harness import markdown_table
from benchmarks._harness import matrix_parser
from benchmarks._harness import rejection_rate
from benchmarks._harness import run_cells
from benchmarks._harness import selects
from benchmarks._harness import write_results
from benchmarks._harness import write_tables
from benchmarks.question_metric_designs import METRIC_DESIGNS
from benchmarks.question_metric_designs import population_mean
from benchmarks.question_metric_designs import sample

SCRIPT = "validate_question_metrics.py"
OUT = ROOT / "benchmarks" / "results" / "validate_question_metrics.json"
DOC = ROOT / "docs" / "reasoning_quality.md"
LEVEL = 0.95
PLAN = [(name, n) for name, sizes in [
    ("key-event recall, 3 key events, one forecast per question (mean 0.50)", (15, 40, 300)),
    ("key-event recall, 5 key events, 2-6 forecasts per question (mean 0.25)", (20, 100)),
    ("source precision, 1-10 citations, 30% cite nothing (mean 0.42)", (20, 60)),
    ("recall near 1, continuous Beta fractions (mean 0.92)", (15, 50)),
    ("U-shaped F1, Beta fractions piled at 0 and 1 (mean 0.50)", (20, 100)),
    ("rare hits, 10 key events (mean 0.06)", (30, 150)),
    ("question-level metric shared by 3 forecasts (mean 0.50)", (20,)),
    ("event agreement, 1-20 events per question (mean 0.69)", (12, 40, 150)),
    ("date error in days, lognormal with question shocks", (20, 100, 500)),
    ("forecast depth, 1 + Poisson with question shocks", (15, 60)),
    ("key-event recall, 5 key events, 1-3 forecasts per question (mean 0.36)", (1000,)),
    # added after the first run moved event agreement to the fraction interval
    ("event agreement, 1-20 events per question, strong shocks (mean 0.55)", (15, 60)),
    # added after Satterthwaite's degrees of freedom were chosen
    ("rare misses, 8 key events, recall near 1 (mean 0.94)", (25, 80)),
    ("source precision, 1-20 citations, half cite nothing (mean 0.06)", (40,)),
    ("rare event agreement, 1-20 events per question (mean 0.11)", (25, 100)),
    ("very rare hits, 20 key events, one forecast per question (mean 0.02)", (50, 200)),
    ("continuous fractions near 0, Beta (mean 0.08)", (15, 40)),
    ("key-event recall, 5 key events, 1-40 forecasts per question (mean 0.31)", (20, 60)),
    ("rare hits, 10 key events, 1-40 forecasts per question (mean 0.08)", (30,)),
    # held out when Student's factor was chosen for values without an upper bound
    ("date error in days, lognormal without question shocks", (30,)),
    ("date error in days, exponential with question shocks", (15, 50)),
    ("date error in days, lognormal sd 1.2, 1-10 forecasts per question", (25, 80)),
    ("date error in days, 40% dated exactly (0 days), lognormal otherwise", (20, 60)),
    ("forecast depth, one forecast per question, strong question shocks", (12,)),
] for n in sizes]


def previous_interval(values: np.ndarray, questions: np.ndarray, n_resamples: int,
                      gen: np.random.Generator) -> tuple[float, float]:
    """The previous release's interval: the percentile interval of cluster-bootstrap
    means over questions."""
    from coherence._resampling import cluster_bootstrap_means
    from coherence._resampling import percentile_interval
    from coherence._resampling import sorted_codes

    boots = cluster_bootstrap_means(values[:, None], sorted_codes(questions), n_resamples,
                                    gen)[:, 0]
    return percentile_interval(boots, LEVEL)


def fixed_df_interval(values: np.ndarray, questions: np.ndarray) -> tuple[float, float]:
    """The fraction interval before Satterthwaite's degrees of freedom: Student's t on
    (questions - 1)."""
    from coherence._resampling import fraction_interval
    from coherence._resampling import sorted_codes
    from coherence._resampling import weighted_mean_pivots

    codes = sorted_codes(questions)
    c = int(codes.max()) + 1
    sums = np.bincount(codes, weights=values, minlength=c)[:, None]
    m, s = weighted_mean_pivots(np.ones((1, c)), sums, np.bincount(codes).astype(float))
    return fraction_interval(float(m[0, 0]), float(s[0, 0]), c, LEVEL)


def plain_bootstrap_t(values: np.ndarray, questions: np.ndarray, n_resamples: int,
                      gen: np.random.Generator) -> tuple[float, float]:
    """The interval of values without an upper bound before Student's factor: the plain
    cluster bootstrap-t, cut at 0."""
    from coherence._resampling import cluster_mean_pivots
    from coherence._resampling import mean_interval
    from coherence._resampling import sorted_codes

    mean, se, reps, reps_se = cluster_mean_pivots(values[:, None], sorted_codes(questions),
                                                  n_resamples, gen)
    return mean_interval(float(mean[0]), float(se[0]), reps[:, 0], reps_se[:, 0], LEVEL,
                         (0.0, np.inf))


def study(name: str, n: int, resamples: int, seed: int) -> list[float]:
    """One study: 0/1 coverage, width and 0/1 point of the shipped interval, then the
    same of the previous release's, then of the previous default: the fraction interval
    on (questions - 1) degrees of freedom, or the plain bootstrap-t for values without an
    upper bound (NaN for 0/1 values)."""
    from coherence._resampling import cluster_mean_interval

    design = METRIC_DESIGNS[name]
    truth = population_mean(design)
    gen = np.random.default_rng(seed)
    values, questions = sample(design, n, gen)
    out: list[float] = []
    before = {"fraction": lambda: fixed_df_interval(values, questions),
              "nonnegative": lambda: plain_bootstrap_t(values, questions, resamples, gen)}
    for low, high in (cluster_mean_interval(values, questions, resamples, LEVEL, gen,
                                            kind=design.kind),
                      previous_interval(values, questions, resamples, gen),
                      before.get(design.kind, lambda: (np.nan, np.nan))()):
        out += [float(low <= truth <= high), high - low, float(high == low)]
    return out


def cell(name: str, n: int, reps: int, resamples: int, seed0: int) -> dict[str, Any]:
    start = time.perf_counter()
    out = np.array([study(name, n, resamples, seed0 + i) for i in range(reps)])
    row: dict[str, Any] = {"design": name, "n": n, "kind": METRIC_DESIGNS[name].kind,
                           "reps": reps, "truth": population_mean(METRIC_DESIGNS[name])}
    third = {"fraction": "fixed_df", "nonnegative": "plain_bootstrap_t"}.get(row["kind"])
    for j, label in enumerate(("shipped", "previous", third)):
        if label is None:
            continue
        row[f"coverage_{label}"] = rejection_rate(out[:, 3 * j] == 1.0)
        row[f"width_{label}"] = float(out[:, 3 * j + 1].mean())
        row[f"point_{label}"] = float(out[:, 3 * j + 2].mean())
    row["seconds"] = time.perf_counter() - start
    print(f"{name} n={n}: shipped {row['coverage_shipped']['rate']:.3f} previous "
          f"{row['coverage_previous']['rate']:.3f}", flush=True)
    return row


KIND_NAMES = {"fraction": "Wilson, Satterthwaite t", "proportion": "Wilson",
              "nonnegative": "bootstrap-t, Student factor"}
BEFORE = ("fixed_df", "plain_bootstrap_t")


def _before(c: dict[str, Any], what: str) -> str:
    """The previous default's coverage or width in a row of the table ('' or '-' for 0/1
    values)."""
    for label in BEFORE:
        if f"{what}_{label}" in c:
            value = c[f"{what}_{label}"]
            return format_rate(value) if what == "coverage" else f"{value:.3g}"
    return "" if what == "coverage" else "-"


def tables(results: dict[str, Any]) -> str:
    env = results["environment"]
    head = (generated_by("validate_question_metrics", env)
            + f"); {results['resamples']} bootstrap resamples; 95% Wilson intervals of the "
            "coverage in brackets. *Coverage*: of the population's mean by the 95% "
            "interval; *before*: the previous default, for values in [0, 1] the fraction "
            "interval with Student's t on (questions - 1) degrees of freedom, as shipped "
            "before Satterthwaite's, for values without an upper bound the plain bootstrap-t, "
            "as shipped before Student's factor; *point*: the share of studies whose "
            "interval is a single point.\n\n")
    rows = [[c["design"], c["n"], c["reps"], f"{c['truth']:.4g}",
             f"{format_rate(c['coverage_shipped'])} ({KIND_NAMES[c['kind']]})",
             _before(c, "coverage"), format_rate(c["coverage_previous"]),
             f"{c['width_shipped']:.3g} / {_before(c, 'width')} / {c['width_previous']:.3g}",
             f"{c['point_shipped']:.3f} / {c['point_previous']:.3f}"]
            for c in results["cells"]]
    return head + "\n".join(markdown_table(
        ("design", "questions", "studies", "mean", "coverage (shipped)",
         "before (t on C - 1; plain bootstrap-t)", "coverage (previous: percentile)",
         "mean width, shipped / before / previous",
         "point, shipped / previous"), rows))


def main(argv: list[str] | None = None) -> int:
    parser = matrix_parser(__doc__, results=OUT, page="docs/reasoning_quality.md",
                           n_resamples=None, reps=2000, power_reps=None,
                           prog="python -m benchmarks.validate_question_metrics",
                           append=False)
    parser.add_argument("--n-resamples", "--resamples", dest="resamples", type=int,
                        default=999)
    parser.add_argument("--jobs", type=int, default=1)
    args = parser.parse_args(argv)
    if args.tables:
        write_tables(DOC, SCRIPT, tables(json.loads(args.out.read_text(encoding="utf-8"))))
        return 0
    todo = [(name, n, args.reps, args.resamples, 7_000_000 + 100_000 * i)
            for i, (name, n) in enumerate(PLAN) if selects(args, f"{name} n={n}")]
    results = {"environment": environment(), "resamples": args.resamples, "level": LEVEL,
               "cells": run_cells(args, cell, todo)}
    write_results(args, results, OUT, DOC, SCRIPT, tables)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
