"""Coherence by knowledge: validation, the exact permutation null, properties, size and power."""

from __future__ import annotations

import itertools
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coherence import DegenerateDataWarning
from coherence import KnowledgeSplitResult
from coherence import SmallSampleWarning
from coherence import coherence_by_knowledge
from coherence._scoring._knowledge import shift_interval

DATES = ["2023-01-01", "2023-03-01", "2023-05-01", "2024-03-01", "2024-05-01", "2024-07-01"]


def _tiny() -> pd.DataFrame:
    """Two models with different cutoffs; question 'a' has three rows, 'd' two."""
    rows = []
    values = {"a": [0.01, 0.03, 0.02], "b": [0.02], "c": [0.0], "d": [0.1, 0.14], "e": [0.12],
              "f": [0.05]}
    for model, cutoff, shift in (("m1", "2023-04-01", 0.0), ("m2", "2024-04-01", 0.01)):
        for q, date in zip("abcdef", DATES, strict=True):
            for v in values[q]:
                rows.append({"model": model, "question": q, "resolved": date,
                             "cutoff": cutoff, "violation": v + shift})
    return pd.DataFrame(rows)


# --------------------------------------------------------------------------- reference
def _reference(df: pd.DataFrame) -> tuple[float, np.ndarray]:
    """Slow, obvious version: every permutation of the dates among the questions."""
    qs = sorted(df["question"].unique())
    date_of = df.groupby("question")["resolved"].first().map(pd.Timestamp)
    qmean = df.groupby(["model", "question"])["violation"].mean()
    cut = df.groupby("model")["cutoff"].first().map(pd.Timestamp)

    def stat(dates: dict[str, pd.Timestamp]) -> float:
        diffs = []
        for m in sorted(cut.index):
            vals = qmean.loc[m]
            before = [vals[q] for q in vals.index if dates[q] < cut[m]]
            after = [vals[q] for q in vals.index if dates[q] >= cut[m]]
            diffs.append(np.mean(after) - np.mean(before))
        return float(np.mean(diffs))

    observed = stat(dict(date_of))
    null = np.array([stat(dict(zip(qs, perm, strict=True)))
                     for perm in itertools.permutations([date_of[q] for q in qs])])
    return observed, null


def test_exact_pvalue_matches_enumeration():
    df = _tiny()
    res = coherence_by_knowledge(df, rng=0)
    observed, null = _reference(df)
    assert res.method == "exact permutation"
    assert res.statistic == pytest.approx(observed, abs=1e-12)
    # 6! orderings of 6 distinct dates, each counted once per distinct arrangement of the
    # date classes: the same distribution of the statistic, reweighted equally
    p_ref = np.mean(np.abs(null) >= abs(observed) - 1e-12)
    assert res.pvalue == pytest.approx(p_ref, abs=1e-12)
    # each distinct arrangement of the date classes stands for the same number of the 6!
    # orderings of the dates: the enumerated null, repeated, is the reference's
    repeat, rest = divmod(len(null), len(res.null_distribution))
    assert rest == 0
    assert np.sort(np.repeat(res.null_distribution, repeat)) == pytest.approx(np.sort(null),
                                                                              abs=1e-12)
    # per model: m1 has 2 questions before and 4 after
    row = res.table.set_index("model").loc["m1"]
    assert (row["n_before"], row["n_after"]) == (2, 4)
    assert row["mean_before"] == pytest.approx((0.02 + 0.02) / 2)
    assert row["mean_after"] == pytest.approx((0.0 + 0.12 + 0.12 + 0.05) / 4)


def test_exact_pvalue_single_model_by_hand():
    df = _tiny().query("model == 'm1'")
    with pytest.warns(SmallSampleWarning, match="15 distinct arrangements, so the smallest "
                      "p-value the exact test can return is 0.0667"):
        res = coherence_by_knowledge(df, rng=0)
    # classes: 2 before, 4 after -> C(6, 2) = 15 arrangements
    assert len(res.null_distribution) == 15
    qmean = df.groupby("question")["violation"].mean().to_numpy()
    diffs = []
    for before in itertools.combinations(range(6), 2):
        after = [i for i in range(6) if i not in before]
        diffs.append(qmean[after].mean() - qmean[list(before)].mean())
    obs = qmean[2:].mean() - qmean[:2].mean()
    assert res.pvalue == pytest.approx(np.mean(np.abs(diffs) >= abs(obs) - 1e-12))
    assert res.table["pvalue"].iloc[0] == pytest.approx(res.pvalue)


def test_monte_carlo_close_to_exact():
    df = _tiny()
    exact = coherence_by_knowledge(df, rng=0)
    mc = coherence_by_knowledge(df, n_resamples=19, rng=0)   # fewer than the arrangements
    assert mc.method == "permutation"
    assert len(mc.null_distribution) == 19
    big = coherence_by_knowledge(df.assign(question=df["question"] + "x"), n_resamples=19,
                                 rng=1)
    assert big.statistic == pytest.approx(exact.statistic)
    assert abs(mc.pvalue - exact.pvalue) < 0.35


@pytest.mark.filterwarnings("ignore::coherence.SmallSampleWarning")  # tiny exact nulls
def test_cutoff_forms_agree():
    df = _tiny()
    col = coherence_by_knowledge(df, cutoff="cutoff", rng=0)
    mapping = coherence_by_knowledge(df.drop(columns="cutoff"),
                                     cutoff={"m1": "2023-04-01", "m2": "2024-04-01"}, rng=0)
    assert (col.statistic, col.pvalue) == (mapping.statistic, mapping.pvalue)
    one = df.query("model == 'm2'")
    single = coherence_by_knowledge(one.drop(columns="cutoff"), cutoff="2024-04-01", by=None,
                                    rng=0)
    assert single.statistic == pytest.approx(col.table.set_index("model").loc["m2",
                                                                             "difference"])


@pytest.mark.filterwarnings("ignore::coherence.SmallSampleWarning")  # tiny exact nulls
def test_month_only_cutoff_is_the_month_end():
    # a question resolved on 2023-10-20 may be known to a model whose cutoff is '2023-10':
    # it is 'before' in every cutoff form, as under '2023-11-01' (it was 'after', the
    # month read as its first day)
    df = pd.DataFrame({"model": "m", "question": list("abcd"),
                       "resolved": ["2023-09-01", "2023-10-20", "2023-11-01", "2023-12-01"],
                       "violation": [0.0, 0.0, 1.0, 1.0]})
    end = coherence_by_knowledge(df, cutoff="2023-11-01", by=None, rng=0)
    assert tuple(end.table[["n_before", "n_after"]].iloc[0]) == (2, 2)
    for res in (coherence_by_knowledge(df, cutoff="2023-10", by=None, rng=0),
                coherence_by_knowledge(df, cutoff={"m": "2023-10"}, by="model", rng=0),
                coherence_by_knowledge(df.assign(cutoff="2023-10"), cutoff="cutoff",
                                       by="model", rng=0)):
        assert (res.statistic, res.pvalue) == (end.statistic, end.pvalue)
        assert tuple(res.table[["n_before", "n_after"]].iloc[0]) == (2, 2)
        assert res.table["cutoff"].iloc[0] == pd.Timestamp("2023-11-01")
    first_day = coherence_by_knowledge(df, cutoff="2023-10-01", by=None, rng=0)
    assert tuple(first_day.table[["n_before", "n_after"]].iloc[0]) == (1, 3)


@pytest.mark.filterwarnings("ignore::coherence.SmallSampleWarning")  # tiny exact nulls
def test_resolved_on_cutoff_is_after():
    df = pd.DataFrame({"question": list("abcd"),
                       "resolved": ["2024-01-01"] * 2 + ["2023-01-01"] * 2,
                       "violation": [1.0, 1.0, 0.0, 0.0]})
    res = coherence_by_knowledge(df, cutoff="2024-01-01", by=None, rng=0)
    assert res.statistic == 1.0
    assert tuple(res.table[["n_before", "n_after"]].iloc[0]) == (2, 2)


def test_bool_flag_and_interval():
    rng = np.random.default_rng(0)
    n = 80
    dates = pd.date_range("2023-01-01", periods=n, freq="10D")
    flag = rng.random(n) < np.where(dates >= "2024-01-01", 0.7, 0.1)
    df = pd.DataFrame({"question": range(n), "resolved": dates, "violation": flag})
    res = coherence_by_knowledge(df, cutoff="2024-01-01", by=None, n_resamples=499, rng=0)
    assert res.confidence_interval.low < res.statistic < res.confidence_interval.high
    assert res.pvalue < 0.01


@pytest.mark.filterwarnings("ignore::coherence.SmallSampleWarning")  # tiny exact nulls
def test_degenerate_model_warns_and_is_left_out():
    df = _tiny()
    df.loc[df["model"] == "m2", "cutoff"] = "2030-01-01"
    with pytest.warns(DegenerateDataWarning, match="'m2' has no question resolved on or after"):
        res = coherence_by_knowledge(df, rng=0)
    only = coherence_by_knowledge(df.query("model == 'm1'"), rng=0)
    assert res.n_models == 1
    assert res.statistic == pytest.approx(only.statistic)
    assert not res.table.set_index("model").loc["m2", "testable"]


# --------------------------------------------------------------------------- validation
@pytest.mark.parametrize(("change", "kwargs", "exc", "message"), [
    (None, {"question": 1}, TypeError, "The 'question' parameter of coherence_by_knowledge "
     "must be a column name (str); got 1."),
    (None, {"by": 2}, TypeError, "The 'by' parameter of coherence_by_knowledge must be a "
     "column name (str) or None"),
    (None, {"cutoff": 2024}, TypeError, "The 'cutoff' parameter of coherence_by_knowledge "
     "must be a date, the name of a column of dates or a mapping"),
    (None, {"cutoff": {"m1": "2024-01-01"}, "by": None}, ValueError,
     "a date or a column name when 'by' is None"),
    (None, {"cutoff": "not-a-column"}, ValueError,
     "must be a date, the name of a column of data or a mapping"),
    (None, {"cutoff": {"m1": "2024-01-01"}}, ValueError, "no cutoff matches 'm2'"),
    (None, {"value": "nope"}, ValueError, "nope"),
    (None, {"n_resamples": 0}, ValueError, "The 'n_resamples' parameter"),
    (lambda d: d.assign(violation="x"), {}, ValueError, "Column 'violation'"),
    (lambda d: d.assign(resolved=[None, *list(d["resolved"][1:])]), {}, ValueError,
     "Column 'resolved' (input to coherence_by_knowledge) must hold a resolution date on "
     "every row; 1 offending row"),
    (lambda d: d.assign(resolved=["2023-01-02", *list(d["resolved"][1:])]), {}, ValueError,
     "Column 'resolved' (input to coherence_by_knowledge) must be the same on every row of "
     "a question (column 'question'); 6 offending rows (first: row 0 = '2023-01-02', row 1 = "
     "'2023-01-01'"),
    (lambda d: d.assign(cutoff=["2023-05-01", *list(d["cutoff"][1:])]), {}, ValueError,
     "Column 'cutoff' (input to coherence_by_knowledge) must be the same on every row of a "
     "model (column 'model'); 9 offending rows (first: row 0 = '2023-05-01', row 1 = "
     "'2023-04-01'"),
    (lambda d: d.assign(cutoff=d["cutoff"] + "T00:00:00+00:00"), {}, ValueError,
     "the 'resolved' column and the cutoffs must both be timezone-aware or both naive"),
    (lambda d: d.assign(resolved=2023), {}, ValueError, "Column 'resolved' (input to "
     "coherence_by_knowledge) must hold dates"),
    (lambda d: d.iloc[:0], {}, ValueError, "at least one row"),
])
def test_validation_messages(change, kwargs, exc, message):
    df = _tiny()
    if change is not None:
        df = change(df)
    with pytest.raises(exc, match=re.escape(message)):
        coherence_by_knowledge(df, **kwargs)


# --------------------------------------------------------------------------- properties
@given(st.permutations(range(6)), st.permutations(range(len(_tiny()))),
       st.floats(-5, 5), st.sampled_from([1.0, -1.0, 3.0]))
def test_relabelling_invariance(names, order, shift, scale):
    """Renaming questions, reordering rows, shifting the measure: statistic and exact
    p-value unchanged; scaling scales the statistic (a sign flip keeps the p-value)."""
    df = _tiny()
    base = coherence_by_knowledge(df, rng=0)
    rename = {q: f"z{n}" for q, n in zip("abcdef", names, strict=True)}
    other = df.assign(question=df["question"].map(rename),
                      violation=scale * df["violation"] + shift).iloc[list(order)]
    res = coherence_by_knowledge(other, rng=0)
    assert res.statistic == pytest.approx(scale * base.statistic, abs=1e-9)
    assert res.pvalue == pytest.approx(base.pvalue, abs=1e-12)


# --------------------------------------------------------------------------- calibration
def _study(rng: np.random.Generator, effect: float, n_questions: int = 60) -> pd.DataFrame:
    """Two models (cutoffs a year apart), question difficulty shared by the models,
    1-4 rows per question, skewed measure; ``effect`` added after each model's cutoff."""
    dates = pd.Timestamp("2023-01-01") + pd.to_timedelta(
        rng.integers(0, 730, n_questions), unit="D")
    difficulty = rng.normal(0.0, 0.5, n_questions)
    rows = []
    for model, cutoff in (("a", pd.Timestamp("2023-07-01")), ("b", pd.Timestamp("2024-07-01"))):
        for q in range(n_questions):
            k = int(rng.integers(1, 5))
            base = np.exp(difficulty[q] + rng.normal(0.0, 0.5, k)) * 0.05
            bump = effect * (dates[q] >= cutoff)
            for v in base + bump:
                rows.append((model, q, dates[q], cutoff, float(v)))
    return pd.DataFrame(rows, columns=["model", "question", "resolved", "cutoff",
                                       "violation"])


def test_size_under_null_and_power():
    rng = np.random.default_rng(2024)
    p_null = [coherence_by_knowledge(_study(rng, 0.0), n_resamples=199, rng=rng).pvalue
              for _ in range(400)]
    size = np.mean(np.asarray(p_null) <= 0.05)
    assert 0.03 <= size <= 0.07, size
    p_alt = [coherence_by_knowledge(_study(rng, 0.04), n_resamples=199, rng=rng).pvalue
             for _ in range(100)]
    power = np.mean(np.asarray(p_alt) <= 0.05)
    assert power >= 0.8, power


def test_result_type():
    assert isinstance(coherence_by_knowledge(_tiny(), rng=0), KnowledgeSplitResult)


def _p_over_every_arrangement(dates, values, answered, cutoff):
    """The pooled p-value with each distinct arrangement of ``dates`` in turn as data."""
    import warnings

    pvalues = []
    for arrangement in sorted(set(itertools.permutations(dates))):
        rows = [{"model": f"m{m}", "question": f"q{q}", "resolved": arrangement[q],
                 "violation": values[m][q]}
                for m in range(len(values)) for q in range(len(dates)) if answered[m][q]]
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", DegenerateDataWarning)
            warnings.simplefilter("ignore", SmallSampleWarning)
            res = coherence_by_knowledge(pd.DataFrame(rows), n_resamples=10_000, rng=0,
                                         cutoff=cutoff)
        assert res.method == "exact permutation"
        pvalues.append(res.pvalue)
    return np.array(pvalues)


def _rejects_at_most_alpha(p):
    """Under the null every arrangement is equally likely: an exact test rejects at most
    a share alpha of them, for every alpha (an arrangement without a testable model,
    p NaN, never rejects)."""
    p = np.where(np.isnan(p), 2.0, p)
    for alpha in np.unique(p[p <= 1]):
        assert np.mean(p <= alpha) <= alpha + 1e-12, alpha


def test_the_pooled_test_is_exact_where_a_model_loses_a_group():
    """Three models with one cutoff; the second and third answer some questions only,
    so an arrangement can leave one of them without a group. Averaging a fixed model
    set and dropping such arrangements rejected 2 of the 15 arrangements at alpha 0.1
    (p-values 0.071 and 0.091); averaging the models testable in each arrangement is
    exact (p-values 1/15, 2/15, ...)."""
    dates = ["2023-01-01"] * 4 + ["2024-06-01"] * 2
    answered = [[1, 1, 1, 1, 1, 1], [1, 1, 0, 1, 0, 1], [0, 1, 1, 0, 0, 1]]
    values = [[0.9, 0.6, 0.9, 1.6, -1.6, -1.3], [0.6, -0.9, -0.4, -2.2, 0.5, 1.0],
              [0.7, 0.3, 0.1, -0.6, 0.6, 0.0]]
    p = _p_over_every_arrangement(dates, values, answered, "2024-01-01")
    assert len(p) == 15
    np.testing.assert_allclose(np.sort(p), np.arange(1, 16) / 15)
    _rejects_at_most_alpha(p)


def test_the_pooled_test_is_exact_with_two_cutoffs():
    gen = np.random.default_rng(0)
    dates = ["2023-01-01", "2023-01-01", "2023-06-01", "2024-03-01", "2024-03-01",
             "2024-09-01"]
    answered = [[1] * 6, [1, 0, 1, 1, 0, 1]]
    p = _p_over_every_arrangement(dates, gen.normal(size=(2, 6)).round(2), answered,
                                  {"m0": "2023-03-01", "m1": "2024-01-01"})
    assert len(p) == 180
    _rejects_at_most_alpha(p)


@pytest.mark.parametrize("order", [("a", "b"), ("b", "a")])
def test_mapping_mixing_aware_and_naive_cutoffs_raises(order):
    d = {"model": ["a"] * 3 + ["b"] * 3, "question": list("xyz") * 2,
         "resolved": ["2024-01-01T00:00+00:00", "2024-01-01T12:00+00:00",
                      "2024-06-01T00:00+00:00"] * 2,
         "violation": [0.1, 0.2, 0.5] * 2}
    values = {"a": "2024-01-01T06:00+00:00", "b": "2024-01-01T06:00"}
    with pytest.raises(ValueError, match=r"'cutoff'.*all timezone-aware or all naive.*'b'"):
        coherence_by_knowledge(d, cutoff={k: values[k] for k in order}, rng=0,
                               n_resamples=99)


# --------------------------------------------------------------------------- the interval
def _small_group_study(seed: int, n_before: int = 2, n_questions: int = 30,
                       shift: float = 0.0) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    return pd.DataFrame({
        "question": range(n_questions),
        "resolved": ["2023-06-01"] * n_before + ["2024-06-01"] * (n_questions - n_before),
        "violation": gen.lognormal(size=n_questions)
        + shift * (np.arange(n_questions) >= n_before)})


def test_interval_covers_with_a_small_group():
    """Two questions before the cutoff, 28 after, a skewed measure: the question-bootstrap
    percentile interval held the true difference 0 in 0.62 of such studies (the before
    mean never varied when one question was drawn); the inverted test holds it as often
    as the test does not reject."""
    covered = 0
    for seed in range(60):
        res = coherence_by_knowledge(_small_group_study(seed), cutoff="2024-01-01", by=None,
                                     n_resamples=199, rng=seed)
        lo, hi = res.confidence_interval.low, res.confidence_interval.high
        covered += lo <= 0.0 <= hi
        assert (lo <= 0.0 <= hi) == (res.pvalue > 0.05)   # the test inverted
        assert lo <= res.statistic <= hi
    assert covered >= 54


def test_one_question_a_side_gives_an_unbounded_interval():
    """One question before, one after: two arrangements, the test can never reject, so no
    shift is excluded (the bootstrap gave the point estimate, an interval of width 0)."""
    df = pd.DataFrame({"question": ["a", "b"], "resolved": ["2023-01-01", "2024-06-01"],
                       "violation": [0.1, 0.7]})
    with pytest.warns(SmallSampleWarning, match="2 distinct arrangements"):
        res = coherence_by_knowledge(df, cutoff="2024-01-01", by=None, rng=0)
    assert res.pvalue == 1.0
    assert res.confidence_interval.low == -np.inf and res.confidence_interval.high == np.inf


def test_constant_measure_warns():
    df = _small_group_study(0, n_before=10).assign(violation=0.3)
    with pytest.warns(DegenerateDataWarning, match="same measure \\(0.3\\) on every question"):
        res = coherence_by_knowledge(df, cutoff="2024-01-01", by=None, n_resamples=99, rng=0)
    assert res.pvalue == 1.0


@given(st.lists(st.floats(-5, 5), min_size=3, max_size=40),
       st.lists(st.floats(-1, 1), min_size=3, max_size=40), st.floats(-5, 5),
       st.booleans())
def test_shift_interval_is_the_set_the_test_keeps(null, slopes, observed, exact):
    """Every shift inside the returned interval's ends is kept by the test (the ends are
    kept points) and the statistic is inside; a shift beyond either end is rejected."""
    n = min(len(null), len(slopes))
    a, c = np.array(null[:n]), np.array(slopes[:n])
    lo, hi = shift_interval(a, c, observed, exact, 0.8)
    assert lo <= observed <= hi

    def kept(d: float) -> bool:
        count = np.sum(np.abs(a - d * c) >= np.abs(observed - d) - 1e-9)
        return count > 0.2 * n if exact else 1 + count > 0.2 * (1 + n)

    for end in (lo, hi):
        if np.isfinite(end):
            assert kept(end)
    width = 1.0 + (hi - lo if np.isfinite(hi - lo) else 10.0)
    for beyond in (lo - width, hi + width):
        if np.isfinite(beyond):
            assert not kept(beyond)


@pytest.mark.filterwarnings("ignore:coherence_by_knowledge:coherence.SmallSampleWarning")
@pytest.mark.parametrize("how", ["date", "column", "mapping"])
def test_aware_cutoffs_come_back_aware(how: str) -> None:
    """The table's cutoff of aware cutoffs is the instant, marked aware: shown naive,
    '2024-01-01T00:00+05:00' read as the local time 2023-12-31 19:00, a day early."""
    df = pd.DataFrame({"model": "m", "question": list("abcd"),
                       "resolved": ["2023-06-01T00:00+05:00", "2023-09-01T00:00+05:00",
                                    "2024-03-01T00:00+05:00", "2024-06-01T00:00+05:00"],
                       "violation": [0.0, 0.1, 0.5, 0.6]})
    at = "2024-01-01T00:00+05:00"
    cutoff = {"date": at, "column": "cutoff", "mapping": {"m": at}}[how]
    res = coherence_by_knowledge(df.assign(cutoff=at), cutoff=cutoff, rng=0)
    assert res.table["cutoff"].iloc[0] == pd.Timestamp("2023-12-31T19:00", tz="UTC")
    assert res.table["cutoff"].iloc[0].tzinfo is not None
    naive = coherence_by_knowledge(df.assign(resolved=df["resolved"].str[:10]),
                                   cutoff="2024-01-01", rng=0)
    assert naive.table["cutoff"].iloc[0] == pd.Timestamp("2024-01-01")


@pytest.mark.filterwarnings("ignore:coherence_by_knowledge:coherence.SmallSampleWarning")
@pytest.mark.parametrize("how", ["date", "column", "mapping"])
def test_aware_cutoffs_come_back_in_the_zone_given(how: str) -> None:
    """A New York cutoff comes back as given (2024-03-01 00:00-05:00), not as the UTC wall
    time 05:00; the split and the figures do not move."""
    ny = pd.Timestamp("2024-03-01", tz="America/New_York")
    resolved = pd.DatetimeIndex(["2023-06-01", "2023-09-01", "2024-06-01", "2024-07-01"])
    df = pd.DataFrame({"model": "m", "question": list("abcd"),
                       "resolved": resolved.tz_localize("America/New_York"),
                       "violation": [0.0, 0.1, 0.5, 0.6], "cutoff": ny})
    res = coherence_by_knowledge(df, cutoff={"date": ny, "column": "cutoff",
                                             "mapping": {"m": ny}}[how], rng=0)
    shown = res.table["cutoff"].iloc[0]
    assert shown == ny and str(shown.tz) == "America/New_York" and shown.hour == 0
    utc = coherence_by_knowledge(df.assign(resolved=df["resolved"].dt.tz_convert("UTC"),
                                           cutoff=ny.tz_convert("UTC")), rng=0)
    assert utc.table["cutoff"].iloc[0].hour == 5        # given in UTC: shown in UTC
    figures = ["n_before", "n_after", "mean_before", "mean_after"]
    assert res.table[figures].equals(utc.table[figures])
    assert (res.statistic, res.pvalue) == (utc.statistic, utc.pvalue)
