"""Prompt templates: the built-in wording, rendering and the registry."""

from __future__ import annotations

from pathlib import Path

import pytest

import elicitation
from elicitation import BELIEF_PROMPTS
from elicitation import Template
from elicitation import get_template
from elicitation import parse_decision
from elicitation import parse_probabilities
from elicitation import published_prompts
from elicitation import register_template
from elicitation import template_names
from elicitation._templates import _REGISTRY

CASE = {"patient_description": "is male, is in the 50-64 age group, and QRS duration is "
        "prolonged", "clinical_question": "have heart disease"}
TOOLKIT_PROMPTS = [f"{name}_toolkit" for name in BELIEF_PROMPTS]


def test_builtin_templates_are_registered():
    names = template_names()
    for name in [*BELIEF_PROMPTS, "decision", "next_state", "given_auxiliary", "forecast",
                 "conditional_baseline", "conditional_justify_first", "conditional_skeptical",
                 "forecast_justify_first", "forecast_skeptical", *TOOLKIT_PROMPTS,
                 "decision_toolkit", "next_state_toolkit", "given_auxiliary_toolkit",
                 "conditional_justify_first_toolkit", "conditional_skeptical_toolkit"]:
        assert name in names
    for name in BELIEF_PROMPTS:
        assert get_template(name).variant == get_template(f"{name}_toolkit").variant == name
        assert "Appendix B" in get_template(name).source
        assert get_template(f"{name}_toolkit").source == "toolkit"


def _published_block(shared_data: Path) -> str:
    path = shared_data / "prompts" / "published_prompts.md"
    if not path.is_file():
        pytest.skip(f"{path} is absent")
    text = path.read_text(encoding="utf-8")
    return text[text.index("```text"):text.index("```", text.index("```text") + 7)]


@pytest.mark.parametrize("name", [*BELIEF_PROMPTS, "decision", "given_auxiliary"])
def test_the_papers_prompts_are_sent_verbatim(name, shared_data):
    # rendered with the paper's own placeholders, the message is the paper's text
    user = get_template(name).render(
        patient_description="<patient_description>", clinical_question="<clinical_question>",
        auxiliary_variable_condition="<auxiliary_variable_condition>")
    assert [m["role"] for m in user] == ["user"]          # no system message in the paper
    text = user[0]["content"]
    if name == "decision":
        # the one layout change, listed in the data file: the line break the PDF lost
        text = text.replace(")\nExample format:", ")Example format:")
    assert text in _published_block(shared_data)


def test_next_state_fills_the_papers_state_list():
    fields = {**CASE, "auxiliary_variable_name": "cholesterol level",
              "states": ["low", "normal", "high"]}
    t = get_template("next_state")
    user = t.render(**fields)[-1]["content"]
    assert "Respond with exactly 3 lines, one per label, and no extra text." in user
    assert "Use these labels in this order: [low, normal, high]" in user
    assert user.endswith("Example:\nlow: 0.33\nnormal: 0.33\nhigh: 0.33")
    assert parse_probabilities("low: 0.2\nnormal: 0.5\nhigh: 0.3", t.labels_for(fields)).ok


def test_published_prompts_data_file():
    data = published_prompts()
    assert set(data["templates"]) >= {*BELIEF_PROMPTS, "decision"}
    assert "Rational Agents" in data["sources"]["decision_paper"]["citation"]
    for variant in ("justify_first", "skeptical"):
        quoted = data["instructions"][variant]["text"]
        for name in (f"conditional_{variant}", f"forecast_{variant}"):
            t = get_template(name)
            assert t.reasoning and t.variant == variant
            assert quoted in t.render(question="A?", condition_question="B?",
                                      condition_outcome="YES")[-1]["content"]
    data["templates"].clear()                           # a fresh copy each call
    assert published_prompts()["templates"]


@pytest.mark.parametrize("name", TOOLKIT_PROMPTS)
def test_toolkit_templates_ask_for_no_then_yes(name):
    messages = get_template(name).render(**CASE)
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[-1]["content"]
    assert CASE["patient_description"] in user
    assert "Question: do they have heart disease?" in user
    assert user.index("No: <probability>") < user.index("Yes: <probability>")
    assert "{" not in user and "}" not in user


def test_variants_differ_in_what_they_say():
    users = {n: get_template(n).render(**CASE)[-1]["content"] for n in BELIEF_PROMPTS}
    assert "Mean Squared Error (MSE)" in users["mse"]
    assert "Absolute Loss" in users["absolute"]
    assert "Bayesian reasoning" in users["bayesian"] and "prior" in users["bayesian"]
    assert len(set(users.values())) == len(BELIEF_PROMPTS)
    assert all("What is the probability that they have heart disease?" in u
               for u in users.values())


def test_decision_templates():
    t = get_template("decision")
    user = t.render(**CASE)[-1]["content"]
    assert "Question: Do they have heart disease?" in user
    assert t.labels_for({}) == ("Can decide", "Decision")
    assert parse_decision("Can decide: Yes\nDecision: No", t.labels).values["action"] == "no"
    tk = get_template("decision_toolkit")
    assert "Decide: <Yes or No>\nAnswer: <Yes or No>" in tk.render(**CASE)[-1]["content"]
    assert tk.labels_for({}) == ("Decide", "Answer")


def test_toolkit_next_state_has_k_labels():
    t = get_template("next_state_toolkit")
    fields = {**CASE, "auxiliary_variable_name": "cholesterol level",
              "states": ["low", "normal", "high"]}
    user = t.render(**fields)[-1]["content"]
    assert "low: <probability>\nnormal: <probability>\nhigh: <probability>" in user
    assert "(low, normal, high)" in user
    given = get_template("given_auxiliary_toolkit").render(
        **fields, auxiliary_state="high")[-1]["content"]
    assert "cholesterol level is high" in given


@pytest.mark.parametrize("variant", ["baseline", "justify_first", "skeptical"])
def test_conditional_templates(variant):
    t = get_template(f"conditional_{variant}")
    user = t.render(question="Will A happen?", condition_question="Will B happen?",
                    condition_outcome="YES")[-1]["content"]
    assert "Will A happen?" in user and "Will B happen?" in user and "resolved YES" in user
    assert user.rstrip().endswith("they must sum to 1.")
    assert t.reasoning == (variant != "baseline")
    if variant == "justify_first":
        assert "1) Is there a causal or logical relationship? 2) If yes, what direction?" in user
    if variant == "skeptical":
        assert "Why might these questions be INDEPENDENT?" in user
        assert "keep your estimate similar to what you'd give without the context" in user


def test_missing_placeholder_is_named():
    with pytest.raises(ValueError, match="needs the field\\(s\\) 'clinical_question'"):
        get_template("standard").render(patient_description="x")


def test_states_validation():
    with pytest.raises(ValueError, match="The 'states' parameter of template 'next_state'"):
        get_template("next_state").render(**CASE, auxiliary_variable_name="z", states="abc")


def test_register_and_overwrite():
    t = Template("test_terse", "probability", user="{x}\n{answer_lines}",
                 labels=("False", "True"))
    try:
        assert register_template(t) is t
        assert get_template("test_terse") is t
        assert get_template(t) is t
        with pytest.raises(ValueError, match="is not registered yet"):
            register_template(t)
        t2 = Template("test_terse", "probability", user="{x}!\n{answer_lines}")
        register_template(t2, overwrite=True)
        assert get_template("test_terse") is t2
        assert t2.render(x="hi")[0]["content"].startswith("hi!\nNo: <probability>")
    finally:
        _REGISTRY.pop("test_terse", None)


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        ({"name": "", "kind": "probability", "user": "x"}, TypeError, "'name' parameter"),
        ({"name": "a", "kind": "chat", "user": "x"}, ValueError, "'kind' parameter"),
        ({"name": "a", "kind": "probability", "user": 3}, TypeError, "'user' parameter"),
        ({"name": "a", "kind": "probability", "user": "x", "labels": ("Yes",)}, ValueError,
         "'labels' parameter"),
        ({"name": "a", "kind": "probability", "user": "x", "labels": ("Yes", "yes")},
         ValueError, "'labels' parameter"),
        ({"name": "a", "kind": "probability", "user": "{0}"}, ValueError, "plain names"),
        ({"name": "a", "kind": "probability", "user": "{x"}, ValueError, "format string"),
    ],
)
def test_template_validation(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        Template(**kwargs)


@pytest.mark.parametrize(
    ("kwargs", "exc", "match"),
    [
        # a blank name was registered, and a blank variant labelled the table's prompt column
        ({"name": "   "}, TypeError, r"'name' parameter of Template must be a non-empty str; "
         r"got '   '"),
        ({"variant": " "}, TypeError, r"'variant' parameter of Template must be a non-empty "
         r"str \('' for the name\); got ' '"),
        # a line break, tab or NUL went into the cache keys and split the tables' lines
        *(({key: f"a{c}b"}, ValueError, rf"'{key}' parameter of Template must be a non-empty "
           rf"str.* with no control character such as a line break, tab or NUL; got "
           rf"'a\\{shown}b'")
          for key in ("name", "variant") for c, shown in (("\x00", "x00"), ("\n", "n"),
                                                          ("\t", "t"), ("\r", "r"))),
        # an empty user message was sent as is: the model was asked nothing
        ({"user": ""}, ValueError, "'user' parameter of Template must be a non-blank message"),
        ({"user": " \n"}, ValueError, "'user' parameter of Template must be a non-blank"),
        # a line break split the label's answer line; outer spaces made the reply 'No: 0.3'
        # ambiguous (' No' and 'No ' are one word)
        ({"labels": ("No", "Y\nes")}, ValueError, r"'labels' parameter.*control characters"),
        ({"labels": ("No", "Y\x00")}, ValueError, r"'labels' parameter.*control characters"),
        ({"labels": (" No", "Yes")}, ValueError, r"'labels' parameter.*leading or trailing"),
        ({"labels": ("No", "No ")}, ValueError, r"'labels' parameter.*leading or trailing"),
    ],
)
def test_a_blank_or_control_character_name_message_or_label_is_refused(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        Template(**{"name": "t", "kind": "probability", "user": "{answer_lines}", **kwargs})


def test_long_and_multiline_text_is_kept():
    # a long name and a message over many lines are legitimate: only names are one line
    t = Template("x" * 10_000, "probability", user="Line one.\n\tLine two.\n{answer_lines}",
                 system="A\nB", description="d\ne", labels=("No:", "Yes"))
    assert t.variant == "x" * 10_000
    assert t.render()[-1]["content"].startswith("Line one.\n\tLine two.\nNo:: <probability>")


def test_registry_validation():
    with pytest.raises(TypeError, match="The 'template' parameter of register_template"):
        register_template("standard")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="The 'name' parameter of get_template"):
        get_template("nope")


def test_public_names():
    for name in elicitation.__all__:
        assert getattr(elicitation, name) is not None
