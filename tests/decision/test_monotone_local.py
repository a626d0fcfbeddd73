"""The localised monotone-choice test (``monotonicity_test(method='local')``), its
windows and jackknife against a brute-force reference, and the sequential p-value."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence
from coherence._decision._monotone_local import local_comparisons
from coherence._decision._monotone_local import max_t_null
from coherence._decision._monotone_local import scales_for
from coherence._decision._monotone_local import within_context_correlation
from coherence._resampling import sequential_pvalue
from coherence._warnings import DegenerateDataWarning
from coherence._warnings import SmallSampleWarning


# --------------------------------------------------------------------------- reference
def reference_comparisons(belief, first, groups, min_contexts):
    """Slow, literal version: windows grown value by value with sets of contexts, the
    jackknife by deleting each context's rows and recomputing both shares."""
    values = sorted(set(belief.tolist()))
    rows_at = {v: np.flatnonzero(belief == v) for v in values}
    n_contexts = len(set(groups.tolist()))
    order = np.lexsort((groups, belief))
    values_of_row = np.searchsorted(values, belief[order])
    # the same correlation estimate (tested on its own below), from the same coarse cells
    cum = np.concatenate([[0.0], np.cumsum([len(set(groups[rows_at[v]].tolist()))
                                            for v in values])])
    coarse = np.searchsorted(cum, cum[-1] * np.arange(1, 5) / 5.0)
    cells = np.searchsorted(np.unique(np.clip(coarse - 1, 0, len(values) - 1)), values_of_row)
    rho = within_context_correlation(first[order], groups[order], cells)
    out = []
    seen = set()
    for t in scales_for(n_contexts, min_contexts):
        step, last = max(1.0, t / 4.0), -math.inf
        for i in range(len(values) - 1):
            if cum[i + 1] - last < step:
                continue
            last = cum[i + 1]

            def grow(start, direction, t=t):
                ctx, v = set(), start
                while 0 <= v < len(values):
                    ctx |= set(groups[rows_at[values[v]]].tolist())
                    if len(ctx) >= t:
                        return v, len(ctx)
                    v += direction
                return v - direction, len(ctx)

            lo_end, n_lo = grow(i, -1)
            hi_end, n_hi = grow(i + 1, 1)
            if min(n_lo, n_hi) < max(3.0, t / 2.0) or (lo_end, i, hi_end) in seen:
                continue
            seen.add((lo_end, i, hi_end))
            low = np.concatenate([rows_at[values[v]] for v in range(lo_end, i + 1)])
            high = np.concatenate([rows_at[values[v]] for v in range(i + 1, hi_end + 1)])
            diff = first[low].mean() - first[high].mean()
            both = sorted(set(groups[low].tolist()) | set(groups[high].tolist()))
            dels = []
            for c in both:
                lo_kept = low[groups[low] != c]
                hi_kept = high[groups[high] != c]
                s_lo = first[lo_kept].mean() if len(lo_kept) else first[low].mean()
                s_hi = first[hi_kept].mean() if len(hi_kept) else first[high].mean()
                dels.append(s_lo - s_hi)
            dels = np.array(dels)
            g = len(both)
            v_jk = (g - 1) / g * float(np.sum((dels - dels.mean()) ** 2))
            pooled = (first[low].sum() + first[high].sum() + 0.5) / (len(low) + len(high) + 1)

            def weight(rows):
                m = np.bincount(np.unique(groups[rows], return_inverse=True)[1].ravel())
                return float(np.sum(m + m * (m - 1) * rho)) / len(rows) ** 2

            v0 = pooled * (1 - pooled) * (weight(low) + weight(high))
            out.append((t, values[lo_end], values[i], values[i + 1], values[hi_end], diff,
                        math.sqrt(max(v_jk, v0))))
    return out


def _study(rng, n_contexts=40, reps=(1, 4), grid=0.1, vary=0.0):
    n_reps = rng.integers(reps[0], reps[1] + 1, size=n_contexts)
    ctx = np.repeat(np.arange(n_contexts), n_reps)
    q = rng.uniform(0, 1, n_contexts)[ctx] + vary * rng.standard_normal(len(ctx))
    belief = np.clip(np.round(q / grid) * grid if grid else q, 0, 1)
    first = (rng.random(len(ctx)) < 0.3 + 0.4 * belief).astype(float)
    return belief, first, ctx


@pytest.mark.parametrize("seed", range(4))
@pytest.mark.parametrize("grid,vary", [(0.1, 0.0), (0.05, 0.08), (None, 0.05)])
def test_comparisons_match_the_reference(seed, grid, vary):
    rng = np.random.default_rng(seed)
    belief, first, ctx = _study(rng, grid=grid, vary=vary)
    found = local_comparisons(belief, first, ctx, int(ctx.max()) + 1, min_contexts=5)
    ref = reference_comparisons(belief, first, ctx, 5)
    assert len(found) == len(ref) > 0
    got = sorted(zip(found.scale, found.lo_low, found.lo_high, found.hi_low, found.hi_high,
                     found.diff, found.se, strict=True))
    for a, b in zip(got, sorted(ref), strict=True):
        np.testing.assert_allclose(a, b, rtol=1e-10, atol=1e-12)


def test_correlation_estimate_extremes():
    groups = np.repeat(np.arange(50), 4)
    cells = np.zeros(200, dtype=np.int64)
    same = np.repeat(np.arange(50) % 2, 4).astype(float)  # every repetition alike
    assert within_context_correlation(same, groups, cells) == pytest.approx(1.0)
    rng = np.random.default_rng(0)
    independent = (rng.random(200) < 0.5).astype(float)
    assert within_context_correlation(independent, groups, cells) < 0.15
    # one row per context: no information, 0
    assert within_context_correlation(independent[:50], np.arange(50), cells[:50]) == 0.0


def test_bootstrap_columns_have_unit_variance_and_draws_are_centred():
    rng = np.random.default_rng(1)
    belief, first, ctx = _study(rng, n_contexts=80, grid=0.05)
    found = local_comparisons(belief, first, ctx, 80, min_contexts=10)
    column_ss = np.asarray(found.contrib.multiply(found.contrib).sum(axis=0)).ravel()
    np.testing.assert_allclose(column_ss[column_ss > 0], 1.0, rtol=1e-12)
    null = max_t_null([found], 80, 2000, np.random.default_rng(2))
    assert null.shape == (2000, 1)
    # windows of min_contexts contexts or more: plain multiplier sums, no bootstrap-t
    assert not found.bootstrap_t.any()
    np.testing.assert_array_equal(null, max_t_null([found], 80, 2000, np.random.default_rng(2),
                                                   restudentize=False))
    # the largest of many unit-variance statistics: positive, around 2-4
    assert 1.0 < float(np.median(null)) < 4.0


def _one_comparison(u):
    """A LocalComparisons holding one comparison whose unit contributions are ``u``."""
    from scipy import sparse

    one = np.zeros(1)
    n = len(u)
    contrib = sparse.csc_matrix((u, np.arange(n), [0, n]), shape=(n, 1))
    return coherence._decision._monotone_local.LocalComparisons(
        *(one,) * 12, contrib, np.array([float(n)]), np.array([True]))


def test_draws_are_restudentized_like_the_observed_statistic():
    """Equal contributions over n contexts: the draw S*/sqrt(V*) is Student's t with
    n - 1 degrees of freedom (the observed jackknife z's small-sample law), not the
    normal that S* alone would be."""
    from scipy import stats

    n = 8
    u = np.where(np.arange(n) % 2 == 0, 1.0, -1.0) / math.sqrt(n)
    draws = max_t_null([_one_comparison(u)], n, 20_000, np.random.default_rng(3))[:, 0]
    assert stats.kstest(draws, stats.t(df=n - 1).cdf).pvalue > 0.01
    assert stats.kstest(draws, stats.norm.cdf).pvalue < 1e-6
    plain = max_t_null([_one_comparison(u)], n, 20_000, np.random.default_rng(3),
                       restudentize=False)[:, 0]
    assert stats.kstest(plain, stats.norm.cdf).pvalue > 0.01


def test_restudentized_draws_match_a_literal_loop():
    rng = np.random.default_rng(4)
    belief, first, ctx = _study(rng, n_contexts=30, grid=0.1)
    found = local_comparisons(belief, first, ctx, 30)
    assert found.bootstrap_t.all() and len(found) > 1
    null = max_t_null([found], 30, 50, np.random.default_rng(5))[:, 0]
    weights = np.random.default_rng(5).standard_normal((50, 30))
    dense = found.contrib.toarray()
    for b in range(50):
        best = -math.inf
        for j in range(len(found)):
            rows = np.flatnonzero(found.contrib[:, j].toarray().ravel() != 0)
            n = int(found.n_units[j])
            assert len(rows) <= n
            wu = np.zeros(n)
            wu[:len(rows)] = weights[b, rows] * dense[rows, j]  # zeros: contexts at 0
            s = wu.sum()
            v = n / (n - 1) * float(np.sum((wu - s / n) ** 2))
            best = max(best, s / math.sqrt(v))
        assert null[b] == pytest.approx(best, rel=1e-9)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_relabelling_contexts_changes_nothing(seed):
    rng = np.random.default_rng(seed)
    belief, first, ctx = _study(rng, n_contexts=30, grid=0.1)
    perm = rng.permutation(30)
    a = local_comparisons(belief, first, ctx, 30, min_contexts=4)
    b = local_comparisons(belief, first, perm[ctx], 30, min_contexts=4)
    np.testing.assert_allclose(np.sort(a.z), np.sort(b.z), rtol=1e-12, atol=1e-12)


@settings(max_examples=25, deadline=None)
@given(seed=st.integers(0, 10_000))
def test_a_rising_share_never_gives_a_positive_fall_at_zero_noise(seed):
    rng = np.random.default_rng(seed)
    belief, _, ctx = _study(rng, n_contexts=30, grid=0.1)
    first = (belief > rng.uniform(0.2, 0.8)).astype(float)  # a threshold: monotone
    found = local_comparisons(belief, first, ctx, 30, min_contexts=4)
    assert np.all(found.diff <= 0)


# --------------------------------------------------------------------------- sequential p
def test_sequential_pvalue_is_exact_under_the_null():
    rng = np.random.default_rng(0)
    p = []
    for _ in range(3000):
        observed = rng.standard_normal()
        value, _ = sequential_pvalue(lambda b: rng.standard_normal(b), observed,
                                     max_draws=199, stop_after=5, batch=37)
        p.append(value)
    p = np.array(p)
    for alpha in (0.01, 0.05, 0.2, 0.5):
        assert np.mean(p <= alpha) <= alpha + 3 * math.sqrt(alpha * (1 - alpha) / len(p))
        assert np.mean(p <= alpha) >= alpha - 4 * math.sqrt(alpha * (1 - alpha) / len(p))


def test_sequential_pvalue_stops_early_and_resolves_small_pvalues():
    rng = np.random.default_rng(1)
    p, draws = sequential_pvalue(lambda b: rng.standard_normal(b), 0.0, max_draws=10_000,
                                 stop_after=20)
    assert len(draws) < 100 and p == pytest.approx(20 / len(draws))
    p, draws = sequential_pvalue(lambda b: rng.standard_normal(b), 10.0, max_draws=10_000)
    assert len(draws) == 10_000 and p == pytest.approx(1 / 10_001)
    # rows: the first column is the one tested, the others are kept
    p, draws = sequential_pvalue(lambda b: rng.standard_normal((b, 3)), 0.0, max_draws=500)
    assert draws.shape[1] == 3
    assert math.isnan(sequential_pvalue(lambda b: np.zeros(b), math.nan, max_draws=5)[0])


# --------------------------------------------------------------------------- public layer
def _reference_rows(study):
    d = study.data
    return d[d["prompt"] == d["prompt"].iloc[0]]


def test_local_is_the_default_and_finds_the_nonmonotone_agent():
    data = _reference_rows(coherence.simulate("nonmonotone", n_contexts=600, n_repetitions=5,
                                              rng=3))
    res = coherence.monotonicity_test(data, rng=0)
    assert res.method == "local"
    assert res.pvalue < 0.001
    assert res.n_draws == 9999  # a significant result keeps drawing
    worst = res.local_table.sort_values("z").iloc[-1]
    assert worst["difference"] > 0.1 and worst["pvalue_adjusted"] < 0.01
    assert list(res.local_table.columns) == list(coherence._decision._monotone.LOCAL_COLUMNS)


def test_rational_agent_stops_early():
    data = _reference_rows(coherence.simulate("rational", n_contexts=200, n_repetitions=5,
                                              rng=4))
    res = coherence.monotonicity_test(data, rng=0)
    assert res.pvalue > 0.05
    assert res.n_draws < 9999
    assert res.to_frame()["n_draws"].iloc[0] == res.n_draws


def test_decreasing_direction_reports_beliefs_on_the_data_scale():
    data = _reference_rows(coherence.simulate("nonmonotone", n_contexts=300, n_repetitions=4,
                                              rng=5))
    flipped = data.assign(belief=1.0 - data["belief"])
    up = coherence.monotonicity_test(data, rng=0)
    down = coherence.monotonicity_test(flipped, direction="decreasing", rng=0)
    assert down.pvalue == pytest.approx(up.pvalue)
    lt = down.local_table
    assert np.all(lt["belief_low_from"] >= lt["belief_low_to"] - 1e-12)
    np.testing.assert_allclose(np.sort(lt["z"]), np.sort(up.local_table["z"]))


def test_rows_outside_every_pair_are_counted_not_dropped_silently():
    data = _reference_rows(coherence.simulate("rational", n_contexts=60, n_repetitions=3,
                                              rng=6)).reset_index(drop=True)
    data["action"] = data["action"].astype(str)
    data.loc[:4, "action"] = "maybe"
    with pytest.warns(DegenerateDataWarning, match=r"5 of \d+ rows .*'maybe' \(5 rows\)"):
        coherence.monotonicity_test(data, rng=0, n_resamples=99)
    # 'Yes ' beside 'yes' is one label typed two ways: an error, not a label of its own
    data.loc[:4, "action"] = "Yes "
    with pytest.raises(ValueError, match="'Yes ' / 'yes'"):
        coherence.monotonicity_test(data, rng=0, n_resamples=99)


def test_too_few_resamples_warn():
    data = _reference_rows(coherence.simulate("rational", n_contexts=60, n_repetitions=3,
                                              rng=7))
    with pytest.warns(SmallSampleWarning, match="smallest p-value"):
        coherence.monotonicity_test(data, rng=0, n_resamples=9)
    with pytest.warns(SmallSampleWarning, match="smallest p-value"):
        coherence.monotonicity_test(data, rng=0, n_resamples=49, method="permutation")
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallSampleWarning)
        coherence.monotonicity_test(data, rng=0, n_resamples=99)


def test_min_contexts_is_validated():
    data = pd.DataFrame({"context": [0, 1, 2], "belief": [0.1, 0.5, 0.9],
                         "action": ["yes", "no", "yes"]})
    with pytest.raises(ValueError, match="min_contexts"):
        coherence.monotonicity_test(data, min_contexts=1)


def test_tiny_study_is_not_testable_with_a_reason():
    data = pd.DataFrame({"context": [0, 1, 2, 3], "belief": [0.1, 0.4, 0.6, 0.9],
                         "action": ["yes", "no", "yes", "no"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = coherence.monotonicity_test(data, pairs=[("yes", "no")], rng=0)
    row = res.table.iloc[0]
    assert not row["testable"] and "contexts" in row["reason"]
    assert math.isnan(res.pvalue)


@pytest.mark.parametrize("n_contexts", [3, 4, 5])
def test_nan_overall_pvalue_warns_why_no_pair_is_testable(n_contexts):
    """With 3-5 contexts no pair is testable and the overall p-value is NaN: a
    SmallSampleWarning says so, naming each pair's reason (only TiesWarnings were shown)."""
    data = coherence.simulate("rational", n_contexts=n_contexts, n_repetitions=3,
                              rng=0).data
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = coherence.monotonicity_test(data, rng=0)
    assert math.isnan(res.pvalue) and not res.table["testable"].any()
    notes = [str(w.message) for w in caught if w.category is SmallSampleWarning]
    assert len(notes) == 1 and "overall p-value is NaN" in notes[0]
    for pair, reason in zip(res.table["pair"], res.table["reason"], strict=True):
        assert f"{pair}: {reason}" in notes[0]
    assert caught[[w.category for w in caught].index(SmallSampleWarning)].filename == __file__


@pytest.mark.filterwarnings("ignore::coherence.TiesWarning")  # 4 rows, 4 of 5 bins
def test_permutation_method_warns_when_no_pair_is_testable():
    data = pd.DataFrame({"context": [0, 1, 2, 3], "belief": [0.1, 0.4, 0.6, 0.9],
                         "action": ["yes", "no", "yes", "no"]})
    with pytest.warns(SmallSampleWarning, match="yes/no: no two contexts in a belief window"):
        res = coherence.monotonicity_test(data, pairs=[("yes", "no")], method="permutation",
                                          n_resamples=99, rng=0)
    assert math.isnan(res.pvalue)


# --------------------------------------------------------------------------- fast subset
@pytest.mark.slow
@pytest.mark.filterwarnings("ignore::coherence.TiesWarning")  # heaped beliefs merge bins
def test_size_and_power_fast_subset_of_the_validation_matrix():
    """A fast subset of benchmarks/validate_monotonicity.py: global size on heaped and
    deterministic nulls, power on the package's nonmonotone agent at 200 x 5."""
    from benchmarks.monotone_designs import Design
    from benchmarks.monotone_designs import generate

    heap = {"heap": (0.7, 0.75, 0.8), "heap_mass": 0.7}
    nulls = [Design(shock_sd=1.0, **heap), Design(shock_sd=1.0, same_action=True),
             Design(grid=None)]
    for design in nulls:
        p = [coherence.monotonicity_test(generate(design, 90_000 + s), rng=s).pvalue
             for s in range(60)]
        # Binomial(60, 0.05) exceeds 8 with probability < 0.01
        assert np.sum(np.asarray(p) <= 0.05) <= 8, design
    power = [coherence.monotonicity_test(_reference_rows(coherence.simulate(
        "nonmonotone", n_contexts=200, n_repetitions=5, rng=95_000 + s)), rng=s).pvalue
        for s in range(30)]
    assert np.mean(np.asarray(power) <= 0.05) >= 0.6  # 0.85 measured over 400 studies
