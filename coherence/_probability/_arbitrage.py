"""The arbitrage of one checker's tuples, by the convex dual over the possible worlds.

The arbitrage of forecasts p (the largest log-score profit an arbitrageur can
guarantee in every possible world) equals, by the minimax theorem,

    min over distributions mu on the possible worlds of sum_i m_i KL(t_i / m_i || p_i),

t_i = mu(question i true), m_i = mu(question i resolves): a smooth convex programme on
a simplex of at most six worlds. Two solvers, each returning the profit its forecasts
q = t / m guarantee (a lower bound on the arbitrage) and the dual objective at its
mu (an upper bound), the gap between the two a certificate:

* :func:`barrier_arbitrage`, all tuples at once: a log-barrier interior-point method
  whose Newton steps are solved for every tuple together (numpy's batched solve, in
  :mod:`coherence._simplex`, which the Brier projection shares), for
  forecasts strictly inside (0, 1). It is accepted where its certified gap is below
  ``ACCEPT_GAP`` (relative to the value, absolute below 1) and below ``RELATIVE_GAP``
  of the value;
* :func:`dual_arbitrage`, one tuple: SLSQP (scipy) from several starts with Newton
  polishing on the face it finds; it also handles forecasts of exactly 0 or 1 (a world
  in which a certain forecast is wrong carries no mass), and takes every tuple the
  barrier method did not certify.
"""

from __future__ import annotations

from typing import Any

import numpy as np

from .._simplex import barrier_path
from .._simplex import newton_step
from .._simplex import quotient_hessian

__all__ = ["ACCEPT_GAP", "RELATIVE_GAP", "barrier_arbitrage", "dual_arbitrage", "solve_arbitrage"]

#: a batched solution is kept where upper - lower <= ACCEPT_GAP * max(1, upper): the
#: certificate at which :func:`dual_arbitrage` stops trying further starts
ACCEPT_GAP = 1e-8
#: and where the gap is below this share of the value: a tiny arbitrage (a tuple just off
#: coherence) is not certified as 0 or to one digit
RELATIVE_GAP = 1e-3
#: the barrier weights 1, 10, ..., 1e8: past them the barrier's gradient drowns in
#: rounding, and the face's own Newton steps finish
_WEIGHTS = 10.0 ** np.arange(0, 9)
_NEWTON_STEPS = 30   # at most, per weight (a tuple stops when its decrement is tiny)
_FACE_STEPS = 12     # Newton steps on the face the barrier solution supports
_CHUNK = 4096        # rows solved together (the Newton systems of a chunk: 1.6 MB)


def _dual_objective(mu: np.ndarray, tw: np.ndarray, rw: np.ndarray, logp: np.ndarray,
                    log1p: np.ndarray) -> np.ndarray:
    """sum_i m_i KL(t_i / m_i || p_i) for each row of ``mu`` (..., n_worlds); logp and
    log1p broadcast against (..., k)."""
    from scipy.special import xlogy  # here: importing the checkers loads no scipy

    t = mu @ tw
    m = mu @ rw
    f = xlogy(t, t) + xlogy(m - t, m - t) - xlogy(m, m) - t * logp - (m - t) * log1p
    return np.asarray(f.sum(axis=-1))


def _consistent(mu: np.ndarray, tw: np.ndarray, rw: np.ndarray) -> tuple[np.ndarray, ...]:
    """The forecasts q = t / m that ``mu`` (N, n_worlds) gives (0.5, unused, where a
    question resolves in no world mu weighs), and the weight 1 / (m q (1 - q)) of each
    question in the dual's Hessian (0 where q is 0 or 1: the term is linear there)."""
    t, m = mu @ tw, mu @ rw
    q = np.divide(t, m, out=np.full_like(t, 0.5), where=m > 0)
    spread = m * q * (1.0 - q)
    curvature = np.divide(1.0, spread, out=np.zeros_like(spread), where=spread > 0)
    return q, curvature


def _world_profits(q: np.ndarray, tw: np.ndarray, fw: np.ndarray, logp: np.ndarray,
                   log1p: np.ndarray) -> np.ndarray:
    """(N, n_worlds): the log-score profit in each world of moving p to q, which is
    also the dual objective's gradient in mu at q = t / m. A question that q makes
    certain costs -1e300 in a world that contradicts it (0 in the others)."""
    with np.errstate(divide="ignore"):
        gain_true = np.maximum(np.log(q) - logp, -1e300)
        gain_false = np.maximum(np.log1p(-q) - log1p, -1e300)
    return np.asarray(gain_true @ tw.T + gain_false @ fw.T)


def barrier_arbitrage(f: np.ndarray, worlds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The arbitrage of every row of ``f`` (N, k), forecasts strictly inside (0, 1), by a
    log-barrier interior-point method on the dual, finished by Newton steps on the face
    its solution supports: (value, certified gap), each (N,).

    Every question of ``worlds`` must be true in one world and false in another (each of
    the ten checkers' questions is), so that q = t / m stays inside (0, 1) for mu > 0.
    """
    tw = (worlds == 1).astype(np.float64)
    rw = (worlds >= 0).astype(np.float64)
    fw = rw - tw
    logp, log1p = np.log(f), np.log1p(-f)
    n_w = len(worlds)
    mu = np.full((len(f), n_w), 1.0 / n_w)

    def parts(m_: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        q, curvature = _consistent(m_, tw, rw)
        return (_world_profits(q, tw, fw, logp[rows], log1p[rows]),
                quotient_hessian(q, curvature, tw, rw))

    def objective(x: np.ndarray, rows: np.ndarray) -> np.ndarray:
        return _dual_objective(x, tw, rw, logp[rows], log1p[rows])

    barrier_path(mu, parts, objective, _WEIGHTS, _NEWTON_STEPS)
    barrier_mu = mu.copy()
    # the face: the worlds the barrier solution weighs (at weight 1e8 the others hold
    # about 1e-8 / their reduced cost); a wrong guess only loses the polish, as the
    # bounds of both solutions are kept
    mu[mu < 1e-5 * mu.max(axis=1, keepdims=True)] = 0.0
    mu /= mu.sum(axis=1, keepdims=True)
    everything = np.arange(len(f))
    for _ in range(_FACE_STEPS):
        newton_step(mu, everything, parts, objective, None)
    lower, upper = np.zeros(len(f)), np.full(len(f), np.inf)
    for candidate in (barrier_mu, mu):
        q = np.clip(_consistent(candidate, tw, rw)[0], 1e-300, 1 - 1e-16)
        lower = np.fmax(lower, _world_profits(q, tw, fw, logp, log1p).min(axis=1))
        upper = np.fmin(upper, _dual_objective(candidate, tw, rw, logp, log1p))
    gap = np.maximum(upper - lower, 0.0)
    return lower, np.where(np.isfinite(gap), gap, np.inf)


def dual_arbitrage(p: np.ndarray, worlds: np.ndarray) -> tuple[float, float]:
    """Arbitrage of one tuple by its convex dual: (value, duality gap).

    value = min over distributions mu on the possible worlds of
    sum_i m_i KL(t_i / m_i || p_i), with t_i = mu(question i true) and
    m_i = mu(question i resolves); the arbitrageur's optimal forecasts are
    q_i = t_i / m_i. The reported value is the profit q guarantees (max with the
    zero profit of q = p), a lower bound; the dual objective is an upper bound.
    """
    from scipy.optimize import minimize

    true_ = (worlds == 1).astype(np.float64)
    resolves = (worlds >= 0).astype(np.float64)
    # worlds in which a certain forecast (0 or 1) is wrong carry no mass
    wrong = ((worlds == 1) & (p == 0.0)) | ((worlds == 0) & (p == 1.0))
    allowed = ~wrong.any(axis=1)
    if not allowed.any():
        return np.inf, 0.0
    idx = np.flatnonzero(allowed)
    tw, rw = true_[idx], resolves[idx]
    fw = rw - tw
    logp = np.log(np.where(p > 0, p, 1.0))
    log1p = np.log(np.where(p < 1, 1 - p, 1.0))

    def objective(mu: np.ndarray) -> tuple[float, np.ndarray]:
        t = mu @ tw
        m = mu @ rw
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.clip(np.where(m > 0, t / np.where(m > 0, m, 1.0), p), 1e-300, 1 - 1e-16)
        return (float(_dual_objective(mu, tw, rw, logp, log1p)),
                _world_profits(q[None], tw, fw, logp, log1p)[0])

    n_w = len(idx)
    # starts: the centre, near the forecasts, then (only while the bounds are apart)
    # near each vertex of the simplex
    starts = [np.full(n_w, 1.0 / n_w), _moment_start(p, tw, rw)]
    starts += [0.9 * np.eye(n_w)[w] + 0.1 / n_w for w in range(n_w)]
    lower, upper = 0.0, np.inf
    for k, start in enumerate(starts):
        if k >= 2 and upper - lower <= 1e-8 * max(1.0, upper):
            break
        res = minimize(objective, start, jac=True, method="SLSQP",
                       bounds=[(0.0, 1.0)] * n_w,
                       constraints=[{"type": "eq", "fun": lambda mu: mu.sum() - 1.0,
                                     "jac": lambda mu: np.ones_like(mu)}],
                       options={"ftol": 1e-15, "maxiter": 1000})
        mu = _newton_polish(np.clip(res.x, 0.0, None) / np.clip(res.x, 0.0, None).sum(),
                            objective, tw, rw, p)
        # back on the simplex: the polish's least-squares steps can drift off it, and the
        # dual objective, linear in mu's scale, would then understate the upper bound
        mu = np.clip(mu, 0.0, None) / np.clip(mu, 0.0, None).sum()
        t, m = mu @ tw, mu @ rw
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.where(m > 1e-300, t / np.where(m > 1e-300, m, 1.0), p)
        q = np.where(p == 0.0, 0.0, np.where(p == 1.0, 1.0, np.clip(q, 1e-300, 1 - 1e-16)))
        # a world in which a certain forecast is wrong does not bind: the
        # forecaster's score there is -inf, and q may move off the certainty
        lower = max(lower, float(np.min(_world_profits(q[None], tw, fw, logp, log1p))))
        upper = min(upper, objective(mu)[0])
    return lower, max(upper - lower, 0.0)


def _newton_polish(mu: np.ndarray, objective: Any, tw: np.ndarray, rw: np.ndarray,
                   p: np.ndarray, steps: int = 30) -> np.ndarray:
    """Newton steps for the dual on the face of the simplex that ``mu`` supports.

    The Hessian of the dual objective is G diag(q (1 - q) / m) G^T, G the
    per-world derivative of the log score in q; the equality-constrained Newton
    system is solved by least squares (the Hessian can be singular), with
    step halving that keeps ``mu`` on the face and never increases the objective.
    It is kept apart from the batched face steps of :func:`barrier_arbitrage`, which
    take the tuples SLSQP is for: on CondCond (1 - 1e-8, 1 - 1e-8, 1 - 1e-16, 1e-300),
    after SLSQP, it certifies the arbitrage 17.73 to a gap of 4e-13, where the batched
    steps (their Hessian's weights 1 / (m q (1 - q)) overflow) leave a gap of 17.7.
    """
    support = mu > 1e-12
    value = objective(mu)[0]
    for _ in range(steps):
        s = np.flatnonzero(support)
        if len(s) < 2:
            break
        t, m = mu @ tw, mu @ rw
        with np.errstate(divide="ignore", invalid="ignore"):
            q = np.where(m > 0, t / np.where(m > 0, m, 1.0), p)
        if np.any((q <= 0) | (q >= 1)):
            break
        g = tw / q - (rw - tw) / (1 - q)              # (n_worlds, k)
        hess = (g[s] * (q * (1 - q) / np.where(m > 0, m, 1.0))) @ g[s].T
        grad = objective(mu)[1][s]
        kkt = np.block([[hess, np.ones((len(s), 1))], [np.ones((1, len(s))), np.zeros((1, 1))]])
        step = np.linalg.lstsq(kkt, np.concatenate([-grad, [0.0]]), rcond=None)[0][:len(s)]
        alpha = 1.0
        neg = step < 0
        if neg.any():
            alpha = min(1.0, 0.999 * float(np.min(-mu[s][neg] / step[neg])))
        improved = False
        while alpha > 1e-12:
            trial = mu.copy()
            trial[s] = mu[s] + alpha * step
            trial_value = objective(trial)[0]
            if trial_value <= value:
                improved = trial_value < value
                mu, value = trial, trial_value
                break
            alpha /= 2
        if not improved:
            break
    return mu


def _moment_start(p: np.ndarray, tw: np.ndarray, rw: np.ndarray) -> np.ndarray:
    """A start near the forecasts: the least-squares distribution whose implied
    unconditional probabilities match p, projected onto the simplex."""
    uncond = rw.all(axis=0)
    a = np.vstack([tw[:, uncond].T, np.ones(len(tw))])
    b = np.concatenate([p[uncond], [1.0]])
    mu = np.linalg.lstsq(a, b, rcond=None)[0]
    mu = np.clip(mu, 1e-3, None)
    return np.asarray(mu / mu.sum())


def solve_arbitrage(f: np.ndarray, worlds: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The arbitrage of every row of ``f`` (N, k) and its certified gap, each (N,): the
    batched barrier method for the rows strictly inside (0, 1), ``_CHUNK`` rows at a time,
    and SLSQP for rows with a forecast of 0 or 1 and for those the barrier method does
    not certify (a gap above ``ACCEPT_GAP`` or ``RELATIVE_GAP``), keeping the tighter of
    the two solvers' bounds on each side."""
    value, gap = np.zeros(len(f)), np.zeros(len(f))
    inside: np.ndarray = np.asarray(((f > 0.0) & (f < 1.0)).all(axis=1))
    rows = np.flatnonzero(inside)
    for start in range(0, len(rows), _CHUNK):
        chunk = rows[start:start + _CHUNK]
        value[chunk], gap[chunk] = barrier_arbitrage(f[chunk], worlds)
    certified = inside & (gap <= ACCEPT_GAP * np.maximum(1.0, value + gap)) & (
        gap <= RELATIVE_GAP * value)
    for r in np.flatnonzero(~certified):
        lower, width = dual_arbitrage(f[r], worlds)
        if inside[r]:  # both bounds of each solver hold: keep the tighter ones
            upper = min(value[r] + gap[r], lower + width)
            lower = max(value[r], lower)
            width = max(upper - lower, 0.0)
        value[r], gap[r] = lower, width
    return value, gap
