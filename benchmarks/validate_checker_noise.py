"""Validation matrix of :func:`coherence.consistency_noise_test`: size on coherent
forecasters with run-to-run noise, power against forecasters incoherent by a known amount.

Studies come from :mod:`benchmarks.checker_noise_designs`, a generator written apart from
the package. Every cell runs both methods with their defaults except ``n_resamples``
(lowered: the p-value's resolution, not its validity). Beside the rejection rates the
cells record the mean share of tuples flagged, the mean estimated share incoherent beyond
noise and the coverage of its interval, and what the fixed-threshold check reports: the
share of tuples whose mean forecasts the authors' frequentist violation flags
(``>= 2.58 x 0.05``). The JSON is rewritten after every cell; the tables of
``docs/consistency_noise.md`` are generated from it::

    nice -n 10 python -m benchmarks.validate_checker_noise --reps 400   # writes the JSON
    python -m benchmarks.validate_checker_noise --tables                # JSON -> docs
"""

from __future__ import annotations

import json
import sys
import time
import warnings
from collections.abc import Iterable
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._harness import environment
from benchmarks._harness import format_rate
from benchmarks._harness import generated_by
from benchmarks._harness import markdown_table
from benchmarks._harness import matrix_parser
from benchmarks._harness import rejection_rate
from benchmarks._harness import write_json
from benchmarks._harness import write_tables
from benchmarks.checker_noise_designs import WORLDS
from benchmarks.checker_noise_designs import Design
from benchmarks.checker_noise_designs import generate

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "validate_checker_noise.json"
DOC = ROOT / "docs" / "consistency_noise.md"
ALPHA = 0.05
METHODS = ("parametric", "resampling")

REF = Design()
NULLS: dict[str, Design] = {
    "negation, sd 0.03-0.10, 3-5 reps": REF,
    "negation, sd 0.10, 3 reps": REF.with_(sd=(0.10, 0.10), repetitions=(3, 3)),
    "negation, sd 0.03, 5 reps": REF.with_(sd=(0.03, 0.03), repetitions=(5, 5)),
    "negation, uniform noise, sd 0.03-0.10, 3-5 reps": REF.with_(noise="uniform"),
    "negation, t3 noise, sd 0.03-0.10, 3-5 reps": REF.with_(noise="t3"),
    "negation, 30 tuples, sd 0.03-0.10, 3 reps": REF.with_(n_tuples=30, repetitions=(3, 3)),
    "cond, sd 0.03-0.10, 3-5 reps": REF.with_(checker="cond"),
    "expected_evidence, sd 0.10, 3 reps": REF.with_(checker="expected_evidence",
                                                    sd=(0.10, 0.10), repetitions=(3, 3)),
    "and, on the bound, sd 0.03-0.10, 3-5 reps": REF.with_(checker="and", boundary=True),
    "and, interior, sd 0.03-0.10, 3-5 reps": REF.with_(checker="and"),
    "or, on the bound, sd 0.10, 3 reps": REF.with_(checker="or", boundary=True,
                                                   sd=(0.10, 0.10), repetitions=(3, 3)),
    "consequence, on the bound, sd 0.10, 3 reps": REF.with_(
        checker="consequence", boundary=True, sd=(0.10, 0.10), repetitions=(3, 3)),
    # more nulls: many tuples with 2-3 repetitions, few tuples with many, heavy tails on a
    # product constraint, a large study, the single-constraint inequality on its bound
    "negation, 300 tuples, sd 0.02-0.15, 2-3 reps": REF.with_(
        n_tuples=300, sd=(0.02, 0.15), repetitions=(2, 3)),
    "cond, 50 tuples, t3 noise, 3 reps": REF.with_(checker="cond", n_tuples=50, noise="t3",
                                                   repetitions=(3, 3)),
    "expected_evidence, 1000 tuples, sd 0.03-0.10, 3-5 reps": REF.with_(
        checker="expected_evidence", n_tuples=1000),
    "negation, 20 tuples, uniform noise, 6-10 reps": REF.with_(
        n_tuples=20, noise="uniform", repetitions=(6, 10)),
    "consequence, on the bound, sd 0.03-0.10, 3-5 reps": REF.with_(
        checker="consequence", boundary=True),
    # held out: written before the wild-bootstrap calibration of the parametric study test
    # was run on them (it was chosen on the designs above): other equality checkers,
    # heaped forecasts, two repetitions, very unequal noise, a small and a large study
    "paraphrase, sd 0.03-0.10, 3-5 reps": REF.with_(checker="paraphrase"),
    "and_or, sd 0.05-0.10, 3 reps": REF.with_(checker="and_or", sd=(0.05, 0.10),
                                             repetitions=(3, 3)),
    "but, 200 tuples, sd 0.03-0.10, 2-4 reps": REF.with_(checker="but", n_tuples=200,
                                                         repetitions=(2, 4)),
    "negation, heaped on 0.01, sd 0.03-0.10, 3-5 reps": REF.with_(grid=0.01),
    "cond, heaped on 0.05, sd 0.10, 5 reps": REF.with_(checker="cond", grid=0.05,
                                                      sd=(0.10, 0.10), repetitions=(5, 5)),
    "negation, 10 tuples, sd 0.03-0.10, 3-5 reps": REF.with_(n_tuples=10),
    "expected_evidence, 30 tuples, t3 noise, 2-4 reps": REF.with_(
        checker="expected_evidence", n_tuples=30, noise="t3", repetitions=(2, 4)),
    "negation, 150 tuples, sd 0.01-0.20, 2 reps": REF.with_(n_tuples=150, sd=(0.01, 0.20),
                                                            repetitions=(2, 2)),
}
POWER: dict[str, Design] = {
    "negation, 30% off by 0.10, sd 0.03-0.10, 3-5 reps": REF.with_(share_incoherent=0.3,
                                                                   delta=0.10),
    "negation, all off by 0.05, sd 0.03-0.10, 3-5 reps": REF.with_(share_incoherent=1.0,
                                                                   delta=0.05),
    "negation, 10% off by 0.10, sd 0.03-0.10, 3-5 reps": REF.with_(share_incoherent=0.1,
                                                                   delta=0.10),
    "negation, 20% off by 0.05, sd 0.03-0.10, 3 reps": REF.with_(
        share_incoherent=0.2, delta=0.05, repetitions=(3, 3)),
    "cond, 30% off by 0.10, sd 0.03-0.10, 3-5 reps": REF.with_(
        checker="cond", share_incoherent=0.3, delta=0.10),
    "and, on the bound, 30% off by 0.10, sd 0.03-0.10, 3-5 reps": REF.with_(
        checker="and", boundary=True, share_incoherent=0.3, delta=0.10),
    "consequence, on the bound, 30% off by 0.10, sd 0.10, 3 reps": REF.with_(
        checker="consequence", boundary=True, share_incoherent=0.3, delta=0.10,
        sd=(0.10, 0.10), repetitions=(3, 3)),
}


def fisher_pvalue(pvalues: np.ndarray) -> float:
    """The competitor: Fisher's combination of the tuples' own p-values (the parametric
    method's per-tuple t tests), -2 sum log p against chi-square on 2T degrees of freedom;
    tuples independent, as the test assumes."""
    from scipy.stats import chi2

    p = np.clip(pvalues[~np.isnan(pvalues)], 1e-300, 1.0)
    return float(chi2.sf(-2.0 * np.log(p).sum(), 2 * p.size)) if p.size else float("nan")


def _fixed_threshold_share(data: Any, checker: str) -> float:
    import coherence

    wide = data.groupby(["set", "role"])["probability"].mean().unstack("role")
    v = coherence.frequentist_violation(checker, wide[list(WORLDS[checker][0])])
    return float(np.mean(v >= 2.58 * 0.05))


def _cell(name: str, design: Design, reps: int, n_resamples: int, seed0: int,
          kind: str) -> dict[str, Any]:
    import coherence

    t0 = time.perf_counter()
    out: dict[str, Any] = {"design": design.settings(),
                           "kind": kind, "reps": reps}
    fixed = []
    # the resampling method refuses questions with two repetitions (MIN_RESAMPLING_...)
    methods = tuple(m for m in METHODS if m == "parametric" or design.repetitions[0] >= 3)
    per: dict[str, dict[str, list[float]]] = {m: {"p": [], "flag": [], "share": [],
                                                   "cover": []} for m in methods}
    fisher: list[float] = []
    for r in range(reps):
        seed = seed0 + r
        data = generate(design, seed)
        truth = float(data.groupby("set")["incoherent"].first().mean())
        data = data.drop(columns="incoherent")
        fixed.append(_fixed_threshold_share(data, design.checker))
        for m in methods:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = coherence.consistency_noise_test(data, design.checker, method=m,
                                                       n_resamples=n_resamples, rng=seed)
            per[m]["p"].append(res.pvalue)
            if m == "parametric":
                fisher.append(fisher_pvalue(res.table["pvalue"].to_numpy(dtype=float)))
            per[m]["flag"].append(res.share_flagged)
            per[m]["share"].append(res.statistic)
            ci = res.confidence_interval
            per[m]["cover"].append(float(ci.low <= truth <= ci.high))
    out["true_share"] = design.share_incoherent
    out["fisher"] = rejection_rate(np.asarray(fisher) <= ALPHA)
    out["fixed_threshold_share"] = float(np.mean(fixed))
    for m in METHODS:
        if m not in per:
            out[m] = None
            continue
        out[m] = {"rejection": rejection_rate(np.asarray(per[m]["p"]) <= ALPHA),
                  "mean_share_flagged": float(np.mean(per[m]["flag"])),
                  "mean_share_estimate": float(np.mean(per[m]["share"])),
                  "share_interval_coverage": float(np.mean(per[m]["cover"]))}
    out["seconds"] = round(time.perf_counter() - t0, 1)
    return out


def _row(name: str, cell: dict[str, Any]) -> list[Any]:
    p, r = cell["parametric"], cell["resampling"]  # r None: refused (two repetitions)

    def pair(key: str, fmt: str) -> str:
        return f"{p[key]:{fmt}} / " + ("-" if r is None else f"{r[key]:{fmt}}")
    return [name, cell["reps"], format_rate(p["rejection"]),
            "refused (2 repetitions)" if r is None else format_rate(r["rejection"]),
            format_rate(cell["fisher"]) if "fisher" in cell else "",
            pair("mean_share_flagged", ".3f"), pair("mean_share_estimate", ".3f"),
            pair("share_interval_coverage", ".2f"), f"{cell['fixed_threshold_share']:.3f}"]


def tables(results: dict[str, Any]) -> str:
    lines = [generated_by("validate_checker_noise", results["environment"])
             + f"); {results['n_resamples']} resamples per test, "
             f"alpha = {ALPHA}, rejection rates of the study-level test with 95% Wilson "
             "intervals in brackets. *flagged*: mean share of tuples whose own p-value is "
             "at most 0.05; *share*: mean estimated share incoherent beyond noise "
             "(`statistic`) and the coverage of its 95% interval; *fixed threshold*: mean "
             "share of tuples whose mean forecasts the frequentist check flags at "
             "2.58 x 0.05, what a tolerance-based report would call violations; *Fisher*: "
             "the simplest valid competitor, Fisher's combination of the tuples' own "
             "parametric p-values (chi-square on 2T degrees of freedom), on the same "
             "studies."]
    header = ("design", "reps", "parametric", "resampling", "Fisher", "flagged (param / resamp)",
              "share (param / resamp)", "coverage (param / resamp)", "fixed threshold")
    for kind, title in (("size", "Size on coherent forecasters with noise"),
                        ("power", "Power against incoherent forecasters")):
        lines += ["", f"### {title}", "", *markdown_table(
            header, [_row(name, cell) for name, cell in results["cells"].items()
                     if cell["kind"] == kind])]
    return "\n".join(lines)


def main(argv: Iterable[str] | None = None) -> int:
    parser = matrix_parser(__doc__, results=RESULTS, page="docs/consistency_noise.md",
                           n_resamples=199, power_reps=None, only=None, append=False)
    args = parser.parse_args(list(argv) if argv is not None else None)
    if args.tables:
        write_tables(DOC, "validate_checker_noise.py", tables(json.loads(args.out.read_text())))
        return 0
    results: dict[str, Any] = {"environment": environment(), "n_resamples": args.n_resamples,
                               "alpha": ALPHA, "cells": {}}
    for kind, cells in (("size", NULLS), ("power", POWER)):
        for i, (name, design) in enumerate(cells.items()):
            seed0 = 1_000_000 * (i + 1) + (0 if kind == "size" else 500_000)
            results["cells"][name] = _cell(name, design, args.reps, args.n_resamples, seed0,
                                           kind)
            print(name, json.dumps({m: cell["rejection"]["rate"] for m in METHODS
                                    if (cell := results["cells"][name][m]) is not None}),
                  file=sys.stderr)
            write_json(args.out, results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
