"""Hypothesis properties of the axiom checks and of the checkers' array layer.

``update_direction``, ``total_probability_check``, ``bayes_check``, ``negation_check``
and ``conditional_tuple_check`` against their Notes written out here on beliefs heaped
on a grid of hundredths (where a difference such as 0.52 - 0.50 is not exactly 0.02 in
floating point), the relabelling symmetries their docstrings promise, row order; and
``arbitrage_violation`` / ``frequentist_violation`` (the array layer) against the table
of ``consistency_check`` and ``negation_check`` on the same tuples.
"""

from __future__ import annotations

import math
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from coherence import CHECKERS
from coherence import arbitrage_violation
from coherence import bayes_check
from coherence import conditional_tuple_check
from coherence import consistency_check
from coherence import frequentist_violation
from coherence import negation_check
from coherence import total_probability_check
from coherence import update_direction

# per-row values read from one row (or rows of one violation): the interval's
# point-interval warning is asserted in test_axiom_interval_edges.py, not here
pytestmark = pytest.mark.filterwarnings(
    "ignore:.*is the point itself:coherence.SmallSampleWarning")

#: beliefs heaped on hundredths, as models and people state them
cents = st.integers(0, 100)
inner_cents = st.integers(1, 99)


def rows_of(k: int, values: st.SearchStrategy[int] = cents, max_size: int = 12):
    return st.lists(st.lists(values, min_size=k, max_size=k), min_size=1, max_size=max_size)


def as_prob(rows: list[list[int]]) -> np.ndarray:
    return np.asarray(rows, dtype=float) / 100.0


@st.composite
def near_triples(draw: st.DrawFn, max_size: int = 12) -> list[list[int]]:
    """(P(A), P(A|B=1), P(A|B=0)) in hundredths, the conditionals within 12 hundredths of
    P(A) or of each other: movements and ends of the feasible range fall on the
    thresholds often."""
    n = draw(st.integers(1, max_size))
    rows = []
    for _ in range(n):
        a = draw(cents)
        c1 = min(100, max(0, a + draw(st.integers(-12, 12))))
        c0 = min(100, max(0, draw(st.sampled_from([a, c1])) + draw(st.integers(-12, 12))))
        rows.append([a, c1, c0])
    return rows


# --------------------------------------------------------------------------- update direction
def classes_from_decimals(rows: list[list[int]], eps_cents: int) -> list[str]:
    """The Notes' classes computed on exact decimals (hundredths)."""
    out = []
    for a, c1, c0 in rows:
        d1, d0, e = Decimal(c1 - a), Decimal(c0 - a), Decimal(eps_cents)
        if abs(d1) < e and abs(d0) < e:
            out.append("no_update")
        elif (d1 > e and d0 < -e) or (d1 < -e and d0 > e):
            out.append("monotonic")
        elif (d1 > e and d0 > e) or (d1 < -e and d0 < -e):
            out.append("inconsistent")
        else:
            out.append("partial")
    return out


@given(near_triples(), st.sampled_from([1, 2, 5]))
@example([[2, 2, 3], [50, 52, 48]], 1)
@settings(max_examples=60)
def test_update_classes_are_the_documented_rule_on_stated_numbers(rows, eps_cents):
    """A movement of exactly ``eps`` (0.52 after 0.50 at eps 0.02) is ``partial``, as the
    Notes say, whatever its floating-point difference."""
    f = as_prob(rows)
    res = update_direction(f[:, 0], f[:, 1], f[:, 2], eps=eps_cents / 100)
    assert list(res.direction) == classes_from_decimals(rows, eps_cents)
    for c in ("monotonic", "partial", "no_update", "inconsistent"):
        assert getattr(res, c) == pytest.approx(np.mean(res.direction == c), abs=1e-15)
    assert res.statistic == res.monotonic
    assert res.confidence_interval.low <= res.statistic <= res.confidence_interval.high


@given(near_triples(), st.sampled_from([0.01, 0.02, 0.05]))
@settings(max_examples=40)
def test_update_classes_are_invariant_to_relabelling_a_and_b(rows, eps):
    """Docstring: invariant to relabelling A (complements) and B (conditionals swapped)."""
    f = as_prob(rows)
    res = update_direction(f[:, 0], f[:, 1], f[:, 2], eps=eps)
    g = 1.0 - f
    assert list(update_direction(g[:, 0], g[:, 1], g[:, 2], eps=eps).direction) == list(
        res.direction)
    assert list(update_direction(f[:, 0], f[:, 2], f[:, 1], eps=eps).direction) == list(
        res.direction)


def test_a_movement_of_exactly_eps_is_partial():
    """Regression: 0.52 - 0.50 is 0.020000000000000018 in floating point, which the
    classes compared with ``eps`` as is: a stated movement of exactly 0.02 was
    ``monotonic`` (or ``no_update`` below) where the Notes say ``partial``."""
    res = update_direction([0.50, 0.50, 0.70], [0.52, 0.49, 0.72], [0.48, 0.51, 0.68])
    assert list(res.direction) == ["partial", "no_update", "partial"]
    assert res.monotonic == 0.0


# --------------------------------------------------------------------------- total probability
def feasible_from_decimals(rows: list[list[int]], tol_cents: int) -> list[bool]:
    out = []
    for a, c1, c0 in rows:
        if abs(c1 - c0) < 0.1:  # the Notes' |spread| < 0.001, in hundredths: equal
            out.append(a == c1 or abs(a - c1) < tol_cents)  # at the conditionals: any tol
            continue
        implied = Decimal(a - c0) / Decimal(c1 - c0)
        t = Decimal(tol_cents) / 100
        out.append(-t <= implied <= 1 + t)
    return out


@given(st.one_of(near_triples(), rows_of(3)), st.sampled_from([0, 5, 10]))
@example([[3, 24, 4], [1, 6, 6], [0, 77, 7]], 5)
@example([[0, 77, 7], [2, 12, 12]], 10)
@settings(max_examples=60)
def test_total_probability_is_the_documented_rule_and_symmetric(rows, tol_cents):
    """Feasible iff the implied P(B) lies in [-tol, 1 + tol] (on exact decimals), and the
    same after relabelling A (complements) or B (conditionals swapped), as promised."""
    f = as_prob(rows)
    tol = tol_cents / 100
    res = total_probability_check(f[:, 0], f[:, 1], f[:, 2], tol=tol)
    expected = feasible_from_decimals(rows, tol_cents)
    assert list(res.feasible) == expected
    assert res.statistic == res.share_feasible == pytest.approx(np.mean(expected), abs=1e-15)
    g = 1.0 - f
    assert list(total_probability_check(g[:, 0], g[:, 1], g[:, 2], tol=tol).feasible) == expected
    assert list(total_probability_check(f[:, 0], f[:, 2], f[:, 1], tol=tol).feasible) == expected
    finite = np.isfinite(res.implied_p_b)
    swapped = total_probability_check(f[:, 0], f[:, 2], f[:, 1], tol=tol).implied_p_b
    np.testing.assert_allclose(swapped[finite], 1.0 - res.implied_p_b[finite], atol=1e-9)


@given(rows_of(4), st.sampled_from([0.01, 0.05]))
@settings(max_examples=30)
def test_total_probability_error_is_the_identity_and_order_free(rows, tol):
    f = as_prob(rows)
    res = total_probability_check(f[:, 0], f[:, 1], f[:, 2], p_b=f[:, 3], tol=tol)
    err = [abs(a - c1 * b - c0 * (1 - b)) for a, c1, c0, b in f]
    np.testing.assert_allclose(res.error, err, rtol=0, atol=1e-15)
    assert res.mean_error == pytest.approx(np.mean(err), abs=1e-15)
    # error < tol on the exact decimals (an error of exactly tol is not below it)
    exact = [abs(Decimal(a) - Decimal(c1) * Decimal(b) / 100 - Decimal(c0) * (100 - b) / 100)
             / 100 for a, c1, c0, b in rows]
    assert res.share_consistent == np.mean([e < Decimal(str(tol)) for e in exact])
    rev = f[::-1]
    other = total_probability_check(rev[:, 0], rev[:, 1], rev[:, 2], p_b=rev[:, 3], tol=tol)
    assert other.confidence_interval == res.confidence_interval
    assert other.mean_error == pytest.approx(res.mean_error, rel=1e-12, abs=1e-15)


def test_feasibility_on_every_triple_of_hundredths():
    """Regression: the implied P(B) and |P(A) - P(A|B=1)| were compared with the ends as
    computed in floating point; a stated P(A) exactly at an end was decided by rounding:
    at tol 0.05, 372 of the 101^3 triples of hundredths (e.g. P(A) = 0.03 between 0.04
    and 0.24, implied -0.05000000000000002, called infeasible), at tol 0.10, 602. Against
    the rule in integer arithmetic: none now."""
    g = np.arange(101)
    a, c1, c0 = (v.ravel() for v in np.meshgrid(g, g, g, indexing="ij"))
    spread = c1 - c0
    for tol in (5, 10):
        res = total_probability_check(a / 100, c1 / 100, c0 / 100, tol=tol / 100)
        num = 100 * (a - c0)  # -tol <= num / (100 spread) <= 1 + tol, in hundredths
        low = np.where(spread > 0, num >= -tol * spread, num <= -tol * spread)
        high = np.where(spread > 0, num <= (100 + tol) * spread, num >= (100 + tol) * spread)
        expected = np.where(spread == 0, np.abs(a - c1) < tol, low & high)
        assert int(np.count_nonzero(res.feasible != expected)) == 0


# --------------------------------------------------------------------------- Bayes
@given(rows_of(6), st.sampled_from([0.01, 0.05]))
@settings(max_examples=40)
def test_bayes_error_is_the_three_cell_formula_symmetric_in_a_and_b(rows, tol):
    f = as_prob(rows)
    pa, pb, a1, a0, b1, b0 = f.T
    res = bayes_check(pa, pb, a1, a0, b1, b0, tol=tol)
    expected = [(abs(x1 * y - z1 * x) + abs(x0 * (1 - y) - (1 - z1) * x)
                 + abs((1 - x1) * y - z0 * (1 - x))) / 3
                for x, y, x1, x0, z1, z0 in zip(pa, pb, a1, a0, b1, b0, strict=True)]
    np.testing.assert_allclose(res.error, expected, rtol=1e-12, atol=1e-15)
    tv = [0.5 * (abs(x1 * y - z1 * x) + abs(x0 * (1 - y) - (1 - z1) * x)
                 + abs((1 - x1) * y - z0 * (1 - x)) + abs((1 - x0) * (1 - y) - (1 - z0) * (1 - x)))
          for x, y, x1, x0, z1, z0 in zip(pa, pb, a1, a0, b1, b0, strict=True)]
    np.testing.assert_allclose(res.total_variation, tv, rtol=1e-12, atol=1e-15)
    # error < tol on the exact decimals (an error of exactly tol is not below it)
    d = [[Decimal(v) / 100 for v in row] for row in rows]
    exact = [(abs(x1 * y - z1 * x) + abs(x0 * (1 - y) - (1 - z1) * x)
              + abs((1 - x1) * y - z0 * (1 - x))) / 3 for x, y, x1, x0, z1, z0 in d]
    assert list(res.consistent) == [e < Decimal(str(tol)) for e in exact]
    # the roles of A and B swapped: the a1b0 and a0b1 cells swap, the error is the same
    swapped = bayes_check(pb, pa, b1, b0, a1, a0, tol=tol)
    np.testing.assert_allclose(swapped.error, res.error, rtol=1e-12, atol=1e-15)
    # relabelling A (A -> not A): the total variation is invariant (the error is not)
    relab = bayes_check(1 - pa, pb, 1 - a1, 1 - a0, b0, b1, tol=tol)
    np.testing.assert_allclose(relab.total_variation, res.total_variation, rtol=1e-9,
                               atol=1e-12)
    if len(rows) >= 2 and np.std(res.error) > 0:
        ci = res.confidence_interval
        assert ci.low <= res.statistic <= ci.high


@given(st.lists(st.tuples(st.floats(0.01, 0.99), st.floats(0.01, 0.99), st.floats(0.01, 0.99)),
                min_size=1, max_size=6))
@settings(max_examples=20)
def test_bayes_error_is_zero_on_one_joint_distribution(joints):
    rows = []
    for x, y, z in joints:  # P(A=1,B=1) = x y z ... a joint from three numbers
        p11, p10, p01 = x * y * z, x * (1 - y), (1 - x) * y * (1 - z) * 0.5
        pa, pb = p11 + p10, p11 + p01
        rows.append((pa, pb, p11 / pb, p10 / (1 - pb), p11 / pa, p01 / (1 - pa)))
    f = np.asarray(rows)
    res = bayes_check(*f.T)
    assert np.all(res.error < 1e-12) and np.all(res.total_variation < 1e-12)
    assert res.share_consistent == 1.0


# --------------------------------------------------------------------------- negation
@given(rows_of(2), st.sampled_from([1e-3, 0.05]), st.sampled_from([0.0, 0.01]),
       st.sampled_from([0.0, 0.05]))
@settings(max_examples=40)
def test_negation_check_is_the_closed_form_and_the_array_layer(rows, beta, arb_thr, freq_thr):
    f = as_prob(rows)
    p, q = f.T
    res = negation_check(p, q, beta=beta, arbitrage_threshold=arb_thr,
                         frequentist_threshold=freq_thr)
    with np.errstate(divide="ignore"):
        arb = -2 * np.log(np.sqrt(p * (1 - q)) + np.sqrt((1 - p) * q))
    freq = np.abs(p + q - 1) / np.sqrt(p * (1 - p) + q * (1 - q) + beta)
    finite = np.isfinite(arb)
    assert np.array_equal(finite, np.isfinite(res.arbitrage))
    np.testing.assert_allclose(res.arbitrage[finite], np.maximum(arb[finite], 0), atol=1e-12)
    np.testing.assert_allclose(res.frequentist, freq, rtol=1e-12, atol=1e-15)
    # the array layer and the table layer of consistency_check give the same values
    np.testing.assert_array_equal(arbitrage_violation("negation", f), res.arbitrage)
    np.testing.assert_array_equal(frequentist_violation("negation", f, beta=beta),
                                  res.frequentist)
    # symmetric in (p, q)
    sym = negation_check(q, p, beta=beta)
    np.testing.assert_allclose(sym.arbitrage[finite], res.arbitrage[finite], atol=1e-12)
    np.testing.assert_allclose(sym.frequentist, res.frequentist, rtol=1e-12, atol=1e-15)
    assert res.share_frequentist_above == np.mean(res.frequentist > freq_thr)
    assert res.share_arbitrage_above == np.mean(res.arbitrage > arb_thr)
    # consistent pairs: exactly 0 on both metrics
    exact = (np.asarray(rows)[:, 0] + np.asarray(rows)[:, 1]) == 100
    assert np.all(res.frequentist[exact] == 0.0) and np.all(res.arbitrage[exact] < 1e-12)


# --------------------------------------------------------------------------- conditional tuple
@given(rows_of(3, inner_cents, max_size=5))
@settings(max_examples=25)
def test_conditional_tuple_violations(rows):
    """absolute = |j - a c|; arbitrage 0 exactly when j = a c, positive otherwise, and at
    least the profit of the simplest consistent move (a, c, a c) -> its min over worlds."""
    f = as_prob(rows)
    a, c, j = f.T
    res = conditional_tuple_check(a, c, j)
    np.testing.assert_allclose(res.absolute, np.abs(j - a * c), rtol=0, atol=0)
    assert np.all(res.arbitrage >= 0)
    exact = [x * y == 100 * z for x, y, z in rows]  # j = a c on the stated hundredths
    for arb, is_exact, (x, y, z) in zip(res.arbitrage, exact, f, strict=True):
        if is_exact:
            assert arb < 1e-6
        else:
            assert arb > 0
        # any consistent (a', c') guarantees at most the optimum: try a grid of them
        best = 0.0
        for a2 in np.linspace(0.05, 0.95, 19):
            for c2 in np.linspace(0.05, 0.95, 19):
                j2 = a2 * c2
                profits = (math.log(a2 / x) + math.log(c2 / y) + math.log(j2 / z),
                           math.log(a2 / x) + math.log((1 - c2) / (1 - y))
                           + math.log((1 - j2) / (1 - z)),
                           math.log((1 - a2) / (1 - x)) + math.log((1 - j2) / (1 - z)))
                best = max(best, min(profits))
        assert arb >= best - 1e-6
    rev = conditional_tuple_check(a[::-1], c[::-1], j[::-1])
    np.testing.assert_allclose(rev.arbitrage, res.arbitrage[::-1], atol=1e-7)
    assert rev.mean_absolute == pytest.approx(res.mean_absolute, rel=1e-12, abs=1e-15)


# --------------------------------------------------------------------------- checkers' array layer
@given(st.sampled_from(list(CHECKERS)), st.data(), st.sampled_from(["paper", "code"]),
       st.randoms(use_true_random=False))
@settings(max_examples=30)
def test_array_layer_equals_the_table_whatever_the_column_order(name, data, definition,
                                                                shuffle):
    """A DataFrame with the questions in another order, an extra column, renamed through
    ``columns=``: the array layer and ``consistency_check``'s table agree."""
    k = len(CHECKERS[name])
    rows = data.draw(rows_of(k, inner_cents, max_size=5))
    f = as_prob(rows)
    questions = list(CHECKERS[name])
    arb = arbitrage_violation(name, f, definition=definition)
    freq = frequentist_violation(name, f, definition=definition, beta=0.01)
    perm = questions.copy()
    shuffle.shuffle(perm)
    frame = pd.DataFrame(f, columns=questions)[perm].assign(irrelevant="x")
    np.testing.assert_array_equal(arbitrage_violation(name, frame, definition=definition), arb)
    np.testing.assert_array_equal(
        frequentist_violation(name, frame, definition=definition, beta=0.01), freq)
    renamed = frame.rename(columns={q: f"my {q}" for q in questions})
    res = consistency_check(renamed, name, columns={q: f"my {q}" for q in questions},
                            definition=definition, beta=0.01, n_resamples=19, rng=0)
    np.testing.assert_array_equal(res.table["arbitrage"], arb)
    np.testing.assert_array_equal(res.table["frequentist"], freq)


# --------------------------------------------------------------------------- intervals
def _mean_violation(name: str, f: np.ndarray, **options):
    """The check ``name`` on the columns of ``f`` and the violations its statistic means."""
    if name == "negation_check":
        res = negation_check(f[:, 0], f[:, 1], **options)
        return res, res.arbitrage
    if name == "conditional_tuple_check":
        res = conditional_tuple_check(f[:, 0], f[:, 1], f[:, 2], **options)
        return res, res.absolute
    res = bayes_check(*f[:, :6].T, **options)
    return res, res.error


@given(st.sampled_from(["negation_check", "conditional_tuple_check", "bayes_check"]),
       rows_of(6, max_size=25), st.sampled_from([0.8, 0.95]), st.randoms(use_true_random=False))
@settings(max_examples=40)
def test_mean_violation_interval_is_the_bootstrap_t_of_the_sorted_rows(name, rows, level,
                                                                        rnd):
    """The interval of the mean violation is ``mean_violation`` of the sorted
    violations with the caller's generator, stopped at the largest value a row can take
    (1 for the absolute violation, 2/3 for the Bayes error): it holds the mean, is never
    below 0, and does not depend on the row order."""
    from coherence._probability._checks import mean_violation

    f = as_prob(rows)
    res, values = _mean_violation(name, f, confidence_level=level, n_resamples=49, rng=3)
    bound = {"conditional_tuple_check": 1.0, "bayes_check": 2.0 / 3.0}.get(name, np.inf)
    mean, want = mean_violation(np.sort(values)[::-1], 49, np.random.default_rng(3), level,
                                bound)
    assert res.statistic == mean == float(np.sort(values).mean())
    assert res.confidence_interval == want
    assert res.confidence_interval.confidence_level == level
    if np.all(np.isfinite(values)) and len(rows) >= 2:
        assert 0.0 <= res.confidence_interval.low <= res.statistic
        assert res.statistic <= res.confidence_interval.high
    order = list(range(len(rows)))
    rnd.shuffle(order)
    shuffled, _ = _mean_violation(name, f[order], confidence_level=level, n_resamples=49,
                                  rng=3)
    assert shuffled.confidence_interval == res.confidence_interval
