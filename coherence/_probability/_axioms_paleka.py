"""The two-question checks of Paleka et al. (2025) on elicited probabilities, row-wise:

* :func:`negation_check`: P(A) + P(not A) = 1, as arbitrage and frequentist violations.
* :func:`conditional_tuple_check`: P(A and B) = P(A) P(B|A).

The checks over a table of any checker, with intervals, are :func:`consistency_check`'s
(:mod:`._checks`); the conditional-forecasting axioms (total probability, Bayes, update
direction) are in :mod:`._axioms`. Like those, these are descriptive: ``pvalue`` is NaN;
the interval is the bootstrap-t interval over rows of the mean violation.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from .._docstrings import fill_doc
from .._parameters import check_float
from .._parameters import check_resampling
from .._rng import RNGLike
from .._rng import check_rng
from .._validation import DECIMAL_SLACK
from ._checks import bhattacharyya_distance
from ._checks import frequentist_terms
from ._checks import overlap_distance
from ._rowwise import PerRowResult
from ._rowwise import probabilities
from ._rowwise import violation_fields
from ._summaries import ViolationSummary
from ._summaries import summary_attribute
from ._summaries import summary_attributes

__all__ = ["ConditionalTupleResult", "NegationCheckResult", "conditional_tuple_check",
           "negation_check"]


# --------------------------------------------------------------------------- negation
@dataclass(frozen=True, slots=True)
class NegationCheckResult(PerRowResult, test_name="negation_check",
                          settings=("mean_arbitrage", "median_arbitrage", "share_arbitrage_above",
                                    "mean_frequentist", "median_frequentist",
                                    "share_frequentist_above", "beta", "arbitrage_threshold",
                                    "frequentist_threshold")):
    """Result of :func:`negation_check`.

    ``statistic`` is the mean arbitrage violation (bootstrap-t interval over rows).

    Attributes
    ----------
    arbitrage, frequentist : numpy.ndarray
        Per-pair violations (see :func:`negation_check`).
    arbitrage_summary, frequentist_summary : ViolationSummary
        Mean, median and share above the threshold (``arbitrage_threshold``,
        ``frequentist_threshold``) of ``arbitrage`` and of ``frequentist``.
    mean_arbitrage, median_arbitrage, share_arbitrage_above : float
        The same numbers under their flat names (read-only): ``arbitrage_summary.mean``,
        ``.median`` and ``.share_above``; the columns of ``to_frame()``.
    mean_frequentist, median_frequentist, share_frequentist_above : float
        Likewise for ``frequentist_summary``.
    beta : float
        Setting used.
    arbitrage_threshold, frequentist_threshold : float
        Thresholds used (read-only: the ``threshold`` of each summary).
    table : pandas.DataFrame
        One row per pair: ``arbitrage, frequentist`` (:meth:`per_row` returns a copy).
    """

    arbitrage: np.ndarray = field(default_factory=lambda: np.empty(0))
    frequentist: np.ndarray = field(default_factory=lambda: np.empty(0))
    arbitrage_summary: ViolationSummary = field(default_factory=ViolationSummary)
    frequentist_summary: ViolationSummary = field(default_factory=ViolationSummary)
    beta: float = 1e-3
    table: pd.DataFrame = field(init=False)

    mean_arbitrage, median_arbitrage, share_arbitrage_above = summary_attributes("arbitrage")
    mean_frequentist, median_frequentist, share_frequentist_above = summary_attributes(
        "frequentist")
    arbitrage_threshold = summary_attribute("arbitrage", "threshold")
    frequentist_threshold = summary_attribute("frequentist", "threshold")

    def _build_table(self) -> pd.DataFrame:
        return pd.DataFrame({"arbitrage": self.arbitrage, "frequentist": self.frequentist})


@fill_doc
def negation_check(p_a: Any, p_not_a: Any, *, beta: float = 1e-3,
                   arbitrage_threshold: float = 0.01, frequentist_threshold: float = 0.05,
                   confidence_level: float = 0.95, n_resamples: int = 9999,
                   rng: RNGLike = None) -> NegationCheckResult:
    r"""Violation of P(A) + P(not A) = 1 (Paleka et al. 2025).

    The simplest consistency law, on (A, not A) forecasts: each pair's log-score
    arbitrage (0 exactly when the two sum to one) and its frequentist violation, with
    their means, medians and the shares above the thresholds. For the authors' flags and
    their other checkers, use :func:`consistency_check`.

    Parameters
    ----------
    p_a, p_not_a : array_like of float in [0, 1]
        Forecasts p = P(A) and q = P(not A), elicited separately.
    beta : float > 0, default 1e-3
        Regulariser of the frequentist metric's denominator.
    arbitrage_threshold, frequentist_threshold : float >= 0
        The shares reported count violations strictly above these (our
        defaults: 0.01 nats of guaranteed log-score profit; 0.05 for the
        frequentist metric).
    %(violation_interval)s

    Returns
    -------
    NegationCheckResult
        ``statistic`` is the mean arbitrage violation (bootstrap-t interval over
        rows, Notes); ``pvalue`` is NaN.

    See Also
    --------
    conditional_tuple_check : the product rule P(A and B) = P(A) P(B|A).
    bayes_check : Bayes consistency of conditionals elicited in both directions.
    consistency_check : all ten checkers of Paleka et al. (2025), negation among them.

    Notes
    -----
    The *arbitrage* violation is the log-score profit an arbitrageur can
    guarantee in every world by replacing (p, q) with the closest consistent
    pair (x, 1 - x); the max-min problem has the closed form

    .. math::

        v_{\mathrm{arb}} = -2 \ln\!\big(\sqrt{p (1 - q)} + \sqrt{(1 - p) q}\big),

    a Bhattacharyya distance, in nats; it is infinite when (p, q) = (0, 0)
    or (1, 1). The *frequentist* violation is

    .. math::

        v_{\mathrm{freq}} = \frac{|p + q - 1|}{\sqrt{p (1 - p) + q (1 - q) + \beta}}.

    Both are 0 iff q = 1 - p, and both are symmetric in (p, q). The shares count
    violations strictly above the thresholds (a summary of ours), where
    :func:`consistency_check` flags at or above its ``tolerance``, as the authors' code does.

    The interval of the mean arbitrage is :func:`consistency_check`'s: the bootstrap-t
    over rows, its pivot's quantiles widened by Student's small-sample factor, cut at
    0. The arbitrage violation is close to a square of the gap :math:`p + q - 1`, so it
    is skewed to the right, where the Student t interval this function gave before was
    too short: it held the population's mean arbitrage in 0.835-0.913 of simulated
    studies of 20-100 rows, the bootstrap-t in 0.925-0.975
    (``benchmarks/validate_axiom_interval.py``, docs/axioms.md).

    References
    ----------
    Paleka et al. (2025), cited in full at :func:`consistency_check`.

    Examples
    --------
    >>> from coherence import negation_check
    >>> res = negation_check([0.7, 0.7], [0.3, 0.5])
    >>> [round(float(v), 4) for v in res.arbitrage]
    [0.0, 0.0426]
    """
    owner = "negation_check"
    beta = check_float(beta, "beta", owner, low=0.0, low_open=True)
    n_resamples, confidence_level = check_resampling(owner, n_resamples, confidence_level)
    gen = check_rng(rng, owner=owner)
    arbitrage_threshold = check_float(arbitrage_threshold, "arbitrage_threshold", owner,
                                      low=0.0)
    frequentist_threshold = check_float(frequentist_threshold, "frequentist_threshold", owner,
                                        low=0.0)
    arr = probabilities(owner, p_a=p_a, p_not_a=p_not_a)
    p, q = arr["p_a"], arr["p_not_a"]
    arbitrage = overlap_distance(p * (1 - q), (1 - p) * q)
    frequentist = frequentist_terms("negation", np.column_stack([p, q]), beta)
    return NegationCheckResult(
        **violation_fields(arbitrage, "arbitrage violation", n_resamples, gen,
                          confidence_level, owner),
        arbitrage=arbitrage, frequentist=frequentist,
        arbitrage_summary=ViolationSummary.of(arbitrage, arbitrage_threshold),
        frequentist_summary=ViolationSummary.of(frequentist, frequentist_threshold), beta=beta)


# --------------------------------------------------------------------------- conditional tuple
@dataclass(frozen=True, slots=True)
class ConditionalTupleResult(PerRowResult, test_name="conditional_tuple_check",
                             settings=("mean_absolute", "median_absolute", "share_absolute_above",
                                       "mean_arbitrage", "median_arbitrage",
                                       "share_arbitrage_above", "absolute_threshold",
                                       "arbitrage_threshold")):
    """Result of :func:`conditional_tuple_check`.

    ``statistic`` is the mean absolute violation (bootstrap-t interval over rows,
    stopped at 1).

    Attributes
    ----------
    absolute : numpy.ndarray
        ``|P(A and B) - P(A) P(B|A)|`` per tuple.
    arbitrage : numpy.ndarray
        Guaranteed log-score profit (nats) per tuple.
    absolute_summary, arbitrage_summary : ViolationSummary
        Mean, median and share above the threshold (``absolute_threshold``,
        ``arbitrage_threshold``) of ``absolute`` and of ``arbitrage``.
    mean_absolute, median_absolute, share_absolute_above : float
        The same numbers under their flat names (read-only): ``absolute_summary.mean``,
        ``.median`` and ``.share_above``; the columns of ``to_frame()``.
    mean_arbitrage, median_arbitrage, share_arbitrage_above : float
        Likewise for ``arbitrage_summary``.
    absolute_threshold, arbitrage_threshold : float
        Thresholds used (read-only: the ``threshold`` of each summary).
    table : pandas.DataFrame
        One row per tuple: ``absolute, arbitrage`` (:meth:`per_row` returns a copy).
    """

    absolute: np.ndarray = field(default_factory=lambda: np.empty(0))
    arbitrage: np.ndarray = field(default_factory=lambda: np.empty(0))
    absolute_summary: ViolationSummary = field(default_factory=ViolationSummary)
    arbitrage_summary: ViolationSummary = field(default_factory=ViolationSummary)
    table: pd.DataFrame = field(init=False)

    mean_absolute, median_absolute, share_absolute_above = summary_attributes("absolute")
    mean_arbitrage, median_arbitrage, share_arbitrage_above = summary_attributes("arbitrage")
    absolute_threshold = summary_attribute("absolute", "threshold")
    arbitrage_threshold = summary_attribute("arbitrage", "threshold")

    def _build_table(self) -> pd.DataFrame:
        return pd.DataFrame({"absolute": self.absolute, "arbitrage": self.arbitrage})


@fill_doc
def conditional_tuple_check(p_a: Any, p_b_given_a: Any, p_a_and_b: Any, *,
                            absolute_threshold: float = 0.05,
                            arbitrage_threshold: float = 0.01, confidence_level: float = 0.95,
                            n_resamples: int = 9999,
                            rng: RNGLike = None) -> ConditionalTupleResult:
    r"""Violation of P(A and B) = P(A) P(B|A) for (A, B|A, A and B) tuples.

    For tuples (A, B given A, A and B) the product rule ties the three forecasts. Each
    tuple's absolute deviation and its log-score arbitrage are reported, with their
    means, medians and the shares above the thresholds; the check is descriptive, an
    interval and no p-value.

    Parameters
    ----------
    p_a, p_b_given_a, p_a_and_b : array_like of float in [0, 1]
        Forecasts of A, of B conditional on A, and of the conjunction.
    absolute_threshold, arbitrage_threshold : float >= 0
        The shares reported count violations strictly above these (an absolute
        violation of exactly ``absolute_threshold``, within rounding, is not above it).
    %(violation_interval)s

    Returns
    -------
    ConditionalTupleResult
        ``statistic`` is the mean absolute violation (bootstrap-t interval over
        rows, as :func:`negation_check`'s, stopped at 1, the largest violation a row can
        have); ``pvalue`` is NaN.

    Warns
    -----
    SmallSampleWarning
        When the interval is the point itself: one row, or rows whose absolute
        violations are all equal (and not all 0).

    See Also
    --------
    negation_check : the complement rule P(A) + P(not A) = 1.
    bayes_check : Bayes consistency of conditionals elicited in both directions.
    consistency_check : all ten checkers of Paleka et al. (2025).

    Notes
    -----
    The *absolute* violation is :math:`|P(A \wedge B) - P(A)\,P(B|A)|`. The shares count
    violations strictly above the thresholds (ours), where :func:`consistency_check`
    (``'cond'``) flags at or above its ``tolerance``, as the authors' code does.

    The *arbitrage* violation follows Paleka et al. (2025) with the log scoring
    rule. The worlds are :math:`\omega \in \{A B, A \bar B, \bar A\}`; the
    conditional question B|A is annulled (scores 0) when A is false. Writing
    (a, c, j) for the forecasts and replacing them by a consistent triple
    (a', c', a'c'), the profit in world :math:`\omega` is the log-score gain
    :math:`\sum_i \ln p'_i(\omega) - \ln p_i(\omega)` over the questions that
    resolve in :math:`\omega`; the violation is

    .. math::

        v_{\mathrm{arb}} = \sup_{a', c' \in (0, 1)} \min_\omega
        \mathrm{profit}_\omega(a', c').

    P(A) and P(B|A) together forecast the three worlds, with probabilities
    :math:`(ac,\ a(1-c),\ 1-a)`, and the conjunction forecasts the first of them
    against the other two; the best consistent move keeps the ratio of the two
    worlds in which the conjunction is false, so the problem reduces to two
    forecasts ``a c`` and ``j`` of one event and has the closed form

    .. math::

        v_{\mathrm{arb}} = -2 \ln\!\big(\sqrt{a c\, j} + \sqrt{(1 - a c)(1 - j)}\big),

    a Bhattacharyya distance in nats: the value of the Cond checker of
    :func:`arbitrage_violation` (``'cond'``), to the bit. It is 0 when
    :math:`j = a c` and positive otherwise (a difference below about
    :math:`10^{-8}`, a violation below about :math:`10^{-16}` nats, rounds to 0;
    ``absolute`` still shows it); forecasts of exactly 0 or 1 enter as
    they are, and the value is infinite when a contradicted certainty cannot be
    repaired (:math:`a c = 1` with :math:`j = 0`, or :math:`a c = 0` with
    :math:`j = 1`), as in :func:`negation_check`.

    References
    ----------
    Paleka et al. (2025), cited in full at :func:`consistency_check`.

    Examples
    --------
    >>> from coherence import conditional_tuple_check
    >>> res = conditional_tuple_check([0.5, 0.5], [0.4, 0.4], [0.2, 0.3])
    >>> [round(float(v), 3) for v in res.absolute]
    [0.0, 0.1]
    >>> bool(res.arbitrage[0] == 0.0), bool(res.arbitrage[1] > 0.0)
    (True, True)
    """
    owner = "conditional_tuple_check"
    absolute_threshold = check_float(absolute_threshold, "absolute_threshold", owner, low=0.0)
    n_resamples, confidence_level = check_resampling(owner, n_resamples, confidence_level)
    gen = check_rng(rng, owner=owner)
    arbitrage_threshold = check_float(arbitrage_threshold, "arbitrage_threshold", owner,
                                      low=0.0)
    arr = probabilities(owner, p_a=p_a, p_b_given_a=p_b_given_a, p_a_and_b=p_a_and_b)
    a, c, j = arr["p_a"], arr["p_b_given_a"], arr["p_a_and_b"]
    absolute = np.abs(j - a * c)
    arbitrage = bhattacharyya_distance(a * c, j)
    # |P(A and B) - P(A) P(B|A)| is a difference of decimals: one of exactly the threshold
    # (|0.27 - 0.25 * 0.88| = 0.05, 0.05000000000000002 in floating point) is not above it
    absolute_summary = replace(ViolationSummary.of(absolute, absolute_threshold),
                               share_above=float(np.mean(
                                   absolute > absolute_threshold + DECIMAL_SLACK)))
    return ConditionalTupleResult(
        **violation_fields(absolute, "absolute violation", n_resamples, gen,
                          confidence_level, owner, upper=1.0),
        absolute=absolute, arbitrage=arbitrage,
        absolute_summary=absolute_summary,
        arbitrage_summary=ViolationSummary.of(arbitrage, arbitrage_threshold))
