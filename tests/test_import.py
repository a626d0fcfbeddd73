import subprocess
import sys

import coherence


def test_import_is_light():
    code = ("import sys, coherence; "
            "heavy = [m for m in ('catboost', 'pgmpy', 'numba', 'sklearn', 'matplotlib', "
            "'statsmodels', 'pandas') if m in sys.modules]; print(','.join(heavy))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                         check=True)
    assert out.stdout.strip() == ""


def test_lazy_names_resolve():
    for name in coherence.__all__:
        assert getattr(coherence, name) is not None


def test_unknown_attribute():
    import pytest

    with pytest.raises(AttributeError, match="no attribute 'nope'"):
        coherence.nope  # noqa: B018


def test_core_never_imports_bayesnets_or_elicitation():
    from pathlib import Path

    root = Path(coherence.__file__).parent
    for path in root.glob("*.py"):
        text = path.read_text()
        assert "import bayesnets" not in text and "from bayesnets" not in text, path
        assert "import elicitation" not in text and "from elicitation" not in text, path
