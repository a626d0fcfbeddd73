"""ReportOptions: report's settings as one record, or field by field as keywords."""

import dataclasses
import warnings

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence
from coherence import ReportOptions
from coherence import report
from coherence._options import merge_record
from coherence._report._options import check_report_options
from tests._strategies import named_invalid

FIELDS = [f.name for f in dataclasses.fields(ReportOptions)]

#: valid values of each field (any subset merges as dataclasses.replace)
VALID = {
    "n_resamples": st.none() | st.integers(1, 10_000),
    "reference_prompt": st.text(max_size=8),
    "k": st.just("auto") | st.integers(1, 30),
    "n_splits": st.integers(2, 10),
    "engine": st.sampled_from(["logistic", "catboost"]),
    "n_bins": st.integers(2, 20),
    "confidence_level": st.floats(0.5, 0.999),
    "n_jobs": st.none() | st.integers(1, 8) | st.just(-1),
    "backend": st.none() | st.sampled_from(["loky", "threading"]),
    "progress": st.none() | st.booleans(),
}

#: values report refuses before any cell runs, by field
INVALID = {
    "n_resamples": st.integers(-5, 0) | st.just(2.5) | st.just("99"),
    "reference_prompt": st.integers() | st.none(),
    "engine": st.sampled_from(["xgboost", "Logistic", ""]),
    "n_jobs": st.just(0) | st.integers(-10, -2) | st.just("2"),
    "backend": st.integers() | st.just(["loky"]),
}


@pytest.fixture(scope="module")
def small():
    return coherence.simulate("rational", n_contexts=30, n_repetitions=2,
                              prompts=coherence.PROMPTS, rng=3).data


def test_every_field_is_documented_once():
    doc = ReportOptions.__doc__ or ""
    for name in FIELDS:
        assert f"\n    {name} :" in doc, name
    assert "engine : {" not in (report.__doc__ or "")  # documented once, on ReportOptions


@settings(max_examples=150, deadline=None)
@given(st.fixed_dictionaries({}, optional=VALID))
def test_valid_overrides_merge_as_replace(overrides):
    base = ReportOptions(n_resamples=99, n_jobs=1)
    merged = merge_record(ReportOptions, base, overrides, "report", check_report_options)
    assert merged == dataclasses.replace(base, **overrides)


@settings(max_examples=150, deadline=None)
@given(named_invalid(INVALID))
def test_an_invalid_value_is_refused_with_its_name(case):
    name, value = case
    with pytest.raises((TypeError, ValueError), match=f"'{name}' parameter of report"):
        merge_record(ReportOptions, None, {name: value}, "report", check_report_options)
    with pytest.raises((TypeError, ValueError), match=f"'{name}' parameter of ReportOptions"):
        ReportOptions(**{name: value})


def test_options_and_keywords_give_the_same_report(small):
    by_keywords = report(small, tests=("ci", "monotonicity"), n_resamples=49, n_bins=5,
                         progress=False, rng=11)
    by_record = report(small, tests=("ci", "monotonicity"), rng=11,
                       options=ReportOptions(n_resamples=49, n_bins=5, progress=False))
    pd.testing.assert_frame_equal(by_keywords.to_frame(), by_record.to_frame())
    assert by_keywords.settings["n_bins"] == by_record.settings["n_bins"] == 5


def test_a_keyword_replaces_that_field_of_the_options(small):
    rep = report(small, tests=("monotonicity",), rng=1, n_bins=4,
                 options=ReportOptions(n_resamples=29, n_bins=8, progress=False))
    assert rep.settings["n_bins"] == 4 and rep.settings["n_resamples"] == 29


def test_n_bins_reaches_the_calibration_cells(small):
    # n_bins was once recorded but passed to no test; the monotonicity test keeps its 5
    rep = report(small, tests=("calibration", "calibration_error", "monotonicity"), rng=2,
                 n_resamples=29, n_bins=4, progress=False)
    results = rep.cells[0].results
    assert results["calibration"].n_bins == 4
    assert results["calibration_error"].n_bins == 4
    assert results["monotonicity"].n_bins == 5
    html = rep.to_html()
    assert "over up to 4 equal-mass bins" in html  # the forecast-quality table says so
    # and the bins used: the caption said 4 where tied beliefs had merged them
    used = results["calibration_error"].n_bins_used
    assert 1 <= used <= 4
    table5 = html[html.index("Table 5."):]
    assert f"<td class='num'>{used}</td></tr>" in table5[:table5.index("</table>")]


def test_an_outcome_that_varies_within_a_context_is_the_calibration_cells_error(small):
    # the calibration cells score one forecast per context: they once read the first row's
    # outcome and dropped the others' without a word
    data = small.copy()
    first = data["context"] == data["context"].iloc[0]
    data.loc[first & (data["repetition"] == data["repetition"].max()), "outcome"] = (
        1 - data.loc[first, "outcome"].iloc[0])
    rep = report(data, tests=("calibration", "calibration_error", "ci"), rng=2,
                 n_resamples=29, progress=False)
    cell = rep.cells[0]
    for name in ("calibration", "calibration_error"):
        assert name not in cell.results
        assert "Column 'outcome'" in cell.errors[name]
        assert "same on every row of a 'context' value" in cell.errors[name]
    assert "ci" in cell.results  # the row-level tests take outcomes that vary by row


def test_a_misspelt_keyword_names_the_closest_field(small):
    with pytest.raises(TypeError, match=r"report\(\) got unexpected keyword argument\(s\) "
                                        r"\['n_resample'\] \(did you mean 'n_resamples'\?\)"):
        report(small, n_resample=99)


def test_options_of_the_wrong_type_are_refused(small):
    with pytest.raises(TypeError, match="'options' parameter of report must be a "
                                        "ReportOptions or None"):
        report(small, options={"n_resamples": 99})


def test_bad_setting_fails_before_any_cell_runs(small):
    with pytest.raises(ValueError, match="'engine' parameter of report"):
        report(small, engine="xgboost")
    with pytest.raises(ValueError, match="'n_jobs' parameter of report"):
        report(small, options=ReportOptions(), n_jobs=0)


def test_deprecated_n_permutations_still_works_with_a_warning(small):
    with pytest.warns(DeprecationWarning, match="n_permutations"):
        rep = report(small, tests=("ci",), n_permutations=19, n_resamples=29,
                     progress=False, rng=2)
    assert rep.settings["n_permutations"] == 19 and rep.settings["n_resamples"] == 29
    with warnings.catch_warnings():
        warnings.simplefilter("error", DeprecationWarning)
        report(small, tests=("ci",), n_resamples=19, progress=False, rng=2)


def test_a_cell_whose_key_is_missing_stays_in_the_summary(small):
    # pivot_table dropped index keys that are NaN: the cell was in cells and to_frame() but
    # not in summary_table() or summary(), under a title that still counted it
    import dataclasses

    import numpy as np

    data = pd.concat([small.assign(model="a", dataset="d"),
                      small.assign(model="b", dataset="e",
                                   context=small["context"] + 1000)], ignore_index=True)
    rep = report(data, tests=("ci", "calibration"), rng=2, n_resamples=29, progress=False)
    # report() refuses a missing cell label (below); a report put together by hand may
    # still hold one
    cells = (rep.cells[0], dataclasses.replace(rep.cells[1], key={"model": "b",
                                                                  "dataset": np.nan}))
    rep = dataclasses.replace(rep, cells=cells)
    assert len(rep.cells) == 2
    table = rep.summary_table("pvalue")
    assert len(table) == 2 and list(table.columns) == ["ci"]  # calibration has no p-value
    assert list(rep.summary_table("statistic").columns) == ["ci", "calibration"]
    frame = rep.to_frame()
    missing = frame[frame["dataset"].isna() & (frame["test"] == "ci")]["pvalue"].iloc[0]
    assert table.loc[("b", np.nan), "ci"] == missing
    assert rep.summary().count("\nb ") == 1


@pytest.mark.parametrize("by", [("model", "dataset"), ("dataset",)])
def test_a_missing_cell_label_raises_as_the_command_line_does(small, by):
    # a NaN in a by column was a cell of its own, labelled 'nan' in every table (its rows
    # pooled from whatever the label was lost on); `coherence test` refused it
    import numpy as np

    data = small.assign(model="a", dataset=pd.Series("d", index=small.index, dtype=object))
    data.loc[[3, 10], "dataset"] = np.nan
    with pytest.raises(ValueError, match=r"Column 'dataset' \(input to report\) must label "
                       r"every row.*2 offending rows \(first: row 3, row 10\)"):
        report(data, by=by, tests=("calibration",), n_resamples=9, progress=False, rng=0)


@pytest.mark.parametrize("role", ["prompt", "repetition", "truth", "action", "outcome"])
def test_an_optional_column_named_on_purpose_must_exist(small, role):
    # a misspelt prompt column pooled the prompts (a rational agent then "leaked"), a
    # misspelt repetition or truth column dropped the tests that read it: without a word
    with pytest.raises(ValueError, match=rf"'{role}_x' \(the '{role}' column\)"):
        report(small, **{role: f"{role}_x"}, tests=("calibration",), progress=False)
    # the default name is optional: a table without it runs
    report(small.drop(columns="truth"), tests=("calibration",), n_resamples=19,
           progress=False, rng=0)


def test_all_inside_a_list_of_tests_raises():
    # tests=["all"] ran no test at all (an empty report) and ("all", "ci") ran ci alone
    data = coherence.simulate("rational", n_contexts=20, n_repetitions=2, rng=0).data
    for tests in (["all"], ("all", "ci")):
        with pytest.raises(ValueError, match=r"'tests' parameter of report must be the "
                           r"string 'all' or a sequence of test names"):
            coherence.report(data, tests=tests, n_resamples=9, progress=False, rng=0)


def test_a_test_without_a_p_value_is_no_member_of_the_family(small):
    """A cell of 8 rows (one context): its tests give NaN p-values or fail, and neither
    counts in the adjustment: the other cell's adjusted p-values are those of the report
    without it (docs/report.md, Multiplicity)."""
    data = small.assign(model="a")
    tiny = pd.concat([data, data.head(8).assign(model="tiny")], ignore_index=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alone, both = (report(d, by="model", adjust="bh", progress=False, rng=5,
                              n_resamples=99).to_frame() for d in (data, tiny))
    finite = alone["pvalue"].notna()
    assert finite.sum() >= 3 and (alone.loc[finite, "pvalue_adjusted"]
                                  > alone.loc[finite, "pvalue"]).any()  # adjusted at all
    small_cell = both[both["model"] == "tiny"].set_index("test")
    assert small_cell["pvalue"].isna().all() and small_cell["pvalue_adjusted"].isna().all()
    # the reason is in the row: the error of a test that failed, else its warning
    untested = small_cell.loc[["monotonicity", "prompt_consistency"]]
    assert (untested["error"] == "").all()
    assert untested["warnings"].str.contains("NaN").all()
    pd.testing.assert_frame_equal(
        both[both["model"] == "a"].reset_index(drop=True)[["test", "pvalue", "pvalue_adjusted"]],
        alone[["test", "pvalue", "pvalue_adjusted"]])
