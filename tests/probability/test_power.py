"""Tests of pairs_power."""

from __future__ import annotations

import numpy as np
import pytest

from coherence import PairsPowerResult, conditional_forecasting, pairs_power
from coherence._probability._power import _binom_pvalues, _t_power
from tests.probability._helpers import coherent_pairs


# --------------------------------------------------------------------------- power
def test_t_power_matches_statsmodels():
    from statsmodels.stats.power import TTestPower

    for n, d in [(14, 0.09), (100, 0.3), (952, 0.0909)]:
        assert _t_power(n, d, 0.05, "two-sided") == pytest.approx(
            TTestPower().power(effect_size=d, nobs=n, alpha=0.05), rel=1e-6)
        assert _t_power(n, d, 0.05, "greater") == pytest.approx(
            TTestPower().power(effect_size=d, nobs=n, alpha=0.05, alternative="larger"),
            rel=1e-6)


def test_binom_pvalues_match_scipy():
    from scipy.stats import binomtest

    for n, p0 in [(13, 0.5), (20, 0.3)]:
        for alt in ("two-sided", "greater", "less"):
            ours = _binom_pvalues(n, p0, alt)
            ref = [binomtest(k, n, p0, alternative=alt).pvalue for k in range(n + 1)]
            np.testing.assert_allclose(ours, ref, rtol=1e-9)


def test_pairs_power_mean_improvement():
    res = pairs_power(effect=0.01, sd=0.11, n=14, n_simulations=1000, rng=0)
    assert isinstance(res, PairsPowerResult)
    assert res.n_required == 952
    assert res.achieved_power >= 0.8 > _t_power(951, 0.01 / 0.11, 0.05, "two-sided")
    assert abs(res.simulated_power - 0.8) < 0.05
    assert res.power_at_n == pytest.approx(0.0615, abs=5e-4)
    assert tuple(res.to_frame().columns) == PairsPowerResult.frame_columns()
    assert res._repr_html_() == res.summary()._repr_html_() and "952" in res._repr_html_()


def test_pairs_power_win_rate():
    res = pairs_power(metric="win_rate", win_rate=0.6, n_simulations=1000, rng=0)
    assert res.achieved_power >= 0.8
    from coherence._probability._power import _binom_power

    assert _binom_power(res.n_required - 1, 0.6, 0.5, 0.05, "two-sided") < 0.8
    assert abs(res.simulated_power - res.achieved_power) < 0.04


def test_pairs_power_from_pilot():
    df = coherent_pairs(40, np.random.default_rng(2))
    res = pairs_power(df, effect=0.02, n_simulations=200, rng=0)
    x = conditional_forecasting(df, rng=0).improvement
    assert res.sd == pytest.approx(x.std(ddof=1))
    assert res.source == "pilot" and res.n_pilot == 40
    a = pairs_power(df, effect=0.02, n_simulations=200, rng=5)
    b = pairs_power(df, effect=0.02, n_simulations=200, rng=5)
    assert a.simulated_power == b.simulated_power


def test_pairs_power_validation():
    with pytest.raises(ValueError, match="The 'sd' parameter of pairs_power must be a float > 0"):
        pairs_power(effect=0.01)
    with pytest.raises(ValueError, match="The 'metric' parameter of pairs_power must be one of"):
        pairs_power(metric="brier", sd=0.1)
    with pytest.raises(ValueError, match="The 'power' parameter of pairs_power"):
        pairs_power(sd=0.1, power=1.0)
    with pytest.raises(ValueError, match="The 'effect' parameter of pairs_power must be non-zero"):
        pairs_power(sd=0.1, effect=0.0)
    with pytest.raises(ValueError, match="The 'win_rate' parameter of pairs_power must be "
                       "different"):
        pairs_power(metric="win_rate", win_rate=0.5)
    with pytest.raises(ValueError, match="The 'category' parameter of pairs_power"):
        pairs_power(coherent_pairs(5, np.random.default_rng(0)), category="weak")
    with pytest.raises(ValueError, match="The 'n' parameter of pairs_power must be an int >= 2"):
        pairs_power(sd=0.1, n=1)
