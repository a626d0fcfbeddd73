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


class _Refusing:
    """Refuses the connection (a ``TransientError`` with ``refused``) on the calls listed,
    answers the others; counts the attempts of each call."""

    model = "refusing"
    settings = MappingProxyType({})

    def __init__(self, answer_first: bool) -> None:
        self.answer_first = answer_first
        self.attempts: Counter = Counter()
        self._lock = threading.Lock()

    def complete(self, request):
        with self._lock:
            n = sum(self.attempts.values())
            self.attempts[(request.context, request.quantity)] += 1
        if self.answer_first and n == 0:
            return Completion(text="No: 0.3\nYes: 0.7", token_belief=float("nan"))
        raise elicitation.TransientError("connection to x failed: ConnectionRefusedError",
                                         refused=True)


def test_a_refused_connection_before_any_reply_fails_the_call_without_retries():
    # nothing listens there: each call is tried once, not max_retries + 1 times with backoff
    client = _Refusing(answer_first=False)
    with pytest.warns(ParseFailureWarning):
        result = run(make_contexts(3), client, question=QUESTION, repetitions=1, cache=None,
                     concurrency=1, max_retries=5, max_failures=100, **FAST)
    assert set(client.attempts.values()) == {1} and result.n_failed_attempts == 6
    assert result.raw["call_error"].str.contains("ConnectionRefusedError").all()


def test_a_refused_connection_after_a_reply_is_retried_as_before():
    # once the server has answered, a refused connection may be a restart: retried in full
    client = _Refusing(answer_first=True)
    with pytest.warns(ParseFailureWarning):
        run(make_contexts(3), client, question=QUESTION, repetitions=1, cache=None,
            concurrency=1, max_retries=2, max_failures=100, **FAST)
    assert sorted(client.attempts.values()) == [1, 3, 3, 3, 3, 3]


def test_http_refused_connection_is_marked_and_not_retried(make_server):
    srv = make_server()
    srv.stop()
    client = OpenAIClient("fake", base_url=srv.url, seed=0, timeout=2)
    start = time.monotonic()
    with pytest.warns(ParseFailureWarning):
        result = run(make_contexts(2), client, question=QUESTION, repetitions=1, cache=None,
                     concurrency=1, max_retries=3, max_failures=100, backoff=5.0,
                     progress=False)
    # backoff=5 s: a single retry would take seconds
    assert time.monotonic() - start < 3 and result.n_failed_attempts == 4


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


def test_simulated_cache_key_follows_the_truths(tmp_path):
    # editing the truths of a SimulatedClient served the old answers from the cache
    path = tmp_path / "c.sqlite"
    first = make_contexts(4)
    edited = first.assign(truth=1.0 - first["truth"], outcome=1 - first["outcome"])
    agent = coherence.Agent.rational(grid=None, report_noise=0.0)
    a = run(first, SimulatedClient(agent, first, rng=0), question=QUESTION, repetitions=1,
            cache=path, decision=None, **FAST)
    b = run(edited, SimulatedClient(agent, edited, rng=0), question=QUESTION, repetitions=1,
            cache=path, decision=None, **FAST)
    assert b.n_cached == 0 and b.n_calls == 4
    np.testing.assert_allclose(b.data["belief"], edited["truth"], atol=1e-5)
    np.testing.assert_allclose(a.data["belief"], first["truth"], atol=1e-5)
    # the same truths are the same answers: served from the cache
    assert run(first, SimulatedClient(agent, first.copy(), rng=0), question=QUESTION,
               repetitions=1, cache=path, decision=None, **FAST).n_calls == 0
    # an outcome alone (the leaky agent's signal) changes the key, and so does the seed
    flipped = first.assign(outcome=1 - first["outcome"])
    keys = {SimulatedClient(agent, t, rng=s).settings["truths"] + str(s)
            for t, s in ((first, 0), (flipped, 0), (first, 1))}
    assert len(keys) == 3
    # the client copies the table: editing it afterwards changes neither answers nor key
    table = first.copy()
    client = SimulatedClient(agent, table, rng=0)
    before = dict(client.settings)
    table["truth"] = 0.5
    assert dict(client.settings) == before
    # exact posteriors differ in their last bit between processes (the order a network's
    # weights are summed in): the key must not, or a resumed study makes every call again
    nudged = first.assign(truth=np.nextafter(first["truth"].to_numpy(), 2.0))
    assert (SimulatedClient(agent, nudged, rng=0).settings["truths"]
            == SimulatedClient(agent, first, rng=0).settings["truths"])


class _Slow:
    """A slow client: each call takes ``delay`` seconds; the ``stop_at``-th call raises
    KeyboardInterrupt (Ctrl-C arriving while it is in flight); the ``sigint_at``-th call
    sends the main thread a SIGINT from its worker thread (Ctrl-C pressed while the main
    thread waits), then takes its time as the others do."""

    model = "slow"
    settings = MappingProxyType({})

    def __init__(self, delay, stop_at, sigint_at=0):
        self.delay, self.stop_at, self.sigint_at = delay, stop_at, sigint_at
        self.calls = 0
        self.lock = threading.Lock()

    def complete(self, request):
        with self.lock:
            self.calls += 1
            n = self.calls
        if n == self.sigint_at:
            # to the main thread, as a terminal's Ctrl-C reaches a waiting process: raised
            # in this worker thread, the signal interrupted no wait of the main thread, and
            # under load its KeyboardInterrupt could surface only after the run
            signal.pthread_kill(threading.main_thread().ident, signal.SIGINT)
        time.sleep(self.delay)
        if n == self.stop_at:
            raise KeyboardInterrupt
        return Completion(text="No: 0.3\nYes: 0.7")


def test_ctrl_c_stops_the_run_and_keeps_the_replies_received(tmp_path):
    # Ctrl-C surfaced only after every queued call had been made
    contexts = make_contexts(50)
    client = _Slow(delay=0.02, stop_at=6)
    cache = ResponseCache(tmp_path / "c.sqlite")
    with pytest.raises(KeyboardInterrupt):
        run(contexts, client, question=QUESTION, repetitions=1, decision=None, cache=cache,
            concurrency=2, **FAST)
    # (no wall-clock bound: it failed once on a loaded machine; the count is the check)
    assert client.calls <= 8            # the interrupted one and those in flight, of 50
    kept = len(cache)
    assert kept == client.calls - 1     # every reply that arrived is stored
    # a re-run resumes: only the missing calls are made
    again = _Slow(delay=0.0, stop_at=0)
    result = run(contexts, again, question=QUESTION, repetitions=1, decision=None,
                 cache=cache, **FAST)
    assert again.calls == 50 - kept and result.n_cached == kept and len(result.data) == 50
    cache.close()


@pytest.fixture
def python_ctrl_c():
    """Python's own Ctrl-C handling for the test: a process started in the background by
    a non-interactive shell inherits SIGINT ignored, and Python then keeps it ignored
    ("did not raise" in every background run of the suite)."""
    previous = signal.signal(signal.SIGINT, signal.default_int_handler)
    yield
    signal.signal(signal.SIGINT, previous)


def test_ctrl_c_in_the_waiting_thread_cancels_the_queued_calls(tmp_path, python_ctrl_c):
    # the SIGINT comes from the 4th call's worker thread, so it arrives while the main
    # thread waits, however loaded the machine (a timer thread started before the run
    # could fire after it)
    _stops_early_keeping_replies(_Slow(delay=0.05, stop_at=0, sigint_at=4), tmp_path)


def _stops_early_keeping_replies(client, tmp_path):
    """A run of 200 calls that a Ctrl-C stops: fewer than half sent, and every call sent
    (those in flight included) finished and stored."""
    path = tmp_path / "c.sqlite"
    with pytest.raises(KeyboardInterrupt):
        run(make_contexts(200), client, question=QUESTION, repetitions=1, decision=None,
            cache=path, concurrency=2, **FAST)
    assert client.calls < 100
    cache = ResponseCache(path)
    assert len(cache) == client.calls
    cache.close()


class _HeldFirst:
    """The first call takes 3 seconds (a long model call); the second sends SIGINT to its
    own worker thread, as the kernel may deliver a terminal's Ctrl-C to any thread of the
    process; the others take ``delay`` seconds."""

    model = "held"
    settings = MappingProxyType({})

    def __init__(self, delay):
        self.delay, self.calls = delay, 0
        self.lock = threading.Lock()

    def complete(self, request):
        with self.lock:
            self.calls += 1
            n = self.calls
        if n == 1:
            time.sleep(3.0)
        elif n == 2:
            signal.raise_signal(signal.SIGINT)   # to this worker thread, not the main one
        time.sleep(self.delay)
        return Completion(text="No: 0.3\nYes: 0.7")


def test_ctrl_c_delivered_to_a_worker_thread_stops_the_run(tmp_path, python_ctrl_c):
    # the main thread waited, untimed, on the first (held) call: a SIGINT handed to a
    # worker thread ran its handler only when that call returned, 3 s later (149 of 200
    # calls sent on this machine); the wait now wakes to run it. The long call finishes
    # and is stored.
    _stops_early_keeping_replies(_HeldFirst(delay=0.02), tmp_path)


class _Counting:
    """Answers every call (and counts them) under a given base seed."""

    model = "counting"

    def __init__(self, seed):
        self.settings = MappingProxyType({"seed": seed})
        self.calls = 0

    def complete(self, request):
        self.calls += 1
        if request.kind == "decision":
            return Completion(text="Can decide: Yes\nDecision: Yes")
        return Completion(text="No: 0.4\nYes: 0.6")


@pytest.mark.parametrize(("seed", "repetitions", "largest"),
                         [(2**63 - 1, 2, 2**63), (2**63 - 3, 5, 2**63 + 1), (2**63, 1, 2**63),
                          (-(2**63) - 1, 1, -(2**63) - 1)])
def test_a_seed_the_cache_cannot_store_is_refused_before_any_call(tmp_path, seed, repetitions,
                                                                  largest):
    # seed + repetition above 2**63 - 1 was sent (and paid), then its reply failed to be
    # written to the cache ("Python int too large to convert to SQLite INTEGER")
    client = _Counting(seed)
    with pytest.raises(ValueError, match=rf"'seed' .*largest seed would be {largest}\b"):
        run(make_contexts(2), client, question=QUESTION, repetitions=repetitions,
            cache=tmp_path / "c.sqlite", **FAST)
    assert client.calls == 0
    # the largest seed the cache stores is still used
    client = _Counting(2**63 - 2)
    result = run(make_contexts(2), client, question=QUESTION, repetitions=2,
                 cache=tmp_path / "ok.sqlite", **FAST)
    assert client.calls == 8 and result.raw["seed"].max() == 2**63 - 1


def test_a_call_errors_text_keeps_no_credential(tmp_path):
    # the text of what the client raised was stored as it was: a library's error that
    # quoted the key went to result.raw's call_error and detail, and the study's raw.csv
    key = "my-own-key-0123456789"

    class Leaky:
        model = "leaky"
        settings = MappingProxyType({})
        api_key = key

        def complete(self, request):
            raise RuntimeError(f"refused: key {key}; Authorization: Bearer tok-abcdef123, "
                               "other sk-proj0123456789abcd")

    with pytest.warns(ParseFailureWarning):
        result = run(make_contexts(2), Leaky(), question=QUESTION, repetitions=1,
                     cache=tmp_path / "c.sqlite", max_failures=100, **FAST)
    shown = result.raw[["call_error", "detail"]].astype(str).to_string()
    assert "RuntimeError: refused: key [redacted]" in shown
    for secret in (key, "tok-abcdef123", "sk-proj0123456789abcd"):
        assert secret not in shown
    with sqlite3.connect(tmp_path / "c.sqlite") as conn:
        rows = conn.execute("SELECT * FROM responses").fetchall()
    assert key not in repr(rows)
    # and the message of a run that stopped on its failure budget
    with pytest.raises(ElicitationError) as info:
        run(make_contexts(2), Leaky(), question=QUESTION, repetitions=1, cache=None,
            max_failures=0, **FAST)
    assert key not in str(info.value) and "[redacted]" in str(info.value)
