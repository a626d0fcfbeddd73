"""Batched Newton steps on the probability simplex, for convex programmes over mu.

The consistency checkers' arbitrage (:mod:`coherence._probability._arbitrage`) and the
Brier projection of :func:`coherence.brier_decomposition`
(:mod:`coherence._scoring._projection`) each minimise, for every row of a table, a
convex function of a distribution mu on at most six possible worlds whose terms are
functions of t_i = mu(question i true) and m_i = mu(question i resolves). Both do it by
a log-barrier interior-point method whose Newton steps are solved for every row
together (numpy's batched solve); this module is that method, given each programme's
objective, gradient and Hessian.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

__all__ = ["Objective", "Parts", "barrier_path", "line_search", "newton_step",
           "quotient_hessian", "simplex_newton"]

#: ``objective(x, rows)``: the objective at x (len(rows), n_worlds) for those rows
Objective = Callable[[np.ndarray, np.ndarray], np.ndarray]
#: ``parts(mu, rows)``: the gradient (len(rows), n_worlds) and the Hessian
#: (len(rows), n_worlds, n_worlds) at mu for those rows
Parts = Callable[[np.ndarray, np.ndarray], tuple[np.ndarray, np.ndarray]]

_STEP_HALVINGS = 30  # candidate step lengths of the batched backtracking line search
_DECREMENT = 1e-10   # a row stops its Newton steps at a weight below this decrement


def quotient_hessian(q: np.ndarray, curvature: np.ndarray, tw: np.ndarray, rw: np.ndarray,
                     ) -> np.ndarray:
    """sum_i curvature_i g_i g_i^T with g_i = tw[:, i] - q_i rw[:, i], (N, n_worlds,
    n_worlds): the Hessian in mu of a sum of terms m_i h(t_i / m_i), curvature_i being
    h''(q_i) / m_i (q = t / m)."""
    g = tw[None, :, :] - q[:, None, :] * rw[None, :, :]
    return np.asarray(np.einsum("nwk,nk,nvk->nwv", g, curvature, g))


def simplex_newton(hess: np.ndarray, grad: np.ndarray, scale: np.ndarray, face: bool,
                   ) -> np.ndarray:
    """The Newton step on the simplex (steps summing to 0), for each row, solved in the
    variables step / scale (the barrier's mu: its Hessian's diagonal 1 / mu^2 becomes
    1): on a ``face`` by the pseudo-inverse, as a Hessian of fewer questions than worlds
    is singular there; for the barrier by an LU solve (the pseudo-inverse if a system
    is singular after all)."""
    n, n_w = grad.shape
    kkt = np.zeros((n, n_w + 1, n_w + 1))
    kkt[:, :n_w, :n_w] = scale[:, :, None] * hess * scale[:, None, :]
    kkt[:, :n_w, n_w] = scale
    kkt[:, n_w, :n_w] = scale
    rhs = np.concatenate([-grad * scale, np.zeros((n, 1))], axis=1)
    if not face:  # scaled by mu, the barrier's system is far from singular
        try:
            return np.asarray(scale * np.linalg.solve(kkt, rhs[:, :, None])[:, :n_w, 0])
        except np.linalg.LinAlgError:
            pass
    return np.asarray(scale * np.einsum("nij,nj->ni", np.linalg.pinv(kkt), rhs)[:, :n_w])


def line_search(mu: np.ndarray, step: np.ndarray, objective: Objective, slope: np.ndarray,
                ) -> np.ndarray:
    """The longest of the halved steps (from 99% of the way to the simplex's boundary)
    that keeps mu > 0 (where it is) and meets Armijo's rule; no step where none does.
    ``objective(x, rows)`` is the objective at x (len(rows), n_worlds) for those rows."""
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        room = np.where(step < 0, -mu / step, np.inf).min(axis=1)
    alpha = np.minimum(1.0, 0.99 * room)
    now = objective(mu, np.arange(len(mu)))
    taken = np.zeros(len(mu))
    left = np.arange(len(mu))
    for _ in range(_STEP_HALVINGS):
        trial = np.maximum(mu[left] + alpha[left, None] * step[left], 0.0)
        ok = ((trial > 0) | (mu[left] == 0)).all(axis=1)
        value = objective(np.where(ok[:, None], trial, mu[left]), left)
        ok &= value <= now[left] + 0.25 * alpha[left] * slope[left]
        taken[left[ok]] = alpha[left[ok]]
        left = left[~ok]
        if not len(left):
            break
        alpha[left] /= 2
    new = np.maximum(mu + taken[:, None] * step, 0.0)
    return np.asarray(new / new.sum(axis=1, keepdims=True))


def newton_step(mu: np.ndarray, rows: np.ndarray, parts: Parts, objective: Objective,
                weight: float | None) -> np.ndarray:
    """One damped Newton step for ``rows`` of ``mu`` (updated in place): of the barrier
    problem ``weight * objective - sum(log mu)``, or (None) of the objective on the face
    mu supports (the worlds off it stay at 0). Returns each row's Newton decrement; a
    row whose step does not solve (extreme inputs) stays, with decrement 0."""
    m_ = mu[rows]
    grad, hess = parts(m_, rows)
    if weight is None:
        scale = (m_ > 0).astype(np.float64)
    else:
        n_w = m_.shape[1]
        grad = weight * grad - 1.0 / m_
        hess = weight * hess
        hess[:, np.arange(n_w), np.arange(n_w)] += 1.0 / m_ ** 2
        scale = m_
    with np.errstate(all="ignore"):
        step = simplex_newton(hess, grad, scale, weight is None)
        slope = np.einsum("nw,nw->n", grad, step)
    unsolved = ~(np.isfinite(step).all(axis=1) & np.isfinite(slope))
    step[unsolved], slope[unsolved] = 0.0, 0.0

    def penalised(x: np.ndarray, at: np.ndarray) -> np.ndarray:
        value = objective(x, rows[at])
        if weight is None:
            return value
        with np.errstate(divide="ignore"):
            return np.asarray(weight * value - np.log(x).sum(axis=-1))

    mu[rows] = line_search(m_, step, penalised, slope)
    return np.asarray(-slope)


def barrier_path(mu: np.ndarray, parts: Parts, objective: Objective, weights: np.ndarray,
                 steps: int) -> None:
    """Follow the barrier's central path for every row of ``mu`` (N, n_worlds, inside the
    simplex; updated in place): at each weight in turn, at most ``steps`` Newton steps,
    a row stopping when its decrement is tiny."""
    for weight in weights:
        active = np.arange(len(mu))
        for _ in range(steps):
            active = active[newton_step(mu, active, parts, objective, float(weight))
                            > _DECREMENT]
            if not len(active):
                break
