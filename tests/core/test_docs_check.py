"""docs/_check_docs.py, the checks `make docs` runs around Sphinx."""

import importlib.util
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
spec = importlib.util.spec_from_file_location("check_docs", ROOT / "docs" / "_check_docs.py")
check_docs = importlib.util.module_from_spec(spec)
spec.loader.exec_module(check_docs)


def test_split_and_ragged_tables_are_found(tmp_path):
    page = tmp_path / "page.md"
    page.write_text("| a | b |\n| --- | --- |\n| 1 | 2 |\n\n| 3 | 4 |\n\n"
                    "| x | y |\n| --- | --- |\n| 1 | 2 | 3 |\n| `a|b` | c \\| d |\n\n"
                    "```\n| not | a table |\n```\n|g| in prose\n")
    check_docs.ROOT = tmp_path
    problems = check_docs.check_tables([page])
    assert sorted(problems) == ["page.md:5: a table row outside any table (a blank line inside the "
                        "table above?)", "page.md:9: a row with 3 cells in a table of 2"]


def test_the_docs_tables_parse():
    check_docs.ROOT = ROOT
    pages = [*sorted((ROOT / "docs").glob("*.md")), ROOT / "README.md"]
    assert check_docs.check_tables(pages) == []


def test_offline_check(tmp_path):
    (tmp_path / "a.html").write_text("<script src='_static/m.js'></script>"
                                     "<link href='https://cdn.example/x.css' rel=stylesheet>")
    problems = check_docs.check_offline(tmp_path)
    assert len(problems) == 1 and "cdn.example" in problems[0]
