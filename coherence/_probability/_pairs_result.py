"""The result type of :func:`coherence.conditional_forecasting`, its column and option
constants and the validation of its options: what the computation (``_pairs.py``) and
its cells layer (``_pairs_cells.py``) both need, so neither imports the other's module.
"""

from __future__ import annotations

import math
import numbers
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import numpy as np
import pandas as pd

from .._parameters import check_choice
from .._parameters import check_float
from .._parameters import check_int
from .._results import CoherenceResult
from .._results import Summary
from .._validation import param_error

__all__ = [
    "EXTRA_TABLE_COLUMNS",
    "PAIRS_ALTERNATIVES",
    "PAIRS_CI_METHODS",
    "PAIRS_COLUMNS",
    "PAIRS_TESTS",
    "REQUIRED_TABLE",
    "PairsColumnNames",
    "PairsResult",
    "PairsSettings",
    "category_sort_key",
    "check_options",
    "failed_rows",
]

#: The leading columns of :attr:`PairsResult.table` (``model`` is prepended when present).
PAIRS_COLUMNS: tuple[str, ...] = (
    "category", "n", "mean_improvement", "ci_low", "ci_high", "pvalue", "mean_sensitivity",
    "win_rate", "monotonic", "partial", "no_update", "inconsistent", "lotp_feasible",
    "bayes_consistent", "bayes_error_mean",
)

#: Extra columns of :attr:`PairsResult.table` (both intervals, spread, Bayes support).
EXTRA_TABLE_COLUMNS: tuple[str, ...] = (
    "sd_improvement", "pvalue_bernoulli", "pvalue_bernoulli_conservative", "pvalue_t",
    "pvalue_bootstrap_t", "ci_low_bernoulli", "ci_high_bernoulli", "ci_low_normal",
    "ci_high_normal", "ci_low_bootstrap", "ci_high_bootstrap", "ci_low_bootstrap_t",
    "ci_high_bootstrap_t", "n_bayes",
)

#: The p-value tests and interval methods of conditional_forecasting.
PAIRS_TESTS: tuple[str, ...] = ("bernoulli", "bernoulli-conservative", "t", "bootstrap-t")
#: The alternatives of conditional_forecasting (as in scipy.stats).
PAIRS_ALTERNATIVES: tuple[str, ...] = ("two-sided", "greater", "less")
PAIRS_CI_METHODS: tuple[str, ...] = ("bernoulli", "bootstrap-t", "normal", "bootstrap")

_CATEGORY_ORDER = ("strong", "weak", "none")

REQUIRED_TABLE = ("pair", "category", "p_a", "p_a_given_b1", "p_a_given_b0", "a_outcome",
                   "b_outcome")


# --------------------------------------------------------------------------- result
@dataclass(frozen=True, slots=True)
class PairsResult(CoherenceResult, test_name="conditional_forecasting",
                  settings=("pvalue_method", "alternative", "ci_method", "by", "n_resamples", "tol",
                            "eps", "n_failed", "pool")):
    """Result of :func:`conditional_forecasting`.

    The headline (``statistic``, ``pvalue``, ``confidence_interval``) is the
    mean Brier improvement over all pairs pooled, with the same test and
    interval as the per-category rows; :meth:`to_frame` gives it as one row.
    The per-category table is the product: :attr:`table`, whose first columns
    are :data:`PAIRS_COLUMNS` (``model`` first when the input had a model
    column), followed by extra columns (both intervals, ``sd_improvement``,
    ``n_bayes``).

    Attributes
    ----------
    table : pandas.DataFrame
        One row per (model,) category.
    improvement : numpy.ndarray
        Per-pair Brier improvement, in input row order.
    pvalue_method : str
        Which p-value (the ``test`` argument) the ``pvalue`` column holds: ``"bernoulli"`` (the
        default: A's outcomes simulated under the no-improvement null, mid-p),
        ``"bernoulli-conservative"`` (the same with ties counted in full), ``"t"`` (Student
        t) or ``"bootstrap-t"``.
    alternative : str
        ``"two-sided"``, ``"greater"`` (conditioning helps) or ``"less"`` (it hurts), for the
        p-values and the interval (one-sided alternatives give one-sided intervals).
    ci_method : str
        Which interval the ``ci_low, ci_high`` columns hold: ``"bernoulli"`` (the
        default: the inverted Bernoulli test), ``"bootstrap-t"`` (symmetric studentized
        bootstrap, the default of the first releases), ``"normal"`` (mean +- z SE, what the
        field reports) or ``"bootstrap"`` (percentile).
    by : str
        The grouping column.
    n_resamples, tol, eps : int, float, float
        Settings used.
    n_failed : int
        Failed records skipped (rows with a non-missing ``error``); the table counts
        them per cell and category in ``n_failed``.
    pool : bool
        Whether runs (and variants) of a model were pooled into one cell.
    """

    table: pd.DataFrame = field(default_factory=pd.DataFrame)
    improvement: np.ndarray = field(default_factory=lambda: np.empty(0))
    pvalue_method: str = "bernoulli"
    alternative: str = "two-sided"
    ci_method: str = "bernoulli"
    by: str = "category"
    n_resamples: int = 9999
    tol: float = 0.05
    eps: float = 0.02
    n_failed: int = 0
    pool: bool = False

    def summary_frame(self) -> pd.DataFrame:
        """Alias of :meth:`to_frame`: the one-row pooled summary."""
        return self.to_frame()

    def summary(self) -> Summary:
        """The pooled headline and the per-category table, formatted."""
        head = CoherenceResult.summary(self)
        # the cell columns lead the table, under the names given (run="session", ...)
        columns = list(self.table.columns)
        cells = columns[:columns.index("category")] if "category" in columns else []
        cols = cells + list(PAIRS_COLUMNS) + ["n_failed"]
        categories = self.table.loc[:, [c for c in cols if c in self.table.columns]]
        with pd.option_context("display.width", 200, "display.max_columns", 30,
                               "display.float_format", "{:.4g}".format):
            text = categories.to_string(index=False)
        return head.extend("\n\n" + text, tables=[("per category", categories)])


#: ``eps`` must stay below this: a monotonic row moves both conditionals more than ``eps``
#: from P(A), to opposite sides, so P(A|B=1) and P(A|B=0) differ by more than 2 ``eps``
EPS_LIMIT = 0.5


def check_eps(eps: Any, owner: str) -> float:
    """The update-direction threshold, a finite float in [0, 0.5). From 0.5 on no row can
    be monotonic (two probabilities cannot differ by more than 1), so the share monotonic,
    the statistic, would be 0 by construction, a silent answer to no question."""
    rule = (f"a finite float in [0, {EPS_LIMIT}) (a row is monotonic when P(A|B=1) and "
            "P(A|B=0) lie more than eps from P(A), on opposite sides, which no forecasts "
            f"can from eps = {EPS_LIMIT} on)")
    if isinstance(eps, bool | np.bool_) or not isinstance(eps, numbers.Real):
        raise TypeError(param_error("eps", owner, rule, eps))
    value = float(eps)
    if not (math.isfinite(value) and 0.0 <= value < EPS_LIMIT):
        raise ValueError(param_error("eps", owner, rule, eps))
    return value


def check_options(confidence_level: Any, test: Any, alternative: Any, ci_method: Any,
                  n_resamples: Any, tol: Any, eps: Any, owner: str
                  ) -> tuple[float, str, str, str, int, float, float]:
    """The settings of :func:`conditional_forecasting`, validated (shared by the cells
    layer, which checks them also when no cell has outcomes)."""
    confidence_level = check_float(confidence_level, "confidence_level", owner, low=0.0,
                                   high=1.0, low_open=True, high_open=True)
    test = check_choice(test, "test", owner, PAIRS_TESTS)
    alternative = check_choice(alternative, "alternative", owner, PAIRS_ALTERNATIVES)
    ci_method = check_choice(ci_method, "ci_method", owner, PAIRS_CI_METHODS)
    n_resamples = check_int(n_resamples, "n_resamples", owner, low=1)
    tol = check_float(tol, "tol", owner, low=0.0, high=1.0)
    eps = check_eps(eps, owner)
    return confidence_level, test, alternative, ci_method, n_resamples, tol, eps


@dataclass(frozen=True, slots=True)
class PairsColumnNames:
    """The column names given to :func:`conditional_forecasting` (internal)."""

    by: str
    pair: str
    run: str
    model: str
    variant: str
    failed: str
    p_a: str
    p_a_given_b1: str
    p_a_given_b0: str
    a_outcome: str
    b_outcome: str
    p_b: str
    p_b_given_a1: str
    p_b_given_a0: str

    @property
    def probabilities(self) -> dict[str, str]:
        """Role -> column name of the six stated probabilities."""
        return {"p_a": self.p_a, "p_a_given_b1": self.p_a_given_b1,
                "p_a_given_b0": self.p_a_given_b0, "p_b": self.p_b,
                "p_b_given_a1": self.p_b_given_a1, "p_b_given_a0": self.p_b_given_a0}


@dataclass(frozen=True, slots=True)
class PairsSettings:
    """The options given to :func:`conditional_forecasting`, as given (internal): each layer
    validates them with :func:`check_options`."""

    pool: Any
    confidence_level: Any
    test: Any
    alternative: Any
    ci_method: Any
    n_resamples: Any
    tol: Any
    eps: Any
    rng: Any

    def checked(self, owner: str) -> tuple[float, str, str, str, int, float, float]:
        """:func:`check_options` of these settings."""
        return check_options(self.confidence_level, self.test, self.alternative,
                             self.ci_method, self.n_resamples, self.tol, self.eps, owner)


def failed_rows(flags: pd.Series) -> pd.Series:
    """Rows whose ``error`` says they failed: any value but a missing one, ``False``, the
    number 0 and a blank string (a boolean flag's False, a 0/1 flag's 0, an empty CSV cell
    read as ``''``). The one rule of :func:`conditional_forecasting` and
    :func:`attach_outcomes`."""
    def failed(v: Any) -> bool:
        if v is None or (pd.api.types.is_scalar(v) and pd.isna(v)):
            return False
        if isinstance(v, bool | np.bool_ | numbers.Number):
            # a 0/1 flag's 0 says "no error", as False does (it failed every good row)
            return bool(v != 0)
        return not (isinstance(v, str) and v.strip() == "")

    return pd.Series([failed(v) for v in flags.to_numpy(dtype=object)], index=flags.index,
                     dtype=bool)


def category_sort_key(value: Any) -> tuple[int, str]:
    s = str(value)
    return (_CATEGORY_ORDER.index(s), "") if s in _CATEGORY_ORDER else (len(_CATEGORY_ORDER), s)
