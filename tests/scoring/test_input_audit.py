"""Input checks found missing by an audit of the scoring functions: each test fails on
the code before its fix (a wrong answer returned silently, or pandas' raw error)."""

from __future__ import annotations

import datetime as dt

import numpy as np
import pandas as pd
import pytest

import coherence as c

pytestmark = pytest.mark.filterwarnings("ignore:forecast_scores:coherence.SmallSampleWarning")

# ----------------------------------------------------------- dd/mm dates
def _forecasts(dates):
    return pd.DataFrame({"model": ["a", "a", "a", "b"], "question": ["q1", "q1", "q2", "q1"],
                         "probability": [0.1, 0.9, 0.5, 0.5], "outcome": [1, 1, 0, 1],
                         "forecast_date": dates})


def test_day_first_dates_read_two_ways_raise():
    # '05/01/2024' would be 1 May and '20/01/2024' 20 January: the wrong forecast kept
    with pytest.raises(ValueError, match=r"Column 'forecast_date'.*written one way.*day first"
                                         r".*row 1 = '20/01/2024'.*month first.*ISO dates"):
        c.forecast_scores(_forecasts(["05/01/2024", "20/01/2024", "01/01/2024",
                                      "01/01/2024"]), n_resamples=20, rng=0)


def test_day_first_opening_dates_raise_in_contamination_filter():
    t = pd.DataFrame({"model": ["m", "m"], "question": ["q1", "q2"],
                      "opened": ["05/01/2024", "20.01.2024"]}, index=[10, 11])
    with pytest.raises(ValueError, match=r"Column 'opened'.*\(row 11 = '20.01.2024'"
                                         r".*2 offending rows.*row 10"):
        c.contamination_filter(t, {"m": "2024-01-10"})


def test_iso_mixed_with_year_last_dates_raise():
    t = pd.DataFrame({"model": ["m", "m"], "question": ["q1", "q2"],
                      "opened": ["2024-01-05", "01/20/2024"]})
    with pytest.raises(ValueError, match=r"mixes year-first dates.*1 offending row "
                                         r"\(first: row 1 = '01/20/2024'\)"):
        c.contamination_filter(t, {"m": "2024-01-10"})


@pytest.mark.parametrize("dates", [
    ["2024-01-05", "2024-01-20T10:00", "2024-01-01", "2024-01-01 00:00:00"],
    [pd.Timestamp("2024-01-05"), dt.datetime(2024, 1, 20), "2024-01-01",
     np.datetime64("2024-01-01")],
    ["01/05/2024", "01/20/2024", "01/01/2024", "01/01/2024"],     # month first throughout
    ["2024/01/05", "2024-01-20", "2024-01-01", "2024-01-01"],
])
def test_dates_read_one_way_are_kept(dates):
    pf = c.forecast_scores(_forecasts(dates), n_resamples=20, rng=0).per_forecast
    assert pf.loc[(pf.model == "a") & (pf.question == "q1"), "p_outcome"].item() == 0.9


# ----------------------------------------------------------- by = an output column
def _grouped(name):
    return pd.DataFrame({name: ["verbal"] * 4 + ["numeric"] * 4,
                         "item": ["q1", "q2", "q3", "q4"] * 2,
                         "probability": [0.9, 0.2, 0.7, 0.4, 0.6, 0.5, 0.3, 0.8],
                         "outcome": [1, 0, 1, 0] * 2})


@pytest.mark.parametrize("name", ["confidence", "brier", "accuracy", "log_score", "p_outcome",
                                  "correct", "n_forecasts", "n_questions", "question"])
def test_forecast_scores_by_an_output_column_raises(name):
    # by='confidence' gave one row per probability value: the column was overwritten
    with pytest.raises(ValueError, match=rf"'by' parameter of forecast_scores must be a column "
                                         rf"name other than.*; got '{name}'"):
        c.forecast_scores(_grouped(name), by=name, question="item", n_resamples=20, rng=0)


@pytest.mark.parametrize("name", ["correct", "type", "accuracy", "brier", "question"])
def test_question_scores_by_an_output_column_raises(name):
    data = _grouped(name).assign(kind="binary")
    with pytest.raises(ValueError, match=rf"'by' parameter of question_scores.*; got '{name}'"):
        c.question_scores(data, by=name, question="item", type="kind", n_resamples=20,
                          rng=0)


def test_by_with_a_free_name_still_groups():
    res = c.forecast_scores(_grouped("style"), by="style", question="item", n_resamples=20,
                            rng=0)
    assert list(res.table["style"]) == ["verbal", "numeric", "(all)"]
    assert res.table["brier"].round(3).tolist() == [0.075, 0.385, 0.23]


# ----------------------------------------------------------- pd.NA sources
@pytest.mark.parametrize("cells", [pd.array(["a", None], dtype="string"),
                                   pd.array(["a", pd.NA], dtype=object),
                                   [["a"], ["b", pd.NA]], [["a"], ["b", pd.NaT]]])
def test_pd_na_source_is_missing_not_cited(cells):
    cites = pd.DataFrame({"model": ["m", "m"], "question": ["q1", "q1"], "sources": cells},
                         index=["x", "y"])
    with pytest.raises(ValueError, match=r"Column 'sources'.*not contain missing values.*"
                                         r"1 offending row \(first: row 'y' = "):
        c.source_precision(cites, {"q1": ["a", "c"]}, n_resamples=20, rng=0)


# ----------------------------------------------------------- nullable booleans
def test_knowledge_nullable_boolean_measure_with_na_raises():
    kd = pd.DataFrame({
        "model": ["m"] * 6, "question": list("abcdef"),
        "resolved": ["2023-01-01", "2023-03-01", "2023-05-01", "2024-03-01", "2024-05-01",
                     "2024-07-01"],
        "violation": pd.array([True, False, None, True, True, False], dtype="boolean")})
    with pytest.raises(ValueError, match=r"Column 'violation'.*missing values.*"
                                         r"1 offending row \(first: row 2\)"):
        c.coherence_by_knowledge(kd, cutoff="2024-01-01", rng=0)


# ----------------------------------------------------------- one outcome per question
def test_question_scores_two_outcomes_of_one_question_raise():
    d = pd.DataFrame({"model": ["a", "a", "b", "b"], "question": ["q1", "q2", "q1", "q2"],
                      "type": "binary", "probability": [0.9, 0.2, 0.6, 0.5],
                      "outcome": [1, 0, 0, 1]})
    with pytest.raises(ValueError, match=r"Column 'outcome' \(input to question_scores\) must be "
                                         r"the same on every row of a 'question' value"):
        c.question_scores(d, n_resamples=20, rng=0)


# ----------------------------------------------------------- the pooled label '(all)'
def test_question_scores_model_named_like_the_pooled_row_raises():
    q = pd.DataFrame({"model": ["(all)", "(all)", "b", "b"], "question": ["q1", "q2"] * 2,
                      "type": "binary", "probability": [0.9, 0.2, 0.6, 0.5],
                      "outcome": [1, 0, 1, 0]})
    with pytest.raises(ValueError, match=r"Column 'model' \(input to question_scores\) must "
                                         r"not use the name '\(all\)'.*row 0, row 1"):
        c.question_scores(q, n_resamples=20, rng=0)


def test_accuracy_by_horizon_model_named_like_the_pooled_row_raises():
    h = pd.DataFrame({"model": ["(all)"] * 2 + ["b"] * 2, "question": ["a", "b"] * 2,
                      "horizon": "early", "correct": [1.0, 1.0, 0.0, 0.0]})
    with pytest.raises(ValueError, match=r"Column 'model' \(input to accuracy_by_horizon\) "
                                         r"must not use the name '\(all\)'"):
        c.accuracy_by_horizon(h, n_resamples=20, rng=0)


def test_accuracy_by_horizon_empty_table_raises():
    h = pd.DataFrame({"model": [], "question": [], "horizon": [], "correct": []})
    with pytest.raises(ValueError, match=r"'forecasts' parameter of accuracy_by_horizon must "
                                         r"be a table with at least one row"):
        c.accuracy_by_horizon(h, n_resamples=20, rng=0)


# ----------------------------------------------------------- ids written two ways
def _binary(model, question):
    return pd.DataFrame({"model": model, "question": question,
                         "probability": [0.9, 0.2, 0.7, 0.4, 0.6, 0.5, 0.3, 0.8],
                         "outcome": [1, 0, 1, 0] * 2})


def test_forecast_scores_question_ids_of_two_types_raise():
    # 1 and '1' were two questions: 8 questions pooled, and no common question to compare
    d = _binary(["a"] * 4 + ["b"] * 4, [1, 2, 3, 4, "1", "2", "3", "4"])
    with pytest.raises(ValueError, match=r"Column 'question' \(input to forecast_scores\).*"
                                         r"found '1' / 1.*8 offending rows.*row 0 = 1.*"
                                         r"row 4 = '1'"):
        c.forecast_scores(d, n_resamples=20, rng=0)


def test_forecast_scores_model_ids_differing_in_case_raise():
    d = _binary(["a"] * 4 + ["A "] * 4, [1, 2, 3, 4] * 2)
    with pytest.raises(ValueError, match=r"Column 'model'.*found 'A ' / 'a'"):
        c.forecast_scores(d, n_resamples=20, rng=0)


def test_forecastbench_model_ids_of_two_types_raise():
    # two rows both labelled '1' on the leaderboard
    d = _binary([1] * 4 + ["1"] * 4, [1, 2, 3, 4] * 2)
    with pytest.raises(ValueError, match=r"Column 'model' \(input to forecastbench_scores\).*"
                                         r"found '1' / 1"):
        c.forecastbench_scores(d, n_resamples=20, rng=0)


def _hindsight():
    return pd.DataFrame({
        "question": ["q1", "q1", "q2"], "event": ["e1", "e2", "e3"],
        "title": ["Central bank raises interest rates", "Strike closes ports",
                  "Election called early"],
        "date": ["2024-03-01", "2024-03-04", "2024-03-02"], "magnitude": [0.9, 0.5, 0.8],
        "confidence": [0.9, 0.8, 1.0]})


def _forecast_events(questions):
    return pd.DataFrame({"model": ["m", "m"], "question": questions,
                         "title": ["Central bank raises interest rates again",
                                   "Election called early by PM"],
                         "date": ["2024-03-02", "2024-03-02"]})


def test_key_event_recall_question_written_two_ways_across_tables_raises():
    # 'Q2' found no hindsight events: KER over one forecast instead of two
    with pytest.raises(ValueError, match=r"Column 'question' \(input to key_event_recall\) "
                                         r"must write each id one way in forecast_events and "
                                         r"hindsight_events.*'Q2' / 'q2'.*forecast_events row "
                                         r"1; hindsight_events row 2"):
        c.key_event_recall(_forecast_events(["q1", "Q2"]), _hindsight(), rng=0)


def test_key_event_recall_question_without_hindsight_events_warns():
    with pytest.warns(c.SkippedRecordsWarning, match=r"1 question\(s\) of the forecasts have "
                                                     r"no row in hindsight_events \('q3'\)"):
        res = c.key_event_recall(_forecast_events(["q1", "q3"]), _hindsight(), rng=0)
    assert res.n_no_key_events == 1 and res.n_obs == 1


def test_key_event_recall_both_tables_matching_is_silent():
    res = c.key_event_recall(_forecast_events(["q1", "q2"]), _hindsight(), rng=0)
    assert res.statistic == pytest.approx(0.75)


def test_market_checks_question_ids_of_two_types_raise():
    # events keyed 1, prices keyed '1': every question without prices, a NaN silently
    ev = pd.DataFrame({"question": [1, 2], "date": ["2024-01-05"] * 2, "direction": [1, -1],
                       "magnitude": [1.0, 1.0], "confidence": [1.0, 1.0]})
    px = pd.DataFrame({"question": ["1", "1", "2", "2"],
                       "date": ["2024-01-04", "2024-01-06"] * 2, "price": [0.4, 0.6, 0.5, 0.6]})
    with pytest.raises(ValueError, match=r"Column 'question' \(input to market_checks\) must "
                                         r"write each id one way in events and prices.*"
                                         r"found '1' / 1.*events row 0; prices rows 0, 1"):
        c.market_checks(ev, px, rng=0)


def test_prices_with_one_market_written_two_ways_raise():
    px = pd.DataFrame({"question": ["a", "A", "b", "b"],
                       "date": ["2024-01-04", "2024-01-06"] * 2, "price": [0.4, 0.6, 0.5, 0.6]})
    with pytest.raises(ValueError, match=r"Column 'question' \(input to turning_points\).*"
                                         r"found 'A' / 'a'"):
        c.turning_points(px, question="question")


# ----------------------------------------------------------- market_alignment: one market
_EV = pd.DataFrame({"question": ["A"], "date": ["2024-01-05"], "direction": [1],
                    "magnitude": [1.0], "confidence": [1.0]})
_PX = pd.DataFrame({"question": ["A", "B", "A", "B"],
                    "date": ["2024-01-04", "2024-01-04T12:00", "2024-01-06", "2024-01-05T12:00"],
                    "price": [0.40, 0.90, 0.55, 0.10]})


def test_market_alignment_prices_of_two_markets_raise():
    # pooled, market B's prices gave a move of -0.8 and agreement 0 (market A alone: 1)
    with pytest.raises(ValueError, match=r"Column 'question' \(input to market_alignment\) "
                                         r"must hold one market.*'A'.*'B'.*2 offending rows "
                                         r"\(first: row 1 = 'B', row 3 = 'B'\)"):
        c.market_alignment(_EV, _PX)


def test_market_alignment_events_and_prices_of_different_markets_raise():
    with pytest.raises(ValueError, match=r"events has 'A', prices 'B'"):
        c.market_alignment(_EV, _PX[_PX.question == "B"])


def test_market_alignment_one_market_is_scored():
    assert c.market_alignment(_EV, _PX[_PX.question == "A"]).statistic == 1.0
    assert c.market_alignment(_EV.drop(columns="question"),
                              _PX[_PX.question == "A"].drop(columns="question")).statistic == 1.0


def test_market_alignment_two_prices_at_one_time_raise():
    px = pd.DataFrame({"date": ["2024-01-04", "2024-01-04", "2024-01-06"],
                       "price": [0.40, 0.90, 0.55]})
    with pytest.raises(ValueError, match=r"Column 'price' \(input to market_alignment\) must "
                                         r"be the same on every row of a 'date' value"):
        c.market_alignment(_EV.drop(columns="question"), px)


# ----------------------------------------------------------- clearer errors, lesser fixes
_RA = pd.DataFrame({"model": ["m"] * 2, "start": ["2024-01-01", "2024-02-01"],
                    "correct": [1, 0]})


@pytest.mark.parametrize("window", ["1ME", "1W", "1B", "0D"])
def test_rolling_accuracy_window_of_varying_length_names_window(window):
    # pandas said "<MonthEnd> is a non-fixed frequency"
    with pytest.raises(ValueError, match=r"'window' parameter of rolling_accuracy must be a "
                                         r"fixed-length pandas offset.*got '"):
        c.rolling_accuracy(_RA, window=window, min_periods=1)


def test_rolling_accuracy_keeps_aware_starts_aware():
    ra = _RA.assign(start=["2024-01-01T00:00+01:00", "2024-02-01T00:00+01:00"])
    out = c.rolling_accuracy(ra, window="40D", min_periods=1)
    assert str(out["start"].dt.tz) == "UTC+01:00"  # the zone given, not UTC
    assert out["start"].iloc[0] == pd.Timestamp("2023-12-31T23:00Z")
    assert str(out["start"].iloc[0]) == "2024-01-01 00:00:00+01:00"
    naive = c.rolling_accuracy(_RA, window="40D", min_periods=1)
    assert naive["start"].dt.tz is None


def test_compare_names_the_labels_as_they_are():
    # "must be a value of column 'model' (['1', '2']); got '1'": 1 and '1' looked alike
    b = pd.DataFrame({"model": [1] * 2 + [2] * 2, "question": ["q1", "q2"] * 2,
                      "probability": [0.9, 0.2, 0.6, 0.5], "outcome": [1, 0] * 2})
    res = c.forecast_scores(b, n_resamples=20, rng=0)
    with pytest.raises(ValueError, match=r"'model_a' parameter of ForecastScoresResult.compare "
                                         r"must be a value of column 'model' \(one of 1, 2; "
                                         r"labels are compared exactly: did you mean 1\?\); "
                                         r"got '1'"):
        res.compare("1", "2", rng=0)


def test_plot_rolling_accuracy_draws_aware_starts_in_utc():
    pytest.importorskip("matplotlib")
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    ra = _RA.assign(start=["2024-01-01T00:00+01:00", "2024-02-01T00:00+01:00"])
    ax = c.plot_rolling_accuracy(c.rolling_accuracy(ra, window="40D", min_periods=1),
                                 cutoffs={"m": "2024-01-15T00:00Z"})
    x = ax.lines[0].get_xdata()
    assert pd.Timestamp(x[0]) == pd.Timestamp("2023-12-31T23:00")
    plt.close(ax.figure)


def test_question_scores_question_ids_of_two_types_raise():
    q = pd.DataFrame({"model": ["a", "a", "b", "b"], "question": [1, 2, "1", "2"],
                      "type": "binary", "probability": [0.9, 0.2, 0.6, 0.5],
                      "outcome": [1, 0, 1, 0]})
    with pytest.raises(ValueError, match=r"Column 'question' \(input to question_scores\).*"
                                         r"found '1' / 1"):
        c.question_scores(q, n_resamples=20, rng=0)


# ----------------------------------------------------------- cluster ids written two ways
def test_cluster_ids_written_two_ways_raise():
    """'Q0' and 'q0' (or 1 and '1') in a column that clusters the resampling were two
    clusters: the question split, its count and the intervals off, without a word."""
    rng = np.random.default_rng(1)
    q = [f"q{i // 2}" for i in range(12)]
    df = pd.DataFrame({"model": ["a", "b"] * 6, "question": ["Q0", *q[1:]],
                       "probability": rng.uniform(size=12).round(2),
                       "outcome": [i // 2 % 2 for i in range(12)]})
    rule = r"Column 'question' \(input to {}\).*differ by more than case.*'Q0' / 'q0'"
    with pytest.raises(ValueError, match=rule.format("calibration_error")):
        c.calibration_error(df, group="question", n_resamples=20, rng=0)
    with pytest.raises(ValueError, match=rule.format("smooth_ece")):
        c.smooth_ece(df, group="question", n_resamples=5, rng=0)
    with pytest.raises(ValueError, match=rule.format("accuracy_by_horizon")):
        c.accuracy_by_horizon(df.assign(horizon="early", correct=1.0), rng=0)
    with pytest.raises(ValueError, match=rule.format("coherence_by_knowledge")):
        c.coherence_by_knowledge(df.assign(resolved="2024-01-01", violation=0.5),
                                 cutoff="2023-01-01", n_resamples=20, rng=0)
    cites = df.assign(sources=[["x"]] * 12)
    with pytest.raises(ValueError, match=r"'question'.*citations and reference.*'Q0' / 'q0'"):
        c.source_precision(cites.assign(question=q), {"Q0": ["x"], **{k: ["x"] for k in q[2:]}})
    with pytest.raises(ValueError, match=r"'model' \(input to source_precision\).*'A' / 'a'"):
        c.source_precision(cites.assign(question=q, model=["A", *df["model"][1:]]),
                           {k: ["x"] for k in q})
    topics = ["T1" if i < 2 else f"t{i // 4}" for i in range(12)]  # t0 and T1 and t1
    with pytest.raises(ValueError, match=r"Column 'topic' \(input to forecast_scores\)"):
        c.forecast_scores(df.assign(question=q, topic=topics), cluster="topic",
                          n_resamples=20, rng=0)
    ints = df.assign(question=[1, "1", *range(2, 12)])
    with pytest.raises(ValueError, match=r"Column 'question' \(input to calibration_error\)"):
        c.calibration_error(ints, group="question", n_resamples=20, rng=0)
