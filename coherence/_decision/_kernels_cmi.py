"""Numba kernels of the mixed-data kNN (conditional) mutual-information estimator.

Arrays in, arrays out; no pandas, no validation (the public layer in
``_cmi.py`` and ``_citest.py`` validates once). Every kernel is a module-level
``@njit(cache=True)`` function so that compilation happens once per machine.
The isotonic null of the monotonicity test lives in ``_kernels_isotonic.py``, the
leakage test's logistic refits in ``_kernels_logistic.py``.

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
from numba import njit
from numba import prange

__all__ = [
    "CHUNK",
    "cmi_1d",
    "cmi_sorted",
    "cmi_sorted_parallel",
    "group_sorted",
    "permutation_null",
    "psi_int",
    "resample_estimates",
    "simulated_estimates",
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
def _gallop_above(cg, a, hi, ci, r):
    """First position in ``[a, hi)`` with ``cg - ci > r``, every position before ``a``
    having ``cg - ci <= r`` (cg sorted there): galloping from ``a``, then bisection."""
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
    return a


@njit(cache=True)
def _run_end(cg, u, hi):
    """One past the last position in ``[u, hi)`` whose value equals ``cg[u]`` (for
    finite values ``x - v > 0`` exactly when ``x > v``)."""
    return _gallop_above(cg, u + 1, hi, cg[u], 0.0)


@njit(cache=True, inline="always")
def _radius_at(cg, lo, hi, ts, te, w, k):
    """Distance from position ``w`` to the k-th nearest other point of its stratum
    ``[lo, hi)`` (which holds at least ``k`` others), ``[ts, te)`` being its tie run."""
    if te - ts - 1 >= k:
        return 0.0
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
    return d


@njit(cache=True, inline="always")
def _count_at(cg, lo, hi, ts, te, w, r):
    """Number of other points of the stratum ``[lo, hi)`` at distance <= ``r`` from position
    ``w``, galloping out from its tie run ``[ts, te)``."""
    if r == np.inf:
        return hi - lo - 1
    ci = cg[w]
    # right end: first position in [te, hi) with cg - ci > r
    right = _gallop_above(cg, te, hi, ci, r)
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
    return right - b - 1


@njit(cache=True)
def _walk_chunk(g, k, has_c, rho, first, last, out):
    """One pass over the positions ``members[first:last]``, stratum by stratum, tracking
    each position's tie run; ``out`` by position.

    With ``rho`` None, the radius pass: ``out`` is the distance to the k-th nearest other
    point of the stratum (``inf`` when the stratum holds fewer than ``k`` other points, 0
    when the space has no continuous coordinate). Otherwise the count pass: ``out`` is the
    number of other points of the stratum at distance <= rho. Numba prunes the branches
    on ``rho is None`` when it compiles, so each pass runs only its own code.
    """
    members, bounds, cg = g
    s = _stratum_of(bounds, first)
    u = first
    while u < last:
        lo = bounds[s]
        hi = bounds[s + 1]
        stop = min(hi, last)
        others = hi - lo - 1
        if not has_c or (rho is None and others < k):
            for w in range(u, stop):
                if rho is None:
                    out[members[w]] = np.inf if others < k else 0.0
                else:
                    out[members[w]] = others
        else:
            ts = _run_start(cg, lo, u)
            te = _run_end(cg, u, hi)
            for w in range(u, stop):
                if w >= te:
                    ts = w
                    te = _run_end(cg, w, hi)
                if rho is None:
                    out[members[w]] = _radius_at(cg, lo, hi, ts, te, w, k)
                else:
                    out[members[w]] = _count_at(cg, lo, hi, ts, te, w, rho[members[w]])
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
def _chunk_sums(n):
    """Buffers for the chunks' partial sums and counts (one chunk when ``n`` is 0)."""
    n_chunks = max(1, (n + CHUNK - 1) // CHUNK)
    return np.empty(n_chunks, np.float64), np.empty(n_chunks, np.int64)


@njit(cache=True)
def _mean_of_terms(acc, kt):
    n = acc.shape[0]
    partial, used = _chunk_sums(n)
    for j in range(partial.shape[0]):
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
    _walk_chunk(g_xyz, k, has_c, None, 0, n, rho)
    _walk_chunk(g_xyz, k, has_c, rho, 0, n, kt)
    acc = np.empty(n, np.float64)
    _start_chunk(acc, kt, psi, 0, n)
    return rho, kt, acc, np.empty(n, np.int64)


@njit(cache=True)
def _marginal_space(g, rho, has_c, kt, acc, cnt, psi, sign):
    """A marginal space's pass: its counts added to the terms with ``sign``."""
    n = rho.shape[0]
    _walk_chunk(g, 0, has_c, rho, 0, n, cnt)
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
def _walk_parallel(g, k, has_c, rho, out):
    """:func:`_walk_chunk` over all positions, in chunks on numba's threads."""
    n = out.shape[0]
    for j in prange(max(1, (n + CHUNK - 1) // CHUNK)):
        _walk_chunk(g, k, has_c, rho, j * CHUNK, min(n, (j + 1) * CHUNK), out)


@njit(cache=True, parallel=True)
def _terms_parallel(acc, kt, cnt, psi, sign, start):
    n = acc.shape[0]
    for j in prange(max(1, (n + CHUNK - 1) // CHUNK)):
        if start:
            _start_chunk(acc, kt, psi, j * CHUNK, min(n, (j + 1) * CHUNK))
        else:
            _add_chunk(acc, kt, cnt, psi, sign, j * CHUNK, min(n, (j + 1) * CHUNK))


@njit(cache=True)
def cmi_sorted_parallel(cs, kxyz, kxz, kyz, kz, has_c, k, psi):
    """:func:`cmi_sorted` with every pass in chunks on numba's threads (the groupings,
    counting sorts, stay serial); equal to it to the last bit."""
    n = cs.shape[0]
    rho = np.empty(n, np.float64)
    kt = np.empty(n, np.int64)
    g = group_sorted(kxyz, cs)
    _walk_parallel(g, k, has_c[0], None, rho)
    _walk_parallel(g, k, has_c[0], rho, kt)
    acc = np.empty(n, np.float64)
    cnt = np.empty(n, np.int64)
    _terms_parallel(acc, kt, cnt, psi, 0.0, True)
    for space in range(1, 4):
        g = group_sorted(kxz if space == 1 else kyz if space == 2 else kz, cs)
        _walk_parallel(g, 0, has_c[space], rho, cnt)
        _terms_parallel(acc, kt, cnt, psi, _SIGNS[space - 1], False)
    # the mean is one pass over the terms, serially: the same chunk sums in the same order
    return _mean_of_terms(acc, kt)


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


@njit(cache=True)
def _seeded_shuffle(seed, block_start, block_units):
    """One resample's shuffle of the units inside their blocks, numba's generator (the
    calling thread's state) seeded with the resample's own ``seed``."""
    np.random.seed(seed)  # noqa: NPY002 (numba's per-thread state)
    shuffled = np.empty(block_units.shape[0], np.int64)
    _shuffle_blocks(block_start, block_units, shuffled)
    return shuffled


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
        shuffled = _seeded_shuffle(seeds[b], block_start, block_units)
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
        shuffled = _seeded_shuffle(seeds[b], block_start, block_units)
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


@njit(cache=True, parallel=True)
def simulated_estimates(c, x_sims, y_sims, m_x, m_y, kz, m_z, has_c, k, psi):
    """Estimates on simulated studies that share the conditioning values: row ``b`` of
    ``x_sims`` and ``y_sims`` holds the codes of x (``m_x`` values) and y (``m_y``
    values) of study ``b``; ``c`` and ``kz`` (compact keys of z, ``m_z`` values) are
    the data's. The points are sorted by ``c`` once; each study groups its own keys.
    """
    order = np.argsort(c, kind="mergesort")
    cs = c[order]
    kz_s = kz[order]
    g_z = group_sorted(kz_s, cs)
    n = c.shape[0]
    n_res = x_sims.shape[0]
    out = np.empty(n_res, np.float64)
    for b in prange(n_res):
        kxz = np.empty(n, np.int64)
        kyz = np.empty(n, np.int64)
        kxyz = np.empty(n, np.int64)
        for i in range(n):
            x = x_sims[b, order[i]]
            y = y_sims[b, order[i]]
            kxz[i] = x * m_z + kz_s[i]
            kyz[i] = y * m_z + kz_s[i]
            kxyz[i] = (x * m_y + y) * m_z + kz_s[i]
        est, _ = cmi_groups(group_sorted(kxyz, cs), group_sorted(kxz, cs),
                            group_sorted(kyz, cs), g_z, has_c, k, psi)
        out[b] = est
    return out
