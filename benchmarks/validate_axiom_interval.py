"""Coverage of the intervals of the mean violations of the row-wise probability checks.

:func:`coherence.negation_check` (mean arbitrage violation),
:func:`coherence.conditional_tuple_check` (mean absolute violation) and
:func:`coherence.bayes_check` (mean error) report the bootstrap-t interval over rows of
:func:`coherence.consistency_check` (Student's small-sample factor on its pivot, cut at
0). They gave the Student t interval before, which is too short for a mean of violations
skewed to the right. This matrix measures how often each interval holds the
population's mean violation, on rows from :mod:`benchmarks.checker_noise_designs`
(coherent truths, one stated forecast per question: noise normal, Student t3 or heaped
on a grid, and a share of rows moved off coherence, drawn per row), at 20 to 300 rows.
The population's means come from one sample of 20,000 rows of each design. Beside the
shipped interval it records, on the same violations, the Student t interval the checks
gave before (``scipy.stats.ttest_1samp``). The JSON is rewritten after every cell; the
table of ``docs/axioms.md`` is generated from it::

    python -m benchmarks.validate_axiom_interval --reps 400   # writes the JSON
    python -m benchmarks.validate_axiom_interval --tables     # JSON -> docs
"""

from __future__ import annotations

import functools
import sys
import time
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._harness import appended_note
from benchmarks._harness import format_rate
from benchmarks._harness import generated_by
from benchmarks._harness import markdown_table
from benchmarks._harness import rejection_rate
from benchmarks._harness import sized_matrix_main
from benchmarks.checker_noise_designs import Design
from benchmarks.validate_consistency_interval import SIZES
from benchmarks.validate_consistency_interval import TRUTH_SEED
from benchmarks.validate_consistency_interval import TRUTH_TUPLES
from benchmarks.validate_consistency_interval import wide_tuples

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "validate_axiom_interval.json"
DOC = ROOT / "docs" / "axioms.md"

#: per design checker: the check, its columns in the designs' roles, and the violation
#: whose mean is its statistic
CHECKS: dict[str, tuple[str, tuple[str, ...], str]] = {
    "negation": ("negation_check", ("P", "not_P"), "arbitrage"),
    "cond": ("conditional_tuple_check", ("P", "Q_given_P", "P_and_Q"), "absolute"),
    "bayes": ("bayes_check", ("P", "Q", "P_given_Q", "P_given_not_Q", "Q_given_P",
                              "Q_given_not_P"), "error"),
}
ONE = Design(repetitions=(1, 1))
OFF = {"share_incoherent": 0.1, "delta": 0.3, "incoherent_drawn": True}
DESIGNS: dict[str, Design] = {
    "negation_check, normal noise sd 0.03-0.10": ONE,
    "negation_check, heaped on 0.05 (LLM-like)": ONE.with_(grid=0.05),
    "negation_check, 10% of rows off by 0.3": ONE.with_(**OFF),
    "conditional_tuple_check, normal noise": ONE.with_(checker="cond"),
    "conditional_tuple_check, Student t3 noise": ONE.with_(checker="cond", noise="t3"),
    "conditional_tuple_check, small noise, 10% off": ONE.with_(checker="cond",
                                                               sd=(0.005, 0.02), **OFF),
    "bayes_check, normal noise": ONE.with_(checker="bayes"),
    "bayes_check, heaped on 0.05 (LLM-like)": ONE.with_(checker="bayes", grid=0.05),
    "bayes_check, small noise, 10% off": ONE.with_(checker="bayes", sd=(0.005, 0.02), **OFF),
}


def violations(design: Design, seed: int, **options: Any) -> tuple[np.ndarray, Any]:
    """One study's per-row violations (the statistic's) and the check's result."""
    import coherence

    name, roles, attribute = CHECKS[design.checker]
    wide = wide_tuples(design, seed)
    res = getattr(coherence, name)(*(wide[r].to_numpy() for r in roles), **options)
    return np.asarray(getattr(res, attribute), dtype=float), res


@functools.cache
def population_mean(design: Design) -> float:
    """The mean violation of :data:`TRUTH_TUPLES` rows (computed once per design)."""
    values, _ = violations(design.with_(n_tuples=TRUTH_TUPLES), TRUTH_SEED, n_resamples=1,
                           rng=0)
    return float(values.mean())


def t_before(values: np.ndarray) -> tuple[float, float]:
    """The interval the checks gave before: Student's t interval of the mean."""
    from scipy.stats import ttest_1samp

    ci = ttest_1samp(values, 0.0).confidence_interval(0.95)
    return float(ci.low), float(ci.high)


def run_cell(name: str, n_rows: int, reps: int, n_resamples: int) -> dict[str, Any]:
    t0 = time.perf_counter()
    design = DESIGNS[name].with_(n_tuples=n_rows)
    truth = population_mean(DESIGNS[name])
    covers = np.zeros((reps, 2), dtype=bool)  # shipped, before
    widths = np.zeros((reps, 2))
    below_zero = 0
    for r in range(reps):
        values, res = violations(design, r, n_resamples=n_resamples, rng=r)
        ends = [(res.confidence_interval.low, res.confidence_interval.high), t_before(values)]
        below_zero += ends[1][0] < 0
        for j, (low, high) in enumerate(ends):
            covers[r, j] = low <= truth <= high
            widths[r, j] = high - low
    row = {"design": name, "n_rows": n_rows, "reps": reps, "settings": design.settings(),
           "check": CHECKS[design.checker][0], "violation": CHECKS[design.checker][2],
           "population_mean": truth, "shipped": rejection_rate(covers[:, 0]),
           "t_before": rejection_rate(covers[:, 1]),
           "median_width": [float(w) for w in np.median(widths, axis=0)],
           "share_t_below_zero": below_zero / reps,
           "seconds": round(time.perf_counter() - t0, 1)}
    print(f"{name:50s} {n_rows:4d}  {covers[:, 0].mean():.3f} / {covers[:, 1].mean():.3f}  "
          f"({row['seconds']:.0f} s)", flush=True)
    return row


def tables(results: dict[str, Any]) -> str:
    env = results["environment"]
    lines = [generated_by("validate_axiom_interval", env)
             + f"; {results['settings']['n_resamples']} resamples). Coverage of the "
             "population's mean violation by the 95% interval, with 95% Wilson intervals "
             "in brackets: *bootstrap-t*, the interval the check reports, with its median "
             "width over the studies relative to the t interval's; *t interval*, the "
             "Student t interval it gave before, on the same violations, and the share of "
             "studies where its lower end was below 0." + appended_note(results), ""]
    header = ("design", "rows", "studies", "mean violation", "bootstrap-t (width x)",
              "t interval", "t below 0")

    def ratio(row: dict[str, Any]) -> str:
        w = row["median_width"]
        return f"{w[0] / w[1]:.2f}" if w[1] > 0 else "-"

    rows = [(r["design"], r["n_rows"], r["reps"], f"{r['population_mean']:.4f}",
             f"{format_rate(r['shipped'])} ({ratio(r)})", format_rate(r["t_before"]),
             f"{r['share_t_below_zero']:.2f}") for r in results["cells"]]
    return "\n".join([*lines, *markdown_table(header, rows)])


def main(argv: Iterable[str] | None = None) -> int:
    return sized_matrix_main(argv, __doc__, results=RESULTS, page=DOC, reps=400, tables=tables,
                             designs=list(DESIGNS), sizes=SIZES, size_key="n_rows",
                             cell=run_cell, settings={"truth_rows": TRUTH_TUPLES})


if __name__ == "__main__":
    sys.exit(main())
