"""The ``coherence`` command line.

Exit codes: 0 success, 1 a test or computation failed, 2 a usage error (bad
arguments, unreadable input). User mistakes are reported in one line on
stderr, never as a traceback.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from . import __version__

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


class _Parser(argparse.ArgumentParser):
    def error(self, message: str) -> None:  # type: ignore[override]
        self.print_usage(sys.stderr)
        print(f"{self.prog}: error: {message}", file=sys.stderr)
        raise SystemExit(EXIT_USAGE)


def _build_parser() -> argparse.ArgumentParser:
    parser = _Parser(
        prog="coherence",
        description="Test whether stated probabilities behave like beliefs.",
    )
    parser.add_argument("--version", action="version", version=f"%(prog)s {__version__}")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", parser_class=_Parser)

    demo = sub.add_parser(
        "demo",
        help="run the full coherence study on simulated agents",
        description="Simulate a study (contexts x repetitions) for each simulated agent "
        "(rational, rational with report noise, leaky, nonmonotone, prompt-sensitive) "
        "and print a per-agent summary with the exact ground truth.",
    )
    demo.add_argument("--quick", action="store_true", help="a smaller study (50 contexts)")
    demo.add_argument("--n-contexts", type=int, default=None, metavar="N",
                      help="contexts per agent (default 200, or 50 with --quick)")
    demo.add_argument("--n-repetitions", type=int, default=5, metavar="R",
                      help="repetitions per context and prompt (default 5)")
    demo.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    return parser


def _run_demo(args: argparse.Namespace) -> int:
    import pandas as pd

    from ._demo import demo_studies, demo_summary

    n_contexts = args.n_contexts if args.n_contexts is not None else (50 if args.quick else 200)
    if n_contexts < 1 or args.n_repetitions < 1:
        print("coherence demo: error: --n-contexts and --n-repetitions must be >= 1",
              file=sys.stderr)
        return EXIT_USAGE
    start = time.perf_counter()
    studies = demo_studies(n_contexts=n_contexts, n_repetitions=args.n_repetitions,
                           rng=args.seed)
    table = demo_summary(studies)
    print(f"belief-coherence {__version__}: simulated study, {n_contexts} contexts x "
          f"{args.n_repetitions} repetitions per agent, seed {args.seed}\n")
    with pd.option_context("display.width", 160, "display.max_columns", 30,
                           "display.float_format", "{:.4g}".format):
        print(table.to_string())
    print(f"\ntrue_cmi: exact I(action; outcome | belief) in nats (0 = coherent); "
          f"nonmonotone_pairs: action pairs whose choice share is not monotone in the belief.\n"
          f"done in {time.perf_counter() - start:.1f} s")
    return EXIT_OK


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the ``coherence`` console script."""
    parser = _build_parser()
    args = parser.parse_args(argv)
    if args.command is None:
        parser.print_help()
        return EXIT_USAGE
    try:
        if args.command == "demo":
            return _run_demo(args)
    except (ValueError, TypeError, OSError) as exc:
        print(f"coherence {args.command}: error: {exc}", file=sys.stderr)
        return EXIT_FAILURE
    parser.error(f"unknown command {args.command!r}")
    return EXIT_USAGE  # pragma: no cover


if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
