"""Size and power of the leakage test's two p-values and of the monotone-choice test's
parametric bootstrap, on the package's simulated agents.

Simulates studies from the agents of :mod:`coherence._decision._simulate` (the oracle: the
truth of each null is exact) and records the rejection rate at alpha = 0.05 with its 95%
Wilson interval in ``benchmarks/results/validate_decision_tests.json`` (versions, commit,
machine); ``--tables`` writes the tables of ``docs/validation_decision.md`` from it::

    nice -n 10 python -m benchmarks.validate_decision_tests [--only leakage] [--jobs 2]
    python -m benchmarks.validate_decision_tests --tables

The leakage cells run ``--reps`` studies for the rational agent and half as many for the
others; the monotone cells run ``--monotone-reps``. A study's seed is its index (the study
``10_000 + r`` for leakage, ``20_000 + r`` for monotone choice; the test ``r``), as when
the page's tables were first printed by hand. Prompt consistency, once a section here,
has its own matrix (``benchmarks/validate_consistency.py``), and so have the monotone
test's default methods (``benchmarks/validate_monotonicity.py``).
"""

from __future__ import annotations

import sys
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np

import coherence
from benchmarks._harness import appended_note
from benchmarks._harness import format_rate
from benchmarks._harness import generated_by
from benchmarks._harness import markdown_table
from benchmarks._harness import matrix_parser
from benchmarks._harness import one_thread
from benchmarks._harness import only_words
from benchmarks._harness import rejection_rate
from benchmarks._harness import start_results
from benchmarks._harness import store_cell
from benchmarks._harness import tables_if_asked

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "validate_decision_tests.json"
DOC = ROOT / "docs" / "validation_decision.md"
ALPHA = 0.05
N_CONTEXTS = 200

#: leakage agents: (name, what is true, the agent, with two evidence columns, methods)
LEAKAGE = (
    ("rational (grid 0.05)", "*a* ⊥ *y* \\| *p* exactly", "rational", False,
     ("permutation", "paired")),
    ("rational, report noise 0.03 on a 0.01 grid",
     "mild violation given the report (see below)", "noisy", False, ("permutation", "paired")),
    ("leaky, strength 0.2", "*a* depends on *y* given *p*", "leaky0.2", False,
     ("permutation", "paired")),
    ("leaky, strength 0.5 (default)", "*a* depends on *y* given *p*", "leaky0.5", False,
     ("permutation", "paired")),
    ("rational, with two evidence columns *x*", "*a* ⊥ *y* \\| (*p*, *x*)", "rational", True,
     ("permutation",)),
    ("leaky 0.2, with two evidence columns *x*", "*a* depends on *y* given (*p*, *x*)",
     "leaky0.2", True, ("permutation",)),
)
#: monotone agents: (name, the agent)
MONOTONE = (
    ("rational (T = 0.1, steep shares)", "rational"),
    ("rational, T = 2 (nearly flat shares: least favourable null)", "flat"),
    ("nonmonotone (band 0.4–0.6)", "nonmonotone"),
)


def _agent(key: str) -> Any:
    agents = {
        "rational": lambda: coherence.Agent.rational(),
        "noisy": lambda: coherence.Agent.rational(report_noise=0.03, grid=0.01),
        "leaky0.5": lambda: coherence.Agent.leaky(0.5),
        "leaky0.2": lambda: coherence.Agent.leaky(0.2),
        "flat": lambda: coherence.Agent.rational(temperature=2.0),
        "nonmonotone": lambda: coherence.Agent.nonmonotone(),
    }
    return agents[key]()


def _with_evidence(data: Any, r: int) -> tuple[Any, tuple[str, ...]]:
    """Two context-level evidence columns: x1 = logit(q) + N(0, 1), x2 = logit(q)/2 +
    N(0, 1), q the true posterior."""
    gen = np.random.default_rng(r)
    q = np.clip(data["truth"].to_numpy(), 1e-3, 1 - 1e-3)
    noise = gen.standard_normal((N_CONTEXTS, 2))[data["context"].to_numpy()]
    logit = np.log(q / (1 - q))
    return data.assign(x1=logit + noise[:, 0], x2=0.5 * logit + noise[:, 1]), ("x1", "x2")


def _leakage_cell(spec: tuple[Any, ...], reps: int, n_permutations: int) -> dict[str, Any]:
    from coherence._decision._leakage import leakage_test

    name, truth, key, with_x, methods = spec
    agent = _agent(key)
    pvalues: dict[str, list[float]] = {m: [] for m in methods}
    impr: list[float] = []
    for r in range(reps):
        data = coherence.simulate(agent, n_contexts=N_CONTEXTS, rng=10_000 + r).data
        evidence: tuple[str, ...] = ()
        if with_x:
            data, evidence = _with_evidence(data, r)
        for m in methods:
            res = leakage_test(data, evidence=evidence, engine="logistic", method=m,
                               n_permutations=n_permutations, n_resamples=200, rng=r)
            pvalues[m].append(res.pvalue)
            if m == methods[0]:
                impr.append(res.statistic)
    return {"design": name, "truth": truth, "reps": reps, "n_permutations": n_permutations,
            **{m: rejection_rate(np.asarray(p) <= ALPHA) for m, p in pvalues.items()},
            "mean_impr": float(np.mean(impr))}


def _monotone_cell(spec: tuple[str, str], reps: int, n_resamples: int) -> dict[str, Any]:
    from coherence._decision._monotone import monotonicity_test

    name, key = spec
    agent = _agent(key)
    glob, per_pair, fisher, violation = [], [], [], []
    pairs: list[str] = []
    for r in range(reps):
        data = coherence.simulate(agent, n_contexts=N_CONTEXTS, rng=20_000 + r).data
        res = monotonicity_test(data, method="bootstrap", n_resamples=n_resamples, rng=r)
        pairs = [str(p) for p in res.table["pair"]]
        glob.append(res.pvalue)
        per_pair.append(res.table["pvalue"].to_numpy(float))
        fisher.append(res.table["n_significant"].to_numpy(float) > 0)
        violation.append(res.table["statistic"].to_numpy(float))
    p, f, v = np.array(per_pair), np.array(fisher), np.array(violation)
    return {"design": name, "reps": reps, "n_resamples": n_resamples, "pairs": pairs,
            "global": rejection_rate(np.asarray(glob) <= ALPHA),
            "isotonic": [rejection_rate(p[:, j] <= ALPHA) for j in range(len(pairs))],
            "fisher_share": [float(f[:, j].mean()) for j in range(len(pairs))],
            "mean_violation_pct": [float(v[:, j].mean()) for j in range(len(pairs))]}


def run_cell(part: str, spec: tuple[Any, ...], args: Any) -> dict[str, Any]:
    one_thread()
    t0 = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", coherence.CoherenceWarning)
        if part == "leakage":
            reps = args.reps if spec[2] == "rational" and not spec[3] else args.reps // 2
            row = _leakage_cell(spec, reps, args.n_resamples)
        else:
            row = _monotone_cell(spec, args.monotone_reps, args.monotone_resamples)
    row["seconds"] = time.perf_counter() - t0
    print(f"{part:8s} {row['design']:60s} ({row['seconds']:.0f} s)", flush=True)
    return row


def plan() -> list[tuple[str, tuple[Any, ...]]]:
    return [("leakage", s) for s in LEAKAGE] + [("monotone", s) for s in MONOTONE]


def _rate(r: dict[str, Any] | None) -> str:
    return "not run" if r is None else format_rate(r)


def tables(results: dict[str, Any]) -> str:
    """The leakage table and the two monotone tables of docs/validation_decision.md."""
    env, s = results["environment"], results["settings"]
    lines = [generated_by("validate_decision_tests", env) + f"); {N_CONTEXTS} contexts x 5 "
             f"repetitions; leakage: {s['n_permutations']} grouped permutations, 5 grouped "
             f"folds; monotone choice: {s['monotone_resamples']} parametric-bootstrap "
             "resamples, the likelihood ratio over the distinct belief values, the Fisher "
             "procedure on the default 5 quantile bins (the paper's); alpha = 0.05, 95% "
             "Wilson intervals in brackets." + appended_note(results),
             "", "### Leakage test (`leakage_test`, engine `logistic`)", ""]
    lines += markdown_table(
        ["agent", "truth", "studies", '`method="permutation"`', '`method="paired"`',
         "mean % Impr"],
        [(r["design"], r["truth"], r["reps"], _rate(r.get("permutation")),
          _rate(r.get("paired")), f"{r['mean_impr']:.2f}")
         for r in results.get("leakage", [])])
    mono = results.get("monotone", [])
    if mono:
        pairs = mono[0]["pairs"]
        lines += ["", "### Monotone choice, parametric bootstrap: the isotonic "
                  "likelihood-ratio test", "", *markdown_table(
                      ["agent", "studies", *pairs, "global (Bonferroni over pairs)"],
                      [(r["design"], r["reps"], *map(format_rate, r["isotonic"]),
                        format_rate(r["global"])) for r in mono]),
                  "", "### Monotone choice: the paper's Fisher procedure", "",
                  "Share of studies with at least one significant violation at 0.05 "
                  "(unadjusted); mean violation %.", "", *markdown_table(
                      ["agent", *pairs],
                      [(r["design"], *(f"{sh:.3f}; {v:.2f}%" for sh, v in
                                       zip(r["fisher_share"], r["mean_violation_pct"],
                                           strict=True))) for r in mono])]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = matrix_parser(__doc__, results=RESULTS, page="docs/validation_decision.md",
                           n_resamples=39, reps=200, power_reps=None,
                           only="comma-separated words of 'part: agent' (leakage, monotone, "
                                "leaky, ...): the cells to run",
                           prog="python -m benchmarks.validate_decision_tests")
    parser.add_argument("--monotone-reps", type=int, default=400)
    parser.add_argument("--monotone-resamples", type=int, default=99)
    parser.add_argument("--jobs", type=int, default=1, help="cells run at once")
    parser.set_defaults(power_reps=None)
    args = parser.parse_args(argv)
    if tables_if_asked(args, DOC, "validate_decision_tests.py", tables):
        return 0
    results = start_results(args, ALPHA, n_permutations=args.n_resamples,
                            n_contexts=N_CONTEXTS, monotone_reps=args.monotone_reps,
                            monotone_resamples=args.monotone_resamples)
    only = only_words(args)
    cells = [c for c in plan() if not only or any(w in f"{c[0]}: {c[1][0]}" for w in only)]
    order = [spec[0] for _, spec in plan()]
    if args.jobs > 1:
        from joblib import Parallel
        from joblib import delayed

        rows = Parallel(n_jobs=args.jobs)(delayed(run_cell)(p, s, args) for p, s in cells)
        for (part, _), row in zip(cells, rows, strict=True):
            store_cell(results, part, row, order, args.out)
    else:
        for part, spec in cells:  # each cell stored as it ends
            store_cell(results, part, run_cell(part, spec, args), order, args.out)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
