"""Elicitation of beliefs and actions from models (templates, parsing, clients, runner).

Arrives with the elicitation issue; HTTP clients are imported inside the
functions that need them.
"""

from __future__ import annotations

__all__: list[str] = []
