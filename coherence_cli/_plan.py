"""``coherence plan``: the power of a test at each planned study design, before paying for calls."""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Any

from ._common import EXIT_OK
from ._common import UsageError
from ._common import add_seed
from ._common import check_id_spellings
from ._common import positive_int
from ._common import print_frame
from ._common import read_table
from ._pairs import read_pairs_file

__all__ = ["add_parser", "run"]

AGENTS = ("rational", "leaky", "nonmonotone", "prompt_sensitive")


def add_parser(sub: Any) -> argparse.ArgumentParser:
    """Register the ``plan`` command on the sub-parsers ``sub``."""
    from coherence import PLAN_TESTS

    p = sub.add_parser(
        "plan", help="power of a test at each study design (contexts x repetitions), simulated "
        "from a pilot table or an agent",
        description="Simulates studies of every design (contexts x repetitions) from a pilot "
        "table (its contexts resampled: the pilot is the truth) or from a simulated agent "
        "(--agent, with --effect its violation), runs the test on each and prints the power "
        "per design with its 95% Wilson interval and the paid calls it costs "
        "(coherence.plan).",
        epilog="tests: " + ", ".join(PLAN_TESTS) + ". example: coherence plan --agent leaky "
        "--effect 0.3 --test ci_test --contexts 50 100 200 --repetitions 3 5")
    p.add_argument("pilot", nargs="?", default=None, metavar="PILOT",
                   help="pilot table (CSV, TSV, parquet, JSON records); or use --agent")
    p.add_argument("--agent", choices=AGENTS, default=None,
                   help="simulate studies from this agent (default settings) instead of a pilot")
    p.add_argument("--test", required=True, choices=PLAN_TESTS, help="the test planned for")
    p.add_argument("--contexts", type=positive_int, nargs="+", required=True, metavar="N",
                   help="contexts per study (pairs, for conditional_forecasting)")
    p.add_argument("--repetitions", type=positive_int, nargs="+", default=None, metavar="R",
                   help="repetitions per context (default 5; 1, the only value, for the LIE "
                   "check and conditional_forecasting)")
    p.add_argument("--effect", type=float, default=None,
                   help="the agent's violation (see coherence.plan); default: as built")
    p.add_argument("--baseline", default=None, metavar="PATH",
                   help="baseline table of the LIE check (iterated_expectation_check)")
    p.add_argument("--sims", type=positive_int, default=200, metavar="N",
                   help="simulated studies per design (default 200)")
    p.add_argument("--alpha", type=float, default=0.05, help="level (default 0.05)")
    p.add_argument("--power", type=float, default=0.8, help="target power (default 0.8)")
    add_seed(p)
    p.add_argument("--quiet", action="store_true",
                   help="no progress bar (shown on stderr when it is a terminal)")
    p.add_argument("--csv", default=None, metavar="PATH", help="write the power table as CSV")
    return p


def run(args: argparse.Namespace) -> int:
    """Run ``coherence plan``: the power table, then the cheapest design reaching the target."""
    import coherence

    if (args.pilot is None) == (args.agent is None):
        raise UsageError("give either a pilot table or --agent, not both or neither")
    if args.agent is not None:
        source: Any = getattr(coherence.Agent, args.agent)()
    else:
        if not Path(args.pilot).is_file():
            raise UsageError(f"no such file: {args.pilot}")
        if args.test == "conditional_forecasting" and args.pilot.lower().endswith(".json"):
            # the field's JSON result file, read as coherence pairs reads it (read_table
            # refused it); a pairs table is read as any pilot (it needs no 'pair' column)
            source = read_pairs_file(args.pilot)
        else:
            source = read_table(args.pilot)
            # ids written two ways (01 and 1) would pool two contexts of the pilot
            check_id_spellings(source, args.pilot, _ID_COLUMNS)
        _one_model(source, args.pilot)
    options = {}
    if args.baseline is not None:
        if not Path(args.baseline).is_file():
            raise UsageError(f"no such file: {args.baseline}")
        options["baseline"] = read_table(args.baseline)
        check_id_spellings(options["baseline"], args.baseline, _ID_COLUMNS)
    res = coherence.plan(source, test=args.test, n_contexts=args.contexts,
                         n_repetitions=args.repetitions, effect=args.effect, n_sims=args.sims,
                         alpha=args.alpha, power=args.power, options=options, rng=args.seed,
                         progress=False if args.quiet else None)
    origin = f"agent {args.agent}" if args.agent else f"pilot {args.pilot}"
    print(f"Power of {args.test} at alpha = {args.alpha} ({args.sims} simulated studies per "
          f"design, from the {origin}):")
    print_frame(res.table)
    if res.n_calls > 0:
        print(f"\nCheapest design with power >= {args.power}: {res.n_contexts} contexts x "
              f"{res.n_repetitions} repetitions = {res.n_calls} calls "
              f"(power {res.achieved_power:.2f}).")
    else:
        print(f"\nNo design reaches power {args.power}: plan more contexts or repetitions.")
    if args.csv:
        res.table.to_csv(args.csv, index=False)
        print(f"power table written to {args.csv}")
    return EXIT_OK


#: columns naming the model or dataset of a row (as ``coherence test``'s cells)
_CELL_COLUMNS = ("model", "dataset")
#: the id columns of a pilot (and of the LIE check's baseline) under the names plan reads
_ID_COLUMNS = ("context", "prompt", "repetition", "action", "variable", "state",
               *_CELL_COLUMNS)


def _one_model(pilot: Any, path: str) -> None:
    """A pilot of several models (or datasets) would be planned as one agent that is each
    of them by turns: refuse it, naming them."""
    from coherence._validation import listed

    for col in _CELL_COLUMNS:
        if col in pilot.columns:
            values = sorted({str(v) for v in pilot[col].dropna()})
            if len(values) > 1:
                shown = listed(values, 6)
                raise UsageError(f"the pilot {path} holds {len(values)} values of {col!r} "
                                 f"({shown}); plan pools every row into one agent, so give it "
                                 f"the rows of one {col} (each planned on its own)")
