"""``coherence elicit``: ask a model (or a simulated agent) for a belief/action table.

Sized for a first run by default (12 contexts x 2 repetitions, the paper's
standard prompt and decision prompt); ``--full`` is the paper's design.
Nothing is sent anywhere the user did not name: the endpoint is
``--base-url`` or ``$OPENAI_BASE_URL``, and the key is read from an
environment variable, never from the command line. ``--probe N`` sends a
few calls and prints the parse rate, the failure reasons and the seconds per
call before a long run; when every reply was cut at the length limit it tries
again with larger limits and says which one works. Hints after a failure fit
the error: a server that does not answer is not fixed by prompt options. The
command exits 1, with the top failure reasons and one raw reply, when no usable
row came back.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import sys
import time
import warnings
from pathlib import Path
from typing import Any

from ._common import EXIT_FAILURE
from ._common import EXIT_OK
from ._common import add_seed

#: The table ``--out`` writes when it is not given.
DEFAULT_OUT = "elicited.csv"
#: The first run: a few contexts. ``--full``: the decision paper's design.
FIRST_RUN: dict[str, Any] = {"n_contexts": 12, "repetitions": 2, "prompts": ["standard"]}
FULL_RUN: dict[str, Any] = {"n_contexts": 200, "repetitions": 5,
                            "prompts": ["standard", "mse", "absolute", "bayesian"]}
class ElicitUsageError(ValueError):
    """A user mistake (the command line reports a ValueError with exit code 2)."""


class ElicitStopped(RuntimeError):
    """The run stopped (too many failed calls); ``hint`` says what to check."""

    def __init__(self, message: str, hint: str) -> None:
        super().__init__(message)
        self.hint = hint


#: The options of a model behind a server, and their defaults (None in the parser, so that
#: an option given is told from one left out): refused with ``--simulated``, which would
#: ignore them.
MODEL_OPTIONS: dict[str, tuple[str, Any]] = {
    "base_url": ("--base-url", None), "model": ("--model", None),
    "api_key_env": ("--api-key-env", None), "temperature": ("--temperature", 1.0),
    "max_tokens": ("--max-tokens", 48), "constrained": ("--constrained", "none"),
    "stop": ("--stop", None), "logprobs": ("--logprobs", False),
    "top_logprobs": ("--top-logprobs", None), "timeout": ("--timeout", 60.0),
    "deadline": ("--deadline", None),
}


def model_options(args: argparse.Namespace) -> argparse.Namespace:
    """``args`` with the model options' defaults filled in; a usage error naming the model
    options given with ``--simulated`` (a simulated agent has no server, sampling or reply
    format: they would be ignored without a word)."""
    given = [flag for dest, (flag, _) in MODEL_OPTIONS.items()
             if getattr(args, dest, None) is not None]
    if args.simulated and given:
        raise ElicitUsageError(f"{', '.join(given)} set the model behind a server; a "
                               f"simulated agent (--simulated {args.simulated}) ignores "
                               "them: drop them, or drop --simulated to ask a server")
    filled = {dest: default for dest, (_, default) in MODEL_OPTIONS.items()
              if getattr(args, dest, None) is None}
    return argparse.Namespace(**{**vars(args), **filled})


def _ignored_iv(args: argparse.Namespace) -> None:
    """A usage error for options the run would ignore or whose files would overwrite each
    other, said before any call: ``--top-logprobs`` without ``--logprobs`` (no
    log-probability is asked for), an empty ``--question`` (the network's was asked), a
    negative ``--seed``, ``--decision`` with ``--no-decision``, ``--out`` with ``--probe``
    (which writes no table), a ``--cache`` that keeps nothing (``:memory:``), and an
    ``--out``, its ``_incoherent.csv``, ``--raw-out`` and ``--cache`` naming the same file
    (the table was written over the raw replies, or the cache over the table, without a
    word)."""
    if args.top_logprobs is not None and not args.logprobs:
        raise ElicitUsageError("--top-logprobs sets the alternatives of --logprobs; without "
                               "--logprobs no log-probability is asked for: add --logprobs "
                               "or drop --top-logprobs")
    if args.question is not None and not args.question.strip():
        raise ElicitUsageError("--question '' is no phrase (the network's own was asked "
                               "instead); give the phrase after 'they', or drop --question")
    if args.seed < 0:
        raise ElicitUsageError(f"--seed must be a non-negative int; got {args.seed}")
    if args.decision is not None and args.no_decision:
        raise ElicitUsageError(f"--decision {args.decision} names the decision prompt and "
                               "--no-decision asks none: drop one")
    if args.probe is not None and args.out is not None:
        # the probe stops before the table: --out was left unwritten without a word
        raise ElicitUsageError(f"--probe {args.probe} sends a few calls and writes no table, "
                               f"so --out {args.out} would not be written: drop --out, or "
                               "drop --probe to run and write the table")
    if args.cache == ":memory:":
        # a cache kept in memory is gone when the command ends: a rerun asks every call again
        raise ElicitUsageError("--cache :memory: keeps no reply after the command "
                               "(an interrupted run would not resume, a rerun would ask every "
                               "call again); name a file, e.g. --cache elicitation.sqlite")
    table = DEFAULT_OUT if args.out is None else args.out
    out = Path(table).resolve()
    flagged = out.with_name(out.stem + "_incoherent.csv")
    if args.raw_out is not None and Path(args.raw_out).resolve() in (out, flagged):
        raise ElicitUsageError(f"--raw-out {args.raw_out} is the file --out {table} "
                               "writes (the table, or its set-aside replies in "
                               f"{flagged.name}); name another file")
    written = ([] if args.probe is not None else [out, flagged]) + (
        [] if args.raw_out is None else [Path(args.raw_out).resolve()])
    if Path(args.cache).resolve() in written:
        # the CSV was written over the open cache, and the cache then over the CSV: the
        # file said to hold the table held SQLite, and the replies kept were lost
        raise ElicitUsageError(f"--cache {args.cache} is a file the run writes as CSV (--out, "
                               "its _incoherent.csv or --raw-out); name the cache another "
                               "file, e.g. --cache elicitation.sqlite")


def add_parser(sub: Any, positive_int: Any) -> argparse.ArgumentParser:
    """The ``elicit`` subcommand's parser."""
    p: argparse.ArgumentParser = sub.add_parser(
        "elicit", help="elicit a belief/action table from a model or a simulated agent",
        description="Contexts from a bundled Bayesian network, asked of an OpenAI-compatible "
        "server (--base-url/--model, or $OPENAI_BASE_URL/$OPENAI_MODEL) or of a simulated "
        "agent (--simulated AGENT), with the decision paper's prompts. Raw replies are cached "
        "in SQLite before parsing, so an interrupted run resumes where it stopped. Default: "
        "a first run of 12 contexts x 2 repetitions; --full for the paper's design. The "
        "model options other than --simulated are refused with --simulated.")
    where = p.add_argument_group("model")
    where.add_argument("--simulated", default=None, metavar="AGENT",
                       help="answer with a simulated agent (rational, leaky, ...)")
    where.add_argument("--base-url", default=None,
                       help="server root including /v1 (default $OPENAI_BASE_URL; there is no "
                       "built-in default)")
    where.add_argument("--model", default=None, help="model name (default $OPENAI_MODEL)")
    where.add_argument("--api-key-env", default=None, metavar="VAR",
                       help="environment variable holding the server's API key (default: "
                       "$OPENAI_API_KEY for api.openai.com, no key for any other server; a "
                       "key is never taken on the command line)")
    where.add_argument("--temperature", type=float, default=None,
                       help="sampling temperature (default 1)")
    where.add_argument("--max-tokens", type=positive_int, default=None, metavar="N",
                       help="reply length cap (default 48: the replies are two short lines; a "
                       "reply cut at the cap is reported as 'truncated')")
    where.add_argument("--constrained", choices=("none", "grammar", "json_schema"),
                       default=None, help="constrain the reply format: a llama.cpp grammar "
                       "or an OpenAI JSON schema (default none)")
    where.add_argument("--stop", action="append", default=None, metavar="TEXT",
                       help="a stop sequence (repeatable), e.g. '<|im_end|>' for a base model "
                       "that writes its chat template's end marker as text")
    where.add_argument("--logprobs", action="store_true", default=None,
                       help="also record the token-probability belief of the decision reply")
    where.add_argument("--top-logprobs", type=positive_int, default=None, metavar="K",
                       help="alternatives per token with --logprobs (default 10)")
    where.add_argument("--timeout", type=float, default=None, metavar="S",
                       help="seconds without data before a call is retried (default 60)")
    where.add_argument("--deadline", type=float, default=None, metavar="S",
                       help="seconds a whole call may take (default 4 x timeout)")
    design = p.add_argument_group("study")
    design.add_argument("--network", default="child", help="bundled network (default child)")
    design.add_argument("--question", default=None, metavar="PHRASE",
                        help="the clinical question as the phrase after 'they' ('have "
                        "tetralogy of Fallot'; default: the network's target)")
    design.add_argument("--full", action="store_true",
                        help="the paper's design: 200 contexts x 5 repetitions x 4 prompts")
    design.add_argument("--n-contexts", type=positive_int, default=None, metavar="N",
                        help="contexts (default 12; 200 with --full)")
    design.add_argument("--repetitions", type=positive_int, default=None, metavar="R",
                        help="repetitions per context and prompt (default 2; 5 with --full)")
    design.add_argument("--prompts", nargs="+", default=None, metavar="NAME",
                        help="probability prompts (default standard; with --full standard mse "
                        "absolute bayesian); *_toolkit names for the toolkit's wording")
    design.add_argument("--decision", default=None, metavar="NAME",
                        help="decision prompt (default decision, the paper's)")
    design.add_argument("--no-decision", action="store_true",
                        help="elicit beliefs only (no action column)")
    design.add_argument("--sum-tolerance", type=float, default=0.02, metavar="T",
                        help="accept No + Yes within T of 1 (default 0.02)")
    add_seed(design)
    run_opts = p.add_argument_group("run")
    run_opts.add_argument("--concurrency", type=positive_int, default=None, metavar="N",
                          help="calls in flight (default: the server's slots when it reports "
                          "them, else 2; never more than the slots)")
    run_opts.add_argument("--max-failures", type=int, default=20, metavar="N",
                          help="stop after N calls failed for good (default 20)")
    run_opts.add_argument("--max-retries", type=int, default=3, metavar="N")
    run_opts.add_argument("--probe", type=positive_int, default=None, metavar="N",
                          help="send about N calls, print parse rate, failure reasons and "
                          "seconds per call, and stop (no table is written: --out is refused)")
    run_opts.add_argument("--cache", default="elicitation.sqlite", metavar="PATH",
                          help="SQLite file keeping every raw reply, so a rerun asks nothing "
                          "twice (default elicitation.sqlite; not :memory:, which keeps none)")
    run_opts.add_argument("--out", default=None, metavar="PATH",
                          help="belief/action table to write (CSV; default elicited.csv)")
    run_opts.add_argument("--raw-out", default=None, metavar="PATH",
                          help="also write every call's raw reply, parse and error (CSV); "
                          "re-run on the same cache to export without new calls")
    run_opts.add_argument("--quiet", action="store_true", help="no progress bar")
    return p


def clinical_phrase(network: str, attrs: Any) -> str:
    """The network's target as the phrase after "they" ("have tetralogy of Fallot")."""
    import bayesnets

    try:
        return str(bayesnets.predicate(network, attrs["target"], attrs["state"]))
    except (KeyError, ValueError):
        raise ElicitUsageError(f"cannot phrase the question of network {network!r} for "
                               "the papers' prompts; pass --question PHRASE (e.g. 'have "
                               "the disease')") from None


def server_slots(base_url: str, timeout: float = 5.0) -> int | None:
    """The number of parallel slots a llama.cpp server reports (None when unknown)."""
    import urllib.parse
    import urllib.request

    parts = urllib.parse.urlsplit(base_url)
    root = f"{parts.scheme}://{parts.netloc}"
    if parts.username or parts.password:
        return None
    try:
        with urllib.request.urlopen(root + "/props", timeout=timeout) as resp:
            props = json.loads(resp.read(1_000_000))
    except (OSError, ValueError):
        return None
    slots = props.get("total_slots") if isinstance(props, dict) else None
    return slots if isinstance(slots, int) and slots > 0 else None


def shown_url(base_url: str) -> str:
    """``base_url`` as it may be shown: without user info or query, where a key may travel
    (``http://user:KEY@host/v1`` was printed whole in the refused connection's message)."""
    import urllib.parse

    try:
        parts = urllib.parse.urlsplit(base_url)
        port = f":{parts.port}" if parts.port else ""
    except ValueError:
        return "the --base-url given (not shown: it does not parse as a URL)"
    host = parts.hostname or ""
    host = f"[{host}]" if ":" in host else host
    return f"{parts.scheme}://{host}{port}{parts.path}"


def refused(base_url: str, timeout: float = 2.0) -> str | None:
    """The error when a connection to the server of ``base_url`` is refused (nothing listens
    there), else None (it answered, or failed otherwise: the run's calls find out). Tried
    before the network is loaded, so that with no server the hint comes in a second."""
    import socket
    import urllib.parse

    try:
        parts = urllib.parse.urlsplit(base_url)
        host, port = parts.hostname, parts.port or (443 if parts.scheme == "https" else 80)
    except ValueError:
        return None
    if not host:
        return None
    try:
        with socket.create_connection((host, port), timeout=timeout):
            return None
    except ConnectionRefusedError as exc:
        return f"connection to {shown_url(base_url)} failed: ConnectionRefusedError: {exc}"
    except OSError:
        return None


def _design(args: argparse.Namespace) -> dict[str, Any]:
    base = FULL_RUN if args.full else FIRST_RUN
    return {"n_contexts": args.n_contexts or base["n_contexts"],
            "repetitions": args.repetitions or base["repetitions"],
            "prompts": args.prompts or list(base["prompts"])}


def _endpoint(args: argparse.Namespace) -> tuple[str, str]:
    """The server's address and the model's name; usage errors for what is missing."""
    base_url = args.base_url or os.environ.get("OPENAI_BASE_URL")
    if not base_url:
        raise ElicitUsageError("no endpoint: pass --base-url (e.g. http://127.0.0.1:8080/v1) "
                               "or set $OPENAI_BASE_URL, or use --simulated AGENT")
    if "@" in base_url.split("?", 1)[0].split("#", 1)[0]:
        # the client refuses it too, but the connection check came first and printed it
        raise ElicitUsageError(f"the endpoint {shown_url(base_url)} holds credentials (user "
                               "info, not shown); pass the key in the environment variable "
                               "--api-key-env names")
    model = args.model or os.environ.get("OPENAI_MODEL")
    if not model:
        raise ElicitUsageError("no model name: pass --model or set $OPENAI_MODEL")
    if args.api_key_env is not None and not os.environ.get(args.api_key_env):
        # a variable named on purpose and unset (a typo) would send no key without a word
        raise ElicitUsageError(f"--api-key-env names ${args.api_key_env}, which is not set "
                               "(or is empty) in the environment")
    return base_url, model


def _client(args: argparse.Namespace, contexts: Any) -> tuple[Any, int]:
    import elicitation

    if args.simulated:
        return elicitation.SimulatedClient(args.simulated, contexts, rng=args.seed), (
            args.concurrency or 8)
    base_url, model = _endpoint(args)
    client = elicitation.OpenAIClient(
        # no variable named: the client sends $OPENAI_API_KEY to OpenAI's host only
        model, base_url=base_url,
        api_key=None if args.api_key_env is None else os.environ.get(args.api_key_env),
        temperature=args.temperature, seed=args.seed, max_tokens=args.max_tokens,
        timeout=args.timeout, deadline=args.deadline, logprobs=args.logprobs,
        top_logprobs=args.top_logprobs,
        constrained=None if args.constrained == "none" else args.constrained,
        extra_body={"stop": list(args.stop)} if args.stop else None)
    slots = server_slots(base_url)
    concurrency = args.concurrency or slots or 2
    if slots is not None and concurrency > slots:
        print(f"note: the server offers {slots} slots; concurrency lowered from "
              f"{concurrency} to {slots}", file=sys.stderr)
        concurrency = slots
    return client, concurrency


def _failure_lines(raw: Any, top: int = 5) -> list[str]:
    bad = raw[~raw["parse_ok"].to_numpy(dtype=bool)]
    if not len(bad):
        return []
    counts = bad.groupby(["quantity", "reason"]).size().sort_values(ascending=False)
    lines = [f"  {q:<8} {r:<20} {n}" for (q, r), n in counts.head(top).items()]
    errors = bad["call_error"].dropna()
    if len(errors):
        lines.append(f"  last call error: {str(errors.iloc[-1])[:300]}")
    texts = bad["text"].dropna()
    if len(texts):
        row = bad.loc[texts.index[0]]
        lines.append(f"  a raw reply ({row['quantity']}, {row['reason']}): "
                     f"{json.dumps(str(texts.iloc[0])[:300])}")
    return lines


#: The probe tries up to this many doublings of --max-tokens when every reply was cut.
PROBE_DOUBLINGS = 3


def all_truncated(raw: Any) -> bool:
    """Whether replies came back and every one of them was cut at the length limit."""
    answered = raw[raw["text"].notna()]
    return bool(len(answered)) and bool((answered["reason"] == "truncated").all())


def hint(raw: Any, args: argparse.Namespace, error: str = "") -> str:
    """The next step that fits what went wrong (the calls' errors, then the parses)."""
    errors = " ".join([error, *map(str, raw["call_error"].dropna())]) if raw is not None \
        else error
    answered = 0 if raw is None else int(raw["text"].notna().sum())
    url = args.base_url or os.environ.get("OPENAI_BASE_URL")
    url = shown_url(url) if url else "the server"
    if not answered and ("connection to" in errors or "Connection" in errors):
        return (f"hint: nothing answered at {url}: check that the server is running and "
                "listening there (--base-url is the server root with /v1, e.g. "
                "http://127.0.0.1:8080/v1); prompt options (--constrained, --max-tokens, "
                "--prompts) cannot help until it answers")
    if not answered and ("timed out" in errors or "deadline" in errors):
        return ("hint: the server did not answer in time: check that it is not overloaded, "
                "raise --timeout or --deadline, or lower --concurrency")
    if not answered and ("HTTP 401" in errors or "HTTP 403" in errors):
        if args.api_key_env is None:
            return ("hint: the server refused the request: name the environment variable "
                    "holding its key with --api-key-env ($OPENAI_API_KEY is sent only to "
                    "api.openai.com)")
        return (f"hint: the server refused the key: check the environment variable "
                f"{args.api_key_env} (or name another with --api-key-env)")
    if not answered and "HTTP 404" in errors:
        return ("hint: no such endpoint or model: check --base-url (it ends in /v1) and "
                "--model")
    if raw is not None and all_truncated(raw):
        return (f"hint: every reply was cut at --max-tokens {args.max_tokens}: raise it "
                "(a prompt that asks for reasoning needs several hundred tokens)")
    return ("hint: try --probe 6 to iterate on settings (--constrained grammar, --max-tokens, "
            "--prompts *_toolkit)")


def _speed(raw: Any, concurrency: int) -> tuple[float, float]:
    """Median seconds per answered call, and calls per second of wall time."""
    answered = raw[raw["text"].notna() & ~raw["cached"].to_numpy(dtype=bool)]
    elapsed = answered["elapsed"].dropna()
    per_call = float(elapsed.median()) if len(elapsed) else math.nan
    return per_call, (concurrency / per_call if per_call and per_call > 0 else math.nan)


def run_elicit(args: argparse.Namespace) -> int:
    """The ``elicit`` command."""
    import elicitation

    given = model_options(args)
    _ignored_iv(args)
    args = argparse.Namespace(**{**vars(given),
                                 "out": DEFAULT_OUT if args.out is None else args.out})
    for option, path in (("--out", args.out), ("--raw-out", args.raw_out)):
        if path is None:
            continue
        if Path(path).suffix.lower() != ".csv":
            raise ElicitUsageError(f"{option} {path}: the table is written as CSV; name the "
                                   "file .csv (`coherence test` reads it by its ending)")
        if not Path(path).resolve().parent.is_dir():
            raise ElicitUsageError(f"{option} {path}: no such folder "
                                   f"{Path(path).resolve().parent}")
    cache = elicitation.ResponseCache(args.cache)   # an unusable file fails first (exit 2)
    try:
        return _run(args, cache)
    finally:
        cache.close()


def _probe_summary(args: argparse.Namespace, raw: Any, rate: float, n_ok: int,
                   elicit: Any) -> int:
    """After a probe: the configured run's calls and time at the speed measured, the
    failure reasons, a larger probe where every reply was cut short, or a hint."""
    full = _design(args)
    n_calls = full["n_contexts"] * full["repetitions"] * (
        len(full["prompts"]) + (0 if args.no_decision else 1))
    if math.isfinite(rate) and rate > 0:
        seconds = n_calls / rate
        took = f"{seconds:.0f} s" if seconds < 120 else f"{seconds / 60:.0f} min"
        print(f"the configured run makes {n_calls} calls: about {took} at this speed")
    lines = _failure_lines(raw)
    if lines:
        print("failure reasons:")
        print("\n".join(lines))
    if not n_ok and all_truncated(raw):
        n_ok = _probe_larger(args, elicit)
    elif not n_ok:
        print(hint(raw, args))
    return EXIT_OK if n_ok else EXIT_FAILURE


def _run(args: argparse.Namespace, cache: Any) -> int:
    import bayesnets
    import elicitation

    design = _design(args)
    error = None if args.simulated else refused(_endpoint(args)[0])
    if error is not None:
        # nothing listens there: no call is sent (the runner would fail each one at once)
        print(f"coherence elicit: failed: {error}; no call was sent", file=sys.stderr)
        print(hint(None, args, error), file=sys.stdout if args.probe else sys.stderr)
        return EXIT_FAILURE
    contexts = bayesnets.contexts(args.network, n=design["n_contexts"], rng=args.seed)
    if args.probe:
        # the first contexts of the configured run, one repetition: the real run reuses them
        per_context = len(design["prompts"]) + (0 if args.no_decision else 1)
        attrs = dict(contexts.attrs)
        contexts = contexts.iloc[:max(1, math.ceil(args.probe / per_context))].copy()
        contexts.attrs.update(attrs)
    question = args.question or clinical_phrase(args.network, contexts.attrs)
    decision = None if args.no_decision else (args.decision or "decision")

    def elicit(run_args: argparse.Namespace) -> tuple[Any, Any, int]:
        client, concurrency = _client(run_args, contexts)
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always", elicitation.ParseFailureWarning)
            try:
                result = elicitation.run(
                    contexts, client, question=question, prompts=design["prompts"],
                    decision=decision,
                    repetitions=1 if args.probe else design["repetitions"],
                    concurrency=concurrency, cache=cache, max_retries=args.max_retries,
                    max_failures=args.max_failures, sum_tolerance=args.sum_tolerance,
                    progress=False if args.quiet else None)
            except elicitation.ElicitationError as exc:
                raise ElicitStopped(str(exc), hint(None, run_args, str(exc))) from exc
        for w in caught:
            if not issubclass(w.category, elicitation.ParseFailureWarning):
                warnings.warn_explicit(w.message, w.category, w.filename, w.lineno)
        return result, client, concurrency

    start = time.perf_counter()
    try:
        result, client, concurrency = elicit(args)
    except ElicitStopped as exc:
        print(f"coherence elicit: failed: {exc.args[0]}", file=sys.stderr)
        print(exc.hint, file=sys.stderr)
        return EXIT_FAILURE
    wall = time.perf_counter() - start
    raw = result.raw
    settings = json.dumps(dict(result.settings), sort_keys=True, default=str)
    endpoint = getattr(client, "endpoint", "simulated")
    if args.raw_out:
        raw.drop(columns=["key"]).to_csv(args.raw_out, index=False)
    n_ok = int(raw["parse_ok"].sum())
    per_call, rate = _speed(raw, concurrency)
    print(f"model {result.model} at {endpoint}; settings {settings}")
    print(f"prompts {', '.join(design['prompts'])}; decision {decision or '-'}; question: "
          f"{question!r}; concurrency {concurrency}")
    print(result.summary())
    print(f"parsed {n_ok} of {len(raw)} replies ({n_ok / max(len(raw), 1):.0%}); "
          + (f"median {per_call:.2f} s per call, about {rate:.2f} calls/s at concurrency "
             f"{concurrency}; " if math.isfinite(per_call) and not args.simulated else "")
          + f"{wall:.1f} s in all")
    if args.probe:
        return _probe_summary(args, raw, rate, n_ok, elicit)
    data = result.data.assign(model=result.model, settings=settings,
                              network=args.network)
    if not len(data):
        print(f"coherence elicit: no usable row: 0 of {len(raw)} elicitations gave a complete "
              "(belief, action) row. Top failure reasons:", file=sys.stderr)
        print("\n".join(_failure_lines(raw)), file=sys.stderr)
        print(hint(raw, args), file=sys.stderr)
        return EXIT_FAILURE
    data.to_csv(args.out, index=False)
    flagged = Path(args.out).with_name(Path(args.out).stem + "_incoherent.csv")
    if len(result.incoherent):
        # reason: what `coherence test` counts as set aside in the report's diagnostics
        result.incoherent.assign(model=result.model, settings=settings,
                                 reason="bad_sum").to_csv(flagged, index=False)
        print(f"{len(result.incoherent)} belief replies did not sum to 1 (bad_sum): kept, "
              f"with their stated numbers and actions, in {flagged}")
    elif flagged.is_file():  # an earlier run's: `coherence test` would count it against this table
        flagged.unlink()
        print(f"removed {flagged}: an earlier run's set-aside replies (this run set none aside)")
    print(f"\nbelief/action table ({len(data)} rows, with model and settings columns) "
          f"written to {args.out}; test it with: coherence test {args.out}")
    return EXIT_OK


def _probe_larger(args: argparse.Namespace, elicit: Any) -> int:
    """Every probe reply was cut at the length limit: probe again with the limit doubled
    (up to :data:`PROBE_DOUBLINGS` times) and say which limit lets replies through.
    Returns the number of replies parsed at the last limit tried."""
    limit = args.max_tokens
    for _ in range(PROBE_DOUBLINGS):
        limit *= 2
        print(f"every reply was cut at --max-tokens {limit // 2}; probing again with "
              f"--max-tokens {limit}")
        try:
            result, _, _ = elicit(argparse.Namespace(**{**vars(args), "max_tokens": limit}))
        except ElicitStopped as exc:
            print(f"  stopped: {exc.args[0][:300]}")
            return 0
        raw = result.raw
        n_ok = int(raw["parse_ok"].sum())
        print(f"  parsed {n_ok} of {len(raw)} replies with --max-tokens {limit}")
        if not all_truncated(raw):
            if n_ok:
                print(f"rerun with --max-tokens {limit}")
            else:
                print("failure reasons:")
                print("\n".join(_failure_lines(raw)))
                print(hint(raw, argparse.Namespace(**{**vars(args), "max_tokens": limit})))
            return n_ok
    print(f"hint: every reply was still cut at --max-tokens {limit}: the model may not stop "
          "on its own; add a stop sequence (--stop) or constrain the format "
          "(--constrained grammar)")
    return 0
