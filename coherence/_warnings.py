"""Warning classes of belief-coherence (all subclasses of :class:`CoherenceWarning`)."""

from __future__ import annotations

__all__ = [
    "CoherenceWarning",
    "DegenerateDataWarning",
    "NotCalibratedWarning",
    "SkippedRecordsWarning",
    "SmallSampleWarning",
    "TiesWarning",
]


class CoherenceWarning(UserWarning):
    """Base class of every warning this package emits."""


class SmallSampleWarning(CoherenceWarning):
    """The sample (or a stratum, bin or fold of it) is too small for the method to be reliable."""


class TiesWarning(CoherenceWarning):
    """Ties in the data change how the method behaves (for example, merged quantile bins)."""


class DegenerateDataWarning(CoherenceWarning):
    """A variable is constant or a class is absent, so a quantity is undefined or trivial."""


class NotCalibratedWarning(CoherenceWarning):
    """The procedure asked for is kept for comparability but is not a calibrated test."""


class SkippedRecordsWarning(CoherenceWarning):
    """Records were left out by a documented rule (for example failed elicitations in a
    result file); the warning names them and the result counts them."""
