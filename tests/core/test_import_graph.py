"""The product's import graph: no cycles (imports inside functions counted), no reaching
into another package's private domain modules, no private names taken from a sibling.

Read from the code with ``ast``, never by searching text. An import under
``if TYPE_CHECKING:`` is for annotations only and does not count; every other
import does, wherever it stands (module level or inside a function body: an import
deferred to call time is still a dependency, and a cycle hidden that way is still
a cycle).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("coherence", "bayesnets", "elicitation", "coherence_cli")
#: the core's domain subpackages: private to the core
DOMAINS = ("_decision", "_probability", "_scoring", "_report")


def product_modules(root: Path = ROOT) -> dict[str, Path]:
    """Module name -> file, for every module of the four product packages."""
    out: dict[str, Path] = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            parts = list(path.relative_to(root).with_suffix("").parts)
            if parts[-1] == "__init__":
                parts = parts[:-1]
            out[".".join(parts)] = path
    return out


def _is_type_checking(node: ast.If) -> bool:
    test = node.test
    return (isinstance(test, ast.Name) and test.id == "TYPE_CHECKING") or (
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING")


def _imports(tree: ast.AST) -> list[ast.Import | ast.ImportFrom]:
    """Every import statement outside ``if TYPE_CHECKING:`` blocks."""
    found: list[ast.Import | ast.ImportFrom] = []

    def visit(node: ast.AST) -> None:
        if isinstance(node, ast.If) and _is_type_checking(node):
            for child in node.orelse:
                visit(child)
            return
        if isinstance(node, ast.Import | ast.ImportFrom):
            found.append(node)
        for child in ast.iter_child_nodes(node):
            visit(child)

    visit(tree)
    return found


def _base(module: str, is_package: bool, node: ast.ImportFrom) -> str:
    if node.level == 0:
        return node.module or ""
    parts = module.split(".")
    if not is_package:
        parts = parts[:-1]
    parts = parts[: len(parts) - node.level + 1]
    return ".".join([*parts, node.module] if node.module else parts)


def import_edges(modules: dict[str, Path]) -> dict[str, set[tuple[str, str]]]:
    """Module -> {(imported module, name taken from it or '')} among product modules."""
    edges: dict[str, set[tuple[str, str]]] = {m: set() for m in modules}
    for module, path in modules.items():
        tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
        is_package = path.name == "__init__.py"
        for node in _imports(tree):
            if isinstance(node, ast.Import):
                for alias in node.names:
                    if alias.name in modules:
                        edges[module].add((alias.name, ""))
                continue
            base = _base(module, is_package, node)
            for alias in node.names:
                sub = f"{base}.{alias.name}"
                if sub in modules:  # ``from . import _kernels_cmi``: the submodule itself
                    edges[module].add((sub, ""))
                elif base in modules:
                    edges[module].add((base, alias.name))
    return edges


def cycles(edges: dict[str, set[tuple[str, str]]]) -> list[list[str]]:
    """Strongly connected components with more than one module (Tarjan), a package's
    own ``__init__`` importing its children not counted as a reason for a cycle."""
    graph = {m: sorted({t for t, _ in targets if t != m}) for m, targets in edges.items()}
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    counter = [0]

    def strong(v: str) -> None:
        index[v] = low[v] = counter[0]
        counter[0] += 1
        stack.append(v)
        on_stack.add(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in on_stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while True:
                w = stack.pop()
                on_stack.discard(w)
                component.append(w)
                if w == v:
                    break
            if len(component) > 1:
                found.append(sorted(component))

    for v in graph:
        if v not in index:
            strong(v)
    return found


def private_reaches(edges: dict[str, set[tuple[str, str]]]) -> list[str]:
    """Imports that reach behind an underscore they should not."""
    bad = []
    for module, targets in sorted(edges.items()):
        top = module.split(".")[0]
        for target, name in sorted(targets):
            parts = target.split(".")
            # a sibling package (or the CLI) importing one of the core's domain modules
            if top != "coherence" and parts[0] == "coherence" and len(parts) > 1 \
                    and parts[1] in DOMAINS:
                bad.append(f"{module} imports {target}")
            # a private name (not a module) taken from another module
            if name.startswith("_") and not name.startswith("__"):
                bad.append(f"{module} takes {name} from {target}")
    return bad


@pytest.fixture(scope="module")
def edges() -> dict[str, set[tuple[str, str]]]:
    return import_edges(product_modules())


def test_the_walk_sees_every_package(edges):
    tops = {m.split(".")[0] for m in edges}
    assert tops == set(PACKAGES)
    assert len(edges) > 60
    # imports inside function bodies are seen: the report's renderers are imported
    # by the result's methods, at call time
    assert ("coherence._report._render", "render_html") in edges["coherence._report._result"]


def test_no_import_cycle(edges):
    assert cycles(edges) == []


def test_no_reach_into_private_rooms(edges):
    assert private_reaches(edges) == []


def _tree(tmp_path: Path, files: dict[str, str]) -> dict[str, Path]:
    for name, text in files.items():
        path = tmp_path / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text, encoding="utf-8")
    return product_modules(tmp_path)


def test_detector_finds_a_cycle_hidden_in_a_function(tmp_path):
    modules = _tree(tmp_path, {
        "coherence/__init__.py": "",
        "coherence/_a.py": "from ._b import g\n",
        "coherence/_b.py": "def g():\n    from ._a import f\n    return f\n",
        "bayesnets/__init__.py": "", "elicitation/__init__.py": "",
        "coherence_cli/__init__.py": "",
    })
    assert cycles(import_edges(modules)) == [["coherence._a", "coherence._b"]]


def test_detector_ignores_type_checking_imports(tmp_path):
    modules = _tree(tmp_path, {
        "coherence/__init__.py": "",
        "coherence/_a.py": "from ._b import g\n",
        "coherence/_b.py": ("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n"
                            "    from ._a import f\ndef g():\n    pass\n"),
        "bayesnets/__init__.py": "", "elicitation/__init__.py": "",
        "coherence_cli/__init__.py": "",
    })
    assert cycles(import_edges(modules)) == []


def test_detector_finds_private_reaches(tmp_path):
    modules = _tree(tmp_path, {
        "coherence/__init__.py": "",
        "coherence/_decision/__init__.py": "",
        "coherence/_decision/_sim.py": "def _helper():\n    pass\n",
        "coherence/_decision/_other.py": "from ._sim import _helper\n",
        "bayesnets/__init__.py": "",
        "bayesnets/_x.py": "def f():\n    from coherence._decision._sim import g\n",
        "elicitation/__init__.py": "", "coherence_cli/__init__.py": "",
    })
    assert private_reaches(import_edges(modules)) == [
        "bayesnets._x imports coherence._decision._sim",
        "coherence._decision._other takes _helper from coherence._decision._sim",
    ]
