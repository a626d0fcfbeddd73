"""Simulated forecasters for :func:`coherence.consistency_noise_test`, written apart from
the package.

A tuple's true forecasts are coherent: the implied probabilities of a distribution over the
checker's possible worlds (Dirichlet, rejected until every forecast is in [0.05, 0.95]).
The stated forecast of each question at each repetition is its truth plus independent
noise of a question-specific standard deviation, symmetric and clipped at the distance to
0 or 1 (so the stated probability stays in [0, 1] and its mean stays the truth), and
optionally heaped on a grid (rounding moves the mean by much less than the noise when the
noise is wider than the grid). An incoherent tuple has one question's truth moved by a
known ``delta``: exactly ``share_incoherent`` of the tuples are, or, with
``incoherent_drawn``, each tuple is with that chance.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from benchmarks._designs import DesignBase

__all__ = ["Design", "generate"]

# possible worlds (1 true, 0 false, -1 annulled), written out here apart from the package
WORLDS: dict[str, tuple[tuple[str, ...], tuple[tuple[int, ...], ...]]] = {
    "negation": (("P", "not_P"), ((1, 0), (0, 1))),
    "paraphrase": (("P", "para_P"), ((1, 1), (0, 0))),
    "consequence": (("P", "cons_P"), ((1, 1), (0, 1), (0, 0))),
    "and": (("P", "Q", "P_and_Q"), ((1, 1, 1), (1, 0, 0), (0, 1, 0), (0, 0, 0))),
    "or": (("P", "Q", "P_or_Q"), ((1, 1, 1), (1, 0, 1), (0, 1, 1), (0, 0, 0))),
    "and_or": (("P", "Q", "P_and_Q", "P_or_Q"),
               ((1, 1, 1, 1), (1, 0, 0, 1), (0, 1, 0, 1), (0, 0, 0, 0))),
    "but": (("P", "Q_and_not_P", "P_or_Q"), ((1, 0, 1), (0, 1, 1), (0, 0, 0))),
    "cond": (("P", "Q_given_P", "P_and_Q"), ((1, 1, 1), (1, 0, 0), (0, -1, 0))),
    "expected_evidence": (("P", "Q", "P_given_Q", "P_given_not_Q"),
                          ((1, 1, 1, -1), (1, 0, -1, 1), (0, 1, 0, -1), (0, 0, -1, 0))),
    # not a checker of Paleka et al.: the six numbers of coherence.bayes_check
    "bayes": (("P", "Q", "P_given_Q", "P_given_not_Q", "Q_given_P", "Q_given_not_P"),
              ((1, 1, 1, -1, 1, -1), (1, 0, -1, 1, 0, -1), (0, 1, 0, -1, -1, 1),
               (0, 0, -1, 0, -1, 0))),
}
#: the world left empty on the boundary of an inequality checker: consequence P = cons_P,
#: and P_and_Q = Q (Q implies P), or P_or_Q = Q (P implies Q)
BOUNDARY_WORLD = {"consequence": 1, "and": 2, "or": 1}
#: the direction of an incoherent shift of the last question (inequality checkers: out of
#: the bound the boundary design sits on)
DIRECTION = {"consequence": -1.0, "and": 1.0, "or": -1.0}


@dataclass(frozen=True)
class Design(DesignBase):
    checker: str = "negation"
    n_tuples: int = 100
    repetitions: tuple[int, int] = (3, 5)     # per question, uniform in [lo, hi]
    sd: tuple[float, float] = (0.03, 0.10)   # per question, uniform in [lo, hi]
    noise: str = "normal"                     # 'normal', 'uniform' or 't3'
    boundary: bool = False                    # inequality checkers: truths on the bound
    delta: float = 0.0                        # shift of an incoherent tuple's last question
    share_incoherent: float = 0.0
    incoherent_drawn: bool = False            # each tuple incoherent with that chance
    grid: float | None = None                 # stated forecasts heaped on this grid


def _truth(design: Design, gen: np.random.Generator) -> np.ndarray:
    _, worlds = WORLDS[design.checker]
    w = np.array(worlds)
    for _ in range(1000):
        mu = gen.dirichlet(np.ones(len(w)))
        if design.boundary and design.checker in BOUNDARY_WORLD:
            mu[BOUNDARY_WORLD[design.checker]] = 0.0
            mu /= mu.sum()
        t = mu @ (w == 1)
        m = mu @ (w >= 0)
        if np.all(m > 0):
            pi = t / m
            if np.all((pi >= 0.05) & (pi <= 0.95)):
                return np.asarray(pi)
    raise RuntimeError("no truth in [0.05, 0.95] found")


def _noise(kind: str, sd: float, size: int, gen: np.random.Generator) -> np.ndarray:
    if kind == "normal":
        return gen.normal(0.0, sd, size)
    if kind == "uniform":
        return gen.uniform(-sd * np.sqrt(3.0), sd * np.sqrt(3.0), size)
    return gen.standard_t(3, size) * sd / np.sqrt(3.0)


def generate(design: Design, seed: int) -> pd.DataFrame:
    """One study: columns set, role, repetition, probability (and ``incoherent``)."""
    gen = np.random.default_rng(seed)
    roles, _ = WORLDS[design.checker]
    rows: list[dict[str, Any]] = []
    n_bad = round(design.share_incoherent * design.n_tuples)
    for s in range(design.n_tuples):
        pi = _truth(design, gen)
        # exactly the share (the first tuples), or a draw per tuple, so that a sample's
        # share varies as it does in a population
        bad = (gen.random() < design.share_incoherent if design.incoherent_drawn
               else s < n_bad)
        if bad:
            sign = DIRECTION.get(design.checker, float(gen.choice([-1.0, 1.0])))
            pi = pi.copy()
            pi[-1] = np.clip(pi[-1] + sign * design.delta, 0.02, 0.98)
        for i, role in enumerate(roles):
            n = int(gen.integers(design.repetitions[0], design.repetitions[1] + 1))
            sd = float(gen.uniform(*design.sd))
            lim = min(pi[i], 1.0 - pi[i])
            eps = np.clip(_noise(design.noise, sd, n, gen), -lim, lim)
            stated = pi[i] + eps
            if design.grid is not None:  # heaped, as LLMs state probabilities
                stated = np.round(np.round(stated / design.grid) * design.grid, 12)
            for r in range(n):
                rows.append({"set": s, "role": role, "repetition": r,
                             "probability": float(stated[r]), "incoherent": bad})
    return pd.DataFrame(rows)
