"""Property tests of the elicitation layer's estimators: ``token_belief`` against a
brute-force reading of its definition, in both log-probability layouts; ``cache_key``'s
canonical form."""

from __future__ import annotations

import math
import random

from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from elicitation import cache_key
from elicitation import get_template
from elicitation import template_names
from elicitation import token_belief

# a token that reads yes or no (case, spaces, quotes and trailing punctuation ignored),
# or one that does not
_WORD = st.sampled_from(["yes", "no", "maybe", "y", "nope", "yess", "the"])
_CASE = st.sampled_from([str.lower, str.upper, str.title])
_WRAP = st.sampled_from(["{}", " {}", "{} ", '"{}"', "' {}'", "{}.", "**{}**", '" {} "', "{}:"])


@st.composite
def _token(draw) -> tuple[str, str]:
    word = draw(_WORD)
    return word, draw(_WRAP).format(draw(_CASE)(word))


@st.composite
def _positions(draw) -> list[list[tuple[str, str, float]]]:
    """Positions of (meaning, token, logprob); tokens unique within a position (the
    completion layout is a mapping token -> logprob)."""
    out = []
    for _ in range(draw(st.integers(1, 4))):
        alts: dict[str, tuple[str, float]] = {}
        for _ in range(draw(st.integers(1, 5))):
            meaning, token = draw(_token())
            alts[token] = (meaning, draw(st.floats(-30, 0)))
        out.append([(m, t, lp) for t, (m, lp) in alts.items()])
    return out


def _by_hand(positions: list[list[tuple[str, str, float]]]) -> float:
    """The last position with a yes or no token: yes mass over yes-or-no mass."""
    for alts in reversed(positions):
        yes = sum(math.exp(lp) for m, _, lp in alts if m == "yes")
        no = sum(math.exp(lp) for m, _, lp in alts if m == "no")
        if any(m in ("yes", "no") for m, _, _ in alts):
            return yes / (yes + no) if yes + no > 0 else math.nan
    return math.nan


def _chat(positions):
    return {"content": [{"token": alts[0][1], "logprob": alts[0][2],
                         "top_logprobs": [{"token": t, "logprob": lp} for _, t, lp in alts]}
                        for alts in positions]}


def _completion(positions):
    return {"tokens": [alts[0][1] for alts in positions],
            "top_logprobs": [{t: lp for _, t, lp in alts} for alts in positions]}


def _same(a: float, b: float) -> bool:
    return (math.isnan(a) and math.isnan(b)) or math.isclose(a, b, rel_tol=1e-9, abs_tol=1e-12)


@settings(max_examples=200, deadline=None)
@given(_positions(), st.randoms(use_true_random=False))
def test_token_belief_is_the_yes_share_at_the_last_yes_or_no_position(positions, rnd):
    expected = _by_hand(positions)
    chat, completion = token_belief(_chat(positions)), token_belief(_completion(positions))
    assert _same(chat, expected) and _same(completion, expected)
    if not math.isnan(chat):
        assert 0.0 <= chat <= 1.0
    shuffled = [rnd.sample(alts, len(alts)) for alts in positions]  # order within a position
    assert _same(token_belief(_chat(shuffled)), expected)


@given(_positions())
def test_token_belief_mirrors_when_yes_and_no_swap(positions):
    swap = {"yes": "no", "no": "yes"}
    mirrored = [[(swap.get(m, m), t.replace("yes", "\0").replace("YES", "\1")
                  .replace("Yes", "\2").replace("no", "yes").replace("NO", "YES")
                  .replace("No", "Yes").replace("\0", "no").replace("\1", "NO")
                  .replace("\2", "No"), lp) for m, t, lp in alts] for alts in positions]
    if any(len({t for _, t, _ in alts}) < len(alts) for alts in mirrored):
        return  # a swap made two tokens equal ('nope' and 'yespe' cannot; guard anyway)
    a, b = token_belief(_chat(positions)), token_belief(_chat(mirrored))
    assert _same(b, 1 - a) or (math.isnan(a) and math.isnan(b))


_JSON = st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=5),
                     lambda inner: st.lists(inner, max_size=3)
                     | st.dictionaries(st.text(max_size=3), inner, max_size=3),
                     max_leaves=8)


def _reordered(value, rnd):
    if isinstance(value, dict):
        items = list(value.items())
        rnd.shuffle(items)
        return {k: _reordered(v, rnd) for k, v in items}
    if isinstance(value, list):
        return [_reordered(v, rnd) for v in value]
    return value


@given(st.dictionaries(st.text(max_size=4), _JSON, max_size=5), st.integers(0, 2**16))
def test_cache_key_is_free_of_key_order_at_any_depth(identity, seed):
    assert cache_key(_reordered(identity, random.Random(seed))) == cache_key(identity)


def _typed(value):
    """The value with every leaf tagged by its type (``True == 1`` in Python, not in JSON)."""
    if isinstance(value, dict):
        return {k: _typed(v) for k, v in value.items()}
    if isinstance(value, list):
        return [_typed(v) for v in value]
    return (type(value).__name__, value)


@given(st.dictionaries(st.text(max_size=4), _JSON, max_size=4),
       st.dictionaries(st.text(max_size=4), _JSON, max_size=4))
def test_cache_keys_differ_when_the_identities_differ(a, b):
    assert (cache_key(a) == cache_key(b)) == (_typed(a) == _typed(b))


_TEXT = st.text(st.characters(codec="utf-8", exclude_categories=("Cs",)), min_size=1,
                max_size=20).map(lambda s: s.strip() or "x")


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(sorted(template_names())), st.data())
def test_every_field_is_rendered_verbatim(name, data):
    """Field values are text, never format strings: braces, quotes and any script come
    through as given, each placeholder's value in the messages."""
    template = get_template(name)
    fields = {p: data.draw(_TEXT, label=p) for p in sorted(template.placeholders)
              if p not in ("answer_lines", "labels", "n_labels", "example_lines", "states")}
    if "states" in template.placeholders or template.labels is None:  # labels from states
        fields["states"] = data.draw(st.lists(_TEXT, min_size=2, max_size=3,
                                              unique_by=lambda s: s.lower()))
    text = "\n".join(m["content"] for m in template.render(**fields))
    for key, value in fields.items():
        for part in (value if isinstance(value, list) else [value]):
            assert part in text, key
