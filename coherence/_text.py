"""Plain-text tables: what the report's summary, its Markdown and the command line print."""

from __future__ import annotations

import math
import re
import unicodedata
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["SHADING_ALPHA", "cell_label", "cell_text", "cell_verdicts", "display_width",
           "guarded", "one_line", "result_level", "significant", "text_table", "truth_cells"]

#: The level the report shades p-values below: a number is never rounded across it.
SHADING_ALPHA = 0.05


def significant(value: float, digits: int, levels: Iterable[float] = ()) -> str:
    """``value`` to ``digits`` significant digits, with more where rounding would put it
    on the other side of :data:`SHADING_ALPHA` (an adjusted p-value of 0.049996 read
    "0.05" in the summary while the HTML page shaded it as below 0.05) or of one of
    ``levels`` (a result's own level: 0.009999 read "0.01" beside ``violates True`` at
    0.01), or onto it (:func:`guarded`).

    Examples
    --------
    >>> significant(0.049996, 4), significant(0.123456, 4), significant(0.009999, 3, [0.01])
    ('0.049996', '0.1235', '0.009999')
    >>> significant(0.05, 4), significant(0.0500001, 4)
    ('0.05', '0.0500001')

    A negative zero reads 0 (it read "-0"); no other value is shown as zero.
    """
    value = value + 0.0  # -0.0 + 0.0 is 0.0
    return guarded(value, lambda d: f"{value:.{d}g}", digits, levels)


def guarded(value: float, render: Callable[[int], str], digits: int,
            levels: Iterable[float] = ()) -> str:
    """``render(digits)``, with more digits while the number it shows lies on another side
    of :data:`SHADING_ALPHA` or of one of ``levels`` than ``value`` does: below, above, or
    on it. A verdict ``p < level`` and one ``p <= level`` (IIA's ``violates``) both read
    the same off the number shown as off ``value``: 0.0500001 read "0.05" beside
    ``violates False`` at 0.05, and a value shows as the level only when it is the level.
    Past 17 digits, ``repr(value)``, which reads back as ``value``."""
    value = float(value)
    bounds = (SHADING_ALPHA, *map(float, levels))

    def side(x: float, a: float) -> int:
        return (x > a) - (x < a)

    text = render(digits)
    while any(side(float(text), a) != side(value, a) for a in bounds):
        if digits >= 17:
            return repr(value)
        digits += 1
        text = render(digits)
    return text


def result_level(confidence_level: float) -> float:
    """The test level a result's ``confidence_level`` sets, ``1 - confidence_level``, as
    a reader reads it (0.01 for 0.99, not 0.010000000000000009)."""
    return float(f"{1.0 - confidence_level:.12g}")


def cell_label(key: Mapping[str, Any]) -> str:
    """A cell's name in prose: its ``by`` values joined by ", ", or "all rows".

    Of several values, one holding a comma or a quote is quoted (``repr``): the cells
    ``("a, b", "c")`` and ``("a", "b, c")`` were both named "a, b, c", their figures and
    ground truth told apart by nothing. So is a blank one (``''``), which read as nothing,
    or as "all rows". Other labels, and a single one, read as written, on one line
    (:func:`one_line`: a line break as ``\\n``, a right-to-left mark as ``\\u200f``).
    """
    values = [str(v) for v in key.values()]
    if not values:
        return "all rows"
    quote = ",'\"" if len(values) > 1 else ""
    return ", ".join(repr(v) if not v.strip() or any(ch in v for ch in quote) else one_line(v)
                     for v in values)


def cell_verdicts(table: pd.DataFrame, alpha: float) -> dict[tuple[str, ...], tuple[str, str]]:
    """Per cell (row) of a ``summary_table``, keyed by its labels as a tuple of text: its
    name (:func:`cell_label`) and the tests whose p-value is below ``alpha`` ("-": none).

    The tuple, not the joined text, tells ``("a, b", "c")`` from ``("a", "b, c")``.
    """
    out: dict[tuple[str, ...], tuple[str, str]] = {}
    for key, row in table.iterrows():
        values = key if isinstance(key, tuple) else (key,)
        name = cell_label(dict(zip(map(str, table.index.names), values, strict=True)))
        out[tuple(map(str, values))] = (name, ", ".join(
            str(t) for t, p in row.items() if isinstance(p, float) and p < alpha) or "-")
    return out


def truth_cells(truth: pd.DataFrame, verdicts: Mapping[tuple[str, ...], tuple[str, str]]
                ) -> list[tuple[str, ...]]:
    """The cell (a key of :func:`cell_verdicts`) each row of a ground-truth table names:
    its index as a tuple of the ``by`` values, or a single value read as a cell's name."""
    names = {name: cell for cell, (name, _) in verdicts.items()}
    return [tuple(map(str, k)) if isinstance(k, tuple)
            else names.get(cell_label({"": k}), (str(k),)) for k in truth.index]


#: what Markdown reads in a table cell's text: the backslash itself, code, emphasis, links,
#: HTML, entities, the cell's end, strikethrough and (GitHub's) maths
_MARKDOWN = re.compile(r"[\\`*_\[\]<&|~$]")


def cell_text(value: Any, *, label: bool = False) -> str:
    """One Markdown table cell: numbers to 4 significant digits, NaN blank; text with
    Markdown's inline specials escaped (``\\`` before each of ``\\ ` * _ [ ] < & | ~ $``
    and a leading ``#``), so that it reads as written: ``*base*`` read as an italic base,
    ``gpt_4_turbo`` as italics in some viewers, ``<unk>`` as an HTML tag (nothing shown),
    ``&lt;`` as ``<``, and a pipe ended the cell. A second space in a row, and one at
    either end, is ``&nbsp;`` (a viewer showed ``a  b`` as ``a b``, `` #2`` as ``#2``).

    In a ``label`` (a cell's ``by`` value or a column's name) every character
    :func:`one_line` escapes is written as it writes it (``"gpt\\n4"`` reads
    ``gpt\\n4``, not ``gpt 4``, another label), and a number reads as written (``1.0``,
    not to 4 digits: ``0.12345`` and ``0.12346`` were two labels shown alike); in other
    text each line break (``\\n``, ``\\r\\n``, ``\\r``) is a space, as a break would
    end the table's row.
    """
    if isinstance(value, float | np.floating) and not label:
        return "" if np.isnan(value) else significant(float(value), 4)
    text = cell_label({"": value}) if label else str(value)
    if not label:
        text = text.replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
    text = _MARKDOWN.sub(r"\\\g<0>", one_line(text))
    text = re.sub(r"^(\s*)#", r"\1\\#", text)
    return re.sub(r"^ | $|(?<= ) ", "&nbsp;", text)


def text_table(frame: pd.DataFrame, *, width: int = 100, digits: int = 4) -> str:
    """A plain-text table no wider than ``width`` columns: numbers to ``digits``
    significant digits, long text cut in its middle with "..." (a column's texts are
    left whole where cutting would make two of them read alike), and columns that do not fit
    moved to a block below (the leading label columns repeated).

    Examples
    --------
    >>> frame = pd.DataFrame({"model": ["a", "b"], "category": ["x", "y"],
    ...                       "first_statistic": [0.123456, 1.0],
    ...                       "second_statistic": [2.5, float("nan")]})
    >>> print(text_table(frame, width=40))
    model  category  first_statistic
    a      x                  0.1235
    b      y                       1
    <BLANKLINE>
    model  category  second_statistic
    a      x                      2.5
    b      y
    """
    def fmt(v: Any) -> str:
        if isinstance(v, float | np.floating):
            return "" if math.isnan(v) else significant(float(v), digits)
        return one_line(str(v))

    cols = [one_line(str(c)) for c in frame.columns]
    body = [[fmt(v) for v in row] for row in frame.itertuples(index=False)]
    limit = max(12, width // 2)
    columns = [_cut_distinct([r[j] for r in body], limit) for j in range(len(cols))]
    cells = [[columns[j][i] for j in range(len(cols))] for i in range(len(body))]
    heads = _cut_distinct(cols, limit)
    widths = [max([display_width(heads[j]), *(display_width(r[j]) for r in cells)])
              for j in range(len(cols))]
    numeric = [pd.api.types.is_numeric_dtype(frame.iloc[:, j]) for j in range(len(cols))]
    if not cols:
        return ""
    blocks = _blocks(widths, numeric, width)
    out = []
    for b, block in enumerate(blocks):
        if b:
            out.append("")

        def line(values: Sequence[str], block: list[int] = block) -> str:
            # padded to each column's width on screen: a wide (CJK, emoji) character takes
            # two columns, a combining one none (len() pushed the row's figures out of line)
            pads = [" " * (widths[j] - display_width(v)) for j, v in zip(block, values,
                                                                         strict=True)]
            return "  ".join(pad + v if numeric[j] else v + pad
                             for j, v, pad in zip(block, values, pads, strict=True)).rstrip()

        out.append(line([heads[j] for j in block]))
        out.extend(line([row[j] for j in block]) for row in cells)
    return "\n".join(out)


def _blocks(widths: list[int], numeric: list[bool], width: int) -> list[list[int]]:
    """The columns of each block of a table ``width`` columns wide: the leading text
    columns (labels, at most 3/5 of the width) repeated in every block, the others in
    order, as many as fit (one at least)."""
    # the leading text columns (labels) are repeated in every block
    keys = [0]
    while (len(keys) < len(widths) - 1 and not numeric[len(keys)]
           and sum(widths[j] + 2 for j in keys) + widths[len(keys)] <= 3 * width // 5):
        keys.append(len(keys))
    key_width = sum(widths[j] + 2 for j in keys) - 2
    blocks, current, used = [], list(keys), key_width
    for j in range(len(keys), len(widths)):
        if used + 2 + widths[j] > width and len(current) > len(keys):
            blocks.append(current)
            current, used = list(keys), key_width
        current.append(j)
        used += 2 + widths[j]
    blocks.append(current)
    return blocks


def one_line(text: str) -> str:
    """``text`` with each character Python's ``repr`` escapes written as it writes it:
    line breaks and tabs (``\\n``, ``\\r``, ``\\t``: a label ``"gpt\\n4"`` broke its
    row in two, and stays told apart from ``"gpt 4"``), other control characters (a
    terminal's escape sequences), invisible format marks (a right-to-left override
    ``\\u202e`` showed ``abc`` as ``cba`` and the rest of the row reversed; a zero-width
    space made two labels read alike) and spaces other than the ASCII one (``\\xa0``).
    Text without them is returned as it is."""
    if text.isprintable():
        return text
    return "".join(ch if ch.isprintable() else repr(ch)[1:-1] for ch in text)


def display_width(text: str) -> int:
    """The columns ``text`` takes in a terminal: two for a wide or full-width character
    (East Asian width W or F: CJK, most emoji), none for a combining mark or a format
    character, one for any other."""
    if text.isascii():
        return len(text)
    return sum(_char_width(ch) for ch in text)


def _char_width(ch: str) -> int:
    if unicodedata.combining(ch) or unicodedata.category(ch) in ("Mn", "Me", "Cf"):
        return 0
    return 2 if unicodedata.east_asian_width(ch) in ("W", "F") else 1


def _cut(text: str, limit: int) -> str:
    """``text`` wider than ``limit`` columns (:func:`display_width`) cut in its middle:
    model names differ at their ends as often as at their starts (``...-temperature-0.0``,
    ``-1.0``)."""
    if display_width(text) <= limit:
        return text
    head_width = (limit - 2) // 2
    tail_width = limit - 3 - head_width
    head, used = 0, 0
    while used + _char_width(text[head]) <= head_width:
        used += _char_width(text[head])
        head += 1
    tail, used = len(text), 0
    while tail > head and used + _char_width(text[tail - 1]) <= tail_width:
        used += _char_width(text[tail - 1])
        tail -= 1
    while tail < len(text) and _char_width(text[tail]) == 0:  # no mark on the dots
        tail += 1
    return text[:head] + "..." + text[tail:]


def _cut_distinct(texts: list[str], limit: int) -> list[str]:
    """The texts cut by :func:`_cut`, or whole where two different ones would read alike
    (labels of two cells must stay two labels)."""
    cut = [_cut(t, limit) for t in texts]
    return cut if len(set(cut)) == len(set(texts)) else list(texts)
