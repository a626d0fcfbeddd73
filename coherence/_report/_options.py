"""The settings :func:`coherence.report` passes to its tests, and how it runs its cells:
one record, :class:`ReportOptions`, taken as ``options=`` and field by field as keywords.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from dataclasses import fields
from typing import Any

from .._decision._design import ENGINES
from .._parameters import check_choice
from .._parameters import check_int
from .._validation import param_error

#: The report's second stage (``_resolve.py``) resolves an adjusted p-value strictly below
#: this.
TARGET = 1e-3
#: The most draws of a second stage.
MAX_DRAWS = 100_000

__all__ = ["MAX_DRAWS", "TARGET", "ReportOptions", "check_report_options", "floor_resolved",
           "second_stage_draws"]


@dataclass(frozen=True, slots=True)
class ReportOptions:
    """The settings :func:`report` passes to its tests, and how it runs its cells.

    ``report(data, options=ReportOptions(...))``, or any field by keyword
    (``report(data, n_resamples=199, n_jobs=2)``): a keyword replaces that field
    of ``options``. Which columns to read, which tests to run and how to adjust
    their p-values stay in :func:`report`'s own signature.

    Parameters
    ----------
    n_resamples : int or None
        Monte Carlo draws of every test, passed as each test function's
        ``n_resamples`` (and as :func:`leakage_test`'s ``n_permutations``, its
        permutation refits): the permutations of the p-values and the bootstrap
        resamples of the intervals. ``None`` (default): 1000 permutations for the
        p-values of the ``ci`` and ``leakage`` tests, 500 draws for every other
        test but the LIE check, whose interval keeps its own 9999 (a value given
        here sets its draws too, unless ``lie_options`` names its own). With
        Holm's adjustment over many cells and tests, few draws cannot reach small
        adjusted p-values (the smallest p-value is ``1 / (n_resamples + 1)``).
    reference_prompt : str, default "standard"
        Prompt variant the decision tests use, and the reference of the
        prompt-consistency RMSEs. When the table has a ``prompt`` column, some
        rows must carry this label exactly (a ``ValueError`` otherwise, with the
        labels found): the decision tests are never run on every prompt pooled.
        Prompt labels that differ only in case (``'Standard'`` and
        ``'standard'``) are an error too.
    k : int or "auto", default "auto"
        Neighbours of :func:`ci_test`'s estimator (``"auto"`` as there).
    n_splits : int, default 5
        Cross-fitting folds of :func:`leakage_test`.
    engine : {"logistic", "catboost"}, default "logistic"
        The leakage classifier: ``"logistic"`` for speed, ``"catboost"`` for the
        paper's settings.
    n_bins : int, default 10
        Belief bins of the calibration cells (``calibration``: the reliability table
        and ECE of :func:`forecast_scores`; ``calibration_error``). The monotonicity
        test keeps the paper's 5 bins.
    confidence_level : float, default 0.95
        Level of every interval.
    n_jobs : int or None
        Cells run in parallel with joblib. ``None`` (default): joblib's default,
        that is 1 (serial) or the ``n_jobs`` of an enclosing
        :func:`joblib.parallel_config`.
    backend : str or None
        The joblib backend: ``"loky"``, ``"threading"``, ``"multiprocessing"``,
        ``"dask"`` (a ``dask.distributed`` client must exist), ``"ray"`` (after
        ``ray.util.joblib.register_ray()``) or any registered name. ``None``
        (default): the backend of an enclosing :func:`joblib.parallel_config`,
        else joblib's default (loky). The backend and worker count actually used
        are recorded in the report's ``settings["backend"]`` and
        ``settings["n_jobs"]`` (``"sequential"`` when the cells ran one after the
        other in this process). See ``docs/report.md``.
    progress : bool or None
        A progress bar over cells; ``None`` (default) shows it only on a terminal.

    See Also
    --------
    report : the function that takes these options.
    plan : how many contexts and repetitions a study needs.

    Examples
    --------
    >>> from coherence import ReportOptions
    >>> ReportOptions(n_resamples=199, n_jobs=2).engine
    'logistic'
    """

    n_resamples: int | None = None
    reference_prompt: str = "standard"
    k: int | str = "auto"
    n_splits: int = 5
    engine: str = "logistic"
    n_bins: int = 10
    confidence_level: float = 0.95
    n_jobs: int | None = None
    backend: str | None = None
    progress: bool | None = None

    def __post_init__(self) -> None:
        check_report_options({f.name: getattr(self, f.name) for f in fields(self)},
                             "ReportOptions")


def check_report_options(values: dict[str, Any], owner: str) -> None:
    """The rules :func:`report` checks before any cell runs, errors naming the field and
    ``owner`` (the tests check their own settings, ``k`` to ``confidence_level``, as
    they are called directly)."""
    if values["n_resamples"] is not None:
        check_int(values["n_resamples"], "n_resamples", owner, low=1)
    if not isinstance(values["reference_prompt"], str):
        raise TypeError(param_error("reference_prompt", owner, "a str",
                                    values["reference_prompt"]))
    check_choice(values["engine"], "engine", owner, ENGINES)
    n_jobs, backend = values["n_jobs"], values["backend"]
    if n_jobs is not None:
        check_int(n_jobs, "n_jobs", owner, low=-1)
        if n_jobs == 0:
            raise ValueError(param_error("n_jobs", owner, "a positive int or -1", n_jobs))
    if backend is not None and not isinstance(backend, str):
        raise TypeError(param_error("backend", owner, "a joblib backend name or None",
                                    backend))


def _floor_factor(family: int, adjust: str) -> int:
    """What the adjustment multiplies the smallest p-value by, at most: the family's size
    for Holm's (and Benjamini-Hochberg's, on the smallest p-value); 1 without one."""
    return max(family if adjust != "none" else 1, 1)


def second_stage_draws(family: int, adjust: str) -> int:
    """The draws of the second stage: enough for a p-value at its floor to resolve below
    :data:`TARGET` after the adjustment over ``family`` p-values, at most
    :data:`MAX_DRAWS`. Without an adjustment (``adjust="none"``) the floor is not
    multiplied, and 1001 draws resolve it (1 / 1002 < 0.001), where Holm's over 25
    p-values needs 25,001: one rule, the floor after the adjustment below the target."""
    return min(MAX_DRAWS, math.ceil(_floor_factor(family, adjust) / TARGET) + 1)


def floor_resolved(draws: int, family: int, adjust: str) -> bool:
    """Whether ``draws`` already resolve a p-value at its floor below :data:`TARGET` after
    the adjustment (:func:`second_stage_draws`' rule): a second stage then adds nothing."""
    return _floor_factor(family, adjust) / (draws + 1) < TARGET
