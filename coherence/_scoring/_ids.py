"""Ids and labels of the score tables.

Ids that join tables are written one way within a table and across the tables joined:
``1`` and ``'1'``, or ``'Q2'`` and ``'q2'``, compare unequal, so a join on them leaves
rows unmatched without a word; :func:`check_ids` raises instead, naming the rows. The
pooled row's label (:data:`POOLED`) and the result tables' own column names are
reserved (:func:`not_pooled`, :func:`reserved_by`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._validation import check_ids
from .._validation import column_error
from .._validation import param_error

__all__ = ["POOLED", "RESERVED_COLUMNS", "check_ids", "not_pooled", "reserved_by"]

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
