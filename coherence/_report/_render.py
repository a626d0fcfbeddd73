"""HTML rendering of a :class:`CoherenceReport`: tables, embedded figures, versions."""

from __future__ import annotations

import base64
import html
import io
from typing import TYPE_CHECKING, Any

import pandas as pd

from ._registry import REGISTRY
from ._run import cell_text

if TYPE_CHECKING:
    from ._run import CoherenceReport

# --------------------------------------------------------------------------- HTML
_CSS = """
body{font-family:system-ui,-apple-system,Segoe UI,Roboto,sans-serif;max-width:1100px;
margin:2em auto;padding:0 1em;color:#222;line-height:1.45}
h1{font-size:1.6em}h2{border-bottom:1px solid #ddd;padding-bottom:.2em;margin-top:2em}
table{border-collapse:collapse;font-size:.85em;margin:1em 0}
td,th{border:1px solid #ccc;padding:.25em .5em;text-align:right}
th{background:#f4f4f4}td:first-child,th:first-child{text-align:left}
.low{background:#fde2e1}.note{color:#555;font-size:.9em}
figure{display:inline-block;margin:.5em}figcaption{font-size:.85em;color:#555}
code{background:#f6f6f6;padding:0 .2em}
"""



__all__ = ["render_html"]



def _figure_png(fig: Any) -> str:
    buf = io.BytesIO()
    fig.savefig(buf, format="png", dpi=90, bbox_inches="tight")
    import matplotlib.pyplot as plt

    plt.close(fig)
    return base64.b64encode(buf.getvalue()).decode("ascii")


def _frame_html(frame: pd.DataFrame, *, pcol: str | None = "pvalue") -> str:
    cells = [
        "<table><thead><tr>"
        + "".join(f"<th>{html.escape(str(c))}</th>" for c in frame.columns)
        + "</tr></thead><tbody>"
    ]
    for _, row in frame.iterrows():
        tds = []
        for col, value in row.items():
            klass = ""
            if col == pcol and isinstance(value, float) and value < 0.05:
                klass = ' class="low"'
            tds.append(f"<td{klass}>{html.escape(cell_text(value))}</td>")
        cells.append("<tr>" + "".join(tds) + "</tr>")
    cells.append("</tbody></table>")
    return "".join(cells)


def _figures(rep: CoherenceReport) -> list[tuple[str, str]]:
    """(caption, base64 png) pairs for every figure the results can draw."""
    figures = []
    for cell in rep.cells:
        label = ", ".join(f"{k}={v}" for k, v in cell.key.items()) or "all rows"
        for name, result in cell.results.items():
            plot = getattr(result, "plot", None)
            if name == "calibration":
                from .._scoring._forecast import plot_reliability

                def plot(result: Any = result) -> Any:
                    return plot_reliability(result)

            if plot is None:
                continue
            try:
                drawn = plot()
            except (ValueError, TypeError):
                continue
            fig = getattr(drawn, "figure", drawn)
            if fig is not None and hasattr(fig, "savefig"):
                figures.append((f"{name}: {label}", _figure_png(fig)))
    return figures


def render_html(rep: CoherenceReport) -> str:
    from .. import __version__

    frame = rep.to_frame()
    s = rep.settings
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<title>belief-coherence report</title>",
        f"<style>{_CSS}</style></head><body>",
        "<h1>Coherence report</h1>",
        f"<p class='note'>belief-coherence {html.escape(__version__)}, created "
        f"{html.escape(str(s.get('created')))}. Each row is one test on one cell; "
        "p-values below 0.05 are shaded. A small p-value is evidence against the coherence "
        "property the test checks; a large one is not proof of coherence (see "
        "<em>Interpreting results</em> in the documentation).</p>",
        "<h2>Tests</h2><table><thead><tr><th>test</th><th>what it checks</th></tr></thead>"
        "<tbody>"
        + "".join(
            f"<tr><td>{html.escape(spec.name)}</td><td style='text-align:left'>"
            f"{html.escape(spec.label)}</td></tr>"
            for spec in REGISTRY
            if spec.name in s.get("tests", ())
        )
        + "</tbody></table>",
        "<h2>Summary: p-values by cell and test</h2>",
        _frame_html(rep.summary_table().reset_index(), pcol=None),
        "<h2>All results</h2>",
        _frame_html(frame),
    ]
    details = {spec.name: spec.detail for spec in REGISTRY if spec.detail}
    for cell in rep.cells:
        extras = []
        for name, result in cell.results.items():
            detail = result.table
            if name in details and len(detail):
                extras.append(
                    f"<h3>{html.escape(name)}: {html.escape(details[name])}</h3>"
                    + _frame_html(detail.head(200), pcol=None)
                )
        if extras:
            label = ", ".join(f"{k}={v}" for k, v in cell.key.items()) or "all rows"
            parts.append(f"<h2>Details: {html.escape(label)}</h2>")
            parts.extend(extras)
    figures = _figures(rep)
    if figures:
        parts.append("<h2>Figures</h2>")
        for caption, png in figures:
            parts.append(
                f"<figure><img alt='{html.escape(caption)}' "
                f"src='data:image/png;base64,{png}'><figcaption>"
                f"{html.escape(caption)}</figcaption></figure>"
            )
    parts.append("<h2>Methods and settings</h2><ul>")
    for key, value in s.items():
        parts.append(f"<li><code>{html.escape(str(key))}</code>: {html.escape(str(value))}</li>")
    parts.append(
        "</ul><p class='note'>To rerun: <code>coherence.report(data, "
        + html.escape(
            ", ".join(
                f"{k}={v!r}"
                for k, v in s.items()
                if k
                in ("k", "n_permutations", "n_resamples", "n_splits", "engine", "n_bins", "rng")
            )
        )
        + ")</code>.</p></body></html>"
    )
    return "\n".join(parts)
