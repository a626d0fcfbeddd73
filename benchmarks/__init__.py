"""Speed and scaling benchmarks (never installed; run with ``make bench``)."""
