"""The leaderboard scores of ForecastBench (Karger et al. 2025).

:func:`forecastbench_scores` takes one row per (forecaster, question) with a
probability and a binary outcome and returns, per forecaster, the Brier score,
the difficulty-adjusted Brier score (question fixed effects of a two-way
fixed-effects model, so that forecasters who answered different questions are
comparable), the Brier Index (0-100), the peer score and the Brier skill score
against a naive forecaster, each with a percentile bootstrap interval over
questions; :meth:`ForecastBenchResult.compare` is the paired comparison of two
forecasters on the same bootstrap replicates.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import field
from typing import Any

import numpy as np
import pandas as pd

from .._parameters import check_choice
from .._parameters import check_resampling
from .._resampling import monte_carlo_pvalue
from .._resampling import percentile_interval
from .._results import CoherenceResult
from .._results import ConfidenceInterval
from .._rng import RNGLike
from .._rng import check_rng
from .._validation import as_dataframe
from .._validation import binary_column
from .._validation import column_error
from .._validation import no_missing
from .._validation import param_error
from .._validation import probability_array
from .._validation import require_columns
from .._validation import same_within
from .._warnings import DeprecatedAlias
from ._comparison import label_choices
from ._forecastbench_inputs import BrierPanel
from ._forecastbench_inputs import brier_panel
from ._forecastbench_inputs import check_estimable
from ._forecastbench_inputs import check_market_options
from ._forecastbench_inputs import count_groups
from ._forecastbench_inputs import imputation_filter
from ._forecastbench_inputs import imputed_probabilities
from ._forecastbench_inputs import model_list
from ._forecastbench_inputs import question_type_column
from ._forecastbench_warnings import few_compared
from ._forecastbench_warnings import warn_perfect_naive
from ._forecastbench_warnings import warn_small
from ._forecastbench_warnings import warn_undefined
from ._ids import check_ids

__all__ = ["FORECASTBENCH_SCORES", "ForecastBenchComparisonResult", "ForecastBenchResult",
           "forecastbench_scores"]

#: The per-forecaster scores, in the order of the result's table; True where higher is better.
FORECASTBENCH_SCORES: dict[str, bool] = {
    "brier": False,
    "difficulty_adjusted_brier": False,
    "brier_index": True,
    "peer_score": True,
    "bss": True,
    "bss_relative": True,
}

#: Questions each forecaster needs for a comparison's p-value (NaN below, warned).
MIN_COMPARE_QUESTIONS = 30


# --------------------------------------------------------------------------- array layer
def _question_effects(brier: np.ndarray, fe: np.ndarray, wq: np.ndarray) -> np.ndarray:
    """Question fixed effects c of brier[q, m] = a_m + c_q + e (least squares over the
    cells present in the forecasters ``fe``, question q weighted by ``wq[q]``).

    The question effects are profiled out (c_q = mean over q's forecasters of
    brier - a_m); the forecaster effects solve the normal equations
    L a = r with L = sum_q w_q (diag(Z_q) - Z_q Z_q^T / n_q), by least squares
    (L is singular: effects are identified up to one constant, which cancels in
    every score). NaN for a question no ``fe`` forecaster answered.
    """
    b = brier[:, fe]
    z = ~np.isnan(b)
    bz = np.where(z, b, 0.0)
    n_q = z.sum(axis=1).astype(np.float64)
    has = n_q > 0
    inv_n = np.where(has, 1.0 / np.where(has, n_q, 1.0), 0.0)
    zf = z.astype(np.float64)
    lap = np.diag(zf.T @ wq) - (zf * (wq * inv_n)[:, None]).T @ zf
    mean_q = bz.sum(axis=1) * inv_n
    rhs = ((bz - mean_q[:, None] * zf) * wq[:, None]).sum(axis=0)
    a = np.linalg.lstsq(lap, rhs, rcond=None)[0]
    c = (bz - zf * a[None, :]).sum(axis=1) * inv_n
    return np.where(has, c, np.nan)


def _scores(brier: np.ndarray, fe: np.ndarray, naive: int | None,
            wq: np.ndarray, fixed: np.ndarray | None = None) -> np.ndarray:
    """(n_models, 6) scores for question weights ``wq`` (a bootstrap draw, or ones).

    ``fixed``: question effects given instead of estimated (the market Brier)."""
    present = ~np.isnan(brier)
    bz = np.where(present, brier, 0.0)
    w = present * wq[:, None]                         # (Q, M)
    n_w = w.sum(axis=0)
    keep = wq > 0
    c = np.full(len(wq), np.nan)
    c[keep] = _question_effects(brier[keep], fe, wq[keep]) if fixed is None else fixed[keep]
    cz = np.where(np.isnan(c), 0.0, c)
    # a draw whose questions split the fixed-effects forecasters into groups with no
    # forecaster in common identifies each group's effects up to its own constant: the
    # adjusted scores are undefined there (the data themselves are checked connected, so
    # a draw of every question needs no second look)
    split = (fixed is None and not keep.all()
             and count_groups(~np.isnan(brier[keep][:, fe])) > 1)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_brier = (w * bz).sum(axis=0) / n_w
        # rescaled so that "always 0.5", which scores 0.25 on every question, scores 0.25
        adjusted = (w * (bz - cz[:, None])).sum(axis=0) / n_w + (wq * cz).sum() / wq.sum()
        if split:
            adjusted = np.full_like(adjusted, np.nan)
        index = _index(adjusted)
        q_avg = (present * bz).sum(axis=1) / present.sum(axis=1)
        peer = (w * (np.where(present, q_avg[:, None], 0.0) - bz)).sum(axis=0) / n_w
        if naive is None:
            bss = bss_rel = np.full(brier.shape[1], np.nan)
        else:
            ref = bz[:, naive][:, None]
            bss = (w * (ref - bz)).sum(axis=0) / n_w
            den = (w * ref).sum(axis=0)       # a perfect naive forecaster: undefined
            bss_rel = np.where(den > 0, 1.0 - (w * bz).sum(axis=0) / den, np.nan)
    return np.column_stack([mean_brier, adjusted, index, peer, bss, bss_rel])


#: An adjusted Brier score within this of 0 is 0 up to rounding (its terms are at most 1 in
#: size): a perfect forecaster can score -5.6e-17 or +1.4e-17, whose square root put its
#: Brier Index at 99.9999996 (or NaN)
_ROUNDING = 1e-12


def _index(adjusted: np.ndarray) -> np.ndarray:
    """The Brier Index of difficulty-adjusted Brier scores (NaN below 0, beyond rounding)."""
    zero = np.abs(adjusted) <= _ROUNDING
    with np.errstate(invalid="ignore"):  # the square root of a negative score is NaN
        return 100.0 * (1.0 - np.sqrt(np.where(zero, 0.0, adjusted)))




def _undefined_counts(point: np.ndarray, reps: np.ndarray) -> np.ndarray:
    """Per forecaster: the replicates in which one of its scores defined on the data (a
    finite point) is NaN, those left out of that score's interval."""
    return (np.isnan(reps) & np.isfinite(point)[None, :, :]).any(axis=2).sum(axis=0)


def _leaderboard_scores(brier: np.ndarray, fe: np.ndarray, naive: int | None, wq: np.ndarray,
                        halves: list[tuple[np.ndarray, np.ndarray | None]] | None
                        ) -> tuple[np.ndarray, list[np.ndarray]]:
    """Pooled scores (``halves`` None), or the dataset and market halves scored apart and
    the overall score their average, the Brier Index of the averaged adjusted score.

    Returns the (n_models, 6) overall scores and the per-half score arrays."""
    if halves is None:
        return _scores(brier, fe, naive, wq), []
    parts = [_scores(brier[mask], fe, naive, wq[mask], fixed) for mask, fixed in halves]
    overall = (parts[0] + parts[1]) / 2.0
    overall[:, 2] = _index(overall[:, 1])
    return overall, parts


# --------------------------------------------------------------------------- results
@dataclass(frozen=True, slots=True)
class ForecastBenchComparisonResult(CoherenceResult, test_name="ForecastBenchResult.compare",
                                    settings=("model_a", "model_b", "score", "higher_is_better",
                                              "n_resamples", "n_undefined")):
    """Paired comparison of two forecasters on one ForecastBench score.

    ``statistic`` is ``score(model_a) - score(model_b)``; ``confidence_interval``
    its percentile bootstrap interval over questions (the same replicates as
    the scores, fixed effects re-estimated in each); ``pvalue`` the two-sided
    bootstrap p-value of no difference, ``(1 + #{|d* - d| >= |d|}) / (1 + B)``, NaN
    when a forecaster has fewer than 30 questions (:meth:`ForecastBenchResult.compare`).
    The two need not agree (the p-value inverts the interval ``d +- q``, ``q`` a quantile
    of ``|d* - d|``, not the percentile one): with skewed replicates the p-value can be
    below ``1 - confidence_level`` while the interval holds 0, or the reverse.

    Attributes
    ----------
    model_a, model_b : str
        The two forecasters.
    score : str
        One of :data:`FORECASTBENCH_SCORES`.
    higher_is_better : bool
        Whether a positive statistic favours ``model_a``.
    n_resamples : int
        Bootstrap replicates kept (those with a difference).
    n_undefined : int
        Bootstrap replicates left out: the difference is undefined (NaN) there, as when
        none of one forecaster's questions was drawn. A :class:`SmallSampleWarning`
        names the two forecasters when they are over 1% of the replicates.
    table : pandas.DataFrame
        The bootstrap replicates of the difference (column ``difference``).
    """

    model_a: str = ""
    model_b: str = ""
    score: str = ""
    higher_is_better: bool = True
    n_resamples: int = 0
    n_undefined: int = 0
    replicates: np.ndarray = field(default_factory=lambda: np.empty(0))
    table: pd.DataFrame = field(init=False)

    def _build_table(self) -> pd.DataFrame:
        return pd.DataFrame({"difference": self.replicates})


@dataclass(frozen=True, slots=True)
class ForecastBenchResult(CoherenceResult, test_name="forecastbench_scores",
                          settings=("naive", "n_questions", "n_models", "n_resamples", "overall",
                                    "market_adjustment", "impute", "n_imputed")):
    """Result of :func:`forecastbench_scores`.

    ``statistic`` is the pooled Brier score (all forecasts) with its bootstrap
    interval over questions; ``pvalue`` is NaN (use :meth:`compare`).

    Attributes
    ----------
    naive : str or None
        The reference forecaster of the Brier skill scores.
    fixed_effects_models : tuple
        The forecasters whose forecasts estimated the question fixed effects (labels as
        in the model column).
    n_questions, n_models : int
    n_resamples : int
        Bootstrap replicates (questions drawn with replacement).
    table : pandas.DataFrame
        One row per forecaster, best Brier Index first: ``rank`` (tied Brier Indices
        share the best rank; missing where the Brier Index is NaN, as for an adjusted
        score below 0: such a row comes last, unranked), ``model``, ``n_questions``
        and, for each score of :data:`FORECASTBENCH_SCORES`, the value and
        ``<score>_ci_low`` / ``<score>_ci_high``.
        With ``question_type``, the scores are the overall ones (the average of the
        dataset and market halves) and ``n_dataset``, ``n_market``,
        ``brier_index_dataset``, ``brier_index_market`` give the halves (missing
        values without ``question_type``). Last, ``n_undefined``: the replicates left
        out of the forecaster's intervals, in which one of its scores (defined on the
        data) is undefined: none of its questions drawn, or an adjusted Brier score below 0
        (no Brier Index); a :class:`SmallSampleWarning` names the forecasters over 1%.
    question_effects : pandas.DataFrame
        One row per question: ``question``, ``question_type`` (missing when
        pooled), ``question_fixed_effect``, ``mean_brier``, ``n_forecasts``.
    overall : str
        ``'pooled'`` (all questions together) or ``'average of dataset and market'``
        (ForecastBench's split).
    market_adjustment : str
        How the difficulty of market questions was set: ``'two_way_fixed_effects'``
        or ``'market_brier'``.
    impute : str or None
        The imputation rule used for missing forecasts (None: none allowed).
    max_imputed : float
        The largest share of imputed forecasts a forecaster (per question set and
        question type) kept.
    n_imputed : int
        Imputed forecasts among those scored.
    dropped : pandas.DataFrame
        The forecasters (per question set) left out for too many imputed
        forecasts: ``model``, ``question_set``, ``n_forecasts``, ``n_imputed``,
        ``imputed_share``, ``imputed_share_dataset``, ``imputed_share_market``.
    """

    naive: str | None = None
    fixed_effects_models: tuple[Any, ...] = ()
    n_questions: int = 0
    n_models: int = 0
    n_resamples: int = 0
    overall: str = "pooled"
    market_adjustment: str = "two_way_fixed_effects"
    impute: str | None = None
    max_imputed: float = 0.05
    n_imputed: int = 0
    dropped: pd.DataFrame = field(default_factory=pd.DataFrame)
    table: pd.DataFrame = field(default_factory=pd.DataFrame)
    question_effects: pd.DataFrame = field(default_factory=pd.DataFrame)
    models: tuple[Any, ...] = field(repr=False, default=())
    point: np.ndarray = field(default_factory=lambda: np.empty((0, 6)))
    replicates: np.ndarray = field(default_factory=lambda: np.empty((0, 0, 6)))

    scores = DeprecatedAlias("table")

    def compare(self, model_a: str, model_b: str, *, score: str = "brier_index",
                confidence_level: float = 0.95) -> ForecastBenchComparisonResult:
        """Paired bootstrap comparison of two forecasters on one score.

        Parameters
        ----------
        model_a, model_b : str
            Two forecasters of the table.
        score : str, default 'brier_index'
            One of ``'brier', 'difficulty_adjusted_brier', 'brier_index',
            'peer_score', 'bss', 'bss_relative'``.
        confidence_level : float in (0, 1), default 0.95

        Returns
        -------
        ForecastBenchComparisonResult
            ``statistic`` the difference ``score(model_a) - score(model_b)``, ``pvalue`` its
            two-sided bootstrap p-value, ``confidence_interval`` its percentile interval
            over questions, both over the replicates in which the difference is defined
            (``n_resamples``; ``n_undefined`` those left out).

        Warns
        -----
        SmallSampleWarning
            When more than 1% of the replicates are left out (the difference undefined),
            and when a forecaster has fewer than 30 questions (the p-value is then NaN).

        Notes
        -----
        With few questions the centred bootstrap p-value rejects true nulls far too often
        (exchangeable forecasters, at 0.05: 0.30 at 3 questions, 0.11-0.12 at 10;
        ``benchmarks/check_forecastbench_small.py``), so with fewer than 30 questions
        of either forecaster it is NaN. From 30 (0.053-0.055 there) it is still liberal
        with skewed differences or related questions (0.07-0.09 in
        ``benchmarks/validate_forecast_scores.py``: a sharp against a hedged forecaster,
        topic errors shared by 10 questions; ``docs/forecastbench.md``). For a test of two
        forecasters, use :meth:`ForecastScoresResult.compare` (sign flips over questions
        or clusters; with skewed differences also liberal below 20 questions).

        The p-value and the interval need not agree: the p-value is centred on ``d``
        and symmetric (it rejects where the interval ``d +- q`` over ``|d* - d|``
        excludes 0), the interval takes the replicates' own percentiles. With skewed
        replicates one can reject while the other holds 0: a sharp against a hedged
        forecaster on 30 questions gave a Brier Index difference of -12.3 with p =
        0.045 and a 95% interval of [-22.8, 1.12]. Read them as two answers; the
        interval of :meth:`ForecastScoresResult.compare` inverts its test.
        """
        owner = "ForecastBenchResult.compare"
        score = check_choice(score, "score", owner, tuple(FORECASTBENCH_SCORES))
        _, confidence_level = check_resampling(owner, 1, confidence_level)
        for name, value in (("model_a", model_a), ("model_b", model_b)):
            if value not in self.models:
                raise ValueError(param_error(name, owner, label_choices(self.models, value),
                                             value))
        if model_a == model_b:
            raise ValueError(param_error("model_b", owner, "different from model_a", model_b))
        j = list(FORECASTBENCH_SCORES).index(score)
        ia, ib = self.models.index(model_a), self.models.index(model_b)
        d = float(self.point[ia, j] - self.point[ib, j])
        reps = self.replicates[:, ia, j] - self.replicates[:, ib, j]
        undefined = int(np.sum(~np.isfinite(reps)))
        reps = reps[np.isfinite(reps)]
        if np.isfinite(d):
            warn_undefined(owner, [f"the difference {model_a!r} - {model_b!r}"], [undefined],
                            len(self.replicates))
        if np.isfinite(d) and len(reps):
            low, high = percentile_interval(reps, confidence_level)
            n_q = dict(zip(self.table["model"], self.table["n_questions"], strict=True))
            few = few_compared(owner, {repr(m): int(n_q[m]) for m in (model_a, model_b)},
                               MIN_COMPARE_QUESTIONS)
            pvalue = np.nan if few else monte_carlo_pvalue(np.abs(reps - d), abs(d))
        else:
            pvalue, low, high = np.nan, np.nan, np.nan
        n = int(np.sum(~np.isnan(self.question_effects["question_fixed_effect"])))
        return ForecastBenchComparisonResult(
            statistic=d, pvalue=pvalue,
            confidence_interval=ConfidenceInterval(low, high, confidence_level), n_obs=n,
            method="bootstrap over questions (fixed effects re-estimated), centred two-sided",
            model_a=model_a, model_b=model_b, score=score,
            higher_is_better=FORECASTBENCH_SCORES[score], n_resamples=len(reps),
            n_undefined=undefined, replicates=reps)


# --------------------------------------------------------------------------- public layer
def forecastbench_scores(data: Any, *, question: str = "question", model: str = "model",
                         probability: str = "probability", outcome: str = "outcome",
                         naive: str | None = None,
                         fixed_effects_models: Any = None, models: Any = None,
                         question_type: str | None = None, market_value: str | None = None,
                         question_set: str | None = None,
                         market_adjustment: str = "two_way_fixed_effects",
                         impute: str | None = None, max_imputed: float = 0.05,
                         imputation_exempt: Any = (), confidence_level: float = 0.95,
                         n_resamples: int = 999, rng: RNGLike = None) -> ForecastBenchResult:
    r"""The ForecastBench leaderboard scores, with bootstrap intervals over questions.

    The scores of ForecastBench's leaderboard for binary questions: the Brier score, the
    difficulty-adjusted Brier score (question fixed effects estimated on a set of
    forecasters), the Brier Index, the peer score and the Brier skill scores against a
    naive forecaster, each with a bootstrap interval over questions.

    Parameters
    ----------
    data : pandas.DataFrame or convertible
        One row per (forecaster, question): binary questions only.
    question, model, probability, outcome : str
        Column names: the question id, the forecaster, the forecast probability
        in [0, 1] and the outcome (0 or 1, the same on every row of a question: rows
        that disagree raise).
    naive : str, optional
        The reference forecaster of the Brier skill scores (ForecastBench uses its
        "Naive Forecaster"); it must have forecast every question. Without it the
        two skill scores are NaN.
    fixed_effects_models : sequence of str, optional
        The forecasters whose forecasts estimate the question fixed effects
        (ForecastBench leaves out its dummy forecasters such as "Always 0.5" and
        the imputed one); default all.
    models : sequence of str, optional
        Score only these forecasters (ForecastBench's baseline and tournament
        leaderboards each keep a subset); the others are left out before anything
        is computed, peer scores included. Default all.
    question_type : str, optional
        Column with ``'dataset'`` or ``'market'`` per question. With it the scores
        are ForecastBench's overall ones: each is computed on the dataset and the
        market questions apart (fixed effects estimated within each) and the two
        averaged; the Brier Index is that of the averaged adjusted score. Default:
        all questions pooled.
    market_value : str, optional
        Column with the market's probability on the forecast due date (needed for
        ``market_adjustment='market_brier'`` and ``impute='market'``), the same on
        every row of a question (rows that disagree raise).
    question_set : str, optional
        Column naming the question set (ForecastBench: the forecast due date) of
        each forecast; the imputed share is checked per forecaster and set, and a
        forecaster is dropped from that set only. Default: one set. A missing set, or
        sets written two ways (``'R1'`` and ``'r1'``, ``1`` and ``'1'``), raise rather
        than split one forecaster's set in two.
    market_adjustment : {'two_way_fixed_effects', 'market_brier'}
        How the difficulty of market questions is set: estimated like dataset
        questions (ForecastBench's baseline leaderboard, the default), or the Brier
        score of the market value (its tournament leaderboard). Needs
        ``question_type``.
    impute : {None, '0.5', 'market'}, default None
        Missing (NaN) probabilities: an error (None), 0.5 everywhere ('0.5',
        ForecastBench's code since September 2025), or 0.5 on dataset questions
        and the market value on market questions ('market', the rule its code
        stated before). A forecaster's questions are its rows: absent rows are not
        imputed.
    max_imputed : float in [0, 1], default 0.05
        A forecaster (per question set) with a larger share of imputed forecasts,
        over all its questions or, with ``question_type``, among its dataset or its
        market questions, is left out (ForecastBench's 5%). Without imputation
        nothing is imputed and nothing is dropped.
    imputation_exempt : sequence of str, default ()
        Forecasters never dropped for imputed forecasts (ForecastBench exempts its
        own comparison forecasters, such as the naive and imputed forecasters and
        the human medians, not the LLMs it runs).
    confidence_level : float in (0, 1), default 0.95
    n_resamples : int >= 1, default 999
        Bootstrap replicates: questions drawn with replacement, every score (the
        fixed effects included) recomputed.
    rng : int, numpy.random.Generator or None

    Returns
    -------
    ForecastBenchResult
        The leaderboard in ``table``; :meth:`ForecastBenchResult.compare` for a
        paired comparison.

    Raises
    ------
    ValueError
        For a missing column, a probability outside [0, 1], a non-binary outcome,
        a forecaster with two forecasts of one question, forecaster, question or
        question-set ids that differ only in case, surrounding spaces or type (``1`` and
        ``'1'``: one id written two ways), an unknown ``naive`` or
        fixed-effects forecaster, a naive forecaster that skipped questions, a
        question no fixed-effects forecaster answered, or forecasters and
        questions that fall into separate groups with no forecaster in common
        (then no difficulty adjustment can compare them).

    Warns
    -----
    SmallSampleWarning
        When an interval rests on one question; when a row's intervals (or the pooled
        score's) rest on fewer than 40 questions, where the percentile intervals cover
        less than their level (0.66 at 3 questions, 0.87 at 10, 0.92 at 30), naming the
        rows; and when more than 1% of the bootstrap replicates are left out of a
        forecaster's intervals (a score undefined there: none of its questions drawn, a
        forecaster of 2 questions among many losing about 13%; for the adjusted scores,
        questions drawn that split the fixed-effects forecasters into groups with no
        forecaster in common; or, for the Brier Index, an adjusted Brier score below 0),
        naming it; the table's ``n_undefined`` counts them. Also when the leaderboard
        holds a single forecaster: its peer score is measured against itself (0,
        interval [0, 0]).

    See Also
    --------
    forecast_scores : accuracy, Brier and log score per model, with calibration.
    question_scores : scores of a table that mixes question types.
    calibration_error : the debiased calibration error.

    Notes
    -----
    With :math:`b_{ij} = (p_{ij} - y_j)^2` the Brier score of forecaster *i* on
    question *j* and :math:`Q_i` its questions:

    * **difficulty-adjusted Brier**: fit :math:`b_{ij} = a_i + c_j + e_{ij}` by
      least squares on the fixed-effects forecasters; then
      :math:`\bar b^{adj}_i = \frac{1}{|Q_i|}\sum_{j \in Q_i}(b_{ij} - c_j) +
      \frac{1}{|Q|}\sum_{j \in Q} c_j`, the second term rescaling so that a
      forecaster who says 0.5 on every question scores 0.25 (as ForecastBench
      rescales; on some questions only, 0.25 less the mean :math:`c_j` of its
      questions plus the mean of all);
    * **Brier Index**: :math:`100\,(1 - \sqrt{\bar b^{adj}_i})`: 100 perfect,
      50 always 0.5, 0 always wrong (NaN if :math:`\bar b^{adj}_i < 0`; within 1e-12
      of 0, rounding, the score counts as 0);
    * **peer score**: :math:`\frac{1}{|Q_i|}\sum_{j}(\bar b_j - b_{ij})`,
      :math:`\bar b_j` the mean Brier score of question *j* over all forecasters
      (positive is better than the average forecaster; with one forecaster it is 0,
      interval [0, 0], by construction, with a :class:`SmallSampleWarning`);
    * **Brier skill score**: ``bss`` is ForecastBench's
      :math:`\frac{1}{|Q_i|}\sum_j (b_{\mathrm{naive},j} - b_{ij})`, and
      ``bss_relative`` the classical :math:`1 - \sum_j b_{ij} / \sum_j
      b_{\mathrm{naive},j}` over the same questions (NaN, with a
      :class:`~coherence.DegenerateDataWarning`, where the naive forecaster's Brier
      score is 0 on them: a perfect reference leaves no skill to measure against it).

    With ``question_type`` each score is computed on the dataset and on the
    market questions and the two averaged (every score; ``bss_relative``, not on
    the leaderboard, averaged the same way); the overall Brier Index is
    :math:`100\,(1 - \sqrt{(\bar b^{adj}_{i,d} + \bar b^{adj}_{i,m})/2})`, not the
    average of the two indices, and the bootstrap draws questions within each
    kind. A forecaster with questions of one kind only has NaN overall scores.
    With ``market_adjustment='market_brier'`` the market questions' :math:`c_j`
    are :math:`(v_j - y_j)^2`, :math:`v_j` the market value. Without
    ``question_type`` all questions are pooled.

    References
    ----------
    Karger, E., Bastani, H., Yueh-Han, C., Jacobs, Z., Halawi, D., Zhang, F. and
    Tetlock, P. E. (2025). ForecastBench: a dynamic benchmark of AI forecasting
    capabilities. *International Conference on Learning Representations (ICLR)*;
    leaderboard methodology in github.com/forecastingresearch/forecastbench.

    Examples
    --------
    >>> import pandas as pd
    >>> from coherence import forecastbench_scores
    >>> data = pd.DataFrame({  # 40 questions (fewer: the intervals are warned of)
    ...     "model": ["a"] * 40 + ["b"] * 40,
    ...     "question": list(range(40)) * 2,
    ...     "probability": [0.9, 0.2, 0.7, 0.4] * 10 + [0.5] * 40,
    ...     "outcome": [1, 0, 1, 1] * 20})
    >>> res = forecastbench_scores(data, naive="b", n_resamples=99, rng=0)
    >>> res.table[["model", "brier", "brier_index", "bss"]].round(3)
      model  brier  brier_index    bss
    0     a  0.125       64.645  0.125
    1     b  0.250       50.000  0.000
    """
    owner = "forecastbench_scores"
    n_resamples, confidence_level = check_resampling(owner, n_resamples, confidence_level)
    gen = check_rng(rng, owner=owner)
    market_adjustment, impute, needs_value = check_market_options(
        owner, market_adjustment, impute, max_imputed, question_type, market_value)
    df = as_dataframe(data, owner=owner)
    cols = {"question": question, "model": model, "probability": probability,
            "outcome": outcome}
    for name, col in (("question_type", question_type), ("market_value", market_value),
                      ("question_set", question_set)):
        if col is not None:
            cols[name] = col
    require_columns(df, cols, owner=owner)
    if len(df) == 0:
        raise ValueError(param_error("data", owner, "a table with at least one forecast",
                                     "an empty table"))
    # a set, too: 'R1' and 'r1' (or a blank) would split one forecaster's set in two, and
    # the imputed share that drops it from the set be counted over each part apart
    ids = [question, model] if question_set is None else [question, model, question_set]
    no_missing(df, ids, owner=owner)
    for col in ids:  # 1 and '1', 'Q1' and 'q1': one id written two ways
        check_ids([("data", df)], col, owner=owner)
    if models is not None:
        wanted = model_list(models, "models", df[model], model, owner)
        df = df[df[model].isin(wanted)]
    is_market = question_type_column(df, question_type, question, owner)
    value = np.full(len(df), np.nan)
    if market_value is not None:
        value = probability_array(df[market_value].to_numpy(), market_value, owner=owner,
                                  allow_nan=True)
        if needs_value:
            no_missing(df, market_value, owner=owner, missing=is_market & np.isnan(value),
                       rule="hold a value for every market question")
    p, imputed = imputed_probabilities(df, probability, impute, is_market, value, owner)
    y = binary_column(df, outcome, owner=owner)
    same_within(df, y, question, outcome, owner=owner)  # one outcome per question
    if market_value is not None:  # one market value per question (a question's fact)
        same_within(df, value, question, market_value, owner=owner)
    dup = df.duplicated([model, question], keep="first").to_numpy()
    if dup.any():
        raise ValueError(column_error(question, f"appear once per '{model}' (one forecast per "
                                      "forecaster and question)",
                                      list(df.index[np.flatnonzero(dup)]), owner=owner))
    exempt = [] if not imputation_exempt else model_list(
        imputation_exempt, "imputation_exempt", df[model], model, owner)
    keep, dropped = imputation_filter(df, model, question_set, imputed, is_market,
                                       question_type is not None, max_imputed, exempt)
    if not keep.any():
        raise ValueError(f"{owner}: every forecaster has more than {max_imputed:.0%} imputed "
                         "forecasts ('max_imputed'); nothing is left to score.")
    df, p, y, imputed, is_market, value = (df[keep], p[keep], y[keep], imputed[keep],
                                           is_market[keep], value[keep])
    panel = brier_panel(df[question], df[model], p, y, is_market, value)
    n_q, n_m = len(panel.questions), len(panel.models)
    if fixed_effects_models is None:
        fe = np.ones(n_m, dtype=bool)
    else:
        wanted = model_list(fixed_effects_models, "fixed_effects_models", df[model], model,
                             owner)
        fe = np.isin(np.asarray(panel.model_index, dtype=object), np.asarray(wanted, dtype=object))
    halves = _score_halves(panel, fe, question_type, market_adjustment, owner)
    naive_idx = None if naive is None else _naive_index(panel, naive, model, dropped, owner)
    brier = panel.brier
    point, parts = _leaderboard_scores(brier, fe, naive_idx, np.ones(n_q), halves)
    draws = _bootstrap_draws(gen, n_q, n_resamples, halves)
    reps = np.stack([_leaderboard_scores(brier, fe, naive_idx, w, halves)[0] for w in draws])
    present = ~np.isnan(brier)
    pooled = np.nansum(brier) / present.sum()
    pooled_reps = (draws @ np.nansum(brier, axis=1)) / (draws @ present.sum(axis=1))
    low, high = percentile_interval(pooled_reps, confidence_level)
    table = _score_table(panel, point, reps, parts, halves, confidence_level)
    warn_small(owner, table, n_q)
    warn_undefined(owner, [str(m) for m in table["model"]], table["n_undefined"], n_resamples)
    warn_perfect_naive(owner, table, naive)
    overall = "pooled" if halves is None else "average of dataset and market"
    return ForecastBenchResult(
        statistic=float(pooled), pvalue=np.nan,
        confidence_interval=ConfidenceInterval(low, high, confidence_level), n_obs=len(df),
        method="pooled Brier score, percentile bootstrap over questions", naive=naive,
        fixed_effects_models=tuple(m for m, k in zip(panel.models, fe, strict=True) if k),
        n_questions=n_q, n_models=n_m, n_resamples=n_resamples, overall=overall,
        market_adjustment=market_adjustment, impute=impute, max_imputed=float(max_imputed),
        n_imputed=int(imputed.sum()), dropped=dropped, table=table,
        question_effects=_effects_table(panel, fe, halves), models=panel.models, point=point,
        replicates=reps)


def _score_halves(panel: BrierPanel, fe: np.ndarray, question_type: str | None,
                  market_adjustment: str,
                  owner: str) -> list[tuple[np.ndarray, np.ndarray | None]] | None:
    """The dataset and market halves (question mask, fixed question effects or None), or
    None when pooled; raises when a half's fixed effects cannot be estimated."""
    brier, questions = panel.brier, panel.questions
    if question_type is None:
        check_estimable(brier, fe, questions, owner)
        return None
    q_market = panel.is_market
    halves: list[tuple[np.ndarray, np.ndarray | None]] = [
        (~q_market, None),
        (q_market,
         panel.market_brier[q_market] if market_adjustment == "market_brier" else None)]
    for kind, (mask, fixed) in zip(("dataset", "market"), halves, strict=True):
        if not mask.any():
            raise ValueError(f"{owner}: the '{question_type}' column has no {kind} "
                             "question left to score; both kinds are needed for the "
                             "overall score (question_type=None pools all questions).")
        if fixed is None:
            check_estimable(brier[mask], fe, questions[mask], owner)
    return halves


def _naive_index(panel: BrierPanel, naive: str, model: str, dropped: pd.DataFrame,
                 owner: str) -> int:
    """The column of the naive forecaster, which must have forecast every question."""
    if naive not in list(panel.model_index):
        why = (" (left out for too many imputed forecasts: 'max_imputed')"
               if naive in set(dropped["model"]) else "")
        raise ValueError(param_error("naive", owner, f"a value of '{model}'{why}", naive))
    naive_idx = list(panel.model_index).index(naive)
    skipped = np.flatnonzero(np.isnan(panel.brier[:, naive_idx]))
    if len(skipped):
        raise ValueError(f"{owner}: the 'naive' forecaster {naive!r} has no forecast for "
                         f"{len(skipped)} question(s), e.g. "
                         f"{list(panel.questions[skipped[:5]])}; it must forecast every "
                         "question.")
    return naive_idx


def _bootstrap_draws(gen: np.random.Generator, n_q: int, n_resamples: int,
                     halves: list[tuple[np.ndarray, np.ndarray | None]] | None) -> np.ndarray:
    """(n_resamples, n_q) bootstrap question weights: questions drawn with replacement,
    within each kind when split, as ForecastBench does."""
    if halves is None:
        return gen.multinomial(n_q, np.full(n_q, 1.0 / n_q),
                               size=n_resamples).astype(np.float64)
    draws = np.zeros((n_resamples, n_q))
    for mask, _ in halves:
        k = int(mask.sum())
        draws[:, mask] = gen.multinomial(k, np.full(k, 1.0 / k), size=n_resamples)
    return draws


def _score_table(panel: BrierPanel, point: np.ndarray, reps: np.ndarray,
                 parts: list[np.ndarray],
                 halves: list[tuple[np.ndarray, np.ndarray | None]] | None,
                 confidence_level: float) -> pd.DataFrame:
    """The leaderboard: one row per forecaster, best Brier Index first."""
    present = ~np.isnan(panel.brier)
    n_m = len(panel.models)
    table = pd.DataFrame({"model": list(panel.models),
                          "n_questions": present.sum(axis=0).astype(np.int64)})
    for j, name in enumerate(FORECASTBENCH_SCORES):
        table[name] = point[:, j]
        bounds = [percentile_interval(reps[:, i, j], confidence_level) for i in range(n_m)]
        table[f"{name}_ci_low"] = [b[0] for b in bounds]
        table[f"{name}_ci_high"] = [b[1] for b in bounds]
    for h, kind in enumerate(("dataset", "market")):
        if halves is None:
            table[f"n_{kind}"] = pd.array([pd.NA] * n_m, dtype="Int64")
            table[f"brier_index_{kind}"] = np.nan
        else:
            table[f"n_{kind}"] = pd.array(present[halves[h][0]].sum(axis=0), dtype="Int64")
            table[f"brier_index_{kind}"] = parts[h][:, 2]
    table["n_undefined"] = _undefined_counts(point, reps)
    table = table.sort_values(["brier_index", "model"], ascending=[False, True],
                              na_position="last", kind="mergesort").reset_index(drop=True)
    # ties share a rank; no Brier Index (an adjusted score below 0), no rank, not the last
    table.insert(0, "rank", table["brier_index"].rank(method="min", ascending=False)
                 .astype("Int64"))
    return table


def _effects_table(panel: BrierPanel, fe: np.ndarray,
                   halves: list[tuple[np.ndarray, np.ndarray | None]] | None) -> pd.DataFrame:
    """One row per question: its kind, fixed effect, mean Brier score and forecasts."""
    brier = panel.brier
    n_q = len(panel.questions)
    ones = np.ones(n_q)
    if halves is None:
        c = _question_effects(brier, fe, ones)
        kinds: Any = [None] * n_q
    else:
        c = np.full(n_q, np.nan)
        for mask, fixed in halves:
            c[mask] = _question_effects(brier[mask], fe, ones[mask]) if fixed is None else fixed
        kinds = np.where(panel.is_market, "market", "dataset").tolist()
    present = ~np.isnan(brier)
    return pd.DataFrame({"question": list(panel.questions), "question_type": kinds,
                         "question_fixed_effect": c,
                         "mean_brier": np.nanmean(brier, axis=1),
                         "n_forecasts": present.sum(axis=1)})
