"""The checks of a function's scalar parameters: an int or a float within bounds, one of a
set of choices, the resampling options every interval takes; each error names the
parameter, its function and what was expected (:func:`~coherence._validation.param_error`).
"""

from __future__ import annotations

import numbers
from collections.abc import Sequence
from typing import Any

import numpy as np

from ._validation import param_error

__all__ = ["check_choice", "check_float", "check_int", "check_resampling"]


def check_int(value: Any, name: str, owner: str, *, low: int | None = None,
              high: int | None = None) -> int:
    """An integer in [low, high] (either bound optional); bools are rejected."""
    rule = "an int" + _range_text(low, high)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral):
        raise TypeError(param_error(name, owner, rule, value))
    value = int(value)
    if (low is not None and value < low) or (high is not None and value > high):
        raise ValueError(param_error(name, owner, rule, value))
    return value


def check_float(value: Any, name: str, owner: str, *, low: float | None = None,
                high: float | None = None, low_open: bool = False,
                high_open: bool = False) -> float:
    """A finite real number in the given (closed by default) interval."""
    lo = "(" if low_open else "["
    hi = ")" if high_open else "]"
    rule = "a finite float"
    if low is not None or high is not None:
        rule += f" in {lo}{'-inf' if low is None else low}, {'inf' if high is None else high}{hi}"
    if isinstance(value, bool) or not isinstance(value, numbers.Real):
        raise TypeError(param_error(name, owner, rule, value))
    value = float(value)
    bad = not np.isfinite(value)
    if low is not None:
        bad |= value <= low if low_open else value < low
    if high is not None:
        bad |= value >= high if high_open else value > high
    if bad:
        raise ValueError(param_error(name, owner, rule, value))
    return value


def check_choice(value: Any, name: str, owner: str, choices: Sequence[Any]) -> Any:
    """One of a fixed set of options; a text option comes back a plain ``str`` (one read
    from a numpy array is an ``np.str_``)."""
    if value not in choices:
        rule = "one of " + ", ".join(repr(c) for c in choices)
        raise ValueError(param_error(name, owner, rule, value))
    return str(value) if isinstance(value, str) else value


def _range_text(low: int | None, high: int | None) -> str:
    if low is None and high is None:
        return ""
    if high is None:
        return f" >= {low}"
    if low is None:
        return f" <= {high}"
    return f" in [{low}, {high}]"


def check_resampling(owner: str, n_resamples: int, confidence_level: float) -> tuple[int, float]:
    """Validate the common ``n_resamples`` (>= 1) and ``confidence_level`` (in (0, 1)) options."""
    n_resamples = check_int(n_resamples, "n_resamples", owner, low=1)
    confidence_level = check_float(confidence_level, "confidence_level", owner, low=0.0,
                                   high=1.0, low_open=True, high_open=True)
    return n_resamples, confidence_level
