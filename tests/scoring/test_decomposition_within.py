"""brier_decomposition's within-bin part: its jackknife standard error against a
brute-force jackknife, its interval's formula, and its interval on a forecaster who
separates the outcomes (where the percentile interval sat below the population's value)
and on a sharp one whose middle bins hold one or two forecasts."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import special
from scipy import stats

from coherence import brier_decomposition
from coherence._scoring._decomposition import _within_interval
from coherence._scoring._decomposition import decomposition_replicates
from coherence._scoring._decomposition import within_jackknife


@pytest.mark.parametrize("separated", [False, True])
def test_within_jackknife_leaves_each_cluster_out(separated):
    """Each jackknife value is the debiased part of the table without that cluster's
    forecasts (refitted from scratch), and the sample's is the Murphy remainder with
    n_k - 1 for n_k in each bin."""
    rng = np.random.default_rng(5)
    g = np.repeat(np.arange(25), rng.integers(1, 4, size=25))
    q = rng.uniform(size=g.size) ** 2
    y = ((q > 0.5) if separated else (rng.uniform(size=g.size) < q)).astype(float)
    debiased, loo = within_jackknife(q, y, g, 10)
    for c in range(25):
        keep = g != c
        assert loo[c] == pytest.approx(within_jackknife(q[keep], y[keep], g[keep], 10)[0],
                                       abs=1e-14)
    plug = decomposition_replicates(np.ones((1, 25)), q, q, y, g, 10)[0, 6]
    k = np.minimum((q * 10).astype(int), 9)
    n_k = np.bincount(k, minlength=10)
    u = np.zeros(10)
    for b in np.flatnonzero(n_k):
        d = q[k == b] - q[k == b].mean()
        u[b] = np.sum(d * d) - 2 * np.sum(d * (y[k == b] - y[k == b].mean()))
    assert plug == pytest.approx(u.sum() / q.size, abs=1e-14)
    want = np.sum(np.where(n_k > 1, u / np.maximum(n_k - 1, 1), 0.0) * n_k) / q.size
    assert debiased == pytest.approx(want, abs=1e-14)


def test_within_interval_is_the_hull_of_the_percentile_and_jackknife_t():
    loo = np.array([0.0, 0.1, 0.2, 0.3])  # se^2 = 3/4 x 0.05
    se = np.sqrt(0.75 * 0.05)
    half = stats.t.ppf(0.95, 3) * se
    low, high = _within_interval((-0.5, 0.2), 0.1, loo, 0.9)
    assert (low, high) == pytest.approx((min(-0.5, 0.1 - half), max(0.2, 0.1 + half)))
    low, high = _within_interval((-5.0, 5.0), 0.1, loo, 0.9)
    assert (low, high) == (-5.0, 5.0)  # inside the percentile interval
    # no spread among the jackknife values, or one cluster: the percentile interval
    assert _within_interval((-0.5, 0.2), 0.1, np.full(4, 0.1), 0.9) == (-0.5, 0.2)
    assert _within_interval((-0.5, 0.2), 0.1, np.array([0.1]), 0.9) == (-0.5, 0.2)


def test_separating_forecaster_gets_a_within_interval_that_reaches_the_spread():
    """Bins that each hold one outcome: the within-bin part is the forecasts' spread in
    their bins (1/1200 for uniform forecasts in bins of width 0.1). The plug-in and its
    resamples fall short of it by the bins' small counts; the interval now holds the
    debiased part and the population's value in most studies (the percentile interval
    alone held it in 6 of 30 here)."""
    gen = np.random.default_rng(11)
    held = 0
    for _ in range(30):
        q = gen.uniform(size=50)
        res = brier_decomposition({"question": np.arange(50), "probability": q,
                                   "outcome": (q > 0.5).astype(float)},
                                  n_resamples=199, rng=gen)
        row = res.table.set_index("component").loc["within_bin"]
        held += row["ci_low"] <= 1 / 1200 <= row["ci_high"]
        debiased = within_jackknife(q, (q > 0.5).astype(float), np.arange(50), 10)[0]
        assert row["ci_low"] <= debiased <= row["ci_high"]
    assert held >= 25


def test_sharp_forecaster_with_sparse_middle_bins_is_covered():
    """Beta(0.2, 0.2) forecasts, calibrated, 50 of them: the middle bins hold one or two
    forecasts each. The within-bin part's population value is minus the forecasts'
    variance within their bins; the interval held it in 0.807 of 400 studies with the
    bootstrap-t, and holds it in most of these 40 with the jackknife."""
    gen = np.random.default_rng(4)
    edges = np.linspace(0.0, 1.0, 11)

    def moment(j):  # E[q^j; q in each bin] of Beta(0.2, 0.2), from the incomplete beta
        cdf = stats.beta(0.2 + j, 0.2).cdf(edges)
        return np.exp(special.betaln(0.2 + j, 0.2) - special.betaln(0.2, 0.2)) * np.diff(cdf)

    mass, first, second = moment(0), moment(1), moment(2)
    truth = -float(np.sum(second - first**2 / mass))  # calibrated: -E Var(q | bin)
    held = 0
    for _ in range(40):
        q = gen.beta(0.2, 0.2, size=50)
        y = (gen.uniform(size=50) < q).astype(float)
        res = brier_decomposition({"question": np.arange(50), "probability": q,
                                   "outcome": y}, n_resamples=199, rng=gen)
        row = res.table.set_index("component").loc["within_bin"]
        held += row["ci_low"] <= truth <= row["ci_high"]
    assert held >= 35
