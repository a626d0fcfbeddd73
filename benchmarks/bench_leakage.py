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

Issue 18 (one numba thread, one BLAS thread)::

    nice -n 10 python -m benchmarks.bench_leakage --before-after main [--repeat 2]
    nice -n 10 python -m benchmarks.bench_leakage --margin [--seeds 0 1]
    nice -n 10 python -m benchmarks.bench_leakage --catboost-pvalue [--iterations 1000]

``--many-levels REF``: the logistic test with a 20-level categorical evidence column
(200 x 5, 199 permutations) against the belief-only test on the same data, before
(git ``REF``) and after, CPU seconds on one core, and the defaults' ``leakage_test(data)``
on 1000 rows; written to ``benchmarks/results/bench_leakage.json``.
``--before-after REF``: the logistic permutation test (1000 permutations) of the
code at git ``REF`` and of the working tree, alternately in fresh processes of one
run, as ratios, with both p-values. ``--margin``: over the designs of
:func:`_margin_designs`, the gap between the fast refits' permuted statistic and
scikit-learn's (what ``REFIT_MARGIN`` and ``SCALE_MARGIN`` must cover) and how many
permutations each margin sends on. ``--catboost-pvalue``: one catboost permutation
at the paper's settings, extrapolated to 199, against
``pvalue_engine='logistic'``.
"""

from __future__ import annotations

import argparse
import math
import time
import warnings
from typing import Any

import numpy as np

import coherence


def _design(n_contexts: int, rng: int) -> tuple[Any, list[str]]:
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
    parser.add_argument("--before-after", metavar="REF",
                        help="time the logistic permutation test of git REF against the "
                             "working tree")
    parser.add_argument("--n-permutations", type=int, default=1000)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--margin", action="store_true",
                        help="measure the fast refits' gap to scikit-learn's statistic")
    parser.add_argument("--seeds", type=int, nargs="+", default=[0, 1])
    parser.add_argument("--catboost-pvalue", action="store_true",
                        help="catboost permutation test vs pvalue_engine='logistic'")
    parser.add_argument("--many-levels", metavar="REF",
                        help="a 20-level categorical evidence column against belief only, "
                             "199 permutations, the code at git REF against the working "
                             "tree; with the defaults' timing; writes "
                             "benchmarks/results/bench_leakage.json")
    parser.add_argument("--many-levels-table", action="store_true",
                        help="only write docs/leakage.md's --many-levels table from the JSON")
    args = parser.parse_args(argv)
    if args.many_levels:
        many_levels(args.many_levels, args.repeat)
        return 0
    if args.many_levels_table:
        import json

        from benchmarks._harness import ROOT

        many_levels_table(json.loads(
            (ROOT / "benchmarks" / "results" / "bench_leakage.json").read_text()))
        return 0
    if args.before_after or args.margin or args.catboost_pvalue:
        from benchmarks._harness import one_thread

        one_thread()
        if args.before_after:
            before_after(args.before_after, args.n_permutations, args.repeat)
        if args.margin:
            margin_gap(min(args.n_permutations, 200), args.seeds)
        if args.catboost_pvalue:
            catboost_pvalue_cost(args.iterations, 199, args.early_stopping)
        return 0
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


# --------------------------------------------------------------------------- refit margin
def _margin_designs() -> list[tuple[str, Any, dict[str, Any]]]:
    """The designs of the fast-versus-scikit-learn gap: the paper's cells and the
    validation matrix's designs (benchmarks/leakage_designs.py), 2 to 4 actions."""
    from benchmarks.leakage_designs import LeakDesign
    from benchmarks.leakage_designs import generate

    cell = coherence.simulate(coherence.Agent.leaky(0.1), n_contexts=200, rng=3,
                              prompts=coherence.PROMPTS).data
    cell = cell[cell["prompt"] == "standard"]
    numeric, evidence = _design(200, 0)
    ref = LeakDesign()
    nom, binary = ref.with_(evidence="nominal"), ref.with_(evidence="binary")
    rare_action = generate(ref, 5)
    few = rare_action["context"].isin([3, 17, 40, 41])  # one action in 4 contexts only
    rare_action.loc[few, "action"] = "rare"
    rarest = generate(ref, 14)
    rarest.loc[rarest["context"].isin([5, 60]), "action"] = "rare"  # 2 contexts
    out: list[tuple[str, Any, dict[str, Any]]] = [
        ("report cell, leaky 0.1, belief only", cell, {}),
        ("leaky 0.3, 2 numeric evidence", numeric, {"evidence": evidence}),
        ("no evidence, 0.05 grid, 3 actions", generate(ref, 1), {}),
        ("no evidence, 2 actions", generate(ref.with_(n_actions=2), 2), {}),
        ("no evidence, 4 actions", generate(ref.with_(n_actions=4), 3), {}),
        ("continuous beliefs, shocks", generate(ref.with_(grid=None, belief_sd=0.05,
                                                          shock_sd=1.0), 4), {}),
        ("a rare action (4 contexts)", rare_action, {}),
        ("an action chosen in 2 contexts", rarest, {}),
        ("tiny study 20 x 3, 2 actions", generate(ref.with_(n_contexts=20, repetitions=3,
                                                             n_actions=2), 15), {}),
        ("rare outcomes, nominal evidence", generate(nom.with_(base_rate="rare"), 6),
         {"evidence": ["evidence"]}),
        ("nominal evidence, 4 actions", generate(nom.with_(n_actions=4), 7),
         {"evidence": ["evidence"]}),
        ("binary evidence, unequal repetitions", generate(binary.with_(
            shock_sd=1.0, repetitions=(1, 10)), 8), {"evidence": ["evidence"]}),
        ("nominal evidence within contexts", generate(nom.with_(
            evidence_within=True, grid=None, belief_sd=0.03, shock_sd=1.0), 9),
         {"evidence": ["evidence"]}),
        ("small study 40 x 3, binary evidence", generate(binary.with_(
            n_contexts=40, repetitions=3), 10), {"evidence": ["evidence"]}),
        ("leak 0.5, no evidence", generate(ref.with_(leak=0.5), 11), {}),
        ("C = 0.1", generate(ref, 12), {"engine_options": {"C": 0.1}}),
        ("C = 10", generate(ref, 13), {"engine_options": {"C": 10.0}}),
        ("C = 100, 2 actions", generate(ref.with_(n_actions=2), 16),
         {"engine_options": {"C": 100.0}}),
    ]
    return out


def margin_gap(n_permutations: int, seeds: list[int]) -> float:
    """The largest gap, over designs and permutations, between the fast refits' permuted
    statistic and scikit-learn's (in units of ``max(1, |S|)``, as ``REFIT_MARGIN``, and
    of :func:`sklearn_error_scale`), how many permutations the fixed margin alone and
    the full margin send to the replay, and the replay's own gap to scikit-learn when
    it is given every permutation (with how many it declined to scikit-learn)."""
    from coherence._decision import _leakage
    from coherence._decision import _leakage_null

    worst = worst_ratio = 0.0
    null = _leakage_null
    margin, kappa, tie = null.REFIT_MARGIN, null.SCALE_MARGIN, null.REPLAY_MARGIN
    worst_replay = 0.0
    error_scale = _leakage_null.sklearn_error_scale
    recorded: list[float] = []

    def record(*args: Any) -> float:
        recorded.append(error_scale(*args))
        return recorded[-1]

    oof_losses = _leakage.oof_losses
    calls = [0]

    def counted(*args: Any) -> Any:
        calls[0] += 1
        return oof_losses(*args)

    print(f"fast refits vs scikit-learn, {n_permutations} permutations x {len(seeds)} seeds "
          f"per design; gap in units of max(1, |S|)")
    for name, data, kw in _margin_designs():
        gaps: list[np.ndarray] = []
        close: list[np.ndarray] = []
        ratios: list[np.ndarray] = []
        scales: list[float] = []
        replay_gaps: list[np.ndarray] = []
        declined = 0
        for seed in seeds:
            runs = []
            for fast, inside in ((True, -1.0), (False, -1.0), (True, np.inf)):
                _leakage.FAST_REFITS = fast
                _leakage_null.REFIT_MARGIN = inside  # -1: no replays nor refits; inf: all
                _leakage_null.SCALE_MARGIN = -1.0
                _leakage_null.REPLAY_MARGIN = -1.0  # no ties sent to scikit-learn
                _leakage_null.sklearn_error_scale = record  # type: ignore[assignment]
                _leakage.oof_losses = counted  # type: ignore[assignment]
                calls[0] = 0
                try:
                    with warnings.catch_warnings():
                        warnings.simplefilter("ignore", coherence.CoherenceWarning)
                        runs.append(coherence.leakage_test(
                            data, engine="logistic", n_permutations=n_permutations,
                            n_resamples=1, rng=seed, **kw))
                finally:
                    _leakage.FAST_REFITS, _leakage_null.sklearn_error_scale = True, error_scale
                    _leakage_null.REFIT_MARGIN, _leakage_null.SCALE_MARGIN = margin, kappa
                    _leakage_null.REPLAY_MARGIN, _leakage.oof_losses = tie, oof_losses
            declined += calls[0] - 2  # scikit-learn refits beyond the two observed models
            gap = np.abs(runs[0].null_distribution - runs[1].null_distribution)
            unit = max(1.0, abs(runs[1].statistic))
            replay_gaps.append(np.abs(runs[2].null_distribution - runs[1].null_distribution)
                               / unit)
            old = np.abs(runs[1].null_distribution - runs[1].statistic) <= margin * unit
            new = np.abs(runs[1].null_distribution - runs[1].statistic) <= max(
                margin * unit, kappa * recorded[-1])
            gaps.append(gap / unit)
            ratios.append(gap / recorded[-1])
            scales.append(recorded[-1])
            close.append(np.array([old.sum(), new.sum(), len(old)]))
        gap, ratio, counts = np.concatenate(gaps), np.concatenate(ratios), np.sum(close, axis=0)
        worst = max(worst, float(np.nanmax(gap)))
        worst_ratio = max(worst_ratio, float(np.nanmax(ratio)))
        replay_gap = float(np.max(np.concatenate(replay_gaps)))
        worst_replay = max(worst_replay, replay_gap)
        print(f"  {name:<38} gap max {np.nanmax(gap):.1e} median {np.nanmedian(gap):.0e}; "
              f"scale {min(scales):.2f}-{max(scales):.2f}, gap / scale max "
              f"{np.nanmax(ratio):.3f}; unconverged {int(np.isnan(gap).sum())}; inside "
              f"{counts[0]} -> {counts[1]} of {counts[2]}; replay gap {replay_gap:.0e}, "
              f"declined {declined}", flush=True)
    print(f"  largest gap {worst:.2e} (REFIT_MARGIN = {margin:g}); largest gap / scale "
          f"{worst_ratio:.3f} (SCALE_MARGIN = {kappa:g}, {kappa / worst_ratio:.1f} times it); "
          f"largest replay gap {worst_replay:.0e}")
    return worst


# --------------------------------------------------------------------------- before / after
_CHILD = """
import json, pickle, sys, time, warnings
sys.path.insert(0, sys.argv[1])
import numba
from threadpoolctl import threadpool_limits
import coherence
assert coherence.__file__.startswith(sys.argv[1]), coherence.__file__
numba.set_num_threads(1)
threadpool_limits(1)
warnings.simplefilter("ignore")
cases = pickle.load(open(sys.argv[2], "rb"))
n_perm = int(sys.argv[3])
for _, data, kw in cases:  # warm-up: numba compilation, imports
    coherence.leakage_test(data, engine="logistic", n_permutations=3, n_resamples=10, rng=0, **kw)
out = []
for name, data, kw in cases:
    t0, c0 = time.perf_counter(), time.process_time()
    res = coherence.leakage_test(data, engine="logistic", n_permutations=n_perm, rng=0, **kw)
    out.append({"case": name, "seconds": time.perf_counter() - t0,
                "cpu_seconds": time.process_time() - c0, "pvalue": res.pvalue,
                "statistic": res.statistic, "null": res.null_distribution.tolist()})
print(json.dumps(out))
"""


def _cases() -> list[tuple[str, Any, dict[str, Any]]]:
    """The report cell of a leaky agent (S near 0, so many permuted
    statistics fall near it) and the cell of ``bench_speed.py`` (belief only; two
    evidence columns): 200 contexts x 5 repetitions, the 'standard' prompt's rows."""
    near = coherence.simulate(coherence.Agent.leaky(0.1), n_contexts=200, rng=3,
                              prompts=coherence.PROMPTS).data
    study = coherence.simulate(coherence.Agent.leaky(0.3), n_contexts=200, rng=0,
                               prompts=coherence.PROMPTS).data
    by_context = np.random.default_rng(0).standard_normal((200, 2))[study["context"].to_numpy()]
    cell = study.assign(x1=by_context[:, 0], x2=by_context[:, 1])
    cell = cell[cell["prompt"] == "standard"]
    return [("leaky 0.1 (S near 0), belief only", near[near["prompt"] == "standard"], {}),
            ("bench_speed cell, belief only", cell, {}),
            ("bench_speed cell, 2 evidence columns", cell, {"evidence": ["x1", "x2"]})]


def _many_level_cases() -> list[tuple[str, Any, dict[str, Any]]]:
    """A 20-level categorical evidence column (a topic, one per context) against the
    belief-only test on the same data: 200 contexts x 5 repetitions, a rational agent
    and a leaky one (0.3)."""
    out = []
    for agent, label in (("rational", "rational"), (coherence.Agent.leaky(0.3), "leaky 0.3")):
        data = coherence.simulate(agent, n_contexts=200, rng=0).data
        topic = np.random.default_rng(0).integers(0, 20, 200)[data["context"].to_numpy()]
        data = data.assign(topic=[f"t{t}" for t in topic])
        out += [(f"{label}, belief only", data, {}),
                (f"{label}, 20-level topic", data, {"evidence": ["topic"]})]
    return out


def before_after(ref: str, n_permutations: int, repeat: int,
                 cases: list[tuple[str, Any, dict[str, Any]]] | None = None
                 ) -> list[dict[str, Any]]:
    """``leakage_test(engine='logistic')`` of the code at git ``ref`` (before) and of the
    working tree (after), alternately in fresh processes of this one run, one numba and
    one BLAS thread each; best of ``repeat`` (wall and CPU seconds); the p-values of both
    must be equal. ``cases``: :func:`_cases` by default."""
    cases = _cases() if cases is None else cases
    import json
    import pickle
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    from benchmarks._harness import ROOT

    with tempfile.TemporaryDirectory() as tmp:
        before = Path(tmp) / "before"
        before.mkdir()
        archive = subprocess.run(["git", "archive", ref, "coherence"], cwd=ROOT, check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(before)], input=archive, check=True)
        cases_file = Path(tmp) / "cases.pkl"
        cases_file.write_bytes(pickle.dumps(cases))
        best: dict[tuple[str, str], dict[str, Any]] = {}
        for _ in range(repeat):
            for label, path in (("before", before), ("after", ROOT)):
                done = subprocess.run([sys.executable, "-c", _CHILD, str(path),
                                       str(cases_file), str(n_permutations)], cwd=tmp,
                                      check=True, capture_output=True, text=True)
                for row in json.loads(done.stdout.strip().splitlines()[-1]):
                    key = (row["case"], label)
                    if key not in best or row["seconds"] < best[key]["seconds"]:
                        best[key] = row
    rows = []
    print(f"leakage_test(engine='logistic', n_permutations={n_permutations}), 1 numba "
          f"thread, 1 BLAS thread, best of {repeat}; before = {ref}")
    for name, _, _ in cases:
        b, a = best[(name, "before")], best[(name, "after")]
        gap = float(np.max(np.abs(np.subtract(b["null"], a["null"]))))
        rows.append({"case": name, "before_s": b["seconds"], "after_s": a["seconds"],
                     "ratio": b["seconds"] / a["seconds"],
                     "before_cpu_s": b.get("cpu_seconds"), "after_cpu_s": a.get("cpu_seconds"),
                     "pvalue_before": b["pvalue"], "pvalue_after": a["pvalue"],
                     "pvalues_equal": b["pvalue"] == a["pvalue"],
                     "statistic_before": b["statistic"], "statistic_after": a["statistic"],
                     "null_max_gap": gap})
        print(f"  {name:<38} {b['seconds']:6.2f} s -> {a['seconds']:6.2f} s  "
              f"(CPU {b.get('cpu_seconds', math.nan):.2f} -> "
              f"{a.get('cpu_seconds', math.nan):.2f}) "
              f"{b['seconds'] / a['seconds']:5.1f}x  p {b['pvalue']:.4f} / {a['pvalue']:.4f} "
              f"({'equal' if b['pvalue'] == a['pvalue'] else 'DIFFERENT'}); null max gap "
              f"{gap:.1e}", flush=True)
    return rows


# --------------------------------------------------------------------------- catboost p-value
def catboost_pvalue_cost(iterations: int, n_permutations: int,
                         early_stopping: bool = True) -> list[dict[str, Any]]:
    """The CatBoost permutation test's cost against ``pvalue_engine='logistic'``'s.

    On the paper's design (:func:`_design`; belief only, then with the two evidence
    columns), catboost with ``iterations`` and one thread: ``method='paired'`` (the
    statistic alone), 2 permutations (the extra time over 'paired', halved, is one
    permutation: a catboost refit in each of 5 folds), extrapolated to
    ``n_permutations``; and the hybrid, timed whole."""
    data, evidence = _design(200, 0)
    options = {"iterations": iterations, "thread_count": 1, "early_stopping": early_stopping}
    rows = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", coherence.CoherenceWarning)
        coherence.leakage_test(data, engine="logistic", n_permutations=3, rng=0)  # warm-up
        for variant in ((), tuple(evidence)):
            times: dict[str, float] = {}
            for label, kw in (("paired", {"method": "paired"}),
                              ("two permutations", {"n_permutations": 2}),
                              ("hybrid", {"pvalue_engine": "logistic",
                                          "n_permutations": n_permutations})):
                t0 = time.perf_counter()
                res = coherence.leakage_test(data, engine="catboost", engine_options=options,
                                             evidence=variant, rng=0, **kw)
                times[label] = time.perf_counter() - t0
                print(f"  catboost, {len(variant)} evidence columns, {label:<17} "
                      f"{times[label]:8.1f} s  S = {res.statistic:.3f}, p = {res.pvalue:.4f}",
                      flush=True)
            per = (times["two permutations"] - times["paired"]) / 2
            full = times["paired"] + n_permutations * per
            print(f"  one catboost permutation (5 refits) {per:.1f} s; n_permutations = "
                  f"{n_permutations}: about {full / 60:.1f} min with catboost refits, "
                  f"{times['hybrid']:.1f} s with pvalue_engine='logistic' "
                  f"({full / times['hybrid']:.0f}x)", flush=True)
            rows.append({"evidence": len(variant), "per_permutation_s": per,
                         "catboost_permutation_s": full, "hybrid_s": times["hybrid"]})
    return rows

def many_levels(ref: str, repeat: int) -> dict[str, Any]:
    """``--many-levels``: :func:`before_after` on :func:`_many_level_cases` (199
    permutations), the ratio of each topic case to its belief-only case in the same run,
    and ``leakage_test(data)`` at its defaults (working tree, one core); JSON out."""
    import json

    from benchmarks._harness import ROOT
    from benchmarks._harness import environment
    from benchmarks._harness import one_thread

    one_thread()
    rows = before_after(ref, 199, repeat, _many_level_cases())
    by_case = {r["case"]: r for r in rows}
    for r in rows:
        if "topic" in r["case"]:
            base = by_case[r["case"].replace("20-level topic", "belief only")]
            r["after_cpu_over_belief_only"] = r["after_cpu_s"] / base["after_cpu_s"]
            r["before_cpu_over_belief_only"] = r["before_cpu_s"] / base["before_cpu_s"]
    data = _many_level_cases()[0][1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", coherence.CoherenceWarning)
        coherence.leakage_test(data, n_permutations=3, n_resamples=10, rng=0)  # warm-up
        t0, c0 = time.perf_counter(), time.process_time()
        res = coherence.leakage_test(data, rng=0)
        defaults = {"rows": len(data), "engine": res.engine,
                    "n_permutations": res.n_permutations,
                    "seconds": time.perf_counter() - t0, "cpu_seconds": time.process_time() - c0}
    print(f"  leakage_test(data) at its defaults ({len(data)} rows, engine {res.engine!r}): "
          f"{defaults['cpu_seconds']:.2f} s CPU", flush=True)
    out = {"script": "benchmarks/bench_leakage.py --many-levels " + ref,
           "environment": environment(), "threads": "1 numba, 1 BLAS",
           "before_ref": ref, "many_levels": rows, "defaults_1000_rows": defaults}
    path = ROOT / "benchmarks" / "results" / "bench_leakage.json"
    path.write_text(json.dumps(out, indent=1) + "\n")
    many_levels_table(out)
    print(f"written {path.relative_to(ROOT)} and the table of docs/leakage.md")
    return out


def many_levels_table(out: dict[str, Any]) -> None:
    """The ``--many-levels`` table of ``docs/leakage.md``, from the JSON."""
    from benchmarks._harness import ROOT
    from benchmarks._harness import write_tables

    lines = [f"Measured with `python -m benchmarks.bench_leakage --many-levels "
             f"{out['before_ref']}` (`leakage_test(engine=\"logistic\", "
             f"n_permutations=199)`, 200 contexts x 5, one numba and one BLAS thread, the "
             f"code before (`{out['before_ref']}`) and after in fresh processes of one run, "
             f"CPU seconds, best of 2, a shared 2-core machine; commit "
             f"`{out['environment']['commit'][:7]}`):", "",
             "| case | before (s CPU) | after (s CPU) | ratio | after / belief only | "
             "p-values |", "| --- | --- | --- | --- | --- | --- |"]
    for r in out["many_levels"]:
        rel = r.get("after_cpu_over_belief_only")
        lines.append(
            f"| {r['case']} | {r['before_cpu_s']:.2f} | {r['after_cpu_s']:.2f} | "
            f"{r['before_cpu_s'] / r['after_cpu_s']:.1f}x | "
            f"{'' if rel is None else f'{rel:.0f}x'} | "
            f"{'equal' if r['pvalues_equal'] else 'DIFFERENT'} ({r['pvalue_after']:.4f}) |")
    d = out["defaults_1000_rows"]
    lines += ["", f"`leakage_test(data)` at its defaults (engine `{d['engine']}`, "
              f"{d['n_permutations']} permutations, {d['rows']} rows, belief only): "
              f"{d['cpu_seconds']:.2f} s of CPU."]
    write_tables(ROOT / "docs" / "leakage.md", "bench_leakage.py --many-levels",
                 "\n".join(lines))


if __name__ == "__main__":
    raise SystemExit(main())
