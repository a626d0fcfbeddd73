"""Optional extras: a missing one names itself and the pip command."""

import importlib.util

import pytest

import coherence
from coherence import _extras


@pytest.fixture
def without(monkeypatch):
    """Make modules look uninstalled to ``require`` (find_spec returns None)."""
    real = importlib.util.find_spec

    def hide(*names):
        monkeypatch.setattr(_extras.importlib.util, "find_spec",
                            lambda name, *a: None if name in names else real(name, *a))
    return hide


def test_missing_catboost_names_the_extra(without):
    without("catboost")
    data = coherence.simulate("rational", n_contexts=20, rng=0).data
    with pytest.raises(ModuleNotFoundError, match=r"leakage_test\(engine='catboost'\) needs "
                       r"catboost.*pip install 'belief-coherence\[catboost\]'"):
        coherence.leakage_test(data, engine="catboost")


def test_missing_pgmpy_names_the_extra(without):
    from bayesnets._network import _require_pgmpy

    without("pgmpy")
    with pytest.raises(ModuleNotFoundError, match=r"pip install 'belief-coherence\[bayesnets\]'"):
        _require_pgmpy()


def test_missing_extra_is_a_one_line_cli_error(without, capsys, monkeypatch):
    import bayesnets._network
    from coherence_cli import main

    monkeypatch.setattr(bayesnets._network, "_LOADED", {})  # networks loaded by other tests
    without("pgmpy")
    assert main(["demo", "--quick"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "belief-coherence[bayesnets]" in err[0]
