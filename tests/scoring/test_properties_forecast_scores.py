"""Hypothesis properties of forecast_scores and ForecastScoresResult.compare: per-model
scores against a loop over the documented definitions, the binned Murphy terms, the
exact sign-flip p-value against an enumeration of all sign vectors, and invariance to
row order, order-preserving relabelling, renamed and irrelevant columns, and to
swapping the two models of a comparison.
"""

from __future__ import annotations

import itertools
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence
from tests._reference_skewflip import hall_pvalue

#: the hand fixtures and drawn tables here are small: intervals that are the point
#: itself (scores that do not vary) warn, as test_forecast.py checks
#: (and intervals on few questions); compare warns below 20 questions
FEW_COMPARED = "ignore:ForecastScoresResult.compare. .* \\(< 20\\):coherence.SmallSampleWarning"
pytestmark = [pytest.mark.filterwarnings("ignore:forecast_scores:coherence.SmallSampleWarning"),
              pytest.mark.filterwarnings(FEW_COMPARED)]

#: heaped beliefs (0, 1, 0.5, round numbers) mixed with arbitrary ones
_probs = st.one_of(st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0]), st.floats(0.0, 1.0))


@st.composite
def _forecast_tables(draw: st.DrawFn, min_questions: int = 1) -> pd.DataFrame:
    """Up to 3 models answering overlapping subsets of up to 7 binary questions; the
    outcome is a property of the question."""
    n_q = draw(st.integers(min_questions, 7))
    outcomes = draw(st.lists(st.integers(0, 1), min_size=n_q, max_size=n_q))
    rows = []
    for m in ("m1", "m2", "m3")[:draw(st.integers(1, 3))]:
        answered = draw(st.lists(st.booleans(), min_size=n_q, max_size=n_q))
        for q in range(n_q):
            if answered[q] or q < min_questions:
                rows.append({"model": m, "question": f"q{q}", "probability": draw(_probs),
                             "outcome": outcomes[q]})
    return pd.DataFrame(rows)


def _by_model(res) -> dict:
    return {r["model"]: r for r in res.table.to_dict("records")}


@settings(max_examples=40)
@given(_forecast_tables(), st.sampled_from(["paper", "code"]),
       st.sampled_from(["ln", "log2_loss"]))
def test_forecast_scores_match_a_loop_over_the_definitions(df, acc_conv, log_conv):
    floor = 1e-6
    res = coherence.forecast_scores(df, accuracy_convention=acc_conv, convention=log_conv,
                                    floor=floor, n_resamples=20, rng=0)
    expected: dict[str, list[tuple[str, float, float, float]]] = {}
    for r in df.to_dict("records"):
        p, y = r["probability"], r["outcome"]
        if acc_conv == "code" and p == 0.5:
            acc = 0.5
        else:
            acc = float((p >= 0.5) == (y == 1)) if acc_conv == "paper" else float(
                (p > 0.5) == (y == 1))
        q = p if y == 1 else 1.0 - p
        log = math.log(max(q, floor)) if log_conv == "ln" else -math.log2(max(q, floor))
        cell = (r["question"], acc, (p - y) ** 2, log)
        expected.setdefault(r["model"], []).append(cell)
        expected.setdefault("(all)", []).append(cell)
    got = _by_model(res)
    assert set(got) == set(expected)
    for name, cells in expected.items():
        row = got[name]
        assert row["n_forecasts"] == len(cells)
        assert row["n_questions"] == len({c[0] for c in cells})
        for j, metric in enumerate(("accuracy", "brier", "log_score"), start=1):
            vals = [c[j] for c in cells]
            assert row[metric] == pytest.approx(sum(vals) / len(vals), rel=1e-12, abs=1e-12)
            # the interval lies in the score's range and holds a score that does not vary
            bounds = {"accuracy": (0.0, 1.0), "brier": (0.0, 1.0),
                      "log_score": (math.log(floor), 0.0) if log_conv == "ln"
                      else (0.0, -math.log2(floor))}[metric]
            low, high = row[f"{metric}_ci_low"], row[f"{metric}_ci_high"]
            assert bounds[0] <= low <= high <= bounds[1]
            if min(vals) == max(vals) and metric != "accuracy":
                assert low == high == pytest.approx(vals[0], abs=1e-12)
            if metric == "accuracy":  # Wilson's interval holds its estimate
                assert low - 1e-12 <= row[metric] <= high + 1e-12
    assert res.statistic == pytest.approx(got["(all)"]["brier"], abs=1e-15)
    assert 0.0 <= res.statistic <= 1.0
    # 'correct' agrees with 'accuracy': NaN exactly where the credit is split
    pf = res.per_forecast
    split = (pf["accuracy"] != 0.0) & (pf["accuracy"] != 1.0)
    assert pf["correct"].isna().equals(split)


@settings(max_examples=30)
@given(_forecast_tables(), st.sampled_from([1, 2, 5, 10]))
def test_forecast_scores_ece_and_murphy_terms_match_bins_by_hand(df, n_bins):
    """ECE, reliability, resolution, uncertainty per model from the documented bins
    [k/n, (k+1)/n) (the last closed at 1); within_bin is 0 when every bin holds one
    forecast value."""
    res = coherence.forecast_scores(df, n_bins=n_bins, n_resamples=1, rng=0)
    cal = res.calibration.set_index("model")
    groups = {**dict(list(df.groupby("model"))), "(all)": df}
    for name, g in groups.items():
        p = g["probability"].to_numpy(float)
        y = g["outcome"].to_numpy(float)
        bins: dict[int, list[int]] = {}
        for i, pi in enumerate(p):
            k = max(k for k in range(n_bins) if pi >= k / n_bins)
            bins.setdefault(k, []).append(i)
        n, ybar = len(p), y.mean()
        ece = rel = resn = 0.0
        for idx in bins.values():
            mp, fy = p[idx].mean(), y[idx].mean()
            ece += len(idx) / n * abs(mp - fy)
            rel += len(idx) / n * (mp - fy) ** 2
            resn += len(idx) / n * (fy - ybar) ** 2
        row = cal.loc[name]
        assert row["ece"] == pytest.approx(ece, abs=1e-12)
        assert row["reliability"] == pytest.approx(rel, abs=1e-12)
        assert row["resolution"] == pytest.approx(resn, abs=1e-12)
        assert row["uncertainty"] == pytest.approx(ybar * (1 - ybar), abs=1e-12)
        assert row["brier"] == pytest.approx(np.mean((p - y) ** 2), abs=1e-12)
        if all(len(set(p[idx])) == 1 for idx in bins.values()):
            assert row["within_bin"] == pytest.approx(0.0, abs=1e-12)


_CI_COLUMNS = [f"{m}{s}" for m in ("accuracy", "brier", "log_score")
               for s in ("", "_ci_low", "_ci_high")]


def _score_cells(res, back=None) -> dict:
    back = back or {}
    return {back.get(r["model"], r["model"]): [r[c] for c in _CI_COLUMNS]
            for r in res.table.to_dict("records")}


@settings(max_examples=25)
@given(_forecast_tables(), st.randoms(use_true_random=False))
def test_forecast_scores_intervals_do_not_depend_on_row_order_or_names(df, rnd):
    """With the same rng: shuffled rows, models and questions renamed in an order-
    preserving way, columns renamed through the column parameters and an extra column
    give the same scores and intervals."""
    perm = list(range(len(df)))
    rnd.shuffle(perm)
    a = coherence.forecast_scores(df, n_resamples=40, rng=5)
    b = coherence.forecast_scores(df.iloc[perm], n_resamples=40, rng=5)
    renamed = df.assign(model="agent_" + df["model"],
                        question=df["question"].map(lambda q: f"item-{int(q[1:]):03d}"))
    renamed = renamed.rename(columns={"model": "who", "question": "item", "probability": "p",
                                      "outcome": "y"}).assign(noise=rnd.random())
    c = coherence.forecast_scores(renamed, by="who", question="item", probability="p",
                                  outcome="y", n_resamples=40, rng=5)
    ca = _score_cells(a)
    back = {f"agent_{m}": m for m in ("m1", "m2", "m3")}
    for other in (_score_cells(b), {back.get(k, k): v for k, v in
                                    ((r["who"], [r[col] for col in _CI_COLUMNS])
                                     for r in c.table.to_dict("records"))}):
        assert set(other) == set(ca)
        for key, vals in ca.items():
            np.testing.assert_allclose(other[key], vals, rtol=1e-12, atol=1e-12)
    for other in (b, c):
        assert other.confidence_interval.low == pytest.approx(a.confidence_interval.low,
                                                              abs=1e-12)
        assert other.confidence_interval.high == pytest.approx(a.confidence_interval.high,
                                                               abs=1e-12)


# --------------------------------------------------------------------------- compare
@st.composite
def _two_models(draw: st.DrawFn) -> pd.DataFrame:
    """Two models on 2..7 common questions, plus a few questions only one answered."""
    n_q = draw(st.integers(2, 7))
    rows = []
    for q in range(n_q + 2):
        y = draw(st.integers(0, 1))
        for m in ("a", "b"):
            if q < n_q or draw(st.booleans()):
                rows.append({"model": m, "question": f"q{q}", "probability": draw(_probs),
                             "outcome": y})
    return pd.DataFrame(rows)


def _sign_flip_pvalue(d: np.ndarray) -> float:
    """Share of the 2^n sign vectors s with |mean(s d)| >= |mean(d)| (relative 1e-9)."""
    obs = abs(d.mean())
    null = [abs(np.mean(np.array(s) * d)) for s in itertools.product((1, -1), repeat=len(d))]
    tol = 1e-9 * max(obs, 1e-300)
    return sum(t >= obs - tol for t in null) / len(null)


def _common_diff(df: pd.DataFrame, metric: str) -> np.ndarray:
    per = df.assign(brier=(df["probability"] - df["outcome"]) ** 2,
                    accuracy=((df["probability"] >= 0.5) == (df["outcome"] == 1)).astype(float))
    wide = per.pivot(index="question", columns="model", values=metric).dropna()
    return (wide["a"] - wide["b"]).to_numpy()


@settings(max_examples=30)
@given(_two_models(), st.sampled_from(["brier", "accuracy"]), st.booleans())
def test_compare_exact_pvalue_matches_an_enumeration_of_sign_flips(df, metric, skew):
    """Both statistics (Hall's skew-corrected studentized mean, the default, and the
    plain sum) against an enumeration of every sign vector, with the interval's ends
    where the enumerated p-value crosses 0.05."""
    res = coherence.forecast_scores(df, n_resamples=1, rng=0)
    cmp = res.compare("a", "b", metric=metric, n_resamples=512, rng=0,  # 2^9 <= 512: exact
                      skew_correction=skew)
    d = _common_diff(df, metric)

    def enumerated(x: np.ndarray) -> float:
        return hall_pvalue(x, np.ones(x.size), 0.0) if skew else _sign_flip_pvalue(x)

    assert cmp.n_obs == len(d) and cmp.skew_correction is skew
    assert cmp.statistic == pytest.approx(d.mean(), abs=1e-12)
    if np.all(d == 0):
        assert cmp.pvalue == 1.0
    else:
        assert cmp.pvalue == pytest.approx(enumerated(d), abs=1e-12)
        # the smallest exact p-value is 2 / 2^n
        assert 2.0 / 2 ** len(d) - 1e-12 <= cmp.pvalue <= 1.0
        # the interval inverts the test: an end is where the enumerated p-value of
        # the shifted differences crosses 0.05
        ci = cmp.confidence_interval
        assert ci.low <= cmp.statistic <= ci.high
        scale = max(1.0, float(np.abs(d).max()))
        for end, inward in ((ci.low, 1.0), (ci.high, -1.0)):
            if math.isfinite(end):
                eps = 1e-7 * scale
                assert enumerated(d - (end + inward * eps)) > 0.05
                assert enumerated(d - (end - inward * eps)) <= 0.05
            else:  # nothing is rejected on that side: 2 / 2^n > 0.05
                assert 2.0 / 2 ** len(d) > 0.05
        # 0 is inside exactly when p > 0.05, but for an end at 0 itself (up to rounding)
        if min(abs(ci.low), abs(ci.high)) > 1e-12 * scale:
            assert (ci.low <= 0.0 <= ci.high) == (cmp.pvalue > 0.05)


@settings(max_examples=30)
@given(_two_models(), st.sampled_from(["brier", "accuracy", "log_score"]),
       st.randoms(use_true_random=False))
def test_compare_swapping_the_models_and_shuffling_rows(df, metric, rnd):
    """compare(b, a) is compare(a, b) mirrored: the statistic negated, the same p-value,
    the interval negated; with the same rng shuffled rows change nothing."""
    res = coherence.forecast_scores(df, n_resamples=1, rng=0)
    perm = list(range(len(df)))
    rnd.shuffle(perm)
    shuffled = coherence.forecast_scores(df.iloc[perm], n_resamples=1, rng=0)
    ab = res.compare("a", "b", metric=metric, n_resamples=99, rng=3)   # Monte Carlo for n >= 7
    ba = res.compare("b", "a", metric=metric, n_resamples=99, rng=3)
    ab2 = shuffled.compare("a", "b", metric=metric, n_resamples=99, rng=3)
    assert ba.statistic == pytest.approx(-ab.statistic, abs=1e-12)
    assert ba.pvalue == pytest.approx(ab.pvalue, abs=1e-12)
    assert ba.confidence_interval.low == pytest.approx(-ab.confidence_interval.high, abs=1e-12)
    assert ba.confidence_interval.high == pytest.approx(-ab.confidence_interval.low, abs=1e-12)
    assert ab2.statistic == pytest.approx(ab.statistic, abs=1e-12)
    assert ab2.pvalue == pytest.approx(ab.pvalue, abs=1e-12)
    assert ab2.confidence_interval.low == pytest.approx(ab.confidence_interval.low, abs=1e-12)
    assert ab2.confidence_interval.high == pytest.approx(ab.confidence_interval.high,
                                                         abs=1e-12)
    assert 1.0 / 100 <= ab.pvalue <= 1.0
    assert ab.lower_is_better == (metric == "brier")


@settings(max_examples=20)
@given(_two_models())
def test_compare_of_a_model_with_its_copy(df):
    """Model c makes model a's forecasts: every difference is 0, so p = 1 and the
    interval, the test's inversion, is the point 0 where the sign flips can reject any
    other difference (6 questions or more at 0.95), unbounded below that."""
    a = df.loc[df["model"] == "a"]
    both = pd.concat([df, a.assign(model="c")], ignore_index=True)
    res = coherence.forecast_scores(both, n_resamples=1, rng=0)
    cmp = res.compare("a", "c", n_resamples=99, rng=0)
    assert cmp.statistic == 0.0 and cmp.pvalue == 1.0
    point = (0.0, 0.0) if cmp.n_units >= 6 else (-math.inf, math.inf)
    assert (cmp.confidence_interval.low, cmp.confidence_interval.high) == point
