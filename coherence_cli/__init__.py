"""The ``coherence`` command line.

Commands: ``demo`` (the main job), ``test`` (a user's belief/action table),
``pairs`` (conditional-forecasting pair files), ``scores`` (forecast scoring),
``consistency`` (consistency-check tuple files), ``elicit`` (ask a model,
or a simulated agent, for a belief/action table) and ``study`` (a whole study
from one TOML file: design, elicitation, tests, report).

Exit codes: 0 success; 1 a test or computation failed; 2 a usage error (bad
arguments, a missing or malformed file, a missing column); 130 interrupted
(Ctrl-C). Errors are one line on stderr, never a traceback (``--debug`` shows
it). A reader closing the pipe (``| head``) only cuts the printing short: the files
are written and the exit code is the command's.

The command line lives outside the statistical core: it is the one module
that may import all three packages (``coherence``, ``bayesnets``,
``elicitation``), each where a command needs it.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
import warnings
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from coherence import __version__

from . import _elicit
from ._common import EXIT_FAILURE
from ._common import EXIT_OK
from ._common import EXIT_USAGE
from ._common import UsageError
from ._common import add_report_options
from ._common import draw_counts
from ._common import positive_int
from ._common import print_frame
from ._common import read_table

#: Ctrl-C (128 + SIGINT, as a shell reports it)
EXIT_INTERRUPTED = 130


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        print(f"{self.prog}: error: {message} (see '{self.prog} --help')", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(prog="coherence",
                     description="Test whether stated probabilities behave like beliefs.")
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    parser.add_argument("--debug", action="store_true", help="show tracebacks of errors")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    demo = sub.add_parser(
        "demo", help="the main job: a full coherence study of simulated agents",
        description="On the bundled 'child' Bayesian network: contexts whose true posteriors "
        "cover [0, 1] evenly, five simulated agents (rational, rational with report noise, "
        "leaky, nonmonotone, prompt-sensitive), every test, an HTML report and a summary "
        "of which agent fails which test.")
    demo.add_argument("--quick", action="store_true",
                      help="a smaller, faster study (60 contexts, 200 permutations)")
    demo.add_argument("--n-contexts", type=positive_int, default=None, metavar="N",
                      help="contexts per agent (default 200, 60 with --quick)")
    demo.add_argument("--n-repetitions", type=positive_int, default=5, metavar="R",
                      help="repetitions per context and prompt (default 5)")
    demo.add_argument("--network", default="child", help="bundled network (default child)")
    demo.add_argument("--out", default="coherence-report.html", metavar="PATH",
                      help="HTML report path (default coherence-report.html)")
    demo.add_argument("--table", default=None, metavar="PATH",
                      help="where to write the belief/action table the report analysed, "
                      "which its rerun line names (default: the report's path with .csv)")
    add_report_options(demo)

    from . import _scores  # the commands' own modules
    from . import _test_cmd  # the commands' own modules

    _test_cmd.add_parser(sub)

    from . import _pairs  # the command's own module

    _pairs.add_parser(sub)

    _scores.add_parser(sub)

    from . import _consistency  # the command's own module

    _consistency.add_parser(sub)

    _elicit.add_parser(sub, positive_int)

    from . import _plan  # the commands' own modules
    from . import _study  # the commands' own modules

    _plan.add_parser(sub)
    _study.add_parser(sub)
    return parser


# --------------------------------------------------------------------------- commands
def _verdicts(rep: Any, truth: Any = None, alpha: float = 0.05) -> Any:
    """Per cell: the tests whose p-value is below alpha (and, for simulated agents,
    the tests whose property the agent's design violates)."""
    import pandas as pd

    from coherence._text import cell_verdicts
    from coherence._text import truth_cells

    # the p-values as the report adjusted them: raw ones with adjust="none"
    kind = "p" if rep.settings.get("adjust", "holm") == "none" else "adjusted p"
    verdicts = cell_verdicts(rep.summary_table(), alpha)
    # each truth row's cell as a tuple of labels, as the report's ground truth keys it
    rows_of = truth_cells(truth, verdicts) if truth is not None else []
    rows = []
    for cell, (name, failed) in verdicts.items():
        entry = {"cell": name, f"fails ({kind} < {alpha:g})": failed}
        if cell in rows_of:
            from bayesnets import designed_violations

            entry["violates by design"] = designed_violations(
                truth.iloc[[rows_of.index(cell)]])["violates by design"].iloc[0]
        rows.append(entry)
    return pd.DataFrame(rows).set_index("cell")


def _run_demo(args: argparse.Namespace) -> int:

    from bayesnets import run_demo
    n_contexts = args.n_contexts or (60 if args.quick else 200)
    draws = draw_counts(args, quick=args.quick)
    table = args.table or str(Path(args.out).with_suffix(".csv"))
    _check_demo_files(args.out, table)
    start = time.perf_counter()
    with warnings.catch_warnings():  # --permutations: draw_counts printed the note
        warnings.filterwarnings("ignore", "report.n_permutations", DeprecationWarning)
        rep, truth = run_demo(network=args.network, n_contexts=n_contexts,
                              n_repetitions=args.n_repetitions, engine=args.engine, **draws,
                              n_jobs=args.jobs, backend=args.backend,
                              progress=False if args.quiet else None,
                              adjust=args.adjust or ("bh" if args.quick else "holm"),
                              rng=args.seed, table_out=table)
    rep.to_html(args.out)
    print(f"belief-coherence {__version__}: {args.network} network, {n_contexts} contexts x "
          f"{args.n_repetitions} repetitions per agent, seed {args.seed}\n")
    print("Ground truth of each simulated agent:")
    print_frame(truth)
    from coherence._multiplicity import adjust_label

    label = adjust_label(rep.settings["adjust"])
    print(f"\nP-values by agent and test, {label} across the report (blank: does not "
          "apply):")
    print_frame(rep.summary_table())
    print(f"\nWhich agent fails which test at alpha = 0.05 ({label} p-values):")
    print_frame(_verdicts(rep, truth))
    print(f"\nreport written to {args.out} ({time.perf_counter() - start:.0f} s), the table it "
          f"analysed to {table}")
    return EXIT_OK


def _check_demo_files(out: str, table: str) -> None:
    """The table the demo writes (as CSV) must be a ``.csv`` file other than the report: the
    report's rerun line reads it by its ending, and an HTML ``--out`` of the same path was
    written over it (``--out r.csv`` named the table r.csv too)."""
    if Path(table).suffix.lower() != ".csv":
        raise UsageError(f"--table {table}: the table is written as CSV, and the report's "
                         "rerun line reads it by its ending; name the file .csv")
    if Path(table).resolve() == Path(out).resolve():
        raise UsageError(f"the table {table} and the report --out {out} are one file (the "
                         "report would be written over the table its rerun line names); "
                         "name the report .html, or pass --table PATH.csv")


def _run_pairs(args: argparse.Namespace) -> int:
    from ._pairs import run

    return run(args)


def _run_elicit(args: argparse.Namespace) -> int:
    return _elicit.run_elicit(args)


def _run_test(args: argparse.Namespace) -> int:
    from ._test_cmd import run

    return run(args)


def _run_scores(args: argparse.Namespace) -> int:
    from ._scores import run

    return run(args)


def _run_consistency(args: argparse.Namespace) -> int:
    from ._consistency import run

    return run(args)


def _run_plan(args: argparse.Namespace) -> int:
    from ._plan import run

    return run(args)


def _run_study(args: argparse.Namespace) -> int:
    from ._study import run

    return run(args)


_COMMANDS = {"demo": _run_demo, "test": _run_test, "pairs": _run_pairs,
             "scores": _run_scores, "consistency": _run_consistency,
             "elicit": _run_elicit, "plan": _run_plan, "study": _run_study}


class _PipeSafeOut:
    """Standard output that a reader closing the pipe (``coherence scores f.csv | head``)
    does not stop: what is printed after the close is dropped, and the command still
    writes its files (``--csv``, ``--out``) and exits with its own code (the closed pipe
    was an ``OSError``: exit 2, "usage error", and the files left unwritten)."""

    def __init__(self, stream: Any) -> None:
        self.stream = stream
        self.closed_pipe = False

    def write(self, text: str) -> int:
        if not self.closed_pipe:
            try:
                return int(self.stream.write(text))
            except BrokenPipeError:
                self.closed_pipe = True
        return len(text)

    def flush(self) -> None:
        if not self.closed_pipe:
            try:
                self.stream.flush()
            except BrokenPipeError:
                self.closed_pipe = True

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


def _run_command(args: argparse.Namespace) -> int:
    """The command, its standard output safe from a closed pipe."""
    out = _PipeSafeOut(sys.stdout)
    sys.stdout = out
    try:
        return _COMMANDS[args.command](args)
    finally:
        out.flush()
        sys.stdout = out.stream
        if out.closed_pipe:  # nothing more reaches the reader, not even at exit's flush
            import contextlib
            import os

            # (OSError, ValueError, AttributeError): no file behind it (a capture)
            with contextlib.suppress(OSError, ValueError, AttributeError):
                os.dup2(os.open(os.devnull, os.O_WRONLY), out.stream.fileno())


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``coherence`` console script."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        return _run_command(args)
    except KeyboardInterrupt:   # Ctrl-C: the way to stop a long run, not a crash to trace
        if args.debug:
            raise
        print(f"coherence {args.command}: interrupted"
              + ("; every reply received is in the cache: run the same command again to "
                 "resume" if args.command in ("elicit", "study") else ""), file=sys.stderr)
        return EXIT_INTERRUPTED
    except (UsageError, ModuleNotFoundError) as exc:  # a missing extra says what to install
        if args.debug:
            raise
        print(f"coherence {args.command}: error: {str(exc).splitlines()[0]}", file=sys.stderr)
        return EXIT_USAGE
    except (ValueError, TypeError, KeyError, OSError) as exc:
        if args.debug:
            raise
        message = str(exc).splitlines()[0] if str(exc) else type(exc).__name__
        # bad columns or values in the user's file are usage errors
        code = EXIT_USAGE if isinstance(exc, ValueError | KeyError | OSError) else EXIT_FAILURE
        print(f"coherence {args.command}: error: {message}", file=sys.stderr)
        return code
    except Exception as exc:  # a bug or a failed computation: still one line
        if args.debug:
            raise
        first = str(exc).splitlines()[0] if str(exc) else ""
        print(f"coherence {args.command}: failed: {type(exc).__name__}: {first}",
              file=sys.stderr)
        return EXIT_FAILURE


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
