"""Validation matrix of conditional_forecasting's p-values and intervals.

Run from the repository root (single-threaded; a few minutes on one core)::

    nice -n 15 python -m benchmarks.validate_pairs [--reps 400] [--n-resamples 199]
    python -m benchmarks.validate_pairs --tables   # rewrite docs/validation_pairs.md's block

Studies come from the independent generator ``benchmarks/pairs_designs.py`` (exact
expected improvement per pair; nulls with ``E Delta_i = 0`` for every pair, balanced and
rare base rates of A and B, strong / weak / no relatedness, n = 14, 30, 50, 100), never
from the package. For each study it computes the three p-values of
:func:`coherence.conditional_forecasting` (the array layer: ``bernoulli_pvalue``, the
default; ``ttest_pvalue``; ``_bootstrap_t``, the earlier default), two-sided and
``"greater"``, and whether the intervals (bootstrap-t, the default, and normal) contain
the study's true mean expected improvement. Results go to
``benchmarks/results/validate_pairs.json`` with versions, commit and machine.
"""

from __future__ import annotations

import json
import os
import sys
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._harness import environment
from benchmarks._harness import markdown_table
from benchmarks._harness import matrix_parser
from benchmarks._harness import one_thread
from benchmarks._harness import write_json
from benchmarks._harness import write_tables
from benchmarks.pairs_designs import PairDesign
from benchmarks.pairs_designs import alternative_designs
from benchmarks.pairs_designs import draw_study
from benchmarks.pairs_designs import improvement
from benchmarks.pairs_designs import null_designs
from coherence._intervals import ttest_pvalue
from coherence._probability._pairs import _bernoulli_ci
from coherence._probability._pairs import _bernoulli_null
from coherence._probability._pairs import _bootstrap_t
from coherence._probability._pairs import _normal_ci
from coherence._probability._pairs import _side_pvalue

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "validate_pairs.json"
DOC = ROOT / "docs" / "validation_pairs.md"
#: The study's file, next to the clone (the tests' convention), or where COHERENCE_SHARED_DATA says.
REAL = Path(os.environ.get("COHERENCE_SHARED_DATA", ROOT.parent / "shared" / "data")) / \
    "conditional-pairs" / "gpt4o_skeptical.json"
ALPHA = 0.05
NS = (14, 30, 50, 100)
METHODS = ("bernoulli", "bernoulli-conservative", "t", "bootstrap-t")


def one_study(design: PairDesign, n: int, n_resamples: int,
              rng: np.random.Generator) -> dict[str, float]:
    """p-values (two-sided and greater) of the four tests and interval hits for one study.

    Coverage entries are 1 (the interval holds the study's true mean expected
    improvement), 0 (it does not) or NaN (no interval: every improvement equal for the
    bootstrap-t and normal intervals, no pair updating for the Bernoulli one), so that a
    study without an interval is never counted as a miss."""
    s = draw_study(design, n, rng)
    x = improvement(s)
    truth = float(s["expected"].mean())
    truth_b = float(s["expected_given_b"].mean())
    p_cond = np.where(s["b_outcome"] == 1, s["p_a_given_b1"], s["p_a_given_b0"])
    out: dict[str, float] = {"truth": truth, "truth given b": truth_b,
                             "informative": float(np.count_nonzero(s["p_a"] != p_cond))}

    def hit(lo: float, hi: float, target: float = truth) -> float:
        if not (np.isfinite(lo) or np.isfinite(hi)) or lo != lo or hi != hi:
            return float("nan")
        return float(lo <= target <= hi)

    null = _bernoulli_null(s["p_a"], p_cond, x, n_resamples, rng)
    for alt in ("two-sided", "greater"):
        if null is None:
            out[f"bernoulli {alt}"] = out[f"bernoulli-conservative {alt}"] = float("nan")
            out[f"cover bernoulli {alt}"] = float("nan")
            out[f"cover bernoulli {alt} | b"] = float("nan")
        else:
            out[f"bernoulli {alt}"] = _side_pvalue(*null.sides(0.0, True), alt)
            out[f"bernoulli-conservative {alt}"] = _side_pvalue(*null.sides(0.0, False), alt)
            ci = _bernoulli_ci(null, 0.95, alt)
            out[f"cover bernoulli {alt}"] = hit(*ci)
            out[f"cover bernoulli {alt} | b"] = hit(*ci, target=truth_b)
        out[f"t {alt}"] = ttest_pvalue(x, alt)
        p_bt, lo, hi = _bootstrap_t(x, 0.95, n_resamples, rng, alt)
        out[f"bootstrap-t {alt}"] = p_bt
        if alt == "two-sided":
            out["cover bootstrap-t"] = hit(lo, hi)
            out["cover bootstrap-t | b"] = hit(lo, hi, target=truth_b)
            _, lo_n, hi_n = _normal_ci(x, 0.95, alt)
            out["cover normal"] = hit(lo_n, hi_n) if hi_n > lo_n else float("nan")
    return out


def _rate(p: np.ndarray) -> float:
    """Rejection rate at ALPHA; an undefined p-value (NaN) does not reject."""
    return float(np.mean(np.nan_to_num(p, nan=1.0) <= ALPHA))


COVERAGE = ("cover bernoulli two-sided", "cover bernoulli greater", "cover bootstrap-t",
            "cover normal", "cover bernoulli two-sided | b", "cover bernoulli greater | b",
            "cover bootstrap-t | b")


def run_cell(design: PairDesign, n: int, reps: int, n_resamples: int,
             rng: np.random.Generator) -> dict[str, Any]:
    rows = [one_study(design, n, n_resamples, rng) for _ in range(reps)]
    keys = rows[0].keys()
    arr = {k: np.array([r[k] for r in rows]) for k in keys}
    cell: dict[str, Any] = {"design": design.name, "settings": design.__dict__, "n": n,
                            "reps": reps, "null": design.is_null,
                            "mean_expected_improvement": float(arr["truth"].mean()),
                            "mean_expected_improvement_given_b": float(
                                arr["truth given b"].mean()),
                            "median informative pairs": float(np.median(arr["informative"])),
                            "share no informative pair": float(np.mean(
                                arr["informative"] == 0))}
    for m in METHODS:
        for alt in ("two-sided", "greater"):
            cell[f"reject {m} {alt}"] = _rate(arr[f"{m} {alt}"])
        cell[f"share no pvalue {m}"] = float(np.mean(np.isnan(arr[f"{m} two-sided"])))
    tested = ~np.isnan(arr["bernoulli two-sided"])
    cell["reject bernoulli two-sided, tested studies"] = (
        _rate(arr["bernoulli two-sided"][tested]) if tested.any() else float("nan"))
    for c in COVERAGE:
        # coverage among the studies that have an interval; the others reported apart
        v = arr[c]
        defined = np.isfinite(v)
        cell[c] = float(v[defined].mean()) if defined.any() else float("nan")
        cell[f"share no interval {c.removeprefix('cover ')}"] = float(np.mean(~defined))
    return cell


def real_file() -> dict[str, Any] | None:
    """The study's one-sided figures on the shared file: t and Bernoulli p-values."""
    if not REAL.exists():
        return None
    from coherence import conditional_forecasting
    from coherence import read_pairs

    table = read_pairs(REAL)
    out: dict[str, Any] = {"file": REAL.name}
    for test in METHODS:
        for alt in ("two-sided", "less", "greater"):
            res = conditional_forecasting(table, test=test, alternative=alt, rng=0)
            out[f"{test} {alt}"] = dict(zip(res.table["category"], res.table["pvalue"],
                                            strict=True))
    return out


# ---------------------------------------------------------------- tables
def _f(v: float) -> str:
    return "" if v != v else f"{v:.3f}"


def _band(values: list[float]) -> str:
    v = np.array(values, dtype=float)
    if v.size == 0:
        return "no cell"
    inside = int(np.sum((v >= 0.03) & (v <= 0.07)))
    return (f"{inside}/{v.size} in [0.03, 0.07] (range {v.min():.3f}-{v.max():.3f}; "
            f"{int(np.sum(v < 0.03))} below, {int(np.sum(v > 0.07))} above)")


def _lowest(cells: list[dict[str, Any]], key: str) -> str:
    v = np.array([c[key] for c in cells], dtype=float)
    v = v[np.isfinite(v)]
    return f"min {v.min():.3f}, {int(np.sum(v < 0.93))}/{v.size} cells below 0.93"


def summary(results: dict[str, Any]) -> str:
    """Headline figures over the matrix, computed from the JSON."""
    cells = results["cells"]
    nulls = [c for c in cells if c["null"]]
    some = [c for c in nulls if c["median informative pairs"] >= 3]
    few = [c for c in nulls if c["median informative pairs"] < 3]
    sizes = (("Bernoulli mid-p (default)", "reject bernoulli two-sided"),
             ("Bernoulli mid-p, greater", "reject bernoulli greater"),
             ("Bernoulli, ties in full (earlier default)",
              "reject bernoulli-conservative two-sided"),
             ("t", "reject t two-sided"), ("t, greater", "reject t greater"),
             ("bootstrap-t", "reject bootstrap-t two-sided"))
    coverage = [(label, target, _lowest(cells, key)) for label, key, target in (
        ("Bernoulli (default)", "cover bernoulli two-sided | b", "given b"),
        ("Bernoulli, greater", "cover bernoulli greater | b", "given b"),
        ("Bernoulli (default)", "cover bernoulli two-sided", "mean over B"),
        ("bootstrap-t (earlier default)", "cover bootstrap-t | b", "given b"),
        ("bootstrap-t (earlier default)", "cover bootstrap-t", "mean over B"),
        ("normal", "cover normal", "mean over B"))]
    for rate in ("balanced", "rare"):
        group = [c for c in cells if c["settings"]["b_rate"] == rate]
        coverage += [(label, f"mean over B, B {rate}", _lowest(group, key))
                     for label, key in (("Bernoulli (default)", "cover bernoulli two-sided"),
                                        ("bootstrap-t (earlier default)", "cover bootstrap-t"))]
    lines = ["### Summary", "",
             f"Size at alpha = 0.05, two-sided, over the {len(nulls)} null cells; "
             f"{len(some)} cells whose median study has at least 3 informative pairs, "
             f"{len(few)} with fewer:", "",
             *markdown_table(("test", "cells with >= 3 informative pairs", "cells with fewer"),
                             ([label, _band([c[key] for c in some]),
                               _band([c[key] for c in few])] for label, key in sizes)),
             "", "Coverage of the 95% intervals over all cells (studies with an interval):",
             "", *markdown_table(("interval", "target", "coverage"), coverage), ""]
    return "\n".join(lines)


def tables(results: dict[str, Any]) -> str:
    env = results["environment"]
    cells = results["cells"]
    reps = sorted({c["reps"] for c in cells})
    lines = [f"Generated from `benchmarks/results/validate_pairs.json` (commit "
             f"`{env['commit'][:10]}`, {env['date']}, {results['settings']['n_resamples']} "
             f"Monte Carlo resamples per p-value, {', '.join(map(str, reps))} studies per "
             f"cell; {results['settings']['elapsed_s']:.0f} s on {env['machine']['cpus']} "
             "shared cores). Rejection rates at alpha = 0.05 over all studies (a study "
             "without a p-value does not reject); MC standard error about "
             f"{(0.05 * 0.95 / min(reps)) ** 0.5:.3f} at {min(reps)} "
             "studies. *Informative*: the median number of pairs whose conditional forecast "
             "differs from P(A) (the others have improvement 0 whatever happens); *none*: "
             "the share of studies with no informative pair (no test, no Bernoulli "
             "interval). Coverage is over the studies that have an interval; *no interval*: "
             "the share of studies whose bootstrap-t interval is undefined (every "
             "improvement equal). *Given b*: coverage of the mean expected improvement given "
             "the resolutions B actually had, mean E[Delta_i | b_i], the estimand of a test that "
             "holds B's outcomes fixed; the other coverage columns are of mean E Delta_i.", ""]
    lines += [summary(results)]
    size_keys = ("reject bernoulli two-sided", "reject bernoulli two-sided, tested studies",
                 "reject bernoulli greater", "reject bernoulli-conservative two-sided",
                 "reject t two-sided", "reject t greater", "reject bootstrap-t two-sided",
                 "cover bernoulli two-sided", "cover bernoulli greater",
                 "cover bernoulli two-sided | b", "cover bootstrap-t",
                 "share no interval bootstrap-t", "cover normal")
    lines += ["### Size (nulls: every pair's expected improvement is exactly 0)", "",
              *markdown_table(
                  ("design", "n", "informative", "none", "Bernoulli mid-p (default)",
                   "Bernoulli, tested studies", "Bernoulli, greater", "Bernoulli, ties in full",
                   "t", "t, greater", "bootstrap-t", "coverage Bernoulli (default)",
                   "coverage Bernoulli, greater", "coverage Bernoulli, given b",
                   "coverage bootstrap-t", "no interval", "coverage normal"),
                  ([c["design"], c["n"], f"{c['median informative pairs']:g}",
                    _f(c["share no informative pair"]), *(_f(c[k]) for k in size_keys)]
                   for c in cells if c["null"]))]
    power_keys = ("reject bernoulli two-sided", "reject bernoulli greater",
                  "reject bernoulli-conservative two-sided", "reject t two-sided",
                  "reject t greater", "reject bootstrap-t two-sided",
                  "cover bernoulli two-sided", "cover bernoulli greater",
                  "cover bernoulli two-sided | b", "cover bootstrap-t", "cover bootstrap-t | b",
                  "share no interval bootstrap-t")
    lines += ["", "### Power (alternatives with known expected improvement)", "",
              *markdown_table(
                  ("design", "n", "mean E improvement", "mean E improvement given b",
                   "informative", "Bernoulli mid-p (default)", "Bernoulli, greater",
                   "Bernoulli, ties in full", "t", "t, greater", "bootstrap-t",
                   "coverage Bernoulli (default)", "coverage Bernoulli, greater",
                   "coverage Bernoulli, given b", "coverage bootstrap-t",
                   "coverage bootstrap-t, given b", "no interval"),
                  ([c["design"], c["n"], f"{c['mean_expected_improvement']:+.4f}",
                    f"{c['mean_expected_improvement_given_b']:+.4f}",
                    f"{c['median informative pairs']:g}", *(_f(c[k]) for k in power_keys)]
                   for c in cells if not c["null"]))]
    real = results.get("real_file")
    if real:
        lines += ["", f"### The study's file (`{real['file']}`): p-values per category", "",
                  *markdown_table(
                      ("test", "alternative", "strong", "weak", "none"),
                      ([*key.rsplit(" ", 1), *(_f(v.get(cat, float("nan")))
                                               for cat in ("strong", "weak", "none"))]
                       for key, v in real.items() if key != "file"))]
    return "\n".join(lines)


def write_pairs_tables(results: dict[str, Any], doc: Path = DOC) -> None:
    write_tables(doc, "validate_pairs.py", tables(results).rstrip())


def main(argv: list[str] | None = None) -> int:
    parser = matrix_parser(None, results=RESULTS, page="docs/validation_pairs.md",
                           n_resamples=199, power_reps=None, only=None, append=False,
                           prog="python -m benchmarks.validate_pairs")
    parser.add_argument("--seed", type=int, default=20261)
    parser.add_argument("--ns", type=int, nargs="*", default=list(NS))
    parser.add_argument("--only", nargs="*", default=None,
                        help="run only the designs whose name contains one of these strings")
    parser.add_argument("--merge", action="store_true",
                        help="replace the cells run in the existing JSON, keep the others")
    args = parser.parse_args(argv)
    if args.tables:
        write_pairs_tables(json.loads(args.out.read_text()))
        return 0
    one_thread()
    t0 = time.perf_counter()
    env = environment()
    designs = [*null_designs(), *alternative_designs()]
    old: list[dict[str, Any]] = []
    if args.merge and args.out.exists():
        old = json.loads(args.out.read_text())["cells"]
    ran: list[dict[str, Any]] = []
    for index, design in enumerate(designs):
        if args.only and not any(part in design.name for part in args.only):
            continue
        for n in args.ns:
            # every cell has its own stream: a cell reruns alone (--only) to the same figures
            rng = np.random.default_rng([args.seed, index, n])
            t_cell = time.perf_counter()
            cell = run_cell(design, n, args.reps, args.n_resamples, rng)
            cell.update({"commit": env["commit"], "elapsed_s": time.perf_counter() - t_cell})
            ran.append(cell)
            print(f"{cell['design']}, n = {n}: Bernoulli "
                  f"{cell['reject bernoulli two-sided']:.3f}, t {cell['reject t two-sided']:.3f}"
                  f", bootstrap-t {cell['reject bootstrap-t two-sided']:.3f}", flush=True)
    done = {(c["design"], c["n"]) for c in ran}
    cells = [c for c in old if (c["design"], c["n"]) not in done] + ran
    order = {d.name: i for i, d in enumerate(designs)}
    cells.sort(key=lambda c: (order.get(c["design"], len(order)), c["n"]))
    results = {"environment": env,
               "settings": {"reps": args.reps, "n_resamples": args.n_resamples,
                            "seed": args.seed, "alpha": ALPHA,
                            "elapsed_s": sum(c.get("elapsed_s", 0.0) for c in cells),
                            "this_run_s": time.perf_counter() - t0,
                            "merged": bool(old)},
               "cells": cells, "real_file": real_file()}
    write_json(args.out, results)
    if args.out == RESULTS:
        write_pairs_tables(results)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
