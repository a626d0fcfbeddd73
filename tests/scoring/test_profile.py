"""The Gaussian profile bounds of calibration_error's intervals: the upper bound of the
squared l2 error against a brute-force grid, against the noncentral chi-square's
inversion for one bin, and its edge cases; the lower bound of the l1 error against a
loop with scipy's folded normal, against its closed form for one bin, and its edges."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from scipy import optimize
from scipy import stats

from coherence._scoring._profile import l1_debiased
from coherence._scoring._profile import l1_profile_lower_bound
from coherence._scoring._profile import profile_upper_bound
from tests._reference_profile import l1_model_holds
from tests._reference_profile import profile_bound_by_grid
from tests._reference_profile import profile_model


@settings(max_examples=40, deadline=None)
@given(k=st.integers(1, 4), seed=st.integers(0, 2**32 - 1),
       level=st.sampled_from([0.8, 0.9, 0.95]))
def test_bound_matches_a_brute_force_grid(k, seed, level):
    gen = np.random.default_rng(seed)
    w = gen.dirichlet(np.ones(k))
    v = gen.uniform(0.0005, 0.01, k)
    g = gen.normal(0.0, 0.08, k)
    stat = float(np.sum(w * (g * g - v)))
    z = gen.standard_normal((200, k))
    got = profile_upper_bound(w, g, v, stat, level, z)
    m = int(np.argmax(w * v))
    a_max = abs(g[m]) + 12 * math.sqrt(v[m]) + 0.5
    ref, _ = profile_bound_by_grid(w, g, v, stat, level, z, a_max)
    # no grid point above the exact gap qualifies, and the exact gap is the end of the
    # qualifying set: the model holds just below it (where the bound is above 0) and
    # not just above it. The set may have holes narrower than the grid's step, so the
    # grid's largest point can lie more than a step below it (0.10190 against 0.10200)
    assert got >= ref - 1e-12
    holds, _, _ = profile_model(w, g, v, stat, level, z)
    a_exact = math.sqrt(max(got - _base(w, g, v, m), 0.0) / w[m])
    eps = 1e-9 * max(1.0, a_exact)
    assert not holds(a_exact + eps)
    if a_exact > eps:
        assert holds(a_exact - eps)


def _base(w, g, v, m):
    kept = np.sign(g) * np.sqrt(np.maximum(g * g - v, 0.0))
    return float(sum(w[k] * kept[k] ** 2 for k in range(len(w)) if k != m))


@pytest.mark.parametrize("observed_gap", [0.02, 0.05, 0.15])
def test_one_bin_is_the_noncentral_chi_square_inversion(observed_gap):
    """One bin of weight 1: (T + v) / v is chi-square(1) of noncentrality a^2 / v, so the
    bound is the a^2 at which its cdf at the observed value is (1 - level) / 2."""
    v = 0.003
    stat = observed_gap**2 - v
    z = np.random.default_rng(5).standard_normal((400_000, 1))
    got = profile_upper_bound(np.ones(1), np.array([observed_gap]), np.array([v]), stat, 0.95,
                              z)
    x = (stat + v) / v
    lam = optimize.brentq(lambda nc: stats.ncx2.cdf(x, 1, nc) - 0.025, 1e-9, 500.0)
    assert got == pytest.approx(lam * v, rel=0.01)
    # above the squared gap itself: the bound reaches past what was observed
    assert got > observed_gap**2


def test_edges():
    z = np.random.default_rng(0).standard_normal((100, 2))
    # one bin whose gap is observed exactly at 0: the statistic is the least the model
    # gives, so every gap is rejected from below and the bound is the family's least, 0
    assert profile_upper_bound(np.ones(1), np.zeros(1), np.array([0.003]), -0.003, 0.95,
                               z[:, :1]) == 0.0
    # no bin's frequency varies: undefined
    assert math.isnan(profile_upper_bound(np.array([0.5, 0.5]), np.array([0.1, 0.0]),
                                          np.zeros(2), 0.005, 0.95, z))
    # a statistic far below anything the model gives: the family's smallest error
    low = profile_upper_bound(np.array([0.5, 0.5]), np.array([0.3, 0.0]),
                              np.array([0.001, 0.004]), -1.0, 0.95, z)
    assert low == pytest.approx(0.5 * (0.3**2 - 0.001))
    # a larger statistic never lowers the bound (same draws)
    bounds = [profile_upper_bound(np.array([0.5, 0.5]), np.array([0.1, 0.02]),
                                  np.array([0.001, 0.004]), t, 0.95, z)
              for t in np.linspace(-0.002, 0.02, 12)]
    assert all(b2 >= b1 - 1e-15 for b1, b2 in itertools.pairwise(bounds))


# --------------------------------------------------------------------------- l1, lower
@settings(max_examples=25, deadline=None)
@given(k=st.integers(1, 4), seed=st.integers(0, 2**32 - 1),
       level=st.sampled_from([0.8, 0.9, 0.95]), shift=st.floats(-0.02, 0.06))
def test_l1_bound_is_the_first_qualifying_scale_of_a_loop(k, seed, level, shift):
    """The bound's scale qualifies by an independent loop (scipy's folded normal), and
    a scale just below it, and every coarse grid value below it, does not."""
    gen = np.random.default_rng(seed)
    w = gen.dirichlet(np.ones(k))
    v = gen.uniform(0.0005, 0.01, k)
    g = gen.normal(0.0, 0.08, k)
    stat = float(np.sum(w * l1_debiased(g, np.sqrt(v)))) + shift
    z = gen.standard_normal((60, k))
    got = l1_profile_lower_bound(w, g, v, stat, level, z, steps=20)
    base = float(np.sum(w * np.abs(g)))
    lam = got / base
    args = (w, g, v, stat, level, z)
    if got == 0.0:
        assert l1_model_holds(*args, 0.0)
        return
    if lam >= 2.0 - 1e-12:        # nothing on the grid qualifies: the family's reach
        assert not any(l1_model_holds(*args, c) for c in np.linspace(0, 2, 21))
        return
    assert l1_model_holds(*args, lam)
    assert not l1_model_holds(*args, lam - 1e-9)
    assert not any(l1_model_holds(*args, c) for c in np.linspace(0, 2, 21) if c < lam - 0.1)


@pytest.mark.parametrize("observed_gap", [0.03, 0.08, 0.2])
def test_l1_one_bin_is_the_folded_normal_inversion(observed_gap):
    """One bin of weight 1: the debiased term h is even and increasing in |x|, so a
    model draw reaches T = h(c) exactly when |lam g + s Z| >= c, of probability
    Phi((lam g - c)/s) + Phi((-lam g - c)/s); the bound solves that = 0.025."""
    v = 0.003
    s = math.sqrt(v)
    stat = float(l1_debiased(np.array([observed_gap]), np.array([s]))[0])
    z = np.random.default_rng(5).standard_normal((150_000, 1))
    got = l1_profile_lower_bound(np.ones(1), np.array([observed_gap]), np.array([v]), stat,
                                 0.95, z)
    c = optimize.brentq(lambda x: l1_debiased(np.array([x]), np.array([s]))[0] - stat,
                        0.0, 1.0)

    def reach(lam):
        return (stats.norm.cdf((lam * observed_gap - c) / s)
                + stats.norm.cdf((-lam * observed_gap - c) / s))

    if reach(0.0) >= 0.025:
        assert got == 0.0
    else:
        lam = optimize.brentq(lambda x: reach(x) - 0.025, 0.0, 2.0)
        assert got == pytest.approx(lam * observed_gap, rel=0.01)
        assert got < observed_gap       # below what was observed


def test_l1_edges():
    z = np.random.default_rng(0).standard_normal((100, 2))
    w, v = np.array([0.5, 0.5]), np.array([0.002, 0.004])
    # a calibrated-looking sample: the zero error already qualifies
    assert l1_profile_lower_bound(w, np.array([0.01, -0.02]), v, -0.01, 0.95, z) == 0.0
    # no bin's frequency varies: undefined
    assert math.isnan(l1_profile_lower_bound(w, np.array([0.1, 0.0]), np.zeros(2), 0.05,
                                             0.95, z))
    # a statistic beyond anything the family gives: its largest error
    g = np.array([0.1, -0.05])
    assert l1_profile_lower_bound(w, g, v, 5.0, 0.95, z) == pytest.approx(
        2.0 * float(np.sum(w * np.abs(g))))
    # a larger statistic never lowers the bound (same draws)
    bounds = [l1_profile_lower_bound(w, g, v, t, 0.95, z) for t in np.linspace(0, 0.12, 13)]
    assert all(b2 >= b1 - 1e-12 for b1, b2 in itertools.pairwise(bounds))
