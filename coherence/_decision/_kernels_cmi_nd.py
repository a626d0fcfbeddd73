"""Numba kernel of the mixed-data kNN CMI estimate when every continuous coordinate, two
or more of them, lies in the conditioning set z and x and y are discrete: the case of
:func:`coherence.ci_test` with a float evidence column beside the belief.

Arrays in, arrays out; no validation (``_cmi.py`` prepares the inputs). The estimate is
the one of ``_cmi._estimate_kdtree`` (Chebyshev KD-trees inside discrete strata, the
general path and this kernel's reference), to the rounding of the final mean: the same
k-th neighbour distance ``rho`` in the (x, y, z) space, the same closed-ball counts in
the four spaces, the same digamma values (``psi_int`` reads the table of scipy's).

Representation: the points are sorted by (z's discrete key, first continuous
coordinate; the caller puts first the coordinate with the most distinct values, whose
windows are the narrowest), so a stratum of z is a run of positions and, inside it,
the points within distance ``r`` of a point lie in the window of positions whose first
coordinate is within ``r`` of its own (the max norm is at least that coordinate's difference). Both
passes of a point, its k-th neighbour and its counts, sweep that window outwards from
the point and stop at its edge. The spaces xz, yz and xyz refine z's strata (their keys
include z's), so a point's stratum in any space lies inside its z stratum. Each pass is
O(window) per point: O(n log n) overall when the neighbours are near, O(n^2) within a
stratum at worst (a key that few points share, whose ``rho`` is wide).
"""

from __future__ import annotations

import numpy as np
from numba import njit

from ._kernels_cmi import psi_int

__all__ = ["cmi_z_continuous"]


@njit(cache=True)
def _chebyshev(zc, a, b, bound):
    """Max-norm distance of rows ``a`` and ``b`` of ``zc``, or any value above ``bound``
    as soon as one coordinate exceeds it."""
    d = 0.0
    for t in range(zc.shape[1]):
        diff = abs(zc[a, t] - zc[b, t])
        if diff > d:
            d = diff
            if d > bound:
                return d
    return d


@njit(cache=True)
def _kth_distance(zc, kxyz, w, lo, hi, k, best):
    """The distance from ``w`` to its k-th nearest other point of the same ``kxyz`` key
    in positions ``[lo, hi)`` (at least ``k`` such points exist); ``best`` is scratch of
    length ``k`` holding the smallest distances found so far, in increasing order."""
    nb = 0
    key = kxyz[w]
    c0 = zc[w, 0]
    for side in range(2):
        j = w - 1 if side == 0 else w + 1
        while lo <= j < hi:
            gap = c0 - zc[j, 0] if side == 0 else zc[j, 0] - c0
            if nb == k and gap > best[k - 1]:
                break
            if kxyz[j] == key:
                d = _chebyshev(zc, w, j, best[k - 1] if nb == k else np.inf)
                if nb < k or d < best[k - 1]:
                    # insert d into the sorted best list (dropping its last when full)
                    i = nb if nb < k else k - 1
                    while i > 0 and best[i - 1] > d:
                        best[i] = best[i - 1]
                        i -= 1
                    best[i] = d
                    if nb < k:
                        nb += 1
            j = j - 1 if side == 0 else j + 1
    return best[k - 1]


@njit(cache=True)
def cmi_z_continuous(zc, kxyz, kxz, kyz, kz, k, psi):
    """The Mesner-Shalizi estimate and the number of points it averages over.

    ``zc`` (n, d >= 1) holds z's continuous coordinates and ``kxyz, kxz, kyz, kz``
    compact integer keys of the four spaces' discrete coordinates (``kxz``, ``kyz`` and
    ``kxyz`` refining ``kz``), all in the order of (``kz``, ``zc[:, 0]``). A point whose
    (x, y, z) stratum holds fewer than ``k`` other points takes ``rho = inf`` (its
    counts are its strata's sizes minus one) and one with no other point there is left
    out; NaN when every point is.
    """
    n = zc.shape[0]
    c_xyz = np.bincount(kxyz)
    c_xz = np.bincount(kxz)
    c_yz = np.bincount(kyz)
    c_z = np.bincount(kz)
    best = np.empty(k)
    total = 0.0
    used = 0
    lo = 0
    while lo < n:
        hi = lo + 1
        while hi < n and kz[hi] == kz[lo]:
            hi += 1
        for w in range(lo, hi):
            n_xyz = c_xyz[kxyz[w]] - 1
            if n_xyz == 0:
                continue
            if n_xyz < k:
                n_xz = c_xz[kxz[w]] - 1
                n_yz = c_yz[kyz[w]] - 1
                n_z = c_z[kz[w]] - 1
            else:
                rho = _kth_distance(zc, kxyz, w, lo, hi, k, best)
                n_xyz = n_xz = n_yz = n_z = 0
                c0 = zc[w, 0]
                for side in range(2):
                    j = w - 1 if side == 0 else w + 1
                    while lo <= j < hi:
                        gap = c0 - zc[j, 0] if side == 0 else zc[j, 0] - c0
                        if gap > rho:
                            break
                        if _chebyshev(zc, w, j, rho) <= rho:
                            n_z += 1
                            if kxz[j] == kxz[w]:
                                n_xz += 1
                            if kyz[j] == kyz[w]:
                                n_yz += 1
                            if kxyz[j] == kxyz[w]:
                                n_xyz += 1
                        j = j - 1 if side == 0 else j + 1
            total += (psi_int(psi, n_xyz) - psi_int(psi, n_xz) - psi_int(psi, n_yz)
                      + psi_int(psi, n_z))
            used += 1
        lo = hi
    if used == 0:
        return np.nan, 0
    return total / used, used
