"""Belief/action studies with evidence whose effect the leakage test's models may not represent.

Written apart from :mod:`coherence._decision._simulate` (and next to
:mod:`benchmarks.citest_designs`, whose loss functions and grids it shares) for the
validation of :func:`coherence.leakage_test`. Context ``c`` has a prior posterior
``q_c`` (uniform or rare: ``Beta(0.5, 5)``) and evidence ``e`` (per context, or per
row) that moves it on the logit scale and changes the losses:

- ``evidence="nominal"``: 4 levels coded 0..3 (integers, or the strings ``"a".."d"``
  with ``as_strings``); odd codes raise the logit of the posterior by 0.8 and make
  deferring cheaper and answering "yes" dearer, so the effect is not monotone in
  the code;
- ``evidence="binary"``: 0/1; ``e = 1`` raises the logit by 0.7 and triples the
  cost of a false negative (the loss of "no" is ``3 w`` instead of ``w``).

The stated belief is the row's posterior (plus ``belief_sd`` noise, snapped to a
grid; with ``belief_sees_evidence=False`` the prior ``q_c``, so that the outcome
depends on the evidence beyond the belief) and the action follows a softmax of
expected losses with a context-level shock per action. The outcome is drawn once
per context from the context's posterior (with evidence per row, from ``q_c``: no
row's evidence causes it).
Under ``leak = 0`` the action depends on the outcome only through the row's own
belief and evidence: ``action _||_ outcome | (belief, evidence)`` holds exactly.
``leak`` adds ``leak (2 y - 1)`` to the logit of the first action.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from scipy import special

from benchmarks._designs import ACTIONS
from benchmarks._designs import DesignBase
from benchmarks._designs import draw_leaky_actions
from benchmarks._designs import draw_rows
from benchmarks._designs import snap

__all__ = ["LeakDesign", "generate"]


@dataclass(frozen=True)
class LeakDesign(DesignBase):
    """One cell of the leakage validation matrix (see the module docstring)."""

    n_contexts: int = 200
    repetitions: int | tuple[int, int] = 5
    grid: float | None = 0.05
    belief_sd: float = 0.0
    shock_sd: float = 0.0
    n_actions: int = 3
    base_rate: str = "uniform"  # or "rare"
    temperature: float = 0.15
    evidence: str = "none"  # "nominal" or "binary"
    evidence_within: bool = False
    as_strings: bool = False
    belief_sees_evidence: bool = True
    leak: float = 0.0


def _effects(design: LeakDesign, e: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(shift of the logit of the posterior, multiplier of the 'yes' loss, shift of the
    'defer' loss) of each evidence value."""
    if design.evidence == "nominal":
        odd = (e % 2 == 1).astype(np.float64)
        return 0.8 * odd - 0.4, 1.0 + odd, -0.15 * odd
    if design.evidence == "binary":
        return 0.7 * e - 0.35, np.ones(len(e)), np.zeros(len(e))
    return np.zeros(len(e)), np.ones(len(e)), np.zeros(len(e))


def _losses(w: np.ndarray, e: np.ndarray, design: LeakDesign) -> np.ndarray:
    _, yes_mult, defer_shift = _effects(design, e)
    no_mult = 1.0 + 2.0 * e if design.evidence == "binary" else np.ones(len(e))
    cols = [(1.0 - w) * yes_mult, w * no_mult, 0.35 + defer_shift,
            0.2 + 0.4 * w * (1.0 - w)]
    return np.stack(cols[:design.n_actions], axis=-1)


def generate(design: LeakDesign, seed: int) -> pd.DataFrame:
    """One study: context, repetition, belief, action, outcome [, evidence]."""
    rng = np.random.default_rng(seed)
    g = design.n_contexts
    reps, ctx, rep = draw_rows(design.repetitions, g, rng)
    n = int(reps.sum())
    q = rng.beta(0.5, 5.0, size=g) if design.base_rate == "rare" else rng.uniform(size=g)
    levels = {"nominal": 4, "binary": 2}.get(design.evidence, 1)
    if design.evidence_within:
        e = rng.integers(0, levels, size=n)
    else:
        e = np.repeat(rng.integers(0, levels, size=g), reps)
    shift = _effects(design, e)[0]
    logit_q = special.logit(np.clip(q, 1e-6, 1 - 1e-6))
    q_row = special.expit(logit_q[ctx] + shift)
    if design.evidence_within:
        outcome = rng.random(g) < q
    else:
        q_ctx = np.empty(g)
        q_ctx[ctx] = q_row
        outcome = rng.random(g) < q_ctx
    # belief_sees_evidence=False: the stated belief is the prior q_c, the outcome still
    # follows the evidence (the failing design: the outcome depends on the
    # evidence beyond the belief, which the null allows since evidence is conditioned on)
    stated = q_row if design.belief_sees_evidence else q[ctx]
    belief = snap(stated + design.belief_sd * rng.standard_normal(n), design.grid)
    logits = -_losses(belief, e, design) / design.temperature
    action = draw_leaky_actions(logits, outcome, ctx, shock_sd=design.shock_sd,
                                leak=design.leak, rng=rng)
    data = pd.DataFrame({"context": ctx, "repetition": rep, "belief": belief,
                         "action": np.asarray(ACTIONS)[action],
                         "outcome": outcome[ctx].astype(np.int64)})
    if design.evidence != "none":
        data["evidence"] = (np.asarray(list("abcd"))[e] if design.as_strings
                            else e.astype(np.int64))
    return data
