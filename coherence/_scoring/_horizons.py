"""The time axis of the benchmark: simulated dates, horizon positions, accuracy by
horizon and accuracy rolling over question start time.

A question's forecast window runs from its start :math:`s` to its resolution
:math:`r`. A simulated date at fraction :math:`f` of the window is
:math:`s + f (r - s)`; the benchmark's default is the midpoint, :math:`f = 1/2`.
Horizon positions: Early :math:`f \\in [0, 1/3)`, Mid :math:`[1/3, 2/3)`, Late
:math:`[2/3, 0.95]`, near-resolution one day before :math:`r`, and real time
(a live forecast, no simulated date).
"""

from __future__ import annotations

import numbers
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any

import numpy as np
import pandas as pd

from .._docstrings import fill_doc
from .._parameters import check_choice
from .._parameters import check_int
from .._parameters import check_resampling
from .._resampling import MEAN_KINDS
from .._resampling import cluster_mean_interval
from .._resampling import sorted_codes
from .._results import CoherenceResult
from .._results import ConfidenceInterval
from .._rng import RNGLike
from .._rng import check_rng
from .._rng import spawn
from .._validation import as_dataframe
from .._validation import check_case_distinct
from .._validation import column_error
from .._validation import no_missing
from .._validation import nonempty
from .._validation import numeric_column
from .._validation import param_error
from .._validation import require_columns
from .._validation import same_within
from ._dates import check_same_awareness
from ._dates import in_source_zone
from ._dates import ns_between
from ._dates import parse_dates
from ._dates import shifted
from ._ids import check_ids
from ._ids import label_rows
from ._ids import no_blank_ids
from ._ids import no_repeated_rows
from ._ids import not_pooled
from ._ids import reserved_by
from ._ids import rows_of_codes

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

__all__ = [
    "HORIZON_BANDS",
    "HORIZON_ORDER",
    "HorizonAccuracyResult",
    "accuracy_by_horizon",
    "horizon_positions",
    "plot_accuracy_by_horizon",
    "plot_rolling_accuracy",
    "rolling_accuracy",
    "simulated_dates",
]

#: Horizon bands as fractions of the forecast window: [low, high) (Late closed at 0.95).
HORIZON_BANDS: dict[str, tuple[float, float]] = {
    "early": (0.0, 1.0 / 3.0), "mid": (1.0 / 3.0, 2.0 / 3.0), "late": (2.0 / 3.0, 0.95)}
#: Display order of horizon labels.
HORIZON_ORDER = ("early", "mid", "late", "near_resolution", "real_time", "other")
_DAY = np.timedelta64(86_400_000_000_000, "ns")
_DAY_NS = 86_400e9
_POSITIONS = ("midpoint", "early", "mid", "late", "near_resolution")
#: the columns of accuracy_by_horizon's and rolling_accuracy's tables beside ``by``
_HORIZON_COLUMNS = ("horizon", "n", "n_questions", "accuracy", "ci_low", "ci_high")
_ROLLING_COLUMNS = ("start", "accuracy", "n")


def _window(df: pd.DataFrame, start: str, resolution_date: str,
            owner: str) -> tuple[np.ndarray, np.ndarray]:
    require_columns(df, {"start": start, "resolution_date": resolution_date}, owner=owner)
    s, ms = parse_dates(df[start], df.index, start, owner, require_tz=False)
    no_missing(df, start, owner=owner, missing=ms)
    r, mr = parse_dates(df[resolution_date], df.index, resolution_date, owner,
                        require_tz=False)
    no_missing(df, resolution_date, owner=owner, missing=mr)
    check_same_awareness(df[start], df[resolution_date],
                         what=f"'{start}' and '{resolution_date}'", owner=owner)
    bad = np.flatnonzero(~(r > s))
    if len(bad):
        raise ValueError(column_error(resolution_date, f"be after '{start}'",
                                      list(df.index[bad]), owner=owner))
    return s, r


def _point_in_window(s: np.ndarray, r: np.ndarray, span: np.ndarray,
                     frac: np.ndarray) -> np.ndarray:
    """The instants ``s + round(frac * span)`` (``span`` = ``r - s`` in ns). An offset
    beyond int64 (a window can span 2**64 ns, 584 years) is counted back from ``r``
    instead when it is the nearer end (the offset from that end is under 2**63)."""
    offset = np.round(frac * span)
    from_start = (offset < 2.0**62) | (offset <= span / 2)
    ahead = np.where(from_start, offset, 0.0).astype(np.int64).astype("timedelta64[ns]")
    back = np.where(from_start, 0.0, span - offset).astype(np.int64).astype("timedelta64[ns]")
    return np.where(from_start, s + ahead, r - back)


def simulated_dates(tasks: Any, *, positions: Sequence[str | float] = ("midpoint",),
                    placement: str = "center", question: str = "question",
                    start: str = "start", resolution_date: str = "resolution_date",
                    rng: RNGLike = None) -> pd.DataFrame:
    """Simulated dates of each question at the requested horizon positions.

    The benchmark asks each question as if on a date between its start and its
    resolution; this gives that date at each position asked for (the midpoint, a band
    such as early or late, one day before resolution, or a fraction of the window), for
    building the prompts of a horizon study.

    Parameters
    ----------
    tasks : pandas.DataFrame or convertible
        One row per question with ``question``, ``start`` and ``resolution_date``
        (a repeated question must repeat its dates; a question id written two ways,
        ``'Q1'`` and ``'q1'`` or ``1`` and ``'1'``, raises, and so does a blank one,
        ``''`` or spaces).
    positions : sequence of str or float
        ``'midpoint'`` (:math:`f = 1/2`, the benchmark's default),
        ``'early'``, ``'mid'``, ``'late'`` (a date inside the band, see
        ``placement``), ``'near_resolution'`` (one day before resolution), or a
        fraction :math:`f \\in [0, 1)`; each once.
    placement : {'center', 'uniform'}
        Where in a band the date falls: its centre (Early 1/6, Mid 1/2, Late
        0.8083; deterministic, the default) or uniformly at random (``rng``; one
        draw per distinct question and position, in sorted question order, so
        that the order of the rows does not change a question's date).
    question, start, resolution_date : str
        Column names.
    rng : int, numpy.random.Generator or None
        Randomness of ``placement='uniform'``.

    Returns
    -------
    pandas.DataFrame
        One row per row of ``tasks`` and position, positions in the order given
        (per (question, position) for one row per question; a repeated question
        gets its date on each of its rows: drop duplicates before a join):
        ``question``, ``position``, ``fraction`` (of the window) and
        ``simulated_date`` (exact, not rounded to a day; timezone-aware input comes
        back aware, in the zone of the start dates (UTC when they mix zones); naive input
        comes back naive).

    See Also
    --------
    horizon_positions : the horizon position of each forecast from its date.
    contamination_filter : drop questions opened before a model's cutoff.

    Examples
    --------
    >>> import coherence
    >>> tasks = {"question": ["q"], "start": ["2024-01-01"], "resolution_date": ["2024-01-31"]}
    >>> out = coherence.simulated_dates(tasks, positions=["midpoint", "near_resolution"])
    >>> [str(d.date()) for d in out["simulated_date"]]
    ['2024-01-16', '2024-01-30']
    """
    owner = "simulated_dates"
    df = as_dataframe(tasks, name="tasks", owner=owner)
    placement = check_choice(placement, "placement", owner, ("center", "uniform"))
    if isinstance(positions, str) or len(positions) == 0:
        raise ValueError(param_error("positions", owner, "a non-empty sequence of positions",
                                     positions))
    for p in positions:
        if isinstance(p, str):
            check_choice(p, "positions", owner, _POSITIONS)
        elif isinstance(p, bool) or not isinstance(p, int | float) or not 0.0 <= p < 1.0:
            raise ValueError(param_error("positions", owner, "names of positions or "
                                         "fractions in [0, 1)", p))
    labels = [str(p) for p in positions]
    repeated = sorted({x for x in labels if labels.count(x) > 1})
    if repeated:  # with placement='uniform' each copy drew its own date for a question
        raise ValueError(param_error(
            "positions", owner, f"a sequence naming each position once (repeated: "
            f"{', '.join(repeated)})", list(positions)))
    require_columns(df, {"question": question}, owner=owner)
    no_missing(df, question, owner=owner)
    no_blank_ids(df, [question], owner)  # '' or spaces: a lost id, not a question
    s, r = _window(df, start, resolution_date, owner)
    # 'Q1' and 'q1', 1 and '1': one question with two dates; a question's rows (where
    # repeated) give it one window, else which row's dates a join would meet is an accident
    check_ids([("tasks", df)], question, owner=owner)
    same_within(df, pd.DatetimeIndex(s), question, start, owner=owner)
    same_within(df, pd.DatetimeIndex(r), question, resolution_date, owner=owner)
    gen = check_rng(rng, owner=owner)
    # uniform placement draws one fraction per question, in sorted question order, so
    # that a question's date does not depend on the order of the rows for a given rng
    codes = sorted_codes(df[question].to_numpy(dtype=object))
    n_questions = int(codes.max()) + 1 if len(codes) else 0
    # in nanoseconds, without wrapping around over windows longer than 292 years
    span = ns_between(r, s)
    frames = []
    for p in positions:
        if p == "near_resolution":
            short = np.flatnonzero(span < _DAY_NS)
            if len(short):
                raise ValueError(column_error(
                    resolution_date, f"be at least one day after '{start}' for the "
                    "near-resolution position", list(df.index[short]), owner=owner))
            when = r - _DAY
            frac = ns_between(when, s) / span
        else:
            if isinstance(p, str) and p != "midpoint":
                lo, hi = HORIZON_BANDS[p]
                frac = (np.full(len(df), (lo + hi) / 2.0) if placement == "center"
                        else gen.uniform(lo, hi, size=n_questions)[codes])
            else:
                frac = np.full(len(df), 0.5 if p == "midpoint" else float(p))
            when = _point_in_window(s, r, span, frac)
        when_col = in_source_zone(when, df[start])  # aware ones in the starts' zone
        frames.append(pd.DataFrame({"question": df[question].to_numpy(dtype=object),
                                    "position": str(p), "fraction": frac,
                                    "simulated_date": when_col}))
    return pd.concat(frames, ignore_index=True)


def horizon_positions(forecasts: Any, *, start: str = "start",
                      resolution_date: str = "resolution_date",
                      simulated_date: str = "simulated_date",
                      real_time: str | None = None) -> pd.Series:
    """The horizon position of each forecast from its simulated date.

    Labels each forecast by how far through its question's window (start to resolution)
    its simulated date falls, in the benchmark's bands: early, mid, late or near
    resolution. The labels are what :func:`accuracy_by_horizon` groups by.

    Parameters
    ----------
    forecasts : pandas.DataFrame or convertible
        Rows with ``start``, ``resolution_date`` and ``simulated_date``.
    start, resolution_date, simulated_date : str
        Column names.
    real_time : str, optional
        A boolean column marking live (real-time) forecasts; their simulated
        date may be missing.

    Returns
    -------
    pandas.Series
        Labels aligned with the input's index: ``'near_resolution'`` when the
        simulated date is at most one day before resolution; otherwise, with
        :math:`f` the fraction of the window elapsed, ``'early'``
        (:math:`f < 1/3`), ``'mid'`` (:math:`f < 2/3`), ``'late'``
        (:math:`f \\le 0.95`), ``'other'`` (between 0.95 and one day before
        resolution, which no band covers); ``'real_time'`` where the
        ``real_time`` column is true.

    Raises
    ------
    ValueError
        A simulated date missing (on a row that is not real time), before the
        start, or on or after the resolution.

    See Also
    --------
    simulated_dates : the simulated dates at the horizon positions.
    accuracy_by_horizon : accuracy at each horizon position.

    Examples
    --------
    >>> import coherence
    >>> fc = {"start": ["2024-01-01"] * 3, "resolution_date": ["2024-01-31"] * 3,
    ...       "simulated_date": ["2024-01-05", "2024-01-26", "2024-01-30"]}
    >>> coherence.horizon_positions(fc).tolist()
    ['early', 'late', 'near_resolution']
    """
    owner = "horizon_positions"
    df = as_dataframe(forecasts, name="forecasts", owner=owner)
    s, r = _window(df, start, resolution_date, owner)
    require_columns(df, {"simulated_date": simulated_date, "real_time": real_time},
                    owner=owner)
    live = np.zeros(len(df), dtype=bool)
    if real_time is not None:
        no_missing(df, real_time, owner=owner)
        vals = df[real_time].to_numpy(dtype=object)
        bad = np.flatnonzero([not isinstance(v, bool | np.bool_) for v in vals])
        if len(bad):
            raise ValueError(column_error(real_time, "hold True/False", list(df.index[bad]),
                                          list(vals[bad]), owner=owner))
        live = vals.astype(bool)
    sim, miss = parse_dates(df[simulated_date], df.index, simulated_date, owner,
                            require_tz=False)
    no_missing(df, simulated_date, owner=owner, missing=miss & ~live)
    if (~miss).any():
        check_same_awareness(df[simulated_date], df[start],
                             what=f"'{simulated_date}' and '{start}'", owner=owner)
    check = ~live
    bad = np.flatnonzero(check & ((sim < s) | (sim >= r)))
    if len(bad):
        raise ValueError(column_error(simulated_date, f"lie in ['{start}', "
                                      f"'{resolution_date}')", list(df.index[bad]),
                                      list(df[simulated_date].to_numpy(dtype=object)[bad]),
                                      owner=owner))
    # in nanoseconds, without wrapping around over windows longer than 292 years (a
    # forecast early in 1678-2261 was 'near_resolution'); NaN where a live date is missing
    frac = ns_between(sim, s) / ns_between(r, s)
    labels = np.where(frac < 1 / 3, "early", np.where(frac < 2 / 3, "mid",
                      np.where(frac <= 0.95, "late", "other"))).astype(object)
    labels[ns_between(r, sim) <= _DAY_NS] = "near_resolution"
    labels[live] = "real_time"
    return pd.Series(labels, index=df.index, name="horizon")


# --------------------------------------------------------------------------- accuracy by horizon
@dataclass(frozen=True, slots=True)
class HorizonAccuracyResult(CoherenceResult, test_name="accuracy_by_horizon",
                            settings=("by", "n_resamples")):
    """Accuracy per horizon position (and model).

    ``statistic`` is the pooled accuracy over all rows and
    ``confidence_interval`` its Wilson interval at the effective sample size of the
    cluster-robust standard error over questions;
    ``pvalue`` is NaN.

    Attributes
    ----------
    by : str
        Column naming the forecaster.
    n_resamples : int
        Bootstrap resamples.
    table : pandas.DataFrame
        One row per (model, horizon), plus pooled ``'(all)'`` rows per
        horizon: ``n``, ``n_questions``, ``accuracy``, ``ci_low``, ``ci_high``;
        horizons in :data:`HORIZON_ORDER`.
    """

    by: str
    n_resamples: int
    table: pd.DataFrame


def accuracy_by_horizon(forecasts: Any, *, horizon: str = "horizon", by: str = "model",
                        question: str = "question", correct: str = "correct",
                        n_resamples: int = 2000, confidence_level: float = 0.95,
                        rng: RNGLike = None) -> HorizonAccuracyResult:
    """Accuracy at each horizon position, per model and pooled.

    Use it to see whether forecasts improve as the resolution nears, on the horizon
    labels of :func:`horizon_positions`. Forecasts of one question are correlated, so
    every interval takes the question as its unit (a cluster-robust standard error over
    questions; nothing is drawn).

    Parameters
    ----------
    forecasts : pandas.DataFrame or convertible
        One row per scored forecast: ``by``, ``question``, ``horizon`` (labels
        such as those of :func:`horizon_positions`) and ``correct`` in [0, 1] or
        bool (for instance ``question_scores(...).per_forecast`` joined with the
        horizon labels). The ``by`` value ``'(all)'`` is reserved for the pooled
        rows; a table without rows raises. Labels of ``horizon``, ``by`` and ``question``
        that differ only in case, surrounding spaces or type (``'Q1'`` and ``'q1'``,
        ``1`` and ``'1'``) raise rather than count as two, and a blank one (``''`` or
        spaces) raises rather than count as a label of its own. Several forecasts of one
        question in one horizon by one model are fine; a row equal to another in every
        column of the table (a file read or concatenated twice) raises.
    horizon, by, question, correct : str
        Column names; ``by`` may not be named like a column of the result's table
        (``'horizon'``, ``'n'``, ``'n_questions'``, ``'accuracy'``, ``'ci_low'``,
        ``'ci_high'``), which would overwrite it: that raises (rename the column).
    n_resamples, confidence_level, rng
        ``confidence_level`` is the intervals' level. The intervals are Wilson's at the
        effective sample size of the cluster-robust standard error over questions, per
        cell: for 0/1 ``correct`` (``kind='proportion'``), else on Student's t with
        Satterthwaite's degrees of freedom (``kind='fraction'``, as the recalls of
        :func:`key_event_recall`); neither draws, so ``n_resamples`` and ``rng`` change
        nothing (kept for the signature the scores share).

    Returns
    -------
    HorizonAccuracyResult
        ``statistic`` the pooled accuracy with its Wilson interval (the effective
        sample size of the cluster-robust standard error over questions; ``pvalue``
        NaN); one row per (model, horizon), plus the pooled
        ``'(all)'`` rows, in ``table``.

    Raises
    ------
    ValueError
        A missing or blank (``''`` or spaces) label in ``horizon``, ``by`` or
        ``question``, labels written two ways, the model ``'(all)'``, a ``correct``
        outside [0, 1], a table without rows, or a row equal to another in every column
        of the table: almost surely the file read or concatenated twice, whose copies
        would each count (rows told apart by any column, a date or a forecast id, are
        kept; drop the copies with ``forecasts.drop_duplicates()``).

    See Also
    --------
    horizon_positions : the horizon position of each forecast.
    plot_accuracy_by_horizon : plot this result.
    rolling_accuracy : accuracy rolling over question start time.
    question_scores : per-forecast scores to join with the horizon positions.

    Examples
    --------
    >>> import coherence
    >>> fc = {"model": ["m"] * 4, "question": ["a", "b", "a", "b"],
    ...       "horizon": ["early", "early", "late", "late"], "correct": [0, 1, 1, 1]}
    >>> res = coherence.accuracy_by_horizon(fc, rng=0)
    >>> res.table.query("model == 'm'")[["horizon", "accuracy"]].values.tolist()
    [['early', 0.5], ['late', 1.0]]
    """
    owner = "accuracy_by_horizon"
    df = as_dataframe(forecasts, name="forecasts", owner=owner)
    n_resamples, confidence_level = check_resampling(owner, n_resamples, confidence_level)
    require_columns(df, {"horizon": horizon, "by": by, "question": question,
                         "correct": correct}, owner=owner)
    nonempty(df, name="forecasts", owner=owner)
    reserved_by(by, owner, _HORIZON_COLUMNS)  # by='n': the counts overwrote the models
    no_missing(df, [horizon, by, question], owner=owner)
    no_blank_ids(df, [horizon, by, question], owner)  # '' or spaces: a lost label
    for col in (horizon, by, question):  # 'early' and 'Early ' are one label typed two ways
        check_case_distinct(df, col, owner=owner)
    not_pooled(df, by, owner)
    c = _correct_scores(df, correct, owner)
    gen = check_rng(rng, owner=owner)
    # 0/1 values: Wilson's interval of a proportion; fractions (a mean accuracy per row,
    # half credit): the fraction interval, which does not treat them as coin flips
    kind = "proportion" if bool(np.all((c == 0.0) | (c == 1.0))) else "fraction"
    from ._forecast import POOLED

    labels = df[horizon].to_numpy(dtype=object)
    known = [h for h in HORIZON_ORDER if h in set(labels)]
    order = known + [h for h in pd.unique(labels) if h not in known]
    seen = pd.unique(df[by])
    models = [*seen, POOLED]
    cells = [(m, h) for m in models for h in order]
    gens = spawn(gen, len(cells) + 1)
    # each cell's bootstrap stream is chosen by its rank among the cells with models and
    # labels of one's own in sorted order, so that it does not depend on the row order
    model_rank = [*sorted_codes(seen), len(seen)]
    extra = order[len(known):]
    label_rank = [*range(len(known)), *(len(known) + sorted_codes(extra))]
    streams = [gens[1 + model_rank[i] * len(order) + label_rank[j]]
               for i in range(len(models)) for j in range(len(order))]
    qs = df[question].to_numpy(dtype=object)
    # each cell's rows found in one sort, not a pass over every row per cell (quadratic
    # in the models): codes model * n_labels + label, the label's place in ``order``
    label_codes, label_seen = pd.factorize(labels)
    place = {h: j for j, h in enumerate(order)}
    label_codes = np.array([place[h] for h in label_seen], dtype=np.int64)[label_codes]
    model_codes = pd.factorize(df[by])[0]
    cell_rows = [*rows_of_codes(model_codes * len(order) + label_codes, len(seen) * len(order)),
                 *rows_of_codes(label_codes, len(order))]
    rows = []
    for (m, h), g, at in zip(cells, streams, cell_rows, strict=True):
        if not len(at):
            continue
        acc = float(c[at].mean())
        lo, hi = cluster_mean_interval(c[at], qs[at], n_resamples, confidence_level, g,
                                       kind=kind, estimate=acc)
        rows.append({by: m, "horizon": h, "n": len(at),
                     "n_questions": len(set(qs[at])), "accuracy": acc,
                     "ci_low": lo, "ci_high": hi})
    acc = float(c.mean())
    lo, hi = cluster_mean_interval(c, qs, n_resamples, confidence_level, gens[0],
                                   kind=kind, estimate=acc)
    return HorizonAccuracyResult(
        statistic=acc, pvalue=np.nan,
        confidence_interval=ConfidenceInterval(lo, hi, confidence_level), n_obs=len(c),
        method=f"{MEAN_KINDS[kind]} over questions", by=by,
        n_resamples=n_resamples, table=pd.DataFrame(rows, columns=[by, *_HORIZON_COLUMNS]))


@fill_doc
def plot_accuracy_by_horizon(result: HorizonAccuracyResult, *, pooled: bool = True,
                             ax: Axes | None = None) -> Axes:
    """Accuracy against horizon position, one line per model, with interval bars.

    Draws a result of :func:`accuracy_by_horizon`: accuracy at each horizon position,
    one line per model (and the pooled line unless ``pooled=False``), its intervals as
    error bars.

    Parameters
    ----------
    result : HorizonAccuracyResult
        From :func:`accuracy_by_horizon`.
    pooled : bool
        Also draw the pooled line (dashed).
    %(ax)s

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on (``ax``, or those of a new figure): one line of accuracy
        per model across the horizon positions.

    See Also
    --------
    accuracy_by_horizon : the result plotted.
    plot_rolling_accuracy : accuracy over question start time.
    """
    owner = "plot_accuracy_by_horizon"
    if not isinstance(result, HorizonAccuracyResult):
        raise TypeError(param_error("result", owner, "a HorizonAccuracyResult",
                                    type(result).__name__))
    import matplotlib.pyplot as plt

    from ._forecast import POOLED

    if ax is None:
        _, ax = plt.subplots(figsize=(6, 4))
    t = result.table
    order = list(pd.unique(t["horizon"]))
    x_of = {h: i for i, h in enumerate(order)}
    for m in pd.unique(t[result.by]):
        if m == POOLED and not pooled:
            continue
        sub = t.loc[t[result.by] == m]
        x = [x_of[h] for h in sub["horizon"]]
        y = sub["accuracy"].to_numpy(dtype=np.float64)
        err = np.vstack([y - sub["ci_low"].to_numpy(dtype=np.float64),
                         sub["ci_high"].to_numpy(dtype=np.float64) - y])
        ax.errorbar(x, y, yerr=np.nan_to_num(err), marker="o", capsize=3, label=str(m),
                    linestyle="--" if m == POOLED else "-")
    ax.set_xticks(range(len(order)))
    ax.set_xticklabels([h.replace("_", "-") for h in order])
    ax.set(ylim=(0, 1), xlabel="horizon position", ylabel="accuracy", title="Accuracy by horizon")
    ax.legend(loc="best")
    return ax


# --------------------------------------------------------------------------- rolling accuracy
def rolling_accuracy(forecasts: Any, *, start: str = "start", by: str = "model",
                     correct: str = "correct", window: str | int = "30D",
                     min_periods: int = 5) -> pd.DataFrame:
    """Accuracy rolling over question start time, per model.

    Shows whether a model's accuracy changes with the time its questions opened, for
    instance past its training cutoff: the mean correctness over a moving window of
    start times (a time span or a number of forecasts), per model.

    Parameters
    ----------
    forecasts : pandas.DataFrame or convertible
        One row per scored forecast with ``by``, ``start`` (the question's
        start date) and ``correct`` in [0, 1] or bool. Ids of ``by`` that differ only
        in case, surrounding spaces or type (``'GPT'`` and ``'gpt'``, ``1`` and ``'1'``)
        raise rather than count as two models, and a blank one (``''`` or spaces) raises
        rather than count as a model. A row equal to another in every column of the
        table (a file read or concatenated twice) raises; forecasts alike in ``by``,
        ``start`` and ``correct`` but told apart by another column are kept.
    start, by, correct : str
        Column names; ``by`` may not be ``'start'``, ``'accuracy'`` or ``'n'``, the
        result's own columns, which would overwrite it (that raises).
    window : str or int
        A trailing time window (a fixed-length pandas offset such as ``'30D'``,
        the default, or ``'12h'``; months, weeks and business days vary in length
        and raise) or a number of forecasts. A time window is measured between
        instants, as pandas measures ``'1D'``, not in calendar days: across a
        daylight-saving change aware starts keep their true spacing, so New York 12:00
        on 9 and 10 March 2024 are 23 hours apart and ``window='1D'`` takes both (n 2,
        accuracy 0.5 for correct 1 then 0), the naive spelling one (n 1, 0.0).
    min_periods : int
        Fewest forecasts in a window for a value (otherwise NaN).

    Returns
    -------
    pandas.DataFrame
        ``by``, ``start`` (timezone-aware, in the zone given, when the start dates are aware),
        ``accuracy`` (mean of ``correct`` over the window
        ending at that forecast's start, ties in start time included) and
        ``n`` (forecasts in the window): the models in the order they first appear in
        ``forecasts`` (not sorted by id), each model's rows sorted by start. With a count
        window, forecasts with one start time are ordered by ``correct`` and every one
        of them gets the value of the window ending at the last of them.

    Raises
    ------
    ValueError
        A missing or blank (``''`` or spaces) ``by`` label, ids written two ways, a
        start date missing or not parsing, a ``correct`` outside [0, 1], a ``window`` or
        ``min_periods`` out of range, or a row equal to another in every column of the
        table: almost surely the file read or concatenated twice, whose copies would each
        count (rows told apart by any column, a forecast id, are kept; drop the copies
        with ``forecasts.drop_duplicates()``).

    See Also
    --------
    plot_rolling_accuracy : plot this table.
    accuracy_by_horizon : accuracy at each horizon position.
    contamination_filter : drop questions opened before a model's cutoff.

    Examples
    --------
    >>> import coherence
    >>> fc = {"model": ["m"] * 3, "start": ["2024-01-01", "2024-01-10", "2024-03-01"],
    ...       "correct": [1, 0, 1]}
    >>> coherence.rolling_accuracy(fc, min_periods=1)["accuracy"].tolist()
    [1.0, 0.5, 1.0]
    """
    owner = "rolling_accuracy"
    df = as_dataframe(forecasts, name="forecasts", owner=owner)
    require_columns(df, {"start": start, "by": by, "correct": correct}, owner=owner)
    reserved_by(by, owner, _ROLLING_COLUMNS)  # by='n': the counts overwrote the models
    no_missing(df, by, owner=owner)
    no_blank_ids(df, [by], owner)  # '' or spaces: a lost label, not a model
    check_case_distinct(df, by, owner=owner)  # 'GPT' / 'gpt', 1 / '1': one model, not two
    min_periods = check_int(min_periods, "min_periods", owner, low=1)
    if isinstance(window, bool | np.bool_) or not isinstance(window, str | numbers.Integral):
        raise TypeError(param_error("window", owner, "a pandas offset string or an int",
                                    window))
    # a window read from a numpy array: pandas' offset parser takes no np.str_
    window = str(window) if isinstance(window, str) else int(window)
    if isinstance(window, int):
        window = check_int(window, "window", owner, low=1)
        if min_periods > window:
            raise ValueError(param_error("min_periods", owner,
                                         f"an int <= window ({window}) with a count window",
                                         min_periods))
    else:
        rule = ("a fixed-length pandas offset string such as '30D' or '12h' (a month, week "
                "or business day varies in length), or an int")
        try:
            nanos = pd.tseries.frequencies.to_offset(window).nanos
        except ValueError as exc:  # unknown, or non-fixed ('1ME': "a non-fixed frequency")
            raise ValueError(param_error("window", owner, rule, window)) from exc
        if nanos <= 0:
            raise ValueError(param_error("window", owner, rule, window))
        window_nanos = int(nanos)
    when, miss = parse_dates(df[start], df.index, start, owner, require_tz=False)
    no_missing(df, start, owner=owner, missing=miss)
    c = _correct_scores(df, correct, owner)
    frames = []
    for m, at in zip(pd.unique(df[by]), label_rows(df[by]), strict=True):
        # tied start times in a canonical order (by correct), so that a count window does
        # not depend on the order of the rows
        order = np.lexsort((c[at], when[at]))
        s = pd.Series(c[at][order], index=pd.DatetimeIndex(when[at][order]))
        centuries = len(s) > 0 and ns_between(s.index[-1:], s.index[:1])[0] >= 2.0**62
        if isinstance(window, str) and centuries:
            # pandas' time windows subtract nanosecond times, which wrap around over 292
            # years (a 30-day window in 2262 held forecasts of 1677): the windows counted
            acc, n = _time_windows(s, window_nanos, min_periods)
        else:
            acc = s.rolling(window, min_periods=min_periods).mean()
            n = s.rolling(window, min_periods=0).count()
            # ties in time: every tied row sees the window ending at the last row of its tie
            acc = acc.groupby(level=0).transform("last")
            n = n.groupby(level=0).transform("last")
        frames.append(pd.DataFrame({by: m, "start": s.index, "accuracy": acc.to_numpy(),
                                    "n": n.to_numpy().astype(np.int64)}))
    cols = [by, *_ROLLING_COLUMNS]
    out = (pd.concat(frames, ignore_index=True) if frames
           else pd.DataFrame(columns=cols))[cols]
    if frames:  # compared in UTC; aware dates shown in their zone, not dropped nor moved
        out["start"] = in_source_zone(out["start"], df[start])
    return out


def _time_windows(s: pd.Series, nanos: int, min_periods: int) -> tuple[pd.Series, pd.Series]:
    """pandas' rolling mean and count of ``s`` (sorted by its time index) over the time
    window ``(t - nanos, t]`` ending at each row's time, ties included (the window of the
    last row of the tie), counted without subtracting times that are centuries apart."""
    t = s.index.to_numpy(dtype="datetime64[ns]")
    values = s.to_numpy(dtype=np.float64)
    hi = np.searchsorted(t, t, side="right")
    lo = np.array([np.searchsorted(t, shifted(x, -nanos), side="right") for x in t],
                  dtype=np.int64)
    n = hi - lo
    acc = np.array([values[a:b].mean() if b - a >= min_periods else np.nan
                    for a, b in zip(lo, hi, strict=True)])
    return pd.Series(acc, index=s.index), pd.Series(n, index=s.index)


@fill_doc
def plot_rolling_accuracy(rolling: pd.DataFrame, *, cutoffs: Mapping[str, Any] | None = None,
                          by: str = "model", ax: Axes | None = None) -> Axes:
    """Rolling accuracy against question start time, model cutoffs marked.

    Draws a table of :func:`rolling_accuracy`, one line per model; with ``cutoffs``,
    each model's training cutoff marked, where a drop in accuracy would show memory
    rather than skill.

    Parameters
    ----------
    rolling : pandas.DataFrame
        From :func:`rolling_accuracy`.
    cutoffs : mapping, optional
        Model name (or prefix, matched as in :func:`match_cutoff`) -> knowledge
        cutoff date; each matched model gets a dotted vertical line in its colour, at
        the instant :func:`contamination_filter` applies (a month- or year-only cutoff,
        ``'2023-10'``, at the end of that period).
    by : str
        The model column of ``rolling``.
    %(ax)s

    Returns
    -------
    matplotlib.axes.Axes
        The axes drawn on (``ax``, or those of a new figure): one line of rolling
        accuracy per model.

    See Also
    --------
    rolling_accuracy : the table plotted.
    plot_accuracy_by_horizon : accuracy against horizon position.
    """
    owner = "plot_rolling_accuracy"
    if not isinstance(rolling, pd.DataFrame) or not {by, "start", "accuracy"} <= set(
            rolling.columns):
        raise TypeError(param_error("rolling", owner, "the DataFrame from rolling_accuracy",
                                    type(rolling).__name__))
    if cutoffs is not None and not isinstance(cutoffs, Mapping):
        raise TypeError(param_error("cutoffs", owner, "a mapping of model name to date",
                                    type(cutoffs).__name__))
    import matplotlib.pyplot as plt

    from ._dates import cutoff_timestamp
    from ._temporal import match_cutoff

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.5))
    start = rolling["start"]
    if isinstance(start.dtype, pd.DatetimeTZDtype):  # drawn in UTC, as the cutoffs are
        start = start.dt.tz_convert("UTC").dt.tz_localize(None)
    for i, m in enumerate(pd.unique(rolling[by])):
        rows = (rolling[by] == m).to_numpy()
        color = f"C{i % 10}"
        ax.plot(start[rows], rolling["accuracy"][rows], color=color, label=str(m))
        key = match_cutoff(str(m), cutoffs) if cutoffs else None
        if key is not None:
            cut = cutoff_timestamp(cutoffs[key])  # type: ignore[index]
            if cut.tzinfo is not None:
                cut = cut.tz_convert("UTC").tz_localize(None)
            ax.axvline(cut, color=color, linestyle=":", linewidth=1.2,
                       label=f"{m} cutoff")
    ax.set(ylim=(0, 1), xlabel="question start", ylabel="rolling accuracy",
           title="Accuracy over question start time")
    ax.legend(loc="best")
    return ax


def _correct_scores(df: pd.DataFrame, correct: str, owner: str) -> np.ndarray:
    """The ``correct`` column as numbers in [0, 1] (bools read as 0/1), once the table is
    known to hold no row twice: a row equal to another in every column is a file read
    twice, and each copy would count."""
    c = numeric_column(df, correct, owner=owner, bools=True)
    bad = np.flatnonzero((c < 0) | (c > 1))
    if len(bad):
        raise ValueError(column_error(correct, "hold values in [0, 1]", list(df.index[bad]),
                                      list(c[bad]), owner=owner))
    no_repeated_rows(df, name="forecasts", owner=owner)
    return c
