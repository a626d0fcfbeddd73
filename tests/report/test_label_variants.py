"""report: cell labels typed two ways raise, LIE rows never vanish, the outcome checked
is the outcome passed on (audit items 1-4)."""

import re

import numpy as np
import pandas as pd
import pytest

import coherence
from coherence import report
from coherence._warnings import SkippedRecordsWarning

FAST = {"n_resamples": 19}


@pytest.fixture(scope="module")
def two_models():
    d = coherence.simulate("rational", n_contexts=20, n_repetitions=2, rng=0).data
    return pd.concat([d.assign(model="gpt"), d.assign(model="llama")], ignore_index=True)


def _lie(models):
    rng = np.random.default_rng(0)
    rows = []
    for c in range(20):
        pz = rng.dirichlet([2, 2])
        pyz = rng.uniform(0.1, 0.9, 2)
        for s in range(2):
            rows.append({"context": c, "variable": "z", "state": s,
                         "p_y_given_x": float(pz @ pyz), "p_y_given_xz": float(pyz[s]),
                         "p_z_given_x": float(pz[s])})
    e = pd.DataFrame(rows)
    return e, pd.concat([e.assign(model=m) for m in models], ignore_index=True)


def test_by_labels_typed_two_ways_raise(two_models):
    d = two_models.copy()
    d.loc[d.index[:10], "model"] = "GPT"
    with pytest.raises(ValueError, match=r"Column 'model' \(input to report\) .*'GPT' / 'gpt'"):
        report(d, tests=["ci"], progress=False, rng=1, **FAST)


def test_context_ids_typed_two_ways_raise(two_models):
    d = two_models.astype({"context": object})
    d.loc[d.repetition == 0, "context"] = d.loc[d.repetition == 0, "context"].astype(str)
    with pytest.raises(ValueError, match=r"Column 'context' \(input to report\)"):
        report(d, tests=["ci"], progress=False, rng=1, **FAST)


def test_lie_cells_that_match_no_data_cell_raise(two_models):
    e, lie = _lie(["GPT", "Llama"])
    with pytest.raises(ValueError, match=r"The 'lie' parameter of report .*'GPT' / 'gpt'.*"
                       r"2 cell\(s\) of LIE rows that match no cell"):
        report(two_models, lie=lie, lie_options={"baseline": e}, tests=["lie"],
               progress=False, rng=1, **FAST)


def test_a_cell_without_lie_rows_warns(two_models):
    e, lie = _lie(["gpt"])
    with pytest.warns(SkippedRecordsWarning, match=r"no rows for 1 of 2 cells \('llama'\)"):
        rep = report(two_models, lie=lie, lie_options={"baseline": e}, tests=["lie"],
                     progress=False, rng=1, **FAST)
    assert ["lie" in c.results for c in rep.cells] == [True, False]


def test_a_baseline_per_model_is_split_into_the_cells(two_models):
    # one baseline per model (a `model` column, as the LIE table's): every cell got the whole
    # baseline, each unit listed twice, and the check failed on both cells with an error
    # about the `state` column
    import coherence

    e, lie = _lie(["gpt", "llama"])
    lie.loc[lie["model"] == "llama", "p_y_given_x"] = 0.3
    base = pd.concat([e.assign(model="gpt", p_y_given_x=0.5),
                      e.assign(model="llama", p_y_given_x=0.45)], ignore_index=True)
    rep = report(two_models, lie=lie, lie_options={"baseline": base}, tests=["lie"],
                 progress=False, rng=1, **FAST)
    assert not rep.to_frame()["error"].any()
    for cell in rep.cells:
        m = cell.key["model"]
        direct = coherence.iterated_expectation_check(
            lie[lie["model"] == m], baseline=base[base["model"] == m], n_resamples=19)
        assert cell.results["lie"].statistic == direct.statistic
        assert cell.results["lie"].pvalue == direct.pvalue
    ratios = [c.results["lie"].statistic for c in rep.cells]
    assert ratios[0] != ratios[1]
    # a cell whose model the baseline lacks: an error naming it
    with pytest.raises(ValueError, match=r"'lie_options' parameter of report .*no baseline "
                       r"rows for 1 cell\(s\): 'llama'"):
        report(two_models, lie=lie, lie_options={"baseline": base[base["model"] == "gpt"]},
               tests=["lie"], progress=False, rng=1, **FAST)


def test_a_lie_table_with_some_of_the_cell_columns_raises(two_models):
    # cells by model and dataset, a LIE table with a model column only: it was checked whole
    # in a cell of its own ("lie table"), both models' rows pooled into one median ratio
    _, lie = _lie(["gpt", "llama"])
    lie["context"] = lie["model"] + lie["context"].astype(str)
    base = lie.drop(columns="model").assign(p_y_given_x=0.5)
    data = pd.concat([two_models.assign(dataset=ds) for ds in ("x", "y")], ignore_index=True)
    with pytest.raises(ValueError, match=r"'lie' parameter of report .*every cell column "
                       r"\['model', 'dataset'\].*with \['model'\] but without \['dataset'\]"):
        report(data, lie=lie, lie_options={"baseline": base}, tests=["lie"], progress=False,
               rng=1, **FAST)
    # with every cell column, or none, it runs
    rep = report(data, lie=lie.drop(columns="model"), lie_options={"baseline": base},
                 tests=["lie"], progress=False, rng=1, **FAST)
    assert [c.key for c in rep.cells if "lie" in c.results] == [
        {"model": "lie table", "dataset": "lie table"}]


def test_outcome_typed_two_ways_raises_and_text_outcomes_are_read_as_numbers(two_models):
    d = two_models.astype({"outcome": object})
    d.loc[d.index[:10], "outcome"] = d.loc[d.index[:10], "outcome"].astype(str)
    with pytest.raises(ValueError, match=r"Column 'outcome' \(input to report\)"):
        report(d, tests=["ci"], progress=False, rng=1, **FAST)
    text = two_models.assign(outcome=two_models.outcome.astype(float))
    a = report(two_models, tests=["ci"], progress=False, rng=1, **FAST).to_frame()
    b = report(text, tests=["ci"], progress=False, rng=1, **FAST).to_frame()
    assert a["statistic"].tolist() == b["statistic"].tolist()


@pytest.mark.parametrize("key", ["rng", "n_resampels"])
def test_lie_options_the_check_does_not_take_are_refused(two_models, key):
    # `rng` (the report gives each cell its stream) and a misspelt keyword failed every LIE
    # cell with one TypeError, recorded per cell; they are refused before any test runs
    e, lie = _lie(["gpt", "llama"])
    with pytest.raises(ValueError, match=rf"The 'lie_options' parameter of report .*"
                       rf"iterated_expectation_check.*key\(s\) '{key}'"):
        report(two_models, lie=lie, lie_options={"baseline": e, key: 3}, tests=["lie"],
               progress=False, rng=1, **FAST)


def test_by_labels_true_beside_text_true_raise(two_models):
    # True (built in Python) beside 'True' (read back from a CSV): two cells, both
    # labelled True in every table of the report, without a word
    d = two_models.assign(cot=pd.Series([True] * len(two_models), dtype=object))
    d.loc[d.model == "llama", "cot"] = "True"
    with pytest.raises(ValueError, match=r"Column 'cot' \(input to report\) must hold "
                       r"booleans or their text, not both"):
        report(d, by=["cot"], tests=["ci"], progress=False, rng=1, **FAST)


@pytest.mark.parametrize("relabel", [{"yes": "Yes", "no": "No", "defer": "Defer"},
                                     {"yes": "yes ", "no": "no", "defer": "defer"}])
def test_action_labels_spelt_otherwise_raise(two_models, relabel):
    # 'Yes' is no action of monotonicity's pairs: its rows were left out (or no pair was
    # testable, a blank p-value) with a note, while ci read them as a class
    d = two_models.assign(action=two_models["action"].astype(str).map(relabel))
    with pytest.raises(ValueError, match=r"Column 'action' \(input to report\) must hold the "
                       r"tests' action labels .*actions=\{"):
        report(d, tests=["monotonicity"], progress=False, rng=1, **FAST)
    # mapped with actions=, the report is the one of the tests' own labels
    mapped = report(d, actions={k: v for k, v in relabel.items() if k != v},
                    tests=["monotonicity"], progress=False, rng=1, **FAST).to_frame()
    plain = report(two_models, tests=["monotonicity"], progress=False, rng=1,
                   **FAST).to_frame()
    pd.testing.assert_series_equal(mapped["pvalue"], plain["pvalue"])
    # the tests that read the labels as classes only are left to run
    report(d, tests=["ci"], progress=False, rng=1, **FAST)


@pytest.mark.parametrize("bad", ["missing", "bool"])
def test_prompt_labels_missing_or_true_beside_text_true_raise(bad):
    # the prompt column is checked at the door as the by columns are: a row without a prompt
    # was left out of every prompt's rows, and True beside 'True' were two prompts
    d = coherence.simulate("rational", n_contexts=10, n_repetitions=2,
                           prompts=coherence.PROMPTS, rng=0).data
    prompt = d["prompt"].astype(object)
    if bad == "missing":
        prompt.iloc[5] = None
        kw, match = {}, r"Column 'prompt' \(input to report\) must not contain missing values"
    else:
        prompt = prompt.replace({"standard": "True"})
        prompt.iloc[[1, 3]] = True
        kw, match = ({"reference_prompt": "True"}, r"Column 'prompt' \(input to report\) must "
                     r"hold booleans or their text, not both")
    with pytest.raises(ValueError, match=match):
        report(d.assign(prompt=prompt), progress=False, rng=1, **FAST, **kw)


def _report_of_labels(*labels, errors=None):
    from coherence._report._result import CoherenceReport
    from coherence._report._result import ReportCell

    result = coherence.CoherenceResult(statistic=0.5, pvalue=0.25, n_obs=3, method="m",
                                       confidence_interval=coherence.ConfidenceInterval(
                                           0.1, 0.9, 0.95))
    cells = tuple(ReportCell(key={"model": label}, n_obs=3, results={"ci": result},
                             errors=errors or {"ci_evidence": "failed"}) for label in labels)
    return CoherenceReport(cells=cells, by=("model",), settings={})


def test_markdown_escapes_what_a_renderer_reads_as_html():
    """A label ``<unk>`` (an LLM's reply as a category) read as an HTML tag: the rendered
    Markdown showed an empty cell, ``<b>x</b>`` a bold x and ``&lt;`` a ``<``."""
    md = _report_of_labels("<unk>", "<b>x</b> &lt; y",
                           errors={"ci_evidence": "p < 0.05 \\<"}).to_markdown()
    rows = [re.split(r"(?<!\\) \| ", line.strip("| ")) for line in md.splitlines()[2:]]
    assert [r[0] for r in rows] == 2 * ["\\<unk>"] + 2 * ["\\<b>x\\</b> \\&lt; y"]
    assert "p \\< 0.05 \\\\\\<" in rows[1]  # a backslash before one doubled, as before |
    assert all(len(r) == len(md.splitlines()[0].split(" | ")) for r in rows)


def test_summary_keeps_a_label_with_a_line_break_on_its_row():
    """A label ``"gpt\\n4"`` broke the summary's table (and the command line's) in two: its
    row read "gpt" on one line and "4" with the figures on the next."""
    rep = _report_of_labels("gpt\n4", "gpt 4", "tab\there")
    lines = str(rep.summary()).split("\nTests that did not run")[0].splitlines()[1:]
    assert [line.split() for line in lines] == [["model", "ci"], ["gpt\\n4", "0.25"],
                                                 ["gpt", "4", "0.25"], ["tab\\there", "0.25"]]


def test_a_data_cell_named_like_the_lie_cell_raises(two_models):
    """A LIE table without the cell columns is checked in a cell labelled "lie table" in
    each; a data cell of that label merged with it into one row of summary_table (its ci
    beside the LIE check's p-value), read alike in to_frame. It raises, naming the column."""
    e, _ = _lie(["gpt"])
    data = two_models.replace({"model": {"llama": "lie table"}})
    with pytest.raises(ValueError, match=r"'lie' parameter of report .*labelled 'lie table' "
                       r"in \['model'\]"):
        report(data, by="model", lie=e, lie_options={"baseline": e.assign(p_y_given_x=0.5)},
               tests=["ci", "lie"], progress=False, rng=1, **FAST)
    # another label beside it runs as before, the LIE check in a cell of its own
    rep = report(two_models, by="model", lie=e,
                 lie_options={"baseline": e.assign(p_y_given_x=0.5)},
                 tests=["ci", "lie"], progress=False, rng=1, **FAST)
    assert rep.summary_table().index.tolist() == ["gpt", "llama", "lie table"]
