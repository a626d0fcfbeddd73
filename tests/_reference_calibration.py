"""Slow, obviously correct references of the calibration errors of
``coherence/_scoring/_calibration.py`` and ``_smooth_ece.py``: explicit loops over
bins, forecasts and mirror images, and numerical integration by scipy's ``quad``."""

from __future__ import annotations

import bisect
import math

import numpy as np
from scipy import integrate
from scipy import stats


def reference_bins(p, n_bins, binning):
    """Bin of each forecast, by a loop."""
    p = [float(v) for v in p]
    if binning == "equal_width":
        out = []
        for v in p:
            for k in range(n_bins):
                lower, upper = k / n_bins, (k + 1) / n_bins
                if lower <= v < upper or (k == n_bins - 1 and v == 1.0):
                    out.append(k)
                    break
        return out
    s = sorted(p)
    n = len(s)
    edges = set()
    for k in range(1, n_bins):
        cut = (k * n) // n_bins
        if 0 < cut < n:
            edges.add((s[cut - 1] + s[cut]) / 2.0)
    edges = sorted(edges)
    return [bisect.bisect_left(edges, v) for v in p]


def reference_bin_members(p, y, n_bins, binning):
    """Per non-empty bin, by a loop: (its rows, mean forecast, observed frequency)."""
    bins = reference_bins(p, n_bins, binning)
    for k in sorted(set(bins)):
        members = [i for i in range(len(p)) if bins[i] == k]
        m = len(members)
        yield (members, sum(float(p[i]) for i in members) / m,
               sum(float(y[i]) for i in members) / m)


def reference_calibration_error(p, y, n_bins, binning, norm, with_se=False, groups=None):
    """(debiased, plug-in): per bin, the plug-in term minus the correction, by a loop;
    the l1 correction by numerical integration of E|d + s Z|. The correction's variance
    is v = f(1 - f)/(m - 1) without ``groups``, else over the bin's C clusters
    v = C/(C - 1) sum_c (S_c - m_c f)^2 / m^2 (0 for a bin of one unit). ``with_se``: also
    the standard error of the bootstrap-t pivot: norm 2, sqrt(C/(C - 1) sum_c t_c^2 +
    sum_k (m_k/n)^2 2 v_k^2) over all C units, t_c = sum_{i in c} 2 d_k(i) (y_i -
    f_k(i)) / n; norm 1, sqrt(sum_k (m_k/n)^2 v_k)."""
    n = len(p)
    units = list(range(n)) if groups is None else [int(g) for g in groups]
    deb = plug = quad = 0.0
    t = dict.fromkeys(units, 0.0)
    for members, mean_p, freq in reference_bin_members(p, y, n_bins, binning):
        m = len(members)
        d = freq - mean_p
        if groups is None:
            var = freq * (1 - freq) / (m - 1) if m > 1 else 0.0
        else:
            clusters = sorted({units[i] for i in members})
            ss = sum((sum(float(y[i]) for i in members if units[i] == c)
                      - sum(1 for i in members if units[i] == c) * freq) ** 2
                     for c in clusters)
            var = len(clusters) / (len(clusters) - 1) * ss / m**2 if len(clusters) > 1 \
                else 0.0
        if norm == 2:
            term, corr = d * d, var
        else:
            term = abs(d)
            if var == 0.0:
                corr = 0.0
            else:
                s = math.sqrt(var)
                e_abs = integrate.quad(lambda z, d=d, s=s: abs(d + s * z) * stats.norm.pdf(z),
                                       -40, 40, points=[-d / s], limit=200)[0]
                corr = e_abs - abs(d)
        deb += m / n * (term - corr)
        plug += m / n * term
        quad += (m / n) ** 2 * (2 * var * var if norm == 2 else var)
        for i in members:
            t[units[i]] += 2 * d * (float(y[i]) - freq) / n
    if not with_se:
        return deb, plug
    c = len(t)
    linear = c / (c - 1) * sum(v * v for v in t.values()) if norm == 2 and c > 1 else 0.0
    return deb, plug, math.sqrt(linear + quad)


def reference_kernel(t, f, sigma, images=6):
    """Density at t of f + sigma Z reflected into [0, 1]: an explicit sum over images."""
    c = 1.0 / (math.sqrt(2.0 * math.pi) * sigma)
    total = 0.0
    for k in range(-images, images + 1):
        for centre in (f + 2 * k, -f + 2 * k):
            total += c * math.exp(-0.5 * ((t - centre) / sigma) ** 2)
    return total


def reference_smooth_ece_sigma(f, y, sigma):
    """The integral over [0, 1] of |(1/n) sum_i K(t, f_i)(y_i - f_i)|, by quad."""
    f = [float(v) for v in f]
    r = [float(b) - a for a, b in zip(f, y, strict=True)]

    def integrand(t):
        return abs(sum(reference_kernel(t, fi, sigma) * ri for fi, ri in zip(f, r,
                                                                          strict=True)))
    # the forecasts as breakpoints, less those within 1e-9 of an end or of the one before
    # (breakpoints 1e-307 apart defeat QUADPACK)
    points: list[float] = []
    for v in sorted(set(f)):
        if 1e-9 < v < 1.0 - 1e-9 and (not points or v - points[-1] > 1e-9):
            points.append(v)
    return integrate.quad(integrand, 0.0, 1.0, limit=500, points=points or None)[0] / len(f)


def reference_code_convolution(values, sigma):
    """The authors' discretised smoothing, by a double loop: values reflected once at each
    end, Gaussian weights sampled at the mesh spacing and truncated to +-1/2."""
    m = len(values)
    h = 1.0 / (m - 1)
    half = m // 2
    ext = {}
    for j in range(m):
        ext[j] = values[j]
        ext[-j] = values[j]
        ext[2 * (m - 1) - j] = values[j]
    out = []
    for i in range(m):
        acc = 0.0
        for off in range(-half, m - half):
            j = i - off
            if -(m - 1) <= j <= 2 * (m - 1):
                x = (off + half) * h - 0.5
                acc += ext[j] * math.exp(-0.5 * (x / sigma) ** 2) / (math.sqrt(2 * math.pi)
                                                                     * sigma)
        out.append(acc)
    return sum(abs(v) for v in out) / m


def reflected_kernel(t: np.ndarray, f: np.ndarray, sigma: float) -> np.ndarray:
    """(len(t), len(f)) density at t of the reflection into [0, 1] of f + sigma Z.

    The sum over the mirror images s f + 2k (s = +-1) of a Gaussian density; an
    image is left out only when all of it lies more than 12 sigma outside [0, 1]
    (a term below exp(-72), 1e-31 of the peak). O(len(t) len(f)): the exact
    kernel the binned smoother (``coherence._scoring._smooth_ece.Smoother``) is tested
    against.
    """
    out = np.zeros((len(t), len(f)))
    c = 1.0 / (math.sqrt(2.0 * math.pi) * sigma)
    reach = 12.0 * sigma
    n_img = math.ceil(reach / 2.0) + 1
    for k in range(-n_img, n_img + 1):
        for sign in (1.0, -1.0):
            low, high = (2 * k, 2 * k + 1) if sign > 0 else (2 * k - 1, 2 * k)
            if high < -reach or low > 1.0 + reach:
                continue
            d = (t[:, None] - (sign * f[None, :] + 2.0 * k)) / sigma
            out += c * np.exp(-0.5 * d * d)
    return out
