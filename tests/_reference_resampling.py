"""One cluster-bootstrap resample's rows, through the product's own drawing code.

The tests check the vectorised resamplers of :mod:`coherence._resampling` against stacking
the rows of clusters drawn one resample at a time (same generator stream).
"""

from __future__ import annotations

import numpy as np

from coherence._resampling import cluster_draws
from coherence._resampling import cluster_resample_rows
from coherence._resampling import cluster_weights


def cluster_bootstrap_indices(groups: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Row indices of one cluster-bootstrap resample.

    Draw G clusters with replacement from the G observed ones and take all rows
    of each drawn cluster (a cluster drawn twice appears twice).
    """
    n_groups = int(np.max(groups)) + 1
    rows, _ = cluster_resample_rows(groups, cluster_draws(n_groups, 1, rng))
    return rows


def bootstrap_weights(n: int, groups: np.ndarray | None, n_resamples: int,
                      gen: np.random.Generator) -> np.ndarray:
    """(B, n) row multiplicities of a row (or cluster) bootstrap, drawn at once (the
    calibration error draws them in chunks of the same stream)."""
    if groups is None:
        return cluster_weights(cluster_draws(n, n_resamples, gen), n)
    n_groups = int(groups.max()) + 1
    return cluster_weights(cluster_draws(n_groups, n_resamples, gen), n_groups)[:, groups]
