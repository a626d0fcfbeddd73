"""Conditional-forecasting coherence over pairs of resolved questions.

Method 2 of docs/design.md. A forecaster gives P(A), P(A|B=1), P(A|B=0) (and, when
elicited both ways, P(B), P(B|A=1), P(B|A=0)) for pairs of questions that have
resolved; :func:`conditional_forecasting` summarises, per category (and per
model), whether conditioning on the actual resolution of B improves the Brier
score of A and whether the stated numbers obey the probability axioms.
:func:`read_pairs` reads the result files of the field; :func:`pairs_power`
answers "how many pairs do I need".
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._intervals import FLAT_SD
from .._intervals import is_flat
from .._intervals import normal_interval
from .._intervals import ttest_pvalue
from .._resampling import MC_TIE_RTOL
from .._resampling import cluster_draw_chunks
from .._resampling import monte_carlo_pvalue
from .._resampling import rows_by_key
from .._results import ConfidenceInterval
from .._rng import RNGLike
from .._rng import check_rng
from .._validation import DECIMAL_SLACK
from .._validation import as_dataframe
from .._validation import binary_column
from .._validation import no_missing
from .._validation import numeric_column
from .._validation import param_error
from .._validation import probability_column
from .._validation import require_columns
from .._warnings import DegenerateDataWarning
from .._warnings import SmallSampleWarning
from ._axioms import UPDATE_CLASSES
from ._axioms import bayes_arrays
from ._axioms import below_tol
from ._axioms import classify_updates
from ._axioms import total_probability_feasible
from ._pairs_cells import finish_cells
from ._pairs_cells import prepare_cells
from ._pairs_result import EXTRA_TABLE_COLUMNS
from ._pairs_result import PAIRS_ALTERNATIVES
from ._pairs_result import PAIRS_CI_METHODS
from ._pairs_result import PAIRS_COLUMNS
from ._pairs_result import PAIRS_TESTS
from ._pairs_result import PairsColumnNames
from ._pairs_result import PairsResult
from ._pairs_result import PairsSettings
from ._pairs_result import category_sort_key

#: Fewest pairs behind a bootstrap-t p-value and interval: with two, every resample of the
#: centred improvements (+d, -d) is tied (no t*) or has mean 0 (t* = 0), so the p-value
#: was 1 / (1 + B') and the interval the point, whatever the data; on null studies of 2
#: pairs it rejected every testable one (0.50-0.89 of 400; 0.000-0.037 from 3 pairs).
MIN_BOOTSTRAP_T_PAIRS = 3

__all__ = [
    "PAIRS_ALTERNATIVES",
    "PAIRS_CI_METHODS",
    "PAIRS_COLUMNS",
    "PAIRS_TESTS",
    "PairsResult",
    "conditional_forecasting",
]


# --------------------------------------------------------------------------- computation
def conditional_on_b(p_a: np.ndarray, p1: np.ndarray, p0: np.ndarray,
                     b: np.ndarray) -> np.ndarray:
    """P(A|B=b), b the actual resolution of B; one within ``DECIMAL_SLACK`` of P(A) is P(A)
    itself (0.30000000000000004, the mean of 0.2 and 0.4, against a stated 0.3: no update,
    not a win of 3e-17)."""
    p_cond = np.where(b == 1, p1, p0)
    return np.where(np.abs(p_cond - p_a) <= DECIMAL_SLACK, p_a, p_cond)


def brier_improvement(p_a: np.ndarray, p1: np.ndarray, p0: np.ndarray, a: np.ndarray,
                      b: np.ndarray) -> np.ndarray:
    """(P(A) - a)^2 - (P(A|B=b) - a)^2, with b the actual resolution of B (0 exactly when
    P(A|B=b) is P(A) up to ``DECIMAL_SLACK``)."""
    p_cond = conditional_on_b(p_a, p1, p0, b)
    return (p_a - a) ** 2 - (p_cond - a) ** 2


def _one_sided_level(confidence_level: float, alternative: str) -> tuple[float, float]:
    """Lower and upper tail probabilities left out of an interval at ``confidence_level``."""
    alpha = 1.0 - confidence_level
    if alternative == "greater":
        return alpha, 0.0
    if alternative == "less":
        return 0.0, alpha
    return alpha / 2.0, alpha / 2.0


def _side_pvalue(p_greater: float, p_less: float, alternative: str) -> float:
    """The p-value of ``alternative`` from the two one-sided ones (two-sided: twice the
    smaller, at most 1)."""
    if alternative == "greater":
        return p_greater
    if alternative == "less":
        return p_less
    return min(1.0, 2.0 * min(p_greater, p_less))


def _normal_ci(x: np.ndarray, confidence_level: float,
               alternative: str) -> tuple[float, float, float]:
    """(sd, low, high) of mean +- z SE; one-sided alternatives give a half-line."""
    if alternative == "two-sided":
        return normal_interval(x, confidence_level)
    if x.size < 2:
        return (np.nan, np.nan, np.nan)
    from scipy.stats import norm

    sd = float(x.std(ddof=1))
    m = float(x.mean())
    half = float(norm.ppf(confidence_level)) * sd / math.sqrt(x.size)
    return (sd, m - half, math.inf) if alternative == "greater" else (sd, -math.inf, m + half)


def _bootstrap_ci(x: np.ndarray, confidence_level: float, n_resamples: int,
                  rng: np.random.Generator,
                  alternative: str = "two-sided") -> tuple[float, float]:
    """Percentile interval of the mean over ``n_resamples`` row resamples (a half-line for
    a one-sided ``alternative``)."""
    if x.size < 2:
        return (np.nan, np.nan)
    x = np.sort(x)  # resample in value order: results do not depend on row order
    means = np.empty(n_resamples)
    for start, stop, draws in cluster_draw_chunks(x.size, n_resamples, rng):
        means[start:stop] = x[draws].mean(axis=1)
    lo_tail, hi_tail = _one_sided_level(confidence_level, alternative)
    low = float(np.quantile(means, lo_tail)) if lo_tail > 0 else -math.inf
    high = float(np.quantile(means, 1.0 - hi_tail)) if hi_tail > 0 else math.inf
    return low, high


def _bootstrap_t(x: np.ndarray, confidence_level: float, n_resamples: int,
                 rng: np.random.Generator,
                 alternative: str = "two-sided") -> tuple[float, float, float]:
    """Studentized bootstrap: (p-value of mean 0, interval low, high).

    Resamples of the centred data give t* = mean* / (sd* / sqrt(n)); resamples
    with sd* = 0 (all values tied) have no t* and are left out, as the observed t
    is only defined for sd > 0. Two-sided (symmetric): the p-value is
    :func:`coherence._resampling.monte_carlo_pvalue` of |t| against the |t*|,
    (1 + #{|t*| >= |t|}) / (1 + B') over the B' resamples kept, and the interval is
    mean +- c SE with c the ``confidence_level`` quantile of |t*|. ``"greater"``:
    (1 + #{t* >= t}) / (1 + B') and [mean - c SE, inf) with c the ``confidence_level``
    quantile of t*; ``"less"``: (1 + #{t* <= t}) / (1 + B') and (-inf, mean - c SE] with
    c the ``1 - confidence_level`` quantile of t*. NaN with fewer than
    ``MIN_BOOTSTRAP_T_PAIRS`` values (two values have a degenerate bootstrap: every t* is 0
    or undefined).
    """
    n = x.size
    if n < MIN_BOOTSTRAP_T_PAIRS or is_flat(x):
        return (np.nan, np.nan, np.nan)
    x = np.sort(x)  # resample in value order: results do not depend on row order
    m = float(x.mean())
    se = float(x.std(ddof=1)) / math.sqrt(n)
    centred = x - m
    t_star = np.empty(n_resamples)
    for start, stop, draws in cluster_draw_chunks(n, n_resamples, rng):
        r = centred[draws]
        mean_r = r.mean(axis=1)
        sd_r = r.std(axis=1, ddof=1)
        with np.errstate(divide="ignore", invalid="ignore"):
            t = mean_r / (sd_r / math.sqrt(n))
        t[sd_r <= FLAT_SD] = np.nan  # undefined; left out, as the observed t needs sd > 0
        t_star[start:stop] = t
    t_star = t_star[~np.isnan(t_star)]
    if t_star.size == 0:
        return (np.nan, np.nan, np.nan)
    t_obs = m / se
    if alternative == "greater":
        c = float(np.quantile(t_star, confidence_level, method="higher"))
        return monte_carlo_pvalue(t_star, t_obs), m - c * se, math.inf
    if alternative == "less":
        c = float(np.quantile(t_star, 1.0 - confidence_level, method="lower"))
        return monte_carlo_pvalue(-t_star, -t_obs), -math.inf, m - c * se
    abs_t = np.abs(t_star)
    c = float(np.quantile(abs_t, confidence_level, method="higher"))
    return monte_carlo_pvalue(abs_t, abs(t_obs)), m - c * se, m + c * se


def _warn_few_for_bootstrap_t(where: str, n: int, test: str, ci_method: str) -> None:
    what = " and ".join(name for name, used in (("p-value", test == "bootstrap-t"),
                                                ("interval", ci_method == "bootstrap-t"))
                        if used)
    warnings.warn(f"conditional_forecasting: {where} has {n} pairs, fewer than the "
                  f"{MIN_BOOTSTRAP_T_PAIRS} a bootstrap-t needs (with two, every resample "
                  f"is tied or has mean 0); its bootstrap-t {what} "
                  f"{'are' if ' and ' in what else 'is'} NaN.",
                  SmallSampleWarning, stacklevel=4)


@dataclass(frozen=True, slots=True)
class _BernoulliNull:
    """The Bernoulli null of one group, drawn once and shared by its p-value and interval.

    ``d``, ``m``: P(A) - P(A|B=b) and the midpoint (P(A) + P(A|B=b)) / 2 of the pairs
    whose conditional forecast differs from P(A) (the others have improvement 0 whatever
    A does), in a canonical order (results do not depend on row order); ``n`` all pairs;
    ``seeds``: one per chunk of at most ``_CHUNK`` uniforms; chunk ``k`` holds
    ``rows[k]`` resamples. Resample b's outcome of pair i under the tilted null
    :math:`\\lambda` is :math:`1\\{U_{bi} < \\pi_i(\\lambda)\\}` with the same uniforms for
    every :math:`\\lambda` (common random numbers), so each resampled mean is
    non-decreasing in :math:`\\lambda`.
    """

    d: np.ndarray
    m: np.ndarray
    n: int
    observed: float
    seeds: tuple[int, ...]
    rows: tuple[int, ...]
    cache: tuple[np.ndarray, ...] | None

    @property
    def n_resamples(self) -> int:
        return int(sum(self.rows))

    def uniforms(self) -> Iterator[np.ndarray]:
        """The resamples' uniforms, chunk by chunk (regenerated from their seeds when too
        many to keep)."""
        if self.cache is not None:
            yield from self.cache
            return
        for seed, rows in zip(self.seeds, self.rows, strict=True):
            yield np.random.default_rng(seed).random((rows, self.d.size))

    def chance(self, lam: float) -> np.ndarray:
        r"""P(A = 1 | B = b) of each pair under the tilted null :math:`\lambda`:
        :math:`\mathrm{logit}\,\pi_i = \mathrm{logit}\,m_i - 2 \lambda d_i` (0 is the
        no-improvement null, :math:`\pi_i = m_i`)."""
        from scipy.special import expit
        from scipy.special import logit

        return expit(logit(self.m) - 2.0 * lam * self.d)

    def mean(self, lam: float) -> float:
        """Expected mean improvement under the tilted null ``lam`` (``-inf``, ``inf``: the
        smallest and largest possible, every outcome against or for the update)."""
        if math.isinf(lam):
            pi = (self.d < 0) if lam > 0 else (self.d > 0)
            return float((2.0 * self.d * (self.m - pi)).sum() / self.n)
        return float((2.0 * self.d * (self.m - self.chance(lam))).sum() / self.n)

    def crossings(self) -> tuple[np.ndarray, np.ndarray]:
        r"""Per resample, the :math:`\lambda` at which its mean first reaches the observed
        mean (within the tie tolerance) and first exceeds it (``-inf``: already at the
        smallest tilt; ``inf``: never)."""
        from scipy.special import logit

        w = 2.0 * np.abs(self.d) / self.n
        start = self.mean(-math.inf)
        tol = MC_TIE_RTOL * max(1.0, abs(self.observed))
        reach: list[np.ndarray] = []
        passes: list[np.ndarray] = []
        for u in self.uniforms():
            with np.errstate(divide="ignore"):
                lam = (logit(self.m) - logit(u)) / (2.0 * self.d)
            order = np.argsort(lam, axis=1)
            path = start + np.cumsum(w[order], axis=1)
            rows = np.arange(lam.shape[0])
            for out, hit, at_start in (
                    (reach, path >= self.observed - tol, start >= self.observed - tol),
                    (passes, path > self.observed + tol, start > self.observed + tol)):
                first = order[rows, np.argmax(hit, axis=1)]  # the pair whose jump gets there
                c = np.where(hit[:, -1], lam[rows, first], np.inf)
                out.append(np.full(lam.shape[0], -np.inf) if at_start else c)
        return np.concatenate(reach), np.concatenate(passes)

    def counts(self, lam: float) -> tuple[int, int, int]:
        """Resampled means (above, tied with, below) the observed mean under ``lam``;
        ties within :data:`coherence._resampling.MC_TIE_RTOL`, as
        :func:`coherence._resampling.monte_carlo_pvalue`."""
        pi = self.chance(lam)
        w = 2.0 * self.d / self.n
        base = float((w * self.m).sum())
        tol = MC_TIE_RTOL * max(1.0, abs(self.observed))
        above = tied = 0
        for u in self.uniforms():
            sims = base - (u < pi) @ w
            above += int(np.count_nonzero(sims > self.observed + tol))
            tied += int(np.count_nonzero(np.abs(sims - self.observed) <= tol))
        return above, tied, self.n_resamples - above - tied

    def sides(self, lam: float, mid_p: bool = True) -> tuple[float, float]:
        """One-sided p-values (greater, less) of the tilted null ``lam``. Mid-p: the ties
        (the observed one included) count half, (#above + (1 + #tied) / 2) / (1 + B);
        otherwise in full, (1 + #above + #tied) / (1 + B)."""
        return self.sides_of(self.counts(lam), mid_p)

    def sides_of(self, counts: tuple[int, int, int], mid_p: bool) -> tuple[float, float]:
        """:meth:`sides` from the ``counts`` of one tilt (both kinds of p-value from one
        pass over the resamples)."""
        above, tied, below = counts
        b1 = self.n_resamples + 1.0
        if mid_p:
            return (above + (1 + tied) / 2.0) / b1, (below + (1 + tied) / 2.0) / b1
        return (1 + above + tied) / b1, (1 + below + tied) / b1


_CHUNK = 1_000_000
_CACHE = 8_000_000


def _bernoulli_null(p_a: np.ndarray, p_cond: np.ndarray, improvement: np.ndarray,
                    n_resamples: int, rng: np.random.Generator) -> _BernoulliNull | None:
    """Draw the Bernoulli null of one group (None when no pair updates: then every
    improvement is 0 whatever A does, and there is nothing to test)."""
    d = p_a - p_cond
    m = (p_a + p_cond) / 2.0
    live = d != 0.0  # then 0 < m < 1; the other pairs' improvement is exactly 0
    if not live.any():
        return None
    order = np.lexsort((m[live], d[live]))  # a canonical order: invariant to input rows
    d, m = np.ascontiguousarray(d[live][order]), np.ascontiguousarray(m[live][order])
    per = max(1, _CHUNK // d.size)
    rows = tuple(min(per, n_resamples - s) for s in range(0, n_resamples, per))
    seeds = tuple(int(s) for s in rng.integers(0, 2**63, size=len(rows)))
    null = _BernoulliNull(d=d, m=m, n=improvement.size, observed=float(improvement.mean()),
                          seeds=seeds, rows=rows, cache=None)
    if n_resamples * d.size <= _CACHE:
        null = _BernoulliNull(d=d, m=m, n=null.n, observed=null.observed, seeds=seeds,
                              rows=rows, cache=tuple(null.uniforms()))
    return null


def bernoulli_pvalue(p_a: np.ndarray, p_cond: np.ndarray, improvement: np.ndarray,
                      n_resamples: int, rng: np.random.Generator,
                      alternative: str = "two-sided", mid_p: bool = True) -> float:
    r"""Monte Carlo p-value of the mean improvement with A's outcomes drawn under the null.

    With d = P(A) - P(A|B=b) and m = (P(A) + P(A|B=b)) / 2, a pair's improvement is
    2 d (m - a): given the stated numbers and B's outcome it is a function of A's
    outcome alone, and its expectation is zero exactly when P(A = 1 | B = b) = m. The
    null resamples draw every a* ~ Bernoulli(m) independently, B's outcomes and the
    stated numbers held fixed. ``mid_p`` (the default): greater
    (#{mean* > mean} + (1 + #{mean* = mean}) / 2) / (1 + B), less the mirror (the two
    sum to 1); otherwise ties count in full, (1 + #{mean* >= mean}) / (1 + B) (valid
    but conservative: the null distribution is discrete, with a few atoms when few
    pairs update or A is rare). Two-sided: twice the smaller, at most 1. NaN when every
    d is 0 (no pair can gain or lose, whatever A does).
    """
    null = _bernoulli_null(p_a, p_cond, improvement, n_resamples, rng)
    if null is None:
        return float("nan")
    return _side_pvalue(*null.sides(0.0, mid_p), alternative)


def _bernoulli_ci(null: _BernoulliNull | None, confidence_level: float,
                  alternative: str = "two-sided") -> tuple[float, float]:
    r"""The interval that inverts the (mid-p) Bernoulli test over tilted nulls.

    The tilted null :math:`\lambda` draws :math:`a_i^* \sim \mathrm{Bernoulli}(\pi_i)`,
    :math:`\mathrm{logit}\,\pi_i = \mathrm{logit}\,m_i - 2 \lambda d_i` (the exponential
    tilt of each pair's improvement: the law closest to the no-improvement null with a
    given mean), whose expected mean improvement :math:`\theta(\lambda)` increases from
    its smallest to its largest possible value. The interval holds the
    :math:`\theta(\lambda)` that the mid-p test does not reject: greater p-value above
    :math:`\alpha/2` (:math:`\alpha` for ``"greater"``) and less p-value above
    :math:`\alpha/2`. With the same uniforms for every :math:`\lambda`, resample b's mean
    is a non-decreasing step function of :math:`\lambda` (pair i's term jumps by
    :math:`2|d_i|/n` at :math:`\lambda_{bi} = (\mathrm{logit}\,m_i -
    \mathrm{logit}\,U_{bi}) / (2 d_i)`), so each resample reaches the observed mean at a
    point :math:`c_b` and passes it at :math:`c'_b \ge c_b`; with
    :math:`N(\lambda) = \#\{c_b \le \lambda\} + \#\{c'_b \le \lambda\}`, the mid-p values
    are :math:`(N + 1) / (2 (B + 1))` (greater) and :math:`(2B + 1 - N) / (2 (B + 1))`
    (less), and the ends of the interval are order statistics of the pooled
    :math:`c, c'` -- exact, no search. 0 lies outside the interval exactly when the
    mid-p value at :math:`\lambda = 0` is at most :math:`\alpha`. (NaN, NaN) when no pair
    updates.
    """
    if null is None:
        return (np.nan, np.nan)
    lo_tail, hi_tail = _one_sided_level(confidence_level, alternative)
    crossings = np.sort(np.concatenate(null.crossings()))
    b = null.n_resamples
    low, high = -math.inf, math.inf
    # a p-value equal to the tail level rejects (p <= alpha), whatever the rounding of
    # 1 - confidence_level: thresholds on the integer scale 2 (B + 1) p, rounded
    if lo_tail > 0:
        # accepted where N(lam) + 1 > thr: from the floor(thr)-th smallest crossing on
        k = math.floor(round(2.0 * lo_tail * (b + 1), 9))
        low = null.mean(-math.inf if k <= 0 else float(crossings[k - 1]))
    if hi_tail > 0:
        # accepted where 2B + 1 - N(lam) > thr: below the j-th smallest crossing
        j = math.ceil(round(2.0 * b + 1.0 - 2.0 * hi_tail * (b + 1), 9))
        high = null.mean(math.inf if j > 2 * b else float(crossings[j - 1]))
    return low, high


def _bernoulli_all(p_a: np.ndarray, p_cond: np.ndarray, x: np.ndarray, n_resamples: int,
                   rng: np.random.Generator, confidence_level: float,
                   alternative: str) -> tuple[float, float, float, float]:
    """(mid-p, conservative p, interval low, high) of the Bernoulli null of one group, from
    one set of draws; all NaN with fewer than 2 pairs or when no pair updates."""
    null = (_bernoulli_null(p_a, p_cond, x, n_resamples, rng) if x.size >= 2 else None)
    if null is None:
        return (np.nan, np.nan, np.nan, np.nan)
    counts = null.counts(0.0)
    p_mid = _side_pvalue(*null.sides_of(counts, True), alternative)
    p_cons = _side_pvalue(*null.sides_of(counts, False), alternative)
    return (p_mid, p_cons, *_bernoulli_ci(null, confidence_level, alternative))


def conditional_forecasting(
    pairs: Any, *, by: str = "category", p_a: str = "p_a",
    p_a_given_b1: str = "p_a_given_b1", p_a_given_b0: str = "p_a_given_b0",
    a_outcome: str = "a_outcome", b_outcome: str = "b_outcome", p_b: str = "p_b",
    p_b_given_a1: str = "p_b_given_a1", p_b_given_a0: str = "p_b_given_a0",
    model: str = "model", confidence_level: float = 0.95, test: str = "bernoulli",
    alternative: str = "two-sided", ci_method: str = "bernoulli",
    n_resamples: int = 9999, tol: float = 0.05, eps: float = 0.02, rng: RNGLike = None,
    pair: str = "pair", run: str = "run", variant: str = "variant", failed: str = "error",
    pool: bool = False,
) -> PairsResult:
    r"""Conditional-forecasting coherence of a pairs table, per category and model.

    For each question pair the forecaster gave P(A) and P(A | B) for both outcomes of B;
    once both resolve, the test asks whether conditioning on what happened to B improved
    the Brier score of A. Per run and category it reports the mean improvement with its
    p-value and interval, the win rate and the sensitivity, and the axiom checks that
    need no outcomes (update direction, total probability, Bayes).

    Parameters
    ----------
    pairs : pandas.DataFrame or convertible
        The pairs table of docs/design.md, one row per question pair (and model), e.g.
        from :func:`read_pairs`.
    by : str, default "category"
        The grouping column (labelled ``category`` in the output).
    p_a, p_a_given_b1, p_a_given_b0, a_outcome, b_outcome : str
        Column names (defaults: the names of docs/design.md); outcomes must be 0/1
        (floats 0.0 / 1.0 and bools are accepted), and may be absent (both) for a run
        without resolutions. Other columns are ignored.
    p_b, p_b_given_a1, p_b_given_a0 : str
        Columns of the reverse elicitation; used when all three are present (one or
        two of them without the others raise ``ValueError`` naming them).
        A row with any of them missing is left out of the Bayes columns only.
    model : str, default "model"
        When this column is present, rows are grouped by (model, category) (and by
        ``run`` and ``variant`` when present; see ``pool``).
    confidence_level : float in (0, 1), default 0.95
        Level of both intervals.
    test : {"bernoulli", "bernoulli-conservative", "t", "bootstrap-t"}, default "bernoulli"
        Which p-value the ``pvalue`` columns (pooled and per category) hold;
        all four are in :attr:`PairsResult.table` (``pvalue_bernoulli``,
        ``pvalue_bernoulli_conservative``, ``pvalue_t``, ``pvalue_bootstrap_t``).
        ``"t"`` is the field's convention (the study's figures: with
        ``alternative="greater"`` or ``"less"``, its one-sided p-values);
        ``"bootstrap-t"`` was the default of the first releases, ``"bernoulli-conservative"``
        (ties counted in full) the default of the first Bernoulli release.
    alternative : {"two-sided", "greater", "less"}, default "two-sided"
        As in :func:`scipy.stats.ttest_1samp`: ``"greater"`` tests whether
        conditioning on B's outcome improves the Brier score of A (mean improvement
        above 0), ``"less"`` whether it worsens it. Applies to every p-value and
        interval; a one-sided alternative gives a one-sided interval (a half-line).
    ci_method : {"bernoulli", "bootstrap-t", "normal", "bootstrap"}, default "bernoulli"
        Which interval the ``ci_low, ci_high`` columns hold; all four
        are in :attr:`PairsResult.table`. ``"bootstrap-t"`` was the default of the
        first releases.
    n_resamples : int, default 9999
        Monte Carlo resamples: null draws of A's outcomes for the Bernoulli p-values and
        interval, row resamples (with replacement within a group) for the bootstrap-t
        p-value and both bootstrap intervals.
    tol : float, default 0.05
        Tolerance of the total-probability and Bayes checks.
    eps : float in [0, 0.5), default 0.02
        Threshold of the update-direction classes (:func:`coherence.update_direction`;
        from 0.5 on no row could be monotonic, so such an ``eps`` raises).
    rng : int, numpy.random.Generator or None
        Randomness of the Bernoulli null draws and of the bootstrap.
    pair : str, default "pair"
        The pair id. When present, a pair may appear once per cell and group: a
        duplicate (the same file read twice) raises, and so does a pair listed under
        two categories of one cell or of two runs (unless ``by`` holds one value per
        run, a setting of the run), or resolved differently in two runs (its category
        and resolutions are facts of its two questions). Ids are matched exactly: ids
        that differ only in type, case or surrounding spaces (``7`` and ``'7'``), or a
        boolean and its text (``True`` and ``'True'``, also in the cell and ``by``
        columns), raise; resolutions are compared as numbers (``1`` and ``'1'`` agree).
        A missing id (NaN, None) on a row that did not fail raises, naming the rows.
    run, variant : str, default "run", "variant"
        With ``model``, the columns that define the cells (those present): one row per
        (run, model, variant, category), so runs of one model with other settings are
        never pooled. :func:`read_pairs` writes ``run`` (the model and its settings).
        Each optional column (``pair``, ``run``, ``model``, ``variant``, ``failed``, the
        outcomes, the reverse elicitation) may be absent under its default name only: a
        name given otherwise that is not a column raises (ignored, ``run='session'`` for
        a column ``'Session'`` would pool the runs).
    failed : str, default "error"
        Rows where this column is set (anything but a missing value, ``False``, the
        number 0 or a blank string, the rule of :func:`attach_outcomes`) are failed
        elicitations: left
        out with a :class:`SkippedRecordsWarning` that names them and counted in
        ``n_failed``.
    pool : bool, default False
        Merge the runs and variants of each model into one cell (cells by ``model``
        only), e.g. for one run split over several files.

    Returns
    -------
    PairsResult
        The cells without outcomes (``a_outcome``/``b_outcome`` absent, or missing on
        all of a cell's rows) get the columns that need none (``n``,
        ``mean_sensitivity``, update direction, total probability, Bayes); their
        outcome-based columns are NaN, ``resolved`` is False and ``note`` says why.
        The headline is over the scored pairs (NaN, ``n_obs = 0``, when none is); when
        a pair is scored in several runs it has no p-value or interval.

    Warns
    -----
    SmallSampleWarning
        When a group has fewer than 2 pairs (its interval and p-value are NaN), or, with
        ``test`` or ``ci_method`` ``"bootstrap-t"``, fewer than 3 (the bootstrap-t's
        p-value and interval are NaN: two pairs have a degenerate bootstrap).
    DegenerateDataWarning
        When the chosen p-value of a group is undefined (NaN): every improvement
        equal, or (Bernoulli) no pair whose conditional differs from P(A).
    SkippedRecordsWarning
        When failed records (``failed`` column set) are left out.

    See Also
    --------
    pairs_power : how many pairs a study needs to detect an improvement.
    read_pairs : read the field's result files into the pairs table.
    attach_outcomes : give a run without resolutions the resolutions of another.
    bayes_check : Bayes consistency of conditionals elicited in both directions.
    total_probability_check : feasibility of P(A), P(A|B=1), P(A|B=0) together.
    elicitation.run_pairs : elicit the pairs table from a model.

    Notes
    -----
    For a pair with resolutions a (of A) and b (of B), the Brier improvement of
    the conditional forecast over the independence baseline is

    .. math::

        \Delta = (P(A) - a)^2 - (P(A | B = b) - a)^2 ,

    positive when conditioning on what actually happened to B helped. Per group:

    * ``mean_improvement`` :math:`\bar\Delta`;
    * ``pvalue`` (per ``test`` and ``alternative``) of "conditioning on B's
      outcome does not change the expected Brier score of A". Writing
      :math:`d = P(A) - P(A|B{=}b)` and :math:`m = (P(A) + P(A|B{=}b))/2`, the
      improvement is :math:`\Delta = 2 d (m - a)`: given the stated numbers and
      B's outcome it depends on A's outcome only, and
      :math:`E[\Delta \mid b] = 2 d (m - P(A{=}1 \mid B{=}b))` is zero exactly
      when A's conditional chance is the midpoint :math:`m`. ``"bernoulli"``
      (default) holds the stated numbers and B's outcomes fixed and draws every
      :math:`a^* \sim \mathrm{Bernoulli}(m)`, ``n_resamples`` times, and takes the
      Monte Carlo mid-p value: ``"greater"``
      :math:`p = (\#\{\bar\Delta^* > \bar\Delta\} + (1 + \#\{\bar\Delta^* =
      \bar\Delta\})/2)/(1 + B)`, ``"less"`` the mirror (the two sum to 1),
      two-sided twice the smaller (at most 1). The null distribution is discrete
      (few atoms when few pairs update or A is rare), and counting the observed
      atom in full (``"bernoulli-conservative"``, :math:`(1 + \#\{\bar\Delta^* \ge
      \bar\Delta\})/(1 + B)`) gives a valid but conservative test (size 0.005-0.03 on
      such designs). The mid-p value is not guaranteed to stay below the level, but
      on the 96 nulls of docs/validation_pairs.md it rejects at most 0.062 of the
      time at 0.05, and at least 0.03 wherever the studies have at least 3 pairs
      whose conditional differs from P(A), except in 8 of those 81 cells. It needs no
      estimate of the spread of :math:`\Delta` -- which, when A is rare, a sample
      without a YES cannot give: there the t-test and the bootstrap-t reject a true
      null up to half the time. ``"bootstrap-t"`` resamples
      the centred improvements and compares
      :math:`|t^*| = |\bar\Delta^*| / (s^* / \sqrt n)` with the observed
      :math:`|t|`, :math:`p = (1 + \#\{b : |t^*_b| \ge |t|\}) / (1 + B)`
      (resamples whose values are all tied have no :math:`t^*` and are left
      out); with ``"greater"`` :math:`(1 + \#\{t^*_b \ge t\}) / (1 + B)`, with
      ``"less"`` :math:`(1 + \#\{t^*_b \le t\}) / (1 + B)`. Its two-sided p-value is
      the symmetric one, not twice the smaller one-sided one: with skewed
      :math:`t^*` it can exceed that (0.0045 against one-sided 0.0005 on 40 pairs);
      ``"t"`` is the one-sample
      Student t-test (``scipy.stats.ttest_1samp``, with ``alternative``); both
      are calibrated when A's base rate is balanced and not when it is rare
      (docs/validation_pairs.md);
    * ``ci_low, ci_high`` (per ``ci_method``): by default (``"bernoulli"``) the
      inverted Bernoulli test, for the mean expected improvement given the stated
      numbers and B's resolutions, :math:`\theta = \frac1n \sum_i 2 d_i (m_i -
      P(A_i{=}1 \mid b_i))`. The tilted nulls
      :math:`\mathrm{logit}\,\pi_i(\lambda) = \mathrm{logit}\,m_i - 2\lambda d_i`
      (the exponential tilt of each pair's improvement; :math:`\lambda = 0` is the
      test's null) span every :math:`\theta` between its smallest and largest
      possible values; the interval is the set of :math:`\theta(\lambda)` whose
      mid-p values (same draws for every :math:`\lambda`) are above
      :math:`\alpha/2` on both sides (:math:`\alpha` on the alternative's side for a
      one-sided ``alternative``, which gives a half-line). Its ends are order
      statistics of the points where each resample's mean crosses the observed
      one, so it is computed exactly, and it excludes 0 exactly when the default
      p-value is at most :math:`\alpha`. NaN when no pair updates. Or the
      symmetric bootstrap-t
      interval :math:`\bar\Delta \pm c^* s / \sqrt n` (:math:`c^*` the
      ``confidence_level`` quantile of :math:`|t^*|`; it excludes 0 exactly
      when the bootstrap-t p-value is below 1 - level, up to resampling), the
      normal approximation :math:`\bar\Delta \pm z_{1-\alpha/2} s / \sqrt n`
      (the field's convention, :math:`z = 1.96` at 95%), or the percentile
      bootstrap of the mean. A one-sided ``alternative`` gives the matching
      half-line, e.g. ``"greater"``: :math:`[\bar\Delta - z_{1-\alpha} s/\sqrt n, \infty)`
      for the normal interval, as ``scipy.stats.ttest_1samp(...).confidence_interval()``;
    * ``mean_sensitivity`` = mean :math:`|P(A|B{=}1) - P(A|B{=}0)|`;
      ``win_rate`` = share with :math:`\Delta > 0` (ties, e.g. no update, are
      not wins);
    * ``monotonic, partial, no_update, inconsistent``: shares of the classes of
      :func:`coherence.update_direction` (threshold ``eps``);
    * ``lotp_feasible``: share feasible under
      :func:`coherence.total_probability_check` (tolerance ``tol``);
    * ``bayes_consistent``, ``bayes_error_mean``: share with Bayes error below
      ``tol`` and mean error of :func:`coherence.bayes_check`, over rows with
      the reverse elicitation (NaN when there is none);
    * after the extra columns, ``n_failed, resolved, lotp_feasible_b,
      lotp_error_a_mean, lotp_error_b_mean, note``: failed records skipped, whether
      the cell was scored on outcomes, and the law of total probability on the B
      side (feasibility from P(B|A=1), P(B|A=0)) and as an error on both sides,
      :math:`|P(A) - P(A|B{=}1)P(B) - P(A|B{=}0)(1 - P(B))|` and its mirror, over
      the rows with the reverse elicitation.

    References
    ----------
    Brier, G. W. (1950). Verification of forecasts expressed in terms of
    probability. *Monthly Weather Review*, 78(1), 1-3.

    Examples
    --------
    >>> import pandas as pd
    >>> from coherence import conditional_forecasting
    >>> pairs = pd.DataFrame({
    ...     "pair": [1, 2, 3, 4], "category": ["strong"] * 4,
    ...     "p_a": [0.3, 0.2, 0.5, 0.4], "p_a_given_b1": [0.6, 0.5, 0.5, 0.2],
    ...     "p_a_given_b0": [0.1, 0.1, 0.5, 0.5],
    ...     "a_outcome": [1, 0, 0, 1], "b_outcome": [1, 0, 1, 1]})
    >>> res = conditional_forecasting(pairs, rng=0)
    >>> res.table[["category", "n", "mean_improvement", "win_rate"]]
      category  n  mean_improvement  win_rate
    0   strong  4              0.02       0.5

    One-sided: does conditioning help?

    >>> res = conditional_forecasting(pairs, alternative="greater", test="t", rng=0)
    >>> res.alternative, round(res.pvalue, 3), res.confidence_interval.high
    ('greater', 0.441, inf)
    """
    # runs, failures, no outcomes

    columns = PairsColumnNames(
        by=by, pair=pair, run=run, model=model, variant=variant, failed=failed, p_a=p_a,
        p_a_given_b1=p_a_given_b1, p_a_given_b0=p_a_given_b0, a_outcome=a_outcome,
        b_outcome=b_outcome, p_b=p_b, p_b_given_a1=p_b_given_a1, p_b_given_a0=p_b_given_a0)
    settings = PairsSettings(
        pool=pool, confidence_level=confidence_level, test=test, alternative=alternative,
        ci_method=ci_method, n_resamples=n_resamples, tol=tol, eps=eps, rng=rng)
    cells = prepare_cells(pairs, columns=columns, settings=settings)
    result = None
    if cells.resolved is not None:
        iv = _conditional_forecasting_iv(cells.resolved, columns, cells.key, settings,
                                         cells.key_values)
        result = _conditional_forecasting(iv)
    return finish_cells(result, cells)


@dataclass(frozen=True, slots=True)
class _PairsInput:
    """Validated, normalised input of :func:`conditional_forecasting` (arrays, options)."""

    p_a: np.ndarray
    p_a_given_b1: np.ndarray
    p_a_given_b0: np.ndarray
    a: np.ndarray
    b: np.ndarray
    bayes_error: np.ndarray
    group_cols: list[str]
    group_keys: list[tuple[Any, ...]]
    group_labels: list[str]      # each group's cell values and category, for messages
    group_rows: list[np.ndarray]
    by: str
    confidence_level: float
    test: str
    alternative: str
    ci_method: str
    n_resamples: int
    tol: float
    eps: float
    gen: np.random.Generator


def _conditional_forecasting_iv(pairs: Any, columns: PairsColumnNames, model: str,
                                settings: PairsSettings,
                                key_values: dict[Any, tuple[Any, ...]] | None = None,
                                ) -> _PairsInput:
    """The resolved rows as arrays and groups (``model``: the cell key column; a combined
    one's values in ``key_values``), options validated."""
    owner = "conditional_forecasting"
    by, p_a, p_a_given_b1, p_a_given_b0 = (columns.by, columns.p_a, columns.p_a_given_b1,
                                           columns.p_a_given_b0)
    a_outcome, b_outcome = columns.a_outcome, columns.b_outcome
    p_b, p_b_given_a1, p_b_given_a0 = columns.p_b, columns.p_b_given_a1, columns.p_b_given_a0
    df = as_dataframe(pairs, name="pairs", owner=owner)
    confidence_level, test, alternative, ci_method, n_resamples, tol, eps = settings.checked(
        owner)
    gen = check_rng(settings.rng, owner=owner)
    require_columns(df, {"by": by, "p_a": p_a, "p_a_given_b1": p_a_given_b1,
                         "p_a_given_b0": p_a_given_b0, "a_outcome": a_outcome,
                         "b_outcome": b_outcome}, owner=owner)
    if len(df) == 0:
        raise ValueError(param_error("pairs", owner, "a table with at least one row",
                                     "an empty table"))
    pa = probability_column(df, p_a, owner=owner)
    p1 = probability_column(df, p_a_given_b1, owner=owner)
    p0 = probability_column(df, p_a_given_b0, owner=owner)
    a = binary_column(df, a_outcome, owner=owner)
    b = binary_column(df, b_outcome, owner=owner)
    group_cols = ([model] if model in df.columns and model != by else []) + [by]
    no_missing(df, group_cols, owner=owner)
    has_reverse = all(c in df.columns for c in (p_b, p_b_given_a1, p_b_given_a0))
    if has_reverse:
        rev = [numeric_column(df, c, owner=owner, allow_nan=True)
               for c in (p_b, p_b_given_a1, p_b_given_a0)]
        for c, v in zip((p_b, p_b_given_a1, p_b_given_a0), rev, strict=True):
            bad = np.flatnonzero(~np.isnan(v) & ((v < 0) | (v > 1)))
            if len(bad):
                probability_column(df.iloc[bad], c, owner=owner)  # raises with row labels
        pb, b1, b0 = rev
        a_side, b_side = bayes_arrays(pa, pb, p1, p0, b1, b0)
        bayes_error = np.abs(a_side - b_side)[:, :3].mean(axis=1)
    else:
        bayes_error = np.full(len(df), np.nan)

    groups = rows_by_key(df, group_cols)
    keys = sorted(groups, key=lambda k: tuple(category_sort_key(v) for v in k))
    # a combined cell key is a number: messages name the cell by its columns' values
    named = [(*key_values[k[0]], *k[1:]) if key_values and len(k) > 1 else k for k in keys]
    labels = [", ".join(str(v) for v in k) for k in named]
    return _PairsInput(
        p_a=pa, p_a_given_b1=p1, p_a_given_b0=p0, a=a, b=b, bayes_error=bayes_error,
        group_cols=group_cols, group_keys=keys, group_labels=labels,
        group_rows=[groups[k] for k in keys], by=by,
        confidence_level=confidence_level, test=test, alternative=alternative,
        ci_method=ci_method,
        n_resamples=n_resamples, tol=tol, eps=eps, gen=gen)


def _conditional_forecasting(iv: _PairsInput) -> PairsResult:
    """The array layer of :func:`conditional_forecasting`: per-group rows and the pooled
    headline. Warnings point at the caller of the public function."""
    pa, p1, p0 = iv.p_a, iv.p_a_given_b1, iv.p_a_given_b0
    confidence_level, n_resamples, ci_method = iv.confidence_level, iv.n_resamples, iv.ci_method
    tol, gen, alt = iv.tol, iv.gen, iv.alternative
    improvement = brier_improvement(pa, p1, p0, iv.a, iv.b)
    p_cond = conditional_on_b(pa, p1, p0, iv.b)
    sensitivity = np.abs(p1 - p0)
    direction = classify_updates(p1 - pa, p0 - pa, iv.eps)
    _, feasible = total_probability_feasible(pa, p1, p0, tol)

    streams = gen.spawn(len(iv.group_keys))
    rows = []
    for key, label, idx, stream in zip(iv.group_keys, iv.group_labels, iv.group_rows, streams,
                                       strict=True):
        x = improvement[idx]
        sd, lo_n, hi_n = _normal_ci(x, confidence_level, alt)
        lo_b, hi_b = _bootstrap_ci(x, confidence_level, n_resamples, stream, alt)
        p_bt, lo_bt, hi_bt = _bootstrap_t(x, confidence_level, n_resamples, stream, alt)
        p_t = ttest_pvalue(x, alt)
        p_be, p_bc, lo_be, hi_be = _bernoulli_all(pa[idx], p_cond[idx], x, n_resamples,
                                                  stream, confidence_level, alt)
        chosen = {"bernoulli": p_be, "bernoulli-conservative": p_bc, "t": p_t,
                  "bootstrap-t": p_bt}[iv.test]
        if x.size < 2:
            warnings.warn(f"conditional_forecasting: group {label!r} has {x.size} pair; its "
                          "interval and p-value are NaN.", SmallSampleWarning, stacklevel=3)
        elif np.isnan(chosen) and is_flat(x):
            warnings.warn(f"conditional_forecasting: every improvement in group {label!r} "
                          f"equals {float(x[0])!r}; its p-value is NaN.",
                          DegenerateDataWarning, stacklevel=3)
        elif np.isnan(chosen) and not (iv.test == "bootstrap-t"
                                       and x.size < MIN_BOOTSTRAP_T_PAIRS):
            warnings.warn(f"conditional_forecasting: no pair in group {label!r} has a "
                          "conditional forecast different from P(A); its p-value is NaN.",
                          DegenerateDataWarning, stacklevel=3)
        if 2 <= x.size < MIN_BOOTSTRAP_T_PAIRS and "bootstrap-t" in (iv.test, ci_method):
            _warn_few_for_bootstrap_t(f"group {label!r}", x.size, iv.test, ci_method)
        ci = {"bernoulli": (lo_be, hi_be), "normal": (lo_n, hi_n), "bootstrap": (lo_b, hi_b),
              "bootstrap-t": (lo_bt, hi_bt)}[ci_method]
        be = iv.bayes_error[idx]
        be = be[~np.isnan(be)]
        row: dict[str, Any] = dict(zip(iv.group_cols, key, strict=True))
        row.update({
            "n": int(x.size), "mean_improvement": float(x.mean()),
            "ci_low": ci[0], "ci_high": ci[1],
            "pvalue": chosen,
            "mean_sensitivity": float(sensitivity[idx].mean()),
            "win_rate": float(np.mean(x > 0)),
        })
        for c in UPDATE_CLASSES:
            row[c] = float(np.mean(direction[idx] == c))
        row.update({
            "lotp_feasible": float(np.mean(feasible[idx])),
            "bayes_consistent": float(np.mean(below_tol(be, tol))) if be.size else np.nan,
            "bayes_error_mean": float(be.mean()) if be.size else np.nan,
            "sd_improvement": sd, "pvalue_bernoulli": p_be,
            "pvalue_bernoulli_conservative": p_bc, "pvalue_t": p_t, "pvalue_bootstrap_t": p_bt,
            "ci_low_bernoulli": lo_be, "ci_high_bernoulli": hi_be, "ci_low_normal": lo_n,
            "ci_high_normal": hi_n, "ci_low_bootstrap": lo_b,
            "ci_high_bootstrap": hi_b, "ci_low_bootstrap_t": lo_bt, "ci_high_bootstrap_t": hi_bt,
            "n_bayes": int(be.size),
        })
        rows.append(row)
    columns = [*iv.group_cols[:-1], "category", *list(PAIRS_COLUMNS[1:]),
               *list(EXTRA_TABLE_COLUMNS)]
    table = pd.DataFrame(rows).rename(columns={iv.by: "category"}).loc[:, columns]
    table["category"] = table["category"].astype(object)
    if "model" in table.columns:
        table["model"] = table["model"].astype(object)

    p_bt, lo_bt, hi_bt = _bootstrap_t(improvement, confidence_level, n_resamples, gen, alt)
    if (len(iv.group_keys) > 1 and 2 <= improvement.size < MIN_BOOTSTRAP_T_PAIRS
            and "bootstrap-t" in (iv.test, ci_method)):
        _warn_few_for_bootstrap_t("the pooled headline", improvement.size, iv.test, ci_method)
    p_be, p_bc, lo_be, hi_be = _bernoulli_all(pa, p_cond, improvement, n_resamples, gen,
                                              confidence_level, alt)
    if ci_method == "normal":
        lo, hi = _normal_ci(improvement, confidence_level, alt)[1:]
    elif ci_method == "bootstrap":
        lo, hi = _bootstrap_ci(improvement, confidence_level, n_resamples, gen, alt)
    elif ci_method == "bernoulli":
        lo, hi = lo_be, hi_be
    else:
        lo, hi = lo_bt, hi_bt
    pooled_p = {"bernoulli": p_be, "bernoulli-conservative": p_bc, "bootstrap-t": p_bt,
                "t": ttest_pvalue(improvement, alt) if iv.test == "t" else np.nan}[iv.test]
    test_name = {"bernoulli": "Bernoulli null of A's outcomes (mid-p)",
                 "bernoulli-conservative": "Bernoulli null of A's outcomes (ties in full)",
                 "t": "one-sample t-test", "bootstrap-t": "bootstrap-t test"}[iv.test]
    n = len(improvement)
    return PairsResult(
        statistic=float(improvement.mean()), pvalue=pooled_p,
        confidence_interval=ConfidenceInterval(lo, hi, confidence_level), n_obs=n,
        method=f"{test_name} ({alt}); {ci_method} interval", table=table,
        improvement=improvement, pvalue_method=iv.test, alternative=alt,
        ci_method=ci_method, by=iv.by,
        n_resamples=n_resamples,
        tol=tol, eps=iv.eps)
