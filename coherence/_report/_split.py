"""The report's side tables split into its cells: the LIE table's rows and the replies
set aside before the table was written, matched on the cells' ``by`` labels.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._decision._diagnostics import set_aside_counts
from .._resampling import rows_by_key
from .._validation import case_collisions
from .._validation import collisions_text
from .._validation import listed
from .._validation import param_error
from .._validation import plain_value
from .._warnings import SkippedRecordsWarning

__all__ = ["check_lie_columns", "lie_cell", "side_tables_record", "split_lie",
           "split_lie_baseline", "split_set_aside"]


def check_lie_columns(lie: pd.DataFrame, present_by: Sequence[str]) -> None:
    """A LIE table holds every cell column of the data or none of them. One with some
    (``model`` of ``model`` and ``dataset``) was checked whole in a cell of its own, its
    models' rows pooled into one LIE check."""
    have = [c for c in present_by if c in lie.columns]
    if have and len(have) < len(present_by):
        missing = [c for c in present_by if c not in lie.columns]
        raise ValueError(param_error(
            "lie", "report", f"a table with every cell column {list(present_by)} (it is split "
            "into the data's cells) or none of them (it is checked whole, in a cell of its "
            "own); add the missing columns, or name only the columns it has in by",
            f"a table with {have} but without {missing}, whose cells would be pooled"))


#: the label, in every cell column, of the cell a LIE table without them is checked in
LIE_CELL = "lie table"


def lie_cell(keyed: Sequence[tuple[Mapping[str, Any], pd.DataFrame]],
             present_by: Sequence[str]) -> dict[str, Any]:
    """The key of the cell a LIE table without the cell columns is checked in: "lie table"
    in each. A data cell of that label in each raises, naming the columns: the two cells
    merged into one row of ``summary_table`` (and read alike in ``to_frame``)."""
    key = dict.fromkeys(present_by, LIE_CELL)
    if any(dict(k) == key for k, _ in keyed):
        raise ValueError(param_error(
            "lie", "report", f"a table with the cell columns {list(present_by)} when a cell "
            f"of the data is labelled {LIE_CELL!r} in {list(present_by)} (a table without "
            "them is checked in a cell of that name, which would merge with it); add the "
            "columns, or relabel that cell", "a table without them"))
    return key


def split_lie(lie: pd.DataFrame, keyed: Sequence[tuple[Mapping[str, Any], pd.DataFrame]],
               present_by: Sequence[str]) -> list[pd.DataFrame | None]:
    """The LIE table's rows of each cell, matched on the ``by`` labels exactly.

    LIE rows whose labels name no cell of the data (``'GPT'`` against ``'gpt'``, ``1``
    against ``'1'``) raise, naming them and any label typed two ways: they would
    otherwise drop out of the report silently. A cell without LIE rows is skipped by the
    check, with a :class:`SkippedRecordsWarning` naming it."""
    cols = list(present_by)
    where = {_cell_label(key[c] for c in cols): i for i, (key, _) in enumerate(keyed)}
    positions = {_cell_label(k): at for k, at in rows_by_key(lie, cols).items()}
    rows: list[list[np.ndarray]] = [[] for _ in keyed]
    unmatched: dict[tuple[Any, ...], int] = {}
    for label, at in positions.items():
        if label in where:
            rows[where[label]].append(at)
        else:
            unmatched[label] = len(at)
    if unmatched:
        shown = listed([f"{_key_text(k)} ({n} rows)" for k, n in unmatched.items()], 10)
        cells = listed(list(where), 10, show=_key_text)
        variants = [g for c in cols for g in case_collisions(
            [*(key[c] for key, _ in keyed), *lie[c].dropna().unique()])]
        hint = ("; these labels differ only by case, spaces or type (text against "
                "number): " + collisions_text(variants)
                if variants else "")
        raise ValueError(param_error(
            "lie", "report", f"a table whose cells (columns {cols}) are cells of the data "
            f"({cells}){hint}", f"{len(unmatched)} cell(s) of LIE rows that match no cell "
            f"of the data: {shown}"))
    empty = [_key_text(k) for k, i in where.items() if not rows[i]]
    if empty:
        warnings.warn(f"report: the lie table has no rows for {len(empty)} of {len(keyed)} "
                      f"cells ({listed(empty, 10)}); the LIE check is not run on them.",
                      SkippedRecordsWarning, stacklevel=4)
    return [lie.iloc[np.sort(np.concatenate(r))] if r else None for r in rows]


def split_lie_baseline(baseline: pd.DataFrame,
                       keyed: Sequence[tuple[Mapping[str, Any], pd.DataFrame]],
                       present_by: Sequence[str],
                       lie_parts: Sequence[pd.DataFrame | None]) -> list[pd.DataFrame]:
    """The rows of a LIE baseline (``lie_options["baseline"]``) that holds the ``by``
    columns, per cell, matched on the labels exactly as :func:`split_lie` matches the LIE
    table's. Every cell got the whole table: with one baseline per model, each of its
    (context, variable, state) units was then listed once per model, and the check failed
    on every cell. Rows of no cell are not used (a baseline may hold further units); a cell
    with LIE rows and no baseline rows raises, naming it."""
    cols = list(present_by)
    positions = {_cell_label(k): at for k, at in rows_by_key(baseline, cols).items()}
    labels = [_cell_label(key[c] for c in cols) for key, _ in keyed]
    lacking = [_key_text(k) for k, part in zip(labels, lie_parts, strict=True)
               if part is not None and k not in positions]
    if lacking:
        found = listed(list(positions), 10, show=_key_text)
        raise ValueError(param_error(
            "lie_options", "report", f"a baseline with rows for every cell of the LIE table "
            f"(its columns {cols}: found {found})", f"no baseline rows for {len(lacking)} "
            f"cell(s): {listed(lacking, 10)}"))
    empty = np.empty(0, dtype=np.int64)
    return [baseline.iloc[np.sort(positions.get(k, empty))] for k in labels]


def _cell_label(values: Iterable[Any]) -> tuple[Any, ...]:
    """A cell's labels as a key that matches across tables (a missing label as None)."""
    return tuple(None if v is None or (isinstance(v, float) and np.isnan(v)) else v
                 for v in values)


def _key_text(key: tuple[Any, ...]) -> str:
    """A cell's labels for a message: plain Python values, one or a tuple."""
    plain = tuple(plain_value(v) for v in key)
    return repr(plain[0]) if len(plain) == 1 else repr(plain)


def split_set_aside(set_aside: pd.DataFrame | None,
                    keyed: Sequence[tuple[Mapping[str, Any], pd.DataFrame]],
                    present_by: Sequence[str]) -> list[pd.DataFrame | None]:
    """The set-aside replies of each cell: the rows whose ``by`` columns match the cell's
    (as text: ``1`` and ``'1'`` match), all of them for a report without ``by`` columns
    or for one cell and a table without them (a table without them cannot be split
    among several cells: an error).

    Replies whose labels name no cell of the data (another model's, ``'GPT'`` against
    ``'gpt'``) are counted in none, with a :class:`SkippedRecordsWarning` naming them and
    their counts (a model whose every reply was set aside has no cell to count them in).
    """
    if set_aside is None:
        return [None] * len(keyed)
    missing = [c for c in present_by if c not in set_aside.columns]
    if not present_by or (len(keyed) == 1 and missing):
        return [set_aside]
    if missing:
        raise ValueError(param_error(
            "set_aside", "report", f"a table with the cells' columns {list(present_by)} (to "
            "count its replies in their cells)", f"a table without {missing}"))
    text = {c: set_aside[c].astype(str).to_numpy() for c in present_by}
    out: list[pd.DataFrame | None] = []
    counted = np.zeros(len(set_aside), dtype=bool)
    for key, _ in keyed:
        mask = np.ones(len(set_aside), dtype=bool)
        for col, value in key.items():
            mask &= text[col] == str(value)
        counted |= mask
        out.append(set_aside[mask])
    if not counted.all():
        cols = list(present_by)
        labels = set_aside.loc[~counted, cols].astype(str).value_counts(sort=True)
        shown = listed([f"{_key_text(tuple(k if isinstance(k, tuple) else (k,)))} "
                        f"({n} replies)" for k, n in labels.items()], 10)
        cells = ", ".join(_key_text(tuple(str(key[c]) for c in cols)) for key, _ in keyed)
        warnings.warn(f"report: {int((~counted).sum())} of {len(set_aside)} set-aside replies "
                      f"name no cell of the data (columns {cols}: {shown}; the cells: "
                      f"{cells}); they are counted in no cell's n_set_aside.",
                      SkippedRecordsWarning, stacklevel=4)
    return out


def side_tables_record(lie: pd.DataFrame | None, lie_options: Mapping[str, Any] | None,
                       set_aside: Any) -> dict[str, Any]:
    """The report's ``settings`` entries for the tables it was given beside the data, which
    change its results and so belong in its rerun line: ``lie`` (None, or the LIE table's
    rows and ``lie_options`` as given, each value as Python source where it has one, else
    None: a table) and ``set_aside`` (None, or the counts by reason, ``mapping`` True when
    they were given as ``{reason: count}``, which the rerun line can then spell out)."""
    record: dict[str, Any] = {"lie": None, "set_aside": None}
    if lie is not None:
        record["lie"] = {"rows": len(lie),
                         "options": {str(k): _source(v) for k, v in (lie_options or {}).items()}}
    if set_aside is not None:
        record["set_aside"] = {"mapping": isinstance(set_aside, Mapping),
                               "counts": set_aside_counts(set_aside, "report")}
    return record


def _source(value: Any) -> str | None:
    """``repr(value)`` where it reads back as the value (numbers, text, lists of them),
    else None."""
    import ast

    text = repr(value)
    try:
        same = ast.literal_eval(text) == value
    except (ValueError, SyntaxError, TypeError, MemoryError, RecursionError):
        return None
    return text if isinstance(same, bool) and same else None
