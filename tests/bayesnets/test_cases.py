"""bayesnets: stratified contexts, the contexts contract and the simulated-agent bridge."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

import bayesnets
from bayesnets import Network
from tests.bayesnets.test_network import forward_sample

CHILD_EVIDENCE = ["Age", "GruntingReport", "LVHreport", "XrayReport", "LowerBodyO2"]


@pytest.fixture(scope="module")
def child() -> Network:
    return bayesnets.load("child")


def all_truths(net: Network, target: str, state: str, evars: list[str]) -> np.ndarray:
    grid = pd.DataFrame(list(itertools.product(*(net.states[v] for v in evars))),
                        columns=evars, dtype=object)
    return bayesnets.posterior(net, target, grid)[state].to_numpy()


def test_sample_cases_table(child: Network) -> None:
    cases = bayesnets.sample_cases(child, "Disease", CHILD_EVIDENCE, 300, state="Fallot", rng=1)
    assert list(cases.columns) == ["context", *CHILD_EVIDENCE, "truth", "outcome"]
    assert cases["context"].tolist() == list(range(300))
    assert cases["truth"].dtype == np.float64 and cases["outcome"].dtype == np.int64
    assert set(cases["outcome"].unique()) <= {0, 1}
    for v in CHILD_EVIDENCE:
        assert list(cases[v].cat.categories) == list(child.states[v])
    # the truth is the exact posterior of the context's evidence
    post = bayesnets.posterior(child, "Disease", cases[CHILD_EVIDENCE])["Fallot"]
    np.testing.assert_allclose(cases["truth"], post, rtol=0, atol=1e-12)
    assert cases.attrs["target"] == "Disease" and cases.attrs["state"] == "Fallot"


@pytest.mark.parametrize(("n", "bins"), [(200, 20), (1000, 20), (57, 10)])
def test_stratification_is_flat_over_reachable_bins(child: Network, n: int, bins: int) -> None:
    cases = bayesnets.sample_cases(child, "Disease", CHILD_EVIDENCE, n, state="Fallot",
                                   bins=bins, rng=n)
    q = all_truths(child, "Disease", "Fallot", CHILD_EVIDENCE)
    reachable = set(np.minimum(np.floor(q * bins), bins - 1).astype(int).tolist())
    assert cases.attrs["empty_bins"] == sorted(set(range(bins)) - reachable)
    which = np.minimum(np.floor(cases["truth"] * bins), bins - 1).astype(int)
    counts = np.bincount(which, minlength=bins)
    assert set(np.flatnonzero(counts).tolist()) == reachable
    filled = counts[sorted(reachable)]
    assert filled.max() - filled.min() <= 1
    assert filled.sum() == n


def test_contexts_distinct_until_bin_exhausted(child: Network) -> None:
    cases = bayesnets.sample_cases(child, "Disease", CHILD_EVIDENCE, 400, state="Fallot",
                                   bins=20, rng=0)
    which = np.minimum(np.floor(cases["truth"] * 20), 19).astype(int)
    q = all_truths(child, "Disease", "Fallot", CHILD_EVIDENCE)
    per_bin = np.bincount(np.minimum(np.floor(q * 20), 19).astype(int), minlength=20)
    keys = cases[CHILD_EVIDENCE].astype(str).agg("|".join, axis=1)
    for b in np.unique(which):
        in_bin = keys[which == b]
        assert in_bin.nunique() == min(len(in_bin), per_bin[b])


def test_outcomes_drawn_from_truth(child: Network) -> None:
    cases = bayesnets.sample_cases(child, "Disease", CHILD_EVIDENCE, 4000, state="Fallot",
                                   rng=5)
    # sum of outcomes ~ Poisson-binomial(truths): z-test with the exact variance
    t = cases["truth"].to_numpy()
    z = (cases["outcome"].sum() - t.sum()) / np.sqrt((t * (1 - t)).sum())
    assert abs(z) < 4
    # and by bin of truth (low versus high)
    low, high = cases["truth"] < 0.3, cases["truth"] > 0.7
    assert cases.loc[low, "outcome"].mean() < 0.3 < 0.7 < cases.loc[high, "outcome"].mean()


def test_reproducible_from_rng(child: Network) -> None:
    a = bayesnets.sample_cases(child, "Disease", CHILD_EVIDENCE, 50, state="Fallot", rng=3)
    b = bayesnets.sample_cases(child, "Disease", CHILD_EVIDENCE, 50, state="Fallot",
                               rng=np.random.default_rng(3))
    c = bayesnets.sample_cases(child, "Disease", CHILD_EVIDENCE, 50, state="Fallot", rng=4)
    pd.testing.assert_frame_equal(a, b)
    assert not a["truth"].equals(c["truth"])


def test_binary_target_default_state() -> None:
    cases = bayesnets.sample_cases("asia", "lung", ["smoke", "xray", "dysp"], 40, rng=0)
    assert cases.attrs["state"] == "yes"
    post = bayesnets.posterior("asia", "lung", cases[["smoke", "xray", "dysp"]])["yes"]
    np.testing.assert_allclose(cases["truth"], post, atol=1e-12)


def test_min_support_on_fitted_network(child: Network) -> None:
    data = forward_sample(child, 20_000, np.random.default_rng(2))
    fitted = bayesnets.fit(data, child.edges(), min_support=100)
    evars = ["Age", "GruntingReport", "XrayReport"]
    cases = bayesnets.sample_cases(fitted, "Sick", evars, 300, rng=0)
    counts = data.groupby(evars).size()
    support = counts.reindex(pd.MultiIndex.from_frame(cases[evars].astype(object))).to_numpy()
    assert np.nanmin(support) >= 100
    # some configurations are excluded by the rule: with min_support=0 more are used
    loose = bayesnets.sample_cases(fitted, "Sick", evars, 2000, min_support=0, rng=0)
    used = loose[evars].astype(str).agg("|".join, axis=1).nunique()
    strict = bayesnets.sample_cases(fitted, "Sick", evars, 2000, rng=0)
    assert strict[evars].astype(str).agg("|".join, axis=1).nunique() < used
    with pytest.raises(ValueError, match=r"sample_cases: no configuration of \['Age', "
                                         r"'GruntingReport', 'XrayReport'\] with support >= "
                                         r"100000"):
        bayesnets.sample_cases(fitted, "Sick", evars, 10, min_support=100_000)


@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    ({"evidence_vars": ["Age", "Disease"]}, ValueError, "must be free of the target 'Disease'"),
    ({"evidence_vars": ["Age", "Age"]}, ValueError, "must be free of duplicates"),
    ({"evidence_vars": ["Age", "Colour"]}, ValueError,
     r"The 'evidence_vars' parameter of sample_cases must be a variable of network 'child'"),
    ({"evidence_vars": "Age"}, TypeError, "must be a sequence of variable names"),
    ({"evidence_vars": []}, ValueError, "must be non-empty"),
    ({"n": 0}, ValueError, r"The 'n' parameter of sample_cases must be an int >= 1; got 0"),
    ({"bins": 0}, ValueError, r"The 'bins' parameter of sample_cases must be an int >= 1"),
    ({"min_support": 5}, ValueError, r"must be 0 for a network not fitted to data"),
    ({"state": None}, ValueError, r"The 'state' parameter of sample_cases must be given for "
                                  r"target 'Disease' with 6 states"),
    ({"state": "Flu"}, ValueError, r"sample_cases: unknown state 'Flu' of variable 'Disease'"),
    ({"rng": -1}, ValueError, r"The 'rng' parameter of sample_cases must be a non-negative"),
])
def test_sample_cases_validation(child: Network, kwargs: dict, exc: type, match: str) -> None:
    args = {"evidence_vars": ["Age", "Sick"], "n": 10, "state": "Fallot", **kwargs}
    with pytest.raises(exc, match=match):
        bayesnets.sample_cases(child, "Disease", **args)


def test_unreachable_evidence_raises() -> None:
    # a fitted network whose support rule excludes every configuration
    df = pd.DataFrame({"a": ["x", "y"] * 5, "b": ["u", "u", "v", "v", "u"] * 2})
    net = bayesnets.fit(df, [("a", "b")], min_support=50)
    with pytest.raises(ValueError, match="with support >= 50 has positive probability"):
        bayesnets.sample_cases(net, "b", ["a"], 5, state="u")


# --------------------------------------------------------------------------- contexts
def test_contexts_contract() -> None:
    table = bayesnets.contexts(n=60, rng=0)
    assert list(table.columns) == ["context", *CHILD_EVIDENCE, "truth", "outcome",
                                   "description"]
    assert table.attrs["question"] == \
        "What is the probability that the newborn has tetralogy of Fallot?"
    assert table.attrs["subject"] == "the newborn"
    assert table.attrs["network"] == "child" and table.attrs["target"] == "Disease"
    first = table.iloc[0]
    assert first["description"] == bayesnets.describe(first[CHILD_EVIDENCE], "child")
    assert table["description"].map(type).eq(str).all()


def test_contexts_other_networks_and_custom_phrases() -> None:
    t = bayesnets.contexts("alarm", n=30, rng=1)
    assert t.attrs["question"] == \
        "What is the probability that the patient has hypovolemia?"
    phrases = {"smoke": {"yes": "smokes", "no": "never smoked"},
               "xray": {"yes": "has a shadow on the X-ray", "no": "has a clear X-ray"},
               "lung": {"yes": "has lung cancer", "no": "is cancer-free"}}
    t = bayesnets.contexts("asia", target="lung", evidence_vars=["smoke", "xray"], n=8,
                           phrases=phrases, rng=0)
    assert t["description"].isin([f"{a} and {b}" for a in ("smokes", "never smoked")
                                  for b in ("has a shadow on the X-ray",
                                            "has a clear X-ray")]).all()
    assert t.attrs["question"] == "What is the probability that the patient has lung cancer?"
    with pytest.raises(ValueError, match=r"The 'target' parameter of contexts must be given "
                                         r"for a network without a default study"):
        bayesnets.contexts("hepar2", n=5)


# --------------------------------------------------------------------------- the bridge
def test_simulated_agent_study_rational() -> None:
    study = bayesnets.simulated_agent_study(n_contexts=100, n_repetitions=3, rng=0)
    data = study.data
    assert len(data) == 300
    assert {"context", "repetition", "prompt", "belief", "action", "outcome", "truth",
            *CHILD_EVIDENCE, "description"} <= set(data.columns)
    assert study.truth.cmi == 0.0
    by_ctx = data.groupby("context")
    for col in [*CHILD_EVIDENCE, "truth", "outcome", "description"]:
        assert (by_ctx[col].nunique() == 1).all(), col
    # the truths are the network posteriors of the evidence columns
    net = bayesnets.load("child")
    post = bayesnets.posterior(net, "Disease", data[CHILD_EVIDENCE])["Fallot"]
    np.testing.assert_allclose(data["truth"], post, atol=1e-12)
    assert data.attrs["question"].endswith("tetralogy of Fallot?")
    # reproducible from rng
    again = bayesnets.simulated_agent_study(n_contexts=100, n_repetitions=3, rng=0)
    pd.testing.assert_frame_equal(data, again.data)


def test_simulated_agent_study_leaky_and_outcomes() -> None:
    study = bayesnets.simulated_agent_study(agent="leaky", n_contexts=400, n_repetitions=1,
                                            rng=2)
    assert study.truth.cmi > 0.0
    d = study.data
    t = d["truth"].to_numpy()
    z = (d["outcome"].sum() - t.sum()) / np.sqrt((t * (1 - t)).sum())
    assert abs(z) < 4
    # with truths spread over [0, 1], the rational belief tracks the truth
    rational = bayesnets.simulated_agent_study(n_contexts=200, n_repetitions=1, rng=2).data
    assert stats.spearmanr(rational["belief"], rational["truth"]).statistic > 0.95


@given(n=st.integers(1, 300), bins=st.integers(1, 30), seed=st.integers(0, 2**16))
def test_property_stratification(n: int, bins: int, seed: int) -> None:
    net = bayesnets.load("child")
    evars = ["Age", "XrayReport", "LowerBodyO2"]
    cases = bayesnets.sample_cases(net, "Disease", evars, n, state="TGA", bins=bins, rng=seed)
    assert len(cases) == n and cases["context"].is_unique
    which = np.minimum(np.floor(cases["truth"] * bins), bins - 1).astype(int)
    counts = np.bincount(which, minlength=bins)
    reachable = sorted(set(range(bins)) - set(cases.attrs["empty_bins"]))
    filled = counts[reachable]
    assert filled.max() - filled.min() <= 1
    assert counts[cases.attrs["empty_bins"]].sum() == 0


def test_contexts_fitted_network_does_not_borrow_a_built_in_table() -> None:
    # variables named as asia's: the asia wording ("lung cancer") was used without a word
    rng = np.random.default_rng(0)
    smoke = rng.choice(["yes", "no"], 400)
    lung = np.where(rng.random(400) < np.where(smoke == "yes", 0.4, 0.1), "yes", "no")
    net = bayesnets.fit(pd.DataFrame({"smoke": smoke, "lung": lung}), [("smoke", "lung")],
                        min_support=1)
    with pytest.raises(ValueError, match=r"'phrases' parameter of contexts must be given "
                                         r"for network 'fitted', which has no built-in"):
        bayesnets.contexts(net, target="lung", state="yes", evidence_vars=["smoke"], n=4,
                           rng=0)
    t = bayesnets.contexts(net, target="lung", state="yes", evidence_vars=["smoke"], n=4,
                           phrases="asia", rng=0)
    assert t.attrs["question"] == "What is the probability that the patient has lung cancer?"


def test_contexts_evidence_vars_as_one_string() -> None:
    # issue 17: a single name used to be split into letters ('s' is not a variable)
    with pytest.raises(TypeError, match=r"The 'evidence_vars' parameter of contexts must be a "
                       r"sequence of variable names; got 'smoke'"):
        bayesnets.contexts("asia", target="lung", evidence_vars="smoke", n=5, rng=0)


@pytest.mark.parametrize(("call", "match"), [
    (lambda: bayesnets.contexts("child", n=0, rng=0), "The 'n' parameter of contexts"),
    (lambda: bayesnets.contexts("child", bins=0, rng=0), "The 'bins' parameter of contexts"),
    (lambda: bayesnets.contexts("child", state="Flu", rng=0), "contexts: unknown state 'Flu'"),
    (lambda: bayesnets.simulated_agent_study("child", bins=0, rng=0),
     "The 'bins' parameter of simulated_agent_study"),
    (lambda: bayesnets.simulated_agent_study("child", n_repetitions=0, rng=0),
     "The 'n_repetitions' parameter of simulated_agent_study"),
])
def test_errors_name_the_function_called(call, match) -> None:
    # they named sample_cases (or simulate), which the user did not call
    with pytest.raises(ValueError, match=match):
        call()


def _net_with(name: str) -> Network:
    """A fitted network whose evidence variable is called ``name``."""
    gen = np.random.default_rng(0)
    x = gen.choice(["good", "bad"], 400)
    y = np.where((x == "bad") & (gen.random(400) < 0.8) | (gen.random(400) < 0.1), "yes", "no")
    return bayesnets.fit(pd.DataFrame({name: x, "disease": y}), [(name, "disease")],
                         min_support=0)


@pytest.mark.parametrize("name", ["truth", "outcome", "context"])
def test_sample_cases_refuses_evidence_named_like_its_columns(name: str) -> None:
    # the variable's states would be overwritten by the truth / outcome / context id
    with pytest.raises(ValueError, match=rf"'evidence_vars' parameter of sample_cases .*"
                                         rf"rename the variable\(s\) \['{name}'\]"):
        bayesnets.sample_cases(_net_with(name), "disease", [name], 6, state="yes", rng=0)


def test_contexts_refuses_evidence_named_description() -> None:
    with pytest.raises(ValueError, match=r"'evidence_vars' parameter of contexts .*"
                                         r"\['description'\]"):
        bayesnets.contexts(_net_with("description"), target="disease", state="yes",
                           evidence_vars=["description"], n=4, rng=0)


def test_simulated_agent_study_refuses_evidence_named_like_its_columns() -> None:
    phrases = {"belief": {"good": "is well", "bad": "is unwell"},
               "disease": {"yes": "has the disease", "no": "is healthy"}}
    with pytest.raises(ValueError, match=r"'evidence_vars' parameter of "
                                         r"simulated_agent_study .*\['belief'\]"):
        bayesnets.simulated_agent_study(_net_with("belief"), target="disease", state="yes",
                                        evidence_vars=["belief"], n_contexts=4,
                                        n_repetitions=1, phrases=phrases, rng=0)


def test_a_target_among_the_default_evidence_variables_asks_for_them() -> None:
    # was refused as sample_cases' evidence_vars, which the caller had not given
    ctx = bayesnets.contexts("asia", target="tub", n=4, rng=0)
    assert list(ctx.columns[1:-3]) == ["asia", "smoke", "xray", "dysp"]
    for call in (bayesnets.contexts, bayesnets.lie_study):
        with pytest.raises(ValueError, match=r"'evidence_vars' parameter of (contexts|"
                                             r"lie_study) must be given for target 'smoke', "
                                             r"which the default evidence variables of "
                                             r"network 'asia' \(asia, smoke, xray, dysp\)"):
            call("asia", target="smoke", rng=0)


def test_fit_names_the_rows_with_missing_values_as_the_user_wrote_them():
    """The rows are the index's labels as plain values and the list says where it was cut
    (they read ``np.int64(3)``, and the sixth row on was left out without a word)."""
    df = pd.DataFrame({"a": [0.0, 1.0] * 5, "b": [None] * 7 + [1.0] * 3},
                      index=range(3, 13))
    with pytest.raises(ValueError, match=r"Column 'b' \(input to fit\) must not contain "
                       r"missing values; 7 offending rows \(first: 3, 4, 5, 6, 7, \.\.\.\)\."):
        bayesnets.fit(df, [("a", "b")], min_support=1)
