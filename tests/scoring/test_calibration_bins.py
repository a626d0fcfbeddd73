"""The bins :func:`calibration_error` uses: reported, and a warning where ties merge them."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

from coherence import SmallSampleWarning
from coherence import TiesWarning
from coherence import calibration_error


def _tied(n=200, seed=0):
    gen = np.random.default_rng(seed)
    p = gen.choice([0.1, 0.3, 0.5, 0.7, 0.9], n)
    return pd.DataFrame({"probability": p, "outcome": (gen.uniform(size=n) < p).astype(int)})


def test_tied_forecasts_report_the_bins_used_and_warn():
    """Regression: 200 forecasts taking 5 values with n_bins=10 gave 5 equal-mass bins
    while the result said n_bins=10, without a word. The bins used are reported and a
    TiesWarning names both figures; the estimate and its interval are those of the 5 bins."""
    df = _tied()
    with pytest.warns(TiesWarning, match=r"n_bins=10 asked, 5 equal-mass bin\(s\) used: tied "
                      r"forecasts share a bin \(5 distinct values\)"):
        res = calibration_error(df, n_bins=10, n_resamples=50, rng=0)
    assert res.n_bins == 10 and res.n_bins_used == 5 and len(res.table) == 5
    frame = res.to_frame()
    assert frame.loc[0, "n_bins"] == 10 and frame.loc[0, "n_bins_used"] == 5
    assert "n_bins_used          5" in res.summary()
    # the estimate is unchanged: the table's 5 bins, weighted by their share
    t = res.table
    share = t["n"] / len(df)
    assert res.statistic == pytest.approx(float((share * (t["plugin_term"]
                                                          - t["correction"])).sum()), abs=1e-15)


def test_distinct_forecasts_use_every_bin_without_a_warning():
    gen = np.random.default_rng(1)
    p = gen.uniform(size=100)
    df = pd.DataFrame({"probability": p, "outcome": (gen.uniform(size=100) < p).astype(int)})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = calibration_error(df, n_bins=10, n_resamples=20, rng=0)
    assert res.n_bins_used == 10


def test_fewer_forecasts_than_bins_is_not_called_a_tie():
    """4 distinct forecasts and n_bins=10: 4 bins of one forecast each, said by the
    single-forecast SmallSampleWarning, not a TiesWarning; n_bins_used is 4."""
    df = pd.DataFrame({"probability": [0.1, 0.2, 0.3, 0.4], "outcome": [0, 1, 0, 1]})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = calibration_error(df, n_bins=10, n_resamples=20, rng=0)
    kinds = {type(w.message) for w in caught}
    assert SmallSampleWarning in kinds and TiesWarning not in kinds
    assert res.n_bins_used == 4


def test_ties_below_the_number_of_forecasts_warn_when_bins_exceed_them():
    """6 forecasts, 3 distinct values, n_bins=10: 3 bins used where 6 could have been."""
    df = pd.DataFrame({"probability": [0.2, 0.2, 0.5, 0.5, 0.8, 0.8],
                       "outcome": [0, 1, 0, 1, 1, 1]})
    with pytest.warns(TiesWarning, match=r"n_bins=10 asked, 3 equal-mass bin\(s\) used"):
        res = calibration_error(df, n_bins=10, n_resamples=20, rng=0)
    assert res.n_bins_used == 3


def test_equal_width_reports_non_empty_bins_without_a_ties_warning():
    """Equal-width bins are fixed by their edges, not merged by ties: empty ones are not
    used, and n_bins_used counts the others."""
    df = _tied()
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = calibration_error(df, n_bins=10, binning="equal_width", n_resamples=20, rng=0)
    assert res.n_bins_used == 5 == len(res.table)


def test_zero_rule_on_bins_of_one_forecast_each_warns_that_zero_is_by_construction():
    """Regression: with single_forecast_bins='zero' and as many bins as forecasts, every
    bin's error was counted 0 and the estimate was 0 without a word (20 badly calibrated
    forecasts: plug-in 0.617, estimate 0). A SmallSampleWarning now says so."""
    gen = np.random.default_rng(4)
    p = gen.uniform(size=20)
    df = pd.DataFrame({"probability": p, "outcome": (p < 0.5).astype(int)})  # inverted
    with pytest.warns(SmallSampleWarning, match=r"each of the 20 bin\(s\) holds a single "
                      "forecast, whose error single_forecast_bins='zero' counts as 0"):
        res = calibration_error(df, n_bins=20, single_forecast_bins="zero", n_resamples=20,
                                rng=0)
    assert res.statistic == 0.0 and res.plugin > 0.6 and res.n_bins_used == 20
    with warnings.catch_warnings():  # bins of several forecasts: the rule stays silent
        warnings.simplefilter("error")
        some = calibration_error(df, n_bins=4, single_forecast_bins="zero", n_resamples=20,
                                 rng=0)
    assert some.statistic > 0.1
