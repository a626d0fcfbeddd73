"""Checks on a table file as written, shared by the readers (``read_pairs``) and the
command line's ``read_table``: each reader names the file its own way and raises its own
error with the message these return."""

from __future__ import annotations

import contextlib
import csv
from pathlib import Path
from typing import Any

from ._validation import listed

__all__ = ["index_as_columns", "lines_of_another_width"]


def lines_of_another_width(path: Path, sep: str, width: int) -> str | None:
    """What is wrong with the lines of a delimited file whose header names ``width``
    columns, or None: a line with more values (a value with no column; empty ones after
    the last column are a trailing separator, no values) or fewer (a line cut short)
    would be read into the wrong columns or left missing. Blank lines are skipped, as
    pandas reads them; a field over ``csv``'s size limit ends the check (pandas reads it).

    Examples
    --------
    >>> import tempfile
    >>> f = Path(tempfile.mkdtemp()) / "t.csv"
    >>> _ = f.write_text("a,b\\n1,2,\\n3,4,5\\n")
    >>> lines_of_another_width(f, ",", 2)[:46]
    'its header names 2 columns, and line 3 (3 valu'
    """
    bad: list[tuple[int, int]] = []
    with path.open(encoding="utf-8-sig", newline="") as handle, \
            contextlib.suppress(csv.Error):
        reader = csv.reader(handle, delimiter=sep)
        next(reader, None)
        for fields in reader:
            n = len(fields)
            if "".join(fields).strip() and (
                    n < width or (n > width and any(f.strip() for f in fields[width:]))):
                bad.append((reader.line_num, n))
    if not bad:
        return None
    shown = listed([f"line {line} ({n} values)" for line, n in bad], counted=True)
    verb = "holds" if len(bad) == 1 else "hold"
    return (f"its header names {width} columns, and {shown} {verb} another number of "
            "values (a value without a column, or a line cut short: they would be read into "
            "the wrong columns or left missing); write one value per column on every line")


def index_as_columns(frame: Any, name: str) -> Any:
    """``frame`` (read from the file ``name``) with its named index levels as columns, in
    front: a file written by ``set_index("model").to_parquet`` holds ``model`` as its
    index, and read as it is the column looks absent. A ValueError when a level shares a
    name with a column (which one to read is not clear); an unnamed index (row labels) is
    kept."""
    levels = [str(level) for level in frame.index.names if level is not None]
    if not levels:
        return frame
    twice = [level for level in levels if level in frame.columns]
    if twice:
        raise ValueError(f"{name} has an index and a column both named "
                         f"{', '.join(map(repr, twice))}; rename one (which one to read "
                         "is not clear)")
    return frame.reset_index()
