"""The closed-form intervals and tests shared by the checks (coherence._intervals)."""

import math

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy import stats

from coherence._intervals import is_flat
from coherence._intervals import normal_interval
from coherence._intervals import t_interval
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


@given(st.lists(st.floats(-5, 5), min_size=2, max_size=30),
       st.sampled_from([0.8, 0.9, 0.95, 0.99]))
def test_t_interval_reference(values, level):
    x = np.array(values)
    ci = t_interval(x, level)
    m = x.mean()
    if x.std(ddof=1) == 0.0:
        assert ci.low == ci.high == m
        return
    q = stats.t.ppf(0.5 + level / 2, x.size - 1)
    se = x.std(ddof=1) / math.sqrt(x.size)
    assert ci.low == pytest.approx(m - q * se, rel=1e-9, abs=1e-12)
    assert ci.high == pytest.approx(m + q * se, rel=1e-9, abs=1e-12)


def test_t_interval_of_equal_values_is_the_point():
    # three equal values whose mean rounds off them: the sample std is about 1e-17, not
    # 0, and scipy warned of catastrophic cancellation (an error under the test settings)
    x = np.full(3, 0.1)
    assert float(x.std(ddof=1)) > 0.0
    mean = float(x.mean())
    assert tuple(t_interval(x)) == (mean, mean, 0.95)


def test_t_interval_drops_nan_needs_two_and_keeps_an_infinite_mean():
    ci = t_interval(np.array([1.0, 2.0, np.nan, 3.0]))
    assert ci == t_interval(np.array([1.0, 2.0, 3.0]))
    assert np.isnan(t_interval(np.array([1.0, np.nan])).low)
    # an infinite value makes the mean infinite: the interval is that point, not the
    # finite values' interval (which would exclude the statistic)
    assert tuple(t_interval(np.array([1.0, 2.0, np.inf, 3.0]))[:2]) == (np.inf, np.inf)
    assert np.isnan(t_interval(np.array([1.0, -np.inf, np.inf])).low)


def test_ttest_pvalue_and_flat():
    x = np.array([0.1, -0.3, 0.4, 0.2, 0.25])
    stat = x.mean() / (x.std(ddof=1) / math.sqrt(x.size))
    assert ttest_pvalue(x) == pytest.approx(2 * stats.t.sf(abs(stat), x.size - 1), rel=1e-12)
    assert is_flat(np.array([0.2])) and is_flat(np.full(4, 0.2))
    assert np.isnan(ttest_pvalue(np.full(4, 0.2)))


def test_normal_interval():
    x = np.array([0.1, -0.3, 0.4, 0.2, 0.25])
    sd, low, high = normal_interval(x, 0.95)
    half = 1.959963984540054 * x.std(ddof=1) / math.sqrt(x.size)
    assert sd == pytest.approx(x.std(ddof=1))
    assert (low, high) == pytest.approx((x.mean() - half, x.mean() + half), rel=1e-12)
    assert normal_interval(np.full(3, 0.5), 0.9)[1:] == (0.5, 0.5)
    assert all(np.isnan(normal_interval(np.array([1.0]), 0.9)))
