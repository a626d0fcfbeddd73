"""bayesnets: phrase tables, descriptions and questions."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import bayesnets
from bayesnets._phrases import _document


@pytest.mark.parametrize("name", ["child", "alarm", "asia", "cancer"])
def test_builtin_tables_cover_every_state(name: str) -> None:
    net = bayesnets.load(name)
    table = bayesnets.phrase_table(name)
    assert table.network == name
    assert set(table) == set(net.variables)
    for v in net.variables:
        assert set(table[v]) == set(net.states[v]), v
        for s in net.states[v]:
            text = table.phrase(v, s)
            assert text.strip() and text == text.strip() and not text.endswith(".")
        # distinct states read differently
        assert len({table[v][s] for s in net.states[v]}) == net.cardinality(v)
    # every state can be asked about
    for v in net.variables:
        for s in net.states[v]:
            q = bayesnets.question(v, s, name)
            assert q.startswith("What is the probability that ") and q.endswith("?")
    # every variable has a readable name (auxiliary_name), each different: 25 of alarm's 37
    # had none and were named by their code in the prompts ('their SAO2 is LOW')
    names = _document(name)["names"]
    assert set(names) == set(net.variables)
    assert len(set(names.values())) == len(names)
    assert all(bayesnets.auxiliary_name(name, v) == n for v, n in names.items())


def test_describe_joins_like_english() -> None:
    phrases = {"sex": {"m": "is male"}, "age": {"50-64": "is in the 50-64 age group"},
               "qrs": {"long": "QRS duration is prolonged"}}
    assert bayesnets.describe({"sex": "m", "age": "50-64", "qrs": "long"}, phrases) == \
        "is male, is in the 50-64 age group, and QRS duration is prolonged"
    assert bayesnets.describe({"sex": "m", "qrs": "long"}, phrases) == \
        "is male and QRS duration is prolonged"
    assert bayesnets.describe({"colic": "yes"}, {"colic": {"yes": "have colic"}}) == "have colic"
    # missing values are skipped; a Series works like a mapping
    row = pd.Series({"sex": "m", "age": None, "qrs": float("nan")})
    assert bayesnets.describe(row, phrases) == "is male"


def test_describe_default_table_and_rows() -> None:
    row = {"smoke": "yes", "xray": "no"}
    assert bayesnets.describe(row) == bayesnets.describe(row, "asia") == \
        "smokes and has a normal chest X-ray"
    frame = pd.DataFrame({"smoke": ["yes", "no"], "dysp": [None, "yes"]}, index=[3, 4])
    texts = bayesnets.describe_rows(frame, "asia")
    assert texts.to_dict() == {3: "smokes", 4: "does not smoke and has shortness of breath"}
    assert bayesnets.describe(row, bayesnets.load("asia")) == bayesnets.describe(row, "asia")


def test_question_predicate_and_clause() -> None:
    assert bayesnets.question("Disease", "Fallot", "child") == \
        "What is the probability that the newborn has tetralogy of Fallot?"
    assert bayesnets.question("BP", "LOW", "alarm") == \
        "What is the probability that blood pressure is low?"
    table = bayesnets.PhraseTable({"y": {1: "has colic"}}, subject="the baby")
    assert bayesnets.question("y", 1, table) == "What is the probability that the baby has colic?"
    assert bayesnets.question("y", "1", table) == bayesnets.question("y", 1, table)


def test_missing_phrase_names_variable_and_state() -> None:
    with pytest.raises(ValueError, match=r"No phrase for state 'Unknown' of variable 'XrayReport' "
                                         r"in the phrase table of network 'child'; phrased "
                                         r"states: 'Normal'"):
        bayesnets.describe({"XrayReport": "Unknown"}, "child")
    with pytest.raises(ValueError, match=r"No phrase for variable 'Sex' \(state 'm'\) in the "
                                         r"phrase table of network 'child'"):
        bayesnets.describe({"Sex": "m"}, "child")
    with pytest.raises(ValueError, match=r"The 'phrases' parameter of describe must be given .* "
                                         r"for variables \['Sex'\], which no built-in table "
                                         r"covers; got None"):
        bayesnets.describe({"Sex": "m"})


def test_phrase_validation() -> None:
    with pytest.raises(ValueError, match=r"The 'network' parameter of phrase_table must be a "
                                         r"network with a built-in phrase table"):
        bayesnets.phrase_table("hepar2")
    with pytest.raises(TypeError, match=r"The 'evidence_row' parameter of describe must be a "
                                        r"mapping or pandas Series"):
        bayesnets.describe(["yes"], "asia")
    with pytest.raises(ValueError, match=r"The 'phrases' parameter of PhraseTable must be "
                                         r"non-empty text for every \(variable, state\); got "
                                         r"\"'' for \('a', 'x'\)\""):
        bayesnets.describe({"a": "x"}, {"a": {"x": ""}})
    with pytest.raises(TypeError, match=r"The 'phrases' parameter of describe must be a "
                                        r"mapping, a PhraseTable"):
        bayesnets.describe({"a": "x"}, 3)


@pytest.mark.parametrize("bad", ["Age", [{"Age": "old"}], 3, None])
def test_describe_rows_wrong_type(bad) -> None:
    # issue 17: a string or records used to reach AttributeError
    with pytest.raises(TypeError, match=r"The 'evidence' parameter of describe_rows must be a "
                       r"pandas DataFrame"):
        bayesnets.describe_rows(bad, {"Age": {"old": "is old"}})


@pytest.mark.parametrize("kwargs, name", [({"phrases": 3}, "phrases"),
                                          ({"phrases": ["a"]}, "phrases"),
                                          ({"phrases": {}, "subject": 1}, "subject"),
                                          ({"phrases": {}, "template": None}, "template"),
                                          ({"phrases": {}, "network": 2}, "network")])
def test_phrase_table_wrong_types(kwargs, name) -> None:
    phrases = kwargs.pop("phrases")
    with pytest.raises(TypeError, match=rf"The '{name}' parameter of PhraseTable must be"):
        bayesnets.PhraseTable(phrases, **kwargs)


def test_predicate_is_the_plural_after_they():
    assert bayesnets.predicate("child", "Disease", "Fallot").startswith("have ")
    with pytest.raises(ValueError, match="plural predicate"):
        bayesnets.predicate("child", "Disease", "no such state")


def test_predicate_takes_a_network_as_documented():
    child = bayesnets.load("child")
    assert bayesnets.predicate(child, "Disease", "Fallot") == \
        bayesnets.predicate("child", "Disease", "Fallot") == "have tetralogy of Fallot"
    with pytest.raises(ValueError, match=r"network 'sachs' as a plural predicate") as err:
        bayesnets.predicate(bayesnets.load("sachs"), "Akt", "HIGH")
    assert len(str(err.value)) < 300  # the network's name, not its whole repr


def test_a_boolean_is_not_phrased_as_state_one() -> None:
    # True == 1 in Python: True was described with the phrase of state 1, and 1 with True's
    numbered = {"A": {1: "is young", 2: "is old"}}
    assert bayesnets.describe({"A": 2}, numbered) == "is old"
    assert bayesnets.describe({"A": "1"}, numbered) == "is young"
    for state in (True, np.True_):
        with pytest.raises(ValueError, match=r"No phrase for state .*True_? of variable 'A'"):
            bayesnets.describe({"A": state}, numbered)
        with pytest.raises(ValueError, match=r"No phrase for state .*True_? of variable 'A'"):
            bayesnets.question("A", state, numbered)
    flags = {"X": {True: "smokes", False: "does not smoke"}}
    assert bayesnets.describe({"X": np.False_}, flags) == "does not smoke"
    assert bayesnets.describe({"X": "True"}, flags) == "smokes"
    with pytest.raises(ValueError, match="No phrase for state 1 of variable 'X'"):
        bayesnets.describe({"X": 1}, flags)
    rows = pd.DataFrame({"A": [2, True]}, index=["r1", "r2"], dtype=object)
    with pytest.raises(ValueError, match="No phrase for state True"):
        bayesnets.describe_rows(rows, numbered)


def test_describe_refuses_a_variable_named_twice() -> None:
    # each copy was phrased: 'smokes and does not smoke'
    assert bayesnets.describe(pd.Series(["yes", "no"], index=["smoke", "xray"]),
                              "asia") == "smokes and has a normal chest X-ray"
    twice = pd.Series(["yes", "no"], index=["smoke", "smoke"])
    for row in (twice, twice.to_frame().T, {1: "yes", "1": "no"}):
        name = "'smoke'" if not isinstance(row, dict) else "'1'"
        with pytest.raises(ValueError, match=f"naming each variable once .* {name} named "
                                             r"more than once, with states .*\['yes', 'no'\]"):
            bayesnets.describe(row, "asia" if not isinstance(row, dict) else
                               {"1": {"yes": "a", "no": "b"}})


def test_phrase_table_refuses_a_variable_named_twice_as_text() -> None:
    # variables are named by text: the phrases of '1' replaced those of 1 without a word
    table = bayesnets.PhraseTable({1: {"a": "is a"}, "B": {"b": "is b"}})
    assert dict(table["1"]) == {"a": "is a"}
    with pytest.raises(ValueError, match=r"naming each variable once .* got \"\[1, '1'\]\""):
        bayesnets.PhraseTable({1: {"a": "is a"}, "1": {"b": "is b"}})


@pytest.mark.parametrize("template", [
    "What is the chance?",                           # no {phrase}: the question lost the target
    "How likely is it that they {phrase}?",          # no {subject}: 'they has colic'
    "P({subject} {phrase}) for {other}",             # KeyError 'other' at question time
    "P({subject} {phrase}) {}",                      # IndexError at question time
    "{subject}: {phrase}?",                          # KeyError 'subject' for a clause
    "{subject} {phrase}? Is {subject} ill",          # KeyError 'subject' for a clause
    "What is the probability that {subject} {phrase",  # unbalanced brace
])
def test_phrase_table_refuses_a_template_question_cannot_fill(template) -> None:
    # question() returned 'What is the chance?' (no target in it) or raised KeyError /
    # IndexError only when asked, naming no parameter
    with pytest.raises(ValueError, match=r"The 'template' parameter of PhraseTable must be a "
                                         r"question with '\{subject\} \{phrase\}' once"):
        bayesnets.PhraseTable({"c": {"y": "has colic"}}, template=template)


def test_phrase_table_template_with_literal_braces() -> None:
    table = bayesnets.PhraseTable({"c": {"y": "has colic", "n": "blood pressure is low"}},
                                  subject="the {phrase} dog",
                                  template="{{Q}} How likely is it that {subject} {phrase}?")
    assert bayesnets.question("c", "y", table) == \
        "{Q} How likely is it that the {phrase} dog has colic?"
    assert bayesnets.question("c", "n", table) == "{Q} How likely is it that blood pressure is low?"
