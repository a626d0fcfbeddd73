"""An independent generator of knowledge-split studies, and the simple competitor.

Written apart from the package so that the validation of
:func:`coherence.coherence_by_knowledge` does not rest on code it shares with the test.
A study has ``n_questions`` questions resolving over two years (2023-01-01 to
2024-12-31) and ``n_models`` models with knowledge cutoffs ``cutoffs`` (the first ``n_models``; by
default :data:`CUTOFFS`). Model ``m`` answers a random share ``answer_share[m]`` of the
questions (at least two), each ``repetitions`` times (``(low, high)``: drawn per
question and model). The row value is built from

    z = d_q + a_m + s_qm + e_r,   d_q ~ N(0, difficulty_sd^2),  s_qm ~ N(0, shock_sd^2),
                                  e_r ~ N(0, noise_sd^2)

(``d_q`` the question's difficulty, shared by the models: dependence across models;
``a_m`` a fixed level per model, :data:`LEVELS`; ``s_qm`` a question-by-model shock;
``e_r`` the row's noise) as

* ``"lognormal"``: ``0.05 exp(z)`` (skewed, like a checker's violations);
* ``"heaped"``: the lognormal value rounded to 0.05 and capped at 0.2 (five values);
* ``"flag"``: ``1{z > 0.5}`` (a 0/1 flag);

and ``effect`` standard deviations of the measure (:func:`measure_sd`) are added to every
row of a question resolved on or after the model's cutoff (``effect = 0``: the null,
resolution dates exchangeable across questions). ``dates`` is ``"uniform"`` (a uniform
day), ``"tied"`` (one of ``n_dates`` evenly spaced days) or ``"even"`` (evenly spaced
over the span: the numbers before and after each cutoff are fixed, for the exact path).
"""

from __future__ import annotations

import math
import warnings
from dataclasses import dataclass

import numpy as np
import pandas as pd

from benchmarks._designs import DesignBase
from benchmarks._designs import draw_repetitions

__all__ = ["CUTOFFS", "LEVELS", "Design", "even_cutoff", "generate", "measure_sd",
           "welch_bonferroni"]

START = pd.Timestamp("2023-01-01")
SPAN_DAYS = 730
#: the models' knowledge cutoffs, in the order the models take them
CUTOFFS: tuple[str, ...] = ("2023-07-01", "2024-07-01", "2024-01-01", "2023-10-01")
#: each model's fixed level ``a_m`` (models differ in how coherent they are overall)
LEVELS: tuple[float, ...] = (0.0, 0.3, -0.2, 0.15)


@dataclass(frozen=True)
class Design(DesignBase):
    """One cell of the validation matrix (see the module docstring)."""

    n_questions: int = 100
    n_models: int = 2
    repetitions: int | tuple[int, int] = (1, 4)
    measure: str = "lognormal"  # "lognormal", "heaped" or "flag"
    difficulty_sd: float = 0.5
    shock_sd: float = 0.2
    noise_sd: float = 0.5
    dates: str = "uniform"  # "uniform", "tied" or "even"
    n_dates: int = 6
    answer_share: tuple[float, ...] = (1.0, 1.0, 1.0, 1.0)
    effect: float = 0.0
    cutoffs: tuple[str, ...] = CUTOFFS


def measure_sd(design: Design) -> float:
    """The standard deviation of one row's lognormal measure around its model's level
    (``0.05 exp(z)``, ``z`` with variance the sum of the three variances)."""
    s2 = design.difficulty_sd ** 2 + design.shock_sd ** 2 + design.noise_sd ** 2
    return 0.05 * math.sqrt((math.exp(s2) - 1.0) * math.exp(s2))


def even_cutoff(n_questions: int, n_before: int) -> str:
    """The cutoff that leaves exactly the first ``n_before`` of ``n_questions`` evenly
    spaced dates (``dates="even"``) before it: the date of question ``n_before`` (a
    question resolved on the cutoff is after it)."""
    days = np.linspace(0, SPAN_DAYS - 1, n_questions).round().astype(np.int64)
    return (START + pd.Timedelta(days=int(days[n_before]))).date().isoformat()


def _dates(design: Design, rng: np.random.Generator) -> pd.DatetimeIndex:
    n = design.n_questions
    if design.dates == "uniform":
        days = rng.integers(0, SPAN_DAYS, n)
    elif design.dates == "tied":
        grid = np.linspace(0, SPAN_DAYS - 1, design.n_dates).round().astype(np.int64)
        days = grid[rng.integers(0, design.n_dates, n)]
    elif design.dates == "even":
        days = np.linspace(0, SPAN_DAYS - 1, n).round().astype(np.int64)
    else:
        raise ValueError(f"unknown dates {design.dates!r}")
    return START + pd.to_timedelta(days, unit="D")


def generate(design: Design, seed: int) -> pd.DataFrame:
    """One study: columns ``model``, ``question``, ``resolved``, ``cutoff``, ``violation``."""
    rng = np.random.default_rng(seed)
    n, m = design.n_questions, design.n_models
    dates = _dates(design, rng)
    difficulty = rng.normal(0.0, design.difficulty_sd, n)
    shift = design.effect * measure_sd(design)
    frames = []
    for j in range(m):
        cutoff = pd.Timestamp(design.cutoffs[j])
        share = design.answer_share[j]
        k = max(2, round(share * n))
        asked = np.sort(rng.choice(n, size=k, replace=False)) if k < n else np.arange(n)
        reps = draw_repetitions(design.repetitions, len(asked), rng)
        q = np.repeat(asked, reps)
        z = (difficulty[q] + LEVELS[j]
             + np.repeat(rng.normal(0.0, design.shock_sd, len(asked)), reps)
             + rng.normal(0.0, design.noise_sd, len(q)))
        if design.measure == "lognormal":
            v = 0.05 * np.exp(z)
        elif design.measure == "heaped":
            v = np.minimum(np.round(np.exp(z)) * 0.05, 0.2)
        elif design.measure == "flag":
            v = (z > 0.5).astype(np.float64)
        else:
            raise ValueError(f"unknown measure {design.measure!r}")
        v = v + shift * np.asarray(dates[q] >= cutoff)
        frames.append(pd.DataFrame({"model": f"m{j}", "question": q, "resolved": dates[q],
                                    "cutoff": cutoff, "violation": v}))
    return pd.concat(frames, ignore_index=True)


def welch_bonferroni(data: pd.DataFrame) -> float:
    """The simple competitor: per model, a two-sided Welch t-test of the question means
    (mean over the model's rows of each question) resolved on or after its cutoff against
    those resolved before; the smallest p-value times the number of models tested
    (Bonferroni, capped at 1). Models with fewer than two questions in a group, or
    constant groups, are not tested; NaN when none is."""
    from scipy import stats

    pvalues = []
    for _, rows in data.groupby("model", sort=True):
        means = rows.groupby("question").agg(v=("violation", "mean"),
                                             resolved=("resolved", "first"),
                                             cutoff=("cutoff", "first"))
        after = means["resolved"] >= means["cutoff"]
        a, b = means.loc[after, "v"].to_numpy(), means.loc[~after, "v"].to_numpy()
        if len(a) < 2 or len(b) < 2 or (np.ptp(a) == 0 and np.ptp(b) == 0):
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            p = float(stats.ttest_ind(a, b, equal_var=False).pvalue)
        if math.isfinite(p):
            pvalues.append(p)
    if not pvalues:
        return math.nan
    return min(1.0, len(pvalues) * min(pvalues))
