"""Faults and hostile servers: bounded time, no lost reply, no credential off its origin.

Each test scripts a fault of the fake chat-completions server
(``tests/_fake_openai_server.py``) and checks what the client and the runner
do with it; each class of fault of issue 17 has one test here.
"""

from __future__ import annotations

import json
import math
import sqlite3
import time

import numpy as np
import pandas as pd
import pytest

from elicitation import ClientError
from elicitation import ElicitationError
from elicitation import OpenAIClient
from elicitation import ParseFailureWarning
from elicitation import Request
from elicitation import ResponseCache
from elicitation import TransientError
from elicitation import get_template
from elicitation import run
from elicitation import run_pairs
from elicitation import token_belief
from tests._fake_openai_server import Reply
from tests._fake_openai_server import call_key
from tests.elicitation._shared import FAST
from tests.elicitation._shared import QUESTION
from tests.elicitation._shared import http_run
from tests.elicitation._shared import make_contexts

KEY = "sk-test-SECRET-0123456789"
CASE = {"patient_description": "is 40 years old", "clinical_question": "have heart disease"}


def _request() -> Request:
    t = get_template("standard")
    return Request(messages=tuple(t.render(**CASE)), kind=t.kind, labels=t.labels_for({}))


def _client(srv, **kw) -> OpenAIClient:
    return OpenAIClient("fake", base_url=srv.url, api_key=KEY, **{"timeout": 2, **kw})


# --------------------------------------------------------------------------- bounded time
@pytest.mark.parametrize(
    ("reply", "kw", "exc", "match"),
    [
        (Reply(trickle=0.05), {"timeout": 0.3, "deadline": 0.5}, TransientError, "deadline"),
        (Reply(endless=True), {"max_response_bytes": 30_000}, ClientError,
         "max_response_bytes"),
        (Reply(endless=True), {"deadline": 0.5, "max_response_bytes": 10**9},
         TransientError, "deadline"),
        (Reply(text="x" * 300_000), {"max_response_bytes": 100_000}, ClientError,
         "not read"),
        (Reply(short_by=50), {}, TransientError, "IncompleteRead"),
        (Reply(garbled_status=True), {}, TransientError, "broken HTTP reply"),
        (Reply(reset=True), {}, TransientError, "(broken HTTP reply|connection to)"),
    ],
)
def test_faults_end_within_the_deadline(make_server, reply, kw, exc, match):
    srv = make_server(lambda body, attempt: reply)
    client = _client(srv, **kw)
    start = time.monotonic()
    with pytest.raises(exc, match=match):
        client.complete(_request())
    assert time.monotonic() - start < 5.0


def test_transient_faults_are_retried_and_no_reply_is_lost(make_server, tmp_path):
    faults = [Reply(short_by=20), Reply(garbled_status=True), Reply(reset=True),
              Reply(status=429, headers={"Retry-After": "0"})]

    def behaviour(body, attempt):
        if attempt == 0:
            return faults[int(call_key(body), 16) % len(faults)]
        return Reply()

    srv = make_server(behaviour)
    contexts = make_contexts(8)
    # every call fails once and then succeeds: retries that succeed do not count
    # against max_failures (issue 17: one 429 per first attempt aborted a run)
    client = OpenAIClient("fake", base_url=srv.url, seed=0, timeout=2)
    result = run(contexts, client, question=QUESTION, repetitions=2, max_failures=0,
                 cache=tmp_path / "c.sqlite", **FAST)
    assert len(result.data) == 16 and result.raw["text"].notna().all()
    assert result.n_failed_attempts == 32
    # each call was answered in full exactly once (its second attempt), and stored
    second = [e for e in srv.log if e["attempt"] == 1 and e["answered"]]
    assert len(ResponseCache(tmp_path / "c.sqlite")) == 32 == len(second)
    assert {e["attempt"] for e in srv.log} == {0, 1}


# --------------------------------------------------------------------------- credentials
def test_redirects_are_not_followed_and_the_key_stays_home(make_server):
    target = make_server(lambda body, attempt: Reply(text="No: 0.99\nYes: 0.01"))
    for status in (301, 302, 303, 307, 308):
        srv = make_server(lambda body, attempt, s=status: Reply(
            status=s, headers={"Location": target.url + "/chat/completions"}))
        with pytest.raises(ClientError, match=f"HTTP {status}.*redirects are not followed"):
            _client(srv).complete(_request())
        assert srv.auth_seen == [f"Bearer {KEY}"]
    # the other origin saw nothing: no request, so no key and no answer accepted
    assert target.auth_seen == [] and target.log == []


def test_error_bodies_are_redacted_in_exceptions_and_tables(make_server):
    srv = make_server(lambda body, attempt: Reply(status=401, echo_auth=True))
    with pytest.raises(ClientError) as info:
        _client(srv).complete(_request())
    assert KEY not in str(info.value) and "[redacted]" in str(info.value)
    srv5 = make_server(lambda body, attempt: Reply(status=503, echo_auth=True))
    client = OpenAIClient("fake", base_url=srv5.url, api_key=KEY, timeout=2)
    with pytest.warns(ParseFailureWarning):
        result = run(make_contexts(1), client, question=QUESTION, repetitions=1, cache=None,
                     max_retries=1, **FAST)
    text = result.raw.to_csv()
    assert KEY not in text and "SECRET" not in text
    assert result.raw["call_error"].str.contains("redacted").all()


def test_credentials_in_base_url_are_refused_and_never_shown():
    with pytest.raises(ValueError) as info:
        OpenAIClient("m", base_url="https://user:hunter2secret@example.org/v1")
    assert "hunter2secret" not in str(info.value) and "example.org" in str(info.value)
    client = OpenAIClient("m", base_url="http://127.0.0.1:9/v1?api-version=1", api_key=KEY)
    assert KEY not in repr(client) and KEY not in client.url
    with pytest.raises(TransientError) as err:
        OpenAIClient("m", base_url="http://127.0.0.1:9/v1", api_key=KEY,
                     timeout=1).complete(_request())
    assert KEY not in str(err.value)


def test_a_key_with_a_line_break_is_refused_without_showing_it(make_server, monkeypatch):
    # a key read from a file keeps its newline: http.client refused the header with a
    # ValueError quoting "Bearer <key>", stored with the call in result.raw's call_error
    for bad in (KEY + "\n", KEY + "\r\n", "sk-\x00" + KEY):
        with pytest.raises(ValueError, match="'api_key' parameter of OpenAIClient") as info:
            OpenAIClient("m", base_url="http://127.0.0.1:9/v1", api_key=bad)
        assert "SECRET" not in str(info.value)
    monkeypatch.setenv("OPENAI_API_KEY", KEY + "\n")
    with pytest.raises(ValueError, match="line breaks") as info:
        OpenAIClient("m", base_url="https://api.openai.com/v1")
    assert "SECRET" not in str(info.value)
    # any other header http.client refuses is a ClientError with the key redacted
    srv = make_server()
    client = _client(srv)
    client._key = KEY + "\n"
    with pytest.raises(ClientError, match="could not be sent") as err:
        client.complete(_request())
    assert "SECRET" not in str(err.value) and srv.log == []


# --------------------------------------------------------------------------- replies
def test_a_reply_with_a_lone_surrogate_is_stored_not_a_cache_failure(make_server):
    # "\\ud83d" (half an emoji, escaped in the JSON body) could not be written to SQLite:
    # the run stopped with ElicitationError as if the cache were broken, and every re-run
    # paid for the same call and stopped again
    def behaviour(body, attempt):
        if "number 1," not in body["messages"][-1]["content"]:
            return Reply()
        payload = json.dumps({"choices": [{"index": 0, "finish_reason": "stop", "message": {
            "role": "assistant", "content": "No: 0.3\nYes: 0.7 @"}}]})
        return Reply(body=payload.replace("@", "\\ud83d").encode())

    srv = make_server(behaviour)
    client = OpenAIClient("fake", base_url=srv.url, timeout=2)
    result = run(make_contexts(3), client, question=QUESTION, decision=None, repetitions=1,
                 cache=None, concurrency=1, **FAST)
    assert len(result.data) == 3 and result.raw["parse_ok"].all()
    assert result.raw["text"].iloc[1] == "No: 0.3\nYes: 0.7 \ufffd"
    cache = ResponseCache(None)
    cache.put({"key": "k", "model": "m", "template": "t", "context": "c", "prompt": "p",
               "repetition": 0, "quantity": "q", "settings": "{}", "messages": "[]",
               "text": "pair \ud83d\ude00 and lone \udc00"})
    assert cache.get_many(["k"])["k"]["text"] == "pair \U0001f600 and lone \ufffd"


def test_log_probability_of_1000_keeps_the_reply(make_server):
    lp = {"content": [{"token": "Yes", "logprob": 1000.0,
                       "top_logprobs": [{"token": "Yes", "logprob": 1000.0},
                                        {"token": "No", "logprob": -1e308},
                                        {"token": "no", "logprob": math.log(0.25)}]}]}
    assert token_belief(lp) == 0.0      # only the valid alternative counts
    srv = make_server(lambda body, attempt: Reply(logprobs=lp))
    completion = _client(srv, logprobs=True).complete(_request())
    assert completion.text == "No: 0.3\nYes: 0.7"
    huge = {"content": [{"token": "Yes", "logprob": 1e6, "top_logprobs": []}]}
    assert math.isnan(token_belief(huge))


def test_truncated_replies_and_usage_are_recorded(make_server):
    def behaviour(body, attempt):
        if body["seed"] == 0:
            return Reply(text="No: 0.3\nYes: 0", finish_reason="length",
                         usage={"prompt_tokens": 90, "completion_tokens": 8})
        return Reply(usage={"prompt_tokens": 90, "completion_tokens": 12})

    srv = make_server(behaviour)
    with pytest.warns(ParseFailureWarning):
        result = http_run(srv, make_contexts(2), None, repetitions=2, prompts=("standard",))
    raw = result.raw
    cut = raw[raw["seed"] == 0]
    assert (cut["reason"] == "truncated").all() and not cut["parse_ok"].any()
    assert cut["detail"].str.contains("8 tokens").all()
    assert (raw.loc[raw["seed"] == 1, "completion_tokens"] == 12).all()
    assert (raw["prompt_tokens"] == 90).all()
    assert set(raw["finish_reason"]) == {"stop", "length"}


# --------------------------------------------------------------------------- the cache
class _FullDisk(ResponseCache):
    """A cache whose disk fills up after a few replies."""

    def __init__(self, path, room):
        super().__init__(path)
        self.room = room

    def put(self, record):
        if self.room <= 0:
            raise OSError(f"Cannot write to the response cache {self.path}: database or "
                          "disk is full.")
        self.room -= 1
        super().put(record)


def test_a_failing_cache_write_stops_the_run_at_once(make_server, tmp_path):
    srv = make_server(lambda body, attempt: Reply(delay=0.01))
    cache = _FullDisk(tmp_path / "full.sqlite", room=6)
    client = OpenAIClient("fake", base_url=srv.url, seed=0, timeout=5)
    with pytest.raises(ElicitationError, match=r"full.sqlite.*no further paid call") as info:
        run(make_contexts(20), client, question=QUESTION, repetitions=2, cache=cache,
            concurrency=2, **FAST)
    # every reply the server sent is stored or handed back; the run stopped at once (the
    # server records a reply after sending it: give its thread a moment on a busy machine)
    deadline = time.monotonic() + 5.0
    while len(srv.answered()) != 6 + len(info.value.unstored) and time.monotonic() < deadline:
        time.sleep(0.05)
    answered = len(srv.answered())
    assert answered == 6 + len(info.value.unstored)
    assert answered <= 6 + 2 and len(cache) == 6
    assert all(isinstance(r["text"], str) for r in info.value.unstored)


@pytest.mark.parametrize("kind", ["garbage", "foreign", "directory"])
def test_unusable_cache_files_are_named(tmp_path, kind):
    path = tmp_path / f"{kind}.sqlite"
    if kind == "garbage":
        path.write_bytes(b"this is not a database" * 100)
    elif kind == "foreign":
        with sqlite3.connect(path) as conn:
            conn.execute("CREATE TABLE responses (id INTEGER, body TEXT)")
    else:
        path.mkdir()
    with pytest.raises(ValueError, match=str(path)):
        ResponseCache(path)


def test_unusable_cache_is_a_usage_error_on_the_command_line(tmp_path, capsys):
    from coherence_cli import main

    path = tmp_path / "bad.sqlite"
    path.write_bytes(b"\x00garbage" * 200)
    code = main(["elicit", "--simulated", "rational", "--n-contexts", "2", "--cache",
                 str(path), "--out", str(tmp_path / "e.csv"), "--quiet"])
    err = capsys.readouterr().err
    assert code == 2, err
    assert str(path) in err and len(err.strip().splitlines()) == 1


# --------------------------------------------------------------------------- contexts
@pytest.mark.parametrize(
    ("change", "match"),
    [
        (lambda c: c.iloc[:0], "at least one row"),
        (lambda c: c.assign(clinical_question="have cancer"),
         "'clinical_question' of contexts .* placeholder the runner fills"),
        (lambda c: c.assign(patient_description="x"), "'patient_description'"),
        (lambda c: c.assign(description=[np.nan, *c["description"][1:]]),
         r"Column 'description' .* 1 rows do not \(first: index \[0\]"),
        (lambda c: c.assign(description=["  ", *c["description"][1:]]), "non-empty text"),
    ],
)
def test_contexts_that_would_change_the_prompt_are_refused(change, match):
    from elicitation import SimulatedClient

    contexts = make_contexts(3)
    client = SimulatedClient("rational", contexts, rng=0)
    with pytest.raises(ValueError, match=match):
        run(change(contexts), client, question=QUESTION, cache=None, **FAST)


def test_a_full_question_is_refused_for_the_papers_prompts():
    from elicitation import SimulatedClient

    contexts = make_contexts(2)
    client = SimulatedClient("rational", contexts, rng=0)
    with pytest.raises(ValueError, match="phrase that follows 'they'"):
        run(contexts, client, question="Does the patient have heart disease?", cache=None,
            **FAST)
    with pytest.raises(ValueError, match="'question' column"):
        run(contexts.assign(question="What is the probability of X?"), client, cache=None,
            **FAST)


def test_empty_pairs_table_is_refused():
    from elicitation import SimulatedClient

    pairs = pd.DataFrame({"pair": pd.Series([], dtype=object), "question_a": [],
                          "question_b": []})
    client = SimulatedClient("rational", pd.DataFrame({"pair": ["p"], "p_a": [0.5]}), rng=0)
    with pytest.raises(ValueError, match=r"'pairs' parameter of run_pairs .* at least one row"):
        run_pairs(pairs, client, cache=None, **FAST)


def test_a_reply_cut_by_the_content_filter_is_truncated(make_server):
    # "Yes: 0.99\nNo: 0.01" cut at "No: 0" sums to 0.99, within the tolerance, and was read
    # as a belief of 1.0: the server said it had cut the reply (finish_reason
    # 'content_filter'), as it says 'length' at max_tokens
    srv = make_server(lambda body, attempt: Reply(text="Yes: 0.99\nNo: 0",
                                                  finish_reason="content_filter"))
    with pytest.warns(ParseFailureWarning):
        result = http_run(srv, make_contexts(2), None, repetitions=1, prompts=("standard",),
                          decision=None)
    raw = result.raw
    assert (raw["reason"] == "truncated").all() and not raw["parse_ok"].any()
    assert raw["detail"].str.contains("content filter").all()
    assert len(result.data) == 0 and (raw["finish_reason"] == "content_filter").all()
