"""How to recompute a report: the shell command and the Python call of its provenance block.

:func:`rerun_commands` writes both from the report's settings (the columns, cells, tests,
draws and seed it was run with, the side tables it was given), :func:`rerun_notes` what they
need beside the data, :func:`reader` the pandas call that reads a table as ``coherence test``
reads it. ``_render`` lays them out in the page's provenance block.
"""

from __future__ import annotations

import html
import shlex
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING
from typing import Any

from .._validation import MISSING_WORDS
from ._options import ReportOptions
from ._registry import DEFAULT_PERMUTATIONS
from ._registry import DEFAULT_RESAMPLES

if TYPE_CHECKING:
    from ._result import CoherenceReport

__all__ = ["reader", "rerun_commands", "rerun_notes", "side_tables_args"]


def rerun_commands(rep: CoherenceReport) -> tuple[str, str]:
    """(shell command, Python call) that recompute this report."""
    s = rep.settings
    path = s.get("data_file") or "TABLE.csv"
    seed = s.get("seed")
    col_argv, col_py = _column_args(s)
    opt_argv, opt_py = _settings_args(s)
    argv = ["coherence", "test", str(path), *col_argv, *opt_argv]
    py = ["data", *col_py, *opt_py]
    by = list(s.get("by", []))
    argv += ["--seed", str(seed) if seed is not None else "SEED"]
    py.append(f"rng={seed if seed is not None else 'SEED'}")
    shell = " ".join(shlex.quote(a) for a in argv)
    # `coherence test` reads the cell columns of a CSV as written (text): read as numbers,
    # models 2 and 10 sorted the other way and drew each other's streams
    as_text = by if s.get("data_file") else []
    load = f"data = {reader(str(path), as_text)}\n"
    if s.get("actions"):  # report maps the labels (and a menu column's with them)
        py.insert(-1, f"actions={dict(s['actions'])!r}")
    py[-1:-1] = side_tables_args(s)
    python = ("import pandas as pd\nimport coherence\n\n" + load + "rep = coherence.report(\n    "
              + ",\n    ".join(py) + ",\n)\nrep.to_html('report.html')")
    return shell, python


def _column_args(s: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The command line's and report()'s arguments naming the columns, the cells, the
    tests, the reference prompt and the action labels."""
    cols = s.get("columns", {})
    argv: list[str] = []
    py: list[str] = []
    for name in ("belief", "action", "outcome", "group", "prompt", "repetition", "truth"):
        value = cols.get(name)
        if value is not None:
            argv += [f"--{name}", str(value)]
            py.append(f"{name}={value!r}")
        elif name in ("action", "prompt", "repetition", "truth") and name in cols:
            # turned off: the default column would be read if the table has one
            argv += [f"--{name}", "-"]
            py.append(f"{name}=None")
    # the CLI's lists are comma-separated (a second word would be taken for a file)
    if cols.get("evidence"):
        argv += ["--evidence", ",".join(map(str, cols["evidence"]))]
        py.append(f"evidence={list(cols['evidence'])!r}")
    by = list(s.get("by", []))
    argv += ["--by", ",".join(map(str, by)) if by else "-"]
    py.append(f"by={by!r}")
    tests = list(s.get("tests", []))
    argv += ["--tests", ",".join(tests)]
    py.append(f"tests={tests!r}")
    if s.get("reference_prompt") is not None and cols.get("prompt") is not None:
        argv += ["--reference-prompt", str(s["reference_prompt"])]
        py.append(f"reference_prompt={s['reference_prompt']!r}")
    if s.get("actions"):
        argv += ["--actions", ",".join(f"{k}={v}" for k, v in s["actions"].items())]
    return argv, py


def _settings_args(s: Mapping[str, Any]) -> tuple[list[str], list[str]]:
    """The command line's and report()'s arguments for the settings a run set apart
    from the defaults (adjustment, engine, draws, neighbours, folds, bins, level)."""
    argv: list[str] = []
    py: list[str] = []
    # the draw counts: none at the defaults, one n_resamples when both are equal, both
    # (the deprecated n_permutations too) only when a run set them apart
    draws = {"n_permutations": s.get("n_permutations"), "n_resamples": s.get("n_resamples")}
    if (draws["n_permutations"], draws["n_resamples"]) == (DEFAULT_PERMUTATIONS,
                                                           DEFAULT_RESAMPLES):
        draws = {}
    elif draws["n_permutations"] == draws["n_resamples"]:
        draws = {"n_resamples": draws["n_resamples"]}
    flags = {"n_permutations": "--permutations", "n_resamples": "--resamples"}
    for flag, key in (("--adjust", "adjust"), ("--engine", "engine")):
        if s.get(key) is not None:
            argv += [flag, str(s[key])]
    for key, value in draws.items():
        if value is not None:
            argv += [flags[key], str(value)]
    # the settings the command line carries, where a run set them apart from the defaults
    defaults = ReportOptions()
    for flag, key in (("--k", "k"), ("--folds", "n_splits"), ("--bins", "n_bins"),
                      ("--confidence", "confidence_level")):
        if s.get(key, getattr(defaults, key)) != getattr(defaults, key):
            argv += [flag, str(s[key])]
    for key in ("adjust", "engine", "k", "n_permutations", "n_resamples", "n_splits",
                "n_bins", "confidence_level"):
        if key in draws and draws[key] is not None:
            py.append(f"{key}={draws[key]!r}")
        elif key in s and key not in ("n_permutations", "n_resamples"):
            py.append(f"{key}={s[key]!r}")
    return argv, py


def side_tables_args(s: Mapping[str, Any]) -> list[str]:
    """report()'s ``lie``, ``lie_options`` and ``set_aside`` arguments as the report was
    given them (they were left out of the rerun line, whose report then differed): a table
    by a name in capitals that the reader replaces (:func:`rerun_notes` says so)."""
    args = []
    lie = s.get("lie")
    if lie:
        args.append("lie=LIE")
        if lie["options"]:
            args.append("lie_options={" + ", ".join(
                f"{k!r}: {v if v is not None else k.upper()}" for k, v in lie["options"].items())
                + "}")
    aside = s.get("set_aside")
    if aside and aside["mapping"]:
        args.append(f"set_aside={aside['counts']!r}")
    elif aside and s.get("data_file"):  # coherence test read them next to the table
        sidecar = Path(str(s["data_file"]))
        sidecar = sidecar.with_name(sidecar.stem + "_incoherent.csv")
        args.append(f"set_aside={reader(str(sidecar), s.get('by', []))}")
    elif aside:
        args.append("set_aside=SET_ASIDE")
    return args


def rerun_notes(s: Mapping[str, Any]) -> tuple[str, bool]:
    """What the rerun lines need beside the data (HTML), and whether the command line can
    rerun the report at all (it takes no LIE table)."""
    notes = []
    lie, aside = s.get("lie"), s.get("set_aside")
    if lie:
        tables = ["LIE"] + [k.upper() for k, v in lie["options"].items() if v is None]
        notes.append(f"<b>LIE check:</b> replace {' and '.join(tables)} by the table(s) the "
                     f"report was given (the LIE table had {lie['rows']} rows). The command "
                     "line takes no LIE table and cannot rerun this report (without the LIE "
                     "check the family of adjusted p-values differs): rerun it from Python.")
    if aside:
        counts = "; ".join(f"{k}: {v}" for k, v in aside["counts"].items()) or "none"
        where = ("" if aside["mapping"] or s.get("data_file") else
                 " Replace SET_ASIDE by the table of them the report was given;")
        notes.append(f"<b>Replies set aside</b> ({html.escape(counts)}) are counted in the "
                     f"diagnostics.{where} the command line counts them only from "
                     "TABLE_incoherent.csv next to the table (as coherence elicit writes "
                     "it).")
    text = "".join(f"<p class='note'>{n}</p>" for n in notes)
    return text, not lie


def reader(path: str, as_text: Sequence[str] = ()) -> str:
    """The pandas call that reads ``path`` as ``coherence test`` reads it (by its suffix;
    in a CSV or TSV file only blank, NA and nan are missing, a separator closing a line
    makes no index, and the cell columns ``as_text`` are text as written)."""
    suffix = Path(path).suffix.lower()
    if suffix in (".parquet", ".pq"):
        return f"pd.read_parquet({path!r})"
    if suffix == ".json":
        return f"pd.read_json({path!r}, dtype=False)"
    sep = ", sep='\\t'" if suffix == ".tsv" else ""
    text = (f",\n                   dtype={dict.fromkeys(map(str, as_text), 'str')!r}"
            if as_text else "")
    return (f"pd.read_csv({path!r}{sep}, keep_default_na=False, index_col=False,\n"
            f"                   na_values={list(MISSING_WORDS)!r}{text})")
