"""Files and options a researcher gets wrong, each answered before anything is computed
with one line that names the file, the column or the key (``main`` in this process)."""

from __future__ import annotations

import contextlib
import io
import sys
from pathlib import Path

import pandas as pd
import pytest

import coherence
import elicitation
from coherence._text import text_table
from coherence_cli import main
from coherence_cli._common import UsageError
from coherence_cli._common import read_table


def _main(*argv: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(argv))
    return code, out.getvalue(), err.getvalue()


def test_only_blank_na_and_nan_cells_are_missing(tmp_path):
    """A model called None and an action N/A stay text (pandas reads a dozen words as
    missing); blank, NA and nan are missing."""
    path = tmp_path / "t.csv"
    path.write_text("model,action,p\nNone,N/A,0.5\nnull,yes,NA\nx,no,\ny,no,nan\n")
    frame = read_table(str(path))
    assert frame["model"].tolist() == ["None", "null", "x", "y"]
    assert frame["action"].tolist() == ["N/A", "yes", "no", "no"]
    assert frame["p"].isna().tolist() == [False, True, True, True]


@pytest.mark.parametrize(("text", "suffix", "match"), [
    ("a,b,a\n1,2,3\n", ".csv", "two or more columns named 'a'"),
    ("a;b;c\n1;2;3\n", ".csv", "separated by semicolons"),
    ("a\tb\n1\t2\n", ".txt", "separated by tabs.*tsv"),
])
def test_delimited_files_that_would_be_misread_are_refused(tmp_path, text, suffix, match):
    path = tmp_path / f"t{suffix}"
    path.write_text(text)
    with pytest.raises(UsageError, match=match):
        read_table(str(path))


@pytest.mark.parametrize(("text", "match"), [
    ("model,q,p\nm,1,0.5,9\nn,2,0.3\n", r"header names 3 columns, and line 2 \(4 values\)"),
    ("model,q,p\nm,1,0.5\nn,2\n", r"line 3 \(2 values\) holds another number"),
])
def test_a_line_of_more_or_fewer_values_than_the_header_is_refused(tmp_path, text, match):
    """A line with one value too many made pandas read the first column as the row labels
    and every other column one to the left (model 1, q 0.5, p 9); one cut short was read
    with its last cells missing."""
    path = tmp_path / "t.csv"
    path.write_text(text)
    with pytest.raises(UsageError, match=match):
        read_table(str(path))


def test_a_trailing_separator_on_every_line_is_no_value(tmp_path):
    """A separator closing every line (some exports write one) made pandas read the first
    column as the row labels: scores refused the file for a blank outcome on every row."""
    path = tmp_path / "t.csv"
    path.write_text("model,question,probability,outcome\n"
                    + "".join(f"m,q{i},0.{i + 1},{i % 2},\n" for i in range(6)))
    frame = read_table(str(path))
    assert frame.columns.tolist() == ["model", "question", "probability", "outcome"]
    assert frame["question"].tolist() == [f"q{i}" for i in range(6)]
    code, out, err = _main("scores", str(path))
    assert code == 0, err
    assert "n_obs               6" in out


def test_a_parquet_file_keeps_its_named_index_as_a_column(tmp_path):
    """A table saved with ``set_index("model").to_parquet`` came back with the models as
    row labels, not a column: ``coherence test`` pooled both models into one cell (ci on
    60 rows, "all") with no word but the note that the file has no model column."""
    pytest.importorskip("pyarrow")
    parts = [coherence.simulate(agent, n_contexts=30, n_repetitions=1, rng=seed).data
             .drop(columns=["repetition", "prompt"]).assign(model=agent)
             for seed, agent in enumerate(("rational", "leaky"))]
    path = tmp_path / "t.parquet"
    pd.concat(parts, ignore_index=True).set_index("model").to_parquet(path)
    assert read_table(str(path)).columns[0] == "model"
    code, _, err = _main("test", str(path), "--tests", "ci", "--resamples", "19", "--quiet",
                         "--csv", str(tmp_path / "r.csv"))
    assert code == 0, err
    result = pd.read_csv(tmp_path / "r.csv")
    assert result["model"].tolist() == ["leaky", "rational"]
    assert result["n_obs"].tolist() == [30, 30]
    pd.DataFrame({"model": [1]}, index=pd.Index(["x"], name="model")).to_parquet(path)
    with pytest.raises(UsageError, match="an index and a column both named 'model'"):
        read_table(str(path))


def test_a_json_file_with_a_byte_order_mark_reads(tmp_path):
    path = tmp_path / "t.json"
    path.write_bytes(b'\xef\xbb\xbf[{"a": 1, "b": "x"}]')
    assert read_table(str(path)).to_dict("records") == [{"a": 1, "b": "x"}]


def test_a_json_file_keeps_its_text_ids(tmp_path):
    """Ids written as text in a JSON file stay text: pandas read "01" and "1" (and the
    models "1" and "1.0") as one number, pooling two contexts' rows without a word."""
    path = tmp_path / "t.json"
    path.write_text('[{"context": "01", "model": "1", "belief": 0.25, "n": 1},'
                    ' {"context": "1", "model": "1.0", "belief": 1, "n": 2}]')
    frame = read_table(str(path))
    assert frame["context"].tolist() == ["01", "1"]
    assert frame["model"].tolist() == ["1", "1.0"]
    assert frame["belief"].tolist() == [0.25, 1.0] and frame["n"].tolist() == [1, 2]
    data = coherence.simulate("rational", n_contexts=30, n_repetitions=1, rng=1).data
    data = data.drop(columns=["prompt", "repetition"]).astype({"action": str})
    text_ids = pd.concat([data.assign(context=data["context"].astype(str)),
                          data.assign(context="0" + data["context"].astype(str))],
                         ignore_index=True)
    text_ids.to_json(tmp_path / "ids.json", orient="records")
    code, _, err = _main("test", str(tmp_path / "ids.json"), "--tests", "calibration",
                           "--resamples", "19", "--quiet", "--csv", str(tmp_path / "r.csv"))
    assert code == 0, err
    assert pd.read_csv(tmp_path / "r.csv")["n_obs"].tolist() == [60]  # 30 before


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    path = tmp_path_factory.mktemp("inputs") / "table.csv"
    data = coherence.simulate("rational", n_contexts=30, n_repetitions=2, rng=1).data
    data.assign(model="a").to_csv(path, index=False)
    return path


def test_a_blank_cell_label_is_refused(table, tmp_path):
    frame = pd.read_csv(table)
    frame.loc[[3, 7], "model"] = None
    path = tmp_path / "blank.csv"
    frame.to_csv(path, index=False)
    code, _, err = _main("test", str(path), "--tests", "ci", "--resamples", "19")
    assert code == 2 and "cell column 'model'" in err and "rows 3, 7" in err


def test_requested_tests_that_apply_nowhere_fail_with_a_note(table):
    code, _, err = _main("test", str(table), "--tests", "ci_evidence,lie",
                         "--resamples", "19", "--quiet")
    assert code == 1 and "ci_evidence, lie did not run" in err
    # one that runs and one that does not apply: a note, and the run stands
    code, _, err = _main("test", str(table), "--tests", "ci,lie", "--resamples", "19",
                         "--quiet")
    assert code == 0 and "lie did not run" in err


def test_a_failed_test_is_named_whatever_the_cell_column_is_called(table, tmp_path):
    """A cell column that is no Python name ('llm-name') crashed the command when a test
    failed (AttributeError, after the tables, before --csv was written)."""
    frame = pd.read_csv(table).rename(columns={"model": "llm-name"}).assign(menu="yes|no")
    path = tmp_path / "hyphen.csv"
    frame.to_csv(path, index=False)
    code, out, err = _main("test", str(path), "--by", "llm-name", "--tests", "iia,ci",
                           "--resamples", "19", "--quiet", "--csv", str(tmp_path / "r.csv"))
    assert code == 1 and "AttributeError" not in err, err
    assert "iia failed on a: ValueError" in out and (tmp_path / "r.csv").is_file()


def test_a_set_aside_file_that_cannot_be_counted_is_named(table, tmp_path):
    """A <table>_incoherent.csv without the cells' column was skipped without a word (every
    cell's n_set_aside 0, as if no reply had been set aside)."""
    path = tmp_path / "e.csv"
    pd.read_csv(table).to_csv(path, index=False)
    pd.DataFrame({"reason": ["bad_sum"]}).to_csv(tmp_path / "e_incoherent.csv", index=False)
    code, _, err = _main("test", str(path), "--by", "model", "--tests", "calibration",
                         "--resamples", "19", "--quiet")
    assert code == 0 and "e_incoherent.csv are not counted: it has no column 'model'" in err


def test_plan_refuses_a_pilot_of_several_models(table, tmp_path):
    frame = pd.read_csv(table)
    frame.loc[frame.index[::2], "model"] = "b"
    path = tmp_path / "two.csv"
    frame.to_csv(path, index=False)
    code, _, err = _main("plan", str(path), "--test", "ci_test", "--contexts", "20",
                         "--repetitions", "2", "--sims", "2")
    assert code == 2 and "2 values of 'model' (a, b)" in err


def test_plan_refuses_a_pilot_whose_ids_read_as_one_number(table, tmp_path):
    """Contexts written "7" and "07" read as one number: the pilot's 30 contexts were
    planned as 15, each two contexts' rows pooled, without a word."""
    frame = pd.read_csv(table)
    ids = frame["context"].map(lambda c: f"{c % 15}" if c < 15 else f"0{c % 15}")
    path = tmp_path / "ids.csv"
    frame.assign(context=ids).to_csv(path, index=False)
    code, _, err = _main("plan", str(path), "--test", "ci_test", "--contexts", "20",
                         "--repetitions", "2", "--sims", "2", "--quiet")
    assert code == 2 and "column 'context' spells one id two ways" in err, err


def test_plan_reads_a_pairs_pilot_as_coherence_pairs_does():
    """The field's JSON result file: `coherence pairs` read it, `coherence plan` refused it
    ("cannot read ...: Mixing dicts with non-Series"). The power is plan()'s on
    read_pairs of the file."""
    path = str(Path(__file__).resolve().parents[1] / "data" / "conditional-pairs"
               / "gpt4o_skeptical.json")
    code, out, err = _main("plan", path, "--test", "conditional_forecasting", "--contexts",
                           "100", "--sims", "20", "--seed", "0", "--quiet")
    assert code == 0, err
    ref = coherence.plan(coherence.read_pairs(path), test="conditional_forecasting",
                         n_contexts=[100], n_sims=20, rng=0, progress=False)
    shown = out.splitlines()[2].split()
    assert shown[:5] == ["100", "1", str(ref.table["n_prompts"][0]),
                         str(ref.table["n_calls"][0]), f"{ref.table['power'][0]:.4g}"]


@pytest.mark.parametrize("option", ["--out", "--raw-out"])
def test_elicit_writes_csv_only_and_says_so_before_any_call(tmp_path, option):
    code, _, err = _main("elicit", "--simulated", "rational", "--n-contexts", "2",
                         "--cache", str(tmp_path / "c.sqlite"), option,
                         str(tmp_path / "x.parquet"))
    assert code == 2 and f"{option} " in err and "name the file .csv" in err
    assert not (tmp_path / "c.sqlite").exists() or "calls" not in err


@pytest.mark.parametrize(("section", "key", "value", "match"), [
    ("tests", "tests", '["ci", "monotonicty"]', "tests.tests must be 'all' or a list"),
    ("tests", "tests", "[]", "tests.tests must be 'all' or a list"),
    ("tests", "adjust", '"bonferroni"', "tests.adjust must be one of"),
    ("tests", "n_permutations", "-5", "tests.n_permutations must be a positive int"),
    ("tests", "engine", '"xgb"', "tests.engine must be one of"),
    ("design", "network", '"chld"', "design.network must be one of"),
    ("design", "prompts", '["standrd"]', "design.prompts must be one of"),
    ("design", "decision", '"decide"', "design.decision must be one of"),
])
def test_a_decision_study_file_is_checked_before_any_call(tmp_path, section, key, value,
                                                          match):
    cfg = tmp_path / "s.toml"
    cfg.write_text(f'out = "{tmp_path / "out"}"\n[model]\nsimulated = "rational"\n'
                   f"[{section}]\n{key} = {value}\n")
    with pytest.raises(ValueError, match=match):
        elicitation.load_study(str(cfg))


@pytest.mark.parametrize(("section", "key", "value", "match"), [
    ("tests", "test", '"wilcoxon"', "tests.test must be one of"),
    ("tests", "ci_method", '"percentile"', "tests.ci_method must be one of"),
    ("design", "variants", '["sceptical"]', "design.variants must be one of"),
])
def test_a_pairs_study_file_is_checked_before_any_call(tmp_path, section, key, value, match):
    cfg = tmp_path / "s.toml"
    cfg.write_text(f'kind = "pairs"\nout = "{tmp_path / "out"}"\n[model]\n'
                   f'simulated = "rational"\n[{section}]\n{key} = {value}\n')
    with pytest.raises(ValueError, match=match):
        elicitation.load_study(str(cfg))


def test_long_labels_are_cut_in_the_middle_and_kept_apart():
    base = "openrouter/meta-llama/llama-3.1-405b-instruct-temperature-"
    frame = pd.DataFrame({"model": [base + "0.0", base + "1.0"], "p": [0.1, 0.2]})
    lines = text_table(frame, width=60).splitlines()[1:]
    assert lines[0].split()[0].endswith("0.0") and lines[1].split()[0].endswith("1.0")
    assert "..." in lines[0] and len(lines[0].split()[0]) == 30
    # labels that would read alike once cut stay whole
    same = pd.DataFrame({"model": ["a" * 40 + "x" + "b" * 40, "a" * 40 + "y" + "b" * 40]})
    assert text_table(same, width=60).splitlines()[1] == same["model"][0]


def test_an_id_spelt_two_ways_is_refused_not_pooled(table, tmp_path):
    """Contexts ``01`` and ``1`` (a zero-padded id beside a plain one) read as one number:
    their rows were pooled into one context without a word."""
    lines = table.read_text().splitlines()
    column = lines[0].split(",").index("context")
    cells = lines[5].split(",")
    cells[column] = "0" + cells[column]
    lines[5] = ",".join(cells)
    path = tmp_path / "padded.csv"
    path.write_text("\n".join(lines) + "\n")
    code, _, err = _main("test", str(path), "--tests", "ci", "--resamples", "19")
    assert code == 2 and "column 'context' spells one id two ways" in err, err
    # the same file with the id written one way runs
    code, _, err = _main("test", str(table), "--tests", "ci", "--resamples", "19", "--quiet")
    assert code == 0, err


def test_scores_refuse_a_question_id_spelt_two_ways(tmp_path):
    path = tmp_path / "f.csv"
    path.write_text("model,question,probability,outcome\n"
                    "a,1,0.6,1\na,01,0.7,1\na,2,0.2,0\nb,1,0.5,1\nb,2,0.4,0\n")
    code, _, err = _main("scores", str(path))
    assert code == 2 and "column 'question' spells one id two ways ('1' and '01')" in err, err
    assert "rows [0, 1, 3]" in err


def test_scores_refuse_a_set_id_spelt_two_ways(tmp_path):
    """Regression: the --set column of --decomposition --checker was not checked: sets '01'
    and '1' read as one set, refused with an error about the role column (or, with one
    question each, joined into one set without a word)."""
    path = tmp_path / "f.csv"
    path.write_text("model,question,probability,outcome,set,role\n"
                    "a,q1,0.6,1,01,P\na,n1,0.3,0,01,not_P\n"
                    "a,q2,0.2,0,1,P\na,n2,0.7,1,1,not_P\n"
                    "a,q3,0.5,1,3,P\na,n3,0.6,0,3,not_P\n")
    code, _, err = _main("scores", str(path), "--decomposition", "--checker", "negation",
                         "--resamples", "19")
    assert code == 2 and "column 'set' spells one id two ways ('01' and '1')" in err, err
    assert "rows [0, 1, 2, 3]" in err
    path.write_text("model,question,probability,outcome,set,role\n"   # the silent case
                    "a,q1,0.6,1,01,P\na,n2,0.7,0,1,not_P\na,q3,0.5,1,3,P\na,n3,0.6,0,3,not_P\n")
    code, out, err = _main("scores", str(path), "--decomposition", "--checker", "negation",
                           "--resamples", "19")
    assert code == 2 and "column 'set' spells one id two ways" in err and out == "", err


class _ClosingReader(io.StringIO):
    """Standard output whose reader goes away after the first lines (``| head``)."""

    def write(self, text):
        if "\n" in self.getvalue():
            raise BrokenPipeError(32, "Broken pipe")
        return super().write(text)


def test_a_reader_closing_the_pipe_leaves_the_files_written_and_the_exit_code(
        tmp_path, monkeypatch):
    """Regression: `coherence consistency ... --csv t.csv | head -1` failed with exit 2 (a
    usage error) on the closed pipe, and t.csv was never written."""
    table = tmp_path / "neg.csv"
    table.write_text("P,not_P\n0.3,0.6\n0.5,0.5\n0.2,0.9\n0.7,0.2\n")
    out = _ClosingReader()
    monkeypatch.setattr("sys.stdout", out)
    code = main(["consistency", str(table), "--checker", "negation", "--resamples", "50",
                 "--csv", str(tmp_path / "t.csv")])
    assert code == 0
    assert len(pd.read_csv(tmp_path / "t.csv")) == 4
    assert sys.stdout is out   # given back as it was
    # the table reached the reader; the note printed after it was dropped, not an error
    assert out.getvalue().startswith("file ") and "bootstrap-t" not in out.getvalue()


def test_cell_names_are_kept_as_written(tmp_path):
    """Models named '1.10' and '1.2' were read as the numbers 1.1 and 1.2, and the
    summary and --csv named the model '1.1'; a set-aside file was read with pandas'
    defaults, so its model 'None' was missing and its replies counted in no cell."""
    data = coherence.simulate("rational", n_contexts=30, n_repetitions=1, rng=1).data
    data = data.drop(columns=["prompt", "repetition"])
    frame = pd.concat([data.assign(model="1.10"), data.assign(model="1.2")])
    frame.to_csv(tmp_path / "v.csv", index=False)
    code, out, err = _main("test", str(tmp_path / "v.csv"), "--tests", "calibration",
                           "--resamples", "19", "--quiet", "--csv", str(tmp_path / "r.csv"))
    assert code == 0, err
    assert pd.read_csv(tmp_path / "r.csv", dtype={"model": str})["model"].tolist() == [
        "1.10", "1.2"]
    assert "1.10" in out
    data.assign(model="None").to_csv(tmp_path / "n.csv", index=False)
    pd.DataFrame({"model": ["None"] * 2, "reason": ["bad_sum"] * 2}).to_csv(
        tmp_path / "n_incoherent.csv", index=False)
    code, _, err = _main("test", str(tmp_path / "n.csv"), "--tests", "calibration",
                         "--resamples", "19", "--quiet", "--out", str(tmp_path / "n.html"))
    assert code == 0 and "name no cell" not in err, err
