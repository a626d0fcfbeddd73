"""Shared by the tests of key_event_recall, grounding_split and the matchers (a hindsight
graph and forecast events) and by those of the Brier decomposition's kernels (small
tables of forecasts, outcomes and clusters)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from hypothesis import strategies as st

#: (forecasts, outcomes, cluster labels) of 3 to 30 rows, for the decomposition's kernels
DECOMPOSITION_TABLES = st.integers(3, 30).flatmap(lambda n: st.tuples(
    st.lists(st.floats(0, 1), min_size=n, max_size=n),
    st.lists(st.integers(0, 1), min_size=n, max_size=n),
    st.lists(st.integers(0, 5), min_size=n, max_size=n)))


def cluster_codes(g):
    """Cluster labels as codes 0..G-1, at least two clusters (one per row if all alike)."""
    codes = np.unique(g, return_inverse=True)[1]
    return codes if codes.max() > 0 else np.arange(len(g))


def hindsight() -> pd.DataFrame:
    return pd.DataFrame({
        "question": ["q"] * 5,
        "event": ["h1", "h1", "h2", "h3", "out"],
        "title": ["Rates rise", "Rates rise", "Port strike", "Minor rumour",
                  "Question resolves yes"],
        "description": ["central bank", "central bank", None, "", "rates rise central bank"],
        "date": ["2024-01-05", "2024-01-05", "2024-01-10", None, "2024-02-01"],
        # impact h1 = max(0.9 * 0.5, 0.6 * 1.0) = 0.6; h2 = 0.25; h3 = 0.1 (< min_impact)
        "magnitude": [0.9, 0.6, 0.5, 0.1, 1.0],
        "confidence": [0.5, 1.0, 0.5, 1.0, 1.0],
        "is_outcome": [False, False, False, False, True],
    })


def forecast_events() -> pd.DataFrame:
    return pd.DataFrame({
        "model": ["m1", "m1", "m1", "m2"],
        "question": ["q"] * 4,
        "title": ["Central bank rates rise", "Strike at port ends", "Weather news",
                  "Weather news"],
        "description": [None] * 4,
        "date": ["2024-01-04", "2024-01-01", None, None],
    })
