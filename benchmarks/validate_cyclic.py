"""Validation matrix of :func:`coherence.cyclic_monotonicity_test`: size on rational
random-utility agents, power against an agent whose top cumulative share falls, compared
with the simple competitor.

Studies come from :mod:`benchmarks.cyclic_designs`, a generator written apart from the
package. The competitor is the simplest valid test of the same hypothesis: each
cumulative outcome "chose level k or above" tested on its own by
:func:`coherence.monotonicity_test` (its default localised method, the binary outcome as
a two-action pair), the smallest of the K - 1 p-values Bonferroni-adjusted. Every cell
runs the defaults a user gets, with ``n_resamples`` lowered (the p-value's resolution,
not its validity). The JSON is rewritten after every cell; the tables of
``docs/cyclic_monotonicity.md`` are generated from it::

    nice -n 10 python -m benchmarks.validate_cyclic --reps 400     # writes the JSON
    python -m benchmarks.validate_cyclic --tables                  # JSON -> docs tables
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from benchmarks._harness import appended_note
from benchmarks._harness import format_rate
from benchmarks._harness import generated_by
from benchmarks._harness import matrix_parser
from benchmarks._harness import rejection_cell
from benchmarks._harness import run_matrix
from benchmarks._harness import section_tables
from benchmarks._harness import size_power_plan
from benchmarks._harness import tables_if_asked
from benchmarks.cyclic_designs import Design
from benchmarks.cyclic_designs import generate

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "validate_cyclic.json"
DOC = ROOT / "docs" / "cyclic_monotonicity.md"
ALPHA = 0.05

REF = Design()
NULLS: dict[str, Design] = {
    "logit, 3 actions, shocks sd 1, 200 x 5": REF,
    "logit, 3 actions, flat shares (no slope), 200 x 5": REF.with_(strength=0.0),
    "logit, 3 actions, heaped beliefs, 200 x 5": REF.with_(beliefs="heaped"),
    "logit, 3 actions, 1-9 repetitions per context": REF.with_(per_context=(1, 9)),
    "logit, 3 actions, shocks sd 2 (near-deterministic contexts), 200 x 5": REF.with_(
        shock_sd=2.0),
    "nested logit (defer, yes) lam 0.5, 3 actions (violates IIA), 200 x 5": REF.with_(
        agent="nested"),
    "logit, 4 actions, shocks sd 1, 200 x 5": REF.with_(n_actions=4),
    "logit, 4 actions, heaped beliefs, 1-9 repetitions": REF.with_(
        n_actions=4, beliefs="heaped", per_context=(1, 9)),
    "logit, 4 actions, flat shares, heaped beliefs, 200 x 5": REF.with_(
        n_actions=4, strength=0.0, beliefs="heaped"),
    "logit, 3 actions, flat shares, heaped beliefs, 1-9 repetitions": REF.with_(
        strength=0.0, beliefs="heaped", per_context=(1, 9)),
    "logit, 4 actions, flat shares, shocks sd 2, 200 x 5": REF.with_(
        n_actions=4, strength=0.0, shock_sd=2.0),
    "nested logit lam 0.5, flat shares, 3 actions, 200 x 5": REF.with_(
        agent="nested", strength=0.0),
    # small studies, at the least favourable null (flat shares)
    "logit, 3 actions, flat shares, small study 30 x 5": REF.with_(
        strength=0.0, n_contexts=30),
    "logit, 3 actions, flat shares, 60 x 5": REF.with_(strength=0.0, n_contexts=60),
    "logit, 4 actions, flat shares, small study 40 x 3": REF.with_(
        n_actions=4, strength=0.0, n_contexts=40, per_context=3),
}
POWER: dict[str, Design] = {
    "defer takes 60% of yes above belief 0.8 (ramp 0.7-0.8), 3 actions, 200 x 5": REF.with_(
        agent="steal", delta=0.6, onset=0.7, width=0.1),
    "defer takes 50% of yes above belief 0.8 (ramp 0.6-0.8), 3 actions, 200 x 5": REF.with_(
        agent="steal", delta=0.5, onset=0.6, width=0.2),
    "defer takes 60% of yes (ramp 0.7-0.8), heaped beliefs, 1-9 repetitions": REF.with_(
        agent="steal", delta=0.6, onset=0.7, width=0.1, beliefs="heaped",
        per_context=(1, 9)),
    "lean_yes takes 60% of yes (ramp 0.7-0.8), 4 actions, 200 x 5": REF.with_(
        agent="steal", delta=0.6, onset=0.7, width=0.1, n_actions=4),
    "defer takes 80% of yes at belief 1 (ramp 0.5-1, broad), 3 actions, 200 x 5": REF.with_(
        agent="steal", delta=0.8),
    "defer takes 60% of yes (ramp 0.7-0.8), 3 actions, 600 x 5": REF.with_(
        agent="steal", delta=0.6, onset=0.7, width=0.1, n_contexts=600),
    "defer takes 80% of yes at belief 1 (ramp 0.5-1, broad), 3 actions, 600 x 5": REF.with_(
        agent="steal", delta=0.8, n_contexts=600),
}


def competitor(data: pd.DataFrame, order: tuple[str, ...], seed: int,
               n_resamples: int) -> float:
    """Bonferroni over the levels of ``monotonicity_test`` on each cumulative outcome."""
    import coherence

    level = data["action"].map({a: i for i, a in enumerate(order)}).to_numpy()
    pvalues = []
    for k in range(1, len(order)):
        binary = data.assign(action=np.where(level >= k, "above", "below"))
        res = coherence.monotonicity_test(binary, pairs=[("above", "below")],
                                          n_resamples=n_resamples, rng=seed + k)
        pvalues.append(res.pvalue)
    p = np.asarray(pvalues, dtype=float)
    p = p[np.isfinite(p)]
    return float(min(1.0, p.min() * len(p))) if len(p) else float("nan")


def _run_one(design: Design, seed: int, n_resamples: int) -> tuple[float, float, float]:
    import coherence

    data = generate(design, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = coherence.cyclic_monotonicity_test(data, order=design.order,
                                                 n_resamples=n_resamples, rng=seed)
        comp = competitor(data, design.order, seed, n_resamples)
    return res.pvalue, comp, res.distance


def _cell(name: str, design: Design, reps: int, n_resamples: int,
          seed0: int) -> dict[str, Any]:
    row, out = rejection_cell(
        name, design.settings(), range(seed0, seed0 + reps),
        lambda seed: _run_one(design, seed, n_resamples),
        ("cyclic_monotonicity_test", "bonferroni_monotonicity"), ALPHA)
    row["mean_distance"] = float(np.nanmean(out[:, 2]))
    return row


def _row(r: dict[str, Any]) -> list[Any]:
    return [r["design"], r["reps"], format_rate(r["cyclic_monotonicity_test"]),
            format_rate(r["bonferroni_monotonicity"]), f"{r['mean_distance']:.4f}"]


def tables(results: dict[str, Any]) -> str:
    lines = [generated_by("validate_cyclic", results["environment"])
             + f"); at most {results['settings']['n_resamples']} "
             "multiplier draws per test, alpha = 0.05, rejection rates with 95% Wilson "
             "intervals in brackets. The competitor tests each cumulative share on its own "
             "with `monotonicity_test` and Bonferroni-adjusts the smallest p-value; the mean "
             "distance to rationalisability is `distance` averaged over the studies."
             + appended_note(results), ""]
    lines += section_tables(
        results, (("size", "Size on rational random-utility agents (context shocks)"),
                  ("power", "Power against a falling cumulative share")),
        ("design", "reps", "cyclic_monotonicity_test",
         "Bonferroni over levels of monotonicity_test", "mean distance"), _row)
    return "\n".join(lines)


def main(argv: Iterable[str] | None = None) -> int:
    parser = matrix_parser(__doc__, results=RESULTS, page="docs/cyclic_monotonicity.md",
                           n_resamples=999)
    args = parser.parse_args(list(argv) if argv is not None else None)
    if tables_if_asked(args, DOC, "validate_cyclic.py", tables):
        return 0
    plan = size_power_plan(args, NULLS, POWER)
    run_matrix(args, ALPHA, plan, _cell, list({**NULLS, **POWER}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
