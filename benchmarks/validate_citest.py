"""Size, power and coverage of :func:`coherence.ci_test` on simulated agents.

Run from the repository root::

    nice -n 10 python -m benchmarks.validate_citest --reps 200

and paste the printed Markdown tables into docs/validation_ci.md. The design
is the reference paper's: 200 contexts x 5 repetitions, beliefs on a 0.05
grid, 3 actions. Every study is simulated from its own seed (0, 1, 2, ...).
"""

from __future__ import annotations

import argparse
import time
import warnings
from collections.abc import Callable

import numpy as np

import coherence
from coherence import Agent, NotCalibratedWarning, SmallSampleWarning

GRID: list[float] = [0.05]  # --coverage-grid
ONLY: list[str] = []  # --only: run the size cases whose label contains one of these


def _binomial_se(rate: float, reps: int) -> float:
    return float(np.sqrt(max(rate * (1 - rate), 1e-12) / reps))


def _study(agent: Agent, seed: int, n_contexts: int) -> coherence.SimulatedStudy:
    return coherence.simulate(agent, n_contexts=n_contexts, n_repetitions=5, rng=seed)


def _rate(agent: Agent, reps: int, n_contexts: int, run: Callable[..., bool],
          n_repetitions: int = 5) -> float:
    hits = 0
    for seed in range(reps):
        study = coherence.simulate(agent, n_contexts=n_contexts, n_repetitions=n_repetitions,
                                   rng=seed)
        hits += bool(run(study, seed))
    return hits / reps


def _perm(**options: object) -> Callable[..., bool]:
    def run(study: coherence.SimulatedStudy, seed: int) -> bool:
        res = coherence.ci_test(study.data, rng=seed, **options)  # type: ignore[arg-type]
        return bool(res.pvalue <= 0.05)
    return run


def _boot_excludes_zero(n_resamples: int) -> Callable[..., bool]:
    def run(study: coherence.SimulatedStudy, seed: int) -> bool:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotCalibratedWarning)
            res = coherence.ci_test(study.data, method="bootstrap", n_resamples=n_resamples,
                                    rng=seed)
        return bool(res.confidence_interval.low > 0.0 or res.confidence_interval.high < 0.0)
    return run


def size_table(reps: int, n_resamples: int, n_contexts: int) -> list[str]:
    rows = ["| agent | procedure | rejection rate at 0.05 | s.e. |", "| --- | --- | --- | --- |"]
    cases = [
        ("rational, 0.05 grid", Agent.rational(), "permutation (default)",
         _perm(n_resamples=n_resamples)),
        ("rational, 0.05 grid", Agent.rational(), "permutation, rows as units",
         _perm(n_resamples=n_resamples, permute="rows")),
        ("rational, 0.05 grid", Agent.rational(), "bootstrap 95% CI excludes 0 (paper)",
         _boot_excludes_zero(500)),
        ("rational, 0.05 grid", Agent.rational(), "permutation, calibrate=True",
         _perm(n_resamples=n_resamples, calibrate=True)),
        ("rational, 0.01 grid", Agent.rational(grid=0.01), "permutation (default)",
         _perm(n_resamples=n_resamples)),
        ("rational, 0.01 grid", Agent.rational(grid=0.01),
         "bootstrap 95% CI excludes 0 (paper)", _boot_excludes_zero(500)),
        ("rational, continuous beliefs", Agent.rational(grid=None), "permutation (default)",
         _perm(n_resamples=n_resamples)),
        ("rational, report_noise 0.05", Agent.rational(report_noise=0.05),
         "permutation, row belief", _perm(n_resamples=n_resamples)),
        ("rational, report_noise 0.05", Agent.rational(report_noise=0.05),
         "permutation, context-mean belief",
         _perm(n_resamples=n_resamples, condition_on="context_mean")),
    ]
    # the design: one row per context (1000 contexts), 0.01 grid
    single = 5 * n_contexts
    cases += [
        (f"rational, 0.01 grid, {single} contexts x 1", Agent.rational(grid=0.01),
         "permutation (default)", _perm(n_resamples=n_resamples)),
        (f"rational, 0.01 grid, {single} contexts x 1", Agent.rational(grid=0.01),
         "bootstrap 95% CI excludes 0 (paper)", _boot_excludes_zero(500)),
    ]
    for label, agent, proc, run in cases:
        if ONLY and not any(word in f"{label} {proc}" for word in ONLY):
            continue
        t0 = time.perf_counter()
        if "x 1" in label:
            rate = _rate(agent, reps, single, run, n_repetitions=1)
        else:
            rate = _rate(agent, reps, n_contexts, run)
        rows.append(f"| {label} | {proc} | {rate:.3f} | {_binomial_se(rate, reps):.3f} |")
        print(rows[-1], f"({time.perf_counter() - t0:.0f} s)", flush=True)
    return rows


def power_table(reps: int, n_resamples: int, n_contexts: int) -> list[str]:
    rows = ["| leaky strength | exact CMI (nats) | power of permutation test at 0.05 | s.e. |",
            "| --- | --- | --- | --- |"]
    for strength in (0.05, 0.1, 0.2, 0.3, 0.5):
        agent = Agent.leaky(strength=strength)
        truth = _study(agent, 0, 20).truth.cmi
        rate = _rate(agent, reps, n_contexts, _perm(n_resamples=n_resamples))
        rows.append(f"| {strength} | {truth:.4f} | {rate:.3f} | {_binomial_se(rate, reps):.3f} |")
        print(rows[-1], flush=True)
    return rows


def coverage_table(reps: int, n_resamples: int, n_contexts: int) -> list[str]:
    rows = ["| agent | exact CMI | CI method | coverage of 95% CI | mean width | mean estimate |",
            "| --- | --- | --- | --- | --- | --- |"]
    for strength in (0.0, 0.3, 0.6):
        agent = (Agent.leaky(strength=strength, grid=GRID[0]) if strength
                 else Agent.rational(grid=GRID[0]))
        truth = _study(agent, 0, 20).truth.cmi
        for ci_method in ("subsampling", "bootstrap"):
            cover = 0
            widths = []
            stats = []
            for seed in range(reps):
                res = coherence.ci_test(_study(agent, seed, n_contexts).data,
                                        n_resamples=n_resamples, ci_method=ci_method, rng=seed)
                ci = res.confidence_interval
                cover += ci.low <= truth <= ci.high
                widths.append(ci.high - ci.low)
                stats.append(res.statistic)
            rows.append(f"| {agent.kind} {strength}, grid {GRID[0]} | {truth:.4f} | {ci_method} | "
                        f"{cover / reps:.3f} | {np.mean(widths):.4f} | {np.mean(stats):.4f} |")
            print(rows[-1], flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--n-resamples", type=int, default=499)
    parser.add_argument("--n-contexts", type=int, default=200)
    parser.add_argument("--parts", default="size,power,coverage")
    parser.add_argument("--coverage-grid", type=float, default=0.05)
    parser.add_argument("--only", default="", help="comma-separated size-case filter")
    args = parser.parse_args(argv)
    # fine grids / continuous beliefs warn that the estimate is biased towards 0;
    # the tables measure exactly that
    warnings.simplefilter("ignore", SmallSampleWarning)
    ONLY[:] = [w for w in args.only.split(",") if w]
    GRID[0] = args.coverage_grid
    parts = args.parts.split(",")
    print(f"# ci_test validation: reps={args.reps}, n_resamples={args.n_resamples}, "
          f"n_contexts={args.n_contexts} x 5 repetitions")
    for name, func in (("size", size_table), ("power", power_table),
                       ("coverage", coverage_table)):
        if name in parts:
            print(f"\n## {name}\n")
            t0 = time.perf_counter()
            table = func(args.reps, args.n_resamples, args.n_contexts)
            print("\n".join(table))
            print(f"\n({name}: {time.perf_counter() - t0:.0f} s)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
