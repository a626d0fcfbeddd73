"""Parsing model replies into probabilities and actions, never guessing silently.

Every parse returns a :class:`Parsed` value: either the values and the rule
that read them (``method``), or a failure ``reason`` (a short code) with a
human ``detail``. The raw text always travels with it. The parsers never
raise on any text.
"""

from __future__ import annotations

import json
import math
import re
import unicodedata
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from types import MappingProxyType
from typing import Any

from coherence._parameters import check_float
from coherence._validation import DECIMAL_SLACK
from coherence._validation import param_error

from ._parsing_patterns import BEFORE_SEP
from ._parsing_patterns import BOUND_BEFORE
from ._parsing_patterns import COUNTED
from ._parsing_patterns import DECORATION
from ._parsing_patterns import DIGITS_RE
from ._parsing_patterns import HEDGED
from ._parsing_patterns import HS
from ._parsing_patterns import MINUS_RE
from ._parsing_patterns import NEGATED
from ._parsing_patterns import NOT_PLAIN_AFTER
from ._parsing_patterns import NUM
from ._parsing_patterns import NUMBER_LINE
from ._parsing_patterns import OPEN_MD
from ._parsing_patterns import OTHER_OUTCOME
from ._parsing_patterns import QUALIFIED_AFTER
from ._parsing_patterns import REASONING_TAGS
from ._parsing_patterns import SUPER_SUB_DIGITS
from ._parsing_patterns import SUPER_SUB_SPLIT
from ._parsing_patterns import UNIT_NEXT_LINE
from ._parsing_patterns import in_longer
from ._parsing_patterns import label_matches
from ._parsing_patterns import label_pattern
from ._parsing_patterns import label_start
from ._parsing_patterns import line_start_matches
from ._parsing_patterns import misplaced
from ._parsing_patterns import named_event
from ._parsing_patterns import revision
from ._parsing_patterns import third_pattern
from ._parsing_patterns import to_value
from ._parsing_patterns import unknown_label
from ._parsing_patterns import valued_pattern
from ._parsing_patterns import words_pattern

__all__ = [
    "FAILURE_REASONS",
    "Parsed",
    "alone_after",
    "checked_labels",
    "fail",
    "json_object",
    "json_twice",
    "parse_probabilities",
    "reply_body",
    "reply_lines",
    "rest_of_value",
]

_EMPTY: Mapping[str, Any] = MappingProxyType({})

#: The failure codes a parse can return.
FAILURE_REASONS: tuple[str, ...] = (
    "empty",               # no text at all
    "no_probability",      # no usable number / answer found
    "missing_label",       # some labels have no value
    "duplicate_label",     # a label given twice with different values
    "ambiguous",           # several unlabelled numbers, or conflicting answers
    "unsupported_format",  # a value that is not a plain decimal or percentage (0,3; 1/3;
                           # 0.6-0.8; 0.3+0.4; 3:1; 1 in 3; two numbers for one label)
    "unclosed_reasoning",  # a <think> block that never ends: the answer may be a draft
    "truncated",           # the server cut the reply (its length limit, its content filter)
    "out_of_range",        # a value outside [0, 1] (after reading a % sign)
    "bad_sum",             # the probabilities do not sum to 1 within the tolerance
    "invalid",             # anything else (reported with detail)
)

@dataclass(frozen=True, slots=True)
class Parsed:
    """The outcome of parsing one reply.

    Attributes
    ----------
    ok : bool
        Whether values were read.
    values : Mapping
        For probabilities: label -> normalised probability (in the asked
        order); for decisions: ``{'action': 'yes'|'no'|'defer', 'decide':
        'yes'|'no', 'answer': 'yes'|'no'|None}``. Empty on failure.
    raw_values : Mapping
        The probabilities as read, before normalisation (also on a
        ``bad_sum`` failure, so incoherent replies can still be studied).
    method : str
        The rule that read them: ``'strict'``, ``'json'``, ``'tolerant'``,
        ``'yes_only'``, ``'lone_number'``; ``''`` on failure.
    reason : str
        A failure code from :data:`FAILURE_REASONS` (``''`` when ok).
    detail : str
        A sentence explaining the failure.
    text : str
        The raw reply.
    """

    ok: bool
    values: Mapping[str, Any] = field(default_factory=lambda: _EMPTY)
    raw_values: Mapping[str, float] = field(default_factory=lambda: _EMPTY)
    method: str = ""
    reason: str = ""
    detail: str = ""
    text: str = ""


def fail(text: str, reason: str, detail: str,
          raw: Mapping[str, float] | None = None) -> Parsed:
    return Parsed(ok=False, raw_values=MappingProxyType(dict(raw or {})), reason=reason,
                  detail=detail, text=text)


def checked_labels(labels: Any, owner: str, count: int | None = None) -> tuple[str, ...]:
    """The labels as a tuple: at least two (``count`` when given) non-empty str labels,
    distinct in any case. Labels equal but for case were both read from one number
    (``("Yes", "yes")`` read ``Yes: 0.5`` as a whole distribution)."""
    rule = (f"{count} distinct" if count else "at least two distinct") + (" non-empty str "
                                                                          "labels (in any case)")
    if isinstance(labels, str) or not isinstance(labels, Sequence):
        raise TypeError(param_error("labels", owner, "a sequence of " + rule, labels))
    out = tuple(labels)
    if (len(out) < 2 or (count is not None and len(out) != count)
            or not all(isinstance(x, str) and x.strip() for x in out)
            or len({x.lower() for x in out}) != len(out)):
        raise ValueError(param_error("labels", owner, rule, labels))
    return out


def strip_reasoning(text: str) -> tuple[str, str | None]:
    """Remove closed reasoning blocks; the second item names an unclosed one."""
    for tag in REASONING_TAGS:
        closed = re.compile(rf"<{tag}>.*?</{tag}>", re.IGNORECASE | re.DOTALL)
        text = closed.sub("\n", text)
        close = re.search(rf"</{tag}>", text, re.IGNORECASE)
        if close is not None:  # the opening tag was in the prompt (chat templates do this)
            text = text[close.end():]
        if re.search(rf"<{tag}>", text, re.IGNORECASE):
            return text, f"<{tag}>"
    return text, None


def parse_probabilities(text: Any, labels: Sequence[str] = ("No", "Yes"), *,
                        sum_tolerance: float = 0.02, final: bool = False) -> Parsed:
    """Read one probability per label from a reply.

    The rules run from strict to tolerant; a reply that could be read two ways fails
    with its reason rather than being guessed, and numbers that do not sum to one are
    divided by their sum, the numbers as written kept beside them.

    Parameters
    ----------
    text : str
        The model's reply (anything else is a failure, never an exception).
    labels : sequence of str
        The labels asked for, in the asked order (``('No', 'Yes')``): at
        least two, distinct in any case (``('Yes', 'yes')`` is a
        ``ValueError``: one number would be read for both).
    sum_tolerance : float in [0, 1)
        Accept probabilities whose sum is within this distance of 1, and
        divide them by their sum; otherwise fail with reason ``'bad_sum'``.
    final : bool
        The reply may hold written reasoning, and the answer is the block of
        label lines that ends it (templates with ``reasoning=True``): only
        the text from the last line that starts with the first label and its
        separator (``No:``, ``No =``, ``No 0.3``, ``No`` alone) is read; a
        line of prose that starts with the label's word (``No wait, ...``)
        does not start the block. A reply that is one JSON object
        (``constrained='json_schema'``) is read by the ``json`` rule.

    Returns
    -------
    Parsed
        ``ok`` and, when it is True, ``values``: label -> probability divided by the sum
        (in the order of ``labels``); ``raw_values`` as read; on failure ``reason`` and
        ``detail`` say why.

    See Also
    --------
    parse_decision : read an action from a reply.
    token_belief : a belief from token log-probabilities instead of the text.

    Notes
    -----
    Closed reasoning blocks (``<think>...</think>``, ``<thinking>``,
    ``<reasoning>``) are removed first; a block that is opened and never
    closed fails with ``unclosed_reasoning`` (a number inside may be a
    draft). Then the rules, tried in order (the first that applies decides):

    1. ``strict``: the non-empty lines are exactly ``Label: number``, one per
       label, in the asked order, numbers in [0, 1] written as decimals.
    2. ``json``: a JSON object keyed by the labels (constrained output). An
       object keyed by some of the labels that gives numbers to other keys
       as well (``{"Yes": 0.5, "No": 0.5, "Maybe": 0.2}``, a number as text
       or inside a list or object included) is ``ambiguous``: the labels'
       values are not the reply's whole distribution. Other keys holding
       text (``"reasoning": "..."``) are allowed.
    3. ``tolerant``: each label is found anywhere in the text, in any case
       or order, followed by ``:``, ``=``, `` - `` or a space and a plain
       number (``0.7``, ``.7``, ``70%``, ``70 percent``, ``70 per cent``,
       ``70 pct``) on the label's line, prose and markdown around it
       allowed, and an echoed scale or option list in brackets between the
       label and its separator (``Yes (0-1): 0.7``) skipped. A label that
       ends its line takes the next line only when that line is the value
       alone (``Yes:\\n0.7``); anything else there (a list ``1. Older
       age``) is ``ambiguous``, and so is a negated label (``not a yes:
       0.3``, ``P(¬yes)``, ``!yes``, ``I would not say "Yes": 0.7``: the negation
       up to one word before it). A label given two different values is
       ``duplicate_label``.
       When the rest of the line after a label's number (up to the next
       label followed by a separator and a number: the word "no" alone is
       not the label No) holds another digit, odds in words or another
       unit, or the next line starts with a unit, the number is not plain
       (``0,3``, ``1/3``, ``0.6-0.8``, ``0.3+0.4``, ``3:1``, ``1 in 3``,
       ``1 in a hundred``, ``0.7 (70%)``, ``0.3... no, 0.4``, ``5‰``,
       ``70\\n%``, ``0.7¹``) and the reply fails with ``unsupported_format``: such
       replies are never read. So does a value that the rest of its line
       bounds or takes back (``0.7+``, ``0.7 at most``, ``0.7 or lower``,
       ``0.7 (upper bound)``, ``0.7 - no, wait``, ``0.7 - that's backwards``)
       and one followed by another number alone on a line (``Yes: 0.7\\n0.8``).
       A number given to a third answer (``Maybe: 0.1``, ``Unsure: 10%``,
       ``Neither: 0``, ``Other: 0.1``) is ``ambiguous``, as in a JSON object, and
       so is a line after the answer that takes it back (``Wait, ...``, ``Oops, I
       swapped them``, ``On reflection, ...``) or gives a label another number
       (``I'd put Yes at 0.6``). A
       label that starts with a digit is never found inside a number (the
       ``0`` of ``0.6-0.7``).
    4. ``yes_only`` (binary ``No``/``Yes`` labels only): only ``Yes: p`` is
       given; ``No`` is taken as ``1 - p``. A ``No:`` whose value was not read
       (``No: about 0.5``) is ``unsupported_format`` (``missing_label`` when
       nothing follows it): ``1 - p`` is not what the model stated.
    5. ``lone_number`` (binary labels only): no label word at all and
       exactly one plain number in the text, read as P(Yes). A lone number
       next to a label word (``No, 0.3``) could be either label's and is
       ``ambiguous``, and so is one after a word naming the first label
       joined by ``_`` (``p_no: 0.3``), one in a text that says yes or no
       informally (``Nope, 0.3``, ``Yeah``, ``Yep``, ``Nah``, ``Noo``); a word
       that merely starts like a label (``Yesterday 0.3``, ``0.3 now``) is no
       label word and leaves the number read; so is one in a text with a negation
       or a refusal (``not``, ``n't``, ``never``, ``cannot``,
       ``impossible``, ``unable``, ``without``, ``nobody``, ``nothing``,
       ``unsure``, ...: "80% sure it will not happen", "Nobody knows, 0.3"),
       and so is a whole number followed by a word it counts
       ("With only 1 data point, I'd guess so"), and one beside a word for
       the other outcome (``P(false) = 0.3``, "Likelihood of the opposite:
       0.3", "0.7 (for the negation)"), and one given to an event the reply names
       ("Probability it fails: 0.2", "the chance of failure is 20%": the parser
       does not know the question). A lone number that is a bound
       (``<1%``, ``at least 70%``, ``more than 0.7``, ``0.7 or more``) is
       ``unsupported_format``.

    A number above 1 without a ``%`` sign is ``out_of_range`` (it is not
    re-read as a percentage), and so is a negative one, whatever its minus
    sign (``-``, ``−`` and the other dashes before a digit). The method is
    recorded with every value, so a study can report how many answers each
    rule read.

    Examples
    --------
    >>> from elicitation import parse_probabilities
    >>> parse_probabilities("No: 0.3\\nYes: 0.7").values["Yes"]
    0.7
    >>> p = parse_probabilities("I'd say yes: 70% and no: 30%.")
    >>> p.method, p.values["Yes"]
    ('tolerant', 0.7)
    >>> parse_probabilities("No: 0.5\\nYes: 0.7").reason
    'bad_sum'
    >>> parse_probabilities("No: 0,7\\nYes: 0,3").reason
    'unsupported_format'
    """
    tol = check_float(sum_tolerance, "sum_tolerance", "parse_probabilities", low=0.0, high=1.0,
                      high_open=True)
    labels = checked_labels(labels, "parse_probabilities")
    try:
        return _parse_probabilities(text, labels, tol, bool(final))
    except Exception as exc:  # the parser must never raise on a reply
        return fail(text if isinstance(text, str) else repr(text), "invalid",
                     f"unexpected {type(exc).__name__}: {exc}")


def _finish(text: str, labels: tuple[str, ...], raw: dict[str, float], method: str,
            tol: float) -> Parsed:
    for label in labels:
        value = raw[label]
        if not math.isfinite(value) or value < 0.0 or value > 1.0:
            return fail(text, "out_of_range",
                         f"the value {value!r} for {label!r} is not a probability in [0, 1]",
                         raw)
    total = math.fsum(raw.values())
    # decided on the stated numbers: 0.3 + 0.72 is 1.0200000000000000178 in floating point
    if abs(total - 1.0) > tol + DECIMAL_SLACK:
        return fail(text, "bad_sum",
                     f"the probabilities sum to {total:.6g}, not to 1 within {tol:g}", raw)
    ordered = {label: raw[label] / total for label in labels}
    return Parsed(ok=True, values=MappingProxyType(ordered),
                  raw_values=MappingProxyType(dict(raw)), method=method, text=text)


def _not_text(text: Any) -> Parsed | None:
    """The failure for a reply that is not text or is empty; None for usable text."""
    if not isinstance(text, str):
        return fail(repr(text), "invalid", f"the reply is a {type(text).__name__}, not text")
    if not text.strip():
        return fail(text, "empty", "the reply is empty")
    return None


def reply_lines(text: str) -> list[str]:
    """The reply's non-blank lines, stripped."""
    return [ln.strip() for ln in text.strip().splitlines() if ln.strip()]


class _Twice(tuple[Any, ...]):
    """The values of a JSON key given twice (in any case) with different values."""

    __slots__ = ()


def _json_pairs(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object with lower-cased keys; a key given twice with different values (json
    keeps the last without a word) maps to its values as a :class:`_Twice`."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        k = str(key).lower()
        if k not in out:
            out[k] = value
        elif isinstance(out[k], _Twice):
            out[k] = _Twice((*out[k], value))
        elif out[k] != value or isinstance(out[k], bool) != isinstance(value, bool):
            out[k] = _Twice((out[k], value))
    return out


def json_object(text: str) -> dict[str, Any] | None:
    """The reply as a JSON object (code fences allowed) with lower-cased keys, or None."""
    stripped = text.strip().strip("`").removeprefix("json").strip()
    if not stripped.startswith("{"):
        return None
    try:
        obj = json.loads(stripped, object_pairs_hook=_json_pairs)
    except ValueError:
        return None
    if not isinstance(obj, dict):
        return None
    return obj


def json_twice(text: str, obj: dict[str, Any], labels: tuple[str, ...]) -> Parsed | None:
    """The ``duplicate_label`` failure of a JSON reply giving a label two values, or None."""
    for label in labels:
        v = obj.get(label.lower())
        if isinstance(v, _Twice):
            return fail(text, "duplicate_label", f"the JSON object gives {label!r} "
                         f"{len(v)} values ({', '.join(map(repr, v))})")
    return None


#: a JSON string that is a plain number or percentage ("0.2", "20%")
_NUMBER_TEXT = re.compile(r"\s*[-+]?(?:\d+(?:\.\d*)?|\.\d+)(?:[eE][-+]?\d+)?\s*%?\s*")


def _json_other_numbers(obj: dict[str, Any] | None, labels: tuple[str, ...]) -> list[str]:
    """The keys (with their values) of a JSON reply keyed by some of the labels that give
    numbers to other keys (``{"Yes": 0.5, "No": 0.5, "Maybe": 0.2}``: a third option, and
    P(Yes) = 0.5 is not what the reply states); empty when there are none, or when no
    label is a key (``{"probability": 0.7}`` is left to the other rules)."""
    if obj is None or not any(label.lower() in obj for label in labels):
        return []
    asked = {label.lower() for label in labels}
    return [f"{key!r}: {value!r}"[:60] for key, value in obj.items()
            if key not in asked and _holds_number(value)]


def _holds_number(value: Any) -> bool:
    """Whether a JSON value is a number, a number as text, or holds one at any depth."""
    if isinstance(value, dict | list | tuple):   # (a tuple: a key given twice)
        return any(_holds_number(v) for v in (value.values() if isinstance(value, dict)
                                              else value))
    if isinstance(value, str):
        return _NUMBER_TEXT.fullmatch(value) is not None
    return isinstance(value, int | float) and not isinstance(value, bool)


def rest_of_value(body: str, end: int, words: re.Pattern[str]) -> str:
    """The text after a value, up to the end of its line or the next label (``words``)."""
    line_end = body.find("\n", end)
    rest = body[end:] if line_end < 0 else body[end:line_end]
    nxt = words.search(rest)
    return rest if nxt is None else rest[:nxt.start()]


def _final_block(body: str, first_label: str) -> str | None:
    """From the last line that starts with the first label and its separator to the end
    (None: no such line). A line that starts with the label as a word ("No wait, Yes:
    0.8", "No further thoughts.") is prose, not the answer: taken as the block's start, it
    hid the answer lines above it (read as ``yes_only``, or not at all)."""
    start = re.compile(r"^" + OPEN_MD + re.escape(first_label) + r"(?![\w])" + BEFORE_SEP
                       + r"(?:" + HS + r"*[:=]|" + HS + r"+-" + HS + r"|" + HS + r"*$|" + HS
                       + r"+(?=[-+]?\.?\d))", re.IGNORECASE | re.MULTILINE)
    plain = first_label and not DECORATION.match(first_label)
    found = list(line_start_matches(start, body) if plain else start.finditer(body))
    return None if not found else body[found[-1].start():]


def reply_body(text: Any, draft: str, labels: tuple[str, ...]) -> tuple[str, Parsed | None]:
    """The reply outside its reasoning blocks, or the failure of a reply that is not
    text or leaves a reasoning block open (``draft`` says why that fails)."""
    bad = _not_text(text)
    if bad is not None:
        return "", bad
    body, unclosed = strip_reasoning(text)
    if all(unicodedata.normalize("NFKC", label) == label for label in labels):
        # full-width letters are the labels' (a full-width "Ｎｏ: 0.3" was no label word,
        # and its number was read as P(Yes)); full-width digits were read already
        # superscript and subscript digits are kept: NFKC made "0.7¹" (a footnote) 0.71
        body = "".join(part if SUPER_SUB_DIGITS.fullmatch(part)
                       else unicodedata.normalize("NFKC", part)
                       for part in SUPER_SUB_SPLIT.split(body))
    body = MINUS_RE.sub("-", body)  # "−0.2" is negative, never 0.2
    if unclosed is not None:
        return body, fail(text, "unclosed_reasoning",
                           f"the reply opens {unclosed} and never closes it: {draft}")
    return body, None


def _parse_probabilities(text: Any, labels: tuple[str, ...], tol: float,
                         final: bool) -> Parsed:
    body, bad = reply_body(text, "a number inside may be a draft, not the answer", labels)
    if bad is not None:
        return bad
    if final and json_object(body) is None:
        # a reply that is one JSON object (constrained output: a JSON schema leaves no
        # room for reasoning) has no answer lines to find: rule 2 reads it
        block = _final_block(body, labels[0])
        if block is None:
            return fail(text, "missing_label", "the reply does not end with the answer "
                         f"lines (no line starts with {labels[0]!r})")
        body = block
    if not body.strip():
        return fail(text, "empty", "the reply holds nothing outside its reasoning block")

    # 1. strict
    parsed = _strict(text, body, labels, tol)
    if parsed is not None:
        return parsed

    # 2. json
    parsed = _from_json(text, body, labels, tol)
    if parsed is not None:
        return parsed

    # 3. tolerant
    read = _tolerant(text, body, labels)
    if isinstance(read, Parsed):
        return read
    found, last = read
    third = _third_option(body, labels) if found else None
    if third is not None:
        return fail(text, "ambiguous", f"the reply gives a number to an answer other than the "
                     f"labels ({third[:60]!r}): the labels' values are not the reply's whole "
                     "distribution", found)
    if len(found) == len(labels):
        revised = revision(body, last, found)
        if revised is not None:
            return fail(text, "ambiguous", revised, found)
        return _finish(text, labels, found, "tolerant", tol)

    binary = [label.lower() for label in labels] == ["no", "yes"]
    # 4. yes only
    if binary and set(found) == {labels[1]}:
        return _yes_only(text, body, labels, found, last, tol)
    if found:
        missing = [label for label in labels if label not in found]
        return fail(text, "missing_label",
                     f"no value for {', '.join(map(repr, missing))}", found)

    # 5. a lone number
    return _unlabelled(text, body, labels, tol, binary=binary, final=final)


def _strict(text: Any, body: str, labels: tuple[str, ...], tol: float) -> Parsed | None:
    """Rule 1: one line per label in order, ``Label: p`` and nothing else."""
    lines = reply_lines(body)
    if len(lines) == len(labels):
        raw: dict[str, float] = {}
        for line, label in zip(lines, labels, strict=True):
            m = re.fullmatch(re.escape(label) + r":\s*(0(?:\.\d+)?|1(?:\.0+)?|\.\d+)", line)
            if m is None:
                break
            raw[label] = float(m.group(1))
        else:
            return _finish(text, labels, raw, "strict", tol)
    return None


def _from_json(text: Any, body: str, labels: tuple[str, ...],
               tol: float) -> Parsed | None:
    """Rule 2: one JSON object giving a number to each label (and to nothing else)."""
    lower = json_object(body)
    other = _json_other_numbers(lower, labels)
    if other:
        return fail(text, "ambiguous", f"the JSON object gives numbers to keys other than "
                     f"the labels ({', '.join(other)}): the labels' values are not the "
                     "reply's whole distribution")
    if lower is not None and all(label.lower() in lower for label in labels):
        twice = json_twice(text, lower, labels)
        if twice is not None:
            return twice
        raw: dict[str, float] = {}
        for label in labels:
            v = lower[label.lower()]
            if isinstance(v, bool) or not isinstance(v, int | float):
                return fail(text, "invalid", f"the JSON value for {label!r} is "
                             f"{v!r}, not a number")
            raw[label] = float(v)
        return _finish(text, labels, raw, "json", tol)
    return None


def _yes_only(text: Any, body: str, labels: tuple[str, ...], found: dict[str, float],
              last: int, tol: float) -> Parsed:
    """Rule 4: a binary reply that gives only Yes a value: No is 1 - p unless the reply
    names No without a plain number."""
    stated = _label_stated(body, labels[0])
    if stated is not None:
        # "No: about 0.5": the model gave No a value that was not read; 1 - p would
        # put a number in its mouth it did not say
        if stated[1]:
            return fail(text, "unsupported_format", f"the value of {labels[0]!r} is not "
                         f"one plain number: {stated[0][:60]!r}", found)
        return fail(text, "missing_label", f"the label {labels[0]!r} is given no value: "
                     f"{stated[0][:60]!r}", found)
    p = found[labels[1]]
    if not math.isfinite(p) or not 0.0 <= p <= 1.0:
        return fail(text, "out_of_range", f"the value {p!r} for {labels[1]!r} is not a "
                     "probability in [0, 1]", found)
    implied = {labels[0]: round(1.0 - p, 12), labels[1]: p}
    revised = revision(body, last, implied)
    if revised is not None:
        return fail(text, "ambiguous", revised, found)
    return _finish(text, labels, implied, "yes_only", tol)


def _unlabelled(text: Any, body: str, labels: tuple[str, ...], tol: float, *,
                binary: bool, final: bool) -> Parsed:
    """Rule 5: no labelled value; a lone number is read for a binary question."""
    digits = DIGITS_RE.findall(body)
    if len(digits) > 1:
        return fail(text, "ambiguous",
                     f"no labelled probabilities and {len(digits)} unlabelled numbers")
    if not digits:
        return fail(text, "no_probability", "no probability found in the reply")
    if not binary or final:
        return fail(text, "no_probability", "no labelled probabilities in the reply")
    return _lone_number(text, body, labels, tol)


def _not_plain(rest: str, body: str, end: int) -> bool:
    """Whether the text after a number (``rest``, from ``end`` in ``body``) says it is not
    one plain number: another digit (``0,3``, ``1/3``, ``0.6-0.8``, ``1 in 3``), a unit or
    odds in words, or a unit alone on the next line."""
    if any(ch.isdigit() for ch in rest) or NOT_PLAIN_AFTER.match(rest) is not None:
        return True
    line_end = body.find("\n", end)
    return line_end >= 0 and UNIT_NEXT_LINE.match(body, line_end) is not None


def alone_after(body: str, end: int, alone: re.Pattern[str]) -> list[str]:
    """The lines after the one that holds position ``end`` that ``alone`` matches whole
    (blank lines skipped), up to the first line it does not match: values or answers
    written alone under a label's own (``Yes: 0.7`` then ``0.8``; ``Decision:`` then
    ``Yes`` then ``No``)."""
    out = []
    for line in body[end:].split("\n")[1:]:
        if not line.strip():
            continue
        if alone.fullmatch(line) is None:
            break
        out.append(line.strip())
    return out


def _third_option(body: str, labels: tuple[str, ...]) -> str | None:
    """The line where a third answer that is none of the labels (``Maybe: 0.1``) is given a
    number, or None."""
    m = third_pattern(labels).search(body)
    if m is None:
        return None
    line_start = body.rfind("\n", 0, m.start()) + 1
    line_end = body.find("\n", m.end())
    return body[line_start:line_end if line_end >= 0 else len(body)].strip()


def _tolerant(text: str, body: str, labels: tuple[str, ...]
              ) -> tuple[dict[str, float], int] | Parsed:
    """The labelled values found anywhere in the reply and where the last one ends, or the
    failure that stops it."""
    nxt = valued_pattern(labels)
    found: dict[str, float] = {}
    last = 0
    for label in labels:
        values = set()
        for m in label_matches(label_pattern(label), label, body):
            if in_longer(body, m, labels):
                continue
            why = misplaced(body, m, "num")
            if why is not None:
                return fail(text, "ambiguous", why)
            rest = rest_of_value(body, m.end(), nxt)
            shown = (body[m.start("label"):m.end()] + rest).strip()
            if _not_plain(rest, body, m.end()):
                return fail(text, "unsupported_format",
                             f"the value of {label!r} is not one plain number: {shown[:60]!r}")
            qualified = QUALIFIED_AFTER.search(rest)
            if qualified is not None:
                return fail(text, "unsupported_format", f"the value of {label!r} is bounded "
                             f"or taken back ({qualified.group(0).strip()!r}): {shown[:60]!r}")
            stray = alone_after(body, m.end(), NUMBER_LINE)
            if stray:
                return fail(text, "unsupported_format", f"the value of {label!r} is followed "
                             f"by another number alone on a line ({stray[0][:20]!r}): two "
                             f"numbers for one label: {shown[:40]!r}")
            values.add(to_value(m))
            last = max(last, m.end())
        if len(values) > 1:
            shown = ", ".join(f"{v:g}" for v in sorted(values))
            return fail(text, "duplicate_label",
                         f"the label {label!r} is given several values ({shown})")
        if values:
            found[label] = values.pop()
    return found, last


def _label_stated(body: str, label: str) -> tuple[str, bool] | None:
    """The line where ``label`` is followed by ``:`` or ``=`` (a value stated for it, read or
    not) and whether anything follows the separator on that line; None when there is none."""
    pattern = re.compile(label_start(label) + OPEN_MD + r"(?P<label>" + re.escape(label)
                         + r")" + BEFORE_SEP + HS + r"*[:=]", re.IGNORECASE)
    for m in label_matches(pattern, label, body):
        line_start = body.rfind("\n", 0, m.start("label")) + 1
        if NEGATED.search(body[line_start:m.start("label")]):
            continue
        line_end = body.find("\n", m.end())
        rest = body[m.end():] if line_end < 0 else body[m.end():line_end]
        shown = body[line_start:m.end()] + rest
        return shown.strip(), bool(rest.strip(" \t*_`\"'"))
    return None


def _other_label(prefix: str, labels: tuple[str, ...]) -> str | None:
    """The label other than the last whose words are in the text before a lone number on
    its line, joined to others by ``_`` or digits (``p_no: 0.3``, ``no_prob = 0.3``): the
    label-word search takes ``_`` for a letter and misses it, and the number was read as
    P(Yes) = 0.3."""
    words = " " + " ".join(re.findall(r"[^\W\d_]+", prefix.lower())) + " "
    for label in labels[:-1]:
        own = " ".join(re.findall(r"[^\W\d_]+", label.lower()))
        if own and f" {own} " in words:
            return label
    return None


#: informal spellings of Yes and No ("Yeah", "Yep", "Yup", "Nope", "Nah", "Noo"): a lone
#: number in a reply that says one is no more P(Yes) than one beside "Yes? No, 0.3"
_YES_NO_LIKE = re.compile(r"(?<![\w])(?:y+e+s+|y+e+a+h*|y+e+p+|y+u+p+|n+o+|n+o+p+e*|n+a+h+|"
                          r"n+a+w+|n+a+y+)(?![\w])", re.IGNORECASE)


def _label_like(body: str) -> str | None:
    """Why a reply's lone number may be a label's value, or None: the reply says Yes or
    No informally ("Nope, 0.3", "Yeah I'd say 0.3")."""
    informal = _YES_NO_LIKE.search(body)
    if informal is None:
        return None
    return (f"the reply says {informal.group(0)!r}, an informal yes or no: its one number "
            "could be either label's value")


def _lone_number(text: str, body: str, labels: tuple[str, ...], tol: float) -> Parsed:
    """The one number of a reply with no label word, read as P(Yes), when nothing in the
    text says it could be about something else."""
    if words_pattern(labels).search(body):
        return fail(text, "ambiguous", "one number next to a label word: it could be either "
                     "label's value")
    hedge = HEDGED.search(body)
    if hedge is not None:
        return fail(text, "ambiguous", f"the reply says {hedge.group(0)!r}: its one number "
                     "may not be the probability of yes")
    m = re.search(r"(?<![\w.])" + NUM, body)
    if m is None or _not_plain(body[m.end():].split("\n", 1)[0], body, m.end()):
        return fail(text, "unsupported_format", "the one number in the reply is not a plain "
                     "decimal or percentage")
    bound = (BOUND_BEFORE.search(body, 0, m.start())
             or QUALIFIED_AFTER.search(body[m.end():].split("\n", 1)[0]))
    if bound is not None:
        return fail(text, "unsupported_format", f"the one number in the reply is bounded or "
                     f"taken back ({bound.group(0).strip()!r}), not one value")
    prefix = body[body.rfind("\n", 0, m.start()) + 1:m.start()]
    other = _other_label(prefix, labels)
    if other is not None:
        return fail(text, "ambiguous", f"the lone number follows {prefix.strip()[-40:]!r}, "
                     f"which names the label {other!r}: it may be that label's value")
    named = unknown_label(prefix)
    if named is not None:
        return fail(text, "ambiguous", f"the lone number is labelled {named!r}, not with a "
                     "label of the prompt: it may be another label's value")
    like = _label_like(body)
    if like is not None:
        return fail(text, "ambiguous", like)
    outcome = OTHER_OUTCOME.search(body)
    if outcome is not None:
        return fail(text, "ambiguous", f"the reply says {outcome.group(0)!r}, a word for the "
                     "other outcome: its one number may be that outcome's probability")
    counted = COUNTED.match(body, m.end())
    if counted is not None and not m.group("unit") and re.fullmatch(r"[-+]?\d+",
                                                                     m.group("num")):
        return fail(text, "ambiguous", f"the lone number {m.group('num')!r} counts "
                     f"{counted.group('noun')!r}: it is not the probability of yes")
    event = named_event(prefix, labels[-1])
    if event is not None:
        return fail(text, "ambiguous", f"the lone number is given to {event!r}, an event "
                     "the reply names: it may not be the event the question asks about")
    p = to_value(m)
    if not math.isfinite(p) or not 0.0 <= p <= 1.0:
        return fail(text, "out_of_range",
                     f"the lone number {m.group(0).strip()!r} is not a "
                     "probability in [0, 1]", {labels[1]: p})
    return _finish(text, labels, {labels[0]: round(1.0 - p, 12), labels[1]: p},
                   "lone_number", tol)
