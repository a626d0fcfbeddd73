"""Prompt templates: the built-in wording, rendering and the registry."""

from __future__ import annotations

import pytest

import elicitation
from elicitation import (
    BELIEF_PROMPTS,
    Template,
    get_template,
    parse_decision,
    parse_probabilities,
    register_template,
    template_names,
)
from elicitation._templates import _REGISTRY

CASE = {"patient_description": "is male, is in the 50-64 age group, and QRS duration is "
        "prolonged", "clinical_question": "Does the patient have heart disease?"}


def test_builtin_templates_are_registered():
    names = template_names()
    for name in [*BELIEF_PROMPTS, "decision", "next_state", "given_auxiliary", "forecast",
                 "conditional_baseline", "conditional_justify_first", "conditional_skeptical"]:
        assert name in names


@pytest.mark.parametrize("name", BELIEF_PROMPTS)
def test_belief_templates_ask_for_no_then_yes(name):
    messages = get_template(name).render(**CASE)
    assert [m["role"] for m in messages] == ["system", "user"]
    user = messages[-1]["content"]
    assert CASE["patient_description"] in user and CASE["clinical_question"] in user
    assert user.index("No: <probability>") < user.index("Yes: <probability>")
    assert "{" not in user and "}" not in user


def test_variants_differ_in_what_they_say():
    users = {n: get_template(n).render(**CASE)[-1]["content"] for n in BELIEF_PROMPTS}
    assert "squared error" in users["mse"] and "Brier" in users["mse"]
    assert "absolute" in users["absolute"]
    assert "prior" in users["bayesian"] and "update" in users["bayesian"]
    assert len(set(users.values())) == len(BELIEF_PROMPTS)


def test_decision_template():
    t = get_template("decision")
    user = t.render(**CASE)[-1]["content"]
    assert "can you make a decision" in user and "if you had to decide" in user
    assert t.labels_for({}) == ("Decide", "Answer")
    assert parse_decision("Decide: Yes\nAnswer: No").values["action"] == "no"


def test_next_state_has_k_labels():
    t = get_template("next_state")
    fields = {**CASE, "auxiliary_variable_name": "cholesterol level",
              "states": ["low", "normal", "high"]}
    user = t.render(**fields)[-1]["content"]
    assert "low: <probability>\nnormal: <probability>\nhigh: <probability>" in user
    assert "(low, normal, high)" in user
    labels = t.labels_for(fields)
    assert parse_probabilities("low: 0.2\nnormal: 0.5\nhigh: 0.3", labels).ok
    given = get_template("given_auxiliary").render(
        **fields, auxiliary_state="high")[-1]["content"]
    assert "cholesterol level is high" in given


@pytest.mark.parametrize("variant", ["baseline", "justify_first", "skeptical"])
def test_conditional_templates(variant):
    user = get_template(f"conditional_{variant}").render(
        question="Will A happen?", condition_question="Will B happen?",
        condition_outcome="YES")[-1]["content"]
    assert "Will A happen?" in user and "Will B happen?" in user and "resolved YES" in user
    if variant == "justify_first":
        assert "causal or logical relationship" in user and "direction" in user
    if variant == "skeptical":
        assert "independent" in user and "direct causal mechanism" in user
        assert "close to your unconditional estimate" in user


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


def test_registry_validation():
    with pytest.raises(TypeError, match="The 'template' parameter of register_template"):
        register_template("standard")  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="The 'name' parameter of get_template"):
        get_template("nope")


def test_public_names():
    for name in elicitation.__all__:
        assert getattr(elicitation, name) is not None
