"""Before/after speed of one cell of the paper's grid, and how one CMI estimate scales.

Run from the repository root (a few CPU-minutes at the defaults)::

    nice -n 10 python -m benchmarks.bench_speed [--n-permutations 100] [--repeat 2]
        [--sizes 1000 10000 100000 1000000 10000000] [--threads 1 2]
        [--grid-jobs 1 2] [--peer-sizes 1000 5000 20000] [--before-commit 7e3544b]
    nice -n 10 python -m benchmarks.bench_speed --ci-interval REF [--calls 7]

One cell of the paper's grid: 200 contexts x 5 repetitions (n = 1000 rows) of a
leaky agent, the logistic leakage engine, 500 resamples. Each row is measured
twice in this one run on the same data, ``before`` on the reference path (every
permutation refitted by scikit-learn; the isotonic null by scikit-learn's
``isotonic_regression`` one resample at a time; report cells with the library's
default BLAS threads) and ``after`` on the fast path,
the best of ``--repeat`` runs each, and reported as a ratio; the p-values of
both paths are recorded and must be equal.

The CMI rows time one estimate at each size, belief design and numba thread
count: the public ``cmi`` and its array layer, against the previous release's
kernel loaded from git (``--before-commit``) on the same keys, with the extra peak
resident memory of one estimate in a fresh process. The peers are timed in the
same run on the same data: the brute-force O(n^2) reference of the same estimator
(the authors' knncmi algorithm, ``tests/_reference.py``) and, when installed,
tigramite's CMIknn and CMIknnMixed estimates and its local-permutation test against
``ci_test``. Writes ``benchmarks/results/bench_speed.json`` (versions, commit,
machine, threads), the tables of ``docs/speed.md`` and the scaling plot
``docs/speed_scaling.svg``.
"""

from __future__ import annotations

import argparse
import json
import sys
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import coherence
from benchmarks._harness import ROOT
from benchmarks._harness import best_time
from benchmarks._harness import environment
from benchmarks._harness import write_tables
from coherence._decision import _kernels_isotonic as _kernels
from coherence._decision import _leakage
from coherence._decision._monotone_isotonic import isotonic_lr
from coherence._report import _run

OUT = ROOT / "benchmarks" / "results" / "bench_speed.json"
PLOT = ROOT / "docs" / "speed_scaling.svg"
DOC = ROOT / "docs" / "speed.md"


def docs_block(out: dict[str, Any]) -> str:
    """The before/after and scaling tables of ``docs/speed.md``, from the JSON."""
    env = out["environment"]
    lines = [f"Measured at commit `{env['commit'][:10]}` on {env['machine']['platform']} "
             f"({env['machine']['cpus']} CPUs, shared with other jobs), numba threads "
             f"{env['threads']['numba_max']}, BLAS threads "
             f"{[b['num_threads'] for b in env['threads']['blas']]}, {env['date']}; best of "
             f"{out['settings']['repeat']} runs each.", "",
             f"| what | before (s) | after, {env['threads']['numba_max']} numba threads (s) "
             "| ratio | after, 1 numba thread (s) | ratio | parallel efficiency | "
             "p-values equal |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    threads = env["threads"]["numba_max"]
    for r in out["before_after"]:
        efficiency = r["after_one_thread_s"] / (threads * r["after_s"])
        lines.append(f"| {r['what']} | {r['before_s']:.2f} | {r['after_s']:.2f} | "
                     f"{r['ratio']:.1f}x | {r['after_one_thread_s']:.2f} | "
                     f"{r['ratio_one_thread']:.1f}x | {efficiency:.2f} | "
                     f"{'yes' if r['pvalues_equal'] else 'NO'} |")
    if out.get("grid"):
        lines += ["", "| the 16-cell grid | n_jobs (backend) | numba threads per cell | "
                  "before, serial (s) | after (s) | ratio | parallel efficiency (vs one core) | "
                  "p-values equal |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
        one = next((r["after_s"] for r in out["grid"] if r.get("cores") == 1), None)
        for r in out["grid"]:
            eff = ("" if one is None or "cores" not in r
                   else f"{one / (r['cores'] * r['after_s']):.2f}")
            lines.append(f"| {r['what']} | {r['n_jobs']} ({r['backend']}) | "
                         f"{r.get('numba_threads_per_cell') or 'as set'} | "
                         f"{r['before_serial_s']:.1f} | {r['after_s']:.1f} | {r['ratio']:.1f}x | "
                         f"{eff} | {'yes' if r['pvalues_equal'] else 'NO'} |")
    lines += ["", "One CMI estimate (k = 3; action, outcome, belief): the public `cmi()` "
              "(validation, codes, sort, kernel), the array layer alone, and the previous "
              "kernel (commit " f"`{out['settings']['before_commit']}`, loaded from git) on "
              "the same keys (with its digamma table of n entries); how far one `cmi()` "
              "call raises the resident memory above its level before the call, in a "
              "fresh process holding only the data (the inputs, three arrays of 8 bytes "
              "a row, are 24 MiB per million rows).", "",
              "| beliefs | n | numba threads | path | `cmi()` (ms) | array layer (ms) | "
              "previous kernel (ms) | previous / array layer | equal values | "
              "extra peak memory (MiB) |",
              "| --- | --- | --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in out["cmi_scaling"]:
        old = r.get("before_kernel_s")
        lines.append(
            f"| {r['design']} | {r['n']:,} | {r['threads']} | {r['path']} | "
            f"{1e3 * r['public_s']:.1f} | {1e3 * r['array_layer_s']:.1f} | "
            + ("| |" if old is None else f"{1e3 * old:.1f} | {old / r['array_layer_s']:.1f}x |")
            + f" {'' if r['before_equal'] is None else 'yes' if r['before_equal'] else 'NO'} | "
            f"{r['peak_rss_increase_mib']:.0f} |" if r["peak_rss_increase_mib"] is not None
            else " |")
    peer = out.get("peers") or {}
    if peer.get("estimates"):
        lines += ["", "Peers on the same data (paper's design, beliefs on the 0.05 grid), one "
                  "thread each; tigramite " f"{peer.get('tigramite') or 'not installed'}.", "",
                  "| n | ours, `cmi()` (ms) | knncmi algorithm, brute force (ms) | "
                  "tigramite CMIknn (ms) | tigramite CMIknnMixed, MS (ms) |",
                  "| --- | --- | --- | --- | --- |"]
        for r in peer["estimates"]:
            cells = [f"{1e3 * r[k]:.1f} ({r[k] / r['ours_s']:.0f}x)" if k in r else ""
                     for k in ("knncmi_reference_s", "tigramite_cmiknn_s", "tigramite_mixed_s")]
            lines.append(f"| {r['n']:,} | {1e3 * r['ours_s']:.2f} | " + " | ".join(cells) + " |")
        t = peer["test"]
        if "tigramite_local_permutation_s" in t:
            lines += ["", f"`ci_test` at n = {t['n']} with {t['n_permutations']} permutations "
                      f"(and as many interval subsamples): {t['ci_test_s']:.3f} s; tigramite's "
                      f"local-permutation test of CMIknn with {t['n_permutations']} "
                      f"permutations: {t['tigramite_local_permutation_s']:.1f} s "
                      f"({t['tigramite_local_permutation_s'] / t['ci_test_s']:.0f}x)."]
    return "\n".join(lines)


def _reference_rows(xs: np.ndarray, m: np.ndarray) -> np.ndarray:
    """The isotonic null before the kernel: scikit-learn's PAVA, one resample at a time."""
    return np.array([0.0 if np.all(np.diff(x / m) >= 0) else isotonic_lr(x, m) for x in xs])


class _Reference:
    """Context manager: the reference (before) paths of the leakage and isotonic nulls,
    and report cells without the one-BLAS-thread limit."""

    def __enter__(self) -> None:
        self.fast = _kernels.isotonic_lr_rows
        _leakage.FAST_REFITS = False
        _run.BLAS_ONE_THREAD = False
        _kernels.isotonic_lr_rows = _reference_rows  # type: ignore[assignment]

    def __exit__(self, *exc: object) -> None:
        _leakage.FAST_REFITS = True
        _run.BLAS_ONE_THREAD = True
        _kernels.isotonic_lr_rows = self.fast


def _cell(n_contexts: int) -> tuple[Any, list[str]]:
    study = coherence.simulate(coherence.Agent.leaky(0.3), n_contexts=n_contexts, rng=0,
                               prompts=coherence.PROMPTS)
    data = study.data
    gen = np.random.default_rng(0)
    by_context = gen.standard_normal((n_contexts, 2))[data["context"].to_numpy()]
    return data.assign(x1=by_context[:, 0], x2=by_context[:, 1]), ["x1", "x2"]


def before_after(n_permutations: int, repeat: int, before_repeat: int
                 ) -> list[dict[str, Any]]:
    import numba

    data, evidence = _cell(200)
    standard = data[data["prompt"] == "standard"]
    rows: list[dict[str, Any]] = []
    runs: list[tuple[str, Callable[[], Any]]] = [
        (f"leakage_test, logistic, {n_permutations} permutations, belief only",
         lambda: coherence.leakage_test(standard, engine="logistic", rng=0,
                                        n_permutations=n_permutations)),
        (f"leakage_test, logistic, {n_permutations} permutations, 2 evidence columns",
         lambda: coherence.leakage_test(standard, engine="logistic", evidence=evidence, rng=0,
                                        n_permutations=n_permutations)),
        ("monotonicity_test, 500 permutations",
         lambda: coherence.monotonicity_test(standard, n_resamples=500, rng=0)),
        (f"report, one cell, all tests, {n_permutations} permutations, 500 resamples",
         lambda: coherence.report(data, by=(), n_permutations=n_permutations,
                                  n_resamples=500, progress=False, rng=0)),
    ]
    for label, run in runs:
        # the fast path first: the reference path's multi-threaded BLAS leaves threads
        # that slow down whatever runs right after it on a small machine
        t_after, res_after = best_time(run, repeat)
        numba.set_num_threads(1)
        t_one, _ = best_time(run, repeat)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        with _Reference():
            t_before, res_before = best_time(run, before_repeat)
        f_before, f_after = res_before.to_frame(), res_after.to_frame()
        same = bool(np.array_equal(f_before["pvalue"].to_numpy(float),
                                   f_after["pvalue"].to_numpy(float), equal_nan=True))
        s_before = f_before["statistic"].to_numpy(float)
        s_after = f_after["statistic"].to_numpy(float)
        with np.errstate(invalid="ignore"):
            gap = np.abs(s_after - s_before) / np.maximum(1.0, np.abs(s_before))
        rows.append({"what": label, "before_s": t_before, "after_s": t_after,
                     "ratio": t_before / t_after, "after_one_thread_s": t_one,
                     "ratio_one_thread": t_before / t_one, "pvalues_equal": same,
                     "max_relative_statistic_change": float(np.nanmax(gap))})
        print(f"| {label} | {t_before:.2f} | {t_after:.2f} | {t_before / t_after:.1f}x | "
              f"{t_one:.2f} | {t_before / t_one:.1f}x | {'yes' if same else 'NO'} |",
              flush=True)
    return rows


def grid(n_permutations: int, jobs: list[int], backend: str) -> list[dict[str, Any]]:
    """The paper's grid: 16 cells (4 models x 4 datasets) of 200 contexts x 5 repetitions,
    ``report`` with ``n_permutations`` permutations and 500 resamples; before once
    (serial), after at each ``n_jobs`` (``backend``), one run each."""
    import pandas as pd

    cells = []
    for m in range(4):
        for d in range(4):
            agent = coherence.Agent.leaky(0.1 * m) if m else "rational"
            study = coherence.simulate(agent, n_contexts=200,
                                       rng=10 * m + d, prompts=coherence.PROMPTS).data
            cells.append(study.assign(model=f"m{m}", dataset=f"d{d}"))
    table = pd.concat(cells, ignore_index=True)
    kw = {"by": ("model", "dataset"), "n_permutations": n_permutations, "n_resamples": 500,
          "progress": False, "rng": 0}
    import numba

    runs = []
    for n_jobs, threads in [(1, 1)] + [(j, None) for j in jobs]:
        if threads is not None:  # the serial grid on one core: one numba thread
            numba.set_num_threads(threads)
        t_after, rep = best_time(lambda n_jobs=n_jobs: coherence.report(
            table, n_jobs=n_jobs, backend=backend, **kw), 1)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
        runs.append((n_jobs, threads, t_after, rep))
        print(f"| 16-cell grid | n_jobs {n_jobs} ({rep.settings['backend']}), threads "
              f"{threads or rep.settings.get('numba_threads_per_cell') or 'as set'} | "
              f"{t_after:.1f} s |", flush=True)
    with _Reference():  # last: see before_after
        t_before, ref = best_time(lambda: coherence.report(table, **kw), 1)
    print(f"| 16-cell grid | before, serial | {t_before:.1f} s |", flush=True)
    rows = []
    for n_jobs, threads, t_after, rep in runs:
        same = bool(np.array_equal(ref.to_frame()["pvalue"].to_numpy(float),
                                   rep.to_frame()["pvalue"].to_numpy(float), equal_nan=True))
        per_cell = threads or rep.settings.get("numba_threads_per_cell")
        rows.append({"what": f"report, 16 cells, {n_permutations} permutations, 500 resamples",
                     "n_jobs": n_jobs, "backend": rep.settings["backend"],
                     "numba_threads_per_cell": per_cell,
                     "cores": n_jobs * (per_cell or numba.config.NUMBA_NUM_THREADS),
                     "before_serial_s": t_before, "after_s": t_after,
                     "ratio": t_before / t_after, "pvalues_equal": same})
    return rows


def _public_inputs(n: int, design: str = "grid") -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(action codes, outcome, belief) of n rows of the rational agent (n / 5 contexts x 5
    repetitions). ``grid``: the beliefs as stated, on the 0.05 grid (21 values, long ties);
    ``continuous``: plus a uniform jitter below 0.001 (all distinct)."""
    study = coherence.simulate("rational", n_contexts=max(n // 5, 1), rng=1)
    d = study.data
    a = d["action"].cat.codes.to_numpy().astype(np.int64)
    y, b = d["outcome"].to_numpy().astype(np.int64), d["belief"].to_numpy(np.float64)
    if design == "continuous":
        b = b + np.random.default_rng(2).random(len(b)) * 1e-3
    return a, y, b


def _before_kernels(commit: str) -> Any:
    """The CMI kernels of an earlier commit, loaded from git (the *before* of the scaling
    rows: indexed by the original row order, full digamma table)."""
    import importlib.util
    import subprocess
    import tempfile

    src = subprocess.run(["git", "show", f"{commit}:coherence/_decision/_kernels.py"],
                         cwd=ROOT, capture_output=True, text=True, check=True).stdout
    path = Path(tempfile.mkdtemp()) / f"kernels_before_{commit[:7]}.py"
    path.write_text(src, encoding="utf-8")
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[path.stem] = module
    spec.loader.exec_module(module)
    return module


def _status_kib(field: str) -> float:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return float(line.split()[1])
    raise KeyError(field)


def _peak_increase_mib(func: Callable[[], Any]) -> float | None:
    """How far the resident memory rises above its level before ``func`` while it runs
    (Linux: the high-water mark is reset through ``/proc/self/clear_refs``); None where
    that is not available."""
    try:
        Path("/proc/self/clear_refs").write_text("5")
        before = _status_kib("VmRSS")
    except (OSError, KeyError):
        return None
    func()
    return (_status_kib("VmHWM") - before) / 1024


def _estimate_memory_mib(n: int, design: str) -> float | None:
    """:func:`_peak_increase_mib` of one ``cmi()`` call in a fresh process that holds only
    the data, with every large block mapped on its own (``MALLOC_MMAP_THRESHOLD_``) and
    the heap trimmed first, so that memory freed earlier cannot hide the estimate's."""
    import os
    import subprocess

    code = ("import ctypes, coherence; "
            "from benchmarks.bench_speed import _public_inputs, _peak_increase_mib; "
            f"a, y, b = _public_inputs({n}, {design!r}); "
            "coherence.cmi(a[:2000], y[:2000], b[:2000]); "
            "ctypes.CDLL('libc.so.6').malloc_trim(0); "
            "print(_peak_increase_mib(lambda: coherence.cmi(a, y, b)))")
    env = {**os.environ, "MALLOC_MMAP_THRESHOLD_": "131072"}
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True,
                         text=True, env=env)
    try:
        return float(out.stdout.split()[-1])
    except (IndexError, ValueError):
        return None


def cmi_scaling(sizes: list[int], threads: list[int], repeat: int,
                before_commit: str | None) -> list[dict[str, Any]]:
    """One estimate at each size, design and numba thread count: the public ``cmi`` (what
    a user calls: validation, codes, sort, kernel) and the array layer alone
    (``_cmi.estimate``); the previous kernel on the same keys; peak memory."""
    import numba
    from scipy.special import digamma

    from coherence._decision._cmi import PARALLEL_MIN_N
    from coherence._decision._cmi import _prepare
    from coherence._decision._cmi import estimate
    from coherence._decision._cmi import keys_1d

    before = _before_kernels(before_commit) if before_commit else None
    for t in threads:  # compile / load the cache of the serial and the parallel path
        numba.set_num_threads(t)
        coherence.cmi(*_public_inputs(PARALLEL_MIN_N + 5))
    rows = []
    for design in ("grid", "continuous"):
        for n in sizes:
            a, y, b = _public_inputs(n, design)
            coherence.cmi(a[:500], y[:500], b[:500])  # compile / load the cache
            prep = _prepare(a, y, b, discrete=None, resolution=None, owner="cmi")
            reps = repeat if n < 10**7 else 1
            t_before = None
            if before is not None:
                keys = keys_1d(prep)
                args = (keys.c, keys.kxyz, keys.kxz, keys.kyz, keys.kz, keys.has_c, 3)

                def full_table(n: int) -> np.ndarray:  # the previous psi_table
                    psi = digamma(np.arange(n + 1, dtype=np.float64))
                    psi[0] = -np.inf
                    return psi

                before.cmi_1d(*(x[:500] for x in args[:5]), *args[5:], full_table(500))
                t_before, old = best_time(lambda args=args, n=n: before.cmi_1d(
                    *args, full_table(n)), reps)
            extra_mib = _estimate_memory_mib(n, design)
            for t in threads:
                numba.set_num_threads(t)
                t_public, value = best_time(lambda a=a, y=y, b=b: coherence.cmi(a, y, b), reps)
                t_array, _ = best_time(lambda prep=prep: estimate(prep, 3), reps)
                row: dict[str, Any] = {
                    "design": design, "n": n, "threads": t, "public_s": t_public,
                    "array_layer_s": t_array, "path": ("parallel" if n >= PARALLEL_MIN_N
                                                       and t > 1 else "serial"),
                    "value": value, "before_kernel_s": t_before,
                    "before_equal": (None if before is None
                                     else bool(abs(old[0] - value) <= 1e-12 * max(1, abs(value)))),
                    "peak_rss_increase_mib": extra_mib, "input_mib": 3 * 8 * n / 2**20}
                rows.append(row)
                print(f"| {design} | {n} | {t} | {1e3 * t_public:.1f} | {1e3 * t_array:.1f} | "
                      f"{'' if t_before is None else f'{1e3 * t_before:.1f}'} | "
                      f"{extra_mib} |", flush=True)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return rows


def peers(sizes: list[int], brute_max: int, test_permutations: int) -> dict[str, Any]:
    """Peers on the same data in this run: the brute-force reference of the same
    estimator (the authors' knncmi algorithm, ``tests/_reference.py``) and, when
    installed, tigramite's CMIknn and CMIknnMixed (Mesner-Shalizi) estimates; then
    ``ci_test`` against tigramite's local-permutation test at n = 1000."""
    sys.path.insert(0, str(ROOT))
    from tests._reference import reference_cmi

    try:
        from tigramite.independence_tests.cmiknn import CMIknn
        from tigramite.independence_tests.cmiknn_mixed import CMIknnMixed
    except ImportError:
        CMIknn = CMIknnMixed = None
    estimates = []
    for n in sizes:
        a, y, b = _public_inputs(n)
        row: dict[str, Any] = {"n": n}
        row["ours_s"], row["ours_value"] = best_time(
            lambda a=a, y=y, b=b: coherence.cmi(a, y, b), 5)
        if n <= brute_max:
            e = np.empty((n, 0))
            row["knncmi_reference_s"], row["knncmi_reference_value"] = best_time(
                lambda a=a, y=y, b=b, e=e, n=n: reference_cmi(
                    e, a[:, None], e, y[:, None], b[:, None], np.empty((n, 0), np.int64)), 1)
        if CMIknn is not None:
            arr = np.vstack([a.astype(float), y.astype(float), b])
            xyz = np.array([0, 1, 2])
            knn = CMIknn(knn=3, transform="none", workers=1, significance="shuffle_test")
            knn.get_dependence_measure(arr[:, :300], xyz)  # compile
            row["tigramite_cmiknn_s"], row["tigramite_cmiknn_value"] = best_time(
                lambda arr=arr, knn=knn, xyz=xyz: knn.get_dependence_measure(arr, xyz), 3)
            mixed = CMIknnMixed(knn=3, estimator="MS", transform="none", workers=1,
                                significance="shuffle_test")
            kinds = np.zeros(arr.shape, dtype=int)
            kinds[:2] = 1  # action and outcome discrete
            row["tigramite_mixed_s"], row["tigramite_mixed_value"] = best_time(
                lambda arr=arr, kinds=kinds, mixed=mixed, xyz=xyz: mixed.get_dependence_measure(
                    arr, xyz, data_type=kinds), 3)
        estimates.append(row)
        print(f"| {n} | {1e3 * row['ours_s']:.2f} | "
              + " | ".join(f"{1e3 * row[k]:.1f} ({row[k] / row['ours_s']:.0f}x)" if k in row
                           else "" for k in ("knncmi_reference_s", "tigramite_cmiknn_s",
                                             "tigramite_mixed_s")) + " |", flush=True)
    a, y, b = _public_inputs(1000)
    table = {"action": a, "outcome": y, "belief": b, "context": np.arange(1000) // 5}
    coherence.ci_test(table, n_resamples=20, rng=0)
    test: dict[str, Any] = {"n": 1000, "n_permutations": test_permutations}
    test["ci_test_s"], _ = best_time(lambda: coherence.ci_test(
        table, n_resamples=test_permutations, rng=0), 3)
    if CMIknn is not None:
        local = CMIknn(knn=3, transform="none", workers=1, significance="shuffle_test",
                       shuffle_neighbors=5, sig_samples=test_permutations)
        test["tigramite_local_permutation_s"], _ = best_time(lambda: local.run_test_raw(
            a[:, None].astype(float), y[:, None].astype(float), b[:, None]), 1)
        print(f"ci_test {test['ci_test_s']:.3f} s, tigramite local-permutation test "
              f"{test['tigramite_local_permutation_s']:.2f} s", flush=True)
    return {"estimates": estimates, "test": test,
            "tigramite": None if CMIknn is None else _version("tigramite")}


def _version(name: str) -> str | None:
    from importlib.metadata import PackageNotFoundError
    from importlib.metadata import version

    try:
        return version(name)
    except PackageNotFoundError:
        return None


def plot(scaling: list[dict[str, Any]], peer: dict[str, Any]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, (left, right) = plt.subplots(1, 2, figsize=(9, 3.6))
    for design in ("grid", "continuous"):
        for t in sorted({r["threads"] for r in scaling}):
            pts = [(r["n"], r["array_layer_s"]) for r in scaling
                   if r["threads"] == t and r["design"] == design]
            if pts:
                left.loglog(*zip(*pts, strict=True), marker="o",
                            label=f"{design} beliefs, {t} thread(s)")
        before = [(r["n"], r["before_kernel_s"]) for r in scaling
                  if r["design"] == design and r["threads"] == scaling[0]["threads"]
                  and r["before_kernel_s"] is not None]
        if before:
            left.loglog(*zip(*before, strict=True), marker="x", linestyle=":",
                        label=f"{design}, previous kernel")
    brute = [(r["n"], r["knncmi_reference_s"]) for r in peer.get("estimates", [])
             if "knncmi_reference_s" in r]
    if brute:
        left.loglog(*zip(*brute, strict=True), marker="s", linestyle="--",
                    label="brute force (knncmi algorithm)")
    for key, label in (("tigramite_cmiknn_s", "tigramite CMIknn"),
                       ("tigramite_mixed_s", "tigramite CMIknnMixed")):
        pts = [(r["n"], r[key]) for r in peer.get("estimates", []) if key in r]
        if pts:
            left.loglog(*zip(*pts, strict=True), marker="^", linestyle="--", label=label)
    left.set_xlabel("rows n")
    left.set_ylabel("seconds per CMI estimate (sort + kernel)")
    left.grid(True, which="both", alpha=0.3)
    left.legend(fontsize=6)
    biggest = max(r["n"] for r in scaling)
    for design in ("grid", "continuous"):
        pts = sorted((r["threads"], r["array_layer_s"]) for r in scaling
                     if r["n"] == biggest and r["design"] == design)
        if pts:
            right.plot(*zip(*pts, strict=True), marker="o", label=f"{design}, n = {biggest:,}")
    right.set_xlabel("numba threads")
    right.set_xticks(sorted({r["threads"] for r in scaling}))
    right.set_ylabel("seconds per estimate")
    right.set_ylim(bottom=0)
    right.grid(True, alpha=0.3)
    right.legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(PLOT, metadata={"Date": None})
    plt.close(fig)


_CI_CHILD = """
import json, sys, time, warnings
sys.path.insert(0, sys.argv[1])
import numpy as np
import numba
from threadpoolctl import threadpool_limits
import coherence
assert coherence.__file__.startswith(sys.argv[1]), coherence.__file__
numba.set_num_threads(1)
threadpool_limits(1)
warnings.simplefilter("ignore")
def cost(data, **kw):
    coherence.ci_test(data, rng=0, **kw)  # warm-up: numba compilation
    times = []
    for seed in range(int(sys.argv[2])):
        c0 = time.process_time()
        res = coherence.ci_test(data, rng=seed, **kw)
        times.append(time.process_time() - c0)
    return {"median_cpu_s": float(np.median(times)), "min_cpu_s": min(times),
            "interval_seed_last": list(res.confidence_interval)[:2]}
data = coherence.simulate("rational", n_contexts=200, rng=0).data
out = {method: cost(data, ci_method=method) for method in ("debiased", "subsampling")}
# float evidence: the defaults, whose interval refits its bias model on half-samples
sys.path.append(sys.argv[3])
from benchmarks import validate_citest_continuous as cc
design = cc.NULLS["evidence per row, continuous beliefs that miss it"]
out["float_evidence"] = cost(cc.generate(design, 0), evidence=cc.evidence_columns(design))
print(json.dumps(out))
"""


def ci_interval_cost(ref: str, calls: int, out_path: Path) -> dict[str, Any]:
    """``ci_test`` at its defaults (``ci_method='debiased'``) and with
    ``ci_method='subsampling'`` on 1000 rows (200 contexts x 5), and at its defaults on
    1000 rows with float evidence (whose interval refits its bias model on
    half-samples), CPU seconds of one call
    (median of ``calls``) on one numba and one BLAS thread, the code at git ``ref``
    (before) and the working tree (after) in fresh processes of this one run; merged
    into ``out_path`` under ``ci_interval``."""
    import subprocess
    import tempfile

    rows: dict[str, Any] = {}
    with tempfile.TemporaryDirectory() as tmp:
        before = Path(tmp) / "before"
        before.mkdir()
        archive = subprocess.run(["git", "archive", ref, "coherence"], cwd=ROOT, check=True,
                                 capture_output=True).stdout
        subprocess.run(["tar", "-x", "-C", str(before)], input=archive, check=True)
        for label, path in (("before", before), ("after", ROOT)):
            done = subprocess.run([sys.executable, "-c", _CI_CHILD, str(path), str(calls),
                                   str(ROOT)],
                                  cwd=tmp, check=True, capture_output=True, text=True)
            rows[label] = json.loads(done.stdout.strip().splitlines()[-1])
    for label in ("before", "after"):
        r = rows[label]
        r["debiased_over_subsampling"] = (r["debiased"]["median_cpu_s"]
                                          / r["subsampling"]["median_cpu_s"])
        print(f"  {label} ({ref if label == 'before' else 'working tree'}): ci_test defaults "
              f"{r['debiased']['median_cpu_s']:.3f} s CPU, subsampling "
              f"{r['subsampling']['median_cpu_s']:.3f} s "
              f"({r['debiased_over_subsampling']:.2f}x); float evidence "
              f"{r['float_evidence']['median_cpu_s']:.3f} s", flush=True)
    result = {"script": f"benchmarks/bench_speed.py --ci-interval {ref}",
              "environment": environment(), "threads": "1 numba, 1 BLAS",
              "design": "coherence.simulate('rational', n_contexts=200, rng=0): 1000 rows",
              "calls": calls, "before_ref": ref, **rows,
              "ratio_debiased_before_over_after": (rows["before"]["debiased"]["median_cpu_s"]
                                                   / rows["after"]["debiased"]["median_cpu_s"]),
              "float_evidence_design": "validate_citest_continuous 'evidence per row, "
                                       "continuous beliefs that miss it', seed 0: 1000 rows",
              "ratio_float_evidence_after_over_before": (
                  rows["after"]["float_evidence"]["median_cpu_s"]
                  / rows["before"]["float_evidence"]["median_cpu_s"])}
    saved = json.loads(out_path.read_text(encoding="utf-8")) if out_path.exists() else {}
    saved["ci_interval"] = result
    out_path.write_text(json.dumps(saved, indent=1) + "\n", encoding="utf-8")
    return result


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n-permutations", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--before-repeat", type=int, default=1,
                        help="runs of each 'before' (reference path) row; the best is kept")
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000,
                                                                  1_000_000, 10_000_000])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--grid-jobs", type=int, nargs="*", default=[],
                        help="also time the paper's 16-cell grid at these n_jobs (minutes)")
    parser.add_argument("--backend", default="loky", help="joblib backend of the grid")
    parser.add_argument("--before-commit", default="7e3544b",
                        help="the commit whose CMI kernels are the 'before' of the scaling rows")
    parser.add_argument("--peer-sizes", type=int, nargs="+", default=[1000, 5000, 20_000])
    parser.add_argument("--brute-max", type=int, default=5000,
                        help="largest n for the O(n^2) brute-force reference")
    parser.add_argument("--test-permutations", type=int, default=1000)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--replot", action="store_true",
                        help="only redraw the plot and the docs tables from --out")
    parser.add_argument("--ci-interval", metavar="REF",
                        help="only time ci_test's default interval against subsampling, "
                             "git REF against the working tree (merged into --out)")
    parser.add_argument("--calls", type=int, default=7)
    args = parser.parse_args(argv)
    if args.ci_interval:
        ci_interval_cost(args.ci_interval, args.calls, args.out)
        return 0
    if args.replot:
        saved = json.loads(args.out.read_text(encoding="utf-8"))
        plot(saved["cmi_scaling"], saved.get("peers") or {})
        write_tables(DOC, "bench_speed.py", docs_block(saved))
        return 0
    import numba
    from threadpoolctl import threadpool_info

    warnings.simplefilter("ignore", coherence.CoherenceWarning)
    coherence.leakage_test(_cell(40)[0], engine="logistic", n_permutations=2, rng=0)  # imports
    print("| what | before (s) | after (s) | ratio | after, 1 numba thread (s) | ratio | "
          "p-values equal |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    rows = before_after(args.n_permutations, args.repeat, args.before_repeat)
    grid_rows = grid(args.n_permutations, args.grid_jobs, args.backend) if args.grid_jobs else []
    print("\n| beliefs | n | threads | cmi() (ms) | array layer (ms) | before (ms) | "
          "extra MiB |")
    scaling = cmi_scaling(args.sizes, args.threads, args.repeat, args.before_commit)
    print("\n| n | ours (ms) | brute force | tigramite CMIknn | tigramite mixed |")
    peer = peers(args.peer_sizes, args.brute_max, args.test_permutations)
    plot(scaling, peer)
    env = environment()
    env["threads"] = {"numba_max": numba.config.NUMBA_NUM_THREADS,
                      "numba_layer": numba.threading_layer(),
                      "blas": [{k: i.get(k) for k in ("internal_api", "num_threads")}
                               for i in threadpool_info()]}
    out = {"script": "benchmarks/bench_speed.py", "environment": env,
           "settings": vars(args) | {"out": str(args.out)},
           "before_after": rows, "grid": grid_rows, "cmi_scaling": scaling, "peers": peer}
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    write_tables(DOC, "bench_speed.py", docs_block(out))
    print(f"\nwrote {args.out}, {PLOT} and the tables of {DOC}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
