"""Coverage of ``ci_test``'s interval with continuous (float) evidence, at its defaults.

``validate_citest_continuous`` measures the p-value only (``ci_method=None``, 99
permutations). Here ``ci_test`` runs as a user gets it (1,000 permutations, the
``'debiased'`` interval from 1,000 half-samples and its bias model) on the same studies
(that matrix's null designs and seeds). Under those nulls the CMI is 0, so the interval
should hold 0 in at least 93% of studies; the p-value's rejection at the defaults is
recorded beside it::

    python -m benchmarks.validate_citest_interval_continuous --reps 400 --jobs 2
    python -m benchmarks.validate_citest_interval_continuous --tables

``--known`` runs the second part instead: designs with a known non-zero CMI (continuous
beliefs, where :func:`benchmarks.validate_citest_continuous.exact_cmi` computes it by
quadrature), at leaks chosen to give 0.024 and 0.090 nats (the levels of
``validate_citest``'s discrete designs), where the interval should hold the exact CMI in
at least 93% of studies and the power is recorded.

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


def _known_designs() -> dict[str, tuple[Any, float]]:
    """The designs of the ``--known`` part: name -> (design at leak 0, target CMI)."""
    from benchmarks import validate_citest_continuous as cc

    miss = cc.REF.with_(grid=None, sees=0.0, ev_action=3.0, ev_outcome=2.0)
    per_row = miss.with_(within=True, outcome_per_row=True)
    # written for this part, after the interval was chosen
    shocks = cc.REF.with_(grid=None, n_contexts=150, repetitions=6, sees=0.5, noise=0.5,
                          shock_sd=1.0, ev_action=2.0, ev_outcome=2.5)
    cells = {}
    for target in KNOWN_TARGETS:
        cells[f"continuous beliefs that miss the evidence, 200 x 5, CMI {target}"] = (
            miss, target)
        cells[f"outcome and evidence per row, continuous beliefs that miss it (actions "
              f"permuted), CMI {target}"] = (per_row, target)
        cells[f"held out: 150 x 6, beliefs that half see the evidence, context shocks, "
              f"CMI {target}"] = (shocks, target)
    for target in (0.09, 0.176):
        cells[f"small study: 40 x 3, continuous beliefs, CMI {target}"] = (
            cc.REF.with_(grid=None, n_contexts=40, repetitions=3), target)
    cells["held out: belief x evidence interaction, unequal repetitions, CMI 0.09"] = (
        cc.REF.with_(grid=None, interaction=2.0, unequal=True), 0.09)
    return cells


#: the CMI levels of the --known part (nats): validate_citest's discrete levels
KNOWN_TARGETS = (0.024, 0.09)


def run_known(name: str, reps: int, pool: Any) -> dict[str, Any]:
    """Power and coverage of the exact CMI on ``reps`` studies of a --known design."""
    from benchmarks import validate_citest_continuous as cc

    names = list(_known_designs())
    base, target = _known_designs()[name]
    design = base.with_(leak=cc.leak_for(base, target))
    exact = cc.exact_cmi(design)
    start = time.perf_counter()
    work = [(design, 20_000_000 + 100_000 * names.index(name) + s) for s in range(reps)]
    out = map_jobs(_one, work, pool)
    p, low, high = out[:, 0], out[:, 1], out[:, 2]
    ok = np.isfinite(low) & np.isfinite(high)
    return {"design": name, "reps": reps, "settings": design.settings(), "exact_cmi": exact,
            "power": rejection_rate(p[np.isfinite(p)] <= ALPHA),
            "coverage": rejection_rate((low[ok] <= exact) & (high[ok] >= exact)),
            "below": rejection_rate(high[ok] < exact),
            "n_nan_interval": int(np.sum(~ok)),
            "mean_width": float(np.mean(high[ok] - low[ok])) if ok.any() else float("nan"),
            "mean_estimate": float(np.nanmean(out[:, 3])),
            "seconds": time.perf_counter() - start}


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
    known = results.get("known", [])
    if known:
        lines += ["", "*At a known CMI* (`--known`): continuous beliefs, the exact CMI of one "
                  "row computed by quadrature (`exact_cmi`), the leak chosen to give it; "
                  "*coverage*: the share of studies whose 95% interval holds the exact CMI "
                  "(at least 0.93 wanted); *below*: the share whose interval lies below it.",
                  ""]
        rows = [(r["design"], f"{r['exact_cmi']:.3f}", f"{r['settings']['leak']:.2f}",
                 r["reps"], format_rate(r["power"]), format_rate(r["coverage"]),
                 format_rate(r["below"]), f"{r['mean_estimate']:.4f}",
                 f"{r['mean_width']:.4f}", r["n_nan_interval"], r.get("cpus", ""),
                 f"`{r['commit'][:10]}`") for r in known]
        lines += markdown_table(("design", "exact CMI (nats)", "leak", "studies",
                                 "power at 0.05", "coverage of the CMI", "below",
                                 "mean estimate", "mean width", "NaN intervals", "CPUs",
                                 "commit"), rows)
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
    parser.add_argument("--known", action="store_true",
                        help="run the designs at a known non-zero CMI instead of the nulls")
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
        results.update({part: stored[part] for part in ("designs", "known") if part in stored})
        results["runs"] = [*stored.get("runs", [stored["environment"]]), results["environment"]]
        results["environment"] = stored["environment"]
    only = [w for w in args.only.split(",") if w]
    start = time.perf_counter()
    pool = ProcessPoolExecutor(args.jobs, initializer=one_thread) if args.jobs > 1 else None
    names, part = (list(_known_designs()), "known") if args.known else (list(cc.NULLS),
                                                                         "designs")
    for name in names:
        if only and not any(name.startswith(w) for w in only):
            continue
        if time.perf_counter() - start > args.budget:
            print(f"budget spent: {name} not run", flush=True)
            continue
        row = (run_known if args.known else run_design)(name, args.reps, pool)
        row["commit"] = results["environment"]["commit"]
        row["cpus"] = results["environment"]["machine"]["cpus"]
        store_cell(results, part, row, names, args.out)
        rate = row["coverage" if args.known else "covers_zero"]["rate"]
        print(f"{name}: coverage {rate:.3f}, rejection "
              f"{row['power' if args.known else 'rejection']['rate']:.3f}, width "
              f"{row['mean_width']:.4f} ({row['seconds']:.0f} s)", flush=True)
    if pool:
        pool.shutdown()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
