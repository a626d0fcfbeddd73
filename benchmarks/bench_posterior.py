"""Exact posteriors: ``bayesnets.posterior`` against pgmpy's VariableElimination, query by query.

Three workloads of 1000 evidence rows on ``child`` (target Disease) and ``alarm``
(target LVFAILURE):

* ``study``: every row observes the same 5 variables (the shape of a study's
  contexts table);
* ``missing``: the same 5 variables, each missing with probability 0.2 (up to
  32 evidence-variable sets);
* ``random``: every row observes 3-5 variables drawn at random (almost every
  row its own set: the worst case for grouping).

Rows whose evidence has probability zero are redrawn. ``bayesnets`` runs cold
(its joint-table cache is cleared before each timing); pgmpy's
VariableElimination is built once per network and asked one query per row.
The speed ratio is measured in one run and printed, never asserted. Run with
``python -m benchmarks posterior`` (or ``python -m benchmarks.bench_posterior
--n 1000``).
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np
import pandas as pd

import bayesnets

NETWORKS = {
    "child": ("Disease", ["Age", "GruntingReport", "LVHreport", "XrayReport", "LowerBodyO2"]),
    "alarm": ("HYPOVOLEMIA", ["HISTORY", "CVP", "PCWP", "BP", "HRBP"]),
}


def _draw_rows(net: bayesnets.Network, target: str, fixed: list[str], n: int, workload: str,
               rng: np.random.Generator) -> pd.DataFrame:
    others = [v for v in net.variables if v != target]
    rows: list[dict[str, object]] = []
    while len(rows) < n:
        if workload == "random":
            chosen = list(rng.choice(others, size=int(rng.integers(3, 6)), replace=False))
        elif workload == "missing":
            chosen = [v for v in fixed if rng.random() >= 0.2]
        else:
            chosen = list(fixed)
        row = {v: net.states[v][rng.integers(net.cardinality(v))] for v in chosen}
        try:
            bayesnets.posterior(net, target, row)
        except ValueError:
            continue
        rows.append(row)
    columns = fixed if workload != "random" else others
    return pd.DataFrame(rows, columns=columns, dtype=object).dropna(axis=1, how="all")


def main(argv: list[str]) -> None:
    parser = argparse.ArgumentParser(prog="bench_posterior")
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)

    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", FutureWarning)
        from pgmpy.inference import VariableElimination
    print(f"importing pgmpy.inference: {time.perf_counter() - t0:.2f} s")
    print(f"{'network':8} {'workload':8} {'rows':>5} {'sets':>5} {'bayesnets s':>12} "
          f"{'pgmpy s':>9} {'ratio':>7} {'max |diff|':>11}")
    rng = np.random.default_rng(args.seed)
    for name, (target, fixed) in NETWORKS.items():
        net = bayesnets.load(name)
        infer = VariableElimination(net.to_pgmpy())
        for workload in ("study", "missing", "random"):
            ev = _draw_rows(net, target, fixed, args.n, workload, rng)
            n_sets = len(ev.notna().drop_duplicates())
            net._cache.clear()
            t0 = time.perf_counter()
            ours = bayesnets.posterior(net, target, ev)
            t_ours = time.perf_counter() - t0
            t0 = time.perf_counter()
            ref = np.empty(ours.shape)
            for i, row in enumerate(ev.itertuples(index=False)):
                evidence = {c: v for c, v in zip(ev.columns, row, strict=True)
                            if isinstance(v, str)}
                factor = infer.query([target], evidence=evidence, show_progress=False)
                names = factor.state_names[target]
                ref[i] = [factor.values[names.index(s)] for s in net.states[target]]
            t_pgmpy = time.perf_counter() - t0
            diff = float(np.abs(ref - ours.to_numpy()).max())
            print(f"{name:8} {workload:8} {len(ev):5d} {n_sets:5d} {t_ours:12.3f} "
                  f"{t_pgmpy:9.2f} {t_pgmpy / t_ours:7.1f} {diff:11.1e}")


if __name__ == "__main__":
    import sys

    main(sys.argv[1:])
