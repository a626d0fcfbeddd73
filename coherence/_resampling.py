"""Resampling that respects the design: repetitions of one context move together.

Array layer only (integer group codes in, index arrays out). Public functions
convert a ``group`` column with :func:`group_codes` once and pass the codes
down.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "cluster_bootstrap_indices",
    "cluster_bootstrap_mean_interval",
    "cluster_bootstrap_means",
    "cluster_members",
    "group_codes",
    "grouped_folds",
    "percentile_interval",
]


def group_codes(df: pd.DataFrame, column: str, *, owner: str | None = None) -> np.ndarray:
    """Integer codes 0..G-1 of a grouping column (any hashable values; no missing)."""
    from ._validation import label_column

    codes, _ = label_column(df, column, owner=owner)
    return codes


def cluster_members(groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Rows sorted by group and the start offsets: rows of group g are
    ``order[starts[g]:starts[g + 1]]``."""
    groups = np.asarray(groups, dtype=np.int64)
    order = np.argsort(groups, kind="stable")
    counts = np.bincount(groups)
    starts = np.concatenate([[0], np.cumsum(counts)])
    return order, starts


def cluster_bootstrap_indices(groups: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Row indices of one cluster-bootstrap resample.

    Draw G clusters with replacement from the G observed ones and take all rows
    of each drawn cluster (a cluster drawn twice appears twice).
    """
    order, starts = cluster_members(groups)
    n_groups = len(starts) - 1
    drawn = rng.integers(0, n_groups, size=n_groups)
    return np.concatenate([order[starts[g]:starts[g + 1]] for g in drawn])


def grouped_folds(groups: np.ndarray, n_splits: int,
                  rng: np.random.Generator) -> list[tuple[np.ndarray, np.ndarray]]:
    """K-fold (train, test) row indices with whole groups in one fold, groups shuffled.

    Groups are assigned to folds in a random order so that fold sizes (in rows)
    are as equal as the group sizes allow (largest groups first, each to the
    currently smallest fold).
    """
    groups = np.asarray(groups, dtype=np.int64)
    counts = np.bincount(groups)
    n_groups = len(counts)
    if n_splits > n_groups:
        raise ValueError(f"The 'n_splits' parameter must be <= the number of groups "
                         f"({n_groups}); got {n_splits}.")
    perm = rng.permutation(n_groups)
    by_size = perm[np.argsort(-counts[perm], kind="stable")]
    fold_of_group = np.empty(n_groups, dtype=np.int64)
    load = np.zeros(n_splits, dtype=np.int64)
    for g in by_size:
        f = int(np.argmin(load))
        fold_of_group[g] = f
        load[f] += counts[g]
    fold = fold_of_group[groups]
    rows = np.arange(len(groups))
    return [(rows[fold != f], rows[fold == f]) for f in range(n_splits)]


def percentile_interval(samples: Any, confidence_level: float) -> tuple[float, float]:
    """Equal-tailed percentile interval of bootstrap replicates (NaNs ignored)."""
    arr = np.asarray(samples, dtype=np.float64)
    arr = arr[~np.isnan(arr)]
    if arr.size == 0:
        return (np.nan, np.nan)
    alpha = (1.0 - confidence_level) / 2.0
    low, high = np.quantile(arr, [alpha, 1.0 - alpha])
    return float(low), float(high)


def cluster_bootstrap_means(values: np.ndarray, clusters: np.ndarray, n_resamples: int,
                   rng: np.random.Generator) -> np.ndarray:
    """Cluster-bootstrap replicates of column means: ``(n_resamples, n_metrics)``.

    Clusters are drawn with replacement; a replicate's mean is the sum over the
    drawn clusters' rows divided by their row count (the mean of the stacked rows).
    """
    _, codes = np.unique(clusters, return_inverse=True)
    n_groups = int(codes.max()) + 1
    sums = np.zeros((n_groups, values.shape[1]))
    np.add.at(sums, codes, values)
    counts = np.bincount(codes, minlength=n_groups).astype(np.float64)
    draws = rng.integers(0, n_groups, size=(n_resamples, n_groups))
    flat = (draws + (np.arange(n_resamples) * n_groups)[:, None]).ravel()
    weights = np.bincount(flat, minlength=n_resamples * n_groups).reshape(
        n_resamples, n_groups).astype(np.float64)
    out: np.ndarray = (weights @ sums) / (weights @ counts)[:, None]
    return out


def cluster_bootstrap_mean_interval(values: np.ndarray, clusters: np.ndarray, n_resamples: int,
                    confidence_level: float, rng: np.random.Generator) -> tuple[float, float]:
    """Percentile CI of a mean by cluster bootstrap (NaN values ignored)."""
    ok = ~np.isnan(values)
    if ok.sum() == 0:
        return (np.nan, np.nan)
    codes = pd.factorize(clusters[ok])[0]
    boots = cluster_bootstrap_means(values[ok][:, None], codes, n_resamples, rng)[:, 0]
    return percentile_interval(boots, confidence_level)
