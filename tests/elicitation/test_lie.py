"""run_lie: the quantities of the law of iterated expectation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import coherence
import elicitation
from elicitation import SimulatedClient
from tests.elicitation._shared import FAST
from tests.elicitation._shared import QUESTION


def _lie_contexts(n=10, seed=5):
    gen = np.random.default_rng(seed)
    pz = gen.dirichlet([2.0, 2.0, 2.0], size=n)
    given = gen.uniform(0.05, 0.95, size=(n, 3))
    states = ("low", "normal", "high")
    table = pd.DataFrame({"context": np.arange(n), "description": [f"case {i}" for i in range(n)],
                          "truth": (pz * given).sum(axis=1)})
    for k, s in enumerate(states):
        table[f"prob_{s}"] = pz[:, k]
        table[f"belief_given_{s}"] = given[:, k]
    return table, states


def test_run_lie_coherent_agent_has_zero_gap():
    table, states = _lie_contexts()
    client = SimulatedClient(coherence.Agent.rational(grid=None), table, rng=0)
    result = elicitation.run_lie(table[["context", "description"]], client, question=QUESTION,
                                 auxiliary_variable_name="cholesterol level", states=states,
                                 repetitions=2, cache=None, **FAST)
    data = result.data
    assert len(data) == 20
    assert list(data.columns[:2]) == ["context", "repetition"]
    assert {"prob_low", "belief_given_high", "lie_belief", "lie_gap"} <= set(data.columns)
    np.testing.assert_allclose(data["lie_gap"], 0.0, atol=1e-5)
    probs = data[[f"prob_{s}" for s in states]].sum(axis=1)
    np.testing.assert_allclose(probs, 1.0, atol=1e-12)
    users = set(result.raw.loc[result.raw["quantity"] == "belief_given_high", "template"])
    assert users == {"given_auxiliary"}
    assert len(result.raw) == 10 * 2 * (1 + 1 + 3)


def test_run_lie_biased_agent_has_a_gap():
    table, states = _lie_contexts()
    client = SimulatedClient(coherence.Agent.rational(grid=None, bias=0.15), table, rng=0)
    result = elicitation.run_lie(table[["context", "description"]], client, question=QUESTION,
                                 auxiliary_variable_name="z", states=states, repetitions=1,
                                 cache=None, **FAST)
    assert (result.data["lie_gap"].abs() > 0.01).mean() > 0.5


def test_run_lie_validation():
    table, states = _lie_contexts(3)
    client = SimulatedClient("rational", table, rng=0)
    with pytest.raises(ValueError, match="'states' parameter of run_lie"):
        elicitation.run_lie(table, client, question=QUESTION, auxiliary_variable_name="z",
                            states=("a",), cache=None)
    with pytest.raises(TypeError, match="'auxiliary_variable_name' parameter of run_lie"):
        elicitation.run_lie(table, client, question=QUESTION, auxiliary_variable_name="",
                            states=states, cache=None)
    with pytest.raises(ValueError, match="'prompt' parameter of run_lie"):
        elicitation.run_lie(table, client, question=QUESTION, auxiliary_variable_name="z",
                            states=states, prompt="decision", cache=None)


def test_run_lie_refuses_context_columns_named_like_its_output():
    # the truths table passed as the contexts: its prob_<state> and belief_given_<state>
    # columns overwrote the elicited ones, and lie_belief / lie_gap were computed from neither
    table, states = _lie_contexts(3)
    calls = []

    class Counting(SimulatedClient):
        def complete(self, request):
            calls.append(request)
            return super().complete(request)

    client = Counting("rational", table, rng=0)
    with pytest.raises(ValueError, match=r"Column\(s\) 'prob_low', 'belief_given_low', "
                                         r"'prob_normal'.* of contexts \(input to run_lie\) "
                                         r"have the name of a column run_lie writes itself"):
        elicitation.run_lie(table, client, question=QUESTION, auxiliary_variable_name="z",
                            states=states, cache=None, **FAST)
    for column in ("lie_gap", "lie_belief", "belief", "repetition"):
        with pytest.raises(ValueError, match=rf"Column\(s\) '{column}' of contexts"):
            elicitation.run_lie(table[["context", "description"]].assign(**{column: 0.5}),
                                client, question=QUESTION, auxiliary_variable_name="z",
                                states=states, cache=None, **FAST)
    assert not calls


def test_plan_counts_every_call_of_the_lie_study(tmp_path):
    # plan counted one call per row of the LIE table (a state of z): the study also asks
    # P(z | x) once per auxiliary variable and P(y | x) once per context
    n = 6
    gen = np.random.default_rng(3)
    variables = {"cholesterol level": ("low", "high"), "blood pressure": ("calm", "mid", "raised")}
    truths = pd.DataFrame({"context": np.arange(n), "description": [f"case {i}" for i in range(n)],
                           "truth": gen.uniform(0.1, 0.9, n)})
    for states in variables.values():
        pz = gen.dirichlet(np.ones(len(states)), size=n)
        for k, s in enumerate(states):
            truths[f"prob_{s}"] = pz[:, k]
            truths[f"belief_given_{s}"] = gen.uniform(0.05, 0.95, n)
    requests = []

    class Counting(SimulatedClient):
        def complete(self, request):
            requests.append(request)
            return super().complete(request)

    client = Counting(coherence.Agent.rational(grid=None), truths, rng=0)
    cache = tmp_path / "lie.sqlite"  # one cache, as run_lie's default: P(y | x) asked once
    rows = []
    for name, states in variables.items():
        data = elicitation.run_lie(truths[["context", "description"]], client,
                                   question=QUESTION, auxiliary_variable_name=name,
                                   states=states, repetitions=1, cache=cache, **FAST).data
        for s in states:
            rows.append(pd.DataFrame({"context": data["context"], "variable": name, "state": s,
                                      "p_y_given_x": data["belief"],
                                      "p_y_given_xz": data[f"belief_given_{s}"],
                                      "p_z_given_x": data[f"prob_{s}"]}))
    pilot = pd.concat(rows, ignore_index=True)
    assert len(requests) == n * (1 + (1 + 2) + (1 + 3))
    baseline = pilot.assign(p_y_given_xz=pilot["p_y_given_x"])  # coherent
    res = coherence.plan(pilot, test="iterated_expectation_check", n_contexts=[n, 2 * n],
                         n_repetitions=1, n_sims=2,
                         options={"baseline": baseline, "n_resamples": 9}, rng=0)
    assert list(res.table["n_calls"]) == [len(requests), 2 * len(requests)]
