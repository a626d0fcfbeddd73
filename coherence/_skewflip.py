r"""The paired sign-flip tests of a mean over independent units, with the intervals that
invert them: the plain test (:func:`sign_flips`, :func:`sign_flip_pvalue`,
:func:`sign_flip_interval`) and Hall's skewness-corrected one (:func:`skew_flips`,
:func:`skew_flip_pvalue`, :func:`skew_flip_interval`, the default of
:meth:`coherence.ForecastScoresResult.compare`), on the same sign vectors
(:func:`flip_products`).

A paired sign-flip test refers a statistic of the centred unit sums
:math:`e_c = D_c - \delta m_c` to its values under sign flips :math:`s_c e_c`. It is
exact for *any* statistic when the :math:`e_c` are symmetric about 0 and independent.
The plain statistic :math:`|\sum_c e_c|` is a symmetric test of a mean; with skewed
differences it errs like the t-test does (0.076 at 30 questions with score differences
of skewness 1.6). Here the statistic is Hall's (1992) transformation of the studentized
mean, which removes the skewness term from the statistic's distribution: with
:math:`\bar e` the mean, :math:`\hat\sigma` the standard deviation (divisor *C*) and
:math:`\hat\gamma` the skewness of the *C* values,

.. math::

    T = \sqrt{C}\,\Bigl(U + \tfrac{\hat\gamma}{3} U^2 + \tfrac{\hat\gamma^2}{27} U^3
        + \tfrac{\hat\gamma}{6C}\Bigr), \qquad U = \bar e / \hat\sigma,

and each sign vector's :math:`T_b` is the same function of its flipped values. So the
test stays exact under symmetry, and under skewness the observed :math:`T` is close
to the symmetric reference the flips give.

Everything the statistic needs of a sign vector *s* is six sums,
:math:`\sum s D`, :math:`\sum s m`, :math:`\sum s D^3`, :math:`\sum s D^2 m`,
:math:`\sum s D m^2` and :math:`\sum s m^3` (the squares :math:`\sum (s e)^2 = \sum
e^2` do not depend on *s*), so the p-value at any :math:`\delta` costs O(B) once they
are drawn, and the interval is found by bisection on :math:`\delta`.
"""

from __future__ import annotations

import math
from typing import Any
from typing import NamedTuple

import numpy as np

from ._resampling import monte_carlo_pvalue
from ._resampling import tie_bound

__all__ = ["SignFlips", "SkewFlips", "flip_products", "sign_flip_interval", "sign_flip_pvalue",
           "sign_flips", "skew_flip_interval", "skew_flip_pvalue", "skew_flips"]

#: a variance at most this share of the mean square is taken as 0 (all values equal)
_FLAT = 1e-12
#: bisection stops when the bracket is this share of the data's scale
_RTOL = 1e-10
#: beyond this many largest differences from 0, delta is taken at its limit (its cube
#: times the sums' coefficients would overflow; the differences are 1e-60 of it)
_FAR = 1e60
#: doublings of the outward step before an end is taken as infinite (2**60 spreads)
_DOUBLINGS = 60


class SignFlips(NamedTuple):
    """The sign vectors of a paired sign-flip test, kept as what the test needs: per
    vector *s*, the flipped sums :math:`\\sum_c s_c D_c` (``flipped``) and sizes
    :math:`\\sum_c s_c m_c` (``flipped_sizes``), with the units' ``sums`` :math:`D_c` and
    ``sizes`` :math:`m_c`; ``exact`` when they are all :math:`2^C` vectors."""

    sums: np.ndarray
    sizes: np.ndarray
    flipped: np.ndarray
    flipped_sizes: np.ndarray
    exact: bool


def flip_products(columns: np.ndarray, n_resamples: int, rng: np.random.Generator, *,
                  max_elements: int = 4_000_000) -> tuple[np.ndarray, bool]:
    r"""``(signs @ columns, exact)`` for the sign vectors of a paired sign-flip test over
    the *C* rows of ``columns`` (a (C, k) array): all :math:`2^C` vectors (``exact``,
    the identity among them) when :math:`2^C \le` ``n_resamples``, as
    ``scipy.stats.permutation_test`` does; otherwise ``n_resamples`` random ones, drawn
    as ``rng.integers(0, 2, size=(rows, C))`` in blocks of at most ``max_elements``
    signs (one row at least), so memory stays O(C + n_resamples)."""
    n_units = columns.shape[0]
    if n_units < 31 and 2**n_units <= n_resamples:
        signs = 1.0 - 2.0 * ((np.arange(2**n_units)[:, None] >> np.arange(n_units)) & 1)
        return signs @ columns, True
    rows = max(1, max_elements // max(n_units, 1))
    blocks = []
    for start in range(0, n_resamples, rows):
        block = 1.0 - 2.0 * rng.integers(0, 2, size=(min(rows, n_resamples - start), n_units))
        blocks.append(block @ columns)
    return np.concatenate(blocks), False


def sign_flips(sums: Any, sizes: Any, n_resamples: int, rng: np.random.Generator, *,
               max_elements: int = 4_000_000) -> SignFlips:
    r"""The sign vectors of a paired sign-flip test over units holding :math:`m_c` =
    ``sizes`` differences that sum to :math:`D_c` = ``sums`` (:class:`SignFlips`), as
    :func:`flip_products` draws them."""
    d = np.asarray(sums, dtype=np.float64)
    m = np.asarray(sizes, dtype=np.float64)
    products, exact = flip_products(np.column_stack([d, m]), n_resamples, rng,
                                    max_elements=max_elements)
    return SignFlips(d, m, products[:, 0].copy(), products[:, 1].copy(), exact)


def sign_flip_pvalue(flips: SignFlips, delta: float = 0.0) -> float:
    r"""Two-sided sign-flip p-value of the null that the mean difference is ``delta``.

    Under the null the centred sums :math:`D_c - \delta m_c` are symmetric about 0 and
    independent over units. The statistic is :math:`|\sum_c (D_c - \delta m_c)|`, and a
    sign vector's is :math:`|\sum_c s_c D_c - \delta \sum_c s_c m_c|`; the p-value is the
    share of the sign vectors at least as extreme (``exact``), else
    :func:`monte_carlo_pvalue`.
    """
    observed = abs(float(flips.sums.sum()) - delta * float(flips.sizes.sum()))
    null = np.abs(flips.flipped - delta * flips.flipped_sizes)
    if flips.exact:
        return float(np.count_nonzero(null >= tie_bound(observed)) / null.size)
    return monte_carlo_pvalue(null, observed)


def _lowest_kept(total: float, n: float, a: np.ndarray, m: np.ndarray, exact: bool,
                 alpha: float) -> float:
    r"""The lower end of :func:`sign_flip_interval`: below the mean, a sign vector *b*
    (flipped sum ``a``, flipped size ``m``) counts as extreme exactly when delta >= tau_b
    (the smaller root of its two linear conditions), so the p-value rises with delta and
    its crossing of ``alpha`` is an order statistic of the tau_b."""
    low = tie_bound(total)  # a vector that flips nothing (or all) ties: it always counts
    with np.errstate(invalid="ignore", divide="ignore"):
        # |a - delta m| >= total - delta n, for delta below total / n
        t1 = np.where(n - m > 0, (total - a) / (n - m), np.where(a >= low, -np.inf, np.inf))
        t2 = np.where(n + m > 0, (total + a) / (n + m), np.where(-a >= low, -np.inf, np.inf))
    tau = np.sort(np.minimum(t1, t2))
    # the p-value exceeds alpha once count > alpha * 2^C (exact) or > alpha (B + 1) - 1
    need = math.floor(alpha * tau.size) + 1 if exact else math.floor(alpha * (tau.size + 1))
    if need <= 0:
        return -math.inf
    # need <= tau.size as alpha < 1; past the mean every vector counts
    return float(min(tau[need - 1], total / n))


def sign_flip_interval(flips: SignFlips, confidence_level: float) -> tuple[float, float]:
    r"""The mean differences ``delta`` that :func:`sign_flip_pvalue` does not reject at
    ``1 - confidence_level``: the interval that inverts the test with the same sign
    vectors, so it excludes 0 exactly when the p-value is at most ``1 -
    confidence_level`` (up to the tie rule)."""
    alpha = 1.0 - confidence_level
    total, n = float(flips.sums.sum()), float(flips.sizes.sum())
    low = _lowest_kept(total, n, flips.flipped, flips.flipped_sizes, flips.exact, alpha)
    high = -_lowest_kept(-total, n, -flips.flipped, flips.flipped_sizes, flips.exact, alpha)
    return low, high


class SkewFlips(NamedTuple):
    """The sign vectors of the skew-corrected test: per vector *s*, the six flipped
    power sums of the scaled sums :math:`D_c /` ``scale`` (columns of ``flipped``:
    ``s@D, s@m, s@D^3, s@D^2 m, s@D m^2, s@m^3``), the units' ``sums`` :math:`D_c` and
    ``sizes`` :math:`m_c`, ``scale`` (the largest :math:`|D_c|`, or 1: the statistic
    does not depend on it, and cubes of tiny or huge differences neither underflow
    nor overflow), and ``exact`` when they are all :math:`2^C` vectors (the identity
    first)."""

    sums: np.ndarray
    sizes: np.ndarray
    flipped: np.ndarray
    scale: float
    exact: bool


def _powers(d: np.ndarray, m: np.ndarray) -> np.ndarray:
    return np.column_stack([d, m, d**3, d * d * m, d * m * m, m**3])


def skew_flips(sums: Any, sizes: Any, n_resamples: int,
               rng: np.random.Generator) -> SkewFlips:
    """The sign vectors of :func:`flip_products` (the same draws as :func:`sign_flips`)
    with their six power sums."""
    d = np.asarray(sums, dtype=np.float64)
    m = np.asarray(sizes, dtype=np.float64)
    largest = float(np.max(np.abs(d))) if d.size else 0.0
    scale = largest if largest > 0.0 else 1.0
    flipped, exact = flip_products(_powers(d / scale, m), n_resamples, rng)
    return SkewFlips(d, m, flipped, scale, exact)


def _statistic(powers: np.ndarray, delta: float, dd: float, dm: float, mm: float,
               n_units: int) -> np.ndarray:
    r""":math:`|T|` of the module's docstring for each row of power sums (the last axis
    of ``powers``, as in :class:`SkewFlips`) at ``delta``, with :math:`\sum D^2`,
    :math:`\sum D m` and :math:`\sum m^2` = ``dd, dm, mm``.

    With :math:`x = s e`, :math:`a = \sum s D` and :math:`b = \sum s m`, the
    variance and third central moment are polynomials in :math:`\delta` whose
    coefficients are formed first, :math:`C^2 \hat\sigma^2 = (C\,dd - a^2) - 2\delta
    (C\,dm - ab) + \delta^2 (C\,mm - b^2)` and likewise :math:`C^3 \hat\mu_3`: far
    from the estimate the leading terms cancel there, in integers when the sizes are
    counts, not in :math:`\sum x^2 / C - \bar x^2` (whose rounding grows as
    :math:`\delta^2`). Only sums, products and square roots are used (no ``pow``), so a
    vector and its negation give the same :math:`|T|` to the last bit. Values all equal
    (variance at most ``1e-12`` of the mean square) give :math:`\infty`, or 0 when
    they are all 0."""
    c = float(n_units)
    a, b, p3, p21, p12, p03 = (powers[..., j] for j in range(6))
    s1 = a - delta * b
    ss = dd - 2.0 * delta * dm + delta * delta * mm      # sum of x^2, the same for all s
    var_c2 = (c * dd - a * a) - 2.0 * delta * (c * dm - a * b) + delta * delta * (c * mm - b * b)
    k0 = c * c * p3 - 3.0 * c * a * dd + 2.0 * a * a * a
    k1 = -3.0 * c * c * p21 + 3.0 * c * (b * dd + 2.0 * a * dm) - 6.0 * a * a * b
    k2 = 3.0 * c * c * p12 - 3.0 * c * (a * mm + 2.0 * b * dm) + 6.0 * a * b * b
    k3 = -c * c * p03 + 3.0 * c * b * mm - 2.0 * b * b * b
    mu3_c3 = k0 + delta * (k1 + delta * (k2 + delta * k3))
    flat = var_c2 <= _FLAT * c * ss
    with np.errstate(invalid="ignore", divide="ignore", over="ignore"):
        var = np.where(flat, 1.0, var_c2) / (c * c)
        sd = np.sqrt(var)
        u = s1 / c / sd
        gamma = mu3_c3 / (c * c * c) / (var * sd)
        t = math.sqrt(c) * (u + gamma * u * u / 3.0 + gamma * gamma * u * u * u / 27.0
                            + gamma / (6.0 * c))
        out: np.ndarray = np.where(flat, np.where(s1 != 0.0, np.inf, 0.0), np.abs(t))
    return out


class _PValue:
    """The p-value of :func:`skew_flip_pvalue` as a function of ``delta``."""

    def __init__(self, flips: SkewFlips) -> None:
        d, m = flips.sums / flips.scale, flips.sizes
        self.n_units = d.size
        # enumerated, the identity (row 0) is the observed vector: taken from there,
        # it ties its negation to the last bit however far delta is from the estimate
        self.observed = flips.flipped[:1] if flips.exact else _powers(d, m).sum(axis=0)[None]
        self.flips = flips
        self.sums = float(d @ d), float(d @ m), float(m @ m)
        # the smallest p-value any delta can have: enumerated, the identity and its
        # negation always count; drawn, the observed statistic does
        size = flips.flipped.shape[0]
        self.floor = 2.0 / size if flips.exact else 1.0 / (size + 1)

    def __call__(self, delta: float) -> float:
        delta = delta / self.flips.scale
        observed, flipped, sums = self.observed, self.flips.flipped, self.sums
        if abs(delta) > _FAR:  # the limit: e = -delta m, the differences a rounding away
            keep = np.array([0.0, 1.0, 0.0, 0.0, 0.0, 1.0])
            observed, flipped = observed * keep, flipped * keep
            delta, sums = math.copysign(1.0, delta), (0.0, 0.0, sums[2])
        observed = float(_statistic(observed, delta, *sums, self.n_units)[0])
        null = _statistic(flipped, delta, *sums, self.n_units)
        if self.flips.exact:
            return float(np.count_nonzero(null >= tie_bound(observed)) / null.size)
        return monte_carlo_pvalue(null, observed)


def skew_flip_pvalue(flips: SkewFlips, delta: float = 0.0) -> float:
    r"""Two-sided p-value of the null that the mean difference is ``delta``: the share
    of the sign vectors whose :math:`|T_b|` is at least the observed :math:`|T|`
    (``exact``), else :func:`coherence._resampling.monte_carlo_pvalue` (whose tie rule
    both use)."""
    return _PValue(flips)(delta)


def _end(pvalue: _PValue, alpha: float, kept: float, direction: float, scale: float,
         anchor: float) -> float:
    """One end of :func:`skew_flip_interval`: from ``kept`` (not rejected), outward in
    ``direction``, the last delta kept before the first rejected one found by
    doubling steps, refined by bisection. ``anchor`` (0), when it lies outward, is
    tested first, so the interval holds it exactly when its p-value exceeds alpha."""
    if (anchor - kept) * direction > 0:
        if pvalue(anchor) > alpha:
            kept = anchor
        else:
            return _bisect(pvalue, alpha, kept, anchor, scale)
    if pvalue.floor > alpha:  # no delta is rejected: every vector ties its negation
        return direction * math.inf
    step = scale
    for _ in range(_DOUBLINGS):
        out = kept + direction * step
        if pvalue(out) <= alpha:
            return _bisect(pvalue, alpha, kept, out, scale)
        kept, step = out, 2.0 * step
    return direction * math.inf


def _bisect(pvalue: _PValue, alpha: float, kept: float, rejected: float,
            scale: float) -> float:
    while abs(rejected - kept) > _RTOL * max(scale, abs(kept)):
        mid = 0.5 * (kept + rejected)
        if mid in (kept, rejected):
            break
        if pvalue(mid) > alpha:
            kept = mid
        else:
            rejected = mid
    return kept


def skew_flip_interval(flips: SkewFlips, confidence_level: float) -> tuple[float, float]:
    r"""The mean differences :math:`\delta` that :func:`skew_flip_pvalue` does not
    reject at ``1 - confidence_level``, with the same sign vectors.

    Each end is found from the estimate :math:`\sum D / \sum m` outward: the first
    rejected :math:`\delta` by doubling steps (from the units' spread
    :math:`\sqrt{\sum (D_c - \hat\delta m_c)^2} / \sum m`), then the crossing by
    bisection to a relative ``1e-10``. 0 is tested first where it lies outward, so the
    interval excludes 0 exactly when :func:`skew_flip_pvalue` at 0 is at most ``1 -
    confidence_level``. An end is infinite when no p-value can be that small (all
    :math:`2^C` vectors with :math:`2 / 2^C >` ``1 - confidence_level``: four units at
    the 95% level), or when none is rejected within :math:`2^{60}` spreads."""
    alpha = 1.0 - confidence_level
    d, m = flips.sums, flips.sizes
    total = float(m.sum())
    estimate = float(d.sum()) / total
    spread = float(np.sqrt(np.sum((d - estimate * m) ** 2))) / total
    scale = spread if spread > 0.0 else max(abs(estimate), 1.0)
    pvalue = _PValue(flips)
    low = _end(pvalue, alpha, estimate, -1.0, scale, 0.0)
    high = _end(pvalue, alpha, estimate, 1.0, scale, 0.0)
    return low, high
