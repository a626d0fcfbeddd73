"""The skew-corrected sign-flip test (coherence._skewflip) against the brute-force
reference of tests._reference_skewflip: exact and Monte Carlo p-values, the inverted
interval, and the numerical guards (a vector ties its negation at any delta; tiny and
huge differences)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from coherence._skewflip import sign_flip_pvalue
from coherence._skewflip import sign_flips
from coherence._skewflip import skew_flip_interval
from coherence._skewflip import skew_flip_pvalue
from coherence._skewflip import skew_flips
from tests._reference_skewflip import hall_pvalue
from tests._reference_skewflip import hall_t

#: differences 0 or of size 1e-100 and more: where a square underflows (6e-205) the
#: p-value's crossing cannot be located to 1e-6 of the largest
_units = st.integers(2, 7).flatmap(lambda c: st.tuples(
    st.lists(st.one_of(st.sampled_from([0.0, 0.25, -0.5, 1.0]),
                       st.floats(-3.0, 3.0).map(lambda x: x if abs(x) >= 1e-100 else 0.0)),
             min_size=c, max_size=c),
    st.lists(st.integers(1, 5), min_size=c, max_size=c)))


@settings(max_examples=80, deadline=None)
@given(_units, st.floats(-2.0, 2.0).map(lambda x: x if abs(x) >= 1e-100 else 0.0))
def test_exact_pvalue_matches_the_enumeration(units, delta):
    d, m = np.array(units[0]), np.array(units[1], dtype=float)
    flips = skew_flips(d, m, 2**d.size, np.random.default_rng(0))
    assert flips.exact and flips.flipped.shape == (2**d.size, 6)
    assert skew_flip_pvalue(flips, delta) == pytest.approx(hall_pvalue(d, m, delta),
                                                           abs=1e-12)


@settings(max_examples=25, deadline=None)
@given(st.integers(8, 14), st.integers(0, 2**32 - 1), st.floats(-0.5, 0.5))
def test_monte_carlo_pvalue_uses_the_documented_draws(c, seed, delta):
    """(1 + count) / (1 + B) over rng.integers(0, 2, size=(B, C)), the draws of
    sign_flips (and so the same vectors as the plain test)."""
    gen = np.random.default_rng(seed)
    d, m = gen.gamma(0.7, size=c) - 0.5, gen.integers(1, 4, size=c).astype(float)
    flips = skew_flips(d, m, 99, np.random.default_rng(seed + 1))
    assert not flips.exact
    signs = 1.0 - 2.0 * np.random.default_rng(seed + 1).integers(0, 2, size=(99, c))
    assert skew_flip_pvalue(flips, delta) == pytest.approx(
        hall_pvalue(d, m, delta, signs), abs=1e-12)
    plain = sign_flips(d, m, 99, np.random.default_rng(seed + 1))
    np.testing.assert_allclose(plain.flipped, signs @ d, rtol=1e-12, atol=1e-12)
    assert 0.0 < sign_flip_pvalue(plain, delta) <= 1.0


@settings(max_examples=40, deadline=None)
@given(_units, st.sampled_from([0.8, 0.9, 0.95]), st.booleans())
def test_interval_ends_are_where_the_pvalue_crosses(units, level, drawn):
    d, m = np.array(units[0]), np.array(units[1], dtype=float)
    if np.all(d == 0):
        return
    if drawn:  # Monte Carlo with C units repeated twice
        d, m = np.tile(d, 2), np.tile(m, 2)
    flips = skew_flips(d, m, 200 if drawn else 2**d.size, np.random.default_rng(4))
    low, high = skew_flip_interval(flips, level)
    alpha = 1.0 - level
    estimate = d.sum() / m.sum()
    assert low <= estimate <= high
    scale = float(np.abs(d).max())
    if np.ptp(d / m) <= 1e-12 * scale:  # every unit gives the same mean: only it is kept
        assert high - low <= 1e-7 * scale or not (math.isfinite(low) or math.isfinite(high))
        return
    for end, inward in ((low, 1.0), (high, -1.0)):
        if math.isfinite(end):
            eps = 1e-6 * scale
            assert skew_flip_pvalue(flips, end + inward * eps) > alpha
            assert skew_flip_pvalue(flips, end - inward * eps) <= alpha
        else:
            assert not flips.exact or 2.0 / 2**d.size > alpha
    p0 = skew_flip_pvalue(flips, 0.0)
    if min(abs(low), abs(high)) > 1e-9 * scale:
        assert (low <= 0.0 <= high) == (p0 > alpha)


def test_a_vector_ties_its_negation_at_any_delta():
    """Far from the estimate the centred values share one sign and the statistic grows
    as delta^3; the identity and its negation still tie, so the p-value is the floor
    2 / 2^C, and with four units no delta is rejected at 0.05."""
    d = np.array([0.75, -0.49, -0.09, -0.72, 0.3, 0.1])
    flips = skew_flips(d, np.ones(6), 64, np.random.default_rng(0))
    for delta in (-1e9, -1e6, -1e3, 1e3, 1e6, 1e9):
        assert skew_flip_pvalue(flips, delta) == 2.0 / 64
    # past every difference the values share a sign: the ends are the extremes
    low, high = skew_flip_interval(flips, 0.95)
    assert low == pytest.approx(d.min(), abs=1e-8) and high == pytest.approx(d.max(), abs=1e-8)
    four = skew_flips(d[:4], np.ones(4), 16, np.random.default_rng(0))
    assert skew_flip_interval(four, 0.95) == (-math.inf, math.inf)
    assert skew_flip_pvalue(four, 1e6) == 2.0 / 16


@pytest.mark.parametrize("factor", [1e-150, 1e-20, 1e20, 1e150])
def test_the_pvalue_does_not_depend_on_the_scale(factor):
    """Cubes of 1e-150 underflow and of 1e150 overflow; the sums are scaled first."""
    gen = np.random.default_rng(2)
    d, m = gen.gamma(0.5, size=9) - 0.4, gen.integers(1, 3, size=9).astype(float)
    base = skew_flips(d, m, 999, np.random.default_rng(1))
    scaled = skew_flips(d * factor, m, 999, np.random.default_rng(1))
    for delta in (-0.3, 0.0, 0.2):
        assert skew_flip_pvalue(scaled, delta * factor) == pytest.approx(
            skew_flip_pvalue(base, delta), abs=1e-12)
    low, high = skew_flip_interval(base, 0.95)
    slow, shigh = skew_flip_interval(scaled, 0.95)
    assert slow / factor == pytest.approx(low, rel=1e-8)
    assert shigh / factor == pytest.approx(high, rel=1e-8)


def test_reference_statistic_corrects_the_skewness_term():
    """For a right-skewed sample with mean 0 the studentized mean is pulled left
    (the mean and sd move together); Hall's statistic adds it back."""
    x = np.array([-0.4, -0.4, -0.4, -0.4, -0.3, -0.2, 0.0, 0.1, 0.5, 1.5])
    x = x - x.mean() - 0.05
    u = x.mean() / x.std()
    assert hall_t(x) < abs(math.sqrt(x.size) * u)


@settings(max_examples=30, deadline=None)
@given(st.lists(st.floats(0.01, 5.0), min_size=5, max_size=7),
       st.lists(st.integers(1, 4), min_size=7, max_size=7),
       st.sampled_from([0.05, 0.1, 0.25]))
def test_exact_under_symmetry(magnitudes, sizes, alpha):
    """Where the centred sums are symmetric about 0 (each sign equally likely), the
    enumerated test rejects at most alpha of the time: over every sign assignment of
    the same magnitudes, at most floor(alpha 2^C) p-values are <= alpha."""
    e = np.array(magnitudes)
    m = np.array(sizes[:e.size], dtype=float)
    c = e.size
    rejected = 0
    for bits in range(2**c):
        signs = 1.0 - 2.0 * ((bits >> np.arange(c)) & 1)
        flips = skew_flips(signs * e, m, 2**c, np.random.default_rng(0))
        rejected += skew_flip_pvalue(flips) <= alpha
    assert rejected <= math.floor(alpha * 2**c)
