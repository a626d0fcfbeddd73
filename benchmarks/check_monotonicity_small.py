"""The localised monotonicity test in studies too small for its windows (fewer than
4 x min_contexts contexts), at the least favourable null, on the independent generator of
``benchmarks/cyclic_designs.py`` (logit choice among no / defer / yes, context shocks sd 1,
flat shares, 5 elicitations per context): its size at alpha 0.05 by study size, with
the wild bootstrap-t draws (the default) and, on the same studies, the earlier
un-restudentized draws (``restudentize=False`` of ``max_t_null``), which were liberal
here::

    python -m benchmarks.check_monotonicity_small 20 25 30 35 40 50 60 200  # writes the JSON
"""

from __future__ import annotations

import functools
import json
import sys
import warnings
from pathlib import Path
from unittest import mock

import numpy as np

from benchmarks._harness import environment
from benchmarks.cyclic_designs import Design
from benchmarks.cyclic_designs import generate

RESULTS = Path(__file__).resolve().parent / "results" / "check_monotonicity_small.json"
STUDIES = 1500


def main(argv: list[str] | None = None) -> int:
    import coherence
    from coherence._decision import _monotone_local

    sizes = ([int(a) for a in (argv if argv is not None else sys.argv[1:])]
             or [20, 25, 30, 35, 40, 50, 60, 200])
    earlier = functools.partial(_monotone_local.max_t_null, restudentize=False)
    cells = []
    for n_contexts in sizes:
        design = Design().with_(strength=0.0, n_contexts=n_contexts)
        rejected = {"bootstrap_t": 0, "earlier": 0}
        for s in range(STUDIES):
            data = generate(design, np.random.default_rng(7_000_000 + s))
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                p = coherence.monotonicity_test(data, rng=s, n_resamples=999).pvalue
                with mock.patch.object(_monotone_local, "max_t_null", earlier):
                    p_earlier = coherence.monotonicity_test(data, rng=s,
                                                            n_resamples=999).pvalue
            rejected["bootstrap_t"] += p <= 0.05
            rejected["earlier"] += p_earlier <= 0.05
        cells.append({"n_contexts": n_contexts, "studies": STUDIES,
                      "size": rejected["bootstrap_t"] / STUDIES,
                      "size_earlier": rejected["earlier"] / STUDIES})
        print(n_contexts, "contexts x 5, flat, shocks sd 1:", cells[-1], flush=True)
    RESULTS.write_text(json.dumps({"environment": environment(()), "cells": cells},
                                  indent=1) + "\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
