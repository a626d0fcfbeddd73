"""``coherence pairs`` on the field's file layouts (issue 15), in process (test_cli.py runs
the command in a subprocess; here the interpreter start-up would dominate)."""

import json

import pandas as pd
import pytest

from tests.cli.test_cli import one_line_error

META = {"run_at": "2026-01-07T12:26:42", "model": "m", "thinking": False,
        "prompt_style": "skeptical", "num_pairs": 7, "num_successful": 6}


def _records(resolved: bool, n: int = 6):
    out = []
    for i in range(n):
        rec = {"pair_id": f"p{i}", "category": ("strong", "none")[i % 2], "p_a": 0.3,
               "p_a_given_b1": 0.4 + 0.05 * i, "p_a_given_b0": 0.2}
        if resolved:
            rec.update(resolution_a=float(i % 3 == 0), resolution_b=float(i % 2 == 0))
        else:
            rec.update(p_b=0.5, p_b_given_a1=0.6, p_b_given_a0=0.4)
        out.append(rec)
    return out


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("pairs")
    one = [*_records(True), {"pair_id": "p9", "error": "Failed to elicit probabilities"}]
    (d / "one.json").write_text(json.dumps({"results": one, "metadata": META}))
    (d / "think.json").write_text(json.dumps(
        {"results": _records(True), "metadata": {**META, "thinking": True}}))
    (d / "bayes.json").write_text(json.dumps(
        {"results": _records(False), "metadata": {"model": "m", "thinking": False}}))
    return d


def test_runs_failed_records_and_a_bayes_run(files, tmp_path, run):
    out = run("pairs", str(files / "one.json"), str(files / "think.json"),
              str(files / "bayes.json"), "--resamples", "99", "--csv", str(tmp_path / "t.csv"))
    assert out.returncode == 0, out.stderr
    assert out.stderr.strip() == ("coherence pairs: warning: conditional_forecasting: 1 failed "
                                  "record(s) skipped (column 'error' is set: 'Failed to elicit "
                                  "probabilities'): 'p9'; they are counted in the table's "
                                  "'n_failed' column.")
    assert "lotp_error_b_mean" in out.stdout and "NaN where noted: no resolutions" in out.stdout
    table = pd.read_csv(tmp_path / "t.csv")
    assert table["run"].unique().tolist() == ["m (thinking=False)",
                                              "m (thinking=False, prompt_style=skeptical)",
                                              "m (thinking=True, prompt_style=skeptical)"]
    assert table["n_failed"].sum() == 1 and table["n"].sum() == 18
    assert table.loc[table["run"] == "m (thinking=False)", "mean_improvement"].isna().all()
    scored = (table["run"] != "m (thinking=False)") & (table["n"] > 0)
    assert table.loc[scored, "mean_improvement"].notna().all() and scored.sum() == 4
    # the failed record has no category: a row of its own, with n = 0
    assert table.loc[table["n"] == 0, "category"].isna().all()


def test_resolutions_pool_and_duplicates(files, tmp_path, run):
    out = run("pairs", str(files / "bayes.json"), "--resolutions", str(files / "one.json"),
              "--test", "t", "--alternative", "less", "--ci-method", "normal",
              "--csv", str(tmp_path / "j.csv"))
    assert out.returncode == 0, out.stderr
    table = pd.read_csv(tmp_path / "j.csv")
    assert table["resolved"].all() and table["n_bayes"].tolist() == [3, 3]
    assert "one-sample t-test (less); normal interval" in out.stdout
    assert "blank where n_bayes is 0" not in out.stdout  # every cell has its Bayes pairs
    # the same file twice is refused, not pooled into half the p-value
    err = run("pairs", str(files / "one.json"), str(files / "one.json"))
    one_line_error(err)
    assert "appear more than once in one run" in err.stderr
    err = run("pairs", str(files / "one.json"), str(files / "think.json"), "--pool")
    one_line_error(err)
    assert "appear more than once in one pooled cell" in err.stderr


def test_a_by_column_is_named_as_grouped(tmp_path, run):
    """Regression: with --by topic the groups were printed and written under 'category',
    next to nothing saying they were the topics (the file's categories are other values)."""
    rows = pd.DataFrame(_records(True)).rename(columns={"pair_id": "pair",
                                                        "resolution_a": "a_outcome",
                                                        "resolution_b": "b_outcome"})
    rows["topic"] = ["econ", "econ", "econ", "sport", "sport", "sport"]
    rows.to_csv(tmp_path / "p.csv", index=False)
    out = run("pairs", str(tmp_path / "p.csv"), "--by", "topic", "--resamples", "99",
              "--csv", str(tmp_path / "t.csv"))
    assert out.returncode == 0, out.stderr
    header = out.stdout.splitlines()[0].split()
    assert "topic" in header and "category" not in header
    table = pd.read_csv(tmp_path / "t.csv")
    assert table["topic"].tolist() == ["econ", "sport"] and "category" not in table
    assert table["n"].tolist() == [3, 3]
    out = run("pairs", str(tmp_path / "p.csv"), "--resamples", "99",
              "--csv", str(tmp_path / "c.csv"))
    assert out.returncode == 0 and "category" in out.stdout.splitlines()[0].split()
    assert sorted(pd.read_csv(tmp_path / "c.csv")["category"]) == ["none", "strong"]


def test_resolutions_no_run_takes_are_refused(files, run):
    """Regression: --resolutions with only resolved runs was read and dropped without a
    word (the output the same as without it)."""
    out = run("pairs", str(files / "one.json"), "--resolutions", str(files / "think.json"))
    one_line_error(out)
    assert "every results file given has its own; drop --resolutions" in out.stderr
    assert out.stdout == ""
    out = run("pairs", str(files / "one.json"), str(files / "bayes.json"), "--resolutions",
              str(files / "think.json"), "--resamples", "99")
    assert out.returncode == 0, out.stderr   # the Bayes run takes them
