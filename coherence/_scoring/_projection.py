"""The Brier projection of related forecasts onto coherence (brier_decomposition's).

Each set's forecasts p are replaced by the coherent forecasts q that beat them most
surely under the Brier score, the best guaranteed reduction

    max_q min_w sum_i [(p_i - w_i)^2 - (q_i - w_i)^2]

over the possible worlds w (annulled questions score 0). By the minimax theorem it equals

    min over distributions mu on the worlds of f(mu) = sum_i (t_i - p_i m_i)^2 / m_i,

t_i = mu(question i true), m_i = mu(question i resolves). Without conditional questions
(m = 1) this is the Euclidean projection onto the convex hull of the worlds, computed
exactly face by face. With conditional ones it is solved for all sets at once by the
log-barrier method of :mod:`coherence._simplex`. The gradient of f in mu_w is the
Brier reduction of q(mu) = t / m in world w, and f is homogeneous of degree one in mu,
so at any mu inside the simplex

    min_w gain(q(mu), w) <= optimum <= f(mu) = sum_w mu_w gain(q(mu), w):

the forecasts q(mu) guarantee their worst world's reduction, and the gap between the
two bounds certifies them. On the barrier's central path every world keeps some mass,
so every m_i > 0 and q(mu) is defined without a rule for a question annulled in every
world the optimum weighs (where the optimum's own q is not t / m).
"""

from __future__ import annotations

import itertools

import numpy as np

from .._simplex import barrier_path
from .._simplex import newton_step
from .._simplex import quotient_hessian

__all__ = ["COHERENCE_TOL", "PROJECTION_GAP", "brier_projection", "conditional_projection"]

#: Sets (or forecasts) within this distance of coherence are left as given.
COHERENCE_TOL = 1e-10
#: the barrier method's certificate: its forecasts guarantee a Brier reduction within
#: this of the best one (at most 1.7e-8 measured on 18,000 uniform, heaped and
#: extreme sets of the three conditional checkers; tested)
PROJECTION_GAP = 1e-7
#: barrier weights 1, 10, ..., 1e10: the central path's q is within about
#: n_worlds / weight of the optimum's guarantee
_WEIGHTS = 10.0 ** np.arange(0, 11)
_NEWTON_STEPS = 40  # at most, per weight (a set stops when its decrement is tiny)
_FACE_STEPS = 12     # Newton steps on the face the barrier solution supports
_CHUNK = 4096       # sets solved together


def _subsets(n: int) -> list[np.ndarray]:
    return [np.array(s, dtype=np.int64) for r in range(1, n + 1)
            for s in itertools.combinations(range(n), r)]


def _is_coherent(tw: np.ndarray, rw: np.ndarray, p: np.ndarray, tol: float) -> bool:
    """Whether some distribution mu on the worlds has t_i(mu) = p_i m_i(mu) for every i.

    The constraints are linear in mu, so a solution exists iff one exists on a set of
    linearly independent worlds: each subset's least-squares solution is checked."""
    a = np.vstack([(tw - p * rw).T, np.ones(len(tw))])
    b = np.zeros(a.shape[0])
    b[-1] = 1.0
    for s in _subsets(len(tw)):
        mu = np.linalg.lstsq(a[:, s], b, rcond=None)[0]
        if np.all(mu >= -tol) and np.max(np.abs(a[:, s] @ mu - b)) <= tol:
            return True
    return False


def _hull_projection(tw: np.ndarray, p: np.ndarray) -> np.ndarray:
    """Euclidean projection of p onto the convex hull of the rows of ``tw`` (exact: the
    equality-constrained least squares on every face, the best feasible one kept)."""
    best, best_d = p, np.inf
    for s in _subsets(len(tw)):
        v = tw[s]                                     # (|S|, k)
        n = len(s)
        kkt = np.zeros((n + 1, n + 1))
        kkt[:n, :n] = v @ v.T
        kkt[:n, n] = kkt[n, :n] = 1.0
        rhs = np.concatenate([v @ p, [1.0]])
        mu = np.linalg.lstsq(kkt, rhs, rcond=None)[0][:n]
        if np.any(mu < -1e-12):
            continue
        mu = np.clip(mu, 0.0, None)
        mu = mu / mu.sum()
        q = mu @ v
        d = float(np.sum((q - p) ** 2))
        # a tie (faces giving one q) goes to the first face: within d's round-off, about
        # 1e-16 of |q - p|; a fixed 1e-15 was larger than the whole d of an incoherence of
        # 1e-9 (d ~ 1e-18), which then kept the first face found, a vertex 1e-9 away
        if d < best_d - 1e-15 * np.sqrt(min(best_d, 1.0)):
            best, best_d = q, d
    return np.asarray(best)


def _gains(q: np.ndarray, p: np.ndarray, tw: np.ndarray, rw: np.ndarray) -> np.ndarray:
    """(N, n_worlds): the Brier reduction in each world of moving p to q (N, k), which
    is also f's gradient in mu at q = t / m."""
    d = q - p
    return np.asarray(2.0 * d @ tw.T - (2.0 * d * p + d * d) @ rw.T)


def _barrier_chunk(p: np.ndarray, tw: np.ndarray, rw: np.ndarray,
                   ) -> tuple[np.ndarray, np.ndarray]:
    """The barrier method on the sets ``p`` (N, k), finished by Newton steps on the face
    its solution supports: (q, certified gap)."""
    n_w = len(tw)
    everything = np.arange(len(p))
    mu = np.full((len(p), n_w), 1.0 / n_w)

    def ratios(x: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """q = t / m (p where m = 0: on a face, a question no world of it resolves
        adds nothing) and the weights 2 / m of f's Hessian (0 there)."""
        t, m = x @ tw, x @ rw
        q = np.divide(t, m, out=p[rows].copy(), where=m > 0)
        return q, np.divide(2.0, m, out=np.zeros_like(m), where=m > 0)

    def parts(x: np.ndarray, rows: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        q, curvature = ratios(x, rows)
        return _gains(q, p[rows], tw, rw), quotient_hessian(q, curvature, tw, rw)

    def objective(x: np.ndarray, rows: np.ndarray) -> np.ndarray:
        q = ratios(x, rows)[0]
        return np.asarray(((x @ rw) * (q - p[rows]) ** 2).sum(axis=-1))

    def guaranteed(q: np.ndarray) -> np.ndarray:
        return np.asarray(_gains(q, p, tw, rw).min(axis=1))

    # the central path, each row's best certified point kept: at the largest weights
    # rounding can move a row off the path again
    best, best_gap = mu.copy(), np.full(len(p), np.inf)
    for weight in _WEIGHTS:
        barrier_path(mu, parts, objective, np.array([weight]), _NEWTON_STEPS)
        gap = objective(mu, everything) - guaranteed(ratios(mu, everything)[0])
        better = gap < best_gap
        best[better], best_gap[better] = mu[better], gap[better]
    # Newton steps on the face the best point supports; a question no world of the
    # face resolves keeps the path's q (the limit of t / m along it)
    q_path = ratios(best, everything)[0]
    face = np.where(best < 1e-5 * best.max(axis=1, keepdims=True), 0.0, best)
    face /= face.sum(axis=1, keepdims=True)
    for _ in range(_FACE_STEPS):
        newton_step(face, everything, parts, objective, None)
    m_face = face @ rw
    q_face = np.where(m_face > 0, ratios(face, everything)[0], q_path)
    upper = np.fmin(objective(best, everything), objective(face, everything))
    lower_path, lower_face = guaranteed(q_path), guaranteed(q_face)
    q = np.where((lower_face > lower_path)[:, None], q_face, q_path)
    return q, np.maximum(upper - np.fmax(lower_path, lower_face), 0.0)


def conditional_projection(worlds: np.ndarray, forecasts: np.ndarray,
                           ) -> tuple[np.ndarray, np.ndarray]:
    """The Brier projection of every row of ``forecasts`` (N, k) for worlds with
    conditional questions, by the barrier method, ``_CHUNK`` rows at a time: (q, gap),
    the gap the certified distance of q's guarantee from the best one."""
    tw = (worlds == 1).astype(np.float64)
    rw = (worlds >= 0).astype(np.float64)
    q, gap = np.empty_like(forecasts), np.empty(len(forecasts))
    for start in range(0, len(forecasts), _CHUNK):
        chunk = slice(start, start + _CHUNK)
        q[chunk], gap[chunk] = _barrier_chunk(forecasts[chunk], tw, rw)
    return q, gap


def brier_projection(worlds: np.ndarray, forecasts: np.ndarray, *,
                     tol: float = COHERENCE_TOL) -> np.ndarray:
    r"""The nearest coherent forecasts of each set in the Brier score's geometry.

    ``worlds`` is ``(n_worlds, k)`` (1 true, 0 false, -1 annulled), ``forecasts``
    ``(n_sets, k)``. Returns ``(n_sets, k)``: the forecasts :math:`q` that maximise the
    Brier reduction guaranteed in every world, the dual of minimising
    :math:`\sum_i (t_i(\mu) - p_i m_i(\mu))^2 / m_i(\mu)` over distributions on the
    worlds (:math:`t_i`, :math:`m_i`: the probabilities that question i is true and
    that it resolves). Without conditional questions this is the Euclidean projection
    onto the convex hull of the worlds. A set that is coherent (to ``tol``) is returned
    unchanged, bit for bit.
    """
    worlds = np.asarray(worlds, dtype=np.int64)
    f = np.asarray(forecasts, dtype=np.float64)
    tw = (worlds == 1).astype(np.float64)
    rw = (worlds >= 0).astype(np.float64)
    out = f.copy()
    todo = np.array([not _is_coherent(tw, rw, p, tol) for p in f], dtype=bool)
    if not todo.any():
        return out
    if rw.all():
        projected = np.array([_hull_projection(tw, p) for p in f[todo]])
    else:
        projected = conditional_projection(worlds, f[todo])[0]
    # a mixture of 0/1 worlds lies in [0, 1]; rounding can put it at 1 + 2e-16, which
    # every later use (bins, calibration_error) would refuse or misbin
    out[todo] = np.clip(projected, 0.0, 1.0)
    return out
