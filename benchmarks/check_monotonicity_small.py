"""The localised monotonicity test in studies too small for its windows (fewer than
4 x min_contexts contexts), at the least favourable null, on the independent generator of
``benchmarks/cyclic_designs.py`` (logit choice among no / defer / yes, context shocks sd 1,
flat shares, 5 elicitations per context): its size at alpha 0.05 by study size. The
numbers behind ``monotonicity_test``'s ``SmallSampleWarning``::

    python -m benchmarks.check_monotonicity_small 20 30 40 50     # writes the JSON
"""

from __future__ import annotations

import json
import sys
import warnings
from pathlib import Path

import numpy as np

from benchmarks._harness import environment
from benchmarks.cyclic_designs import Design
from benchmarks.cyclic_designs import generate

RESULTS = Path(__file__).resolve().parent / "results" / "check_monotonicity_small.json"
STUDIES = 1500


def main(argv: list[str] | None = None) -> int:
    import coherence

    sizes = [int(a) for a in (argv if argv is not None else sys.argv[1:])] or [20, 30, 40, 50]
    cells = []
    for n_contexts in sizes:
        design = Design().with_(strength=0.0, n_contexts=n_contexts)
        rejected = 0
        for s in range(STUDIES):
            data = generate(design, np.random.default_rng(7_000_000 + s))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                p = coherence.monotonicity_test(data, rng=s, n_resamples=999).pvalue
            rejected += p <= 0.05
        cells.append({"n_contexts": n_contexts, "studies": STUDIES,
                      "size": rejected / STUDIES})
        print(n_contexts, "contexts x 5, flat, shocks sd 1:", rejected / STUDIES, flush=True)
    RESULTS.write_text(json.dumps({"environment": environment(()), "cells": cells},
                                  indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
