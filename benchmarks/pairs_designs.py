"""An independent generator of conditional-forecasting pair studies with exact truth.

Written without the package (numpy only), so that the validation of
:func:`coherence.conditional_forecasting` does not share code with what it checks.

The null, written down
----------------------
A pair is two binary questions A, B with a true joint: ``pi = P(B = 1)``,
``alpha_1 = P(A = 1 | B = 1)``, ``alpha_0 = P(A = 1 | B = 0)``. The forecaster states
``p = P(A)``, ``q_1 = P(A | B = 1)``, ``q_0 = P(A | B = 0)``. With a, b the resolutions,
the Brier improvement of conditioning on what actually happened to B is

    Delta = (p - a)^2 - (q_b - a)^2 = (p - q_b) (p + q_b - 2 a),

linear in a given b, so ``E[Delta | b] = (p - q_b)(p + q_b - 2 alpha_b)`` and

    E Delta = sum_b pi_b (p - q_b)(p + q_b - 2 alpha_b).

Two estimands: the mean expected improvement ``theta = mean_i E Delta_i`` (over both
resolutions) and, given the resolutions B actually had, ``theta_b = mean_i E[Delta_i | b_i]``
(what a test that holds B's outcomes fixed can see: when B is rare and resolved NO in
every pair, no data speak to what conditioning on B = 1 would have gained).

"No improvement from conditioning" is ``H0: mean_i E Delta_i = 0`` over the study's
pairs, the expectation over the resolutions (a, b) of each pair from its true joint.
It is composite: any joint and any stated p are allowed. Two null forecasters are
simulated, each with ``E Delta_i = 0`` for every pair exactly:

* ``overshoot``: the forecaster has an intended direction of update ``u_b`` (its
  noisy view of ``alpha_b``) and states ``q_b = p + lam (u_b - p)``. The expected
  improvement ``E Delta(lam) = Q lam (lam* - lam)``, ``Q = sum_b pi_b (u_b - p)^2``,
  ``lam* = 2 sum_b pi_b (u_b - p)(alpha_b - p) / Q``, is zero at ``lam = lam*``:
  updating twice the Brier-optimal amount. ``E[Delta | b]`` is not zero, only its
  average over b.
* ``midpoint``: ``q_b = 2 alpha_b - p`` (as far from the truth as p, on the other
  side), so ``E[Delta | b] = 0`` for each b: the null conditional on B's outcome.

In both, a share ``no_update`` of pairs (30%) states ``q_1 = q_0 = p`` (Delta = 0
exactly: the real files' ties).

*Updates that would leave [0, 1] fall back per side of B.* Write
``g_b(q) = (p - q)(p + q - 2 alpha_b) = -(q - p)(q - m_b)``, ``m_b = 2 alpha_b - p``, so
that ``E[Delta | b] = g_b(q_b)`` and ``E Delta = pi g_1(q_1) + (1 - pi) g_0(q_0)``. For
each b, ``g_b`` is a downward parabola in q whose only zeros are ``q = p`` (no update)
and ``q = m_b`` (the midpoint update). A pair whose null update has a side outside
[0, 1] states, on each side b separately, ``q_b = m_b`` if ``m_b`` lies in [0, 1] and
``q_b = p`` otherwise. Both choices are zeros of ``g_b``, so that pair has
``E[Delta | b] = 0`` for b = 0 and b = 1, hence ``E Delta = 0``: the null stays exact
for every pair, and for a fallen-back pair it holds given B's outcome too (an
``overshoot`` pair with both sides inside keeps ``E Delta = 0`` on average over b
only, as above; a ``midpoint`` pair has it given b on both sides). The pair stays
informative on every side whose midpoint is a probability. (Earlier the whole pair
fell back to no update, which left strong-relatedness studies with 0-2 informative
pairs: with rare A, the side with ``alpha_b`` below ``p / 2`` has no null update other
than p, but the other side has one.) The midpoint is the only exact null update on a
side on its own; keeping the overshoot on the inside side would need the outside side
to compensate, which it cannot do from p. ``tests/probability/test_pairs_designs.py``
checks ``E Delta_i = 0`` (and ``E[Delta_i | b] = 0`` for fallen-back and midpoint
pairs) by exact enumeration of the four outcomes (a, b) from the true joint that
:func:`draw_study` returns. Alternatives (``scaled``) keep the whole-pair fallback:
their expected improvement is computed exactly whatever they state.

Alternatives scale the same update by ``r lam*``: expected
improvement ``Q lam*^2 r (1 - r)``, positive for ``0 < r < 1`` (``r = 0.5`` is the
Brier-optimal scale), negative for ``r > 1``; and the ``coherent`` forecaster states
the true ``alpha``, ``alpha_1``, ``alpha_0``, with ``E Delta = pi (1 - pi) (alpha_1 -
alpha_0)^2 > 0`` when A and B are related.

Base rates: ``balanced`` draws P(A) (or P(B)) uniform on [0.3, 0.7]; ``rare`` uniform
on [0.01, 0.05] (the study's file: 1 of 45 A questions resolved YES). Relatedness:
``alpha_1 - alpha_0`` is a share of its feasible range, U(0.5, 0.9) for ``strong``,
U(0.1, 0.3) for ``weak``, 0 for ``none``, with a random sign. The stated P(A) is
the truth with noise on the logit scale (sd 0.5), biased upwards by 0.7 for rare A
(forecasters overstate rare events: the file's rare A questions got 0.05-0.6).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

RATES = {"balanced": (0.3, 0.7), "rare": (0.01, 0.05)}
RELATEDNESS = {"strong": (0.5, 0.9), "weak": (0.1, 0.3), "none": (0.0, 0.0)}
NO_UPDATE = 0.3


@dataclass(frozen=True)
class PairDesign:
    """One cell of the design: base rates, relatedness, forecaster."""

    a_rate: str = "balanced"
    b_rate: str = "balanced"
    related: str = "strong"
    forecaster: str = "overshoot"  # overshoot | midpoint | coherent | scaled
    r: float = 1.0  # scale of the update, in units of lam* (forecaster "scaled")
    no_update: float = NO_UPDATE

    @property
    def is_null(self) -> bool:
        return self.forecaster in ("overshoot", "midpoint") or (
            self.forecaster == "scaled" and self.r == 1.0) or (
            self.forecaster == "coherent" and self.related == "none")

    @property
    def name(self) -> str:
        f = self.forecaster if self.forecaster != "scaled" else f"scaled r={self.r:g}"
        return f"A {self.a_rate}, B {self.b_rate}, {self.related}: {f}"


def _logit(p: np.ndarray) -> np.ndarray:
    return np.log(p / (1 - p))


def _expit(x: np.ndarray) -> np.ndarray:
    return 1 / (1 + np.exp(-x))


def _joint(design: PairDesign, n: int, rng: np.random.Generator):
    lo, hi = RATES[design.a_rate]
    alpha = rng.uniform(lo, hi, n)
    lo, hi = RATES[design.b_rate]
    pi = rng.uniform(lo, hi, n)
    # alpha_1 = alpha + (1 - pi) d, alpha_0 = alpha - pi d, both in [0, 1]
    d_hi = np.minimum((1 - alpha) / (1 - pi), alpha / pi)
    d_lo = np.maximum(-alpha / (1 - pi), -(1 - alpha) / pi)
    lo, hi = RELATEDNESS[design.related]
    share = rng.uniform(lo, hi, n)
    d = np.where(rng.random(n) < 0.5, share * d_hi, share * d_lo)
    return alpha, pi, alpha + (1 - pi) * d, alpha - pi * d


def _null_fallback(p: np.ndarray, q1: np.ndarray, q0: np.ndarray, a1: np.ndarray,
                   a0: np.ndarray, inside: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Per side of B: a pair whose null update leaves [0, 1] states, on each side b, the
    midpoint ``2 alpha_b - p`` where it lies in [0, 1] and ``p`` (no update) where not;
    both give ``E[Delta | b] = 0`` exactly. Pairs with both sides inside keep theirs."""
    m1, m0 = 2 * a1 - p, 2 * a0 - p
    f1 = np.where((m1 >= 0) & (m1 <= 1), m1, p)
    f0 = np.where((m0 >= 0) & (m0 <= 1), m0, p)
    return np.where(inside, q1, f1), np.where(inside, q0, f0)


def draw_study(design: PairDesign, n: int, rng: np.random.Generator) -> dict[str, np.ndarray]:
    """One study of ``n`` pairs: the stated numbers, the resolutions and, per pair, the
    exact expected improvement ``expected`` (``E Delta_i`` under the true joint) and
    ``expected_given_b`` (``E[Delta_i | b_i]``, given the resolution B actually had), and
    the true joint: ``p_b_true`` (pi), ``p_a_true_given_b1``, ``p_a_true_given_b0``."""
    alpha, pi, a1, a0 = _joint(design, n, rng)
    bias = 0.7 if design.a_rate == "rare" else 0.0
    p = _expit(_logit(alpha) + bias + rng.normal(0.0, 0.5, n))
    if design.forecaster == "coherent":
        p, q1, q0 = alpha, a1, a0
    elif design.forecaster == "midpoint":
        q1, q0 = 2 * a1 - p, 2 * a0 - p
    else:
        r = 1.0 if design.forecaster == "overshoot" else design.r
        u1 = _expit(_logit(np.clip(a1, 1e-4, 1 - 1e-4)) + rng.normal(0.0, 0.5, n))
        u0 = _expit(_logit(np.clip(a0, 1e-4, 1 - 1e-4)) + rng.normal(0.0, 0.5, n))
        big_q = pi * (u1 - p) ** 2 + (1 - pi) * (u0 - p) ** 2
        lam_star = 2 * (pi * (u1 - p) * (a1 - p) + (1 - pi) * (u0 - p) * (a0 - p)) / big_q
        q1, q0 = p + r * lam_star * (u1 - p), p + r * lam_star * (u0 - p)
    if design.forecaster != "coherent":
        update = rng.random(n) >= design.no_update
        inside = (q1 >= 0) & (q1 <= 1) & (q0 >= 0) & (q0 <= 1)
        if design.is_null:
            q1, q0 = _null_fallback(p, q1, q0, a1, a0, inside)
        else:  # alternatives: the whole pair falls back (its truth is exact either way)
            update &= inside
        q1, q0 = np.where(update, q1, p), np.where(update, q0, p)
    b = (rng.random(n) < pi).astype(np.int64)
    a = (rng.random(n) < np.where(b == 1, a1, a0)).astype(np.int64)
    expected = pi * (p - q1) * (p + q1 - 2 * a1) + (1 - pi) * (p - q0) * (p + q0 - 2 * a0)
    given_b = np.where(b == 1, (p - q1) * (p + q1 - 2 * a1), (p - q0) * (p + q0 - 2 * a0))
    return {"p_a": p, "p_a_given_b1": q1, "p_a_given_b0": q0, "a_outcome": a,
            "b_outcome": b, "expected": expected, "expected_given_b": given_b,
            "p_b_true": pi, "p_a_true_given_b1": a1, "p_a_true_given_b0": a0}


def improvement(study: dict[str, np.ndarray]) -> np.ndarray:
    """The per-pair Brier improvement (written again here, not imported)."""
    a, b = study["a_outcome"], study["b_outcome"]
    q = np.where(b == 1, study["p_a_given_b1"], study["p_a_given_b0"])
    return (study["p_a"] - a) ** 2 - (q - a) ** 2


def null_designs() -> list[PairDesign]:
    return [PairDesign(ar, br, rel, f) for f in ("overshoot", "midpoint")
            for ar in RATES for br in RATES for rel in RELATEDNESS]


def alternative_designs() -> list[PairDesign]:
    out = [PairDesign(ar, br, rel, "coherent") for ar in RATES for br in RATES
           for rel in ("strong", "weak")]
    out += [PairDesign(ar, "balanced", "strong", "scaled", r) for ar in RATES
            for r in (0.5, 1.5)]
    return out
