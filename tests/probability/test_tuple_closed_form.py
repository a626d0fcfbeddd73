"""The arbitrage violation of ``conditional_tuple_check`` in closed form, and the boundary of
``update_direction``'s ``eps``.

The arbitrage is the supremum over consistent (a', c') of the worst-world log-score profit;
P(A) and P(B|A) forecast the three worlds (ac, a(1-c), 1-a) and the conjunction forecasts
the first, so it reduces to the Bhattacharyya distance of ``a c`` and ``j``: the Cond
checker's closed form. These tests check it against the definition (a zoomed brute-force
grid and the maximiser written out), against ``arbitrage_violation('cond')`` on tuples with
0s and 1s, and on the values of the audit that found the earlier optimiser returning 0.
"""

from __future__ import annotations

import math

import numpy as np
import pytest
from hypothesis import example
from hypothesis import given
from hypothesis import strategies as st

from coherence import arbitrage_violation
from coherence import conditional_tuple_check
from coherence import update_direction

# per-row values read from one row (or rows of one violation): the interval's
# point-interval warning is asserted in test_axiom_interval_edges.py, not here
pytestmark = pytest.mark.filterwarnings(
    "ignore:.*is the point itself:coherence.SmallSampleWarning")


def _profits(a2: np.ndarray, c2: np.ndarray, a: float, c: float, j: float) -> np.ndarray:
    """The definition: log-score profits in the worlds A&B, A&~B, ~A of moving (a, c, j) to
    the consistent (a2, c2, a2 c2) (interior forecasts only)."""
    j2 = a2 * c2
    return np.stack([
        np.log(a2 / a) + np.log(c2 / c) + np.log(j2 / j),
        np.log(a2 / a) + np.log((1 - c2) / (1 - c)) + np.log((1 - j2) / (1 - j)),
        np.log((1 - a2) / (1 - a)) + np.log((1 - j2) / (1 - j)),
    ])


def _grid_arbitrage(a: float, c: float, j: float, size: int = 201, zooms: int = 12) -> float:
    """Brute force: the best worst-world profit on a grid of (a', c'), zoomed around the best
    point (a lower bound of the supremum that converges to it)."""
    lo_a, hi_a, lo_c, hi_c = 1e-6, 1 - 1e-6, 1e-6, 1 - 1e-6
    best = -np.inf
    for _ in range(zooms):
        ga, gc = np.linspace(lo_a, hi_a, size), np.linspace(lo_c, hi_c, size)
        A, C = np.meshgrid(ga, gc, indexing="ij")
        worst = _profits(A, C, a, c, j).min(axis=0)
        i, k = np.unravel_index(np.argmax(worst), worst.shape)
        best = max(best, float(worst[i, k]))
        da, dc = 3 * (hi_a - lo_a) / (size - 1), 3 * (hi_c - lo_c) / (size - 1)
        lo_a, hi_a = max(ga[i] - da, 1e-12), min(ga[i] + da, 1 - 1e-12)
        lo_c, hi_c = max(gc[k] - dc, 1e-12), min(gc[k] + dc, 1 - 1e-12)
    return best


def _maximiser(a: float, c: float, j: float) -> tuple[float, float]:
    """The consistent (a', c') attaining the closed form: P'(A and B) = x, the two worlds
    where the conjunction is false scaled alike."""
    p = a * c
    x = math.sqrt(p * j) / (math.sqrt(p * j) + math.sqrt((1 - p) * (1 - j)))
    a2 = x + a * (1 - c) * (1 - x) / (1 - p)
    return a2, x / a2


CASES = [(0.5, 0.9, 0.18), (0.9, 0.33, 0.43), (0.35, 0.76, 0.32), (0.46, 0.17, 0.41),
         (0.7, 0.4, 0.9), (0.5, 0.5, 0.25), (0.2, 0.3, 0.9), (0.99, 0.99, 0.01)]


@pytest.mark.parametrize(("a", "c", "j"), CASES)
def test_closed_form_is_the_brute_force_supremum(a, c, j):
    value = conditional_tuple_check([a], [c], [j]).arbitrage[0]
    grid = _grid_arbitrage(a, c, j)
    assert grid <= value + 1e-12  # no consistent move beats it
    assert value - grid < 1e-7  # and the grid gets there
    # attained (to rounding) at the maximiser written out
    a2, c2 = _maximiser(a, c, j)
    profits = _profits(np.array(a2), np.array(c2), a, c, j)
    assert float(profits.min()) == pytest.approx(value, abs=1e-12)


def test_certainties_of_the_audit():
    """P(A) = 0 or 1 made every optimiser start fail and the arbitrage came out 0; P(A and
    B) = 1 came out about 1e-4 nats low."""
    a, c, j = [0.0, 1.0, 1.0, 0.3, 0.5], [0.7, 0.4, 0.8, 0.5, 0.5], [0.9, 0.3, 0.3, 0.2, 1.0]
    res = conditional_tuple_check(a, c, j)
    expected = [math.log(1 / 0.1),  # P(A) = 0: only the bet against the conjunction, ln 1/0.1
                -2 * math.log(math.sqrt(0.4 * 0.3) + math.sqrt(0.6 * 0.7)),
                -2 * math.log(math.sqrt(0.8 * 0.3) + math.sqrt(0.2 * 0.7)),
                -2 * math.log(math.sqrt(0.15 * 0.2) + math.sqrt(0.85 * 0.8)),
                -2 * math.log(math.sqrt(0.25))]  # j = 1: only the world A&B counts for j
    np.testing.assert_allclose(res.arbitrage, expected, rtol=1e-13, atol=0)
    np.testing.assert_allclose(res.arbitrage[:4], [2.302585, 0.011062, 0.292218, 0.004352],
                               atol=1e-6)
    assert res.share_arbitrage_above == pytest.approx(0.8)
    # the limit of the brute force as j -> 1 (the definition needs j < 1)
    near = _grid_arbitrage(0.5, 0.5, 1 - 1e-13)
    assert near <= res.arbitrage[4] and res.arbitrage[4] - near < 2e-6


def test_contradicted_certainty_is_infinite():
    res = conditional_tuple_check([1.0, 0.0, 1.0, 0.0, 1.0], [1.0, 0.3, 1.0, 0.3, 0.0],
                                  [0.0, 1.0, 1.0, 0.0, 0.0])
    assert res.arbitrage.tolist()[:2] == [np.inf, np.inf]  # a c = 1, j = 0; a c = 0, j = 1
    assert res.arbitrage.tolist()[2:] == [0.0, 0.0, 0.0]  # consistent certainties
    assert math.isfinite(res.mean_absolute)


probability = st.one_of(st.sampled_from([0.0, 1.0, 0.5]),
                        st.floats(0.0, 1.0, allow_nan=False, allow_subnormal=False))


@given(st.lists(st.tuples(probability, probability, probability), min_size=1, max_size=8))
@example([(0.0, 0.7, 0.9), (1.0, 0.4, 0.3), (1.0, 0.8, 0.3), (0.5, 0.5, 1.0)])
@example([(1.0, 1.0, 0.0), (0.0, 0.3, 1.0), (0.3, 0.2, 0.06), (0.5, 0.5, 0.25 + 1e-7)])
def test_property_agrees_with_the_cond_checker(rows):
    f = np.asarray(rows, dtype=float)
    a, c, j = f.T
    res = conditional_tuple_check(a, c, j)
    np.testing.assert_array_equal(res.arbitrage, arbitrage_violation("cond", f))
    assert np.all(res.arbitrage >= 0)
    exact = j == a * c
    assert np.all(res.arbitrage[exact] == 0.0)
    # positive whenever j != a c (a difference below ~1e-8, a violation below ~1e-16 nats,
    # rounds to 0)
    visible = np.abs(j - a * c) > 1e-7
    assert np.all(res.arbitrage[visible] > 0.0)


@given(st.floats(0.01, 0.99), st.floats(0.01, 0.99), st.floats(0.01, 0.99),
       st.lists(st.tuples(st.floats(1e-4, 1 - 1e-4), st.floats(1e-4, 1 - 1e-4)),
                min_size=1, max_size=20))
def test_property_no_consistent_move_beats_it(a, c, j, moves):
    """An upper bound: no consistent (a', c') guarantees more; a lower bound: the maximiser
    written out guarantees it."""
    value = conditional_tuple_check([a], [c], [j]).arbitrage[0]
    a2, c2 = np.array(moves).T
    assert np.all(_profits(a2, c2, a, c, j).min(axis=0) <= value + 1e-12)
    best = _maximiser(a, c, j)
    attained = float(_profits(np.array(best[0]), np.array(best[1]), a, c, j).min())
    assert attained == pytest.approx(value, abs=1e-9)


# --------------------------------------------------------------------------- update_direction
def test_update_direction_eps_boundary():
    """Less than eps is no movement, more than eps a move; exactly eps (also as rounded
    hundredths, 0.52 - 0.50 != 0.02) is neither: partial."""
    res = update_direction([0.5, 0.5, 0.5, 0.5, 0.5], [0.52, 0.5199, 0.5201, 0.52, 0.53],
                           [0.48, 0.4801, 0.4799, 0.5, 0.47], eps=0.02)
    assert res.direction.tolist() == ["partial", "no_update", "monotonic", "partial",
                                      "monotonic"]
    # eps = 0: every movement is a move, and a standstill (0.1 + 0.2 against 0.3 too) is
    # no movement; it was 'partial', as a movement of exactly eps, leaving no_update empty
    zero = update_direction([0.5, 0.5, 0.5, 0.1 + 0.2, 0.5], [0.5, 0.6, 0.5, 0.3, 0.5001],
                            [0.5, 0.4, 0.4, 0.3, 0.5], eps=0.0)
    assert zero.direction.tolist() == ["no_update", "monotonic", "partial", "no_update",
                                       "partial"]
    assert zero.no_update == 0.4 and zero.partial == 0.4
    # the parameter's documentation says the same (it once said "at most eps")
    doc = " ".join((update_direction.__doc__ or "").split())
    assert "Movements of less than ``eps`` count as no movement" in doc
    assert "only a standstill (both conditionals equal to P(A), within rounding) as " \
        "``no_update``" in doc
