import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coherence._resampling import (
    cluster_bootstrap_indices,
    group_codes,
    grouped_folds,
    percentile_interval,
)


def test_group_codes_any_labels():
    df = pd.DataFrame({"context": ["b", "a", "b", "c"]})
    assert list(group_codes(df, "context")) == [1, 0, 1, 2]


@given(sizes=st.lists(st.integers(1, 5), min_size=2, max_size=30), seed=st.integers(0, 999))
def test_cluster_bootstrap_keeps_clusters_whole(sizes, seed):
    groups = np.repeat(np.arange(len(sizes)), sizes)
    idx = cluster_bootstrap_indices(groups, np.random.default_rng(seed))
    drawn = groups[idx]
    # every drawn cluster appears with all of its rows, a whole number of times
    counts = np.bincount(drawn, minlength=len(sizes))
    sizes_arr = np.array(sizes)
    assert np.all(counts % sizes_arr == 0)
    # G clusters are drawn, so the drawn multiplicities add up to G
    assert (counts // sizes_arr).sum() == len(sizes)
    # a cluster drawn m times contributes each of its own rows exactly m times
    rows = np.bincount(idx, minlength=len(groups))
    assert np.array_equal(rows, (counts // sizes_arr)[groups])


@given(sizes=st.lists(st.integers(1, 6), min_size=5, max_size=40),
       k=st.integers(2, 5), seed=st.integers(0, 999))
def test_grouped_folds_partition_groups(sizes, k, seed):
    groups = np.repeat(np.arange(len(sizes)), sizes)
    folds = grouped_folds(groups, k, np.random.default_rng(seed))
    tests = np.concatenate([te for _, te in folds])
    assert sorted(tests) == list(range(len(groups)))
    for train, test in folds:
        assert not set(groups[train]) & set(groups[test])


def test_grouped_folds_too_many_splits():
    with pytest.raises(ValueError, match="must be <= the number of groups"):
        grouped_folds(np.array([0, 0, 1]), 3, np.random.default_rng(0))


def test_percentile_interval():
    low, high = percentile_interval(np.arange(1001.0), 0.9)
    assert low == pytest.approx(50.0) and high == pytest.approx(950.0)
    assert np.isnan(percentile_interval([np.nan], 0.95)[0])
