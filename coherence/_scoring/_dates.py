"""Dates: the one parser of date columns (timezone-strict, missing values named
by row) and the helpers built on it.
"""

from __future__ import annotations

import datetime as _dt
import numbers
import re
from collections.abc import Iterable
from typing import Any

import numpy as np
import pandas as pd

from .._validation import column_error
from .._validation import param_error

__all__ = [
    "any_aware",
    "aware_cutoff",
    "check_date_formats",
    "check_formats_across",
    "check_same_awareness",
    "cutoff_timestamp",
    "in_source_zone",
    "is_missing",
    "ns_between",
    "parse_cutoffs",
    "parse_dates",
    "parse_datetimes",
    "period_end",
    "shifted",
    "shifted_many",
    "to_days",
    "to_timestamp",
    "window_in_ns",
]

#: the first and last instants a ``datetime64[ns]`` holds (NaT is the int64 minimum)
_FIRST_NS = int(np.iinfo(np.int64).min) + 1
_LAST_NS = int(np.iinfo(np.int64).max)
#: the range every parsed date must lie in, as the error names it
_NS_RANGE = (f"{pd.Timestamp.min.ceil('D').date()} and {pd.Timestamp.max.floor('D').date()}, "
             "the range of nanosecond timestamps")
#: longer than any span between two ``datetime64[ns]`` instants (2**64 ns, 584 years)
LONGEST_NS = 2**64


# --------------------------------------------------------------------------- dates
def is_missing(value: Any) -> bool:
    if value is None:
        return True
    if isinstance(value, str):
        return value.strip() == ""
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


#: a date written with the year first (ISO 8601 and its variants: '2024-01-05',
#: '2024/01/05', '2024-01-05T10:00+01:00'): one reading
_YEAR_FIRST = re.compile(r"\d{4}[-/.]\d{1,2}[-/.]\d{1,2}(?!\d)")
#: a date written with the year last ('05/01/2024', '5.1.24', '05-01-2024'): day first
#: or month first; pandas reads it month first unless only day first is a date
_YEAR_LAST = re.compile(r"(\d{1,2})[-/.](\d{1,2})[-/.]\d{2,4}(?!\d)")
#: three fields of one or two digits, the first and last of two ('24-01-05', '05/01/24'):
#: a two-digit year that may come first (2024-01-05) or last (24 January 2005, which
#: pandas reads); ambiguous where both readings are dates (:func:`_two_digit_year_rows`)
_TWO_DIGIT_YEAR = re.compile(r"(\d{2})[-/.](\d{1,2})[-/.](\d{2})(?!\d)")


def _two_digit_year_rows(values: list[Any]) -> list[int]:
    """Positions of the strings whose two-digit year may be read first or last: the
    first field a day or month (1-31: pandas reads it so, the year last) and the other
    two a month and a day (the year first). '99-01-05' (only year first, as pandas reads
    it) and '24-01-32' (only year last) are one reading and pass."""
    seen: dict[str, bool] = {}   # each string read once, however many rows hold it
    out = []
    for i, v in enumerate(values):
        if not isinstance(v, str):
            continue
        ambiguous = seen.get(v)
        if ambiguous is None:
            m = _TWO_DIGIT_YEAR.match(v.strip())
            fields = (0, 0, 0) if m is None else tuple(int(g) for g in m.groups())
            ambiguous = seen[v] = (1 <= fields[0] <= 31 and 1 <= fields[1] <= 12
                                   and 1 <= fields[2] <= 31)
        if ambiguous:
            out.append(i)
    return out


def _date_form(text: str) -> str | None:
    """``year_first`` (ISO), ``day_first`` (year last, the first field above 12),
    ``month_first`` (year last, readable month first) or None (another form)."""
    if _YEAR_FIRST.match(text):
        return "year_first"
    m = _YEAR_LAST.match(text)
    if m is None:
        return None
    return "day_first" if int(m.group(1)) > 12 else "month_first"


def check_date_formats(values: list[Any], index: pd.Index, column: str, owner: str, *,
                       with_iso: bool = True) -> None:
    """Raise when a column's date strings cannot all be read in one format.

    pandas reads each string by itself: '05/01/2024' month first (1 May) and
    '20/01/2024' day first (20 January), so a day-first column is read half one way and
    half the other. A column whose year-last strings ('dd/mm/yyyy' or 'mm/dd/yyyy')
    include one that is a date only day first (first field above 12) and others
    readable month first is such a column; so is one that mixes year-first strings
    (ISO) with year-last ones, and one whose string has a two-digit year that may be read
    first or last ('24-01-05': 5 January 2024, or 24 January 2005 as pandas reads it).
    Datetimes, Timestamps and ISO strings (dates and date-times mixed) are one format and
    pass. ``with_iso=False`` leaves out the second
    test (:func:`check_formats_across` uses it so).
    """
    rows: dict[str, list[int]] = {"year_first": [], "day_first": [], "month_first": []}
    form_of: dict[str, str | None] = {}   # each string read once
    for i, v in enumerate(values):
        if not isinstance(v, str):
            continue
        if v not in form_of:
            form_of[v] = _date_form(v.strip())
        form = form_of[v]
        if form is not None:
            rows[form].append(i)
    year_first, day_first_only, month_first = (
        rows["year_first"], rows["day_first"], rows["month_first"])
    fix = ("; write ISO dates (YYYY-MM-DD) or parse the column first, e.g. "
           "pd.to_datetime(df[col], format='%d/%m/%Y')")
    year_last = sorted(day_first_only + month_first)
    labels = pd.Index(index).tolist()   # plain Python labels in the message
    two_digit = _two_digit_year_rows(values)
    if two_digit:
        t = two_digit[0]
        raise ValueError(column_error(
            column, "hold dates whose year can be told; a two-digit year may come first "
            f"or last (row {labels[t]!r} = {values[t]!r}: {_rows(two_digit)}; '24-01-05' "
            "is 5 January 2024 year first, 24 January 2005 as pandas reads it); write "
            "four-digit years (YYYY-MM-DD) or parse the column first, e.g. "
            "pd.to_datetime(df[col], format='%y-%m-%d')",
            list(index[two_digit]), [values[i] for i in two_digit], owner=owner))
    if day_first_only and month_first:
        d, mf = day_first_only[0], month_first[0]
        raise ValueError(column_error(
            column, "hold dates written one way; its day/month/year strings would be read "
            f"day first where only that is a date (row {labels[d]!r} = {values[d]!r}: "
            f"{_rows(day_first_only)}) and month first elsewhere (row {labels[mf]!r} = "
            f"{values[mf]!r}: {_rows(month_first)})" + fix,
            list(index[year_last]), [values[i] for i in year_last], owner=owner))
    if with_iso and year_first and year_last:
        y = year_first[0]
        raise ValueError(column_error(
            column, "hold dates written one way; it mixes year-first dates (row "
            f"{labels[y]!r} = {values[y]!r}: {_rows(year_first)}) with day/month/year or "
            "month/day/year ones, whose order cannot be told" + fix,
            list(index[year_last]), [values[i] for i in year_last], owner=owner))


def check_formats_across(columns: list[tuple[str, Iterable[Any], pd.Index]],
                         owner: str) -> None:
    """Raise when date columns whose dates are compared with one another are read in two
    ways, though each is read one way by itself.

    ``columns`` holds ``(name, values, index)`` triples, ``name`` saying where the column
    is (``"hindsight_events['date']"``). A column of day-first strings that are all dates
    read month first (``'12/01/2024'``, read as 1 December) passes
    :func:`check_date_formats`, and so does one with a day above 12 (``'13/01/2024'``,
    read day first); compared with each other, 12 January and 13 January were eleven
    months apart. The day-first test of :func:`check_date_formats` is applied to the
    columns together, rows named by column; year-first strings in one column beside
    year-last ones in another pass (each column is read one way).
    """
    values: list[Any] = []
    labels: list[str] = []
    for name, vals, index in columns:
        vals = list(vals)
        values.extend(vals)
        labels.extend(f"{name}[{label!r}]" for label in pd.Index(index).tolist())
    if len(columns) > 1:
        check_date_formats(values, pd.Index(labels, dtype=object),
                           " and ".join(name for name, _, _ in columns), owner,
                           with_iso=False)


def _rows(positions: list[int]) -> str:
    return f"{len(positions)} row" + ("" if len(positions) == 1 else "s")


#: a quarter: '2023Q4', '2023-Q4', '2023 q4', 'Q4 2023', 'Q4-2023', '4Q2023'
_QUARTER = re.compile(r"(?P<y1>\d{4})[\s-]*Q(?P<q1>[1-4])|Q(?P<q2>[1-4])[\s/-]*(?P<y2>\d{4})"
                      r"|(?P<q3>[1-4])Q(?P<y3>\d{4})", re.IGNORECASE)


def _quarter_start(text: str) -> pd.Timestamp | None:
    """The first day of the quarter a string names, None for anything else (pandas reads
    only some spellings, with a deprecation warning, and no longer will)."""
    m = _QUARTER.fullmatch(text.strip())
    if m is None:
        return None
    groups = m.groupdict()
    year = next(groups[k] for k in ("y1", "y2", "y3") if groups[k] is not None)
    quarter = next(groups[k] for k in ("q1", "q2", "q3") if groups[k] is not None)
    return pd.Timestamp(int(year), 3 * int(quarter) - 2, 1)


def to_timestamp(value: Any) -> pd.Timestamp:
    if isinstance(value, _dt.date) and not isinstance(value, _dt.datetime):
        return pd.Timestamp(value.isoformat())
    if isinstance(value, str):
        quarter = _quarter_start(value)
        if quarter is not None:
            return quarter
    return pd.Timestamp(value)


def _read_date(v: Any) -> tuple[str, np.datetime64 | None]:
    """One value of a date column: its kind (``missing``, ``unparsable``, ``naive``,
    ``aware``, ``out`` of range) and its UTC nanosecond time (None when there is none)."""
    if is_missing(v):
        return "missing", None
    if isinstance(v, numbers.Number | bool | np.bool_):
        return "unparsable", None     # pandas would read 2024 as nanoseconds after 1970
    try:
        ts = to_timestamp(v)
    except (TypeError, ValueError, OverflowError):
        return "unparsable", None
    if ts is pd.NaT:
        return "missing", None
    kind = "naive" if ts.tzinfo is None else "aware"
    if kind == "aware":
        ts = ts.tz_convert("UTC").tz_localize(None)
    try:
        return kind, np.datetime64(ts.as_unit("ns").to_datetime64(), "ns")
    except (OverflowError, ValueError):  # pandas' OutOfBoundsDatetime: 1500, 2300
        return "out", None


def _datetime_column(values: Any, require_tz: bool) -> tuple[np.ndarray, np.ndarray] | None:
    """A column of datetimes (``datetime64``, with or without a zone) read in one step, as
    :func:`parse_dates` reads it value by value (14 us a value: 0.55 s for 40,000 hourly
    prices); None where that reading would raise (a naive column with ``require_tz``, a
    date past the nanosecond range): the values are then read one by one, for the
    message."""
    if not isinstance(values, pd.Series):
        return None
    aware = isinstance(values.dtype, pd.DatetimeTZDtype)
    if not (aware or (isinstance(values.dtype, np.dtype) and values.dtype.kind == "M")):
        return None
    if require_tz and not aware and values.notna().any():
        return None
    utc = values.dt.tz_convert("UTC").dt.tz_localize(None) if aware else values
    try:
        out = utc.dt.as_unit("ns").to_numpy(dtype="datetime64[ns]")
    except (OverflowError, ValueError):  # pandas' OutOfBoundsDatetime
        return None
    return out, values.isna().to_numpy()


def parse_dates(values: Iterable[Any], index: pd.Index, column: str, owner: str, *,
                 require_tz: bool) -> tuple[np.ndarray, np.ndarray]:
    """Parse values to UTC nanosecond timestamps; return (datetime64[ns] array, missing mask).

    With ``require_tz``, a timezone-naive value raises (it is an error, not a guess).
    Without it, values must be all naive or all aware (aware ones compared in UTC).
    Date strings must be read in one format (:func:`check_date_formats`): a column of
    day-first strings that pandas would read half month first raises.
    """
    fast = _datetime_column(values, require_tz)
    if fast is not None:
        return fast
    # a text column's values in one step (one by one, an Arrow-backed column took 1.3 us
    # a value: most of the time of a column of dates); the same Python strings
    vals = (values.tolist() if isinstance(values, pd.Series)
            and isinstance(values.dtype, pd.StringDtype) else list(values))
    check_date_formats(vals, index, column, owner)
    out = np.full(len(vals), np.datetime64("NaT"), dtype="datetime64[ns]")
    missing = np.zeros(len(vals), dtype=bool)
    kinds: dict[str, list[int]] = {"unparsable": [], "naive": [], "aware": [], "out": []}
    # a string is read once however many rows hold it (about 5 us a row for ISO dates:
    # 5 s for a million rows of a few hundred dates); other values, which may be equal
    # across types or zones, each by itself
    read: dict[str, tuple[str, Any]] = {}
    for i, v in enumerate(vals):
        got = read.get(v) if type(v) is str else None
        if got is None:
            got = _read_date(v)
            if type(v) is str:
                read[v] = got
        kind, value = got
        if kind == "missing":
            missing[i] = True
            continue
        kinds[kind].append(i)
        if value is not None:
            out[i] = value
    unparsable, naive, aware = kinds["unparsable"], kinds["naive"], kinds["aware"]
    out_of_range = kinds["out"]
    if unparsable:
        pos = np.asarray(unparsable)
        raise ValueError(column_error(column, "hold dates", list(index[pos]),
                                      [vals[i] for i in unparsable], owner=owner))
    if out_of_range:
        pos = np.asarray(out_of_range)
        raise ValueError(column_error(column, f"hold dates between {_NS_RANGE}",
                                      list(index[pos]), [vals[i] for i in out_of_range],
                                      owner=owner))
    if require_tz and naive:
        raise ValueError(column_error(
            column, "hold timezone-aware dates (a naive date is ambiguous; add an offset "
            "such as '+00:00')", list(index[np.asarray(naive)]), [vals[i] for i in naive],
            owner=owner))
    if naive and aware:
        raise ValueError(column_error(
            column, "hold dates that are all timezone-aware or all naive",
            list(index[np.asarray(naive)]), [vals[i] for i in naive], owner=owner))
    return out, missing


def ns_between(later: Any, earlier: Any) -> np.ndarray:
    """``later - earlier`` in nanoseconds, as float64, for ``datetime64[ns]`` arrays (NaN
    where either is NaT).

    Exact where the int64 difference holds it (spans under 292 years), as numpy's
    subtraction gives it; a longer span, which that subtraction wraps around without a
    word (1678-01-01 to 2261-12-31 came out as -204 days), is the floating-point
    difference of the two instants, within a microsecond.
    """
    a = np.asarray(later, dtype="datetime64[ns]")
    b = np.asarray(earlier, dtype="datetime64[ns]")
    ai, bi = a.astype(np.int64), b.astype(np.int64)
    approx = ai.astype(np.float64) - bi.astype(np.float64)
    with np.errstate(over="ignore"):
        exact = (ai - bi).astype(np.float64)  # wraps where the span is beyond int64
    out = np.where(np.abs(approx) < 2.0**62, exact, approx)
    return np.where(np.isnat(a) | np.isnat(b), np.nan, out)


def shifted(when: Any, delta_ns: float) -> np.datetime64:
    """The instant ``when + delta_ns`` nanoseconds, held at the first or last instant a
    ``datetime64[ns]`` holds instead of wrapping around (three days before 1677-09-23 was a
    date in 2262, so a window there held no price)."""
    t = int(np.datetime64(when, "ns").astype(np.int64))
    step = delta_ns if abs(delta_ns) < LONGEST_NS else (LONGEST_NS if delta_ns > 0
                                                         else -LONGEST_NS)
    return np.datetime64(min(max(t + int(step), _FIRST_NS), _LAST_NS), "ns")


def shifted_many(when: np.ndarray, delta_ns: int) -> np.ndarray:
    """:func:`shifted` of every instant of a ``datetime64[ns]`` array: in one step where
    no instant reaches an end of the range, one by one (held at the end) where one does."""
    t = np.asarray(when, dtype="datetime64[ns]").astype(np.int64)
    step = int(delta_ns)
    if len(t) and abs(step) < 2**62 and int(t.min()) + step >= _FIRST_NS \
            and int(t.max()) + step <= _LAST_NS:
        return (t + step).astype("datetime64[ns]")
    return np.array([shifted(x, step) for x in np.asarray(when, dtype="datetime64[ns]")],
                    dtype="datetime64[ns]")


def window_in_ns(days: float) -> int:
    """A window of ``days`` days (of 24 hours) in nanoseconds, as an int; a window longer
    than any span of nanosecond timestamps (a million days, 1e300) is :data:`LONGEST_NS`,
    which covers every date as it does, rather than an ``OverflowError``."""
    ns = float(days) * 86_400e9
    return round(ns) if ns < LONGEST_NS else LONGEST_NS


def period_end(value: Any) -> pd.Timestamp | None:
    """The end of the period a date string names when it names a month, a quarter or a
    year rather than a day: the first instant after it (``'2023-10'``, ``'Oct 2023'`` ->
    2023-11-01; ``'2023'`` -> 2024-01-01), as a numpy ``datetime64`` of month, week or
    year precision does (``np.datetime64('2023-10')``). None for a full date or a
    date-time, and for anything else (a Timestamp or a datetime names an instant)."""
    if isinstance(value, np.datetime64):
        unit, count = np.datetime_data(value.dtype)
        steps: dict[str, np.timedelta64] = {
            "Y": np.timedelta64(1, "Y"), "M": np.timedelta64(1, "M"),
            "W": np.timedelta64(1, "W")}
        if unit not in steps or np.isnat(value):
            return None
        return pd.Timestamp((value + count * steps[unit]).astype("datetime64[D]"))
    if not isinstance(value, str):
        return None
    quarter = _quarter_start(value)
    if quarter is not None:
        return quarter + pd.DateOffset(months=3)
    try:
        start = to_timestamp(value.strip())
        # such a string reads as midnight on a month's first day (naive)
        if (start is pd.NaT or start.tzinfo is not None or start.day != 1
                or start != start.normalize()):
            return None
        period = pd.Period(value.strip())  # its resolution: 'M', 'Q-DEC', 'Y-DEC', 'D', ...
    except (TypeError, ValueError, OverflowError):
        return None
    if period.freqstr[0] not in "MQY" or period.start_time != start:
        return None
    return (period + 1).start_time


def cutoff_timestamp(value: Any) -> pd.Timestamp:
    """A knowledge cutoff as the instant it is compared at: the end of the period a
    month-, quarter- or year-only string names (:func:`period_end`), else the date itself
    (the rule of :func:`parse_cutoffs`, for one value)."""
    end = period_end(value)
    return to_timestamp(value) if end is None else end


def parse_cutoffs(values: Iterable[Any], index: pd.Index, column: str,
                  owner: str) -> tuple[np.ndarray, np.ndarray]:
    """Knowledge cutoffs as :func:`parse_dates` reads dates (naive or aware, not mixed),
    except that a string naming a month, a quarter or a year rather than a day
    (``'2023-10'``, ``'2023'``; or a ``datetime64`` of month, week or year precision)
    stands for the end of that period, the first instant
    after it (2023-11-01, 2024-01-01): the model may know all of it. Read as its first
    day, a question opened later in that period was taken as clean."""
    vals = list(values)
    out, missing = parse_dates(vals, index, column, owner, require_tz=False)
    ends: dict[Any, pd.Timestamp | None] = {}  # once per distinct string, not per row
    for i, v in enumerate(vals):
        if missing[i] or not isinstance(v, str | np.datetime64):
            continue
        if v not in ends:
            ends[v] = period_end(v)
        end = ends[v]
        if end is not None:
            try:
                out[i] = np.datetime64(end.as_unit("ns").to_datetime64(), "ns")
            except (OverflowError, ValueError):  # '2262' ends after the last instant
                out[i] = np.datetime64(_LAST_NS, "ns")
    return out, missing


def aware_cutoff(cutoff: Any, owner: str) -> pd.Timestamp:
    """A timezone-aware cutoff as a Timestamp in the zone it was given; a naive or missing
    one, or one that is not a date, is a ``ValueError`` naming ``cutoff``."""
    if is_missing(cutoff):
        raise ValueError(param_error("cutoff", owner, "a timezone-aware date", cutoff))
    try:
        ts = to_timestamp(cutoff)
    except (TypeError, ValueError) as exc:
        raise ValueError(param_error("cutoff", owner, "a timezone-aware date", cutoff)) from exc
    if ts.tzinfo is None:
        raise ValueError(param_error(
            "cutoff", owner, "a timezone-aware date (a naive date is ambiguous; add an "
            "offset such as '+00:00')", cutoff))
    try:
        ts.tz_convert("UTC").as_unit("ns")
    except (OverflowError, ValueError) as exc:  # pandas' OutOfBoundsDatetime: 2300
        raise ValueError(param_error("cutoff", owner, f"a timezone-aware date between "
                                     f"{_NS_RANGE}", cutoff)) from exc
    # in the zone given (the instant compared is the same in any zone), as the package
    # gives dates back (:func:`in_source_zone`): shown in UTC it read as another wall time
    return ts


def any_aware(values: Iterable[Any]) -> bool:
    for v in values:
        if is_missing(v):
            continue
        try:
            return to_timestamp(v).tzinfo is not None
        except (TypeError, ValueError):
            return False
    return False


def check_same_awareness(first: Iterable[Any], second: Iterable[Any], *, what: str,
                         owner: str) -> None:
    """Raise ``ValueError`` naming ``what`` when one set of dates is timezone-aware and the
    other naive (judged by :func:`any_aware`, the first date present of each)."""
    if any_aware(first) != any_aware(second):
        raise ValueError(f"{owner}: {what} must both be timezone-aware or both naive.")


def source_zone(source: Iterable[Any]) -> Any:
    """The timezone the dates of ``source`` are written in: the zone of a
    timezone-aware column, or the one zone all its aware dates share; UTC when they
    are in several zones (one table cannot show them each in its own); None when the
    dates are naive (judged by :func:`any_aware`)."""
    dtype = getattr(source, "dtype", None)
    if isinstance(dtype, pd.DatetimeTZDtype):
        return dtype.tz
    if not any_aware(source):
        return None
    zones: dict[str, Any] = {}
    for v in source:
        if is_missing(v):
            continue
        try:
            tz = to_timestamp(v).tz
        except (TypeError, ValueError, OverflowError):
            continue
        if tz is not None:
            zones.setdefault(str(tz), tz)
        if len(zones) > 1:
            return "UTC"
    return next(iter(zones.values()), "UTC")


def in_source_zone(when: Any, source: Iterable[Any]) -> pd.Series | pd.DatetimeIndex:
    """Instants parsed by :func:`parse_dates` (naive, in UTC) as a result gives them back:
    naive when the dates they came from (``source``) are naive, else timezone-aware in
    the zone those dates are written in (:func:`source_zone`): the same instants and
    the same wall times as given. Shown naive, an aware date would read as a local time
    it is not; shown in UTC, as another wall time than the user's."""
    out = when if isinstance(when, pd.Series) else pd.DatetimeIndex(when)
    zone = source_zone(source)
    if zone is None:
        return out
    if isinstance(out, pd.Series):
        return out.dt.tz_localize("UTC").dt.tz_convert(zone)
    return out.tz_localize("UTC").tz_convert(zone)


def to_days(values: Iterable[Any], index: pd.Index, column: str, owner: str) -> np.ndarray:
    """Dates as float days since the epoch (UTC for aware dates); NaN when missing."""
    when, missing = parse_dates(values, index, column, owner, require_tz=False)
    out = np.full(len(missing), np.nan)
    ok = ~missing
    out[ok] = when[ok].astype("datetime64[ns]").astype(np.int64) / 86_400e9
    return out


def parse_datetimes(values: Iterable[Any], index: pd.Index, column: str,
               owner: str) -> tuple[np.ndarray, np.ndarray]:
    return parse_dates(values, index, column, owner, require_tz=False)
