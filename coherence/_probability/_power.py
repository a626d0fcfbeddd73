"""How many question pairs a conditional-forecasting study needs: the power of
the Brier-improvement tests (the t-test; the default Bernoulli mid-p test, from a
pilot) and of the win-rate binomial test, analytic or simulated from a pilot study.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass
from typing import Any
from typing import ClassVar

import numpy as np
import pandas as pd

from .._intervals import FLAT_SD
from .._intervals import is_flat
from .._intervals import wilson_interval
from .._parameters import check_choice
from .._parameters import check_float
from .._parameters import check_int
from .._results import Summary
from .._results import format_number
from .._rng import RNGLike
from .._rng import check_rng
from .._validation import UnsetName
from .._validation import as_dataframe
from .._validation import binary_column
from .._validation import check_case_distinct
from .._validation import column_error
from .._validation import listed
from .._validation import no_missing
from .._validation import one_or_pair
from .._validation import param_error
from .._validation import plain_repr
from .._validation import probability_column
from .._validation import require_columns
from .._warnings import KeywordMerge
from .._warnings import SkippedRecordsWarning
from .._warnings import deprecated_keywords
from .._warnings import second_of_pair
from ._pairs import brier_improvement
from ._pairs import conditional_on_b
from ._pairs_result import failed_rows

__all__ = [
    "PairsPowerResult",
    "pairs_power",
]



# --------------------------------------------------------------------------- power
@dataclass(frozen=True, slots=True)
class PairsPowerResult:
    """Result of :func:`pairs_power`: a planning computation, not a test.

    The headline is ``n_required``, the smallest number of pairs whose power
    reaches ``target_power``. There is no statistic, p-value or interval:
    :meth:`to_frame` gives the fields below as one row (schema
    :meth:`frame_columns`, led by ``calculation = 'pairs_power'``) and
    :meth:`summary` formats them.

    Attributes
    ----------
    method : str
        The test planned for and how its power is computed.
    metric : str
        ``"mean_improvement"`` (the one-sample t-test or, with ``test="bernoulli"``,
        the Bernoulli mid-p test) or ``"win_rate"`` (exact binomial test).
    n_required : int
        Smallest n with power >= ``target_power`` (-1 when above ``max_n``).
    achieved_power : float
        Power at ``n_required`` from the power curve (exact for the t and binomial
        tests; large-sample normal approximation for the Bernoulli test).
    simulated_power, simulated_low, simulated_high : float
        Rejection rate of the shipped test over ``n_simulations`` simulated
        studies of ``n_required`` pairs, with its 95% Wilson interval.
    n_planned, power_at_n, simulated_power_at_n : int, float, float
        When ``n`` was given (stored as ``n_planned``): the exact and simulated power at that size
        (-1 / NaN otherwise).
    effect, sd : float
        Assumed mean improvement and its standard deviation (metric
        ``mean_improvement``; NaN otherwise).
    win_rate, null_win_rate : float
        Assumed and null win rates (metric ``win_rate``; NaN otherwise).
    target_power, alpha, alternative, n_simulations : float, float, str, int
        Settings used.
    source : str
        ``"pilot"`` (spread and simulation population from a pilot table) or
        ``"assumed"`` (normal improvements with the given ``sd``).
    n_pilot : int
        Pilot pairs used (0 without a pilot).
    """

    method: str
    metric: str = "mean_improvement"
    n_required: int = -1
    achieved_power: float = np.nan
    simulated_power: float = np.nan
    simulated_low: float = np.nan
    simulated_high: float = np.nan
    n_planned: int = -1
    power_at_n: float = np.nan
    simulated_power_at_n: float = np.nan
    effect: float = np.nan
    sd: float = np.nan
    win_rate: float = np.nan
    null_win_rate: float = np.nan
    target_power: float = 0.8
    alpha: float = 0.05
    alternative: str = "two-sided"
    n_simulations: int = 0
    source: str = "assumed"
    n_pilot: int = 0

    #: Name of the calculation, first column of ``to_frame()``.
    _name: ClassVar[str] = "pairs_power"

    @classmethod
    def frame_columns(cls) -> tuple[str, ...]:
        """The fixed column schema of :meth:`to_frame`: ``calculation`` then every field."""
        return ("calculation", *(f.name for f in dataclasses.fields(cls)))

    def to_frame(self) -> pd.DataFrame:
        """One row: ``calculation`` (``'pairs_power'``) and every field, in order."""
        row = {"calculation": self._name}
        row.update({f.name: getattr(self, f.name) for f in dataclasses.fields(self)})
        return pd.DataFrame([row], columns=list(self.frame_columns()))

    def _repr_html_(self) -> str:
        """The :meth:`summary` as HTML tables (how Jupyter shows a result)."""
        return self.summary()._repr_html_()

    def summary(self) -> Summary:
        """The planned size, its power and the settings, formatted."""
        rows = [(f.name, format_number(getattr(self, f.name))) for f in dataclasses.fields(self)
                if f.name != "method"]
        title = f"{self._name} ({self.method})"
        text = "\n".join([title, *(f"  {k:<20} {v}" for k, v in rows)])
        return Summary(text, title=title, rows=rows)


#: The mean improvement ``pairs_power`` plans for when ``effect`` is left None.
_DEFAULT_EFFECT = 0.01
#: The win rate ``pairs_power`` plans for when ``win_rate`` is left None (win-rate metric).
_DEFAULT_WIN_RATE = 0.6


_STRONG = UnsetName("strong")
_CATEGORY = UnsetName("category")


def _fold_null_win_rate(old_value: Any, value: Any) -> tuple[Any, Any]:
    """The deprecated ``null_win_rate=`` folded into ``win_rate=(win rate, null)``, the win
    rate left None read as its default 0.6 (a pair: the metric check then refuses it with
    ``metric="mean_improvement"``, where it went unused)."""
    fold = second_of_pair("pairs_power", "win_rate", "null win rate")
    return fold(old_value, _DEFAULT_WIN_RATE if value is None else value)


def _t_power(n: int, d: float, alpha: float, alternative: str) -> float:
    """Exact power of the one-sample t-test at standardised effect ``d`` (noncentral t),
    as ``statsmodels.stats.power.ttest_power`` computes it (the noncentral t's tails
    beyond the critical values) but where scipy gives NaN; 0 below 2 observations."""
    if n < 2:
        return 0.0
    from scipy.stats import t

    df, nc = n - 1, math.sqrt(n) * d
    c = float(t.isf(alpha / 2 if alternative == "two-sided" else alpha, df))
    upper = 0.0 if alternative == "less" else 1.0 - _nct_cdf(c, df, nc)
    lower = 0.0 if alternative == "greater" else _nct_cdf(-c, df, nc)
    return upper + lower


def _nct_cdf(x: float, df: int, nc: float) -> float:
    """P(T <= x), T noncentral t: scipy's ``nctdtr``, which is NaN far in a tail (df 13,
    noncentrality 11.2 at x = -2.16); there 1 - P(T' <= -x), T' of noncentrality -nc,
    and where that is NaN too, the integral of Phi(x sqrt(V / df) - nc) over V ~ chi2(df)."""
    from scipy.special import nctdtr

    value = float(nctdtr(df, nc, x))
    if math.isfinite(value):
        return value
    value = 1.0 - float(nctdtr(df, -nc, -x))
    if math.isfinite(value):
        return value
    from scipy import integrate
    from scipy.stats import chi2
    from scipy.stats import norm

    return float(integrate.quad(lambda v: chi2.pdf(v, df) * norm.cdf(x * math.sqrt(v / df) - nc),
                                0.0, math.inf, epsabs=1e-13)[0])


def _binom_pvalues(n: int, p0: float, alternative: str) -> np.ndarray:
    """p-values of ``scipy.stats.binomtest`` for every k = 0..n, vectorised."""
    from scipy.stats import binom

    k = np.arange(n + 1)
    if alternative == "greater":
        return np.asarray(binom.sf(k - 1, n, p0))
    if alternative == "less":
        return np.asarray(binom.cdf(k, n, p0))
    pmf = binom.pmf(k, n, p0)
    # scipy's two-sided rule: the sum of pmf(j) over all j with pmf(j) <= pmf(k) (1 + 1e-7)
    order = np.sort(pmf)
    csum = np.cumsum(order)
    pos = np.searchsorted(order, pmf * (1 + 1e-7), side="right")
    return np.minimum(1.0, csum[pos - 1])


def _binom_power(n: int, p1: float, p0: float, alpha: float, alternative: str) -> float:
    """Exact power of the binomial test of H0: win rate = p0 when it is p1."""
    from scipy.stats import binom

    reject = _binom_pvalues(n, p0, alternative) <= alpha
    return float(binom.pmf(np.arange(n + 1), n, p1)[reject].sum())


def _smallest_n(power_of: Any, target: float, start: int, max_n: int) -> int:
    """Smallest n >= 2 with power_of(n) >= target, scanning up from a low start (at most
    ``max_n``: a start beyond it, from a near-null effect, evaluated the power there)."""
    n = min(max(2, start), max_n)
    while n > 2 and power_of(n) >= target:  # make sure we start below the target
        n = max(2, n // 2)
    while n <= max_n:
        if power_of(n) >= target:
            return n
        n += 1
    return -1


def _pilot_improvement(pilot: Any, category: str | None, by: str,
                       owner: str) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The pilot's improvements, stated P(A) and conditional forecasts on B's actual side."""
    df = as_dataframe(pilot, name="pilot", owner=owner)
    failed = failed_rows(df["error"]).to_numpy() if "error" in df.columns else None
    if failed is not None and failed.any():  # read_pairs keeps failed elicitations
        warnings.warn(f"{owner}: {int(failed.sum())} failed record(s) of the pilot skipped "
                      "(column 'error' is set), as conditional_forecasting skips them.",
                      SkippedRecordsWarning, stacklevel=5)
        df = df.loc[~failed]
    _one_cell(df, owner)
    cols = {"p_a": "p_a", "p_a_given_b1": "p_a_given_b1", "p_a_given_b0": "p_a_given_b0",
            "a_outcome": "a_outcome", "b_outcome": "b_outcome"}
    if category is not None:
        cols["by"] = by
    require_columns(df, cols, owner=owner)
    if category is not None:
        no_missing(df, by, owner=owner)  # a pair without a category is not silently left out
        # 'strong' and 'Strong ' would be two categories, one of them silently left out
        # (conditional_forecasting refuses such a column too)
        check_case_distinct(df, by, owner=owner)
        df = df.loc[(df[by].astype(object) == category).to_numpy()]
        if len(df) < 2:
            raise ValueError(param_error("category", owner, f"a value of column '{by}' with at "
                                         "least 2 pilot pairs", category))
    p_a = probability_column(df, "p_a", owner=owner)
    p1 = probability_column(df, "p_a_given_b1", owner=owner)
    p0 = probability_column(df, "p_a_given_b0", owner=owner)
    b = binary_column(df, "b_outcome", owner=owner)
    q = conditional_on_b(p_a, p1, p0, b)
    x = brier_improvement(p_a, p1, p0, binary_column(df, "a_outcome", owner=owner), b)
    # the pairs in a canonical order, by the values the plan reads: the simulation draws
    # pairs by position, which then follows neither the rows' order nor the pairs' names
    order = np.lexsort((x, q, p_a))
    x, p_a, q = x[order], p_a[order], q[order]
    if is_flat(x):
        # named: the columns the improvement is made of (the message named none)
        raise ValueError(f"{owner}: every pilot improvement equals {float(x[0])!r} (columns "
                         "'p_a', 'p_a_given_b1', 'p_a_given_b0', 'a_outcome', 'b_outcome'); "
                         "the pilot gives no spread to plan with.")
    return x, p_a, q


def _one_cell(df: pd.DataFrame, owner: str) -> None:
    """Refuse a pilot of several models, runs or variants, or with a pair listed twice:
    pooled, its pairs would count as independent draws of one forecaster
    (:func:`conditional_forecasting` keeps such cells apart)."""
    for column in ("model", "run", "variant"):
        if column in df.columns:
            values = pd.unique(df[column].astype(object))
            if len(values) > 1:
                raise ValueError(
                    f"{owner}: the pilot holds {len(values)} values of column '{column}' "
                    f"({listed(values, show=plain_repr)}); the power of one study is "
                    "planned from one forecaster's pairs, and pooling would count its "
                    f"pairs as independent. Select one, e.g. pilot[pilot['{column}'] == "
                    f"{plain_repr(values[0])}]" + (
                        "" if column == "model" else "; for one run split over several "
                        f"files, give its rows one '{column}' value") + ".")
    if "pair" in df.columns:
        check_case_distinct(df, "pair", owner=owner)  # 7 and '7' are one pair listed twice
        repeated = df["pair"].duplicated(keep=False).to_numpy()
        if repeated.any():
            raise ValueError(column_error(
                "pair", "list each pilot pair once (a pair listed twice is counted twice: "
                "select one run of it)", list(df.index[repeated]),
                df["pair"].to_numpy(dtype=object)[repeated], owner=owner))


def _bernoulli_truth(p_a: np.ndarray, q: np.ndarray, effect: float, owner: str) -> np.ndarray:
    r"""True P(A = 1 | b) per pilot pair for a mean expected improvement of ``effect``.

    With :math:`d = p - q` and :math:`m = (p + q)/2`, a pair's expected improvement given
    b is :math:`2 d (m - \alpha)`. The truth is moved from the null midpoint towards the
    conditional forecast in proportion to the update, :math:`\alpha = m - c\, d`
    (so :math:`E\Delta = 2 c\, d^2`; c = 1/2 is a coherent forecaster), clipped to
    [0, 1], with c found by bisection so that the pilot's mean is ``effect``."""
    d, m = p_a - q, (p_a + q) / 2

    def mean_gain(c: float) -> float:
        alpha = np.clip(m - c * d, 0.0, 1.0)
        return float(np.mean(2 * d * (m - alpha)))

    lo, hi = -1.0, 1.0
    while mean_gain(hi) < effect and hi < 1e6:
        hi *= 2
    while mean_gain(lo) > effect and lo > -1e6:
        lo *= 2
    if not mean_gain(lo) <= effect <= mean_gain(hi):
        raise ValueError(param_error(
            "effect", owner, "a mean improvement the pilot's updates can reach with "
            f"probabilities in [0, 1] ({mean_gain(lo):.4g} to {mean_gain(hi):.4g})", effect))
    for _ in range(200):
        mid = (lo + hi) / 2
        if mean_gain(mid) < effect:
            lo = mid
        else:
            hi = mid
    return np.asarray(np.clip(m - (lo + hi) / 2 * d, 0.0, 1.0))


def _mean_gain(pilot_pairs: tuple[np.ndarray, np.ndarray, np.ndarray]) -> float:
    """The expected Brier improvement per pair, E[2 d (m - a)] under the truth (the mean
    the Bernoulli test's statistic moves by, per pair)."""
    p_a, q, truth = pilot_pairs
    return float(np.mean(2 * (p_a - q) * ((p_a + q) / 2 - truth)))


def _bernoulli_normal_power(p_a: np.ndarray, q: np.ndarray, truth: np.ndarray, n: int,
                            alpha: float, alternative: str) -> float:
    """Large-sample power of the Bernoulli test, pairs drawn from the pilot's: the
    statistic sum 2 d (m - a) has null variance n E[4 d^2 m (1 - m)] and, under the
    truth, mean n E[g] and variance n (E[4 d^2 alpha (1 - alpha)] + Var g)."""
    from scipy.stats import norm

    d, m = p_a - q, (p_a + q) / 2
    gain = 2 * d * (m - truth)
    s0 = math.sqrt(float(np.mean(4 * d ** 2 * m * (1 - m))))
    s1 = math.sqrt(float(np.mean(4 * d ** 2 * truth * (1 - truth)) + np.var(gain)))
    shift = math.sqrt(n) * float(np.mean(gain))
    if s0 == 0.0 or s1 == 0.0:
        return float("nan")
    if alternative == "two-sided":
        z = norm.ppf(1 - alpha / 2)
        return float(norm.sf((z * s0 - shift) / s1) + norm.cdf((-z * s0 - shift) / s1))
    z = norm.ppf(1 - alpha)
    if alternative == "greater":
        return float(norm.sf((z * s0 - shift) / s1))
    return float(norm.cdf((-z * s0 - shift) / s1))


def _simulate_bernoulli_power(p_a: np.ndarray, q: np.ndarray, truth: np.ndarray, n: int,
                              n_simulations: int, alpha: float, alternative: str,
                              rng: np.random.Generator) -> float:
    """Rejection rate of the default test (mid-p, 199 resamples) over studies of n pairs
    drawn from the pilot's, A from the truth; a study without a p-value does not reject."""
    from ._pairs import bernoulli_pvalue

    rejected = 0
    for _ in range(n_simulations):
        i = rng.integers(0, p_a.size, n)
        a = (rng.random(n) < truth[i]).astype(float)
        x = brier_improvement(p_a[i], q[i], q[i], a, np.ones(n))
        p = bernoulli_pvalue(p_a[i], q[i], x, 199, rng, alternative)
        rejected += bool(p <= alpha)
    return rejected / n_simulations if n_simulations else float("nan")


def _simulate_t_power(population: np.ndarray | None, effect: float, sd: float, n: int,
                      n_simulations: int, alpha: float, alternative: str,
                      rng: np.random.Generator) -> float:
    from scipy.stats import ttest_1samp

    if population is None:
        x = rng.normal(effect, sd, size=(n_simulations, n))
    else:
        x = population[rng.integers(0, population.size, size=(n_simulations, n))]
    ok = x.std(axis=1, ddof=1) > FLAT_SD  # a flat sample has no t statistic: not rejected
    p = np.ones(n_simulations)
    if ok.any():
        p[ok] = ttest_1samp(x[ok], 0.0, axis=1, alternative=alternative).pvalue
    return float(np.mean(p <= alpha))


def _simulate_binom_power(p1: float, p0: float, n: int, n_simulations: int, alpha: float,
                          alternative: str, rng: np.random.Generator) -> float:
    wins = (rng.random((n_simulations, n)) < p1).sum(axis=1)
    return float(np.mean(_binom_pvalues(n, p0, alternative)[wins] <= alpha))


@deprecated_keywords(null_win_rate=KeywordMerge(
    "win_rate", _fold_null_win_rate, "win_rate=(win rate, null win rate)"))
def pairs_power(
    pilot: Any = None, *, metric: str = "mean_improvement", effect: float | None = None,
    sd: float | None = None, win_rate: float | tuple[float, float] | None = None,
    category: str | None = _STRONG, by: str = _CATEGORY, n: int | None = None,
    power: float = 0.8, alpha: float = 0.05, alternative: str = "two-sided",
    test: str = "t", n_simulations: int = 2000, max_n: int = 100_000, rng: RNGLike = None,
) -> PairsPowerResult:
    r"""How many pairs are needed to detect a mean Brier improvement or a win rate.

    Plan a conditional-forecasting study before running it: from the effect to detect (a
    mean Brier improvement with its spread, or a win rate), or from a pilot's
    improvements, it finds the smallest number of pairs that reaches the power asked
    for, and checks that number by simulating studies of that size.

    Parameters
    ----------
    pilot : pandas.DataFrame, optional
        A pilot pairs table (columns as in docs/design.md, e.g. from :func:`read_pairs`),
        for ``metric="mean_improvement"`` only (with ``"win_rate"`` it raises: give the
        win rates in ``win_rate``). It supplies the spread of the
        improvement and the population the simulation check resamples from. Failed
        records (``error`` set, as :func:`conditional_forecasting` reads it) are skipped
        with a :class:`SkippedRecordsWarning`. One forecaster's pairs: a pilot with
        several values of ``model``, ``run`` or ``variant``, or with a ``pair`` listed
        twice (also as ``7`` and ``'7'``), raises ``ValueError`` naming them (select
        one; pooled, the pairs would count as independent, where
        :func:`conditional_forecasting` keeps such cells apart).
    metric : {"mean_improvement", "win_rate"}
        The quantity to detect.
    effect : float, optional
        The mean improvement to detect (``metric="mean_improvement"``); None (the
        default) means 0.01. With ``metric="win_rate"`` it must be left None: given,
        it raises ``ValueError`` (it would go unused; the win rate to detect is
        ``win_rate``).
    sd : float > 0, optional
        Standard deviation of the per-pair improvement; required without a
        pilot. With a pilot (whose sample SD is used) or with ``metric="win_rate"``
        it must be left None: given, it raises ``ValueError`` (it went unused).
    win_rate : float in (0, 1) or (float, float), optional
        The win rate to detect (``metric="win_rate"``); None (the default) means 0.6.
        It is tested against a null win rate of 0.5; a pair ``(win rate, null win
        rate)`` sets another null, e.g. ``win_rate=(0.7, 0.55)``. The keyword
        ``null_win_rate=`` still works, with a :class:`DeprecationWarning`, for one
        release. With ``metric="mean_improvement"`` it must be left None: given (also
        through ``null_win_rate=``), it raises ``ValueError`` (it would go unused).
    category : str or None, default "strong"
        Pilot rows whose ``by`` column equals this are used (None: all rows); a
        ``by`` column writing one label two ways (``'strong'`` and ``'Strong'``)
        raises ``ValueError``, as in :func:`conditional_forecasting`. It selects pilot
        rows only: given without a pilot (also as ``"strong"`` or None), it raises
        ``ValueError`` (it would go unused).
    by : str, default "category"
        The pilot's category column; like ``category``, given without a pilot (or with
        ``category=None``, which reads no column) it raises ``ValueError``.
    n : int, optional
        Also report the power at this number of pairs (e.g. the 14 strong pairs
        of a finished study).
    power : float in (0, 1), default 0.8
        Target power.
    alpha : float in (0, 1), default 0.05
        Significance level.
    alternative : {"two-sided", "greater", "less"}
        Alternative of the test that will be run.
    test : {"t", "bernoulli"}, default "t"
        The test of the mean improvement that will be run (``metric="mean_improvement"``):
        ``"t"``, :func:`conditional_forecasting`'s ``test="t"``; ``"bernoulli"``, its
        default (needs a pilot: see Notes).
    n_simulations : int >= 0, default 2000
        Simulated studies used to check the power (0 skips the check).
    max_n : int, default 100000
        Largest n searched.
    rng : int, numpy.random.Generator or None
        Randomness of the simulation check; for one seed, its figures do not depend on
        the order of the pilot's rows or on the names of its pairs.

    Returns
    -------
    PairsPowerResult
        The required number of pairs (``n_required``, -1 above ``max_n``), the power it
        achieves (``achieved_power``) and the simulation check of it
        (``simulated_power``); with ``n``, the power at that size (``power_at_n``).

    See Also
    --------
    conditional_forecasting : the test whose power this is.
    plan : power of the other tests at planned designs, by simulation.

    Notes
    -----
    *Mean improvement, ``test="t"``.* The one-sample t-test of
    :math:`E\Delta = 0`, what :func:`conditional_forecasting` reports with
    ``test="t"``; not its default. Its exact power at
    sample size n under normal improvements is that of the noncentral t with
    noncentrality :math:`\sqrt n\, \delta / \sigma`; ``n_required`` is the
    smallest n reaching ``power``. The simulation check draws
    ``n_simulations`` studies of ``n_required`` pairs, from
    :math:`N(\delta, \sigma^2)` without a pilot, or by resampling the pilot's
    improvements shifted to mean :math:`\delta` (keeping their skew and their
    ties; a pilot's zero improvements move with the rest, to
    :math:`\delta - \bar\Delta`), runs the t-test and reports the rejection rate: where it
    falls short of ``power`` the normal theory is optimistic for data like the
    pilot's. Read it as optimistic for the default test too: on the
    validation matrix's balanced-A alternatives, where the t-test is valid, the
    default rejects less often (strong relatedness, coherent forecaster: 0.18
    against 0.28 at n = 14, 0.86 against 0.91 at n = 100;
    docs/validation_pairs.md), and with rare A the t-test's size is far above
    alpha, so its power says nothing about the default's.

    *Mean improvement, ``test="bernoulli"``.* The default of
    :func:`conditional_forecasting`: the mid-p test that holds B's outcomes and
    the stated numbers fixed and draws A's outcomes under the null. Its power
    depends on the stated probabilities, not only on the improvements' mean and
    spread, so it needs a pilot. Studies are drawn by resampling the pilot's
    pairs (P(A) and the conditional forecast on B's actual side), with A's true
    chance in each moved from the null midpoint :math:`m = (p + q)/2` towards
    the forecast in proportion to the update, :math:`\alpha = m - c\,(p - q)`
    clipped to [0, 1], c chosen so that the mean expected improvement over the
    pilot's pairs is ``effect`` (c = 1/2: the forecasts are the truth). The
    power curve that ``n_required`` is read from is the test's large-sample
    normal approximation (null variance :math:`E[4 d^2 m (1 - m)]`, variance
    under the truth :math:`E[4 d^2 \alpha (1 - \alpha)] + Var(E\Delta_i)`);
    the simulation check runs the test itself (mid-p, 199 resamples) on
    ``n_simulations`` studies, a study without an updating pair counting as not
    rejected. Where A is rare and n small the approximation is optimistic: trust
    the simulated figures.

    *Win rate.* The exact binomial test of H0: win rate = the null win rate
    (``scipy.stats.binomtest`` rules); power is summed exactly over the
    binomial distribution under ``win_rate``. Pairs whose improvement is
    exactly 0 (no update) are not wins, so 0.5 is the sign-test null only when
    there are no such ties. Because the binomial test is discrete, power is
    not monotone in n: ``n_required`` is the smallest n that reaches the
    target; a few larger n may fall just short.

    References
    ----------
    Cohen, J. (1988). *Statistical Power Analysis for the Behavioral Sciences*
    (2nd ed.). Lawrence Erlbaum.

    Examples
    --------
    >>> from coherence import pairs_power
    >>> res = pairs_power(effect=0.01, sd=0.11, n=14, rng=0, n_simulations=500)
    >>> res.n_required
    952
    >>> round(res.power_at_n, 3)
    0.061
    """
    settings = _PowerSettings(
        metric=metric, effect=effect, sd=sd, win_rate=win_rate, category=category, by=by,
        n=n, power=power, alpha=alpha, alternative=alternative, test=test,
        n_simulations=n_simulations, max_n=max_n, rng=rng)
    return _pairs_power(_pairs_power_iv(pilot, settings))


@dataclass(frozen=True, slots=True)
class _PowerSettings:
    """The options given to :func:`pairs_power`, as given (checked by
    :func:`_pairs_power_iv`)."""

    metric: str
    effect: float | None
    sd: float | None
    win_rate: float | tuple[float, float] | None
    category: str | None
    by: str
    n: int | None
    power: float
    alpha: float
    alternative: str
    test: str
    n_simulations: int
    max_n: int
    rng: RNGLike


@dataclass(frozen=True, slots=True)
class _PowerInput:
    """Validated, normalised input of :func:`pairs_power`.

    ``population`` is the pilot's centred improvements shifted to ``effect``
    (None without a pilot); ``d`` the standardised effect; unused settings of the
    other metric are NaN.
    """

    metric: str
    effect: float
    sd: float
    d: float
    population: np.ndarray | None
    n_pilot: int
    win_rate: float
    null_win_rate: float
    n: int | None
    power: float
    alpha: float
    alternative: str
    n_simulations: int
    max_n: int
    gen: np.random.Generator
    test: str = "t"
    pilot_pairs: tuple[np.ndarray, np.ndarray, np.ndarray] | None = None  # p_a, q, truth


def _pairs_power_iv(pilot: Any, settings: _PowerSettings) -> _PowerInput:
    owner = "pairs_power"
    metric, effect, sd, test, n = (settings.metric, settings.effect, settings.sd,
                                   settings.test, settings.n)
    alternative, power, alpha = settings.alternative, settings.power, settings.alpha
    n_simulations, max_n = settings.n_simulations, settings.max_n
    metric = check_choice(metric, "metric", owner, ("mean_improvement", "win_rate"))
    test = check_choice(test, "test", owner, ("t", "bernoulli"))
    alternative = check_choice(alternative, "alternative", owner,
                               ("two-sided", "greater", "less"))
    power = check_float(power, "power", owner, low=0.0, high=1.0, low_open=True,
                        high_open=True)
    alpha = check_float(alpha, "alpha", owner, low=0.0, high=1.0, low_open=True,
                        high_open=True)
    n_simulations = check_int(n_simulations, "n_simulations", owner, low=0)
    max_n = check_int(max_n, "max_n", owner, low=2)
    if n is not None:
        n = check_int(n, "n", owner, low=2)
    gen = check_rng(settings.rng, owner=owner)
    population = None
    n_pilot = 0
    nan = float("nan")
    if pilot is None:
        _refuse_pilot_options(settings, owner)
    elif settings.category is None and settings.by != _CATEGORY:  # every row: no column read
        raise ValueError(param_error("by", owner, "left unset with category=None (every pilot "
                                     "row is used, so no category column is read)",
                                     settings.by))
    if metric == "mean_improvement":
        if settings.win_rate is not None:  # it would go unused: the effect is effect=
            raise ValueError(param_error(
                "win_rate", owner, 'None with metric="mean_improvement" (the win rates, also '
                "a null one given by the deprecated null_win_rate=, belong to "
                'metric="win_rate"; the mean improvement to detect is effect=)',
                settings.win_rate))
        effect = check_float(_DEFAULT_EFFECT if effect is None else effect, "effect", owner)
        pilot_pairs = None
        if pilot is not None:
            if sd is not None:  # it went unused: the pilot's sample SD was planned for
                raise ValueError(param_error(
                    "sd", owner, "None with a pilot (the spread is the pilot's sample SD of "
                    "the improvements; give the pilot or sd, not both)", sd))
            x, p_a, q = _pilot_improvement(pilot, _plain(settings.category),
                                           _plain(settings.by), owner)
            n_pilot = int(x.size)
            sd_value = float(x.std(ddof=1))
            population = x - x.mean() + effect
            if test == "bernoulli":  # a pilot with spread has an updating pair
                pilot_pairs = (p_a, q, _bernoulli_truth(p_a, q, effect, owner))
        elif test == "bernoulli":
            raise ValueError(param_error(
                "pilot", owner, 'a pilot table with test="bernoulli" (its power depends on '
                'the stated probabilities), or test="t"', None))
        elif sd is None:
            raise ValueError(param_error("sd", owner, "a float > 0 when no pilot is given",
                                         None))
        else:
            sd_value = check_float(sd, "sd", owner, low=0.0, low_open=True)
        d = effect / sd_value
        if d == 0.0:
            raise ValueError(param_error("effect", owner, "non-zero", effect))
        return _PowerInput(metric, effect, sd_value, d, population, n_pilot, nan, nan, n,
                           power, alpha, alternative, n_simulations, max_n, gen, test,
                           pilot_pairs)
    if test != "t":
        raise ValueError(param_error("test", owner, '"t" (test applies to metric '
                                     '"mean_improvement")', test))
    if effect is not None:  # it would go unused: the win rate to detect is win_rate=
        raise ValueError(param_error("effect", owner, 'None with metric="win_rate" (the '
                                     "power of the binomial test depends on win_rate= "
                                     "only; give the win rate to detect there)", effect))
    if sd is not None:  # it would go unused: the binomial test's power needs no spread
        raise ValueError(param_error("sd", owner, 'None with metric="win_rate" (the power '
                                     "of the binomial test depends on win_rate= only)", sd))
    if pilot is not None:  # it would go unused: the win rates are the ones given
        raise ValueError(param_error(
            "pilot", owner, 'None with metric="win_rate" (the power of the binomial test '
            "depends on the win rates given in win_rate= only; give the pilot's win rate "
            "there)", "a table"))
    wr, nwr = _win_rates(_DEFAULT_WIN_RATE if settings.win_rate is None else settings.win_rate,
                         owner)
    if wr == nwr:
        raise ValueError(param_error("win_rate", owner, "different from the null win rate "
                                     f"({nwr})", wr))
    return _PowerInput(metric, nan, nan, nan, None, 0, wr, nwr, n, power, alpha, alternative,
                       n_simulations, max_n, gen)


def _plain(value: Any) -> Any:
    """A default :class:`UnsetName` as the plain str it reads as; any other value as is."""
    return str(value) if isinstance(value, UnsetName) else value


def _refuse_pilot_options(settings: _PowerSettings, owner: str) -> None:
    """Without a pilot, ``category`` and ``by`` (which select pilot rows) would go unused:
    given, they raise; left unset (the :class:`UnsetName` defaults) they do not."""
    for name, value, default, role in (
            ("category", settings.category, _STRONG, "selects the pilot's rows"),
            ("by", settings.by, _CATEGORY, "names the pilot's category column")):
        if value is not default:
            raise ValueError(param_error(
                name, owner, f"left unset without a pilot (it {role}; with no pilot it "
                "would go unused: give the pilot, or leave it out)", value))


def _win_rates(win_rate: Any, owner: str) -> tuple[float, float]:
    """The (win rate, null win rate) of ``win_rate``: a float (null 0.5) or a pair."""
    wr, nwr = one_or_pair(win_rate, "win_rate", owner, "a float in (0, 1) or a pair "
                          "(win rate, null win rate)", 0.5)
    return (check_float(wr, "win_rate", owner, low=0.0, high=1.0, low_open=True,
                        high_open=True),
            check_float(nwr, "win_rate", owner, low=0.0, high=1.0, low_open=True,
                        high_open=True))


def _power_curves(iv: _PowerInput) -> tuple[Any, int, Any]:
    """The power curve ``exact(n)``, the start of the scan for the smallest n, and the
    simulation check ``simulate(n)`` (drawing from ``iv.gen``) of :func:`pairs_power`."""
    alpha, alternative, power = iv.alpha, iv.alternative, iv.power
    n_simulations, gen = iv.n_simulations, iv.gen
    if iv.metric == "mean_improvement" and iv.pilot_pairs is not None:
        p_a, q, truth = iv.pilot_pairs

        def exact(m: int) -> float:
            return _bernoulli_normal_power(p_a, q, truth, m, alpha, alternative)

        dd, mm = p_a - q, (p_a + q) / 2
        gain = 2 * dd * (mm - truth)
        from scipy.stats import norm

        z = norm.ppf(1 - alpha / (2 if alternative == "two-sided" else 1)) + norm.ppf(power)
        s1 = math.sqrt(float(np.mean(4 * dd ** 2 * truth * (1 - truth)) + np.var(gain)))
        mean_gain = abs(float(np.mean(gain)))
        start = int(0.5 * (z * s1 / mean_gain) ** 2) if mean_gain > 0 else 2

        def simulate(m: int) -> float:
            return _simulate_bernoulli_power(p_a, q, truth, m, n_simulations, alpha,
                                             alternative, gen)
    elif iv.metric == "mean_improvement":
        d = iv.d

        def exact(m: int) -> float:
            return _t_power(m, d, alpha, alternative)

        from scipy.stats import norm

        # the scan's start, from the normal approximation (a little below the t-test's n;
        # the t power is monotone in n, so the start changes the time, not the answer)
        z = norm.ppf(1 - alpha / (2 if alternative == "two-sided" else 1)) + norm.ppf(power)
        start = max(2, int((z / abs(d)) ** 2) - 2)

        def simulate(m: int) -> float:
            return _simulate_t_power(iv.population, iv.effect, iv.sd, m, n_simulations, alpha,
                                     alternative, gen)
    else:
        wr, nwr = iv.win_rate, iv.null_win_rate

        def exact(m: int) -> float:
            return _binom_power(m, wr, nwr, alpha, alternative)

        h = abs(2 * math.asin(math.sqrt(wr)) - 2 * math.asin(math.sqrt(nwr)))
        from scipy.stats import norm

        z = norm.ppf(1 - alpha / (2 if alternative == "two-sided" else 1)) + norm.ppf(power)
        start = int(0.8 * (z / h) ** 2)

        def simulate(m: int) -> float:
            return _simulate_binom_power(wr, nwr, m, n_simulations, alpha, alternative, gen)

    return exact, start, simulate


def simulated_power_at(pilot: Any, *, n: int, **settings: Any) -> float:
    """The simulated power of :func:`pairs_power` at ``n`` pairs alone (its
    ``simulated_power_at_n``), drawn first from the stream: without the search for
    ``n_required`` and its simulation check, which would draw from the stream before it
    and make the figure depend on ``max_n``. ``settings``: the other keywords of
    :func:`pairs_power` but ``max_n``."""
    iv = _pairs_power_iv(pilot, _PowerSettings(n=n, max_n=max(n, 2), **settings))
    _, _, simulate = _power_curves(iv)
    return float(simulate(n)) if iv.n_simulations > 0 else float("nan")


def _pairs_power(iv: _PowerInput) -> PairsPowerResult:
    """The computation of :func:`pairs_power`: the exact power curve scanned for the
    smallest n, then the simulation check of the shipped test."""
    alpha, alternative, power = iv.alpha, iv.alternative, iv.power
    n, n_simulations = iv.n, iv.n_simulations
    exact, start, simulate = _power_curves(iv)
    # a one-sided t or exact binomial test of an effect pointing the other way never has
    # power above alpha (monotone likelihood ratio): no n reaches the target, no scan
    toward = (iv.d if iv.metric == "mean_improvement" else iv.win_rate - iv.null_win_rate)
    wrong_way = (iv.pilot_pairs is None or iv.metric != "mean_improvement") and (
        (alternative == "greater" and toward <= 0) or (alternative == "less" and toward >= 0))
    if iv.pilot_pairs is not None and iv.metric == "mean_improvement" and (
            (alternative == "greater" and _mean_gain(iv.pilot_pairs) <= 0)
            or (alternative == "less" and _mean_gain(iv.pilot_pairs) >= 0)):
        # the Bernoulli test's normal power then falls as n grows: below the target at
        # 2 pairs, it is below it everywhere (the scan to max_n took seconds to say so)
        wrong_way = exact(2) < power
    n_required = (-1 if wrong_way and (power > alpha or iv.pilot_pairs is not None)
                  else _smallest_n(exact, power, start, iv.max_n))
    achieved = exact(n_required) if n_required > 0 else float("nan")
    sim = sim_lo = sim_hi = float("nan")
    if n_simulations > 0 and n_required > 0:
        sim = simulate(n_required)
        ci = wilson_interval(round(sim * n_simulations), n_simulations)
        sim_lo, sim_hi = ci.low, ci.high
    power_at_n = exact(n) if n is not None else float("nan")
    sim_at_n = simulate(n) if (n is not None and n_simulations > 0) else float("nan")
    return PairsPowerResult(
        method=("Bernoulli mid-p test, normal-approximation power" if iv.pilot_pairs is not None
                else "one-sample t-test, noncentral t power" if iv.metric == "mean_improvement"
                else "exact binomial test, exact power"),
        metric=iv.metric, n_required=n_required, achieved_power=achieved, simulated_power=sim,
        simulated_low=sim_lo, simulated_high=sim_hi, n_planned=-1 if n is None else n,
        power_at_n=power_at_n, simulated_power_at_n=sim_at_n, effect=iv.effect, sd=iv.sd,
        win_rate=iv.win_rate, null_win_rate=iv.null_win_rate, target_power=power, alpha=alpha,
        alternative=alternative, n_simulations=n_simulations,
        source="pilot" if iv.population is not None else "assumed", n_pilot=iv.n_pilot)
