"""The layering rule and the public API, checked on the installed modules.

The statistical core (``coherence``) never imports ``bayesnets``,
``elicitation`` or the command line; ``import coherence`` stays light. Both
are checked by importing modules in a fresh interpreter and reading
``sys.modules``, and by the static import graph of every core module (which
also sees ``importlib.import_module`` calls), never by searching text.
"""

import ast
import json
import pkgutil
import subprocess
import sys
from pathlib import Path

import pytest

import bayesnets
import coherence
import elicitation

OUTSIDE_CORE = ("bayesnets", "elicitation", "coherence_cli")
HEAVY = ("catboost", "pgmpy", "numba", "sklearn", "matplotlib", "statsmodels", "pandas",
         "scipy")
CORE_ROOT = Path(coherence.__file__).parent


def core_modules() -> list[str]:
    names = ["coherence"]
    for info in pkgutil.walk_packages([str(CORE_ROOT)], prefix="coherence."):
        names.append(info.name)
    return sorted(names)


def loaded_after(statement: str) -> set[str]:
    code = f"import sys; {statement}; print('\\n'.join(sorted(sys.modules)))"
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    return set(out.stdout.split())


def test_the_core_has_the_domain_packages():
    names = core_modules()
    for domain in ("_decision", "_probability", "_scoring", "_report"):
        assert f"coherence.{domain}" in names
    assert len(names) > 25


def test_import_is_light():
    loaded = loaded_after("import coherence")
    assert not {m.split(".")[0] for m in loaded} & set(HEAVY)


#: third-party packages the core imports, loaded once in the parent of the forks below (none of
#: them imports our packages, so what a core module pulls in of ours is unchanged)
PRELOAD = ("numpy", "pandas", "scipy.stats", "scipy.optimize", "scipy.special", "numba",
           "sklearn", "statsmodels.api", "matplotlib")

#: one interpreter that loads PRELOAD, then forks a child per module; each child imports its
#: module into the parent's state (no package of ours loaded) and prints its ``sys.modules``
_FORKS = """
import gc, importlib, json, os, sys
for name in sys.argv[2:]:
    try:
        importlib.import_module(name)
    except ImportError:
        pass
found = {"<parent>": sorted(sys.modules)}
gc.freeze()  # the children's collections then leave the parent's pages shared (fast forks)
for module in json.loads(sys.argv[1]):
    read, write = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.close(read)
        try:
            importlib.import_module(module)
            text = json.dumps(sorted(sys.modules))
        except BaseException as exc:
            text = json.dumps({"error": repr(exc)})
        with os.fdopen(write, "w") as pipe:
            pipe.write(text)
        os._exit(0)
    os.close(write)
    with os.fdopen(read) as pipe:
        found[module] = json.loads(pipe.read())
    os.waitpid(pid, 0)
print(json.dumps(found))
"""


@pytest.fixture(scope="module")
def loaded_by_module() -> dict[str, set[str]]:
    """What importing each core module loads, each in a fresh state (a fork, or an interpreter)."""
    modules = core_modules()
    if not hasattr(__import__("os"), "fork"):
        return {m: loaded_after(f"import {m}") for m in modules}
    out = subprocess.run([sys.executable, "-c", _FORKS, json.dumps(modules), *PRELOAD],
                         capture_output=True, text=True, check=True)
    found = json.loads(out.stdout)
    parent = {m.split(".")[0] for m in found.pop("<parent>")}
    assert not parent & {"coherence", *OUTSIDE_CORE}, parent  # the forks start clean of ours
    errors = {m: v["error"] for m, v in found.items() if isinstance(v, dict)}
    assert not errors, errors
    return {m: set(v) for m, v in found.items()}


@pytest.mark.parametrize("module", core_modules())
def test_no_core_module_loads_outside_packages(module, loaded_by_module):
    loaded = loaded_by_module[module]
    top = {m.split(".")[0] for m in loaded}
    assert module in loaded
    assert not top & set(OUTSIDE_CORE), (module, sorted(top & set(OUTSIDE_CORE)))


def _imported_names(path: Path, package: str) -> set[str]:
    """Absolute names a module imports, statically, including importlib.import_module calls."""
    tree = ast.parse(path.read_text(), filename=str(path))
    found: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            if node.level == 0 and node.module:
                found.add(node.module)
            elif node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                found.add(".".join([*base, node.module] if node.module else base))
        elif (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute)
              and node.func.attr in {"import_module", "__import__"}) or (
                isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in {"__import__", "import_module"}):
            relative_to_self = (len(node.args) == 2 and isinstance(node.args[1], ast.Name)
                                and node.args[1].id == "__name__")
            if relative_to_self:  # import_module(name, __name__): inside this package
                found.add(package + ".<relative>")
            elif node.args and isinstance(node.args[0], ast.Constant):
                found.add(str(node.args[0].value))
            else:  # a computed module name cannot be checked: not allowed in the core
                found.add("<dynamic>")
    return found


#: the core's one computed import: the lazy-loading helper imports the names a package
#: lists in its ``_LAZY`` map, each relative to that package (absolute names are refused:
#: see test_lazy_helper_refuses_absolute_modules)
DYNAMIC = {"coherence/_lazy"}


def test_core_import_graph_stays_inside_the_core():
    offenders = []
    for path in CORE_ROOT.rglob("*.py"):
        rel = path.relative_to(CORE_ROOT.parent).with_suffix("")
        parts = list(rel.parts)
        package = ".".join(parts if parts[-1] == "__init__" and parts.pop() else parts[:-1])
        for name in _imported_names(path, package):
            top = name.split(".")[0]
            if top in OUTSIDE_CORE or (name == "<dynamic>" and str(rel) not in DYNAMIC):
                offenders.append((str(rel), name))
    assert offenders == []


def test_lazy_names_are_relative_to_the_core():
    assert all(target.startswith(".") for target in coherence._LAZY.values())


def test_lazy_helper_refuses_absolute_modules():
    from coherence._lazy import lazy_attributes

    with pytest.raises(ValueError, match=r"relative to 'coherence'.*\['run_demo'\]"):
        lazy_attributes("coherence", {"run_demo": "bayesnets._demo", "plan": "._plan"}, {}, [])


def test_dynamic_import_detector_sees_import_module(tmp_path):
    probe = tmp_path / "probe.py"
    probe.write_text("import importlib\nrun = importlib.import_module('bayesnets').run_demo\n")
    assert "bayesnets" in _imported_names(probe, "coherence")


def test_command_line_is_outside_the_core():
    loaded = loaded_after("import coherence_cli")
    assert "coherence_cli" in loaded
    # the command line loads the other packages only when a command needs them
    assert not {m.split(".")[0] for m in loaded} & {"bayesnets", "elicitation"}


def test_public_api_is_unchanged():
    stored = json.loads((Path(__file__).parent / "public_api.json").read_text())
    for package in (coherence, bayesnets, elicitation):
        assert sorted(package.__all__) == stored[package.__name__], package.__name__


def test_lazy_names_resolve():
    for name in coherence.__all__:
        assert getattr(coherence, name) is not None


def test_unknown_attribute():
    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        coherence.nope  # noqa: B018
