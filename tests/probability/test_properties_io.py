"""Hypothesis properties of ``read_consistency_tuples`` and ``attach_outcomes``.

Round trips: tuples written in the released files' layout (both record forms, a file
named after the checker) read back to the same table, whose consistency check equals the
check of the original; ``attach_outcomes`` borrows each pair's resolutions by id whatever
the order of the resolved run, keeps the rows and values of ``pairs``, and leaves failed
rows unresolved.
"""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from coherence import CHECKERS
from coherence import attach_outcomes
from coherence import consistency_check
from coherence import read_consistency_tuples

#: one tuple, or tuples of one violation, give a point interval with a warning; these
#: properties read the violations, not the interval
pytestmark = pytest.mark.filterwarnings(
    "ignore:.*is the point itself:coherence.SmallSampleWarning")

AUTHORS = {"negation": "NegChecker", "and": "AndChecker", "cond": "CondChecker"}


@given(st.sampled_from(sorted(AUTHORS)), st.data(), st.booleans(), st.booleans())
@settings(max_examples=25)
def test_consistency_tuples_round_trip(tmp_path_factory, name, data, wrapped, from_file):
    questions = list(CHECKERS[name])
    rows = data.draw(st.lists(st.lists(st.integers(0, 100).map(lambda k: k / 100),
                                       min_size=len(questions), max_size=len(questions)),
                              min_size=1, max_size=8, unique_by=tuple))  # a repeat is refused
    lines = []
    for r in rows:
        if wrapped:
            rec = {"line": {q: {"forecast": {"prob": p}, "title": q}
                            for q, p in zip(questions, r, strict=True)},
                   "violation_data": {}}
        else:
            rec = {q: {"elicited_prob": p} for q, p in zip(questions, r, strict=True)}
        lines.append(json.dumps(rec))
    if from_file:
        path = tmp_path_factory.mktemp("tuples") / f"{AUTHORS[name]}.jsonl"
        path.write_text("\n".join(lines) + "\n", encoding="utf-8")
        table = read_consistency_tuples(path)
    else:
        table = read_consistency_tuples(lines, checker=name)
    assert table.attrs["checker"] == name
    expected = pd.DataFrame(rows, columns=questions, dtype=float)
    pd.testing.assert_frame_equal(table[questions].reset_index(drop=True), expected)
    a = consistency_check(table, name, n_resamples=19, rng=0)
    b = consistency_check(expected, name, n_resamples=19, rng=0)
    assert a.to_frame().equals(b.to_frame())


@st.composite
def runs(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame]:
    n = draw(st.integers(1, 10))
    ids = draw(st.permutations([f"p{i}" for i in range(n)]))
    cats = draw(st.lists(st.sampled_from(["econ", "sci"]), min_size=n, max_size=n))
    a = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    b = draw(st.lists(st.integers(0, 1), min_size=n, max_size=n))
    failed = draw(st.lists(st.integers(0, 4), min_size=n, max_size=n))
    pairs = pd.DataFrame({"pair": ids, "category": cats,
                          "p_a": np.linspace(0.1, 0.9, n),
                          "error": [None if f else "timeout" for f in failed]})
    resolved = pd.DataFrame({"pair": ids, "category": cats, "a_outcome": a, "b_outcome": b,
                             "error": None})
    order = draw(st.permutations(range(n)))
    return pairs, resolved.iloc[list(order)]


@given(runs(), st.booleans())
@settings(max_examples=40)
def test_attach_outcomes_borrows_by_pair_whatever_the_order(run, twice):
    pairs, resolved = run
    if twice:  # the same run read twice agrees with itself
        resolved = pd.concat([resolved, resolved.iloc[::-1]], ignore_index=True)
    out = attach_outcomes(pairs, resolved)
    pd.testing.assert_frame_equal(out[list(pairs.columns)], pairs)
    truth = resolved.drop_duplicates("pair").set_index("pair")
    ok = pairs["error"].isna().to_numpy()
    for i, pid in enumerate(pairs["pair"]):
        if ok[i]:
            assert out["a_outcome"].iloc[i] == truth.loc[pid, "a_outcome"]
            assert out["b_outcome"].iloc[i] == truth.loc[pid, "b_outcome"]
        else:
            assert np.isnan(out["a_outcome"].iloc[i]) and np.isnan(out["b_outcome"].iloc[i])
