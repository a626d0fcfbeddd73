import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from scipy.stats import kurtosis
from scipy.stats import t as student_t

from coherence._resampling import MC_TIE_RTOL
from coherence._resampling import cluster_bootstrap_means
from coherence._resampling import cluster_draw_chunks
from coherence._resampling import cluster_draws
from coherence._resampling import cluster_mean_interval
from coherence._resampling import cluster_resample_rows
from coherence._resampling import cluster_weights
from coherence._resampling import expanded_level
from coherence._resampling import group_codes
from coherence._resampling import grouped_folds
from coherence._resampling import monte_carlo_pvalue
from coherence._resampling import percentile_interval
from coherence._resampling import satterthwaite_df
from coherence._resampling import streams_by_label
from coherence._resampling import tie_bound
from tests._reference_bootstrap_t import bootstrap_t_by_loops
from tests._reference_bootstrap_t import fraction_interval_by_hand
from tests._reference_bootstrap_t import heavy_tailed_by_loops
from tests._reference_resampling import cluster_bootstrap_indices
from tests._reference_ties import tie_ranks


def test_group_codes_any_labels():
    df = pd.DataFrame({"context": ["b", "a", "b", "c"]})
    assert list(group_codes(df, "context")) == [1, 0, 1, 2]


@given(sizes=st.lists(st.integers(1, 5), min_size=2, max_size=30), seed=st.integers(0, 999))
def test_cluster_bootstrap_keeps_clusters_whole(sizes, seed):
    groups = np.repeat(np.arange(len(sizes)), sizes)
    idx = cluster_bootstrap_indices(groups, np.random.default_rng(seed))
    drawn = groups[idx]
    # every drawn cluster appears with all of its rows, a whole number of times
    counts = np.bincount(drawn, minlength=len(sizes))
    sizes_arr = np.array(sizes)
    assert np.all(counts % sizes_arr == 0)
    # G clusters are drawn, so the drawn multiplicities add up to G
    assert (counts // sizes_arr).sum() == len(sizes)
    # a cluster drawn m times contributes each of its own rows exactly m times
    rows = np.bincount(idx, minlength=len(groups))
    assert np.array_equal(rows, (counts // sizes_arr)[groups])


@given(sizes=st.lists(st.integers(1, 6), min_size=5, max_size=40),
       k=st.integers(2, 5), seed=st.integers(0, 999))
def test_grouped_folds_partition_groups(sizes, k, seed):
    groups = np.repeat(np.arange(len(sizes)), sizes)
    folds = grouped_folds(groups, k, np.random.default_rng(seed))
    tests = np.concatenate([te for _, te in folds])
    assert sorted(tests) == list(range(len(groups)))
    for train, test in folds:
        assert not set(groups[train]) & set(groups[test])


def test_grouped_folds_too_many_splits():
    with pytest.raises(ValueError, match="must be <= the number of groups"):
        grouped_folds(np.array([0, 0, 1]), 3, np.random.default_rng(0))


def test_percentile_interval():
    low, high = percentile_interval(np.arange(1001.0), 0.9)
    assert low == pytest.approx(50.0) and high == pytest.approx(950.0)
    assert np.isnan(percentile_interval([np.nan], 0.95)[0])


# --------------------------------------------------------------------------- Monte Carlo p-value
def _reference_pvalue(null, observed):
    """Brute force: count, one resample at a time, those at least as extreme."""
    kept = [float(t) for t in null if not np.isnan(t)]
    if np.isnan(observed) or not kept:
        return np.nan
    tol = MC_TIE_RTOL * max(1.0, abs(observed))
    hits = 0
    for t in kept:
        if t >= observed - tol:
            hits += 1
    return (1 + hits) / (1 + len(kept))


def test_monte_carlo_pvalue_counts():
    null = np.array([0.1, 0.5, 0.5, 0.9])
    assert monte_carlo_pvalue(null, 0.5) == 4 / 5  # ties count
    assert monte_carlo_pvalue(null, 0.95) == 1 / 5  # never 0
    assert monte_carlo_pvalue(null, -1.0) == 1.0


def test_monte_carlo_pvalue_tie_rule():
    # a re-summed copy of the observed value is a tie; a real difference is not
    obs = 0.1 + 0.2 + 0.3
    resummed = 0.3 + 0.2 + 0.1
    assert obs != resummed
    assert monte_carlo_pvalue([resummed], obs) == 1.0
    assert monte_carlo_pvalue([obs - 1e-6], obs) == 0.5
    # the tolerance is relative for large statistics, absolute (1e-9) below 1
    big = 1e6
    assert monte_carlo_pvalue([big * (1 - 1e-10)], big) == 1.0
    assert monte_carlo_pvalue([big * (1 - 1e-8)], big) == 0.5
    assert monte_carlo_pvalue([1e-3 - 5e-10], 1e-3) == 1.0
    assert monte_carlo_pvalue([1e-3 - 5e-9], 1e-3) == 0.5


def test_monte_carlo_pvalue_nan():
    # NaN resamples are left out of both counts; a NaN statistic or no resample: NaN
    assert monte_carlo_pvalue([np.nan, 2.0, 0.0], 1.0) == 2 / 3
    assert np.isnan(monte_carlo_pvalue([1.0, 2.0], np.nan))
    assert np.isnan(monte_carlo_pvalue([np.nan], 1.0))
    assert np.isnan(monte_carlo_pvalue([], 1.0))


@given(null=st.lists(st.one_of(st.floats(-10, 10), st.just(float("nan"))), max_size=40),
       observed=st.floats(-10, 10), seed=st.integers(0, 999))
def test_monte_carlo_pvalue_matches_reference(null, observed, seed):
    arr = np.array(null, dtype=float)
    p = monte_carlo_pvalue(arr, observed)
    ref = _reference_pvalue(arr, observed)
    if np.isnan(ref):
        assert np.isnan(p)
        return
    assert p == ref
    kept = int(np.sum(~np.isnan(arr)))
    assert 1 / (1 + kept) <= p <= 1.0
    # order of the resamples does not matter; a larger statistic never has a larger p
    assert monte_carlo_pvalue(np.random.default_rng(seed).permutation(arr), observed) == p
    assert monte_carlo_pvalue(arr, observed + 1.0) <= p


@given(null=st.lists(st.one_of(st.sampled_from([0.0, 1.0, 2.0, 3.0]), st.floats(-5, 5),
                               st.just(float("nan"))), max_size=40),
       observed=st.sampled_from([0.0, 1.0, 2.0, 3.0]), seed=st.integers(0, 999))
def test_random_ties_give_one_of_the_data_ranks_among_its_ties(null, observed, seed):
    arr = np.array(null, dtype=float)
    gen = np.random.default_rng(seed)
    p = monte_carlo_pvalue(arr, observed, break_ties=gen)
    if np.all(np.isnan(arr)):
        assert np.isnan(p)
        return
    assert p in tie_ranks(arr, observed)
    kept = arr[~np.isnan(arr)]
    if np.all(np.abs(kept - observed) <= MC_TIE_RTOL * max(1.0, abs(observed))):
        assert p == 1.0  # nothing moved the statistic: no coin decides
    # never above the counting rule's p-value, never below 1 / (1 + B)
    assert 1 / (1 + np.sum(~np.isnan(arr))) <= p <= monte_carlo_pvalue(arr, observed)
    # the same generator state gives the same p-value
    assert monte_carlo_pvalue(arr, observed, break_ties=np.random.default_rng(seed)) == p


def test_random_ties_without_ties_or_with_all_tied_is_the_counting_rule():
    null = np.array([0.1, 0.4, 0.7, 0.9])
    gen = np.random.default_rng(3)
    state = gen.bit_generator.state
    assert monte_carlo_pvalue(null, 0.5, break_ties=gen) == monte_carlo_pvalue(null, 0.5)
    # every resample ties the data: nothing moved the statistic, so no coin decides
    assert monte_carlo_pvalue([2.0, 2.0, 2.0], 2.0, break_ties=gen) == 1.0
    assert gen.bit_generator.state == state
    # a re-summed copy (a few ulps off) is a tie on either side, an infinity only its equal
    obs = 0.1 + 0.2
    assert monte_carlo_pvalue([0.3, 0.3, 0.2], obs, break_ties=gen) in (1 / 4, 2 / 4, 3 / 4)
    assert monte_carlo_pvalue([np.inf, 1.0], np.inf, break_ties=gen) in (1 / 3, 2 / 3)
    assert monte_carlo_pvalue([-np.inf, 1.0], -np.inf, break_ties=gen) in (2 / 3, 1.0)


def test_random_ties_keep_the_size_of_a_discrete_statistic():
    """Exchangeable statistics with heavy ties (the data's statistic one more draw of
    the same law): the counting rule is conservative, the random rule's rank is
    uniform, so it rejects floor(alpha (B + 1)) / (B + 1) of the time."""
    gen = np.random.default_rng(11)
    B, studies = 19, 4000
    draws = gen.integers(0, 4, size=(studies, B + 1)).astype(float)
    counted = np.array([monte_carlo_pvalue(d[1:], d[0]) for d in draws])
    random = np.array([monte_carlo_pvalue(d[1:], d[0], break_ties=gen) for d in draws])
    # 4 values: P(count p <= 0.1) is P(the data's value is the top one and at most 1 copy
    # ties it), far below 0.1; the random rule's rejections are Binomial(4000, 0.1)
    assert np.mean(counted <= 0.1) < 0.02
    assert abs(np.mean(random <= 0.1) - 0.1) < 4 * np.sqrt(0.1 * 0.9 / studies)
    # the rank is uniform on 1..B+1
    counts = np.bincount(np.rint(random * (B + 1)).astype(int), minlength=B + 2)[1:]
    assert counts.min() > 0.7 * studies / (B + 1)


# --------------------------------------------------------------------------- cluster bootstrap
def test_cluster_draws_one_call_equals_one_per_resample():
    a = cluster_draws(7, 20, np.random.default_rng(3))
    rng = np.random.default_rng(3)
    b = np.array([rng.integers(0, 7, size=7) for _ in range(20)])
    assert a.shape == (20, 7)
    np.testing.assert_array_equal(a, b)


@given(n_groups=st.integers(1, 30), n_resamples=st.integers(1, 50),
       max_elements=st.integers(1, 200))
def test_cluster_draw_chunks_equal_one_call(n_groups, n_resamples, max_elements):
    whole = cluster_draws(n_groups, n_resamples, np.random.default_rng(1))
    got = np.empty_like(whole)
    stops = []
    for start, stop, draws in cluster_draw_chunks(n_groups, n_resamples,
                                                  np.random.default_rng(1),
                                                  max_elements=max_elements):
        got[start:stop] = draws
        stops.append(stop)
    assert stops[-1] == n_resamples
    np.testing.assert_array_equal(got, whole)


def test_cluster_weights_count_draws():
    draws = np.array([[0, 0, 2], [1, 2, 1]])
    np.testing.assert_array_equal(cluster_weights(draws, 3), [[2, 0, 1], [0, 2, 1]])


@given(sizes=st.lists(st.integers(1, 5), min_size=1, max_size=15), seed=st.integers(0, 999))
def test_cluster_resample_rows_match_reference(sizes, seed):
    rng = np.random.default_rng(seed)
    groups = rng.permutation(np.repeat(np.arange(len(sizes)), sizes))
    draws = cluster_draws(len(sizes), 4, rng)
    rows, offsets = cluster_resample_rows(groups, draws)
    for b, drawn in enumerate(draws):
        ref = np.concatenate([np.flatnonzero(groups == g) for g in drawn])
        np.testing.assert_array_equal(rows[offsets[b]:offsets[b + 1]], ref)


def test_cluster_bootstrap_means_equal_stacked_rows():
    rng = np.random.default_rng(5)
    clusters = np.array([0, 0, 1, 2, 2, 2, 3])
    values = rng.normal(size=(7, 2))
    fast = cluster_bootstrap_means(values, clusters, 30, np.random.default_rng(9))
    draws = cluster_draws(4, 30, np.random.default_rng(9))
    rows, offsets = cluster_resample_rows(clusters, draws)
    slow = np.array([values[rows[offsets[b]:offsets[b + 1]]].mean(axis=0) for b in range(30)])
    np.testing.assert_allclose(fast, slow, rtol=1e-12)


@pytest.mark.parametrize("kind", ["proportion", "fraction", "nonnegative"])
@given(rows=st.lists(st.tuples(st.sampled_from("abcdef"), st.floats(0, 1)), min_size=2,
                     max_size=30), shuffle=st.randoms(use_true_random=False))
def test_cluster_mean_interval_does_not_depend_on_row_order(kind, rows, shuffle):
    """Clusters are coded in sorted label order: the same rng gives the same interval
    whatever the order of the rows (up to the rounding of the sums within a cluster); the
    interval stays in the values' range ([0, 1], or from 0) and holds the mean."""
    labels = np.array([r[0] for r in rows], dtype=object)
    values = np.array([r[1] for r in rows])
    if kind == "proportion":
        values = np.round(values)
    order = list(range(len(rows)))
    shuffle.shuffle(order)
    a = cluster_mean_interval(values, labels, 50, 0.9, np.random.default_rng(1), kind=kind)
    b = cluster_mean_interval(values[order], labels[order], 50, 0.9,
                              np.random.default_rng(1), kind=kind)
    # to round-off of the summation order: an end of 9.93 (3 clusters) moved by 3.5e-11
    np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)
    assert 0.0 <= a[0] <= a[1]
    if kind != "nonnegative":
        assert a[0] - 1e-12 <= values.mean() <= a[1] + 1e-12 and a[1] <= 1.0


@given(st.floats(0.5, 0.995), st.integers(2, 10_000))
def test_expanded_level_solves_its_definition(level, n):
    """z at the expanded level = sqrt(n/(n-1)) t_{n-1} at ``level``: wider than ``level``,
    narrowing towards it as n grows."""
    from scipy.stats import norm
    from scipy.stats import t

    wide = expanded_level(level, n)
    assert level < wide <= 1.0
    z = math.sqrt(n / (n - 1)) * t.ppf(1 - (1 - level) / 2, n - 1)
    # 1 - wide is the two-sided normal tail at z, to the precision a level near 1 holds
    # (1.1e-16 absolute: at z = 7.1, 1 - wide is 1.2e-12, known to 1e-4 of itself)
    assert 1.0 - wide == pytest.approx(2.0 * norm.sf(z), rel=1e-9, abs=2.3e-16)
    assert expanded_level(level, n + 1) <= wide


def test_expanded_level_values():
    # z = sqrt(30/29) * 2.0452296 = 2.0802; 2 * (1 - Phi(2.0802)) = 0.03751
    assert expanded_level(0.95, 30) == pytest.approx(0.96249, abs=1e-5)
    assert expanded_level(0.95, 2) == pytest.approx(1.0)
    assert math.isnan(expanded_level(0.95, 1))


def test_percentile_interval_between_equal_infinite_replicates():
    """An end between two infinite replicates is infinite, not NaN (and no warning)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert percentile_interval([1.0, 2.0, np.inf, np.inf, np.inf], 0.5) == (2.0, np.inf)
        low, high = percentile_interval([-np.inf, -np.inf, 0.0, 1.0], 0.8)
        assert low == -np.inf and high == pytest.approx(0.7)  # position 2.7 of 0..3
    assert percentile_interval([1.0, 2.0, 3.0], 0.5) == (1.5, 2.5)


@settings(max_examples=60)
@given(values=st.lists(st.one_of(st.floats(-5, 5), st.sampled_from([-np.inf, np.inf])),
                       min_size=1, max_size=12),
       level=st.floats(0.05, 0.99))
def test_percentile_interval_with_infinities_never_nan(values, level):
    """Written out: each end is the linear interpolation at q (n - 1) of the sorted
    replicates, an infinity where the interpolation reaches one (weight above 0), and
    between -inf and +inf the wider choice."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        got = percentile_interval(values, level)
    s = sorted(values)
    for q, end, wide in (((1 - level) / 2, got[0], -np.inf), ((1 + level) / 2, got[1], np.inf)):
        pos = q * (len(s) - 1)
        lo_i = math.floor(pos)
        frac = pos - lo_i
        a, b = s[lo_i], s[min(lo_i + 1, len(s) - 1)]
        if frac == 0 or a == b:
            want = a
        elif np.isinf(a) and np.isinf(b):
            want = wide
        elif np.isinf(a) or np.isinf(b):
            want = a if np.isinf(a) else b
        else:
            want = a + frac * (b - a)
        assert not math.isnan(end)
        assert end == want or end == pytest.approx(want, rel=1e-9, abs=1e-12)


def test_an_infinite_statistic_ties_only_an_equal_infinity():
    """The relative tolerance of a tie cannot apply to inf (inf - inf is NaN): equal
    infinities tie, as the documented rule says."""
    assert monte_carlo_pvalue([np.inf, np.inf, 1.0], np.inf) == 0.75
    assert monte_carlo_pvalue([1.0, 2.0], np.inf) == pytest.approx(1 / 3)
    assert monte_carlo_pvalue([-np.inf, 0.0], -np.inf) == 1.0


def test_tie_bound_of_an_array_is_the_elementwise_rule():
    x = np.array([0.5, -2.0, 30.0, np.inf, -np.inf, np.nan])
    got = tie_bound(x)
    want = [tie_bound(v) for v in x]
    np.testing.assert_array_equal(got, want)
    assert got[0] == 0.5 - 1e-9 and got[2] == 30.0 - 30e-9 and got[3] == np.inf


def test_streams_by_label_follow_the_sorted_rank():
    """A label gets the stream of its sorted rank, the pooled row the last one."""
    a = streams_by_label(np.random.default_rng(4), ["b", "c", "a"])
    b = streams_by_label(np.random.default_rng(4), ["a", "b", "c"])
    draw = [g.integers(0, 2**31, 3).tolist() for g in a]
    again = [g.integers(0, 2**31, 3).tolist() for g in b]
    assert draw[0] == again[1] and draw[1] == again[2] and draw[2] == again[0]
    assert draw[3] == again[3] and len({tuple(d) for d in draw}) == 4


#: fractions 0 or from 1e-100: below it statsmodels' Wilson interval (the reference)
#: squares an effective size of 1e155 and overflows
_fraction_rows = st.lists(st.tuples(st.sampled_from("abcdefgh"),
                                    st.sampled_from([0.0, 0.2, 0.25, 0.5, 0.6, 1.0, np.nan])
                                    | st.floats(0, 1).map(lambda x: x if x >= 1e-100 else 0.0)),
                          min_size=1, max_size=40)


@given(rows=_fraction_rows, level=st.sampled_from([0.8, 0.9, 0.95]))
def test_fraction_interval_is_wilson_at_the_effective_size_with_a_t_quantile(rows, level):
    """kind='fraction' against loops and statsmodels' Wilson interval at the level whose
    normal quantile is Student's t on (clusters - 1) degrees of freedom (levels whose
    normal tail does not underflow at 1 degree of freedom)."""
    labels = np.array([r[0] for r in rows], dtype=object)
    values = np.array([r[1] for r in rows], dtype=float)
    got = cluster_mean_interval(values, labels, 9, level, np.random.default_rng(0),
                                kind="fraction")
    if np.isnan(values).all():
        assert np.isnan(got).all()
        return
    np.testing.assert_allclose(got, fraction_interval_by_hand(values, labels, level),
                               rtol=1e-9, atol=1e-12)
    assert 0.0 <= got[0] <= np.nanmean(values) <= got[1] <= 1.0


@given(raw=st.lists(st.floats(-50, 50), min_size=2, max_size=40))
def test_satterthwaite_df_is_the_kurtosis_formula_within_one_and_c_minus_one(raw):
    """2C / (k - (C - 3) / (C - 1)) for scipy's kurtosis k of the (centred) residuals,
    held in [1, C - 1]; C - 1 where they do not vary."""
    r = np.asarray(raw) - np.mean(raw)
    c = r.size
    got = satterthwaite_df(r)
    assert 1.0 <= got <= max(c - 1.0, 1.0)
    if not float(r @ r) > 1e-9:
        return
    want = 2 * c / (kurtosis(r, fisher=False, bias=True) - (c - 3) / (c - 1))
    assert got == pytest.approx(min(max(want, 1.0), c - 1.0), rel=1e-9)


def test_fraction_interval_widens_where_one_question_holds_the_hits():
    """Ten questions, the hits all in one: the residuals' kurtosis is 8.1, Satterthwaite's
    degrees of freedom 20 / (8.11 - 7/9) = 2.73, not 9, and Student's quantile on them
    (3.4, not 2.26) sets the interval; where the residuals are +-0.1 (kurtosis 1) the
    degrees of freedom stay C - 1, and the scale of the residuals does not matter."""
    labels = np.repeat(np.arange(10), 2)
    values = np.zeros(20)
    values[:2] = [1.0, 0.8]
    r = np.r_[1.8 - 0.09 * 2, np.full(9, -0.09 * 2)]  # sums minus size x mean
    df = satterthwaite_df(r)
    assert df == pytest.approx(20 / (10 * np.sum(r**4) / np.sum(r**2) ** 2 - 7 / 9))
    assert 2.6 < df < 2.9
    got = cluster_mean_interval(values, labels, 9, 0.95, np.random.default_rng(0),
                                kind="fraction")
    np.testing.assert_allclose(got, fraction_interval_by_hand(values, labels, 0.95),
                               rtol=1e-12)
    se = math.sqrt(10 / 9 * np.sum(r**2)) / 20
    n = 0.09 * 0.91 / se**2
    for dof, interval in ((df, got), (9.0, None)):
        q = student_t.ppf(0.975, dof)
        shrink = 1 + q * q / n
        half = q / shrink * math.sqrt(0.09 * 0.91 / n + q * q / (4 * n * n))
        want = ((0.09 + q * q / (2 * n)) / shrink - half, (0.09 + q * q / (2 * n)) / shrink
                + half)
        if interval is not None:
            np.testing.assert_allclose(interval, want, rtol=1e-12)
        else:
            assert want[1] - want[0] < 0.75 * (got[1] - got[0])
    assert satterthwaite_df(np.tile([0.1, -0.1], 5)) == 9.0
    for scale in (1e-200, 1e200):
        assert satterthwaite_df(r * scale) == pytest.approx(df, rel=1e-12)


def test_fraction_interval_reaches_past_a_sample_of_zeros_and_ones():
    """A mean of 0 over C questions gives Wilson's [0, t^2 / (C + t^2)] (a bootstrap gives
    the point 0); 1 mirrors it."""
    q = student_t.ppf(0.975, 9)
    labels = np.repeat(np.arange(10), 3)
    zero = cluster_mean_interval(np.zeros(30), labels, 9, 0.95, np.random.default_rng(0),
                                 kind="fraction")
    np.testing.assert_allclose(zero, (0.0, q * q / (10 + q * q)), rtol=1e-12)
    one = cluster_mean_interval(np.ones(30), labels, 9, 0.95, np.random.default_rng(0),
                                kind="fraction")
    np.testing.assert_allclose(one, (10 / (10 + q * q), 1.0), rtol=1e-12)


@pytest.mark.parametrize("kind", ["nonnegative", "heavy-tailed"])
@given(rows=st.lists(st.tuples(st.integers(0, 5), st.floats(0, 50)), min_size=2,
                     max_size=30), seed=st.integers(0, 2**32 - 1))
def test_bootstrap_t_kinds_are_the_by_loops_intervals(kind, rows, seed):
    """Both kinds are the cluster bootstrap-t interval of the documented draws with
    Student's factor on Satterthwaite's degrees of freedom, cut at 0 (the point where the
    values do not vary), never narrower than the plain bootstrap-t's."""
    labels = np.array([r[0] for r in rows])
    values = np.array([r[1] for r in rows])
    got = cluster_mean_interval(values, labels, 19, 0.9, np.random.default_rng(seed),
                                kind=kind)
    c = len(set(labels))
    codes = np.searchsorted(np.unique(labels), labels)
    means = np.array([values[codes == k].mean() for k in range(c)])
    sums = np.array([values[codes == k].sum() for k in range(c)])
    sizes = np.bincount(codes)
    spread = np.sum((sums - sizes * values.mean()) ** 2)
    if c < 2 or spread <= 1e-12 * np.sum(sums**2 + (sizes * values.mean()) ** 2):
        assert c < 2 or np.allclose(means, means[0]) or got[0] == got[1]
        return
    draws = np.random.default_rng(seed).integers(0, c, size=(19, c))
    lo, hi = bootstrap_t_by_loops(values, codes, draws, 0.9)
    want = heavy_tailed_by_loops(values, codes, draws, 0.9, (0.0, np.inf))
    np.testing.assert_allclose(got, want, rtol=1e-9, atol=1e-9)
    assert got[0] <= max(lo, 0.0) + 1e-12 and got[1] >= hi - 1e-12  # the factor widens


#: values 0 or from 1e-100: a value whose square underflows (5e-160) breaks the
#: equivariance in the last bits of a spread computed from squares
_AMOUNTS = st.floats(0, 1e3).map(lambda x: x if x >= 1e-100 else 0.0)


@given(rows=st.lists(st.tuples(st.integers(0, 7), _AMOUNTS), min_size=3,
                     max_size=40), scale=st.floats(1e-3, 1e3), seed=st.integers(0, 2**32 - 1))
@settings(max_examples=60, deadline=None)
def test_nonnegative_interval_is_scale_equivariant_and_holds_the_plain_one(rows, scale, seed):
    """kind='nonnegative' with one rng: the 'heavy-tailed' interval; values times c give
    the interval times c (the pivots and Satterthwaite's degrees of freedom do not depend
    on the scale); it starts at 0 or above and holds the plain bootstrap-t interval (the
    pivots of the same draws, cut at 0)."""
    from coherence._resampling import cluster_mean_pivots
    from coherence._resampling import mean_interval

    labels = np.array([r[0] for r in rows])
    values = np.array([r[1] for r in rows])
    got = cluster_mean_interval(values, labels, 39, 0.95, np.random.default_rng(seed),
                                kind="nonnegative")
    assert got == cluster_mean_interval(values, labels, 39, 0.95,
                                        np.random.default_rng(seed), kind="heavy-tailed")
    scaled = cluster_mean_interval(values * scale, labels, 39, 0.95,
                                   np.random.default_rng(seed), kind="nonnegative")
    np.testing.assert_allclose(scaled, np.asarray(got) * scale, rtol=1e-7,
                               atol=1e-9 * scale * max(1.0, float(values.max())))
    codes = np.searchsorted(np.unique(labels), labels)
    if codes.max() < 1:
        return
    mean, se, reps, reps_se = cluster_mean_pivots(values[:, None], codes, 39,
                                                  np.random.default_rng(seed))
    plain = mean_interval(float(mean[0]), float(se[0]), reps[:, 0], reps_se[:, 0], 0.95,
                          (0.0, np.inf))
    assert 0.0 <= got[0] <= plain[0] + 1e-9 and got[1] >= plain[1] - 1e-9


def test_nonnegative_interval_widens_the_bootstrap_t_where_one_question_holds_a_tail():
    """Twelve questions of date errors, one of them 60 days: the residuals' kurtosis
    leaves Satterthwaite 2.6 degrees of freedom, not 11, and the bootstrap-t's distances
    from the mean are times sqrt(12/11) t_2.6 / z (1.86); the plain bootstrap-t
    interval (the release before) is the shorter one inside it."""
    labels = np.repeat(np.arange(12), 2)
    values = np.tile([2.0, 3.0], 12)
    values[0] = 60.0
    draws = np.random.default_rng(3).integers(0, 12, size=(99, 12))
    lo, hi = bootstrap_t_by_loops(values, labels, draws, 0.95)
    mean = values.mean()
    resid = np.array([values[labels == k].sum() - 2 * mean for k in range(12)])
    nu = 2 * 12 / (kurtosis(resid, fisher=False, bias=True) - 9 / 11)
    assert 2.5 < nu < 2.7
    f = math.sqrt(12 / 11) * student_t.ppf(0.975, nu) / 1.959963984540054
    got = cluster_mean_interval(values, labels, 99, 0.95, np.random.default_rng(3),
                                kind="nonnegative")
    np.testing.assert_allclose(got, (max(mean - f * (mean - lo), 0.0), mean + f * (hi - mean)),
                               rtol=1e-9)
    assert got[1] - mean > 1.85 * (hi - mean)


def test_cluster_mean_interval_names_a_bad_kind():
    with pytest.raises(ValueError, match=r"kind must be one of .*'fraction'.*got 'ratio'"):
        cluster_mean_interval(np.ones(3), np.arange(3), 9, 0.95, np.random.default_rng(0),
                              kind="ratio")


def test_round_off_difference_zeroes_only_round_off():
    from coherence._resampling import round_off_difference

    a = np.array([1 / 14400 + 1e-19, 0.3, 0.0, np.nan, -2.0, 1e-20])
    b = np.array([1 / 14400, 0.1, 0.0, 1.0, -2.0 - 3e-9, 0.0])
    got = round_off_difference(a, b)
    assert got[0] == 0.0 and got[2] == 0.0  # equal to round-off; exactly equal
    assert got[1] == pytest.approx(0.2) and np.isnan(got[3])
    assert got[4] == pytest.approx(3e-9)  # 1.5e-9 of the larger: a real difference
    assert got[5] == 1e-20  # nothing to compare it with: kept


@given(base=st.floats(-1e3, 1e3), gap=st.sampled_from([1e-3, 1e-5, 1e-7]),
       sizes=st.lists(st.integers(1, 4), min_size=2, max_size=6),
       seed=st.integers(0, 2**32 - 1))
@settings(max_examples=40, deadline=None)
def test_weighted_mean_pivots_keep_a_small_spread_beside_a_large_mean(base, gap, sizes, seed):
    """Clusters whose means differ by a small share of their size (1.0 and 0.99999): the
    standard error of each resample is the direct sum of squared residuals to 1e-9 of
    itself (expanded sums of squares lost a million-fold of it to cancellation)."""
    from coherence._resampling import weighted_mean_pivots

    c = len(sizes)
    gen = np.random.default_rng(seed)
    centre = base + gap * max(1.0, abs(base)) * gen.standard_normal(c)
    counts = np.asarray(sizes, dtype=np.float64)
    sums = (centre * counts)[:, None]
    weights = cluster_weights(gen.integers(0, c, size=(25, c)), c)
    mean, se = weighted_mean_pivots(weights, sums, counts)
    for b, w in enumerate(weights):
        m = float(w @ sums[:, 0]) / float(w @ counts)
        resid = np.array([math.fsum([s, -k * m]) for s, k in zip(sums[:, 0], counts, strict=True)])
        ss = math.fsum(w * resid * resid)
        want = math.sqrt(c / (c - 1.0) * ss) / float(w @ counts)
        assert mean[b, 0] == pytest.approx(m, rel=1e-12, abs=1e-300)
        scale = math.fsum(w * sums[:, 0] ** 2) + m * m * float(w @ counts**2)
        if np.count_nonzero(w) < 2 or ss <= 2e-12 * scale:
            continue  # one cluster drawn, or a spread of round-off: 0 by the rule
        assert se[b, 0] == pytest.approx(want, rel=1e-9)
