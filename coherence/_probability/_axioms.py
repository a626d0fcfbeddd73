"""Probability-axiom checks on elicited probabilities.

Row-wise checks, vectorised over rows, each returning per-row values and a
summary result (method 2 of docs/design.md, and the forecaster consistency checks of
Paleka et al. 2025):

* :func:`total_probability_check`: is P(A) a mixture of P(A|B=1) and P(A|B=0)?
* :func:`bayes_check`: do the A-side and B-side conditionals give one joint?
* :func:`update_direction`: do P(A|B=1) and P(A|B=0) move P(A) in opposite ways?
* :func:`negation_check`: P(A) + P(not A) = 1, as arbitrage and frequentist violations.
* :func:`conditional_tuple_check`: P(A and B) = P(A) P(B|A).

The law of iterated expectation, on a long table of elicited probabilities,
lives in :mod:`coherence._probability._lie`.

The row-wise checks are descriptive: ``pvalue`` is NaN; the interval is a
Wilson interval for a share or, for a mean violation, the bootstrap-t interval over rows
of :func:`coherence.consistency_check` (``mean_violation``), as each result's
``method`` says.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from .._docstrings import fill_doc
from .._intervals import wilson_interval
from .._resampling import MEAN_KINDS
from .._results import CoherenceResult
from .._rng import RNGLike
from .._rng import check_rng
from .._validation import DECIMAL_SLACK
from .._validation import check_float
from .._validation import check_resampling
from .._validation import param_error
from .._validation import probability_array
from .._validation import same_index
from ._checks import bhattacharyya_distance
from ._checks import frequentist_terms
from ._checks import mean_violation
from ._checks import overlap_distance
from ._checks import warn_point_interval
from ._pairs_result import check_eps
from ._summaries import ViolationSummary
from ._summaries import summary_attribute
from ._summaries import summary_attributes

__all__ = [
    "UPDATE_CLASSES",
    "BayesCheckResult",
    "ConditionalTupleResult",
    "NegationCheckResult",
    "TotalProbabilityResult",
    "UpdateDirectionResult",
    "bayes_check",
    "conditional_tuple_check",
    "negation_check",
    "total_probability_check",
    "update_direction",
]

#: How the interval of a mean violation is computed (the ``method`` of the results).
_INTERVAL = f"{MEAN_KINDS['heavy-tailed']} over rows"

#: The four update-direction classes, in the order results report them.
UPDATE_CLASSES: tuple[str, ...] = ("monotonic", "partial", "no_update", "inconsistent")

#: Below this |P(A|B=1) - P(A|B=0)| the implied P(B) is undefined.
DEGENERATE_SPREAD = 1e-3


# --------------------------------------------------------------------------- helpers
def _probabilities(owner: str, allow_nan: bool = False, **arrays: Any) -> dict[str, np.ndarray]:
    """Validate named probability vectors and check they have one common length (and,
    for pandas Series, one common index: :func:`same_index`)."""
    same_index(owner, **{name: v for name, v in arrays.items() if v is not None})
    out = {name: probability_array(values, name, owner=owner, allow_nan=allow_nan)
           for name, values in arrays.items()}
    lengths = {name: len(v) for name, v in out.items()}
    first_name, n = next(iter(lengths.items()))
    for name, length in lengths.items():
        if length != n:
            raise ValueError(param_error(name, owner, f"of the same length as '{first_name}' "
                                         f"({n})", f"length {length}"))
    if n == 0:
        raise ValueError(param_error(first_name, owner, "non-empty", "an empty array"))
    return out


def _mean_violation(values: np.ndarray, label: str, n_resamples: int,
                    gen: np.random.Generator, confidence_level: float, owner: str,
                    upper: float = math.inf) -> dict[str, Any]:
    """The headline fields of a check's result: the mean of ``values`` with its interval.

    ``upper`` is the largest value a row's violation can take (1 for an absolute
    difference of probabilities): the population's mean cannot exceed it, so the
    interval stops there (the bootstrap-t of a few rows reached 5 and more; where its low
    end is above ``upper`` too, the interval is ``mean_violation``'s fallback,
    the percentile interval of the resampled means). An interval
    that is the point itself (one row, or violations that do not vary) is kept with a
    :class:`SmallSampleWarning`: the sample shows no uncertainty. Rows that are all exactly
    coherent (every violation 0, as beliefs from one joint give) are not warned about."""
    mean, ci = mean_violation(values, n_resamples, gen, confidence_level, upper)
    warn_point_interval(ci, values, label, owner)
    return {"statistic": mean, "pvalue": np.nan, "confidence_interval": ci,
            "n_obs": len(values), "method": f"mean {label}, {_INTERVAL}"}


# --------------------------------------------------------------------------- total probability
def implied_p_b(p_a: np.ndarray, p1: np.ndarray, p0: np.ndarray) -> np.ndarray:
    """The P(B) that the law of total probability implies; NaN where the conditionals are
    closer than ``DEGENERATE_SPREAD``."""
    spread = p1 - p0
    degenerate = np.abs(spread) < DEGENERATE_SPREAD
    with np.errstate(divide="ignore", invalid="ignore"):
        implied = (p_a - p0) / np.where(degenerate, 1.0, spread)
    return np.where(degenerate, np.nan, implied + 0.0)  # 0 / -0.5: 0, not -0.0


def total_probability_feasible(p_a: np.ndarray, p1: np.ndarray, p0: np.ndarray,
                               tol: float) -> tuple[np.ndarray, np.ndarray]:
    """The law-of-total-probability rule: (implied P(B), feasible) per row.

    A row is feasible when some P(B) in [0, 1] (up to ``tol``) gives
    P(A) = P(A|B=1) P(B) + P(A|B=0) (1 - P(B)): the implied P(B) lies in
    [-tol, 1 + tol]; with (near-)equal conditionals, when P(A) lies in the span
    between them or within ``tol`` of it (of P(A|B=1) when they are equal), so that
    swapping the conditionals changes nothing.
    """
    implied = implied_p_b(p_a, p1, p0)
    # distance of P(A) outside the conditionals' span (0 inside it)
    outside = np.maximum(np.maximum(np.minimum(p1, p0) - p_a, p_a - np.maximum(p1, p0)), 0.0)
    # a stated P(A) exactly at an end (implied -tol or 1 + tol, |P(A) - P(A|B=1)| = tol) is
    # at it: the comparisons allow the floating-point error of the differences (DECIMAL_SLACK)
    # a P(A) within the span is feasible at any tol, 0 included (the law then holds exactly)
    near = (outside <= DECIMAL_SLACK) | (outside < tol - DECIMAL_SLACK)
    feasible = np.where(np.isnan(implied), near,
                        (implied >= -tol - DECIMAL_SLACK) & (implied <= 1.0 + tol + DECIMAL_SLACK))
    return implied, feasible


def below_tol(error: np.ndarray, tol: float) -> np.ndarray:
    """``error < tol`` per row, an error of exactly ``tol`` within ``DECIMAL_SLACK`` not
    below it: |0.45 - 0.8 * 0.5| and |0.35 - 0.6 * 0.5 - 0.2 * 0.5| are both 0.05, which
    floating point gives as 0.04999999999999999 and 0.05000000000000002. An error of 0
    (within ``DECIMAL_SLACK``) is below every ``tol``, 0 included: ``tol=0`` asks whether
    the law holds exactly, as :func:`total_probability_feasible` reads it."""
    return np.asarray((error < tol - DECIMAL_SLACK) | (error <= DECIMAL_SLACK))


def total_probability_error(p_a: np.ndarray, p1: np.ndarray, p0: np.ndarray,
                            p_b: np.ndarray) -> np.ndarray:
    """|P(A) - P(A|B=1) P(B) - P(A|B=0) (1 - P(B))| per row, with an elicited P(B).

    The same function gives the B side with the roles swapped:
    ``total_probability_error(p_b, p_b_given_a1, p_b_given_a0, p_a)``.
    """
    return np.abs(p_a - p1 * p_b - p0 * (1.0 - p_b))


@dataclass(frozen=True, slots=True)
class _PerRowResult(CoherenceResult):
    """A check's result whose :attr:`table` has one row per input row (or pair, tuple)."""

    def per_row(self) -> pd.DataFrame:
        """One row per input row: the per-row values of :attr:`table` (a copy of it)."""
        return self.table.copy()


@dataclass(frozen=True, slots=True)
class TotalProbabilityResult(_PerRowResult, test_name="total_probability_check",
                             settings=("share_feasible", "mean_error", "share_consistent", "tol")):
    """Result of :func:`total_probability_check`.

    ``statistic`` is the share of rows that are feasible; its interval is the
    Wilson interval. Per-row values are in :meth:`per_row`.

    Attributes
    ----------
    implied_p_b : numpy.ndarray
        (P(A) - P(A|B=0)) / (P(A|B=1) - P(A|B=0)); NaN where the two
        conditionals are closer than 0.001.
    feasible : numpy.ndarray of bool
        The law-of-total-probability feasibility of each row.
    error : numpy.ndarray
        ``|P(A) - P(A|B=1) P(B) - P(A|B=0) (1 - P(B))|`` with the elicited P(B);
        all NaN when ``p_b`` was not given.
    share_feasible : float
        Mean of ``feasible``.
    mean_error, share_consistent : float
        Mean of ``error`` and share with ``error < tol`` (NaN without ``p_b``; an error of
        exactly ``tol``, within rounding, is not below it).
    tol : float
        The tolerance used.
    table : pandas.DataFrame
        One row per input row: ``implied_p_b, feasible, error`` (:meth:`per_row` returns a copy).
    """

    implied_p_b: np.ndarray = field(default_factory=lambda: np.empty(0))
    feasible: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=bool))
    error: np.ndarray = field(default_factory=lambda: np.empty(0))
    share_feasible: float = np.nan
    mean_error: float = np.nan
    share_consistent: float = np.nan
    tol: float = 0.05
    table: pd.DataFrame = field(init=False)

    def _build_table(self) -> pd.DataFrame:
        return pd.DataFrame({"implied_p_b": self.implied_p_b, "feasible": self.feasible,
                             "error": self.error})


def total_probability_check(p_a: Any, p_a_given_b1: Any, p_a_given_b0: Any, *,
                            p_b: Any = None, tol: float = 0.05) -> TotalProbabilityResult:
    r"""Law-of-total-probability feasibility of elicited P(A), P(A|B=1), P(A|B=0).

    Parameters
    ----------
    p_a, p_a_given_b1, p_a_given_b0 : array_like of float in [0, 1]
        Elicited P(A), P(A|B=1) and P(A|B=0), one value per row (question pair).
    p_b : array_like of float in [0, 1], optional
        Elicited P(B); when given, the error of the total-probability identity
        is computed as well.
    tol : float in [0, 1], default 0.05
        Tolerance of the feasibility and consistency rules; ``tol=0`` asks whether the
        law holds exactly (an error of 0, within rounding, is consistent).

    Returns
    -------
    TotalProbabilityResult
        ``statistic`` is the share of feasible rows (Wilson interval);
        ``pvalue`` is NaN (a descriptive check).

    See Also
    --------
    bayes_check : Bayes consistency of conditionals elicited in both directions.
    update_direction : the direction in which learning B moves the forecast of A.
    iterated_expectation_check : the law of iterated expectation over a withheld variable.
    conditional_forecasting : whether conditioning improves the Brier score of A.

    Notes
    -----
    The law of total probability :math:`P(A) = P(A|B=1)\,P(B) + P(A|B=0)\,(1 - P(B))`
    can hold for some :math:`P(B) \in [0, 1]` exactly when the implied value

    .. math::

        \hat P(B) = \frac{P(A) - P(A|B=0)}{P(A|B=1) - P(A|B=0)}

    lies in :math:`[0, 1]`, i.e. when P(A) lies between the two conditionals.
    A row is *feasible* when :math:`\hat P(B) \in [-\mathrm{tol}, 1 + \mathrm{tol}]`.
    When :math:`|P(A|B=1) - P(A|B=0)| < 0.001` the ratio is undefined
    (``implied_p_b`` is NaN) and the row is feasible iff P(A) lies between the
    conditionals or closer than ``tol`` to them (:math:`|P(A) - P(A|B=1)| < \mathrm{tol}`
    when they are equal; at ``tol=0``, when P(A) equals them).
    With an elicited P(B) the error is
    :math:`|P(A) - P(A|B=1) P(B) - P(A|B=0) (1 - P(B))|`, and a row is
    *consistent* when the error is below ``tol``.
    The B side of the law is the same check with the roles swapped:
    ``total_probability_check(p_b, p_b_given_a1, p_b_given_a0, p_b=p_a)``
    (:func:`conditional_forecasting` reports both sides).
    Feasibility is invariant to relabelling A (all probabilities of A replaced
    by their complements) and to relabelling B (the conditionals swapped, so
    :math:`\hat P(B) \to 1 - \hat P(B)`).

    References
    ----------
    Kolmogorov, A. N. (1933). *Grundbegriffe der Wahrscheinlichkeitsrechnung*.

    Examples
    --------
    >>> from coherence import total_probability_check
    >>> res = total_probability_check([0.3, 0.9], [0.5, 0.6], [0.2, 0.4])
    >>> res.feasible.tolist()
    [True, False]
    >>> [round(float(v), 3) for v in res.implied_p_b]
    [0.333, 2.5]
    """
    owner = "total_probability_check"
    tol = check_float(tol, "tol", owner, low=0.0, high=1.0)
    if p_b is None:
        arr = _probabilities(owner, p_a=p_a, p_a_given_b1=p_a_given_b1,
                             p_a_given_b0=p_a_given_b0)
    else:
        arr = _probabilities(owner, p_a=p_a, p_a_given_b1=p_a_given_b1,
                             p_a_given_b0=p_a_given_b0, p_b=p_b)
    pa, p1, p0 = arr["p_a"], arr["p_a_given_b1"], arr["p_a_given_b0"]
    implied, feasible = total_probability_feasible(pa, p1, p0, tol)
    if p_b is None:
        error = np.full(len(pa), np.nan)
        mean_error = share_consistent = np.nan
    else:
        pb = arr["p_b"]
        error = total_probability_error(pa, p1, p0, pb)
        mean_error = float(error.mean())
        share_consistent = float(below_tol(error, tol).mean())
    n = len(pa)
    k = int(feasible.sum())
    return TotalProbabilityResult(
        statistic=k / n, pvalue=np.nan, confidence_interval=wilson_interval(k, n), n_obs=n,
        method="share feasible, Wilson interval", implied_p_b=implied,
        feasible=feasible.astype(bool), error=error, share_feasible=k / n,
        mean_error=mean_error, share_consistent=share_consistent, tol=tol)


# --------------------------------------------------------------------------- Bayes
@dataclass(frozen=True, slots=True)
class BayesCheckResult(_PerRowResult, test_name="bayes_check",
                       settings=("share_consistent", "mean_error", "tol")):
    """Result of :func:`bayes_check`.

    ``statistic`` is the mean Bayes error over rows (bootstrap-t interval over rows, stopped
    at 2/3).

    Attributes
    ----------
    joint_a_side, joint_b_side : numpy.ndarray, shape (n, 3)
        The cells P(A=1, B=1), P(A=1, B=0), P(A=0, B=1) from each side.
    error : numpy.ndarray
        Mean of the three absolute cell differences, per row.
    total_variation : numpy.ndarray
        Total-variation distance between the two implied joints (all four
        cells), per row; invariant to relabelling either event.
    consistent : numpy.ndarray of bool
        ``error < tol`` (an error of exactly ``tol``, within rounding, is not below it).
    share_consistent, mean_error : float
        Summaries of ``consistent`` and ``error``.
    tol : float
        The tolerance used.
    table : pandas.DataFrame
        One row per input row: the six cells, ``error``, ``total_variation``,
        ``consistent`` (:meth:`per_row` returns a copy).
    """

    joint_a_side: np.ndarray = field(default_factory=lambda: np.empty((0, 3)))
    joint_b_side: np.ndarray = field(default_factory=lambda: np.empty((0, 3)))
    error: np.ndarray = field(default_factory=lambda: np.empty(0))
    total_variation: np.ndarray = field(default_factory=lambda: np.empty(0))
    consistent: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=bool))
    share_consistent: float = np.nan
    mean_error: float = np.nan
    tol: float = 0.05
    table: pd.DataFrame = field(init=False)

    def _build_table(self) -> pd.DataFrame:
        cells = ("a1b1", "a1b0", "a0b1")
        out = {f"{c}_a_side": self.joint_a_side[:, j] for j, c in enumerate(cells)}
        out.update({f"{c}_b_side": self.joint_b_side[:, j] for j, c in enumerate(cells)})
        out.update({"error": self.error, "total_variation": self.total_variation,
                    "consistent": self.consistent})
        return pd.DataFrame(out)


def bayes_arrays(pa: np.ndarray, pb: np.ndarray, a1: np.ndarray, a0: np.ndarray,
                  b1: np.ndarray, b0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Joint cells (n, 4): a1b1, a1b0, a0b1, a0b0 from the A side and from the B side."""
    a_side = np.column_stack([a1 * pb, a0 * (1 - pb), (1 - a1) * pb, (1 - a0) * (1 - pb)])
    b_side = np.column_stack([b1 * pa, (1 - b1) * pa, b0 * (1 - pa), (1 - b0) * (1 - pa)])
    return a_side, b_side


@fill_doc
def bayes_check(p_a: Any, p_b: Any, p_a_given_b1: Any, p_a_given_b0: Any, p_b_given_a1: Any,
                p_b_given_a0: Any, *, tol: float = 0.05, confidence_level: float = 0.95,
                n_resamples: int = 9999, rng: RNGLike = None) -> BayesCheckResult:
    r"""Bayes consistency of conditionals elicited in both directions.

    Parameters
    ----------
    p_a, p_b : array_like of float in [0, 1]
        Elicited P(A) and P(B).
    p_a_given_b1, p_a_given_b0 : array_like of float in [0, 1]
        Elicited P(A|B=1), P(A|B=0).
    p_b_given_a1, p_b_given_a0 : array_like of float in [0, 1]
        Elicited P(B|A=1), P(B|A=0).
    tol : float in [0, 1], default 0.05
        A row is consistent when its error is below ``tol``; an error of 0 (within
        rounding) is consistent at every ``tol``, 0 included.
    %(violation_interval)s

    Returns
    -------
    BayesCheckResult
        ``statistic`` is the mean error (bootstrap-t interval over rows, as
        :func:`negation_check`'s, stopped at 2/3, the largest error a row can have);
        ``pvalue`` is NaN.

    Warns
    -----
    SmallSampleWarning
        When the interval is the point itself: one row, or rows whose errors are all
        equal (and not all 0).

    See Also
    --------
    total_probability_check : feasibility of P(A), P(A|B=1), P(A|B=0) together.
    update_direction : the direction in which learning B moves the forecast of A.
    conditional_tuple_check : the product rule P(A and B) = P(A) P(B|A).
    conditional_forecasting : whether conditioning improves the Brier score of A.

    Notes
    -----
    The joint distribution of (A, B) is computed twice, from the A side
    (:math:`P(A=a, B=b) = P(A=a | B=b) P(B=b)`) and from the B side
    (:math:`P(B=b | A=a) P(A=a)`). The error of a row is the mean absolute
    difference over the three cells (1, 1), (1, 0), (0, 1):

    .. math::

        e = \tfrac13 \big(|P(A|B{=}1)P(B) - P(B|A{=}1)P(A)|
            + |P(A|B{=}0)(1 - P(B)) - (1 - P(B|A{=}1))P(A)|
            + |(1 - P(A|B{=}1))P(B) - P(B|A{=}0)(1 - P(A))|\big).

    The first term alone is Bayes' rule :math:`P(A|B)P(B) = P(B|A)P(A)`.
    The error is symmetric in A and B but, being a three-cell average, not
    invariant to relabelling an event; ``total_variation`` (half the sum of
    the four absolute cell differences) is. Both are 0 exactly when the six
    numbers come from one joint distribution.

    References
    ----------
    Bayes, T. (1763). An essay towards solving a problem in the doctrine of
    chances. *Philosophical Transactions of the Royal Society*, 53, 370-418.

    Examples
    --------
    >>> from coherence import bayes_check
    >>> # joint: P(A=1,B=1)=0.2, P(A=1,B=0)=0.1, P(A=0,B=1)=0.3, P(A=0,B=0)=0.4
    >>> # a second row off Bayes: its P(B|A=0) should be 1/3
    >>> res = bayes_check([0.3, 0.4], [0.5, 0.3], [0.4, 1 / 3], [0.2, 3 / 7], [2 / 3, 0.25],
    ...                   [3 / 7, 0.45], rng=0)
    >>> [round(float(e), 3) for e in res.error]
    [0.0, 0.023]
    """
    owner = "bayes_check"
    tol = check_float(tol, "tol", owner, low=0.0, high=1.0)
    n_resamples, confidence_level = check_resampling(owner, n_resamples, confidence_level)
    gen = check_rng(rng, owner=owner)
    arr = _probabilities(owner, p_a=p_a, p_b=p_b, p_a_given_b1=p_a_given_b1,
                         p_a_given_b0=p_a_given_b0, p_b_given_a1=p_b_given_a1,
                         p_b_given_a0=p_b_given_a0)
    a_side, b_side = bayes_arrays(arr["p_a"], arr["p_b"], arr["p_a_given_b1"],
                                   arr["p_a_given_b0"], arr["p_b_given_a1"],
                                   arr["p_b_given_a0"])
    diff = np.abs(a_side - b_side)
    error = diff[:, :3].mean(axis=1)
    tv = 0.5 * diff.sum(axis=1)
    consistent = below_tol(error, tol)
    return BayesCheckResult(
        **_mean_violation(error, "error", n_resamples, gen, confidence_level, owner,
                          upper=2.0 / 3.0),
        joint_a_side=a_side[:, :3].copy(),
        joint_b_side=b_side[:, :3].copy(), error=error, total_variation=tv,
        consistent=consistent, share_consistent=float(consistent.mean()),
        mean_error=float(error.mean()), tol=tol)


# --------------------------------------------------------------------------- update direction
@dataclass(frozen=True, slots=True)
class UpdateDirectionResult(_PerRowResult, test_name="update_direction",
                            settings=(*UPDATE_CLASSES, "eps")):
    """Result of :func:`update_direction`.

    ``statistic`` is the share of ``monotonic`` rows (Wilson interval).

    Attributes
    ----------
    direction : numpy.ndarray of str
        One of ``monotonic, partial, no_update, inconsistent`` per row.
    d1, d0 : numpy.ndarray
        P(A|B=1) - P(A) and P(A|B=0) - P(A).
    monotonic, partial, no_update, inconsistent : float
        The share of each class (also as a one-row frame: :attr:`shares`).
    eps : float
        The threshold used.
    table : pandas.DataFrame
        One row per input row: ``d1, d0, direction`` (:meth:`per_row` returns a copy).
    """

    direction: np.ndarray = field(default_factory=lambda: np.empty(0, dtype=object))
    d1: np.ndarray = field(default_factory=lambda: np.empty(0))
    d0: np.ndarray = field(default_factory=lambda: np.empty(0))
    monotonic: float = np.nan
    partial: float = np.nan
    no_update: float = np.nan
    inconsistent: float = np.nan
    eps: float = 0.02
    table: pd.DataFrame = field(init=False)

    @property
    def shares(self) -> pd.DataFrame:
        """The share of each update-direction class, one row."""
        return pd.DataFrame([{c: getattr(self, c) for c in UPDATE_CLASSES}])

    def _build_table(self) -> pd.DataFrame:
        return pd.DataFrame({"d1": self.d1, "d0": self.d0,
                             "direction": self.direction.astype(object)})


def classify_updates(d1: np.ndarray, d0: np.ndarray, eps: float) -> np.ndarray:
    """The update-direction class of each row (a movement within ``DECIMAL_SLACK`` of ``eps`` is
    a movement of exactly ``eps``, one within it of 0 no movement, also at ``eps = 0``)."""
    below, above = eps - DECIMAL_SLACK, eps + DECIMAL_SLACK
    still_1, still_0 = np.abs(d1) <= DECIMAL_SLACK, np.abs(d0) <= DECIMAL_SLACK
    no_update = (still_1 | (np.abs(d1) < below)) & (still_0 | (np.abs(d0) < below))
    monotonic = ((d1 > above) & (d0 < -above)) | ((d1 < -above) & (d0 > above))
    inconsistent = ((d1 > above) & (d0 > above)) | ((d1 < -above) & (d0 < -above))
    out = np.full(len(d1), "partial", dtype=object)
    out[no_update] = "no_update"
    out[monotonic] = "monotonic"
    out[inconsistent] = "inconsistent"
    return out


def update_direction(p_a: Any, p_a_given_b1: Any, p_a_given_b0: Any, *,
                     eps: float = 0.02) -> UpdateDirectionResult:
    r"""Classify the direction in which learning B moves the forecast of A.

    Parameters
    ----------
    p_a, p_a_given_b1, p_a_given_b0 : array_like of float in [0, 1]
        Elicited P(A), P(A|B=1), P(A|B=0).
    eps : float in [0, 0.5), default 0.02
        Movements of less than ``eps`` count as no movement and only movements
        of more than ``eps`` count as moves; a movement of exactly ``eps``
        (within rounding) is neither, so its row is ``partial`` (see Notes).
        ``eps = 0`` counts every movement as a move and only a standstill
        (both conditionals equal to P(A), within rounding) as ``no_update``.
        From 0.5 on no row could be monotonic, so such an ``eps`` raises.

    Returns
    -------
    UpdateDirectionResult
        ``statistic`` is the share of monotonic rows (Wilson interval);
        ``pvalue`` is NaN.

    See Also
    --------
    total_probability_check : feasibility of P(A), P(A|B=1), P(A|B=0) together.
    bayes_check : Bayes consistency of conditionals elicited in both directions.
    conditional_forecasting : whether conditioning improves the Brier score of A.

    Notes
    -----
    With :math:`d_1 = P(A|B{=}1) - P(A)` and :math:`d_0 = P(A|B{=}0) - P(A)`:

    * ``no_update``: :math:`|d_1| < \epsilon` and :math:`|d_0| < \epsilon`;
    * ``monotonic``: :math:`d_1 > \epsilon, d_0 < -\epsilon` or
      :math:`d_1 < -\epsilon, d_0 > \epsilon` (P(A) lies strictly between the
      conditionals, as the law of total probability requires when B matters);
    * ``inconsistent``: both move beyond :math:`\epsilon` in the same direction
      (no P(B) in [0, 1] can then reproduce P(A));
    * ``partial``: everything else (one side moves, the other stays within
      :math:`\epsilon`, or a movement of exactly :math:`\epsilon`).

    A movement of 0 (within rounding) is no movement, also at :math:`\epsilon = 0`.

    The classes are invariant to relabelling A (both movements change sign)
    and to relabelling B (the movements swap).

    Examples
    --------
    >>> from coherence import update_direction
    >>> res = update_direction([0.3, 0.3, 0.3, 0.3], [0.5, 0.31, 0.5, 0.5], [0.1, 0.3, 0.3, 0.4])
    >>> res.direction.tolist()
    ['monotonic', 'no_update', 'partial', 'inconsistent']
    """
    owner = "update_direction"
    eps = check_eps(eps, owner)
    arr = _probabilities(owner, p_a=p_a, p_a_given_b1=p_a_given_b1, p_a_given_b0=p_a_given_b0)
    d1 = arr["p_a_given_b1"] - arr["p_a"]
    d0 = arr["p_a_given_b0"] - arr["p_a"]
    direction = classify_updates(d1, d0, eps)
    n = len(d1)
    shares = {c: float(np.mean(direction == c)) for c in UPDATE_CLASSES}
    k = int(np.sum(direction == "monotonic"))
    return UpdateDirectionResult(
        statistic=shares["monotonic"], pvalue=np.nan, confidence_interval=wilson_interval(k, n),
        n_obs=n, method="share monotonic, Wilson interval", direction=direction, d1=d1, d0=d0,
        eps=eps, **shares)


# --------------------------------------------------------------------------- negation
@dataclass(frozen=True, slots=True)
class NegationCheckResult(_PerRowResult, test_name="negation_check",
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
    arr = _probabilities(owner, p_a=p_a, p_not_a=p_not_a)
    p, q = arr["p_a"], arr["p_not_a"]
    arbitrage = overlap_distance(p * (1 - q), (1 - p) * q)
    frequentist = frequentist_terms("negation", np.column_stack([p, q]), beta)
    return NegationCheckResult(
        **_mean_violation(arbitrage, "arbitrage violation", n_resamples, gen,
                          confidence_level, owner),
        arbitrage=arbitrage, frequentist=frequentist,
        arbitrage_summary=ViolationSummary.of(arbitrage, arbitrage_threshold),
        frequentist_summary=ViolationSummary.of(frequentist, frequentist_threshold), beta=beta)


# --------------------------------------------------------------------------- conditional tuple
def _tuple_profits(x: np.ndarray, a: float, c: float, j: float) -> np.ndarray:
    """Log-score profits in the three worlds (A&B, A&~B, ~A) of moving (a, c, j) to
    the consistent forecasts (x0, x1, x0 x1): the definition of the arbitrage violation
    of :func:`conditional_tuple_check`, which the tests maximise by brute force."""
    a2, c2 = x[0], x[1]
    j2 = a2 * c2
    return np.array([
        np.log(a2 / a) + np.log(c2 / c) + np.log(j2 / j),
        np.log(a2 / a) + np.log((1 - c2) / (1 - c)) + np.log((1 - j2) / (1 - j)),
        np.log((1 - a2) / (1 - a)) + np.log((1 - j2) / (1 - j)),
    ])


@dataclass(frozen=True, slots=True)
class ConditionalTupleResult(_PerRowResult, test_name="conditional_tuple_check",
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
    arr = _probabilities(owner, p_a=p_a, p_b_given_a=p_b_given_a, p_a_and_b=p_a_and_b)
    a, c, j = arr["p_a"], arr["p_b_given_a"], arr["p_a_and_b"]
    absolute = np.abs(j - a * c)
    arbitrage = bhattacharyya_distance(a * c, j)
    # |P(A and B) - P(A) P(B|A)| is a difference of decimals: one of exactly the threshold
    # (|0.27 - 0.25 * 0.88| = 0.05, 0.05000000000000002 in floating point) is not above it
    absolute_summary = replace(ViolationSummary.of(absolute, absolute_threshold),
                               share_above=float(np.mean(
                                   absolute > absolute_threshold + DECIMAL_SLACK)))
    return ConditionalTupleResult(
        **_mean_violation(absolute, "absolute violation", n_resamples, gen,
                          confidence_level, owner, upper=1.0),
        absolute=absolute, arbitrage=arbitrage,
        absolute_summary=absolute_summary,
        arbitrage_summary=ViolationSummary.of(arbitrage, arbitrage_threshold))


