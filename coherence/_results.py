"""Result objects shared by every test of the toolkit.

Each test family returns one frozen, slotted dataclass that subclasses
:class:`CoherenceResult`. The common fields are ``statistic``, ``pvalue``,
``confidence_interval`` (a :class:`ConfidenceInterval`), ``n_obs`` and
``method``; subclasses add the settings they used and any large arrays
(hidden from ``repr`` and made read-only). ``to_frame()`` returns one tidy row
with a fixed schema: the :data:`RESULT_COLUMNS` followed by the subclass's
declared ``_extra_columns``. ``summary()`` is the only place that formats.
Reports are built from these objects, never by re-computation.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar, NamedTuple

import numpy as np
import pandas as pd

__all__ = ["RESULT_COLUMNS", "CoherenceResult", "ConfidenceInterval"]

RESULT_COLUMNS: tuple[str, ...] = (
    "test",
    "method",
    "statistic",
    "pvalue",
    "ci_low",
    "ci_high",
    "confidence_level",
    "n_obs",
)


class ConfidenceInterval(NamedTuple):
    """A confidence interval: ``low``, ``high`` and its ``confidence_level``."""

    low: float
    high: float
    confidence_level: float


def _freeze(value: Any) -> Any:
    if isinstance(value, np.ndarray) and value.flags.writeable:
        value.flags.writeable = False
    return value


@dataclass(frozen=True, slots=True)
class CoherenceResult:
    """Base class of every test result.

    Attributes
    ----------
    statistic : float
        The test statistic, in the units the test documents.
    pvalue : float
        The p-value (NaN when the method gives none).
    confidence_interval : ConfidenceInterval
        Interval for the quantity the statistic estimates.
    n_obs : int
        Number of rows (observations) used.
    method : str
        The procedure that produced the p-value and interval.
    """

    statistic: float
    pvalue: float
    confidence_interval: ConfidenceInterval
    n_obs: int
    method: str

    #: Name of the test, first column of ``to_frame()``.
    _test_name: ClassVar[str] = "result"
    #: Settings fields appended, in this order, to the ``to_frame()`` schema.
    _extra_columns: ClassVar[tuple[str, ...]] = ()

    def __post_init__(self) -> None:
        for f in dataclasses.fields(self):
            _freeze(getattr(self, f.name))

    @property
    def n(self) -> int:
        """Alias of ``n_obs`` (the result contract of docs/design.md names it ``n_obs``)."""
        return self.n_obs

    @classmethod
    def frame_columns(cls) -> tuple[str, ...]:
        """The fixed column schema of ``to_frame()`` for this result class."""
        return RESULT_COLUMNS + cls._extra_columns

    def settings(self) -> dict[str, Any]:
        """The settings this result records, by name."""
        return {name: getattr(self, name) for name in self._extra_columns}

    def to_frame(self) -> pd.DataFrame:
        """One tidy row with the fixed schema :meth:`frame_columns`."""
        ci = self.confidence_interval
        row: dict[str, Any] = {
            "test": self._test_name,
            "method": self.method,
            "statistic": float(self.statistic),
            "pvalue": float(self.pvalue),
            "ci_low": float(ci.low),
            "ci_high": float(ci.high),
            "confidence_level": float(ci.confidence_level),
            "n_obs": int(self.n_obs),
        }
        for name in self._extra_columns:
            value = getattr(self, name)
            row[name] = value if np.isscalar(value) or value is None else repr(value)
        return pd.DataFrame([row], columns=list(self.frame_columns()))

    def summary(self) -> str:
        """A short human-readable report of the result."""
        ci = self.confidence_interval
        level = ci.confidence_level
        lines = [
            f"{self._test_name} ({self.method})",
            f"  statistic     {_fmt(self.statistic)}",
            f"  p-value       {_fmt(self.pvalue)}",
            f"  {100 * level:g}% CI".ljust(16) + f"[{_fmt(ci.low)}, {_fmt(ci.high)}]",
            f"  n_obs         {self.n_obs}",
        ]
        for name, value in self.settings().items():
            lines.append(f"  {name:<13} {value if not isinstance(value, float) else _fmt(value)}")
        return "\n".join(lines)


def _fmt(x: float) -> str:
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "nan"
    if isinstance(x, float | np.floating):
        return f"{x:.4g}"
    return str(x)
