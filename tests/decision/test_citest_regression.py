"""The regression-adjusted statistic of ci_test (``test_statistic='regression'``, the
default with continuous evidence): its basis, its value against a least-squares fit by
brute force, its permutation null, and its power on the validation designs."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence
from coherence._decision._citest_plugin import permutation_null
from coherence._decision._citest_regression import N_KNOTS
from coherence._decision._citest_regression import adjustment_basis
from coherence._decision._citest_regression import orthonormal_columns
from coherence._decision._citest_regression import regression_of
from coherence._decision._citest_regression import smaller_p
from coherence._decision._permutation import block_layout
from coherence._resampling import monte_carlo_pvalue


def regression_statistic(q: np.ndarray, actions: np.ndarray, outcomes: np.ndarray,
                         n_outcomes: int = 2) -> np.ndarray:
    """:math:`T` of each copy, one statistic built per call (the product builds it once
    per test and applies it to every batch of copies)."""
    return regression_of(q, np.atleast_2d(actions)[0], n_outcomes)(actions, outcomes)


def _design(cond: np.ndarray) -> np.ndarray:
    """The basis's columns written out: intercept, an indicator of each discrete stratum
    and of each level of a value with few levels, a cubic spline otherwise (built here
    from the truncated powers, a different basis of the same space)."""
    cols = [np.ones(len(cond))]
    cols += [(cond[:, 0] == v).astype(float) for v in np.unique(cond[:, 0])[1:]]
    for j in range(1, cond.shape[1]):
        x = cond[:, j]
        levels = np.unique(x)
        if len(levels) <= N_KNOTS + 3:
            cols += [(x == v).astype(float) for v in levels[1:]]
            continue
        knots = np.unique(np.quantile(x, np.linspace(0, 1, N_KNOTS)))
        cols += [x, x ** 2, x ** 3, *(np.clip(x - k, 0, None) ** 3 for k in knots[1:-1])]
    # the cubic polynomial's cross terms, on the raw values (standardising each value
    # changes the column space only by terms already in it)
    values = cond[:, 1:]
    d = values.shape[1]
    for i in range(d):
        for j in range(i + 1, d):
            a, b = values[:, i], values[:, j]
            cols += [a * b, a * a * b, a * b * b, a, b, a * a, b * b]
            for k in range(j + 1, d):
                cols.append(a * b * values[:, k])
    return np.column_stack(cols)


def _partial_r2(cond: np.ndarray, action: np.ndarray, outcome: np.ndarray) -> float:
    """(RSS without the actions - RSS with them) / RSS without: two least-squares fits."""
    x = _design(cond)
    levels = np.unique(action)
    a = np.column_stack([(action == v).astype(float) for v in levels[1:]])
    y = outcome.astype(float)

    def rss(m: np.ndarray) -> float:
        beta = np.linalg.lstsq(m, y, rcond=None)[0]
        return float(np.sum((y - m @ beta) ** 2))

    base = rss(x)
    return 0.0 if base < 1e-9 else (base - rss(np.column_stack([x, a]))) / base


def _study(seed: int, n: int = 120, strata: int = 2, grid: float | None = None):
    gen = np.random.default_rng(seed)
    belief = gen.uniform(size=n)
    if grid:
        belief = np.round(belief / grid) * grid
    cond = np.column_stack([gen.integers(0, strata, n).astype(float), belief,
                            gen.normal(size=n)])
    action = gen.integers(0, 3, n)
    outcome = (gen.uniform(size=n) < 0.3 + 0.4 * belief).astype(np.int64)
    return cond, action, outcome


@pytest.mark.parametrize(("seed", "grid"), [(0, None), (1, 0.25), (2, None), (3, 0.1)])
def test_statistic_is_the_partial_r2_of_the_actions(seed, grid):
    cond, action, outcome = _study(seed, grid=grid)
    q = adjustment_basis(cond)
    assert regression_statistic(q, action, outcome)[0] == pytest.approx(
        _partial_r2(cond, action, outcome), abs=1e-9)


def test_batches_of_copies_are_each_copy_alone():
    cond, action, outcome = _study(4)
    q = adjustment_basis(cond)
    gen = np.random.default_rng(0)
    ys = np.array([gen.permutation(outcome) for _ in range(5)])
    acts = np.array([gen.permutation(action) for _ in range(5)])
    np.testing.assert_allclose(regression_statistic(q, action, ys),
                               [regression_statistic(q, action, y)[0] for y in ys])
    np.testing.assert_allclose(regression_statistic(q, acts, outcome),
                               [regression_statistic(q, a, outcome)[0] for a in acts])
    np.testing.assert_allclose(regression_statistic(q, acts[1], ys[2])[0],
                               _partial_r2(cond, acts[1], ys[2]), atol=1e-9)


@given(st.integers(0, 2 ** 31), st.integers(8, 80), st.integers(1, 4),
       st.sampled_from([None, 0.5, 0.1]))
@settings(max_examples=60, deadline=None)
def test_basis_is_orthonormal_and_spans_the_adjustment(seed, n, strata, grid):
    cond, action, outcome = _study(seed, n=n, strata=strata, grid=grid)
    q = adjustment_basis(cond)
    np.testing.assert_allclose(q.T @ q, np.eye(q.shape[1]), atol=1e-8)
    x = _design(cond)
    np.testing.assert_allclose(q @ (q.T @ x), x, atol=1e-7 * max(1.0, np.abs(x).max()))
    t = regression_statistic(q, action, outcome)[0]
    assert 0.0 <= t <= 1.0 + 1e-12


@pytest.mark.parametrize("seed", [208, 547, 24])
def test_a_nearly_spanned_action_keeps_the_share_exact(seed):
    # 14 rows, 12 basis columns: one action's residual is nearly in the basis's span
    # (its Gram matrix had condition 1.5e10); inverting that matrix gave T = 1 + 4.8e-7,
    # noise above the p-value's tie tolerance, where least squares gives exactly 1
    cond, action, outcome = _study(seed, n=14, strata=1, grid=0.5)
    t = regression_statistic(adjustment_basis(cond), action, outcome)[0]
    assert t <= 1.0
    assert t == pytest.approx(_partial_r2(cond, action, outcome), abs=1e-10)


@given(st.integers(0, 2 ** 31), st.integers(3, 40), st.integers(1, 4),
       st.sampled_from([0.0, 1e-3, 1e-6, 1e-9]))
@example(seed=113974, n=3, m=3, near=1e-6)  # a squared singular value 0.95e-15 of the largest
@settings(max_examples=80, deadline=None)
def test_orthonormal_columns_against_the_svd(seed, n, m, near):
    # brute force: the left singular vectors of the directions kept by the same rank rule;
    # one column nearly (or, at 0, exactly) a combination of the others
    gen = np.random.default_rng(seed)
    a = gen.normal(size=(2, n, m))
    if m > 1:
        a[:, :, -1] = a[:, :, :-1] @ gen.normal(size=m - 1) + near * gen.normal(size=(2, n))
    u = orthonormal_columns(a)
    for b in range(2):
        left, sv, _ = np.linalg.svd(a[b], full_matrices=False)
        ratio = sv ** 2 / sv[0] ** 2
        kept = np.linalg.norm(u[b], axis=0) > 0.5
        # the rule's cut, 1e-15, is decided from the Gram matrix, whose eigenvalues are
        # exact to round-off of the largest: a direction within a factor of 10 of the cut
        # may fall on either side (seed 113974: 0.95e-15 by the SVD, 1.09e-15 by eigh)
        rank = int(np.sum(ratio > 1e-14))
        assert rank <= kept.sum() <= int(np.sum(ratio > 1e-16))
        rank = int(kept.sum())
        np.testing.assert_allclose(u[b].T @ u[b], np.diag(kept.astype(float)), atol=1e-12)
        # the same column space: each projects onto the other without loss
        ref = left[:, :rank]
        np.testing.assert_allclose(u[b] @ (u[b].T @ ref), ref, atol=1e-8)


def test_an_outcome_the_basis_explains_gives_zero():
    cond, action, _ = _study(5, strata=3)
    outcome = (cond[:, 0] == 1).astype(np.int64)  # a function of the discrete stratum
    assert regression_statistic(adjustment_basis(cond), action, outcome)[0] == 0.0


def test_null_is_the_statistic_on_outcomes_permuted_in_blocks():
    gen = np.random.default_rng(6)
    n_ctx, reps = 40, 3
    groups = np.repeat(np.arange(n_ctx), reps)
    cond = np.column_stack([np.zeros(n_ctx * reps), gen.uniform(size=n_ctx)[groups],
                            gen.normal(size=n_ctx)[groups]])
    action = gen.integers(0, 3, n_ctx * reps)
    y_unit = gen.integers(0, 2, n_ctx)
    start, units = block_layout(cond[::reps], np.ones(n_ctx, np.int64), 3)
    moves = ("outcomes", (y_unit, groups, start, units))
    q = adjustment_basis(cond)

    def statistic(a, y):
        return regression_statistic(q, a, y)

    null = permutation_null(statistic, action, y_unit[groups], moves, 25,
                            np.random.default_rng(1))
    # by hand: the same draws, one permutation at a time
    from coherence._decision._citest_plugin import _unit_blocks
    from coherence._decision._permutation import permutations_within

    blocks = _unit_blocks(start, units, n_ctx)
    perms = np.concatenate(list(permutations_within(blocks, np.random.default_rng(1), 25)))
    expected = [_partial_r2(cond, action, y_unit[p][groups]) for p in perms]
    np.testing.assert_allclose(null, expected, atol=1e-9)
    assert all(np.all(blocks[p] == blocks) for p in perms)  # moved within blocks only


def test_auto_takes_it_with_continuous_evidence_only():
    data = coherence.simulate("rational", n_contexts=80, rng=2).data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = coherence.ci_test(data, n_resamples=19, rng=0, ci_method=None)
        cont = coherence.ci_test(data.assign(x=np.random.default_rng(0).normal(size=len(data))),
                                 evidence=["x"], n_resamples=49, rng=0, ci_method=None)
    assert plain.test_statistic == "plugin"
    assert cont.test_statistic == "combined" and cont.n_strata >= 2
    assert cont.settings()["test_statistic"] == "combined"
    assert cont.pvalue == (1 + np.sum(cont.null_distribution
                                      >= cont.test_statistic_value - 1e-12)) / 50


def _smaller_p_by_loops(observed, copies):
    values = np.vstack([observed[None, :], copies])
    m, k = values.shape
    combined = []
    for i in range(m):
        ps = []
        for j in range(k):
            bound = values[i, j] - 1e-9 * max(1.0, abs(values[i, j]))
            ps.append(sum(values[r, j] >= bound for r in range(m)) / m)
        combined.append(-np.log(min(ps)))
    return combined[0], np.array(combined[1:])


@given(st.integers(0, 2 ** 31), st.integers(1, 40), st.integers(1, 3), st.booleans())
@settings(max_examples=80, deadline=None)
def test_smaller_p_against_loops(seed, n_copies, k, ties):
    gen = np.random.default_rng(seed)
    observed = gen.normal(size=k)
    copies = gen.normal(size=(n_copies, k))
    if ties:  # statistics on a lattice, and the data tied with some copies
        observed, copies = np.round(observed), np.round(copies)
    value, null = smaller_p(observed, copies)
    ref_value, ref_null = _smaller_p_by_loops(observed, copies)
    assert value == pytest.approx(ref_value)
    np.testing.assert_allclose(null, ref_null)
    if k == 1:  # one statistic: its own Monte Carlo p-value
        assert monte_carlo_pvalue(null, value) == pytest.approx(
            monte_carlo_pvalue(copies[:, 0], observed[0]))


def _leaky(name: str, seeds: range):
    from benchmarks.validate_citest_continuous import POWER
    from benchmarks.validate_citest_continuous import generate

    return [generate(POWER[name], s) for s in seeds]


def test_combined_is_the_smaller_p_of_the_two_statistics_on_the_same_permutations():
    data = _leaky("leak 0.5, evidence per context", range(5, 6))[0]
    runs = {}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for name in ("plugin", "regression", "combined"):
            runs[name] = coherence.ci_test(data, evidence=["evidence"], n_resamples=39, rng=3,
                                           ci_method=None, test_statistic=name)
    value, null = smaller_p(np.array([runs["regression"].test_statistic_value,
                                      runs["plugin"].test_statistic_value]),
                            np.column_stack([runs["regression"].null_distribution,
                                             runs["plugin"].null_distribution]))
    combined = runs["combined"]
    assert combined.test_statistic_value == pytest.approx(value)
    np.testing.assert_allclose(combined.null_distribution, null)
    each = (runs["plugin"].pvalue, runs["regression"].pvalue)
    assert min(each) <= combined.pvalue <= sum(each) + 1e-12  # min-p's Bonferroni bounds
    assert combined.n_strata == runs["plugin"].n_strata


def _hits_of(studies, names):
    hits = dict.fromkeys(names, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s, data in enumerate(studies):
            for name in names:
                res = coherence.ci_test(data, evidence=["evidence"], n_resamples=99, rng=s,
                                        ci_method=None, test_statistic=name)
                hits[name] += res.pvalue <= 0.05
    return hits


def test_combined_beats_the_plugin_where_the_competitor_did():
    # heaped beliefs, the evidence per context, a leak of 0.5 at 200 x 5: the plug-in
    # statistic 0.690 and the bin competitor 0.785 (validation_ci.md)
    hits = _hits_of(_leaky("leak 0.5, evidence per context", range(81_000, 81_012)),
                    ("auto", "plugin"))
    assert hits["auto"] >= 10 and hits["auto"] >= hits["plugin"], hits


def test_combined_keeps_the_plugins_power_on_a_leak_whose_sign_flips():
    # the regression statistic alone pools a leak of both signs to little (0.62 in a
    # pilot of 200 studies, the plug-in statistic 0.995)
    hits = _hits_of(_leaky("leak 1.0 whose sign flips with the belief, evidence per context",
                           range(82_000, 82_012)), ("auto", "regression"))
    assert hits["auto"] >= 10 and hits["auto"] >= hits["regression"], hits


def test_three_class_outcome_statistic_does_not_depend_on_the_labels_order():
    """With three outcome classes the statistic pools every class's indicator, so the
    labels' spelling (hence the order of their codes) changes nothing. Coded as numbers
    0, 1, 2, a leak into the middle class was a slope of 0: p = 0.25 with the labels
    'a', 'b', 'c' (the leak into 'b') against 0.005 with 'b', 'a', 'c'."""
    gen = np.random.default_rng(7)
    n_ctx, reps = 30, 4
    ctx = np.repeat(np.arange(n_ctx), reps)
    belief = (gen.integers(1, 10, n_ctx) * 0.1)[ctx]
    y = gen.integers(0, 3, n_ctx)[ctx]
    action = np.where(gen.random(len(ctx)) < 0.8, (y == 1).astype(int),
                      gen.integers(0, 2, len(ctx)))
    results = []
    for names in (np.array(["a", "b", "c"]), np.array(["b", "a", "c"])):
        data = {"context": ctx, "belief": belief, "outcome": names[y], "action": action}
        res = coherence.ci_test(data, n_resamples=199, ci_method=None, rng=0)
        assert res.test_statistic == "regression"
        results.append(res)
    assert results[0].test_statistic_value == pytest.approx(results[1].test_statistic_value)
    assert results[0].pvalue == results[1].pvalue < 0.05
    q = adjustment_basis(np.column_stack([np.zeros(len(ctx)), belief]))
    relabelled = np.array([1, 0, 2])[y]
    assert regression_statistic(q, action, y, 3)[0] == pytest.approx(
        regression_statistic(q, action, relabelled, 3)[0])
