"""Hypothesis properties of question_scores and validate_tasks: every row's rule, Brier and
log score against a loop over the documented definitions (quantity tolerances decided in
exact decimal arithmetic), the model and pooled tables against the rows, invariance to the
order of the rows, to model names (order-preserving and order-reversing), to column names
and to an extra column, the binary mirror symmetry, and validate_tasks' horizons against
the standard library.
"""

from __future__ import annotations

import datetime as dt
import math
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence
from coherence._scoring._questions import normalise_label

_TYPES = ("binary", "multiple_choice", "quantity", "interval", "timeframe")
#: heaped beliefs (tenths, exactly 0.5, the ends) and arbitrary ones
_probs = st.one_of(st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0]),
                   st.floats(0.0, 1.0))
#: options written in several forms that normalise alike ("Paris", " paris ", ...)
_options = st.sampled_from(["Paris", " paris ", "PARIS", "Rome", "rome", "Lyon"])
_tenths = st.integers(-30, 30)          # numbers as tenths, so decimal truth is exact


@st.composite
def _tables(draw: st.DrawFn) -> pd.DataFrame:
    """2..3 models over 2..6 questions of mixed types (each question one type and one
    outcome); a model may skip a question."""
    n_q = draw(st.integers(2, 6))
    models = draw(st.sampled_from([["m1", "m2"], ["m1", "m2", "m3"]]))
    rows = []
    for q in range(n_q):
        kind = draw(st.sampled_from(_TYPES))
        if kind == "binary":
            outcome: object = draw(st.integers(0, 1))
        elif kind == "multiple_choice":
            outcome = draw(_options)
        elif kind in ("quantity", "interval"):
            outcome = draw(_tenths) / 10
        else:
            outcome = draw(st.sampled_from(["Q3 2025", "q3  2025", "2025-06-30"]))
        for m in models:
            if q > 0 and not draw(st.booleans()):
                continue  # question 0 answered by every model; others by some
            row = {"model": m, "question": f"q{q}", "type": kind, "outcome": outcome,
                   "probability": None, "prediction": None, "lower": None, "upper": None}
            if kind == "binary":
                row["probability"] = draw(_probs)
            elif kind == "multiple_choice":
                row["prediction"] = draw(_options)
                row["probability"] = draw(_probs)
            elif kind == "quantity":
                # often exactly at a tolerance's bound (0.1, 0.2, 0.5), in decimal
                bound = Fraction(str(outcome)) * (1 + draw(st.sampled_from([-1, 1]))
                                                  * Fraction(draw(st.sampled_from(
                                                      ["0.1", "0.2", "0.5"]))))
                row["prediction"] = draw(st.one_of(_tenths.map(lambda t: t / 10),
                                                   st.just(float(bound))))
            elif kind == "interval":
                lo, hi = sorted(draw(st.lists(_tenths, min_size=2, max_size=2)))
                which = draw(st.sampled_from(["both", "lower", "upper"]))
                row["lower"] = lo / 10 if which != "upper" else None
                row["upper"] = hi / 10 if which != "lower" else None
            else:
                row["prediction"] = draw(st.sampled_from(["Q3 2025", " q3 2025", "Q4 2025",
                                                          "2025-06-30"]))
            rows.append(row)
    return pd.DataFrame(rows)


def _decimal(x: float) -> Fraction:
    """The decimal number the user wrote (tenths here), exactly."""
    return Fraction(str(x))


def _expected_row(row: dict, tolerance: float, floor: float) -> tuple[float, float, float]:
    """(rule_correct, brier, log_score) of one row from the documented definitions."""
    kind, y = row["type"], row["outcome"]
    if kind == "binary":
        p = row["probability"]
        right = float((p >= 0.5) == (y == 1))
        q = p if y == 1 else 1.0 - p
        return right, (p - y) ** 2, math.log(max(q, floor))
    if kind == "multiple_choice":
        c = row["probability"]
        right = normalise_label(row["prediction"]) == normalise_label(y)
        q = c if right else 1.0 - c
        return float(right), (1.0 - q) ** 2, math.log(max(q, floor))
    if kind == "quantity":
        x, yy = _decimal(row["prediction"]), _decimal(y)
        ok = abs(x - yy) <= _decimal(tolerance) * abs(yy)
        return float(ok), math.nan, math.nan
    if kind == "interval":
        lo = -math.inf if pd.isna(row["lower"]) else row["lower"]
        hi = math.inf if pd.isna(row["upper"]) else row["upper"]
        return float(lo <= y <= hi), math.nan, math.nan
    return float(normalise_label(row["prediction"]) == normalise_label(y)), math.nan, math.nan


@settings(max_examples=40)
@given(_tables(), st.sampled_from([0.1, 0.2, 0.0, 0.5]))
def test_question_scores_rows_and_tables_match_the_definitions(df, tolerance):
    """Each row's rule, Brier and log score are the documented ones (a quantity within
    exactly ``tolerance`` of its outcome, in decimal, counts); each model's and the
    pooled row's counts and means are those of its rows; by_type agrees with the rows."""
    floor = 1e-10
    res = coherence.question_scores(df, tolerance=tolerance, n_resamples=20, rng=0)
    per = res.per_forecast
    assert list(per.index) == list(df.index)
    for i, row in enumerate(df.to_dict("records")):
        rule, brier, log = _expected_row(row, tolerance, floor)
        assert per["rule_correct"].iloc[i] == rule, row
        assert per["correct"].iloc[i] == rule
        np.testing.assert_allclose([per["brier"].iloc[i], per["log_score"].iloc[i]],
                                   [brier, log], rtol=1e-12, atol=1e-12)
    table = res.table.set_index("model")
    groups = dict(iter(per.groupby("model"))) | {"(all)": per}
    assert set(table.index) == set(groups)
    for m, sub in groups.items():
        r = table.loc[m]
        assert r["n_forecasts"] == len(sub)
        assert r["n_questions"] == sub["question"].nunique()
        assert r["accuracy"] == pytest.approx(sub["correct"].mean(), abs=1e-12)
        prob = sub["type"].isin(["binary", "multiple_choice"])
        assert r["n_probabilistic"] == prob.sum()
        if prob.any():
            assert r["brier"] == pytest.approx(sub.loc[prob, "brier"].mean(), abs=1e-12)
            assert r["log_score"] == pytest.approx(sub.loc[prob, "log_score"].mean(),
                                                   rel=1e-12, abs=1e-12)
        else:
            assert math.isnan(r["brier"]) and math.isnan(r["log_score"])
        # the accuracy's Wilson interval lies in [0, 1] and holds the accuracy
        lo, hi = r["accuracy_ci_low"], r["accuracy_ci_high"]
        assert 0.0 <= lo <= r["accuracy"] + 1e-12 and r["accuracy"] - 1e-12 <= hi <= 1.0
        bt = res.by_type.loc[res.by_type["model"] == m].set_index("type")
        for t, st_ in sub.groupby("type"):
            assert bt.loc[t, "n"] == len(st_)
            assert bt.loc[t, "accuracy"] == pytest.approx(st_["correct"].mean(), abs=1e-12)
    assert res.statistic == pytest.approx(per["correct"].mean(), abs=1e-12)
    assert res.n_obs == len(df)
    assert math.isnan(res.pvalue)


def _model_cells(res: coherence.QuestionScoresResult, back: dict | None = None) -> dict:
    back = back or {}
    cols = ["n_forecasts", "n_questions", "accuracy", "n_probabilistic", "brier", "log_score"]
    return {back.get(r["model"], r["model"]): [r[c] for c in cols]
            for r in res.table.to_dict("records")}


@settings(max_examples=25)
@given(_tables(), st.randoms(use_true_random=False))
def test_question_scores_row_order_names_columns_and_extra_column(df, rnd):
    """With the same rng: shuffled rows give the same table with the same intervals;
    models renamed order-preservingly give the same intervals, order-reversingly the
    same values and the same pooled interval; columns renamed through the column
    parameters plus an unused column change nothing."""
    perm = list(range(len(df)))
    rnd.shuffle(perm)
    a = coherence.question_scores(df, n_resamples=40, rng=3)
    b = coherence.question_scores(df.iloc[perm], n_resamples=40, rng=3)
    ta, tb = a.table.set_index("model"), b.table.set_index("model")
    pd.testing.assert_frame_equal(tb.loc[ta.index], ta, check_exact=False, rtol=1e-12)
    pd.testing.assert_frame_equal(
        b.by_type.set_index(["model", "type"]).sort_index(),
        a.by_type.set_index(["model", "type"]).sort_index(), check_exact=False, rtol=1e-12)
    # order-preserving relabelling of the models and renamed columns: everything equal
    keep = {"m1": "a-one", "m2": "b-two", "m3": "c-three"}
    renamed = (df.assign(model=df["model"].map(keep), note="irrelevant")
               .rename(columns={"model": "who", "question": "item", "type": "kind",
                                "prediction": "pred", "probability": "p", "outcome": "y",
                                "lower": "lo", "upper": "hi"}))
    c = coherence.question_scores(renamed, by="who", question="item", type="kind",
                                  prediction="pred", probability="p", outcome="y",
                                  lower="lo", upper="hi", n_resamples=40, rng=3)
    tc = c.table.rename(columns={"who": "model"})
    tc["model"] = tc["model"].map({v: k for k, v in keep.items()} | {"(all)": "(all)"})
    pd.testing.assert_frame_equal(tc.set_index("model").loc[ta.index], ta,
                                  check_exact=False, rtol=1e-12)
    # order-reversing relabelling: the same values; the pooled interval does not move
    rev = {"m1": "z", "m2": "y", "m3": "x"}
    d = coherence.question_scores(df.assign(model=df["model"].map(rev)), n_resamples=40,
                                  rng=3)
    back = {v: k for k, v in rev.items()}
    cd, ca = _model_cells(d, back), _model_cells(a)
    assert set(cd) == set(ca)
    for key, vals in ca.items():
        np.testing.assert_allclose(cd[key], vals, rtol=1e-12, atol=1e-12)
    for other in (b, c, d):
        assert other.statistic == pytest.approx(a.statistic, abs=1e-12)
        assert other.confidence_interval.low == pytest.approx(a.confidence_interval.low,
                                                              abs=1e-12)
        assert other.confidence_interval.high == pytest.approx(a.confidence_interval.high,
                                                               abs=1e-12)


@settings(max_examples=30)
@given(_tables())
def test_question_scores_binary_mirror(df):
    """Binary rows with the belief mirrored (1 - p) and the outcome swapped keep their
    Brier and log scores, and their accuracy away from the 0.5 tie (which is YES by
    definition, so mirroring it is not symmetric)."""
    binary = df["type"] == "binary"
    mirrored = df.copy()
    mirrored.loc[binary, "probability"] = 1.0 - df.loc[binary, "probability"].astype(float)
    mirrored.loc[binary, "outcome"] = 1 - df.loc[binary, "outcome"].astype(int)
    a = coherence.question_scores(df, n_resamples=1, rng=0).per_forecast
    b = coherence.question_scores(mirrored, n_resamples=1, rng=0).per_forecast
    np.testing.assert_allclose(b["brier"], a["brier"], rtol=1e-12, atol=1e-12)
    np.testing.assert_allclose(b["log_score"], a["log_score"], rtol=1e-9, atol=1e-12)
    off_tie = ~binary | (df["probability"].astype(float) != 0.5)
    np.testing.assert_array_equal(b["correct"][off_tie], a["correct"][off_tie])


@pytest.mark.parametrize(("prediction", "outcome", "tolerance"),
                         [(1.1, 1.0, 0.1), (0.9, 1.0, 0.1), (2.2, 2.0, 0.1),
                          (0.7, 1.0, 0.3), (-1.1, -1.0, 0.1), (1.3, 1.0, 0.3)])
def test_a_quantity_exactly_at_the_tolerance_counts_whatever_its_binary_rounding(
        prediction, outcome, tolerance):
    """Regression: |1.1 - 1.0| is 0.10000000000000009 in binary, above 0.1 x 1.0, so a
    forecast exactly 10% off was marked wrong while 110 against 100 was right; the
    documented rule includes the bound."""
    df = pd.DataFrame({"model": ["m"], "question": ["q"], "type": ["quantity"],
                       "prediction": [prediction], "outcome": [outcome]})
    res = coherence.question_scores(df, tolerance=tolerance, n_resamples=1, rng=0)
    assert res.per_forecast["rule_correct"].iloc[0] == 1.0
    assert res.statistic == 1.0
    # and just beyond the tolerance stays wrong
    beyond = df.assign(prediction=outcome + (prediction - outcome) * 1.001)
    res = coherence.question_scores(beyond, tolerance=tolerance, n_resamples=1, rng=0)
    assert res.per_forecast["rule_correct"].iloc[0] == 0.0


# --------------------------------------------------------------------------- validate_tasks
_day = dt.datetime(2024, 1, 1)


@st.composite
def _tasks(draw: st.DrawFn) -> tuple[pd.DataFrame, list[tuple[dt.datetime, dt.datetime]]]:
    n = draw(st.integers(1, 6))
    rows, windows = [], []
    for i in range(n):
        s = _day + dt.timedelta(hours=draw(st.integers(0, 24 * 400)))
        r = s + dt.timedelta(hours=draw(st.integers(1, 24 * 300)))
        kind = draw(st.sampled_from(_TYPES))
        outcome = {"binary": draw(st.integers(0, 1)), "quantity": 2.5, "interval": 1,
                   "multiple_choice": "A", "timeframe": "Q1 2025"}[kind]
        row = {"question": f"t{i}", "start": s.isoformat(),
               "resolution_date": r.isoformat(), "outcome": outcome, "type": kind}
        if draw(st.booleans()):
            row["simulated_date"] = (s + (r - s) / 2).isoformat()
        rows.append(row)
        windows.append((s, r))
    return pd.DataFrame(rows), windows


@settings(max_examples=30)
@given(_tasks(), st.randoms(use_true_random=False))
def test_validate_tasks_horizons_and_row_order(case, rnd):
    """horizon_days is resolution - start in days (standard library arithmetic); a
    shuffled table gives the same rows; renamed columns the same values."""
    df, windows = case
    out = coherence.validate_tasks(df)
    for i, (s, r) in enumerate(windows):
        assert out["horizon_days"].iloc[i] == pytest.approx((r - s).total_seconds() / 86400,
                                                            abs=1e-9)
        assert out["start"].iloc[i] == pd.Timestamp(s)
    perm = list(range(len(df)))
    rnd.shuffle(perm)
    shuffled = coherence.validate_tasks(df.iloc[perm])
    pd.testing.assert_frame_equal(shuffled.loc[out.index], out)
    renamed = df.rename(columns={"question": "id", "start": "open", "outcome": "y",
                                 "resolution_date": "close", "type": "kind",
                                 "simulated_date": "asof"})
    named = {"simulated_date": "asof"} if "asof" in renamed.columns else {}  # named: needed
    out2 = coherence.validate_tasks(renamed, question="id", start="open", outcome="y",
                                    resolution_date="close", type="kind", **named)
    np.testing.assert_allclose(out2["horizon_days"], out["horizon_days"])
