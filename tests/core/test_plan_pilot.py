"""plan(): the pilot is validated up front, its own rows named (audit item 9)."""

import numpy as np
import pytest

import coherence

KW = {"test": "ci_test", "n_contexts": 10, "n_repetitions": 2, "n_sims": 2, "rng": 0,
      "options": {"n_resamples": 9, "ci_method": None}}


@pytest.fixture(scope="module")
def pilot():
    return coherence.simulate("leaky", n_contexts=12, n_repetitions=2, rng=0).data


def test_nan_belief_names_the_pilot_row(pilot):
    d = pilot.copy()
    d.loc[3, "belief"] = np.nan
    with pytest.raises(ValueError, match=r"Column 'belief' \(input to plan\) must not contain "
                       r"NaN or missing values; 1 offending row \(first: row 3\)"):
        coherence.plan(d, **KW)


def test_context_ids_typed_two_ways_raise(pilot):
    d = pilot.astype({"context": object})
    d.loc[0, "context"] = str(d.loc[0, "context"])
    with pytest.raises(ValueError, match=r"Column 'context' \(input to plan\) .*'0' / 0"):
        coherence.plan(d, **KW)


def test_missing_context_raises(pilot):
    d = pilot.astype({"context": float})
    d.loc[0, "context"] = np.nan
    with pytest.raises(ValueError, match=r"Column 'context' \(input to plan\) must not contain "
                       r"missing values; 1 offending row \(first: row 0\)"):
        coherence.plan(d, **KW)
