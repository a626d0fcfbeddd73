"""Shared validation: label variants, numbers written as text, column keys, Series indexes
(audit of the decision tests, items 1, 7 and the shared helpers)."""

import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coherence import _validation as v
from coherence._resampling import group_codes
from coherence._resampling import row_units

_LABELS = st.one_of(st.text(alphabet="abcXYZ", min_size=1, max_size=4),
                    st.integers(min_value=0, max_value=99))


def _variant(label, how):
    """The label typed another way: its case swapped, a trailing space, or its type."""
    if isinstance(label, int):
        return str(label)
    if how == "case" and label.swapcase() != label:
        return label.swapcase()
    return label + " "


@given(labels=st.lists(_LABELS, min_size=1, max_size=6, unique=True),
       which=st.integers(min_value=0, max_value=5), how=st.sampled_from(["case", "space"]),
       at=st.integers(min_value=0, max_value=7))
def test_any_label_column_with_a_variant_of_a_label_raises(labels, which, how, at):
    label = labels[which % len(labels)]
    values = [*labels, *labels]
    values.insert(at % (len(values) + 1), _variant(label, how))
    df = pd.DataFrame({"context": pd.Series(values, dtype=object)})
    with pytest.raises(ValueError, match=r"Column 'context' .*differ by more than case"):
        v.label_column(df, "context", owner="f")
    with pytest.raises(ValueError, match="Column 'context'"):
        group_codes(df, "context", owner="f")


def test_label_variants_opt_out_and_the_message_counts_every_variant_row():
    df = pd.DataFrame({"g": pd.Series([1, "1", 2, "2 ", 3], dtype=object)})
    codes, labels = v.label_column(df, "g", variants=True)
    assert len(labels) == 5 and len(codes) == 5
    with pytest.raises(ValueError, match=r"4 offending rows \(first: row 0 = 1, row 1 = '1'"):
        v.label_column(df, "g", owner="f")


def test_numbers_in_a_string_dtype_are_read_as_numbers():
    df = pd.DataFrame({"p": pd.Series(["0.3", "0.5", "1"] * 60, dtype="string")})
    out = v.probability_column(df, "p", owner="f")
    assert out.dtype == np.float64 and out[:3].tolist() == [0.3, 0.5, 1.0]


def test_a_non_numeric_dtype_reports_every_row():
    df = pd.DataFrame({"p": pd.to_datetime(["2020-01-01"] * 180)})
    with pytest.raises(ValueError, match="180 offending rows"):
        v.numeric_column(df, "p", owner="f")
    df = pd.DataFrame({"p": pd.Series(["0.3"] * 179 + ["x"], dtype="string")})
    with pytest.raises(ValueError, match=r"got dtype string\); 1 offending row \(first: "
                       r"row 179 = 'x'\)"):
        v.numeric_column(df, "p", owner="f")


def test_bools_in_an_object_column_are_not_numbers():
    df = pd.DataFrame({"p": pd.Series([0.5, True, False], dtype=object)})
    with pytest.raises(ValueError, match=r"2 offending rows \(first: row 1 = True, row 2 = "
                       r"False\)"):
        v.numeric_column(df, "p", owner="f")
    # a yes/no outcome held as objects is still a binary column
    assert v.binary_column(pd.DataFrame({"y": pd.Series([True, False], dtype=object)}),
                           "y").tolist() == [1, 0]


def test_integer_column_names_are_one_column():
    df = pd.DataFrame({0: [1.0, np.nan], 1: ["a", "a"]})
    with pytest.raises(ValueError, match=r"Column '0' .*1 offending row \(first: row 1\)"):
        v.no_missing(df, 0, owner="f")
    v.same_within(df, df[1].to_numpy(dtype=object), 1, 1, owner="f")


def test_messages_print_plain_python_values():
    msg = v.column_error("p", "be fine", [np.int64(3)], [np.float64(1.5)])
    assert "row 3 = 1.5" in msg and "np." not in msg


def test_series_with_different_indexes_raise():
    a = pd.Series([0.9, 0.5], index=["x", "y"])
    with pytest.raises(ValueError, match=re.escape(
            "The 'b' parameter of f must be a Series with the same index as 'a'")):
        v.same_index("f", a=a, b=pd.Series([0.5, 0.9], index=["y", "x"]))
    v.same_index("f", a=a, b=pd.Series([0.1, 0.2], index=["x", "y"]))
    v.same_index("f", a=a, b=np.array([0.5, 0.9]))  # an array is paired by position


def test_probability_array_names_a_series_row_by_label():
    with pytest.raises(ValueError, match=r"row 'q2'"):
        v.probability_array(pd.Series([0.3, np.nan], index=["q1", "q2"]), "p", owner="f")


def test_row_units_follow_values_not_positions():
    a = np.array([3, 1, 2, 1])
    b = np.array([0.5, 0.2, 0.1, 0.9])
    units = row_units([a, b])
    perm = np.array([2, 0, 3, 1])
    assert row_units([a[perm], b[perm]]).tolist() == units[perm].tolist()
