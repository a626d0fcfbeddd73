"""The ```python examples of docs/*.md and README.md run as users copy them.

Each page's blocks run in order in one namespace (a later block uses the names of an
earlier one), in a temporary working directory that holds a copy of ``docs/studies``
(the docs' commands run from the repository root). A block written as a doctest
(``>>>`` lines) runs as one, so its shown output is checked.

A block may carry a marker, an HTML comment on the lines just before it (MyST does not
render it):

- ``<!-- docs-example: skip (why) -->``: not run, the test reports the reason: a call
  signature rather than code, a network or API key, a live model, ``../shared`` data, an
  optional extra, or input the page does not build.
- ``<!-- docs-example: setup`` ... ``-->``: the comment's lines run first, in the same
  namespace, to build the input a snippet takes as given (``df``, ``forecasts``); ``REPO``
  names the repository root there (to copy a file the tests ship).

Skips come from markers only, never from catching an exception: an example that raises
fails the test, naming the page and the block's line.
"""

from __future__ import annotations

import doctest
import re
import shutil
import warnings
from dataclasses import dataclass
from pathlib import Path

import matplotlib.pyplot as plt
import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]

#: Pages whose examples take minutes at the documented sizes (run under ``-m slow``).
SLOW = {"axioms.md", "guide.md", "leakage.md", "power.md", "study.md", "study_config.md",
        "README.md"}

_FENCE = re.compile(r"^(`{3,}|~{3,})\s*python\s*$")
_SKIP = re.compile(r"^<!--\s*docs-example:\s*skip\s*\((.+)\)\s*-->$")
_SETUP = re.compile(r"^<!--\s*docs-example:\s*setup\s*$")


@dataclass(frozen=True)
class Block:
    """One fenced ```python block: its first code line (1-based), code, marker."""

    line: int
    code: str
    skip: str | None = None
    setup: str | None = None
    setup_line: int = 0


def _marker(lines: list[str], fence: int) -> tuple[str | None, str | None, int]:
    """The skip reason or setup code on the lines just before line index ``fence``."""
    i = fence - 1
    while i >= 0 and not lines[i].strip():
        i -= 1
    if i < 0:
        return None, None, 0
    if m := _SKIP.match(lines[i].strip()):
        return m.group(1), None, 0
    if lines[i].strip() != "-->":
        return None, None, 0
    end = i
    while i >= 0 and not _SETUP.match(lines[i].strip()):
        if lines[i].lstrip().startswith("<!--") or i < end - 60:
            return None, None, 0
        i -= 1
    if i < 0:
        return None, None, 0
    return None, "\n".join(lines[i + 1:end]), i + 2


def blocks(page: Path) -> list[Block]:
    """The page's ```python blocks, in order, with their markers."""
    lines = page.read_text(encoding="utf-8").splitlines()
    found, i = [], 0
    while i < len(lines):
        m = _FENCE.match(lines[i].strip())
        if not m:
            i += 1
            continue
        fence, j = m.group(1), i + 1
        while j < len(lines) and lines[j].strip() != fence:
            j += 1
        skip, setup, setup_line = _marker(lines, i)
        found.append(Block(i + 2, "\n".join(lines[i + 1:j]), skip, setup, setup_line))
        i = j + 1
    return found


def _run(code: str, first_line: int, page: Path, namespace: dict) -> None:
    """Run ``code`` as if at ``first_line`` of ``page`` (tracebacks name the page line)."""
    if code.lstrip().startswith(">>>"):
        test = doctest.DocTestParser().get_doctest(code, namespace, page.name, str(page),
                                                   first_line - 1)
        runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
        out: list[str] = []
        runner.run(test, out=out.append, clear_globs=False)
        assert runner.failures == 0, "".join(out)
        return
    exec(compile("\n" * (first_line - 1) + code, str(page), "exec"), namespace)


def _params() -> list:
    params = []
    for page in PAGES:
        if not any(True for _ in blocks(page)):
            continue
        marks = [pytest.mark.slow] if page.name in SLOW else []
        params.append(pytest.param(page, id=page.name, marks=marks))
    return params


@pytest.mark.parametrize("page", _params())
def test_page_examples_run(page, tmp_path, monkeypatch):
    shutil.copytree(ROOT / "docs" / "studies", tmp_path / "docs" / "studies")
    monkeypatch.chdir(tmp_path)
    namespace: dict = {"__name__": "__docs__", "REPO": ROOT}
    skipped = []
    try:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")      # a user sees warnings; they do not stop a run
            for block in blocks(page):
                if block.skip:
                    skipped.append(f"{page.name}:{block.line}: {block.skip}")
                    continue
                if block.setup:
                    _run(block.setup, block.setup_line, page, namespace)
                _run(block.code, block.line, page, namespace)
    finally:
        plt.close("all")
    if skipped and len(skipped) == len(blocks(page)):
        pytest.skip("; ".join(skipped))


def test_markers_are_read(tmp_path):
    page = tmp_path / "p.md"
    page.write_text("text\n\n<!-- docs-example: skip (needs a live model) -->\n```python\n"
                    "client.ask()\n```\n\n<!-- docs-example: setup\nx = 1\n-->\n\n```python\n"
                    "y = x + 1\n```\n\n```python\n>>> y\n2\n```\n")
    found = blocks(page)
    assert [b.skip for b in found] == ["needs a live model", None, None]
    assert found[1].setup == "x = 1" and found[1].setup_line == 9
    assert [b.line for b in found] == [5, 13, 17]
    namespace: dict = {}
    _run(found[1].setup, found[1].setup_line, page, namespace)
    _run(found[1].code, found[1].line, page, namespace)
    _run(found[2].code, found[2].line, page, namespace)
    with pytest.raises(AssertionError, match="Expected"):
        _run(">>> y\n3", 1, page, namespace)
