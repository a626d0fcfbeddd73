"""The result of :func:`coherence.ci_test` (:class:`CITestResult`), in a module of its own
so that the test's modules and the package's lazy loader share one definition."""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field

import numpy as np

from .._results import CoherenceResult

__all__ = ["CITestResult"]


@dataclass(frozen=True, slots=True)
class CITestResult(CoherenceResult, test_name="ci_test",
                   settings=("k", "n_resamples", "n_contexts", "evidence", "condition_on",
                             "calibrate", "permute", "ci_method", "test_statistic",
                             "n_strata")):
    """Result of :func:`ci_test`.

    Attributes
    ----------
    statistic : float
        The kNN estimate of I(action ; outcome | belief [, evidence]) in nats
        (can be negative; never clipped).
    pvalue : float
        Conditional-permutation p-value of the test statistic
        (``test_statistic``), ``(1 + #{T_b > T} + K) / (1 + B)`` with the ties
        broken at random (``K`` uniform on ``0..#{T_b = T}``), or with
        continuous evidence ``(1 + #{T_b >= T}) / (1 + B)``; NaN for
        ``method='bootstrap'``, which is not a calibrated test.
    confidence_interval : ConfidenceInterval
        Interval for the CMI by context resampling (see ``ci_method``).
    n_obs : int
        Number of rows.
    method : str
        ``'permutation'`` or ``'bootstrap'``.
    k : int
        Number of neighbours of the estimator (the one used, also when
        ``k='auto'`` chose it).
    n_resamples : int
        Permutations (and CI resamples).
    n_contexts : int
        Number of contexts (clusters).
    evidence : tuple of str
        Extra conditioning columns.
    condition_on : str
        ``'row'`` (each row's belief) or ``'context_mean'``.
    calibrate : bool or str
        ``False``, or how the belief was replaced by its isotonic calibration:
        ``'cross-fitted'`` (``calibrate=True``) or ``'in-sample'`` (the paper's).
    permute : str
        What the permutation moved: ``'outcomes'`` (each context's outcome,
        among matched contexts), ``'contexts'`` (the actions of whole
        contexts) or ``'rows'`` (single actions); ``'none'`` for the
        bootstrap method.
    ci_method : str
        ``'debiased'`` (half of the contexts without replacement for the
        spread, centred on the estimate minus the estimator's bias at the
        fitted model), ``'subsampling'`` (the same spread, centred on the
        estimate minus the permutation-null mean) or ``'bootstrap'`` (cluster
        bootstrap, percentile interval).
    test_statistic : str
        The statistic whose permutation distribution gives ``pvalue``:
        ``'plugin'`` (the plug-in CMI over ``n_strata`` strata of the
        conditioning values), ``'regression'`` (the share of the outcome's
        residual that the actions' residuals explain), ``'combined'`` (the
        smaller of those two p-values) or ``'knn'`` (``statistic`` itself).
    test_statistic_value : float
        Its value on the data: nats for ``'plugin'`` and ``'knn'``
        (``statistic`` for ``'knn'``), a share for ``'regression'``, minus the
        log of the smaller p-value for ``'combined'``.
    n_strata : int
        Strata of the plug-in statistic (0 for ``'regression'`` and ``'knn'``).
    null_distribution : numpy.ndarray
        The test statistic on each permuted data set (empty for the bootstrap
        method).
    resample_distribution : numpy.ndarray
        The statistic on each CI resample.
    table : pandas.DataFrame
        The one-row :meth:`to_frame` (the test has no per-unit detail; the
        resampled statistics are in the two distributions above).
    """

    k: int = 3
    n_resamples: int = 0
    n_contexts: int = 0
    evidence: tuple[str, ...] = ()
    condition_on: str = "row"
    calibrate: bool | str = False
    permute: str = "outcomes"
    ci_method: str | None = "debiased"
    test_statistic: str = "knn"
    test_statistic_value: float = float("nan")
    n_strata: int = 0
    null_distribution: np.ndarray = field(default_factory=lambda: np.empty(0))
    resample_distribution: np.ndarray = field(default_factory=lambda: np.empty(0))
