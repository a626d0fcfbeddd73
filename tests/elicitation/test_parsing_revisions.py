"""Replies that go on after their answer, and lone numbers given to an event the reply names:
never read as the answer when the text may say otherwise."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from elicitation import parse_decision
from elicitation import parse_probabilities
from elicitation._study_tuples import parse_reply
from elicitation._study_tuples import reply_choice

REVISIONS = ["On reflection, I'd put Yes at 0.6 and No at 0.4.",
             "(Note: these are reversed; Yes should be 0.3)", "Oops, I swapped them.",
             "Wait, that's wrong.", "Correction: the other way round.",
             "Let me revise: Yes is lower.", "I got them backwards.", "Scratch that.",
             "On second thought, lower.", "I meant the opposite.", "**Wait** - no."]
#: lines after the answer that describe the world, not the reply: the answer is read
BENIGN = ["The trend reversed in March; a market correction is likely.",
          "Better to wait and see, but this is the more likely outcome.",
          "The revised GDP figures support this.", "If I'm wrong, it is the base rate.",
          "Investing now would be a mistake.", "3 of 5 signals point to yes."]


@pytest.mark.parametrize("line", REVISIONS)
@pytest.mark.parametrize("answer", ["No: 0.3\nYes: 0.7", "Yes: 0.7\nNo: 0.3", "Yes: 0.7",
                                    "**Yes:** 70%, **No:** 30%"])
def test_a_line_after_the_answer_that_takes_it_back_is_not_read(answer, line):
    # each was read as Yes = 0.7, the value the model took back
    parsed = parse_probabilities(f"{answer}\n{line}")
    assert not parsed.ok and parsed.reason == "ambiguous", parsed.values
    assert "after the answer" in parsed.detail
    assert parsed.raw_values["Yes"] == pytest.approx(0.7)   # what was read is kept


@pytest.mark.parametrize("line", BENIGN)
def test_a_line_after_the_answer_about_the_world_is_read(line):
    parsed = parse_probabilities(f"Yes: 0.7\nNo: 0.3\n{line}")
    assert parsed.ok and parsed.values["Yes"] == pytest.approx(0.7), parsed.detail


@pytest.mark.parametrize(("tail", "read"), [
    ("That is, yes at 70%.", True), ("This leaves No at 0.3.", True),
    ("I'd put Yes at 0.6 in a bad year.", False), ("That leaves No at 0.4.", False),
    ("So yes should be 65%.", False), ("Reasons for yes, 3 risk factors.", True),
    ("Yes, in 2 of 3 such cases.", True), ("Yes at 1.5 times the base rate.", True)])
def test_a_later_line_that_gives_a_label_another_number_is_not_read(tail, read):
    # "Yes: 0.7 ... Yes at 0.6" was read as 0.7; the same number again is read
    for answer in ("Yes: 0.7\nNo: 0.3", "Yes: 0.7"):
        parsed = parse_probabilities(f"{answer}\n{tail}")
        assert parsed.ok is read, (answer, tail, parsed.detail)
        if not read:
            assert parsed.reason == "ambiguous" and "another number" in parsed.detail


@given(p=st.integers(0, 100), line=st.sampled_from(REVISIONS),
       order=st.booleans(), blank=st.booleans())
def test_any_readable_reply_with_a_revision_after_it_is_not_read(p, line, order, blank):
    yes, no = f"Yes: {p / 100:g}", f"No: {1 - p / 100:.2f}"
    answer = f"{no}\n{yes}" if order else f"{yes}\n{no}"
    assert parse_probabilities(answer).ok
    parsed = parse_probabilities(answer + ("\n\n" if blank else "\n") + line)
    assert not parsed.ok and parsed.reason == "ambiguous"


@pytest.mark.parametrize("labels", [("Can decide", "Decision"), ("Decide", "Answer")])
@pytest.mark.parametrize("line", ["Wait, I meant No.", "On reflection, the answer should be Yes.",
                                  "Oops, I mixed them up.", "Correction: the other one."])
def test_a_decision_taken_back_on_a_later_line_is_not_read(labels, line):
    # "Decision: Yes\nWait, I meant No." was read as yes
    reply = f"{labels[0]}: Yes\n{labels[1]}: Yes"
    assert parse_decision(reply, labels).values["action"] == "yes"
    parsed = parse_decision(f"{reply}\n{line}", labels)
    assert not parsed.ok and parsed.reason == "ambiguous" and "after the answer" in parsed.detail


@pytest.mark.parametrize("line", ["Better to wait for more data.",
                                  "Investing now would be a mistake.",
                                  "The reversed trend argues for it."])
def test_a_decision_followed_by_prose_about_the_world_is_read(line):
    parsed = parse_decision(f"Can decide: Yes\nDecision: No\n{line}")
    assert parsed.ok and parsed.values["action"] == "no", parsed.detail


@pytest.mark.parametrize("text", ["Probability it fails: 0.2", "Chance of success: 0.8",
                                  "Likelihood of failure: 20%", "Risk of default: 0.1",
                                  "I think the chance of failure is about 20%.",
                                  "The probability that the bill passes is 0.6",
                                  "Estimated probability of disease: 0.65"])
def test_a_lone_number_given_to_an_event_the_reply_names_is_not_read(text):
    # each was read as P(Yes): the parser does not know the question, so "failure" may be
    # its No
    parsed = parse_probabilities(text)
    assert not parsed.ok and parsed.reason == "ambiguous", parsed.values
    assert "an event the reply names" in parsed.detail


@pytest.mark.parametrize("text", ["The probability of this happening is 0.7",
                                  "Probability that it happens: 0.7", "Based on the evidence, 0.7",
                                  "My final estimate: 70%", "p_yes: 0.7",
                                  "The chance of that is 0.7"])
def test_a_lone_number_that_names_no_event_is_read(text):
    parsed = parse_probabilities(text)
    assert parsed.ok and parsed.method == "lone_number", parsed.detail
    assert parsed.values["Yes"] == pytest.approx(0.7)


@pytest.mark.parametrize("line", ["Wait, I meant PARAPHRASE.", "On reflection, it is OTHER.",
                                  "Oops, wrong label."])
def test_a_design_reply_taken_back_on_a_later_line_is_not_read(line):
    # "Relation: NEGATION" then "Wait, I meant PARAPHRASE." was read as NEGATION
    choices = ("NEGATION", "PARAPHRASE", "OTHER")
    assert reply_choice("Relation: NEGATION", "Relation", choices) == "NEGATION"
    assert reply_choice(f"Relation: NEGATION\n{line}", "Relation", choices) == ""
    assert parse_reply(f"Question: Will it rain?\n{line}", "Question") is None
    # a remark that takes nothing back leaves the line read
    assert reply_choice("Relation: NEGATION\nThe second question flips the first.",
                        "Relation", choices) == "NEGATION"
