"""Validation matrix of :func:`coherence.iia_test`: size on IIA-respecting agents, power
against known IIA violations, compared with the simple competitor.

Studies come from :mod:`benchmarks.iia_designs`, a generator written apart from the
package. The competitor is a stratified (by context) Cochran-Mantel-Haenszel test of the
one comparison that the alternative violates (it is told which pair and which menu; the
IIA test is not, and tests every pair under every reduced menu). Every cell runs the
defaults a user gets, with ``n_resamples`` lowered (the p-value's resolution, not its
validity). The JSON is rewritten after every cell; the tables of ``docs/iia.md`` are
generated from it::

    nice -n 10 python -m benchmarks.validate_iia --reps 400      # writes the JSON
    python -m benchmarks.validate_iia --tables                   # JSON -> docs tables
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._harness import appended_note
from benchmarks._harness import format_rate
from benchmarks._harness import generated_by
from benchmarks._harness import matrix_parser
from benchmarks._harness import rejection_cell
from benchmarks._harness import run_matrix
from benchmarks._harness import section_tables
from benchmarks._harness import size_power_plan
from benchmarks._harness import tables_if_asked
from benchmarks.iia_designs import Design
from benchmarks.iia_designs import generate
from benchmarks.iia_designs import mean_log_odds_ratio
from benchmarks.iia_designs import mh_test

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "validate_iia.json"
DOC = ROOT / "docs" / "iia.md"
ALPHA = 0.05

#: a model that mostly defers: the yes/no comparison rests on few rows per context
DEFERS = (0.0, 0.0, 2.0, 0.0)
#: defers even more: the design at which the competitor's power is about 0.87
DEFERS_MORE = (0.0, 0.0, 2.5, 0.0)
REF = Design()
NULLS: dict[str, Design] = {
    "logit, 3 actions, shocks sd 1, 200 x 5": REF,
    "logit, 3 actions, mostly defers, shocks sd 1, 200 x 5": REF.with_(base=DEFERS),
    "logit, 3 actions, shocks sd 2 (near-deterministic contexts), 200 x 5": REF.with_(
        shock_sd=2.0),
    "logit, 3 actions, shocks sd 1, 1-9 per menu, 20% of reduced menus missing": REF.with_(
        per_menu=(1, 9), drop_menu=0.2),
    "logit, 4 actions, shocks sd 1, 200 x 5": REF.with_(n_actions=4),
    "logit, 4 actions, mostly defers, 1-9 per menu, 20% missing": REF.with_(
        n_actions=4, base=DEFERS, per_menu=(1, 9), drop_menu=0.2),
    "logit, 3 actions, shocks sd 1, 50 x 5 (few contexts)": REF.with_(n_contexts=50),
}
POWER: dict[str, Design] = {
    "yes/no odds x2 without defer, 3 actions, mostly defers, 200 x 5": REF.with_(
        agent="odds", base=DEFERS),
    "yes/no odds x2 without defer, 4 actions, mostly defers, 200 x 5": REF.with_(
        agent="odds", base=DEFERS, n_actions=4),
    "yes/no odds x1.5 without defer, 3 actions, 200 x 5": REF.with_(agent="odds",
                                                                      factor=1.5),
    "nested logit (yes, defer) lam 0.5, 3 actions, mostly defers, 200 x 5": REF.with_(
        agent="nested", lam=0.5, base=DEFERS),
    "yes/no odds x2 without defer, 3 actions, defers more, 200 x 5": REF.with_(
        agent="odds", base=DEFERS_MORE),
}


#: power cells also run with the pair named in advance (``pairs=[("yes", "no")]``)
NAMED_PAIR: tuple[str, ...] = (
    "yes/no odds x2 without defer, 3 actions, mostly defers, 200 x 5",
    "yes/no odds x1.5 without defer, 3 actions, 200 x 5",
    "yes/no odds x2 without defer, 3 actions, defers more, 200 x 5",
)


def _run_one(design: Design, seed: int, n_resamples: int,
             options: dict[str, Any]) -> tuple[float, float, float]:
    import coherence

    data = generate(design, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = coherence.iia_test(data, n_resamples=n_resamples, rng=seed, **options)
    full = "|".join(sorted(design.actions))
    reduced = "|".join(sorted(a for a in design.actions if a != design.removed))
    mh = mh_test(data, design.pair, full, reduced)
    return res.pvalue, mh, res.statistic


def _cell(name: str, design: Design, reps: int, n_resamples: int, seed0: int,
          options: dict[str, Any]) -> dict[str, Any]:
    row, out = rejection_cell(
        name, design.settings(), range(seed0, seed0 + reps),
        lambda seed: _run_one(design, seed, n_resamples, options),
        ("iia_test", "mantel_haenszel"), ALPHA)
    row["mean_share_flagged"] = float(np.nanmean(out[:, 2]))
    if design.agent != "logit":
        row["mean_log_odds_ratio"] = mean_log_odds_ratio(design)
    return row


def _row(r: dict[str, Any]) -> list[Any]:
    extra = (f" (mean log odds ratio {r['mean_log_odds_ratio']:.2f})"
             if "mean_log_odds_ratio" in r else "")
    return [f"{r['design']}{extra}", r["reps"], format_rate(r["iia_test"]),
            format_rate(r["mantel_haenszel"]), f"{r['mean_share_flagged']:.3f}"]


def tables(results: dict[str, Any]) -> str:
    lines = [generated_by("validate_iia", results["environment"])
             + f"); {results['settings']['n_resamples']} sign flips "
             "per test, alpha = 0.05, rejection rates with 95% Wilson intervals in brackets. "
             "The Mantel-Haenszel column tests only the yes/no odds under the full menu "
             "against the menu without defer (told where the violation is); `iia_test` "
             "tests every pair under every reduced menu." + appended_note(results), ""]
    lines += section_tables(
        results, (("size", "Size on IIA-respecting agents (multinomial logit with "
                           "context shocks)"),
                  ("power", "Power against known IIA violations"),
                  ("power_pairs", "Power with the pair named in advance "
                                  "(`pairs=[(\"yes\", \"no\")]`; the same studies)")),
        ("design", "reps", "iia_test", "Mantel-Haenszel (one comparison)",
         "mean share flagged"), _row)
    return "\n".join(lines)


def main(argv: Iterable[str] | None = None) -> int:
    parser = matrix_parser(__doc__, results=RESULTS, page="docs/iia.md",
                           n_resamples=499)
    args = parser.parse_args(list(argv) if argv is not None else None)
    if tables_if_asked(args, DOC, "validate_iia.py", tables):
        return 0
    plan = size_power_plan(args, NULLS, POWER, {})
    plan += [("power_pairs", n, d, args.power_reps, args.n_resamples,
              5_000_000 + 100_000 * i, {"pairs": [("yes", "no")]})
             for i, (n, d) in enumerate(POWER.items()) if n in NAMED_PAIR]
    run_matrix(args, ALPHA, plan, _cell, list({**NULLS, **POWER}))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
