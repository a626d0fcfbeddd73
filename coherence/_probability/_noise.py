"""Consistency violations beyond the forecaster's own noise.

The checkers of :mod:`coherence._probability._checks` flag a tuple whose violation exceeds
a fixed tolerance. A forecaster whose stated probabilities are coherent beliefs plus
run-to-run noise violates every checker a little on every tuple, by an amount that grows
with its noise. This module tests, from repeated forecasts of each question, whether the
violations exceed what that noise produces: per tuple and for the whole study, with the
share of tuples incoherent beyond noise.

Each checker's coherence is written as constraints on the *true* (expected) forecasts
:math:`\\pi`: one multilinear equality :math:`g(\\pi) = 0` (negation, paraphrase, and_or,
but, cond, cond_cond, expected_evidence) or linear inequalities :math:`g_j(\\pi) \\le 0`
(consequence, and, or): the constraints whose violation is the checker's basic violation.
The statistic of a tuple is the squared violation of its mean forecasts, whose expectation
under noise is linear in the noise variances, so that the per-question repeat variances
(unbiased with any number of repetitions) give an unbiased noise correction.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable
from dataclasses import dataclass
from itertools import combinations
from typing import Any

import numpy as np
import pandas as pd

from .._parameters import check_choice
from .._parameters import check_resampling
from .._resampling import MC_TIE_RTOL
from .._resampling import monte_carlo_pvalue
from .._resampling import percentile_interval
from .._resampling import round_off_difference
from .._resampling import tie_bound
from .._results import CoherenceResult
from .._results import ConfidenceInterval
from .._results import Summary
from .._rng import RNGLike
from .._rng import check_rng
from .._validation import as_dataframe
from .._validation import check_column_names
from .._validation import column_error
from .._validation import label_column
from .._validation import label_text
from .._validation import listed
from .._validation import no_missing
from .._validation import nonempty
from .._validation import probability_column
from .._validation import require_columns
from .._warnings import SmallSampleWarning
from ._checks import CHECKERS
from ._checks import checker_spec

__all__ = ["ConsistencyNoiseResult", "consistency_noise_test"]

_OWNER = "consistency_noise_test"
#: Tuples below which the study-level approximations are rough (warned).
MIN_TUPLES = 20
#: Tuples below which no share incoherent beyond noise is given (NaN, warned): Storey's
#: estimate from 1-4 p-values is 0, 1 or a few steps between, and on coherent studies its
#: interval held the true share 0 in 0.52-0.55 of studies of 1 tuple, 0.80-0.81 of 2,
#: 0.88-0.93 of 3 and 0.90-0.97 of 4 (0.93-0.99 from 5; 300-400 studies a design).
MIN_SHARE_TUPLES = 5
#: A constraint of an inequality checker more than KAPPA standard errors inside its bound
#: is taken as slack (generalised moment selection); the others as binding. A constraint
#: at KAPPA within round-off (EXCESS_RTOL) is binding: heaped forecasts put one exactly
#: there (P 0.49, Q 0.23 and 0.31, P and Q 0.15: t = -0.12 / 0.04), and the last bit
#: decided otherwise between a tuple and its complement (and -> or).
KAPPA = 3.0
#: Repetitions of every question that ``method='resampling'`` needs: with two, the residual
#: bootstrap of a question has three resampled means and a resampled spread of 0 half the
#: time, and its study test rejected 0.80-0.98 of coherent studies (benchmarks'
#: checker-noise matrix).
MIN_RESAMPLING_REPETITIONS = 3
#: Storey's lambda of the share of tuples incoherent beyond noise.
STOREY_LAMBDA = 0.5
#: Violations, residuals and standard deviations below this are round-off (taken as 0).
TINY = 1e-12
#: An excess (squared violation minus its noise expectation) within this share of the
#: larger of the two is round-off (taken as 0; :func:`round_off_difference`): heaped
#: forecasts (P 1, 1, 1; not_P 0, 0, 0.1) make them equal in exact arithmetic, and the
#: study score scales the sum of the excesses by their own size, so round-off alone gave
#: p-values of 4e-6 or 0.99999. The same share decides a constraint at KAPPA.
EXCESS_RTOL = MC_TIE_RTOL
TUPLE_COLUMNS: tuple[str, ...] = (
    "set", "min_repetitions", "violation", "squared_violation", "noise_violation",
    "excess", "se", "statistic", "df", "pvalue", "flagged",
)


# --------------------------------------------------------------------------- constraints
def _equality(name: str) -> Callable[[np.ndarray], np.ndarray] | None:
    """The multilinear constraint g(f) = 0 of an equality checker (None for the others);
    ``f`` is (..., k) in the order of ``CHECKERS[name]``."""
    table: dict[str, Callable[[np.ndarray], np.ndarray]] = {
        "negation": lambda f: f[..., 0] + f[..., 1] - 1.0,
        "paraphrase": lambda f: f[..., 0] - f[..., 1],
        "and_or": lambda f: f[..., 0] + f[..., 1] - f[..., 2] - f[..., 3],
        "but": lambda f: f[..., 0] + f[..., 1] - f[..., 2],
        "cond": lambda f: f[..., 0] * f[..., 1] - f[..., 2],
        "cond_cond": lambda f: f[..., 0] * f[..., 1] * f[..., 2] - f[..., 3],
        "expected_evidence": lambda f: (f[..., 0] - f[..., 2] * f[..., 1]
                                        - f[..., 3] * (1.0 - f[..., 1])),
    }
    return table.get(name)


#: The linear constraints A f + b <= 0 of the inequality checkers.
_INEQUALITIES: dict[str, tuple[tuple[tuple[float, ...], ...], tuple[float, ...]]] = {
    "consequence": (((1.0, -1.0),), (0.0,)),                       # P <= cons_P
    "and": (((1.0, 1.0, -1.0), (-1.0, 0.0, 1.0), (0.0, -1.0, 1.0)),  # P + Q - 1 <= PQ <= P, Q
            (-1.0, 0.0, 0.0)),
    "or": (((1.0, 0.0, -1.0), (0.0, 1.0, -1.0), (-1.0, -1.0, 1.0)),  # P, Q <= P_or_Q <= P + Q
           (0.0, 0.0, 0.0)),
}


def mixed_partial(g: Callable[[np.ndarray], np.ndarray], f: np.ndarray,
                  subset: tuple[int, ...]) -> np.ndarray:
    """The mixed partial derivative of a multilinear ``g`` in the coordinates ``subset``
    at ``f`` (..., k): exact, by differences over the corners of the unit cube."""
    out = np.zeros(f.shape[:-1])
    for corner in range(2 ** len(subset)):
        x = f.copy()
        ones = 0
        for bit, i in enumerate(subset):
            value = (corner >> bit) & 1
            x[..., i] = value
            ones += value
        out += (-1.0) ** (len(subset) - ones) * g(x)
    return out


def equality_pieces(g: Callable[[np.ndarray], np.ndarray], mean: np.ndarray, var: np.ndarray,
                    n: np.ndarray) -> dict[str, np.ndarray]:
    r"""Per-tuple pieces of an equality checker from mean forecasts ``mean`` (T, k), their
    repeat variances ``var`` (ddof 1) and repetitions ``n``.

    ``violation`` :math:`g(\bar p)`; ``noise`` the unbiased estimate of
    :math:`E[g(\bar p)^2] - g(\pi)^2` for independent questions,
    :math:`\sum_{S \ne \emptyset} (-1)^{|S|+1} \prod_{i \in S} v_i\, (\partial_S g)^2`
    with :math:`v_i = s_i^2 / n_i`; ``se`` and ``df`` the delta-method standard error
    :math:`\sqrt{\sum_i v_i (\partial_i g)^2}` and its Welch-Satterthwaite degrees of
    freedom.
    """
    v = var / n
    k = mean.shape[1]
    violation = g(mean)
    noise = np.zeros(len(mean))
    first = np.zeros_like(mean)
    for size in range(1, k + 1):
        for subset in combinations(range(k), size):
            d2 = mixed_partial(g, mean, subset) ** 2
            term = d2 * np.prod(v[:, list(subset)], axis=1)
            noise += (-1.0) ** (size + 1) * term
            if size == 1:
                first[:, subset[0]] = term
    se2 = first.sum(axis=1)
    with np.errstate(divide="ignore", invalid="ignore"):
        df = se2 ** 2 / np.sum(first ** 2 / np.maximum(n - 1, 1), axis=1)
    return {"violation": violation, "noise": noise, "se": np.sqrt(se2), "df": df,
            "corrected": violation ** 2 - noise}


def _t_sf(x: np.ndarray, df: np.ndarray) -> np.ndarray:
    from scipy.stats import t as student

    with np.errstate(invalid="ignore"):
        return np.asarray(student.sf(x, np.where(np.isfinite(df) & (df > 0), df, 1.0)))


# --------------------------------------------------------------------------- result
@dataclass(frozen=True, slots=True)
class ConsistencyNoiseResult(CoherenceResult, test_name="consistency_noise_test",
                             settings=("checker", "n_tuples", "share_flagged", "mean_violation",
                                       "mean_noise_violation", "study_statistic", "n_resamples")):
    """Result of :func:`consistency_noise_test`.

    Attributes
    ----------
    statistic : float
        Estimated share of tuples incoherent beyond the forecaster's noise (Storey's
        estimate from the per-tuple p-values: one minus twice the share of p-values above
        0.5, clipped to [0, 1]).
    pvalue : float
        The study-level p-value of "every tuple is coherent up to noise".
    confidence_interval : ConfidenceInterval
        Percentile bootstrap interval (over tuples) of the share: an interval of that
        conservative estimate, not the inversion of the study test, so it can hold 0 while
        ``pvalue`` rejects (see the function's Notes).
    n_obs : int
        Rows used (forecasts, one per tuple, role and repetition).
    method : str
        ``'parametric'`` or ``'resampling'``.
    checker : str
        The checker's name (a key of :data:`CHECKERS`).
    n_tuples : int
        Tuples tested.
    share_flagged : float
        Share of tuples whose own p-value is at most ``1 - confidence_level``.
    mean_violation : float
        Mean over tuples of the squared violation of the mean forecasts.
    mean_noise_violation : float
        Its expected value under the forecaster's noise for a coherent forecaster (the
        noise correction), averaged over tuples.
    study_statistic : float
        The study-level statistic: a standard-normal score (parametric) or Fisher's
        combination of the tuples' p-values (resampling).
    n_resamples : int
        Resamples of the repetitions (resampling) and of the tuples (the share's interval).
    table : pandas.DataFrame
        One row per tuple: ``set``, the fewest repetitions of its questions
        (``min_repetitions``), the signed ``violation`` of the mean forecasts (equality
        checkers) or the largest constraint excess (inequality checkers; negative inside
        the bounds), ``squared_violation``, its noise expectation ``noise_violation``,
        ``excess`` (their difference, unbiased for the true squared violation of an
        equality checker), the delta-method ``se`` and ``statistic`` (``violation / se``)
        with its Welch-Satterthwaite ``df``, ``pvalue`` and ``flagged``.
    """

    checker: str
    n_tuples: int
    share_flagged: float
    mean_violation: float
    mean_noise_violation: float
    study_statistic: float
    n_resamples: int
    table: pd.DataFrame

    def summary(self) -> Summary:
        """The headline figures followed by the most violating tuples."""
        table = self.table.sort_values("pvalue", kind="stable").head(10)[
            ["set", "violation", "squared_violation", "noise_violation", "pvalue",
             "flagged"]]
        caption = "tuples with the smallest p-values"
        return CoherenceResult.summary(self).with_table(caption, table, lead=[caption + ":"])


# --------------------------------------------------------------------------- array layer
def _question_arrays(sets: np.ndarray, roles: np.ndarray,
                     probs: np.ndarray, k: int) -> tuple[np.ndarray, ...]:
    """Per (tuple, role): mean, variance (ddof 1), count, as (T, k) arrays; and the
    question code of every row."""
    n_sets = int(sets.max()) + 1
    q = sets * k + roles
    n_q = n_sets * k
    count = np.bincount(q, minlength=n_q).astype(np.float64)
    mean = np.bincount(q, weights=probs, minlength=n_q) / np.maximum(count, 1)
    resid = probs - mean[q]
    var = np.bincount(q, weights=resid ** 2, minlength=n_q) / np.maximum(count - 1, 1)
    return (mean.reshape(n_sets, k), var.reshape(n_sets, k), count.reshape(n_sets, k), q,
            resid)


def _resampled_mean_noise(q: np.ndarray, resid: np.ndarray, count: np.ndarray,
                          n_resamples: int, rng: np.random.Generator,
                          max_elements: int = 4_000_000) -> tuple[np.ndarray, np.ndarray]:
    """Two (B, n_questions) arrays: the mean of ``n_q`` residuals drawn with replacement
    within each question (the residuals rescaled by sqrt(n / (n - 1)) so that their
    variance is the unbiased repeat variance), and the repeat variance (ddof 1) of the
    draws."""
    flat_count = count.ravel()
    n_q = flat_count.size
    order = np.lexsort((resid, q))  # by question, then by value: row order does not matter
    start = np.concatenate([[0], np.cumsum(flat_count)[:-1]]).astype(np.int64)
    scaled = resid[order] * np.sqrt(flat_count / np.maximum(flat_count - 1, 1))[q[order]]
    out = np.empty((n_resamples, n_q))
    out_var = np.empty((n_resamples, n_q))
    for n in np.unique(flat_count).astype(np.int64):
        members = np.flatnonzero(flat_count == n)
        rows = start[members][:, None] + np.arange(n)[None, :]        # (Q_n, n)
        values = scaled[rows]
        chunk = max(1, max_elements // max(1, values.size))
        for lo in range(0, n_resamples, chunk):
            hi = min(n_resamples, lo + chunk)
            draw = rng.integers(0, n, size=(hi - lo, len(members), n))
            picked = np.take_along_axis(np.broadcast_to(values, draw.shape), draw, axis=2)
            out[lo:hi, members] = picked.mean(axis=2)
            out_var[lo:hi, members] = picked.var(axis=2, ddof=1)
    return out, out_var


def _round_off(x: np.ndarray) -> np.ndarray:
    """``x`` with values below ``TINY`` in size, round-off, set to 0."""
    return np.where(np.abs(x) < TINY, 0.0, x)


def _inequality_pieces(name: str, mean: np.ndarray, var: np.ndarray,
                       n: np.ndarray) -> dict[str, np.ndarray]:
    a = np.asarray(_INEQUALITIES[name][0])
    b = np.asarray(_INEQUALITIES[name][1])
    v = var / n
    g = mean @ a.T + b                                    # (T, J)
    g = _round_off(g)
    terms = (a ** 2)[None, :, :] * v[:, None, :]          # (T, J, k)
    se2 = terms.sum(axis=2)
    se = np.sqrt(se2)
    with np.errstate(divide="ignore", invalid="ignore"):
        df = se2 ** 2 / np.sum(terms ** 2 / np.maximum(n - 1, 1)[:, None, :], axis=2)
        t = np.where(se > 0, g / np.where(se > 0, se, 1.0), np.where(g > 0, np.inf, -np.inf))
    binding = t >= -KAPPA * (1.0 + EXCESS_RTOL)
    # E[(g)_+^2] = se^2 / 2 at the bound; the selection drops P(t <= -KAPPA) of that mass
    keep = 1.0 - _t_sf(np.full_like(t, KAPPA), df)
    noise = np.where(binding, 0.5 * se2 / keep, 0.0)
    return {"g": g, "a": a, "se": se, "df": df, "t": t, "binding": binding,
            "noise": noise}


def _ratio(num: np.ndarray, den: np.ndarray) -> np.ndarray:
    """num / den, with +-inf (0 when num is 0) where den is 0."""
    with np.errstate(divide="ignore", invalid="ignore"):
        return np.where(den > 0, num / np.where(den > 0, den, 1.0),
                        np.where(num > 0, np.inf, np.where(num < 0, -np.inf, 0.0)))


def _storey_share(p: np.ndarray) -> float:
    above = float(np.mean(p > STOREY_LAMBDA))
    return min(1.0, max(0.0, 1.0 - above / (1.0 - STOREY_LAMBDA)))


# --------------------------------------------------------------------------- public layer
def _normal_study(excess: np.ndarray) -> tuple[float, float]:
    """The study statistic and p-value of the parametric method: the tuples' excess
    violations summed and scaled, against the standard normal."""
    scale = float(np.sqrt(np.sum(excess ** 2)))
    study = float(excess.sum() / scale) if scale > 0 else 0.0
    from scipy.stats import norm

    pvalue = float(norm.sf(study)) if scale > 0 else 1.0
    return study, pvalue


def _resampled_study(null_t: np.ndarray, observed_t: np.ndarray,
                     n_resamples: int) -> tuple[np.ndarray, float, float]:
    """The tuples' p-values, the study statistic and its p-value of the resampling method.

    Per tuple: the bootstrap-t (the studentised violation against its resampled
    studentised null, so that the noise in the repeat variances is allowed for). The
    study: Fisher's combination of the tuples' p-values, calibrated on the joint
    resamples (each resample's own per-tuple p-values from its rank among them)."""
    pvals = np.array([monte_carlo_pvalue(null_t[:, i], float(observed_t[i]))
                      for i in range(len(observed_t))])
    # each resample's p-value among the resamples, with monte_carlo_pvalue's tie rule
    # (tie_bound): exact ranks would split ties that
    # are ties in exact arithmetic by a few ulps of summation order, i.e. by row order
    null_p = np.empty_like(null_t)
    for i in range(null_t.shape[1]):
        col = null_t[:, i]
        null_p[:, i] = (n_resamples - np.searchsorted(np.sort(col), tie_bound(col),
                                                      side="left")) / n_resamples
    study = float(-np.log(pvals).sum())
    pvalue = monte_carlo_pvalue(-np.log(null_p).sum(axis=1), study)
    return pvals, study, pvalue


def _consistency_noise_iv(data: Any, checker: Any, set_: Any, role: Any, repetition: Any,
                          probability: Any, method: Any, n_resamples: Any,
                          confidence_level: Any, rng: RNGLike) -> tuple[Any, ...]:
    checker = checker_spec(checker, _OWNER).name  # also the authors' name, 'NegChecker'
    method = check_choice(method, "method", _OWNER, ("parametric", "resampling"))
    n_resamples, confidence_level = check_resampling(_OWNER, n_resamples, confidence_level)
    gen = check_rng(rng, owner=_OWNER)
    names = {"group": set_, "role": role, "repetition": repetition, "probability": probability}
    check_column_names(_OWNER, names)
    df = as_dataframe(data, owner=_OWNER)
    require_columns(df, list(names.values()), owner=_OWNER)
    nonempty(df, owner=_OWNER)
    no_missing(df, [set_, role, repetition], owner=_OWNER)
    probs = probability_column(df, probability, owner=_OWNER)
    questions = CHECKERS[checker]
    role_values = df[role].to_numpy(dtype=object)
    index = {r: j for j, r in enumerate(questions)}
    bad = np.flatnonzero([v not in index for v in role_values])
    if len(bad):
        raise ValueError(column_error(role, "hold the questions of the '" + checker
                                      + "' checker (" + ", ".join(questions) + ")",
                                      [df.index[i] for i in bad],
                                      [role_values[i] for i in bad], owner=_OWNER))
    roles = np.array([index[v] for v in role_values], dtype=np.int64)
    if isinstance(df[set_].dtype, pd.CategoricalDtype):
        # coded by value, not by the order of its categories (a presentation choice), which
        # would reorder the tuples and the resampling method's draws: same data, other p
        df = df.assign(**{set_: df[set_].astype(object)})
    sets, set_labels = label_column(df, set_, owner=_OWNER)
    # a repetition label written two ways (0 and '0', 'r1' and 'R1') is one repetition
    spelled = [label_text(v) or repr(v) for v in df[repetition].to_numpy(dtype=object)]
    dup = pd.DataFrame({"s": sets, "r": roles, "t": spelled}).duplicated().to_numpy()
    if dup.any():
        where = np.flatnonzero(dup)
        raise ValueError(column_error(repetition, f"be unique within each ({set_}, {role}) "
                                      "(one row per tuple, role and repetition; labels that "
                                      "differ only in type, case or spaces are one)",
                                      [df.index[i] for i in where], owner=_OWNER))
    k = len(questions)
    counts = np.bincount(sets * k + roles, minlength=len(set_labels) * k).reshape(-1, k)
    short = np.argwhere(counts < 2)
    if len(short):
        shown = listed(short, show=lambda sj: f"{set_labels[sj[0]]}/{questions[sj[1]]} "
                       f"({counts[sj[0], sj[1]]} forecasts)")
        raise ValueError(f"{_OWNER}: every question of every tuple needs at least two "
                         f"repeated forecasts (the repeat variance is the noise); "
                         f"{len(short)} (tuple, role) lack them (first: {shown}).")
    few = (np.argwhere(counts < MIN_RESAMPLING_REPETITIONS) if method == "resampling"
           else np.empty((0, 2), dtype=np.int64))
    if len(few):
        shown = listed(few, show=lambda sj: f"{set_labels[sj[0]]}/{questions[sj[1]]}")
        raise ValueError(
            f"{_OWNER}: method='resampling' needs at least {MIN_RESAMPLING_REPETITIONS} "
            f"repeated forecasts of every question: with two, a question's resampled "
            f"mean takes three values and its resampled spread is 0 half the time, and the "
            f"study test rejected 0.80-0.98 of coherent studies. {len(few)} (tuple, role) "
            f"have two (first: {shown}); use method='parametric'.")
    return (checker, sets, set_labels, roles, probs, method, n_resamples, confidence_level, gen)


def _warn_few_tuples(n_sets: int, method: str) -> None:
    """The small-study warnings of :func:`consistency_noise_test` (for its caller). The
    parametric study score is at most sqrt(n) (every tuple's excess of one sign), so its
    p-value has a floor that 1-4 tuples put at 0.159, 0.079, 0.042, 0.023: said, since
    a study of one or two tuples cannot reject at 0.05 however large the violation."""
    if n_sets < MIN_SHARE_TUPLES:
        from scipy.stats import norm

        floor = (f" (its p-value cannot fall below {norm.sf(np.sqrt(n_sets)):.3f} with "
                 f"{n_sets} tuple{'s' if n_sets > 1 else ''}, however large the violations: "
                 "see each tuple's pvalues)" if method == "parametric" else "")
        warnings.warn(f"{_OWNER}: {n_sets} tuples (< {MIN_SHARE_TUPLES}); the share of "
                      "tuples incoherent beyond noise (statistic) and its interval are NaN, "
                      f"and the study-level test is approximate{floor}.", SmallSampleWarning,
                      stacklevel=3)
    elif n_sets < MIN_TUPLES:
        warnings.warn(f"{_OWNER}: {n_sets} tuples (< {MIN_TUPLES}); the study-level test "
                      "is approximate.", SmallSampleWarning, stacklevel=3)


def _share_interval(pvals: np.ndarray, n_resamples: int, confidence_level: float,
                    gen: np.random.Generator) -> tuple[float, float, float]:
    """Storey's share of tuples incoherent beyond noise and its percentile bootstrap
    interval over tuples; NaN (nothing drawn) below ``MIN_SHARE_TUPLES`` tuples."""
    n_sets = len(pvals)
    if n_sets < MIN_SHARE_TUPLES:
        return np.nan, np.nan, np.nan
    draws = gen.integers(0, n_sets, size=(n_resamples, n_sets))
    boot = np.array([_storey_share(pvals[d]) for d in draws])
    low, high = percentile_interval(boot, confidence_level)
    return _storey_share(pvals), low, high


def consistency_noise_test(
    data: Any,
    checker: str,
    *,
    group: str = "set",
    role: str = "role",
    repetition: str = "repetition",
    probability: str = "probability",
    method: str = "parametric",
    n_resamples: int = 999,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
) -> ConsistencyNoiseResult:
    r"""Test whether a checker's violations exceed the forecaster's own noise.

    A forecaster whose stated probabilities are coherent beliefs plus independent
    run-to-run noise violates every checker a little on every tuple. From the repeated
    forecasts of each question this test asks, per tuple and for the study, whether the
    violation of the mean forecasts is larger than that noise produces.

    Parameters
    ----------
    data : pandas.DataFrame or convertible
        Long form: one row per tuple, role and repetition.
    checker : str
        One of :data:`CHECKERS` (``'negation'``, ``'and'``, ``'cond'``, ...) or the
        authors' class name (``'NegChecker'``), as in :func:`consistency_check`; the
        result records the name used here.
    group : str
        The tuple column (labels of any type), as in :func:`brier_decomposition`.
    role : str
        The question of the tuple each row answers: a key of ``CHECKERS[checker]``
        (``P``, ``not_P``, ...).
    repetition : str
        The repetition label, unique within each (tuple, role) (``0`` and ``'0'``, or
        labels that differ only in case or spaces, are one). Each question needs at
        least two; their number may differ between questions.
    probability : str
        The stated probability, in [0, 1].
    method : {'parametric', 'resampling'}
        ``'parametric'``: delta-method tests from the repeat variances.
        ``'resampling'``: the null distribution of the violations from resampling each
        question's repetitions around coherent forecasts; it needs at least three
        repetitions of every question.
    n_resamples : int
        Resamples of the repetitions (``'resampling'``) and bootstrap resamples of the
        tuples for the share's interval.
    confidence_level : float
        Level of the share's interval; ``1 - confidence_level`` is the level at which a
        tuple is flagged.
    rng : int, numpy.random.Generator or None
        Randomness of the resamples.

    Returns
    -------
    ConsistencyNoiseResult
        ``statistic`` the estimated share of tuples incoherent beyond noise with its
        interval, ``pvalue`` the study-level test; one row per tuple in ``table``.

    Raises
    ------
    ValueError
        For an unknown checker, a role that is not a question of the checker, a repeated
        (tuple, role, repetition), a question with fewer than two forecasts (fewer than
        three with ``method='resampling'``), or a
        probability outside [0, 1] (the rows are named).

    Warns
    -----
    SmallSampleWarning
        With fewer than 20 tuples (the study-level test is approximate).

    See Also
    --------
    consistency_check : the checkers' violations against a fixed tolerance.
    arbitrage_violation : the arbitrage violation of one tuple's forecasts.
    frequentist_violation : the authors' noise-scaled violation at a fixed sigma.
    brier_decomposition : the incoherence term of the Brier score of the same sets.

    Notes
    -----
    The model: the forecast of question *i* of a tuple at repetition *r* is
    :math:`p_{ir} = \pi_i + \varepsilon_{ir}`, the errors independent with mean zero and
    a variance of each question's own; the tuple is coherent when its expected forecasts
    :math:`\pi` satisfy the checker. Equality checkers (negation, paraphrase, and_or, but,
    cond, cond_cond, expected_evidence) require :math:`g(\pi) = 0` for a multilinear *g*
    (for negation :math:`P + P_\neg - 1`); inequality checkers (consequence, and, or)
    require linear :math:`g_j(\pi) \le 0` (for and: :math:`P + Q - 1 \le P_{\wedge} \le
    \min(P, Q)`). These are the constraints whose violation is the checker's basic
    violation.

    Per tuple, with mean forecasts :math:`\bar p_i`, repeat variances :math:`s_i^2` and
    :math:`v_i = s_i^2 / n_i`: the statistic is the squared violation of the mean
    forecasts, :math:`V = g(\bar p)^2` (inequalities: :math:`\sum_j g_j(\bar p)_+^2`). A
    coherent forecaster with this noise has :math:`E[V] > 0`; for an equality checker,
    with independent questions,

    .. math:: E[g(\bar p)^2] = g(\pi)^2 + \sum_{S \ne \emptyset} \prod_{i \in S}
              \sigma_i^2 / n_i\, (\partial_S g(\pi))^2,

    estimated without bias by ``noise_violation``
    :math:`\hat N = \sum_S (-1)^{|S|+1} \prod_{i \in S} v_i\, (\partial_S g(\bar p))^2`, so
    that ``excess`` :math:`V - \hat N` is unbiased for :math:`g(\pi)^2`, zero under the
    null, whatever the number of repetitions (an excess within 1e-9 times the larger of
    :math:`V` and :math:`\hat N` is round-off, taken as 0). For an inequality, at a
    binding constraint :math:`E[g_j(\bar p)_+^2] = \mathrm{se}_j^2 / 2`; a constraint more
    than 3 standard errors inside its bound is taken as slack (noise 0; generalised moment
    selection).

    ``'parametric'``: a tuple's p-value is the Welch-type t test of
    :math:`g(\bar p) / \mathrm{se}` (two-sided; inequality checkers one-sided per
    constraint, Bonferroni over constraints), :math:`\mathrm{se}^2 = \sum_i v_i
    (\partial_i g)^2` (the delta method), with Welch-Satterthwaite degrees of freedom.
    The study-level score is :math:`Z = \sum_t (V_t - \hat N_t) / \sqrt{\sum_t (V_t -
    \hat N_t)^2}`, one-sided normal p-value (tuples independent).

    ``'resampling'``: each question's residuals :math:`p_{ir} - \bar p_i`, scaled by
    :math:`\sqrt{n_i / (n_i - 1)}`, are drawn with replacement around coherent forecasts:
    for an equality checker :math:`V^* = (g(\bar p + \bar\varepsilon^*) - g(\bar p))^2`;
    for an inequality checker :math:`g_j^* = m_j + a_j^\top \bar\varepsilon^*` with
    :math:`m_j = 0` for a binding constraint and :math:`g_j(\bar p)` for a slack one.
    A tuple's p-value is the bootstrap-t: its studentised violation
    :math:`|g(\bar p)| / \mathrm{se}` (inequalities: the largest
    :math:`g_j / \mathrm{se}_j`) against the same studentised on each resample, with the
    resample's own repeat variances (which allows for the noise in the variances with
    three repetitions): :math:`p_t = (1 + \#\{T^*_t \ge T_t\}) / (1 + B)`. The study's
    statistic is Fisher's :math:`-\sum_t \ln p_t`, calibrated on the same resamples of
    all tuples together (each resample's per-tuple p-values from its rank among the
    resamples; Pesarin's nonparametric combination).

    The squared violation, rather than the arbitrage or the absolute violation, is used
    because its expectation under noise is linear in the noise variances, which the
    repeat variances estimate without bias even from three repetitions; a plug-in null
    for the absolute violation is biased by :math:`E[s] < \sigma`, which adds up over
    tuples. A question whose repetitions are all equal shows no noise: a violation
    there is beyond noise.

    The share of tuples incoherent beyond noise is Storey's estimate
    :math:`1 - \#\{p_t > 1/2\} / (T / 2)` (clipped to [0, 1]), conservative since
    incoherent tuples can have p-values above 1/2, with a percentile bootstrap interval
    over tuples. That interval is an interval of the share, not the inversion of the
    study test, and the two can disagree: the share is clipped at 0, so the interval's
    lower end is 0 whenever 2.5% of the resampled shares are (at the default level),
    while the study test sums every tuple's excess. On 16 studies of 100 negation tuples
    (4 repetitions, noise sd 0.05, 10% of the tuples off by 0.10) the study p-value was
    at most 0.031 in all 16 and the interval's lower end 0 in 15 (``pvalue`` 0.0014 with
    the interval (0, 0.34)); the other way, 40 tuples with 30% off by 0.05 gave the
    interval (0.05, 0.65) and ``pvalue`` 0.097. Read ``pvalue`` for whether any tuple is
    incoherent beyond noise and the interval for how many, as a lower estimate. Tuples
    are assumed independent (no question shared between tuples).

    References
    ----------
    Paleka, D., Sudhir, A. P., Alvarez, A., Bhat, V., Shen, A., Wang, Y. and Tramèr, F.
    (2025). Consistency checks for language model forecasters. ICLR.

    Andrews, D. W. K. and Soares, G. (2010). Inference for parameters defined by moment
    inequalities using generalized moment selection. Econometrica 78(1), 119-157.

    Storey, J. D. (2002). A direct approach to false discovery rates. J. R. Stat. Soc. B
    64(3), 479-498.

    Examples
    --------
    >>> import numpy as np, pandas as pd
    >>> import coherence
    >>> gen = np.random.default_rng(0)
    >>> rows = []
    >>> for s in range(40):
    ...     p = gen.uniform(0.2, 0.8)
    ...     for r in range(4):
    ...         rows += [{"set": s, "role": "P", "repetition": r,
    ...                   "probability": p + gen.normal(0, 0.05)},
    ...                  {"set": s, "role": "not_P", "repetition": r,
    ...                   "probability": 1 - p + gen.normal(0, 0.05)}]
    >>> res = coherence.consistency_noise_test(pd.DataFrame(rows), "negation", rng=0)
    >>> res.n_tuples, bool(res.pvalue > 0.05)
    (40, True)
    """
    (checker, sets, set_labels, roles, probs, method, n_resamples, confidence_level,
     gen) = _consistency_noise_iv(data, checker, group, role, repetition, probability, method,
                                  n_resamples, confidence_level, rng)
    k = len(CHECKERS[checker])
    mean, var, count, q, resid = _question_arrays(sets, roles, probs, k)
    # round-off: variances and residuals of equal forecasts are exactly 0
    var = np.where(var < TINY ** 2, 0.0, var)
    resid = _round_off(resid)
    n_sets = len(mean)
    _warn_few_tuples(n_sets, method)
    alpha = 1.0 - confidence_level
    g_eq = _equality(checker)
    null_v: np.ndarray | None = None
    null_t = np.empty(0)
    if method == "resampling":
        eps, var_star = _resampled_mean_noise(q, resid, count, n_resamples, gen)
        # a draw of one residual n times has spread 0, not numpy's ~1e-35 (which studentised
        # its violation to ~1e16 instead of inf, splitting ties in exact arithmetic)
        var_star = np.where(var_star < TINY ** 2, 0.0, var_star)
        eps = eps.reshape(n_resamples, n_sets, k)
        v_star = var_star.reshape(n_resamples, n_sets, k) / count[None]
    if g_eq is not None:
        pieces = equality_pieces(g_eq, mean, var, count)
        violation = _round_off(pieces["violation"])
        v_obs = violation ** 2
        noise = pieces["noise"]
        se, df = pieces["se"], pieces["df"]
        with np.errstate(divide="ignore", invalid="ignore"):
            t = np.where(se > 0, violation / np.where(se > 0, se, 1.0),
                         np.where(violation != 0, np.inf, 0.0))
        p_param = np.minimum(1.0, 2.0 * _t_sf(np.abs(t), df))
        p_param = np.where(np.isinf(t), 0.0, np.where(t == 0, 1.0, p_param))
        if method == "resampling":
            moved = mean[None] + eps
            g_star = _round_off(g_eq(moved) - violation[None])
            null_v = g_star ** 2
            se_star = np.sqrt(sum(v_star[..., i] * mixed_partial(g_eq, moved, (i,)) ** 2
                                  for i in range(k)))
            null_t = _ratio(np.abs(g_star), se_star)
    else:
        ineq = _inequality_pieces(checker, mean, var, count)
        g = ineq["g"]  # round-off already 0 (_inequality_pieces)
        j = g.shape[1]
        v_obs = np.sum(np.maximum(g, 0.0) ** 2, axis=1)
        noise = ineq["noise"].sum(axis=1)
        # the constraint of largest t; among equal ones (+-inf without noise) the largest
        # excess, so that the reported violation does not depend on the constraints' order
        top = ineq["t"] == ineq["t"].max(axis=1, keepdims=True)
        worst = np.where(top.any(axis=1), np.argmax(np.where(top, g, -np.inf), axis=1),
                         np.argmax(ineq["t"], axis=1))
        pick = np.arange(n_sets)
        violation = g[pick, worst]
        se, df, t = ineq["se"][pick, worst], ineq["df"][pick, worst], ineq["t"][pick, worst]
        p_one = np.where(np.isposinf(ineq["t"]), 0.0,
                         np.where(np.isneginf(ineq["t"]), 1.0, _t_sf(ineq["t"], ineq["df"])))
        p_param = np.minimum(1.0, j * p_one.min(axis=1))
        if method == "resampling":
            m = np.where(ineq["binding"], 0.0, g)
            # round-off is 0 here too: residual means that cancel across questions left
            # 1e-17, and over a spread of 0 that was +inf or 0 by the rows' order
            null_g = _round_off(m[None] + eps @ ineq["a"].T)
            null_v = np.sum(np.maximum(null_g, 0.0) ** 2, axis=2)
            se_star = np.sqrt(v_star @ (ineq["a"] ** 2).T)
            null_t = _ratio(null_g, se_star).max(axis=2)
    excess = round_off_difference(v_obs, noise)
    if null_v is None:
        pvals = p_param
        study, pvalue = _normal_study(excess)
    else:
        observed_t = np.abs(t) if g_eq is not None else t
        pvals, study, pvalue = _resampled_study(null_t, observed_t, n_resamples)
    share, low, high = _share_interval(pvals, n_resamples, confidence_level, gen)
    flagged = pvals <= alpha
    table = pd.DataFrame({
        "set": set_labels, "min_repetitions": count.min(axis=1).astype(np.int64),
        "violation": violation, "squared_violation": v_obs, "noise_violation": noise,
        "excess": excess, "se": se, "statistic": t, "df": df, "pvalue": pvals,
        "flagged": flagged}, columns=list(TUPLE_COLUMNS))
    return ConsistencyNoiseResult(
        statistic=share, pvalue=pvalue,
        confidence_interval=ConfidenceInterval(low, high, confidence_level),
        n_obs=len(probs), method=method, checker=checker, n_tuples=n_sets,
        share_flagged=float(np.mean(flagged)), mean_violation=float(v_obs.mean()),
        mean_noise_violation=float(noise.mean()), study_statistic=study,
        n_resamples=n_resamples, table=table)

