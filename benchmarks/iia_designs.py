"""An independent generator of menu studies: choices elicited under several menus per context.

Written apart from the package so that the validation of :func:`coherence.iia_test` does not
rest on code it shares with the test. A study has ``n_contexts`` contexts; context ``c`` has
a belief ``q_c`` (uniform on [0, 1], constant within the context) and is elicited
``per_menu`` times under the full menu and under each menu with one action removed (one row
per elicitation: columns ``context``, ``belief``, ``action``, ``menu``). The agent's
utility of action ``a`` in context ``c`` is

    v_ca = base_a + slope_a * (q_c - 1/2) + shock_sd * eps_ca        (eps ~ N(0, 1))

(context shocks shared by all the context's elicitations). Agents:

* ``"logit"``: multinomial logit on the offered actions, ``P(a | m) ∝ exp(v_ca)``: IIA holds
  in every context (the null of the IIA test);
* ``"odds"``: logit, except that when ``removed`` is not on the menu the weight of
  ``pair[0]`` is multiplied by ``factor``: the odds of ``pair[0]`` over ``pair[1]`` are
  exactly ``factor`` times higher without ``removed`` (a known IIA violation);
* ``"nested"``: nested logit with ``pair[0]`` and ``removed`` in one nest of dissimilarity
  ``lam`` (0 < lam <= 1, 1 is the logit), the other actions alone:
  ``P(a | m) ∝ exp(v_a / lam) * I_N(m) ** (lam - 1)`` for ``a`` in the nest, with
  ``I_N(m) = sum over the nest's offered actions of exp(v / lam)``. Removing ``removed``
  multiplies the odds of ``pair[0]`` over ``pair[1]`` by ``s ** (lam - 1)``, ``s`` the
  within-nest share of ``pair[0]`` (context dependent; :func:`mean_log_odds_ratio` gives
  its average).

The effect size of a comparison (pair ``(a, b)``, menu without ``r`` against the full menu)
is the population Mantel-Haenszel common odds ratio, the limit as contexts grow of
``sum_c R_c / sum_c S_c`` (:func:`population_log_odds_ratio`): ``factor`` (or its inverse)
for the ``"odds"`` agent's comparisons of ``pair[0]`` without ``removed`` and 1 for the
others and for the logit (every context has that odds ratio, :func:`known_log_odds_ratio`);
for the nested logit it depends on how the contexts' odds ratios are weighted, so it is
computed by Monte Carlo over many contexts.

``per_menu`` may be ``(low, high)``: each (context, menu) draws its number of elicitations
uniformly (unequal repetitions); ``drop_menu`` is the chance that a context lacks a given
reduced menu altogether (unbalanced designs).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from benchmarks._designs import DesignBase
from benchmarks._designs import draw_actions
from benchmarks._designs import draw_repetitions

__all__ = ["ACTIONS", "Design", "comparisons", "generate", "known_log_odds_ratio", "menus",
           "mh_test", "population_log_odds_ratio", "probabilities"]

ACTIONS: tuple[str, ...] = ("yes", "no", "defer", "abstain")


@dataclass(frozen=True)
class Design(DesignBase):
    """One cell of the validation matrix (see the module docstring)."""

    n_actions: int = 3
    n_contexts: int = 200
    per_menu: int | tuple[int, int] = 5
    shock_sd: float = 1.0
    base: tuple[float, ...] = (0.0, 0.0, 0.0, 0.0)
    slope: tuple[float, ...] = (2.0, -2.0, 0.0, 0.0)
    agent: str = "logit"  # "logit", "odds" or "nested"
    pair: tuple[str, str] = ("yes", "no")
    removed: str = "defer"
    factor: float = 2.0
    lam: float = 1.0
    drop_menu: float = 0.0

    @property
    def actions(self) -> tuple[str, ...]:
        return ACTIONS[:self.n_actions]


def menus(design: Design) -> list[tuple[str, ...]]:
    """The full menu, then each menu with one action removed."""
    full = design.actions
    return [full] + [tuple(a for a in full if a != r) for r in full]


def probabilities(design: Design, v: np.ndarray, menu: tuple[str, ...]) -> np.ndarray:
    """Choice probabilities over ``design.actions`` (0 off the menu) for utilities ``v``
    of shape ``(n, n_actions)``."""
    acts = design.actions
    on = np.array([a in menu for a in acts])
    if design.agent == "nested":
        lam = design.lam
        nest = np.array([a in (design.pair[0], design.removed) for a in acts])
        scaled = np.where(nest, v / lam, v)
        shift = scaled.max(axis=1, keepdims=True)
        w = np.exp(scaled - shift) * on
        inclusive = (w * nest).sum(axis=1, keepdims=True)
        # exp(v/lam) I^(lam-1) up to the common factor exp(shift * lam) ... computed exactly:
        w = np.where(nest, w * np.where(inclusive > 0, inclusive, 1.0) ** (lam - 1.0)
                     * np.exp(shift * (lam - 1.0)), w)
    else:
        shift = v.max(axis=1, keepdims=True)
        w = np.exp(v - shift) * on
        if design.agent == "odds" and design.removed not in menu:
            w[:, acts.index(design.pair[0])] *= design.factor
    return w / w.sum(axis=1, keepdims=True)


def _utilities(design: Design, rng: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    k = design.n_actions
    q = rng.uniform(0.0, 1.0, design.n_contexts)
    base = np.asarray(design.base[:k])
    slope = np.asarray(design.slope[:k])
    eps = rng.standard_normal((design.n_contexts, k))
    return q, base + slope * (q[:, None] - 0.5) + design.shock_sd * eps


def mean_log_odds_ratio(design: Design, seed: int = 0, n: int = 200_000) -> float:
    """Average over contexts of the log odds ratio of ``pair`` without vs with ``removed``."""
    rng = np.random.default_rng(seed)
    _, v = _utilities(design.with_(n_contexts=n), rng)
    acts = design.actions
    i, j = acts.index(design.pair[0]), acts.index(design.pair[1])
    full = probabilities(design, v, acts)
    red = probabilities(design, v, tuple(a for a in acts if a != design.removed))
    return float(np.mean(np.log(red[:, i] / red[:, j]) - np.log(full[:, i] / full[:, j])))


def generate(design: Design, seed: int) -> pd.DataFrame:
    """One study: columns context, belief, action, menu (one row per elicitation)."""
    rng = np.random.default_rng(seed)
    q, v = _utilities(design, rng)
    acts = np.array(design.actions, dtype=object)
    frames = []
    for j, menu in enumerate(menus(design)):
        p = probabilities(design, v, menu)
        reps = draw_repetitions(design.per_menu, design.n_contexts, rng)
        if j > 0 and design.drop_menu > 0:
            reps = np.where(rng.uniform(size=design.n_contexts) < design.drop_menu, 0, reps)
        ctx = np.repeat(np.arange(design.n_contexts), reps)
        choice = draw_actions(p[ctx], rng.uniform(size=len(ctx)))
        frames.append(pd.DataFrame({"context": ctx, "belief": q[ctx], "action": acts[choice],
                                    "menu": "|".join(sorted(menu))}))
    return pd.concat(frames, ignore_index=True)


def comparisons(design: Design) -> list[tuple[str, str, str]]:
    """Every comparison ``(a, b, removed)`` of the design, named as ``iia_test`` names
    them (``a`` before ``b`` in sorted order): ``f"{a}/{b} without {removed}"``."""
    full = sorted(design.actions)
    return [(a, b, r) for r in full for i, a in enumerate(x for x in full if x != r)
            for b in [x for x in full if x != r][i + 1:]]


def known_log_odds_ratio(design: Design, a: str, b: str, removed: str) -> float:
    """The log odds ratio of ``a`` over ``b`` without ``removed`` against the full menu
    that every context of a logit or ``"odds"`` agent has (so the population
    Mantel-Haenszel one too); NaN for the nested logit (it varies between contexts)."""
    if design.agent == "nested":
        return float("nan")
    if design.agent == "logit" or removed != design.removed or design.pair[0] not in (a, b):
        return 0.0
    return float(np.log(design.factor)) * (1.0 if a == design.pair[0] else -1.0)


def population_log_odds_ratio(design: Design, a: str, b: str, removed: str, *,
                              n: int = 400_000, seed: int = 0) -> float:
    """The log of the population Mantel-Haenszel common odds ratio of ``a`` over ``b``
    without ``removed`` against the full menu: ``sum R_c / sum S_c`` over ``n`` contexts
    drawn as :func:`generate` draws them (the counts of both menus, menus dropped), with
    ``R_c = x (n0 - y) / N`` and ``S_c = (n1 - x) y / N`` (``x`` of the ``n1`` rows of the
    pair under the reduced menu chose ``a``, ``y`` of ``n0`` under the full menu)."""
    rng = np.random.default_rng(seed)
    _, v = _utilities(design.with_(n_contexts=n), rng)
    acts = design.actions
    i, j = acts.index(a), acts.index(b)

    def pair_counts(menu: tuple[str, ...], dropped: bool) -> tuple[np.ndarray, np.ndarray]:
        reps = draw_repetitions(design.per_menu, n, rng)
        if dropped and design.drop_menu > 0:
            reps = np.where(rng.uniform(size=n) < design.drop_menu, 0, reps)
        counts = rng.multinomial(reps, probabilities(design, v, menu))
        return counts[:, i], counts[:, i] + counts[:, j]

    y, n0 = pair_counts(acts, False)
    x, n1 = pair_counts(tuple(act for act in acts if act != removed), True)
    big_n = np.maximum(n0 + n1, 1)
    return float(np.log(np.sum(x * (n0 - y) / big_n) / np.sum((n1 - x) * y / big_n)))


def mh_test(data: pd.DataFrame, pair: tuple[str, str], full: str, reduced: str) -> float:
    """The simple competitor: a stratified (by context) Cochran-Mantel-Haenszel test that the
    odds of ``pair[0]`` over ``pair[1]`` are equal under menus ``full`` and ``reduced``
    (two-sided, no continuity correction, hypergeometric variance). Returns the p-value."""
    from scipy import stats

    d = data[data["menu"].isin([full, reduced]) & data["action"].isin(pair)]
    x = (d["menu"] == reduced) & (d["action"] == pair[0])
    n1 = d["menu"] == reduced
    t = d["action"] == pair[0]
    g = pd.DataFrame({"context": d["context"], "x": x, "n1": n1, "t": t, "n": 1})
    s = g.groupby("context")[["x", "n1", "t", "n"]].sum().to_numpy(dtype=float)
    x, n1, t, n = s.T
    ok = n > 1
    x, n1, t, n = x[ok], n1[ok], t[ok], n[ok]
    u = np.sum(x - n1 * t / n)
    var = np.sum(n1 * (n - n1) * t * (n - t) / (n ** 2 * (n - 1)))
    if var <= 0:
        return float("nan")
    return float(2 * stats.norm.sf(abs(u) / np.sqrt(var)))
