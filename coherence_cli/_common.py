"""What every command of the ``coherence`` command line shares: exit codes, the usage
error, argument types, the report options, reading a table and printing one."""

from __future__ import annotations

import argparse
import io
from pathlib import Path
from typing import Any

__all__ = ["EXIT_FAILURE", "EXIT_OK", "EXIT_USAGE", "UsageError", "add_report_options",
           "draw_counts", "positive_int", "print_frame", "read_table"]

EXIT_OK, EXIT_FAILURE, EXIT_USAGE = 0, 1, 2


class UsageError(Exception):
    """A user mistake: reported in one line with exit code 2."""



def positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"invalid int value: {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"must be >= 1; got {value}")
    return value


def add_seed(p: Any) -> None:
    """The ``--seed`` option of every command that draws at random."""
    p.add_argument("--seed", type=int, default=0, help="random seed (default 0)")


def add_resamples(p: Any, default: int | None, help: str) -> None:
    """The ``--resamples`` option (a positive count ``B``; ``default`` None: the library's)."""
    p.add_argument("--resamples", type=positive_int, default=default, metavar="B", help=help)


def add_report_options(p: argparse.ArgumentParser) -> None:
    add_seed(p)
    p.add_argument("--engine", choices=("logistic", "catboost"), default="logistic",
                   help="leakage classifier (default logistic; catboost = the paper's)")
    add_resamples(p, None, "Monte Carlo draws of every test: permutations of the p-values and "
                  "bootstrap resamples of the intervals (default: 1000 for the ci and "
                  "leakage p-values, 500 for the rest)")
    p.add_argument("--permutations", type=positive_int, default=None, metavar="B",
                   help="deprecated, use --resamples: the draws of the ci and leakage "
                   "p-values only")
    p.add_argument("--jobs", type=int, default=1, metavar="N",
                   help="cells run in parallel (joblib n_jobs; default 1)")
    p.add_argument("--backend", default=None, metavar="NAME",
                   help="joblib backend of the cells (loky, threading, multiprocessing, dask, "
                   "ray: the last two need their package and, for dask, a running client); "
                   "default joblib's own")
    p.add_argument("--quiet", action="store_true", help="no progress bar")
    p.add_argument("--adjust", choices=("holm", "bh", "none"), default=None,
                   help="multiplicity adjustment of the p-values across the report (default "
                   "holm; bh = Benjamini-Hochberg, the default of demo --quick, whose 200 "
                   "permutations are too few for Holm; raw p-values are kept)")


def draw_counts(args: argparse.Namespace, *, quick: bool = False) -> dict[str, Any]:
    """The ``n_resamples`` (and deprecated ``n_permutations``) keywords of ``report`` from
    ``--resamples`` and ``--permutations``; ``quick``: 200 draws unless they are given.
    ``--permutations`` still works for one release, with a note on stderr."""
    import sys

    resamples = args.resamples if args.resamples is not None else (200 if quick else None)
    if args.permutations is None:
        return {"n_resamples": resamples}
    print("coherence: note: --permutations is deprecated and will be removed in the next "
          "release; use --resamples, which sets the draws of every test", file=sys.stderr)
    return {"n_permutations": args.permutations,
            "n_resamples": resamples if resamples is not None else 500}


def read_table(path: str) -> Any:
    import pandas as pd

    from coherence._files import index_as_columns

    p = Path(path)
    if not p.is_file():
        raise UsageError(f"no such file: {path}")
    suffix = p.suffix.lower()
    try:
        if suffix in (".parquet", ".pq"):
            try:
                frame = pd.read_parquet(p)
            except ImportError as exc:
                raise UsageError("reading parquet needs pyarrow: pip install "
                                 "'belief-coherence[parquet]' (or pyarrow)") from exc
            # a named index (set_index("model").to_parquet) is a column of the file: kept
            # as the index, its column was absent (the default cells pooled the models)
            try:
                return index_as_columns(frame, path)
            except ValueError as exc:
                raise UsageError(str(exc)) from None
        if suffix == ".json":  # utf-8-sig: a byte-order mark (Excel, PowerShell) is not data
            # dtype=False: JSON's own types, text kept as text (pandas read the ids "01"
            # and "1" as one number, and an "_at" column of dates as timestamps)
            return pd.read_json(io.StringIO(p.read_text(encoding="utf-8-sig")), dtype=False)
        if suffix in (".csv", ".txt", ".tsv"):
            return _read_delimited(p, path, "\t" if suffix == ".tsv" else ",")
    except (ValueError, pd.errors.ParserError, UnicodeDecodeError) as exc:
        raise UsageError(f"cannot read {path}: {str(exc).splitlines()[0]}") from exc
    raise UsageError(f"unsupported file type {suffix or '(none)'} for {path}; "
                     "expected .csv, .tsv, .parquet or .json")


def _read_delimited(p: Path, path: str, sep: str) -> Any:
    """A CSV or TSV file, read so that nothing in it changes meaning on the way: a blank
    cell, ``NA`` (R's) and ``nan`` / ``NaN`` (Python's) are missing, and every other word
    stays text (a model called ``None``, an action ``N/A``; a number column holding such
    a word is refused by the tests, naming the rows, where pandas would have read a
    dozen words as missing), two columns of one name are refused (pandas would rename
    the second ``name.1`` and the first be tested), a line of more or fewer values than
    the header names columns is refused (pandas made the first column the index and
    read every other one a column to the left, or left the cells missing), and a file
    with another separator gets a hint. Empty values after the last column (a trailing
    separator) are no values."""
    import warnings

    import pandas as pd

    from coherence._files import lines_of_another_width
    from coherence._validation import MISSING_WORDS

    with warnings.catch_warnings():  # a line of more values: refused below, named
        warnings.simplefilter("ignore", pd.errors.ParserWarning)
        frame = pd.read_csv(p, sep=sep, keep_default_na=False, index_col=False,
                            na_values=list(MISSING_WORDS))
    header = pd.read_csv(p, sep=sep, header=None, nrows=1, dtype=str,
                         keep_default_na=False).iloc[0].tolist() if len(frame.columns) else []
    twice = sorted({str(c) for c in header if header.count(c) > 1})
    if twice:
        raise UsageError(f"{path} has two or more columns named {', '.join(map(repr, twice))}; "
                         "rename or drop the copies (which one the tests should read is not "
                         "clear)")
    if len(frame.columns) == 1:
        name = str(frame.columns[0])
        other = next((c for c in (";", "\t", ",", "|") if c != sep and c in name), None)
        if other is not None:
            kind = {";": "semicolons", "\t": "tabs", ",": "commas", "|": "bars"}[other]
            raise UsageError(f"{path} reads as one column {name[:60]!r}: its columns seem to "
                             f"be separated by {kind}; save it comma-separated as .csv"
                             + (" (or name it .tsv)" if other == "\t" else ""))
    wrong = lines_of_another_width(p, sep, len(header))
    if wrong:
        raise UsageError(f"{path}: {wrong}")
    return frame


def check_id_spellings(frame: Any, path: str, columns: Any, *, as_written: Any = ()) -> Any:
    """Refuse an id column of a CSV or TSV file that pandas read as numbers when two
    spellings of the file became one number (``01`` and ``1``, ``1.0`` and ``1``): the
    rows of two contexts (or models, questions) would be pooled without a word. The
    columns' text is read again and compared with the numbers; other files pass.

    Returns ``frame`` with its ``as_written`` columns (labels such as the models' names)
    as the file writes them: pandas read names such as ``1.10`` and ``1.2`` (versions)
    as numbers, and ``1.10`` became ``1.1``, a name that no ``--cutoffs`` key or
    ``--naive`` matches. Columns read as text, and other files, are kept as they are."""
    import pandas as pd

    from coherence._validation import MISSING_WORDS

    p = Path(path)
    if p.suffix.lower() not in (".csv", ".txt", ".tsv"):
        return frame
    names = [c for c in dict.fromkeys([*columns, *as_written]) if c is not None
             and c in frame.columns and pd.api.types.is_numeric_dtype(frame[c].dtype)
             and not pd.api.types.is_bool_dtype(frame[c].dtype)]
    if not names:
        return frame
    text = pd.read_csv(p, sep="\t" if p.suffix.lower() == ".tsv" else ",", dtype=str,
                       usecols=names, index_col=False, keep_default_na=False,
                       na_values=list(MISSING_WORDS))
    for name in (c for c in names if c in columns):
        raw = text[name].str.strip()
        by_number = raw.groupby(frame[name].to_numpy(), dropna=True)
        # counted in one pass: listing every id's spellings (a Python call per id) took
        # 1.3 s on 16,000 contexts; they are listed below only for the message
        if not (by_number.nunique(dropna=False) > 1).any():
            continue
        spellings = by_number.unique()
        many = spellings[spellings.map(len) > 1]
        if len(many):
            shown = "; ".join(" and ".join(repr(v) for v in vals[:3]) for vals in many[:3])
            rows = [int(i) for i in frame.index[frame[name].isin(many.index)][:5]]
            raise UsageError(
                f"{path}: column {name!r} spells one id two ways ({shown}), which read as "
                f"one number and would pool their rows (rows {rows}); write each id one way")
    kept = [c for c in names if c in as_written]
    return frame.assign(**{c: text[c].str.strip().to_numpy() for c in kept}) if kept else frame


def print_frame(frame: Any) -> None:
    import pandas as pd

    from coherence._text import text_table

    frame = frame if isinstance(frame, pd.DataFrame) else pd.DataFrame(frame)
    named = [n for n in frame.index.names if n is not None]
    print(text_table(frame.reset_index() if named else frame, width=100))
