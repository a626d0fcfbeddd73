"""Scoring functions on degenerate data: a constant forecast, a perfect forecaster, a single
question, forecasts at 0 and 1. Each test failed before its fix (a NaN or -inf left in a
result, a RuntimeWarning of numpy, or a zero-width interval without a word)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest

from coherence import DegenerateDataWarning
from coherence import SmallSampleWarning
from coherence import TiesWarning
from coherence import brier_decomposition
from coherence import calibration_error
from coherence import forecastbench_scores
from coherence import smooth_ece
from coherence._scoring import _smooth_ece
from coherence._scoring._smooth_ece import Smoother
from coherence._scoring._smooth_ece import smooth_curve
from coherence._scoring._smooth_ece import smooth_grid
from tests._reference_calibration import reference_smooth_ece_sigma


def reference_residual(t: float, f, y, w, sigma: float) -> float:
    """r(t) = sum w_i K(t, f_i) r_i / sum w_i K(t, f_i) by loops: each kernel's log summed
    over 41 mirror images, every weight taken relative to the largest (log-sum-exp)."""
    logs = []
    for fi in f:
        expo = [-0.5 * ((t - (s * fi + 2 * k)) / sigma) ** 2
                for k in range(-10, 11) for s in (1.0, -1.0)]
        top = max(expo)
        logs.append(top + math.log(math.fsum(math.exp(e - top) for e in expo)))
    top = max(lg for lg, wi in zip(logs, w, strict=True) if wi > 0)
    rel = [wi * math.exp(lg - top) if wi > 0 else 0.0 for lg, wi in zip(logs, w, strict=True)]
    return math.fsum(ri * (yi - fi) for ri, yi, fi in zip(rel, y, f, strict=True)) / math.fsum(rel)


def constant_forecast(seed: int = 1, n: int = 200) -> pd.DataFrame:
    gen = np.random.default_rng(seed)
    return pd.DataFrame({"probability": np.full(n, 0.3),
                         "outcome": (gen.uniform(size=n) < 0.3).astype(int)})


def test_smooth_ece_constant_forecast_is_finite_and_exact():
    # was: 23 of 1334 grid points NaN or inf (37 of the band), 'invalid value encountered'
    # RuntimeWarnings, and rounding noise for a curve over most of the grid
    df = constant_forecast()
    res = smooth_ece(df, n_resamples=100, rng=0)
    tab = res.table
    assert np.isfinite(tab.to_numpy()).all()
    gap = df["outcome"].mean() - 0.3
    # one forecast value: r(t) is its mean residual at every t, the SmoothECE |gap| itself
    np.testing.assert_allclose(tab["residual"], gap, rtol=0, atol=1e-9)
    assert res.statistic == pytest.approx(abs(gap), abs=1e-9)
    assert res.sigma == pytest.approx(abs(gap), abs=1e-6)
    assert res.statistic == pytest.approx(
        reference_smooth_ece_sigma(df["probability"], df["outcome"], res.sigma), abs=1e-6)
    # each resample's curve is flat too: so is the band
    assert np.ptp(tab["band_low"] - tab["t"]) < 1e-9
    assert np.ptp(tab["band_high"] - tab["t"]) < 1e-9
    assert (tab["density"] >= 0).all()
    assert float(np.mean(tab["density"])) == pytest.approx(1.0, abs=1e-3)


@pytest.mark.parametrize("far", [0.35, 0.45])
def test_smooth_curve_is_exact_where_the_density_underflows(far):
    # far = 0.45: near t = 1 the resample's kernel weights, taken relative to the nearest
    # forecast of the sample (0.45, not drawn), underflow to 0 (exp(-937)); they are
    # taken again relative to the resample's own nearest forecast
    f = np.r_[np.full(150, 0.3), np.full(50, far)]
    gen = np.random.default_rng(4)
    y = (gen.uniform(size=200) < 0.3).astype(float)
    sigma = 0.01
    t = smooth_grid(sigma, 1000)
    # the point curve, and a resample without the forecasts at 0.35 (nearest t > 0.33)
    w = np.ones((2, 200))
    w[1, 150:] = 0.0
    w[1, :150] = gen.multinomial(200, np.full(150, 1 / 150))
    curve, dens, left = smooth_curve(Smoother(f, sigma, len(t)), f, y, w, t)
    assert left == 0 and np.isfinite(curve).all() and (dens >= 0).all()
    for k in range(0, len(t), 97):
        for b in range(2):
            assert curve[b, k] - t[k] == pytest.approx(
                reference_residual(t[k], f, y, w[b], sigma), abs=1e-9)


def test_smooth_ece_warns_where_the_exact_tail_is_too_costly(monkeypatch):
    monkeypatch.setattr(_smooth_ece, "_MAX_TAIL_WORK", 10.0)
    with pytest.warns(DegenerateDataWarning, match=r"smoothed curve or its band is NaN at \d+"):
        res = smooth_ece(constant_forecast(), n_resamples=20, rng=0)
    tab = res.table
    near = tab["density"] > 1e-3
    assert np.isfinite(tab.loc[near, ["smoothed", "band_low", "band_high"]].to_numpy()).all()
    assert tab["smoothed"].isna().any()


def questions(probability, outcome) -> pd.DataFrame:
    n = len(outcome)
    return pd.DataFrame({"question": [f"q{i}" for i in range(n)],
                         "probability": probability, "outcome": outcome})


def test_brier_decomposition_of_a_perfect_forecaster_warns_of_its_point_intervals():
    # was: [0, 0] intervals for the Brier scores and the reliability, without a word
    y = (np.random.default_rng(0).uniform(size=60) < 0.4).astype(int)
    with pytest.warns(SmallSampleWarning, match=r"interval\(s\) of brier, coherent_brier, "
                      r"reliability are the point itself: every resample") as rec:
        res = brier_decomposition(questions(y.astype(float), y), rng=0, n_resamples=200)
    assert [r.filename for r in rec] == [__file__]
    tab = res.table.set_index("component")
    # the points are right: every resample of a perfect forecaster scores 0
    assert (tab.loc[["brier", "coherent_brier", "reliability"], ["ci_low", "ci_high"]]
            == 0.0).all().all()
    assert tab.loc["resolution", "ci_high"] > tab.loc["resolution", "ci_low"]


def test_brier_decomposition_with_outcomes_all_equal_warns_of_its_point_intervals():
    with pytest.warns(SmallSampleWarning, match=r"brier, coherent_brier, reliability, "
                      r"uncertainty are the point itself"):
        res = brier_decomposition(questions(0.3, np.ones(40, dtype=int)), rng=0,
                                  n_resamples=200)
    tab = res.table.set_index("component")
    assert tab.loc["brier", "ci_low"] == tab.loc["brier", "ci_high"] == pytest.approx(0.49)
    assert tab.loc["uncertainty", "ci_low"] == tab.loc["uncertainty", "ci_high"] == 0.0


def test_brier_decomposition_does_not_warn_of_zeros_the_forecasts_fix():
    # a constant forecast has one bin (resolution and within-bin part 0 in every resample),
    # forecasts on the bins' grid have no spread within a bin: structural, not a sample's
    # lack of uncertainty (the forecasting study against a fake server was warned of both)
    gen = np.random.default_rng(3)
    y = (gen.uniform(size=40) < 0.5).astype(int)
    for p in (np.full(40, 0.3), (np.floor(gen.uniform(size=40) * 10) + 0.5) / 10):
        with warnings.catch_warnings():
            warnings.simplefilter("error", SmallSampleWarning)
            res = brier_decomposition(questions(p, y), rng=0, n_resamples=200)
        assert abs(res.table.set_index("component").loc["within_bin", "value"]) <= 1e-12


@pytest.mark.filterwarnings("ignore:.*cover less than their level:coherence.SmallSampleWarning")
def test_forecastbench_brier_index_of_a_perfect_forecaster_is_100():
    # was NaN: its adjusted Brier, 0 on a complete panel, came out as -5.6e-17
    gen = np.random.default_rng(0)
    y = (gen.uniform(size=12) < 0.5).astype(int)
    base = pd.DataFrame({"question": [f"q{i}" for i in range(12)], "outcome": y})
    data = pd.concat([base.assign(model="a", probability=gen.uniform(size=12)),
                      base.assign(model="perfect", probability=y.astype(float))])
    # a perfect naive forecaster leaves bss_relative 0 / 0: NaN, said (it was silent)
    with pytest.warns(DegenerateDataWarning, match=r"'bss_relative' is NaN for perfect, a: "
                      r"the naive forecaster 'perfect' has a Brier score of 0"):
        res = forecastbench_scores(data, naive="perfect", n_resamples=50, rng=0)
    tab = res.table.set_index("model")
    assert tab["bss_relative"].isna().all() and tab["bss"].notna().all()
    assert abs(tab.loc["perfect", "difficulty_adjusted_brier"]) < 1e-15
    assert tab.loc["perfect", "brier_index"] == pytest.approx(100.0, abs=1e-9)
    assert tab.loc["perfect", "brier_index_ci_low"] == pytest.approx(100.0, abs=1e-5)
    assert list(tab.index) == ["perfect", "a"]  # ranked first, not last


def test_calibration_error_warns_of_a_point_interval_up_to_rounding():
    # was silent: a constant forecast of 0.3 for outcomes all 1 gave the interval
    # [0.48999999999999966, 0.48999999999999994], not equal ends, so no warning
    df = pd.DataFrame({"probability": np.full(30, 0.3), "outcome": np.ones(30, dtype=int)})
    with (pytest.warns(TiesWarning, match=r"1 equal-mass bin\(s\) used"),
          pytest.warns(SmallSampleWarning, match=r"the interval is the point 0\.49 itself")):
        res = calibration_error(df, n_resamples=50, rng=0)
    assert res.confidence_interval.high - res.confidence_interval.low < 1e-12
    assert res.statistic == pytest.approx(0.49)
