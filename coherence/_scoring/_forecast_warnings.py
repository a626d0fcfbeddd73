"""The warnings of :func:`coherence.forecast_scores` about its intervals (those that are
the point itself: one question or cluster, or scores that do not vary; those that rest on
too few questions or clusters to hold their level) and of its comparison on too few to
hold its level where the differences are skewed (each at the user's line).
"""

from __future__ import annotations

import warnings

from .._validation import listed
from .._warnings import SmallSampleWarning

__all__ = ["MIN_COMPARE_UNITS", "MIN_INTERVAL_UNITS", "warn_few_compared", "warn_intervals"]

#: Questions (or clusters) a row needs before its bootstrap-t intervals held their level
#: on the measured designs (below: warned; benchmarks/check_forecastbench_small.py).
MIN_INTERVAL_UNITS = 6
#: Questions (or clusters) a comparison needs before its sign flip held its level on a
#: skewed null too (below: warned; benchmarks/check_forecastbench_small.py).
MIN_COMPARE_UNITS = 20


def warn_intervals(collapsed: list[str], units: dict[str, int], cluster: str | None) -> None:
    """Warn of the intervals in ``collapsed`` (``'<row> <score>'``: the point itself) and
    of the rows of ``units`` (row name: its questions, or ``cluster`` values) that rest on
    more than one but fewer than :data:`MIN_INTERVAL_UNITS`."""
    unit = "question" if cluster is None else f"{cluster!r} cluster"
    if collapsed:
        warnings.warn(
            f"forecast_scores: {len(collapsed)} interval(s) are the point itself "
            f"({listed(collapsed)}): one {unit}, or scores that do not vary across them, "
            "so the sample shows no uncertainty; they do not reflect what more questions "
            "could show.", SmallSampleWarning, stacklevel=4)
    few = [f"{name} ({n})" for name, n in units.items() if 1 < n < MIN_INTERVAL_UNITS]
    if few:
        warnings.warn(
            f"forecast_scores: the intervals of {len(few)} row(s) rest on fewer than "
            f"{MIN_INTERVAL_UNITS} {unit}s ({listed(few)}), where they cover less than "
            "their level (95% intervals of a Brier score held it 0.47 of the time at 2 "
            "questions, 0.79-0.83 at 3 and 0.91 at 4 and 5, 0.93-0.97 from 6; "
            "benchmarks/check_forecastbench_small.py); with so few, read them as rough.",
            SmallSampleWarning, stacklevel=4)


def warn_few_compared(owner: str, n_units: int, unit: str) -> None:
    """Warn when a comparison rests on fewer than :data:`MIN_COMPARE_UNITS` ``unit``
    (``n_units`` of them)."""
    if n_units >= MIN_COMPARE_UNITS:
        return
    warnings.warn(
        f"{owner}: {n_units} {unit} (< {MIN_COMPARE_UNITS}): the sign flip is exact where "
        "the score differences are symmetric, but with skewed ones (a sharp forecaster "
        "against a hedged one of the same expected score) it rejected a true null "
        "0.087-0.122 of the time at 6-10 questions and 0.080 at 15, at level 0.05 "
        "(0.048 at 20; benchmarks/check_forecastbench_small.py): read the p-value and "
        "interval as approximate.", SmallSampleWarning, stacklevel=4)
