"""docs/design.md's module map names every product module, in its folder's row."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("coherence", "coherence_cli", "bayesnets", "elicitation")


def map_rows() -> dict[str, str]:
    """The map's rows, keyed by the folder in their first cell (``coherence/`` for the
    root modules' row)."""
    rows = {}
    for line in (ROOT / "docs" / "design.md").read_text().splitlines():
        m = re.match(r"\| `([a-z_/]+)/`[^|]*\|(.*)", line)
        if m:
            rows[m.group(1)] = m.group(2)
    return rows


def missing_modules(rows: dict[str, str]) -> list[str]:
    """Product modules whose file name the row of their folder does not name."""
    missing = []
    for pkg in PACKAGES:
        for path in sorted((ROOT / pkg).rglob("*.py")):
            folder = path.parent.relative_to(ROOT).as_posix()
            if path.name == "__init__.py" and folder != "coherence_cli":
                continue
            if f"{path.name}`" not in rows.get(folder, ""):
                missing.append(path.relative_to(ROOT).as_posix())
    return missing


def test_every_product_module_is_on_the_map():
    rows = map_rows()
    assert set(PACKAGES) <= set(rows), f"folders without a row: {set(PACKAGES) - set(rows)}"
    assert missing_modules(rows) == []


def test_a_module_off_the_map_is_found():
    rows = map_rows()
    rows["coherence/_report"] = rows["coherence/_report"].replace("`_actions.py`", "")
    assert missing_modules(rows) == ["coherence/_report/_actions.py"]
