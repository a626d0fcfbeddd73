"""Tests of the leakage refits' Newton solver (coherence._decision._logistic) against
scikit-learn's LogisticRegression, and of its use in the leakage permutation null."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from sklearn.linear_model import LogisticRegression

import coherence
from coherence._decision import _leakage
from coherence._decision import _leakage_null
from coherence._decision import _logistic
from coherence._decision._logistic import fit_logistic
from coherence._decision._logistic import link
from coherence._decision._logistic import predict_logistic


def _problem(seed: int, n: int, d: int, n_classes: int, scale: float):
    gen = np.random.default_rng(seed)
    x = gen.standard_normal((n, d)) * gen.uniform(0.1, 3.0, size=d)
    beta = gen.standard_normal((n_classes, d)) * scale
    z = x @ beta.T
    prob = np.exp(z - z.max(axis=1, keepdims=True))
    prob /= prob.sum(axis=1, keepdims=True)
    a = (prob.cumsum(axis=1) < gen.random(n)[:, None]).sum(axis=1)
    a[:n_classes] = np.arange(n_classes)  # every class present
    return x, a


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(20, 300), d=st.integers(1, 12),
       n_classes=st.integers(2, 4), scale=st.floats(0.0, 3.0),
       c=st.sampled_from([0.01, 1.0, 100.0]))
@settings(max_examples=30)
def test_same_optimum_as_scikit_learn(seed, n, d, n_classes, scale, c):
    """The probabilities of scikit-learn's fit (run to a tight tolerance) at the training
    and at fresh points, up to 1e-7."""
    x, a = _problem(seed, n, d, n_classes, scale)
    ref = LogisticRegression(C=c, solver="newton-cholesky", max_iter=500, tol=1e-13).fit(x, a)
    fit = fit_logistic(x, a, n_classes, c)
    assert fit.converged
    x_new = np.random.default_rng(seed + 1).standard_normal((50, d)) * 2.0
    for points in (x, x_new):
        np.testing.assert_allclose(predict_logistic(fit, points, n_classes),
                                   ref.predict_proba(points), rtol=0, atol=1e-7)


@given(seed=st.integers(0, 2**32 - 1), n_classes=st.integers(2, 4))
@settings(max_examples=10)
def test_warm_start_reaches_the_same_optimum(seed, n_classes):
    x, a = _problem(seed, 200, 5, n_classes, 1.0)
    _, a_other = _problem(seed + 7, 200, 5, n_classes, 1.0)
    start = fit_logistic(x, a_other, n_classes, 1.0)
    cold, warm = fit_logistic(x, a, n_classes, 1.0), fit_logistic(x, a, n_classes, 1.0, start)
    np.testing.assert_allclose(warm.theta, cold.theta, rtol=0, atol=1e-9)


@pytest.mark.parametrize("n_classes", [2, 3, 5])
def test_link_orthonormal_contrasts(n_classes):
    lk = link(n_classes)
    if n_classes == 2:
        np.testing.assert_array_equal(lk, [[0.0], [1.0]])
    else:
        np.testing.assert_allclose(lk.T @ lk, np.eye(n_classes - 1), atol=1e-15)
        np.testing.assert_allclose(lk.sum(axis=0), 0.0, atol=1e-15)


# ------------------------------------------------------------------ use in leakage_test
@pytest.fixture(scope="module")
def study():
    data = coherence.simulate(coherence.Agent.leaky(0.3), n_contexts=60, rng=3).data
    gen = np.random.default_rng(3)
    return data.assign(x1=gen.standard_normal(len(data)))


def _run(data, **kw):
    return coherence.leakage_test(data, engine="logistic", n_permutations=15,
                                  n_resamples=50, rng=5, **kw)


@pytest.mark.parametrize("evidence", [(), ("x1",)])
def test_fast_null_equals_scikit_learn_null(study, monkeypatch, evidence):
    """Statistic, interval and p-value identical to the scikit-learn refits; the null
    distribution within scikit-learn's solver tolerance (well inside REFIT_MARGIN)."""
    fast = _run(study, evidence=evidence)
    monkeypatch.setattr(_leakage, "FAST_REFITS", False)  # every resample refitted by sklearn
    slow = _run(study, evidence=evidence)
    assert fast.statistic == slow.statistic
    assert fast.confidence_interval == slow.confidence_interval
    assert fast.pvalue == slow.pvalue
    gap = np.abs(fast.null_distribution - slow.null_distribution)
    assert gap.max() < _leakage_null.REFIT_MARGIN / 5
    assert np.any(gap > 0)  # the fast path did run


def test_fast_null_where_the_folds_designs_differ(study, monkeypatch):
    """A belief constant in a training fold gives that fold a narrower design (no
    splines), so the merged kernel does not apply and each permutation is refitted fold
    by fold (warm-started Newton): the same statistic and p-value as scikit-learn's
    refits, the null within the solver's tolerance."""
    first = study["context"] == study["context"].iloc[0]
    data = study.assign(belief=np.where(first, study["belief"], 0.5))
    calls = []
    refit = _leakage_null._refitted
    monkeypatch.setattr(_leakage_null, "_refitted",
                        lambda *a, **k: calls.append(1) or refit(*a, **k))
    fast = _run(data)
    assert len(calls) == 15  # every permutation took the fold-by-fold path
    monkeypatch.setattr(_leakage, "FAST_REFITS", False)
    slow = _run(data)
    assert (fast.statistic, fast.pvalue) == (slow.statistic, slow.pvalue)
    gap = np.abs(fast.null_distribution - slow.null_distribution)
    assert gap.max() < _leakage_null.REFIT_MARGIN / 5
    assert np.any(gap > 0)


def test_margin_infinite_is_the_reference(study, monkeypatch):
    """Every permutation inside the margin: without the replay, scikit-learn's null
    exactly; with it, scikit-learn's null to rounding (the replayed solver's iterates
    are scikit-learn's) and the same p-value."""
    monkeypatch.setattr(_leakage, "FAST_REFITS", False)
    slow = _run(study)
    monkeypatch.setattr(_leakage, "FAST_REFITS", True)
    monkeypatch.setattr(_leakage_null, "REFIT_MARGIN", np.inf)
    replayed = _run(study)
    np.testing.assert_allclose(replayed.null_distribution, slow.null_distribution, rtol=0,
                               atol=_leakage_null.REPLAY_CHECK)
    assert np.any(replayed.null_distribution != slow.null_distribution)  # replayed, not refit
    assert replayed.pvalue == slow.pvalue
    monkeypatch.setattr(_leakage_null, "REPLAY_SKLEARN", False)
    np.testing.assert_array_equal(_run(study).null_distribution, slow.null_distribution)


def test_a_replay_that_disagrees_with_scikit_learn_is_dropped(study, monkeypatch):
    """The replay is also checked where scikit-learn refits a near tie: if one replayed
    statistic disagrees with scikit-learn's by more than REPLAY_CHECK, scikit-learn
    refits every permutation the replay gave (the replay is not this scikit-learn's).
    Here the refits are a stand-in that disagrees (S + 1), so every checked permutation
    must come out as the stand-in, none as a replayed value."""
    monkeypatch.setattr(_leakage_null, "REFIT_MARGIN", np.inf)  # every permutation checked
    base = _run(study)
    gaps = np.abs(base.null_distribution - base.statistic) / max(1.0, abs(base.statistic))
    # about half the permutations are near ties (refitted), the rest trusted replays
    monkeypatch.setattr(_leakage_null, "REPLAY_MARGIN", float(np.median(gaps)))
    original = _leakage.fast_logistic_null
    refits = []

    def disagreeing(*args):
        *head, statistic, _sklearn, stratum = args

        def stand_in(b):
            refits.append(b)
            return statistic + 1.0

        return original(*head, statistic, stand_in, stratum)

    monkeypatch.setattr(_leakage, "fast_logistic_null", disagreeing)
    null = _run(study).null_distribution
    moved = null != base.statistic  # a permutation that moved no outcome keeps S
    near = gaps <= np.median(gaps)
    assert 0 < np.sum(near & moved) < moved.sum()  # both kinds are there
    assert sorted(refits) == list(np.flatnonzero(moved))  # each refitted once
    np.testing.assert_array_equal(null[moved], base.statistic + 1.0)


def test_replay_of_another_solver_is_not_used(study, monkeypatch):
    """The replay is checked on the observed outcome first: a replay that does not
    match this scikit-learn (here: a different tolerance) is not used at all."""
    monkeypatch.setattr(_leakage, "FAST_REFITS", False)
    slow = _run(study)
    monkeypatch.setattr(_leakage, "FAST_REFITS", True)
    monkeypatch.setattr(_leakage_null, "REFIT_MARGIN", np.inf)
    monkeypatch.setattr(_leakage_null, "SKLEARN_TOL", 1e-2)
    np.testing.assert_array_equal(_run(study).null_distribution, slow.null_distribution)


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(20, 300), d=st.integers(1, 8),
       n_classes=st.integers(2, 4), scale=st.floats(0.0, 3.0),
       c=st.sampled_from([0.01, 1.0, 100.0]), repeat=st.integers(1, 3))
@settings(max_examples=40, deadline=None)
def test_replay_is_scikit_learn_at_its_default_tolerance(seed, n, d, n_classes, scale, c,
                                                          repeat):
    """sklearn_newton on merged rows (each row ``repeat`` times, as counts) gives
    scikit-learn's fit at its default ``tol`` (not the optimum) to rounding, or
    declines; brute-force reference: LogisticRegression on the unmerged rows."""
    from coherence._decision._kernels_logistic import sklearn_newton

    x, a = _problem(seed, n, d, n_classes, scale)
    ref = LogisticRegression(C=c, solver="newton-cholesky", max_iter=200)
    ref.fit(np.repeat(x, repeat, axis=0), np.repeat(a, repeat))
    xt = np.column_stack([x, np.ones(n)])
    cnt = np.eye(n_classes)[a] * repeat
    theta, n_iter = sklearn_newton(xt, cnt, link(n_classes), 1.0 / c, 1e-4, 200)
    if n_iter == 0:  # a decision too close to call: declined, scikit-learn refits
        return
    assert n_iter == ref.n_iter_[0]
    z = xt @ theta.T @ link(n_classes).T
    proba = np.exp(z - z.max(axis=1, keepdims=True))
    proba /= proba.sum(axis=1, keepdims=True)
    np.testing.assert_allclose(proba, ref.predict_proba(x), rtol=0, atol=1e-11)


def test_replay_declines_what_it_does_not_replay():
    from coherence._decision._kernels_logistic import sklearn_newton

    x, a = _problem(0, 100, 3, 3, 1.0)
    xt = np.column_stack([x, np.ones(len(x))])
    cnt = np.eye(3)[a]
    assert sklearn_newton(xt, cnt, link(3), 1.0, 1e-4, 200)[1] > 1
    assert sklearn_newton(xt, cnt, link(3), 1.0, 1e-4, 1)[1] == 0  # max_iter reached


@given(seed=st.integers(0, 2**32 - 1), n_classes=st.integers(2, 4), repeat=st.integers(1, 4))
@settings(max_examples=20, deadline=None)
def test_counts_are_repeated_rows(seed, n_classes, repeat):
    """newton_counts on one row with count r: the fit of the row repeated r times."""
    from coherence._decision._kernels_logistic import newton_counts
    from coherence._decision._kernels_logistic import newton_logistic

    x, a = _problem(seed, 80, 4, n_classes, 1.0)
    xt = np.column_stack([x, np.ones(len(x))])
    lk = link(n_classes)
    start = np.zeros((lk.shape[1], xt.shape[1]))
    merged, _ = newton_counts(xt, np.eye(n_classes)[a] * repeat, lk, 1.0, start, 1e-10, 100)
    rows, _ = newton_logistic(np.repeat(xt, repeat, axis=0), np.repeat(a, repeat), lk, 1.0,
                              start, 1e-10, 100)
    np.testing.assert_allclose(merged, rows, rtol=0, atol=1e-9)


def _binary_actions(data):
    return data.assign(action=data["action"].astype(str).replace({"defer": "no"}))


def _outcome_within_contexts(data):
    gen = np.random.default_rng(8)
    flip = gen.random(len(data)) < 0.2
    return data.assign(outcome=np.where(flip, 1 - data["outcome"], data["outcome"]))


# the outcome varying within contexts: rows permuted, as a warning says
@pytest.mark.filterwarnings("ignore:leakage_test. the outcome varies:coherence.SmallSampleWarning")
@pytest.mark.parametrize(("variant", "kw", "permute"), [
    (_binary_actions, {}, "outcomes"),
    (lambda d: d.assign(colour=np.arange(len(d)) // 3 % 3), {"evidence": ("colour",)},
     "outcomes"),
    (_outcome_within_contexts, {}, "rows"),
])
def test_fast_null_same_pvalue_other_designs(study, monkeypatch, variant, kw, permute):
    """Two actions (binomial model), categorical evidence, outcomes varying within
    contexts (rows permuted): the same p-value as the scikit-learn refits."""
    data = variant(study)
    fast = _run(data, **kw)
    monkeypatch.setattr(_leakage, "FAST_REFITS", False)
    slow = _run(data, **kw)
    assert fast.pvalue == slow.pvalue
    assert fast.permute == slow.permute == permute
    np.testing.assert_allclose(fast.null_distribution, slow.null_distribution, rtol=0,
                               atol=_leakage_null.REFIT_MARGIN / 5)


def test_unconverged_refits_fall_back_to_scikit_learn(study, monkeypatch):
    monkeypatch.setattr(_leakage, "FAST_REFITS", False)
    slow = _run(study)
    monkeypatch.setattr(_leakage, "FAST_REFITS", True)
    monkeypatch.setattr(_logistic, "MAX_ITER", 1)
    fallback = _run(study)
    np.testing.assert_array_equal(fallback.null_distribution, slow.null_distribution)


def test_same_null_with_one_numba_thread(study):
    """Permutations run in parallel; each writes its own slot, so the thread count
    does not change a value."""
    import numba

    parallel = _run(study)
    before = numba.get_num_threads()
    numba.set_num_threads(1)
    try:
        serial = _run(study)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(parallel.null_distribution, serial.null_distribution)


@pytest.mark.slow  # a statistical matrix (or a long equivalence check): make test-slow
@given(seed=st.integers(0, 2**16), leak=st.sampled_from([0.0, 0.1, 0.4]),
       actions=st.sampled_from([2, 3]), evidence=st.sampled_from(["none", "numeric", "codes"]),
       c=st.sampled_from([0.1, 1.0, 100.0]))
@settings(max_examples=10, deadline=None)
def test_fast_pvalue_is_scikit_learn_pvalue_on_random_designs(seed, leak, actions, evidence,
                                                              c):
    """Random studies (leak, 2 or 3 actions, no / numeric / categorical evidence, weak to
    strong penalty): the fast path's p-value is the all-scikit-learn path's."""
    data = coherence.simulate(coherence.Agent.leaky(leak), n_contexts=40, rng=seed).data
    if actions == 2:
        data = _binary_actions(data)
    gen = np.random.default_rng(seed)
    kw: dict = {"engine_options": {"C": c}}
    if evidence == "numeric":
        data = data.assign(x1=gen.standard_normal(len(data)))
        kw["evidence"] = ("x1",)
    elif evidence == "codes":
        data = data.assign(colour=gen.integers(0, 3, 40)[data["context"].to_numpy()])
        kw["evidence"] = ("colour",)
    args = {"engine": "logistic", "n_permutations": 19, "n_resamples": 10, "rng": seed, **kw}
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", coherence.CoherenceWarning)
        fast = coherence.leakage_test(data, **args)
        _leakage.FAST_REFITS = False
        try:
            slow = coherence.leakage_test(data, **args)
        finally:
            _leakage.FAST_REFITS = True
    assert fast.pvalue == slow.pvalue
    assert fast.statistic == slow.statistic


def test_unmoved_permutations_are_the_observed_statistic(study, monkeypatch):
    """Permutations that move no outcome (here: every context its own block) get S in the
    fast path, exactly as scikit-learn's refits of the observed data give it."""
    # one level per context; 24 contexts keep the one-hot design (and its refits) small
    part = study[study["context"] < 24]
    data = part.assign(colour=part["context"].astype(str))
    kw = {"evidence": ("colour",), "engine_options": {"interactions": False}}
    with pytest.warns(coherence.DegenerateDataWarning, match="no valid permutation"):
        fast = _run(data, **kw)
    monkeypatch.setattr(_leakage, "FAST_REFITS", False)
    with pytest.warns(coherence.DegenerateDataWarning, match="no valid permutation"):
        slow = _run(data, **kw)
    np.testing.assert_array_equal(slow.null_distribution, slow.statistic)
    np.testing.assert_array_equal(fast.null_distribution, slow.null_distribution)


@given(seed=st.integers(0, 2**32 - 1), n=st.integers(20, 300), d=st.integers(1, 10),
       n_classes=st.integers(2, 4), scale=st.floats(0.0, 3.0),
       c=st.sampled_from([0.01, 1.0, 100.0]), warm=st.booleans())
@settings(max_examples=30, deadline=None)
def test_chord_solver_reaches_the_optimum(seed, n, d, n_classes, scale, c, warm):
    """newton_counts_chord (the Hessian kept while the steps shrink fourfold) reaches
    newton_counts's optimum, cold or warm-started from another problem's fit."""
    from coherence._decision._kernels_logistic import newton_counts
    from coherence._decision._kernels_logistic import newton_counts_chord

    x, a = _problem(seed, n, d, n_classes, scale)
    xt = np.column_stack([x, np.ones(n)])
    lk, cnt = link(n_classes), np.eye(n_classes)[a]
    start = np.zeros((lk.shape[1], d + 1))
    if warm:
        _, a_other = _problem(seed + 7, n, d, n_classes, scale)
        start, _ = newton_counts(xt, np.eye(n_classes)[a_other], lk, 1.0 / c, start, 1e-10,
                                 100)
    exact, it = newton_counts(xt, cnt, lk, 1.0 / c, start, 1e-10, 100)
    chord, it_chord = newton_counts_chord(xt, cnt, lk, 1.0 / c, start, 1e-9, 200)
    assert it > 0 and it_chord > 0
    np.testing.assert_allclose(chord, exact, rtol=0, atol=1e-8)
    # at the leakage null's own tolerance: near the optimum, and its objective with it
    loose, it_loose = newton_counts_chord(xt, cnt, lk, 1.0 / c, start,
                                          _logistic.NULL_STEP_TOL, 200)
    assert 0 < it_loose <= it_chord
    np.testing.assert_allclose(loose, exact, rtol=0, atol=1e-3)


# ------------------------------------------------------------------ sparse rows, envelope
def _block_problem(seed: int, n: int, n_levels: int, n_classes: int):
    """A design of the many-level kind: a few shared columns, then one block of columns
    per level of a category (non-zero on that level's rows only), like one-hot evidence
    and its products with the belief splines."""
    gen = np.random.default_rng(seed)
    level = gen.integers(0, n_levels, n)
    shared = gen.standard_normal((n, 3))
    blocks = np.zeros((n, 2 * n_levels))
    blocks[np.arange(n), 2 * level] = 1.0
    blocks[np.arange(n), 2 * level + 1] = shared[:, 0]
    x = np.column_stack([shared, blocks])
    x[gen.random(x.shape) < 0.1] = 0.0  # and some zeros anywhere
    _, a = _problem(seed, n, 1, n_classes, 1.0)
    return x, a, level


def _sparse_structure(xt):
    nonzero = xt != 0.0
    nnz = nonzero.sum(axis=1).astype(np.int64)
    nzi = np.zeros((len(xt), max(1, int(nnz.max()))), dtype=np.int64)
    for i in range(len(xt)):
        cols = np.flatnonzero(nonzero[i])
        nzi[i, :len(cols)] = cols
    return nzi, nnz


@given(seed=st.integers(0, 2**32 - 1), n_levels=st.integers(1, 8),
       n_classes=st.integers(2, 4), c=st.sampled_from([0.01, 1.0, 100.0]),
       shuffled=st.booleans())
@settings(max_examples=25, deadline=None)
def test_sparse_rows_and_any_elimination_order_give_the_dense_fit(seed, n_levels, n_classes,
                                                                  c, shuffled):
    """The kernels read on the rows' non-zero columns, with the Hessian factored in the
    leakage elimination order (or any order), reach the dense solver's optimum; the
    replay of scikit-learn takes the same iterations."""
    from coherence._decision._kernels_logistic import newton_counts
    from coherence._decision._kernels_logistic import newton_counts_chord_sparse
    from coherence._decision._kernels_logistic import newton_counts_sparse
    from coherence._decision._kernels_logistic import sklearn_newton
    from coherence._decision._kernels_logistic import sklearn_newton_sparse

    x, a, level = _block_problem(seed, 150, n_levels, n_classes)
    xt = np.column_stack([x, np.ones(len(x))])
    lk, cnt = link(n_classes), np.eye(n_classes)[a]
    g = lk.shape[1]
    size = g * xt.shape[1]
    if shuffled:
        pos = np.random.default_rng(seed).permutation(size).astype(np.int64)
    else:  # x without its last two columns plays the base design (y, y p, 1 appended)
        pos = _leakage_null.elimination_order(x[:, :-2], level, g)
    assert np.array_equal(np.sort(pos), np.arange(size))
    nzi, nnz = _sparse_structure(xt)
    start = np.zeros((g, xt.shape[1]))
    dense, it = newton_counts(xt, cnt, lk, 1.0 / c, start, 1e-10, 100)
    sparse, it_sparse = newton_counts_sparse(xt, nzi, nnz, cnt, lk, 1.0 / c, start, 1e-10, 100,
                                             pos)
    chord, it_chord = newton_counts_chord_sparse(xt, nzi, nnz, cnt, lk, 1.0 / c, start,
                                                 1e-9, 200, pos)
    assert it > 0 and it_sparse > 0 and it_chord > 0
    np.testing.assert_allclose(sparse, dense, rtol=0, atol=1e-8)
    np.testing.assert_allclose(chord, dense, rtol=0, atol=1e-8)
    replay, it_replay = sklearn_newton(xt, cnt, lk, 1.0 / c, 1e-4, 100)
    replay_sparse, it_replay_sparse = sklearn_newton_sparse(xt, nzi, nnz, cnt, lk, 1.0 / c,
                                                            1e-4, 100, pos)
    assert it_replay_sparse == it_replay
    if it_replay > 0:
        np.testing.assert_allclose(replay_sparse, replay, rtol=0, atol=1e-9)


def test_elimination_order_puts_level_blocks_first():
    """One-hot columns of a level (non-zero on its rows only) come before the shared
    columns, grouped by level; the outcome's columns and the intercept last."""
    level = np.array([0, 0, 1, 1, 2, 2])
    design = np.column_stack([np.linspace(0.1, 0.6, 6),  # shared
                              level == 2, level == 1,  # one-hot, levels 2 and 1
                              (level == 1) * np.arange(6)]).astype(float)
    pos = _leakage_null.elimination_order(design, level, 1)
    # columns in elimination order: level 1 (columns 2, 3), level 2 (column 1), then
    # the shared column 0, then y, y p and the intercept (columns 4, 5, 6)
    np.testing.assert_array_equal(np.argsort(pos), [2, 3, 1, 0, 4, 5, 6])
    pos2 = _leakage_null.elimination_order(design, level, 2)
    np.testing.assert_array_equal(np.argsort(pos2)[:4], [2, 9, 3, 10])


def test_many_level_evidence_same_pvalue_as_scikit_learn(monkeypatch):
    """A 12-level categorical evidence column (a sparse, block design): the fast path's
    statistic, p-value and null are scikit-learn's refits'."""
    data = coherence.simulate(coherence.Agent.leaky(0.2), n_contexts=80, rng=5).data
    gen = np.random.default_rng(5)
    data = data.assign(topic=gen.integers(0, 12, 80)[data["context"].to_numpy()])
    args = {"evidence": ("topic",), "engine": "logistic", "n_permutations": 19,
            "n_resamples": 10, "rng": 2}
    fast = coherence.leakage_test(data, **args)
    monkeypatch.setattr(_leakage, "FAST_REFITS", False)
    slow = coherence.leakage_test(data, **args)
    assert fast.statistic == slow.statistic and fast.pvalue == slow.pvalue
    np.testing.assert_allclose(fast.null_distribution, slow.null_distribution, rtol=0,
                               atol=_leakage_null.REFIT_MARGIN / 5)
