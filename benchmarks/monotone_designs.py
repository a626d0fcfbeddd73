"""An independent generator of belief/action studies with known pairwise choice shares.

Written apart from :mod:`coherence._decision._simulate` so that the validation of
:func:`coherence.monotonicity_test` does not rest on the package's own agents. A study
has ``n_contexts`` contexts; context ``c`` has a latent belief ``q_c`` (uniform on
[0, 1]) and repetitions ``r`` state

    p_cr = snap(clip(q_c + belief_sd * eps_cr, 0, 1))            (eps ~ N(0, 1))

(``belief_sd = 0``: the belief is constant within the context; ``grid=None``:
continuous beliefs). Each row picks an action by a softmax of logits

    yes:   2 slope (p - 1/2) - dip * exp(-(p - dip_centre)^2 / (2 dip_width^2)) + u_c,yes
    no:   -2 slope (p - 1/2)                                                  + u_c,no
    defer: defer_logit                                                         + u_c,defer

with context shocks ``u_c ~ N(0, shock_sd^2)`` per action shared by the context's
repetitions, and ``defer_logit = -inf`` for a model that never defers. Given the
shocks, the share of the first action of every pair (yes/no, yes/defer, defer/no)
is a logistic function of a logit difference that is non-decreasing in ``p`` when
``dip = 0`` and ``slope >= 0``: the null of :func:`coherence.monotonicity_test`
holds for every context, hence for every mixture of contexts. With ``slope = 0``
it holds at its least favourable point (flat shares). ``dip > 0`` makes the yes/no
and yes/defer shares fall around ``dip_centre`` (a known non-monotone share, for
power) while defer/no stays monotone; ``step_dip`` lowers the yes logit on a belief
interval (a step down and up). ``heap``/``heap_mass`` heap the beliefs on a few
LLM-like values; ``same_action`` copies a context's first action to its other
repetitions (a deterministic model: the repetitions carry no new information).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from benchmarks._designs import DesignBase
from benchmarks._designs import draw_actions
from benchmarks._designs import draw_rows

__all__ = ["Design", "generate", "true_share"]

ACTIONS = ("yes", "no", "defer")


@dataclass(frozen=True)
class Design(DesignBase):
    """One cell of the validation matrix (see the module docstring)."""

    n_contexts: int = 200
    repetitions: int | tuple[int, int] = 5  # an int, or (low, high) drawn per context
    grid: float | None = 0.05
    belief_sd: float = 0.0
    shock_sd: float = 0.0
    slope: float = 0.0
    defer_logit: float = 0.0  # -inf: never defers
    dip: float = 0.0
    dip_centre: float = 0.5
    dip_width: float = 0.08
    #: heaped (LLM-like) beliefs: a share ``heap_mass`` of the contexts state one of
    #: ``heap``'s values (uniformly), the rest the generator's usual belief
    heap: tuple[float, ...] = ()
    heap_mass: float = 0.0
    #: every repetition of a context takes the same action (a temperature-0 model):
    #: the first repetition's draw is copied to the others
    same_action: bool = False
    #: a step dip: the yes logit lowered by ``step_dip`` for beliefs in ``step_range``
    step_dip: float = 0.0
    step_range: tuple[float, float] = (0.55, 0.70)


def _logits(design: Design, p: np.ndarray) -> np.ndarray:
    bump = design.dip * np.exp(-0.5 * ((p - design.dip_centre) / design.dip_width) ** 2)
    lo, hi = design.step_range
    bump = bump + design.step_dip * ((p >= lo - 1e-9) & (p <= hi + 1e-9))
    return np.stack([2 * design.slope * (p - 0.5) - bump, -2 * design.slope * (p - 0.5),
                     np.full_like(p, design.defer_logit)], axis=-1)


def true_share(design: Design, p: np.ndarray, pair: tuple[str, str]) -> np.ndarray:
    """Share of ``pair[0]`` among the pair at belief ``p`` for a context without shocks."""
    z = _logits(design, np.asarray(p, dtype=np.float64))
    i, j = ACTIONS.index(pair[0]), ACTIONS.index(pair[1])
    with np.errstate(invalid="ignore"):
        return 1.0 / (1.0 + np.exp(z[..., j] - z[..., i]))


def generate(design: Design, seed: int) -> pd.DataFrame:
    """One study: columns context, repetition, belief, action."""
    rng = np.random.default_rng(seed)
    n = design.n_contexts
    reps, context, repetition = draw_rows(design.repetitions, n, rng)
    q = rng.uniform(0.0, 1.0, size=n)
    if design.heap_mass > 0:
        heaped = rng.random(n) < design.heap_mass
        q = np.where(heaped, rng.choice(np.asarray(design.heap, dtype=np.float64), size=n), q)
    p = q[context] + design.belief_sd * rng.standard_normal(len(context))
    p = np.clip(p, 0.0, 1.0)
    if design.grid is not None:
        p = np.clip(np.round(p / design.grid) * design.grid, 0.0, 1.0)
    shocks = design.shock_sd * rng.standard_normal((n, 3))
    z = _logits(design, p) + shocks[context]
    z -= z.max(axis=1, keepdims=True)
    prob = np.exp(z)
    prob /= prob.sum(axis=1, keepdims=True)
    u = rng.random(len(p))
    if design.same_action:
        first_row = np.concatenate([[0], np.cumsum(reps)[:-1]])
        u = u[first_row][context]
    choice = draw_actions(prob, u)
    return pd.DataFrame({"context": context, "repetition": repetition, "belief": p,
                         "action": np.asarray(ACTIONS, dtype=object)[choice]})
