"""Source precision."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from coherence import DegenerateDataWarning
from coherence import SourcePrecisionResult
from coherence import source_precision


# --------------------------------------------------------------------------- source precision
def test_source_precision_by_hand():
    cites = pd.DataFrame({"model": ["m", "m", "m", "n", "n"],
                          "question": ["q1", "q2", "q3", "q1", "q1"],
                          "sources": [["a", "b", "a", "c"], [], ["x"], "a", "z"]})
    ref = pd.DataFrame({"question": ["q1", "q1", "q2", "q3"],
                        "sources": ["a", "c", ["y"], []]})
    res = source_precision(cites, ref, convention="code", n_resamples=100, rng=0)
    assert isinstance(res, SourcePrecisionResult)
    per = res.table.set_index(["model", "question"])["precision"]
    assert per[("m", "q1")] == pytest.approx(2 / 3)   # {a, b, c} ∩ {a, c} = 2 of 3
    assert np.isnan(per[("m", "q2")])                  # cites nothing
    assert per[("m", "q3")] == 0.0                     # reference is empty
    assert per[("n", "q1")] == 0.5                     # long form: {a, z}
    assert res.statistic == pytest.approx((2 / 3 + 0 + 0.5) / 3)
    assert res.n_no_citations == 1 and res.n_obs == 3
    paper = source_precision(cites, ref, n_resamples=100, rng=0)
    assert paper.table.set_index(["model", "question"])["precision"][("m", "q2")] == 0
    assert paper.statistic == pytest.approx((2 / 3 + 0 + 0 + 0.5) / 4)
    assert paper.n_no_citations == 1 and paper.n_obs == 4


def test_source_precision_validation():
    cites = {"model": ["m"], "question": ["q"], "sources": [["a"]]}
    with pytest.raises(ValueError, match="an entry for every cited question"):
        source_precision(cites, {"other": ["a"]})
    with pytest.raises(ValueError, match="column 'sources'"):
        source_precision({"model": ["m"], "question": ["q"]}, {"q": ["a"]})
    with pytest.raises(ValueError, match="'confidence_level' parameter of source_precision"):
        source_precision(cites, {"q": ["a"]}, confidence_level=2)
    with pytest.raises(ValueError, match="'convention' parameter of source_precision"):
        source_precision(cites, {"q": ["a"]}, convention="authors")
    with pytest.warns(DegenerateDataWarning, match="no forecast cites a source"):
        res = source_precision({"model": ["m"], "question": ["q"], "sources": [[]]},
                               {"q": ["a"]}, convention="code")
    assert np.isnan(res.statistic)
    with pytest.warns(DegenerateDataWarning, match="every precision is 0"):
        res = source_precision({"model": ["m"], "question": ["q"], "sources": [[]]},
                               {"q": ["a"]})
    assert res.statistic == 0.0 and res.n_obs == 1 and res.n_no_citations == 1


def test_source_precision_conventions():
    # issue 15: the paper scores a forecast that cites nothing 0; the authors' code drops it
    cites = {"model": ["m", "m"], "question": ["q1", "q2"], "sources": [["a"], []]}
    ref = {"q1": ["a"], "q2": ["a"]}
    paper = source_precision(cites, ref, n_resamples=20, rng=0)
    code = source_precision(cites, ref, convention="code", n_resamples=20, rng=0)
    assert paper.convention == "paper" and code.convention == "code"
    assert paper.statistic == 0.5 and paper.n_obs == 2
    assert code.statistic == 1.0 and code.n_obs == 1
    assert paper.n_no_citations == code.n_no_citations == 1
    assert list(paper.table["precision"]) == [1.0, 0.0]
    assert paper.to_frame()["convention"].iloc[0] == "paper"
    assert code.to_frame()["convention"].iloc[0] == "code"


def test_lists_written_as_text_are_refused():
    # issue 17: a CSV round trip turns ['a', 'b'] into "['a', 'b']", which used to count as
    # one unknown source (precision 0)
    cites = pd.DataFrame({"model": ["m"], "question": ["q"], "sources": ["['a', 'b']"]})
    with pytest.raises(ValueError, match=r"Column 'sources' \(input to source_precision\) must "
                       r"hold lists .*parse them first.*row 0 = \"\['a', 'b'\]\""):
        source_precision(cites, {"q": ["a", "b"]}, rng=0)
    ref = pd.DataFrame({"question": ["q"], "sources": ['["a", "b"]']})
    with pytest.raises(ValueError, match=r"Column 'sources' \(input to source_precision\)"):
        source_precision(cites.assign(sources=[["a"]]), ref, rng=0)
    parsed = cites.assign(sources=cites["sources"].map(__import__("ast").literal_eval))
    assert source_precision(parsed, {"q": ["a", "b"]}, n_resamples=10, rng=0).statistic == 1.0


@pytest.mark.parametrize("cell", [np.nan, None])
def test_a_missing_sources_cell_raises(cell):
    # only an empty list records a forecast that cites nothing
    c = pd.DataFrame({"model": ["m", "m"], "question": ["q1", "q2"], "sources": [["a"], cell]})
    with pytest.raises(ValueError, match=r"Column 'sources'.*missing.*row 1"):
        source_precision(c, {"q1": ["a"], "q2": ["b"]}, rng=0)
    ok = source_precision(c.assign(sources=[["a"], []]), {"q1": ["a"], "q2": ["b"]}, rng=0)
    assert ok.table["n_cited"].tolist() == [1, 0]


@pytest.mark.parametrize("item", [np.nan, None])
def test_a_missing_item_or_reference_cell_raises(item):
    # a missing item inside a list was skipped (the forecast cited one source fewer), and a
    # missing reference cell read as "no reference sources" (every citation wrong)
    c = pd.DataFrame({"model": ["m", "m"], "question": ["q1", "q2"],
                      "sources": [["a", item], ["b"]]})
    ref = {"q1": ["a"], "q2": ["b"]}
    with pytest.raises(ValueError, match=r"Column 'sources'.*inside a list.*row 0"):
        source_precision(c, ref, rng=0)
    good = c.assign(sources=[["a"], ["b"]])
    for bad in ({"q1": ["a"], "q2": item}, {"q1": ["a", item], "q2": ["b"]},
                pd.DataFrame({"question": ["q1", "q2"], "sources": [["a"], item]})):
        with pytest.raises(ValueError, match=r"Column 'sources' \(input to source_precision, "
                                             r"reference table\).*missing"):
            source_precision(good, bad, rng=0)
    assert source_precision(good, ref, rng=0).statistic == 1.0


def test_source_ids_typed_apart_are_one_source():
    # source ids read as numbers from one CSV and as text from another (a column with a
    # blank read as floats, too) name the same sources: the old code matched none (0.0)
    cites = pd.DataFrame({"model": ["m", "m", "m"], "question": ["q1", "q1", "q2"],
                          "sources": [1, np.int64(2), [3.0, "4", "4"]]})
    ref = {"q1": ["1", "9"], "q2": [3, 4.0]}
    res = source_precision(cites, ref, n_resamples=50, rng=0)
    per = res.table.set_index("question")
    assert per.loc["q1", "n_correct"] == 1 and per.loc["q1", "precision"] == 0.5
    assert per.loc["q2", "n_cited"] == 2 and per.loc["q2", "precision"] == 1.0
    assert res.statistic == 0.75
    # case and spaces still count: 'A' is not 'a', ' a' is not 'a'
    low = source_precision({"model": ["m"], "question": ["q"], "sources": [["A", " a"]]},
                           {"q": ["a"]}, n_resamples=50, rng=0)
    assert low.table["n_correct"].tolist() == [0]


@pytest.mark.parametrize("blank", ["", "  "])
def test_a_blank_source_id_raises(blank):
    """A blank id ('' inside a list, or a blank cell of the one-citation-per-row form) was
    counted as a cited source named '': citations ['a', ''] against reference {a} gave
    precision 0.5. It is a lost id and now raises, naming the row and its cell, as
    hindsight_graph_quality refuses it."""
    ref = {"q1": ["a"], "q2": ["b"]}
    c = pd.DataFrame({"model": ["m", "m"], "question": ["q1", "q2"],
                      "sources": [["a", blank], ["b"]]})
    with pytest.raises(ValueError, match=r"Column 'sources' \(input to source_precision\) "
                                         r"must not contain missing values \(None, NaN or a "
                                         r"blank string\).*row 0 = \['a', "):
        source_precision(c, ref, rng=0)
    rows = pd.DataFrame({"model": ["m"] * 3, "question": ["q1", "q1", "q2"],
                         "sources": ["a", blank, "b"]})
    with pytest.raises(ValueError, match=r"Column 'sources'.*1 offending row \(first: row 1"):
        source_precision(rows, ref, rng=0)
    assert source_precision(rows.iloc[[0, 2]], ref, rng=0).statistic == 1.0
