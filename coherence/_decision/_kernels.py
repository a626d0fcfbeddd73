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
def _start_chunk(acc, kt, psi, first, last):
    """``acc = psi(kt)`` at positions ``first:last`` (0 where kt = 0: left out)."""
    for i in range(first, last):
        acc[i] = psi_int(psi, kt[i]) if kt[i] > 0 else 0.0


@njit(cache=True)
def _add_chunk(acc, kt, cnt, psi, sign, first, last):
    """``acc += sign * psi(cnt)`` at positions ``first:last`` with kt > 0 (sign = +-1, so
    the terms are rounded exactly as ``psi(kt) - psi(nxz) - psi(nyz) + psi(nz)``)."""
    for i in range(first, last):
        if kt[i] > 0:
            acc[i] += sign * psi_int(psi, cnt[i])


@njit(cache=True)
def _sum_chunk(acc, kt, first, last):
    """Sum of the terms over positions ``first:last`` and how many points they are."""
    total = 0.0
    used = 0
    for i in range(first, last):
        if kt[i] > 0:
            total += acc[i]
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
def _mean_of_terms(acc, kt):
    n = acc.shape[0]
    n_chunks = max(1, (n + CHUNK - 1) // CHUNK)
    partial = np.empty(n_chunks, np.float64)
    used = np.empty(n_chunks, np.int64)
    for j in range(n_chunks):
        partial[j], used[j] = _sum_chunk(acc, kt, j * CHUNK, min(n, (j + 1) * CHUNK))
    return _finish(partial, used)


_SIGNS = (-1.0, -1.0, 1.0)  # of the xz, yz and z terms


@njit(cache=True)
def _joint_space(g_xyz, has_c, k, psi):
    """The joint space's pass: ``(rho, kt, acc, cnt)`` with ``acc = psi(kt)`` and ``cnt``
    a buffer for the marginal counts."""
    n = g_xyz[0].shape[0]
    rho = np.empty(n, np.float64)
    kt = np.empty(n, np.int64)
    _radius_chunk(g_xyz, k, has_c, 0, n, rho)
    _count_chunk(g_xyz, rho, has_c, 0, n, kt)
    acc = np.empty(n, np.float64)
    _start_chunk(acc, kt, psi, 0, n)
    return rho, kt, acc, np.empty(n, np.int64)


@njit(cache=True)
def _marginal_space(g, rho, has_c, kt, acc, cnt, psi, sign):
    """A marginal space's pass: its counts added to the terms with ``sign``."""
    n = rho.shape[0]
    _count_chunk(g, rho, has_c, 0, n, cnt)
    _add_chunk(acc, kt, cnt, psi, sign, 0, n)


@njit(cache=True)
def cmi_groups(g_xyz, g_xz, g_yz, g_z, has_c, k, psi):
    """Mesner-Shalizi estimate from the groupings of the four spaces, serially.

    ``has_c`` (bool array of 4) says whether the continuous coordinate belongs
    to the xyz, xz, yz and z spaces. Returns ``(estimate, n_used)``; points
    alone in their joint stratum (no neighbour at all) are left out of the
    mean.
    """
    rho, kt, acc, cnt = _joint_space(g_xyz, has_c[0], k, psi)
    _marginal_space(g_xz, rho, has_c[1], kt, acc, cnt, psi, _SIGNS[0])
    _marginal_space(g_yz, rho, has_c[2], kt, acc, cnt, psi, _SIGNS[1])
    _marginal_space(g_z, rho, has_c[3], kt, acc, cnt, psi, _SIGNS[2])
    return _mean_of_terms(acc, kt)


@njit(cache=True)
def cmi_sorted(cs, kxyz, kxz, kyz, kz, has_c, k, psi):
    """Mesner-Shalizi estimate of points already in the order of c, serially; one
    space's grouping alive at a time (the memory of one estimate stays ~110 bytes a
    point); equal to :func:`cmi_groups` to the last bit."""
    rho, kt, acc, cnt = _joint_space(group_sorted(kxyz, cs), has_c[0], k, psi)
    for space in range(1, 4):
        g = group_sorted(kxz if space == 1 else kyz if space == 2 else kz, cs)
        _marginal_space(g, rho, has_c[space], kt, acc, cnt, psi, _SIGNS[space - 1])
    return _mean_of_terms(acc, kt)


@njit(cache=True, parallel=True)
def _radius_parallel(g, k, has_c, rho):
    n = rho.shape[0]
    for j in prange(max(1, (n + CHUNK - 1) // CHUNK)):
        _radius_chunk(g, k, has_c, j * CHUNK, min(n, (j + 1) * CHUNK), rho)


@njit(cache=True, parallel=True)
def _count_parallel(g, rho, has_c, out):
    n = rho.shape[0]
    for j in prange(max(1, (n + CHUNK - 1) // CHUNK)):
        _count_chunk(g, rho, has_c, j * CHUNK, min(n, (j + 1) * CHUNK), out)


@njit(cache=True, parallel=True)
def _terms_parallel(acc, kt, cnt, psi, sign, start):
    n = acc.shape[0]
    for j in prange(max(1, (n + CHUNK - 1) // CHUNK)):
        if start:
            _start_chunk(acc, kt, psi, j * CHUNK, min(n, (j + 1) * CHUNK))
        else:
            _add_chunk(acc, kt, cnt, psi, sign, j * CHUNK, min(n, (j + 1) * CHUNK))


@njit(cache=True, parallel=True)
def _mean_parallel(acc, kt):
    n = acc.shape[0]
    n_chunks = max(1, (n + CHUNK - 1) // CHUNK)
    partial = np.empty(n_chunks, np.float64)
    used = np.empty(n_chunks, np.int64)
    for j in prange(n_chunks):
        partial[j], used[j] = _sum_chunk(acc, kt, j * CHUNK, min(n, (j + 1) * CHUNK))
    return _finish(partial, used)


@njit(cache=True)
def cmi_sorted_parallel(cs, kxyz, kxz, kyz, kz, has_c, k, psi):
    """:func:`cmi_sorted` with every pass in chunks on numba's threads (the groupings,
    counting sorts, stay serial); equal to it to the last bit."""
    n = cs.shape[0]
    rho = np.empty(n, np.float64)
    kt = np.empty(n, np.int64)
    g = group_sorted(kxyz, cs)
    _radius_parallel(g, k, has_c[0], rho)
    _count_parallel(g, rho, has_c[0], kt)
    acc = np.empty(n, np.float64)
    cnt = np.empty(n, np.int64)
    _terms_parallel(acc, kt, cnt, psi, 0.0, True)
    for space in range(1, 4):
        g = group_sorted(kxz if space == 1 else kyz if space == 2 else kz, cs)
        _count_parallel(g, rho, has_c[space], cnt)
        _terms_parallel(acc, kt, cnt, psi, _SIGNS[space - 1], False)
    return _mean_parallel(acc, kt)


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
# The leakage test's refits fit the L2-penalised multinomial logistic model on *counts*:
# row ``i`` of the design ``xt`` (features, then a column of ones) stands for ``cnt[i, k]``
# observations of class ``k``. Identical design rows of the training data are merged
# into one row with their class counts (the objective is the same sum of the same terms),
# which is what makes the permutation refits cheap: a belief-only design of 800 training
# rows and 21 distinct beliefs has at most 42 distinct (belief, outcome) rows.
@njit(cache=True)
def _logistic_probs(xt, cnt, link, theta, prob):
    """Class probabilities of the model ``theta`` at the rows of ``xt`` (written into
    ``prob``) and the negative log-likelihood of the counts ``cnt`` (no penalty)."""
    m, dt = xt.shape
    n_classes, g = link.shape
    eta = np.empty(g)
    nll = 0.0
    for i in range(m):
        for q in range(g):
            s = 0.0
            for j in range(dt):
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
def _cholesky_solve(h, b):
    """Solve ``h x = b`` for a symmetric positive definite ``h`` (overwritten by its
    Cholesky factor); ``False`` when ``h`` is not numerically positive definite."""
    n = h.shape[0]
    for j in range(n):
        s = h[j, j]
        for k in range(j):
            s -= h[j, k] * h[j, k]
        if not s > 0.0:
            return b, False
        d = np.sqrt(s)
        h[j, j] = d
        for i in range(j + 1, n):
            s = h[i, j]
            for k in range(j):
                s -= h[i, k] * h[j, k]
            h[i, j] = s / d
    return _cholesky_apply(h, b), True


@njit(cache=True)
def _cholesky_apply(h, b):
    """Solve ``h x = b`` from the Cholesky factor in the lower triangle of ``h``."""
    n = h.shape[0]
    x = b.copy()
    for i in range(n):
        s = x[i]
        for k in range(i):
            s -= h[i, k] * x[k]
        x[i] = s / h[i, i]
    for i in range(n - 1, -1, -1):
        s = x[i]
        for k in range(i + 1, n):
            s -= h[k, i] * x[k]
        x[i] = s / h[i, i]
    return x


@njit(cache=True)
def _fill_hessian(hess, blocks, g, dt, inv_c):
    """The penalised Hessian from its blocks ``blocks[:, pair * dt:(pair + 1) * dt]`` of the
    predictor pairs ``q <= h`` (in that order), mirrored; intercepts not penalised."""
    pair = 0
    for q in range(g):
        for h in range(q, g):
            for j in range(dt):
                for col in range(dt):
                    hess[q * dt + j, h * dt + col] = blocks[j, pair * dt + col]
                    hess[h * dt + col, q * dt + j] = blocks[j, pair * dt + col]
            pair += 1
    for q in range(g):
        for j in range(dt - 1):
            hess[q * dt + j, q * dt + j] += inv_c


@njit(cache=True)
def _gradient_hessian(xt, cnt, total, link, prob, theta, inv_c, grad, hess, xw):
    """The penalised objective's gradient (into ``grad``) and Hessian (into ``hess``) at
    ``theta``, whose class probabilities are ``prob``: one pass over the rows, then the
    blocks of the predictor pairs ``q <= h`` by one matrix product."""
    m, dt = xt.shape
    n_classes, g = link.shape
    u = np.empty(g)
    grad[:] = 0.0
    for i in range(m):
        for q in range(g):
            v = 0.0
            r = 0.0
            for k in range(n_classes):
                v += prob[i, k] * link[k, q]
                r += (total[i] * prob[i, k] - cnt[i, k]) * link[k, q]
            u[q] = v
            for j in range(dt):
                grad[q * dt + j] += r * xt[i, j]
        pair = 0
        for q in range(g):
            for h in range(q, g):
                w = -u[q] * u[h]
                for k in range(n_classes):
                    w += prob[i, k] * link[k, q] * link[k, h]
                w *= total[i]
                for j in range(dt):
                    xw[i, pair * dt + j] = xt[i, j] * w
                pair += 1
    blocks = np.dot(xt.T, xw)  # (dt, n_pairs * dt): the blocks q <= h at once
    _fill_hessian(hess, blocks, g, dt, inv_c)
    for q in range(g):
        for j in range(dt - 1):
            grad[q * dt + j] += inv_c * theta[q, j]
    return blocks


@njit(cache=True)
def _newton_step(hess, grad, blocks, g, dt, inv_c):
    """``hess^-1 grad`` by Cholesky (a general solver when not numerically positive
    definite) and whether Cholesky succeeded."""
    step, ok = _cholesky_solve(hess, grad)
    if not ok:
        _fill_hessian(hess, blocks, g, dt, inv_c)
        step = np.linalg.solve(hess, grad)
    return step, ok


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
def _halving_search(xt, cnt, link, inv_c, theta, step, obj, new_theta, new_prob):
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
        new_obj = (_logistic_probs(xt, cnt, link, new_theta, new_prob)
                   + _logistic_penalty(new_theta, inv_c))
        if new_obj <= obj + 1e-12 * abs(obj):
            return t, new_obj
        if t < 1e-8:
            return -1.0, new_obj
        t *= 0.5


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
    m, dt = xt.shape
    n_classes, g = link.shape
    size = g * dt
    theta = theta0.copy()
    prob = np.empty((m, n_classes))
    new_prob = np.empty((m, n_classes))
    obj = _logistic_probs(xt, cnt, link, theta, prob) + _logistic_penalty(theta, inv_c)
    total = _row_totals(cnt)
    xw = np.empty((m, g * (g + 1) // 2 * dt))
    grad = np.zeros(size)
    hess = np.empty((size, size))
    new_theta = np.empty_like(theta)
    for it in range(1, max_iter + 1):
        blocks = _gradient_hessian(xt, cnt, total, link, prob, theta, inv_c, grad, hess, xw)
        step, _ = _newton_step(hess, grad, blocks, g, dt, inv_c)
        biggest = np.max(np.abs(step))
        if biggest < step_tol:
            return theta - step.reshape((g, dt)), it
        t, new_obj = _halving_search(xt, cnt, link, inv_c, theta, step, obj, new_theta,
                                     new_prob)
        if t < 0.0:  # no descent along the Newton direction: not converged
            return theta, -1
        theta, new_theta = new_theta, theta
        prob, new_prob = new_prob, prob
        obj = new_obj
        if t == 1.0 and biggest < step_tol:
            return theta, it
    return theta, -1


@njit(cache=True)
def _gradient(xt, cnt, total, link, prob, theta, inv_c, grad):
    """The penalised objective's gradient alone (see :func:`_gradient_hessian`)."""
    m, dt = xt.shape
    n_classes, g = link.shape
    grad[:] = 0.0
    for i in range(m):
        for q in range(g):
            r = 0.0
            for k in range(n_classes):
                r += (total[i] * prob[i, k] - cnt[i, k]) * link[k, q]
            for j in range(dt):
                grad[q * dt + j] += r * xt[i, j]
    for q in range(g):
        for j in range(dt - 1):
            grad[q * dt + j] += inv_c * theta[q, j]


@njit(cache=True)
def newton_counts_chord(xt, cnt, link, inv_c, theta0, step_tol, max_iter):
    """:func:`newton_counts` that keeps the Hessian's factor while it works.

    From a warm start the Hessian changes little: each iteration solves with the last
    Cholesky factor (a gradient pass and two triangular solves instead of the
    Hessian's matrix product and factorisation) and refreshes the Hessian only when a
    step did not shrink at least fourfold, or needed halving (or the Hessian was not
    positive definite). The convergence is then linear, not quadratic, hence a tighter
    ``step_tol`` for the same accuracy (the leakage null uses 1e-9: the optimum to
    about 1e-10). Returns ``(theta, iterations)``, iterations -1 when not converged
    after ``max_iter`` or when halving the step does not lower the objective.
    """
    m, dt = xt.shape
    n_classes, g = link.shape
    size = g * dt
    theta = theta0.copy()
    prob = np.empty((m, n_classes))
    new_prob = np.empty((m, n_classes))
    obj = _logistic_probs(xt, cnt, link, theta, prob) + _logistic_penalty(theta, inv_c)
    total = _row_totals(cnt)
    xw = np.empty((m, g * (g + 1) // 2 * dt))
    grad = np.zeros(size)
    hess = np.empty((size, size))
    new_theta = np.empty_like(theta)
    fresh = True
    factored = False
    previous = np.inf
    for it in range(1, max_iter + 1):
        if fresh or not factored:
            blocks = _gradient_hessian(xt, cnt, total, link, prob, theta, inv_c, grad, hess,
                                       xw)
            step, factored = _newton_step(hess, grad, blocks, g, dt, inv_c)
            fresh = False
        else:
            _gradient(xt, cnt, total, link, prob, theta, inv_c, grad)
            step = _cholesky_apply(hess, grad)
        biggest = np.max(np.abs(step))
        if biggest < step_tol:
            return theta - step.reshape((g, dt)), it
        if biggest > 0.25 * previous:
            fresh = True
        previous = biggest
        t, new_obj = _halving_search(xt, cnt, link, inv_c, theta, step, obj, new_theta,
                                     new_prob)
        if t < 0.0:
            return theta, -1
        if t < 1.0:  # the step needed halving: refresh the Hessian
            fresh = True
        theta, new_theta = new_theta, theta
        prob, new_prob = new_prob, prob
        obj = new_obj
    return theta, -1


#: A decision of scikit-learn's solver (a line-search test, a stopping test) whose two
#: sides are this close, relatively, is not replicated: the fit goes to scikit-learn.
_DECISION_BAND = 1e-6


@njit(cache=True)
def _sklearn_max_gradient(xt, cnt, total, link, prob, theta, inv_c):
    """The largest coordinate of the gradient of the *summed* objective in
    scikit-learn's coordinates: the binomial coefficient vector for two classes, else
    the K class vectors ``link @ theta`` with the last class's intercept left out."""
    m, dt = xt.shape
    n_classes = link.shape[0]
    first = 1 if n_classes == 2 else 0
    coef = np.dot(link, theta)  # (K, dt)
    biggest = 0.0
    for k in range(first, n_classes):
        for j in range(dt):
            if j == dt - 1 and k == n_classes - 1 and n_classes > 2:
                continue
            s = 0.0
            for i in range(m):
                s += xt[i, j] * (total[i] * prob[i, k] - cnt[i, k])
            if j < dt - 1:
                s += inv_c * coef[k, j]
            biggest = max(biggest, abs(s))
    return biggest


@njit(cache=True)
def sklearn_newton(xt, cnt, link, inv_c, tol, max_iter):
    """scikit-learn's ``LogisticRegression(solver='newton-cholesky')`` replayed on counts.

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
    obj = (_logistic_probs(xt, cnt, link, theta, prob) + _logistic_penalty(theta, inv_c)) / n_obs
    xw = np.empty((m, g * (g + 1) // 2 * dt))
    grad = np.zeros(size)
    hess = np.empty((size, size))
    eps16 = 16.0 * np.finfo(np.float64).eps
    for it in range(1, max_iter + 1):
        blocks = _gradient_hessian(xt, cnt, total, link, prob, theta, inv_c, grad, hess, xw)
        step, ok = _newton_step(hess, grad, blocks, g, dt, inv_c)
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
            new_obj = (_logistic_probs(xt, cnt, link, new_theta, new_prob)
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
        q1 = _sklearn_max_gradient(xt, cnt, total, link, prob, theta, inv_c) / n_obs / tol
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
def _merge_rows(rows, key, y_perm, a, urows, up, m, n_classes, cnt, xt):
    """Merge the observations ``rows`` by (distinct base row ``key[i]``, outcome): the full
    design ``[urows[key], y, y (p - 1/2), 1]`` of each distinct pair, written into the
    first rows of ``xt``, and its class counts into ``cnt``. Returns how many rows."""
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
            for j in range(d0):
                xt[s, j] = urows[u, j]
            xt[s, d0] = float(yi)
            xt[s, d0 + 1] = yi * (up[u] - 0.5)
            xt[s, d0 + 2] = 1.0
            for k in range(n_classes):
                cnt[s, k] = 0.0
        cnt[s, a[i]] += 1.0
    return used


@njit(cache=True, parallel=True)
def logistic_null(urows, up, keys, n_unique, y_perms, a, train_idx, train_ptr, test_idx,
                  test_ptr, link, inv_c, theta0, step_tol, max_iter, floor, emulate, tol):
    """The leakage test's permuted full-model refits, permutations in parallel.

    Fold ``f``'s base design has ``n_unique[f]`` distinct rows ``urows[f, :n_unique[f]]``
    (with the belief ``up[f, u]`` of each); ``keys[f, i]`` is row ``i``'s. For each row
    ``b`` of ``y_perms`` and each fold: the training rows
    (``train_idx[train_ptr[f]:train_ptr[f + 1]]``) merged by (distinct base row,
    outcome) into the full design ``[urows, y, y (p - 1/2), 1]`` with class counts
    (see :func:`_merge_rows`), :func:`newton_counts_chord` from ``theta0[f]``, and the
    summed log-loss of its predictions on the test rows (merged the same way;
    probabilities floored at ``floor``). With ``emulate``, each fit is instead
    :func:`sklearn_newton` (scikit-learn's iterates from zero, its stopping rule at
    ``tol``). Returns the total out-of-fold log-loss of each permutation and whether
    every fold's fit converged (with ``emulate``: was replayed).
    """
    n_perm = y_perms.shape[0]
    n_folds, m_max, d0 = urows.shape
    n_classes = link.shape[0]
    dt = d0 + 3
    total = np.empty(n_perm)
    ok = np.ones(n_perm, dtype=np.bool_)
    for b in prange(n_perm):
        xt_buf = np.empty((2 * m_max, dt))
        cnt_buf = np.empty((2 * m_max, n_classes))
        prob = np.empty((2 * m_max, n_classes))
        y_perm = y_perms[b]
        loss = 0.0
        for f in range(n_folds):
            m = n_unique[f]
            used = _merge_rows(train_idx[train_ptr[f]:train_ptr[f + 1]], keys[f], y_perm, a,
                               urows[f], up[f], m, n_classes, cnt_buf, xt_buf)
            if emulate:
                theta, it = sklearn_newton(xt_buf[:used], cnt_buf[:used], link, inv_c, tol,
                                           max_iter)
            else:
                theta, it = newton_counts_chord(xt_buf[:used], cnt_buf[:used], link, inv_c,
                                                theta0[f], step_tol, max_iter)
            if it <= 0:
                ok[b] = False
            used = _merge_rows(test_idx[test_ptr[f]:test_ptr[f + 1]], keys[f], y_perm, a,
                               urows[f], up[f], m, n_classes, cnt_buf, xt_buf)
            _logistic_probs(xt_buf[:used], cnt_buf[:used], link, theta, prob[:used])
            for s in range(used):
                for k in range(n_classes):
                    if cnt_buf[s, k] > 0.0:
                        loss -= cnt_buf[s, k] * np.log(max(prob[s, k], floor))
        total[b] = loss
    return total, ok
