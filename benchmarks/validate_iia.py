"""Validation matrix of :func:`coherence.iia_test`: size on IIA-respecting agents, power
against known IIA violations, compared with the simple competitor.

Studies come from :mod:`benchmarks.iia_designs`, a generator written apart from the
package. The competitor is a stratified (by context) Cochran-Mantel-Haenszel test of the
one comparison that the alternative violates (it is told which pair and which menu; the
IIA test is not, and tests every pair under every reduced menu). The coverage part
measures how often each comparison's interval of the log odds ratio (``ci_low``,
``ci_high``) holds the true one: the log of the population Mantel-Haenszel common odds
ratio (:mod:`benchmarks.iia_designs`), 0 under IIA, ``log factor`` for the ``"odds"``
agent's comparisons without ``removed`` (every context has that odds ratio), by Monte
Carlo over 2,000,000 contexts for the nested logit. Every cell runs the
defaults a user gets, with ``n_resamples`` lowered (the p-value's resolution, not its
validity). The JSON is rewritten after every cell; the tables of ``docs/iia.md`` are
generated from it::

    nice -n 10 python -m benchmarks.validate_iia --reps 400      # writes the JSON
    nice -n 10 python -m benchmarks.validate_iia --append --only coverage
    python -m benchmarks.validate_iia --tables                   # JSON -> docs tables
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._harness import appended_note
from benchmarks._harness import coverage_cell
from benchmarks._harness import format_coverage
from benchmarks._harness import format_rate
from benchmarks._harness import generated_by
from benchmarks._harness import matrix_parser
from benchmarks._harness import rejection_cell
from benchmarks._harness import run_matrix
from benchmarks._harness import section_tables
from benchmarks._harness import size_power_plan
from benchmarks._harness import tables_if_asked
from benchmarks.iia_designs import Design
from benchmarks.iia_designs import comparisons
from benchmarks.iia_designs import generate
from benchmarks.iia_designs import known_log_odds_ratio
from benchmarks.iia_designs import mean_log_odds_ratio
from benchmarks.iia_designs import mh_test
from benchmarks.iia_designs import population_log_odds_ratio

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

#: a rarely chosen defer (about 4% of the full menu's choices)
RARE = (0.0, 0.0, -2.8, 0.0)
#: contexts of the Monte Carlo estimand of a nested logit's odds ratios
MC_CONTEXTS = 2_000_000
UNEVEN = {"per_menu": (1, 9), "drop_menu": 0.2}
#: coverage of the odds-ratio intervals: the small studies where separated comparisons
#: occur (a rare action, near-deterministic contexts), the size part's dependence
#: (context shocks, unequal repetitions, missing menus, 4 actions), small and large
#: studies, and known IIA violations
COVERAGE: dict[str, Design] = {
    "logit, 3 actions, defer rare (about 4%), shocks sd 1, 60 x 3": REF.with_(
        base=RARE, n_contexts=60, per_menu=3),
    "logit, 3 actions, shocks sd 3 (near-deterministic contexts), 40 x 2": REF.with_(
        shock_sd=3.0, n_contexts=40, per_menu=2),
    "logit, 3 actions, shocks sd 1, 200 x 5": REF,
    "logit, 3 actions, shocks sd 2 (near-deterministic contexts), 200 x 5": REF.with_(
        shock_sd=2.0),
    "logit, 3 actions, mostly defers, 1-9 per menu, 20% of reduced menus missing": REF.with_(
        base=DEFERS, **UNEVEN),
    "logit, 4 actions, abstain rare (about 2%), 1-9 per menu, 20% missing": REF.with_(
        n_actions=4, base=(0.0, 0.0, 0.0, -3.0), **UNEVEN),
    "logit, 3 actions, shocks sd 1, 30 x 3 (small study)": REF.with_(n_contexts=30,
                                                                     per_menu=3),
    "logit, 3 actions, shocks sd 1, 600 x 5 (large study)": REF.with_(n_contexts=600),
    "yes/no odds x2 without defer, 3 actions, mostly defers, 200 x 5": REF.with_(
        agent="odds", base=DEFERS),
    "yes/no odds x1.5 without defer, 3 actions, defer rare, 60 x 3": REF.with_(
        agent="odds", factor=1.5, base=RARE, n_contexts=60, per_menu=3),
    "yes/no odds x2 without defer, 4 actions, 1-9 per menu, 20% missing": REF.with_(
        agent="odds", n_actions=4, **UNEVEN),
    "nested logit (yes, defer) lam 0.5, 3 actions, mostly defers, 200 x 5": REF.with_(
        agent="nested", lam=0.5, base=DEFERS),
}

#: coverage cells whose own comparison fell below 0.93 at 400 studies (with the percentile
#: interval, before the hull), measured again on four times as many fresh studies (other
#: seeds)
COVERAGE_RECHECK: tuple[str, ...] = ("logit, 3 actions, shocks sd 1, 30 x 3 (small study)",)


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


def _label(a: str, b: str, removed: str) -> str:
    return f"{a}/{b} without {removed}"


def true_log_odds_ratios(design: Design) -> dict[str, float]:
    """Every comparison's true log odds ratio, the design's own (``pair`` without
    ``removed``) first: :func:`known_log_odds_ratio` where every context has it, else
    :func:`population_log_odds_ratio` (Monte Carlo)."""
    out = {}
    for a, b, r in comparisons(design):
        known = known_log_odds_ratio(design, a, b, r)
        out[_label(a, b, r)] = (known if known == known
                                else population_log_odds_ratio(design, a, b, r, n=MC_CONTEXTS))
    own = _label(*sorted(design.pair), design.removed)
    return {own: out.pop(own), **out}


def _interval_one(design: Design, seed: int, n_resamples: int,
                  labels: list[str]) -> list[float]:
    """One study's log odds ratio intervals of the comparisons ``labels`` (NaN where a
    comparison is missing or not testable)."""
    import coherence

    data = generate(design, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = coherence.iia_test(data, n_resamples=n_resamples, rng=seed)
    table = res.table.set_index("comparison")
    ends: list[float] = []
    for label in labels:
        ends += ([table.loc[label, "ci_low"], table.loc[label, "ci_high"]]
                 if label in table.index else [np.nan, np.nan])
    return ends


def _coverage_cell(name: str, design: Design, reps: int, n_resamples: int,
                   seed0: int) -> dict[str, Any]:
    truths = true_log_odds_ratios(design)
    row, _ = coverage_cell(name, design.settings(), range(seed0, seed0 + reps),
                           lambda seed: _interval_one(design, seed, n_resamples,
                                                      list(truths)), truths)
    return row


def _coverage_row(r: dict[str, Any]) -> list[Any]:
    cov = r["coverage"]
    own = next(iter(cov))
    low = min(cov, key=lambda k: cov[k]["coverage"]["rate"])
    untestable = cov[own]["n_nan"]
    return [r["design"], f"{own} ({cov[own]['truth']:.3f})",
            format_coverage(cov[own]) + (f" ({untestable} untestable)" if untestable else ""),
            f"{cov[own]['median_width']:.3f}", f"{cov[own]['share_unbounded']:.3f}",
            f"{low} ({cov[low]['truth']:.3f}): {format_rate(cov[low]['coverage'])}"
            + (f", {cov[low]['share_unbounded']:.3f} unbounded"
               if cov[low]["share_unbounded"] else "")]


def coverage_tables(results: dict[str, Any]) -> list[str]:
    """The coverage part's table (nothing when the JSON has none)."""
    if not results.get("coverage"):
        return []
    return ["### Coverage of the odds-ratio intervals", "",
            f"{results['settings']['n_resamples']} cluster-bootstrap resamples per "
            "interval. The share of studies whose 95% interval of a comparison's log odds "
            "ratio holds the true one (in parentheses: 0 under IIA; the log of the "
            "population Mantel-Haenszel common odds ratio otherwise, `log factor` where "
            "every context has that odds ratio, by Monte Carlo over 2,000,000 contexts for "
            "the nested logit), with 95% Wilson intervals in brackets and the shares of "
            "misses with the interval wholly above or below it; studies where the "
            "comparison is not testable are left out and counted. The design's own "
            "comparison (the one its violation is in) first, with the median width of its "
            "bounded intervals and the share unbounded; then the comparison whose coverage "
            "was lowest (the lowest of 3 or 12 rates, so it leans low).", "",
            *section_tables(results, (("coverage", "Coverage by design"),
                                      ("coverage_recheck", "Coverage again on the cells that were "
                                       "below 0.93 with the percentile interval, four "
                                       "times as many fresh studies")),
                            ("design", "comparison (true log odds ratio)", "coverage",
                             "median width", "unbounded", "lowest comparison"),
                            _coverage_row)]


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
    return "\n".join([*lines, *coverage_tables(results)]).rstrip("\n")


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
    plan += [("coverage", n, d, args.reps, args.n_resamples, 20_000_000 + 100_000 * i)
             for i, (n, d) in enumerate(COVERAGE.items())]
    plan += [("coverage_recheck", n, COVERAGE[n], 4 * args.reps, args.n_resamples,
              29_000_000 + 100_000 * i) for i, n in enumerate(COVERAGE_RECHECK)]
    cells = {"size": _cell, "power": _cell, "power_pairs": _cell,
             "coverage": _coverage_cell, "coverage_recheck": _coverage_cell}
    order = list({**NULLS, **POWER})
    run_matrix(args, ALPHA, plan, cells, {"size": order, "power": order, "power_pairs": order,
                                          "coverage": list(COVERAGE),
                                          "coverage_recheck": list(COVERAGE)})
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
