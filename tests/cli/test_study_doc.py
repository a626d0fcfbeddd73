"""docs/study.md runs as written: its table, its command and its output, its Python call
and its rerun line (the same p-values)."""

from __future__ import annotations

import contextlib
import io
import re
import shlex
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from coherence_cli import main

PAGE = Path(__file__).resolve().parents[2] / "docs" / "study.md"


def _blocks(kind: str) -> list[str]:
    return re.findall(rf"```{kind}\n(.*?)```", PAGE.read_text(), flags=re.DOTALL)


def _run(command: str) -> str:
    argv = shlex.split(command.replace("\\\n", " "))
    assert argv[0] == "coherence"
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main([*argv[1:], "--quiet"]) == 0
    return out.getvalue()


@pytest.mark.slow
def test_the_worked_study_runs_as_written(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    make_table, analyse = _blocks("python")
    exec(compile(make_table, "make_answers.py", "exec"), {})
    answers = pd.read_csv("answers.csv")
    assert len(answers) == 480
    shown = _blocks("text")[0].splitlines()
    assert shown[1].split() == [str(v) for v in answers.iloc[0]]
    # the command and what it prints
    command, rerun = _blocks("bash")
    printed = _run(command)
    expected = _blocks("text")[1].rstrip()
    assert printed.split("\nreport written")[0].rstrip() == expected
    # the Python call: the same adjusted p-values as the command line's
    namespace: dict[str, object] = {}
    exec(compile(analyse.replace("rep                      #", "#"), "study.py", "exec"),
         namespace)
    frame = namespace["rep"].to_frame()  # type: ignore[attr-defined]
    assert (tmp_path / "report.html").is_file()
    # the report's rerun line, as the page shows it: the same numbers again
    _run(rerun + " --csv again.csv")
    again = pd.read_csv("again.csv")
    left = frame.set_index(["llm", "test"])["pvalue"].sort_index()
    right = again.set_index(["llm", "test"])["pvalue"].sort_index()
    np.testing.assert_array_equal(left.to_numpy(dtype=float), right.to_numpy(dtype=float))
    assert "0.0009998" in expected  # the resolved floor the page explains: 8 / 8002
