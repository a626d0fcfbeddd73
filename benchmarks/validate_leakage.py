"""Validation matrix of :func:`coherence.leakage_test`: size, power and coverage.

Studies come from :mod:`benchmarks.leakage_designs`, a generator written apart from
the package's simulated agents, under which ``action _||_ outcome | (belief,
evidence)`` holds exactly at ``leak = 0``. Each cell runs the defaults a user gets
except ``n_permutations`` (19: the 0.05 level is exact, (1 + c) / 20 <= 0.05 only
for c = 0; a coarser p-value, the same validity), ``n_resamples`` and, for catboost,
``iterations`` (cost). Results are JSON (versions, commit, machine); the tables of
``docs/leakage.md`` are generated from it::

    python -m benchmarks.validate_leakage --reps 400             # writes the JSON
    python -m benchmarks.validate_leakage --tables               # JSON -> docs tables
    python -m benchmarks.validate_leakage --competitor --reps 200 --null-reps 1000 --jobs 2

``--competitor`` runs the test against the simplest valid competitor
(:mod:`benchmarks.citest_competitor`) and ``ci_test`` on the same studies, at leaks
from 0 to 0.5 (its rows are kept apart from the matrix's cells).

``--continuous`` runs the designs of :mod:`benchmarks.validate_citest_continuous` instead
(a measured quantity as evidence, a float column; the same studies as that matrix, its
seeds) and writes ``validate_leakage_continuous.json``::

    python -m benchmarks.validate_leakage --continuous --reps 400 --power-reps 200 --jobs 2

``--only PREFIX,...`` runs the cells whose name starts with a prefix; ``--merge`` keeps the
other cells of an existing JSON. With ``--continuous --competitor``, ``--only`` picks the
comparison's designs, and the stored rows of the others stay. Coverage is that of
``E[S]``, the mean of the statistic over the cell's studies (the interval's target: the out-of-fold
improvement at this study size; no closed form exists).
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from collections.abc import Iterable
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._harness import environment
from benchmarks._harness import format_rate
from benchmarks._harness import generated_by
from benchmarks._harness import map_jobs
from benchmarks._harness import markdown_table
from benchmarks._harness import matrix_parser
from benchmarks._harness import one_thread
from benchmarks._harness import only_words
from benchmarks._harness import rejection_rate
from benchmarks._harness import store_cell
from benchmarks._harness import write_json
from benchmarks._harness import write_tables
from benchmarks.leakage_designs import LeakDesign
from benchmarks.leakage_designs import generate

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "validate_leakage.json"
CONTINUOUS_RESULTS = RESULTS.with_name("validate_leakage_continuous.json")
DOC = ROOT / "docs" / "leakage.md"
ALPHA = 0.05
N_PERMUTATIONS = 19
N_RESAMPLES = 200
CATBOOST = {"iterations": 50, "thread_count": 1}

REF = LeakDesign()
NOM = REF.with_(evidence="nominal")
BIN = REF.with_(evidence="binary")
#: name -> (design, engine, leak)
CELLS: dict[str, tuple[LeakDesign, str, float]] = {
    "no evidence, 0.05 grid, 200 x 5": (REF, "logistic", 0.0),
    "no evidence, continuous beliefs vary (sd 0.05), shocks": (
        REF.with_(grid=None, belief_sd=0.05, shock_sd=1.0), "logistic", 0.0),
    "nominal evidence, integer codes, 200 x 5": (NOM, "logistic", 0.0),
    "nominal evidence, strings, 200 x 5": (NOM.with_(as_strings=True), "logistic", 0.0),
    "binary evidence (false negative x3), 200 x 5": (BIN, "logistic", 0.0),
    "binary evidence, shocks, unequal repetitions (1-10)": (
        BIN.with_(shock_sd=1.0, repetitions=(1, 10)), "logistic", 0.0),
    "nominal evidence varies in context, continuous, shocks": (
        NOM.with_(evidence_within=True, grid=None, belief_sd=0.03, shock_sd=1.0),
        "logistic", 0.0),
    "rare outcomes, nominal evidence": (NOM.with_(base_rate="rare"), "logistic", 0.0),
    "small study: 40 x 3, binary evidence": (BIN.with_(n_contexts=40, repetitions=3),
                                             "logistic", 0.0),
    "large study: 600 x 3, nominal, continuous": (
        NOM.with_(n_contexts=600, repetitions=3, grid=None), "logistic", 0.0),
    "catboost: nominal evidence, integer codes, 200 x 5": (NOM, "catboost", 0.0),
    "catboost: binary evidence (false negative x3), 200 x 5": (BIN, "catboost", 0.0),
    "power: no evidence, leak 0.5": (REF.with_(leak=0.5), "logistic", 0.5),
    "power: nominal evidence, leak 0.5": (NOM.with_(leak=0.5), "logistic", 0.5),
    "power: binary evidence, leak 0.5": (BIN.with_(leak=0.5), "logistic", 0.5),
    "power: nominal evidence, leak 1.0": (NOM.with_(leak=1.0), "logistic", 1.0),
    # appended (a cell's seeds follow its position): the outcome depends on the evidence
    # beyond the stated belief, the design the issue measured 0.53 / 0.115 on
    "nominal evidence the belief misses, integer codes, 200 x 5": (
        NOM.with_(belief_sees_evidence=False), "logistic", 0.0),
    "binary evidence the belief misses (false negative x3), 200 x 5": (
        BIN.with_(belief_sees_evidence=False), "logistic", 0.0),
}


#: the power cells of the continuous-evidence part (the leaks below 1 of
#: ``validate_citest_continuous``'s power designs and the leak whose sign flips)
CONTINUOUS_POWER = ("leak 0.5, evidence per context", "leak 0.5, evidence per row",
                    "leak 0.5, continuous beliefs that miss the evidence",
                    "leak 0.75, outcome and evidence per row (actions permuted)",
                    "leak 0.5, nominal site with continuous evidence",
                    "leak 1.0 whose sign flips with the belief, evidence per context",
                    "leak 0.5, two continuous evidence columns")


def continuous_cells() -> dict[str, tuple[Any, str, float]]:
    """The continuous-evidence part's cells: ``validate_citest_continuous``'s nulls and
    :data:`CONTINUOUS_POWER`, by their names there."""
    from benchmarks import validate_citest_continuous as cc

    return {**{name: (d, "logistic", 0.0) for name, d in cc.NULLS.items()},
            **{name: (cc.POWER[name], "logistic", cc.POWER[name].leak)
               for name in CONTINUOUS_POWER}}


def _study(design: Any, seed: int) -> tuple[Any, list[str]]:
    """A study of ``design`` (of :mod:`benchmarks.leakage_designs` or
    :mod:`benchmarks.validate_citest_continuous`) and its evidence columns."""
    if isinstance(design, LeakDesign):
        data = generate(design, seed)
        return data, ["evidence"] if "evidence" in data else []
    from benchmarks import validate_citest_continuous as cc

    return cc.generate(design, seed), cc.evidence_columns(design)


def _run_one(args: tuple[Any, str, int]) -> tuple[float, ...]:
    """(statistic, p-value, interval, plain bootstrap interval, fold sd, interval widened
    by all the fold variance) of one study. The plain interval (``n_fold_draws=1``) is
    the percentile interval of the same bootstrap replicates and the last one adds the
    statistic's whole variance over the fold draws (``fold_sd**2``) instead of its
    between-context part, so the three intervals are judged on the same studies."""
    import coherence
    from coherence._decision._leakage_interval import widened_interval
    from coherence._resampling import percentile_interval

    design, engine, seed = args
    data, evidence = _study(design, seed)
    options: dict[str, Any] = {"engine": engine, "n_permutations": N_PERMUTATIONS,
                               "n_resamples": N_RESAMPLES, "rng": seed}
    if engine == "catboost":
        options["engine_options"] = CATBOOST
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        try:
            res = coherence.leakage_test(data, evidence=evidence, **options)
        except (TypeError, ValueError):
            return (np.nan, -1.0, *[np.nan] * 7)  # an error (recorded as p = -1)
    ci = res.confidence_interval
    plain = percentile_interval(res.bootstrap_distribution, ci.confidence_level)
    total = widened_interval(res.statistic, res.bootstrap_distribution, res.fold_sd**2,
                             ci.confidence_level)
    return (res.statistic, res.pvalue, ci.low, ci.high, *plain, res.fold_sd, *total)


def run_cell(name: str, reps: int, seed0: int, commit: str, pool: Any = None,
             cells: dict[str, tuple[Any, str, float]] = CELLS) -> dict[str, Any]:
    design, engine, leak = cells[name]
    t0 = time.perf_counter()
    out = map_jobs(_run_one, [(design, engine, seed0 + r) for r in range(reps)], pool)
    errors = int(np.sum(out[:, 1] == -1.0))
    ok = out[out[:, 1] != -1.0]
    p = ok[:, 1]
    valid = np.isfinite(p)
    target = float(np.nanmean(ok[:, 0])) if len(ok) else float("nan")

    def covers(low: int, high: int) -> dict[str, Any]:  # columns of an interval's ends
        return rejection_rate((ok[:, low] <= target) & (ok[:, high] >= target))

    def mean(values: np.ndarray) -> float:
        return float(np.mean(values)) if len(values) else float("nan")

    row: dict[str, Any] = {
        "design": name, "engine": engine, "leak": leak, "reps": reps, "commit": commit,
        "settings": design.settings(),
        "rejection": rejection_rate(p[valid] <= ALPHA), "n_nan_pvalue": int(np.sum(~valid)),
        "n_errors": errors, "mean_statistic": target,
        "coverage_of_mean": covers(2, 3), "coverage_plain_bootstrap": covers(4, 5),
        "mean_width": mean(ok[:, 3] - ok[:, 2]), "mean_width_plain": mean(ok[:, 5] - ok[:, 4]),
        "mean_fold_sd": mean(ok[:, 6]), "coverage_all_fold_variance": covers(7, 8),
        "mean_width_all_fold_variance": mean(ok[:, 8] - ok[:, 7]),
        "ci_covers_0": rejection_rate((ok[:, 2] <= 0) & (ok[:, 3] >= 0)),
        "seconds": time.perf_counter() - t0}
    r = row["rejection"]
    print(f"{name:58s} {r['rate']:.3f} [{r['wilson_low']:.3f}, {r['wilson_high']:.3f}] "
          f"cov {row['coverage_of_mean']['rate']:.3f} (plain "
          f"{row['coverage_plain_bootstrap']['rate']:.3f}) err {errors} "
          f"({row['seconds']:.0f} s)", flush=True)
    return row


#: the comparison on the same studies: designs (evidence constant within a context, which
#: the competitor's strata need) and leaks
COMPETITOR_DESIGNS: dict[str, LeakDesign] = {
    "no evidence, 0.05 grid, 200 x 5": REF,
    "nominal evidence, integer codes, 200 x 5": NOM,
    "binary evidence (false negative x3), 200 x 5": BIN,
    "small study: 40 x 3, binary evidence": BIN.with_(n_contexts=40, repetitions=3),
}
COMPETITOR_LEAKS = (0.0, 0.2, 0.35, 0.5)
#: permutations of every test in the comparison (19 would cap the power of all three)
COMPETITOR_PERMUTATIONS = 99


#: the continuous-evidence comparison (``--continuous --competitor``): designs of
#: validate_citest_continuous that the competitor applies to (outcomes constant within a
#: context, one evidence column), at leaks from 0 to 0.5
CONTINUOUS_COMPETITOR = ("evidence per context, 0.05 grid, 200 x 5",
                         "continuous beliefs that miss the evidence, strong effects",
                         "evidence per row, 0.05 grid, 200 x 5")
CONTINUOUS_LEAKS = (0.0, 0.25, 0.5)
#: the competitor's (belief bins, evidence bins) there: of validate_citest_continuous's two,
#: the one that held its size there (0.061 and 0.060 of 1,000 null studies of these designs;
#: 5 x 4 rejected 0.072 and 0.161, and 0.105 of 200 here in a first run). Here it rejected
#: 0.085 and 0.105 of 200: the comparison's table says so.
CONTINUOUS_BINS = (5, 8)


def _run_three(args: tuple[Any, int]) -> tuple[float, float, float]:
    """The p-values of leakage_test, ci_test and the stratified chi-square competitor on
    one study (the intervals, which the p-values do not depend on, are cut short). With
    a continuous-evidence design the competitor bins the context's mean evidence
    (:data:`CONTINUOUS_BINS`)."""
    import coherence
    from benchmarks.citest_competitor import strata_permutation_pvalue

    design, seed = args
    data, evidence = _study(design, seed)
    bins: dict[str, Any] = {"evidence": "evidence" if evidence else None}
    if not isinstance(design, LeakDesign):
        bins.update(bins=CONTINUOUS_BINS[0], evidence_bins=CONTINUOUS_BINS[1])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        leak = coherence.leakage_test(data, evidence=evidence, rng=seed, n_resamples=20,
                                      n_fold_draws=1, n_permutations=COMPETITOR_PERMUTATIONS)
        ci = coherence.ci_test(data, evidence=evidence, rng=seed, ci_method=None,
                               n_resamples=COMPETITOR_PERMUTATIONS)
    other = strata_permutation_pvalue(data, n_resamples=COMPETITOR_PERMUTATIONS, rng=seed,
                                      **bins)
    return leak.pvalue, ci.pvalue, other


def competitor_section(reps: int, jobs: int, null_reps: int | None = None, *,
                       designs: dict[str, Any] | None = None,
                       leaks: tuple[float, ...] | None = None,
                       seed_base: int = 50_000_000,
                       only: list[str] | None = None) -> list[dict[str, Any]]:
    """The comparison's rows: ``reps`` studies a cell, ``null_reps`` (default ``reps``)
    at leak 0; ``designs`` (default :data:`COMPETITOR_DESIGNS`) at each of ``leaks``
    (default :data:`COMPETITOR_LEAKS`); with ``only``, the designs whose name starts with
    one of its prefixes (a design's seeds follow its place in ``designs`` either way)."""
    rows = []
    commit = environment()["commit"]
    pool = ProcessPoolExecutor(jobs, initializer=one_thread) if jobs > 1 else None
    for i, (name, design) in enumerate((designs or COMPETITOR_DESIGNS).items()):
        if only and not any(name.startswith(w) for w in only):
            continue
        for j, leak in enumerate(leaks or COMPETITOR_LEAKS):
            t0 = time.perf_counter()
            n = reps if leak or null_reps is None else null_reps
            seeds = [seed_base + 1_000_000 * i + 10_000 * j + s for s in range(n)]
            jobs_list = [(design.with_(leak=leak), s) for s in seeds]
            out = map_jobs(_run_three, jobs_list, pool, chunksize=10)
            row = {"design": name, "leak": leak, "reps": n, "commit": commit,
                   "settings": design.with_(leak=leak).settings(),
                   **{key: rejection_rate(out[:, c] <= ALPHA) for c, key in
                      enumerate(("leakage_test", "ci_test", "competitor"))},
                   "seconds": time.perf_counter() - t0}
            rows.append(row)
            print(f"comp {name:46s} leak {leak:.2f}: leakage "
                  f"{row['leakage_test']['rate']:.3f} ci_test {row['ci_test']['rate']:.3f} "
                  f"competitor {row['competitor']['rate']:.3f} ({row['seconds']:.0f} s)",
                  flush=True)
    if pool:
        pool.shutdown()
    return rows


def _commits(rows: list[dict[str, Any]], default: str) -> str:
    """The rows' commits, short and quoted (``default`` for a row without one)."""
    return ", ".join(f"`{c}`" for c in sorted({r.get("commit", default)[:10] for r in rows}))


def _rejection(r: dict[str, Any]) -> str:
    """A cell's rejection for a table: size or power, with its NaN p-values and the studies
    the test refused (an error: left out of the rate) if any."""
    return (f"{'power' if r['leak'] else 'size'} {format_rate(r['rejection'])}"
            + (f" ({r['n_nan_pvalue']} NaN)" if r["n_nan_pvalue"] else "")
            + (f" ({r['n_errors']} errors)" if r.get("n_errors") else ""))


#: how the competitor's strata are made, as the tables say it
_STRATA = ("one stratum of the mean belief (grid value or one of 20 quantile bins, split by "
           "the evidence)")


def competitor_table(rows: list[dict[str, Any]], strata: str = _STRATA) -> list[str]:
    return ["", "### Against the simplest valid competitor (the same studies)", "",
            f"Commit(s) {_commits(rows, '')}; {COMPETITOR_PERMUTATIONS} "
            "permutations for every test. The competitor (`benchmarks/citest_competitor.py`) "
            f"permutes outcomes among the contexts of {strata} and sums "
            "Cochran-Mantel-Haenszel's per-action chi-square; `ci_test` at its defaults. "
            "Leak 0 is the null.", "",
            *markdown_table(
                ("design", "leak", "reps", "leakage_test", "ci_test", "competitor"),
                ([r["design"], f"{r['leak']:.2f}", r["reps"], format_rate(r["leakage_test"]),
                  format_rate(r["ci_test"]), format_rate(r["competitor"])] for r in rows))]


def _before(b: dict[str, Any] | None) -> str:
    if b is None:
        return ""
    return "error" if b["n_errors"] == b["reps"] else f"{b['rejection']['rate']:.3f} ({b['reps']})"


def _plain(r: dict[str, Any]) -> list[str]:
    """The plain interval's coverage, the two widths and the fold sd of a row ('' for a row
    run before the fold draws)."""
    if "coverage_plain_bootstrap" not in r:
        return ["", "", "", ""]
    return [format_rate(r["coverage_plain_bootstrap"]),
            format_rate(r["coverage_all_fold_variance"]),
            f"{r['mean_width']:.2f} ({r['mean_width_plain']:.2f})", f"{r['mean_fold_sd']:.2f}"]


def tables(results: dict[str, Any], before: dict[str, Any] | None = None) -> str:
    env = results["environment"]
    old = {r["design"]: r for r in (before or {}).get("cells", [])}
    lines = [generated_by("validate_leakage") + f" (commit(s) "
             f"{_commits(results['cells'], env['commit'])}, column *commit*; last run "
             f"{env['date']}); {N_PERMUTATIONS} permutations, {N_RESAMPLES} bootstrap "
             f"resamples, catboost with {CATBOOST['iterations']} iterations; alpha = 0.05, "
             "95% Wilson intervals in brackets. *Before*: the same cells with the previous "
             "release's null (strata of the mean belief, evidence linear), from "
             "`benchmarks/results/validate_leakage_before.json` where run.", "",
             "*Coverage* of E[S], on the same studies, by the interval (the percentile "
             "interval widened by the between-context part of the statistic's variance over "
             "5 fold draws), by the plain percentile interval (`n_fold_draws=1`) and by the "
             "percentile interval widened by all of that variance; *width*: mean width of "
             "the interval (of the plain one), in points of S; *fold sd*: mean standard "
             "deviation of S over the fold draws.", "",
             *markdown_table(
                 ("design", "engine", "reps", "rejection at 0.05", "before",
                  "coverage of E[S]", "plain bootstrap", "all fold variance", "width (plain)",
                  "fold sd", "mean S (%)", "commit"),
                 ([r["design"], r["engine"], r["reps"],
                   _rejection(r), _before(old.get(r["design"])), format_rate(r["coverage_of_mean"]),
                   *_plain(r), f"{r['mean_statistic']:.2f}",
                   f"`{r.get('commit', env['commit'])[:10]}`"] for r in results["cells"]))]
    if results.get("competitor"):
        lines += competitor_table(results["competitor"])
    return "\n".join(lines)


def main(argv: Iterable[str] | None = None) -> int:
    parser = matrix_parser(__doc__, results=RESULTS, page="docs/leakage.md", n_resamples=None,
                           power_reps=None, only="comma-separated prefixes of cell names",
                           append=False)
    parser.add_argument("--merge", action="store_true",
                        help="keep the other cells of an existing JSON")
    parser.add_argument("--competitor", action="store_true",
                        help="only the comparison with the simplest valid competitor")
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--null-reps", type=int, default=None,
                        help="--competitor: studies at leak 0 (default --reps)")
    parser.add_argument("--continuous", action="store_true",
                        help="the continuous-evidence part (validate_citest_continuous's "
                        "designs; default --out validate_leakage_continuous.json)")
    parser.add_argument("--power-reps", type=int, default=200,
                        help="--continuous: studies per power cell")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.continuous:
        return continuous_main(args)
    if args.competitor:
        kept = json.loads(args.out.read_text()) if args.out.exists() else {}
        kept["competitor"] = competitor_section(args.reps, args.jobs, args.null_reps)
        kept.setdefault("environment", environment(("catboost",)))
        write_json(args.out, kept)
        return 0
    if args.tables:
        before_path = RESULTS.with_name("validate_leakage_before.json")
        before = json.loads(before_path.read_text()) if before_path.exists() else None
        write_tables(DOC, "validate_leakage.py",
                     tables(json.loads(args.out.read_text()), before))
        return 0
    only = only_words(args)
    results: dict[str, Any] = {"environment": environment(("catboost",)),
                               "settings": {"alpha": ALPHA, "n_permutations": N_PERMUTATIONS,
                                            "n_resamples": N_RESAMPLES, "catboost": CATBOOST}}
    if args.merge and args.out.exists():  # keep the other cells of the file
        stored = json.loads(args.out.read_text())
        results["cells"] = stored.get("cells", [])
        if "competitor" in stored:
            results["competitor"] = stored["competitor"]
    pool = ProcessPoolExecutor(args.jobs, initializer=one_thread) if args.jobs > 1 else None
    for i, name in enumerate(CELLS):
        if only and not any(name.startswith(w) for w in only):
            continue
        row = run_cell(name, args.reps, 1_000_000 * (i + 1), results["environment"]["commit"],
                       pool)
        store_cell(results, "cells", row, list(CELLS), args.out)
    if pool:
        pool.shutdown()
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


def continuous_main(args: Any) -> int:
    """``--continuous``: run the continuous-evidence cells or (``--tables``) write their table."""
    from benchmarks import validate_citest_continuous as cc

    out = CONTINUOUS_RESULTS if args.out == RESULTS else args.out
    if args.competitor:
        kept = json.loads(out.read_text()) if out.exists() else {}
        new = competitor_section(
            args.reps, args.jobs, args.null_reps, leaks=CONTINUOUS_LEAKS,
            designs={name: cc.NULLS[name] for name in CONTINUOUS_COMPETITOR},
            seed_base=60_000_000, only=only_words(args))
        # with --only, the other designs' stored rows stay (the table keeps the design order)
        ran = {row["design"] for row in new}
        old = [row for row in kept.get("competitor", []) if row["design"] not in ran]
        order = list(CONTINUOUS_COMPETITOR)
        kept["competitor"] = sorted(old + new, key=lambda r: (order.index(r["design"])
                                                              if r["design"] in order
                                                              else len(order), r["leak"]))
        kept.setdefault("environment", environment())
        write_json(out, kept)
        return 0
    if args.tables:
        citest = json.loads(cc.RESULTS.read_text()) if cc.RESULTS.exists() else None
        write_tables(DOC, "validate_leakage.py --continuous",
                     continuous_tables(json.loads(out.read_text()), citest))
        return 0
    cells = continuous_cells()
    only = only_words(args)
    results: dict[str, Any] = {"environment": environment(),
                               "settings": {"alpha": ALPHA, "n_permutations": N_PERMUTATIONS,
                                            "n_resamples": N_RESAMPLES}}
    if args.merge and out.exists():  # the other cells and the comparison stay, with their run
        stored = json.loads(out.read_text())
        results["cells"] = stored.get("cells", [])
        if "competitor" in stored:
            results["competitor"] = stored["competitor"]
        results["environment_appended"] = results["environment"]
        results["environment"] = stored.get("environment", results["environment"])
    pool = ProcessPoolExecutor(args.jobs, initializer=one_thread) if args.jobs > 1 else None
    for name, (_, _, leak) in cells.items():
        if only and not any(name.startswith(w) for w in only):
            continue
        # the studies of validate_citest_continuous: its seeds; the commit that runs it (with
        # --merge, "environment" is the stored run's, "environment_appended" this one's)
        ran = results.get("environment_appended", results["environment"])["commit"]
        row = run_cell(name, args.power_reps if leak else args.reps,
                       10_000 * (cc.ORDER.index(name) + 1), ran, pool, cells)
        store_cell(results, "cells", row, list(cells), out)
    if pool:
        pool.shutdown()
    print(f"wrote {out}", file=sys.stderr)
    return 0


#: the continuous comparison's strata, as its table says it
CONTINUOUS_STRATA = (f"one stratum of ({CONTINUOUS_BINS[0]} quantile bins of the mean belief) "
                     f"x ({CONTINUOUS_BINS[1]} quantile bins of the mean evidence)")


def continuous_tables(results: dict[str, Any], citest: dict[str, Any] | None) -> str:
    """The continuous-evidence part's table, with ci_test's rejections on the same
    designs (``validate_citest_continuous.json``: the same seeds, so its first studies
    are these)."""
    env = results["environment"]
    theirs = {r["design"]: r for part in ("size", "power") for r in (citest or {}).get(part, [])}

    commits = _commits(results.get("cells", []), env["commit"])

    def ci(name: str) -> str:
        r = theirs.get(name)
        return f"{format_rate(r['rejection'])} ({r['reps']})" if r else "not run"

    return "\n".join([
        "Generated by `python -m benchmarks.validate_leakage --continuous --tables` from "
        f"`benchmarks/results/{CONTINUOUS_RESULTS.name}` (commit(s) {commits}, column "
        f"*commit*; {env['date']}, {env['machine']['cpus']} CPUs, {N_PERMUTATIONS} permutations, "
        f"{N_RESAMPLES} bootstrap resamples; alpha = 0.05, 95% Wilson intervals in "
        "brackets). The designs of "
        "`benchmarks/validate_citest_continuous.py` (one or two float evidence columns; "
        "their names there), the same studies (its seeds). *ci_test*: its rejection on "
        "those designs at 99 permutations (studies in brackets; the first of them are "
        "these). Coverage of E[S] as in the table above.", "",
        *markdown_table(
            ("design", "reps", "leakage_test at 0.05", "ci_test", "coverage of E[S]",
             "width (plain)", "mean S (%)", "commit"),
            ([r["design"], r["reps"],
              _rejection(r),
              ci(r["design"]), format_rate(r["coverage_of_mean"]),
              f"{r['mean_width']:.2f} ({r['mean_width_plain']:.2f})",
              f"{r['mean_statistic']:.2f}", f"`{r.get('commit', env['commit'])[:10]}`"]
             for r in results.get("cells", []))),
        *(competitor_table(results["competitor"], CONTINUOUS_STRATA)
          if results.get("competitor") else [])])


if __name__ == "__main__":
    raise SystemExit(main())
