"""How the time of a public function grows with its input: the paths that were quadratic.

Run from the repository root (a few CPU-minutes)::

    nice -n 10 python -m benchmarks.bench_scaling [--only WORD ...] [--repeat 3]
        [--before REF]

Each case times one call at three sizes, ``n``, ``4 n`` and ``16 n`` (the best of
``--repeat`` runs), and reports the growth exponent between the last two,
``log(t(16 n) / t(4 n)) / log 4``: about 1 for a linear path, 2 for a quadratic one
(below 0.05 s the timer's noise dominates, and the exponent is left out). With
``--before REF``, the same cases also run on the package as it was at commit ``REF``
(a temporary git worktree), in this one run on the same inputs, and each case reports
``before / after`` at its largest size. Both runs are subprocesses of this script that
import their package first, so neither times its cases in a heap the other lacks. A
case whose input the package at ``REF`` refuses, or does not know, is left without a
``before``.

Writes ``benchmarks/results/bench_scaling.json`` (versions, commit, machine, every
timing) and the table of ``docs/speed.md`` ("How time grows with the input"); with
``--tables``, only the table, from the JSON.

A case is ``name: (area, base size, build)``, where ``build(n)`` makes the input of
size ``n`` and returns the call to time (its set-up is not timed).
"""

from __future__ import annotations

import argparse
import atexit
import json
import math
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
OUT = ROOT / "benchmarks" / "results" / "bench_scaling.json"
DOC = ROOT / "docs" / "speed.md"
SCRIPT = "bench_scaling.py"
#: Below this many seconds at 16 n, the growth exponent is noise and is not reported.
MIN_SECONDS = 0.05

Build = Callable[[int], Callable[[], Any]]


# --------------------------------------------------------------------------- elicitation
#: the answer lines after a run of decoration
_ANSWER = "\nYes: 0.7\nNo: 0.3"


def _reply_after(head: str, char: str, tail: str = "") -> Build:
    """A reply that is ``head``, a run of ``n`` copies of ``char`` and ``tail`` (a small
    model that loops on one token writes such runs: before its answer, after a label, or
    of a digit)."""
    def build(n: int) -> Callable[[], Any]:
        import elicitation

        text = head + char * n + tail
        return lambda: (elicitation.parse_probabilities(text),
                        elicitation.parse_decision(text))
    return build


def _reply_words(n: int) -> Callable[[], Any]:
    """A long reply of ``n`` words drawn from those the parsers look for."""
    import random

    import elicitation

    words = ["Yes", "No", "the", "probability", "0.7", "70%", "not", "Decision:", "wait",
             "P(Yes)", "=", ":", "\n", "**", "maybe", "at least", "<", "0.3",
             "Final answer:", "Can decide:", "(", ")", '"Yes"', "Yes:", "No:"]
    gen = random.Random(0)
    text = " ".join(gen.choice(words) for _ in range(n))
    return lambda: (elicitation.parse_probabilities(text), elicitation.parse_decision(text))


ELICITATION_CASES: dict[str, tuple[str, int, Build]] = {
    "parse a reply with a run of spaces": ("elicitation", 1000, _reply_after("", " ", _ANSWER)),
    "parse a reply with a run of line breaks": (
        "elicitation", 1000, _reply_after("", "\n", _ANSWER)),
    "parse a reply with a run of asterisks": (
        "elicitation", 1000, _reply_after("", "*", _ANSWER)),
    "parse a reply with a run of asterisks after a label": (
        "elicitation", 100, _reply_after("Yes", "*")),
    "parse a reply with a run of asterisks after its answer lines": (
        "elicitation", 1000, _reply_after("Can decide: Yes\nDecision: No\n", "*")),
    "parse a reply with a run of digits and a letter": (
        "elicitation", 1000, _reply_after("", "0", "x")),
    "parse a long reply of answer words": ("elicitation", 2000, _reply_words),
}


# --------------------------------------------------------------------------- decision and report
def _study(n_contexts: int, n_cells: int = 1,
           prompts: tuple[str, ...] = ("standard", "mse")) -> Any:
    """A simulated study of ``n_cells`` cells (models x 2 datasets), 3 repetitions."""
    import pandas as pd

    import coherence

    parts = []
    for i in range(n_cells):
        part = coherence.simulate(n_contexts=n_contexts, n_repetitions=3, prompts=prompts,
                                  rng=i).data
        parts.append(part.assign(model=f"model-{i // 2}", dataset=f"data-{i % 2}"))
    return pd.concat(parts, ignore_index=True)


def _cli_test_table(n: int) -> Callable[[], Any]:
    """``coherence test`` on a CSV file of ``n`` contexts per cell (2 cells, 2 prompts,
    3 repetitions: 12 n rows), the cheap calibration test alone: reading the file."""
    import contextlib
    import io

    import coherence_cli

    folder = tempfile.mkdtemp()
    atexit.register(shutil.rmtree, folder, True)   # the file outlives build(), not the run
    path = Path(folder) / "study.csv"
    _study(n, n_cells=2).to_csv(path, index=False)

    def call() -> Any:
        with contextlib.redirect_stdout(io.StringIO()), \
                contextlib.redirect_stderr(io.StringIO()):
            return coherence_cli.main(["test", str(path), "--tests", "calibration",
                                       "--resamples", "9", "--quiet"])
    return call


def _report_cells(n: int) -> Callable[[], Any]:
    """``report`` on ``n`` cells of 40 contexts (the calibration and prompt-consistency
    tests), with its Markdown summary."""
    import coherence

    data = _study(40, n_cells=n)
    return lambda: coherence.report(data, tests=["calibration", "prompt_consistency"],
                                    n_resamples=9, progress=False, rng=0).to_markdown()


def _decision_call(test: str, **kwargs: Any) -> Build:
    """One decision test on a study of ``n`` contexts (one prompt), few resamples."""
    def build(n: int) -> Callable[[], Any]:
        import coherence

        data = _study(n, prompts=("standard",))
        return lambda: getattr(coherence, test)(data, rng=0, **kwargs)
    return build


def _consistency_prompts(n: int) -> Callable[[], Any]:
    """``prompt_consistency`` (permutation) on ``n`` prompt variants of 60 contexts."""
    import coherence
    from benchmarks import consistency_designs as designs

    prompts = ("standard", *(f"variant-{i}" for i in range(n - 1)))
    data = designs.generate(designs.Design(prompts=prompts, noise=(0.03,) * n,
                                           repetitions=(5,) * n), 0)
    return lambda: coherence.prompt_consistency(data, method="permutation", n_resamples=9,
                                                rng=0)


def _diagnostics_text_actions(n: int) -> Callable[[], Any]:
    """``elicitation_diagnostics`` on ``n`` contexts x 5 repetitions, the actions as text
    (as a CSV file reads them)."""
    import coherence

    data = coherence.simulate(n_contexts=n, rng=0).data
    data = data.assign(action=data["action"].astype(str))
    return lambda: coherence.elicitation_diagnostics(data)


DECISION_CASES: dict[str, tuple[str, int, Build]] = {
    "coherence test: read a CSV of many contexts": ("cli", 1000, _cli_test_table),
    "report: many cells": ("report", 2, _report_cells),
    "ci_test: many contexts": ("decision", 500, _decision_call(
        "ci_test", n_resamples=9, ci_method=None)),
    "leakage_test: many contexts": ("decision", 100, _decision_call(
        "leakage_test", n_permutations=5, n_resamples=5, n_fold_draws=1)),
    "elicitation_diagnostics: many rows of text actions": ("decision", 4000,
                                                          _diagnostics_text_actions),
    "prompt_consistency: many prompts": ("decision", 4, _consistency_prompts),
}


# --------------------------------------------------------------------------- probability
def _pairs_table(n_cells: int, per_cell: int) -> Any:
    """A pairs table of ``n_cells`` categories of ``per_cell`` coherent pairs each (the six
    numbers from one joint per pair, outcomes drawn from it)."""
    import numpy as np
    import pandas as pd

    gen = np.random.default_rng(0)
    n = n_cells * per_cell
    joint = gen.dirichlet(np.ones(4), size=n)
    j11, j10, j01, _ = joint.T
    p_a, p_b = j11 + j10, j11 + j01
    cell = np.minimum((gen.random(n)[:, None] > np.cumsum(joint, axis=1)).sum(axis=1), 3)
    return pd.DataFrame({
        "pair": [f"p{i}" for i in range(n)],
        "category": [f"c{i // per_cell}" for i in range(n)], "p_a": p_a, "p_b": p_b,
        "p_a_given_b1": j11 / p_b, "p_a_given_b0": j10 / (1 - p_b),
        "p_b_given_a1": j11 / p_a, "p_b_given_a0": j01 / (1 - p_a),
        "a_outcome": (cell <= 1).astype(int), "b_outcome": np.isin(cell, (0, 2)).astype(int)})


def _pairs_many_cells(n: int) -> Callable[[], Any]:
    """``n`` categories of 10 pairs (few resamples: the per-cell path is timed)."""
    import coherence

    table = _pairs_table(n, 10)
    return lambda: coherence.conditional_forecasting(table, n_resamples=20, rng=0)


def _pairs_one_cell(n: int) -> Callable[[], Any]:
    """One category of ``n`` pairs, 2,000 resamples (the Bernoulli null's passes)."""
    import coherence

    table = _pairs_table(1, n)
    return lambda: coherence.conditional_forecasting(table, n_resamples=2000, rng=0)


def _arbitrage_tuples(n: int) -> Callable[[], Any]:
    """``n`` CondCond tuples (four questions, the dual solved for all tuples at once)."""
    import numpy as np
    import pandas as pd

    import coherence

    gen = np.random.default_rng(0)
    table = pd.DataFrame({q: gen.uniform(0.05, 0.95, n) for q in coherence.CHECKERS["cond_cond"]})
    return lambda: coherence.arbitrage_violation("cond_cond", table)


def _pairs_json(n: int) -> Callable[[], Any]:
    """A result file of ``n`` records (one in 17 failed), seven categories."""
    import json
    import tempfile

    import coherence

    folder = tempfile.TemporaryDirectory()  # removed when the call is dropped
    path = Path(folder.name) / "run.json"
    records: list[dict[str, Any]] = [
        {"pair_id": f"p{i}", "category": f"c{i % 7}", "reason": "r" * 50, "p_a": 0.3,
         "p_a_given_b1": 0.6, "p_a_given_b0": 0.2, "resolution_a": 1.0, "resolution_b": 0.0}
        for i in range(n)]
    for i in range(0, n, 17):
        records[i] = {"pair_id": f"p{i}", "category": f"c{i % 7}", "error": "timeout"}
    path.write_text(json.dumps({"results": records, "metadata": {"model": "m"}}))
    return lambda: (folder, coherence.read_pairs(path))


def _consistency_lines(n: int) -> Callable[[], Any]:
    """``n`` JSON lines of CondCond tuples in the authors' layout."""
    import json

    import numpy as np

    import coherence

    gen = np.random.default_rng(0)
    names = coherence.CHECKERS["cond_cond"]
    lines = [json.dumps({"line": {q: {"forecast": {"prob": float(v)}}
                                  for q, v in zip(names, gen.uniform(0.05, 0.95, 4), strict=True)},
                         "violation_data": {}}) for _ in range(n)]
    return lambda: coherence.read_consistency_tuples(lines, checker="cond_cond")


def _posterior_rows(n: int) -> Callable[[], Any]:
    """``n`` evidence rows on ``child`` (five variables, each missing one time in five)."""
    import numpy as np
    import pandas as pd

    import bayesnets

    net = bayesnets.load("child")
    gen = np.random.default_rng(0)
    names = ["Age", "GruntingReport", "LVHreport", "XrayReport", "LowerBodyO2"]
    evidence = pd.DataFrame({v: np.array(net.states[v], dtype=object)[
        gen.integers(net.cardinality(v), size=n)] for v in names}, dtype=object)
    evidence = evidence.mask(gen.random(evidence.shape) < 0.2)
    return lambda: bayesnets.posterior(net, "Disease", evidence)


PROBABILITY_CASES: dict[str, tuple[str, int, Build]] = {
    "conditional_forecasting, many categories of 10 pairs": (
        "probability", 50, _pairs_many_cells),
    "conditional_forecasting, one category of n pairs": ("probability", 100, _pairs_one_cell),
    "arbitrage_violation, CondCond tuples": ("probability", 60, _arbitrage_tuples),
    "read_pairs, a JSON file of n records": ("probability", 1000, _pairs_json),
    "read_consistency_tuples, n lines": ("probability", 1000, _consistency_lines),
    "bayesnets.posterior, n evidence rows": ("bayesnets", 2000, _posterior_rows),
}


# --------------------------------------------------------------------------- scoring
def _forecast_table(n_models: int, n_questions: int) -> Any:
    """Binary forecasts of ``n_models`` models on ``n_questions`` questions (one outcome
    per question)."""
    import numpy as np
    import pandas as pd

    gen = np.random.default_rng(0)
    y = gen.integers(0, 2, n_questions)
    return pd.DataFrame({"model": np.repeat([f"m{i}" for i in range(n_models)], n_questions),
                         "question": np.tile([f"q{i}" for i in range(n_questions)], n_models),
                         "probability": gen.uniform(size=n_models * n_questions),
                         "outcome": np.tile(y, n_models)})


def _scores_rows(n: int) -> Callable[[], Any]:
    """forecast_scores on ``n`` forecasts of 5 models (a linear path, for reference)."""
    import coherence

    df = _forecast_table(5, n // 5)
    return lambda: coherence.forecast_scores(df, timestamp=None, n_resamples=5, rng=0)


def _dated_rows(n: int) -> Callable[[], Any]:
    """horizon_positions of ``n`` forecasts whose three date columns hold ISO dates of
    300 days (dates repeat across rows, as in a benchmark's forecast table)."""
    import numpy as np
    import pandas as pd

    import coherence

    gen = np.random.default_rng(0)
    days = pd.date_range("2024-01-01", periods=300, freq="D")
    start = gen.integers(0, 100, n)
    simulated = start + gen.integers(0, 100, n)
    df = pd.DataFrame({"start": days[start].strftime("%Y-%m-%d"),
                       "simulated_date": days[simulated].strftime("%Y-%m-%d"),
                       "resolution_date": days[simulated + gen.integers(1, 100, n)]
                       .strftime("%Y-%m-%d")})
    return lambda: coherence.horizon_positions(df)


def _price_series(n: int) -> Callable[[], Any]:
    """turning_points of one market's hourly prices, ``n`` of them (a random walk)."""
    import numpy as np
    import pandas as pd

    import coherence

    gen = np.random.default_rng(0)
    price = np.clip(0.5 + np.cumsum(gen.normal(0.0, 0.01, n)), 0.0, 1.0)
    prices = pd.DataFrame({"date": pd.date_range("2020-01-01", periods=n, freq="h",
                                                 tz="UTC"), "price": price})
    return lambda: coherence.turning_points(prices, question=None)


def _horizons_models(n: int) -> Callable[[], Any]:
    """accuracy_by_horizon of ``n`` models, 20 questions each at three horizons."""
    import numpy as np

    import coherence

    df = _forecast_table(n, 60)
    df["horizon"] = np.tile(["early", "mid", "late"], len(df) // 3)
    df["correct"] = np.random.default_rng(1).integers(0, 2, len(df))
    return lambda: coherence.accuracy_by_horizon(df, n_resamples=5, rng=0)


def _hindsight_graphs(n: int, n_models: int = 3) -> tuple[Any, Any, Any, Any]:
    """Hindsight events (8 a question, in a chain of edges), forecast events (6 a model)
    and 60 daily prices of each of ``n`` questions."""
    import numpy as np
    import pandas as pd

    gen = np.random.default_rng(0)
    words = ["central", "bank", "raises", "interest", "rates", "dock", "workers", "strike",
             "closes", "ports", "election", "drought", "wheat", "harvest", "minister",
             "resigns", "oil", "price", "jumps"]
    q = np.repeat([f"q{i}" for i in range(n)], 8)
    e = np.tile([f"e{i}" for i in range(8)], n)
    days = pd.Timestamp("2024-01-01") + pd.to_timedelta(gen.integers(0, 60, 8 * n), "D")
    hind = pd.DataFrame({
        "question": q, "event": e, "title": [" ".join(gen.choice(words, 6)) for _ in q],
        "date": days.strftime("%Y-%m-%d"), "direction": gen.choice([-1, 1], 8 * n),
        "magnitude": gen.uniform(size=8 * n), "confidence": gen.uniform(0.5, 1, 8 * n),
        "is_outcome": np.tile(np.arange(8) == 7, n),
        "sources": [[f"s{i}_{j}" for j in range(3)] for i in range(8 * n)]})
    edges = pd.DataFrame({"question": np.repeat([f"q{i}" for i in range(n)], 7),
                          "source": np.tile([f"e{i}" for i in range(7)], n),
                          "target": np.tile([f"e{i}" for i in range(1, 8)], n),
                          "confidence": 0.9, "strength": 0.5})
    k = 6 * n * n_models
    fore = pd.DataFrame({
        "model": np.tile(np.repeat([f"m{i}" for i in range(n_models)], 6), n),
        "question": np.repeat([f"q{i}" for i in range(n)], 6 * n_models),
        "event": np.tile([f"f{i}" for i in range(6)], n * n_models),
        "title": [" ".join(gen.choice(words, 6)) for _ in range(k)],
        "date": (pd.Timestamp("2024-01-01")
                 + pd.to_timedelta(gen.integers(0, 60, k), "D")).strftime("%Y-%m-%d")})
    prices = pd.DataFrame({
        "question": np.repeat([f"q{i}" for i in range(n)], 60),
        "date": np.tile(pd.date_range("2024-01-01", periods=60).strftime("%Y-%m-%d"), n),
        "price": np.clip(0.5 + np.cumsum(gen.normal(0, 0.03, 60 * n)) % 0.8, 0.01, 0.99)})
    return hind, edges, fore, prices


def _graph_quality_questions(n: int) -> Callable[[], Any]:
    """hindsight_graph_quality of ``n`` questions' graphs."""
    import coherence

    hind, edges, _, _ = _hindsight_graphs(n)
    return lambda: coherence.hindsight_graph_quality(hind, edges)


def _market_signal_questions(n: int) -> Callable[[], Any]:
    """market_signal_metrics of 3 models' reasoning on ``n`` questions."""
    import coherence

    hind, _, fore, prices = _hindsight_graphs(n)
    hind = hind.drop(columns=["sources"])
    reasoning = coherence.reasoning_graph_metrics(fore, hind, gates=False, n_resamples=5,
                                                  rng=0)
    return lambda: coherence.market_signal_metrics(reasoning, hind, prices, n_resamples=5,
                                                   rng=0)


def _key_events_questions(n: int) -> Callable[[], Any]:
    """key_event_recall of 3 models on ``n`` questions (a linear path, for reference)."""
    import coherence

    hind, _, fore, _ = _hindsight_graphs(n)
    return lambda: coherence.key_event_recall(fore, hind.drop(columns=["sources"]),
                                              n_resamples=5, rng=0)


def _brier_sets(n: int) -> Callable[[], Any]:
    """``n`` ExpectedEvidence sets of heaped forecasts (the Brier projection of sets with
    conditional questions, solved for all sets at once; 200 resamples)."""
    import numpy as np
    import pandas as pd

    import coherence

    gen = np.random.default_rng(0)
    roles = coherence.CHECKERS["expected_evidence"]
    grid = np.array([0.0, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 1.0])
    worlds = np.array([[1, 1, 1, -1], [1, 0, -1, 1], [0, 1, 0, -1], [0, 0, -1, 0]])
    world = worlds[gen.integers(0, 4, n)]
    table = pd.DataFrame({
        "set": np.repeat(np.arange(n), 4), "role": np.tile(roles, n),
        "question": [f"{s}:{r}" for s in range(n) for r in roles],
        "probability": gen.choice(grid, 4 * n),
        "outcome": np.where(world < 0, np.nan, world).ravel()})
    return lambda: coherence.brier_decomposition(table, checker="expected_evidence",
                                                 n_resamples=200, rng=0)


SCORING_CASES: dict[str, tuple[str, int, Build]] = {
    "brier_decomposition, ExpectedEvidence sets": ("scoring", 60, _brier_sets),
    "forecast_scores, forecasts of 5 models": ("scoring", 2000, _scores_rows),
    "horizon_positions, dated forecasts": ("scoring", 5000, _dated_rows),
    "turning_points, one market's hourly prices": ("scoring", 2500, _price_series),
    "accuracy_by_horizon, many models": ("scoring", 10, _horizons_models),
    "hindsight_graph_quality, many questions": ("scoring", 50, _graph_quality_questions),
    "market_signal_metrics, many questions": ("scoring", 10, _market_signal_questions),
    "key_event_recall, many questions": ("scoring", 20, _key_events_questions),
}


CASES: dict[str, tuple[str, int, Build]] = {
    **ELICITATION_CASES, **DECISION_CASES, **PROBABILITY_CASES, **SCORING_CASES}


def time_case(name: str, sizes: tuple[int, ...], repeat: int) -> dict[str, Any]:
    """One case at each of ``sizes``: the best of ``repeat`` timed calls each, or the
    error its input raised (a package that refuses it, or lacks the function)."""
    _, _, build = CASES[name]
    seconds: list[float] = []
    for n in sizes:
        try:
            call = build(n)
            best = math.inf
            for _ in range(repeat):
                t0 = time.perf_counter()
                call()
                best = min(best, time.perf_counter() - t0)
        except Exception as exc:  # recorded: an older package may refuse the input
            return {"error": f"{type(exc).__name__}: {exc}"[:300]}
        seconds.append(best)
    return {"sizes": list(sizes), "seconds": seconds}


def growth(row: dict[str, Any]) -> float | None:
    """``log(t(16 n) / t(4 n)) / log 4``, or None below :data:`MIN_SECONDS`."""
    if "seconds" not in row or row["seconds"][-1] < MIN_SECONDS:
        return None
    t4, t16 = row["seconds"][-2:]
    return math.log(t16 / t4) / math.log(row["sizes"][-1] / row["sizes"][-2])


def _run_here(names: list[str], repeat: int) -> dict[str, Any]:
    out = {}
    for name in names:
        base = CASES[name][1]
        out[name] = time_case(name, (base, 4 * base, 16 * base), repeat)
    return out


def _run_child(tree: Path, names: list[str], repeat: int, cwd: Path) -> dict[str, Any]:
    """The cases on the package in ``tree``, from a subprocess that imports it first: the
    runs before and after alike, each in a fresh interpreter (when the run after was
    timed in this process instead, ``read_consistency_tuples`` on 16,000 lines took 0.50 s
    against the child's 0.33 s for the same code, in two runs; in children both take
    0.35 s)."""
    done = subprocess.run(
        [sys.executable, str(Path(__file__).resolve()), "--child", str(tree), "--repeat",
         str(repeat), "--only", *names], cwd=cwd, capture_output=True, text=True, check=True)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    if not result["package"].startswith(str(tree)):
        raise RuntimeError(f"the child run imported {result['package']}, not {tree}")
    cases: dict[str, Any] = result["cases"]
    return cases


def _run_before(ref: str, names: list[str], repeat: int) -> dict[str, Any]:
    """The cases on the package at ``ref``, in a temporary worktree."""
    with tempfile.TemporaryDirectory() as tmp:
        tree = Path(tmp) / "before"
        subprocess.run(["git", "worktree", "add", "-q", "--detach", str(tree), ref], cwd=ROOT,
                       check=True)
        try:
            return _run_child(tree, names, repeat, Path(tmp))
        finally:
            subprocess.run(["git", "worktree", "remove", "--force", str(tree)], cwd=ROOT,
                           check=False)


def _selected(words: list[str]) -> list[str]:
    return [n for n in CASES if not words or any(w in n for w in words)]


def _table(results: dict[str, Any]) -> str:
    from benchmarks._harness import generated_by
    from benchmarks._harness import markdown_table

    env = results["environment"]
    before = results.get("before_commit")
    head = ["case", "sizes", "seconds", "growth exponent"]
    if before:
        head += [f"before (`{before[:10]}`), s", "before / after"]
    rows = []
    for name, row in results["cases"].items():
        if "error" in row:
            continue
        g = growth(row)
        cells = [name, " / ".join(f"{s:,}" for s in row["sizes"]),
                 " / ".join(f"{s:.3g}" for s in row["seconds"]),
                 "-" if g is None else f"{g:.2f}"]
        if before:
            old = results["before"].get(name, {})
            if "seconds" in old:
                cells += [" / ".join(f"{s:.3g}" for s in old["seconds"]),
                          f"{old['seconds'][-1] / row['seconds'][-1]:.3g}"]
            else:
                cells += ["-", "-"]
        rows.append(cells)
    return "\n".join([
        generated_by("bench_scaling", env)
        + f"; best of {results['repeat']} runs each, on one machine in one run).", "",
        *markdown_table(head, rows)])


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--only", nargs="*", default=[], metavar="WORD")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--before", default=None, metavar="REF")
    parser.add_argument("--tables", action="store_true")
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--child", default=None, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.child:
        sys.path.insert(0, args.child)
        import coherence

        print(json.dumps({"package": str(Path(coherence.__file__).parent),
                          "cases": _run_here(_selected(args.only), args.repeat)}))
        return 0
    sys.path.insert(0, str(ROOT))
    from benchmarks._harness import environment
    from benchmarks._harness import write_json
    from benchmarks._harness import write_tables

    if args.tables:
        write_tables(DOC, SCRIPT, _table(json.loads(args.out.read_text())))
        return 0
    names = _selected(args.only)
    with tempfile.TemporaryDirectory() as tmp:  # not the root: the child imports ROOT's
        cases = _run_child(ROOT, names, args.repeat, Path(tmp))
    results: dict[str, Any] = {"script": f"benchmarks/{SCRIPT}", "environment": environment(),
                               "repeat": args.repeat, "cases": cases}
    if args.before:
        results["before_commit"] = subprocess.run(
            ["git", "rev-parse", args.before], cwd=ROOT, capture_output=True, text=True,
            check=True).stdout.strip()
        results["before"] = _run_before(args.before, names, args.repeat)
    for name, row in results["cases"].items():
        row["growth_exponent"] = growth(row)
        print(f"{name}: {row.get('seconds', row.get('error'))} growth {row['growth_exponent']}")
    write_json(args.out, results)
    if args.out == OUT:
        write_tables(DOC, SCRIPT, _table(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
