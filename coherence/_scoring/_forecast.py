"""Outcome quality of probabilistic forecasts: accuracy, Brier and log scores, calibration.

Public layer: :func:`forecast_scores` (a forecast table in, a
:class:`ForecastScoresResult` out, with bootstrap-t intervals of the scores and Wilson's
of the accuracy), :meth:`ForecastScoresResult.compare` (a paired comparison of two
models on their common questions, in :mod:`._comparison`); its reliability diagram,
:func:`plot_reliability`, is drawn in :mod:`._reliability_plots`.
The array layer (``_brier_*``, ``_log_score``, ``_reliability_table``,
``murphy``) is what the tests check against hand computations.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from dataclasses import replace
from typing import Any

import numpy as np
import pandas as pd

from .._parameters import check_choice
from .._parameters import check_float
from .._parameters import check_int
from .._parameters import check_resampling
from .._resampling import cluster_mean_pivots
from .._resampling import heavy_tailed_mean_interval
from .._resampling import mean_interval
from .._resampling import sorted_codes
from .._resampling import streams_by_label
from .._resampling import wilson_interval
from .._results import CoherenceResult
from .._results import ConfidenceInterval
from .._results import Summary
from .._rng import RNGLike
from .._rng import check_rng
from .._rng import spawn
from .._validation import as_dataframe
from .._validation import binary_column
from .._validation import column_error
from .._validation import no_missing
from .._validation import nonempty
from .._validation import param_error
from .._validation import probability_column
from .._validation import require_columns
from .._validation import same_within
from .._warnings import DegenerateDataWarning
from .._warnings import DeprecatedAlias
from ._comparison import METRICS as _METRICS
from ._comparison import ForecastComparisonResult
from ._comparison import paired_comparison
from ._forecast_warnings import warn_intervals
from ._ids import POOLED
from ._ids import RESERVED_COLUMNS
from ._ids import check_ids
from ._ids import not_pooled
from ._ids import reserved_by
from ._ids import same_spelling

__all__ = [
    "LOG_CONVENTIONS",
    "POOLED",
    "ForecastScoresResult",
    "forecast_scores",
]

#: ``"ln"``: natural log of the probability of what happened (<= 0, higher is better);
#: ``"log2_loss"``: minus its base-2 log (>= 0, lower is better).
LOG_CONVENTIONS = ("ln", "log2_loss")
_OWNER = "forecast_scores"


# --------------------------------------------------------------------------- array layer
def _brier_binary(p: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Binary Brier score (p - y)^2 with p the probability of YES."""
    return (p - y) ** 2


def _brier_multiclass(probs: np.ndarray, outcome: np.ndarray) -> np.ndarray:
    """Full multi-class Brier score sum_j (p_j - 1[j = outcome])^2, in [0, 2]."""
    onehot = np.zeros_like(probs)
    onehot[np.arange(len(outcome)), outcome] = 1.0
    return np.sum((probs - onehot) ** 2, axis=1)


def _brier_chosen(conf: np.ndarray, correct: np.ndarray) -> np.ndarray:
    """One-vs-rest Brier on the chosen option: (1 - c)^2 if right, c^2 if wrong."""
    return np.where(correct == 1, (1.0 - conf) ** 2, conf**2)


def _log_score(p_happened: np.ndarray, convention: str, floor: float) -> np.ndarray:
    """Log score of the probability given to what happened, floored at ``floor``."""
    q = np.maximum(p_happened, floor)
    if convention == "ln":
        return np.log(q)
    return -np.log2(q)


def _score_ranges(kind: str, convention: str, floor: float) -> dict[str, tuple[float, float]]:
    """The range of the Brier and log scores: an interval of a mean is intersected with it
    (the population's mean lies in it)."""
    top = -math.log(floor) if convention == "ln" else -math.log2(floor)
    log = (-top, 0.0) if convention == "ln" else (0.0, top)
    return {"brier": (0.0, 2.0 if kind == "multiclass" else 1.0), "log_score": log}


def bin_index(p: np.ndarray, n_bins: int) -> np.ndarray:
    """Equal-width bins on [0, 1]: [k/n, (k+1)/n), the last bin closed at 1."""
    edges = np.arange(n_bins + 1) / n_bins
    return np.clip(np.searchsorted(edges, p, side="right") - 1, 0, n_bins - 1)


def _reliability_table(p: np.ndarray, y: np.ndarray, n_bins: int) -> pd.DataFrame:
    """Per-bin count, mean forecast and observed frequency (empty bins kept, NaN means)."""
    idx = bin_index(p, n_bins)
    n = np.bincount(idx, minlength=n_bins).astype(np.int64)
    sum_p = np.bincount(idx, weights=p, minlength=n_bins)
    sum_y = np.bincount(idx, weights=y, minlength=n_bins)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean_p = np.where(n > 0, sum_p / np.maximum(n, 1), np.nan)
        freq = np.where(n > 0, sum_y / np.maximum(n, 1), np.nan)
    edges = np.arange(n_bins + 1) / n_bins
    return pd.DataFrame({"bin": np.arange(n_bins, dtype=np.int64), "lower": edges[:-1],
                         "upper": edges[1:], "n": n, "mean_forecast": mean_p,
                         "observed_frequency": freq})


def murphy(p: np.ndarray, y: np.ndarray, n_bins: int) -> dict[str, float]:
    """ECE and the binned Murphy decomposition of the Brier score of (p, y).

    Keys ``ece``, ``brier``, ``reliability``, ``resolution``, ``uncertainty`` and
    ``within_bin`` (the remainder, so that ``brier = reliability - resolution +
    uncertainty + within_bin``)."""
    table = _reliability_table(p, y, n_bins)
    n = table["n"].to_numpy()
    used = n > 0
    w = n[used] / n.sum()
    mean_p = table["mean_forecast"].to_numpy()[used]
    freq = table["observed_frequency"].to_numpy()[used]
    ybar = float(np.mean(y))
    reliability = float(np.sum(w * (mean_p - freq) ** 2))
    resolution = float(np.sum(w * (freq - ybar) ** 2))
    uncertainty = ybar * (1.0 - ybar)
    brier = float(np.mean((p - y) ** 2))
    return {
        "ece": float(np.sum(w * np.abs(mean_p - freq))),
        "brier": brier,
        "reliability": reliability,
        "resolution": resolution,
        "uncertainty": uncertainty,
        # BS = REL - RES + UNC + (within-bin terms); zero when forecasts are constant per bin
        "within_bin": brier - (reliability - resolution + uncertainty),
    }


_murphy = murphy


# --------------------------------------------------------------------------- results
@dataclass(frozen=True, slots=True)
class ForecastScoresResult(CoherenceResult, test_name="forecast_scores",
                           settings=("by", "kind", "brier_convention", "log_convention",
                                     "accuracy_convention", "floor", "n_bins", "cluster",
                                     "n_resamples")):
    """Accuracy, Brier and log scores per model and pooled, with calibration.

    ``statistic`` is the pooled Brier score (all models, all questions) and
    ``confidence_interval`` its cluster bootstrap-t interval over questions (or
    clusters of related questions);
    ``pvalue`` is NaN (a score is an estimate, not a test: use
    :meth:`compare` for a paired test of two models).

    Attributes
    ----------
    by : str
        The column that names the forecaster (``'model'``).
    kind : str
        Input format: ``'binary'``, ``'multiclass'`` (a probability vector over
        options) or ``'chosen'`` (the chosen option and its confidence).
    brier_convention : str
        The Brier convention that format implies (see Notes of
        :func:`forecast_scores`).
    log_convention : str
        ``'ln'`` or ``'log2_loss'``.
    accuracy_convention : str
        ``'paper'`` (a binary forecast of exactly 0.5 counts as a YES call) or
        ``'code'`` (it scores 1/2), see ``accuracy_convention`` of
        :func:`forecast_scores`.
    floor : float
        Floor applied to the probability of what happened before the log.
    n_bins : int
        Equal-width bins of the reliability table.
    cluster : str or None
        The column of clusters of related questions, the resampling unit; None:
        each question is its own.
    n_resamples : int
        Cluster-bootstrap resamples.
    n_dropped_stale : int
        Older forecasts dropped because a later one exists for the same
        (model, question).
    table : pandas.DataFrame
        One row per model plus a pooled row (``'(all)'``): ``n_forecasts``,
        ``n_questions`` and, for each of accuracy, brier, log_score, the mean
        and its ``_ci_low``/``_ci_high``.
    calibration : pandas.DataFrame
        Per model and pooled: ``ece``, ``brier`` (binary Brier of the
        (confidence, correct) pairs), ``reliability``, ``resolution``,
        ``uncertainty``, ``within_bin``.
    reliability_table : pandas.DataFrame
        Per model and pooled, per bin: ``n``, ``mean_forecast``,
        ``observed_frequency``.
    per_forecast : pandas.DataFrame
        One row per scored forecast: model, question, ``p_outcome`` (probability
        given to what happened), ``confidence`` (the calibration forecast: P(YES),
        the top probability or the chosen option's), ``correct`` (1 when the
        forecast's answer happened, 0 when not, NaN where the credit is split:
        an exact 0.5 under ``accuracy_convention='code'``, a multiclass tie; it
        always agrees with ``accuracy``), ``accuracy``, ``brier``, ``log_score``
        (and ``cluster``, with ``cluster``).
    filtered : ForecastScoresResult or None
        The same scores after the contamination filter, when ``cutoffs`` was given
        (None also when the filter left no forecast: that warns, and the summary says
        so).
    contamination : ContaminationFilterResult or None
        The filter's report (kept, dropped, models without a known cutoff).
    """

    by: str
    kind: str
    brier_convention: str
    log_convention: str
    accuracy_convention: str
    floor: float
    n_bins: int
    cluster: str | None
    n_resamples: int
    n_dropped_stale: int
    table: pd.DataFrame
    calibration: pd.DataFrame
    reliability_table: pd.DataFrame
    per_forecast: pd.DataFrame
    filtered: ForecastScoresResult | None = field(default=None, repr=False)
    contamination: Any = field(default=None, repr=False)

    scores = DeprecatedAlias("table")

    def summary(self) -> Summary:
        """The headline result followed by the per-model score table."""
        cols = [self.by, "n_questions", "accuracy", "brier", "brier_ci_low", "brier_ci_high",
                "log_score"]
        summary = CoherenceResult.summary(self).with_table("per model", self.table[cols])
        if self.filtered is not None:
            caption = "after the contamination filter"
            lead = [caption + ":"]
            unknown = getattr(self.contamination, "unknown_models", ())
            if unknown:  # kept whole: a misspelt name in the cutoffs leaves them unfiltered
                lead.append("(models without a cutoff, not filtered: "
                            + ", ".join(map(str, unknown)) + ")")
            summary = summary.with_table(caption, self.filtered.table[cols], lead=lead)
        elif self.contamination is not None:  # asked for, and nothing was left to score
            summary = summary.extend("\n  after the contamination filter: no forecast left "
                                     "(every question opened before its model's cutoff)")
        return summary

    def scores_frame(self) -> pd.DataFrame:
        """The per-model and pooled score table, with an ``filtered`` flag column.

        Rows of the unfiltered scores come first (``filtered = False``), then,
        when a contamination filter was applied, those of the filtered scores.
        """
        frames = [self.table.assign(filtered=False)]
        if self.filtered is not None:
            frames.append(self.filtered.table.assign(filtered=True))
        return pd.concat(frames, ignore_index=True)

    def compare(self, model_a: str, model_b: str, *, metric: str = "brier",
                n_resamples: int = 9999, confidence_level: float = 0.95,
                skew_correction: bool = True,
                rng: RNGLike = None) -> ForecastComparisonResult:
        """Paired comparison of two models on the questions both forecast.

        Parameters
        ----------
        model_a, model_b : str
            Two values of the ``by`` column.
        metric : {'brier', 'log_score', 'accuracy'}
            The per-forecast score to compare.
        n_resamples : int
            Sign-flip randomizations (all sign vectors when there are no more).
        confidence_level : float
            Level of the interval of the mean difference.
        skew_correction : bool
            Refer Hall's skew-corrected studentized mean to its sign flips (default),
            or the plain sum of the differences (False, the previous release's test).
        rng : int, numpy.random.Generator or None
            Randomness.

        Returns
        -------
        ForecastComparisonResult
            ``statistic`` the mean score difference (a - b) over the common questions,
            ``pvalue`` its two-sided sign-flip p-value, ``confidence_interval`` the
            differences the test does not reject; one row per common question in
            ``table``.

        Warns
        -----
        SmallSampleWarning
            Below 20 common questions (clusters): with skewed differences the test
            rejected a true null 0.087-0.122 at 6-10 questions (level 0.05).

        See Also
        --------
        forecast_scores : the scores compared.
        forecastbench_scores : the ForecastBench leaderboard's comparison.

        Notes
        -----
        With :math:`d_q = s_a(q) - s_b(q)` over the :math:`n` common questions,
        the statistic is :math:`\\bar d`. The units are the questions, or the clusters
        of related questions of ``cluster`` (:func:`forecast_scores`), with
        :math:`D_c` the sum of the differences of cluster *c* and :math:`m_c` their
        number. Under the null that the mean difference is :math:`\\delta`, the
        centred sums :math:`e_c = D_c - \\delta m_c` are taken as symmetric about 0
        and independent over units (true when the two models' scores are
        exchangeable on each unit), so any statistic of them referred to its values
        under sign flips :math:`s_c e_c` gives an exact test. The statistic is Hall's
        (1992) transformation of the studentized mean of the :math:`e_c`,
        :math:`|\\sqrt{C}(U + \\hat\\gamma U^2/3 + \\hat\\gamma^2 U^3/27 +
        \\hat\\gamma/(6C))|` with :math:`U = \\bar e / \\hat\\sigma` and
        :math:`\\hat\\gamma` their skewness (divisor *C*), which removes the
        skewness term of its distribution: with skewed differences (a sharp
        forecaster against a hedged one) the plain statistic
        :math:`|\\sum_c e_c|` (``skew_correction=False``) errs as the t-test does,
        rejecting 0.076 at 30 questions where this one rejects 0.049. The p-value
        (:math:`\\delta = 0`) is exact over all :math:`2^C` sign vectors when
        :math:`2^C \\le` ``n_resamples``, else
        :math:`(1 + \\#\\{b : |T_b| \\ge |T|\\}) / (1 + B)` over ``n_resamples``
        random ones. The interval holds the :math:`\\delta` that the same sign
        vectors do not reject at :math:`1 -` ``confidence_level`` (found by bisection
        from the estimate; with ``skew_correction=False``, exactly from one linear
        root per sign vector), and it excludes 0 exactly when the p-value is at most
        :math:`1 -` ``confidence_level``.
        """
        return paired_comparison(self, model_a, model_b, metric=metric,
                                 n_resamples=n_resamples, confidence_level=confidence_level,
                                 skew_correction=skew_correction, rng=rng)


# --------------------------------------------------------------------------- public layer
@dataclass(frozen=True, slots=True)
class _Prepared:
    frame: pd.DataFrame          # model, question, timestamp-filtered rows
    kind: str
    p_outcome: np.ndarray
    confidence: np.ndarray
    correct: np.ndarray          # the calibration pair's outcome: 0/1, or a tie's share
    accuracy: np.ndarray         # 0, 1 or a tie share
    brier: np.ndarray
    n_dropped_stale: int


def _latest(df: pd.DataFrame, by: str, question: str, timestamp: str | None) -> tuple[
        pd.DataFrame, int]:
    key = [by, question]
    dup = df.duplicated(key, keep=False).to_numpy()
    if timestamp is None:
        if dup.any():
            pos = np.flatnonzero(dup)
            raise ValueError(column_error(
                question, f"hold one forecast per ({by}, {question}) pair, or pass "
                "'timestamp' to keep the latest", list(df.index[pos]), owner=_OWNER))
        return df, 0
    from ._temporal import parse_dates

    ts, is_missing = parse_dates(df[timestamp], df.index, timestamp, _OWNER,
                                  require_tz=False)
    missing = np.flatnonzero(is_missing & dup)
    if len(missing):
        raise ValueError(column_error(
            timestamp, "hold a date for every repeated forecast", list(df.index[missing]),
            owner=_OWNER))
    work = df.assign(_ts=ts, _pos=np.arange(len(df)))
    latest = work.groupby(key, sort=False)["_ts"].transform("max")
    at_latest = work.loc[(work["_ts"] == latest) | latest.isna()]
    ties = at_latest.duplicated(key, keep=False).to_numpy()
    if ties.any():
        raise ValueError(column_error(
            timestamp, f"identify the latest forecast per ({by}, {question}) pair "
            "(ties at the latest time)", list(at_latest.index[np.flatnonzero(ties)]),
            owner=_OWNER))
    # by position: labels select every row of a repeated index label (concatenated tables)
    kept = df.iloc[np.sort(at_latest["_pos"].to_numpy())]
    return kept, len(df) - len(kept)


def _prepare(df: pd.DataFrame, *, by: str, question: str, probability: str | None,
             outcome: str, options: Sequence[str] | None, chosen: str | None,
             timestamp: str | None, accuracy_convention: str = "paper") -> _Prepared:
    cols: dict[str, str | None] = {"by": by, "question": question, "outcome": outcome,
                                   "timestamp": timestamp, "chosen": chosen}
    if options is None:
        cols["probability"] = probability
    require_columns(df, cols, owner=_OWNER)
    if options is not None:
        require_columns(df, list(options), owner=_OWNER)
    no_missing(df, (by, question), owner=_OWNER)
    for col in (by, question):  # 1 and '1', 'Q1' and 'q1': one id written two ways
        check_ids([("forecasts", df)], col, owner=_OWNER)
    # a question resolves one way for every forecaster (and every stale forecast)
    same_within(df, df[outcome].to_numpy(dtype=object), question, outcome, owner=_OWNER)
    not_pooled(df, by, _OWNER)
    df, n_stale = _latest(df, by, question, timestamp)
    nonempty(df, name="forecasts", owner=_OWNER)
    if options is not None:
        probs = np.column_stack([probability_column(df, o, owner=_OWNER) for o in options])
        sums = probs.sum(axis=1)
        bad = np.flatnonzero(np.abs(sums - 1.0) > 1e-6)
        if len(bad):
            raise ValueError(column_error(
                "+".join(options), "sum to 1 over the option columns (tolerance 1e-6)",
                list(df.index[bad]), list(sums[bad]), owner=_OWNER))
        out_vals = df[outcome].to_numpy(dtype=object)
        lookup = {o: j for j, o in enumerate(options)}
        bad = np.flatnonzero([v not in lookup for v in out_vals])
        if len(bad):
            raise ValueError(column_error(
                outcome, f"name one of the option columns {list(options)}",
                list(df.index[bad]), list(out_vals[bad]), owner=_OWNER))
        y = np.array([lookup[v] for v in out_vals], dtype=np.int64)
        p_out = probs[np.arange(len(y)), y]
        top = probs.max(axis=1)
        is_top = probs == top[:, None]
        n_top = is_top.sum(axis=1)
        hit = is_top[np.arange(len(y)), y]
        accuracy = np.where(hit, 1.0 / n_top, 0.0)
        # calibration: m tied top options holding the outcome count 1/m (as accuracy), not 0
        return _Prepared(df, "multiclass", p_out, top, accuracy, accuracy,
                         _brier_multiclass(probs, y), n_stale)
    if probability is None:  # checked by forecast_scores; kept for the type checker
        raise ValueError(param_error("probability", _OWNER, "a column name", probability))
    p = probability_column(df, probability, owner=_OWNER)
    if chosen is not None:
        no_missing(df, (chosen, outcome), owner=_OWNER)
        same_spelling(df, chosen, outcome, owner=_OWNER)
        right = (df[chosen].to_numpy(dtype=object) == df[outcome].to_numpy(dtype=object))
        right = right.astype(np.int64)
        p_out = np.where(right == 1, p, 1.0 - p)
        return _Prepared(df, "chosen", p_out, p, right, right.astype(np.float64),
                         _brier_chosen(p, right), n_stale)
    y = binary_column(df, outcome, owner=_OWNER)
    p_out = np.where(y == 1, p, 1.0 - p)
    if accuracy_convention == "paper":  # 1[p >= 0.5] is the YES call
        accuracy = ((p >= 0.5) == (y == 1)).astype(np.float64)
    else:
        accuracy = np.where(p == 0.5, 0.5, ((p > 0.5) == (y == 1)).astype(np.float64))
    return _Prepared(df, "binary", p_out, p, y, accuracy, _brier_binary(p, y.astype(float)),
                     n_stale)


_BRIER_CONVENTIONS = {
    "binary": "binary (p - y)^2, p = P(YES)",
    "multiclass": "multi-class sum over options of (p_j - 1[j = outcome])^2",
    "chosen": "one-vs-rest on the chosen option: (1 - c)^2 if right, c^2 if wrong",
}


def forecast_scores(
    forecasts: Any,
    *,
    by: str = "model",
    question: str = "question",
    probability: str | None = "probability",
    outcome: str = "outcome",
    options: Sequence[str] | None = None,
    chosen: str | None = None,
    timestamp: str | None = "forecast_date",
    convention: str = "ln",
    accuracy_convention: str = "paper",
    floor: float = 1e-10,
    n_bins: int = 10,
    cutoffs: Mapping[str, Any] | str | None = None,
    opened: str = "opened",
    cluster: str | None = None,
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
) -> ForecastScoresResult:
    """Accuracy, Brier score and log score per model and pooled, with calibration.

    Every forecast is scored against what happened (binary, multiclass or chosen-option
    forecasts; the Brier convention used is recorded), then averaged per model and over
    all models. Forecasts of one question are not independent, so the intervals are
    cluster bootstrap-t over questions; with ``cutoffs``, the scores are also given
    after :func:`contamination_filter`.

    Parameters
    ----------
    forecasts : pandas.DataFrame or convertible
        One row per forecast. Three formats, chosen by the arguments given:
        *binary* (default): ``probability`` = P(YES) and a 0/1 ``outcome``;
        *multiclass*: ``options`` names one probability column per option and
        ``outcome`` holds the name of the option that happened;
        *chosen*: ``chosen`` names the column of the chosen option,
        ``probability`` its confidence, ``outcome`` the option that happened
        (compared exactly: labels that differ only in case, ``'Yes'`` and
        ``'yes'``, or in type, ``'1'`` and ``1``, raise rather than count as
        different options). A question's ``outcome`` is the same on all its rows
        (every forecaster's, stale forecasts' too); rows that disagree raise.
        Ids of ``by``, ``question`` and ``cluster`` that differ only in case, surrounding
        spaces or type (``'Q1'`` and ``'q1'``, ``1`` and ``'1'``) raise rather than
        count as two.
        The ``by`` value ``'(all)'`` is reserved for the pooled row.
    by, question : str
        Columns naming the forecaster and the question (the resampling unit).
        ``by`` may not name a column of the result's tables (``'question'``,
        ``'confidence'``, ``'correct'``, ``'brier'``, ``'n_forecasts'`` and the others
        of :class:`ForecastScoresResult`), which would overwrite it: that raises
        (rename the column).
    probability, outcome, options, chosen : str or sequence of str
        Columns as described above; ``chosen`` or a ``probability`` column other than the
        default with ``options`` raises (they would go unused).
    timestamp : str or None
        Column of forecast times; when several forecasts exist for one
        (model, question), the latest is kept. The default column,
        ``'forecast_date'``, is used when present; with no timestamp column
        (or ``None``), duplicate (model, question) pairs raise. Date strings pandas
        would read two ways (dd/mm/yyyy read month first where it can be, day first
        where not; or mixed with ISO ones) raise: write ISO dates (YYYY-MM-DD).
    convention : {'ln', 'log2_loss'}
        Log score convention: ``'ln'`` is :math:`\\ln \\max(q, \\text{floor})`
        with :math:`q` the probability given to what happened (<= 0, higher is
        better); ``'log2_loss'`` is :math:`-\\log_2 \\max(q, \\text{floor})`
        (>= 0, lower is better).
    accuracy_convention : {'paper', 'code'}
        Accuracy of a binary forecast of exactly 0.5. ``'paper'`` (default,
        the WorldReasoner paper's :math:`1[p \\ge 0.5]`): it is a YES call,
        scoring 1 if YES happened and 0 otherwise. ``'code'``: it scores 1/2
        whatever happened. Forecasts 0.5 and 0.5 on a YES and a NO question
        give accuracy 0.5 under both, but 0.5 on one YES question gives 1.0
        (``'paper'``) against 0.5 (``'code'``). Multiclass and chosen forecasts
        are unaffected.
    floor : float
        Floor of :math:`q` before the log, in (0, 1); default 1e-10. A forecast of
        exactly 0 or 1 that misses scores :math:`\\ln` floor (-23.0 by default): where
        forecasts state certainty, the expected log score is set by such rare misses,
        and a sample without them gives an interval that misses it (coverage 0.56 at
        50 questions of heaped forecasts); report the Brier score there, or a floor
        such as 0.01.
    n_bins : int
        Equal-width bins on [0, 1] for the reliability table and ECE.
    cutoffs : mapping or str, optional
        Model name -> knowledge cutoff date, or the name of a column of
        per-row knowledge-cutoff dates (such as the forecast table's
        ``cutoff``; a missing value means an unknown cutoff, and the row is
        kept). When given, the scores are also computed after
        :func:`contamination_filter` and stored in ``filtered``.
    opened : str
        Column of question opening dates (used only with ``cutoffs``).
    cluster : str, optional
        Column grouping related questions (a question set, a topic, questions that
        resolve on one event or date), one value per question: the unit the intervals
        resample and :meth:`~ForecastScoresResult.compare` flips. Default: each
        question is its own; questions whose outcomes or forecasts' errors move
        together need it, or the intervals are too short and the comparison too
        liberal.
    n_resamples : int
        Cluster-bootstrap resamples over questions (or ``cluster`` values).
    confidence_level : float
        Level of every interval.
    rng : int, numpy.random.Generator or None
        Randomness of the bootstrap.

    Returns
    -------
    ForecastScoresResult
        ``statistic`` the pooled Brier score with its cluster bootstrap-t interval
        over questions (``pvalue`` NaN); per-model scores in ``table``, calibration in
        ``calibration`` and ``reliability_table``, per-forecast scores in
        ``per_forecast``, and the filtered scores in ``filtered`` with ``cutoffs``.

    Warns
    -----
    SmallSampleWarning
        When a Brier or log-score interval is the point itself: one question (or
        ``cluster`` value), or scores that do not vary across them, so the sample
        shows no uncertainty (a forecaster stating 0 and 1 and always right, say).
        Also when a row rests on fewer than 6 questions (clusters), where the
        intervals cover less than their level (0.79-0.83 at 3 questions, 0.91 at 5).

    See Also
    --------
    question_scores : scores of a table that mixes question types.
    forecastbench_scores : the ForecastBench leaderboard scores.
    calibration_error : the debiased calibration error.
    brier_decomposition : the Brier score split into incoherence, calibration, resolution.
    plot_reliability : the reliability diagram of this result.

    Notes
    -----
    Let :math:`q_i` be the probability forecast :math:`i` gave to what
    happened. The Brier convention follows the input format and is recorded
    in ``brier_convention``:

    * binary: :math:`(p_i - y_i)^2`, :math:`p_i` = P(YES), in [0, 1];
    * multiclass: :math:`\\sum_j (p_{ij} - 1[j = o_i])^2` (Brier 1950), in [0, 2];
    * chosen: :math:`(1 - c_i)^2` if the chosen option was right, :math:`c_i^2`
      otherwise, in [0, 1]; the log score is that of the same one-vs-rest event
      (:math:`q_i = c_i` if right, :math:`1 - c_i` if wrong).

    Accuracy is 1 when the forecast's most likely answer happened. A binary
    forecast of exactly 0.5 is a YES call under ``accuracy_convention='paper'``
    (:math:`1[p \\ge 0.5]`) and scores :math:`1/2` under ``'code'``; a
    multiclass tie among :math:`m` top options including the outcome scores
    :math:`1/m`.

    Calibration uses (confidence, correct) pairs: (P(YES), outcome) for binary
    forecasts, (top probability, top option right) for multiclass (a tie of :math:`m`
    top options including the outcome counts :math:`1/m`, the chance that one picked
    at random is right), (c, right) for chosen. With bins :math:`B_k` of :math:`n_k`
    forecasts, mean forecast :math:`\\bar p_k` and observed frequency :math:`\\bar o_k`,
    :math:`\\mathrm{ECE} = \\sum_k \\frac{n_k}{N} |\\bar p_k - \\bar o_k|` and the
    Murphy (1973) decomposition
    :math:`\\mathrm{BS} = \\mathrm{REL} - \\mathrm{RES} + \\mathrm{UNC}`, with
    :math:`\\mathrm{REL} = \\sum_k \\frac{n_k}{N}(\\bar p_k - \\bar o_k)^2`,
    :math:`\\mathrm{RES} = \\sum_k \\frac{n_k}{N}(\\bar o_k - \\bar o)^2`,
    :math:`\\mathrm{UNC} = \\bar o(1 - \\bar o)`. The identity is exact when
    forecasts are constant within bins; otherwise the remainder (the
    within-bin terms of Stephenson et al. 2008) is reported as ``within_bin``.

    The Brier and log scores' intervals are bootstrap-t intervals of a cluster
    bootstrap over questions (or the clusters of ``cluster``): all forecasts of a
    question move together, so the pooled interval accounts for models answering the
    same questions. With cluster
    *c* holding :math:`m_c` forecasts of score sum :math:`S_c`, a mean
    :math:`\\bar s = \\sum_c S_c / N` has the cluster-robust standard error
    :math:`se^2 = \\frac{C}{C-1}\\sum_c (S_c - m_c \\bar s)^2 / N^2`, and the interval is
    :math:`[\\bar s - t^*_{1-\\alpha/2}\\, se,\\ \\bar s - t^*_{\\alpha/2}\\, se]` with
    :math:`t^*` the quantiles of :math:`(\\bar s^* - \\bar s) / se^*` over the
    resamples: the skewness of a score's mean (a Brier score near 0, rare outcomes)
    is in the pivot, where a percentile interval would put it on the wrong side
    (``benchmarks/validate_forecast_scores.py``). The log score's mean is set in part by
    rare large losses that a small sample often lacks, and then neither its :math:`se`
    nor its bootstrap shows them: its :math:`t^*` quantiles are widened by Student's
    factor :math:`\\sqrt{C/(C-1)}\\, t_{\\nu,1-\\alpha/2} / z_{1-\\alpha/2}` (Hesterberg
    2015), :math:`\\nu` Satterthwaite's (1946) degrees of freedom of the clusters'
    residuals :math:`S_c - m_c \\bar s` (fewer the heavier their tails), which lifts its
    coverage from 0.92 to 0.94 at 30 questions. The interval is intersected with
    the score's range ([0, 1]; [0, 2] for a multiclass Brier score; [ln floor, 0] or
    [0, -log2 floor] for the log score), where the population's mean lies; a score
    that does not vary gets the point itself. Accuracy, a proportion that is often near
    1, gets Wilson's score interval at the effective sample size
    :math:`\\bar a(1 - \\bar a) / se^2` (at most the number of forecasts; the number of
    clusters where :math:`\\bar a` is 0 or 1), which the bootstrap cannot give past
    the sample's own misses (coverage 0.836 with rare outcomes).

    References
    ----------
    .. [1] G. W. Brier (1950). Verification of forecasts expressed in terms of
       probability. Monthly Weather Review 78(1).
    .. [2] A. H. Murphy (1973). A new vector partition of the probability score.
       Journal of Applied Meteorology 12(4).
    .. [3] D. B. Stephenson, C. A. S. Coelho, I. T. Jolliffe (2008). Two extra
       components in the Brier score decomposition. Weather and Forecasting 23.
    .. [4] T. Gneiting, A. E. Raftery (2007). Strictly proper scoring rules,
       prediction, and estimation. JASA 102(477).
    .. [5] F. E. Satterthwaite (1946). An approximate distribution of estimates of
       variance components. Biometrics Bulletin 2(6); T. C. Hesterberg (2015). What
       teachers should know about the bootstrap. The American Statistician 69(4).

    Examples
    --------
    >>> import coherence
    >>> table = {"model": ["a"] * 6 + ["b"] * 6,  # 6 questions (fewer: warned of)
    ...          "question": [f"q{i}" for i in range(6)] * 2,
    ...          "probability": [0.9, 0.2] * 3 + [0.6, 0.5] * 3, "outcome": [1, 0] * 6}
    >>> res = coherence.forecast_scores(table, n_bins=5, rng=0)
    >>> round(res.statistic, 4)   # pooled Brier: (0.01 + 0.04 + 0.16 + 0.25) / 4
    0.115
    >>> res.table.set_index("model").loc["a", "brier"].round(4)
    np.float64(0.025)
    """
    df = as_dataframe(forecasts, name="forecasts", owner=_OWNER)
    convention = check_choice(convention, "convention", _OWNER, LOG_CONVENTIONS)
    accuracy_convention = check_choice(accuracy_convention, "accuracy_convention", _OWNER,
                                       ("paper", "code"))
    floor = check_float(floor, "floor", _OWNER, low=0.0, high=1.0, low_open=True,
                        high_open=True)
    n_bins = check_int(n_bins, "n_bins", _OWNER, low=1)
    n_resamples, confidence_level = check_resampling(_OWNER, n_resamples, confidence_level)
    if options is not None:
        if isinstance(options, str) or len(options) < 2:
            raise ValueError(param_error("options", _OWNER,
                                         "a sequence of at least 2 column names", options))
        # the other formats' columns would go unused (the default 'probability' aside)
        for name, value in (("chosen", chosen), ("probability", probability)):
            if value is not None and not (name == "probability" and value == "probability"):
                raise ValueError(param_error(name, _OWNER, "None when 'options' is given",
                                             value))
        options = list(options)
    elif probability is None:
        raise ValueError(param_error("probability", _OWNER,
                                     "a column name when 'options' is not given", probability))
    if timestamp == "forecast_date" and timestamp not in df.columns:
        timestamp = None
    gen = check_rng(rng, owner=_OWNER)
    reserved_by(by, _OWNER, RESERVED_COLUMNS)
    if cluster is not None:
        _check_clusters(df, question, cluster)
    gen_main, gen_filtered = spawn(gen, 2)
    result = _score(df, by=by, question=question, probability=probability, outcome=outcome,
                    options=options, chosen=chosen, timestamp=timestamp,
                    convention=convention, accuracy_convention=accuracy_convention,
                    floor=floor, n_bins=n_bins, n_resamples=n_resamples,
                    confidence_level=confidence_level, rng=gen_main, cluster=cluster)
    if cutoffs is None:
        return result
    from ._temporal import contamination_filter

    report = contamination_filter(df, cutoffs, model=by, question=question, opened=opened)
    if len(report.kept) == 0:
        # said, not left for the reader to notice a missing table: the summary and
        # scores_frame() would read as if no filter had been asked for
        warnings.warn(f"{_OWNER}: the contamination filter dropped every forecast (each "
                      "question opened before its model's cutoff); 'filtered' is None and "
                      "no filtered scores exist.", DegenerateDataWarning, stacklevel=2)
        filtered = None
    else:
        filtered = _score(report.kept, by=by, question=question, probability=probability,
                          outcome=outcome, options=options, chosen=chosen,
                          timestamp=timestamp, convention=convention,
                          accuracy_convention=accuracy_convention, floor=floor,
                          n_bins=n_bins, n_resamples=n_resamples,
                          confidence_level=confidence_level, rng=gen_filtered,
                          cluster=cluster)
    return replace(result, filtered=filtered, contamination=report)


def _check_clusters(df: pd.DataFrame, question: str, cluster: str) -> None:
    """``cluster`` is a column without missing values that holds one value per question."""
    require_columns(df, {"question": question, "cluster": cluster}, owner=_OWNER)
    no_missing(df, (cluster,), owner=_OWNER)
    check_ids([("forecasts", df)], cluster, owner=_OWNER)  # 'T1' and 't1': one cluster
    bad = np.flatnonzero(df.groupby(question, sort=False)[cluster].transform("nunique") > 1)
    if len(bad):
        raise ValueError(column_error(
            cluster, f"hold one value per question of '{question}' (a question lies in one "
            "cluster)", list(df.index[bad]), list(df[cluster].iloc[bad]), owner=_OWNER))


def _score(df: pd.DataFrame, *, by: str, question: str, probability: str | None,
           outcome: str, options: list[str] | None, chosen: str | None,
           timestamp: str | None, convention: str, floor: float, n_bins: int,
           n_resamples: int, confidence_level: float,
           rng: np.random.Generator,
           accuracy_convention: str = "paper",
           cluster: str | None = None) -> ForecastScoresResult:
    prep = _prepare(df, by=by, question=question, probability=probability, outcome=outcome,
                    options=options, chosen=chosen, timestamp=timestamp,
                    accuracy_convention=accuracy_convention)
    log = _log_score(prep.p_outcome, convention, floor)
    frame = prep.frame
    per = pd.DataFrame({
        by: frame[by].to_numpy(dtype=object),
        "question": frame[question].to_numpy(dtype=object),
        "p_outcome": prep.p_outcome,
        "confidence": prep.confidence,
        # agrees with accuracy: NaN where the credit is split (no single answer was given)
        "correct": np.where(prep.accuracy == 1.0, 1.0,
                            np.where(prep.accuracy == 0.0, 0.0, np.nan)),
        "accuracy": prep.accuracy,
        "brier": prep.brier,
        "log_score": log,
    }, index=frame.index)
    if cluster is not None:
        per["cluster"] = frame[cluster].to_numpy(dtype=object)
    values = np.column_stack([prep.accuracy, prep.brier, log])
    qcodes = per["question" if cluster is None else "cluster"].to_numpy(dtype=object)
    models = list(pd.unique(per[by]))
    groups: list[tuple[Any, np.ndarray]] = [(m, (per[by] == m).to_numpy()) for m in models]
    groups.append((POOLED, np.ones(len(per), dtype=bool)))
    # each model's bootstrap stream by its rank in sorted order (the pooled row's last),
    # so that an interval does not depend on which model comes first in the rows
    streams = streams_by_label(rng, models)
    score_rows: list[dict[str, Any]] = []
    cal_rows: list[dict[str, Any]] = []
    rel_frames: list[pd.DataFrame] = []
    collapsed: list[str] = []
    units: dict[str, int] = {}  # questions (or clusters) of each row
    ranges = _score_ranges(prep.kind, convention, floor)
    for (name, mask), g in zip(groups, streams, strict=True):
        if name == POOLED and len(models) == 1:
            # one model: the pooled forecasts are its own, so its row (not a second bootstrap)
            score_rows.append({**score_rows[0], by: POOLED})
            cal_rows.append({**cal_rows[0], by: POOLED})
            rel_frames.append(rel_frames[0].assign(**{by: POOLED}))
            collapsed += [f"{POOLED} {c.rsplit(' ', 1)[1]}" for c in collapsed]
            continue
        vals = values[mask]
        q = sorted_codes(qcodes[mask])
        mean, se, reps, reps_se = cluster_mean_pivots(vals, q, n_resamples, g)
        row: dict[str, Any] = {by: name, "n_forecasts": int(mask.sum()),
                               "n_questions": int(pd.unique(per["question"][mask]).size)}
        for j, metric in enumerate(_METRICS):
            row[metric] = est = float(vals[:, j].mean())  # a point interval is this number
            if metric == "accuracy":
                lo, hi = wilson_interval(est, float(se[j]), int(mask.sum()),
                                         int(q.max()) + 1, confidence_level)
            elif metric == "brier":
                lo, hi = mean_interval(est, float(se[j]), reps[:, j],
                                       reps_se[:, j], confidence_level, ranges[metric])
            else:  # heavy-tailed: Student's factor on the pivot (Notes)
                residuals = np.bincount(q, weights=vals[:, j]) - np.bincount(q) * mean[j]
                lo, hi = heavy_tailed_mean_interval(est, float(se[j]), reps[:, j],
                                                    reps_se[:, j], residuals,
                                                    confidence_level, ranges[metric])
            if metric != "accuracy" and not se[j] > 0:  # 0 or undefined (one cluster)
                collapsed.append(f"{name} {metric}")
            row[f"{metric}_ci_low"] = lo
            row[f"{metric}_ci_high"] = hi
        score_rows.append(row)
        units[str(name)] = int(q.max()) + 1
        conf = prep.confidence[mask]
        corr = prep.correct[mask].astype(np.float64)
        cal_rows.append({by: name, "n_forecasts": int(mask.sum()),
                         **murphy(conf, corr, n_bins)})
        rel_frames.append(_reliability_table(conf, corr, n_bins).assign(**{by: name}))
    warn_intervals(collapsed, units, cluster)
    scores = pd.DataFrame(score_rows)
    rel = pd.concat(rel_frames, ignore_index=True)
    rel = rel[[by, *[c for c in rel.columns if c != by]]]
    pooled = scores.iloc[-1]
    return ForecastScoresResult(
        statistic=float(pooled["brier"]), pvalue=np.nan,
        confidence_interval=ConfidenceInterval(float(pooled["brier_ci_low"]),
                                               float(pooled["brier_ci_high"]), confidence_level),
        n_obs=len(per), method="cluster bootstrap-t over "
        + ("questions" if cluster is None else f"'{cluster}' clusters"),
        by=by, kind=prep.kind, brier_convention=_BRIER_CONVENTIONS[prep.kind],
        log_convention=convention, accuracy_convention=accuracy_convention, floor=floor,
        n_bins=n_bins, cluster=cluster, n_resamples=n_resamples,
        n_dropped_stale=prep.n_dropped_stale, table=scores, calibration=pd.DataFrame(cal_rows),
        reliability_table=rel, per_forecast=per)
