"""An independent generator of ordered-action studies for the cyclic-monotonicity test.

Written apart from the package so that the validation of
:func:`coherence.cyclic_monotonicity_test` does not rest on code it shares with the test.
A study has ``n_contexts`` contexts; context ``c`` has a stated belief ``q_c`` (constant
within the context) and is elicited ``per_context`` times (one row per elicitation:
columns ``context``, ``belief``, ``action``). Actions are ordered by payoff slope,
``ORDERS[n_actions]``, lowest first. The utility of action ``k`` in context ``c`` is

    v_ck = base_k + strength * slope_k * (q_c - 1/2) + shock_sd * eps_ck   (eps ~ N(0, 1))

(context shocks shared by every elicitation of the context), ``slope_k`` increasing in
``k``. Agents:

* ``"logit"``: multinomial logit on ``v``: every cumulative share ``P(level >= k)`` is
  non-decreasing in ``q`` (the null);
* ``"nested"``: nested logit, the two highest actions in one nest of dissimilarity ``lam``
  (an additive random-utility model that violates IIA: still the null);
* ``"steal"``: the logit, except that above belief ``onset`` the action below the top
  one (``defer`` with three actions) takes a share ``delta * min(1, (q - onset) / width)``
  of the top action's probability: ``P(level >= K-1)`` falls at high beliefs (the
  alternative; a small ``width`` makes the fall a step).

Beliefs: ``"uniform"`` (continuous on [0, 1]) or ``"heaped"`` (on the 0.05 grid, 70% of
contexts on multiples of 0.1 and 15% exactly at 0.5, as stated probabilities heap).
``per_context`` may be ``(low, high)``: each context draws its number of elicitations
uniformly (unequal repetitions).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from benchmarks._designs import DesignBase
from benchmarks._designs import draw_actions
from benchmarks._designs import draw_repetitions

__all__ = ["ORDERS", "Design", "cumulative_shares", "generate", "probabilities"]

ORDERS: dict[int, tuple[str, ...]] = {
    3: ("no", "defer", "yes"),
    4: ("no", "lean_no", "lean_yes", "yes"),
}
SLOPES: dict[int, tuple[float, ...]] = {3: (-2.0, 0.0, 2.0), 4: (-3.0, -1.0, 1.0, 3.0)}


@dataclass(frozen=True)
class Design(DesignBase):
    """One cell of the validation matrix (see the module docstring)."""

    n_actions: int = 3
    n_contexts: int = 200
    per_context: int | tuple[int, int] = 5
    shock_sd: float = 1.0
    strength: float = 1.0
    beliefs: str = "uniform"
    agent: str = "logit"  # "logit", "nested" or "steal"
    lam: float = 0.5
    delta: float = 0.5
    onset: float = 0.5
    width: float = 0.5

    @property
    def order(self) -> tuple[str, ...]:
        return ORDERS[self.n_actions]


def probabilities(design: Design, q: np.ndarray, v: np.ndarray) -> np.ndarray:
    """Choice probabilities ``(n, K)`` over ``design.order`` at beliefs ``q``, utilities ``v``."""
    k = design.n_actions
    if design.agent == "nested":
        lam = design.lam
        nest = np.zeros(k, dtype=bool)
        nest[-2:] = True
        shift = v.max(axis=1, keepdims=True)
        e_in = np.exp((v - shift) / lam) * nest
        inclusive = e_in.sum(axis=1, keepdims=True)  # sum over the nest of exp((v - s)/lam)
        # P(nest) ∝ exp(s) * inclusive ** lam; P(alone k) ∝ exp(v_k - s) * exp(s)
        w_nest = inclusive ** lam
        w_alone = np.exp(v - shift) * ~nest
        total = w_nest + w_alone.sum(axis=1, keepdims=True)
        return np.where(nest, (w_nest / total) * e_in / inclusive, w_alone / total)
    shift = v.max(axis=1, keepdims=True)
    w = np.exp(v - shift)
    p = w / w.sum(axis=1, keepdims=True)
    if design.agent == "steal":
        take = design.delta * np.clip((q - design.onset) / design.width, 0.0, 1.0)
        moved = p[:, -1] * take
        p[:, -1] -= moved
        p[:, -2] += moved
    return p


def _beliefs(design: Design, rng: np.random.Generator) -> np.ndarray:
    n = design.n_contexts
    if design.beliefs == "uniform":
        return rng.uniform(0.0, 1.0, n)
    u = rng.uniform(size=n)
    tenths = rng.integers(0, 11, n) / 10.0
    twentieths = rng.integers(0, 21, n) / 20.0
    return np.where(u < 0.15, 0.5, np.where(u < 0.85, tenths, twentieths))


def _utilities(design: Design, q: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    k = design.n_actions
    slope = np.asarray(SLOPES[k])
    eps = rng.standard_normal((len(q), k))
    return design.strength * slope * (q[:, None] - 0.5) + design.shock_sd * eps


def cumulative_shares(design: Design, q: np.ndarray, seed: int = 0,
                      n_draws: int = 20_000) -> np.ndarray:
    """``P(level >= k)``, ``k = 1..K-1``, at each belief of ``q`` (averaged over the
    context shocks): the truth a violation is read from."""
    rng = np.random.default_rng(seed)
    out = np.empty((len(q), design.n_actions - 1))
    for i, qi in enumerate(q):
        qq = np.full(n_draws, qi)
        p = probabilities(design, qq, _utilities(design, qq, rng)).mean(axis=0)
        out[i] = np.cumsum(p[::-1])[::-1][1:]
    return out


def generate(design: Design, seed: int) -> pd.DataFrame:
    """One study: columns context, belief, action (one row per elicitation)."""
    rng = np.random.default_rng(seed)
    q = _beliefs(design, rng)
    p = probabilities(design, q, _utilities(design, q, rng))
    reps = draw_repetitions(design.per_context, design.n_contexts, rng)
    ctx = np.repeat(np.arange(design.n_contexts), reps)
    choice = draw_actions(p[ctx], rng.uniform(size=len(ctx)))
    acts = np.array(design.order, dtype=object)
    return pd.DataFrame({"context": ctx, "belief": q[ctx], "action": acts[choice]})
