"""The paired comparison of two forecasters (:meth:`ForecastScoresResult.compare`).

A sign-flip randomization test of the mean score difference over the questions both
forecasters answered (or over clusters of related questions, with the ``cluster`` of
:func:`coherence.forecast_scores`), and the interval that inverts it: of Hall's
skew-corrected studentized mean by default (:mod:`coherence._skewflip`), of the plain
sum with ``skew_correction=False``.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any

import numpy as np
import pandas as pd

from .._parameters import check_choice
from .._parameters import check_float
from .._parameters import check_int
from .._resampling import sorted_codes
from .._results import CoherenceResult
from .._results import ConfidenceInterval
from .._rng import RNGLike
from .._rng import check_rng
from .._skewflip import sign_flip_interval
from .._skewflip import sign_flip_pvalue
from .._skewflip import sign_flips
from .._skewflip import skew_flip_interval
from .._skewflip import skew_flip_pvalue
from .._skewflip import skew_flips
from .._validation import param_error
from .._validation import plain_value
from .._warnings import DeprecatedAlias
from ._forecast_warnings import warn_few_compared

if TYPE_CHECKING:
    from ._forecast import ForecastScoresResult

__all__ = ["METRICS", "ForecastComparisonResult", "paired_comparison"]

#: the per-forecast scores a comparison can use
METRICS = ("accuracy", "brier", "log_score")


@dataclass(frozen=True, slots=True)
class ForecastComparisonResult(CoherenceResult, test_name="ForecastScoresResult.compare",
                               settings=("model_a", "model_b", "metric", "lower_is_better",
                                         "cluster", "n_units", "n_resamples",
                                         "skew_correction")):
    """Paired comparison of two forecasters on their common questions.

    ``statistic`` is the mean over common questions of ``score(model_a) -
    score(model_b)``; ``pvalue`` is the two-sided sign-flip randomization
    p-value over questions, or over clusters of related questions (exact when
    ``2**n_units <= n_resamples``), of Hall's skew-corrected studentized mean unless
    ``skew_correction`` is False; ``confidence_interval`` holds the mean
    differences the test does not reject at ``1 - confidence_level``.

    Attributes
    ----------
    model_a, model_b : str
        The two models compared.
    metric : str
        ``'accuracy'``, ``'brier'`` or ``'log_score'``.
    lower_is_better : bool
        Whether a negative statistic favours ``model_a``.
    cluster : str or None
        The column of clusters of related questions (the ``cluster`` of
        :func:`forecast_scores`), whose signs flip together; None: each question.
    n_units : int
        Independent units whose signs flip: common questions, or their clusters.
    n_resamples : int
        Sign-flip randomizations asked for (all :math:`2^{n}` sign vectors are used
        when there are no more than that).
    skew_correction : bool
        Whether the statistic was Hall's skew-corrected studentized mean (True) or
        the plain sum of the differences (False).
    table : pandas.DataFrame
        One row per common question: both scores and their difference (and the
        question's cluster, with ``cluster``).

    Notes
    -----
    Made by :meth:`ForecastScoresResult.compare`, so the test name (the
    ``test`` column of :meth:`to_frame`) is ``'ForecastScoresResult.compare'``,
    the public call that produces it.
    """

    model_a: str
    model_b: str
    metric: str
    lower_is_better: bool
    cluster: str | None
    n_units: int
    n_resamples: int
    skew_correction: bool
    table: pd.DataFrame

    differences = DeprecatedAlias("table")


def label_choices(labels: Any, value: Any) -> str:
    """The labels a parameter may take, written as Python writes them (``1`` and ``'1'``
    apart), and the label ``value`` was probably meant to be when it reads as one."""
    plain = sorted({plain_value(v) for v in labels}, key=repr)
    text = "one of " + ", ".join(repr(v) for v in plain)
    meant = [v for v in plain if str(v) == str(value)]
    if meant:
        text += f"; labels are compared exactly: did you mean {meant[0]!r}?"
    return text


def paired_comparison(result: ForecastScoresResult, model_a: str, model_b: str, *,
                      metric: str, n_resamples: int, confidence_level: float,
                      skew_correction: bool, rng: RNGLike) -> ForecastComparisonResult:
    """:meth:`ForecastScoresResult.compare` (see there)."""
    owner = "ForecastScoresResult.compare"
    metric = check_choice(metric, "metric", owner, METRICS)
    if not isinstance(skew_correction, bool):
        raise TypeError(param_error("skew_correction", owner, "a bool", skew_correction))
    n_resamples = check_int(n_resamples, "n_resamples", owner, low=1)
    confidence_level = check_float(confidence_level, "confidence_level", owner,
                                   low=0.0, high=1.0, low_open=True, high_open=True)
    pf = result.per_forecast
    models = set(pf[result.by])
    for name, value in (("model_a", model_a), ("model_b", model_b)):
        if value not in models:
            raise ValueError(param_error(name, owner, f"a value of column '{result.by}' "
                                         f"({label_choices(models, value)})", value))
    if model_a == model_b:
        raise ValueError(param_error("model_b", owner, "different from model_a", model_b))
    gen = check_rng(rng, owner=owner)
    a = pf.loc[pf[result.by] == model_a].set_index("question")[metric]
    b = pf.loc[pf[result.by] == model_b].set_index("question")[metric]
    common = a.index.intersection(b.index, sort=False)
    with contextlib.suppress(TypeError):  # sorted: resampling ignores row order
        common = common.sort_values()
    if len(common) < 2:
        raise ValueError(f"{owner}: models {model_a!r} and {model_b!r} share "
                         f"{len(common)} question(s); at least 2 are needed.")
    xa = a.loc[common].to_numpy(dtype=np.float64)
    xb = b.loc[common].to_numpy(dtype=np.float64)
    diff = xa - xb
    table = pd.DataFrame({"question": common, f"{model_a} (a)": xa, f"{model_b} (b)": xb,
                          "difference": diff})
    if result.cluster is None:
        units = np.arange(diff.size)
    else:
        of_question = pf.drop_duplicates("question").set_index("question")["cluster"]
        table["cluster"] = of_question.loc[common].to_numpy(dtype=object)
        units = sorted_codes(table["cluster"].to_numpy(dtype=object))
    n_units = int(units.max()) + 1
    sums = np.bincount(units, weights=diff, minlength=n_units)
    sizes = np.bincount(units, minlength=n_units).astype(np.float64)
    # no special case for differences all 0: the test gives p = 1, and its inversion the
    # point 0 only where its sign flips can reject another difference (not with 5 or fewer
    # units at 0.95, whose smallest p-value is 2 / 2^5)
    if skew_correction:
        skewed = skew_flips(sums, sizes, n_resamples, gen)
        pvalue = skew_flip_pvalue(skewed)
        low, high = skew_flip_interval(skewed, confidence_level)
    else:
        flips = sign_flips(sums, sizes, n_resamples, gen)
        pvalue = sign_flip_pvalue(flips)
        low, high = sign_flip_interval(flips, confidence_level)
    lower_is_better = metric == "brier" or (metric == "log_score"
                                            and result.log_convention == "log2_loss")
    unit = "questions" if result.cluster is None else f"'{result.cluster}' clusters"
    warn_few_compared(owner, n_units, unit)
    return ForecastComparisonResult(
        statistic=float(np.mean(diff)), pvalue=pvalue,
        confidence_interval=ConfidenceInterval(low, high, confidence_level),
        n_obs=int(diff.size),
        method=(f"sign-flip randomization over {unit} of "
                + ("Hall's skew-corrected studentized mean" if skew_correction
                   else "the sum of the differences")
                + "; interval inverting the test"),
        model_a=str(model_a), model_b=str(model_b), metric=metric,
        lower_is_better=lower_is_better, cluster=result.cluster, n_units=n_units,
        n_resamples=n_resamples, skew_correction=skew_correction, table=table)
