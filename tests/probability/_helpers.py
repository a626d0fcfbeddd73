"""Shared by the tests of conditional_forecasting, read_pairs and pairs_power: coherent pairs."""

from __future__ import annotations

import numpy as np
import pandas as pd


def coherent_pairs(n: int, rng: np.random.Generator, category: str = "strong") -> pd.DataFrame:
    """Pairs whose six elicited numbers come from one joint and whose outcomes are drawn
    from it; named by their category (``'strong-0'``, ...): other calls draw other pairs."""
    joint = rng.dirichlet(np.ones(4), size=n)  # cells a1b1, a1b0, a0b1, a0b0
    j11, j10, j01, _ = joint.T
    p_a, p_b = j11 + j10, j11 + j01
    cell = np.array([rng.choice(4, p=row) for row in joint])
    return pd.DataFrame({
        "pair": [f"{category}-{i}" for i in range(n)], "category": category, "p_a": p_a,
        "p_b": p_b,
        "p_a_given_b1": j11 / p_b, "p_a_given_b0": j10 / (1 - p_b),
        "p_b_given_a1": j11 / p_a, "p_b_given_a0": j01 / (1 - p_a),
        "a_outcome": (cell <= 1).astype(int), "b_outcome": np.isin(cell, (0, 2)).astype(int),
    })
