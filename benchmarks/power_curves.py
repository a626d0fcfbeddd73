"""Power curves of every test at the papers' study sizes: effect size on the x axis, one line per
study size, written to ``benchmarks/results/power_curves.json`` and into docs/power.md (table and
figure ``docs/power_curves.svg``).

Run from the repository root::

    nice -n 10 python -m benchmarks.power_curves [--n-sims 100] [--tests ci_test ...]
    python -m benchmarks.power_curves --tables          # JSON -> docs/power.md and the figure

``--tests`` reruns some curves and keeps the others of the JSON. Each point is the rejection
rate at alpha = 0.05 over the curve's simulated studies, with its 95% Wilson interval:

* decision tests through :func:`coherence.plan` from a simulated agent, at the test's public
  defaults except: ``leakage_test`` with ``engine="logistic"`` (CatBoost's 199 refits per study
  are too slow for a curve), ``ci_test`` with 199 permutations and the subsampling interval (the
  p-value does not use the interval), ``prompt_consistency`` with 199 resamples; effect = the
  agent's violation as ``plan`` defines it; 20 studies per point (a shared two-core machine:
  raise ``--n-sims`` for a finer curve);
* the LIE check on ``bayesnets.lie_study("child")``: the agent is the rational agent with Prelec
  weighting gamma (effect = 1 - gamma), the baseline the rational agent, both with report noise
  0.03, on fresh context sets (``--n-sims`` / 10 sets x 10 report pairs), 50 studies per point;
* conditional forecasting through :func:`coherence.plan` (which delegates to
  :func:`coherence.pairs_power`) from the strong pairs of ``gpt4o_skeptical.json``, effect =
  the true mean Brier improvement, at the default Bernoulli mid-p test, 50 studies per point.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._harness import ROOT
from benchmarks._harness import environment
from benchmarks._harness import rejection_rate
from benchmarks._harness import write_tables

RESULTS = ROOT / "benchmarks" / "results" / "power_curves.json"
DOC = ROOT / "docs" / "power.md"
FIGURE = ROOT / "docs" / "power_curves.svg"
PAIRS_FILE = ROOT.parent / "shared" / "data" / "conditional-pairs" / "gpt4o_skeptical.json"
ALPHA = 0.05

#: test -> (agent description, effect label, effects, designs (contexts, repetitions), options)
CURVES: dict[str, dict[str, Any]] = {
    "ci_test": {
        "agent": "Agent.leaky(): the action sees a private signal of the outcome",
        "effect": "signal strength", "effects": [0.0, 0.1, 0.2, 0.3, 0.5],
        "designs": [(100, 5), (200, 5)], "n_sims": 20,
        "options": {"n_resamples": 199, "ci_method": "subsampling"}},
    "leakage_test": {
        "agent": "Agent.leaky()", "effect": "signal strength",
        "effects": [0.0, 0.1, 0.2, 0.3, 0.5],
        "designs": [(100, 5), (200, 5)], "n_sims": 20, "options": {"engine": "logistic"}},
    "prompt_consistency": {
        "agent": "Agent.prompt_sensitive(grid=0.01, report_noise=0.05): shifts of the default "
                 "variants scaled so that the largest is the effect (the others 1/2 of it)",
        "effect": "largest prompt shift", "effects": [0.0, 0.01, 0.02, 0.03, 0.05],
        "designs": [(60, 3), (200, 5)], "n_sims": 20, "options": {"n_resamples": 199}},
    "iterated_expectation_check": {
        "agent": "bayesnets.lie_study('child'): Prelec-weighted agent against the rational "
                 "baseline, report noise 0.03",
        "effect": "1 - Prelec gamma", "effects": [0.0, 0.1, 0.2, 0.3, 0.4],
        "designs": [(30, 1), (100, 1)], "n_sims": 50, "options": {}},
    "conditional_forecasting": {
        "agent": "strong pairs of gpt4o_skeptical.json, A drawn from a truth with the given "
                 "mean Brier improvement (pairs_power)",
        "effect": "mean Brier improvement", "effects": [0.0025, 0.005, 0.01, 0.02, 0.04],
        "designs": [(14, 1), (100, 1)], "n_sims": 50, "options": {}},
    "monotonicity_test": {
        "agent": "Agent.nonmonotone(): deferring is cheaper inside the belief band [0.4, 0.6]",
        "effect": "cut in the cost of deferring in the band",
        "effects": [0.0, 0.1, 0.2, 0.35, 0.5],
        "designs": [(100, 5), (200, 5)], "n_sims": 20, "options": {}},
}
ORDER = tuple(CURVES)
#: the order curves are computed in: the quick ones first, monotonicity last (its default
#: method may change)
RUN_ORDER = ("prompt_consistency", "iterated_expectation_check", "conditional_forecasting",
             "leakage_test", "ci_test", "monotonicity_test")


def _decision_curve(test: str, spec: dict[str, Any], n_sims: int, seed: int) -> list[dict]:
    import coherence

    base = {"ci_test": coherence.Agent.leaky(),
            "leakage_test": coherence.Agent.leaky(),
            "monotonicity_test": coherence.Agent.nonmonotone(),
            "prompt_consistency": coherence.Agent.prompt_sensitive(
                grid=0.01, report_noise=0.05)}[test]
    points = []
    for j, effect in enumerate(spec["effects"]):
        for n_ctx, n_rep in spec["designs"]:
            t0 = time.perf_counter()
            res = coherence.plan(base, test=test, n_contexts=n_ctx, n_repetitions=n_rep,
                                 effect=effect, n_sims=n_sims, alpha=ALPHA,
                                 options=spec["options"],
                                 rng=np.random.default_rng([seed, j, n_ctx]))
            row = res.table.iloc[0]
            points.append(_point(effect, n_ctx, n_rep, int(row["n_calls"]),
                                 int(row["n_rejected"]), int(row["n_simulations"]),
                                 time.perf_counter() - t0))
            print(f"  {test} effect {effect} at {n_ctx} x {n_rep}: {points[-1]['rate']:.3f}",
                  flush=True)
    return points


def _point(effect: float, n_ctx: int, n_rep: int, n_calls: int, k: int, n: int,
           seconds: float) -> dict[str, Any]:
    flags = np.zeros(n, dtype=bool)
    flags[:k] = True
    return {"effect": effect, "n_contexts": n_ctx, "n_repetitions": n_rep, "n_calls": n_calls,
            **rejection_rate(flags), "seconds": round(seconds, 1)}


def _lie_curve(spec: dict[str, Any], n_sims: int, seed: int) -> list[dict]:
    import bayesnets
    from coherence import Agent
    from coherence import iterated_expectation_check

    rational = Agent.rational(grid=None)
    n_sets = max(1, n_sims // 10)
    points = []
    for j, effect in enumerate(spec["effects"]):
        agent = rational if effect == 0 else Agent.rational(grid=None, weighting="prelec",
                                                            gamma=1.0 - effect)
        for n_ctx, _ in spec["designs"]:
            t0 = time.perf_counter()
            rng = np.random.default_rng([seed, j, n_ctx])
            flags, rows = [], 0
            for _ in range(n_sets):
                study = bayesnets.lie_study("child", agent=agent, n_contexts=n_ctx,
                                            report_noise=0.03, n_ground_truth=1, rng=rng)
                for _ in range(n_sims // n_sets):
                    a = study.redraw(rng=rng)
                    b = study.redraw(agent=rational, rng=rng)
                    rows = len(a)
                    with warnings.catch_warnings():  # contexts with both errors 0
                        warnings.simplefilter("ignore")
                        p = iterated_expectation_check(a, baseline=b, n_resamples=1,
                                                       rng=rng).pvalue
                    flags.append(bool(p <= ALPHA))
            pt = _point(effect, n_ctx, 1, rows, int(sum(flags)), len(flags),
                        time.perf_counter() - t0)
            points.append(pt)
            print(f"  LIE effect {effect} at {n_ctx}: {pt['rate']:.3f}", flush=True)
    return points


def _pairs_curve(spec: dict[str, Any], n_sims: int, seed: int) -> list[dict]:
    import coherence

    pilot = coherence.read_pairs(PAIRS_FILE)
    points = []
    for j, effect in enumerate(spec["effects"]):
        for n_pairs, _ in spec["designs"]:
            t0 = time.perf_counter()
            res = coherence.plan(pilot, test="conditional_forecasting", n_contexts=n_pairs,
                                 n_repetitions=1, effect=effect, n_sims=n_sims, alpha=ALPHA,
                                 rng=np.random.default_rng([seed, j, n_pairs]))
            row = res.table.iloc[0]
            pt = _point(effect, n_pairs, 1, int(row["n_calls"]), int(row["n_rejected"]),
                        int(row["n_simulations"]), time.perf_counter() - t0)
            points.append(pt)
            print(f"  pairs effect {effect} at {n_pairs}: {pt['rate']:.3f}", flush=True)
    return points


# ---------------------------------------------------------------- docs
def tables(results: dict[str, Any]) -> str:
    env = results["environment"]
    out = [f"Generated by `benchmarks/power_curves.py` from `benchmarks/results/"
           f"{RESULTS.name}` (commit `{env['commit'][:10]}`, {env['date']}; rejection "
           f"rates at alpha = {ALPHA} with 95% Wilson intervals; the number of simulated "
           "studies per point is given under each table).", ""]
    for test in ORDER:
        if test not in results["curves"]:
            continue
        curve = results["curves"][test]
        spec = curve["spec"]
        designs = [tuple(d) for d in spec["designs"]]
        unit = "pairs" if test == "conditional_forecasting" else "contexts"
        heads = [f"{c} {unit}" + (f" x {r}" if r > 1 else "") for c, r in designs]
        out += [f"### `{test}`", "", f"Alternative: {spec['agent']}. Options: "
                f"`{spec['options'] or 'defaults'}`.", "",
                f"| {spec['effect']} | " + " | ".join(heads) + " |",
                "| --- |" + " --- |" * len(designs)]
        for effect in spec["effects"]:
            cells = []
            for c, _ in designs:
                pt = next(p for p in curve["points"]
                          if p["effect"] == effect and p["n_contexts"] == c)
                cells.append(f"{pt['rate']:.2f} [{pt['wilson_low']:.2f}, "
                             f"{pt['wilson_high']:.2f}]")
            out.append(f"| {effect:g} | " + " | ".join(cells) + " |")
        calls = ", ".join(
            f"{h}: {next(p for p in curve['points'] if p['n_contexts'] == c)['n_calls']}"
            for h, (c, _) in zip(heads, designs, strict=True))
        seconds = sum(p["seconds"] for p in curve["points"])
        out += ["", f"{curve['n_sims']} simulated studies per point. Rows (elicitations) per "
                f"study: {calls}. Computed in {seconds:.0f} s on one core.", ""]
    return "\n".join(out).rstrip("\n")


def figure(results: dict[str, Any], path: Path = FIGURE) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    tests = [t for t in ORDER if t in results["curves"]]
    fig, axes = plt.subplots(2, 3, figsize=(12, 7), sharey=True)
    for ax, test in zip(axes.flat, tests, strict=False):
        curve = results["curves"][test]
        spec = curve["spec"]
        for (c, r), style in zip(spec["designs"], ("--", "-"), strict=True):
            pts = sorted((p for p in curve["points"] if p["n_contexts"] == c),
                         key=lambda p: p["effect"])
            x = [p["effect"] for p in pts]
            unit = "pairs" if test == "conditional_forecasting" else "contexts"
            ax.plot(x, [p["rate"] for p in pts], style, marker="o",
                    label=f"{c} {unit}" + (f" x {r}" if r > 1 else ""))
            ax.fill_between(x, [p["wilson_low"] for p in pts], [p["wilson_high"] for p in pts],
                            alpha=0.15)
        ax.axhline(ALPHA, color="grey", lw=0.8, ls=":")
        ax.axhline(0.8, color="grey", lw=0.8, ls=":")
        ax.set_title(test, fontsize=10)
        ax.set_xlabel(spec["effect"], fontsize=9)
        ax.set_ylim(-0.02, 1.02)
        ax.legend(fontsize=8, loc="upper left")
    for ax in axes.flat[len(tests):]:
        ax.set_visible(False)
    for ax in axes[:, 0]:
        ax.set_ylabel("power (rejection rate at 0.05)")
    fig.tight_layout()
    fig.savefig(path, metadata={"Date": None})
    plt.close(fig)


def write_docs(results: dict[str, Any]) -> None:
    write_tables(DOC, "power_curves.py", tables(results))
    figure(results)


def main(argv: list[str]) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.power_curves")
    parser.add_argument("--n-sims", type=int, default=None,
                        help="studies per point (default: each curve's own, 50 or 20)")
    parser.add_argument("--tests", nargs="+", choices=ORDER, default=list(ORDER))
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--out", type=Path, default=RESULTS)
    parser.add_argument("--tables", action="store_true",
                        help="write docs/power.md's tables and the figure from the JSON")
    args = parser.parse_args(argv)
    if args.tables:
        write_docs(json.loads(args.out.read_text()))
        return 0
    results = json.loads(args.out.read_text()) if args.out.exists() else {"curves": {}}
    for test in [t for t in RUN_ORDER if t in args.tests]:
        spec = CURVES[test]
        n_sims = args.n_sims or spec.get("n_sims", 100)
        t0 = time.perf_counter()
        print(f"{test}:", flush=True)
        if test == "iterated_expectation_check":
            points = _lie_curve(spec, n_sims, args.seed)
        elif test == "conditional_forecasting":
            points = _pairs_curve(spec, n_sims, args.seed)
        else:
            points = _decision_curve(test, spec, n_sims, args.seed)
        results["curves"][test] = {"spec": spec, "n_sims": n_sims, "points": points}
        results["environment"] = environment()
        args.out.write_text(json.dumps(results, indent=1, default=float) + "\n")
        print(f"  ({time.perf_counter() - t0:.0f} s)", flush=True)
    write_docs(results)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
