"""The patterns the reply parsers read with (:mod:`elicitation._parsing`): a plain number
and its unit, a label and its separator, and the words that stop a value from being read
(a negation, a bound, a retraction, a third answer, a word for the other outcome)."""

from __future__ import annotations

import functools
import math
import re
from collections.abc import Iterator
from collections.abc import Sequence

__all__ = [
    "AFTER_LABEL",
    "AFTER_SEP",
    "ANSWER_LINE",
    "ANSWER_WORDS",
    "BEFORE_SEP",
    "BOUND_BEFORE",
    "CLOSE_MD",
    "COUNTED",
    "DECORATION",
    "DIGITS_RE",
    "HEDGED",
    "HS",
    "LABELLED_ANSWER",
    "MINUS_RE",
    "NEGATED",
    "NEXT_LINE",
    "NOT_PLAIN_AFTER",
    "NUM",
    "NUMBER_LINE",
    "NUMBER_WORDS",
    "OPEN_MD",
    "OTHER_OUTCOME",
    "QUALIFIED_AFTER",
    "REASONING_TAGS",
    "REVISED",
    "SCALE",
    "SEP",
    "SUPER_SUB_DIGITS",
    "SUPER_SUB_SPLIT",
    "THIRD_OPTIONS",
    "UNIT_NEXT_LINE",
    "VALUE_ALONE",
    "WORD_END",
    "in_longer",
    "label_matches",
    "label_pattern",
    "label_start",
    "label_word",
    "line_start_matches",
    "misplaced",
    "named_event",
    "revision",
    "third_pattern",
    "to_value",
    "unknown_label",
    "valued_pattern",
    "words_pattern",
]


# A plain number: 0.7, .7, 1, 70 (with an optional % after it, or "percent", "per cent",
# "pct", on the same line), 7e-1; a leading sign is captured so that negative values are
# reported as out of range, not misread (dash-like minus signs are read as "-" first).
# Its digits are taken whole (an atomic group: a shorter run leaves a digit after it, which
# the look-ahead refuses anyway), so a run of 16,000 digits is not tried at every length.
HS = r"[^\S\r\n]"  # horizontal white space: a label, its value and its unit share a line
NUM = (r"(?P<num>[-+]?(?>(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?))(?![\w.]*\d)(?![A-Za-z_])"
       + HS + r"*(?P<unit>%|(?i:per" + HS + r"?cent|pct)(?![\w])|)")
#: the numbers of a reply, an exponent included ("1e-3" is one number, not "1" and "3")
DIGITS_RE = re.compile(r"(?:\d+(?:\.\d+)?|\.\d+)(?:[eE][-+]?\d+)?")
OPEN_MD = r"[*_`#>\"'‘’“”\s]*"        # decoration before a label
#: one character of that decoration, and one that is not
DECORATION = re.compile(OPEN_MD[:-1])
UNDECORATED = re.compile(r"[^" + OPEN_MD[1:-2] + r"]")
CLOSE_MD = r"[*_`\"'‘’“”)\]]*"        # after it: **Yes**, P(Yes), [Yes]
AFTER_SEP = r"(?:[*_`\"'‘’“”]|" + HS + r")*"  # between the separator and the number (no '(')
SCALE = r"(?:" + HS + r"*[(\[][^()\[\]\n]{0,40}[)\]])?"  # an echoed scale: (0-1), (Yes/No)
# The runs of decoration and white space between a label and its value are taken whole
# (possessive ``*+``, ``++``) where the next part of the pattern cannot start with what
# they take: the matches are the same, and a run after a label is no longer split every
# way before the match fails ("Yes" and 1,000 asterisks took 10 s, 2,000 took 90 s)
SEP = (r"(?:" + HS + r"*+[:=]" + HS + r"*+|" + HS + r"++-" + HS + r"++|" + HS + r"++)")
BEFORE_SEP = CLOSE_MD + r"+(?:" + HS + r"*probability)?" + SCALE + CLOSE_MD + "+"
AFTER_LABEL = BEFORE_SEP + SEP + AFTER_SEP
#: a label that ends its line, its value on the next one ("Yes:\n0.7"): read only when
#: that line holds the value alone (a list item "1. Older age" is not a value)
NEXT_LINE = r"(?:" + HS + r"*+[:=]?" + AFTER_SEP + r"\r?\n\s*+)"
VALUE_ALONE = re.compile(r"[*_`\"'‘’“”.!)\]\s]*")
REASONING_TAGS = ("think", "thinking", "reasoning")
#: a negation just before a label ("Not yes: 0.2", "P(not Yes)", "not a yes", "P(¬yes)",
#: "!yes", "~yes"), or one word before it ("I would not say \"Yes\": 0.7", "I wouldn't
#: call it a yes: 0.7", "never saying yes: 0.9": each was read as P(Yes)): the number is
#: not the label's. "!" and "~" count only when they touch the label and follow no word
#: ("Great! Yes: 0.7" is no negation); a word after a comma or a full stop is not
#: negated ("I'm not sure, but Yes: 0.7", "I cannot be sure; Yes: 0.4" are read)
NEGATED = re.compile(r"(?:(?:(?<![\w])(?:not|cannot|never|non)|n['’]t|¬)"
                     r"(?:[\s\-_*`\"'‘’“”]+[^\W\d_]+(?:[\s*`\"'‘’“”]+it)?)?"
                     r"(?:[\s\-_*`\"'‘’“”]+(?:an?|the))?[\s\-_*`\"'‘’“”]*"
                     r"|(?<![\w!~])[!~])$", re.IGNORECASE)
#: dash-like minus signs (U+2010-2015, U+2212, U+FE63, U+FF0D) directly before a number
MINUS_RE = re.compile(r"[\u2010-\u2015\u2212\ufe63\uff0d](?=\.?\d)")
#: superscript and subscript digits (footnote marks, powers): not normalised to digits
SUPER_SUB_DIGITS = re.compile(r"[\u00b2\u00b3\u00b9\u2070\u2074-\u2079\u2080-\u2089]+")
SUPER_SUB_SPLIT = re.compile(r"([\u00b2\u00b3\u00b9\u2070\u2074-\u2079\u2080-\u2089]+)")
#: what may not follow a plain number: another unit (per mille, "percentage"), or odds
#: with the second number in words ("1 in a hundred", "1 chance out of a thousand")
NUMBER_WORDS = (r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|"
                r"(?:thir|four|fif|six|seven|eigh|nine)teen|twenty|thirty|forty|fifty|sixty|"
                r"seventy|eighty|ninety|hundred|thousand|million|billion|trillion|dozen|"
                r"score|couple|few)s?(?![A-Za-z])")
NOT_PLAIN_AFTER = re.compile(
    r"^" + HS + r"*(?:[%‰‱]|per" + HS + r"?(?:cent|mill?e?)|pct|(?:[A-Za-z]+" + HS
    + r"+){0,2}?(?:in|out" + HS + r"+of|of|per|to)" + HS + r"+(?:(?:an?|one|every|each)"
    + HS + r"+)?" + NUMBER_WORDS + r")", re.IGNORECASE)
#: what, after a value on its line, bounds it or takes it back: "0.7+", "0.7 at most", "0.7
#: or lower", "0.7 (upper bound)", "0.7, or maybe less", "0.7 - no, wait", "0.7, scratch
#: that", "0.7 - that's backwards" (each was read as the value 0.7); "0.7, more or less"
#: is read
QUALIFIED_AFTER = re.compile(
    r"^" + HS + r"*\+|(?<![\w])(?:at" + HS + r"+(?:most|least|best|worst|minimum|maximum)|"
    r"(?<!more" + HS + r")or" + HS + r"+(?:less|lower|more|higher|above|below|greater|"
    r"smaller|under|over|maybe|perhaps|possibly)|and" + HS + r"+(?:above|below|up|over|under)|"
    r"(?:upper|lower)" + HS + r"+bound|max(?:imum)?|min(?:imum)?|"
    r"wait|scratch" + HS + r"+that|backwards?|the" + HS + r"+other" + HS + r"+way|correction|"
    r"revis(?:e|ed|ing)|second" + HS + r"+thoughts?|swapped|reversed)(?![\w])", re.IGNORECASE)
#: a bound just before a lone number: "<1%", "at least 70%", "more than 0.7", "up to 0.3",
#: "over 90%" (each was read as the value itself)
BOUND_BEFORE = re.compile(
    r"(?:[<>≤≥≦≧⩽⩾≪≫]|(?<![\w])(?:(?:less|more|greater|fewer|lower|higher|better|worse)"
    + HS + r"+than|at" + HS + r"+(?:least|most)|up" + HS + r"+to|under|over|above|below|beyond|"
    r"exceeding|upwards" + HS + r"+of|north" + HS + r"+of|south" + HS + r"+of|no" + HS
    + r"+(?:more|less)" + HS + r"+than)(?![\w]))(?:[=~]|" + HS + r")*(?:(?:an?|about)" + HS
    + r"+)?$", re.IGNORECASE)
#: a line that is one number alone (a value, or a second value for the same label)
NUMBER_LINE = re.compile(r"[*_`\"'‘’“”(\[\s]*" + NUM + r"[*_`\"'‘’“”.!)\]\s]*", re.IGNORECASE)
#: the words of a third answer besides the labels ("Maybe: 0.1", "Unsure: 10%", "Neither:
#: 0", "Other: 0.1"): a number for it says that the labels' values are not the reply's
#: whole distribution (as for a JSON object with such a key)
THIRD_OPTIONS = ("maybe", "unsure", "uncertain", "unknown", "undecided", "undetermined",
                 "indeterminate", "neither", "both", "other", "none", "abstain", "depends",
                 "not sure", "can't say", "cannot say", "don't know",
                 "can’t say", "don’t know", "n/a")
#: a unit alone at the start of the next line ("Yes: 70\n%"): not the value's, nor ignored
UNIT_NEXT_LINE = re.compile(r"\s*(?:%|‰|per" + HS + r"?cent|pct)", re.IGNORECASE)
#: the end of a label word ("No", "No probability", "Noprobability")
WORD_END = r"(?:(?![\w])|(?=probability))"
#: words that say a lone number may be about something else than "yes" (a negation, a
#: refusal, a doubt): "80% sure it will not happen", "impossible to say with only 1 data
#: point"; every English negative word (nobody, nothing, ...: "Nobody knows, 0.3" was read
#: as P(Yes) = 0.3 while "Not sure, 0.3" was refused) and the one-word forms of "not sure"
#: and "don't know"
HEDGED = re.compile(r"(?<![\w])(?:not|never|no|none|neither|nor|nobody|noone|nothing|nowhere|"
                    r"naught|nought|cannot|impossible|unable|unsure|uncertain|unknowable|"
                    r"dunno|idk|who\s+knows|"
                    r"without|against|unclear|unknown|insufficient|(?:do|does|did|is|are|was|"
                    r"were|wo|ca|could|would|should|has|have|had)nt|(?:hard|difficult)\s+to\s+"
                    r"(?:say|tell|know))(?![\w])|n['’]t(?![\w])|¬",
                    re.IGNORECASE)

#: words that name the other outcome: a lone number beside one may be its probability
#: ("P(false) = 0.3", "Likelihood of the opposite: 0.3", "0.7 (for the negation)", "30% it's
#: untrue": each was read as P(Yes))
OTHER_OUTCOME = re.compile(r"(?<![\w])(?:false|untrue|opposite|complement(?:ary)?|negation|"
                           r"negated|inverse|contrary|converse|reverse)(?![\w])",
                           re.IGNORECASE)


#: a whole number followed by a word it counts ("1 data point", "1 more test"): not a
#: probability, unless the word says it is one ("1 chance", "1 probability")
COUNTED = re.compile(HS + r"*(?!(?:chance|probability|likelihood|odds|certain|sure|"
                     r"percent|pct|out|of|in|to|or|and)(?![\w]))(?P<noun>[A-Za-z]{2,})",
                     re.IGNORECASE)


def label_word(label: str) -> str:
    """A label as a whole word; a label that starts with a digit is never found inside a
    number (the "0" of "-0.7", the "3" of "0.35")."""
    if label[:1].isdigit():
        return r"(?<![\w.])" + re.escape(label) + r"(?![\w]|[.,]\d)"
    return r"(?<![\w])" + re.escape(label)


def label_start(label: str) -> str:
    """What may not stand just before a label's decoration: a word character (or a full
    stop, for a label that starts with a digit)."""
    return r"(?<![\w.])" if label[:1].isdigit() else r"(?<![\w])"


def label_pattern(label: str, value: str = NUM) -> re.Pattern[str]:
    """A label, its separator (on its line, or a line break) and its value (group
    ``label`` is the label itself)."""
    return re.compile(label_start(label) + OPEN_MD + r"(?P<label>" + re.escape(label) + r")"
                      + BEFORE_SEP
                      + r"(?:" + SEP + r"|" + NEXT_LINE + r")" + AFTER_SEP + value,
                      re.IGNORECASE)


def _decoration_before(body: str, head: int, floor: int) -> int:
    """Where the run of decoration that ends at ``head`` starts (not before ``floor``)."""
    lo = head
    while lo > floor and DECORATION.match(body, lo - 1):
        lo -= 1
    return lo


def label_matches(pattern: re.Pattern[str], label: str, body: str) -> Iterator[re.Match[str]]:
    """``pattern.finditer(body)`` for a ``pattern`` that opens with :func:`label_start`,
    :data:`OPEN_MD` and ``label``, in time linear in ``body``.

    The regular expression tries a match at every position of a run of decoration (spaces,
    line breaks, asterisks) and reads the rest of the run from each: a reply holding a run
    of 16,000 spaces took 5.7 s to parse. Every start in one run reaches the same
    label, so the match is tried once per place the label stands, from the first start in
    its run that :func:`label_start` allows: the matches are those of ``finditer``. A
    label that itself starts with decoration is left to ``finditer``.
    """
    if not label or DECORATION.match(label):
        yield from pattern.finditer(body)
        return
    start = re.compile(label_start(label))
    word = re.compile(re.escape(label), re.IGNORECASE)
    pos = seek = 0
    while (found := word.search(body, seek)) is not None:
        head = found.start()
        first = next((s for s in range(_decoration_before(body, head, pos), head + 1)
                      if start.match(body, s)), None)
        m = None if first is None else pattern.match(body, first)
        if m is None:
            seek = head + 1
            continue
        yield m
        pos = seek = m.end()


def line_start_matches(pattern: re.Pattern[str], body: str) -> Iterator[re.Match[str]]:
    """``pattern.finditer(body)`` for a multi-line ``pattern`` that opens with ``^`` and
    :data:`OPEN_MD`, and whose next character is never decoration, in time linear in
    ``body``: every line start in one run of decoration (a run of line breaks) reaches the
    same place, so the match is tried once per run (:func:`label_matches`)."""
    line = 0
    while line <= len(body):
        m = pattern.match(body, line)
        if m is not None:
            yield m
            end = m.end()
            if end > line and body[end - 1] == "\n":
                line = end
                continue
        else:
            head = UNDECORATED.search(body, line)
            end = len(body) if head is None else head.start()
        nxt = body.find("\n", end)
        if nxt < 0:
            return
        line = nxt + 1


def words_pattern(labels: Sequence[str]) -> re.Pattern[str]:
    """Any of the labels as a word."""
    return re.compile(r"(?:" + "|".join(label_word(x) for x in labels) + r")" + WORD_END,
                      re.IGNORECASE)


def valued_pattern(labels: Sequence[str]) -> re.Pattern[str]:
    """Any of the labels followed by a separator and a number (where the value of the
    previous label ends: "no" alone, as in "0.3... no, 0.4", is not the label No)."""
    return re.compile(r"(?:" + "|".join(label_word(x) for x in labels) + r")" + WORD_END
                      + AFTER_LABEL + r"[-+]?\.?\d", re.IGNORECASE)


@functools.lru_cache(maxsize=64)
def third_pattern(labels: tuple[str, ...]) -> re.Pattern[str]:
    """A third answer's word that is none of ``labels``, with a separator and a number."""
    asked = {label.lower() for label in labels}
    words = [w for w in THIRD_OPTIONS if w not in asked]
    return re.compile(r"(?<![\w])(?:" + "|".join(re.escape(w) for w in words) + r")"
                      + BEFORE_SEP + HS + r"*[:=]" + AFTER_SEP + r"[-+]?\.?\d",
                      re.IGNORECASE)


#: a line that is a Yes or a No alone ("No", "**Yes.**", "- No"); the decoration before it
#: taken whole (a line of 8,000 asterisks took 1.3 s, split every way)
ANSWER_LINE = re.compile(r"[*_`\"'‘’“”>#\s]*+(?:[-•+]\s+)?[*_`\"'‘’“”]*(yes|no)"
                         r"[*_`\"'‘’“”.!)\]\s]*", re.IGNORECASE)
#: the words of a label that says its Yes or No is the reply's answer ("Final answer: No",
#: "Verdict: Yes") when it is neither of the template's labels
ANSWER_WORDS = frozenset(("answer", "final", "verdict", "choice", "conclusion", "response",
                          "result", "reply", "output", "decision", "decide", "recommendation",
                          "judgement", "judgment", "bottom"))
LABELLED_ANSWER = re.compile(r"^" + OPEN_MD + r"(?P<name>[^\W\d_][^\n:=]{0,40}?)" + CLOSE_MD
                             + HS + r"*[:=]" + AFTER_SEP + r"(?P<answer>yes|no)"
                             + r"[*_`\"'‘’“”.!)\]\s]*$", re.IGNORECASE | re.MULTILINE)


def misplaced(body: str, m: re.Match[str], value: str) -> str | None:
    """Why the label and value matched by ``m`` are not read: a negated label ("not
    yes: 0.2"), or a value on the next line that is not alone on it; None when read."""
    line_start = body.rfind("\n", 0, m.start("label")) + 1
    if NEGATED.search(body[line_start:m.start("label")]):
        shown = body[line_start:m.end()].strip()
        return f"the label {m.group('label')!r} is negated: {shown[:60]!r}"
    if "\n" in body[m.end("label"):m.start(value)]:
        line_end = body.find("\n", m.end())
        tail = body[m.end():] if line_end < 0 else body[m.end():line_end]
        if VALUE_ALONE.fullmatch(tail) is None:
            shown = (body[m.start(value):m.end()] + tail).strip()
            return (f"the label {m.group('label')!r} ends its line and the next line is not "
                    f"a value alone: {shown[:60]!r}")
    return None


def in_longer(body: str, m: re.Match[str], labels: Sequence[str]) -> bool:
    """Whether the label matched by ``m`` ends a longer label of ``labels`` ("high" in
    "very high: 0.2", "Decide" in "Can decide: No"): that match is the longer label's."""
    label = m.group("label")
    before = body[:m.start("label")].lower()
    return any(before.endswith(other[:-len(label)].lower()) for other in labels
               if len(other) > len(label) and other.lower().endswith(label.lower())
               and not other[-len(label) - 1].isalnum())


#: what takes back or changes an answer already given, on a line after it ("Wait, I meant
#: No.", "Oops, I swapped them", "On reflection, Yes at 0.6", "these are reversed"): the
#: answer read may not be the model's last word. Words that also describe the world ("the
#: trend reversed", "a market correction", "better to wait") count only in a phrase about
#: the reply itself, or "wait", "oops", "hold on" and "correction" opening the line
_ME = r"(?:i|i['’](?:ve|d|ll)|i" + HS + r"+(?:have|had|would|will|need" + HS + r"+to)|let" \
    + HS + r"+me)" + HS + r"+"
_MINE = r"(?:it|them|these|those|th(?:is|at)|the" + HS + r"+(?:values?|labels?|numbers?|" \
    r"answers?|probabilit(?:y|ies)|estimates?))"
REVISED = re.compile(
    r"^[\s*_`#>\"'(\[-]*(?:wait|oops|hold" + HS + r"+on|correction)(?![\w])"
    r"|(?<![\w])(?:scratch" + HS + r"+that|on" + HS + r"+second" + HS + r"+thoughts?|on"
    + HS + r"+(?:further" + HS + r"+)?reflection|i" + HS + r"+meant|my" + HS
    + r"+(?:mistake|bad|error)|typo|chang(?:e|ed|es|ing)" + HS + r"+my" + HS
    + r"+(?:mind|answer|estimate|probabilit(?:y|ies))|" + _ME
    + r"(?:revise|correct|reconsider|redo|fix|swap|update|adjust|swapped|reversed|mixed"
    + HS + r"+up)|" + _ME + r"(?:got|had)" + HS + r"+" + _MINE + HS
    + r"+(?:backwards|reversed|wrong|the" + HS + r"+wrong" + HS + r"+way)|revised" + HS
    + r"+(?:answer|estimate|forecast|probabilit(?:y|ies)|values?|numbers?)|" + _MINE + HS
    + r"+(?:are|were|is|was)" + HS + r"+(?:reversed|swapped|backwards|the" + HS + r"+wrong"
    + HS + r"+way|wrong))(?![\w])|(?<![\w])correction" + HS + r"*:",
    re.IGNORECASE)


def to_value(m: re.Match[str]) -> float:
    """The value of a :data:`NUM` match: its number, divided by 100 with a percent unit."""
    value = float(m.group("num"))
    return value / 100.0 if m.group("unit") else value


@functools.lru_cache(maxsize=64)
def _label_then_number(label: str) -> re.Pattern[str]:
    """``label`` as a word, then on its line up to 40 characters without a digit, then a
    number ("Yes at 0.6", "Yes should be 30%")."""
    return re.compile(label_word(label) + r"(?![\w])[^\d\n]{0,40}?(?<![\w.])" + NUM,
                      re.IGNORECASE)


def _later_value(lines: list[str], label: str, value: float) -> str | None:
    """The first of ``lines`` that gives ``label`` a probability (a decimal or a
    percentage in [0, 1]) other than ``value``, or None: "Yes: 0.7 / No: 0.3", then "I'd
    put Yes at 0.6" was read as 0.7. A whole number is a count, not a probability ("yes,
    3 risk factors")."""
    pattern = _label_then_number(label)
    for line in lines:
        for m in pattern.finditer(line):
            number = to_value(m)
            if ((m.group("unit") or "." in m.group("num")) and 0.0 <= number <= 1.0
                    and not math.isclose(number, value, abs_tol=1e-9)):
                return line.strip()
    return None


def revision(body: str, last: int, values: dict[str, float] | None = None) -> str | None:
    """Why a line after the last answer read (ending at ``last``) may change it, or None:
    it takes an answer back (:data:`REVISED`), or gives a label of ``values`` (label ->
    the value read) another number."""
    nxt = body.find("\n", last)
    lines = [] if nxt < 0 else body[nxt + 1:].split("\n")
    line = next((x.strip() for x in lines if REVISED.search(x) is not None), None)
    if line is not None:
        return (f"a line after the answer takes it back or changes it ({line[:60]!r}): the "
                "answer read may not be the reply's last word")
    for label, value in (values or {}).items():
        line = _later_value(lines, label, value)
        if line is not None:
            return (f"a line after the answer gives {label!r} another number "
                    f"({line[:60]!r}): the values read may not be the reply's last word")
    return None


#: the words of a label a lone number may carry as P(Yes) ("Probability: 0.65")
_NEUTRAL_WORDS = frozenset(("probability", "prob", "p", "answer", "estimate", "estimated",
                            "likelihood", "chance", "confidence", "belief", "risk",
                            "forecast", "prediction", "final", "result", "response", "output",
                            "reply", "value", "number", "percent", "percentage", "guess",
                            "assessment"))
#: the other words such a label, or the event a probability is said to be of, may hold
#: and still name no event of its own ("My final estimate", "the chance of this happening")
_FILLER_WORDS = frozenset(("my", "our", "your", "the", "a", "an", "of", "that", "this",
                           "it", "its", "is", "i", "d", "s", "would", "will", "say", "give",
                           "in", "for", "overall", "best", "current", "updated", "stated",
                           "calibrated", "predicted", "here", "be", "being", "so", "case",
                           "true", "happening", "happens", "happen", "occurring", "occurs",
                           "occur", "event", "outcome", "question", "resolving", "resolves",
                           "resolve"))


def _prefix_label(prefix: str) -> str | None:
    """The label the text before a lone number on its line ends with (``Nein:``, ``False
    =``, markdown around it dropped), or None when it ends with no ``:`` or ``=``."""
    stripped = prefix.rstrip(" \t*_`")
    return stripped[:-1].strip(" \t*_`#->") if stripped.endswith((":", "=")) else None


def unknown_label(prefix: str) -> str | None:
    """The label before a lone number on its line (``Nein:``, ``False =``) when none of its
    words says it is the probability asked for: ``Nein: 0.3`` and ``Non: 0.3`` were read
    as P(Yes) = 0.3."""
    label = _prefix_label(prefix)
    words = re.findall(r"[^\W\d_]+", (label or "").lower())
    return label if words and not _NEUTRAL_WORDS.intersection(words) else None


#: a probability said to be of an event, before its number ("the chance of failure is
#: about 20%", "the likelihood that it fails: 0.2")
_EVENT_OF = re.compile(
    r"(?<![\w])(?:probability|prob|chances?|likelihood|odds|risk)" + HS + r"+(?:of|that|for)"
    + HS + r"+(?P<event>[^\W\d_][^\d\n:=;]{0,60}?)" + HS + r"*(?:(?<![\w])(?:is|are|was|"
    r"would" + HS + r"+be|will" + HS + r"+be|at|around|about|roughly|approximately|near)"
    r"(?![\w])|[:=≈~])[^\d\n]{0,20}$", re.IGNORECASE)


def named_event(prefix: str, label: str) -> str | None:
    """The event a lone number is said to be the probability of, in the text before it on
    its line (``prefix``: "the chance of failure is", or a label "Probability it fails:"),
    when that names an event of its own; None when there is none or it names no event
    ("this happening", "My final estimate:", ``label``'s own words: "p_yes:"). The
    parser does not know the question, so it cannot tell whether "failure" is its Yes:
    "Probability it fails: 0.2" was read as P(Yes) = 0.2."""
    m = _EVENT_OF.search(prefix)
    event = m.group("event").strip() if m is not None else _prefix_label(prefix)
    if event is None:
        return None
    words = set(re.findall(r"[^\W\d_]+", event.lower()))
    own = set(re.findall(r"[^\W\d_]+", label.lower()))
    return event if words - _NEUTRAL_WORDS - _FILLER_WORDS - own else None
