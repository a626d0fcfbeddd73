"""Tests of the law-of-iterated-expectation check (coherence._probability._lie)."""

from __future__ import annotations

import itertools
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from scipy import stats

from coherence import LIE_COLUMNS
from coherence import DegenerateDataWarning
from coherence import IteratedExpectationResult
from coherence import SmallSampleWarning
from coherence import iterated_expectation_check
from coherence import random_forest_baseline
from coherence._resampling import expanded_level

X1, X2, Z1, Z2 = 3, 2, 3, 2  # states of two evidence variables and two auxiliary ones
#: Small forests so the fitted-baseline tests stay fast on a shared machine.
FAST = {"n_estimators": 25, "min_samples_leaf": (5, 20), "n_splits": 3}


def random_joint(rng: np.random.Generator) -> np.ndarray:
    """P(x1, x2, z1, z2, y) as an array of shape (3, 2, 3, 2, 2)."""
    return rng.dirichlet(np.full(X1 * X2 * Z1 * Z2 * 2, 0.7)).reshape(X1, X2, Z1, Z2, 2)


def exact_table(joint: np.ndarray) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Exact LIE quantities for every context (x1, x2) and both auxiliary variables."""
    rows, ctx = [], []
    for x1, x2 in itertools.product(range(X1), range(X2)):
        cid = f"{x1}-{x2}"
        ctx.append({"context": cid, "x1": x1, "x2": f"level{x2}"})
        p = joint[x1, x2]  # (z1, z2, y)
        p_x = p.sum()
        p_y = p[..., 1].sum() / p_x
        for name, axis in (("z1", 1), ("z2", 0)):
            pzy = p.sum(axis=axis)  # (z, y)
            for s in range(pzy.shape[0]):
                rows.append({"context": cid, "variable": name, "state": s, "p_y_given_x": p_y,
                             "p_y_given_xz": pzy[s, 1] / pzy[s].sum(),
                             "p_z_given_x": pzy[s].sum() / p_x})
    return pd.DataFrame(rows), pd.DataFrame(ctx)


def sample(joint: np.ndarray, n: int, rng: np.random.Generator) -> pd.DataFrame:
    flat = rng.choice(joint.size, size=n, p=joint.ravel())
    x1, x2, z1, z2, y = np.unravel_index(flat, joint.shape)
    return pd.DataFrame({"x1": x1, "x2": [f"level{v}" for v in x2], "z1": z1, "z2": z2, "y": y})


@pytest.fixture(scope="module")
def world():
    rng = np.random.default_rng(11)
    joint = random_joint(rng)
    table, contexts = exact_table(joint)
    return joint, table, contexts


def test_exact_identity_against_a_noisy_baseline(world):
    _, table, _ = world
    base = table.assign(p_y_given_x=np.clip(table["p_y_given_x"] + 0.03, 0, 1))
    res = iterated_expectation_check(table, baseline=base, rng=0, n_resamples=200)
    assert isinstance(res, IteratedExpectationResult)
    np.testing.assert_allclose(res.table["agent_error"], 0.0, atol=1e-12)
    np.testing.assert_allclose(res.table["baseline_error"], 0.03, atol=1e-12)
    np.testing.assert_allclose(res.table["agent_z_mass"], 1.0)
    assert res.statistic == pytest.approx(0.0, abs=1e-9)
    assert res.n_obs == 12 and res.n_contexts == 6 and res.baseline == "table"


def test_hand_computed_ratio(world):
    _, table, _ = world
    shifted = table.copy()
    shifted["p_y_given_x"] = np.clip(table["p_y_given_x"] - 0.1, 0, 1)
    base = table.assign(p_y_given_x=np.clip(table["p_y_given_x"] + 0.02, 0, 1))
    res = iterated_expectation_check(shifted, baseline=base, rng=0, n_resamples=500)
    expected = (table["p_y_given_x"] - shifted["p_y_given_x"]).groupby(
        [table["context"], table["variable"]]).first()
    got = res.table.set_index(["context", "variable"])["agent_error"]
    np.testing.assert_allclose(got.loc[expected.index].to_numpy(), expected.to_numpy(),
                               atol=1e-12)
    assert res.statistic == pytest.approx(np.median(res.table["ratio"]))
    assert res.confidence_interval.low <= res.statistic <= res.confidence_interval.high


def test_random_forest_baseline_path(world):
    joint, table, contexts = world
    gt = sample(joint, 1500, np.random.default_rng(1))
    res = iterated_expectation_check(table, ground_truth=gt, contexts=contexts,
                                     evidence=["x1", "x2"], rng=0, n_resamples=200,
                                     baseline_options=FAST)
    assert res.baseline == "random_forest"
    assert (res.table["baseline_error"] > 0).all()
    assert res.statistic == pytest.approx(0.0, abs=1e-9)
    # an incoherent agent (P(y|x) off by 0.15) is far less coherent than the forest
    bad = table.assign(p_y_given_x=np.clip(table["p_y_given_x"] + 0.15, 0, 1))
    res_bad = iterated_expectation_check(bad, ground_truth=gt, contexts=contexts,
                                         evidence=["x1", "x2"], rng=0, n_resamples=200,
                                     baseline_options=FAST)
    assert res_bad.statistic > 1.0
    assert res_bad.median_agent_error > res_bad.median_baseline_error


def test_random_forest_baseline_is_close_to_truth(world):
    joint, table, contexts = world
    gt = sample(joint, 3000, np.random.default_rng(2))
    base = random_forest_baseline(gt, contexts, table, evidence=["x1", "x2"], rng=0, **FAST)
    assert base.columns.tolist() == list(LIE_COLUMNS)
    assert len(base) == len(table)
    err = np.abs(base["p_y_given_x"].to_numpy() - table["p_y_given_x"].to_numpy())
    assert np.median(err) < 0.1


def test_random_forest_baseline_is_the_same_on_parallel_workers(world):
    # docs/axioms.md: inside joblib.parallel_config(n_jobs=k) the grid searches' fits run on k
    # workers (each forest serial, its own seed): the same baseline, value for value
    import joblib

    joint, table, contexts = world
    gt = sample(joint, 1500, np.random.default_rng(2))
    serial = random_forest_baseline(gt, contexts, table, evidence=["x1", "x2"], rng=0, **FAST)
    with joblib.parallel_config(backend="threading", n_jobs=2):
        parallel = random_forest_baseline(gt, contexts, table, evidence=["x1", "x2"], rng=0,
                                          **FAST)
    pd.testing.assert_frame_equal(parallel, serial, check_exact=True)


def test_user_estimator(world):
    from sklearn.linear_model import LogisticRegression

    joint, table, contexts = world
    gt = sample(joint, 800, np.random.default_rng(3))
    res = iterated_expectation_check(table, ground_truth=gt, contexts=contexts,
                                     evidence=["x1", "x2"], estimator=LogisticRegression(),
                                     rng=0, n_resamples=100)
    assert res.baseline == "estimator"
    assert np.isfinite(res.table["baseline_error"]).all()


def test_normalize(world):
    _, table, _ = world
    scaled = table.assign(p_z_given_x=table["p_z_given_x"] * 0.8)
    base = table.assign(p_y_given_x=np.clip(table["p_y_given_x"] + 0.03, 0, 1))
    raw = iterated_expectation_check(scaled, baseline=base, rng=0, n_resamples=50)
    norm = iterated_expectation_check(scaled, baseline=base, normalize=True, rng=0,
                                      n_resamples=50)
    assert (raw.table["agent_error"] > 0).all()
    np.testing.assert_allclose(norm.table["agent_error"], 0.0, atol=1e-12)
    np.testing.assert_allclose(raw.table["agent_z_mass"], 0.8)


def test_zero_baseline_error_warns(world):
    _, table, _ = world
    # the agent is exact too: no context's errors differ, so the p-value is NaN, and said
    with pytest.warns(DegenerateDataWarning, match="errors are equal"), pytest.warns(
            DegenerateDataWarning, match=r"baseline error is 0 \(below 1e-12\) for 12 unit"):
        res = iterated_expectation_check(table, baseline=table, rng=0, n_resamples=20)
    assert np.isnan(res.statistic) and np.isnan(res.pvalue)
    assert res.n_undefined == 20  # every resample: counted, not warned of again




@given(st.integers(0, 10_000))
def test_property_exact_and_relabel(seed):
    """Exact beliefs have error 0; relabelling y (p -> 1 - p) keeps every error."""
    joint = random_joint(np.random.default_rng(seed))
    table, _ = exact_table(joint)
    base = table.assign(p_y_given_x=np.clip(table["p_y_given_x"] + 0.03, 0, 1))
    bad = table.assign(p_y_given_xz=table["p_y_given_xz"] * 0.9)
    res = iterated_expectation_check(bad, baseline=base, rng=0, n_resamples=20)
    flipped = bad.assign(p_y_given_x=1 - bad["p_y_given_x"],
                         p_y_given_xz=1 - bad["p_y_given_xz"])
    base_flipped = base.assign(p_y_given_x=1 - base["p_y_given_x"],
                               p_y_given_xz=1 - base["p_y_given_xz"])
    res2 = iterated_expectation_check(flipped, baseline=base_flipped, rng=0, n_resamples=20)
    np.testing.assert_allclose(res.table["agent_error"], res2.table["agent_error"], atol=1e-12)
    exact = iterated_expectation_check(table, baseline=base, rng=0, n_resamples=20)
    assert exact.table["agent_error"].max() < 1e-12


# --------------------------------------------------------------------------- validation
def test_validation_messages(world):
    _, table, _ = world
    base = table.assign(p_y_given_x=np.clip(table["p_y_given_x"] + 0.03, 0, 1))
    with pytest.raises(ValueError, match="iterated_expectation_check, in 'elicited': column "
                       "'p_z_given_x'"):
        iterated_expectation_check(table.drop(columns="p_z_given_x"), baseline=base)
    bad = table.copy()
    bad.loc[3, "p_y_given_xz"] = 1.3
    with pytest.raises(ValueError, match=r"Column 'p_y_given_xz' .* must hold probabilities "
                       r"in \[0, 1\]; 1 offending row \(first: row 3 = 1.3\)"):
        iterated_expectation_check(bad, baseline=base)
    bad = table.copy()
    bad.loc[0, "p_y_given_x"] = 0.01
    with pytest.raises(ValueError, match=r"Column 'p_y_given_x' .* must be constant within "
                       r"each context"):
        iterated_expectation_check(bad, baseline=base)
    bad = pd.concat([table, table.iloc[[0]]], ignore_index=True)
    with pytest.raises(ValueError, match=r"Column 'state' .* must be unique within each"):
        iterated_expectation_check(bad, baseline=base)
    bad = table.copy()
    bad.loc[2, "context"] = None
    with pytest.raises(ValueError, match=r"Column 'context' .* must not contain missing"):
        iterated_expectation_check(bad, baseline=base)
    with pytest.raises(ValueError, match="the baseline has no rows for 2"):
        iterated_expectation_check(table, baseline=base[base["context"] != "0-0"])
    with pytest.raises(ValueError, match="The 'baseline' parameter of iterated_expectation_"
                       "check must be a table, or else"):
        iterated_expectation_check(table, ground_truth=pd.DataFrame({"y": [0, 1]}))
    with pytest.raises(TypeError, match=r"The 'normalize' parameter .* must be a bool"):
        iterated_expectation_check(table, baseline=base, normalize=1)
    with pytest.raises(ValueError, match="The 'n_resamples' parameter"):
        iterated_expectation_check(table, baseline=base, n_resamples=0)
    with pytest.raises(ValueError, match=r"The 'elicited' parameter .* at least one row"):
        iterated_expectation_check(table.iloc[:0], baseline=base)
    with pytest.raises(ValueError, match="The 'alternative' parameter of iterated_expectation"
                       "_check must be one of"):
        iterated_expectation_check(table, baseline=base, alternative="larger")


@pytest.mark.parametrize("column, value, rule", [
    ("p_y_given_xz", 1.3, r"must hold probabilities in \[0, 1\]; 1 offending row "
                          r"\(first: row 4 = 1.3\)"),
    ("p_z_given_x", np.nan, r"must not contain NaN or missing values; 1 offending row "
                            r"\(first: row 4\)"),
    ("p_y_given_x", 0.01, r"must be constant within each context"),
    ("context", None, r"must not contain missing values; 1 offending row \(first: row 4\)"),
])
def test_validation_messages_name_the_table_at_fault(world, column, value, rule):
    # the two tables share their column names, and a bad value of the baseline's was
    # reported as "Column 'p_y_given_xz' (input to iterated_expectation_check) ...", word for
    # word the message of the same fault in 'elicited': the rows named were looked for in
    # the wrong table. Each message now names its table.
    _, table, _ = world
    base = table.assign(p_y_given_x=np.clip(table["p_y_given_x"] + 0.03, 0, 1))
    bad = (table if column == "context" else table.astype({column: float})).copy()
    bad.loc[4, column] = value
    for elicited, baseline, name in ((bad, base, "elicited"), (table, bad, "baseline")):
        with pytest.raises(ValueError, match=rf"Column '{column}' \(input to iterated_"
                           rf"expectation_check, in '{name}'\) {rule}"):
            iterated_expectation_check(elicited, baseline=baseline)
    with pytest.raises(ValueError, match="iterated_expectation_check, in 'baseline': column "
                       "'p_z_given_x' not found"):
        iterated_expectation_check(table, baseline=base.drop(columns="p_z_given_x"))


def test_random_forest_baseline_refuses_a_missing_auxiliary_value(world):
    # a NaN in an auxiliary column of the ground truth was one more state of z that no
    # query lists: the listed states' P(z|x) summed to about 0.8, inflating the baseline's
    # error without a word; now an error naming the column and the rows
    joint, table, contexts = world
    gt = sample(joint, 300, np.random.default_rng(0))
    z = str(table["variable"].iloc[0])
    base = random_forest_baseline(gt, contexts, table, evidence=["x1", "x2"], rng=0, **FAST)
    mass = base.groupby(["context", "variable"])["p_z_given_x"].sum()
    np.testing.assert_allclose(mass.to_numpy(), 1.0, atol=1e-12)
    holed = gt.astype({z: float})
    holed.loc[holed.index[[3, 7]], z] = np.nan
    with pytest.raises(ValueError, match=rf"Column '{z}' \(input to random_forest_baseline\) "
                       r"must not contain missing values; 2 offending rows \(first: row 3, "
                       r"row 7\)"):
        random_forest_baseline(holed, contexts, table, evidence=["x1", "x2"], rng=0, **FAST)


def test_baseline_table_with_forest_inputs_raises(world):
    # with a baseline table, ground_truth / contexts / evidence / estimator /
    # baseline_options went unused without a word (the table's baseline was reported)
    joint, table, contexts = world
    gt = sample(joint, 300, np.random.default_rng(0))
    base = table.assign(p_y_given_x=np.clip(table["p_y_given_x"] + 0.03, 0, 1))
    res = iterated_expectation_check(table, baseline=base, rng=0, n_resamples=20)
    assert res.baseline == "table"
    np.testing.assert_allclose(res.table["baseline_error"], 0.03, atol=1e-12)
    with pytest.raises(ValueError, match=r"'baseline' parameter of iterated_expectation_check "
                       r"must be None when 'ground_truth', 'contexts', 'evidence' are given"):
        iterated_expectation_check(table, baseline=base, ground_truth=gt, contexts=contexts,
                                   evidence=["x1", "x2"], rng=0, n_resamples=20)
    with pytest.raises(ValueError, match=r"must be None when 'baseline_options' is given"):
        iterated_expectation_check(table, baseline=base, baseline_options=FAST, rng=0,
                                   n_resamples=20)
    # outcome= beside a table went unused too (its docstring said it raised)
    with pytest.raises(ValueError, match=r"must be None when 'outcome' is given"):
        iterated_expectation_check(table, baseline=base, outcome="y", rng=0, n_resamples=20)


def test_random_forest_baseline_context_listed_twice_with_different_evidence(world):
    # contexts listing one id twice with different evidence: the last row was used without a
    # word (context 0 answered for the evidence of the second row); now an error naming both
    joint, table, contexts = world
    gt = sample(joint, 300, np.random.default_rng(0))
    first = contexts.iloc[[0]]
    other = contexts.loc[(contexts[["x1", "x2"]] != first[["x1", "x2"]].iloc[0]).any(axis=1)]
    twice = pd.concat([first, other.iloc[[0]].assign(context=first["context"].iloc[0]),
                       contexts.iloc[1:]], ignore_index=True)
    with pytest.raises(ValueError, match=r"Column 'context' \(input to random_forest_baseline"
                       r"\) must hold each context id with one value of the evidence columns"
                       r".*2 offending rows \(first: row 0 = .*, row 1 = "):
        random_forest_baseline(gt, twice, table, evidence=["x1", "x2"], rng=0, **FAST)
    # a row repeated as it is changes nothing
    repeated = pd.concat([contexts, contexts.iloc[[0]]], ignore_index=True)
    pd.testing.assert_frame_equal(
        random_forest_baseline(gt, repeated, table, evidence=["x1", "x2"], rng=0, **FAST),
        random_forest_baseline(gt, contexts, table, evidence=["x1", "x2"], rng=0, **FAST))


def test_random_forest_baseline_validation(world):
    joint, table, contexts = world
    gt = sample(joint, 100, np.random.default_rng(0))
    with pytest.raises(ValueError, match="random_forest_baseline: column 'z1'"):
        random_forest_baseline(gt.drop(columns="z1"), contexts, table, evidence=["x1", "x2"])
    with pytest.raises(ValueError, match="must hold both 0 and 1"):
        random_forest_baseline(gt.assign(y=0), contexts, table, evidence=["x1", "x2"])
    with pytest.raises(ValueError, match=r"1 context\(s\) of 'queries' are not rows of "
                                         r"'contexts' \('0-0'\)"):
        random_forest_baseline(gt, contexts.iloc[1:], table, evidence=["x1", "x2"])
    with pytest.raises(ValueError, match="The 'evidence' parameter of random_forest_baseline"):
        random_forest_baseline(gt, contexts, table, evidence=[])
    # an empty table of queries crashed inside pd.concat ("No objects to concatenate")
    for args, name in (((gt, contexts, table.iloc[:0]), "queries"),
                       ((gt, contexts.iloc[:0], table), "contexts"),
                       ((gt.iloc[:0], contexts, table), "ground_truth")):
        with pytest.raises(ValueError, match=rf"The '{name}' parameter of random_forest_baseline "
                           r"must be a table with at least one row; got '0 rows"):
            random_forest_baseline(*args, evidence=["x1", "x2"])


# --------------------------------------------------------------------------- sign test
def _shift_table(table: pd.DataFrame, shifts: dict) -> pd.DataFrame:
    """Move P(y|x) of each context by its shift (the LIE error of the context)."""
    return table.assign(p_y_given_x=table["p_y_given_x"] + table["context"].map(shifts))


def test_sign_test_hand_computed(world):
    _, table, _ = world
    ids = list(pd.unique(table["context"]))  # 6 contexts
    # agent worse in 5 contexts, better in 1, baseline off by 0.02 everywhere
    agent_shift = dict(zip(ids, [0.05, 0.05, 0.05, 0.05, 0.05, 0.01], strict=True))
    agent = _shift_table(table, agent_shift).assign(
        p_y_given_x=lambda d: d["p_y_given_x"].clip(0, 1))
    base = _shift_table(table, dict.fromkeys(ids, -0.02)).assign(
        p_y_given_x=lambda d: d["p_y_given_x"].clip(0, 1))
    res = iterated_expectation_check(agent, baseline=base, n_resamples=10, rng=0)
    e_a = res.table.groupby("context", sort=False)["agent_error"].mean()
    e_b = res.table.groupby("context", sort=False)["baseline_error"].mean()
    k = int(((e_a - e_b) > 1e-12).sum())
    n = int(((e_a - e_b).abs() >= 1e-12).sum())
    assert (res.n_agent_worse, res.n_informative) == (k, n)
    assert res.pvalue == pytest.approx(stats.binomtest(k, n, 0.5, alternative="greater").pvalue)
    less = iterated_expectation_check(agent, baseline=base, n_resamples=10, rng=0,
                                      alternative="less")
    two = iterated_expectation_check(agent, baseline=base, n_resamples=10, rng=0,
                                     alternative="two-sided")
    assert less.pvalue == pytest.approx(stats.binomtest(k, n, 0.5, alternative="less").pvalue)
    assert two.pvalue == pytest.approx(stats.binomtest(k, n, 0.5).pvalue)
    assert res.alternative == "greater" and less.alternative == "less"
    assert res.to_frame()["pvalue"].iloc[0] == res.pvalue


def test_wilcoxon_option_is_scipys_test_of_the_context_differences(world):
    """``test='wilcoxon'``: the Wilcoxon signed-rank test of the contexts' mean error
    differences (the sign test's informative units), each alternative; recorded and named."""
    _, table, _ = world
    rng = np.random.default_rng(4)
    ids = list(pd.unique(table["context"]))
    agent = _shift_table(table, dict(zip(ids, rng.normal(0.03, 0.03, len(ids)),
                                         strict=True))).assign(
        p_y_given_x=lambda d: d["p_y_given_x"].clip(0, 1))
    base = _shift_table(table, dict.fromkeys(ids, -0.02)).assign(
        p_y_given_x=lambda d: d["p_y_given_x"].clip(0, 1))
    sign = iterated_expectation_check(agent, baseline=base, n_resamples=10, rng=0)
    diff = (sign.table["agent_error"] - sign.table["baseline_error"]).groupby(
        sign.table["context"]).mean().to_numpy()
    diff = diff[np.abs(diff) >= 1e-12]
    for alternative in ("greater", "less", "two-sided"):
        res = iterated_expectation_check(agent, baseline=base, n_resamples=10, rng=0,
                                         test="wilcoxon", alternative=alternative)
        want = stats.wilcoxon(diff, alternative=alternative).pvalue
        assert res.pvalue == pytest.approx(want, rel=1e-12)
        # the statistic, interval and counts do not depend on the test
        assert (res.statistic, res.confidence_interval) == (sign.statistic,
                                                            sign.confidence_interval)
        assert (res.n_agent_worse, res.n_informative) == (sign.n_agent_worse,
                                                          sign.n_informative)
    assert (res.pvalue_method, sign.pvalue_method) == ("wilcoxon", "sign")
    assert "Wilcoxon signed-rank test over contexts" in res.method
    assert "sign test over contexts" in sign.method
    assert res.to_frame()["pvalue_method"].iloc[0] == "wilcoxon"
    with pytest.raises(ValueError, match="'test' parameter of iterated_expectation_check"):
        iterated_expectation_check(agent, baseline=base, test="t")


def test_sign_test_no_informative_context(world):
    _, table, _ = world
    base = table.assign(p_y_given_x=np.clip(table["p_y_given_x"] + 0.03, 0, 1))
    # the NaN p-value is said (it came silently)
    with pytest.warns(DegenerateDataWarning, match="errors are equal .* all 6 context"):
        res = iterated_expectation_check(base, baseline=base, n_resamples=10, rng=0)
    assert res.n_informative == 0 and np.isnan(res.pvalue)
    assert res.statistic == pytest.approx(1.0)
    with pytest.warns(DegenerateDataWarning, match="pvalue is NaN"):
        assert np.isnan(iterated_expectation_check(base, baseline=base, n_resamples=10, rng=0,
                                                   test="wilcoxon").pvalue)


def test_one_context_warns_of_its_nan_interval(world):
    _, table, _ = world
    one = table[table["context"] == table["context"].iloc[0]]
    base = one.assign(p_y_given_x=np.clip(one["p_y_given_x"] + 0.03, 0, 1))
    with pytest.warns(SmallSampleWarning, match="one context"):
        res = iterated_expectation_check(one, baseline=base, n_resamples=10, rng=0)
    assert res.n_contexts == 1 and np.isnan(res.confidence_interval.low)


@pytest.mark.parametrize("side", ["elicited", "baseline"])
def test_normalize_refuses_a_unit_without_z_mass(world, side):
    """A unit whose P(z|x) sum to 0 has no normalised mixture: its error was NaN, and the
    unit left the median and its context the sign test without a word."""
    _, table, _ = world
    base = table.assign(p_y_given_x=np.clip(table["p_y_given_x"] + 0.03, 0, 1))
    first = table["context"] == table["context"].iloc[0]
    tables = {"elicited": table, "baseline": base}
    tables[side] = tables[side].assign(
        p_z_given_x=np.where(first, 0.0, tables[side]["p_z_given_x"]))
    with pytest.raises(ValueError, match=f"normalize=True .* is 0 for .* of '{side}'"):
        iterated_expectation_check(tables["elicited"], baseline=tables["baseline"],
                                   normalize=True, n_resamples=10, rng=0)


@settings(max_examples=25)
@given(st.integers(0, 2**31 - 1))
def test_property_sign_test_swaps(seed):
    """Swapping agent and baseline mirrors the sign test ('greater' <-> 'less')."""
    rng = np.random.default_rng(seed)
    n = 8
    rows = []
    for c in range(n):
        pz = rng.dirichlet([1.0, 1.0])
        py = rng.uniform(0.05, 0.95, 2)
        mix = float(py @ pz)
        for s in range(2):
            rows.append({"context": c, "variable": "z", "state": s, "p_y_given_x": mix,
                         "p_y_given_xz": py[s], "p_z_given_x": pz[s]})
    exact = pd.DataFrame(rows)
    a = exact.assign(p_y_given_x=np.clip(exact["p_y_given_x"] + np.repeat(
        rng.normal(0, 0.05, n), 2), 0, 1))
    b = exact.assign(p_y_given_x=np.clip(exact["p_y_given_x"] + np.repeat(
        rng.normal(0, 0.05, n), 2), 0, 1))
    ab = iterated_expectation_check(a, baseline=b, n_resamples=1, rng=0)
    ba = iterated_expectation_check(b, baseline=a, n_resamples=1, rng=0, alternative="less")
    assert ab.pvalue == pytest.approx(ba.pvalue)
    assert ab.n_agent_worse + ba.n_agent_worse == ab.n_informative


# --------------------------------------------------------------------------- plot
def test_plot(world):
    import matplotlib.pyplot as plt
    from matplotlib.axes import Axes

    _, table, _ = world
    shifted = table.assign(p_y_given_x=np.clip(table["p_y_given_x"] - 0.1, 0, 1))
    base = table.assign(p_y_given_x=np.clip(table["p_y_given_x"] + 0.02, 0, 1))
    res = iterated_expectation_check(shifted, baseline=base, rng=0, n_resamples=200)
    before = res.table.copy()
    fig, ax = plt.subplots()
    out = res.plot(ax=ax)
    assert out is ax and isinstance(out, Axes)
    assert ax.get_xscale() == "log"
    drawable = (np.isfinite(res.table["ratio"]) & (res.table["ratio"] > 0)
                & (res.table["agent_error"] >= 1e-12))
    offsets = ax.collections[0].get_offsets()
    assert len(offsets) == int(drawable.sum())
    np.testing.assert_allclose(np.asarray(offsets)[:, 0], res.table["ratio"][drawable])
    # the median line sits at the statistic
    xs = [line.get_xdata()[0] for line in ax.get_lines() if line.get_color() == "C3"]
    assert xs == [pytest.approx(res.statistic)]
    assert [t.get_text() for t in ax.get_yticklabels()] == ["z1", "z2"]
    pd.testing.assert_frame_equal(res.table, before)
    plt.close(fig)
    # a new figure when no axes is given; hidden units are counted in the title
    exact = iterated_expectation_check(table, baseline=base, rng=0, n_resamples=10)
    ax2 = exact.plot()
    assert isinstance(ax2, Axes)
    assert "12 unit(s) with ratio 0, inf or NaN not shown" in ax2.get_title()
    plt.close(ax2.figure)


def test_random_forest_baseline_refuses_labels_written_otherwise(world):
    """States queried as text ('0', '1', '2', as a CSV or JSON table gives them) against a
    ground truth of numbers were all 'never seen': P(z|x) = 0 and P(y|x,z) = P(y|x) for
    every state, so the baseline's error was P(y|x) itself and an agent whose P(y|x) is
    off by 0.15 looked more coherent than the forest (median ratio 0.31, 21.6 with the
    states written alike); evidence written otherwise gave every context one prediction."""
    joint, table, contexts = world
    gt = sample(joint, 600, np.random.default_rng(1))
    bad = table.assign(p_y_given_x=np.clip(table["p_y_given_x"] + 0.15, 0, 1))
    with pytest.raises(ValueError, match=r"random_forest_baseline: column 'state' of "
                       r"'queries' writes states of 'z1' otherwise than column 'z1' of "
                       r"'ground_truth' \(.*'0' / 0.*one label typed two ways\)"):
        iterated_expectation_check(bad.assign(state=bad["state"].astype(str)), ground_truth=gt,
                                   contexts=contexts, evidence=["x1", "x2"], rng=0,
                                   n_resamples=9, baseline_options=FAST)
    with pytest.raises(ValueError, match=r"column 'state' of 'queries' holds no state of 'z1' "
                       r"that column 'z1' of 'ground_truth' holds"):
        random_forest_baseline(gt, contexts, table.assign(state=table["state"] + 10),
                               evidence=["x1", "x2"], rng=0, **FAST)
    with pytest.raises(ValueError, match=r"column 'x1' of 'contexts' writes evidence "
                       r"otherwise than 'ground_truth' \(.*'0' / 0"):
        random_forest_baseline(gt, contexts.assign(x1=contexts["x1"].astype(str)), table,
                               evidence=["x1", "x2"], rng=0, **FAST)
    # a state the ground truth never shows, beside states it does, is still P(z|x) = 0
    extra = pd.concat([table, table.loc[table["variable"] == "z2"].assign(state=7)])
    base = random_forest_baseline(gt, contexts, extra, evidence=["x1", "x2"], rng=0, **FAST)
    assert (base.loc[base["state"] == 7, "p_z_given_x"] == 0).all()


def test_random_forest_baseline_refuses_a_unit_leaving_out_a_state(world):
    """A unit of the queries that leaves out a state of z the ground truth holds was summed
    over the states listed: the missing state counted as P(z|x) = 0 in the agent's and the
    forest's error alike, and the check answered without a word (on asia, 30 contexts, the
    median ratio moved from 0.18 to 0.54 with state 'no' of tub left out)."""
    joint, table, contexts = world
    gt = sample(joint, 600, np.random.default_rng(1))
    drop = (table["context"] == "1-0") & (table["variable"] == "z1") & (table["state"] == 2)
    with pytest.raises(ValueError, match=r"random_forest_baseline: 1 \(context, variable\) "
                       r"unit\(s\) of 'queries' do not list every state of 'z1' that column "
                       r"'z1' of 'ground_truth' holds \(first: \('1-0', 'z1'\) lacks \[2\]\)"):
        iterated_expectation_check(table.loc[~drop], ground_truth=gt, contexts=contexts,
                                   evidence=["x1", "x2"], rng=0, n_resamples=9,
                                   baseline_options=FAST)
    # a state left out of every unit of a variable: its P(z|x) summed to 0 everywhere
    lost = (table["variable"] == "z2") & (table["state"] == 0)
    with pytest.raises(ValueError, match=r": 6 \(context, variable\) unit\(s\) of 'queries' "
                       r"do not list every state of 'z2'.*lacks \[0\]"):
        random_forest_baseline(gt, contexts, table.loc[~lost], evidence=["x1", "x2"], rng=0,
                               **FAST)


def test_random_forest_baseline_refuses_a_context_missing_evidence(world):
    """A context missing an evidence value (None, NaN) was one-hot encoded as none of the
    column's values, evidence no ground-truth row has, and the forests' predictions for it
    came back as the context's baseline without a word."""
    joint, table, contexts = world
    gt = sample(joint, 600, np.random.default_rng(1))
    holed = contexts.assign(x2=contexts["x2"].astype(object))
    holed.loc[2, "x2"] = None
    with pytest.raises(ValueError, match=r"Column 'x2' \(input to random_forest_baseline\) "
                       r"must not contain missing values; 1 offending row \(first: row 2\)"):
        random_forest_baseline(gt, holed, table, evidence=["x1", "x2"], rng=0, **FAST)


def test_context_ids_true_and_1_are_refused_not_pooled():
    """True and 1 compare equal: two contexts so named were one unit (one context fewer in
    the bootstrap and the sign test, their errors averaged), without a word."""
    from coherence import iterated_expectation_check

    rows = []
    for c, var in ((True, "z1"), (1, "z2"), (2, "z1"), (3, "z1")):
        rows += [(c, var, 0, 0.5, 0.3, 0.6), (c, var, 1, 0.5, 0.8, 0.4)]
    cols = ["context", "variable", "state", "p_y_given_x", "p_y_given_xz", "p_z_given_x"]
    elicited = pd.DataFrame(rows, columns=cols)
    elicited["context"] = elicited["context"].astype(object)
    base = elicited.assign(p_y_given_x=0.51)
    with pytest.raises(ValueError, match=r"Column 'context' .* booleans or numbers, not "
                                         r"both .*True equals 1.*row 0 = True"):
        iterated_expectation_check(elicited, baseline=base, n_resamples=99, rng=0)
    # bools alone, or numbers alone, are fine: four contexts
    res = iterated_expectation_check(elicited.assign(context=[0, 0, 1, 1, 2, 2, 3, 3]),
                                     baseline=base.assign(context=[0, 0, 1, 1, 2, 2, 3, 3]),
                                     n_resamples=99, rng=0)
    assert res.n_contexts == 4


def test_random_forest_baseline_refuses_bools_against_numbers(world):
    """True == 1 in Python and pandas pools them: contexts whose evidence came back from a
    JSON file as true / false against a ground truth of 0 / 1, or queries naming context
    True for context 1, were matched without a word (and a column of both was one-hot
    encoded, changing the forests). Without the network's states they are now refused
    as labels typed two ways, as iterated_expectation_check refuses them; context ids
    '1' against 1 are named so too (they were "not rows of 'contexts'")."""
    joint, table, contexts = world
    gt = sample(joint, 600, np.random.default_rng(1))
    binary = gt.assign(x1=(gt["x1"] > 0).astype(int))
    flagged = contexts.assign(x1=contexts["x1"] > 0)
    with pytest.raises(ValueError, match=r"column 'x1' of 'contexts' writes evidence "
                       r"otherwise than 'ground_truth' \((False / 0; True / 1|True / 1; "
                       r"False / 0): one label typed two ways\)"):
        random_forest_baseline(binary, flagged, table, evidence=["x1", "x2"], rng=0, **FAST)
    z2 = table["variable"] == "z2"
    as_bools = table.assign(state=table["state"].astype(object))
    as_bools.loc[z2, "state"] = as_bools.loc[z2, "state"].map({0: False, 1: True})
    with pytest.raises(ValueError, match=r"column 'state' of 'queries' writes states of 'z2' "
                       r"otherwise than column 'z2' of 'ground_truth' \(.*True / 1"):
        random_forest_baseline(gt, contexts, as_bools, evidence=["x1", "x2"], rng=0, **FAST)
    number = {c: i for i, c in enumerate(contexts["context"])}
    ctx, q = contexts.replace({"context": number}), table.replace({"context": number})
    two, q2 = ctx.loc[ctx["context"] < 2], q.loc[q["context"] < 2]
    for ids, queries in ((ctx, q.assign(context=q["context"].astype(str))),
                         (two, q2.assign(context=q2["context"].astype(bool)))):
        with pytest.raises(ValueError, match=r"column 'context' of 'queries' writes context "
                           r"ids otherwise than 'contexts' \(('0' / 0|False / 0).*: one id "
                           r"typed two ways\)"):
            random_forest_baseline(gt, ids, queries, evidence=["x1", "x2"], rng=0, **FAST)


#: The states of the test world's variables, as a network would define them.
WORLD_STATES = {"x1": (0, 1, 2), "x2": ("level0", "level1"), "z1": (0, 1, 2), "z2": (0, 1)}


def test_random_forest_baseline_refuses_a_value_no_state_holds(world):
    """An evidence value no variable's state holds (a misspelt 'levle1') was one-hot
    encoded as a category the ground truth never shows, and the forests' prediction for
    it came back as the context's baseline without a word; with the network's states it
    is refused, while a real state merely absent from the sample is still fitted."""
    joint, table, contexts = world
    gt = sample(joint, 600, np.random.default_rng(1))
    typo = contexts.assign(x2=contexts["x2"].replace("level1", "levle1"))
    with pytest.raises(ValueError, match=r"Column 'x2' \(input to random_forest_baseline\) "
                       r"must hold states of variable 'x2' in 'contexts' \(one of "
                       r"\['level0', 'level1'\], as 'states' gives them\); 3 offending rows "
                       r"\(first: row 1 = 'levle1'"):
        random_forest_baseline(gt, typo, table, evidence=["x1", "x2"], rng=0,
                               states=WORLD_STATES, **FAST)
    with pytest.raises(ValueError, match=r"Column 'state' .*must hold states of variable "
                       r"'z2' in 'queries' \(one of \[0, 1\].*12 offending rows.*= 7,"):
        extra = pd.concat([table, table.loc[table["variable"] == "z2"].assign(state=7)])
        random_forest_baseline(gt, contexts, extra, evidence=["x1", "x2"], rng=0,
                               states=WORLD_STATES, **FAST)
    # True == 1 in Python: a bool is no state of a variable whose states are numbers
    flagged = contexts.assign(x1=contexts["x1"].astype(object))
    flagged.loc[2, "x1"] = True
    with pytest.raises(ValueError, match=r"variable 'x1' in 'contexts'.*row 2 = True"):
        random_forest_baseline(gt, flagged, table, evidence=["x1", "x2"], rng=0,
                               states=WORLD_STATES, **FAST)
    # a real state absent from a small sample: fitted as before, the states change nothing
    small = gt.loc[gt["x2"] == "level0"]
    plain = random_forest_baseline(small, contexts, table, evidence=["x1", "x2"], rng=0,
                                   **FAST)
    named = random_forest_baseline(small, contexts, table, evidence=["x1", "x2"], rng=0,
                                   states=WORLD_STATES, **FAST)
    pd.testing.assert_frame_equal(named, plain)
    assert np.isfinite(named[["p_y_given_x", "p_y_given_xz", "p_z_given_x"]].to_numpy()).all()


def test_random_forest_baseline_refuses_forest_options_beside_an_estimator(world):
    """The forest's options went unused without a word when an estimator was given."""
    from sklearn.linear_model import LogisticRegression

    joint, table, contexts = world
    gt = sample(joint, 300, np.random.default_rng(1))
    with pytest.raises(TypeError, match=r"random_forest_baseline: 'n_estimators', "
                       r"'n_splits' given together with 'estimator'"):
        random_forest_baseline(gt, contexts, table, evidence=["x1", "x2"], rng=0,
                               estimator=LogisticRegression(), n_estimators=25, n_splits=3)
    with pytest.raises(TypeError, match=r"'min_samples_leaf' given together with 'estimator'"):
        iterated_expectation_check(table, ground_truth=gt, contexts=contexts,
                                   evidence=["x1", "x2"], estimator=LogisticRegression(),
                                   baseline_options={"min_samples_leaf": (5,)}, rng=0,
                                   n_resamples=9)


def test_resamples_with_an_undefined_median_are_counted(world):
    # a resample drawing only units whose ratio is 0/0 (both errors 0) has a NaN median
    # and was left out of the interval without a count: 4 of 6 contexts exact on both
    # sides leave out about (4/6)^6 = 8.8% of the resamples; they are now counted
    # (n_undefined) and said, the interval still resting on the other resamples
    _, table, _ = world
    ids = list(pd.unique(table["context"]))
    agent = _shift_table(table, dict(zip(ids, [0, 0, 0, 0, 0.05, 0.03], strict=True)))
    base = _shift_table(table, dict(zip(ids, [0, 0, 0, 0, -0.02, 0.02], strict=True)))
    with pytest.warns(SmallSampleWarning, match=r"iterated_expectation_check: \d+ of 2000 "
                      r"bootstrap resamples \(\d+\.\d%\) are left out of the interval.*"
                      r"'n_undefined'"), \
            pytest.warns(DegenerateDataWarning, match="baseline error is 0"):
        res = iterated_expectation_check(agent, baseline=base, n_resamples=2000, rng=0)
    assert 2000 * 0.088 - 60 < res.n_undefined < 2000 * 0.088 + 60
    assert res.to_frame()["n_undefined"].iloc[0] == res.n_undefined
    # the same resamples by hand: the count, and the interval of the defined ones, as before
    ratio = res.table["ratio"].to_numpy()
    codes = res.table["context"].map({c: i for i, c in enumerate(sorted(ids))}).to_numpy()
    draws = np.random.default_rng(0).integers(0, 6, size=(2000, 6))
    drawn = [np.concatenate([ratio[codes == c] for c in d]) for d in draws]
    medians = np.array([np.median(r[~np.isnan(r)]) if (~np.isnan(r)).any() else np.nan
                        for r in drawn])
    assert res.n_undefined == int(np.isnan(medians).sum())
    level = expanded_level(0.95, 6)
    lo, hi = np.quantile(medians[~np.isnan(medians)], [(1 - level) / 2, (1 + level) / 2])
    assert (res.confidence_interval.low, res.confidence_interval.high) == pytest.approx((lo, hi))
    # one exact context of 6: (1/6)^6 of the resamples, none of 2000 here, and no warning
    agent1 = _shift_table(table, dict(zip(ids, [0, 0.01, 0.02, 0.04, 0.05, 0.03], strict=True)))
    base1 = _shift_table(table, dict(zip(ids, [0, 0.02, 0.02, 0.02, -0.02, 0.02], strict=True)))
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallSampleWarning)
        warnings.simplefilter("ignore", DegenerateDataWarning)  # the exact context's 0 / 0
        one = iterated_expectation_check(agent1, baseline=base1, n_resamples=2000, rng=0)
    assert one.n_undefined == 0
