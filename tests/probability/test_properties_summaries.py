"""Hypothesis properties of :class:`coherence.ViolationSummary`, the one record of the
mean, median and share above a threshold of a violation array.

The record against plain Python loops (sum, the middle of the sorted values, a count);
the results that hold records (``negation_check``, ``conditional_tuple_check``,
``consistency_check``): their flat names of earlier releases (``mean_arbitrage``, ...)
are the record's fields, read-only, and ``to_frame()`` keeps its columns of earlier
releases, in the same order, with the record's numbers.
"""

from __future__ import annotations

import dataclasses
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from coherence import RESULT_COLUMNS
from coherence import ConditionalTupleResult
from coherence import ConsistencyCheckResult
from coherence import NegationCheckResult
from coherence import ViolationSummary
from coherence import conditional_tuple_check
from coherence import consistency_check
from coherence import negation_check

#: one row, or rows of one violation, give a point interval with a warning; these
#: properties read the records, not the interval
pytestmark = pytest.mark.filterwarnings(
    "ignore:.*is the point itself:coherence.SmallSampleWarning")

#: violations heaped on a few values (ties at the thresholds), with an infinite one
heaped = st.sampled_from([0.0, 0.005, 0.01, 0.02, 0.05, 0.129, 0.5, 1.0, math.inf])
violations = st.lists(heaped | st.floats(0.0, 50.0, allow_nan=False), max_size=30)
thresholds = st.sampled_from([0.0, 0.01, 0.05, 0.129]) | st.floats(0.0, 2.0)

#: the to_frame() columns of earlier releases, written out
OLD_COLUMNS = {
    NegationCheckResult: (
        "mean_arbitrage", "median_arbitrage", "share_arbitrage_above", "mean_frequentist",
        "median_frequentist", "share_frequentist_above", "beta", "arbitrage_threshold",
        "frequentist_threshold"),
    ConditionalTupleResult: (
        "mean_absolute", "median_absolute", "share_absolute_above", "mean_arbitrage",
        "median_arbitrage", "share_arbitrage_above", "absolute_threshold",
        "arbitrage_threshold"),
    ConsistencyCheckResult: (
        "checker", "definition", "mean_arbitrage", "median_arbitrage",
        "trimmed_mean_arbitrage", "share_arbitrage_above", "mean_frequentist",
        "median_frequentist", "share_frequentist_above", "max_duality_gap", "tolerance",
        "sigma", "gamma", "beta", "n_resamples"),
}


def loop_mean(values: list[float]) -> float:
    total = 0.0
    for v in values:
        total += v
    return total / len(values)


def loop_median(values: list[float]) -> float:
    ordered = sorted(values)
    mid = len(ordered) // 2
    if len(ordered) % 2:
        return ordered[mid]
    return (ordered[mid - 1] + ordered[mid]) / 2


def loop_share(values: list[float], threshold: float, inclusive: bool) -> float:
    count = 0
    for v in values:
        if v > threshold or (inclusive and v == threshold):
            count += 1
    return count / len(values)


def assert_is_the_loops(record: ViolationSummary, values: list[float], threshold: float,
                        inclusive: bool) -> None:
    assert record.n_values == len(values)
    assert record.threshold == threshold and record.inclusive is inclusive
    assert record.mean == pytest.approx(loop_mean(values), rel=1e-12, abs=1e-15)
    assert record.median == loop_median(values)
    assert record.share_above == loop_share(values, threshold, inclusive)


# --------------------------------------------------------------------------- the record
@given(violations, thresholds, st.booleans())
@settings(max_examples=200)
def test_the_record_is_the_loops(values, threshold, inclusive):
    record = ViolationSummary.of(values, threshold, inclusive=inclusive)
    if not values:
        assert record.n_values == 0 and record.threshold == threshold
        assert math.isnan(record.mean) and math.isnan(record.median)
        assert math.isnan(record.share_above)
        return
    assert_is_the_loops(record, values, threshold, inclusive)
    # an array, a shuffled list: the same record
    assert ViolationSummary.of(np.asarray(values), threshold, inclusive=inclusive) == record
    shuffled = ViolationSummary.of(values[::-1], threshold, inclusive=inclusive)
    assert shuffled.median == record.median and shuffled.share_above == record.share_above


def test_the_record_is_frozen_and_slotted():
    record = ViolationSummary.of([0.0, 0.02], 0.01)
    assert not hasattr(record, "__dict__")
    with pytest.raises(dataclasses.FrozenInstanceError):
        record.mean = 1.0  # type: ignore[misc]
    assert (record.mean, record.median, record.share_above, record.n_values) == (0.01, 0.01, 0.5, 2)
    # a value at the threshold counts only when inclusive
    assert ViolationSummary.of([0.01], 0.01).share_above == 0.0
    assert ViolationSummary.of([0.01], 0.01, inclusive=True).share_above == 1.0


# --------------------------------------------------------------------------- the results
def records_of(res) -> dict[str, ViolationSummary]:
    """The summary records a result holds, by violation name."""
    return {f.name.removesuffix("_summary"): getattr(res, f.name)
            for f in dataclasses.fields(res) if f.name.endswith("_summary")}


def assert_flat_names_read_the_records(res, expected: set[str]) -> None:
    records = records_of(res)
    assert set(records) == expected
    for name, record in records.items():
        assert isinstance(record, ViolationSummary)
        values = getattr(res, name)  # the per-row array the record summarises
        assert record == ViolationSummary.of(values, record.threshold,
                                             inclusive=record.inclusive)
        assert getattr(res, f"mean_{name}") == record.mean
        assert getattr(res, f"median_{name}") == record.median
        assert getattr(res, f"share_{name}_above") == record.share_above
        for flat in (f"mean_{name}", f"median_{name}", f"share_{name}_above"):
            # read-only: Python 3.11's frozen slotted dataclasses answer an assignment to
            # a name that is not a field (``n``, these) with a TypeError, to a field with
            # FrozenInstanceError (an AttributeError)
            with pytest.raises((AttributeError, TypeError)):
                setattr(res, flat, 0.0)
            assert f"{name}_summary" in (getattr(type(res), flat).__doc__ or "")


def assert_frame_keeps_its_columns(res) -> None:
    cls = type(res)
    frame = res.to_frame()
    assert cls.frame_columns() == RESULT_COLUMNS + OLD_COLUMNS[cls]
    assert list(frame.columns) == list(RESULT_COLUMNS + OLD_COLUMNS[cls])
    row = frame.iloc[0]
    for name in OLD_COLUMNS[cls]:
        assert row[name] == getattr(res, name) or (
            isinstance(row[name], float) and math.isnan(row[name])
            and math.isnan(getattr(res, name)))
    text = str(res.summary())
    for name in OLD_COLUMNS[cls]:
        assert f"  {name} " in text


def cents_rows(k: int, low: int = 0, high: int = 100, max_size: int = 10):
    return st.lists(st.lists(st.integers(low, high), min_size=k, max_size=k), min_size=1,
                    max_size=max_size)


def assert_axiom_result_reads_its_records(res, thresholds):
    """An axiom result's flat names, thresholds and records against loops over its arrays;
    its statistic is the mean of its first violation; its frame keeps its columns."""
    assert_flat_names_read_the_records(res, set(thresholds))
    for name, threshold in thresholds.items():
        assert getattr(res, f"{name}_threshold") == threshold
        assert_is_the_loops(getattr(res, f"{name}_summary"), list(getattr(res, name)),
                            threshold, False)
    assert res.statistic == getattr(res, f"mean_{next(iter(thresholds))}")
    assert_frame_keeps_its_columns(res)


@given(cents_rows(2), st.sampled_from([0.0, 0.01, 0.05]), st.sampled_from([0.0, 0.05, 0.3]))
@settings(max_examples=60)
def test_negation_check_reads_its_records(rows, arb_thr, freq_thr):
    f = np.asarray(rows, dtype=float) / 100
    res = negation_check(f[:, 0], f[:, 1], arbitrage_threshold=arb_thr,
                         frequentist_threshold=freq_thr)
    assert_axiom_result_reads_its_records(res, {"arbitrage": arb_thr, "frequentist": freq_thr})


@given(cents_rows(3, 1, 99, max_size=4), st.sampled_from([0.0, 0.05]),
       st.sampled_from([0.0, 0.01]))
@settings(max_examples=15, deadline=None)
def test_conditional_tuple_check_reads_its_records(rows, abs_thr, arb_thr):
    a, c, j = (np.asarray(rows, dtype=float) / 100).T
    res = conditional_tuple_check(a, c, j, absolute_threshold=abs_thr,
                                  arbitrage_threshold=arb_thr)
    assert_axiom_result_reads_its_records(res, {"absolute": abs_thr, "arbitrage": arb_thr})


@given(st.sampled_from(["negation", "and", "cond"]), st.data(),
       st.sampled_from([1e-9, 0.01]), st.sampled_from([(0.05, 2.58), (0.1, 1.0)]))
@settings(max_examples=25, deadline=None)
def test_consistency_check_reads_its_records(name, data, tolerance, sigma_gamma):
    columns = {"negation": ["P", "not_P"], "and": ["P", "Q", "P_and_Q"],
               "cond": ["P", "Q_given_P", "P_and_Q"]}[name]
    rows = data.draw(cents_rows(len(columns), 1, 99, max_size=5))
    sigma, gamma = sigma_gamma
    table = pd.DataFrame(np.asarray(rows, dtype=float) / 100, columns=columns)
    res = consistency_check(table, name, tolerance=tolerance, sigma=sigma, gamma=gamma,
                            n_resamples=19, rng=0)
    assert_flat_names_read_the_records(res, {"arbitrage", "frequentist"})
    assert res.arbitrage_summary.threshold == tolerance
    assert res.frequentist_summary.threshold == gamma * sigma
    assert res.arbitrage_summary.inclusive and res.frequentist_summary.inclusive
    assert_is_the_loops(res.arbitrage_summary, list(res.arbitrage), tolerance, True)
    assert_is_the_loops(res.frequentist_summary, list(res.frequentist), gamma * sigma, True)
    assert_frame_keeps_its_columns(res)


def test_the_record_refuses_nan_and_a_non_bool_inclusive():
    # a NaN violation counted as below the threshold: [0.0, nan, 0.5] had share_above 1/3
    # beside a NaN mean; a NaN threshold gave share_above 0.0; inclusive="no" was True
    with pytest.raises(ValueError, match=r"values must not be NaN.*1 of 3.*position 1"):
        ViolationSummary.of([0.0, math.nan, 0.5], 0.01)
    with pytest.raises(ValueError, match=r"threshold must be a number \(not NaN\)"):
        ViolationSummary.of([0.0, 0.5], math.nan)
    with pytest.raises(ValueError, match=r"threshold must be a number"):
        ViolationSummary.of([0.0, 0.5], "0.01")
    with pytest.raises(TypeError, match=r"inclusive must be True or False; got 'no'"):
        ViolationSummary.of([0.0, 0.01], 0.01, inclusive="no")
    # numpy's bools and numbers are accepted
    record = ViolationSummary.of([0.0, 0.01], np.float64(0.01), inclusive=np.bool_(True))
    assert record.share_above == 0.5 and record.inclusive is True
