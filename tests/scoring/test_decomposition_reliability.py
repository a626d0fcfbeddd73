"""brier_decomposition's reliability: the bootstrap-t pivots of the debiased reliability
against loops over bins and clusters (and their standard error against the derivative
of the plug-in in each cluster's weight), and its interval, the hull of
calibration_error's and that bootstrap-t interval, on a forecaster who separates the
outcomes (where calibration_error's standard error is 0 and its basic interval fell
short)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from coherence import brier_decomposition
from coherence import calibration_error
from coherence._resampling import cluster_draw_chunks
from coherence._resampling import cluster_weights
from coherence._resampling import studentized_interval
from coherence._scoring._decomposition import decomposition_replicates
from coherence._scoring._decomposition import reliability_pivots
from tests.scoring._helpers import DECOMPOSITION_TABLES
from tests.scoring._helpers import cluster_codes


def _reliability_by_loops(q, y, g, n_bins):
    """(plug-in, debiased, the quadratic part of the variance) by loops over bins and
    the clusters in each: v_k = C_k/(C_k - 1) sum_c (S_c - m_c f_k)^2 / n_k^2."""
    n = len(q)
    k = [min(int(v * n_bins), n_bins - 1) for v in q]
    plug = debiased = quad = 0.0
    for b in sorted(set(k)):
        rows = [i for i in range(n) if k[i] == b]
        f = sum(y[i] for i in rows) / len(rows)
        d = f - sum(q[i] for i in rows) / len(rows)
        groups = sorted({g[i] for i in rows})
        dev = [sum(y[i] - f for i in rows if g[i] == c) for c in groups]
        v = (len(groups) / (len(groups) - 1) * sum(e * e for e in dev) / len(rows) ** 2
             if len(groups) > 1 else 0.0)
        plug += len(rows) / n * d * d
        debiased += len(rows) / n * (d * d - v)
        quad += (len(rows) / n) ** 2 * 2 * v * v
    return plug, debiased, quad


def _plugin(w, q, y, g, n_bins):
    return decomposition_replicates(w[None, :], q, q, y, g, n_bins)[0, 3]


def _linear_se_by_differences(q, y, g, n_bins):
    """The delta method's linear part from central differences of the plug-in
    reliability in each cluster's weight (the shares, mean forecasts and frequencies
    all move): C/(C - 1) sum_c grad_c^2."""
    n_groups, h = int(g.max()) + 1, 1e-6
    w = np.ones(n_groups)
    grad = np.array([(_plugin(w + h * e, q, y, g, n_bins) - _plugin(w - h * e, q, y, g, n_bins))
                     / (2 * h) for e in np.eye(n_groups)])
    return n_groups / (n_groups - 1) * float(np.sum(grad * grad))


@settings(max_examples=30, deadline=None)
@given(data=DECOMPOSITION_TABLES, n_bins=st.integers(1, 6))
def test_reliability_pivots_agree_with_loops(data, n_bins):
    """The plug-in is the Murphy decomposition's reliability, the debiased value the
    loops' (calibration_error's), and the standard error's square the derivative's
    clustered variance plus the loops' quadratic part."""
    q, y, g = (np.array(v) for v in data)
    y = y.astype(float)
    codes = cluster_codes(g)
    plug, debiased, se = reliability_pivots(np.ones((1, int(codes.max()) + 1)), q, y, codes,
                                            n_bins)[0]
    want_plug, want_debiased, quad = _reliability_by_loops(list(q), list(y), list(codes),
                                                           n_bins)
    assert plug == pytest.approx(want_plug, abs=1e-12)
    assert plug == pytest.approx(_plugin(np.ones(int(codes.max()) + 1), q, y, codes, n_bins),
                                 abs=1e-12)
    assert debiased == pytest.approx(want_debiased, abs=1e-12)
    want_se2 = _linear_se_by_differences(q, y, codes, n_bins) + quad
    assert se * se == pytest.approx(want_se2, rel=1e-5, abs=1e-9)


@settings(max_examples=20, deadline=None)
@given(data=DECOMPOSITION_TABLES, n_bins=st.integers(1, 6), seed=st.integers(0, 2**16))
def test_weighted_pivots_are_those_of_the_resample_written_out(data, n_bins, seed):
    """Cluster weights (how often each is drawn) give the pivots of the table with each
    cluster's rows repeated that often, each copy a cluster of its own."""
    q, y, g = (np.array(v) for v in data)
    y = y.astype(float)
    codes = cluster_codes(g)
    n_groups = int(codes.max()) + 1
    w = np.random.default_rng(seed).integers(0, 3, size=n_groups).astype(float)
    w[0] += 2.0  # at least two draws
    got = reliability_pivots(w[None, :], q, y, codes, n_bins)[0]
    rows, labels = [], []
    label = 0
    for c in range(n_groups):
        for _ in range(int(w[c])):
            members = list(np.flatnonzero(codes == c))
            rows += members
            labels += [label] * len(members)
            label += 1
    want = reliability_pivots(np.ones((1, label)), q[rows], y[rows], np.array(labels),
                              n_bins)[0]
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_debiased_is_calibration_errors_statistic():
    rng = np.random.default_rng(8)
    g = np.repeat(np.arange(40), rng.integers(1, 4, size=40))
    q = rng.uniform(size=g.size) ** 1.5
    y = (rng.uniform(size=g.size) < q).astype(float)
    ce = calibration_error(pd.DataFrame({"probability": q, "outcome": y, "g": g}),
                           binning="equal_width", group="g", n_resamples=9, rng=0)
    plug, debiased, _ = reliability_pivots(np.ones((1, 40)), q, y, g, 10)[0]
    assert debiased == pytest.approx(ce.statistic, abs=1e-14)
    assert plug == pytest.approx(ce.plugin, abs=1e-14)


def test_separating_forecaster_keeps_a_positive_standard_error():
    """Each bin holds one outcome: calibration_error's standard error (the frequencies'
    part) is 0, this one (the shares' and mean forecasts' part) is not."""
    q = np.random.default_rng(2).uniform(size=50)
    y = (q > 0.7).astype(float)
    ce = calibration_error(pd.DataFrame({"probability": q, "outcome": y, "g": np.arange(50)}),
                           binning="equal_width", group="g", n_resamples=9, rng=0)
    assert ce.se == 0.0 and ce.interval == "basic"
    se = reliability_pivots(np.ones((1, 50)), q, y, np.arange(50), 10)[0, 2]
    assert se > 0.005


@pytest.mark.parametrize("separated", [False, True])
def test_reliability_interval_is_the_hull_with_the_bootstrap_t(separated):
    """The interval is the hull of calibration_error's (drawn from the generator after
    the decomposition's own draws) and the bootstrap-t interval of the pivots under the
    decomposition's cluster weights; for a forecaster who separates the outcomes its
    upper end is the bootstrap-t's, above calibration_error's basic interval."""
    rng = np.random.default_rng(3)
    n = 50
    q = rng.uniform(size=n)
    y = ((q > 0.7) if separated else (rng.uniform(size=n) < q)).astype(float)
    data = pd.DataFrame({"question": np.arange(n), "probability": q, "outcome": y})
    res = brier_decomposition(data, n_resamples=199, rng=4)
    gen = np.random.default_rng(4)
    pivots = np.vstack([reliability_pivots(cluster_weights(draws, n), q, y, np.arange(n), 10)
                        for _, _, draws in cluster_draw_chunks(n, 199, gen)])
    ce = calibration_error(data.assign(cluster=np.arange(n)), binning="equal_width",
                           group="cluster", n_resamples=199, rng=gen)
    plug, debiased, se = reliability_pivots(np.ones((1, n)), q, y, np.arange(n), 10)[0]
    t_low, t_high = studentized_interval(debiased, plug, se, pivots[:, 1], pivots[:, 2], 0.95)
    row = res.table.set_index("component").loc["reliability"]
    low, high = ce.confidence_interval[:2]
    assert (row["ci_low"], row["ci_high"]) == (min(low, t_low), max(high, t_high))
    if separated:
        assert row["ci_high"] > high + 0.005
