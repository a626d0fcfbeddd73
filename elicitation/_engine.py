"""The job engine: calls in, the raw table of responses and their parses out.

A *job* is one call to the model (a rendered template plus its identity:
context, prompt, repetition, quantity) under a cache key. :func:`execute`
looks every job up in the SQLite cache first; a missing one is sent on a
bounded thread pool, retried with exponential backoff and jitter on transient
failures (at least the server's ``Retry-After``; a refused connection only once the
server has answered a call of the run), and its raw response
committed to the cache before anything is parsed. Parsing happens afterwards,
from the cache, so a re-run (after a crash, a kill, or just to re-parse with
other settings) makes no call it has already made. The run stops with
:class:`ElicitationError` once the failure budget (``max_failures``
attempts) is spent. Ctrl-C stops it at once: the queued calls are cancelled,
the replies of the calls in flight are stored, and the ``KeyboardInterrupt``
is raised again.

The study runners (:mod:`._runner`, :mod:`._pairs`, :mod:`._lie`) build the
jobs with :func:`make_job`, validate the options they share with
:func:`common_iv` and turn the parses into their tables; the engine knows
nothing about studies.
"""

from __future__ import annotations

import json
import math
import random
import sys
import threading
import time
import warnings
from collections.abc import Mapping
from collections.abc import Sequence
from concurrent.futures import Future
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from tqdm.auto import tqdm

from coherence._parameters import check_int
from coherence._validation import listed
from coherence._validation import param_error
from coherence._warnings import CoherenceWarning

from ._cache import ResponseCache
from ._cache import cache_key
from ._clients import Client
from ._clients import Completion
from ._clients import Request
from ._clients import TransientError
from ._options import RunOptions
from ._parsing import Parsed
from ._parsing import parse_probabilities
from ._parsing_decision import parse_decision
from ._secrets import redact
from ._templates import NO_CONTROL
from ._templates import Template
from ._templates import has_control

#: How often the waiting thread wakes to run a pending signal's handler (Ctrl-C).
_POLL_SECONDS = 0.2

__all__ = [
    "ElicitationError",
    "EndpointMismatchWarning",
    "EngineOptions",
    "Executed",
    "Job",
    "common_iv",
    "execute",
    "failure_table",
    "make_job",
    "settings_json",
]


class ElicitationError(RuntimeError):
    """The run stopped (too many failed calls, or the cache cannot be written).

    Every response received is in the cache, except when writing to the cache
    failed: the replies received but not stored are then in ``unstored``
    (a list of the records that could not be written), so none is lost.
    """

    def __init__(self, message: str, *, unstored: Sequence[Mapping[str, Any]] = ()) -> None:
        super().__init__(message)
        self.unstored = list(unstored)


@dataclass(frozen=True, slots=True)
class Job:
    """One call: the request to send and the cache key it is stored under."""

    key: str
    request: Request
    settings_json: str
    final: bool = False        # the reply may reason first; read its final answer lines


def _wait_awake(future: Future[Any]) -> None:
    """Wait for a call and raise what it raised, waking every ``_POLL_SECONDS``: Python runs
    a signal's handler in the main thread, and a SIGINT the kernel hands to a worker thread
    does not interrupt an untimed wait, so Ctrl-C waited for the call waited on."""
    while True:
        try:
            future.result(timeout=_POLL_SECONDS)
            return
        except TimeoutError:
            if future.done():  # the call's own TimeoutError, or it ended as the wait did
                future.result()
                return


class _Engine:
    """Sends the jobs missing from the cache: threads, retries, failure budget, progress."""

    def __init__(self, client: Client, cache: ResponseCache, *, concurrency: int,
                 max_retries: int, backoff: float, max_backoff: float, max_failures: int,
                 progress: bool) -> None:
        self.client = client
        self.cache = cache
        self.concurrency = concurrency
        self.max_retries = max_retries
        self.backoff = backoff
        self.max_backoff = max_backoff
        self.max_failures = max_failures
        self.progress = progress
        self.failed_attempts = 0
        self.failed_calls = 0
        self.errors: dict[str, str] = {}
        self.calls = 0
        self.cache_error: BaseException | None = None
        self.unstored: list[dict[str, Any]] = []
        self.endpoint = str(getattr(client, "endpoint", "") or "")
        self._secret = _client_secret(client)
        self._bar: Any = None
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._answered = threading.Event()   # the server has answered a call of this run
        self._jitter = random.Random()

    def _attempt_failed(self, key: str, message: str) -> None:
        # the text of what the client raised may quote its key (a library's error that
        # echoes the request's headers): it goes to result.raw and the study's raw.csv
        message = redact(message, self._secret)
        with self._lock:
            self.failed_attempts += 1
            self.errors[key] = message

    def _one(self, job: Job, bar: tqdm) -> None:
        if self._stop.is_set():
            return
        with self._lock:
            self.calls += 1
        for attempt in range(self.max_retries + 1):
            if self._stop.is_set():
                return
            start = time.monotonic()
            try:
                completion = self.client.complete(job.request)
            except TransientError as exc:
                self._attempt_failed(job.key, f"{type(exc).__name__}: {exc}")
                # a refused connection before the server has answered any call of the run:
                # nothing listens there (the request never left, no reply can be lost), so
                # the call fails now instead of waiting out its backoff
                if attempt == self.max_retries or (getattr(exc, "refused", False)
                                                   and not self._answered.is_set()):
                    break
                delay = min(self.max_backoff, self.backoff * 2.0 ** attempt)
                delay *= 0.5 + self._jitter.random() / 2.0
                if exc.retry_after is not None:
                    delay = max(delay, min(exc.retry_after, self.max_backoff))
                self._stop.wait(delay)
                continue
            except Exception as exc:  # a non-retryable failure of this call
                self._attempt_failed(job.key, f"{type(exc).__name__}: {exc}")
                break
            if not isinstance(completion, Completion) or not isinstance(completion.text, str):
                self._attempt_failed(job.key, f"the client returned {completion!r:.80}, not a "
                                     "Completion with text")
                break
            self._answered.set()
            self._store(job, completion, time.monotonic() - start)
            return
        self._tick(bar, failed=True)

    def _store(self, job: Job, completion: Completion, elapsed: float) -> None:
        """Commit one reply; a failed write stops the run at once, keeping the reply."""
        try:
            tb = float(completion.token_belief)
        except (TypeError, ValueError):
            tb = math.nan
        usage = completion.usage if isinstance(completion.usage, Mapping) else {}
        req = job.request
        record = {
            "key": job.key, "model": self.client.model, "template": req.template,
            "context": str(req.context), "prompt": req.prompt,
            "repetition": req.repetition, "quantity": req.quantity,
            "settings": job.settings_json, "seed": req.seed,
            "messages": json.dumps([dict(m) for m in req.messages]),
            "text": completion.text,
            "token_belief": None if math.isnan(tb) else tb,
            "logprobs": None if completion.logprobs is None
            else json.dumps(completion.logprobs, default=str),
            "elapsed": elapsed,
            "finish_reason": completion.finish_reason
            if isinstance(completion.finish_reason, str) else None,
            "prompt_tokens": _count(usage.get("prompt_tokens")),
            "completion_tokens": _count(usage.get("completion_tokens")),
            "endpoint": self.endpoint or None,
        }
        try:
            self.cache.put(record)
        except Exception as exc:  # disk full, read-only file, ...: stop sending calls now
            with self._lock:
                self.unstored.append(record)
                if self.cache_error is None:
                    self.cache_error = exc
            self._stop.set()
            return
        with self._lock:
            self.errors.pop(job.key, None)
        self._tick(self._bar, failed=False)

    def _tick(self, bar: tqdm, *, failed: bool) -> None:
        """One call done (answered or failed for good): advance the progress bar.

        The failure budget counts calls that failed for good: a call answered
        after retries does not count against ``max_failures``.
        """
        with self._lock:
            if failed:
                self.failed_calls += 1
                bar.set_postfix(failed=self.failed_calls, refresh=False)
                if self.failed_calls > self.max_failures:
                    self._stop.set()
            bar.update()

    def _send(self, jobs: list[Job], bar: tqdm) -> None:
        """Send the jobs on the thread pool and wait for them.

        On Ctrl-C (a ``KeyboardInterrupt``, in this thread or raised by the client) nothing
        more is sent: the queued calls are cancelled, the calls in flight finish (no retry)
        and their replies are stored, then the interrupt is raised again; a re-run resumes
        from the cache.
        """
        pool = ThreadPoolExecutor(max_workers=self.concurrency)
        try:
            futures = [pool.submit(self._one, job, bar) for job in jobs]
            for future in futures:
                _wait_awake(future)
        except BaseException:
            self._stop.set()
            pool.shutdown(wait=True, cancel_futures=True)
            raise
        pool.shutdown(wait=True)

    def execute(self, jobs: Sequence[Job]) -> tuple[dict[str, dict[str, Any]], set[str]]:
        keys = [job.key for job in jobs]
        before = self.cache.get_many(keys)
        self._warn_other_endpoint(before)
        todo = [job for job in jobs if job.key not in before]
        # the same call asked twice in one run is sent once
        unique: dict[str, Job] = {}
        for job in todo:
            unique.setdefault(job.key, job)
        # silent when asked to be, and when every call is already in the cache
        with tqdm(total=len(unique), desc="elicitation", unit="call", file=sys.stderr,
                  postfix={"failed": 0}, disable=not (self.progress and unique)) as bar:
            self._bar = bar
            if unique:
                self._send(list(unique.values()), bar)
        if self.cache_error is not None:
            raise ElicitationError(
                f"Stopped: {self.cache_error} The run stopped at once so that no further paid "
                f"call goes unstored; the {len(self.unstored)} replies received but not "
                "stored are in this error's .unstored.", unstored=self.unstored
            ) from self.cache_error
        if self._stop.is_set():
            raise ElicitationError(
                f"Stopped after {self.failed_calls} calls failed for good (max_failures="
                f"{self.max_failures}; {self.failed_attempts} failed attempts in all); the "
                f"{len(self.cache.get_many(keys))} responses received are in the cache and a "
                "re-run resumes from them. Last error: "
                + (next(reversed(self.errors.values())) if self.errors else "none"))
        return self.cache.get_many(keys), set(before)

    def _warn_other_endpoint(self, stored: Mapping[str, Mapping[str, Any]]) -> None:
        if not self.endpoint:
            return
        others = sorted({str(r["endpoint"]) for r in stored.values()
                         if r.get("endpoint") and r["endpoint"] != self.endpoint})
        if others:
            n = sum(1 for r in stored.values() if r.get("endpoint") and
                    r["endpoint"] != self.endpoint)
            warnings.warn(
                f"{n} cached replies for model {self.client.model!r} came from another endpoint "
                f"({listed(others, 3)}) than {self.endpoint}; they are reused (the cache "
                "key is the model and the settings, not the server). If that server may "
                "serve other weights under the same name, use another cache file.",
                EndpointMismatchWarning, stacklevel=5)


def _client_secret(client: Client) -> str | None:
    """The client's own credential (``OpenAIClient`` keeps it as ``_key``; a custom client
    may hold an ``api_key``), redacted from the call errors; None when it has none."""
    for name in ("_key", "api_key", "_api_key"):
        value = getattr(client, name, None)
        if isinstance(value, str) and value.strip():
            return value
    return None


def _count(value: Any) -> int | None:
    """A token count from a server's usage object (None when absent or not a count)."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    if not math.isfinite(value) or value < 0 or value != int(value):
        return None
    return int(value)


class EndpointMismatchWarning(CoherenceWarning):
    """Cached replies of the same model and settings came from another server."""


def settings_json(client: Client) -> str:
    """The client's sampling settings as canonical JSON (part of every cache key)."""
    return json.dumps(dict(client.settings), sort_keys=True, default=str)


def make_job(client: Client, settings_json: str, template: Template, fields: Mapping[str, Any],
             *, context: Any, prompt: str, repetition: int, quantity: str) -> Job:
    """The job of one call: render the template, seed the repetition, key it for the cache."""
    messages = tuple(template.render(**fields))
    labels = template.labels_for(fields)
    base_seed = client.settings.get("seed")
    seed = base_seed + repetition if isinstance(base_seed, int) else None
    request = Request(messages=messages, kind=template.kind, labels=labels, seed=seed,
                      context=context, template=template.name, prompt=prompt,
                      repetition=repetition, quantity=quantity, reasoning=template.reasoning)
    identity = {"model": client.model, "template": template.name,
                "messages": [dict(m) for m in messages], "context": str(context),
                "prompt": prompt, "repetition": repetition, "quantity": quantity,
                "settings": settings_json, "seed": seed}
    if template.reasoning and client.settings.get("constrained") == "grammar":
        # the grammar leaves room for reasoning: not the reply an answer-only grammar gave
        identity["grammar"] = "reasoning"
    key = cache_key(identity)
    return Job(key, request, settings_json, final=template.reasoning)


def _parse(job: Job, row: Mapping[str, Any], sum_tolerance: float) -> Parsed:
    text = row["text"]
    finish = row.get("finish_reason")
    if finish == "length":
        # cut at the length limit: even a reply that reads (``Yes: 0`` of ``Yes: 0.75``)
        # may not be what the model would have said
        tokens = row.get("completion_tokens")
        return Parsed(ok=False, reason="truncated", text=text,
                      detail="the server cut the reply at its length limit"
                      + (f" ({tokens} tokens)" if tokens is not None else "")
                      + "; raise max_tokens")
    if finish == "content_filter":
        # the server's filter stopped the reply: what is left is a part of it
        return Parsed(ok=False, reason="truncated", text=text,
                      detail="the server's content filter cut the reply (finish_reason "
                      "'content_filter')")
    if job.request.kind == "decision":
        return parse_decision(text, job.request.labels)
    return parse_probabilities(text, job.request.labels, sum_tolerance=sum_tolerance,
                               final=job.final)


def _raw_table(jobs: Sequence[Job], stored: Mapping[str, Mapping[str, Any]],
               cached_before: set[str], errors: Mapping[str, str], client: Client,
               sum_tolerance: float) -> tuple[pd.DataFrame, list[Parsed | None]]:
    rows = []
    parses: list[Parsed | None] = []
    for job in jobs:
        req = job.request
        row = stored.get(job.key)
        parsed = None if row is None else _parse(job, row, sum_tolerance)
        parses.append(parsed)
        rows.append({
            "context": req.context, "quantity": req.quantity, "template": req.template,
            "prompt": req.prompt, "repetition": req.repetition, "model": client.model,
            "settings": job.settings_json, "seed": req.seed,
            "text": None if row is None else row["text"],
            "token_belief": math.nan if row is None or row["token_belief"] is None
            else float(row["token_belief"]),
            "cached": job.key in cached_before,
            "parse_ok": parsed is not None and parsed.ok,
            "method": "" if parsed is None else parsed.method,
            "reason": "call_failed" if parsed is None else parsed.reason,
            "detail": errors.get(job.key, "no response") if parsed is None else parsed.detail,
            "values": None if parsed is None or not parsed.ok
            else json.dumps(dict(parsed.values)),
            "call_error": errors.get(job.key) if row is None else None,
            "finish_reason": None if row is None else row.get("finish_reason"),
            "prompt_tokens": None if row is None else row.get("prompt_tokens"),
            "completion_tokens": None if row is None else row.get("completion_tokens"),
            "elapsed": math.nan if row is None or row.get("elapsed") is None
            else float(row["elapsed"]),
            "endpoint": None if row is None else row.get("endpoint"),
            "key": job.key,
        })
    raw = pd.DataFrame(rows)
    for col in ("quantity", "template", "prompt", "method", "reason", "detail", "model",
                "settings", "key"):
        raw[col] = raw[col].astype(object)
    raw["repetition"] = raw["repetition"].astype(np.int64)
    for col in ("prompt_tokens", "completion_tokens"):
        raw[col] = raw[col].astype("Int64")
    raw["elapsed"] = raw["elapsed"].astype(np.float64)
    return raw, parses


def failure_table(raw: pd.DataFrame) -> pd.DataFrame:
    """Counts of failed elicitations by ``quantity`` and ``reason`` (``result.failures``)."""
    bad = raw[~raw["parse_ok"].to_numpy(dtype=bool)]
    if not len(bad):
        return pd.DataFrame({"quantity": pd.Series([], dtype=object),
                             "reason": pd.Series([], dtype=object),
                             "count": pd.Series([], dtype=np.int64)})
    out = bad.groupby(["quantity", "reason"], sort=True).size().rename("count").reset_index()
    out["count"] = out["count"].astype(np.int64)
    return out


@dataclass(frozen=True)
class EngineOptions:
    """A runner's :class:`RunOptions` as the engine uses them: the cache open, the
    progress bar decided."""

    store: ResponseCache
    owns_store: bool           # opened here from a path or None: closed after the run
    concurrency: int
    max_retries: int
    backoff: float
    max_backoff: float
    max_failures: int
    sum_tolerance: float
    progress: bool


def common_iv(client: Any, *, repetitions: Any, options: RunOptions,
              owner: str) -> EngineOptions:
    """Validate the client and the repetitions; open the cache unless one was given.

    ``options`` has been checked already (:func:`merge_options`)."""
    if not isinstance(client, Client):
        raise TypeError(param_error("client", owner, "a client (model, settings, complete())",
                                    type(client).__name__))
    model = client.model
    if not isinstance(model, str) or not model.strip() or has_control(model):
        # the model name keys the cache and labels the tables: a blank one labelled nothing
        rule = f"a client whose model is a non-empty str with {NO_CONTROL}"
        raise (TypeError if not isinstance(model, str) else ValueError)(
            param_error("client", owner, rule, model))
    check_int(repetitions, "repetitions", owner, low=1)
    _seeds_iv(client, repetitions, owner)
    cache = options.cache
    store = cache if isinstance(cache, ResponseCache) else ResponseCache(cache)
    progress = sys.stderr.isatty() if options.progress is None else options.progress
    return EngineOptions(store=store, owns_store=not isinstance(cache, ResponseCache),
                         concurrency=options.concurrency, max_retries=options.max_retries,
                         backoff=options.backoff, max_backoff=options.max_backoff,
                         max_failures=options.max_failures,
                         sum_tolerance=options.sum_tolerance, progress=progress)


_INT64 = (-(2**63), 2**63 - 1)


def _seeds_iv(client: Client, repetitions: int, owner: str) -> None:
    """Refuse a base seed whose repetitions' seeds (``seed + repetition``) the cache cannot
    store (SQLite integers are signed 64-bit): the failed write came after the paid call."""
    settings = client.settings
    base = settings.get("seed") if isinstance(settings, Mapping) else None
    if not isinstance(base, int) or isinstance(base, bool):
        return
    low, high = base, base + repetitions - 1
    if low < _INT64[0] or high > _INT64[1]:
        raise ValueError(
            f"The 'seed' setting of the client (input to {owner}) must keep every seed the run "
            f"sends (seed + repetition, from {low} to {high} for repetitions={repetitions}) "
            f"within the signed 64-bit range [{_INT64[0]}, {_INT64[1]}] the response cache "
            f"stores; the largest seed would be {high}. Give a seed from {_INT64[0]} to "
            f"{_INT64[1] - repetitions + 1}, or fewer repetitions.")


@dataclass(frozen=True)
class Executed:
    """What a run of the job engine left: the raw table and the parses, in job order."""

    engine: _Engine
    raw: pd.DataFrame
    parses: list[Parsed | None]
    before: set[str]


def execute(client: Client, jobs: Sequence[Job], opts: EngineOptions) -> Executed:
    """Run the jobs (cache first), then parse every stored response."""
    engine = _Engine(client, opts.store, concurrency=opts.concurrency,
                     max_retries=opts.max_retries, backoff=opts.backoff,
                     max_backoff=opts.max_backoff, max_failures=opts.max_failures,
                     progress=opts.progress)
    try:
        stored, before = engine.execute(jobs)
        raw, parses = _raw_table(jobs, stored, before, engine.errors, client,
                                 opts.sum_tolerance)
    finally:
        if opts.owns_store:
            opts.store.close()
    return Executed(engine=engine, raw=raw, parses=parses, before=before)


