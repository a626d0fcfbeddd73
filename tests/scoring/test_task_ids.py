"""Task tables with one question or domain written two ways ('Q1' and 'q1', 1 and '1',
'Politics' and 'politics ') or a repeated question with two windows: dataset_statistics
(through validate_tasks) and simulated_dates raise, naming the rows, instead of counting
two questions or domains, or giving one question two simulated dates."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence


def _tasks(**change) -> pd.DataFrame:
    return pd.DataFrame({
        "question": ["a", "b", "c", "d"], "type": ["binary", "binary", "quantity", "binary"],
        "start": ["2024-01-01"] * 4,
        "resolution_date": ["2024-01-11", "2024-01-31", "2024-03-01", "2024-02-01"],
        "outcome": [1, 0, 3.5, 1], "domain": ["politics", "sports", "politics", None],
    }).assign(**change)


def test_dataset_statistics_counts():
    st_ = coherence.dataset_statistics(_tasks())
    assert st_.n_questions == 4
    assert dict(zip(st_.domains["domain"], st_.domains["n"], strict=True)) == {
        "politics": 2, "sports": 1, "(missing)": 1}
    # blank domains are all missing, however many spaces: one '(missing)' group, no error
    blank = coherence.dataset_statistics(_tasks(domain=["", "  ", None, "sports"]))
    assert dict(zip(blank.domains["domain"], blank.domains["n"], strict=True)) == {
        "(missing)": 3, "sports": 1}


@pytest.mark.parametrize("ids", [["Q1", "q1", "c", "d"], [1, "1", "c", "d"],
                                 ["a", "a ", "c", "d"]])
def test_question_written_two_ways_raises(ids):
    """Was four questions (two of them one question) without a word."""
    with pytest.raises(ValueError, match=r"Column 'question'.*validate_tasks.*row 0"):
        coherence.dataset_statistics(_tasks(question=ids))


def test_domain_written_two_ways_raises():
    """'politics', 'Politics' and 'politics ' were three domains of one question each
    (share 0.25 each) instead of one of three (0.75)."""
    with pytest.raises(ValueError, match=r"Column 'domain'.*'Politics'.*'politics'"):
        coherence.dataset_statistics(_tasks(domain=["politics", "Politics", "politics ",
                                                    None]))


def test_simulated_dates_question_written_two_ways_or_two_windows_raise():
    base = pd.DataFrame({"question": ["a", "b"], "start": ["2024-01-01"] * 2,
                         "resolution_date": ["2024-01-31", "2024-03-01"]})
    with pytest.raises(ValueError, match=r"Column 'question'.*simulated_dates.*'1' / 1"):
        coherence.simulated_dates(base.assign(question=[1, "1"]))
    # question 'a' twice with two windows: two midpoints, 2024-01-16 and 2024-02-15 12:00
    with pytest.raises(ValueError, match=r"Column 'resolution_date'.*same on every row"):
        coherence.simulated_dates(base.assign(question=["a", "a"]))
    # repeated with the same window: the same date on both rows
    out = coherence.simulated_dates(pd.concat([base, base.iloc[[0]]], ignore_index=True),
                                    positions=["early"], placement="uniform", rng=3)
    assert out["simulated_date"].iloc[0] == out["simulated_date"].iloc[2]


@settings(max_examples=25, deadline=None)
@given(st.lists(st.sampled_from(["Politics", "politics", "POLITICS", " politics",
                                 "sports"]), min_size=4, max_size=4))
def test_domains_raise_exactly_when_two_spellings(domains):
    spellings = {d for d in domains if d.strip().lower() == "politics"}
    if len(spellings) > 1:
        with pytest.raises(ValueError, match="Column 'domain'"):
            coherence.dataset_statistics(_tasks(domain=domains))
    else:
        out = coherence.dataset_statistics(_tasks(domain=domains))
        assert out.domains["n"].sum() == 4


@pytest.mark.parametrize("blank", ["", "  "])
def test_a_blank_question_id_raises(blank):
    """Regression: a blank question id ('' or spaces, a lost id) was accepted as a question
    of its own (and counted by dataset_statistics)."""
    with pytest.raises(ValueError, match=r"Column 'question' \(input to validate_tasks\) must "
                       r"hold a label on every row, not a blank string.*row 2"):
        coherence.validate_tasks(_tasks(question=["a", "b", blank, "d"]))
    with pytest.raises(ValueError, match=r"Column 'question'.*blank string"):
        coherence.dataset_statistics(_tasks(question=["a", "b", blank, "d"]))


@pytest.mark.parametrize("name", ["domain", "simulated_date"])
def test_an_optional_column_named_but_absent_raises(name):
    """Regression: domain='topic' with no column 'topic' counted no domain at all (an
    empty domains table) without a word; left at its default, an absent optional column
    is still skipped, and named explicitly where it exists it is read."""
    with pytest.raises(ValueError, match=rf"'{name}' parameter of validate_tasks must be "
                       r"a column of 'tasks'.*got 'topic'"):
        coherence.dataset_statistics(_tasks(), **{name: "topic"})
    bare = _tasks().drop(columns="domain")
    assert coherence.dataset_statistics(bare).domains.empty  # the default: optional
    renamed = _tasks().rename(columns={"domain": "topic"})
    st_ = coherence.dataset_statistics(renamed, domain="topic")
    assert dict(zip(st_.domains["domain"], st_.domains["n"], strict=True)) == {
        "politics": 2, "sports": 1, "(missing)": 1}
    assert coherence.validate_tasks(_tasks(), domain="domain").shape[0] == 4  # named, there


def test_a_horizon_days_column_that_disagrees_raises():
    """Regression: a table's own horizon_days (here in weeks) was overwritten with the
    days without a word; equal values (a table validated twice) still pass."""
    t = _tasks(horizon_days=[10 / 7, 30 / 7, 60 / 7, 31 / 7])
    with pytest.raises(ValueError, match=r"Column 'horizon_days' \(input to validate_tasks\) "
                       r"must equal 'resolution_date' - 'start' in days.*4 offending rows"):
        coherence.validate_tasks(t)
    once = coherence.validate_tasks(_tasks())
    assert once["horizon_days"].tolist() == [10.0, 30.0, 60.0, 31.0]
    again = coherence.validate_tasks(once)
    assert again["horizon_days"].tolist() == [10.0, 30.0, 60.0, 31.0]
