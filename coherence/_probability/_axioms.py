"""Probability-axiom checks on elicited probabilities.

Row-wise checks, vectorised over rows, each returning per-row values and a
summary result (method 2 of docs/design.md):

* :func:`total_probability_check`: is P(A) a mixture of P(A|B=1) and P(A|B=0)?
* :func:`bayes_check`: do the A-side and B-side conditionals give one joint?
* :func:`update_direction`: do P(A|B=1) and P(A|B=0) move P(A) in opposite ways?

The two-question checks of Paleka et al. (negation, conditional tuples) are in
:mod:`._axioms_paleka`; what the row-wise checks share, in :mod:`._rowwise`. The law of
iterated expectation, on a long table of elicited probabilities, lives in
:mod:`coherence._probability._lie`.

The row-wise checks are descriptive: ``pvalue`` is NaN; the interval is a
Wilson interval for a share or, for a mean violation, the bootstrap-t interval over rows
of :func:`coherence.consistency_check` (``mean_violation``), as each result's
``method`` says.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any

import numpy as np
import pandas as pd

from .._docstrings import fill_doc
from .._intervals import wilson_interval
from .._parameters import check_float
from .._parameters import check_resampling
from .._rng import RNGLike
from .._rng import check_rng
from .._validation import DECIMAL_SLACK
from ._pairs_result import check_eps
from ._rowwise import PerRowResult
from ._rowwise import probabilities
from ._rowwise import violation_fields

__all__ = [
    "UPDATE_CLASSES",
    "BayesCheckResult",
    "TotalProbabilityResult",
    "UpdateDirectionResult",
    "bayes_check",
    "total_probability_check",
    "update_direction",
]

#: The four update-direction classes, in the order results report them.
UPDATE_CLASSES: tuple[str, ...] = ("monotonic", "partial", "no_update", "inconsistent")

#: Below this |P(A|B=1) - P(A|B=0)| the implied P(B) is undefined.
DEGENERATE_SPREAD = 1e-3


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
class TotalProbabilityResult(PerRowResult, test_name="total_probability_check",
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

    Some P(B) in [0, 1] reproduces the stated P(A) from P(A | B=1) and P(A | B=0)
    exactly when P(A) lies between the two conditionals. Each row is checked against
    that, with a tolerance, and the implied P(B) is reported; the share of feasible rows
    has a Wilson interval and no p-value (a descriptive check).

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
        arr = probabilities(owner, p_a=p_a, p_a_given_b1=p_a_given_b1,
                             p_a_given_b0=p_a_given_b0)
    else:
        arr = probabilities(owner, p_a=p_a, p_a_given_b1=p_a_given_b1,
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
class BayesCheckResult(PerRowResult, test_name="bayes_check",
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

    When a pairs run elicits both directions (P(A), P(A|B) and P(B), P(B|A)), Bayes'
    rule ties them: the joint distribution of (A, B) computed from either side must be
    the same. The error of a row is how far the two joints differ; the check is
    descriptive, an interval and no p-value.

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
    arr = probabilities(owner, p_a=p_a, p_b=p_b, p_a_given_b1=p_a_given_b1,
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
        **violation_fields(error, "error", n_resamples, gen, confidence_level, owner,
                          upper=2.0 / 3.0),
        joint_a_side=a_side[:, :3].copy(),
        joint_b_side=b_side[:, :3].copy(), error=error, total_variation=tv,
        consistent=consistent, share_consistent=float(consistent.mean()),
        mean_error=float(error.mean()), tol=tol)


# --------------------------------------------------------------------------- update direction
@dataclass(frozen=True, slots=True)
class UpdateDirectionResult(PerRowResult, test_name="update_direction",
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

    When B matters to A, learning that B happened and learning that it did not should
    move the forecast of A in opposite directions. Each row is classified as monotonic,
    no update, partial or inconsistent, and the share of monotonic rows is reported with
    a Wilson interval.

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
    arr = probabilities(owner, p_a=p_a, p_a_given_b1=p_a_given_b1, p_a_given_b0=p_a_given_b0)
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
