"""The table functions the fuzz suite leaves to their own suites (menus, checker sets,
dated per-question measures) give the same estimates on their table in another row
order, as ``tests/core/test_fuzz.py::test_row_order_changes_no_estimate`` checks for the
others."""

from __future__ import annotations

import warnings
from collections.abc import Callable
from typing import Any

import numpy as np
import pandas as pd
import pytest

import coherence


def _cases() -> dict[str, tuple[pd.DataFrame, Callable[[pd.DataFrame], Any]]]:
    from benchmarks.iia_designs import Design as MenuDesign
    from benchmarks.iia_designs import generate as menus
    from tests.probability.test_consistency_noise import _study as checker_sets
    from tests.scoring.test_decomposition import _long
    from tests.scoring.test_knowledge import _study as dated

    gen = np.random.default_rng(0)
    pairs = np.column_stack([gen.uniform(0.2, 0.8, 60), gen.uniform(0.2, 0.8, 60)])
    return {
        "iia_test": (menus(MenuDesign(), 11), lambda d: coherence.iia_test(d, rng=0)),
        "coherence_by_knowledge": (dated(np.random.default_rng(0), 0.1),
                                   lambda d: coherence.coherence_by_knowledge(d, rng=0)),
        "consistency_noise_test": (checker_sets(checker="negation"),
                                   lambda d: coherence.consistency_noise_test(d, "negation",
                                                                              rng=0)),
        "brier_decomposition": (_long("negation", pairs, gen.integers(0, 2, 60)),
                                lambda d: coherence.brier_decomposition(d, checker="negation",
                                                                        rng=0)),
    }


@pytest.mark.parametrize("name", ["iia_test", "coherence_by_knowledge",
                                  "consistency_noise_test", "brier_decomposition"])
def test_row_order_changes_no_estimate(name: str) -> None:
    data, call = _cases()[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", coherence.CoherenceWarning)
        clean = call(data).to_frame().iloc[0]
        for seed in (1, 2):
            order = np.random.default_rng(seed).permutation(len(data))
            moved = call(data.iloc[order]).to_frame().iloc[0]
            for column, value in clean.items():
                if column in ("pvalue", "ci_low", "ci_high") or isinstance(value, str | bool):
                    continue
                assert moved[column] == pytest.approx(value, rel=1e-9, abs=1e-12,
                                                      nan_ok=True), column
