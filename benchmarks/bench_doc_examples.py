"""The documented examples that take long at their defaults, against the faster options the
docs now show, as ratios measured in one run.

``python -m benchmarks.bench_doc_examples [lie] [leakage] [plan] [elicit]`` (from the
repository root; all by default). One BLAS thread; wall seconds, the shared machine's, so
quote the ratios:

- ``lie``: docs/axioms.md's example, ``iterated_expectation_check`` on
  ``bayesnets.lie_study("child", agent="weighted", n_contexts=100, rng=0)`` with the
  random-forest baseline at its defaults, at the defaults inside
  ``joblib.parallel_config(n_jobs=2)`` (the grid searches' fits on two workers: the same
  forests, the same numbers, checked here) and with the small forest the example uses;
- ``leakage``: docs/guide.md step 3, ``leakage_test(standard, engine="catboost", rng=0)`` on
  a leaky agent's 200 x 5 study, against ``pvalue_engine="logistic"`` (the same
  statistic and interval, the logistic permutation p-value);
- ``plan``: ``coherence plan --agent leaky --effect 0.3 --test ci_test --contexts 50 100 200
  --repetitions 3 5`` (``coherence.plan``, 50 studies per design instead of 200: the ratio
  does not depend on it), each study's table drawn without simulate's truth (now) against
  ``simulate(...).data`` (before), alternately, with the tables' equality;
- ``elicit``: ``coherence elicit --base-url http://127.0.0.1:PORT --model x --probe 6`` with
  nothing listening, in this process (imports already done): the refused connection found
  before the network is loaded (now) against the network loaded and each call retried with
  backoff (before: the check skipped, the client's ``refused`` masked), alternately.
"""

from __future__ import annotations

import os
import sys
import time
from typing import Any

os.environ.setdefault("OMP_NUM_THREADS", "1")

#: the small forest of docs/axioms.md's example
FAST_FOREST = {"n_estimators": 25, "min_samples_leaf": (5, 20), "n_splits": 3}


def _timed(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def lie() -> None:
    import joblib

    import bayesnets
    from coherence import iterated_expectation_check

    study = bayesnets.lie_study("child", agent="weighted", n_contexts=100, rng=0)

    def check(**options: Any) -> Any:
        return iterated_expectation_check(
            study.data, ground_truth=study.ground_truth, contexts=study.contexts,
            evidence=list(study.evidence), rng=0, **options)

    t_default, r_default = _timed(check)
    with joblib.parallel_config(n_jobs=2):
        t_par, r_par = _timed(check)
    t_fast, r_fast = _timed(lambda: check(baseline_options=FAST_FOREST))
    same = (r_par.statistic == r_default.statistic and r_par.pvalue == r_default.pvalue
            and r_par.table.equals(r_default.table))
    print(f"  lie defaults: {t_default:6.1f} s  (median ratio {r_default.statistic:.3f}, "
          f"p = {r_default.pvalue:.2g})")
    print(f"  lie defaults, parallel_config(n_jobs=2): {t_par:6.1f} s "
          f"({t_default / t_par:.2f}x; identical result: {same})")
    print(f"  lie small forest {FAST_FOREST}: {t_fast:6.1f} s ({t_default / t_fast:.0f}x; "
          f"median ratio {r_fast.statistic:.3f}, p = {r_fast.pvalue:.2g})")


def leakage() -> None:
    import coherence

    data = coherence.simulate(coherence.Agent.leaky(), n_contexts=200, n_repetitions=5,
                              rng=0).data
    standard = data[data["prompt"] == "standard"]
    t_cat, r_cat = _timed(lambda: coherence.leakage_test(standard, engine="catboost", rng=0))
    t_log, r_log = _timed(lambda: coherence.leakage_test(standard, engine="catboost",
                                                          pvalue_engine="logistic", rng=0))
    print(f"  leakage catboost: {t_cat:6.1f} s (S = {r_cat.statistic:.2f}, "
          f"p = {r_cat.pvalue:.3g})")
    print(f"  leakage catboost, pvalue_engine='logistic': {t_log:6.1f} s "
          f"({t_cat / t_log:.0f}x; S = {r_log.statistic:.2f}, same S: "
          f"{r_log.statistic == r_cat.statistic}, p = {r_log.pvalue:.3g})")


def plan() -> None:
    import coherence
    import coherence._plan as plan_module

    drawn = plan_module._agent_study

    def before(agent: Any, test: str, n_ctx: int, n_rep: int, gen: Any) -> Any:
        return coherence.simulate(agent, n_contexts=n_ctx, n_repetitions=n_rep,
                                  prompts=("standard",), rng=gen).data

    def run() -> Any:
        return coherence.plan(coherence.Agent.leaky(), test="ci_test", n_contexts=[50, 100, 200],
                              n_repetitions=[3, 5], effect=0.3, n_sims=50, rng=0,
                              progress=False)

    walls: dict[str, list[float]] = {"before": [], "now": []}
    tables = {}
    for _ in range(2):
        for label, fn in (("before", before), ("now", drawn)):
            plan_module._agent_study = fn
            try:
                wall, res = _timed(run)
            finally:
                plan_module._agent_study = drawn
            walls[label].append(wall)
            tables[label] = res.table
    t_before, t_now = min(walls["before"]), min(walls["now"])
    print(f"  plan, 6 designs x 50 studies: with each study's truth {t_before:6.1f} s, "
          f"without {t_now:6.1f} s ({t_before / t_now:.1f}x; same table: "
          f"{tables['before'].equals(tables['now'])})")


def elicit() -> None:
    import contextlib
    import io
    import socket
    import tempfile

    import coherence_cli._elicit as cli_elicit
    import elicitation
    from coherence_cli import main

    with socket.socket() as sock:   # a free port, closed again: connections are refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    check, complete = cli_elicit.refused, elicitation.OpenAIClient.complete

    def masked(self: Any, request: Any) -> Any:
        try:
            return complete(self, request)
        except elicitation.TransientError as exc:
            raise elicitation.TransientError(str(exc)) from None

    walls: dict[str, list[float]] = {"before": [], "now": []}
    with tempfile.TemporaryDirectory() as tmp:
        for i in range(2):
            for label in ("before", "now"):
                if label == "before":
                    cli_elicit.refused = lambda *args, **kwargs: None
                    elicitation.OpenAIClient.complete = masked  # type: ignore[method-assign]
                argv = ["elicit", "--base-url", f"http://127.0.0.1:{port}/v1", "--model", "x",
                        "--probe", "6", "--quiet", "--cache", f"{tmp}/{label}{i}.sqlite"]
                try:
                    with contextlib.redirect_stdout(io.StringIO()), \
                            contextlib.redirect_stderr(io.StringIO()):
                        wall, code = _timed(lambda argv=argv: main(argv))
                finally:
                    cli_elicit.refused = check
                    elicitation.OpenAIClient.complete = complete  # type: ignore[method-assign]
                assert code == 1
                walls[label].append(wall)
    t_before, t_now = min(walls["before"]), min(walls["now"])
    print(f"  elicit --probe 6, no server, imports done: network loaded and calls retried "
          f"{t_before:5.2f} s, refused connection found first {t_now:5.3f} s "
          f"({t_before / t_now:.0f}x)")


def main(argv: list[str]) -> None:
    """Time the examples named in ``argv`` (all when empty)."""
    from threadpoolctl import threadpool_limits

    wanted = [name for name in ("lie", "leakage", "plan", "elicit")
              if not argv or name in argv]
    with threadpool_limits(1, user_api="blas"):
        for name in wanted:
            globals()[name]()


if __name__ == "__main__":
    main(sys.argv[1:])
