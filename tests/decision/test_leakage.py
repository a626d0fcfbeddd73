"""Tests of the leakage test (coherence._decision._leakage); the fast logistic engine throughout."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence
from coherence import DegenerateDataWarning
from coherence import LeakageResult
from coherence import SmallSampleWarning
from coherence import leakage_test
from coherence._decision._leakage_engines import Evidence as _Evidence
from coherence._decision._leakage_engines import permutation_blocks
from coherence._decision._permutation import permutations_within

FAST = {"engine": "logistic", "n_resamples": 100, "n_permutations": 19}


@pytest.fixture(scope="module")
def rational() -> pd.DataFrame:
    return coherence.simulate("rational", n_contexts=100, rng=11).data


@pytest.fixture(scope="module")
def leaky() -> pd.DataFrame:
    return coherence.simulate(coherence.Agent.leaky(0.6), n_contexts=100, rng=12).data


# --------------------------------------------------------------------------- validation
@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    ({"belief": 1}, TypeError, "'belief' parameter of leakage_test must be a column name"),
    ({"outcome": "y"}, ValueError, "column 'y' \\(the 'outcome' column\\) not found"),
    ({"evidence": ["zz"]}, ValueError, "column 'zz' \\(the 'evidence\\[0\\]' column\\)"),
    ({"evidence": ["belief"]}, ValueError, "'evidence' parameter .* distinct columns other"),
    ({"evidence": [1]}, TypeError, "'evidence' parameter .* sequence of column names"),
    ({"engine": "xgboost"}, ValueError, "'engine' parameter .* one of 'catboost', 'logistic'"),
    ({"method": "bootstrap"}, ValueError, "'method' parameter .* one of 'permutation'"),
    ({"n_splits": 1}, ValueError, "'n_splits' parameter of leakage_test must be an int >= 2"),
    ({"n_splits": 101}, ValueError, "'n_splits' parameter .* number of contexts .* \\(100\\)"),
    ({"n_resamples": 0}, ValueError, "'n_resamples' parameter"),
    ({"n_permutations": 0}, ValueError, "'n_permutations' parameter"),
    ({"confidence_level": 1.0}, ValueError, "'confidence_level' parameter"),
    ({"engine_options": {"depth": 3}}, ValueError, "'engine_options' parameter .* keys among"),
    ({"engine_options": {"C": -1.0}}, ValueError, "'engine_options\\['C'\\]' parameter"),
    ({"engine_options": 3}, TypeError, "'engine_options' parameter .* a mapping"),
    ({"engine_options": {"interactions": 1}}, TypeError,
     "'engine_options\\['interactions'\\]' parameter .* a bool"),
    ({"k_perm": 0}, ValueError, "'k_perm' parameter of leakage_test must be an int >= 1"),
    ({"categorical": "all"}, ValueError, "'categorical' parameter .* 'auto' or a sequence"),
    ({"categorical": [1]}, TypeError, "'categorical' parameter .* 'auto' or a sequence"),
    ({"categorical": ["zz"]}, ValueError, "'categorical' parameter .* among the evidence "
                                          "columns"),
    ({"rng": "seed"}, TypeError, "'rng' parameter of leakage_test"),
    ({"pvalue_engine": "xgboost"}, ValueError,
     "'pvalue_engine' parameter of leakage_test must be None .* or one of 'catboost', "
     "'logistic'; got 'xgboost'"),
    ({"pvalue_engine": 1}, ValueError, "'pvalue_engine' parameter .* got 1"),
])
def test_validation_messages(rational, kwargs, exc, match):
    options = {**FAST, **kwargs}
    with pytest.raises(exc, match=match):
        leakage_test(rational, **options)


def test_catboost_options_validated(rational):
    with pytest.raises(ValueError, match="'engine_options\\['depth'\\]' parameter"):
        leakage_test(rational, engine="catboost", engine_options={"depth": 0})


def test_bad_columns_name_rows(rational):
    bad = rational.copy()
    bad.loc[5, "outcome"] = 2
    with pytest.raises(ValueError, match=r"Column 'outcome' .* binary .* row 5 = 2"):
        leakage_test(bad, **FAST)
    bad = rational.assign(ev=rational["belief"].astype(object))
    bad.loc[7, "ev"] = "high"
    with pytest.raises(ValueError,
                       match=r"Column 'ev' .* numeric; 1 offending row .*row 7 = 'high'"):
        leakage_test(bad, evidence=["ev"], categorical=[], **FAST)


def test_single_action_label_and_constant_outcome(rational):
    one = rational.assign(action="yes")
    with pytest.raises(ValueError, match="at least two action labels"):
        leakage_test(one, **FAST)
    # a numeric label is shown as the number, not numpy's repr ('np.int64(0)')
    with pytest.raises(ValueError, match=r"two action labels to predict; got 1 \(0\)\.$"):
        leakage_test(rational.assign(action=0), **FAST)
    with pytest.raises(ValueError, match="column 'outcome' is constant"):
        leakage_test(rational.assign(outcome=1), **FAST)


def test_empty_table_names_the_data(rational):
    """A header-only table reads as the empty table it is, not as 'got 0 ()' actions."""
    with pytest.raises(ValueError, match=r"'data' parameter of leakage_test must be a table "
                       r"with at least one row; got '0 rows \(columns: "):
        leakage_test(rational.iloc[:0], **FAST)


def test_label_absent_from_a_training_fold(rational):
    data = rational.copy()
    data["action"] = data["action"].astype(str)
    data.loc[data["context"] == 0, "action"] = "rare"  # one context only
    with pytest.raises(ValueError, match=r"action label\(s\) 'rare' .* absent from the "
                                         r"training part of fold"):
        leakage_test(data, **FAST, rng=0)


def test_constant_belief_warns_and_runs(rational):
    with pytest.warns(DegenerateDataWarning, match="column 'belief' is constant") as caught:
        res = leakage_test(rational.assign(belief=0.5), **FAST, rng=0)
    # the check ci_test shares: its wording and where it points unchanged
    assert str(caught[0].message) == ("leakage_test: column 'belief' is constant (0.5); the "
                                      "base model predicts the marginal action frequencies.")
    assert caught[0].filename == __file__
    assert np.isfinite(res.statistic) and res.log_loss_base > 0
    # with evidence the base model is not the marginal frequencies (it said it was)
    with pytest.warns(DegenerateDataWarning, match="predicts the action from the evidence "
                      "alone"):
        leakage_test(rational.assign(belief=0.5, e=rational["context"] % 2), evidence=["e"],
                     **FAST, rng=0)


def test_an_outcome_varying_within_contexts_warns_that_rows_are_permuted():
    # the p-value then permuted single outcomes among rows, treating the rows of a
    # context as exchangeable, without a word (ci_test warns in the same case)
    data = coherence.simulate("rational", n_contexts=40, rng=3).data
    gen = np.random.default_rng(0)
    data["outcome"] = (gen.random(len(data)) < data["belief"]).astype(int)
    with pytest.warns(SmallSampleWarning, match="single outcomes were permuted among "
                      "rows") as caught:
        res = leakage_test(data, **FAST, rng=0)
    assert res.permute == "rows" and 0.0 < res.pvalue <= 1.0
    assert caught[0].filename == __file__
    shared = data.assign(outcome=data.groupby("context")["outcome"].transform("first"))
    with warnings.catch_warnings():  # one outcome per context: contexts move, no warning
        warnings.simplefilter("error")
        assert leakage_test(shared, **FAST, rng=0).permute == "outcomes"


def test_few_contexts_warn():
    data = coherence.simulate("rational", n_contexts=12, rng=0).data
    with pytest.warns(SmallSampleWarning, match="only 12 contexts"):
        leakage_test(data, n_splits=3, **FAST, rng=0)


# --------------------------------------------------------------------------- computation
def test_statistic_is_relative_log_loss_reduction(leaky):
    res = leakage_test(leaky, **FAST, rng=0)
    assert isinstance(res, LeakageResult)
    assert res.log_loss_base == pytest.approx(res.loss_base.mean())
    assert res.statistic == pytest.approx(
        100 * (res.log_loss_base - res.log_loss_full) / res.log_loss_base)
    assert res.confidence_interval.low < res.statistic < res.confidence_interval.high
    assert len(res.null_distribution) == 19 and len(res.bootstrap_distribution) == 100
    frame = res.to_frame()
    assert tuple(frame.columns) == LeakageResult.frame_columns()
    # the null never sees the real outcome: its mean is far below the observed statistic
    assert res.null_distribution.mean() < res.statistic / 4


def test_out_of_fold_losses_match_hand_rolled_cross_validation(rational):
    """Base-model losses equal an independent grouped CV with sklearn's pipeline."""
    from sklearn.linear_model import LogisticRegression
    from sklearn.pipeline import make_pipeline
    from sklearn.preprocessing import SplineTransformer

    from coherence._resampling import grouped_folds

    res = leakage_test(rational, method="paired", engine="logistic", n_resamples=10, rng=3)
    fold_rng = np.random.default_rng(3).spawn(3)[0]
    groups = rational["context"].to_numpy()
    codes = rational["action"].cat.codes.to_numpy()
    x = rational[["belief"]].to_numpy()
    expected = np.empty(len(codes))
    for train, test in grouped_folds(groups, 5, fold_rng):
        model = make_pipeline(
            SplineTransformer(n_knots=5, degree=3, knots="quantile", extrapolation="linear"),
            LogisticRegression(solver="newton-cholesky", max_iter=200))
        model.fit(x[train], codes[train])
        proba = model.predict_proba(x[test])
        expected[test] = -np.log(proba[np.arange(len(test)), codes[test]])
    np.testing.assert_allclose(res.loss_base, expected, rtol=1e-6, atol=1e-9)


def test_leaky_agent_detected_and_rational_not(rational, leaky):
    res = leakage_test(leaky, **FAST, rng=1)
    assert res.statistic > 5 and res.pvalue == pytest.approx(0.05)  # 1 / (1 + 19)
    assert res.confidence_interval.low > 0
    res = leakage_test(rational, **FAST, rng=1)
    assert res.statistic < 1 and res.pvalue > 0.05


def test_paired_method_with_equal_differences_gives_the_sign_flip_pvalue():
    # identical contexts (belief constant, action = outcome, balanced): every context's
    # loss difference is the same, the t statistic is undefined, and the p-value was 0.0
    rows = [{"context": g, "belief": 0.5, "outcome": g % 2, "action": g % 2}
            for g in range(10) for _ in range(4)]
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = leakage_test(pd.DataFrame(rows), method="paired", n_resamples=10,
                           n_fold_draws=1, rng=0)
    assert any(issubclass(w.category, DegenerateDataWarning)
               and re.search(r"t statistic is undefined.*2\^-10", str(w.message))
               for w in caught)
    d = np.bincount(np.repeat(np.arange(10), 4), weights=res.loss_base - res.loss_full)
    assert np.ptp(d) == 0.0 and d[0] > 0
    assert res.pvalue == 2.0 ** -10


def test_paired_method_is_conservative_but_detects_leaks(rational, leaky):
    assert leakage_test(leaky, method="paired", engine="logistic", rng=0).pvalue < 1e-3
    res = leakage_test(rational, method="paired", engine="logistic", rng=0)
    assert res.pvalue > 0.05 and res.n_permutations == 0 and len(res.null_distribution) == 0


def _nominal(n_contexts: int, seed: int, **changes) -> pd.DataFrame:
    from benchmarks.leakage_designs import LeakDesign
    from benchmarks.leakage_designs import generate

    return generate(LeakDesign(n_contexts=n_contexts, evidence="nominal", **changes), seed)


def test_categorical_evidence_types_agree():
    """Integer codes (the default: categories), strings, pandas categories and the same
    codes declared categorical give one result; ``categorical=[]`` treats them as numbers."""
    data = _nominal(60, 0, repetitions=3)
    names = np.array(list("abcd"))[data["evidence"]]
    variants = [data, data.assign(evidence=names),
                data.assign(evidence=pd.Categorical(names)),
                data.assign(evidence=data["evidence"].astype(float))]
    results = [leakage_test(v, evidence=["evidence"], **FAST, rng=0) for v in variants[:3]]
    results.append(leakage_test(variants[3], evidence=["evidence"], categorical=["evidence"],
                                **FAST, rng=0))
    for res in results:
        assert res.categorical == ("evidence",) and res.permute == "outcomes"
        assert res.statistic == pytest.approx(results[0].statistic, rel=1e-9)
        assert res.pvalue == results[0].pvalue
    numeric = leakage_test(data, evidence=["evidence"], categorical=[], **FAST, rng=0)
    assert numeric.categorical == () and numeric.statistic != pytest.approx(
        results[0].statistic)



def test_category_order_and_unused_categories_change_nothing():
    """The same labels as a pandas categorical whose categories are in another order, or
    include labels no row has, give the strings' result. The first category was the
    dropped (reference) level of the penalised logistic model's one-hot coding, so the
    estimate moved with the dtype's spelling (7.18 against 8.16 on a 50-context study)."""
    data = _nominal(60, 0, repetitions=3)
    names = np.array(list("abcd"))[data["evidence"]]
    clean = leakage_test(data.assign(evidence=names), evidence=["evidence"], **FAST, rng=0)
    for categories, ordered in ((list("dcba"), True), (["zz", *"cadb", "aa"], False)):
        spelt = data.assign(evidence=pd.Categorical(names, categories=categories,
                                                    ordered=ordered))
        res = leakage_test(spelt, evidence=["evidence"], **FAST, rng=0)
        pd.testing.assert_frame_equal(res.to_frame(), clean.to_frame())

def test_renamed_labels_change_nothing():
    """Renaming an evidence column's labels so that their sorted order changes ('a' ->
    'z') gives the same estimate, p-value and interval: the penalised logistic model
    one-hot codes every level. With the first level in sorted order dropped (the
    reference), the fit moved with the names (4.51 against 3.13 on a 50-context study)."""
    data = _nominal(50, 0, repetitions=3, leak=1.0)
    codes = data["evidence"].to_numpy()
    for evidence in (np.array(list("abcd"))[codes], (codes % 2).astype(bool)):
        plain = data.assign(evidence=evidence)
        renamed = data.assign(evidence=pd.Series(evidence).map(
            {"a": "z", True: "no", False: "yes"}).fillna(pd.Series(evidence)).to_numpy())
        a = leakage_test(plain, evidence=["evidence"], **FAST, rng=0)
        b = leakage_test(renamed, evidence=["evidence"], **FAST, rng=0)
        assert b.statistic == pytest.approx(a.statistic, rel=1e-9, abs=1e-12)
        assert b.pvalue == a.pvalue
        assert b.confidence_interval.low == pytest.approx(a.confidence_interval.low, abs=1e-8)
        np.testing.assert_allclose(b.loss_full, a.loss_full, rtol=1e-8, atol=1e-12)


@settings(max_examples=6, deadline=None)
@given(st.permutations("abcd"))
def test_permuted_label_names_change_nothing(names):
    """Property: any assignment of the names to the nominal levels, one result."""
    data = _nominal(40, 5, repetitions=3, leak=1.0)
    kw = {"evidence": ["evidence"], "engine": "logistic", "n_resamples": 20,
          "n_permutations": 9, "rng": 1}
    a = leakage_test(data.assign(evidence=np.array(list("abcd"))[data["evidence"]]), **kw)
    b = leakage_test(data.assign(evidence=np.array(names)[data["evidence"]]), **kw)
    assert b.statistic == pytest.approx(a.statistic, rel=1e-9, abs=1e-12)
    assert b.pvalue == a.pvalue


def test_boolean_evidence_accepted():
    data = _nominal(60, 1, repetitions=3)
    res = leakage_test(data.assign(flag=data["evidence"] % 2 == 1), evidence=["flag"], **FAST,
                       rng=0)
    assert res.categorical == ("flag",) and np.isfinite(res.pvalue)


def test_no_permutation_possible_gives_nan():
    data = _nominal(20, 2, repetitions=2)  # few contexts: a small one-hot design to refit
    data["evidence"] = data["context"].astype(str)  # one level per context: nothing to permute
    with pytest.warns(DegenerateDataWarning, match="no valid permutation test"):
        res = leakage_test(data, evidence=["evidence"], n_splits=3, **FAST, rng=0)
    assert np.isnan(res.pvalue)


def test_blocks_of_one_outcome_give_nan(paired_leak):
    # a perfect leak that no permutation can measure got p = 1 with no word
    with (pytest.warns(DegenerateDataWarning, match="no permutation changes the data"),
          pytest.warns(SmallSampleWarning, match="only 16 contexts")):
        res = leakage_test(paired_leak, n_permutations=19, rng=0)
    assert np.isnan(res.pvalue) and res.statistic > 0


@pytest.mark.slow  # a statistical matrix (or a long equivalence check): make test-slow
@pytest.mark.parametrize("evidence", ["nominal", "binary"])
def test_fast_size_on_evidence_nulls_of_issue_14(evidence):
    """Fast subset of benchmarks/validate_leakage.py: the designs on which the previous null
    rejected 0.53 (nominal codes) and 0.115 (binary evidence changing a loss); 24 studies,
    Binomial(24, 0.05): P(X >= 5) = 0.007."""
    from benchmarks.leakage_designs import LeakDesign
    from benchmarks.leakage_designs import generate

    design = LeakDesign(n_contexts=60, repetitions=4, evidence=evidence, shock_sd=0.5)
    rejections = 0
    for r in range(24):
        res = leakage_test(generate(design, 500 + r), evidence=["evidence"], engine="logistic",
                           n_resamples=10, n_permutations=19, rng=r)
        rejections += res.pvalue <= 0.05
    assert rejections <= 4


def test_fast_power_on_nominal_evidence():
    from benchmarks.leakage_designs import LeakDesign
    from benchmarks.leakage_designs import generate

    design = LeakDesign(n_contexts=100, repetitions=4, evidence="nominal", leak=1.5)
    res = leakage_test(generate(design, 7), evidence=["evidence"], **FAST, rng=0)
    assert res.pvalue == pytest.approx(0.05) and res.statistic > 0


def test_report_settings_reach_the_permutations():
    from coherence._report._registry import Options
    from coherence._report._registry import _leak

    data = _nominal(40, 3, repetitions=2)
    o = Options(belief="belief", action="action", outcome="outcome", group="context",
                prompt=None, repetition=None, truth=None, evidence=("evidence",), k=3,
                n_resamples=12, n_permutations=7, n_splits=3, engine="logistic", n_bins=10,
                confidence_level=0.9, reference_prompt="standard")
    res = _leak(data, o, np.random.default_rng(0), evidence=True)
    assert res.n_permutations == 7 and len(res.null_distribution) == 7
    assert res.n_resamples == 12 and res.evidence == ("evidence",)


def test_evidence_variant_runs(leaky):
    gen = np.random.default_rng(0)
    data = leaky.assign(ev=leaky["truth"] + 0.1 * gen.standard_normal(len(leaky)))
    res = leakage_test(data, evidence=["ev"], **FAST, rng=0)
    assert res.evidence == ("ev",) and res.statistic > 0


def _one_permutation(strata: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    """Reference: one within-stratum permutation, by sorting each stratum's items on
    fresh uniform keys (one ``gen.random(n)`` call per permutation)."""
    keys = gen.random(len(strata))
    perm = np.empty(len(strata), dtype=np.int64)
    for s in np.unique(strata):
        where = np.flatnonzero(strata == s)
        perm[where] = where[np.argsort(keys[where], kind="stable")]
    return perm


@given(st.lists(st.integers(0, 3), min_size=1, max_size=60), st.integers(0, 2**32 - 1),
       st.integers(1, 1200))
def test_permutation_stays_within_strata(strata, seed, n):
    """The batched permutations are those of n one-at-a-time draws (same stream), and each
    only exchanges items of one stratum."""
    strata = np.array(strata)
    gen, ref_gen = np.random.default_rng(seed), np.random.default_rng(seed)
    perms = np.concatenate(list(permutations_within(strata, gen, n)))
    assert perms.shape == (n, len(strata))
    for perm in perms[:: max(1, n // 7)]:
        assert np.array_equal(np.sort(perm), np.arange(len(strata)))
        assert np.array_equal(strata[perm], strata)
    ref = np.array([_one_permutation(strata, ref_gen) for _ in range(n)])
    assert np.array_equal(perms, ref)
    assert gen.random() == ref_gen.random()  # the stream is left where n calls leave it


def _evidence(codes: np.ndarray) -> _Evidence:
    codes = np.asarray(codes, dtype=np.int64).reshape(len(codes), -1)
    return _Evidence(np.empty((len(codes), 0)), codes, tuple(int(c.max()) + 1 for c in codes.T))


def test_blocks_match_contexts_on_evidence_and_belief():
    """Contexts are permuted only among contexts with their evidence and (grid) belief."""
    gen = np.random.default_rng(0)
    n_groups, reps = 600, 2  # every (evidence, belief) cell holds >= k_perm contexts
    groups = np.repeat(np.arange(n_groups), reps)
    p_ctx = gen.choice([0.2, 0.5, 0.8], size=n_groups)
    e_ctx = gen.integers(0, 4, size=n_groups)
    y_ctx = gen.integers(0, 2, size=n_groups)
    permute, y_unit, block = permutation_blocks(p_ctx[groups], _evidence(e_ctx[groups]),
                                                y_ctx[groups], groups, 5)
    assert permute == "outcomes"
    np.testing.assert_array_equal(y_unit, y_ctx)
    for b in np.unique(block):
        members = block == b
        assert len(np.unique(e_ctx[members])) == 1 and len(np.unique(p_ctx[members])) == 1
    # continuous beliefs: blocks of at least k_perm neighbours, never across evidence
    p_ctx = gen.random(n_groups)
    _, _, block = permutation_blocks(p_ctx[groups], _evidence(e_ctx[groups]),
                                     y_ctx[groups], groups, 5)
    assert np.bincount(block).min() >= 5
    for b in np.unique(block):
        assert len(np.unique(e_ctx[block == b])) == 1


def test_blocks_fall_back_to_rows_when_the_outcome_varies_within_a_context():
    groups = np.repeat(np.arange(30), 2)
    y = np.tile([0, 1], 30)
    permute, y_unit, block = permutation_blocks(np.full(60, 0.5), _evidence(np.zeros(60)), y,
                                                groups, 5)
    assert permute == "rows" and len(y_unit) == 60 and len(np.unique(block)) == 1


# --------------------------------------------------------------------------- properties
@settings(max_examples=8)
@given(st.integers(0, 2**32 - 1))
def test_row_order_invariance(seed):
    data = coherence.simulate(coherence.Agent.leaky(0.4), n_contexts=30, rng=seed % 97).data
    a = leakage_test(data, engine="logistic", n_resamples=20, n_permutations=3, n_splits=3,
                     rng=0)
    shuffled = data.sample(frac=1.0, random_state=np.random.default_rng(seed))
    b = leakage_test(shuffled, engine="logistic", n_resamples=20, n_permutations=3,
                     n_splits=3, rng=0)
    assert a.statistic == pytest.approx(b.statistic, rel=1e-6, abs=1e-8)
    assert a.pvalue == b.pvalue
    assert a.confidence_interval.low == pytest.approx(b.confidence_interval.low, abs=1e-6)
    np.testing.assert_allclose(a.loss_full, b.loss_full.copy()[np.argsort(
        shuffled.index.to_numpy())], rtol=1e-6, atol=1e-9)


@given(st.permutations(["A", "B", "C"]))
def test_label_relabelling(names):
    data = coherence.simulate(coherence.Agent.leaky(0.4), n_contexts=40, rng=3).data
    mapping = dict(zip(["yes", "no", "defer"], names, strict=True))
    relabelled = data.assign(action=data["action"].astype(str).map(mapping))
    a = leakage_test(data, engine="logistic", n_resamples=20, n_permutations=3, rng=0)
    b = leakage_test(relabelled, engine="logistic", n_resamples=20, n_permutations=3, rng=0)
    assert a.statistic == pytest.approx(b.statistic, rel=1e-4, abs=1e-6)




def test_catboost_smoke(leaky):
    pytest.importorskip("catboost")
    res = leakage_test(leaky, engine="catboost", n_resamples=20, n_permutations=1,
                       engine_options={"iterations": 30, "thread_count": 1}, rng=0)
    assert res.engine == "catboost" and res.statistic > 0


def test_pvalue_engine_default_is_the_statistic_engine(leaky):
    res = leakage_test(leaky, **FAST, rng=0)
    same = leakage_test(leaky, **FAST, pvalue_engine="logistic", rng=0)
    assert res.pvalue_engine == "logistic" and res.settings()["pvalue_engine"] == "logistic"
    assert same.pvalue == res.pvalue and same.statistic == res.statistic
    np.testing.assert_array_equal(same.null_distribution, res.null_distribution)


CATBOOST_SMALL = {"iterations": 20, "early_stopping": False, "thread_count": 1}


@pytest.mark.requires("catboost")
@pytest.mark.parametrize("rng", [3, "generator"])
def test_catboost_statistic_with_the_logistic_pvalue(leaky, rng):
    """engine='catboost', pvalue_engine='logistic': catboost's statistic, interval and
    losses, the logistic engine's p-value and null, as two separate calls give them."""
    def seed():
        return np.random.default_rng(3) if rng == "generator" else rng

    kw = {"n_resamples": 30, "n_permutations": 9}
    hybrid = leakage_test(leaky, engine="catboost", pvalue_engine="logistic",
                          engine_options=CATBOOST_SMALL, rng=seed(), **kw)
    cat = leakage_test(leaky, engine="catboost", method="paired",
                       engine_options=CATBOOST_SMALL, rng=seed(), **kw)
    logistic = leakage_test(leaky, engine="logistic", rng=seed(), **kw)
    assert hybrid.statistic == cat.statistic != logistic.statistic
    assert hybrid.confidence_interval == cat.confidence_interval
    np.testing.assert_array_equal(hybrid.loss_full, cat.loss_full)
    assert hybrid.pvalue == logistic.pvalue
    np.testing.assert_array_equal(hybrid.null_distribution, logistic.null_distribution)
    assert (hybrid.engine, hybrid.pvalue_engine, hybrid.method) == (
        "catboost", "logistic", "permutation")
    assert hybrid.n_permutations == 9 and hybrid.permute == logistic.permute
    assert "pvalue_engine" in hybrid.to_frame().columns
    assert "pvalue_engine logistic" in " ".join(hybrid.summary().split())


@pytest.mark.requires("catboost")
def test_pvalue_engine_with_the_paired_method(leaky):
    kw = {"method": "paired", "n_resamples": 20, "rng": 2}
    hybrid = leakage_test(leaky, engine="catboost", pvalue_engine="logistic",
                          engine_options=CATBOOST_SMALL, **kw)
    logistic = leakage_test(leaky, engine="logistic", **kw)
    assert hybrid.pvalue == logistic.pvalue and hybrid.permute == "none"
    assert hybrid.n_permutations == 0 and len(hybrid.null_distribution) == 0


@pytest.mark.requires("catboost")
def test_logistic_statistic_with_the_catboost_pvalue(leaky):
    kw = {"n_resamples": 20, "n_permutations": 2, "rng": 1}
    mixed = leakage_test(leaky, engine="logistic", pvalue_engine="catboost", **kw)
    logistic = leakage_test(leaky, engine="logistic", method="paired", **kw)
    assert mixed.statistic == logistic.statistic and mixed.pvalue_engine == "catboost"
    assert len(mixed.null_distribution) == 2


def test_catboost_pvalue_engine_needs_catboost(leaky, monkeypatch):
    import sys

    monkeypatch.setitem(sys.modules, "catboost", None)  # as if not installed
    with pytest.raises(ImportError, match="pvalue_engine='catboost'"):
        leakage_test(leaky, **FAST, pvalue_engine="catboost", rng=0)


def test_catboost_takes_string_evidence_natively():
    pytest.importorskip("catboost")
    data = _nominal(40, 4, repetitions=3)
    data["evidence"] = np.array(list("abcd"))[data["evidence"]]
    res = leakage_test(data, evidence=["evidence"], engine="catboost", n_resamples=10,
                       n_permutations=2, n_splits=3,
                       engine_options={"iterations": 20, "early_stopping": False}, rng=0)
    assert res.categorical == ("evidence",) and np.isfinite(res.statistic)


@pytest.mark.slow
def test_size_on_rational_agent():
    """Permutation p-values at the rational agent: rejection rate near 0.05."""
    rejections = 0
    reps = 60
    for r in range(reps):
        data = coherence.simulate("rational", n_contexts=100, rng=700 + r).data
        res = leakage_test(data, engine="logistic", n_resamples=10, n_permutations=19, rng=r)
        rejections += res.pvalue <= 0.05
    assert rejections <= 9  # Binomial(60, 0.05): P(X > 9) < 0.003


def test_summary_reports_both_losses(leaky):
    text = leakage_test(leaky, **FAST, rng=0).summary()
    assert "leakage_test (permutation)" in text
    assert "log_loss_base" in text and "log_loss_full" in text
    assert re.search(r"^  engine +logistic$", str(text), re.M)


def test_rare_action_spread_over_the_folds():
    # an action chosen in only a few contexts used to raise whenever the random folds put
    # all of them in one fold (62 of 400 studies of a rare-outcome design); the folds are
    # now repaired from the actions alone, and a training part always sees every action
    from coherence._decision._leakage import _spread_labels
    from coherence._decision._leakage import _training_parts_miss
    from coherence._resampling import grouped_folds

    gen = np.random.default_rng(0)
    groups = np.repeat(np.arange(40), 3)
    for seed in range(30):
        a = np.zeros(len(groups), dtype=np.int64)
        rare = gen.choice(40, size=2, replace=False)
        a[np.isin(groups, rare)] = 1
        folds = grouped_folds(groups, 5, np.random.default_rng(seed))
        fixed = _spread_labels(folds, groups, a, 2)
        assert not _training_parts_miss(fixed, a, 2)
        covered = np.sort(np.concatenate([test for _, test in fixed]))
        assert np.array_equal(covered, np.arange(len(groups)))  # a partition of the rows
        for train, test in fixed:  # whole contexts in one fold
            assert not set(groups[train]) & set(groups[test])
        if not _training_parts_miss(folds, a, 2):
            pairs = zip(folds, fixed, strict=True)
            assert all(np.array_equal(t1, t2) for (_, t1), (_, t2) in pairs)


# --------------------------------------------------------------------------- defaults
def test_default_engine_is_logistic(rational):
    """leakage_test(data) at its defaults answers with the logistic engine (seconds);
    catboost, the paper's setting, is asked for by name."""
    res = leakage_test(rational, n_resamples=20, n_permutations=19, rng=0)
    assert res.engine == res.pvalue_engine == "logistic"
    same = leakage_test(rational, engine="logistic", n_resamples=20, n_permutations=19, rng=0)
    assert res.statistic == same.statistic and res.pvalue == same.pvalue


def test_missing_catboost_names_the_extra(rational, monkeypatch):
    import importlib.util

    real = importlib.util.find_spec
    monkeypatch.setattr(importlib.util, "find_spec",
                        lambda name, *a: None if name == "catboost" else real(name, *a))
    with pytest.raises(ModuleNotFoundError, match=r"belief-coherence\[catboost\]"):
        leakage_test(rational, engine="catboost", **{k: v for k, v in FAST.items()
                                                     if k != "engine"})


# --------------------------------------------------------------------------- the interval
def test_fold_draws_move_only_the_interval(rational):
    """The fold draws come after every other draw: the statistic, the p-value, the losses
    and the bootstrap are those of ``n_fold_draws=1``, whose interval is the plain
    percentile interval; more draws never narrow it."""
    from coherence._resampling import percentile_interval

    one = leakage_test(rational, **FAST, n_fold_draws=1, rng=4)
    five = leakage_test(rational, **FAST, rng=4)
    assert five.n_fold_draws == 5 and one.n_fold_draws == 1
    assert (one.statistic, one.pvalue) == (five.statistic, five.pvalue)
    np.testing.assert_array_equal(one.loss_full, five.loss_full)
    np.testing.assert_array_equal(one.bootstrap_distribution, five.bootstrap_distribution)
    np.testing.assert_array_equal(one.null_distribution, five.null_distribution)
    assert one.fold_sd == 0.0 and five.fold_sd > 0.0
    assert tuple(one.confidence_interval)[:2] == percentile_interval(
        one.bootstrap_distribution, 0.95)
    assert five.confidence_interval.low <= one.confidence_interval.low
    assert five.confidence_interval.high >= one.confidence_interval.high
    frame = five.to_frame()
    assert frame.loc[0, "n_fold_draws"] == 5 and frame.loc[0, "fold_sd"] == five.fold_sd


def test_fold_sd_is_the_spread_over_fresh_cross_fittings(rational):
    """Brute force: the fold statistics rebuilt from the generator's documented order (the
    three spawned streams, the seeds, then one spawned stream per extra fold draw, each
    drawing its seeds and then its folds), each a cross-fitting of both models."""
    from coherence._decision import _leakage as lk
    from coherence._resampling import grouped_folds

    res = leakage_test(rational, method="paired", engine="logistic", n_resamples=10,
                       n_fold_draws=3, rng=8)
    iv = lk._leakage_test_iv(rational, "belief", "action", "outcome", (), "auto", "context",
                             5, "logistic", 10, 3, 1, "paired", 5, 0.95, None, None, 8)
    gen = np.random.default_rng(8)
    gen.spawn(3)
    gen.integers(0, 2**31 - 1, size=(2, 5))
    values = [res.statistic]
    for child in gen.spawn(2):
        seeds = child.integers(0, 2**31 - 1, size=(2, 5))
        folds = grouped_folds(iv["groups"], 5, child)
        designs = lk.base_designs("logistic", iv["p"], iv["ev"], folds, iv["options"])
        losses = [lk.oof_losses("logistic", designs, iv["p"], iv["ev"], y, iv["a"],
                                 iv["groups"], folds, len(iv["labels"]), iv["options"], seeds[m])
                  for m, y in enumerate((None, iv["y"]))]
        values.append(100.0 * (losses[0].mean() - losses[1].mean()) / losses[0].mean())
    assert res.fold_sd == pytest.approx(np.std(values, ddof=1), rel=1e-9)


@settings(max_examples=60, deadline=None)
@given(st.integers(2, 6), st.integers(1, 8), st.integers(0, 2**32 - 1))
def test_between_context_fold_variance_is_the_sum_of_cross_covariances(draws, contexts, seed):
    """Brute force: the sum over ordered pairs of distinct contexts of the sample
    covariance (over the draws) of their linearised contributions, clipped at 0."""
    from coherence._decision._leakage_interval import between_context_fold_variance

    gen = np.random.default_rng(seed)
    sum_base = gen.uniform(0.5, 2.0, size=(draws, contexts))
    sum_full = sum_base * gen.uniform(0.8, 1.2, size=(draws, contexts))
    b, f = sum_base.sum(axis=1).mean(), sum_full.sum(axis=1).mean()
    psi = [[100.0 * (f / b * sum_base[r, g] - sum_full[r, g]) / b for g in range(contexts)]
           for r in range(draws)]
    cross = 0.0
    for g in range(contexts):
        for h in range(contexts):
            if g != h:
                x = [psi[r][g] for r in range(draws)]
                y = [psi[r][h] for r in range(draws)]
                mx, my = sum(x) / draws, sum(y) / draws
                cross += sum((u - mx) * (v - my) for u, v in zip(x, y, strict=True)) / (draws - 1)
    assert between_context_fold_variance(sum_base, sum_full) == pytest.approx(
        max(cross, 0.0), abs=1e-9)
    assert between_context_fold_variance(sum_base[:1], sum_full[:1]) == 0.0


@settings(max_examples=60, deadline=None)
@given(st.lists(st.floats(-5, 5), min_size=2, max_size=60), st.floats(-5, 5),
       st.floats(0.0, 4.0), st.floats(0.5, 0.99))
def test_widened_interval_adds_the_variance_on_each_side(boot, statistic, extra, level):
    """Against a written-out formula: each end's distance h from the statistic (0 when the
    end is on the wrong side) becomes sqrt(h^2 + z^2 v); v = 0 leaves the percentile
    interval unchanged; the ends never move in."""
    from statistics import NormalDist

    from coherence._decision._leakage_interval import widened_interval
    from coherence._resampling import percentile_interval

    boot = np.array(boot)
    low, high = percentile_interval(boot, level)
    wl, wh = widened_interval(statistic, boot, extra, level)
    if extra == 0.0:
        assert (wl, wh) == (low, high)
        return
    z = NormalDist().inv_cdf(0.5 + level / 2.0)
    h_low, h_high = max(statistic - low, 0.0), max(high - statistic, 0.0)
    assert wl == pytest.approx(statistic - (h_low**2 + z**2 * extra) ** 0.5, abs=1e-9)
    assert wh == pytest.approx(statistic + (h_high**2 + z**2 * extra) ** 0.5, abs=1e-9)
    assert wl <= min(low, statistic) + 1e-12 and wh >= max(high, statistic) - 1e-12


def test_fold_draws_validated(rational):
    with pytest.raises(ValueError, match="'n_fold_draws' parameter of leakage_test"):
        leakage_test(rational, **FAST, n_fold_draws=0)


@pytest.mark.slow  # a statistical matrix (or a long equivalence check): make test-slow
def test_fast_coverage_on_rare_outcomes():
    """Fast subset of benchmarks/validate_leakage.py's coverage: the rare-outcome design,
    where the plain bootstrap interval covered 0.86-0.90 of the mean statistic; 80
    studies (E[S] estimated from the same studies)."""
    from benchmarks.validate_leakage import CELLS
    from benchmarks.validate_leakage import _run_one

    design, engine, _ = CELLS["rare outcomes, nominal evidence"]
    out = np.array([_run_one((design, engine, 900 + r)) for r in range(80)])
    ok = out[out[:, 1] != -1.0]
    target = ok[:, 0].mean()
    covered = np.mean((ok[:, 2] <= target) & (ok[:, 3] >= target))
    assert covered >= 0.88 and np.all(ok[:, 3] - ok[:, 2] >= ok[:, 5] - ok[:, 4] - 1e-12)


def test_tied_contexts_are_exact_blocks_and_lone_ones_merge_with_each_other():
    """Contexts tied in (evidence, belief) are a block of their own even when fewer than
    k_perm; only contexts alone in their values merge, with adjacent lone ones (merging
    the ties with their neighbours rejected 0.083 of 1,000 null studies of 40 x 3)."""
    gen = np.random.default_rng(3)
    n_groups = 40
    groups = np.repeat(np.arange(n_groups), 3)
    p_ctx = gen.choice(np.round(np.arange(0.05, 1.0, 0.05), 2), size=n_groups)
    e_ctx = gen.integers(0, 2, size=n_groups)
    y_ctx = gen.integers(0, 2, size=n_groups)
    _, _, block = permutation_blocks(p_ctx[groups], _evidence(e_ctx[groups]),
                                     y_ctx[groups], groups, 5)
    cells = {(e, p): np.flatnonzero((e_ctx == e) & (p_ctx == p))
             for e, p in zip(e_ctx, p_ctx, strict=True)}
    tied = [m for m in cells.values() if len(m) >= 2]
    assert tied  # the design has ties
    for members in tied:  # each tie run is exactly one block
        assert len(np.unique(block[members])) == 1
        assert np.sum(block == block[members[0]]) == len(members)
    for b in np.unique(block):
        members = np.flatnonzero(block == b)
        assert len(np.unique(e_ctx[members])) == 1
        if len({(e_ctx[m], p_ctx[m]) for m in members}) > 1:  # merged: lone contexts only
            assert all(len(cells[(e_ctx[m], p_ctx[m])]) == 1 for m in members)


@pytest.mark.slow  # a statistical matrix (or a long equivalence check): make test-slow
def test_size_of_the_small_study_with_exact_tie_blocks():
    """Subset of validate_leakage's 40 x 3 null (binary evidence, 0.05 grid): 1,000 studies
    at 99 permutations reject 0.052; the earlier layout (ties merged with their
    neighbours) rejected 0.070 of these studies and 0.083 of the focused check's."""
    from benchmarks.leakage_designs import LeakDesign
    from benchmarks.leakage_designs import generate

    design = LeakDesign(evidence="binary", n_contexts=40, repetitions=3)
    rejected = 0
    for seed in range(1000):
        data = generate(design, 80_000_000 + seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = leakage_test(data, evidence=["evidence"], rng=seed, n_resamples=10,
                               n_fold_draws=1, n_permutations=99)
        rejected += res.pvalue <= 0.05
    assert 0.03 <= rejected / 1000 <= 0.065


def test_per_row_table_keeps_the_index_of_data():
    # before: table had the index 0..n-1 whatever the data's, so a loss column assigned
    # back to shuffled data (index 5, 0, 9, ...) landed on other rows without a word
    data = coherence.simulate(coherence.Agent.leaky(0.4), n_contexts=30, rng=3).data
    kwargs = {"engine": "logistic", "n_resamples": 20, "n_permutations": 3, "n_splits": 3,
              "rng": 0}
    a = leakage_test(data, **kwargs)
    shuffled = data.sample(frac=1.0, random_state=1)
    b = leakage_test(shuffled, **kwargs)
    assert b.table.index.equals(shuffled.index)
    np.testing.assert_array_equal(b.table["loss_full"].to_numpy(), b.loss_full)
    back = shuffled.assign(loss=b.table["loss_full"]).sort_index()["loss"]
    np.testing.assert_allclose(back.to_numpy(), a.loss_full, rtol=1e-6, atol=1e-9)
    labelled = data.set_axis([f"r{i}" for i in range(len(data))])
    assert list(leakage_test(labelled, **kwargs).table.index) == list(labelled.index)


def test_constant_numeric_evidence_changes_nothing_whatever_its_rounding():
    """A numeric evidence column holding one value is 0 once standardised, whatever the
    rounding of its mean: 0.3 came out with a standard deviation of 5.6e-17 in training
    folds, a column of -1s whose products with the belief's splines copied them, and
    the statistic was 0.270 against 0.556 without the column (or with 0.1, 0.7, 1.0)."""
    data = coherence.simulate("rational", n_contexts=50, rng=0).data
    kw = {"n_permutations": 9, "n_fold_draws": 1, "n_resamples": 20, "rng": 1}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plain = coherence.leakage_test(data, **kw)
        for value in (0.3, 0.7):
            res = coherence.leakage_test(data.assign(ev=value), evidence=["ev"], **kw)
            assert res.statistic == pytest.approx(plain.statistic, abs=1e-9)
            assert res.log_loss_base == pytest.approx(plain.log_loss_base, abs=1e-12)
            assert res.pvalue == plain.pvalue
