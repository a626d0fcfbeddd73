"""The speed of key-event recall, and of the paired comparison with and without its
skew correction (the size, power and coverage of forecast_scores and its paired
comparison are :mod:`benchmarks.validate_forecast_scores`' matrix).

Run: ``nice -n 10 python -m benchmarks.bench_forecast``. The speed tables in
docs/reasoning_quality.md and docs/forecast_scoring.md were produced by this script.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

from coherence import forecast_scores
from coherence import key_event_recall


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


def compare_speed(repeats: int = 3) -> pd.DataFrame:
    """Best-of-``repeats`` wall time of ``compare`` (9,999 sign flips, the default) with
    ``skew_correction`` True (the default) and False, in one run, and their ratio."""
    rows = []
    for n in (100, 1000, 10_000):
        gen = np.random.default_rng(n)
        t = gen.uniform(0.05, 0.95, n)
        y = (gen.uniform(size=n) < t).astype(int)
        df = pd.DataFrame({"model": np.repeat(["a", "b"], n), "question": np.tile(np.arange(n), 2),
                           "probability": np.clip(np.concatenate(
                               [t + gen.normal(0, 0.1, n), t + gen.normal(0, 0.2, n)]), 0, 1),
                           "outcome": np.tile(y, 2)})
        res = forecast_scores(df, timestamp=None, n_resamples=1, rng=0)
        seconds = {}
        for skew in (True, False):
            best = np.inf
            for _ in range(repeats):
                start = time.perf_counter()
                res.compare("a", "b", skew_correction=skew, rng=1)
                best = min(best, time.perf_counter() - start)
            seconds[skew] = best
        rows.append({"questions": n, "skew-corrected s": round(seconds[True], 3),
                     "plain s": round(seconds[False], 3),
                     "ratio": round(seconds[True] / seconds[False], 2)})
    return pd.DataFrame(rows)


def main(argv: list[str]) -> None:
    del argv  # no options
    print("key_event_recall wall time")
    print(ker_speed().to_string(index=False))
    print("ForecastScoresResult.compare wall time (best of 3)")
    print(compare_speed().to_string(index=False))


if __name__ == "__main__":
    main(sys.argv[1:])
