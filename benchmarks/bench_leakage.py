"""Time the whole leakage test at the reference paper's design, for each engine.

The design: 200 contexts x 5 repetitions (n = 1000 rows), 5 grouped folds,
both models (base and full), both variants (belief only; belief plus two
evidence columns). ``method='paired'`` times the cross-validation itself (no
refits); the cost of one permutation of ``method='permutation'`` (a refit of
the full model in every fold) is timed separately. Usage::

    nice -n 10 python -m benchmarks.bench_leakage [--engines logistic catboost]
        [--threads 1] [--iterations 1000] [--no-early-stopping]

Timings are wall-clock seconds of one run on a shared machine; the ratio
between engines is the figure to quote.
"""

from __future__ import annotations

import argparse
import time
import warnings

import numpy as np

import coherence


def _design(n_contexts: int, rng: int) -> tuple[object, list[str]]:
    study = coherence.simulate(coherence.Agent.leaky(0.3), n_contexts=n_contexts, rng=rng)
    data = study.data
    gen = np.random.default_rng(rng)
    q = np.clip(data["truth"].to_numpy(), 1e-3, 1 - 1e-3)
    logit = np.log(q / (1 - q))
    by_context = gen.standard_normal((n_contexts, 2))[data["context"].to_numpy()]
    data = data.assign(x1=logit + by_context[:, 0], x2=0.5 * logit + by_context[:, 1])
    return data, ["x1", "x2"]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--engines", nargs="+", default=["logistic", "catboost"])
    parser.add_argument("--n-contexts", type=int, default=200)
    parser.add_argument("--threads", type=int, default=1)
    parser.add_argument("--iterations", type=int, default=1000)
    parser.add_argument("--early-stopping", action=argparse.BooleanOptionalAction, default=True,
                        help="catboost: early stopping on an inner grouped split")
    args = parser.parse_args(argv)
    data, evidence = _design(args.n_contexts, 0)
    print(f"leakage_test at n = {len(data)} rows ({args.n_contexts} contexts x 5), 5 grouped "
          f"folds, base + full model, with and without evidence")
    timings: dict[str, float] = {}
    for engine in args.engines:
        if engine == "catboost":
            try:
                import catboost  # noqa: F401
            except ImportError:
                print("  catboost: not installed, skipped")
                continue
            options = {"iterations": args.iterations, "thread_count": args.threads,
                       "early_stopping": args.early_stopping}
        else:
            options = {}
        total = 0.0
        first = 0.0
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", coherence.CoherenceWarning)
            if engine == "logistic":  # warm-up: imports scikit-learn
                coherence.leakage_test(data, engine=engine, method="paired", rng=0)
            for ev in ((), tuple(evidence)):
                t0 = time.perf_counter()
                res = coherence.leakage_test(data, evidence=ev, engine=engine, method="paired",
                                             engine_options=options, rng=0)
                dt = time.perf_counter() - t0
                total += dt
                first = first or dt
                label = "with evidence" if ev else "belief only"
                print(f"  {engine:<9} {label:<14} {dt:8.2f} s   % Impr {res.statistic:6.2f} "
                      f"[{res.confidence_interval.low:.2f}, {res.confidence_interval.high:.2f}]",
                      flush=True)
            t0 = time.perf_counter()
            coherence.leakage_test(data, engine=engine, method="permutation", n_permutations=2,
                                   engine_options=options, rng=0)
            per_perm = (time.perf_counter() - t0 - first) / 2
        timings[engine] = total
        print(f"  {engine:<9} both variants  {total:8.2f} s; one permutation (5 refits of the "
              f"full model) about {max(per_perm, 0.0):.2f} s", flush=True)
    if len(timings) == 2:
        ratio = timings["catboost"] / timings["logistic"]
        print(f"  catboost / logistic time ratio: {ratio:.0f}x")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
