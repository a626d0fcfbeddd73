"""The smooth ECE's array layer: kernel smoothing of forecasts on [0, 1] and the searches
for its kernel width.

What :func:`coherence.smooth_ece` (in :mod:`._calibration`) and
:func:`coherence.plot_smooth_reliability` (in :mod:`._reliability_plots`) compute with:
the reflected Gaussian kernel, binned (:class:`Smoother`; the tests hold it to the
exact kernel), the smooth ECE at a width (:func:`smooth_ece_sigma`), the fixed-point
search of the paper's width (:func:`fixed_point`), the released code's and relplot's
definitions (:func:`smooth_ece_code`, :func:`code_smece_at`, :func:`relplot_103_at`,
:func:`relplot_search`) and the smoothed reliability curve (:func:`smooth_curve`). The
binned calibration error stays in :mod:`._calibration`.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterable
from typing import Any

import numpy as np

#: Most grid points of the diagram and of the midpoint rule (``n_grid``'s bound)
MAX_N_GRID = 100_000
#: Narrowest kernel: 20 grid points per sigma then need at most 200,000 points
SIGMA_MIN = 1e-4
#: Most grid points the narrow-kernel rule (20 per sigma) may reach
_MAX_GRID_POINTS = 200_000
#: Most floats in one block of the smoother's circular convolutions (columns are chunked)
_MAX_BLOCK = 20_000_000
#: Lattice points per grid point of the binned smoother, at least (even: the grid is on the
#: lattice); more when the grid is coarser than sigma / 20, so that h / (2 sigma) <= 1 / 160
_LATTICE = 4
#: Bound on each binned kernel sum's error, relative to sum_i |v_i| times the kernel's peak
_BINNING_TOL = 1e-12
#: Images of the Gaussian (and its derivatives) are summed out to this many sigma
_REACH = 14.0
#: Below this fraction of the binned sums' error scale sum(w) / (sqrt(2 pi) sigma) (whose
#: 1e-12 bounds their error) the curve's ratio is summed exactly (its binned error could
#: exceed 2e-6)
_TAIL_DENSITY = 1e-6
#: Most work of the exact sums, (grid points) x (distinct forecasts) x (32 + resamples): about
#: 5 s
_MAX_TAIL_WORK = 1e10


def _grid_size(sigma: float, n_grid: int) -> int:
    """Points of the midpoint grid: ``n_grid``, at least 20 per kernel width (capped)."""
    return int(min(max(n_grid, math.ceil(20.0 / sigma)), max(n_grid, _MAX_GRID_POINTS)))


def smooth_grid(sigma: float, n_grid: int) -> np.ndarray:
    """Midpoints of [0, 1], at least 20 per kernel width."""
    m = _grid_size(sigma, n_grid)
    return (np.arange(m) + 0.5) / m


def _taylor_terms(h: float, sigma: float) -> int:
    """Terms q of the Taylor expansion about the nearest lattice point such that each kernel
    value is within ``_BINNING_TOL`` of the kernel's peak (see :class:`Smoother`)."""
    ratio = h / (2.0 * sigma)
    const = 2.0 * 1.086435 * (1.0 + math.sqrt(math.pi) * sigma)
    for q in range(1, 40):
        if const * ratio**q / math.sqrt(math.factorial(q)) <= _BINNING_TOL:
            return q
    return 40  # pragma: no cover - ratio <= 1/160 always reaches the bound by q = 6


class Smoother:
    """Reflected-Gaussian kernel sums S(t_k) = sum_i K_sigma(t_k, f_i) v_i on the midpoint
    grid t_k = (k + 1/2) / m, in O(n q + q M log M) instead of O(n m).

    Each forecast f_i is written f_i = g_j + d_i with g_j = j / M the nearest point of a
    lattice of M >= max(4 m, 80 / sigma) cells (|d_i| <= h / 2, h = 1 / M), and
    K(t, f_i) is expanded in d_i to q terms,
    K(t, g_j + d) = sum_{p < q} d^p / p! d^p K(t, g_j) / dg^p + R. The
    moments sum_i v_i d_i^p / p! are binned on the lattice, and the derivative sums are
    one circular convolution each (the reflections make K periodic of period 2 in g).
    By Cramer's bound |He_p(z)| exp(-z^2 / 4) <= 1.086435 sqrt(p!), summed over the
    images, the remainder is at most
    2 * 1.086435 * (1 + sqrt(pi) sigma) * (h / (2 sigma))^q / sqrt(q!) times the
    kernel's peak 1 / (sqrt(2 pi) sigma); q is the least that makes this <= 1e-12.
    """

    def __init__(self, f: np.ndarray, sigma: float, m: int,
                 cache: dict[int, tuple[np.ndarray, np.ndarray]] | None = None) -> None:
        per = max(_LATTICE, 2 * math.ceil(40.0 / (sigma * m)))
        self.m, self.M, self.sigma = m, per * m, sigma
        M = self.M
        self.q = _taylor_terms(1.0 / M, sigma)
        found = None if cache is None else cache.get(M)
        if found is None:
            x = f * M
            nodes = np.clip(np.rint(x), 0, M).astype(np.int64)
            found = (nodes, (x - nodes) / M)
            if cache is not None:
                cache[M] = found
        self.nodes, self.offsets = found
        self._moments: Any = None
        # the p-th derivative of the 2-periodised Gaussian, sampled on the circle of 2M points
        i = np.arange(2 * M, dtype=np.float64)
        n_img = math.ceil(_REACH * sigma / 2.0) + 1
        kernels = np.zeros((self.q, 2 * M))
        for k in range(-n_img - 1, n_img + 1):
            z = (i - 2.0 * k * M) / (M * sigma)
            near = np.abs(z) <= _REACH
            if not near.any():
                continue
            zn = z[near]
            phi = np.exp(-0.5 * zn * zn) / (math.sqrt(2.0 * math.pi) * sigma)
            he_prev, he = np.zeros_like(zn), np.ones_like(zn)
            for p in range(self.q):
                # d^p/dx^p phi_sigma(x) = (-1)^p He_p(x / sigma) phi_sigma(x) / sigma^p
                kernels[p, near] += (-1.0) ** p * he * phi / sigma**p
                he_prev, he = he, zn * he - p * he_prev
        self.spectra = np.fft.rfft(kernels, axis=1)
        # lattice node j sits at j (its own image, derivative sign (-1)^p) and at -j mod 2M
        j = np.arange(M + 1)
        self.mirror = (2 * M - j) % (2 * M)
        self.signs = (-1.0) ** np.arange(self.q)
        self.at = per * np.arange(m) + per // 2  # t_k = (k + 1/2) / m, on the lattice

    def _binned(self, values: np.ndarray) -> np.ndarray:
        """(q, M + 1, c): the moments sum_i v_i d_i^p / p! of each lattice point."""
        M, q = self.M, self.q
        n, c = values.shape
        if c <= 2:  # a few columns: q weighted counts each
            out = np.empty((q, M + 1, c))
            for col in range(c):
                term = values[:, col].astype(np.float64, copy=True)
                for p in range(q):
                    out[p, :, col] = np.bincount(self.nodes, weights=term, minlength=M + 1)
                    term *= self.offsets / (p + 1)
            return out
        if self._moments is None:  # many columns (bootstrap weights): one sparse product
            from scipy import sparse

            mom = np.empty((n, q))
            term = np.ones(n)
            for p in range(q):
                mom[:, p] = term
                term = term * self.offsets / (p + 1)
            rows = (self.nodes[:, None] + (M + 1) * np.arange(q)[None, :]).ravel()
            self._moments = sparse.csc_matrix(
                (mom.ravel(), rows, np.arange(0, q * n + 1, q)), shape=(q * (M + 1), n))
        return np.asarray(self._moments @ values).reshape(q, M + 1, c)

    def sums(self, values: np.ndarray) -> np.ndarray:
        """S(t_k) for each column of ``values`` (n, c): an (m, c) array."""
        step = max(1, _MAX_BLOCK // (2 * self.q * self.M))
        if values.shape[1] > step:  # bounded memory: the columns in blocks
            return np.concatenate([self.sums(values[:, i:i + step])
                                   for i in range(0, values.shape[1], step)], axis=1)
        M = self.M
        c = values.shape[1]
        binned = self._binned(values)
        circle = np.zeros((self.q, 2 * M, c))
        circle[:, :M + 1] = binned * self.signs[:, None, None]
        circle[:, self.mirror] += binned
        total = np.einsum("pkc,pk->kc", np.fft.rfft(circle, axis=1), self.spectra)
        return np.fft.irfft(total, n=2 * M, axis=0)[self.at]


def smooth_ece_sigma(f: np.ndarray, r: np.ndarray, sigma: float, n_grid: int,
                      cache: dict[int, tuple[np.ndarray, np.ndarray]] | None = None) -> float:
    """smECE_sigma = integral over [0, 1] of |(1/n) sum_i K_sigma(t, f_i) r_i| dt (midpoints)."""
    smoother = Smoother(f, sigma, _grid_size(sigma, n_grid), cache)
    total = smoother.sums(r[:, None])[:, 0]
    return float(np.mean(np.abs(total / len(f))))


def fixed_point(g: Any, tol: float, floor: float = 0.0) -> float:
    """The sigma in (0, 1] with g(sigma) = sigma (g non-increasing), by Brent's method;
    ``floor`` when g(floor) <= floor (the fixed point lies below it)."""
    from scipy.optimize import brentq

    if g(1.0) >= 1.0:
        return 1.0
    hi, lo = 1.0, 0.5
    while g(lo) <= lo:  # halve until the bracket holds (g(0+) > 0 unless all r_i = 0)
        hi, lo = lo, lo / 2.0
        if lo <= floor:
            if g(floor) <= floor:
                return floor
            lo = floor
            break
        if lo < tol:
            return lo
    return float(brentq(lambda s: g(s) - s, lo, hi, xtol=tol, rtol=4 * np.finfo(float).eps))


def round_to_grid(f: np.ndarray, v: np.ndarray, m: int) -> np.ndarray:
    """Linear split of each value v_i between the two grid points of linspace(0, 1, m)
    around f_i (the discretisation of the authors' code)."""
    x = f * (m - 1)
    i = np.clip(x.astype(np.int64), 0, m - 2)
    frac = x - i
    return (np.bincount(i, weights=(1.0 - frac) * v, minlength=m)
            + np.bincount(i + 1, weights=frac * v, minlength=m))


def code_smece_at(values: np.ndarray, sigma: float) -> float:
    """relplot's smooth_ece_interpolated: reflect the gridded residuals once at each end,
    convolve with a Gaussian sampled on the grid (support truncated to +-1/2), mean |.|."""
    m = len(values)
    t = np.linspace(0.0, 1.0, m)
    ker = np.exp(-0.5 * ((t - 0.5) / sigma) ** 2) / (math.sqrt(2.0 * math.pi) * sigma)
    ext = np.concatenate([values[::-1][:-1], values, values[::-1][1:]])
    conv = np.convolve(ext, ker, mode="valid")[m // 2: m // 2 + m]
    return float(np.sum(np.abs(conv)) / m)


def smooth_ece_code(f: np.ndarray, y: np.ndarray, eps: float = 1e-3,
                     mesh: int = 200, refine: int = 10) -> tuple[float, float]:
    """(smECE, sigma) as relplot 0.x computes them (``smECE_fast``): residuals rounded
    to a mesh of 200 points (refined 4x while 20 / sigma exceeds it), sigma the
    upper end of 10 bisection steps on [0, 1]."""
    state = {"m": mesh}
    state_vals = {"v": round_to_grid(f, f - y, mesh) / len(f)}

    def smece(alpha: float) -> float:
        if round(20.0 / alpha) > state["m"]:
            while round(20.0 / alpha) > state["m"]:
                state["m"] *= 4
            state_vals["v"] = round_to_grid(f, f - y, state["m"]) / len(f)
        return code_smece_at(state_vals["v"], alpha)

    start = relplot_search(smece, eps, refine)
    return smece(start), start


def _relplot_convolve(values: np.ndarray, sigma: float) -> np.ndarray:
    """relplot's ReflectedGaussianKernel.convolve: the gridded values reflected once at each
    end, convolved with a Gaussian density sampled on linspace(0, 1, E) - 1/2 (no grid
    spacing factor), the E central values."""
    e = len(values)
    t = np.linspace(0.0, 1.0, e)
    ker = np.exp(-(t - 0.5) * (t - 0.5) / (2.0 * sigma**2)) / (math.sqrt(2.0 * math.pi) * sigma)
    ext = np.concatenate([values[::-1][:-1], values, values[::-1][1:]])
    if e <= 4000:
        full = np.convolve(ext, ker, mode="valid")
    else:  # the same sums by FFT (O(E log E) instead of O(E^2))
        from scipy.signal import fftconvolve

        full = fftconvolve(ext, ker, mode="valid")
    return full[e // 2: e // 2 + e]


def _relplot_apply(f: np.ndarray, v: np.ndarray, t: np.ndarray, sigma: float) -> np.ndarray:
    """relplot's GaussianKernel.apply: values split linearly onto a grid of
    max(2000, round(20 / sigma)) // 2 + 1 points, smoothed, linearly interpolated at t."""
    e = max(2000, round(20.0 / sigma)) // 2 + 1
    smoothed = _relplot_convolve(round_to_grid(f, v, e), sigma)
    idx = np.clip((t * (e - 1)).astype(np.int64), 0, e - 2)
    frac = (t - idx * (1.0 / (e - 1))) / (1.0 / (e - 1))
    return smoothed[idx] * (1.0 - frac) + smoothed[idx + 1] * frac


def relplot_103_at(f: np.ndarray, y: np.ndarray, sigma: float) -> float:
    """relplot 1.0.2 / 1.0.3 ``smooth_ece``: the smoothed residual and density at
    max(round(10 / sigma), 200) points of linspace(0, 1), the density offset by 1e-4, and
    sum |r(t)| density(t) / sum density(t)."""
    t = np.linspace(0.0, 1.0, max(round(10.0 / sigma), 200))
    dens = _relplot_apply(f, np.ones_like(f), t, sigma) + 1e-4
    rs = _relplot_apply(f, f - y, t, sigma) / dens
    return float(np.sum(np.abs(rs) * dens) / np.sum(dens))


def relplot_search(smece: Any, eps: float = 1e-3, refine: int = 10) -> float:
    """relplot's ``search_param``: sigma = 1 if smECE_1 > 1 - ..., else the upper end of 10
    bisection steps on [0, 1] of "sigma < eps or sigma < smECE_sigma"."""
    def above(alpha: float) -> bool:
        return alpha < eps or alpha < smece(alpha)

    start = 1.0
    if not above(start):
        end = 0.0
        for _ in range(refine):
            mid = (start + end) / 2.0
            if above(mid):
                end = mid
            else:
                start = mid
    return start


def _log_kernel(t: np.ndarray, u: np.ndarray, sigma: float) -> np.ndarray:
    """(len(t), len(u)) log of the reflected kernel's sum over mirror images (without its
    constant 1 / (sqrt(2 pi) sigma)): finite where the kernel itself underflows.

    For t, u in [0, 1] the image u itself is the nearest; the image s u + 2k is
    exp(-Delta) of it, Delta = 4 k (k + u - t) / (2 sigma^2) (s = 1) or
    4 (u - k)(t - k) / (2 sigma^2) (s = -1), both >= 0, so the log is
    -(t - u)^2 / (2 sigma^2) + log(1 + sum exp(-Delta)); an image whose Delta exceeds 50
    over all of ``t`` and ``u`` (below 2e-22 of the nearest) is left out."""
    s2 = 2.0 * sigma * sigma
    out = -np.subtract.outer(t, u) ** 2 / s2
    t_lo, t_hi, u_lo, u_hi = t.min(), t.max(), u.min(), u.max()
    extra = None
    n_img = math.ceil(6.0 * sigma) + 1
    for k in range(-n_img, n_img + 1):
        for sign in (1, -1):
            if sign == 1:
                if k == 0:
                    continue
                least = 4.0 * k * (k + (u_lo - t_hi if k > 0 else u_hi - t_lo)) / s2
            else:
                least = 4.0 * ((u_lo - k) * (t_lo - k) if k <= 0 else
                               (k - u_hi) * (k - t_hi)) / s2
            if least > 50.0:
                continue
            delta = (4.0 * k / s2) * np.add.outer(k - t, u) if sign == 1 else \
                np.multiply.outer((4.0 / s2) * (t - k), u - k)
            term = np.exp(-delta, out=delta)
            extra = term if extra is None else np.add(extra, term, out=extra)
    if extra is not None:
        out += np.log1p(extra)
    return out


def _exact_curve(f: np.ndarray, r: np.ndarray, w: np.ndarray, t: np.ndarray,
                 sigma: float) -> tuple[np.ndarray, np.ndarray]:
    """r(t) and the density at the points ``t`` for weight rows ``w`` (B, n), each kernel
    weight taken relative to the largest one of the row's forecasts (log-sum-exp): exact
    where the density underflows. ((B, len(t)), (B, len(t)))."""
    from scipy import sparse

    u, inv = np.unique(f, return_inverse=True)
    member = sparse.csr_matrix((np.ones(len(f)), (inv, np.arange(len(f)))),
                               shape=(len(u), len(f)))
    num_u = np.asarray(member @ (w * r[None, :]).T).T  # (B, U): sums per distinct forecast
    den_u = np.asarray(member @ w.T).T
    ratio = np.empty((len(w), len(t)))
    dens = np.empty((len(w), len(t)))
    step = max(1, _MAX_BLOCK // (8 * len(u)))
    for lo in range(0, len(t), step):
        cols = slice(lo, lo + step)
        logk = _log_kernel(t[cols], u, sigma)
        scale = np.repeat(logk.max(axis=1)[None, :], len(w), axis=0)  # (B, k) log scales
        rel = np.exp(logk - scale[:1].T)
        num, den = num_u @ rel.T, den_u @ rel.T
        # a resample without the forecasts nearest t: relative to its own nearest ones
        rows, js = np.nonzero(den < 1e-150)
        for p0 in range(0, len(rows), step):
            b, j = rows[p0:p0 + step], js[p0:p0 + step]
            logk_b = np.where(den_u[b] > 0, logk[j], -np.inf)
            scale[b, j] = logk_b.max(axis=1)
            rel_b = np.exp(logk_b - scale[b, j][:, None])
            num[b, j] = np.einsum("pu,pu->p", num_u[b], rel_b)
            den[b, j] = np.einsum("pu,pu->p", den_u[b], rel_b)
        ratio[:, cols] = num / den
        dens[:, cols] = np.exp(scale + np.log(den)) / (
            math.sqrt(2.0 * math.pi) * sigma * w.sum(axis=1, keepdims=True))
    return ratio, dens


def smooth_curve(smoother: Smoother, f: np.ndarray, y: np.ndarray, w: np.ndarray,
                 t: np.ndarray) -> tuple[np.ndarray, np.ndarray, int]:
    """t + r(t) and the density for weight rows ``w`` (B, n): ((B, m), (B, m)), and the
    number of grid points left NaN (see :func:`_exact_curve`'s work bound).

    The binned sums are within 1e-12 of sum(w) / (sqrt(2 pi) sigma) (:class:`Smoother`);
    where the binned density is below ``_TAIL_DENSITY`` of that bound the ratio would be
    rounding noise (or 0 / 0), and r(t) and the density are summed exactly
    (:func:`_exact_curve`) instead."""
    r = y - f
    num = smoother.sums((w * r[None, :]).T).T
    den = smoother.sums(np.ascontiguousarray(w.T)).T
    total = w.sum(axis=1, keepdims=True)
    tail = ~(den > _TAIL_DENSITY * total / (math.sqrt(2.0 * math.pi) * smoother.sigma))
    ratio = num / np.where(tail, 1.0, den)
    dens = np.maximum(den, 0.0) / total
    cols = np.flatnonzero(tail.any(axis=0))
    if not cols.size:
        return t[None, :] + ratio, dens, 0
    if len(cols) * len(np.unique(f)) * (32 + len(w)) > _MAX_TAIL_WORK:
        ratio[tail] = np.nan
        return t[None, :] + ratio, dens, len(cols)
    exact, exact_dens = _exact_curve(f, r, w, t[cols], smoother.sigma)
    ratio[:, cols] = np.where(tail[:, cols], exact, ratio[:, cols])
    dens[:, cols] = np.where(tail[:, cols], exact_dens, dens[:, cols])
    return t[None, :] + ratio, dens, 0


def smooth_band(smoother: Smoother, f: np.ndarray, y: np.ndarray, t: np.ndarray,
                chunks: Iterable[np.ndarray],
                confidence_level: float) -> tuple[np.ndarray, np.ndarray, int]:
    """The pointwise percentile band of the curve over the resampled weight rows of
    ``chunks``, and the most grid points a chunk left NaN (:func:`smooth_curve`)."""
    parts = [smooth_curve(smoother, f, y, w, t) for w in chunks]
    boots = np.concatenate([part[0] for part in parts])
    left = max(part[2] for part in parts)
    alpha = 1.0 - confidence_level
    levels = [alpha / 2, 1.0 - alpha / 2]
    if not left:  # every value finite: np.quantile (nanquantile loops over the columns)
        low, high = np.quantile(boots, levels, axis=0)
        return low, high, 0
    with warnings.catch_warnings():  # a column all NaN stays NaN (the caller warns)
        warnings.simplefilter("ignore", RuntimeWarning)
        low, high = np.nanquantile(boots, levels, axis=0)
    return low, high, left
