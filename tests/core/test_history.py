"""No project history in the product: issue numbers belong in CHANGELOG.md.

A docstring or comment that says "before issue 14" means nothing to a user who never
saw the tracker; it has to say what changed in words (or drop it), and the dated
history lives in the changelog. This test reads every file the packages ship (code,
prompt and phrase data) and fails on the first ``issue <number>`` it finds.
"""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("coherence", "bayesnets", "elicitation", "coherence_cli")
SUFFIXES = (".py", ".toml", ".json")

#: ``issue 14``, ``Issue 15``, ``issues 5``, ``issue #20``
ISSUE_NUMBER = re.compile(r"\bissues?\s+#?\d+", re.IGNORECASE)

#: Product files allowed to name issues (none: the history lives in CHANGELOG.md).
EXCLUDED: frozenset[str] = frozenset()


def product_files() -> list[Path]:
    files = [path for package in PACKAGES for path in (ROOT / package).rglob("*")
             if path.is_file() and path.suffix in SUFFIXES and "__pycache__" not in path.parts]
    return sorted(files)


def issue_numbers(text: str) -> list[tuple[int, str]]:
    """(line number, line) for every line that names an issue number."""
    return [(number, line.strip()) for number, line in enumerate(text.splitlines(), 1)
            if ISSUE_NUMBER.search(line)]


def test_pattern_catches_the_ways_history_is_written() -> None:
    text = "a\nstatistic before issue 14's fix\n(Issue 15)\nsee issues 5\nissue #20\n"
    assert [number for number, _ in issue_numbers(text)] == [2, 3, 4, 5]
    assert issue_numbers("tissue 3 samples\nthe issue is 3-fold\nissue tracker\n") == []


def test_excluded_files_exist() -> None:
    # a stale entry would hide nothing, and hide that it hides nothing
    missing = sorted(name for name in EXCLUDED if not (ROOT / name).is_file())
    assert missing == []


def test_no_issue_numbers_in_product_files() -> None:
    files = product_files()
    assert len(files) > 50  # the walk found the packages
    found = []
    for path in files:
        name = path.relative_to(ROOT).as_posix()
        if name in EXCLUDED:
            continue
        found += [f"{name}:{number}: {line}"
                  for number, line in issue_numbers(path.read_text(encoding="utf-8"))]
    assert found == [], "issue numbers in the product (say it in words, or CHANGELOG.md):\n" + (
        "\n".join(found))
