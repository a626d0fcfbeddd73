"""Speed of the kNN CMI estimator and of the permutation test, side by side with peers.

Run from the repository root::

    nice -n 10 python -m benchmarks.bench_cmi

Peers, all timed in this one run on the same data (the paper's design: a
belief on a 0.05 grid, 3 actions, a binary outcome): the brute-force O(n^2)
reference of the same estimator in ``tests/_reference.py`` (the algorithm of
the authors' knncmi package) and, when installed (``pip install tigramite``),
tigramite's ``CMIknn`` estimate and its local-permutation test. Reported as
ratios; nothing here is asserted.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path

import numpy as np

import coherence
from coherence._decision._cmi import Prepared, keys_1d, psi_table
from coherence._decision._kernels import cmi_1d

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from tests._reference import reference_cmi


def _best(func: Callable[[], object], repeat: int = 5) -> float:
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        func()
        times.append(time.perf_counter() - t0)
    return min(times)


def _data(n: int, seed: int = 0) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    study = coherence.simulate("rational", n_contexts=max(n // 5, 1), rng=seed)
    d = study.data
    return (d["action"].cat.codes.to_numpy().astype(np.int64), d["outcome"].to_numpy(),
            d["belief"].to_numpy())


def _kernel_inputs(a: np.ndarray, y: np.ndarray, b: np.ndarray) -> tuple:
    n = len(a)
    empty = np.empty((n, 0))
    prep = Prepared(n=n, cont={"x": empty, "y": empty, "z": np.round(b / 1e-6)[:, None]},
                     disc={"x": a, "y": y, "z": np.zeros(n, dtype=np.int64)})
    keys = keys_1d(prep)
    return (keys.c, keys.kxyz, keys.kxz, keys.kyz, keys.kz, keys.has_c, 3, psi_table(n))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--big", type=int, default=1_000_000)
    args = parser.parse_args(argv)
    try:
        from tigramite.independence_tests.cmiknn import CMIknn
    except ImportError:  # optional peer
        CMIknn = None
    import warnings

    import numba

    warnings.simplefilter("ignore", coherence.SmallSampleWarning)  # the small warm-up table
    print(f"numba threads: {numba.get_num_threads()}")
    # warm-up (compilation, cached on disk after the first run)
    a, y, b = _data(200)
    coherence.ci_test({"action": a, "outcome": y, "belief": b, "context": np.arange(len(a)) // 5},
                      n_resamples=10, rng=0)
    cmi_1d(*_kernel_inputs(a, y, b))

    print("\n| n | kernel (ms) | public cmi() (ms) | brute-force reference (ms) | ratio |")
    print("| --- | --- | --- | --- | --- |")
    for n in (1000, 3000):
        a, y, b = _data(n)
        inputs = _kernel_inputs(a, y, b)
        t_kernel = _best(lambda inputs=inputs: cmi_1d(*inputs), 20)
        t_public = _best(lambda a=a, y=y, b=b: coherence.cmi(a, y, b, resolution=1e-6), 10)
        e = np.empty((n, 0))
        z = np.round(b / 1e-6)[:, None]
        t_ref = _best(lambda a=a, y=y, e=e, z=z, n=n: reference_cmi(
            e, a[:, None], e, y[:, None], z, np.empty((n, 0), dtype=np.int64)), 1)
        print(f"| {n} | {1e3 * t_kernel:.3f} | {1e3 * t_public:.3f} | {1e3 * t_ref:.0f} | "
              f"{t_ref / t_kernel:.0f}x kernel, {t_ref / t_public:.0f}x public |")

    a, y, b = _data(args.big)
    inputs = _kernel_inputs(a, y, b)
    t_big = _best(lambda: cmi_1d(*inputs), 2)
    t_big_public = _best(lambda: coherence.cmi(a, y, b, resolution=1e-6), 1)
    print(f"\none estimate at n = {args.big}: kernel {t_big:.2f} s, public cmi() "
          f"{t_big_public:.2f} s")

    a, y, b = _data(1000)
    table = {"action": a, "outcome": y, "belief": b, "context": np.arange(1000) // 5}
    t_test = _best(lambda: coherence.ci_test(table, n_resamples=1000, rng=0), 3)
    print(f"ci_test at n = 1000 with 1000 permutations and 1000 subsamples for the CI: "
          f"{t_test:.3f} s")

    if CMIknn is None:
        print("\ntigramite not installed: peer comparison skipped")
        return 0
    xf, yf, zf = a.astype(float), y.astype(float), b.astype(float)
    measure = CMIknn(knn=3, significance="shuffle_test", shuffle_neighbors=5, sig_samples=500,
                     transform="none", workers=2)

    def tig_estimate() -> None:
        measure.get_dependence_measure(np.vstack([xf, yf, zf]), np.array([0, 1, 2]))

    t_tig = _best(tig_estimate, 5)
    inputs = _kernel_inputs(a, y, b)
    t_kernel = _best(lambda: cmi_1d(*inputs), 20)
    print(f"\ntigramite CMIknn estimate at n = 1000: {1e3 * t_tig:.1f} ms "
          f"({t_tig / t_kernel:.0f}x our kernel)")
    t0 = time.perf_counter()
    measure.run_test_raw(xf[:, None], yf[:, None], zf[:, None])
    t_tig_test = time.perf_counter() - t0
    t_ours_500 = _best(lambda: coherence.ci_test(table, n_resamples=500, rng=0), 3)
    print(f"tigramite local-permutation test (500 permutations) at n = 1000: "
          f"{t_tig_test:.2f} s; ci_test with 500 permutations + 500 CI subsamples: "
          f"{t_ours_500:.3f} s ({t_tig_test / t_ours_500:.0f}x)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
