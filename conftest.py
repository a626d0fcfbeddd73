"""Tests that need an optional extra skip, saying which, when it is not installed.

catboost and pgmpy are extras (``pip install 'belief-coherence[all]'``; ``make test``
installs them). A test that needs one is marked ``@pytest.mark.requires("pgmpy")``;
everything under ``bayesnets/`` and ``tests/bayesnets/`` (doctests included) needs
pgmpy without saying so.
"""

from __future__ import annotations

import importlib.util
from pathlib import Path

import pytest

_ROOT = Path(__file__).resolve().parent
_NEEDS_PGMPY = (_ROOT / "bayesnets", _ROOT / "tests" / "bayesnets")
_EXTRA = {"catboost": "catboost", "pgmpy": "bayesnets"}


def _missing(module: str) -> bool:
    return importlib.util.find_spec(module) is None


def pytest_configure(config: pytest.Config) -> None:
    config.addinivalue_line(
        "markers", "requires(module): needs an optional extra; skipped when it is missing")


def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    missing = {m for m in _EXTRA if _missing(m)}
    if not missing:
        return
    for item in items:
        needs = {m.args[0] for m in item.iter_markers("requires")}
        path = Path(str(item.path)).resolve()
        if any(path.is_relative_to(p) for p in _NEEDS_PGMPY):
            needs.add("pgmpy")
        for module in sorted(needs & missing):
            item.add_marker(pytest.mark.skip(
                reason=f"{module} is not installed (pip install "
                       f"'belief-coherence[{_EXTRA[module]}]')"))
            break
