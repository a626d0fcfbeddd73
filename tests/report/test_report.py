"""coherence.report: every applicable test per cell, numbers equal to the test functions'."""

import json
import re
import shutil
import subprocess
import warnings

import numpy as np
import pandas as pd
import pytest

import coherence
from coherence import RESULT_COLUMNS
from coherence import TEST_NAMES
from coherence import report
from coherence._report._registry import REGISTRY

FAST = {"n_resamples": 99}
CHROMIUM = next((shutil.which(n) for n in ("chromium", "chromium-browser", "google-chrome")
                 if shutil.which(n)), None)
PRINT_WIDTH_PX = 688

PROBE = """<script>
(function () {
  var w = document.documentElement.clientWidth, bad = [];
  document.querySelectorAll('body *').forEach(function (el) {
    var r = el.getBoundingClientRect();
    if (r.width > 0 && r.right > w + 0.5) bad.push(el.tagName + ' ' + Math.round(r.right));
  });
  var out = document.createElement('pre');
  out.id = 'overflow-probe';
  out.textContent = JSON.stringify({width: w, scroll: document.documentElement.scrollWidth,
                                    bad: bad.slice(0, 10)});
  document.body.appendChild(out);
})();
</script>"""


@pytest.fixture(scope="module")
def two_models():
    a = coherence.simulate("rational", n_contexts=60, n_repetitions=3,
                           prompts=coherence.PROMPTS, rng=1).data.assign(model="a")
    b = coherence.simulate(coherence.Agent.leaky(strength=0.8), n_contexts=60, n_repetitions=3,
                           prompts=coherence.PROMPTS, rng=2).data.assign(model="b")
    return pd.concat([a, b], ignore_index=True)


@pytest.fixture(scope="module")
def rep(two_models):
    return report(two_models, by=("model", "dataset"), progress=False, rng=7, **FAST)


def test_cells_and_schema(rep):
    assert rep.by == ("model",)  # 'dataset' is absent and ignored
    assert [dict(c.key) for c in rep.cells] == [{"model": "a"}, {"model": "b"}]
    frame = rep.to_frame()
    assert list(frame.columns) == ["model", *RESULT_COLUMNS, "pvalue_adjusted", "error",
                                   "warnings", "degenerate_elicitation", "n_set_aside"]
    assert not frame["degenerate_elicitation"].any()  # simulated agents state real beliefs
    # without evidence columns the evidence variants do not apply, nor IIA without menus
    assert set(frame["test"]) == set(TEST_NAMES) - {"ci_evidence", "leakage_evidence", "lie",
                                                    "iia"}
    assert "calibration" in set(frame["test"])
    assert (frame["error"] == "").all()
    descriptive = frame["test"].isin(["calibration", "calibration_error", "smooth_ece"])
    assert frame.loc[~descriptive, "pvalue"].between(0, 1).all()
    assert frame.loc[descriptive, "pvalue"].isna().all()  # descriptive: no p-value


# the fixture's prompts state one belief a context (no noise): prompt_consistency says so,
# and the report keeps that as a note of the cell
@pytest.mark.filterwarnings(
    "ignore:prompt_consistency.*do not vary:coherence.DegenerateDataWarning")
def test_numbers_equal_the_test_functions(rep, two_models):
    """Each cell and test gets its own spawned stream: rerun one by hand and compare."""
    cell_streams = np.random.default_rng(7).spawn(2)
    part = two_models[two_models["model"] == "b"]
    standard = part[part["prompt"] == "standard"]
    streams = dict(zip([s.name for s in REGISTRY], cell_streams[1].spawn(len(REGISTRY)),
                       strict=True))
    direct = {
        "ci": coherence.ci_test(standard, n_resamples=99, rng=streams["ci"]),
        "leakage": coherence.leakage_test(standard, engine="logistic", n_resamples=99,
                                          n_permutations=99, rng=streams["leakage"]),
        "monotonicity": coherence.monotonicity_test(standard, n_resamples=99,
                                                    rng=streams["monotonicity"]),
        "prompt_consistency": coherence.prompt_consistency(
            part, truth="truth", n_resamples=99, rng=streams["prompt_consistency"]),
    }
    cell = rep.cells[1]
    for name, result in direct.items():
        got = cell.results[name]
        assert got.statistic == result.statistic, name
        if any("resolved with" in note for note in cell.notes.get(name, ())):
            # a p-value at its floor ran again with more draws (_report/_resolve.py)
            assert result.pvalue <= 3 / 100 and got.pvalue < result.pvalue, name
            if name == "ci":  # more permutations, no interval drawn: the first stage's kept
                fresh = np.random.default_rng(7).spawn(2)[1].spawn(len(REGISTRY))
                again = coherence.ci_test(standard, n_resamples=got.n_resamples,
                                          ci_method=None,
                                          rng=fresh[[s.name for s in REGISTRY].index("ci")])
                assert got.pvalue == again.pvalue and got.n_resamples > 99
                assert tuple(got.confidence_interval) == tuple(result.confidence_interval)
                assert np.array_equal(got.resample_distribution,
                                      result.resample_distribution)
                assert any("interval is the first stage's" in n for n in cell.notes["ci"])
            continue
        assert got.pvalue == result.pvalue or (np.isnan(got.pvalue) and np.isnan(result.pvalue))
        assert tuple(got.confidence_interval) == tuple(result.confidence_interval), name


def test_calibration_error_and_smooth_ece(rep, two_models):
    """Issue 20: the debiased calibration error and SmoothECE of the context-mean belief,
    in the results and in Table 5 of the page."""
    cell_streams = np.random.default_rng(7).spawn(2)
    streams = dict(zip([s.name for s in REGISTRY], cell_streams[0].spawn(len(REGISTRY)),
                       strict=True))
    part = two_models[(two_models["model"] == "a") & (two_models["prompt"] == "standard")]
    per_context = part.groupby("context").agg(probability=("belief", "mean"),
                                              outcome=("outcome", "first"))
    ce = coherence.calibration_error(per_context, n_resamples=99,
                                     rng=streams["calibration_error"])
    got = rep.cells[0].results["calibration_error"]
    assert got.statistic == ce.statistic and got.n_obs == 60
    assert tuple(got.confidence_interval) == tuple(ce.confidence_interval)
    sm = coherence.smooth_ece(per_context, n_resamples=0)
    assert rep.cells[0].results["smooth_ece"].statistic == pytest.approx(sm.statistic)
    page = rep.to_html()
    assert "debiased CE^2" in page and "smooth ECE" in page


def test_table_5_marks_an_l2_ce_of_a_negative_ce2():
    # a negative debiased CE^2 (-0.00322 here) read "0" in Table 5's l2 CE column, as if
    # the calibration error had been measured as 0
    data = coherence.simulate("rational", n_contexts=40, n_repetitions=2, rng=4).data
    rep = report(data, tests=["calibration", "calibration_error"], n_resamples=19,
                 progress=False, rng=0)
    result = rep.cells[0].results["calibration_error"]
    assert result.statistic < 0 and result.l2_estimate == 0.0
    page = rep.to_html()
    table = page[page.index("Table 5."):]
    table = table[:table.index("</table>")]
    assert "<td>0</td>" not in table.replace(" class='num'", "")
    assert ">0*</td>" in table and "0*: the debiased CE^2 is negative" in page
    # a positive one keeps its square root, and no note
    data = coherence.simulate("rational", n_contexts=40, n_repetitions=2, rng=0).data
    rep = report(data, tests=["calibration", "calibration_error"], n_resamples=19,
                 progress=False, rng=0)
    result = rep.cells[0].results["calibration_error"]
    page = rep.to_html()
    assert result.statistic > 0 and f">{result.l2_estimate:.3f}</td>" in page
    assert "0*: the debiased" not in page


@pytest.mark.slow  # a statistical matrix (or a long equivalence check): make test-slow
def test_reproducible_and_parallel_equal(two_models, rep):
    again = report(two_models, by="model", progress=False, rng=7, n_jobs=2, **FAST)
    pd.testing.assert_frame_equal(rep.to_frame(), again.to_frame())


def test_row_order_and_model_names_do_not_change_the_report(two_models, rep):
    """Shuffled rows with the models renamed in the same sorted order: with the same rng
    every cell's statistics, p-values (adjusted too) and intervals are the same."""
    table = two_models.sample(frac=1.0, random_state=3)
    table = table.assign(model=table["model"].map({"a": "alpha", "b": "beta"}))
    other = report(table, by=("model", "dataset"), progress=False, rng=7, **FAST).to_frame()
    other["model"] = other["model"].map({"alpha": "a", "beta": "b"})
    keep = ["model", "test", "statistic", "pvalue", "ci_low", "ci_high", "pvalue_adjusted"]
    pd.testing.assert_frame_equal(other[keep], rep.to_frame()[keep], check_exact=False,
                                  rtol=1e-9)


def test_leaky_fails_rational_passes(rep):
    table = rep.summary_table("pvalue")
    assert table.loc["b", "ci"] < 0.05 and table.loc["b", "leakage"] < 0.05
    assert table.loc["a", "ci"] > 0.05


def test_evidence_variants_run(two_models):
    data = two_models[two_models["model"] == "a"].assign(
        sex=lambda d: (d["context"] % 2).astype(str))
    rep = report(data, evidence=["sex"], tests=["ci_evidence", "leakage_evidence"],
                 progress=False, rng=0, **FAST)
    frame = rep.to_frame()
    assert list(frame["test"]) == ["ci_evidence", "leakage_evidence"]
    assert rep.cells[0].results["ci_evidence"].to_frame()["evidence"].iloc[0] in (
        "('sex',)", "sex", ("sex",))


@pytest.fixture(scope="module")
def page(rep):
    return rep.to_html()


def test_markdown_and_html(rep, page):
    md = rep.to_markdown()
    assert md.splitlines()[0].startswith("| model | test | method | statistic")
    assert len(md.splitlines()) == 2 + len(rep.to_frame())
    assert page.count("<svg") >= 4 and "data:image/png" not in page  # vector figures inline
    assert not re.search(r"""(src|href)=['"]?(https?:)?//""", page)  # no external requests
    for setting in ("n_permutations", "engine", "versions", "content sha256"):
        assert setting in page
    # the detail tables come from each result's `table`
    mono = rep.cells[0].results["monotonicity"].table
    assert "<h3>monotonicity: per action pair, a</h3>" in page
    assert "<h3>prompt_consistency: per prompt variant, a</h3>" in page
    assert all(f"<td>{pair}</td>" in page for pair in mono["pair"])


def test_markdown_escapes_pipes_and_line_breaks():
    from coherence._report._result import CoherenceReport
    from coherence._report._result import ReportCell

    cell = ReportCell(key={"model": "gpt\n4 | mini"}, n_obs=3, results={},
                      errors={"ci": "bad\r\nthing | here \\| end"},
                      notes={"ci": ("first\rsecond",)})
    md = CoherenceReport(cells=(cell,), by=("model",), settings={}).to_markdown()
    lines = md.splitlines()
    assert len(lines) == 3  # header, rule, one row: no label breaks its row
    cells = re.split(r"(?<!\\) \| ", lines[2].strip("| "))  # cells end at unescaped pipes
    assert len(cells) == len(lines[0].split(" | "))
    # a label's line break reads \n, as in summary(): as a space, "gpt\n4" read as "gpt 4",
    # another label; in an error or a warning it is a space
    assert cells[0] == "gpt\\\\n4 \\| mini"
    assert "bad thing \\| here \\\\\\| end" in cells
    assert "first second" in cells


def test_adjusted_pvalues(rep, two_models, tmp_path):
    from statsmodels.stats.multitest import multipletests

    frame = rep.to_frame()
    assert rep.settings["adjust"] == "holm"
    finite = frame["pvalue"].notna()
    expected = multipletests(frame.loc[finite, "pvalue"], method="holm")[1]
    np.testing.assert_allclose(frame.loc[finite, "pvalue_adjusted"], expected)
    assert frame.loc[~finite, "pvalue_adjusted"].isna().all()  # calibration: no p
    assert (frame["pvalue_adjusted"][finite] >= frame["pvalue"][finite]).all()
    table = rep.summary_table()
    assert table.loc["b", "ci"] == frame.query("model == 'b' and test == 'ci'")[
        "pvalue_adjusted"].iloc[0]
    small = report(two_models, by="model", tests=["ci", "monotonicity"], adjust="bh",
                   progress=False, rng=7, n_resamples=19)
    path = tmp_path / "r.html"
    assert small.to_html(path) == path.read_text() and "Benjamini-Hochberg" in path.read_text()
    bh = small.to_frame()
    np.testing.assert_allclose(bh["pvalue_adjusted"],
                               multipletests(bh["pvalue"], method="fdr_bh")[1])
    with pytest.raises(ValueError, match="The 'adjust' parameter of report must be one of"):
        report(two_models, adjust="bonferroni")
    with pytest.raises(ValueError, match="The 'values' parameter of summary_table"):
        rep.summary_table("p")


def test_first_screen_grid(rep, page):
    """The page opens on the models x tests grid: adjusted p and effect size per entry,
    the significant ones shaded, the tests that did not apply each given a reason."""
    grid = page[page.index("<table class='grid'>"):]
    grid = grid[:grid.index("</table>")]
    assert page.index("<table class='grid'>") < page.index("<h2>Results</h2>")
    frame = rep.to_frame().set_index(["model", "test"])
    p_b = frame.loc[("b", "leakage"), "pvalue_adjusted"]
    assert "CMI (nats)" in grid and "log-loss reduction (%)" in grid
    assert f"{frame.loc[('b', 'leakage'), 'statistic']:.3g}" in grid
    assert ("class='sig'" in grid) == bool((frame["pvalue_adjusted"] < 0.05).any())
    assert p_b == p_b  # a number
    for name in ("ci_evidence", "leakage_evidence", "lie"):
        assert f"<b>{name}</b> did not apply" in page
    assert "<b>ci</b> did not apply" not in page
    shown = rep._repr_html_()
    assert shown.startswith("<div class='coherence-report'><style>") and ".sig{" in shown
    assert "<table class='grid'>" in rep._repr_html_()


def test_paper_tables_and_layout(page):
    for caption in ("Table 1. Conditional independence", "Table 2. Leakage",
                    "Table 3. Monotonicity", "Table 4. Prompt consistency",
                    "Table 5. Forecast quality"):
        assert caption in page
    assert "text-align:left" in page and "@page" in page
    # axes of every figure are labelled (text kept as text in the SVG)
    for label in ("belief (bin centre)", "mean forecast (confidence)"):
        assert label in page


def test_rerun_command_parses_back(rep, page):
    """The provenance block's command line is one the CLI accepts, with the integer seed
    and the column mapping of the run."""
    import html as html_lib
    import shlex

    from coherence_cli import _build_parser

    block = page[page.index("To rerun from the command line"):]
    command = html_lib.unescape(block[block.index("<pre>") + 5:block.index("</pre>")])
    argv = shlex.split(command)
    assert argv[:2] == ["coherence", "test"]
    args = _build_parser().parse_args(argv[1:])
    assert args.seed == 7 and args.by == ["model"] and args.belief == "belief"
    assert args.group == "context" and args.adjust == "holm"
    assert args.tests == list(rep.settings["tests"])
    # one draw count for every test: --resamples (the deprecated --permutations not needed)
    assert args.reference_prompt == "standard" and args.resamples == 99
    assert args.permutations is None
    # the Python call is valid code with the same seed and mapping
    block = page[page.index("or from Python:"):]
    code = html_lib.unescape(block[block.index("<pre>") + 5:block.index("</pre>")])
    compile(code, "rerun.py", "exec")
    assert "rng=7" in code and "group='context'" in code and "adjust='holm'" in code
    # a run whose action labels were mapped says so in both commands
    import dataclasses

    from coherence._report._rerun import rerun_commands

    mapped = dataclasses.replace(rep, settings={
        **rep.settings, "data_file": "my answers.csv",
        "actions": {"yes": "buy", "no": "sell", "defer": "hold"}})
    shell, python = rerun_commands(mapped)
    args = _build_parser().parse_args(shlex.split(shell)[1:])
    assert args.table == "my answers.csv"
    assert args.actions == {"buy": "yes", "sell": "no", "hold": "defer"}
    assert "actions={'yes': 'buy', 'no': 'sell', 'defer': 'hold'}" in python
    compile(python, "rerun.py", "exec")


def test_summary_is_the_pvalue_table(rep):
    from coherence._results import Summary

    s = rep.summary()
    assert isinstance(s, Summary) and repr(s) == str(s)
    assert str(s).splitlines()[0].startswith("coherence report: 2 cell(s)")
    assert all(name in s for name in ("monotonicity", "prompt_consistency", "leakage"))
    assert "<table" in s._repr_html_()


def test_errors_are_recorded_not_raised():
    data = coherence.simulate("rational", n_contexts=30, rng=0).data
    data["action"] = "yes"  # one action only: the tests cannot run
    rep = report(data, tests=["leakage"], progress=False, rng=0, **FAST)
    frame = rep.to_frame()
    assert frame["error"].iloc[0] != "" and np.isnan(frame["pvalue"].iloc[0])
    # the summary names the failure, as the HTML page does
    lines = str(rep.summary()).splitlines()
    at = lines.index("Tests that did not run:")
    assert lines[at + 1].startswith("- leakage failed on all rows: ")


def test_summary_names_a_test_that_applied_nowhere(two_models, rep, page):
    """A test named in ``tests`` that applied to no cell: the summary's table had no
    column for it and said nothing (only the HTML page gave the reason); it now says why.
    Under tests="all" the summary leaves out the tests that applied nowhere (the page
    names them)."""
    assert "Tests that did not run" not in str(rep.summary())
    for name in ("ci_evidence", "leakage_evidence", "lie"):
        assert f"<b>{name}</b> did not apply" in page
    named = report(two_models, tests=["ci", "ci_evidence", "lie"], progress=False, rng=7,
                   **FAST)
    text = str(named.summary())
    lines = text[text.index("Tests that did not run:"):].splitlines()
    for name in ("ci_evidence", "lie"):
        said = [line for line in lines if line.startswith(f"- {name} did not apply: ")]
        assert len(said) == 1, name
    assert not any(line.startswith("- ci did not apply") for line in lines)
    assert all(len(line) <= 100 for line in lines)


def test_validation(two_models):
    with pytest.raises(ValueError, match="The 'tests' parameter of report must be one of"):
        report(two_models, tests=["nope"])
    with pytest.raises(ValueError, match=r"The 'tests' parameter of report must be 'all' or "
                       r"a non-empty sequence of test names \(ci, .*\); got \[\]"):
        report(two_models, tests=[])  # a report without a single test, silently, before
    with pytest.raises(ValueError, match=re.escape("column 'p' (the 'belief' column)")):
        report(two_models, belief="p")
    with pytest.raises(ValueError, match="The 'engine' parameter of report must be one of"):
        report(two_models, engine="xgboost")
    with pytest.raises(ValueError, match="The 'n_jobs' parameter of report"):
        report(two_models, n_jobs=0)
    with pytest.raises(ValueError, match="The 'reference_prompt' parameter of report must be "
                       "a label of column 'prompt'"):
        report(two_models, reference_prompt="plain")


@pytest.mark.requires("pgmpy")
def test_lie_table_joins_the_cells():
    import bayesnets

    study = bayesnets.lie_study("asia", agent="weighted", n_contexts=30, rng=0)
    baseline = study.redraw(agent="rational", rng=1)
    data = coherence.simulate("rational", n_contexts=30, n_repetitions=2, rng=0).data
    rep = report(data, lie=study.data, lie_options={"baseline": baseline},
                 tests=["ci", "lie"], progress=False, rng=0, **FAST)
    assert len(rep.cells) == 1
    result = rep.cells[0].results["lie"]
    direct = coherence.iterated_expectation_check(
        study.data, baseline=baseline,
        rng=np.random.default_rng(0).spawn(1)[0].spawn(len(REGISTRY))[TEST_NAMES.index("lie")])
    assert result.statistic == direct.statistic and result.pvalue == direct.pvalue
    html = rep.to_html()
    assert html.count("<svg") >= 1  # the ratio plot


def test_a_lie_table_not_asked_for_warns(two_models):
    # lie= while tests leaves 'lie' out, and lie_options= without lie=, were ignored silently
    lie = pd.DataFrame({"context": [0], "aux": ["z"], "state": [0]})
    with pytest.warns(coherence.SkippedRecordsWarning, match=r"'lie' is not among the tests "
                      r"asked for \(ci\): it is not checked"):
        rep = report(two_models, lie=lie, tests=["ci"], progress=False, rng=0, **FAST)
    assert all("lie" not in cell.results for cell in rep.cells)
    with pytest.warns(coherence.SkippedRecordsWarning, match=r"lie_options \(baseline\) were "
                      "given without a lie table"):
        report(two_models, lie_options={"baseline": lie}, tests=["ci"], progress=False,
               rng=0, **FAST)


@pytest.mark.requires("pgmpy")
def test_lie_table_split_by_model(two_models):
    import bayesnets

    parts = []
    for model, agent in (("a", "rational"), ("b", "weighted")):
        study = bayesnets.lie_study("asia", agent=agent, n_contexts=20, rng=3)
        parts.append(study.data.assign(model=model))
    lie = pd.concat(parts, ignore_index=True)
    baseline = bayesnets.lie_study("asia", agent="rational", n_contexts=20, rng=3).redraw(rng=4)
    rep = report(two_models, by="model", lie=lie, lie_options={"baseline": baseline},
                 tests=["lie"], progress=False, rng=0, **FAST)
    assert [c.key["model"] for c in rep.cells] == ["a", "b"]
    assert all("lie" in c.results for c in rep.cells)


@pytest.mark.requires("pgmpy")
def test_lie_table_in_its_own_cell_is_not_a_test_that_did_not_apply(two_models):
    """A LIE table without the by columns is checked in a cell of its own. The summary said
    "ci did not apply to lie table: it needs an action and an outcome column" (the data has
    both) and "lie did not apply to a, b: it needs ... (lie=)" (it was given)."""
    import bayesnets

    study = bayesnets.lie_study("asia", agent="weighted", n_contexts=20, rng=0)
    rep = report(two_models, by="model", lie=study.data,
                 lie_options={"baseline": study.redraw(agent="rational", rng=1)},
                 tests=["ci", "lie"], progress=False, rng=0, **FAST)
    assert [c.key["model"] for c in rep.cells] == ["a", "b", "lie table"]
    assert "lie" in rep.cells[2].results and all("ci" in c.results for c in rep.cells[:2])
    text = str(rep.summary())
    assert "did not apply" not in text and "Tests that did not run" not in text
    assert "did not apply" not in rep.to_html()


# --------------------------------------------------------------------------- issue 17: input
@pytest.fixture(scope="module")
def small():
    return coherence.simulate("rational", n_contexts=30, n_repetitions=2,
                              prompts=("standard", "mse"), rng=3).data


def test_empty_table_raises(small):
    with pytest.raises(ValueError, match=r"'data' parameter of report must be a table with at "
                       r"least one row; got '0 rows \(columns: context"):
        report(small.iloc[:0], progress=False, rng=0)


@pytest.mark.parametrize("by", [3, None, ["model", 3]])
def test_by_of_wrong_type(small, by):
    with pytest.raises(TypeError, match=r"The 'by' parameter of report must be a column name"):
        report(small, by=by, progress=False, rng=0)


def test_a_by_column_named_on_purpose_must_exist(small):
    # 'llm' pooled every row into one cell without a word; the default names may be absent
    with pytest.raises(ValueError, match=r"report: column 'llm' \(the 'by' column\) not found "
                       r"in data; available columns: 'context'"):
        report(small, by="llm", tests=["ci"], progress=False, rng=0)
    with pytest.raises(ValueError, match=r"column 'llm' and 'run' not found"):
        report(small, by=("model", "llm", "run"), tests=["ci"], progress=False, rng=0)
    assert report(small, by=("model", "dataset"), tests=["ci"], progress=False, rng=0,
                  **FAST).by == ()


def test_reference_prompt_matching_no_row_raises(small):
    relabelled = small.assign(prompt=small["prompt"].astype(str).str.capitalize())
    with pytest.raises(ValueError, match=r"The 'reference_prompt' parameter of report must be a "
                       r"label of column 'prompt' .*found 'Standard', 'Mse'\); got 'standard'\. "
                       r"Did you mean 'Standard'\?"):
        report(relabelled, tests=["ci"], progress=False, rng=0)
    with pytest.raises(ValueError, match=r"found 'standard', 'mse'\); got 'bayes'\.$"):
        report(small, tests=["ci"], reference_prompt="bayes", progress=False, rng=0)
    with pytest.raises(TypeError, match=r"'reference_prompt' parameter of report must be a str"):
        report(small, tests=["ci"], reference_prompt=None, progress=False, rng=0)


def test_prompt_labels_differing_only_in_case_raise(small):
    mixed = small.assign(prompt=small["prompt"].astype(str))
    mixed.loc[mixed.index[:3], "prompt"] = "Standard"
    with pytest.raises(ValueError, match=r"Column 'prompt' \(input to report\) must hold labels "
                       r"that differ by more than case"):
        report(mixed, tests=["ci"], progress=False, rng=0)


def test_cell_without_reference_prompt_records_an_error(small):
    # model b has only the 'mse' prompt: its decision tests must not run on mse rows
    a = small.assign(model="a")
    b = small[small["prompt"].astype(str) == "mse"].assign(model="b")
    rep = report(pd.concat([a, b], ignore_index=True), tests=["ci", "calibration"],
                 n_resamples=19, progress=False, rng=0)
    frame = rep.to_frame().set_index(["model", "test"])
    assert frame.loc[("a", "ci"), "error"] == ""
    assert frame.loc[("a", "ci"), "n_obs"] == (small["prompt"] == "standard").sum()
    error = frame.loc[("b", "ci"), "error"]
    assert re.search(r"no row of this cell has prompt = 'standard'", error)
    assert np.isnan(frame.loc[("b", "ci"), "pvalue"])


def test_beliefs_written_as_text_run_in_every_test(small):
    text = small.assign(belief=small["belief"].map(repr).astype(object))
    got = report(text, tests=["ci", "calibration"], n_resamples=19,
                 progress=False, rng=0).to_frame()
    want = report(small, tests=["ci", "calibration"], n_resamples=19,
                  progress=False, rng=0).to_frame()
    assert (got["error"] == "").all()
    pd.testing.assert_frame_equal(got.drop(columns="warnings"), want.drop(columns="warnings"))


def test_duplicate_column_names_raise(small):
    dup = pd.concat([small, small[["belief"]]], axis=1)
    with pytest.raises(ValueError, match=r"column names are unique; got .*duplicated column "
                       r"'belief'"):
        report(dup, progress=False, rng=0)


def test_row_without_a_prompt_raises(small):
    # found by the fuzz suite's thorough profile: the row was left out of the decision tests
    gap = small.assign(prompt=small["prompt"].astype(object))
    gap.loc[gap.index[4], "prompt"] = None
    with pytest.raises(ValueError, match=r"Column 'prompt' \(input to report\) must not contain "
                       r"missing values; 1 offending row \(first: row 4\)"):
        report(gap, tests=["ci"], progress=False, rng=0)


@pytest.mark.skipif(CHROMIUM is None, reason="headless Chromium is not installed")
def test_report_fits_a_printed_page(page, tmp_path):
    """Headless Chromium (Debian's ``chromium`` package) lays the report out at the width
    of an A4 page's printable area (182 mm = 688 CSS px); no element may pass it."""
    page = page.replace("</body>", PROBE + "</body>")
    path = tmp_path / "report.html"
    path.write_text(page, encoding="utf-8")
    out = subprocess.run(
        [CHROMIUM, "--headless", "--no-sandbox", "--disable-gpu", "--hide-scrollbars",
         f"--window-size={PRINT_WIDTH_PX},1000", "--dump-dom", path.as_uri()],
        capture_output=True, text=True, timeout=120)
    found = re.search(r'<pre id="overflow-probe">(.*?)</pre>', out.stdout, re.S)
    assert found, out.stderr[-2000:]
    probe = json.loads(found.group(1).replace("&quot;", '"'))
    assert probe["width"] <= PRINT_WIDTH_PX
    assert probe["bad"] == [], probe
    assert probe["scroll"] <= probe["width"], probe


# --------------------------------------------------------------------------- diagnostics
def test_degenerate_beliefs_are_flagged_on_the_first_screen_and_in_to_frame(two_models):
    table = two_models[two_models["model"] == "a"].assign(belief=0.50)
    with pytest.warns(coherence.DegenerateDataWarning, match="cannot speak to coherence"):
        rep = report(table, tests=["ci", "calibration"], progress=False, rng=0, **FAST)
    assert rep.cells[0].degenerate
    first = rep._repr_html_()
    assert "Warning: degenerate elicitation" in first
    assert first.index("degenerate elicitation") < first.index("Which model fails")
    page = rep.to_html()
    assert page.index("Warning: degenerate elicitation") < page.index("<table class='grid'>")
    assert "Elicitation diagnostics" in page
    assert rep.to_frame()["degenerate_elicitation"].all()
    assert "WARNING: a: Degenerate elicitation" in rep.summary()


def test_a_healthy_study_shows_no_degenerate_warning(rep):
    assert not any(c.degenerate for c in rep.cells)
    assert "degenerate elicitation" not in rep._repr_html_().lower()
    page = rep.to_html()
    assert "Elicitation diagnostics" in page and "role='alert'" not in page
    assert "WARNING" not in rep.summary()
    d = rep.cells[0].diagnostics
    assert d is not None and d.n_obs == rep.cells[0].n_obs and d.association > 0.5


def test_set_aside_replies_are_counted_per_cell(two_models):
    set_aside = pd.DataFrame({"model": ["a", "b", "b"], "reason": ["bad_sum"] * 2 + ["x"]})
    rep = report(two_models, tests=["calibration"], set_aside=set_aside, progress=False,
                 rng=0, **FAST)
    frame = rep.to_frame().set_index("model")
    assert frame.loc["a", "n_set_aside"] == 1 and frame.loc["b", "n_set_aside"] == 2
    assert dict(rep.cells[1].diagnostics.set_aside) == {"bad_sum": 1, "x": 1}
    assert "bad_sum 1, x 1" in rep.to_html()
    with pytest.raises(ValueError, match="set_aside"):
        report(two_models, tests=["calibration"], set_aside={"bad_sum": 1}, progress=False)
    one = report(two_models[two_models["model"] == "a"], tests=["calibration"],
                 set_aside={"bad_sum": 1}, progress=False, rng=0, **FAST)
    assert one.to_frame()["n_set_aside"].tolist() == [1]


@pytest.mark.parametrize("column", ["method", "test", "error"])
def test_a_cell_column_named_like_a_result_column_is_refused(two_models, column):
    """by='method' (a study's elicitation method) once gave a to_frame() with two 'method'
    columns, both the tests' methods ('permutation'): the cells' labels were lost, and
    summary() raised "Grouper for 'method' not 1-dimensional"."""
    with pytest.raises(ValueError, match=rf"'by' parameter of report.*got \['{column}'\]"):
        report(two_models.rename(columns={"model": column}), by=column, tests=["ci"],
               progress=False, rng=0, **FAST)


def test_a_cell_column_named_twice_is_one(two_models):
    """by=["model", "model"] (`coherence test --by model --by model`) gave a to_frame()
    with two 'model' columns and summary() raised "Grouper for 'model' not 1-dimensional"."""
    twice = report(two_models, by=["model", "model"], tests=["calibration"], progress=False,
                   rng=0, **FAST)
    once = report(two_models, by="model", tests=["calibration"], progress=False, rng=0,
                  **FAST)
    assert twice.by == ("model",) and twice.settings["by"] == ["model"]
    pd.testing.assert_frame_equal(twice.to_frame(), once.to_frame())
    assert str(twice.summary()) == str(once.summary())


def test_set_aside_replies_of_no_cell_are_named(two_models):
    """Set-aside replies whose model is no cell's ('A' against 'a', a model without rows)
    were dropped without a word, and with one cell another model's were counted in it
    (3 where 1 is its own): now each cell counts its own, and a warning names the rest."""
    from coherence import SkippedRecordsWarning

    set_aside = pd.DataFrame({"model": ["A", "a", "llama"], "reason": ["bad_sum"] * 3})
    with pytest.warns(SkippedRecordsWarning, match=r"2 of 3 set-aside replies name no cell.*"
                      r"'A' \(1 replies\), 'llama' \(1 replies\)"):
        rep = report(two_models, tests=["calibration"], set_aside=set_aside, progress=False,
                     rng=0, **FAST)
    assert rep.to_frame().set_index("model")["n_set_aside"].to_dict() == {"a": 1, "b": 0}
    with pytest.warns(SkippedRecordsWarning, match="2 of 3 set-aside replies"):
        one = report(two_models[two_models["model"] == "a"], tests=["calibration"],
                     set_aside=set_aside, progress=False, rng=0, **FAST)
    assert one.to_frame()["n_set_aside"].tolist() == [1]

# --------------------------------------------------------------------------- draw counts, actions
def test_n_resamples_sets_every_draw_count(small):
    # rng=1: a first-stage ci p-value above the resolution threshold (with rng=0 it is
    # below, and the second stage's draws are recorded instead: _resolve.py)
    rep = report(small, tests=["ci", "monotonicity"], n_resamples=19, progress=False, rng=1)
    assert rep.settings["n_resamples"] == rep.settings["n_permutations"] == 19
    results = rep.cells[0].results
    assert results["ci"].n_resamples == 19 and results["monotonicity"].n_resamples == 19


def test_n_permutations_is_deprecated_and_keeps_its_meaning(small):
    with pytest.warns(DeprecationWarning, match=r"n_permutations.*use n_resamples") as rec:
        rep = report(small, tests=["ci", "monotonicity"], n_permutations=19, progress=False,
                     rng=1)
    assert rec[0].filename == __file__
    assert rep.settings["n_permutations"] == 19 and rep.settings["n_resamples"] == 500
    results = rep.cells[0].results
    assert results["ci"].n_resamples == 19 and results["monotonicity"].n_resamples == 500


@pytest.mark.parametrize("name", ["n_resamples", "n_permutations"])
def test_draw_counts_are_validated_under_their_own_name(small, name):
    with pytest.raises(ValueError, match=rf"'{name}' parameter of report must be"):
        report(small, tests=["ci"], progress=False, rng=0, **{name: -1})


def test_actions_maps_the_users_labels(small):
    theirs = {"yes": "buy", "no": "sell", "defer": "hold"}
    relabelled = small.assign(action=small["action"].map(theirs))
    got = report(relabelled, tests=["ci", "monotonicity"], actions=theirs, n_resamples=19,
                 progress=False, rng=0)
    want = report(small, tests=["ci", "monotonicity"], n_resamples=19, progress=False, rng=0)
    pd.testing.assert_frame_equal(got.to_frame(), want.to_frame())
    assert got.settings["actions"] == theirs and want.settings["actions"] is None
    assert relabelled["action"].isin(["buy", "sell", "hold"]).all()  # input not mutated
    # labels already in the tests' vocabulary need no mapping
    partial = small.assign(action=small["action"].cat.rename_categories({"yes": "buy"}))
    got = report(partial, tests=["ci"], actions={"yes": "buy"}, n_resamples=19,
                 progress=False, rng=0)
    assert got.to_frame()["statistic"].iloc[0] == want.to_frame()["statistic"].iloc[0]


def test_actions_validation(small):
    theirs = small.assign(action=small["action"].map({"yes": "buy", "no": "sell",
                                                      "defer": "Hold "}))
    with pytest.raises(ValueError, match=r"'actions' parameter of report must be a mapping "
                       r"of every label of column 'action'; these are neither mapped nor "
                       r"'yes'/'no'/'defer': 'Hold ' \(\d+ rows\)"):
        report(theirs, actions={"yes": "buy", "no": "sell", "defer": "hold"}, progress=False)
    with pytest.raises(ValueError, match=r"key 'maybe' is not one of"):
        report(small, actions={"maybe": "buy"}, progress=False)
    with pytest.raises(ValueError, match=r"mapped twice: 'buy'"):
        report(small, actions={"yes": "buy", "no": "buy"}, progress=False)
    with pytest.raises(TypeError, match=r"the label of 'yes' is not a non-empty str"):
        report(small, actions={"yes": 1}, progress=False)
    with pytest.raises(TypeError, match=r"'actions' parameter of report must be a mapping"):
        report(small, actions=["yes"], progress=False)


# --------------------------------------------------------------------------- IIA (menus)
def _menu_table(design, seed: int) -> pd.DataFrame:
    """A menu study of :mod:`benchmarks.iia_designs` with an outcome per context."""
    from benchmarks.iia_designs import generate

    data = generate(design, seed)
    n = int(data["context"].max()) + 1
    happened = np.random.default_rng(seed).uniform(size=n)
    belief = data.groupby("context")["belief"].first().to_numpy()
    return data.assign(outcome=(happened < belief)[data["context"].to_numpy()].astype(int))


def test_without_menus_the_report_is_unchanged(two_models, monkeypatch):
    """The IIA spec comes last in the registry: every other test keeps its random stream,
    so a report without a menu column equals the report of the registry without it."""
    import coherence._report._registry as registry
    import coherence._report._resolve as resolve
    import coherence._report._result as result
    import coherence._report._run as run

    small = two_models[two_models["context"] < 40]
    with_iia = report(small, by="model", progress=False, rng=3, **FAST)
    assert "iia" in TEST_NAMES and REGISTRY[-1].name == "iia"
    before = tuple(s for s in REGISTRY if s.name != "iia")
    names = tuple(s.name for s in before)
    for module in (registry, run, resolve):
        monkeypatch.setattr(module, "REGISTRY", before)
    for module in (registry, run, result):
        monkeypatch.setattr(module, "TEST_NAMES", names)
    without = report(small, by="model", progress=False, rng=3, **FAST)
    pd.testing.assert_frame_equal(with_iia.to_frame(), without.to_frame())
    assert "iia" not in set(with_iia.to_frame()["test"])


@pytest.fixture(scope="module")
def menu_reports():
    from benchmarks.iia_designs import Design

    # odds of yes over no x3 when defer is removed: the IIA test's p-value is far below
    # any level (its z is about 8 at this size); the logit agent satisfies IIA
    violating = _menu_table(Design(agent="odds", factor=3.0), 41)
    respecting = _menu_table(Design(), 42)
    both = pd.concat([violating.assign(model="violates"), respecting.assign(model="iia")],
                     ignore_index=True)
    return report(both, by="model", tests=("iia", "monotonicity"), progress=False, rng=5,
                  **FAST), both


def test_report_with_menus_runs_the_iia_test(menu_reports):
    rep, both = menu_reports
    frame = rep.to_frame().set_index(["model", "test"])
    assert frame.loc[("violates", "iia"), "pvalue_adjusted"] < 0.01
    assert frame.loc[("iia", "iia"), "pvalue_adjusted"] > 0.05
    # the number is the test function's, on the cell's rows
    part = both[both["model"] == "violates"]
    direct = coherence.iia_test(part, n_resamples=99, rng=0)
    got = rep.cells[1].results["iia"]
    assert got.statistic == pytest.approx(direct.statistic)
    assert got.table["comparison"].tolist() == direct.table["comparison"].tolist()
    page = rep.to_html()
    assert "<h3>iia: per comparison, violates</h3>" in page and "IIA" in page
    assert "iia" in rep.summary_table("pvalue").columns


def test_decision_tests_run_on_the_full_menu(menu_reports):
    """With a menu column the decision tests read the full menu's rows only (the reduced
    menus are the IIA test's), and say so when no row offers it."""
    rep, both = menu_reports
    part = both[both["model"] == "violates"]
    menus = part["menu"].map(lambda m: frozenset(a.strip() for a in m.split("|")))
    full = part[menus == frozenset().union(*menus)]
    assert 0 < len(full) < len(part)
    got = rep.cells[1].results["monotonicity"]
    direct = coherence.monotonicity_test(full.drop(columns="menu"), n_resamples=99, rng=0)
    assert got.n_obs == direct.n_obs == len(full)
    split = part.assign(menu=np.where(np.arange(len(part)) % 2, "defer|yes", "no|yes"))
    bad = report(split, tests=("monotonicity",), progress=False, rng=5, **FAST)
    assert "no row of this cell offers the full menu ('defer|no|yes'" in str(
        bad.cells[0].errors["monotonicity"])
    mixed = report(part.assign(menu="defer|no"), tests=("monotonicity",), progress=False,
                   rng=5, **FAST)
    assert not mixed.cells[0].errors  # one menu for every row: it is the full menu



def test_repetitions_numbered_within_each_menu():
    """A menu study elicits each menu of a context several times, its repetitions numbered
    0, 1, ... under every menu: the same (context, repetition) under two menus is two
    elicitations, not a table read twice. It was refused at the door."""
    from benchmarks.iia_designs import Design

    data = _menu_table(Design(n_contexts=40), 44)
    data = data.assign(repetition=data.groupby(["context", "menu"]).cumcount())
    rep = report(data, tests=("iia", "monotonicity"), progress=False, rng=1, **FAST)
    assert not rep.cells[0].errors
    bare = report(data.drop(columns="repetition"), tests=("iia", "monotonicity"),
                  progress=False, rng=1, **FAST)
    pd.testing.assert_frame_equal(rep.to_frame(), bare.to_frame())
    # within one menu a repeated label is still the table read twice
    twice = pd.concat([data, data[data["menu"] == "no|yes"]], ignore_index=True)
    with pytest.raises(ValueError, match=r"Column 'repetition' .*'context', 'menu'"):
        report(twice, tests=("iia",), progress=False, rng=1, **FAST)

def test_prompt_consistency_on_a_menu_table_reads_the_full_menu():
    """A menu study with several prompts, repetitions numbered within each menu: the
    prompts were compared on every menu's rows, so each (context, prompt, repetition)
    came once per menu and the cell recorded a duplicate-repetition error. They are
    compared on the full menu's rows, as the decision tests read them."""
    from benchmarks.iia_designs import Design

    data = _menu_table(Design(n_contexts=30), 44)
    shifted = np.clip(data["belief"] + np.random.default_rng(0).normal(0, 0.05, len(data)),
                      0, 1)
    table = pd.concat([data.assign(prompt="standard"),
                       data.assign(prompt="other", belief=shifted)], ignore_index=True)
    table = table.assign(repetition=table.groupby(["context", "prompt", "menu"]).cumcount())
    rep = report(table, tests=("prompt_consistency",), progress=False, rng=1, **FAST)
    assert not rep.cells[0].errors
    full = table[table["menu"] == "defer|no|yes"]
    direct = coherence.prompt_consistency(full.drop(columns="menu"), n_resamples=99, rng=0)
    got = rep.cells[0].results["prompt_consistency"]
    assert got.n_obs == direct.n_obs == len(full)
    assert got.statistic == pytest.approx(direct.statistic)
    reduced = table[table["menu"] != "defer|no|yes"]
    bad = report(reduced, tests=("prompt_consistency",), progress=False, rng=1, **FAST)
    assert "which prompt_consistency runs on" in bad.cells[0].errors["prompt_consistency"]


def test_report_maps_menu_labels_with_actions():
    from benchmarks.iia_designs import Design

    data = _menu_table(Design(n_contexts=40), 43)
    ours = {"yes": "buy", "no": "sell", "defer": "hold"}
    yours = data.assign(action=data["action"].map(ours),
                        menu=data["menu"].map(lambda m: "|".join(ours[a] for a in m.split("|"))))
    rep = report(yours, tests="iia", actions=ours, progress=False, rng=1, **FAST)
    res = rep.cells[0].results["iia"]
    assert res.full_menu == "defer|no|yes" and not rep.cells[0].errors


def test_lie_interval_is_at_the_report_level():
    # the LIE check ran at its own 0.95 under a table header naming the report's level
    import bayesnets

    study = bayesnets.lie_study("asia", agent="weighted", n_contexts=30, rng=0)
    baseline = study.redraw(agent="rational", rng=1)
    data = coherence.simulate("rational", n_contexts=30, n_repetitions=2, rng=0).data
    rep = report(data, lie=study.data, lie_options={"baseline": baseline}, tests=["lie"],
                 confidence_level=0.8, progress=False, rng=0, **FAST)
    assert rep.cells[0].results["lie"].confidence_interval.confidence_level == 0.8
    own = report(data, lie=study.data, tests=["lie"], progress=False, rng=0, **FAST,
                 lie_options={"baseline": baseline, "confidence_level": 0.9})
    assert own.cells[0].results["lie"].confidence_interval.confidence_level == 0.9


def test_a_numpy_integer_seed_is_recorded(two_models):
    # rng=np.int64(7) seeds as 7 does, but the settings said "a int64 (not recorded)" and
    # the rerun line printed --seed SEED
    from coherence._report._rerun import rerun_commands

    numpy_seed = report(two_models, tests=["calibration"], progress=False, rng=np.int64(7))
    plain = report(two_models, tests=["calibration"], progress=False, rng=7)
    assert numpy_seed.settings["seed"] == numpy_seed.settings["rng"] == 7
    assert type(numpy_seed.settings["seed"]) is int
    assert rerun_commands(numpy_seed)[0].endswith("--seed 7")
    pd.testing.assert_frame_equal(numpy_seed.to_frame(), plain.to_frame())


def test_lie_table_header_names_the_checks_own_level():
    # lie_options={"confidence_level": 0.9}: Table 6's header said the report's 95% CI over
    # the 90% intervals
    import bayesnets

    study = bayesnets.lie_study("asia", agent="weighted", n_contexts=30, rng=0)
    baseline = study.redraw(agent="rational", rng=1)
    data = coherence.simulate("rational", n_contexts=30, n_repetitions=2, rng=0).data
    rep = report(data, lie=study.data, tests=["lie"], progress=False, rng=0, **FAST,
                 lie_options={"baseline": baseline, "confidence_level": 0.9})
    html = rep.to_html()
    assert "median error ratio [90% CI]" in html and "median error ratio [95% CI]" not in html
    same = report(data, lie=study.data, lie_options={"baseline": baseline}, tests=["lie"],
                  confidence_level=0.8, progress=False, rng=0, **FAST)
    assert "median error ratio [80% CI]" in same.to_html()


def test_lie_interval_draws_follow_the_report():
    # report(n_resamples=99) recorded 99 draws in its settings while the LIE check drew
    # its interval from 9999 resamples
    import bayesnets

    study = bayesnets.lie_study("asia", agent="weighted", n_contexts=30, rng=0)
    baseline = study.redraw(agent="rational", rng=1)
    data = coherence.simulate("rational", n_contexts=30, n_repetitions=2, rng=0).data
    rep = report(data, lie=study.data, lie_options={"baseline": baseline}, tests=["lie"],
                 progress=False, rng=0, **FAST)
    result = rep.cells[0].results["lie"]
    assert result.n_resamples == FAST["n_resamples"] == rep.settings["n_resamples"]
    stream = np.random.default_rng(0).spawn(1)[0].spawn(len(REGISTRY))[TEST_NAMES.index("lie")]
    direct = coherence.iterated_expectation_check(study.data, baseline=baseline, rng=stream,
                                                  n_resamples=FAST["n_resamples"])
    assert result.confidence_interval == direct.confidence_interval
    own = report(data, lie=study.data, tests=["lie"], progress=False, rng=0, **FAST,
                 lie_options={"baseline": baseline, "n_resamples": 49})
    assert own.cells[0].results["lie"].n_resamples == 49
    default = report(data, lie=study.data, lie_options={"baseline": baseline},
                     tests=["lie"], progress=False, rng=0)
    assert default.cells[0].results["lie"].n_resamples == 9999  # the check's own


def test_pvalues_never_print_on_the_other_side_of_the_level():
    from coherence._report._render import _pval

    assert _pval(50 / 1001) == "0.04995"  # was "0.050" under a shading that says < 0.05
    # nor onto it: "0.050" read as at most 0.05, where IIA's violates (p <= level) flags
    assert _pval(0.05004) == "0.05004" and _pval(0.049) == "0.049" and _pval(0.05) == "0.050"
    assert _pval(0.051) == "0.051"
    assert _pval(0.12345) == "0.123" and _pval(0.0004) == "< 0.001"


def test_the_html_page_shows_a_negative_zero_as_0():
    """The page's numbers (statistics, intervals, effects) showed -0.0 as "-0"."""
    from coherence._report._render import _num
    from coherence._report._render import _with_ci

    assert [_num(-0.0), _num(-0.0, 4), _num(0.0)] == ["0", "0", "0"]
    assert _with_ci(-0.0, -0.0, 0.5) == "0 [0, 0.5]"
    assert [_num(-0.0004), _num(-0.25), _num(-2.5)] == ["-4.00e-04", "-0.25", "-2.5"]


def test_the_html_detail_tables_never_round_a_pvalue_across_the_level():
    """A detail table's number (the appendix's p-values, e.g. IIA's adjusted ones) to 4
    decimals: 0.049996 read "0.05" on a page that shades p-values below 0.05."""
    from coherence._report._render import _num
    from coherence._report._render import _table_html

    # nor onto it (0.050004 read "0.05", as flagged by IIA's p <= 0.05 beside violates no)
    assert [_num(0.049996, 4), _num(0.050004, 4), _num(0.0123456, 4), _num(0.05, 4)] == [
        "0.049996", "0.050004", "0.0123", "0.05"]
    assert [_num(0.12345, 4), _num(0.04, 4), _num(3.14159, 4)] == ["0.1235", "0.04", "3.142"]
    html = _table_html(pd.DataFrame({"pvalue_adjusted": [0.049996, 0.3]}))
    assert "0.049996" in html and ">0.05<" not in html
    # a result's table is held to its own level too (IIA at confidence_level=0.99)
    html = _table_html(pd.DataFrame({"pvalue_adjusted": [0.0099996, 0.0100004, 0.01]}),
                       levels=(0.01,))
    assert ">0.0099996<" in html and ">0.0100004<" in html and html.count(">0.01<") == 1


def test_grid_note_counts_the_second_stage(two_models):
    # with 99 permutations the note said no test could reach the shading, next to cells
    # shaded p < 0.001 (their p-values resolved with the second stage's draws)
    rep = report(two_models, by="model", n_resamples=99, rng=0, progress=False)
    html = rep.to_html()
    assert "no such test can reach the shading" not in html
    assert "rerun with more permutations" not in html
    assert "class='sig'" in html


def test_a_repetition_labelled_twice_in_a_cell_is_an_error(two_models):
    # a table read twice over doubled each context's repetitions in every test but the
    # prompt-consistency test, which refused it in its cell alone (the report returned)
    one = two_models[two_models["model"] == "a"]
    with pytest.raises(ValueError, match=r"Column 'repetition' \(input to report\) must "
                       r"identify each repetition once per \('model', 'context', 'prompt'\)"
                       r".*720 offending rows"):
        report(pd.concat([one, one]), tests=["ci"], progress=False, rng=0)
    # two models pooled into one cell (by without 'model') repeat their contexts' labels
    with pytest.raises(ValueError, match=r"once per \('context', 'prompt'\).*name their "
                       r"column in by"):
        report(two_models, by=(), tests=["ci"], progress=False, rng=0)
    # prompt=None pools the prompts, whose repetition labels then recur: not an error
    pooled = report(one, tests=["ci"], prompt=None, progress=False, rng=0, **FAST)
    assert pooled.cells[0].results["ci"].n_contexts == 60


def test_docs_state_when_the_action_tests_run(small):
    """docs/report.md said monotonicity runs when an action column exists; like ci and
    leakage it runs when the action and the outcome exist (the report refuses an action
    column without an outcome column)."""
    from pathlib import Path

    from coherence._report._registry import _has_actions

    page = (Path(__file__).parents[2] / "docs" / "report.md").read_text(encoding="utf-8")
    runs_when = {m.group(1): m.group(2).strip() for m in
                 re.finditer(r"^\| `(\w+)` \|.*\| ([^|]+) \|$", page, flags=re.M)}
    for spec in REGISTRY:
        if spec.applies is _has_actions:
            assert runs_when[spec.name] == "action and outcome exist", spec.name
    with pytest.raises(ValueError, match=r"column 'outcome' not found"):
        report(small.drop(columns="outcome"), tests=("monotonicity",), progress=False,
               **FAST)


def test_outcome_none_with_an_action_column_is_a_clear_error(small):
    """outcome=None on a table with an action column failed with a bare KeyError: None."""
    with pytest.raises(ValueError, match=r"'outcome' parameter of report must be a column "
                       r"name while the table has an action column \('action'\).*action=None"):
        report(small.drop(columns="outcome"), outcome=None, progress=False, **FAST)
    rep = report(small, action=None, outcome=None, tests=("prompt_consistency",),
                 progress=False, rng=0, **FAST)
    assert "prompt_consistency" in rep.cells[0].results


def test_a_floor_already_below_the_target_is_not_run_again():
    """adjust="none" resolves a p-value at its floor with 1001 draws (1 / 1002 < 0.001; the
    adjustment multiplies nothing), Holm's over m p-values with m x 1000 + 1: one rule. But
    ci_test's default 1000 permutations, whose floor 1 / 1001 is below 0.001 already, ran
    again with 1001 (twice the time, for one draw; the note said 'at or near its floor')."""
    from coherence._report._options import floor_resolved
    from coherence._report._options import second_stage_draws

    assert (second_stage_draws(1, "none"), second_stage_draws(25, "holm")) == (1001, 25001)
    assert floor_resolved(1000, 7, "none") and not floor_resolved(999, 7, "none")
    assert not floor_resolved(1000, 25, "holm") and floor_resolved(25000, 25, "bh")
    data = coherence.simulate(coherence.Agent.leaky(strength=0.9), n_contexts=60,
                              n_repetitions=2, rng=0).data
    rep = report(data, tests=["ci"], adjust="none", progress=False, rng=0)
    cell = rep.cells[0]
    assert cell.results["ci"].pvalue == 1 / 1001 and cell.results["ci"].n_resamples == 1000
    assert not cell.notes.get("ci") and rep.settings["resolved_pvalues"] == 0
    # fewer draws than that are still resolved with 1001
    fewer = report(data, tests=["ci"], adjust="none", n_resamples=199, progress=False, rng=0)
    assert fewer.cells[0].results["ci"].n_resamples == 1001


def test_text_outputs_never_round_a_pvalue_across_0_05(rep):
    """An adjusted p of 0.049996 (Holm over 25 p-values of 25,001 draws: 25 x 50 / 25002)
    read "0.05" in summary() and to_markdown() (4 significant digits) while the HTML page
    shaded it as below 0.05."""
    import dataclasses

    cell = rep.cells[0]
    results = {"ci": dataclasses.replace(cell.results["ci"], pvalue=1250 / 25002)}
    one = dataclasses.replace(rep, cells=(dataclasses.replace(cell, results=results),),
                              settings={**rep.settings, "adjust": "none"})
    assert one.to_frame()["pvalue_adjusted"].iloc[0] == 1250 / 25002
    summary = str(one.summary())
    assert "0.049996" in summary and " 0.05\n" not in summary + "\n"
    row = one.to_markdown().splitlines()[2].split(" | ")
    assert row[4] == "0.049996" and row[9] == "0.049996"  # pvalue, pvalue_adjusted
    assert "p 0.049996" in one.to_html()


def test_calibration_cells_read_the_reference_prompt_as_the_docs_say(two_models):
    """The calibration cells average each context's reference-prompt beliefs only; the
    docs said so of the decision tests alone, and a reader took the Brier score for the
    mean over every prompt."""
    from pathlib import Path

    data = two_models[two_models["model"] == "a"]
    other = data["prompt"] != "standard"
    data = data.assign(belief=data["belief"].where(~other, (data["belief"] + 0.3).clip(0, 1)))
    rep = report(data, tests=["calibration"], progress=False, rng=0, **FAST)

    def brier(rows):
        per = rows.groupby("context").agg(p=("belief", "mean"), y=("outcome", "first"))
        return float(((per["p"] - per["y"]) ** 2).mean())

    got = rep.cells[0].results["calibration"].statistic
    assert got == pytest.approx(brier(data[~other]), abs=1e-12)
    assert abs(got - brier(data)) > 0.01
    doc = " ".join((Path(__file__).parents[2] / "docs" / "report.md").read_text().split())
    assert ("So do the calibration cells (`calibration`, `calibration_error`, `smooth_ece`): "
            "each context's forecast is the mean belief of its reference-prompt rows") in doc


def test_resolved_note_gives_the_floor_and_the_draws_that_reached_it(rep):
    """The note said "99 left it at its floor (0.03)" of a p-value whose floor is 0.01 (2 of
    the 99 draws reached the statistic): it now gives both."""
    notes = [(cell, name, n) for cell in rep.cells for name, ns in cell.notes.items()
             for n in ns if "resolved with" in n]
    assert notes
    for _cell, _name, note in notes:
        found = re.search(r"(\d+) left it at or near its floor \(([\d.e-]+), (\d) of them at "
                          r"or beyond the statistic; the floor is ([\d.e-]+)\)", note)
        assert found, note
        draws, p, reached, floor = found.groups()
        assert draws == "99" and floor == "0.01"
        assert int(reached) == round(float(p) * 100 - 1) < 3


def test_a_test_that_ran_without_a_p_value_is_named_not_dropped():
    """On 6 contexts ci_test (no valid permutation block) and monotonicity_test (no testable
    pair) give NaN p-values: summary() showed an empty table without a word and the page's
    grid read both as "descriptive, no p-value"."""
    data = coherence.simulate("rational", n_contexts=6, n_repetitions=2, rng=0).data
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        rep = report(data, tests=["ci", "monotonicity", "calibration"], progress=False,
                     rng=0, n_resamples=19)
    frame = rep.to_frame().set_index("test")
    assert frame.loc[["ci", "monotonicity"], "pvalue"].isna().all()
    assert (frame["error"] == "").all()
    text = " ".join(str(rep.summary()).split())
    assert "- ci ran on all rows but gave no p-value: DegenerateDataWarning: ci_test: no " \
           "valid permutation test" in text
    assert "- monotonicity ran on all rows but gave no p-value: SmallSampleWarning: " \
           "monotonicity_test: the overall p-value is NaN" in text
    assert "calibration ran" not in text  # descriptive by design
    page = rep.to_html()
    assert page.count("<td class='na'>no p<br>") == 2 and page.count("<td>&mdash;<br>") == 1
