"""The fast subset of benchmarks/validate_brier_decomposition.py: a few studies of a
cell run, and the designs' population components are what they should be."""

from __future__ import annotations

import pytest

from benchmarks import validate_brier_decomposition as vb


def test_separating_designs_have_resolution_equal_to_uncertainty():
    """A forecaster whose bins each hold one outcome: the population's resolution is its
    uncertainty (1/4 with y = 1[p > 0.5], 0.7 x 0.3 with y = 1[p > 0.7])."""
    want = {0: 0.25, 1: 0.21}
    for j, value in want.items():
        truth = vb.population(vb.EXTRA[j])
        assert truth["resolution"] == pytest.approx(value, abs=1e-6)
        assert truth["uncertainty"] == pytest.approx(value, abs=1e-6)


def test_a_cell_runs_and_covers_the_separated_resolution():
    """Five studies of the separating design at 50 forecasts: every component has a
    coverage record, and the resolution's intervals hold the population's 1/4 (before
    the shares' part of the standard error they were a point above the estimate), and
    the within-bin part's its spread within the bins (the percentile interval alone
    held it in 3 of these 5)."""
    row = vb.cell(vb.EXTRA[0], 50, reps=5, resamples=99, seed=3)
    assert set(row["coverage"]) == {*vb.COMPONENTS, "reliability_ce"}
    assert row["coverage"]["resolution"]["k"] == 5
    assert row["coverage"]["within_bin"]["k"] >= 4
