"""The report's result types: one :class:`ReportCell` per (model, dataset) cell and the
:class:`CoherenceReport` holding them. Rendering lives in ``_render.py``, which needs
these types only for annotations, so the two modules do not import each other.
"""

from __future__ import annotations

import textwrap
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

import numpy as np
import pandas as pd

from .._multiplicity import adjust_label
from .._multiplicity import adjust_pvalues
from .._parameters import check_choice
from .._results import RESULT_COLUMNS
from .._results import CoherenceResult
from .._results import Summary
from .._text import cell_text
from .._text import text_table
from ._not_run import cell_label
from ._not_run import not_run
from ._registry import TEST_NAMES

if TYPE_CHECKING:
    from .._decision._diagnostics import ElicitationDiagnostics

__all__ = ["FRAME_COLUMNS", "CoherenceReport", "ReportCell"]

#: The columns of :meth:`CoherenceReport.to_frame` after the ``by`` columns.
FRAME_COLUMNS: tuple[str, ...] = (*RESULT_COLUMNS, "pvalue_adjusted", "error", "warnings",
                                  "degenerate_elicitation", "n_set_aside")


@dataclass(frozen=True, slots=True)
class ReportCell:
    """The results of one (model, dataset) cell: ``key`` maps each ``by`` column to its value."""

    key: Mapping[str, Any]
    n_obs: int
    results: Mapping[str, CoherenceResult]
    errors: Mapping[str, str]
    #: warnings each test raised on this cell (recorded, not printed)
    notes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    #: what the cell's stated beliefs say before any test (None: a cell without rows)
    diagnostics: ElicitationDiagnostics | None = None

    @property
    def degenerate(self) -> bool:
        """Whether the cell's beliefs are degenerate (the tests cannot speak to coherence)."""
        return self.diagnostics is not None and self.diagnostics.degenerate


@dataclass(frozen=True, slots=True)
class CoherenceReport:
    """Every test on every cell, with the settings needed to rerun it.

    Attributes
    ----------
    cells : tuple of ReportCell
        One per (model, dataset) cell, in sorted order of the ``by`` values.
    by : tuple of str
        The columns that define cells (those of the requested ``by`` present
        in the data).
    settings : Mapping
        Every setting used: columns, k, resamples, folds, engine, seed,
        package versions.
    truth : pandas.DataFrame or None
        For simulated data, what each cell violates by design (one row per
        cell, indexed by the cell's label, e.g. the agent's name, or by its
        ``by`` columns); the HTML
        report shows it beside the results, with ``truth.attrs["caption"]``
        explaining its columns. None (default) for real data.
    """

    cells: tuple[ReportCell, ...]
    by: tuple[str, ...]
    settings: Mapping[str, Any] = field(repr=False)
    truth: pd.DataFrame | None = field(default=None, repr=False)

    def to_frame(self) -> pd.DataFrame:
        """Tidy: one row per cell x test, the ``by`` columns first, then RESULT_COLUMNS.

        Tests that raised on a cell appear with NaN numbers and the error in
        ``error``; warnings a test raised are in ``warnings``.
        ``degenerate_elicitation`` is True on every row of a cell whose beliefs are
        degenerate (:func:`coherence.elicitation_diagnostics`): the tests cannot speak
        to coherence there. ``n_set_aside`` counts the cell's replies set aside before
        the table was written (``report(set_aside=)``).
        """
        rows = []
        for cell in self.cells:
            for name in TEST_NAMES:
                if name in cell.results:
                    frame = cell.results[name].to_frame()[list(RESULT_COLUMNS)]
                    row = frame.iloc[0].to_dict()
                    row["error"] = ""
                elif name in cell.errors:
                    row = dict.fromkeys(RESULT_COLUMNS, np.nan)
                    row["test"] = name
                    row["method"] = ""
                    row["error"] = cell.errors[name]
                else:
                    continue
                row["test"] = name
                row["warnings"] = " | ".join(cell.notes.get(name, ()))
                row["degenerate_elicitation"] = cell.degenerate
                row["n_set_aside"] = (cell.diagnostics.n_set_aside
                                      if cell.diagnostics is not None else 0)
                rows.append({**dict(cell.key), **row})
        columns = [*self.by, *FRAME_COLUMNS]
        frame = pd.DataFrame(rows, columns=[c for c in columns if c != "pvalue_adjusted"])
        adjusted = adjust_pvalues(frame["pvalue"].to_numpy(dtype=float),
                                  self.settings.get("adjust", "none"))
        frame.insert(frame.columns.get_loc("n_obs") + 1, "pvalue_adjusted", adjusted)
        frame["degenerate_elicitation"] = frame["degenerate_elicitation"].astype(bool)
        frame["n_set_aside"] = frame["n_set_aside"].astype(np.int64)
        return frame

    def degenerate_warnings(self) -> list[str]:
        """One sentence per cell whose beliefs are degenerate (empty when none is)."""
        out = []
        for cell in self.cells:
            if cell.diagnostics is not None and cell.diagnostics.degenerate:
                out.append(f"{cell_label(cell.key)}: {cell.diagnostics.warning}")
        return out

    def to_markdown(self) -> str:
        """A GitHub-flavoured Markdown table of :meth:`to_frame` (4 significant digits;
        in labels and texts Markdown's specials, ``* _ ` [ ] < & | ~ $ \\`` and a
        leading ``#``, are escaped with a backslash, so that ``gpt_4_turbo`` and
        ``*base*`` read as written; a line break in a label reads ``\\n``, in other text
        a space)."""
        frame = self.to_frame()
        labels = [c in self.by for c in frame.columns]
        header = "| " + " | ".join(cell_text(c, label=True) for c in frame.columns) + " |"
        rule = "| " + " | ".join("---" for _ in frame.columns) + " |"
        lines = [header, rule]
        for row in frame.itertuples(index=False):
            lines.append("| " + " | ".join(cell_text(v, label=by)
                                           for v, by in zip(row, labels, strict=True)) + " |")
        return "\n".join(lines) + "\n"

    def summary_table(self, values: str = "pvalue_adjusted") -> pd.DataFrame:
        """Cells x tests of one column of :meth:`to_frame` (the headline of the summary).

        ``values`` is ``"pvalue_adjusted"`` (default: adjusted across the report as
        ``settings["adjust"]`` says), ``"pvalue"`` (raw) or ``"statistic"``.
        """
        values = check_choice(values, "values", "summary_table",
                              ("pvalue_adjusted", "pvalue", "statistic"))
        frame = self.to_frame()
        index = list(self.by) if self.by else None
        if index is None:
            frame = frame.assign(cell="all")
            index = ["cell"]
        # a cell whose key is missing (NaN) is a cell too (pivot_table would drop it);
        # cells and tests in the order of the report
        table = frame.groupby([*index, "test"], sort=False, dropna=False, observed=True)[
            values].first().unstack("test")
        cells = frame[index].drop_duplicates()
        table = table.reindex(pd.MultiIndex.from_frame(cells) if len(index) > 1
                              else pd.Index(cells[index[0]], name=index[0]))
        # a test with no value in any cell (a descriptive one under a p-value) is left out
        return table.reindex(columns=pd.unique(frame["test"])).dropna(axis=1, how="all")

    def summary(self) -> Summary:
        """The adjusted p-values by cell and test (:meth:`summary_table`), formatted
        to fit 100 columns (one block of tests under another when needed)."""
        table = self.summary_table()
        label = adjust_label(self.settings.get("adjust", "none"))
        title = (f"coherence report: {len(self.cells)} cell(s), p-values ({label}) "
                 "by cell and test")
        # the cells' labels as written: a number to 4 digits showed 0.12345 and 0.12346 as
        # one label, 0.1235
        shown = table.reset_index()
        for column in table.index.names:
            shown[column] = shown[column].map(
                lambda v: str(v) if isinstance(v, float | np.floating) else v)
        body = text_table(shown, width=100)
        flagged = self.degenerate_warnings()
        if flagged:
            body = "\n".join(f"WARNING: {w}" for w in flagged) + "\n" + body
        # a test named (not tests="all") that applied nowhere left the table without a word;
        # under "all" only the tests that failed or skipped some cells are named (the page
        # names every one)
        missing = not_run(self, nowhere=bool(self.settings.get("tests_named", True)))
        if missing:
            body += "\nTests that did not run:\n" + "\n".join(
                textwrap.fill(f"- {name} {rest}", width=100, subsequent_indent="  ")
                for name, rest in missing)
        return Summary(f"{title}\n{body}", title=title,
                       tables=[(f"p-values ({label}) by cell and test", shown)])

    def _repr_html_(self) -> str:
        """The report's first screen (the models x tests grid) in a notebook."""
        from ._render import render_first_screen

        return render_first_screen(self)

    def to_html(self, path: str | Path | None = None) -> str:
        """One self-contained HTML page (figures as inline SVG, no external requests),
        laid out for an A4 or US-letter page; written to ``path`` if given."""
        from ._render import render_html

        text = render_html(self)
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text
