"""Shared by the tests of key_event_recall, grounding_split and the matchers: a hindsight
graph and forecast events."""

from __future__ import annotations

import pandas as pd


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
