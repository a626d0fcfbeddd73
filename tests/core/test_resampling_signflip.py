"""The sign-flip test and its inverted interval (coherence._skewflip), and the cluster
bootstrap-t pieces of coherence._resampling, against brute-force references."""

import itertools
import math

import numpy as np
import pytest
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from coherence._resampling import MC_TIE_RTOL
from coherence._resampling import cluster_bootstrap_means
from coherence._resampling import cluster_mean_pivots
from coherence._skewflip import sign_flip_interval
from coherence._skewflip import sign_flip_pvalue
from coherence._skewflip import sign_flips

#: unit sums on a coarse grid (ties and zeros are common) or arbitrary
_sums = st.lists(st.one_of(st.sampled_from([0.0, 0.1, -0.1, 0.25, -0.5, 1.0]),
                           st.floats(-2.0, 2.0)), min_size=1, max_size=7)


def _enumerated_pvalue(sums: np.ndarray, sizes: np.ndarray, delta: float
                       ) -> tuple[float, float]:
    """Share of all 2^C sign vectors with |sum s (D - delta m)| >= |sum (D - delta m)|, up
    to the tie rule (MC_TIE_RTOL): the lowest and highest share, which differ only where a
    vector's statistic lies within round-off (1e-12) of the rule's bound, so that the order
    of the additions decides which side it falls on (seed 65537: 1e-9 below the observed
    0.1000000006 exactly, at delta = 1e-10)."""
    centred = sums - delta * sizes
    obs = abs(centred.sum())
    null = np.array([abs(float(np.dot(s, centred)))
                     for s in itertools.product((1, -1), repeat=len(sums))])
    bound = obs - MC_TIE_RTOL * max(1.0, obs)
    return (float(np.mean(null > bound + 1e-12)), float(np.mean(null >= bound - 1e-12)))


def test_sign_flips_enumerate_all_vectors_when_few():
    d, m = np.array([1.0, 10.0, 100.0]), np.array([1.0, 2.0, 4.0])
    flips = sign_flips(d, m, 8, np.random.default_rng(0))
    assert flips.exact and flips.flipped.shape == (8,)
    every = np.array(list(itertools.product((1.0, -1.0), repeat=3)))
    assert sorted(flips.flipped) == sorted(every @ d)
    assert sorted(zip(flips.flipped, flips.flipped_sizes, strict=True)) == sorted(
        zip(every @ d, every @ m, strict=True))
    flips = sign_flips(np.ones(4), np.ones(4), 8, np.random.default_rng(0))
    assert not flips.exact and flips.flipped.shape == (8,)


def test_random_sign_flips_in_blocks_are_the_documented_draws():
    """Blocks of at most max_elements signs, each rng.integers(0, 2, size=(rows, C))."""
    gen = np.random.default_rng(3)
    d, m = gen.normal(size=7), np.arange(1.0, 8.0)
    flips = sign_flips(d, m, 20, np.random.default_rng(5), max_elements=21)  # 3 rows a block
    ref = np.random.default_rng(5)
    blocks = [1.0 - 2.0 * ref.integers(0, 2, size=(min(3, 20 - start), 7))
              for start in range(0, 20, 3)]
    signs = np.concatenate(blocks)
    np.testing.assert_allclose(flips.flipped, signs @ d, rtol=1e-12)
    np.testing.assert_allclose(flips.flipped_sizes, signs @ m, rtol=1e-12)


@settings(max_examples=60)
@given(_sums, st.data())
def test_exact_pvalue_matches_enumeration_and_scipy(sums, data):
    from scipy import stats

    d = np.array(sums)
    sizes = np.ones(d.size)
    flips = sign_flips(d, sizes, 2**d.size, np.random.default_rng(0))
    assert flips.exact
    p = sign_flip_pvalue(flips)
    low, high = _enumerated_pvalue(d, sizes, 0.0)
    assert low - 1e-12 <= p <= high + 1e-12
    # scipy's tie rule (relative to the observed statistic alone) differs from ours at
    # ties: compared where no sign vector but the two trivial ones comes near the observed
    # (sums [-0.1, 0.25, 0.25, -0.1, -0.5, 0.1, 0.1] total 0 up to round-off: ours 1,
    # scipy's 0.9375)
    null = np.abs(flips.flipped)
    near = np.abs(null - abs(d.sum())) <= 1e-6 * max(1.0, abs(d.sum()))
    if d.size >= 2 and np.count_nonzero(near) == 2:
        ref = stats.permutation_test((d, np.zeros_like(d)), lambda x, y, axis: np.mean(
            x - y, axis=axis), permutation_type="samples", n_resamples=2**d.size,
            vectorized=True, alternative="two-sided").pvalue
        assert p == pytest.approx(ref, abs=1e-12)
    delta = data.draw(st.floats(-1.0, 1.0))
    low, high = _enumerated_pvalue(d, sizes, delta)
    assert low - 1e-12 <= sign_flip_pvalue(flips, delta) <= high + 1e-12


def test_exact_pvalue_at_the_edges_of_the_tie_rule():
    """Two draws of a randomized sweep (seed 65537): an observed total that is 0 up to
    round-off (every vector ties it: p = 1, where scipy's rule, relative to the observed
    alone, gave 0.9375), and a vector 1e-9 below the observed exactly (the rule's bound),
    which the test counts; the reference brackets both."""
    d = np.array([-0.1, 0.25, 0.25, -0.1, -0.5, 0.1, 0.1])
    flips = sign_flips(d, np.ones(7), 2**7, np.random.default_rng(0))
    assert sign_flip_pvalue(flips) == 1.0
    low, high = _enumerated_pvalue(d, np.ones(7), 0.0)
    assert low <= 1.0 <= high
    d = np.array([0.0, 0.0, -0.1, 0.25, 0.25, -0.5])
    flips = sign_flips(d, np.ones(6), 2**6, np.random.default_rng(0))
    p = sign_flip_pvalue(flips, 1e-10)
    assert (_enumerated_pvalue(d, np.ones(6), 1e-10), p) == ((0.96875, 1.0), 1.0)


def test_monte_carlo_pvalue_counts_the_random_vectors():
    d = np.array([0.3, -0.1, 0.2, 0.4, 0.1, 0.05, -0.2, 0.3, 0.25, 0.1])
    sizes = np.arange(1.0, 11.0)
    flips = sign_flips(d, sizes, 99, np.random.default_rng(4))
    assert not flips.exact
    signs = 1.0 - 2.0 * np.random.default_rng(4).integers(0, 2, size=(99, d.size))
    null = np.abs(signs @ d)
    expected = (1 + np.sum(null >= abs(d.sum()) * (1 - 1e-12))) / 100
    assert sign_flip_pvalue(flips) == pytest.approx(expected)


@settings(max_examples=60)
@given(_sums, st.lists(st.integers(1, 4), min_size=7, max_size=7),
       st.sampled_from([0.8, 0.9, 0.95]), st.booleans())
def test_interval_is_the_set_the_test_does_not_reject(sums, sizes, level, exact):
    """Brute force: just inside an end the p-value (enumerated, or over the same random
    vectors) exceeds 1 - level, just outside it does not; an infinite end means that
    even far away nothing is rejected."""
    d = np.array(sums)
    m = np.array(sizes[:d.size], dtype=float)
    b = 2**d.size if exact else 40
    flips = sign_flips(d, m, b, np.random.default_rng(1))
    low, high = sign_flip_interval(flips, level)
    alpha = 1 - level
    mean = d.sum() / m.sum()
    assert low <= mean + 1e-12 and mean - 1e-12 <= high

    def p(delta: float) -> float:
        return sign_flip_pvalue(flips, delta)

    for end, inward in ((low, 1.0), (high, -1.0)):
        if math.isinf(end):
            assert p(mean - inward * 1e6) > alpha
            continue
        if abs(end - mean) < 1e-9:  # the interval closes at the mean
            continue
        eps = 1e-7 * max(1.0, abs(end))
        assert p(end + inward * eps) > alpha
        assert p(end - inward * eps) <= alpha


@settings(max_examples=40)
@given(st.lists(st.integers(1, 4), min_size=1, max_size=8), st.integers(0, 999))
@example(sizes=[1, 4, 4, 1], seed=4)
def test_cluster_mean_pivots_match_loops(sizes, seed):
    gen = np.random.default_rng(seed)
    codes = np.repeat(np.arange(len(sizes)), sizes)
    values = np.column_stack([gen.uniform(size=codes.size), gen.integers(0, 2, codes.size)])
    mean, se, reps, reps_se = cluster_mean_pivots(values, codes, 30, np.random.default_rng(7))
    # the replicate means are cluster_bootstrap_means' (the same draws)
    np.testing.assert_allclose(reps, cluster_bootstrap_means(values, codes, 30,
                                                             np.random.default_rng(7)),
                               rtol=1e-12, atol=1e-12)
    draws = np.random.default_rng(7).integers(0, len(sizes), size=(30, len(sizes)))
    c = len(sizes)
    for b in [None, *range(30)]:
        picked = list(range(c)) if b is None else list(draws[b])
        rows = [np.flatnonzero(codes == k) for k in picked]
        stacked = np.concatenate([values[r] for r in rows])
        xbar = stacked.mean(axis=0)
        ss = sum((values[r].sum(axis=0) - len(r) * xbar) ** 2 for r in rows)
        # the documented rule: a sum of squares within 1e-12 of its scale is 0 (seed 1 of
        # a sweep drew two clusters of means 0.5439408 and 0.5439414: ss 4.4e-13, scale 29)
        scale = sum(values[r].sum(axis=0) ** 2 + len(r) ** 2 * xbar ** 2 for r in rows)
        ss = np.where(ss > 1e-12 * scale, ss, 0.0)
        want_se = (np.sqrt(c / (c - 1) * ss / len(stacked) ** 2) if c > 1
                   else np.full(2, np.nan))
        got_mean, got_se = (mean, se) if b is None else (reps[b], reps_se[b])
        np.testing.assert_allclose(got_mean, xbar, rtol=1e-12, atol=1e-12)
        np.testing.assert_allclose(got_se, want_se, rtol=1e-6, atol=1e-9)


def test_cluster_mean_pivots_zero_spread_is_zero():
    """Clusters of one mean give se 0 exactly, not a rounding residue."""
    codes = np.repeat(np.arange(5), 3)
    values = np.full((15, 1), 1 / 3)
    _, se, _, reps_se = cluster_mean_pivots(values, codes, 20, np.random.default_rng(0))
    assert se[0] == 0.0 and np.all(reps_se == 0.0)
