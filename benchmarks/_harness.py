"""Pieces every validation matrix (``benchmarks/validate_*.py``) shares, written once.

* :func:`one_thread`: worker set-up, one numba and one BLAS thread each, so that
  ``--jobs`` workers do not oversubscribe the cores; :func:`map_jobs`: a function over
  a list of jobs, in an executor when there is one.
* :func:`rejection_rate`, :func:`rejection_columns`, :func:`format_rate`: a share of
  flags with its 95% Wilson interval, the same per column of p-values, and its text.
* :func:`environment`: package versions, commit, machine and date for the JSON.
* :func:`replace_block`: write a generated block between BEGIN/END markers of a
  docs page (appended when the markers are absent); :func:`write_tables` does it for
  a script's own markers.
* :func:`markdown_table`, :func:`section_tables`, :func:`generated_by`,
  :func:`appended_note`: the docs tables' rows, one table per part of the JSON, and
  the sentences naming the JSON and the runs a table comes from.
* :func:`matrix_parser`, :func:`only_words`, :func:`start_results` (:func:`appended`,
  :func:`with_appended_environment`), :func:`store_cell`,
  :func:`run_matrix`, :func:`write_json`: the command line of a matrix (``--reps``,
  ``--only``, ``--append``, ``--tables``, ...; a script adds its own options), its
  JSON's head (kept with ``--append`` when the settings match), a finished cell
  written into it in the matrix's order, the loop over the cells, and the JSON written.
* :func:`size_power_plan`, :func:`rejection_cell`, :func:`tables_if_asked`: the cells of
  a matrix with size and power parts (and their seeds), one cell's studies run and its
  row's head, and ``--tables`` answered from the JSON.
* :func:`coverage_cell`, :func:`coverage_columns`, :func:`format_coverage`: a coverage
  part's cell (the studies' intervals against the known value), its per-interval
  columns and their text.
* :func:`selects`, :func:`run_cells`, :func:`write_results`: for a matrix whose cells
  are ``design n=N``, whether ``--only`` picks one, the cells run over ``--jobs``
  workers of one thread each, and the JSON and (at the default path) the docs tables
  written.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import re
import subprocess
import sys
import time
from collections.abc import Callable
from collections.abc import Iterable
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import numpy as np

ROOT = Path(__file__).resolve().parents[1]

__all__ = [
    "ROOT",
    "appended",
    "appended_note",
    "coverage_cell",
    "coverage_columns",
    "environment",
    "format_coverage",
    "format_rate",
    "generated_by",
    "markdown_table",
    "markers",
    "matrix_parser",
    "one_thread",
    "only_words",
    "rejection_cell",
    "rejection_columns",
    "rejection_rate",
    "replace_block",
    "run_cells",
    "run_matrix",
    "section_tables",
    "selects",
    "size_power_plan",
    "start_results",
    "store_cell",
    "tables_if_asked",
    "with_appended_environment",
    "write_json",
    "write_results",
    "write_tables",
]


def one_thread() -> None:
    """Limit this process to one numba thread and one BLAS thread."""
    import numba
    from threadpoolctl import threadpool_limits

    numba.set_num_threads(1)
    threadpool_limits(1)


def rejection_rate(flags: Any) -> dict[str, Any]:
    """``{rate, k, n, wilson_low, wilson_high}`` of boolean ``flags`` (NaN when empty)."""
    from scipy.stats import binomtest

    flags = np.asarray(flags, dtype=bool)
    k, n = int(np.sum(flags)), int(flags.size)
    if n == 0:
        return {"rate": float("nan"), "k": 0, "n": 0, "wilson_low": float("nan"),
                "wilson_high": float("nan")}
    ci = binomtest(k, n).proportion_ci(method="wilson")
    return {"rate": k / n, "k": k, "n": n, "wilson_low": float(ci.low),
            "wilson_high": float(ci.high)}


def rejection_columns(pvalues: Any, labels: Sequence[str], alpha: float, *,
                      none_if_untested: bool = False) -> dict[str, Any]:
    """Per column of ``pvalues`` (one row per study) named by ``labels``: ``label`` the
    :func:`rejection_rate` at ``alpha`` of its finite p-values (``None`` when there are
    none and ``none_if_untested``) and ``label_n_nan`` the number of NaN p-values."""
    out: dict[str, Any] = {}
    for j, label in enumerate(labels):
        p = np.asarray(pvalues, dtype=np.float64)[:, j]
        ok = np.isfinite(p)
        out[label] = (None if none_if_untested and not ok.any()
                      else rejection_rate(p[ok] <= alpha))
        out[f"{label}_n_nan"] = int(np.sum(~ok))
    return out


def environment(extra: tuple[str, ...] = ()) -> dict[str, Any]:
    """Versions (numpy, scipy, pandas, numba, scikit-learn and ``extra`` packages),
    the commit (``VALIDATE_COMMIT`` overrides it for a run of an exported tree),
    whether ``coherence/`` has uncommitted changes, the machine and the date."""
    import importlib

    import coherence

    versions = {"belief-coherence": coherence.__version__,
                "python": platform.python_version()}
    for name in ("numpy", "scipy", "pandas", "numba", "sklearn", *extra):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue
        versions["scikit-learn" if name == "sklearn" else name] = module.__version__
    try:
        commit = subprocess.run(["git", "rev-parse", "HEAD"], cwd=ROOT, capture_output=True,
                                text=True, check=True).stdout.strip()
        dirty = bool(subprocess.run(["git", "status", "--porcelain", "coherence"], cwd=ROOT,
                                    capture_output=True, text=True).stdout.strip())
    except (OSError, subprocess.CalledProcessError):
        commit, dirty = "unknown", False
    return {
        "versions": versions,
        "commit": os.environ.get("VALIDATE_COMMIT", commit),
        "coherence_dirty": dirty,
        "coherence_path": str(Path(coherence.__file__).parent),
        "machine": {"platform": platform.platform(), "processor": platform.machine(),
                    "cpus": os.cpu_count()},
        "date": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
    }


def markers(script: str) -> tuple[str, str]:
    """The BEGIN/END markers of the block a script generates."""
    return (f"<!-- BEGIN generated by benchmarks/{script} -->",
            f"<!-- END generated by benchmarks/{script} -->")


def replace_block(doc: Path, begin: str, end: str, body: str) -> None:
    """Put ``body`` between ``begin`` and ``end`` in ``doc`` (appended if absent)."""
    text = doc.read_text(encoding="utf-8")
    block = f"{begin}\n{body}\n{end}"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        text = head + block + tail
    else:
        text = text.rstrip("\n") + "\n\n" + block + "\n"
    doc.write_text(text, encoding="utf-8")


def write_tables(doc: Path, script: str, body: str) -> None:
    """Put ``body`` between ``script``'s markers (:func:`markers`) in ``doc``."""
    replace_block(doc, *markers(script), body)


def markdown_table(header: Sequence[str], rows: Iterable[Sequence[Any]]) -> list[str]:
    """The lines of a Markdown table: ``header``, its rule, then one line per row."""
    return ["| " + " | ".join(header) + " |", "| " + " | ".join("---" for _ in header) + " |",
            *("| " + " | ".join(map(str, row)) + " |" for row in rows)]


def section_tables(results: dict[str, Any], parts: Iterable[tuple[str, str]],
                   header: Sequence[str],
                   row: Callable[[dict[str, Any]], Sequence[Any]]) -> list[str]:
    """One ``### title`` and table per ``(part, title)`` of ``parts`` that ``results``
    holds rows of (parts without rows are left out), each followed by a blank line."""
    lines: list[str] = []
    for part, title in parts:
        if results.get(part):
            lines += [f"### {title}", "", *markdown_table(header, map(row, results[part])), ""]
    return lines


def generated_by(name: str, env: dict[str, Any] | None = None) -> str:
    """``Generated by `python -m benchmarks.<name> --tables` from `<its JSON>``` and, given
    the JSON's ``environment``, `` (commit, date, CPUs, numpy`` with the parenthesis left
    open for the script's own settings."""
    text = (f"Generated by `python -m benchmarks.{name} --tables` from "
            f"`benchmarks/results/{name}.json`")
    if env is not None:
        text += (f" (commit `{env['commit'][:10]}`, {env['date']}, {env['machine']['cpus']} "
                 f"CPUs, numpy {env['versions']['numpy']}")
    return text


def appended_note(results: dict[str, Any]) -> str:
    """The sentence naming the commits of cells added with ``--append``, oldest first (or
    nothing)."""
    if "environment_appended" not in results:
        return ""
    commits = list(dict.fromkeys(  # each commit once
        e["commit"][:10] for e in (*results.get("environment_appended_earlier", []),
                                   results["environment_appended"])))
    if len(commits) == 1:
        return f" Cells added later with `--append` ran at commit `{commits[0]}`."
    return (" Cells added later with `--append` ran at commits "
            + ", then ".join(f"`{c}`" for c in commits) + ".")


def format_rate(r: dict[str, Any]) -> str:
    """A :func:`rejection_rate` as ``0.050 [0.038, 0.065]`` for a docs table."""
    return f"{r['rate']:.3f} [{r['wilson_low']:.3f}, {r['wilson_high']:.3f}]"


def matrix_parser(doc: str | None, *, results: Path, page: str, n_resamples: int | None,
                  reps: int = 400, power_reps: int | None = 400,
                  only: str | None = "comma-separated words: cells to run",
                  append: bool = True, prog: str | None = None) -> argparse.ArgumentParser:
    """The command line every matrix takes: ``--reps``, ``--out``, ``--tables`` and, unless
    turned off (``None`` or ``False``), ``--power-reps``, ``--n-resamples``, ``--only``
    (its help: ``only``) and ``--append``. A script adds its own options to it."""
    parser = argparse.ArgumentParser(prog=prog, description=doc,
                                     formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--reps", type=int, default=reps, help="studies per size cell")
    if power_reps is not None:
        parser.add_argument("--power-reps", type=int, default=power_reps)
    if n_resamples is not None:
        parser.add_argument("--n-resamples", type=int, default=n_resamples)
    if only is not None:
        parser.add_argument("--only", action="append", default=[],
                            help=only + " (a comma followed by a space stays in its word, "
                            "as in a design's 'Beta(0.5, 9.5)'; --only may be repeated)")
    parser.add_argument("--out", type=Path, default=results)
    if append:
        parser.add_argument("--append", action="store_true",
                            help="keep the cells already in the JSON (a cell run again "
                                 "replaces its earlier row)")
    parser.add_argument("--tables", action="store_true",
                        help=f"write {page}'s tables from the JSON")
    return parser


def only_words(args: argparse.Namespace) -> list[str]:
    """The words of ``--only`` (empty: every cell): each value split at the commas that no
    space follows, so a design name's own ``", "`` stays whole; ``--only`` may be repeated."""
    values = [args.only] if isinstance(args.only, str) else list(args.only or [])
    return [w for v in values for w in re.split(r",(?!\s)", v) if w]


def start_results(args: argparse.Namespace, alpha: float, *, packages: tuple[str, ...] = (),
                  **settings: Any) -> dict[str, Any]:
    """The JSON's head (environment, with ``packages``' versions too, and settings: the
    matrix's ``n_resamples``, ``alpha``, ``reps``, ``power_reps``, then ``settings``,
    which may also replace one of them); with ``--append`` the cells already stored,
    which must have been run with the same settings (the environment of this run is
    ``environment_appended``; those of earlier appends move to
    ``environment_appended_earlier``)."""
    results: dict[str, Any] = {"environment": environment(packages),
                               "settings": {"n_resamples": args.n_resamples, "alpha": alpha,
                                            "reps": args.reps, "power_reps": args.power_reps,
                                            **settings}}
    if getattr(args, "append", False) and args.out.exists():
        results = appended(json.loads(args.out.read_text()), results)
    args.out.parent.mkdir(parents=True, exist_ok=True)
    return results


def appended(old: dict[str, Any], results: dict[str, Any]) -> dict[str, Any]:
    """The stored JSON ``old`` with this run's environment as ``environment_appended``
    (the earlier appends' environments kept, oldest first, in
    ``environment_appended_earlier``): the stored cells keep the environment they ran in.
    The settings must be the same."""
    if old["settings"] != results["settings"]:
        raise SystemExit("--append: the JSON was written with other settings")
    return with_appended_environment(old, results["environment"])


def with_appended_environment(old: dict[str, Any], env: dict[str, Any]) -> dict[str, Any]:
    """The stored JSON ``old`` with ``env`` as ``environment_appended``, the earlier
    appends' environments kept, oldest first, in ``environment_appended_earlier``."""
    earlier = [*old.get("environment_appended_earlier", []),
               *([old["environment_appended"]] if "environment_appended" in old else [])]
    out = {**old, "environment_appended": env}
    if earlier:
        out["environment_appended_earlier"] = earlier
    return out


def run_matrix(args: argparse.Namespace, alpha: float, plan: Iterable[tuple[Any, ...]],
               cell: Callable[..., dict[str, Any]] | dict[str, Callable[..., dict[str, Any]]],
               order: list[str] | dict[str, list[str]]) -> None:
    """Run the cells of ``plan`` (``(part, name, *rest)``: the row is ``cell(name, *rest)``,
    or ``cell[part](name, *rest)`` when ``cell`` maps parts to their cell functions) that
    ``--only`` selects (a word found in ``"part: name"``), each stored into the JSON
    (:func:`start_results`, :func:`store_cell`, in the order of the designs ``order``
    lists, or of ``order[part]`` when it maps parts to their lists) as soon as it
    finishes."""
    only = only_words(args)
    results = start_results(args, alpha)
    for part, name, *rest in plan:
        if only and not any(w in f"{part}: {name}" for w in only):
            continue
        run = cell[part] if isinstance(cell, dict) else cell
        store_cell(results, part, run(name, *rest),
                   order[part] if isinstance(order, dict) else order, args.out)
    print(f"wrote {args.out}", file=sys.stderr)


def map_jobs(fn: Callable[[Any], Any], jobs: list[Any], pool: Any,
             chunksize: int = 4) -> np.ndarray:
    """``fn`` over ``jobs``, in ``pool`` (an executor) when there is one, as a float
    array (one row per job)."""
    out = list(pool.map(fn, jobs, chunksize=chunksize)) if pool else [fn(j) for j in jobs]
    return np.asarray(out, dtype=np.float64)


def best_time(func: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    """The shortest of ``repeat`` runs of ``func`` in seconds, and its last value."""
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = func()
        best = min(best, time.perf_counter() - t0)
    return best, out


def write_json(out: Path, results: dict[str, Any]) -> None:
    """Write ``results`` to ``out`` (its folder made if needed), one space per level."""
    out.parent.mkdir(parents=True, exist_ok=True)
    out.write_text(json.dumps(results, indent=1, default=float) + "\n")


def store_cell(results: dict[str, Any], part: str, row: dict[str, Any], order: list[str],
               out: Path) -> None:
    """Put a finished cell into ``results[part]`` (replacing an earlier row of the same
    design), in the matrix's ``order`` of designs, and rewrite the JSON."""
    cells = [r for r in results.get(part, []) if r["design"] != row["design"]]
    results[part] = sorted([*cells, row], key=lambda r: order.index(r["design"]))
    write_json(out, results)


def run_sized_cells(args: argparse.Namespace, results: dict[str, Any], designs: Sequence[str],
                    sizes: tuple[int, ...], size_key: str,
                    cell: Callable[[str, int], dict[str, Any]]) -> None:
    """Run ``cell(design, size)`` for each design ``--only`` selects (by prefix) and each
    size of ``--sizes``, into ``results["cells"]`` (with ``--append`` after the cells
    already in the JSON; a cell run again replaces its row, found by its ``design`` and
    ``size_key``), the rows in the order of ``designs`` then of ``sizes`` and the sizes
    asked for; the JSON is rewritten after every cell."""
    if args.append and args.out.exists():
        # the stored cells keep the environment they ran in (it was replaced by this run's,
        # and the table's head named this commit for every row)
        stored = appended(json.loads(args.out.read_text()), results)
        results.clear()
        results.update(stored)
    asked = [int(s) for s in args.sizes.split(",")]
    order = [(d, n) for d in designs for n in sorted({*sizes, *asked})]  # the table's rows
    words = only_words(args)
    for name in designs:
        if words and not any(name.startswith(w) for w in words):
            continue
        for n in asked:
            row = cell(name, n)
            results["cells"] = [c for c in results["cells"]
                                if (c["design"], c[size_key]) != (name, n)] + [row]
            results["cells"].sort(key=lambda c: order.index((c["design"], c[size_key])))
            write_json(args.out, results)


def sized_matrix_main(argv: Iterable[str] | None, doc: str | None, *, results: Path, page: Path,
                      reps: int, tables: Callable[[dict[str, Any]], str],
                      designs: Sequence[str], sizes: tuple[int, ...], size_key: str,
                      cell: Callable[[str, int, int, int], dict[str, Any]],
                      settings: dict[str, Any]) -> int:
    """The command of a matrix of designs by sizes (the interval matrices): ``--tables``
    writes ``page``'s table from the JSON; otherwise ``cell(design, size, reps,
    n_resamples)`` runs each cell (:func:`run_sized_cells`) and the JSON records the
    environment and the ``settings`` (with ``n_resamples`` and ``reps``)."""
    script = f"{Path(results).stem}.py"
    parser = matrix_parser(doc, results=results, page=f"docs/{page.name}", n_resamples=999,
                           reps=reps, power_reps=None,
                           only="comma-separated design name prefixes to run")
    parser.add_argument("--sizes", default=",".join(map(str, sizes)))
    args = parser.parse_args(None if argv is None else list(argv))
    if args.tables:
        write_tables(page, script, tables(json.loads(args.out.read_text())))
        return 0
    head = {"environment": environment(),
            "settings": {"n_resamples": args.n_resamples, "reps": args.reps, **settings},
            "cells": []}
    run_sized_cells(args, head, designs, sizes, size_key,
                    lambda name, n: cell(name, n, args.reps, args.n_resamples))
    return 0


def size_power_plan(args: argparse.Namespace, nulls: dict[str, Any], power: dict[str, Any],
                    *extra: Any) -> list[tuple[Any, ...]]:
    """The cells ``(part, name, design, reps, n_resamples, seed0, *extra)`` of a matrix's
    size and power parts, with the matrices' seeds: size cell i from 100,000 (i + 1),
    power cell i from 5,000,000 + 100,000 i."""
    plan: list[tuple[Any, ...]] = [
        ("size", n, d, args.reps, args.n_resamples, 100_000 * (i + 1), *extra)
        for i, (n, d) in enumerate(nulls.items())]
    plan += [("power", n, d, args.power_reps, args.n_resamples, 5_000_000 + 100_000 * i,
              *extra) for i, (n, d) in enumerate(power.items())]
    return plan


def rejection_cell(name: str, settings: dict[str, Any], seeds: range,
                   run_one: Callable[[int], Sequence[float]], labels: Sequence[str],
                   alpha: float) -> tuple[dict[str, Any], np.ndarray]:
    """Run ``run_one(seed)`` for every seed (a study's p-values first, in the order of
    ``labels``, then anything descriptive); the cell's row head (``design``, ``reps``,
    ``seconds``, ``settings`` and :func:`rejection_columns`) and the outputs, one row a
    study. The rates are printed as the cell ends."""
    t0 = time.perf_counter()
    out = np.array([run_one(seed) for seed in seeds])
    row: dict[str, Any] = {"design": name, "reps": len(seeds),
                           "seconds": time.perf_counter() - t0, "settings": settings,
                           **rejection_columns(out[:, :len(labels)], labels, alpha)}
    rates = " ".join(f"{label} {row[label]['rate']:.3f}" for label in labels)
    print(f"{name:72s} {rates} ({row['seconds']:.0f} s)", flush=True)
    return row, out


def coverage_columns(low: Any, high: Any, truth: float) -> dict[str, Any]:
    """How intervals ``[low, high]`` (one a study) hold ``truth``: ``coverage`` (the
    :func:`rejection_rate` of ``low <= truth <= high`` over the intervals that are not
    NaN), ``truth``, ``n_nan`` (NaN intervals: nothing to test, left out as
    :func:`rejection_columns` leaves NaN p-values), ``share_above`` and ``share_below``
    (of the intervals left, those wholly above or below ``truth``), ``share_unbounded``
    (with an infinite end) and ``median_width`` (over the bounded ones; NaN if none)."""
    low, high = np.asarray(low, dtype=np.float64), np.asarray(high, dtype=np.float64)
    ok = ~(np.isnan(low) | np.isnan(high))
    low, high = low[ok], high[ok]
    bounded = np.isfinite(low) & np.isfinite(high)
    n = max(low.size, 1)
    return {"coverage": rejection_rate((low <= truth) & (truth <= high)),
            "truth": float(truth), "n_nan": int(np.sum(~ok)),
            "share_above": float(np.sum(low > truth) / n),
            "share_below": float(np.sum(high < truth) / n),
            "share_unbounded": float(np.sum(~bounded) / n),
            "median_width": float(np.median((high - low)[bounded])) if bounded.any()
            else float("nan")}


def coverage_cell(name: str, settings: dict[str, Any], seeds: range,
                  run_one: Callable[[int], Sequence[float]],
                  truths: dict[str, float]) -> tuple[dict[str, Any], np.ndarray]:
    """Run ``run_one(seed)`` for every seed (a study's interval ends, ``low, high`` for
    each interval named in ``truths`` in its order, then anything descriptive); the
    cell's row head (``design``, ``reps``, ``seconds``, ``settings`` and ``coverage``:
    per interval its :func:`coverage_columns` against its value in ``truths``) and the
    outputs, one row a study. The coverages are printed as the cell ends."""
    t0 = time.perf_counter()
    out = np.array([run_one(seed) for seed in seeds], dtype=np.float64)
    coverage = {label: coverage_columns(out[:, 2 * j], out[:, 2 * j + 1], truth)
                for j, (label, truth) in enumerate(truths.items())}
    row: dict[str, Any] = {"design": name, "reps": len(seeds),
                           "seconds": time.perf_counter() - t0, "settings": settings,
                           "coverage": coverage}
    low = min(coverage, key=lambda k: coverage[k]["coverage"]["rate"])
    print(f"{name:72s} coverage {coverage[next(iter(coverage))]['coverage']['rate']:.3f} "
          f"(lowest {low}: {coverage[low]['coverage']['rate']:.3f}) "
          f"({row['seconds']:.0f} s)", flush=True)
    return row, out


def format_coverage(c: dict[str, Any]) -> str:
    """A :func:`coverage_columns` as its coverage with Wilson interval, and the shares of
    misses with the interval above and below the value: ``0.948 [0.922, 0.966]
    (above 0.030, below 0.022)``."""
    return (f"{format_rate(c['coverage'])} (above {c['share_above']:.3f}, below "
            f"{c['share_below']:.3f})")


def tables_if_asked(args: argparse.Namespace, doc: Path, script: str,
                    tables: Callable[[dict[str, Any]], str]) -> bool:
    """With ``--tables``: write ``doc``'s tables from the JSON ``--out`` names (and say
    so: the matrix is not run)."""
    if args.tables:
        write_tables(doc, script, tables(json.loads(args.out.read_text())))
    return bool(args.tables)


def selects(args: argparse.Namespace, label: str) -> bool:
    """Whether ``--only`` picks the cell ``label`` (``"design n=N"``): one of its words
    stands in the label, not followed by a digit (``n=20`` does not pick ``n=200``)."""
    import re

    words = only_words(args)
    return not words or any(re.search(re.escape(w) + r"(?!\d)", label) for w in words)


def _in_one_thread(cell: Callable[..., dict[str, Any]], *job: Any) -> dict[str, Any]:
    one_thread()
    return cell(*job)


def run_cells(args: argparse.Namespace, cell: Callable[..., dict[str, Any]],
              jobs: Sequence[tuple[Any, ...]]) -> list[dict[str, Any]]:
    """``cell(*job)`` for every job, over ``--jobs`` workers of one numba and one BLAS
    thread each, in the jobs' order."""
    from joblib import Parallel
    from joblib import delayed

    out: list[dict[str, Any]] = Parallel(n_jobs=args.jobs)(
        delayed(_in_one_thread)(cell, *job) for job in jobs)
    return out


def write_results(args: argparse.Namespace, results: dict[str, Any], default: Path,
                  doc: Path, script: str, tables: Callable[[dict[str, Any]], str]) -> None:
    """Write the JSON ``--out`` names and, when that is the script's ``default`` path,
    ``doc``'s tables from it (a trial run elsewhere leaves the docs alone)."""
    write_json(args.out, results)
    if args.out == default:
        write_tables(doc, script, tables(results))
