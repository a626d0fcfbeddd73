"""Credentials kept off disk: redacted from error texts, refused in recorded settings.

The response cache, ``result.raw`` and a study's ``raw.csv`` keep the text of every
failed call and the client's settings; neither may carry the key a client sends.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

__all__ = ["CREDENTIAL_KEYS", "SECRET_PATTERNS", "credential_keys", "redact"]

#: what a credential looks like in a text: its value after ``Bearer``, after a key or
#: authorization field name, or an OpenAI-style ``sk-...`` key
SECRET_PATTERNS = (
    re.compile(r"(?i)(bearer\s+)[^\s\"',;]+"),
    re.compile(r"(?i)((?:api[_-]?key|authorization|x-api-key)[\"']?\s*[:=]\s*[\"']?)"
               r"(?!bearer\b)[^\s\"',;]+"),
    re.compile(r"\bsk-[A-Za-z0-9_\-]{8,}"),
)


def redact(text: str, secret: str | None = None) -> str:
    """``text`` with credentials replaced by ``[redacted]``.

    The client's own key wherever it appears, and anything shaped like one:
    ``Bearer <token>``, ``api_key=<value>``, ``Authorization: <value>``,
    ``sk-...``. Applied to every server error body before it is stored or
    shown (a proxy that echoes the request's headers leaks nothing), and to the
    text of every failed call before the runner stores it.

    Examples
    --------
    >>> from elicitation._secrets import redact
    >>> redact('{"echo": "Authorization: Bearer abc123"}')
    '{"echo": "Authorization: Bearer [redacted]"}'
    """
    if secret:
        text = text.replace(secret, "[redacted]")
    for pattern in SECRET_PATTERNS:
        if pattern.groups:
            text = pattern.sub(lambda m: m.group(1) + "[redacted]", text)
        else:
            text = pattern.sub("[redacted]", text)
    return text


#: field names that hold a credential (lower case, ``-`` read as ``_``)
CREDENTIAL_KEYS = frozenset(("api_key", "apikey", "key", "token", "access_token",
                             "authorization", "password", "secret", "x_api_key",
                             "bearer", "auth", "client_secret", "secret_key"))


def credential_keys(value: Any, *, fields: bool = False) -> list[str]:
    """The mapping keys, at any depth of ``value``, named like a credential
    (:data:`CREDENTIAL_KEYS`, in any case). The keys of a JSON schema's ``properties``
    (``fields``) name the fields of the reply asked for, not a setting: a reply field
    ``token`` is no credential, and only what lies below them is looked at."""
    found: list[str] = []
    if isinstance(value, Mapping):
        for key, item in value.items():
            if not fields and isinstance(key, str) \
                    and key.lower().replace("-", "_") in CREDENTIAL_KEYS:
                found.append(key)
            found += credential_keys(item, fields=not fields and key == "properties")
    elif isinstance(value, list | tuple):
        for item in value:
            found += credential_keys(item)
    return found
