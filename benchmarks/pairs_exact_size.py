"""Exact size of the Bernoulli mid-p test on one cell of the pairs validation matrix.

Run from the repository root::

    nice python -m benchmarks.pairs_exact_size "A balanced, B balanced, strong: midpoint" 14

It replays the cell's studies exactly as ``benchmarks/validate_pairs.py`` draws them (same
seed and stream), and for each study enumerates the 2^k outcomes of A on its k
informative pairs (B's outcomes and the stated numbers held fixed, as the test does) to
give: the Monte Carlo test's rejection rate (199 resamples, the figure in the JSON), the
rejection rate of the exact mid-p p-value on the realised outcomes, and the exact size of
the ideal (infinitely resampled) mid-p test averaged over the studies, which is what
discreteness alone allows. Studies with more than 16 informative pairs are skipped
(they are not where discreteness matters).
"""

from __future__ import annotations

import itertools
import sys

import numpy as np

from benchmarks import validate_pairs as vp
from benchmarks.pairs_designs import draw_study

MAX_K = 16


def _null(s: dict[str, np.ndarray]) -> tuple[np.ndarray, np.ndarray, np.ndarray] | None:
    """Every value of the statistic on the informative pairs, its null probability, and
    the observed value; None without an informative pair or with too many."""
    q = np.where(s["b_outcome"] == 1, s["p_a_given_b1"], s["p_a_given_b0"])
    inf = s["p_a"] != q
    d, m = (s["p_a"] - q)[inf], ((s["p_a"] + q) / 2)[inf]
    if d.size == 0 or d.size > MAX_K:
        return None
    a = np.array(list(itertools.product((0, 1), repeat=d.size)), dtype=float)
    t = np.round((2 * d * (m - a)).sum(axis=1), 12)
    prob = np.prod(np.where(a == 1, m, 1 - m), axis=1)
    observed = np.round(float((2 * d * (m - s["a_outcome"][inf])).sum()), 12)
    return t, prob, np.array(observed)


def _midp(t: np.ndarray, prob: np.ndarray, value: float) -> float:
    eq, gt, lt = prob[t == value].sum(), prob[t > value].sum(), prob[t < value].sum()
    return float(min(1.0, 2 * min(gt + eq / 2, lt + eq / 2)))


def exact_figures(s: dict[str, np.ndarray]) -> tuple[float, float]:
    """(exact size of the ideal two-sided mid-p test at alpha, 1 if the exact p-value of
    the realised outcomes rejects); NaN, NaN when not enumerable."""
    got = _null(s)
    if got is None:
        return float("nan"), float("nan")
    t, prob, observed = got
    size = sum(float(prob[t == v].sum()) for v in np.unique(t) if _midp(t, prob, v) <= vp.ALPHA)
    return size, float(_midp(t, prob, float(observed)) <= vp.ALPHA)


def main(argv: list[str]) -> int:
    name, n = argv[0], int(argv[1])
    designs = [*vp.null_designs(), *vp.alternative_designs()]
    index = [d.name for d in designs].index(name)
    rng = np.random.default_rng([20261, index, n])  # validate_pairs's stream for the cell
    seen: list[dict[str, np.ndarray]] = []

    def recording(design: vp.PairDesign, n: int,
                  rng: np.random.Generator) -> dict[str, np.ndarray]:
        s = draw_study(design, n, rng)
        seen.append(s)
        return s

    vp.draw_study = recording
    rows = [vp.one_study(designs[index], n, 199, rng) for _ in range(1000)]
    mc = np.mean([np.nan_to_num(r["bernoulli two-sided"], nan=1.0) <= vp.ALPHA for r in rows])
    figs = np.array([exact_figures(s) for s in seen])
    ok = np.isfinite(figs[:, 0])
    print(f"{name}, n = {n}: Monte Carlo mid-p rejects {mc:.3f}; on the {ok.sum()} "
          f"enumerable studies the exact p-value rejects {figs[ok, 1].mean():.3f} and the "
          f"ideal test's exact size is {figs[ok, 0].mean():.4f}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
