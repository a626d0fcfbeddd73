"""Outcome quality: accuracy, Brier and log scores, calibration, paired comparison."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coherence import ForecastComparisonResult
from coherence import ForecastScoresResult
from coherence import forecast_scores
from coherence import plot_reliability
from coherence._scoring._forecast import _murphy
from coherence._scoring._forecast import _reliability_table
from coherence._scoring._forecast import bin_index

#: the hand fixtures and drawn tables here are small: intervals that are the point
#: itself (scores that do not vary) warn, as test_forecast.py checks
#: (and intervals on few questions); compare warns below 20 questions
FEW_COMPARED = "ignore:ForecastScoresResult.compare. .* \\(< 20\\):coherence.SmallSampleWarning"
pytestmark = [pytest.mark.filterwarnings("ignore:forecast_scores:coherence.SmallSampleWarning"),
              pytest.mark.filterwarnings(FEW_COMPARED)]


def binary_table() -> pd.DataFrame:
    # Brier: (0.9-1)^2 = 0.01, (0.2-0)^2 = 0.04, (0.6-1)^2 = 0.16, (0.5-0)^2 = 0.25
    # probability of what happened: 0.9, 0.8, 0.6, 0.5
    return pd.DataFrame({"model": ["a", "a", "b", "b"], "question": ["q1", "q2", "q1", "q2"],
                         "probability": [0.9, 0.2, 0.6, 0.5], "outcome": [1, 0, 1, 0]})


# --------------------------------------------------------------------------- hand fixtures
def test_binary_scores_by_hand():
    res = forecast_scores(binary_table(), n_resamples=200, rng=0)
    assert isinstance(res, ForecastScoresResult)
    s = res.table.set_index("model")
    assert s.loc["a", "brier"] == pytest.approx((0.01 + 0.04) / 2)
    assert s.loc["b", "brier"] == pytest.approx((0.16 + 0.25) / 2)
    assert s.loc["(all)", "brier"] == pytest.approx(0.46 / 4)
    assert res.statistic == pytest.approx(0.115)
    assert s.loc["a", "log_score"] == pytest.approx((math.log(0.9) + math.log(0.8)) / 2)
    # accuracy: a right twice; b right on q1, exactly 0.5 on q2 (outcome NO) is a YES call,
    # wrong, under the paper's 1[p >= 0.5]
    assert s.loc["a", "accuracy"] == 1.0
    assert s.loc["b", "accuracy"] == pytest.approx(0.5)
    assert list(s["n_questions"]) == [2, 2, 2]
    assert res.kind == "binary" and res.brier_convention.startswith("binary")
    assert res.log_convention == "ln" and res.accuracy_convention == "paper"
    assert res.pvalue != res.pvalue  # NaN: a score, not a test


def test_accuracy_conventions():
    # issue 15: the paper's binary accuracy is 1[p >= 0.5]; the code gives 1/2 at exactly 0.5
    code = forecast_scores(binary_table(), accuracy_convention="code", n_resamples=50, rng=0)
    s = code.table.set_index("model")
    assert s.loc["b", "accuracy"] == pytest.approx(0.75)   # 0.5 on q2 scores 1/2
    assert code.accuracy_convention == "code"
    assert code.to_frame()["accuracy_convention"].iloc[0] == "code"
    one = {"model": ["m"], "question": ["q"], "probability": [0.5], "outcome": [1]}
    paper = forecast_scores(one, n_resamples=10, rng=0)
    assert paper.table.set_index("model").loc["m", "accuracy"] == 1.0
    assert paper.to_frame()["accuracy_convention"].iloc[0] == "paper"
    code = forecast_scores(one, accuracy_convention="code", n_resamples=10, rng=0)
    assert code.table.set_index("model").loc["m", "accuracy"] == 0.5
    # Brier and log scores do not depend on it
    assert paper.statistic == code.statistic
    with pytest.raises(ValueError, match="'accuracy_convention' parameter of forecast_scores"):
        forecast_scores(one, accuracy_convention="authors")


@pytest.mark.parametrize("accuracy_convention", ["paper", "code"])
def test_correct_agrees_with_accuracy(accuracy_convention):
    # under 'code' an exact 0.5 scored accuracy 1/2 while 'correct' said 0 or 1; a NO call
    # that was right (p = 0.3, NO happened) had correct 0 and accuracy 1
    df = pd.DataFrame({"model": "m", "question": list("abcde"),
                       "probability": [0.5, 0.5, 0.3, 0.8, 0.9],
                       "outcome": [1, 0, 0, 0, 1]})
    res = forecast_scores(df, accuracy_convention=accuracy_convention, n_resamples=9, rng=0)
    per = res.per_forecast
    tie = [1.0, 0.0] if accuracy_convention == "paper" else [np.nan, np.nan]
    np.testing.assert_array_equal(per["correct"], [*tie, 1.0, 0.0, 1.0])
    sure = per["correct"].notna()
    np.testing.assert_array_equal(per.loc[sure, "correct"], per.loc[sure, "accuracy"])
    assert res.table["accuracy"].iloc[0] == per["accuracy"].mean()
    # calibration still uses the (P(YES), outcome) pairs: the two 0.5s share a bin (observed
    # 1/2), then |0.3 - 0|, |0.8 - 0|, |0.9 - 1|
    assert res.calibration["ece"].iloc[0] == pytest.approx((0.3 + 0.8 + 0.1) / 5)


def test_correct_is_nan_on_a_multiclass_tie():
    df = pd.DataFrame({"model": "m", "question": ["a", "b"], "A": [0.4, 0.7],
                       "B": [0.4, 0.2], "C": [0.2, 0.1], "outcome": ["A", "B"]})
    per = forecast_scores(df, options=["A", "B", "C"], n_resamples=9, rng=0).per_forecast
    np.testing.assert_array_equal(per["accuracy"], [0.5, 0.0])
    np.testing.assert_array_equal(per["correct"], [np.nan, 0.0])


def test_a_calibrated_multiclass_tie_is_calibrated():
    """Regression: a tie at the top that held the outcome counted as not right in the
    calibration, so a forecaster saying (0.5, 0.5, 0) on questions that resolve A or B
    half the time each (calibrated: either top option, picked at random, is right half
    the time) got observed frequency 0 and ECE 0.5; now 1/2 and 0. A tie that misses
    stays 0, and untied forecasts are as before."""
    n = 8
    tied = pd.DataFrame({"model": "m", "question": [f"q{i}" for i in range(n)],
                         "A": 0.5, "B": 0.5, "C": 0.0, "outcome": ["A", "B"] * (n // 2)})
    res = forecast_scores(tied, options=["A", "B", "C"], n_resamples=9, rng=0)
    cal = res.calibration.set_index("model").loc["m"]
    assert cal["ece"] == 0.0 and cal["reliability"] == 0.0
    rel = res.reliability_table.query("model == 'm' and n > 0")
    assert rel[["mean_forecast", "observed_frequency"]].to_numpy().tolist() == [[0.5, 0.5]]
    # three options tied at 0.3: 1/3 when one of them happened, 0 when the fourth did;
    # untied forecasts 0 or 1; the loop below is the reference ECE
    mixed = pd.DataFrame({"model": "m", "question": ["a", "b", "c", "d"],
                          "A": [0.3, 0.3, 0.6, 0.1], "B": [0.3, 0.3, 0.3, 0.6],
                          "C": [0.3, 0.3, 0.1, 0.3], "D": [0.1, 0.1, 0.0, 0.0],
                          "outcome": ["B", "D", "B", "B"]})
    res = forecast_scores(mixed, options=list("ABCD"), n_bins=5, n_resamples=9, rng=0)
    conf, credit = [0.3, 0.3, 0.6, 0.6], [1 / 3, 0.0, 0.0, 1.0]
    bins = {}
    for c, k in zip(conf, credit, strict=True):
        bins.setdefault(int(c * 5), []).append((c, k))
    ece = sum(len(v) / 4 * abs(np.mean([c for c, _ in v]) - np.mean([k for _, k in v]))
              for v in bins.values())
    assert res.calibration["ece"].iloc[0] == pytest.approx(ece)
    np.testing.assert_array_equal(res.per_forecast["correct"], [np.nan, 0.0, 0.0, 1.0])


def test_log2_loss_convention():
    res = forecast_scores(binary_table(), convention="log2_loss", n_resamples=50, rng=0)
    s = res.table.set_index("model")
    # -log2(0.6) = 0.7370, -log2(0.5) = 1
    assert s.loc["b", "log_score"] == pytest.approx((-math.log2(0.6) + 1.0) / 2)
    assert res.log_convention == "log2_loss"


def test_log_floor():
    t = pd.DataFrame({"model": ["m"], "question": ["q"], "probability": [0.0],
                      "outcome": [1]})
    res = forecast_scores(t, n_resamples=10, rng=0)
    assert res.per_forecast["log_score"].iloc[0] == pytest.approx(math.log(1e-10))
    res = forecast_scores(t, floor=0.01, convention="log2_loss", n_resamples=10, rng=0)
    assert res.per_forecast["log_score"].iloc[0] == pytest.approx(-math.log2(0.01))


def test_multiclass_vector_by_hand():
    t = pd.DataFrame({"model": ["m"] * 3, "question": ["q1", "q2", "q3"],
                      "A": [0.7, 0.4, 0.5], "B": [0.2, 0.4, 0.3], "C": [0.1, 0.2, 0.2],
                      "outcome": ["A", "B", "C"]})
    res = forecast_scores(t, options=["A", "B", "C"], n_resamples=50, rng=0)
    pf = res.per_forecast
    # (0.7-1)^2 + 0.2^2 + 0.1^2 = 0.14; 0.4^2 + 0.6^2 + 0.2^2 = 0.56;
    # 0.5^2 + 0.3^2 + 0.8^2 = 0.98
    np.testing.assert_allclose(pf["brier"], [0.14, 0.56, 0.98])
    # right; tie of two top options including the outcome -> 1/2; wrong
    np.testing.assert_allclose(pf["accuracy"], [1.0, 0.5, 0.0])
    np.testing.assert_allclose(pf["log_score"], np.log([0.7, 0.4, 0.2]))
    assert res.kind == "multiclass" and "sum" in res.brier_convention


def test_chosen_option_one_vs_rest():
    t = pd.DataFrame({"model": ["m", "m"], "question": ["q1", "q2"], "choice": ["x", "y"],
                      "probability": [0.8, 0.7], "outcome": ["x", "z"]})
    res = forecast_scores(t, chosen="choice", n_resamples=50, rng=0)
    pf = res.per_forecast
    # right with c = 0.8: (1 - 0.8)^2 = 0.04; wrong with c = 0.7: 0.7^2 = 0.49
    np.testing.assert_allclose(pf["brier"], [0.04, 0.49])
    np.testing.assert_allclose(pf["log_score"], np.log([0.8, 0.3]))
    np.testing.assert_allclose(pf["accuracy"], [1.0, 0.0])
    assert res.kind == "chosen" and "one-vs-rest" in res.brier_convention


def test_latest_forecast_kept_by_timestamp():
    t = pd.DataFrame({"model": ["m", "m", "m"], "question": ["q", "q", "r"],
                      "probability": [0.1, 0.9, 0.5], "outcome": [1, 1, 0],
                      "at": ["2024-01-02", "2024-01-01", "2024-01-01"]})
    res = forecast_scores(t, timestamp="at", n_resamples=10, rng=0)
    # the 2024-01-02 forecast (0.1) is the latest for q
    assert res.per_forecast["brier"].iloc[0] == pytest.approx(0.81)
    assert res.n_dropped_stale == 1 and res.n_obs == 2


def test_duplicates_without_timestamp_raise():
    t = binary_table()
    t.loc[4] = ["a", "q1", 0.3, 1]
    with pytest.raises(ValueError, match="one forecast per"):
        forecast_scores(t, rng=0)


def test_timestamp_ties_raise():
    t = pd.DataFrame({"model": ["m", "m"], "question": ["q", "q"], "probability": [0.1, 0.9],
                      "outcome": [1, 1], "at": ["2024-01-01", "2024-01-01"]})
    with pytest.raises(ValueError, match="ties at the latest time"):
        forecast_scores(t, timestamp="at", rng=0)


# --------------------------------------------------------------------------- calibration
def test_bin_edges_are_closed_on_the_left():
    p = np.array([0.0, 0.1, 0.3, 0.7, 0.99, 1.0])
    np.testing.assert_array_equal(bin_index(p, 10), [0, 1, 3, 7, 9, 9])


def test_murphy_decomposition_by_hand():
    p = np.array([0.1, 0.1, 0.9, 0.9])
    y = np.array([0.0, 1.0, 1.0, 1.0])
    m = _murphy(p, y, 10)
    # bins 1 and 9: mean forecast 0.1 / 0.9, observed 0.5 / 1.0, weight 1/2 each
    assert m["ece"] == pytest.approx(0.5 * 0.4 + 0.5 * 0.1)            # 0.25
    assert m["reliability"] == pytest.approx(0.5 * 0.16 + 0.5 * 0.01)  # 0.085
    assert m["resolution"] == pytest.approx(0.0625)                    # 0.25^2
    assert m["uncertainty"] == pytest.approx(0.1875)                   # 0.75 * 0.25
    assert m["brier"] == pytest.approx(0.21)  # (0.01 + 0.81 + 0.01 + 0.01) / 4
    assert m["within_bin"] == pytest.approx(0.0, abs=1e-12)
    table = _reliability_table(p, y, 10)
    assert list(table["n"]) == [0, 2, 0, 0, 0, 0, 0, 0, 0, 2]
    assert np.isnan(table["mean_forecast"].iloc[0])


@given(st.lists(st.tuples(st.floats(0, 1), st.integers(0, 1)), min_size=1, max_size=40),
       st.integers(1, 12))
def test_murphy_identity_with_within_bin_term(rows, n_bins):
    p = np.array([r[0] for r in rows])
    y = np.array([r[1] for r in rows], dtype=float)
    m = _murphy(p, y, n_bins)
    assert m["brier"] == pytest.approx(
        m["reliability"] - m["resolution"] + m["uncertainty"] + m["within_bin"], abs=1e-12)
    assert 0.0 <= m["ece"] <= 1.0


def test_calibration_table_in_result():
    res = forecast_scores(binary_table(), n_bins=5, n_resamples=20, rng=0)
    cal = res.calibration.set_index("model")
    assert cal.loc["(all)", "brier"] == pytest.approx(res.statistic)
    rel = res.reliability_table
    assert set(rel["model"]) == {"a", "b", "(all)"}
    assert rel.loc[rel["model"] == "(all)", "n"].sum() == 4


def test_plot_reliability():
    import matplotlib.pyplot as plt

    res = forecast_scores(binary_table(), n_resamples=20, rng=0)
    ax = plot_reliability(res, group="a")
    assert "ECE" in ax.get_legend().get_texts()[0].get_text()
    # overlaid on the same axes, two models get two colours and two legend entries
    assert plot_reliability(res, group="b", ax=ax) is ax
    colours = {tuple(c.get_facecolor()[0]) for c in ax.collections}
    assert len(colours) == 2
    assert [t.get_text()[:1] for t in ax.get_legend().get_texts()] == ["a", "b"]
    assert (ax.get_xlim(), ax.get_ylim()) == ((0, 1), (0, 1))
    assert (ax.get_xlabel(), ax.get_ylabel(), ax.get_title()) == (
        "mean forecast (confidence)", "observed frequency", "Reliability diagram")
    plt.close("all")
    with pytest.raises(ValueError, match="'group' parameter of plot_reliability"):
        plot_reliability(res, group="zzz")
    with pytest.raises(TypeError, match="'result' parameter of plot_reliability"):
        plot_reliability("nope")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- properties
@given(st.lists(st.tuples(st.floats(0, 1), st.integers(0, 1)), min_size=1, max_size=30))
def test_binary_brier_in_unit_interval(rows):
    t = pd.DataFrame({"model": "m", "question": [f"q{i}" for i in range(len(rows))],
                      "probability": [r[0] for r in rows], "outcome": [r[1] for r in rows]})
    res = forecast_scores(t, n_resamples=5, rng=0)
    assert ((res.per_forecast["brier"] >= 0) & (res.per_forecast["brier"] <= 1)).all()
    assert 0.0 <= res.statistic <= 1.0
    assert (res.per_forecast["log_score"] <= 0).all()


@given(st.lists(st.integers(0, 1), min_size=1, max_size=30))
def test_perfect_forecasts_score_zero(ys):
    t = pd.DataFrame({"model": "m", "question": [f"q{i}" for i in range(len(ys))],
                      "probability": [float(y) for y in ys], "outcome": ys})
    res = forecast_scores(t, convention="log2_loss", n_resamples=5, rng=0)
    assert res.statistic == 0.0
    assert (res.per_forecast["log_score"] == 0.0).all()
    assert (res.per_forecast["accuracy"] == 1.0).all()


@given(st.lists(st.lists(st.floats(0.01, 1), min_size=3, max_size=3), min_size=1,
                max_size=10), st.data())
def test_multiclass_brier_in_zero_two(vectors, data):
    probs = np.array(vectors)
    probs /= probs.sum(axis=1, keepdims=True)
    outcomes = [data.draw(st.sampled_from(["A", "B", "C"])) for _ in vectors]
    t = pd.DataFrame(probs, columns=["A", "B", "C"]).assign(
        model="m", question=[f"q{i}" for i in range(len(vectors))], outcome=outcomes)
    res = forecast_scores(t, options=["A", "B", "C"], n_resamples=5, rng=0)
    b = res.per_forecast["brier"]
    assert ((b >= 0) & (b <= 2 + 1e-12)).all()


# --------------------------------------------------------------------------- conformance


def test_row_order_invariance_of_estimates():
    t = binary_table()
    r1 = forecast_scores(t, n_resamples=20, rng=0)
    r2 = forecast_scores(t.iloc[::-1], n_resamples=20, rng=0)
    assert r1.statistic == pytest.approx(r2.statistic)
    a = r1.table.set_index("model")["brier"]
    b = r2.table.set_index("model")["brier"]
    pd.testing.assert_series_equal(a.sort_index(), b.sort_index())


def test_to_frame_settings_and_summary_table():
    res = forecast_scores(binary_table(), n_resamples=20, rng=0)
    frame = res.to_frame()
    assert frame["log_convention"].iloc[0] == "ln"
    text = res.summary()
    assert "forecast_scores" in text and "(all)" in text and "brier_ci_low" in text


def test_cluster_bootstrap_interval_covers_estimate():
    rng = np.random.default_rng(1)
    n = 60
    p = rng.uniform(size=n)
    t = pd.DataFrame({"model": np.repeat(["a", "b"], n // 2), "question": np.tile(
        [f"q{i}" for i in range(n // 2)], 2), "probability": p,
        "outcome": np.tile((rng.uniform(size=n // 2) < p[: n // 2]).astype(int), 2)})
    res = forecast_scores(t, n_resamples=500, rng=0)
    ci = res.confidence_interval
    assert ci.low < res.statistic < ci.high
    s = res.table
    assert (s["brier_ci_low"] <= s["brier"]).all() and (s["brier"] <= s["brier_ci_high"]).all()


def test_filtered_and_unfiltered_scores():
    t = binary_table().assign(opened=["2023-01-01", "2024-06-01", "2023-01-01", "2024-06-01"])
    res = forecast_scores(t, cutoffs={"a": "2024-01-01"}, n_resamples=20, rng=0)
    assert res.filtered is not None and res.contamination is not None
    # a's q1 opened before its cutoff and is dropped; b has no cutoff and is kept
    assert res.filtered.n_obs == 3
    assert res.contamination.unknown_models == ("b",)
    frame = res.scores_frame()
    assert list(frame["filtered"]) == [False] * 3 + [True] * 3
    # the summary (and `coherence scores`) says b was not filtered: a misspelt name in the
    # cutoffs showed the model under "after the contamination filter" as if it had been
    assert "(models without a cutoff, not filtered: b)" in str(res.summary())


def test_a_filter_that_drops_every_forecast_says_so():
    """Regression: cutoffs after every question's opening left 'filtered' None without a
    word, and the summary (and `coherence scores --cutoffs`) read as if no filter had
    been asked for."""
    from coherence import DegenerateDataWarning

    t = binary_table().assign(opened="2023-01-01")
    with pytest.warns(DegenerateDataWarning, match="dropped every forecast"):
        res = forecast_scores(t, cutoffs={"a": "2024-01", "b": "2024-01"}, n_resamples=20,
                              rng=0)
    assert res.filtered is None and len(res.contamination.kept) == 0
    assert "after the contamination filter: no forecast left" in str(res.summary())
    plain = forecast_scores(t, n_resamples=20, rng=0)
    assert "contamination" not in str(plain.summary())


def test_filtered_scores_with_cutoff_column():
    t = binary_table().assign(opened=["2023-01-01", "2024-06-01", "2023-01-01", "2024-06-01"],
                              cutoff=["2024-01-01", "2024-01-01", None, None])
    res = forecast_scores(t, cutoffs="cutoff", n_resamples=20, rng=0)
    ref = forecast_scores(t, cutoffs={"a": "2024-01-01"}, n_resamples=20, rng=0)
    assert res.filtered is not None and ref.filtered is not None
    assert res.contamination is not None and res.contamination.unknown_models == ("b",)
    assert res.filtered.n_obs == ref.filtered.n_obs == 3
    assert res.filtered.statistic == ref.filtered.statistic


# --------------------------------------------------------------------------- paired comparison
def test_compare_by_hand():
    res = forecast_scores(binary_table(), n_resamples=20, rng=0)
    cmp = res.compare("a", "b", rng=0)
    assert isinstance(cmp, ForecastComparisonResult)
    # differences: 0.01 - 0.16 = -0.15, 0.04 - 0.25 = -0.21 -> mean -0.18
    assert cmp.statistic == pytest.approx(-0.18)
    # exact sign-flip: 4 sign patterns, |mean| >= 0.18 for 2 of them
    assert cmp.pvalue == pytest.approx(0.5)
    assert cmp.lower_is_better and cmp.n_obs == 2


def test_compare_validation():
    res = forecast_scores(binary_table(), n_resamples=20, rng=0)
    with pytest.raises(ValueError, match=r"'model_a' parameter of ForecastScoresResult\.compare"):
        res.compare("zz", "b")
    with pytest.raises(ValueError, match=r"'model_b' parameter .* different from model_a"):
        res.compare("a", "a")
    with pytest.raises(ValueError, match="'metric' parameter"):
        res.compare("a", "b", metric="auc")
    with pytest.raises(TypeError, match=r"'skew_correction' parameter .* a bool"):
        res.compare("a", "b", skew_correction=1)
    t = binary_table().iloc[[0, 3]]
    with pytest.raises(ValueError, match="share 0 question"):
        forecast_scores(t, n_resamples=5, rng=0).compare("a", "b")


def test_compare_records_its_statistic():
    """Both statistics on two questions: four sign vectors, the two that flip one
    question tie below the observed (p = 0.5 either way); the result says which."""
    res = forecast_scores(binary_table(), n_resamples=20, rng=0)
    for skew in (True, False):
        cmp = res.compare("a", "b", skew_correction=skew, rng=0)
        assert cmp.skew_correction is skew and cmp.pvalue == pytest.approx(0.5)
        assert ("Hall" in cmp.method) is skew
        assert cmp.to_frame()["skew_correction"].item() is skew


@pytest.mark.slow
def test_compare_size_and_power():
    # Null: both models draw their forecasts from the same distribution given the truth
    # (independent noise of equal size), so per-question differences are symmetric.
    rng = np.random.default_rng(2024)
    rejections, power = 0, 0
    reps = 300
    for _ in range(reps):
        n = 40
        truth = rng.uniform(0.05, 0.95, size=n)
        y = (rng.uniform(size=n) < truth).astype(int)
        pa = np.clip(truth + rng.normal(0, 0.1, size=n), 0, 1)
        pb = np.clip(truth + rng.normal(0, 0.1, size=n), 0, 1)
        pc = np.clip(truth + rng.normal(0, 0.3, size=n), 0, 1)
        q = [f"q{i}" for i in range(n)]
        t = pd.DataFrame({"model": ["a"] * n + ["b"] * n + ["c"] * n, "question": q * 3,
                          "probability": np.concatenate([pa, pb, pc]),
                          "outcome": np.concatenate([y, y, y])})
        res = forecast_scores(t, n_resamples=1, rng=rng)
        rejections += res.compare("a", "b", n_resamples=199, rng=rng).pvalue <= 0.05
        power += res.compare("a", "c", n_resamples=199, rng=rng).pvalue <= 0.05
    assert 0.025 <= rejections / reps <= 0.08
    assert power / reps >= 0.15  # measured 77 / 300 = 0.26 with this seed


# --------------------------------------------------------------------------- validation
@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    ({"convention": "log10"}, ValueError, "'convention' parameter of forecast_scores"),
    ({"floor": 0.0}, ValueError, "'floor' parameter of forecast_scores"),
    ({"n_bins": 0}, ValueError, "'n_bins' parameter of forecast_scores"),
    ({"n_resamples": 0}, ValueError, "'n_resamples' parameter of forecast_scores"),
    ({"confidence_level": 1.0}, ValueError, "'confidence_level' parameter of forecast_scores"),
    ({"options": ["A"]}, ValueError, "'options' parameter of forecast_scores"),
    ({"options": ["A", "B"], "chosen": "c"}, ValueError, "'chosen' parameter"),
    ({"probability": None}, ValueError, "'probability' parameter of forecast_scores"),
    ({"rng": -1}, ValueError, "'rng' parameter of forecast_scores"),
    ({"question": "qq"}, ValueError, "column 'qq'"),
])
def test_parameter_validation(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        forecast_scores(binary_table(), **kwargs)


def test_data_validation():
    t = binary_table()
    with pytest.raises(ValueError, match=r"Column 'probability'.*probabilities in \[0, 1\]"):
        forecast_scores(t.assign(probability=[0.1, 1.2, 0.3, 0.4]))
    with pytest.raises(ValueError, match=r"Column 'outcome'.*binary"):
        forecast_scores(t.assign(outcome=[0, 2, 0, 2]))
    # a question resolves one way for every forecaster
    with pytest.raises(ValueError, match=r"Column 'outcome'.*same on every row of a "
                       r"'question' value.*'q1' has 0, 1.*row 0 = 0, row 2 = 1"):
        forecast_scores(t.assign(outcome=[0, 1, 1, 1]))
    with pytest.raises(ValueError, match=r"Column 'model'.*missing"):
        forecast_scores(t.assign(model=["a", None, "b", "b"]))
    with pytest.raises(TypeError, match="'forecasts' parameter of forecast_scores"):
        forecast_scores(3)
    mc = pd.DataFrame({"model": ["m"], "question": ["q"], "A": [0.5], "B": [0.4],
                       "outcome": ["A"]})
    with pytest.raises(ValueError, match=r"Column 'A\+B'.*sum to 1"):
        forecast_scores(mc, options=["A", "B"])
    with pytest.raises(ValueError, match=r"Column 'outcome'.*name one of the option columns"):
        forecast_scores(mc.assign(A=0.6, outcome="C"), options=["A", "B"])
    with pytest.raises(ValueError, match=r"The 'forecasts' parameter of forecast_scores must be "
                       r"a table with at least one row; got '0 rows"):
        forecast_scores(t.iloc[:0])


def test_cluster_means_match_reference_resampler():
    # the vectorised cluster bootstrap equals stacking the rows of clusters drawn by the
    # shared reference resampler (same generator stream)
    from coherence._resampling import cluster_bootstrap_means as _cluster_means
    from tests._reference_resampling import cluster_bootstrap_indices

    rng = np.random.default_rng(5)
    clusters = np.array([0, 0, 1, 2, 2, 2, 3])
    values = rng.normal(size=(7, 2))
    fast = _cluster_means(values, clusters, 50, np.random.default_rng(9))
    ref_rng = np.random.default_rng(9)
    slow = np.array([values[cluster_bootstrap_indices(clusters, ref_rng)].mean(axis=0)
                     for _ in range(50)])
    np.testing.assert_allclose(fast, slow)


def test_bool_outcomes_and_string_models():
    t = binary_table().assign(outcome=[True, False, True, False])
    res = forecast_scores(t, n_resamples=5, rng=0)
    assert res.statistic == pytest.approx(0.115)


def test_forecast_date_is_the_default_timestamp():
    t = pd.DataFrame({"model": ["m", "m"], "question": ["q", "q"], "probability": [0.1, 0.9],
                      "outcome": [1, 1], "forecast_date": ["2024-01-01", "2024-01-03"]})
    res = forecast_scores(t, n_resamples=5, rng=0)
    assert res.per_forecast["brier"].iloc[0] == pytest.approx(0.01)   # the later 0.9
    with pytest.raises(ValueError, match="one forecast per"):
        forecast_scores(t, timestamp=None, n_resamples=5, rng=0)
    with pytest.raises(ValueError, match="column 'when'"):
        forecast_scores(t, timestamp="when", n_resamples=5, rng=0)


# --------------------------------------------------------------------------- issue 17: input
def test_chosen_labels_differing_only_in_case_raise():
    table = pd.DataFrame({"model": ["m", "m"], "question": ["a", "b"],
                          "probability": [0.7, 0.6], "chosen": ["Yes", "No"],
                          "outcome": ["yes", "no"]})
    with pytest.raises(ValueError, match=r"Column 'chosen/outcome' \(input to forecast_scores\) "
                       r"must write each option one way .*'Yes' / 'yes'; 1 offending row"):
        forecast_scores(table, chosen="chosen", rng=0)
    same = table.assign(chosen=["yes", "no"])
    res = forecast_scores(same, chosen="chosen", n_resamples=10, rng=0)
    assert res.per_forecast["accuracy"].tolist() == [1.0, 1.0]


def test_chosen_labels_differing_only_in_type_raise():
    # '1' chosen and 1 happened compare unequal: four right answers once scored wrong
    table = pd.DataFrame({"model": ["m"] * 4, "question": list("abcd"),
                          "probability": [0.9, 0.8, 0.7, 0.6], "chosen": ["1", "0", "1", "1"],
                          "outcome": [1, 0, 1, 1]})
    with pytest.raises(ValueError, match=r"Column 'chosen/outcome'.*must write each option one "
                       r"way.*'1' / 1; 3 offending rows"):
        forecast_scores(table, chosen="chosen", rng=0)
    res = forecast_scores(table.assign(chosen=[1, 0, 1, 1]), chosen="chosen", n_resamples=10,
                          rng=0)
    assert res.per_forecast["accuracy"].tolist() == [1.0] * 4



def test_chosen_bool_beside_its_text_raises():
    # True chosen (built in Python) and 'True' happened (read from a CSV) compare unequal:
    # accuracy 0.75 was scored 0.0, Brier 0.125 scored 0.575, without a word
    table = pd.DataFrame({"model": ["m"] * 4, "question": list("abcd"),
                          "probability": [0.8, 0.7, 0.6, 0.9],
                          "chosen": [True, False, True, True],
                          "outcome": ["True", "False", "False", "True"]})
    with pytest.raises(ValueError, match=r"Column 'chosen/outcome' \(input to forecast_scores\) "
                       r"must hold booleans or their text, not both"):
        forecast_scores(table, chosen="chosen", rng=0)
    with pytest.raises(ValueError, match="booleans or their text"):
        forecast_scores(table.assign(chosen=table["chosen"].astype("boolean")),
                        chosen="chosen", rng=0)
    res = forecast_scores(table.assign(outcome=[True, False, False, True]), chosen="chosen",
                          n_resamples=10, rng=0)
    assert res.per_forecast["accuracy"].tolist() == [1.0, 1.0, 0.0, 1.0]

def test_model_named_like_the_pooled_row_raises():
    table = pd.DataFrame({"model": ["(all)", "m"], "question": ["a", "b"],
                          "probability": [0.7, 0.6], "outcome": [1, 0]})
    with pytest.raises(ValueError, match=r"Column 'model' \(input to forecast_scores\) must not "
                       r"use the name '\(all\)', which labels the pooled row; 1 offending row "
                       r"\(first: row 0\)"):
        forecast_scores(table, rng=0)


def test_intervals_do_not_depend_on_which_model_comes_first():
    gen = np.random.default_rng(5)
    n = 12
    df = pd.DataFrame({"model": np.repeat(["m1", "m2", "m3"], n),
                       "question": [f"q{i}" for i in range(n)] * 3,
                       "probability": gen.uniform(0.05, 0.95, 3 * n),
                       "outcome": np.tile(gen.integers(0, 2, n), 3)})
    first = forecast_scores(df, n_resamples=50, rng=3).table.set_index("model")
    flipped = forecast_scores(df.iloc[::-1], n_resamples=50, rng=3).table.set_index("model")
    assert first.loc["m1", "brier_ci_low"] < first.loc["m1", "brier_ci_high"]
    pd.testing.assert_frame_equal(first, flipped.loc[first.index])


def test_an_interval_that_is_the_point_itself_warns():
    # one question, or scores that do not vary: the sample shows no uncertainty, and the
    # point interval once came without a word
    import warnings

    from coherence import SmallSampleWarning

    one = pd.DataFrame({"model": ["m"], "question": ["q"], "probability": [0.8],
                        "outcome": [1]})
    with pytest.warns(SmallSampleWarning, match=r"4 interval\(s\) are the point itself "
                      r"\(m brier, m log_score, \(all\) brier, \(all\) log_score\): one "
                      r"question"):
        res = forecast_scores(one, n_resamples=20, rng=0)
    assert res.confidence_interval.low == res.confidence_interval.high == pytest.approx(0.04)
    same = pd.DataFrame({"model": ["m"] * 2, "question": ["q", "r"], "probability": [0.8] * 2,
                         "outcome": [1, 1], "topic": ["t", "u"]})
    with pytest.warns(SmallSampleWarning, match=r"one 'topic' cluster, or scores that do not"):
        forecast_scores(same, cluster="topic", n_resamples=20, rng=0)
    with warnings.catch_warnings(record=True) as caught:  # scores vary: no such warning
        warnings.simplefilter("always")
        forecast_scores(binary_table(), n_resamples=20, rng=0)
    assert not [w for w in caught if "point itself" in str(w.message)]


def two_forecasters(n: int, seed: int) -> pd.DataFrame:
    """Forecasters a and b on the same ``n`` questions ``q00``, ``q01``, ... (random
    forecasts and outcomes), the questions in topics of two."""
    gen = np.random.default_rng(seed)
    q = [f"q{i:02d}" for i in range(n)]
    return pd.DataFrame({"model": np.repeat(["a", "b"], n), "question": q * 2,
                         "probability": gen.uniform(0.05, 0.95, 2 * n),
                         "outcome": np.tile(gen.integers(0, 2, n), 2),
                         "topic": [f"t{i // 2}" for i in range(n)] * 2})


def test_intervals_on_fewer_than_6_questions_warn_that_they_cover_less():
    """Regression: the bootstrap-t intervals of a row on 2-9 questions came without a
    word; 95% intervals of a Brier score held their value 0.47 of the time at 2 questions,
    0.79-0.83 at 3 and 0.91 at 4 and 5 (benchmarks/check_forecastbench_small.py). Now a
    SmallSampleWarning names the rows below 6 questions (clusters with ``cluster``); the
    intervals are unchanged. From 6, none."""
    import warnings
    from unittest import mock

    from coherence import SmallSampleWarning
    from coherence._scoring import _forecast_warnings

    assert _forecast_warnings.MIN_INTERVAL_UNITS == 6
    df = two_forecasters(12, seed=5)
    few = df[~((df["model"] == "b") & (df["question"] >= "q04"))]  # b: 4 questions
    with pytest.warns(SmallSampleWarning) as caught:
        res = forecast_scores(few, n_resamples=99, rng=0)
    said = [str(w.message) for w in caught if "cover less" in str(w.message)]
    assert len(said) == 1 and "the intervals of 1 row(s) rest on fewer than 6 questions " \
        "(b (4))" in said[0]
    with warnings.catch_warnings():  # the intervals themselves are as before
        warnings.simplefilter("ignore")
        with mock.patch.object(_forecast_warnings, "MIN_INTERVAL_UNITS", 0):
            same = forecast_scores(few, n_resamples=99, rng=0)
    pd.testing.assert_frame_equal(res.table, same.table)
    with warnings.catch_warnings():  # 6 questions of each: no warning at all
        warnings.simplefilter("error")
        forecast_scores(df[df["question"] < "q06"], n_resamples=99, rng=0)
    with pytest.warns(SmallSampleWarning, match=r"of 3 row\(s\) rest on fewer than 6 "
                      r"questions \(a \(5\), b \(5\), \(all\) \(5\)\)"):
        forecast_scores(df[df["question"] < "q05"], n_resamples=99, rng=0)
    with pytest.warns(SmallSampleWarning, match=r"of 3 row\(s\) rest on fewer than 6 "
                      r"'topic' clusters \(a \(4\), b \(4\), \(all\) \(4\)\)"):
        forecast_scores(df.assign(topic=[f"t{i // 3}" for i in range(12)] * 2),
                        cluster="topic", n_resamples=99, rng=0)


def test_a_comparison_on_fewer_than_20_questions_warns():
    """Regression: the sign-flip comparison gave its p-value on any number of questions
    without a word; exact for symmetric differences, it rejected a true null with skewed
    ones (sharp against hedged) 0.087-0.122 of the time at 6-10 questions, 0.080 at 15
    (benchmarks/check_forecastbench_small.py). Now a SmallSampleWarning below 20
    questions (clusters); the p-value and interval are unchanged. From 20, none."""
    import warnings
    from unittest import mock

    from coherence import SmallSampleWarning
    from coherence._scoring import _forecast_warnings

    assert _forecast_warnings.MIN_COMPARE_UNITS == 20
    df = two_forecasters(24, seed=8)
    few = forecast_scores(df[df["question"] < "q19"], n_resamples=19, rng=0)
    with pytest.warns(SmallSampleWarning, match=r"ForecastScoresResult.compare: 19 questions "
                      r"\(< 20\): the sign flip is exact where the score differences are "
                      "symmetric"):
        res = few.compare("a", "b", n_resamples=999, rng=0)
    with mock.patch.object(_forecast_warnings, "MIN_COMPARE_UNITS", 0):
        same = few.compare("a", "b", n_resamples=999, rng=0)
    assert (res.pvalue, tuple(res.confidence_interval)) == (
        same.pvalue, tuple(same.confidence_interval))
    full = forecast_scores(df[df["question"] < "q20"], n_resamples=19, rng=0)
    with warnings.catch_warnings():  # 20 questions: no warning
        warnings.simplefilter("error")
        full.compare("a", "b", n_resamples=99, rng=0)
    topics = forecast_scores(df, cluster="topic", n_resamples=19, rng=0)
    with pytest.warns(SmallSampleWarning, match=r"12 'topic' clusters \(< 20\)"):
        topics.compare("a", "b", n_resamples=99, rng=0)


def test_a_probability_column_with_options_raises():
    # options score the option columns: a 'probability' column named with them went unused
    # (binary-looking scores from the multiclass ones, without a word)
    t = pd.DataFrame({"model": ["m"] * 2, "question": ["q1", "q2"], "p_yes": [0.9, 0.2],
                      "A": [0.7, 0.1], "B": [0.3, 0.9], "outcome": ["A", "B"]})
    with pytest.raises(ValueError, match=r"'probability' parameter.*None when 'options' "
                                         r"is given; got 'p_yes'"):
        forecast_scores(t, options=["A", "B"], probability="p_yes", n_resamples=9, rng=0)
    for probability in ("probability", None):  # the default, or none: the options alone
        res = forecast_scores(t, options=["A", "B"], probability=probability, n_resamples=9,
                              rng=0)
        assert res.table.loc[0, "brier"] == pytest.approx((0.3**2 * 2 + 0.1**2 * 2) / 2)


@pytest.mark.parametrize("blank", [pd.NA, np.nan, None])
def test_an_outcome_missing_on_one_row_of_a_question_is_called_missing(blank):
    # it read "must be the same on every row of a 'question' value ('q1' has 1, <NA>)",
    # as if the question had two outcomes
    t = binary_table().assign(outcome=pd.array([1, 0, blank, 0], dtype=object))
    msg = (r"Column 'outcome' \(input to forecast_scores\) must not be missing on some rows "
           r"of a 'question' value and given on others \(1 of them; 'q1' has 1 on its other "
           r"rows\); 1 offending row \(first: row 2 = (<NA>|nan|None)\)")
    with pytest.raises(ValueError, match=msg):
        forecast_scores(t)
    with pytest.raises(ValueError, match=r"'q1' has 0, 1"):  # two outcomes: as before
        forecast_scores(t.assign(outcome=pd.array([1, 0, 0, blank], dtype=object)))
