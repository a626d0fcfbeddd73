"""Size and power of the leakage, monotone-choice and prompt-consistency tests.

Simulates studies from the agents of :mod:`coherence._decision._simulate` (the oracle)
and reports the rejection rate at alpha = 0.05 with its binomial standard
error. The tables in ``docs/validation_decision.md`` come from::

    nice -n 10 python -m benchmarks.validate_decision_tests leakage --reps 200 \
        --n-resamples 39 --agents rational
    nice -n 10 python -m benchmarks.validate_decision_tests leakage --reps 100 \
        --n-resamples 39 --agents noisy leaky0.5 leaky0.2
    nice -n 10 python -m benchmarks.validate_decision_tests leakage --reps 100 \
        --n-resamples 39 --agents rational+x leaky0.2+x --methods permutation
    nice -n 10 python -m benchmarks.validate_decision_tests monotone --reps 400
    nice -n 10 python -m benchmarks.validate_decision_tests consistency --reps 400

Each section takes a few minutes on one core. Not run by the test suite.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from collections.abc import Callable
from typing import Any

import numpy as np

import coherence

ALPHA = 0.05


def _rate(pvalues: list[float]) -> str:
    p = np.asarray(pvalues, dtype=float)
    p = p[~np.isnan(p)]
    r = float(np.mean(p <= ALPHA)) if len(p) else math.nan
    se = math.sqrt(r * (1 - r) / len(p)) if len(p) else math.nan
    return f"{r:.3f} (se {se:.3f}, {len(p)} runs)"


def _run(label: str, reps: int, one: Callable[[int], Any]) -> list[Any]:
    t0 = time.perf_counter()
    out = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", coherence.CoherenceWarning)
        for r in range(reps):
            out.append(one(r))
    print(f"  [{label}: {time.perf_counter() - t0:.0f} s]", flush=True)
    return out


def leakage(reps: int, n_contexts: int, n_permutations: int, agent_names: list[str] | None,
            methods: list[str]) -> None:
    from coherence._decision._leakage import leakage_test

    print(f"leakage_test, engine='logistic', {n_contexts} contexts x 5 repetitions, "
          f"5 grouped folds, {n_permutations} permutations")
    agents = {
        "rational": coherence.Agent.rational(),
        "noisy": coherence.Agent.rational(report_noise=0.03, grid=0.01),
        "leaky0.5": coherence.Agent.leaky(0.5),
        "leaky0.2": coherence.Agent.leaky(0.2),
        # the same agents with two context-level evidence columns in both models
        "rational+x": coherence.Agent.rational(),
        "leaky0.2+x": coherence.Agent.leaky(0.2),
    }
    for name, agent in agents.items():
        if agent_names and name not in agent_names:
            continue
        for method in methods:
            def one(r: int, agent: Any = agent, method: str = method,
                    with_x: bool = name.endswith("+x")) -> tuple[float, float]:
                study = coherence.simulate(agent, n_contexts=n_contexts, rng=10_000 + r)
                data, evidence = study.data, ()
                if with_x:
                    gen = np.random.default_rng(r)
                    q = np.clip(data["truth"].to_numpy(), 1e-3, 1 - 1e-3)
                    noise = gen.standard_normal((n_contexts, 2))[data["context"].to_numpy()]
                    logit = np.log(q / (1 - q))
                    data = data.assign(x1=logit + noise[:, 0], x2=0.5 * logit + noise[:, 1])
                    evidence = ("x1", "x2")
                res = leakage_test(data, evidence=evidence, engine="logistic", method=method,
                                   n_permutations=n_permutations, n_resamples=200, rng=r)
                return res.pvalue, res.statistic
            out = _run(f"{name}, {method}", reps, one)
            stats_ = np.array([o[1] for o in out])
            print(f"  {name:<40} {method:<12} reject {_rate([o[0] for o in out])}; "
                  f"mean % Impr {stats_.mean():.2f}", flush=True)


def monotone(reps: int, n_contexts: int, n_resamples: int) -> None:
    from coherence._decision._monotone import monotonicity_test

    print(f"monotonicity_test, {n_contexts} contexts x 5 repetitions, 10 bins, "
          f"{n_resamples} parametric-bootstrap resamples")
    agents = {
        "rational": coherence.Agent.rational(),
        "rational, temperature=2 (nearly flat shares)": coherence.Agent.rational(
            temperature=2.0),
        "nonmonotone": coherence.Agent.nonmonotone(),
    }
    for name, agent in agents.items():
        def one(r: int, agent: Any = agent) -> Any:
            study = coherence.simulate(agent, n_contexts=n_contexts, rng=20_000 + r)
            return monotonicity_test(study.data, n_resamples=n_resamples, rng=r)
        out = _run(name, reps, one)
        print(f"  {name}: global (Bonferroni over pairs) reject {_rate([o.pvalue for o in out])}"
              f"; mean violation % {np.mean([o.statistic for o in out]):.2f}")
        for j, pair in enumerate(out[0].table["pair"]):
            pv = [float(o.table["pvalue"].iloc[j]) for o in out]
            vp = np.mean([float(o.table["statistic"].iloc[j]) for o in out])
            anyv = np.mean([float(o.table["n_significant"].iloc[j]) > 0 for o in out])
            print(f"    {pair:<10} isotonic LR reject {_rate(pv)}; mean violation % {vp:.2f}; "
                  f"share of runs with >= 1 significant Fisher violation {anyv:.3f}")


def consistency(reps: int, n_contexts: int, n_resamples: int) -> None:
    from coherence._decision._consistency import prompt_consistency

    prompts = ("standard", "mse", "absolute", "bayesian")
    print(f"prompt_consistency, {n_contexts} contexts x 4 prompts x 5 repetitions, "
          f"{n_resamples} permutations")
    agents = {
        "rational, report_noise=0.05, grid=0.01": coherence.Agent.rational(
            report_noise=0.05, grid=0.01),
        "prompt_sensitive, report_noise=0.05, grid=0.01, shifts x 0.1": (
            coherence.Agent.prompt_sensitive(
                shifts={"standard": 0.0, "mse": 0.005, "absolute": -0.01, "bayesian": 0.01},
                report_noise=0.05, grid=0.01)),
        "prompt_sensitive (default shifts)": coherence.Agent.prompt_sensitive(
            report_noise=0.05, grid=0.01),
    }
    for name, agent in agents.items():
        def one(r: int, agent: Any = agent) -> Any:
            study = coherence.simulate(agent, n_contexts=n_contexts, prompts=prompts,
                                       rng=30_000 + r)
            res = prompt_consistency(study.data, truth="truth", n_resamples=n_resamples,
                                     rng=r)
            return res, study.data
        out = _run(name, reps, one)
        print(f"  {name}: global reject {_rate([o[0].pvalue for o in out])}")
        table = out[0][0].table
        for j, prompt in enumerate(table["prompt"]):
            if prompt == "standard":
                continue
            pv = [float(o[0].table["pvalue"].iloc[j]) for o in out]
            rmse = np.mean([float(o[0].table["rmse_reference"].iloc[j]) for o in out])
            print(f"    {prompt:<10} reject {_rate(pv)}; mean RMSE vs standard {rmse:.4f}")
        # coverage of the RMSE-vs-truth interval: the population value is estimated by
        # the mean over runs (a slight bias remains from the averaging of repetitions)
        cover = []
        for j in range(len(table)):
            est = np.array([float(o[0].table["rmse_truth"].iloc[j]) for o in out])
            lo = np.array([float(o[0].table["rmse_truth_ci_low"].iloc[j]) for o in out])
            hi = np.array([float(o[0].table["rmse_truth_ci_high"].iloc[j])
                           for o in out])
            target = est.mean()
            cover.append(float(np.mean((lo <= target) & (target <= hi))))
        print(f"    coverage of the 95% RMSE-vs-truth intervals (target: mean over runs): "
              f"{', '.join(f'{c:.3f}' for c in cover)}")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("section", choices=("leakage", "monotone", "consistency", "all"))
    parser.add_argument("--reps", type=int, default=200)
    parser.add_argument("--n-contexts", type=int, default=200)
    parser.add_argument("--n-resamples", type=int, default=99)
    parser.add_argument("--agents", nargs="*", default=None,
                        help="leakage only: rational, noisy, leaky0.5, leaky0.2, "
                             "rational+x, leaky0.2+x")
    parser.add_argument("--methods", nargs="*", default=["permutation", "paired"],
                        help="leakage only: permutation, paired")
    args = parser.parse_args(argv)
    if args.section in ("leakage", "all"):
        leakage(args.reps, args.n_contexts, args.n_resamples, args.agents, args.methods)
    if args.section in ("monotone", "all"):
        monotone(args.reps, args.n_contexts, args.n_resamples)
    if args.section in ("consistency", "all"):
        consistency(args.reps, args.n_contexts, args.n_resamples)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
