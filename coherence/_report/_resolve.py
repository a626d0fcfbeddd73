"""Resolving the report's Monte Carlo p-values where the adjustment needs it.

A p-value from B permutations or resamples cannot be smaller than 1 / (B + 1). After
the report's multiplicity adjustment (Holm over every p-value of the report) that
floor is multiplied by the size of the family: with 1000 permutations and 25
p-values, an overwhelming effect and a borderline one both read "0.025". The report
therefore runs each test once with the draws it was given and then, for the tests
whose p-value is at its floor (fewer than :data:`STOP_AFTER` draws reached the
observed statistic), once more with as many draws as the adjusted p-value needs to
resolve below :data:`TARGET`. The tests far from significance cost nothing more.

The two-stage rule keeps every p-value valid: the second stage's draws are new, and
it runs only when the first stage's p-value is below ``(STOP_AFTER + 1) / (B + 1)``.
For a level at or above that bound, a rejection needs the first stage's p-value
below the level too; below it, only the second stage can reject, and its p-value
is valid on its own. Either way ``P(p <= alpha) <= alpha``. The result kept is the
second stage's, which records its own number of draws (``n_resamples`` /
``n_permutations`` on the result); the cell's notes say that it was resolved.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Sequence

import numpy as np
import pandas as pd

from .._rng import spawn
from ._registry import REGISTRY, Options
from ._result import ReportCell

__all__ = ["DRAW_OPTIONS", "MAX_DRAWS", "STOP_AFTER", "TARGET", "resolve_pvalues"]

#: The tests whose p-value is a Monte Carlo p-value, and the option that sets its draws.
DRAW_OPTIONS: dict[str, str] = {
    "ci": "n_permutations",
    "ci_evidence": "n_permutations",
    "ci_calibrated": "n_permutations",
    "leakage": "n_permutations",
    "leakage_evidence": "n_permutations",
    "monotonicity": "n_resamples",
    "prompt_consistency": "n_resamples",
}
#: A first-stage p-value with at least this many draws at or beyond the statistic is
#: not at its floor: more draws would refine it, not change what it says (with 1000
#: draws, p >= 0.004; adjusted over 25 p-values, >= 0.1).
STOP_AFTER = 3
#: The second stage resolves the adjusted p-value strictly below this.
TARGET = 1e-3
#: The most draws of a second stage.
MAX_DRAWS = 100_000


def _exceedances(pvalue: float, draws: int) -> int:
    return round(pvalue * (draws + 1) - 1)


def resolve_pvalues(cells: Sequence[ReportCell], parts: Sequence[pd.DataFrame],
                    options: Options, adjust: str, rng: np.random.Generator
                    ) -> tuple[list[ReportCell], int]:
    """The cells with the unresolved Monte Carlo p-values run again (see the module's
    docstring); also the number of tests run again."""
    family = sum(1 for c in cells for r in c.results.values()
                 if isinstance(r.pvalue, float) and math.isfinite(r.pvalue))
    factor = family if adjust != "none" else 1
    needed = min(MAX_DRAWS, math.ceil(max(factor, 1) / TARGET) + 1)
    specs = {s.name: s for s in REGISTRY}
    out: list[ReportCell] = []
    rerun = 0
    streams = spawn(rng, len(cells))
    for cell, part, stream in zip(cells, parts, streams, strict=True):
        results = dict(cell.results)
        notes = dict(cell.notes)
        for name, option in DRAW_OPTIONS.items():
            result = results.get(name)
            if result is None or not math.isfinite(result.pvalue):
                continue
            draws = int(getattr(options, option))
            if draws >= needed or _exceedances(result.pvalue, draws) >= STOP_AFTER:
                continue
            more = dataclasses.replace(options, **{option: needed})  # type: ignore[arg-type]
            try:
                results[name] = specs[name].run(part, more, spawn(stream, 1)[0])
            except (ValueError, TypeError):  # the first stage's result stands
                continue
            rerun += 1
            notes[name] = (*notes.get(name, ()),
                           f"p-value resolved with {needed} draws: {draws} left it at its "
                           f"floor ({result.pvalue:.3g})")
        out.append(dataclasses.replace(cell, results=results, notes=notes))
    return out, rerun
