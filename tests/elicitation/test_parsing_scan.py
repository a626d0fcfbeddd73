"""The linear-time label scans of the reply parsers (``label_matches``,
``line_start_matches`` in ``elicitation/_parsing_patterns.py``) find exactly the matches
``re.finditer`` finds: the regular expressions they stand in for tried a match at every
position of a run of spaces, line breaks or asterisks and read the rest of the run from
each (quadratic: 5.7 s for a reply holding 16,000 spaces; `benchmarks/bench_scaling.py`)."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from elicitation._parsing_patterns import BEFORE_SEP
from elicitation._parsing_patterns import HS
from elicitation._parsing_patterns import LABELLED_ANSWER
from elicitation._parsing_patterns import OPEN_MD
from elicitation._parsing_patterns import label_matches
from elicitation._parsing_patterns import label_pattern
from elicitation._parsing_patterns import label_start
from elicitation._parsing_patterns import line_start_matches

PIECES = [" ", "  ", "\n", "\n\n", "\t", "*", "**", "_", "#", ">", '"', "'", "“", "`", "\r",
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
