"""The warnings of :func:`coherence.forecastbench_scores` (and of its comparison): the
intervals that rest on too few replicates, on one question or on too few questions to
cover, a comparison of too few questions for a p-value, a leaderboard of one forecaster,
and a relative skill score left undefined by a perfect reference (each at the caller's
caller's line).
"""

from __future__ import annotations

import warnings
from typing import Any

import pandas as pd

from .._resampling import LEFT_OUT_SHARE
from .._validation import listed
from .._warnings import DegenerateDataWarning
from .._warnings import SmallSampleWarning

__all__ = ["MIN_INTERVAL_QUESTIONS", "few_compared", "warn_perfect_naive", "warn_small",
           "warn_undefined"]

#: Questions a row of the leaderboard needs before its percentile intervals held their
#: level on the measured designs (below: warned; benchmarks/check_forecastbench_small.py).
MIN_INTERVAL_QUESTIONS = 40


def warn_undefined(owner: str, names: list[str], counts: Any, n_resamples: int) -> None:
    """Warn when some of ``names`` had more than :data:`LEFT_OUT_SHARE` of the
    ``n_resamples`` replicates left out (``counts``), naming them."""
    over = [(name, int(k)) for name, k in zip(names, counts, strict=True)
            if k > LEFT_OUT_SHARE * n_resamples]
    if not over:
        return
    shown = listed([f"{name} ({k}, {k / n_resamples:.1%})" for name, k in over])
    warnings.warn(
        f"{owner}: of the {n_resamples} bootstrap replicates, more than "
        f"{LEFT_OUT_SHARE:.0%} are left out of the intervals of {shown}: a score is "
        "undefined there (none of a forecaster's questions drawn, questions drawn that split "
        "the fixed-effects forecasters into groups with no forecaster in common, or a "
        "difficulty-adjusted Brier score below 0, which has no Brier Index), so those "
        "intervals rest on the other replicates only ('n_undefined' counts them).",
        SmallSampleWarning, stacklevel=3)


def few_compared(owner: str, counts: dict[str, int], minimum: int) -> bool:
    """Whether a forecaster of ``counts`` (name: questions forecast) has fewer than
    ``minimum`` questions, so that a comparison gives no p-value (warned)."""
    fewest = min(counts, key=counts.__getitem__)
    if counts[fewest] >= minimum:
        return False
    warnings.warn(
        f"{owner}: {fewest} forecast {counts[fewest]} question(s) (< {minimum}), too few for "
        "the centred bootstrap p-value, which rejects a true null far more often than "
        "its level there (at 0.05: 0.30 at 3 questions, 0.11 at 10; "
        "benchmarks/check_forecastbench_small.py), so the p-value is NaN; the interval "
        "rests on as few questions. For a test, use forecast_scores(...).compare "
        "(sign flips over questions: exact where the differences are symmetric, "
        "approximate where they are skewed).", SmallSampleWarning, stacklevel=3)
    return True


def warn_perfect_naive(owner: str, table: pd.DataFrame, naive: str | None) -> None:
    """Warn where ``bss_relative`` is NaN although ``bss`` is defined: the naive
    forecaster's Brier score is 0 on those questions, so the ratio is 0 / 0 (it was NaN
    without a word)."""
    if naive is None:
        return
    undefined = table["bss_relative"].isna() & table["bss"].notna()
    if not undefined.any():
        return
    names = [str(m) for m in table.loc[undefined, "model"]]
    warnings.warn(
        f"{owner}: 'bss_relative' is NaN for {listed(names)}: the naive forecaster "
        f"{naive!r} has a Brier score of 0 on their questions, so there is no skill "
        "relative to it (1 - b / 0); "
        "'bss' (the difference of Brier scores) is defined.", DegenerateDataWarning,
        stacklevel=3)


def warn_small(owner: str, table: pd.DataFrame, n_q: int) -> None:
    """Warn of the intervals that rest on one question, of those that rest on fewer than
    :data:`MIN_INTERVAL_QUESTIONS` (they cover less than their level), and of a
    leaderboard of one forecaster (its peer score is measured against itself)."""
    counts = [("pooled", n_q), *((str(m), int(n)) for m, n in
                                 zip(table["model"], table["n_questions"], strict=True))]
    single = [name for name, n in counts if n == 1]
    if single:
        warnings.warn(
            f"{owner}: {len(single)} interval(s) rest on one question "
            f"({listed(single)}): they are the point itself, and do not reflect what more "
            "questions could show.",
            SmallSampleWarning, stacklevel=3)
    few = [f"{name} ({n})" for name, n in counts if 1 < n < MIN_INTERVAL_QUESTIONS]
    if few:
        warnings.warn(
            f"{owner}: the percentile intervals of {len(few)} row(s) rest on fewer than "
            f"{MIN_INTERVAL_QUESTIONS} questions ({listed(few)}), where they cover less than "
            "their level (95% intervals of a Brier score held it 0.66 of the time at 3 "
            "questions, 0.87 at 10, 0.92 at 30; benchmarks/check_forecastbench_small.py). "
            "For intervals of the Brier score with measured coverage, use forecast_scores "
            "(bootstrap-t: "
            "0.93-0.97 from 6 questions).", SmallSampleWarning, stacklevel=3)
    if len(table) == 1:
        warnings.warn(f"{owner}: one forecaster ({table['model'].iloc[0]}) is scored, so its "
                      "peer score is measured against itself: 0, with interval [0, 0], says "
                      "nothing; peer scores need two forecasters or more.",
                      SmallSampleWarning, stacklevel=3)
