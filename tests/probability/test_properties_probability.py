"""Hypothesis properties of the values ``consistency_check`` and ``pairs_power`` return.

``consistency_check``: each tuple's violations against the checkers' formulas written
out here, the summaries against loops over the table, the bootstrap interval's bounds,
invariance to the order of the rows and to the column names, and the dualities between
checkers (De Morgan for And/Or, Negation as a Paraphrase of the complement).
``pairs_power``: the required n against a direct search of the power curves computed
here from their definitions (scipy's noncentral t and binomial test, the Notes'
normal approximation), monotonicity in the effect and symmetry in its sign.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from scipy.stats import binom
from scipy.stats import binomtest
from scipy.stats import nct
from scipy.stats import norm
from scipy.stats import t as student_t

from coherence import CHECKERS
from coherence import arbitrage_violation
from coherence import consistency_check
from coherence import pairs_power
from tests.probability.test_checks import consistent_forecasts
from tests.probability.test_checks import worlds_of

#: one tuple, or tuples of one violation, give a point interval with a warning; these
#: properties read the violations, not the interval
pytestmark = pytest.mark.filterwarnings(
    "ignore:.*is the point itself:coherence.SmallSampleWarning")

# --------------------------------------------------------------------------- consistency
#: Forecasts on a dyadic grid (k / 64): complements 1 - f are exact.
dyadic = st.integers(0, 64).map(lambda k: k / 64)
interior = st.integers(1, 63).map(lambda k: k / 64)


def tuples_of(name: str, values: st.SearchStrategy[float] = interior, max_size: int = 8):
    k = len(CHECKERS[name])
    return st.lists(st.lists(values, min_size=k, max_size=k), min_size=1, max_size=max_size)


def check(rows, name: str, **kw):
    kw = {"n_resamples": 99, "rng": 0, **kw}
    return consistency_check(pd.DataFrame(rows, columns=list(CHECKERS[name])), name, **kw)


def _deviation(name: str, f: np.ndarray) -> float:
    """The signed deviation from the checker's identity, or the largest excess over one
    of its bounds (0 when the bounds hold)."""
    if name == "negation":
        return f[0] + f[1] - 1
    if name == "paraphrase":
        return f[0] - f[1]
    if name == "consequence":
        return max(f[0] - f[1], 0.0)
    if name == "and_or":
        return f[0] + f[1] - f[2] - f[3]
    if name == "but":
        return f[2] - f[0] - f[1]
    if name == "cond":
        return f[0] * f[1] - f[2]
    if name == "expected_evidence":
        return f[0] - f[2] * f[1] - f[3] * (1 - f[1])
    raise AssertionError(name)


def delta_method_violation(name: str, f: np.ndarray, beta: float) -> float:
    r"""|deviation| / sqrt(V + beta), V the delta-method variance of the deviation when
    each forecast x is binomially noisy (variance x (1 - x)), by numerical gradients;
    And and Or: the larger of their two bounds' violations, each with the variance of
    the forecasts it involves (docs: *Frequentist violation*)."""
    def ratio(dev_of, x: np.ndarray) -> float:
        dev = dev_of(x)
        if dev <= 0.0 and name in ("and", "or", "consequence"):
            return 0.0
        h = 1e-6
        grad = [(dev_of(x + h * e) - dev_of(x - h * e)) / (2 * h) for e in np.eye(len(x))]
        var = sum(g * g * xi * (1 - xi) for g, xi in zip(grad, x, strict=True))
        return abs(dev) / math.sqrt(var + beta)

    p = f.astype(float)
    if name == "and":  # P + Q - 1 <= P_and_Q <= min(P, Q)
        r = min(p[0], p[1])
        return max(ratio(lambda x: x[0] + x[1] - 1 - x[2], p),
                   ratio(lambda x: x[0] - x[1], np.array([p[2], r])))
    if name == "or":  # max(P, Q) <= P_or_Q <= P + Q
        s = max(p[0], p[1])
        return max(ratio(lambda x: x[0] - x[1], np.array([s, p[2]])),
                   ratio(lambda x: x[2] - x[0] - x[1], p))
    if name == "consequence":
        return ratio(lambda x: x[0] - x[1], p)
    return ratio(lambda x: _deviation(name, x), p)


def authors_cond_cond(f: np.ndarray, beta: float) -> float:
    """The released code's CondCond expression (which has P Q R where the delta method
    has P R in the first bracket; docs: the formulas are the released code's)."""
    p, q, r, s = f
    prod = p * q * r
    den = prod * (p * q + q * r + prod) - 3 * prod ** 2 + s * (1 - s)
    return abs(prod - s) / math.sqrt(den + beta)


@given(st.sampled_from(list(CHECKERS)), st.data(), st.sampled_from([1e-3, 0.05]))
@settings(max_examples=40)
def test_frequentist_violation_is_the_documented_formula(name, data, beta):
    rows = data.draw(tuples_of(name, dyadic, max_size=5))
    res = check(rows, name, beta=beta)
    for f, v in zip(np.asarray(rows), res.table["frequentist"], strict=True):
        expected = (authors_cond_cond(f, beta) if name == "cond_cond"
                    else delta_method_violation(name, f, beta))
        assert v == pytest.approx(expected, rel=1e-6, abs=1e-9)


@given(st.sampled_from(list(CHECKERS)), st.data(),
       st.sampled_from([1e-9, 0.01, 0.05]), st.sampled_from([(0.05, 2.58), (0.1, 1.0)]))
@settings(max_examples=40)
def test_summaries_equal_loops_over_the_table(name, data, tolerance, sigma_gamma):
    rows = data.draw(tuples_of(name))
    sigma, gamma = sigma_gamma
    res = check(rows, name, tolerance=tolerance, sigma=sigma, gamma=gamma)
    t = res.table
    arb, freq = list(t["arbitrage"]), list(t["frequentist"])
    n = len(rows)
    assert res.n_obs == n and res.checker == name
    np.testing.assert_allclose(arb, arbitrage_violation(name, rows), rtol=0, atol=0)
    assert all(a >= 0.0 for a in arb) and all(v >= 0.0 for v in freq)
    assert res.statistic == pytest.approx(sum(arb) / n, rel=1e-12, abs=1e-15)
    assert res.mean_arbitrage == res.statistic
    assert res.mean_frequentist == pytest.approx(sum(freq) / n, rel=1e-12, abs=1e-15)
    assert res.median_arbitrage == pytest.approx(float(np.median(arb)), abs=1e-15)
    trimmed = sorted(arb)[1:-1] if n > 2 else arb
    assert res.trimmed_mean_arbitrage == pytest.approx(sum(trimmed) / len(trimmed),
                                                       rel=1e-12, abs=1e-15)
    assert res.share_arbitrage_above == sum(a >= tolerance for a in arb) / n
    assert res.share_frequentist_above == sum(v >= gamma * sigma for v in freq) / n
    assert list(t["arbitrage_flag"]) == [a >= tolerance for a in arb]
    assert list(t["frequentist_flag"]) == [v >= gamma * sigma for v in freq]
    np.testing.assert_allclose(t["arbitrage_scaled"], np.asarray(arb) / len(CHECKERS[name]))
    assert res.max_duality_gap == max(t["arbitrage_gap"]) and res.max_duality_gap >= 0.0
    assert math.isnan(res.pvalue)
    # the bootstrap-t interval over tuples, cut at 0, holds the mean (the draws are checked
    # against loops in tests/core/test_resampling.py)
    for ci, values in ((res.confidence_interval, arb), (res.frequentist_interval, freq)):
        mean = sum(values) / n
        assert 0.0 <= ci.low <= mean + 1e-12 and ci.high >= mean - 1e-12


@given(st.sampled_from(list(CHECKERS)), st.data(), st.randoms(use_true_random=False),
       st.integers(0, 2**16))
@settings(max_examples=30)
def test_row_order_and_column_names_do_not_matter(name, data, shuffle, seed):
    """The bootstrap resamples the sorted values: the same ``rng`` gives the same
    intervals whatever the order of the rows; ``columns=`` reads renamed columns."""
    rows = data.draw(tuples_of(name))
    order = list(range(len(rows)))
    shuffle.shuffle(order)
    a = check(rows, name, rng=seed)
    b = check([rows[i] for i in order], name, rng=seed)
    for field in ("statistic", "mean_frequentist", "trimmed_mean_arbitrage"):
        assert getattr(a, field) == pytest.approx(getattr(b, field), rel=1e-12, abs=1e-15)
    for field in ("median_arbitrage", "median_frequentist", "share_arbitrage_above",
                  "share_frequentist_above", "max_duality_gap"):
        assert getattr(a, field) == getattr(b, field)
    assert a.confidence_interval == b.confidence_interval
    assert a.frequentist_interval == b.frequentist_interval
    np.testing.assert_array_equal(a.arbitrage[order], b.arbitrage)
    questions = CHECKERS[name]
    renamed = pd.DataFrame(rows, columns=[f"forecast {q}" for q in questions])
    c = consistency_check(renamed, name, columns={q: f"forecast {q}" for q in questions},
                          n_resamples=99, rng=seed)
    assert c.to_frame().equals(a.to_frame())
    np.testing.assert_array_equal(c.table["arbitrage"], a.table["arbitrage"])


@given(tuples_of("and", dyadic))
@settings(max_examples=20)
def test_de_morgan_and_negation_dualities(rows):
    """And of (P, Q, P_and_Q) is Or of the complements; Negation of (P, not_P) is
    Paraphrase of (P, 1 - not_P): complementing questions maps the possible worlds of
    one checker onto the other's, and both metrics are symmetric under it."""
    f = np.asarray(rows)
    a = check(f, "and")
    o = check(1 - f, "or")
    np.testing.assert_allclose(a.table["frequentist"], o.table["frequentist"], rtol=1e-12,
                               atol=1e-15)
    finite = np.isfinite(a.arbitrage)
    assert np.array_equal(finite, np.isfinite(o.arbitrage))
    np.testing.assert_allclose(a.arbitrage[finite], o.arbitrage[finite], atol=1e-6)
    neg = check(f[:, :2], "negation")
    para = check(np.column_stack([f[:, 0], 1 - f[:, 1]]), "paraphrase")
    np.testing.assert_array_equal(neg.arbitrage, para.arbitrage)
    np.testing.assert_allclose(neg.frequentist, para.frequentist, rtol=1e-12, atol=0)


@given(st.sampled_from(list(CHECKERS)), st.integers(1, 6), st.integers(0, 2**16))
@settings(max_examples=20)
def test_consistent_forecasters_pass_every_check(name, n, seed):
    """Forecasts implied by one distribution over the possible worlds: no tuple is
    flagged, the mean violations and their intervals are 0 (to solver precision)."""
    mu = np.random.default_rng(seed).dirichlet(np.ones(len(worlds_of(name))), size=n)
    rows = np.array([consistent_forecasts(name, m) for m in mu])
    res = check(rows, name)
    assert res.share_arbitrage_above == 0.0 and res.share_frequentist_above == 0.0
    assert 0.0 <= res.statistic < 1e-9 and res.mean_frequentist < 1e-9
    assert res.confidence_interval.high < 1e-9 and res.frequentist_interval.high < 1e-9


# --------------------------------------------------------------------------- pairs_power
def t_power_curve(ns: np.ndarray, d: float, alpha: float, alternative: str) -> np.ndarray:
    """Power of the one-sample t-test at standardised effect d, from scipy's noncentral t."""
    df, nc = ns - 1, np.sqrt(ns) * d
    if alternative == "two-sided":
        c = student_t.ppf(1 - alpha / 2, df)
        return nct.sf(c, df, nc) + nct.cdf(-c, df, nc)
    c = student_t.ppf(1 - alpha, df)
    return nct.sf(c, df, nc) if alternative == "greater" else nct.cdf(-c, df, nc)


def first_n(power: np.ndarray, ns: np.ndarray, target: float) -> int:
    hit = np.flatnonzero(power >= target)
    return int(ns[hit[0]]) if hit.size else -1


@given(st.floats(0.15, 2.0), st.sampled_from([-1.0, 1.0]),
       st.sampled_from(["two-sided", "greater", "less"]), st.sampled_from([0.5, 0.8, 0.9]),
       st.sampled_from([0.01, 0.05, 0.1]))
@settings(max_examples=40)
def test_t_required_n_is_the_first_n_of_the_power_curve(d, sign, alternative, power, alpha):
    effect, sd = sign * d * 0.1, 0.1
    assume(alternative == "two-sided" or (alternative == "greater") == (sign > 0))
    res = pairs_power(effect=effect, sd=sd, power=power, alpha=alpha, alternative=alternative,
                      n=10, n_simulations=0, max_n=2000)
    ns = np.arange(2, 2001)
    curve = t_power_curve(ns, effect / sd, alpha, alternative)
    assert res.n_required == first_n(curve, ns, power)
    assert res.achieved_power >= power
    assert res.achieved_power == pytest.approx(curve[res.n_required - 2], abs=1e-7)
    assert res.power_at_n == pytest.approx(curve[10 - 2], abs=1e-7)
    # the opposite sign with the mirrored alternative plans the same study
    mirror = {"two-sided": "two-sided", "greater": "less", "less": "greater"}[alternative]
    other = pairs_power(effect=-effect, sd=sd, power=power, alpha=alpha, alternative=mirror,
                        n_simulations=0, max_n=2000)
    assert other.n_required == res.n_required
    # a larger effect never needs more pairs
    larger = pairs_power(effect=1.5 * effect, sd=sd, power=power, alpha=alpha,
                         alternative=alternative, n_simulations=0, max_n=2000)
    assert 2 <= larger.n_required <= res.n_required


def test_one_sided_t_plans_run():
    """Regression: every one-sided plan of the t-test raised KeyError (its starting
    guess asked statsmodels' name of the alternative under our name). The start is now
    the normal approximation: no root finder, whose ConvergenceWarning at one-sided
    large effects statsmodels shows whatever the filters."""
    ns = np.arange(2, 3001)
    for alternative, effect in (("greater", 0.01), ("less", -0.01)):
        res = pairs_power(effect=effect, sd=0.1, alternative=alternative, n_simulations=0,
                          max_n=3000)
        assert res.n_required == first_n(t_power_curve(ns, effect / 0.1, 0.05, alternative),
                                         ns, 0.8) == 620
        wrong_way = pairs_power(effect=-effect, sd=0.1, alternative=alternative,
                                n_simulations=0, max_n=3000)
        assert wrong_way.n_required == -1 and math.isnan(wrong_way.achieved_power)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        big = pairs_power(effect=0.2, sd=0.1, power=0.5, alpha=0.01, alternative="greater",
                          n_simulations=0)
    assert big.n_required == first_n(t_power_curve(ns, 2.0, 0.01, "greater"), ns, 0.5)


def binom_power_direct(n: int, p1: float, p0: float, alpha: float, alternative: str) -> float:
    """P(binomtest rejects) under win rate p1, summed over every count, one test each."""
    return float(sum(binom.pmf(k, n, p1) for k in range(n + 1)
                     if binomtest(k, n, p0, alternative=alternative).pvalue <= alpha))


@given(st.integers(12, 40), st.sampled_from([0.3, 0.5, 0.6]), st.sampled_from([-1, 1]),
       st.sampled_from(["two-sided", "one-sided"]), st.sampled_from([0.5, 0.8]))
@settings(max_examples=12)
def test_win_rate_required_n_is_the_first_n_of_binomtest_power(gap, p0, sign, sides, power):
    p1 = round(p0 + sign * gap / 100, 2)
    assume(0.02 <= p1 <= 0.98)
    alternative = sides if sides == "two-sided" else ("greater" if sign > 0 else "less")
    res = pairs_power(metric="win_rate", win_rate=(p1, p0), power=power,
                      alternative=alternative, n=12, n_simulations=0, max_n=150)
    n = 2  # the direct search: the first n whose exact power reaches the target
    while n <= 150 and binom_power_direct(n, p1, p0, 0.05, alternative) < power:
        n += 1
    assert res.n_required == (n if n <= 150 else -1)
    if res.n_required > 0:
        assert res.achieved_power >= power
        assert res.achieved_power == pytest.approx(
            binom_power_direct(res.n_required, p1, p0, 0.05, alternative), abs=1e-9)
    assert res.power_at_n == pytest.approx(binom_power_direct(12, p1, p0, 0.05, alternative),
                                           abs=1e-9)


@st.composite
def pilots(draw: st.DrawFn) -> pd.DataFrame:
    n = draw(st.integers(4, 15))
    grid = st.integers(1, 19).map(lambda k: k / 20)
    cols = {c: draw(st.lists(grid, min_size=n, max_size=n))
            for c in ("p_a", "p_a_given_b1", "p_a_given_b0")}
    for c in ("a_outcome", "b_outcome"):
        cols[c] = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    return pd.DataFrame(cols)


def pilot_improvements(pilot: pd.DataFrame) -> list[float]:
    """(P(A) - a)^2 - (P(A | B = b) - a)^2 pair by pair, b being B's actual outcome."""
    out = []
    for r in pilot.itertuples():
        q = r.p_a_given_b1 if r.b_outcome == 1 else r.p_a_given_b0
        out.append((r.p_a - r.a_outcome) ** 2 - (q - r.a_outcome) ** 2)
    return out


@given(pilots(), st.sampled_from([0.01, 0.03, -0.02]), st.randoms(use_true_random=False))
@settings(max_examples=25)
def test_pilot_t_plan_uses_the_pilots_spread_whatever_its_order(pilot, effect, shuffle):
    x = pilot_improvements(pilot)
    assume(np.std(x) > 1e-3)
    res = pairs_power(pilot, category=None, effect=effect, n_simulations=0, max_n=50_000)
    assert res.n_pilot == len(pilot) and res.source == "pilot"
    assert res.sd == pytest.approx(float(np.std(x, ddof=1)), rel=1e-12)
    assumed = pairs_power(effect=effect, sd=res.sd, n_simulations=0, max_n=50_000)
    assert res.n_required == assumed.n_required
    order = list(range(len(pilot)))
    shuffle.shuffle(order)
    again = pairs_power(pilot.iloc[order], category=None, effect=effect, n_simulations=0,
                        max_n=50_000)
    assert again.sd == pytest.approx(res.sd, rel=1e-12)
    assert abs(again.n_required - res.n_required) <= 1  # equal but for a tie at the target


def bernoulli_truth(p: np.ndarray, q: np.ndarray, effect: float) -> np.ndarray:
    """alpha = clip(m - c d, 0, 1) with c such that mean 2 d (m - alpha) = effect."""
    d, m = p - q, (p + q) / 2
    lo, hi = -1e6, 1e6
    for _ in range(300):
        c = (lo + hi) / 2
        if np.mean(2 * d * (m - np.clip(m - c * d, 0, 1))) < effect:
            lo = c
        else:
            hi = c
    return np.clip(m - (lo + hi) / 2 * d, 0, 1)


@given(pilots(), st.sampled_from([0.005, 0.02]), st.sampled_from(["two-sided", "greater"]))
@settings(max_examples=15)
def test_bernoulli_required_n_is_the_first_n_of_the_documented_curve(pilot, effect,
                                                                      alternative):
    p = pilot["p_a"].to_numpy()
    q = np.where(pilot["b_outcome"] == 1, pilot["p_a_given_b1"], pilot["p_a_given_b0"])
    assume(np.std(pilot_improvements(pilot)) > 1e-3)
    d, m = p - q, (p + q) / 2
    reach = float(np.mean(2 * d * (m - np.clip(m - 1e6 * d, 0, 1))))
    assume(effect < 0.95 * reach)  # an effect the updates can carry
    try:
        res = pairs_power(pilot, category=None, effect=effect, test="bernoulli",
                          alternative=alternative, n_simulations=0, max_n=20_000)
    except ValueError as err:  # the pilot's updates cannot reach the effect
        assert "can reach" in str(err)
        return
    truth = bernoulli_truth(p, q, effect)
    gain = 2 * d * (m - truth)
    s0 = math.sqrt(np.mean(4 * d ** 2 * m * (1 - m)))
    s1 = math.sqrt(np.mean(4 * d ** 2 * truth * (1 - truth)) + np.var(gain))
    assume(s0 > 0 and s1 > 0)
    ns = np.arange(2, 20_001)
    shift = np.sqrt(ns) * np.mean(gain)
    if alternative == "two-sided":
        z = norm.ppf(0.975)
        curve = norm.sf((z * s0 - shift) / s1) + norm.cdf((-z * s0 - shift) / s1)
    else:
        curve = norm.sf((norm.ppf(0.95) * s0 - shift) / s1)
    expected = first_n(curve, ns, 0.8)
    # the curve crosses the target between two n; a 1e-9 change of c moves it by at most one
    assert abs(res.n_required - expected) <= (1 if expected > 0 else 0)
    if res.n_required > 0:
        assert res.achieved_power >= 0.8
        assert res.achieved_power == pytest.approx(curve[res.n_required - 2], abs=1e-6)
