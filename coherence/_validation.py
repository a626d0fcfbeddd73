"""Input validation shared by every public function.

Two message templates, used everywhere:

* parameters (scikit-learn style)::

    The 'k' parameter of cmi must be an int in [1, 999]; got 0.

* data columns::

    Column 'belief' must hold probabilities in [0, 1]; 2 offending rows
    (first: row 4 = 1.2, row 9 = -0.1).

Rows are named by the caller's index labels, so a user can find them with
``data.loc[...]``. Nothing is ever dropped or clipped here: bad input raises.
"""

from __future__ import annotations

import math
import numbers
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = [
    "DECIMAL_SLACK",
    "MAX_ROWS_SHOWN",
    "UnsetName",
    "as_dataframe",
    "binary_column",
    "case_collisions",
    "check_case_distinct",
    "check_column_names",
    "check_columns_arg",
    "check_ids",
    "collisions_text",
    "column_error",
    "finite_column",
    "first_of",
    "flag_column",
    "is_bool",
    "is_label_item",
    "label_column",
    "label_key",
    "label_pairs",
    "label_text",
    "label_values",
    "list_like_strings",
    "listed",
    "narrow_float",
    "narrow_float_decimals",
    "no_missing",
    "nonempty",
    "numeric_column",
    "one_or_pair",
    "param_error",
    "plain_labels",
    "plain_repr",
    "plain_value",
    "probability_array",
    "probability_column",
    "require_columns",
    "same_index",
    "same_within",
    "unique_columns",
]

MAX_ROWS_SHOWN = 5

#: The slack of a comparison at a boundary between stated decimal numbers (beliefs,
#: prices, tolerances): they are not exact in binary (0.52 - 0.50 = 0.020000000000000018,
#: 0.43 - 0.40 = 0.029999999999999971, 0.1 + 0.2 - 0.3 = 5.6e-17), so a difference
#: exactly at a stated bound is decided on the stated numbers by allowing this much
#: (times the numbers' size where they can be large). Far below any real difference.
DECIMAL_SLACK = 1e-12


class UnsetName(str):
    """A str default that reads as its text (``'strong'``, ``'domain'``) but is told apart,
    by identity, from the same text given: an option that applies only in some cases (a
    pilot's category; an optional column) raises where it would go unused when given, and
    stays quiet when left unset."""

    __slots__ = ()


#: the words of a CSV or TSV cell read as missing (blank, R's and Python's); every other
#: word stays text (a model called ``None``, an action ``N/A``): ``coherence test``'s
#: reader, :func:`coherence.read_pairs`' label columns and the report's rerun snippet
MISSING_WORDS = ("", "NA", "nan", "NaN")


# --------------------------------------------------------------------------- templates
def param_error(name: str, owner: str, rule: str, got: Any) -> str:
    """The one parameter-error template."""
    return f"The '{name}' parameter of {owner} must be {rule}; got {got!r}."


def one_or_pair(value: Any, name: str, owner: str, rule: str,
                second: Any) -> tuple[Any, Any]:
    """A parameter given as one value (its second part then ``second``) or as a pair:
    ``(value, second)`` or the pair's two items; anything else of length other than two
    is a ``ValueError`` naming ``name`` and ``rule``. The items are checked by the caller."""
    if isinstance(value, tuple | list):
        if len(value) != 2:
            raise ValueError(param_error(name, owner, rule, value))
        return value[0], value[1]
    return value, second


def _plural(n: int, word: str) -> str:
    return f"{n} {word}" if n == 1 else f"{n} {word}s"


def column_error(column: str, rule: str, labels: Sequence[Any], values: Sequence[Any] | None = None,
                 *, owner: str | None = None) -> str:
    """The one data-error template: column, rule, count and first offending rows."""
    n_bad = len(labels)
    shown = []
    for j in range(min(n_bad, MAX_ROWS_SHOWN)):
        # plain Python values: 'row 0 = 1.2', not 'row np.int64(0) = np.float64(1.2)'
        if values is None:
            shown.append(f"row {plain_value(labels[j])!r}")
        else:
            shown.append(f"row {plain_value(labels[j])!r} = {plain_value(values[j])!r}")
    where = f" (input to {owner})" if owner else ""
    more = ", ..." if n_bad > MAX_ROWS_SHOWN else ""
    return (
        f"Column '{column}'{where} must {rule}; {_plural(n_bad, 'offending row')} "
        f"(first: {', '.join(shown)}{more})."
    )


def plain_value(value: Any) -> Any:
    """A plain Python scalar for messages (``np.float64(1.2)`` -> ``1.2``)."""
    return value.item() if isinstance(value, np.generic) else value


def plain_repr(value: Any) -> str:
    """``repr`` of :func:`plain_value`: ``'a'``, ``1.2``, never ``np.float64(1.2)``."""
    return repr(plain_value(value))


def plain_labels(value: Any) -> Any:
    """``value`` with every ``np.str_`` in it a plain ``str``, inside tuples, lists and
    dicts too; ``value`` itself when it holds none.

    A column name or label read from a numpy array is a ``np.str_``: equal to the
    ``str``, but a result or report recording it would show ``np.str_('model')``.
    """
    if isinstance(value, np.str_):
        return str(value)
    if type(value) in (tuple, list):
        items = [plain_labels(v) for v in value]
        changed = any(new is not old for new, old in zip(items, value, strict=True))
        return type(value)(items) if changed else value
    if type(value) is dict:
        pairs = [(plain_labels(k), plain_labels(v)) for k, v in value.items()]
        changed = any(k is not k0 or v is not v0
                      for (k, v), (k0, v0) in zip(pairs, value.items(), strict=True))
        return dict(pairs) if changed else value
    return value


def listed(values: Any, limit: int = MAX_ROWS_SHOWN, *, show: Callable[[Any], str] = str,
           sep: str = ", ", counted: bool = False) -> str:
    """The first ``limit`` of ``values`` (a sequence, index or array), each as ``show``
    writes it, joined by ``sep``, then ``sep + "..."`` where some were left out (with
    ``counted``, ``" and N more"``): how a message names what it cannot list in full.

    Examples
    --------
    >>> listed(["a", "b", "c"], 2), listed([1, 2, 3], 2, show=repr, counted=True)
    ('a, b, ...', '1, 2 and 1 more')
    """
    n_left = len(values) - limit
    more = "" if n_left <= 0 else f" and {n_left} more" if counted else sep + "..."
    return sep.join(show(v) for v in list(values[:limit])) + more


class _Cut(list[Any]):
    """A list that some values were left out of: its repr ends with ``, ...]``."""

    def __repr__(self) -> str:
        return super().__repr__()[:-1] + (", ...]" if self else "...]")


def first_of(values: Any, limit: int = MAX_ROWS_SHOWN) -> list[Any]:
    """The first ``limit`` of ``values`` as plain values (:func:`plain_value`), in a list
    whose repr ends with ``, ...]`` where some were left out: the ``got`` of a
    :func:`param_error` that cannot show every offending value.

    Examples
    --------
    >>> first_of([1, 2, 3], 2), first_of(["a"])
    ([1, 2, ...], ['a'])
    """
    head = [plain_value(v) for v in list(values[:limit])]
    return _Cut(head) if len(values) > limit else head


def collisions_text(groups: Sequence[tuple[Any, ...]]) -> str:
    """Groups of :func:`case_collisions` for a message: ``'Yes' / 'yes'; 1 / '1'``."""
    return listed(groups, sep="; ", show=lambda g: " / ".join(map(plain_repr, g)))


def check_ids(tables: Sequence[tuple[str, pd.DataFrame]], column: str, *, owner: str) -> None:
    """Raise when the id column ``column`` of the named tables holds ids that differ only
    in case, surrounding spaces or type (text against number): within one table
    (:func:`check_case_distinct`), or between tables joined on it (matched exactly, such
    ids would leave rows unmatched without a word)."""
    for _, df in tables:
        check_case_distinct(df, column, owner=owner)
    if len(tables) < 2:
        return
    values = [plain_value(v) for _, df in tables for v in pd.unique(df[column].dropna())]
    clash = case_collisions(values)
    if not clash:
        return
    members = list(clash[0])
    where = []
    for name, df in tables:
        labels = [plain_value(v) for v in df.index[df[column].isin(members).to_numpy()]]
        if labels:
            where.append(f"{name} row{'s' if len(labels) > 1 else ''} "
                         f"{listed(labels, show=repr)}")
    names = " and ".join(name for name, _ in tables)
    raise ValueError(
        f"Column '{column}' (input to {owner}) must write each id one way in {names}, "
        f"which are joined on it exactly; found {' / '.join(repr(v) for v in members)}, "
        f"which differ only in case, surrounding spaces or type (text against number) "
        f"({'; '.join(where)}); make them one label.")


# --------------------------------------------------------------------------- tables
def as_dataframe(data: Any, *, name: str = "data", owner: str = "this function") -> pd.DataFrame:
    """Accept a DataFrame or anything ``pandas.DataFrame`` can build (dict, records, arrays).

    Column names must be unique (:func:`unique_columns`): with a duplicated
    name, ``df[name]`` is a frame, not a column, and which copy a test reads
    would be an accident.
    """
    if isinstance(data, pd.DataFrame):
        unique_columns(data, name=name, owner=owner)
        return data
    if data is None or isinstance(data, str | bytes | numbers.Number):
        raise TypeError(param_error(name, owner, "a pandas DataFrame or convertible to one",
                                    type(data).__name__))
    try:
        df = pd.DataFrame(data)
    except (TypeError, ValueError) as exc:
        raise TypeError(param_error(name, owner, "a pandas DataFrame or convertible to one",
                                    type(data).__name__)) from exc
    unique_columns(df, name=name, owner=owner)
    return df


def nonempty(df: pd.DataFrame, *, name: str = "data", owner: str = "this function") -> None:
    """Raise ``ValueError`` for a table without rows (a header-only CSV, a filter that
    matched nothing): a statistic of nothing is not an answer."""
    if len(df) == 0:
        cols = listed(df.columns, 20)
        raise ValueError(param_error(name, owner, "a table with at least one row",
                                     f"0 rows (columns: {cols or 'none'})"))


def unique_columns(df: pd.DataFrame, *, name: str = "data", owner: str = "this function") -> None:
    """Raise ``ValueError`` naming every column name that occurs more than once."""
    if df.columns.is_unique:
        return
    dup = list(dict.fromkeys(plain_value(c) for c in df.columns[df.columns.duplicated()]))
    raise ValueError(param_error(
        name, owner, "a table whose column names are unique",
        f"duplicated column {listed(dup, show=repr)} "
        "(rename or drop the copies, e.g. df.loc[:, ~df.columns.duplicated()])"))


def check_column_names(owner: str, columns: Mapping[str, Any],
                       optional: Mapping[str, Any] | None = None) -> None:
    """Column-name parameters are strings (those in ``optional`` may also be None).

    ``columns`` and ``optional`` map each parameter's name to its value; the first
    offender, ``columns`` before ``optional``, is a ``TypeError`` naming the parameter.
    """
    for name, value in columns.items():
        if not isinstance(value, str):
            raise TypeError(param_error(name, owner, "a column name (str)", value))
    for name, value in (optional or {}).items():
        if value is not None and not isinstance(value, str):
            raise TypeError(param_error(name, owner, "a column name (str) or None", value))


def check_columns_arg(value: Any, name: str, owner: str) -> tuple[str, ...]:
    """A column name or a sequence of column names (``by=``), as a tuple of ``str``.

    Anything else (an int, None inside the list, a mapping) is a ``TypeError``
    naming the parameter, rather than an error from deep inside pandas.
    """
    if isinstance(value, str):
        return (str(value),)  # a name read from an array is a np.str_
    rule = "a column name (str) or a list of column names"
    if isinstance(value, Mapping) or not isinstance(value, Iterable):
        raise TypeError(param_error(name, owner, rule, value))
    out = tuple(value)
    bad = [v for v in out if not isinstance(v, str)]
    if bad:
        raise TypeError(param_error(name, owner, rule, value))
    return tuple(str(v) for v in out)


def is_bool(value: Any) -> bool:
    """Whether ``value`` is a boolean (Python's or numpy's): ``True == 1`` in Python, so
    a label or state check that compares values must ask this apart."""
    return isinstance(value, bool | np.bool_)


def label_text(value: Any) -> str | None:
    """The text a label reads as (case-folded, trimmed; a whole float as an integer), or
    None for a value that is not text or a number."""
    if isinstance(value, str):
        return value.strip().casefold()
    if is_bool(value):
        return None
    if isinstance(value, float | np.floating) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    if isinstance(value, int | float | np.integer | np.floating):
        return str(value).casefold()
    return None


def label_key(value: Any) -> str:
    """The text that matches a label named in a parameter (``pairs=``, ``order=``) to a
    label of a column by value, whatever its type: ``2``, ``2.0``, ``np.int64(2)`` and
    ``'2'`` all read ``'2'``; case and spaces count (``'Yes'`` is not ``'yes'``)."""
    if isinstance(value, float | np.floating) and math.isfinite(value) and value.is_integer():
        return str(int(value))
    return str(plain_value(value))


def is_label_item(value: Any) -> bool:
    """A label named in a parameter (``pairs=``, ``order=``): a str or an int, not a bool."""
    return isinstance(value, str) or (isinstance(value, numbers.Integral)
                                      and not isinstance(value, bool))


def label_pairs(pairs: Any, name: str, owner: str) -> tuple[tuple[Any, Any], ...]:
    """A non-empty sequence of pairs of two different labels (str or int, matched to a
    column's labels by value: :func:`label_key`), none repeated; ``TypeError`` for a
    value that is not a sequence, ``ValueError`` naming the first bad pair."""
    if isinstance(pairs, str) or not isinstance(pairs, Sequence) or len(pairs) == 0:
        raise TypeError(param_error(name, owner, "a non-empty sequence of (action, action) "
                                    "pairs", pairs))
    clean: list[tuple[Any, Any]] = []
    rule = "a sequence of pairs of two different action labels (str or int)"
    for pair in pairs:
        if (isinstance(pair, str) or not isinstance(pair, Sequence) or len(pair) != 2
                or not all(is_label_item(a) for a in pair)
                or label_key(pair[0]) == label_key(pair[1])):
            raise ValueError(param_error(name, owner, rule, pair))
        clean.append((pair[0], pair[1]))
    if len({(label_key(a1), label_key(a2)) for a1, a2 in clean}) != len(clean):
        raise ValueError(param_error(name, owner, "free of duplicate pairs", pairs))
    return tuple(clean)


def case_collisions(values: Iterable[Any]) -> list[tuple[Any, ...]]:
    """Groups of distinct labels that read the same: text equal up to case and surrounding
    spaces, or text and a number written alike (``'1'`` and ``1``, ``'2'`` and ``2.0``),
    which compare unequal."""
    groups: dict[str, list[Any]] = {}
    for v in dict.fromkeys(values):
        text = label_text(v)
        if text is not None:
            groups.setdefault(text, []).append(v)
    return [tuple(sorted(g, key=repr)) for g in groups.values() if len(g) > 1]


def _bools_and_numbers(raw: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Masks of the booleans and of the (non-missing) numbers among an object column's
    values, read element by element."""
    flags = np.fromiter((is_bool(x) for x in raw), dtype=bool, count=len(raw))
    numbers_ = np.fromiter((isinstance(x, numbers.Number) and not is_bool(x)
                            and not pd.isna(x) for x in raw), dtype=bool, count=len(raw))
    return flags, numbers_


def _check_bools_apart_from_numbers(df: pd.DataFrame, column: str, owner: str | None) -> None:
    """Raise when an object column holds booleans and numbers (``True`` and ``1``), read
    element by element: ``unique()`` has already pooled them."""
    s = df[column]
    if s.dtype != object:
        return
    raw = s.to_numpy()
    flags, numbers_ = _bools_and_numbers(raw)
    if flags.any() and numbers_.any():
        positions = np.flatnonzero(flags | numbers_)
        raise _bad(column, "hold labels of one kind, booleans or numbers, not both (True "
                   "equals 1 and False equals 0 in Python, so they would be pooled into "
                   "one label; found booleans in "
                   f"{_plural(int(flags.sum()), 'row')} and numbers in "
                   f"{_plural(int(numbers_.sum()), 'row')}: write them one way)",
                   df.index, positions, raw, owner)


def check_bools_apart_from_text(df: pd.DataFrame, column: str, *,
                                owner: str | None = None) -> None:
    """Raise when an object column holds booleans beside text that reads as one
    (``True`` and ``'True'``, ``False`` and ``' false'``): one label typed two ways (a
    table read back from a CSV beside one built in Python), which compare unequal and
    would count as two labels. :func:`check_case_distinct` asks it of every label
    column."""
    s = df[column]
    if s.dtype != object:
        return
    raw = s.to_numpy()
    flags = np.fromiter((is_bool(x) for x in raw), dtype=bool, count=len(raw))
    if not flags.any():
        return
    texts = np.fromiter((isinstance(x, str) and x.strip().casefold() in ("true", "false")
                         for x in raw), dtype=bool, count=len(raw))
    if texts.any():  # the rows named: the fewer kind, most likely the odd ones
        fewer = texts if texts.sum() <= flags.sum() else flags
        raise _bad(column, "hold booleans or their text, not both (True and 'True' compare "
                   "unequal, so they would be two labels; found booleans in "
                   f"{_plural(int(flags.sum()), 'row')} and 'True'/'False' text in "
                   f"{_plural(int(texts.sum()), 'row')}: write them one way)",
                   df.index, np.flatnonzero(fewer), raw, owner)


def check_case_distinct(df: pd.DataFrame, column: str, *, owner: str | None = None) -> None:
    """Raise when a label column holds labels that differ only in case or spaces.

    ``'Standard'`` and ``'standard'`` in one column are almost always one label
    typed two ways; treating them as two labels splits (or drops) rows silently. So are
    booleans beside numbers (``True`` and ``1``): ``True == 1`` in Python, and pandas
    pools them as one label before any check of its unique values could see them; and
    booleans beside their text (``True`` and ``'True'``,
    :func:`check_bools_apart_from_text`).
    """
    _check_bools_apart_from_numbers(df, column, owner)
    check_bools_apart_from_text(df, column, owner=owner)
    clash = case_collisions(df[column].dropna().unique())
    if clash:
        s = df[column]
        members = {v for g in clash for v in g}
        positions = np.flatnonzero(s.isin(members).to_numpy())
        raise _bad(column, f"hold labels that differ by more than case, surrounding spaces "
                   f"or type (text against number) "
                   f"(found {collisions_text(clash)}; make them one label)", df.index,
                   positions, s.to_numpy(), owner)


def same_within(df: pd.DataFrame, values: Any, key: str | Sequence[str], column: str, *,
                owner: str, rows: Any = None) -> None:
    """Raise when ``values`` (one per row of ``df``: a column's values, or numbers read
    from it) differ within a value of the column ``key`` (or a combination of the columns
    ``key``): a question's outcome, or a market's price at one time, is one fact, and which
    row's copy a statistic read would be an accident. ``rows`` (a boolean mask) limits the
    check to those rows."""
    cols = _column_list(key)
    codes = df.groupby(cols, sort=False, dropna=False).ngroup().to_numpy()
    vals = pd.Series(np.asarray(values, dtype=object), dtype=object)
    keep = np.ones(len(df), dtype=bool) if rows is None else np.asarray(rows, dtype=bool)
    counts = vals[keep].groupby(codes[keep]).nunique(dropna=False)
    clash = counts.index[counts.to_numpy() > 1].to_numpy()
    if len(clash):
        _missing_within(df, vals, codes, keep, clash, cols, column, owner)
        hit = keep & np.isin(codes, clash)
        at = int(np.flatnonzero(hit)[0])
        label = tuple(plain_value(df[c].iloc[at]) for c in cols)
        group = keep & (codes == codes[at])
        first = sorted({repr(plain_value(v)) for v in vals[group]})
        where = " and ".join(f"'{c}'" for c in cols)
        raise ValueError(column_error(
            column, f"be the same on every row of a {where} value ({len(clash)} of them "
            f"differ; {label[0] if len(cols) == 1 else label!r} has {', '.join(first)})",
            list(df.index[hit]), [plain_value(v) for v in vals.to_numpy()[hit]], owner=owner))


def _missing_within(df: pd.DataFrame, vals: pd.Series, codes: np.ndarray, keep: np.ndarray,
                    clash: np.ndarray, cols: list[Any], column: str, owner: str) -> None:
    """For :func:`same_within`: raise naming the missing values when every group that
    differs holds one value on its other rows (a question's outcome left blank on one
    row is missing there, not a second outcome)."""
    present = vals[keep].groupby(codes[keep]).nunique(dropna=True)
    if (present.loc[clash].to_numpy() > 1).any():
        return  # two values given: the ordinary message says which
    hit = keep & np.isin(codes, clash) & vals.isna().to_numpy()
    at = int(np.flatnonzero(hit)[0])
    label = tuple(plain_value(df[c].iloc[at]) for c in cols)
    group = keep & (codes == codes[at]) & ~vals.isna().to_numpy()
    given = plain_value(vals[group].iloc[0])
    where = " and ".join(f"'{c}'" for c in cols)
    raise ValueError(column_error(
        column, f"not be missing on some rows of a {where} value and given on others "
        f"({len(clash)} of them; {label[0] if len(cols) == 1 else label!r} has {given!r} on "
        "its other rows)", list(df.index[hit]),
        [plain_value(v) for v in vals.to_numpy()[hit]], owner=owner))


def require_columns(df: pd.DataFrame, columns: Mapping[str, str | None] | Iterable[str], *,
                    owner: str = "this function") -> None:
    """Raise ``ValueError`` naming every requested column that ``df`` lacks.

    ``columns`` maps a role (the parameter name, e.g. ``'belief'``) to the column
    name the caller gave, or is a plain iterable of column names. ``None`` values
    (optional roles that were not asked for) are skipped.
    """
    items = list(columns.items()) if isinstance(columns, Mapping) else [(c, c) for c in columns]
    missing = [(role, col) for role, col in items if col is not None and col not in df.columns]
    if missing:
        parts = [f"'{col}' (the '{role}' column)" if role != col else f"'{col}'"
                 for role, col in missing]
        available = listed(df.columns, 20, show=plain_repr)
        raise ValueError(
            f"{owner}: column {' and '.join(parts)} not found in data; "
            f"available columns: {available or 'none'}."
        )


def _column_list(columns: Any) -> list[Any]:
    """One column name or a list (tuple) of them, as a list: any key that is not a list or
    tuple (a str, or an int such as a column literally named 0) is one column name."""
    if isinstance(columns, list | tuple | pd.Index | np.ndarray):
        return list(columns)
    return [columns]


def _labels(df_or_index: pd.Index, positions: np.ndarray) -> list[Any]:
    return [plain_value(v) for v in df_or_index[positions[:MAX_ROWS_SHOWN]]] + (
        [None] * max(0, len(positions) - MAX_ROWS_SHOWN)
    )


def _bad(column: str, rule: str, index: pd.Index, positions: np.ndarray, values: Any,
         owner: str | None) -> ValueError:
    labels = _labels(index, positions)
    shown = positions[:MAX_ROWS_SHOWN]
    vals = None if values is None else [plain_value(v) for v in np.asarray(values)[shown]]
    return ValueError(column_error(column, rule, labels, vals, owner=owner))


def no_missing(df: pd.DataFrame, columns: str | Iterable[str], *, owner: str | None = None,
               missing: np.ndarray | None = None,
               rule: str = "not contain missing values") -> None:
    """The one missing-value check of data columns.

    Raise ``ValueError`` for the first of ``columns`` with a missing value (NaN,
    None, NaT; ``pandas.isna``), naming the column, the number of offending rows
    and the first of them by index label. ``missing`` is a precomputed mask for a
    single column whose parser has its own notion of missing (blank dates);
    ``rule`` the expectation stated (numeric columns say "NaN or missing").
    """
    cols = _column_list(columns)
    if missing is not None and len(cols) != 1:
        raise ValueError("no_missing: a 'missing' mask goes with exactly one column.")
    for col in cols:
        mask = df[col].isna().to_numpy() if missing is None else np.asarray(missing, dtype=bool)
        positions = np.flatnonzero(mask)
        if len(positions):
            raise _bad(col, rule, df.index, positions, None, owner)


def numeric_column(df: pd.DataFrame, column: str, *, owner: str | None = None,
                   allow_nan: bool = False, bools: bool = False) -> np.ndarray:
    """Return the column as a contiguous float64 array, or raise naming the bad rows.

    A float32 (or float16) column is read value by value as the shortest decimal that
    gives the value back (``float32(0.7)`` as 0.7, not 0.699999988). A bool column
    (numpy or nullable) raises, or with ``bools`` reads as 1/0 (``pd.NA`` missing), for
    columns of 0/1 flags (an outcome, a ``correct`` column).
    """
    s = df[column]
    where = f" (input to {owner})" if owner else ""
    if bools and pd.api.types.is_bool_dtype(s.dtype):
        s = s.astype("Float64")
    elif pd.api.types.is_bool_dtype(s.dtype):
        raise ValueError(f"Column '{column}'{where} must be numeric; got dtype bool.")
    textual = pd.api.types.is_object_dtype(s.dtype) or isinstance(s.dtype, pd.StringDtype)
    if (isinstance(s.dtype, pd.CategoricalDtype) or pd.api.types.is_complex_dtype(s.dtype)
            or not (pd.api.types.is_numeric_dtype(s.dtype) or textual)):
        # a dtype that holds no real numbers (dates, categories, complex numbers, whose
        # imaginary part a cast to float would drop): every row offends
        raise _bad(column, f"be numeric (got dtype {s.dtype})", df.index,
                   np.arange(len(s)), s.to_numpy(dtype=object), owner)
    if textual:
        # numbers written as text ('0.3', as a CSV or a string dtype gives them back) are
        # read as numbers; anything else, a Python bool or a complex number included,
        # names its rows
        raw = s.to_numpy(dtype=object)
        if bools:
            _check_flags_apart_from_numbers(df, column, raw, owner)
        # a float32 held as an object reads as the decimal it prints as, as in a float32
        # column (widened, float32(0.3) would be 0.30000001 and differ from a stated 0.3)
        obj = pd.Series([narrow_float(v) for v in raw], index=s.index, dtype=object)
        converted = pd.to_numeric(obj, errors="coerce")
        flags = np.fromiter((is_bool(v) or isinstance(v, complex | np.complexfloating)
                             for v in raw), dtype=bool, count=len(raw))
        bad = np.flatnonzero((converted.isna().to_numpy() & s.notna().to_numpy()) | flags)
        if len(bad):
            rule = ("be numeric" if pd.api.types.is_object_dtype(s.dtype)
                    else f"be numeric (got dtype {s.dtype})")
            raise _bad(column, rule, df.index, bad, raw, owner)
        s = converted.astype(np.float64)
    decimals = narrow_float_decimals(s)
    values = np.ascontiguousarray(s.to_numpy(dtype=np.float64, na_value=np.nan)
                                  if decimals is None else decimals)
    if not allow_nan:
        no_missing(df, column, owner=owner, missing=np.isnan(values),
                   rule="not contain NaN or missing values")
    return values


def _check_flags_apart_from_numbers(df: pd.DataFrame, column: str, raw: np.ndarray,
                                    owner: str | None) -> None:
    """Raise when a column of 0/1 flags that may be bools holds both (``[True, 0, 1]``): one
    outcome typed two ways, named as such rather than as "not numeric"; the rows of the
    fewer kind, most likely the odd ones, are named."""
    flags, numbers_ = _bools_and_numbers(raw)
    if flags.any() and numbers_.any():
        fewer = flags if flags.sum() <= numbers_.sum() else numbers_
        raise _bad(column, "hold bools or numbers, not both (one 0/1 value typed two ways; "
                   f"found bools in {_plural(int(flags.sum()), 'row')} and numbers in "
                   f"{_plural(int(numbers_.sum()), 'row')}: write them one way, True/False "
                   "or 1/0)", df.index, np.flatnonzero(fewer), raw, owner)


def narrow_float(value: Any) -> Any:
    """A float32 (or float16) scalar as the float of the shortest decimal that gives it back
    (``float32(0.3)`` is 0.3, not 0.30000001192); any other value as it is. The scalar form
    of :func:`narrow_float_decimals`."""
    if isinstance(value, np.floating) and value.dtype.itemsize < 8:
        return float(str(value))
    return value


def narrow_float_decimals(s: pd.Series) -> np.ndarray | None:
    """A float32 (or float16) column, numpy or nullable, as float64 values, each read as the
    shortest decimal that gives it back (missing as NaN); None for any other dtype.

    float32 0.7 is 0.699999988 in float64: read as what it prints as, what was stated, or
    bins and tolerances tuned to float64 rounding split forecasts stated alike.
    """
    narrow = getattr(s.dtype, "numpy_dtype", s.dtype)
    if isinstance(narrow, np.dtype) and narrow.kind == "f" and narrow.itemsize < 8:
        out: np.ndarray = s.to_numpy(dtype=narrow, na_value=np.nan).astype(str).astype(
            np.float64)
        return out
    return None


def finite_column(df: pd.DataFrame, column: str, *, owner: str | None = None) -> np.ndarray:
    """Numeric, no NaN, no infinities."""
    values = numeric_column(df, column, owner=owner)
    bad = np.flatnonzero(~np.isfinite(values))
    if len(bad):
        raise _bad(column, "hold finite numbers", df.index, bad, values, owner)
    return values


def probability_column(df: pd.DataFrame, column: str, *, owner: str | None = None) -> np.ndarray:
    """Numeric, no NaN, every value in [0, 1]."""
    values = numeric_column(df, column, owner=owner)
    bad = np.flatnonzero((values < 0.0) | (values > 1.0))
    if len(bad):
        raise _bad(column, "hold probabilities in [0, 1]", df.index, bad, values, owner)
    return values


def probability_array(values: Any, name: str, *, owner: str | None = None,
                      allow_nan: bool = False) -> np.ndarray:
    """The array form of :func:`probability_column`, for functions taking vectors.

    A pandas Series keeps its index, so a message names its rows by label."""
    frame = None
    if isinstance(values, pd.Series):
        frame = pd.DataFrame({name: values.to_numpy()}, index=values.index)
    elif np.ndim(values) <= 1:
        frame = pd.DataFrame({name: np.asarray(values).ravel()})
    if frame is None:
        raise ValueError(f"'{name}' must be one-dimensional; got an array of shape "
                         f"{np.shape(values)}.")
    arr = numeric_column(frame, name, owner=owner, allow_nan=allow_nan)
    finite = ~np.isnan(arr)
    bad = np.flatnonzero(finite & ((arr < 0.0) | (arr > 1.0)))
    if len(bad):
        raise _bad(name, "hold probabilities in [0, 1]", frame.index, bad, arr, owner)
    return arr


def binary_column(df: pd.DataFrame, column: str, *, owner: str | None = None) -> np.ndarray:
    """Numeric or bool, no NaN, every value 0 or 1; returned as int64."""
    s = df[column]
    if pd.api.types.is_object_dtype(s.dtype) and s.notna().all() and all(
            is_bool(v) for v in s.to_numpy(dtype=object)):
        s = s.astype(bool)  # True/False held as objects: a bool column
    if pd.api.types.is_bool_dtype(s.dtype):
        no_missing(df, column, owner=owner, rule="not contain NaN or missing values")
        return np.ascontiguousarray(s.to_numpy(dtype=np.int64))
    values = numeric_column(df, column, owner=owner, bools=True)
    bad = np.flatnonzero((values != 0.0) & (values != 1.0))
    if len(bad):
        raise _bad(column, "be binary (0 or 1)", df.index, bad, values, owner)
    return np.ascontiguousarray(values.astype(np.int64))


def label_values(s: pd.Series) -> pd.Series:
    """The labels of a column to code by value: a pandas categorical as its values, in its
    categories' dtype; any other column as it is.

    A categorical's order of categories (ordered or not) is a presentation choice, and its
    categories no row has are none of the data's: coded in that order (``pd.factorize``,
    a sorting groupby), the same labels would be renumbered, and with them the units that
    every draw of a resampled p-value picks. The column must hold no missing value."""
    if isinstance(s.dtype, pd.CategoricalDtype):
        return s.astype(s.dtype.categories.dtype)
    return s


def label_column(
    df: pd.DataFrame, column: str, *, owner: str | None = None, discrete: bool = False,
    variants: bool = False,
) -> tuple[np.ndarray, np.ndarray]:
    """A categorical column as (integer codes, sorted unique labels); missing values raise.

    The labels are sorted by value, also for a pandas categorical (whose order of
    categories, and categories no row has, change nothing).

    Labels that read the same but compare unequal (``'gpt'`` and ``'GPT '``, ``1`` and
    ``'1'``: one label typed two ways, see :func:`check_case_distinct`) raise, since
    coding them as two labels would split a unit (a context, a class, a cell) silently;
    ``variants=True`` allows them (for a column whose labels are distinct by design).

    With ``discrete=True`` (an action or outcome column, whose values are
    classes), a float column with non-integer values (a continuous measurement
    passed by mistake, read as one class per distinct value) raises.
    """
    no_missing(df, column, owner=owner)
    if not variants:
        check_case_distinct(df, column, owner=owner)
    s = df[column]
    # a categorical column is checked by its values: categories of non-integer numbers are
    # a continuous column all the same
    held = s.dtype.categories.dtype if isinstance(s.dtype, pd.CategoricalDtype) else s.dtype
    if discrete and (pd.api.types.is_float_dtype(held) or pd.api.types.is_object_dtype(held)):
        values = s.to_numpy(dtype=object)
        bad = np.flatnonzero([isinstance(v, float | np.floating)
                              and not (np.isfinite(v) and float(v).is_integer())
                              for v in values])
        if len(bad):
            raise _bad(column, "hold class labels (strings, bools or integers); got "
                       "non-integer numbers, a continuous column", df.index, bad, values, owner)
    codes, uniques = pd.factorize(label_values(s), sort=True)
    return np.ascontiguousarray(codes.astype(np.int64)), np.asarray(uniques)


_TRUE = frozenset({"true", "t", "yes", "y", "1", "1.0"})
_FALSE = frozenset({"false", "f", "no", "n", "0", "0.0"})


def flag_column(df: pd.DataFrame, column: str, *, owner: str | None = None,
                missing: bool | None = None) -> np.ndarray:
    """A yes/no column as a bool array, whatever way it was written.

    Accepts bools, the numbers 0 and 1, and the strings true/false, t/f,
    yes/no, y/n, 1/0 (any case, surrounding spaces ignored), as a CSV gives
    them back. ``bool('False')`` is True, so strings are never cast with
    ``astype(bool)``. Missing values, a blank string (``''`` or spaces) among them,
    take the value ``missing``; with ``missing=None`` they raise. Anything else
    raises, naming the rows.
    """
    s = df[column]
    # a blank cell of a text table ('' or spaces) is a missing value, as None and NaN are
    isna = (s.isna() | s.map(lambda v: isinstance(v, str) and not v.strip())).to_numpy()
    if isna.any() and missing is None:
        no_missing(df, column, owner=owner, missing=isna)
    out = np.full(len(s), bool(missing), dtype=bool)
    values = s.to_numpy(dtype=object)
    bad: list[int] = []
    for i, v in enumerate(values):
        if isna[i]:
            continue
        if is_bool(v) or (isinstance(v, numbers.Real) and v in (0, 1)):
            out[i] = bool(v)
        elif isinstance(v, str) and v.strip().casefold() in _TRUE | _FALSE:
            out[i] = v.strip().casefold() in _TRUE
        else:
            bad.append(i)
    if bad:
        pos = np.asarray(bad)
        raise _bad(column, "hold yes/no flags (bool, 0/1, or 'true'/'false', 'yes'/'no')",
                   df.index, pos, values, owner)
    return out


def list_like_strings(df: pd.DataFrame, column: str, *, owner: str | None = None) -> None:
    """Raise when cells of a list column are lists written out as text.

    A CSV stores ``['a', 'b']`` as the string ``"['a', 'b']"``; read back, it
    would count as one source named ``"['a', 'b']"``. The text is never
    evaluated here: the caller parses it (``ast.literal_eval`` or
    ``json.loads``).
    """
    values = df[column].to_numpy(dtype=object)
    bad = np.flatnonzero([isinstance(v, str) and len(v.strip()) >= 2
                          and v.strip()[0] in "[(" and v.strip()[-1] in "])" for v in values])
    if len(bad):
        raise _bad(column, "hold lists (or one item per row), not lists written as text; "
                   "parse them first, e.g. df[col] = df[col].map(ast.literal_eval)",
                   df.index, bad, values, owner)


def same_index(owner: str, **values: Any) -> None:
    """Raise when two or more of ``values`` are pandas Series (or DataFrames) whose
    indexes differ.

    Vectors are paired by position; Series from differently ordered or filtered tables
    would be paired wrongly without a word, so they must carry equal indexes (element
    by element) or be passed as arrays."""
    series = [(name, v) for name, v in values.items()
              if isinstance(v, pd.Series | pd.DataFrame)]
    if len(series) < 2:
        return
    first, ref = series[0]
    for name, v in series[1:]:
        if not v.index.equals(ref.index):
            kind = "Series" if isinstance(v, pd.Series) else "DataFrame"
            raise ValueError(param_error(
                name, owner, f"a {kind} with the same index as '{first}' (the inputs are "
                "paired by position, not by label: align them first, e.g. "
                f"{name}.reindex({first}.index), or pass arrays)",
                f"an index that differs ({_index_text(v.index)} against "
                f"{_index_text(ref.index)})"))


def _index_text(index: pd.Index) -> str:
    return f"[{listed(index, show=plain_repr)}]"
