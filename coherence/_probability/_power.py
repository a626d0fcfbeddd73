"""How many question pairs a conditional-forecasting study needs: the power of
the Brier-improvement t test and of the win-rate binomial test, analytic or
simulated from a pilot study.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._intervals import FLAT_SD, is_flat, wilson_interval
from .._results import Summary, _fmt
from .._rng import RNGLike, check_rng
from .._validation import (
    as_dataframe,
    binary_column,
    check_choice,
    check_float,
    check_int,
    param_error,
    probability_column,
    require_columns,
)
from ._pairs import brier_improvement

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
        ``"mean_improvement"`` (one-sample t-test) or ``"win_rate"`` (exact
        binomial test).
    n_required : int
        Smallest n with power >= ``target_power`` (-1 when above ``max_n``).
    achieved_power : float
        Exact power at ``n_required``.
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
        rows = [(f.name, _fmt(getattr(self, f.name))) for f in dataclasses.fields(self)
                if f.name != "method"]
        title = f"{self._name} ({self.method})"
        text = "\n".join([title, *(f"  {k:<20} {v}" for k, v in rows)])
        return Summary(text, title=title, rows=rows)


_SM_ALTERNATIVE = {"two-sided": "two-sided", "greater": "larger", "less": "smaller"}


def _t_power(n: int, d: float, alpha: float, alternative: str) -> float:
    """Exact power of the one-sample t-test at standardised effect ``d`` (noncentral t),
    by ``statsmodels.stats.power.ttest_power``; 0 below 2 observations."""
    if n < 2:
        return 0.0
    from statsmodels.stats.power import ttest_power

    return float(ttest_power(d, n, alpha, alternative=_SM_ALTERNATIVE[alternative]))


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
    """Smallest n >= 2 with power_of(n) >= target, scanning up from a low start."""
    n = max(2, start)
    while n > 2 and power_of(n) >= target:  # make sure we start below the target
        n = max(2, n // 2)
    while n <= max_n:
        if power_of(n) >= target:
            return n
        n += 1
    return -1


def _pilot_improvement(pilot: Any, category: str | None, by: str, owner: str) -> np.ndarray:
    df = as_dataframe(pilot, name="pilot", owner=owner)
    cols = {"p_a": "p_a", "p_a_given_b1": "p_a_given_b1", "p_a_given_b0": "p_a_given_b0",
            "a_outcome": "a_outcome", "b_outcome": "b_outcome"}
    if category is not None:
        cols["by"] = by
    require_columns(df, cols, owner=owner)
    if category is not None:
        df = df.loc[(df[by].astype(object) == category).to_numpy()]
        if len(df) < 2:
            raise ValueError(param_error("category", owner, f"a value of column '{by}' with at "
                                         "least 2 pilot pairs", category))
    x = brier_improvement(probability_column(df, "p_a", owner=owner),
                           probability_column(df, "p_a_given_b1", owner=owner),
                           probability_column(df, "p_a_given_b0", owner=owner),
                           binary_column(df, "a_outcome", owner=owner),
                           binary_column(df, "b_outcome", owner=owner))
    if is_flat(x):
        raise ValueError(f"{owner}: every pilot improvement equals {float(x[0])!r}; the pilot "
                         "gives no spread to plan with.")
    return x


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


def pairs_power(
    pilot: Any = None, *, metric: str = "mean_improvement", effect: float = 0.01,
    sd: float | None = None, win_rate: float = 0.6, null_win_rate: float = 0.5,
    category: str | None = "strong", by: str = "category", n: int | None = None,
    power: float = 0.8, alpha: float = 0.05, alternative: str = "two-sided",
    n_simulations: int = 2000, max_n: int = 100_000, rng: RNGLike = None,
) -> PairsPowerResult:
    r"""How many pairs are needed to detect a mean Brier improvement or a win rate.

    Parameters
    ----------
    pilot : pandas.DataFrame, optional
        A pilot pairs table (columns as in docs/design.md, e.g. from :func:`read_pairs`).
        For ``metric="mean_improvement"`` it supplies the spread of the
        improvement and the population the simulation check resamples from.
    metric : {"mean_improvement", "win_rate"}
        The quantity to detect.
    effect : float, default 0.01
        The mean improvement to detect (``mean_improvement``).
    sd : float > 0, optional
        Standard deviation of the per-pair improvement; required without a
        pilot, ignored with one (the pilot's sample SD is used).
    win_rate, null_win_rate : float in (0, 1), default 0.6 and 0.5
        The win rate to detect and the null it is tested against (``win_rate``).
    category : str or None, default "strong"
        Pilot rows whose ``by`` column equals this are used (None: all rows).
    by : str, default "category"
        The pilot's category column.
    n : int, optional
        Also report the power at this number of pairs (e.g. the 14 strong pairs
        of a finished study).
    power : float in (0, 1), default 0.8
        Target power.
    alpha : float in (0, 1), default 0.05
        Significance level.
    alternative : {"two-sided", "greater", "less"}
        Alternative of the test that will be run.
    n_simulations : int >= 0, default 2000
        Simulated studies used to check the power (0 skips the check).
    max_n : int, default 100000
        Largest n searched.
    rng : int, numpy.random.Generator or None
        Randomness of the simulation check.

    Returns
    -------
    PairsPowerResult

    Notes
    -----
    *Mean improvement.* The test is the one :func:`conditional_forecasting`
    reports: a one-sample t-test of :math:`E\Delta = 0`. Its exact power at
    sample size n under normal improvements is that of the noncentral t with
    noncentrality :math:`\sqrt n\, \delta / \sigma`; ``n_required`` is the
    smallest n reaching ``power``. The simulation check draws
    ``n_simulations`` studies of ``n_required`` pairs, from
    :math:`N(\delta, \sigma^2)` without a pilot, or by resampling the pilot's
    improvements shifted to mean :math:`\delta` (keeping their skew and their
    ties at zero), runs the t-test and reports the rejection rate: where it
    falls short of ``power`` the normal theory is optimistic for data like the
    pilot's.

    *Win rate.* The exact binomial test of H0: win rate = ``null_win_rate``
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
    iv = _pairs_power_iv(pilot, metric, effect, sd, win_rate, null_win_rate, category, by, n,
                         power, alpha, alternative, n_simulations, max_n, rng)
    return _pairs_power(iv)


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


def _pairs_power_iv(pilot: Any, metric: str, effect: float, sd: float | None, win_rate: float,
                    null_win_rate: float, category: str | None, by: str, n: int | None,
                    power: float, alpha: float, alternative: str, n_simulations: int,
                    max_n: int, rng: RNGLike) -> _PowerInput:
    owner = "pairs_power"
    metric = check_choice(metric, "metric", owner, ("mean_improvement", "win_rate"))
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
    gen = check_rng(rng, owner=owner)
    population = None
    n_pilot = 0
    nan = float("nan")
    if metric == "mean_improvement":
        effect = check_float(effect, "effect", owner)
        if pilot is not None:
            x = _pilot_improvement(pilot, category, by, owner)
            n_pilot = int(x.size)
            sd_value = float(x.std(ddof=1))
            population = x - x.mean() + effect
        elif sd is None:
            raise ValueError(param_error("sd", owner, "a float > 0 when no pilot is given",
                                         None))
        else:
            sd_value = check_float(sd, "sd", owner, low=0.0, low_open=True)
        d = effect / sd_value
        if d == 0.0:
            raise ValueError(param_error("effect", owner, "non-zero", effect))
        return _PowerInput(metric, effect, sd_value, d, population, n_pilot, nan, nan, n,
                           power, alpha, alternative, n_simulations, max_n, gen)
    wr = check_float(win_rate, "win_rate", owner, low=0.0, high=1.0, low_open=True,
                     high_open=True)
    nwr = check_float(null_win_rate, "null_win_rate", owner, low=0.0, high=1.0,
                      low_open=True, high_open=True)
    if wr == nwr:
        raise ValueError(param_error("win_rate", owner, "different from null_win_rate", wr))
    return _PowerInput(metric, nan, nan, nan, None, 0, wr, nwr, n, power, alpha, alternative,
                       n_simulations, max_n, gen)


def _pairs_power(iv: _PowerInput) -> PairsPowerResult:
    """The computation of :func:`pairs_power`: the exact power curve scanned for the
    smallest n, then the simulation check of the shipped test."""
    alpha, alternative, power = iv.alpha, iv.alternative, iv.power
    n, n_simulations, gen = iv.n, iv.n_simulations, iv.gen
    if iv.metric == "mean_improvement":
        d = iv.d

        def exact(m: int) -> float:
            return _t_power(m, d, alpha, alternative)

        from statsmodels.stats.power import TTestPower

        try:
            guess = float(TTestPower().solve_power(effect_size=abs(d), alpha=alpha, power=power,
                                                   alternative=_SM_ALTERNATIVE[
                                                       "two-sided" if alternative == "two-sided"
                                                       else "larger"]))
            start = math.floor(guess) - 2 if math.isfinite(guess) else 2
        except (ValueError, RuntimeError):  # pragma: no cover - solver failure
            start = 2

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

    n_required = _smallest_n(exact, power, start, iv.max_n)
    achieved = exact(n_required) if n_required > 0 else float("nan")
    sim = sim_lo = sim_hi = float("nan")
    if n_simulations > 0 and n_required > 0:
        sim = simulate(n_required)
        ci = wilson_interval(round(sim * n_simulations), n_simulations)
        sim_lo, sim_hi = ci.low, ci.high
    power_at_n = exact(n) if n is not None else float("nan")
    sim_at_n = simulate(n) if (n is not None and n_simulations > 0) else float("nan")
    return PairsPowerResult(
        method=("one-sample t-test, noncentral t power" if iv.metric == "mean_improvement"
                else "exact binomial test, exact power"),
        metric=iv.metric, n_required=n_required, achieved_power=achieved, simulated_power=sim,
        simulated_low=sim_lo, simulated_high=sim_hi, n_planned=-1 if n is None else n,
        power_at_n=power_at_n, simulated_power_at_n=sim_at_n, effect=iv.effect, sd=iv.sd,
        win_rate=iv.win_rate, null_win_rate=iv.null_win_rate, target_power=power, alpha=alpha,
        alternative=alternative, n_simulations=n_simulations,
        source="pilot" if iv.population is not None else "assumed", n_pilot=iv.n_pilot)
