"""simulated_dates, horizon_positions, accuracy_by_horizon, rolling_accuracy and plots."""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import coherence


def tasks() -> pd.DataFrame:
    return pd.DataFrame({"question": ["q1", "q2"], "start": ["2024-01-01", "2024-03-01"],
                         "resolution_date": ["2024-01-31", "2024-03-31"]})


def test_simulated_dates_at_the_paper_positions():
    out = coherence.simulated_dates(tasks(), positions=["midpoint", "early", "mid", "late",
                                                        "near_resolution", 0.25])
    q1 = out.loc[out["question"] == "q1"].set_index("position")
    day = pd.Timedelta(days=1)
    start = pd.Timestamp("2024-01-01")
    assert q1.loc["midpoint", "simulated_date"] == start + 15 * day
    assert q1.loc["early", "simulated_date"] == start + 5 * day            # 30 / 6
    assert q1.loc["mid", "simulated_date"] == start + 15 * day
    assert q1.loc["late", "fraction"] == pytest.approx((2 / 3 + 0.95) / 2)
    assert q1.loc["near_resolution", "simulated_date"] == pd.Timestamp("2024-01-30")
    assert q1.loc["near_resolution", "fraction"] == pytest.approx(29 / 30)
    assert q1.loc["0.25", "simulated_date"] == start + pd.Timedelta(hours=180)
    assert len(out) == 12


def test_uniform_placement_stays_in_its_band_and_is_reproducible():
    a = coherence.simulated_dates(tasks(), positions=["early", "late"], placement="uniform",
                                  rng=3)
    b = coherence.simulated_dates(tasks(), positions=["early", "late"], placement="uniform",
                                  rng=3)
    pd.testing.assert_frame_equal(a, b)
    early = a.loc[a["position"] == "early", "fraction"]
    late = a.loc[a["position"] == "late", "fraction"]
    assert early.between(0, 1 / 3).all() and late.between(2 / 3, 0.95).all()


def test_simulated_dates_validation():
    with pytest.raises(ValueError, match="'positions' parameter"):
        coherence.simulated_dates(tasks(), positions=["soon"])
    with pytest.raises(ValueError, match="'positions' parameter"):
        coherence.simulated_dates(tasks(), positions=[1.0])
    with pytest.raises(ValueError, match="'placement' parameter"):
        coherence.simulated_dates(tasks(), placement="random")
    short = tasks().assign(resolution_date=["2024-01-01T12:00", "2024-03-31"])
    with pytest.raises(ValueError, match="at least one day after 'start'"):
        coherence.simulated_dates(short, positions=["near_resolution"])
    with pytest.raises(ValueError, match="after 'start'"):
        coherence.simulated_dates(tasks().assign(resolution_date=["2023-01-01"] * 2))


@pytest.mark.parametrize("positions", [["early", "early"], ["mid", 0.25, "mid"], [0.5, 0.50]])
def test_simulated_dates_refuses_a_position_given_twice(positions):
    # with placement='uniform' each copy drew its own date, so one (question, position)
    # had two dates, where the docstring promises one draw per question and position
    with pytest.raises(ValueError, match=r"'positions' parameter.*each position once"):
        coherence.simulated_dates(tasks(), positions=positions, placement="uniform", rng=0)


def forecasts() -> pd.DataFrame:
    return pd.DataFrame({
        "start": ["2024-01-01"] * 6, "resolution_date": ["2024-01-31"] * 6,
        # fractions 0, 10/30, 20/30, 28.4/30 = 0.947, 28.8/30 = 0.96, 30 - 1 day
        "simulated_date": ["2024-01-01", "2024-01-11", "2024-01-21", "2024-01-29T09:36",
                           "2024-01-29T19:12", "2024-01-30"],
        "live": [False] * 5 + [True]})


def test_horizon_positions_bands():
    labels = coherence.horizon_positions(forecasts()).tolist()
    assert labels == ["early", "mid", "late", "late", "other", "near_resolution"]
    live = coherence.horizon_positions(forecasts(), real_time="live").tolist()
    assert live[-1] == "real_time"
    # a live forecast needs no simulated date
    f = forecasts().assign(simulated_date=[*forecasts()["simulated_date"][:5], None])
    assert coherence.horizon_positions(f, real_time="live").iloc[-1] == "real_time"


@pytest.mark.parametrize(("change", "match"), [
    ({"simulated_date": ["2023-12-31"] + ["2024-01-05"] * 5}, "Column 'simulated_date'.*lie in"),
    ({"simulated_date": ["2024-01-31"] + ["2024-01-05"] * 5}, "Column 'simulated_date'.*lie in"),
    ({"simulated_date": [None] + ["2024-01-05"] * 5}, "Column 'simulated_date'.*missing"),
    ({"live": ["yes"] * 6}, "Column 'live'.*True/False"),
])
def test_horizon_positions_validation(change, match):
    with pytest.raises(ValueError, match=match):
        coherence.horizon_positions(forecasts().assign(**change), real_time="live")


@given(st.floats(0.0, 0.999))
def test_positions_round_trip(fraction):
    """A date made at fraction f is labelled by the band containing f."""
    out = coherence.simulated_dates(tasks(), positions=[fraction])
    frame = tasks().assign(simulated_date=out["simulated_date"].to_numpy())
    labels = coherence.horizon_positions(frame)
    span = 30 * 86_400e9
    for f_, lab, r in zip(out["fraction"], labels, ["2024-01-31", "2024-03-31"], strict=True):
        sim = out["simulated_date"].iloc[0 if r.startswith("2024-01") else 1]
        if pd.Timestamp(r) - sim <= pd.Timedelta(days=1):
            assert lab == "near_resolution"
        elif f_ < 1 / 3 - 1 / span:
            assert lab == "early"
        elif 1 / 3 + 1 / span < f_ < 2 / 3 - 1 / span:
            assert lab == "mid"
        elif 2 / 3 + 1 / span < f_ < 0.95 - 1 / span:
            assert lab == "late"


def scored() -> pd.DataFrame:
    return pd.DataFrame({
        "model": ["a"] * 6 + ["b"] * 6,
        "question": ["q1", "q2", "q3"] * 4,
        "horizon": (["early"] * 3 + ["late"] * 3) * 2,
        "correct": [0, 1, 0, 1, 1, 1, 1, 1, 0, 1, 1, 0.5],
        "start": ["2024-01-01", "2024-01-05", "2024-03-01"] * 4})


def test_accuracy_by_horizon_hand_computed():
    res = coherence.accuracy_by_horizon(scored(), n_resamples=100, rng=0)
    t = res.table.set_index(["model", "horizon"])
    assert t.loc[("a", "early"), "accuracy"] == pytest.approx(1 / 3)
    assert t.loc[("b", "late"), "accuracy"] == pytest.approx(2.5 / 3)
    assert t.loc[("(all)", "late"), "accuracy"] == pytest.approx(5.5 / 6)
    assert t.loc[("(all)", "early"), "n"] == 6 and t.loc[("(all)", "early"), "n_questions"] == 3
    assert res.statistic == pytest.approx(scored()["correct"].mean())
    assert list(pd.unique(res.table["horizon"])) == ["early", "late"]
    assert (res.table["ci_low"] <= res.table["ci_high"]).all()


def test_accuracy_by_horizon_interval_follows_what_correct_holds():
    """0/1 values get the proportion's interval; fractions (half credit) the fraction
    interval of cluster_mean_interval, which does not read them as coin flips."""
    from coherence._resampling import MEAN_KINDS
    from coherence._resampling import cluster_mean_interval

    gen = np.random.default_rng(4)
    n = 24
    frame = pd.DataFrame({"model": "m", "question": np.arange(n) % 12,
                          "horizon": np.where(np.arange(n) < 12, "early", "late")})
    for values, kind in ((gen.uniform(0.3, 0.9, n), "fraction"),
                         ((gen.random(n) < 0.7).astype(float), "proportion")):
        res = coherence.accuracy_by_horizon(frame.assign(correct=values), rng=0)
        # the method names the interval given (it named the proportion's for fractions)
        assert res.method == f"{MEAN_KINDS[kind]} over questions"
        for _, row in res.table.iterrows():
            mask = (frame["horizon"] == row["horizon"]).to_numpy()  # one model: m = (all)
            expected = cluster_mean_interval(values[mask], frame["question"][mask], 1, 0.95,
                                             np.random.default_rng(0), kind=kind)
            assert (row["ci_low"], row["ci_high"]) == pytest.approx(expected)
    # the fraction interval is the narrower one on spread-out fractions
    fractions = gen.uniform(0.3, 0.9, n)
    res = coherence.accuracy_by_horizon(frame.assign(correct=fractions), rng=0)
    low, high = res.confidence_interval.low, res.confidence_interval.high
    p_low, p_high = cluster_mean_interval(fractions, frame["question"], 1, 0.95,
                                          np.random.default_rng(0), kind="proportion")
    assert high - low < p_high - p_low


def test_accuracy_by_horizon_validation():
    with pytest.raises(ValueError, match=r"Column 'correct'.*\[0, 1\]"):
        coherence.accuracy_by_horizon(scored().assign(correct=2), rng=0)
    with pytest.raises(ValueError, match="column 'horizon'"):
        coherence.accuracy_by_horizon(scored().drop(columns="horizon"), rng=0)
    # 'early' and 'Early ' once became two horizons of one forecast each
    typed_twice = scored()
    typed_twice.loc[typed_twice.index[0], "horizon"] = (
        str(typed_twice["horizon"].iloc[0]).capitalize() + " ")
    with pytest.raises(ValueError, match=r"Column 'horizon'.*differ by more than case"):
        coherence.accuracy_by_horizon(typed_twice, rng=0)


@pytest.mark.parametrize("name", ["n", "accuracy", "ci_low", "horizon"])
def test_accuracy_by_horizon_refuses_a_by_column_named_like_its_own(name):
    """Regression: by='n' (or 'accuracy', 'ci_low') put the counts (the accuracies, the
    interval ends) where the model names belonged, in a table with that column twice."""
    frame = scored().drop(columns="horizon" if name == "horizon" else []).rename(
        columns={"model": name})
    if name == "horizon":
        frame = frame.assign(when=(["early"] * 3 + ["late"] * 3) * 2)
    with pytest.raises(ValueError, match=rf"'by' parameter of accuracy_by_horizon.*{name!r}"):
        coherence.accuracy_by_horizon(frame, by=name,
                                      horizon="when" if name == "horizon" else "horizon",
                                      rng=0)


@pytest.mark.parametrize("name", ["n", "accuracy", "start"])
def test_rolling_accuracy_refuses_a_by_column_named_like_its_own(name):
    """Regression: by='n' gave a table whose model column held the window counts."""
    frame = scored().rename(columns={"model": name})
    if name == "start":
        frame = scored().rename(columns={"model": "start", "start": "opened"})
    with pytest.raises(ValueError, match=rf"'by' parameter of rolling_accuracy.*{name!r}"):
        coherence.rolling_accuracy(frame, by=name,
                                   start="opened" if name == "start" else "start")


def _brute_rolling(days: np.ndarray, c: np.ndarray, window: float, min_periods: int):
    out = []
    for d in days:
        inside = (days > d - window) & (days <= d)
        out.append(c[inside].mean() if inside.sum() >= min_periods else np.nan)
    return np.array(out)


@given(st.lists(st.tuples(st.integers(0, 120), st.sampled_from([0.0, 0.5, 1.0])),
                min_size=1, max_size=25), st.integers(1, 40), st.integers(1, 4))
def test_rolling_accuracy_matches_brute_force(rows, window, min_periods):
    rows = sorted(rows, key=lambda r: r[0])
    days = np.array([r[0] for r in rows], dtype=float)
    c = np.array([r[1] for r in rows])
    # a forecast id keeps forecasts alike in every other column apart (deliberate repeats)
    df = pd.DataFrame({"model": "m", "start": pd.Timestamp("2024-01-01")
                       + pd.to_timedelta(days, unit="D"), "correct": c,
                       "forecast": range(len(rows))})
    out = coherence.rolling_accuracy(df, window=f"{window}D", min_periods=min_periods)
    np.testing.assert_allclose(out["accuracy"].to_numpy(),
                               _brute_rolling(days, c, window, min_periods))


def test_rolling_accuracy_by_count_and_validation():
    out = coherence.rolling_accuracy(scored(), window=2, min_periods=1)
    a = out.loc[out["model"] == "a"]
    assert a["start"].is_monotonic_increasing and len(out) == 12
    with pytest.raises(ValueError, match="'window' parameter"):
        coherence.rolling_accuracy(scored(), window="thirty days")
    with pytest.raises(TypeError, match="'window' parameter"):
        coherence.rolling_accuracy(scored(), window=2.5)


@pytest.mark.parametrize(("numpy_window", "window"), [(np.str_("2D"), "2D"),
                                                       (np.str_("36h"), "36h"),
                                                       (np.int64(2), 2), (np.int32(3), 3)])
def test_rolling_accuracy_takes_numpy_scalars_as_windows(numpy_window, window):
    """A window read from a numpy array: np.str_('5D') raised pandas' Cython TypeError
    ("Argument 'freq' has incorrect type"), np.int64(2) was refused as not an int."""
    want = coherence.rolling_accuracy(scored(), window=window, min_periods=1)
    got = coherence.rolling_accuracy(scored(), window=numpy_window, min_periods=1)
    pd.testing.assert_frame_equal(got, want)
    with pytest.raises(ValueError, match="'window' parameter of rolling_accuracy"):
        coherence.rolling_accuracy(scored(), window=np.str_("5"))
    with pytest.raises(TypeError, match="'window' parameter of rolling_accuracy"):
        coherence.rolling_accuracy(scored(), window=np.bool_(True))


def test_rolling_accuracy_keeps_the_models_in_the_order_they_first_appear():
    """The docstring said "sorted by model then start"; the models come in the order of
    their first row (as ever), each model's rows sorted by start, as it now says."""
    fc = {"model": ["b", "a", "b", "a"], "correct": [1, 0, 1, 1],
          "start": ["2024-01-03", "2024-01-02", "2024-01-01", "2024-01-01"]}
    out = coherence.rolling_accuracy(fc, min_periods=1)
    assert out["model"].tolist() == ["b", "b", "a", "a"]
    assert [str(d.date()) for d in out["start"]] == ["2024-01-01", "2024-01-03",
                                                      "2024-01-01", "2024-01-02"]
    doc = coherence.rolling_accuracy.__doc__
    assert "sorted by model" not in doc and "the order they first appear" in doc


@pytest.mark.parametrize("ids", [[1, "1", 1, 1], ["GPT", "gpt", "GPT", "GPT"],
                                 ["m", "m ", "m", "m"]])
def test_rolling_accuracy_refuses_one_model_typed_two_ways(ids):
    """1 and '1' (or 'GPT' and 'gpt') were two models, each with its own rolling series,
    shown under one printed name."""
    fc = pd.DataFrame({"model": pd.Series(ids, dtype=object),
                       "start": ["2024-01-01", "2024-01-05", "2024-01-05", "2024-01-20"],
                       "correct": [1, 0, 1, 1]})
    with pytest.raises(ValueError, match=r"Column 'model'.*differ by more than case"):
        coherence.rolling_accuracy(fc, min_periods=1)


def test_plots_draw_lines_and_cutoffs():
    res = coherence.accuracy_by_horizon(scored(), n_resamples=20, rng=0)
    fig, ax = plt.subplots()
    assert coherence.plot_accuracy_by_horizon(res, ax=ax) is ax
    assert [t.get_text() for t in ax.get_xticklabels()] == ["early", "late"]
    assert (ax.get_ylim(), ax.get_xlabel(), ax.get_title()) == (
        (0, 1), "horizon position", "Accuracy by horizon")
    plt.close(fig)
    roll = coherence.rolling_accuracy(scored(), min_periods=1)
    fig, ax = plt.subplots()
    coherence.plot_rolling_accuracy(roll, cutoffs={"a": "2024-02-01"}, ax=ax)
    labels = [line.get_label() for line in ax.get_lines()]
    assert labels == ["a", "a cutoff", "b"]
    assert (ax.get_ylim(), ax.get_ylabel(), ax.get_title()) == (
        (0, 1), "rolling accuracy", "Accuracy over question start time")
    plt.close(fig)
    # a month-only cutoff is drawn where contamination_filter applies it, the month's end
    lines = {}
    for cut in ("2024-01", "2024-02-01"):
        fig, ax = plt.subplots()
        coherence.plot_rolling_accuracy(roll, cutoffs={"a": cut}, ax=ax)
        lines[cut] = ax.get_lines()[1].get_xdata()
        plt.close(fig)
    assert list(lines["2024-01"]) == list(lines["2024-02-01"])
    with pytest.raises(TypeError, match="HorizonAccuracyResult"):
        coherence.plot_accuracy_by_horizon(roll)
    with pytest.raises(TypeError, match="rolling_accuracy"):
        coherence.plot_rolling_accuracy(res)


def test_simulated_dates_keep_the_timezone_of_aware_input():
    # UTC input came back naive; horizon_positions then raised and the date could not be a
    # TemporalGateway cutoff
    aware = tasks().assign(start=["2024-01-01T00:00+02:00", "2024-03-01T00:00Z"],
                           resolution_date=["2024-01-31T00:00+02:00", "2024-03-31T00:00Z"])
    out = coherence.simulated_dates(aware, positions=["midpoint", "near_resolution"])
    assert str(out["simulated_date"].dt.tz) == "UTC"
    q1 = out.loc[out["question"] == "q1"].set_index("position")
    assert q1.loc["midpoint", "simulated_date"] == pd.Timestamp("2024-01-15T22:00Z")
    forecasts = aware.merge(out, on="question")
    assert coherence.horizon_positions(forecasts).tolist() == ["mid", "near_resolution"] * 2
    gate = coherence.TemporalGateway(q1.loc["midpoint", "simulated_date"])
    assert gate.cutoff == pd.Timestamp("2024-01-15T22:00Z")
    naive = coherence.simulated_dates(tasks())
    assert naive["simulated_date"].dt.tz is None


def test_bool_correct_reads_as_0_and_1():
    """A bool ``correct`` column (numpy or nullable) is the 0/1 one; it was refused as
    not numeric. A missing value still raises, named by row."""
    fc = pd.DataFrame({"model": ["m"] * 6, "question": list("abcabc"),
                       "horizon": ["early"] * 3 + ["late"] * 3,
                       "start": ["2024-01-01", "2024-01-05", "2024-01-09"] * 2,
                       "correct": [1, 0, 1, 1, 1, 0]})
    want = coherence.accuracy_by_horizon(fc, rng=0).table
    want_rolling = coherence.rolling_accuracy(fc, min_periods=1)
    for dtype in (bool, "boolean"):
        got = fc.astype({"correct": dtype})
        pd.testing.assert_frame_equal(coherence.accuracy_by_horizon(got, rng=0).table, want)
        pd.testing.assert_frame_equal(coherence.rolling_accuracy(got, min_periods=1),
                                      want_rolling)
    gaps = fc.astype({"correct": "boolean"})
    gaps.loc[4, "correct"] = pd.NA
    with pytest.raises(ValueError, match=r"'correct'.*row 4"):
        coherence.accuracy_by_horizon(gaps, rng=0)


# --------------------------------------------------------------------------- repeated rows, blanks
def _early_late() -> pd.DataFrame:
    return pd.DataFrame({"model": ["m"] * 3, "question": ["a", "b", "a"],
                         "horizon": ["early", "early", "late"], "correct": [0, 1, 1]})


@pytest.mark.parametrize("ignore_index", [False, True])
def test_accuracy_by_horizon_refuses_a_row_repeated_in_every_column(ignore_index):
    """Regression: a row given twice (a file read or concatenated twice) counted twice:
    early accuracy 1/3 where it is 1/2. The error names the columns compared, the rows
    and the way out."""
    fc = _early_late()
    twice = pd.concat([fc, fc.iloc[[0]]], ignore_index=ignore_index)
    with pytest.raises(ValueError, match=r"'forecasts' parameter of accuracy_by_horizon.*"
                       r"every column \('model', 'question', 'horizon', 'correct'\).*"
                       r"first: row (3|0 \(position 3\)) repeats row 0.*drop_duplicates\(\)"):
        coherence.accuracy_by_horizon(twice, rng=0)
    # forecasts alike in the columns scored but told apart by another column (a date):
    # several forecasts of one question in one band, both counted as before
    dated = twice.assign(date=["2024-01-01", "2024-01-02", "2024-01-20", "2024-01-05"])
    t = coherence.accuracy_by_horizon(dated, rng=0).table.set_index(["model", "horizon"])
    assert t.loc[("m", "early"), "accuracy"] == pytest.approx(1 / 3)
    assert t.loc[("m", "early"), "n"] == 3
    assert coherence.accuracy_by_horizon(fc, rng=0).table.set_index(
        ["model", "horizon"]).loc[("m", "early"), "accuracy"] == 0.5


def test_rolling_accuracy_refuses_a_row_repeated_in_every_column():
    """Regression: a row given twice counted twice: the 30-day accuracy on 10 January
    was 1/3 where it is 1/2 (and n 3 where it is 2)."""
    r = pd.DataFrame({"model": ["m"] * 3, "start": ["2024-01-01", "2024-01-10", "2024-03-01"],
                      "correct": [1, 0, 1]})
    with pytest.raises(ValueError, match=r"'forecasts' parameter of rolling_accuracy.*"
                       r"\('model', 'start', 'correct'\).*row 3 repeats row 1"):
        coherence.rolling_accuracy(pd.concat([r, r.iloc[[1]]], ignore_index=True),
                                   min_periods=1)
    out = coherence.rolling_accuracy(r, min_periods=1)
    assert out["accuracy"].tolist() == [1.0, 0.5, 1.0]
    # two forecasts alike but for an id: both counted
    ids = pd.concat([r, r.iloc[[1]]], ignore_index=True).assign(forecast=range(4))
    out = coherence.rolling_accuracy(ids, min_periods=1)
    assert out["accuracy"].tolist() == pytest.approx([1.0, 1 / 3, 1 / 3, 1.0])


@pytest.mark.parametrize("blank", ["", "   ", "\t"])
@pytest.mark.parametrize("column", ["model", "question", "horizon"])
def test_accuracy_by_horizon_refuses_a_blank_label(column, blank):
    """Regression: a blank model (question, horizon) was a label of its own: a model ''
    with its own row in the table (a horizon '' with its own column of the plot)."""
    fc = _early_late()
    fc[column] = fc[column].astype(object)
    fc.loc[1, column] = blank
    with pytest.raises(ValueError, match=rf"Column '{column}' \(input to accuracy_by_horizon"
                       r"\) must hold a label on every row, not a blank string.*row 1"):
        coherence.accuracy_by_horizon(fc, rng=0)


@pytest.mark.parametrize("blank", ["", "  "])
def test_rolling_accuracy_refuses_a_blank_model(blank):
    """Regression: a blank model name made a rolling series of its own."""
    r = pd.DataFrame({"model": ["m", blank, "m"],
                      "start": ["2024-01-01", "2024-01-10", "2024-03-01"], "correct": [1, 0, 1]})
    with pytest.raises(ValueError, match=r"Column 'model' \(input to rolling_accuracy\) must "
                       r"hold a label on every row.*row 1"):
        coherence.rolling_accuracy(r, min_periods=1)


@pytest.mark.parametrize("blank", ["", "  "])
def test_simulated_dates_refuses_a_blank_question(blank):
    """Regression: a blank question id was given dates of its own, as a question."""
    t = pd.DataFrame({"question": ["q", blank], "start": ["2024-01-01", "2024-02-01"],
                      "resolution_date": ["2024-01-31", "2024-02-29"]})
    with pytest.raises(ValueError, match=r"Column 'question' \(input to simulated_dates\) "
                       r"must hold a label on every row.*row 1"):
        coherence.simulated_dates(t)


# --------------------------------------------------------------------------- centuries apart
#: a window of 584 years: its length in nanoseconds is beyond int64, which numpy's
#: subtraction of datetime64[ns] wrapped around without a word
_CENTURIES = {"start": "1678-01-01", "resolution_date": "2261-12-31"}


def test_simulated_dates_over_centuries_stay_in_the_window():
    # was: the midpoint NaT and the early date 1677-11-28, before the start
    t = pd.DataFrame({"question": ["q"], **{k: [v] for k, v in _CENTURIES.items()}})
    out = coherence.simulated_dates(t, positions=["midpoint", "early", "late",
                                                  "near_resolution", 0.0, 0.99])
    when = out.set_index("position")["simulated_date"]
    start, end = pd.Timestamp(_CENTURIES["start"]), pd.Timestamp(_CENTURIES["resolution_date"])
    assert when.notna().all() and (when >= start).all() and (when < end).all()
    def seconds(t: pd.Timestamp) -> float:  # pandas' nanosecond Timedelta would overflow
        return (t.as_unit("s") - start.as_unit("s")).total_seconds()

    for position, fraction in (("midpoint", 0.5), ("early", 1 / 6), ("0.99", 0.99)):
        assert abs(seconds(when[position]) / seconds(end) - fraction) < 1e-9, position
    assert when["0.0"] == start
    assert when["near_resolution"] == end - pd.Timedelta(days=1)


def test_horizon_positions_over_centuries():
    # was: a forecast in 1700 of a 1678-2261 window labelled 'near_resolution'
    fc = pd.DataFrame({**{k: [v] * 4 for k, v in _CENTURIES.items()},
                       "simulated_date": ["1700-01-01", "1970-01-01", "2200-01-01",
                                          "2261-12-30 12:00"]})
    assert coherence.horizon_positions(fc).tolist() == ["early", "mid", "late",
                                                        "near_resolution"]


def test_rolling_accuracy_time_window_over_centuries():
    # pandas' time windows wrapped around: the 30 days before 2262-04-09 held the
    # forecasts of 1677 (n 3, accuracy 0.667)
    fc = pd.DataFrame({"model": ["m"] * 5,
                       "start": ["1677-09-22", "1677-09-23", "1677-09-23", "2262-04-09",
                                 "2262-04-10"],
                       "correct": [1, 0, 1, 1, 0]})
    out = coherence.rolling_accuracy(fc, window="30D", min_periods=1)
    assert out["n"].tolist() == [1, 3, 3, 1, 2]
    assert out["accuracy"].tolist() == pytest.approx([1.0, 2 / 3, 2 / 3, 1.0, 0.5])
    out = coherence.rolling_accuracy(fc, window="30D", min_periods=2)
    assert np.isnan(out["accuracy"].to_numpy()[[0, 3]]).all()


def test_dates_beyond_nanosecond_timestamps_name_the_column():
    # was pandas' OutOfBoundsDatetime, naming neither the column nor the row
    fc = pd.DataFrame({"start": ["2024-01-01", "2300-01-01"],
                       "resolution_date": ["2024-01-31", "2400-01-31"],
                       "simulated_date": ["2024-01-05", "2350-01-05"]})
    with pytest.raises(ValueError, match=r"Column 'start' \(input to horizon_positions\) must "
                       r"hold dates between 1677-09-22 and 2262-04-11.*row 1 = '2300-01-01'"):
        coherence.horizon_positions(fc)
