"""An independent generator of belief/action studies with exact I(action; outcome | belief).

Written apart from :mod:`coherence._decision._simulate` so that the validation of
:func:`coherence.ci_test` does not rest on the package's own agents. A study has
``n_contexts`` contexts; context ``c`` has a true posterior ``q_c`` and one outcome
``y_c ~ Bernoulli(q_c)`` shared by its repetitions. Repetition ``r`` states

    p_cr = snap(clip(q_c + belief_sd * eps_cr, 0, 1))           (eps ~ N(0, 1))

(``belief_sd = 0``: the belief is constant within the context) and acts by a
softmax of expected losses under the stated belief, with a context-level shock
``u_c ~ N(0, shock_sd^2)`` per action shared by the context's repetitions
(independent of the outcome), an optional probability weighting ``w`` and, for
alternatives, a leak ``leak * (2 y_c - 1)`` added to the first action's logit:

    P(a_cr = j) = softmax_j(-L_j(w(p_cr)) / temperature + u_cj + leak (2 y_c - 1) [j = 0]).

Under ``leak = 0`` the action depends on the outcome only through the stated
belief of its own row, so ``action _||_ outcome | belief`` holds exactly, at the
row level, whatever the shocks, the repetitions or the within-context variation.

Evidence (optional, discrete with ``evidence_levels`` levels, constant within a
context or drawn per row) shifts the belief and the loss of the first action:
nominal effects (odd levels raise the outcome's base rate and the first action's
loss), so a model that treats the codes as ordered numbers is wrong.

The exact CMI is computed for designs whose belief is constant within a context
(``belief_sd = 0``): the joint of (belief, outcome, action) of one row drawn at
random, with the shocks integrated by Gauss-Hermite quadrature and continuous
beliefs by Gauss-Legendre quadrature. With ``leak = 0`` it is 0 for every design.
"""

from __future__ import annotations

import itertools
import math
from dataclasses import dataclass
from dataclasses import field

import numpy as np
import pandas as pd
from scipy import special
from scipy import stats

from benchmarks._designs import ACTIONS
from benchmarks._designs import DesignBase
from benchmarks._designs import draw_leaky_actions
from benchmarks._designs import draw_rows
from benchmarks._designs import snap

__all__ = ["Design", "exact_cmi", "generate"]

# losses of up to four actions (ACTIONS) as functions of the (weighted) belief w:
# yes = (1 - w), no = w, defer = 0.35, refer = 0.2 + 0.4 w (1 - w) ... scaled by loss_scale


def _losses(w: np.ndarray, n_actions: int, evidence_shift: np.ndarray | float = 0.0) -> np.ndarray:
    w = np.asarray(w, dtype=np.float64)
    cols = [(1.0 - w) * (1.0 + evidence_shift), w, np.full_like(w, 0.35),
            0.2 + 0.4 * w * (1.0 - w)]
    return np.stack(cols[:n_actions], axis=-1)


@dataclass(frozen=True)
class Design(DesignBase):
    """One cell of the validation matrix (see the module docstring)."""

    name: str = "reference"
    n_contexts: int = 200
    repetitions: int | tuple[int, int] = 5  # an int, or (low, high) drawn per context
    grid: float | None = 0.05
    belief_sd: float = 0.0
    shock_sd: float = 0.0
    n_actions: int = 3
    base_rate: str = "uniform"  # or "rare": q ~ Beta(0.5, 5)
    weighting: float | None = None  # Prelec alpha of w(p) = exp(-(-ln p)^alpha)
    temperature: float = 0.15
    leak: float = 0.0
    evidence_levels: int = 0
    evidence_within: bool = False  # True: evidence drawn per row, else per context
    evidence_effects: str = "odd-even"  # or "per-level": a distinct effect for each level
    tags: tuple[str, ...] = field(default=())


def _weight(p: np.ndarray, alpha: float | None) -> np.ndarray:
    if alpha is None:
        return p
    with np.errstate(divide="ignore"):
        out = np.exp(-((-np.log(np.clip(p, 1e-300, 1.0))) ** alpha))
    return np.where(p <= 0.0, 0.0, out)


def _draw_q(design: Design, size: int, rng: np.random.Generator) -> np.ndarray:
    if design.base_rate == "rare":
        q = rng.beta(0.5, 5.0, size=size)
    else:
        q = rng.uniform(0.0, 1.0, size=size)
    return snap(q, design.grid)


def _evidence_effects(levels: np.ndarray, kind: str = "odd-even"
                      ) -> tuple[np.ndarray, np.ndarray]:
    """Nominal effects of an evidence level: (shift of the logit of q, loss shift).

    ``'odd-even'``: two effects (odd levels against even ones). ``'per-level'``: a
    distinct effect for each level, spread over [-1.2, 1.2] on the logit and [0, 1]
    on the loss (a fixed function of the level code)."""
    if kind == "per-level":
        lv = levels.astype(np.float64)
        return 1.2 * np.sin(2.4 * lv + 0.3), 0.5 + 0.5 * np.cos(1.7 * lv)
    odd = (levels % 2 == 1).astype(np.float64)
    return 0.8 * odd - 0.4, 1.0 * odd


def generate(design: Design, seed: int) -> pd.DataFrame:
    """One study of ``design`` from ``seed``: context, repetition, belief, action, outcome."""
    rng = np.random.default_rng(seed)
    g = design.n_contexts
    reps, ctx, rep = draw_rows(design.repetitions, g, rng)
    n = int(reps.sum())
    q = _draw_q(design, g, rng)
    if design.evidence_levels:
        if design.evidence_within:
            ev = rng.integers(0, design.evidence_levels, size=n)
        else:
            ev = np.repeat(rng.integers(0, design.evidence_levels, size=g), reps)
        shift, loss_shift = _evidence_effects(ev, design.evidence_effects)
    else:
        ev = None
        shift = np.zeros(n)
        loss_shift = np.zeros(n)
    if design.evidence_levels and design.evidence_within:
        # the row's evidence informs about the outcome: the posterior the row states
        # is q moved by the evidence's nominal effect; the outcome follows the
        # context's q (no row's evidence causes it), so the null holds given (p, e)
        q_row = special.expit(special.logit(np.clip(q[ctx], 1e-6, 1 - 1e-6)) + shift)
        q_row = snap(q_row, design.grid)
        outcome = rng.random(g) < q
        truth = q_row
    else:
        if design.evidence_levels:
            qc = special.expit(special.logit(np.clip(q, 1e-6, 1 - 1e-6))
                               + _evidence_effects(ev[np.r_[0, np.cumsum(reps)[:-1]]],
                                                   design.evidence_effects)[0])
            q = snap(qc, design.grid)
        outcome = rng.random(g) < q
        q_row = q[ctx]
        truth = q_row
    belief = snap(q_row + design.belief_sd * rng.standard_normal(n), design.grid)
    w = _weight(belief, design.weighting)
    logits = -_losses(w, design.n_actions, loss_shift) / design.temperature
    action = draw_leaky_actions(logits, outcome, ctx, shock_sd=design.shock_sd,
                                leak=design.leak, rng=rng)
    data = pd.DataFrame({
        "context": ctx, "repetition": rep, "belief": belief,
        "action": np.asarray(ACTIONS)[action], "outcome": outcome[ctx].astype(np.int64),
        "truth": truth,
    })
    if ev is not None:
        data["evidence"] = ev.astype(np.int64)
    return data


def _action_probs(w: np.ndarray, design: Design, y: int, loss_shift: float,
                  nodes: np.ndarray, weights: np.ndarray) -> np.ndarray:
    """P(a | belief, y) with the shock integrated: shape (len(w), n_actions)."""
    base = -_losses(w, design.n_actions, loss_shift) / design.temperature
    if design.leak:
        base = base.copy()
        base[:, 0] += design.leak * (2.0 * y - 1.0)
    if not design.shock_sd:
        return special.softmax(base, axis=1)
    out = np.zeros_like(base)
    m = design.n_actions
    for idx in itertools.product(range(len(nodes)), repeat=m):
        shock = design.shock_sd * nodes[list(idx)]
        wt = float(np.prod(weights[list(idx)]))
        out += wt * special.softmax(base + shock, axis=1)
    return out


def exact_cmi(design: Design, n_quad: int = 400) -> float:
    """Exact I(action; outcome | belief [, evidence]) in nats of one row.

    Requires a belief constant within a context (``belief_sd = 0``) and no
    evidence drawn per row.
    """
    if design.belief_sd:
        raise ValueError("exact_cmi needs belief_sd = 0")
    if design.evidence_levels and design.evidence_within:
        raise ValueError("exact_cmi needs evidence constant within a context")
    if design.leak == 0.0:
        return 0.0
    gh_x, gh_w = np.polynomial.hermite_e.hermegauss(6 if design.n_actions <= 3 else 5)
    gh_w = gh_w / gh_w.sum()
    # belief values and their probabilities (q on a grid, or quadrature nodes)
    if design.grid is not None:
        values = np.round(np.arange(0.0, 1.0 + 1e-9, design.grid), 12)
        edges = np.clip(np.concatenate([[-np.inf], (values[:-1] + values[1:]) / 2, [np.inf]]),
                        0.0, 1.0)
        if design.base_rate == "rare":
            mass = np.diff(stats.beta(0.5, 5.0).cdf(edges))
        else:
            mass = np.diff(edges)
        keep = mass > 0
        values, mass = values[keep], mass[keep]
    else:
        x, wq = np.polynomial.legendre.leggauss(n_quad)
        values = (x + 1.0) / 2.0
        if design.base_rate == "rare":
            mass = wq / 2.0 * stats.beta(0.5, 5.0).pdf(values)
        else:
            mass = wq / 2.0
        mass = mass / mass.sum()
    levels = range(design.evidence_levels) if design.evidence_levels else [None]
    total = 0.0
    for level in levels:
        p_level = 1.0 / design.evidence_levels if design.evidence_levels else 1.0
        if level is None:
            q, w_mass, loss_shift = values, mass, 0.0
        else:
            shift, loss_shift_arr = _evidence_effects(np.array([level]), design.evidence_effects)
            q_raw = special.expit(special.logit(np.clip(values, 1e-6, 1 - 1e-6)) + shift[0])
            q = snap(q_raw, design.grid)
            w_mass = mass
            loss_shift = float(loss_shift_arr[0])
            if design.grid is not None:  # snapped values can collide: merge their masses
                uq, inv = np.unique(q, return_inverse=True)
                w_mass = np.bincount(inv, weights=mass)
                q = uq
        w = _weight(q, design.weighting)
        pa1 = _action_probs(w, design, 1, loss_shift, gh_x, gh_w)
        pa0 = _action_probs(w, design, 0, loss_shift, gh_x, gh_w)
        pa = q[:, None] * pa1 + (1 - q[:, None]) * pa0
        with np.errstate(divide="ignore", invalid="ignore"):
            t1 = np.where(pa1 > 0, pa1 * np.log(pa1 / pa), 0.0).sum(axis=1)
            t0 = np.where(pa0 > 0, pa0 * np.log(pa0 / pa), 0.0).sum(axis=1)
        total += p_level * float(np.sum(w_mass * (q * t1 + (1 - q) * t0)))
    return total


def leak_for(design: Design, target: float) -> float:
    """The leak whose exact CMI equals ``target`` nats (bisection)."""
    lo, hi = 0.0, 8.0
    for _ in range(60):
        mid = (lo + hi) / 2.0
        if exact_cmi(design.with_(leak=mid)) < target:
            lo = mid
        else:
            hi = mid
    return (lo + hi) / 2.0


if __name__ == "__main__":  # a quick look
    d = Design()
    print(generate(d, 0).head())
    for leak in (0.5, 1.0, 2.0):
        print(leak, exact_cmi(d.with_(leak=leak)), exact_cmi(d.with_(leak=leak, grid=None)))
    print(math.nan)
