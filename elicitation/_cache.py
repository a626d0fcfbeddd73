"""A SQLite store of raw responses: every response is committed the moment it arrives.

One row per call, keyed by a hash of (model, template, rendered messages,
context, prompt variant, repetition, quantity, sampling settings, seed). The
database runs in WAL mode and commits after every insert, so a process killed
at any point (``kill -9`` included) loses no committed response, and a re-run
finds every response it already has.
"""

from __future__ import annotations

import contextlib
import hashlib
import json
import sqlite3
import threading
import time
from collections.abc import Iterable
from collections.abc import Iterator
from collections.abc import Mapping
from pathlib import Path
from typing import Any

from coherence._validation import param_error

__all__ = ["ResponseCache", "cache_key"]

_SCHEMA = """
CREATE TABLE IF NOT EXISTS responses (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    template TEXT NOT NULL,
    context TEXT NOT NULL,
    prompt TEXT NOT NULL,
    repetition INTEGER NOT NULL,
    quantity TEXT NOT NULL,
    settings TEXT NOT NULL,
    seed INTEGER,
    messages TEXT NOT NULL,
    text TEXT NOT NULL,
    token_belief REAL,
    logprobs TEXT,
    elapsed REAL,
    created REAL NOT NULL,
    finish_reason TEXT,
    prompt_tokens INTEGER,
    completion_tokens INTEGER,
    endpoint TEXT
)
"""

COLUMNS: tuple[str, ...] = ("key", "model", "template", "context", "prompt", "repetition",
                            "quantity", "settings", "seed", "messages", "text", "token_belief",
                            "logprobs", "elapsed", "created", "finish_reason", "prompt_tokens",
                            "completion_tokens", "endpoint")
#: Columns added after the first release: added to an older cache file when it is opened.
_ADDED = {"finish_reason": "TEXT", "prompt_tokens": "INTEGER", "completion_tokens": "INTEGER",
          "endpoint": "TEXT"}


def _non_text_key(value: Any, where: str) -> str | None:
    """The path of the first mapping key (at any depth) that is not a string, or None."""
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not isinstance(key, str):
                return f"{where}[{key!r}]"
            found = _non_text_key(item, f"{where}[{key!r}]")
            if found is not None:
                return found
    elif isinstance(value, list | tuple):
        for i, item in enumerate(value):
            found = _non_text_key(item, f"{where}[{i}]")
            if found is not None:
                return found
    return None


def cache_key(identity: Mapping[str, Any]) -> str:
    """The SHA-256 hex digest of the canonical JSON of ``identity``.

    Every mapping key, at any depth, must be a string: JSON writes the key
    ``1`` as ``"1"``, so ``{1: "x"}`` and ``{"1": "x"}`` would share a key
    (a ``TypeError`` names the first offending key).

    See Also
    --------
    ResponseCache : the cache whose entries the key names.
    """
    if not isinstance(identity, Mapping):
        raise TypeError(param_error("identity", "cache_key", "a mapping with string keys",
                                    type(identity).__name__))
    bad = _non_text_key(identity, "identity")
    if bad is not None:
        raise TypeError("The 'identity' parameter of cache_key must be a mapping whose keys "
                        f"(at any depth) are strings; got the key {bad}.")
    text = json.dumps(identity, sort_keys=True, default=str, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()


def _storable(value: Any) -> Any:
    """``value``, with a text's lone UTF-16 surrogates (a server's JSON escape for half an
    emoji, ``"\\ud83d"``) written as U+FFFD: SQLite stores UTF-8 only, and the failed
    write stopped the run as if the cache could not be written."""
    if isinstance(value, str):
        try:
            value.encode("utf-8")
        except UnicodeEncodeError:
            return value.encode("utf-16", "surrogatepass").decode("utf-16", "replace")
    return value


class ResponseCache:
    """A thread-safe SQLite response store (``path=None``: in memory).

    Parameters
    ----------
    path : str or pathlib.Path or None
        The database file, created if absent.

    Raises
    ------
    ValueError
        When the file cannot be opened, is not a SQLite database, or holds a
        ``responses`` table elicitation did not write (the message names the
        file). A failed write raises ``OSError`` naming the file.
    """

    def __init__(self, path: str | Path | None) -> None:
        if path is not None and not isinstance(path, str | Path):
            raise TypeError(param_error("path", "ResponseCache", "a path or None",
                                        type(path).__name__))
        self.path = None if path is None else Path(path)
        target = ":memory:" if self.path is None else str(self.path)
        self._lock = threading.Lock()
        try:
            self._conn = sqlite3.connect(target, check_same_thread=False, isolation_level=None,
                                         timeout=30.0)
        except sqlite3.Error as exc:
            raise ValueError(f"Cannot open the response cache {target}: {exc}.") from None
        try:
            if self.path is not None:
                self._conn.execute("PRAGMA journal_mode=WAL")
                self._conn.execute("PRAGMA synchronous=NORMAL")
            self._conn.execute(_SCHEMA)
            have = {row[1] for row in self._conn.execute("PRAGMA table_info(responses)")}
            old = set(COLUMNS) - set(_ADDED)
            if not old <= have:
                raise ValueError(f"The response cache {target} has a 'responses' table that "
                                 "elicitation did not write (missing columns "
                                 f"{sorted(old - have)}); use another cache file.")
            for name, sql_type in _ADDED.items():
                if name not in have:
                    self._conn.execute(f"ALTER TABLE responses ADD COLUMN {name} {sql_type}")
        except sqlite3.Error as exc:
            self._conn.close()
            raise ValueError(f"Cannot use {target} as a response cache: {exc} (is it a SQLite "
                             "file written by elicitation, and writable?).") from None
        except ValueError:
            self._conn.close()
            raise

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The stored rows for those of ``keys`` that are present."""
        keys = list(keys)
        out: dict[str, dict[str, Any]] = {}
        with self._lock, self._errors("read"):
            for start in range(0, len(keys), 500):
                chunk = keys[start:start + 500]
                marks = ",".join("?" * len(chunk))
                cursor = self._conn.execute(
                    f"SELECT {', '.join(COLUMNS)} FROM responses WHERE key IN ({marks})", chunk)
                for row in cursor:
                    out[row[0]] = dict(zip(COLUMNS, row, strict=True))
        return out

    def put(self, record: Mapping[str, Any]) -> None:
        """Insert one response and commit it (a key already present is kept)."""
        row = {c: _storable(record.get(c)) for c in COLUMNS}
        if row["created"] is None:
            row["created"] = time.time()
        with self._lock:
            try:
                self._conn.execute(
                    f"INSERT OR IGNORE INTO responses ({', '.join(COLUMNS)}) "
                    f"VALUES ({', '.join('?' * len(COLUMNS))})", [row[c] for c in COLUMNS])
            except sqlite3.Error as exc:
                where = ":memory:" if self.path is None else str(self.path)
                raise OSError(f"Cannot write to the response cache {where}: {exc}.") from None

    @contextlib.contextmanager
    def _errors(self, what: str) -> Iterator[None]:
        try:
            yield
        except sqlite3.Error as exc:
            where = ":memory:" if self.path is None else str(self.path)
            raise ValueError(f"Cannot {what} the response cache {where}: {exc}.") from None

    def __len__(self) -> int:
        with self._lock, self._errors("read"):
            return int(self._conn.execute("SELECT COUNT(*) FROM responses").fetchone()[0])

    def close(self) -> None:
        """Close the connection."""
        with self._lock:
            self._conn.close()
