"""One cluster-bootstrap resample's rows, through the product's own drawing code.

The tests check the vectorised resamplers of :mod:`coherence._resampling` against stacking
the rows of clusters drawn one resample at a time (same generator stream).
"""

from __future__ import annotations

import numpy as np

from coherence._resampling import cluster_draws
from coherence._resampling import cluster_resample_rows


def cluster_bootstrap_indices(groups: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """Row indices of one cluster-bootstrap resample.

    Draw G clusters with replacement from the G observed ones and take all rows
    of each drawn cluster (a cluster drawn twice appears twice).
    """
    n_groups = int(np.max(groups)) + 1
    rows, _ = cluster_resample_rows(groups, cluster_draws(n_groups, 1, rng))
    return rows
