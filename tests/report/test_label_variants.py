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


#: labels Markdown, HTML or a terminal read otherwise than written
ODD_LABELS = ["*base*", "gpt_4_turbo", "__init__", "`x`", "[l](u)", "![i](u)", "#1", " #2",
              "~~s~~", "$5$", "a\\b\\-c\\", "a\\|b", "\\", "<script>x</script>", "&lt;",
              "he said \"hi\" 'x'", "a  b", "gpt\n4", "\u202eabc", "g\u200bpt", "gpt\xa04",
              "模型A", "🤖bot", "x" * 500, "|", "**b**", "1. x", "> q", "- y"]


def test_markdown_escapes_markdown_specials():
    """Only ``|``, ``<`` and ``&`` were escaped: a model ``*base*`` read as an italic
    "base", ``[l](u)`` as a link, ``a\\-b`` as "a-b". Rendered as a GFM table, every label
    and message reads as written, each row keeping its cells."""
    markdown_it = pytest.importorskip("markdown_it")
    import html

    from coherence._text import cell_label
    from coherence._text import one_line

    errors = {"ci_evidence": "e*rr_or_ `x`"}
    md = _report_of_labels(*ODD_LABELS, errors=errors).to_markdown()
    assert "| \\*base\\* |" in md and "| gpt\\_4\\_turbo |" in md and "| \\#1 |" in md
    assert "| 0.5 | 0.25 | 0.1 | 0.9 | 0.95 | 3 | 0.25 |" in md  # numbers stay plain
    page = markdown_it.MarkdownIt("commonmark").enable(["table", "strikethrough"]).render(md)
    rows = re.findall(r"<tr>(.*?)</tr>", page, re.S)
    head = re.findall(r"<th>(.*?)</th>", rows[0])
    assert head[:2] == ["model", "test"] and "pvalue_adjusted" in head
    assert len(rows) == 1 + 2 * len(ODD_LABELS)
    for i, label in enumerate(ODD_LABELS):
        for row in rows[1 + 2 * i:3 + 2 * i]:
            cells = [html.unescape(c).replace("\xa0", " ")
                     for c in re.findall(r"<td>(.*?)</td>", row, re.S)]
            assert len(cells) == len(head)
            assert cells[0] == cell_label({"model": label}) == one_line(label)
        assert cells[head.index("error")] == "e*rr_or_ `x`"


def test_labels_read_as_written_on_every_output(two_models):
    """A number label was rounded to 4 digits in summary() and to_markdown() (0.12345 and
    0.12346 read alike); the page read "gpt\\n4" as "gpt 4" and a right-to-left override
    reversed the label; a blank label read as nothing, and as "all rows" on the page."""
    rep = _report_of_labels(0.12345, 0.12346, "gpt\n4", "gpt 4", "\u202eabc", "a  b")
    shown = ["0.12345", "0.12346", "gpt\\n4", "gpt 4", "\\u202eabc", "a  b"]
    lines = str(rep.summary()).split("\nTests that did not run")[0].splitlines()[2:]
    assert [line.rsplit(None, 1)[0] for line in lines] == shown
    md = rep.to_markdown().splitlines()[2::2]
    assert [line.split(" | ")[0][2:] for line in md] == [
        "0.12345", "0.12346", "gpt\\\\n4", "gpt 4", "\\\\u202eabc", "a &nbsp;b"]
    page = rep.to_html()
    grid = re.findall(r"<tr><td>(.*?)<br>", page)
    assert grid == shown
    assert "white-space:pre-wrap" in page  # "a  b" is not "a b" there
    for blank in ("", "   "):
        with pytest.raises(ValueError, match=r"Column 'model' \(input to report\) must label "
                           r"every row \(a blank cell label"):
            report(two_models.replace({"model": {"llama": blank}}), tests=["ci"],
                   progress=False, rng=1, **FAST)
    from coherence._text import cell_label

    assert cell_label({"model": ""}) == "''" and cell_label({}) == "all rows"


def test_text_tables_pad_by_the_width_on_screen():
    """A label with wide characters (CJK, emoji) pushed its row's figures out of line:
    padding counted characters, not the columns they take."""
    from coherence._text import display_width
    from coherence._text import text_table

    frame = pd.DataFrame({"model": ["模型A", "🤖bot", "plain", "e\u0301te"],
                          "test": ["ci", "ci", "ci", "ci"], "p": [0.5, 0.25, 0.125, 1.0]})
    lines = text_table(frame).splitlines()
    assert len({display_width(line) for line in lines}) == 1  # every row as wide
    starts = {display_width(line[:line.index("ci" if i else "test")])  # the next column
              for i, line in enumerate(lines)}
    assert starts == {7}
    # a long one is cut to the limit on screen, not in characters
    cut = text_table(pd.DataFrame({"model": ["模" * 60 + "x"], "p": [0.5]}), width=60)
    assert display_width(cut.splitlines()[1].rsplit(None, 1)[0]) <= 30
    assert cut.splitlines()[1].split()[0].endswith("x")


@pytest.mark.parametrize("p", [0.05, np.nextafter(0.05, 1), np.nextafter(0.05, 0), 0.0500001,
                               0.0499999, 0.04999999999999])
def test_a_pvalue_reads_as_the_level_only_when_it_is_the_level(p):
    """The guard kept a p-value from rounding across 0.05 but not onto it: 0.0500001 read
    "0.05", which a verdict ``p <= 0.05`` (IIA's ``violates``) reads as flagged; the page
    stopped at 12 decimals, so 0.04999999999999 read "0.050000000000", shaded as below. In
    summary(), to_markdown(), the page and the command line's table the number shown lies on
    the side of 0.05 the p-value does: below, above or on it."""
    from coherence._report._result import CoherenceReport
    from coherence._report._result import ReportCell
    from coherence._text import text_table

    def side(x):
        return (float(x) > 0.05) - (float(x) < 0.05)

    r = coherence.CoherenceResult(statistic=0.5, pvalue=float(p), n_obs=3, method="m",
                                  confidence_interval=coherence.ConfidenceInterval(
                                      0.1, 0.9, 0.95))
    rep = CoherenceReport(cells=(ReportCell(key={"model": "a"}, n_obs=3, results={"ci": r},
                                            errors={}),), by=("model",),
                          settings={"adjust": "none"})
    md = rep.to_markdown().splitlines()[2].split(" | ")
    grid = re.search(r"<td( class='sig')?>p ([^<]+)<br>", rep.to_html())
    cli = text_table(rep.to_frame()[["test", "pvalue", "pvalue_adjusted"]]).splitlines()[1]
    shown = [str(rep.summary()).splitlines()[2].split()[-1], md[4], md[9], grid.group(2),
             *cli.split()[1:], re.search(r"p-value\s+(\S+)", str(r.summary())).group(1)]
    assert all(side(text) == side(p) for text in shown), shown
    assert (grid.group(1) is not None) == (p < 0.05)
    assert ("0.05" in shown) == (p == 0.05)


def test_figure_titles_show_the_label_as_written(two_models):
    """matplotlib read a title's ``$x$`` as maths (an italic x) and ``$5 or $10`` lost its
    dollars; a label of 500 characters made its figure 3,000 points wide, shrunk to
    nothing on the page. The title reads as written, wrapped."""
    data = two_models.replace({"model": {"gpt": "$x$ or $5$", "llama": "y" * 500}})
    page = report(data, tests=["calibration"], progress=False, rng=1, **FAST).to_html()
    svgs = re.findall(r"<svg.*?</svg>", page, re.S)
    titles = [t for s in svgs for t in re.findall(r"<text[^>]*>([^<]*)</text>", s)
              if t.startswith("calibration: ")]
    assert "calibration: $x$ or $5$" in titles
    widths = [float(w) for w in re.findall(r"<svg[^>]* width=\"([0-9.]+)pt\"", page)]
    assert len(widths) == 2 and max(widths) < 2 * min(widths)
