"""Coverage of ``ci_test``'s interval with continuous (float) evidence, at its defaults.

``validate_citest_continuous`` measures the p-value only (``ci_method=None``, 99
permutations). Here ``ci_test`` runs as a user gets it (1,000 permutations, the
``'debiased'`` interval from 1,000 half-samples and its bias model) on the same studies
(that matrix's null designs and seeds). Under those nulls the CMI is 0, so the interval
should hold 0 in at least 93% of studies; the p-value's rejection at the defaults is
recorded beside it::

    python -m benchmarks.validate_citest_interval_continuous --reps 400 --jobs 2
    python -m benchmarks.validate_citest_interval_continuous --tables

``--only PREFIX,...`` runs the designs whose name starts with a prefix; ``--merge`` keeps
the stored designs of ``--out``; ``--budget S`` starts no design after S seconds (for a
lease of limited time). Results are JSON (versions, commit, machine), one design at a
time; the table of ``docs/validation_ci.md`` is generated from it.
"""

from __future__ import annotations

import argparse
import json
import time
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._harness import ROOT
from benchmarks._harness import environment
from benchmarks._harness import format_rate
from benchmarks._harness import generated_by
from benchmarks._harness import map_jobs
from benchmarks._harness import markdown_table
from benchmarks._harness import one_thread
from benchmarks._harness import rejection_rate
from benchmarks._harness import store_cell
from benchmarks._harness import write_tables

RESULTS = ROOT / "benchmarks" / "results" / "validate_citest_interval_continuous.json"
DOC = ROOT / "docs" / "validation_ci.md"
ALPHA = 0.05


def _one(args: tuple[Any, int]) -> list[float]:
    """p-value, interval ends and estimate of ci_test at its defaults on one study."""
    import coherence
    from benchmarks import validate_citest_continuous as cc

    design, seed = args
    data = cc.generate(design, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = coherence.ci_test(data, evidence=cc.evidence_columns(design), group="context",
                                rng=seed)
    ci = res.confidence_interval
    return [float(res.pvalue), float(ci.low), float(ci.high), float(res.statistic)]


def run_design(name: str, reps: int, pool: Any) -> dict[str, Any]:
    from benchmarks import validate_citest_continuous as cc

    design = cc.NULLS[name]
    start = time.perf_counter()
    # the studies of validate_citest_continuous: its seeds
    work = [(design, 10_000 * (cc.ORDER.index(name) + 1) + s) for s in range(reps)]
    out = map_jobs(_one, work, pool)
    p, low, high = out[:, 0], out[:, 1], out[:, 2]
    ok = np.isfinite(low) & np.isfinite(high)
    return {"design": name, "reps": reps, "settings": design.settings(),
            "rejection": rejection_rate(p[np.isfinite(p)] <= ALPHA),
            "covers_zero": rejection_rate((low[ok] <= 0.0) & (high[ok] >= 0.0)),
            "n_nan_interval": int(np.sum(~ok)),
            "mean_width": float(np.mean(high[ok] - low[ok])) if ok.any() else float("nan"),
            "mean_estimate": float(np.nanmean(out[:, 3])),
            "seconds": time.perf_counter() - start}


def table(results: dict[str, Any]) -> str:
    env = results["environment"]
    lines = [generated_by("validate_citest_interval_continuous", env)
             + f"; ci_test at its defaults: {results['settings']['n_resamples']} "
             "permutations, the 'debiased' interval; alpha = 0.05, 95% Wilson intervals in "
             "brackets). The null designs of `validate_citest_continuous` (float evidence), "
             "the same studies (its seeds). The CMI is 0 under them: *covers 0* is the "
             "share of studies whose 95% interval holds 0 (at least 0.93 wanted).", ""]
    if len(results.get("runs", [])) > 1:
        lines[0] += (" The designs ran in several runs of the same commit; *CPUs* says on "
                     "which machine (16: the lent 16-core machine, numpy "
                     + ", ".join(sorted({run["versions"]["numpy"] for run in results["runs"]}))
                     + " across the runs).")
    rows = [(r["design"], r["reps"], format_rate(r["covers_zero"]),
             f"{r['mean_width']:.4f}", f"{r['mean_estimate']:.4f}",
             format_rate(r["rejection"]), r["n_nan_interval"], r.get("cpus", ""),
             f"`{r['commit'][:10]}`") for r in results["designs"]]
    lines += markdown_table(("design", "studies", "covers 0", "mean width (nats)",
                             "mean estimate", "size at 0.05 (defaults)", "NaN intervals",
                             "CPUs", "commit"), rows)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from benchmarks import validate_citest_continuous as cc

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", default="", help="comma-separated prefixes of designs")
    parser.add_argument("--merge", action="store_true")
    parser.add_argument("--budget", type=float, default=float("inf"),
                        help="start no design after this many seconds")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--tables", action="store_true")
    args = parser.parse_args(argv)
    if args.tables:
        write_tables(DOC, "validate_citest_interval_continuous.py",
                     table(json.loads(args.out.read_text())))
        return 0
    results: dict[str, Any] = {"environment": environment(),
                               "settings": {"n_resamples": 1000, "ci_method": "debiased",
                                            "alpha": ALPHA}, "designs": []}
    if args.merge and args.out.exists():  # the stored designs stay, with their run
        stored = json.loads(args.out.read_text())
        results["designs"] = stored["designs"]
        results["runs"] = [*stored.get("runs", [stored["environment"]]), results["environment"]]
        results["environment"] = stored["environment"]
    only = [w for w in args.only.split(",") if w]
    start = time.perf_counter()
    pool = ProcessPoolExecutor(args.jobs, initializer=one_thread) if args.jobs > 1 else None
    for name in cc.NULLS:
        if only and not any(name.startswith(w) for w in only):
            continue
        if time.perf_counter() - start > args.budget:
            print(f"budget spent: {name} not run", flush=True)
            continue
        row = run_design(name, args.reps, pool)
        row["commit"] = results["environment"]["commit"]
        row["cpus"] = results["environment"]["machine"]["cpus"]
        store_cell(results, "designs", row, list(cc.NULLS), args.out)
        print(f"{name}: covers 0 {row['covers_zero']['rate']:.3f}, size "
              f"{row['rejection']['rate']:.3f}, width {row['mean_width']:.4f} "
              f"({row['seconds']:.0f} s)", flush=True)
    if pool:
        pool.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
