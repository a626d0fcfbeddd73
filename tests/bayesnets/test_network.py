"""bayesnets: loading bundled networks, pgmpy round trips and maximum-likelihood fitting."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import bayesnets
from bayesnets import Network


def forward_sample(net: Network, n: int, rng: np.random.Generator) -> pd.DataFrame:
    """Ancestral sampling: the obvious reference sampler for the fitting tests."""
    codes: dict[str, np.ndarray] = {}
    for v in net.variables:
        table = net.cpts[v]
        probs = table[(slice(None), *(codes[p] for p in net.parents[v]))]
        probs = probs.reshape(table.shape[0], -1) if net.parents[v] else \
            np.repeat(table[:, None], n, axis=1)
        u = rng.random(n)
        codes[v] = np.minimum((u[None, :] > np.cumsum(probs, axis=0)).sum(axis=0),
                              table.shape[0] - 1)
    return pd.DataFrame({v: np.array(net.states[v], dtype=object)[c] for v, c in codes.items()})


@pytest.fixture(scope="module")
def child() -> Network:
    return bayesnets.load("child")


@pytest.mark.parametrize(("name", "n_nodes"), [("asia", 8), ("cancer", 5), ("child", 20),
                                               ("alarm", 37)])
def test_load_bundled_networks(name: str, n_nodes: int) -> None:
    net = bayesnets.load(name)
    assert len(net.variables) == n_nodes
    assert bayesnets.load(name) is net  # cached
    seen: set[str] = set()
    for v in net.variables:  # topological order, CPT columns sum to one, read-only
        assert set(net.parents[v]) <= seen
        seen.add(v)
        table = net.cpts[v]
        assert table.shape == (net.cardinality(v), *(net.cardinality(p) for p in net.parents[v]))
        np.testing.assert_allclose(table.sum(axis=0), 1.0, atol=1e-14)  # renormalised
        assert not table.flags.writeable


def test_load_unknown_name() -> None:
    with pytest.raises(ValueError, match=r"The 'name' parameter of load must be one of .*"
                                         r"'child'.*; got 'chlid'"):
        bayesnets.load("chlid")


def test_import_does_not_import_pgmpy() -> None:
    code = ("import sys, bayesnets; assert 'pgmpy' not in sys.modules; "
            "bayesnets.describe({'smoke': 'yes'}, 'asia'); assert 'pgmpy' not in sys.modules")
    subprocess.run([sys.executable, "-c", code], check=True, cwd=".")


def test_pgmpy_round_trip(child: Network) -> None:
    model = child.to_pgmpy()
    assert model.check_model()
    again = Network.from_pgmpy(model)
    assert again.variables == child.variables
    for v in child.variables:
        np.testing.assert_allclose(again.cpts[v], child.cpts[v], rtol=1e-15, atol=0)
    # a pgmpy model is accepted wherever a network is
    ev = pd.DataFrame({"Age": ["0-3_days"], "Sick": ["yes"]})
    pd.testing.assert_frame_equal(bayesnets.posterior(model, "Disease", ev),
                                  bayesnets.posterior(child, "Disease", ev))


def test_fit_recovers_cpts(child: Network) -> None:
    rng = np.random.default_rng(1)
    n = 100_000
    data = forward_sample(child, n, rng)
    fitted = bayesnets.fit(data, child.edges(), min_support=100)
    assert fitted.name == "fitted" and fitted.min_support == 100
    assert set(fitted.variables) == set(child.variables)
    n_checked = 0
    worst = 0.0
    for v in child.variables:
        pa = child.parents[v]
        assert fitted.parents[v] == pa
        support = fitted.support[v]  # type: ignore[index]
        assert support.sum() == n
        # fitted states are sorted; map them onto the network's order
        perm = [fitted.states[u].index(s) for u in (v, *pa) for s in child.states[u]]
        sizes = [child.cardinality(u) for u in (v, *pa)]
        splits = np.split(np.array(perm), np.cumsum(sizes)[:-1])
        table = fitted.cpts[v][np.ix_(*splits)]
        sup = support[np.ix_(*splits[1:])] if pa else support
        truth = child.cpts[v]
        se = np.sqrt(truth * (1 - truth) / np.maximum(sup, 1))
        ok = np.broadcast_to(sup >= 500, truth.shape)
        z = np.abs(table - truth)[ok] / np.maximum(se[ok], 1e-12)
        worst = max(worst, float(z.max()))
        n_checked += int(ok.sum())
    assert n_checked > 150
    assert worst < 5.5  # no estimate further than 5.5 standard errors from the truth


def test_fit_small_exact_and_unseen_configuration() -> None:
    df = pd.DataFrame({"a": [0, 0, 0, 1], "b": ["x", "y", "y", "y"], "c": [1, 1, 2, 2]})
    net = bayesnets.fit(df, [("a", "b"), ("a", "c"), ("b", "c")], min_support=0)
    assert net.states["a"] == (0, 1)
    np.testing.assert_allclose(net.cpts["a"], [0.75, 0.25])
    np.testing.assert_allclose(net.cpts["b"], [[1 / 3, 0.0], [2 / 3, 1.0]])
    # (a=1, b=x) never occurs: uniform CPT, support 0
    assert net.support["c"][1, 0] == 0  # type: ignore[index]
    np.testing.assert_allclose(net.cpts["c"][:, 1, 0], [0.5, 0.5])
    np.testing.assert_array_equal(net.support["c"], [[1, 2], [0, 1]])  # type: ignore[index]


def test_fit_accepts_a_pgmpy_dag(child: Network) -> None:
    data = forward_sample(child, 2_000, np.random.default_rng(0))
    a = bayesnets.fit(data, child.to_pgmpy())
    b = bayesnets.fit(data, child.edges())
    for v in child.variables:
        np.testing.assert_array_equal(a.cpts[v], b.cpts[v])


@pytest.mark.parametrize(("edges", "exc", "match"), [
    ("a->b", TypeError, r"The 'edges' parameter of fit must be a list of \(parent, child\) "
                        r"pairs or a pgmpy model; got 'str'"),
    ([("a",)], ValueError, r"The 'edges' parameter of fit must be a list of \(parent, child\) "
                           r"pairs; got \('a',\)"),
    ([("a", "a")], ValueError, "must be free of self-loops"),
    ([("a", "b"), ("b", "a")], ValueError, "contain a cycle"),
    ([("a", "z")], ValueError, r"fit: column 'z' not found in data"),
])
def test_fit_validation(edges: object, exc: type, match: str) -> None:
    df = pd.DataFrame({"a": [0, 1], "b": [1, 0]})
    with pytest.raises(exc, match=match):
        bayesnets.fit(df, edges)


def test_fit_accepts_edges_as_an_array_of_pairs() -> None:
    """An (m, 2) array of names: its rows were refused one by one ("must be a list of
    (parent, child) pairs; got array(['a', 'b'])") though an array is accepted."""
    df = pd.DataFrame({"a": [0, 1, 1], "b": [1, 0, 0], "c": [0, 0, 1]})
    net = bayesnets.fit(df, np.array([["a", "b"], ["b", "c"]]), min_support=0)
    assert dict(net.parents) == {"a": (), "b": ("a",), "c": ("b",)}
    with pytest.raises(ValueError, match=r"must be a list of \(parent, child\) pairs"):
        bayesnets.fit(df, np.array([["a", "b", "c"]]))


def test_fit_orders_a_long_chain_listed_child_first() -> None:
    """A path of 1,500 variables whose edges are listed child first: the recursive
    topological sort failed with a RecursionError."""
    n = 1_500
    df = pd.DataFrame({f"v{i}": np.resize([0, 1], 4) for i in range(n)})
    net = bayesnets.fit(df, [(f"v{i}", f"v{i + 1}") for i in reversed(range(n - 1))],
                        min_support=0)
    assert net.variables == tuple(f"v{i}" for i in range(n))


def test_fit_validation_data() -> None:
    df = pd.DataFrame({"a": [0, None, 1], "b": [1, 0, 0]})
    with pytest.raises(ValueError, match=r"Column 'a' \(input to fit\) must not contain "
                                         r"missing values; 1 offending rows \(first: 1\)"):
        bayesnets.fit(df, [("a", "b")])
    with pytest.raises(ValueError, match=r"The 'min_support' parameter of fit must be an int "
                                         r">= 0; got -1"):
        bayesnets.fit(df.dropna(), [("a", "b")], min_support=-1)
    with pytest.raises(TypeError, match="The 'data' parameter of fit"):
        bayesnets.fit(3, [("a", "b")])


def test_pgmpy_model_is_not_cached_stale() -> None:
    from pgmpy.factors.discrete import TabularCPD

    model = bayesnets.load("asia").to_pgmpy().copy()
    before = bayesnets.posterior(model, "lung", {"xray": "yes"})
    model.remove_cpds(model.get_cpds("smoke"))
    model.add_cpds(TabularCPD("smoke", 2, [[0.9], [0.1]],
                              state_names={"smoke": ["yes", "no"]}))
    after = bayesnets.posterior(model, "lung", {"xray": "yes"})
    assert after["yes"].iloc[0] > before["yes"].iloc[0] + 0.05


@given(codes=st.lists(st.tuples(st.integers(0, 2), st.integers(0, 1), st.integers(0, 3)),
                      min_size=1, max_size=60))
def test_property_fit_is_conditional_frequency(codes: list[tuple[int, int, int]]) -> None:
    df = pd.DataFrame(codes, columns=["a", "b", "c"])
    net = bayesnets.fit(df, [("a", "c"), ("b", "c")], min_support=0)
    table = net.cpts["c"]
    np.testing.assert_allclose(table.sum(axis=0), 1.0, atol=1e-12)
    assert net.support["c"].sum() == len(df)  # type: ignore[index]
    # P(c | a, b) of the fitted network is the empirical conditional frequency
    for (a, b), grp in df.groupby(["a", "b"]):
        ia, ib = net.states["a"].index(a), net.states["b"].index(b)
        freq = grp["c"].value_counts(normalize=True)
        post = bayesnets.posterior(net, "c", {"a": a, "b": b}).iloc[0]
        for s, p in zip(net.states["c"], post, strict=True):
            assert p == pytest.approx(freq.get(s, 0.0), abs=1e-12)
            assert table[net.states["c"].index(s), ia, ib] == pytest.approx(p, abs=1e-12)


def test_a_cpd_listing_parent_states_in_another_order_is_read_by_its_labels() -> None:
    # B's CPD lists A's states as (a1, a0): its columns were read in A's order (a0, a1),
    # which swapped P(B | A) without a word (pgmpy's own check_model refuses the model)
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.models import DiscreteBayesianNetwork

    def model(parent_order: list[str]) -> DiscreteBayesianNetwork:
        m = DiscreteBayesianNetwork([("A", "B")])
        columns = {"a0": [0.2, 0.8], "a1": [0.99, 0.01]}
        values = np.array([columns[s] for s in parent_order]).T
        m.add_cpds(TabularCPD("A", 2, [[0.9], [0.1]], state_names={"A": ["a0", "a1"]}),
                   TabularCPD("B", 2, values, evidence=["A"], evidence_card=[2],
                              state_names={"B": ["b0", "b1"], "A": parent_order}))
        return m

    for order in (["a0", "a1"], ["a1", "a0"]):
        post = bayesnets.posterior(model(order), "B", {"A": "a1"})
        assert post.iloc[0].tolist() == pytest.approx([0.99, 0.01])
    bad = model(["a1", "a0"])
    cpd = bad.get_cpds("B")
    cpd.state_names["A"] = ["a1", "a2"]
    with pytest.raises(ValueError, match=r"CPD of 'B' lists the states of its parent 'A'"):
        Network.from_pgmpy(bad)


def _two_node_model(a_values: list[list[float]], b_values: list[list[float]],
                    a_states: list[object], b_lists_a: list[object]) -> object:
    from pgmpy.factors.discrete import TabularCPD
    from pgmpy.models import DiscreteBayesianNetwork

    m = DiscreteBayesianNetwork([("A", "B")])
    m.add_cpds(TabularCPD("A", 2, a_values, state_names={"A": a_states}),
               TabularCPD("B", 2, b_values, evidence=["A"], evidence_card=[2],
                          state_names={"B": ["b0", "b1"], "A": b_lists_a}))
    return m


@pytest.mark.parametrize(("a_values", "b_values", "got"), [
    # columns far from summing to one were divided by their sums without a word
    ([[0.3], [0.3]], [[0.9, 0.2], [0.1, 0.8]], r"CPD of 'A' has 1 column.*no parents\): sum 0.6"),
    ([[0.3], [0.7]], [[0.9, 0.2], [0.3, 0.8]], r"CPD of 'B' has 1 column.*A='a0'\): sum 1.2"),
    # an all-zero column gave NaN posteriors
    ([[0.3], [0.7]], [[0.9, 0.0], [0.1, 0.0]], r"CPD of 'B' has 1 column.*A='a1'\): sum 0.0"),
])
def test_cpt_columns_not_summing_to_one_are_refused(a_values: list[list[float]],
                                                    b_values: list[list[float]],
                                                    got: str) -> None:
    model = _two_node_model(a_values, b_values, ["a0", "a1"], ["a0", "a1"])
    with pytest.raises(ValueError, match=r"from_pgmpy must be a network whose CPT columns "
                       r"hold probabilities summing to one \(within 0.01.*" + got):
        bayesnets.posterior(model, "A", {"B": "b0"})


def test_cpt_rounding_is_still_renormalised() -> None:
    # a table printed to three decimals (columns 0.999) is rounding: read, renormalised
    # (pgmpy's check_model accepts columns within 0.01 of one)
    third = 0.333
    model = _two_node_model([[0.5], [0.5]], [[third, 0.5], [2 * third, 0.5]], ["a0", "a1"],
                            ["a0", "a1"])
    net = Network.from_pgmpy(model)
    np.testing.assert_allclose(net.cpts["B"][:, 0], [1 / 3, 2 / 3], rtol=1e-12)


def test_a_cpd_naming_parent_states_as_text_is_read_by_its_labels() -> None:
    # A's own CPD has states 0, 1; B's lists them as '1', '0': a raw "0 is not in list"
    model = _two_node_model([[0.3], [0.7]], [[0.9, 0.2], [0.1, 0.8]], [0, 1], ["1", "0"])
    net = Network.from_pgmpy(model)
    np.testing.assert_array_equal(net.cpts["B"], [[0.2, 0.9], [0.8, 0.1]])
    assert bayesnets.posterior(net, "B", {"A": 1}).iloc[0].tolist() == pytest.approx([0.9, 0.1])


def test_fit_refuses_variables_not_named_by_text() -> None:
    # a frame built from an array has columns 0, 1: the fitted network could not be queried
    # (check_variable failed with a raw TypeError from str.join)
    df = pd.DataFrame(np.random.default_rng(0).integers(0, 2, size=(20, 2)))
    with pytest.raises(TypeError, match=r"'edges' parameter of fit must be variables named "
                       r"by text \(str\).*astype\(str\).*; got \[0, 1\]"):
        bayesnets.fit(df, [(0, 1)], min_support=0)
    with pytest.raises(TypeError, match=r"named by text"):
        bayesnets.fit(df, [], min_support=0)


@pytest.mark.parametrize(("column", "values", "found"), [
    ("smoker", ["yes", "Yes ", "no", "no"], r"'Yes ' / 'yes'"),
    ("cough", [1, "1", 0, 0], r"'1' / 1"),
])
def test_fit_refuses_a_label_typed_two_ways(column: str, values: list[object],
                                            found: str) -> None:
    # they became two states of one category, splitting its rows and its CPT without a word
    df = pd.DataFrame({"smoker": ["yes", "yes", "no", "no"], "cough": [1, 1, 0, 0]})
    df[column] = pd.Series(values, dtype=object)
    with pytest.raises(ValueError, match=rf"Column '{column}' \(input to fit\) must hold "
                       rf"labels that differ by more than case.*{found}"):
        bayesnets.fit(df, [("smoker", "cough")], min_support=0)


def test_fit_refuses_unobserved_categories_of_a_categorical_column() -> None:
    # a declared category no row has was dropped from the states without a word; fit has no
    # pseudo-count to give it a probability, so it is an error naming it
    df = pd.DataFrame({"x": pd.Categorical(["b", "a", "b", "a"], categories=["a", "b", "c"]),
                       "y": ["u", "v", "u", "u"]})
    with pytest.raises(ValueError, match=r"Column 'x' \(input to fit\) is categorical with 1 "
                       r"category that no row has: 'c'\..*remove_unused_categories"):
        bayesnets.fit(df, [("x", "y")], min_support=0)
    df["y"] = pd.Categorical(df["y"], categories=["w", "u", "v", "z"])
    df["x"] = df["x"].cat.remove_unused_categories()
    with pytest.raises(ValueError, match=r"Column 'y' .* 2 categories that no row has: "
                       r"'w', 'z'\."):
        bayesnets.fit(df, [("x", "y")], min_support=0)
    # every category observed: the states are the categories, in their order
    df["y"] = df["y"].cat.remove_unused_categories()
    net = bayesnets.fit(df, [("x", "y")], min_support=0)
    assert net.states == {"x": ("a", "b"), "y": ("u", "v")}
    np.testing.assert_allclose(net.cpts["y"], [[0.5, 1.0], [0.5, 0.0]])


def test_fit_refuses_booleans_mixed_with_other_values() -> None:
    # True == 1 in Python: True and 1 became one state (P(A = True) 0.5 where True is 2 of 6
    # rows), and 'True' a state apart from True
    b = ["a", "b", "a", "b", "a", "b"]
    clean = bayesnets.fit(pd.DataFrame({"A": [True, True, False, False, 1 > 0, 0 > 1],
                                        "B": b}), [("A", "B")], min_support=1)
    assert clean.states["A"] == (False, True)
    np.testing.assert_allclose(clean.cpts["A"], [0.5, 0.5])
    for values in ([True, 1, 0, False, 2, 2], [True, 1.0, 0.0, False, 1.0, 1.0],
                   ["True", True, True, False, False, False], [np.True_, 1, 0, 0, 0, 0]):
        df = pd.DataFrame({"A": pd.Series(values, dtype=object), "B": b})
        df.index = [10, 11, 12, 13, 14, 15]
        with pytest.raises(ValueError, match=r"Column 'A' \(input to fit\) holds booleans "
                                             r"\(True/False\) and \d other value\(s\) "
                                             r"\(rows: 1[0-5] "):
            bayesnets.fit(df, [("A", "B")], min_support=1)


def test_network_built_directly_refuses_a_cpt_column_not_summing_to_one():
    """A network built directly with a CPT column summing to 2 answered P(b | a=0) with
    the column renormalised (0.45 / 0.55) and P(a | b=0) with it as given (0.818 instead
    of 0.529): two answers of one network that disagree, without a word."""
    parts = {"name": "t", "variables": ("a", "b"), "states": {"a": (0, 1), "b": (0, 1)},
             "parents": {"a": (), "b": ("a",)}}
    with pytest.raises(ValueError, match=r"The 'cpts' parameter of Network must be a network "
                       r"whose CPT columns hold probabilities summing to one \(within 1e-09\); "
                       r"the CPD of 'b' has 1 column\(s\) that do not.*\(a=0\): sum 2\.0"):
        Network(**parts, cpts={"a": np.array([0.5, 0.5]),
                               "b": np.array([[0.9, 0.2], [1.1, 0.8]])})
    with pytest.raises(ValueError, match=r"'cpts' parameter of Network must be a CPT of shape "
                       r"\(2, 2\) for 'b'.*got 'shape \(2,\)'"):
        Network(**parts, cpts={"a": np.array([0.5, 0.5]), "b": np.array([0.5, 0.5])})
    net = Network(**parts, cpts={"a": np.array([0.5, 0.5]),
                                 "b": np.array([[0.45, 0.2], [0.55, 0.8]])})
    post = bayesnets.posterior(net, "a", pd.DataFrame({"b": [0]}))
    assert post.loc[0, 0] == pytest.approx(0.225 / 0.325)
