"""Resolving the report's Monte Carlo p-values where the adjustment needs it.

A p-value from B permutations or resamples cannot be smaller than 1 / (B + 1). After
the report's multiplicity adjustment (Holm over every p-value of the report) that
floor is multiplied by the size of the family: with 1000 permutations and 25
p-values, an overwhelming effect and a borderline one both read "0.025". The report
therefore runs each test once with the draws it was given and then, for the tests
whose p-value is at its floor (fewer than :data:`STOP_AFTER` draws reached the
observed statistic), once more with as many draws as the adjusted p-value needs to
resolve below :data:`TARGET`. The tests far from significance cost nothing more.

The two-stage rule keeps every p-value valid: the second stage runs only when the
first stage's p-value is below ``c = (STOP_AFTER + 1) / (B + 1)``. For a level at or
above ``c``, a rejection needs the first stage's p-value below the level too; below
``c``, only the second stage can reject, and its p-value is valid on its own. Either
way ``P(p <= alpha) <= alpha``, whatever the dependence between the two stages, so
the second stage reruns the test from the same random stream: the same statistic
(the same cross-validation folds), more draws. The result kept is the
second stage's, which records its own number of draws (``n_resamples`` /
``n_permutations`` on the result); the cell's notes say that it was resolved. The
conditional-independence tests' second stage draws no interval: their result keeps
the first stage's interval and half-sample draws (:data:`INTERVAL_KEPT`; the notes say
so), which would otherwise be redrawn as many times as the permutations.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from .._rng import spawn
from .._warnings import recorded_warnings
from ._options import MAX_DRAWS
from ._options import TARGET
from ._options import floor_resolved
from ._options import second_stage_draws
from ._registry import REGISTRY
from ._registry import Options
from ._result import ReportCell

__all__ = ["DRAW_OPTIONS", "INTERVAL_KEPT", "MAX_DRAWS", "STOP_AFTER", "TARGET",
           "resolve_pvalues", "second_stage_draws"]

#: The tests whose p-value is a Monte Carlo p-value, and the option that sets its draws.
DRAW_OPTIONS: dict[str, str] = {
    "ci": "n_permutations",
    "ci_evidence": "n_permutations",
    "ci_calibrated": "n_permutations",
    "leakage": "n_permutations",
    "leakage_evidence": "n_permutations",
    "monotonicity": "n_resamples",
    "prompt_consistency": "n_resamples",
    "iia": "n_resamples",
}
#: The tests whose second stage skips the interval and keeps the first stage's (the
#: conditional-independence test draws its interval's half-samples as many times as its
#: permutations: 25,000 of them would cost as much as the permutations and change nothing).
INTERVAL_KEPT = ("ci", "ci_evidence", "ci_calibrated")
#: A first-stage p-value with at least this many draws at or beyond the statistic is
#: not at its floor: more draws would refine it, not change what it says (with 1000
#: draws, p >= 0.004; adjusted over 25 p-values, >= 0.1).
STOP_AFTER = 3


def _exceedances(pvalue: float, draws: int) -> int:
    return round(pvalue * (draws + 1) - 1)


def resolve_pvalues(cells: Sequence[ReportCell], parts: Sequence[pd.DataFrame],
                    options: Options, adjust: str, streams: Sequence[np.random.Generator]
                    ) -> tuple[list[ReportCell], int]:
    """The cells with the unresolved Monte Carlo p-values run again (see the module's
    docstring); also the number of tests run again. ``streams`` are the cells' random
    streams before the first stage drew from them: a test runs again from its own
    stream, so its statistic (folds, estimate) is the first stage's and only the
    number of draws changes."""
    family = sum(1 for c in cells for r in c.results.values()
                 if isinstance(r.pvalue, float) and math.isfinite(r.pvalue))
    needed = second_stage_draws(family, adjust)
    specs = {s.name: s for s in REGISTRY}
    out: list[ReportCell] = []
    rerun = 0
    for cell, part, stream in zip(cells, parts, streams, strict=True):
        by_name = dict(zip((s.name for s in REGISTRY), spawn(stream, len(REGISTRY)),
                           strict=True))
        results = dict(cell.results)
        notes = dict(cell.notes)
        for name, option in DRAW_OPTIONS.items():
            result = results.get(name)
            if result is None or not math.isfinite(result.pvalue):
                continue
            draws = int(getattr(options, option))
            # the first stage's floor already below the target (1000 draws, no adjustment:
            # 1 / 1001) is resolved: 1001 draws ran the test again for one draw more
            if (draws >= needed or floor_resolved(draws, family, adjust)
                    or _exceedances(result.pvalue, draws) >= STOP_AFTER):
                continue
            more = dataclasses.replace(options, interval=False)
            more = dataclasses.replace(more, **{option: needed})  # type: ignore[arg-type]
            # as in the first stage: warnings recorded in the cell's notes (the first
            # stage's are already there), one BLAS thread
            with recorded_warnings(), threadpool_limits(1, user_api="blas"):
                try:
                    results[name] = specs[name].run(part, more, by_name[name])
                except (ValueError, TypeError):  # the first stage's result stands
                    continue
            if name in INTERVAL_KEPT:  # the interval does not depend on the draws' number
                first: Any = result  # CITestResults
                second: Any = results[name]
                results[name] = dataclasses.replace(
                    second, ci_method=first.ci_method,
                    confidence_interval=first.confidence_interval,
                    resample_distribution=first.resample_distribution)
            rerun += 1
            kept = (f"; the interval is the first stage's ({draws} draws)"
                    if name in INTERVAL_KEPT else "")
            # "at its floor (0.15)" read as if 0.15 were the smallest p-value 19 draws give
            reached = _exceedances(result.pvalue, draws)
            notes[name] = (*notes.get(name, ()),
                           f"p-value resolved with {needed} draws: {draws} left it at or near "
                           f"its floor ({result.pvalue:.3g}, {reached} of them at or beyond "
                           f"the statistic; the floor is {1 / (draws + 1):.3g}){kept}")
        out.append(dataclasses.replace(cell, results=results, notes=notes))
    return out, rerun
