"""The runner: tables, cache, retries, failure caps, kill -9 and resume, pairs."""

from __future__ import annotations

import itertools
import json
import os
import signal
import sqlite3
import subprocess
import sys
import threading
import time
from collections import Counter
from pathlib import Path
from types import MappingProxyType

import numpy as np
import pandas as pd
import pytest

import coherence
import elicitation
from elicitation import (
    ElicitationError,
    OpenAIClient,
    ParseFailureWarning,
    ResponseCache,
    SimulatedClient,
    run,
    run_pairs,
)
from tests._fake_openai_server import FakeOpenAIServer, Reply

ROOT = Path(__file__).resolve().parents[2]
QUESTION = "Does the patient have heart disease?"


def _contexts(n=12, seed=0):
    gen = np.random.default_rng(seed)
    q = (gen.permutation(n) + gen.random(n)) / n
    return pd.DataFrame({
        "context": np.arange(n, dtype=np.int64),
        "truth": q,
        "outcome": (gen.random(n) < q).astype(np.int64),
        "description": [f"is patient number {i}, aged {30 + i}" for i in range(n)],
        "age": 30 + np.arange(n, dtype=np.int64),
    })


FAST = {"backoff": 0.01, "max_backoff": 0.05, "progress": False}


# --------------------------------------------------------------------------- simulated
def test_simulated_run_builds_the_belief_action_table(tmp_path):
    contexts = _contexts()
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


def test_rerun_costs_no_calls_and_is_identical(tmp_path):
    contexts = _contexts()
    path = tmp_path / "c.sqlite"
    client = SimulatedClient(coherence.Agent.rational(report_noise=0.05), contexts, rng=1)
    first = run(contexts, client, question=QUESTION, repetitions=2, cache=path, **FAST)
    second = run(contexts, client, question=QUESTION, repetitions=2, cache=path, **FAST)
    assert second.n_calls == 0 and second.n_cached == len(first.raw)
    pd.testing.assert_frame_equal(first.data, second.data)
    assert second.raw["cached"].all() and not first.raw["cached"].any()
    # more repetitions: only the new ones are asked
    third = run(contexts, client, question=QUESTION, repetitions=3, cache=path, **FAST)
    assert third.n_calls == 12 * 2
    # other sampling settings are other calls
    other = SimulatedClient(coherence.Agent.rational(report_noise=0.05), contexts, rng=2)
    assert run(contexts, other, question=QUESTION, repetitions=2, cache=path,
               **FAST).n_calls == len(first.raw)


def test_seeded_runs_reproduce_without_cache():
    contexts = _contexts()
    client = SimulatedClient(coherence.Agent.leaky(strength=0.5), contexts, rng=7)
    a = run(contexts, client, question=QUESTION, repetitions=4, cache=None, concurrency=1,
            **FAST)
    b = run(contexts, client, question=QUESTION, repetitions=4, cache=None, concurrency=8,
            **FAST)
    pd.testing.assert_frame_equal(a.data, b.data)


def test_parse_failures_are_counted_and_warned():
    contexts = _contexts(20)
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


def test_beliefs_only():
    contexts = _contexts(5)
    client = SimulatedClient("rational", contexts, rng=0)
    result = run(contexts, client, question=QUESTION, decision=None, repetitions=1, cache=None,
                 **FAST)
    assert "action" not in result.data.columns and len(result.data) == 5
    assert set(result.raw["quantity"]) == {"belief"}


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
        ({"prompts": ("standard", "standard")}, ValueError, "distinct template names"),
        ({"prompts": ("decision",)}, ValueError, "probability templates"),
        ({"prompts": ("nope",)}, ValueError, "'name' parameter of get_template"),
        ({"decision": "standard"}, ValueError, "'decision' parameter of run"),
    ],
)
def test_run_validation(kwargs, exc, match):
    contexts = _contexts(3)
    args = {"client": SimulatedClient("rational", contexts, rng=0), "question": QUESTION,
            "cache": None, **kwargs}
    client = args.pop("client")
    with pytest.raises(exc, match=match):
        run(contexts, client, **args)


def test_contexts_validation():
    contexts = _contexts(3)
    client = SimulatedClient("rational", contexts, rng=0)
    with pytest.raises(ValueError, match="'description' column"):
        run(contexts.drop(columns="description"), client, question=QUESTION, cache=None)
    with pytest.raises(ValueError, match="unique context ids"):
        run(pd.concat([contexts, contexts]), client, question=QUESTION, cache=None)
    with pytest.raises(TypeError, match="'contexts' parameter of run"):
        run("contexts", client, question=QUESTION, cache=None)


# --------------------------------------------------------------------------- over HTTP
@pytest.fixture
def make_server():
    servers = []

    def make(behaviour=None):
        srv = FakeOpenAIServer(behaviour).start()
        servers.append(srv)
        return srv

    yield make
    for srv in servers:
        srv.stop()


def _http_run(srv, contexts, cache, **kw):
    client = OpenAIClient("fake", base_url=srv.url, seed=0, timeout=kw.pop("timeout", 5))
    return run(contexts, client, question=QUESTION, cache=cache, **{**FAST, **kw})


def test_http_retries_429_500_timeouts_and_malformed_bodies(make_server, tmp_path):
    faults = [Reply(status=429, headers={"Retry-After": "0"}), Reply(status=500),
              Reply(body=b"{oops"), Reply(delay=0.6), Reply(status=503)]

    def behaviour(body, attempt):
        # the first attempt of every call fails in one of five ways, then it succeeds
        if attempt == 0:
            return faults[len(body["messages"][-1]["content"]) % len(faults)]
        return Reply()

    srv = make_server(behaviour)
    contexts = _contexts(10)
    result = _http_run(srv, contexts, tmp_path / "c.sqlite", repetitions=2, timeout=0.3,
                       concurrency=4)
    n_calls = 10 * 2 * 2
    assert len(result.data) == 20 and result.raw["parse_ok"].all()
    assert result.n_calls == n_calls
    assert result.n_failed_attempts == n_calls
    assert (result.data["belief"] == 0.7).all() and (result.data["action"] == "yes").all()
    counts = Counter(srv.answered())
    assert len(counts) == n_calls
    # every call answered once with 200 (a timed-out first attempt may also count as written)
    ok_counts = Counter(e["key"] for e in srv.log if e["status"] == 200 and e["attempt"] > 0)
    assert set(ok_counts.values()) == {1}
    # sampling settings recorded with every response
    settings = json.loads(result.raw["settings"].iloc[0])
    assert settings["temperature"] == 1.0 and settings["seed"] == 0
    assert sorted(set(result.raw["seed"])) == [0, 1]  # seed + repetition


def test_http_unparseable_answers_are_not_retried(make_server):
    srv = make_server(lambda body, attempt: Reply(text="I would rather not say."))
    contexts = _contexts(4)
    with pytest.warns(ParseFailureWarning):
        result = _http_run(srv, contexts, None, repetitions=1)
    assert len(result.data) == 0
    assert len(srv.log) == 8  # one request per call
    assert result.failures.to_dict("records") == [
        {"quantity": "action", "reason": "no_probability", "count": 4},
        {"quantity": "belief", "reason": "no_probability", "count": 4}]


def test_http_failure_cap_stops_the_run_and_keeps_responses(make_server, tmp_path):
    def behaviour(body, attempt):
        return Reply(status=500) if "number 3," in body["messages"][-1]["content"] else Reply()

    srv = make_server(behaviour)
    path = tmp_path / "c.sqlite"
    with pytest.raises(ElicitationError, match="max_failures=3"):
        _http_run(srv, _contexts(6), path, repetitions=1, max_retries=10, max_failures=3,
                  concurrency=1)
    stored = len(ResponseCache(path))
    assert stored == len(srv.answered()) and stored > 0
    # a non-retryable error (400) fails the call without retries
    srv2 = make_server(lambda body, attempt: Reply(status=400))
    with pytest.warns(ParseFailureWarning):
        res = _http_run(srv2, _contexts(2), None, repetitions=1, max_failures=100)
    assert len(srv2.log) == 4 and set(res.raw["reason"]) == {"call_failed"}
    assert res.raw["call_error"].str.contains("HTTP 400").all()


def test_http_token_belief_column(make_server):
    logprobs = {"content": [{"token": "Yes", "logprob": np.log(0.8),
                             "top_logprobs": [{"token": "Yes", "logprob": np.log(0.8)},
                                              {"token": "No", "logprob": np.log(0.2)}]}]}

    def behaviour(body, attempt):
        if "Decide: <Yes or No>" in body["messages"][-1]["content"]:
            return Reply(text="Decide: Yes\nAnswer: Yes", logprobs=logprobs)
        return Reply()

    srv = make_server(behaviour)
    client = OpenAIClient("fake", base_url=srv.url, logprobs=True, timeout=5)
    result = run(_contexts(3), client, question=QUESTION, repetitions=1, cache=None, **FAST)
    np.testing.assert_allclose(result.data["token_belief"], 0.8)


def test_kill_9_mid_run_then_resume_loses_and_repeats_nothing(make_server, tmp_path):
    """A run killed by SIGKILL resumes from the cache: zero lost, zero repeated calls.

    The server answers the first 25 calls and then holds every further request
    (the calls in flight when the process dies). A call counts as made when
    the server has written its 200 answer; held calls were never answered.
    """
    answered_first = 25
    counter = itertools.count()
    lock = threading.Lock()
    phase = {"resume": False}

    def behaviour(body, attempt):
        if phase["resume"]:
            return Reply()
        with lock:
            n = next(counter)
        return Reply() if n < answered_first else Reply(hold=True)

    srv = make_server(behaviour)
    cache = tmp_path / "run.sqlite"
    n_contexts, repetitions, concurrency = 30, 2, 4
    script = (
        "import numpy as np, pandas as pd, elicitation\n"
        f"contexts = pd.DataFrame({{'context': np.arange({n_contexts}, dtype=np.int64), "
        f"'description': [f'is patient number {{i}}, aged {{30 + i}}' for i in "
        f"range({n_contexts})]}})\n"
        f"client = elicitation.OpenAIClient('fake', base_url={srv.url!r}, seed=0, timeout=60)\n"
        f"elicitation.run(contexts, client, question={QUESTION!r}, repetitions={repetitions}, "
        f"concurrency={concurrency}, cache={str(cache)!r}, progress=False)\n"
    )
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen([sys.executable, "-c", script], env=env, cwd=tmp_path,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        # all worker threads blocked on held requests: the process is mid-run
        for _ in range(concurrency):
            assert srv.held.acquire(timeout=60), proc.stderr.read() if proc.poll() else ""
        time.sleep(0.3)
        assert proc.poll() is None
        proc.send_signal(signal.SIGKILL)
        proc.wait(timeout=10)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
        proc.stdout.close()
        proc.stderr.close()
    assert proc.returncode == -signal.SIGKILL
    with sqlite3.connect(cache) as conn:
        stored = {row[0] for row in conn.execute("SELECT key FROM responses")}
    assert len(stored) == answered_first == len(srv.answered())

    phase["resume"] = True
    srv.release.set()  # held requests are dropped unanswered
    contexts = pd.DataFrame({"context": np.arange(n_contexts, dtype=np.int64),
                             "description": [f"is patient number {i}, aged {30 + i}"
                                             for i in range(n_contexts)]})
    client = OpenAIClient("fake", base_url=srv.url, seed=0, timeout=60)
    result = run(contexts, client, question=QUESTION, repetitions=repetitions,
                 concurrency=concurrency, cache=cache, progress=False)
    total = n_contexts * repetitions * 2
    assert result.n_cached == answered_first and result.n_calls == total - answered_first
    assert len(result.data) == n_contexts * repetitions and result.raw["parse_ok"].all()
    counts = Counter(srv.answered())
    assert len(counts) == total            # zero lost
    assert set(counts.values()) == {1}     # zero repeated
    held = [e for e in srv.log if e["status"] == "held"]
    assert len(held) == concurrency        # the in-flight calls, re-sent once on resume


# --------------------------------------------------------------------------- pairs
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
    # 2 unconditional + 2 variants x 4 conditionals, per pair and repetition
    assert len(result.raw) == 8 * 2 * (2 + 2 * 4)
    prompts = set(result.raw["template"])
    assert prompts == {"forecast", "conditional_baseline", "conditional_skeptical"}


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


def test_public_api_listed():
    assert {"run", "run_pairs", "OpenAIClient", "SimulatedClient"} <= set(elicitation.__all__)


# --------------------------------------------------------------------------- iterated expectation
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


# --------------------------------------------------------------------------- cache, progress
def test_response_cache_persists_and_keeps_the_first_answer(tmp_path):
    path = tmp_path / "c.sqlite"
    key = elicitation.cache_key({"model": "m", "context": "1"})
    assert key == elicitation.cache_key({"context": "1", "model": "m"})  # order-free
    cache = ResponseCache(path)
    record = {"key": key, "model": "m", "template": "standard", "context": "1",
              "prompt": "standard", "repetition": 0, "quantity": "belief", "settings": "{}",
              "messages": "[]", "text": "No: 0.3\nYes: 0.7"}
    cache.put(record)
    cache.put({**record, "text": "something else"})
    cache.close()
    again = ResponseCache(path)
    assert len(again) == 1
    assert again.get_many([key, "absent"])[key]["text"] == "No: 0.3\nYes: 0.7"
    again.close()


def test_progress_bar_goes_to_stderr(capsys):
    contexts = _contexts(3)
    client = SimulatedClient("rational", contexts, rng=0)
    run(contexts, client, question=QUESTION, repetitions=1, cache=None, progress=True)
    err = capsys.readouterr().err
    assert "elicitation:" in err and "6/6" in err and "failed=0" in err
    run(contexts, client, question=QUESTION, repetitions=1, cache=None, progress=False)
    assert capsys.readouterr().err == ""


def test_a_misbehaving_client_fails_calls_not_the_run():
    class Broken:
        model = "broken"
        settings = MappingProxyType({})

        def complete(self, request):
            if request.quantity == "action":
                return None
            raise KeyError("bug")

    with pytest.warns(ParseFailureWarning):
        result = run(_contexts(2), Broken(), question=QUESTION, repetitions=1, cache=None,
                     **FAST)
    assert len(result.data) == 0
    errors = set(result.raw["call_error"])
    assert any("KeyError" in e for e in errors) and any("not a Completion" in e for e in errors)
    assert result.n_failed_attempts == 4


def test_same_model_on_another_port_is_served_from_the_cache(make_server, tmp_path):
    first, second = make_server(), make_server()
    path = tmp_path / "c.sqlite"
    a = _http_run(first, _contexts(3), path, repetitions=1)
    b = _http_run(second, _contexts(3), path, repetitions=1)
    assert a.n_calls == 6 and b.n_calls == 0 and len(second.log) == 0
    pd.testing.assert_frame_equal(a.data, b.data)
