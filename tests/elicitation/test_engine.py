"""The job engine: cache and resume, retries, the failure budget, concurrency, progress."""

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
from elicitation import Completion
from elicitation import ElicitationError
from elicitation import EndpointMismatchWarning
from elicitation import OpenAIClient
from elicitation import ParseFailureWarning
from elicitation import ResponseCache
from elicitation import SimulatedClient
from elicitation import run
from tests._fake_openai_server import Reply
from tests.elicitation._shared import FAST
from tests.elicitation._shared import QUESTION
from tests.elicitation._shared import http_run
from tests.elicitation._shared import make_contexts

ROOT = Path(__file__).resolve().parents[2]


# --------------------------------------------------------------------------- cache and resume
def test_rerun_costs_no_calls_and_is_identical(tmp_path):
    contexts = make_contexts()
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
    contexts = make_contexts()
    client = SimulatedClient(coherence.Agent.leaky(strength=0.5), contexts, rng=7)
    a = run(contexts, client, question=QUESTION, repetitions=4, cache=None, concurrency=1,
            **FAST)
    b = run(contexts, client, question=QUESTION, repetitions=4, cache=None, concurrency=8,
            **FAST)
    pd.testing.assert_frame_equal(a.data, b.data)


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


def test_same_model_on_another_port_is_served_from_the_cache(make_server, tmp_path):
    first, second = make_server(), make_server()
    path = tmp_path / "c.sqlite"
    a = http_run(first, make_contexts(3), path, repetitions=1)
    # reused, but not silently: the endpoint is recorded with every reply
    with pytest.warns(EndpointMismatchWarning, match=r"6 cached replies .* another endpoint"):
        b = http_run(second, make_contexts(3), path, repetitions=1)
    assert a.n_calls == 6 and b.n_calls == 0 and len(second.log) == 0
    pd.testing.assert_frame_equal(a.data, b.data)
    assert set(b.raw["endpoint"]) == {first.url + "/chat/completions"}


# --------------------------------------------------------------------------- retries, failures
def test_http_retries_429_500_timeouts_and_malformed_bodies(make_server, tmp_path):
    faults = [Reply(status=429, headers={"Retry-After": "0"}), Reply(status=500),
              Reply(body=b"{oops"), Reply(delay=0.6), Reply(status=503)]

    def behaviour(body, attempt):
        # the first attempt of every call fails in one of five ways, then it succeeds
        if attempt == 0:
            return faults[len(body["messages"][-1]["content"]) % len(faults)]
        return Reply()

    srv = make_server(behaviour)
    contexts = make_contexts(10)
    result = http_run(srv, contexts, tmp_path / "c.sqlite", repetitions=2, timeout=0.3,
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
    contexts = make_contexts(4)
    with pytest.warns(ParseFailureWarning):
        result = http_run(srv, contexts, None, repetitions=1)
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
    # the budget counts calls that failed for good (after their retries)
    with pytest.raises(ElicitationError, match="max_failures=1"):
        http_run(srv, make_contexts(6), path, repetitions=1, max_retries=2, max_failures=1,
                 concurrency=1)
    stored = len(ResponseCache(path))
    assert stored == len(srv.answered()) and stored > 0
    # a non-retryable error (400) fails the call without retries
    srv2 = make_server(lambda body, attempt: Reply(status=400))
    with pytest.warns(ParseFailureWarning):
        res = http_run(srv2, make_contexts(2), None, repetitions=1, max_failures=100)
    assert len(srv2.log) == 4 and set(res.raw["reason"]) == {"call_failed"}
    assert res.raw["call_error"].str.contains("HTTP 400").all()


def test_a_misbehaving_client_fails_calls_not_the_run():
    class Broken:
        model = "broken"
        settings = MappingProxyType({})

        def complete(self, request):
            if request.quantity == "action":
                return None
            raise KeyError("bug")

    with pytest.warns(ParseFailureWarning):
        result = run(make_contexts(2), Broken(), question=QUESTION, repetitions=1, cache=None,
                     **FAST)
    assert len(result.data) == 0
    errors = set(result.raw["call_error"])
    assert any("KeyError" in e for e in errors) and any("not a Completion" in e for e in errors)
    assert result.n_failed_attempts == 4


# --------------------------------------------------------------------------- kill -9 and resume
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


# --------------------------------------------------------------------------- progress
def test_progress_bar_goes_to_stderr(capsys):
    contexts = make_contexts(3)
    client = SimulatedClient("rational", contexts, rng=0)
    run(contexts, client, question=QUESTION, repetitions=1, cache=None, progress=True)
    err = capsys.readouterr().err
    assert "elicitation:" in err and "6/6" in err and "failed=0" in err
    run(contexts, client, question=QUESTION, repetitions=1, cache=None, progress=False)
    assert capsys.readouterr().err == ""


def test_progress_bar_counts_failed_calls(capsys):
    class HalfBroken:
        model = "half"
        settings = MappingProxyType({})

        def complete(self, request):
            if request.quantity == "action":
                raise KeyError("bug")
            return Completion(text="No: 0.3\nYes: 0.7")

    with pytest.warns(ParseFailureWarning):
        run(make_contexts(3), HalfBroken(), question=QUESTION, repetitions=1, cache=None,
            **{**FAST, "progress": True})
    err = capsys.readouterr().err
    assert "elicitation:" in err and "6/6" in err and "failed=3" in err


@pytest.mark.parametrize(("identity", "where"), [
    ({1: "x", "1": "y"}, r"identity\[1\]"),
    ({"a": {2: 3}}, r"identity\['a'\]\[2\]"),
    ({"a": [{"b": 1, (3,): 4}]}, r"identity\['a'\]\[0\]\[\(3,\)\]")])
def test_cache_key_needs_string_keys(identity, where):
    # {1: "x"} and {"1": "x"} would have shared a key; mixed keys raised a bare sort error
    with pytest.raises(TypeError, match=r"The 'identity' parameter of cache_key must be a "
                       rf"mapping whose keys \(at any depth\) are strings; got the key {where}"):
        elicitation.cache_key(identity)
    with pytest.raises(TypeError, match=r"'identity' parameter of cache_key must be a mapping"):
        elicitation.cache_key(["x"])
