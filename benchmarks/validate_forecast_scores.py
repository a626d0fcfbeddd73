"""Coverage of :func:`coherence.forecast_scores`' intervals, and size, power and
coverage of its paired comparison (``ForecastScoresResult.compare``), on the designs
of :mod:`benchmarks.forecast_designs`.

Each study scores two forecasters on ``n`` shared questions (the defaults, but
``n_resamples``; with the design's clusters of related questions as ``cluster`` where
it has them) and compares them on the Brier score. Recorded per cell: the coverage of
``a``'s Brier, log-score and accuracy intervals and of the pooled Brier interval
(for the population's expected scores), the rejection rate at 0.05 of the comparison's
p-value, of the plain sign-flip comparison (``skew_correction=False``, on the same sign
vectors) and of the simplest valid competitor, a paired t-test on the per-question
differences (on the clusters' summed differences where the design has clusters), and
the coverage of both comparisons' intervals for the expected difference.

Run: ``python -m benchmarks.validate_forecast_scores [--reps 1000] [--only WORDS]
[--jobs 2]`` (a word selects the cells whose ``design n=N`` holds it, ``n=20`` not
``n=200``); JSON to ``benchmarks/results/validate_forecast_scores.json``, the tables to
``docs/forecast_scoring.md`` (``--tables``: from the JSON alone).

``--log-recheck [--reps 4000]``: only the coverage of ``a``'s log-score interval, on every
cell, before (the plain bootstrap-t) and after (Student's factor on its pivot) on the same
studies: the matrix's seeds, the first ``--reps`` studies of each cell (so the first 1,000,
400 for a power cell, are the matrix's own), and the bootstrap draws ``forecast_scores``
makes for ``a``; JSON to ``benchmarks/results/validate_forecast_scores_log.json``.
"""

from __future__ import annotations

import copy
import inspect
import json
import math
import time
import warnings
from collections.abc import Iterable
from collections.abc import Sequence
from typing import Any

import numpy as np

from benchmarks._harness import ROOT
from benchmarks._harness import environment
from benchmarks._harness import format_rate
from benchmarks._harness import generated_by
from benchmarks._harness import markdown_table
from benchmarks._harness import matrix_parser
from benchmarks._harness import rejection_rate
from benchmarks._harness import run_cells
from benchmarks._harness import selects
from benchmarks._harness import write_json
from benchmarks._harness import write_results
from benchmarks._harness import write_tables
from benchmarks.forecast_designs import FORECAST_DESIGNS
from benchmarks.forecast_designs import ForecastDesign
from benchmarks.forecast_designs import expected_scores
from benchmarks.forecast_designs import sample

SCRIPT = "validate_forecast_scores.py"
OUT = ROOT / "benchmarks" / "results" / "validate_forecast_scores.json"
BEFORE = ROOT / "benchmarks" / "results" / "validate_forecast_scores_before.json"
#: the log score's interval before and after on the same studies (``--log-recheck``)
LOG = ROOT / "benchmarks" / "results" / "validate_forecast_scores_log.json"
DOC = ROOT / "docs" / "forecast_scoring.md"
ALPHA = 0.05
#: the level of the intervals whose coverage is measured (forecast_scores' default)
LEVEL = 0.95
SCORES = ("brier", "log_score", "accuracy")
#: forecast_scores' default floor of the probability of what happened before the log
FLOOR = 1e-10
#: the null cells up to this many questions also run forecastbench_scores' comparison
FB_MAX_N = 400
FB_LABELS = ("forecastbench_brier", "forecastbench_index", "coverage_fb_brier",
             "coverage_fb_pooled")
#: the rejection rates also split by the side of the mean difference they claim
SIDED = ("compare", "compare_plain", "t_test")
# (design, questions, part): 'size' cells use --reps studies, 'power' cells --power-reps
PLAN = [(name, n, "power" if name.startswith("power") else "size")
        for name, sizes in [
            ("uniform, noise 0.1 vs 0.1", (20, 50, 200, 1000)),
            ("heaped on 0.05 (0 and 1 stated), noise 0.15 vs 0.15", (50, 300)),
            ("rare outcomes (Beta(0.5, 9.5)), logit noise 0.5 vs 0.5", (100, 500)),
            ("sharp (noise 0.15) vs hedged, equal Brier", (30, 100, 400)),
            ("logit noise 1.0 vs hedged, equal Brier", (20, 50)),
            ("sharp (noise 0.1, topic errors sd 0.1 by 5) vs hedged, equal Brier",
             (100, 300)),
            ("topic errors (sd 0.15) by 10 questions, noise 0.05 vs 0.05", (100, 400)),
            ("outcome shocks shared by 10 questions (logit sd 1)", (100, 400)),
            ("power: sharp (noise 0.15) vs over-hedged (slope - 0.1)", (100,)),
            ("power: sharp (noise 0.15) vs under-hedged (slope + 0.1)", (100,)),
            ("power: noise 0.1 vs 0.2", (50, 200)),
            ("power: heaped, noise 0.1 vs 0.2", (200,)),
            ("power: outcome shocks by 10, noise 0.1 vs 0.2", (400,)),
            ("power: topic errors (sd 0.15) by 10, noise 0.05 vs 0.15", (400,)),
        ] for n in sizes]


def _has_cluster() -> bool:
    from coherence import forecast_scores

    return "cluster" in inspect.signature(forecast_scores).parameters


def _has_skew_correction() -> bool:
    from coherence import ForecastScoresResult

    return "skew_correction" in inspect.signature(ForecastScoresResult.compare).parameters


def study(design: ForecastDesign, n: int, resamples: int, seed: int,
          forecastbench: bool = False) -> list[float]:
    """One study: (comparison p-value, t-test p-value, then 0/1 coverage of a's Brier,
    log score, accuracy, the pooled Brier and the comparison's interval, then the plain
    sign-flip comparison's p-value and coverage (``skew_correction=False``, on the same
    sign vectors; NaN before that option); with ``forecastbench``, then the p-values of
    ``forecastbench_scores(...).compare`` on the Brier score and on the Brier Index, its
    default, and the 0/1 coverage of its interval of a's Brier score and of its pooled
    Brier score (``statistic``), drawn after the rest."""
    from scipy import stats

    from coherence import forecast_scores

    truth = expected_scores(design)
    gen = np.random.default_rng(seed)
    df = sample(design, n, gen)
    clustered = design.cluster_size > 1
    kw: dict[str, Any] = {"cluster": "cluster"} if clustered and _has_cluster() else {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = forecast_scores(df, timestamp=None, n_resamples=resamples, rng=gen, **kw)
        flips = copy.deepcopy(gen)  # the plain comparison draws the same sign vectors
        cmp = res.compare("a", "b", n_resamples=resamples, rng=gen)
        plain = (res.compare("a", "b", n_resamples=resamples, rng=flips,
                             skew_correction=False) if _has_skew_correction() else None)
    row = res.table.set_index("model")
    hits = [float(row.loc["a", f"{s}_ci_low"] <= truth["a"][j] <= row.loc["a", f"{s}_ci_high"])
            for j, s in enumerate(SCORES)]
    pooled = (truth["a"][0] + truth["b"][0]) / 2
    hits.append(float(row.loc["(all)", "brier_ci_low"] <= pooled
                      <= row.loc["(all)", "brier_ci_high"]))
    diff = truth["a"][0] - truth["b"][0]
    lo, hi, _ = cmp.confidence_interval
    hits.append(float(lo <= diff <= hi))
    d = cmp.table["difference"].to_numpy()
    if clustered:  # questions are 0..n-1 in order, clusters of cluster_size
        d = np.bincount(np.arange(n) // design.cluster_size, weights=d)
    t_p = float(stats.ttest_1samp(d, 0.0).pvalue) if np.any(d != d[0]) else 1.0
    out = [float(cmp.pvalue), t_p, *hits]
    if plain is None:
        out += [math.nan, math.nan]
    else:
        plo, phi, _ = plain.confidence_interval
        out += [float(plain.pvalue), float(plo <= diff <= phi)]
    out.append(float(np.sign(cmp.statistic)))  # the side a rejection claims
    if forecastbench:
        from coherence import forecastbench_scores

        with warnings.catch_warnings():  # below 30 questions compare warns: no p-value
            warnings.simplefilter("ignore")
            fb = forecastbench_scores(df[["model", "question", "probability", "outcome"]],
                                      n_resamples=resamples, rng=gen)
            out += [float(fb.compare("a", "b", score=s).pvalue)
                    for s in ("brier", "brier_index")]
        fb_row = fb.table.set_index("model").loc["a"]
        out.append(float(fb_row["brier_ci_low"] <= truth["a"][0] <= fb_row["brier_ci_high"]))
        fb_low, fb_high, _ = fb.confidence_interval
        out.append(float(fb_low <= pooled <= fb_high))
    return out


def cell(name: str, n: int, part: str, reps: int, resamples: int,
         seed0: int, forecastbench: bool = True) -> dict[str, Any]:
    design = FORECAST_DESIGNS[name]
    start = time.perf_counter()
    # the ForecastBench comparison's size, on the nulls up to FB_MAX_N questions
    with_fb = forecastbench and part == "size" and n <= FB_MAX_N
    out = np.array([study(design, n, resamples, seed0 + i, with_fb) for i in range(reps)])
    labels = ("compare", "t_test", *(f"coverage_{s}" for s in SCORES), "coverage_pooled",
              "coverage_difference", "compare_plain", "coverage_difference_plain", "side",
              *(FB_LABELS if with_fb else ()))
    row: dict[str, Any] = {"design": name, "n": n, "part": part, "reps": reps,
                           "truth": expected_scores(design),
                           "seconds": time.perf_counter() - start}
    side = out[:, labels.index("side")]
    for j, label in enumerate(labels):
        col = out[:, j]
        if label == "side" or np.isnan(col).all():  # the plain one, before the option
            continue
        row[label] = rejection_rate(col == 1.0 if label.startswith("coverage")
                                    else col <= ALPHA)
        if label in SIDED:  # rejections that claim a < b, and a > b (mean difference)
            row[f"{label}_below"] = rejection_rate((col <= ALPHA) & (side < 0))
            row[f"{label}_above"] = rejection_rate((col <= ALPHA) & (side > 0))
    print(f"{name} n={n}: " + " ".join(f"{k} {row[k]['rate']:.3f}" for k in labels
                                       if k in row and k != "side"), flush=True)
    return row


def log_study(design: ForecastDesign, n: int, resamples: int, seed: int,
              check: bool = False) -> list[float]:
    """One study of the matrix (the data of :func:`study`'s ``seed``) for ``a``'s log score
    only: ``(low, high)`` of the plain bootstrap-t interval (``mean_interval``, the interval
    before) and of ``heavy_tailed_mean_interval``'s (after), from the same pivots, drawn as
    ``forecast_scores(df, rng=gen)`` draws them for ``a`` (its rng spawns (main, filtered);
    main one stream per model by sorted rank); ``check``: ``forecast_scores`` itself gives
    the interval after."""
    from coherence import forecast_scores
    from coherence._resampling import cluster_mean_pivots
    from coherence._resampling import heavy_tailed_mean_interval
    from coherence._resampling import mean_interval
    from coherence._resampling import sorted_codes
    from coherence._resampling import streams_by_label
    from coherence._scoring._forecast import _log_score

    gen = np.random.default_rng(seed)
    df = sample(design, n, gen)
    state = copy.deepcopy(gen)
    a = df[df["model"] == "a"]
    p, y = a["probability"].to_numpy(), a["outcome"].to_numpy()
    log = _log_score(np.where(y == 1, p, 1.0 - p), "ln", FLOOR)
    units = a["cluster" if design.cluster_size > 1 else "question"].to_numpy(dtype=object)
    codes = sorted_codes(units)
    stream = streams_by_label(gen.spawn(2)[0], ["a", "b"])[0]
    mean, se, reps, reps_se = cluster_mean_pivots(log[:, None], codes, resamples, stream)
    bounds = (math.log(FLOOR), 0.0)
    before = mean_interval(float(mean[0]), float(se[0]), reps[:, 0], reps_se[:, 0], LEVEL,
                           bounds)
    residuals = np.bincount(codes, weights=log) - np.bincount(codes) * mean[0]
    after = heavy_tailed_mean_interval(float(mean[0]), float(se[0]), reps[:, 0], reps_se[:, 0],
                                       residuals, LEVEL, bounds)
    if check:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            row = forecast_scores(df, timestamp=None, n_resamples=resamples, rng=state,
                                  cluster="cluster" if design.cluster_size > 1 else None,
                                  ).table.set_index("model").loc["a"]
        got = (row["log_score_ci_low"], row["log_score_ci_high"])
        if not np.allclose(got, after, rtol=1e-12, atol=0.0):
            raise AssertionError(f"forecast_scores gives {got}, the recheck {after}")
    return [*before, *after]


def log_cell(name: str, n: int, part: str, reps: int, resamples: int,
             seed0: int) -> dict[str, Any]:
    """``a``'s log-score coverage before and after on ``reps`` studies of one cell: rates of
    coverage and of misses below (the expected score below the interval: the sample lacks
    the large losses) and above it, the mean widths, and the coverage on the matrix's own
    studies (its first 1,000; 400 for a power cell)."""
    design = FORECAST_DESIGNS[name]
    truth = expected_scores(design)["a"][1]
    start = time.perf_counter()
    out = np.array([log_study(design, n, resamples, seed0 + i, check=i == 0)
                    for i in range(reps)])
    matrix = min(reps, 1000 if part == "size" else 400)
    row: dict[str, Any] = {"design": name, "n": n, "part": part, "reps": reps,
                           "truth": truth, "matrix_reps": matrix}
    for k, (low, high) in (("before", out[:, :2].T), ("after", out[:, 2:].T)):
        hit = (low <= truth) & (truth <= high)
        row[k] = rejection_rate(hit)
        row[f"{k}_below"] = rejection_rate(truth < low)
        row[f"{k}_above"] = rejection_rate(truth > high)
        row[f"{k}_width"] = float(np.mean(high - low))
        row[f"{k}_matrix"] = rejection_rate(hit[:matrix])
    row["width_ratio"] = row["after_width"] / row["before_width"]
    row["seconds"] = time.perf_counter() - start
    print(f"{name} n={n}: before {row['before']['rate']:.4f} after {row['after']['rate']:.4f} "
          f"width x{row['width_ratio']:.3f} ({row['seconds']:.0f} s)", flush=True)
    return row


def _log_recheck(args: Any) -> int:
    """Every cell's log-score coverage before and after (:func:`log_cell`) into the log
    JSON (next to ``--out``); the tables at the default path."""
    todo = [(name, n, part, args.reps, args.resamples, 9_000_000 + 100_000 * i)
            for i, (name, n, part) in enumerate(PLAN) if selects(args, f"{name} n={n}")]
    results = {"environment": environment(), "resamples": args.resamples,
               "confidence_level": LEVEL, "cells": run_cells(args, log_cell, todo)}
    write_json(args.out.with_name(args.out.stem + "_log.json"), results)
    if args.out == OUT:
        write_tables(DOC, SCRIPT, tables(json.loads(OUT.read_text(encoding="utf-8"))))
    return 0


def _log_section(log: dict[str, Any] | None) -> str:
    """The table of the log JSON (``--log-recheck``), when there is one."""
    if log is None:
        return ""
    env = log["environment"]
    return _section(
        f"*The log score's interval before and after* (`--log-recheck`, commit "
        f"`{env['commit'][:10]}`, {env['date']}, {log['resamples']} resamples), from "
        "`benchmarks/results/validate_forecast_scores_log.json`: the coverage of a's log "
        "score by the plain bootstrap-t interval (before) and with Student's factor on its "
        "pivot (after), on the same studies and bootstrap draws (the first of them the "
        "matrix's: the coverage on those in the last two columns); *below*: the share of "
        "studies whose interval lies above the expected score (the sample lacks the large "
        "losses); *width*: the mean width after over before.",
        ("design", "questions", "studies", "before", "after", "below: before", "after",
         "above: before", "after", "width", "matrix's studies: before", "after"),
        ([c["design"], c["n"], c["reps"], format_rate(c["before"]), format_rate(c["after"]),
          *(f"{c[k]['rate']:.3f}" for k in ("before_below", "after_below", "before_above",
                                             "after_above")),
          f"{c['width_ratio']:.3f}",
          *(f"{c[k]['rate']:.3f} ({c['matrix_reps']})" for k in ("before_matrix",
                                                                 "after_matrix"))]
         for c in log["cells"]))


def _log_coverage(results: dict[str, Any], log: dict[str, Any] | None
                  ) -> dict[tuple[str, int], dict[str, Any]]:
    """The log score's coverage by the interval shipped now on each cell's own studies,
    from the recheck (``--log-recheck``), for the cells where the recheck's run of the
    earlier interval reproduces this matrix's column exactly (the same studies and
    bootstrap draws)."""
    rechecked = {(c["design"], c["n"]): c for c in (log or {}).get("cells", [])}
    out = {}
    for c in results["cells"]:
        r = rechecked.get((c["design"], c["n"]))
        if r and {k: r["before_matrix"][k] for k in ("k", "n")} == {
                k: c["coverage_log_score"][k] for k in ("k", "n")}:
            out[(c["design"], c["n"])] = r["after_matrix"]
    return out


def tables(results: dict[str, Any]) -> str:
    env = results["environment"]
    log_json = json.loads(LOG.read_text(encoding="utf-8")) if LOG.exists() else None
    log = _log_coverage(results, log_json)
    head = (generated_by("validate_forecast_scores", env)
            + f"); {results['resamples']} resamples and sign flips; alpha = 0.05, 95% Wilson "
            "intervals in brackets. *Rejection*: of the comparison's p-value (size on the "
            "nulls, power on the alternatives), of the plain sign-flip comparison "
            "(`skew_correction=False`, the same sign vectors) and of the paired t-test on "
            "the differences (of the clusters' sums where the design has clusters); "
            "*coverage*: of the population's expected score (difference) by the 95% "
            "interval."
            + (f" *Log score (a)*: the interval shipped now (Student's factor on the "
               f"bootstrap-t pivot) on the same studies and bootstrap draws, from the "
               f"recheck below, whose run of the earlier interval reproduces this matrix's "
               f"own in {len(log)} of {len(results['cells'])} cells (the others, if any, "
               f"show the earlier interval)." if log else "") + "\n\n")
    rows = []
    for c in results["cells"]:
        kind = "size" if c["part"] == "size" else "power"
        rows.append([c["design"], c["n"], c["reps"], f"{kind} {format_rate(c['compare'])}",
                     _rate(c, "compare_plain"), format_rate(c["t_test"]),
                     format_rate(c["coverage_difference"]),
                     _rate(c, "coverage_difference_plain"),
                     *(format_rate(log.get((c["design"], c["n"]), c[f"coverage_{s}"])
                                   if s == "log_score" else c[f"coverage_{s}"])
                       for s in SCORES),
                     format_rate(c["coverage_pooled"])])
    text = head + "\n".join(markdown_table(
        ("design", "questions", "studies", "compare", "plain sign flip", "paired t-test",
         "coverage: difference", "(plain)", "Brier (a)", "log score (a)", "accuracy (a)",
         "pooled Brier"), rows))
    sided = [c for c in results["cells"] if "hedged" in c["design"] and "compare_below" in c]
    if sided:
        text += _section(
            "*By side*, on the designs with skewed differences: the rejections that claim "
            "the mean difference a - b is below 0 (a scores lower, so better on the Brier "
            "score) and above 0, of each test. A level-0.05 two-sided test should put at "
            "most 0.025 on each side under the null.",
            ("design", "questions", "compare: below", "above", "plain sign flip: below",
             "above", "paired t-test: below", "above"),
            ([c["design"], c["n"], *(format_rate(c[f"{k}_{side}"]) for k in SIDED
                                     for side in ("below", "above"))] for c in sided))
    if BEFORE.exists():
        before = {(c["design"], c["n"]): c
                  for c in json.loads(BEFORE.read_text(encoding="utf-8"))["cells"]}
        ran = {(r["design"], r["n"]) for r in results["cells"]}
        text += _section(
            "*The previous release* on the same studies (percentile intervals, the "
            "comparison over questions whatever the design, its interval a percentile "
            "bootstrap), from `benchmarks/results/validate_forecast_scores_before.json`:",
            ("design", "questions", "compare", "coverage: difference", "Brier (a)",
             "log score (a)", "accuracy (a)", "pooled Brier"),
            ([c["design"], c["n"], format_rate(c["compare"]),
              *(format_rate(c[k]) for k in ("coverage_difference", "coverage_brier",
                                            "coverage_log_score", "coverage_accuracy",
                                            "coverage_pooled"))]
             for key, c in before.items() if key in ran))
    fb_cells = [c for c in results["cells"] if FB_LABELS[0] in c]
    if fb_cells:
        text += _section(
            f"*ForecastBench's comparison* on the nulls up to {FB_MAX_N} questions: the "
            "rejection rate at 0.05 of `forecastbench_scores(...).compare(\"a\", \"b\", "
            "score=...)`, its centred two-sided bootstrap p-value over questions (fixed "
            "effects re-estimated in each replicate), and the coverage of its percentile "
            "intervals over questions, of a's Brier score and of the pooled Brier score "
            "(`statistic`), on the same studies:",
            ("design", "questions", "studies", "score=\"brier\"",
             "score=\"brier_index\" (default)", "coverage: Brier (a)", "pooled Brier"),
            ([c["design"], c["n"], c["reps"], *(format_rate(c[k]) for k in FB_LABELS)]
             for c in fb_cells))
    if results.get("recheck"):
        text += _section(
            "*Size again* on the cells outside [0.03, 0.07], four times as many fresh "
            f"studies (`--recheck`, commit `{results['recheck_environment']['commit'][:10]}`):",
            ("design", "questions", "studies", "compare", "plain sign flip", "paired t-test"),
            ([c["design"], c["n"], c["reps"], format_rate(c["compare"]),
              _rate(c, "compare_plain"), format_rate(c["t_test"])]
             for c in results["recheck"]))
    return text + _log_section(log_json)


def _section(intro: str, header: Sequence[str], rows: Iterable[Sequence[Any]]) -> str:
    """A paragraph and its table, after a blank line."""
    return f"\n\n{intro}\n\n" + "\n".join(markdown_table(header, rows))


def _rate(c: dict[str, Any], key: str) -> str:
    return format_rate(c[key]) if key in c else ""


def _outside(c: dict[str, Any]) -> bool:
    return c["part"] == "size" and any(not 0.03 <= c[k]["rate"] <= 0.07
                                       for k in ("compare", "compare_plain", "t_test")
                                       if k in c)


def _recheck(args: Any) -> int:
    """The size cells whose comparison or t-test is outside the band, again on 4 x
    ``--reps`` fresh studies (ForecastBench's comparison, slow and descriptive, not
    again)."""
    results = json.loads(args.out.read_text(encoding="utf-8"))
    order = [(name, n) for name, n, _ in PLAN]
    todo = [(c["design"], c["n"], "size", 4 * args.reps, args.resamples,
             50_000_000 + 1_000_000 * order.index((c["design"], c["n"])), False)
            for c in results["cells"] if _outside(c)]

    results["recheck"] = run_cells(args, cell, todo)
    results["recheck_environment"] = environment()
    write_results(args, results, OUT, DOC, SCRIPT, tables)
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = matrix_parser(__doc__, results=OUT, page="docs/forecast_scoring.md",
                           n_resamples=None, reps=1000, power_reps=400,
                           prog="python -m benchmarks.validate_forecast_scores", append=False)
    parser.add_argument("--n-resamples", "--resamples", dest="resamples", type=int,
                        default=999)
    parser.add_argument("--jobs", type=int, default=1)
    parser.add_argument("--recheck", action="store_true",
                        help="run the size cells of the JSON whose comparison or t-test "
                        "rejects outside [0.03, 0.07] again, on four times as many fresh "
                        "studies (without ForecastBench's comparison), into its 'recheck' "
                        "part")
    parser.add_argument("--log-recheck", action="store_true",
                        help="only a's log-score coverage, before and after Student's "
                        "factor, on the first --reps studies of every cell (the "
                        "matrix's seeds and bootstrap draws), into "
                        "validate_forecast_scores_log.json")
    args = parser.parse_args(argv)
    if args.log_recheck:
        return _log_recheck(args)
    if args.recheck:
        return _recheck(args)
    if args.tables:
        write_tables(DOC, SCRIPT, tables(json.loads(args.out.read_text(encoding="utf-8"))))
        return 0
    todo = [(name, n, part, args.reps if part == "size" else args.power_reps,
             args.resamples, 9_000_000 + 100_000 * i)
            for i, (name, n, part) in enumerate(PLAN) if selects(args, f"{name} n={n}")]
    results = {"environment": environment(), "resamples": args.resamples,
               "cluster_option": _has_cluster(), "cells": run_cells(args, cell, todo)}
    write_results(args, results, OUT, DOC, SCRIPT, tables)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
