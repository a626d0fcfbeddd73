"""``coherence scores``: forecast scores per model, with your column names."""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path
from typing import Any

from ._common import EXIT_OK
from ._common import UsageError
from ._common import add_resamples
from ._common import add_seed
from ._common import check_id_spellings
from ._common import print_frame
from ._common import read_table

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
                        help="JSON object mapping model names to knowledge-cutoff dates (a "
                        "month or a year, '2023-10', stands for its end: questions opened "
                        "in it are dropped)")
    scores.add_argument("--by", default="model", metavar="COL",
                        help="column naming the model (default model)")
    scores.add_argument("--question", default="question", metavar="COL",
                        help="column naming the question (default question)")
    scores.add_argument("--probability", default="probability", metavar="COL",
                        help="column of P(YES) (default probability)")
    scores.add_argument("--outcome", default="outcome", metavar="COL",
                        help="column of the 0/1 outcome (default outcome)")
    scores.add_argument("--timestamp", default=None, metavar="COL",
                        help="column of the forecast date: every table scores the latest "
                        "forecast per model and question (default forecast_date, used when "
                        "present; a column named here must exist)")
    scores.add_argument("--opened", default=None, metavar="COL",
                        help="column of the date the question opened, for --cutoffs "
                        "(default opened; a column named here must exist, and goes with "
                        "--cutoffs)")
    scores.add_argument("--cluster", default=None, metavar="COL",
                        help="column grouping related questions (a topic, a question set), "
                        "one value per question: the unit the intervals resample (also "
                        "--calibration's; default: each question; --forecastbench and "
                        "--decomposition resample questions and refuse it)")
    scores.add_argument("--accuracy-convention", choices=("paper", "code"), default="paper",
                        help="accuracy of a forecast of exactly 0.5: 'paper' (default, "
                        "1[p >= 0.5], a YES call) or 'code' (half credit)")
    scores.add_argument("--forecastbench", action="store_true",
                        help="also the ForecastBench leaderboard scores per model (Brier, "
                        "difficulty-adjusted Brier, Brier Index, peer score, skill scores; "
                        "binary outcomes, one forecast per model and question)")
    scores.add_argument("--naive", default=None, metavar="MODEL",
                        help="with --forecastbench: the reference model of the Brier skill "
                        "scores (default none: the skill scores are NaN)")
    scores.add_argument("--calibration", action="store_true",
                        help="also the debiased calibration error (squared l2, with its "
                        "square root) and SmoothECE per model, bootstrap over questions "
                        "(with --cutoffs, as every extra table: before and after the "
                        "contamination filter)")
    scores.add_argument("--decomposition", action="store_true",
                        help="also the Brier decomposition per model: incoherence (with "
                        "--checker) + reliability - resolution + uncertainty + within-bin, "
                        "bootstrap over linked questions")
    scores.add_argument("--checker", default=None, metavar="NAME",
                        help="with --decomposition: the consistency checker of the sets "
                        "(negation, and, cond, ...); rows then need --set and --role")
    scores.add_argument("--set", default=None, metavar="COL", dest="set_column",
                        help="with --checker: column naming each row's set (default set)")
    scores.add_argument("--role", default=None, metavar="COL",
                        help="with --checker: column naming each row's question in the "
                        "checker, such as P or not_P (default role)")
    add_resamples(scores, None, "bootstrap resamples of --forecastbench, --calibration and "
                  "--decomposition (default 999, where brier_decomposition in Python defaults to "
                  "2000; the per-model table keeps forecast_scores' own 2000)")
    add_seed(scores)
    scores.add_argument("--csv", default=None, metavar="PATH",
                        help="write the table of forecast scores as CSV")


def run(args: argparse.Namespace) -> int:
    from coherence import forecast_scores
    from coherence._validation import listed

    data = read_table(args.forecasts)
    if len(data) == 0:
        raise UsageError(f"{args.forecasts} has no rows")
    have = listed(data.columns, 12)
    for option in ("by", "question", "probability", "outcome", "cluster"):
        name = getattr(args, option)
        if name is not None and name not in data.columns:
            raise UsageError(f"--{option} names column {name!r}, which {args.forecasts} does "
                             f"not have (columns: {have})")
    # the models' names as written: '1.10' read as the number 1.1 matched no --cutoffs key
    data = check_id_spellings(data, args.forecasts, [args.by, args.question, args.cluster],
                              as_written=[args.by])
    cutoffs = _read_cutoffs(args.cutoffs)
    if args.opened is not None and not args.cutoffs:
        # without cutoffs there is no contamination filter: the column was read by nothing
        raise UsageError("--opened names the column the --cutoffs filter reads; pass "
                         "--cutoffs too, or drop --opened")
    if args.opened is not None and args.opened not in data.columns:
        raise UsageError(f"--opened names column {args.opened!r}, which {args.forecasts} "
                         f"does not have (columns: {have})")
    if args.timestamp is not None and args.timestamp not in data.columns:
        # named on purpose: not dropped for its absence (the revisions would be refused as
        # duplicates, or, with none, the option go unused without a word)
        raise UsageError(f"--timestamp names column {args.timestamp!r}, which "
                         f"{args.forecasts} does not have (columns: {have})")
    _check_decomposition_options(args, data, have)
    _check_extra_options(args, data)
    _check_resamples(args)
    timestamp = args.timestamp or ("forecast_date" if "forecast_date" in data.columns
                                   else None)
    result = forecast_scores(data, by=args.by, question=args.question,
                             probability=args.probability, outcome=args.outcome,
                             opened=args.opened or "opened", cutoffs=cutoffs,
                             timestamp=timestamp,
                             cluster=args.cluster,
                             accuracy_convention=args.accuracy_convention, rng=args.seed)
    # computed before anything is printed: an error leaves no partial output
    extra = _extra_tables(args, data, result)
    print(result.summary())
    if args.csv:
        result.scores_frame().to_csv(args.csv, index=False)
    for title, frame in extra:
        print("\n" + textwrap.fill(title, width=100))
        if frame is not None:
            print_frame(frame)
    return EXIT_OK


def _read_cutoffs(cutoffs_path: str | None) -> dict[str, Any] | None:
    """The --cutoffs file's JSON object (model name -> date), or None without one."""
    cutoffs = None
    if cutoffs_path:
        path = Path(cutoffs_path)
        if not path.is_file():
            raise UsageError(f"no such file: {cutoffs_path}")
        try:
            cutoffs = json.loads(path.read_text())
        except json.JSONDecodeError as exc:
            raise UsageError(f"{cutoffs_path} is not valid JSON: {exc}") from exc
        if not isinstance(cutoffs, dict):
            raise UsageError(f"{cutoffs_path} must hold a JSON object mapping model names "
                             "to dates")
    return cutoffs


def _check_decomposition_options(args: argparse.Namespace, data: Any, have: str) -> None:
    """--set and --role go with --checker, which goes with --decomposition and names a
    checker; their columns must be in the table (set ids written one way). Fills in the
    default column names."""
    for option, name in (("set", args.set_column), ("role", args.role)):
        if name is not None and args.checker is None:
            # without a checker there are no sets: the incoherence would be 0 without a word
            raise UsageError(f"--{option} goes with --decomposition --checker NAME (the sets "
                             "of a consistency checker); pass --checker too, or drop "
                             f"--{option}")
    args.set_column = args.set_column or "set"
    args.role = args.role or "role"
    if args.checker is not None:
        from coherence import CHECKERS

        if not args.decomposition:
            raise UsageError("--checker goes with --decomposition")
        if args.checker not in CHECKERS:
            raise UsageError(f"--checker must be one of {', '.join(CHECKERS)}; got "
                             f"{args.checker!r}")
        for option, name in (("set", args.set_column), ("role", args.role)):
            if name not in data.columns:
                raise UsageError(f"--{option} names column {name!r}, which {args.forecasts} "
                                 f"does not have (columns: {have})")
        # set ids written two ways (01 and 1) would join two sets into one
        check_id_spellings(data, args.forecasts, [args.set_column])


def _check_extra_options(args: argparse.Namespace, data: Any) -> None:
    """--cluster is refused by the tables that resample questions; --naive goes with
    --forecastbench and names a model of the table."""
    for option, flag in (("forecastbench", args.forecastbench),
                         ("decomposition", args.decomposition)):
        if args.cluster is not None and flag:
            # their intervals resample questions (or linked sets): clustered ones were asked
            raise UsageError(f"--cluster {args.cluster} cannot be honoured by --{option}, "
                             "whose intervals resample questions (it takes no cluster); "
                             f"drop --cluster, or run --{option} without it")
    if args.naive is not None and not args.forecastbench:
        raise UsageError("--naive is an option of --forecastbench (the reference model of the "
                         "Brier skill score); pass --forecastbench too, or drop --naive")
    if args.naive is not None and args.naive not in set(data[args.by].astype(str)):
        raise UsageError(f"--naive names model {args.naive!r}, which {args.forecasts} does "
                         "not have")


def _check_resamples(args: argparse.Namespace) -> None:
    """``--resamples`` sets the bootstrap of the extra tables only: given without one, it
    was read by nothing (the per-model table's intervals keep ``forecast_scores``' own
    2000 replicates), and the run looked as if it had used it. Fills in the default 999."""
    extras = args.forecastbench or args.calibration or args.decomposition
    if args.resamples is not None and not extras:
        raise UsageError(f"--resamples {args.resamples} sets the bootstrap of --forecastbench, "
                         "--calibration and --decomposition; the per-model table's intervals "
                         "keep their own 2000 replicates: pass one of those options, or drop "
                         "--resamples")
    args.resamples = 999 if args.resamples is None else args.resamples


def _scored_rows(args: argparse.Namespace, data: Any, per: Any) -> Any:
    """The file's rows that ``forecast_scores`` scored (``per``: its ``per_forecast``, whose
    rows keep the file's row labels): the latest forecast per (model, question) and, for
    the filtered scores, only those the contamination filter kept."""
    kept = data.loc[per.index.sort_values()]
    same = kept[[args.by, args.question]].astype(str).to_numpy() == per.loc[
        kept.index, [args.by, "question"]].astype(str).to_numpy()
    if not same.all():  # never score other rows than those forecast_scores kept
        raise RuntimeError("coherence scores: the scored forecasts could not be matched "
                           "to the file's rows")
    return kept


def _extra_tables(args: argparse.Namespace, data: Any,
                  result: Any) -> list[tuple[str, Any]]:
    """(title, table) of each table --forecastbench, --calibration and --decomposition ask
    for, on the rows the summary scored; with --cutoffs each is followed by the same table
    after the contamination filter, as the summary's scores are (a table that cannot be
    computed on the filtered rows says why in place of its rows)."""
    wanted = [make for flag, make in ((args.forecastbench, _forecastbench),
                                      (args.calibration, _calibration),
                                      (args.decomposition, _decomposition)) if flag]
    if not wanted:
        return []
    rows = data  # with revisions (a timestamp), the latest forecast per (model, question)
    if len(result.per_forecast) < len(data):
        rows = _scored_rows(args, data, result.per_forecast)
    if not args.cutoffs:
        return [table for make in wanted for table in make(args, rows)]
    after = "after the contamination filter"
    filtered = (None if result.filtered is None
                else _scored_rows(args, data, result.filtered.per_forecast))
    extra: list[tuple[str, Any]] = []
    for make in wanted:
        tables = make(args, rows)
        extra += [(f"[before the contamination filter] {title}", frame)
                  for title, frame in tables]
        name = tables[0][0].split(" (")[0]
        if filtered is None:
            extra.append((f"[{after}] {name}: none, as the filter kept no forecast", None))
            continue
        try:
            extra += [(f"[{after}] {title}", frame) for title, frame in make(args, filtered)]
        except ValueError as exc:  # e.g. a set the filter left incomplete; said, not hidden
            extra.append((f"[{after}] {name}: not computed on the {len(filtered)} forecasts "
                          f"the filter kept: {exc}", None))
    return extra


def _forecastbench(args: argparse.Namespace, data: Any) -> list[tuple[str, Any]]:
    """The ForecastBench leaderboard: (title, table) of the values, then of the intervals."""
    import pandas as pd

    from coherence import FORECASTBENCH_SCORES
    from coherence import forecastbench_scores

    frame = data.assign(**{args.by: data[args.by].astype(str)})
    result = forecastbench_scores(frame, question=args.question, model=args.by,
                                  probability=args.probability, outcome=args.outcome,
                                  naive=args.naive, n_resamples=args.resamples, rng=args.seed)
    table = result.table
    short = {"brier": "brier", "difficulty_adjusted_brier": "adj_brier",
             "brier_index": "brier_index", "peer_score": "peer_score", "bss": "bss",
             "bss_relative": "bss_relative"}
    values = table[["rank", "model", "n_questions", *FORECASTBENCH_SCORES]]
    level = round(result.confidence_interval.confidence_level * 100)
    intervals = pd.DataFrame(
        [{"model": row["model"], "score": name, "ci_low": row[f"{score}_ci_low"],
          "ci_high": row[f"{score}_ci_high"]}
         for _, row in table.iterrows() for score, name in short.items()])
    return [(f"ForecastBench scores ({result.n_questions} questions; adj_brier: "
             "difficulty-adjusted Brier; bss: Brier skill score):",
             values.rename(columns=short)),
            (f"{level}% intervals of the ForecastBench scores ({result.n_resamples} bootstrap "
             "replicates over questions, fixed effects re-estimated):", intervals)]


def _calibration(args: argparse.Namespace, data: Any) -> list[tuple[str, Any]]:
    """Debiased calibration error and SmoothECE per model: one (title, table)."""
    import pandas as pd

    from coherence import calibration_error
    from coherence import smooth_ece

    rows = []
    for model, part in data.groupby(args.by, sort=True):
        ce = calibration_error(part, probability=args.probability, outcome=args.outcome,
                               group=args.cluster or args.question,
                               n_resamples=args.resamples,
                               rng=args.seed)
        # the same input checks as calibration_error's: an error here is not hidden as NaN
        sm = smooth_ece(part, probability=args.probability, outcome=args.outcome,
                        n_resamples=0, rng=args.seed).statistic
        l2 = ce.l2_interval
        rows.append({"model": model, "n": ce.n_obs, "ce_sq": ce.statistic,
                     "ce_sq_low": ce.confidence_interval.low,
                     "ce_sq_high": ce.confidence_interval.high, "l2_ce": ce.l2_estimate,
                     "l2_low": l2.low, "l2_high": l2.high, "plugin_sq": ce.plugin,
                     "smooth_ece": sm, "bins": ce.n_bins_used})
    return [("Calibration per model (ce_sq: debiased squared l2 calibration error over 10 "
             "equal-mass bins, with its 95% bootstrap interval over questions (or --cluster); "
             "l2_ce: its "
             "square root; plugin_sq: the uncorrected value; smooth_ece: SmoothECE, Blasiok "
             "and Nakkiran 2023; bins: the bins used, fewer than 10 where tied forecasts "
             "share one or a model has fewer than 10 forecasts):", pd.DataFrame(rows))]


def _decomposition(args: argparse.Namespace, data: Any) -> list[tuple[str, Any]]:
    """The Brier decomposition per model: one (title, table), a row per component."""
    import pandas as pd

    from coherence import brier_decomposition

    frames = []
    for model, part in data.groupby(args.by, sort=True):
        res = brier_decomposition(part, checker=args.checker, question=args.question,
                                  probability=args.probability, outcome=args.outcome,
                                  group=args.set_column, role=args.role,
                                  n_resamples=args.resamples, rng=args.seed)
        frames.append(res.table.assign(model=model))
    table = pd.concat(frames, ignore_index=True)
    table = table[["model", "component", "value", "ci_low", "ci_high"]]
    sets = f"sets of the '{args.checker}' checker" if args.checker else "no sets (--checker)"
    return [(f"Brier decomposition per model ({sets}; brier = incoherence + reliability - "
             "resolution + uncertainty + within_bin; 95% bootstrap intervals over questions "
             "joined by shared sets):", table)]
