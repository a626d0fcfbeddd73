"""Ids that join tables: written one way within a table and across the tables joined.

``1`` and ``'1'``, or ``'Q2'`` and ``'q2'``, compare unequal, so a join on them leaves
rows unmatched without a word; :func:`check_ids` raises instead, naming the rows.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._validation import MAX_ROWS_SHOWN
from .._validation import case_collisions
from .._validation import check_case_distinct

__all__ = ["check_ids"]


def _plain(value: Any) -> Any:
    """A plain Python scalar for messages (``np.int64(1)`` -> ``1``)."""
    return value.item() if isinstance(value, np.generic) else value


def check_ids(tables: Sequence[tuple[str, pd.DataFrame]], column: str, *, owner: str) -> None:
    """Raise when the id column ``column`` of the named tables holds ids that differ only
    in case, surrounding spaces or type (text against number): within one table
    (:func:`check_case_distinct`), or between tables joined on it."""
    for _, df in tables:
        check_case_distinct(df, column, owner=owner)
    if len(tables) < 2:
        return
    values = [_plain(v) for _, df in tables for v in pd.unique(df[column].dropna())]
    clash = case_collisions(values)
    if not clash:
        return
    members = list(clash[0])
    where = []
    for name, df in tables:
        labels = [_plain(v) for v in df.index[df[column].isin(members).to_numpy()]]
        if labels:
            shown = ", ".join(repr(v) for v in labels[:MAX_ROWS_SHOWN])
            where.append(f"{name} row{'s' if len(labels) > 1 else ''} {shown}"
                         f"{', ...' if len(labels) > MAX_ROWS_SHOWN else ''}")
    names = " and ".join(name for name, _ in tables)
    raise ValueError(
        f"Column '{column}' (input to {owner}) must write each id one way in {names}, "
        f"which are joined on it exactly; found {' / '.join(repr(v) for v in members)}, "
        f"which differ only in case, surrounding spaces or type (text against number) "
        f"({'; '.join(where)}); make them one label.")
