"""Numba kernels of the mixed-data kNN (conditional) mutual-information estimator.

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

A *grouping* of the points by key is the tuple ``(members, gstart, gend, pos)``:
``members`` lists the points sorted by key, then by ``c`` (stable), the stratum
of point ``i`` occupies ``members[gstart[i]:gend[i]]`` and ``i`` sits at
``members[pos[i]]``.
"""

from __future__ import annotations

import numpy as np
from numba import njit, prange

__all__ = [
    "cmi_1d",
    "cmi_1d_groups",
    "group_by_key",
    "permutation_null",
    "resample_estimates",
]


@njit(cache=True)
def group_by_key(order, key):
    """Group points by ``key``; ``order`` sorts the points by ``c`` (stable)."""
    n = order.shape[0]
    ks = key[order]
    members = order[np.argsort(ks, kind="mergesort")]
    gstart = np.empty(n, np.int64)
    gend = np.empty(n, np.int64)
    pos = np.empty(n, np.int64)
    s = 0
    for t in range(1, n + 1):
        if t == n or key[members[t]] != key[members[s]]:
            for u in range(s, t):
                i = members[u]
                gstart[i] = s
                gend[i] = t
                pos[i] = u
            s = t
    return members, gstart, gend, pos


@njit(cache=True)
def _knn_radius(c, members, gstart, gend, pos, k, has_c):
    """Distance from each point to its k-th nearest other point in its stratum.

    ``inf`` when the stratum holds fewer than ``k`` other points (then every
    point of the stratum is a neighbour); 0 when the space has no continuous
    coordinate.
    """
    n = c.shape[0]
    rho = np.empty(n, np.float64)
    for i in range(n):
        lo = gstart[i]
        hi = gend[i]
        if hi - lo - 1 < k:
            rho[i] = np.inf
            continue
        if not has_c:
            rho[i] = 0.0
            continue
        p = pos[i]
        left = p - 1
        right = p + 1
        ci = c[i]
        d = 0.0
        for _ in range(k):
            dl = ci - c[members[left]] if left >= lo else np.inf
            dr = c[members[right]] - ci if right < hi else np.inf
            if dl <= dr:
                d = dl
                left -= 1
            else:
                d = dr
                right += 1
        rho[i] = d
    return rho


@njit(cache=True)
def _count_within(c, members, gstart, gend, pos, rho, has_c):
    """Number of other points of the stratum at distance <= rho_i (binary search)."""
    n = c.shape[0]
    out = np.empty(n, np.int64)
    for i in range(n):
        lo = gstart[i]
        hi = gend[i]
        r = rho[i]
        if not has_c or r == np.inf:
            out[i] = hi - lo - 1
            continue
        ci = c[i]
        p = pos[i]
        # first index in [p, hi) with c_j - c_i > r (c_j >= c_i there)
        a = p
        b = hi
        while a < b:
            mid = (a + b) // 2
            if c[members[mid]] - ci > r:
                b = mid
            else:
                a = mid + 1
        right = a
        # first index in [lo, p] with c_i - c_j <= r (c_j <= c_i there)
        a = lo
        b = p
        while a < b:
            mid = (a + b) // 2
            if ci - c[members[mid]] <= r:
                b = mid
            else:
                a = mid + 1
        out[i] = right - a - 1
    return out


@njit(cache=True)
def cmi_1d_groups(c, g_xyz, g_xz, g_yz, g_z, has_c, k, psi):
    """Mesner-Shalizi estimate from precomputed groupings of the four spaces.

    ``has_c`` (bool array of 4) says whether the continuous coordinate belongs
    to the xyz, xz, yz and z spaces. Returns ``(estimate, n_used)``; points
    alone in their joint stratum (no neighbour at all) are left out of the
    mean.
    """
    rho = _knn_radius(c, g_xyz[0], g_xyz[1], g_xyz[2], g_xyz[3], k, has_c[0])
    kt = _count_within(c, g_xyz[0], g_xyz[1], g_xyz[2], g_xyz[3], rho, has_c[0])
    nxz = _count_within(c, g_xz[0], g_xz[1], g_xz[2], g_xz[3], rho, has_c[1])
    nyz = _count_within(c, g_yz[0], g_yz[1], g_yz[2], g_yz[3], rho, has_c[2])
    nz = _count_within(c, g_z[0], g_z[1], g_z[2], g_z[3], rho, has_c[3])
    total = 0.0
    used = 0
    for i in range(c.shape[0]):
        if kt[i] > 0:
            total += psi[kt[i]] - psi[nxz[i]] - psi[nyz[i]] + psi[nz[i]]
            used += 1
    if used == 0:
        return np.nan, 0
    return total / used, used


@njit(cache=True)
def cmi_1d(c, kxyz, kxz, kyz, kz, has_c, k, psi):
    """Mesner-Shalizi estimate with at most one continuous coordinate, O(n log n)."""
    order = np.argsort(c, kind="mergesort")
    return cmi_1d_groups(c, group_by_key(order, kxyz), group_by_key(order, kxz),
                         group_by_key(order, kyz), group_by_key(order, kz), has_c, k, psi)


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
    g_yz = group_by_key(order, kyz)
    g_z = group_by_key(order, kz)
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
        est, _ = cmi_1d_groups(c, group_by_key(order, kxyz), group_by_key(order, kxz),
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
