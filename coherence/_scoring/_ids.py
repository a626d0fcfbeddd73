"""Ids and labels of the score tables.

Ids that join tables are written one way within a table and across the tables joined:
``1`` and ``'1'``, or ``'Q2'`` and ``'q2'``, compare unequal, so a join on them leaves
rows unmatched without a word; :func:`check_ids` raises instead, naming the rows. The
pooled row's label (:data:`POOLED`) and the result tables' own column names are
reserved (:func:`not_pooled`, :func:`reserved_by`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._validation import case_collisions
from .._validation import check_ids
from .._validation import column_error
from .._validation import label_text
from .._validation import param_error

__all__ = ["POOLED", "RESERVED_COLUMNS", "check_edge_ends", "check_ids", "check_ids_within",
           "not_pooled", "reserved_by", "same_spelling"]

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


def not_pooled(df: pd.DataFrame, by: str, owner: str) -> None:
    """Raise when the ``by`` column holds the pooled row's label ``'(all)'``: that model's
    row and the pooled row would be one label (and one of them read for the other)."""
    pooled = np.flatnonzero((df[by].astype(object) == POOLED).to_numpy())
    if len(pooled):
        raise ValueError(column_error(
            by, f"not use the name {POOLED!r}, which labels the pooled row",
            list(df.index[pooled]), owner=owner))


def reserved_by(by: str, owner: str, reserved: Sequence[str]) -> None:
    """Raise when the ``by`` column's name is one of the result tables' own columns, which
    would overwrite it (``by='confidence'``: one row per probability, not per group)."""
    if by in reserved:
        raise ValueError(param_error(
            "by", owner, "a column name other than those of the result's tables ("
            + ", ".join(repr(r) for r in reserved) + "); rename the column", by))


def same_spelling(df: pd.DataFrame, chosen: str, outcome: str, *, owner: str) -> None:
    """Raise when the ``chosen`` and ``outcome`` columns, compared exactly, write one label
    two ways: labels that differ only in case or spaces ('Yes' chosen, 'yes' happened) or
    in type ('1' chosen, 1 happened) would score a right answer wrong."""
    clash = case_collisions([*df[chosen].to_numpy(dtype=object),
                             *df[outcome].to_numpy(dtype=object)])
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
