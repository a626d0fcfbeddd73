"""Model clients: one small protocol, messages in, text (and log-probabilities) out.

* :class:`OpenAIClient` speaks the chat-completions protocol over HTTP with
  the standard library (OpenAI, vLLM, the llama.cpp server and Ollama all
  serve it). Transient failures (timeouts, refused connections, 429, 5xx,
  malformed bodies) raise :class:`TransientError` so the runner retries them;
  other HTTP errors raise :class:`ClientError`. Redirects are never followed
  and error bodies are redacted of credentials.

The offline client, :class:`SimulatedClient` (answers from a :class:`coherence.Agent`,
reproducibly), is in :mod:`._simulated`.
"""

from __future__ import annotations

import contextlib
import datetime
import json
import math
import os
import re
import socket
import threading
import time
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from types import MappingProxyType
from typing import TYPE_CHECKING
from typing import Any
from typing import Protocol
from typing import runtime_checkable

from coherence._parameters import check_choice
from coherence._parameters import check_float
from coherence._parameters import check_int
from coherence._validation import param_error

from ._constrained import reply_grammar
from ._constrained import reply_json_schema
from ._parsing_decision import PAPER_DECISION_LABELS
from ._secrets import credential_keys
from ._secrets import redact
from ._templates import BINARY_LABELS
from ._templates import NO_CONTROL
from ._templates import has_control

if TYPE_CHECKING:
    from urllib.parse import SplitResult

__all__ = [
    "Client",
    "ClientError",
    "Completion",
    "OpenAIClient",
    "Request",
    "TransientError",
    "redact",
    "token_belief",
]

#: the host whose key ``$OPENAI_API_KEY`` is: the only one it is sent to by default
_OPENAI_HOST = "api.openai.com"

_EMPTY: Mapping[str, Any] = MappingProxyType({})

#: the largest integer the cache stores (SQLite's signed 64-bit INTEGER)
_INT64_MAX = 2**63 - 1


class ClientError(RuntimeError):
    """A call failed in a way retrying will not fix (bad request, bad key, no such model)."""


class TransientError(ClientError):
    """A call failed in a way worth retrying (timeout, connection, 429, 5xx, bad body).

    ``retry_after`` holds the server's ``Retry-After`` in seconds when it sent one (a date
    counted from now).
    ``refused`` is True when the connection was refused: the request never left this
    machine, so no reply can have been lost (the runner retries it only once the server
    has answered a call of the run).
    """

    def __init__(self, message: str, *, retry_after: float | None = None,
                 refused: bool = False) -> None:
        super().__init__(message)
        self.retry_after = retry_after
        self.refused = refused


@dataclass(frozen=True, slots=True)
class Request:
    """One call: the chat messages and what the runner knows about them.

    ``kind`` is ``'probability'`` or ``'decision'``; ``labels`` the labels
    asked for (used for constrained output; a decision request left with the
    default labels asks the paper's ``('Can decide', 'Decision')``);
    ``seed`` the per-call seed (None
    when unseeded). ``context``, ``template``, ``prompt``, ``repetition`` and
    ``quantity`` (the name of the quantity asked, e.g. ``'belief'``,
    ``'p_a_given_b1'``) identify the call; an HTTP client ignores them, a
    simulated client uses them to look up its answer. ``reasoning``: the
    prompt asks for reasoning before the answer lines (a constrained client
    then leaves room for it).
    """

    messages: tuple[Mapping[str, str], ...]
    kind: str = "probability"
    labels: tuple[str, ...] = BINARY_LABELS
    seed: int | None = None
    context: Any = None
    template: str = ""
    prompt: str = ""
    repetition: int = 0
    quantity: str = "belief"
    reasoning: bool = False

    def __post_init__(self) -> None:
        if self.kind == "decision" and tuple(self.labels) == BINARY_LABELS:
            # the default labels are a probability template's: a decision asks the paper's
            object.__setattr__(self, "labels", PAPER_DECISION_LABELS)


@dataclass(frozen=True, slots=True)
class Completion:
    """What a client returns: the text, and the log-probabilities when served.

    ``token_belief`` is the normalised probability of the Yes token over the
    Yes and No tokens (see :func:`token_belief`), NaN when not available.
    ``raw`` holds the server's JSON body (for the raw-responses table).
    ``finish_reason`` is the server's reason the reply ended (``'stop'``,
    ``'length'`` when cut at ``max_tokens``, ``'content_filter'`` when the
    server's filter stopped it: both parsed as ``truncated``), and
    ``usage`` its token counts (``prompt_tokens``, ``completion_tokens``).
    """

    text: str
    token_belief: float = math.nan
    logprobs: Any = None
    raw: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    finish_reason: str | None = None
    usage: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)


@runtime_checkable
class Client(Protocol):
    """The client protocol the runner uses.

    ``model`` names the model and ``settings`` the sampling settings (both
    enter the cache key); ``complete`` performs one call and is called from
    several threads at once.
    """

    @property
    def model(self) -> str: ...  # pragma: no cover

    @property
    def settings(self) -> Mapping[str, Any]: ...  # pragma: no cover

    def complete(self, request: Request) -> Completion: ...  # pragma: no cover


# --------------------------------------------------------------------------- log-probabilities
def _norm_token(token: Any) -> str:
    """A token as a word: case, whitespace, quotes and the punctuation around it ignored
    (``'" Yes "'`` reads ``yes``)."""
    return str(token).strip(" \t\n\r\"'*:.,").lower()


def token_belief(logprobs: Any) -> float:
    """P(Yes) / (P(Yes) + P(No)) from a response's token log-probabilities.

    A second reading of the model's belief, beside the number it writes: where the
    server returns log-probabilities, the share of probability the model puts on Yes
    rather than No at its forced choice.

    Parameters
    ----------
    logprobs : dict
        The ``logprobs`` object of a choice, in either layout servers use:
        chat style ``{'content': [{'token', 'logprob', 'top_logprobs':
        [{'token', 'logprob'}, ...]}, ...]}`` or completion style
        ``{'tokens': [...], 'top_logprobs': [{token: logprob, ...}, ...]}``.

    Returns
    -------
    float
        At the *last* position whose top alternatives include a Yes or No
        token (the forced choice of the decision template, "if you had to
        decide"), the mass on tokens reading ``yes`` divided by the mass on
        tokens reading ``yes`` or ``no`` (case, spaces and quotes ignored).
        NaN when no position has one. Values that are not log-probabilities
        (positive, infinite, not numbers) are left out.

    See Also
    --------
    parse_probabilities : a belief read from the text of a reply.

    Examples
    --------
    >>> import math
    >>> from elicitation import token_belief
    >>> lp = {"content": [{"token": "Yes", "logprob": math.log(0.6),
    ...        "top_logprobs": [{"token": "Yes", "logprob": math.log(0.6)},
    ...                         {"token": " no", "logprob": math.log(0.2)}]}]}
    >>> round(token_belief(lp), 6)
    0.75
    """
    positions: list[list[tuple[str, float]]] = []
    try:
        if isinstance(logprobs, Mapping) and isinstance(logprobs.get("content"), list):
            for entry in logprobs["content"]:
                alts = [(a.get("token"), a.get("logprob")) for a in entry.get("top_logprobs")
                        or []]
                if not alts:
                    alts = [(entry.get("token"), entry.get("logprob"))]
                positions.append(alts)
        elif isinstance(logprobs, Mapping) and isinstance(logprobs.get("top_logprobs"), list):
            for entry in logprobs["top_logprobs"]:
                if isinstance(entry, Mapping):
                    positions.append(list(entry.items()))
        else:
            return math.nan
    except (AttributeError, TypeError):
        return math.nan
    for alts in reversed(positions):
        yes: list[float] = []
        no: list[float] = []
        for token, lp in alts:
            # a log-probability is finite and at most 0 (a little rounding allowed);
            # anything else is not one and is left out, never exponentiated
            if (isinstance(lp, bool) or not isinstance(lp, int | float)
                    or not math.isfinite(lp) or lp > 1e-6):
                continue
            word = _norm_token(token)
            if word == "yes":
                yes.append(float(min(lp, 0.0)))
            elif word == "no":
                no.append(float(min(lp, 0.0)))
        if yes or no:
            top = max(yes + no)
            mass_yes = math.fsum(math.exp(v - top) for v in yes)
            mass_no = math.fsum(math.exp(v - top) for v in no)
            return mass_yes / (mass_yes + mass_no)
    return math.nan


# --------------------------------------------------------------------------- OpenAI-compatible
#: the user info of a URL (``user:key@``), whatever comes before it: never quoted
_USER_INFO = re.compile(r"[^/@\s]*@")

#: The request fields the client writes itself, and the recorded setting ``constrained``
#: (extra_body came last in the settings): never taken from ``extra_body``.
_OWN_FIELDS = frozenset(("constrained", "model", "messages", "temperature", "seed",
                         "max_tokens", "logprobs", "top_logprobs", "response_format",
                         "grammar"))


def _model_name(model: Any, owner: str) -> str:
    """The model name given, or $OPENAI_MODEL: non-empty text without control characters."""
    model = model if model is not None else os.environ.get("OPENAI_MODEL")
    if not isinstance(model, str) or not model.strip():
        raise ValueError(param_error("model", owner, "a model name (or $OPENAI_MODEL set)",
                                     model))
    if has_control(model):
        # 'gpt-4o\n' (a name read from a file) was sent, cached and tabled as such
        raise ValueError(param_error("model", owner, f"a model name with {NO_CONTROL}",
                                     model))
    return model


def _endpoint(base_url: Any, owner: str) -> tuple[SplitResult, str, int | None, str]:
    """``base_url`` (or $OPENAI_BASE_URL) split, its host and port, and the URL as it may
    be shown: an http(s) URL with a host and without credentials, never quoted with its
    user info."""
    from urllib.parse import urlsplit

    base_url = base_url or os.environ.get("OPENAI_BASE_URL")
    if base_url is None:
        raise ValueError(param_error("base_url", owner, "the server's URL including /v1 (or "
                                     "$OPENAI_BASE_URL set; for OpenAI itself "
                                     "'https://api.openai.com/v1')", None))
    if not isinstance(base_url, str):
        raise TypeError(param_error("base_url", owner, "a str", type(base_url).__name__))
    try:
        parts = urlsplit(base_url.strip())
        port = parts.port
    except ValueError:
        raise ValueError(param_error("base_url", owner, "an http:// or https:// URL",
                                     "a URL that does not parse")) from None
    if parts.scheme not in ("http", "https") or not parts.hostname:
        # the URL as given, user info and all, was quoted: 'htp://user:key@host' put
        # the key in the error (checked before the credentials are refused below)
        raise ValueError(param_error("base_url", owner, "an http:// or https:// URL",
                                     redact(_USER_INFO.sub("[redacted]@", base_url))))
    host = parts.hostname
    display_host = f"[{host}]" if ":" in host else host
    shown = f"{parts.scheme}://{display_host}" + (f":{port}" if port else "") + parts.path
    if parts.username is not None or parts.password is not None:
        raise ValueError(param_error("base_url", owner, "a URL without credentials (pass "
                                     "the key as api_key)", shown + " with user info"))
    return parts, host, port, shown


def _checked_extra_body(extra_body: Any, owner: str) -> dict[str, Any]:
    """``extra_body`` as a dict of request fields the client does not set itself, that do
    not change the reply's shape and are not named like a credential."""
    if extra_body is not None and not isinstance(extra_body, Mapping):
        raise TypeError(param_error("extra_body", owner, "a mapping", extra_body))
    # fields the client writes into every request itself: one in extra_body replaced
    # them after the cache key was made ({"seed": 5} sent seed 5 for every repetition
    # while seeds 5, 6, 7 were recorded; {"messages": ...} the prompt itself)
    # ... and 'constrained', a recorded setting: extra_body came last in the settings,
    # so constrained='grammar' with {"constrained": None} was recorded (and cached) as an
    # unconstrained client's
    clash = sorted(set(extra_body or {}) & _OWN_FIELDS)
    if clash:
        raise ValueError(param_error("extra_body", owner, "fields the client does not set "
                                     "itself (give model, temperature, seed, max_tokens, "
                                     "logprobs, top_logprobs and constrained as the "
                                     "client's own parameters)", clash))
    # fields that change the shape of the reply: n > 1 makes the server sample (and
    # bill) several choices, of which one would be kept; a stream is not one JSON body
    shape = {k: v for k, v in (extra_body or {}).items()
             if (k == "n" and v != 1) or (k == "stream" and v is not False and v is not None)}
    if shape:
        raise ValueError(param_error("extra_body", owner, "no 'n' other than 1 and no "
                                     "'stream' (the client reads one choice of one JSON "
                                     "body: ask more samples with repetitions)", shape))
    # a credential in the body went with the recorded settings into the cache, the
    # results and raw.csv, in clear: the client's key goes in its header only
    secret = credential_keys(extra_body or {})
    if secret:
        raise ValueError(param_error("extra_body", owner, "no field named like a "
                                     "credential (it is recorded with the settings, in "
                                     "the cache and the results: pass the key as api_key=, "
                                     "sent only in the header to base_url's origin)",
                                     secret))
    return dict(extra_body or {})


class OpenAIClient:
    """A chat-completions client (OpenAI, vLLM, llama.cpp server, Ollama).

    Parameters
    ----------
    model : str, optional
        Model name; default ``$OPENAI_MODEL``. Not blank, and without control
        characters (a line break, tab, NUL, ...): it is sent, kept in the cache
        keys and shown in the tables.
    base_url : str, optional
        Server root including ``/v1``; default ``$OPENAI_BASE_URL``. There is
        no built-in default: a run goes only where the user pointed it (for
        OpenAI itself, ``https://api.openai.com/v1``). Credentials inside the
        URL (``https://user:key@host``) are refused; pass ``api_key``.
    api_key : str, optional
        The key sent to ``base_url``. Default: ``$OPENAI_API_KEY`` when
        ``base_url`` is OpenAI's (``https://api.openai.com``, port 443), else no key (a local
        server needs none; another provider's key is passed, or named in the
        command line's ``--api-key-env``: OpenAI's key is never sent to another
        host). Sent only to ``base_url``'s origin (redirects are not followed),
        never recorded in the cache or the results, and redacted from every
        error body the server returns.
    temperature : float
        Sampling temperature (default 1.0, the server's usual default,
        written out so it is recorded).
    seed : int, optional
        Base seed; the runner sends ``seed + repetition`` so repetitions are
        distinct draws that can be replayed (a run whose last ``seed +
        repetition`` is above ``2**63 - 1`` is refused before any call).
    max_tokens : int
        Cap on reply length (default 256). A reply cut at the cap is parsed
        as ``truncated``.
    timeout : float
        Seconds without data before a call counts as timed out (default
        ``$OPENAI_TIMEOUT`` or 60); a timed-out call is retried by the runner.
    deadline : float, optional
        Seconds a whole call may take, however the server trickles its bytes
        (default ``4 * timeout``); a call past it is cut and retried.
    max_response_bytes : int
        Largest reply body accepted (default 8 MiB); a larger one fails the
        call (not retried) without storing it.
    logprobs : bool
        Ask for token log-probabilities (``top_logprobs`` alternatives per
        token) and record the token-probability belief.
    top_logprobs : int, optional
        Alternatives per position when ``logprobs`` (None, the default: 10). Given
        without ``logprobs`` it raises ``ValueError`` (no log-probability is asked for,
        so it would go unused).
    constrained : {None, 'json_schema', 'grammar'}
        Constrain the reply: an OpenAI ``response_format`` JSON schema, or a
        llama.cpp ``grammar`` (GBNF) for the line format.
    extra_body : mapping, optional
        More fields merged into every request body (e.g. ``top_p``); they
        are part of the recorded settings. A field the client writes itself
        (``model``, ``messages``, ``temperature``, ``seed``, ``max_tokens``,
        ``logprobs``, ``top_logprobs``, ``response_format``, ``grammar``) is
        refused, and so is ``constrained`` (a recorded setting): give it as the
        client's own parameter. ``n`` other than 1
        and ``stream`` are refused too: the client keeps one choice of one
        JSON body (ask more samples with the runner's ``repetitions``). A field
        named like a credential, at any depth (``api_key``, ``key``, ``token``,
        ``access_token``, ``authorization``, ``password``, ``secret``, ... in any
        case; a JSON schema's field names excepted) is refused: the settings are
        recorded in clear; pass the key as ``api_key``.

    Notes
    -----
    Uses ``http.client`` only (no dependency, no proxy support); each call
    opens its own connection, so the runner's threads never share one.
    Transient failures (timeouts, the deadline, refused or reset
    connections, incomplete bodies, garbled status lines, HTTP 408/429/5xx,
    malformed JSON) raise :class:`TransientError`; redirects, other HTTP
    errors, certificate failures and oversized bodies raise
    :class:`ClientError`. Error messages name the endpoint without
    credentials and quote at most 300 redacted characters of the body.
    A reply whose ``content`` is a list of parts (``[{"type": "text",
    "text": ...}, ...]``, as some servers send) is read as its text parts
    joined in order; other parts (``thinking``, ``reasoning``, images) are
    not part of the answer and are left out (the whole body stays in
    :attr:`Completion.raw`).
    """

    def __init__(self, model: str | None = None, *, base_url: str | None = None,
                 api_key: str | None = None, temperature: float = 1.0,
                 seed: int | None = None, max_tokens: int = 256, timeout: float | None = None,
                 deadline: float | None = None, max_response_bytes: int = 8 * 1024 * 1024,
                 logprobs: bool = False, top_logprobs: int | None = None,
                 constrained: str | None = None,
                 extra_body: Mapping[str, Any] | None = None) -> None:

        owner = "OpenAIClient"
        model = _model_name(model, owner)
        parts, host, port, shown = _endpoint(base_url, owner)
        if timeout is None:
            env = os.environ.get("OPENAI_TIMEOUT")
            timeout = float(env) if env else 60.0
        self._model = model
        self._scheme = parts.scheme
        self._host = host
        self._port = port or (443 if parts.scheme == "https" else 80)
        self._path = parts.path.rstrip("/") + "/chat/completions" + (
            f"?{parts.query}" if parts.query else "")
        self._url = shown.rstrip("/") + "/chat/completions"
        # $OPENAI_API_KEY is OpenAI's key: it goes to OpenAI's origin only (over https, port
        # 443: http://api.openai.com/v1 sent it in the clear). Another server (local, or a
        # third party's) gets a key only when one is passed for it
        env_key = os.environ.get("OPENAI_API_KEY")
        openai = host == _OPENAI_HOST and parts.scheme == "https" and self._port == 443
        self._key = api_key if api_key is not None else (env_key if openai else None)
        self._withheld = api_key is None and not openai and bool(env_key)
        if self._key is not None and not isinstance(self._key, str):
            raise TypeError(param_error("api_key", owner, "a str or None",
                                        type(self._key).__name__))
        if self._key and any(ord(c) < 32 or ord(c) == 127 for c in self._key):
            # http.client would refuse the header with an error that quotes the key, and
            # that error would be stored with the call: never repeat the key here
            raise ValueError(param_error("api_key", owner, "a key without line breaks or "
                                         "control characters (strip the newline a key file "
                                         "ends with)", "a key holding one (not shown)"))
        self.temperature = check_float(temperature, "temperature", owner, low=0.0)
        # the cache stores both as SQLite integers (signed 64-bit)
        self.seed = None if seed is None else check_int(seed, "seed", owner, low=0,
                                                         high=_INT64_MAX)
        self.max_tokens = check_int(max_tokens, "max_tokens", owner, low=1, high=_INT64_MAX)
        self.timeout = check_float(timeout, "timeout", owner, low=0.0, low_open=True)
        self.deadline = (4.0 * self.timeout if deadline is None
                         else check_float(deadline, "deadline", owner, low=0.0, low_open=True))
        self.max_response_bytes = check_int(max_response_bytes, "max_response_bytes", owner,
                                            low=1)
        if not isinstance(logprobs, bool):
            raise TypeError(param_error("logprobs", owner, "a bool", logprobs))
        self.logprobs = logprobs
        if top_logprobs is not None and not logprobs:  # it would go unused without a word
            raise ValueError(param_error("top_logprobs", owner, "None without logprobs=True "
                                         "(no log-probability is asked for)", top_logprobs))
        self.top_logprobs = check_int(10 if top_logprobs is None else top_logprobs,
                                      "top_logprobs", owner, low=1, high=20)
        self.constrained = check_choice(constrained, "constrained", owner,
                                        (None, "json_schema", "grammar"))
        self.extra_body = _checked_extra_body(extra_body, owner)

    @property
    def model(self) -> str:
        """The model name."""
        return self._model

    @property
    def url(self) -> str:
        """The chat-completions endpoint (without credentials)."""
        return self._url

    @property
    def endpoint(self) -> str:
        """The endpoint recorded with every reply in the cache (same as :attr:`url`)."""
        return self._url

    @property
    def settings(self) -> Mapping[str, Any]:
        """The sampling settings sent with every call (recorded, part of the cache key).

        The server's address is not a setting: the same model served again on
        another port answers from the same cache. The endpoint is recorded
        with every reply instead, and the runner warns when a cached reply
        came from another one.
        """
        return MappingProxyType({
            "temperature": self.temperature, "seed": self.seed,
            "max_tokens": self.max_tokens, "logprobs": self.logprobs,
            "top_logprobs": self.top_logprobs if self.logprobs else None,
            "constrained": self.constrained, **self.extra_body,
        })

    def body(self, request: Request) -> dict[str, Any]:
        """The JSON body sent for ``request``."""
        body: dict[str, Any] = {
            "model": self._model,
            "messages": [dict(m) for m in request.messages],
            "temperature": self.temperature,
            "max_tokens": self.max_tokens,
        }
        if request.seed is not None:
            body["seed"] = request.seed
        if self.logprobs:
            body["logprobs"] = True
            body["top_logprobs"] = self.top_logprobs
        if self.constrained == "json_schema":
            body["response_format"] = reply_json_schema(request.kind, request.labels)
        elif self.constrained == "grammar":
            body["grammar"] = reply_grammar(request.kind, request.labels, request.reasoning)
        body.update(self.extra_body)
        return body

    def _shown(self, payload: bytes) -> str:
        return redact(payload[:2000].decode("utf-8", "replace"), self._key)[:300]

    def _exchange(self, data: bytes) -> tuple[int, Any, bytes]:
        """POST ``data``; return (status, headers, body) within the deadline and size cap."""
        import http.client
        import ssl

        headers = {"Content-Type": "application/json", "Accept": "application/json",
                   "Content-Length": str(len(data))}
        if self._key:
            headers["Authorization"] = f"Bearer {self._key}"
        conn: http.client.HTTPConnection
        if self._scheme == "https":
            conn = http.client.HTTPSConnection(self._host, self._port, timeout=self.timeout,
                                               context=ssl.create_default_context())
        else:
            conn = http.client.HTTPConnection(self._host, self._port, timeout=self.timeout)
        expired = threading.Event()
        held: list[socket.socket] = []   # the response keeps the socket after conn drops it

        def expire() -> None:  # the deadline: cut the connection, whatever it is doing
            expired.set()
            for sock in held:
                with contextlib.suppress(OSError):
                    sock.shutdown(socket.SHUT_RDWR)

        watchdog = threading.Timer(self.deadline, expire)
        watchdog.daemon = True
        watchdog.start()
        try:
            conn.connect()
            if conn.sock is not None:
                held.append(conn.sock)
            if expired.is_set():
                raise TimeoutError("deadline")
            try:
                conn.request("POST", self._path, body=data, headers=headers)
            except (ValueError, TypeError) as exc:  # a header http.client refuses
                raise ClientError(f"the request to {self._url} could not be sent: "
                                  f"{type(exc).__name__}: {redact(str(exc), self._key)}"
                                  ) from None
            if expired.is_set():
                raise TimeoutError("deadline")
            resp = conn.getresponse()
            length = resp.getheader("Content-Length")  # the body's stated size, where stated
            stated = int(length) if length is not None and length.strip().isdigit() else None
            if stated is not None and stated > self.max_response_bytes:
                raise ClientError(f"the reply from {self._url} is {stated} bytes, more "
                                  f"than max_response_bytes={self.max_response_bytes}; not read")
            chunks: list[bytes] = []
            total = 0
            while True:
                chunk = resp.read(65536)
                if not chunk:
                    break
                total += len(chunk)
                if total > self.max_response_bytes:
                    raise ClientError(f"the reply from {self._url} is larger than "
                                      f"max_response_bytes={self.max_response_bytes}; dropped")
                chunks.append(chunk)
            # a body read to its stated length is the whole reply, even where the deadline
            # fired as it arrived: dropping it would send (and pay for) the call again
            if expired.is_set() and total != stated:
                raise TimeoutError("deadline")
            if stated is not None and total < stated:
                raise http.client.IncompleteRead(b"".join(chunks), stated - total)
            return resp.status, resp.headers, b"".join(chunks)
        except ClientError:
            raise
        except ssl.SSLCertVerificationError as exc:
            raise ClientError(f"certificate of {self._url} not trusted: {exc}") from None
        except (http.client.HTTPException, OSError) as exc:
            if expired.is_set():
                raise TransientError(f"no complete reply from {self._url} within the deadline "
                                     f"of {self.deadline:g} s") from None
            if isinstance(exc, TimeoutError):
                raise TransientError(f"timed out after {self.timeout:g} s waiting for "
                                     f"{self._url}") from None
            if isinstance(exc, http.client.HTTPException) and not isinstance(exc,
                                                                             ConnectionError):
                raise TransientError(f"broken HTTP reply from {self._url}: "
                                     f"{type(exc).__name__}") from None
            raise TransientError(f"connection to {self._url} failed: "
                                 f"{type(exc).__name__}: {redact(str(exc), self._key)}",
                                 refused=isinstance(exc, ConnectionRefusedError)) from None
        finally:
            watchdog.cancel()
            conn.close()

    def complete(self, request: Request) -> Completion:
        """Send one chat-completions request; see the class notes for errors."""
        data = json.dumps(self.body(request)).encode()
        status, headers, payload = self._exchange(data)
        if 300 <= status < 400:
            location = redact(str(headers.get("Location", "")), self._key)
            raise ClientError(f"HTTP {status} from {self._url}: the server redirects to "
                              f"{location[:200]!r}; redirects are not followed (the request "
                              "carries the API key): set base_url to the final address")
        if status != 200:
            retry_after = _retry_after(headers.get("Retry-After"))
            message = f"HTTP {status} from {self._url}: {self._shown(payload)}"
            if status in (401, 403) and self._withheld:
                message += (f" (no key was sent: $OPENAI_API_KEY goes only to {_OPENAI_HOST} "
                            "over https; "
                            "pass this server's key as api_key, or name its variable: "
                            "--api-key-env, or api_key_env in a study)")
            if status in (408, 429) or status >= 500:
                raise TransientError(message, retry_after=retry_after)
            raise ClientError(message)
        try:
            body = json.loads(payload)
            choice = body["choices"][0]
            text = choice["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError):
            raise TransientError(f"malformed response body from {self._url}: "
                                 + self._shown(payload)) from None
        refusal = choice["message"].get("refusal") if isinstance(choice["message"],
                                                                 Mapping) else None
        if not text and isinstance(refusal, str) and refusal:
            # the model declined (OpenAI's refusal, content null): its words are the reply
            # (they were stored as an empty reply)
            text = refusal
        text = _content_text(text)
        if text is None:
            raise TransientError("malformed response body: content is "
                                 f"{type(choice['message']['content']).__name__}")
        lp = choice.get("logprobs") if isinstance(choice, Mapping) else None
        finish = choice.get("finish_reason") if isinstance(choice, Mapping) else None
        usage = body.get("usage") if isinstance(body, Mapping) else None
        return Completion(text=text, token_belief=token_belief(lp) if lp else math.nan,
                          logprobs=lp, raw=body,
                          finish_reason=finish if isinstance(finish, str) else None,
                          usage=MappingProxyType(dict(usage)) if isinstance(usage, Mapping)
                          else _EMPTY)

    def __repr__(self) -> str:
        return f"OpenAIClient(model={self._model!r}, url={self._url!r})"


def _retry_after(header: Any) -> float | None:
    """The seconds a ``Retry-After`` header asks to wait: a number, or an HTTP-date (RFC
    9110; it was ignored) counted from now (0 when past); None when absent or unreadable."""
    if not header:
        return None
    try:
        return float(header)
    except ValueError:
        pass
    from email.utils import parsedate_to_datetime

    try:
        when = parsedate_to_datetime(str(header))
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:  # "-0000": a date in UTC
        when = when.replace(tzinfo=datetime.UTC)
    return max(0.0, when.timestamp() - time.time())


def _content_text(content: Any) -> str | None:
    """The text of a reply's ``content``: a string as is, ``null`` as ``""``, a list of
    parts as its text parts joined (plain strings count as text; ``thinking``, ``reasoning``
    and other parts are left out); None for anything else (a malformed body)."""
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if not isinstance(content, list):
        return None
    texts = []
    for part in content:
        if isinstance(part, str):
            texts.append(part)
        elif (isinstance(part, Mapping) and part.get("type") in ("text", "output_text")
              and isinstance(part.get("text"), str)):
            texts.append(part["text"])
    return "".join(texts)
