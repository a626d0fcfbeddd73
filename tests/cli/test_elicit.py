"""``coherence elicit`` against the fake chat-completions server, in process."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from coherence_cli import main
from tests._fake_openai_server import FakeOpenAIServer
from tests._fake_openai_server import Reply


@pytest.fixture
def server():
    servers = []

    def make(behaviour=None, slots=None):
        srv = FakeOpenAIServer(behaviour)
        srv.slots = slots
        servers.append(srv.start())
        return srv

    yield make
    for srv in servers:
        srv.stop()


def _elicit(srv, tmp_path, *extra, out=True):
    """The command against ``srv``; ``out=False`` names no --out (a probe writes no table)."""
    return main(["elicit", "--base-url", srv.url, "--model", "fake", "--n-contexts", "2",
                 "--cache", str(tmp_path / "c.sqlite"),
                 *(("--out", str(tmp_path / "e.csv")) if out else ()), "--quiet", *extra])


def test_a_usable_table_with_model_settings_and_raw_replies(server, tmp_path, capsys):
    def behaviour(body, attempt):
        # one incoherent belief reply (kept, flagged, with its action), the rest well formed
        if body["seed"] == 1 and "Example format" not in body["messages"][-1]["content"]:
            return Reply(text="No: 0\nYes: 0")
        return Reply()

    srv = server(behaviour, slots=2)
    code = _elicit(srv, tmp_path, "--concurrency", "8", "--raw-out", str(tmp_path / "raw.csv"))
    out = capsys.readouterr()
    assert code == 0, out.err
    assert "concurrency lowered from 8 to 2" in out.err and "concurrency 2" in out.out
    data = pd.read_csv(tmp_path / "e.csv")
    assert len(data) == 2 and set(data["model"]) == {"fake"}
    assert json.loads(data["settings"].iloc[0])["max_tokens"] == 48
    flagged = pd.read_csv(tmp_path / "e_incoherent.csv")
    assert len(flagged) == 2 and (flagged["stated_sum"] == 0).all()
    assert set(flagged["action"]) == {"yes"}
    raw = pd.read_csv(tmp_path / "raw.csv")
    assert len(raw) == 8 and raw["text"].notna().all() and "finish_reason" in raw
    assert "2 belief replies did not sum to 1" in out.out
    # a rerun that sets nothing aside removes the earlier run's sidecar, which `coherence
    # test` would otherwise count against the new table
    srv2 = server(lambda body, attempt: Reply(), slots=2)
    assert _elicit(srv2, tmp_path, "--seed", "5") == 0
    assert not (tmp_path / "e_incoherent.csv").exists()
    assert "removed" in capsys.readouterr().out
    # the papers' prompts, with the network's target as the question phrase
    asked = srv.bodies[0]["messages"][-1]["content"]
    assert "probability that they have tetralogy of Fallot?" in asked or \
        "Do they have tetralogy of Fallot?" in asked


def test_nothing_usable_exits_1_with_reasons_and_a_raw_reply(server, tmp_path, capsys):
    srv = server(lambda body, attempt: Reply(text="I'm sorry, I cannot say."))
    code = _elicit(srv, tmp_path)
    err = capsys.readouterr().err
    assert code == 1
    assert "no usable row" in err and "no_probability" in err
    assert "I'm sorry, I cannot say." in err
    assert not (tmp_path / "e.csv").exists()


def test_every_call_failing_exits_non_zero(server, tmp_path, capsys):
    srv = server(lambda body, attempt: Reply(status=404))
    code = _elicit(srv, tmp_path, "--max-failures", "100")
    err = capsys.readouterr().err
    assert code == 1 and "call_failed" in err and "HTTP 404" in err


def test_probe_prints_parse_rate_and_speed(server, tmp_path, capsys):
    srv = server(lambda body, attempt: Reply(delay=0.02))
    code = _elicit(srv, tmp_path, "--probe", "4", out=False)
    out = capsys.readouterr().out
    assert code == 0
    assert "parsed 4 of 4 replies (100%)" in out and "s per call" in out
    assert "the configured run makes 8 calls" in out
    assert len(srv.log) == 4 and not (tmp_path / "e.csv").exists()
    # the probe's calls are the first of the configured run: it reuses them
    assert _elicit(srv, tmp_path) == 0
    assert "4 from the cache" in capsys.readouterr().out and len(srv.log) == 8


def test_no_endpoint_is_a_usage_error(tmp_path, capsys, monkeypatch):
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    code = main(["elicit", "--model", "m", "--cache", str(tmp_path / "c.sqlite")])
    assert code == 2 and "no endpoint" in capsys.readouterr().err


# --------------------------------------------------------------------------- probe and hints
def test_probe_tries_a_larger_token_limit_when_every_reply_is_cut(server, tmp_path, capsys):
    def behaviour(body, attempt):
        # cut below 96 tokens, whole at 96 and above
        return Reply(finish_reason="length") if body["max_tokens"] < 96 else Reply()

    srv = server(behaviour)
    code = _elicit(srv, tmp_path, "--probe", "4", out=False)
    out = capsys.readouterr().out
    assert code == 0, out
    assert "every reply was cut at --max-tokens 48; probing again with --max-tokens 96" in out
    assert "rerun with --max-tokens 96" in out
    assert {b["max_tokens"] for b in srv.bodies} == {48, 96}


def test_probe_gives_up_after_a_few_doublings(server, tmp_path, capsys):
    srv = server(lambda body, attempt: Reply(finish_reason="length"))
    code = _elicit(srv, tmp_path, "--probe", "2", out=False)
    out = capsys.readouterr().out
    assert code == 1
    assert {b["max_tokens"] for b in srv.bodies} == {48, 96, 192, 384}
    assert "still cut at --max-tokens 384" in out and "--stop" in out


def test_a_server_refusing_without_a_key_hints_at_api_key_env(server, tmp_path, capsys,
                                                               monkeypatch):
    # $OPENAI_API_KEY is no longer sent to another server: the hint names --api-key-env
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-PRIVATE0123")
    srv = server(lambda body, attempt: Reply(status=401))
    code = _elicit(srv, tmp_path, "--max-retries", "0", "--max-failures", "1")
    err = capsys.readouterr().err
    assert code == 1 and srv.auth_seen and set(srv.auth_seen) == {None}
    assert "name the environment variable holding its key with --api-key-env" in err
    assert "sk-openai" not in err


def test_a_refused_connection_hints_at_the_server_not_the_prompt(server, tmp_path, capsys):
    srv = server()
    srv.stop()
    code = _elicit(srv, tmp_path, "--probe", "2", "--max-retries", "0", out=False)
    out = capsys.readouterr().out
    assert code == 1
    assert "nothing answered at" in out and "--constrained grammar" not in out.split(
        "hint:")[-1].split("cannot help")[0]
    code = _elicit(srv, tmp_path, "--max-retries", "0", "--max-failures", "1")
    err = capsys.readouterr().err
    assert code == 1 and "nothing answered at" in err and "try --probe" not in err


def test_a_refused_connection_fails_before_the_network_is_loaded(server, tmp_path, capsys,
                                                                  monkeypatch):
    import bayesnets

    def no_network(*args, **kwargs):
        raise AssertionError("the network was loaded although nothing listens")

    srv = server()
    srv.stop()
    monkeypatch.setattr(bayesnets, "contexts", no_network)
    assert _elicit(srv, tmp_path, "--probe", "6", out=False) == 1
    captured = capsys.readouterr()
    assert "ConnectionRefusedError" in captured.err and "no call was sent" in captured.err
    assert "nothing answered at" in captured.out
    assert not srv.log


def test_elicit_summary_flags_degenerate_beliefs_and_test_counts_set_aside(server, tmp_path,
                                                                         capsys):
    def behaviour(body, attempt):
        # every belief the prompt's example 0.50 (the decision prompt has "Example format")
        if "Example format" not in body["messages"][-1]["content"]:
            return Reply(text="No: 0.50\nYes: 0.50")
        return Reply()

    srv = server(behaviour)
    code = _elicit(srv, tmp_path, "--n-contexts", "6")
    out = capsys.readouterr().out
    assert code == 0
    assert "WARNING: Degenerate elicitation" in out and "at the example value 0.5" in out
    # a sidecar of set-aside replies is counted by `coherence test`
    pd.DataFrame({"model": ["fake"], "reason": ["bad_sum"], "context": [0]}).to_csv(
        tmp_path / "e_incoherent.csv", index=False)
    code = main(["test", str(tmp_path / "e.csv"), "--tests", "calibration,ci", "--permutations",
                 "19", "--resamples", "19", "--csv", str(tmp_path / "r.csv"), "--quiet",
                 "--out", str(tmp_path / "r.html")])
    captured = capsys.readouterr()
    assert "WARNING" in captured.out and "Degenerate elicitation" in captured.out
    frame = pd.read_csv(tmp_path / "r.csv")
    assert frame["degenerate_elicitation"].all() and (frame["n_set_aside"] == 1).all()
    assert "Warning: degenerate elicitation" in (tmp_path / "r.html").read_text()
    assert "replies set aside" in captured.err

def test_unset_api_key_env_is_a_usage_error(tmp_path, capsys, monkeypatch):
    # a variable named on purpose but unset (a typo) sent no key without a word
    monkeypatch.delenv("MY_UNSET_KEY_VAR", raising=False)
    code = main(["elicit", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                 "--api-key-env", "MY_UNSET_KEY_VAR", "--cache", str(tmp_path / "c.sqlite")])
    err = capsys.readouterr().err
    assert code == 2 and "--api-key-env names $MY_UNSET_KEY_VAR, which is not set" in err
    monkeypatch.setenv("MY_UNSET_KEY_VAR", "")
    code = main(["elicit", "--base-url", "http://127.0.0.1:9/v1", "--model", "m",
                 "--api-key-env", "MY_UNSET_KEY_VAR", "--cache", str(tmp_path / "c.sqlite")])
    assert code == 2 and "is not set (or is empty)" in capsys.readouterr().err


@pytest.mark.parametrize("options", [
    ["--temperature", "0.2"], ["--base-url", "http://127.0.0.1:1/v1", "--model", "m"],
    ["--constrained", "grammar", "--logprobs"], ["--stop", "<|im_end|>", "--max-tokens", "48"],
    ["--timeout", "5"],
])
def test_simulated_refuses_model_options(options, tmp_path, capsys):
    # they were accepted and ignored: the table looked as if made with them
    code = main(["elicit", "--simulated", "rational", "--n-contexts", "2",
                 "--cache", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "e.csv"),
                 "--quiet", *options])
    err = capsys.readouterr().err
    assert code == 2
    named = err.split("error: ")[1].split(" set the model behind a server")[0].split(", ")
    assert sorted(named) == sorted(o for o in options if o.startswith("--"))
    assert "--simulated rational" in err
    assert not (tmp_path / "e.csv").exists() and not (tmp_path / "c.sqlite").exists()


@pytest.mark.parametrize("extra, message", [
    (("--top-logprobs", "5"), "--top-logprobs sets the alternatives of --logprobs"),
    (("--decision", "decision_toolkit", "--no-decision"), "--no-decision asks none"),
    (("--question", " "), "--question '' is no phrase"),
    (("--seed", "-1"), "--seed must be a non-negative int; got -1"),
    (("--raw-out", "{out}"), "is the file --out"),
    (("--raw-out", "{incoherent}"), "is the file --out"),
    (("--raw-out", "{missing}"), "no such folder"),
    # --probe writes no table: the --out named was left unwritten without a word
    (("--probe", "2"), "--probe 2 sends a few calls and writes no table, so --out"),
    # a cache in memory keeps nothing: the rerun the help promises would ask everything again
    (("--cache", ":memory:"), "--cache :memory: keeps no reply after the command"),
    # a cache named as the table: the table was written, then the cache over it (the file
    # said to hold the table held SQLite)
    (("--cache", "{out}"), "is a file the run writes as CSV"),
    (("--raw-out", "{raw}", "--cache", "{raw}"), "is a file the run writes as CSV"),
])
def test_an_option_the_run_would_ignore_or_overwrite_is_a_usage_error(server, tmp_path, capsys,
                                                                       extra, message):
    # --top-logprobs without --logprobs and --decision with --no-decision were ignored
    # without a word; --raw-out naming the table (or its _incoherent.csv) was written over
    # by it; a missing folder failed only after every call had been made
    srv = server()
    paths = {"out": str(tmp_path / "e.csv"), "incoherent": str(tmp_path / "e_incoherent.csv"),
             "missing": str(tmp_path / "no" / "raw.csv"), "raw": str(tmp_path / "raw.csv")}
    code = _elicit(srv, tmp_path, *(x.format(**paths) for x in extra))
    err = capsys.readouterr().err
    assert code == 2 and message in err, err
    assert len(err.strip().splitlines()) == 1
    assert srv.log == []   # no call was sent


def test_ctrl_c_is_one_line_and_exit_130_the_replies_kept(server, tmp_path, capsys, monkeypatch):
    # Ctrl-C (the documented way to stop a long run, which resumes from the cache) printed
    # a traceback of the runner's threads
    import coherence_cli
    import elicitation

    srv = server()
    calls = []

    def interrupted(*args, **kwargs):
        calls.append(1)
        raise KeyboardInterrupt

    monkeypatch.setattr(elicitation, "run", interrupted)
    assert _elicit(srv, tmp_path) == coherence_cli.EXIT_INTERRUPTED == 130
    err = capsys.readouterr().err
    assert calls and err.strip() == ("coherence elicit: interrupted; every reply received is "
                                     "in the cache: run the same command again to resume")
    with pytest.raises(KeyboardInterrupt):   # --debug shows the traceback
        main(["--debug", "elicit", "--base-url", srv.url, "--model", "fake",
              "--cache", str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "e.csv")])


def _closed_port():
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.mark.parametrize(("url", "code"), [
    ("http://user:SECRET@127.0.0.1:{port}/v1", 2),       # refused, without repeating it
    ("http://127.0.0.1:{port}/v1?api_key=SECRET", 1),    # nothing listens: said without it
])
def test_a_credential_in_the_endpoint_is_never_printed(tmp_path, capsys, url, code):
    # the connection check before the run printed the endpoint whole, key included, in its
    # error and in its hint
    base = url.format(port=_closed_port())
    assert main(["elicit", "--base-url", base, "--model", "m", "--cache",
                 str(tmp_path / "c.sqlite"), "--out", str(tmp_path / "e.csv")]) == code
    out = capsys.readouterr()
    assert "SECRET" not in out.err + out.out and out.err, out
