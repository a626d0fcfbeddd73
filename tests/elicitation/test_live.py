"""Optional: a run against a real local model (skipped unless one is available).

Point ``ELICITATION_LIVE_BASE_URL`` (and optionally ``ELICITATION_LIVE_MODEL``)
at a running OpenAI-compatible server on this machine, e.g. the llama.cpp
server with Gemma 3 270M (see docs/elicitation.md), or have ``llama_cpp``
installed and ``ELICITATION_GGUF`` naming a ``.gguf`` file, in which case the
fixture starts ``python -m llama_cpp.server`` on 127.0.0.1 for the test.
"""

from __future__ import annotations

import importlib.util
import os
import socket
import subprocess
import sys
import time
import urllib.request
import warnings

import numpy as np
import pandas as pd
import pytest

import elicitation

pytestmark = pytest.mark.slow


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@pytest.fixture(scope="module")
def live_url():
    url = os.environ.get("ELICITATION_LIVE_BASE_URL")
    if url:
        yield url
        return
    gguf = os.environ.get("ELICITATION_GGUF")
    if not gguf or importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("no local model: set ELICITATION_LIVE_BASE_URL, or ELICITATION_GGUF with "
                    "llama-cpp-python[server] installed")
    port = _free_port()
    proc = subprocess.Popen([sys.executable, "-m", "llama_cpp.server", "--model", gguf,
                             "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "2048"],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    url = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 120
        while True:
            try:
                with urllib.request.urlopen(url + "/models", timeout=2):
                    break
            except OSError:
                if time.monotonic() > deadline or proc.poll() is not None:
                    pytest.skip("the llama.cpp server did not start")
                time.sleep(1)
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_grammar_constrained_run_against_a_local_model(live_url, tmp_path):
    model = os.environ.get("ELICITATION_LIVE_MODEL", "local")
    client = elicitation.OpenAIClient(model, base_url=live_url, api_key="none", seed=0,
                                      temperature=0.7, max_tokens=24, timeout=120,
                                      constrained="grammar", logprobs=True, top_logprobs=5)
    contexts = pd.DataFrame({
        "context": np.arange(5),
        "description": ["is 45 years old and has chest pain on exertion",
                        "is 30 years old with no symptoms",
                        "is 70 years old, a smoker, with high blood pressure",
                        "is 55 years old with a prolonged QRS duration",
                        "is 62 years old with diabetes"],
    })
    question = "Does the patient have heart disease?"
    with warnings.catch_warnings():
        # a base model's numbers need not sum to 1: that is data, not an error here
        warnings.simplefilter("ignore", elicitation.ParseFailureWarning)
        result = elicitation.run(contexts, client, question=question, repetitions=2,
                                 cache=tmp_path / "live.sqlite", progress=False)
        again = elicitation.run(contexts, client, question=question, repetitions=2,
                                cache=tmp_path / "live.sqlite", progress=False)
    raw = result.raw
    assert len(raw) == 20 and raw["text"].notna().all()
    # the grammar fixes the format: every reply is read by the strict rule, or fails
    # only on the sum
    assert set(raw.loc[raw["parse_ok"], "method"]) <= {"strict"}
    assert set(raw.loc[~raw["parse_ok"], "reason"]) <= {"bad_sum"}
    assert again.n_calls == 0
    pd.testing.assert_frame_equal(result.raw.drop(columns="cached"),
                                  again.raw.drop(columns="cached"))
