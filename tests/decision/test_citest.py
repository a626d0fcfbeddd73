"""Tests of ``coherence.ci_test`` (conditional-independence test of action and outcome)."""

from __future__ import annotations

import functools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from scipy.stats import rankdata

import coherence
from coherence import Agent
from coherence import CITestResult
from coherence import DegenerateDataWarning
from coherence import NotCalibratedWarning
from coherence import SmallSampleWarning
from coherence._decision._permutation import units_and_blocks


@pytest.fixture(scope="module")
def rational() -> pd.DataFrame:
    return coherence.simulate("rational", n_contexts=200, rng=1).data


@pytest.fixture(scope="module")
def leaky() -> pd.DataFrame:
    return coherence.simulate(Agent.leaky(strength=0.8), n_contexts=200, rng=1).data


# --------------------------------------------------------------------------- conformance
def test_result_type_schema_and_read_only_arrays(rational):
    res = coherence.ci_test(rational, n_resamples=99, rng=0)
    assert isinstance(res, CITestResult)
    assert res.n_obs == len(rational) and res.n_contexts == 200
    assert res.permute == "outcomes" and res.ci_method == "debiased"
    assert res.null_distribution.shape == (99,)
    assert not res.null_distribution.flags.writeable
    assert res.confidence_interval.low <= res.confidence_interval.high
    assert 1 / 100 <= res.pvalue <= 1.0
    assert "p-value" in res.summary()


def test_statistic_is_the_cmi_of_the_columns(rational):
    res = coherence.ci_test(rational, n_resamples=9, rng=0)
    direct = coherence.cmi(rational["action"], rational["outcome"], rational["belief"],
                           resolution=1e-6)
    # rows are summed in the test's canonical order: equal up to rounding
    assert res.statistic == pytest.approx(direct, rel=1e-12, abs=1e-15)






def test_same_result_with_one_or_two_threads(rational):
    import numba

    before = numba.get_num_threads()
    try:
        numba.set_num_threads(1)
        one = coherence.ci_test(rational, n_resamples=64, rng=5)
        numba.set_num_threads(min(2, numba.config.NUMBA_NUM_THREADS))
        two = coherence.ci_test(rational, n_resamples=64, rng=5)
    finally:
        numba.set_num_threads(before)
    np.testing.assert_array_equal(one.null_distribution, two.null_distribution)
    np.testing.assert_array_equal(one.resample_distribution, two.resample_distribution)


def test_permutation_null_keeps_counts_within_blocks(rational):
    cond = np.column_stack([np.zeros(len(rational)), rational["belief"].to_numpy()])
    groups = rational["context"].to_numpy()
    unit_start, _rows, block_start, block_units = units_and_blocks(cond, groups, True, 5)
    assert sorted(block_units.tolist()) == list(range(200))
    sizes = np.diff(block_start)
    assert sizes.min() >= 2
    # contexts sharing a block have equal size; blocks of ties are exact when large enough
    for j in range(len(block_start) - 1):
        units = block_units[block_start[j]:block_start[j + 1]]
        assert len(set(np.diff(unit_start)[units].tolist())) == 1


# --------------------------------------------------------------------------- behaviour
def test_detects_a_leaky_agent(leaky):
    res = coherence.ci_test(leaky, n_resamples=199, rng=0)
    assert res.pvalue == pytest.approx(1 / 200)
    assert res.confidence_interval.low > 0.0


def test_rational_agent_is_not_rejected(rational):
    res = coherence.ci_test(rational, n_resamples=199, rng=0)
    assert res.pvalue > 0.05
    assert res.confidence_interval.low <= 0.0


def test_bootstrap_method_warns_and_gives_no_pvalue(rational):
    with pytest.warns(NotCalibratedWarning, match="not a calibrated test"):
        res = coherence.ci_test(rational, method="bootstrap", n_resamples=50, rng=0)
    assert math.isnan(res.pvalue)
    assert res.method == "bootstrap" and res.null_distribution.size == 0
    assert res.resample_distribution.shape == (50,)
    # duplicated rows inflate the kNN estimate: the bootstrap centre sits above the estimate
    assert np.mean(res.resample_distribution) > res.statistic


@pytest.mark.parametrize(("kwargs", "name"), [
    ({"permute": "rows"}, "permute"),
    ({"permute": "auto"}, "permute"),
    ({"k_perm": 5}, "k_perm"),
    ({"k_perm": 3}, "k_perm"),
    ({"test_statistic": "knn"}, "test_statistic"),
    ({"ci_method": "debiased"}, "ci_method"),
    ({"ci_method": "subsampling"}, "ci_method"),
    ({"ci_method": None}, "ci_method"),
])
def test_bootstrap_method_refuses_the_permutation_options(rational, kwargs, name):
    # these used to be accepted and ignored: k_perm=5 or ci_method='subsampling' with
    # method='bootstrap' gave the very interval of the defaults
    with pytest.raises(ValueError, match=rf"'{name}' .*method='bootstrap'.*does not use it"):
        coherence.ci_test(rational, method="bootstrap", n_resamples=20, rng=0, **kwargs)


def test_plan_does_not_pass_the_bootstrap_method_an_option_it_refuses(rational):
    # plan adds ci_method=None (p-values only) to ci_test's options; with
    # method='bootstrap' that raised about an option the user never passed. The method
    # has no p-value, so every design's power read 0: it is refused, naming what was given
    with pytest.raises(ValueError, match=r"'options' parameter of plan .*'bootstrap' gives "
                       r"an interval only.*got \{'method': 'bootstrap'\}") as info:
        coherence.plan(rational, test="ci_test", n_contexts=[10], n_sims=2, rng=0,
                       options={"method": "bootstrap", "n_resamples": 9})
    assert "ci_method" not in str(info.value)


def test_the_method_defaults_are_kept(rational):
    with pytest.warns(NotCalibratedWarning):
        boot = coherence.ci_test(rational, method="bootstrap", n_resamples=20, rng=0)
        named = coherence.ci_test(rational, method="bootstrap", ci_method="bootstrap",
                                  n_resamples=20, rng=0)
    assert boot.confidence_interval == named.confidence_interval
    assert boot.ci_method == "bootstrap"
    default = coherence.ci_test(rational, n_resamples=19, rng=0)
    spelled = coherence.ci_test(rational, n_resamples=19, rng=0, permute="auto", k_perm=3,
                                test_statistic="auto", ci_method="debiased")
    assert default.ci_method == "debiased" and default.test_statistic == "plugin"
    assert (default.pvalue, default.confidence_interval) == (spelled.pvalue,
                                                             spelled.confidence_interval)


def test_one_context_warns_that_the_pvalue_treats_rows_as_exchangeable():
    gen = np.random.default_rng(0)
    p = gen.choice([0.2, 0.5, 0.8], 200)
    data = pd.DataFrame({"belief": p, "outcome": (gen.random(200) < p).astype(int),
                         "action": (gen.random(200) < p).astype(int), "context": 0})
    with pytest.warns(SmallSampleWarning) as caught:
        res = coherence.ci_test(data, n_resamples=99, rng=0)
    assert res.permute == "rows" and 0.0 < res.pvalue <= 1.0
    message = next(str(w.message) for w in caught if "one context" in str(w.message))
    assert "treats the rows as exchangeable" in message and "'context'" in message
    assert not any("stays valid" in str(w.message) for w in caught)
    # the cross-fitted calibration has no other context to fit on: it raised sklearn's
    # "Found array with 0 sample(s)"
    with pytest.raises(ValueError, match=r"'calibrate' .*one context"):
        coherence.ci_test(data, calibrate=True, n_resamples=19, rng=0)
    # several contexts: no such warning
    data["context"] = np.arange(200) % 40
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        coherence.ci_test(data, n_resamples=19, rng=0)
    assert not any("one context" in str(w.message) for w in caught)


def test_a_fallback_to_single_rows_in_several_contexts_warns():
    # outcome and belief drawn per row in 20 contexts: neither a context's outcome nor its
    # actions can move, and permute='auto' permuted single rows without a word
    gen = np.random.default_rng(0)
    p = gen.choice([0.2, 0.5, 0.8], 200)
    data = pd.DataFrame({"belief": p, "outcome": (gen.random(200) < p).astype(int),
                         "action": (gen.random(200) < p).astype(int),
                         "context": np.arange(200) % 20})
    with pytest.warns(SmallSampleWarning) as caught:
        res = coherence.ci_test(data, n_resamples=99, ci_method=None, rng=0)
    message = next(str(w.message) for w in caught if "fell back" in str(w.message))
    assert "20 contexts (column 'context')" in message
    assert "treats the rows as exchangeable" in message and res.permute == "rows"
    with warnings.catch_warnings():  # asked for: the same p-value, no warning
        warnings.simplefilter("error")
        rows = coherence.ci_test(data, n_resamples=99, ci_method=None, permute="rows", rng=0)
    assert rows.pvalue == res.pvalue and rows.permute == "rows"


def test_a_constant_belief_warns_that_it_conditions_on_nothing():
    # a rational study whose belief column was overwritten: p = 0.005, with no warning,
    # while leakage_test warned on the same column
    data = coherence.simulate("rational", n_contexts=100, rng=0).data.assign(belief=0.5)
    with pytest.warns(DegenerateDataWarning, match=r"column 'belief' is constant \(0.5\); "
                      "conditioning on it conditions on nothing") as caught:
        res = coherence.ci_test(data, n_resamples=99, ci_method=None, rng=0)
    assert res.pvalue < 0.05 and "given the evidence" not in str(caught[0].message)
    assert caught[0].filename == __file__
    with pytest.warns(DegenerateDataWarning, match="on the outcome given the evidence"):
        coherence.ci_test(data.assign(e=data["context"] % 2), evidence=["e"],
                          n_resamples=19, ci_method=None, rng=0)


def test_evidence_is_conditioned_on(rational):
    data = rational.assign(stratum=(rational["context"] % 3).astype(str),
                           age=(rational["context"] % 7).astype(np.float64))
    # strata split the ties, so the design's k grows past the repetitions
    res = coherence.ci_test(data, evidence=["stratum"], n_resamples=19, rng=0)
    assert res.k > 5
    direct = coherence.cmi(data["action"], data["outcome"], data[["belief", "stratum"]],
                           k=res.k, resolution=1e-6)
    assert res.statistic == pytest.approx(direct, rel=1e-12, abs=1e-15)
    assert res.evidence == ("stratum",)
    with pytest.warns(SmallSampleWarning, match="own context"):  # (belief, age) ~ per context
        res2 = coherence.ci_test(data, evidence=["age"], k=3, n_resamples=19, rng=0)
    # continuous evidence enters by its ranks scaled to (0, 1]
    ranked = data.assign(age=rankdata(data["age"]) / len(data))
    direct2 = coherence.cmi(data["action"], data["outcome"], ranked[["belief", "age"]],
                            resolution=1e-6)
    assert res2.statistic == pytest.approx(direct2, rel=1e-12)
    assert res2.null_distribution.shape == (19,)


def test_calibrate_and_context_mean_run(rational):
    with warnings.catch_warnings():
        # fold-wise isotonic fits can split the ties of equal beliefs across folds
        warnings.simplefilter("ignore", SmallSampleWarning)
        cal = coherence.ci_test(rational, calibrate=True, n_resamples=19, rng=0)
    assert cal.calibrate and math.isfinite(cal.statistic)
    noisy = coherence.simulate(Agent.rational(report_noise=0.05), n_contexts=100, rng=0).data
    row = coherence.ci_test(noisy, n_resamples=19, rng=0)
    with pytest.warns(SmallSampleWarning, match="own context"):  # means are per context
        mean = coherence.ci_test(noisy, condition_on="context_mean", k=3, n_resamples=19,
                                 rng=0)
    assert row.permute == "outcomes" and mean.permute == "outcomes"
    # the actions of whole contexts move only when the conditioning is constant in them
    rows = coherence.ci_test(noisy, permute="rows", n_resamples=19, rng=0)
    ctx = coherence.ci_test(noisy, condition_on="context_mean", permute="contexts",
                            n_resamples=19, rng=0)
    assert rows.permute == "rows" and ctx.permute == "contexts"
    with pytest.raises(ValueError, match="The 'permute' parameter of ci_test must be 'rows', "
                                         "'outcomes' or 'auto' when the conditioning values"):
        coherence.ci_test(noisy, permute="contexts", n_resamples=9, rng=0)
    varying = noisy.assign(outcome=np.arange(len(noisy)) % 2)
    with pytest.raises(ValueError, match="'rows', 'contexts' or 'auto' when the outcome varies"):
        coherence.ci_test(varying, permute="outcomes", n_resamples=9, rng=0)
    with pytest.warns(SmallSampleWarning, match="fell back to permuting single rows"):
        assert coherence.ci_test(varying, n_resamples=9, rng=0).permute == "rows"


def test_warns_when_neighbours_are_the_rows_own_context():
    data = coherence.simulate(Agent.rational(grid=0.01), n_contexts=100, rng=0).data
    with pytest.warns(SmallSampleWarning, match="mostly the row's own context"):
        coherence.ci_test(data, k=3, n_resamples=9, rng=0)
    # no warning once k exceeds the repetitions per context, as the default k does
    coherence.ci_test(data, k=6, n_resamples=9, rng=0)
    assert coherence.ci_test(data, n_resamples=9, rng=0).k >= 10


def test_no_group_means_rows_are_contexts(rational):
    res = coherence.ci_test(rational, group=None, n_resamples=19, rng=0)
    assert res.n_contexts == len(rational)


def test_constant_action_warns(rational):
    data = rational.assign(action="yes")
    with pytest.warns(coherence.DegenerateDataWarning, match="constant"):
        coherence.ci_test(data, n_resamples=9, rng=0)



@pytest.mark.parametrize("ci_method", ["debiased", "subsampling"])
def test_interval_without_spread_is_nan_with_a_warning(ci_method):
    # 5 contexts x 1 repetition: half-samples of 2 rows give one estimate, and the interval
    # was a point (here [0.2045, 0.2045] around an estimate of 0.333), without a word
    data = coherence.simulate("rational", n_contexts=5, n_repetitions=1, rng=1).data
    with pytest.warns(SmallSampleWarning, match="resampled estimates .* are all equal"), \
            pytest.warns(coherence.DegenerateDataWarning, match="regression-adjusted"):
        res = coherence.ci_test(data, ci_method=ci_method, n_resamples=99, rng=0)
    assert np.isnan(res.confidence_interval.low) and np.isnan(res.confidence_interval.high)
    assert np.isfinite(res.statistic)


def test_small_studies_use_the_regression_adjusted_statistic():
    # below 40 contexts the plug-in statistic's blocks merge contexts of distant beliefs and
    # its p-value was measured liberal (0.073-0.082 at 15-20 contexts); 'auto' takes the
    # regression-adjusted one there, and an explicit plug-in statistic is warned about
    few = coherence.simulate("rational", n_contexts=30, n_repetitions=3, rng=2).data
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallSampleWarning)
        res = coherence.ci_test(few, n_resamples=19, rng=0)
    assert res.test_statistic == "regression" and np.isfinite(res.pvalue)
    for name in ("plugin", "combined", "knn"):
        with pytest.warns(SmallSampleWarning, match=rf"30 contexts \(< 40\).*'{name}'.*liberal"):
            assert coherence.ci_test(few, n_resamples=19, rng=0,
                                     test_statistic=name).test_statistic == name
    enough = coherence.simulate("rational", n_contexts=40, n_repetitions=3, rng=2).data
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallSampleWarning)
        assert coherence.ci_test(enough, n_resamples=19, rng=0).test_statistic == "plugin"
        coherence.ci_test(enough, n_resamples=19, rng=0, test_statistic="plugin")


def test_regression_statistic_blind_to_every_copy_gives_no_pvalue():
    # 5 contexts, each alone on its belief level: the adjustment's level indicators explain
    # every context's outcome, the statistic is 0 on the data and every copy, and p = 1
    # would read as evidence of coherence; no test exists
    data = pd.DataFrame({"context": np.repeat(np.arange(5), 3),
                         "belief": np.repeat([0.1, 0.3, 0.5, 0.7, 0.9], 3),
                         "action": ["no", "no", "yes", "no", "yes", "yes", "yes", "no", "yes",
                                    "yes", "yes", "yes", "no", "yes", "yes"],
                         "outcome": np.repeat([0, 1, 0, 1, 1], 3)})
    with pytest.warns(coherence.DegenerateDataWarning, match="0 on the data and on every"):
        res = coherence.ci_test(data, n_resamples=49, rng=0, ci_method=None)
    assert res.test_statistic == "regression" and np.isnan(res.pvalue)
    # tied levels leave the statistic something to see: a p-value exists
    data["belief"] = np.repeat([0.1, 0.1, 0.5, 0.5, 0.9], 3)
    res = coherence.ci_test(data, n_resamples=49, rng=0, ci_method=None)
    assert np.isfinite(res.pvalue)


def test_regression_statistic_one_on_every_copy_gives_no_pvalue():
    # 14 contexts of one row, a continuous evidence column: the adjustment has 12 columns
    # and the two action indicators span what it leaves, so the statistic is 1 on the
    # data and on every copy; p = 1 would read as evidence of coherence
    gen = np.random.default_rng(0)
    data = pd.DataFrame({"context": np.arange(14),
                         "belief": np.round(gen.uniform(size=14) / 0.5) * 0.5,
                         "x": gen.normal(size=14), "action": gen.integers(0, 3, 14)})
    data["outcome"] = (gen.uniform(size=14) < 0.3 + 0.4 * data["belief"]).astype(int)
    with pytest.warns(coherence.DegenerateDataWarning, match="1 on the data and on every"):
        res = coherence.ci_test(data, evidence=["x"], n_resamples=49, rng=0, ci_method=None)
    assert res.test_statistic == "regression" and np.isnan(res.pvalue)


def test_trivial_interval_stays_the_point_zero(rational):
    data = rational.assign(action="yes")
    with pytest.warns(DegenerateDataWarning, match="constant"):
        res = coherence.ci_test(data, n_resamples=9, rng=0)
    assert (res.confidence_interval.low, res.confidence_interval.high) == (0.0, 0.0)

# --------------------------------------------------------------------------- validation
@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"method": "exact"}, ValueError,
     "The 'method' parameter of ci_test must be one of 'permutation', 'bootstrap'; got 'exact'"),
    ({"ci_method": "bca"}, ValueError, "The 'ci_method' parameter of ci_test must be one of"),
    ({"condition_on": "mean"}, ValueError, "The 'condition_on' parameter of ci_test must be"),
    ({"permute": "all"}, ValueError, "The 'permute' parameter of ci_test must be one of"),
    ({"test_statistic": "g"}, ValueError,
     "The 'test_statistic' parameter of ci_test must be one of 'auto', 'plugin', "
     "'regression', 'combined', 'knn'"),
    ({"n_resamples": 0}, ValueError, r"The 'n_resamples' parameter of ci_test must be an int "
                                     r">= 1; got 0"),
    ({"confidence_level": 1.0}, ValueError, "The 'confidence_level' parameter of ci_test"),
    ({"k": 0}, ValueError, r"The 'k' parameter of ci_test must be an int in \[1, 999\]; got 0"),
    ({"k_perm": 0}, ValueError, "The 'k_perm' parameter of ci_test must be an int >= 1"),
    ({"calibrate": "yes"}, ValueError, "The 'calibrate' parameter of ci_test must be one of"),
    ({"calibrate": 1.5}, TypeError, "The 'calibrate' parameter of ci_test must be a bool"),
    ({"resolution": -1.0}, ValueError, "The 'resolution' parameter of ci_test must be"),
    ({"evidence": [1]}, TypeError, "The 'evidence' parameter of ci_test must be a sequence"),
    ({"belief": "p"}, ValueError, r"column 'p' \(the 'belief' column\) not found"),
    ({"evidence": ["sex"]}, ValueError, r"column 'sex' \(the 'evidence\[0\]' column\) not"),
    ({"rng": -1}, ValueError, "The 'rng' parameter of ci_test must be a non-negative int"),
    # conditioning on the tested variable gave a statistic of 0 and p = 1 for any agent
    ({"evidence": ["outcome"]}, ValueError, r"'evidence' parameter of ci_test must be columns "
                                            r"other than the belief, action, outcome and group"),
    # the belief as evidence: the same conditioning set on another test path (the combined
    # statistic of continuous evidence: p 0.705 against 0.715); leakage_test refused it
    ({"evidence": ["belief"]}, ValueError, r"'evidence' parameter .* got \['belief'\]"),
    ({"evidence": ["action"]}, ValueError, r"'evidence' parameter .* got \['action'\]"),
    ({"evidence": ["context"]}, ValueError, r"'evidence' parameter .* got \['context'\]"),
    # leakage_test refused a column named twice and ci_test conditioned on it once
    ({"evidence": ["context", "context"]}, ValueError,
     r"'evidence' parameter of ci_test must be columns named once each \(named twice: "
     r"context\)"),
])
def test_parameter_validation(rational, kwargs, error, message):
    with pytest.raises(error, match=message):
        coherence.ci_test(rational, **kwargs)


def test_data_validation(rational):
    bad = rational.copy()
    bad.loc[4, "belief"] = 1.2
    with pytest.raises(ValueError, match=r"Column 'belief' \(input to ci_test\) must hold "
                                         r"probabilities in \[0, 1\]; 1 offending row "
                                         r"\(first: row 4 = 1.2\)"):
        coherence.ci_test(bad)
    three = rational.assign(outcome=rational["context"] % 3)
    with pytest.raises(ValueError, match="The 'calibrate' parameter of ci_test must be False "
                                         "when the outcome has more than two classes"):
        coherence.ci_test(three, calibrate=True)
    with pytest.raises(TypeError, match="The 'data' parameter of ci_test must be a pandas"):
        coherence.ci_test(3)
    with pytest.raises(ValueError, match="at least 3 rows"):
        coherence.ci_test(rational.iloc[:2])


# --------------------------------------------------------------------------- size and power
def _rejections(agent: Agent, reps: int, **options) -> int:
    hits = 0
    for seed in range(reps):
        data = coherence.simulate(agent, n_contexts=200, rng=1000 + seed).data
        with warnings.catch_warnings():
            # continuous beliefs: the estimate is biased towards 0, the p-value is valid
            warnings.simplefilter("ignore", SmallSampleWarning)
            options.setdefault("ci_method", "subsampling")  # the p-value does not use it
            hits += coherence.ci_test(data, n_resamples=99, rng=seed, **options).pvalue <= 0.05
    return hits


@pytest.mark.slow  # a statistical matrix (or a long equivalence check): make test-slow
def test_size_on_the_rational_agent_fast():
    # 30 null studies: P(Binomial(30, 0.05) >= 6) = 0.008
    assert _rejections(Agent.rational(), 30) <= 5


def test_power_on_a_leaky_agent_fast():
    assert _rejections(Agent.leaky(strength=0.5), 10) >= 9


@pytest.mark.slow
def test_size_rows_and_continuous_beliefs():
    # rows as units and continuous beliefs (local, approximate blocks): 60 studies each,
    # P(Binomial(60, 0.05) >= 8) = 0.03
    assert _rejections(Agent.rational(), 60, permute="rows") <= 7
    assert _rejections(Agent.rational(grid=None), 60) <= 7


@pytest.mark.slow
def test_pvalues_uniform_under_the_null():
    from scipy import stats

    pvals = []
    for seed in range(80):
        data = coherence.simulate("rational", n_contexts=100, rng=2000 + seed).data
        pvals.append(coherence.ci_test(data, n_resamples=99, rng=seed).pvalue)
    assert stats.kstest(pvals, "uniform").pvalue > 0.01


# --------------------------------------------------------------------------- kernels
def _prepared(data: pd.DataFrame):
    from coherence._decision._cmi import Prepared

    n = len(data)
    empty = np.empty((n, 0))
    return Prepared(
        n=n, cont={"x": empty, "y": empty,
                   "z": np.round(data["belief"].to_numpy() / 1e-6)[:, None]},
        disc={"x": data["action"].cat.codes.to_numpy().astype(np.int64),
              "y": data["outcome"].to_numpy().astype(np.int64),
              "z": np.zeros(n, dtype=np.int64)})


def test_resample_kernel_equals_direct_estimates_with_duplicates(rational):
    from coherence._decision._citest_knn import estimates_on
    from coherence._decision._cmi import Prepared
    from coherence._decision._cmi import estimate
    from coherence._resampling import cluster_resample_rows

    prep = _prepared(rational)
    groups = rational["context"].to_numpy()
    gen = np.random.default_rng(0)
    draws = [gen.integers(0, 200, size=200) for _ in range(3)] + [np.arange(100)]
    rows, offsets = cluster_resample_rows(groups, draws)
    fast = estimates_on(prep, 3, rows, offsets)
    for b in range(len(draws)):
        idx = rows[offsets[b]:offsets[b + 1]]
        assert len(idx) == 5 * len(draws[b])
        assert np.all(np.isin(groups[idx], draws[b]))
        sub = Prepared(n=len(idx), cont={r: v[idx] for r, v in prep.cont.items()},
                        disc={r: v[idx] for r, v in prep.disc.items()})
        assert fast[b] == pytest.approx(estimate(sub, 3), rel=1e-12, abs=1e-14)


def test_permutation_kernel_without_exchangeable_units_returns_the_statistic(rational):
    from coherence._decision._citest_knn import permutation_null
    from coherence._decision._cmi import estimate

    prep = _prepared(rational)
    n = len(rational)
    units = np.arange(n, dtype=np.int64)
    blocks = (np.arange(n + 1, dtype=np.int64), units, np.arange(n + 1, dtype=np.int64), units)
    null = permutation_null(prep, 3, blocks, np.arange(4, dtype=np.int64))
    assert np.allclose(null, estimate(prep, 3), rtol=1e-12, atol=1e-14)


def test_permutations_keep_the_action_counts_of_each_belief(rational):
    # a statistic of the permuted data that must not move: I(action ; belief)
    from coherence._decision._citest_knn import permutation_null

    prep = _prepared(rational)
    y_is_belief = type(prep)(n=prep.n, cont={"x": prep.cont["x"], "y": prep.cont["z"],
                                             "z": np.empty((prep.n, 0))},
                             disc={"x": prep.disc["x"], "y": prep.disc["z"],
                                   "z": prep.disc["z"]})
    cond = np.column_stack([np.zeros(prep.n), prep.cont["z"][:, 0]])
    # blocks of exact ties only (k_perm = 1): the belief-action table is invariant
    blocks = units_and_blocks(cond, rational["context"].to_numpy(), True, 1)
    null = permutation_null(y_is_belief, 3, blocks, np.arange(8, dtype=np.int64))
    assert np.ptp(null) < 1e-12


@pytest.mark.parametrize("use_contexts", [False, True])
def test_permutation_null_with_two_continuous_coordinates(rational, use_contexts):
    """Two continuous conditioning coordinates (the belief and a continuous evidence
    column) take the kNN null's Python path: each copy is the estimate with the actions
    of whole units (rows, or contexts in their rows' order) exchanged within their
    blocks, by numpy's generator seeded per copy. Reference: the exchange written unit by
    unit here; each block keeps its actions, and the copies move."""
    from coherence._decision._citest_knn import permutation_null
    from coherence._decision._cmi import Prepared
    from coherence._decision._cmi import estimate

    prep = _prepared(rational)
    groups = pd.factorize(rational["context"])[0].astype(np.int64)
    gen = np.random.default_rng(11)
    extra = (gen.normal(size=groups.max() + 1)[groups] if use_contexts
             else gen.normal(size=prep.n))
    two = Prepared(n=prep.n, cont=dict(prep.cont, z=np.column_stack([prep.cont["z"], extra])),
                   disc=prep.disc)
    assert two.n_continuous == 2
    blocks = units_and_blocks(np.column_stack([np.zeros(prep.n), two.cont["z"]]), groups,
                              use_contexts, 4)
    unit_start, unit_rows, block_start, block_units = blocks
    seeds = np.arange(5, dtype=np.int64)
    null = permutation_null(two, 3, blocks, seeds)
    action = two.disc["x"]
    for b, seed in enumerate(seeds):
        draw = np.random.default_rng(int(seed))
        moved = action.copy()
        for j in range(len(block_start) - 1):
            units = block_units[block_start[j]:block_start[j + 1]]
            givers = units[draw.permutation(len(units))]
            for taker, giver in zip(units, givers, strict=True):
                moved[unit_rows[unit_start[taker]:unit_start[taker + 1]]] = \
                    action[unit_rows[unit_start[giver]:unit_start[giver + 1]]]
            rows = np.concatenate([unit_rows[unit_start[u]:unit_start[u + 1]] for u in units])
            assert np.array_equal(np.sort(moved[rows]), np.sort(action[rows]))
        direct = estimate(Prepared(n=two.n, cont=two.cont, disc=dict(two.disc, x=moved)), 3)
        assert null[b] == pytest.approx(direct, rel=1e-12, abs=1e-14)
    assert np.ptp(null) > 0


# --------------------------------------------------------------------------- outcome permutation
def _outcome_design(data: pd.DataFrame):
    from coherence._decision._permutation import block_layout
    from coherence._decision._permutation import outcome_units

    prep = _prepared(data)
    groups = pd.factorize(data["context"])[0].astype(np.int64)
    y_unit, unit_cond = outcome_units(prep.disc["y"], data["belief"].to_numpy(),
                                       prep.cont["z"], prep.disc["z"], groups)
    blocks = block_layout(unit_cond, np.ones(len(y_unit), np.int64), 5)
    return prep, groups, y_unit, blocks


@functools.cache
def _block_shuffle_kernel():
    """Compiled once (a function defined per call is compiled per call)."""
    from numba import njit

    from coherence._decision._kernels_cmi import _shuffle_blocks

    @njit
    def run(seed, block_start, block_units):
        np.random.seed(seed)  # noqa: NPY002
        out = np.empty(block_units.shape[0], np.int64)
        _shuffle_blocks(block_start, block_units, out)
        return out

    return run


def _numba_block_shuffle(seed, block_start, block_units):
    """The kernel's shuffle for one seed (numba's generator), as a plain array."""
    return _block_shuffle_kernel()(seed, block_start, block_units)


def test_outcome_permutation_kernel_equals_estimates_on_the_permuted_outcomes(rational):
    from coherence._decision._citest_knn import outcome_null
    from coherence._decision._cmi import Prepared
    from coherence._decision._cmi import estimate

    prep, groups, y_unit, (block_start, block_units) = _outcome_design(rational)
    seeds = np.arange(5, dtype=np.int64)
    fast = outcome_null(prep, 3, y_unit, groups, block_start, block_units, seeds)
    for b, seed in enumerate(seeds):
        shuffled = _numba_block_shuffle(int(seed), block_start, block_units)
        source = np.arange(len(y_unit))
        source[block_units] = shuffled
        y_perm = y_unit[source[groups]]
        # every context keeps one outcome, and each block keeps its outcomes
        assert np.array_equal(np.sort(y_unit[shuffled]), np.sort(y_unit[block_units]))
        direct = estimate(Prepared(n=prep.n, cont=prep.cont, disc=dict(prep.disc, y=y_perm)), 3)
        assert fast[b] == pytest.approx(direct, rel=1e-12, abs=1e-14)


def test_outcome_blocks_hold_contexts_of_one_belief_on_a_grid(rational):
    _, _, _, (block_start, block_units) = _outcome_design(rational)
    belief = rational.groupby("context", sort=True)["belief"].first().to_numpy()
    for j in range(len(block_start) - 1):
        units = block_units[block_start[j]:block_start[j + 1]]
        assert len(units) >= 2
        # beliefs are constant within contexts and on a 0.05 grid: blocks are exact ties
        # unless a tie group is smaller than k_perm
        assert np.ptp(belief[units]) <= 0.05 + 1e-12 or len(units) >= 5


def test_context_effects_recover_additive_evidence_effects():
    from coherence._decision._permutation import context_effects

    rng = np.random.default_rng(0)
    groups = np.repeat(np.arange(30), 4)
    ev = rng.integers(0, 5, size=groups.size)
    alpha = rng.normal(0, 1, size=30)
    beta = np.array([-0.6, -0.1, 0.0, 0.3, 0.4])
    belief = 1 / (1 + np.exp(-(alpha[groups] + beta[ev])))
    est = context_effects(belief, ev, groups, n_iter=500)
    # identified up to the centring of the evidence effects
    assert np.allclose(est - est.mean(), alpha - alpha.mean(), atol=1e-6)


def test_auto_k_follows_the_design():
    from coherence._decision._citest import _auto_k

    groups = np.repeat(np.arange(200), 5)
    grid = np.repeat(np.round(np.linspace(0, 1, 21), 2)[np.arange(200) % 21], 5)
    cont = np.repeat(np.linspace(0, 1, 200), 5)
    zeros = np.zeros(1000)
    # beliefs shared by many contexts: the paper's k
    assert _auto_k(np.column_stack([zeros, grid]), groups) == 3
    # every belief value is one context's: k grows past the repetitions
    k = _auto_k(np.column_stack([zeros, cont]), groups)
    assert k >= 10 and k == max(10, round(0.6 * np.sqrt(1000)))
    # one row per context
    assert _auto_k(np.column_stack([np.zeros(200), np.linspace(0, 1, 200)]),
                   np.arange(200)) == 3


@pytest.mark.parametrize("permute", ["outcomes", "contexts", "rows"])
def test_blocks_of_like_units_give_no_pvalue(permute, paired_leak):
    # every permutation leaves the data as they are: p = 1 read as coherence (a perfect
    # leak), it is NaN with a warning
    data = paired_leak
    with pytest.warns(DegenerateDataWarning, match="no permutation changes the data"):
        res = coherence.ci_test(data, permute=permute, n_resamples=49, rng=0, ci_method=None)
    assert math.isnan(res.pvalue) and res.statistic > 0
    # a pair that differs in its outcome and its actions gives the permutation a move
    flip = data["context"] == 1
    data.loc[flip, "outcome"] = 1
    data.loc[flip, "action"] = "yes"
    with warnings.catch_warnings(record=True) as seen:
        warnings.simplefilter("always")
        coherence.ci_test(data, permute=permute, n_resamples=49, rng=0, ci_method=None)
    assert not any("no permutation changes" in str(w.message) for w in seen)


def test_no_valid_test_gives_nan_and_a_warning(rational):
    data = rational.assign(patient=rational["context"].astype(str))
    with (pytest.warns(DegenerateDataWarning, match="no valid permutation test"),
          pytest.warns(SmallSampleWarning, match="resampled estimates .* are all equal")):
        res = coherence.ci_test(data, evidence=["patient"], n_resamples=19, rng=0)
    assert math.isnan(res.pvalue) and math.isnan(res.confidence_interval.low)
    ids = rational.assign(row_id=np.arange(len(rational)))
    with pytest.warns(DegenerateDataWarning, match="no valid permutation test"):
        res = coherence.ci_test(ids, evidence=["row_id"], n_resamples=19, rng=0)
    assert math.isnan(res.pvalue) and math.isnan(res.statistic)


def test_paper_settings_stay_one_argument_away(rational):
    paper = coherence.ci_test(rational, k=3, ci_method="subsampling", n_resamples=49, rng=0)
    assert paper.k == 3 and paper.ci_method == "subsampling"
    assert paper.statistic == pytest.approx(
        coherence.cmi(rational["action"], rational["outcome"], rational["belief"], k=3,
                      resolution=1e-6), rel=1e-12, abs=1e-15)


# --------------------------------------------------------------------------- fast validation
def _independent_rejections(design, reps: int, seed0: int) -> tuple[int, int]:
    from benchmarks.citest_designs import generate

    hits = valid = 0
    for s in range(reps):
        data = generate(design, seed0 + s)
        evidence = ["evidence"] if "evidence" in data else []
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            # the p-value does not depend on ci_method (its permutations are drawn
            # first); the plain subsampling interval keeps the suite fast
            p = coherence.ci_test(data, evidence=evidence, n_resamples=99, rng=s,
                                  ci_method="subsampling").pvalue
        valid += math.isfinite(p)
        hits += p <= 0.05
    return hits, valid


@pytest.mark.slow  # a statistical matrix (or a long equivalence check): make test-slow
def test_size_on_independent_realistic_nulls_fast():
    # designs on which the earlier default failed (sizes 0.21-0.42 and 0.000); 40 studies
    # each: P(Binomial(40, 0.05) >= 7) = 0.005, and over the 160 studies together
    # P(Binomial(160, 0.05) <= 1) = 0.002 catches a test that never rejects
    from benchmarks.citest_designs import Design

    designs = [
        Design(n_contexts=100, shock_sd=1.0, belief_sd=0.05),
        Design(n_contexts=100, repetitions=(1, 10)),
        Design(n_contexts=40, repetitions=3, evidence_levels=10, evidence_within=True),
        Design(n_contexts=100, grid=None),
    ]
    total = 0
    for i, design in enumerate(designs):
        hits, valid = _independent_rejections(design, 40, 50_000 + 1000 * i)
        assert valid == 40
        assert hits <= 6, (design, hits)
        total += hits
    assert total >= 2


@pytest.mark.slow  # a statistical matrix (or a long equivalence check): make test-slow
def test_power_and_coverage_on_continuous_beliefs_fast():
    # continuous beliefs, constant within a context: the paper's k = 3 finds only the
    # row's own repetitions (power 0.00 at CMI 0.09); the default k reaches other contexts
    from benchmarks.citest_designs import Design
    from benchmarks.citest_designs import exact_cmi
    from benchmarks.citest_designs import generate
    from benchmarks.citest_designs import leak_for

    base = Design(grid=None)
    design = base.with_(leak=leak_for(base, 0.09))
    truth = exact_cmi(design)
    hits = covered = 0
    for s in range(12):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = coherence.ci_test(generate(design, 60_000 + s), n_resamples=99, rng=s)
        hits += res.pvalue <= 0.05
        ci = res.confidence_interval
        covered += ci.low <= truth <= ci.high
    assert hits >= 11
    assert covered >= 9  # P(Binomial(12, 0.95) <= 8) = 0.002


# --------------------------------------------------------------------------- issue 17
@pytest.fixture(scope="module")
def alone() -> pd.DataFrame:
    """Every row alone in its evidence stratum: the kNN estimate is undefined."""
    rng = np.random.default_rng(3)
    n = 30
    return pd.DataFrame({"context": np.arange(n), "belief": rng.uniform(size=n),
                         "action": rng.choice(["yes", "no"], n),
                         "outcome": rng.integers(0, 2, n), "stratum": np.arange(n)})


@pytest.mark.parametrize("kw", [{}, {"ci_method": "bootstrap"}, {"ci_method": "subsampling"},
                                {"permute": "rows"}, {"method": "bootstrap"}])
def test_undefined_statistic_never_gets_a_number(alone, kw):
    # the bootstrap resamples duplicate rows, which gives every row a neighbour: their
    # estimates exist (0) where the data's does not; the interval used to be (0, 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", NotCalibratedWarning)
        with pytest.warns(DegenerateDataWarning, match="undefined|no valid permutation"):
            res = coherence.ci_test(alone, evidence=["stratum"], n_resamples=19, rng=0, **kw)
    assert math.isnan(res.statistic)
    assert math.isnan(res.pvalue)
    assert math.isnan(res.confidence_interval.low) and math.isnan(res.confidence_interval.high)


def test_report_does_not_shade_an_undefined_test(alone):
    rep = coherence.report(alone, evidence=["stratum"], tests=["ci_evidence"],
                           n_resamples=19, progress=False, rng=0)
    row = rep.to_frame().iloc[0]
    assert row["test"] == "ci_evidence" and math.isnan(row["pvalue"])
    assert 'class="low"' not in rep.to_html()


@pytest.mark.parametrize("role", ["outcome", "action"])
def test_continuous_action_or_outcome_refused(rational, role):
    data = rational.assign(**{role: np.linspace(0.01, 0.99, len(rational))})
    with pytest.raises(ValueError, match=rf"Column '{role}' \(input to ci_test\) must hold "
                       r"class labels .*continuous column; \d+ offending rows"):
        coherence.ci_test(data, n_resamples=9, rng=0)
    # integer-valued floats are labels (0.0/1.0 read back from a CSV)
    ok = rational.assign(outcome=rational["outcome"].astype(float))
    coherence.ci_test(ok, n_resamples=9, rng=0)


def test_in_sample_calibration_is_the_papers_variant(rational):
    # issue 15: the paper's isotonic calibration is fitted in sample; ours cross-fits
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cross = coherence.ci_test(rational, calibrate=True, n_resamples=19, rng=0)
        inside = coherence.ci_test(rational, calibrate="in-sample", n_resamples=19, rng=0)
    assert cross.calibrate == "cross-fitted" and inside.calibrate == "in-sample"
    assert inside.to_frame()["calibrate"].iloc[0] == "in-sample"
    assert math.isfinite(inside.statistic) and inside.statistic != cross.statistic


def test_category_order_does_not_change_the_result():
    """The same data with the categories of the action, outcome and evidence columns in
    another order give the same statistic, p-value and interval (the codes follow the
    sorted labels, not the categories' order)."""

    data = coherence.simulate("rational", n_contexts=60, rng=3).data
    data = data.assign(topic=np.where(data["context"] % 3 == 0, "b", "a"))
    labels = sorted(data["action"].astype(str).unique())

    def as_categories(action_order, outcome_order, topic_order):
        return data.assign(
            action=pd.Categorical(data["action"].astype(str), categories=action_order),
            outcome=pd.Categorical(data["outcome"], categories=outcome_order),
            topic=pd.Categorical(data["topic"], categories=topic_order))

    results = [coherence.ci_test(frame, evidence=["topic"], n_resamples=49, rng=0) for frame in (
        as_categories(labels, [0, 1], ["a", "b"]),
        as_categories(labels[::-1], [1, 0], ["b", "a"]),
        as_categories(labels[1:] + labels[:1], [1, 0], ["a", "b"]))]
    first = results[0]
    for res in results[1:]:
        assert res.statistic == first.statistic and res.pvalue == first.pvalue
        assert tuple(res.confidence_interval) == tuple(first.confidence_interval)


@pytest.mark.parametrize("evidence", [False, True])
def test_simulated_estimates_kernel_is_the_estimate_on_each_study(evidence):
    """The bias bootstrap's estimates, in one kernel call, are estimate() on each
    simulated study (actions and outcomes redrawn, conditioning kept)."""
    from coherence._decision._citest_knn import simulated_estimates
    from coherence._decision._cmi import Prepared
    from coherence._decision._cmi import estimate

    gen = np.random.default_rng(4)
    n = 300
    z = np.round(gen.uniform(0, 1, n) * 20)[:, None]
    ev = gen.integers(0, 3, n) if evidence else np.zeros(n, dtype=np.int64)
    prep = Prepared(n=n, cont={"x": np.empty((n, 0)), "y": np.empty((n, 0)), "z": z},
                    disc={"x": gen.integers(0, 3, n), "y": gen.integers(0, 2, n), "z": ev})
    a_sims = gen.integers(0, 3, (12, n))
    y_sims = gen.integers(0, 2, (12, n))
    a_sims[0] = 0  # a constant action in one study
    fast = simulated_estimates(prep, 3, a_sims, y_sims)
    slow = [estimate(Prepared(n=n, cont=prep.cont, disc=dict(prep.disc, x=a, y=y)), 3)
            for a, y in zip(a_sims, y_sims, strict=True)]
    np.testing.assert_allclose(fast, slow, rtol=0, atol=1e-13)


def test_ci_method_none_draws_no_interval(rational):
    """ci_method=None: the same estimate and p-value (drawn before the interval), NaN
    bounds and no half-sample draws."""
    full = coherence.ci_test(rational, n_resamples=49, rng=3)
    bare = coherence.ci_test(rational, n_resamples=49, ci_method=None, rng=3)
    assert bare.statistic == full.statistic and bare.pvalue == full.pvalue
    assert np.array_equal(bare.null_distribution, full.null_distribution)
    assert np.isnan(bare.confidence_interval.low) and np.isnan(bare.confidence_interval.high)
    assert bare.resample_distribution.size == 0 and bare.ci_method is None
    assert full.resample_distribution.size == 49
    with pytest.raises(ValueError, match="ci_method"):
        coherence.ci_test(rational, ci_method="none")


def _per_row_outcomes(seed: int, n_contexts: int = 60, reps: int = 4) -> pd.DataFrame:
    """Outcome and evidence drawn per row (the actions are what ci_test permutes)."""
    gen = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n_contexts), reps)
    e = gen.normal(size=groups.size)
    base = gen.normal(size=n_contexts)[groups]
    y = (gen.random(groups.size) < 1 / (1 + np.exp(-(base + e)))).astype(int)
    p = 1 / (1 + np.exp(-(base + gen.normal(0, 0.3, groups.size))))
    u = 2 * (p - 0.5) + e + 1.5 * (y - 0.5) + gen.logistic(0, 0.5, groups.size)
    return pd.DataFrame({"context": groups, "belief": p, "outcome": y, "evidence": e,
                         "action": np.where(u > 0.5, 2, np.where(u > -0.5, 1, 0))})


@pytest.mark.parametrize("per_row", [True, False])
def test_the_bias_model_draws_outcomes_as_the_data_vary(
        per_row: bool, monkeypatch: pytest.MonkeyPatch) -> None:
    """Where the outcome varies within a context the debiased interval's parametric
    bootstrap draws one outcome per row (it drew one per context, and the interval lay
    below a known CMI in 8.8% of studies); where it is constant, one per context."""
    import coherence._decision._citest as citest_module
    import coherence._decision._citest_knn as knn_module

    data = _per_row_outcomes(3)
    if not per_row:  # the context's first outcome for all its rows
        data["outcome"] = data.groupby("context")["outcome"].transform("first")
    seen: list[np.ndarray] = []
    simulated = knn_module.simulated_estimates

    def spy(prep, k, a_sims, y_sims):
        seen.append(y_sims)
        return simulated(prep, k, a_sims, y_sims)

    monkeypatch.setattr(knn_module, "simulated_estimates", spy)
    flags: list[bool] = []
    model_bias = citest_module.model_bias

    def flag_spy(*args):
        flags.append(args[7])  # outcome_per_row
        return model_bias(*args)

    monkeypatch.setattr(citest_module, "model_bias", flag_spy)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = coherence.ci_test(data, evidence=["evidence"], n_resamples=99, rng=0)
    assert res.permute == ("rows" if per_row else "outcomes")
    assert any("fell back to permuting single rows" in str(w.message)
               for w in caught) == per_row
    assert flags == [per_row] and len(seen) == 1
    groups = data["context"].to_numpy()
    varies = [np.ptp(sim[groups == g]) > 0 for sim in seen[0][:20] for g in range(60)]
    assert any(varies) == per_row
    assert np.isfinite(res.confidence_interval.low)


def test_a_resolution_that_pools_distinct_beliefs_is_refused():
    # before: resolution=2 (two decimals, as meant) snapped every belief to 0 and a
    # rational agent was rejected (p = 0.005); resolution=0.5 or 1 likewise
    data = coherence.simulate("rational", n_contexts=100, rng=3).data
    kwargs = {"n_resamples": 99, "rng": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        fine = coherence.ci_test(data, **kwargs)
        grid = coherence.ci_test(data, resolution=0.05, **kwargs)  # the beliefs' own grid
        assert (grid.statistic, grid.pvalue) == (fine.statistic, fine.pvalue)
        for resolution in (2, 1, 0.5, 0.1):
            with pytest.raises(ValueError, match=r"'resolution' parameter .* merged"):
                coherence.ci_test(data, **kwargs, resolution=resolution)
        age = data.assign(age=data["truth"] * 60.0)  # continuous evidence: its ranks
        with pytest.raises(ValueError, match="continuous evidence rank values"):
            coherence.ci_test(age, evidence=["age"], resolution=0.05, **kwargs)
