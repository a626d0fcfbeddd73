"""Shared design helpers (evidence and role columns)."""

from __future__ import annotations

import pandas as pd
import pytest

from coherence._decision._design import evidence_columns
from coherence._decision._design import require_design_columns


def test_evidence_columns():
    assert evidence_columns("x", "f") == ("x",)
    assert evidence_columns(["x", "y"], "f") == ("x", "y")
    assert evidence_columns((), "f") == ()
    with pytest.raises(TypeError, match="The 'evidence' parameter of f must be a sequence of "
                       "column names"):
        evidence_columns(3, "f")
    with pytest.raises(TypeError, match="'evidence' parameter of f"):
        evidence_columns(["x", 1], "f")


def test_require_design_columns():
    df = pd.DataFrame({"p": [0.5], "a": [1], "x": [0.0]})
    require_design_columns(df, {"belief": "p", "action": "a", "group": None}, ("x",), "f")
    with pytest.raises(ValueError, match=r"f: column 'z' \(the 'evidence\[1\]' column\) not "
                       "found"):
        require_design_columns(df, {"belief": "p"}, ("x", "z"), "f")
    with pytest.raises(ValueError, match=r"'q' \(the 'outcome' column\)"):
        require_design_columns(df, {"outcome": "q"}, (), "f")
