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

The estimate works on the points *relabelled in the order of c* (position ``i``
is the point of rank ``i``; :func:`cmi_sorted`). A *grouping* of a space (see
:func:`group_sorted`) lists the positions stratum by stratum (``members``,
stable, so increasing inside a stratum), the stratum boundaries (``bounds``) and
the c values in that order (``cg``, non-decreasing inside a stratum). Every pass
then reads and writes memory in a few monotone streams, which is what keeps one
estimate O(n log n) in time *and* in cache misses up to n = 10^7 (indexing the
points in their original order made every access random and the estimate
superlinear beyond the cache). Each pass works on fixed chunks of positions
(:data:`CHUNK`) and the final sum adds the chunks' partial sums in order, so the
serial and the parallel estimate (chunks on numba's threads, for large n) are
equal to the last bit whatever the number of threads.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = [
    "CHUNK",
    "cmi_1d",
    "cmi_sorted",
    "cmi_sorted_parallel",
    "group_sorted",
    "isotonic_lr_rows",
    "logistic_null",
    "newton_logistic",
    "pava",
    "permutation_null",
    "psi_int",
    "resample_estimates",
    "sorted_keys",
    "sorted_keys_parallel",
    "unit_permutation_null",
]

#: Positions per chunk of the estimate's passes and of its final sum.
CHUNK = 1 << 16


@njit(cache=True)
def psi_int(table, m):
    """Digamma of the integer ``m >= 1``: ``table[m]`` below the table's end, else the
    asymptotic series (exact to a unit in the last place for m >= 1024)."""
    if m < table.shape[0]:
        return table[m]
    x = float(m)
    inv2 = 1.0 / (x * x)
    return (np.log(x) - 0.5 / x
            - inv2 * (1.0 / 12.0 - inv2 * (1.0 / 120.0 - inv2 * (1.0 / 252.0
                                                                  - inv2 / 240.0))))


@njit(cache=True)
def group_sorted(key, cs):
    """Group the c-sorted positions by ``key``.

    Returns ``(members, bounds, cg)``: ``members`` the positions grouped by key
    (stable, so increasing inside a stratum), stratum ``s`` at
    ``members[bounds[s]:bounds[s + 1]]`` (non-empty strata only) and
    ``cg = cs[members]``.
    """
    n = key.shape[0]
    members = np.empty(n, np.int64)
    n_keys = 0
    low = 0
    for i in range(n):
        if key[i] + 1 > n_keys:
            n_keys = key[i] + 1
        if key[i] < low:
            low = key[i]
    if n == 0:
        return members, np.zeros(1, np.int64), np.empty(0, np.float64)
    if low >= 0 and n_keys <= 2 * n + 1024:  # stable counting sort by key
        start = np.zeros(n_keys + 1, np.int64)
        for i in range(n):
            start[key[i] + 1] += 1
        n_strata = 0
        for j in range(n_keys):
            if start[j + 1] > 0:
                n_strata += 1
            start[j + 1] += start[j]
        bounds = np.empty(n_strata + 1, np.int64)
        s = 0
        for j in range(n_keys):
            if start[j + 1] > start[j]:
                bounds[s] = start[j]
                s += 1
        bounds[n_strata] = n
        for i in range(n):
            members[start[key[i]]] = i
            start[key[i]] += 1
    else:
        members[:] = np.argsort(key, kind="mergesort")
        n_strata = 1
        for t in range(1, n):
            if key[members[t]] != key[members[t - 1]]:
                n_strata += 1
        bounds = np.empty(n_strata + 1, np.int64)
        bounds[0] = 0
        s = 1
        for t in range(1, n):
            if key[members[t]] != key[members[t - 1]]:
                bounds[s] = t
                s += 1
        bounds[n_strata] = n
    cg = np.empty(n, np.float64)
    for u in range(n):
        cg[u] = cs[members[u]]
    return members, bounds, cg


@njit(cache=True)
def _stratum_of(bounds, u):
    """Index of the stratum holding position ``u`` (binary search in ``bounds``)."""
    lo = 0
    hi = bounds.shape[0] - 1
    while hi - lo > 1:
        mid = (lo + hi) // 2
        if bounds[mid] <= u:
            lo = mid
        else:
            hi = mid
    return lo


@njit(cache=True)
def _run_start(cg, lo, u):
    """First position in ``[lo, u]`` whose value equals ``cg[u]`` (cg sorted there)."""
    a = lo
    b = u
    v = cg[u]
    while a < b:
        mid = (a + b) // 2
        if cg[mid] < v:
            a = mid + 1
        else:
            b = mid
    return a


@njit(cache=True)
def _run_end(cg, u, hi):
    """One past the last position in ``[u, hi)`` whose value equals ``cg[u]``."""
    v = cg[u]
    a = u + 1  # every position before a holds v
    step = 1
    b = a
    while b < hi and cg[b] == v:
        a = b + 1
        b = a + step
        step *= 2
    if b > hi:
        b = hi
    while a < b:
        mid = (a + b) // 2
        if cg[mid] > v:
            b = mid
        else:
            a = mid + 1
    return a


@njit(cache=True)
def _radius_chunk(g, k, has_c, first, last, rho):
    """``rho`` (by position) of the positions ``members[first:last]``: the distance to
    the k-th nearest other point of the stratum; ``inf`` when the stratum holds fewer
    than ``k`` other points, 0 when the space has no continuous coordinate."""
    members, bounds, cg = g
    s = _stratum_of(bounds, first)
    u = first
    while u < last:
        lo = bounds[s]
        hi = bounds[s + 1]
        stop = min(hi, last)
        if hi - lo - 1 < k or not has_c:
            value = np.inf if hi - lo - 1 < k else 0.0
            for w in range(u, stop):
                rho[members[w]] = value
        else:
            ts = _run_start(cg, lo, u)
            te = _run_end(cg, u, hi)
            for w in range(u, stop):
                if w >= te:
                    ts = w
                    te = _run_end(cg, w, hi)
                if te - ts - 1 >= k:
                    rho[members[w]] = 0.0
                    continue
                left = w - 1
                right = w + 1
                ci = cg[w]
                d = 0.0
                for _ in range(k):
                    dl = ci - cg[left] if left >= lo else np.inf
                    dr = cg[right] - ci if right < hi else np.inf
                    if dl <= dr:
                        d = dl
                        left -= 1
                    else:
                        d = dr
                        right += 1
                rho[members[w]] = d
        u = stop
        s += 1


@njit(cache=True)
def _count_chunk(g, rho, has_c, first, last, out):
    """``out`` (by position) of the positions ``members[first:last]``: the number of
    other points of the stratum at distance <= rho (galloping from the tie run)."""
    members, bounds, cg = g
    s = _stratum_of(bounds, first)
    u = first
    while u < last:
        lo = bounds[s]
        hi = bounds[s + 1]
        stop = min(hi, last)
        if not has_c:
            for w in range(u, stop):
                out[members[w]] = hi - lo - 1
        else:
            ts = _run_start(cg, lo, u)
            te = _run_end(cg, u, hi)
            for w in range(u, stop):
                if w >= te:
                    ts = w
                    te = _run_end(cg, w, hi)
                i = members[w]
                r = rho[i]
                if r == np.inf:
                    out[i] = hi - lo - 1
                    continue
                ci = cg[w]
                # right end: first position in [te, hi) with cg - ci > r
                a = te
                step = 1
                b = a
                while b < hi and cg[b] - ci <= r:
                    a = b + 1
                    b = a + step
                    step *= 2
                if b > hi:
                    b = hi
                while a < b:
                    mid = (a + b) // 2
                    if cg[mid] - ci > r:
                        b = mid
                    else:
                        a = mid + 1
                right = a
                # left end: first position in [lo, ts) with ci - cg <= r
                b = ts
                step = 1
                a = b - 1
                while a >= lo and ci - cg[a] <= r:
                    b = a
                    a = b - step
                    step *= 2
                if a < lo - 1:
                    a = lo - 1
                a += 1
                while a < b:
                    mid = (a + b) // 2
                    if ci - cg[mid] <= r:
                        b = mid
                    else:
                        a = mid + 1
                out[i] = right - b - 1
        u = stop
        s += 1


@njit(cache=True)
def _sum_chunk(kt, nxz, nyz, nz, psi, first, last):
    """Sum of the estimate's terms over positions ``first:last`` (points with kt > 0)."""
    total = 0.0
    used = 0
    for i in range(first, last):
        if kt[i] > 0:
            total += (psi_int(psi, kt[i]) - psi_int(psi, nxz[i]) - psi_int(psi, nyz[i])
                      + psi_int(psi, nz[i]))
            used += 1
    return total, used


@njit(cache=True)
def _finish(partial, used):
    """The estimate from the chunks' partial sums, added in chunk order."""
    total = 0.0
    count = 0
    for j in range(partial.shape[0]):
        total += partial[j]
        count += used[j]
    if count == 0:
        return np.nan, 0
    return total / count, count


@njit(cache=True)
def cmi_groups(g_xyz, g_xz, g_yz, g_z, has_c, k, psi):
    """Mesner-Shalizi estimate from the groupings of the four spaces, serially.

    ``has_c`` (bool array of 4) says whether the continuous coordinate belongs
    to the xyz, xz, yz and z spaces. Returns ``(estimate, n_used)``; points
    alone in their joint stratum (no neighbour at all) are left out of the
    mean.
    """
    n = g_xyz[0].shape[0]
    n_chunks = max(1, (n + CHUNK - 1) // CHUNK)
    rho = np.empty(n, np.float64)
    kt = np.empty(n, np.int64)
    nxz = np.empty(n, np.int64)
    nyz = np.empty(n, np.int64)
    nz = np.empty(n, np.int64)
    _radius_chunk(g_xyz, k, has_c[0], 0, n, rho)
    _count_chunk(g_xyz, rho, has_c[0], 0, n, kt)
    _count_chunk(g_xz, rho, has_c[1], 0, n, nxz)
    _count_chunk(g_yz, rho, has_c[2], 0, n, nyz)
    _count_chunk(g_z, rho, has_c[3], 0, n, nz)
    partial = np.empty(n_chunks, np.float64)
    used = np.empty(n_chunks, np.int64)
    for j in range(n_chunks):
        partial[j], used[j] = _sum_chunk(kt, nxz, nyz, nz, psi, j * CHUNK,
                                         min(n, (j + 1) * CHUNK))
    return _finish(partial, used)


@njit(cache=True, parallel=True)
def _cmi_groups_parallel(g_xyz, g_xz, g_yz, g_z, has_c, k, psi):
    """:func:`cmi_groups` with every pass split into chunks on numba's threads."""
    n = g_xyz[0].shape[0]
    n_chunks = max(1, (n + CHUNK - 1) // CHUNK)
    rho = np.empty(n, np.float64)
    kt = np.empty(n, np.int64)
    nxz = np.empty(n, np.int64)
    nyz = np.empty(n, np.int64)
    nz = np.empty(n, np.int64)
    for j in prange(n_chunks):
        _radius_chunk(g_xyz, k, has_c[0], j * CHUNK, min(n, (j + 1) * CHUNK), rho)
    for j in prange(4 * n_chunks):
        space = j // n_chunks
        first = (j % n_chunks) * CHUNK
        last = min(n, first + CHUNK)
        if space == 0:
            _count_chunk(g_xyz, rho, has_c[0], first, last, kt)
        elif space == 1:
            _count_chunk(g_xz, rho, has_c[1], first, last, nxz)
        elif space == 2:
            _count_chunk(g_yz, rho, has_c[2], first, last, nyz)
        else:
            _count_chunk(g_z, rho, has_c[3], first, last, nz)
    partial = np.empty(n_chunks, np.float64)
    used = np.empty(n_chunks, np.int64)
    for j in prange(n_chunks):
        partial[j], used[j] = _sum_chunk(kt, nxz, nyz, nz, psi, j * CHUNK,
                                         min(n, (j + 1) * CHUNK))
    return _finish(partial, used)


@njit(cache=True)
def cmi_sorted(cs, kxyz, kxz, kyz, kz, has_c, k, psi):
    """Mesner-Shalizi estimate of points already in the order of c, serially."""
    return cmi_groups(group_sorted(kxyz, cs), group_sorted(kxz, cs), group_sorted(kyz, cs),
                      group_sorted(kz, cs), has_c, k, psi)


@njit(cache=True)
def cmi_sorted_parallel(cs, kxyz, kxz, kyz, kz, has_c, k, psi):
    """:func:`cmi_sorted` on numba's threads; equal to it to the last bit."""
    return _cmi_groups_parallel(group_sorted(kxyz, cs), group_sorted(kxz, cs),
                                group_sorted(kyz, cs), group_sorted(kz, cs), has_c, k, psi)


@njit(cache=True)
def _gather_chunk(order, c, kxyz, kxz, kyz, kz, cs, out, first, last):
    for i in range(first, last):
        j = order[i]
        cs[i] = c[j]
        out[0, i] = kxyz[j]
        out[1, i] = kxz[j]
        out[2, i] = kyz[j]
        out[3, i] = kz[j]


@njit(cache=True)
def sorted_keys(order, c, kxyz, kxz, kyz, kz):
    """``c`` and the four keys gathered in ``order`` (one pass)."""
    n = order.shape[0]
    cs = np.empty(n, np.float64)
    out = np.empty((4, n), np.int64)
    _gather_chunk(order, c, kxyz, kxz, kyz, kz, cs, out, 0, n)
    return cs, out[0], out[1], out[2], out[3]


@njit(cache=True, parallel=True)
def sorted_keys_parallel(order, c, kxyz, kxz, kyz, kz):
    """:func:`sorted_keys` in chunks on numba's threads."""
    n = order.shape[0]
    cs = np.empty(n, np.float64)
    out = np.empty((4, n), np.int64)
    n_chunks = max(1, (n + CHUNK - 1) // CHUNK)
    for j in prange(n_chunks):
        _gather_chunk(order, c, kxyz, kxz, kyz, kz, cs, out, j * CHUNK,
                      min(n, (j + 1) * CHUNK))
    return cs, out[0], out[1], out[2], out[3]


@njit(cache=True)
def cmi_1d(c, kxyz, kxz, kyz, kz, has_c, k, psi):
    """Mesner-Shalizi estimate with at most one continuous coordinate, O(n log n), serially
    (points in any order: sorts them by c first)."""
    order = np.argsort(c, kind="mergesort")
    return cmi_sorted(c[order], kxyz[order], kxz[order], kyz[order], kz[order], has_c, k, psi)


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
    order = np.argsort(c, kind="mergesort")
    cs = c[order]
    kyz_s = kyz[order]
    kz_s = kz[order]
    g_yz = group_sorted(kyz_s, cs)
    g_z = group_sorted(kz_s, cs)
    n = c.shape[0]
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
        kxyz = np.empty(n, np.int64)
        kxz = np.empty(n, np.int64)
        for i in range(n):
            x = px[order[i]]
            kxyz[i] = x * m_yz + kyz_s[i]
            kxz[i] = x * m_z + kz_s[i]
        est, _ = cmi_groups(group_sorted(kxyz, cs), group_sorted(kxz, cs), g_yz, g_z, has_c,
                            k, psi)
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
    order = np.argsort(c, kind="mergesort")
    cs = c[order]
    dx_s = dx[order]
    kz_s = kz[order]
    unit_s = row_unit[order]
    kxz = dx_s * m_z + kz_s
    g_xz = group_sorted(kxz, cs)
    g_z = group_sorted(kz_s, cs)
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
            py = y_unit[source[unit_s[i]]]
            kyz[i] = py * m_z + kz_s[i]
            kxyz[i] = dx_s[i] * (m_y * m_z) + kyz[i]
        est, _ = cmi_groups(group_sorted(kxyz, cs), g_xz, group_sorted(kyz, cs), g_z,
                            has_c, k, psi)
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
