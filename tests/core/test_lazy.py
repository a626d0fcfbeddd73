"""The packages' lazy loading (PEP 562), written once in ``coherence/_lazy.py``.

``coherence`` and ``bayesnets`` list their public names in ``_LAZY`` (name -> defining
module) and again, as static imports for type checkers, under ``if TYPE_CHECKING:``.
The two lists are read from the source with ``ast`` and must agree name for name and
module for module, so a name added to one and forgotten in the other fails here.
"""

from __future__ import annotations

import ast
import importlib
import subprocess
import sys
from pathlib import Path

import pytest

from coherence._lazy import lazy_attributes

ROOT = Path(__file__).resolve().parents[2]
LAZY_PACKAGES = ("coherence", "bayesnets")


def type_checking_imports(package: str) -> dict[str, str]:
    """Name -> relative module of every import in the package's TYPE_CHECKING block."""
    tree = ast.parse((ROOT / package / "__init__.py").read_text(encoding="utf-8"))
    blocks = [node for node in tree.body if isinstance(node, ast.If)
              and isinstance(node.test, ast.Name) and node.test.id == "TYPE_CHECKING"]
    assert len(blocks) == 1, f"{package}: one 'if TYPE_CHECKING:' block expected"
    found: dict[str, str] = {}
    for node in blocks[0].body:
        assert isinstance(node, ast.ImportFrom), f"{package}: only 'from . import' there"
        module = "." * node.level + (node.module or "")
        for alias in node.names:
            assert alias.asname is None, f"{package}: {alias.name} imported under another name"
            assert alias.name not in found, f"{package}: {alias.name} imported twice"
            found[alias.name] = module
    return found


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_type_checking_block_names_exactly_the_lazy_names(package):
    lazy = importlib.import_module(package)._LAZY
    static = type_checking_imports(package)
    assert sorted(set(lazy) - set(static)) == [], "in _LAZY only"
    assert sorted(set(static) - set(lazy)) == [], "in the TYPE_CHECKING block only"
    assert {n: m for n, m in static.items() if lazy[n] != m} == {}, "different modules"


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_every_lazy_name_loads_from_its_module(package):
    module = importlib.import_module(package)
    for name, where in module._LAZY.items():
        value = getattr(module, name)
        assert value is getattr(importlib.import_module(where, package), name)
        assert name in vars(module)  # cached: the next access skips __getattr__
    assert set(module._LAZY) <= set(module.__all__) == set(dir(module))


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_unknown_name_is_an_attribute_error(package):
    module = importlib.import_module(package)
    with pytest.raises(AttributeError, match=rf"^module '{package}' has no attribute 'nope'$"):
        module.nope  # noqa: B018
    assert not hasattr(module, "nope")


def test_lazy_attributes_imports_on_first_use_only():
    namespace: dict[str, object] = {}
    getattr_, dir_ = lazy_attributes("coherence", {"spawn": "._rng"}, namespace,
                                     ["spawn", "__version__"])
    assert namespace == {} and dir_() == ["spawn", "__version__"]
    from coherence._rng import spawn

    assert getattr_("spawn") is spawn and namespace == {"spawn": spawn}
    with pytest.raises(AttributeError, match="module 'coherence' has no attribute 'rng'"):
        getattr_("rng")
    dir_().append("x")  # a copy: the package's listing cannot be changed through it
    assert dir_() == ["spawn", "__version__"]


@pytest.mark.parametrize("package", LAZY_PACKAGES)
def test_import_loads_no_implementation_module(package):
    code = (f"import sys, {package}; "
            f"print('\\n'.join(m for m in sys.modules if m.startswith('{package}.')))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True, cwd=ROOT)
    loaded = set(out.stdout.split())
    assert loaded <= {"coherence._lazy"}, sorted(loaded)
