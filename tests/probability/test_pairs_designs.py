"""The independent generator of conditional-forecasting studies (benchmarks/pairs_designs.py):
its nulls are exact, by exact enumeration of each pair's four outcomes (a, b) from the true
joint it returns, and strong relatedness keeps informative pairs (issue 14)."""

from __future__ import annotations

import numpy as np
import pytest

from benchmarks.pairs_designs import PairDesign
from benchmarks.pairs_designs import draw_study
from benchmarks.pairs_designs import null_designs


def _enumerate(s: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """E[Delta | b = 1], E[Delta | b = 0] and E Delta per pair, summing the Brier
    improvement over a in {0, 1} with the true P(A = 1 | b) (not the generator's formula)."""
    p = s["p_a"]
    out = []
    for q, alpha in ((s["p_a_given_b1"], s["p_a_true_given_b1"]),
                     (s["p_a_given_b0"], s["p_a_true_given_b0"])):
        e = sum(np.where(a == 1, alpha, 1 - alpha) * ((p - a) ** 2 - (q - a) ** 2)
                for a in (0, 1))
        out.append(e)
    pi = s["p_b_true"]
    return out[0], out[1], pi * out[0] + (1 - pi) * out[1]


@pytest.mark.parametrize("design", null_designs(), ids=lambda d: d.name)
def test_null_designs_are_exact_by_enumeration(design):
    rng = np.random.default_rng(7)
    for n in (14, 100):
        for _ in range(20):
            s = draw_study(design, n, rng)
            for key in ("p_a", "p_a_given_b1", "p_a_given_b0"):
                assert np.all((s[key] >= 0) & (s[key] <= 1)), key
            e1, e0, e = _enumerate(s)
            np.testing.assert_allclose(e, 0.0, atol=1e-13)
            np.testing.assert_allclose(s["expected"], e, atol=1e-13)
            given_b = np.where(s["b_outcome"] == 1, e1, e0)
            np.testing.assert_allclose(s["expected_given_b"], given_b, atol=1e-13)
            if design.forecaster == "midpoint":
                np.testing.assert_allclose(e1, 0.0, atol=1e-13)
                np.testing.assert_allclose(e0, 0.0, atol=1e-13)


def test_overshoot_fallback_is_exact_given_b_and_not_all_given_b_otherwise():
    """Overshoot pairs that fell back have E[Delta | b] = 0 on both sides; the others are
    exact only on average over b (so the check above is not vacuous for them)."""
    s = draw_study(PairDesign("rare", "balanced", "strong", "overshoot"), 2000,
                   np.random.default_rng(3))
    e1, e0, e = _enumerate(s)
    np.testing.assert_allclose(e, 0.0, atol=1e-13)
    p = s["p_a"]
    m1, m0 = 2 * s["p_a_true_given_b1"] - p, 2 * s["p_a_true_given_b0"] - p
    side1 = np.isclose(s["p_a_given_b1"], m1, rtol=0, atol=1e-15) | (s["p_a_given_b1"] == p)
    side0 = np.isclose(s["p_a_given_b0"], m0, rtol=0, atol=1e-15) | (s["p_a_given_b0"] == p)
    fell = side1 & side0
    assert 0.2 < fell.mean() < 1.0
    np.testing.assert_allclose(e1[fell], 0.0, atol=1e-13)
    np.testing.assert_allclose(e0[fell], 0.0, atol=1e-13)
    assert np.max(np.abs(e1[~fell])) > 1e-3  # overshoot proper: not zero given b


@pytest.mark.parametrize("a_rate,b_rate", [("rare", "balanced"), ("rare", "rare"),
                                           ("balanced", "balanced")])
@pytest.mark.parametrize("forecaster", ["midpoint", "overshoot"])
def test_strong_nulls_keep_informative_pairs(a_rate, b_rate, forecaster):
    """Before the per-side fallback, 44-88% of strong-relatedness midpoint studies of 14
    pairs had no informative pair (docs/validation_pairs.md); now the median study of 30
    pairs has at least 3, and at most 10% of studies of 14 have none."""
    design = PairDesign(a_rate, b_rate, "strong", forecaster)
    rng = np.random.default_rng(11)

    def informative(n: int) -> np.ndarray:
        counts = []
        for _ in range(200):
            s = draw_study(design, n, rng)
            q = np.where(s["b_outcome"] == 1, s["p_a_given_b1"], s["p_a_given_b0"])
            counts.append(np.count_nonzero(q != s["p_a"]))
        return np.array(counts)

    assert np.mean(informative(14) == 0) <= 0.10
    assert np.median(informative(30)) >= 3


def test_rare_a_stays_rare():
    """The designs stay like the field's files: rare A resolves YES about 1 time in 33
    (1 of 45 in the study's file), whatever the forecaster states."""
    rng = np.random.default_rng(5)
    a = np.concatenate([draw_study(PairDesign("rare", b, rel, "midpoint"), 100, rng)
                        ["a_outcome"] for b in ("balanced", "rare")
                        for rel in ("strong", "weak", "none") for _ in range(20)])
    assert 0.015 < a.mean() < 0.045
