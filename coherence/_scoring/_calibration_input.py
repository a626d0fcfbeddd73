"""The forecasts of the calibration measures, read and checked: the input layer shared by
:func:`coherence.calibration_error` and :func:`coherence.smooth_ece`."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._resampling import sorted_codes
from .._validation import as_dataframe
from .._validation import binary_column
from .._validation import check_case_distinct
from .._validation import no_missing
from .._validation import param_error
from .._validation import probability_column
from .._validation import require_columns

__all__ = ["forecast_arrays"]


def forecast_arrays(data: Any, probability: str, outcome: str, group: str | None,
                    owner: str) -> tuple[np.ndarray, np.ndarray, np.ndarray | None]:
    """(forecasts, outcomes as floats, cluster codes or None) of :func:`calibration_error`
    and :func:`smooth_ece`, checked, in a canonical row order (forecast, outcome, cluster)
    so that a bootstrap does not depend on the input's order."""
    df = as_dataframe(data, owner=owner)
    if group is not None and not isinstance(group, str):
        raise TypeError(param_error("group", owner, "a column name or None", group))
    require_columns(df, {"probability": probability, "outcome": outcome, "group": group},
                    owner=owner)
    if len(df) < 2:
        raise ValueError(param_error("data", owner, "a table with at least 2 forecasts",
                                     f"{len(df)} row(s)"))
    p = np.ascontiguousarray(probability_column(df, probability, owner=owner))
    y = np.ascontiguousarray(binary_column(df, outcome, owner=owner).astype(np.float64))
    codes = None
    if group is not None:
        no_missing(df, group, owner=owner)
        check_case_distinct(df, group, owner=owner)  # 'Q1' and 'q1', 1 and '1': one cluster
        codes = sorted_codes(df[group].to_numpy(dtype=object))
    # a canonical row order, so that the bootstrap does not depend on the input's order
    order = np.lexsort((y, p)) if codes is None else np.lexsort((y, p, codes))
    p, y = np.ascontiguousarray(p[order]), np.ascontiguousarray(y[order])
    return p, y, None if codes is None else np.ascontiguousarray(codes[order])
