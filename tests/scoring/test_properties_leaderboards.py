"""Hypothesis properties of forecastbench_scores (and .compare), calibration_error and
coherence_by_knowledge: brute-force references written here from the documented
definitions (a dummy-variable least-squares fit, Kumar et al.'s debiased bins, an
enumeration of every permutation of the resolution dates), symmetries, bounds and
invariance to row order, relabelling and duplication.
"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence
from coherence._scoring._forecastbench import MIN_COMPARE_QUESTIONS

_probs = st.one_of(st.sampled_from([0.0, 0.2, 0.5, 0.8, 1.0]), st.floats(0.0, 1.0))


# --------------------------------------------------------------------------- forecastbench
@st.composite
def _bench(draw: st.DrawFn, fewest: int = 2, most: int = 6) -> pd.DataFrame:
    """A naive forecaster 'n' (always 0.5) and a full forecaster 'm1' on every question
    (so the panel is connected), and up to two others on subsets."""
    n_q = draw(st.integers(fewest, most))
    rows = []
    for q in range(n_q):
        y = draw(st.integers(0, 1))
        rows.append({"model": "n", "question": f"q{q}", "probability": 0.5, "outcome": y})
        rows.append({"model": "m1", "question": f"q{q}", "probability": draw(_probs),
                     "outcome": y})
        for m in ("m2", "m3"):
            if draw(st.booleans()):
                rows.append({"model": m, "question": f"q{q}", "probability": draw(_probs),
                             "outcome": y})
    return pd.DataFrame(rows)


def _bench_reference(df: pd.DataFrame) -> dict[str, dict[str, float]]:
    """The documented scores, the question effects fitted by least squares on dummies."""
    b = (df["probability"] - df["outcome"]) ** 2
    models = sorted(df["model"].unique())
    qs = sorted(df["question"].unique())
    x = np.zeros((len(df), len(models) - 1 + len(qs)))
    for i, (m, q) in enumerate(zip(df["model"], df["question"], strict=True)):
        if models.index(m) > 0:
            x[i, models.index(m) - 1] = 1.0
        x[i, len(models) - 1 + qs.index(q)] = 1.0
    coef = np.linalg.lstsq(x, b.to_numpy(), rcond=None)[0]
    c = dict(zip(qs, coef[len(models) - 1:], strict=True))
    frame = df.assign(b=b, c=df["question"].map(c))
    q_avg = frame.groupby("question")["b"].mean()
    naive = frame.loc[frame["model"] == "n"].set_index("question")["b"]
    out = {}
    for m, g in frame.groupby("model"):
        adj = (g["b"] - g["c"]).mean() + np.mean(list(c.values()))
        adj = 0.0 if abs(adj) <= 1e-12 else adj  # a perfect forecaster, to rounding
        den = naive.loc[g["question"]].sum()
        out[m] = {"brier": g["b"].mean(), "difficulty_adjusted_brier": adj,
                  "brier_index": 100 * (1 - math.sqrt(adj)) if adj >= 0 else math.nan,
                  "peer_score": (q_avg.loc[g["question"]].to_numpy() - g["b"]).mean(),
                  "bss": (naive.loc[g["question"]].to_numpy() - g["b"]).mean(),
                  "bss_relative": 1 - g["b"].sum() / den if den > 0 else math.nan}
    return out


def _bench_table(res) -> pd.DataFrame:
    return res.table.set_index("model").sort_index()


@pytest.mark.filterwarnings("ignore:forecastbench_scores:coherence.SmallSampleWarning")
@settings(max_examples=30)
@given(_bench())
def test_forecastbench_scores_match_a_dummy_variable_fit(df):
    res = coherence.forecastbench_scores(df, naive="n", n_resamples=20, rng=0)
    ref = _bench_reference(df)
    t = _bench_table(res)
    assert set(t.index) == set(ref)
    for m, scores in ref.items():
        for name, value in scores.items():
            got = t.loc[m, name]
            if math.isnan(value):
                assert math.isnan(got), (m, name)
            else:
                assert got == pytest.approx(value, abs=1e-9), (m, name)
    # "always 0.5" scores 0.25 adjusted, a Brier Index of 50, and no skill over itself
    assert t.loc["n", "difficulty_adjusted_brier"] == pytest.approx(0.25, abs=1e-12)
    assert t.loc["n", "brier_index"] == pytest.approx(50.0, abs=1e-9)
    assert t.loc["n", "bss"] == 0.0
    rank, index = res.table["rank"], res.table["brier_index"]
    assert (rank.isna() == index.isna()).all()  # no Brier Index, no rank
    ranked = rank.dropna().to_numpy()
    assert ranked[0] == 1 and (np.diff(ranked) >= 0).all()
    assert (np.diff(ranked)[np.diff(index.dropna().to_numpy()) < 0] > 0).all()
    bi = res.table["brier_index"].to_numpy()
    bi = bi[~np.isnan(bi)]
    assert (np.diff(bi) <= 1e-12).all()  # best Brier Index first
    assert res.statistic == pytest.approx(((df["probability"] - df["outcome"]) ** 2).mean(),
                                          abs=1e-12)


@pytest.mark.filterwarnings("ignore:forecastbench_scores:coherence.SmallSampleWarning")
@settings(max_examples=20)
@given(_bench(), st.randoms(use_true_random=False))
def test_forecastbench_row_order_relabelling_and_duplicated_questions(df, rnd):
    """With the same rng, shuffled rows and order-preserving new names give the same
    table; every question listed twice (under a new id) leaves every point score."""
    perm = list(range(len(df)))
    rnd.shuffle(perm)
    a = coherence.forecastbench_scores(df, naive="n", n_resamples=30, rng=4)
    b = coherence.forecastbench_scores(df.iloc[perm], naive="n", n_resamples=30, rng=4)
    renamed = df.assign(model="x_" + df["model"], question="Q-" + df["question"]).rename(
        columns={"probability": "prob", "outcome": "y"}).assign(extra=1.0)
    c = coherence.forecastbench_scores(renamed, probability="prob", outcome="y",
                                       naive="x_n", n_resamples=30, rng=4)
    ta = _bench_table(a)
    pd.testing.assert_frame_equal(_bench_table(b), ta, rtol=1e-10, atol=1e-12)
    tc = _bench_table(c).rename(index=lambda m: m[2:])
    pd.testing.assert_frame_equal(tc, ta, rtol=1e-10, atol=1e-12)
    twice = pd.concat([df, df.assign(question=df["question"] + "_copy")], ignore_index=True)
    d = _bench_table(coherence.forecastbench_scores(twice, naive="n", n_resamples=1, rng=0))
    for name in coherence.FORECASTBENCH_SCORES:
        np.testing.assert_allclose(d[name], ta[name], rtol=1e-9, atol=1e-9)


@pytest.mark.filterwarnings("ignore:forecastbench_scores:coherence.SmallSampleWarning")
@settings(max_examples=25)
@given(st.one_of(_bench(), _bench(MIN_COMPARE_QUESTIONS, MIN_COMPARE_QUESTIONS + 3)),
       st.sampled_from(list(coherence.FORECASTBENCH_SCORES)))
def test_forecastbench_compare_swap_and_bounds(df, score):
    res = coherence.forecastbench_scores(df, naive="n", n_resamples=49, rng=1)
    t = _bench_table(res)
    d = t.loc["m1", score] - t.loc["n", score]
    few = df["question"].nunique() < MIN_COMPARE_QUESTIONS  # 'n' and 'm1' answer them all
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        ab = res.compare("m1", "n", score=score)
        ba = res.compare("n", "m1", score=score)
    warned = [w for w in caught if "too few for the centred bootstrap" in str(w.message)]
    if math.isnan(d):
        assert math.isnan(ab.pvalue) and not warned
        return
    assert ab.statistic == pytest.approx(d, abs=1e-12)
    assert ba.statistic == pytest.approx(-ab.statistic, abs=1e-12)
    assert ba.confidence_interval.low == pytest.approx(-ab.confidence_interval.high, abs=1e-9)
    assert ba.confidence_interval.high == pytest.approx(-ab.confidence_interval.low, abs=1e-9)
    reps = ab.replicates
    assert ab.n_resamples == len(reps) <= 49
    if few:  # no p-value below the minimum of questions, and a warning each call
        assert math.isnan(ab.pvalue) and math.isnan(ba.pvalue)
        assert len(warned) == (2 if len(reps) else 0)
        return
    assert not warned
    assert ba.pvalue == pytest.approx(ab.pvalue, abs=1e-12)
    expected = (1 + np.sum(np.abs(reps - d) >= abs(d) - 1e-9 * max(1.0, abs(d)))) / (
        1 + len(reps))
    assert ab.pvalue == pytest.approx(expected, abs=1e-12)
    assert 1.0 / (1 + len(reps)) <= ab.pvalue <= 1.0


# --------------------------------------------------------------------------- calibration_error
def _ce_reference(p: np.ndarray, y: np.ndarray, n_bins: int, zero_single: bool) -> tuple:
    """Kumar et al.'s debiased squared l2 error on equal-mass bins of distinct forecasts:
    the sorted forecasts cut after positions floor(k n / B)."""
    order = np.argsort(p)
    n = len(p)
    cuts = sorted({(k * n) // n_bins for k in range(1, n_bins)} - {0, n})
    stat = plug = 0.0
    for run in np.split(order, cuts):
        pk, yk = p[run].mean(), y[run].mean()
        term = (yk - pk) ** 2
        corr = yk * (1 - yk) / (len(run) - 1) if len(run) > 1 else (term if zero_single else 0)
        stat += len(run) / n * (term - corr)
        plug += len(run) / n * term
    return stat, plug


_ce_rows = st.lists(st.tuples(st.integers(1, 999), st.integers(0, 1)), min_size=2,
                    max_size=30, unique_by=lambda r: r[0])


def _ce(df: pd.DataFrame, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", coherence.SmallSampleWarning)
        warnings.simplefilter("ignore", coherence.TiesWarning)  # heaped forecasts merge bins
        return coherence.calibration_error(df, **kw)


@settings(max_examples=30)
@given(_ce_rows, st.sampled_from([1, 2, 3, 5, 10]), st.sampled_from(["plugin", "zero"]))
def test_calibration_error_matches_the_debiased_bins_and_is_mirror_symmetric(rows, n_bins,
                                                                            single):
    p = np.array([r[0] / 1000 for r in rows])
    y = np.array([float(r[1]) for r in rows])
    df = pd.DataFrame({"probability": p, "outcome": y})
    res = _ce(df, n_bins=n_bins, n_resamples=20, single_forecast_bins=single, rng=0)
    stat, plug = _ce_reference(p, y, n_bins, single == "zero")
    assert res.statistic == pytest.approx(stat, abs=1e-12)
    assert res.plugin == pytest.approx(plug, abs=1e-12)
    assert res.statistic <= res.plugin + 1e-15  # the corrections are >= 0
    assert res.confidence_interval.low <= res.confidence_interval.high
    assert (res.replicates <= 1.0 + 1e-12).all()
    # (p, y) -> (1 - p, 1 - y) mirrors the bins when they have equal sizes
    if len(p) % n_bins == 0:
        mirrored = _ce(df.assign(probability=1 - p, outcome=1 - y), n_bins=n_bins,
                       n_resamples=1, single_forecast_bins=single, rng=0)
        assert mirrored.statistic == pytest.approx(res.statistic, abs=1e-12)
        assert mirrored.plugin == pytest.approx(res.plugin, abs=1e-12)


@settings(max_examples=25)
@given(st.lists(st.tuples(st.sampled_from([0.0, 0.1, 0.5, 0.5, 0.9, 1.0, 0.35]),
                          st.integers(0, 1), st.integers(0, 5)), min_size=4, max_size=30),
       st.sampled_from(["equal_mass", "equal_width"]), st.sampled_from([1, 2]),
       st.randoms(use_true_random=False))
def test_calibration_error_row_order_and_group_names(rows, binning, norm, rnd):
    """Heaped, tied forecasts: with the same rng, shuffled rows and groups renamed in an
    order-preserving way give the same estimate and interval."""
    df = pd.DataFrame(rows, columns=["probability", "outcome", "group"])
    assume(df["group"].nunique() >= 2)
    perm = list(range(len(df)))
    rnd.shuffle(perm)
    kw = {"binning": binning, "norm": norm, "n_bins": 3, "n_resamples": 30, "rng": 2,
          "group": "cluster"}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", coherence.NotCalibratedWarning)
        a = _ce(df.rename(columns={"group": "cluster"}), **kw)
        b = _ce(df.iloc[perm].rename(columns={"group": "cluster"}), **kw)
        c = _ce(df.assign(cluster=df["group"].map(lambda g: f"g{g:02d}")).drop(
            columns="group"), **kw)
    for other in (b, c):
        assert other.statistic == pytest.approx(a.statistic, abs=1e-12)
        assert other.confidence_interval.low == pytest.approx(a.confidence_interval.low,
                                                              abs=1e-12)
        assert other.confidence_interval.high == pytest.approx(a.confidence_interval.high,
                                                               abs=1e-12)


# --------------------------------------------------------------------------- coherence_by_knowledge
_DATES = ["2023-01-01", "2023-06-01", "2024-01-01", "2024-06-01"]


@st.composite
def _knowledge(draw: st.DrawFn) -> tuple[pd.DataFrame, dict[str, str]]:
    """Up to 6 questions with tied resolution dates, 1-2 models (cutoffs on the same
    dates, so a question can resolve on a cutoff), 1-2 rows per answered question."""
    n_q = draw(st.integers(2, 6))
    dates = draw(st.lists(st.sampled_from(_DATES), min_size=n_q, max_size=n_q))
    models = ("m1", "m2")[:draw(st.integers(1, 2))]
    cutoffs = {m: draw(st.sampled_from(_DATES[1:])) for m in models}
    rows = []
    for m in models:
        for q in range(n_q):
            if m == "m1" or draw(st.booleans()):
                for _ in range(draw(st.integers(1, 2))):
                    rows.append({"model": m, "question": f"q{q}", "resolved": dates[q],
                                 "violation": draw(st.sampled_from([0.0, 0.0, 0.1, 0.5, 1.0]))})
    return pd.DataFrame(rows), cutoffs


def _knowledge_stat(means: dict, dates: dict, cutoffs: dict) -> tuple[float, dict]:
    per = {}
    for m, cut in cutoffs.items():
        vals = {q: v for (mm, q), v in means.items() if mm == m}
        before = [v for q, v in vals.items() if dates[q] < cut]
        after = [v for q, v in vals.items() if dates[q] >= cut]
        per[m] = (np.mean(after) - np.mean(before)) if before and after else math.nan
    ok = [d for d in per.values() if not math.isnan(d)]
    return (float(np.mean(ok)) if ok else math.nan), per


def _share_extreme(null: list[float], obs: float) -> float:
    arr = np.abs([t for t in null if not math.isnan(t)])
    return float(np.mean(arr >= abs(obs) - 1e-9 * max(1.0, abs(obs))))


def _cbk(df, cutoffs, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", coherence.DegenerateDataWarning)
        warnings.simplefilter("ignore", coherence.SmallSampleWarning)
        return coherence.coherence_by_knowledge(df, cutoff=cutoffs, **kw)


@settings(max_examples=30)
@given(_knowledge())
def test_coherence_by_knowledge_exact_pvalue_matches_every_permutation(case):
    df, cutoffs = case
    means = df.groupby(["model", "question"])["violation"].mean().to_dict()
    dates = df.groupby("question")["resolved"].first().to_dict()
    stat, per = _knowledge_stat(means, dates, cutoffs)
    testable = [m for m in cutoffs if not math.isnan(per[m])]
    assume(testable)
    res = _cbk(df, cutoffs, n_resamples=999, rng=0)  # at most 6! = 720 arrangements
    assert res.method == "exact permutation"
    assert res.statistic == pytest.approx(stat, abs=1e-12)
    qs = sorted(dates)
    null, null_m = [], {m: [] for m in testable}
    # each arrangement averages the models testable in it (0 when none is): the pooled
    # statistic is defined on every arrangement, none is left out (an exact test)
    for perm in itertools.permutations([dates[q] for q in qs]):
        t_perm, pm = _knowledge_stat(means, dict(zip(qs, perm, strict=True)), cutoffs)
        null.append(0.0 if math.isnan(t_perm) else t_perm)
        for m in testable:
            null_m[m].append(pm[m])
    assert res.pvalue == pytest.approx(_share_extreme(null, stat), abs=1e-12)
    table = res.table.set_index("model")
    for m in testable:
        assert table.loc[m, "difference"] == pytest.approx(per[m], abs=1e-12)
        assert table.loc[m, "pvalue"] == pytest.approx(_share_extreme(null_m[m], per[m]),
                                                       abs=1e-12)
    assert 0.0 < res.pvalue <= 1.0
    assert res.confidence_interval.low <= res.confidence_interval.high


@settings(max_examples=25)
@given(_knowledge(), st.randoms(use_true_random=False), st.floats(-2.0, 2.0))
def test_coherence_by_knowledge_row_order_negation_shift_and_duplication(case, rnd, shift):
    """With the same rng (Monte Carlo null): shuffled rows, every row listed twice and a
    constant added to the measure give the same p-value and interval; negating the
    measure negates the statistic and its interval and keeps the p-value."""
    df, cutoffs = case
    perm = list(range(len(df)))
    rnd.shuffle(perm)
    kw = {"n_resamples": 19, "rng": 6}
    a = _cbk(df, cutoffs, **kw)
    assume(not math.isnan(a.statistic))
    others = [_cbk(df.iloc[perm], cutoffs, **kw),
              _cbk(pd.concat([df, df], ignore_index=True), cutoffs, **kw),
              _cbk(df.assign(violation=df["violation"] + shift), cutoffs, **kw)]
    neg = _cbk(df.assign(violation=-df["violation"]), cutoffs, **kw)
    for o in others:
        assert o.method == a.method
        assert o.statistic == pytest.approx(a.statistic, abs=1e-9)
        assert o.pvalue == pytest.approx(a.pvalue, abs=1e-12)
        assert o.confidence_interval.low == pytest.approx(a.confidence_interval.low, abs=1e-9)
        assert o.confidence_interval.high == pytest.approx(a.confidence_interval.high,
                                                           abs=1e-9)
    assert neg.statistic == pytest.approx(-a.statistic, abs=1e-12)
    assert neg.pvalue == pytest.approx(a.pvalue, abs=1e-12)
    assert neg.confidence_interval.low == pytest.approx(-a.confidence_interval.high, abs=1e-9)
    assert neg.confidence_interval.high == pytest.approx(-a.confidence_interval.low, abs=1e-9)
    lowest = 1.0 / (1 + 19) if a.method == "permutation" else 0.0
    assert lowest <= a.pvalue <= 1.0
