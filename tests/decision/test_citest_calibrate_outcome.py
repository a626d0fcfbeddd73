"""``ci_test(calibrate=...)`` needs the outcome coded 0/1 (or bool): the isotonic calibration
predicts the outcome 1, and coding other labels by their sort order picked the event by
spelling ('event' < 'no_event' made 'no_event' the event and flipped the estimate)."""

from __future__ import annotations

import warnings

import pandas as pd
import pytest

import coherence


@pytest.fixture(scope="module")
def rational() -> pd.DataFrame:
    return coherence.simulate("rational", n_contexts=200, rng=0).data


def _ci(data: pd.DataFrame, **kwargs):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return coherence.ci_test(data, n_resamples=19, rng=0, **kwargs)


@pytest.mark.parametrize("calibrate", [True, "cross-fitted", "in-sample"])
@pytest.mark.parametrize("labels", [{1: "event", 0: "no_event"}, {1: "rain", 0: "dry"},
                                    {1: 2, 0: 1}])
def test_calibrate_refuses_labels_other_than_0_1(rational, calibrate, labels):
    data = rational.assign(outcome=rational["outcome"].map(labels))
    with pytest.raises(ValueError, match=(
            r"Column 'outcome' \(input to ci_test\) must be (numeric|binary \(0 or 1\)).*"
            r"offending rows? \(first: row \d+ = .*With calibrate set, the outcome must be "
            r"coded 0/1 \(or False/True\), 1 the event")):
        _ci(data, calibrate=calibrate)
    # without calibration any two labels are classes, as before
    assert _ci(data).statistic == pytest.approx(_ci(rational).statistic, abs=1e-12)


def test_calibrate_accepts_0_1_bool_and_float(rational):
    ref = _ci(rational, calibrate=True)
    for outcome in (rational["outcome"].astype(bool), rational["outcome"].astype(float)):
        res = _ci(rational.assign(outcome=outcome), calibrate=True)
        assert res.statistic == pytest.approx(ref.statistic, abs=1e-12)
        assert res.confidence_interval == ref.confidence_interval
        assert res.pvalue == ref.pvalue


def test_calibrate_with_one_outcome_class(rational):
    """An outcome that is 1 everywhere is the event everywhere (its sort code was 0)."""
    res = _ci(rational.assign(outcome=1), calibrate=True)
    assert res.statistic == 0.0 and res.pvalue == 1.0  # a constant outcome: trivial
