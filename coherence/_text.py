"""Plain-text tables: what the report's summary, its Markdown and the command line print."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

__all__ = ["SHADING_ALPHA", "cell_label", "cell_text", "cell_verdicts", "result_level",
           "significant", "text_table", "truth_cells"]

#: The level the report shades p-values below: a number is never rounded across it.
SHADING_ALPHA = 0.05


def significant(value: float, digits: int, levels: Iterable[float] = ()) -> str:
    """``value`` to ``digits`` significant digits, with more where rounding would put it
    on the other side of :data:`SHADING_ALPHA` (an adjusted p-value of 0.049996 read
    "0.05" in the summary while the HTML page shaded it as below 0.05) or of one of
    ``levels`` (a result's own level: 0.009999 read "0.01" beside ``violates True`` at
    0.01).

    Examples
    --------
    >>> significant(0.049996, 4), significant(0.123456, 4), significant(0.009999, 3, [0.01])
    ('0.049996', '0.1235', '0.009999')

    A negative zero reads 0 (it read "-0"); no other value is shown as zero.
    """
    value = value + 0.0  # -0.0 + 0.0 is 0.0
    bounds = (SHADING_ALPHA, *levels)
    text = f"{value:.{digits}g}"
    while any((float(text) < a) != (value < a) for a in bounds) and digits < 17:
        digits += 1
        text = f"{value:.{digits}g}"
    return text


def result_level(confidence_level: float) -> float:
    """The test level a result's ``confidence_level`` sets, ``1 - confidence_level``, as
    a reader reads it (0.01 for 0.99, not 0.010000000000000009)."""
    return float(f"{1.0 - confidence_level:.12g}")


def cell_label(key: Mapping[str, Any]) -> str:
    """A cell's name in prose: its ``by`` values joined by ", ", or "all rows".

    Of several values, one holding a comma or a quote is quoted (``repr``): the cells
    ``("a, b", "c")`` and ``("a", "b, c")`` were both named "a, b, c", their figures and
    ground truth told apart by nothing. Other labels, and a single one, read as written.
    """
    values = [str(v) for v in key.values()]
    if len(values) > 1:
        values = [repr(v) if any(ch in v for ch in ",'\"") else v for v in values]
    return ", ".join(values) or "all rows"


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
    return [tuple(map(str, k)) if isinstance(k, tuple) else names.get(str(k), (str(k),))
            for k in truth.index]


def cell_text(value: Any) -> str:
    """One Markdown table cell: numbers to 4 significant digits, NaN blank, pipes escaped
    (``\\|``, a backslash before one doubled) and each line break (``\\n``, ``\\r\\n``,
    ``\\r``) made a space, as a break would end the table's row; ``<`` and ``&`` are escaped
    (``\\<``, ``\\&``) too, as a renderer read a label ``<unk>`` as an HTML tag and showed
    nothing, and ``&lt;`` as ``<``."""
    if isinstance(value, float | np.floating):
        return "" if np.isnan(value) else significant(float(value), 4)
    text = str(value).replace("\r\n", " ").replace("\r", " ").replace("\n", " ")
    # backslashes before an escaped character doubled too, so that a literal ``\\|`` cannot
    # end the cell
    return re.sub(r"(\\*)([|<&])", lambda m: 2 * m.group(1) + "\\" + m.group(2), text)


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
        return _one_line(str(v))

    cols = [_one_line(str(c)) for c in frame.columns]
    body = [[fmt(v) for v in row] for row in frame.itertuples(index=False)]
    limit = max(12, width // 2)
    columns = [_cut_distinct([r[j] for r in body], limit) for j in range(len(cols))]
    cells = [[columns[j][i] for j in range(len(cols))] for i in range(len(body))]
    heads = _cut_distinct(cols, limit)
    widths = [max([len(heads[j]), *(len(r[j]) for r in cells)]) for j in range(len(cols))]
    numeric = [pd.api.types.is_numeric_dtype(frame.iloc[:, j]) for j in range(len(cols))]
    if not cols:
        return ""
    # the leading text columns (labels) are repeated in every block
    keys = [0]
    while (len(keys) < len(cols) - 1 and not numeric[len(keys)]
           and sum(widths[j] + 2 for j in keys) + widths[len(keys)] <= 3 * width // 5):
        keys.append(len(keys))
    key_width = sum(widths[j] + 2 for j in keys) - 2
    blocks, current, used = [], list(keys), key_width
    for j in range(len(keys), len(cols)):
        if used + 2 + widths[j] > width and len(current) > len(keys):
            blocks.append(current)
            current, used = list(keys), key_width
        current.append(j)
        used += 2 + widths[j]
    blocks.append(current)
    out = []
    for b, block in enumerate(blocks):
        if b:
            out.append("")

        def line(values: Sequence[str], block: list[int] = block) -> str:
            return "  ".join(v.rjust(widths[j]) if numeric[j] else v.ljust(widths[j])
                             for j, v in zip(block, values, strict=True)).rstrip()

        out.append(line([heads[j] for j in block]))
        out.extend(line([row[j] for j in block]) for row in cells)
    return "\n".join(out)


#: a label's line breaks and tabs as :func:`_one_line` shows them
_CONTROL = str.maketrans({"\n": "\\n", "\r": "\\r", "\t": "\\t"})


def _one_line(text: str) -> str:
    """``text`` with its line breaks and tabs written ``\\n``, ``\\r``, ``\\t``: a label
    ``"gpt\\n4"`` broke its row in two (and stays told apart from ``"gpt 4"``)."""
    return text.translate(_CONTROL)


def _cut(text: str, limit: int) -> str:
    """``text`` of more than ``limit`` characters cut in its middle: model names differ
    at their ends as often as at their starts (``...-temperature-0.0``, ``-1.0``)."""
    if len(text) <= limit:
        return text
    head = (limit - 2) // 2
    return text[:head] + "..." + text[len(text) - (limit - 3 - head):]


def _cut_distinct(texts: list[str], limit: int) -> list[str]:
    """The texts cut by :func:`_cut`, or whole where two different ones would read alike
    (labels of two cells must stay two labels)."""
    cut = [_cut(t, limit) for t in texts]
    return cut if len(set(cut)) == len(set(texts)) else list(texts)
