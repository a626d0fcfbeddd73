"""Size, power and interval behaviour of the law-of-iterated-expectation check, by simulation.

Run from the repository root::

    nice -n 10 python -m benchmarks.validate_lie --section size [--n-studies 10] \
        [--n-draws 40] [--seed 0]

with ``--section`` one of ``size``, ``coverage``, ``power``, ``forest`` (each
runs in under about 5 minutes on one core) or ``all``.

It prints the markdown tables recorded in docs/validation_lie.md. Studies come
from :func:`bayesnets.lie_study` (contexts of a Bayesian network, reports of a
simulated agent with Beta/Dirichlet report noise of standard deviation 0.03 at
1/2); for each of ``--n-studies`` context sets, ``--n-draws`` pairs of
independent report tables are drawn with :meth:`bayesnets.LIEStudy.redraw`:

* **size**: agent and baseline are the same agent (two redraws, exchangeable),
  so the sign test's null holds exactly and the population median ratio is 1;
  the rejection rate at alpha = 0.05 is the size, and the share of percentile
  bootstrap intervals containing 1 is their coverage;
* **power**: the agent is the Prelec-weighted agent (gamma < 1), the baseline
  the rational agent with the same report noise, on the same contexts;
* **random forest**: the default baseline (cross-validated random forest on a
  forward sample of 5000 rows), for the rational and the weighted agent, with
  and without report noise: the distribution of the median ratio.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings

import numpy as np

import bayesnets
from coherence import Agent
from coherence import iterated_expectation_check

ALPHA = 0.05
NOISE = 0.03


def _weighted(gamma: float) -> Agent:
    return Agent.rational(grid=None, weighting="prelec", gamma=gamma)


def paired(network: str, n_contexts: int, agent: Agent, baseline: Agent, n_studies: int,
           n_draws: int, rng: np.random.Generator, n_boot: int = 1,
           ) -> dict[str, np.ndarray]:
    """p-values, median ratios and interval bounds over studies x draws."""
    p, med, low, high, agent_err, exact_err = [], [], [], [], [], []
    for _ in range(n_studies):
        study = bayesnets.lie_study(network, agent=agent, n_contexts=n_contexts,
                                    report_noise=NOISE, n_ground_truth=1, rng=rng)
        exact_err.append(float(study.truth["error"].median()))
        for _ in range(n_draws):
            a = study.redraw(rng=rng)
            b = study.redraw(agent=baseline, rng=rng)
            with warnings.catch_warnings():  # units with P(y|x) in {0, 1}: both errors 0
                warnings.simplefilter("ignore")
                res = iterated_expectation_check(a, baseline=b, n_resamples=n_boot, rng=rng)
            p.append(res.pvalue)
            med.append(res.statistic)
            low.append(res.confidence_interval.low)
            high.append(res.confidence_interval.high)
            agent_err.append(res.median_agent_error)
    return {"p": np.array(p), "median": np.array(med), "low": np.array(low),
            "high": np.array(high), "agent_error": np.array(agent_err),
            "exact_error": np.array(exact_err)}


def _q(x: np.ndarray) -> str:
    lo, mid, hi = np.quantile(x, [0.05, 0.5, 0.95])
    return f"{mid:.3g} [{lo:.3g}, {hi:.3g}]"


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.validate_lie")
    parser.add_argument("--section", default="all",
                        choices=("size", "coverage", "power", "forest", "all"))
    parser.add_argument("--n-studies", type=int, default=10)
    parser.add_argument("--n-draws", type=int, default=40)
    parser.add_argument("--n-coverage", type=int, default=200)
    parser.add_argument("--n-boot", type=int, default=999)
    parser.add_argument("--n-forest", type=int, default=3)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    rng = np.random.default_rng(args.seed)
    t0 = time.perf_counter()
    rational = Agent.rational(grid=None)

    run = {args.section} if args.section != "all" else {"size", "coverage", "power", "forest"}

    if "size" in run:
        size(args, rng, rational)
    if "coverage" in run:
        coverage(args, rng, rational)
    if "power" in run:
        power(args, rng, rational)
    if "forest" in run:
        forest(args, rng)
    print(f"\n(total {time.perf_counter() - t0:.0f} s)")
    return 0


def size(args: argparse.Namespace, rng: np.random.Generator, rational: Agent) -> None:
    n_tests = args.n_studies * args.n_draws
    print(f"## Size of the sign test at alpha = {ALPHA} ({args.n_studies} context sets x "
          f"{args.n_draws} report pairs = {n_tests} tests per cell)\n")
    print("Agent and baseline: two independent report tables of the same agent "
          f"(report noise {NOISE}).\n")
    print("| network | agent | contexts | size | median ratio: median [5%, 95%] |")
    print("| --- | --- | --- | --- | --- |")
    for network in ("child", "asia"):
        for name, agent in (("rational", rational), ("weighted 0.6", _weighted(0.6))):
            for n in (30, 100):
                r = paired(network, n, agent, agent, args.n_studies, args.n_draws, rng)
                print(f"| {network} | {name} | {n} | {np.mean(r['p'] <= ALPHA):.3f} | "
                      f"{_q(r['median'])} |")



def coverage(args: argparse.Namespace, rng: np.random.Generator, rational: Agent) -> None:
    n_cov_studies = max(1, args.n_coverage // 20)
    print(f"\n## Coverage of the 95% percentile bootstrap interval of the median ratio "
          f"under the null ({n_cov_studies} x 20 = {n_cov_studies * 20} studies, "
          f"{args.n_boot} resamples; the true median ratio is 1)\n")
    print("| network | contexts | coverage of 1 | mean width |")
    print("| --- | --- | --- | --- |")
    for network, n in (("child", 30), ("child", 100)):
        r = paired(network, n, rational, rational, n_cov_studies, 20, rng, n_boot=args.n_boot)
        cover = np.mean((r["low"] <= 1.0) & (r["high"] >= 1.0))
        print(f"| {network} | {n} | {cover:.3f} | {np.mean(r['high'] - r['low']):.3f} |")



def power(args: argparse.Namespace, rng: np.random.Generator, rational: Agent) -> None:
    n_tests = args.n_studies * args.n_draws
    print(f"\n## Power of the sign test against Prelec weighting ({n_tests} tests per cell)\n")
    print("Agent: rational with Prelec weighting gamma; baseline: the rational agent; both "
          f"with report noise {NOISE}, on the same contexts (child).\n")
    print("| gamma | contexts | exact median LIE error of the agent | power | "
          "median ratio: median [5%, 95%] |")
    print("| --- | --- | --- | --- | --- |")
    for gamma in (0.9, 0.8, 0.7, 0.6, 0.5):
        for n in (30, 100):
            r = paired("child", n, _weighted(gamma), rational, args.n_studies, args.n_draws,
                       rng)
            print(f"| {gamma} | {n} | {np.median(r['exact_error']):.4f} | "
                  f"{np.mean(r['p'] <= ALPHA):.3f} | {_q(r['median'])} |")



def forest(args: argparse.Namespace, rng: np.random.Generator) -> None:
    print(f"\n## Random-forest baseline ({args.n_forest} studies per row, child, 100 "
          "contexts, forward sample of 5000 rows, 100 trees)\n")
    print("| agent | report noise | median ratio per study | sign-test p-values | "
          "median agent error | median forest error |")
    print("| --- | --- | --- | --- | --- | --- |")
    for name, agent in (("rational", "rational"), ("weighted 0.6", "weighted")):
        for noise in (0.0, NOISE):
            stats, ps, ea, eb = [], [], [], []
            for _ in range(args.n_forest):
                study = bayesnets.lie_study("child", agent=agent, n_contexts=100,
                                            report_noise=noise, rng=rng)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore")
                    res = iterated_expectation_check(
                        study.data, ground_truth=study.ground_truth, contexts=study.contexts,
                        evidence=list(study.evidence), n_resamples=999,
                        baseline_options={"n_estimators": 100}, rng=rng)
                stats.append(res.statistic)
                ps.append(res.pvalue)
                ea.append(res.median_agent_error)
                eb.append(res.median_baseline_error)
            print(f"| {name} | {noise} | {', '.join(f'{s:.3g}' for s in stats)} | "
                  f"{', '.join(f'{p:.2g}' for p in ps)} | {np.median(ea):.4f} | "
                  f"{np.median(eb):.4f} |")


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
