"""Hypothesis properties of ``iterated_expectation_check`` and ``consistency_noise_test``.

``iterated_expectation_check``: the units' errors against the law of iterated expectation
written out here, the sign test against a count over contexts, swapping agent and
baseline (errors swap, ratios invert, ``greater`` and ``less`` exchange p-values), row
order, order-preserving names of contexts, variables renamed, a duplicated study.
``consistency_noise_test``: the per-tuple Welch test of negation written out here, the
negation/paraphrase duality, row order and names of tuples, Monte Carlo floors, Storey's
share, and a study duplicated (the parametric study score grows by sqrt(2)).
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from scipy.stats import binomtest
from scipy.stats import t as student_t

from coherence import DegenerateDataWarning
from coherence import SmallSampleWarning
from coherence import consistency_noise_test
from coherence import iterated_expectation_check
from coherence._probability._noise import MIN_SHARE_TUPLES

GRID = np.arange(1, 20) / 20


# --------------------------------------------------------------------------- LIE
@st.composite
def lie_studies(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(elicited, baseline): 3-8 contexts, 1-3 withheld variables of 2-3 states, heaped
    numbers, an agent whose incoherence varies by context."""
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    n_ctx = draw(st.integers(3, 8))
    n_var = draw(st.integers(1, 3))
    rows, base = [], []
    for c in range(n_ctx):
        p_y = float(rng.choice(GRID))
        b_y = float(np.clip(p_y + rng.choice([-0.05, 0.0, 0.05]), 0.05, 0.95))
        noise = rng.choice([0.0, 0.05, 0.1])
        for v in range(n_var):
            k = int(rng.integers(2, 4))
            mass = rng.multinomial(20, np.ones(k) / k) / 20
            for s in range(k):
                common = {"context": f"x{c}", "variable": f"z{v}", "state": s,
                          "p_z_given_x": float(mass[s])}
                p_xz = float(np.clip(np.round((p_y + rng.normal(0, noise)) * 20) / 20, 0, 1))
                rows.append({**common, "p_y_given_x": p_y, "p_y_given_xz": p_xz})
                base.append({**common, "p_y_given_x": b_y,
                             "p_y_given_xz": float(np.clip(p_xz + rng.choice([-.05, 0, .05]),
                                                           0, 1))})
    return pd.DataFrame(rows), pd.DataFrame(base)


def lie(elicited, baseline, **kw):
    kw = {"n_resamples": 99, "rng": 0, **kw}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DegenerateDataWarning)
        # exact units on both sides: some resamples have no median ratio (n_undefined)
        warnings.filterwarnings("ignore", message=r".*bootstrap resamples .* are left out",
                                category=SmallSampleWarning)
        return iterated_expectation_check(elicited, baseline=baseline, **kw)


def lie_errors(df: pd.DataFrame) -> dict[tuple[str, str], float]:
    out = {}
    for (c, v), g in df.groupby(["context", "variable"]):
        out[(c, v)] = abs(g["p_y_given_x"].iloc[0]
                          - float((g["p_y_given_xz"] * g["p_z_given_x"]).sum()))
    return out


@given(lie_studies(), st.sampled_from(["greater", "less", "two-sided"]))
@settings(max_examples=25)
def test_lie_units_and_sign_test_are_the_definitions(study, alternative):
    el, ba = study
    res = lie(el, ba, alternative=alternative)
    agent, base = lie_errors(el), lie_errors(ba)
    t = res.table
    for row in t.itertuples():
        ea, eb = agent[(row.context, row.variable)], base[(row.context, row.variable)]
        assert row.agent_error == pytest.approx(ea if ea >= 1e-12 else 0.0, abs=1e-12)
        assert row.baseline_error == pytest.approx(eb if eb >= 1e-12 else 0.0, abs=1e-12)
    d = {}
    for (c, _), ea in agent.items():
        d.setdefault(c, []).append(ea - base[(c, _)])
    means = np.array([np.mean(v) for v in d.values()])
    # the table's errors have round-off below 1e-12 set to 0; so do these
    informative = np.abs(means) >= 1e-12
    k, n = int((means[informative] > 0).sum()), int(informative.sum())
    assert (res.n_agent_worse, res.n_informative) == (k, n)
    if n:
        assert res.pvalue == pytest.approx(binomtest(k, n, 0.5, alternative=alternative).pvalue,
                                           rel=1e-12)
    ratio = t["ratio"].to_numpy()
    finite = ratio[~np.isnan(ratio)]
    if finite.size:
        assert res.statistic == pytest.approx(float(np.median(finite)), rel=1e-12)
    ci = res.confidence_interval
    if not math.isnan(ci.low):
        assert ci.low <= ci.high


@given(lie_studies(), st.randoms(use_true_random=False), st.integers(0, 2**16))
@settings(max_examples=20)
def test_lie_row_order_names_and_roles(study, shuffle, seed):
    el, ba = study
    res = lie(el, ba, rng=seed)
    order = list(range(len(el)))
    shuffle.shuffle(order)
    border = list(range(len(ba)))
    shuffle.shuffle(border)
    again = lie(el.iloc[order], ba.iloc[border], rng=seed)
    np.testing.assert_allclose([again.statistic, again.pvalue, *again.confidence_interval[:2]],
                               [res.statistic, res.pvalue, *res.confidence_interval[:2]],
                               rtol=1e-12, equal_nan=True)
    # order-preserving names of contexts, other names of variables, renamed columns
    names = {c: f"my {c}" for c in el.columns}
    kw = {c: f"my {c}" for c in el.columns}

    def relabel(d: pd.DataFrame) -> pd.DataFrame:
        return d.assign(context="ctx " + d["context"], variable=d["variable"] + "!").rename(
            columns=names).assign(extra=1.0)
    other = lie(relabel(el), relabel(ba), rng=seed, **kw)
    assert other.to_frame().drop(columns=["method"]).equals(
        res.to_frame().drop(columns=["method"]))
    # agent and baseline swapped: the errors swap, the ratios invert, greater <-> less
    g = lie(el, ba, alternative="greater")
    swapped = lie(ba, el, alternative="less")
    assert swapped.pvalue == pytest.approx(g.pvalue, rel=1e-12)
    assert swapped.n_informative == g.n_informative
    assert swapped.n_agent_worse == g.n_informative - g.n_agent_worse
    np.testing.assert_array_equal(swapped.table["agent_error"], g.table["baseline_error"])


@given(lie_studies())
@settings(max_examples=15)
def test_lie_duplicated_study_keeps_the_median_and_doubles_the_counts(study):
    el, ba = study
    res = lie(el, ba)

    def twice(d: pd.DataFrame) -> pd.DataFrame:
        return pd.concat([d, d.assign(context=d["context"] + "-copy")], ignore_index=True)
    both = lie(twice(el), twice(ba))
    assert both.statistic == pytest.approx(res.statistic, rel=1e-12, nan_ok=True)
    assert (both.n_agent_worse, both.n_informative) == (2 * res.n_agent_worse,
                                                        2 * res.n_informative)


@given(lie_studies(), st.integers(0, 2**16), st.sampled_from([0.8, 0.9, 0.95]))
@settings(max_examples=20)
def test_lie_interval_is_the_expanded_percentile_interval_written_out(study, seed, level):
    """Reference: contexts drawn with replacement from the same stream, the median of the
    resample's finite-or-infinite ratios, numpy's percentiles at the level of the
    expanded interval (z at that level = sqrt(n/(n-1)) t_{n-1} at ``level``)."""
    from scipy.stats import norm

    el, ba = study
    res = lie(el, ba, rng=seed, n_resamples=199, confidence_level=level)
    t = res.table
    labels = np.array(sorted(t["context"].unique()))
    n = labels.size
    draws = np.random.default_rng(seed).integers(0, n, size=(199, n))
    ratio_of = {c: t.loc[t["context"] == c, "ratio"].to_numpy() for c in labels}
    medians = []
    for row in draws:
        r = np.concatenate([ratio_of[labels[i]] for i in row])
        r = r[~np.isnan(r)]
        medians.append(np.median(r) if r.size else np.nan)
    medians = np.array(medians)
    medians = medians[~np.isnan(medians)]
    alpha = 2 * norm.sf(math.sqrt(n / (n - 1)) * student_t.ppf(1 - (1 - level) / 2, n - 1))
    assert alpha < 1 - level
    if not np.isfinite(medians).all():
        return  # ends between infinite replicates: test_lie_interval_with_infinite_...
    want = np.quantile(medians, [alpha / 2, 1 - alpha / 2])
    np.testing.assert_allclose(res.confidence_interval[:2], want, rtol=1e-9, atol=1e-12)
    assert res.confidence_interval.confidence_level == level


def test_lie_interval_with_infinite_median_ratios():
    """Regression: a unit whose baseline error is 0 has ratio inf (documented); resamples
    whose median is inf made the percentile interval interpolate inf - inf: a
    RuntimeWarning (an error under ``-W error``) and a NaN end where the end is inf."""
    el = pd.DataFrame({"context": ["a", "a", "b", "b", "c", "c"], "variable": "z",
                       "state": [0, 1] * 3, "p_z_given_x": 0.5,
                       "p_y_given_x": [0.5, 0.5, 0.4, 0.4, 0.6, 0.6],
                       "p_y_given_xz": [0.6, 0.6, 0.4, 0.5, 0.7, 0.7]})
    ba = el.assign(p_y_given_x=[0.6, 0.6, 0.5, 0.5, 0.6, 0.6])  # a: exact, error 0
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)
        res = lie(el, ba, n_resamples=199)
    np.testing.assert_allclose(res.table["ratio"], [math.inf, 1.0, 1.0])
    assert res.statistic == pytest.approx(1.0)
    # a resample's median is inf when it draws context a twice or more (7/27 of them)
    assert res.confidence_interval.high == math.inf
    assert res.confidence_interval.low == pytest.approx(1.0)


# --------------------------------------------------------------------------- noise
@st.composite
def negation_repeats(draw: st.DrawFn, min_reps: int = 2) -> pd.DataFrame:
    """Negation tuples, ``min_reps``-5 repetitions per question (unequal), heaped on
    hundredths, some tuples incoherent, some questions with no noise at all."""
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    n = draw(st.integers(3, 12))
    rows = []
    for s in range(n):
        p = rng.uniform(0.2, 0.8)
        shift = rng.choice([0.0, 0.0, 0.1])
        for role, centre in (("P", p), ("not_P", 1 - p + shift)):
            sd = rng.choice([0.0, 0.02, 0.05])
            for r in range(int(rng.integers(min_reps, 6))):
                v = float(np.clip(np.round((centre + rng.normal(0, sd)) * 100) / 100, 0, 1))
                rows.append({"set": f"t{s:02d}", "role": role, "repetition": r,
                             "probability": v})
    return pd.DataFrame(rows)


def noise(df: pd.DataFrame, checker: str = "negation", **kw):
    kw = {"n_resamples": 99, "rng": 0, **kw}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallSampleWarning)
        return consistency_noise_test(df, checker, **kw)


@given(negation_repeats())
@settings(max_examples=25)
def test_noise_parametric_negation_is_the_welch_test(df):
    res = noise(df)
    for row in res.table.itertuples():
        sub = df[df["set"] == row.set]
        x = sub.loc[sub["role"] == "P", "probability"].to_numpy()
        y = sub.loc[sub["role"] == "not_P", "probability"].to_numpy()
        g = x.mean() + y.mean() - 1
        vx, vy = x.var(ddof=1) / len(x), y.var(ddof=1) / len(y)
        g = 0.0 if abs(g) < 1e-9 else g
        assert row.violation == pytest.approx(g, abs=1e-9)
        assert row.noise_violation == pytest.approx(vx + vy, abs=1e-12)
        assert row.excess == pytest.approx(g * g - vx - vy, abs=1e-12)
        assert row.min_repetitions == min(len(x), len(y))
        if vx + vy > 1e-12:
            t = g / math.sqrt(vx + vy)
            df_ = (vx + vy) ** 2 / (vx ** 2 / (len(x) - 1) + vy ** 2 / (len(y) - 1))
            assert row.pvalue == pytest.approx(min(1, 2 * student_t.sf(abs(t), df_)),
                                               rel=1e-6, abs=1e-12)
        elif g == 0:
            assert row.pvalue == 1.0
        else:
            assert row.pvalue == 0.0
    p = res.table["pvalue"].to_numpy()
    if res.n_tuples < MIN_SHARE_TUPLES:  # no share from fewer than five tuples
        assert math.isnan(res.statistic) and math.isnan(res.confidence_interval.low)
    else:
        assert res.statistic == pytest.approx(min(1, max(0, 1 - np.mean(p > 0.5) / 0.5)))
        assert 0 <= res.confidence_interval.low <= res.confidence_interval.high <= 1
    assert res.share_flagged == np.mean(p <= 0.05)


@given(st.sampled_from(["parametric", "resampling"]).flatmap(
    lambda m: st.tuples(st.just(m), negation_repeats(3 if m == "resampling" else 2))),
       st.randoms(use_true_random=False), st.integers(0, 2**16))
@settings(max_examples=20)
def test_noise_row_order_names_and_duality(method_df, shuffle, seed):
    method, df = method_df
    res = noise(df, method=method, rng=seed)
    order = list(range(len(df)))
    shuffle.shuffle(order)
    again = noise(df.iloc[order], method=method, rng=seed)
    pd.testing.assert_frame_equal(again.table, res.table, rtol=1e-9, atol=1e-12)
    np.testing.assert_allclose([again.statistic, again.pvalue, *again.confidence_interval[:2]],
                               [res.statistic, res.pvalue, *res.confidence_interval[:2]],
                               rtol=1e-9, atol=1e-12)
    renamed = df.rename(columns={"set": "tuple", "role": "question", "repetition": "run",
                                 "probability": "p"}).assign(tuple=lambda d: "s" + d["tuple"])
    other = noise(renamed, method=method, rng=seed, group="tuple", role="question",
                  repetition="run", probability="p")
    np.testing.assert_array_equal(other.table["pvalue"], res.table["pvalue"])
    assert other.pvalue == res.pvalue
    np.testing.assert_equal(other.statistic, res.statistic)
    if method == "resampling":
        floor = 1 / (99 + 1)
        assert np.all(res.table["pvalue"] >= floor - 1e-15) and res.pvalue >= floor - 1e-15
    else:
        # Paraphrase of (P, 1 - not_P) is Negation of (P, not_P): the same tests
        para = df.assign(probability=np.where(df["role"] == "not_P", 1 - df["probability"],
                                              df["probability"]),
                         role=df["role"].replace({"not_P": "para_P"}))
        pr = noise(para, "paraphrase", method=method, rng=seed)
        np.testing.assert_allclose(pr.table["pvalue"], res.table["pvalue"], rtol=1e-9,
                                   atol=1e-12)
        assert pr.pvalue == pytest.approx(res.pvalue, rel=1e-9, abs=1e-12)


@given(negation_repeats())
@settings(max_examples=15)
def test_noise_duplicated_study(df):
    res = noise(df)
    both = noise(pd.concat([df, df.assign(set=df["set"] + "-copy")], ignore_index=True))
    # sorted labels: each tuple is followed by its copy
    np.testing.assert_allclose(both.table["pvalue"], np.repeat(res.table["pvalue"], 2),
                               rtol=1e-12)
    if res.n_tuples >= MIN_SHARE_TUPLES:
        assert both.statistic == pytest.approx(res.statistic)
    else:
        assert math.isnan(res.statistic)
    assert both.study_statistic == pytest.approx(math.sqrt(2) * res.study_statistic,
                                                 rel=1e-9, abs=1e-12)
