"""Elicitation: parser throughput, runner overhead and the gain from concurrency.

``python -m benchmarks elicitation`` (from the repository root). Measures, in
one run: microseconds per parsed reply (strict and tolerant paths); runner
throughput with the simulated client (in-memory versus SQLite cache, first run
versus a fully cached re-run); wall time of the same HTTP run against the
local fake server (fixed per-request latency) at concurrency 1 and 8, as a
ratio; wall time of a run against a closed port (nothing listening) with the
command line's retry settings, the refused connection failing its call at once versus
retried with backoff as before, as a ratio. Also the agreement of the simulated
client's table with ``coherence.simulate`` for the same agent (share of actions, mean
belief).
"""

from __future__ import annotations

import tempfile
import time
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import coherence
import elicitation


def _contexts(n: int, seed: int = 0) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    q = (gen.permutation(n) + gen.random(n)) / n
    return pd.DataFrame({"context": np.arange(n), "truth": q,
                         "outcome": (gen.random(n) < q).astype(np.int64),
                         "description": [f"is case {i}" for i in range(n)]})


def _parse_speed() -> None:
    replies = {
        "strict": "No: 0.3\nYes: 0.7",
        "tolerant": "Let me think. The evidence points to disease.\n**Yes:** 70%\n**No:** 30%",
        "failure": "I cannot answer that question without more information.",
    }
    for name, text in replies.items():
        n = 20000
        start = time.perf_counter()
        for _ in range(n):
            elicitation.parse_probabilities(text)
        per = (time.perf_counter() - start) / n * 1e6
        print(f"  parse {name:<9} {per:7.1f} us/reply")


def _runner_speed() -> None:
    contexts = _contexts(200)
    client = elicitation.SimulatedClient(coherence.Agent.rational(), contexts, rng=0)
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "bench.sqlite"
        for label, cache in (("memory", None), ("sqlite", path), ("sqlite re-run", path)):
            start = time.perf_counter()
            res = elicitation.run(contexts, client, question="have it", repetitions=5, cache=cache,
                                  progress=False)
            wall = time.perf_counter() - start
            print(f"  runner {label:<14} {len(res.raw)} elicitations, {res.n_calls} calls, "
                  f"{wall:6.2f} s ({len(res.raw) / wall:7.0f} elicitations/s)")


def _concurrency_gain() -> None:
    import sys

    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from tests._fake_openai_server import FakeOpenAIServer
    from tests._fake_openai_server import Reply

    latency = 0.05
    srv = FakeOpenAIServer(lambda body, attempt: Reply(delay=latency)).start()
    try:
        contexts = _contexts(20)
        walls = {}
        for conc in (1, 8):
            client = elicitation.OpenAIClient("fake", base_url=srv.url, timeout=10)
            start = time.perf_counter()
            res = elicitation.run(contexts, client, question="have it", repetitions=2, cache=None,
                                  concurrency=conc, progress=False)
            walls[conc] = time.perf_counter() - start
            print(f"  http concurrency={conc}: {res.n_calls} calls at {latency * 1e3:.0f} ms "
                  f"latency, {walls[conc]:5.2f} s")
        print(f"  speed-up of concurrency 8 over 1: {walls[1] / walls[8]:.1f}x")
    finally:
        srv.stop()


def _refused_fail_fast() -> None:
    """``coherence elicit --probe 6`` with no server: 6 calls, concurrency 2, max_retries 3,
    backoff 0.5 s. Before, a refused connection was retried like any transient error; the
    wrapper below masks ``refused`` to time that path in the same run."""
    import socket

    class Masked:
        def __init__(self, client: elicitation.OpenAIClient) -> None:
            self.client, self.model, self.settings = client, client.model, client.settings

        def complete(self, request: elicitation.Request) -> elicitation.Completion:
            try:
                return self.client.complete(request)
            except elicitation.TransientError as exc:
                raise elicitation.TransientError(str(exc)) from None

    with socket.socket() as sock:   # a free port, closed again: connections are refused
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    contexts = _contexts(3)
    walls: dict[str, list[float]] = {"before": [], "now": []}
    for _ in range(2):
        for label in ("before", "now"):
            client: Any = elicitation.OpenAIClient("x", base_url=f"http://127.0.0.1:{port}/v1")
            client = Masked(client) if label == "before" else client
            start = time.perf_counter()
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", elicitation.ParseFailureWarning)
                elicitation.run(contexts, client, question="have it", repetitions=1,
                                cache=None, concurrency=2, max_retries=3, max_failures=20,
                                progress=False)
            walls[label].append(time.perf_counter() - start)
    before, now = min(walls["before"]), min(walls["now"])
    print(f"  refused connection, 6 calls: retried {before:5.2f} s, failed at once {now:5.3f} s "
          f"({before / now:.0f}x)")


def _agreement_with_simulate() -> None:
    agent = coherence.Agent.rational(report_noise=0.05)
    study = coherence.simulate(agent, n_contexts=400, n_repetitions=5, rng=1)
    ctx = study.data.groupby("context").first()[["truth", "outcome"]].reset_index()
    ctx["description"] = [f"is case {i}" for i in ctx["context"]]
    client = elicitation.SimulatedClient(agent, ctx, rng=1)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = elicitation.run(ctx, client, question="have it", repetitions=5, cache=None,
                              progress=False)
    a = study.data["action"].value_counts(normalize=True).sort_index()
    b = res.data["action"].value_counts(normalize=True).sort_index()
    print("  action shares simulate():", {k: round(float(v), 3) for k, v in a.items()},
          " runner:", {k: round(float(v), 3) for k, v in b.items()})
    print(f"  mean belief simulate(): {study.data['belief'].mean():.4f}  "
          f"runner: {res.data['belief'].mean():.4f}")


def main(argv: list[str]) -> None:
    """Run the elicitation benchmarks and print the figures."""
    _parse_speed()
    _runner_speed()
    _concurrency_gain()
    _refused_fail_fast()
    _agreement_with_simulate()


if __name__ == "__main__":
    main([])
