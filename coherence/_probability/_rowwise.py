"""What the row-wise probability checks share (:mod:`._axioms`' and
:mod:`._axioms_paleka`'s): named probability vectors validated to one length and index,
the headline fields of a mean violation with its interval, and the result base whose
table has one row per input row."""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._resampling import MEAN_KINDS
from .._results import CoherenceResult
from .._validation import param_error
from .._validation import probability_array
from .._validation import same_index
from ._checks import mean_violation
from ._checks import warn_point_interval

__all__ = ["INTERVAL", "PerRowResult", "probabilities", "violation_fields"]

#: How the interval of a mean violation is computed (the ``method`` of the results).
INTERVAL = f"{MEAN_KINDS['heavy-tailed']} over rows"


def probabilities(owner: str, allow_nan: bool = False, **arrays: Any) -> dict[str, np.ndarray]:
    """Validate named probability vectors and check they have one common length (and,
    for pandas Series, one common index: :func:`same_index`)."""
    same_index(owner, **{name: v for name, v in arrays.items() if v is not None})
    out = {name: probability_array(values, name, owner=owner, allow_nan=allow_nan)
           for name, values in arrays.items()}
    lengths = {name: len(v) for name, v in out.items()}
    first_name, n = next(iter(lengths.items()))
    for name, length in lengths.items():
        if length != n:
            raise ValueError(param_error(name, owner, f"of the same length as '{first_name}' "
                                         f"({n})", f"length {length}"))
    if n == 0:
        raise ValueError(param_error(first_name, owner, "non-empty", "an empty array"))
    return out


def violation_fields(values: np.ndarray, label: str, n_resamples: int,
                    gen: np.random.Generator, confidence_level: float, owner: str,
                    upper: float = math.inf) -> dict[str, Any]:
    """The headline fields of a check's result: the mean of ``values`` with its interval.

    ``upper`` is the largest value a row's violation can take (1 for an absolute
    difference of probabilities): the population's mean cannot exceed it, so the
    interval stops there (the bootstrap-t of a few rows reached 5 and more; where its low
    end is above ``upper`` too, the interval is ``mean_violation``'s fallback,
    the percentile interval of the resampled means). An interval
    that is the point itself (one row, or violations that do not vary) is kept with a
    :class:`SmallSampleWarning`: the sample shows no uncertainty. Rows that are all exactly
    coherent (every violation 0, as beliefs from one joint give) are not warned about."""
    mean, ci = mean_violation(values, n_resamples, gen, confidence_level, upper)
    warn_point_interval(ci, values, label, owner)
    return {"statistic": mean, "pvalue": np.nan, "confidence_interval": ci,
            "n_obs": len(values), "method": f"mean {label}, {INTERVAL}"}


@dataclass(frozen=True, slots=True)
class PerRowResult(CoherenceResult):
    """A check's result whose :attr:`table` has one row per input row (or pair, tuple)."""

    def per_row(self) -> pd.DataFrame:
        """One row per input row: the per-row values of :attr:`table` (a copy of it)."""
        return self.table.copy()
