"""``coherence scores``: forecast scores per model, with your column names."""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from . import EXIT_OK, UsageError, _read_table

__all__ = ["add_parser", "run"]


def add_parser(sub: Any) -> None:
    scores = sub.add_parser(
        "scores", help="forecast scores (accuracy, Brier, log) per model",
        description="Score a forecast table (CSV, TSV, parquet or JSON records) per model, "
        "with cluster-bootstrap intervals; with --cutoffs, also after the contamination "
        "filter.",
        epilog="example: coherence scores preds.csv --by llm --question qid --probability "
        "p_yes --outcome resolved")
    scores.add_argument("forecasts", help="forecast table file")
    scores.add_argument("--cutoffs", default=None, metavar="JSON",
                        help="JSON object mapping model names to knowledge-cutoff dates")
    scores.add_argument("--by", default="model", metavar="COL",
                        help="column naming the model (default model)")
    scores.add_argument("--question", default="question", metavar="COL",
                        help="column naming the question (default question)")
    scores.add_argument("--probability", default="probability", metavar="COL",
                        help="column of P(YES) (default probability)")
    scores.add_argument("--outcome", default="outcome", metavar="COL",
                        help="column of the 0/1 outcome (default outcome)")
    scores.add_argument("--timestamp", default="forecast_date", metavar="COL",
                        help="column of the forecast date, used when present (default "
                        "forecast_date)")
    scores.add_argument("--opened", default="opened", metavar="COL",
                        help="column of the date the question opened, for --cutoffs "
                        "(default opened)")
    scores.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    scores.add_argument("--csv", default=None, metavar="PATH", help="write the table as CSV")


def run(args: argparse.Namespace) -> int:
    from coherence import forecast_scores

    data = _read_table(args.forecasts)
    if len(data) == 0:
        raise UsageError(f"{args.forecasts} has no rows")
    have = ", ".join(map(str, data.columns[:12]))
    for option in ("by", "question", "probability", "outcome"):
        name = getattr(args, option)
        if name not in data.columns:
            raise UsageError(f"--{option} names column {name!r}, which {args.forecasts} does "
                             f"not have (columns: {have})")
    cutoffs = None
    if args.cutoffs:
        path = Path(args.cutoffs)
        if not path.is_file():
            raise UsageError(f"no such file: {args.cutoffs}")
        try:
            cutoffs = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise UsageError(f"{args.cutoffs} is not valid JSON: {exc}") from exc
        if not isinstance(cutoffs, dict):
            raise UsageError(f"{args.cutoffs} must hold a JSON object mapping model names "
                             "to dates")
    timestamp = args.timestamp if args.timestamp in data.columns else None
    result = forecast_scores(data, by=args.by, question=args.question,
                             probability=args.probability, outcome=args.outcome,
                             opened=args.opened, cutoffs=cutoffs, timestamp=timestamp,
                             rng=args.seed)
    print(result.summary())
    if args.csv:
        result.scores_frame().to_csv(args.csv, index=False)
    return EXIT_OK
