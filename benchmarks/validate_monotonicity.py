"""Validation matrix of :func:`coherence.monotonicity_test`: per-pair size and power.

Studies come from :mod:`benchmarks.monotone_designs`, a generator written apart from
the package's own simulated agents, whose pairwise choice shares are known. Every
cell runs the defaults a user gets (only ``n_resamples`` is lowered, which changes
the p-value's resolution, not its validity). The JSON (package versions, commit,
machine) is rewritten after every cell, so an interrupted run keeps what finished;
the tables of ``docs/validation_monotonicity.md`` are generated from it::

    nice -n 15 python -m benchmarks.validate_monotonicity --reps 400     # writes the JSON
    python -m benchmarks.validate_monotonicity --tables                  # JSON -> docs tables

One process, single-threaded (set ``OMP_NUM_THREADS=1``); ``--only WORD`` runs the
cells whose name contains a word.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._harness import (
    environment,
    format_rate,
    markers,
    rejection_rate,
    replace_block,
)
from benchmarks.monotone_designs import Design, generate

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "validate_monotonicity.json"
DOC = ROOT / "docs" / "validation_monotonicity.md"
ALPHA = 0.05
PAIRS = ("yes/no", "yes/defer", "defer/no")

REF = Design()
NULLS: dict[str, Design] = {
    "flat, 0.05 grid, 200 x 5": REF,
    "flat, one row per context, continuous, 1000 x 1": REF.with_(n_contexts=1000,
                                                                 repetitions=1, grid=None),
    "flat, continuous, 200 x 5": REF.with_(grid=None),
    "flat, context shocks (sd 1), 0.05 grid": REF.with_(shock_sd=1.0),
    "nearly flat (slope 0.3), context shocks (sd 1)": REF.with_(slope=0.3, shock_sd=1.0),
    "rising (slope 2), context shocks (sd 1), continuous": REF.with_(slope=2.0, shock_sd=1.0,
                                                                     grid=None),
    "steep (slope 4), one row per context, continuous, 1000 x 1": REF.with_(
        slope=4.0, n_contexts=1000, repetitions=1, grid=None),
    "flat, shocks, beliefs vary (sd 0.05), repetitions 1-10, continuous": REF.with_(
        shock_sd=1.0, belief_sd=0.05, repetitions=(1, 10), grid=None),
    "flat, never defers": REF.with_(defer_logit=float("-inf")),
}
#: alternatives: a dip in the yes/no and yes/defer shares (defer/no stays monotone)
ALTERNATIVES: dict[str, Design] = {
    "dip 1.5 on slope 2, 0.05 grid, 200 x 5": REF.with_(slope=2.0, dip=1.5),
    "dip 3 on slope 2, 0.05 grid, 200 x 5": REF.with_(slope=2.0, dip=3.0),
    "dip 3 on slope 2, one row per context, 1000 x 1": REF.with_(
        slope=2.0, dip=3.0, n_contexts=1000, repetitions=1, grid=None),
    "dip 3 on slope 2, context shocks (sd 1)": REF.with_(slope=2.0, dip=3.0, shock_sd=1.0),
    "narrow dip 4 (width 0.03) on slope 2, continuous, 500 x 3": REF.with_(
        slope=2.0, dip=4.0, dip_width=0.03, n_contexts=500, repetitions=3, grid=None),
}
#: the global test's statistic variants compared on the alternatives (power)
LR_VARIANTS = ("values", "bins")
#: the procedure before issue 14 (method='bootstrap'), on a few nulls
BEFORE = ("flat, 0.05 grid, 200 x 5", "flat, one row per context, continuous, 1000 x 1",
          "flat, context shocks (sd 1), 0.05 grid")


def _run_one(design: Design, seed: int, options: dict[str, Any]) -> np.ndarray:
    import coherence

    data = generate(design, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = coherence.monotonicity_test(data, rng=seed, **options)
    table = res.table.set_index("pair")
    return np.array([table.loc[p, "pvalue"] for p in PAIRS] + [res.pvalue], dtype=np.float64)


def _cell(name: str, design: Design, reps: int, options: dict[str, Any],
          seed0: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    out = np.array([_run_one(design, seed0 + s, options) for s in range(reps)])
    row: dict[str, Any] = {"design": name, "settings": _settings(design), "reps": reps,
                           "options": options, "seconds": time.perf_counter() - t0}
    for j, label in enumerate((*PAIRS, "global")):
        p = out[:, j]
        ok = np.isfinite(p)
        row[label] = (rejection_rate(p[ok] <= ALPHA) if ok.any() else None)
        row[f"{label}_n_nan"] = int(np.sum(~ok))
    cells = " ".join(f"{k} {row[k]['rate']:.3f}" if row[k] else f"{k} NaN"
                     for k in (*PAIRS, "global"))
    print(f"{name:70s} {cells} ({row['seconds']:.0f} s)", flush=True)
    return row


def _settings(design: Design) -> dict[str, Any]:
    return {key: (list(v) if isinstance(v, tuple) else v)
            for key, v in design.__dict__.items()}


def _cellfmt(row: dict[str, Any], key: str) -> str:
    r = row[key]
    if r is None:
        return f"not testable ({row[key + '_n_nan']} NaN)"
    nan = f" ({row[key + '_n_nan']} NaN)" if row[key + "_n_nan"] else ""
    return format_rate(r) + nan


def tables(results: dict[str, Any]) -> str:
    env = results["environment"]
    lines = [f"Generated by `python -m benchmarks.validate_monotonicity --tables` from "
             f"`benchmarks/results/validate_monotonicity.json` (commit `{env['commit'][:10]}`, "
             f"{env['date']}, {env['machine']['cpus']} CPUs, numpy "
             f"{env['versions']['numpy']}); {results['settings']['n_resamples']} resamples per "
             "test, alpha = 0.05, rejection rates with 95% Wilson intervals in brackets.", ""]
    head = ["| design | reps | yes/no | yes/defer | defer/no | global (Bonferroni) |",
            "| --- | --- | --- | --- | --- | --- |"]
    for part, title in (("size", "Size under monotone nulls (defaults)"),
                        ("power", "Power at a known fall in the yes/no and yes/defer shares "
                                  "(defer/no stays monotone; its column is a size)"),
                        ("power_values", "Power with `lr_on='values'` (the likelihood ratio "
                                         "over distinct belief values only, before the "
                                         "power fix)"),
                        ("power_bins", "Power with `lr_on='bins'` (over the quantile bins "
                                       "only)"),
                        ("before", "Earlier releases: `method='bootstrap'` (the earlier "
                                   "default) on the same nulls")):
        if not results.get(part):
            continue
        lines += [f"### {title}", "", *head]
        for r in results[part]:
            cells = " | ".join(_cellfmt(r, k) for k in (*PAIRS, "global"))
            lines.append(f"| {r['design']} | {r['reps']} | {cells} |")
        lines.append("")
    return "\n".join(lines)


BEGIN, END = markers("validate_monotonicity.py")


def write_tables(results: dict[str, Any], doc: Path = DOC) -> None:
    replace_block(doc, BEGIN, END, tables(results))




def main(argv: Iterable[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=400, help="studies per size cell")
    parser.add_argument("--power-reps", type=int, default=200)
    parser.add_argument("--before-reps", type=int, default=100)
    parser.add_argument("--n-resamples", type=int, default=199)
    parser.add_argument("--parts", default="size,power,power_values,power_bins,before")
    parser.add_argument("--only", default="", help="comma-separated words: cells to run")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--tables", action="store_true",
                        help="write docs/validation_monotonicity.md's tables from the JSON")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.tables:
        write_tables(json.loads(args.out.read_text()))
        return 0
    only = [w for w in args.only.split(",") if w]
    parts = args.parts.split(",")
    results: dict[str, Any] = {"environment": environment(),
                               "settings": {"n_resamples": args.n_resamples, "alpha": ALPHA,
                                            "reps": args.reps, "power_reps": args.power_reps,
                                            "before_reps": args.before_reps}}
    options = {"n_resamples": args.n_resamples}
    plan = []
    if "size" in parts:
        plan += [("size", n, d, args.reps, options, 100_000 * (i + 1))
                 for i, (n, d) in enumerate(NULLS.items())]
    if "power" in parts:
        plan += [("power", n, d, args.power_reps, options, 5_000_000 + 100_000 * i)
                 for i, (n, d) in enumerate(ALTERNATIVES.items())]
    for lr in LR_VARIANTS:  # the same studies as "power" (same seeds)
        if f"power_{lr}" in parts:
            plan += [(f"power_{lr}", n, d, args.power_reps, {**options, "lr_on": lr},
                      5_000_000 + 100_000 * i) for i, (n, d) in enumerate(ALTERNATIVES.items())]
    if "before" in parts:
        plan += [("before", n, NULLS[n], args.before_reps,
                  {**options, "method": "bootstrap", "lr_on": "values"},
                  9_000_000 + 100_000 * i)
                 for i, n in enumerate(BEFORE)]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    for part, name, design, reps, opts, seed0 in plan:
        if only and not any(w in name for w in only):
            continue
        results.setdefault(part, []).append(_cell(name, design, reps, opts, seed0))
        args.out.write_text(json.dumps(results, indent=1, default=float) + "\n")
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
