"""Reading the field's conditional-forecasting result files into the pairs table.

The layouts read, all JSON objects with a ``results`` list of records
and an optional ``metadata`` object:

* a one-direction run: ``pair_id, category, p_a, p_a_given_b1, p_a_given_b0,
  resolution_a, resolution_b`` per record;
* a two-direction (Bayes-consistency) run: the same without resolutions, plus
  ``p_b, p_b_given_a1, p_b_given_a0`` (and the file's own derived ``joint_*``,
  ``bayes_error_*``, ``lotp_error_*`` numbers, which are recomputed, not read);
* failed elicitations, ``{"pair_id": ..., "error": ...}`` with or without a
  ``category``: kept as rows flagged in the ``error`` column, never aborting;
* a per-record ``variant`` key, or ``results`` given as an object mapping a
  variant name to its list of records.

:func:`attach_outcomes` joins a run without resolutions to the resolutions of
another run of the same pairs.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from .._files import index_as_columns
from .._files import lines_of_another_width
from .._parameters import check_choice
from .._validation import MISSING_WORDS
from .._validation import as_dataframe
from .._validation import case_collisions
from .._validation import check_ids
from .._validation import first_of
from .._validation import listed
from .._validation import param_error
from .._validation import plain_repr
from .._validation import plain_value
from .._validation import require_columns
from .._warnings import SkippedRecordsWarning
from ._checks_io import DuplicateKeyError
from ._checks_io import shown_value
from ._checks_io import unique_keys
from ._pairs_result import failed_rows

__all__ = [
    "PAIR_OUTCOMES",
    "RUN_BOOKKEEPING",
    "attach_outcomes",
    "read_pairs",
]

#: result-file key -> column of the pairs table (docs/design.md)
_JSON_KEYS = {
    "pair_id": "pair", "category": "category", "p_a": "p_a", "p_a_given_b1": "p_a_given_b1",
    "p_a_given_b0": "p_a_given_b0", "resolution_a": "a_outcome", "resolution_b": "b_outcome",
    "p_b": "p_b", "p_b_given_a1": "p_b_given_a1", "p_b_given_a0": "p_b_given_a0",
}
#: keys every successful record has; a failed record needs only ``pair_id``
_REQUIRED_JSON = ("pair_id", "category", "p_a", "p_a_given_b1", "p_a_given_b0")
_RESOLUTION_JSON = ("resolution_a", "resolution_b")
_REVERSE_JSON = ("p_b", "p_b_given_a1", "p_b_given_a0")
#: columns a CSV / parquet pairs table must have (outcomes are optional)
_REQUIRED_TABLE = ("pair", "category", "p_a", "p_a_given_b1", "p_a_given_b0")
#: the outcome columns of the pairs table
PAIR_OUTCOMES: tuple[str, str] = ("a_outcome", "b_outcome")
#: metadata keys that describe a run's bookkeeping, not its settings: kept as columns but
#: not part of the run label (as are keys starting with ``num_`` or ``n_``)
RUN_BOOKKEEPING: frozenset[str] = frozenset({
    "run_at", "started_at", "finished_at", "timestamp", "date", "time", "duration",
    "elapsed", "runtime", "run_time", "output",
})
#: the label columns of a CSV pairs table, read as written but for the words of
#: ``MISSING_WORDS``; its other columns take pandas' missing words (``_MISSING``)
_LABEL_COLUMNS = frozenset({"pair", "category", "model", "run", "variant"})
_MISSING = ("", "#N/A", "#N/A N/A", "#NA", "-1.#IND", "-1.#QNAN", "-NaN", "-nan", "1.#IND",
            "1.#QNAN", "<NA>", "N/A", "NA", "NULL", "NaN", "None", "n/a", "nan", "null")
#: columns read_pairs itself writes; a metadata key of the same name is prefixed
_OWN_COLUMNS = frozenset({*_JSON_KEYS.values(), "variant", "error", "run", "source"})




def _is_bookkeeping(key: str) -> bool:
    return key in RUN_BOOKKEEPING or key.startswith(("num_", "n_"))


def _scalar(value: Any) -> Any:
    """A metadata value as one table cell (nested objects as JSON text)."""
    if isinstance(value, dict | list):
        return json.dumps(value, sort_keys=True)
    return value


# --------------------------------------------------------------------------- reading
def read_pairs(path: str | Path) -> pd.DataFrame:
    """Read a pairs result file into the pairs table of the design notes (docs/design.md).

    Reads the result file of a conditional-forecasting run (JSON in the field's layout,
    CSV or parquet) into one row per question pair, with the run's label and metadata as
    columns, ready for :func:`conditional_forecasting`. Failed elicitations are kept and
    flagged, not dropped, so the test can count them.

    Parameters
    ----------
    path : str or pathlib.Path
        A ``.json`` result file of the field's layout, or a ``.csv`` /
        ``.parquet`` file with the pairs columns of docs/design.md.

    Returns
    -------
    pandas.DataFrame
        One row per record, failed ones included. Columns, for JSON:
        ``pair, category, p_a, p_a_given_b1, p_a_given_b0``; ``a_outcome,
        b_outcome`` when the run has resolutions; ``p_b, p_b_given_a1,
        p_b_given_a0`` when any record has them (NaN where a record lacks
        them); ``variant`` when records carry one; ``error`` when any record
        failed (the file's message, missing on successful rows); then ``run``
        (the run's label, see Notes), ``model`` and every other ``metadata``
        field under its own name (``thinking``, ``prompt_style``, ``run_at``,
        ``num_pairs``, ...; a key that collides with a column above is
        prefixed ``metadata_``), and ``source`` (the path read). Outcomes are
        returned as stored (the field writes them as floats 0.0 / 1.0).

    Raises
    ------
    ValueError
        When the file's layout is not recognised, a record lacks a required
        key, a successful record holds, under a numeric key, a value that is not a
        finite JSON number or null (``"YES"`` or ``"0.3"`` in quotes, a JSON boolean,
        an object or list, ``NaN``, ``Infinity`` or a number too large for a float;
        see Notes), a ``pair_id`` is not a JSON string or integer (a float ``1.0``,
        a boolean, null) or one id is written two ways (``1`` and ``"1"``), a
        ``category`` or ``variant`` is not a string, an integer or null (the
        messages name the key, the file and the first offending records), some
        successful records have resolutions and others do not, a successful record
        holds one of ``resolution_a, resolution_b`` (or some of ``p_b,
        p_b_given_a1, p_b_given_a0``) without the others, a record under a variant's
        key of ``results`` names another variant, a key is given both in
        ``metadata`` and at the top level with different values, or a JSON object
        names one key twice (``json`` would keep the last); for a CSV file that is empty, names two
        columns alike, is divided by another separator (``;``, tab, ``|``) or has a
        line of more or fewer values than its header names columns (the lines and
        their counts are named); for a parquet file whose named index shares its name
        with a column.

    See Also
    --------
    attach_outcomes : add resolutions to a run read without them.
    conditional_forecasting : the test run on the pairs table.

    Notes
    -----
    **Failed records.** A record whose ``error`` key holds a message (anything but
    null, ``false``, 0 or a blank string) is a failed elicitation (the field writes
    ``{"pair_id": ..., "error": "Failed to elicit probabilities"}``, sometimes with a
    ``category``). It is kept, with
    whatever it holds and NaN elsewhere, and flagged by its ``error`` message;
    :func:`conditional_forecasting` skips such rows with a
    :class:`SkippedRecordsWarning` that names them and counts them per run and
    category (``n_failed``), as the study's own scripts skip them. Only
    ``pair_id`` is required of a failed record; every other record needs
    ``pair_id, category, p_a, p_a_given_b1, p_a_given_b0``.

    **Resolutions.** A two-direction (Bayes-consistency) run has none: the
    table then has no outcome columns, and :func:`conditional_forecasting`
    computes the metrics that need no outcomes. Within one file, successful
    records have resolutions all or none; a mix raises. To score such a run,
    borrow the resolutions of another run with :func:`attach_outcomes`.

    **Runs.** ``run`` labels the run: the model followed by its settings, the
    metadata fields other than bookkeeping (the run time, ``num_*`` / ``n_*``
    counts; :data:`RUN_BOOKKEEPING`), e.g. ``"gpt-4o (thinking=False,
    prompt_style=skeptical)"``; a file without such metadata is labelled by
    its file name's stem. :func:`conditional_forecasting` forms its cells per
    run (and variant), so two runs of one model with different settings are
    never pooled unless asked to, and a pair that appears twice in one run is
    an error.

    **CSV files.** The label columns ``pair, category, model, run, variant`` are read
    as written: only a blank cell, ``NA``, ``nan`` or ``NaN`` is missing there (a
    category ``None``, a model ``N/A`` stay text), and a column of numbers stays text
    when one of them is written otherwise than the number prints (models ``3.10`` and
    ``3.1`` are two models, pair ``0007`` is not pair 7) or one number is written two ways
    (categories ``1`` and ``1.0`` are two categories); the other columns take pandas'
    missing words. Empty values after the last column on every line (a file written
    with a trailing comma) are a trailing separator, not a column.

    **Parquet files.** A named index (``table.set_index("pair").to_parquet(...)``) is
    read as columns, in front; an unnamed one is row labels, as before.

    Every other record key (question texts, the file's own derived numbers
    such as ``improvement``, ``bayes_error_mean`` or ``lotp_error_a``) is
    ignored: the toolkit recomputes them. A record with a null probability
    keeps NaN, and :func:`conditional_forecasting` will then name that row.

    **Numbers are read as JSON writes them, nothing coerced.** On a successful
    record, a probability or resolution is a JSON number or null. A number in
    quotes (``"0.3"``) is a JSON string, a type error in a numeric field that points
    to a bug of the file's writer, and is refused rather than read as 0.3, as
    :func:`read_consistency_tuples` refuses it; so is a JSON boolean (``true`` is
    not the resolution 1.0: the field writes 0.0 / 1.0), and so are the tokens
    ``NaN`` and ``Infinity`` that Python's ``json`` writes and reads although JSON
    has no such numbers (write null for a missing value), and a number too large for
    a float (``1e400``, read as inf). A number is kept as written otherwise: ``-0.0``
    is 0, and one outside [0, 1] (``1.0000000001``) is read as it is and refused by
    :func:`conditional_forecasting`, which names the row. A failed record is not
    analysed: its values that are not numbers read as NaN. A ``pair_id`` is a JSON
    string or integer: a float (``1.0``) is refused, since Python would merge it with
    ``1`` and split it from ``"1"``, and so is a file that writes one id both as an
    integer and as text. A byte-order mark and CRLF line ends are read as usual;
    invalid JSON (a trailing comma) is refused, naming the line and column.

    Examples
    --------
    >>> import json, tempfile, os
    >>> rec = {"pair_id": "x", "category": "strong", "p_a": 0.3, "p_a_given_b1": 0.6,
    ...        "p_a_given_b0": 0.2, "resolution_a": 1.0, "resolution_b": 0.0}
    >>> failed = {"pair_id": "y", "error": "Failed to elicit probabilities"}
    >>> meta = {"model": "m", "thinking": False, "run_at": "2026-01-07T12:26:42"}
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "run.json")
    ...     with open(path, "w") as f:
    ...         json.dump({"results": [rec, failed], "metadata": meta}, f)
    ...     table = read_pairs(path)
    >>> table.columns.tolist()[:8]
    ['pair', 'category', 'p_a', 'p_a_given_b1', 'p_a_given_b0', 'a_outcome', 'b_outcome', 'error']
    >>> table.loc[:, ["pair", "error", "run", "thinking"]]
      pair                           error                 run  thinking
    0    x                             NaN  m (thinking=False)     False
    1    y  Failed to elicit probabilities  m (thinking=False)     False
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".json":
        return _read_pairs_json(path)
    if suffix == ".csv":
        table = _read_pairs_csv(path)
    elif suffix in (".parquet", ".pq"):
        try:
            table = index_as_columns(pd.read_parquet(path), repr(str(path)))
        except ValueError as exc:
            raise ValueError(f"read_pairs: {exc}.") from None
    else:
        raise ValueError(param_error("path", "read_pairs",
                                     "a .json, .csv or .parquet file", str(path)))
    require_columns(table, _REQUIRED_TABLE, owner="read_pairs")
    return table


def _read_pairs_csv(path: Path) -> pd.DataFrame:
    """A CSV pairs table, refused with its path named when it holds no columns, names two
    columns alike (pandas would read the second as ``name.1`` and the first would be
    analysed), reads as one column because another separator divides it, or has a line
    of more or fewer values than its header names columns (pandas made the first column
    the index and read every other one a column to the left, or left cells missing).
    Empty values after the last column (a trailing separator, header included) are no
    values."""
    try:
        header = pd.read_csv(path, header=None, nrows=1, dtype=str,
                             keep_default_na=False).iloc[0].tolist()
    except pd.errors.EmptyDataError:
        raise ValueError(f"read_pairs: {str(path)!r} is empty (no header line with the "
                         f"columns {', '.join(_REQUIRED_TABLE)}).") from None
    while len(header) > 1 and header[-1] == "":  # a trailing separator names no column
        header.pop()
    # a label is text as written: a category 'None' or a model 'N/A' is not missing
    missing = {c: list(MISSING_WORDS if c in _LABEL_COLUMNS else _MISSING) for c in header}
    wrong = lines_of_another_width(path, ",", len(header))
    if wrong:
        raise ValueError(f"read_pairs: {str(path)!r}: {wrong}.")
    with warnings.catch_warnings():  # trailing separators (checked above) are no values
        warnings.simplefilter("ignore", pd.errors.ParserWarning)
        table = pd.read_csv(path, keep_default_na=False, na_values=missing, index_col=False)
    table = table.iloc[:, :len(header)]  # the empty column of a trailing separator
    twice = sorted({str(c) for c in header if header.count(c) > 1})
    if twice:
        raise ValueError(f"read_pairs: {str(path)!r} has two or more columns named "
                         f"{', '.join(map(repr, twice))}; rename or drop the copies (which "
                         "one to read is not clear).")
    if len(table.columns) == 1:
        name = str(table.columns[0])
        other = next((c for c in (";", "\t", "|") if c in name), None)
        if other is not None:
            kind = {";": "semicolons", "\t": "tabs", "|": "bars"}[other]
            raise ValueError(f"read_pairs: {str(path)!r} reads as one column {name[:60]!r}: "
                             f"its columns seem to be separated by {kind}; save it "
                             "comma-separated.")
    return _labels_as_written(table, path, missing)


def _writes_as(value: Any, text: Any) -> bool:
    """Whether a label pandas read as a number (or bool) is written ``text`` in the file."""
    if not isinstance(text, str):
        return bool(pd.isna(value))
    value = plain_value(value)
    whole = isinstance(value, float) and value.is_integer()
    return text == str(value) or (whole and text == str(int(value)))


def _labels_as_written(table: pd.DataFrame, path: Path,
                       missing: dict[str, list[str]]) -> pd.DataFrame:
    """The label columns that pandas read as numbers (or bools) kept as text when a value
    is written otherwise than the number prints (``'3.10'`` and ``'3.1'``, two models, both
    read as 3.1; pair ``'0007'`` read as 7) or one number is written two ways (``'1'`` and
    ``'1.0'``, two categories, both read as 1.0); ids written as plain numbers, each one
    way, stay numbers."""
    labels = [c for c in table.columns if c in _LABEL_COLUMNS
              and pd.api.types.is_numeric_dtype(table[c].dtype)]
    if not labels:
        return table
    with warnings.catch_warnings():  # trailing separators are no values
        warnings.simplefilter("ignore", pd.errors.ParserWarning)
        text = pd.read_csv(path, keep_default_na=False, usecols=labels, index_col=False,
                           na_values={c: missing[c] for c in labels},
                           dtype=dict.fromkeys(labels, str))
    for c in labels:
        written = text[c].to_numpy(dtype=object)
        values = table[c].to_numpy(dtype=object)
        spellings = {(v, t) for v, t in zip(values, written, strict=True) if isinstance(t, str)}
        if (len(spellings) > len({v for v, _ in spellings})
                or not all(_writes_as(v, t) for v, t in zip(values, written, strict=True))):
            table[c] = pd.Series(written, index=table.index, dtype=object)
    return table


def _records(data: Any, path: Path) -> tuple[list[dict[str, Any]], dict[str, Any]]:
    """The records (each with its variant when ``results`` maps variants to lists) and the
    metadata of a parsed result file."""
    if not isinstance(data, dict) or not isinstance(data.get("results"), list | dict):
        raise ValueError(f"read_pairs: {str(path)!r} must hold a JSON object with a 'results' "
                         f"list (or an object of lists, one per variant); got "
                         f"{type(data).__name__}"
                         + (f" with keys {first_of(sorted(data), 10)}"
                            if isinstance(data, dict) else "")
                         + ".")
    results = data["results"]
    if isinstance(results, dict):
        records = []
        for variant, recs in results.items():
            if not isinstance(recs, list):
                raise ValueError(f"read_pairs: 'results' of {str(path)!r} maps variants to "
                                 f"lists of records; variant {variant!r} holds a "
                                 f"{type(recs).__name__}.")
            # a record's own variant under another variant's key: which is it?
            own = [i for i, r in enumerate(recs) if isinstance(r, dict)
                   and r.get("variant", variant) != variant]
            if own:
                raise ValueError(f"read_pairs: 'results' of {str(path)!r} lists record "
                                 f"{own[0]} of variant {variant!r} with a 'variant' key of "
                                 f"its own, {shown_value(recs[own[0]]['variant'])} ({len(own)} "
                                 "such record(s)); drop the record's key or move it under "
                                 "its own variant.")
            records += [{**r, "variant": variant} if isinstance(r, dict) else r for r in recs]
    else:
        records = list(results)
    if not records:
        raise ValueError(f"read_pairs: the 'results' list of {str(path)!r} is empty.")
    bad = [i for i, r in enumerate(records) if not isinstance(r, dict)]
    if bad:
        raise ValueError(f"read_pairs: {len(bad)} record(s) of 'results' in {str(path)!r} are "
                         f"not JSON objects (first: {listed(bad)}).")
    meta = data.get("metadata")
    meta = dict(meta) if isinstance(meta, dict) else {}
    # a layout without a metadata block keeps its top-level scalars (e.g. "model")
    for key, value in data.items():
        if key in ("results", "metadata", "summary"):
            continue
        if key in meta and json.dumps(meta[key], sort_keys=True) != json.dumps(
                value, sort_keys=True):  # the top-level value would be dropped unread
            raise ValueError(f"read_pairs: {str(path)!r} gives {key!r} twice, differently: "
                             f"{shown_value(meta[key])} in 'metadata' and "
                             f"{shown_value(value)} at the top level; keep one.")
        meta.setdefault(key, value)
    return records, meta


def _run_label(meta: dict[str, Any], path: Path) -> str:
    settings = [(k, v) for k, v in meta.items() if k != "model" and not _is_bookkeeping(k)]
    model = meta.get("model")
    inner = ", ".join(f"{k}={_scalar(v)}" for k, v in settings)
    if model is None and not settings:
        return path.stem
    if model is None:
        return f"({inner})"
    return f"{model} ({inner})" if inner else str(model)


def _number(value: Any) -> float | None:
    """The float of a JSON number or null (NaN); None for anything else: a string (``"0.3"``),
    a boolean, an object or a list, and a number that is not finite (Python's json reads the
    tokens ``NaN`` and ``Infinity``, which JSON has not, and ``1e400`` as inf) or too large
    for a float (a 400-digit integer)."""
    if value is None:
        return np.nan
    if isinstance(value, bool | np.bool_) or not isinstance(value, int | float):
        return None
    try:
        number = float(value)
    except OverflowError:
        return None
    return number if np.isfinite(number) else None


def _numbers(key: str, values: list[Any], failed: list[bool], path: Path) -> pd.Series:
    """A numeric key's values as floats (null: NaN). A value that is not a JSON number is
    refused on a successful record, naming the key, the file and the records: read as a
    number (``"0.3"``, ``true``) it would be coerced without a word, read as NaN it would
    pass for "not resolved" or "not elicited". A failed record (not analysed) keeps NaN."""
    numbers = [_number(v) for v in values]
    bad = [i for i, n in enumerate(numbers) if n is None and not failed[i]]
    if bad:
        shown = listed(bad, show=lambda i: f"{i}: {shown_value(values[i])}")
        odd = [values[i] for i in bad]
        why = ""
        if any(isinstance(v, str) for v in odd):
            why += (" A number in quotes (\"0.3\") is a JSON string, not a JSON number: the "
                    "field's files write their numbers unquoted, so a quoted one points to a "
                    "bug of the file's writer and is not read as a number.")
        if any(isinstance(v, bool) for v in odd):
            why += (" A JSON boolean is not a number (true would read as 1): the field writes "
                    "resolutions as 0.0 / 1.0 and probabilities as numbers.")
        if any(isinstance(v, int | float) and not isinstance(v, bool) for v in odd):
            why += (" NaN and Infinity are not JSON numbers (Python's json writes them for a "
                    "float nan or inf; write null for a missing value), and a number too large "
                    "for a float (1e400) would read as inf.")
        raise ValueError(f"read_pairs: key '{key}' must hold numbers (or null) in "
                         f"{str(path)!r}; {len(bad)} record(s) of 'results' hold something "
                         f"else (first: {shown}): expected a finite JSON number, "
                         f"unquoted, or null.{why}")
    return pd.Series([np.nan if n is None else n for n in numbers], dtype=float)


def _is_label(value: Any) -> bool:
    return isinstance(value, str) or (isinstance(value, int)
                                      and not isinstance(value, bool | np.bool_))


def _check_labels(records: list[dict[str, Any]], path: Path) -> None:
    """Refuse a ``pair_id`` that is not a JSON string or integer (a float ``1.0``, which is
    pair ``1`` to Python and not ``"1"``; a boolean, null, an object or a list), a
    ``category`` or ``variant`` that is none of these nor null, and ids written two ways in
    one file (``1`` and ``"1"``): one pair would be split in two, or two merged, without a
    word."""
    for key, null in (("pair_id", False), ("category", True), ("variant", True)):
        bad = [i for i, r in enumerate(records) if key in r
               and not (_is_label(r[key]) or (null and r[key] is None))]
        if bad:
            shown = listed([f"{i}: {shown_value(records[i][key])}" for i in bad])
            why = (" A float id (1.0) is refused: Python would merge it with the integer 1 "
                   "and split it from the string \"1\", so which pair it names is not clear."
                   if any(isinstance(records[i][key], float) for i in bad) else "")
            raise ValueError(f"read_pairs: key '{key}' must hold JSON strings or integers"
                             f"{' (or null)' if null else ''} in {str(path)!r}; {len(bad)} "
                             f"record(s) of 'results' hold something else (first: {shown})."
                             f"{why}")
    ids = [r["pair_id"] for r in records]
    for group in case_collisions(ids):
        if len({type(v) for v in group}) > 1:
            where = [i for i, v in enumerate(ids) if any(v == g and type(v) is type(g)
                                                         for g in group)]
            raise ValueError(f"read_pairs: key 'pair_id' writes one id two ways in "
                             f"{str(path)!r}: {' / '.join(map(repr, group))} (records "
                             f"{listed(where)}); as integer and as text they would be two "
                             "pairs, as one id one pair. Write each id one way.")


def _check_key_sets(records: list[dict[str, Any]], ok: list[int], path: Path) -> None:
    """Refuse a successful record that holds some keys of a set written together but not
    the others: ``resolution_a`` without ``resolution_b`` (the run was read as one without
    resolutions, dropping ``resolution_a``), ``p_b`` without ``p_b_given_a1`` (the record
    left the Bayes columns without a word)."""
    for group in (_RESOLUTION_JSON, _REVERSE_JSON):
        bad = [i for i in ok if 0 < sum(k in records[i] for k in group) < len(group)]
        if bad:
            held = [k for k in group if k in records[bad[0]]]
            lacks = [k for k in group if k not in records[bad[0]]]
            raise ValueError(f"read_pairs: {len(bad)} successful record(s) of 'results' in "
                             f"{str(path)!r} hold some of the keys "
                             f"{', '.join(map(repr, group))} but not all (first: "
                             f"{listed(bad)}; record {bad[0]} holds "
                             f"{', '.join(map(repr, held))}, lacks "
                             f"{', '.join(map(repr, lacks))}); they are written together "
                             "(null for a missing value).")


def _read_pairs_json(path: Path) -> pd.DataFrame:
    records, meta = _records(_load_json(path), path)
    # the rule of conditional_forecasting and attach_outcomes: null, false, 0, "" are no error
    failed = failed_rows(pd.Series([r.get("error") for r in records], dtype=object)).tolist()
    keys = _checked_keys(records, failed, path)
    table = pd.DataFrame({_JSON_KEYS[k]: pd.Series([r.get(k) for r in records], dtype=object)
                          for k in keys})
    for k in keys:
        col = _JSON_KEYS[k]
        if col not in ("pair", "category"):
            table[col] = _numbers(k, [r.get(k) for r in records], failed, path)
    if any("variant" in r for r in records):
        table["variant"] = pd.Series([r.get("variant") for r in records], dtype=object)
    if any(failed):
        table["error"] = pd.Series([r.get("error") if f else np.nan
                                    for r, f in zip(records, failed, strict=True)],
                                   dtype=object)
    table["run"] = _run_label(meta, path)
    for key, value in sorted(meta.items(), key=lambda kv: kv[0] != "model"):
        col = f"metadata_{key}" if key in _OWN_COLUMNS else key
        table[col] = _scalar(value)
    table["source"] = str(path)
    return table


def _load_json(path: Path) -> Any:
    """The file's JSON, refused with the line where it is not UTF-8 or not JSON, or where
    one object names a key twice."""
    raw = path.read_bytes()
    try:
        data = json.loads(raw.decode("utf-8-sig"), object_pairs_hook=unique_keys)
    except DuplicateKeyError as exc:
        raise ValueError(f"read_pairs: {str(path)!r} names the key {exc.args[0]!r} twice in "
                         "one JSON object (JSON would silently keep the last, dropping the "
                         "other value: a record's forecast, or a variant's records).") from None
    except UnicodeDecodeError as exc:
        line = raw[:exc.start].count(b"\n") + 1
        raise ValueError(f"read_pairs: {str(path)!r} is not UTF-8 text (line {line}, byte "
                         f"{exc.start}: {exc.reason}).") from exc
    except json.JSONDecodeError as exc:
        raise ValueError(f"read_pairs: {str(path)!r} is not valid JSON (line {exc.lineno}, "
                         f"column {exc.colno}: {exc.msg}).") from exc
    return data


def _checked_keys(records: list[dict[str, Any]], failed: list[bool], path: Path) -> list[str]:
    """The keys of the records' table, after checking that every record holds the keys
    it needs (a failed one only ``pair_id``), that the successful ones have resolutions
    all or none, and that the keys written together are."""
    for key in _REQUIRED_JSON:
        bad = [i for i, r in enumerate(records)
               if key not in r and (key == "pair_id" or not failed[i])]
        if bad:
            raise ValueError(f"read_pairs: key '{key}' is missing from {len(bad)} record(s) of "
                             f"'results' in {str(path)!r} (first: {listed(bad)}); a failed "
                             "record (with an 'error' key) needs only 'pair_id'.")
    ok = [i for i, f in enumerate(failed) if not f]
    _check_labels(records, path)
    resolved = [i for i in ok if all(k in records[i] for k in _RESOLUTION_JSON)]
    if resolved and len(resolved) < len(ok):
        missing = sorted(set(ok) - set(resolved))
        raise ValueError(f"read_pairs: {len(missing)} successful record(s) of {str(path)!r} "
                         f"lack 'resolution_a'/'resolution_b' while {len(resolved)} have them "
                         f"(first without: {listed(missing)}); a run has resolutions for all "
                         "its pairs or for none.")
    _check_key_sets(records, ok, path)
    keys = list(_REQUIRED_JSON)
    if resolved or (not ok and any(k in r for r in records for k in _RESOLUTION_JSON)):
        keys += list(_RESOLUTION_JSON)
    if any(k in r for r in records for k in _REVERSE_JSON):
        keys += list(_REVERSE_JSON)
    return keys


# --------------------------------------------------------------------------- join
def attach_outcomes(pairs: Any, resolved: Any, *, missing: str = "raise", pair: str = "pair",
                    category: str = "category", error: str = "error") -> pd.DataFrame:
    """Give a run without resolutions the resolutions of another run of the same pairs.

    The field's two-direction (Bayes-consistency) runs store no resolutions;
    its one-direction runs of the same pairs do. Resolutions are facts about
    the questions, not about a run, so they can be borrowed by pair id; the
    forecasts are not (see Notes).

    Parameters
    ----------
    pairs : pandas.DataFrame or convertible
        The table to complete, e.g. :func:`read_pairs` of a two-direction run.
    resolved : pandas.DataFrame or convertible
        One or more runs with ``a_outcome`` and ``b_outcome``, e.g.
        :func:`read_pairs` of a one-direction run (several concatenated are
        fine). Failed rows are not used: a row fails when its ``error`` holds
        anything but a missing value, ``False``, the number 0 or a blank string
        (``True``, 1, a message); ``False``, 0 and ``""`` mean "no error", as a boolean
        or 0/1 flag or a CSV column of messages gives it.
    missing : {"raise", "skip"}, default "raise"
        What to do with a successful row of ``pairs`` whose pair has no
        resolution in ``resolved`` (say, its elicitation failed in the
        resolved run): raise, or leave the row out of the returned table with
        a :class:`SkippedRecordsWarning` that names the pairs.
    pair, category, error : str
        Column names of the pair id, the category and the failure flag. Pair ids
        are matched exactly: ids that differ only in type, case or surrounding
        spaces between the tables (``1`` and ``'1'``) raise.

    Returns
    -------
    pandas.DataFrame
        A copy of ``pairs`` with ``a_outcome`` and ``b_outcome`` filled from
        ``resolved`` (added when absent); failed rows of ``pairs`` are left as they are
        (the outcomes they hold are kept; NaN where the column is added).

    Raises
    ------
    ValueError
        When ``resolved`` lacks an outcome column, gives one pair two different
        outcomes or another category than ``pairs`` does, when a successful pair
        of ``pairs`` has no resolution in ``resolved`` (``missing="raise"``), or
        when ``pairs`` already holds an outcome that disagrees or is not a number
        (``'yes'``), or when a pair id is written two ways (``1`` and ``'1'``); each
        message names the pairs.

    Warns
    -----
    SkippedRecordsWarning
        With ``missing="skip"``, naming the rows left out.

    See Also
    --------
    read_pairs : read a result file into the pairs table.
    conditional_forecasting : the test run on the pairs table.

    Notes
    -----
    Only the resolutions move. The probabilities of each row stay those of
    its own run: a Bayes check that combined P(A | B) from one run with
    P(B | A) from another would mix two conversations, so a one-direction
    run is never completed with another run's P(B), P(B | A = 1),
    P(B | A = 0). To compare the runs, analyse them side by side (their
    cells are kept apart by ``run``).

    Examples
    --------
    >>> import pandas as pd
    >>> two_way = pd.DataFrame({"pair": ["x", "y"], "category": ["strong", "none"],
    ...                         "p_a": [0.3, 0.5], "p_b": [0.4, 0.5]})
    >>> one_way = pd.DataFrame({"pair": ["y", "x"], "category": ["none", "strong"],
    ...                         "a_outcome": [0.0, 1.0], "b_outcome": [1.0, 1.0]})
    >>> attach_outcomes(two_way, one_way)
      pair category  p_a  p_b  a_outcome  b_outcome
    0    x   strong  0.3  0.4        1.0        1.0
    1    y     none  0.5  0.5        0.0        1.0
    """
    owner = "attach_outcomes"
    missing = check_choice(missing, "missing", owner, ("raise", "skip"))
    target = as_dataframe(pairs, name="pairs", owner=owner).copy()
    source = as_dataframe(resolved, name="resolved", owner=owner)
    require_columns(target, {"pair": pair}, owner=owner)
    require_columns(source, {"pair": pair, "a_outcome": PAIR_OUTCOMES[0],
                             "b_outcome": PAIR_OUTCOMES[1]}, owner=owner)
    if error in source.columns:
        source = source.loc[~failed_rows(source[error])]
    for col in (pair, *PAIR_OUTCOMES):
        values = source[col]
        if col == pair:
            bad = values.isna()
            expected = "pair ids (no missing values)"
        else:
            numbers = pd.to_numeric(values.astype(object), errors="coerce")
            bad = values.notna() & ~numbers.isin([0.0, 1.0])
            expected = "outcomes 0 or 1 (or missing)"
        if bad.any():
            rows = listed(source.index[bad], show=plain_repr)
            raise ValueError(f"attach_outcomes: column '{col}' of 'resolved' must hold "
                             f"{expected}; {int(bad.sum())} offending row(s) (first: {rows}).")
    # as numbers: '1', 1 and True in two runs are one outcome, not two that clash
    outcomes = source.loc[:, [pair]].assign(**{
        col: pd.to_numeric(source[col].astype(object), errors="coerce").astype(float)
        for col in PAIR_OUTCOMES}).dropna(subset=list(PAIR_OUTCOMES))
    per_pair = outcomes.drop_duplicates()
    clash = per_pair[pair][per_pair[pair].duplicated()].unique().tolist()
    if clash:
        raise ValueError(f"attach_outcomes: 'resolved' gives {len(clash)} pair(s) two different "
                         f"outcomes (first: {listed(clash, show=repr)}).")
    check_ids([("pairs", target), ("resolved", source)], pair, owner="attach_outcomes")
    if category in target.columns and category in source.columns:
        cats = source.loc[source[category].notna(), [pair, category]].drop_duplicates()
        # ids as objects: a merge refuses int64 against string keys (ids that share no
        # value then simply have no resolution, named below)
        merged = target.loc[target[category].notna(), [pair, category]].astype(
            {pair: object}).merge(cats.astype({pair: object}), on=pair,
                                  suffixes=("", "_resolved"))
        # compared as text: a stray number in either column is another category (pandas'
        # arrow-backed strings refuse to compare with floats)
        differ = merged.loc[merged[category].astype(str)
                            != merged[f"{category}_resolved"].astype(str), pair]
        if len(differ):
            shown = listed(differ.unique().tolist(), show=repr)
            raise ValueError(f"attach_outcomes: {differ.nunique()} pair(s) have another "
                             f"'{category}' in 'resolved' than in 'pairs' (first: {shown}); are "
                             "they the same pairs?")
    lookup = per_pair.set_index(pair)
    ok = (~failed_rows(target[error]) if error in target.columns
          else pd.Series(True, target.index))
    # found by the lookup that fills them: isin() matched the ids True / False with 1 / 0,
    # which map() does not, and those rows were left unresolved without a word
    absent = ok & target[pair].map(lookup[PAIR_OUTCOMES[0]]).isna()
    if absent.any():
        # counted as pairs and as rows: a pair of several runs stands in several rows
        ids = target.loc[absent, pair].drop_duplicates().tolist()
        shown = listed(ids, show=plain_repr)
        rows = listed(target.index[absent], show=plain_repr)
        where = f"{int(absent.sum())} row(s) (first: {rows})"
        if missing == "raise":
            raise ValueError(f"attach_outcomes: {len(ids)} pair(s) of 'pairs' have no "
                             f"resolution in 'resolved' (first: {shown}), in {where}; select "
                             "the pairs both runs share first, or pass missing='skip'.")
        warnings.warn(f"attach_outcomes: {len(ids)} pair(s) of 'pairs' have no "
                      f"resolution in 'resolved' and their {where} are left out; the pairs: "
                      f"{shown}.", SkippedRecordsWarning, stacklevel=2)
        target, ok = target.loc[~absent], ok.loc[~absent]
    for col in PAIR_OUTCOMES:
        new = target[pair].map(lookup[col]).where(ok).astype(float)
        if col in target.columns:
            old = pd.to_numeric(target[col].astype(object), errors="coerce")
            # a value that is not a number ('yes') would read as missing and be overwritten
            # unchecked: refuse it, as conditional_forecasting does
            text = target[col].notna() & old.isna() & new.notna()
            if text.any():
                shown = listed([f"{plain_value(i)!r} = {v!r}" for i, v in
                                target.loc[text, col].items()])
                raise ValueError(f"attach_outcomes: column '{col}' of 'pairs' must hold "
                                 f"outcomes 0 or 1 (or missing); {int(text.sum())} row(s) "
                                 f"hold something else (first: {shown}).")
            differ = old.notna() & new.notna() & (old != new)
            if differ.any():
                labels = listed(target.index[differ].tolist(), show=repr)
                raise ValueError(f"attach_outcomes: column '{col}' of 'pairs' already holds "
                                 f"outcomes that 'resolved' contradicts in {int(differ.sum())} "
                                 f"row(s) (first: {labels}).")
        # a failed row is left as it is: its own outcomes (or none) are not replaced
        kept = (target[col] if col in target.columns
                else pd.Series(np.nan, target.index)).astype(object).where(~ok, new)
        numbers = pd.to_numeric(kept, errors="coerce")
        target[col] = kept if (kept.notna() & numbers.isna()).any() else numbers.astype(float)
    return target
