"""The simple competitor of ci_test (benchmarks/citest_competitor.py): its statistic
against loops over strata, actions and contexts, its permutations kept within strata,
its size on a null and its power against a leak."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from benchmarks.citest_competitor import _g_statistic
from benchmarks.citest_competitor import _statistic
from benchmarks.citest_competitor import _strata
from benchmarks.citest_competitor import strata_permutation_pvalue


def _by_loops(ones: list[int], counts: list[list[int]]) -> float:
    """sum_j (n1_j - r n_j)^2 / (r (1 - r) n_j) over the actions someone chose."""
    total = sum(sum(row) for row in counts)
    in_ones = sum(sum(row) for row, y in zip(counts, ones, strict=True) if y)
    r = in_ones / total
    out = 0.0
    for j in range(len(counts[0])):
        n_j = sum(row[j] for row in counts)
        n1_j = sum(row[j] for row, y in zip(counts, ones, strict=True) if y)
        if n_j and 0 < r < 1:
            out += (n1_j - r * n_j) ** 2 / (r * (1 - r) * n_j)
    return out


def _g_by_loops(ones: list[int], counts: list[list[int]]) -> float:
    """2 sum over actions and outcomes of n log(n N / (n_action n_outcome))."""
    total = sum(sum(row) for row in counts)
    out = 0.0
    for j in range(len(counts[0])):
        n_j = sum(row[j] for row in counts)
        for y in (0, 1):
            n_jy = sum(row[j] for row, o in zip(counts, ones, strict=True) if o == y)
            n_y = sum(sum(row) for row, o in zip(counts, ones, strict=True) if o == y)
            if n_jy:
                out += 2 * n_jy * np.log(n_jy * total / (n_j * n_y))
    return out


@pytest.mark.parametrize(("statistic", "by_loops"), [(_statistic, _by_loops),
                                                     (_g_statistic, _g_by_loops)])
@given(st.lists(st.tuples(st.integers(0, 1), st.lists(st.integers(0, 5), min_size=3,
                                                      max_size=3)), min_size=2, max_size=8))
def test_statistics_against_loops(statistic, by_loops, rows):
    """The per-action chi-square and the likelihood-ratio G of a stratum, by loops."""
    ones = [y for y, _ in rows]
    counts = [c for _, c in rows]
    if sum(map(sum, counts)) == 0:
        return
    got = statistic(np.array([ones], dtype=float), np.array(counts, dtype=float))[0]
    assert got == pytest.approx(by_loops(ones, counts), rel=1e-9, abs=1e-9)


def test_strata_are_grid_values_or_quantile_bins_split_by_evidence():
    grid = np.array([0.1, 0.1, 0.2, 0.3, 0.2])
    assert list(_strata(grid, None, 20)) == [0, 0, 1, 2, 1]
    assert list(_strata(grid, np.array([0, 1, 0, 0, 0]), 20)) == [0, 1, 2, 3, 2]
    cont = np.random.default_rng(0).uniform(size=400)
    codes = _strata(cont, None, 20)
    assert np.unique(codes).size == 20 and np.bincount(codes).min() == 20


def _study(n_ctx: int, leak: float, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    q = rng.choice(np.linspace(0.1, 0.9, 5), size=n_ctx)
    y = rng.uniform(size=n_ctx) < q
    ctx = np.repeat(np.arange(n_ctx), 4)
    p_yes = np.clip(q[ctx] + leak * (2 * y[ctx] - 1), 0, 1)
    act = np.where(rng.uniform(size=ctx.size) < p_yes, "yes", "no")
    return pd.DataFrame({"context": ctx, "belief": q[ctx], "action": act,
                         "outcome": y[ctx].astype(int)})


@settings(deadline=None, max_examples=5)
@given(st.integers(0, 10_000))
def test_permutations_keep_the_strata(seed):
    """A study where every stratum has contexts of one outcome only: no permutation
    can move an outcome, every draw equals the observed statistic, p = 1."""
    data = _study(40, 0.3, seed)
    data["belief"] = data["outcome"] * 0.5 + 0.2  # the belief says the outcome
    assert strata_permutation_pvalue(data, n_resamples=19, rng=seed) == 1.0


def test_size_on_a_null_and_power_against_a_leak():
    null = [strata_permutation_pvalue(_study(60, 0.0, s), n_resamples=99, rng=s)
            for s in range(40)]
    assert np.mean(np.asarray(null) <= 0.05) <= 0.15 and np.mean(null) > 0.35
    leak = [strata_permutation_pvalue(_study(60, 0.2, s), n_resamples=99, rng=s)
            for s in range(20)]
    assert np.mean(np.asarray(leak) <= 0.05) >= 0.8


@settings(deadline=None, max_examples=10)
@given(st.integers(0, 10_000))
def test_random_ties_rank_the_data_among_its_ties(seed):
    """break_ties=True gives one of the ranks the counting rule's p-value bounds: never
    above it, equal to it where nothing ties, and 1 where every draw ties."""
    data = _study(12, 0.1, seed)
    counted = strata_permutation_pvalue(data, n_resamples=19, rng=seed)
    broken = strata_permutation_pvalue(data, n_resamples=19, rng=seed, break_ties=True)
    assert 1 / 20 <= broken <= counted and round(broken * 20, 9) == round(broken * 20)
    data["belief"] = data["outcome"] * 0.5 + 0.2  # nothing can move: every draw ties
    assert strata_permutation_pvalue(data, n_resamples=19, rng=seed, break_ties=True) == 1.0


def test_random_ties_lift_the_competitor_on_a_small_null():
    """Few contexts a stratum: counting every tie makes the competitor conservative."""
    counted = [strata_permutation_pvalue(_study(16, 0.0, s), n_resamples=39, rng=s)
               for s in range(60)]
    broken = [strata_permutation_pvalue(_study(16, 0.0, s), n_resamples=39, rng=s,
                                        break_ties=True) for s in range(60)]
    assert np.mean(broken) < np.mean(counted)
    assert np.mean(np.asarray(broken) <= 0.2) > np.mean(np.asarray(counted) <= 0.2)


def test_the_matrix_records_the_counting_rule_on_the_same_studies(monkeypatch):
    """validate_citest's size and power parts keep the counting rule's rejections (every
    tie counted, before ci_test broke them at random) beside ci_test's, and show them."""
    from benchmarks import validate_citest as matrix

    monkeypatch.setattr(matrix, "_SINK", [])
    size = matrix.size_section(4, 19, None, ["small study: 10 x 3"])
    power = matrix.power_section(3, 19, None, ["small study: 30 x 5, 0.05 grid"])
    assert [r["design"] for r in size] == ["small study: 10 x 3, 0.05 grid"]
    assert len(power) == 2 and all(r["power_counting_ties"]["n"] == 3 for r in power)
    assert size[0]["size_counting_ties"]["n"] + size[0]["n_nan_pvalue"] == 4
    for row, key, counted in [(size[0], "size", "size_counting_ties"),
                              *((r, "power", "power_counting_ties") for r in power)]:
        assert row[counted]["rate"] <= row[key]["rate"]  # the random rule is never above
    table = matrix.tables(
        {"environment": {"commit": "x", "date": "d", "machine": {"cpus": 2},
                         "versions": {"numpy": "2", "numba": "0"}},
         "settings": {"n_resamples": 19}, "size": size, "power": power})
    assert "every tie counted (before)" in table


def test_the_matrix_runs_both_tests_on_the_same_studies(monkeypatch):
    """validate_citest's competitor part, two studies a cell on the small-study designs:
    a row per null and per alternative, each with both rejection rates."""
    from benchmarks import validate_citest as matrix

    monkeypatch.setattr(matrix, "_SINK", [])
    rows = matrix.competitor_section(2, 2, 9, None, ["small study: 30 x 5, continuous"])
    assert [r["kind"] for r in rows] == ["size", "power", "power"]
    assert all(r["ci_test"]["n"] == r["competitor"]["n"] == r["competitor_g"]["n"] == 2
               for r in rows)
    assert rows[0]["exact_cmi"] == 0.0 and rows[1]["exact_cmi"] > 0.05
    assert "### Against the simplest valid competitor" in matrix.tables(
        {"environment": {"commit": "x", "date": "d", "machine": {"cpus": 2},
                         "versions": {"numpy": "2", "numba": "0"}},
         "settings": {"n_resamples": 9}, "competitor": rows})


def test_the_matrix_measures_the_papers_rule(monkeypatch):
    """validate_citest's paper_rule part: one row per design with the share of studies
    whose bootstrap interval excludes 0, and its table."""
    from benchmarks import validate_citest as matrix

    monkeypatch.setattr(matrix, "_SINK", [])
    monkeypatch.setattr(matrix, "PAPER_RULE_RESAMPLES", 19)
    rows = matrix.paper_rule_section(3, None, ["one row per context"])
    assert [r["design"] for r in rows] == ["one row per context: 1000 x 1, 0.01 grid"]
    assert rows[0]["rejection"]["n"] == 3 and rows[0]["n_resamples"] == 19
    table = matrix.tables(
        {"environment": {"commit": "x", "date": "d", "machine": {"cpus": 2},
                         "versions": {"numpy": "2", "numba": "0"}},
         "settings": {"n_resamples": 9}, "paper_rule": rows})
    assert "### The reference paper's rule on rational agents" in table
    assert "| one row per context: 1000 x 1, 0.01 grid | 3 |" in table


def test_leakage_matrix_runs_the_three_tests_on_the_same_studies(monkeypatch):
    """validate_leakage's competitor part, two studies a cell on the small study: a row
    per leak with the three rejection rates, and its table."""
    from benchmarks import validate_leakage as matrix

    small = matrix.COMPETITOR_DESIGNS["small study: 40 x 3, binary evidence"]
    monkeypatch.setattr(matrix, "COMPETITOR_DESIGNS", {"small": small})
    monkeypatch.setattr(matrix, "COMPETITOR_LEAKS", (0.0, 1.0))
    monkeypatch.setattr(matrix, "COMPETITOR_PERMUTATIONS", 9)
    rows = matrix.competitor_section(2, 1)
    assert [r["leak"] for r in rows] == [0.0, 1.0]
    assert all(r[key]["n"] == 2 for r in rows
               for key in ("leakage_test", "ci_test", "competitor"))
    table = "\n".join(matrix.competitor_table(rows))
    assert "### Against the simplest valid competitor" in table and "| small | 1.00 | 2 |" in table
