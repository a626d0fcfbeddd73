"""Forecast scoring: size and power of the paired comparison, coverage of the
cluster-bootstrap interval of the Brier score, and the speed of key-event recall.

Run: ``nice -n 10 python -m benchmarks.bench_forecast [--quick]``. The tables in
docs/forecast_scoring.md and docs/reasoning_quality.md were produced by this script.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from coherence import forecast_scores
from coherence import key_event_recall


def _table(rng: np.random.Generator, n: int, noises: dict[str, float]) -> pd.DataFrame:
    truth = rng.uniform(0.05, 0.95, size=n)
    y = (rng.uniform(size=n) < truth).astype(int)
    q = [f"q{i}" for i in range(n)]
    parts = []
    for name, sd in noises.items():
        p = truth if sd < 0 else np.clip(truth + rng.normal(0, sd, size=n), 0, 1)
        if sd == -2:
            p = np.full(n, 0.5)
        parts.append(pd.DataFrame({"model": name, "question": q, "probability": p,
                                   "outcome": y}))
    return pd.concat(parts, ignore_index=True)


def size_power(reps: int, seed: int = 0) -> pd.DataFrame:
    """Rejection rate at 0.05 of ``compare`` under the null and two alternatives."""
    rng = np.random.default_rng(seed)
    rows = []
    for n in (20, 40, 80):
        hits = {"null (sd 0.1 vs 0.1)": 0, "alt (sd 0.1 vs 0.2)": 0, "alt (sd 0.1 vs 0.3)": 0}
        for _ in range(reps):
            t = _table(rng, n, {"a": 0.1, "b": 0.1, "c": 0.2, "d": 0.3})
            res = forecast_scores(t, n_resamples=1, rng=rng)
            for key, other in zip(hits, ("b", "c", "d"), strict=True):
                hits[key] += res.compare("a", other, n_resamples=499, rng=rng).pvalue <= 0.05
        rows.extend({"n_questions": n, "scenario": k, "rejection_rate": v / reps,
                     "reps": reps} for k, v in hits.items())
    return pd.DataFrame(rows)


def coverage(reps: int, seed: int = 1) -> pd.DataFrame:
    """Coverage of the 95% cluster-bootstrap interval of the pooled Brier score.

    Model 'a' forecasts the truth t ~ U(0.05, 0.95), model 'b' always says 0.5;
    both answer the same questions (shared outcomes), so the pooled score has
    within-question correlation. Expected pooled Brier:
    (E[t(1 - t)] + 0.25) / 2, with E[t(1-t)] = (F(0.95) - F(0.05)) / 0.9,
    F(t) = t^2/2 - t^3/3.
    """
    def big_f(t: float) -> float:
        return t**2 / 2 - t**3 / 3

    target = ((big_f(0.95) - big_f(0.05)) / 0.9 + 0.25) / 2
    rng = np.random.default_rng(seed)
    rows = []
    for n in (20, 50, 100):
        cover = 0
        for _ in range(reps):
            t = _table(rng, n, {"a": -1, "b": -2})
            ci = forecast_scores(t, n_resamples=999, rng=rng).confidence_interval
            cover += ci.low <= target <= ci.high
        rows.append({"n_questions": n, "coverage": cover / reps, "reps": reps,
                     "target": round(target, 5)})
    return pd.DataFrame(rows)


def ker_speed() -> pd.DataFrame:
    """Wall time of key_event_recall for growing graphs (one question, one forecast)."""
    rng = np.random.default_rng(2)
    words = [f"w{i:03d}" for i in range(400)]
    rows = []
    for n_events in (10, 50, 200):
        def texts(k: int) -> list[str]:
            return [" ".join(rng.choice(words, size=8)) for _ in range(k)]

        hind = pd.DataFrame({"question": "q", "event": [f"h{i}" for i in range(n_events)],
                             "title": texts(n_events), "magnitude": rng.uniform(size=n_events),
                             "confidence": rng.uniform(size=n_events)})
        fc = pd.DataFrame({"model": "m", "question": "q", "title": texts(n_events)})
        start = time.perf_counter()
        key_event_recall(fc, hind, n_resamples=10, rng=0)
        rows.append({"n_events_each_side": n_events,
                     "seconds": round(time.perf_counter() - start, 3)})
    return pd.DataFrame(rows)


def main(argv: list[str]) -> None:
    quick = "--quick" in argv
    reps = 100 if quick else 400
    print("paired comparison (sign-flip randomization), rejection rate at alpha = 0.05")
    print(size_power(reps).to_string(index=False))
    print("\ncluster-bootstrap 95% interval of the pooled Brier score")
    print(coverage(100 if quick else 300).to_string(index=False))
    print("\nkey_event_recall wall time")
    print(ker_speed().to_string(index=False))


if __name__ == "__main__":
    main(sys.argv[1:])
