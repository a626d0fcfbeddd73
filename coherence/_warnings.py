"""Warning classes of belief-coherence (all subclasses of :class:`CoherenceWarning`)."""

from __future__ import annotations

import warnings
from typing import Any

__all__ = [
    "CoherenceWarning",
    "DegenerateDataWarning",
    "DeprecatedAlias",
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


class DeprecatedAlias:
    """A read-only attribute that returns another attribute of the same object and warns.

    ``prompt_table = DeprecatedAlias("table")`` in a class body makes
    ``result.prompt_table`` return ``result.table`` with a :class:`DeprecationWarning`
    (``stacklevel=2``: the warning points at the line that read the old name) that names
    the attribute to use instead. Old names are kept this way for one release, then
    removed.
    """

    def __init__(self, new: str) -> None:
        self.new = new
        self.name = ""
        self.owner = ""
        self.__doc__ = f"Deprecated alias of :attr:`{new}`, removed in the next release."

    def __set_name__(self, owner: type, name: str) -> None:
        self.name, self.owner = name, owner.__name__

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None:
            return self
        warnings.warn(f"{self.owner}.{self.name} is deprecated and will be removed in the next "
                      f"release; use {self.owner}.{self.new} (the same object)",
                      DeprecationWarning, stacklevel=2)
        return getattr(instance, self.new)
