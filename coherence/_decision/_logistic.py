"""A penalised logistic regression fitted by Newton's method, for the leakage refits.

The leakage test's permutation null refits the full model ``n_permutations x
n_splits`` times on data that differ from the observed fit only in two columns.
scikit-learn's :class:`~sklearn.linear_model.LogisticRegression` spends most of
a 10 ms fit of these small problems in validation and set-up; this module fits
*the same model* (the same objective, so the same optimum) with a few numpy
calls per Newton step, warm-started from the observed fit:

.. math::

    \\min_{W, b} \\; \\sum_i -\\log \\operatorname{softmax}(W x_i + b)_{a_i}
    + \\frac{1}{2C} \\lVert W \\rVert_F^2 ,

scikit-learn's parametrisation: for two classes one coefficient vector (the
logit of the second class), for more one vector per class (the multinomial
"symmetric" form); intercepts are not penalised. For more than two classes the
intercepts are identified only up to a common constant, which does not change
the probabilities; the last class's is fixed at 0 here.

scikit-learn stops at a gradient tolerance of 1e-4 (``tol``); this solver runs
Newton's method until a full step below 1e-7 (quadratic convergence: the
solution is then good to about 1e-12), so the two agree to scikit-learn's
tolerance (``tests/decision/test_logistic.py`` checks the probabilities against
scikit-learn run to ``tol=1e-13``, to 1e-7, on random problems).

The kernel (:func:`coherence._decision._kernels_logistic.newton_counts`) works on *counts*:
one row per distinct feature vector with how many observations of each class share
it, the same objective as the rows repeated; the leakage null merges its training
rows that way. Where the p-value needs scikit-learn's own (tolerance-stopped)
statistic, :func:`coherence._decision._kernels_logistic.sklearn_newton` replays
scikit-learn's solver instead (see ``_leakage_null.fast_logistic_null``).
"""

from __future__ import annotations

import math
from dataclasses import dataclass

import numpy as np

__all__ = ["LogisticFit", "fit_logistic", "link", "predict_logistic"]

#: Newton's method stops when the largest coordinate of the step is below this.
STEP_TOL = 1e-7
#: The leakage null's refits (:func:`coherence._decision._kernels_logistic.newton_counts_chord`,
#: linear convergence once the Hessian is kept) stop at this step: the permuted statistics
#: to about 2e-5 points (measured on the demo's agents), 2,500 times inside their margin
#: of 0.05 points, within which a permutation is refitted exactly; 1e-9 cost 10-17% more.
NULL_STEP_TOL = 1e-4
MAX_ITER = 100


@dataclass(frozen=True, slots=True)
class LogisticFit:
    """Coefficients ``(G, d + 1)`` (the intercept last) of the ``G`` free linear predictors
    (``G = 1`` for two classes: the logit of class 1; ``G = K - 1`` otherwise: contrasts,
    see :func:`link`), Newton iterations used and whether they converged."""

    theta: np.ndarray
    n_iter: int
    converged: bool


def link(n_classes: int) -> np.ndarray:
    """The ``(K, G)`` matrix ``L`` that maps the linear predictors to the class logits.

    Two classes: logits ``(0, eta)`` (scikit-learn's binomial model). More: ``L`` has
    orthonormal columns orthogonal to ``(1, ..., 1)``. At the optimum of the symmetric
    multinomial objective the class coefficient vectors sum to zero (the loss does
    not change along ``W + 1 v^T`` and the penalty is smallest at sum zero), so
    ``W = L V`` loses nothing, and ``||W||_F = ||V||_F`` keeps the penalty: the same
    optimum with ``K - 1`` instead of ``K`` predictors and no unidentified intercept.
    """
    if n_classes == 2:
        return np.array([[0.0], [1.0]])
    # orthonormal Helmert contrasts
    out = np.zeros((n_classes, n_classes - 1))
    for j in range(1, n_classes):
        out[:j, j - 1] = 1.0
        out[j, j - 1] = -float(j)
        out[:, j - 1] /= math.sqrt(j * (j + 1))
    return out


def _softmax(z: np.ndarray) -> np.ndarray:
    z = z - z.max(axis=1, keepdims=True)
    e = np.exp(z)
    return e / e.sum(axis=1, keepdims=True)


def fit_logistic(x: np.ndarray, a: np.ndarray, n_classes: int, c: float,
                 init: LogisticFit | None = None, pos: np.ndarray | None = None) -> LogisticFit:
    """Fit the L2-penalised (``1 / (2C)``, intercepts free) logistic model of ``a`` on ``x``.

    ``a`` holds class codes 0..K-1, each present. Newton's method with step halving
    on the objective (the numba kernel
    :func:`coherence._decision._kernels_logistic.newton_counts_sparse`), from ``init``
    (warm start) or zeros; it stops after a step whose largest coordinate is below
    ``STEP_TOL``. Identical rows are merged into class counts and each row is read on
    its non-zero columns; ``pos`` is the Cholesky's elimination order of the parameters
    (``_leakage_null.elimination_order``; None: the natural order).
    """
    from ._kernels_logistic import newton_counts_sparse

    n, d = x.shape
    lk = link(n_classes)
    xt = np.column_stack([x, np.ones(n)])
    rows, inverse = np.unique(xt, axis=0, return_inverse=True)
    rows = np.ascontiguousarray(rows, dtype=np.float64)
    cnt = np.zeros((len(rows), n_classes))
    np.add.at(cnt, (inverse.reshape(-1), np.asarray(a, dtype=np.int64)), 1.0)
    nonzero = rows != 0.0
    nnz = nonzero.sum(axis=1).astype(np.int64)
    nzi = np.zeros((len(rows), max(1, int(nnz.max(initial=0)))), dtype=np.int64)
    for i in range(len(rows)):
        cols = np.flatnonzero(nonzero[i])
        nzi[i, :len(cols)] = cols
    if pos is None:
        pos = np.arange(lk.shape[1] * (d + 1), dtype=np.int64)
    theta0 = np.zeros((lk.shape[1], d + 1)) if init is None else init.theta
    theta, n_iter = newton_counts_sparse(rows, nzi, nnz, cnt, lk, 1.0 / c,
                                         np.ascontiguousarray(theta0, dtype=np.float64),
                                         STEP_TOL, MAX_ITER, pos)
    return LogisticFit(theta, n_iter if n_iter > 0 else MAX_ITER, n_iter > 0)


def predict_logistic(fit: LogisticFit, x: np.ndarray, n_classes: int) -> np.ndarray:
    """Class probabilities ``(n, K)`` of the fitted model at ``x``."""
    theta = fit.theta
    return _softmax((x @ theta[:, :-1].T + theta[:, -1]) @ link(n_classes).T)
