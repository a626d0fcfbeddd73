"""The main job: every test that applies, per (model, dataset) cell, in one report.

``report`` splits a belief/action table into cells by the ``by`` columns that
exist, runs each applicable test on each cell (cells in parallel with joblib),
and returns a :class:`CoherenceReport` holding the result objects themselves.
Every number in ``to_frame()``, ``to_markdown()`` and ``to_html()`` is read from
those objects, never recomputed.
"""

from __future__ import annotations

import base64
import html
import io
import platform
import sys
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from ._design import evidence_columns, require_design_columns
from ._results import RESULT_COLUMNS, CoherenceResult
from ._rng import RNGLike, check_rng, spawn
from ._validation import (
    as_dataframe,
    binary_column,
    check_choice,
    check_int,
    label_column,
    param_error,
    probability_column,
    require_columns,
)

__all__ = ["TEST_NAMES", "CoherenceReport", "ReportCell", "report"]


# --------------------------------------------------------------------------- test registry
@dataclass(frozen=True, slots=True)
class _Options:
    belief: str
    action: str
    outcome: str
    group: str
    prompt: str | None
    repetition: str | None
    truth: str | None
    evidence: tuple[str, ...]
    k: int
    n_resamples: int
    n_permutations: int
    n_splits: int
    engine: str
    n_bins: int
    confidence_level: float
    reference_prompt: str


@dataclass(frozen=True, slots=True)
class _Spec:
    name: str
    label: str
    applies: Callable[[pd.DataFrame, _Options], bool]
    run: Callable[[pd.DataFrame, _Options, np.random.Generator], CoherenceResult]


def _standard_rows(df: pd.DataFrame, o: _Options) -> pd.DataFrame:
    """Rows of the reference prompt when a prompt column exists (decision tests use them)."""
    if o.prompt is None or o.prompt not in df.columns:
        return df
    rows = df[df[o.prompt].astype(str) == o.reference_prompt]
    return rows if len(rows) else df


def _ci(
    df: pd.DataFrame,
    o: _Options,
    rng: np.random.Generator,
    *,
    evidence: bool = False,
    calibrate: bool = False,
) -> CoherenceResult:
    from ._citest import ci_test

    return ci_test(
        _standard_rows(df, o),
        belief=o.belief,
        action=o.action,
        outcome=o.outcome,
        evidence=o.evidence if evidence else (),
        group=o.group,
        k=o.k,
        n_resamples=o.n_permutations,
        confidence_level=o.confidence_level,
        calibrate=calibrate,
        rng=rng,
    )


def _leak(
    df: pd.DataFrame, o: _Options, rng: np.random.Generator, *, evidence: bool = False
) -> CoherenceResult:
    from ._leakage import leakage_test

    return leakage_test(
        _standard_rows(df, o),
        belief=o.belief,
        action=o.action,
        outcome=o.outcome,
        evidence=o.evidence if evidence else (),
        group=o.group,
        n_splits=o.n_splits,
        engine=o.engine,  # type: ignore[arg-type]  # checked in _report_iv
        n_resamples=o.n_resamples,
        confidence_level=o.confidence_level,
        rng=rng,
    )


def _mono(df: pd.DataFrame, o: _Options, rng: np.random.Generator) -> CoherenceResult:
    from ._monotone import monotonicity_test

    return monotonicity_test(
        _standard_rows(df, o),
        belief=o.belief,
        action=o.action,
        n_bins=o.n_bins,
        n_resamples=o.n_resamples,
        rng=rng,
    )


def _consistency(df: pd.DataFrame, o: _Options, rng: np.random.Generator) -> CoherenceResult:
    from ._consistency import prompt_consistency

    assert o.prompt is not None  # guarded by applies
    return prompt_consistency(
        df,
        belief=o.belief,
        prompt=o.prompt,
        group=o.group,
        repetition=o.repetition or "repetition",
        reference=o.reference_prompt,
        truth=o.truth if o.truth in df.columns else None,
        n_resamples=o.n_resamples,
        confidence_level=o.confidence_level,
        rng=rng,
    )


def _lie_placeholder(df: pd.DataFrame, o: _Options, rng: np.random.Generator) -> CoherenceResult:
    raise AssertionError("the LIE check runs on the `lie` table")  # pragma: no cover


def _calibration(df: pd.DataFrame, o: _Options, rng: np.random.Generator) -> CoherenceResult:
    """Brier score, reliability and ECE of the repetition-averaged belief per context."""
    from ._forecast import forecast_scores

    rows = _standard_rows(df, o)
    per_context = rows.groupby(o.group, sort=True, observed=True).agg(
        probability=(o.belief, "mean"), outcome=(o.outcome, "first")
    )
    table = per_context.reset_index().rename(columns={o.group: "question"})
    table["model"] = "agent"
    return forecast_scores(
        table,
        by="model",
        timestamp=None,
        n_resamples=o.n_resamples,
        confidence_level=o.confidence_level,
        rng=rng,
    )


def _has_outcome(df: pd.DataFrame, o: _Options) -> bool:
    return o.outcome in df.columns


def _has_actions(df: pd.DataFrame, o: _Options) -> bool:
    return o.action in df.columns and o.outcome in df.columns


def _has_evidence(df: pd.DataFrame, o: _Options) -> bool:
    return _has_actions(df, o) and bool(o.evidence)


def _has_prompts(df: pd.DataFrame, o: _Options) -> bool:
    return (
        o.prompt is not None
        and o.prompt in df.columns
        and df[o.prompt].nunique() > 1
        and o.repetition is not None
        and o.repetition in df.columns
    )


_REGISTRY: tuple[_Spec, ...] = (
    _Spec(
        "ci",
        "is the action independent of the outcome given the stated belief? statistic: "
        "kNN estimate of I(action; outcome | belief) in nats; p: conditional permutation",
        _has_actions,
        _ci,
    ),
    _Spec(
        "ci_evidence",
        "the same, conditioning also on the evidence columns",
        _has_evidence,
        lambda d, o, r: _ci(d, o, r, evidence=True),
    ),
    _Spec(
        "ci_calibrated",
        "the same, with the belief replaced by its cross-fitted isotonic calibration",
        _has_actions,
        lambda d, o, r: _ci(d, o, r, calibrate=True),
    ),
    _Spec(
        "leakage",
        "does knowing the outcome help predict the action beyond the belief? statistic: % "
        "reduction in out-of-fold log-loss; p: grouped permutation of the outcome",
        _has_actions,
        _leak,
    ),
    _Spec(
        "leakage_evidence",
        "the same, both classifiers also seeing the evidence columns",
        _has_evidence,
        lambda d, o, r: _leak(d, o, r, evidence=True),
    ),
    _Spec(
        "monotonicity",
        "is the share of each action pair monotone in the belief? statistic: % of "
        "bin pairs with a significant violation (the paper's); p: isotonic LR test",
        _has_actions,
        _mono,
    ),
    _Spec(
        "prompt_consistency",
        "does the belief move when only the wording changes? statistic: largest RMSE "
        "between prompt variants; p: within-context permutation",
        _has_prompts,
        _consistency,
    ),
    _Spec(
        "calibration",
        "how good are the beliefs as forecasts? statistic: Brier score of the "
        "context-mean belief (descriptive, no p-value); reliability diagram below",
        _has_outcome,
        _calibration,
    ),
    _Spec(
        "lie",
        "law of iterated expectation: is the agent's error in P(y|x) = sum_z P(y|x,z) P(z|x) "
        "larger than a baseline's? statistic: median error ratio; p: sign test over contexts",
        lambda d, o: False,  # runs on the separate `lie` table, see _run_cell
        _lie_placeholder,
    ),
)

#: Names accepted by ``report(tests=...)``.
TEST_NAMES: tuple[str, ...] = tuple(s.name for s in _REGISTRY)


# --------------------------------------------------------------------------- results
@dataclass(frozen=True, slots=True)
class ReportCell:
    """The results of one (model, dataset) cell: ``key`` maps each ``by`` column to its value."""

    key: Mapping[str, Any]
    n_obs: int
    results: Mapping[str, CoherenceResult]
    errors: Mapping[str, str]
    #: warnings each test raised on this cell (recorded, not printed)
    notes: Mapping[str, tuple[str, ...]] = field(default_factory=dict)


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
    """

    cells: tuple[ReportCell, ...]
    by: tuple[str, ...]
    settings: Mapping[str, Any] = field(repr=False)

    def to_frame(self) -> pd.DataFrame:
        """Tidy: one row per cell x test, the ``by`` columns first, then RESULT_COLUMNS.

        Tests that raised on a cell appear with NaN numbers and the error in
        ``error``; warnings a test raised are in ``warnings``.
        """
        rows = []
        for cell in self.cells:
            for name in TEST_NAMES:
                if name in cell.results:
                    # the base schema (some families override to_frame with a detail table)
                    frame = CoherenceResult.to_frame(cell.results[name])[list(RESULT_COLUMNS)]
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
                rows.append({**dict(cell.key), **row})
        columns = [*self.by, *RESULT_COLUMNS, "error", "warnings"]
        return pd.DataFrame(rows, columns=columns)

    def to_markdown(self) -> str:
        """A GitHub-flavoured Markdown table of :meth:`to_frame` (4 significant digits)."""
        frame = self.to_frame()
        header = "| " + " | ".join(frame.columns) + " |"
        rule = "| " + " | ".join("---" for _ in frame.columns) + " |"
        lines = [header, rule]
        for _, row in frame.iterrows():
            lines.append("| " + " | ".join(_cell_text(v) for v in row) + " |")
        return "\n".join(lines) + "\n"

    def summary_table(self) -> pd.DataFrame:
        """Cells x tests of p-values (the headline of the terminal summary)."""
        frame = self.to_frame()
        index = list(self.by) if self.by else None
        if index is None:
            frame = frame.assign(cell="all")
            index = ["cell"]
        return frame.pivot_table(
            index=index, columns="test", values="pvalue", aggfunc="first", sort=False
        )

    def to_html(self, path: str | Path | None = None) -> str:
        """One self-contained HTML page (figures embedded as PNG); written to ``path`` if given."""
        text = _render_html(self)
        if path is not None:
            Path(path).write_text(text, encoding="utf-8")
        return text


def _cell_text(value: Any) -> str:
    if isinstance(value, float | np.floating):
        return "" if np.isnan(value) else f"{value:.4g}"
    return str(value).replace("|", "\\|")


# --------------------------------------------------------------------------- report()
def _report_iv(
    data: Any,
    belief: str,
    action: str,
    outcome: str,
    group: str,
    prompt: str | None,
    repetition: str | None,
    truth: str | None,
    evidence: Iterable[str],
    by: Sequence[str] | str,
    tests: Any,
    engine: str,
) -> tuple[pd.DataFrame, tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    owner = "report"
    df = as_dataframe(data, owner=owner)
    evidence = evidence_columns(
        evidence if isinstance(evidence, str | Sequence) else tuple(evidence), owner
    )
    require_design_columns(df, {"belief": belief, "group": group}, evidence, owner)
    if (action in df.columns) != (outcome in df.columns):
        missing = action if action not in df.columns else outcome
        require_columns(df, {"action" if missing == action else "outcome": missing}, owner=owner)
    # validate the shared columns once, at the door, so a bad table fails with one
    # clear error instead of one recorded error per test and cell
    probability_column(df, belief, owner=owner)
    if action in df.columns:
        label_column(df, action, owner=owner)
        binary_column(df, outcome, owner=owner)
    label_column(df, group, owner=owner)
    by = (by,) if isinstance(by, str) else tuple(by)
    present_by = tuple(c for c in by if c in df.columns)
    if tests == "all":
        names = TEST_NAMES
    else:
        names = (tests,) if isinstance(tests, str) else tuple(tests)
        for name in names:
            check_choice(name, "tests", owner, ("all", *TEST_NAMES))
    check_choice(engine, "engine", owner, ("logistic", "catboost"))
    return df, evidence, present_by, names


def report(
    data: Any,
    *,
    belief: str = "belief",
    action: str = "action",
    outcome: str = "outcome",
    group: str = "context",
    prompt: str | None = "prompt",
    repetition: str | None = "repetition",
    truth: str | None = "truth",
    evidence: Iterable[str] = (),
    by: Sequence[str] | str = ("model", "dataset"),
    tests: str | Sequence[str] = "all",
    reference_prompt: str = "standard",
    k: int = 3,
    n_permutations: int = 1000,
    n_resamples: int = 500,
    n_splits: int = 5,
    engine: str = "logistic",
    n_bins: int = 10,
    confidence_level: float = 0.95,
    n_jobs: int = 1,
    backend: str | None = None,
    progress: bool | None = None,
    lie: Any = None,
    lie_options: Mapping[str, Any] | None = None,
    rng: RNGLike = None,
) -> CoherenceReport:
    """Run every applicable coherence test on every (model, dataset) cell.

    Parameters
    ----------
    data : DataFrame
        The belief/action table (DESIGN.md); see ``docs/tables.md``.
    belief, action, outcome, group, prompt, repetition, truth : str
        Column names. ``prompt``, ``repetition`` and ``truth`` are optional:
        tests that need them run only when they exist.
    evidence : iterable of str
        Evidence columns for the "with x" variants.
    by : sequence of str
        Columns that define cells; those absent from the data are ignored.
    tests : "all" or sequence of str
        A subset of :data:`TEST_NAMES`.
    reference_prompt : str
        Prompt variant the decision tests use, and the reference of the
        prompt-consistency RMSEs.
    k, n_permutations, n_resamples, n_splits, engine, n_bins, confidence_level
        Settings passed to the tests (``engine`` is the leakage classifier:
        ``"logistic"`` for speed, ``"catboost"`` for the paper's settings).
    n_jobs : int
        Cells run in parallel with joblib; ``backend`` picks joblib's backend
        (``"loky"`` by default; ``"dask"`` or ``"ray"`` hand the sweep to a
        cluster registered with joblib, see ``docs/report.md``).
    progress : bool or None
        A progress bar over cells; ``None`` shows it only on a terminal.
    lie : DataFrame, optional
        The law-of-iterated-expectation long table of
        :func:`coherence.iterated_expectation_check` (one row per context,
        auxiliary variable and state; e.g. ``bayesnets.lie_study(...).data``).
        When it has the ``by`` columns it is split into the same cells;
        otherwise it is checked once, in a cell of its own.
    lie_options : mapping, optional
        Keyword arguments for :func:`coherence.iterated_expectation_check`
        (``baseline=``, or ``ground_truth=``, ``contexts=``, ``evidence=``, ...).
    rng : int, Generator or None
        One seed for everything; each cell and test gets its own spawned
        stream, so results do not depend on ``n_jobs``.

    Returns
    -------
    CoherenceReport
    """
    df, evidence_t, present_by, names = _report_iv(
        data, belief, action, outcome, group, prompt, repetition, truth, evidence, by, tests, engine
    )
    n_jobs = check_int(n_jobs, "n_jobs", "report", low=-1)
    if n_jobs == 0:
        raise ValueError(param_error("n_jobs", "report", "a positive int or -1", n_jobs))
    seed_source = rng if isinstance(rng, int) and not isinstance(rng, bool) else None
    gen = check_rng(rng, owner="report")
    options = _Options(
        belief=belief,
        action=action,
        outcome=outcome,
        group=group,
        prompt=prompt if prompt in df.columns else None,
        repetition=repetition if repetition in df.columns else None,
        truth=truth if truth in df.columns else None,
        evidence=evidence_t,
        k=k,
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        n_splits=n_splits,
        engine=engine,
        n_bins=n_bins,
        confidence_level=confidence_level,
        reference_prompt=reference_prompt,
    )
    if present_by:
        groups = list(df.groupby(list(present_by), sort=True, observed=True, dropna=False))
        keyed = [
            (dict(zip(present_by, key if isinstance(key, tuple) else (key,), strict=True)), part)
            for key, part in groups
        ]
    else:
        keyed = [({}, df)]
    lie_parts: list[pd.DataFrame | None] = [None] * len(keyed)
    if lie is not None and "lie" in names:
        lie_df = as_dataframe(lie, name="lie", owner="report")
        if len(keyed) == 1:
            lie_parts[0] = lie_df
        elif all(c in lie_df.columns for c in present_by):
            for i, (key, _) in enumerate(keyed):
                mask = np.ones(len(lie_df), dtype=bool)
                for col, value in key.items():
                    mask &= (lie_df[col] == value).to_numpy()
                lie_parts[i] = lie_df[mask] if mask.any() else None
        else:
            keyed.append((dict.fromkeys(present_by, "lie table"), df.iloc[:0]))
            lie_parts.append(lie_df)
    streams = spawn(gen, len(keyed))
    specs = [s for s in _REGISTRY if s.name in names]

    from joblib import Parallel, delayed

    show = sys.stderr.isatty() if progress is None else bool(progress)
    jobs = (
        delayed(_run_cell)(key, part, specs, options, stream, lie_part, dict(lie_options or {}))
        for (key, part), stream, lie_part in zip(keyed, streams, lie_parts, strict=True)
    )
    if backend is None:
        runner = Parallel(n_jobs=n_jobs, return_as="generator")
    else:
        runner = Parallel(n_jobs=n_jobs, backend=backend, return_as="generator")
    results = runner(jobs)
    if show:
        from tqdm.auto import tqdm

        results = tqdm(results, total=len(keyed), desc="coherence cells", file=sys.stderr)
    cells = tuple(results)

    settings = {
        "columns": {
            "belief": belief,
            "action": action,
            "outcome": outcome,
            "group": group,
            "prompt": options.prompt,
            "repetition": options.repetition,
            "truth": options.truth,
            "evidence": list(evidence_t),
        },
        "by": list(present_by),
        "tests": [s.name for s in specs],
        "k": k,
        "n_permutations": n_permutations,
        "n_resamples": n_resamples,
        "n_splits": n_splits,
        "engine": engine,
        "n_bins": n_bins,
        "confidence_level": confidence_level,
        "reference_prompt": reference_prompt,
        "rng": seed_source if seed_source is not None else repr(rng),
        "n_jobs": n_jobs,
        "backend": backend or "loky",
        "versions": _versions(),
        "created": datetime.now(UTC).isoformat(timespec="seconds"),
    }
    return CoherenceReport(cells=cells, by=present_by, settings=settings)


def _run_cell(
    key: Mapping[str, Any],
    part: pd.DataFrame,
    specs: Sequence[_Spec],
    options: _Options,
    stream: np.random.Generator,
    lie_part: pd.DataFrame | None = None,
    lie_options: Mapping[str, Any] | None = None,
) -> ReportCell:
    results: dict[str, CoherenceResult] = {}
    errors: dict[str, str] = {}
    notes: dict[str, tuple[str, ...]] = {}
    test_streams = spawn(stream, len(_REGISTRY))
    by_name = {s.name: g for s, g in zip(_REGISTRY, test_streams, strict=True)}
    for spec in specs:
        is_lie = spec.name == "lie"
        if (is_lie and lie_part is None) or (
            not is_lie and not (len(part) and spec.applies(part, options))
        ):
            continue
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            try:
                if is_lie:
                    from ._axioms import iterated_expectation_check

                    results[spec.name] = iterated_expectation_check(
                        lie_part, **dict(lie_options or {}), rng=by_name[spec.name]
                    )
                else:
                    results[spec.name] = spec.run(part, options, by_name[spec.name])
            except (ValueError, TypeError) as exc:
                errors[spec.name] = f"{type(exc).__name__}: {exc}"
        if caught:
            notes[spec.name] = tuple(
                dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught)
            )
    return ReportCell(key=dict(key), n_obs=len(part), results=results, errors=errors, notes=notes)


def _versions() -> dict[str, str]:
    from importlib import metadata

    out = {"python": platform.python_version()}
    for name in (
        "belief-coherence",
        "numpy",
        "scipy",
        "pandas",
        "numba",
        "scikit-learn",
        "statsmodels",
        "catboost",
        "pgmpy",
    ):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


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
            tds.append(f"<td{klass}>{html.escape(_cell_text(value))}</td>")
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
                from ._forecast import plot_reliability

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


def _render_html(rep: CoherenceReport) -> str:
    from . import __version__

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
            for spec in _REGISTRY
            if spec.name in s.get("tests", ())
        )
        + "</tbody></table>",
        "<h2>Summary: p-values by cell and test</h2>",
        _frame_html(rep.summary_table().reset_index(), pcol=None),
        "<h2>All results</h2>",
        _frame_html(frame),
    ]
    for cell in rep.cells:
        extras = []
        for name, result in cell.results.items():
            for attr in ("pair_table", "prompt_table"):
                detail = getattr(result, attr, None)
                if isinstance(detail, pd.DataFrame) and len(detail):
                    extras.append(
                        f"<h3>{html.escape(name)}: {attr.replace('_', ' ')}</h3>"
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
