"""``coherence test``: every applicable test on a user's belief/action table.

Lists (``--by``, ``--evidence``, ``--tests``) are comma-separated and may be
repeated (``--by model,dataset`` or ``--by model --by dataset``), so a file name
after them is never taken for a column. Every column named on the command line
is checked against the file before anything runs; an empty table is an error.
"""

from __future__ import annotations

import argparse
import dataclasses
import hashlib
import sys
import warnings
from pathlib import Path
from typing import Any

from ._common import EXIT_FAILURE
from ._common import EXIT_OK
from ._common import UsageError
from ._common import add_report_options
from ._common import check_id_spellings
from ._common import draw_counts
from ._common import positive_int
from ._common import read_table

__all__ = ["add_parser", "run"]

ACTIONS = ("yes", "no", "defer")
DEFAULT_BY = ("model", "dataset")
# the tests that read the action column, and so its yes/no/defer labels
DECISION_TESTS = frozenset({"ci", "ci_evidence", "ci_calibrated", "leakage",
                            "leakage_evidence", "monotonicity"})


def columns_list(text: str) -> list[str]:
    """``"a,b"`` -> ``["a", "b"]`` (an argparse type; ``-`` is the empty list)."""
    if text.strip() == "-":
        return []
    names = [t.strip() for t in text.split(",")]
    if not all(names):
        raise argparse.ArgumentTypeError(f"empty name in {text!r}; expected COL[,COL...]")
    return names


def optional_column(text: str) -> str | None:
    """A column name, or ``-`` for none (an argparse type of the optional columns)."""
    return None if text.strip() == "-" else text


def k_value(text: str) -> int | str:
    """``auto`` or a positive count of neighbours (an argparse type)."""
    if text.strip() == "auto":
        return "auto"
    return positive_int(text)


def level(text: str) -> float:
    """A confidence level strictly between 0 and 1 (an argparse type: the report checks it
    only as each test runs, so a bad level would fail every cell instead of the command)."""
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid float value: {text!r}") from None
    if not 0.0 < value < 1.0:
        raise argparse.ArgumentTypeError(f"must be strictly between 0 and 1; got {value}")
    return value


def actions_map(text: str) -> dict[str, str]:
    """``"yes=buy,no=sell,defer=hold"`` -> ``{"buy": "yes", ...}`` (your label -> ours)."""
    mapping: dict[str, str] = {}
    for item in text.split(","):
        ours, sep, yours = item.partition("=")
        ours, yours = ours.strip(), yours.strip()
        if not sep or ours not in ACTIONS or not yours:
            raise argparse.ArgumentTypeError(
                f"expected yes=LABEL,no=LABEL,defer=LABEL (any of the three); got {item!r}")
        if yours in mapping:
            raise argparse.ArgumentTypeError(f"label {yours!r} is mapped twice")
        mapping[yours] = ours
    return mapping


def add_parser(sub: Any) -> None:
    from coherence import TEST_NAMES
    from coherence import ReportOptions

    test = sub.add_parser(
        "test", help="run every applicable test on your belief/action table",
        description="Run the coherence tests on a belief/action table (CSV, TSV, JSON or "
        "parquet), one cell per value of the --by columns (default: model and dataset, "
        "those present). Prints the adjusted p-values by cell and test and a compact table "
        "of every result (100 columns wide); --out writes the HTML report.",
        epilog="example: coherence test answers.csv --belief p --action decision --group "
        "case --by llm --actions yes=buy,no=sell,defer=hold --out report.html")
    test.add_argument("table", help="CSV, TSV, JSON or parquet file, one row per elicitation")
    for col, default in (("belief", "belief"), ("outcome", "outcome"), ("group", "context")):
        test.add_argument(f"--{col}", default=default, metavar="COL",
                          help=f"column name (default {default})")
    for col in ("action", "prompt", "repetition", "truth"):
        test.add_argument(f"--{col}", type=optional_column, default=col, metavar="COL",
                          help=f"column name (default {col}; '-': none, even if the table "
                          f"has a column {col!r})")
    test.add_argument("--evidence", type=columns_list, action="extend", default=[],
                      metavar="COL[,COL...]", help="evidence columns (the 'with x' variants)")
    test.add_argument("--by", type=columns_list, action="extend", default=None,
                      metavar="COL[,COL...]",
                      help="columns defining cells, each must exist ('-': one cell; "
                      "default: model,dataset, those present)")
    test.add_argument("--tests", type=columns_list, action="extend", default=None,
                      metavar="NAME[,NAME...]",
                      help="tests to run (default all): " + ", ".join(TEST_NAMES))
    test.add_argument("--reference-prompt", default=None, metavar="LABEL",
                      help="prompt variant the decision tests use and the prompt-consistency "
                      "RMSEs compare against (default: 'standard', or the only prompt)")
    test.add_argument("--actions", type=actions_map, default=None,
                      metavar="yes=A,no=B,defer=C",
                      help="your action labels, mapped to the tests' yes/no/defer "
                      "(e.g. yes=buy,no=sell,defer=hold)")
    defaults = ReportOptions()  # report's own defaults
    test.add_argument("--k", type=k_value, default=defaults.k, metavar="K",
                      help=f"neighbours of the ci tests' kNN estimate (default {defaults.k})")
    test.add_argument("--folds", type=positive_int, default=defaults.n_splits, metavar="N",
                      help="cross-validation folds of the leakage test (default "
                      f"{defaults.n_splits})")
    test.add_argument("--bins", type=positive_int, default=defaults.n_bins, metavar="N",
                      help=f"belief bins of the calibration cells (default {defaults.n_bins})")
    test.add_argument("--confidence", type=level, default=defaults.confidence_level,
                      metavar="LEVEL", help="level of every interval (default "
                      f"{defaults.confidence_level})")
    test.add_argument("--out", default=None, metavar="PATH", help="write the HTML report")
    test.add_argument("--csv", default=None, metavar="PATH", help="write the tidy results")
    add_report_options(test)


def _check_columns(data: Any, args: argparse.Namespace, path: str) -> tuple[str, ...]:
    """Validate what the command line names against the file; return the cells' columns."""
    from coherence import TEST_NAMES
    from coherence._validation import listed

    if len(data) == 0:
        raise UsageError(f"{path} has no rows")
    have = [str(c) for c in data.columns]
    shown = listed(have, 12)

    def need(option: str, name: str) -> None:
        if name not in data.columns:
            raise UsageError(f"{option} names column {name!r}, which {path} does not have "
                             f"(columns: {shown})")

    need("--belief", args.belief)
    need("--group", args.group)
    # an optional column named on purpose must exist: a misspelt --prompt would pool the
    # prompts, a misspelt --repetition or --truth drop the tests that read it
    for option in ("action", "outcome", "prompt", "repetition", "truth"):
        name = getattr(args, option)
        if name is not None and name != option:
            need(f"--{option}", name)
    for name in args.evidence:
        need("--evidence", name)
    if args.by is None:
        by = tuple(c for c in DEFAULT_BY if c in data.columns)
    else:
        for name in args.by:
            need("--by", name)
        by = tuple(args.by)
    for name in by:  # a blank cell label would be a cell of its own, named by nothing
        blank = data.index[data[name].isna().to_numpy()]
        if len(blank):
            rows = listed(blank)
            raise UsageError(f"the cell column {name!r} of {path} is blank on {len(blank)} "
                             f"row(s) (rows {rows}, counting from 0 after the header); fill "
                             "them in, or leave the column out of --by")
    for name in args.tests or ():
        if name not in TEST_NAMES:
            raise UsageError(f"--tests: unknown test {name!r}; expected some of "
                             + ", ".join(TEST_NAMES))
    if args.actions is not None:
        if args.action is None:
            raise UsageError("--actions maps the labels of the action column, and --action - "
                             "names none")
        need("--action", args.action)
        labels = {str(v) for v in data[args.action].dropna().unique()}
        unknown = sorted(labels - set(args.actions) - set(ACTIONS))
        if unknown:
            raise UsageError(f"--actions does not map the label(s) {', '.join(unknown)} of "
                             f"column {args.action!r}")
    return by


def _check_action_labels(data: Any, args: argparse.Namespace, path: str) -> None:
    """Labels other than yes/no/defer, unmapped, would leave the decision tests blank."""
    from coherence import TEST_NAMES
    from coherence._validation import listed

    if (args.actions is not None or args.action not in data.columns
            or not set(args.tests or TEST_NAMES) & DECISION_TESTS):
        return
    labels = {str(v) for v in data[args.action].dropna().unique()}
    unknown = sorted(labels - set(ACTIONS))
    if unknown:
        shown_labels = listed(unknown, 6)
        raise UsageError(
            f"the action column {args.action!r} of {path} has label(s) {shown_labels}, "
            "not the tests' yes/no/defer: map yours with --actions "
            "yes=LABEL,no=LABEL,defer=LABEL (e.g. --actions yes=buy,no=sell,defer=hold), "
            "or leave the decision tests out with --tests")


def _reference_prompt(data: Any, args: argparse.Namespace, path: str) -> str:
    if args.prompt not in data.columns:
        if args.reference_prompt not in (None, "standard"):
            print(f"coherence test: note: --reference-prompt {args.reference_prompt!r} is not "
                  f"used: {path} has no prompt column "
                  f"({'--prompt -' if args.prompt is None else repr(args.prompt)})",
                  file=sys.stderr)
        return "standard"
    labels = sorted({str(v) for v in data[args.prompt].dropna().unique()})
    if args.reference_prompt is None:
        if "standard" in labels or len(labels) != 1:
            if "standard" not in labels:
                raise UsageError(f"the prompt column {args.prompt!r} of {path} has no "
                                 f"'standard' variant; choose the reference with "
                                 f"--reference-prompt (one of {', '.join(labels)})")
            return "standard"
        return labels[0]
    if args.reference_prompt not in labels:
        raise UsageError(f"--reference-prompt {args.reference_prompt!r} is not a value of the "
                         f"prompt column {args.prompt!r} (values: {', '.join(labels)})")
    return str(args.reference_prompt)


def _set_aside_file(path: str, by: tuple[str, ...]) -> Any:
    """The replies ``coherence elicit`` set aside next to the table (``<stem>_incoherent.csv``,
    with a ``reason`` column), counted in the report's diagnostics; None when absent."""
    sidecar = Path(path).with_name(Path(path).stem + "_incoherent.csv")
    if not sidecar.is_file():
        return None
    # a sidecar left out without a word would read as no reply set aside: a note says why
    why = ""
    try:  # read as the table is: a model 'None' or '1.10' names the table's cell
        frame = check_id_spellings(read_table(str(sidecar)), str(sidecar), (), as_written=by)
    except (ValueError, OSError, UsageError) as exc:
        why = f"it cannot be read ({(str(exc) or repr(exc)).splitlines()[0]})"
    else:
        lacking = [c for c in ("reason", *by) if c not in frame.columns]
        if lacking:
            why = f"it has no column {', '.join(map(repr, lacking))}"
    if why:
        print(f"coherence test: note: the replies set aside in {sidecar} are not counted: "
              f"{why}", file=sys.stderr)
        return None
    print(f"coherence test: counting the {len(frame)} replies set aside in {sidecar}",
          file=sys.stderr)
    return frame


def run(args: argparse.Namespace) -> int:

    from coherence import DegenerateDataWarning
    from coherence import report
    from coherence._text import cell_label
    from coherence._text import text_table

    data = read_table(args.table)
    by = _check_columns(data, args, args.table)
    # the cells' names as written: a model '1.10' read as the number 1.1 was named '1.1'
    data = check_id_spellings(data, args.table, [args.group, args.prompt, args.repetition,
                                                 args.action, *by], as_written=by)
    reference = _reference_prompt(data, args, args.table)
    _check_action_labels(data, args, args.table)
    # report maps the labels, the offered actions of a menu column with them (mapped here,
    # the chosen actions alone were renamed and the IIA test refused every row)
    actions = (None if args.actions is None
               else {ours: yours for yours, ours in args.actions.items()})
    set_aside = _set_aside_file(args.table, by)
    draws = draw_counts(args)
    with warnings.catch_warnings():  # the summary leads with the degeneracy; --permutations:
        warnings.simplefilter("ignore", DegenerateDataWarning)  # the note above says it once
        warnings.filterwarnings("ignore", "report.n_permutations", DeprecationWarning)
        rep = report(data, belief=args.belief, action=args.action, outcome=args.outcome,
                     group=args.group, prompt=args.prompt, repetition=args.repetition,
                     truth=args.truth, evidence=args.evidence, by=by,
                     tests=args.tests or "all", reference_prompt=reference,
                     adjust=args.adjust or "holm", engine=args.engine, **draws,
                     k=args.k, n_splits=args.folds, n_bins=args.bins,
                     confidence_level=args.confidence,
                     n_jobs=args.jobs, backend=args.backend,
                     progress=False if args.quiet else None, set_aside=set_aside,
                     actions=actions, rng=args.seed)
    if args.by is None and not by:
        print(f"coherence test: note: no {' or '.join(map(repr, DEFAULT_BY))} column, so "
              "all rows form one cell; name the cell columns with --by", file=sys.stderr)
    digest = hashlib.sha256(Path(args.table).read_bytes()).hexdigest()
    settings = {**rep.settings, "data_file": args.table, "data_file_sha256": digest}
    rep = dataclasses.replace(rep, settings=settings)
    print(rep.summary())
    frame = rep.to_frame()
    # the cells' names as the report gives them: ("a, b", "c") and ("a", "b, c") apart
    cell = [cell_label({c: r[c] for c in rep.by}) if rep.by else "all"
            for r in frame.to_dict("records")]
    compact = frame.assign(cell=cell)[["cell", "test", "statistic", "ci_low", "ci_high",
                                       "pvalue", "pvalue_adjusted", "n_obs"]]
    print("\nEvery result (statistic, its interval, raw and adjusted p):")
    print(text_table(compact.rename(columns={"pvalue_adjusted": "p_adj"}), width=100))
    failed = frame[frame["error"] != ""]
    for row in failed.to_dict("records"):  # by name: a column 'llm-name' is no attribute
        print(f"  {row['test']} failed on {cell_label({c: row[c] for c in rep.by})}"
              f": {row['error']}"[:300])
    absent = _requested_not_run(rep, args)
    if args.out:
        rep.to_html(args.out)
        print(f"\nreport written to {args.out}")
    if args.csv:
        frame.to_csv(args.csv, index=False)
    return EXIT_FAILURE if len(failed) or absent == len(set(args.tests or ())) > 0 else EXIT_OK


def _requested_not_run(rep: Any, args: argparse.Namespace) -> int:
    """How many of the tests named in ``--tests`` ran on no cell (they did not apply to
    the table: the HTML report says what each needs), said on stderr. When none of them
    ran the command fails (exit 1: an empty grid is no answer); with the default (every
    test) one that does not apply is no mistake, and nothing is said."""
    if not args.tests:
        return 0
    absent = [name for name in dict.fromkeys(args.tests)
              if not any(name in c.results or name in c.errors for c in rep.cells)]
    if absent:
        print(f"coherence test: {', '.join(absent)} did not run: "
              f"{'it does' if len(absent) == 1 else 'they do'} not apply to this table (the "
              "columns a test needs are absent, or --action/--outcome/--prompt name none; "
              "--out's report says what each test needs)", file=sys.stderr)
    return len(absent)
