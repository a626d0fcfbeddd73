"""Forecasting at a simulated date: the contamination filter and the temporal gateway.

:func:`contamination_filter` drops (model, question) pairs whose question opened
before the model's knowledge cutoff (the model may have seen the answer in
training). :class:`TemporalGateway` hides every evidence record dated on or after
the simulated date and checks a forecast's citations against it.
"""

from __future__ import annotations

from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import numpy as np
import pandas as pd

from .._validation import as_dataframe
from .._validation import column_error
from .._validation import no_missing
from .._validation import param_error
from .._validation import require_columns
from .._validation import same_within
from ._dates import aware_cutoff
from ._dates import check_formats_across
from ._dates import check_same_awareness
from ._dates import cutoff_timestamp
from ._dates import in_source_zone
from ._dates import parse_cutoffs
from ._dates import parse_dates

__all__ = [
    "ContaminationFilterResult",
    "GatewayPartition",
    "GatewayReport",
    "TemporalGateway",
    "contamination_filter",
    "match_cutoff",
]


# --------------------------------------------------------------------------- contamination
#: the characters that end a part of a model's name (a version, a date, a size)
_SEPARATORS = frozenset("-_:@ ")


def _norm_name(name: str) -> str:
    return str(name).strip().rstrip("/").rsplit("/", 1)[-1].lower()


def match_cutoff(model: str, cutoffs: Mapping[str, Any]) -> str | None:
    """The key of ``cutoffs`` that applies to ``model``, or None.

    The exact name wins; otherwise the longest key that is a prefix of the
    model's name, compared case-insensitively on the last path segment of both
    (``'openai/GPT-4o-mini-2024-07-18'`` matches ``'gpt-4o-mini'`` before
    ``'gpt-4o'``), where the name goes on after the key with a separator (``-``,
    ``_``, ``:``, ``@`` or a space) or the key ends in one: ``'gpt-4'`` is not
    ``'gpt-4o'``'s key, nor ``'llama-3'`` that of ``'llama-3.1-70b'``. Two keys that
    match equally well (``'openai/gpt-4o'`` and ``'gpt-4o'``) with different dates are an
    error, never a silent choice.

    Examples
    --------
    >>> from coherence._scoring._temporal import match_cutoff
    >>> match_cutoff("openai/gpt-4o-mini-2024-07-18", {"gpt-4o": 1, "gpt-4o-mini": 2})
    'gpt-4o-mini'
    """
    if model in cutoffs:
        return model
    name = _norm_name(model)
    matching: list[tuple[int, str]] = []
    for key in cutoffs:
        k = _norm_name(key)
        # a key ends where a name part does: 'gpt-4' is no prefix of the model 'gpt-4o'
        if (k and name.startswith(k)
                and (len(name) == len(k) or k[-1] in _SEPARATORS
                     or name[len(k)] in _SEPARATORS)):
            matching.append((len(k), key))
    if not matching:
        return None
    # only the longest keys compete: a tie among shorter ones ('openai/gpt-4o' and
    # 'gpt-4o' for 'gpt-4o-mini-x' beside 'gpt-4o-mini') decides nothing
    best_len = max(n for n, _ in matching)
    longest = [key for n, key in matching if n == best_len]
    best = longest[0]
    for key in longest[1:]:
        if not _same_cutoff(cutoffs[key], cutoffs[best]):
            raise ValueError(f"The cutoffs {best!r} and {key!r} match model {model!r} "
                             f"equally well and differ ({cutoffs[best]!r} and "
                             f"{cutoffs[key]!r}); keep one of them or name the model "
                             "exactly.")
    return best


def _same_cutoff(a: Any, b: Any) -> bool:
    """Two cutoffs the same date (``'2024-01-01'`` and a Timestamp of it are; ``'2023-10'``
    and ``'2023-11-01'`` are, a month standing for its end, see :func:`parse_cutoffs`)."""
    try:
        return bool(cutoff_timestamp(a) == cutoff_timestamp(b))
    except (TypeError, ValueError):
        return bool(a == b)


@dataclass(frozen=True, slots=True)
class ContaminationFilterResult:
    """What :func:`contamination_filter` kept and dropped.

    Attributes
    ----------
    kept : pandas.DataFrame
        Rows whose question opened on or after the model's cutoff, plus every
        row of a model without a known cutoff.
    dropped : pandas.DataFrame
        Rows whose question opened before the model's cutoff.
    unknown_models : tuple of str
        Models with no matching cutoff (kept, unfiltered).
    matches : pandas.DataFrame
        One row per model: ``model``, the matched ``key``, its ``cutoff`` as given and
        the instant ``applied`` (the opening dates before it are dropped: the cutoff, or
        the end of the month or year a month- or year-only cutoff names; aware in the
        zone the cutoffs are given in, UTC when they are in several); all but
        ``model`` missing (``pd.isna``) when the model is unknown.
    """

    kept: pd.DataFrame = field(repr=False)
    dropped: pd.DataFrame = field(repr=False)
    unknown_models: tuple[str, ...]
    matches: pd.DataFrame = field(repr=False)

    @property
    def n_dropped(self) -> int:
        """Number of dropped rows."""
        return len(self.dropped)

    def _repr_html_(self) -> str:
        """Kept and dropped counts and the cutoff matched to each model (a notebook's view)."""
        from .._results import Summary

        text = (f"contamination filter: {len(self.kept)} rows kept, {self.n_dropped} dropped; "
                f"models without a cutoff: {', '.join(self.unknown_models) or 'none'}")
        return Summary(text, tables=[("cutoff matched to each model", self.matches)]
                       )._repr_html_()


def contamination_filter(forecasts: Any, cutoffs: Mapping[str, Any] | str, *,
                         model: str = "model", question: str = "question",
                         opened: str = "opened") -> ContaminationFilterResult:
    """Drop (model, question) pairs whose question opened before the model's cutoff.

    A model may remember the answer to a question that opened before its training data
    ended, so its score there measures memory rather than forecasting. This keeps the
    (model, question) pairs whose question opened on or after the model's cutoff and
    returns what it dropped, so scores can be compared before and after; a cutoff given
    as a month, a quarter or a year is read as that period's end (Notes).

    Parameters
    ----------
    forecasts : pandas.DataFrame or convertible
        The forecast table.
    cutoffs : mapping or str
        Either a mapping of model name (or name prefix) -> knowledge-cutoff
        date, matched as in :func:`match_cutoff`; or the name of a column of
        ``forecasts`` holding each row's knowledge-cutoff date (the forecast
        table's optional ``cutoff`` column). In a column, a missing cutoff
        means the model's cutoff is unknown: the row is kept and its model
        listed in ``unknown_models``. A cutoff written as a month or a year
        (``'2023-10'``, ``'Oct 2023'``, ``'2023'``, or a numpy ``datetime64`` of month,
        week or year precision) stands for the end of that period (see Notes).
    model, question, opened : str
        Columns of the model name, the question and the question's opening date
        (one date per question: rows of a question that differ raise). A blank model
        name (``''`` or spaces), which would match no cutoff and leave its rows
        unfiltered, raises, as does a blank key of a ``cutoffs`` mapping.

    Returns
    -------
    ContaminationFilterResult
        The rows kept (``kept``) and dropped (``dropped``), the models without a known
        cutoff (``unknown_models``, kept unfiltered) and the cutoff matched to each
        model (``matches``).

    See Also
    --------
    simulated_dates : simulated dates of each question at horizon positions.
    rolling_accuracy : accuracy over question start time, before and after the cutoffs.

    Notes
    -----
    A pair is dropped when ``opened < cutoff``: the question existed, and
    possibly its answer was discussed, before the model's training data ended.
    A question opened on the cutoff date is kept. A cutoff string that names a month,
    a quarter or a year rather than a day says only that the training data ended
    within it, so it is read as that period's end, the first instant after it:
    ``'2023-10'`` drops every question opened in October 2023, as ``'2023-11-01'``
    does, and ``'2023'`` every one opened in 2023. Read as the period's first day
    (pandas' reading), a question opened later in the period, which the model may
    know, was kept as clean. For the first-day reading, write the full date
    (``'2023-10-01'``); full dates, Timestamps and datetimes are used as they are.
    ``matches`` shows each cutoff as given and the instant ``applied``. Dates must be all
    timezone-naive or all timezone-aware, across the opening dates and the
    cutoffs together (aware dates are compared in UTC); numbers are refused as
    dates, and so is a column of date strings that pandas would read in two ways
    (day/month/year strings read month first where they can be and day first where
    not, or such strings mixed with ISO ones): write ISO dates (YYYY-MM-DD) or parse
    the column first. A missing opening date raises, since contamination cannot then be
    ruled out. Models without a known cutoff are kept and listed in
    ``unknown_models``; with a cutoff column, a model is listed when at least
    one of its rows has no cutoff.

    Examples
    --------
    >>> import coherence
    >>> table = {"model": ["openai/gpt-4o", "openai/gpt-4o", "mystery"],
    ...          "question": ["q1", "q2", "q1"],
    ...          "opened": ["2023-09-01", "2024-02-01", "2023-09-01"]}
    >>> rep = coherence.contamination_filter(table, {"gpt-4o": "2023-10-01"})
    >>> list(rep.kept["question"]), rep.unknown_models
    (['q2', 'q1'], ('mystery',))

    The same with a per-row ``cutoff`` column (missing: unknown model):

    >>> table["cutoff"] = ["2023-10-01", "2023-10-01", None]
    >>> rep = coherence.contamination_filter(table, "cutoff")
    >>> list(rep.kept["question"]), rep.unknown_models
    (['q2', 'q1'], ('mystery',))
    """
    owner = "contamination_filter"
    df = as_dataframe(forecasts, name="forecasts", owner=owner)
    if not isinstance(cutoffs, Mapping | str):
        raise TypeError(param_error("cutoffs", owner, "a mapping of model name to date or "
                                    "the name of a column of cutoff dates",
                                    type(cutoffs).__name__))
    columns = {"model": model, "question": question, "opened": opened}
    if isinstance(cutoffs, str):
        columns["cutoffs"] = cutoffs
    require_columns(df, columns, owner=owner)
    no_missing(df, (model, question), owner=owner)
    _no_blank_names(df, model, cutoffs, owner)
    opened_at, missing = parse_dates(df[opened], df.index, opened, owner, require_tz=False)
    if missing.any():
        raise ValueError(column_error(opened, "hold a date for every forecast (contamination "
                                      "cannot be ruled out otherwise)",
                                      list(df.index[np.flatnonzero(missing)]), owner=owner))
    # a question opens once: with two dates, which row's date decided would be an accident
    same_within(df, pd.DatetimeIndex(opened_at), question, opened, owner=owner)
    names = df[model].to_numpy(dtype=object)
    if isinstance(cutoffs, str):
        cutoff_per_row, rows, unknown = _cutoffs_from_column(df, cutoffs, opened, names, owner)
    else:
        cutoff_per_row, rows, unknown = _cutoffs_from_mapping(df, cutoffs, opened, names,
                                                              owner)
    known = ~np.isnat(cutoff_per_row)
    drop = np.zeros(len(df), dtype=bool)
    drop[known] = opened_at[known] < cutoff_per_row[known]
    return ContaminationFilterResult(kept=df.loc[~drop], dropped=df.loc[drop],
                                     unknown_models=tuple(unknown),
                                     matches=pd.DataFrame(rows, columns=["model", "key",
                                                                         "cutoff", "applied"]))


def _no_blank_names(df: pd.DataFrame, model: str, cutoffs: Mapping[str, Any] | str,
                    owner: str) -> None:
    """A blank model name ('' or spaces, a lost label) matches no cutoff, so its rows were
    kept unfiltered; a blank key of the mapping matches no model. Both raise."""
    names = df[model].to_numpy(dtype=object)
    blank = np.flatnonzero([isinstance(v, str) and not v.strip() for v in names])
    if len(blank):
        raise ValueError(column_error(
            model, "hold a model name on every row (a blank name matches no cutoff: its "
            "rows would be kept unfiltered)", list(df.index[blank]), list(names[blank]),
            owner=owner))
    if not isinstance(cutoffs, str):
        keys = [k for k in cutoffs if isinstance(k, str) and not k.strip()]
        if keys:
            raise ValueError(param_error("cutoffs", owner, "a mapping from model names "
                                         "(a blank key matches no model)", keys))


def _check_same_tz(df: pd.DataFrame, opened: str, cutoff_values: Iterable[Any],
                   cutoff_index: pd.Index, owner: str, cutoff_name: str = "cutoffs") -> None:
    """Naive and aware dates must not mix between the table and the cutoffs either, nor
    day/month/year strings read month first in one and day first in the other (a cutoff
    '01/10/2023' read as 10 January beside openings such as '13/09/2023')."""
    values = list(cutoff_values)
    check_same_awareness(df[opened], values,
                         what=f"the '{opened}' column and the cutoffs", owner=owner)
    check_formats_across([(opened, df[opened], df.index), (cutoff_name, values, cutoff_index)],
                         owner)


def _cutoffs_from_mapping(df: pd.DataFrame, cutoffs: Mapping[str, Any], opened: str,
                          names: np.ndarray, owner: str
                          ) -> tuple[np.ndarray, list[dict[str, Any]], list[str]]:
    """Per-row cutoffs from a model-name mapping, the matches table and unknown models."""
    keys = list(cutoffs)
    cut_vals, cut_missing = parse_cutoffs([cutoffs[k] for k in keys], pd.Index(keys),
                                          "cutoffs", owner)
    if cut_missing.any():
        raise ValueError(param_error("cutoffs", owner, "a mapping to dates (no missing values)",
                                     {k: cutoffs[k] for k in np.asarray(keys)[cut_missing]}))
    if keys:
        _check_same_tz(df, opened, [cutoffs[k] for k in keys], pd.Index(keys), owner)
    cut_of_key = dict(zip(keys, cut_vals, strict=True))
    rows, unknown = [], []
    cutoff_per_row = np.full(len(df), np.datetime64("NaT"), dtype="datetime64[ns]")
    for name in pd.unique(names):
        key = match_cutoff(str(name), cutoffs)
        rows.append({"model": name, "key": key,
                     "cutoff": None if key is None else cutoffs[key],
                     "applied": None if key is None else cut_of_key[key]})
        if key is None:
            unknown.append(str(name))
        else:
            cutoff_per_row[names == name] = cut_of_key[key]
    _show_applied(rows, cutoffs.values())
    return cutoff_per_row, rows, unknown


def _cutoffs_from_column(df: pd.DataFrame, column: str, opened: str, names: np.ndarray,
                         owner: str) -> tuple[np.ndarray, list[dict[str, Any]], list[str]]:
    """Per-row cutoffs from a column of dates; a missing cutoff marks an unknown model.

    The matches table has one row per distinct (model, cutoff) pair, with ``key``
    the column name, or None for the rows without a cutoff.
    """
    cutoff_per_row, cut_missing = parse_cutoffs(df[column], df.index, column, owner)
    if not cut_missing.all():
        _check_same_tz(df, opened, df[column], df.index, owner, column)
    raw = df[column].to_numpy(dtype=object)
    rows, unknown, seen = [], [], set()
    for i, name in enumerate(names):
        pair = (name, None if cut_missing[i] else cutoff_per_row[i])
        if pair in seen:
            continue
        seen.add(pair)
        if cut_missing[i]:
            rows.append({"model": name, "key": None, "cutoff": None, "applied": None})
            if str(name) not in unknown:
                unknown.append(str(name))
        else:
            rows.append({"model": name, "key": column, "cutoff": raw[i],
                         "applied": cutoff_per_row[i]})
    _show_applied(rows, df[column])
    return cutoff_per_row, rows, unknown


def _show_applied(rows: list[dict[str, Any]], given: Iterable[Any]) -> None:
    """Each row's ``applied`` (a parsed cutoff: naive, UTC for aware dates) as the
    Timestamp ``matches`` shows, in the zone of the cutoffs ``given``
    (:func:`in_source_zone`: shown in UTC, New York midnight read as 05:00)."""
    at = [i for i, row in enumerate(rows) if row["applied"] is not None]
    shown = in_source_zone([rows[i]["applied"] for i in at], given)
    for i, ts in zip(at, shown, strict=True):
        rows[i]["applied"] = ts


# --------------------------------------------------------------------------- gateway
@dataclass(frozen=True, slots=True)
class GatewayPartition:
    """Records split by a :class:`TemporalGateway`.

    Attributes
    ----------
    visible : pandas.DataFrame
        Records dated strictly before the cutoff: what the agent may see.
    hidden : pandas.DataFrame
        Records dated on or after the cutoff.
    undated : pandas.DataFrame
        Records without a date: rejected (never shown), since they cannot be
        placed before the cutoff.
    """

    visible: pd.DataFrame = field(repr=False)
    hidden: pd.DataFrame = field(repr=False)
    undated: pd.DataFrame = field(repr=False)


@dataclass(frozen=True, slots=True)
class GatewayReport:
    """Citations of a forecast that break the simulated date.

    Attributes
    ----------
    cutoff : pandas.Timestamp
        The simulated date, in the time zone the gateway was given.
    violations : pandas.DataFrame
        One row per cited source or event dated on or after the cutoff:
        ``kind`` ('source' or 'event'), ``position`` in its list, ``id`` and
        ``date``.
    undated : pandas.DataFrame
        Citations without a date (cannot be verified), same columns.
    n_checked : int
        Citations checked.
    """

    cutoff: pd.Timestamp
    violations: pd.DataFrame = field(repr=False)
    undated: pd.DataFrame = field(repr=False)
    n_checked: int

    @property
    def ok(self) -> bool:
        """True when no citation is dated on or after the cutoff and none is undated."""
        return len(self.violations) == 0 and len(self.undated) == 0


class TemporalGateway:
    """Evidence as it stood just before a simulated date.

    Parameters
    ----------
    cutoff : str, datetime or pandas.Timestamp
        The simulated date. Must be timezone-aware: a naive date is an error,
        not a guess (a day's difference in time zones moves records across the
        cutoff). It is kept, and shown, in the zone given.

    Notes
    -----
    A record is visible when its date :math:`t` satisfies :math:`t <` cutoff,
    compared as instants (in UTC), whatever zone each is written in; records
    dated exactly at the cutoff are hidden. Undated
    records are rejected (reported, never shown). Record dates must be
    timezone-aware as well.

    Examples
    --------
    >>> import coherence
    >>> gate = coherence.TemporalGateway("2024-03-01T00:00:00+00:00")
    >>> articles = {"id": ["a", "b", "c"],
    ...             "published": ["2024-02-29T23:59:00Z", "2024-03-01T00:00:00Z", None]}
    >>> list(gate.filter_articles(articles)["id"])
    ['a']
    >>> gate.validate({"sources": [{"id": "b", "published": "2024-03-02T00:00:00Z"}]}).ok
    False
    """

    __slots__ = ("_cutoff",)

    def __init__(self, cutoff: Any) -> None:
        self._cutoff = aware_cutoff(cutoff, "TemporalGateway")

    @property
    def cutoff(self) -> pd.Timestamp:
        """The simulated date, in the time zone it was given (``'...+02:00'`` stays at
        +02:00: the same instant as in UTC, and the wall time the user wrote)."""
        return self._cutoff

    def __repr__(self) -> str:
        return f"TemporalGateway(cutoff={self._cutoff.isoformat()!r})"

    def _cutoff_ns(self) -> np.datetime64:
        """The cutoff as a naive UTC ``datetime64[ns]``, comparable with :func:`parse_dates`."""
        utc = self._cutoff.tz_convert("UTC").tz_localize(None)
        return np.datetime64(utc.as_unit("ns").to_datetime64(), "ns")

    def partition(self, records: Any, *, date: str) -> GatewayPartition:
        """Split records into visible, hidden and undated by the ``date`` column."""
        owner = "TemporalGateway.partition"
        df = as_dataframe(records, name="records", owner=owner)
        require_columns(df, {"date": date}, owner=owner)
        when, missing = parse_dates(df[date], df.index, date, owner, require_tz=True)
        cut = self._cutoff_ns()
        before = np.zeros(len(df), dtype=bool)
        before[~missing] = when[~missing] < cut
        after = ~missing & ~before
        return GatewayPartition(visible=df.loc[before], hidden=df.loc[after],
                                undated=df.loc[missing])

    def filter_articles(self, articles: Any, *, published: str = "published") -> pd.DataFrame:
        """Articles published strictly before the cutoff (undated ones rejected)."""
        return self.partition(articles, date=published).visible

    def filter_events(self, events: Any, *, occurred: str = "occurred") -> pd.DataFrame:
        """Events that occurred strictly before the cutoff (undated ones rejected)."""
        return self.partition(events, date=occurred).visible

    def validate(self, forecast: Mapping[str, Any], *, sources: str = "sources",
                 events: str = "events", published: str = "published",
                 occurred: str = "occurred", id_field: str = "id") -> GatewayReport:
        """Report every cited source or event dated on or after the cutoff.

        Parameters
        ----------
        forecast : mapping
            A forecast record with lists (or DataFrames) of cited ``sources`` (each
            with a ``published`` date) and ``events`` (each with an ``occurred`` date),
            either of them optional but not both (a forecast without either raises:
            a list under another name would go unchecked); items may carry an ``id``.
        sources, events, published, occurred, id_field : str
            Keys of those lists and of their fields.

        Returns
        -------
        GatewayReport
            The citations dated on or after the cutoff (``violations``) and those without a
            date (``undated``); ``ok`` is True when both are empty.
        """
        owner = "TemporalGateway.validate"
        if not isinstance(forecast, Mapping):
            raise TypeError(param_error("forecast", owner, "a mapping with 'sources' and/or "
                                        "'events' lists", type(forecast).__name__))
        if sources not in forecast and events not in forecast:  # a misnamed list: not 'ok'
            raise ValueError(f"{owner}: the forecast has no {sources!r} or {events!r} list "
                             f"(its fields: {', '.join(map(repr, forecast)) or 'none'}); "
                             "name the cited lists with 'sources=' and 'events=', or give "
                             "an empty list for a forecast that cites nothing.")
        cut = self._cutoff_ns()
        bad_rows, undated_rows, n_checked = [], [], 0
        for kind, key, date_key in (("source", sources, published), ("event", events,
                                                                     occurred)):
            items = forecast.get(key)
            if items is None:
                continue
            df = as_dataframe(items if not isinstance(items, list) or items else
                              pd.DataFrame(), name=key, owner=owner)
            if len(df) == 0:
                continue
            if date_key not in df.columns:
                raise ValueError(f"{owner}: every item of '{key}' needs a '{date_key}' date; "
                                 f"available fields: {', '.join(map(repr, df.columns))}.")
            df = df.reset_index(drop=True)
            when, missing = parse_dates(df[date_key], df.index, f"{key}.{date_key}", owner,
                                         require_tz=True)
            n_checked += len(df)
            ids = (df[id_field].to_numpy(dtype=object) if id_field in df.columns
                   else [None] * len(df))
            for i in range(len(df)):
                row = {"kind": kind, "position": i, "id": ids[i],
                       "date": df[date_key].iloc[i]}
                if missing[i]:
                    undated_rows.append(row)
                elif when[i] >= cut:
                    bad_rows.append(row)
        columns = ["kind", "position", "id", "date"]
        return GatewayReport(cutoff=self._cutoff,
                             violations=pd.DataFrame(bad_rows, columns=columns),
                             undated=pd.DataFrame(undated_rows, columns=columns),
                             n_checked=n_checked)
