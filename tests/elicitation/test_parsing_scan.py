"""The linear-time label scans of the reply parsers (``label_matches``,
``line_start_matches`` in ``elicitation/_parsing_patterns.py``) find exactly the matches
``re.finditer`` finds: the regular expressions they stand in for tried a match at every
position of a run of spaces, line breaks or asterisks and read the rest of the run from
each (quadratic: 5.7 s for a reply holding 16,000 spaces; `benchmarks/bench_scaling.py`)."""

from __future__ import annotations

import re

from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from elicitation._parsing_patterns import AFTER_SEP
from elicitation._parsing_patterns import ANSWER_LINE
from elicitation._parsing_patterns import BEFORE_SEP
from elicitation._parsing_patterns import CLOSE_MD
from elicitation._parsing_patterns import HS
from elicitation._parsing_patterns import LABELLED_ANSWER
from elicitation._parsing_patterns import NUM
from elicitation._parsing_patterns import OPEN_MD
from elicitation._parsing_patterns import SCALE
from elicitation._parsing_patterns import WORD_END
from elicitation._parsing_patterns import label_matches
from elicitation._parsing_patterns import label_pattern
from elicitation._parsing_patterns import label_start
from elicitation._parsing_patterns import label_word
from elicitation._parsing_patterns import line_start_matches
from elicitation._parsing_patterns import valued_pattern

PIECES = ["0", "00", "1e5", "E-", "e+",
          " ", "  ", "\n", "\n\n", "\t", "*", "**", "_", "#", ">", '"', "'", "“", "`", "\r",
          "Yes", "yes", "YES", "No", "no", "Decision", "Can decide", "decide", "Final answer",
          ":", "=", " - ", "0.7", ".3", "70", "%", "1", "5", "x", "e", ".", ",", "(", ")", "[",
          "]", "probability", "not ", "Answer", "ß", "İ", "\u00a0", "x_", " _", "w*"]
LABELS = ["Yes", "No", "Decision", "Can decide", "1", "0.5", "a", "yes", "ß",
          # labels that start with decoration are read by finditer itself
          "_x", '"Yes"', " Yes", "*"]
texts = st.lists(st.sampled_from(PIECES), max_size=40).map("".join)


def _seen(matches):
    return [(m.span(), m.groupdict()) for m in matches]


@settings(max_examples=400, deadline=None)
@given(texts, st.sampled_from(LABELS), st.sampled_from(["num", "answer", "stated"]))
def test_label_matches_are_finditer_s(body, label, kind):
    if kind == "stated":
        pattern = re.compile(label_start(label) + OPEN_MD + r"(?P<label>" + re.escape(label)
                             + r")" + BEFORE_SEP + HS + r"*[:=]", re.IGNORECASE)
    else:
        pattern = (label_pattern(label) if kind == "num"
                   else label_pattern(label, r"(?P<answer>yes|no)(?![\w])"))
    assert _seen(label_matches(pattern, label, body)) == _seen(pattern.finditer(body))


@settings(max_examples=400, deadline=None)
@given(texts, st.sampled_from(["Yes", "No", "Decision", "1", "ß"]))
def test_line_start_matches_are_finditer_s(body, label):
    block = re.compile(r"^" + OPEN_MD + re.escape(label) + r"(?![\w])" + BEFORE_SEP
                       + r"(?:" + HS + r"*[:=]|" + HS + r"*$)", re.IGNORECASE | re.MULTILINE)
    for pattern in (LABELLED_ANSWER, block):
        assert _seen(line_start_matches(pattern, body)) == _seen(pattern.finditer(body))


def test_runs_of_decoration_hold_every_match():
    """Hand-picked cases: a start allowed only inside the run ("x _Yes" starts at the
    space), a label in a word, matches back to back, a run between matches."""
    for body in ["x _Yes: 0.7", "x_Yes: 0.7", "_Yes: 0.7", "Yes: 0.7Yes: 0.2",
                 "Yes: 0.7   \n\n  **Yes**: 0.2", "   " * 50 + "Yes: 0.1", "\n" * 30 + "No: 1",
                 "Final answer: yes\n\n\n  Verdict: No\n"]:
        for label in ("Yes", "No"):
            pattern = label_pattern(label)
            assert _seen(label_matches(pattern, label, body)) == _seen(pattern.finditer(body))
        assert (_seen(line_start_matches(LABELLED_ANSWER, body))
                == _seen(LABELLED_ANSWER.finditer(body)))


# The separator patterns as they were before their runs were taken whole (possessive
# quantifiers): the reference the present ones must match exactly. "Yes" followed by
# 1,000 asterisks took 10 s to parse with them, 2,000 took 90 s (a run split every way).
_OLD_SEP = r"(?:" + HS + r"*[:=]" + HS + r"*|" + HS + r"+-" + HS + r"+|" + HS + r"+)"
_OLD_BEFORE = CLOSE_MD + r"(?:" + HS + r"*probability)?" + SCALE + CLOSE_MD
_OLD_NEXT = r"(?:" + HS + r"*[:=]?" + AFTER_SEP + r"\r?\n\s*)"
_OLD_NUM = NUM.replace("(?>", "(?:")
_OLD_ANSWER_LINE = re.compile(r"[*_`\"'‘’“”>#\s]*(?:[-•+]\s+)?[*_`\"'‘’“”]*(yes|no)"
                              r"[*_`\"'‘’“”.!)\]\s]*", re.IGNORECASE)


def _old_label_pattern(label: str, value: str) -> re.Pattern[str]:
    return re.compile(label_start(label) + OPEN_MD + r"(?P<label>" + re.escape(label) + r")"
                      + _OLD_BEFORE + r"(?:" + _OLD_SEP + r"|" + _OLD_NEXT + r")" + AFTER_SEP
                      + value, re.IGNORECASE)


#: what stands between a label and its value, denser than PIECES
SEPARATORS = ["Yes", "No", "yes", "Maybe", ":", "=", " ", "\t", "\n", "\r", "*", "_", "`",
              "(0-1)", "(", ")", "]", "probability", " - ", "-", "0.7", "0", "1e5", ".3", "%",
              "x", "no"]


@settings(max_examples=1500, deadline=None)
@example("Yes\r\n0.7", "Yes", False)
@example("Yes:\n  **0.7", "Yes", False)
@example("Yes**  :  **0.7", "Yes", False)
@example("Yes (0-1)**: 0.7", "Yes", False)
@example("Yes  -  0.7", "Yes", False)
@example("Yes probability = 70%", "Yes", False)
@example("Yes\t\n\n\t0.7", "Yes", False)
@example("Yes*\r\n_yes", "Yes", True)
@example("Yes 1e5x 0.7", "Yes", False)
@example("** - **yes**", "Yes", True)
@given(st.lists(st.sampled_from(SEPARATORS), max_size=14).map("".join),
       st.sampled_from(["Yes", "No", "yes", "1"]), st.booleans())
def test_separator_runs_taken_whole_match_as_before(body, label, answer):
    value = r"(?P<answer>yes|no)(?![\w])" if answer else NUM
    new = label_pattern(label, value)
    old = _old_label_pattern(label, value if answer else _OLD_NUM)
    assert _seen(new.finditer(body)) == _seen(old.finditer(body))
    for other in (["Yes", "No"], ["Maybe", "Yes"]):
        words = valued_pattern(other)
        old_words = re.compile(r"(?:" + "|".join(label_word(x) for x in other) + r")"
                               + WORD_END + _OLD_BEFORE + _OLD_SEP + AFTER_SEP
                               + r"[-+]?\.?\d", re.IGNORECASE)
        assert _seen(words.finditer(body)) == _seen(old_words.finditer(body))
    lone, old_lone = (re.compile(r"(?<![\w.])" + n) for n in (NUM, _OLD_NUM))
    assert _seen(lone.finditer(body)) == _seen(old_lone.finditer(body))
    for line in body.split("\n"):
        assert (_seen(filter(None, [ANSWER_LINE.fullmatch(line)]))
                == _seen(filter(None, [_OLD_ANSWER_LINE.fullmatch(line)])))

