"""RunOptions: the options the three runners share, written once."""

from __future__ import annotations

import dataclasses
from pathlib import Path

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence
from elicitation import ResponseCache
from elicitation import RunOptions
from elicitation import SimulatedClient
from elicitation import run
from elicitation import run_lie
from elicitation import run_pairs
from elicitation._options import merge_options
from tests._strategies import named_invalid

from ._shared import QUESTION
from ._shared import make_contexts

FIELDS = [f.name for f in dataclasses.fields(RunOptions)]


def test_the_defaults_are_the_runners_documented_defaults():
    assert RunOptions() == RunOptions(concurrency=8, cache="elicitation.sqlite", max_retries=5,
                                      backoff=0.5, max_backoff=30.0, max_failures=50,
                                      sum_tolerance=0.02, progress=None)
    with pytest.raises(dataclasses.FrozenInstanceError):
        RunOptions().concurrency = 2  # type: ignore[misc]


def test_a_keyword_and_an_options_field_ask_the_same():
    contexts = make_contexts(6)
    agent = coherence.Agent.rational()
    by_keyword = run(contexts, SimulatedClient(agent, contexts, rng=1), question=QUESTION,
                     repetitions=2, cache=None, progress=False)
    by_options = run(contexts, SimulatedClient(agent, contexts, rng=1), question=QUESTION,
                     repetitions=2, options=RunOptions(cache=None, progress=False))
    pd.testing.assert_frame_equal(by_keyword.data, by_options.data)
    assert len(by_keyword.data) == 12


def test_a_keyword_replaces_that_field_only(tmp_path: Path):
    base = RunOptions(concurrency=3, cache=tmp_path / "a.sqlite", max_failures=7)
    merged = merge_options(base, {"concurrency": 1}, "run")
    assert merged == dataclasses.replace(base, concurrency=1)
    assert merged.max_failures == 7 and merged.cache == tmp_path / "a.sqlite"
    assert base.concurrency == 3  # the caller's options are not changed


def test_a_given_cache_is_used_and_left_open(tmp_path: Path):
    contexts = make_contexts(4)
    cache = ResponseCache(tmp_path / "c.sqlite")
    client = SimulatedClient(coherence.Agent.rational(), contexts, rng=0)
    run(contexts, client, question=QUESTION, repetitions=1,
        options=RunOptions(cache=cache, progress=False))
    assert len(cache) == 8  # one belief and one decision per context, still readable
    cache.close()


@pytest.mark.parametrize(("runner", "own"), [
    (run, {}), (run_pairs, {}), (run_lie, {"auxiliary_variable_name": "x", "states": "ab"})])
def test_an_unknown_keyword_is_named_with_the_closest_field(runner, own):
    with pytest.raises(TypeError, match=rf"{runner.__name__}\(\) got unexpected keyword "
                                        r"argument\(s\) \['cahce'\] \(did you mean 'cache'\?\)"):
        runner(pd.DataFrame(), None, cahce=None, **own)


def test_a_bad_value_names_the_field_and_who_was_given_it():
    with pytest.raises(ValueError, match="'concurrency' parameter of run must be an int >= 1"):
        run(make_contexts(2), None, question=QUESTION, concurrency=0)
    with pytest.raises(ValueError, match="'concurrency' parameter of RunOptions must be"):
        RunOptions(concurrency=0)
    with pytest.raises(TypeError, match="'cache' parameter of run_pairs must be a path"):
        run_pairs(pd.DataFrame(), None, cache=3)
    with pytest.raises(TypeError, match="'progress' parameter of RunOptions must be a bool"):
        RunOptions(progress="yes")  # type: ignore[arg-type]
    with pytest.raises(TypeError, match="'options' parameter of run_lie must be a RunOptions"):
        run_lie(pd.DataFrame(), None, auxiliary_variable_name="x", states=["a", "b"],
                options={"cache": None})


VALID = {
    "concurrency": st.integers(1, 64),
    "cache": st.sampled_from([None, "x.sqlite"]),
    "max_retries": st.integers(0, 10),
    "backoff": st.floats(0, 5),
    "max_backoff": st.floats(0, 60),
    "max_failures": st.integers(0, 1000),
    "sum_tolerance": st.floats(0, 1, exclude_max=True),
    "progress": st.sampled_from([None, True, False]),
}
INVALID = {
    "concurrency": st.one_of(st.integers(-5, 0), st.just(2.5), st.just(True)),
    "max_retries": st.one_of(st.integers(-5, -1), st.just("3")),
    "backoff": st.one_of(st.floats(max_value=-1e-9), st.just(float("nan"))),
    "max_backoff": st.just(float("inf")),
    "max_failures": st.integers(-5, -1),
    # 1.0 was accepted, then refused by parse_probabilities after every call was made
    "sum_tolerance": st.one_of(st.just(1.0), st.floats(1.0001, 10),
                               st.floats(max_value=-1e-9)),
    "progress": st.sampled_from(["yes", 1, 0.0]),
    "cache": st.sampled_from([3, 1.5, b"x"]),
}


@settings(max_examples=150, deadline=None)
@given(st.fixed_dictionaries({}, optional=VALID))
def test_valid_overrides_merge_as_replace(overrides):
    base = RunOptions(concurrency=2, cache=None)
    assert merge_options(base, overrides, "run") == dataclasses.replace(base, **overrides)


@settings(max_examples=150, deadline=None)
@given(named_invalid(INVALID))
def test_an_invalid_value_is_refused_with_its_name(case):
    name, value = case
    with pytest.raises((TypeError, ValueError), match=f"'{name}' parameter of run_pairs"):
        merge_options(None, {name: value}, "run_pairs")
    with pytest.raises((TypeError, ValueError), match=f"'{name}' parameter of RunOptions"):
        RunOptions(**{name: value})


def test_a_sum_tolerance_of_one_is_refused_before_any_call():
    with pytest.raises(ValueError, match=r"'sum_tolerance' parameter of run must be a finite "
                       r"float in \[0.0, 1.0\); got 1.0"):
        merge_options(None, {"sum_tolerance": 1.0}, "run")


def test_every_field_is_documented_once():
    doc = RunOptions.__doc__ or ""
    for name in FIELDS:
        assert f"\n    {name}" in doc or f", {name}" in doc, name
    assert "concurrency : int" not in (run.__doc__ or "")  # documented once, on RunOptions
