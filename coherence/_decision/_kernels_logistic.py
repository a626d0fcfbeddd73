"""Numba kernels of the leakage test's penalised logistic refits: a Newton solver on
class counts, its chord variant, and a replay of scikit-learn's Newton-Cholesky solver.

**The replay is a bet on scikit-learn's internals.** :func:`sklearn_newton` repeats
the iterations of ``LogisticRegression(solver="newton-cholesky")`` (its starting
point, line search and stopping rule) so that the permutations near the observed
statistic are decided on the same numbers scikit-learn would give. A release of
scikit-learn that changes that solver would make the replay disagree. Two guards
stand behind it: :data:`SKLEARN_REPLAY_TESTED` names the scikit-learn releases the
replay was checked against, and :func:`replay_matches_installed` (run once, when
``_leakage_null`` first needs it) turns the replay off for any other release; and on
every call the replay must reproduce scikit-learn's observed statistic to
``REPLAY_CHECK`` before any replayed number is used (``_leakage_null``). A replay that
is off costs speed, never a wrong p-value: scikit-learn itself refits.

Arrays in, arrays out; the public layer in ``_leakage.py`` validates once
(its permutation null in ``_leakage_null.py`` calls these).
"""

from __future__ import annotations

from functools import cache

import numpy as np
from numba import njit
from numba import prange

__all__ = [
    "SKLEARN_REPLAY_TESTED",
    "logistic_null",
    "newton_counts",
    "newton_counts_chord",
    "newton_counts_chord_sparse",
    "newton_counts_sparse",
    "newton_logistic",
    "replay_matches_installed",
    "sklearn_newton",
    "sklearn_newton_sparse",
]

#: scikit-learn releases (major, minor) whose Newton-Cholesky solver
#: :func:`sklearn_newton` was checked to replay (``tests/decision/test_logistic.py``).
SKLEARN_REPLAY_TESTED = ((1, 9),)


@cache
def replay_matches_installed() -> bool:
    """True when the installed scikit-learn is a release the replay was checked against."""
    from importlib import metadata

    try:
        parts = metadata.version("scikit-learn").split(".")
        release = (int(parts[0]), int(parts[1]))
    except (metadata.PackageNotFoundError, ValueError, IndexError):
        return False
    return release in SKLEARN_REPLAY_TESTED

# The leakage test's refits fit the L2-penalised multinomial logistic model on *counts*:
# row ``i`` of the design ``xt`` (features, then a column of ones) stands for ``cnt[i, k]``
# observations of class ``k``. Identical design rows of the training data are merged
# into one row with their class counts (the objective is the same sum of the same terms),
# which is what makes the permutation refits cheap: a belief-only design of 800 training
# rows and 21 distinct beliefs has at most 42 distinct (belief, outcome) rows.
#
# Rows are read *sparsely*: ``nzi[i, :nnz[i]]`` lists the columns where row ``i`` may be
# non-zero (ascending; the others are exact zeros and are never read), and the Hessian is
# factored in the *elimination order* ``pos`` (parameter ``q * dt + j`` is eliminated at
# position ``pos[q * dt + j]``) by an envelope (profile) Cholesky, which skips the zeros
# before each row's first non-zero. A one-hot evidence column with many levels, and its
# products with the belief splines, makes a design that is mostly zeros, whose Hessian is
# an "arrowhead" (one block per level, linked only through the shared columns): with the
# level blocks first and the shared columns last, the factor has no fill-in and costs a
# few per cent of the dense one. Skipping exact zeros changes no sum (``x + 0 * t = x``),
# and any order gives the same factorisation up to rounding. The dense entry points
# (:func:`newton_counts`, :func:`newton_counts_chord`, :func:`sklearn_newton`,
# :func:`newton_logistic`) read every column in the natural order.
@njit(cache=True)
def _dense_structure(m, dt, g):
    """Every column of every row, and the natural elimination order."""
    nzi = np.empty((m, dt), np.int64)
    for i in range(m):
        for j in range(dt):
            nzi[i, j] = j
    return nzi, np.full(m, dt, np.int64), np.arange(g * dt)


@njit(cache=True)
def _logistic_probs(xt, nzi, nnz, cnt, link, theta, prob):
    """Class probabilities of the model ``theta`` at the rows of ``xt`` (written into
    ``prob``) and the negative log-likelihood of the counts ``cnt`` (no penalty)."""
    m = xt.shape[0]
    n_classes, g = link.shape
    eta = np.empty(g)
    nll = 0.0
    for i in range(m):
        for q in range(g):
            s = 0.0
            for r in range(nnz[i]):
                j = nzi[i, r]
                s += xt[i, j] * theta[q, j]
            eta[q] = s
        zmax = -np.inf
        for k in range(n_classes):
            s = 0.0
            for q in range(g):
                s += link[k, q] * eta[q]
            prob[i, k] = s
            zmax = max(zmax, s)
        den = 0.0
        for k in range(n_classes):
            e = np.exp(prob[i, k] - zmax)
            den += e
            nll -= cnt[i, k] * (prob[i, k] - zmax)
            prob[i, k] = e
        log_den = np.log(den)
        for k in range(n_classes):
            prob[i, k] /= den
            nll += cnt[i, k] * log_den
    return nll


@njit(cache=True)
def _logistic_penalty(theta, inv_c):
    d = theta.shape[1] - 1
    pen = 0.0
    for q in range(theta.shape[0]):
        for j in range(d):
            pen += theta[q, j] * theta[q, j]
    return 0.5 * inv_c * pen


@njit(cache=True)
def _envelope_cholesky(h, first):
    """Cholesky factor of the symmetric matrix whose lower triangle is ``h`` (overwritten
    by the factor, row by row), reading each row from its first non-zero (``first[i]``,
    written here): the factor has the same envelope. ``False`` when ``h`` is not
    numerically positive definite."""
    n = h.shape[0]
    for i in range(n):
        f = i
        for j in range(i):
            if h[i, j] != 0.0:
                f = j
                break
        first[i] = f
    for i in range(n):
        fi = first[i]
        for j in range(fi, i):
            s = h[i, j]
            for k in range(max(fi, first[j]), j):
                s -= h[i, k] * h[j, k]
            h[i, j] = s / h[j, j]
        s = h[i, i]
        for k in range(fi, i):
            s -= h[i, k] * h[i, k]
        if not s > 0.0:
            return False
        h[i, i] = np.sqrt(s)
    return True


@njit(cache=True)
def _envelope_apply(h, first, pos, b):
    """Solve ``H x = b`` from the envelope Cholesky factor of ``H`` in elimination order
    (``b`` and the result in the natural order)."""
    n = len(b)
    x = np.empty(n)
    for i in range(n):
        x[pos[i]] = b[i]
    for i in range(n):
        s = x[i]
        for k in range(first[i], i):
            s -= h[i, k] * x[k]
        x[i] = s / h[i, i]
    for i in range(n - 1, -1, -1):
        x[i] /= h[i, i]
        xi = x[i]
        for k in range(first[i], i):
            x[k] -= h[i, k] * xi
    out = np.empty(n)
    for i in range(n):
        out[i] = x[pos[i]]
    return out


@njit(cache=True)
def _gradient_hessian(xt, nzi, nnz, cnt, total, link, prob, theta, inv_c, grad, hess, pos):
    """The penalised objective's gradient (into ``grad``, natural order) and the lower
    triangle of its Hessian in elimination order (into ``hess``; intercepts not
    penalised) at ``theta``, whose class probabilities are ``prob``: one pass over the
    rows' non-zero columns."""
    m, dt = xt.shape
    n_classes, g = link.shape
    u = np.empty(g)
    grad[:] = 0.0
    hess[:, :] = 0.0
    for i in range(m):
        ni = nnz[i]
        for q in range(g):
            v = 0.0
            r = 0.0
            for k in range(n_classes):
                v += prob[i, k] * link[k, q]
                r += (total[i] * prob[i, k] - cnt[i, k]) * link[k, q]
            u[q] = v
            for t in range(ni):
                j = nzi[i, t]
                grad[q * dt + j] += r * xt[i, j]
        for q in range(g):
            for h in range(q, g):
                w = -u[q] * u[h]
                for k in range(n_classes):
                    w += prob[i, k] * link[k, q] * link[k, h]
                w *= total[i]
                for t1 in range(ni):
                    j1 = nzi[i, t1]
                    v1 = w * xt[i, j1]
                    p1 = pos[q * dt + j1]
                    for t2 in range(ni):
                        j2 = nzi[i, t2]
                        p2 = pos[h * dt + j2]
                        if p1 >= p2:
                            hess[p1, p2] += v1 * xt[i, j2]
                        elif q != h:  # (q, j1) after (h, j2): its mirror is not visited
                            hess[p2, p1] += v1 * xt[i, j2]
    for q in range(g):
        for j in range(dt - 1):
            p = pos[q * dt + j]
            hess[p, p] += inv_c
            grad[q * dt + j] += inv_c * theta[q, j]


@njit(cache=True)
def _newton_step(xt, nzi, nnz, cnt, total, link, prob, theta, inv_c, grad, hess, pos, first):
    """The gradient and Hessian at ``theta``, and the step ``hess^-1 grad`` (natural
    order) by the envelope Cholesky (factor left in ``hess``; a general solver when not
    numerically positive definite), and whether Cholesky succeeded."""
    _gradient_hessian(xt, nzi, nnz, cnt, total, link, prob, theta, inv_c, grad, hess, pos)
    if _envelope_cholesky(hess, first):
        return _envelope_apply(hess, first, pos, grad), True
    _gradient_hessian(xt, nzi, nnz, cnt, total, link, prob, theta, inv_c, grad, hess, pos)
    n = len(grad)
    full = np.empty((n, n))
    for i in range(n):
        for j in range(n):
            pi, pj = pos[i], pos[j]
            full[i, j] = hess[pi, pj] if pi >= pj else hess[pj, pi]
    return np.linalg.solve(full, grad), False


@njit(cache=True)
def _row_totals(cnt):
    total = np.empty(cnt.shape[0])
    for i in range(cnt.shape[0]):
        s = 0.0
        for k in range(cnt.shape[1]):
            s += cnt[i, k]
        total[i] = s
    return total


@njit(cache=True)
def _halving_search(xt, nzi, nnz, cnt, link, inv_c, theta, step, obj, new_theta, new_prob):
    """Step halving along ``-step`` from ``theta`` until the objective does not rise.

    Returns ``(t, objective)`` with the accepted point in ``new_theta`` and its
    probabilities in ``new_prob``; ``t = -1`` when halving below 1e-8 still does not
    lower the objective.
    """
    g, dt = theta.shape
    t = 1.0
    while True:
        for q in range(g):
            for j in range(dt):
                new_theta[q, j] = theta[q, j] - t * step[q * dt + j]
        new_obj = (_logistic_probs(xt, nzi, nnz, cnt, link, new_theta, new_prob)
                   + _logistic_penalty(new_theta, inv_c))
        if new_obj <= obj + 1e-12 * abs(obj):
            return t, new_obj
        if t < 1e-8:
            return -1.0, new_obj
        t *= 0.5


@njit(cache=True)
def _sparse_start(xt, nzi, nnz, cnt, link, inv_c, theta0):
    """The state the sparse Newton solvers start from: ``theta0`` copied, its class
    probabilities and objective, the row totals, and the work arrays of the iterations
    (gradient, Hessian, envelope starts, next ``theta`` and probabilities)."""
    m, dt = xt.shape
    n_classes, g = link.shape
    size = g * dt
    theta = theta0.copy()
    prob = np.empty((m, n_classes))
    new_prob = np.empty((m, n_classes))
    obj = (_logistic_probs(xt, nzi, nnz, cnt, link, theta, prob)
           + _logistic_penalty(theta, inv_c))
    total = _row_totals(cnt)
    grad = np.zeros(size)
    hess = np.empty((size, size))
    first = np.empty(size, np.int64)
    new_theta = np.empty_like(theta)
    return theta, prob, new_prob, obj, total, grad, hess, first, new_theta


@njit(cache=True)
def newton_counts_sparse(xt, nzi, nnz, cnt, link, inv_c, theta0, step_tol, max_iter, pos):
    """:func:`newton_counts` on rows read sparsely (``nzi``, ``nnz``), the Hessian
    factored in the elimination order ``pos`` (see the comment above
    :func:`_dense_structure`)."""
    dt = xt.shape[1]
    g = link.shape[1]
    theta, prob, new_prob, obj, total, grad, hess, first, new_theta = _sparse_start(
        xt, nzi, nnz, cnt, link, inv_c, theta0)
    for it in range(1, max_iter + 1):
        step, _ = _newton_step(xt, nzi, nnz, cnt, total, link, prob, theta, inv_c, grad,
                               hess, pos, first)
        biggest = np.max(np.abs(step))
        if biggest < step_tol:
            return theta - step.reshape((g, dt)), it
        t, new_obj = _halving_search(xt, nzi, nnz, cnt, link, inv_c, theta, step, obj,
                                     new_theta, new_prob)
        if t < 0.0:  # no descent along the Newton direction: not converged
            return theta, -1
        theta, new_theta = new_theta, theta
        prob, new_prob = new_prob, prob
        obj = new_obj
        if t == 1.0 and biggest < step_tol:
            return theta, it
    return theta, -1


@njit(cache=True)
def newton_counts(xt, cnt, link, inv_c, theta0, step_tol, max_iter):
    """Newton's method with step halving for the L2-penalised multinomial logistic model
    of class counts.

    ``xt`` (m, d + 1): distinct feature rows with a last column of ones; ``cnt`` (m, K):
    how many observations of each class share that row; ``link`` (K, G) maps the G
    linear predictors to the K class logits; the penalty ``inv_c / 2 *
    ||theta[:, :d]||^2`` (intercepts free). Each iteration makes one pass over the rows
    for the gradient and the Hessian, solves by Cholesky, and evaluates the objective
    once at the full step (the probabilities computed there serve the next iteration)
    unless it must halve. A full Newton step whose largest coordinate is below
    ``step_tol`` ends the iterations once taken (quadratic convergence: the error
    left is of the order of its square); the objective is not evaluated for one
    already below ``step_tol`` when computed. Returns ``(theta,
    iterations)``, iterations -1 when not converged after ``max_iter`` or when halving
    the step 27 times does not lower the objective.
    """
    nzi, nnz, pos = _dense_structure(xt.shape[0], xt.shape[1], link.shape[1])
    return newton_counts_sparse(xt, nzi, nnz, cnt, link, inv_c, theta0, step_tol, max_iter,
                                pos)


@njit(cache=True)
def _gradient(xt, nzi, nnz, cnt, total, link, prob, theta, inv_c, grad):
    """The penalised objective's gradient alone (see :func:`_gradient_hessian`)."""
    m, dt = xt.shape
    n_classes, g = link.shape
    grad[:] = 0.0
    for i in range(m):
        for q in range(g):
            r = 0.0
            for k in range(n_classes):
                r += (total[i] * prob[i, k] - cnt[i, k]) * link[k, q]
            for t in range(nnz[i]):
                j = nzi[i, t]
                grad[q * dt + j] += r * xt[i, j]
    for q in range(g):
        for j in range(dt - 1):
            grad[q * dt + j] += inv_c * theta[q, j]


@njit(cache=True)
def newton_counts_chord_sparse(xt, nzi, nnz, cnt, link, inv_c, theta0, step_tol, max_iter,
                               pos):
    """:func:`newton_counts_chord` on rows read sparsely, the Hessian factored in the
    elimination order ``pos`` (see :func:`newton_counts_sparse`)."""
    dt = xt.shape[1]
    g = link.shape[1]
    theta, prob, new_prob, obj, total, grad, hess, first, new_theta = _sparse_start(
        xt, nzi, nnz, cnt, link, inv_c, theta0)
    fresh = True
    factored = False
    previous = np.inf
    for it in range(1, max_iter + 1):
        if fresh or not factored:
            step, factored = _newton_step(xt, nzi, nnz, cnt, total, link, prob, theta, inv_c,
                                          grad, hess, pos, first)
            fresh = False
        else:
            _gradient(xt, nzi, nnz, cnt, total, link, prob, theta, inv_c, grad)
            step = _envelope_apply(hess, first, pos, grad)
        biggest = np.max(np.abs(step))
        if biggest < step_tol:
            return theta - step.reshape((g, dt)), it
        if biggest > 0.25 * previous:
            fresh = True
        previous = biggest
        t, new_obj = _halving_search(xt, nzi, nnz, cnt, link, inv_c, theta, step, obj,
                                     new_theta, new_prob)
        if t < 0.0:
            return theta, -1
        if t < 1.0:  # the step needed halving: refresh the Hessian
            fresh = True
        theta, new_theta = new_theta, theta
        prob, new_prob = new_prob, prob
        obj = new_obj
    return theta, -1


@njit(cache=True)
def newton_counts_chord(xt, cnt, link, inv_c, theta0, step_tol, max_iter):
    """:func:`newton_counts` that keeps the Hessian's factor while it works.

    From a warm start the Hessian changes little: each iteration solves with the last
    Cholesky factor (a gradient pass and two triangular solves instead of the
    Hessian's assembly and factorisation) and refreshes the Hessian only when a
    step did not shrink at least fourfold, or needed halving (or the Hessian was not
    positive definite). The convergence is then linear, not quadratic, hence a tighter
    ``step_tol`` for the same accuracy (the leakage null uses 1e-9: the optimum to
    about 1e-10). Returns ``(theta, iterations)``, iterations -1 when not converged
    after ``max_iter`` or when halving the step does not lower the objective.
    """
    nzi, nnz, pos = _dense_structure(xt.shape[0], xt.shape[1], link.shape[1])
    return newton_counts_chord_sparse(xt, nzi, nnz, cnt, link, inv_c, theta0, step_tol,
                                      max_iter, pos)


#: A decision of scikit-learn's solver (a line-search test, a stopping test) whose two
#: sides are this close, relatively, is not replicated: the fit goes to scikit-learn.
_DECISION_BAND = 1e-6


@njit(cache=True)
def _sklearn_max_gradient(xt, nzi, nnz, cnt, total, link, prob, theta, inv_c):
    """The largest coordinate of the gradient of the *summed* objective in
    scikit-learn's coordinates: the binomial coefficient vector for two classes, else
    the K class vectors ``link @ theta`` with the last class's intercept left out."""
    m, dt = xt.shape
    n_classes = link.shape[0]
    first = 1 if n_classes == 2 else 0
    coef = np.dot(link, theta)  # (K, dt)
    sums = np.zeros((n_classes, dt))
    for i in range(m):
        for k in range(first, n_classes):
            r = total[i] * prob[i, k] - cnt[i, k]
            for t in range(nnz[i]):
                j = nzi[i, t]
                sums[k, j] += xt[i, j] * r
    biggest = 0.0
    for k in range(first, n_classes):
        for j in range(dt):
            if j == dt - 1 and k == n_classes - 1 and n_classes > 2:
                continue
            s = sums[k, j]
            if j < dt - 1:
                s += inv_c * coef[k, j]
            biggest = max(biggest, abs(s))
    return biggest


@njit(cache=True)
def sklearn_newton_sparse(xt, nzi, nnz, cnt, link, inv_c, tol, max_iter, pos):
    """:func:`sklearn_newton` on rows read sparsely, the Hessian factored in the
    elimination order ``pos`` (the same iterates up to rounding)."""
    m, dt = xt.shape
    n_classes, g = link.shape
    size = g * dt
    total = _row_totals(cnt)
    n_obs = 0.0
    for i in range(m):
        n_obs += total[i]
    theta = np.zeros((g, dt))
    new_theta = np.empty_like(theta)
    prob = np.empty((m, n_classes))
    new_prob = np.empty((m, n_classes))
    obj = (_logistic_probs(xt, nzi, nnz, cnt, link, theta, prob)
           + _logistic_penalty(theta, inv_c)) / n_obs
    grad = np.zeros(size)
    hess = np.empty((size, size))
    first = np.empty(size, np.int64)
    eps16 = 16.0 * np.finfo(np.float64).eps
    for it in range(1, max_iter + 1):
        step, ok = _newton_step(xt, nzi, nnz, cnt, total, link, prob, theta, inv_c, grad,
                                hess, pos, first)
        if not ok:
            return theta, 0
        d2 = 0.0  # squared Newton decrement of the mean objective: -(gradient . direction)
        for s_ in range(size):
            d2 += grad[s_] * step[s_]
        d2 /= n_obs
        armijo = -0.00048828125 * d2
        t = 1.0
        accepted = False
        for _ in range(21):
            for q in range(g):
                for j in range(dt):
                    new_theta[q, j] = theta[q, j] - t * step[q * dt + j]
            new_obj = (_logistic_probs(xt, nzi, nnz, cnt, link, new_theta, new_prob)
                       + _logistic_penalty(new_theta, inv_c)) / n_obs
            gain = new_obj - obj
            if abs(gain - t * armijo) <= _DECISION_BAND * max(abs(t * armijo), 1e-9 * abs(obj)):
                return theta, 0
            if gain <= t * armijo:
                accepted = True
                break
            if abs(gain) <= 2.0 * eps16 * abs(obj):  # scikit-learn's gradient-norm fallback
                return theta, 0
            t *= 0.5
        if not accepted:
            return theta, 0
        theta, new_theta = new_theta, theta
        prob, new_prob = new_prob, prob
        obj = new_obj
        q1 = (_sklearn_max_gradient(xt, nzi, nnz, cnt, total, link, prob, theta, inv_c)
              / n_obs / tol)
        q2 = 0.5 * d2 / tol
        if abs(q1 - 1.0) <= _DECISION_BAND:
            return theta, 0
        if q1 <= 1.0:
            if abs(q2 - 1.0) <= _DECISION_BAND:
                return theta, 0
            if q2 <= 1.0:
                return theta, it
    return theta, 0


@njit(cache=True)
def sklearn_newton(xt, cnt, link, inv_c, tol, max_iter):
    """scikit-learn's ``LogisticRegression(solver="newton-cholesky")`` replayed on counts.

    The same iterates as scikit-learn 1.x's Newton-Cholesky solver: from zero, the
    Newton direction (Newton's method is invariant under the linear change from its
    coordinates, the K class vectors with the last intercept fixed, to the ``G``
    predictors here; the iterates stay where the two agree), its backtracking line
    search (halving until the Armijo condition with ``sigma = 2^-11``, at most 21
    times) on the mean objective, and its stopping rule after each step: the largest
    gradient coordinate of the mean objective (in its coordinates) at most ``tol`` and
    half the squared Newton decrement at most ``tol``. Returns ``(theta, iterations)``;
    iterations 0 when scikit-learn would do something not replayed here (the
    line search's fallbacks, a Hessian not positive definite, ``max_iter`` reached) or
    when a decision's two sides are within ``_DECISION_BAND`` (rounding could turn it):
    the caller then asks scikit-learn itself.
    """
    nzi, nnz, pos = _dense_structure(xt.shape[0], xt.shape[1], link.shape[1])
    return sklearn_newton_sparse(xt, nzi, nnz, cnt, link, inv_c, tol, max_iter, pos)


@njit(cache=True)
def newton_logistic(xt, a, link, inv_c, theta0, step_tol, max_iter):
    """:func:`newton_counts` on one row per observation: ``a`` holds the class codes.

    ``xt`` (n, d + 1): features with a last column of ones. Returns ``(theta,
    iterations)``, iterations -1 when not converged after ``max_iter``.
    """
    cnt = np.zeros((xt.shape[0], link.shape[0]))
    for i in range(xt.shape[0]):
        cnt[i, a[i]] = 1.0
    return newton_counts(xt, cnt, link, inv_c, theta0, step_tol, max_iter)


@njit(cache=True)
def _merge_rows(rows, key, y_perm, a, urows, unzi, unnz, up, m, n_classes, cnt, xt, nzi,
                nnz):
    """Merge the observations ``rows`` by (distinct base row ``key[i]``, outcome): the full
    design ``[urows[key], y, y (p - 1/2), 1]`` of each distinct pair, written into the
    first rows of ``xt`` (only its non-zero columns, listed in ``nzi`` and ``nnz``), and
    its class counts into ``cnt``. ``unzi[u, :unnz[u]]``: the non-zero columns of the
    distinct base row ``u``. Returns how many rows."""
    d0 = urows.shape[1]
    slot = np.full(2 * m, -1, np.int64)
    used = 0
    for r in range(len(rows)):
        i = rows[r]
        yi = y_perm[i]
        kk = 2 * key[i] + yi
        s = slot[kk]
        if s < 0:
            s = used
            slot[kk] = s
            used += 1
            u = key[i]
            c = 0
            for t in range(unnz[u]):
                j = unzi[u, t]
                xt[s, j] = urows[u, j]
                nzi[s, c] = j
                c += 1
            xt[s, d0] = float(yi)
            xt[s, d0 + 1] = yi * (up[u] - 0.5)
            xt[s, d0 + 2] = 1.0
            if xt[s, d0] != 0.0:
                nzi[s, c] = d0
                c += 1
            if xt[s, d0 + 1] != 0.0:
                nzi[s, c] = d0 + 1
                c += 1
            nzi[s, c] = d0 + 2
            nnz[s] = c + 1
            for k in range(n_classes):
                cnt[s, k] = 0.0
        cnt[s, a[i]] += 1.0
    return used


@njit(cache=True, parallel=True)
def logistic_null(fixed, y_perms, layout, emulate, tol, pos):
    """The leakage test's permuted full-model refits, permutations in parallel.

    ``fixed = (urows, unzi, unnz, up, keys, n_unique)``: the folds' distinct base rows;
    ``layout = (a, train_idx, train_ptr, test_idx, test_ptr, link, inv_c, theta0,
    step_tol, max_iter, floor)``: the actions, the folds' rows, the model and the solver.

    Fold ``f``'s base design has ``n_unique[f]`` distinct rows ``urows[f, :n_unique[f]]``
    (with the belief ``up[f, u]`` of each, and its non-zero columns
    ``unzi[f, u, :unnz[f, u]]``); ``keys[f, i]`` is row ``i``'s. For each row
    ``b`` of ``y_perms`` and each fold: the training rows
    (``train_idx[train_ptr[f]:train_ptr[f + 1]]``) merged by (distinct base row,
    outcome) into the full design ``[urows, y, y (p - 1/2), 1]`` with class counts
    (see :func:`_merge_rows`), :func:`newton_counts_chord_sparse` from ``theta0[f]``
    (the Hessian factored in the elimination order ``pos``), and the
    summed log-loss of its predictions on the test rows (merged the same way;
    probabilities floored at ``floor``). With ``emulate``, each fit is instead
    :func:`sklearn_newton_sparse` (scikit-learn's iterates from zero, its stopping rule at
    ``tol``). Returns the total out-of-fold log-loss of each permutation and whether
    every fold's fit converged (with ``emulate``: was replayed).
    """
    urows, unzi, unnz, up, keys, n_unique = fixed
    a, train_idx, train_ptr, test_idx, test_ptr, link, inv_c, theta0, step_tol, max_iter, \
        floor = layout
    n_perm = y_perms.shape[0]
    n_folds, m_max, d0 = urows.shape
    n_classes = link.shape[0]
    dt = d0 + 3
    width = unzi.shape[2] + 3
    total = np.empty(n_perm)
    ok = np.ones(n_perm, dtype=np.bool_)
    for b in prange(n_perm):
        xt_buf = np.empty((2 * m_max, dt))
        nzi_buf = np.empty((2 * m_max, width), np.int64)
        nnz_buf = np.empty(2 * m_max, np.int64)
        cnt_buf = np.empty((2 * m_max, n_classes))
        prob = np.empty((2 * m_max, n_classes))
        y_perm = y_perms[b]
        loss = 0.0
        for f in range(n_folds):
            m = n_unique[f]
            used = _merge_rows(train_idx[train_ptr[f]:train_ptr[f + 1]], keys[f], y_perm, a,
                               urows[f], unzi[f], unnz[f], up[f], m, n_classes, cnt_buf,
                               xt_buf, nzi_buf, nnz_buf)
            if emulate:
                theta, it = sklearn_newton_sparse(xt_buf[:used], nzi_buf[:used],
                                                  nnz_buf[:used], cnt_buf[:used], link, inv_c,
                                                  tol, max_iter, pos)
            else:
                theta, it = newton_counts_chord_sparse(xt_buf[:used], nzi_buf[:used],
                                                       nnz_buf[:used], cnt_buf[:used], link,
                                                       inv_c, theta0[f], step_tol, max_iter,
                                                       pos)
            if it <= 0:
                ok[b] = False
            used = _merge_rows(test_idx[test_ptr[f]:test_ptr[f + 1]], keys[f], y_perm, a,
                               urows[f], unzi[f], unnz[f], up[f], m, n_classes, cnt_buf,
                               xt_buf, nzi_buf, nnz_buf)
            _logistic_probs(xt_buf[:used], nzi_buf[:used], nnz_buf[:used], cnt_buf[:used],
                            link, theta, prob[:used])
            for s in range(used):
                for k in range(n_classes):
                    if cnt_buf[s, k] > 0.0:
                        loss -= cnt_buf[s, k] * np.log(max(prob[s, k], floor))
        total[b] = loss
    return total, ok
