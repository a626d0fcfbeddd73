"""The Brier projection of conditional sets: the barrier method, its certificate and kernels.

Written apart from the solver: the objective, its gradient and Hessian by finite
differences, the guarantee of a forecast by looping over the worlds, the optimum bounded
by a grid of distributions on the worlds and by a direct search of the max-min.
"""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence._scoring._projection as projection
from coherence import CHECKERS
from coherence._probability._checks import possible_worlds
from coherence._scoring._projection import PROJECTION_GAP
from coherence._scoring._projection import brier_projection
from coherence._scoring._projection import conditional_projection
from coherence._simplex import quotient_hessian

CONDITIONAL = ("cond", "cond_cond", "expected_evidence")
#: forecasts as an LLM states them: round values, 0 and 1 among them
HEAPED = (0.0, 0.01, 0.05, 0.1, 0.2, 0.3, 0.5, 0.7, 0.8, 0.9, 0.95, 0.99, 1.0)


def _guarantee(worlds: np.ndarray, p: np.ndarray, q: np.ndarray) -> float:
    """The Brier reduction of moving p to q in its worst possible world, world by world."""
    gains = []
    for w in worlds:
        scored = w >= 0
        gains.append(float(np.sum((p[scored] - w[scored]) ** 2)
                           - np.sum((q[scored] - w[scored]) ** 2)))
    return min(gains)


def _dual(worlds: np.ndarray, p: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """sum_i (t_i - p_i m_i)^2 / m_i at each row of ``mu``: an upper bound of any guarantee."""
    t, m = mu @ (worlds == 1), mu @ (worlds >= 0)
    return np.asarray(np.where(m > 0, (t - p * m) ** 2 / np.where(m > 0, m, 1.0), 0.0)
                      .sum(axis=-1))


@pytest.mark.parametrize("checker", CONDITIONAL)
def test_gradient_and_hessian_match_finite_differences(checker):
    worlds = possible_worlds(checker)
    tw, rw = (worlds == 1).astype(float), (worlds >= 0).astype(float)
    rng = np.random.default_rng(1)
    p = rng.uniform(size=(1, worlds.shape[1]))
    mu = rng.dirichlet(np.ones(len(worlds)), size=1)
    t, m = mu @ tw, mu @ rw
    q = t / m
    h = 1e-6
    eye = np.eye(len(worlds))
    grad_fd = [(_dual(worlds, p[0], mu + h * e) - _dual(worlds, p[0], mu - h * e))[0] / (2 * h)
               for e in eye]
    # the gradient in mu_w is the Brier reduction of q = t / m in world w
    np.testing.assert_allclose(projection._gains(q, p, tw, rw)[0], grad_fd, atol=1e-8)
    np.testing.assert_allclose(grad_fd, [_guarantee(worlds[[w]], p[0], q[0])
                                         for w in range(len(worlds))], atol=1e-8)
    hess = quotient_hessian(q, 2.0 / m, tw, rw)[0]
    h = 1e-4
    hess_fd = np.array([[(_dual(worlds, p[0], mu + h * a + h * b)
                          - _dual(worlds, p[0], mu + h * a - h * b)
                          - _dual(worlds, p[0], mu - h * a + h * b)
                          + _dual(worlds, p[0], mu - h * a - h * b))[0] / (4 * h * h)
                         for b in eye] for a in eye])
    np.testing.assert_allclose(hess, hess_fd, atol=1e-5)


def test_a_set_whose_optimum_annuls_a_question_is_not_left_losing():
    # P = 0.1, Q = 0.01, P|Q = 0.95, P|not Q = 0.9: the optimum puts no mass on Q, and
    # SLSQP's q kept P|Q at 0.95 (a question no weighed world resolves), which lost
    # 0.26 in the world where P is false and Q true; the best guarantee is 0.3201
    worlds = possible_worlds("expected_evidence")
    p = np.array([0.1, 0.01, 0.95, 0.9])
    q = brier_projection(worlds, p[None, :])[0]
    assert _guarantee(worlds, p, q) == pytest.approx(0.3201, abs=1e-8)
    grid = np.random.default_rng(0).dirichlet(np.full(len(worlds), 0.5), size=100_000)
    assert _guarantee(worlds, p, q) <= _dual(worlds, p, grid).min() + 1e-12


@settings(max_examples=60, deadline=None)
@given(st.sampled_from(CONDITIONAL), st.lists(st.sampled_from(HEAPED), min_size=4,
                                                max_size=4))
def test_heaped_sets_get_their_certified_best_guarantee(checker, values):
    worlds = possible_worlds(checker)
    p = np.array(values[:worlds.shape[1]])
    q, gap = conditional_projection(worlds, p[None, :])
    value = _guarantee(worlds, p, q[0])
    assert np.all((q >= 0) & (q <= 1))
    assert gap[0] <= PROJECTION_GAP
    # never worse than leaving the forecasts as stated (a guarantee of 0), and no
    # distribution on the worlds bounds the best guarantee below q's
    assert value >= -1e-9
    grid = np.random.default_rng(1).dirichlet(np.full(len(worlds), 0.5), size=20_000)
    grid = np.vstack([grid, np.eye(len(worlds))])
    assert value <= _dual(worlds, p, grid).min() + 1e-12


@pytest.mark.parametrize("checker", CONDITIONAL)
def test_certified_gap_on_random_heaped_and_extreme_sets(checker):
    worlds = possible_worlds(checker)
    k = worlds.shape[1]
    rng = np.random.default_rng(2)
    f = np.vstack([rng.uniform(size=(300, k)), rng.choice(HEAPED, size=(300, k)),
                   rng.choice([0.0, 1e-12, 1e-6, 0.5, 1 - 1e-6, 1 - 1e-12, 1.0], size=(300, k))])
    q, gap = conditional_projection(worlds, f)
    assert gap.max() <= PROJECTION_GAP
    for r in range(0, len(f), 37):  # the certificate is what the worlds say
        upper = _dual(worlds, f[r], np.eye(len(worlds))).min()
        assert -1e-9 <= _guarantee(worlds, f[r], q[r]) <= upper + 1e-12


def test_chunks_give_the_rows_alone(monkeypatch):
    worlds = possible_worlds("cond_cond")
    f = np.random.default_rng(3).uniform(size=(10, 4))
    whole = conditional_projection(worlds, f)[0]
    monkeypatch.setattr(projection, "_CHUNK", 3)
    # BLAS may round a product of another shape otherwise: equal to the certificate
    np.testing.assert_allclose(conditional_projection(worlds, f)[0], whole, atol=1e-8)


def test_roles_of_the_conditional_checkers_are_conditional():
    # the barrier method is used for exactly these (the others project onto the hull)
    for checker in CHECKERS:
        conditional = bool((possible_worlds(checker) < 0).any())
        assert conditional == (checker in CONDITIONAL)
