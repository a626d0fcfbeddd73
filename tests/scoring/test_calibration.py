"""Tests of the debiased binned calibration error and the SmoothECE."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from scipy import stats

from coherence import CalibrationErrorResult
from coherence import NotCalibratedWarning
from coherence import SmallSampleWarning
from coherence import SmoothECEResult
from coherence import TiesWarning
from coherence import calibration_error
from coherence import forecast_scores
from coherence import plot_smooth_reliability
from coherence import smooth_ece
from coherence._resampling import studentized_interval
from coherence._scoring import _smooth_ece
from coherence._scoring._calibration import _bin_codes
from coherence._scoring._calibration import _bootstrap_weight_chunks
from coherence._scoring._calibration import _debiased_ce
from coherence._scoring._profile import l1_profile_lower_bound
from coherence._scoring._smooth_ece import Smoother
from coherence._scoring._smooth_ece import code_smece_at
from coherence._scoring._smooth_ece import round_to_grid
from coherence._scoring._smooth_ece import smooth_ece_code
from coherence._scoring._smooth_ece import smooth_ece_sigma
from tests._reference_calibration import reference_calibration_error
from tests._reference_calibration import reference_code_convolution
from tests._reference_calibration import reference_smooth_ece_sigma
from tests._reference_calibration import reflected_kernel
from tests._reference_profile import profile_bound_by_grid
from tests._reference_resampling import bootstrap_weights


def forecasts(n: int, seed: int, curve=lambda p: p) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    p = gen.uniform(size=n)
    return pd.DataFrame({"probability": p, "outcome": (gen.uniform(size=n) < curve(p))
                         .astype(int)})


data_strategy = st.integers(8, 60).flatmap(lambda n: st.tuples(
    st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n),
    st.lists(st.integers(0, 1), min_size=n, max_size=n)))


# --------------------------------------------------------------------------- brute force
@settings(max_examples=30)
@given(data=data_strategy, n_bins=st.integers(1, 6),
       binning=st.sampled_from(["equal_mass", "equal_width"]), norm=st.sampled_from([1, 2]))
def test_debiased_ce_agrees_with_brute_force_loop(data, n_bins, binning, norm):
    p, y = np.array(data[0]), np.array(data[1], dtype=float)
    deb, plug, se = _debiased_ce(p, y, np.ones(len(p)), n_bins, binning, norm)
    ref_deb, ref_plug, ref_se = reference_calibration_error(p, y, n_bins, binning, norm,
                                                            with_se=True)
    assert plug == pytest.approx(ref_plug, abs=1e-12)
    assert deb == pytest.approx(ref_deb, abs=1e-7)
    assert se == pytest.approx(ref_se, abs=1e-12)


def test_public_statistic_and_table_match_reference():
    df = forecasts(300, 0, lambda p: p**1.5)
    res = calibration_error(df, n_resamples=19, rng=0)
    ref_deb, ref_plug = reference_calibration_error(df["probability"], df["outcome"], 10,
                                                    "equal_mass", 2)
    assert res.statistic == pytest.approx(ref_deb, abs=1e-12)
    assert res.plugin == pytest.approx(ref_plug, abs=1e-12)
    t = res.table
    assert t["n"].sum() == 300 and list(t["n"]) == [30] * 10  # equal mass
    share = t["n"] / 300
    assert float((share * (t["plugin_term"] - t["correction"])).sum()) == \
        pytest.approx(res.statistic, abs=1e-14)
    assert res.l2_estimate == pytest.approx(math.sqrt(max(res.statistic, 0.0)))
    lo, hi, _ = res.l2_interval
    assert lo == pytest.approx(math.sqrt(max(res.confidence_interval.low, 0.0)))
    assert hi == pytest.approx(math.sqrt(max(res.confidence_interval.high, 0.0)))


def test_equal_width_plugin_is_forecast_scores_ece_and_reliability():
    df = forecasts(200, 1, lambda p: 0.2 + 0.6 * p)
    fs = forecast_scores(df.assign(model="m", question=np.arange(200)), timestamp=None,
                         n_resamples=9, rng=0)
    cal = fs.calibration.set_index("model").loc["m"]
    r2 = calibration_error(df, binning="equal_width", n_resamples=9, rng=0)
    r1 = calibration_error(df, binning="equal_width", norm=1, n_resamples=9, rng=0)
    assert r2.plugin == pytest.approx(cal["reliability"], abs=1e-14)
    assert r1.plugin == pytest.approx(cal["ece"], abs=1e-14)


@settings(max_examples=15)
@given(data=data_strategy, seed=st.integers(0, 2**32 - 1), norm=st.sampled_from([1, 2]))
def test_row_order_invariance(data, seed, norm):
    df = pd.DataFrame({"probability": data[0], "outcome": data[1]})
    perm = np.random.default_rng(seed).permutation(len(df))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallSampleWarning)
        warnings.simplefilter("ignore", TiesWarning)  # drawn forecasts can tie
        a = calibration_error(df, n_bins=3, n_resamples=19, norm=norm, rng=1)
        b = calibration_error(df.iloc[perm], n_bins=3, n_resamples=19, norm=norm, rng=1)
    assert a.statistic == pytest.approx(b.statistic, abs=1e-13)
    np.testing.assert_allclose(a.confidence_interval[:2], b.confidence_interval[:2],
                               atol=1e-13)


# --------------------------------------------------------------------------- ground truth
def test_calibrated_forecaster_debiased_mean_is_zero_plugin_is_not():
    """Perfectly calibrated forecasts: the debiased estimate averages 0, the plug-in not."""
    gen = np.random.default_rng(3)
    n, reps = 100, 400
    deb, plug = np.empty(reps), np.empty(reps)
    for r in range(reps):
        p = gen.uniform(size=n)
        y = (gen.uniform(size=n) < p).astype(float)
        deb[r], plug[r], _ = _debiased_ce(p, y, np.ones(n), 10, "equal_mass", 2)
    se = deb.std(ddof=1) / math.sqrt(reps)
    assert abs(deb.mean()) < 3 * se
    assert plug.mean() > 10 * se  # the plug-in's bias, about sum_k w_k Var(ybar_k)
    assert np.any(deb < 0)  # never clipped


def test_miscalibrated_forecaster_recovers_true_binned_error():
    """y ~ Bernoulli(0.5 + 0.8 (p - 0.5)), p uniform: the equal-mass bins tend to the
    tenths, and the binned squared error is mean over bins of (0.2 (mid_k - 0.5))^2."""
    gen = np.random.default_rng(4)
    truth = float(np.mean((0.2 * ((np.arange(10) + 0.5) / 10 - 0.5)) ** 2))
    est = []
    for _ in range(200):
        p = gen.uniform(size=400)
        y = (gen.uniform(size=400) < 0.5 + 0.8 * (p - 0.5)).astype(float)
        est.append(_debiased_ce(p, y, np.ones(400), 10, "equal_mass", 2)[0])
    est = np.array(est)
    assert abs(est.mean() - truth) < 3 * est.std(ddof=1) / math.sqrt(len(est)) + 2e-4


def test_interval_covers_in_a_small_simulation():
    hits = 0
    for seed in range(40):
        res = calibration_error(forecasts(150, 100 + seed), n_resamples=99, rng=seed)
        hits += res.confidence_interval.low <= 0.0 <= res.confidence_interval.high
    assert hits >= 35  # 40 x 0.95 = 38 expected; measured coverage in benchmarks/


def test_bootstrap_t_interval_rebuilt_from_the_resamples():
    """The interval is stat - t*_q se, t* = (debiased* - plug-in) / se*, each replicate
    rebuilt by the brute-force loop from the generator's weights; 'basic' is the pivotal
    interval of the same replicates."""
    df = forecasts(120, 9, lambda p: p**0.7)
    df = df.sort_values(["probability", "outcome"])  # the function's canonical order
    p, y = df["probability"].to_numpy(), df["outcome"].to_numpy(float)
    kw = {"n_resamples": 39, "rng": 3, "binning": "equal_width"}
    res = calibration_error(df, interval="bootstrap-t", **kw)
    basic = calibration_error(df, interval="basic", **kw)
    profile = calibration_error(df, **kw)
    gen = np.random.default_rng(3)
    w = bootstrap_weights(120, None, 39, gen)
    reps = []
    for row in w:
        idx = np.repeat(np.arange(120), row.astype(np.int64))
        reps.append(reference_calibration_error(p[idx], y[idx], 10, "equal_width", 2,
                                                with_se=True))
    reps = np.array(reps)
    deb, plug, se = reference_calibration_error(p, y, 10, "equal_width", 2, with_se=True)
    np.testing.assert_allclose(res.replicates, reps[:, 0], atol=1e-12)
    t_lo, t_hi = np.quantile((reps[:, 0] - plug) / reps[:, 2], [0.025, 0.975])
    assert res.interval == "bootstrap-t" and "bootstrap-t interval" in res.method
    assert res.se == pytest.approx(se, abs=1e-14)
    assert res.confidence_interval.low == pytest.approx(deb - t_hi * se, abs=1e-10)
    assert res.confidence_interval.high == pytest.approx(deb - t_lo * se, abs=1e-10)
    # the default raises the upper end to the Gaussian profile bound of the bins, drawn
    # after the bootstrap; by a grid of the least precise bin's gap here
    tab = profile.table
    nk = tab["n"].to_numpy(float)
    f, mp = tab["observed_frequency"].to_numpy(), tab["mean_forecast"].to_numpy()
    var = np.where(nk >= 2, f * (1 - f) / np.maximum(nk - 1, 1), 0.0)
    z = gen.standard_normal((39, len(tab)))
    m = int(np.argmax(nk * var))
    bound, step = profile_bound_by_grid(nk / 120, f - mp, var, deb, 0.95, z,
                                        abs(f - mp)[m] + 12 * np.sqrt(var[m]))
    assert profile.interval == "profile" and "Gaussian profile bound" in profile.method
    assert profile.confidence_interval.low == res.confidence_interval.low
    high = profile.confidence_interval.high
    assert high >= res.confidence_interval.high
    # the grid's bound lies a step (here about 1e-4 of it) below the exact one
    assert high == pytest.approx(max(bound, res.confidence_interval.high), rel=1e-3)
    assert high >= bound - 1e-12 and step > 0
    q_lo, q_hi = np.quantile(reps[:, 0], [0.025, 0.975])
    assert basic.interval == "basic" and "basic bootstrap interval" in basic.method
    assert basic.confidence_interval.low == pytest.approx(deb + plug - q_hi, abs=1e-10)
    assert basic.confidence_interval.high == pytest.approx(deb + plug - q_lo, abs=1e-10)
    assert basic.statistic == res.statistic


@pytest.mark.parametrize("clustered", [False, True])
def test_l1_profile_interval_rebuilt_by_brute_force(clustered):
    """norm=1, the default: the lower end is the bootstrap-t's or the Gaussian profile
    bound, whichever is lower; the upper end the plug-in plus z times the clustered
    standard error of sum_k w_k sign(d_k) ybar_k, by a loop over the clusters."""
    df = forecasts(150, 36, lambda p: 0.2 + 0.6 * p)
    df["question"] = np.arange(150) // (3 if clustered else 1)
    kw = {"n_resamples": 49, "rng": 4, "norm": 1, "n_bins": 5,
          "group": "question" if clustered else None}
    prof = calibration_error(df, **kw)
    with pytest.warns(NotCalibratedWarning, match="interval='bootstrap-t' is not calibrated"):
        plain = calibration_error(df, interval="bootstrap-t", **kw)
    tab = prof.table
    codes = tab["bin"].to_numpy()
    d = (tab["observed_frequency"] - tab["mean_forecast"]).to_numpy()
    # rows -> their bin's position among the table's bins
    row_bin = np.searchsorted(codes, _bin_codes(df["probability"].to_numpy(), 5,
                                                "equal_mass"))
    y = df["outcome"].to_numpy(float)
    resid = y - tab["observed_frequency"].to_numpy()[row_bin]
    t = {}
    for q, s_ in zip(df["question"], np.sign(d)[row_bin] * resid / 150, strict=True):
        t[q] = t.get(q, 0.0) + s_
    tc = np.array(list(t.values()))
    se_lin = math.sqrt(len(tc) / (len(tc) - 1) * np.sum(tc * tc))
    z = stats.norm.ppf(0.975)
    assert prof.interval == "profile" and "plug-in + z se" in prof.method
    assert prof.confidence_interval.high == pytest.approx(prof.plugin + z * se_lin,
                                                          rel=1e-10)
    assert prof.confidence_interval.high >= prof.plugin >= prof.statistic
    # the lower end: the normals follow the bootstrap's draws on the same generator,
    # which weigh the 150 rows or the 50 clusters (the same stream either way)
    gen = np.random.default_rng(4)
    bootstrap_weights(150 if not clustered else 50, None, 49, gen)
    nk = tab["n"].to_numpy(float)
    var = _variances(df, row_bin, len(tab), clustered)
    normals = gen.standard_normal((49, len(tab)))
    bound = l1_profile_lower_bound(nk / 150, d, var, prof.statistic, 0.95, normals)
    assert prof.confidence_interval.low == pytest.approx(bound, abs=1e-12)
    assert 0.0 < bound < plain.confidence_interval.low   # the bound is what lowers it


def _variances(df, row_bin, k, clustered):
    """Each bin's frequency variance: f(1 - f)/(n - 1), or cluster-robust by loops."""
    y = df["outcome"].to_numpy(float)
    out = np.zeros(k)
    for b in range(k):
        rows = row_bin == b
        n_b, f = rows.sum(), y[rows].mean()
        if not clustered:
            out[b] = f * (1 - f) / (n_b - 1) if n_b >= 2 else 0.0
            continue
        tot = df[rows].assign(r=y[rows] - f).groupby("question")["r"].sum().to_numpy()
        c = len(tot)
        out[b] = c / (c - 1) * np.sum(tot * tot) / n_b**2 if c >= 2 else 0.0
    return out


def test_l1_interval_covers_a_calibrated_forecaster():
    """The l1 interval of a calibrated forecaster covers 0: the bootstrap-t alone
    lies above 0 in about a quarter of studies (0.72-0.79 coverage in
    benchmarks/validate_calibration.py), the default in about 3%."""
    hits = plain_hits = 0
    for seed in range(120):
        df = forecasts(200, 500 + seed)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotCalibratedWarning)
            res = calibration_error(df, norm=1, n_resamples=99, rng=seed)
            plain = calibration_error(df, norm=1, interval="bootstrap-t", n_resamples=99,
                                      rng=seed)
        hits += res.confidence_interval.low <= 0.0 <= res.confidence_interval.high
        plain_hits += plain.confidence_interval.low <= 0.0 <= plain.confidence_interval.high
    assert hits >= 108                  # 0.9 of 120; expected about 116
    assert plain_hits <= 105            # the bootstrap-t alone: expected about 90


@pytest.mark.slow
def test_l1_interval_covers_a_real_error():
    """Beta(2, 5) forecasts, outcomes at p^0.7 (a binned l1 error of 0.1158 whatever the
    bins, every gap being positive), n = 400: the default covers, the bootstrap-t misses
    above (its upper end: 0.905 coverage over 2,000 studies in the matrix)."""
    truth = 0.1158
    gen = np.random.default_rng(8)
    hits = plain_hits = 0
    for seed in range(300):
        p = gen.beta(2.0, 5.0, 400)
        df = pd.DataFrame({"probability": p, "outcome": (gen.uniform(size=400) < p**0.7)})
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", NotCalibratedWarning)
            res = calibration_error(df, norm=1, n_resamples=99, rng=seed)
            plain = calibration_error(df, norm=1, interval="bootstrap-t", n_resamples=99,
                                      rng=seed)
        hits += res.confidence_interval.low <= truth <= res.confidence_interval.high
        plain_hits += plain.confidence_interval.low <= truth <= plain.confidence_interval.high
    assert hits >= 282                  # 0.94 of 300; 0.975 in the matrix
    assert plain_hits <= 282


@settings(max_examples=40)
@given(stat=st.floats(-1, 1), plug=st.floats(0, 1), se=st.floats(1e-6, 1),
       reps=st.lists(st.tuples(st.floats(-1, 1), st.sampled_from([0.0, 0.01, 0.2])),
                     min_size=2, max_size=30))
def test_t_interval_against_the_written_formula(stat, plug, se, reps):
    """A replicate of standard error 0 is scaled by the sample's; the ends are
    stat - t_q se with the replicates' pivot quantiles."""
    boot = np.array(reps)
    lo, hi = studentized_interval(stat, plug, se, boot[:, 0], boot[:, 1], 0.9)
    t = [(v - plug) / (s if s > 0 else se) for v, s in reps]
    t_lo, t_hi = np.quantile(t, [0.05, 0.95])
    assert lo == pytest.approx(stat - t_hi * se, rel=1e-9, abs=1e-12)
    assert hi == pytest.approx(stat - t_lo * se, rel=1e-9, abs=1e-12)
    assert np.isfinite([lo, hi]).all() and lo <= hi


def test_all_bins_pure_fall_back_to_the_basic_interval():
    df = forecasts(60, 2).assign(outcome=0)
    res = calibration_error(df, n_resamples=19, rng=0)
    assert res.se == 0.0 and res.interval == "basic"
    assert "standard error 0" in res.method
    assert res.confidence_interval.low <= res.statistic <= res.confidence_interval.high


def test_a_point_interval_warns():
    # one forecast value, every outcome YES: every resample gives 0.25, and the interval
    # [0.25, 0.25] once came without a word
    df = pd.DataFrame({"probability": [0.5] * 20, "outcome": [1] * 20})
    with (pytest.warns(TiesWarning, match=r"n_bins=10 asked, 1 equal-mass bin\(s\) used"),
          pytest.warns(SmallSampleWarning, match=r"the interval is the point 0.25 itself")):
        res = calibration_error(df, n_resamples=19, rng=0)
    assert res.confidence_interval.low == res.confidence_interval.high == pytest.approx(0.25)


def test_group_bootstrap_moves_clusters_together():
    df = forecasts(120, 5)
    df["question"] = np.repeat(np.arange(30), 4)
    a = calibration_error(df, group="question", n_resamples=49, rng=0)
    assert a.group == "question" and "question" in a.method
    assert "cluster-robust over 'question'" in a.method
    # singleton clusters: the correction is Kumar et al.'s, the statistic the same
    b = calibration_error(df.assign(question=np.arange(120)), group="question",
                          n_resamples=49, rng=0)
    plain = calibration_error(df, n_resamples=49, rng=0)
    assert b.statistic == pytest.approx(plain.statistic, abs=1e-15)
    assert b.se == pytest.approx(plain.se, abs=1e-15)


@settings(max_examples=40)
@given(data=st.integers(4, 40).flatmap(lambda n: st.tuples(
    st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n),
    st.lists(st.integers(0, 1), min_size=n, max_size=n),
    st.lists(st.integers(0, 6), min_size=n, max_size=n))),
    n_bins=st.integers(1, 5), binning=st.sampled_from(["equal_mass", "equal_width"]))
def test_cluster_correction_agrees_with_brute_force_loop(data, n_bins, binning):
    p, y, g = (np.array(v) for v in data)
    codes = np.unique(g, return_inverse=True)[1]
    got = _debiased_ce(p, y.astype(float), np.ones(len(p)), n_bins, binning, 2,
                       groups=codes)
    want = reference_calibration_error(p, y, n_bins, binning, 2, with_se=True, groups=codes)
    np.testing.assert_allclose(got, want, atol=1e-12)


@settings(max_examples=25)
@given(seed=st.integers(0, 2**16), n_clusters=st.integers(1, 15),
       binning=st.sampled_from(["equal_mass", "equal_width"]))
def test_cluster_runs_in_canonical_order_equal_the_sorted_fallback(seed, n_clusters,
                                                                    binning):
    """Rows sorted by cluster then forecast (the public functions' order) take the
    no-sort path; any other order sorts first: the same values."""
    gen = np.random.default_rng(seed)
    g = gen.integers(0, n_clusters, 40)
    p, y = np.round(gen.uniform(size=40), 1), (gen.uniform(size=40) < 0.4).astype(float)
    w_c = gen.integers(0, 3, n_clusters).astype(float)
    w_c[g[0]] = max(w_c[g[0]], 1.0)  # a cluster's rows share its weight; one is drawn
    w = w_c[g]
    order = np.lexsort((y, p, g))
    canonical = _debiased_ce(p[order], y[order], w[order], 4, binning, 2, groups=g[order])
    shuffled = _debiased_ce(p, y, w, 4, binning, 2, groups=g)
    np.testing.assert_allclose(canonical, shuffled, rtol=1e-12, atol=1e-15)


@settings(max_examples=25)
@given(seed=st.integers(0, 2**16), n_clusters=st.integers(2, 12))
def test_cluster_weights_count_as_copies_of_the_cluster(seed, n_clusters):
    """A bootstrap multiplicity w on a cluster's rows is the cluster drawn w times: the
    same as w distinct copies of it (equal-width bins, which copies do not move)."""
    gen = np.random.default_rng(seed)
    size = gen.integers(1, 4, n_clusters)
    g = np.repeat(np.arange(n_clusters), size)
    p, y = gen.uniform(size=g.size), (gen.uniform(size=g.size) < 0.5).astype(float)
    w_c = gen.integers(0, 3, n_clusters).astype(float)
    w_c[0] = max(w_c[0], 1.0)
    got = _debiased_ce(p, y, w_c[g], 5, "equal_width", 2, groups=g)
    rows, ids = [], []
    for c in range(n_clusters):
        for copy in range(int(w_c[c])):
            members = np.flatnonzero(g == c)
            rows.extend(members)
            ids.extend([c * 10 + copy] * members.size)
    rows = np.array(rows)
    want = _debiased_ce(p[rows], y[rows], np.ones(rows.size), 5, "equal_width", 2,
                        groups=np.unique(ids, return_inverse=True)[1])
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_cluster_correction_removes_the_bias_of_shared_outcomes():
    """Three forecasts of one probability per question, one outcome: Kumar et al.'s
    correction assumes independent outcomes and leaves a bias; the cluster-robust one
    is unbiased (mean over 400 studies within 3 standard errors of the truth)."""
    gen = np.random.default_rng(11)
    t = (np.arange(200_000) + 0.5) / 200_000
    k = np.minimum((t * 10).astype(int), 9)
    gap = np.bincount(k, t**1.5 - t) / np.bincount(k)
    truth = float(np.mean(gap**2))  # uniform p: equal-width bins of mass 0.1
    plain, robust = [], []
    g = np.repeat(np.arange(100), 3)
    for _ in range(400):
        q = gen.uniform(size=100)
        y = np.repeat((gen.uniform(size=100) < q**1.5).astype(float), 3)
        p = np.repeat(q, 3)
        plain.append(_debiased_ce(p, y, np.ones(300), 10, "equal_width", 2)[0])
        robust.append(_debiased_ce(p, y, np.ones(300), 10, "equal_width", 2, groups=g)[0])
    for est, ok in ((np.array(robust), True), (np.array(plain), False)):
        close = bool(abs(est.mean() - truth) < 3 * est.std(ddof=1) / math.sqrt(est.size))
        assert close is ok


# --------------------------------------------------------------------------- smooth ECE
@settings(max_examples=8)
@given(data=st.integers(3, 8).flatmap(lambda n: st.tuples(
    st.lists(st.floats(0.0, 1.0), min_size=n, max_size=n),
    st.lists(st.integers(0, 1), min_size=n, max_size=n))),
    sigma=st.floats(0.05, 0.6))
def test_smooth_ece_sigma_agrees_with_quadrature(data, sigma):
    f, y = np.array(data[0]), np.array(data[1], dtype=float)
    got = smooth_ece_sigma(f, y - f, sigma, 4000)
    assert got == pytest.approx(reference_smooth_ece_sigma(f, y, sigma), abs=2e-5, rel=1e-4)


def test_smooth_ece_is_the_fixed_point_and_matches_reference():
    df = forecasts(25, 6, lambda p: p**2)
    res = smooth_ece(df, n_resamples=0)
    assert res.statistic == pytest.approx(res.sigma, abs=1e-6)
    ref = reference_smooth_ece_sigma(df["probability"], df["outcome"], res.sigma)
    assert res.statistic == pytest.approx(ref, abs=1e-5)
    f = df["probability"].to_numpy()
    r = df["outcome"].to_numpy() - f
    # smECE_sigma decreases in sigma: above the diagonal left of sigma*, below right of it
    assert smooth_ece_sigma(f, r, 0.8 * res.sigma, 1000) > 0.8 * res.sigma
    assert smooth_ece_sigma(f, r, 1.2 * res.sigma, 1000) < 1.2 * res.sigma


def test_smooth_ece_fixed_sigma_and_diagram():
    df = forecasts(200, 7, lambda p: 0.3 + 0.4 * p)
    res = smooth_ece(df, sigma=0.1, n_resamples=50, rng=0)
    assert res.sigma == 0.1
    t = res.table
    # the integral of |r| times the density is the statistic
    assert float(np.mean(np.abs(t["residual"]) * t["density"])) == \
        pytest.approx(res.statistic, rel=1e-10)
    assert float(np.mean(t["density"])) == pytest.approx(1.0, abs=1e-3)  # a density
    assert (t["band_low"] <= t["smoothed"] + 1e-12).mean() > 0.9
    assert (t["band_high"] >= t["smoothed"] - 1e-12).mean() > 0.9
    # under-confident forecaster y ~ 0.3 + 0.4 p: the curve is flatter than the diagonal
    mid = t.loc[(t["t"] > 0.1) & (t["t"] < 0.3), "residual"]
    assert (mid > 0).all()
    assert math.isnan(res.pvalue) and math.isnan(res.confidence_interval.low)


def test_smooth_ece_row_order_invariant_and_reproducible():
    df = forecasts(80, 8)
    a = smooth_ece(df, n_resamples=20, rng=3)
    b = smooth_ece(df.iloc[::-1], n_resamples=20, rng=3)
    assert a.statistic == pytest.approx(b.statistic, abs=1e-12)
    np.testing.assert_allclose(a.table["band_low"], b.table["band_low"], atol=1e-12)


def test_code_definition_is_the_authors_discretisation():
    df = forecasts(300, 9, lambda p: p**1.5)
    f = df["probability"].to_numpy()
    y = df["outcome"].to_numpy(dtype=float)
    values = round_to_grid(f, f - y, 41) / len(f)
    assert code_smece_at(values, 0.07) == pytest.approx(
        reference_code_convolution(list(values), 0.07), rel=1e-12)
    # the rounding keeps each residual's total and its first moment
    assert values.sum() * len(f) == pytest.approx(np.sum(f - y))
    grid = np.linspace(0, 1, 41)
    assert (values * grid).sum() * len(f) == pytest.approx(np.sum(f * (f - y)))
    code = smooth_ece(df, definition="code", n_resamples=0)
    paper = smooth_ece(df, n_resamples=0)
    assert code.definition == "code"
    assert (code.statistic, code.sigma) == pytest.approx(smooth_ece_code(f, y))
    assert abs(code.statistic - paper.statistic) < 0.01
    assert abs(code.sigma - paper.sigma) <= 2.0**-10 + 0.01


def test_smooth_ece_small_for_calibrated_large_for_miscalibrated():
    good = smooth_ece(forecasts(200, 10), n_resamples=0)
    bad = smooth_ece(forecasts(200, 10, lambda p: p**3), n_resamples=0)
    assert good.statistic < 0.1 < 0.2 < bad.statistic  # n^(-1/2) = 0.07 vs about 0.25


def test_plot_smooth_reliability():
    import matplotlib.pyplot as plt

    res = smooth_ece(forecasts(60, 11), n_resamples=20, rng=0)
    fig, ax = plt.subplots()
    assert plot_smooth_reliability(res, ax=ax) is ax
    assert ax.collections  # the variable-width line and the band
    assert (ax.get_xlim(), ax.get_ylim(), ax.get_ylabel()) == (
        (0, 1), (0, 1), "smoothed observed frequency")
    plt.close(fig)
    with pytest.raises(TypeError, match="SmoothECEResult"):
        plot_smooth_reliability(calibration_error(forecasts(50, 1), n_resamples=9, rng=0))


# --------------------------------------------------------------------------- validation
@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    ({"norm": 3}, ValueError, "'norm' parameter of calibration_error must be 1 or 2"),
    ({"norm": True}, ValueError, "'norm'"),
    ({"binning": "quantile"}, ValueError, "'binning'.*'equal_mass', 'equal_width'"),
    ({"n_bins": 0}, ValueError, "'n_bins'.*>= 1"),
    ({"interval": "bca"}, ValueError, "'interval'.*'bootstrap-t', 'basic'"),
    ({"n_resamples": 0}, ValueError, "'n_resamples'"),
    ({"confidence_level": 1.5}, ValueError, "'confidence_level'"),
    ({"probability": "p"}, ValueError, "column 'p' \\(the 'probability' column\\) not found"),
    ({"group": 3}, TypeError, "'group' parameter of calibration_error"),
])
def test_calibration_error_parameter_messages(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        calibration_error(forecasts(20, 0), **kwargs)


@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    ({"sigma": 0.0}, ValueError, "'sigma' parameter of smooth_ece"),
    ({"sigma": 2.0}, ValueError, "'sigma'"),
    ({"definition": "relplot"}, ValueError,
     "'definition'.*'paper', 'relplot-1.0.3', 'relplot-1.0.1', 'code'"),
    ({"n_grid": 5}, ValueError, "'n_grid'"),
    ({"n_resamples": -1}, ValueError, "'n_resamples'"),
])
def test_smooth_ece_parameter_messages(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        smooth_ece(forecasts(20, 0), **kwargs)


@pytest.mark.parametrize("func", [calibration_error, smooth_ece])
def test_data_messages(func):
    df = forecasts(10, 0)
    with pytest.raises(ValueError, match=r"'probability'.*\[0, 1\].*row 3 = 1.5"):
        func(df.assign(probability=df["probability"].where(df.index != 3, 1.5)))
    with pytest.raises(ValueError, match=r"'outcome'.*binary.*row 2 = 2"):
        func(df.assign(outcome=df["outcome"].where(df.index != 2, 2)))
    with pytest.raises(ValueError, match="at least 2 forecasts"):
        func(df.iloc[:1])
    with pytest.raises(ValueError, match=r"'question'.*missing"):
        func(df.assign(question=[None, *range(9)]), group="question")


def test_single_forecast_bin_warns():
    df = pd.DataFrame({"probability": [0.05, 0.5, 0.55, 0.6, 0.52], "outcome": [0, 1, 0, 1, 1]})
    with pytest.warns(SmallSampleWarning, match="single forecast"):
        res = calibration_error(df, n_bins=10, binning="equal_width", n_resamples=9, rng=0)
    assert isinstance(res, CalibrationErrorResult)
    assert res.table.loc[res.table["n"] == 1, "correction"].eq(0.0).all()


def test_single_cluster_bin_warns_and_zero_rule_follows_clusters():
    """A bin whose forecasts all come from one question has no variance estimate with
    ``group``: it warns naming the cluster, and 'zero' counts its error as 0."""
    df = pd.DataFrame({"probability": [0.05, 0.06, 0.5, 0.55, 0.6, 0.52],
                       "outcome": [0, 0, 1, 0, 1, 1], "q": [0, 0, 1, 2, 3, 4]})
    kw = {"n_bins": 10, "binning": "equal_width", "n_resamples": 9, "rng": 0, "group": "q"}
    with pytest.warns(SmallSampleWarning, match="single 'q' cluster"):
        res = calibration_error(df, **kw)
    assert res.table.loc[res.table["n"] == 2, "correction"].eq(0.0).all()
    zero = calibration_error(df, single_forecast_bins="zero", **kw)
    first = zero.table.iloc[0]
    assert first["n"] == 2 and first["correction"] == first["plugin_term"]


def test_result_types():
    assert isinstance(smooth_ece(forecasts(30, 0), n_resamples=0), SmoothECEResult)


# --------------------------------------------------------------------------- smooth ECE at scale
@settings(max_examples=12)
@given(n=st.integers(1, 40), sigma=st.floats(1e-3, 1.0), m=st.integers(10, 3000),
       columns=st.integers(1, 5), seed=st.integers(0, 2**16))
def test_binned_smoother_equals_the_exact_kernel(n, sigma, m, columns, seed):
    """The lattice-and-Taylor smoother gives each kernel sum to 1e-12 of its bound (the
    stated error), with forecasts at 0 and 1 and between lattice points."""
    gen = np.random.default_rng(seed)
    f = np.sort(np.concatenate([gen.uniform(size=n), [0.0, 1.0, 1e-12, 1.0 - 1e-12]]))
    v = gen.normal(size=(len(f), columns))
    t = (np.arange(m) + 0.5) / m
    exact = reflected_kernel(t, f, sigma) @ v
    got = Smoother(f, sigma, m).sums(v)
    scale = np.abs(v).sum(axis=0) / (math.sqrt(2.0 * math.pi) * sigma)
    assert np.all(np.abs(got - exact) <= 1e-12 * scale + 1e-300)


def test_smoother_sums_many_columns_in_blocks(monkeypatch):
    """Columns beyond the memory bound are smoothed a block at a time (two here): the
    sums of one call."""
    gen = np.random.default_rng(3)
    f = np.sort(gen.uniform(size=60))
    v = gen.normal(size=(60, 7))
    smoother = Smoother(f, 0.05, 400)
    whole = smoother.sums(v)
    monkeypatch.setattr(_smooth_ece, "_MAX_BLOCK", 2 * (2 * smoother.q * smoother.M))
    np.testing.assert_allclose(smoother.sums(v), whole, rtol=1e-13, atol=1e-300)


@pytest.mark.parametrize("mesh", [300, 4500])
def test_relplot_smoothing_by_fft_on_fine_meshes(mesh):
    """relplot 1.0.3's smoothing convolves meshes over 4,000 points by FFT: the mean
    absolute smoothed value of the direct convolution (relplot 1.0.1's), to 1e-12."""
    from coherence._scoring._smooth_ece import _relplot_convolve

    values = np.random.default_rng(mesh).normal(size=mesh) / mesh
    for sigma in (0.003, 0.05):
        got = float(np.mean(np.abs(_relplot_convolve(values, sigma))))
        assert got == pytest.approx(code_smece_at(values, sigma), rel=1e-12)


def test_bootstrap_chunks_are_the_one_call_stream():
    gen_a, gen_b = np.random.default_rng(5), np.random.default_rng(5)
    groups = np.repeat(np.arange(7), 3)
    for g in (None, groups):
        one = bootstrap_weights(21, g, 13, gen_a)
        chunks = np.concatenate(list(_bootstrap_weight_chunks(21, g, 13, gen_b,
                                                              max_elements=50)))
        np.testing.assert_array_equal(one, chunks)


@pytest.mark.parametrize(("kwargs", "message"), [
    ({"n_grid": 10**9}, r"The 'n_grid' parameter of smooth_ece must be an int in "
                        r"\[10, 100000\]; got 1000000000"),
    ({"sigma": 1e-5}, r"The 'sigma' parameter of smooth_ece must be a finite float in "
                      r"\[0.0001, 1.0\]; got 1e-05"),
])
def test_smooth_ece_size_bounds(kwargs, message):
    # n_grid=10**9 grew to 6 GB; a tiny sigma asked for 20 / sigma grid points
    with pytest.raises(ValueError, match=message):
        smooth_ece(forecasts(20, 0), **kwargs)


def test_smooth_ece_fixed_point_floor():
    # every forecast certain and right: smECE_sigma = 0 at every sigma; the search stops at
    # the narrowest kernel instead of growing the grid without bound
    df = pd.DataFrame({"probability": [0.0, 1.0, 1.0, 0.0], "outcome": [0, 1, 1, 0]})
    res = smooth_ece(df, n_resamples=0)
    assert res.sigma == 1e-4 and res.statistic == 0.0 and res.n_grid == 200_000


def test_smooth_ece_large_n_in_bounded_memory():
    """200,000 forecasts with a band: the point-by-point kernel would be a 200,000 x 1000
    matrix per resample block (1.6 GB); the binned smoother's result matches the exact
    kernel on a subsample-sized problem and the band is finite."""
    df = forecasts(200_000, 12, lambda p: p**1.2)
    res = smooth_ece(df, n_resamples=20, rng=0)
    assert abs(res.statistic - res.sigma) < 1e-6
    assert np.isfinite(res.table[["band_low", "band_high"]].to_numpy()).all()
    f = np.sort(df["probability"].to_numpy())[::400]
    y = np.ones_like(f)
    t = (np.arange(1000) + 0.5) / 1000
    exact = reflected_kernel(t, f, res.sigma) @ (y - f)
    got = Smoother(f, res.sigma, 1000).sums((y - f)[:, None])[:, 0]
    np.testing.assert_allclose(got, exact, rtol=0, atol=1e-12 * len(f) / res.sigma)


#: relplot's own values (``relplot.smECE(p, y, return_width=True)``, and at sigma 0.05:
#: 1.0.3's ``relplot.smECE_sigma(p, y, 0.05)``, 1.0.1's (which has no such function)
#: ``metrics.smooth_ece_interpolated(kernels.smooth_round_to_grid(p, p - y,
#: eval_points=800) / n, 0.05)``, its mesh rule's 800 points) on ``p = uniform(n)``,
#: ``y = uniform(n) < p ** power`` drawn with ``numpy.random.default_rng(seed)``; made with
#: relplot 1.0.1 and 1.0.3 from PyPI
RELPLOT = {
    "relplot-1.0.3": [((50, 1, 1.0), 0.064692161043182, 0.06640625, 0.07914831295795333),
                      ((400, 2, 2.0), 0.1656049359637202, 0.166015625, 0.1652532835963285),
                      ((3000, 3, 0.7), 0.09300217901995925, 0.09375, 0.09291814285928202)],
    "relplot-1.0.1": [((50, 1, 1.0), 0.06474487512726201, 0.06640625, 0.07929509432172198),
                      ((400, 2, 2.0), 0.16502107194333945, 0.166015625, 0.16550753538791937),
                      ((3000, 3, 0.7), 0.09306640278353412, 0.09375, 0.09305271099875177)],
}


@pytest.mark.parametrize(("definition", "case"),
                         [(d, c) for d, cases in RELPLOT.items() for c in cases])
def test_relplot_versions(definition, case):
    (n, seed, power), stat, width, at_005 = case
    gen = np.random.default_rng(seed)
    p = gen.uniform(size=n)
    df = pd.DataFrame({"probability": p, "outcome": (gen.uniform(size=n) < p**power)
                       .astype(int)})
    res = smooth_ece(df, definition=definition, n_resamples=0)
    assert res.definition == definition
    assert res.statistic == pytest.approx(stat, abs=1e-15) and res.sigma == width
    if at_005 is not None:
        fixed = smooth_ece(df, definition=definition, sigma=0.05, n_resamples=0)
        assert fixed.statistic == pytest.approx(at_005, abs=1e-15)
    if definition == "relplot-1.0.1":  # 'code' is its former name
        assert smooth_ece(df, definition="code", n_resamples=0).statistic == res.statistic


def _kumar_unbiased_square_ce(p, y, n_bins):
    """Kumar et al.'s ``unbiased_square_ce`` on equal-width bins, written out: a bin of
    fewer than 2 forecasts has error 0; otherwise (mean label - mean forecast)^2 minus
    mean label (1 - mean label) / (n_k - 1); weighted by the bin's share."""
    total = 0.0
    for k in range(n_bins):
        inside = [(a, b) for a, b in zip(p, y, strict=True)
                  if min(int(a * n_bins), n_bins - 1) == k]
        if len(inside) < 2:
            continue
        mp = sum(a for a, _ in inside) / len(inside)
        my = sum(b for _, b in inside) / len(inside)
        total += len(inside) / len(p) * ((my - mp) ** 2 - my * (1 - my) / (len(inside) - 1))
    return total


@pytest.mark.parametrize("seed", range(6))
def test_single_forecast_bins_zero_is_kumars_rule(seed):
    gen = np.random.default_rng(seed)
    p = np.concatenate([gen.beta(5, 2, size=49), [0.05]])  # one forecast alone in bin 0
    y = (gen.uniform(size=50) < p).astype(int)
    df = pd.DataFrame({"probability": p, "outcome": y})
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no SmallSampleWarning: the bin's error is set to 0
        res = calibration_error(df, n_bins=10, binning="equal_width", n_resamples=19,
                                single_forecast_bins="zero", rng=0)
    assert res.statistic == pytest.approx(_kumar_unbiased_square_ce(p, y, 10), abs=1e-14)
    assert res.single_forecast_bins == "zero"
    single = res.table["n"] == 1
    assert single.any()
    assert (res.table.loc[single, "plugin_term"] == res.table.loc[single, "correction"]).all()
    with pytest.warns(SmallSampleWarning, match="single forecast"):
        kept = calibration_error(df, n_bins=10, binning="equal_width", n_resamples=19, rng=0)
    assert kept.single_forecast_bins == "plugin"
    one = res.table.loc[single, "plugin_term"].sum() / 50
    assert kept.statistic - res.statistic == pytest.approx(one, abs=1e-14)
    with pytest.raises(ValueError, match="'single_forecast_bins' parameter of "
                       "calibration_error must be one of 'plugin', 'zero'"):
        calibration_error(df, single_forecast_bins="drop")


def test_bootstrap_equal_mass_bins_split_the_distinct_rows_drawn():
    """A resample's equal-mass bins are built from the distinct rows drawn, each counted
    once whatever its multiplicity (not from the drawn weight); the docstring says so,
    since the measured coverage is of this rule."""
    p = np.array([0.1, 0.2, 0.3, 0.4, 0.6, 0.7, 0.8, 0.9])
    y = np.array([0, 1, 0, 0, 1, 1, 0, 1], dtype=float)
    w = np.array([5, 1, 1, 1, 0, 0, 0, 0], dtype=float)  # 8 draws of 4 distinct rows
    got = _debiased_ce(p, y, w, 2, "equal_mass", 2)
    # the two bins of the distinct rows drawn: {0.1, 0.2} and {0.3, 0.4} (weights 6 and 2),
    # not the halves of the drawn weight ({0.1} alone holds 5 of the 8)
    fy, mp = np.array([1 / 6, 0.0]), np.array([0.7 / 6, 0.35])
    share, n_k = np.array([6, 2]) / 8, np.array([6.0, 2.0])
    want = float(np.sum(share * ((fy - mp) ** 2 - fy * (1 - fy) / (n_k - 1))))
    assert got[0] == pytest.approx(want, abs=1e-12)
    doc = " ".join(calibration_error.__doc__.split())
    assert "equal-mass bins split the distinct rows drawn, each counted once whatever its " \
           "multiplicity" in doc
