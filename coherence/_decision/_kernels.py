"""Numba kernels of the mixed-data kNN (conditional) mutual-information estimator,
of the isotonic likelihood-ratio null of the monotonicity test and of the leakage
test's penalised logistic refits (at the end).

Arrays in, arrays out; no pandas, no validation (the public layer in
``_cmi.py`` and ``_citest.py`` validates once). Every kernel is a module-level
``@njit(cache=True)`` function so that compilation happens once per machine.

Representation used throughout: the joint space (x, y, z) has at most one
continuous coordinate ``c`` (a float64 array; zeros when there is none) and
its discrete coordinates are summarised by integer *keys*, one per space
(xyz, xz, yz, z): two points are in the same stratum of a space exactly when
their keys are equal. Distances in a space are ``|c_i - c_j|`` inside a
stratum (or 0 when the space has no continuous coordinate) and infinite across
strata (discrete coordinates must match exactly).

A *grouping* of the points by key (see :func:`group_by_key`) lists the points
sorted by key, then by ``c``; the kernels walk it in that order, so that
neighbour searches read contiguous memory.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = [
    "cmi_1d",
    "cmi_1d_groups",
    "group_by_key",
    "isotonic_lr_rows",
    "logistic_null",
    "newton_logistic",
    "pava",
    "permutation_null",
    "resample_estimates",
    "unit_permutation_null",
]


@njit(cache=True)
def group_by_key(order, key, c):
    """Group points by ``key``; ``order`` sorts the points by ``c``.

    Returns ``(members, glo, ghi, cs, tlo, thi)`` indexed by *position* ``u``
    in ``members``: the stratum occupies positions ``glo[u]:ghi[u]``, ``cs[u]``
    is the continuous value of ``members[u]`` and ``tlo[u]:thi[u]`` the run of
    positions of the stratum with exactly that value (ties).
    """
    n = order.shape[0]
    members = np.empty(n, np.int64)
    n_keys = 0
    for i in range(n):
        if key[i] + 1 > n_keys:
            n_keys = key[i] + 1
    if n_keys <= 2 * n + 1024:
        # stable counting sort of the c-sorted order by key
        start = np.zeros(n_keys + 1, np.int64)
        for i in range(n):
            start[key[i] + 1] += 1
        for j in range(n_keys):
            start[j + 1] += start[j]
        for t in range(n):
            i = order[t]
            members[start[key[i]]] = i
            start[key[i]] += 1
    else:
        ks = key[order]
        members[:] = order[np.argsort(ks, kind="mergesort")]
    glo = np.empty(n, np.int64)
    ghi = np.empty(n, np.int64)
    tlo = np.empty(n, np.int64)
    thi = np.empty(n, np.int64)
    cs = np.empty(n, np.float64)
    for u in range(n):
        cs[u] = c[members[u]]
    s = 0
    for t in range(1, n + 1):
        if t == n or key[members[t]] != key[members[s]]:
            ts = s
            for u in range(s, t + 1):
                if u == t or cs[u] != cs[ts]:
                    for w in range(ts, u):
                        tlo[w] = ts
                        thi[w] = u
                    ts = u
            for u in range(s, t):
                glo[u] = s
                ghi[u] = t
            s = t
    return members, glo, ghi, cs, tlo, thi


@njit(cache=True)
def _knn_radius(g, k, has_c):
    """Distance from each point to its k-th nearest other point in its stratum.

    ``inf`` when the stratum holds fewer than ``k`` other points (then every
    point of the stratum is a neighbour); 0 when the space has no continuous
    coordinate. Indexed by point.
    """
    members, glo, ghi, cs, tlo, thi = g
    n = members.shape[0]
    rho = np.empty(n, np.float64)
    for u in range(n):
        i = members[u]
        lo = glo[u]
        hi = ghi[u]
        if hi - lo - 1 < k:
            rho[i] = np.inf
            continue
        if not has_c or thi[u] - tlo[u] - 1 >= k:
            rho[i] = 0.0
            continue
        left = u - 1
        right = u + 1
        ci = cs[u]
        d = 0.0
        for _ in range(k):
            dl = ci - cs[left] if left >= lo else np.inf
            dr = cs[right] - ci if right < hi else np.inf
            if dl <= dr:
                d = dl
                left -= 1
            else:
                d = dr
                right += 1
        rho[i] = d
    return rho


@njit(cache=True)
def _count_within(g, rho, has_c):
    """Number of other points of the stratum at distance <= rho_i (galloping search)."""
    members, glo, ghi, cs, tlo, thi = g
    n = members.shape[0]
    out = np.empty(n, np.int64)
    for u in range(n):
        i = members[u]
        lo = glo[u]
        hi = ghi[u]
        r = rho[i]
        if not has_c or r == np.inf:
            out[i] = hi - lo - 1
            continue
        ci = cs[u]
        # right end: first position in [thi, hi) with cs - ci > r
        a = thi[u]  # every position before a is within r
        step = 1
        b = a
        while b < hi and cs[b] - ci <= r:
            a = b + 1
            b = a + step
            step *= 2
        if b > hi:
            b = hi
        while a < b:
            mid = (a + b) // 2
            if cs[mid] - ci > r:
                b = mid
            else:
                a = mid + 1
        right = a
        # left end: first position in [lo, tlo) with ci - cs <= r
        b = tlo[u]  # every position from b on is within r
        step = 1
        a = b - 1
        while a >= lo and ci - cs[a] <= r:
            b = a
            a = b - step
            step *= 2
        if a < lo - 1:
            a = lo - 1
        # positions a (if >= lo) fail; find the first success in (a, b]
        a += 1
        while a < b:
            mid = (a + b) // 2
            if ci - cs[mid] <= r:
                b = mid
            else:
                a = mid + 1
        out[i] = right - b - 1
    return out


@njit(cache=True)
def cmi_1d_groups(g_xyz, g_xz, g_yz, g_z, has_c, k, psi):
    """Mesner-Shalizi estimate from precomputed groupings of the four spaces.

    ``has_c`` (bool array of 4) says whether the continuous coordinate belongs
    to the xyz, xz, yz and z spaces. Returns ``(estimate, n_used)``; points
    alone in their joint stratum (no neighbour at all) are left out of the
    mean.
    """
    rho = _knn_radius(g_xyz, k, has_c[0])
    kt = _count_within(g_xyz, rho, has_c[0])
    nxz = _count_within(g_xz, rho, has_c[1])
    nyz = _count_within(g_yz, rho, has_c[2])
    nz = _count_within(g_z, rho, has_c[3])
    total = 0.0
    used = 0
    for i in range(kt.shape[0]):
        if kt[i] > 0:
            total += psi[kt[i]] - psi[nxz[i]] - psi[nyz[i]] + psi[nz[i]]
            used += 1
    if used == 0:
        return np.nan, 0
    return total / used, used


@njit(cache=True)
def cmi_1d(c, kxyz, kxz, kyz, kz, has_c, k, psi):
    """Mesner-Shalizi estimate with at most one continuous coordinate, O(n log n)."""
    order = np.argsort(c)
    return cmi_1d_groups(group_by_key(order, kxyz, c), group_by_key(order, kxz, c),
                         group_by_key(order, kyz, c), group_by_key(order, kz, c), has_c, k, psi)


@njit(cache=True)
def _shuffle_blocks(block_start, block_units, out):
    """Fisher-Yates shuffle of the units inside each block (uses numba's np.random)."""
    for b in range(block_start.shape[0] - 1):
        lo = block_start[b]
        hi = block_start[b + 1]
        for t in range(lo, hi):
            out[t] = block_units[t]
        for t in range(hi - 1, lo, -1):
            j = lo + np.random.randint(0, t - lo + 1)  # noqa: NPY002
            tmp = out[t]
            out[t] = out[j]
            out[j] = tmp


@njit(cache=True, parallel=True)
def permutation_null(c, dx, kyz, m_yz, kz, m_z, has_c, k, psi,
                     unit_start, unit_rows, block_start, block_units, seeds):
    """Estimates after permuting x among exchangeable units, one per seed.

    Units (rows, or whole contexts of equal size) are shuffled inside blocks;
    unit ``u`` at block position ``t`` receives the x values of the unit that
    the shuffle puts there, row by row. ``dx`` are compact codes of the
    discrete x coordinate, ``kyz`` / ``kz`` compact keys (``m_yz`` / ``m_z``
    distinct values) of the yz and z spaces, which the permutation leaves
    unchanged. Each resample seeds numba's generator with its own seed, so the
    result does not depend on the number of threads.
    """
    order = np.argsort(c)
    g_yz = group_by_key(order, kyz, c)
    g_z = group_by_key(order, kz, c)
    n_res = seeds.shape[0]
    out = np.empty(n_res, np.float64)
    for b in prange(n_res):
        np.random.seed(seeds[b])  # noqa: NPY002 (numba's per-thread state)
        shuffled = np.empty(block_units.shape[0], np.int64)
        _shuffle_blocks(block_start, block_units, shuffled)
        px = dx.copy()
        for t in range(block_units.shape[0]):
            u = block_units[t]
            v = shuffled[t]
            size = unit_start[u + 1] - unit_start[u]
            for r in range(size):
                px[unit_rows[unit_start[u] + r]] = dx[unit_rows[unit_start[v] + r]]
        kxyz = px * m_yz + kyz
        kxz = px * m_z + kz
        est, _ = cmi_1d_groups(group_by_key(order, kxyz, c), group_by_key(order, kxz, c),
                               g_yz, g_z, has_c, k, psi)
        out[b] = est
    return out


@njit(cache=True, parallel=True)
def resample_estimates(c, kxyz, kxz, kyz, kz, has_c, k, psi,
                       rows, offsets):
    """Estimates on resamples given as row lists ``rows[offsets[b]:offsets[b + 1]]``."""
    n_res = offsets.shape[0] - 1
    out = np.empty(n_res, np.float64)
    for b in prange(n_res):
        idx = rows[offsets[b]:offsets[b + 1]]
        est, _ = cmi_1d(c[idx], kxyz[idx], kxz[idx], kyz[idx], kz[idx], has_c, k, psi)
        out[b] = est
    return out


@njit(cache=True, parallel=True)
def unit_permutation_null(c, dx, y_unit, row_unit, m_y, kz, m_z, has_c, k, psi,
                          block_start, block_units, seeds):
    """Estimates after permuting a unit-level y among units, one per seed.

    ``y_unit[u]`` is the compact code (``m_y`` values) of the y of unit ``u``
    (a context whose rows all share it) and ``row_unit[i]`` the unit of row
    ``i``; units are shuffled inside blocks (positions
    ``block_units[block_start[j]:block_start[j + 1]]``) and every row takes the
    y of the unit its own unit's place went to. Units may have any number of
    rows. ``dx`` (compact codes of x) and ``kz`` (compact keys of z, ``m_z``
    values) are left unchanged. Each resample seeds numba's generator with its
    own seed, so the result does not depend on the number of threads.
    """
    order = np.argsort(c)
    kxz = dx * m_z + kz
    g_xz = group_by_key(order, kxz, c)
    g_z = group_by_key(order, kz, c)
    n_units = y_unit.shape[0]
    n = c.shape[0]
    n_res = seeds.shape[0]
    out = np.empty(n_res, np.float64)
    for b in prange(n_res):
        np.random.seed(seeds[b])  # noqa: NPY002 (numba's per-thread state)
        shuffled = np.empty(block_units.shape[0], np.int64)
        _shuffle_blocks(block_start, block_units, shuffled)
        source = np.arange(n_units)
        for t in range(block_units.shape[0]):
            source[block_units[t]] = shuffled[t]
        kyz = np.empty(n, np.int64)
        kxyz = np.empty(n, np.int64)
        for i in range(n):
            py = y_unit[source[row_unit[i]]]
            kyz[i] = py * m_z + kz[i]
            kxyz[i] = dx[i] * (m_y * m_z) + kyz[i]
        est, _ = cmi_1d_groups(group_by_key(order, kxyz, c), g_xz,
                               group_by_key(order, kyz, c), g_z, has_c, k, psi)
        out[b] = est
    return out


# --------------------------------------------------------------------------- isotonic
@njit(cache=True)
def pava(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted non-decreasing isotonic regression of ``y`` (pool adjacent violators).

    A stack of blocks (weighted mean, weight, length); each new point is pushed and
    merged with the block below while that block's mean is not smaller. Equal to
    :func:`sklearn.isotonic.isotonic_regression` up to rounding (the means are summed
    in another order; ``tests/decision/test_monotone.py`` checks 1e-12).
    """
    n = len(y)
    mean = np.empty(n)
    weight = np.empty(n)
    length = np.empty(n, dtype=np.int64)
    top = -1
    for i in range(n):
        top += 1
        mean[top] = y[i]
        weight[top] = w[i]
        length[top] = 1
        while top > 0 and mean[top - 1] >= mean[top]:
            total = weight[top - 1] + weight[top]
            mean[top - 1] = (weight[top - 1] * mean[top - 1] + weight[top] * mean[top]) / total
            weight[top - 1] = total
            length[top - 1] += length[top]
            top -= 1
    out = np.empty(n)
    k = 0
    for b in range(top + 1):
        for _ in range(length[b]):
            out[k] = mean[b]
            k += 1
    return out


@njit(cache=True)
def _binom_loglik(x: float, m: float, p: float) -> float:
    out = 0.0
    if x > 0.0:
        out += x * np.log(p)
    if m - x > 0.0:
        out += (m - x) * np.log1p(-p)
    return out


@njit(cache=True)
def isotonic_lr_rows(xs: np.ndarray, m: np.ndarray) -> np.ndarray:
    """The isotonic likelihood-ratio statistic of each row of successes ``xs`` (b, V)
    out of the trials ``m`` (V,), all positive: 0 when the shares are non-decreasing,
    else ``2 sum_k [l(x_k; x_k/m_k) - l(x_k; p_iso_k)]`` (values within 1e-10 of 0
    clipped at 0, as :func:`coherence._decision._monotone.isotonic_lr`)."""
    b, v = xs.shape
    out = np.empty(b)
    share = np.empty(v)
    for r in range(b):
        monotone = True
        for k in range(v):
            share[k] = xs[r, k] / m[k]
            if k > 0 and share[k] < share[k - 1]:
                monotone = False
        if monotone:
            out[r] = 0.0
            continue
        iso = pava(share, m)
        value = 0.0
        for k in range(v):
            value += _binom_loglik(xs[r, k], m[k], share[k]) - _binom_loglik(xs[r, k], m[k],
                                                                             iso[k])
        value *= 2.0
        out[r] = max(value, 0.0) if abs(value) < 1e-10 else value
    return out


# --------------------------------------------------------------------------- logistic
@njit(cache=True)
def _logistic_logits(xt, theta, link):
    """Class logits ``(xt theta^T) link^T`` of the linear predictors."""
    return np.dot(np.dot(xt, theta.T), link.T)


@njit(cache=True)
def _logistic_objective(z, a, theta, inv_c):
    n, n_classes = z.shape
    d = theta.shape[1] - 1
    nll = 0.0
    for i in range(n):
        zmax = z[i, 0]
        for k in range(1, n_classes):
            zmax = max(zmax, z[i, k])
        s = 0.0
        for k in range(n_classes):
            s += np.exp(z[i, k] - zmax)
        nll += zmax + np.log(s) - z[i, a[i]]
    pen = 0.0
    for g in range(theta.shape[0]):
        for j in range(d):
            pen += theta[g, j] * theta[g, j]
    return nll + 0.5 * inv_c * pen


@njit(cache=True)
def newton_logistic(xt, a, link, inv_c, theta0, step_tol, max_iter):
    """Newton's method with step halving for the L2-penalised multinomial logistic model.

    ``xt`` (n, d + 1): features with a last column of ones; ``a`` class codes;
    ``link`` (K, G) maps the G linear predictors to the K class logits; the
    penalty ``inv_c / 2 * ||theta[:, :d]||^2`` (intercepts free). Returns
    ``(theta, iterations)``, iterations -1 when not converged (a step below
    ``step_tol`` in every coordinate) after ``max_iter``.
    """
    n, dt = xt.shape
    n_classes, g = link.shape
    size = g * dt
    theta = theta0.copy()
    z = _logistic_logits(xt, theta, link)
    obj = _logistic_objective(z, a, theta, inv_c)
    prob = np.empty((n, n_classes))
    resid = np.empty((n, g))
    u = np.empty((n, g))
    xw = np.empty((n, dt))
    hess = np.empty((size, size))
    grad = np.empty(size)
    for it in range(1, max_iter + 1):
        for i in range(n):
            zmax = z[i, 0]
            for k in range(1, n_classes):
                zmax = max(zmax, z[i, k])
            s = 0.0
            for k in range(n_classes):
                prob[i, k] = np.exp(z[i, k] - zmax)
                s += prob[i, k]
            for k in range(n_classes):
                prob[i, k] /= s
            for q in range(g):
                r = 0.0
                v = 0.0
                for k in range(n_classes):
                    v += prob[i, k] * link[k, q]
                    r += ((prob[i, k] - 1.0) if k == a[i] else prob[i, k]) * link[k, q]
                u[i, q] = v
                resid[i, q] = r
        gmat = np.dot(resid.T, xt)
        for q in range(g):
            for j in range(dt):
                pen = inv_c * theta[q, j] if j < dt - 1 else 0.0
                grad[q * dt + j] = gmat[q, j] + pen
        for q in range(g):
            for h in range(q, g):
                for i in range(n):
                    w = -u[i, q] * u[i, h]
                    for k in range(n_classes):
                        w += prob[i, k] * link[k, q] * link[k, h]
                    for j in range(dt):
                        xw[i, j] = xt[i, j] * w
                block = np.dot(xt.T, xw)
                for j in range(dt):
                    for m in range(dt):
                        hess[q * dt + j, h * dt + m] = block[j, m]
                        hess[h * dt + m, q * dt + j] = block[j, m]
        for q in range(g):
            for j in range(dt - 1):
                hess[q * dt + j, q * dt + j] += inv_c
        step = np.linalg.solve(hess, grad)
        biggest = 0.0
        for s_ in range(size):
            biggest = max(biggest, abs(step[s_]))
        t = 1.0
        while True:
            new_theta = theta - t * step.reshape((g, dt))
            new_z = _logistic_logits(xt, new_theta, link)
            new_obj = _logistic_objective(new_z, a, new_theta, inv_c)
            if new_obj <= obj + 1e-12 * abs(obj) or t < 1e-8:
                break
            t *= 0.5
        theta = new_theta
        z = new_z
        obj = new_obj
        if t * biggest < step_tol:
            return theta, it
    return theta, -1


@njit(cache=True, parallel=True)
def logistic_null(designs, p, y_perms, a, train_idx, train_ptr, test_idx, test_ptr, link,
                  inv_c, theta0, step_tol, max_iter, floor):
    """The leakage test's permuted full-model refits, permutations in parallel.

    For each row ``b`` of ``y_perms`` and each fold ``f``: the full model's design
    ``[designs[f], y, y (p - 1/2), 1]`` on the fold's training rows
    (``train_idx[train_ptr[f]:train_ptr[f + 1]]``), :func:`newton_logistic` from
    ``theta0[f]``, and the summed log-loss of its predictions on the test rows
    (probabilities floored at ``floor``). Returns the total out-of-fold log-loss of
    each permutation and whether every fold's fit converged.
    """
    n_perm = y_perms.shape[0]
    n_folds, _, d0 = designs.shape
    n_classes = link.shape[0]
    dt = d0 + 3
    total = np.empty(n_perm)
    ok = np.ones(n_perm, dtype=np.bool_)
    for b in prange(n_perm):
        loss = 0.0
        for f in range(n_folds):
            lo, hi = train_ptr[f], train_ptr[f + 1]
            xt = np.empty((hi - lo, dt))
            a_train = np.empty(hi - lo, np.int64)
            for r in range(hi - lo):
                i = train_idx[lo + r]
                for j in range(d0):
                    xt[r, j] = designs[f, i, j]
                yi = float(y_perms[b, i])
                xt[r, d0] = yi
                xt[r, d0 + 1] = yi * (p[i] - 0.5)
                xt[r, d0 + 2] = 1.0
                a_train[r] = a[i]
            theta, it = newton_logistic(xt, a_train, link, inv_c, theta0[f], step_tol,
                                        max_iter)
            if it < 0:
                ok[b] = False
            coef = np.dot(theta.T, link.T)  # (dt, K): class logits per feature
            z = np.empty(n_classes)
            for r in range(test_ptr[f], test_ptr[f + 1]):
                i = test_idx[r]
                yi = float(y_perms[b, i])
                for k in range(n_classes):
                    s = coef[d0, k] * yi + coef[d0 + 1, k] * yi * (p[i] - 0.5) + coef[d0 + 2, k]
                    for j in range(d0):
                        s += designs[f, i, j] * coef[j, k]
                    z[k] = s
                zmax = z.max()
                den = 0.0
                for k in range(n_classes):
                    den += np.exp(z[k] - zmax)
                prob = np.exp(z[a[i]] - zmax) / den
                loss -= np.log(max(prob, floor))
        total[b] = loss
    return total, ok
