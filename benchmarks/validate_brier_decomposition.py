"""Coverage of :func:`coherence.brier_decomposition`'s intervals for the population's
components, and of :func:`coherence.calibration_error`'s interval for the population
reliability.

The designs are :mod:`benchmarks.validate_calibration`'s (uniform and Beta(2, 5)
forecasts, calibrated or not, heaped on 0.05, rare outcomes, three forecasters per
question sharing its outcome), without a checker, so that the coherent forecasts are the
forecasts. The population's Brier score, reliability, resolution, uncertainty and
within-bin part (10 equal-width bins, as the function's) come from quadrature over the
latent forecast, or from 4e6 Monte Carlo draws for the clustered design. Each study is
analysed with the defaults (``n_resamples`` lowered to 999) and ``question`` the
cluster; ``calibration_error(binning="equal_width", group="question")`` is run on the
same table: its ``plugin`` is the decomposition's reliability, and its interval is for
the population reliability.

Run: ``python -m benchmarks.validate_brier_decomposition [--reps 400] [--only WORDS]
[--jobs 2] [--seed 7000]``;
JSON to ``benchmarks/results/validate_brier_decomposition.json``, the table to
``docs/brier_decomposition.md`` (``--tables``: from the JSON alone).
"""

from __future__ import annotations

import json
import time
import warnings
from typing import Any

import numpy as np

from benchmarks._harness import ROOT
from benchmarks._harness import environment
from benchmarks._harness import format_rate
from benchmarks._harness import generated_by
from benchmarks._harness import markdown_table
from benchmarks._harness import matrix_parser
from benchmarks._harness import one_thread
from benchmarks._harness import only_words
from benchmarks._harness import rejection_rate
from benchmarks._harness import write_json
from benchmarks._harness import write_tables
from benchmarks.validate_calibration import CURVES
from benchmarks.validate_calibration import DESIGNS
from benchmarks.validate_calibration import N_BINS
from benchmarks.validate_calibration import Design
from benchmarks.validate_calibration import population_points
from benchmarks.validate_calibration import sample
from benchmarks.validate_calibration import selected

SCRIPT = "validate_brier_decomposition.py"
OUT = ROOT / "benchmarks" / "results" / "validate_brier_decomposition.json"
DOC = ROOT / "docs" / "brier_decomposition.md"
COMPONENTS = ("brier", "reliability", "resolution", "uncertainty", "within_bin")
# (index into validate_calibration.DESIGNS, sizes)
PLAN = [(0, (100, 400)), (1, (100, 400)), (3, (100, 400)), (4, (400,)), (6, (400,)),
        (9, (1000,)), (10, (150, 600))]
#: designs of this matrix alone, after validate_calibration's (their seeds follow on):
#: forecasters whose bins each hold one outcome, where the resolution is the uncertainty,
#: and a sharp calibrated one whose outer bins nearly do
EXTRA = [
    Design("uniform p, separates the outcomes (y = 1[p > 0.5])", "uniform",
           "separates the outcomes (y = 1[p > 0.5])", "equal_width", (50, 200)),
    Design("uniform p, separates the outcomes, 30% YES (y = 1[p > 0.7])", "uniform",
           "separates the outcomes, 30% YES (y = 1[p > 0.7])", "equal_width", (50, 200)),
    Design("sharp (Beta(0.2, 0.2) p), calibrated, equal-width bins", "sharp", "calibrated",
           "equal_width", (50, 200)),
]


_ROUNDING = 1e-12


def population(design: Design) -> dict[str, float]:
    """The population's components in 10 equal-width bins of the stated forecast."""
    from coherence._scoring._forecast import bin_index

    t, s, dens = population_points(design)
    dens = dens / dens.sum()
    c = CURVES[design.curve](t)
    k = bin_index(s, N_BINS)
    mass = np.bincount(k, dens, minlength=N_BINS)
    used = mass > 0
    ms = np.bincount(k, dens * s, minlength=N_BINS)[used] / mass[used]
    mc = np.bincount(k, dens * c, minlength=N_BINS)[used] / mass[used]
    ybar = float(np.sum(dens * c))
    brier = float(np.sum(dens * (s * s - 2.0 * s * c + c)))
    rel = float(np.sum(mass[used] * (mc - ms) ** 2))
    res = float(np.sum(mass[used] * (mc - ybar) ** 2))
    unc = ybar * (1.0 - ybar)
    return {"brier": brier, "reliability": rel, "resolution": res, "uncertainty": unc,
            "within_bin": brier - rel + res - unc}


def cell(design: Design, n: int, reps: int, resamples: int, seed: int) -> dict[str, Any]:
    from coherence import brier_decomposition
    from coherence import calibration_error

    truth = population(design)
    gen = np.random.default_rng(seed)
    hits: dict[str, list[bool]] = {k: [] for k in (*COMPONENTS, "reliability_ce")}
    start = time.perf_counter()
    for _ in range(reps):
        df = sample(design, n, gen)
        if "question" not in df:
            df["question"] = np.arange(len(df))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            table = brier_decomposition(df, n_resamples=resamples,
                                        rng=gen).table.set_index("component")
            ce = calibration_error(df, binning="equal_width", group="question",
                                   n_resamples=resamples, rng=gen)
        for k in COMPONENTS:
            # within rounding: the quadrature's 1/4 of a separating design is 0.25 + 1e-16
            hits[k].append(bool(table.loc[k, "ci_low"] - _ROUNDING <= truth[k]
                                <= table.loc[k, "ci_high"] + _ROUNDING))
        lo, hi, _ = ce.confidence_interval
        hits["reliability_ce"].append(bool(lo <= truth["reliability"] <= hi))
    return {"design": design.name, "n": n, "truth": truth,
            "coverage": {k: rejection_rate(v) for k, v in hits.items()},
            "seconds": time.perf_counter() - start}


def table(cells: list[dict[str, Any]]) -> str:
    return "\n".join(markdown_table(
        ("design", "n", "Brier", "reliability", "reliability, `calibration_error`",
         "resolution", "uncertainty", "within-bin", "population REL / RES / UNC"),
        ([c["design"], c["n"], *(format_rate(c["coverage"][k]) for k in
                                 ("brier", "reliability", "reliability_ce", "resolution",
                                  "uncertainty", "within_bin")),
          " / ".join(f"{c['truth'][k]:.4f}" for k in ("reliability", "resolution",
                                                      "uncertainty"))]
         for c in cells)))


def write_docs(results: dict[str, Any]) -> None:
    env = results["environment"]
    body = (generated_by("validate_brier_decomposition", env)
            + f"); {results['reps']} studies per cell, "
            f"{results['resamples']} resamples; coverage of the 95% intervals of the "
            "population's components, with 95% Wilson intervals.\n\n"
            + table(results["cells"]))
    write_tables(DOC, SCRIPT, body)


def main(argv: list[str] | None = None) -> None:
    parser = matrix_parser(None, results=OUT, page="docs/brier_decomposition.md",
                           n_resamples=None, power_reps=None,
                           only="comma-separated words of a cell's 'design n=N norm=2'",
                           append=False, prog="python -m benchmarks.validate_brier_decomposition")
    parser.add_argument("--n-resamples", "--resamples", dest="resamples", type=int,
                        default=999)
    parser.add_argument("--jobs", type=int, default=1, help="cells run in parallel")
    parser.add_argument("--seed", type=int, default=7000,
                        help="base of the cells' seeds (a cell's is SEED + 1000 i + n, i its "
                             "design's index); another base gives fresh studies")
    args = parser.parse_args(argv)
    if args.tables:
        write_docs(json.loads(args.out.read_text(encoding="utf-8")))
        return
    from joblib import Parallel
    from joblib import delayed

    def run(design: Design, n: int, seed: int) -> dict[str, Any]:
        one_thread()
        row = cell(design, n, args.reps, args.resamples, seed)
        print(json.dumps(row), flush=True)
        return row

    words = only_words(args)
    extra = [(len(DESIGNS) + j, d, n) for j, d in enumerate(EXTRA) for n in d.sizes
             if not words or any(w in f"{d.name} n={n} norm={d.norm}" for w in words)]
    cells = Parallel(n_jobs=args.jobs)(delayed(run)(design, n,
                                                    args.seed + 1000 * i + n)
                                       for i, design, n in [*selected(PLAN, args), *extra])
    results = {"environment": environment(), "reps": args.reps, "resamples": args.resamples,
               "seed": args.seed, "cells": cells}
    write_json(args.out, results)
    if args.out == OUT:
        write_docs(results)


if __name__ == "__main__":
    main()
