"""Reading the consistency tuples of Paleka et al.'s released files.

:func:`read_consistency_tuples` turns the authors' JSON-lines files (one tuple of
questions a line, with the forecasts and, where published, the violations) into
the table :func:`coherence.consistency_check` takes; the checkers themselves are
in :mod:`._checks`.
"""

from __future__ import annotations

import json
import numbers
import os
from collections.abc import Iterable
from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .._validation import listed
from .._validation import narrow_float
from .._validation import param_error
from ._checks import checker_spec

__all__ = ["DuplicateKeyError", "read_consistency_tuples", "shown_value", "unique_keys"]


class DuplicateKeyError(ValueError):
    """A JSON object names one key twice (``json`` would keep the last); its one argument
    is the key."""


def unique_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    """A JSON object's pairs as a dict (``json.loads``' ``object_pairs_hook``), refusing a
    key written twice: ``json.loads`` keeps the last of ``{"P": 0.3, "P": 0.9}``, silently
    dropping the other forecast (or a variant's list of records in a pairs file)."""
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise DuplicateKeyError(key)
        out[key] = value
    return out


class _NotProbability:
    """A forecast that is not a number in [0, 1], kept to be named with the others."""

    def __init__(self, value: Any) -> None:
        self.value = value


def _prob(entry: Any, key: str, line_no: int) -> float | _NotProbability:
    """The forecast of one question in a released line: ``forecast.prob``, ``prob`` or
    ``elicited_prob``, as a float; a value that is not a number in [0, 1] wrapped."""
    if isinstance(entry, Mapping):
        forecast = entry.get("forecast")
        given = {name: v for name, v in (
            ("forecast.prob", forecast.get("prob") if isinstance(forecast, Mapping) else None),
            ("prob", entry.get("prob")), ("elicited_prob", entry.get("elicited_prob")))
            if v is not None}
        # two forecasts of one question that differ: keeping the first would drop the other
        if len({_float(v) if isinstance(v, numbers.Real) and not isinstance(v, bool)
                and np.isfinite(_float(v)) else repr(v) for v in given.values()}) > 1:
            raise ValueError(f"read_consistency_tuples: line {line_no}, question '{key}' "
                             f"gives its forecast twice, differently ({given}); expected one "
                             "of 'forecast': {'prob': ...}, 'prob' or 'elicited_prob'.")
        value = next(iter(given.values()), None)
    else:  # the forecast itself: a number, or a value named below as not one ('0.3')
        value = entry
    if value is None:
        raise ValueError(f"read_consistency_tuples: line {line_no}, question '{key}' has no "
                         "forecast (expected 'forecast': {'prob': ...}, 'prob' or "
                         "'elicited_prob').")
    # a JSON boolean or a string is not a probability (float(True) would be 1.0), nor is
    # NaN, inf or an integer too large for a float: kept as it is and named, with the other
    # offending forecasts, by _refuse_forecasts
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real) \
            or not 0.0 <= _float(value) <= 1.0:
        return _NotProbability(value)
    # a float32 forecast is read as the decimal it prints as (0.3, not 0.30000001192),
    # as probability_column reads a float32 column
    return float(narrow_float(value))


def _float(value: numbers.Real) -> float:
    """A JSON number as a float; NaN for an integer too large for one (``float(10**400)``
    raises OverflowError), which is then refused as not a number in range."""
    try:
        return float(value)
    except OverflowError:
        return np.nan


def shown_value(value: Any) -> str:
    """``repr(value)``, cut to 40 characters, as the readers' errors show a value."""
    text = repr(value)
    return text if len(text) <= 40 else text[:37] + "..."


def _numeric_text(value: Any) -> bool:
    """Whether ``value`` is a number in quotes (``"0.3"``)."""
    if not isinstance(value, str):
        return False
    try:
        float(value)
    except ValueError:
        return False
    return True


def _refuse_forecasts(bad: list[tuple[int, str, Any]]) -> None:
    """Refuse the forecasts that are not numbers in [0, 1] (line, question, value): the
    first in full, every one counted and the first five named. A number in quotes
    (``"0.3"``) is refused too, saying why: the checkers read numbers written as text in
    a table (a CSV gives them back so), but a JSON file has numbers of its own."""
    if not bad:
        return
    line_no, key, value = bad[0]
    shown = listed(bad, sep="; ",
                   show=lambda b: f"line {b[0]}, question '{b[1]}': {shown_value(b[2])}")
    why = ""
    if any(_numeric_text(v) for _, _, v in bad):
        why = (" A number in quotes is a JSON string, not a JSON number: the released "
               "files write their forecasts unquoted, so a quoted one points to a bug of "
               "the file's writer and is not read as a number (consistency_check does read "
               "numbers written as text in a table column, as a CSV gives them back; a "
               "JSON file has a number type of its own).")
    if any(isinstance(v, numbers.Real) and not isinstance(v, bool | np.bool_)
           and not np.isfinite(_float(v)) for _, _, v in bad):
        why += (" NaN and Infinity are not JSON numbers (Python's json writes them for a "
                "float nan or inf, and reads them back), and a number too large for a float "
                "(1e400) reads as inf.")
    raise ValueError(f"read_consistency_tuples: line {line_no}, question '{key}': the "
                     f"forecast must be a number in [0, 1]; got {shown_value(value)} ({len(bad)} "
                     f"forecast(s) are not: {shown}).{why}")


_FORECAST_KEYS = frozenset({"forecast", "prob", "elicited_prob"})


def _tuple_key(body: Mapping[str, Any], questions: tuple[str, ...],
               row: Mapping[str, Any]) -> str | None:
    """The tuple of a line as text, to find a line given twice: the questions (what a
    released line holds besides the forecasts: their ids, titles, bodies) with their
    forecasts, as read into ``row`` (a number: ``1`` and ``1.0`` are one forecast). None
    when a question is its forecast alone (``{"P": 0.3}``): two tuples of other questions
    with equal forecasts cannot be told from one given twice."""
    if not all(isinstance(body[q], Mapping) and set(body[q]) - _FORECAST_KEYS
               for q in questions):
        return None
    entries = {}
    for q in questions:
        entry = dict(body[q])
        if isinstance(row[q], float):  # else refused, as not a forecast, before the copies
            value = row[q] + 0.0  # -0.0 is 0
            for name in ("prob", "elicited_prob"):
                if entry.get(name) is not None:
                    entry[name] = value
            forecast = entry.get("forecast")
            if isinstance(forecast, Mapping) and forecast.get("prob") is not None:
                entry["forecast"] = {**forecast, "prob": value}
        entries[q] = entry
    return json.dumps(entries, sort_keys=True, default=repr)


def _refuse_repeats(keys: list[tuple[int, str | None]]) -> None:
    """Refuse lines that give one tuple twice (the same questions, the same forecasts),
    naming each copy and the line it repeats: it would count twice in every mean, median
    and share."""
    first: dict[str, int] = {}
    repeats: list[tuple[int, int]] = []
    for line_no, key in keys:
        if key is None:
            continue
        if key in first:
            repeats.append((line_no, first[key]))
        else:
            first[key] = line_no
    if repeats:
        shown = listed([f"line {n} (as line {m})" for n, m in repeats], counted=True)
        raise ValueError(f"read_consistency_tuples: {len(repeats)} line(s) repeat the tuple "
                         f"of an earlier line (the same questions with the same forecasts): "
                         f"{shown}; expected each tuple once (a copy counts twice in "
                         "every mean, median and share). Drop the copies.")


def _published(entry: Any, key: str, line_no: int) -> float:
    """The published violation ``violation_data[key]["violation"]`` of a released line:
    NaN where the line has none (no entry, or ``null``); a number otherwise. As a forecast
    is, a JSON boolean or a string (``true``, ``"0.12"``) is refused, not read as NaN (which
    would pass for "no published value"), and so is an integer too large for a float (it
    raised a bare OverflowError). The tokens ``NaN`` and ``Infinity``, which Python's json
    writes for a float nan or inf, read as NaN and inf: a violation may be infinite, and a
    NaN one gives no number to compare, as no published value does."""
    if entry is None:
        return np.nan
    if not isinstance(entry, Mapping):
        raise ValueError(f"read_consistency_tuples: line {line_no}: its 'violation_data' "
                         f"key '{key}' is not a JSON object (expected {{'violation': ...}}); "
                         f"got {entry!r}.")
    value = entry.get("violation")
    if value is None:
        return np.nan
    too_large = isinstance(value, numbers.Integral) and np.isnan(_float(value))
    if isinstance(value, bool | np.bool_) or not isinstance(value, numbers.Real) or too_large:
        raise ValueError(f"read_consistency_tuples: line {line_no}: the published violation "
                         f"'violation_data' key '{key}' must be a number; got "
                         f"{shown_value(value)}"
                         + (" (too large for a float)" if too_large else "")
                         + ".")
    return float(value)


def _tuple_rows(records: Iterable[Any], questions: tuple[str, ...], checker: str,
                owner: str) -> list[dict[str, Any]]:
    """The rows of the tuples of ``records`` (lines of text or parsed records) of the checker
    ``checker`` asking ``questions``, each line checked; ``ValueError`` naming the line (and
    question, key) otherwise."""
    rows: list[dict[str, Any]] = []
    bad: list[tuple[int, str, Any]] = []
    keys: list[tuple[int, str | None]] = []
    for line_no, rec in enumerate(records, start=1):
        if isinstance(rec, str):
            if not rec.strip():
                continue
            try:
                rec = json.loads(rec, object_pairs_hook=unique_keys)
            except json.JSONDecodeError as exc:
                raise ValueError(f"{owner}: line {line_no} is not valid JSON ({exc.msg}).") \
                    from exc
            except DuplicateKeyError as exc:
                raise ValueError(f"{owner}: line {line_no} names the key {exc.args[0]!r} "
                                 "twice in one object (a question or forecast given twice; "
                                 "JSON would silently keep the last).") from None
        if not isinstance(rec, Mapping):
            raise ValueError(f"{owner}: line {line_no} is not a JSON object.")
        body = rec.get("line", rec)
        if not isinstance(body, Mapping):  # a string would be searched for the names
            raise ValueError(f"{owner}: line {line_no}: its 'line' is not a JSON object of "
                             f"questions (got {type(body).__name__}).")
        missing = [q for q in questions if q not in body]
        if missing:
            raise ValueError(f"{owner}: line {line_no} lacks question(s) {missing} of the "
                             f"'{checker}' checker (expected {list(questions)}).")
        row = {q: _prob(body[q], q, line_no) for q in questions}
        bad += [(line_no, q, v.value) for q, v in row.items()
                if isinstance(v, _NotProbability)]
        keys.append((line_no, _tuple_key(body, questions, row)))
        vd = rec.get("violation_data") or {}
        if not isinstance(vd, Mapping):
            raise ValueError(f"{owner}: line {line_no}: its 'violation_data' is not a JSON "
                             f"object (got {type(vd).__name__}).")
        for key, col in (("default", "published_arbitrage"),
                         ("default_scaled", "published_arbitrage_scaled"),
                         ("frequentist", "published_frequentist")):
            row[col] = _published(vd.get(key), key, line_no)
        rows.append(row)
    if not rows:
        raise ValueError(param_error("source", owner, "at least one tuple",
                                     "no tuples (no line holds one)"))
    _refuse_forecasts(bad)
    _refuse_repeats(keys)
    return rows


def read_consistency_tuples(source: Any, *, checker: str | None = None) -> pd.DataFrame:
    """Read tuples in the layout of Paleka et al.'s released files into a table.

    Reads the JSON-lines files the authors released (one per checker: NegChecker.jsonl,
    ...) into the table :func:`consistency_check` takes, keeping the published
    violations beside the forecasts for comparison. A tuple given twice, or a forecast
    written as text, raises and names the line.

    Parameters
    ----------
    source : path, or iterable of str or dict
        A JSON-lines file (one tuple per line), or its lines, or the parsed
        records. A line is ``{"line": {question: {"forecast": {"prob": p}, ...}},
        "violation_data": {...}}`` (their evaluation output) or
        ``{question: {..., "prob" | "elicited_prob": p}}``. One record alone (a
        dict, not in a list) raises ``TypeError``.
    checker : str, optional
        The checker; when omitted, taken from the file name (``NegChecker.jsonl``).

    Returns
    -------
    pandas.DataFrame
        One row per tuple, one column per question (the forecast probability),
        and, when the file carries them, the published values
        ``published_arbitrage``, ``published_arbitrage_scaled`` and
        ``published_frequentist`` (NaN where a line has none). ``attrs["checker"]``
        holds the checker's name.

    Raises
    ------
    ValueError
        For an unknown checker, a file that is not UTF-8 text or holds no
        tuple, a line that is not JSON or names a key twice in one object
        (``{"P": ..., "P": ...}``: JSON would keep the last), or a tuple that lacks
        a question or whose forecast is not a number in [0, 1] (a JSON boolean is
        not one, nor a number in quotes, ``"0.3"``: see Notes; every such forecast is
        counted, the first five named by line and question) or is given twice,
        differently (``forecast.prob`` and ``prob``), or a published violation that is
        not a number (a JSON boolean, a string such as ``"0.12"`` or an integer too
        large for a float; ``null`` or no entry is NaN, no published value), or a line
        that repeats the tuple of an earlier line (see Notes); the line and key are
        named, and the file when ``source`` is one.
    TypeError
        For a ``source`` that is neither a path nor an iterable of lines or
        records, among them a single record (a dict: pass ``[record]``), a
        pandas DataFrame or bytes, whose items would be read as lines.

    See Also
    --------
    consistency_check : run one checker over the tuples read.
    brier_decomposition : the Brier score of the same sets, with its incoherence term.

    Notes
    -----
    **Numbers in quotes.** A forecast written ``"0.3"`` is refused, although
    :func:`consistency_check` reads a table column of numbers written as text (as a
    CSV file or a string column gives them back, docs/errors.md): a JSON file has a
    number type of its own, the released files write their forecasts with it, and a
    quoted one points to a bug of the file's writer.

    **A tuple given twice.** A line whose questions (their ids, titles, bodies: what a
    released line holds besides the forecasts) and forecasts are those of an earlier
    line is refused, naming both lines: the copy would count twice in every mean,
    median and share; forecasts are compared as numbers (``1`` and ``1.0`` are one).
    None of the authors' released files checked holds such a line.
    Lines whose questions are their forecasts alone (``{"P": 0.3, "not_P": 0.7}``) are
    not compared: two tuples of other questions may have equal forecasts.

    **NaN and Infinity.** Python's ``json`` writes a float nan or inf as the tokens
    ``NaN`` and ``Infinity``, which JSON has not, and reads them back (and reads
    ``1e400`` as inf). As a forecast each is refused, not being a number in [0, 1]. As
    a published violation ``Infinity`` reads as inf (a violation may be infinite) and
    ``NaN`` as NaN, the same as no published value: either gives no number to compare.
    A byte-order mark and CRLF line ends are read as usual.
    """
    owner = "read_consistency_tuples"
    records: Iterable[Any]
    path: str | None = None
    if isinstance(source, str | os.PathLike):
        path = os.fspath(source)
        if checker is None:
            checker = os.path.splitext(os.path.basename(path))[0]
        with open(path, "rb") as fh:
            raw = fh.read()
        try:
            text = raw.decode("utf-8-sig")
        except UnicodeDecodeError as exc:
            line_no = raw[:exc.start].count(b"\n") + 1
            raise ValueError(f"{owner}: {path!r} is not UTF-8 text (line {line_no}, byte "
                             f"{exc.start}: {exc.reason}).") from exc
        if not text.strip():
            raise ValueError(f"{owner}: {path!r} holds no tuples (the file is empty or "
                             "whitespace only).")
        records = text.splitlines()
    elif isinstance(source, Mapping | pd.DataFrame | bytes | bytearray):
        # iterated, a record gives its keys, a table its column names, bytes their
        # integers: each then read as a line that is not JSON ('line 1 is not valid JSON')
        what = (f"one record, a {type(source).__name__} (pass a list of records: [record])"
                if isinstance(source, Mapping) else f"a {type(source).__name__}")
        raise TypeError(param_error("source", owner, "a path, or an iterable of JSON lines "
                                    "(str) or of parsed records (dict)", what))
    elif isinstance(source, Iterable):
        records = source
    else:
        raise TypeError(param_error("source", owner, "a path or an iterable of lines or "
                                    "records", type(source).__name__))
    if checker is None:
        raise ValueError(param_error("checker", owner, "given when source is not a file "
                                     "named after the checker", None))
    spec = checker_spec(checker, owner)
    try:
        rows = _tuple_rows(records, spec.questions, spec.name, owner)
    except ValueError as exc:
        if path is None:
            raise
        # named with the file too: a study reads several checkers' files at once
        raise ValueError(str(exc).replace(f"{owner}: ", f"{owner}: {path!r}: ", 1)) \
            from exc.__cause__
    out = pd.DataFrame(rows, columns=[*spec.questions, "published_arbitrage",
                                      "published_arbitrage_scaled", "published_frequentist"])
    if out[["published_arbitrage", "published_arbitrage_scaled",
            "published_frequentist"]].isna().all().all():
        out = out[list(spec.questions)]
    out.attrs["checker"] = spec.name
    return out
