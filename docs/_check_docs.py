"""Checks `make docs` runs around Sphinx (which accepts both problems silently).

``python docs/_check_docs.py tables``: every Markdown table in docs/*.md and
README.md parses as one table (a stray blank line splits a table and turns its
tail into a paragraph of pipes) and every row has as many cells as its header.

``python docs/_check_docs.py offline DIR``: no built page loads a script or a
style sheet from the network (math is rendered by a MathJax copy shipped with the
docs, so the pages read offline).
"""

from __future__ import annotations

import re
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _cells(line: str) -> int:
    text = re.sub(r"`[^`]*`", "x", line.strip())  # pipes inside code spans are text
    text = text.replace("\\|", "x").strip()
    text = text.removeprefix("|").removesuffix("|")
    return text.count("|") + 1


def check_tables(paths: list[Path]) -> list[str]:
    from markdown_it import MarkdownIt

    md = MarkdownIt("commonmark").enable("table")
    problems = []
    for path in paths:
        lines = path.read_text(encoding="utf-8").splitlines()
        tokens = md.parse("\n".join(lines))
        in_table: set[int] = set()
        in_code: set[int] = set()
        for tok in tokens:
            if tok.map is None:
                continue
            span = set(range(tok.map[0], tok.map[1]))
            if tok.type == "table_open":
                in_table |= span
                rows = [i for i in range(*tok.map) if lines[i].strip()]
                width = _cells(lines[rows[0]])
                for i in rows[2:]:
                    if _cells(lines[i]) != width:
                        problems.append(f"{path.relative_to(ROOT)}:{i + 1}: a row with "
                                        f"{_cells(lines[i])} cells in a table of {width}")
            elif tok.type in ("fence", "code_block", "html_block"):
                in_code |= span
        for i, line in enumerate(lines):
            row = line.strip()
            if (row.startswith("|") and row.endswith("|") and len(row) > 2
                    and i not in in_table and i not in in_code):
                problems.append(f"{path.relative_to(ROOT)}:{i + 1}: a table row outside any "
                                "table (a blank line inside the table above?)")
    return problems


def check_offline(build: Path) -> list[str]:
    pattern = re.compile(r"""<(?:script|link)[^>]+(?:src|href)=["'](?:https?:)?//[^"']+""")
    problems = []
    for page in sorted(build.rglob("*.html")):
        for match in pattern.finditer(page.read_text(encoding="utf-8")):
            problems.append(f"{page.relative_to(build)}: loads {match.group(0)!r}")
    return problems


def main(argv: list[str]) -> int:
    if argv[:1] == ["tables"]:
        paths = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md",
                 ROOT / "CHANGELOG.md"]
        problems = check_tables([p for p in paths if p.is_file()])
    elif argv[:1] == ["offline"] and len(argv) == 2:
        problems = check_offline(Path(argv[1]))
    else:
        print("usage: python docs/_check_docs.py tables | offline BUILD_DIR", file=sys.stderr)
        return 2
    for line in problems:
        print(line, file=sys.stderr)
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
