"""The summary of a per-row violation array: one record, :class:`ViolationSummary`.

The probability-axiom checks (:func:`coherence.negation_check`,
:func:`coherence.conditional_tuple_check`) and :func:`coherence.consistency_check`
summarise each of their violation arrays by its mean, its median and the share of
rows above a threshold. Each result holds one :class:`ViolationSummary` per
violation (``arbitrage_summary``, ``frequentist_summary``, ...); the flat names of
earlier releases (``mean_arbitrage``, ``median_arbitrage``, ``share_arbitrage_above``,
...) read the record through :func:`summary_attributes`.

This module imports nothing of the package, so every result module can import it.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from typing import Any
from typing import overload

import numpy as np

__all__ = ["ViolationSummary", "sorted_mean", "summary_attribute", "summary_attributes"]


def sorted_mean(values: Any) -> float:
    """The mean of ``values`` summed in ascending order: the same to the bit whatever
    their order (a table's rows shuffled), as a summary and its interval need."""
    return float(np.sort(np.asarray(values, dtype=np.float64), axis=None).mean())


@dataclass(frozen=True, slots=True)
class ViolationSummary:
    """Mean, median and share above a threshold of one per-row violation array.

    One record per violation of a check's result (for example
    ``negation_check(...).arbitrage_summary``); :meth:`of` computes it from the
    array.

    Attributes
    ----------
    mean : float
        Mean of the violations (``inf`` when one of them is infinite).
    median : float
        Median of the violations.
    share_above : float
        Share of the violations above ``threshold`` (at or above it when
        ``inclusive``).
    threshold : float
        The threshold of ``share_above``.
    inclusive : bool
        Whether a violation equal to ``threshold`` counts as above it.
    n_values : int
        Number of violations summarised (NaN summaries when 0).

    See Also
    --------
    negation_check : its ``arbitrage_summary`` and ``frequentist_summary``.
    conditional_tuple_check : its ``absolute_summary`` and ``arbitrage_summary``.
    consistency_check : its ``arbitrage_summary`` and ``frequentist_summary``.

    Examples
    --------
    >>> from coherence import ViolationSummary
    >>> s = ViolationSummary.of([0.0, 0.02, 0.5], threshold=0.01)
    >>> round(s.mean, 4), s.median, round(s.share_above, 4), s.n_values
    (0.1733, 0.02, 0.6667, 3)
    """

    mean: float = np.nan
    median: float = np.nan
    share_above: float = np.nan
    threshold: float = np.nan
    inclusive: bool = False
    n_values: int = 0

    @classmethod
    def of(cls, values: Any, threshold: float, *, inclusive: bool = False) -> ViolationSummary:
        """Summarise an array of violations.

        Parameters
        ----------
        values : array_like of float
            The per-row violations (``inf`` allowed).
        threshold : float
            ``share_above`` counts the values above it.
        inclusive : bool, default False
            Count the values equal to ``threshold`` too (``>=`` instead of ``>``).

        Returns
        -------
        ViolationSummary
            The mean, median and share above ``threshold`` of ``values``; NaN for
            an empty array.

        Raises
        ------
        ValueError
            For a NaN among ``values`` (it is neither above nor below ``threshold``,
            and its share would count it as below) or a ``threshold`` that is not a
            number or is NaN.
        TypeError
            For an ``inclusive`` that is not a bool (``'no'`` would count as True).

        See Also
        --------
        negation_check : a check whose result holds two of these records.
        consistency_check : the same records, with ``inclusive=True``.

        Examples
        --------
        >>> from coherence import ViolationSummary
        >>> ViolationSummary.of([0.0, 0.01, 0.03], 0.01, inclusive=True).share_above
        0.6666666666666666
        """
        owner = "ViolationSummary.of"
        # bool("no") is True and NaN compares False: either would give a share without a word
        if not isinstance(inclusive, bool | np.bool_):
            raise TypeError(f"{owner}: inclusive must be True or False; got {inclusive!r}.")
        if isinstance(threshold, bool | np.bool_) or not isinstance(threshold, numbers.Real) \
                or math.isnan(threshold):
            raise ValueError(f"{owner}: threshold must be a number (not NaN); "
                             f"got {threshold!r}.")
        arr = np.asarray(values, dtype=np.float64).ravel()
        if np.isnan(arr).any():
            raise ValueError(f"{owner}: values must not be NaN (a NaN is neither above nor "
                             f"below the threshold); {int(np.isnan(arr).sum())} of {len(arr)} "
                             f"are (first at position {int(np.flatnonzero(np.isnan(arr))[0])}).")
        threshold, inclusive = float(threshold), bool(inclusive)
        if len(arr) == 0:
            return cls(threshold=threshold, inclusive=inclusive)
        above = arr >= threshold if inclusive else arr > threshold
        return cls(mean=sorted_mean(arr), median=float(np.median(arr)),
                   share_above=float(np.mean(above)), threshold=threshold,
                   inclusive=inclusive, n_values=len(arr))


#: the parts of a record that results expose under flat names
_PARTS = ("mean", "median", "share_above", "threshold")


class _SummaryAttribute:
    """A read-only attribute of a result that reads one part of one of its summary records:
    ``mean_arbitrage`` is ``arbitrage_summary.mean``."""

    def __init__(self, violation: str, part: str) -> None:
        if part not in _PARTS:
            raise ValueError(f"part must be one of {_PARTS}, not {part!r}")
        self.record = f"{violation}_summary"
        self.part = part
        self.__doc__ = f"``{self.record}.{part}`` (read-only)."

    @overload
    def __get__(self, obj: None, owner: type | None = None) -> _SummaryAttribute: ...

    @overload
    def __get__(self, obj: object, owner: type | None = None) -> float: ...

    def __get__(self, obj: object | None, owner: type | None = None) -> Any:
        if obj is None:
            return self
        return getattr(getattr(obj, self.record), self.part)


def summary_attribute(violation: str, part: str) -> _SummaryAttribute:
    """The read-only attribute that reads ``<violation>_summary.<part>``."""
    return _SummaryAttribute(violation, part)


def summary_attributes(violation: str) -> tuple[_SummaryAttribute, ...]:
    """The flat ``mean_<v>, median_<v>, share_<v>_above`` attributes of ``<v>_summary``."""
    return tuple(_SummaryAttribute(violation, part) for part in ("mean", "median", "share_above"))
