"""Property tests of the exact inference layer: ``posterior`` and ``auxiliary`` against a
brute-force enumeration of the full joint (asia, cancer) and against one-row queries (child,
where rows of common and rare evidence patterns take different code paths); metamorphic
relations (row order, evidence column order, index labels, categorical vs text states,
an all-missing column); ``joint_table``'s marginal and transposition consistency."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import bayesnets
from bayesnets import Network

_TOL = 1e-12


@pytest.fixture(scope="module")
def nets() -> dict[str, Network]:
    return {name: bayesnets.load(name) for name in ("asia", "cancer", "child")}


@pytest.fixture(scope="module")
def joints(nets: dict[str, Network]) -> dict[str, np.ndarray]:
    """The full joints of the small networks by enumeration (product of CPT entries)."""
    out = {}
    for name in ("asia", "cancer"):
        net = nets[name]
        cards = [net.cardinality(v) for v in net.variables]
        pos = {v: i for i, v in enumerate(net.variables)}
        joint = np.zeros(cards)
        for a in itertools.product(*(range(c) for c in cards)):
            p = 1.0
            for v in net.variables:
                p *= net.cpts[v][(a[pos[v]], *(a[pos[u]] for u in net.parents[v]))]
            joint[a] = p
        out[name] = joint
    return out


def _conditional(net: Network, joint: np.ndarray, query: list[str], row: dict) -> np.ndarray:
    """P(query | row) from the full joint: slice the evidence, sum the rest, normalise."""
    index: list[object] = [slice(None)] * len(net.variables)
    for v, s in row.items():
        index[net.variables.index(v)] = net.states[v].index(s)
    sub = joint[tuple(index)]
    rest = [v for v in net.variables if v not in row]
    sub = sub.sum(axis=tuple(i for i, v in enumerate(rest) if v not in query))
    kept = [v for v in rest if v in query]
    sub = np.transpose(sub, [kept.index(v) for v in query])
    return sub / sub.sum()


def _forward(net: Network, n: int, rng: np.random.Generator) -> pd.DataFrame:
    """Ancestral sample (every row has positive probability), state names as text."""
    codes: dict[str, np.ndarray] = {}
    for v in net.variables:
        cpt = net.cpts[v]
        probs = cpt[(slice(None), *(codes[p] for p in net.parents[v]))] if net.parents[v] \
            else np.repeat(cpt[:, None], n, axis=1)
        u = rng.random(n)
        codes[v] = np.minimum((u[None, :] >= np.cumsum(probs, axis=0)).sum(axis=0),
                              cpt.shape[0] - 1)
    return pd.DataFrame({v: np.asarray(net.states[v], dtype=object)[codes[v]]
                         for v in net.variables})


@st.composite
def _evidence(draw, net: Network, target: str, max_rows: int = 40) -> pd.DataFrame:
    """Rows of a forward sample, each observing a random subset of the other variables;
    some rows repeated so that some evidence patterns are shared by >= 16 rows (one joint
    table each) while others are rare (the batched elimination)."""
    seed = draw(st.integers(0, 2**32 - 1))
    rng = np.random.default_rng(seed)
    n = draw(st.integers(1, max_rows))
    others = [v for v in net.variables if v != target]
    k = draw(st.integers(1, min(6, len(others))))
    cols = list(rng.choice(others, size=k, replace=False))
    sample = _forward(net, n, rng)[cols].astype(object)
    keep = rng.random((n, k)) < draw(st.sampled_from([0.3, 0.7, 1.0]))
    sample = sample.where(keep, None)
    if draw(st.booleans()):  # one evidence pattern shared by many rows
        sample = pd.concat([sample, sample.iloc[[0] * 18]], ignore_index=True)
    return sample


def _rows(df: pd.DataFrame) -> list[dict]:
    return [{c: s for c, s in row.items() if s is not None and not pd.isna(s)}
            for row in df.to_dict("records")]


@settings(max_examples=60, deadline=None)
@given(data=st.data(), name=st.sampled_from(["asia", "cancer"]))
def test_posterior_is_the_enumerated_conditional(nets, joints, data, name) -> None:
    net = nets[name]
    target = data.draw(st.sampled_from(net.variables))
    ev = data.draw(_evidence(net, target))
    got = bayesnets.posterior(net, target, ev)
    assert list(got.columns) == list(net.states[target])
    assert got.index.equals(ev.index)
    ref = np.array([_conditional(net, joints[name], [target], row) for row in _rows(ev)])
    np.testing.assert_allclose(got.to_numpy(), ref, rtol=0, atol=1e-10)


@pytest.mark.parametrize("name", ["asia", "cancer"])
@pytest.mark.parametrize("small", [("_MAX_JOINT_CELLS",), ("_MAX_BATCH_CELLS",),
                                   ("_MAX_JOINT_CELLS", "_MAX_BATCH_CELLS")])
def test_posterior_past_the_cell_budgets(nets, joints, name, small, monkeypatch) -> None:
    """Where a pattern's joint table would pass its budget, each distinct assignment is
    eliminated alone; where a batch of rare patterns would, each rare pattern is answered
    as a common one. Both (and the two together) give the enumerated conditional."""
    from bayesnets import _inference

    for budget in small:
        monkeypatch.setattr(_inference, budget, 0)
    net = nets[name]
    rng = np.random.default_rng(20261205)
    for target in net.variables:
        others = [v for v in net.variables if v != target]
        sample = _forward(net, 60, rng)[others].astype(object)
        sample = sample.where(rng.random(sample.shape) < 0.5, None)
        sample = pd.concat([sample, sample.iloc[[0] * 18]], ignore_index=True)  # one common
        got = bayesnets.posterior(net, target, sample)
        ref = np.array([_conditional(net, joints[name], [target], row) for row in _rows(sample)])
        np.testing.assert_allclose(got.to_numpy(), ref, rtol=0, atol=1e-10)


@settings(max_examples=40, deadline=None)
@given(data=st.data())
def test_posterior_rows_agree_with_one_row_queries_on_child(nets, data) -> None:
    """Common patterns (joint tables), rare ones (batched soft evidence) and one-row queries
    are three code paths: they must give the same numbers."""
    net = nets["child"]
    target = data.draw(st.sampled_from(["Disease", "LungParench", "Sick", "CardiacMixing"]))
    ev = data.draw(_evidence(net, target))
    got = bayesnets.posterior(net, target, ev).to_numpy()
    assert np.all(got >= 0) and np.allclose(got.sum(axis=1), 1.0, atol=1e-12)
    for i, row in enumerate(_rows(ev)):
        one = bayesnets.posterior(net, target, row).to_numpy()[0]
        np.testing.assert_allclose(got[i], one, rtol=0, atol=1e-10)


@settings(max_examples=50, deadline=None)
@given(data=st.data(), name=st.sampled_from(["asia", "child"]))
def test_posterior_metamorphic(nets, data, name) -> None:
    net = nets[name]
    target = data.draw(st.sampled_from(net.variables))
    ev = data.draw(_evidence(net, target))
    base = bayesnets.posterior(net, target, ev)
    rnd = np.random.default_rng(data.draw(st.integers(0, 2**16)))

    # shuffled and reversed rows, with text labels (duplicated ones too)
    perm = rnd.permutation(len(ev))
    labels = pd.Index([f"r{i % 7}" for i in range(len(ev))], dtype=object)
    shuffled = ev.set_axis(labels).iloc[perm]
    got = bayesnets.posterior(net, target, shuffled)
    assert got.index.equals(shuffled.index)
    np.testing.assert_allclose(got.to_numpy(), base.to_numpy()[perm], rtol=0, atol=_TOL)
    rev = bayesnets.posterior(net, target, ev.iloc[::-1])
    np.testing.assert_allclose(rev.to_numpy(), base.to_numpy()[::-1], rtol=0, atol=_TOL)

    # evidence columns in another order
    cols = list(ev.columns)
    got = bayesnets.posterior(net, target, ev[[cols[i] for i in rnd.permutation(len(cols))]])
    np.testing.assert_allclose(got.to_numpy(), base.to_numpy(), rtol=0, atol=_TOL)

    # categorical columns, categories in reverse order with an unused one
    cat = ev.copy()
    for c in cols:
        cat[c] = pd.Categorical(ev[c], categories=list(net.states[c])[::-1])
    got = bayesnets.posterior(net, target, cat)
    np.testing.assert_allclose(got.to_numpy(), base.to_numpy(), rtol=0, atol=_TOL)

    # an all-missing column of a further variable observes nothing
    spare = [v for v in net.variables if v != target and v not in cols]
    if spare:
        extra = ev.assign(**{spare[0]: pd.Series([None] * len(ev), dtype=object)})
        got = bayesnets.posterior(net, target, extra)
        np.testing.assert_allclose(got.to_numpy(), base.to_numpy(), rtol=0, atol=_TOL)


@settings(max_examples=50, deadline=None)
@given(data=st.data(), name=st.sampled_from(["asia", "cancer"]))
def test_auxiliary_is_the_enumerated_truth(nets, joints, data, name) -> None:
    net = nets[name]
    target, z = data.draw(st.permutations(net.variables))[:2]
    ev = data.draw(_evidence(net, target, max_rows=12))
    ev = ev.drop(columns=[z], errors="ignore")
    if ev.shape[1] == 0:
        ev = pd.DataFrame(index=range(3))
    state = data.draw(st.sampled_from(net.states[target]))
    ev.index = pd.Index([f"c{i}" for i in range(len(ev))][::-1], dtype=object)
    got = bayesnets.auxiliary(net, target, ev, z, state=state)
    nz = net.cardinality(z)
    assert len(got) == len(ev) * nz
    assert got["row"].tolist() == np.repeat(ev.index.to_numpy(dtype=object), nz).tolist()
    assert got["z"].tolist() == list(net.states[z]) * len(ev)
    t = net.states[target].index(state)
    for i, row in enumerate(_rows(ev)):
        tz = _conditional(net, joints[name], [target, z], row)  # P(t, z | x)
        part = got.iloc[i * nz:(i + 1) * nz]
        np.testing.assert_allclose(part["p_z"], tz.sum(axis=0), rtol=0, atol=1e-10)
        np.testing.assert_allclose(part["p_target_given_x"], tz[t].sum(), rtol=0, atol=1e-10)
        pz = tz.sum(axis=0)
        for j in range(nz):
            if pz[j] > 0:
                assert abs(part["p_target"].iloc[j] - tz[t, j] / pz[j]) < 1e-9
            else:
                assert np.isnan(part["p_target"].iloc[j])
    # reversed rows: the same numbers per row label
    rev = bayesnets.auxiliary(net, target, ev.iloc[::-1], z, state=state)
    key = ["row", "z"]
    a = got.set_index(key).sort_index()
    b = rev.set_index(key).sort_index()
    np.testing.assert_allclose(a.to_numpy(dtype=float), b.to_numpy(dtype=float), rtol=0,
                               atol=_TOL)


@settings(max_examples=20, deadline=None)
@given(data=st.data())
def test_joint_table_marginals_and_transposition(nets, data) -> None:
    net = nets["child"]
    variables = data.draw(st.permutations(net.variables))[:data.draw(st.integers(2, 4))]
    table = bayesnets.joint_table(net, variables)
    assert table.shape == tuple(net.cardinality(v) for v in variables)
    assert np.all(table >= 0) and abs(table.sum() - 1.0) < 1e-12
    assert not table.flags.writeable
    # dropping the last variable is summing its axis out
    np.testing.assert_allclose(bayesnets.joint_table(net, variables[:-1]),
                               table.sum(axis=-1), rtol=0, atol=1e-13)
    # another order of the same variables is the transposed table
    perm = data.draw(st.permutations(range(len(variables))))
    other = bayesnets.joint_table(net, [variables[i] for i in perm])
    np.testing.assert_allclose(other, np.transpose(table, perm), rtol=0, atol=1e-13)
