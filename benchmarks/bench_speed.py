"""Before/after speed of one cell of the paper's grid, and how one CMI estimate scales.

Run from the repository root (a few CPU-minutes at the defaults)::

    nice -n 10 python -m benchmarks.bench_speed [--n-permutations 100] [--repeat 2]
        [--sizes 1000 10000 100000 1000000] [--threads 1 2]

One cell of the paper's grid: 200 contexts x 5 repetitions (n = 1000 rows) of a
leaky agent, the logistic leakage engine, 500 resamples. Each row is measured
twice in this one run on the same data, ``before`` on the reference path (every
permutation refitted by scikit-learn; the isotonic null by scikit-learn's
``isotonic_regression`` one resample at a time; report cells with the library's
default BLAS threads) and ``after`` on the fast path,
the best of ``--repeat`` runs each, and reported as a ratio; the p-values of
both paths are recorded and must be equal. The CMI rows time one estimate
(:func:`coherence._decision._kernels.cmi_1d`, the kernel the public ``cmi``
calls) at each size and numba thread count, with the process's peak resident
memory after each size, and the brute-force O(n^2) reference of the same
estimator (the authors' knncmi algorithm, ``tests/_reference.py``) at the
small sizes. Writes ``benchmarks/results/bench_speed.json`` (versions, commit,
machine, threads), the tables of ``docs/speed.md`` and the scaling plot
``docs/speed_scaling.svg``.
"""

from __future__ import annotations

import argparse
import json
import resource
import sys
import time
import warnings
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np

import coherence
from benchmarks._harness import ROOT, environment, markers, replace_block
from coherence._decision import _kernels, _leakage
from coherence._decision._monotone import isotonic_lr
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
             "| ratio | after, 1 numba thread (s) | ratio | p-values equal |",
             "| --- | --- | --- | --- | --- | --- | --- |"]
    for r in out["before_after"]:
        lines.append(f"| {r['what']} | {r['before_s']:.2f} | {r['after_s']:.2f} | "
                     f"{r['ratio']:.1f}x | {r['after_one_thread_s']:.2f} | "
                     f"{r['ratio_one_thread']:.1f}x | "
                     f"{'yes' if r['pvalues_equal'] else 'NO'} |")
    if out.get("grid"):
        lines += ["", "| the 16-cell grid | n_jobs (backend) | before, serial (s) | after (s) "
                  "| ratio | p-values equal |", "| --- | --- | --- | --- | --- | --- |"]
        for r in out["grid"]:
            lines.append(f"| {r['what']} | {r['n_jobs']} ({r['backend']}) | "
                         f"{r['before_serial_s']:.1f} | {r['after_s']:.1f} | {r['ratio']:.1f}x | "
                         f"{'yes' if r['pvalues_equal'] else 'NO'} |")
    lines += ["", "| n | numba threads | one estimate (ms) | peak RSS (MiB) | "
              "brute-force reference (ms) |", "| --- | --- | --- | --- | --- |"]
    for r in out["cmi_scaling"]:
        brute = r.get("brute_force_seconds")
        lines.append(f"| {r['n']} | {r['threads']} | {1e3 * r['seconds']:.2f} | "
                     f"{r['peak_rss_mib']:.0f} | {'' if brute is None else f'{1e3 * brute:.0f}'} |")
    return "\n".join(lines)


def _best(func: Callable[[], Any], repeat: int) -> tuple[float, Any]:
    best, out = np.inf, None
    for _ in range(repeat):
        t0 = time.perf_counter()
        out = func()
        best = min(best, time.perf_counter() - t0)
    return best, out


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


def before_after(n_permutations: int, repeat: int) -> list[dict[str, Any]]:
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
        with _Reference():
            t_before, res_before = _best(run, repeat)
        t_after, res_after = _best(run, repeat)
        numba.set_num_threads(1)
        t_one, _ = _best(run, repeat)
        numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
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
    with _Reference():
        t_before, ref = _best(lambda: coherence.report(table, **kw), 1)
    rows = []
    for n_jobs in jobs:
        t_after, rep = _best(lambda n_jobs=n_jobs: coherence.report(
            table, n_jobs=n_jobs, backend=backend, **kw), 1)
        same = bool(np.array_equal(ref.to_frame()["pvalue"].to_numpy(float),
                                   rep.to_frame()["pvalue"].to_numpy(float), equal_nan=True))
        rows.append({"what": f"report, 16 cells, {n_permutations} permutations, 500 resamples",
                     "n_jobs": n_jobs, "backend": rep.settings["backend"],
                     "before_serial_s": t_before, "after_s": t_after,
                     "ratio": t_before / t_after, "pvalues_equal": same})
        print(f"| 16-cell grid | n_jobs {n_jobs} ({rep.settings['backend']}) | "
              f"{t_before:.1f} | {t_after:.1f} | {t_before / t_after:.1f}x | "
              f"{'yes' if same else 'NO'} |", flush=True)
    return rows


def _kernel_inputs(n: int) -> tuple[Any, ...]:
    from coherence._decision._cmi import Prepared, keys_1d, psi_table

    study = coherence.simulate("rational", n_contexts=max(n // 5, 1), rng=1)
    d = study.data
    a = d["action"].cat.codes.to_numpy().astype(np.int64)
    y, b = d["outcome"].to_numpy().astype(np.int64), d["belief"].to_numpy()
    m = len(a)
    empty = np.empty((m, 0))
    prep = Prepared(n=m, cont={"x": empty, "y": empty, "z": np.round(b / 1e-6)[:, None]},
                    disc={"x": a, "y": y, "z": np.zeros(m, dtype=np.int64)})
    keys = keys_1d(prep)
    return (keys.c, keys.kxyz, keys.kxz, keys.kyz, keys.kz, keys.has_c, 3, psi_table(m)), (
        a, y, b)


def cmi_scaling(sizes: list[int], threads: list[int], repeat: int) -> list[dict[str, Any]]:
    import numba

    sys.path.insert(0, str(ROOT))
    from tests._reference import reference_cmi

    _kernels.cmi_1d(*_kernel_inputs(200)[0])  # compile / load the cache
    rows = []
    for n in sizes:
        inputs, (a, y, b) = _kernel_inputs(n)
        for t in threads:
            numba.set_num_threads(t)
            secs, _ = _best(lambda inputs=inputs: _kernels.cmi_1d(*inputs),
                            repeat if n < 10**6 else 1)
            row: dict[str, Any] = {"n": len(a), "threads": t, "seconds": secs,
                                   "peak_rss_mib": resource.getrusage(
                                       resource.RUSAGE_SELF).ru_maxrss / 1024}
            if n <= 2000 and t == threads[0]:
                e = np.empty((len(a), 0))
                z = np.round(b / 1e-6)[:, None]
                ref, _ = _best(lambda a=a, y=y, e=e, z=z: reference_cmi(
                    e, a[:, None], e, y[:, None], z, np.empty((len(a), 0), dtype=np.int64)), 1)
                row["brute_force_seconds"] = ref
            rows.append(row)
            print(f"| {len(a)} | {t} | {1e3 * secs:.2f} | {row['peak_rss_mib']:.0f} | "
                  f"{row.get('brute_force_seconds', float('nan')) * 1e3:.0f} |", flush=True)
    numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    return rows


def plot(scaling: list[dict[str, Any]]) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, ax = plt.subplots(figsize=(5.5, 3.6))
    for t in sorted({r["threads"] for r in scaling}):
        pts = [(r["n"], r["seconds"]) for r in scaling if r["threads"] == t]
        ax.loglog(*zip(*pts, strict=True), marker="o", label=f"kernel, {t} thread(s)")
    brute = [(r["n"], r["brute_force_seconds"]) for r in scaling if "brute_force_seconds" in r]
    if brute:
        ax.loglog(*zip(*brute, strict=True), marker="s", linestyle="--",
                  label="brute-force reference (knncmi algorithm)")
    ax.set_xlabel("rows n")
    ax.set_ylabel("seconds per CMI estimate")
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=8)
    fig.tight_layout()
    fig.savefig(PLOT, metadata={"Date": None})
    plt.close(fig)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--n-permutations", type=int, default=100)
    parser.add_argument("--repeat", type=int, default=2)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1000, 10_000, 100_000,
                                                                  1_000_000])
    parser.add_argument("--threads", type=int, nargs="+", default=[1, 2])
    parser.add_argument("--grid-jobs", type=int, nargs="*", default=[],
                        help="also time the paper's 16-cell grid at these n_jobs (minutes)")
    parser.add_argument("--backend", default="loky", help="joblib backend of the grid")
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    import numba
    from threadpoolctl import threadpool_info

    warnings.simplefilter("ignore", coherence.CoherenceWarning)
    coherence.leakage_test(_cell(40)[0], engine="logistic", n_permutations=2, rng=0)  # imports
    print("| what | before (s) | after (s) | ratio | after, 1 numba thread (s) | ratio | "
          "p-values equal |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    rows = before_after(args.n_permutations, args.repeat)
    grid_rows = grid(args.n_permutations, args.grid_jobs, args.backend) if args.grid_jobs else []
    print("\n| n | numba threads | kernel (ms) | peak RSS (MiB) | brute force (ms) |")
    print("| --- | --- | --- | --- | --- |")
    scaling = cmi_scaling(args.sizes, args.threads, args.repeat)
    plot(scaling)
    env = environment()
    env["threads"] = {"numba_max": numba.config.NUMBA_NUM_THREADS,
                      "numba_layer": numba.threading_layer(),
                      "blas": [{k: i.get(k) for k in ("internal_api", "num_threads")}
                               for i in threadpool_info()]}
    out = {"script": "benchmarks/bench_speed.py", "environment": env,
           "settings": vars(args) | {"out": str(args.out)},
           "before_after": rows, "grid": grid_rows, "cmi_scaling": scaling}
    args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    replace_block(DOC, *markers("bench_speed.py"), docs_block(out))
    print(f"\nwrote {args.out}, {PLOT} and the tables of {DOC}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
