"""The closed-form intervals and tests shared by the checks (coherence._intervals)."""

import math

import numpy as np
import pytest
from scipy import stats

from coherence._intervals import is_flat
from coherence._intervals import normal_interval
from coherence._intervals import ttest_pvalue
from coherence._intervals import wilson_interval


def test_wilson_interval_reference():
    # Wilson (1927): centre (k + z^2/2) / (n + z^2), half-width z sqrt(...) / (n + z^2)
    k, n, level = 7, 20, 0.95
    z = stats.norm.ppf(0.975)
    centre = (k + z * z / 2) / (n + z * z)
    half = z * math.sqrt(k * (n - k) / n + z * z / 4) / (n + z * z)
    ci = wilson_interval(k, n, level)
    assert ci.low == pytest.approx(centre - half, rel=1e-12)
    assert ci.high == pytest.approx(centre + half, rel=1e-12)
    assert ci.confidence_level == level
    assert np.isnan(wilson_interval(0, 0).low)


def test_ttest_pvalue_and_flat():
    x = np.array([0.1, -0.3, 0.4, 0.2, 0.25])
    stat = x.mean() / (x.std(ddof=1) / math.sqrt(x.size))
    assert ttest_pvalue(x) == pytest.approx(2 * stats.t.sf(abs(stat), x.size - 1), rel=1e-12)
    assert is_flat(np.array([0.2])) and is_flat(np.full(4, 0.2))
    assert np.isnan(ttest_pvalue(np.full(4, 0.2)))
    one = stats.t.sf(stat, x.size - 1)  # the mean is positive: "greater" halves it
    assert ttest_pvalue(x, "greater") == pytest.approx(one, rel=1e-12)
    assert ttest_pvalue(x, "less") == pytest.approx(1.0 - one, rel=1e-12)


def test_normal_interval():
    x = np.array([0.1, -0.3, 0.4, 0.2, 0.25])
    sd, low, high = normal_interval(x, 0.95)
    half = 1.959963984540054 * x.std(ddof=1) / math.sqrt(x.size)
    assert sd == pytest.approx(x.std(ddof=1))
    assert (low, high) == pytest.approx((x.mean() - half, x.mean() + half), rel=1e-12)
    assert normal_interval(np.full(3, 0.5), 0.9)[1:] == (0.5, 0.5)
    assert all(np.isnan(normal_interval(np.array([1.0]), 0.9)))
