"""Tests of read_pairs and attach_outcomes: every layout of the field's result files (issue 15).

The fixtures rebuild, in a few records each, the shapes the study's files take: a
one-direction run with resolutions, failed elicitations (with and without a category),
a two-direction (Bayes-consistency) run without resolutions and with the file's own
derived numbers, per-record variants and results keyed by variant.
"""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coherence import SkippedRecordsWarning
from coherence import SmallSampleWarning
from coherence import attach_outcomes
from coherence import conditional_forecasting
from coherence import read_pairs
from tests.probability._helpers import coherent_pairs

META = {"run_at": "2026-01-07T12:26:42.790243", "model": "gpt-4o", "thinking": False,
        "prompt_style": "skeptical", "num_pairs": 3, "num_successful": 2}


def _record(i: int, **extra):
    rec = {"pair_id": f"p{i}", "category": "strong", "reason": "r", "p_a": 0.3,
           "p_a_given_b1": 0.6, "p_a_given_b0": 0.2, "resolution_a": 1.0,
           "resolution_b": 0.0, "improvement": 99.0}
    rec.update(extra)
    return rec


def _bayes_record(i: int, category: str = "strong", **extra):
    """A two-direction record as the study writes it: no resolutions, its own derived
    joint cells, Bayes and LOTP errors (deliberately wrong here: they must be ignored)."""
    rec = {"pair_id": f"p{i}", "category": category, "reason": "r", "p_a": 0.3,
           "p_a_given_b1": 0.4, "p_a_given_b0": 0.2, "p_b": 0.5, "p_b_given_a1": 2 / 3,
           "p_b_given_a0": 3 / 7, "joint_11_via_a": 9.0, "joint_11_via_b": 9.0,
           "bayes_error_11": 9.0, "bayes_error_mean": 9.0, "lotp_error_a": 9.0,
           "lotp_error_b": 9.0, "text_a": "A?", "text_b": "B?"}
    rec.update(extra)
    return rec


def _write(tmp_path, results, metadata=None, name="run.json", **top):
    path = tmp_path / name
    body = {"results": results, **top}
    if metadata is not None:
        body["metadata"] = metadata
    path.write_text(json.dumps(body))
    return path


# --------------------------------------------------------------------------- layouts
def test_read_pairs_json(tmp_path):
    recs = [_record(0), _record(1, p_b=0.5, p_b_given_a1=0.4, p_b_given_a0=0.2)]
    table = read_pairs(_write(tmp_path, recs, {"model": "m"}))
    assert table.columns.tolist() == ["pair", "category", "p_a", "p_a_given_b1", "p_a_given_b0",
                                      "a_outcome", "b_outcome", "p_b", "p_b_given_a1",
                                      "p_b_given_a0", "run", "model", "source"]
    assert np.isnan(table["p_b"].iloc[0]) and table["p_b"].iloc[1] == 0.5
    assert (table["model"] == "m").all() and (table["run"] == "m").all()
    assert "improvement" not in table.columns


def test_metadata_fields_become_columns_and_label_the_run(tmp_path):
    path = _write(tmp_path, [_record(0), _record(1)], META)
    table = read_pairs(path)
    for key, value in META.items():
        assert (table[key] == value).all(), key
    # the run label: model and settings, not the run time or the counts
    assert set(table["run"]) == {"gpt-4o (thinking=False, prompt_style=skeptical)"}
    assert (table["source"] == str(path)).all()
    # two runs of one model with other settings get other labels
    other = read_pairs(_write(tmp_path, [_record(0)], {**META, "thinking": True}, "b.json"))
    assert other["run"].iloc[0] == "gpt-4o (thinking=True, prompt_style=skeptical)"
    # no metadata: the file's stem
    assert read_pairs(_write(tmp_path, [_record(0)], None, "plain.json"))["run"].iloc[0] == "plain"


def test_metadata_key_colliding_with_a_column_is_prefixed(tmp_path):
    table = read_pairs(_write(tmp_path, [_record(0)], {"model": "m", "category": "x",
                                                       "extra": {"a": 1}}))
    assert table["category"].iloc[0] == "strong" and table["metadata_category"].iloc[0] == "x"
    assert table["extra"].iloc[0] == '{"a": 1}'
    assert table["run"].iloc[0] == 'm (category=x, extra={"a": 1})'


def test_failed_records_are_kept_and_flagged(tmp_path):
    recs = [_record(0), {"pair_id": "p1", "error": "Failed to elicit probabilities"},
            {"pair_id": "p2", "category": "weak", "error": "Failed to elicit some probabilities"},
            _record(3, category="none")]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # reading warns about nothing: it drops nothing
        table = read_pairs(_write(tmp_path, recs, META))
    assert len(table) == 4
    assert table["error"].isna().tolist() == [True, False, False, True]
    assert table.loc[1, "error"] == "Failed to elicit probabilities"
    assert pd.isna(table.loc[1, "category"]) and table.loc[2, "category"] == "weak"
    assert table.loc[1:2, ["p_a", "a_outcome"]].isna().all().all()
    assert table.loc[3, "a_outcome"] == 1.0



@pytest.mark.parametrize("no_error", [None, False, "", " "])
def test_an_error_key_that_says_no_error_is_a_successful_record(tmp_path, no_error):
    """``"error": false`` or ``""`` on a complete record is no failure (the rule of
    attach_outcomes and conditional_forecasting); it was flagged failed before."""
    recs = [_record(0, error=no_error), {"pair_id": "p1", "error": "Failed"}, _record(2)]
    table = read_pairs(_write(tmp_path, recs, META))
    assert table["error"].isna().tolist() == [True, False, True]
    assert table.loc[0, "p_a"] == 0.3 and table.loc[0, "a_outcome"] == 1.0

def test_two_direction_run_without_resolutions(tmp_path):
    recs = [_bayes_record(0), _bayes_record(1, "none"),
            {"pair_id": "p2", "category": "weak", "error": "Failed to elicit some probabilities"}]
    meta = {k: v for k, v in META.items() if k != "prompt_style"}
    table = read_pairs(_write(tmp_path, recs, meta))
    assert "a_outcome" not in table.columns and "b_outcome" not in table.columns
    assert table["p_b_given_a1"].iloc[0] == pytest.approx(2 / 3)
    # the file's own derived numbers are not read
    assert not any(c.startswith(("joint_", "bayes_error", "lotp_error")) for c in table.columns)
    assert table["run"].iloc[0] == "gpt-4o (thinking=False)"


def test_variants(tmp_path):
    recs = [_record(0, variant="baseline"), _record(0, variant="skeptical")]
    table = read_pairs(_write(tmp_path, recs, {"model": "m"}))
    assert table["variant"].tolist() == ["baseline", "skeptical"]
    # results keyed by variant, metadata at the top level
    keyed = {"baseline": [_record(0)], "justify_first": [_record(0), _record(1)]}
    table = read_pairs(_write(tmp_path, keyed, None, "v.json", model="m", num_pairs=2))
    assert table["variant"].tolist() == ["baseline", "justify_first", "justify_first"]
    assert (table["model"] == "m").all() and (table["num_pairs"] == 2).all()
    assert (table["run"] == "m").all()


def test_read_pairs_csv(tmp_path):
    df = coherent_pairs(5, np.random.default_rng(0))
    df.to_csv(tmp_path / "pairs.csv", index=False)
    table = read_pairs(tmp_path / "pairs.csv")
    np.testing.assert_allclose(table["p_a"], df["p_a"])
    # outcomes are optional in a table too
    df.drop(columns=["a_outcome", "b_outcome"]).to_csv(tmp_path / "two.csv", index=False)
    assert "a_outcome" not in read_pairs(tmp_path / "two.csv").columns


def test_read_pairs_csv_keeps_labels_as_written(tmp_path):
    # pandas read the category 'None' (and a model 'N/A') as missing: read_pairs returned
    # NaN for them and conditional_forecasting refused "missing values" the file lacks
    df = coherent_pairs(6, np.random.default_rng(0)).assign(
        category=["Strong", "None", "None", "Weak", "Weak", "Strong"], model="N/A",
        error=["None", "", "null", "", "", ""])
    df.loc[2, "p_a"] = np.nan
    df.to_csv(tmp_path / "pairs.csv", index=False)
    table = read_pairs(tmp_path / "pairs.csv")
    assert table["category"].tolist() == df["category"].tolist()
    assert table["model"].tolist() == ["N/A"] * 6
    # the other columns take pandas' missing words, as before
    assert table["error"].isna().all() and np.isnan(table.loc[2, "p_a"])
    with pytest.warns(SmallSampleWarning, match="group 'N/A, None' has 1 pair"):
        res = conditional_forecasting(table.drop(index=2), n_resamples=9, rng=0)
    assert sorted(res.table["category"]) == ["None", "Strong", "Weak"]


def test_read_pairs_csv_numeric_labels_as_written(tmp_path):
    # pandas read the models '3.10' and '3.1' both as the float 3.1, and
    # conditional_forecasting pooled the two models' pairs into one cell; pair '0001' was 1
    path = tmp_path / "pairs.csv"
    path.write_text("pair,category,model,run,p_a,p_a_given_b1,p_a_given_b0,a_outcome,"
                    "b_outcome\n0001,strong,3.10,7,0.3,0.6,0.2,1,1\n"
                    "0002,strong,3.10,7,0.4,0.5,0.2,0,1\n0003,strong,3.1,7,0.3,0.6,0.2,1,0\n"
                    "0004,strong,3.1,7,0.5,0.7,0.1,1,1\n")
    table = read_pairs(path)
    assert table["pair"].tolist() == ["0001", "0002", "0003", "0004"]
    assert table["model"].tolist() == ["3.10", "3.10", "3.1", "3.1"]
    # labels written as the numbers print stay numbers, as before
    assert table["run"].tolist() == [7, 7, 7, 7] and table["run"].dtype == np.int64
    res = conditional_forecasting(table, n_resamples=9, rng=0)
    assert res.table["model"].tolist() == ["3.1", "3.10"]
    assert res.table["n"].tolist() == [2, 2]


@pytest.mark.parametrize("column", ["pair", "category", "model"])
def test_read_pairs_csv_one_number_written_two_ways_is_two_labels(tmp_path, column):
    # '1' and '1.0' both read as the float 1.0 and were kept as numbers: two categories
    # (or models) pooled into one group of n = 2, two pairs refused as one pair twice
    cells = {"pair": ["a", "b", "c"], "category": ["strong"] * 3, "model": ["m"] * 3}
    cells[column] = ["1", "1.0", "2"]
    path = tmp_path / "pairs.csv"
    path.write_text("pair,category,model,p_a,p_a_given_b1,p_a_given_b0,a_outcome,b_outcome\n"
                    + "".join(f"{p},{c},{m},0.3,0.6,0.2,1,0\n" for p, c, m in
                              zip(cells["pair"], cells["category"], cells["model"],
                                  strict=True)))
    table = read_pairs(path)
    assert table[column].tolist() == ["1", "1.0", "2"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallSampleWarning)
        res = conditional_forecasting(table, n_resamples=9, rng=0)
    assert res.table["n"].tolist() == ([3] if column == "pair" else [1, 1, 1])
    # one number written one way (whole floats as integers, beside a blank) stays a number
    path.write_text("pair,category,p_a,p_a_given_b1,p_a_given_b0\n1,strong,0.3,0.6,0.2\n"
                    "1,weak,0.3,0.6,0.2\n,none,0.3,0.6,0.2\n")
    assert read_pairs(path)["pair"].dtype == np.float64

# --------------------------------------------------------------------------- errors
def test_read_pairs_errors(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"results": [_record(0), {"pair_id": "x"}]}))
    with pytest.raises(ValueError, match=r"read_pairs: key 'category' is missing from 1 "
                       r"record\(s\) .* \(first: 1\); a failed record"):
        read_pairs(path)
    path.write_text(json.dumps({"results": [_record(0), {"error": "Failed to elicit"}]}))
    with pytest.raises(ValueError, match=r"key 'pair_id' is missing from 1 record"):
        read_pairs(path)
    path.write_text(json.dumps([_record(0)]))
    with pytest.raises(ValueError, match="must hold a JSON object with a 'results' list"):
        read_pairs(path)
    path.write_text(json.dumps({"results": []}))
    with pytest.raises(ValueError, match=r"'results' list .* is empty"):
        read_pairs(path)
    path.write_text(json.dumps({"results": [_record(0), 3]}))
    with pytest.raises(ValueError, match=r"1 record\(s\) .* are not JSON objects \(first: 1\)"):
        read_pairs(path)
    path.write_text(json.dumps({"results": {"baseline": {"pair_id": "x"}}}))
    with pytest.raises(ValueError, match="variant 'baseline' holds a dict"):
        read_pairs(path)
    with pytest.raises(ValueError, match=r"The 'path' parameter of read_pairs must be a \.json"):
        read_pairs(tmp_path / "x.txt")
    pd.DataFrame({"pair": [1]}).to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ValueError, match="read_pairs: column 'category'"):
        read_pairs(tmp_path / "bad.csv")


def test_read_pairs_csv_refuses_odd_files_naming_them(tmp_path):
    """An empty CSV, two columns of one name (pandas would read the second as 'p_a.1' and
    analyse the first) and a file divided by semicolons: each a ValueError naming the file."""
    empty = tmp_path / "empty.csv"
    empty.write_text("")
    with pytest.raises(ValueError, match=r"read_pairs: '.*empty\.csv' is empty"):
        read_pairs(empty)
    twice = tmp_path / "twice.csv"
    twice.write_text("pair,category,p_a,p_a_given_b1,p_a_given_b0,p_a\n"
                     "x,s,0.3,0.5,0.2,0.9\n")
    with pytest.raises(ValueError, match=r"'.*twice\.csv' has two or more columns named "
                       r"'p_a'"):
        read_pairs(twice)
    semi = tmp_path / "semi.csv"
    semi.write_text("pair;category;p_a;p_a_given_b1;p_a_given_b0\nx;s;0.3;0.5;0.2\n")
    with pytest.raises(ValueError, match=r"'.*semi\.csv' reads as one column .* separated "
                       r"by semicolons"):
        read_pairs(semi)


_HEADER = "pair,category,p_a,p_a_given_b1,p_a_given_b0"


@pytest.mark.parametrize("header_too", [False, True])
def test_read_pairs_csv_trailing_separator_is_no_column(tmp_path, header_too):
    # a file written with a trailing comma on every data line: pandas made 'pair' the
    # index and read every other column one to the left (p_a held p_a_given_b1's
    # values); with one on the header too, an all-missing 'Unnamed: 5' column was added
    path = tmp_path / "pairs.csv"
    path.write_text(_HEADER + ("," if header_too else "")
                    + "\nx,s,0.3,0.5,0.2,\ny,s,0.4,0.6,0.1,\n")
    table = read_pairs(path)
    assert table.columns.tolist() == _HEADER.split(",")
    assert table["pair"].tolist() == ["x", "y"] and table.index.tolist() == [0, 1]
    assert table["p_a"].tolist() == [0.3, 0.4]
    assert table["p_a_given_b0"].tolist() == [0.2, 0.1]


@pytest.mark.parametrize(("line", "n"), [("x,s,0.3,0.5,0.2,0.9", 6), ("x,s,0.3,0.5", 4)])
def test_read_pairs_csv_refuses_a_line_of_another_width(tmp_path, line, n):
    # one line of six values under five columns: pandas made the first column the index
    # and shifted every value left on every line; one of four left p_a_given_b0 missing
    path = tmp_path / "pairs.csv"
    path.write_text(_HEADER + "\ny,s,0.4,0.6,0.1\n" + line + "\nz,s,0.5,0.6,0.4\n")
    with pytest.raises(ValueError, match=rf"read_pairs: '.*pairs\.csv': its header names 5 "
                       rf"columns, and line 3 \({n} values\) holds another number of values"):
        read_pairs(path)


def test_read_pairs_parquet_keeps_a_named_index_as_columns(tmp_path):
    pytest.importorskip("pyarrow")
    df = coherent_pairs(4, np.random.default_rng(0))
    # set_index("pair").to_parquet: read as it was, 'pair' was the index and read_pairs
    # refused the file for lacking column 'pair'
    df.set_index("pair").to_parquet(tmp_path / "pairs.parquet")
    table = read_pairs(tmp_path / "pairs.parquet")
    assert table["pair"].tolist() == df["pair"].tolist()
    assert table.index.tolist() == [0, 1, 2, 3]
    df.set_index("pair").assign(pair="other").to_parquet(tmp_path / "clash.parquet")
    with pytest.raises(ValueError, match=r"read_pairs: '.*clash\.parquet' has an index and a "
                       r"column both named 'pair'"):
        read_pairs(tmp_path / "clash.parquet")


def test_read_pairs_refuses_a_run_with_some_resolutions(tmp_path):
    rec = _record(1)
    del rec["resolution_b"]
    path = _write(tmp_path, [_record(0), rec, _record(2)])
    with pytest.raises(ValueError, match=r"1 successful record\(s\) .* lack 'resolution_a'/"
                       r"'resolution_b' while 2 have them \(first without: 1\)"):
        read_pairs(path)


# --------------------------------------------------------------------------- property
_probability = st.floats(0, 1, allow_nan=False)


@given(st.lists(st.tuples(_probability, _probability, _probability, st.booleans(),
                          st.booleans(), st.sampled_from(["strong", "weak", "none"]),
                          st.sampled_from([None, "with category", "without category"])),
                min_size=1, max_size=8))
def test_property_round_trip(tmp_path_factory, rows):
    """Every record comes back, in order, with its numbers; failed ones flagged."""
    if all(r[6] is not None for r in rows):
        rows = [*rows, (0.5, 0.5, 0.5, True, False, "none", None)]
    recs = []
    for i, (pa, p1, p0, a, b, cat, fail) in enumerate(rows):
        if fail is None:
            recs.append({"pair_id": f"p{i}", "category": cat, "p_a": pa, "p_a_given_b1": p1,
                         "p_a_given_b0": p0, "resolution_a": float(a), "resolution_b": float(b)})
        elif fail == "with category":
            recs.append({"pair_id": f"p{i}", "category": cat, "error": "Failed"})
        else:
            recs.append({"pair_id": f"p{i}", "error": "Failed"})
    table = read_pairs(_write(tmp_path_factory.mktemp("rt"), recs, {"model": "m"}))
    assert table["pair"].tolist() == [r["pair_id"] for r in recs]
    failed = table["error"].notna().to_numpy() if "error" in table else np.zeros(len(recs), bool)
    assert failed.tolist() == ["error" in r for r in recs]
    ok = [r for r in recs if "error" not in r]
    np.testing.assert_array_equal(table.loc[~failed, "p_a"], [r["p_a"] for r in ok])
    np.testing.assert_array_equal(table.loc[~failed, "a_outcome"], [r["resolution_a"] for r in ok])
    assert table.loc[failed, "p_a"].isna().all()


@given(st.integers(1, 6), st.data())
def test_property_a_missing_key_is_named(tmp_path_factory, n, data):
    """Whichever required key a successful record lacks, the message names the key and
    the record, and the file is not read."""
    recs = [_record(i) for i in range(n)]
    bad = data.draw(st.integers(0, n - 1))
    key = data.draw(st.sampled_from(["pair_id", "category", "p_a", "p_a_given_b1",
                                     "p_a_given_b0"]))
    del recs[bad][key]
    path = _write(tmp_path_factory.mktemp("key"), recs)
    with pytest.raises(ValueError, match=rf"key '{key}' is missing from 1 record\(s\) .* "
                       rf"\(first: {bad}\)"):
        read_pairs(path)


# --------------------------------------------------------------------------- attach_outcomes
def _two_way(ids=("x", "y"), cats=("strong", "none")):
    return pd.DataFrame({"pair": list(ids), "category": list(cats), "p_a": 0.3, "p_b": 0.5})


def _one_way(ids=("y", "x"), cats=("none", "strong"), a=(0.0, 1.0), b=(1.0, 1.0)):
    return pd.DataFrame({"pair": list(ids), "category": list(cats), "a_outcome": list(a),
                         "b_outcome": list(b)})


def test_attach_outcomes_matches_by_pair():
    out = attach_outcomes(_two_way(), _one_way())
    assert out["a_outcome"].tolist() == [1.0, 0.0] and out["b_outcome"].tolist() == [1.0, 1.0]
    assert out["p_a"].tolist() == [0.3, 0.3]  # the forecasts stay the run's own
    # repeated (agreeing) resolutions from several runs are fine; failed rows are not used
    source = pd.concat([_one_way(), _one_way().assign(error=np.nan),
                        pd.DataFrame({"pair": ["x"], "error": ["Failed"]})])
    assert attach_outcomes(_two_way(), source)["a_outcome"].tolist() == [1.0, 0.0]
    # a failed row of the target keeps NaN and needs no resolution
    target = pd.concat([_two_way().assign(error=np.nan),
                        pd.DataFrame({"pair": ["z"], "error": ["Failed"]})], ignore_index=True)
    out = attach_outcomes(target, _one_way())
    assert out["a_outcome"].isna().tolist() == [False, False, True]


@pytest.mark.parametrize("no_error", [False, "", "  ", np.nan, None])
def test_attach_outcomes_false_or_blank_error_is_no_error(no_error):
    # a bool flag's False (or a blank message) marked every row failed: all outcomes NaN
    flags = pd.Series([no_error] * 2, dtype=bool if no_error is False else object)
    out = attach_outcomes(_two_way().assign(error=flags), _one_way().assign(error=flags))
    assert out["a_outcome"].tolist() == [1.0, 0.0] and out["b_outcome"].tolist() == [1.0, 1.0]


def test_attach_outcomes_true_or_a_message_is_failed():
    target = _two_way(ids=("x", "y", "z"), cats=("strong", "none", "none")).assign(
        error=[False, "", True])
    source = pd.concat([_one_way(), pd.DataFrame({"pair": ["z"], "a_outcome": [1.0],
                                                  "b_outcome": [0.0], "error": ["Failed"]})],
                       ignore_index=True)
    out = attach_outcomes(target, source)
    assert out["a_outcome"].isna().tolist() == [False, False, True]


def test_attach_outcomes_leaves_a_failed_row_as_it_is():
    # a failed row's own outcomes were replaced by NaN: the table came back poorer
    target = _two_way(ids=("x", "y", "z"), cats=("strong", "none", "none")).assign(
        error=[None, None, "timeout"], a_outcome=[np.nan, np.nan, 1.0],
        b_outcome=[np.nan, np.nan, 0.0])
    out = attach_outcomes(target, _one_way())
    assert out["a_outcome"].tolist()[:2] == [1.0, 0.0] and out["b_outcome"].tolist()[:2] == [
        1.0, 1.0]
    assert out.loc[2, ["a_outcome", "b_outcome"]].tolist() == [1.0, 0.0]
    assert out["a_outcome"].dtype == np.float64
    added = attach_outcomes(target.drop(columns=["a_outcome", "b_outcome"]), _one_way())
    assert np.isnan(added.loc[2, "a_outcome"]) and added["a_outcome"].dtype == np.float64


def test_attach_outcomes_pair_ids_of_two_types_raise():
    # ints against strings: pandas' raw "merge on int64 and str columns" error before
    with pytest.raises(ValueError, match=r"Column 'pair' \(input to attach_outcomes\) must "
                       r"write each id one way in pairs and resolved.*found '1' / 1.*"
                       r"pairs row 0; resolved row 1"):
        attach_outcomes(_two_way(ids=(1, 2)), _one_way(ids=("2", "1")))
    with pytest.raises(ValueError, match=r"2 pair\(s\) of 'pairs' have no resolution"):
        attach_outcomes(_two_way(ids=(1, 2)), _one_way(ids=("a", "b")))


def test_attach_outcomes_boolean_ids_against_numbers_raise():
    # ids True / False against 0 / 1: isin() matched them, the lookup did not, and every
    # row came back with NaN outcomes, no error, although missing="raise"
    with pytest.raises(ValueError, match=r"2 pair\(s\) of 'pairs' have no resolution in "
                       r"'resolved' \(first: True, False\)"):
        attach_outcomes(_two_way(ids=(True, False)), _one_way(ids=(0, 1)))
    with pytest.raises(ValueError, match=r"2 pair\(s\) of 'pairs' have no resolution"):
        attach_outcomes(_two_way(ids=(1, 0)), _one_way(ids=(False, True)))
    with pytest.warns(SkippedRecordsWarning, match=r"2 pair\(s\) .* left out"):
        out = attach_outcomes(_two_way(ids=(1, 0)), _one_way(ids=(False, True)),
                              missing="skip")
    assert out.empty


def test_attach_outcomes_one_outcome_written_two_ways_is_one_outcome():
    # two resolved runs, one with its outcomes as text ('0', '1'): attach_outcomes said
    # "'resolved' gives 2 pair(s) two different outcomes" of outcomes that agree
    two = pd.DataFrame({"pair": ["x", "y"], "category": ["strong", "none"], "p_a": [0.3, 0.5]})
    one = pd.DataFrame({"pair": ["y", "x"], "category": ["none", "strong"],
                        "a_outcome": [0.0, 1.0], "b_outcome": [1.0, 1.0]})
    both = pd.concat([one, one.assign(a_outcome=["0", "1"], b_outcome=[True, True])])
    out = attach_outcomes(two, both)
    assert out[["a_outcome", "b_outcome"]].to_numpy().tolist() == [[1.0, 1.0], [0.0, 1.0]]
    with pytest.raises(ValueError, match=r"'resolved' gives 1 pair\(s\) two different "
                       r"outcomes \(first: 'y'\)"):
        attach_outcomes(two, pd.concat([one, one.assign(a_outcome=["1", "1"])]))


def test_attach_outcomes_counts_missing_pairs_and_rows_apart():
    # one pair of two runs stands in two rows: the message said "2 pair(s)" of one pair
    # and named no row
    two = pd.concat([_two_way(("x", "z")).assign(run="r1"),
                     _two_way(("x", "z")).assign(run="r2")], ignore_index=True)
    with pytest.raises(ValueError, match=r"1 pair\(s\) of 'pairs' have no resolution in "
                       r"'resolved' \(first: 'z'\), in 2 row\(s\) \(first: 1, 3\)"):
        attach_outcomes(two, _one_way())
    with pytest.warns(SkippedRecordsWarning, match=r"1 pair\(s\) .* their 2 row\(s\) "
                      r"\(first: 1, 3\) are left out; the pairs: 'z'"):
        out = attach_outcomes(two, _one_way(), missing="skip")
    assert out.index.tolist() == [0, 2] and out["a_outcome"].tolist() == [1.0, 1.0]


def test_attach_outcomes_errors():
    with pytest.raises(ValueError, match="attach_outcomes: column 'b_outcome'"):
        attach_outcomes(_two_way(), _one_way().drop(columns="b_outcome"))
    with pytest.raises(ValueError, match=r"gives 1 pair\(s\) two different outcomes "
                       r"\(first: 'x'\)"):
        attach_outcomes(_two_way(), pd.concat([_one_way(), _one_way(a=(0.0, 0.0))]))
    with pytest.raises(ValueError, match=r"1 pair\(s\) have another 'category'"):
        attach_outcomes(_two_way(cats=("weak", "none")), _one_way())
    with pytest.raises(ValueError, match=r"1 pair\(s\) of 'pairs' have no resolution in "
                       r"'resolved' \(first: 'z'\).*missing='skip'"):
        attach_outcomes(_two_way(("x", "z")), _one_way())
    with pytest.raises(ValueError, match=r"column 'a_outcome' of 'pairs' already holds "
                       r"outcomes that 'resolved' contradicts in 1 row\(s\) \(first: 0\)"):
        attach_outcomes(_two_way().assign(a_outcome=[0.0, 0.0]), _one_way())
    with pytest.raises(ValueError, match="The 'missing' parameter of attach_outcomes"):
        attach_outcomes(_two_way(), _one_way(), missing="drop")
    with pytest.raises(TypeError, match="The 'resolved' parameter of attach_outcomes"):
        attach_outcomes(_two_way(), 3)


def test_attach_outcomes_skip_names_the_pairs():
    with pytest.warns(SkippedRecordsWarning,
                      match=r"1 pair\(s\) .* left out; the pairs: 'z'") as rec:
        out = attach_outcomes(_two_way(("x", "z")), _one_way(), missing="skip")
    assert rec[0].filename == __file__
    assert out["pair"].tolist() == ["x"] and out["a_outcome"].tolist() == [1.0]


@pytest.mark.parametrize(("key", "value"), [("resolution_a", "YES"), ("resolution_b", "no"),
                                            ("p_a", "high"), ("p_a", True),
                                            ("p_a_given_b1", [0.3]), ("resolution_a", {})])
def test_read_pairs_refuses_a_value_that_is_not_a_number(tmp_path, key, value):
    # "resolution_a": "YES" became NaN silently, and conditional_forecasting then gave NaN
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"results": [_record(0), _record(1, **{key: value})]}))
    with pytest.raises(ValueError, match=rf"read_pairs: key '{key}' must hold numbers \(or "
                       rf"null\) in .*run.json'; 1 record\(s\) of 'results' hold something "
                       rf"else \(first: 1: "):
        read_pairs(path)


@pytest.mark.parametrize(("key", "value", "why"), [
    ("p_a", "0.25", "A number in quotes"), ("resolution_b", "0", "A number in quotes"),
    ("resolution_a", True, "A JSON boolean is not a number"),
    ("resolution_b", False, "A JSON boolean is not a number"),
    ("p_a_given_b0", {"p": 0.2}, ""), ("p_b", ["0.5"], "")])
def test_read_pairs_refuses_numbers_as_text_or_booleans(tmp_path, key, value, why):
    """Regression: ``"p_a": "0.25"`` was read as 0.25 and ``"resolution_a": true`` as 1.0.
    A string or a boolean in a numeric field is a JSON type error, a sign of a broken
    writer; read_consistency_tuples refuses them, and so does read_pairs now, naming the
    key, the file, the records and what was expected."""
    extra = {"p_b": 0.5, "p_b_given_a1": 0.4, "p_b_given_a0": 0.2} if key == "p_b" else {}
    recs = [_record(0, **extra), _record(1, **extra), _record(2, **{**extra, key: value}),
            _record(3, **{**extra, key: value})]
    path = _write(tmp_path, recs)
    with pytest.raises(ValueError, match=rf"read_pairs: key '{key}' must hold numbers \(or "
                       rf"null\) in '.*run\.json'; 2 record\(s\) of 'results' hold something "
                       rf"else \(first: 2: .*, 3: .*\): expected a finite JSON number, "
                       rf"unquoted, or null\..*{why}"):
        read_pairs(path)


@pytest.mark.parametrize(("token", "shown"), [("NaN", "nan"), ("Infinity", "inf"),
                                              ("-Infinity", "-inf"), ("1e400", "inf"),
                                              ("1" + "0" * 400, "1000")])
def test_read_pairs_refuses_numbers_json_has_not(tmp_path, token, shown):
    """Python's json reads NaN and Infinity (no JSON numbers) and reads 1e400 as inf: a
    NaN probability passed for "not elicited", a NaN resolution for "not resolved", and
    a 400-digit integer raised a bare OverflowError. Each is refused, naming the record."""
    text = json.dumps({"results": [_record(0), _record(1)]})
    path = tmp_path / "run.json"
    path.write_text(text.replace('"p_a": 0.3', f'"p_a": {token}', 2)
                    .replace('"resolution_a": 1.0', f'"resolution_a": {token}', 1))
    with pytest.raises(ValueError, match=rf"key 'p_a' must hold numbers \(or null\) in "
                       rf"'.*run\.json'; 2 record\(s\) .* \(first: 0: {shown}.*NaN and "
                       r"Infinity are not JSON numbers .* write null for a missing value"):
        read_pairs(path)
    # a failed record is not analysed: what is not a number reads as NaN, never raises
    failed = json.dumps({"pair_id": "p2", "error": "Failed", "p_a": 0.3})
    path.write_text(text.replace("}]}", "}, " + failed.replace("0.3", token) + "]}"))
    table = read_pairs(path)
    assert table["p_a"].tolist()[:2] == [0.3, 0.3] and np.isnan(table.loc[2, "p_a"])


def test_read_pairs_reads_numbers_as_written(tmp_path):
    """-0.0 is 0, an integer 1 is 1.0, and a probability just above 1 is kept as written
    (conditional_forecasting names its row); CRLF line ends and a byte-order mark are read
    as usual; a trailing comma is invalid JSON, refused naming the line and column."""
    recs = [_record(0, p_a=-0.0), _record(1, p_a=1), _record(2, p_a=1.0000000001), _record(3)]
    text = json.dumps({"results": recs, "metadata": {"model": "m"}}, indent=1)
    path = tmp_path / "run.json"
    path.write_bytes(b"\xef\xbb\xbf" + text.replace("\n", "\r\n").encode())
    table = read_pairs(path)
    assert table["p_a"].tolist() == [0.0, 1.0, 1.0000000001, 0.3]
    assert table["model"].tolist() == ["m"] * 4
    with pytest.raises(ValueError, match=r"Column 'p_a' .* must hold probabilities in \[0, "
                       r"1\]; 1 offending row \(first: row 2 = 1.0000000001\)"):
        conditional_forecasting(table, n_resamples=9, rng=0)
    path.write_text(text.replace("}\n ]", "},\n ]"))
    with pytest.raises(ValueError, match=r"run\.json' is not valid JSON \(line \d+, column "
                       r"\d+: Expecting value\)"):
        read_pairs(path)


@pytest.mark.parametrize(("ids", "match"), [
    ((1, 1.0, 2, 3), r"key 'pair_id' must hold JSON strings or integers in '.*run\.json'; 1 "
     r"record\(s\) .* \(first: 1: 1\.0\)\. A float id \(1\.0\) is refused"),
    ((1.0, 2.0, 3.0, 4.0), r"4 record\(s\) .* \(first: 0: 1\.0, 1: 2\.0"),
    ((True, "p1", "p2", "p3"), r"key 'pair_id' must hold JSON strings or integers .* \(first: "
     r"0: True\)\.$"),
    ((None, "p1", "p2", "p3"), r"\(first: 0: None\)"),
    (({"id": 1}, "p1", "p2", "p3"), r"\(first: 0: \{'id': 1\}\)"),
    ((1, "1", 2, 3), r"key 'pair_id' writes one id two ways in '.*run\.json': '1' / 1 "
     r"\(records 0, 1\)")])
def test_read_pairs_refuses_ids_of_unclear_identity(tmp_path, ids, match):
    """Ids 1 and 1.0 were one pair to pandas (conditional_forecasting then reported the
    same file read twice), 1 and "1" two, and an id true or an object was read as it was
    (an object then raised a bare TypeError). A pair id is a JSON string or integer,
    written one way in one file."""
    path = _write(tmp_path, [_record(i, pair_id=v) for i, v in enumerate(ids)])
    with pytest.raises(ValueError, match=match):
        read_pairs(path)


def test_read_pairs_integer_and_text_ids_each_read_as_written(tmp_path):
    table = read_pairs(_write(tmp_path, [_record(0, pair_id=7), _record(1, pair_id=8)]))
    assert table["pair"].tolist() == [7, 8]
    table = read_pairs(_write(tmp_path, [_record(0, pair_id="7"), _record(1, pair_id="08")]))
    assert table["pair"].tolist() == ["7", "08"]


@pytest.mark.parametrize(("key", "value"), [("category", ["strong"]), ("category", True),
                                            ("category", 1.5), ("variant", {"v": 1})])
def test_read_pairs_refuses_labels_that_are_no_labels(tmp_path, key, value):
    # a category ["strong"] was read and conditional_forecasting raised "unhashable type"
    path = _write(tmp_path, [_record(0), _record(1, **{key: value})])
    with pytest.raises(ValueError, match=rf"key '{key}' must hold JSON strings or integers "
                       rf"\(or null\) in '.*run\.json'; 1 record\(s\) .* \(first: 1: "):
        read_pairs(path)


def test_read_pairs_refuses_keys_written_apart(tmp_path):
    """Every record with resolution_a but none with resolution_b: the run was read as one
    without resolutions, resolution_a dropped. A record with p_b alone: its Bayes check was
    left out without a word. Both raise, naming the records and the keys."""
    recs = [_record(i) for i in range(3)]
    for r in recs:
        del r["resolution_b"]
    with pytest.raises(ValueError, match=r"3 successful record\(s\) .* hold some of the keys "
                       r"'resolution_a', 'resolution_b' but not all \(first: 0, 1, 2; record 0 "
                       r"holds 'resolution_a', lacks 'resolution_b'\)"):
        read_pairs(_write(tmp_path, recs))
    recs = [_bayes_record(0), _bayes_record(1)]
    del recs[1]["p_b_given_a0"]
    with pytest.raises(ValueError, match=r"1 successful record\(s\) .* \(first: 1; record 1 "
                       r"holds 'p_b', 'p_b_given_a1', lacks 'p_b_given_a0'\)"):
        read_pairs(_write(tmp_path, recs))
    # a failed record may hold what it got before failing
    recs = [_bayes_record(0), {**_bayes_record(1), "error": "Failed"}]
    del recs[1]["p_b_given_a0"]
    assert read_pairs(_write(tmp_path, recs))["error"].notna().tolist() == [False, True]


def test_read_pairs_refuses_a_variant_or_metadata_given_twice(tmp_path):
    """A record of variant 'v1' (by its key in 'results') naming 'v2' itself was read as
    'v1'; a 'model' at the top level beside another in 'metadata' was dropped unread."""
    path = _write(tmp_path, {"v1": [_record(0), _record(1, variant="v2")]})
    with pytest.raises(ValueError, match=r"lists record 1 of variant 'v1' with a 'variant' key "
                       r"of its own, 'v2'"):
        read_pairs(path)
    table = read_pairs(_write(tmp_path, {"v1": [_record(0, variant="v1")]}))
    assert table["variant"].tolist() == ["v1"]
    with pytest.raises(ValueError, match=r"gives 'model' twice, differently: 'm' in 'metadata' "
                       r"and 'x' at the top level"):
        read_pairs(_write(tmp_path, [_record(0)], {"model": "m"}, model="x"))
    table = read_pairs(_write(tmp_path, [_record(0)], {"model": "m"}, model="m"))
    assert table["run"].tolist() == ["m"]


def test_read_pairs_failed_records_may_hold_anything(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"results": [_record(0), {"pair_id": "y", "p_a": "n/a",
                                                         "error": "Failed to elicit"}]}))
    assert np.isnan(read_pairs(path)["p_a"].iloc[1])


def test_read_pairs_file_not_utf8_or_not_json(tmp_path):
    path = tmp_path / "run.json"
    path.write_bytes(b'{"results": [\n{"pair_id": "\xff"}]}')
    with pytest.raises(ValueError, match=r"read_pairs: .*run.json' is not UTF-8 text \(line 2"):
        read_pairs(path)
    path.write_text('{"results": [')
    with pytest.raises(ValueError, match=r"read_pairs: .*run.json' is not valid JSON \(line 1"):
        read_pairs(path)
    path.write_text("")
    with pytest.raises(ValueError, match=r"run.json' is not valid JSON"):
        read_pairs(path)


def test_attach_outcomes_refuses_outcomes_written_as_words():
    """An outcome 'yes' already in 'pairs' read as missing and was overwritten unchecked:
    pair x, 'yes' (A happened) in 'pairs', left with a_outcome 0 from 'resolved', where a
    numeric 1 raises as a contradiction. It raises, naming the rows."""
    two = pd.DataFrame({"pair": ["x", "y"], "category": ["strong", "none"],
                        "p_a": [0.3, 0.5], "a_outcome": ["yes", "no"],
                        "b_outcome": [0.0, 1.0]})
    one = pd.DataFrame({"pair": ["y", "x"], "category": ["none", "strong"],
                        "a_outcome": [0, 0], "b_outcome": [1, 0]})
    with pytest.raises(ValueError, match=r"'a_outcome' of 'pairs' must hold outcomes.*'yes'"):
        attach_outcomes(two, one)
    # numbers, bools and missing values are outcomes as before
    two["a_outcome"] = pd.Series([False, None], dtype=object)
    out = attach_outcomes(two, one)
    assert out["a_outcome"].tolist() == [0.0, 0.0]


def test_read_pairs_refuses_a_json_key_written_twice(tmp_path):
    """json keeps the last of two equal keys: a file whose 'results' names variant 'v1'
    twice lost the first list's pairs (2 pairs read of 3), a record naming 'p_a' twice its
    first forecast. Both raise, naming the key."""
    rec = json.dumps(_record(0))
    path = tmp_path / "twice.json"
    second = ", ".join(json.dumps(_record(i)) for i in (1, 2))
    path.write_text('{"results": {"v1": [' + rec + '], "v1": [' + second + "]}}")
    with pytest.raises(ValueError, match="names the key 'v1' twice"):
        read_pairs(path)
    path.write_text('{"results": [' + rec.replace('"p_a": ', '"p_a": 0.9, "p_a": ', 1) + "]}")
    with pytest.raises(ValueError, match="names the key 'p_a' twice"):
        read_pairs(path)
