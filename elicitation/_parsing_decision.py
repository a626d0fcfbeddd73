"""Parsing a reply to a decision template: can the model decide, and what it would decide.

:func:`parse_decision` reads the two Yes/No answers of the decision paper's prompt (or
the toolkit's) into an action, ``yes``, ``no`` or ``defer``, with the rule that read them,
or fails with a reason; like :func:`~elicitation.parse_probabilities` beside it in
``_parsing``, it never guesses and never raises on any text.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

from ._parsing import Parsed
from ._parsing import alone_after
from ._parsing import checked_labels
from ._parsing import fail
from ._parsing import json_object
from ._parsing import json_twice
from ._parsing import reply_body
from ._parsing import reply_lines
from ._parsing import rest_of_value
from ._parsing_patterns import ANSWER_LINE
from ._parsing_patterns import ANSWER_WORDS
from ._parsing_patterns import LABELLED_ANSWER
from ._parsing_patterns import in_longer
from ._parsing_patterns import label_matches
from ._parsing_patterns import label_pattern
from ._parsing_patterns import line_start_matches
from ._parsing_patterns import misplaced
from ._parsing_patterns import revision
from ._parsing_patterns import words_pattern

__all__ = ["PAPER_DECISION_LABELS", "parse_decision"]

#: The decision labels of the decision paper's prompt (the default).
PAPER_DECISION_LABELS: tuple[str, str] = ("Can decide", "Decision")


def _answers_of(label: str, body: str, labels: tuple[str, ...]
                ) -> tuple[set[str], str | None, int]:
    """The Yes/No answers given to ``label``, why one is ambiguous (or None) and where the
    last one read ends. A label that ends the other one is not found inside it ("Decide"
    in "Can decide: No": the deferral's missing answer was read as No)."""
    found: set[str] = set()
    last = 0
    words = words_pattern(labels)
    for m in label_matches(label_pattern(label, r"(?P<answer>yes|no)(?![\w])"), label, body):
        if in_longer(body, m, labels):
            continue
        why = misplaced(body, m, "answer")
        if why is not None:
            return found, why, last
        rest = rest_of_value(body, m.end(), words)
        shown = (body[m.start("label"):m.end()] + rest).strip()
        if re.search(r"(?<![\w])(yes|no)(?![\w])", rest, re.IGNORECASE):
            return found, f"a label is followed by both Yes and No: {shown[:60]!r}", last
        answer = m.group("answer").lower()
        # the answer word of each line: "No." or "**No**" repeats "No"
        other = [a for a in alone_after(body, m.end(), ANSWER_LINE)
                 if _answer_word(a) != answer]
        if other:
            # "Decision:\nYes\nNo" was read as yes: two answers, one a line
            return found, (f"the answer of {label!r} is followed by the answer {other[0]!r} "
                           f"alone on a line: {shown[:40]!r}"), last
        found.add(answer)
        last = max(last, m.end())
    return found, None, last


def _answer_word(line: str) -> str:
    """The Yes or No of a line :data:`ANSWER_LINE` matches whole, lower-cased."""
    m = ANSWER_LINE.fullmatch(line)
    return "" if m is None else m.group(1).lower()


def _other_answer(body: str, labels: tuple[str, ...], answer: str | None) -> str | None:
    """A line that answers Yes or No under a label of its own that says it is the answer
    (``Final answer: No``), and differs from the forced ``answer`` read (or there is none:
    it may be that answer, or the other question's); None when there is no such line."""
    words = words_pattern(labels)
    for m in line_start_matches(LABELLED_ANSWER, body):
        name = m.group("name")
        if words.search(name) or not ANSWER_WORDS.intersection(
                re.findall(r"[^\W\d_]+", name.lower())):
            continue
        if answer is None or m.group("answer").lower() != answer:
            return m.group(0).strip()
    return None


def parse_decision(text: Any, labels: Sequence[str] = PAPER_DECISION_LABELS) -> Parsed:
    """Read an action (yes / no / defer) from a reply to a decision template.

    Like :func:`parse_probabilities`, it tries strict rules first and tolerant ones
    after, and never guesses: a reply that could be read two ways fails with its reason
    rather than become an action.

    Parameters
    ----------
    text : str
        The reply.
    labels : pair of str
        The label of "can you make a decision (Yes/No)" and of "if you had to
        decide (Yes/No)": the paper's ``('Can decide', 'Decision')`` by
        default; the toolkit's own template uses ``('Decide', 'Answer')``.
        Two labels, distinct in any case (else a ``ValueError``).

    Returns
    -------
    Parsed
        ``values``: ``action`` (``'defer'`` when the model cannot decide,
        else its answer), ``decide`` and ``answer`` (the forced choice,
        ``None`` when not given).

    See Also
    --------
    parse_probabilities : read probabilities from a reply.

    Notes
    -----
    Closed reasoning blocks are removed first (an unclosed one fails with
    ``unclosed_reasoning``). Rules: ``strict`` (exactly the two lines in
    order), ``json`` (an object with the two labels), ``tolerant`` (each
    label anywhere, any case, an echoed option list in brackets skipped:
    ``Decide (Yes/No): No``; the answer on the label's line, or alone on the
    next). "Decide: No" without an answer is a deferral; "Decide: Yes"
    without an answer is ``missing_label``. A label followed by both words
    (``Decision: Yes or No``, an echo of the instructions) is ``ambiguous``,
    and so are a negated label ("I would not decide yes") and an unlabelled
    "Yes" or "No" (it could answer either question): never guessed. A
    label's answer followed by the other answer alone on the next lines
    (``Decision:\\nYes\\nNo``) is ``ambiguous`` (the same answer repeated is
    read), and so is a line that answers under a label of its own saying it
    is the answer (``Final answer: No``, ``Verdict: No``) when it differs from
    the forced answer or there is none, and a line after the answer that takes
    it back ("Wait, I meant No.").

    Examples
    --------
    >>> from elicitation import parse_decision
    >>> parse_decision("Can decide: No\\nDecision: Yes").values["action"]
    'defer'
    >>> parse_decision("Decide: Yes\\nAnswer: No", ("Decide", "Answer")).values["action"]
    'no'
    >>> parse_decision("Can decide (Yes/No): No\\nDecision: Yes").values["decide"]
    'no'
    """
    labels = checked_labels(labels, "parse_decision", 2)
    try:
        return _parse_decision(text, labels)
    except Exception as exc:  # never raise on a reply
        return fail(text if isinstance(text, str) else repr(text), "invalid",
                     f"unexpected {type(exc).__name__}: {exc}")


def _decision(text: str, decide: str, answer: str | None, method: str) -> Parsed:
    action = "defer" if decide == "no" else answer
    if action is None:
        return fail(text, "missing_label", "the model can decide but gives no answer")
    return Parsed(ok=True, values=MappingProxyType({"action": action, "decide": decide,
                                                    "answer": answer}),
                  method=method, text=text)


def _decision_from_json(text: Any, body: str, labels: tuple[str, ...]) -> Parsed | None:
    """The decision of a reply that is one JSON object with Yes or No under the decision
    label (and, if given, under the answer label), or None."""
    decide_label, answer_label = labels
    lower = json_object(body)
    if lower is not None and decide_label.lower() in lower:
        twice = json_twice(text, lower, (decide_label, answer_label))
        if twice is not None:
            return twice
        d = lower[decide_label.lower()]
        a = lower.get(answer_label.lower())
        if isinstance(d, str) and d.strip().lower() in ("yes", "no"):
            ans = None
            if a is not None:
                if not isinstance(a, str) or a.strip().lower() not in ("yes", "no"):
                    return fail(text, "invalid", f"the JSON answer is {a!r}, not Yes or No")
                ans = a.strip().lower()
            return _decision(text, d.strip().lower(), ans, "json")
    return None


def _parse_decision(text: Any, labels: tuple[str, ...]) -> Parsed:
    body, bad = reply_body(text, "an answer inside may be a draft", labels)
    if bad is not None:
        return bad
    if not body.strip():
        return fail(text, "empty", "the reply holds nothing outside its reasoning block")
    decide_label, answer_label = labels
    lines = reply_lines(body)
    if len(lines) == 2:
        m1 = re.fullmatch(re.escape(decide_label) + r":\s*(Yes|No)", lines[0])
        m2 = re.fullmatch(re.escape(answer_label) + r":\s*(Yes|No)", lines[1])
        if m1 and m2:
            return _decision(text, m1.group(1).lower(), m2.group(1).lower(), "strict")
    parsed = _decision_from_json(text, body, labels)
    if parsed is not None:
        return parsed
    decides, echo_d, last_d = _answers_of(decide_label, body, labels)
    answers, echo_a, last_a = _answers_of(answer_label, body, labels)
    echo = echo_d or echo_a
    if echo:
        return fail(text, "ambiguous", echo)
    revised = revision(body, max(last_d, last_a)) if decides else None
    if revised is not None:
        return fail(text, "ambiguous", revised)
    if len(decides) > 1 or len(answers) > 1:
        return fail(text, "duplicate_label", "a label is given both Yes and No")
    if decides:
        answer = answers.pop() if answers else None
        other = _other_answer(body, labels, answer)
        if other is not None:
            return fail(text, "ambiguous", f"a line answers under a label of its own "
                         f"({other[:60]!r}), and it is not the decision's answer: it could "
                         "answer either question")
        return _decision(text, decides.pop(), answer, "tolerant")
    if answers:
        return fail(text, "missing_label", f"no value for {decide_label!r}")
    found = {w.lower() for w in re.findall(r"(?<![\w])(yes|no)(?![\w])", body, re.IGNORECASE)}
    if found:
        # "No" alone may answer "can you decide?" (defer) or "what would you decide?"
        # (no): reading it either way would be a guess
        return fail(text, "ambiguous", "a Yes/No without its label does not say which of "
                     "the two questions it answers")
    return fail(text, "no_probability", "no Yes/No answer found in the reply")
