"""Tests of read_pairs."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest

from coherence import read_pairs
from tests.probability._helpers import coherent_pairs


# --------------------------------------------------------------------------- read_pairs
def _record(i: int, **extra):
    rec = {"pair_id": f"p{i}", "category": "strong", "reason": "r", "p_a": 0.3,
           "p_a_given_b1": 0.6, "p_a_given_b0": 0.2, "resolution_a": 1.0,
           "resolution_b": 0.0, "improvement": 99.0}
    rec.update(extra)
    return rec


def test_read_pairs_json(tmp_path):
    path = tmp_path / "run.json"
    recs = [_record(0), _record(1, p_b=0.5, p_b_given_a1=0.4, p_b_given_a0=0.2)]
    path.write_text(json.dumps({"results": recs, "metadata": {"model": "m"}}))
    table = read_pairs(path)
    assert table.columns.tolist() == ["pair", "category", "p_a", "p_a_given_b1", "p_a_given_b0",
                                      "a_outcome", "b_outcome", "p_b", "p_b_given_a1",
                                      "p_b_given_a0", "model"]
    assert np.isnan(table["p_b"].iloc[0]) and table["p_b"].iloc[1] == 0.5
    assert (table["model"] == "m").all()


def test_read_pairs_csv(tmp_path):
    df = coherent_pairs(5, np.random.default_rng(0))
    df.to_csv(tmp_path / "pairs.csv", index=False)
    table = read_pairs(tmp_path / "pairs.csv")
    np.testing.assert_allclose(table["p_a"], df["p_a"])


def test_read_pairs_errors(tmp_path):
    path = tmp_path / "run.json"
    path.write_text(json.dumps({"results": [_record(0), {"pair_id": "x"}]}))
    with pytest.raises(ValueError, match=r"read_pairs: key 'category' is missing from 1 "
                       r"record\(s\) .* \(first: 1\)"):
        read_pairs(path)
    path.write_text(json.dumps([_record(0)]))
    with pytest.raises(ValueError, match="must hold a JSON object with a 'results' list"):
        read_pairs(path)
    path.write_text(json.dumps({"results": []}))
    with pytest.raises(ValueError, match=r"'results' list .* is empty"):
        read_pairs(path)
    with pytest.raises(ValueError, match=r"The 'path' parameter of read_pairs must be a \.json"):
        read_pairs(tmp_path / "x.txt")
    pd.DataFrame({"pair": [1]}).to_csv(tmp_path / "bad.csv", index=False)
    with pytest.raises(ValueError, match="read_pairs: column 'category'"):
        read_pairs(tmp_path / "bad.csv")
