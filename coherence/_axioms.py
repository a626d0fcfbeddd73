"""Probability-axiom checks on elicited probabilities.

Row-wise checks, vectorised over rows, each returning per-row values and a
summary result (DESIGN.md method 2, and the forecaster consistency checks of
Paleka et al. 2025):

* :func:`total_probability_check`: is P(A) a mixture of P(A|B=1) and P(A|B=0)?
* :func:`bayes_check`: do the A-side and B-side conditionals give one joint?
* :func:`update_direction`: do P(A|B=1) and P(A|B=0) move P(A) in opposite ways?
* :func:`negation_check`: P(A) + P(not A) = 1, as arbitrage and frequentist violations.
* :func:`conditional_tuple_check`: P(A and B) = P(A) P(B|A).

plus, on a long table of elicited probabilities,

* :func:`iterated_expectation_check`: P(y|x) against sum_z P(y|x, z) P(z|x),
  normalised by the same error of a baseline predictor.

The row-wise checks are descriptive: ``pvalue`` is NaN; the interval is a
Wilson interval for a share or a t interval for a mean, as each result's
``method`` says. :func:`iterated_expectation_check` adds a sign test over
contexts of the agent's error against the baseline's.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from ._results import CoherenceResult, ConfidenceInterval
from ._validation import check_float, param_error, probability_array

__all__ = [
    "LIE_COLUMNS",
    "UPDATE_CLASSES",
    "BayesCheckResult",
    "ConditionalTupleResult",
    "IteratedExpectationResult",
    "NegationCheckResult",
    "TotalProbabilityResult",
    "UpdateDirectionResult",
    "bayes_check",
    "conditional_tuple_check",
    "iterated_expectation_check",
    "negation_check",
    "random_forest_baseline",
    "total_probability_check",
    "update_direction",
]

#: The four update-direction classes, in the order results report them.
UPDATE_CLASSES: tuple[str, ...] = ("monotonic", "partial", "no_update", "inconsistent")

#: Below this |P(A|B=1) - P(A|B=0)| the implied P(B) is undefined (issue 5).
DEGENERATE_SPREAD = 1e-3


# --------------------------------------------------------------------------- helpers
def _probabilities(owner: str, allow_nan: bool = False, **arrays: Any) -> dict[str, np.ndarray]:
    """Validate named probability vectors and check they have one common length."""
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


def _wilson(k: int, n: int, confidence_level: float = 0.95) -> ConfidenceInterval:
    """Wilson score interval for a share k / n (NaN when n = 0)."""
    if n == 0:
        return ConfidenceInterval(np.nan, np.nan, confidence_level)
    from scipy.stats import binomtest

    ci = binomtest(int(k), int(n)).proportion_ci(confidence_level=confidence_level,
                                                 method="wilson")
    return ConfidenceInterval(float(ci.low), float(ci.high), confidence_level)


def _t_interval(values: np.ndarray, confidence_level: float = 0.95) -> ConfidenceInterval:
    """Student t interval for the mean of finite ``values`` (NaN for fewer than 2)."""
    v = values[np.isfinite(values)]
    if v.size < 2:
        return ConfidenceInterval(np.nan, np.nan, confidence_level)
    from scipy.stats import t

    mean = float(v.mean())
    se = float(v.std(ddof=1) / np.sqrt(v.size))
    if se == 0.0:
        return ConfidenceInterval(mean, mean, confidence_level)
    q = float(t.ppf(0.5 + confidence_level / 2.0, v.size - 1))
    return ConfidenceInterval(mean - q * se, mean + q * se, confidence_level)


def _mean(values: np.ndarray) -> float:
    v = values[~np.isnan(values)]
    return float(v.mean()) if v.size else float("nan")


def _median(values: np.ndarray) -> float:
    v = values[~np.isnan(values)]
    return float(np.median(v)) if v.size else float("nan")


def _share(flags: np.ndarray, valid: np.ndarray | None = None) -> float:
    if valid is not None:
        flags = flags[valid]
    return float(flags.mean()) if flags.size else float("nan")


# --------------------------------------------------------------------------- total probability
def _implied_p_b(p_a: np.ndarray, p1: np.ndarray, p0: np.ndarray) -> np.ndarray:
    spread = p1 - p0
    degenerate = np.abs(spread) < DEGENERATE_SPREAD
    with np.errstate(divide="ignore", invalid="ignore"):
        implied = (p_a - p0) / np.where(degenerate, 1.0, spread)
    return np.where(degenerate, np.nan, implied)


@dataclass(frozen=True, slots=True)
class TotalProbabilityResult(CoherenceResult):
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
        Mean of ``error`` and share with ``error < tol`` (NaN without ``p_b``).
    tol : float
        The tolerance used.
    """

    implied_p_b: np.ndarray = field(repr=False, default_factory=lambda: np.empty(0))
    feasible: np.ndarray = field(repr=False, default_factory=lambda: np.empty(0, dtype=bool))
    error: np.ndarray = field(repr=False, default_factory=lambda: np.empty(0))
    share_feasible: float = np.nan
    mean_error: float = np.nan
    share_consistent: float = np.nan
    tol: float = 0.05

    _test_name: ClassVar[str] = "total_probability_check"
    _extra_columns: ClassVar[tuple[str, ...]] = (
        "share_feasible", "mean_error", "share_consistent", "tol")

    def per_row(self) -> pd.DataFrame:
        """One row per input row: ``implied_p_b, feasible, error``."""
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
        Tolerance of the feasibility and consistency rules.

    Returns
    -------
    TotalProbabilityResult
        ``statistic`` is the share of feasible rows (Wilson interval);
        ``pvalue`` is NaN (a descriptive check).

    Notes
    -----
    The law of total probability :math:`P(A) = P(A|B=1)\,P(B) + P(A|B=0)\,(1 - P(B))`
    can hold for some :math:`P(B) \in [0, 1]` exactly when the implied value

    .. math::

        \hat P(B) = \frac{P(A) - P(A|B=0)}{P(A|B=1) - P(A|B=0)}

    lies in :math:`[0, 1]`, i.e. when P(A) lies between the two conditionals.
    A row is *feasible* when :math:`\hat P(B) \in [-\mathrm{tol}, 1 + \mathrm{tol}]`.
    When :math:`|P(A|B=1) - P(A|B=0)| < 0.001` the ratio is undefined
    (``implied_p_b`` is NaN) and the row is feasible iff
    :math:`|P(A) - P(A|B=1)| < \mathrm{tol}`.
    With an elicited P(B) the error is
    :math:`|P(A) - P(A|B=1) P(B) - P(A|B=0) (1 - P(B))|`, and a row is
    *consistent* when the error is below ``tol``.
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
    implied = _implied_p_b(pa, p1, p0)
    degenerate = np.isnan(implied)
    feasible = np.where(degenerate, np.abs(pa - p1) < tol,
                        (implied >= -tol) & (implied <= 1.0 + tol))
    if p_b is None:
        error = np.full(len(pa), np.nan)
        mean_error = share_consistent = np.nan
    else:
        pb = arr["p_b"]
        error = np.abs(pa - p1 * pb - p0 * (1.0 - pb))
        mean_error = float(error.mean())
        share_consistent = float((error < tol).mean())
    n = len(pa)
    k = int(feasible.sum())
    return TotalProbabilityResult(
        statistic=k / n, pvalue=np.nan, confidence_interval=_wilson(k, n), n_obs=n,
        method="share feasible, Wilson interval", implied_p_b=implied,
        feasible=feasible.astype(bool), error=error, share_feasible=k / n,
        mean_error=mean_error, share_consistent=share_consistent, tol=tol)


# --------------------------------------------------------------------------- Bayes
@dataclass(frozen=True, slots=True)
class BayesCheckResult(CoherenceResult):
    """Result of :func:`bayes_check`.

    ``statistic`` is the mean Bayes error over rows (t interval).

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
        ``error < tol``.
    share_consistent, mean_error : float
        Summaries of ``consistent`` and ``error``.
    tol : float
        The tolerance used.
    """

    joint_a_side: np.ndarray = field(repr=False, default_factory=lambda: np.empty((0, 3)))
    joint_b_side: np.ndarray = field(repr=False, default_factory=lambda: np.empty((0, 3)))
    error: np.ndarray = field(repr=False, default_factory=lambda: np.empty(0))
    total_variation: np.ndarray = field(repr=False, default_factory=lambda: np.empty(0))
    consistent: np.ndarray = field(repr=False, default_factory=lambda: np.empty(0, dtype=bool))
    share_consistent: float = np.nan
    mean_error: float = np.nan
    tol: float = 0.05

    _test_name: ClassVar[str] = "bayes_check"
    _extra_columns: ClassVar[tuple[str, ...]] = ("share_consistent", "mean_error", "tol")

    def per_row(self) -> pd.DataFrame:
        """One row per input row: the six cells, ``error``, ``total_variation``, ``consistent``."""
        cells = ("a1b1", "a1b0", "a0b1")
        out = {f"{c}_a_side": self.joint_a_side[:, j] for j, c in enumerate(cells)}
        out.update({f"{c}_b_side": self.joint_b_side[:, j] for j, c in enumerate(cells)})
        out.update({"error": self.error, "total_variation": self.total_variation,
                    "consistent": self.consistent})
        return pd.DataFrame(out)


def _bayes_arrays(pa: np.ndarray, pb: np.ndarray, a1: np.ndarray, a0: np.ndarray,
                  b1: np.ndarray, b0: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Joint cells (n, 4): a1b1, a1b0, a0b1, a0b0 from the A side and from the B side."""
    a_side = np.column_stack([a1 * pb, a0 * (1 - pb), (1 - a1) * pb, (1 - a0) * (1 - pb)])
    b_side = np.column_stack([b1 * pa, (1 - b1) * pa, b0 * (1 - pa), (1 - b0) * (1 - pa)])
    return a_side, b_side


def bayes_check(p_a: Any, p_b: Any, p_a_given_b1: Any, p_a_given_b0: Any, p_b_given_a1: Any,
                p_b_given_a0: Any, *, tol: float = 0.05) -> BayesCheckResult:
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
        A row is consistent when its error is below ``tol``.

    Returns
    -------
    BayesCheckResult
        ``statistic`` is the mean error (Student t interval); ``pvalue`` is NaN.

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
    >>> res = bayes_check([0.3], [0.5], [0.4], [0.2], [2 / 3], [3 / 7])
    >>> round(float(res.error[0]), 12)
    0.0
    """
    owner = "bayes_check"
    tol = check_float(tol, "tol", owner, low=0.0, high=1.0)
    arr = _probabilities(owner, p_a=p_a, p_b=p_b, p_a_given_b1=p_a_given_b1,
                         p_a_given_b0=p_a_given_b0, p_b_given_a1=p_b_given_a1,
                         p_b_given_a0=p_b_given_a0)
    a_side, b_side = _bayes_arrays(arr["p_a"], arr["p_b"], arr["p_a_given_b1"],
                                   arr["p_a_given_b0"], arr["p_b_given_a1"],
                                   arr["p_b_given_a0"])
    diff = np.abs(a_side - b_side)
    error = diff[:, :3].mean(axis=1)
    tv = 0.5 * diff.sum(axis=1)
    consistent = error < tol
    n = len(error)
    return BayesCheckResult(
        statistic=float(error.mean()), pvalue=np.nan, confidence_interval=_t_interval(error),
        n_obs=n, method="mean error, Student t interval", joint_a_side=a_side[:, :3].copy(),
        joint_b_side=b_side[:, :3].copy(), error=error, total_variation=tv,
        consistent=consistent, share_consistent=float(consistent.mean()),
        mean_error=float(error.mean()), tol=tol)


# --------------------------------------------------------------------------- update direction
@dataclass(frozen=True, slots=True)
class UpdateDirectionResult(CoherenceResult):
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
    """

    direction: np.ndarray = field(repr=False, default_factory=lambda: np.empty(0, dtype=object))
    d1: np.ndarray = field(repr=False, default_factory=lambda: np.empty(0))
    d0: np.ndarray = field(repr=False, default_factory=lambda: np.empty(0))
    monotonic: float = np.nan
    partial: float = np.nan
    no_update: float = np.nan
    inconsistent: float = np.nan
    eps: float = 0.02

    _test_name: ClassVar[str] = "update_direction"
    _extra_columns: ClassVar[tuple[str, ...]] = (*UPDATE_CLASSES, "eps")

    @property
    def shares(self) -> pd.DataFrame:
        """The share of each update-direction class, one row."""
        return pd.DataFrame([{c: getattr(self, c) for c in UPDATE_CLASSES}])

    def per_row(self) -> pd.DataFrame:
        """One row per input row: ``d1, d0, direction``."""
        return pd.DataFrame({"d1": self.d1, "d0": self.d0,
                             "direction": self.direction.astype(object)})


def _classify(d1: np.ndarray, d0: np.ndarray, eps: float) -> np.ndarray:
    no_update = (np.abs(d1) < eps) & (np.abs(d0) < eps)
    monotonic = ((d1 > eps) & (d0 < -eps)) | ((d1 < -eps) & (d0 > eps))
    inconsistent = ((d1 > eps) & (d0 > eps)) | ((d1 < -eps) & (d0 < -eps))
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
    eps : float in [0, 1], default 0.02
        Movements of at most ``eps`` count as no movement.

    Returns
    -------
    UpdateDirectionResult
        ``statistic`` is the share of monotonic rows (Wilson interval);
        ``pvalue`` is NaN.

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
    eps = check_float(eps, "eps", owner, low=0.0, high=1.0)
    arr = _probabilities(owner, p_a=p_a, p_a_given_b1=p_a_given_b1, p_a_given_b0=p_a_given_b0)
    d1 = arr["p_a_given_b1"] - arr["p_a"]
    d0 = arr["p_a_given_b0"] - arr["p_a"]
    direction = _classify(d1, d0, eps)
    n = len(d1)
    shares = {c: float(np.mean(direction == c)) for c in UPDATE_CLASSES}
    k = int(np.sum(direction == "monotonic"))
    return UpdateDirectionResult(
        statistic=shares["monotonic"], pvalue=np.nan, confidence_interval=_wilson(k, n),
        n_obs=n, method="share monotonic, Wilson interval", direction=direction, d1=d1, d0=d0,
        eps=eps, **shares)


# --------------------------------------------------------------------------- negation
@dataclass(frozen=True, slots=True)
class NegationCheckResult(CoherenceResult):
    """Result of :func:`negation_check`.

    ``statistic`` is the mean arbitrage violation (t interval).

    Attributes
    ----------
    arbitrage, frequentist : numpy.ndarray
        Per-pair violations (see :func:`negation_check`).
    mean_arbitrage, median_arbitrage, share_arbitrage_above : float
        Summaries of ``arbitrage`` (share above ``arbitrage_threshold``).
    mean_frequentist, median_frequentist, share_frequentist_above : float
        Summaries of ``frequentist`` (share above ``frequentist_threshold``).
    beta, arbitrage_threshold, frequentist_threshold : float
        Settings used.
    """

    arbitrage: np.ndarray = field(repr=False, default_factory=lambda: np.empty(0))
    frequentist: np.ndarray = field(repr=False, default_factory=lambda: np.empty(0))
    mean_arbitrage: float = np.nan
    median_arbitrage: float = np.nan
    share_arbitrage_above: float = np.nan
    mean_frequentist: float = np.nan
    median_frequentist: float = np.nan
    share_frequentist_above: float = np.nan
    beta: float = 1e-3
    arbitrage_threshold: float = 0.01
    frequentist_threshold: float = 0.05

    _test_name: ClassVar[str] = "negation_check"
    _extra_columns: ClassVar[tuple[str, ...]] = (
        "mean_arbitrage", "median_arbitrage", "share_arbitrage_above", "mean_frequentist",
        "median_frequentist", "share_frequentist_above", "beta", "arbitrage_threshold",
        "frequentist_threshold")

    def per_row(self) -> pd.DataFrame:
        """One row per pair: ``arbitrage, frequentist``."""
        return pd.DataFrame({"arbitrage": self.arbitrage, "frequentist": self.frequentist})


def negation_check(p_a: Any, p_not_a: Any, *, beta: float = 1e-3,
                   arbitrage_threshold: float = 0.01,
                   frequentist_threshold: float = 0.05) -> NegationCheckResult:
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

    Returns
    -------
    NegationCheckResult
        ``statistic`` is the mean arbitrage violation (Student t interval);
        ``pvalue`` is NaN.

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

    Both are 0 iff q = 1 - p, and both are symmetric in (p, q).

    References
    ----------
    Paleka, D., Sudhir, A. P., Alvarez, A., Bhat, V., Shen, A., Wang, Y. and
    Tramèr, F. (2025). Consistency checks for language model forecasters.
    *International Conference on Learning Representations (ICLR)*.

    Examples
    --------
    >>> from coherence import negation_check
    >>> res = negation_check([0.7, 0.7], [0.3, 0.5])
    >>> [round(float(v), 4) for v in res.arbitrage]
    [0.0, 0.0426]
    """
    owner = "negation_check"
    beta = check_float(beta, "beta", owner, low=0.0, low_open=True)
    arbitrage_threshold = check_float(arbitrage_threshold, "arbitrage_threshold", owner,
                                      low=0.0)
    frequentist_threshold = check_float(frequentist_threshold, "frequentist_threshold", owner,
                                        low=0.0)
    arr = _probabilities(owner, p_a=p_a, p_not_a=p_not_a)
    p, q = arr["p_a"], arr["p_not_a"]
    overlap = np.sqrt(p * (1 - q)) + np.sqrt((1 - p) * q)
    with np.errstate(divide="ignore"):
        arbitrage = np.maximum(-2.0 * np.log(np.minimum(overlap, 1.0)), 0.0)
    frequentist = np.abs(p + q - 1) / np.sqrt(p * (1 - p) + q * (1 - q) + beta)
    n = len(p)
    return NegationCheckResult(
        statistic=float(arbitrage.mean()), pvalue=np.nan,
        confidence_interval=_t_interval(arbitrage), n_obs=n,
        method="mean arbitrage violation, Student t interval", arbitrage=arbitrage,
        frequentist=frequentist, mean_arbitrage=float(arbitrage.mean()),
        median_arbitrage=float(np.median(arbitrage)),
        share_arbitrage_above=float(np.mean(arbitrage > arbitrage_threshold)),
        mean_frequentist=float(frequentist.mean()),
        median_frequentist=float(np.median(frequentist)),
        share_frequentist_above=float(np.mean(frequentist > frequentist_threshold)),
        beta=beta, arbitrage_threshold=arbitrage_threshold,
        frequentist_threshold=frequentist_threshold)


# --------------------------------------------------------------------------- conditional tuple
#: Forecasts are clipped to [_CLIP, 1 - _CLIP] inside the arbitrage optimisation.
_CLIP = 1e-9


def _tuple_profits(x: np.ndarray, a: float, c: float, j: float) -> np.ndarray:
    """Log-score profits in the three worlds (A&B, A&~B, ~A) of moving (a, c, j) to
    the consistent forecasts (x0, x1, x0 x1)."""
    a2, c2 = x[0], x[1]
    j2 = a2 * c2
    return np.array([
        np.log(a2 / a) + np.log(c2 / c) + np.log(j2 / j),
        np.log(a2 / a) + np.log((1 - c2) / (1 - c)) + np.log((1 - j2) / (1 - j)),
        np.log((1 - a2) / (1 - a)) + np.log((1 - j2) / (1 - j)),
    ])


def _tuple_arbitrage(a: float, c: float, j: float) -> float:
    """max over consistent (a', c') of the min over worlds of the log-score profit."""
    from scipy.optimize import minimize

    if abs(j - a * c) == 0.0:
        return 0.0
    lo, hi = _CLIP, 1 - _CLIP
    a, c, j = (min(max(v, lo), hi) for v in (a, c, j))
    best = 0.0
    starts = [(a, c), (a, min(max(j / a, lo), hi)), (min(max((a + j) / 2, lo), hi), c),
              (0.5, 0.5)]
    for s in starts:
        res = minimize(lambda z: -z[2], np.array([s[0], s[1], 0.0]), method="SLSQP",
                       bounds=[(lo, hi), (lo, hi), (None, None)],
                       constraints=[{"type": "ineq",
                                     "fun": lambda z: _tuple_profits(z[:2], a, c, j) - z[2]}],
                       options={"ftol": 1e-12, "maxiter": 500})
        if res.success:
            value = float(np.min(_tuple_profits(res.x[:2], a, c, j)))
            best = max(best, value)
    return best


@dataclass(frozen=True, slots=True)
class ConditionalTupleResult(CoherenceResult):
    """Result of :func:`conditional_tuple_check`.

    ``statistic`` is the mean absolute violation (t interval).

    Attributes
    ----------
    absolute : numpy.ndarray
        ``|P(A and B) - P(A) P(B|A)|`` per tuple.
    arbitrage : numpy.ndarray
        Guaranteed log-score profit (nats) per tuple.
    mean_absolute, median_absolute, share_absolute_above : float
        Summaries of ``absolute`` (share above ``absolute_threshold``).
    mean_arbitrage, median_arbitrage, share_arbitrage_above : float
        Summaries of ``arbitrage`` (share above ``arbitrage_threshold``).
    absolute_threshold, arbitrage_threshold : float
        Settings used.
    """

    absolute: np.ndarray = field(repr=False, default_factory=lambda: np.empty(0))
    arbitrage: np.ndarray = field(repr=False, default_factory=lambda: np.empty(0))
    mean_absolute: float = np.nan
    median_absolute: float = np.nan
    share_absolute_above: float = np.nan
    mean_arbitrage: float = np.nan
    median_arbitrage: float = np.nan
    share_arbitrage_above: float = np.nan
    absolute_threshold: float = 0.05
    arbitrage_threshold: float = 0.01

    _test_name: ClassVar[str] = "conditional_tuple_check"
    _extra_columns: ClassVar[tuple[str, ...]] = (
        "mean_absolute", "median_absolute", "share_absolute_above", "mean_arbitrage",
        "median_arbitrage", "share_arbitrage_above", "absolute_threshold",
        "arbitrage_threshold")

    def per_row(self) -> pd.DataFrame:
        """One row per tuple: ``absolute, arbitrage``."""
        return pd.DataFrame({"absolute": self.absolute, "arbitrage": self.arbitrage})


def conditional_tuple_check(p_a: Any, p_b_given_a: Any, p_a_and_b: Any, *,
                            absolute_threshold: float = 0.05,
                            arbitrage_threshold: float = 0.01) -> ConditionalTupleResult:
    r"""Violation of P(A and B) = P(A) P(B|A) for (A, B|A, A and B) tuples.

    Parameters
    ----------
    p_a, p_b_given_a, p_a_and_b : array_like of float in [0, 1]
        Forecasts of A, of B conditional on A, and of the conjunction.
    absolute_threshold, arbitrage_threshold : float >= 0
        The shares reported count violations strictly above these.

    Returns
    -------
    ConditionalTupleResult
        ``statistic`` is the mean absolute violation (Student t interval);
        ``pvalue`` is NaN.

    Notes
    -----
    The *absolute* violation is :math:`|P(A \wedge B) - P(A)\,P(B|A)|`.

    The *arbitrage* violation follows Paleka et al. (2025) with the log scoring
    rule. The worlds are :math:`\omega \in \{A B, A \bar B, \bar A\}`; the
    conditional question B|A is annulled (scores 0) when A is false. Writing
    (a, c, j) for the forecasts and replacing them by a consistent triple
    (a', c', a'c'), the profit in world :math:`\omega` is the log-score gain
    :math:`\sum_i \ln p'_i(\omega) - \ln p_i(\omega)` over the questions that
    resolve in :math:`\omega`; the violation is

    .. math::

        v_{\mathrm{arb}} = \max_{a', c' \in (0, 1)} \min_\omega
        \mathrm{profit}_\omega(a', c'),

    found numerically (SLSQP on the epigraph form, several starts; accurate to
    about 1e-6 nats). It is 0 exactly when :math:`j = a c` (then every move has
    non-positive expected profit under the forecaster's own distribution) and
    positive otherwise. Forecasts are clipped to :math:`[10^{-9}, 1 - 10^{-9}]`
    inside the optimisation, so a violated certainty (a forecast of 0 or 1)
    gives a finite value (at most about 60 nats) instead of infinity.

    References
    ----------
    Paleka, D., Sudhir, A. P., Alvarez, A., Bhat, V., Shen, A., Wang, Y. and
    Tramèr, F. (2025). Consistency checks for language model forecasters.
    *International Conference on Learning Representations (ICLR)*.

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
    arbitrage_threshold = check_float(arbitrage_threshold, "arbitrage_threshold", owner,
                                      low=0.0)
    arr = _probabilities(owner, p_a=p_a, p_b_given_a=p_b_given_a, p_a_and_b=p_a_and_b)
    a, c, j = arr["p_a"], arr["p_b_given_a"], arr["p_a_and_b"]
    absolute = np.abs(j - a * c)
    arbitrage = np.array([_tuple_arbitrage(float(x), float(y), float(z))
                          for x, y, z in zip(a, c, j, strict=True)])
    n = len(a)
    return ConditionalTupleResult(
        statistic=float(absolute.mean()), pvalue=np.nan,
        confidence_interval=_t_interval(absolute), n_obs=n,
        method="mean absolute violation, Student t interval", absolute=absolute,
        arbitrage=arbitrage, mean_absolute=float(absolute.mean()),
        median_absolute=float(np.median(absolute)),
        share_absolute_above=float(np.mean(absolute > absolute_threshold)),
        mean_arbitrage=float(arbitrage.mean()), median_arbitrage=float(np.median(arbitrage)),
        share_arbitrage_above=float(np.mean(arbitrage > arbitrage_threshold)),
        absolute_threshold=absolute_threshold, arbitrage_threshold=arbitrage_threshold)


# --------------------------------------------------------------------------- iterated expectation
#: Errors below this are treated as exactly 0 (floating-point sums of exact beliefs).
_ZERO_ERROR = 1e-12

#: Columns of the long LIE table, by role (the defaults of iterated_expectation_check).
LIE_COLUMNS: tuple[str, ...] = ("context", "variable", "state", "p_y_given_x", "p_y_given_xz",
                                "p_z_given_x")


@dataclass(frozen=True, slots=True)
class IteratedExpectationResult(CoherenceResult):
    """Result of :func:`iterated_expectation_check`.

    ``statistic`` is the median, over (context, auxiliary variable) units, of
    the agent's error divided by the baseline's error; its interval is a
    percentile bootstrap over contexts (all variables of a context move
    together). ``pvalue`` is the exact sign test over contexts of the paired
    error difference (see :func:`iterated_expectation_check`, Notes).

    Attributes
    ----------
    units : pandas.DataFrame
        One row per (context, variable): ``context, variable, agent_error,
        baseline_error, ratio, agent_z_mass, baseline_z_mass`` (the z masses
        are the sums of P(z|x) over the listed states, 1 when coherent).
    median_agent_error, median_baseline_error : float
        Medians of the two errors.
    baseline : str
        ``"table"`` (a supplied baseline table), ``"random_forest"`` (the
        cross-validated default) or ``"estimator"`` (a supplied estimator).
    normalize : bool
        Whether P(z|x) was renormalised to sum to 1 before the sum.
    n_contexts : int
        Number of contexts.
    n_resamples : int
        Bootstrap resamples.
    alternative : str
        The sign test's alternative (``'greater'``: the agent's error exceeds
        the baseline's).
    n_agent_worse, n_informative : int
        Contexts whose mean error difference (agent minus baseline) is
        positive, and contexts where it is not 0 (the sign test's ``k`` and
        ``n``).
    """

    units: pd.DataFrame = field(repr=False, default_factory=pd.DataFrame)
    median_agent_error: float = np.nan
    median_baseline_error: float = np.nan
    baseline: str = "table"
    normalize: bool = False
    n_contexts: int = 0
    n_resamples: int = 9999
    alternative: str = "greater"
    n_agent_worse: int = 0
    n_informative: int = 0

    _test_name: ClassVar[str] = "iterated_expectation_check"
    _extra_columns: ClassVar[tuple[str, ...]] = (
        "median_agent_error", "median_baseline_error", "baseline", "normalize", "n_contexts",
        "n_resamples", "alternative", "n_agent_worse", "n_informative")

    def per_row(self) -> pd.DataFrame:
        """The per-(context, variable) table :attr:`units`."""
        return self.units.copy()

    def plot(self, ax: Any = None) -> Any:
        """The distribution of the per-unit error ratios, log scale, median marked.

        As the reference paper's Figure 2: one point per (context, variable)
        unit at its ratio :math:`e_{\\mathrm{agent}} / e_{\\mathrm{base}}`
        (jittered vertically, one row per auxiliary variable), a box per
        variable, a dashed line at ratio 1 (as coherent as the baseline) and a
        solid line at the median (:attr:`statistic`) with its interval shaded.
        Ratios that are 0 (agent error below 1e-12), infinite or NaN cannot
        be drawn on a log axis and are counted in the title instead.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, optional
            Axes to draw on; a new figure is made when omitted.

        Returns
        -------
        matplotlib.axes.Axes
            The axes drawn on. Its first collection holds one point per
            plotted unit, in the row order of :attr:`units`.
        """
        return _plot_lie(self, ax)


def _plot_lie(result: IteratedExpectationResult, ax: Any) -> Any:
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(6.0, 3.5))
    units = result.units
    ratio = units["ratio"].to_numpy(dtype=float)
    drawable = np.isfinite(ratio) & (ratio > 0)
    variables = list(pd.unique(units["variable"]))
    row = units["variable"].map({v: i for i, v in enumerate(variables)}).to_numpy(dtype=float)
    # deterministic jitter: the unit's rank within its variable
    jitter = np.zeros(len(units))
    for i in range(len(variables)):
        members = np.flatnonzero(row == i)
        if len(members) > 1:
            jitter[members] = np.linspace(-0.25, 0.25, len(members))
    ax.scatter(ratio[drawable], (row + jitter)[drawable], s=10, alpha=0.5, color="C0",
               linewidths=0)
    for i in range(len(variables)):
        values = ratio[drawable & (row == i)]
        if values.size:
            ax.boxplot(values, positions=[i], orientation="horizontal", widths=0.6,
                       showfliers=False, manage_ticks=False)
    ax.set_xscale("log")
    ax.axvline(1.0, color="0.4", linestyle="--", linewidth=1.0, label="ratio 1")
    if np.isfinite(result.statistic) and result.statistic > 0:
        ax.axvline(result.statistic, color="C3", linewidth=1.5,
                   label=f"median {result.statistic:.3g}")
        ci = result.confidence_interval
        if np.isfinite(ci.low) and np.isfinite(ci.high) and ci.low > 0:
            ax.axvspan(ci.low, ci.high, color="C3", alpha=0.15)
    ax.set_yticks(range(len(variables)), [str(v) for v in variables])
    ax.set_xlabel("agent LIE error / baseline LIE error")
    hidden = int((~drawable).sum())
    ax.set_title("Law of iterated expectation" + (f" ({hidden} unit(s) with ratio 0, inf "
                                                   "or NaN not shown)" if hidden else ""))
    ax.legend(loc="best", fontsize="small")
    return ax


def _lie_table(df: pd.DataFrame, cols: dict[str, str], owner: str,
               name: str) -> pd.DataFrame:
    """Validate a long LIE table and return it with the default column names."""
    from ._validation import as_dataframe, column_error, probability_column, require_columns

    df = as_dataframe(df, name=name, owner=owner)
    require_columns(df, cols, owner=owner)
    if len(df) == 0:
        raise ValueError(param_error(name, owner, "a table with at least one row",
                                     "an empty table"))
    out = pd.DataFrame(index=df.index)
    for role in ("context", "variable", "state"):
        s = df[cols[role]]
        missing = np.flatnonzero(s.isna().to_numpy())
        if len(missing):
            labels = [df.index[i] for i in missing]
            raise ValueError(column_error(cols[role], "not contain missing values", labels,
                                          owner=owner))
        out[role] = s.astype(object)
    for role in ("p_y_given_x", "p_y_given_xz", "p_z_given_x"):
        out[role] = probability_column(df, cols[role], owner=owner)
    dup = out.duplicated(["context", "variable", "state"]).to_numpy()
    if dup.any():
        labels = [df.index[i] for i in np.flatnonzero(dup)]
        raise ValueError(column_error(cols["state"], "be unique within each (context, "
                                      "variable)", labels, owner=owner))
    spread = out.groupby("context", sort=False)["p_y_given_x"].transform(
        lambda v: v.max() - v.min()).to_numpy()
    bad = np.flatnonzero(spread > 1e-12)
    if len(bad):
        labels = [df.index[i] for i in bad]
        raise ValueError(column_error(cols["p_y_given_x"], "be constant within each context "
                                      "(P(y|x) does not depend on the withheld variable)",
                                      labels, out["p_y_given_x"].to_numpy()[bad], owner=owner))
    return out.reset_index(drop=True)


def _lie_errors(table: pd.DataFrame, normalize: bool) -> pd.DataFrame:
    """|P(y|x) - sum_z P(y|x,z) P(z|x)| per (context, variable)."""
    t = table.assign(prod=table["p_y_given_xz"] * table["p_z_given_x"])
    g = t.groupby(["context", "variable"], sort=False)
    agg = g.agg(p_y=("p_y_given_x", "first"), mix=("prod", "sum"), mass=("p_z_given_x", "sum"))
    if normalize:
        with np.errstate(invalid="ignore", divide="ignore"):
            agg["mix"] = agg["mix"] / agg["mass"]
    agg["error"] = (agg["p_y"] - agg["mix"]).abs()
    return agg.reset_index()


def random_forest_baseline(
    ground_truth: Any, contexts: Any, queries: Any, *, evidence: Any, outcome: str = "y",
    context: str = "context", variable: str = "variable", state: str = "state",
    estimator: Any = None, n_estimators: int = 200,
    min_samples_leaf: tuple[int, ...] = (1, 5, 20, 50), n_splits: int = 5,
    rng: Any = None,
) -> pd.DataFrame:
    """Baseline probabilities for :func:`iterated_expectation_check` from a ground-truth sample.

    Parameters
    ----------
    ground_truth : pandas.DataFrame
        A sample from the ground-truth distribution: the ``evidence`` columns,
        every auxiliary variable named in ``queries``, and the binary
        ``outcome`` column.
    contexts : pandas.DataFrame
        One row per context: the ``context`` id column and the ``evidence``
        columns (the values that make up x).
    queries : pandas.DataFrame
        The (context, variable, state) rows to predict, e.g. the elicited table.
    evidence : list of str
        The columns forming x. Non-numeric columns are one-hot encoded
        (consistently over ground truth and contexts).
    outcome : str, default "y"
        The binary outcome column of ``ground_truth``.
    context, variable, state : str
        Column names in ``contexts`` / ``queries``.
    estimator : scikit-learn classifier, optional
        Used (cloned, fitted once per model, no tuning) instead of the
        cross-validated random forest.
    n_estimators : int, default 200
        Trees per forest.
    min_samples_leaf : tuple of int, default (1, 5, 20, 50)
        The grid searched by ``n_splits``-fold cross-validation on log-loss.
    n_splits : int, default 5
        Folds of the grid search.
    rng : int, numpy.random.Generator or None
        Seeds the forests and the fold assignment.

    Returns
    -------
    pandas.DataFrame
        ``queries``' (context, variable, state) with ``p_y_given_x``,
        ``p_y_given_xz``, ``p_z_given_x`` from the fitted models: one model of
        y on x, and per auxiliary variable z one of y on (x, z) and one of z on x.
    """
    from sklearn.base import clone
    from sklearn.ensemble import RandomForestClassifier
    from sklearn.model_selection import GridSearchCV, StratifiedKFold

    from ._rng import check_rng
    from ._validation import as_dataframe, binary_column, require_columns

    owner = "random_forest_baseline"
    gen = check_rng(rng, owner=owner)
    gt = as_dataframe(ground_truth, name="ground_truth", owner=owner)
    ctx = as_dataframe(contexts, name="contexts", owner=owner)
    q = as_dataframe(queries, name="queries", owner=owner)
    evidence = [evidence] if isinstance(evidence, str) else list(evidence)
    if not evidence:
        raise ValueError(param_error("evidence", owner, "a non-empty list of column names",
                                     evidence))
    require_columns(q, {"context": context, "variable": variable, "state": state}, owner=owner)
    variables = list(pd.unique(q[variable].astype(object)))
    require_columns(gt, [*evidence, outcome, *[str(v) for v in variables]], owner=owner)
    require_columns(ctx, [context, *evidence], owner=owner)
    y = binary_column(gt, outcome, owner=owner)
    if y.min() == y.max():
        raise ValueError(f"Column '{outcome}' (input to {owner}) must hold both 0 and 1; "
                         f"every row is {int(y[0])}.")

    n_gt = len(gt)
    both = pd.concat([gt[evidence], ctx[evidence]], ignore_index=True)
    encoded = pd.get_dummies(both, columns=[c for c in evidence if not
                                            pd.api.types.is_numeric_dtype(both[c])],
                             dtype=float).to_numpy(dtype=float)
    x_gt, x_ctx = encoded[:n_gt], encoded[n_gt:]
    ctx_ids = ctx[context].astype(object).to_numpy()
    ctx_pos = {c: i for i, c in enumerate(ctx_ids)}
    missing = [c for c in pd.unique(q[context].astype(object)) if c not in ctx_pos]
    if missing:
        raise ValueError(f"{owner}: contexts {missing[:5]!r} of 'queries' are not rows of "
                         f"'contexts'.")

    def fit(features: np.ndarray, target: np.ndarray) -> Any:
        seed = int(gen.integers(2**31 - 1))
        if estimator is not None:
            return clone(estimator).fit(features, target)
        _, counts = np.unique(target, return_counts=True)
        folds = max(2, min(n_splits, int(counts.min())))
        search = GridSearchCV(
            RandomForestClassifier(n_estimators=n_estimators, random_state=seed, n_jobs=1),
            {"min_samples_leaf": list(min_samples_leaf)}, scoring="neg_log_loss",
            cv=StratifiedKFold(folds, shuffle=True, random_state=seed))
        return search.fit(features, target).best_estimator_

    def proba(model: Any, features: np.ndarray, label: Any) -> np.ndarray:
        classes = list(model.classes_)
        if label not in classes:
            return np.zeros(len(features))
        return model.predict_proba(features)[:, classes.index(label)]

    p_y_x = proba(fit(x_gt, y), x_ctx, 1)
    rows: list[pd.DataFrame] = []
    for v in variables:
        zq = q.loc[(q[variable].astype(object) == v).to_numpy()]
        z_gt = gt[str(v)].astype(object).to_numpy()
        z_codes, z_levels = pd.factorize(z_gt, sort=True)
        z_levels = list(z_levels)
        model_z = fit(x_gt, z_codes)
        model_y = fit(np.column_stack([x_gt, z_codes]), y)
        pz = model_z.predict_proba(x_ctx)
        z_classes = list(model_z.classes_)
        i = np.array([ctx_pos[c] for c in zq[context].astype(object)], dtype=np.int64)
        states = zq[state].astype(object).tolist()
        k = np.array([z_levels.index(s) if s in z_levels else -1 for s in states],
                     dtype=np.int64)
        col = np.array([z_classes.index(c) if c in z_classes else -1 for c in k],
                       dtype=np.int64)
        p_z = np.where(col >= 0, pz[i, np.maximum(col, 0)], 0.0)
        p_yz = proba(model_y, np.column_stack([x_ctx[i], k]), 1)
        # a state never seen in the ground truth: P(z|x) = 0 and P(y|x,z) := P(y|x)
        p_yz = np.where(k >= 0, p_yz, p_y_x[i])
        rows.append(pd.DataFrame({"context": zq[context].to_numpy(), "variable": v,
                                  "state": zq[state].to_numpy(), "p_y_given_x": p_y_x[i],
                                  "p_y_given_xz": p_yz, "p_z_given_x": p_z}))
    return pd.concat(rows, ignore_index=True).loc[:, list(LIE_COLUMNS)]


def iterated_expectation_check(
    elicited: Any, *, baseline: Any = None, ground_truth: Any = None, contexts: Any = None,
    evidence: Any = None, outcome: str = "y", estimator: Any = None,
    baseline_options: dict[str, Any] | None = None, context: str = "context",
    variable: str = "variable", state: str = "state",
    p_y_given_x: str = "p_y_given_x", p_y_given_xz: str = "p_y_given_xz",
    p_z_given_x: str = "p_z_given_x", normalize: bool = False,
    alternative: str = "greater", confidence_level: float = 0.95, n_resamples: int = 9999,
    rng: Any = None,
) -> IteratedExpectationResult:
    r"""Law-of-iterated-expectation check of elicited probabilities.

    Parameters
    ----------
    elicited : pandas.DataFrame
        The long table of elicited probabilities, one row per (context,
        auxiliary variable z, state of z), with columns ``context``,
        ``variable`` (the name of z, withheld from the context's evidence),
        ``state`` (one value of z), ``p_y_given_x`` (the agent's P(y=1 | x),
        the same on every row of a context), ``p_y_given_xz`` (P(y=1 | x,
        z = state)) and ``p_z_given_x`` (P(z = state | x)). Every state of z
        must be listed.
    baseline : pandas.DataFrame, optional
        The same layout (and column names) holding a reference predictor's
        probabilities for the same (context, variable, state) rows: exact
        Bayesian-network posteriors, or any model's predictions.
    ground_truth, contexts, evidence, outcome, estimator
        Without ``baseline``, the baseline is fitted by
        :func:`random_forest_baseline` on the ground-truth sample
        ``ground_truth`` (columns ``evidence``, every auxiliary variable and
        ``outcome``), for the contexts described by ``contexts`` (the
        ``context`` id and ``evidence`` columns); ``estimator`` replaces the
        cross-validated random forest by a user's scikit-learn classifier.
    baseline_options : dict, optional
        Further keyword arguments of :func:`random_forest_baseline`
        (``n_estimators``, ``min_samples_leaf``, ``n_splits``).
    context, variable, state, p_y_given_x, p_y_given_xz, p_z_given_x : str
        Column names of ``elicited`` (and ``baseline``).
    normalize : bool, default False
        Divide :math:`\sum_z P(y|x,z) P(z|x)` by :math:`\sum_z P(z|x)` (use
        when the elicited P(z|x) are known not to sum to 1 and only the
        mixture is to be judged).
    alternative : {'greater', 'less', 'two-sided'}, default 'greater'
        Alternative of the sign test: ``'greater'``, the agent's error
        tends to exceed the baseline's (null: it does not).
    confidence_level : float, default 0.95
        Level of the bootstrap interval of the median ratio.
    n_resamples : int, default 9999
        Bootstrap resamples (contexts drawn with replacement).
    rng : int, numpy.random.Generator or None
        Randomness of the bootstrap (and of the forests).

    Returns
    -------
    IteratedExpectationResult
        ``statistic`` is the median ratio of the agent's error to the
        baseline's; per-unit values are in ``units``.

    Warns
    -----
    DegenerateDataWarning
        When a baseline error is 0 (below 1e-12; the ratio is then infinite, or NaN when the
        agent's error is 0 too, and NaN ratios are left out of the median).

    Notes
    -----
    For a context x and an auxiliary variable z withheld from it, coherent
    beliefs satisfy the law of iterated expectation
    :math:`P(y|x) = \sum_z P(y | x, z)\, P(z | x)`. The error of a unit is

    .. math::

        e_{\mathrm{agent}}(x, z) = \Big| P(y|x) - \sum_z P(y|x,z)\,P(z|x) \Big|

    from the elicited numbers, and :math:`e_{\mathrm{base}}(x, z)` the same
    quantity from the baseline. Even a good estimator fitted to finite data
    is not exactly coherent, so the ratio
    :math:`r = e_{\mathrm{agent}} / e_{\mathrm{base}}` says how much less
    coherent the agent is than a statistical model of the same ground truth;
    the summary is the median of r over units, as in the reference paper's
    Figure 2. The default baseline is a random forest whose
    ``min_samples_leaf`` is chosen by 5-fold cross-validated log-loss; an
    exact baseline (a Bayesian network's posteriors) has error 0, so use it to
    report :math:`e_{\mathrm{agent}}` itself, not the ratio.

    The median ratio and its interval describe; ``pvalue`` tests. For each
    context :math:`c`, let :math:`d_c` be the mean over its auxiliary
    variables of :math:`e_{\mathrm{agent}} - e_{\mathrm{base}}`; contexts
    with :math:`|d_c| < 10^{-12}` are dropped, :math:`k` of the remaining
    :math:`n` have :math:`d_c > 0`, and ``pvalue`` is the exact binomial
    (sign) test of :math:`k` against :math:`\mathrm{Bin}(n, 1/2)`
    (:func:`scipy.stats.binomtest`). With ``alternative='greater'`` the null
    is "the median of :math:`d_c` is at most 0": the agent is no less
    coherent than the baseline. Contexts are the independent units (a
    context's variables share its P(y|x)); the test is exact when the
    :math:`d_c` are independent given the baseline, and conservative for
    :math:`P(d_c > 0) < 1/2`. It is a test of the paired differences, not of
    the median ratio: the two can disagree when the errors' scales differ
    across contexts. Its measured size and power are in the validation page
    of the documentation.

    Examples
    --------
    >>> import pandas as pd
    >>> from coherence import iterated_expectation_check
    >>> elicited = pd.DataFrame({
    ...     "context": [1, 1, 2, 2], "variable": ["z"] * 4, "state": [0, 1, 0, 1],
    ...     "p_y_given_x": [0.5, 0.5, 0.2, 0.2], "p_y_given_xz": [0.3, 0.8, 0.1, 0.4],
    ...     "p_z_given_x": [0.6, 0.4, 0.5, 0.5]})
    >>> base = elicited.assign(p_y_given_x=[0.52, 0.52, 0.27, 0.27])
    >>> res = iterated_expectation_check(elicited, baseline=base, rng=0)
    >>> res.units[["agent_error", "baseline_error", "ratio"]].round(3).values.tolist()
    [[0.0, 0.02, 0.0], [0.05, 0.02, 2.5]]
    >>> round(res.statistic, 3)
    1.25
    """
    import warnings

    from scipy.stats import binomtest

    from ._rng import check_rng
    from ._validation import check_choice, check_int
    from ._warnings import DegenerateDataWarning

    owner = "iterated_expectation_check"
    confidence_level = check_float(confidence_level, "confidence_level", owner, low=0.0,
                                   high=1.0, low_open=True, high_open=True)
    n_resamples = check_int(n_resamples, "n_resamples", owner, low=1)
    alternative = check_choice(alternative, "alternative", owner,
                               ("greater", "less", "two-sided"))
    if not isinstance(normalize, bool):
        raise TypeError(param_error("normalize", owner, "a bool", normalize))
    gen = check_rng(rng, owner=owner)
    cols = {"context": context, "variable": variable, "state": state,
            "p_y_given_x": p_y_given_x, "p_y_given_xz": p_y_given_xz,
            "p_z_given_x": p_z_given_x}
    table = _lie_table(elicited, cols, owner, "elicited")
    if baseline is not None:
        base = _lie_table(baseline, cols, owner, "baseline")
        kind = "table"
    else:
        if ground_truth is None or contexts is None or evidence is None:
            raise ValueError(param_error(
                "baseline", owner, "a table, or else 'ground_truth', 'contexts' and "
                "'evidence' must all be given", None))
        base = random_forest_baseline(
            ground_truth, contexts, table.rename(columns={"context": context,
                                                          "variable": variable,
                                                          "state": state}),
            evidence=evidence, outcome=outcome, context=context, variable=variable,
            state=state, estimator=estimator, rng=gen, **(baseline_options or {}))
        kind = "estimator" if estimator is not None else "random_forest"

    agent = _lie_errors(table, normalize)
    ref = _lie_errors(base, normalize)
    keys = ["context", "variable"]
    units = agent.merge(ref, on=keys, how="left", suffixes=("_agent", "_base"))
    lost = units["error_base"].isna().to_numpy()
    if lost.any():
        shown = units.loc[lost, keys].head(5).to_records(index=False).tolist()
        raise ValueError(f"{owner}: the baseline has no rows for {int(lost.sum())} (context, "
                         f"variable) unit(s) of 'elicited' (first: {shown}).")
    # errors below 1e-12 are rounding of an exact identity: exactly 0
    e_agent = units["error_agent"].to_numpy(dtype=float)
    e_agent = np.where(e_agent < _ZERO_ERROR, 0.0, e_agent)
    e_base = units["error_base"].to_numpy(dtype=float)
    e_base = np.where(e_base < _ZERO_ERROR, 0.0, e_base)
    zero = e_base < _ZERO_ERROR
    if np.any(zero):
        warnings.warn(f"{owner}: the baseline error is 0 (below {_ZERO_ERROR:g}) for "
                      f"{int(np.sum(zero))} unit(s); their ratio is inf (or NaN when the "
                      "agent's error is 0 too).", DegenerateDataWarning, stacklevel=2)
    with np.errstate(divide="ignore", invalid="ignore"):
        ratio = np.where(zero, np.where(e_agent < _ZERO_ERROR, np.nan, np.inf),
                         e_agent / np.where(zero, 1.0, e_base))
    out = pd.DataFrame({
        "context": units["context"].to_numpy(), "variable": units["variable"].to_numpy(),
        "agent_error": e_agent, "baseline_error": e_base, "ratio": ratio,
        "agent_z_mass": units["mass_agent"].to_numpy(dtype=float),
        "baseline_z_mass": units["mass_base"].to_numpy(dtype=float)})

    codes, _ = pd.factorize(out["context"])
    n_ctx = int(codes.max()) + 1
    statistic = _median(ratio)
    members = [np.flatnonzero(codes == g) for g in range(n_ctx)]
    boot = np.empty(n_resamples)
    for b in range(n_resamples):
        drawn = gen.integers(0, n_ctx, size=n_ctx)
        boot[b] = _median(ratio[np.concatenate([members[g] for g in drawn])])
    from ._resampling import percentile_interval

    low, high = percentile_interval(boot, confidence_level) if n_ctx > 1 else (np.nan, np.nan)
    diff = np.bincount(codes, weights=e_agent - e_base, minlength=n_ctx) / np.bincount(
        codes, minlength=n_ctx)
    informative = np.abs(diff) >= _ZERO_ERROR
    n_inf = int(informative.sum())
    k = int((diff[informative] > 0).sum())
    pvalue = float(binomtest(k, n_inf, 0.5, alternative=alternative).pvalue) if n_inf else np.nan
    return IteratedExpectationResult(
        statistic=statistic, pvalue=pvalue,
        confidence_interval=ConfidenceInterval(low, high, confidence_level), n_obs=len(out),
        method="median error ratio, context bootstrap percentile interval; sign test over "
               "contexts", units=out,
        median_agent_error=_median(e_agent), median_baseline_error=_median(e_base),
        baseline=kind, normalize=normalize, n_contexts=n_ctx, n_resamples=n_resamples,
        alternative=alternative, n_agent_worse=k, n_informative=n_inf)
