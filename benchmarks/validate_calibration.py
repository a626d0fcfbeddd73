"""Coverage of the bootstrap interval of :func:`coherence.calibration_error`.

For each design (a forecast distribution, a true calibration curve P(y = 1 | p)
and a bin rule) and sample size, ``--reps`` studies are simulated; in each the
95% interval of the debiased squared l2 calibration error (``norm=2``) is
computed and compared with the true binned error of the population bins,
obtained by quadrature (by Monte Carlo for the clustered design). The designs
include small (50) and large (2,000) studies, forecasts heaped on a 0.05 grid as
an LLM states them, rare outcomes, and three forecasters answering each question
(one outcome per question, the bootstrap over questions). Recorded per cell: the
coverage of the shipped bootstrap-t interval with its Wilson interval and, from
the same bootstrap replicates, of the basic interval used before; both mean
widths; the mean of the debiased and of the plug-in estimate against the truth
(the bias the correction removes), and, where the truth is 0, how often the
interval excludes 0 (the interval is not a test; this is for reading only).

The ``norm=1`` (l1) interval has cells of its own, against the true binned l1 error:
the calibrated forecaster, where the plain bootstrap-t lies above 0 in a quarter of
studies, and designs with a real error, some of them added after its interval was
chosen.

Run: ``python -m benchmarks.validate_calibration [--reps 1000] [--n-resamples 199]
[--only WORDS] [--append]`` (``--append`` keeps the JSON's other cells; each cell
records its commit);
JSON to ``benchmarks/results/validate_calibration.json`` (``--out``), the table to
``docs/forecast_scoring.md`` between generated markers (``--tables``: from the JSON
alone).
"""

from __future__ import annotations

import json
import time
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from benchmarks._harness import ROOT
from benchmarks._harness import environment
from benchmarks._harness import format_rate
from benchmarks._harness import markdown_table
from benchmarks._harness import matrix_parser
from benchmarks._harness import only_words
from benchmarks._harness import rejection_rate
from benchmarks._harness import run_cells
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
    "over-forecasts (0.7 p)": lambda p: 0.7 * p,
    "under-forecasts (min(1.3 p, 1))": lambda p: np.minimum(1.3 * p, 1.0),
    # forecasters who separate the outcomes (each bin holds one outcome): the Brier
    # decomposition's matrix (benchmarks/validate_brier_decomposition.py)
    "separates the outcomes (y = 1[p > 0.5])": lambda p: (p > 0.5).astype(np.float64),
    "separates the outcomes, 30% YES (y = 1[p > 0.7])":
        lambda p: (p > 0.7).astype(np.float64),
}
# the latent forecast's distribution: (scipy name, shape parameters); None: uniform
LATENT = {"uniform": None, "beta": (2.0, 5.0), "rare": (0.5, 9.5), "rare-b": (0.3, 6.0),
          "beta-b": (1.0, 8.0), "sharp": (0.2, 0.2)}
N_BINS = 10
CLUSTER_SD = 0.05  # forecasters of a clustered design: the question's p plus N(0, sd)


@dataclass(frozen=True)
class Design:
    """A forecaster: latent forecasts ``latent``, outcome P(y = 1) = ``curve`` of the
    latent forecast, stated as the latent value or heaped on a ``heap`` grid (0.05:
    LLM-like), or, with ``forecasters``, that many forecasters answering each question
    (stated p = the question's latent p + N(0, 0.05), clipped; one outcome per question,
    the bootstrap resampling questions)."""

    name: str
    latent: str
    curve: str
    binning: str
    sizes: tuple[int, ...]
    heap: float | None = None
    forecasters: int | None = None
    norm: int = 2


DESIGNS = [
    Design("uniform p, calibrated", "uniform", "calibrated", "equal_mass", (100, 400)),
    Design("uniform p, over-confident", "uniform", "over-confident (0.5 + 0.8 (p - 0.5))",
           "equal_mass", (50, 100, 400)),
    Design("uniform p, slightly over-confident", "uniform",
           "slightly over-confident (0.5 + 0.95 (p - 0.5))", "equal_mass", (100, 400)),
    Design("Beta(2, 5) p, under-confident, equal-width bins", "beta",
           "under-confident (p^0.7)", "equal_width", (100, 400)),
    Design("Beta(2, 5) p, calibrated, equal-width bins", "beta", "calibrated",
           "equal_width", (100, 400)),
    Design("Beta(2, 5) p, under-confident", "beta", "under-confident (p^0.7)", "equal_mass",
           (100, 400, 2000)),
    Design("heaped on 0.05 (LLM-like), Beta(2, 5), under-confident, equal-width bins",
           "beta", "under-confident (p^0.7)", "equal_width", (100, 400), heap=0.05),
    Design("heaped on 0.05 (LLM-like), Beta(2, 5), calibrated, equal-width bins", "beta",
           "calibrated", "equal_width", (400,), heap=0.05),
    Design("rare outcomes (Beta(0.5, 9.5) p, mean 0.05), calibrated", "rare", "calibrated",
           "equal_mass", (400,)),
    Design("rare outcomes (Beta(0.5, 9.5) p), over-forecasts", "rare",
           "over-forecasts (0.7 p)", "equal_mass", (400, 1000)),
    Design("3 forecasters per question (question shocks), Beta(2, 5), under-confident, "
           "equal-width bins", "beta", "under-confident (p^0.7)", "equal_width", (150, 600),
           forecasters=3),
    Design("uniform p, calibrated", "uniform", "calibrated", "equal_mass", (100, 400), norm=1),
    # added with the profile bound, not used to choose it
    Design("rare outcomes (Beta(0.3, 6) p, mean 0.05), under-forecasts (1.3 p)", "rare-b",
           "under-forecasts (min(1.3 p, 1))", "equal_mass", (300, 800)),
    Design("heaped on 0.05 (LLM-like), Beta(1, 8) p, over-forecasts, equal-width bins",
           "beta-b", "over-forecasts (0.7 p)", "equal_width", (500,), heap=0.05),
    Design("3 forecasters per question (question shocks), Beta(0.5, 9.5), over-forecasts, "
           "equal-width bins", "rare", "over-forecasts (0.7 p)", "equal_width", (600,),
           forecasters=3),
    # the l1 error (norm=1), after the l2 designs so that their seeds (index and size)
    # stay; the designs its interval was chosen on ...
    Design("uniform p, over-confident", "uniform", "over-confident (0.5 + 0.8 (p - 0.5))",
           "equal_mass", (100, 400), norm=1),
    Design("Beta(2, 5) p, under-confident, equal-width bins", "beta",
           "under-confident (p^0.7)", "equal_width", (100,), norm=1),
    Design("Beta(2, 5) p, under-confident", "beta", "under-confident (p^0.7)", "equal_mass",
           (400,), norm=1),
    Design("heaped on 0.05 (LLM-like), Beta(2, 5), under-confident, equal-width bins",
           "beta", "under-confident (p^0.7)", "equal_width", (400,), heap=0.05, norm=1),
    Design("rare outcomes (Beta(0.5, 9.5) p), over-forecasts", "rare",
           "over-forecasts (0.7 p)", "equal_mass", (400,), norm=1),
    Design("3 forecasters per question (question shocks), Beta(2, 5), under-confident, "
           "equal-width bins", "beta", "under-confident (p^0.7)", "equal_width", (150,),
           forecasters=3, norm=1),
    # ... and designs added after it was chosen
    Design("uniform p, slightly over-confident", "uniform",
           "slightly over-confident (0.5 + 0.95 (p - 0.5))", "equal_mass", (100, 400), norm=1),
    Design("uniform p, over-confident", "uniform", "over-confident (0.5 + 0.8 (p - 0.5))",
           "equal_mass", (50,), norm=1),
    Design("Beta(2, 5) p, under-confident", "beta", "under-confident (p^0.7)", "equal_mass",
           (2000,), norm=1),
    Design("rare outcomes (Beta(0.3, 6) p, mean 0.05), under-forecasts (1.3 p)", "rare-b",
           "under-forecasts (min(1.3 p, 1))", "equal_mass", (300,), norm=1),
    Design("heaped on 0.05 (LLM-like), Beta(1, 8) p, over-forecasts, equal-width bins",
           "beta-b", "over-forecasts (0.7 p)", "equal_width", (500,), heap=0.05, norm=1),
    Design("3 forecasters per question (question shocks), Beta(0.5, 9.5), over-forecasts, "
           "equal-width bins", "rare", "over-forecasts (0.7 p)", "equal_width", (600,),
           forecasters=3, norm=1),
]


def _latent(design: Design, size: int, gen: np.random.Generator) -> np.ndarray:
    shape = LATENT[design.latent]
    return gen.uniform(size=size) if shape is None else gen.beta(*shape, size=size)


def _stated(design: Design, t: np.ndarray) -> np.ndarray:
    return t if design.heap is None else np.round(t / design.heap) * design.heap


def sample(design: Design, n: int, gen: np.random.Generator) -> pd.DataFrame:
    """One study: ``probability``, ``outcome`` and, clustered, ``question``."""
    if design.forecasters is None:
        t = _latent(design, n, gen)
        y = (gen.uniform(size=n) < CURVES[design.curve](t)).astype(int)
        return pd.DataFrame({"probability": _stated(design, t), "outcome": y})
    k = design.forecasters
    q = _latent(design, n // k, gen)
    y = (gen.uniform(size=q.size) < CURVES[design.curve](q)).astype(int)
    p = np.clip(np.repeat(q, k) + gen.normal(0.0, CLUSTER_SD, q.size * k), 0.001, 0.999)
    return pd.DataFrame({"probability": p, "outcome": np.repeat(y, k),
                         "question": np.repeat(np.arange(q.size), k)})


def _bins(design: Design, s: np.ndarray, t: np.ndarray) -> np.ndarray:
    from scipy import stats

    from coherence._scoring._forecast import bin_index

    if design.binning == "equal_width":
        return bin_index(s, N_BINS)
    if design.heap is not None or design.forecasters is not None:
        raise ValueError("equal-mass population bins are defined for continuous latent "
                         "forecasts only")
    shape = LATENT[design.latent]
    cdf = t if shape is None else stats.beta(*shape).cdf(t)
    return np.minimum((cdf * N_BINS).astype(np.int64), N_BINS - 1)


def population_points(design: Design) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(latent forecast, stated forecast, weight) of the population: the midpoint rule on
    2e6 points of the latent forecast, or 4e6 Monte Carlo draws for a clustered design."""
    from scipy import stats

    if design.forecasters is None:
        m = 2_000_000
        t = (np.arange(m) + 0.5) / m
        shape = LATENT[design.latent]
        return t, _stated(design, t), (np.ones(m) if shape is None
                                       else stats.beta(*shape).pdf(t))
    gen = np.random.default_rng(20261128)
    t = _latent(design, 4_000_000, gen)
    return t, np.clip(t + gen.normal(0.0, CLUSTER_SD, t.size), 0.001, 0.999), np.ones(t.size)


def truth(design: Design) -> float:
    """Binned squared l2 error (``norm=2``) or binned l1 error (``norm=1``) of the
    population bins: the midpoint rule on 2e6 points of the latent forecast, or, for a
    clustered design, 4e6 Monte Carlo draws."""
    t, s, dens = population_points(design)
    k = _bins(design, s, t)
    mass = np.bincount(k, dens, minlength=N_BINS)
    used = mass > 0
    mp = np.bincount(k, dens * s, minlength=N_BINS)[used] / mass[used]
    mc = np.bincount(k, dens * CURVES[design.curve](t), minlength=N_BINS)[used] / mass[used]
    gap = mc - mp
    if design.norm == 1:
        return float(np.sum(mass[used] / mass.sum() * np.abs(gap)))
    return float(np.sum(mass[used] / mass.sum() * gap**2))


def _rates(cover: list[bool], width: list[float]) -> dict[str, Any]:
    return {"coverage": rejection_rate(cover), "mean_width": float(np.mean(width))}


def cell(design: Design, n: int, reps: int, resamples: int, seed: int) -> dict[str, Any]:
    """Coverage of the shipped interval (the default, ``'profile'``) and, on the same
    bootstrap draws, of the plain bootstrap-t (the previous default) and the basic
    interval (the one before), against the true binned error."""
    import copy

    from coherence import calibration_error
    from coherence._resampling import percentile_interval

    theta = truth(design)
    gen = np.random.default_rng(seed)
    group = None if design.forecasters is None else "question"
    kinds = ("profile", "bootstrap_t", "basic")
    cover: dict[str, list[bool]] = {k: [] for k in kinds}
    width: dict[str, list[float]] = {k: [] for k in kinds}
    exclude, deb, plug = [], [], []
    start = time.perf_counter()
    for _ in range(reps):
        df = sample(design, n, gen)
        kw = {"n_bins": N_BINS, "binning": design.binning, "norm": design.norm,
              "group": group, "n_resamples": resamples}
        same_draws = copy.deepcopy(gen)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = calibration_error(df, rng=gen, **kw)
            plain = calibration_error(df, interval="bootstrap-t", rng=same_draws, **kw)
        q_lo, q_hi = percentile_interval(res.replicates, 0.95)
        for kind, (lo, hi) in zip(kinds, (res.confidence_interval[:2],
                                          plain.confidence_interval[:2],
                                          (res.statistic + res.plugin - q_hi,
                                           res.statistic + res.plugin - q_lo)), strict=True):
            cover[kind].append(lo <= theta <= hi)
            width[kind].append(hi - lo)
        exclude.append(not res.confidence_interval[0] <= 0.0 <= res.confidence_interval[1])
        deb.append(res.statistic)
        plug.append(res.plugin)
    return {"design": design.name, "n": n, "norm": design.norm, "binning": design.binning,
            "truth": theta, **{k: _rates(cover[k], width[k]) for k in kinds},
            "excludes_zero": rejection_rate(exclude) if theta == 0.0 else None,
            "mean_debiased": float(np.mean(deb)), "mean_plugin": float(np.mean(plug)),
            "se_debiased": float(np.std(deb, ddof=1) / np.sqrt(reps)),
            "seconds": time.perf_counter() - start}


def table(cells: list[dict[str, Any]]) -> str:
    """The coverage table (every cell records its studies and commit: :func:`main`
    stamps new cells, :func:`merged` the earlier run's)."""
    return "\n".join(markdown_table(
        ("design", "n", "norm", "true binned error", "mean debiased", "mean plug-in",
         "coverage, shipped (profile) [Wilson 95%]", "coverage, bootstrap-t (before)",
         "coverage, basic", "mean width, shipped / bootstrap-t / basic",
         "shipped excludes 0", "studies", "commit"),
        ([c["design"], c["n"], c["norm"], f"{c['truth']:.2e}", f"{c['mean_debiased']:.2e}",
          f"{c['mean_plugin']:.2e}", format_rate(c["profile"]["coverage"]),
          f"{c['bootstrap_t']['coverage']['rate']:.3f}",
          f"{c['basic']['coverage']['rate']:.3f}",
          " / ".join(f"{c[k]['mean_width']:.2e}" for k in ("profile", "bootstrap_t", "basic")),
          "" if c["excludes_zero"] is None else f"{c['excludes_zero']['rate']:.3f}",
          c["reps"], f"`{c['commit'][:10]}`"]
         for c in cells)))


def selected(plan: list[tuple[int, tuple[int, ...]]],
             args: Any) -> Iterator[tuple[int, Design, int]]:
    """(index in DESIGNS, design, size) of each cell of ``plan`` that ``--only`` keeps (a
    word in its ``'design n=N norm=K'``); a cell's seed is then a function of index and
    size alone, not of which cells run."""
    words = only_words(args)
    for i, sizes in plan:
        design = DESIGNS[i]
        for n in sizes:
            label = f"{design.name} n={n} norm={design.norm}"
            if not words or any(w in label for w in words):
                yield i, design, n


def main(argv: list[str] | None = None) -> int:
    parser = matrix_parser(None, results=OUT, page="docs/forecast_scoring.md",
                           n_resamples=None, power_reps=None,
                           only="comma-separated words of a cell's 'design n=N norm=K'",
                           prog="python -m benchmarks.validate_calibration")
    parser.add_argument("--n-resamples", "--resamples", dest="resamples", type=int,
                        default=199)
    parser.add_argument("--no-docs", action="store_true", help="write the JSON only")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--docs-only", dest="tables", action="store_true",
                        help="the same as --tables")
    args = parser.parse_args(argv)
    if args.tables:
        write_docs(json.loads(args.out.read_text(encoding="utf-8")))
        return 0
    jobs = [(design, n, args.reps, args.resamples, 1000 * i + n)
            for i, design, n in selected([(i, d.sizes) for i, d in enumerate(DESIGNS)], args)]
    env = environment()
    cells = [{**c, "commit": env["commit"], "reps": args.reps}
             for c in run_cells(args, cell, jobs)]
    if args.append and args.out.exists():  # the JSON's other cells, in the matrix's order
        cells = merged(json.loads(args.out.read_text(encoding="utf-8")), cells)
    results = {"environment": env, "reps": args.reps, "resamples": args.resamples,
               "n_bins": N_BINS, "cells": cells}
    write_json(args.out, results)
    if not args.no_docs and args.out == OUT:
        write_docs(results)
    return 0


def merged(old: dict[str, Any], new: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The cells of an earlier run ``old`` (each stamped with that run's commit and
    studies where it has none) with ``new`` replacing those of the same design, size and
    norm, in the order of :data:`DESIGNS` and their sizes."""
    def key(c: dict[str, Any]) -> tuple[str, int, int]:
        return c["design"], c["n"], c["norm"]

    order = [(d.name, n, d.norm) for d in DESIGNS for n in d.sizes]
    stamp = {"commit": old["environment"]["commit"], "reps": old["reps"]}
    fresh = {key(c) for c in new}
    kept = [{**stamp, **c} for c in old["cells"] if key(c) not in fresh]
    return sorted([*kept, *new], key=lambda c: order.index(key(c)))


def write_docs(results: dict[str, Any]) -> None:
    env = results["environment"]
    body = (f"{results['resamples']} bootstrap resamples, {results['n_bins']} bins; last "
            f"run at commit `{env['commit'][:10]}`, {env['date']}; each cell's studies and "
            "commit in its row.\n\n" + table(results["cells"]))
    write_tables(DOC, SCRIPT, body)


if __name__ == "__main__":
    raise SystemExit(main())
