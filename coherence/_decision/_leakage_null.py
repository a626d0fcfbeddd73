"""The logistic engine's permutation null of the leakage test, fast and scikit-learn's.

:func:`fast_logistic_null` refits every permutation with the Newton solver of
:mod:`._logistic` (warm-started, on merged rows, in parallel), then hands the
permutations that decide the p-value to scikit-learn's statistic: replayed
(:func:`._kernels_logistic.sklearn_newton`) where the replay is checked, refitted by
scikit-learn itself otherwise. Here too: the margins that decide which permutations
are handed over (:func:`sklearn_error_scale`), the refits' elimination order
(:func:`elimination_order`), and the two design helpers the leakage test shares
(:func:`with_outcome`, :func:`improvement`).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from collections.abc import Mapping
from typing import Any

import numpy as np

#: Out-of-fold probabilities are floored at this value before taking logs.
PROBABILITY_FLOOR = 1e-12


def with_outcome(base: np.ndarray, p: np.ndarray, y: np.ndarray | None) -> np.ndarray:
    """The full model's design: the base design plus ``y`` and ``y * (p - 1/2)``."""
    if y is None:
        return base
    return np.column_stack([base, y, y * (p - 0.5)])


def improvement(base: float, full: float) -> float:
    """The statistic: the relative reduction (percent) of the log-loss ``base`` to ``full``."""
    return 100.0 * (base - full) / base if base > 0 else math.nan


#: Permutation statistics of the fast logistic refits within this distance (relative to
#: ``max(1, |S|)``) of the observed statistic are refitted with scikit-learn, so that the
#: p-value's comparisons are scikit-learn's (see :func:`fast_logistic_null`).
REFIT_MARGIN = 0.05
#: ... and those within this multiple of :func:`sklearn_error_scale` of it.
SCALE_MARGIN = 1.0
#: Replay scikit-learn's solver (:func:`._kernels_logistic.sklearn_newton`) for the permutations
#: within the margin instead of calling scikit-learn (see :func:`fast_logistic_null`); only
#: on a scikit-learn release the replay was checked against
#: (:func:`._kernels_logistic.replay_matches_installed`).
REPLAY_SKLEARN = True
#: Largest difference (relative to ``max(1, |S|)``) tolerated between a replayed and
#: scikit-learn's statistic (rounding: about 1e-13 measured).
REPLAY_CHECK = 1e-9
#: Replayed statistics this close to ``S`` (relative to ``max(1, |S|)``) are refitted by
#: scikit-learn: ties and near-ties are decided on its own numbers.
REPLAY_MARGIN = 1e-6
#: scikit-learn's stopping rule: the largest coordinate of the gradient of its mean
#: objective at most this (``LogisticRegression(tol=1e-4)``, the reference refits').
SKLEARN_TOL = 1e-4


def sklearn_error_scale(designs: list[np.ndarray], p: np.ndarray, y: np.ndarray,
                        a: np.ndarray, folds: list[tuple[np.ndarray, np.ndarray]],
                        n_classes: int, c: float, thetas: list[np.ndarray],
                        ll_base: float) -> float:
    """How far, to first order, scikit-learn's stopping rule lets its statistic move.

    For each fold, at the optimum ``thetas[f]`` of the full model on the observed data:
    a fit stopped where scikit-learn stops (every coordinate of the gradient of the mean
    objective at most ``SKLEARN_TOL``, in scikit-learn's coordinates: the K class
    coefficient vectors, the last class's intercept fixed) is ``H^-1 g`` from the
    optimum, which moves the fold's test log-loss by ``grad_test . H^-1 g``, at most
    ``n_train * SKLEARN_TOL * ||H^-1 grad_test||_1`` (``H`` and ``grad_test`` of the
    summed losses). Summed over the folds, in units of the statistic (percentage
    points). A worst case over the gradient's signs: the measured gaps are below a
    tenth of it (0.093 at most; ``benchmarks/bench_leakage.py --margin``).
    """
    from ._logistic import link

    lk = link(n_classes)
    total = 0.0
    for f, (train, test) in enumerate(folds):
        x = with_outcome(designs[f], p, y)
        xt = np.column_stack([x, np.ones(len(x))])
        coef = lk @ thetas[f]  # (K, d + 1): the class logits' coefficients
        d1 = xt.shape[1]

        def proba(rows: np.ndarray, coef: np.ndarray = coef, xt: np.ndarray = xt) -> np.ndarray:
            z = xt[rows] @ coef.T
            e = np.exp(z - z.max(axis=1, keepdims=True))
            return e / e.sum(axis=1, keepdims=True)

        pr, pt = proba(train), proba(test)
        onehot = np.eye(n_classes)[a[test]]
        if n_classes == 2:  # scikit-learn's binomial model: one coefficient vector
            w = pr[:, 1] * pr[:, 0]
            hess = (xt[train] * w[:, None]).T @ xt[train]
            hess[np.arange(d1 - 1), np.arange(d1 - 1)] += 1.0 / c
            grad_test = xt[test].T @ (pt[:, 1] - onehot[:, 1])
        else:
            hess = np.zeros((n_classes * d1, n_classes * d1))
            for k in range(n_classes):
                for m in range(n_classes):
                    w = pr[:, k] * (float(k == m) - pr[:, m])
                    hess[k * d1:(k + 1) * d1, m * d1:(m + 1) * d1] = \
                        (xt[train] * w[:, None]).T @ xt[train]
                diag = k * d1 + np.arange(d1 - 1)
                hess[diag, diag] += 1.0 / c
            grad_test = np.concatenate([xt[test].T @ (pt[:, k] - onehot[:, k])
                                        for k in range(n_classes)])
            hess, grad_test = hess[:-1, :-1], grad_test[:-1]  # last intercept fixed
        total += len(train) * SKLEARN_TOL * float(np.abs(np.linalg.solve(hess, grad_test)).sum())
    return 100.0 * total / (len(a) * ll_base)


def elimination_order(design: np.ndarray, stratum: np.ndarray, n_predictors: int) -> np.ndarray:
    """The order in which the refits' Cholesky eliminates the full model's parameters.

    The columns of the base ``design`` that are non-zero in one categorical-evidence
    stratum only (the one-hot column of a level and its products with the belief
    splines) come first, grouped by stratum; then the shared columns (the splines,
    numeric evidence, the outcome's two columns, the intercept). The Hessian then has
    one block per stratum linked only through the shared columns, and its envelope
    Cholesky no fill-in (:mod:`._kernels_logistic`). Each column's ``n_predictors``
    parameters are adjacent. Any order gives the same solution up to rounding.
    Returns ``pos``: parameter ``q * dt + j`` (``dt`` the full model's columns with the
    intercept) is eliminated at position ``pos[q * dt + j]``.
    """
    d0 = design.shape[1]
    dt = d0 + 3
    block = np.full(dt, -1, dtype=np.int64)
    nonzero = design != 0.0
    for j in range(d0):
        levels = np.unique(stratum[nonzero[:, j]])
        if len(levels) == 1:
            block[j] = levels[0]
    shared = block < 0
    columns = np.lexsort((np.arange(dt), block, shared))
    pos = np.empty(n_predictors * dt, dtype=np.int64)
    for rank, j in enumerate(columns):
        for q in range(n_predictors):
            pos[q * dt + j] = rank * n_predictors + q
    return pos


def null_starts(designs: list[np.ndarray], folds: list[tuple[np.ndarray, np.ndarray]],
                a: np.ndarray, n_classes: int, c: float) -> np.ndarray:
    """Warm starts of the permuted full-model refits, one per fold: the base model's fit
    with the outcome's two coefficients at 0. A permuted outcome carries no information
    about the action, so the permuted optimum lies near it, nearer than the observed
    full fit when the outcome matters (measured on the demo's leaky agent: the null
    18% faster; the same optima to 2e-10)."""
    from ._logistic import fit_logistic

    d0 = designs[0].shape[1]
    out = []
    for f, (train, _) in enumerate(folds):
        base = fit_logistic(designs[f][train], a[train], n_classes, c).theta
        theta = np.zeros((base.shape[0], d0 + 3))
        theta[:, :d0] = base[:, :d0]
        theta[:, -1] = base[:, -1]
        out.append(theta)
    return np.stack(out)


def _merged_rows(designs: list[np.ndarray], p: np.ndarray) -> tuple[np.ndarray, ...]:
    """The null kernel's fixed arrays: each fold's distinct base-design rows with their
    belief (the kernel merges the observations by (distinct row, permuted outcome) into
    weighted rows), the non-zero columns of each (the kernels skip the zeros), each
    observation's distinct row and each fold's count of them."""
    tables = [np.unique(np.column_stack([d, p]), axis=0, return_inverse=True)
              for d in designs]
    m_max = max(len(u) for u, _ in tables)
    urows = np.zeros((len(designs), m_max, designs[0].shape[1]))
    up = np.zeros((len(designs), m_max))
    for f, (u, _) in enumerate(tables):
        urows[f, :len(u)] = u[:, :-1]
        up[f, :len(u)] = u[:, -1]
    nonzero = urows != 0.0
    unnz = nonzero.sum(axis=2).astype(np.int64)
    unzi = np.zeros((*urows.shape[:2], max(1, int(unnz.max(initial=0)))), np.int64)
    for f, u in zip(*np.nonzero(unnz), strict=True):
        cols = np.flatnonzero(nonzero[f, u])
        unzi[f, u, :len(cols)] = cols
    return (urows, unzi, unnz, up,
            np.stack([inv.reshape(-1) for _, inv in tables]).astype(np.int64),
            np.array([len(u) for u, _ in tables], dtype=np.int64))


def _refitted(designs: list[np.ndarray], p: np.ndarray, y_perm: np.ndarray, a: np.ndarray,
              folds: list[tuple[np.ndarray, np.ndarray]], n_classes: int, c: float,
              starts: list[Any], ll_base: float) -> float:
    """One permutation's statistic refitted fold by fold (warm-started from the observed
    fits ``starts``), NaN when a fit did not converge: the null where the folds' designs
    differ and the merged kernel does not apply."""
    from ._logistic import fit_logistic
    from ._logistic import predict_logistic

    loss_sum = 0.0
    converged = True
    for f, (train, test) in enumerate(folds):
        features = with_outcome(designs[f], p, y_perm)
        fit = fit_logistic(features[train], a[train], n_classes, c, init=starts[f])
        converged = converged and fit.converged
        proba = predict_logistic(fit, features[test], n_classes)
        picked = proba[np.arange(len(test)), a[test]]
        loss_sum += float(np.sum(-np.log(np.maximum(picked, PROBABILITY_FLOOR))))
    return improvement(ll_base, loss_sum / len(a)) if converged else math.nan


def fast_logistic_null(designs: list[np.ndarray], p: np.ndarray, y: np.ndarray,
                        y_perms: np.ndarray, a: np.ndarray,
                        folds: list[tuple[np.ndarray, np.ndarray]], n_classes: int,
                        options: Mapping[str, Any], ll_base: float, statistic: float,
                        reference: Callable[[int], float],
                        stratum: np.ndarray | None = None) -> np.ndarray:
    """The logistic engine's permutation null, with scikit-learn's statistic wherever it
    decides the p-value.

    1. Every permutation is refitted by :mod:`._logistic`'s Newton solver, warm-started
       from the observed fit of the fold, on the training rows merged by (distinct base
       row, outcome) (:func:`._kernels_logistic.logistic_null`, permutations in parallel on
       numba's threads). It reaches the optimum of scikit-learn's objective, where
       scikit-learn stops earlier (its ``tol``): the two permuted statistics differ by
       scikit-learn's solver error (measured: up to 0.088 percentage points, at
       ``C=100``; see ``benchmarks/bench_leakage.py --margin``).
    2. The permutations whose fast statistic lies within the margin
       ``max(REFIT_MARGIN * max(1, |S|), SCALE_MARGIN * sklearn_error_scale)`` of the
       observed ``S`` (or did not converge) need scikit-learn's own statistic. With
       ``REPLAY_SKLEARN``, :func:`._kernels_logistic.sklearn_newton` replays scikit-learn's
       solver (its iterates from zero and its stopping rule; the same statistic up to
       rounding, about 1e-13), first on the observed outcome, whose statistic must
       equal ``S`` within ``REPLAY_CHECK * max(1, |S|)`` (else this scikit-learn is
       not the one replayed and nothing is replayed), then on those permutations.
    3. ``reference`` (scikit-learn itself) refits the rest: the permutations the
       replay declined (a decision of the solver too close to call, a fallback it
       does not replay) and those whose replayed statistic lies within
       ``REPLAY_MARGIN * max(1, |S|)`` of ``S`` (ties). If one of those replayed
       statistics disagrees with scikit-learn's by more than ``REPLAY_CHECK``, the
       replay is dropped and scikit-learn refits every permutation of step 2.

    A permutation that moves no outcome (all its blocks of one unit, or drawn as the
    identity) gets ``S`` itself: scikit-learn would refit the observed data. So every
    comparison that decides the p-value is made on scikit-learn's statistic (computed
    by scikit-learn, or replayed to rounding and far from ``S``).
    """
    from threadpoolctl import threadpool_limits

    from ._logistic import fit_logistic
    from ._logistic import link

    c = float(options["C"])
    n = len(a)
    unit = max(1.0, abs(statistic))
    if stratum is None:
        stratum = np.zeros(n, dtype=np.int64)
    run: Callable[[np.ndarray, bool], np.ndarray] | None = None
    with threadpool_limits(1, user_api="blas"):
        order = (elimination_order(designs[0], stratum, link(n_classes).shape[1])
                 if len({d.shape[1] for d in designs}) == 1 else None)
        starts = [fit_logistic(with_outcome(designs[f], p, y)[train], a[train], n_classes, c,
                               pos=order)
                  for f, (train, _) in enumerate(folds)]
        if order is not None:
            from ._kernels_logistic import logistic_null
            from ._kernels_logistic import replay_matches_installed
            from ._logistic import MAX_ITER
            from ._logistic import NULL_STEP_TOL

            lk = link(n_classes)

            fixed = _merged_rows(designs, p)
            layout = (a.astype(np.int64),
                      np.concatenate([tr for tr, _ in folds]).astype(np.int64),
                      np.cumsum([0] + [len(tr) for tr, _ in folds]).astype(np.int64),
                      np.concatenate([te for _, te in folds]).astype(np.int64),
                      np.cumsum([0] + [len(te) for _, te in folds]).astype(np.int64),
                      lk, 1.0 / c, null_starts(designs, folds, a, n_classes, c),
                      NULL_STEP_TOL, MAX_ITER, PROBABILITY_FLOOR)

            def run(rows: np.ndarray, emulate: bool) -> np.ndarray:
                total, ok = logistic_null(fixed, np.ascontiguousarray(rows, dtype=np.int8),
                                          layout, emulate, SKLEARN_TOL, order)
                return np.array([improvement(ll_base, t / n) if good else math.nan
                                 for t, good in zip(total, ok, strict=True)])

            null = run(y_perms, False)
        else:  # folds with different designs (a belief constant in a training fold)
            null = np.array([_refitted(designs, p, y_perm.astype(np.float64), a, folds,
                                       n_classes, c, starts, ll_base)
                             for y_perm in y_perms], dtype=np.float64)
        margin = max(REFIT_MARGIN * unit,
                     SCALE_MARGIN * sklearn_error_scale(designs, p, y, a, folds, n_classes, c,
                                                        [s.theta for s in starts], ll_base))
        # a permutation that moved no outcome refits the observed data: its statistic is
        # S itself, as scikit-learn computes it (the same fits of the same arrays)
        unmoved = np.all(y_perms == y, axis=1)
        null[unmoved] = statistic
        redo = np.flatnonzero(~unmoved & (np.isnan(null) | (np.abs(null - statistic) <= margin)))
        replayed = np.full(len(redo), math.nan)
        if run is not None and REPLAY_SKLEARN and replay_matches_installed() and len(redo):
            observed = run(y[None, :], True)[0]
            if abs(observed - statistic) <= REPLAY_CHECK * unit:
                replayed = run(y_perms[redo], True)
    trusted = np.isfinite(replayed) & (np.abs(replayed - statistic) > REPLAY_MARGIN * unit)
    null[redo[trusted]] = replayed[trusted]
    replay_agrees = True
    for r, value in zip(redo[~trusted], replayed[~trusted], strict=True):
        null[r] = reference(int(r))
        if np.isfinite(value) and abs(value - null[r]) > REPLAY_CHECK * unit:
            replay_agrees = False
    if not replay_agrees:  # the replay missed scikit-learn here: refit everything it gave
        for r in redo[trusted]:
            null[r] = reference(int(r))
    return null
