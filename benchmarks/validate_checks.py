"""Validation of the consistency checkers against the values Paleka et al. released.

For every forecaster directory under ``--data`` (default
``../shared/data/consistency-forecasting``, next to the clone; one ``<Checker>.jsonl``
per checker, their evaluation output with ``violation_data``), and every checker,
the script reads the tuples with :func:`coherence.read_consistency_tuples`, computes
both metrics with :func:`coherence.consistency_check` under ``definition="code"``
and ``"paper"``, and records:

* the largest absolute difference between our per-tuple values and the published
  ones (arbitrage and frequentist);
* for the checkers whose published arbitrage came from a numerical optimiser, how
  often and by how much our (certified) value exceeds the published one, and the
  largest duality gap of ours;
* the time per tuple.

The JSON goes to ``benchmarks/results/validate_checks.json`` and the table to
``docs/consistency_checks.md`` (between generated markers). The released files are
never copied into the repository.

Run: ``python -m benchmarks.validate_checks [--data DIR] [--out JSON]``;
``--tables`` rewrites the table from the JSON alone.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._harness import ROOT
from benchmarks._harness import environment
from benchmarks._harness import markdown_table
from benchmarks._harness import matrix_parser
from benchmarks._harness import write_json
from benchmarks._harness import write_tables

CHECKERS = ("NegChecker", "ParaphraseChecker", "ConsequenceChecker", "AndChecker",
            "OrChecker", "AndOrChecker", "ButChecker", "CondChecker", "CondCondChecker",
            "ExpectedEvidenceChecker")
SCRIPT = "validate_checks.py"
OUT = ROOT / "benchmarks" / "results" / "validate_checks.json"
DOC = ROOT / "docs" / "consistency_checks.md"


def one_file(path: Path) -> dict[str, Any]:
    from coherence import consistency_check
    from coherence import read_consistency_tuples

    df = read_consistency_tuples(path)
    name = df.attrs["checker"]
    out: dict[str, Any] = {"n": len(df)}
    for definition in ("code", "paper"):
        start = time.perf_counter()
        res = consistency_check(df, name, definition=definition, n_resamples=99, rng=0)
        seconds = time.perf_counter() - start
        arb = res.table["arbitrage"].to_numpy()
        freq = res.table["frequentist"].to_numpy()
        pub_a = df["published_arbitrage"].to_numpy()
        pub_f = df["published_frequentist"].to_numpy()
        ok = np.isfinite(pub_a) & np.isfinite(arb)
        diff = arb[ok] - pub_a[ok]
        out[definition] = {
            "max_abs_diff_arbitrage": float(np.max(np.abs(diff))),
            "share_arbitrage_within_1e-9": float(np.mean(np.abs(diff) <= 1e-9)),
            "share_ours_above_published_by_1e-6": float(np.mean(diff > 1e-6)),
            "share_ours_below_published_by_1e-6": float(np.mean(diff < -1e-6)),
            "max_abs_diff_frequentist": float(np.nanmax(np.abs(freq - pub_f))),
            "mean_arbitrage": float(np.mean(arb)),
            "published_mean_arbitrage": float(np.nanmean(pub_a)),
            "max_duality_gap": res.max_duality_gap,
            "seconds_per_tuple": seconds / len(df),
        }
    return out


def _checker_row(checker: str, rows: list[dict[str, Any]]) -> list[str]:
    """One checker's figures over the released runs (shares weighted by tuples)."""
    n = sum(r["n"] for r in rows)
    code = [r["code"] for r in rows]

    def share(key: str) -> float:
        return sum(c[key] * r["n"] for c, r in zip(code, rows, strict=True)) / n

    return [checker, str(n), f"{max(c['max_abs_diff_frequentist'] for c in code):.1e}",
            f"{share('share_arbitrage_within_1e-9'):.3f}",
            f"{share('share_ours_above_published_by_1e-6'):.3f}",
            f"{share('share_ours_below_published_by_1e-6'):.3f}",
            f"{max(c['max_duality_gap'] for c in code):.1e}",
            f"{1000 * share('seconds_per_tuple'):.2f}"]


def table(results: dict[str, Any]) -> str:
    per_checker = {c: [r[c] for r in results["forecasters"].values() if c in r]
                   for c in CHECKERS}
    lines = markdown_table(
        ("checker", "tuples", "frequentist: max abs diff", "arbitrage: share equal (1e-9)",
         "ours above published by > 1e-6", "ours below published by > 1e-6",
         "max duality gap", "ms per tuple"),
        (_checker_row(c, rows) for c, rows in per_checker.items() if rows))
    lines += ["", "Share of tuples whose published arbitrage our value equals (to 1e-9), "
              "per released run:", "",
              *markdown_table(
                  ("run", *(c.replace("Checker", "") for c in CHECKERS)),
                  ([f"`{folder}`", *(f"{per[c]['code']['share_arbitrage_within_1e-9']:.2f}"
                                     if c in per else "" for c in CHECKERS)]
                   for folder, per in results["forecasters"].items()))]
    return "\n".join(lines)


def write_docs(results: dict[str, Any]) -> None:
    forecasters = ", ".join(f"`{k}`" for k in results["forecasters"])
    body = (f"Released forecasters: {forecasters}; commit "
            f"`{results['environment']['commit'][:10]}`, "
            f"{results['environment']['date']}.\n\n" + table(results))
    write_tables(DOC, SCRIPT, body)


def main(argv: list[str] | None = None) -> None:
    parser = matrix_parser(__doc__.split("\n")[0], results=OUT,
                           page="docs/consistency_checks.md", n_resamples=None,
                           power_reps=None, only=None, append=False)
    parser.add_argument("--data", type=Path,
                        default=ROOT.parent / "shared" / "data" / "consistency-forecasting")
    args = parser.parse_args(argv)
    if args.tables:
        write_docs(json.loads(args.out.read_text(encoding="utf-8")))
        return
    results: dict[str, Any] = {"environment": environment(), "data": str(args.data),
                               "forecasters": {}}
    for folder in sorted(p for p in args.data.iterdir() if p.is_dir()):
        per: dict[str, Any] = {}
        for checker in CHECKERS:
            path = folder / f"{checker}.jsonl"
            if path.exists():
                per[checker] = one_file(path)
        results["forecasters"][folder.name] = per
    write_json(args.out, results)
    if args.out == OUT:
        write_docs(results)


if __name__ == "__main__":
    main()
