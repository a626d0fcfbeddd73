"""Coverage of :func:`coherence.consistency_check`'s intervals of the mean violations.

``consistency_check`` reports the mean arbitrage and the mean frequentist violation over
tuples, each with a bootstrap-t interval over tuples (Student's small-sample factor on
its pivot). Violations are non-negative, often exactly 0 (inequality checkers inside
their bound) and skewed to the right, the case where the percentile interval of a mean,
which the function gave before, is too short.
This matrix measures how often each interval holds the population's mean violation,
on tuples from :mod:`benchmarks.checker_noise_designs` (coherent truths, one stated
forecast per question: noise normal, Student t3 or heaped on a grid, and a share of
tuples moved off coherence, drawn per tuple), at 20 to 300 tuples. The population's
means come from one sample of 20,000 tuples of each design. Beside the shipped interval it records,
on the same violations, the percentile bootstrap interval over tuples that
``consistency_check`` gave before (its code is kept here). The JSON is rewritten after
every cell; the table of ``docs/consistency_checks.md`` is generated from it::

    python -m benchmarks.validate_consistency_interval --reps 200   # writes the JSON
    python -m benchmarks.validate_consistency_interval --tables     # JSON -> docs
"""

from __future__ import annotations

import functools
import sys
import time
import warnings
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
from benchmarks.checker_noise_designs import WORLDS
from benchmarks.checker_noise_designs import Design
from benchmarks.checker_noise_designs import generate

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "validate_consistency_interval.json"
DOC = ROOT / "docs" / "consistency_checks.md"
#: tuples of the sample whose mean violations stand for the population's
TRUTH_TUPLES = 20_000
TRUTH_SEED = 10**6
SIZES = (20, 50, 100, 300)

ONE = Design(repetitions=(1, 1))
DESIGNS: dict[str, Design] = {
    "negation, normal noise sd 0.03-0.10": ONE,
    # each tuple off with chance 0.1, as in the population whose mean is the target (a
    # study with exactly 10% off is a stratified sample: the interval over tuples over-covers)
    "negation, 10% of tuples off by 0.3": ONE.with_(share_incoherent=0.1, delta=0.3,
                                                   incoherent_drawn=True),
    "and, Student t3 noise sd 0.03-0.10": ONE.with_(checker="and", noise="t3"),
    "cond, heaped on 0.05 (LLM-like)": ONE.with_(checker="cond", grid=0.05),
    "expected_evidence, normal noise sd 0.05-0.20": ONE.with_(checker="expected_evidence",
                                                              sd=(0.05, 0.20)),
}


def wide_tuples(design: Design, seed: int) -> Any:
    """One study as ``consistency_check`` reads it: a row per tuple, a column per role."""
    roles = list(WORLDS[design.checker][0])
    data = generate(design, seed)
    return data.pivot_table(index="set", columns="role", values="probability",
                            aggfunc="first")[roles]


@functools.cache
def population_means(design: Design) -> tuple[float, float]:
    """The mean arbitrage and frequentist violation of :data:`TRUTH_TUPLES` tuples (the same
    for every size of a design: computed once)."""
    import coherence

    design = design.with_(n_tuples=TRUTH_TUPLES)
    wide = wide_tuples(design, TRUTH_SEED)
    return (float(np.mean(coherence.arbitrage_violation(design.checker, wide))),
            float(np.mean(coherence.frequentist_violation(design.checker, wide))))


def percentile_before(values: np.ndarray, n_resamples: int,
                      gen: np.random.Generator) -> tuple[float, float]:
    """The interval ``consistency_check`` gave before: the percentile interval of the
    means of tuples resampled with replacement (multinomial counts on sorted values)."""
    from coherence._resampling import percentile_interval

    n = values.size
    counts = gen.multinomial(n, np.full(n, 1.0 / n), size=n_resamples)
    return percentile_interval(counts @ np.sort(values) / n, 0.95)


def run_cell(name: str, n_tuples: int, reps: int, n_resamples: int) -> dict[str, Any]:
    import coherence

    t0 = time.perf_counter()
    design = DESIGNS[name].with_(n_tuples=n_tuples)
    truth = population_means(DESIGNS[name])
    covers = np.zeros((reps, 4), dtype=bool)  # arbitrage shipped, before; frequentist
    widths = np.zeros((reps, 4))
    for r in range(reps):
        wide = wide_tuples(design, r)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = coherence.consistency_check(wide, design.checker, n_resamples=n_resamples,
                                              rng=r)
        gen = np.random.default_rng(r)
        ends = [(res.confidence_interval.low, res.confidence_interval.high),
                percentile_before(np.asarray(res.arbitrage, float), n_resamples, gen),
                (res.frequentist_interval.low, res.frequentist_interval.high),
                percentile_before(np.asarray(res.frequentist, float), n_resamples, gen)]
        for j, (low, high) in enumerate(ends):
            target = truth[j // 2]
            covers[r, j] = low <= target <= high
            widths[r, j] = high - low
    row = {"design": name, "n_tuples": n_tuples, "reps": reps, "settings": design.settings(),
           "mean_arbitrage": truth[0], "mean_frequentist": truth[1],
           "arbitrage_shipped": rejection_rate(covers[:, 0]),
           "arbitrage_percentile": rejection_rate(covers[:, 1]),
           "frequentist_shipped": rejection_rate(covers[:, 2]),
           "frequentist_percentile": rejection_rate(covers[:, 3]),
           "median_width": [float(w) for w in np.median(widths, axis=0)],
           "seconds": round(time.perf_counter() - t0, 1)}
    print(f"{name:48s} {n_tuples:4d}  arbitrage {covers[:, 0].mean():.3f} / "
          f"{covers[:, 1].mean():.3f}  frequentist {covers[:, 2].mean():.3f} / "
          f"{covers[:, 3].mean():.3f}  ({row['seconds']:.0f} s)", flush=True)
    return row


def tables(results: dict[str, Any]) -> str:
    env = results["environment"]
    lines = [generated_by("validate_consistency_interval", env)
             + f"; {results['settings']['n_resamples']} resamples). Coverage of the "
             "population's mean violation by the 95% interval, with 95% Wilson intervals "
             "in brackets: *bootstrap-t*, the interval `consistency_check` reports "
             "(`confidence_interval` for the arbitrage, `frequentist_interval`), with its "
             "median width over the studies relative to the percentile interval's; "
             "*percentile*, the percentile bootstrap interval over tuples it gave before, "
             "on the same violations." + appended_note(results), ""]
    header = ("design", "tuples", "studies", "mean arbitrage", "arbitrage: bootstrap-t "
              "(width x)", "arbitrage: percentile", "frequentist: bootstrap-t (width x)",
              "frequentist: percentile")

    def ratio(row: dict[str, Any], j: int) -> str:
        w = row["median_width"]
        return f"{w[j] / w[j + 1]:.2f}" if w[j + 1] > 0 else "-"

    rows = [(r["design"], r["n_tuples"], r["reps"], f"{r['mean_arbitrage']:.4f}",
             f"{format_rate(r['arbitrage_shipped'])} ({ratio(r, 0)})",
             format_rate(r["arbitrage_percentile"]),
             f"{format_rate(r['frequentist_shipped'])} ({ratio(r, 2)})",
             format_rate(r["frequentist_percentile"]))
            for r in results["cells"]]
    return "\n".join([*lines, *markdown_table(header, rows)])


def main(argv: Iterable[str] | None = None) -> int:
    return sized_matrix_main(argv, __doc__, results=RESULTS, page=DOC, reps=200, tables=tables,
                             designs=list(DESIGNS), sizes=SIZES, size_key="n_tuples",
                             cell=run_cell, settings={"truth_tuples": TRUTH_TUPLES})


if __name__ == "__main__":
    sys.exit(main())
