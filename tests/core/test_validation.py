import json
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import coherence
from coherence import _parameters
from coherence import _validation as v

#: forecast_scores warns of intervals on fewer than 6 questions (these have fewer)
FEW_QUESTIONS = "ignore:.*cover less than their level:coherence.SmallSampleWarning"


def frame():
    return pd.DataFrame(
        {"belief": [0.1, 0.5, 1.2, -0.1, 0.3, 2.0, 3.0, 4.0, 5.0],
         "action": list("yynydnyyn"),
         "outcome": [0, 1, 1, 0, 2, 0, 1, 1, 0]},
        index=[10, 11, 12, 13, 14, 15, 16, 17, 18],
    )


def test_missing_column_names_role_and_available():
    with pytest.raises(ValueError, match=re.escape(
            "ci_test: column 'p' (the 'belief' column) not found in data; available columns: "
            "'belief', 'action', 'outcome'.")):
        v.require_columns(frame(), {"belief": "p", "action": "action"}, owner="ci_test")


def test_missing_columns_all_listed():
    with pytest.raises(ValueError, match=r"'p' \(the 'belief' column\) and 'y' \(the 'outcome'"):
        v.require_columns(frame(), {"belief": "p", "outcome": "y", "group": None}, owner="f")


def test_not_numeric_names_rows():
    df = frame().assign(belief=["0.1", "x", 0.3, "y", 0.2, 0.1, 0.1, 0.1, 0.1])
    with pytest.raises(ValueError, match=re.escape(
            "Column 'belief' must be numeric; 2 offending rows (first: row 11 = 'x', "
            "row 13 = 'y').")):
        v.numeric_column(df, "belief")


def test_not_numeric_string_dtype():
    df = pd.DataFrame({"belief": pd.array(["a", "b"], dtype="string")})
    with pytest.raises(ValueError, match=r"Column 'belief' must be numeric \(got dtype string"):
        v.numeric_column(df, "belief")


def test_categorical_is_not_numeric():
    df = pd.DataFrame({"belief": pd.Categorical([0.1, 0.2])})
    with pytest.raises(ValueError, match=r"must be numeric \(got dtype category\)"):
        v.numeric_column(df, "belief")


def test_bool_is_not_numeric():
    with pytest.raises(ValueError, match=r"Column 'belief' must be numeric; got dtype bool"):
        v.numeric_column(pd.DataFrame({"belief": [True, False]}), "belief")


def test_probability_outside_unit_interval():
    with pytest.raises(ValueError, match=re.escape(
            "Column 'belief' (input to ci_test) must hold probabilities in [0, 1]; 6 offending "
            "rows (first: row 12 = 1.2, row 13 = -0.1, row 15 = 2.0, row 16 = 3.0, "
            "row 17 = 4.0, ...).")):
        v.probability_column(frame(), "belief", owner="ci_test")


def test_nan_present():
    df = pd.DataFrame({"belief": [0.1, np.nan, 0.2, None]}, index=list("abcd"))
    with pytest.raises(ValueError, match=re.escape(
            "Column 'belief' must not contain NaN or missing values; 2 offending rows "
            "(first: row 'b', row 'd').")):
        v.probability_column(df, "belief")


def test_nan_allowed_when_asked():
    df = pd.DataFrame({"belief": [0.1, np.nan]})
    out = v.numeric_column(df, "belief", allow_nan=True)
    assert np.isnan(out[1])


def test_infinite():
    with pytest.raises(ValueError, match=r"must hold finite numbers; 1 offending row \(first: "
                       r"row 1 = inf\)"):
        v.finite_column(pd.DataFrame({"x": [0.0, np.inf]}), "x")


def test_binary():
    with pytest.raises(ValueError, match=re.escape(
            "Column 'outcome' must be binary (0 or 1); 1 offending row (first: row 14 = 2.0).")):
        v.binary_column(frame(), "outcome")
    out = v.binary_column(pd.DataFrame({"y": [True, False]}), "y")
    assert out.dtype == np.int64 and list(out) == [1, 0]


def test_an_outcome_of_bools_beside_numbers_says_so():
    # [True, 0, 1, False] was refused as "must be numeric" (bools alone are accepted): one
    # outcome typed two ways, now named as such, with the rows of the fewer kind
    import coherence

    df = pd.DataFrame({"y": pd.Series([True, 0, 1, 1, False], dtype=object)})
    msg = (r"Column 'y' \(input to f\) must hold bools or numbers, not both \(one 0/1 value "
           r"typed two ways; found bools in 2 rows and numbers in 3 rows: write them one way, "
           r"True/False or 1/0\); 2 offending rows \(first: row 0 = True, row 4 = False\)")
    with pytest.raises(ValueError, match=msg):
        v.binary_column(df, "y", owner="f")
    with pytest.raises(ValueError, match=msg):
        v.numeric_column(df, "y", owner="f", bools=True)
    # where bools are no numbers at all, "must be numeric" is what is wrong
    with pytest.raises(ValueError, match=r"Column 'y' \(input to f\) must be numeric; 2 "):
        v.numeric_column(df, "y", owner="f")
    pairs = pd.DataFrame({"pair": [1, 2, 3, 4], "category": "c", "p_a": [0.3, 0.2, 0.5, 0.4],
                          "p_a_given_b1": [0.6, 0.5, 0.5, 0.2],
                          "p_a_given_b0": [0.1, 0.1, 0.5, 0.5],
                          "a_outcome": pd.Series([True, 0, 1, False], dtype=object),
                          "b_outcome": [1, 0, 1, 1]})
    with pytest.raises(ValueError, match=r"Column 'a_outcome' \(input to conditional_forecasting"
                       r"\) must hold bools or numbers, not both .* \(first: row 0 = True, "
                       r"row 3 = False\)"):
        coherence.conditional_forecasting(pairs, rng=0)


def test_numeric_output_is_contiguous_float64_copy():
    df = pd.DataFrame({"x": np.arange(5, dtype=np.int32)})
    out = v.numeric_column(df, "x")
    assert out.dtype == np.float64 and out.flags.c_contiguous
    out[0] = 99
    assert df["x"].iloc[0] == 0


def test_label_column():
    codes, labels = v.label_column(frame(), "action")
    assert list(labels) == ["d", "n", "y"]
    assert list(codes[:3]) == [2, 2, 1]
    with pytest.raises(ValueError, match="must not contain missing values; 1 offending row"):
        v.label_column(pd.DataFrame({"a": ["y", None]}), "a")


def test_as_dataframe():
    assert list(v.as_dataframe({"a": [1, 2]}).columns) == ["a"]
    with pytest.raises(TypeError, match=r"The 'data' parameter of f must be a pandas DataFrame "
                       r"or convertible to one; got 'int'"):
        v.as_dataframe(3, owner="f")
    with pytest.raises(TypeError, match="convertible"):
        v.as_dataframe("table.csv", owner="f")


def test_check_int():
    assert _parameters.check_int(3, "k", "cmi", low=1, high=9) == 3
    with pytest.raises(ValueError, match=re.escape(
            "The 'k' parameter of cmi must be an int in [1, 9]; got 0.")):
        _parameters.check_int(0, "k", "cmi", low=1, high=9)
    with pytest.raises(TypeError, match=r"must be an int >= 1; got 2.5"):
        _parameters.check_int(2.5, "k", "cmi", low=1)
    with pytest.raises(TypeError, match=r"got True"):
        _parameters.check_int(True, "k", "cmi", low=1)


def test_check_float():
    assert _parameters.check_float(0.5, "a", "f", low=0, high=1) == 0.5
    with pytest.raises(ValueError, match=re.escape(
            "The 'alpha' parameter of f must be a finite float in (0, 1); got 1.0.")):
        _parameters.check_float(1.0, "alpha", "f", low=0, high=1, low_open=True, high_open=True)
    with pytest.raises(ValueError, match="got nan"):
        _parameters.check_float(float("nan"), "alpha", "f")
    with pytest.raises(TypeError, match=r"got '0\.5'"):
        _parameters.check_float("0.5", "alpha", "f")


def test_check_choice():
    with pytest.raises(ValueError, match=re.escape(
            "The 'method' parameter of ci_test must be one of 'permutation', 'bootstrap'; "
            "got 'exact'.")):
        _parameters.check_choice("exact", "method", "ci_test", ("permutation", "bootstrap"))


def test_check_choice_returns_the_option_itself():
    """An option read from a numpy array (np.str_) was kept as such: the results recorded
    ``method=np.str_('local')``."""
    got = _parameters.check_choice(np.str_("bootstrap"), "method", "ci_test",
                                   ("permutation", "bootstrap"))
    assert type(got) is str and got == "bootstrap"
    data = pd.DataFrame({"probability": np.linspace(0.05, 0.95, 20),
                         "outcome": np.tile([0, 1], 10)})
    res = coherence.smooth_ece(data, definition=np.str_("paper"), n_resamples=19, rng=0)
    assert type(res.definition) is str


def test_probability_array():
    out = v.probability_array([0.1, np.nan], "p_a", allow_nan=True)
    assert np.isnan(out[1])
    with pytest.raises(ValueError, match=r"Column 'p_a' must hold probabilities in \[0, 1\]; "
                       r"1 offending row \(first: row 1 = 1.5\)"):
        v.probability_array([0.1, 1.5], "p_a")
    with pytest.raises(ValueError, match="must be one-dimensional"):
        v.probability_array(np.zeros((2, 2)), "p_a")


def test_no_missing_names_column_rows_and_rule():
    df = pd.DataFrame({"a": [1, 2, 3], "b": ["x", None, np.nan], "c": [1.0, 2.0, np.nan]},
                      index=["r0", "r1", "r2"])
    v.no_missing(df, ["a"], owner="f")  # nothing missing: no error
    with pytest.raises(ValueError, match=re.escape(
            "Column 'b' (input to f) must not contain missing values; 2 offending rows "
            "(first: row 'r1', row 'r2').")):
        v.no_missing(df, ["a", "b", "c"], owner="f")
    with pytest.raises(ValueError, match=re.escape("Column 'c' must not contain missing")):
        v.no_missing(df, "c")
    # NaT and a parser's own mask (blank strings are missing dates)
    with pytest.raises(ValueError, match=r"Column 'd' .*1 offending row \(first: row 1\)"):
        v.no_missing(pd.DataFrame({"d": pd.to_datetime(["2024-01-01", None])}), "d",
                     owner="f")
    dates = pd.DataFrame({"d": ["2024-01-01", " "]})
    with pytest.raises(ValueError, match=r"\(first: row 1\)"):
        v.no_missing(dates, "d", missing=np.array([False, True]))
    with pytest.raises(ValueError, match="exactly one column"):
        v.no_missing(dates, ["d", "d"], missing=np.array([False, True]))


def test_every_column_check_uses_no_missing(monkeypatch):
    calls = []
    real = v.no_missing

    def spy(*args, **kwargs):
        calls.append(args[1])
        return real(*args, **kwargs)

    monkeypatch.setattr(v, "no_missing", spy)
    df = pd.DataFrame({"x": [0.5, np.nan], "y": [True, False], "z": ["a", None]})
    for check in (v.numeric_column, v.probability_column, v.label_column):
        with pytest.raises(ValueError, match="missing values"):
            check(df, "z" if check is v.label_column else "x")
    v.binary_column(df, "y")
    assert calls == ["x", "x", "z", "y"]


# --------------------------------------------------------------------------- issue 17 classes
def test_duplicate_column_names_named():
    df = pd.DataFrame([[0.1, 0.2, 1]], columns=["belief", "belief", "outcome"])
    with pytest.raises(ValueError, match=r"'data' parameter of f must be a table whose column "
                       r"names are unique; got .*duplicated column 'belief'"):
        v.as_dataframe(df, owner="f")
    # records with a repeated key cannot make duplicates; arrays with named columns can
    with pytest.raises(ValueError, match="duplicated column 'a'"):
        v.as_dataframe(pd.DataFrame(np.zeros((2, 2)), columns=["a", "a"]), owner="f")


@pytest.mark.parametrize("text, expected", [
    ("False", False), ("0", False), ("no", False), (" N ", False), ("f", False),
    ("True", True), ("1", True), ("YES", True), ("y", True)])
def test_flag_column_reads_csv_strings(text, expected):
    df = pd.DataFrame({"is_outcome": [text]})
    assert v.flag_column(df, "is_outcome").tolist() == [expected]


def test_flag_column_numbers_bools_missing_and_garbage():
    df = pd.DataFrame({"f": [True, 0, 1.0, None]}, dtype=object)
    assert v.flag_column(df, "f", missing=False).tolist() == [True, False, True, False]
    with pytest.raises(ValueError, match=r"Column 'f' must not contain missing values; 1 "):
        v.flag_column(df, "f")
    bad = pd.DataFrame({"f": ["yes", "maybe", 2]}, index=[5, 6, 7])
    with pytest.raises(ValueError, match=re.escape(
            "Column 'f' must hold yes/no flags (bool, 0/1, or 'true'/'false', 'yes'/'no'); "
            "2 offending rows (first: row 6 = 'maybe', row 7 = 2).")):
        v.flag_column(bad, "f")


def test_list_like_strings_refused_not_evaluated():
    df = pd.DataFrame({"sources": [["a"], "b", "['a', 'b']", '["c"]']}, index=list("wxyz"))
    with pytest.raises(ValueError, match=r"Column 'sources' must hold lists .* 2 offending "
                       r"rows \(first: row 'y' = \"\['a', 'b'\]\", row 'z'"):
        v.list_like_strings(df, "sources")
    v.list_like_strings(df.iloc[:2], "sources")  # real lists and scalars pass


def test_discrete_label_refuses_continuous_column():
    df = pd.DataFrame({"y": [0.0, 1.0, 0.5]})
    with pytest.raises(ValueError, match=r"Column 'y' must hold class labels .* 1 offending "
                       r"row \(first: row 2 = 0.5\)"):
        v.label_column(df, "y", discrete=True)
    codes, labels = v.label_column(df.iloc[:2], "y", discrete=True)  # integral floats are fine
    assert codes.tolist() == [0, 1] and labels.tolist() == [0.0, 1.0]
    v.label_column(df, "y")  # evidence strata may be any hashable values


def test_case_collisions():
    assert v.case_collisions(["standard", "Standard ", "mse", "MSE", "x", 1]) == [
        ("Standard ", "standard"), ("MSE", "mse")]
    df = pd.DataFrame({"prompt": ["standard", "mse", "Standard"]})
    with pytest.raises(ValueError, match=r"Column 'prompt' must hold labels that differ by "
                       r"more than case.*'Standard' / 'standard'.*2 offending rows"):
        v.check_case_distinct(df, "prompt")


def test_case_collisions_of_text_and_numbers():
    # text and a number written alike compare unequal: a right answer would score wrong
    assert v.case_collisions(["1", 1, 0]) == [("1", 1)]
    assert v.case_collisions([2.0, " 2 ", 3]) == [(" 2 ", 2.0)]
    assert v.case_collisions(["2.5", 2.5]) == [("2.5", 2.5)]
    # equal numbers are one label; booleans and other objects are not labels read as text
    assert v.case_collisions([1, 1.0, np.int64(1), True, "True", None]) == []
    df = pd.DataFrame({"prompt": ["1", 1, "2"]}, dtype=object)
    with pytest.raises(ValueError, match=r"or type \(text against number\).*'1' / 1"):
        v.check_case_distinct(df, "prompt")


def test_check_bools_apart_from_text_names_the_fewer_rows():
    df = pd.DataFrame({"s": [True, np.False_, " true ", True, None, "x"]}, dtype=object,
                      index=[5, 6, 7, 8, 9, 10])
    with pytest.raises(ValueError, match=r"Column 's' \(input to f\) must hold booleans or "
                       r"their text, not both .*booleans in 3 rows and 'True'/'False' text "
                       r"in 1 row.*1 offending row \(first: row 7 = ' true '\)"):
        v.check_bools_apart_from_text(df, "s", owner="f")
    for ok in ([True, False, None, "x"], ["True", "false"], [1, "True"]):
        v.check_bools_apart_from_text(pd.DataFrame({"s": ok}, dtype=object), "s")
    v.check_bools_apart_from_text(pd.DataFrame({"s": [True, False]}), "s")  # bool dtype


def test_same_within_names_the_key_and_rows():
    df = pd.DataFrame({"q": ["a", "a", "b", "b"], "y": [1, 0, 1, 1]}, index=[10, 11, 12, 13])
    with pytest.raises(ValueError, match=r"Column 'y' \(input to f\) must be the same on "
                       r"every row of a 'q' value \(1 of them differ; 'a' has 0, 1\); "
                       r"2 offending rows \(first: row 10 = 1, row 11 = 0\)"):
        v.same_within(df, df["y"], "q", "y", owner="f")
    v.same_within(df, [1, 1, 0, 0], "q", "y", owner="f")
    # rows= limits the check (annulled questions' missing outcomes)
    v.same_within(df, [1, np.nan, 0, 0], "q", "y", owner="f", rows=[True, False, True, True])
    # a value missing on one row of a group is named as missing, not as a second value
    with pytest.raises(ValueError, match=r"must not be missing on some rows of a 'q' value "
                       r"and given on others \(1 of them; 'a' has 1 on its other rows\); "
                       r"1 offending row \(first: row 11 = nan\)"):
        v.same_within(df, [1, np.nan, 0, 0], "q", "y", owner="f")


@pytest.mark.parametrize("value, expected", [("model", ("model",)), (["a", "b"], ("a", "b")),
                                             (("a",), ("a",)), ([], ())])
def test_check_columns_arg(value, expected):
    assert v.check_columns_arg(value, "by", "report") == expected


def test_check_columns_arg_returns_plain_strings():
    """Names read from a numpy array came back as np.str_, so report's cells were keyed
    ``{np.str_('model'): 'm'}``."""
    for value in (np.str_("model"), np.array(["model"]), [np.str_("model")]):
        got = v.check_columns_arg(value, "by", "report")
        assert got == ("model",) and type(got[0]) is str
    rep = coherence.report(coherence.simulate("rational", n_contexts=30, rng=1).data
                           .assign(model="m"), by=np.array(["model"]), tests=["ci"],
                           n_resamples=19, progress=False, rng=0)
    assert type(rep.by[0]) is str and "np.str_" not in repr([c.key for c in rep.cells])
    rep = coherence.report(coherence.simulate("rational", n_contexts=30, rng=1).data,
                           belief=np.str_("belief"), adjust=np.str_("holm"), tests=["ci"],
                           n_resamples=19, progress=False, rng=0)
    assert "np.str_" not in repr(rep.settings)
    # the two records that are no test result
    diag = coherence.elicitation_diagnostics(
        coherence.simulate("rational", n_contexts=30, rng=1).data, truth=np.str_("truth"))
    assert type(diag.association_with) is str
    planned = coherence.plan(coherence.Agent.leaky(), test=np.str_("ci_test"), n_contexts=[20],
                             n_repetitions=2, effect=0.3, n_sims=2, rng=0, progress=False)
    assert "np.str_" not in repr(planned)


def test_plain_labels_keeps_what_holds_no_numpy_string():
    kept = ("a", ["b", {"c": (1, 2.5)}])
    assert v.plain_labels(kept) is kept
    got = v.plain_labels({np.str_("k"): [np.str_("x"), ("y", np.str_("z"))], "n": None})
    assert got == {"k": ["x", ("y", "z")], "n": None}
    assert repr(got) == "{'k': ['x', ('y', 'z')], 'n': None}"


@pytest.mark.parametrize("value", [3, None, ["a", 3], {"a": 1}, 2.5])
def test_check_columns_arg_type_error(value):
    with pytest.raises(TypeError, match=r"The 'by' parameter of report must be a column name"):
        v.check_columns_arg(value, "by", "report")


def test_check_column_names_first_offender_required_before_optional():
    v.check_column_names("f", {"belief": "b"}, {"group": None})  # None allowed when optional
    with pytest.raises(TypeError, match=re.escape(
            "The 'action' parameter of f must be a column name (str); got 3.")):
        v.check_column_names("f", {"belief": "b", "action": 3}, {"group": 1})
    with pytest.raises(TypeError, match=re.escape(
            "The 'group' parameter of f must be a column name (str) or None; got 1.")):
        v.check_column_names("f", {"belief": "b"}, {"group": 1})
    with pytest.raises(TypeError, match=r"'belief' parameter of f must be a column name \(str\);"):
        v.check_column_names("f", {"belief": None})


@given(st.one_of(st.integers(), st.floats(allow_nan=False), st.none(), st.text(max_size=3)),
       st.lists(st.integers(), max_size=4))
def test_one_or_pair_splits_a_pair_and_refuses_other_lengths(value, items):
    assert v.one_or_pair(value, "k", "f", "an int or a pair", "second") == (value, "second")
    for seq in (items, tuple(items)):
        if len(seq) == 2:
            assert v.one_or_pair(seq, "k", "f", "an int or a pair", None) == (seq[0], seq[1])
        else:
            with pytest.raises(ValueError, match=r"The 'k' parameter of f must be an int or "
                                                 r"a pair; got"):
                v.one_or_pair(seq, "k", "f", "an int or a pair", None)


@pytest.mark.filterwarnings(FEW_QUESTIONS)
@pytest.mark.parametrize("dtype", [np.float32, "Float32", np.float16])
def test_narrow_floats_are_read_as_stated(dtype):
    # float32(0.7) is 0.699999988 in float64: it fell in the 0.6 bin (ECE 0.15 for 0.55),
    # and a move of exactly eps = 0.02 read as no update
    import coherence

    stated = [0.6, 0.7, 0.6, 0.7]
    wide = pd.DataFrame({"model": "m", "question": list("abcd"), "probability": stated,
                         "outcome": [1, 0, 1, 0]})
    narrow = wide.assign(probability=wide["probability"].astype(dtype))
    ece = [coherence.forecast_scores(d, rng=0).calibration.loc[0, "ece"] for d in (wide, narrow)]
    assert ece[1] == ece[0] == pytest.approx(0.55)
    if dtype != "Float32":
        moved = coherence.update_direction(np.array([0.3], dtype), np.array([0.32], dtype),
                                           np.array([0.3], dtype))
        assert moved.direction.tolist() == ["partial"]


@pytest.mark.parametrize("values", [np.array([0.3 + 0.5j, 0.2 + 0j, 0.7 + 0j, 0.4 + 0j]),
                                    pd.Series([0.3 + 0.5j, 0.2, 0.7, 0.4], dtype=object)])
def test_complex_numbers_are_not_read_as_their_real_part(values):
    # a complex column was cast to float, its imaginary part dropped with only numpy's
    # ComplexWarning: a forecast of 0.3+0.5j was scored as 0.3
    import coherence

    df = pd.DataFrame({"model": "m", "question": list("abcd"), "probability": values,
                       "outcome": [1, 0, 1, 0]})
    with pytest.raises(ValueError, match=r"Column 'probability'.*must be numeric.*row 0"):
        coherence.forecast_scores(df, rng=0)
    with pytest.raises(ValueError, match="must be numeric"):
        v.probability_column(pd.DataFrame({"p": values}), "p")


def test_discrete_categorical_of_non_integer_numbers_raises():
    # a continuous column held as a categorical passed the discrete check (one class per
    # distinct value), as the same column of floats does not
    df = pd.DataFrame({"outcome": pd.Categorical([0.5, 1.5, 1.0, 0.5])})
    with pytest.raises(ValueError, match="non-integer numbers, a continuous column"):
        v.label_column(df, "outcome", discrete=True)
    codes, labels = v.label_column(pd.DataFrame({"a": pd.Categorical([1.0, 0.0, 1.0])}), "a",
                                   discrete=True)
    assert codes.tolist() == [1, 0, 1] and labels.tolist() == [0.0, 1.0]
    codes, _ = v.label_column(pd.DataFrame({"a": pd.Categorical(["y", "n"])}), "a",
                              discrete=True)
    assert codes.tolist() == [1, 0]


def test_check_case_distinct_refuses_booleans_beside_their_text():
    """True and 'True' in one label column (a CSV-read table beside one built in Python):
    forecast_scores scored model True as two models of 3 and 17 forecasts without a word,
    as every label column outside the few that asked check_bools_apart_from_text did."""
    from coherence import forecast_scores

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"model": pd.Series([True] * 20 + [False] * 20, dtype=object),
                       "question": [f"q{i % 20}" for i in range(40)],
                       "probability": rng.uniform(0, 1, 40),
                       "outcome": np.tile(rng.integers(0, 2, 20), 2)})
    df.loc[[0, 1, 2], "model"] = "True"
    with pytest.raises(ValueError, match=r"Column 'model' \(input to forecast_scores\) must "
                       r"hold booleans or their text, not both .* 3 offending rows"):
        forecast_scores(df, timestamp=None, n_resamples=9, rng=0)
    for column in (["True", " false", True], [True, "yes"]):
        frame = pd.DataFrame({"g": pd.Series(column, dtype=object)})
        if "yes" in column:  # text that reads as no boolean is a label of its own
            v.check_case_distinct(frame, "g")
        else:
            with pytest.raises(ValueError, match="booleans or their text"):
                v.check_case_distinct(frame, "g")


def test_check_case_distinct_refuses_booleans_beside_numbers():
    """True and 1 in one label column: pandas pools them (unique() gives one value) before
    the check of the unique labels could see them, and calibration_error counted the
    True row and the 1 rows as one cluster without a word."""
    from coherence import calibration_error

    rng = np.random.default_rng(0)
    df = pd.DataFrame({"probability": rng.uniform(0.05, 0.95, 40),
                       "outcome": rng.integers(0, 2, 40),
                       "group": pd.Series([True, *[1, 2, 3, 4] * 9, 1, 2, 3], dtype=object)})
    assert len(df["group"].unique()) == 4  # pooled: True reads as 1
    with pytest.raises(ValueError, match=r"Column 'group' \(input to calibration_error\) "
                       r"must hold labels of one kind, booleans or numbers, not both .*"
                       r"booleans in 1 row and numbers in 39 rows.*row 0 = True"):
        calibration_error(df, group="group", n_resamples=9, rng=0)
    # booleans alone, numbers alone, and booleans beside missing values stay labels
    v.check_case_distinct(pd.DataFrame({"g": pd.Series([True, False, None], dtype=object)}),
                          "g")
    v.check_case_distinct(pd.DataFrame({"g": pd.Series([1, 2.0, np.nan], dtype=object)}),
                          "g")


def test_flag_column_blank_string_is_missing():
    """'' and spaces are missing: they take ``missing``, and raise without it (they were
    refused as not a flag either way)."""
    df = pd.DataFrame({"f": ["yes", "", "  ", None]}, index=[5, 6, 7, 8])
    assert v.flag_column(df, "f", missing=False).tolist() == [True, False, False, False]
    with pytest.raises(ValueError, match=r"Column 'f' must not contain missing values; 3 "
                                         r"offending rows \(first: row 6, row 7, row 8\)"):
        v.flag_column(df, "f")


def _listed_reference(values, limit, show, sep, counted):
    """``listed`` written out item by item."""
    out = ""
    for i, value in enumerate(values):
        if i == limit:
            left = len(values) - limit
            return out + (f" and {left} more" if counted else sep + "...")
        out += (sep if i else "") + show(value)
    return out


@given(st.lists(st.one_of(st.integers(), st.text(max_size=4)), max_size=12),
       st.integers(0, 8), st.sampled_from([", ", "; "]), st.booleans(),
       st.sampled_from(["list", "tuple", "index", "array"]))
def test_listed_names_the_first_items_and_says_how_it_cut_the_rest(values, limit, sep,
                                                                   counted, kind):
    """The one writer of "the first few of these" in messages: the first ``limit`` items,
    and a mark (``sep + '...'``, or `` and N more``) exactly when some were left out."""
    data = {"list": values, "tuple": tuple(values), "index": pd.Index(values, dtype=object),
            "array": np.array(values, dtype=object)}[kind]
    for show in (str, v.plain_repr):
        got = v.listed(data, limit, show=show, sep=sep, counted=counted)
        assert got == _listed_reference(values, limit, show, sep, counted)
        assert got.endswith(("...", " more")) == (len(values) > limit)


@given(st.lists(st.one_of(st.integers(), st.text(max_size=4)), max_size=12),
       st.integers(0, 8), st.sampled_from(["list", "index", "array"]))
def test_first_of_is_the_got_of_a_cut_list(values, limit, kind):
    """The ``got`` of a parameter error that shows some values: the first ``limit`` as
    plain values, in a list whose repr says where the rest were left out."""
    data = {"list": values, "index": pd.Index(values, dtype=object),
            "array": np.array(values, dtype=object)}[kind]
    got = v.first_of(data, limit)
    assert list(got) == values[:limit]
    head = repr(values[:limit])
    assert repr(got) == (head[:-1] + (", ...]" if head != "[]" else "...]")
                         if len(values) > limit else head)


def test_cut_lists_in_messages_say_so(tmp_path):
    """Parameter errors that showed the first five or ten offending values as a list that
    read as complete now mark the cut (they did not before)."""
    import bayesnets
    from coherence import read_pairs

    path = tmp_path / "run.json"
    path.write_text(json.dumps({f"key{i:02d}": i for i in range(12)}))
    with pytest.raises(ValueError, match=r"with keys \['key00', .*'key09', \.\.\.\]"):
        read_pairs(path)
    df = pd.DataFrame(np.zeros((3, 7), dtype=int), columns=range(7))
    with pytest.raises(TypeError, match=r"got \[0, 1, 2, 3, 4, \.\.\.\]"):
        bayesnets.fit(df, edges=[])


def test_listed_shows_numpy_labels_as_plain_values():
    """A label read from numpy shows as the user wrote it, not as ``np.str_('a')``: the
    messages that join labels go through :func:`listed` with :func:`plain_repr`."""
    assert v.listed(np.array(["a", "b"]), show=v.plain_repr) == "'a', 'b'"
    assert v.listed(np.arange(7), show=v.plain_repr) == "0, 1, 2, 3, 4, ..."
    assert v.collisions_text(v.case_collisions(np.array(["Yes", "yes", "no", "No "],
                                                         dtype=object))) == (
        "'Yes' / 'yes'; 'No ' / 'no'")
    with pytest.raises(ValueError, match=r"found 'A' / 'a'; make them one label"):
        v.check_case_distinct(pd.DataFrame({"g": np.array(["a", "A", "b"])}), "g")
