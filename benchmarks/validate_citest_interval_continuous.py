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

``--diagnose NAME`` runs one ``--known`` design recording the bias each study's interval
subtracted and the ratio by which it widened the spread: the spread of the estimate
against that of the interval's centre (one row per design and commit).

``--only PREFIX,...`` runs the designs whose name starts with a prefix; ``--merge`` keeps
the stored designs of ``--out`` (``--new``: and runs only the others); ``--budget S``
starts no design after S seconds (for a lease of limited time). Results are JSON
(versions, commit, machine), one design at a time; the table of
``docs/validation_ci.md`` is generated from it.
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
from benchmarks._harness import only_words
from benchmarks._harness import rejection_rate
from benchmarks._harness import store_cell
from benchmarks._harness import write_json
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
    # added after the first run (at the end: a cell's seeds follow its place)
    cells["continuous beliefs that miss the evidence, 200 x 5, CMI 0.176"] = (miss, 0.176)
    cells["held out: 150 x 6, beliefs that half see the evidence, context shocks, "
          "CMI 0.176"] = (shocks, 0.176)
    return cells


#: the CMI levels of the --known part (nats): validate_citest's discrete levels
KNOWN_TARGETS = (0.024, 0.09)


def _known_studies(name: str, reps: int) -> tuple[Any, float, list[tuple[Any, int]]]:
    """A --known cell's design at the leak that gives its CMI, that exact CMI, and the
    jobs of its first ``reps`` studies (cell i's seeds from 20,000,000 + 100,000 i)."""
    from benchmarks import validate_citest_continuous as cc

    cells = _known_designs()
    base, target = cells[name]
    design = base.with_(leak=cc.leak_for(base, target))
    seed0 = 20_000_000 + 100_000 * list(cells).index(name)
    return design, cc.exact_cmi(design), [(design, seed0 + s) for s in range(reps)]


def run_known(name: str, reps: int, pool: Any) -> dict[str, Any]:
    """Power and coverage of the exact CMI on ``reps`` studies of a --known design."""
    design, exact, work = _known_studies(name, reps)
    start = time.perf_counter()
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


def _one_diagnosed(args: tuple[Any, int]) -> list[float]:
    """:func:`_one`, the bias the debiased interval subtracted and the ratio by which it
    widened the estimate's spread (its bias model's values, recorded on the way)."""
    import coherence._decision._citest as citest_module

    seen: list[tuple[float, float]] = []
    model_bias = citest_module.model_bias

    def record(*a: Any) -> tuple[float, float]:
        seen.append(model_bias(*a))
        return seen[-1]

    citest_module.model_bias = record  # type: ignore[assignment]
    try:
        out = _one(args)
    finally:
        citest_module.model_bias = model_bias
    return [*out, *(seen[-1] if seen else (float("nan"), float("nan")))]


def diagnose(name: str, reps: int, pool: Any) -> dict[str, Any]:
    """Why a --known cell misses: the spread of the estimate and of the interval's
    centre (the estimate minus the bias it subtracted) over the cell's first ``reps``
    studies, against the interval's mean half-width."""
    _, exact, work = _known_studies(name, reps)
    out = map_jobs(_one_diagnosed, work, pool)
    centre = out[:, 3] - out[:, 4]
    upper_arm = out[:, 2] - centre
    return {"design": name, "reps": reps, "exact_cmi": exact,
            "sd_estimate": float(np.std(out[:, 3], ddof=1)),
            "sd_centre": float(np.std(centre, ddof=1)),
            "mean_centre": float(np.mean(centre)), "mean_bias": float(np.mean(out[:, 4])),
            "mean_half_width": float(np.mean(out[:, 2] - out[:, 1]) / 2),
            "mean_upper_arm": float(np.mean(upper_arm)),
            "mean_lower_arm": float(np.mean(centre - out[:, 1])),
            "below": rejection_rate(out[:, 2] < exact),
            "centre_below_by_upper_arm": rejection_rate(centre < exact - np.mean(upper_arm)),
            "mean_spread_ratio": float(np.nanmean(out[:, 5]))}


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
    runs = results.get("runs", [])
    if len(runs) > 1:
        commits = sorted({run["commit"][:10] for run in runs})
        lines[0] += (" The designs ran in several runs (commits "
                     + ", ".join(f"`{c}`" for c in commits) + ": the *commit* column); "
                     "*CPUs* says on which machine (16: the lent 16-core machine, numpy "
                     + ", ".join(sorted({run["versions"]["numpy"] for run in runs}))
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
        known_rows = [(r["design"], f"{r['exact_cmi']:.3f}", f"{r['settings']['leak']:.2f}",
                 r["reps"], format_rate(r["power"]), format_rate(r["coverage"]),
                 format_rate(r["below"]), f"{r['mean_estimate']:.4f}",
                 f"{r['mean_width']:.4f}", r["n_nan_interval"], r.get("cpus", ""),
                 f"`{r['commit'][:10]}`") for r in known]
        lines += markdown_table(("design", "exact CMI (nats)", "leak", "studies",
                                 "power at 0.05", "coverage of the CMI", "below",
                                 "mean estimate", "mean width", "NaN intervals", "CPUs",
                                 "commit"), known_rows)
    diagnosis = results.get("diagnosis", [])
    if diagnosis:
        lines += ["", "*Diagnosis* (`--diagnose`): over a cell's studies, the spread of the "
                  "estimate and of the interval's centre (the estimate minus the bias it "
                  "subtracts), the arms of the interval around the centre, and how often "
                  "the centre lies more than the mean upper arm below the CMI; *spread "
                  "ratio*: the mean factor by which the interval widened the estimate's "
                  "spread (half-sample refits of the bias model; rows before it: blank).",
                  ""]
        diag_rows = [(r["design"], r["reps"], f"{r['sd_estimate']:.4f}",
                      f"{r['sd_centre']:.4f}", f"{r['mean_centre']:.4f}",
                      f"{r['mean_upper_arm']:.4f}", f"{r['mean_lower_arm']:.4f}",
                      format_rate(r["centre_below_by_upper_arm"]), format_rate(r["below"]),
                      f"{r['mean_spread_ratio']:.3f}" if "mean_spread_ratio" in r else "",
                      f"`{r['commit'][:10]}`") for r in diagnosis]
        lines += markdown_table(("design", "studies", "sd of estimate", "sd of centre",
                                 "mean centre", "upper arm", "lower arm",
                                 "centre an upper arm below", "interval below",
                                 "spread ratio", "commit"),
                                diag_rows)
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    from benchmarks import validate_citest_continuous as cc

    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=400)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--only", action="append", default=[],
                        help="comma-separated prefixes of designs (a comma followed by a "
                        "space stays in its word); may be repeated")
    parser.add_argument("--merge", action="store_true")
    parser.add_argument("--new", action="store_true",
                        help="with --merge: run only the designs the file does not hold")
    parser.add_argument("--budget", type=float, default=float("inf"),
                        help="start no design after this many seconds")
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--tables", action="store_true")
    parser.add_argument("--known", action="store_true",
                        help="run the designs at a known non-zero CMI instead of the nulls")
    parser.add_argument("--diagnose", default="",
                        help="a --known design: the spread of its estimate and centre")
    args = parser.parse_args(argv)
    if args.tables:
        write_tables(DOC, "validate_citest_interval_continuous.py",
                     table(json.loads(args.out.read_text())))
        return 0
    env = environment()  # this run's (with --merge the file keeps the first run's)
    results: dict[str, Any] = {"environment": env,
                               "settings": {"n_resamples": 1000, "ci_method": "debiased",
                                            "alpha": ALPHA}, "designs": []}
    if args.merge and args.out.exists():  # the stored designs stay, with their run
        stored = json.loads(args.out.read_text())
        results.update({part: stored[part] for part in ("designs", "known", "diagnosis")
                        if part in stored})
        results["runs"] = [*stored.get("runs", [stored["environment"]]), results["environment"]]
        results["environment"] = stored["environment"]
    only = only_words(args)
    start = time.perf_counter()
    pool = ProcessPoolExecutor(args.jobs, initializer=one_thread) if args.jobs > 1 else None
    if args.diagnose:
        row = diagnose(args.diagnose, args.reps, pool)
        row["commit"] = env["commit"]
        # one row per design and commit: a diagnosis before a change stays beside the after
        results["diagnosis"] = [r for r in results.get("diagnosis", [])
                                if (r["design"], r["commit"]) != (row["design"],
                                                                  row["commit"])] + [row]
        write_json(args.out, results)
        print(json.dumps(row, indent=1), flush=True)
        if pool:
            pool.shutdown()
        return 0
    names, part = (list(_known_designs()), "known") if args.known else (list(cc.NULLS),
                                                                         "designs")
    stored_names = {r["design"] for r in results.get(part, [])} if args.new else set()
    for name in names:
        if (only and not any(name.startswith(w) for w in only)) or name in stored_names:
            continue
        if time.perf_counter() - start > args.budget:
            print(f"budget spent: {name} not run", flush=True)
            continue
        row = (run_known if args.known else run_design)(name, args.reps, pool)
        row["commit"] = env["commit"]
        row["cpus"] = env["machine"]["cpus"]
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
