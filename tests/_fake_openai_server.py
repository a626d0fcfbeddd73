"""A small chat-completions server on 127.0.0.1 for the elicitation tests (stdlib only).

It answers ``POST /v1/chat/completions`` like an OpenAI-compatible server and
keeps its own log of every request: the call's identity (a hash of the
messages and seed), how many times that call was seen, the HTTP status sent
and whether the answer was fully written. A ``behaviour`` callable decides
each reply, so tests can script slow answers, 429 / 500 responses, malformed
bodies, unparseable text, token log-probabilities, or hold requests forever
(to kill a client while calls are in flight), and the faults of a hostile or
broken server: slow trickles, endless bodies, bodies shorter than announced,
garbled status lines, connection resets, redirects, error bodies that echo
the Authorization header. ``auth_seen`` records the Authorization header of
every request (to check that no credential leaves its origin) and ``slots``
is what ``GET /props`` reports (llama.cpp's parallel slots).
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import re
import socket
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from dataclasses import field
from http.server import BaseHTTPRequestHandler
from http.server import ThreadingHTTPServer
from typing import Any


@dataclass
class Reply:
    """What the server does with one request."""

    status: int = 200
    text: str | None = None           # None: the default answer for the prompt
    body: bytes | None = None         # raw body, overrides everything (malformed JSON)
    delay: float = 0.0                # seconds before answering
    headers: dict[str, str] = field(default_factory=dict)
    logprobs: Any = None              # the choice's ``logprobs`` object
    hold: bool = False                # never answer: wait for ``release`` and drop
    # faults (issue 17): each bounded in time by the client's deadline
    finish_reason: str = "stop"       # 'length': cut at max_tokens
    usage: dict[str, int] | None = None
    trickle: float = 0.0              # seconds between bytes of the body (slow trickle)
    endless: bool = False             # a chunked body that never ends (until released)
    short_by: int = 0                 # announce this many bytes more than are sent
    garbled_status: bool = False      # a status line that is not HTTP
    reset: bool = False               # close the connection without a reply
    echo_auth: bool = False           # the error body echoes the Authorization header


def call_key(body: dict[str, Any]) -> str:
    """The identity of a call: its messages and seed."""
    text = json.dumps([body.get("messages"), body.get("seed")], sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def default_answer(body: dict[str, Any]) -> str:
    """A well-formed reply to the templates: ``No: 0.3 / Yes: 0.7`` or a decision.

    Reads the reply format the prompt asks for: the papers' ("Use these labels
    in this order: [No, Yes]", "Can decide: ... / Decision: ...") or the
    toolkit's (``Label: <probability>`` lines).
    """
    content = body["messages"][-1]["content"]
    decision = re.findall(r"^(.+): <Yes or No>$", content, flags=re.MULTILINE)
    if len(decision) == 2:
        return f"{decision[0]}: Yes\n{decision[1]}: Yes"
    if "Example format:\nCan decide:" in content:
        return "Can decide: Yes\nDecision: Yes"
    listed = re.search(r"Use these labels in this order: \[(.+)\]", content)
    labels = ([x.strip() for x in listed.group(1).split(",")] if listed else
              re.findall(r"^(.+): <probability>$", content, flags=re.MULTILINE))
    if len(labels) == 2:
        return f"{labels[0]}: 0.3\n{labels[1]}: 0.7"
    share = round(1.0 / len(labels), 6) if labels else 1.0
    return "\n".join(f"{label}: {share}" for label in labels)


class FakeOpenAIServer:
    """Start with :meth:`start`; ``url`` is the ``base_url`` for :class:`OpenAIClient`."""

    def __init__(self, behaviour: Callable[[dict[str, Any], int], Reply] | None = None) -> None:
        self.behaviour = behaviour or (lambda body, attempt: Reply())
        self.log: list[dict[str, Any]] = []
        self.bodies: list[dict[str, Any]] = []
        self.release = threading.Event()
        self.auth_seen: list[str | None] = []   # the Authorization header of each request
        self.held = threading.Semaphore(0)
        self._seen: dict[str, int] = {}
        self._lock = threading.Lock()
        self._server: ThreadingHTTPServer | None = None
        self.slots: int | None = None
        self._thread: threading.Thread | None = None

    # ------------------------------------------------------------------ control
    def start(self) -> FakeOpenAIServer:
        server = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: Any) -> None:  # keep test output clean
                pass

            def do_POST(self) -> None:
                server._handle(self)

            def do_GET(self) -> None:  # /props, as llama.cpp reports its slots
                payload = json.dumps({"total_slots": server.slots}).encode()
                self.send_response(200 if server.slots else 404)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(payload)))
                self.end_headers()
                self.wfile.write(payload)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self._thread = threading.Thread(target=self._server.serve_forever, args=(0.05,),
                                        daemon=True)
        self._thread.start()
        return self

    def stop(self) -> None:
        self.release.set()
        if self._server is not None:
            self._server.shutdown()
            self._server.server_close()

    @property
    def url(self) -> str:
        assert self._server is not None
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def answered(self) -> list[str]:
        """Keys of the calls the server fully answered with 200 (in order)."""
        with self._lock:
            return [e["key"] for e in self.log if e["answered"] and e["status"] == 200]

    # ------------------------------------------------------------------ serving
    def _handle(self, handler: BaseHTTPRequestHandler) -> None:
        length = int(handler.headers.get("Content-Length", 0))
        raw = handler.rfile.read(length)
        body = json.loads(raw)
        key = call_key(body)
        auth = handler.headers.get("Authorization")
        with self._lock:
            self.auth_seen.append(auth)
            attempt = self._seen.get(key, 0)
            self._seen[key] = attempt + 1
            self.bodies.append(body)
            entry = {"key": key, "attempt": attempt, "status": None, "answered": False,
                     "time": time.monotonic(), "path": handler.path}
            self.log.append(entry)
        reply = self.behaviour(body, attempt)
        if reply.hold:
            entry["status"] = "held"
            self.held.release()
            self.release.wait()
            handler.close_connection = True
            return
        if reply.delay:
            time.sleep(reply.delay)
        if reply.reset:
            entry["status"] = "reset"
            handler.close_connection = True
            with contextlib.suppress(OSError):
                handler.connection.shutdown(socket.SHUT_RDWR)
            return
        if reply.garbled_status:
            with contextlib.suppress(OSError):
                handler.wfile.write(b"HTTP/1.1 2OO KO\r\nweird\r\n\r\n{}")
                handler.wfile.flush()
            entry["status"] = "garbled"
            handler.close_connection = True
            return
        if reply.body is not None:
            payload = reply.body
        elif reply.status == 200:
            text = default_answer(body) if reply.text is None else reply.text
            choice: dict[str, Any] = {"index": 0, "finish_reason": reply.finish_reason,
                                      "message": {"role": "assistant", "content": text}}
            if reply.logprobs is not None:
                choice["logprobs"] = reply.logprobs
            full = {"id": f"chatcmpl-{key}", "object": "chat.completion",
                    "model": body.get("model"), "choices": [choice]}
            if reply.usage is not None:
                full["usage"] = reply.usage
            payload = json.dumps(full).encode()
        else:
            message = f"status {reply.status}"
            if reply.echo_auth:  # a proxy that echoes the request's headers
                message += f"; you sent Authorization: {auth}"
            payload = json.dumps({"error": {"message": message}}).encode()
        try:
            handler.send_response(reply.status)
            handler.send_header("Content-Type", "application/json")
            if reply.endless:
                handler.send_header("Transfer-Encoding", "chunked")
            else:
                handler.send_header("Content-Length", str(len(payload) + reply.short_by))
            for name, value in reply.headers.items():
                handler.send_header(name, value)
            handler.end_headers()
            if reply.endless:
                while not self.release.is_set():
                    handler.wfile.write(b"400\r\n" + b" " * 1024 + b"\r\n")
                    handler.wfile.flush()
                    time.sleep(0.01)
                handler.close_connection = True
                return
            if reply.trickle:
                for i in range(len(payload)):
                    if self.release.is_set():
                        return
                    handler.wfile.write(payload[i:i + 1])
                    handler.wfile.flush()
                    time.sleep(reply.trickle)
            else:
                handler.wfile.write(payload)
                handler.wfile.flush()
            if reply.short_by:
                handler.close_connection = True
        except OSError:  # the client gave up (timeout) or was killed
            entry["status"] = reply.status
            return
        entry["status"] = reply.status
        entry["answered"] = True
