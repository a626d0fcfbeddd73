"""Tests of the law-of-iterated-expectation bridge (bayesnets._lie) and its use by the check."""

from __future__ import annotations

import dataclasses
import warnings
from typing import Any

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from scipy import stats

import bayesnets
from bayesnets._lie import _forward_sample
from coherence import Agent
from coherence import DegenerateDataWarning
from coherence import iterated_expectation_check

COLUMNS = ["context", "variable", "state", "p_y_given_x", "p_y_given_xz", "p_z_given_x",
           "variable_name"]


@pytest.fixture(scope="module")
def asia() -> bayesnets.LIEStudy:
    return bayesnets.lie_study("asia", n_contexts=30, rng=0)


@pytest.fixture(scope="module")
def asia_weighted() -> bayesnets.LIEStudy:
    return bayesnets.lie_study("asia", agent="weighted", n_contexts=30, rng=0)


def _gaps(table: pd.DataFrame) -> pd.Series:
    t = table.assign(prod=table["p_y_given_xz"] * table["p_z_given_x"])
    g = t.groupby(["context", "variable"], sort=False)
    return g["p_y_given_x"].first() - g["prod"].sum()


def _check(agent: pd.DataFrame, base: pd.DataFrame, **kw: object):
    with warnings.catch_warnings():  # contexts with P(y|x) in {0, 1} have both errors 0
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return iterated_expectation_check(agent, baseline=base, n_resamples=1, rng=0, **kw)


# --------------------------------------------------------------------------- layout
def test_table_layout(asia: bayesnets.LIEStudy) -> None:
    data, exact = asia.data, asia.exact
    assert list(data.columns) == COLUMNS
    assert list(exact.columns) == COLUMNS[:-1]
    n_ctx = asia.contexts["context"].nunique()
    assert n_ctx == 30
    # asia: tub and either, two states each
    assert len(data) == n_ctx * 4
    assert (data[["context", "variable", "state"]].to_numpy() ==
            exact[["context", "variable", "state"]].to_numpy()).all()
    assert not data.duplicated(["context", "variable", "state"]).any()
    mass = data.groupby(["context", "variable"])["p_z_given_x"].sum()
    np.testing.assert_allclose(mass, 1.0, atol=1e-12)
    spread = data.groupby("context")["p_y_given_x"].agg(lambda v: v.max() - v.min())
    assert (spread == 0).all()
    for col in ("p_y_given_x", "p_y_given_xz", "p_z_given_x"):
        assert data[col].between(0, 1).all()
    assert set(data["variable"]) == {"tub", "either"}
    assert set(data["variable_name"]) == {"tuberculosis status",
                                          "tuberculosis-or-lung-cancer status"}
    assert list(asia.truth.columns) == ["context", "variable", "gap", "error"]
    assert len(asia.truth) == n_ctx * 2
    assert asia.evidence == ("asia", "smoke", "xray", "dysp")
    # the exact P(y|x) is the contexts' truth
    first = exact.drop_duplicates("context").set_index("context")["p_y_given_x"]
    np.testing.assert_allclose(first.loc[asia.contexts["context"]],
                               asia.contexts["truth"].to_numpy())


def test_default_child_auxiliaries() -> None:
    study = bayesnets.lie_study(n_contexts=5, n_ground_truth=10, rng=1)
    assert tuple(pd.unique(study.data["variable"])) == bayesnets.DEFAULT_AUXILIARY["child"]
    net = bayesnets.load("child")
    assert len(study.data) == 5 * sum(net.cardinality(v) for v in
                                      bayesnets.DEFAULT_AUXILIARY["child"])


def test_exact_table_satisfies_lie(asia: bayesnets.LIEStudy) -> None:
    assert np.abs(_gaps(asia.exact)).max() < 1e-12


# --------------------------------------------------------------------------- truth
def test_coherent_agent_exact_error_is_zero(asia: bayesnets.LIEStudy) -> None:
    assert (asia.truth["error"] == 0).all()
    noiseless = bayesnets.lie_study("asia", n_contexts=30, report_noise=0.0, rng=0)
    assert np.abs(_gaps(noiseless.data)).max() < 1e-12
    # with noise the reported gap is not 0
    assert np.abs(_gaps(asia.data)).median() > 1e-4


def test_weighted_agent_violates_by_the_known_amount(
        asia_weighted: bayesnets.LIEStudy) -> None:
    truth = asia_weighted.truth
    assert truth["error"].median() > 0.01
    # noise-free reports reproduce the truth exactly
    noiseless = bayesnets.lie_study("asia", agent="weighted", n_contexts=30, report_noise=0.0,
                                    rng=0)
    np.testing.assert_allclose(_gaps(noiseless.data).to_numpy(),
                               noiseless.truth["gap"].to_numpy(), atol=1e-12)
    # the truth is the formula: w(P(y|x)) - sum_z w(P(y|x,z)) w(P(z|x)) / sum_z w(P(z|x))
    agent = Agent.rational(grid=None, weighting="prelec", gamma=0.6)
    ex = asia_weighted.exact
    w_z = agent.weight(ex["p_z_given_x"].to_numpy())
    pi = w_z / pd.Series(w_z).groupby([ex["context"], ex["variable"]]).transform("sum")
    mix = (agent.weight(ex["p_y_given_xz"].to_numpy()) * pi).groupby(
        [ex["context"], ex["variable"]], sort=False).sum()
    held = pd.Series(agent.weight(ex["p_y_given_x"].to_numpy())).groupby(
        [ex["context"], ex["variable"]], sort=False).first()
    np.testing.assert_allclose((held - mix).to_numpy(), truth["gap"].to_numpy(), atol=1e-12)


def test_gamma_one_is_coherent() -> None:
    study = bayesnets.lie_study("asia", agent=Agent.rational(weighting="prelec", gamma=1.0),
                                n_contexts=10, rng=3)
    assert (study.truth["error"] == 0).all()


def test_reports_are_unbiased() -> None:
    """The mean reported gap over many redraws is the exact gap (LIE in expectation)."""
    study = bayesnets.lie_study("asia", agent="weighted", n_contexts=10, report_noise=0.05,
                                rng=4)
    rng = np.random.default_rng(5)
    draws = np.array([_gaps(study.redraw(rng=rng)).to_numpy() for _ in range(250)])
    se = draws.std(axis=0, ddof=1) / np.sqrt(len(draws))
    z = (draws.mean(axis=0) - study.truth["gap"].to_numpy()) / np.where(se > 0, se, 1.0)
    assert np.abs(z).max() < 4.5
    # and the report noise has the stated size: sd of a report of about 1/2
    p = np.array([study.redraw(rng=rng)["p_y_given_x"].to_numpy() for _ in range(250)])
    held = study.redraw(report_noise=0.0, rng=0)["p_y_given_x"].to_numpy()
    near = np.abs(held - 0.5) < 0.15
    if near.any():
        expected = np.sqrt(held[near] * (1 - held[near]) / (0.25 / 0.05**2))
        np.testing.assert_allclose(p[:, near].std(axis=0), expected, rtol=0.2)


# --------------------------------------------------------------------------- randomness
def test_reproducible_from_rng() -> None:
    a = bayesnets.lie_study("asia", n_contexts=10, n_ground_truth=50, rng=7)
    b = bayesnets.lie_study("asia", n_contexts=10, n_ground_truth=50, rng=7)
    c = bayesnets.lie_study("asia", n_contexts=10, n_ground_truth=50, rng=8)
    pd.testing.assert_frame_equal(a.data, b.data)
    pd.testing.assert_frame_equal(a.ground_truth, b.ground_truth)
    assert not np.array_equal(a.data["p_y_given_xz"], c.data["p_y_given_xz"])
    pd.testing.assert_frame_equal(a.redraw(rng=1), a.redraw(rng=1))


def test_redraw_layout_and_agent(asia: bayesnets.LIEStudy) -> None:
    before = asia.data.copy()
    other = asia.redraw(agent="weighted", report_noise=0.0, rng=0)
    pd.testing.assert_frame_equal(asia.data, before)
    assert list(other.columns) == COLUMNS
    np.testing.assert_allclose(_gaps(other).to_numpy(), bayesnets.lie_study(
        "asia", agent="weighted", n_contexts=30, rng=0).truth["gap"].to_numpy(), atol=1e-12)


def test_redraw_of_tables_not_grouped_by_context(asia: bayesnets.LIEStudy) -> None:
    """The reports of P(y|x) were matched to rows by counting each context's first row, as
    if the rows were grouped by context: with the tables sorted by variable, a context's
    rows after the first variable's took the report of the context listed before them (29
    of 30 contexts held two values of P(y|x), and the check refused the table as
    inconsistent). Each row now gets its own context's report, and its own variable's
    name."""
    order = asia.exact.sort_values(["variable", "context"], kind="stable").index
    study = dataclasses.replace(asia, exact=asia.exact.loc[order].reset_index(drop=True),
                                data=asia.data.loc[order].reset_index(drop=True))
    out = study.redraw(report_noise=0.0, rng=0)
    np.testing.assert_array_equal(out["p_y_given_x"], study.exact["p_y_given_x"])
    assert (out["variable_name"] == study.data["variable_name"]).all()
    noisy = study.redraw(rng=0)
    assert (noisy.groupby("context")["p_y_given_x"].nunique() == 1).all()


# --------------------------------------------------------------------------- ground truth
def test_forward_sample_matches_cpts() -> None:
    net = bayesnets.load("asia")
    codes = _forward_sample(net, 20000, np.random.default_rng(0))
    smoke = codes[:, net.index["smoke"]]
    p_yes = net.cpts["smoke"][0]
    assert abs(np.mean(smoke == 0) - p_yes) < 4 * np.sqrt(p_yes * (1 - p_yes) / 20000)
    # either = tub OR lung, deterministically
    tub, lung, either = (codes[:, net.index[v]] for v in ("tub", "lung", "either"))
    assert np.array_equal(either == 0, (tub == 0) | (lung == 0))


def test_ground_truth_outcome(asia: bayesnets.LIEStudy) -> None:
    gt = asia.ground_truth
    assert len(gt) == 5000
    assert set(gt.columns) == {*bayesnets.load("asia").variables, "y"}
    assert np.array_equal(gt["y"].to_numpy(), (gt["lung"] == "yes").to_numpy().astype(int))


# --------------------------------------------------------------------------- names
def test_auxiliary_name() -> None:
    assert bayesnets.auxiliary_name("child", "RUQO2") == (
        "right upper quadrant oxygen pressure (kPa)")
    assert bayesnets.auxiliary_name("child", "Nope") == "Nope"
    assert bayesnets.auxiliary_name("mynet", "x") == "x"


@pytest.mark.parametrize("network, variable, name", [
    (5, "x", "network"), ("child", 5, "variable"), ("child", ["RUQO2"], "variable"),
    (["child"], "x", "network"), ("child", "", "variable"), (None, None, "network")])
def test_auxiliary_name_refuses_what_is_not_a_name(network, variable, name) -> None:
    # auxiliary_name(5, 5) returned 5 (not a str), ("child", 5) '5', a list raised
    # 'unhashable type: list'
    with pytest.raises(TypeError, match=f"The '{name}' parameter of auxiliary_name must be a "
                       "non-empty str"):
        bayesnets.auxiliary_name(network, variable)


_NAMES = st.one_of(st.text(max_size=6), st.sampled_from(["child", "asia", "RUQO2", "bronc"]),
                   st.integers(), st.floats(), st.none(), st.booleans(),
                   st.lists(st.text(max_size=2), max_size=2), st.just({"a": 1}))


@settings(max_examples=200)
@given(_NAMES, _NAMES)
def test_auxiliary_name_is_a_str_or_a_clean_error(network, variable) -> None:
    try:
        name = bayesnets.auxiliary_name(network, variable)
    except TypeError as exc:
        assert "parameter of auxiliary_name" in str(exc)
        return
    assert isinstance(name, str) and name
    assert name == variable or network in bayesnets.PHRASE_NETWORKS


# --------------------------------------------------------------------------- validation
@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"agent": "bayesian"}, ValueError, "The 'agent' parameter of lie_study must be 'rational'"),
    ({"agent": Agent.leaky()}, ValueError, "must be a rational Agent"),
    ({"report_noise": 0.5}, ValueError, "The 'report_noise' parameter of lie_study"),
    ({"report_noise": -0.1}, ValueError, "The 'report_noise' parameter of lie_study"),
    ({"n_contexts": 1}, ValueError, "The 'n_contexts' parameter of lie_study"),
    ({"n_ground_truth": 0}, ValueError, "The 'n_ground_truth' parameter of lie_study"),
    ({"auxiliary_vars": "tub"}, TypeError, "must be a sequence of variable names"),
    ({"auxiliary_vars": []}, ValueError, "must be at least one variable"),
    ({"auxiliary_vars": ["tub", "tub"]}, ValueError, "must be distinct variables"),
    ({"auxiliary_vars": ["lung"]}, ValueError, "neither the target nor evidence"),
    ({"auxiliary_vars": ["xray"]}, ValueError, "neither the target nor evidence"),
    ({"auxiliary_vars": ["nope"]}, ValueError, "must be a variable of network 'asia'"),
])
def test_validation(kwargs: dict, error: type, match: str) -> None:
    with pytest.raises(error, match=match):
        bayesnets.lie_study("asia", **{"n_contexts": 5, **kwargs})


def test_network_without_default_auxiliaries() -> None:
    with pytest.raises(ValueError, match="'auxiliary_vars' parameter of lie_study must be "
                                         "given"):
        bayesnets.lie_study("cancer", n_contexts=5)
    study = bayesnets.lie_study("cancer", evidence_vars=["Smoker", "Xray"],
                                auxiliary_vars=["Pollution"], n_contexts=4, n_ground_truth=10,
                                rng=0)
    assert set(study.data["variable_name"]) == {"pollution exposure"}


def test_redraw_validation(asia: bayesnets.LIEStudy) -> None:
    with pytest.raises(ValueError, match=r"The 'report_noise' parameter of LIEStudy\.redraw"):
        asia.redraw(report_noise=1.0)
    with pytest.raises(ValueError, match=r"The 'agent' parameter of LIEStudy\.redraw"):
        asia.redraw(agent="nope")


# --------------------------------------------------------------------------- the check on it
def test_check_runs_on_the_bridge_with_forest_baseline(asia: bayesnets.LIEStudy) -> None:
    with warnings.catch_warnings():  # pure leaves: some forest errors are exactly 0
        warnings.simplefilter("ignore", DegenerateDataWarning)
        res = iterated_expectation_check(
            asia.data.drop(columns="variable_name"), ground_truth=asia.ground_truth,
            contexts=asia.contexts, evidence=list(asia.evidence), n_resamples=99,
            baseline_options={"n_estimators": 20, "min_samples_leaf": (5,), "n_splits": 2,
                              "states": asia.states},
            rng=0)
    assert res.baseline == "random_forest"
    assert res.n_contexts == 30
    assert np.isfinite(res.statistic) and res.statistic > 0
    assert 0 <= res.pvalue <= 1


def test_sign_test_against_the_exchangeable_baseline_is_the_binomial(
        asia: bayesnets.LIEStudy) -> None:
    a, b = asia.redraw(rng=1), asia.redraw(rng=2)
    res = _check(a, b)
    d = (np.abs(_gaps(a)) - np.abs(_gaps(b))).groupby(level=0, sort=False).mean()
    d = d[np.abs(d) >= 1e-12]
    assert res.n_informative == len(d)
    assert res.n_agent_worse == int((d > 0).sum())
    assert res.pvalue == pytest.approx(stats.binomtest(int((d > 0).sum()), len(d), 0.5,
                                                       alternative="greater").pvalue)


@pytest.mark.slow  # a statistical matrix (or a long equivalence check): make test-slow
def test_fast_size_and_power() -> None:
    """Sign-test size with an exchangeable baseline, and power against weighting.

    The full tables (more studies, both networks, gamma 0.5 to 0.9) are in
    docs/validation_lie.md (benchmarks/validate_lie.py).
    """
    rng = np.random.default_rng(11)
    rejections = []
    for _ in range(4):
        study = bayesnets.lie_study("asia", n_contexts=40, n_ground_truth=1, rng=rng)
        for _ in range(40):
            rejections.append(_check(study.redraw(rng=rng), study.redraw(rng=rng)).pvalue
                              <= 0.05)
    assert 0.01 <= np.mean(rejections) <= 0.10
    power = []
    weighted = Agent.rational(grid=None, weighting="prelec", gamma=0.6)
    for _ in range(2):
        study = bayesnets.lie_study("child", agent=weighted, n_contexts=60, n_ground_truth=1,
                                    rng=rng)
        for _ in range(10):
            power.append(_check(study.redraw(rng=rng), study.redraw(agent="rational",
                                                                    rng=rng)).pvalue <= 0.05)
    assert np.mean(power) >= 0.8


def _chain(names: str, n: int, second: tuple[float, float],
           third: tuple[float, float]) -> tuple[pd.DataFrame, Any]:
    """A three-variable chain of binary variables (written as text) drawn ``n`` times, each
    P(child = 1) = intercept + slope * parent, and the network fitted to it."""
    rng = np.random.default_rng(0)
    first = rng.integers(0, 2, n)
    mid = (rng.random(n) < second[0] + second[1] * first).astype(int)
    last = (rng.random(n) < third[0] + third[1] * mid).astype(int)
    data = pd.DataFrame(dict(zip(names, (first, mid, last), strict=True))).astype(str)
    a, b, c = names
    return data, bayesnets.fit(data, [(a, b), (b, c)], min_support=1)


def test_a_network_variable_named_y_is_refused() -> None:
    # ground_truth's outcome column is 'y': it overwrote the variable's states
    _, net = _chain("xyz", 400, (0.3, 0.4), (0.2, 0.5))
    with pytest.raises(ValueError, match=r"'network' parameter of lie_study must be a "
                                         r"network without a variable named 'y'"):
        bayesnets.lie_study(net, target="z", state="1", evidence_vars=["x"],
                            auxiliary_vars=["y"], n_contexts=2)


def test_a_fitted_network_runs_with_its_phrases() -> None:
    # lie_study took no phrases: on a network without a built-in table (fitted to data) it
    # always raised, about a 'phrases' parameter of contexts it could not pass
    data, net = _chain("abc", 4000, (0.2, 0.6), (0.3, 0.4))
    phrases = {v: {"1": f"{v} is present", "0": f"{v} is absent"} for v in "abc"}
    study = bayesnets.lie_study(net, target="c", state="1", evidence_vars=["a"],
                                auxiliary_vars=["b"], n_contexts=10, report_noise=0.0,
                                phrases=phrases, rng=0)
    ctx = study.contexts
    assert set(ctx["description"]) <= {"a is present", "a is absent"}
    # by hand: P(c=1 | a) = sum_b P(c=1 | b) P(b | a), from the fitted frequencies
    for _, row in ctx.iterrows():
        rows = data[data["a"] == row["a"]]
        p_b = rows["b"].value_counts(normalize=True)
        p_c = data.groupby("b")["c"].apply(lambda s: (s == "1").mean())
        assert row["truth"] == pytest.approx(sum(p_b[s] * p_c[s] for s in p_b.index), abs=1e-12)
        exact = study.exact[study.exact["context"] == row["context"]].set_index("state")
        assert exact["p_z_given_x"].to_dict() == pytest.approx(p_b.to_dict(), abs=1e-12)
        assert exact["p_y_given_xz"].to_dict() == pytest.approx(p_c.to_dict(), abs=1e-12)
    assert study.truth["error"].max() == 0.0


def test_study_carries_the_network_states_for_the_baseline(asia: bayesnets.LIEStudy) -> None:
    # the study did not carry the network's states: the baseline's states= (which refuses a
    # misspelt evidence value) had to be looked up with bayesnets.load(name).states
    net = bayesnets.load("asia")
    assert dict(asia.states) == {v: tuple(net.states[v]) for v in net.variables}
    assert "states" not in repr(asia)
    bad = asia.contexts.copy()
    ev = asia.evidence[0]
    bad[ev] = bad[ev].astype(object)
    bad.loc[bad.index[0], ev] = "yse"  # a misspelt state of the first evidence variable
    with pytest.raises(ValueError, match=rf"hold states of variable '{ev}' in 'contexts'.*"
                       r"'yse'"):
        iterated_expectation_check(
            asia.data.drop(columns="variable_name"), ground_truth=asia.ground_truth,
            contexts=bad, evidence=list(asia.evidence), n_resamples=9,
            baseline_options={"n_estimators": 5, "min_samples_leaf": (5,), "n_splits": 2,
                              "states": asia.states}, rng=0)
