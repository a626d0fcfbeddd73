"""Property tests of the template registry's validation: a template of any text either
builds, registers and renders every placeholder it has, or is refused with a ValueError
or TypeError naming what is wrong; ``published_prompts`` is a fresh copy each time. The
registry is left as it was."""

from __future__ import annotations

import contextlib
import string
from collections.abc import Iterator

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from elicitation import Template
from elicitation import get_template
from elicitation import published_prompts
from elicitation import register_template
from elicitation import template_names
from elicitation._templates import _REGISTRY

#: the placeholders render builds from the labels
_DERIVED = {"answer_lines", "labels", "n_labels", "example_lines"}
_PIECES = ["{a}", "{b}", "{answer_lines}", "{labels}", "{n_labels}", "{example_lines}",
           "{states}", "{", "}", "{{", "}}", "{a:>{b}}", "{a:d}", "{a!r}", "{a!x}", "{0}", "{}",
           "{a.b}", "{a[0]}", "{é}", "{ a}", "ç∂", "x", " ", "\n", "%s", "$a"]
_TEXT = st.lists(st.one_of(st.sampled_from(_PIECES), st.text(max_size=3)), max_size=6).map(
    "".join)
_LABELS = st.one_of(
    st.none(), st.sampled_from([("No", "Yes"), ["A", "B", "C"], ("Yes", "yes"), ("Yes",),
                                "Yes", "No", 5, {"a", "b"}, {"No": 0, "Yes": 1}, (" ", "x"),
                                ("No", 5), b"ab"]),
    st.lists(st.text(min_size=1, max_size=3), min_size=2, max_size=3).map(tuple))
_KIND = st.sampled_from(["probability", "probability", "decision", "chat", "", None, 1])
_NAME = st.one_of(st.sampled_from(["standard", "decision", "", 5]),
                  st.text(min_size=1, max_size=6).map(lambda s: "hyp_" + s))
#: what an error of Template may name
_NAMED = ("'name'", "'kind'", "'labels'", "'user'", "'system'", "placeholder",
          "format string")


@contextlib.contextmanager
def _registry_kept() -> Iterator[None]:
    """The template registry as it was, whatever the block registered or replaced."""
    before = dict(_REGISTRY)
    try:
        yield
    finally:
        _REGISTRY.clear()
        _REGISTRY.update(before)


def _placeholders(text: str) -> set[str]:
    return {f for _, f, _, _ in string.Formatter().parse(text) if f is not None}


@settings(max_examples=300)
@given(_NAME, _KIND, _TEXT, _TEXT, _LABELS)
def test_a_template_renders_every_placeholder_or_is_refused_naming_why(name, kind, user,
                                                                        system, labels):
    try:
        template = Template(name, kind, user=user, system=system, labels=labels)
    except (ValueError, TypeError) as exc:
        assert any(n in str(exc) for n in _NAMED), str(exc)
        return
    fields: dict[str, object] = {p: f"<{p}>" for p in template.placeholders - _DERIVED}
    if template.labels is None:
        fields["states"] = ["low", "high"]
    messages = template.render(**fields)
    assert [m["role"] for m in messages] == ["system", "user"][2 - len(messages):]
    for text, message in zip((system, user)[2 - len(messages):], messages, strict=True):
        for p in _placeholders(text) - _DERIVED - {"states"}:
            assert f"<{p}>" in message["content"]
        assert not _placeholders(message["content"].replace("{", "").replace("}", ""))
    for missing in sorted(template.placeholders - _DERIVED - {"states"})[:1]:
        with pytest.raises(ValueError, match=f"needs the field\\(s\\) '{missing}'"):
            template.render(**{k: v for k, v in fields.items() if k != missing})
    with _registry_kept():
        if name in _REGISTRY:
            with pytest.raises(ValueError, match="'template' parameter of register_template"):
                register_template(template)
        assert register_template(template, overwrite=True) is template
        assert get_template(name) is template and name in template_names()
        with pytest.raises(ValueError, match="'template' parameter of register_template"):
            register_template(template)   # the same name twice
    assert _REGISTRY.get(name) is not template


@pytest.mark.parametrize("labels", ["Yes", 5, {"No", "Yes"}, {"No": 0, "Yes": 1}])
def test_labels_other_than_a_list_or_tuple_are_refused(labels):
    # 'Yes' was taken as the labels 'Y', 'e', 's'; a set in any order; 5 failed with
    # "'int' object is not iterable", naming no parameter
    with pytest.raises(TypeError, match="The 'labels' parameter of Template must be None or "
                       "a list or tuple"):
        Template("t", "probability", user="{answer_lines}", labels=labels)


@pytest.mark.parametrize("user", ["{a:>{b}}", "{a:d}", "{a!r}", "{a!x}", "{a:{}}"])
def test_a_placeholder_with_a_conversion_or_format_spec_is_refused(user):
    # it built, then render failed with KeyError 'b' or "Unknown format code 'd' for object
    # of type 'str'", naming neither the template nor the placeholder
    with pytest.raises(ValueError, match=r"Template 't' has placeholder .*no conversion or "
                       r"format spec"):
        Template("t", "probability", user=user)


def test_published_prompts_is_a_fresh_copy():
    first = published_prompts()
    assert set(first) >= {"sources", "templates", "instructions"}
    first["templates"].clear()
    first["sources"]["x"] = "y"
    assert published_prompts()["templates"] and "x" not in published_prompts()["sources"]
    with pytest.raises(TypeError):
        published_prompts("standard")  # type: ignore[call-arg]
