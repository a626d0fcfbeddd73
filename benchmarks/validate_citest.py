"""Validation matrix of :func:`coherence.ci_test`: size, power and coverage.

Studies come from :mod:`benchmarks.citest_designs`, a generator written apart
from the package's own simulated agents, whose exact I(action; outcome | belief)
is known. Every cell is run with the defaults a user gets (only ``n_resamples``
is lowered, which changes the p-value's resolution, not its validity). Results
are written as JSON (package versions, commit, machine) and the tables of
``docs/validation_ci.md`` are generated from that file::

    python -m benchmarks.validate_citest --reps 400 --jobs 2      # writes the JSON
    python -m benchmarks.validate_citest --tables                 # JSON -> docs tables

``--only WORD`` runs the cells whose name contains a word; ``--parts`` picks among
size, power, k, competitor and paper_rule (the reference paper's "bootstrap CI
excludes 0" rule on rational studies, which is not a test); ``--quick`` is the
small version used by the test suite.
"""

from __future__ import annotations

import json
import math
import sys
import time
import warnings
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._harness import format_rate
from benchmarks._harness import generated_by
from benchmarks._harness import map_jobs
from benchmarks._harness import markdown_table
from benchmarks._harness import matrix_parser
from benchmarks._harness import one_thread
from benchmarks._harness import only_words
from benchmarks._harness import rejection_rate
from benchmarks._harness import start_results
from benchmarks._harness import write_json
from benchmarks._harness import write_tables
from benchmarks.citest_designs import Design
from benchmarks.citest_designs import exact_cmi
from benchmarks.citest_designs import generate
from benchmarks.citest_designs import leak_for

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "validate_citest.json"
DOC = ROOT / "docs" / "validation_ci.md"
ALPHA = 0.05
#: the matrix's parts, in the order they run and are tabled
PARTS = ("size", "power", "k", "competitor", "paper_rule")

# ---------------------------------------------------------------- the matrix
REF = Design()
NULLS: dict[str, Design] = {
    "reference: 0.05 grid, 200 x 5, 3 actions": REF,
    "0.1 grid": REF.with_(grid=0.1),
    "0.01 grid": REF.with_(grid=0.01),
    "continuous beliefs": REF.with_(grid=None),
    "unequal repetitions (1-10)": REF.with_(repetitions=(1, 10)),
    "unequal repetitions, continuous": REF.with_(repetitions=(1, 10), grid=None),
    "small study: 30 x 5": REF.with_(n_contexts=30),
    "one row per context: 1000 x 1, 0.01 grid": REF.with_(n_contexts=1000, repetitions=1,
                                                          grid=0.01),
    "2 actions": REF.with_(n_actions=2),
    "4 actions": REF.with_(n_actions=4),
    "rare outcomes: q ~ Beta(0.5, 5)": REF.with_(base_rate="rare"),
    "rare outcomes, continuous": REF.with_(base_rate="rare", grid=None),
    "probability weighting (Prelec 0.6)": REF.with_(weighting=0.6),
    "context shocks, beliefs constant": REF.with_(shock_sd=1.0),
    "context shocks, beliefs vary (sd 0.05), 0.05 grid": REF.with_(shock_sd=1.0,
                                                                  belief_sd=0.05),
    "context shocks, beliefs vary (sd 0.05), 0.01 grid": REF.with_(shock_sd=1.0,
                                                                  belief_sd=0.05, grid=0.01),
    "beliefs vary (sd 0.05), continuous": REF.with_(belief_sd=0.05, grid=None),
    "shocks, beliefs vary, unequal repetitions": REF.with_(shock_sd=1.0, belief_sd=0.05,
                                                           repetitions=(1, 10)),
    "discrete evidence, 4 levels, constant in context": REF.with_(evidence_levels=4),
    "discrete evidence, 10 levels, varies in context, 40 x 3": REF.with_(
        n_contexts=40, repetitions=3, evidence_levels=10, evidence_within=True),
    "discrete evidence, 40 levels, varies in context, 40 x 3": REF.with_(
        n_contexts=40, repetitions=3, evidence_levels=40, evidence_within=True),
    "discrete evidence, 40 levels with distinct effects, varies in context, 40 x 3": REF.with_(
        n_contexts=40, repetitions=3, evidence_levels=40, evidence_within=True,
        evidence_effects="per-level"),
    "discrete evidence, 4 levels, varies in context, 200 x 5": REF.with_(
        evidence_levels=4, evidence_within=True),
    # small studies, written after the plug-in statistic was measured liberal below 40
    # contexts (where 'auto' now takes the regression-adjusted one): cells apart from the
    # ones that chose the switch, and one at the switch
    "small study: 10 x 3, 0.05 grid": REF.with_(n_contexts=10, repetitions=3),
    "small study: 15 x 3, 0.1 grid, context shocks": REF.with_(n_contexts=15, repetitions=3,
                                                             grid=0.1, shock_sd=1.0),
    "small study: 20 x 3, continuous": REF.with_(n_contexts=20, repetitions=3, grid=None),
    "small study: 20 x 5, beliefs vary (sd 0.1), 0.05 grid": REF.with_(
        n_contexts=20, belief_sd=0.1),
    "small study: 30 x 5, continuous": REF.with_(n_contexts=30, grid=None),
    "small study: 30 x 10, continuous, context shocks": REF.with_(
        n_contexts=30, repetitions=10, grid=None, shock_sd=1.0),
    "small study: 30 x (1-10), continuous": REF.with_(n_contexts=30, repetitions=(1, 10),
                                                      grid=None),
    "small study: 30 x 5, rare outcomes, continuous": REF.with_(n_contexts=30, grid=None,
                                                                base_rate="rare"),
    "small study: 30 x 5, discrete evidence, 4 levels, constant in context": REF.with_(
        n_contexts=30, evidence_levels=4),
    "small study: 25 x 4, 4 actions, Prelec 0.6, 0.01 grid": REF.with_(
        n_contexts=25, repetitions=4, n_actions=4, weighting=0.6, grid=0.01),
    "small study: 40 x 5, continuous (plug-in, at the switch)": REF.with_(n_contexts=40,
                                                                        grid=None),
}
#: alternatives: (design, exact CMIs to aim at)
ALTERNATIVES: dict[str, tuple[Design, tuple[float, ...]]] = {
    "reference: 0.05 grid, 200 x 5": (REF, (0.024, 0.053, 0.09, 0.176)),
    "0.01 grid": (REF.with_(grid=0.01), (0.024, 0.09, 0.176)),
    "continuous beliefs": (REF.with_(grid=None), (0.024, 0.09, 0.176)),
    "unequal repetitions (1-10)": (REF.with_(repetitions=(1, 10)), (0.053, 0.176)),
    "context shocks, beliefs constant": (REF.with_(shock_sd=1.0), (0.09,)),
    "rare outcomes, continuous": (REF.with_(base_rate="rare", grid=None), (0.05,)),
    "small study: 30 x 5, continuous": (REF.with_(n_contexts=30, grid=None), (0.09, 0.176)),
    "small study: 30 x 5, 0.05 grid": (REF.with_(n_contexts=30), (0.09, 0.176)),
    "one row per context: 1000 x 1, 0.01 grid": (
        REF.with_(n_contexts=1000, repetitions=1, grid=0.01), (0.024, 0.09)),
    "discrete evidence, 4 levels, constant in context": (REF.with_(evidence_levels=4),
                                                          (0.09,)),
    "small study: 20 x 3, continuous": (REF.with_(n_contexts=20, repetitions=3, grid=None),
                                        (0.176,)),
    "small study: 15 x 3, 0.05 grid": (REF.with_(n_contexts=15, repetitions=3), (0.176,)),
}
#: the reference paper's rule ("the bootstrap 95% CI of the kNN CMI excludes 0", k = 3, 500
#: cluster-bootstrap resamples) on exactly rational studies: how often it calls them incoherent
PAPER_RULE_NULLS = ("reference: 0.05 grid, 200 x 5, 3 actions", "0.01 grid",
                    "one row per context: 1000 x 1, 0.01 grid")
PAPER_RULE_RESAMPLES = 500
#: k chosen in hindsight against the default: power at each k
K_GRID = (3, 5, 10, 20, 30)
K_DESIGNS: dict[str, tuple[Design, float]] = {
    "continuous beliefs, 200 x 5": (REF.with_(grid=None), 0.03),
    "0.01 grid, 200 x 5": (REF.with_(grid=0.01), 0.03),
    "continuous beliefs, 100 x 10": (REF.with_(grid=None, n_contexts=100, repetitions=10),
                                     0.03),
    "continuous beliefs, 500 x 2": (REF.with_(grid=None, n_contexts=500, repetitions=2),
                                    0.03),
    "reference: 0.05 grid, 200 x 5": (REF, 0.03),
}


# ---------------------------------------------------------------- one study


def _run_one(args: tuple[Design, int, dict[str, Any]]) -> tuple[float, ...]:
    import coherence
    from coherence._resampling import monte_carlo_pvalue

    design, seed, options = args
    data = generate(design, seed)
    evidence = ["evidence"] if "evidence" in data else []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = coherence.ci_test(data, evidence=evidence, rng=seed, **options)
    ci = res.confidence_interval
    # the counting tie rule (every tie as extreme, before ci_test broke ties at random)
    # on the result's own null and statistic
    counting = (monte_carlo_pvalue(res.null_distribution, res.test_statistic_value)
                if np.isfinite(res.pvalue) else np.nan)
    return res.statistic, res.pvalue, ci.low, ci.high, res.k, counting


def _many(design: Design, reps: int, options: dict[str, Any], pool: Any,
          seed0: int) -> np.ndarray:
    return map_jobs(_run_one, [(design, seed0 + s, options) for s in range(reps)], pool)


# ---------------------------------------------------------------- sections
_SINK: list[Any] = []  # [callable(part, rows)] saving the JSON after every cell


_COMMIT: list[str] = []  # the commit the running cells are computed at


def _saved(part: str, rows: list[dict]) -> None:
    for row in rows:
        row.setdefault("commit", _COMMIT[0] if _COMMIT else "unknown")
    for save in _SINK:
        save(part, rows)


def size_section(reps: int, n_resamples: int, pool: Any, only: list[str]) -> list[dict]:
    rows = []
    for i, (name, design) in enumerate(NULLS.items()):
        if only and not any(w in name for w in only):
            continue
        t0 = time.perf_counter()
        out = _many(design, reps, {"n_resamples": n_resamples}, pool, 100_000 * (i + 1))
        p = out[:, 1]
        valid = np.isfinite(p)
        row = {"design": name, "settings": _settings(design), "reps": reps,
               "size": rejection_rate(p[valid] <= ALPHA), "n_nan_pvalue": int(np.sum(~valid)),
               "size_counting_ties": rejection_rate(out[valid, 5] <= ALPHA),
               "ci_covers_0": rejection_rate((out[:, 2] <= 0) & (out[:, 3] >= 0)),
               "median_k": float(np.median(out[:, 4])),
               "seconds": time.perf_counter() - t0}
        rows.append(row)
        _saved("size", rows)
        print(f"size  {name:62s} {row['size']['rate']:.3f} "
              f"[{row['size']['wilson_low']:.3f}, {row['size']['wilson_high']:.3f}] "
              f"cover0 {row['ci_covers_0']['rate']:.3f} ({row['seconds']:.0f} s)", flush=True)
    return rows


def power_section(reps: int, n_resamples: int, pool: Any, only: list[str]) -> list[dict]:
    rows = []
    for i, (name, (base, targets)) in enumerate(ALTERNATIVES.items()):
        if only and not any(w in name for w in only):
            continue
        for j, target in enumerate(targets):
            design = base.with_(leak=leak_for(base, target))
            truth = exact_cmi(design)
            t0 = time.perf_counter()
            out = _many(design, reps, {"n_resamples": n_resamples}, pool,
                        5_000_000 + 100_000 * i + 10_000 * j)
            row = {"design": name, "settings": _settings(design), "reps": reps,
                   "exact_cmi": truth, "power": rejection_rate(out[:, 1] <= ALPHA),
                   "power_counting_ties": rejection_rate(out[:, 5] <= ALPHA),
                   "coverage": rejection_rate((out[:, 2] <= truth) & (out[:, 3] >= truth)),
                   "mean_estimate": float(np.nanmean(out[:, 0])),
                   "mean_width": float(np.nanmean(out[:, 3] - out[:, 2])),
                   "median_k": float(np.median(out[:, 4])),
                   "seconds": time.perf_counter() - t0}
            rows.append(row)
            _saved("power", rows)
            print(f"power {name:50s} cmi {truth:.3f}: power {row['power']['rate']:.3f} "
                  f"coverage {row['coverage']['rate']:.3f} ({row['seconds']:.0f} s)",
                  flush=True)
    return rows


def paper_rule_section(reps: int, pool: Any, only: list[str]) -> list[dict]:
    """The paper's rule on the null designs of PAPER_RULE_NULLS (seeds apart from the size
    part's): the share of studies whose bootstrap interval excludes 0."""
    rows = []
    options = {"method": "bootstrap", "k": 3, "n_resamples": PAPER_RULE_RESAMPLES}
    for i, name in enumerate(PAPER_RULE_NULLS):
        if only and not any(w in name for w in only):
            continue
        t0 = time.perf_counter()
        out = _many(NULLS[name], reps, options, pool, 9_000_000 + 100_000 * i)
        excludes = (out[:, 2] > 0) | (out[:, 3] < 0)
        row = {"design": name, "settings": _settings(NULLS[name]), "reps": reps,
               "n_resamples": PAPER_RULE_RESAMPLES, "rejection": rejection_rate(excludes),
               "mean_estimate": float(np.nanmean(out[:, 0])),
               "seconds": time.perf_counter() - t0}
        rows.append(row)
        _saved("paper_rule", rows)
        print(f"paper rule {name:55s} {row['rejection']['rate']:.3f} "
              f"({row['seconds']:.0f} s)", flush=True)
    return rows


def k_section(reps: int, n_resamples: int, pool: Any, only: list[str]) -> list[dict]:
    rows = []
    for i, (name, (base, target)) in enumerate(K_DESIGNS.items()):
        if only and not any(w in name for w in only):
            continue
        design = base.with_(leak=leak_for(base, target))
        row: dict[str, Any] = {"design": name, "settings": _settings(design), "reps": reps,
                               "exact_cmi": exact_cmi(design), "power": {}}
        for k in ("auto", *K_GRID):
            out = _many(design, reps, {"n_resamples": n_resamples, "k": k,
                                       "ci_method": "subsampling", "test_statistic": "knn"},
                        pool,
                        9_000_000 + 100_000 * i)
            row["power"][str(k)] = rejection_rate(out[:, 1] <= ALPHA)
            if k == "auto":
                row["auto_k"] = float(np.median(out[:, 4]))
        best = max(v["rate"] for key, v in row["power"].items() if key != "auto")
        row["best_power"] = best
        row["auto_over_best"] = row["power"]["auto"]["rate"] / best if best else math.nan
        rows.append(row)
        _saved("k", rows)
        print(f"k     {name:40s} auto (k={row['auto_k']:.0f}) "
              f"{row['power']['auto']['rate']:.3f} best {best:.3f}", flush=True)
    return rows


def _run_pair(args: tuple[Design, int, int]) -> tuple[float, float, float, float]:
    """ci_test's p-value (the default statistic: the plug-in one, the regression-adjusted
    one below 40 contexts; then the kNN estimate), the
    competitor's and the competitor's with the plug-in G statistic (the competitor's
    permutations) on one study. The p-value does not depend on the interval, which is
    left out."""
    import coherence
    from benchmarks.citest_competitor import strata_permutation_pvalue

    design, seed, n_resamples = args
    data = generate(design, seed)
    evidence = ["evidence"] if "evidence" in data else []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = [coherence.ci_test(data, evidence=evidence, rng=seed, n_resamples=n_resamples,
                                 ci_method=None, test_statistic=name).pvalue
               for name in ("auto", "knn")]
    ev = "evidence" if evidence else None
    return (*res,
            strata_permutation_pvalue(data, n_resamples=n_resamples, rng=seed, evidence=ev,
                                      break_ties=True),
            strata_permutation_pvalue(data, n_resamples=n_resamples, rng=seed, evidence=ev,
                                      statistic="g", break_ties=True))


def competitor_section(reps: int, power_reps: int, n_resamples: int, pool: Any,
                       only: list[str]) -> list[dict]:
    """ci_test against the simplest valid competitor (:mod:`benchmarks.citest_competitor`)
    on the same studies: every null and alternative whose evidence, if any, is constant
    within a context (the competitor's strata need one evidence per context)."""
    cells = [(name, design, 0.0, reps) for name, design in NULLS.items()
             if not design.evidence_within]
    cells += [(name, base.with_(leak=leak_for(base, t)), t, power_reps)
              for name, (base, targets) in ALTERNATIVES.items() for t in targets]
    # smaller leaks at the paper's size, where the two differ
    cells += [(name, ALTERNATIVES[name][0].with_(leak=leak_for(ALTERNATIVES[name][0], t)), t,
               power_reps) for name in ("reference: 0.05 grid, 200 x 5", "continuous beliefs")
              for t in (0.006, 0.012)]
    rows = []
    for i, (name, design, target, n) in enumerate(cells):
        if only and not any(w in name for w in only):
            continue
        t0 = time.perf_counter()
        out = map_jobs(_run_pair, [(design, 12_000_000 + 100_000 * i + s, n_resamples)
                               for s in range(n)], pool)
        rows.append({"design": name, "settings": _settings(design), "reps": n,
                     "kind": "power" if target else "size",
                     "exact_cmi": exact_cmi(design) if target else 0.0,
                     "ci_test": rejection_rate(out[:, 0] <= ALPHA),
                     "ci_test_knn": rejection_rate(out[:, 1] <= ALPHA),
                     "competitor": rejection_rate(out[:, 2] <= ALPHA),
                     "competitor_g": rejection_rate(out[:, 3] <= ALPHA),
                     "seconds": time.perf_counter() - t0})
        _saved("competitor", rows)
        print(f"comp  {name:50s} cmi {rows[-1]['exact_cmi']:.3f}: ci_test "
              f"{rows[-1]['ci_test']['rate']:.3f} (kNN {rows[-1]['ci_test_knn']['rate']:.3f}) "
              "competitor "
              f"{rows[-1]['competitor']['rate']:.3f}", flush=True)
    return rows


# ---------------------------------------------------------------- output
def _settings(design: Design) -> dict[str, Any]:
    return design.settings(drop=("name", "tags"))


def _optional_rate(row: dict[str, Any], key: str) -> str:
    """A rate the cells run before it was recorded do not have."""
    return format_rate(row[key]) if key in row else ""


def tables(results: dict[str, Any]) -> str:
    env = results["environment"]
    commits = sorted({r.get("commit", env["commit"])[:10]
                      for part in PARTS for r in results.get(part, [])})
    lines = [generated_by("validate_citest") + " (cells computed at commit(s) "
             f"{', '.join(f'`{c}`' for c in commits)}; last run "
             f"{env['date']}, {env['machine']['cpus']} CPUs, numpy "
             f"{env['versions']['numpy']}, numba {env['versions']['numba']}); "
             f"{results['settings']['n_resamples']} permutations per test, alpha = 0.05, "
             "95% Wilson intervals in brackets.", ""]
    if results.get("size"):
        lines += ["### Size under exact nulls (defaults)", "", *markdown_table(
            ("design", "reps", "size at 0.05", "every tie counted (before)", "CI covers 0",
             "k used (median)", "commit"),
            ([r["design"], r["reps"], format_rate(r["size"])
              + (f" ({r['n_nan_pvalue']} NaN)" if r["n_nan_pvalue"] else ""),
              _optional_rate(r, "size_counting_ties"),
              f"{r['ci_covers_0']['rate']:.3f}", f"{r['median_k']:.0f}",
              f"`{r.get('commit', env['commit'])[:7]}`"] for r in results["size"])), ""]
    if results.get("power"):
        lines += ["### Power and coverage at known CMI (defaults)", "", *markdown_table(
            ("design", "exact CMI (nats)", "reps", "power at 0.05",
             "every tie counted (before)", "coverage of 95% CI",
             "mean estimate", "mean width", "k used"),
            ([r["design"], f"{r['exact_cmi']:.3f}", r["reps"], format_rate(r["power"]),
              _optional_rate(r, "power_counting_ties"), format_rate(r["coverage"]),
              f"{r['mean_estimate']:.3f}", f"{r['mean_width']:.3f}", f"{r['median_k']:.0f}"]
             for r in results["power"])),
            ""]
    if results.get("k"):
        lines += ["### The default k against k chosen in hindsight (power at 0.05 of the kNN "
                  "statistic, `test_statistic='knn'`)", "",
                  *markdown_table(
                      ("design", "exact CMI", "default (k used)",
                       *(f"k = {k}" for k in K_GRID), "default / best"),
                      ([r["design"], f"{r['exact_cmi']:.3f}",
                        f"{r['power']['auto']['rate']:.3f} (k = {r['auto_k']:.0f})",
                        *(f"{r['power'][str(k)]['rate']:.3f}" for k in K_GRID),
                        f"{r['auto_over_best']:.2f}"] for r in results["k"])), ""]
    if results.get("competitor"):
        lines += ["### Against the simplest valid competitor (the same studies)", "",
                  "`ci_test` with its default statistic (the plug-in one; the "
                  "regression-adjusted one below 40 contexts) and with the kNN estimate "
                  "as the statistic (`test_statistic='knn'`, the earlier default; both "
                  "on ci_test's own permutations). "
                  "The competitor (`benchmarks/citest_competitor.py`) permutes the outcomes "
                  "among the contexts of one stratum of the context's mean belief (its grid "
                  "value, or one of 20 quantile bins; split by evidence where it is constant "
                  "within a context) and sums Cochran-Mantel-Haenszel's per-action "
                  "chi-square over strata; the last column sums the likelihood-ratio G (2N "
                  "times each stratum's plug-in CMI) instead, on the same permutations. "
                  "Designs whose evidence varies within a context are left out.", "",
                  *markdown_table(
                      ("design", "exact CMI", "reps", "ci_test at 0.05", "ci_test, kNN statistic",
                       "competitor at 0.05", "plug-in G, competitor's permutations"),
                      ([r["design"], f"{r['exact_cmi']:.3f}", r["reps"],
                        format_rate(r["ci_test"]),
                        format_rate(r["ci_test_knn"]) if "ci_test_knn" in r else "",
                        format_rate(r["competitor"]),
                        format_rate(r["competitor_g"]) if "competitor_g" in r else ""]
                       for r in sorted(results["competitor"], key=lambda r: (
                           r["kind"] != "size", r["design"], r["exact_cmi"])))), ""]
    if results.get("paper_rule"):
        lines += ["### The reference paper's rule on rational agents", "",
                  "\"The bootstrap 95% CI excludes 0\" (`method='bootstrap'`, k = 3, "
                  f"{PAPER_RULE_RESAMPLES} cluster-bootstrap resamples, the paper's settings) "
                  "on exactly rational studies: the share it calls incoherent. It is not a "
                  "test (no p-value); duplicated rows in a resample are zero-distance "
                  "neighbours and inflate the kNN estimate.", "",
                  *markdown_table(
                      ("design", "reps", "CI excludes 0", "mean estimate (nats)", "commit"),
                      ([r["design"], r["reps"], format_rate(r["rejection"]),
                        f"{r['mean_estimate']:.4f}", f"`{r.get('commit', env['commit'])[:7]}`"]
                       for r in results["paper_rule"])), ""]
    return "\n".join(lines)


def main(argv: Iterable[str] | None = None) -> int:
    parser = matrix_parser(__doc__, results=RESULTS, page="docs/validation_ci.md",
                           n_resamples=199, reps=1000, power_reps=200, append=False)
    parser.add_argument("--parts", default=",".join(PARTS))
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--merge", action="store_true",
                        help="replace only the cells run in the existing JSON")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.tables:
        write_tables(DOC, "validate_citest.py", tables(json.loads(args.out.read_text())))
        return 0
    only = only_words(args)
    parts = args.parts.split(",")
    pool = (ProcessPoolExecutor(args.jobs, initializer=one_thread) if args.jobs > 1
            else None)
    results = start_results(args, ALPHA)
    old = json.loads(args.out.read_text()) if args.merge and args.out.exists() else {}
    _COMMIT.append(results["environment"]["commit"])
    for part in PARTS:  # earlier rows keep their commit
        for row in old.get(part, []):
            row.setdefault("commit", old["environment"]["commit"])

    def key(row: dict) -> tuple[str, float | None]:
        # the exact CMI of one design differs in its last digits between runs
        cmi = row.get("exact_cmi")
        return row["design"], None if cmi is None else round(cmi, 9)

    def save(part: str, rows: list[dict]) -> None:
        done = {key(r) for r in rows}
        kept = [r for r in old.get(part, []) if key(r) not in done]
        results[part] = kept + rows
        for other in PARTS:
            if other not in results and other in old:
                results[other] = old[other]
        write_json(args.out, results)

    _SINK.append(save)
    if "size" in parts:
        size_section(args.reps, args.n_resamples, pool, only)
    if "power" in parts:
        power_section(args.power_reps, args.n_resamples, pool, only)
    if "k" in parts:
        k_section(args.power_reps, args.n_resamples, pool, only)
    if "competitor" in parts:
        competitor_section(args.reps, args.power_reps, args.n_resamples, pool, only)
    if "paper_rule" in parts:
        paper_rule_section(args.power_reps, pool, only)
    if pool:
        pool.shutdown()
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
