"""Pieces the study generators (``benchmarks/*_designs.py``) share, written once.

* :class:`DesignBase`: what every frozen design dataclass has besides its fields:
  :meth:`~DesignBase.with_` (a copy with some fields changed) and
  :meth:`~DesignBase.settings` (its fields as JSON values, for a matrix's results).
* :func:`draw_repetitions`, :func:`draw_rows`: the number of rows of each context,
  fixed or drawn, and each row's context and repetition.
* :func:`draw_actions`: actions drawn from per-row choice probabilities;
  :func:`draw_leaky_actions`: from logits, with context shocks and an outcome leak.
* :func:`snap` and :data:`ACTIONS`: the stated-belief grid and the action names of
  the belief/action generators (:mod:`benchmarks.citest_designs`,
  :mod:`benchmarks.leakage_designs`).

The generators stay apart from the package: nothing here imports ``coherence``.
"""

from __future__ import annotations

from dataclasses import fields
from dataclasses import replace
from typing import Any
from typing import Self

import numpy as np

__all__ = ["ACTIONS", "DesignBase", "draw_actions", "draw_leaky_actions",
           "draw_repetitions", "draw_rows", "snap"]

#: the actions of the belief/action generators, in the order of their losses
ACTIONS = ("yes", "no", "defer", "refer")


class DesignBase:
    """Mixin of the frozen design dataclasses: ``with_`` and ``settings``."""

    __slots__ = ()

    def with_(self, **changes: Any) -> Self:
        """A copy of the design with ``changes`` applied."""
        return replace(self, **changes)  # type: ignore[type-var]

    def settings(self, drop: tuple[str, ...] = ()) -> dict[str, Any]:
        """The fields (but ``drop``) as JSON values: tuples become lists."""
        return {f.name: (list(v) if isinstance(v := getattr(self, f.name), tuple) else v)
                for f in fields(self) if f.name not in drop}  # type: ignore[arg-type]


def draw_repetitions(repetitions: int | tuple[int, int], n: int,
                     rng: np.random.Generator) -> np.ndarray:
    """Rows per context for ``n`` contexts: ``repetitions`` each, or with ``(low, high)``
    drawn uniformly from ``low..high`` per context (one draw of ``rng``)."""
    if isinstance(repetitions, tuple):
        return rng.integers(repetitions[0], repetitions[1] + 1, size=n)
    return np.full(n, repetitions)


def draw_rows(repetitions: int | tuple[int, int], n: int, rng: np.random.Generator
              ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """:func:`draw_repetitions`, then each row's context and repetition index:
    ``(rows per context, context of each row, repetition of each row)``."""
    reps = draw_repetitions(repetitions, n, rng)
    context = np.repeat(np.arange(n), reps)
    repetition = (np.concatenate([np.arange(r) for r in reps]) if len(reps)
                  else np.zeros(0, dtype=np.int64))
    return reps, context, repetition


def draw_actions(prob: np.ndarray, u: np.ndarray) -> np.ndarray:
    """The action index of each row of ``prob`` (rows summing to 1) given uniforms
    ``u``, one per row: the first whose cumulative probability reaches ``u``."""
    return np.minimum((u[:, None] > np.cumsum(prob, axis=1)).sum(axis=1), prob.shape[1] - 1)


def draw_leaky_actions(logits: np.ndarray, outcome: np.ndarray, context: np.ndarray, *,
                       shock_sd: float, leak: float, rng: np.random.Generator) -> np.ndarray:
    """Actions of rows with ``logits`` (rows x actions): a shock ``N(0, shock_sd^2)`` per
    context and action (shared by the context's rows), ``leak (2 y_c - 1)`` added to the
    first action's logit (``outcome``: one per context), a softmax, then
    :func:`draw_actions`. Under ``leak = 0`` the action ignores the outcome."""
    from scipy import special

    if shock_sd:
        logits = logits + shock_sd * rng.standard_normal((len(outcome), logits.shape[1]))[context]
    if leak:
        logits[:, 0] += leak * (2.0 * outcome[context] - 1.0)
    return draw_actions(special.softmax(logits, axis=1), rng.random(len(context)))


def snap(values: np.ndarray, grid: float | None) -> np.ndarray:
    """``values`` clipped to [0, 1] and rounded to ``grid`` (``None``: continuous)."""
    v = np.clip(values, 0.0, 1.0)
    if grid is None:
        return v
    return np.round(np.round(v / grid) * grid, 12)
