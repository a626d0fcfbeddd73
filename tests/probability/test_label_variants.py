"""Probability checks: Series paired by index, cell labels typed two ways, reserved
``by`` names and LIE ids typed differently in the two tables (audit items 6, 7, 10)."""

import re

import numpy as np
import pandas as pd
import pytest

import coherence


def _pairs(n=40, seed=0):
    rng = np.random.default_rng(seed)
    pa = rng.uniform(0.1, 0.9, n).round(2)
    return pd.DataFrame({
        "pair": [f"p{i}" for i in range(n)], "category": rng.choice(["strong", "weak"], n),
        "p_a": pa, "p_a_given_b1": np.clip(pa + 0.1, 0, 1).round(2),
        "p_a_given_b0": np.clip(pa - 0.1, 0, 1).round(2),
        "a_outcome": rng.integers(0, 2, n).astype(float),
        "b_outcome": rng.integers(0, 2, n).astype(float), "model": "m"})


@pytest.mark.parametrize("column", ["category", "model"])
def test_conditional_forecasting_cell_labels_typed_two_ways_raise(column):
    d = _pairs()
    d.loc[:4, column] = d.loc[:4, column].str.capitalize()
    with pytest.raises(ValueError, match=rf"Column '{column}' .*differ by more than case"):
        coherence.conditional_forecasting(d, n_resamples=9, rng=0)


@pytest.mark.parametrize("by", ["_cell", "p_a", "a_outcome"])
def test_conditional_forecasting_by_a_reserved_column_raises(by):
    d = _pairs().assign(_cell="x")
    with pytest.raises(ValueError, match=re.escape(
            "The 'by' parameter of conditional_forecasting must be a category column other "
            "than the pair, probability, outcome and failed columns")):
        coherence.conditional_forecasting(d, by=by, n_resamples=9, rng=0)


@pytest.mark.parametrize("by", ["n", "win_rate", "sd_improvement"])
def test_conditional_forecasting_by_a_column_of_the_result_raises(by):
    # a category column named as a column of the result's table failed deep inside with
    # KeyError "['n'] not in index" (the per-group count overwrote the category)
    d = _pairs().rename(columns={"category": by})
    with pytest.raises(ValueError, match=re.escape(
            "The 'by' parameter of conditional_forecasting must be a category column not "
            f"named as a column of the result's table (n, mean_improvement, ci_low, ..., "
            f"n_bayes); rename it; got '{by}'")):
        coherence.conditional_forecasting(d, by=by, n_resamples=9, rng=0)


@pytest.mark.parametrize(("check", "args"), [
    (coherence.negation_check, 2), (coherence.update_direction, 3),
    (coherence.total_probability_check, 3), (coherence.conditional_tuple_check, 3),
])
def test_series_with_other_indexes_are_not_paired_by_position(check, args):
    first = pd.Series([0.9, 0.5, 0.2], index=["x", "y", "z"])
    other = pd.Series([0.1, 0.5, 0.8], index=["z", "y", "x"])
    inputs = [first, other, first][:args]
    with pytest.raises(ValueError, match="must be a Series with the same index as 'p_a'"):
        check(*inputs)
    aligned = [first, other.loc[first.index], first][:args]
    check(*aligned)  # the same Series, aligned: runs


def test_bayes_check_series_alignment():
    s = pd.Series([0.5, 0.4], index=["q1", "q2"])
    t = pd.Series([0.5, 0.4], index=["q2", "q1"])
    with pytest.raises(ValueError, match="'p_b_given_a0' parameter of bayes_check"):
        coherence.bayes_check(s, s, s, s, s, t)


def test_lie_ids_typed_differently_in_the_two_tables_raise():
    e = pd.DataFrame({"context": [1, 1, 2, 2], "variable": ["z"] * 4, "state": [0, 1, 0, 1],
                      "p_y_given_x": [0.5, 0.5, 0.2, 0.2], "p_y_given_xz": [0.3, 0.8, 0.1, 0.4],
                      "p_z_given_x": [0.6, 0.4, 0.5, 0.5]})
    b = e.assign(p_y_given_x=[0.52, 0.52, 0.27, 0.27], context=e.context.astype(str))
    with pytest.raises(ValueError, match=re.escape(
            "iterated_expectation_check: column 'context' holds numbers in 'elicited' but "
            "text in 'baseline' (the same labels typed two ways: '1' / 1; '2' / 2)")):
        coherence.iterated_expectation_check(e, baseline=b, n_resamples=9, rng=0)
    mixed = e.astype({"context": object})
    mixed.loc[0, "context"] = "1"
    with pytest.raises(ValueError, match=r"Column 'context' .*'1' / 1"):
        coherence.iterated_expectation_check(mixed, baseline=e, n_resamples=9, rng=0)


@pytest.mark.parametrize("column", ["model", "category", "pair"])
def test_conditional_forecasting_bools_beside_their_text_raise(column):
    # True in the rows built in Python, 'True' in those read back from a CSV: one cell,
    # category or pair; the model column was split into two cells without a word
    d = _pairs()
    d[column] = d[column].astype(object)
    d.loc[:, column] = d[column] if column == "pair" else True
    d.loc[0, column] = "True"
    if column == "pair":
        d.loc[1, column] = True
    with pytest.raises(ValueError, match=rf"Column '{column}' .*booleans or their text"):
        coherence.conditional_forecasting(d, n_resamples=9, rng=0)


def test_pairs_power_category_bools_beside_their_text_raise():
    d = _pairs().assign(category=True).drop(columns="model")
    d["category"] = d["category"].astype(object)
    d.loc[:9, "category"] = "True"  # these ten rows were left out of category=True
    with pytest.raises(ValueError, match=r"Column 'category' .*booleans or their text"):
        coherence.pairs_power(d, category=True, n=40)


def test_conditional_forecasting_outcome_written_as_text_in_one_run_is_one_outcome():
    # run r2 read back from a CSV as text: '1' is the resolution 1 of run r1
    d = pd.concat([_pairs().assign(run="r1"), _pairs().assign(run="r2")], ignore_index=True)
    text = d.copy()
    text["a_outcome"] = text["a_outcome"].astype(object)
    r2 = text["run"] == "r2"
    text.loc[r2, "a_outcome"] = text.loc[r2, "a_outcome"].map(lambda v: str(int(v)))
    want = coherence.conditional_forecasting(d, n_resamples=99, rng=0).table
    got = coherence.conditional_forecasting(text, n_resamples=99, rng=0).table
    pd.testing.assert_frame_equal(got, want)
    text.loc[40, "a_outcome"] = str(1 - int(d.loc[0, "a_outcome"]))  # a real clash still raises
    with pytest.raises(ValueError, match=r"Column 'a_outcome' .*the same on every row"):
        coherence.conditional_forecasting(text, n_resamples=99, rng=0)


@pytest.mark.parametrize("method", ["parametric", "resampling"])
def test_consistency_noise_test_ignores_the_category_order_of_the_set_column(method):
    rng = np.random.default_rng(3)
    rows = []
    for s in range(30):
        p = rng.uniform(0.1, 0.9)
        for rep in range(4):
            rows.append({"set": f"s{s:02d}", "role": "P", "repetition": rep,
                         "probability": np.clip(p + rng.normal(0, 0.03), 0, 1)})
            rows.append({"set": f"s{s:02d}", "role": "not_P", "repetition": rep,
                         "probability": np.clip(1 - p + rng.normal(0, 0.03), 0, 1)})
    d = pd.DataFrame(rows)
    cat = d.assign(set=pd.Categorical(d["set"], categories=[*sorted(set(d["set"]))[::-1], "x"]))
    want = coherence.consistency_noise_test(d, "negation", method=method, n_resamples=199,
                                            rng=1)
    got = coherence.consistency_noise_test(cat, "negation", method=method, n_resamples=199,
                                           rng=1)
    assert got.pvalue == pytest.approx(want.pvalue, rel=1e-9)
    assert got.statistic == pytest.approx(want.statistic, rel=1e-9)
