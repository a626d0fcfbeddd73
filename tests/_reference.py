"""Slow, obviously correct O(n^2) reference of the Mesner-Shalizi kNN CMI estimator.

Every fast path of :mod:`coherence._decision._cmi` is compared against it (tests) and
timed against it (benchmarks). It takes plain arrays: ``x_cont``, ``y_cont``,
``z_cont`` of shape (n, d) (d may be 0) and ``x_disc``, ``y_disc``, ``z_disc``
of shape (n, m) of integer codes. Distances: maximum norm over continuous
coordinates, 0 / infinity for equal / different discrete coordinates.
"""

from __future__ import annotations

import numpy as np
from scipy.special import digamma


def _distances(cont: np.ndarray, disc: np.ndarray, i: int) -> np.ndarray:
    n = cont.shape[0] if cont.ndim == 2 else disc.shape[0]
    d = np.zeros(n)
    if cont.shape[1]:
        d = np.max(np.abs(cont - cont[i]), axis=1)
    if disc.shape[1]:
        mismatch = np.any(disc != disc[i], axis=1)
        d = np.where(mismatch, np.inf, d)
    return d


def reference_cmi(x_cont, x_disc, y_cont, y_disc, z_cont, z_disc, k=3):
    """The estimate, point by point, in O(n^2)."""
    n = x_cont.shape[0]
    xyz_c = np.hstack([x_cont, y_cont, z_cont])
    xyz_d = np.hstack([x_disc, y_disc, z_disc])
    xz_c, xz_d = np.hstack([x_cont, z_cont]), np.hstack([x_disc, z_disc])
    yz_c, yz_d = np.hstack([y_cont, z_cont]), np.hstack([y_disc, z_disc])
    terms = []
    for i in range(n):
        others = np.arange(n) != i
        d = _distances(xyz_c, xyz_d, i)[others]
        finite = np.isfinite(d)
        rho = np.inf if finite.sum() < k else np.sort(d)[k - 1]

        def count(cont, disc, i=i, rho=rho, others=others):
            dd = _distances(cont, disc, i)[others]
            return int(np.sum(np.isfinite(dd) & (dd <= rho)))

        kt = count(xyz_c, xyz_d)
        if kt == 0:
            continue
        nz = count(z_cont, z_disc)
        terms.append(digamma(kt) - digamma(count(xz_c, xz_d)) - digamma(count(yz_c, yz_d))
                     + digamma(nz))
    return float(np.mean(terms)) if terms else float("nan")
