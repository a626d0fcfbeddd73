"""Validation matrix of :func:`coherence.prompt_consistency`: size, power, coverage.

Studies come from :mod:`benchmarks.consistency_designs`, a generator written
apart from the package, whose exact mean beliefs and RMSEs are known. Every
cell runs the defaults a user gets (only ``n_resamples`` is lowered, which
changes the p-value's resolution, not its validity); designs holding a re-run
of the reference prompt pass it as ``replicate``. Results are written as JSON
(package versions, commit, machine) and the tables of
``docs/validation_consistency.md`` are generated from that file::

    OMP_NUM_THREADS=1 nice -n 15 python -m benchmarks.validate_consistency --reps 400
    python -m benchmarks.validate_consistency --tables     # JSON -> docs tables

``--only WORD`` runs the cells whose name contains a word; ``--option
method=permutation`` passes an option to every call (``--out`` names such a
run's JSON).

Each study also records the per-variant p-values of the two statistics the
default combines (``alternative='shift'`` and ``'disagreement'``, on the same
resamples) and, as the simplest competitor, a paired t-test of the per-context
mean difference between the last prompt and the reference.
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
from scipy import stats

from benchmarks._harness import markdown_table
from benchmarks._harness import matrix_parser
from benchmarks._harness import one_thread
from benchmarks._harness import only_words
from benchmarks._harness import rejection_rate
from benchmarks._harness import start_results
from benchmarks._harness import write_json
from benchmarks._harness import write_tables
from benchmarks.consistency_designs import Design
from benchmarks.consistency_designs import generate
from benchmarks.consistency_designs import true_rmse

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "validate_consistency.json"
#: the earlier default (within-context permutation, percentile intervals of the paper's
#: RMSE) on the same designs, run before the change with ``--option replicate=``
BEFORE = ROOT / "benchmarks" / "results" / "validate_consistency_before.json"
#: the disagreement statistic alone (``--option alternative=disagreement``, the default
#: before the shift was added) on the heavy-tailed designs
DISAGREEMENT = ROOT / "benchmarks" / "results" / "validate_consistency_disagreement.json"
DOC = ROOT / "docs" / "validation_consistency.md"
ALPHA = 0.05

# ---------------------------------------------------------------- the matrix
REF = Design()
UNEQUAL = REF.with_(noise=(0.01, 0.06, 0.03), repetitions=(3, 10, 2))
#: heavy-tailed reports: Student t with 3 df at scale 0.06 (sd about 0.1)
HEAVY = REF.with_(noise=(0.06, 0.06, 0.06), tails=3)
NULLS: dict[str, Design] = {
    "equal noise (0.03), 5 repetitions each": REF,
    "unequal noise (0.01 / 0.06 / 0.03), 5 repetitions each": REF.with_(
        noise=(0.01, 0.06, 0.03)),
    "unequal noise and repetitions (3 / 10 / 2)": UNEQUAL,
    "unequal noise and repetitions, reversed (10 / 3 / 2)": UNEQUAL.with_(
        repetitions=(10, 3, 2)),
    "shared repetition shocks (half the variance), 5 each": REF.with_(
        noise=(0.04, 0.04, 0.04), shared=0.5),
    "shared shocks, unequal noise and repetitions (5 / 8 / 3)": REF.with_(
        noise=(0.02, 0.04, 0.03), repetitions=(5, 8, 3), shared=0.5),
    "session offsets sd 0.01, reference re-run as replicate": REF.with_(
        session_sd=0.01, replicate=True),
    "session offsets sd 0.02, reference re-run as replicate": REF.with_(
        session_sd=0.02, replicate=True),
    "session offsets sd 0.02, replicate, unequal noise and repetitions": UNEQUAL.with_(
        session_sd=0.02, replicate=True),
    "two repetitions each": REF.with_(repetitions=(2, 2, 2)),
    "small study: 20 contexts, unequal noise and repetitions": UNEQUAL.with_(n_contexts=20),
    "large study: 200 contexts, unequal noise and repetitions": UNEQUAL.with_(n_contexts=200),
    "heavy-tailed noise (Student t3, scale 0.06), 5 each": HEAVY,
    "heavy-tailed noise, 20 contexts": HEAVY.with_(n_contexts=20),
}
ALTERNATIVES: dict[str, Design] = {
    "shift 0.01, 5 repetitions each": REF.with_(shift=0.01),
    "shift 0.02, 5 repetitions each": REF.with_(shift=0.02),
    "shift 0.05, 5 repetitions each": REF.with_(shift=0.05),
    "shift 0.02, unequal noise and repetitions": UNEQUAL.with_(shift=0.02),
    "shift 0.02, shared shocks": REF.with_(noise=(0.04, 0.04, 0.04), shared=0.5, shift=0.02),
    "pulled 20% toward 0.5 (RMSE 0.035)": REF.with_(shrink=0.2),
    "shift 0.03, session offsets 0.02, replicate": REF.with_(shift=0.03, session_sd=0.02,
                                                            replicate=True),
    "session offsets 0.02, no replicate (a difference by definition)": REF.with_(
        session_sd=0.02),
    "offset 0.03, heavy-tailed noise (t3, scale 0.06)": HEAVY.with_(shift=0.03),
    "offset 0.02, heavy-tailed noise": HEAVY.with_(shift=0.02),
    "pulled 20% toward 0.5, heavy-tailed noise": HEAVY.with_(shrink=0.2),
}


# ---------------------------------------------------------------- one study


def _run_one(design: Design, seed: int, options: dict[str, Any]) -> list[float]:
    import coherence

    data = generate(design, seed)
    kwargs = dict(options)
    if design.replicate and kwargs.pop("replicate", True):
        kwargs["replicate"] = "standard_rerun"
    else:
        kwargs.pop("replicate", None)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = coherence.prompt_consistency(data, truth="truth", rng=seed, **kwargs)
    row = res.table.set_index("prompt").loc[design.prompts[-1]]
    return [res.pvalue, float(row["pvalue"]), float(row["rmse_reference"]),
            float(row["rmse_reference_ci_low"]), float(row["rmse_reference_ci_high"]),
            float(row["rmse_truth"]), float(row["rmse_truth_ci_low"]),
            float(row["rmse_truth_ci_high"]), float(row.get("pvalue_shift", np.nan)),
            float(row.get("pvalue_disagreement", np.nan)),
            paired_t(data, design.prompts[0], design.prompts[-1])]


def paired_t(data: Any, reference: str, variant: str) -> float:
    """The simplest competitor: a paired t-test (two-sided) of the per-context
    difference of repetition-averaged beliefs, variant minus reference."""
    means = data.groupby(["context", "prompt"], observed=True)["belief"].mean().unstack()
    diff = (means[variant] - means[reference]).dropna().to_numpy()
    return float(stats.ttest_1samp(diff, 0.0).pvalue) if len(diff) > 1 else float("nan")


def _many(design: Design, reps: int, options: dict[str, Any], seed0: int) -> np.ndarray:
    return np.asarray([_run_one(design, seed0 + s, options) for s in range(reps)],
                      dtype=np.float64)


def _cell(name: str, design: Design, out: np.ndarray, t0: float) -> dict[str, Any]:
    exact = true_rmse(design)
    ok_ref = ~np.isnan(out[:, 3])
    ok_truth = ~np.isnan(out[:, 6])
    return {
        "design": name, "settings": design.settings(),
        "reps": len(out), "seconds": round(time.time() - t0, 1),
        "overall": rejection_rate(out[:, 0] <= ALPHA),
        "variant": rejection_rate(out[:, 1] <= ALPHA),
        "true_rmse_reference": exact["reference"], "true_rmse_truth": exact["truth"],
        "mean_rmse_reference": float(np.nanmean(out[:, 2])),
        "mean_rmse_truth": float(np.nanmean(out[:, 5])),
        "coverage_reference": rejection_rate((out[ok_ref, 3] <= exact["reference"] + 1e-12)
                                    & (exact["reference"] - 1e-12 <= out[ok_ref, 4])),
        "coverage_truth": rejection_rate((out[ok_truth, 6] <= exact["truth"] + 1e-12)
                                & (exact["truth"] - 1e-12 <= out[ok_truth, 7])),
        "width_reference": float(np.nanmean(out[:, 4] - out[:, 3])),
        "shift_only": rejection_rate(out[:, 8] <= ALPHA),
        "disagreement_only": rejection_rate(out[:, 9] <= ALPHA),
        "paired_t": rejection_rate(out[:, 10] <= ALPHA),
    }


def section(cells: dict[str, Design], reps: int, options: dict[str, Any], only: list[str],
            seed0: int) -> list[dict]:
    rows = []
    for i, (name, design) in enumerate(cells.items()):
        if only and not any(w in name for w in only):
            continue
        t0 = time.time()
        out = _many(design, reps, options, seed0 + 100_000 * i)
        rows.append(_cell(name, design, out, t0))
        r = rows[-1]
        print(f"{name}: size/power {r['overall']['rate']:.3f} (variant "
              f"{r['variant']['rate']:.3f}), coverage ref {r['coverage_reference']['rate']:.3f}"
              f" truth {r['coverage_truth']['rate']:.3f} [{r['seconds']} s]", file=sys.stderr)
    return rows


# ---------------------------------------------------------------- docs tables
def _fmt(r: dict[str, Any] | None) -> str:
    if r is None:  # a run from before the column existed
        return "–"
    return f"{r['rate']:.3f} ({r['wilson_low']:.3f}–{r['wilson_high']:.3f})"


def _tests(r: dict[str, Any]) -> str:
    return " | ".join(_fmt(r.get(key)) for key in ("shift_only", "disagreement_only",
                                                   "paired_t"))


def tables(results: dict[str, Any], source: str = RESULTS.name) -> str:
    env = results["environment"]
    s = results["settings"]
    lines = [f"Generated from `benchmarks/results/{source}` (commit "
             f"`{env['commit'][:10]}`, {env['date']}, belief-coherence "
             f"{env['versions']['belief-coherence']}, numpy {env['versions']['numpy']}; "
             f"{s['reps']} studies per null cell, {s['power_reps']} per alternative, "
             f"n_resamples = {s['n_resamples']}, options {s['options'] or 'defaults'}). "
             "Rates with 95% Wilson intervals.", "",
             "### Size at alpha = 0.05 (nulls: every prompt has the same mean belief in "
             "every context)", "", *markdown_table(
                 ("design", "contexts", "overall p", "last prompt's p", "shift only",
                  "disagreement only", "paired t-test", "RMSE-vs-truth CI coverage",
                  "RMSE-vs-reference CI covers 0"),
                 ([r["design"], r["settings"]["n_contexts"], _fmt(r["overall"]),
                   _fmt(r["variant"]), _tests(r), _fmt(r["coverage_truth"]),
                   _fmt(r["coverage_reference"])] for r in results.get("size", [])))]
    lines += ["", "### Power at alpha = 0.05 and coverage (the last prompt differs)", "",
              *markdown_table(
                  ("design", "true RMSE vs reference", "mean estimate", "power (overall p)",
                   "power (last prompt)", "shift only", "disagreement only", "paired t-test",
                   "CI coverage (reference)", "true RMSE vs truth", "CI coverage (truth)"),
                  ([r["design"], f"{r['true_rmse_reference']:.4f}",
                    f"{r['mean_rmse_reference']:.4f}", _fmt(r["overall"]), _fmt(r["variant"]),
                    _tests(r), _fmt(r["coverage_reference"]), f"{r['true_rmse_truth']:.4f}",
                    _fmt(r["coverage_truth"])] for r in results.get("power", []))), ""]
    return "\n".join(lines)


def write_consistency_tables(results: dict[str, Any], doc: Path = DOC,
                             source: Path = RESULTS) -> None:
    """The tables of ``source`` (the main JSON, or one of the extra runs, whose block
    is tagged with the file's stem) written to ``doc``."""
    tag = "" if source == RESULTS else f" ({source.stem})"
    write_tables(doc, f"validate_consistency.py{tag}", tables(results, source.name))


def main(argv: Iterable[str] | None = None) -> int:
    parser = matrix_parser(__doc__, results=RESULTS, page="docs/validation_consistency.md",
                           n_resamples=499, append=False)
    parser.add_argument("--parts", default="size,power")
    parser.add_argument("--option", action="append", default=[],
                        help="KEY=VALUE passed to every call (repeatable)")
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.tables:
        write_consistency_tables(json.loads(args.out.read_text()))
        for extra in (BEFORE, DISAGREEMENT):
            if extra.exists():
                write_consistency_tables(json.loads(extra.read_text()), source=extra)
        return 0
    one_thread()
    only = only_words(args)
    options: dict[str, Any] = {"n_resamples": args.n_resamples}
    for item in args.option:
        key, value = item.split("=", 1)
        options[key] = value
    results = start_results(args, ALPHA, options={k: v for k, v in options.items()
                                                  if k != "n_resamples"})
    parts = args.parts.split(",")
    if "size" in parts:
        results["size"] = section(NULLS, args.reps, options, only, 1)
    if "power" in parts:
        results["power"] = section(ALTERNATIVES, args.power_reps, options, only, 5_000_000)
    write_json(args.out, results)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
