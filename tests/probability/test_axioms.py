"""Tests of the probability-axiom and forecaster-consistency checks."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coherence import UPDATE_CLASSES
from coherence import BayesCheckResult
from coherence import ConditionalTupleResult
from coherence import NegationCheckResult
from coherence import TotalProbabilityResult
from coherence import UpdateDirectionResult
from coherence import bayes_check
from coherence import conditional_forecasting
from coherence import conditional_tuple_check
from coherence import negation_check
from coherence import total_probability_check
from coherence import update_direction

# per-row values read from one row (or rows of one violation): the interval's
# point-interval warning is asserted in test_axiom_interval_edges.py, not here
pytestmark = pytest.mark.filterwarnings(
    "ignore:.*is the point itself:coherence.SmallSampleWarning")


def coherent_beliefs(joint: np.ndarray) -> dict[str, np.ndarray]:
    """Every elicited quantity derived from joints (n, 4) = P(A,B) cells 11, 10, 01, 00."""
    j11, j10, j01, _j00 = joint.T
    p_a, p_b = j11 + j10, j11 + j01
    return {
        "p_a": p_a, "p_b": p_b,
        "p_a_given_b1": j11 / p_b, "p_a_given_b0": j10 / (1 - p_b),
        "p_b_given_a1": j11 / p_a, "p_b_given_a0": j01 / (1 - p_a),
        "p_not_a": 1 - p_a, "p_a_and_b": j11,
    }


@pytest.fixture
def beliefs() -> dict[str, np.ndarray]:
    rng = np.random.default_rng(7)
    return coherent_beliefs(rng.dirichlet(np.ones(4), size=200))


joint_strategy = st.lists(st.floats(0.02, 1.0), min_size=4, max_size=4).map(
    lambda v: np.asarray(v)[None, :] / np.sum(v))
prob = st.floats(0.0, 1.0)
inner = st.floats(0.01, 0.99)


# --------------------------------------------------------------------------- exact identities
def test_total_probability_exact_identity(beliefs):
    b = beliefs
    res = total_probability_check(b["p_a"], b["p_a_given_b1"], b["p_a_given_b0"], p_b=b["p_b"])
    assert isinstance(res, TotalProbabilityResult)
    assert res.feasible.all() and res.statistic == 1.0
    np.testing.assert_allclose(res.error, 0.0, atol=1e-12)
    ok = ~np.isnan(res.implied_p_b)
    np.testing.assert_allclose(res.implied_p_b[ok], b["p_b"][ok], atol=1e-8)
    assert res.share_consistent == 1.0


def test_bayes_exact_identity(beliefs):
    b = beliefs
    res = bayes_check(b["p_a"], b["p_b"], b["p_a_given_b1"], b["p_a_given_b0"],
                      b["p_b_given_a1"], b["p_b_given_a0"])
    assert isinstance(res, BayesCheckResult)
    np.testing.assert_allclose(res.error, 0.0, atol=1e-12)
    np.testing.assert_allclose(res.total_variation, 0.0, atol=1e-12)
    np.testing.assert_allclose(res.joint_a_side, res.joint_b_side, atol=1e-12)
    assert res.share_consistent == 1.0


def test_update_direction_never_inconsistent_on_coherent_beliefs(beliefs):
    b = beliefs
    res = update_direction(b["p_a"], b["p_a_given_b1"], b["p_a_given_b0"])
    assert "inconsistent" not in set(res.direction)
    # with eps = 0 and distinct conditionals, P(A) lies strictly between them
    res0 = update_direction(b["p_a"], b["p_a_given_b1"], b["p_a_given_b0"], eps=0.0)
    spread = np.abs(b["p_a_given_b1"] - b["p_a_given_b0"]) > 1e-9
    assert (res0.direction[spread] == "monotonic").all()


def test_negation_exact_identity(beliefs):
    res = negation_check(beliefs["p_a"], beliefs["p_not_a"])
    assert isinstance(res, NegationCheckResult)
    np.testing.assert_allclose(res.arbitrage, 0.0, atol=1e-12)
    np.testing.assert_allclose(res.frequentist, 0.0, atol=1e-12)


def test_conditional_tuple_exact_identity(beliefs):
    b = beliefs
    res = conditional_tuple_check(b["p_a"][:40], b["p_b_given_a1"][:40], b["p_a_and_b"][:40])
    assert isinstance(res, ConditionalTupleResult)
    np.testing.assert_allclose(res.absolute, 0.0, atol=1e-12)
    np.testing.assert_allclose(res.arbitrage, 0.0, atol=1e-7)


# --------------------------------------------------------------------------- known values
def test_total_probability_rules():
    # implied P(B) = 1/3 (feasible), 2.5 (infeasible), 1.04 (within tol), degenerate spread
    res = total_probability_check([0.3, 0.9, 0.604, 0.5, 0.5],
                                  [0.5, 0.6, 0.6, 0.5004, 0.5004],
                                  [0.2, 0.4, 0.5, 0.5, 0.5], tol=0.05)
    np.testing.assert_allclose(res.implied_p_b[:3], [1 / 3, 2.5, 1.04])
    assert np.isnan(res.implied_p_b[3:]).all()
    assert res.feasible.tolist() == [True, False, True, True, True]
    res = total_probability_check([0.56], [0.5004], [0.5], tol=0.05)
    assert res.feasible.tolist() == [False]
    # P(A) at P(A|B=0): an implied P(B) of 0 (0 / -1 gave -0.0), whichever the sign
    at_zero = total_probability_check([0.0, 1.0], [1.0, 0.0], [0.0, 1.0])
    assert at_zero.implied_p_b.tolist() == [0.0, 0.0]
    assert not np.signbit(at_zero.implied_p_b).any()
    assert res.statistic == 0.0 and np.isnan(res.mean_error)
    res = total_probability_check([0.5], [0.6], [0.2], p_b=[0.5])
    np.testing.assert_allclose(res.error, [0.1])
    assert res.share_consistent == 0.0


#: rows whose errors are exactly 0.05 in decimals; floating point gives two of each just
#: below 0.05 (0.04999999999999999) and two just above
_AT_TOL_TP = ([0.45, 0.35, 0.55, 0.25], [0.8, 0.6, 0.2, 0.8], [0.0, 0.2, 0.8, 0.0],
              [0.5, 0.5, 0.5, 0.25])
_AT_TOL_BAYES = [[0.2, 0.65, 0.25, 0.4, 0.8, 0.55], [0.8, 0.4, 0.9, 0.9, 0.3, 0.15],
                 [0.4, 0.55, 0.55, 0.4, 0.55, 0.3], [0.8, 0.2, 0.9, 0.9, 0.15, 0.35]]


def test_an_error_of_exactly_tol_is_not_below_it():
    """share_consistent and consistent count error < tol; an error of exactly tol (here
    0.05 on every row, by hand) is not below it, whichever way floating point rounds it
    (half the rows were counted consistent)."""
    p_a, p1, p0, p_b = _AT_TOL_TP
    res = total_probability_check(p_a, p1, p0, p_b=p_b, tol=0.05)
    np.testing.assert_allclose(res.error, 0.05, rtol=0, atol=1e-15)
    assert res.error.min() < 0.05 < res.error.max()  # the rounding this is about
    assert res.share_consistent == 0.0
    cols = np.array(_AT_TOL_BAYES).T
    b = bayes_check(*cols, tol=0.05, n_resamples=99, rng=0)
    np.testing.assert_allclose(b.error, 0.05, rtol=0, atol=1e-15)
    assert b.error.min() < 0.05 < b.error.max()
    assert b.consistent.tolist() == [False] * 4 and b.share_consistent == 0.0
    assert bayes_check(*cols, tol=0.0501, n_resamples=99, rng=0).share_consistent == 1.0


def test_conditional_tuple_absolute_of_exactly_the_threshold_is_not_above_it():
    """|P(A and B) - P(A) P(B|A)| of exactly 0.05 on the first three rows (by hand), which
    floating point gives as 0.05000000000000002, 0.05000000000000003 and
    0.049999999999999996: none is strictly above 0.05 (two were); the fourth, 0.15, is."""
    res = conditional_tuple_check([0.25, 0.4, 0.1, 0.5], [0.88, 0.4, 0.1, 0.5],
                                  [0.27, 0.11, 0.06, 0.4], n_resamples=99, rng=0)
    np.testing.assert_allclose(res.absolute, [0.05, 0.05, 0.05, 0.15], rtol=0, atol=1e-15)
    assert res.absolute[:2].min() > 0.05  # the rounding this is about
    assert res.share_absolute_above == res.absolute_summary.share_above == 0.25
    assert res.absolute_summary.threshold == 0.05 and res.absolute_summary.n_values == 4


def test_total_probability_exact_at_tol_zero():
    """tol=0 asks whether the law holds exactly: with (near-)equal conditionals a P(A) in
    their span is feasible, as a P(A) between distinct conditionals is (they were not)."""
    res = total_probability_check([0.5, 0.5, 1.0, 0.0, 0.501, 0.5001, 0.51],
                                  [0.5, 0.5005, 1.0, 0.0, 0.502, 0.5005, 0.5005],
                                  [0.5, 0.5, 1.0, 0.0, 0.5, 0.5, 0.5], tol=0)
    assert np.isnan(res.implied_p_b[[0, 1, 2, 3, 5, 6]]).all()
    assert res.feasible.tolist() == [True, True, True, True, True, True, False]
    assert res.statistic == 6 / 7


def test_zero_tolerance_counts_exactly_coherent_rows():
    """tol=0 asks whether the law holds exactly: rows that satisfy it (errors 0, or 9e-18
    of rounding) are consistent, not reported as a share of 0."""
    b = bayes_check([0.3, 0.5, 0.3], [0.5, 0.5, 0.5], [0.4, 0.5, 0.4], [0.2, 0.5, 0.2],
                    [2 / 3, 0.5, 2 / 3], [3 / 7, 0.5, 0.45], tol=0.0, n_resamples=99, rng=0)
    assert b.consistent.tolist() == [True, True, False] and b.share_consistent == 2 / 3
    t = total_probability_check([0.5, 0.3, 0.4], [0.6, 0.5, 0.6], [0.4, 0.1, 0.4],
                                p_b=[0.5, 0.5, 0.5], tol=0)
    assert t.share_feasible == 1.0 and t.share_consistent == 2 / 3


def test_update_direction_classes():
    res = update_direction([0.3] * 6, [0.5, 0.31, 0.5, 0.5, 0.1, 0.315],
                           [0.1, 0.3, 0.3, 0.4, 0.5, 0.3])
    assert res.direction.tolist() == ["monotonic", "no_update", "partial", "inconsistent",
                                      "monotonic", "no_update"]
    assert res.monotonic == pytest.approx(2 / 6) and res.no_update == pytest.approx(2 / 6)
    assert res.shares.columns.tolist() == list(UPDATE_CLASSES)
    assert sum(res.shares.iloc[0]) == pytest.approx(1.0)


def test_negation_known_values():
    res = negation_check([0.7, 0.7, 0.0], [0.3, 0.5, 0.0])
    assert res.arbitrage[1] == pytest.approx(-2 * np.log(np.sqrt(0.35) + np.sqrt(0.15)))
    assert res.frequentist[1] == pytest.approx(0.2 / np.sqrt(0.21 + 0.25 + 1e-3))
    assert np.isinf(res.arbitrage[2])
    assert res.frequentist[2] == pytest.approx(1 / np.sqrt(1e-3))
    assert res.share_frequentist_above == pytest.approx(2 / 3)
    # the mean arbitrage is infinite: so is its interval (it was the finite values' t
    # interval, (-0.0256, 0.0676) here, which excludes the statistic)
    res = negation_check([1.0, 0.7, 0.6, 0.5], [1.0, 0.5, 0.5, 0.6])
    assert res.statistic == np.inf
    assert tuple(res.confidence_interval[:2]) == (np.inf, np.inf)


def _tuple_profits(x: np.ndarray, a: float, c: float, j: float) -> np.ndarray:
    """Log-score profits in the three worlds (A&B, A&~B, ~A) of moving (a, c, j) to the
    consistent forecasts (x0, x1, x0 x1): the definition of conditional_tuple_check's
    arbitrage violation, maximised here by brute force."""
    a2, c2 = x[0], x[1]
    j2 = a2 * c2
    return np.array([
        np.log(a2 / a) + np.log(c2 / c) + np.log(j2 / j),
        np.log(a2 / a) + np.log((1 - c2) / (1 - c)) + np.log((1 - j2) / (1 - j)),
        np.log((1 - a2) / (1 - a)) + np.log((1 - j2) / (1 - j)),
    ])


def test_conditional_tuple_arbitrage_beats_a_grid():
    """The optimiser's value is achieved (a lower bound) and no grid point beats it."""
    g = np.linspace(0.001, 0.999, 500)
    A, C = np.meshgrid(g, g, indexing="ij")
    cases = [(0.5, 0.9, 0.18), (0.9, 0.33, 0.43), (0.35, 0.76, 0.32), (0.46, 0.17, 0.41)]
    res = conditional_tuple_check(*map(list, zip(*cases, strict=True)))
    for (a, c, j), v in zip(cases, res.arbitrage, strict=True):
        grid = _tuple_profits(np.stack([A, C]), a, c, j).min(axis=0).max()
        assert v >= grid - 1e-9
        assert v <= grid + 0.01
        assert v > 0


def test_conditional_tuple_certainty_is_finite():
    res = conditional_tuple_check([0.5, 0.0], [1.0, 0.5], [0.3, 0.3])
    assert np.isfinite(res.arbitrage).all() and (res.arbitrage > 0).all()
    # a forecaster certain A is false but giving P(A and B) = 0.3 loses ln(1/0.7)
    assert res.arbitrage[1] == pytest.approx(np.log(1 / 0.7), abs=1e-4)


# --------------------------------------------------------------------------- properties
@given(joint_strategy)
def test_property_exact_identities(joint):
    b = coherent_beliefs(joint)
    assert bayes_check(b["p_a"], b["p_b"], b["p_a_given_b1"], b["p_a_given_b0"],
                       b["p_b_given_a1"], b["p_b_given_a0"]).error[0] < 1e-12
    assert total_probability_check(b["p_a"], b["p_a_given_b1"], b["p_a_given_b0"],
                                   p_b=b["p_b"]).error[0] < 1e-12
    assert update_direction(b["p_a"], b["p_a_given_b1"],
                            b["p_a_given_b0"]).direction[0] != "inconsistent"


@given(prob, prob, prob, prob, prob, prob)
def test_property_bayes_swap_and_relabel(pa, pb, a1, a0, b1, b0):
    res = bayes_check([pa], [pb], [a1], [a0], [b1], [b0])
    swapped = bayes_check([pb], [pa], [b1], [b0], [a1], [a0])
    assert swapped.error[0] == pytest.approx(res.error[0], abs=1e-12)
    assert swapped.total_variation[0] == pytest.approx(res.total_variation[0], abs=1e-12)
    # relabel A (A -> not A): the four cells permute, total variation is unchanged
    rel_a = bayes_check([1 - pa], [pb], [1 - a1], [1 - a0], [b0], [b1])
    assert rel_a.total_variation[0] == pytest.approx(res.total_variation[0], abs=1e-12)
    rel_b = bayes_check([pa], [1 - pb], [a0], [a1], [1 - b1], [1 - b0])
    assert rel_b.total_variation[0] == pytest.approx(res.total_variation[0], abs=1e-12)
    assert (res.error[0] < 1e-12) == (res.total_variation[0] < 1e-12) or res.error[0] > 0


def test_total_probability_degenerate_spread_does_not_depend_on_the_order():
    # conditionals 0.0009 apart: the rule compared P(A) with P(A|B=1) alone, so the row
    # was feasible (0.0495 < 0.05) and, with the conditionals swapped, not (0.0504)
    res = total_probability_check([0.5495, 0.5495], [0.5, 0.4991], [0.4991, 0.5], tol=0.05)
    assert res.feasible.tolist() == [True, True]
    # between the two conditionals is feasible; beyond either by tol is not
    res = total_probability_check([0.4995, 0.4491, 0.4492], [0.5, 0.4991, 0.5],
                                  [0.4991, 0.5, 0.4991], tol=0.05)
    assert res.feasible.tolist() == [True, False, True]


@given(prob, st.floats(-9.9e-4, 9.9e-4), prob)
def test_property_total_probability_degenerate_swap(pa, gap, p1):
    p0 = min(max(p1 + gap, 0.0), 1.0)
    res = total_probability_check([pa], [p1], [p0])
    assert total_probability_check([pa], [p0], [p1]).feasible[0] == res.feasible[0]
    assert total_probability_check([1 - pa], [1 - p1], [1 - p0]).feasible[0] == res.feasible[0]


@given(prob, prob, prob)
def test_property_total_probability_relabel(pa, p1, p0):
    res = total_probability_check([pa], [p1], [p0])
    rel_a = total_probability_check([1 - pa], [1 - p1], [1 - p0])
    rel_b = total_probability_check([pa], [p0], [p1])
    if abs(p1 - p0) > 2e-3:  # away from the degenerate-spread switch
        assert rel_a.feasible[0] == res.feasible[0]
        assert rel_b.feasible[0] == res.feasible[0]
        assert rel_b.implied_p_b[0] == pytest.approx(1 - res.implied_p_b[0], abs=1e-9)


@given(prob, prob, prob)
def test_property_update_direction_relabel(pa, p1, p0):
    cls = update_direction([pa], [p1], [p0]).direction[0]
    assert update_direction([pa], [p0], [p1]).direction[0] == cls
    d1, d0 = p1 - pa, p0 - pa
    if min(abs(abs(d1) - 0.02), abs(abs(d0) - 0.02)) > 1e-9:  # not on the threshold
        assert update_direction([1 - pa], [1 - p1], [1 - p0]).direction[0] == cls


@given(prob, prob)
def test_property_negation_symmetric(p, q):
    res = negation_check([p], [q])
    swapped = negation_check([q], [p])
    assert swapped.frequentist[0] == pytest.approx(res.frequentist[0])
    if np.isfinite(res.arbitrage[0]):
        assert swapped.arbitrage[0] == pytest.approx(res.arbitrage[0], abs=1e-12)
    assert res.arbitrage[0] >= 0 and res.frequentist[0] >= 0
    assert (res.frequentist[0] == 0) == (p + q == 1)


@given(inner, inner, inner)
def test_property_conditional_tuple(a, c, j):
    res = conditional_tuple_check([a], [c], [j])
    rel_b = conditional_tuple_check([a], [1 - c], [max(a - j, 0.0)])
    if j <= a:
        assert rel_b.absolute[0] == pytest.approx(res.absolute[0], abs=1e-12)
    assert res.arbitrage[0] >= 0
    if res.absolute[0] > 0.02:
        assert res.arbitrage[0] > 0


# --------------------------------------------------------------------------- results
def test_per_row_tables_and_read_only(beliefs):
    b = beliefs
    results = [
        total_probability_check(b["p_a"], b["p_a_given_b1"], b["p_a_given_b0"]),
        bayes_check(b["p_a"], b["p_b"], b["p_a_given_b1"], b["p_a_given_b0"],
                    b["p_b_given_a1"], b["p_b_given_a0"]),
        update_direction(b["p_a"], b["p_a_given_b1"], b["p_a_given_b0"]),
        negation_check(b["p_a"], b["p_not_a"]),
        conditional_tuple_check(b["p_a"][:5], b["p_b_given_a1"][:5], b["p_a_and_b"][:5]),
    ]
    for res in results:
        assert len(res.per_row()) == res.n_obs
        pd.testing.assert_frame_equal(res.per_row(), res.table)
        assert res.per_row() is not res.table  # a copy
        assert np.isnan(res.pvalue)
    with pytest.raises(ValueError, match="read-only"):
        results[0].feasible[0] = False
    assert isinstance(results[2], UpdateDirectionResult)




def test_wilson_interval_for_share():
    res = total_probability_check([0.3] * 10, [0.5] * 10, [0.2] * 5 + [0.4] * 5)
    assert res.statistic == 0.5
    assert res.confidence_interval.low < 0.5 < res.confidence_interval.high


# --------------------------------------------------------------------------- validation
def test_validation_out_of_range():
    with pytest.raises(ValueError, match=r"Column 'p_a_given_b0' \(input to "
                       r"total_probability_check\) must hold probabilities in \[0, 1\]; "
                       r"1 offending row \(first: row 1 = 1.2\)"):
        total_probability_check([0.1, 0.2], [0.1, 0.2], [0.1, 1.2])


def test_validation_nan():
    with pytest.raises(ValueError, match=r"'p_b' .* must not contain NaN"):
        bayes_check([0.1], [np.nan], [0.1], [0.1], [0.1], [0.1])


def test_validation_non_numeric():
    with pytest.raises(ValueError, match=r"'p_a' .* must be numeric"):
        update_direction(["x"], [0.1], [0.1])


def test_validation_lengths():
    with pytest.raises(ValueError, match="The 'p_not_a' parameter of negation_check must be "
                       r"of the same length as 'p_a' \(2\); got 'length 1'"):
        negation_check([0.1, 0.2], [0.9])


def test_validation_empty():
    with pytest.raises(ValueError, match="The 'p_a' parameter of conditional_tuple_check "
                       "must be non-empty"):
        conditional_tuple_check([], [], [])


def test_validation_two_dimensional():
    with pytest.raises(ValueError, match="'p_a' must be one-dimensional"):
        update_direction([[0.1]], [0.1], [0.1])


@pytest.mark.parametrize(("func", "kwargs", "name", "exc"), [
    (total_probability_check, {"tol": -0.1}, "tol", ValueError),
    (total_probability_check, {"tol": "a"}, "tol", TypeError),
    (update_direction, {"eps": 2.0}, "eps", ValueError),
    (negation_check, {"beta": 0.0}, "beta", ValueError),
    (negation_check, {"arbitrage_threshold": -1.0}, "arbitrage_threshold", ValueError),
    (negation_check, {"frequentist_threshold": -1.0}, "frequentist_threshold", ValueError),
    (conditional_tuple_check, {"absolute_threshold": -1.0}, "absolute_threshold", ValueError),
    (conditional_tuple_check, {"arbitrage_threshold": np.nan}, "arbitrage_threshold",
     ValueError),
])
def test_validation_parameters(func, kwargs, name, exc):
    args = {total_probability_check: ([0.1], [0.2], [0.3]), update_direction: ([0.1], [0.2],
            [0.3]), negation_check: ([0.1], [0.2]), conditional_tuple_check: ([0.1], [0.2],
                                                                               [0.02])}[func]
    with pytest.raises(exc, match=f"The '{name}' parameter of {func.__name__} must be"):
        func(*args, **kwargs)


@pytest.mark.parametrize(("eps", "exc"), [(0.5, ValueError), (1.0, ValueError),
                                          (-0.01, ValueError), (np.nan, ValueError),
                                          (np.inf, ValueError), (True, TypeError),
                                          ("0.02", TypeError)])
def test_validation_update_direction_eps(eps, exc):
    """eps in [0.5, 1] was accepted, though no row can then be monotonic (P(A|B=1) and
    P(A|B=0) would differ by more than 1): the statistic was 0 by construction. Refused,
    saying why, by update_direction and conditional_forecasting alike."""
    rule = (r"The 'eps' parameter of {} must be a finite float in \[0, 0\.5\) \(a row is "
            r"monotonic when P\(A\|B=1\) and P\(A\|B=0\) lie more than eps from P\(A\), "
            r"on opposite sides, which no forecasts can from eps = 0\.5 on\); got ")
    with pytest.raises(exc, match=rule.format("update_direction")):
        update_direction([0.5], [1.0], [0.0], eps=eps)
    pairs = pd.DataFrame({"category": "strong", "p_a": [0.3, 0.4], "p_a_given_b1": 0.6,
                          "p_a_given_b0": 0.2, "a_outcome": [1, 0], "b_outcome": [1, 0]})
    with pytest.raises(exc, match=rule.format("conditional_forecasting")):
        conditional_forecasting(pairs, eps=eps, n_resamples=9, rng=0)
    # just below 0.5 a row can still be monotonic
    assert update_direction([0.5], [1.0], [0.0], eps=0.49).direction.tolist() == ["monotonic"]


def test_validation_bayes_tol():
    with pytest.raises(ValueError, match="The 'tol' parameter of bayes_check must be a finite "
                       r"float in \[0.0, 1.0\]; got 1.5"):
        bayes_check([0.1], [0.1], [0.1], [0.1], [0.1], [0.1], tol=1.5)


def test_frame_schemas_have_unique_columns():
    import coherence

    for name in ("TotalProbabilityResult", "BayesCheckResult", "UpdateDirectionResult",
                 "NegationCheckResult", "ConditionalTupleResult", "IteratedExpectationResult",
                 "PairsResult", "PairsPowerResult"):
        cols = getattr(coherence, name).frame_columns()
        assert len(set(cols)) == len(cols), name


@pytest.mark.parametrize("check, cols", [
    (negation_check, ("p_a", "p_not_a")),
    (conditional_tuple_check, ("p_a", "p_b_given_a1", "p_a_and_b")),
    (bayes_check, ("p_a", "p_b", "p_a_given_b1", "p_a_given_b0", "p_b_given_a1",
                   "p_b_given_a0")),
])
def test_interval_options_are_checked_and_recorded(beliefs, check, cols):
    """The mean violation's interval is the bootstrap-t over rows: reproducible with a
    seed, at the level asked for, named in ``method``; bad options name the parameter."""
    rng = np.random.default_rng(3)
    noisy = [np.clip(beliefs[c] + rng.normal(0, 0.05, 200), 0, 1) for c in cols]
    a = check(*noisy, confidence_level=0.9, n_resamples=199, rng=5)
    assert a.confidence_interval == check(*noisy, confidence_level=0.9, n_resamples=199,
                                          rng=5).confidence_interval
    assert a.confidence_interval.confidence_level == 0.9
    assert 0.0 <= a.confidence_interval.low < a.statistic < a.confidence_interval.high
    assert "bootstrap-t interval with Student's small-sample factor over rows" in a.method
    with pytest.raises(ValueError, match="'n_resamples' parameter of " + check.__name__):
        check(*noisy, n_resamples=0)
    with pytest.raises(ValueError, match="'confidence_level' parameter of " + check.__name__):
        check(*noisy, confidence_level=1.0)
    with pytest.raises((TypeError, ValueError), match="rng"):
        check(*noisy, rng="seed")
