"""The ten forecaster consistency checks of Paleka et al. (ICLR 2025).

Each checker is a logical relation between the questions of a tuple, given by
its set of *possible worlds* (which resolutions of the questions can happen
together; a conditional question is annulled, neither true nor false, when its
condition fails). Two violation metrics are computed per tuple:

* **arbitrage**: the largest log-score profit an arbitrageur can guarantee in
  every possible world by replacing the forecasts with other forecasts;
* **frequentist**: a deviation scaled by the noise of a forecaster whose
  forecasts have standard deviation ``sigma``, flagged above ``gamma * sigma``.

The array layer (:func:`arbitrage_violation`, :func:`frequentist_violation`) is
vectorised over tuples; :func:`consistency_check` is the table-in, table-out
layer with summary statistics and a bootstrap interval; :func:`read_consistency_tuples`
(in :mod:`._checks_io`) reads the authors' released JSON-lines files.

The arbitrage is computed through its convex dual (see :func:`arbitrage_violation`):
closed forms for Negation, Paraphrase, Consequence and Cond, a small convex programme over
the possible worlds for the others (in :mod:`._arbitrage`: an interior-point method over
all tuples at once, SLSQP per tuple for what it does not certify), with a duality-gap
certificate per tuple.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import numpy as np
import pandas as pd

from .._docstrings import fill_doc
from .._parameters import check_choice
from .._parameters import check_float
from .._parameters import check_resampling
from .._resampling import MEAN_KINDS
from .._resampling import cluster_mean_interval
from .._results import CoherenceResult
from .._results import ConfidenceInterval
from .._rng import RNGLike
from .._rng import check_rng
from .._validation import as_dataframe
from .._validation import param_error
from .._validation import probability_column
from .._validation import require_columns
from .._warnings import SmallSampleWarning
from ._arbitrage import solve_arbitrage
from ._summaries import ViolationSummary
from ._summaries import summary_attributes

__all__ = [
    "CHECKERS",
    "ConsistencyCheckResult",
    "arbitrage_violation",
    "consistency_check",
    "frequentist_violation",
]

_N = None  # an annulled (conditional) question in a world


@dataclass(frozen=True)
class _Spec:
    """One checker: its questions (the released files' keys) and possible worlds."""

    name: str
    authors_name: str
    questions: tuple[str, ...]
    worlds: tuple[tuple[int | None, ...], ...]
    code_worlds: tuple[tuple[int | None, ...], ...] | None = None  # when the code differs

    def world_matrix(self, definition: str) -> np.ndarray:
        """(n_worlds, k) with 1 (true), 0 (false), -1 (annulled)."""
        worlds = self.code_worlds if definition == "code" and self.code_worlds else self.worlds
        return np.array([[-1 if v is None else v for v in w] for w in worlds], dtype=np.int64)


_SPECS: dict[str, _Spec] = {s.name: s for s in (
    _Spec("negation", "NegChecker", ("P", "not_P"), ((1, 0), (0, 1))),
    _Spec("paraphrase", "ParaphraseChecker", ("P", "para_P"), ((1, 1), (0, 0))),
    _Spec("consequence", "ConsequenceChecker", ("P", "cons_P"), ((1, 1), (0, 1), (0, 0))),
    _Spec("and", "AndChecker", ("P", "Q", "P_and_Q"),
          ((1, 1, 1), (1, 0, 0), (0, 1, 0), (0, 0, 0))),
    _Spec("or", "OrChecker", ("P", "Q", "P_or_Q"),
          ((1, 1, 1), (1, 0, 1), (0, 1, 1), (0, 0, 0))),
    # the authors' code enumerates every boolean vector with P + Q = (P and Q) + (P or Q),
    # which admits two impossible worlds, (1, 0, 1, 0) and (0, 1, 1, 0)
    _Spec("and_or", "AndOrChecker", ("P", "Q", "P_and_Q", "P_or_Q"),
          ((1, 1, 1, 1), (1, 0, 0, 1), (0, 1, 0, 1), (0, 0, 0, 0)),
          code_worlds=((1, 1, 1, 1), (1, 0, 0, 1), (1, 0, 1, 0), (0, 1, 0, 1), (0, 1, 1, 0),
                       (0, 0, 0, 0))),
    _Spec("but", "ButChecker", ("P", "Q_and_not_P", "P_or_Q"),
          ((1, 0, 1), (0, 1, 1), (0, 0, 0))),
    _Spec("cond", "CondChecker", ("P", "Q_given_P", "P_and_Q"),
          ((1, 1, 1), (1, 0, 0), (0, _N, 0))),
    _Spec("cond_cond", "CondCondChecker", ("P", "Q_given_P", "R_given_P_and_Q", "P_and_Q_and_R"),
          ((1, 1, 1, 1), (1, 1, 0, 0), (1, 0, _N, 0), (0, _N, _N, 0))),
    _Spec("expected_evidence", "ExpectedEvidenceChecker", ("P", "Q", "P_given_Q", "P_given_not_Q"),
          ((1, 1, 1, _N), (1, 0, _N, 1), (0, 1, 0, _N), (0, 0, _N, 0))),
)}

#: The ten checkers: name -> the questions of a tuple, in the released files' keys.
CHECKERS: Mapping[str, tuple[str, ...]] = {name: s.questions for name, s in _SPECS.items()}

_BY_AUTHORS_NAME = {s.authors_name: s.name for s in _SPECS.values()}

#: Forecasts are moved to [_CODE_EPS, 1 - _CODE_EPS] under definition="code" (their
#: ``remove_zeros``), and a tuple whose basic violation is below _CODE_BASIC is 0 there.
_CODE_EPS = 1e-3
_CODE_BASIC = 1e-5


def checker_spec(checker: Any, owner: str) -> _Spec:
    """The spec of a checker named as here or by its authors' class name (``'NegChecker'``)."""
    if isinstance(checker, str):
        name = _BY_AUTHORS_NAME.get(checker, checker)
        if name in _SPECS:
            return _SPECS[name]
    raise ValueError(param_error("checker", owner, "one of " + ", ".join(
        repr(c) for c in _SPECS) + " (or the authors' class name, e.g. 'NegChecker')", checker))


def possible_worlds(checker: str, definition: str = "paper") -> np.ndarray:
    """The possible worlds of a checker: ``(n_worlds, k)`` with 1 (true), 0 (false) and
    -1 (annulled), the columns in the order of ``CHECKERS[checker]``."""
    owner = "possible_worlds"
    definition = check_choice(definition, "definition", owner, ("paper", "code"))
    return checker_spec(checker, owner).world_matrix(definition)


# --------------------------------------------------------------------------- basic violation
def _basic_violation(name: str, f: np.ndarray) -> np.ndarray:
    """A violation that is 0 exactly on consistent forecasts (the authors' ``violation_basic``)."""
    c = [f[:, j] for j in range(f.shape[1])]
    zero = np.zeros(len(f))
    if name == "negation":
        return np.abs(c[0] + c[1] - 1)
    if name == "paraphrase":
        return np.abs(c[0] - c[1])
    if name == "consequence":
        return np.maximum(c[0] - c[1], 0.0)
    if name == "and":
        return np.maximum.reduce([np.maximum(c[0] + c[1] - 1, 0) - c[2],
                                  c[2] - np.minimum(c[0], c[1]), zero])
    if name == "or":
        return np.maximum.reduce([np.maximum(c[0], c[1]) - c[2],
                                  c[2] - np.minimum(1.0, c[0] + c[1]), zero])
    if name == "and_or":
        return np.abs(c[0] + c[1] - c[2] - c[3])
    if name == "but":
        return np.abs(c[0] + c[1] - c[2])
    if name == "cond":
        return np.abs(c[0] * c[1] - c[2])
    if name == "cond_cond":
        return np.abs(c[0] * c[1] * c[2] - c[3])
    # expected_evidence: P, Q, P|Q, P|not Q
    return np.abs(c[0] - c[2] * c[1] - c[3] * (1 - c[1]))


# --------------------------------------------------------------------------- frequentist
def frequentist_terms(name: str, f: np.ndarray, beta: float) -> np.ndarray:
    """The authors' frequentist violations (their final ``frequentist_violation``)."""
    c = [f[:, j] for j in range(f.shape[1])]

    def var(x: np.ndarray) -> np.ndarray:
        return x * (1 - x)

    def ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
        return np.asarray(num / np.sqrt(den + beta), dtype=np.float64)

    if name == "negation":
        return ratio(np.abs(c[0] + c[1] - 1), var(c[0]) + var(c[1]))
    if name == "paraphrase":
        return ratio(np.abs(c[0] - c[1]), var(c[0]) + var(c[1]))
    if name == "consequence":
        return np.where(c[0] <= c[1], 0.0, ratio(np.abs(c[0] - c[1]), var(c[0]) + var(c[1])))
    if name == "and":
        p, q, pq = c
        r = np.minimum(p, q)
        lhs = np.where(p + q - 1 <= pq, 0.0, ratio(p + q - 1 - pq, var(p) + var(q) + var(pq)))
        rhs = np.where(r >= pq, 0.0, ratio(pq - r, var(pq) + var(r)))
        return np.maximum(lhs, rhs)
    if name == "or":
        p, q, por = c
        s = np.maximum(p, q)
        lhs = np.where(s <= por, 0.0, ratio(s - por, var(s) + var(por)))
        rhs = np.where(p + q >= por, 0.0, ratio(por - p - q, var(p) + var(q) + var(por)))
        return np.maximum(lhs, rhs)
    if name == "and_or":
        p, q, pand, por = c
        return ratio(np.abs(p + q - por - pand), var(p) + var(q) + var(por) + var(pand))
    if name == "but":
        p, qnp, por = c
        return ratio(np.abs(por - (p + qnp)), var(por) + var(p) + var(qnp))
    if name == "cond":
        p, qgp, pq = c
        return ratio(np.abs(p * qgp - pq), p * qgp * (qgp * (1 - p) + p * (1 - qgp)) + var(pq))
    if name == "cond_cond":
        p, q, r, pqr = c
        prod = p * q * r
        den = prod * (p * q + q * r + prod) - 3 * prod ** 2 + var(pqr)
        return ratio(np.abs(prod - pqr), den)
    # expected_evidence
    a, d, b, cc = c  # P, Q, P|Q, P|not Q
    den = var(a) + d ** 2 * var(b) + (1 - d) ** 2 * var(cc) + (b - cc) ** 2 * var(d)
    return ratio(np.abs(a - b * d - cc * (1 - d)), den)


@fill_doc
def frequentist_violation(checker: str, forecasts: Any, *, beta: float = 1e-3,
                          definition: str = "paper") -> np.ndarray:
    r"""Per-tuple frequentist violation of one checker (Paleka et al. 2025).

    Each tuple's deviation from its checker's identity (or, for the inequality checkers,
    from its bound), divided by the deviation's delta-method standard deviation for a
    forecaster whose every forecast is binomially noisy (regularised by ``beta``): the
    same deviation counts more near 0 and 1, where such noise is small.

    Parameters
    ----------
    %(checker_forecasts)s
    beta : float > 0, default 1e-3
        Regulariser added to the variance in the denominator.
    definition : {'paper', 'code'}, default 'paper'
        ``'code'`` reproduces the released code, which returns 0 when the basic
        violation is below 1e-5.

    Returns
    -------
    numpy.ndarray
        The violation per tuple; a tuple is flagged when it exceeds
        ``gamma * sigma`` (their defaults 2.58 x 0.05).

    See Also
    --------
    arbitrage_violation : the arbitrage violation of the same tuples.
    consistency_check : the violations over a table, with intervals.

    Notes
    -----
    Each violation is the deviation from the checker's identity (or, for the
    inequality checkers Consequence, And and Or, the amount by which a bound is
    exceeded) divided by :math:`\sqrt{V + \beta}`, where *V* is the delta-method
    variance of that deviation for a forecaster whose every forecast is
    binomially noisy. For Negation,

    .. math::

        v = \frac{|P + P_{\neg} - 1|}{\sqrt{P(1-P) + P_{\neg}(1-P_{\neg}) + \beta}}.

    The formulas per checker are listed in the docs page *Consistency checks*.

    Examples
    --------
    >>> from coherence import frequentist_violation
    >>> [round(float(v), 4) for v in frequentist_violation("negation", [[0.7, 0.3], [0.7, 0.5]])]
    [0.0, 0.2946]
    """
    owner = "frequentist_violation"
    spec = checker_spec(checker, owner)
    definition = check_choice(definition, "definition", owner, ("paper", "code"))
    beta = check_float(beta, "beta", owner, low=0.0, low_open=True)
    f = _forecast_matrix(forecasts, spec, owner)
    out = frequentist_terms(spec.name, f, beta)
    if definition == "code":
        out = np.where(_basic_violation(spec.name, f) < _CODE_BASIC, 0.0, out)
    return out


# --------------------------------------------------------------------------- arbitrage
def overlap_distance(both: np.ndarray, neither: np.ndarray) -> np.ndarray:
    """-2 log(sqrt(both) + sqrt(neither)): the Bhattacharyya distance of two binary
    forecasts a and b given the products ``both`` = a b and ``neither`` = (1-a)(1-b).

    The closed-form arbitrage of Negation (a = P, b = 1 - P_not), Paraphrase,
    Consequence and Cond (through :func:`bhattacharyya_distance`);
    :func:`coherence.negation_check` uses it too. Infinite when the two forecasts are
    opposite certainties; 0 when they are equal, and also (the overlap rounds to 1) when
    they differ by less than about 1e-8, a distance below about 1e-16 nats."""
    overlap = np.sqrt(both) + np.sqrt(neither)
    with np.errstate(divide="ignore"):
        return np.asarray(np.maximum(-2.0 * np.log(np.minimum(overlap, 1.0)), 0.0))


def bhattacharyya_distance(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """-2 log(sqrt(a b) + sqrt((1-a)(1-b))): the Bhattacharyya distance of two binary
    forecasts a and b, in nats (:func:`overlap_distance` of their products).

    The closed-form arbitrage of Paraphrase, Consequence and Cond (a = P(P) P(Q|P),
    b = P(P and Q)); :func:`coherence.conditional_tuple_check` uses it too."""
    return overlap_distance(a * b, (1 - a) * (1 - b))


def _arbitrage(spec: _Spec, f: np.ndarray, definition: str) -> tuple[np.ndarray, np.ndarray]:
    """Per-tuple arbitrage and duality gap (0 for closed forms)."""
    raw_basic = _basic_violation(spec.name, f)  # the code tests it before moving 0s and 1s
    if definition == "code":
        f = np.where(f <= 0.0, _CODE_EPS, np.where(f >= 1.0, 1.0 - _CODE_EPS, f))
    n = len(f)
    gap = np.zeros(n)
    name = spec.name
    if name == "negation":  # the expression negation_check has always used
        value = overlap_distance(f[:, 0] * (1 - f[:, 1]), (1 - f[:, 0]) * f[:, 1])
    elif name == "paraphrase":
        value = bhattacharyya_distance(f[:, 0], f[:, 1])
    elif name == "consequence":
        value = np.where(f[:, 0] <= f[:, 1], 0.0, bhattacharyya_distance(f[:, 0], f[:, 1]))
    elif name == "cond":  # P and Q|P together are one bet on the three cells PQ, P~Q, ~P
        value = bhattacharyya_distance(f[:, 0] * f[:, 1], f[:, 2])
    else:
        worlds = spec.world_matrix(definition)
        value = np.zeros(n)
        basic = _basic_violation(name, f)
        if name == "and_or" and definition == "paper":
            # its identity P + Q = P_and_Q + P_or_Q holds on tuples no distribution gives:
            # P_and_Q above min(P, Q) or below P + Q - 1 (their arbitrage is not 0)
            basic = np.maximum.reduce([basic, f[:, 2] - np.minimum(f[:, 0], f[:, 1]),
                                       f[:, 0] + f[:, 1] - 1.0 - f[:, 2]])
        rows = np.flatnonzero(basic > 0)
        value[rows], gap[rows] = solve_arbitrage(f[rows], worlds)
    if definition == "code":
        value = np.where(raw_basic < _CODE_BASIC, 0.0, value)
    return np.asarray(value, dtype=np.float64), gap


@fill_doc
def arbitrage_violation(checker: str, forecasts: Any, *, definition: str = "paper") -> np.ndarray:
    r"""Per-tuple arbitrage violation of one checker, in nats (Paleka et al. 2025).

    The arbitrage violation is the log-score profit that a trader who knows nothing
    about the questions can guarantee against the forecasts in every possible world: 0
    for coherent forecasts, larger the further they are from every coherent set.
    ``definition`` chooses between the paper's formula and the authors' code.

    Parameters
    ----------
    %(checker_forecasts)s
    definition : {'paper', 'code'}, default 'paper'
        ``'paper'``: the exact max-min value over the logically possible worlds.
        ``'code'``: as the released code computes it: forecasts of 0 or 1 moved
        to 0.001 and 0.999, 0 when the basic violation is below 1e-5, and for
        AndOr the code's six "possible" worlds (two of them impossible).

    Returns
    -------
    numpy.ndarray
        The violation per tuple (``inf`` when a forecast of exactly 0 or 1 is
        contradicted in every possible world under ``'paper'``).

    See Also
    --------
    frequentist_violation : the frequentist violation of the same tuples.
    consistency_check : the violations over a table, with intervals.

    Notes
    -----
    With log scoring and possible worlds :math:`\Omega`, the arbitrage of
    forecasts *p* is

    .. math::

        A(p) = \max_{q \in [0,1]^k} \min_{\omega \in \Omega}
        \sum_{i \text{ resolved in } \omega} \ln q_i(\omega) - \ln p_i(\omega),

    where :math:`q_i(\omega)` is :math:`q_i` if question *i* is true in
    :math:`\omega` and :math:`1 - q_i` if false; annulled (conditional)
    questions score 0. By the minimax theorem it equals

    .. math::

        A(p) = \min_{\mu \in \Delta(\Omega)} \sum_i m_i(\mu)\,
        \mathrm{KL}\big(\mathrm{Bern}(t_i(\mu)/m_i(\mu)) \,\|\, \mathrm{Bern}(p_i)\big),

    with :math:`t_i` and :math:`m_i` the :math:`\mu`-probabilities that
    question *i* is true and that it resolves; the optimal *q* is
    :math:`t/m`, a consistent forecast. Negation, Paraphrase and Consequence
    have the closed form :math:`-2\ln(\sqrt{ab} + \sqrt{(1-a)(1-b)})` (a
    Bhattacharyya distance) with (a, b) = (P, 1 - P_not), (P, P') and, when
    P > cons_P, (P, cons_P); Cond has it with (a, b) = (P Q|P, P_and_Q) (the
    released code's formula; the numerical solver agrees with it to 1e-7 in the
    tests). The other checkers solve the convex programme over
    :math:`\mu` for all tuples at once, by a log-barrier interior-point method
    finished with Newton steps on the face it finds; a tuple it does not certify
    (a gap above 1e-8, or above 0.1% of the value) and a tuple with a forecast of
    exactly 0 or 1 are solved alone with SLSQP (two starts; starts near each vertex
    of the simplex while the bounds differ by more than 1e-8). The value returned is
    the profit the resulting *q* guarantees, a lower bound, and the dual objective
    an upper bound: :func:`consistency_check` reports the gap per tuple (below 1e-6
    in the tests). A tuple that some distribution over the possible worlds gives has
    arbitrage 0: the basic violation is 0 exactly there, except for AndOr, whose
    identity also holds where P_and_Q exceeds min(P, Q) or falls below P + Q - 1
    (those tuples are solved).

    Examples
    --------
    >>> from coherence import arbitrage_violation
    >>> [round(float(v), 4) for v in arbitrage_violation("negation", [[0.7, 0.3], [0.7, 0.5]])]
    [0.0, 0.0426]
    >>> round(float(arbitrage_violation("and", [[0.5, 0.5, 0.6]])[0]), 4)
    0.0136
    """
    owner = "arbitrage_violation"
    spec = checker_spec(checker, owner)
    definition = check_choice(definition, "definition", owner, ("paper", "code"))
    return _arbitrage(spec, _forecast_matrix(forecasts, spec, owner), definition)[0]


def _forecast_matrix(forecasts: Any, spec: _Spec, owner: str) -> np.ndarray:
    if isinstance(forecasts, pd.DataFrame):
        require_columns(forecasts, spec.questions, owner=owner)
        frame = forecasts[list(spec.questions)]
    else:
        arr = np.asarray(forecasts, dtype=object)
        k = len(spec.questions)
        if arr.ndim != 2 or arr.shape[1] != k:
            raise ValueError(param_error("forecasts", owner, f"a 2-d array with {k} columns "
                                         f"({', '.join(spec.questions)})",
                                         f"an array of shape {arr.shape}"))
        frame = pd.DataFrame(arr, columns=list(spec.questions))
    if len(frame) == 0:
        raise ValueError(param_error("forecasts", owner, "non-empty", "no tuples"))
    cols = [probability_column(frame, q, owner=owner) for q in spec.questions]
    return np.ascontiguousarray(np.column_stack(cols))


# --------------------------------------------------------------------------- result
@dataclass(frozen=True, slots=True)
class ConsistencyCheckResult(CoherenceResult, test_name="consistency_check",
                             settings=("checker", "definition", "mean_arbitrage",
                                       "median_arbitrage", "trimmed_mean_arbitrage",
                                       "share_arbitrage_above", "mean_frequentist",
                                       "median_frequentist", "share_frequentist_above",
                                       "max_duality_gap", "tolerance", "sigma", "gamma", "beta",
                                       "n_resamples")):
    """Result of :func:`consistency_check`.

    ``statistic`` is the mean arbitrage violation over tuples, with a
    bootstrap-t interval over tuples (Student's small-sample factor on its pivot);
    ``pvalue`` is NaN (a descriptive check).

    Attributes
    ----------
    checker : str
        The checker's name (a key of :data:`CHECKERS`).
    definition : str
        ``'paper'`` or ``'code'`` (see :func:`arbitrage_violation`).
    arbitrage_summary : ViolationSummary
        Mean, median and share of tuples with arbitrage >= ``tolerance`` (the
        authors' failed checks) of the per-tuple arbitrage.
    frequentist_summary : ViolationSummary
        The same for the frequentist violation, flagged at >= ``gamma * sigma``.
    mean_arbitrage, median_arbitrage, share_arbitrage_above : float
        The numbers of ``arbitrage_summary`` under their flat names (read-only):
        ``.mean``, ``.median`` and ``.share_above``; the columns of ``to_frame()``.
    trimmed_mean_arbitrage : float
        Mean of the per-tuple arbitrage without its largest and its smallest value
        (the authors' "no outliers" average).
    mean_frequentist, median_frequentist, share_frequentist_above : float
        Likewise for ``frequentist_summary``.
    frequentist_interval : ConfidenceInterval
        Bootstrap-t interval of the mean frequentist violation, as ``confidence_interval``
        is of the mean arbitrage.
    max_duality_gap : float
        Largest per-tuple gap between the arbitrage's upper and lower bounds.
    tolerance, sigma, gamma, beta : float
        Settings used.
    n_resamples : int
        Bootstrap resamples.
    table : pandas.DataFrame
        One row per tuple: the forecasts, ``arbitrage``, ``arbitrage_scaled``
        (divided by the number of questions), ``arbitrage_gap``, ``frequentist``,
        ``arbitrage_flag``, ``frequentist_flag``.
    """

    checker: str = ""
    definition: str = "paper"
    arbitrage_summary: ViolationSummary = field(default_factory=ViolationSummary)
    trimmed_mean_arbitrage: float = np.nan
    frequentist_summary: ViolationSummary = field(default_factory=ViolationSummary)
    frequentist_interval: ConfidenceInterval = field(
        default_factory=lambda: ConfidenceInterval(np.nan, np.nan, 0.95))
    max_duality_gap: float = np.nan
    tolerance: float = 0.01
    sigma: float = 0.05
    gamma: float = 2.58
    beta: float = 1e-3
    n_resamples: int = 9999
    forecasts: pd.DataFrame = field(default_factory=pd.DataFrame)
    arbitrage: np.ndarray = field(default_factory=lambda: np.empty(0))
    arbitrage_gap: np.ndarray = field(default_factory=lambda: np.empty(0))
    frequentist: np.ndarray = field(default_factory=lambda: np.empty(0))
    table: pd.DataFrame = field(init=False)

    mean_arbitrage, median_arbitrage, share_arbitrage_above = summary_attributes("arbitrage")
    mean_frequentist, median_frequentist, share_frequentist_above = summary_attributes(
        "frequentist")

    def _build_table(self) -> pd.DataFrame:
        out = self.forecasts.copy()
        k = max(len(CHECKERS.get(self.checker, ())), 1)
        out["arbitrage"] = self.arbitrage
        out["arbitrage_scaled"] = self.arbitrage / k
        out["arbitrage_gap"] = self.arbitrage_gap
        out["frequentist"] = self.frequentist
        out["arbitrage_flag"] = self.arbitrage >= self.tolerance
        out["frequentist_flag"] = self.frequentist >= self.gamma * self.sigma
        return out


def _trimmed_mean(x: np.ndarray) -> float:
    if len(x) <= 2:
        return float(np.mean(x))
    return float(np.mean(np.sort(x)[1:-1]))


def mean_violation(values: np.ndarray, n_resamples: int, rng: np.random.Generator,
                   confidence_level: float,
                   upper: float = math.inf) -> tuple[float, ConfidenceInterval]:
    """The mean violation over tuples (or rows) and its interval. The mean is
    :func:`sorted_mean`'s (:class:`ViolationSummary`'s, the same to the bit in any row
    order), and the interval is built around it, so one that is the point itself is that
    number: the bootstrap-t over the rows with Student's small-sample factor
    (``cluster_mean_interval(kind='heavy-tailed')``, as the log score's), cut at 0 and at
    ``upper`` (the largest value a violation can take; at the mean where rounding puts it
    just above); the percentile interval of the resampled means where the bootstrap-t
    interval lies wholly outside that range (a few resamples); ``(inf, inf)`` when a
    violation is infinite. Used by :func:`consistency_check` and by the row-wise checks
    of ``_axioms``."""
    ordered = np.sort(values)  # sorted once: the mean and interval ignore the row order
    mean = float(ordered.mean())  # sorted_mean's sum, without sorting again
    if not np.all(np.isfinite(values)):  # an infinite violation makes the mean infinite
        return mean, ConfidenceInterval(np.inf, np.inf, confidence_level)
    low, high = cluster_mean_interval(ordered, np.arange(ordered.size), n_resamples,
                                      confidence_level, rng, kind="heavy-tailed",
                                      upper=max(upper, mean), estimate=mean)
    return mean, ConfidenceInterval(low, high, confidence_level)


def warn_point_interval(ci: ConfidenceInterval, values: np.ndarray, label: str, owner: str,
                        unit: str = "row", stacklevel: int = 4) -> None:
    """A :class:`SmallSampleWarning` where the interval of a mean violation is the point
    itself (one ``unit``, or violations that do not vary): the sample shows no
    uncertainty. Violations that are all exactly 0 (beliefs from one joint) are not
    warned about. ``stacklevel`` points at the caller of the public function (4: the
    public function calls a helper that calls this)."""
    mean = float(values.mean())
    if math.isfinite(ci.low) and ci.low == ci.high and (len(values) == 1 or mean != 0.0):
        what = (f"one {unit}" if len(values) == 1
                else f"{len(values)} {unit}s whose {label}s are equal")
        warnings.warn(f"{owner}: the interval of the mean {label} is the point itself "
                      f"({what}): the sample shows no uncertainty, and the interval does not "
                      f"reflect what more {unit}s could show.", SmallSampleWarning,
                      stacklevel=stacklevel)


def consistency_check(data: Any, checker: str, *, columns: Mapping[str, str] | None = None,
                      definition: str = "paper", tolerance: float = 0.01, sigma: float = 0.05,
                      gamma: float = 2.58, beta: float = 1e-3, confidence_level: float = 0.95,
                      n_resamples: int = 9999,
                      rng: RNGLike = None) -> ConsistencyCheckResult:
    r"""One consistency checker of Paleka et al. (2025) over a table of tuples.

    Takes a table of forecast tuples of one checker (negation, paraphrase, and, or,
    cond, ...) and returns each tuple's arbitrage and frequentist violations, their
    means, medians and shares flagged, with bootstrap-t intervals over tuples. Whether
    the violations exceed what the forecaster's own noise produces is
    :func:`consistency_noise_test`'s question.

    Parameters
    ----------
    data : pandas.DataFrame or convertible
        One row per tuple, one column per question of the checker, holding the
        forecast probability (the keys of ``CHECKERS[checker]``, e.g. ``P`` and
        ``not_P`` for ``'negation'``, as :func:`read_consistency_tuples` returns).
    checker : str
        One of ``'negation', 'paraphrase', 'consequence', 'and', 'or', 'and_or',
        'but', 'cond', 'cond_cond', 'expected_evidence'`` (or the authors' class
        name, e.g. ``'NegChecker'``).
    columns : mapping, optional
        Question key -> column name in ``data``, for columns named otherwise.
    definition : {'paper', 'code'}, default 'paper'
        See :func:`arbitrage_violation`; applies to both metrics.
    tolerance : float > 0, default 0.01
        A tuple's arbitrage is flagged at ``>= tolerance`` nats (the authors' default).
        0 is refused: every arbitrage is ``>= 0``, so it would flag coherent tuples.
    sigma, gamma : float > 0, defaults 0.05 and 2.58
        The frequentist violation is flagged at ``>= gamma * sigma``.
    beta : float > 0, default 1e-3
        Regulariser of the frequentist denominator.
    confidence_level : float in (0, 1), default 0.95
    n_resamples : int >= 1, default 9999
        Bootstrap resamples (over tuples) of the mean violations.
    rng : int, numpy.random.Generator or None

    Returns
    -------
    ConsistencyCheckResult
        ``statistic`` is the mean arbitrage (bootstrap-t interval, Notes);
        per-tuple values in ``table``.

    Raises
    ------
    ValueError
        For an unknown checker, a missing column, or a forecast outside [0, 1]
        or missing (the column and the first offending rows are named).

    Warns
    -----
    SmallSampleWarning
        When the arbitrage interval is the point itself: one tuple, or tuples whose
        arbitrage violations are all equal (and not all 0).

    See Also
    --------
    arbitrage_violation : the per-tuple arbitrage violation of one checker.
    frequentist_violation : the per-tuple frequentist violation of one checker.
    read_consistency_tuples : read tuples from the released files of Paleka et al.
    negation_check : the negation checker on two arrays of probabilities.
    brier_decomposition : the incoherence term of the Brier score of the same sets.

    Notes
    -----
    The possible worlds of each checker (1 true, 0 false, - annulled), in the
    order of its questions::

        negation           P, not_P                         10 01
        paraphrase         P, para_P                        11 00
        consequence        P, cons_P                        11 01 00
        and                P, Q, P_and_Q                    111 100 010 000
        or                 P, Q, P_or_Q                     111 101 011 000
        and_or             P, Q, P_and_Q, P_or_Q            1111 1001 0101 0000
        but                P, Q_and_not_P, P_or_Q           101 011 000
        cond               P, Q_given_P, P_and_Q            111 100 0-0
        cond_cond          P, Q_given_P, R_given_P_and_Q,   1111 1100 10-0 0--0
                           P_and_Q_and_R
        expected_evidence  P, Q, P_given_Q, P_given_not_Q   111- 10-1 010- 00-0

    The arbitrage and frequentist metrics are defined in
    :func:`arbitrage_violation` and :func:`frequentist_violation`. A tuple is flagged at
    or above its threshold (``arbitrage >= tolerance``, ``frequentist >= gamma * sigma``),
    as the authors' released code fails a check unless its violation is below it;
    :func:`negation_check` counts violations strictly above thresholds of its own.

    Both intervals are bootstrap-t intervals over tuples, their pivot's quantiles
    widened by Student's small-sample factor on Satterthwaite's degrees of freedom (the
    log score's interval, :func:`forecast_scores`), cut at 0. Violations are mostly 0
    or small with a few large ones, where the percentile interval this function gave
    before was too short: on simulated forecasters it held the population's mean
    arbitrage in 0.59-0.92 of studies of 20-100 tuples (``benchmarks/
    validate_consistency_interval.py``, docs/consistency_checks.md). With few tuples
    and rare large violations no interval of the mean is reliable; the median and the
    share flagged are then the steadier summaries.

    References
    ----------
    Paleka, D., Sudhir, A. P., Alvarez, A., Bhat, V., Shen, A., Wang, Y. and
    Tramèr, F. (2025). Consistency checks for language model forecasters.
    *International Conference on Learning Representations (ICLR)*.

    Examples
    --------
    >>> import pandas as pd
    >>> from coherence import consistency_check
    >>> tuples = pd.DataFrame({"P": [0.5, 0.6], "Q": [0.4, 0.5], "P_and_Q": [0.2, 0.65]})
    >>> res = consistency_check(tuples, "and", rng=0)
    >>> [round(float(v), 4) for v in res.table["arbitrage"]]
    [0.0, 0.0233]
    >>> [round(float(v), 4) for v in res.table["frequentist"]]
    [0.0, 0.2168]
    >>> res.table["arbitrage_flag"].tolist(), res.table["frequentist_flag"].tolist()
    ([False, True], [False, True])
    """
    owner = "consistency_check"
    spec = checker_spec(checker, owner)
    definition = check_choice(definition, "definition", owner, ("paper", "code"))
    tolerance = check_float(tolerance, "tolerance", owner)
    if tolerance <= 0.0:  # every arbitrage is >= 0: 0 would flag a coherent tuple
        raise ValueError(param_error(
            "tolerance", owner, "a finite float > 0 (a tuple is flagged at arbitrage >= "
            "tolerance, and a coherent tuple's arbitrage is 0; for any violation at all, "
            "pass a small positive tolerance such as 1e-9)", tolerance))
    sigma = check_float(sigma, "sigma", owner, low=0.0, low_open=True)
    gamma = check_float(gamma, "gamma", owner, low=0.0, low_open=True)
    beta = check_float(beta, "beta", owner, low=0.0, low_open=True)
    n_resamples, confidence_level = check_resampling(owner, n_resamples, confidence_level)
    gen = check_rng(rng, owner=owner)
    df = as_dataframe(data, owner=owner)
    if columns is not None and not isinstance(columns, Mapping):
        raise TypeError(param_error("columns", owner, "a mapping of question key -> column "
                                    "name, or None", type(columns).__name__))
    mapping = dict(columns or {})
    unknown = sorted(set(mapping) - set(spec.questions))
    if unknown:
        raise ValueError(param_error("columns", owner, "a mapping whose keys are among "
                                     + ", ".join(spec.questions), f"keys {unknown}"))
    names = {q: mapping.get(q, q) for q in spec.questions}
    shared = sorted({c for c in names.values() if list(names.values()).count(c) > 1})
    if shared:  # two questions read from one column: made-up violations
        raise ValueError(param_error("columns", owner, "one column per question (of "
                                     + ", ".join(spec.questions) + ")",
                                     f"{names} (column(s) {shared} read twice)"))
    require_columns(df, names, owner=owner)
    if len(df) == 0:
        raise ValueError(param_error("data", owner, "a table with at least one tuple",
                                     "an empty table"))
    f = np.column_stack([probability_column(df, names[q], owner=owner) for q in spec.questions])
    arbitrage, gap = _arbitrage(spec, f, definition)
    frequentist = frequentist_terms(spec.name, f, beta)
    if definition == "code":
        frequentist = np.where(_basic_violation(spec.name, f) < _CODE_BASIC, 0.0, frequentist)
    n = len(f)
    mean_arbitrage, arb_ci = mean_violation(arbitrage, n_resamples, gen, confidence_level)
    _, freq_ci = mean_violation(frequentist, n_resamples, gen, confidence_level)
    warn_point_interval(arb_ci, arbitrage, "arbitrage violation", owner, unit="tuple",
                        stacklevel=3)
    forecasts = pd.DataFrame(f, columns=list(spec.questions), index=df.index)
    return ConsistencyCheckResult(
        statistic=mean_arbitrage, pvalue=np.nan, confidence_interval=arb_ci, n_obs=n,
        method=f"mean arbitrage violation, {MEAN_KINDS['heavy-tailed']} over tuples",
        checker=spec.name, definition=definition,
        arbitrage_summary=ViolationSummary.of(arbitrage, tolerance, inclusive=True),
        trimmed_mean_arbitrage=_trimmed_mean(arbitrage),
        frequentist_summary=ViolationSummary.of(frequentist, gamma * sigma, inclusive=True),
        frequentist_interval=freq_ci, max_duality_gap=float(gap.max()), tolerance=tolerance,
        sigma=sigma, gamma=gamma, beta=beta, n_resamples=n_resamples, forecasts=forecasts,
        arbitrage=arbitrage, arbitrage_gap=gap, frequentist=frequentist)
