"""The interval of a row-wise check's mean violation at its edges: it stays within the
values a mean violation can take, and an interval that is the point itself warns."""

from __future__ import annotations

import warnings

import numpy as np
import pytest
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from coherence import SmallSampleWarning
from coherence import bayes_check
from coherence import conditional_tuple_check
from coherence import negation_check

prob = st.sampled_from([0.0, 0.1, 0.25, 0.5, 0.75, 0.9, 1.0])


def test_conditional_tuple_interval_stops_at_one():
    # absolute violations 1 and 0: the bootstrap-t reached 5.08 for a mean that is at most 1
    res = conditional_tuple_check([1.0, 0.5], [1.0, 0.4], [0.0, 0.2], rng=0)
    assert res.statistic == pytest.approx(0.5)
    assert res.confidence_interval.low == 0.0
    assert res.statistic <= res.confidence_interval.high <= 1.0


def test_bayes_interval_stops_at_two_thirds():
    # a row at the largest Bayes error (2/3) and a coherent row: the interval reached 2.3
    res = bayes_check([1.0, 0.3], [1.0, 0.5], [1.0, 0.4], [0.5, 0.2], [0.0, 2 / 3],
                      [0.5, 3 / 7], rng=0)
    assert res.error[0] == pytest.approx(2 / 3)
    assert res.statistic <= res.confidence_interval.high <= 2 / 3


@given(st.lists(st.tuples(*[prob] * 6), min_size=2, max_size=6))
@settings(max_examples=40, deadline=None)
# equal rows: numpy's mean of six 0.49s is 0.49000000000000005, and the point interval
# was (0.49, 0.49), without it; likewise six 0.09000000000000001s (mean 0.08999999999999998)
@example([(0.1, 0.1, 0.5, 0.0, 0.0, 0.0)] * 6)
@example([(0.1, 0.1, 0.1, 0.0, 0.0, 0.0)] * 6)
def test_property_intervals_within_the_range_of_a_mean_violation(rows):
    f = np.array(rows, dtype=float)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallSampleWarning)
        bayes = bayes_check(*f.T, n_resamples=99, rng=0)
        tuple_ = conditional_tuple_check(f[:, 0], f[:, 1], f[:, 2], n_resamples=99, rng=0)
    assert bayes.error.max() <= 2 / 3 + 1e-12
    assert 0.0 <= bayes.confidence_interval.low <= bayes.statistic
    assert bayes.statistic <= bayes.confidence_interval.high <= 2 / 3 + 1e-12
    assert 0.0 <= tuple_.confidence_interval.low <= tuple_.statistic
    assert tuple_.statistic <= tuple_.confidence_interval.high <= 1.0


@pytest.mark.parametrize("call", [
    lambda: bayes_check([0.3], [0.5], [0.5], [0.2], [2 / 3], [3 / 7], rng=0),
    lambda: conditional_tuple_check([0.5], [0.4], [0.3], rng=0),
    lambda: negation_check([0.7], [0.5], rng=0),
    lambda: conditional_tuple_check([0.5] * 5, [0.4] * 5, [0.3] * 5, rng=0),
    lambda: bayes_check([0.3] * 4, [0.5] * 4, [0.5] * 4, [0.2] * 4, [2 / 3] * 4, [3 / 7] * 4,
                        rng=0),
], ids=["bayes one row", "tuple one row", "negation one row", "tuple equal rows",
        "bayes equal rows"])
def test_point_interval_warns(call):
    with pytest.warns(SmallSampleWarning, match="is the point itself"):
        res = call()
    assert res.confidence_interval.low == res.confidence_interval.high == res.statistic


def test_exactly_coherent_rows_do_not_warn():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        res = conditional_tuple_check([0.5] * 5, [0.4] * 5, [0.2] * 5, rng=0)
        neg = negation_check([0.7, 0.2], [0.3, 0.8], rng=0)
    assert tuple(res.confidence_interval)[:2] == (0.0, 0.0)
    assert neg.statistic == 0.0


def test_consistency_check_point_interval_warns_as_the_row_checks_do():
    """consistency_check's interval of one tuple, or of tuples of one violation, is the
    point itself: warned, naming tuples; exactly coherent tuples are not warned about."""
    import pandas as pd

    from coherence import consistency_check

    with pytest.warns(SmallSampleWarning, match=r"consistency_check: .*\(one tuple\)"):
        res = consistency_check(pd.DataFrame({"P": [0.5], "not_P": [0.6]}), "negation", rng=0)
    assert res.confidence_interval.low == res.confidence_interval.high == res.statistic
    with pytest.warns(SmallSampleWarning, match="3 tuples whose arbitrage violations are equal"):
        consistency_check(pd.DataFrame({"P": [0.5] * 3, "not_P": [0.6] * 3}), "negation",
                          rng=0)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        coherent = consistency_check(pd.DataFrame({"P": [0.3, 0.7], "not_P": [0.7, 0.3]}),
                                     "negation", rng=0)
        spread = consistency_check(pd.DataFrame({"P": [0.5, 0.4, 0.3],
                                                 "not_P": [0.6, 0.8, 0.7]}), "negation", rng=0)
    assert coherent.confidence_interval.high == 0.0
    assert spread.confidence_interval.low < spread.confidence_interval.high


def test_few_resamples_never_invert_an_interval():
    """With 1-3 resamples every pivot can fall on one side, putting the bootstrap-t
    interval wholly below 0 (or above the largest violation); cut there, its low end
    was above its high end (169 of 2,400 negation intervals of 2-7 rows). It is then the
    percentile interval of the resampled means, within the range."""
    rng = np.random.default_rng(5)
    inverted = []
    for rep in range(120):
        n = int(rng.integers(2, 8))
        p = rng.uniform(0.02, 0.98, n).round(2)
        q = np.clip(1 - p + rng.normal(0, 0.3, n), 0.01, 0.99).round(2)
        c = rng.uniform(0, 1, n).round(2)
        for b in (1, 2, 3):
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", SmallSampleWarning)
                results = {"negation": (negation_check(p, q, n_resamples=b, rng=rep), np.inf),
                           "tuple": (conditional_tuple_check(p, q, c, n_resamples=b, rng=rep),
                                     1.0)}
            for name, (res, upper) in results.items():
                ci = res.confidence_interval
                if not 0.0 <= ci.low <= ci.high <= upper:
                    inverted.append((name, rep, b, ci.low, ci.high))
    assert inverted == []
