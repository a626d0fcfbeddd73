"""report: cells are keyed by their labels, never by the labels' joined text. With two
``by`` columns, ("a, b", "c") and ("a", "b, c") were both named "a, b, c"."""

import dataclasses
import html
import re

import pandas as pd
import pytest

import coherence
from coherence import report
from coherence._report._not_run import cell_label


@pytest.fixture(scope="module")
def colliding():
    """Two cells whose labels, joined by ", ", read alike: a coherent agent at
    ("a, b", "c"), a leaky one (the ci test flags it) at ("a", "b, c")."""
    a = coherence.simulate("rational", n_contexts=40, n_repetitions=2, rng=0).data
    b = coherence.simulate(coherence.Agent.leaky(strength=0.9), n_contexts=40,
                           n_repetitions=2, rng=1).data
    data = pd.concat([a.assign(model="a, b", dataset="c"),
                      b.assign(model="a", dataset="b, c")], ignore_index=True)
    rep = report(data, by=("model", "dataset"), tests=["ci"], progress=False, rng=1,
                 n_resamples=99)
    return data, rep


def _rows(page: str, heading: str) -> list[list[str]]:
    """The text of each body row of the first table after ``heading``."""
    part = page[page.index(heading):]
    part = part[:part.index("</table>")]
    return [[html.unescape(re.sub("<[^>]+>", "", td)).strip()
             for td in re.findall(r"<td[^>]*>(.*?)</td>", tr, flags=re.S)]
            for tr in re.findall(r"<tr>(.*?)</tr>", part, flags=re.S) if "<td" in tr]


def test_ground_truth_lands_on_its_own_cell(colliding):
    _, rep = colliding
    flagged = rep.summary_table().loc[("a", "b, c"), "ci"]
    assert flagged < 0.05 < rep.summary_table().loc[("a, b", "c"), "ci"]
    # a truth table indexed by the by columns, and one indexed by the cells' labels
    truth = pd.DataFrame({"model": ["a, b", "a"], "dataset": ["c", "b, c"],
                          "violates by design": ["-", "ci"]}).set_index(["model", "dataset"])
    rows = _rows(dataclasses.replace(rep, truth=truth).to_html(), "Ground truth")
    # the fails-here column was "not in the report" for both cells
    assert rows == [["a, b", "c", "-", "-"], ["a", "b, c", "ci", "ci"]]
    by_label = pd.DataFrame({"violates by design": ["-", "ci"]},
                            index=pd.Index([cell_label({"m": "a, b", "d": "c"}),
                                            cell_label({"m": "a", "d": "b, c"})], name="cell"))
    rows = _rows(dataclasses.replace(rep, truth=by_label).to_html(), "Ground truth")
    assert [r[1:] for r in rows] == [["-", "-"], ["ci", "ci"]]


def test_cells_whose_joined_labels_collide_are_named_apart(colliding):
    _, rep = colliding
    names = [cell_label(c.key) for c in rep.cells]
    assert names == ["a, 'b, c'", "'a, b', c"]  # both were "a, b, c"
    grid = _rows(rep.to_html(), "Which model fails which property")
    assert [r[0].split("n =")[0].strip() for r in grid] == names
    # ordinary labels, and a single by column's label, read as written
    assert cell_label({"model": "gpt-4", "dataset": "qa"}) == "gpt-4, qa"
    assert cell_label({"model": "a, b"}) == "a, b"
    assert cell_label({}) == "all rows"
    assert len({cell_label({"m": m, "d": d}) for m, d in [
        ("'a", "b'"), ("a, b", "c"), ("a", "b, c"), ('"a', "b"), ("a', 'b", "c")]}) == 5


def test_cli_names_colliding_cells_apart(colliding, tmp_path, capsys):
    from coherence_cli import main

    data, _ = colliding
    path = tmp_path / "study.csv"
    data.to_csv(path, index=False)
    main(["test", str(path), "--by", "model,dataset", "--tests", "ci", "--resamples", "19",
          "--quiet", "--seed", "1"])
    out = capsys.readouterr().out
    every = out[out.index("Every result"):]
    assert "a, 'b, c'" in every and "'a, b', c" in every
    assert "a, b, c" not in every
