"""Coverage of the bootstrap interval of :func:`coherence.calibration_error`.

For each design (a forecast distribution, a true calibration curve P(y = 1 | p)
and a bin rule) and sample size, ``--reps`` studies are simulated; in each the
95% interval of the debiased squared l2 calibration error (``norm=2``) is
computed and compared with the true binned error of the population bins,
obtained by quadrature. Recorded per cell: the coverage with its Wilson
interval, the mean of the debiased and of the plug-in estimate against the
truth (the bias the correction removes), and, where the truth is 0, how often
the interval excludes 0 (the interval is not a test; this is for reading only).

The ``norm=1`` interval is recorded too on the calibrated design, to show why it
warns (``NotCalibratedWarning``).

Run: ``python -m benchmarks.validate_calibration [--reps 400] [--n-resamples 199]``;
JSON to ``benchmarks/results/validate_calibration.json`` (``--out``), the table to
``docs/forecast_scoring.md`` between generated markers (``--tables``: from the JSON
alone).
"""

from __future__ import annotations

import json
import time
import warnings
from typing import Any

import numpy as np
import pandas as pd

from benchmarks._harness import ROOT
from benchmarks._harness import environment
from benchmarks._harness import format_rate
from benchmarks._harness import markdown_table
from benchmarks._harness import matrix_parser
from benchmarks._harness import rejection_rate
from benchmarks._harness import write_json
from benchmarks._harness import write_tables

SCRIPT = "validate_calibration.py"
OUT = ROOT / "benchmarks" / "results" / "validate_calibration.json"
DOC = ROOT / "docs" / "forecast_scoring.md"

CURVES = {
    "calibrated": lambda p: p,
    "over-confident (0.5 + 0.8 (p - 0.5))": lambda p: 0.5 + 0.8 * (p - 0.5),
    "slightly over-confident (0.5 + 0.95 (p - 0.5))": lambda p: 0.5 + 0.95 * (p - 0.5),
    "under-confident (p^0.7)": lambda p: p**0.7,
}
# (name, sampler of p, density on [0, 1] for the truth, curve, binning)
DESIGNS = [
    ("uniform p, calibrated", "uniform", "calibrated", "equal_mass"),
    ("uniform p, over-confident", "uniform", "over-confident (0.5 + 0.8 (p - 0.5))",
     "equal_mass"),
    ("uniform p, slightly over-confident", "uniform",
     "slightly over-confident (0.5 + 0.95 (p - 0.5))", "equal_mass"),
    ("Beta(2, 5) p, under-confident, equal-width bins", "beta", "under-confident (p^0.7)",
     "equal_width"),
    ("Beta(2, 5) p, calibrated, equal-width bins", "beta", "calibrated", "equal_width"),
    ("Beta(2, 5) p, under-confident", "beta", "under-confident (p^0.7)", "equal_mass"),
]
N_BINS = 10


def sample_p(kind: str, n: int, gen: np.random.Generator) -> np.ndarray:
    return gen.uniform(size=n) if kind == "uniform" else gen.beta(2.0, 5.0, size=n)


def truth(kind: str, curve: str, binning: str) -> float:
    """Binned squared l2 error of the population bins (midpoint rule, 2e6 points)."""
    from scipy import stats

    m = 2_000_000
    t = (np.arange(m) + 0.5) / m
    dens = np.ones(m) if kind == "uniform" else stats.beta(2.0, 5.0).pdf(t)
    if binning == "equal_width" or kind == "uniform":  # uniform: quantile bins = tenths
        k = np.minimum((t * N_BINS).astype(np.int64), N_BINS - 1)
    else:  # the population's quantile bins
        k = np.minimum((stats.beta(2.0, 5.0).cdf(t) * N_BINS).astype(np.int64), N_BINS - 1)
    mass = np.bincount(k, dens, minlength=N_BINS)
    mp = np.bincount(k, dens * t, minlength=N_BINS) / mass
    mc = np.bincount(k, dens * CURVES[curve](t), minlength=N_BINS) / mass
    return float(np.sum(mass / mass.sum() * (mc - mp) ** 2))


def cell(design: tuple[str, str, str, str], n: int, reps: int, resamples: int,
         seed: int, norm: int = 2) -> dict[str, Any]:
    from coherence import calibration_error

    name, kind, curve, binning = design
    theta = truth(kind, curve, binning) if norm == 2 else 0.0
    gen = np.random.default_rng(seed)
    cover, exclude, deb, plug = [], [], [], []
    start = time.perf_counter()
    for _ in range(reps):
        p = sample_p(kind, n, gen)
        y = (gen.uniform(size=n) < CURVES[curve](p)).astype(int)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = calibration_error(pd.DataFrame({"probability": p, "outcome": y}),
                                    n_bins=N_BINS, binning=binning, norm=norm,
                                    n_resamples=resamples, rng=gen)
        lo, hi, _ = res.confidence_interval
        cover.append(lo <= theta <= hi)
        exclude.append(not lo <= 0.0 <= hi)
        deb.append(res.statistic)
        plug.append(res.plugin)
    return {"design": name, "n": n, "norm": norm, "binning": binning, "truth": theta,
            "coverage": rejection_rate(cover),
            "excludes_zero": rejection_rate(exclude) if theta == 0.0 else None,
            "mean_debiased": float(np.mean(deb)), "mean_plugin": float(np.mean(plug)),
            "se_debiased": float(np.std(deb, ddof=1) / np.sqrt(reps)),
            "seconds": time.perf_counter() - start}


def table(cells: list[dict[str, Any]]) -> str:
    return "\n".join(markdown_table(
        ("design", "n", "norm", "true binned error", "mean debiased", "mean plug-in",
         "coverage of the 95% interval [Wilson 95%]", "interval excludes 0"),
        ([c["design"], c["n"], c["norm"], f"{c['truth']:.2e}", f"{c['mean_debiased']:.2e}",
          f"{c['mean_plugin']:.2e}",
          f"{format_rate(c['coverage'])} ({c['coverage']['n']} studies)",
          "" if c["excludes_zero"] is None else f"{c['excludes_zero']['rate']:.3f}"]
         for c in cells)))


def main(argv: list[str] | None = None) -> None:
    parser = matrix_parser(None, results=OUT, page="docs/forecast_scoring.md",
                           n_resamples=None, power_reps=None, only=None, append=False,
                           prog="python -m benchmarks.validate_calibration")
    parser.add_argument("--n-resamples", "--resamples", dest="resamples", type=int,
                        default=199)
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 400])
    parser.add_argument("--no-docs", action="store_true", help="write the JSON only")
    parser.add_argument("--docs-only", dest="tables", action="store_true",
                        help="the same as --tables")
    args = parser.parse_args(argv)
    if args.tables:
        write_docs(json.loads(args.out.read_text(encoding="utf-8")))
        return
    cells = []
    seed = 0
    for design in DESIGNS:
        for n in args.sizes:
            seed += 1
            cells.append(cell(design, n, args.reps, args.resamples, seed))
            print(json.dumps(cells[-1]), flush=True)
    for n in args.sizes:
        seed += 1
        cells.append(cell(DESIGNS[0], n, args.reps, args.resamples, seed, norm=1))
        print(json.dumps(cells[-1]), flush=True)
    results = {"environment": environment(), "reps": args.reps, "resamples": args.resamples,
               "n_bins": N_BINS, "cells": cells}
    write_json(args.out, results)
    if not args.no_docs and args.out == OUT:
        write_docs(results)


def write_docs(results: dict[str, Any]) -> None:
    env = results["environment"]
    body = (f"{results['reps']} studies per cell, {results['resamples']} bootstrap "
            f"resamples, {results['n_bins']} bins; commit `{env['commit'][:10]}`, "
            f"{env['date']}.\n\n" + table(results["cells"]))
    write_tables(DOC, SCRIPT, body)


if __name__ == "__main__":
    main()
