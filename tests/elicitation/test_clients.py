"""Model clients: the HTTP client against a real local server, token beliefs, simulated agents."""

from __future__ import annotations

import math
from datetime import UTC

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

import coherence
from elicitation import Client
from elicitation import ClientError
from elicitation import OpenAIClient
from elicitation import Request
from elicitation import SimulatedClient
from elicitation import TransientError
from elicitation import get_template
from elicitation import parse_decision
from elicitation import parse_probabilities
from elicitation import token_belief
from tests._fake_openai_server import FakeOpenAIServer
from tests._fake_openai_server import Reply

CASE = {"patient_description": "is 60 years old", "clinical_question": "Is it serious?"}


@pytest.fixture
def server():
    srv = FakeOpenAIServer().start()
    yield srv
    srv.stop()


def _request(template="standard", **kw):
    t = get_template(template)
    return Request(messages=tuple(t.render(**CASE)), kind=t.kind, labels=t.labels_for({}), **kw)


def test_normal_answer(server):
    client = OpenAIClient("tiny", base_url=server.url, api_key="sk-test", temperature=0.5,
                          seed=3, max_tokens=20, timeout=5)
    assert isinstance(client, Client)
    out = client.complete(_request(seed=4))
    assert out.text == "No: 0.3\nYes: 0.7"
    assert math.isnan(out.token_belief)
    body = server.bodies[-1]
    assert body["model"] == "tiny" and body["temperature"] == 0.5 and body["seed"] == 4
    assert body["max_tokens"] == 20
    assert body["messages"][-1]["role"] == "user"
    assert "logprobs" not in body and "grammar" not in body and "response_format" not in body
    assert "sk-test" not in repr(client) and "sk-test" not in str(dict(client.settings))


def test_environment_defaults(server, monkeypatch):
    monkeypatch.setenv("OPENAI_BASE_URL", server.url)
    monkeypatch.setenv("OPENAI_MODEL", "env-model")
    monkeypatch.setenv("OPENAI_TIMEOUT", "7")
    client = OpenAIClient()
    assert client.model == "env-model" and client.timeout == 7.0
    assert client.complete(_request()).text == "No: 0.3\nYes: 0.7"


def test_openai_key_from_the_environment_goes_to_openai_only(server, monkeypatch):
    # $OPENAI_API_KEY went to whatever base_url was given: a local or a third party's
    # server got OpenAI's key with every request
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-PRIVATE0123")
    OpenAIClient("m", base_url=server.url).complete(_request())
    assert server.auth_seen == [None]
    assert OpenAIClient("m", base_url="https://api.openai.com/v1")._key == \
        "sk-openai-PRIVATE0123"
    # a key passed for the server is sent to it
    OpenAIClient("m", base_url=server.url, api_key="own-key").complete(_request())
    assert server.auth_seen[-1] == "Bearer own-key"
    # a server that wants a key says so, and the error says why none was sent
    srv = FakeOpenAIServer(lambda body, attempt: Reply(status=401)).start()
    try:
        with pytest.raises(ClientError, match=r"HTTP 401 .*no key was sent: \$OPENAI_API_KEY "
                                              r"goes only to api.openai.com"):
            OpenAIClient("m", base_url=srv.url).complete(_request())
    finally:
        srv.stop()


@pytest.mark.parametrize("url", ["http://api.openai.com/v1", "https://api.openai.com:8443/v1",
                                 "http://api.openai.com:443/v1"])
def test_openai_key_from_the_environment_goes_over_https_to_port_443_only(url, monkeypatch):
    # OpenAI's origin is https://api.openai.com: http://api.openai.com/v1 (a typo) got
    # $OPENAI_API_KEY in the clear, before the server's redirect to https was refused
    import http.client

    sent = []

    def connect(self):
        pass

    def request(self, method, path, body=None, headers=None):
        sent.append(dict(headers or {}))
        raise ConnectionResetError("stub: nothing is sent")

    monkeypatch.setattr(http.client.HTTPConnection, "connect", connect)
    monkeypatch.setattr(http.client.HTTPSConnection, "connect", connect)
    monkeypatch.setattr(http.client.HTTPConnection, "request", request)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-PRIVATE0123")
    with pytest.raises(TransientError):
        OpenAIClient("m", base_url=url).complete(_request())
    assert len(sent) == 1 and "Authorization" not in sent[0]
    with pytest.raises(TransientError):
        OpenAIClient("m", base_url="https://API.openai.com:443/v1").complete(_request())
    assert sent[-1]["Authorization"] == "Bearer sk-openai-PRIVATE0123"
    # a key passed for that address is its user's choice, and is sent
    with pytest.raises(TransientError):
        OpenAIClient("m", base_url=url, api_key="own-key").complete(_request())
    assert sent[-1]["Authorization"] == "Bearer own-key"


def test_retry_after_as_an_http_date_is_honoured():
    # RFC 9110 lets Retry-After be a date: it was read as no Retry-After at all, so the
    # runner's backoff (about 8 to 15 s over 5 retries) spent a call's retries inside a
    # rate limit of a minute
    from datetime import datetime
    from datetime import timedelta
    from email.utils import format_datetime

    when = format_datetime(datetime.now(UTC) + timedelta(seconds=60), usegmt=True)
    past = format_datetime(datetime.now(UTC) - timedelta(seconds=60), usegmt=True)
    for header, low, high in ((when, 55.0, 61.0), (past, 0.0, 0.0), ("soon", None, None)):
        srv = FakeOpenAIServer(lambda body, attempt, h=header: Reply(
            status=429, headers={"Retry-After": h})).start()
        try:
            with pytest.raises(TransientError, match="HTTP 429") as info:
                OpenAIClient("m", base_url=srv.url, timeout=5).complete(_request())
        finally:
            srv.stop()
        if low is None:
            assert info.value.retry_after is None
        else:
            assert low <= info.value.retry_after <= high, (header, info.value.retry_after)


@pytest.mark.parametrize("status", [429, 500, 502, 503])
def test_retryable_statuses(status):
    srv = FakeOpenAIServer(lambda body, attempt: Reply(status=status,
                                                       headers={"Retry-After": "2"})).start()
    try:
        client = OpenAIClient("m", base_url=srv.url, timeout=5)
        with pytest.raises(TransientError, match=f"HTTP {status}") as info:
            client.complete(_request())
        assert info.value.retry_after == 2.0
    finally:
        srv.stop()


@pytest.mark.parametrize("status", [400, 401, 404])
def test_client_errors_are_not_transient(status):
    srv = FakeOpenAIServer(lambda body, attempt: Reply(status=status)).start()
    try:
        with pytest.raises(ClientError, match=f"HTTP {status}") as info:
            OpenAIClient("m", base_url=srv.url, timeout=5).complete(_request())
        assert not isinstance(info.value, TransientError)
    finally:
        srv.stop()


@pytest.mark.parametrize("body", [b"{not json", b'{"choices": []}', b'{"choices": [{}]}',
                                  b'{"choices": [{"message": {"content": 3}}]}'])
def test_malformed_bodies_are_transient(body):
    srv = FakeOpenAIServer(lambda b, attempt: Reply(body=body)).start()
    try:
        with pytest.raises(TransientError, match="malformed response body"):
            OpenAIClient("m", base_url=srv.url, timeout=5).complete(_request())
    finally:
        srv.stop()


def test_slow_answer_times_out():
    srv = FakeOpenAIServer(lambda b, attempt: Reply(delay=1.0)).start()
    try:
        with pytest.raises(TransientError, match="timed out"):
            OpenAIClient("m", base_url=srv.url, timeout=0.2).complete(_request())
    finally:
        srv.stop()


def test_connection_refused_is_transient():
    srv = FakeOpenAIServer().start()
    url = srv.url
    srv.stop()
    with pytest.raises(TransientError, match=r"connection to .* failed") as info:
        OpenAIClient("m", base_url=url, timeout=2).complete(_request())
    assert info.value.refused  # the request never left: the runner need not wait to retry it
    assert not TransientError("timed out").refused


def test_constrained_output_fields(server):
    grammar = OpenAIClient("m", base_url=server.url, constrained="grammar", timeout=5)
    grammar.complete(_request())
    assert 'root ::= "No: " num "\\n" "Yes: " num' in server.bodies[-1]["grammar"]
    grammar.complete(_request("decision"))
    assert "yn ::= \"Yes\" | \"No\"" in server.bodies[-1]["grammar"]
    schema = OpenAIClient("m", base_url=server.url, constrained="json_schema", timeout=5,
                          extra_body={"top_p": 0.9})
    schema.complete(_request())
    body = server.bodies[-1]
    assert body["top_p"] == 0.9
    props = body["response_format"]["json_schema"]["schema"]["properties"]
    assert list(props) == ["No", "Yes"] and props["Yes"]["maximum"] == 1
    assert schema.settings["top_p"] == 0.9


CHAT_LOGPROBS = {"content": [
    {"token": "Decide", "logprob": -0.01, "top_logprobs": [{"token": "Decide", "logprob": -0.01}]},
    {"token": " Yes", "logprob": math.log(0.9),
     "top_logprobs": [{"token": " Yes", "logprob": math.log(0.9)},
                      {"token": " No", "logprob": math.log(0.1)}]},
    {"token": "Answer", "logprob": -0.01, "top_logprobs": []},
    {"token": " No", "logprob": math.log(0.5),
     "top_logprobs": [{"token": " No", "logprob": math.log(0.5)},
                      {"token": " Yes", "logprob": math.log(0.3)},
                      {"token": "yes", "logprob": math.log(0.1)},
                      {"token": " Maybe", "logprob": math.log(0.1)}]},
]}
COMPLETION_LOGPROBS = {"tokens": ["Yes", ":", " 0"], "token_logprobs": [-0.2, -0.1, -0.3],
                       "top_logprobs": [{"Yes": math.log(0.6), "No": math.log(0.2)},
                                        {":": -0.1}, {" 0": -0.3, " 1": -2.0}]}


def test_token_belief_both_layouts():
    # last Yes/No position: 0.3 + 0.1 yes against 0.5 no
    assert token_belief(CHAT_LOGPROBS) == pytest.approx(0.4 / 0.9)
    assert token_belief(COMPLETION_LOGPROBS) == pytest.approx(0.75)
    for bad in (None, {}, {"content": None}, {"content": [{"top_logprobs": [{"token": "x",
                                                                             "logprob": 0}]}]},
                "text", {"top_logprobs": [None, 3]}):
        assert math.isnan(token_belief(bad))


def test_logprobs_requested_and_recorded():
    srv = FakeOpenAIServer(lambda b, attempt: Reply(text="Decide: Yes\nAnswer: No",
                                                    logprobs=CHAT_LOGPROBS)).start()
    try:
        client = OpenAIClient("m", base_url=srv.url, logprobs=True, top_logprobs=5, timeout=5)
        out = client.complete(_request("decision"))
        assert srv.bodies[-1]["logprobs"] is True and srv.bodies[-1]["top_logprobs"] == 5
        assert out.token_belief == pytest.approx(0.4 / 0.9)
        assert out.logprobs == CHAT_LOGPROBS
    finally:
        srv.stop()


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"model": ""}, ValueError, "'model' parameter of OpenAIClient"),
        # a blank name was sent and tabled; a line break (a name read from a file), tab or
        # NUL went into the cache keys and the tables
        ({"model": "   "}, ValueError, r"'model' parameter of OpenAIClient must be a model "
         r"name \(or \$OPENAI_MODEL set\); got '   '"),
        ({"model": "gpt-4o\n"}, ValueError, r"'model' parameter of OpenAIClient must be a "
         r"model name with no control character such as a line break, tab or NUL; got "
         r"'gpt-4o\\n'"),
        ({"model": "a\x00b"}, ValueError, r"no control character.*got 'a\\x00b'"),
        ({"model": "a\tb"}, ValueError, r"no control character.*got 'a\\tb'"),
        ({"model": "m", "base_url": "ftp://x"}, ValueError, "'base_url' parameter"),
        ({"model": "m", "temperature": -1.0}, ValueError, "'temperature' parameter"),
        ({"model": "m", "seed": -1}, ValueError, "'seed' parameter"),
        ({"model": "m", "max_tokens": 0}, ValueError, "'max_tokens' parameter"),
        ({"model": "m", "timeout": 0.0}, ValueError, "'timeout' parameter"),
        ({"model": "m", "logprobs": 1}, TypeError, "'logprobs' parameter"),
        ({"model": "m", "top_logprobs": 50}, ValueError, "'top_logprobs' parameter"),
        ({"model": "m", "constrained": "regex"}, ValueError, "'constrained' parameter"),
        ({"model": "m", "extra_body": [1]}, TypeError, "'extra_body' parameter"),
    ],
)
def test_openai_client_validation(kwargs, exc, match, monkeypatch):
    monkeypatch.delenv("OPENAI_MODEL", raising=False)
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:9/v1")
    with pytest.raises(exc, match=match):
        OpenAIClient(**kwargs)


def test_no_default_endpoint(monkeypatch):
    # a run goes only where the user pointed it: no public API by default
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(ValueError, match=r"'base_url' parameter of OpenAIClient.*got None"):
        OpenAIClient("m")
    monkeypatch.setenv("OPENAI_BASE_URL", "http://127.0.0.1:8080/v1")
    assert OpenAIClient("m").url == "http://127.0.0.1:8080/v1/chat/completions"


# --------------------------------------------------------------------------- simulated
def _truths(n=200, seed=0):
    gen = np.random.default_rng(seed)
    q = (gen.permutation(n) + gen.random(n)) / n
    return pd.DataFrame({"context": np.arange(n), "truth": q,
                         "outcome": (gen.random(n) < q).astype(np.int64)})


def test_simulated_reports_follow_the_agent():
    truths = _truths()
    agent = coherence.Agent.prompt_sensitive()
    client = SimulatedClient(agent, truths, rng=1)
    for prompt in ("standard", "mse", "absolute", "bayesian"):
        for ctx in range(0, 200, 17):
            out = client.complete(Request(messages=(), context=ctx, prompt=prompt))
            p = parse_probabilities(out.text)
            assert p.method == "strict"
            b = agent.latent_belief(truths.loc[ctx, "truth"])
            expected = coherence.snap_to_grid(np.clip(b + agent.shift(prompt), 0, 1), 0.05)
            assert p.values["Yes"] == pytest.approx(float(expected), abs=1e-12)


def test_simulated_actions_match_choice_probabilities():
    truths = pd.DataFrame({"context": [0], "truth": [0.62], "outcome": [1]})
    agent = coherence.Agent.rational(temperature=0.2)
    client = SimulatedClient(agent, truths, rng=2)
    actions = [parse_decision(client.complete(Request(messages=(), kind="decision", context=0,
                                                      repetition=r)).text).values["action"]
               for r in range(3000)]
    counts = pd.Series(actions).value_counts().reindex(list(agent.actions), fill_value=0)
    probs = agent.choice_probabilities(agent.latent_belief([0.62]))[0]
    assert stats.chisquare(counts.to_numpy(), probs * len(actions)).pvalue > 1e-3


def test_simulated_leaky_agent_uses_the_outcome():
    n = 1500
    truths = pd.DataFrame({"context": np.arange(n), "truth": 0.5,
                           "outcome": np.arange(n) % 2})
    client = SimulatedClient(coherence.Agent.leaky(strength=0.8, defer=False), truths, rng=3)
    acts = np.array([parse_decision(client.complete(Request(
        messages=(), kind="decision", context=c)).text).values["action"] == "yes"
        for c in range(n)])
    y = truths["outcome"].to_numpy() == 1
    assert acts[y].mean() - acts[~y].mean() > 0.5


def test_simulated_is_order_free_and_seeded():
    truths = _truths(20)
    agent = coherence.Agent.rational(report_noise=0.1)
    reqs = [Request(messages=(), context=c, repetition=r) for c in range(20) for r in range(3)]
    a = [SimulatedClient(agent, truths, rng=5).complete(r).text for r in reqs]
    client = SimulatedClient(agent, truths, rng=5)
    b = [client.complete(r).text for r in reversed(reqs)][::-1]
    c = [SimulatedClient(agent, truths, rng=6).complete(r).text for r in reqs]
    assert a == b
    assert a != c


def test_simulated_validation():
    truths = _truths(5)
    with pytest.raises(TypeError, match="'agent' parameter of SimulatedClient"):
        SimulatedClient(3, truths)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="'agent' parameter of SimulatedClient"):
        SimulatedClient("genius", truths)
    with pytest.raises(TypeError, match="'truths' parameter"):
        SimulatedClient("rational", {"truth": [0.1]})
    with pytest.raises(ValueError, match="one row per context"):
        SimulatedClient("rational", pd.DataFrame({"context": [1, 1], "truth": [0.1, 0.2]}))
    with pytest.raises(ValueError, match="'fail' parameter"):
        SimulatedClient("rational", truths, fail=2.0)
    client = SimulatedClient("rational", truths)
    with pytest.raises(ClientError, match="no context 99"):
        client.complete(Request(messages=(), context=99))
    with pytest.raises(ClientError, match="no column 'p_a'"):
        client.complete(Request(messages=(), context=1, quantity="p_a"))


# --------------------------------------------------------------------------- reasoning grammar
def test_grammar_leaves_room_for_reasoning_only_where_the_prompt_asks(server):
    from elicitation._constrained import REASONING_LINE
    from elicitation._constrained import REASONING_LINES

    client = OpenAIClient("m", base_url=server.url, constrained="grammar", timeout=5)
    client.complete(_request())
    plain = server.bodies[-1]["grammar"]
    assert plain.startswith('root ::= "No: " num') and "reasoning" not in plain
    client.complete(_request(reasoning=True))
    grammar = server.bodies[-1]["grammar"]
    lines = grammar.splitlines()
    assert lines[0] == "root ::= reasoning answer"
    assert 'answer ::= "No: " num "\\n" "Yes: " num' in lines
    # bounded: at most REASONING_LINES lines of at most REASONING_LINE characters
    assert f'reasoning ::= (line "\\n"{{1,2}}){{1,{REASONING_LINES}}}' in lines
    assert f"line ::= [^\\n]{{1,{REASONING_LINE}}}" in lines
    client.complete(_request("decision", reasoning=True))
    assert 'answer ::= "Can decide: " yn "\\nDecision: " yn' in server.bodies[-1]["grammar"]


def test_the_reasoning_grammar_is_chosen_from_the_template():
    from elicitation._engine import make_job
    from elicitation._engine import settings_json

    fields = {"question": "Will A?", "condition_question": "Will B?",
              "condition_outcome": "YES"}
    keys = {}
    for constrained in (None, "grammar"):
        client = OpenAIClient("m", base_url="http://127.0.0.1:9/v1", constrained=constrained)
        for name in ("conditional_skeptical", "conditional_baseline"):
            job = make_job(client, settings_json(client), get_template(name), fields,
                           context=0, prompt="p", repetition=0, quantity="q")
            assert job.request.reasoning is (name == "conditional_skeptical") is job.final
            if constrained == "grammar":
                grammar = client.body(job.request)["grammar"]
                assert ("reasoning" in grammar) is (name == "conditional_skeptical")
            keys[(constrained, name)] = job.key
    # a reply made under the answer-only grammar is not reused for the reasoning one
    assert keys[(None, "conditional_skeptical")] != keys[("grammar", "conditional_skeptical")]


@given(st.lists(st.text(st.characters(blacklist_characters="\n\r", blacklist_categories=(
    "Cs",)), min_size=1, max_size=200), min_size=1, max_size=6),
    st.sampled_from(["0", "1", "1.0", "0.3", "0.25", "0.125", "0.7"]))
def test_every_reply_the_reasoning_grammar_allows_is_read_at_its_end(lines, yes):
    """The parser reads the answer lines that end a reply of the grammar, whatever the
    reasoning before them says (numbers, labels and all)."""
    import re

    from elicitation import parse_probabilities

    no = {"0": "1", "1": "0", "1.0": "0", "0.3": "0.7", "0.25": "0.75", "0.125": "0.875",
          "0.7": "0.3"}[yes]
    text = "".join(line + "\n" for line in lines) + f"No: {no}\nYes: {yes}"
    assert re.fullmatch(r"(?:[^\n]{1,200}\n{1,2}){1,6}No: [0-9.]+\nYes: [0-9.]+", text)
    parsed = parse_probabilities(text, ("No", "Yes"), final=True)
    assert parsed.ok, (parsed.reason, parsed.detail, text)
    assert parsed.values["Yes"] == pytest.approx(float(yes))

@pytest.mark.parametrize(("truths", "message"), [
    (pd.DataFrame({"context": [0, 1], "truth": [0.5, 1.2]}),
     r"Column 'truth' \(input to SimulatedClient\) must hold probabilities in \[0, 1\]"),
    (pd.DataFrame({"context": [0], "truth": ["high"]}),
     r"Column 'truth' \(input to SimulatedClient\) must be numeric"),
    (pd.DataFrame({"pair": ["x"], "p_a_given_b1": [-0.1]}),
     r"Column 'p_a_given_b1' \(input to SimulatedClient\) must hold probabilities"),
    (pd.DataFrame({"context": [0], "prob_high": [1.5]}),
     r"Column 'prob_high' \(input to SimulatedClient\) must hold probabilities"),
    (pd.DataFrame({"context": ["c"], "truth": [0.5], "outcome": [2]}),
     r"Column 'outcome' \(input to SimulatedClient\) must be binary \(0 or 1, or missing\); "
     r"1 row\(s\) are not \(first: context 'c' = 2\)"),
])
def test_simulated_client_truths_are_validated(truths, message):
    # a truth of 1.2 was clipped silently; an outcome of 2 read as "not 1"
    with pytest.raises(ValueError, match=message):
        SimulatedClient(coherence.Agent.rational(), truths)


def test_simulated_client_missing_truth_is_a_client_error():
    client = SimulatedClient(coherence.Agent.rational(),
                             pd.DataFrame({"context": [0, 1], "truth": [0.5, np.nan]}))
    assert client.complete(Request(messages=(), context=0, prompt="standard")).text
    with pytest.raises(ClientError, match=r"no value in column 'truth' for context 1"):
        client.complete(Request(messages=(), context=1, prompt="standard"))


def _reply_text(message: dict) -> tuple[str, int]:
    """The text the client makes of one reply holding ``message``, and the calls sent."""
    import json

    body = json.dumps({"choices": [{"message": {"role": "assistant", **message},
                                    "finish_reason": "stop"}]}).encode()
    srv = FakeOpenAIServer(lambda b, attempt: Reply(body=body)).start()
    try:
        out = OpenAIClient("m", base_url=srv.url, timeout=5).complete(_request())
    finally:
        srv.stop()
    return out.text, len(srv.bodies)


@pytest.mark.parametrize(("content", "text"), [
    ([{"type": "text", "text": "No: 0.3\nYes: 0.7"}], "No: 0.3\nYes: 0.7"),
    ([{"type": "thinking", "thinking": "Yes: 0.99"}, {"type": "text", "text": "No: 0.3\n"},
      {"type": "text", "text": "Yes: 0.7"}], "No: 0.3\nYes: 0.7"),
    ([{"type": "reasoning", "text": "Yes: 0.99"}, "No: 0.3\nYes: 0.7"], "No: 0.3\nYes: 0.7"),
    ([], ""),
])
def test_content_as_a_list_of_parts_is_read_not_retried(content, text):
    # a reply whose content was a list of parts was thrown away as malformed and retried
    assert _reply_text({"content": content}) == (text, 1)


@pytest.mark.parametrize(("message", "text"), [
    ({"content": None, "refusal": "I cannot give medical probabilities."},
     "I cannot give medical probabilities."),
    ({"content": "", "refusal": "I cannot give medical probabilities."},
     "I cannot give medical probabilities."),
    ({"content": "No: 0.3\nYes: 0.7", "refusal": None}, "No: 0.3\nYes: 0.7"),
    ({"content": None, "refusal": None}, ""),
])
def test_a_refusal_is_the_reply_not_an_empty_one(message, text):
    # OpenAI's refusal (content null, the model's words in 'refusal') was stored as an
    # empty reply: what the model said was lost
    assert _reply_text(message) == (text, 1)


@pytest.mark.parametrize("field", ["seed", "messages", "model", "temperature", "max_tokens",
                                   "grammar"])
def test_extra_body_cannot_replace_what_the_client_writes(field):
    # extra_body was merged last: {"seed": 5} sent seed 5 for every repetition while the
    # cache keys and the raw table recorded seeds 5, 6, 7; {"messages": [...]} sent one
    # prompt for every context, each cached under its own
    with pytest.raises(ValueError, match=rf"'extra_body' parameter of OpenAIClient .*"
                                         rf"got \['{field}'\]"):
        OpenAIClient("m", base_url="http://127.0.0.1:9/v1", extra_body={field: 5})
    assert OpenAIClient("m", base_url="http://127.0.0.1:9/v1",
                        extra_body={"top_p": 0.9, "stop": ["\n\n"]}).settings["top_p"] == 0.9


@pytest.mark.parametrize(("extra", "name"),
                         [({"api_key": "sk-x"}, "api_key"), ({"Authorization": "Bearer x"},
                                                             "Authorization"),
                          ({"top_p": 0.9, "TOKEN": "x"}, "TOKEN"), ({"Key": "x"}, "Key"),
                          ({"access-token": "x"}, "access-token"),
                          ({"password": "x"}, "password"), ({"secret": "x"}, "secret"),
                          ({"metadata": {"api_key": "x"}}, "api_key")])
def test_extra_body_refuses_a_credential(extra, name):
    # extra_body is part of the recorded settings: {"api_key": ...} was written in clear
    # into the cache's settings column, result.settings and the study's raw.csv
    with pytest.raises(ValueError, match=rf"'extra_body' parameter of OpenAIClient .*"
                                         rf"api_key=.*got \['{name}'\]"):
        OpenAIClient("m", base_url="http://127.0.0.1:9/v1", extra_body=extra)
    # the key given as the client's own parameter is recorded nowhere
    client = OpenAIClient("m", base_url="http://127.0.0.1:9/v1", api_key="sk-own-key-123",
                          extra_body={"top_p": 0.9, "keywords": ["a"]})
    assert "sk-own-key-123" not in repr(dict(client.settings))
    # a JSON schema's fields name the reply's fields, not settings: a field 'token' is kept
    schema = {"guided_json": {"type": "object", "properties": {"token": {"type": "string"}}}}
    assert OpenAIClient("m", base_url="http://127.0.0.1:9/v1", extra_body=schema).extra_body


@pytest.mark.parametrize("extra", [{"n": 3}, {"stream": True}])
def test_extra_body_cannot_ask_several_choices_or_a_stream(make_server, extra):
    # {"n": 3} was sent: the server sampled (and billed) three replies per call and the
    # client kept the first, the other two lost; {"stream": True} sent every call, paid,
    # then failed it (and its retries) as a malformed body
    with pytest.raises(ValueError, match=r"'extra_body' parameter of OpenAIClient .*'n'"):
        OpenAIClient("m", base_url="http://127.0.0.1:9/v1", extra_body=extra)
    srv = make_server()
    client = OpenAIClient("m", base_url=srv.url, timeout=5,
                          extra_body={"n": 1, "stream": False})
    assert client.complete(_request()).text == "No: 0.3\nYes: 0.7"
    assert srv.bodies[-1]["n"] == 1


@pytest.mark.parametrize("url", ["htp://user:s3cr3tvalue@host/v1", "http://user:s3cr3tvalue@/v1",
                                 "user:s3cr3tvalue@host/v1", "ftp://s3cr3tvalue@host/v1"])
def test_a_refused_base_url_never_quotes_its_credentials(url):
    # a URL refused for its scheme or host was quoted as given: the key in its user info
    # ('htp://user:key@host', a typo in the scheme) was in the error message
    with pytest.raises(ValueError, match=r"'base_url' parameter of OpenAIClient") as info:
        OpenAIClient("m", base_url=url)
    assert "s3cr3tvalue" not in str(info.value)
    assert "[redacted]@" in str(info.value)


def test_extra_body_cannot_overwrite_a_recorded_setting():
    # extra_body came last in the settings: constrained='grammar' with {"constrained": None}
    # was recorded, and keyed in the cache, as an unconstrained client's (its grammar
    # replies were read back for a client that asked none, and the other way round)
    with pytest.raises(ValueError, match=r"'extra_body' parameter of OpenAIClient .*"
                                         r"got \['constrained'\]"):
        OpenAIClient("m", base_url="http://127.0.0.1:9/v1", constrained="grammar",
                     extra_body={"constrained": None})


def test_a_whole_reply_is_kept_when_the_deadline_fires_as_it_arrives(server, monkeypatch):
    """Regression: the deadline firing after the last byte of a reply (its Content-Length
    read) threw the reply away, and the call was sent, and paid for, again."""
    import http.client
    import threading

    fired: list = []

    class Deadline:  # the watchdog, fired by hand right after the body's last byte
        def __init__(self, interval, function):
            self.function, self.daemon = function, True

        def start(self):
            fired.append(self.function)

        def cancel(self):
            pass

    read = http.client.HTTPResponse.read

    def read_then_expire(self, *args):
        chunk = read(self, *args)
        if not chunk and fired:
            fired.pop()()  # the deadline, once the whole body is in
        return chunk

    monkeypatch.setattr(threading, "Timer", Deadline)
    monkeypatch.setattr(http.client.HTTPResponse, "read", read_then_expire)
    client = OpenAIClient("tiny", base_url=server.url, timeout=5)
    assert client.complete(_request()).text == "No: 0.3\nYes: 0.7"
    assert len(server.bodies) == 1  # one call, not a second one for a reply already here


def test_top_logprobs_without_logprobs_raises(server):
    """Regression: top_logprobs=5 without logprobs=True went unused without a word (the
    command line and study files already refused it; the class could not tell a value
    given from its default 10)."""
    with pytest.raises(ValueError, match=r"'top_logprobs' parameter of OpenAIClient must be "
                       r"None without logprobs=True.*got 5"):
        OpenAIClient("m", base_url=server.url, top_logprobs=5)
    assert OpenAIClient("m", base_url=server.url, logprobs=True).top_logprobs == 10
    assert OpenAIClient("m", base_url=server.url).settings["top_logprobs"] is None
