"""Brute-force reference of the consistency checkers' arbitrage (Paleka et al. 2025).

The arbitrage of forecasts ``p`` is the best log-score profit an arbitrageur can
guarantee in every possible world by announcing consistent forecasts ``q``. Every
consistent ``q`` is the vector of (conditional) probabilities of the questions under
some distribution ``mu`` over the possible worlds, so the reference searches grids of
such distributions:

* the **lower bound** is the best worst-case profit, over the grid, of the forecasts
  ``q(mu)`` (each is a strategy the arbitrageur can play);
* the **upper bound** is the smallest, over the grid, of the best expected profit
  against ``mu``, ``sum_i m_i KL(t_i / m_i || p_i)`` (weak duality).

Each bound is searched on a grid of the simplex, then on grids zoomed around the
best point found so far (the region where the worst-case profit is positive can be
narrower than a coarse grid's step). Nothing here is shared with the implementation:
profits are summed world by world and question by question.
"""

from __future__ import annotations

import itertools

import numpy as np


def _box_grid(center: np.ndarray, radius: float, per_axis: int) -> np.ndarray:
    """Distributions whose first n-1 weights lie on a grid of the box center +- radius."""
    axes = [np.linspace(c - radius, c + radius, per_axis) for c in center[:-1]]
    pts = np.array(list(itertools.product(*axes)))
    last = 1.0 - pts.sum(axis=1, keepdims=True)
    mu = np.hstack([pts, last])
    return mu[(mu >= 0.0).all(axis=1)]


def _implied(mu: np.ndarray, worlds: list[tuple], n_questions: int):
    """(t, m): per grid point, the probability each question is true / resolves."""
    t = np.zeros((len(mu), n_questions))
    m = np.zeros((len(mu), n_questions))
    for w, world in enumerate(worlds):
        for i, outcome in enumerate(world):
            if outcome is not None:
                m[:, i] += mu[:, w]
                if outcome == 1:
                    t[:, i] += mu[:, w]
    return t, m


def _worst_profit(mu: np.ndarray, p: np.ndarray, worlds: list[tuple]) -> np.ndarray:
    t, m = _implied(mu, worlds, len(p))
    with np.errstate(divide="ignore", invalid="ignore"):
        q = np.where(m > 0, t / m, p)
    usable = ((q > 0) & (q < 1)).all(axis=1)
    q = np.where(usable[:, None], q, 0.5)  # unusable points are discarded below
    worst = np.full(len(mu), np.inf)
    for world in worlds:
        profit = np.zeros(len(mu))
        for i, outcome in enumerate(world):
            if outcome == 1:
                profit += np.log(q[:, i]) - np.log(p[i])
            elif outcome == 0:
                profit += np.log(1 - q[:, i]) - np.log(1 - p[i])
        worst = np.minimum(worst, profit)
    return np.where(usable, worst, -np.inf)


def _dual_value(mu: np.ndarray, p: np.ndarray, worlds: list[tuple]) -> np.ndarray:
    t, m = _implied(mu, worlds, len(p))
    f = m - t
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(t > 0, t * np.log(t / (m * p)), 0.0)
        b = np.where(f > 0, f * np.log(f / (m * (1 - p))), 0.0)
    return (a + b).sum(axis=1)


def _search(score, n_worlds: int, per_axis: int, zooms: int,
            shrink: float) -> tuple[float, np.ndarray]:
    center = np.full(n_worlds, 1.0 / n_worlds)
    radius = 0.5
    best = -np.inf
    for _ in range(zooms + 1):
        mu = _box_grid(center, radius, per_axis)
        values = score(mu)
        j = int(np.argmax(values))
        if values[j] > best:
            best, center = float(values[j]), mu[j]
        radius *= shrink
    return best, center


def brute_force_bounds(p, worlds: list[tuple], per_axis: int = 21, zooms: int = 20,
                       shrink: float = 0.6) -> tuple[float, float]:
    """(lower, upper) bounds on the arbitrage of forecasts p strictly inside (0, 1).

    Each zoom keeps the best point and shrinks the box by ``shrink``."""
    p = np.asarray(p, dtype=np.float64)
    n = len(worlds)
    dual_best, dual_mu = _search(lambda mu: -_dual_value(mu, p, worlds), n, per_axis, zooms,
                                 shrink)
    upper = -dual_best
    primal_best, _ = _search(lambda mu: _worst_profit(mu, p, worlds), n, per_axis, zooms,
                             shrink)
    # the forecasts implied by the best dual point are a strategy too (at the saddle
    # point they are the optimal one)
    at_dual = float(_worst_profit(dual_mu[None, :], p, worlds)[0])
    lower = max(0.0, primal_best, at_dual)
    return lower, upper
