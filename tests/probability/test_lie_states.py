"""``iterated_expectation_check`` refuses tables whose listed states of z differ between
``elicited`` and ``baseline``: a state missing from one was counted as probability 0 there."""

from __future__ import annotations

import re
import warnings

import numpy as np
import pandas as pd
import pytest

from coherence import iterated_expectation_check


def _tables() -> tuple[pd.DataFrame, pd.DataFrame]:
    base = pd.DataFrame({"context": [1, 1, 2, 2], "variable": ["z"] * 4, "state": [0, 1, 0, 1],
                         "p_y_given_x": [0.5, 0.5, 0.2, 0.2],
                         "p_y_given_xz": [0.3, 0.8, 0.1, 0.3],
                         "p_z_given_x": [0.6, 0.4, 0.5, 0.5]})
    eli = base.assign(p_y_given_x=[0.52, 0.52, 0.21, 0.21], p_y_given_xz=[0.3, 0.8, 0.1, 0.35])
    return eli, base


def _check(eli: pd.DataFrame, base: pd.DataFrame):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return iterated_expectation_check(eli, baseline=base, n_resamples=99, rng=0)


def test_state_missing_from_elicited_raises():
    """The audit's case: the elicited table lost the state-1 row of context 2, which was
    read as P(z=1|x) = 0 (agent error 0.16 instead of 0.015)."""
    eli, base = _tables()
    with pytest.raises(ValueError, match=re.escape(
            "iterated_expectation_check: the states of z listed in 'elicited' and 'baseline' "
            "differ for 1 (context, variable) unit(s), 1 row(s) (first: (2, 'z') state 1 only "
            "in 'baseline'); every state of z must be listed in both")):
        _check(eli.drop(index=3), base)


def test_state_missing_from_baseline_or_relabelled_raises():
    eli, base = _tables()
    with pytest.raises(ValueError, match=r"\(1, 'z'\) state 0 only in 'baseline'"):
        _check(eli.drop(index=0), base)
    with pytest.raises(ValueError, match=r"\(1, 'z'\) state 1 only in 'elicited'"):
        _check(eli, base.drop(index=1))
    # the same states under other labels ("1" is not 1): the column's two types named
    relabelled = base.assign(state=base["state"].astype(str))
    with pytest.raises(ValueError, match=r"column 'state' holds numbers in 'elicited' but "
                                         r"text in 'baseline'.*'0' / 0; '1' / 1"):
        _check(eli, relabelled)


def test_matching_states_and_extra_baseline_units_pass():
    eli, base = _tables()
    ref = _check(eli, base)
    # the baseline may hold units elicited does not ask about, with any states
    extra = pd.DataFrame({"context": [3, 3, 3], "variable": ["z"] * 3, "state": [0, 1, 2],
                          "p_y_given_x": [0.4] * 3, "p_y_given_xz": [0.2, 0.5, 0.6],
                          "p_z_given_x": [0.2, 0.3, 0.5]})
    more = _check(eli, pd.concat([base, extra], ignore_index=True))
    assert more.table.equals(ref.table)
    # row order within either table does not matter
    shuffled = _check(eli.iloc[::-1], base.sample(frac=1.0, random_state=0))
    np.testing.assert_allclose(shuffled.table.sort_values("context")["ratio"],
                               ref.table.sort_values("context")["ratio"])


def test_true_and_1_in_the_state_column_name_the_clash():
    eli, base = _tables()
    # within one unit: the generic label check names the clash (True equals 1)
    clash = eli.assign(state=pd.Series([0, True, 0, 1], dtype=object))
    with pytest.raises(ValueError, match=r"Column 'state' .* booleans or numbers, not both "
                       r"\(True equals 1"):
        _check(clash, base)
    # True in 'elicited', 1 in 'baseline': the message said only "holds bool in 'elicited'
    # but numbers in 'baseline'", the clash unnamed (unique() pools True and 1); it names it
    flags = eli.assign(state=pd.Series([False, True, False, True], dtype=object))
    with pytest.raises(ValueError, match=r"column 'state' holds bool in 'elicited' but "
                       r"numbers in 'baseline' \(the same labels typed two ways: False / 0; "
                       r"True / 1\)"):
        _check(flags, base)
    # a state written twice as equal numbers (1 and 1.0): the rule says so and shows it
    twice = eli.assign(state=pd.Series([0, 1, 1.0, 1], dtype=object))
    with pytest.raises(ValueError, match=r"Column 'state' .* must be unique within each "
                       r"\(context, variable\) \(a state listed twice, or written twice as "
                       r"equal numbers, 1 and 1.0\); 1 offending row \(first: row 3 = 1\)"):
        _check(twice.assign(context=[1, 1, 2, 2]), base)


def _bool_states(states: list[object]) -> tuple[pd.DataFrame, pd.DataFrame]:
    eli = pd.DataFrame({"context": [1, 1, 1, 2, 2], "variable": ["z"] * 5,
                        "state": pd.Series(states, dtype=object),
                        "p_y_given_x": [0.5, 0.5, 0.5, 0.4, 0.4],
                        "p_y_given_xz": [0.7, 0.2, 0.7, 0.6, 0.1],
                        "p_z_given_x": [0.6, 0.4, 0.6, 0.6, 0.4]})
    return eli, eli.assign(p_y_given_x=[0.45] * 3 + [0.38] * 2)


def test_a_state_as_a_bool_and_as_its_text_is_refused():
    """True and 'True' in one unit were two states: a coherent unit (error 0) listing its
    state True twice, once read back as text, had agent error 0.42 and P(z|x) summing to
    1.6, and the median ratio was 0.447 instead of 0, without a word (True listed twice
    alike is refused as a duplicate)."""
    eli, base = _bool_states([True, False, "True", True, False])
    with pytest.raises(ValueError, match=r"Column 'state' \(input to iterated_expectation_"
                       r"check, in 'elicited'\) must hold booleans or their text, not "
                       r"both .*found booleans in 4 rows and 'True'/'False' text in 1 "
                       r"row.*1 offending row \(first: row 2 = 'True'\)"):
        _check(eli, base)
    with pytest.raises(ValueError, match=r"Column 'state' .* booleans or their text"):
        _check(*_bool_states([True, " false ", "True", True, False]))
    with pytest.raises(ValueError, match=r"Column 'context' .* booleans or their text"):
        _check(eli.assign(state=[1, 0, 2, 1, 0], context=pd.Series([True, True, True, "True",
                                                                   "True"], dtype=object)),
               base.assign(state=[1, 0, 2, 1, 0]))
    with pytest.raises(ValueError, match=r"Column 'state' .* unique within each"):
        _check(*_bool_states([True, False, True, True, False]))
    # 1 and '1' were refused already (the shared label check), as are True and 1
    for odd in ("1", 1):
        with pytest.raises(ValueError, match=r"Column 'state' .*(type \(text against number\)"
                           r"|booleans or numbers)"):
            _check(*_bool_states([1 if odd == "1" else True, 0 if odd == "1" else False, odd,
                                  1, 0]))
    # one way throughout, as bools or as text: accepted, the coherent unit's error 0
    for states in ([True, False, True, False], ["True", "False", "True", "False"]):
        clean = [df.drop(index=2).assign(state=pd.Series(states, dtype=object).to_numpy())
                 for df in _bool_states([True, False, "x", True, False])]
        res = _check(*clean)
        assert res.table["agent_error"].tolist() == [0.0, 0.0] and res.statistic == 0.0
