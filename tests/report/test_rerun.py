"""The report's rerun lines run as printed and give the same p-values (CLI and Python)."""

from __future__ import annotations

import contextlib
import html as html_lib
import io
import shlex

import numpy as np
import pandas as pd
import pytest

import coherence
from coherence_cli import main

FAST = ["--permutations", "49", "--resamples", "49", "--quiet"]
#: No multiplicity adjustment: a p-value at its floor is still resolved with more draws (the
#: rerun must reproduce that second stage too), with 1,001 draws instead of the family size
#: times 1,000 under Holm; and the rerun line must carry this non-default setting.
UNADJUSTED = ["--adjust", "none"]


def _blocks(page: str) -> tuple[str, str]:
    """(shell command, Python code) of the report's provenance section."""
    shell = page[page.index("To rerun from the command line"):]
    shell = html_lib.unescape(shell[shell.index("<pre>") + 5:shell.index("</pre>")])
    code = page[page.index("or from Python:"):]
    code = html_lib.unescape(code[code.index("<pre>") + 5:code.index("</pre>")])
    return shell, code


def _cli(argv: list[str]) -> int:
    with contextlib.redirect_stdout(io.StringIO()):
        return main(argv)


def _pvalues(frame: pd.DataFrame, by: list[str]) -> pd.Series:
    keyed = frame.assign(**{c: frame[c].astype(str) for c in by})
    return keyed.set_index([*by, "test"])["pvalue"].sort_index()


@pytest.fixture(scope="module")
def table():
    parts = []
    for i, (model, dataset, agent) in enumerate([
            ("m1", "d1", "rational"), ("m1", "d2", coherence.Agent.leaky(strength=0.8)),
            ("m2", "d1", "rational"), ("m2", "d2", "rational")]):
        sim = coherence.simulate(agent, n_contexts=40, n_repetitions=2,
                                 prompts=("standard", "mse"), rng=i).data
        # context ids unique across the table: a one-column grouping pools two datasets
        parts.append(sim.assign(model=model, dataset=dataset, context=sim["context"] + 1000 * i))
    return pd.concat(parts, ignore_index=True)


@pytest.mark.parametrize("by", [["model"], ["model", "dataset"]])
def test_rerun_lines_reproduce_the_pvalues(table, by, tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    table.to_csv("answers.csv", index=False)
    assert _cli(["test", "answers.csv", "--by", ",".join(by), "--seed", "11",
                 "--out", "first.html", "--csv", "first.csv", *UNADJUSTED, *FAST]) == 0
    first = _pvalues(pd.read_csv("first.csv"), by)
    assert "p-value resolved with 1001 draws" in (tmp_path / "first.html").read_text()
    assert first.notna().sum() >= 4 * len(by)
    shell, code = _blocks((tmp_path / "first.html").read_text())
    argv = shlex.split(shell)
    assert argv[:3] == ["coherence", "test", "answers.csv"]
    assert argv[argv.index("--by") + 1] == ",".join(by)
    assert argv[argv.index("--adjust") + 1] == "none"
    # the command line, as printed (plus where to write the tidy results)
    assert _cli([*argv[1:], "--csv", "again.csv", "--quiet"]) == 0
    pd.testing.assert_series_equal(_pvalues(pd.read_csv("again.csv"), by), first)
    # the Python call, as printed
    namespace: dict[str, object] = {}
    exec(compile(code, "rerun.py", "exec"), namespace)
    rep = namespace["rep"]
    assert isinstance(rep, coherence.CoherenceReport) and (tmp_path / "report.html").is_file()
    python = _pvalues(rep.to_frame(), by)
    np.testing.assert_array_equal(python.to_numpy(), first.to_numpy())
    assert list(python.index) == list(first.index)


def test_python_rerun_reads_the_file_as_the_command_did(tmp_path, monkeypatch):
    """The Python rerun read every file with pd.read_csv (a parquet or JSON table failed to
    load) and mapped --actions on the action column alone (a menu study's IIA test then
    refused every row): it now reads by the suffix and passes actions= to report."""
    from benchmarks.iia_designs import Design
    from benchmarks.iia_designs import generate

    monkeypatch.chdir(tmp_path)
    data = generate(Design(agent="odds", factor=3.0, n_contexts=60), 41).assign(outcome=0)
    ours = {"yes": "buy", "no": "sell", "defer": "hold"}
    data = data.assign(action=data["action"].map(ours), menu=data["menu"].map(
        lambda m: "|".join(ours[a] for a in m.split("|"))))
    data.to_parquet("answers.parquet")
    assert _cli(["test", "answers.parquet", "--tests", "iia", "--actions",
                 "yes=buy,no=sell,defer=hold", "--seed", "3", "--resamples", "19",
                 "--out", "first.html", "--csv", "first.csv", "--quiet"]) == 0
    first = pd.read_csv("first.csv")
    _, code = _blocks((tmp_path / "first.html").read_text())
    namespace: dict[str, object] = {}
    exec(compile(code, "rerun.py", "exec"), namespace)
    again = namespace["rep"].to_frame()
    assert again["error"].tolist() == [""] and first["pvalue"].notna().all()
    np.testing.assert_array_equal(again["pvalue"].to_numpy(), first["pvalue"].to_numpy())


@pytest.mark.requires("pgmpy")
@pytest.mark.slow  # a whole demo twice; CI runs it (make test-slow)
def test_demo_report_reruns_as_printed(tmp_path, monkeypatch):
    """The demo records its seed and writes the table it analysed: its rerun line runs
    as printed and gives the demo's p-values."""
    monkeypatch.chdir(tmp_path)
    assert _cli(["demo", "--n-contexts", "30", "--n-repetitions", "2", "--resamples", "49",
                 "--seed", "5", "--out", "demo.html", "--quiet"]) == 0
    page = (tmp_path / "demo.html").read_text()
    assert "Not reproducible as run" not in page and "TABLE.csv" not in page
    shell, code = _blocks(page)
    argv = shlex.split(shell)
    assert argv[:3] == ["coherence", "test", "demo.csv"] and "SEED" not in argv
    assert _cli([*argv[1:], "--csv", "again.csv", "--out", "again.html"]) == 0
    again = _pvalues(pd.read_csv("again.csv"), ["model"])
    assert again.notna().sum() >= 20
    namespace: dict[str, object] = {}
    exec(compile(code, "rerun.py", "exec"), namespace)
    python = _pvalues(namespace["rep"].to_frame(), ["model"])   # type: ignore[attr-defined]
    np.testing.assert_array_equal(python.to_numpy(), again.to_numpy())
    # and the demo's own numbers, as its report shows them
    from bayesnets import run_demo

    rep, _ = run_demo(n_contexts=30, n_repetitions=2, n_resamples=49, progress=False,
                      adjust="holm", rng=5)
    np.testing.assert_array_equal(_pvalues(rep.to_frame(), ["model"]).to_numpy(),
                                  again.to_numpy())


def test_lists_are_printed_comma_separated(table):
    """Several grouping or evidence columns are one comma-separated argument each, as the
    CLI wants them (a second word would be taken for the table)."""
    import dataclasses

    from coherence._report._rerun import rerun_commands
    from coherence_cli import _build_parser

    rep = coherence.report(table, by=("model", "dataset"), tests=["calibration"],
                           n_resamples=19, progress=False, rng=0)
    settings = {**rep.settings, "data_file": "answers.csv",
                "columns": {**rep.settings["columns"], "evidence": ["age", "smoker"]}}
    shell, python = rerun_commands(dataclasses.replace(rep, settings=settings))
    args = _build_parser().parse_args(shlex.split(shell)[1:])
    assert args.table == "answers.csv"
    assert args.by == ["model", "dataset"] and args.evidence == ["age", "smoker"]
    assert "by=['model', 'dataset']" in python and "evidence=['age', 'smoker']" in python


def test_non_default_settings_and_columns_turned_off_rerun(table, tmp_path, monkeypatch):
    """k, folds, bins, the confidence level and a column turned off (prompt=None pools the
    prompts) reach the command line; they were left out, and the rerun used the defaults
    (other statistics, intervals at 0.95, one prompt's rows)."""
    import dataclasses

    from coherence._report._rerun import rerun_commands

    monkeypatch.chdir(tmp_path)
    table.to_csv("answers.csv", index=False)
    rep = coherence.report(table, by=("model",), prompt=None, k=7, n_splits=3, n_bins=5,
                           confidence_level=0.8, tests=["ci", "leakage", "calibration_error"],
                           n_resamples=49, adjust="none", progress=False, rng=3)
    shell, python = rerun_commands(dataclasses.replace(
        rep, settings={**rep.settings, "data_file": "answers.csv"}))
    argv = shlex.split(shell)
    for flag, value in (("--k", "7"), ("--folds", "3"), ("--bins", "5"),
                        ("--confidence", "0.8"), ("--prompt", "-")):
        assert argv[argv.index(flag) + 1] == value
    assert "prompt=None" in python and "k=7" in python
    assert _cli([*argv[1:], "--csv", "again.csv", "--quiet"]) == 0
    again = pd.read_csv("again.csv").set_index(["model", "test"]).sort_index()
    first = rep.to_frame().assign(model=lambda f: f["model"].astype(str)).set_index(
        ["model", "test"]).sort_index()
    assert (again["n_obs"] == first["n_obs"]).all()  # every prompt's rows, not one prompt's
    for column in ("statistic", "ci_low", "ci_high", "pvalue", "confidence_level"):
        np.testing.assert_allclose(again[column].to_numpy(dtype=float),
                                   first[column].to_numpy(dtype=float), rtol=1e-12)


def test_a_report_without_the_action_column_reruns(table, tmp_path, monkeypatch):
    # a study without a decision prompt runs report(action=None); its rerun line left the
    # action out, and the CLI then looked for an 'action' column beside the outcome
    import dataclasses

    from coherence._report._rerun import rerun_commands

    monkeypatch.chdir(tmp_path)
    table.drop(columns="action").to_csv("answers.csv", index=False)
    rep = coherence.report(table.drop(columns="action"), by=("model",), action=None,
                           tests=["calibration"], n_resamples=19, progress=False, rng=0)
    shell, python = rerun_commands(dataclasses.replace(
        rep, settings={**rep.settings, "data_file": "answers.csv"}))
    argv = shlex.split(shell)
    assert argv[argv.index("--action") + 1] == "-" and "action=None" in python
    assert _cli([*argv[1:], "--csv", "again.csv", "--quiet"]) == 0
    again = pd.read_csv("again.csv").set_index(["model", "test"]).sort_index()
    first = rep.to_frame().set_index(["model", "test"]).sort_index()
    np.testing.assert_allclose(again["statistic"], first["statistic"], rtol=1e-12)


def test_set_aside_replies_reach_the_rerun_lines(table, tmp_path, monkeypatch):
    # the rerun lines left set_aside out: the Python rerun of `coherence test` on a table
    # with its *_incoherent.csv counted no reply set aside (n_set_aside 0 where the report
    # said 3), and so did the rerun of report(set_aside={...})
    monkeypatch.chdir(tmp_path)
    table.to_csv("answers.csv", index=False)
    pd.DataFrame({"model": ["m1", "m1", "m2"], "reason": ["bad_sum", "parse", "parse"]}
                 ).to_csv("answers_incoherent.csv", index=False)
    with contextlib.redirect_stderr(io.StringIO()):
        assert _cli(["test", "answers.csv", "--by", "model", "--tests", "calibration",
                     "--seed", "1", "--out", "first.html", "--csv", "first.csv", *FAST]) == 0
    first = pd.read_csv("first.csv").set_index("model")["n_set_aside"]
    assert first.to_dict() == {"m1": 2, "m2": 1}
    page = (tmp_path / "first.html").read_text()
    assert "Replies set aside</b> (bad_sum: 1; parse: 2)" in page
    _, code = _blocks(page)
    assert "set_aside=pd.read_csv('answers_incoherent.csv'" in code
    namespace: dict[str, object] = {}
    exec(compile(code, "rerun.py", "exec"), namespace)
    again = namespace["rep"].to_frame().set_index("model")["n_set_aside"]  # type: ignore[attr-defined]
    assert again.to_dict() == first.to_dict()
    # given as {reason: count}, the Python call spells it out
    rep = coherence.report(table[table["model"] == "m1"], by=(), tests=["calibration"],
                           set_aside={"bad_sum": 3}, n_resamples=19, progress=False, rng=0)
    _, code = _blocks(rep.to_html())
    assert "set_aside={'bad_sum': 3}" in code
    assert "Replace SET_ASIDE" not in rep.to_html()


@pytest.mark.requires("pgmpy")
def test_a_report_with_a_lie_table_reruns_from_python_only(tmp_path, monkeypatch):
    # lie= and lie_options= were left out of the rerun lines, which then reran every test
    # but the LIE check (a family of adjusted p-values one smaller) and printed no word
    import bayesnets

    monkeypatch.chdir(tmp_path)
    study = bayesnets.lie_study("asia", agent="weighted", n_contexts=30, rng=0)
    baseline = study.redraw(agent="rational", rng=1)
    data = coherence.simulate("rational", n_contexts=30, n_repetitions=2, rng=0).data
    rep = coherence.report(data, lie=study.data, lie_options={"baseline": baseline,
                                                               "n_resamples": 99},
                           tests=["ci", "lie"], n_resamples=49, progress=False, rng=5)
    page = rep.to_html()
    assert "To rerun from the command line" not in page
    assert "replace LIE and BASELINE by the table(s)" in page
    code = html_lib.unescape(page[page.index("To rerun from Python"):])
    code = code[code.index("<pre>") + 5:code.index("</pre>")]
    assert "lie=LIE" in code and "lie_options={'baseline': BASELINE, 'n_resamples': 99}" in code
    data.to_csv("TABLE.csv", index=False)
    namespace: dict[str, object] = {"LIE": study.data, "BASELINE": baseline}
    exec(compile(code, "rerun.py", "exec"), namespace)
    again = namespace["rep"].to_frame()  # type: ignore[attr-defined]
    np.testing.assert_array_equal(again["pvalue_adjusted"], rep.to_frame()["pvalue_adjusted"])
    assert "lie" in set(again["test"])


def test_python_rerun_reads_numeric_cell_labels_as_the_command_did(tmp_path, monkeypatch):
    # `coherence test` reads a cell column as the file writes it (text: "10" sorts before
    # "2"), the Python rerun read it as numbers (2 before 10): the cells drew each other's
    # streams and the rerun's p-values differed (ci on model 10: 0.057 against 0.08)
    monkeypatch.chdir(tmp_path)
    parts = [coherence.simulate(agent, n_contexts=25, n_repetitions=2, rng=i).data
             .assign(model=model) for i, (model, agent) in enumerate(
                 [(2, "rational"), (10, coherence.Agent.leaky(strength=0.9))])]
    pd.concat(parts, ignore_index=True).to_csv("answers.csv", index=False)
    pd.DataFrame({"model": [10, 10, 2], "reason": ["parse"] * 3}).to_csv(
        "answers_incoherent.csv", index=False)
    with contextlib.redirect_stderr(io.StringIO()):
        assert _cli(["test", "answers.csv", "--tests", "ci,leakage", "--seed", "11",
                     "--out", "first.html", "--csv", "first.csv", *FAST]) == 0
    first = pd.read_csv("first.csv", dtype={"model": str})
    _, code = _blocks((tmp_path / "first.html").read_text())
    namespace: dict[str, object] = {}
    exec(compile(code, "rerun.py", "exec"), namespace)
    again = namespace["rep"].to_frame()  # type: ignore[attr-defined]
    assert again["model"].tolist() == first["model"].tolist() == ["10"] * 2 + ["2"] * 2
    np.testing.assert_array_equal(again["pvalue"].to_numpy(), first["pvalue"].to_numpy())
    assert again["n_set_aside"].tolist() == first["n_set_aside"].tolist() == [2, 2, 1, 1]
