"""Ids and labels of the score tables.

Ids that join tables are written one way within a table and across the tables joined:
``1`` and ``'1'``, or ``'Q2'`` and ``'q2'``, compare unequal, so a join on them leaves
rows unmatched without a word; :func:`check_ids` raises instead, naming the rows. A blank
id (``''`` or spaces, a lost label) is refused as well (:func:`no_blank_ids`), and so is a
row repeated in every column (:func:`no_repeated_rows`: a file read twice). The
pooled row's label (:data:`POOLED`) and the result tables' own column names are
reserved (:func:`not_pooled`, :func:`reserved_by`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._resampling import cluster_members
from .._validation import MAX_ROWS_SHOWN
from .._validation import case_collisions
from .._validation import check_bools_apart_from_text
from .._validation import check_ids
from .._validation import column_error
from .._validation import label_text
from .._validation import param_error
from .._validation import plain_value
from ._dates import is_missing

__all__ = ["POOLED", "RESERVED_COLUMNS", "check_edge_ends", "check_ids", "check_ids_within",
           "label_rows", "no_blank_ids", "no_repeated_rows", "not_pooled", "reserved_by",
           "rows_of_codes", "same_spelling"]

#: Label of the pooled row (all models together) in the score tables.
POOLED = "(all)"
#: Columns of forecast_scores' tables beside the ``by`` column (per_forecast, table,
#: calibration, reliability_table, scores_frame): a ``by`` column of one of these names
#: would be overwritten by it.
RESERVED_COLUMNS = (
    "question", "cluster", "p_outcome", "confidence", "correct", "accuracy", "brier",
    "log_score", "n_forecasts", "n_questions",
    *(f"{m}_ci_{end}" for m in ("accuracy", "brier", "log_score") for end in ("low", "high")),
    "ece", "reliability", "resolution", "uncertainty", "within_bin",
    "bin", "lower", "upper", "n", "mean_forecast", "observed_frequency", "filtered",
)


def rows_of_codes(codes: np.ndarray, n_groups: int) -> list[np.ndarray]:
    """The row positions of each code ``0 .. n_groups - 1``, ascending (empty for a code
    no row has): ``np.flatnonzero(codes == g)`` for every ``g``, in one sort rather than
    one pass over the rows per code."""
    order, starts = cluster_members(codes, n_groups)
    return [order[starts[g]:starts[g + 1]] for g in range(n_groups)]


def label_rows(values: Any) -> list[np.ndarray]:
    """The row positions of each distinct label of ``values`` (no missing ones), in the
    order of ``pandas.unique(values)``: what ``(values == label)`` selects for each label,
    in one pass over the rows rather than one per label (quadratic in the labels)."""
    codes, uniques = pd.factorize(values)
    if (codes < 0).any():  # callers refuse missing labels first: this is a bug guard
        raise AssertionError("label_rows: missing labels")
    return rows_of_codes(codes, len(uniques))


def not_pooled(df: pd.DataFrame, by: str, owner: str) -> None:
    """Raise when the ``by`` column holds the pooled row's label ``'(all)'``: that model's
    row and the pooled row would be one label (and one of them read for the other)."""
    pooled = np.flatnonzero((df[by].astype(object) == POOLED).to_numpy())
    if len(pooled):
        raise ValueError(column_error(
            by, f"not use the name {POOLED!r}, which labels the pooled row",
            list(df.index[pooled]), owner=owner))


def no_blank_ids(df: pd.DataFrame, columns: Sequence[str], owner: str) -> None:
    """Raise when an id or label column holds a blank string (``''`` or only spaces): a
    label lost on the way (a CSV cell of spaces, an empty field), which
    :func:`no_missing` (NaN, None) lets through and which would otherwise count as a
    forecaster, question or horizon of its own. Blank is :func:`is_missing`'s rule for
    text. Names the column, the rows and their cells."""
    for col in columns:
        values = df[col].to_numpy(dtype=object)
        blank = np.flatnonzero([isinstance(v, str) and is_missing(v) for v in values])
        if len(blank):
            raise ValueError(column_error(
                col, "hold a label on every row, not a blank string ('' or spaces: a lost "
                "label, which would count as one of its own)", list(df.index[blank]),
                list(values[blank]), owner=owner))


def _column_codes(s: pd.Series) -> np.ndarray:
    """Integer codes of a column's values, missing ones included as a value; an unhashable
    cell (a list of sources) is compared by its repr."""
    try:
        codes = pd.factorize(s, use_na_sentinel=False)[0]
    except TypeError:
        def key(v: Any) -> Any:
            try:
                hash(v)
            except TypeError:
                return repr(v)
            return v

        codes = pd.factorize(s.astype(object).map(key), use_na_sentinel=False)[0]
    return np.asarray(codes, dtype=np.int64)


def no_repeated_rows(df: pd.DataFrame, *, name: str, owner: str) -> None:
    """Raise when a row of ``df`` equals an earlier row in every column (the index aside):
    almost surely one file read or concatenated twice, whose copies would each count.
    Rows that differ in any column, even one the caller does not read (a date, a
    probability), are kept: several forecasts of one question can be alike in the
    columns scored. Names the columns compared and the first copies with the rows they
    repeat."""
    if len(df) < 2 or df.shape[1] == 0:
        return
    codes = np.column_stack([_column_codes(df.iloc[:, j]) for j in range(df.shape[1])])
    copies = np.flatnonzero(pd.DataFrame(codes).duplicated(keep="first").to_numpy())
    if not len(copies):
        return
    pairs = []
    for i in copies[:MAX_ROWS_SHOWN]:
        j = int(np.flatnonzero((codes == codes[i]).all(axis=1))[0])
        a, b = plain_value(df.index[i]), plain_value(df.index[j])
        # a table concatenated with itself repeats the labels too: then say where
        pairs.append(f"row {a!r} repeats row {b!r}" if a != b else
                     f"row {a!r} (position {i}) repeats row {b!r} (position {j})")
    more = ", ..." if len(copies) > MAX_ROWS_SHOWN else ""
    cols = ", ".join(repr(plain_value(c)) for c in df.columns[:12]) + (
        f", ... ({df.shape[1]} columns)" if df.shape[1] > 12 else "")
    n = len(copies)
    raise ValueError(
        f"The '{name}' parameter of {owner} must not repeat a row in every column "
        f"({cols}): {n} row{'s' if n > 1 else ''} equal{'' if n > 1 else 's'} an earlier "
        f"row in all of them (first: {', '.join(pairs)}{more}), almost surely a file read "
        "or concatenated twice, whose copies would each count. Drop the copies with "
        f"{name}.drop_duplicates(); if the repeats are deliberate (several forecasts "
        "alike), add a column that tells them apart (a forecast id or date).")


def reserved_by(by: str, owner: str, reserved: Sequence[str]) -> None:
    """Raise when the ``by`` column's name is one of the result tables' own columns, which
    would overwrite it (``by='confidence'``: one row per probability, not per group)."""
    if by in reserved:
        raise ValueError(param_error(
            "by", owner, "a column name other than those of the result's tables ("
            + ", ".join(repr(r) for r in reserved) + "); rename the column", by))


def same_spelling(df: pd.DataFrame, chosen: str, outcome: str, *, owner: str) -> None:
    """Raise when the ``chosen`` and ``outcome`` columns, compared exactly, write one label
    two ways: labels that differ only in case or spaces ('Yes' chosen, 'yes' happened), in
    type ('1' chosen, 1 happened), or a boolean beside its text (True chosen, 'True'
    happened: a CSV-read column beside one built in Python) would score a right answer
    wrong."""
    both = pd.DataFrame(
        {f"{chosen}/{outcome}": [*df[chosen].to_numpy(dtype=object),
                                 *df[outcome].to_numpy(dtype=object)]},
        index=df.index.append(df.index), dtype=object)
    check_bools_apart_from_text(both, f"{chosen}/{outcome}", owner=owner)
    clash = case_collisions(both.iloc[:, 0].to_numpy())
    if clash:
        members = set(clash[0])
        rows = np.flatnonzero(df[chosen].isin(members).to_numpy()
                              | df[outcome].isin(members).to_numpy())
        raise ValueError(column_error(
            f"{chosen}/{outcome}", "write each option one way (labels are compared exactly); "
            f"found {' / '.join(repr(v) for v in clash[0])}", list(df.index[rows]),
            owner=owner))


def check_edge_ends(edges: pd.DataFrame, ends: Sequence[str], events: pd.DataFrame,
                    event: str, keys: Sequence[str], *, edges_name: str, events_name: str,
                    owner: str, lost: str = "the edge would be dropped as dangling") -> None:
    """Raise when an edge's end names no event of its group (the ``keys`` columns, as
    question or (model, question), in both tables) exactly, but one up to case, surrounding
    spaces or type (``1`` against ``'1'``): matched exactly, such an edge would be dropped
    as dangling without a word (its graph's depth and edge scores 0); ``lost`` says what
    the message names as lost."""
    cols = [*keys, event]
    ev = events[cols].to_numpy(dtype=object)
    exact = {tuple(r) for r in ev}
    read_as: dict[tuple[Any, ...], Any] = {}
    for *k, e in ev:
        text = label_text(e)
        if text is not None:
            read_as.setdefault((*k, text), e)
    for end in ends:
        vals = edges[[*keys, end]].to_numpy(dtype=object)
        bad = [i for i, (*k, e) in enumerate(vals)
               if (*k, e) not in exact and (*k, label_text(e)) in read_as]
        if bad:
            first = tuple(vals[bad[0]])
            raise ValueError(column_error(
                end, f"write each event id as {events_name}['{event}'] does in {edges_name} "
                f"(found {first[-1]!r} where it has "
                f"{read_as[(*first[:-1], label_text(first[-1]))]!r}: an id written two ways "
                f"is not joined, and {lost})",
                list(edges.index[bad]), [vals[i][-1] for i in bad], owner=owner))


def check_ids_within(df: pd.DataFrame, keys: Sequence[str], column: str, *, name: str,
                     owner: str) -> None:
    """Raise when one group of ``df`` (a question: the ``keys`` columns) names two of its
    ``column`` ids (events) alike but for case, surrounding spaces or type (``1`` and
    ``'1'``): the records of one event would be split into two events without a word.
    Across groups such ids are left alone (each question numbers its own events)."""
    cells = df[[*keys, column]].to_numpy(dtype=object)
    seen: dict[tuple[Any, ...], Any] = {}
    for *k, e in cells:
        text = label_text(e)
        if text is None:
            continue
        first = seen.setdefault((*k, text), e)
        if first is not e and first != e:
            rows = [j for j, (*k2, e2) in enumerate(cells)
                    if tuple(k2) == tuple(k) and label_text(e2) == text]
            label = k[0] if len(k) == 1 else tuple(k)
            raise ValueError(column_error(
                column, f"name each event of a {' and '.join(keys)} one way in {name} "
                f"(found {first!r} / {e!r} in {label!r}, which differ only in case, "
                "surrounding spaces or type (text against number): one event's records "
                "would count as two events)", list(df.index[rows]),
                [df[column].to_numpy(dtype=object)[j] for j in rows], owner=owner))
