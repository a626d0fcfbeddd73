"""The version is written once (``coherence.__version__``) and every other place agrees."""

import ast
import importlib.metadata
import subprocess
import sys
import tomllib
from pathlib import Path

import pytest

import bayesnets
import coherence
import elicitation

ROOT = Path(coherence.__file__).resolve().parents[1]


def test_version_is_a_string_literal_in_coherence_init():
    # setuptools reads it statically (attr = "coherence.__version__"): it must stay a literal
    tree = ast.parse((ROOT / "coherence" / "__init__.py").read_text())
    assigned = [node.value for node in tree.body if isinstance(node, ast.Assign)
                and any(getattr(t, "id", None) == "__version__" for t in node.targets)]
    assert len(assigned) == 1
    assert isinstance(assigned[0], ast.Constant)
    assert assigned[0].value == coherence.__version__


def test_pyproject_reads_the_version_from_coherence():
    config = tomllib.loads((ROOT / "pyproject.toml").read_text())
    assert "version" not in config["project"]
    assert "version" in config["project"]["dynamic"]
    assert config["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "coherence.__version__"}


def test_installed_metadata_agrees():
    try:
        installed = importlib.metadata.version("belief-coherence")
    except importlib.metadata.PackageNotFoundError:  # pragma: no cover - running from a bare tree
        pytest.skip("belief-coherence is not installed")
    assert installed == coherence.__version__


@pytest.mark.parametrize("package", [bayesnets, elicitation])
def test_other_packages_agree(package):
    version = getattr(package, "__version__", None)
    assert version is None or version == coherence.__version__


def test_command_line_version_agrees():
    out = subprocess.run([sys.executable, "-m", "coherence_cli", "--version"], cwd=ROOT,
                         capture_output=True, text=True, check=True)
    assert out.stdout.split() == ["coherence", coherence.__version__]


def test_no_other_version_literal_in_the_packages():
    offenders = []
    for package in ("coherence", "coherence_cli", "bayesnets", "elicitation"):
        for path in (ROOT / package).rglob("*.py"):
            if path == ROOT / "coherence" / "__init__.py":
                continue
            for node in ast.walk(ast.parse(path.read_text())):
                if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                        and any(getattr(t, "id", None) == "__version__" for t in node.targets)):
                    offenders.append(str(path.relative_to(ROOT)))
    assert offenders == []
