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

import json
import sys
import time
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._harness import format_rate
from benchmarks._harness import generated_by
from benchmarks._harness import matrix_parser
from benchmarks._harness import only_words
from benchmarks._harness import rejection_columns
from benchmarks._harness import section_tables
from benchmarks._harness import start_results
from benchmarks._harness import write_json
from benchmarks._harness import write_tables
from benchmarks.monotone_designs import Design
from benchmarks.monotone_designs import generate

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "validate_monotonicity.json"
DOC = ROOT / "docs" / "validation_monotonicity.md"
ALPHA = 0.05
PAIRS = ("yes/no", "yes/defer", "defer/no")

REF = Design()
#: LLM-like heaped beliefs: 70% of the contexts state 0.7, 0.75 or 0.8
HEAP = {"heap": (0.7, 0.75, 0.8), "heap_mass": 0.7}
#: LLM-like round values: 70% of the contexts state 0.5, 0.6, 0.7, 0.8 or 0.9
ROUND = {"heap": (0.5, 0.6, 0.7, 0.8, 0.9), "heap_mass": 0.7}
NULLS: dict[str, Any] = {
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
    "heaped (70% at 0.7/0.75/0.8), rising (slope 2)": REF.with_(slope=2.0, **HEAP),
    "heaped, flat, context shocks (sd 1)": REF.with_(shock_sd=1.0, **HEAP),
    "deterministic (every repetition alike), flat, shocks (sd 1)": REF.with_(
        shock_sd=1.0, same_action=True),
    "deterministic, heaped, rising (slope 2)": REF.with_(slope=2.0, same_action=True, **HEAP),
    "flat, small study, 60 x 3": REF.with_(n_contexts=60, repetitions=3),
    "flat, small study, 30 x 5": REF.with_(n_contexts=30),
    "flat, context shocks (sd 1), small study, 30 x 5": REF.with_(n_contexts=30,
                                                                 shock_sd=1.0),
    "flat, 40 x 5": REF.with_(n_contexts=40),
    "flat, context shocks (sd 1), small study, 20 x 5": REF.with_(n_contexts=20,
                                                                 shock_sd=1.0),
    "flat, context shocks (sd 1), small study, 40 x 5": REF.with_(n_contexts=40,
                                                                 shock_sd=1.0),
    "package's rational agent, 200 x 5": ("agent", "rational"),
    "package's rational agent with report noise 0.05, 200 x 5": ("agent", "rational+noise"),
    "round-heaped (70% at 0.5/0.6/0.7/0.8/0.9), rising (slope 2)": REF.with_(slope=2.0,
                                                                             **ROUND),
    "round-heaped, flat, context shocks (sd 1)": REF.with_(shock_sd=1.0, **ROUND),
    "heaped (70% at 0.7/0.75/0.8), yes/no only, gently rising (slope 0.5)": REF.with_(
        slope=0.5, defer_logit=float("-inf"), **HEAP),
    "round-heaped, yes/no only, flat, context shocks (sd 1)": REF.with_(
        shock_sd=1.0, defer_logit=float("-inf"), **ROUND),
}
#: alternatives: a fall in the yes/no and yes/defer shares (defer/no stays monotone)
ALTERNATIVES: dict[str, Any] = {
    "package's nonmonotone agent (defaults), 200 x 5 (the paper's size)": ("agent",
                                                                          "nonmonotone"),
    "the demo's nonmonotone agent (free deferring in the band), 200 x 5": ("agent",
                                                                           "nonmonotone-demo"),
    "dip 1.5 on slope 2, 0.05 grid, 200 x 5": REF.with_(slope=2.0, dip=1.5),
    "dip 3 on slope 2, 0.05 grid, 200 x 5": REF.with_(slope=2.0, dip=3.0),
    "dip 3 on slope 2, one row per context, 1000 x 1": REF.with_(
        slope=2.0, dip=3.0, n_contexts=1000, repetitions=1, grid=None),
    "dip 3 on slope 2, context shocks (sd 1)": REF.with_(slope=2.0, dip=3.0, shock_sd=1.0),
    "narrow dip 4 (width 0.03) on slope 2, continuous, 500 x 3": REF.with_(
        slope=2.0, dip=4.0, dip_width=0.03, n_contexts=500, repetitions=3, grid=None),
    "heaped, step dip 1.5 over [0.55, 0.70] on slope 2": REF.with_(slope=2.0, step_dip=1.5,
                                                                   **HEAP),
    "heaped, step dip 1.5 over [0.55, 0.70] on slope 2, 1000 x 5": REF.with_(
        slope=2.0, step_dip=1.5, n_contexts=1000, **HEAP),
    ("round-heaped, step dip 1.5 over [0.55, 0.70] on slope 2 "
     "(0.5 -> 0.6: yes/defer 0.50 -> 0.25)"): REF.with_(slope=2.0, step_dip=1.5, **ROUND),
    # the yes/no share itself falls by 0.35 over [0.55, 0.70] (0.50 at 0.5, 0.14-0.18 inside)
    "heaped, yes/no only, the share 0.50 -> 0.15 over [0.55, 0.70] (slope 0.5)": REF.with_(
        slope=0.5, step_dip=1.93, defer_logit=float("-inf"), **HEAP),
    "round-heaped, yes/no only, the share 0.50 -> 0.15 over [0.55, 0.70]": REF.with_(
        slope=0.5, step_dip=1.93, defer_logit=float("-inf"), **ROUND),
}
#: the competitor (adjacent values, Bonferroni) on these nulls and every alternative
COMPETITOR_NULLS = ("flat, 0.05 grid, 200 x 5", "flat, context shocks (sd 1), 0.05 grid",
                    "heaped (70% at 0.7/0.75/0.8), rising (slope 2)",
                    "heaped, flat, context shocks (sd 1)",
                    "deterministic (every repetition alike), flat, shocks (sd 1)",
                    "package's rational agent, 200 x 5",
                    "round-heaped (70% at 0.5/0.6/0.7/0.8/0.9), rising (slope 2)",
                    "round-heaped, flat, context shocks (sd 1)",
                    "heaped (70% at 0.7/0.75/0.8), yes/no only, gently rising (slope 0.5)",
                    "round-heaped, yes/no only, flat, context shocks (sd 1)")


def _study(design: Any, seed: int) -> Any:
    if isinstance(design, tuple):  # the package's own simulated agents
        import coherence

        agents = {"rational": coherence.Agent.rational(),
                  "rational+noise": coherence.Agent.rational(report_noise=0.05),
                  "nonmonotone": coherence.Agent.nonmonotone(),
                  "nonmonotone-demo": coherence.Agent.nonmonotone(loss_defer_band=0.0)}
        study = coherence.simulate(agents[design[1]], n_contexts=200, n_repetitions=5,
                                   rng=seed)
        data = study.data
        return data[data["prompt"] == data["prompt"].iloc[0]]
    return generate(design, seed)


def _run_one(design: Any, seed: int, options: dict[str, Any]) -> np.ndarray:
    import coherence

    data = _study(design, seed)
    if options.get("competitor"):
        from benchmarks.monotone_competitor import adjacent_bonferroni

        p = adjacent_bonferroni(data, floor=options["competitor"] == "floor")
        return np.array([np.nan] * len(PAIRS) + [p], dtype=np.float64)
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
                           "options": options, "seconds": time.perf_counter() - t0,
                           **rejection_columns(out, (*PAIRS, "global"), ALPHA,
                                               none_if_untested=True)}
    cells = " ".join(f"{k} {row[k]['rate']:.3f}" if row[k] else f"{k} NaN"
                     for k in (*PAIRS, "global"))
    print(f"{name:70s} {cells} ({row['seconds']:.0f} s)", flush=True)
    return row


def _settings(design: Any) -> dict[str, Any]:
    if isinstance(design, tuple):
        return {"agent": design[1], "n_contexts": 200, "repetitions": 5}
    return design.settings()


def _cellfmt(row: dict[str, Any], key: str) -> str:
    r = row[key]
    if r is None:
        return f"not testable ({row[key + '_n_nan']} NaN)"
    nan = f" ({row[key + '_n_nan']} NaN)" if row[key + "_n_nan"] else ""
    return format_rate(r) + nan


def tables(results: dict[str, Any]) -> str:
    lines = [generated_by("validate_monotonicity", results["environment"])
             + f"); {results['settings']['n_resamples']} resamples per "
             "test, alpha = 0.05, rejection rates with 95% Wilson intervals in brackets.", ""]
    lines += section_tables(
        results, (("size", "Size under monotone nulls (defaults: `method='local'`)"),
                  ("power", "Power at a known fall in the shares (defaults; defer/no "
                            "stays monotone in the generated designs: its column is a "
                            "size)"),
                  ("power_permutation", "The same studies with `method='permutation'` "
                                        "(the isotonic test, the previous default)"),
                  ("size_permutation", "Size of `method='permutation'`"),
                  ("competitor_raw", "Competitor as first written: adjacent values, "
                                     "cluster-robust z, Bonferroni, no variance floor "
                                     "(global column only)"),
                  ("competitor_floor", "Competitor with a variance floor (the simplest "
                                       "valid version; global column only)")),
        ("design", "reps", *PAIRS, "global"),
        lambda r: [r["design"], r["reps"], *(_cellfmt(r, k) for k in (*PAIRS, "global"))])
    return "\n".join(lines)


def main(argv: Iterable[str] | None = None) -> int:
    parser = matrix_parser(__doc__, results=RESULTS, page="docs/validation_monotonicity.md",
                           n_resamples=None, append=False)
    parser.add_argument("--n-resamples", type=int, default=None,
                        help="draws of the test (default: the test's own)")
    parser.add_argument("--parts", default="size,power,power_permutation,competitor_raw,"
                        "competitor_floor")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.tables:
        write_tables(DOC, "validate_monotonicity.py", tables(json.loads(args.out.read_text())))
        return 0
    only = only_words(args)
    parts = args.parts.split(",")
    previous = json.loads(args.out.read_text()) if only and args.out.exists() else {}
    results = start_results(args, ALPHA, n_resamples=args.n_resamples or "default")
    options: dict[str, Any] = ({"n_resamples": args.n_resamples} if args.n_resamples
                               else {})
    perm = {"method": "permutation", "n_resamples": args.n_resamples or 199}
    plan = []
    if "size" in parts:
        plan += [("size", n, d, args.reps, options, 100_000 * (i + 1))
                 for i, (n, d) in enumerate(NULLS.items())]
    if "power" in parts:
        plan += [("power", n, d, args.power_reps, options, 5_000_000 + 100_000 * i)
                 for i, (n, d) in enumerate(ALTERNATIVES.items())]
    if "power_permutation" in parts:  # the same studies (same seeds)
        plan += [("power_permutation", n, d, args.power_reps // 2, perm,
                  5_000_000 + 100_000 * i) for i, (n, d) in enumerate(ALTERNATIVES.items())]
    for kind in ("raw", "floor"):
        if f"competitor_{kind}" in parts:
            plan += [(f"competitor_{kind}", n, NULLS[n], args.reps, {"competitor": kind},
                      100_000 * (1 + list(NULLS).index(n))) for n in COMPETITOR_NULLS]
            plan += [(f"competitor_{kind}", n, d, args.power_reps, {"competitor": kind},
                      5_000_000 + 100_000 * i) for i, (n, d) in enumerate(ALTERNATIVES.items())]
    for part in parts:  # cells not rerun keep their previous rows (--only)
        if part in previous:
            results[part] = [r for r in previous[part]
                             if not any(w in r["design"] for w in only)]
    for part, name, design, reps, opts, seed0 in plan:
        if only and not any(w in name for w in only):
            continue
        results.setdefault(part, []).append(_cell(name, design, reps, opts, seed0))
        write_json(args.out, results)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
