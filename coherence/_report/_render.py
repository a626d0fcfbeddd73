"""HTML and text rendering of a :class:`CoherenceReport`.

The page reads like a paper's results section: first a models x tests grid of
adjusted p-values and effect sizes ("which model fails which property"), then
the paper-style tables of each test, the figures (inline SVG, labelled axes),
the tests that did not apply and why, the provenance block with a runnable
rerun command, and an appendix with the tidy table of every number. Every
number is read from the result objects; nothing is recomputed. The layout fits
an A4 or US-letter page in portrait (tables wrap, text is left-aligned, numbers
right-aligned), which ``tests/report/test_render_browser.py`` checks in
headless Chromium.
"""

from __future__ import annotations

import html
import io
import math
import textwrap
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import Sequence
from typing import TYPE_CHECKING
from typing import Any
from typing import cast

import numpy as np
import pandas as pd

from .._multiplicity import adjust_label
from .._multiplicity import adjust_pvalues
from .._text import SHADING_ALPHA
from .._text import cell_verdicts
from .._text import guarded
from .._text import one_line
from .._text import result_level
from .._text import truth_cells
from ._not_run import DESCRIPTIVE
from ._not_run import cell_label
from ._not_run import not_run
from ._options import second_stage_draws
from ._registry import REGISTRY
from ._rerun import rerun_commands
from ._rerun import rerun_notes

if TYPE_CHECKING:
    from .. import CalibrationErrorResult
    from ._result import CoherenceReport

__all__ = ["render_first_screen", "render_html"]

ALPHA = SHADING_ALPHA

# --------------------------------------------------------------------------- vocabulary
#: short column heading of each test in the grid
_SHORT = {
    "ci": "CI", "ci_evidence": "CI | x", "ci_calibrated": "CI, calibrated",
    "leakage": "leakage", "leakage_evidence": "leakage | x", "monotonicity": "monotone",
    "prompt_consistency": "prompts", "calibration": "calibration", "lie": "LIE",
    "calibration_error": "cal. error", "smooth_ece": "smooth ECE", "iia": "IIA",
}
#: (name of the effect size, unit) of each test's statistic
_EFFECT: dict[str, tuple[str, str]] = {
    "ci": ("CMI", "nats"), "ci_evidence": ("CMI", "nats"), "ci_calibrated": ("CMI", "nats"),
    "leakage": ("log-loss reduction", "%"), "leakage_evidence": ("log-loss reduction", "%"),
    "monotonicity": ("bin pairs violated", "%"), "prompt_consistency": ("max RMSE", ""),
    "calibration": ("Brier", ""), "lie": ("median error ratio", ""),
    "calibration_error": ("debiased CE^2", ""), "smooth_ece": ("smECE", ""),
    "iia": ("comparisons flagged", "share"),
}


def _num(x: Any, digits: int = 3, levels: Sequence[float] = ()) -> str:
    """``x`` to ``digits`` significant digits (blank for None and NaN); a negative zero
    reads 0 (it read "-0"); a nonzero one below ``10**-digits`` in size, or of ``1e5``
    and more, in scientific notation; one below 1 gets more decimals where ``digits``
    would round it across or onto ALPHA or one of ``levels`` (a detail table's p-value
    of 0.049996 read "0.05"; :func:`coherence._text.guarded`)."""
    if x is None:
        return ""
    try:
        v = float(x) + 0.0  # -0.0 + 0.0 is 0.0
    except (TypeError, ValueError):
        return str(x)
    if math.isnan(v):
        return ""
    if v != 0 and (abs(v) < 10 ** -(digits) or abs(v) >= 10**5):
        return f"{v:.{digits - 1}e}"
    if abs(v) >= 1:
        return f"{v:.{digits}g}"
    return guarded(v, lambda places: f"{v:.{places}f}".rstrip("0").rstrip("."), digits,
                   levels)


def _pval(p: Any, levels: Sequence[float] = ()) -> str:
    """A p-value to three decimals, or more where three would put it on the other side
    of ALPHA or one of ``levels``, or on it (0.04995 reads 0.0499, not 0.050 next to a
    shading that says below 0.05; 0.0500001 reads 0.0500001, not 0.050 next to a
    ``violates`` that says above)."""
    if p is None or (isinstance(p, float) and math.isnan(p)):
        return ""
    p = float(p)
    if p < 0.001:
        return "< 0.001"
    return guarded(p, lambda digits: f"{p:.{digits}f}", 3, levels)


def _with_ci(value: float, low: float, high: float, digits: int = 3) -> str:
    text = _num(value, digits)
    if not text:
        return ""
    if math.isnan(float(low)) or math.isnan(float(high)):
        return text
    return f"{text} [{_num(low, digits)}, {_num(high, digits)}]"


def _effect_head(name: str) -> str:
    label, unit = _EFFECT.get(name, ("statistic", ""))
    return f"{label} ({unit})" if unit else label


# --------------------------------------------------------------------------- HTML pieces
_CSS = """
@page{size:A4;margin:14mm}
*{box-sizing:border-box}
body{font-family:"DejaVu Serif",Georgia,"Times New Roman",serif;max-width:180mm;
margin:1.5em auto;padding:0 4mm;color:#111;line-height:1.4;font-size:10.5pt;text-align:left}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;border-bottom:1px solid #999;
padding-bottom:.1em;margin-top:1.6em}h3{font-size:1.02em;margin:1.2em 0 .3em}
p,li{max-width:100%}
table{border-collapse:collapse;margin:.4em 0 1em;font-size:8.5pt;width:100%;
font-variant-numeric:tabular-nums}
caption{caption-side:top;text-align:left;font-weight:bold;padding:.2em 0;font-size:1.05em}
th,td{padding:.15em .45em;text-align:left;vertical-align:top;overflow-wrap:break-word;
white-space:pre-wrap}
table.prov td:first-child{white-space:nowrap}
thead th{border-top:1.5px solid #000;border-bottom:1px solid #000}
tbody tr:last-child td{border-bottom:1.5px solid #000}
td.num,th.num{text-align:right;white-space:nowrap}
table.grid{width:100%}
table.grid td{border:1px solid #bbb;text-align:right}
table.grid td:first-child{text-align:left;min-width:5em}
table.grid th{border:1px solid #bbb;text-align:center;vertical-align:bottom;
overflow-wrap:normal}
.sig{background:#f9d2cf;font-weight:bold}.err{color:#a00}.na{color:#999}
.eff{font-size:.92em;color:#333;font-weight:normal}
.note{color:#333;font-size:.92em}
figure{margin:.4em 0;break-inside:avoid}figure svg{max-width:100%;height:auto}
figcaption{font-size:.88em;color:#333}
.figs{display:grid;grid-template-columns:repeat(auto-fill,minmax(80mm,1fr));gap:2mm}
pre,code{font-family:"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:8.5pt}
pre{white-space:pre-wrap;overflow-wrap:anywhere;background:#f4f4f4;padding:.5em}
.appendix{break-before:page}
.degenerate{border:2px solid #a00;background:#fdecea;padding:.4em .6em;margin:.6em 0}
@media print{h2,h3,caption{break-after:avoid}table{break-inside:auto}tr{break-inside:avoid}}
"""


def _table_html(frame: pd.DataFrame, *, caption: str = "",
                numeric: Sequence[str] = (), klass: str = "",
                cell_class: Callable[[str, Any], str] | None = None,
                levels: Sequence[float] = ()) -> str:
    """A booktabs-style table; ``numeric`` columns right-aligned, all others left; text on
    one line as :func:`coherence._text.one_line` writes it (a label ``"gpt\\n4"`` read
    as ``gpt 4``, another label, and a right-to-left mark reversed it); no number rounded
    across or onto ALPHA or one of ``levels``."""
    parts = [f"<table{f' class={chr(39)}{klass}{chr(39)}' if klass else ''}>"]
    if caption:
        parts.append(f"<caption>{html.escape(caption)}</caption>")
    parts.append("<thead><tr>" + "".join(
        f"<th{' class=num' if c in numeric else ''}>"
        f"{html.escape(one_line(str(c))).replace('_', '_<wbr>')}</th>"
        for c in frame.columns) + "</tr></thead><tbody>")
    for row in frame.itertuples(index=False):
        tds = []
        for col, value in zip(frame.columns, row, strict=True):
            classes = ["num"] if col in numeric else []
            if cell_class is not None:
                extra = cell_class(col, value)
                if extra:
                    classes.append(extra)
            attr = f" class='{' '.join(classes)}'" if classes else ""
            if isinstance(value, bool | np.bool_):
                text = "yes" if value else "no"
            else:
                text = one_line(value if isinstance(value, str) else _num(value, 4, levels))
            tds.append(f"<td{attr}>{html.escape(text)}</td>")
        parts.append("<tr>" + "".join(tds) + "</tr>")
    parts.append("</tbody></table>")
    return "".join(parts)


def _ran(rep: CoherenceReport) -> list[str]:
    """Tests that produced a result or an error in at least one cell, in registry order."""
    names = [s.name for s in REGISTRY]
    seen = {n for c in rep.cells for n in (*c.results, *c.errors)}
    return [n for n in names if n in seen]


def _adjusted_lookup(rep: CoherenceReport) -> dict[tuple[int, str], tuple[float, float]]:
    """(cell index, test) -> (raw p, adjusted p), adjusted over the whole report."""

    keys, raw = [], []
    for i, cell in enumerate(rep.cells):
        for name, result in cell.results.items():
            keys.append((i, name))
            raw.append(float(result.pvalue))
    adjusted = adjust_pvalues(np.array(raw, dtype=float), rep.settings.get("adjust", "none"))
    return {k: (r, float(a)) for k, r, a in zip(keys, raw, adjusted, strict=True)}


def _grid(rep: CoherenceReport) -> str:
    """Rows: cells; columns: tests that ran; each entry adjusted p over the effect size."""
    names = _ran(rep)
    lookup = _adjusted_lookup(rep)
    head = "".join(f"<th>{html.escape(_SHORT.get(n, n))}<br><span class='eff'>"
                   f"{html.escape(_effect_head(n))}</span></th>" for n in names)
    by = " / ".join(map(one_line, rep.by)) or "cell"
    rows = [f"<table class='grid'><thead><tr><th>{html.escape(by)}</th>{head}</tr></thead>"
            "<tbody>"]
    for i, cell in enumerate(rep.cells):
        tds = [f"<td>{html.escape(cell_label(cell.key))}<br><span class='eff'>n = "
               f"{cell.n_obs}</span></td>"]
        for name in names:
            if name in cell.results:
                _, adj = lookup[(i, name)]
                effect = html.escape(_num(cell.results[name].statistic, 3))
                if math.isnan(adj) and name not in DESCRIPTIVE:  # untestable there
                    tds.append(f"<td class='na'>no p<br><span class='eff'>{effect}</span></td>")
                elif math.isnan(adj):
                    tds.append(f"<td>&mdash;<br><span class='eff'>{effect}</span></td>")
                else:
                    klass = " class='sig'" if adj < ALPHA else ""
                    tds.append(f"<td{klass}>p {html.escape(_pval(adj))}<br>"
                               f"<span class='eff'>{effect}</span></td>")
            elif name in cell.errors:
                tds.append(f"<td class='err' title='{html.escape(cell.errors[name])}'>"
                           "error</td>")
            else:
                tds.append("<td class='na'>n/a</td>")
        rows.append("<tr>" + "".join(tds) + "</tr>")
    rows.append("</tbody></table>")
    return "".join(rows)


def _grid_note(rep: CoherenceReport) -> str:
    s = rep.settings
    adjust = s.get("adjust", "none")
    lookup = _adjusted_lookup(rep)
    m = sum(1 for r, _ in lookup.values() if not math.isnan(r))
    text = (f"Each entry: the {adjust_label(adjust)} p-value (over the {m} p-values of this "
            "report) above the effect size named in the column heading. Shaded: adjusted "
            f"p &lt; {ALPHA}, evidence against the property the test checks; a large "
            "p-value is not proof that the property holds. n/a: the test does not apply to "
            "the cell; &mdash;: descriptive, no p-value; no p: the test ran but could not "
            "give a p-value there (below, under Tests that did not run, it says why). Raw "
            "p-values are in the tables below and the appendix.")
    if adjust != "none" and m > 1:
        # a p-value at its Monte Carlo floor is rerun with the second stage's draws
        # (_resolve.py): the floor that matters is theirs, not the first stage's
        draws = second_stage_draws(m, adjust)
        floor = 1.0 / (draws + 1)
        smallest = min(1.0, floor * m) if adjust == "holm" else floor
        if smallest >= ALPHA:
            text += (f" With {draws} draws the smallest attainable Monte Carlo p-value "
                     f"is {floor:.3g}, and after adjustment {smallest:.3g}: no such test "
                     "can reach the shading.")
    return f"<p class='note'>{text}</p>"


# --------------------------------------------------------------------------- paper tables
def _paper_tables(rep: CoherenceReport) -> list[str]:
    """The paper's tables 1-6 (those with rows) as HTML, read from the report's results."""
    lookup = _adjusted_lookup(rep)
    level = rep.settings.get("confidence_level", 0.95)
    ci_head = f"{100 * level:g}% CI"
    out = []
    out += _statistic_table(rep, lookup, ("ci", "ci_evidence", "ci_calibrated"),
                            f"CMI (nats) [{ci_head}]", "Table 1. Conditional independence "
                            "of action and outcome given the belief: kNN estimate of "
                            "I(action; outcome | belief)")
    out += _statistic_table(rep, lookup, ("leakage", "leakage_evidence"),
                            f"reduction (%) [{ci_head}]", "Table 2. Leakage: % reduction of "
                            "the out-of-fold log-loss of the action when the outcome is "
                            "added to the belief")
    mono_rows = _monotonicity_rows(rep)
    if mono_rows:
        out.append(_table_html(
            pd.DataFrame(mono_rows), caption="Table 3. Monotonicity: % of bin pairs with a "
            "significant violation, per action pair (raw per-pair p; the cell's adjusted p "
            "is in the grid)", numeric=("bins", "bin pairs", "flagged", "significant",
                                        "violated (%)", "p (pair)")))
    prompt_rows = _prompt_rows(rep, ci_head)
    if prompt_rows:
        reference = rep.settings.get("reference_prompt", "standard")
        out.append(_table_html(
            pd.DataFrame(prompt_rows), caption=f"Table 4. Prompt consistency: belief "
            f"variation by prompt variant (reference prompt: {reference}; beliefs are "
            "probabilities)", numeric=("p",)))
    cal_rows = _calibration_rows(rep, ci_head)
    if cal_rows:
        n_bins = rep.settings.get("n_bins", 10)
        out.append(_table_html(pd.DataFrame(cal_rows), caption="Table 5. Forecast quality "
                               "of the context-mean belief (descriptive; CE^2: debiased "
                               f"squared l2 calibration error over up to {n_bins} "
                               "equal-mass bins (bins: those used, fewer where tied beliefs "
                               "merge them), l2 CE its square root; smooth ECE: Blasiok and "
                               "Nakkiran's "
                               "binning-free ECE)",
                               numeric=("contexts", "accuracy", "l2 CE", "bins", "smooth ECE"))
                   + _negative_ce_note(cal_rows))
    # the LIE check's own level where lie_options named one (its header said the report's)
    levels = {c.results["lie"].confidence_interval.confidence_level for c in rep.cells
              if "lie" in c.results}
    lie_head = f"{100 * levels.pop():g}% CI" if len(levels) == 1 else "CI"
    out += _statistic_table(rep, lookup, ("lie",), f"median error ratio [{lie_head}]",
                            "Table 6. Law of iterated expectation: the agent's error "
                            "relative to the baseline's (1 = as coherent)")
    return out


def _statistic_table(rep: CoherenceReport, lookup: Mapping[tuple[int, str], tuple[Any, Any]],
                     tests: tuple[str, ...], head: str,
                     caption: str) -> list[str]:
    """A paper table of these tests' rows: the statistic with its interval under ``head``
    next to the p-values (none when no cell ran them)."""
    rows = _test_rows(rep, lookup, tests, lambda r: {head: _with_ci(
        r.statistic, r.confidence_interval.low, r.confidence_interval.high)})
    if not len(rows):
        return []
    return [_table_html(rows, caption=caption, numeric=("p", "p adj.", "n"),
                        cell_class=_p_class)]


def _test_rows(rep: CoherenceReport, lookup: Mapping[tuple[int, str], tuple[Any, Any]],
               names: Sequence[str], fields: Callable[[Any], dict[str, Any]]) -> pd.DataFrame:
    """One row per cell and test of ``names`` run there: the cell, the test, ``fields`` of
    its result, the raw and adjusted p-values and the observations."""
    rows = []
    for i, cell in enumerate(rep.cells):
        for name in names:
            if name not in cell.results:
                continue
            result = cell.results[name]
            raw, adj = lookup[(i, name)]
            rows.append({"cell": cell_label(cell.key), "test": _SHORT.get(name, name),
                         **fields(result), "p": _pval(raw), "p adj.": _pval(adj),
                         "n": str(result.n_obs)})
    return pd.DataFrame(rows)


def _p_class(col: str, value: Any) -> str:
    """The CSS class of a paper-table cell: ``sig`` for an adjusted p below ALPHA."""
    if col == "p adj." and value and value.startswith("<"):
        return "sig"
    try:
        return "sig" if col == "p adj." and float(value) < ALPHA else ""
    except ValueError:
        return ""


def _monotonicity_rows(rep: CoherenceReport) -> list[dict[str, str]]:
    """Table 3's rows: one per cell and action pair of the monotonicity test."""
    mono_rows = []
    for cell in rep.cells:
        result = cell.results.get("monotonicity")
        if result is None:
            continue
        for row in result.table.itertuples(index=False):
            mono_rows.append({
                "cell": cell_label(cell.key), "action pair": str(row.pair),
                "bins": str(row.n_bins), "bin pairs": str(row.n_comparisons),
                "flagged": str(row.n_flagged), "significant": str(row.n_significant),
                "violated (%)": _num(row.statistic, 3), "p (pair)": _pval(row.pvalue)})
    return mono_rows


def _prompt_rows(rep: CoherenceReport, ci_head: str) -> list[dict[str, str]]:
    """Table 4's rows: one per cell and prompt variant of the prompt-consistency test."""
    prompt_rows = []
    for cell in rep.cells:
        result = cell.results.get("prompt_consistency")
        if result is None:
            continue
        for row in result.table.to_dict("records"):
            entry = {"cell": cell_label(cell.key), "prompt": str(row["prompt"]),
                     f"SD over repetitions [{ci_head}]": _with_ci(
                         row["std"], row["std_ci_low"], row["std_ci_high"]),
                     f"RMSE vs reference [{ci_head}]": _with_ci(
                         row["rmse_reference"], row["rmse_reference_ci_low"],
                         row["rmse_reference_ci_high"]),
                     "p": _pval(row["pvalue"])}
            if "rmse_truth" in row:
                entry[f"RMSE vs truth [{ci_head}]"] = _with_ci(
                    row["rmse_truth"], row["rmse_truth_ci_low"], row["rmse_truth_ci_high"])
            prompt_rows.append(entry)
    return prompt_rows


#: Table 5's l2 CE where the debiased CE^2 is negative (:func:`_negative_ce_note`).
_NEGATIVE_CE = "0*"


def _negative_ce_note(rows: Sequence[Mapping[str, str]]) -> str:
    """Table 5's footnote where an l2 CE is :data:`_NEGATIVE_CE` (it read 0, unmarked)."""
    if not any(r.get("l2 CE") == _NEGATIVE_CE for r in rows):
        return ""
    return ("<p class='note'>0*: the debiased CE^2 is negative (its estimate of a small "
            "squared error fell below 0, the value in the CE^2 column); it has no square root, "
            "and the l2 CE is shown as sqrt(max(CE^2, 0)) = 0 by Kumar et al.'s convention, "
            "not as a measured 0: the CE^2 interval says how large the error may be.</p>")


def _calibration_rows(rep: CoherenceReport, ci_head: str) -> list[dict[str, str]]:
    """Table 5's rows: one per cell with a calibration result, with the calibration
    error and smooth ECE where they ran."""
    cal_rows = []
    for cell in rep.cells:
        result = cell.results.get("calibration")
        if result is None:
            continue
        t = result.table.iloc[-1]
        cal_rows.append({"cell": cell_label(cell.key), "contexts": str(int(t["n_questions"])),
                         f"Brier [{ci_head}]": _with_ci(t["brier"], t["brier_ci_low"],
                                                        t["brier_ci_high"]),
                         f"log score [{ci_head}]": _with_ci(t["log_score"],
                                                            t["log_score_ci_low"],
                                                            t["log_score_ci_high"]),
                         "accuracy": _num(t["accuracy"], 3)})
        ce = cast("CalibrationErrorResult | None", cell.results.get("calibration_error"))
        if ce is not None:
            ci = ce.confidence_interval
            cal_rows[-1][f"debiased CE^2 [{ci_head}]"] = _with_ci(ce.statistic, ci.low, ci.high)
            # a negative CE^2 (the debiased estimate of a small error can be) has no square
            # root: its 0 is a convention (Kumar et al.'s), marked, not a measured 0
            cal_rows[-1]["l2 CE"] = (_NEGATIVE_CE if ce.statistic < 0
                                     else _num(math.sqrt(ce.statistic), 3))
            cal_rows[-1]["bins"] = str(ce.n_bins_used)  # tied beliefs merge bins
        sm = cell.results.get("smooth_ece")
        if sm is not None:
            cal_rows[-1]["smooth ECE"] = _num(sm.statistic, 3)
    return cal_rows


# --------------------------------------------------------------------------- figures
def _figure_svg(fig: Any) -> str:
    import matplotlib.pyplot as plt

    buf = io.StringIO()
    with plt.rc_context({"svg.fonttype": "none", "svg.hashsalt": "coherence"}):
        fig.savefig(buf, format="svg", bbox_inches="tight", metadata={"Date": None})
    plt.close(fig)
    text = buf.getvalue()
    return text[text.index("<svg"):]


#: What every mark of each test's figure means (shown under the figure).
_FIGURE_KEYS = {
    "monotonicity": "Each line: an action pair's share of its first action by belief bin "
                    "(should not fall as the belief rises). Red ring: the lower bin of a "
                    "significant violation, i.e. a higher-belief bin whose share is lower "
                    "with an adjusted one-sided Fisher p-value below 0.05 (the paper's "
                    "flag); dotted segment: joins the two bins of each such violation; "
                    "dashed arrow: the pair's strongest fall found by the localised test "
                    "(adjusted p < 0.05), from the lower belief window's share to the "
                    "upper window's.",
    "calibration": "Points: the context-mean beliefs in bins, mean forecast against the "
                   "observed frequency of the outcome, the area proportional to the bin's "
                   "size; dashed diagonal: perfect calibration; ECE in the legend.",
    "lie": "Dots: each unit's ratio of the agent's LIE error to the baseline's (log scale), "
           "boxes their spread per variable; dashed line: ratio 1 (no worse than the "
           "baseline); solid line and band: the median ratio and its interval.",
}


def _figures(rep: CoherenceReport) -> list[tuple[str, str]]:
    """(caption, inline SVG) pairs for every figure the results can draw."""
    import matplotlib.pyplot as plt

    figures = []
    for cell in rep.cells:
        label = cell_label(cell.key)
        for name, result in cell.results.items():
            fig, ax = plt.subplots(figsize=(4.6, 3.3))
            try:
                if name == "calibration":
                    from .._scoring._reliability_plots import plot_reliability

                    plot_reliability(result, ax=ax)  # type: ignore[arg-type]
                elif hasattr(result, "plot"):
                    result.plot(ax=ax)
                else:
                    plt.close(fig)
                    continue
            except (ValueError, TypeError):
                plt.close(fig)
                continue
            # matplotlib reads text between two $ as maths: a label "$5 or $10" lost its
            # dollars, and "$x$" read as an italic x; a long one is wrapped (one of 500
            # characters made the figure 3,000 points wide, shrunk to nothing on the page)
            title = "\n".join(textwrap.wrap(f"{_SHORT.get(name, name)}: {label}", 60,
                                             break_on_hyphens=False))
            ax.set_title(title.replace("$", r"\$"), fontsize=10)
            key = _FIGURE_KEYS.get(name, "")
            figures.append((f"{name}, {label}" + (f". {key}" if key else ""),
                            _figure_svg(fig)))
    return figures


# --------------------------------------------------------------------------- provenance
def _provenance(rep: CoherenceReport) -> str:
    s = rep.settings
    data = s.get("data", {})
    cols = s.get("columns", {})
    items = []
    if s.get("data_file"):
        items.append(("data file", f"{s['data_file']} (sha256 {s.get('data_file_sha256', '?')})"))
    if data:
        items.append(("table", f"{data.get('n_rows')} rows; content sha256 "
                               f"{data.get('content_sha256')}"))
    models = data.get("models") or sorted({cell_label(c.key) for c in rep.cells})
    items.append(("models / cells", _names(models)))
    if data.get("prompts"):
        items.append(("prompts", _names(data["prompts"]) + f" (reference: "
                      f"{s.get('reference_prompt')})"))
    constant = data.get("constant_columns") or {}
    if constant:
        items.append(("constant columns", "; ".join(f"{k} = {v}" for k, v in constant.items())))
    items.append(("column mapping", "; ".join(f"{k} = {v}" for k, v in cols.items()
                                               if v not in (None, []))))
    if s.get("actions"):
        items.append(("action labels", "; ".join(f"{k} = {v}" for k, v in s["actions"].items())))
    items.append(("cells by", ", ".join(s.get("by", [])) or "(one cell)"))
    items.append(("multiplicity", adjust_label(s.get("adjust", "none"))))
    for key in ("k", "n_permutations", "n_resamples", "n_splits", "engine", "n_bins",
                "confidence_level", "rng", "n_jobs", "backend", "numba_threads_per_cell",
                "created"):
        if key in s:
            items.append((key, str(s[key])))
    versions = s.get("versions", {})
    items.append(("versions", ", ".join(f"{k} {v}" for k, v in versions.items())))
    table = pd.DataFrame(items, columns=["item", "value"])
    shell, python = rerun_commands(rep)
    seed_note = ("" if s.get("seed") is not None else
                 "<p class='note'><b>Not reproducible as run:</b> the report was made with "
                 f"rng = {html.escape(str(s.get('rng')))}; replace SEED by an integer and "
                 "rerun.</p>")
    file_note = ("" if s.get("data_file") else
                 " (TABLE.csv: the table saved to a file; its content hash is above)")
    notes, shell_ok = rerun_notes(s)
    shell_html = (f"<p>To rerun from the command line{file_note}:</p>"
                  f"<pre>{html.escape(shell)}</pre><p>or from Python:</p>" if shell_ok
                  else f"<p>To rerun from Python{file_note}:</p>")
    return (_table_html(table, klass="prov") + seed_note + notes + shell_html
            + f"<pre>{html.escape(python)}</pre>")


def _names(values: Sequence[Any]) -> str:
    """Labels joined by ", ", one holding a comma or a quote quoted (``repr``): the models
    "a, b" and "c" read as the three models "a, b, c"."""
    return cell_label({str(i): v for i, v in enumerate(values)}) if len(values) else ""


# --------------------------------------------------------------------------- the page
def _header(rep: CoherenceReport) -> str:
    from .. import __version__

    s = rep.settings
    n = sum(c.n_obs for c in rep.cells)
    return (f"<h1>Coherence report</h1><p class='note'>belief-coherence "
            f"{html.escape(__version__)}, {html.escape(str(s.get('created', '')))}; "
            f"{len(rep.cells)} cell(s), {n} rows.</p>")


def render_first_screen(rep: CoherenceReport) -> str:
    """The grid and its note (the report's first screen; a notebook's display)."""
    style = ("<style>.coherence-report td{text-align:right}"
             ".coherence-report td:first-child{text-align:left;white-space:pre-wrap}"
             ".coherence-report .sig{background:#f9d2cf;font-weight:bold}"
             ".coherence-report .eff{font-size:.9em;color:#444;font-weight:normal}"
             ".coherence-report .na{color:#999}.coherence-report .err{color:#a00}</style>")
    style += ("<style>.coherence-report .degenerate{border:2px solid #a00;"
              "background:#fdecea;padding:.4em .6em}</style>")
    return ("<div class='coherence-report'>" + style + _degenerate_banner(rep)
            + "<p><b>Which model fails which property</b></p>"
            + _grid(rep) + _grid_note(rep) + "</div>")


def render_html(rep: CoherenceReport) -> str:
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        "<meta name='viewport' content='width=device-width, initial-scale=1'>",
        "<title>belief-coherence report</title>",
        f"<style>{_CSS}</style></head><body>",
        _header(rep),
        _degenerate_banner(rep),
        "<h2>Which model fails which property</h2>",
        _grid(rep),
        _grid_note(rep),
        _truth(rep),
        _diagnostics_table(rep),
    ]
    missing = not_run(rep)
    if missing:
        parts.append("<h3>Tests that did not run</h3><ul>" + "".join(
            f"<li><b>{html.escape(name)}</b> {html.escape(rest)}</li>"
            for name, rest in missing) + "</ul>")
    parts.append("<h3>What each test checks</h3><ul>" + "".join(
        f"<li><b>{html.escape(spec.name)}</b>: {html.escape(spec.label)}</li>"
        for spec in REGISTRY if spec.name in _ran(rep)) + "</ul>")
    tables = _paper_tables(rep)
    if tables:
        parts.append("<h2>Results</h2>")
        parts.extend(tables)
    figures = _figures(rep)
    if figures:
        parts.append("<h2>Figures</h2><div class='figs'>")
        for caption, svg in figures:
            parts.append(f"<figure>{svg}<figcaption>{html.escape(caption)}</figcaption>"
                         "</figure>")
        parts.append("</div>")
    parts.append("<h2>Provenance and how to rerun</h2>")
    parts.append(_provenance(rep))
    parts.append("<h2 class='appendix'>Appendix: every number</h2>")
    parts.append(_appendix(rep))
    parts.append("</body></html>")
    return "\n".join(parts)


def _truth(rep: CoherenceReport, alpha: float = 0.05) -> str:
    """The simulated ground truth beside each cell's results: what the cell violates by
    design (``rep.truth``) and the tests whose adjusted p-value is below ``alpha``."""
    truth = rep.truth
    if truth is None or len(truth) == 0:
        return ""
    # keyed by the cell's labels, a tuple (their joined text named ("a, b", "c") and
    # ("a", "b, c") alike); a truth row names its cell by the tuple (an index of the by
    # columns) or by the cell's label
    verdicts = cell_verdicts(rep.summary_table(), alpha)
    rows = truth_cells(truth, verdicts)
    shown = truth.reset_index()
    shown[f"fails here (adjusted p < {alpha:g})"] = [
        verdicts[k][1] if k in verdicts else "not in the report" for k in rows]
    numeric = [c for c in shown.columns if pd.api.types.is_numeric_dtype(shown[c])]
    caption = str(truth.attrs.get("caption", ""))
    return ("<h3>Ground truth: what each simulated agent violates by design</h3>"
            + _table_html(shown, numeric=numeric)
            + (f"<p class='note'>{html.escape(caption)}</p>" if caption else ""))


def _appendix(rep: CoherenceReport) -> str:
    frame = rep.to_frame()
    level = rep.settings.get("confidence_level", 0.95)
    shown = pd.DataFrame({
        "cell": [cell_label({c: r[c] for c in rep.by}) for _, r in frame.iterrows()],
        "test": frame["test"],
        "statistic": frame["statistic"].map(lambda v: _num(v, 4)),
        f"{100 * level:g}% CI": [_with_ci(0.0, lo, hi, 4).split(" ", 1)[-1]
                                 if not (math.isnan(lo) or math.isnan(hi)) else ""
                                 for lo, hi in zip(frame["ci_low"], frame["ci_high"],
                                                   strict=True)],
        "p": frame["pvalue"].map(_pval),
        "p adj.": frame["pvalue_adjusted"].map(_pval),
        "n": frame["n_obs"].map(lambda v: "" if pd.isna(v) else str(int(v))),
        "method": frame["method"].astype(str),
    })
    parts = [_table_html(shown, caption="Every test on every cell (the tidy to_frame() "
                         "table; warnings and errors below)",
                         numeric=("statistic", "p", "p adj.", "n"))]
    notes = [(r["test"], cell_label({c: r[c] for c in rep.by}), r["warnings"])
             for _, r in frame.iterrows() if r["warnings"]]
    if notes:
        parts.append("<h3>Warnings raised by the tests</h3><ul>" + "".join(
            f"<li><b>{html.escape(t)}</b> on {html.escape(c)}: {html.escape(w)}</li>"
            for t, c, w in notes) + "</ul>")
    details = {spec.name: spec.detail for spec in REGISTRY if spec.detail}
    for cell in rep.cells:
        for name, result in cell.results.items():
            if name in details and len(result.table):
                detail = result.table.head(200)
                numeric = [c for c in detail.columns if pd.api.types.is_numeric_dtype(
                    detail[c]) and not pd.api.types.is_bool_dtype(detail[c])]
                parts.append(f"<h3>{html.escape(name)}: {html.escape(details[name])}, "
                             f"{html.escape(cell_label(cell.key))}</h3>")
                # no p-value rounded across the result's own level either (IIA's
                # violates: adjusted p <= 1 - confidence_level), as in its summary()
                level = result.confidence_interval.confidence_level
                levels = (result_level(level),) if 0 < level < 1 else ()
                # at most 7 columns a block, the first repeated: fits a portrait page
                first, rest = detail.columns[0], list(detail.columns[1:])
                for start in range(0, max(len(rest), 1), 6):
                    block = detail[[first, *rest[start:start + 6]]]
                    parts.append(_table_html(block, numeric=numeric, levels=levels))
    return "".join(parts)


# --------------------------------------------------------------------------- diagnostics
def _degenerate_banner(rep: CoherenceReport) -> str:
    """The warning shown above the grid when a cell's beliefs are degenerate."""
    flagged = rep.degenerate_warnings()
    if not flagged:
        return ""
    items = "".join(f"<li>{html.escape(w)}</li>" for w in flagged)
    return ("<div class='degenerate' role='alert'><p><b>Warning: degenerate elicitation"
            "</b></p><ul>" + items + "</ul></div>")


def _diagnostics_table(rep: CoherenceReport) -> str:
    """What each cell's stated beliefs say before any test (elicitation diagnostics)."""
    rows = []
    for cell in rep.cells:
        d = cell.diagnostics
        if d is None:
            continue
        rows.append({
            "cell": cell_label(cell.key), "beliefs": str(d.n_obs),
            "distinct": str(d.n_distinct),
            "most frequent": f"{_num(d.modal_belief, 3)} ({d.modal_share:.0%})",
            f"at {_num(d.example_value, 2)} (example)": f"{d.share_example:.0%}",
            "on 0.1 grid": f"{d.share_tenths:.0%}",
            "rank corr. with " + (d.association_with or "truth"): _num(d.association, 3),
            "actions": ", ".join(f"{k} {v}" for k, v in d.action_counts.items()),
            "set aside": ", ".join(f"{k} {v}" for k, v in d.set_aside.items()) or "none",
            "degenerate": d.degenerate,
        })
    if not rows:
        return ""
    frame = pd.DataFrame(rows)
    return _table_html(frame, caption="Elicitation diagnostics: the stated beliefs of each "
                       "cell (distinct values, the most frequent one, the share at the "
                       "prompt's example value and on a 0.1 grid, rank correlation with the "
                       "truth or outcome), the actions, and the replies set aside before the "
                       "table was written", numeric=("beliefs", "distinct"),
                       cell_class=lambda col, v: "err" if col == "degenerate" and v is True
                       else "")
