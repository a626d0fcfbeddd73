"""run: the belief/action table, parse failures, validation."""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest

import coherence
import elicitation
from elicitation import OpenAIClient
from elicitation import ParseFailureWarning
from elicitation import SimulatedClient
from elicitation import run
from tests._fake_openai_server import Reply
from tests.elicitation._shared import FAST
from tests.elicitation._shared import QUESTION
from tests.elicitation._shared import make_contexts


def test_simulated_run_builds_the_belief_action_table(tmp_path):
    contexts = make_contexts()
    agent = coherence.Agent.prompt_sensitive()
    client = SimulatedClient(agent, contexts, rng=0)
    prompts = ("standard", "mse", "absolute")
    result = run(contexts, client, question=QUESTION, prompts=prompts, repetitions=3,
                 cache=tmp_path / "c.sqlite", **FAST)
    data = result.data
    assert list(data.columns) == ["context", "repetition", "prompt", "belief", "action",
                                  "forced_choice", "token_belief", "truth", "outcome", "age"]
    assert len(data) == 12 * 3 * 3
    assert data["context"].dtype == np.int64 and data["repetition"].dtype == np.int64
    assert list(data["prompt"].cat.categories) == list(prompts)
    assert list(data["action"].cat.categories) == ["yes", "no", "defer"]
    assert data["belief"].dtype == np.float64 and data["outcome"].dtype == np.int64
    # the reported belief is the agent's latent belief shifted by the prompt, exactly
    shift = data["prompt"].map(agent.shift).astype(float).to_numpy()
    expected = coherence.snap_to_grid(
        np.clip(agent.latent_belief(data["truth"].to_numpy()) + shift, 0, 1), agent.grid)
    np.testing.assert_allclose(data["belief"].to_numpy(), expected, atol=1e-12)
    # one action per (context, repetition), shared by the prompts
    per = data.groupby(["context", "repetition"], observed=True)["action"].nunique()
    assert (per == 1).all()
    # raw table: one row per call, every one parsed strictly
    assert len(result.raw) == 12 * 3 * (3 + 1)
    assert result.raw["parse_ok"].all() and set(result.raw["method"]) == {"strict"}
    assert result.n_calls == len(result.raw) and result.n_cached == 0
    assert len(result.failures) == 0
    assert "0 from the cache" in result.summary()
    # ready for the core's validators
    from coherence._validation import probability_column
    probability_column(data, "belief")


def test_parse_failures_are_counted_and_warned():
    contexts = make_contexts(20)
    client = SimulatedClient(coherence.Agent.rational(), contexts, rng=3, fail=0.2)
    with pytest.warns(ParseFailureWarning, match="left out of the table") as record:
        result = run(contexts, client, question=QUESTION, repetitions=2, cache=None, **FAST)
    # stacklevel points at the user's call, not at the runner
    assert {w.filename for w in record} == {__file__}
    raw = result.raw
    bad = raw[~raw["parse_ok"]]
    assert len(bad) > 0
    assert set(bad["reason"]) == {"no_probability"}
    assert bad["text"].str.contains("not able").all()
    assert result.failures["count"].sum() == len(bad)
    assert set(result.failures["quantity"]) <= {"belief", "action"}
    # a row is kept exactly when its belief and its action parsed
    ok = raw[raw["parse_ok"]]
    beliefs = {(c, r) for c, r in ok.loc[ok["quantity"] == "belief",
                                          ["context", "repetition"]].itertuples(index=False)}
    actions = {(c, r) for c, r in ok.loc[ok["quantity"] == "action",
                                          ["context", "repetition"]].itertuples(index=False)}
    kept = set(result.data[["context", "repetition"]].itertuples(index=False, name=None))
    assert kept == beliefs & actions
    assert "no_probability" in result.summary()
    # a notebook shows the run as HTML, the failures as a table
    assert "<table" in result._repr_html_() and "no_probability" in result._repr_html_()


def test_beliefs_only():
    contexts = make_contexts(5)
    client = SimulatedClient("rational", contexts, rng=0)
    result = run(contexts, client, question=QUESTION, decision=None, repetitions=1, cache=None,
                 **FAST)
    assert "action" not in result.data.columns and len(result.data) == 5
    assert set(result.raw["quantity"]) == {"belief"}


def test_http_token_belief_column(make_server):
    logprobs = {"content": [{"token": "Yes", "logprob": np.log(0.8),
                             "top_logprobs": [{"token": "Yes", "logprob": np.log(0.8)},
                                              {"token": "No", "logprob": np.log(0.2)}]}]}

    def behaviour(body, attempt):
        if "Can decide: No\nDecision: Yes" in body["messages"][-1]["content"]:
            return Reply(text="Can decide: Yes\nDecision: Yes", logprobs=logprobs)
        return Reply()

    srv = make_server(behaviour)
    client = OpenAIClient("fake", base_url=srv.url, logprobs=True, timeout=5)
    result = run(make_contexts(3), client, question=QUESTION, repetitions=1, cache=None, **FAST)
    np.testing.assert_allclose(result.data["token_belief"], 0.8)


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"client": object()}, TypeError, "'client' parameter of run"),
        ({"repetitions": 0}, ValueError, "'repetitions' parameter of run"),
        ({"concurrency": 0}, ValueError, "'concurrency' parameter of run"),
        ({"max_retries": -1}, ValueError, "'max_retries' parameter of run"),
        ({"max_failures": -1}, ValueError, "'max_failures' parameter of run"),
        ({"sum_tolerance": 2.0}, ValueError, "'sum_tolerance' parameter of run"),
        ({"progress": 1}, TypeError, "'progress' parameter of run"),
        ({"cache": 3}, TypeError, "'cache' parameter of run"),
        ({"question": None}, ValueError, "'question' parameter of run"),
        ({"question": 3}, TypeError, "'question' parameter of run"),
        ({"prompts": "standard"}, TypeError, "'prompts' parameter of run"),
        ({"prompts": ("standard", "standard")}, ValueError, "distinct prompt variants"),
        ({"prompts": ("decision",)}, ValueError, "probability templates"),
        ({"prompts": ("nope",)}, ValueError, "'name' parameter of get_template"),
        ({"decision": "standard"}, ValueError, "'decision' parameter of run"),
    ],
)
def test_run_validation(kwargs, exc, match):
    contexts = make_contexts(3)
    args = {"client": SimulatedClient("rational", contexts, rng=0), "question": QUESTION,
            "cache": None, **kwargs}
    client = args.pop("client")
    with pytest.raises(exc, match=match):
        run(contexts, client, **args)


def test_contexts_validation():
    contexts = make_contexts(3)
    client = SimulatedClient("rational", contexts, rng=0)
    with pytest.raises(ValueError, match="'description' column"):
        run(contexts.drop(columns="description"), client, question=QUESTION, cache=None)
    with pytest.raises(ValueError, match="unique context ids"):
        run(pd.concat([contexts, contexts]), client, question=QUESTION, cache=None)
    with pytest.raises(TypeError, match="'contexts' parameter of run"):
        run("contexts", client, question=QUESTION, cache=None)


def test_context_ids_the_same_as_text_are_refused():
    # 1 and "1" share a cache key (the id as text): with the same description the second
    # context was answered with the first one's replies, its own truth and outcome kept
    contexts = make_contexts(2).astype({"context": object})
    contexts["context"] = [1, "1"]
    contexts["description"] = contexts["description"].iloc[0]
    client = SimulatedClient("rational", make_contexts(2), rng=0)
    with pytest.raises(ValueError, match=r"Column 'context' \(input to run\) must hold ids "
                       r"that differ as text; 2 rows .*ids 1, '1'"):
        run(contexts, client, question=QUESTION, cache=None)


def test_public_api_listed():
    assert {"run", "run_pairs", "OpenAIClient", "SimulatedClient"} <= set(elicitation.__all__)


@pytest.mark.parametrize(("column", "value", "message"), [
    ("truth", 1.2, r"Column 'truth' \(input to run\) must hold probabilities in \[0, 1\]; "
                   r"1 offending row \(first: row 3 = 1.2\)"),
    ("truth", "high", r"Column 'truth' \(input to run\) must be numeric"),
    ("outcome", 2, r"Column 'outcome' \(input to run\) must be binary \(0 or 1, or missing\); "
                   r"1 row\(s\) are not \(first: index \[3\], values \[2\]\)"),
])
def test_run_refuses_a_truth_or_outcome_that_is_not_one(column, value, message):
    # run(truth=1.2) copied 1.2 to the output as the true probability
    contexts = make_contexts(6)
    client = SimulatedClient(coherence.Agent.rational(), contexts, rng=0)
    bad = contexts.astype({column: object})
    bad.loc[3, column] = value
    with pytest.raises(ValueError, match=message):
        run(bad, client, question=QUESTION, cache=None, **FAST)


def test_run_accepts_missing_truths_and_outcomes():
    contexts = make_contexts(4).astype({"truth": float, "outcome": float})
    client = SimulatedClient(coherence.Agent.rational(), contexts, rng=0)
    contexts.loc[1, ["truth", "outcome"]] = np.nan
    out = run(contexts, client, question=QUESTION, cache=None, **FAST).data
    assert out.loc[out["context"] == 1, "truth"].isna().all()


class _CountingClient:
    """A client that counts its calls (none may be made when the contexts are refused)."""

    model = "counting"

    def __init__(self):
        self.settings = {}
        self.calls = 0

    def complete(self, request):
        self.calls += 1
        return elicitation.Completion(text="No: 0.3\nYes: 0.7")


@pytest.mark.parametrize("columns", [["belief"], ["action", "repetition"], ["prompt"],
                                     ["forced_choice", "token_belief"], ["stated_yes"],
                                     ["stated_sum"]])
def test_run_refuses_a_context_column_named_like_an_output_column(columns):
    # a 'belief' column left from an earlier study overwrote every elicited belief
    contexts = make_contexts(2).assign(**dict.fromkeys(columns, 0.5))
    client = _CountingClient()
    listed = ", ".join(repr(c) for c in columns)
    with pytest.raises(ValueError, match=rf"Column\(s\) {listed} of contexts \(input to run\) "
                                         r"have the name of a column run writes itself"):
        run(contexts, client, question=QUESTION, cache=None, **FAST)
    assert client.calls == 0
    # refused with beliefs only too: the column would still be copied over the belief
    with pytest.raises(ValueError, match=r"input to run\)"):
        run(contexts, client, question=QUESTION, decision=None, cache=None, **FAST)
    assert client.calls == 0


@pytest.mark.parametrize("model, exc", [("   ", ValueError), ("a\nb", ValueError),
                                        ("a\x00b", ValueError), ("a\tb", ValueError),
                                        (5, TypeError)])
def test_a_client_whose_model_is_blank_or_holds_a_control_character_is_refused(model, exc):
    # the model name keys the cache and labels the tables: a blank one labelled nothing, a
    # line break split the tables' lines
    client = _CountingClient()
    client.model = model
    with pytest.raises(exc, match=r"'client' parameter of run must be a client whose model "
                       r"is a non-empty str with no control character .*; got " + re.escape(
                           repr(model))):
        run(make_contexts(2), client, question=QUESTION, cache=None, **FAST)
    assert client.calls == 0


@pytest.mark.parametrize("elicit", ["run", "run_lie"])
def test_a_question_given_twice_is_refused(elicit):
    # question= and a 'question' column: the argument filled every prompt and the column
    # was dropped from the output without a word (the per-context questions never asked)
    contexts = make_contexts(3).assign(question=["have flu", "have gout", "have measles"])
    client = SimulatedClient("rational", contexts, rng=0)
    kwargs = {"auxiliary_variable_name": "age group", "states": ("young", "old")}
    call = run if elicit == "run" else elicitation.run_lie
    with pytest.raises(ValueError, match=r"'question' parameter of run(_lie)? must be None "
                       r"when contexts has a 'question' column"):
        call(contexts, client, question=QUESTION, repetitions=1, cache=None, **FAST,
             **(kwargs if elicit == "run_lie" else {}))
    # either one alone is asked
    assert len(run(contexts, client, repetitions=1, cache=None, **FAST).data) == 3
    assert len(run(contexts.drop(columns="question"), client, question=QUESTION,
                   repetitions=1, cache=None, **FAST).data) == 3
