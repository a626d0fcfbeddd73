"""conditional_forecasting on the field's real layouts (issue 15): cells per run, failed
records skipped and counted, duplicate pairs refused, runs without resolutions, the law
of total probability on both sides."""

from __future__ import annotations

import json
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from coherence import DegenerateDataWarning
from coherence import SkippedRecordsWarning
from coherence import attach_outcomes
from coherence import bayes_check
from coherence import conditional_forecasting
from coherence import read_pairs
from coherence import total_probability_check
from tests.probability._helpers import coherent_pairs

FAST = {"n_resamples": 49, "rng": 0}
#: the columns that need no outcomes
FREE = ["n", "mean_sensitivity", "monotonic", "partial", "no_update", "inconsistent",
        "lotp_feasible", "bayes_consistent", "bayes_error_mean", "n_bayes", "lotp_feasible_b",
        "lotp_error_a_mean", "lotp_error_b_mean"]
#: the columns that do
SCORED = ["mean_improvement", "ci_low", "ci_high", "pvalue", "win_rate", "pvalue_t"]


def _noisy(n: int, seed: int, category: str = "strong") -> pd.DataFrame:
    """Coherent pairs with noise on three of the six numbers (so every metric moves)."""
    rng = np.random.default_rng(seed)
    df = coherent_pairs(n, rng, category)
    for c in ("p_b", "p_b_given_a1", "p_a_given_b0"):
        df[c] = np.clip(df[c] + rng.normal(0, 0.08, n), 0, 1)
    df["pair"] = [f"{category}{i}" for i in range(n)]
    return df


def _study(seed: int = 0) -> pd.DataFrame:
    return pd.concat([_noisy(8, seed, "strong"), _noisy(7, seed + 1, "weak"),
                      _noisy(6, seed + 2, "none")], ignore_index=True)


# --------------------------------------------------------------------------- outcome-free
def test_outcome_free_columns_do_not_need_outcomes():
    df = _study()
    scored = conditional_forecasting(df, **FAST).table
    free = conditional_forecasting(df.drop(columns=["a_outcome", "b_outcome"]), **FAST)
    table = free.table
    assert table["category"].tolist() == ["strong", "weak", "none"]
    pd.testing.assert_frame_equal(table.loc[:, FREE], scored.loc[:, FREE])
    assert table.loc[:, SCORED].isna().all().all()
    assert (~table["resolved"]).all() and scored["resolved"].all()
    assert table["note"].str.startswith("no resolutions").all() and scored["note"].isna().all()
    assert np.isnan(free.statistic) and np.isnan(free.pvalue) and free.n_obs == 0
    assert "no resolutions" in free.method
    assert np.isnan(free.improvement).all() and free.improvement.size == len(df)


def test_float32_cell_without_outcomes_classified_as_with_outcomes():
    """A float32 table is read as its decimals in every cell: P(A|B=1) - P(A) of exactly
    eps (0.32 - 0.3) is a movement of eps (partial), also in a cell without outcomes,
    where float32's 0.0199999809 used to make the row 'no_update'."""
    df = pd.DataFrame({"pair": [1, 2, 3], "category": ["strong"] * 3,
                       "p_a": [0.3, 0.5, 0.4], "p_a_given_b1": [0.32, 0.6, 0.7],
                       "p_a_given_b0": [0.29, 0.2, 0.1], "p_b": [0.5, 0.5, 0.5],
                       "p_b_given_a1": [0.5, 0.5, 0.5], "p_b_given_a0": [0.5, 0.5, 0.5]})
    narrow = df.astype({c: np.float32 for c in df.columns if c.startswith("p_")})
    for table in (df, narrow):
        row = conditional_forecasting(table, **FAST).table.iloc[0]
        assert (row["monotonic"], row["partial"], row["no_update"]) == (2 / 3, 1 / 3, 0.0)
    free = conditional_forecasting(narrow, **FAST).table.loc[:, FREE]
    scored = conditional_forecasting(narrow.assign(a_outcome=[1, 0, 1], b_outcome=[1, 1, 0]),
                                     **FAST).table.loc[:, FREE]
    pd.testing.assert_frame_equal(free, scored)
    # P(A) = 0.3 exactly: |0.3 - 0.32 * 0.5 - 0.29 * 0.5| = 0.005, not float32's rounding
    assert free.loc[0, "lotp_error_a_mean"] == pytest.approx(
        (0.005 + abs(0.5 - 0.4) + abs(0.4 - 0.4)) / 3, abs=1e-15)


def test_bayes_consistent_at_exactly_tol():
    """Bayes errors of exactly 0.05 (by hand; floating point rounds two of them below 0.05)
    are not below tol=0.05, with and without outcomes."""
    rows = np.array([[0.2, 0.65, 0.25, 0.4, 0.8, 0.55], [0.8, 0.4, 0.9, 0.9, 0.3, 0.15],
                     [0.4, 0.55, 0.55, 0.4, 0.55, 0.3], [0.8, 0.2, 0.9, 0.9, 0.15, 0.35]])
    df = pd.DataFrame(rows, columns=["p_a", "p_b", "p_a_given_b1", "p_a_given_b0",
                                     "p_b_given_a1", "p_b_given_a0"]).assign(
        pair=range(4), category="strong")
    for table in (df, df.assign(a_outcome=[1, 0, 1, 0], b_outcome=[1, 1, 0, 0])):
        row = conditional_forecasting(table, tol=0.05, **FAST).table.iloc[0]
        assert row["bayes_error_mean"] == pytest.approx(0.05, abs=1e-15)
        assert row["bayes_consistent"] == 0.0 and row["n_bayes"] == 4


def test_bayes_table_by_hand():
    """The study's Bayes table: share with error < 0.05 and mean error per category, and the
    mean LOTP error of each side, equal bayes_check and total_probability_check per category."""
    df = _study(3).drop(columns=["a_outcome", "b_outcome"])
    table = conditional_forecasting(df, **FAST).table.set_index("category")
    for cat, rows in df.groupby("category"):
        b = bayes_check(rows.p_a, rows.p_b, rows.p_a_given_b1, rows.p_a_given_b0,
                        rows.p_b_given_a1, rows.p_b_given_a0)
        a_side = total_probability_check(rows.p_a, rows.p_a_given_b1, rows.p_a_given_b0,
                                         p_b=rows.p_b)
        b_side = total_probability_check(rows.p_b, rows.p_b_given_a1, rows.p_b_given_a0,
                                         p_b=rows.p_a)
        assert table.loc[cat, "bayes_error_mean"] == pytest.approx(b.mean_error)
        assert table.loc[cat, "bayes_consistent"] == pytest.approx(b.share_consistent)
        assert table.loc[cat, "lotp_error_a_mean"] == pytest.approx(a_side.mean_error)
        assert table.loc[cat, "lotp_error_b_mean"] == pytest.approx(b_side.mean_error)
        assert table.loc[cat, "lotp_feasible"] == pytest.approx(a_side.share_feasible)
        assert table.loc[cat, "lotp_feasible_b"] == pytest.approx(b_side.share_feasible)
        assert table.loc[cat, "n_bayes"] == len(rows)


@given(st.integers(0, 10_000))
def test_property_coherent_numbers_have_no_lotp_or_bayes_error(seed):
    df = coherent_pairs(6, np.random.default_rng(seed))
    row = conditional_forecasting(df.drop(columns=["a_outcome", "b_outcome"]), **FAST).table
    assert row["lotp_error_a_mean"].iloc[0] == pytest.approx(0, abs=1e-12)
    assert row["lotp_error_b_mean"].iloc[0] == pytest.approx(0, abs=1e-12)
    assert row["bayes_error_mean"].iloc[0] == pytest.approx(0, abs=1e-12)
    assert row["lotp_feasible"].iloc[0] == 1.0 and row["lotp_feasible_b"].iloc[0] == 1.0


@settings(max_examples=20)
@given(st.integers(0, 10_000))
def test_property_swapping_a_and_b_swaps_the_lotp_sides(seed):
    df = _noisy(7, seed).drop(columns=["a_outcome", "b_outcome"])
    swapped = df.rename(columns={"p_a": "p_b", "p_b": "p_a", "p_a_given_b1": "p_b_given_a1",
                                 "p_b_given_a1": "p_a_given_b1", "p_a_given_b0": "p_b_given_a0",
                                 "p_b_given_a0": "p_a_given_b0"})
    a = conditional_forecasting(df, **FAST).table.iloc[0]
    b = conditional_forecasting(swapped, **FAST).table.iloc[0]
    assert a["lotp_error_a_mean"] == pytest.approx(b["lotp_error_b_mean"], abs=1e-12)
    assert a["lotp_error_b_mean"] == pytest.approx(b["lotp_error_a_mean"], abs=1e-12)
    assert a["lotp_feasible"] == b["lotp_feasible_b"]
    assert a["lotp_feasible_b"] == b["lotp_feasible"]


def test_reverse_numbers_missing_on_some_rows():
    df = _study(5).drop(columns=["a_outcome", "b_outcome"])
    df.loc[[0, 1], "p_b"] = np.nan
    table = conditional_forecasting(df, **FAST).table.set_index("category")
    assert table.loc["strong", "n_bayes"] == 6 and table.loc["strong", "n"] == 8
    rows = df.loc[2:7]
    b = bayes_check(rows.p_a, rows.p_b, rows.p_a_given_b1, rows.p_a_given_b0,
                    rows.p_b_given_a1, rows.p_b_given_a0)
    assert table.loc["strong", "bayes_error_mean"] == pytest.approx(b.mean_error)


# --------------------------------------------------------------------------- failed records
def _failed(pairs, categories, message="Failed to elicit probabilities"):
    return pd.DataFrame({"pair": pairs, "category": categories, "error": message})


def test_failed_records_are_skipped_named_and_counted():
    df = _study()
    failed = _failed(["f1", "f2", "strong0"], ["weak", None, None])
    data = pd.concat([df, failed], ignore_index=True)
    with pytest.warns(SkippedRecordsWarning, match=r"3 failed record\(s\) skipped \(column "
                      r"'error' is set: 'Failed to elicit probabilities'\): 'f1', 'f2', "
                      r"'strong0'; they are counted") as rec:
        res = conditional_forecasting(data, **FAST)
    assert rec[0].filename == __file__
    clean = conditional_forecasting(df, **FAST)
    table = res.table
    # 'strong0' has no category in its failed record, but the pair's other row has one
    assert table["n_failed"].tolist() == [1, 1, 0, 1]
    assert table["category"].iloc[:3].tolist() == ["strong", "weak", "none"]
    assert pd.isna(table["category"].iloc[3]) and table["n"].iloc[3] == 0
    assert table["note"].iloc[3] == "every record of this cell and category failed"
    pd.testing.assert_frame_equal(table.iloc[:3].drop(columns="n_failed"),
                                  clean.table.drop(columns="n_failed"))
    assert res.n_failed == 3 and res.to_frame()["n_failed"].iloc[0] == 3
    assert res.statistic == clean.statistic and res.n_obs == clean.n_obs
    # improvement stays aligned with the input rows: NaN on the failed ones
    np.testing.assert_array_equal(res.improvement[:len(df)], clean.improvement)
    assert np.isnan(res.improvement[len(df):]).all()


@settings(max_examples=15)  # two full calls per example
@given(st.integers(0, 10_000), st.integers(1, 5))
def test_property_failed_rows_change_nothing_but_the_count(seed, k):
    rng = np.random.default_rng(seed)
    df = _noisy(6, seed)
    cats = rng.choice(["strong", "weak"], size=k)
    data = pd.concat([df, _failed([f"f{i}" for i in range(k)], cats)])
    data = data.iloc[rng.permutation(len(data))]
    with pytest.warns(SkippedRecordsWarning):
        res = conditional_forecasting(data, n_resamples=19, rng=0)
    clean = conditional_forecasting(df, n_resamples=19, rng=0)
    assert res.table["n_failed"].sum() == k
    strong = res.table.set_index("category").loc["strong"]
    for c in [*FREE, "mean_improvement", "win_rate", "pvalue_t"]:
        assert strong[c] == pytest.approx(clean.table[c].iloc[0], nan_ok=True), c


def test_every_row_failed():
    with pytest.raises(ValueError, match=r"every one of the 2 rows is a failed record"):
        conditional_forecasting(_failed(["a", "b"], ["strong", "weak"]).assign(
            p_a=np.nan, p_a_given_b1=np.nan, p_a_given_b0=np.nan), **FAST)


@pytest.mark.parametrize(("flag", "failure"),
                         [(False, True), ("", "Failed"), ("  ", "Failed"), (0, 1),
                          (0.0, 1.0)], ids=["False", "blank", "spaces", "0/1", "0.0/1.0"])
def test_a_flag_that_says_no_error_is_not_a_failure(flag, failure):
    """An error column of bools or 0/1 flags (False or 0 on the successes) or of messages
    read from a CSV (blank on the successes): the rows without an error are analysed, as
    attach_outcomes reads the same column. Before, every non-missing value was a failure:
    a bool column was refused as all failed, blank rows were skipped as failed records,
    and a 0/1 flag column's successes were skipped too."""
    df = _study()
    failed = _failed(["f1"], ["weak"], failure)
    data = pd.concat([df.assign(error=flag), failed], ignore_index=True)
    with pytest.warns(SkippedRecordsWarning, match=r"1 failed record\(s\) skipped .*'f1'"):
        res = conditional_forecasting(data, **FAST)
    clean = conditional_forecasting(df, **FAST)
    assert res.table["n"].tolist() == clean.table["n"].tolist()
    assert res.table["n_failed"].tolist() == [0, 1, 0]
    assert res.statistic == clean.statistic and res.n_obs == clean.n_obs
    assert res.pvalue == clean.pvalue
    # the table attach_outcomes completes is the one conditional_forecasting reads
    joined = attach_outcomes(data.drop(columns=["a_outcome", "b_outcome"]), data)
    assert joined["a_outcome"].notna().sum() == res.n_obs


# --------------------------------------------------------------------------- runs
def test_runs_are_cells_not_pooled():
    df = _study()
    # the second run's forecasts, of the same pairs: their resolutions are the first run's
    other = _study(10).assign(a_outcome=df["a_outcome"], b_outcome=df["b_outcome"])
    data = pd.concat([df.assign(run="m (thinking=False)", model="m"),
                      other.assign(run="m (thinking=True)", model="m")], ignore_index=True)
    res = conditional_forecasting(data, **FAST)
    table = res.table
    assert table.columns[:3].tolist() == ["run", "model", "category"]
    assert table["run"].tolist() == ["m (thinking=False)"] * 3 + ["m (thinking=True)"] * 3
    assert table["n"].tolist() == [8, 7, 6] * 2
    alone = conditional_forecasting(other, **FAST).table
    # the two runs share their pair ids: no pooled p-value that counts a pair twice
    assert np.isnan(res.pvalue) and np.isnan(res.confidence_interval.low)
    assert res.statistic == pytest.approx(np.nanmean(res.improvement))
    assert "pairs repeat across runs" in res.method
    for c in [*FREE, "mean_improvement", "win_rate", "pvalue_t"]:
        np.testing.assert_allclose(table[c].iloc[3:].to_numpy(float),
                                   alone[c].to_numpy(float), err_msg=c)


@settings(max_examples=10)  # two calls of three runs each per example
@given(st.integers(0, 10_000))
def test_property_row_order_does_not_matter_across_runs(seed):
    rng = np.random.default_rng(seed)
    data = pd.concat([_noisy(5, seed).assign(run="r1"), _noisy(4, seed + 1, "none").assign(
        run="r2"), _noisy(4, seed + 2).drop(columns=["a_outcome", "b_outcome"]).assign(run="r0"),
        _failed(["f"], ["none"]).assign(run="r2")], ignore_index=True)
    shuffled = data.iloc[rng.permutation(len(data))]
    with pytest.warns(SkippedRecordsWarning):
        a = conditional_forecasting(data, n_resamples=19, rng=seed)
    with pytest.warns(SkippedRecordsWarning):
        b = conditional_forecasting(shuffled, n_resamples=19, rng=seed)
    assert a.table["run"].tolist() == ["r0", "r1", "r2"]
    pd.testing.assert_frame_equal(a.table, b.table)


@settings(max_examples=20)
@given(st.integers(0, 10_000), st.integers(1, 6))
def test_property_attach_outcomes_is_a_join_on_pair(seed, n):
    rng = np.random.default_rng(seed)
    resolved = _noisy(n, seed)
    target = resolved.drop(columns=["a_outcome", "b_outcome"]).iloc[rng.permutation(n)]
    source = pd.concat([resolved, resolved.iloc[rng.integers(0, n, 3)]])  # repeats agree
    out = attach_outcomes(target, source.iloc[rng.permutation(len(source))])
    expected = target.merge(resolved.loc[:, ["pair", "a_outcome", "b_outcome"]], on="pair")
    np.testing.assert_array_equal(out["a_outcome"], expected["a_outcome"])
    np.testing.assert_array_equal(out["b_outcome"], expected["b_outcome"])
    assert out.index.equals(target.index)


def test_the_same_run_twice_is_an_error_not_double_n():
    df = _study().assign(run="m", model="m")
    with pytest.raises(ValueError, match=r"21 pair\(s\) appear more than once in one run "
                       r"\(42 rows\), e\.g\. in run='m', model='m': 'strong0', 'strong1', "
                       r"'strong2' and 18 more\. The same file read twice"):
        conditional_forecasting(pd.concat([df, df]), **FAST)


def test_a_pair_id_written_two_ways_is_one_pair():
    # two runs of the same pairs, one read from a CSV (ids as numbers), the other from JSON
    # (ids as text): pair 3 and pair '3' were two pairs, so the pooled headline got a p-value
    # (0.014 on the shipped file, which has none when the ids match) and pool=True counted
    # every pair twice (n 28 for 14 strong pairs, none's p 0.003)
    df = _study().assign(pair=range(21), model="m")
    data = pd.concat([df.assign(run="csv"), df.assign(run="json", pair=df["pair"].astype(str))],
                     ignore_index=True)
    for pool in (False, True):
        with pytest.raises(ValueError, match=r"Column 'pair' .*differ by more than case, "
                           r"surrounding spaces or type .*'0' / 0"):
            conditional_forecasting(data, pool=pool, **FAST)
    same = pd.concat([df.assign(run="csv"), df.assign(run="json")], ignore_index=True)
    assert np.isnan(conditional_forecasting(same, **FAST).pvalue)


def test_pool_merges_runs_over_different_pairs():
    df = _study()
    half = df["pair"].str.endswith(("0", "2", "4"))
    data = pd.concat([df[half].assign(run="batch 1", model="m"),
                      df[~half].assign(run="batch 2", model="m")])
    assert len(conditional_forecasting(data, **FAST).table) == 6
    res = conditional_forecasting(data, pool=True, **FAST)
    assert res.pool and res.table.columns[:2].tolist() == ["model", "category"]
    whole = conditional_forecasting(df.assign(model="m"), **FAST).table
    for c in [*FREE, "mean_improvement", "win_rate", "pvalue_t"]:
        np.testing.assert_allclose(res.table[c].to_numpy(float), whole[c].to_numpy(float),
                                   err_msg=c)
    # pooling runs that share pairs would count a pair twice
    twice = pd.concat([df.assign(run="a", model="m"), df.assign(run="b", model="m")])
    with pytest.raises(ValueError, match="appear more than once in one pooled cell"):
        conditional_forecasting(twice, pool=True, **FAST)
    with pytest.raises(TypeError, match="The 'pool' parameter of conditional_forecasting"):
        conditional_forecasting(df, pool="yes", **FAST)


def test_variants_are_cells():
    df = _study()
    # the second variant's forecasts, of the same pairs: their resolutions are the first's
    skeptical = _study(4).assign(a_outcome=df["a_outcome"], b_outcome=df["b_outcome"])
    data = pd.concat([df.assign(variant="baseline"), skeptical.assign(variant="skeptical")])
    table = conditional_forecasting(data, **FAST).table
    assert table["variant"].tolist() == ["baseline"] * 3 + ["skeptical"] * 3


def test_warnings_name_a_cell_of_several_columns_by_its_values():
    # a cell of a model and a variant: the message names them, not the internal cell number
    df = _study().assign(model="rational", variant="baseline")
    none = df["category"] == "none"
    df.loc[none, ["p_a_given_b1", "p_a_given_b0"]] = df.loc[none, ["p_a", "p_a"]].to_numpy()
    with pytest.warns(DegenerateDataWarning,
                      match=r"every improvement in group 'rational, baseline, none' equals"):
        conditional_forecasting(df, **FAST)


def test_a_run_with_resolutions_and_one_without():
    df = _study()
    data = pd.concat([df.assign(run="one-way"),
                      _study(7).drop(columns=["a_outcome", "b_outcome"]).assign(run="bayes")],
                     ignore_index=True)
    res = conditional_forecasting(data, **FAST)
    table = res.table.set_index("run")
    assert table.loc["one-way", "resolved"].all() and not table.loc["bayes", "resolved"].any()
    assert table.loc["bayes", "mean_improvement"].isna().all()
    assert table.loc["one-way", "mean_improvement"].notna().all()
    # the headline is over the scored pairs only
    assert res.n_obs == len(df)
    assert res.statistic == pytest.approx(conditional_forecasting(df, **FAST).statistic)
    assert "not available for cells without resolutions" in res.method


def test_outcomes_for_some_pairs_of_a_cell_only():
    df = _study()
    df.loc[[3, 4], "a_outcome"] = np.nan
    with pytest.raises(ValueError, match=r"'a_outcome' and 'b_outcome' must be given for every "
                       r"pair of a cell or for none; the table lacks them in 2 of 21 rows "
                       r"\(first: row 3, 4\)"):
        conditional_forecasting(df, **FAST)
    with pytest.raises(ValueError, match="column 'b_outcome'"):
        conditional_forecasting(_study().drop(columns="b_outcome"), **FAST)


def test_missing_cell_label():
    df = _study().assign(run="r")
    df.loc[2, "run"] = None
    with pytest.raises(ValueError, match=r"Column 'run' .* missing values; 1 offending row "
                       r"\(first: row 2\)"):
        conditional_forecasting(df, **FAST)


def test_parameters_checked_without_outcomes():
    df = _study().drop(columns=["a_outcome", "b_outcome"])
    with pytest.raises(ValueError, match="The 'tol' parameter of conditional_forecasting"):
        conditional_forecasting(df, tol=2.0)
    with pytest.raises(ValueError, match="The 'test' parameter of conditional_forecasting"):
        conditional_forecasting(df, test="z")
    bad = df.copy()
    bad.loc[1, "p_b"] = 1.5
    with pytest.raises(ValueError, match=r"Column 'p_b' .* probabilities in \[0, 1\]; 1 "
                       r"offending row \(first: row 1"):
        conditional_forecasting(bad)


# --------------------------------------------------------------------------- files
def test_files_of_every_layout(tmp_path):
    """One-direction run with a failed record, the same model with thinking, a Bayes run
    without resolutions: one call each, then joined."""
    df = _study()

    def records(frame, resolved):
        out = []
        for r in frame.itertuples():
            rec = {"pair_id": r.pair, "category": r.category, "p_a": r.p_a,
                   "p_a_given_b1": r.p_a_given_b1, "p_a_given_b0": r.p_a_given_b0}
            if resolved:
                rec.update(resolution_a=float(r.a_outcome), resolution_b=float(r.b_outcome))
            else:
                rec.update(p_b=r.p_b, p_b_given_a1=r.p_b_given_a1, p_b_given_a0=r.p_b_given_a0,
                           bayes_error_mean=9.0, lotp_error_a=9.0)
            out.append(rec)
        return out

    meta = {"run_at": "2026-01-07T12:00:00", "model": "m", "thinking": False,
            "prompt_style": "skeptical", "num_pairs": 22, "num_successful": 21}
    one = [*records(df, True), {"pair_id": "lost", "error": "Failed to elicit probabilities"}]
    (tmp_path / "a.json").write_text(json.dumps({"results": one, "metadata": meta}))
    (tmp_path / "b.json").write_text(json.dumps(
        {"results": records(df, True), "metadata": {**meta, "thinking": True}}))
    bayes = [*records(df, False), {"pair_id": "strong1", "category": "strong",
                                   "error": "Failed to elicit some probabilities"}]
    bayes = [r for r in bayes if r.get("pair_id") != "strong1" or "error" in r]
    (tmp_path / "c.json").write_text(json.dumps(
        {"results": bayes, "metadata": {k: v for k, v in meta.items() if k != "prompt_style"}}))
    tables = [read_pairs(tmp_path / f"{x}.json") for x in "abc"]
    with pytest.warns(SkippedRecordsWarning, match=r"2 failed record\(s\)"):
        res = conditional_forecasting(pd.concat(tables, ignore_index=True), **FAST)
    table = res.table
    assert table["run"].unique().tolist() == ["m (thinking=False)",
                                              "m (thinking=False, prompt_style=skeptical)",
                                              "m (thinking=True, prompt_style=skeptical)"]
    bayes_rows = table[table["run"] == "m (thinking=False)"]
    assert not bayes_rows["resolved"].any() and bayes_rows["n_bayes"].tolist() == [7, 7, 6]
    assert bayes_rows["n_failed"].tolist() == [1, 0, 0]
    one_way = table[table["run"] == "m (thinking=False, prompt_style=skeptical)"]
    assert one_way["n"].tolist() == [8, 7, 6, 0] and one_way["n_failed"].tolist() == [0, 0, 0, 1]
    # the join: the Bayes run scored on the one-direction run's resolutions
    joined = attach_outcomes(tables[2], tables[0])
    with pytest.warns(SkippedRecordsWarning, match=r"1 failed record\(s\).*'strong1'"):
        scored = conditional_forecasting(joined, **FAST).table
    assert scored["resolved"].all() and scored["n"].tolist() == [7, 7, 6]
    expected = df[df["pair"] != "strong1"]
    diff = expected.p_a - np.where(expected.b_outcome == 1, expected.p_a_given_b1,
                                   expected.p_a_given_b0)
    imp = (expected.p_a - expected.a_outcome) ** 2 - (expected.p_a - diff
                                                      - expected.a_outcome) ** 2
    assert scored["mean_improvement"].tolist() == pytest.approx(
        imp.groupby(expected.category).mean().loc[["strong", "weak", "none"]].tolist())


# --------------------------------------------------------------------------- the real file
def test_real_file_reads_with_its_run_label(shared_data):
    path = shared_data / "conditional-pairs" / "gpt4o_skeptical.json"
    if not path.exists():
        pytest.skip("gpt4o_skeptical.json is not present")
    table = read_pairs(path)
    assert set(table["run"]) == {"gpt-4o (thinking=False, prompt_style=skeptical)"}
    assert (table["num_successful"] == 45).all() and "error" not in table.columns
    res = conditional_forecasting(table, test="t", n_resamples=99, rng=0)
    frame = res.table.set_index("category")
    summary = json.loads(path.read_text())["summary"]
    for cat, s in summary.items():
        assert frame.loc[cat, "n"] == s["n"] and frame.loc[cat, "n_failed"] == 0
        assert frame.loc[cat, "mean_improvement"] == pytest.approx(s["mean_improvement"],
                                                                   abs=1e-12)
    # read twice, the file is refused instead of halving its p-values
    with pytest.raises(ValueError, match=r"45 pair\(s\) appear more than once in one run"):
        conditional_forecasting(pd.concat([table, table]), **FAST)
    # without its resolutions, the outcome-free columns are unchanged
    free = conditional_forecasting(table.drop(columns=["a_outcome", "b_outcome"]), **FAST)
    pd.testing.assert_frame_equal(free.table.loc[:, FREE[:7]], res.table.loc[:, FREE[:7]])


def test_a_pair_has_one_category_and_one_resolution():
    # a pair listed under two categories of one run was scored in both (and the pooled
    # p-value went missing "because pairs repeat across runs"); a pair resolved one way in
    # one run and the other way in another was scored against both
    df = _study()
    twice = df.copy()
    twice.loc[twice.index[-1], "pair"] = twice.loc[twice.index[0], "pair"]
    with pytest.raises(ValueError, match=r"Column 'category'.*same on every row of a "
                       r"'pair' value.*'strong0' has 'none', 'strong'"):
        conditional_forecasting(twice, **FAST)
    flipped = df.assign(a_outcome=1 - df["a_outcome"])
    data = pd.concat([df.assign(run="r1"), flipped.assign(run="r2")], ignore_index=True)
    with pytest.raises(ValueError, match=r"Column 'a_outcome'.*same on every row of a "
                       r"'pair' value \(21 of them differ"):
        conditional_forecasting(data, **FAST)
    # grouped by model, one pair answered by two models is two rows, as before
    both = pd.concat([df.assign(model="m1"), df.assign(model="m2")], ignore_index=True)
    assert conditional_forecasting(both, by="model", **FAST).table["n"].tolist() == [21, 21]


def test_a_named_column_that_is_absent_raises():
    """run='session' where the column is 'Session' was ignored: the two runs were pooled
    into one cell of 6 pairs. A column named otherwise than its default must be there."""
    df = _noisy(6, 0).assign(Session=["s1"] * 3 + ["s2"] * 3)
    assert conditional_forecasting(df, run="Session", **FAST).table["n"].tolist() == [3, 3]
    for role, name in (("run", "session"), ("model", "llm"), ("variant", "prompt"),
                       ("failed", "status"), ("pair", "pair_id"), ("p_b", "pb")):
        with pytest.raises(ValueError, match=f"'{role}' parameter .* got '{name}'"):
            conditional_forecasting(df, **{role: name}, **FAST)
    # under their default names the optional columns may be absent, as before
    assert conditional_forecasting(df.drop(columns="pair"), **FAST).table["n"].tolist() == [6]


def test_summary_names_the_cells_under_the_names_given():
    """With run='Session', summary() printed the two runs' rows as two 'strong' rows, with
    nothing to tell them apart (it showed only columns called run, model, variant)."""
    df = _noisy(6, 0).assign(Session=["s1"] * 3 + ["s2"] * 3)
    res = conditional_forecasting(df, run="Session", **FAST)
    text = str(res.summary())
    assert "Session" in text and "s1" in text and "s2" in text
    assert conditional_forecasting(df.assign(run=df["Session"]), **FAST).summary().tables[0][
        1].columns[0] == "run"


def test_a_pair_keeps_its_category_across_runs():
    # a pair called 'strong' in one run and 'weak' in another was accepted: its rows were
    # scored in two category cells (run r2's weak cell had 8 pairs, one of them r1's strong0)
    df = _study()
    other = df.copy()
    other.loc[other.index[0], "category"] = "weak"
    data = pd.concat([df.assign(run="r1"), other.assign(run="r2")], ignore_index=True)
    with pytest.raises(ValueError, match=r"column 'category' must give a pair the same "
                       r"category in every run .*1 pair\(s\) differ, e.g. pair 'strong0': "
                       r"'strong' in run='r1'; 'weak' in run='r2'"):
        conditional_forecasting(data, **FAST)
    # across models too, and with the runs pooled per model
    models = pd.concat([df.assign(model="m1"), other.assign(model="m2")], ignore_index=True)
    with pytest.raises(ValueError, match=r"'strong' in model='m1'; 'weak' in model='m2'"):
        conditional_forecasting(models, pool=True, **FAST)
    # the same categories in every run: one row per run and category, as before
    same = pd.concat([df.assign(run="r1"), df.assign(run="r2")], ignore_index=True)
    assert conditional_forecasting(same, **FAST).table["n"].tolist() == [8, 7, 6, 8, 7, 6]
    # a 'by' column that is a setting of the run (one value per run) may differ between runs
    setting = pd.concat([df.assign(run="r1", style="plain"),
                         df.assign(run="r2", style="skeptical")], ignore_index=True)
    table = conditional_forecasting(setting, by="style", **FAST).table
    assert table["category"].tolist() == ["plain", "skeptical"]
    assert table["n"].tolist() == [21, 21]


def test_a_partial_reverse_elicitation_raises():
    # with p_b and p_b_given_a1 but not p_b_given_a0 (a misspelt column), the Bayes columns
    # were NaN without a word (n_bayes 0 where the full table gives 8, 7, 6)
    df = _study()
    assert conditional_forecasting(df, **FAST).table["n_bayes"].tolist() == [8, 7, 6]
    with pytest.raises(ValueError, match=r"the reverse elicitation needs all three columns "
                       r"'p_b', 'p_b_given_a1', 'p_b_given_a0'; 'pairs' has 'p_b', "
                       r"'p_b_given_a1' but not 'p_b_given_a0'"):
        conditional_forecasting(df.rename(columns={"p_b_given_a0": "p_b_given_a_0"}), **FAST)
    # none of them: a one-direction run, Bayes columns NaN as before
    one_way = df.drop(columns=["p_b", "p_b_given_a1", "p_b_given_a0"])
    assert conditional_forecasting(one_way, **FAST).table["n_bayes"].tolist() == [0, 0, 0]


@pytest.mark.parametrize("missing", [np.nan, None, pd.NA], ids=["nan", "None", "NA"])
def test_a_missing_pair_id_raises_naming_the_column_and_rows(missing):
    # two rows without a pair id were refused as "1 pair(s) appear more than once" (pooled
    # into one pair, nan); one per run was analysed as a pair of its own, without a word
    df = _noisy(6, 0)
    clean = conditional_forecasting(df, **FAST)
    assert clean.n_obs == 6
    twice = df.astype({"pair": object})
    twice.loc[[4, 5], "pair"] = missing
    with pytest.raises(ValueError, match=r"Column 'pair' \(input to conditional_forecasting\) "
                       r"must not contain missing values; 2 offending rows \(first: row 4, "
                       r"row 5\)"):
        conditional_forecasting(twice, **FAST)
    once = df.astype({"pair": object})
    once.loc[3, "pair"] = missing
    runs = pd.concat([once.assign(run="r1"), once.assign(run="r2")], ignore_index=True)
    with pytest.raises(ValueError, match=r"Column 'pair' .* 2 offending rows \(first: row 3, "
                       r"row 9\)"):
        conditional_forecasting(runs, **FAST)
    # a failed record needs no id: it is skipped, as before
    failed = pd.DataFrame({"pair": [missing], "category": ["strong"], "p_a": [np.nan],
                           "p_a_given_b1": [np.nan], "p_a_given_b0": [np.nan],
                           "error": ["Failed to elicit probabilities"]})
    with pytest.warns(SkippedRecordsWarning, match=r"1 failed record"):
        res = conditional_forecasting(pd.concat([df, failed], ignore_index=True), **FAST)
    assert res.n_obs == 6 and res.statistic == clean.statistic


def _old_order(table: pd.DataFrame, group: list[str]) -> list[int]:
    """The order of the table's rows as the earlier code found it: the key of each row
    read with one ``.loc`` per row (kept here as the reference of the faster read)."""
    import math

    from coherence._probability._pairs_result import category_sort_key

    def key(v):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return (99, "")
        return category_sort_key(v)

    table = table.copy()
    for c in group:
        table[c] = table[c].astype(object)
    return sorted(range(len(table)), key=lambda i: tuple(key(v) for v in table.loc[i, group]))


@settings(max_examples=15, deadline=None)
@given(st.integers(0, 10_000))
def test_property_cells_come_in_the_order_of_their_labels(seed):
    """Many cells (models of mixed label types, runs with and without resolutions, cells
    whose every record failed, known and other categories): the table's rows come in the
    order the earlier per-row read of their labels gave (the rows are already in it)."""
    rng = np.random.default_rng(seed)
    base = {c: _noisy(4, int(rng.integers(10_000)), c)
            for c in ("weak", "zeta", "strong", "Alpha", "none", "10")}
    parts = []
    for model in ("m10", "m9", "M", "m2"):
        for run in ("r2", "r1", "bayes"):
            chosen = [c for c in base if rng.random() < 0.5]
            for c in chosen:
                part = base[c].assign(model=model, run=f"{model}-{run}")
                if run == "bayes":
                    part = part.drop(columns=["a_outcome", "b_outcome"])
                parts.append(part)
            if rng.random() < 0.3:
                parts.append(_failed([f"f-{model}-{run}"], ["lost"]).assign(
                    model=model, run=f"{model}-{run}"))
    if not parts:
        parts.append(base["weak"].assign(model="m", run="r"))
    data = pd.concat(parts, ignore_index=True)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        table = conditional_forecasting(data, **FAST).table
    group = ["run", "model", "category"]
    assert _old_order(table, group) == list(range(len(table)))
    assert not table.loc[:, group].duplicated().any()
