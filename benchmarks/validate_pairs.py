"""Size, power and interval coverage of the conditional-forecasting metrics, by simulation.

Run from the repository root::

    nice -n 10 python -m benchmarks.validate_pairs [--n-sims 10000] [--seed 0]

It prints the markdown tables recorded in docs/validation_pairs.md. Populations
of per-pair Brier improvements:

* ``normal``: N(mu, sd^2) with sd = 0.11 (the spread of the strong pairs below);
* ``real:<category>``: the improvements of the GPT-4o skeptical run
  (``../shared/data/conditional-pairs/gpt4o_skeptical.json``), centred and then
  shifted to mean mu, resampled with replacement: the real, tie-heavy and
  skewed shape (skipped when the file is absent);
* ``ties:moderate-tail`` / ``ties:rare-tail``: three-point distributions with
  mean exactly 0: 50% at 0, 30% at +0.05, 20% at -0.075; and 60% at 0, 30% at
  +0.05, 10% at -0.15 (a rare, heavy left tail);
* ``coherent``: pairs drawn from random joints, the forecaster stating the
  exact P(A), P(A|B=1), P(A|B=0) (E[improvement] = E Var(P(A|B)) > 0).

Under mu = 0 the rejection rate of the two-sided bootstrap-t test (the
p-value :func:`coherence.conditional_forecasting` reports by default) and of
the one-sample t-test is their size;
the coverage of the normal, percentile-bootstrap and bootstrap-t intervals is the share of simulated
studies whose interval contains mu.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import numpy as np

from coherence import conditional_forecasting, pairs_power, read_pairs
from coherence._probability._pairs import (
    _bootstrap_ci,
    _bootstrap_t,
    _brier_improvement,
    _ttest_pvalue,
)

REAL = Path(__file__).resolve().parents[1].parent / "shared" / "data" / "conditional-pairs" / \
    "gpt4o_skeptical.json"
ALPHA = 0.05


#: Synthetic three-point improvement distributions with mean exactly 0: (values, probs).
THREE_POINT = {
    "ties:moderate-tail": ((0.0, 0.05, -0.075), (0.5, 0.3, 0.2)),
    "ties:rare-tail": ((0.0, 0.05, -0.15), (0.6, 0.3, 0.1)),
}


def populations() -> dict[str, np.ndarray | None]:
    pops: dict[str, np.ndarray | None] = {"normal": None}
    for name, (values, probs) in THREE_POINT.items():
        # a population of 1000 values in the exact proportions
        pops[name] = np.repeat(np.asarray(values), (np.asarray(probs) * 1000).round().astype(int))
    if REAL.exists():
        table = read_pairs(REAL)
        res = conditional_forecasting(table, rng=0)
        for cat in ("strong", "weak", "none"):
            pops[f"real:{cat}"] = res.improvement[(table["category"] == cat).to_numpy()]
    return pops


def draw(pop: np.ndarray | None, mu: float, n: int, n_sims: int,
         rng: np.random.Generator) -> np.ndarray:
    if pop is None:
        return rng.normal(mu, 0.11, size=(n_sims, n))
    centred = pop - pop.mean() + mu
    return centred[rng.integers(0, pop.size, size=(n_sims, n))]


def ttest_p(x: np.ndarray) -> np.ndarray:
    """The shipped two-sided t-test p-value of every simulated study (flat -> 1)."""
    p = np.array([_ttest_pvalue(row) for row in x])
    return np.where(np.isnan(p), 1.0, p)


def boot_t_p(x: np.ndarray, n_boot: int, rng: np.random.Generator) -> np.ndarray:
    """The shipped bootstrap-t p-value of every simulated study (NaN -> 1)."""
    p = np.array([_bootstrap_t(row, 0.95, n_boot, rng)[0] for row in x])
    return np.where(np.isnan(p), 1.0, p)


def coverage(x: np.ndarray, mu: float, rng: np.random.Generator,
             n_boot: int) -> tuple[float, float, float]:
    n = x.shape[1]
    m = x.mean(axis=1)
    half = 1.959963984540054 * x.std(axis=1, ddof=1) / np.sqrt(n)
    normal = np.mean((m - half <= mu) & (mu <= m + half))
    hits = hits_t = 0
    for row in x:
        lo, hi = _bootstrap_ci(row, 0.95, n_boot, rng)
        hits += lo <= mu <= hi
        _, lo_t, hi_t = _bootstrap_t(row, 0.95, n_boot, rng)
        hits_t += lo_t <= mu <= hi_t
    return float(normal), hits / len(x), hits_t / len(x)


def coherent_improvements(n_sims: int, n: int, rng: np.random.Generator,
                          strength: float) -> np.ndarray:
    """Improvements of a forecaster stating the exact conditionals of random joints whose
    dependence is scaled by ``strength`` (0 = independent)."""
    p_b = rng.uniform(0.1, 0.9, size=(n_sims, n))
    base = rng.uniform(0.1, 0.9, size=(n_sims, n))
    delta = strength * rng.uniform(-0.5, 0.5, size=(n_sims, n))
    p1 = np.clip(base + (1 - p_b) * delta, 0.01, 0.99)
    p0 = np.clip(base - p_b * delta, 0.01, 0.99)
    p_a = p1 * p_b + p0 * (1 - p_b)
    b = (rng.random((n_sims, n)) < p_b).astype(int)
    a = (rng.random((n_sims, n)) < np.where(b == 1, p1, p0)).astype(int)
    return _brier_improvement(p_a, p1, p0, a, b)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.validate_pairs")
    parser.add_argument("--n-sims", type=int, default=10000)
    parser.add_argument("--n-coverage", type=int, default=2000)
    parser.add_argument("--n-size-boot", type=int, default=4000)
    parser.add_argument("--n-boot", type=int, default=999)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    pops = populations()

    print(f"## Size at alpha = {ALPHA}: Student t ({args.n_sims} studies) and bootstrap-t "
          f"({args.n_size_boot} studies, {args.n_boot} resamples)\n")
    print("| population | t, n = 14 | t, n = 30 | t, n = 100 | bootstrap-t, n = 14 | "
          "bootstrap-t, n = 30 | bootstrap-t, n = 100 |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for name, pop in pops.items():
        t_rates = [np.mean(ttest_p(draw(pop, 0.0, n, args.n_sims, rng)) <= ALPHA)
                   for n in (14, 30, 100)]
        bt_rates = [np.mean(boot_t_p(draw(pop, 0.0, n, args.n_size_boot, rng), args.n_boot,
                                     rng) <= ALPHA) for n in (14, 30, 100)]
        print(f"| {name} | " + " | ".join(f"{r:.3f}" for r in t_rates + bt_rates) + " |")

    print(f"\n## Coverage of the 95% intervals at n = 14 ({args.n_coverage} studies, "
          f"{args.n_boot} bootstrap resamples)\n")
    print("| population | normal (mean +- 1.96 SE) | percentile bootstrap | bootstrap-t |")
    print("| --- | --- | --- | --- |")
    for name, pop in pops.items():
        x = draw(pop, 0.0, 14, args.n_coverage, rng)
        cov_n, cov_b, cov_bt = coverage(x, 0.0, rng, args.n_boot)
        print(f"| {name} | {cov_n:.3f} | {cov_b:.3f} | {cov_bt:.3f} |")

    print(f"\n## Power of the t-test to detect a mean improvement of 0.01 "
          f"({args.n_sims} studies)\n")
    print("| population | planned n (pairs_power) | exact power at n | simulated power at n "
          "| simulated power at n = 14 |")
    print("| --- | --- | --- | --- | --- |")
    for name, pop in pops.items():
        if pop is None:
            res = pairs_power(effect=0.01, sd=0.11, n=14, n_simulations=args.n_sims, rng=rng)
        else:
            res = pairs_power(_pilot_table(pop), effect=0.01, category=None, n=14,
                              n_simulations=args.n_sims, rng=rng)
        print(f"| {name} | {res.n_required} | {res.achieved_power:.3f} | "
              f"{res.simulated_power:.3f} | {res.simulated_power_at_n:.3f} |")

    print(f"\n## Win rate: exact binomial test against 0.5 ({args.n_sims} studies)\n")
    print("| alternative | target win rate | planned n | exact power | simulated power | "
          "power at n = 14 |")
    print("| --- | --- | --- | --- | --- | --- |")
    for alt in ("two-sided", "greater"):
        for wr in (0.6, 0.7):
            res = pairs_power(metric="win_rate", win_rate=wr, alternative=alt, n=14,
                              n_simulations=args.n_sims, rng=rng)
            print(f"| {alt} | {wr} | {res.n_required} | {res.achieved_power:.3f} | "
                  f"{res.simulated_power:.3f} | {res.power_at_n:.3f} |")

    print(f"\n## A coherent forecaster (exact conditionals) at n = 14 ({args.n_sims} "
          "studies)\n")
    print("| dependence strength | mean improvement | sd | t-test rejection rate | "
          f"bootstrap-t rejection rate ({args.n_size_boot} studies) |")
    print("| --- | --- | --- | --- | --- |")
    for strength in (0.0, 0.5, 1.0):
        x = coherent_improvements(args.n_sims, 14, rng, strength)
        bt = np.mean(boot_t_p(x[:args.n_size_boot], args.n_boot, rng) <= ALPHA)
        print(f"| {strength} | {x.mean():.4f} | {x.std(ddof=1):.3f} | "
              f"{np.mean(ttest_p(x) <= ALPHA):.3f} | {bt:.3f} |")
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
    return 0


def _pilot_table(improvement: np.ndarray):  # type: ignore[no-untyped-def]
    """A pilot table whose Brier improvements are exactly ``improvement`` (a = 1, b = 1,
    P(A|B=1) = 1 - sqrt(max(0, (1 - P(A))^2 - improvement)))."""
    import pandas as pd

    p_a = np.full(improvement.size, 0.5)
    p1 = 1 - np.sqrt(np.maximum(0.0, 0.25 - improvement))
    return pd.DataFrame({"category": "pilot", "p_a": p_a, "p_a_given_b1": p1,
                         "p_a_given_b0": p_a, "a_outcome": 1, "b_outcome": 1})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
