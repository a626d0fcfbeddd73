"""Run every benchmark module in this folder: ``python -m benchmarks [name ...]``.

Each ``bench_*.py`` module defines ``main(argv)``; timings are reported as
ratios measured in one run, never asserted.
"""

from __future__ import annotations

import importlib
import pkgutil
import sys
from pathlib import Path


def main(argv: list[str]) -> int:
    folder = str(Path(__file__).parent)
    names = sorted(m.name for m in pkgutil.iter_modules([folder]) if m.name.startswith("bench_"))
    wanted = [n for n in names if not argv or any(a in n for a in argv)]
    if not wanted:
        print(f"no benchmark matches {argv}; available: {', '.join(names) or 'none yet'}")
        return 0
    for name in wanted:
        print(f"== {name}")
        importlib.import_module(f"benchmarks.{name}").main([])
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
