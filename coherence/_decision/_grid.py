"""Beliefs rounded to a grid, as LLMs state them (0.35, not 0.3517): the simulated agents'
stated beliefs and the elicitation simulator's."""

from __future__ import annotations

from typing import Any

import numpy as np

from .._parameters import check_float
from .._validation import DECIMAL_SLACK
from .._validation import listed
from .._validation import param_error

__all__ = ["snap_to_grid"]


def snap_to_grid(values: Any, grid: float | None) -> np.ndarray:
    """Round probabilities to a grid of step ``grid`` (``None``: unchanged).

    The result is the float nearest to the decimal grid value (``0.35`` is the
    same double as the literal ``0.35``), so equal reports compare equal. A value
    halfway between two grid values as a decimal goes to the even multiple of the
    step: on a grid of 0.2, 0.1 becomes 0.0 and 0.9 becomes 0.8; on a grid of 0.01,
    0.545 becomes 0.54 and 0.575 becomes 0.58. The decimal is not exact in binary
    (the double 0.545 is a hair above the midpoint, 0.575 a hair below), so a value
    within ``DECIMAL_SLACK`` (1e-12) of a midpoint counts as halfway.

    See Also
    --------
    simulate : simulated agents, whose stated beliefs are snapped to their grid.
    elicitation_diagnostics : flags beliefs heaped on a few values.
    """
    owner = "snap_to_grid"
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError):
        raise TypeError(param_error("values", owner, "probabilities (numbers in [0, 1])",
                                    values)) from None
    bad = np.flatnonzero(~((arr >= 0.0) & (arr <= 1.0)).ravel())
    if len(bad):
        shown = listed(bad, show=lambda i: repr(float(arr.ravel()[i])))
        raise ValueError(f"The 'values' parameter of {owner} must hold probabilities in [0, 1] "
                         f"(no NaN); {len(bad)} do not (first: {shown}).")
    if grid is None:
        return arr.copy()
    grid = check_float(grid, "grid", owner, low=0.0, high=1.0, low_open=True)
    n_cells = round(1.0 / grid)
    if abs(n_cells * grid - 1.0) > 1e-9:
        raise ValueError(param_error("grid", owner, "None or a step with 1/grid an integer "
                                     "(0.1, 0.05, 0.01, ...)", grid))
    cells = arr * n_cells
    low = np.floor(cells)
    # a decimal midpoint's double lies a hair off it (0.545 * 100 = 54.50000000000001):
    # within the slack it is a tie, sent to the even multiple as the docstring says
    tie = np.abs(cells - low - 0.5) <= DECIMAL_SLACK * n_cells
    k = np.where(tie, low + low % 2, np.round(cells))
    return np.round(k / n_cells, 12)
