"""Holm and Benjamini-Hochberg written once (coherence/_multiplicity.py), against
statsmodels' ``multipletests`` and against their definitions by brute force."""

from __future__ import annotations

import numpy as np
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from coherence._multiplicity import adjust_pvalues
from coherence._multiplicity import benjamini_hochberg
from coherence._multiplicity import holm

PVALUES = st.lists(st.floats(0.0, 1.0, allow_nan=False), min_size=1, max_size=30)


def _holm_by_definition(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: (p[i], i))
    out = [0.0] * m
    for rank, i in enumerate(order):
        out[i] = max(min(1.0, (m - j) * p[order[j]]) for j in range(rank + 1))
    return out


def _bh_by_definition(p):
    m = len(p)
    order = sorted(range(m), key=lambda i: (p[i], i))
    out = [0.0] * m
    for rank, i in enumerate(order):
        out[i] = min(min(1.0, m * p[order[j]] / (j + 1)) for j in range(rank, m))
    return out


@given(PVALUES)
def test_holm_and_bh_by_definition(p):
    np.testing.assert_allclose(holm(np.array(p)), _holm_by_definition(p), rtol=1e-12, atol=1e-300)
    np.testing.assert_allclose(benjamini_hochberg(np.array(p)), _bh_by_definition(p),
                               rtol=1e-12, atol=1e-300)


# a cross-check (each statsmodels call costs ~40 ms): the definitions above are the exhaustive
# test; ties, zeros and ones given explicitly
@settings(max_examples=10)
@given(PVALUES)
@example([0.01, 0.01, 0.04, 0.04, 0.5])
@example([0.0, 0.0, 1.0, 1.0])
def test_equal_to_statsmodels(p):
    from statsmodels.stats.multitest import multipletests

    arr = np.array(p)
    np.testing.assert_allclose(holm(arr), multipletests(arr, method="holm")[1], rtol=1e-12,
                               atol=1e-300)
    np.testing.assert_allclose(benjamini_hochberg(arr),
                               multipletests(arr, method="fdr_bh")[1], rtol=1e-12, atol=1e-300)


def test_nan_entries_stay_out_of_the_family():
    got = adjust_pvalues(np.array([0.01, np.nan, 0.04]), "holm")
    np.testing.assert_allclose(got, [0.02, np.nan, 0.04])
    assert len(holm(np.empty(0))) == 0 and len(benjamini_hochberg(np.empty(0))) == 0
