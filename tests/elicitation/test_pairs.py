"""run_pairs: the pairs table of conditional forecasting."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

import coherence
from elicitation import OpenAIClient
from elicitation import SimulatedClient
from elicitation import run_pairs
from tests._fake_openai_server import Reply
from tests.elicitation._shared import FAST


def _pairs(n=8):
    gen = np.random.default_rng(4)
    pa = gen.uniform(0.1, 0.9, n)
    return pd.DataFrame({
        "pair": [f"p{i}" for i in range(n)],
        "category": pd.Categorical(["strong", "weak", "none", "strong"] * (n // 4)),
        "question_a": [f"Will event A{i} happen?" for i in range(n)],
        "question_b": [f"Will event B{i} happen?" for i in range(n)],
        "a_outcome": np.arange(n) % 2, "b_outcome": (np.arange(n) // 2) % 2,
        "p_a": pa, "p_a_given_b1": np.clip(pa + 0.2, 0, 1), "p_a_given_b0": pa - 0.05,
        "p_b": np.full(n, 0.5), "p_b_given_a1": np.full(n, 0.6), "p_b_given_a0": np.full(n, 0.4),
    })


def test_run_pairs_simulated():
    pairs = _pairs()
    agent = coherence.Agent.rational()
    client = SimulatedClient(agent, pairs, rng=0)
    result = run_pairs(pairs[["pair", "category", "question_a", "question_b", "a_outcome",
                              "b_outcome"]], client, variants=("baseline", "skeptical"),
                       repetitions=2, cache=None, **FAST)
    data = result.data
    assert list(data.columns) == ["pair", "category", "variant", "repetition", "p_a",
                                  "p_a_given_b1", "p_a_given_b0", "p_b", "p_b_given_a1",
                                  "p_b_given_a0", "a_outcome", "b_outcome"]
    assert len(data) == 8 * 2 * 2
    merged = data.merge(pairs[["pair", "p_a", "p_a_given_b1"]], on="pair", suffixes=("", "_t"))
    np.testing.assert_allclose(merged["p_a"], agent.latent_belief(merged["p_a_t"]))
    np.testing.assert_allclose(merged["p_a_given_b1"],
                               agent.latent_belief(merged["p_a_given_b1_t"]))
    # per pair, repetition and direction: P(A) under each variant (the baseline's plain
    # forecast, the skeptical variant's own) and 2 variants x 2 conditionals
    assert len(result.raw) == 8 * 2 * 2 * (2 + 2 * 2)
    prompts = set(result.raw["template"])
    assert prompts == {"forecast", "forecast_skeptical", "conditional_baseline",
                       "conditional_skeptical"}


def test_run_pairs_over_http(make_server):
    srv = make_server()
    client = OpenAIClient("fake", base_url=srv.url, timeout=5)
    pairs = _pairs(4)[["pair", "question_a", "question_b"]]
    result = run_pairs(pairs, client, variants=("justify_first",), reverse=False, cache=None,
                       **FAST)
    assert list(result.data.columns) == ["pair", "variant", "repetition", "p_a",
                                         "p_a_given_b1", "p_a_given_b0"]
    assert (result.data[["p_a", "p_a_given_b1", "p_a_given_b0"]] == 0.7).all().all()
    users = [b["messages"][-1]["content"] for b in srv.bodies]
    assert sum("resolved YES" in u for u in users) == 4
    assert sum("resolved NO" in u for u in users) == 4
    assert all("causal or logical" in u for u in users if "resolved" in u)


def test_run_pairs_validation():
    pairs = _pairs(4)
    client = SimulatedClient("rational", pairs, rng=0)
    with pytest.raises(ValueError, match="'question_b' column"):
        run_pairs(pairs.drop(columns="question_b"), client, cache=None)
    with pytest.raises(TypeError, match="'variants' parameter of run_pairs"):
        run_pairs(pairs, client, variants="baseline", cache=None)
    with pytest.raises(TypeError, match="'reverse' parameter of run_pairs"):
        run_pairs(pairs, client, reverse=1, cache=None)
    with pytest.raises(ValueError, match="unique pair ids"):
        run_pairs(pd.concat([pairs, pairs]), client, cache=None)
    # 1 and "1" share a cache key (the id as text): the same questions were asked once
    same = pairs.iloc[[0, 0]].astype({"pair": object}).assign(pair=[1, "1"])
    with pytest.raises(ValueError, match=r"Column 'pair' \(input to run_pairs\) must hold "
                       r"ids that differ as text"):
        run_pairs(same, client, cache=None)


@pytest.mark.parametrize(("column", "value"), [("a_outcome", 2), ("b_outcome", -1),
                                               ("a_outcome", "YES"), ("b_outcome", 0.5)])
def test_run_pairs_refuses_an_outcome_that_is_not_one(column, value):
    # run_pairs(a_outcome=2) copied 2 to the pairs table as an outcome
    pairs = _pairs(4)
    client = SimulatedClient(coherence.Agent.rational(), pairs, rng=0)
    bad = pairs.astype({column: object})
    bad.loc[2, column] = value
    with pytest.raises(ValueError, match=rf"Column '{column}' \(input to run_pairs\) must be "
                       rf"binary \(0 or 1, or missing\); 1 row\(s\) are not \(first: index "
                       rf"\[2\], values \[{value!r}\]\)"):
        run_pairs(bad, client, cache=None, **FAST)


def test_run_pairs_refuses_repeated_variants_before_any_call():
    # a repeated variant crashed building the table, after every call was made
    pairs = _pairs(4)
    calls = []

    class Counting(SimulatedClient):
        def complete(self, request):
            calls.append(request)
            return super().complete(request)

    client = Counting(coherence.Agent.rational(), pairs, rng=0)
    with pytest.raises(ValueError, match=r"'variants' parameter of run_pairs must be distinct "
                                         r"variant names \(repeated: 'baseline'\)"):
        run_pairs(pairs, client, variants=("baseline", "skeptical", "baseline"), cache=None,
                  **FAST)
    with pytest.raises(TypeError, match=r"'variants' parameter of run_pairs"):
        run_pairs(pairs, client, variants=("baseline", 3), cache=None, **FAST)
    assert not calls


def test_pair_questions_take_the_phrases_verbs():
    # asia's "smokes" read "Will it turn out, for the next patient referred, that smokes?"
    from elicitation._study_pairs import _question

    assert _question("the next patient referred", "smokes") == (
        "Will it turn out that the next patient referred smokes?")
    assert _question("the patient", "recently visited Asia") == (
        "Will it turn out that the patient recently visited Asia?")
    assert _question("the patient", "dyspnoea is present") == (
        "Will it turn out, for the patient, that dyspnoea is present?")


def test_a_missing_pair_id_is_refused_before_any_call():
    # a missing id was asked and kept in the pairs table as the pair NaN (run refuses a
    # missing context id)
    pairs = _pairs(4)
    pairs["pair"] = pairs["pair"].astype(object)
    pairs.loc[2, "pair"] = np.nan
    calls = []

    class Counting(SimulatedClient):
        def complete(self, request):
            calls.append(request)
            return super().complete(request)

    client = Counting(coherence.Agent.rational(), pairs.fillna({"pair": "x"}), rng=0)
    with pytest.raises(ValueError, match=r"Column 'pair' \(input to run_pairs\) must not "
                       r"contain missing values; 1 offending row \(first: row 2\)"):
        run_pairs(pairs[["pair", "question_a", "question_b"]], client, cache=None, **FAST)
    assert calls == []


def test_json_schema_replies_to_a_reasoning_variant_are_read(make_server):
    # a JSON schema leaves no room for reasoning: the reply is the object alone, and the
    # reasoning variants (final answer lines) failed every one as missing_label
    def behaviour(body, attempt):
        assert "response_format" in body
        return Reply(text=json.dumps({"No": 0.4, "Yes": 0.6}))

    srv = make_server(behaviour)
    client = OpenAIClient("m", base_url=srv.url, constrained="json_schema", timeout=5)
    result = run_pairs(_pairs(4)[["pair", "question_a", "question_b"]], client,
                       variants=("skeptical",), reverse=False, cache=None, **FAST)
    assert len(result.data) == 4 and not len(result.failures)
    assert result.data["p_a_given_b1"].tolist() == pytest.approx([0.6] * 4)
    assert set(result.raw["method"]) == {"json"}
