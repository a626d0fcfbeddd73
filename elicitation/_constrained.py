"""The constrained reply formats an :class:`~elicitation.OpenAIClient` can send: a
llama.cpp GBNF grammar of the answer lines (``constrained="grammar"``) and an OpenAI
JSON schema (``constrained="json_schema"``)."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

__all__ = ["REASONING_LINE", "REASONING_LINES", "reply_grammar", "reply_json_schema"]

#: Room a grammar leaves for reasoning before the answer lines: at most this many
#: lines of free text, each at most REASONING_LINE characters (about 300 tokens in all).
REASONING_LINES = 6
REASONING_LINE = 200


def reply_grammar(kind: str, labels: Sequence[str], reasoning: bool = False) -> str:
    """A llama.cpp GBNF grammar for the reply format.

    With ``reasoning`` (the prompt asks the model to reason first), a bounded
    free-text preamble (1 to :data:`REASONING_LINES` lines of at most
    :data:`REASONING_LINE` characters, each followed by one or two newlines) comes
    before the answer lines, which end the reply; otherwise the answer lines are the
    whole reply.
    """
    if kind == "decision":
        answer = ('"' + labels[0] + ': " yn "\\n' + labels[1] + ': " yn')
        rules = 'yn ::= "Yes" | "No"\n'
    else:
        answer = ' "\\n" '.join(f'"{label}: " num' for label in labels)
        rules = ('num ::= "0" | "1" | "1.0" | "0." [0-9] | "0." [0-9] [0-9] '
                 '| "0." [0-9] [0-9] [0-9]\n')
    if not reasoning:
        return "root ::= " + answer + "\n" + rules
    return ("root ::= reasoning answer\n"
            f"answer ::= {answer}\n"
            f"reasoning ::= (line \"\\n\"{{1,2}}){{1,{REASONING_LINES}}}\n"
            f"line ::= [^\\n]{{1,{REASONING_LINE}}}\n" + rules)


def reply_json_schema(kind: str, labels: Sequence[str]) -> dict[str, Any]:
    """The ``response_format`` of a JSON-schema reply: one object holding every label's
    value (a probability in [0, 1], or Yes/No for a decision) and nothing else."""
    if kind == "decision":
        props: dict[str, Any] = {label: {"type": "string", "enum": ["Yes", "No"]}
                                 for label in labels}
        required = list(labels)
    else:
        props = {label: {"type": "number", "minimum": 0, "maximum": 1} for label in labels}
        required = list(labels)
    return {"type": "json_schema", "json_schema": {
        "name": "answer", "strict": True,
        "schema": {"type": "object", "properties": props, "required": required,
                   "additionalProperties": False}}}
