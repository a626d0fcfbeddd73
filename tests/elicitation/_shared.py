"""Shared by the runner and study tests: the question, fast retries, a contexts table, a run
over HTTP, the command line run in-process."""

from __future__ import annotations

import contextlib
import io

import numpy as np
import pandas as pd

from coherence_cli import main
from elicitation import OpenAIClient
from elicitation import run

QUESTION = "have heart disease"
FAST = {"backoff": 0.01, "max_backoff": 0.05, "progress": False}


def make_contexts(n=12, seed=0):
    gen = np.random.default_rng(seed)
    q = (gen.permutation(n) + gen.random(n)) / n
    return pd.DataFrame({
        "context": np.arange(n, dtype=np.int64),
        "truth": q,
        "outcome": (gen.random(n) < q).astype(np.int64),
        "description": [f"is patient number {i}, aged {30 + i}" for i in range(n)],
        "age": 30 + np.arange(n, dtype=np.int64),
    })


def http_run(srv, contexts, cache, **kw):
    client = OpenAIClient("fake", base_url=srv.url, seed=0, timeout=kw.pop("timeout", 5))
    return run(contexts, client, question=QUESTION, cache=cache, **{**FAST, **kw})


def cli(*argv: str) -> tuple[int, str]:
    """``coherence ARGV`` run in this process: its exit code and what it printed."""
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        code = main(list(argv))
    return code, out.getvalue()
