"""coherence.elicitation_diagnostics: what the stated beliefs say, degenerate tables flagged."""

import math
import warnings

import numpy as np
import pandas as pd
import pytest

import coherence
from coherence import DegenerateDataWarning
from coherence import ElicitationDiagnostics
from coherence import elicitation_diagnostics


@pytest.fixture(scope="module")
def healthy():
    return coherence.simulate("rational", n_contexts=60, n_repetitions=3, rng=3).data


def test_healthy_study_is_not_degenerate(healthy):
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateDataWarning)
        d = elicitation_diagnostics(healthy)
    assert isinstance(d, ElicitationDiagnostics)
    assert not d.degenerate and d.degenerate_reason == "" and d.warning == ""
    assert d.n_obs == len(healthy) and d.n_distinct > 20
    assert d.association_with == "truth" and d.association > 0.8
    assert sum(d.action_counts.values()) == len(healthy)
    assert "WARNING" not in d.summary()


def test_all_at_the_example_value_is_degenerate(healthy):
    with pytest.warns(DegenerateDataWarning, match="cannot speak to coherence"):
        d = elicitation_diagnostics(healthy.assign(belief=0.5))
    assert d.degenerate and d.n_distinct == 1 and d.share_example == d.share_half == 1.0
    assert math.isnan(d.association)  # a constant belief has no rank correlation
    assert "every stated belief is 0.5" in d.degenerate_reason
    assert d.summary().splitlines()[1].startswith("WARNING: Degenerate elicitation")
    frame = d.to_frame()
    assert bool(frame["degenerate"].iloc[0]) and frame["share_example"].iloc[0] == 1.0


def test_near_constant_beliefs_are_one_value():
    # the small model's 0.50 and 0.501: one value up to rounding
    data = pd.DataFrame({"belief": [0.5] * 8 + [0.501] * 2})
    with pytest.warns(DegenerateDataWarning):
        d = elicitation_diagnostics(data)
    assert d.degenerate and d.n_distinct == 2 and "[0.5, 0.501]" in d.degenerate_reason


def test_most_rows_at_the_example_value_is_degenerate():
    data = pd.DataFrame({"belief": [0.5] * 6 + [0.1, 0.3, 0.8, 0.9]})
    with pytest.warns(DegenerateDataWarning, match="60% of the stated beliefs"):
        d = elicitation_diagnostics(data)
    assert d.degenerate and d.share_example == pytest.approx(0.6)
    # the threshold is the caller's, and the example value is the prompt's
    assert not elicitation_diagnostics(data, max_example_share=0.7).degenerate
    other = elicitation_diagnostics(data, example_value=0.25)
    assert not other.degenerate and other.share_example == 0 and other.share_half == 0.6


def test_heaping_and_mode():
    data = pd.DataFrame({"belief": [0.1, 0.2, 0.2, 0.2, 0.35, 0.7, 0.9, 0.95]})
    d = elicitation_diagnostics(data)
    assert d.modal_belief == 0.2 and d.modal_share == pytest.approx(3 / 8)
    assert d.share_tenths == pytest.approx(6 / 8)
    assert d.belief_std == pytest.approx(np.std(data["belief"], ddof=1))


def test_association_with_truth_else_outcome_and_token_belief():
    truth = np.linspace(0.05, 0.95, 10)
    data = pd.DataFrame({"belief": truth[::-1], "outcome": [0, 0, 0, 1, 0, 1, 1, 1, 1, 1],
                         "token_belief": truth})
    d = elicitation_diagnostics(data.assign(truth=truth))
    assert d.association_with == "truth" and d.association == pytest.approx(-1.0)
    assert d.token_association == pytest.approx(1.0)
    no_truth = elicitation_diagnostics(data)
    assert no_truth.association_with == "outcome" and no_truth.association < 0
    bare = elicitation_diagnostics(data[["belief"]])
    assert bare.association_with == "" and math.isnan(bare.association)
    assert bare.action_counts == {} and math.isnan(bare.token_association)


def test_set_aside_by_reason():
    data = pd.DataFrame({"belief": [0.1, 0.4, 0.8]})
    rows = pd.DataFrame({"reason": ["bad_sum", "truncated", "bad_sum"]})
    counts = pd.DataFrame({"quantity": ["belief", "action", "belief"],
                           "reason": ["bad_sum", "truncated", "truncated"], "count": [1, 2, 3]})
    assert dict(elicitation_diagnostics(data, set_aside=rows).set_aside) == {
        "bad_sum": 2, "truncated": 1}
    d = elicitation_diagnostics(data, set_aside=counts)
    assert dict(d.set_aside) == {"bad_sum": 1, "truncated": 5} and d.n_set_aside == 6
    assert d.to_frame()["set_aside"].iloc[0] == "bad_sum 1, truncated 5"
    assert list(d.table["section"]) == ["set aside", "set aside"]
    assert dict(elicitation_diagnostics(data, set_aside={"bad_sum": 1}).set_aside) == {
        "bad_sum": 1}
    assert elicitation_diagnostics(data).n_set_aside == 0


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"set_aside": pd.DataFrame({"why": ["x"]})}, ValueError, "'reason' column"),
    ({"set_aside": {"bad_sum": -1}}, ValueError, "count"),
    ({"set_aside": [1, 2]}, TypeError, "set_aside"),
    ({"set_aside": pd.DataFrame({"reason": ["x"], "count": [0.5]})}, ValueError, "count"),
    # the offending counts as given (they read "got []" and "got [nan]" before)
    ({"set_aside": pd.DataFrame({"reason": ["x", "y"], "count": [1.5, 2]})}, ValueError,
     r"'count' column of counts \(int >= 0\); got \[1\.5\]"),
    ({"set_aside": pd.DataFrame({"reason": ["x", "y"], "count": ["abc", 2]})}, ValueError,
     r"got \['abc'\]"),
    ({"example_value": 1.5}, ValueError, "example_value"),
    ({"max_example_share": -0.1}, ValueError, "max_example_share"),
    ({"belief": "nope"}, ValueError, "nope"),
    ({"truth": 3}, TypeError, "truth"),
])
def test_validation(kwargs, error, match):
    with pytest.raises(error, match=match):
        elicitation_diagnostics(pd.DataFrame({"belief": [0.2, 0.6]}), **kwargs)


@pytest.mark.parametrize("role", ["action", "truth", "outcome", "token_belief"])
def test_an_optional_column_named_on_purpose_must_exist(role):
    """A misspelt optional column would silently leave the action mix or the association
    out; under its default name it may be absent."""
    data = pd.DataFrame({"belief": [0.2, 0.6, 0.7], "action": ["yes", "no", "yes"]})
    with pytest.raises(ValueError,
                       match=rf"column 'misspelt' \(the '{role}' column\) not found"):
        elicitation_diagnostics(data, **{role: "misspelt"})
    assert elicitation_diagnostics(data.drop(columns="action")).action_counts == {}


def test_beliefs_outside_zero_one_and_empty_table():
    with pytest.raises(ValueError, match="belief"):
        elicitation_diagnostics(pd.DataFrame({"belief": [0.2, 1.6]}))
    with pytest.raises(ValueError):
        elicitation_diagnostics(pd.DataFrame({"belief": pd.Series([], dtype=float)}))


@pytest.mark.parametrize(("role", "values", "match"), [
    # a yes/no text outcome gave association NaN without a word
    ("outcome", ["no", "no", "yes", "yes", "yes", "no"],
     r"Column 'outcome' .*must be binary .*6 offending rows \(first: row 0 = 'no'"),
    ("outcome", [0, 0, 1, 1, 2, 0], r"'outcome' .*binary.*row 4 = 2"),
    ("truth", [0.1, "abc", 0.5, 0.6, 0.9, 0.2], r"Column 'truth' .*numeric.*row 1 = 'abc'"),
    ("truth", [0.1, 0.3, 1.5, 0.6, 0.9, 0.2], r"'truth' .*probabilities.*row 2 = 1\.5"),
    ("token_belief", [0.1, 0.3, "x", 0.6, 0.9, 0.2], r"'token_belief' .*row 2 = 'x'"),
])
def test_association_columns_that_are_not_numbers_raise(role, values, match):
    data = pd.DataFrame({"belief": [0.1, 0.3, 0.5, 0.7, 0.9, 0.2], role: values})
    with pytest.raises(ValueError, match=match):
        elicitation_diagnostics(data)


@pytest.mark.parametrize("role", ["truth", "outcome", "token_belief"])
def test_missing_association_values_are_counted_and_warned(role):
    """A missing truth, outcome or token belief was dropped from the correlations
    without a word."""
    values = {"truth": [0.1, 0.3, 0.5, np.nan, 0.9, 0.2],
              "outcome": [False, False, True, None, True, False],
              "token_belief": [0.1, 0.3, 0.5, np.nan, 0.9, 0.2]}[role]
    data = pd.DataFrame({"belief": [0.1, 0.3, 0.5, 0.7, 0.9, 0.2], role: values})
    if role == "token_belief":
        data["truth"] = [0.1, 0.3, 0.5, 0.7, 0.9, 0.2]
    with pytest.warns(coherence.SkippedRecordsWarning,
                      match=rf"column '{role}' is missing on 1 of 6 rows \(first: row 3\)"):
        d = elicitation_diagnostics(data)
    got = d.token_association if role == "token_belief" else d.association
    assert got > 0.8


def test_a_missing_value_of_a_column_no_correlation_reads_is_not_warned_about():
    """With a truth column the outcome enters no correlation, nor does a token belief
    without a truth or an outcome: a missing value of theirs leaves no row out, but the
    SkippedRecordsWarning said it did ("column 'outcome' is missing on 1 of 6 rows ...
    Those rows are left out of the rank correlations") while association used all 6."""
    belief = [0.1, 0.3, 0.5, 0.7, 0.9, 0.2]
    data = pd.DataFrame({"belief": belief, "truth": belief,
                         "outcome": [0, 0, 1, None, 1, 0]})
    d = elicitation_diagnostics(data)  # filterwarnings=error: no warning
    assert d.association_with == "truth" and d.association == 1.0
    alone = pd.DataFrame({"belief": belief, "token_belief": [0.1, None, 0.5, 0.7, 0.9, 0.2]})
    assert np.isnan(elicitation_diagnostics(alone).token_association)
    both = data.assign(truth=[0.1, 0.3, 0.5, 0.7, None, 0.2])  # the truth's gap is warned
    with pytest.warns(coherence.SkippedRecordsWarning, match="column 'truth' is missing on 1 "
                      r"of 6 rows \(first: row 4\)\. Those rows") as caught:
        elicitation_diagnostics(both)
    assert not any("'outcome'" in str(w.message) for w in caught)


def test_a_column_without_values_is_not_used_and_leaves_no_row_out():
    """An empty truth column gives way to the outcome, named in ``association_with``; an
    empty token_belief column (an elicited table without log-probabilities) is not used.
    Neither leaves a row out of anything, so neither warns (filterwarnings=error)."""
    data = pd.DataFrame({"belief": [0.1, 0.3, 0.5, 0.7], "truth": [np.nan] * 4,
                         "outcome": [0, 0, 1, 1], "token_belief": [np.nan] * 4})
    d = elicitation_diagnostics(data)
    assert d.association_with == "outcome" and d.association > 0.8
    assert np.isnan(d.token_association)


def test_action_labels_that_print_alike_are_counted_apart():
    # before: str() pooled 1 and '1' (True and 'True') into one count of 11
    table = pd.DataFrame({"belief": np.linspace(0.0, 1.0, 14),
                          "action": [1] * 6 + ["1"] * 5 + [True, "True", None]})
    d = coherence.elicitation_diagnostics(table)
    assert dict(d.action_counts) == {"1": 6, "'1'": 5, "True": 1, "'True'": 1,
                                     "(missing)": 1}
    assert d.to_frame()["actions"].iloc[0] == "1 6, '1' 5, True 1, 'True' 1, (missing) 1"
    plain = coherence.elicitation_diagnostics(table.assign(action=["no"] * 8 + ["yes"] * 6))
    assert dict(plain.action_counts) == {"no": 8, "yes": 6}
