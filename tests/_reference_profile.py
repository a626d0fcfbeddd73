"""By brute force: the Gaussian profile upper bound of calibration_error, as the
largest gap on a fine grid at which enough of the model's statistics lie at or below
the observed one."""

from __future__ import annotations

import math

import numpy as np


def profile_bound_by_grid(weights, gaps, variances, statistic, level, normals,
                          a_max, steps=20_001):
    """(bound, the grid's step in the gap a): the model's statistics recomputed at
    every grid point of a in [0, a_max], by loops over the bins."""
    holds, base, w_m = profile_model(weights, gaps, variances, statistic, level, normals)
    best = None
    for a in np.linspace(0.0, a_max, steps):
        if holds(a):
            best = a
    a_star = 0.0 if best is None else best
    return base + w_m * a_star**2, a_max / (steps - 1)


def profile_model(weights, gaps, variances, statistic, level, normals):
    """``(holds, base, w_m)``: ``holds(a)`` says whether, with the bin of largest ``w v``
    at gap ``a`` and the others at their debiased gaps, at least ceil(B (1 - level)/2) of
    the model's statistics lie at or below ``statistic`` (by loops over the bins); the
    bound at ``a`` is ``base + w_m a^2``. The set of such ``a`` need not be an interval:
    as ``a`` grows one normal draw leaves the region and another enters."""
    w, g, v = (np.asarray(x, dtype=float) for x in (weights, gaps, variances))
    m = max(range(len(w)), key=lambda k: (w[k] * v[k], -k))
    kept = [math.copysign(math.sqrt(max(g[k] ** 2 - v[k], 0.0)), g[k]) for k in range(len(w))]
    base = sum(w[k] * kept[k] ** 2 for k in range(len(w)) if k != m)
    rest = np.zeros(normals.shape[0])
    for k in range(len(w)):
        if k != m:
            rest += w[k] * ((kept[k] + math.sqrt(v[k]) * normals[:, k]) ** 2 - v[k])
    need = math.ceil(normals.shape[0] * (1 - level) / 2 - 1e-9)

    def holds(a: float) -> bool:
        t = w[m] * ((a + math.sqrt(v[m]) * normals[:, m]) ** 2 - v[m]) + rest
        return bool(np.sum(t <= statistic) >= need)

    return holds, base, float(w[m])


def l1_model_holds(weights, gaps, variances, statistic, level, normals, lam):
    """Whether, at gaps ``lam`` times the observed ones, at least ceil(B (1 - level)/2)
    of the Gaussian model's debiased l1 statistics lie at or above ``statistic``: by a
    loop over the bins, the folded-normal mean from scipy's ``foldnorm``."""
    from scipy import stats

    w, g, v = (np.asarray(x, dtype=float) for x in (weights, gaps, variances))
    total = np.zeros(normals.shape[0])
    for k in range(len(w)):
        s = math.sqrt(v[k])
        x = lam * g[k] + s * normals[:, k]
        folded = (np.array([stats.foldnorm(abs(xi) / s, scale=s).mean() for xi in x])
                  if s > 0 else np.abs(x))
        total += w[k] * (2.0 * np.abs(x) - folded)
    need = math.ceil(normals.shape[0] * (1 - level) / 2 - 1e-9)
    return int(np.sum(total >= statistic)) >= need
