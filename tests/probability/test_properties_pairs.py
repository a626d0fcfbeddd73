"""Hypothesis properties of ``conditional_forecasting`` (every test and ``ci_method``).

On pairs tables richer than the conformance suite's (several models and categories of
unequal sizes, beliefs heaped on twentieths, pairs that do not update, a rare A): the
table and headline do not depend on the order of the rows, on order-preserving names of
models and categories (an order-reversing renaming keeps the pooled headline and every
per-cell column that draws nothing), on the names of the columns or on an extra column;
relabelling B (its outcomes flipped, the conditionals swapped) changes nothing at all;
the per-cell columns equal their definitions written out here; Monte Carlo p-values are
at least their documented floors; the Bernoulli interval excludes 0 exactly when the
default p-value is at most 1 - level.
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
from scipy.stats import norm
from scipy.stats import ttest_1samp

from coherence import DegenerateDataWarning
from coherence import SmallSampleWarning
from coherence import conditional_forecasting
from coherence import total_probability_check
from coherence import update_direction

GRID = np.arange(1, 20) / 20  # heaped beliefs: multiples of 0.05
B = 99
PVALUE_COLUMNS = ("pvalue_bernoulli", "pvalue_bernoulli_conservative", "pvalue_t",
                  "pvalue_bootstrap_t")
INTERVAL_COLUMNS = ("ci_low_bernoulli", "ci_high_bernoulli", "ci_low_normal", "ci_high_normal",
                    "ci_low_bootstrap", "ci_high_bootstrap", "ci_low_bootstrap_t",
                    "ci_high_bootstrap_t")


@st.composite
def pairs_tables(draw: st.DrawFn) -> pd.DataFrame:
    """Models x categories of 1-7 pairs each; a model-level shift of the updates, pairs
    that do not update, A rare in some tables; the reverse elicitation sometimes."""
    n_models = draw(st.integers(1, 3))
    n_cats = draw(st.integers(1, 3))
    seed = draw(st.integers(0, 2**31 - 1))
    base_rate = draw(st.sampled_from([0.1, 0.5]))
    reverse = draw(st.booleans())
    rng = np.random.default_rng(seed)
    rows = []
    resolved: dict[str, tuple[int, int]] = {}  # a pair's outcomes, the same for every model
    for m in range(n_models):
        shift = rng.normal(0, 0.1)
        for c in range(n_cats):
            for i in range(int(rng.integers(1, 8))):
                pa = float(rng.choice(GRID))
                stay = rng.random() < 0.2
                p1 = pa if stay else float(np.clip(np.round((pa + 0.2 + shift) * 20) / 20,
                                                   0.05, 0.95))
                p0 = pa if stay else float(rng.choice(GRID))
                a_out, b_out = resolved.setdefault(f"q{c}-{i}", (
                    int(rng.random() < base_rate), int(rng.random() < 0.5)))
                row = {"model": f"m{m}", "category": f"c{c}", "pair": f"q{c}-{i}",
                       "p_a": pa, "p_a_given_b1": p1, "p_a_given_b0": p0,
                       "a_outcome": a_out, "b_outcome": b_out}
                if reverse:
                    row.update(p_b=float(rng.choice(GRID)), p_b_given_a1=float(rng.choice(GRID)),
                               p_b_given_a0=float(rng.choice(GRID)))
                rows.append(row)
    return pd.DataFrame(rows)


def run(df: pd.DataFrame, **kw):
    kw = {"n_resamples": B, "rng": 0, **kw}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallSampleWarning)
        warnings.simplefilter("ignore", DegenerateDataWarning)
        return conditional_forecasting(df, **kw)


def assert_same(a, b, columns=None) -> None:
    ta, tb = a.table.reset_index(drop=True), b.table.reset_index(drop=True)
    cols = list(ta.columns) if columns is None else list(columns)
    pd.testing.assert_frame_equal(ta[cols], tb[cols], check_exact=False, rtol=1e-12, atol=1e-15)


def headline(res) -> tuple[float, ...]:
    return (res.statistic, res.pvalue, res.confidence_interval.low, res.confidence_interval.high)


options = st.fixed_dictionaries({
    "test": st.sampled_from(["bernoulli", "bernoulli-conservative", "t", "bootstrap-t"]),
    "ci_method": st.sampled_from(["bernoulli", "bootstrap-t", "normal", "bootstrap"]),
    "alternative": st.sampled_from(["two-sided", "greater", "less"]),
})


@given(pairs_tables(), options, st.randoms(use_true_random=False), st.integers(0, 2**16))
@settings(max_examples=30)
def test_row_order_names_and_columns_do_not_matter(df, opts, shuffle, seed):
    res = run(df, rng=seed, **opts)
    order = list(range(len(df)))
    shuffle.shuffle(order)
    again = run(df.iloc[order], rng=seed, **opts)
    assert_same(res, again)
    np.testing.assert_allclose(headline(again), headline(res), rtol=1e-12, atol=1e-15)
    # columns renamed through the parameters, an irrelevant column added
    names = {c: f"my {c}" for c in df.columns if c not in ("model",)}
    renamed = df.rename(columns=names).assign(note="irrelevant")
    kw = {k: v for k, v in names.items() if k not in ("category",)}
    other = run(renamed, by="my category", rng=seed, **kw, **opts)
    assert_same(res, other)
    np.testing.assert_array_equal(headline(other), headline(res))
    # order-preserving names of models and categories: the same numbers
    kept = df.assign(model=df["model"].map(lambda m: "model " + m),
                     category=df["category"].map(lambda c: "z" + c))
    assert_same(res, run(kept, rng=seed, **opts), columns=[*PVALUE_COLUMNS,
                                                           *INTERVAL_COLUMNS, "n"])
    # order-reversing names: the pooled headline and what draws nothing per cell
    flipped = df.assign(model=df["model"].map(lambda m: f"m{9 - int(m[1:])}"),
                        category=df["category"].map(lambda c: f"c{9 - int(c[1:])}"))
    rev = run(flipped, rng=seed, **opts)
    np.testing.assert_allclose(headline(rev), headline(res), rtol=1e-12, atol=1e-15)
    fixed = ["n", "mean_improvement", "pvalue_t", "ci_low_normal", "ci_high_normal",
             "win_rate", "mean_sensitivity", "monotonic", "partial", "no_update",
             "inconsistent", "lotp_feasible", "bayes_error_mean"]
    a = res.table.sort_values(["model", "category"]).reset_index(drop=True)
    b = rev.table.assign(model=rev.table["model"].map(lambda m: f"m{9 - int(m[1:])}"),
                         category=rev.table["category"].map(lambda c: f"c{9 - int(c[1:])}"))
    b = b.sort_values(["model", "category"]).reset_index(drop=True)
    pd.testing.assert_frame_equal(a[fixed], b[fixed], rtol=1e-12, atol=1e-15)


@given(pairs_tables(), options, st.integers(0, 2**16))
@settings(max_examples=30)
def test_relabelling_b_changes_nothing(df, opts, seed):
    """B -> not B: its outcomes flip and the conditionals swap; every pair's improvement,
    its null and its class are the same, and so (same rng) is every number."""
    res = run(df, rng=seed, **opts)
    flipped = df.assign(b_outcome=1 - df["b_outcome"], p_a_given_b1=df["p_a_given_b0"],
                        p_a_given_b0=df["p_a_given_b1"])
    if "p_b" in df.columns:
        flipped = flipped.assign(p_b=1 - df["p_b"], p_b_given_a1=1 - df["p_b_given_a1"],
                                 p_b_given_a0=1 - df["p_b_given_a0"])
        drop = ["bayes_consistent", "bayes_error_mean"]  # the three-cell error is not
    else:  # invariant to relabelling (bayes_check's Notes)
        drop = []
    other = run(flipped, rng=seed, **opts)
    cols = [c for c in res.table.columns if c not in drop]
    assert_same(res, other, columns=cols)
    np.testing.assert_allclose(headline(other), headline(res), rtol=1e-12, atol=1e-15)


@given(pairs_tables(), st.sampled_from(["two-sided", "greater", "less"]),
       st.sampled_from([0.8, 0.9, 0.95]))
@settings(max_examples=30)
def test_cells_equal_their_definitions(df, alternative, level):
    res = run(df, alternative=alternative, confidence_level=level, rng=1)
    for row in res.table.itertuples():
        sub = df[(df["model"] == row.model) & (df["category"] == row.category)]
        p_cond = np.where(sub["b_outcome"] == 1, sub["p_a_given_b1"], sub["p_a_given_b0"])
        x = ((sub["p_a"] - sub["a_outcome"]) ** 2 - (p_cond - sub["a_outcome"]) ** 2).to_numpy()
        assert row.n == len(sub)
        assert row.mean_improvement == pytest.approx(x.mean(), rel=1e-12, abs=1e-15)
        assert row.win_rate == np.mean(x > 1e-15)
        assert row.mean_sensitivity == pytest.approx(
            np.mean(np.abs(sub["p_a_given_b1"] - sub["p_a_given_b0"])), rel=1e-12, abs=1e-15)
        ud = update_direction(sub["p_a"], sub["p_a_given_b1"], sub["p_a_given_b0"])
        for c in ("monotonic", "partial", "no_update", "inconsistent"):
            assert getattr(row, c) == getattr(ud, c)
        lotp = total_probability_check(sub["p_a"], sub["p_a_given_b1"], sub["p_a_given_b0"])
        assert row.lotp_feasible == lotp.share_feasible
        flat = len(x) < 2 or np.ptp(x) < 1e-12
        if flat:
            assert math.isnan(row.pvalue_t)
        else:
            t = ttest_1samp(x, 0.0, alternative=alternative)
            assert row.pvalue_t == pytest.approx(t.pvalue, rel=1e-10)
            ci = t.confidence_interval(level)
            z = norm.ppf(level if alternative != "two-sided" else (1 + level) / 2)
            half = z * x.std(ddof=1) / math.sqrt(len(x))
            low = -math.inf if alternative == "less" else x.mean() - half
            high = math.inf if alternative == "greater" else x.mean() + half
            assert row.ci_low_normal == pytest.approx(low, rel=1e-9, abs=1e-12)
            assert row.ci_high_normal == pytest.approx(high, rel=1e-9, abs=1e-12)
            assert np.isfinite(ci.low) or alternative == "less"
        # Monte Carlo floors and bounds
        for col, floor in (("pvalue_bernoulli", 0.5 / (B + 1)),
                           ("pvalue_bernoulli_conservative", 1 / (B + 1)),
                           ("pvalue_bootstrap_t", 1 / (B + 1))):
            p = getattr(row, col)
            assert math.isnan(p) or floor - 1e-15 <= p <= 1.0
        if not math.isnan(row.pvalue_bernoulli):
            assert row.pvalue_bernoulli <= row.pvalue_bernoulli_conservative + 1e-15
        # intervals ordered, half-lines on the alternative's side; the percentile
        # bootstrap's ends are means of resampled pairs
        for lo_c, hi_c in zip(INTERVAL_COLUMNS[::2], INTERVAL_COLUMNS[1::2], strict=True):
            lo, hi = getattr(row, lo_c), getattr(row, hi_c)
            if math.isnan(lo):
                continue
            assert lo <= hi
            assert (lo == -math.inf) == (alternative == "less")
            assert (hi == math.inf) == (alternative == "greater")
        if not math.isnan(row.ci_low_bootstrap) and len(x):
            for v in (row.ci_low_bootstrap, row.ci_high_bootstrap):
                assert not np.isfinite(v) or x.min() - 1e-12 <= v <= x.max() + 1e-12
        # the Bernoulli interval excludes 0 exactly when its p-value is <= 1 - level
        if not math.isnan(row.pvalue_bernoulli):
            excludes = not (row.ci_low_bernoulli <= 0.0 <= row.ci_high_bernoulli)
            assert excludes == (row.pvalue_bernoulli <= 1 - level + 1e-12), row


@given(pairs_tables(), st.integers(0, 2**16))
@settings(max_examples=10)
def test_two_sided_is_twice_the_smaller_one_sided(df, seed):
    """Same rng, same draws: mid-p greater + less = 1, two-sided = min(1, 2 min)."""
    both = run(df, rng=seed)
    gt = run(df, rng=seed, alternative="greater")
    lt = run(df, rng=seed, alternative="less")
    for col in ("pvalue_bernoulli",):
        g, lo, two = (t[col].to_numpy() for t in (gt.table, lt.table, both.table))
        ok = ~np.isnan(two)
        np.testing.assert_allclose(g[ok] + lo[ok], 1.0, atol=1e-12)
        np.testing.assert_allclose(two[ok], np.minimum(1, 2 * np.minimum(g[ok], lo[ok])),
                                   atol=1e-12)
