"""The resumable runner: contexts in, the belief/action (or pairs) table out.

Calls run on a bounded thread pool. Each call is looked up in the SQLite
cache first; a missing one is sent, retried with exponential backoff on
transient failures, and its raw response committed to the cache before
anything is parsed. Parsing happens afterwards, from the cache, so a re-run
(after a crash, a kill, or just to re-parse with other settings) makes no
call it has already made.
"""

from __future__ import annotations

import json
import math
import random
import sys
import threading
import time
import warnings
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from coherence._validation import as_dataframe, check_float, check_int, param_error
from coherence._warnings import CoherenceWarning

from ._cache import ResponseCache, cache_key
from ._clients import Client, Completion, Request, TransientError
from ._parsing import Parsed, parse_decision, parse_probabilities
from ._templates import CONDITIONAL_VARIANTS, Template, get_template

__all__ = [
    "ElicitationError",
    "ElicitationResult",
    "ParseFailureWarning",
    "run",
    "run_lie",
    "run_pairs",
]

ACTION_LABELS = ("yes", "no", "defer")
#: Columns never offered to templates as placeholders (the ground truth).
_HIDDEN = frozenset({"truth", "outcome", "a_outcome", "b_outcome", *(
    "p_a", "p_a_given_b1", "p_a_given_b0", "p_b", "p_b_given_a1", "p_b_given_a0")})


class ElicitationError(RuntimeError):
    """The run stopped (too many failed calls); every response received is in the cache."""


class ParseFailureWarning(CoherenceWarning):
    """Some elicitations failed to parse or to be answered and were left out of the table."""


@dataclass(frozen=True, slots=True)
class ElicitationResult:
    """What a run returns.

    Attributes
    ----------
    data : pandas.DataFrame
        The belief/action table (:func:`run`) or the pairs table
        (:func:`run_pairs`), complete rows only, ready for the tests.
    raw : pandas.DataFrame
        One row per call: identity (``context``, ``quantity``, ``template``,
        ``prompt``, ``repetition``), ``model``, ``settings`` (JSON),
        ``seed``, ``text`` (the raw reply, NaN if the call failed),
        ``token_belief``, ``cached`` (answered from the cache), the parse
        (``parse_ok``, ``method``, ``reason``, ``detail``, ``values`` as JSON)
        and ``call_error`` (the last error of a call that failed).
    failures : pandas.DataFrame
        Counts of failed elicitations by ``quantity`` and ``reason`` (parse
        failure codes, and ``'call_failed'``).
    n_calls : int
        Calls sent during this run (retries not counted).
    n_cached : int
        Elicitations answered from the cache.
    n_failed_attempts : int
        Attempts that failed (each retry counts).
    model : str
        The client's model.
    settings : dict
        The client's sampling settings.
    """

    data: pd.DataFrame = field(repr=False)
    raw: pd.DataFrame = field(repr=False)
    failures: pd.DataFrame = field(repr=False)
    n_calls: int
    n_cached: int
    n_failed_attempts: int
    model: str
    settings: Mapping[str, Any]

    def summary(self) -> str:
        """A short text summary of the run."""
        lines = [f"Elicitation from {self.model}: {len(self.raw)} elicitations, "
                 f"{self.n_calls} calls made, {self.n_cached} from the cache, "
                 f"{self.n_failed_attempts} failed attempts; {len(self.data)} complete rows."]
        if len(self.failures):
            lines.append("Failures by reason:")
            for row in self.failures.itertuples(index=False):
                lines.append(f"  {row.quantity:<14} {row.reason:<16} {row.count}")
        return "\n".join(lines)


# --------------------------------------------------------------------------- the job engine
@dataclass(frozen=True, slots=True)
class _Job:
    key: str
    request: Request
    settings_json: str


class _Progress:
    def __init__(self, total: int, enabled: bool) -> None:
        self.total = total
        self.done = 0
        self.failed = 0
        self.enabled = enabled and total > 0
        self._lock = threading.Lock()
        self._last = 0.0

    def update(self, failed: bool = False) -> None:
        with self._lock:
            self.done += 1
            self.failed += failed
            now = time.monotonic()
            if self.enabled and (now - self._last > 0.2 or self.done == self.total):
                self._last = now
                width = 30
                filled = int(width * self.done / self.total)
                sys.stderr.write(f"\relicitation [{'#' * filled}{'.' * (width - filled)}] "
                                 f"{self.done}/{self.total} calls, {self.failed} failed")
                if self.done == self.total:
                    sys.stderr.write("\n")
                sys.stderr.flush()


class _Engine:
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
        self.errors: dict[str, str] = {}
        self.calls = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._jitter = random.Random()

    def _fail(self, key: str, message: str) -> None:
        with self._lock:
            self.failed_attempts += 1
            self.errors[key] = message
            if self.failed_attempts > self.max_failures:
                self._stop.set()

    def _one(self, job: _Job, bar: _Progress) -> None:
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
                self._fail(job.key, f"{type(exc).__name__}: {exc}")
                if attempt == self.max_retries:
                    break
                delay = min(self.max_backoff, self.backoff * 2.0 ** attempt)
                delay *= 0.5 + self._jitter.random() / 2.0
                if exc.retry_after is not None:
                    delay = max(delay, min(exc.retry_after, self.max_backoff))
                self._stop.wait(delay)
                continue
            except Exception as exc:  # a non-retryable failure of this call
                self._fail(job.key, f"{type(exc).__name__}: {exc}")
                break
            if not isinstance(completion, Completion) or not isinstance(completion.text, str):
                self._fail(job.key, f"the client returned {completion!r:.80}, not a "
                           "Completion with text")
                break
            try:
                tb = float(completion.token_belief)
            except (TypeError, ValueError):
                tb = math.nan
            req = job.request
            self.cache.put({
                "key": job.key, "model": self.client.model, "template": req.template,
                "context": str(req.context), "prompt": req.prompt,
                "repetition": req.repetition, "quantity": req.quantity,
                "settings": job.settings_json, "seed": req.seed,
                "messages": json.dumps([dict(m) for m in req.messages]),
                "text": completion.text,
                "token_belief": None if math.isnan(tb) else tb,
                "logprobs": None if completion.logprobs is None
                else json.dumps(completion.logprobs, default=str),
                "elapsed": time.monotonic() - start,
            })
            with self._lock:
                self.errors.pop(job.key, None)
            bar.update()
            return
        bar.update(failed=True)

    def execute(self, jobs: Sequence[_Job]) -> tuple[dict[str, dict[str, Any]], set[str]]:
        keys = [job.key for job in jobs]
        before = self.cache.get_many(keys)
        todo = [job for job in jobs if job.key not in before]
        # the same call asked twice in one run is sent once
        unique: dict[str, _Job] = {}
        for job in todo:
            unique.setdefault(job.key, job)
        bar = _Progress(len(unique), self.progress)
        if unique:
            with ThreadPoolExecutor(max_workers=self.concurrency) as pool:
                futures = [pool.submit(self._one, job, bar) for job in unique.values()]
                for future in futures:
                    future.result()
        if self._stop.is_set():
            raise ElicitationError(
                f"Stopped after {self.failed_attempts} failed attempts (max_failures="
                f"{self.max_failures}); the {len(self.cache.get_many(keys))} responses received "
                "are in the cache and a re-run resumes from them. Last error: "
                + (next(reversed(self.errors.values())) if self.errors else "none"))
        return self.cache.get_many(keys), set(before)


def _settings_json(client: Client) -> str:
    return json.dumps(dict(client.settings), sort_keys=True, default=str)


def _make_job(client: Client, settings_json: str, template: Template, fields: Mapping[str, Any],
              *, context: Any, prompt: str, repetition: int, quantity: str) -> _Job:
    messages = tuple(template.render(**fields))
    labels = template.labels_for(fields)
    base_seed = client.settings.get("seed")
    seed = base_seed + repetition if isinstance(base_seed, int) else None
    request = Request(messages=messages, kind=template.kind, labels=labels, seed=seed,
                      context=context, template=template.name, prompt=prompt,
                      repetition=repetition, quantity=quantity)
    key = cache_key({"model": client.model, "template": template.name,
                     "messages": [dict(m) for m in messages], "context": str(context),
                     "prompt": prompt, "repetition": repetition, "quantity": quantity,
                     "settings": settings_json, "seed": seed})
    return _Job(key, request, settings_json)


def _parse(job: _Job, text: str, sum_tolerance: float) -> Parsed:
    if job.request.kind == "decision":
        return parse_decision(text)
    return parse_probabilities(text, job.request.labels, sum_tolerance=sum_tolerance)


def _raw_table(jobs: Sequence[_Job], stored: Mapping[str, Mapping[str, Any]],
               cached_before: set[str], errors: Mapping[str, str], client: Client,
               sum_tolerance: float) -> tuple[pd.DataFrame, list[Parsed | None]]:
    rows = []
    parses: list[Parsed | None] = []
    for job in jobs:
        req = job.request
        row = stored.get(job.key)
        parsed = None if row is None else _parse(job, row["text"], sum_tolerance)
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
            "key": job.key,
        })
    raw = pd.DataFrame(rows)
    for col in ("quantity", "template", "prompt", "method", "reason", "detail", "model",
                "settings", "key"):
        raw[col] = raw[col].astype(object)
    raw["repetition"] = raw["repetition"].astype(np.int64)
    return raw, parses


def _failures(raw: pd.DataFrame) -> pd.DataFrame:
    bad = raw[~raw["parse_ok"].to_numpy(dtype=bool)]
    if not len(bad):
        return pd.DataFrame({"quantity": pd.Series([], dtype=object),
                             "reason": pd.Series([], dtype=object),
                             "count": pd.Series([], dtype=np.int64)})
    out = bad.groupby(["quantity", "reason"], sort=True).size().rename("count").reset_index()
    out["count"] = out["count"].astype(np.int64)
    return out


@dataclass(frozen=True)
class _RunOptions:
    """The validated options every runner shares."""

    store: ResponseCache
    owns_store: bool           # opened here from a path or None: closed after the run
    concurrency: int
    max_retries: int
    backoff: float
    max_backoff: float
    max_failures: int
    sum_tolerance: float
    progress: bool


def _common_iv(client: Any, repetitions: Any, concurrency: Any, cache: Any, max_retries: Any,
               backoff: Any, max_backoff: Any, max_failures: Any, sum_tolerance: Any,
               progress: Any, owner: str) -> _RunOptions:
    if not isinstance(client, Client):
        raise TypeError(param_error("client", owner, "a client (model, settings, complete())",
                                    type(client).__name__))
    check_int(repetitions, "repetitions", owner, low=1)
    check_int(concurrency, "concurrency", owner, low=1)
    check_int(max_retries, "max_retries", owner, low=0)
    check_float(backoff, "backoff", owner, low=0.0)
    check_float(max_backoff, "max_backoff", owner, low=0.0)
    check_int(max_failures, "max_failures", owner, low=0)
    check_float(sum_tolerance, "sum_tolerance", owner, low=0.0, high=1.0)
    if progress is None:
        progress = sys.stderr.isatty()
    if not isinstance(progress, bool):
        raise TypeError(param_error("progress", owner, "a bool or None", progress))
    if isinstance(cache, ResponseCache):
        store = cache
    elif cache is None or isinstance(cache, str | Path):
        store = ResponseCache(cache)
    else:
        raise TypeError(param_error("cache", owner, "a path, None (in memory) or a "
                                    "ResponseCache", cache))
    return _RunOptions(store=store, owns_store=not isinstance(cache, ResponseCache),
                       concurrency=concurrency, max_retries=max_retries, backoff=backoff,
                       max_backoff=max_backoff, max_failures=max_failures,
                       sum_tolerance=sum_tolerance, progress=progress)


def _context_table(contexts: Any, question: Any, owner: str, *,
                   list_duplicates: bool) -> pd.DataFrame:
    """The validated contexts table of :func:`run` and :func:`run_lie`."""
    df = as_dataframe(contexts, name="contexts", owner=owner)
    for col in ("context", "description"):
        if col not in df.columns:
            raise ValueError(param_error("contexts", owner, f"a table with a {col!r} column",
                                         list(df.columns)))
    if not df["context"].is_unique:
        dup = (f"; duplicated: {df['context'][df['context'].duplicated()].tolist()[:5]}"
               if list_duplicates else "")
        raise ValueError(f"Column 'context' (input to {owner}) must hold unique context "
                         f"ids{dup}.")
    if question is None and "question" not in df.columns:
        raise ValueError(param_error("question", owner, "the question text (or a 'question' "
                                     "column in contexts)", None))
    return df


def _context_fields(row: Mapping[Any, Any], question: str | None) -> dict[str, Any]:
    """A context's template placeholders; the ground truth never reaches a prompt."""
    fields = {k: v for k, v in row.items() if isinstance(k, str) and k not in _HIDDEN}
    fields.setdefault("patient_description", row["description"])
    fields.setdefault("clinical_question", question if question is not None
                      else row["question"])
    return fields


@dataclass(frozen=True)
class _Executed:
    """What a run of the job engine left: the raw table and the parses, in job order."""

    engine: _Engine
    raw: pd.DataFrame
    parses: list[Parsed | None]
    before: set[str]


def _execute(client: Client, jobs: Sequence[_Job], opts: _RunOptions) -> _Executed:
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
    return _Executed(engine=engine, raw=raw, parses=parses, before=before)


def _result(data: pd.DataFrame, done: _Executed, client: Client, n_total: int,
            what: str) -> ElicitationResult:
    """The result of a run; warns when rows were left out (stacklevel: the user's call)."""
    failures = _failures(done.raw)
    _warn_dropped(n_total - len(data), n_total, failures, what)
    return ElicitationResult(data=data, raw=done.raw, failures=failures,
                             n_calls=done.engine.calls, n_cached=len(done.before),
                             n_failed_attempts=done.engine.failed_attempts,
                             model=client.model, settings=dict(client.settings))


def _warn_dropped(n_dropped: int, n_total: int, failures: pd.DataFrame, what: str) -> None:
    if n_dropped:
        reasons = ", ".join(f"{r.quantity}/{r.reason}: {r.count}"
                            for r in failures.itertuples(index=False))
        warnings.warn(f"{n_dropped} of {n_total} {what} left out of the table because an "
                      f"elicitation failed ({reasons}); see result.raw and result.failures.",
                      ParseFailureWarning, stacklevel=4)


# --------------------------------------------------------------------------- belief/action
def run(
    contexts: Any,
    client: Client,
    *,
    question: str | None = None,
    prompts: Sequence[str] = ("standard",),
    decision: str | None = "decision",
    repetitions: int = 5,
    concurrency: int = 8,
    cache: str | Path | ResponseCache | None = "elicitation.sqlite",
    max_retries: int = 5,
    backoff: float = 0.5,
    max_backoff: float = 30.0,
    max_failures: int = 50,
    sum_tolerance: float = 0.02,
    progress: bool | None = None,
) -> ElicitationResult:
    """Elicit beliefs and actions for every context; return the belief/action table.

    Parameters
    ----------
    contexts : pandas.DataFrame
        One row per context: ``context`` (its id), ``description`` (the
        evidence in words, filling ``{patient_description}``), optional
        ``outcome`` and ``truth`` (copied to the output), optional
        ``question`` (per-context question text), and any evidence columns
        (copied to the output and available to templates as placeholders).
    client : Client
        :class:`OpenAIClient`, :class:`SimulatedClient` or anything with
        ``model``, ``settings`` and ``complete(request)``.
    question : str, optional
        The clinical question (fills ``{clinical_question}``); required
        unless ``contexts`` has a ``question`` column.
    prompts : sequence of str
        Probability templates, one per prompt variant (``'standard'``,
        ``'mse'``, ``'absolute'``, ``'bayesian'`` or registered ones). P(y=1)
        is the probability of the template's last label (``Yes``).
    decision : str or None
        The decision template, asked once per (context, repetition) in its
        own conversation; ``None`` to elicit beliefs only.
    repetitions : int
        Elicitations of each (context, template).
    concurrency : int
        Calls in flight at once (threads).
    cache : path, ResponseCache or None
        SQLite file of raw responses (``None``: in memory, nothing kept).
    max_retries : int
        Retries of a call after a transient failure (timeout, connection
        error, HTTP 429 or 5xx, malformed body).
    backoff, max_backoff : float
        Delay before retry ``i`` is ``min(max_backoff, backoff * 2**i)``
        times a uniform jitter in [0.5, 1] (at least the server's
        ``Retry-After``, capped at ``max_backoff``).
    max_failures : int
        The run stops with :class:`ElicitationError` once more attempts than
        this have failed in total.
    sum_tolerance : float
        Passed to :func:`parse_probabilities`.
    progress : bool, optional
        Draw a progress bar on stderr (default: when stderr is a terminal).

    Returns
    -------
    ElicitationResult
        ``data`` has one row per (context, prompt, repetition) whose belief
        and action both parsed: ``context``, ``repetition``, ``prompt``
        (category), ``belief`` (float64), ``action`` (category yes / no /
        defer), ``forced_choice`` (the "if you had to decide" answer),
        ``token_belief`` (from the decision reply's log-probabilities, NaN
        when not served), then ``outcome``, ``truth`` and the evidence
        columns when given. Repetition ``r`` of the decision is paired with
        repetition ``r`` of every prompt's belief.

    Warns
    -----
    ParseFailureWarning
        When rows are left out because an elicitation failed to parse or
        its call failed; the reasons are counted in ``result.failures``.

    Examples
    --------
    >>> import pandas as pd, coherence, elicitation
    >>> contexts = pd.DataFrame({"context": [0, 1], "truth": [0.2, 0.9], "outcome": [0, 1],
    ...                          "description": ["is 30 years old", "is 70 years old"]})
    >>> client = elicitation.SimulatedClient(coherence.Agent.rational(), contexts, rng=0)
    >>> result = elicitation.run(contexts, client, question="Is the disease present?",
    ...                          repetitions=2, cache=None)
    >>> result.data[["context", "repetition", "belief", "action"]]
       context  repetition  belief action
    0        0           0     0.2     no
    1        0           1     0.2     no
    2        1           0     0.9    yes
    3        1           1     0.9  defer
    """
    owner = "run"
    opts = _common_iv(client, repetitions, concurrency, cache, max_retries, backoff,
                      max_backoff, max_failures, sum_tolerance, progress, owner)
    df = _context_table(contexts, question, owner, list_duplicates=True)
    if question is not None and not isinstance(question, str):
        raise TypeError(param_error("question", owner, "a str", question))
    if isinstance(prompts, str) or not isinstance(prompts, Sequence) or not prompts:
        raise TypeError(param_error("prompts", owner, "a non-empty sequence of template names",
                                    prompts))
    templates = [get_template(p) for p in prompts]
    for t in templates:
        if t.kind != "probability":
            raise ValueError(param_error("prompts", owner, "probability templates", t.name))
    if len({t.name for t in templates}) != len(templates):
        raise ValueError(param_error("prompts", owner, "distinct template names", prompts))
    dec_template = None if decision is None else get_template(decision)
    if dec_template is not None and dec_template.kind != "decision":
        raise ValueError(param_error("decision", owner, "a decision template or None",
                                     dec_template.name))

    settings_json = _settings_json(client)
    jobs: list[_Job] = []
    records = df.to_dict("records")
    for row in records:
        fields = _context_fields(row, question)
        for rep in range(repetitions):
            for t in templates:
                jobs.append(_make_job(client, settings_json, t, fields, context=row["context"],
                                      prompt=t.name, repetition=rep, quantity="belief"))
            if dec_template is not None:
                jobs.append(_make_job(client, settings_json, dec_template, fields,
                                      context=row["context"], prompt=dec_template.name,
                                      repetition=rep, quantity="action"))

    done = _execute(client, jobs, opts)

    beliefs: dict[tuple[Any, str, int], float] = {}
    actions: dict[tuple[Any, int], tuple[str, Any, float]] = {}
    for job, parsed, tb in zip(jobs, done.parses, done.raw["token_belief"].to_numpy(),
                              strict=True):
        if parsed is None or not parsed.ok:
            continue
        req = job.request
        if req.quantity == "belief":
            beliefs[(req.context, req.prompt, req.repetition)] = float(
                parsed.values[req.labels[-1]])
        else:
            actions[(req.context, req.repetition)] = (parsed.values["action"],
                                                      parsed.values["answer"], float(tb))
    out_rows = []
    extra = [c for c in df.columns if c not in ("context", "description", "question")]
    n_total = 0
    for row in records:
        for t in templates:
            for rep in range(repetitions):
                n_total += 1
                b = beliefs.get((row["context"], t.name, rep))
                act = actions.get((row["context"], rep)) if dec_template is not None else (
                    None, None, math.nan)
                if b is None or act is None:
                    continue
                out_rows.append({"context": row["context"], "repetition": rep,
                                 "prompt": t.name, "belief": b, "action": act[0],
                                 "forced_choice": act[1], "token_belief": act[2],
                                 **{c: row[c] for c in extra}})
    columns = ["context", "repetition", "prompt", "belief", "action", "forced_choice",
               "token_belief", *extra]
    data = pd.DataFrame(out_rows, columns=columns)
    data["context"] = data["context"].astype(df["context"].dtype)
    data["repetition"] = data["repetition"].astype(np.int64)
    data["prompt"] = pd.Categorical(data["prompt"], categories=[t.name for t in templates])
    data["belief"] = data["belief"].astype(np.float64)
    data["token_belief"] = data["token_belief"].astype(np.float64)
    if dec_template is None:
        data = data.drop(columns=["action", "forced_choice", "token_belief"])
    else:
        data["action"] = pd.Categorical(data["action"], categories=list(ACTION_LABELS))
        data["forced_choice"] = data["forced_choice"].astype(object)
    for c in extra:
        data[c] = data[c].astype(df[c].dtype)
    return _result(data, done, client, n_total, "rows")


# --------------------------------------------------------------------------- pairs
PAIR_QUANTITIES = ("p_a", "p_a_given_b1", "p_a_given_b0", "p_b", "p_b_given_a1", "p_b_given_a0")


def run_pairs(
    pairs: Any,
    client: Client,
    *,
    variants: Sequence[str] = ("baseline",),
    reverse: bool = True,
    repetitions: int = 1,
    concurrency: int = 8,
    cache: str | Path | ResponseCache | None = "elicitation.sqlite",
    max_retries: int = 5,
    backoff: float = 0.5,
    max_backoff: float = 30.0,
    max_failures: int = 50,
    sum_tolerance: float = 0.02,
    progress: bool | None = None,
) -> ElicitationResult:
    """Elicit conditional forecasts for question pairs; return the pairs table.

    Parameters
    ----------
    pairs : pandas.DataFrame
        One row per pair: ``pair`` (id), ``question_a``, ``question_b``,
        optional ``category``, ``a_outcome``, ``b_outcome`` (copied).
    client : Client
        As for :func:`run`.
    variants : sequence of str
        Conditional prompt variants: ``'baseline'``, ``'justify_first'``,
        ``'skeptical'`` (templates ``conditional_<variant>``), or names of
        registered probability templates with the same placeholders.
    reverse : bool
        Also elicit P(B), P(B | A resolved YES), P(B | A resolved NO) for
        the Bayes-consistency check.
    repetitions, concurrency, cache, max_retries, backoff, max_backoff, max_failures, \
sum_tolerance, progress
        As for :func:`run`.

    Returns
    -------
    ElicitationResult
        ``data``: one row per (pair, variant, repetition) with every
        quantity parsed: ``pair``, ``category``, ``variant``, ``repetition``,
        ``p_a``, ``p_a_given_b1``, ``p_a_given_b0`` (and ``p_b``,
        ``p_b_given_a1``, ``p_b_given_a0`` when ``reverse``), ``a_outcome``,
        ``b_outcome``. The unconditional forecasts use the ``forecast``
        template, once per (pair, repetition), shared by the variants.
    """
    owner = "run_pairs"
    opts = _common_iv(client, repetitions, concurrency, cache, max_retries, backoff,
                      max_backoff, max_failures, sum_tolerance, progress, owner)
    df = as_dataframe(pairs, name="pairs", owner=owner)
    for col in ("pair", "question_a", "question_b"):
        if col not in df.columns:
            raise ValueError(param_error("pairs", owner, f"a table with a {col!r} column",
                                         list(df.columns)))
    if not df["pair"].is_unique:
        raise ValueError(f"Column 'pair' (input to {owner}) must hold unique pair ids.")
    if not isinstance(reverse, bool):
        raise TypeError(param_error("reverse", owner, "a bool", reverse))
    if isinstance(variants, str) or not isinstance(variants, Sequence) or not variants:
        raise TypeError(param_error("variants", owner, "a non-empty sequence of variant names",
                                    variants))
    cond_templates = {}
    for v in variants:
        name = f"conditional_{v}" if v in CONDITIONAL_VARIANTS else v
        cond_templates[v] = get_template(name)
    forecast = get_template("forecast")
    settings_json = _settings_json(client)
    directions = [("a", "b")] + ([("b", "a")] if reverse else [])
    jobs: list[_Job] = []
    records = df.to_dict("records")
    for row in records:
        base = {k: v for k, v in row.items() if isinstance(k, str) and k not in _HIDDEN}
        for rep in range(repetitions):
            for target, cond in directions:
                q_t, q_c = row[f"question_{target}"], row[f"question_{cond}"]
                jobs.append(_make_job(client, settings_json, forecast, {**base, "question": q_t},
                                      context=row["pair"], prompt="forecast", repetition=rep,
                                      quantity=f"p_{target}"))
                for v, t in cond_templates.items():
                    for outcome, word in ((1, "YES"), (0, "NO")):
                        fields = {**base, "question": q_t, "condition_question": q_c,
                                  "condition_outcome": word}
                        jobs.append(_make_job(client, settings_json, t, fields,
                                              context=row["pair"], prompt=v, repetition=rep,
                                              quantity=f"p_{target}_given_{cond}{outcome}"))
    done = _execute(client, jobs, opts)
    values: dict[tuple[Any, str, int, str], float] = {}
    for job, parsed in zip(jobs, done.parses, strict=True):
        if parsed is not None and parsed.ok:
            req = job.request
            values[(req.context, req.prompt, req.repetition, req.quantity)] = float(
                parsed.values[req.labels[-1]])
    quantities = PAIR_QUANTITIES if reverse else PAIR_QUANTITIES[:3]
    passthrough = [c for c in ("category", "a_outcome", "b_outcome") if c in df.columns]
    out_rows = []
    n_total = 0
    for row in records:
        for v in variants:
            for rep in range(repetitions):
                n_total += 1
                got = {}
                for qty in quantities:
                    prompt = "forecast" if qty in ("p_a", "p_b") else v
                    got[qty] = values.get((row["pair"], prompt, rep, qty))
                if any(x is None for x in got.values()):
                    continue
                out_rows.append({"pair": row["pair"], "variant": v, "repetition": rep,
                                 **got, **{c: row[c] for c in passthrough}})
    data = pd.DataFrame(out_rows, columns=["pair", "variant", "repetition", *quantities,
                                           *passthrough])
    data["pair"] = data["pair"].astype(df["pair"].dtype)
    data["variant"] = pd.Categorical(data["variant"], categories=list(variants))
    data["repetition"] = data["repetition"].astype(np.int64)
    for qty in quantities:
        data[qty] = data[qty].astype(np.float64)
    for c in passthrough:
        data[c] = data[c].astype(df[c].dtype)
    if "category" in data.columns:
        data = data[["pair", "category", *[c for c in data.columns if c not in ("pair",
                                                                               "category")]]]
    return _result(data, done, client, n_total, "pair rows")



# --------------------------------------------------------------------------- iterated expectation
def run_lie(
    contexts: Any,
    client: Client,
    *,
    auxiliary_variable_name: str,
    states: Sequence[str],
    question: str | None = None,
    prompt: str = "standard",
    repetitions: int = 5,
    concurrency: int = 8,
    cache: str | Path | ResponseCache | None = "elicitation.sqlite",
    max_retries: int = 5,
    backoff: float = 0.5,
    max_backoff: float = 30.0,
    max_failures: int = 50,
    sum_tolerance: float = 0.02,
    progress: bool | None = None,
) -> ElicitationResult:
    """Elicit the quantities of the law of iterated expectation for every context.

    For a context x and an auxiliary variable z withheld from x (states
    ``z_1..z_K``), each repetition asks, in separate conversations, for
    P(y | x) (template ``prompt``), the distribution P(z | x) (template
    ``next_state``, one line per state) and P(y | x, z = z_k) for every state
    (template ``given_auxiliary``).

    Parameters
    ----------
    contexts : pandas.DataFrame
        As for :func:`run` (``context``, ``description``, optional
        ``question``, ``truth``, ``outcome`` and evidence columns).
    client : Client
        As for :func:`run`.
    auxiliary_variable_name : str
        The withheld variable in words (``'cholesterol level'``).
    states : sequence of str
        Its states, in the order asked (at least two).
    question, prompt
        The clinical question and the probability template for P(y | x).
    repetitions, concurrency, cache, max_retries, backoff, max_backoff, max_failures, \
sum_tolerance, progress
        As for :func:`run`.

    Returns
    -------
    ElicitationResult
        ``data``: one row per (context, repetition) with every quantity
        parsed: ``context``, ``repetition``, ``belief`` (P(y | x)),
        ``prob_<state>`` (P(z = state | x), normalised), ``belief_given_<state>``
        (P(y | x, z = state)), ``lie_belief`` (the sum over states of
        ``prob_<state> * belief_given_<state>``), ``lie_gap``
        (``belief - lie_belief``), then the other context columns.

    Notes
    -----
    The law of iterated expectation requires, for coherent beliefs,

    .. math:: P(y \\mid x) = \\sum_k P(y \\mid x, z_k)\\, P(z_k \\mid x),

    so ``lie_gap`` is 0 for a coherent agent; its normalisation against a
    model fitted to ground truth belongs to the core's LIE test.
    """
    owner = "run_lie"
    opts = _common_iv(client, repetitions, concurrency, cache, max_retries, backoff,
                      max_backoff, max_failures, sum_tolerance, progress, owner)
    df = _context_table(contexts, question, owner, list_duplicates=False)
    if not isinstance(auxiliary_variable_name, str) or not auxiliary_variable_name:
        raise TypeError(param_error("auxiliary_variable_name", owner, "a non-empty str",
                                    auxiliary_variable_name))
    if (isinstance(states, str) or not isinstance(states, Sequence) or len(states) < 2
            or not all(isinstance(s, str) and s for s in states)
            or len({s.lower() for s in states}) != len(states)):
        raise ValueError(param_error("states", owner, "a sequence of at least two distinct "
                                     "non-empty str", states))
    states = tuple(states)
    belief_t = get_template(prompt)
    if belief_t.kind != "probability":
        raise ValueError(param_error("prompt", owner, "a probability template", prompt))
    next_t, given_t = get_template("next_state"), get_template("given_auxiliary")
    settings_json = _settings_json(client)
    jobs: list[_Job] = []
    records = df.to_dict("records")
    for row in records:
        fields = _context_fields(row, question)
        fields["auxiliary_variable_name"] = auxiliary_variable_name
        for rep in range(repetitions):
            ctx = row["context"]
            jobs.append(_make_job(client, settings_json, belief_t, fields, context=ctx,
                                  prompt=belief_t.name, repetition=rep, quantity="belief"))
            jobs.append(_make_job(client, settings_json, next_t, {**fields, "states": states},
                                  context=ctx, prompt=next_t.name, repetition=rep,
                                  quantity="state_distribution"))
            for s in states:
                jobs.append(_make_job(client, settings_json, given_t,
                                      {**fields, "auxiliary_state": s}, context=ctx,
                                      prompt=given_t.name, repetition=rep,
                                      quantity=f"belief_given_{s}"))
    done = _execute(client, jobs, opts)
    got: dict[tuple[Any, int], dict[str, float]] = {}
    for job, parsed in zip(jobs, done.parses, strict=True):
        if parsed is None or not parsed.ok:
            continue
        req = job.request
        slot = got.setdefault((req.context, req.repetition), {})
        if req.quantity == "state_distribution":
            for s in states:
                slot[f"prob_{s}"] = float(parsed.values[s])
        else:
            slot[req.quantity] = float(parsed.values[req.labels[-1]])
    needed = ["belief", *(f"prob_{s}" for s in states), *(f"belief_given_{s}" for s in states)]
    extra = [c for c in df.columns if c not in ("context", "description", "question")]
    out_rows = []
    n_total = 0
    for row in records:
        for rep in range(repetitions):
            n_total += 1
            slot = got.get((row["context"], rep), {})
            if any(k not in slot for k in needed):
                continue
            lie = math.fsum(slot[f"prob_{s}"] * slot[f"belief_given_{s}"] for s in states)
            out_rows.append({"context": row["context"], "repetition": rep,
                             **{k: slot[k] for k in needed}, "lie_belief": lie,
                             "lie_gap": slot["belief"] - lie, **{c: row[c] for c in extra}})
    data = pd.DataFrame(out_rows, columns=["context", "repetition", *needed, "lie_belief",
                                           "lie_gap", *extra])
    data["context"] = data["context"].astype(df["context"].dtype)
    data["repetition"] = data["repetition"].astype(np.int64)
    for k in (*needed, "lie_belief", "lie_gap"):
        data[k] = data[k].astype(np.float64)
    for c in extra:
        data[c] = data[c].astype(df[c].dtype)
    return _result(data, done, client, n_total, "rows")
