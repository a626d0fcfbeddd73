"""The speed of key-event recall (the size, power and coverage of forecast_scores and
its paired comparison are :mod:`benchmarks.validate_forecast_scores`' matrix).

Run: ``nice -n 10 python -m benchmarks.bench_forecast``. The speed table in
docs/reasoning_quality.md was produced by this script.
"""

from __future__ import annotations

import sys
import time

import numpy as np
import pandas as pd

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


def main(argv: list[str]) -> None:
    del argv  # no options
    print("key_event_recall wall time")
    print(ker_speed().to_string(index=False))


if __name__ == "__main__":
    main(sys.argv[1:])
