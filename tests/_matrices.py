"""Helpers of the fast tests of the validation matrices (benchmarks/validate_*.py)."""

from __future__ import annotations

from pathlib import Path
from types import ModuleType

import pytest


def tables_text(script: ModuleType, out: Path, tmp_path: Path,
                monkeypatch: pytest.MonkeyPatch, *options: str) -> str:
    """The page ``script --tables [options]`` writes from the JSON ``out`` (into a scratch
    page, not the docs)."""
    doc = tmp_path / "page.md"
    doc.write_text("# page\n")
    monkeypatch.setattr(script, "DOC", doc)
    assert script.main(["--tables", *options, "--out", str(out)]) == 0
    return doc.read_text()
