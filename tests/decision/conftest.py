"""Fixtures shared by the decision tests' files."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest


@pytest.fixture
def paired_leak() -> pd.DataFrame:
    """16 contexts of 3 rows in pairs that share a belief and, within each pair, their
    outcome; the action is the outcome (a perfect leak). No permutation of outcomes
    within the pairs, nor of the actions, changes the data."""
    belief = np.repeat(np.linspace(0.1, 0.9, 8), 2)
    outcome = np.repeat([0, 1, 1, 0, 1, 0, 0, 1], 2)
    return pd.DataFrame({"context": np.repeat(np.arange(16), 3),
                         "belief": np.repeat(belief, 3),
                         "action": np.repeat(np.where(outcome == 1, "yes", "no"), 3),
                         "outcome": np.repeat(outcome, 3)})
