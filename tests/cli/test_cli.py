"""The console script: end to end in subprocesses, and in this process (``main``) where a
command's start-up is not what a test checks."""

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

import coherence

ROOT = Path(__file__).resolve().parents[2]


def run(*args, cwd=None):
    env = {**os.environ, "PYTHONPATH": str(ROOT), "MPLBACKEND": "Agg"}
    return subprocess.run([sys.executable, "-m", "coherence_cli", *args], capture_output=True,
                          text=True, timeout=600, cwd=cwd, env=env)


def one_line_error(out, code=2):
    assert out.returncode == code, (out.returncode, out.stdout, out.stderr)
    assert "Traceback" not in out.stderr
    assert len(out.stderr.strip().splitlines()) == 1, out.stderr


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    path = tmp_path_factory.mktemp("cli") / "table.csv"
    a = coherence.simulate("rational", n_contexts=40, n_repetitions=3, rng=1).data
    b = coherence.simulate(coherence.Agent.leaky(strength=0.8), n_contexts=40,
                           n_repetitions=3, rng=2).data
    import pandas as pd

    pd.concat([a.assign(model="a"), b.assign(model="b")]).to_csv(path, index=False)
    return path


def test_version():
    out = run("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"coherence {coherence.__version__}"


def test_no_command_is_usage_error():
    out = run()
    assert out.returncode == 2 and "demo" in out.stdout


def _commands():
    import argparse

    from coherence_cli import _build_parser

    sub = next(a for a in _build_parser()._actions if isinstance(a, argparse._SubParsersAction))
    return dict(sub.choices)


@pytest.mark.parametrize("command", sorted(_commands()))
def test_help_of_every_command(command, capsys):
    out = main(capsys, command, "--help")
    assert out.returncode == 0 and "usage: coherence " + command in out.stdout


def test_the_docs_synopsis_lists_every_command_and_its_options():
    """docs/report.md's synopsis has a line for every command, and every option of a command
    is in its lines or among the common options the page lists below them."""
    import re

    page = (ROOT / "docs" / "report.md").read_text()
    synopsis = re.search(r"## The command line\n\n```text\n(.*?)```", page, re.S).group(1)
    common = re.search(r"Common options: (.*?)`--version`", page, re.S).group(1)
    for name, parser in _commands().items():
        lines = re.search(rf"^coherence {name}\b.*?(?=^coherence |\Z)", synopsis, re.S | re.M)
        assert lines, f"no synopsis of 'coherence {name}'"
        options = [o for a in parser._actions for o in a.option_strings if o.startswith("--")
                   and o != "--help" and o not in common]
        if name != "elicit":  # its model options are on docs/elicitation.md
            assert [o for o in options if o not in lines.group(0)] == [], name


def test_unknown_command(capsys):
    out = main(capsys, "frobnicate")
    assert out.returncode == 2 and "invalid choice" in out.stderr
    assert "Traceback" not in out.stderr


@pytest.mark.requires("pgmpy")
def test_demo_quick_writes_report(tmp_path):
    out = run("demo", "--quick", "--n-contexts", "40", "--resamples", "99", "--quiet", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    for agent in ("rational", "rational+noise", "leaky", "nonmonotone", "prompt_sensitive"):
        assert agent in out.stdout
    assert "Which agent fails which test" in out.stdout
    assert "Benjamini-Hochberg-adjusted" in out.stdout  # --quick's default adjustment
    fits_100_columns(out.stdout)
    html = (tmp_path / "coherence-report.html").read_text()
    assert html.startswith("<!DOCTYPE html>") and "Provenance and how to rerun" in html


@pytest.mark.parametrize(("adjust", "column"), [("none", "fails (p < 0.05)"),
                                                ("holm", "fails (adjusted p < 0.05)"),
                                                ("bh", "fails (adjusted p < 0.05)")])
def test_demo_verdicts_name_the_p_values_they_read(adjust, column):
    """Regression: with demo --adjust none the verdict column still said 'adjusted p'
    under a heading saying the p-values were unadjusted."""
    import pandas as pd

    from coherence_cli import _verdicts

    table = pd.DataFrame({"ci": [0.01, 0.2], "monotonicity": [0.3, 0.04]},
                         index=pd.Index(["leaky", "rational"], name="model"))
    rep = type("Rep", (), {"settings": {"adjust": adjust},
                           "summary_table": staticmethod(lambda: table)})()
    verdicts = _verdicts(rep)
    assert verdicts.columns.tolist() == [column]
    assert verdicts[column].tolist() == ["ci", "monotonicity"]


@pytest.mark.parametrize("args", [("--out", "{d}/r.csv"),
                                  ("--out", "{d}/r.html", "--table", "{d}/r.html"),
                                  ("--table", "{d}/t.parquet")])
def test_demo_refuses_a_table_it_would_lose(capsys, monkeypatch, tmp_path, args):
    """The demo writes its table as CSV, then the HTML report: --out r.csv wrote the report
    over the table the rerun line names, and --table t.parquet held CSV text."""
    import bayesnets

    def ran(*a, **k):
        raise AssertionError("the demo ran")

    monkeypatch.setattr(bayesnets, "run_demo", ran)
    out = main(capsys, "demo", "--quiet", *(a.format(d=tmp_path) for a in args))
    one_line_error(out)
    assert "--table" in out.stderr
    assert not list(tmp_path.iterdir())


def test_demo_bad_size(capsys):
    one_line_error(main(capsys, "demo", "--n-contexts", "0"))
    one_line_error(main(capsys, "demo", "--n-contexts", "many"))


def test_test_command(table, tmp_path):
    out_html = tmp_path / "r.html"
    out_csv = tmp_path / "r.csv"
    out = run("test", str(table), "--by", "model", "--resamples", "99",
              "--out", str(out_html), "--csv", str(out_csv), "--quiet")
    assert out.returncode == 0, out.stderr
    fits_100_columns(out.stdout)
    import pandas as pd

    frame = pd.read_csv(out_csv)
    assert set(frame["model"]) == {"a", "b"}
    assert {"ci", "leakage", "monotonicity"} <= set(frame["test"])
    assert out_html.is_file()


def main(capsys, *args):
    """The command in this process (no interpreter start-up): (exit code, stdout, stderr)."""
    from coherence_cli import main as cli_main

    try:
        code = cli_main([str(a) for a in args])
    except SystemExit as exc:  # argparse's own usage errors
        code = exc.code
    captured = capsys.readouterr()
    return subprocess.CompletedProcess(args, code, captured.out, captured.err)


def fits_100_columns(text):
    assert max(map(len, text.splitlines())) <= 100, text


@pytest.fixture(scope="module")
def own_names(tmp_path_factory):
    """A table in a user's own vocabulary: llm, buy/sell/hold, prompts plain/bayes."""
    import pandas as pd

    parts = [coherence.simulate(agent, n_contexts=30, n_repetitions=2,
                                prompts=("standard", "bayesian"), rng=i).data.assign(llm=name)
             for i, (agent, name) in enumerate((("rational", "model-one"),
                                                ("nonmonotone", "model-two")))]
    data = pd.concat(parts, ignore_index=True)
    data["action"] = data["action"].map({"yes": "buy", "no": "sell", "defer": "hold"})
    data["prompt"] = data["prompt"].map({"standard": "plain", "bayesian": "bayes"})
    path = tmp_path_factory.mktemp("own") / "answers.csv"
    data.rename(columns={"belief": "p_yes"}).to_csv(path, index=False)
    return path


def test_test_command_own_names(own_names, tmp_path, capsys):
    """--by before the file name does not swallow it; actions and the reference prompt
    are mapped; only the named tests run; the terminal output fits 100 columns."""
    out_csv = tmp_path / "r.csv"
    out = main(capsys, "test", "--by", "llm", own_names, "--belief", "p_yes",
              "--actions", "yes=buy,no=sell,defer=hold", "--reference-prompt", "plain",
              "--tests", "ci,monotonicity", "--tests", "prompt_consistency",
              "--resamples", "19", "--adjust", "bh",
              "--csv", str(out_csv), "--quiet")
    assert out.returncode == 0, out.stderr
    fits_100_columns(out.stdout)
    assert "Benjamini-Hochberg" in out.stdout
    import pandas as pd

    frame = pd.read_csv(out_csv)
    assert set(frame["llm"]) == {"model-one", "model-two"}
    assert set(frame["test"]) == {"ci", "monotonicity", "prompt_consistency"}
    assert (frame["error"].isna() | (frame["error"] == "")).all(), frame["error"]


def test_test_command_actions_map_the_menu_column(tmp_path, capsys):
    """--actions renames the offered actions of a menu column as it renames the chosen
    ones: the IIA test once refused every row ('yes not in hold|sell|buy', no p-value)."""
    import pandas as pd

    from benchmarks.iia_designs import Design
    from benchmarks.iia_designs import generate

    data = generate(Design(agent="odds", factor=3.0, n_contexts=60), 41).assign(outcome=0)
    ours = {"yes": "buy", "no": "sell", "defer": "hold"}
    theirs = data.assign(action=data["action"].map(ours), menu=data["menu"].map(
        lambda m: "|".join(ours[a] for a in m.split("|"))))
    plain, own = tmp_path / "plain.csv", tmp_path / "own.csv"
    data.to_csv(plain, index=False)
    theirs.to_csv(own, index=False)
    frames = []
    for path, extra in ((plain, ()), (own, ("--actions", "yes=buy,no=sell,defer=hold"))):
        out_csv = tmp_path / f"{path.stem}_r.csv"
        out = main(capsys, "test", str(path), "--tests", "iia", "--resamples", "19",
                   "--quiet", "--csv", str(out_csv), *extra)
        assert out.returncode == 0, out.stderr
        frames.append(pd.read_csv(out_csv))
    assert frames[1]["error"].isna().all(), frames[1]["error"].tolist()
    assert frames[1]["pvalue"].tolist() == frames[0]["pvalue"].tolist()
    assert frames[1]["statistic"].tolist() == frames[0]["statistic"].tolist()


def test_test_command_column_mistakes(own_names, tmp_path, capsys):
    out = main(capsys, "test", own_names, "--belief", "p_yes", "--by", "model")
    one_line_error(out)
    assert "--by names column 'model'" in out.stderr and "llm" in out.stderr
    out = main(capsys, "test", own_names, "--belief", "p_yes", "--by", "llm")
    one_line_error(out)
    assert "'standard'" in out.stderr and "--reference-prompt" in out.stderr
    out = main(capsys, "test", own_names, "--belief", "p_yes", "--reference-prompt", "plain",
              "--actions", "yes=buy,no=sell")
    one_line_error(out)
    assert "hold" in out.stderr
    one_line_error(main(capsys, "test", own_names, "--actions", "maybe=buy"))
    # buy/sell/hold without --actions: an error naming the labels and the option (the
    # monotonicity rows would otherwise be blank), unless no decision test is asked for
    out = main(capsys, "test", own_names, "--belief", "p_yes", "--reference-prompt", "plain")
    one_line_error(out)
    assert "buy, hold, sell" in out.stderr and "--actions" in out.stderr
    out = main(capsys, "test", own_names, "--belief", "p_yes", "--reference-prompt", "plain",
               "--tests", "calibration", "--resamples", "19", "--quiet", "--by", "llm")
    assert out.returncode == 0, out.stderr
    # without --by both models' contexts 0-29 pool into one cell, where a context holds two
    # outcomes: the calibration cell said so (it once read the first row's outcome); the
    # repeated (context, prompt, repetition) labels now stop the run at the door
    out = main(capsys, "test", own_names, "--belief", "p_yes", "--reference-prompt", "plain",
               "--tests", "calibration", "--resamples", "19", "--quiet")
    one_line_error(out)
    assert "Column 'repetition'" in out.stderr and "name their column in by" in out.stderr
    one_line_error(main(capsys, "test", own_names, "--tests", "ci,nope"))
    empty = tmp_path / "empty.csv"
    empty.write_text("belief,action,outcome,context\n")
    out = main(capsys, "test", empty)
    one_line_error(out)
    assert "has no rows" in out.stderr


def test_test_command_misspelt_optional_columns(own_names, capsys):
    # --prompt varaint once pooled both prompts with exit 0 (a false "leaks" verdict)
    for option in ("--prompt", "--repetition", "--truth"):
        out = main(capsys, "test", own_names, "--belief", "p_yes", "--by", "llm",
                   "--reference-prompt", "plain", "--actions", "yes=buy,no=sell,defer=hold",
                   option, "misspelt", "--tests", "calibration")
        one_line_error(out)
        assert f"{option} names column 'misspelt'" in out.stderr


def test_test_command_user_mistakes(table, tmp_path, capsys):
    one_line_error(main(capsys, "test", str(tmp_path / "missing.csv")))
    out = main(capsys, "test", str(table), "--belief", "prob")
    one_line_error(out)
    assert "--belief names column 'prob'" in out.stderr
    bad = tmp_path / "bad.parquet"
    bad.write_text("not parquet")
    one_line_error(main(capsys, "test", str(bad)))
    weird = tmp_path / "t.xlsx"
    weird.write_text("x")
    out = main(capsys, "test", str(weird))
    one_line_error(out)
    assert "unsupported file type .xlsx" in out.stderr
    broken = tmp_path / "broken.csv"
    broken.write_text("belief,action,outcome,context\n1.5,yes,1,0\n0.2,no,0,1\n")
    out = main(capsys, "test", str(broken))
    one_line_error(out)
    assert "must hold probabilities in [0, 1]" in out.stderr


def test_pairs_command_real_file(shared_data, tmp_path):
    path = shared_data / "conditional-pairs" / "gpt4o_skeptical.json"
    out = run("pairs", str(path), "--csv", str(tmp_path / "p.csv"))
    assert out.returncode == 0, out.stderr
    # a one-direction run: the blank Bayes columns are explained
    assert "blank where n_bayes is 0" in out.stdout
    import pandas as pd

    frame = pd.read_csv(tmp_path / "p.csv").set_index("category")
    assert frame.loc["strong", "mean_improvement"] == pytest.approx(-0.017, abs=5e-4)
    assert frame.loc["none", "win_rate"] == pytest.approx(1 / 15)


def test_pairs_command_mistakes(tmp_path, capsys):
    one_line_error(main(capsys, "pairs", str(tmp_path / "nope.json")))
    bad = tmp_path / "bad.json"
    bad.write_text("{not json")
    one_line_error(main(capsys, "pairs", str(bad)))
    wrong = tmp_path / "wrong.json"
    wrong.write_text(json.dumps({"results": [{"pair_id": 1}]}))
    one_line_error(main(capsys, "pairs", str(wrong)))


@pytest.mark.filterwarnings("ignore:forecast_scores:coherence.SmallSampleWarning")
def test_scores_command(tmp_path, capsys):
    import numpy as np
    import pandas as pd

    rng = np.random.default_rng(0)
    n = 40
    table = pd.DataFrame({"model": np.repeat(["org/m1", "m2"], n // 2),
                          "question": np.tile([f"q{i}" for i in range(n // 2)], 2),
                          "probability": rng.random(n),
                          "outcome": np.tile(rng.integers(0, 2, n // 2), 2),
                          "opened": np.tile(pd.date_range("2024-01-01", periods=n // 2,
                                                          freq="W").astype(str), 2)})
    path = tmp_path / "f.csv"
    table.to_csv(path, index=False)
    cutoffs = tmp_path / "c.json"
    cutoffs.write_text(json.dumps({"m1": "2024-03-01"}))
    out = main(capsys, "scores", str(path), "--cutoffs", str(cutoffs), "--csv",
               str(tmp_path / "s.csv"))
    assert out.returncode == 0, out.stderr
    assert "org/m1" in out.stdout
    fits_100_columns(out.stdout)
    # a month-only cutoff stands for the month's end, as the first of the next month
    frames = {}
    for cut in ("2024-02", "2024-03-01", "2024-02-01"):
        cutoffs.write_text(json.dumps({"m1": cut}))
        out = main(capsys, "scores", str(path), "--cutoffs", str(cutoffs), "--csv",
                   str(tmp_path / "s.csv"))
        assert out.returncode == 0, out.stderr
        got = pd.read_csv(tmp_path / "s.csv")
        frames[cut] = got.loc[got["filtered"] & (got["model"] == "org/m1"), "n_questions"]
    # (opened on Sundays from 2024-01-07: 8 of m1's 20 questions before March, 4 before
    # February)
    assert frames["2024-02"].tolist() == frames["2024-03-01"].tolist() == [12]
    assert frames["2024-02-01"].tolist() == [16]
    half = tmp_path / "half.csv"
    pd.DataFrame({"model": ["m"], "question": ["q"], "probability": [0.5],
                  "outcome": [1]}).to_csv(half, index=False)
    for convention, accuracy in (("paper", "1.0"), ("code", "0.5")):
        out = main(capsys, "scores", str(half), "--accuracy-convention", convention, "--csv",
                  str(tmp_path / "h.csv"))
        assert out.returncode == 0, out.stderr
        got = pd.read_csv(tmp_path / "h.csv")
        assert str(float(got.loc[got["model"] == "m", "accuracy"].iloc[0])) == accuracy
    renamed = tmp_path / "renamed.csv"
    table.rename(columns={"model": "llm", "question": "qid", "probability": "p",
                          "outcome": "resolved"}).to_csv(renamed, index=False)
    out = main(capsys, "scores", str(renamed), "--by", "llm", "--question", "qid",
               "--probability", "p", "--outcome", "resolved")
    assert out.returncode == 0, out.stderr
    assert "org/m1" in out.stdout
    out = main(capsys, "scores", str(renamed), "--by", "llm")
    one_line_error(out)
    assert "--question names column 'question'" in out.stderr
    one_line_error(main(capsys, "scores", str(path), "--cutoffs", str(tmp_path / "none.json")))
    # --cluster: the intervals resample clusters of related questions
    clustered = tmp_path / "clustered.csv"
    table.assign(topic=[f"t{int(q[1:]) % 5}" for q in table["question"]]).to_csv(clustered,
                                                                              index=False)
    out = main(capsys, "scores", str(clustered), "--cluster", "topic", "--csv",
               str(tmp_path / "k.csv"))
    assert out.returncode == 0, out.stderr
    plain = pd.read_csv(tmp_path / "s.csv").query("not filtered")
    by_topic = pd.read_csv(tmp_path / "k.csv")
    assert list(by_topic["brier"]) == pytest.approx(list(plain["brier"]))
    assert list(by_topic["brier_ci_low"]) != pytest.approx(list(plain["brier_ci_low"]))
    out = main(capsys, "scores", str(path), "--cluster", "topic")
    one_line_error(out)
    assert "--cluster names column 'topic'" in out.stderr
    cutoffs.write_text("[1, 2]")
    one_line_error(main(capsys, "scores", str(path), "--cutoffs", str(cutoffs)))


@pytest.mark.requires("pgmpy")
def test_elicit_simulated_then_test(tmp_path, capsys):
    out = main(capsys, "elicit", "--simulated", "rational", "--n-contexts", "20",
               "--repetitions", "2", "--cache", str(tmp_path / "c.sqlite"), "--out",
               str(tmp_path / "e.csv"))
    assert out.returncode == 0, out.stderr
    import pandas as pd

    data = pd.read_csv(tmp_path / "e.csv")
    assert {"context", "belief", "action", "outcome", "truth"} <= set(data.columns)
    assert len(data) == 40


def test_test_command_reads_parquet(table, tmp_path, capsys):
    pytest.importorskip("pyarrow")
    import pandas as pd

    path = tmp_path / "t.parquet"
    pd.read_csv(table).to_parquet(path)
    # unadjusted: a floor p-value is resolved with 1,001 draws, not the family size x 1,000
    out = main(capsys, "test", str(path), "--by", "model", "--resamples", "49",
              "--adjust", "none", "--quiet")
    assert out.returncode == 0, out.stderr
    assert "leakage" in out.stdout


def test_test_command_header_only_csv_fails(tmp_path, capsys):
    # issue 17: an empty table used to succeed with an empty report and exit 0
    empty = tmp_path / "empty.csv"
    empty.write_text("context,belief,action,outcome\n")
    out = main(capsys, "test", str(empty), "--csv", str(tmp_path / "out.csv"))
    one_line_error(out)
    assert "has no rows" in out.stderr or "at least one row" in out.stderr
    assert not (tmp_path / "out.csv").exists()


def test_backend_option_reaches_the_report(tmp_path, capsys):
    # issue 18/19: `--backend` is passed to report(backend=...), which records what ran
    data = coherence.simulate("rational", n_contexts=30, n_repetitions=2, rng=0).data
    path = tmp_path / "study.csv"
    data.to_csv(path, index=False)
    out = main(capsys, "test", str(path), "--tests", "ci", "--resamples", "19",
              "--jobs", "2", "--backend", "threading", "--csv", str(tmp_path / "r.csv"),
              "--quiet")
    assert out.returncode == 0, out.stderr
    bad = main(capsys, "test", str(path), "--tests", "ci", "--backend", "no-such-backend",
               "--quiet")
    assert bad.returncode != 0
    assert "backend" in bad.stderr


def test_permutations_still_works_with_a_note(capsys, table):
    out = main(capsys, "test", table, "--by", "model", "--tests", "ci", "--permutations", "19",
               "--quiet")
    assert out.returncode == 0, out.stderr
    assert "--permutations is deprecated" in out.stderr and "--resamples" in out.stderr
    assert "DeprecationWarning" not in out.stderr


def test_demo_verdicts_tell_apart_cells_whose_joined_labels_collide():
    """Regression: the verdicts named a cell by its labels joined with ", ", so the cells
    ("a, b", "c") and ("a", "b, c") were both "a, b, c", and the ground truth of one was
    looked up for both. They are named and keyed as the report's ground truth is."""
    import pandas as pd

    from coherence_cli import _verdicts

    index = pd.MultiIndex.from_tuples([("a, b", "c"), ("a", "b, c")], names=["m", "p"])
    table = pd.DataFrame({"ci": [0.01, 0.2]}, index=index)
    rep = type("Rep", (), {"settings": {"adjust": "none"},
                           "summary_table": staticmethod(lambda: table)})()
    truth = pd.DataFrame({"cmi_exact": [0.0, 0.5], "nonmonotone_pairs": ["-", "-"],
                          "max_prompt_shift": [0.0, 0.0]},
                         index=pd.MultiIndex.from_tuples([("a", "b, c"), ("a, b", "c")],
                                                         names=["m", "p"]))
    verdicts = _verdicts(rep, truth)
    assert verdicts.index.tolist() == ["'a, b', c", "a, 'b, c'"]
    assert verdicts["fails (p < 0.05)"].tolist() == ["ci", "-"]
    assert verdicts["violates by design"].tolist() == ["ci, ci_calibrated, leakage", "-"]
