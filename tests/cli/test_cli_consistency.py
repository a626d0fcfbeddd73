"""``coherence consistency`` (issue 20): the consistency checkers from the command line,
in process."""

import json

import pandas as pd
import pytest

from coherence import consistency_check
from tests.cli.test_cli import one_line_error

NEG = [(0.3, 0.7), (0.4, 0.5), (0.9, 0.3), (0.2, 0.75)]
AND = pd.DataFrame({"P": [0.5, 0.6, 0.3], "Q": [0.4, 0.5, 0.3], "P_and_Q": [0.2, 0.65, 0.1]})


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    d = tmp_path_factory.mktemp("consistency")
    lines = [{"line": {"P": {"forecast": {"prob": p}}, "not_P": {"forecast": {"prob": q}}},
              "violation_data": {"default": {"violation": 0.1}}} for p, q in NEG]
    (d / "NegChecker.jsonl").write_text("\n".join(map(json.dumps, lines)) + "\n")
    AND.to_csv(d / "and.csv", index=False)
    (d / "bad.jsonl").write_text('{"line": {"P": 0.3}}\n')
    (d / "broken.jsonl").write_text("{not json\n")
    return d


def test_jsonl_and_table(run, files):
    out = run("consistency", str(files / "NegChecker.jsonl"), "--resamples", "50",
              "--csv", str(files / "out.csv"))
    assert out.returncode == 0, out.stderr
    assert max(map(len, out.stdout.splitlines())) <= 100
    assert "NegChecker.jsonl" in out.stdout and "negation" in out.stdout
    assert "definition paper" in out.stdout
    # four tuples: the output says the intervals are unreliable
    assert "fewer than 20 tuples (NegChecker.jsonl) are unreliable" in " ".join(
        out.stdout.split())
    table = pd.read_csv(files / "out.csv")
    expected = consistency_check(pd.DataFrame(NEG, columns=["P", "not_P"]), "negation",
                                 n_resamples=50, rng=0)
    assert table["arbitrage"].to_numpy() == pytest.approx(expected.table["arbitrage"])
    assert set(table["checker"]) == {"negation"}

    many = pd.DataFrame(NEG * 5, columns=["P", "not_P"])  # 20 tuples: no such sentence
    many.to_csv(files / "neg20.csv", index=False)
    out = run("consistency", str(files / "neg20.csv"), "--checker", "negation",
              "--resamples", "50")
    assert out.returncode == 0, out.stderr
    assert "unreliable" not in out.stdout

    out = run("consistency", str(files / "and.csv"), "--checker", "AndChecker",
              "--definition", "code", "--resamples", "50")
    assert out.returncode == 0, out.stderr
    assert "and.csv" in out.stdout and "definition code" in out.stdout


@pytest.mark.parametrize("args, needle", [
    (["and.csv"], "--checker is needed"),
    (["and.csv", "--checker", "foo"], "'checker'"),
    (["bad.jsonl", "--checker", "negation"], "lacks question"),
    (["broken.jsonl", "--checker", "negation"], "not valid JSON"),
    (["missing.jsonl"], "no such file"),
    (["NegChecker.jsonl", "--checker", "and"], "lacks question"),
])
def test_bad_input_exits_2(run, files, args, needle):
    out = run("consistency", *[str(files / a) if a.endswith((".csv", ".jsonl")) else a
                               for a in args])
    one_line_error(out)
    assert needle in out.stderr


def test_files_of_one_name_keep_their_folders(run, files):
    # one folder per forecaster, the same checker file in each: both rows read
    # 'NegChecker.jsonl' and could not be told apart
    other = files / "other"
    other.mkdir(exist_ok=True)
    (other / "NegChecker.jsonl").write_text((files / "NegChecker.jsonl").read_text())
    first, second = str(files / "NegChecker.jsonl"), str(other / "NegChecker.jsonl")
    out = run("consistency", first, second, "--resamples", "50",
              "--csv", str(files / "two.csv"))
    assert out.returncode == 0, out.stderr
    assert set(pd.read_csv(files / "two.csv")["file"]) == {first, second}
