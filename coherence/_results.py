"""Result objects shared by every test of the toolkit.

Each test family returns one frozen, slotted dataclass that subclasses
:class:`CoherenceResult`. The common fields are ``statistic``, ``pvalue``,
``confidence_interval`` (a :class:`ConfidenceInterval`), ``n_obs`` and
``method``; subclasses add the settings they used and any large arrays
(hidden from ``repr`` and made read-only). ``to_frame()`` returns one tidy row
with a fixed schema: the :data:`RESULT_COLUMNS` followed by the settings a
subclass names in its class statement (``class R(CoherenceResult,
test_name="r_test", settings=("alpha", ...))``). Every result also has ``table``, a
:class:`pandas.DataFrame` with its main per-unit detail (per pair, per prompt,
per row, ...; the one-row ``to_frame()`` when there is no natural detail).
``summary()`` is the only place that formats; it returns a :class:`Summary`,
text that also renders as an HTML table in a notebook. Reports are built from
these objects, never by re-computation.
"""

from __future__ import annotations

import dataclasses
import html
import inspect
import math
from collections.abc import Iterable
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from typing import ClassVar
from typing import NamedTuple

import numpy as np
import pandas as pd

from ._text import result_level
from ._text import significant
from ._validation import plain_labels

__all__ = ["RESULT_COLUMNS", "CoherenceResult", "ConfidenceInterval", "Summary"]

RESULT_COLUMNS: tuple[str, ...] = (
    "test",
    "method",
    "statistic",
    "pvalue",
    "ci_low",
    "ci_high",
    "confidence_level",
    "n_obs",
)


class ConfidenceInterval(NamedTuple):
    """A confidence interval: ``low``, ``high`` and its ``confidence_level``."""

    low: float
    high: float
    confidence_level: float


class Summary(str):
    """The formatted report of a result: text that also renders as HTML.

    A :class:`str` (so ``print(s)``, ``"x" in s`` and string comparisons work
    as on plain text); ``repr()`` is the text itself, so a summary shown at a
    prompt reads as printed, and :meth:`_repr_html_` draws the same content
    as HTML tables in a notebook.

    Parameters
    ----------
    text : str
        The plain-text report.
    title : str
        Heading of the HTML rendering (default: the first line of ``text``).
    rows : iterable of (str, str)
        (name, formatted value) pairs of the HTML header table.
    tables : iterable of (str, pandas.DataFrame)
        (caption, frame) pairs drawn below the header table.
    """

    heading: str
    rows: tuple[tuple[str, str], ...]
    tables: tuple[tuple[str, pd.DataFrame], ...]
    #: the result's own test levels (1 - its confidence level): no p-value in the tables
    #: is rounded across one, as none is across 0.05
    _levels: tuple[float, ...] = ()

    def __new__(cls, text: str, *, title: str | None = None,
                rows: Iterable[tuple[str, str]] = (),
                tables: Iterable[tuple[str, pd.DataFrame]] = ()) -> Summary:
        self = super().__new__(cls, text)
        self.heading = text.split("\n", 1)[0] if title is None else title
        self.rows = tuple((str(k), str(v)) for k, v in rows)
        self.tables = tuple(tables)
        return self

    def __repr__(self) -> str:
        return str.__str__(self)

    def __str__(self) -> str:
        return str.__str__(self)

    def extend(self, text: str, *, tables: Iterable[tuple[str, pd.DataFrame]] = ()
               ) -> Summary:
        """A new summary with ``text`` appended and ``tables`` added to the HTML."""
        out = Summary(str.__str__(self) + text, title=self.heading, rows=self.rows,
                      tables=(*self.tables, *tables))
        out._levels = self._levels
        return out

    def _float(self, x: float) -> str:
        return format_float(x, self._levels)

    def with_table(self, caption: str, table: pd.DataFrame, *, lead: Iterable[str] = ()
                   ) -> Summary:
        """A new summary with the ``lead`` lines and then ``table`` appended.

        The lines and the table's text are indented by two spaces, as the
        header rows are; the HTML draws ``table`` under ``caption``.
        """
        body = table.to_string(index=False, float_format=self._float)
        lines = [*lead, *body.splitlines()]
        return self.extend("\n" + "\n".join("  " + line for line in lines),
                           tables=[(caption, table)])

    def _repr_html_(self) -> str:
        if not self.rows and not self.tables:
            return f"<pre>{html.escape(str.__str__(self))}</pre>"
        parts = ["<div class='coherence-summary'>",
                 f"<table><caption><b>{html.escape(self.heading)}</b></caption><tbody>"]
        parts += [f"<tr><th style='text-align:left'>{html.escape(k)}</th>"
                  f"<td style='text-align:left'>{html.escape(v)}</td></tr>"
                  for k, v in self.rows]
        parts.append("</tbody></table>")
        for caption, frame in self.tables:
            body = frame.to_html(index=False, escape=True, na_rep="NaN",
                                 float_format=self._float)
            parts.append(f"<p><b>{html.escape(caption)}</b></p>{body}")
        parts.append("</div>")
        return "".join(parts)


def _freeze(value: Any) -> Any:
    if isinstance(value, np.ndarray) and value.flags.writeable:
        value.flags.writeable = False
    return value


#: The annotations of a result's detail fields: left out of ``repr`` and of ``==``.
DETAIL_ANNOTATIONS: tuple[str, ...] = ("pd.DataFrame", "np.ndarray")


def _hide_details(cls: type) -> None:
    """Leave every detail field of the result class ``cls`` out of ``repr`` and ``==``.

    A detail field is one annotated ``pd.DataFrame`` or ``np.ndarray`` (as text under
    ``from __future__ import annotations``, or the class itself): a per-unit table
    or array, large, and not comparable with ``==`` (an array's comparison is itself an
    array). Runs on the class statement, before ``@dataclass`` reads the fields: a bare
    annotation becomes ``field(repr=False, compare=False)``; a ``field(...)`` with a
    default keeps it and gets ``repr=False, compare=False``. ``==`` then compares the
    headline figures and the settings, as ``to_frame()`` shows them.
    """
    if "__dataclass_fields__" in cls.__dict__:  # the slots pass: the fields exist
        return
    for name, annotation in inspect.get_annotations(cls).items():
        if annotation not in DETAIL_ANNOTATIONS and annotation not in (pd.DataFrame,
                                                                       np.ndarray):
            continue
        spec = cls.__dict__.get(name, dataclasses.MISSING)
        if spec is dataclasses.MISSING:
            spec = dataclasses.field()
        elif not isinstance(spec, dataclasses.Field):
            raise TypeError(f"class {cls.__name__}: the detail field {name!r} takes its "
                            f"default from field(default_factory=...); got {spec!r}")
        spec.repr = False
        spec.compare = False
        setattr(cls, name, spec)


@dataclass(frozen=True, slots=True)
class CoherenceResult:
    """Base class of every test result.

    Attributes
    ----------
    statistic : float
        The test statistic, in the units the test documents.
    pvalue : float
        The p-value (NaN when the method gives none).
    confidence_interval : ConfidenceInterval
        Interval for the quantity the statistic estimates.
    n_obs : int
        Number of rows (observations) used.
    method : str
        The procedure that produced the p-value and interval.

    Notes
    -----
    A subclass's detail fields (annotated ``pd.DataFrame`` or ``np.ndarray``) are left
    out of ``repr`` and of ``==``, which compares the headline figures and settings.
    A setting given as ``np.str_`` (a column name read from an array) is recorded as a
    plain ``str``, also inside a tuple, list or dict.

    A result unpacks as ``(statistic, pvalue)``, like scipy's results:
    ``stat, p = coherence.ci_test(data)``. It keeps every attribute; ``len()``
    is 2 and ``result[0]``, ``result[1]`` are the statistic and the p-value.
    """

    statistic: float
    pvalue: float
    confidence_interval: ConfidenceInterval
    n_obs: int
    method: str

    #: Name of the test, first column of ``to_frame()`` (a subclass's ``test_name=``).
    _test_name: ClassVar[str] = "result"
    #: Settings fields appended, in this order, to the ``to_frame()`` schema
    #: (a subclass's ``settings=``).
    _extra_columns: ClassVar[tuple[str, ...]] = ()
    #: The detail table :meth:`summary` shows after the headline figures: its caption and
    #: the columns of ``table`` shown (None: all of them); None shows none.
    _summary_table: ClassVar[tuple[str, tuple[str, ...] | None] | None] = None

    def __init_subclass__(cls, *, test_name: str | None = None,
                          settings: Iterable[str] | None = None, **kwargs: Any) -> None:
        """Record a result class's test name and settings from its class statement.

        ``class IIAResult(CoherenceResult, test_name="iia_test", settings=(...))``
        names the test (the ``test`` column of ``to_frame()``, the title of
        ``summary()``) and the settings fields that follow the common columns,
        in order. ``dataclass(slots=True)`` builds the class a second time
        without the keywords; what the first pass recorded is kept.
        """
        # named super(): dataclass(slots=True) replaced the class the bare
        # form's ``__class__`` cell would point to
        super(CoherenceResult, cls).__init_subclass__(**kwargs)
        _hide_details(cls)
        if test_name is not None:
            if not isinstance(test_name, str) or not test_name:
                raise TypeError(f"class {cls.__name__}: 'test_name' must be a non-empty str; "
                                f"got {test_name!r}")
            cls._test_name = test_name
        if settings is not None:
            names = () if isinstance(settings, str) else tuple(settings)
            if isinstance(settings, str) or not all(isinstance(n, str) for n in names):
                raise TypeError(f"class {cls.__name__}: 'settings' must be a tuple of field "
                                f"names (str); got {settings!r}")
            cls._extra_columns = names

    def __post_init__(self) -> None:
        build = getattr(self, "_build_table", None)
        if build is not None:  # a detail table derived from the other fields
            object.__setattr__(self, "table", build())
        for f in dataclasses.fields(self):
            value = getattr(self, f.name)
            plain = plain_labels(value)
            if plain is not value:  # a label given as np.str_ is recorded as a str
                object.__setattr__(self, f.name, plain)
            _freeze(plain)

    # Unpacking as scipy's results do: ``statistic, pvalue = result``; every
    # attribute stays available. Only these two fields are a sequence: ``len()``
    # is 2 and ``result[0]``, ``result[1]`` (or ``result[-1]``, slices) index them.
    def __iter__(self) -> Iterator[float]:
        return iter((self.statistic, self.pvalue))

    def __len__(self) -> int:
        return 2

    def __getitem__(self, index: int | slice) -> Any:
        return (self.statistic, self.pvalue)[index]

    @property
    def table(self) -> pd.DataFrame:
        """The detail table (the one-row :meth:`to_frame` for results with no other detail).

        Result classes with a per-unit table (per pair, per prompt, per row,
        ...) override this with a field of the same name.
        """
        return self.to_frame()

    @property
    def n(self) -> int:
        """Alias of ``n_obs`` (the result contract of docs/design.md names it ``n_obs``)."""
        return self.n_obs

    @classmethod
    def frame_columns(cls) -> tuple[str, ...]:
        """The fixed column schema of ``to_frame()`` for this result class."""
        return RESULT_COLUMNS + cls._extra_columns

    def settings(self) -> dict[str, Any]:
        """The settings this result records, by name."""
        return {name: getattr(self, name) for name in self._extra_columns}

    def _repr_html_(self) -> str:
        """The :meth:`summary` as HTML tables (how Jupyter shows a result)."""
        return self.summary()._repr_html_()

    def to_frame(self) -> pd.DataFrame:
        """One tidy row with the fixed schema :meth:`frame_columns`."""
        ci = self.confidence_interval
        row: dict[str, Any] = {
            "test": self._test_name,
            "method": self.method,
            "statistic": float(self.statistic),
            "pvalue": float(self.pvalue),
            "ci_low": float(ci.low),
            "ci_high": float(ci.high),
            "confidence_level": float(ci.confidence_level),
            "n_obs": int(self.n_obs),
        }
        for name in self._extra_columns:
            value = getattr(self, name)
            row[name] = value if np.isscalar(value) or value is None else repr(value)
        return pd.DataFrame([row], columns=list(self.frame_columns()))

    def summary(self) -> Summary:
        """A short human-readable report of the result (text; HTML in a notebook)."""
        ci = self.confidence_interval
        level = ci.confidence_level
        # a p-value is not rounded across the level the result tests at (IIA's violates:
        # adjusted p <= 1 - confidence_level) either
        levels: tuple[float, ...] = (result_level(level),) if 0 < level < 1 else ()
        rows = [
            ("statistic", format_number(self.statistic)),
            ("p-value", format_number(self.pvalue, levels)),
            (f"{100 * level:g}% CI", f"[{format_number(ci.low)}, {format_number(ci.high)}]"),
            ("n_obs", str(self.n_obs)),
        ]
        for name, value in self.settings().items():
            text = format_number(value) if isinstance(value, float) else str(value)
            rows.append((name, text))
        title = f"{self._test_name} ({self.method})"
        width = max(13, *(len(label) for label, _ in rows))  # a long setting's name too
        lines = [title, *(f"  {label:<{width}} {text}" for label, text in rows)]
        summary = Summary("\n".join(lines), title=title, rows=rows)
        summary._levels = levels
        if self._summary_table is None:
            return summary
        caption, columns = self._summary_table
        table: pd.DataFrame = self.table
        return summary.with_table(caption, table if columns is None else table[list(columns)])


def format_float(x: float, levels: Iterable[float] = ()) -> str:
    """A table cell's float, to four significant digits, with more where four would round
    it across 0.05 or one of ``levels`` (:func:`coherence._text.significant`: a p-value of
    0.049996 read "0.05" next to ``violates True``)."""
    return significant(float(x), 4, levels)


def format_number(x: float, levels: Iterable[float] = ()) -> str:
    """A summary's number: NaN as "nan", a float as :func:`format_float` shows it."""
    if x is None or (isinstance(x, float) and math.isnan(x)):
        return "nan"
    if isinstance(x, float | np.floating):
        return format_float(x, levels)
    return str(x)
