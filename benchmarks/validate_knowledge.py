"""Validation matrix of :func:`coherence.coherence_by_knowledge`: size on studies whose
resolution dates are exchangeable across questions, power against a shift after each
model's cutoff, compared with the simple competitor.

Studies come from :mod:`benchmarks.knowledge_designs`, a generator written apart from
the package (question difficulty shared by the models, a question-by-model shock,
unequal rows per question, skewed, heaped or 0/1 measures, tied dates, models answering
different subsets, 1 to 4 models with different cutoffs). The competitor is the simplest
valid test of the same hypothesis: per model a Welch t-test of the question means after
the cutoff against before, the smallest p-value Bonferroni-adjusted over the models; its
size is measured on the same nulls. The coverage part measures how often the interval
(overall and per model) holds the true shift of the after questions' measure: 0 on the
nulls, ``effect`` standard deviations of the measure on the shifted designs (the shift
model the interval inverts holds exactly there, whatever the measure); a few of its
cells are run again at 999 permutations on the same studies (``coverage_999``), to check
whether the lowered resolution moves the coverage. A time trend shared by every
question's measure is not a null of this test (it cannot tell knowledge from a trend) and
is not in the matrix.
Every cell runs the defaults a user gets, with ``n_resamples`` lowered (the p-value's
resolution, not its validity). The JSON is rewritten after every cell; the tables of
``docs/forecast_scoring.md`` are generated from it::

    nice -n 10 python -m benchmarks.validate_knowledge --reps 400   # writes the JSON
    nice -n 10 python -m benchmarks.validate_knowledge --append --only coverage
    python -m benchmarks.validate_knowledge --tables                # JSON -> docs tables
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._harness import appended_note
from benchmarks._harness import coverage_cell
from benchmarks._harness import format_coverage
from benchmarks._harness import format_rate
from benchmarks._harness import generated_by
from benchmarks._harness import markdown_table
from benchmarks._harness import matrix_parser
from benchmarks._harness import rejection_cell
from benchmarks._harness import run_matrix
from benchmarks._harness import section_tables
from benchmarks._harness import size_power_plan
from benchmarks._harness import tables_if_asked
from benchmarks.knowledge_designs import Design
from benchmarks.knowledge_designs import even_cutoff
from benchmarks.knowledge_designs import generate
from benchmarks.knowledge_designs import measure_sd
from benchmarks.knowledge_designs import welch_bonferroni

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "validate_knowledge.json"
DOC = ROOT / "docs" / "forecast_scoring.md"
ALPHA = 0.05

REF = Design()
PARTIAL = (1.0, 0.5, 0.4)
NULLS: dict[str, Design] = {
    "2 models, 100 questions, 1-4 rows, lognormal": REF,
    "2 models, 100 questions, 1-4 rows, heaped (5 values)": REF.with_(measure="heaped"),
    "2 models, 100 questions, 1-4 rows, 0/1 flags": REF.with_(measure="flag"),
    "2 models, 100 questions, 6 tied dates, 1 row, heaped": REF.with_(
        dates="tied", repetitions=1, measure="heaped"),
    "3 models answering 100%/50%/40%, 100 questions, 1-4 rows, lognormal": REF.with_(
        n_models=3, answer_share=PARTIAL),
    "4 models, 100 questions, 1-4 rows, 0/1 flags, 6 tied dates": REF.with_(
        n_models=4, measure="flag", dates="tied"),
    "2 models, 30 questions, 1-4 rows, 0/1 flags": REF.with_(n_questions=30, measure="flag"),
    "exact: 2 models, 8 questions (1/2/5 by date class: 168 arrangements)": REF.with_(
        n_questions=8, dates="even", cutoffs=("2023-03-01", "2023-10-01")),
    "exact: 2 models, 6 questions (2/2/2 by date class: 90 arrangements)": REF.with_(
        n_questions=6, dates="even"),
    "3 models, 300 questions, 1-4 rows, lognormal": REF.with_(n_models=3, n_questions=300),
    "3 models (the power designs' null), 100 questions, 1-4 rows, lognormal": REF.with_(n_models=3),
}
POWER: dict[str, Design] = {
    "3 models, 100 questions, shift 0.25 sd": REF.with_(n_models=3, effect=0.25),
    "3 models, 100 questions, shift 0.5 sd": REF.with_(n_models=3, effect=0.5),
    "3 models, 300 questions, shift 0.25 sd": REF.with_(n_models=3, n_questions=300,
                                                        effect=0.25),
    "3 models, 300 questions, shift 0.5 sd": REF.with_(n_models=3, n_questions=300,
                                                       effect=0.5),
}
#: null cells whose 400-study size fell outside [0.03, 0.07], measured again on four
#: times as many fresh studies (other seeds)
RECHECK: tuple[str, ...] = (
    "2 models, 30 questions, 1-4 rows, 0/1 flags",
    "exact: 2 models, 6 questions (2/2/2 by date class: 90 arrangements)",
)
NULL_100 = "3 models (the power designs' null), 100 questions, 1-4 rows, lognormal"
NULL_300 = "3 models, 300 questions, 1-4 rows, lognormal"
#: the null each power design shifts (the competitor's power is shown where its size
#: on that null is in [0.03, 0.07])
POWER_NULL: dict[str, str] = {
    "3 models, 100 questions, shift 0.25 sd": NULL_100,
    "3 models, 100 questions, shift 0.5 sd": NULL_100,
    "3 models, 300 questions, shift 0.25 sd": NULL_300,
    "3 models, 300 questions, shift 0.5 sd": NULL_300,
}


def _before(n_questions: int, n_before: int, n_models: int = 1, **changes: Any) -> Design:
    """Evenly spaced dates, every model's cutoff leaving the first ``n_before`` before it."""
    return REF.with_(n_questions=n_questions, n_models=n_models, dates="even",
                     cutoffs=(even_cutoff(n_questions, n_before),) * n_models, **changes)


#: coverage of the interval: small groups before the cutoff (evenly spaced dates), the
#: size part's dependence (shared difficulty, shocks, unequal rows, heaped and 0/1
#: measures, tied dates, partial answering), small and large studies, and shifts
COVERAGE: dict[str, Design] = {
    "1 model, 30 questions, 2 before the cutoff, 1-4 rows, lognormal": _before(30, 2),
    "1 model, 30 questions, 3 before the cutoff, 1-4 rows, lognormal": _before(30, 3),
    "1 model, 30 questions, 15 before the cutoff, 1-4 rows, lognormal": _before(30, 15),
    "1 model, 100 questions, 10 before the cutoff, 1-4 rows, lognormal": _before(100, 10),
    "2 models, 60 questions, 10 before both cutoffs, 1-4 rows, 0/1 flags": _before(
        60, 10, 2, measure="flag"),
    "2 models, 100 questions, 1-4 rows, heaped (5 values)": REF.with_(measure="heaped"),
    "2 models, 100 questions, shocks sd 1, 1-9 rows, lognormal": REF.with_(
        shock_sd=1.0, repetitions=(1, 9)),
    "4 models, 100 questions, 1-4 rows, 0/1 flags, 6 tied dates": REF.with_(
        n_models=4, measure="flag", dates="tied"),
    "3 models answering 100%/50%/40%, 100 questions, 1-4 rows, lognormal": REF.with_(
        n_models=3, answer_share=PARTIAL),
    "2 models, 30 questions, 1-4 rows, 0/1 flags": REF.with_(n_questions=30, measure="flag"),
    "3 models, 300 questions, 1-4 rows, lognormal": REF.with_(n_models=3, n_questions=300),
    "shift 0.5 sd: 3 models, 100 questions, 1-4 rows, lognormal": REF.with_(
        n_models=3, effect=0.5),
    "shift 0.5 sd: 1 model, 30 questions, 3 before the cutoff, lognormal": _before(
        30, 3, effect=0.5),
    "shift 0.25 sd: 2 models, 60 questions, 10 before, 0/1 flags": _before(
        60, 10, 2, measure="flag", effect=0.25),
    "shift 0.25 sd: 2 models, 100 questions, heaped, shocks sd 1": REF.with_(
        measure="heaped", shock_sd=1.0, effect=0.25),
}
#: coverage cells run again at 999 permutations on the same studies
RESOLUTION: tuple[str, ...] = (
    "1 model, 30 questions, 3 before the cutoff, 1-4 rows, lognormal",
    "2 models, 60 questions, 10 before both cutoffs, 1-4 rows, 0/1 flags",
    "shift 0.5 sd: 1 model, 30 questions, 3 before the cutoff, lognormal",
)
FINE_RESAMPLES = 999
#: coverage cells below 0.93 at 400 studies, measured again on four times as many fresh
#: studies (other seeds)
COVERAGE_RECHECK: tuple[str, ...] = (
    "2 models, 100 questions, shocks sd 1, 1-9 rows, lognormal",
)


def _run_one(design: Design, seed: int, n_resamples: int) -> tuple[float, float, float]:
    import coherence

    data = generate(design, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = coherence.coherence_by_knowledge(data, cutoff="cutoff", n_resamples=n_resamples,
                                               rng=seed)
    exact = 1.0 if res.method == "exact permutation" else 0.0
    return res.pvalue, welch_bonferroni(data), exact


def _cell(name: str, design: Design, reps: int, n_resamples: int,
          seed0: int) -> dict[str, Any]:
    row, out = rejection_cell(
        name, design.settings(), range(seed0, seed0 + reps),
        lambda seed: _run_one(design, seed, n_resamples),
        ("knowledge", "welch_bonferroni"), ALPHA)
    row["share_exact"] = float(np.mean(out[:, 2]))
    if design.effect:
        row["shift"] = design.effect * measure_sd(design)
    return row


def _interval_one(design: Design, seed: int, n_resamples: int) -> list[float]:
    """One study's intervals: overall, then per model (``m0``, ``m1``, ...; NaN where a
    model is not testable), then 1 where the p-value was exact."""
    import coherence

    data = generate(design, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = coherence.coherence_by_knowledge(data, cutoff="cutoff", n_resamples=n_resamples,
                                               rng=seed)
    ends = [res.confidence_interval.low, res.confidence_interval.high]
    table = res.table.set_index("model")
    for j in range(design.n_models):
        ends += ([table.loc[f"m{j}", "ci_low"], table.loc[f"m{j}", "ci_high"]]
                 if f"m{j}" in table.index else [np.nan, np.nan])
    return [*ends, 1.0 if res.method == "exact permutation" else 0.0]


def _coverage_cell(name: str, design: Design, reps: int, n_resamples: int,
                   seed0: int) -> dict[str, Any]:
    shift = design.effect * measure_sd(design)
    truths = {"overall": shift, **{f"m{j}": shift for j in range(design.n_models)}}
    row, out = coverage_cell(name, design.settings(), range(seed0, seed0 + reps),
                             lambda seed: _interval_one(design, seed, n_resamples), truths)
    row["n_resamples"] = n_resamples
    row["share_exact"] = float(np.mean(out[:, -1]))
    return row


def _coverage_row(r: dict[str, Any]) -> list[Any]:
    cov = r["coverage"]
    overall = cov["overall"]
    models = [k for k in cov if k != "overall"]
    low = min(models, key=lambda k: cov[k]["coverage"]["rate"])
    untestable = sum(cov[k]["n_nan"] for k in models)
    lowest = (f"{low}: {format_rate(cov[low]['coverage'])}" if len(models) > 1 else "-")
    lowest += f" ({untestable} untestable)" if untestable else ""
    return [r["design"], r["reps"], f"{overall['truth']:.4f}", format_coverage(overall),
            lowest, f"{overall['median_width']:.4f}", f"{overall['share_unbounded']:.3f}"]


def coverage_tables(results: dict[str, Any]) -> list[str]:
    """The coverage part's tables (nothing when the JSON has none)."""
    if not results.get("coverage"):
        return []
    lines = ["### Coverage of the interval", "",
             "Share of studies whose 95% interval holds the true shift of the after "
             "questions' measure (0 on the nulls; the shift in the measure's units "
             "otherwise), with 95% Wilson intervals in brackets and the shares of misses "
             "with the interval wholly above or below it; the lowest of the per-model "
             "intervals (`table`'s `ci_low`, `ci_high`; a model without a question on one "
             "side is untestable and left out), the median width of the overall interval "
             "and the share of studies where it is unbounded. "
             f"{results['settings']['n_resamples']} permutations per study (every "
             "arrangement when there are at most that many).", ""]
    header = ("design", "reps", "true shift", "coverage (overall)", "lowest model",
              "median width", "unbounded")
    lines += [*markdown_table(header, map(_coverage_row, results["coverage"])), ""]
    lines += section_tables(
        results, (("coverage_recheck", "Coverage again on the cells below 0.93, four times "
                                       "as many fresh studies"),
                  ("coverage_999", f"Coverage at {FINE_RESAMPLES} permutations (the same "
                                   "studies as above)")), header, _coverage_row)
    return lines


def _size_valid(r: dict[str, Any]) -> bool:
    """Whether a size cell's rate lies in the house's [0.03, 0.07]."""
    return bool(0.03 <= r["rate"] <= 0.07)


def _row(r: dict[str, Any]) -> list[Any]:
    path = "exact" if r["share_exact"] == 1.0 else (
        "Monte Carlo" if r["share_exact"] == 0.0 else f"exact in {r['share_exact']:.0%}")
    nan = r["welch_bonferroni_n_nan"]
    welch = format_rate(r["welch_bonferroni"]) + (f" ({nan} untestable)" if nan else "")
    return [r["design"], r["reps"], path, format_rate(r["knowledge"]), welch]


def _power_row(sizes: dict[str, dict[str, Any]]) -> Any:
    def row(r: dict[str, Any]) -> list[Any]:
        welch = format_rate(r["welch_bonferroni"])
        null = sizes.get(POWER_NULL[r["design"]])
        if null is None:
            welch += " (size not measured)"
        elif not _size_valid(null["welch_bonferroni"]):
            welch = (f"not valid: size {null['welch_bonferroni']['rate']:.3f} on the "
                     f"null (power {welch})")
        return [f"{r['design']} (+{r['shift']:.4f})", r["reps"], format_rate(r["knowledge"]),
                welch]
    return row


def tables(results: dict[str, Any]) -> str:
    lines = [generated_by("validate_knowledge", results["environment"])
             + f"); {results['settings']['n_resamples']} permutations per test (every "
             "arrangement when there are at most that many), alpha = 0.05, rejection rates "
             "with 95% Wilson intervals in brackets. The competitor is per model a Welch "
             "t-test of the question means after the cutoff against before, the smallest "
             "p-value Bonferroni-adjusted over the models; studies where it tests no model "
             "are counted apart as untestable. On the exact path the size is at most alpha "
             "by construction: floor(0.05 N) / N of the N equally likely arrangements "
             "(4/90 = 0.044 and 8/168 = 0.048 here)." + appended_note(results), ""]
    lines += section_tables(
        results, (("size", "Size (resolution dates exchangeable across questions)"),
                  ("size_recheck", "Size again on the cells outside [0.03, 0.07], "
                                   "four times as many fresh studies")),
        ("design", "reps", "p-value", "coherence_by_knowledge", "Welch + Bonferroni"), _row)
    sizes = {r["design"]: r for r in results.get("size", [])}
    ours_bad = [n for n, r in sizes.items() if not _size_valid(r["knowledge"])]
    welch_bad = [n for n, r in sizes.items() if not _size_valid(r["welch_bonferroni"])]
    lines += section_tables(
        results, (("power", "Power: each model's measure shifted after its cutoff "
                            "(shift in standard deviations of the row measure; the "
                            "absolute shift in parentheses; lognormal measure, 1-4 rows)"),),
        ("design", "reps", "coherence_by_knowledge", "Welch + Bonferroni"), _power_row(sizes))
    again = {r["design"]: r for r in results.get("size_recheck", [])}
    if ours_bad:
        lines += ["**coherence_by_knowledge's size fell outside [0.03, 0.07] at 400 studies "
                  "on:** " + "; ".join(
                      f"{n} ({sizes[n]['knowledge']['rate']:.3f}"
                      + (f"; {again[n]['knowledge']['rate']:.3f} over "
                         f"{again[n]['reps']} fresh studies" if n in again else "") + ")"
                      for n in ours_bad) + ".", ""]
    if welch_bad:
        lines += ["The competitor's size fell outside [0.03, 0.07] on: "
                  + "; ".join(welch_bad) + " (its power is shown only where its size on "
                  "the power design's own null is in that range).", ""]
    lines += coverage_tables(results)
    return "\n".join(lines).rstrip("\n")


def main(argv: Iterable[str] | None = None) -> int:
    parser = matrix_parser(__doc__, results=RESULTS, page="docs/forecast_scoring.md",
                           n_resamples=199)
    args = parser.parse_args(list(argv) if argv is not None else None)
    if tables_if_asked(args, DOC, "validate_knowledge.py", tables):
        return 0
    plan = size_power_plan(args, NULLS, POWER)
    plan += [("size_recheck", n, NULLS[n], 4 * args.reps, args.n_resamples,
              9_000_000 + 100_000 * i) for i, n in enumerate(RECHECK)]
    plan += [("coverage", n, d, args.reps, args.n_resamples, 20_000_000 + 100_000 * i)
             for i, (n, d) in enumerate(COVERAGE.items())]
    plan += [("coverage_999", n, COVERAGE[n], args.reps, FINE_RESAMPLES,
              20_000_000 + 100_000 * list(COVERAGE).index(n)) for n in RESOLUTION]
    plan += [("coverage_recheck", n, COVERAGE[n], 4 * args.reps, args.n_resamples,
              29_000_000 + 100_000 * i) for i, n in enumerate(COVERAGE_RECHECK)]
    cells = {"size": _cell, "power": _cell, "size_recheck": _cell,
             "coverage": _coverage_cell, "coverage_999": _coverage_cell,
             "coverage_recheck": _coverage_cell}
    order = list({**NULLS, **POWER})
    run_matrix(args, ALPHA, plan, cells, {"size": order, "power": order, "size_recheck": order,
                                          "coverage": list(COVERAGE),
                                          "coverage_999": list(COVERAGE),
                                          "coverage_recheck": list(COVERAGE)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
