"""Speed of the CMI kernel for several continuous coordinates in z, against the KD-trees.

With a float evidence column beside the belief, ``ci_test``'s estimates have two
continuous conditioning coordinates. They ran on Chebyshev KD-trees (scipy's cKDTree,
inside discrete strata, from Python); ``coherence/_decision/_kernels_cmi_nd.py`` is a
numba kernel for that case (x and y discrete). Both are measured in one run on the
same data, best of ``--repeat``, as ratios, and their values must be equal::

    OMP_NUM_THREADS=1 python -m benchmarks.bench_cmi_nd [--repeat 3]
    python -m benchmarks.bench_cmi_nd --tables

Two parts: one estimate at n from 1,000 to 1,000,000 with two to four continuous
coordinates (where the kernel would lose, the dispatch, :data:`coherence._decision._cmi.
Z_KERNEL_MAX`, keeps the KD-trees), and ``ci_test`` at its defaults on three designs of
``validate_citest_continuous`` (1,000 rows; the KD-tree path forced for "before"),
whose p-values and intervals must be equal. Writes ``benchmarks/results/
bench_cmi_nd.json`` (versions, commit, machine) and a table of ``docs/speed.md``.
"""

from __future__ import annotations

import argparse
import json
import warnings
from pathlib import Path
from typing import Any

import numpy as np

from benchmarks._harness import ROOT
from benchmarks._harness import best_time
from benchmarks._harness import environment
from benchmarks._harness import generated_by
from benchmarks._harness import markdown_table
from benchmarks._harness import write_tables

OUT = ROOT / "benchmarks" / "results" / "bench_cmi_nd.json"
DOC = ROOT / "docs" / "speed.md"
#: (n, continuous coordinates) of the one-estimate rows
SIZES = ((1000, 2), (1000, 3), (10_000, 2), (10_000, 3), (10_000, 4), (100_000, 2),
         (100_000, 3), (1_000_000, 2))
#: the ci_test rows: designs of benchmarks.validate_citest_continuous (1,000 rows each)
DESIGNS = ("evidence per context, 0.05 grid, 200 x 5", "evidence per row, 0.05 grid, 200 x 5",
           "two continuous evidence columns, beliefs that miss the second")


def _inputs(n: int, d: int, seed: int) -> Any:
    """A belief on a 0.01 grid, ``d - 1`` normal evidence columns, an action that reads
    the belief (4 levels), a binary outcome: the prepared estimator input."""
    from coherence._decision._cmi import _prepare

    gen = np.random.default_rng(seed)
    z = np.column_stack([np.round(gen.random(n), 2), gen.normal(size=(n, d - 1))])
    x = (gen.random(n) < z[:, 0]).astype(np.int64) + gen.integers(0, 2, n) * 2
    y = gen.integers(0, 2, n)
    return _prepare(x, y, z, discrete=None, resolution=None, owner="cmi")


def estimates(repeat: int) -> list[dict[str, Any]]:
    from coherence._decision import _cmi

    rows = []
    _cmi._estimate_z_continuous(_inputs(50, 2, 0), 3)  # compiled before any timing
    for i, (n, d) in enumerate(SIZES):
        p = _inputs(n, d, i)

        def kernel(p: Any = p) -> float:
            return _cmi._estimate_z_continuous(p, 3)

        def trees(p: Any = p) -> float:
            return _cmi._estimate_kdtree(p, 3)

        t_kernel, v_kernel = best_time(kernel, repeat)
        t_tree, v_tree = best_time(trees, repeat)
        row = {"n": n, "coordinates": d, "kernel_s": t_kernel, "kdtree_s": t_tree,
               "ratio": t_tree / t_kernel, "dispatch": ("kernel" if n * 10 ** (d - 2)
                                                        <= _cmi.Z_KERNEL_MAX else "kdtree"),
               "equal": bool(np.isclose(v_kernel, v_tree, rtol=1e-12, atol=1e-15))}
        rows.append(row)
        print(f"n {n:>7} d {d}: kernel {t_kernel * 1e3:9.1f} ms, KD-trees "
              f"{t_tree * 1e3:9.1f} ms ({row['ratio']:.1f}x), equal {row['equal']}", flush=True)
    return rows


def citest(repeat: int) -> list[dict[str, Any]]:
    import coherence
    from benchmarks import validate_citest_continuous as cc
    from coherence._decision import _cmi

    kernel = _cmi._estimate_z_continuous
    rows = []
    for i, name in enumerate(DESIGNS):
        design = cc.NULLS[name]
        data, evidence = cc.generate(design, 7 + i), cc.evidence_columns(design)

        def run(data: Any = data, evidence: list[str] = evidence) -> Any:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                return coherence.ci_test(data, evidence=evidence, group="context", rng=3)

        run()  # compiled before any timing
        t_after, after = best_time(run, repeat)
        try:
            _cmi._estimate_z_continuous = _cmi._estimate_kdtree  # the previous path
            t_before, before = best_time(run, repeat)
        finally:
            _cmi._estimate_z_continuous = kernel
        row = {"design": name, "rows": len(data), "before_s": t_before, "after_s": t_after,
               "ratio": t_before / t_after, "pvalue": after.pvalue,
               "equal": bool(after.pvalue == before.pvalue and np.allclose(
                   [after.confidence_interval.low, after.confidence_interval.high],
                   [before.confidence_interval.low, before.confidence_interval.high],
                   rtol=1e-9, atol=1e-12))}
        rows.append(row)
        print(f"ci_test {name}: {t_before:.2f} s -> {t_after:.2f} s ({row['ratio']:.1f}x), "
              f"p {after.pvalue:.3f}, equal {row['equal']}", flush=True)
    return rows


def docs_block(out: dict[str, Any]) -> str:
    env = out["environment"]
    lines = [f"{generated_by('bench_cmi_nd', env)}; best of {out['repeat']} runs, one "
             "thread). One CMI estimate with several continuous coordinates in z (x and y "
             "discrete): the numba kernel against the KD-tree path, on the same data; "
             "*used*: which of the two the estimator takes at that size.", ""]
    lines += markdown_table(
        ["n", "continuous coordinates", "kernel (ms)", "KD-trees (ms)", "ratio", "used",
         "values equal"],
        ([f"{r['n']:,}", r["coordinates"], f"{r['kernel_s'] * 1e3:.1f}",
          f"{r['kdtree_s'] * 1e3:.1f}", f"{r['ratio']:.1f}x", r["dispatch"],
          "yes" if r["equal"] else "**no**"] for r in out["estimates"]))
    lines += ["", "`ci_test` at its defaults (1,000 permutations; the interval's 1,000 "
              "half-sample estimates and its bias model's 200 simulated studies) on designs "
              "of `validate_citest_continuous` with float evidence, 1,000 rows; before: the "
              "KD-tree path for every estimate.", ""]
    lines += markdown_table(
        ["design", "rows", "before (s)", "after (s)", "ratio", "p-value and interval equal"],
        ([r["design"], r["rows"], f"{r['before_s']:.2f}", f"{r['after_s']:.2f}",
          f"{r['ratio']:.1f}x", "yes" if r["equal"] else "**no**"] for r in out["citest"]))
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--out", type=Path, default=OUT)
    parser.add_argument("--tables", action="store_true",
                        help="only write the docs table from --out")
    args = parser.parse_args(argv)
    if not args.tables:
        out = {"environment": environment(), "repeat": args.repeat,
               "estimates": estimates(args.repeat), "citest": citest(args.repeat)}
        args.out.write_text(json.dumps(out, indent=1) + "\n", encoding="utf-8")
    write_tables(DOC, "bench_cmi_nd.py",
                 docs_block(json.loads(args.out.read_text(encoding="utf-8"))))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
