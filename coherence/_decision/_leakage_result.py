"""The result of :func:`leakage_test`."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

import numpy as np
import pandas as pd

from .._results import CoherenceResult

__all__ = ["LeakageResult"]


@dataclass(frozen=True, slots=True)
class LeakageResult(CoherenceResult, test_name="leakage_test",
                    settings=("engine", "pvalue_engine", "n_splits", "n_resamples",
                              "n_fold_draws", "fold_sd", "n_permutations", "evidence",
                              "categorical", "permute", "k_perm", "n_contexts", "log_loss_base",
                              "log_loss_full")):
    """Result of :func:`leakage_test`.

    Attributes
    ----------
    statistic : float
        ``100 (LL_base - LL_full) / LL_base``, the relative reduction (in %)
        of the out-of-fold log-loss when the outcome is added.
    pvalue : float
        One-sided p-value of "the outcome does not help" (see ``method``).
    confidence_interval : ConfidenceInterval
        Cluster-bootstrap percentile interval of the statistic (contexts
        resampled, out-of-fold losses kept: no refits), each end moved out by the
        part of the statistic's variance over fresh fold assignments that the
        bootstrap cannot see (see Notes of :func:`leakage_test`). An interval of
        :math:`E[S]` (negative under the null), not the inversion of the permutation
        test: it can hold 0 while ``pvalue`` rejects.
    n_obs : int
        Rows used.
    method : str
        ``'permutation'`` or ``'paired'``: how the p-value was computed.
    engine : str
        ``'catboost'`` or ``'logistic'``: the engine of the statistic, the interval
        and the losses.
    pvalue_engine : str
        The engine whose test gave ``pvalue`` and ``null_distribution`` (``engine``
        unless another was asked for with ``pvalue_engine``).
    n_splits : int
        Folds of the grouped cross-validation.
    n_resamples : int
        Cluster-bootstrap resamples of the interval.
    n_fold_draws : int
        Fold assignments the interval's fold variance was estimated from (the
        statistic's own among them).
    fold_sd : float
        Standard deviation of the statistic over those fold assignments (0 for
        one): how much the statistic owes to the random folds.
    n_permutations : int
        Grouped permutations of the outcome (0 for ``method='paired'``).
    evidence : tuple of str
        Evidence columns used by both models.
    categorical : tuple of str
        The evidence columns modelled as categories (one-hot for the logistic
        engine, native ``cat_features`` for catboost); the others are numeric.
    permute : str
        What the permutation null moved: ``'outcomes'`` (each context's
        outcome, among contexts matched on belief and evidence), ``'rows'``
        (single outcomes, when the outcome varies within a context) or
        ``'none'`` (``method='paired'``).
    k_perm : int
        Minimum number of units in a permutation block merged from units alone in
        their values (tied units form exact blocks of their own).
    n_contexts : int
        Number of contexts (clusters).
    log_loss_base, log_loss_full : float
        Mean out-of-fold log-loss (nats per row) of the two models.
    loss_base, loss_full : numpy.ndarray
        Per-row out-of-fold log-losses, in the row order of ``data``.
    bootstrap_distribution : numpy.ndarray
        The bootstrap replicates of the statistic.
    null_distribution : numpy.ndarray
        The statistic under the grouped permutations (empty for ``'paired'``).
    table : pandas.DataFrame
        One row per row of ``data``, in its order and with its index: the
        out-of-fold ``loss_base`` and ``loss_full``.
    """

    engine: str
    pvalue_engine: str
    n_splits: int
    n_resamples: int
    n_fold_draws: int
    fold_sd: float
    n_permutations: int
    evidence: tuple[str, ...]
    categorical: tuple[str, ...]
    permute: str
    k_perm: int
    n_contexts: int
    log_loss_base: float
    log_loss_full: float
    loss_base: np.ndarray
    loss_full: np.ndarray
    bootstrap_distribution: np.ndarray
    null_distribution: np.ndarray
    table: pd.DataFrame = field(default_factory=pd.DataFrame)

    def _build_table(self) -> pd.DataFrame:  # data's index, when ``table`` carries it
        index = self.table.index if len(self.table) == len(self.loss_base) else None
        return pd.DataFrame({"loss_base": self.loss_base, "loss_full": self.loss_full}, index)

    @property
    def n_groups(self) -> int:
        """Alias of :attr:`n_contexts`."""
        return self.n_contexts

