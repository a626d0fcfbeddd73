"""The batched arbitrage solver (a log-barrier interior-point method over all tuples at
once) against the per-tuple SLSQP solver, the closed forms and brute force, and the
rule that sends a tuple it does not certify to SLSQP."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence._probability._arbitrage as solver
from coherence import CHECKERS
from coherence import arbitrage_violation
from coherence import consistency_check
from coherence._probability._arbitrage import ACCEPT_GAP
from coherence._probability._arbitrage import RELATIVE_GAP
from coherence._probability._arbitrage import barrier_arbitrage
from coherence._probability._arbitrage import dual_arbitrage
from coherence._probability._arbitrage import solve_arbitrage
from coherence._probability._checks import _SPECS
from tests._reference_checks import brute_force_bounds

SOLVED = [n for n in CHECKERS if n not in ("negation", "paraphrase", "consequence", "cond")]
#: the closed forms of arbitrage_violation, written out here: a Bhattacharyya distance
#: -2 ln(sqrt(ab) + sqrt((1 - a)(1 - b))) of two forecasts of one event
CLOSED = {
    "negation": lambda f: (f[:, 0], 1 - f[:, 1]),
    "paraphrase": lambda f: (f[:, 0], f[:, 1]),
    "cond": lambda f: (f[:, 0] * f[:, 1], f[:, 2]),
}


def _bhattacharyya(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    return -2 * np.log(np.sqrt(a * b) + np.sqrt((1 - a) * (1 - b)))


def _tuples(name: str, n: int, seed: int, kind: str = "uniform") -> np.ndarray:
    rng = np.random.default_rng(seed)
    k = len(CHECKERS[name])
    if kind == "heaped":  # LLM-like: a few round numbers, extremes included
        return rng.choice([0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99],
                          size=(n, k))
    return rng.uniform(0.002, 0.998, size=(n, k))


@pytest.mark.parametrize("name", list(CLOSED))
def test_barrier_equals_the_closed_forms(name):
    """Checkers with a closed form: the batched solver's value is the formula's."""
    f = _tuples(name, 60, 1)
    value, gap = barrier_arbitrage(f, _SPECS[name].world_matrix("paper"))
    closed = _bhattacharyya(*CLOSED[name](f))
    assert np.all(gap >= 0.0)
    np.testing.assert_allclose(value, closed, rtol=0, atol=1e-7)
    assert np.all(value <= closed + 1e-12)  # a guaranteed profit: never above the optimum
    assert np.all(closed <= value + gap + 1e-12)


@pytest.mark.parametrize("kind", ["uniform", "heaped"])
@pytest.mark.parametrize("definition", ["paper", "code"])
@pytest.mark.parametrize("name", SOLVED)
def test_barrier_and_slsqp_bracket_one_optimum(name, definition, kind):
    """Each solver returns a lower bound and its gap to an upper bound: the two brackets
    overlap, and where the batched one is certified the values agree to ACCEPT_GAP."""
    f = _tuples(name, 40, 2, kind)
    worlds = _SPECS[name].world_matrix(definition)
    value, gap = barrier_arbitrage(f, worlds)
    for row, v, g in zip(f, value, gap, strict=True):
        ref, ref_gap = dual_arbitrage(row, worlds)
        assert v <= ref + ref_gap + 1e-12
        assert ref <= v + g + 1e-12
        if g <= ACCEPT_GAP * max(1.0, v + g):
            assert abs(v - ref) <= 2 * ACCEPT_GAP * max(1.0, ref) + ref_gap
    certified = gap <= ACCEPT_GAP * np.maximum(1.0, value + gap)
    assert certified.mean() >= 0.8  # the fast path takes most tuples


@pytest.mark.parametrize("name", SOLVED)
def test_solved_between_brute_force_bounds(name):
    """The dispatcher's value against the brute-force grid of the reference module."""
    f = _tuples(name, 3, 3)
    value, gap = solve_arbitrage(f, _SPECS[name].world_matrix("paper"))
    for row, v, g in zip(f, value, gap, strict=True):
        low, high = brute_force_bounds(row, list(_SPECS[name].worlds), per_axis=11, zooms=30)
        assert low <= v + g + 1e-12
        assert v <= high + 1e-12


@settings(max_examples=60, deadline=None)
@given(name=st.sampled_from(SOLVED),
       rows=st.lists(st.lists(st.floats(1e-6, 1 - 1e-6), min_size=4, max_size=4),
                     min_size=1, max_size=5))
def test_solve_certifies_every_row(name, rows):
    """Any forecasts inside (0, 1): every row's gap is certified small, against SLSQP's
    bracket, and a positive value is certified to RELATIVE_GAP of itself."""
    k = len(CHECKERS[name])
    f = np.array(rows)[:, :k]
    worlds = _SPECS[name].world_matrix("paper")
    value, gap = solve_arbitrage(f, worlds)
    assert np.all(value >= 0.0) and np.all(gap >= 0.0)
    for row, v, g in zip(f, value, gap, strict=True):
        ref, ref_gap = dual_arbitrage(row, worlds)
        assert v <= ref + ref_gap + 1e-12 and ref <= v + g + 1e-12
        assert g <= max(ref_gap, ACCEPT_GAP * max(1.0, v + g)) + 1e-15


def test_uncertified_rows_go_to_slsqp(monkeypatch):
    """A batched answer with a wide gap (here: made wide) is replaced by SLSQP's, keeping
    the tighter bound of each side; a certified one is kept without calling SLSQP."""
    worlds = _SPECS["and"].world_matrix("paper")
    f = _tuples("and", 6, 4)
    true_value, _ = barrier_arbitrage(f, worlds)
    calls = []

    def loose(x: np.ndarray, w: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        v, g = true_value.copy(), np.zeros(len(x))
        v[:3] *= 0.5        # a weaker lower bound and a gap up to the optimum + 1
        g[:3] = v[:3] + 1.0
        return v, g

    def counted(row: np.ndarray, w: np.ndarray) -> tuple[float, float]:
        calls.append(row)
        return dual_arbitrage(row, w)

    monkeypatch.setattr(solver, "barrier_arbitrage", loose)
    monkeypatch.setattr(solver, "dual_arbitrage", counted)
    value, gap = solve_arbitrage(f, worlds)
    assert len(calls) == 3
    np.testing.assert_array_equal(np.array(calls), f[:3])
    ref = np.array([dual_arbitrage(row, worlds) for row in f[:3]])
    np.testing.assert_array_equal(value[:3], np.maximum(ref[:, 0], 0.5 * true_value[:3]))
    assert np.all(gap[:3] <= ref[:, 1] + 1e-15)
    np.testing.assert_array_equal(value[3:], true_value[3:])


def test_certainties_and_tiny_violations_go_to_slsqp():
    """Forecasts of exactly 0 or 1 (worlds ruled out) and a tuple just off coherence (its
    arbitrage 1.4e-11, which the barrier's absolute precision would call 0) are solved by
    SLSQP: the values are its own."""
    worlds = _SPECS["and_or"].world_matrix("paper")
    f = np.array([[0.5, 0.5, 0.25, 0.75 + 5e-6], [1.0, 0.3, 0.3, 1.0], [0.6, 0.5, 0.2, 0.4]])
    value, gap = solve_arbitrage(f, worlds)
    tiny, tiny_gap = dual_arbitrage(f[0], worlds)
    assert value[0] == tiny > 0.0 and gap[0] <= tiny_gap  # the tighter upper bound kept
    assert gap[0] <= RELATIVE_GAP * value[0]
    assert value[1] == dual_arbitrage(f[1], worlds)[0]
    assert value[2] > 0.1 and gap[2] <= ACCEPT_GAP * max(1.0, value[2])
    np.testing.assert_array_equal(arbitrage_violation("and_or", f), value)


def test_certified_bracket_holds_with_extreme_forecasts():
    """P(R | P and Q) = 1e-300 and P(P and Q and R) = 0.5 with P = 1e-4: the arbitrage is
    ln 2 (q_R|PQ q_PQR >= 1e-300 with both tiny guarantees it in every world). The
    reported value is a guaranteed profit and value + gap an upper bound, so the two
    bracket ln 2. SLSQP's polished mu could drift off the simplex (here, with some
    numbers of BLAS threads, summing to 1 - 2.2e-7), and its upper bound, the dual
    objective at mu, then fell 1.4e-7 below the optimum."""
    f = np.array([[1e-4, 1e-8, 1e-300, 0.5], [0.3, 0.4, 0.5, 0.2]])
    res = consistency_check(pd.DataFrame(f, columns=list(CHECKERS["cond_cond"])),
                            "cond_cond", n_resamples=99, rng=0)
    value, gap = res.table["arbitrage"].iloc[0], res.table["arbitrage_gap"].iloc[0]
    assert value <= np.log(2) + 1e-15
    assert value + gap >= np.log(2) - 1e-12
    worlds = _SPECS["cond_cond"].world_matrix("paper")
    ref, ref_gap = dual_arbitrage(f[0], worlds)
    assert ref <= np.log(2) <= ref + ref_gap + 1e-12


@pytest.mark.parametrize("name", SOLVED)
def test_extreme_forecasts_never_certified_worse_than_slsqp(name):
    """Forecasts drawn from 1e-300 to 1 - 1e-16 (the extremes a parser can return), where
    neither solver always certifies: each row's gap is at most SLSQP's own (or within
    ACCEPT_GAP, where the batched solution was kept), and the bracket holds SLSQP's."""
    rng = np.random.default_rng(5)
    values = np.array([1e-300, 5e-324, 1e-16, 1e-12, 1e-8, 1e-4, 0.01, 0.3, 0.5, 0.7, 0.99,
                       1 - 1e-4, 1 - 1e-8, 1 - 1e-12, 1 - 1e-16, np.nextafter(1.0, 0.0)])
    f = rng.choice(values, size=(40, len(CHECKERS[name])))
    worlds = _SPECS[name].world_matrix("paper")
    value, gap = solve_arbitrage(f, worlds)
    for row, v, g in zip(f, value, gap, strict=True):
        ref, ref_gap = dual_arbitrage(row, worlds)
        assert v >= 0.0 and g >= 0.0
        assert g <= max(ref_gap, ACCEPT_GAP * max(1.0, v + g)) + 1e-15
        assert v <= ref + ref_gap + 1e-9 and ref <= v + g + 1e-9


def test_a_singular_barrier_system_falls_back_to_the_pseudo_inverse(monkeypatch):
    """numpy's batched solve refuses a whole batch if one system is singular: the
    barrier's step is then taken by the pseudo-inverse, with the same answer: the two
    certified brackets [value, value + gap] overlap. The two paths may stop at different
    points inside ACCEPT_GAP (on an AMD EPYC the batched path kept a row at gap 1.9e-9
    that the pseudo-inverse took to 1e-16), so the values agree to the larger gap, not
    to a fixed 1e-9."""
    f = _tuples("but", 8, 7)
    worlds = _SPECS["but"].world_matrix("paper")
    expected, expected_gap = barrier_arbitrage(f, worlds)

    def singular(*args: object, **kwargs: object) -> None:
        raise np.linalg.LinAlgError("Singular matrix")

    monkeypatch.setattr(np.linalg, "solve", singular)
    value, gap = barrier_arbitrage(f, worlds)
    assert np.all(value <= expected + expected_gap + 1e-12)
    assert np.all(expected <= value + gap + 1e-12)
    assert np.all(np.abs(value - expected) <= np.maximum(gap, expected_gap) + 1e-12)
    assert np.all(gap <= ACCEPT_GAP * np.maximum(1.0, value + gap))
