"""Hypothesis properties of ``random_forest_baseline`` and ``read_pairs``.

``random_forest_baseline``: the baseline of each (context, variable, state) does not
depend on the row order of the ground-truth sample, of the contexts or of the queries,
nor on the names of the contexts (order-reversing ones included) or on an irrelevant
column; its probabilities are probabilities and P(z | x) sums to 1 over the listed states.
``read_pairs``: a pairs table written in each documented layout (a two-direction run, a
run whose ``results`` map variants to records, CSV and parquet of what was read, the
published result file of tests/data) reads back to the same table, and records in another
order read back as the same rows in that order, with the same test results.
"""

from __future__ import annotations

import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from coherence import conditional_forecasting
from coherence import random_forest_baseline
from coherence import read_pairs

FAST = {"n_estimators": 5, "min_samples_leaf": (3, 10), "n_splits": 2}
KEY = ["context", "variable", "state"]
DATA = Path(__file__).parents[1] / "data" / "conditional-pairs"


# --------------------------------------------------------------------------- baseline
@st.composite
def worlds(draw: st.DrawFn) -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    """A ground-truth sample (one numeric and one text evidence column, 1-2 auxiliary
    variables of 2-3 states, many identical rows), 3-5 contexts and their queries."""
    rng = np.random.default_rng(draw(st.integers(0, 2**31 - 1)))
    n = draw(st.integers(80, 160))
    x1 = rng.integers(0, 3, n)
    x2 = rng.choice(["lo", "hi"], n)
    gt = pd.DataFrame({"x1": x1, "x2": x2})
    n_var = draw(st.integers(1, 2))
    logit = -0.5 + 0.4 * x1 + 0.6 * (x2 == "hi")
    for v in range(n_var):
        k = int(rng.integers(2, 4))
        z = (x1 + rng.integers(0, k, n)) % k
        gt[f"z{v}"] = z
        logit = logit + 0.5 * z
    gt["y"] = (rng.random(n) < 1 / (1 + np.exp(-logit))).astype(int)
    n_ctx = draw(st.integers(3, 5))
    contexts = pd.DataFrame({"context": [f"c{i}" for i in range(n_ctx)],
                             "x1": rng.integers(0, 3, n_ctx),
                             "x2": rng.choice(["lo", "hi"], n_ctx)})
    queries = pd.DataFrame([{"context": c, "variable": f"z{v}", "state": s}
                            for c in contexts["context"] for v in range(n_var)
                            for s in range(int(gt[f"z{v}"].max()) + 1)])
    return gt, contexts, queries


def baseline(gt, contexts, queries, **kw):
    out = random_forest_baseline(gt, contexts, queries, evidence=["x1", "x2"],
                                 **{"rng": 0, **FAST, **kw})
    return out.sort_values(KEY, kind="stable").reset_index(drop=True)


@given(worlds(), st.randoms(use_true_random=False))
@settings(max_examples=5)
def test_baseline_ignores_row_order_and_names_of_contexts(world, shuffle):
    gt, contexts, queries = world
    base = baseline(gt, contexts, queries)
    probs = base[["p_y_given_x", "p_y_given_xz", "p_z_given_x"]].to_numpy()
    assert np.all((probs >= 0) & (probs <= 1))
    mass = base.groupby(["context", "variable"])["p_z_given_x"].sum()
    np.testing.assert_allclose(mass, 1.0, rtol=1e-12)
    assert (base.groupby("context")["p_y_given_x"].nunique() == 1).all()

    def perm(d: pd.DataFrame) -> pd.DataFrame:
        order = list(range(len(d)))
        shuffle.shuffle(order)
        return d.iloc[order]
    again = baseline(perm(gt).assign(irrelevant=1.0), perm(contexts), perm(queries).iloc[::-1])
    pd.testing.assert_frame_equal(again, base, rtol=1e-12)
    # names in the reverse order of the old ones
    rename = {c: f"ctx-{9 - i}" for i, c in enumerate(contexts["context"])}
    other = baseline(gt, contexts.assign(context=contexts["context"].map(rename)),
                     queries.assign(context=queries["context"].map(rename)))
    back = other.assign(context=other["context"].map({v: k for k, v in rename.items()}))
    pd.testing.assert_frame_equal(back.sort_values(KEY, kind="stable").reset_index(drop=True),
                                  base, rtol=1e-12)


def _probe() -> tuple[pd.DataFrame, pd.DataFrame, pd.DataFrame]:
    rng = np.random.default_rng(0)
    n = 300
    x1, z1, z2 = rng.integers(0, 3, n), rng.integers(0, 2, n), rng.integers(0, 3, n)
    y = (rng.random(n) < 0.2 + 0.2 * z1 + 0.1 * x1).astype(int)
    gt = pd.DataFrame({"x1": x1, "x2": "a", "z1": z1, "z2": z2, "y": y})
    contexts = pd.DataFrame({"context": ["a", "b", "c"], "x1": [0, 1, 2], "x2": "a"})
    queries = pd.DataFrame([{"context": c, "variable": v, "state": s} for c in "abc"
                            for v, k in (("z1", 2), ("z2", 3)) for s in range(k)])
    return gt, contexts, queries


def test_baseline_regression_order_of_variables_and_of_the_sample():
    """Regression: the forests' seeds were drawn in the order the queries list the
    variables, and the forests' bootstrap and folds ran on the sample's row order: the
    same rng gave P(y | x, z) up to 0.07 apart for the queries reversed and P(y | x) 0.06
    apart for the sample shuffled."""
    gt, contexts, queries = _probe()
    opts = {"n_estimators": 10, "min_samples_leaf": (5,), "n_splits": 2}
    base = baseline(gt, contexts, queries, **opts)
    reversed_queries = baseline(gt, contexts, queries.iloc[::-1], **opts)
    shuffled = baseline(gt.sample(frac=1.0, random_state=1), contexts, queries, **opts)
    pd.testing.assert_frame_equal(reversed_queries, base, rtol=1e-12)
    pd.testing.assert_frame_equal(shuffled, base, rtol=1e-12)


# --------------------------------------------------------------------------- read_pairs
_prob = st.integers(0, 20).map(lambda k: k / 20)


def _write(folder: Path, results, meta) -> Path:
    path = folder / "run.json"
    path.write_text(json.dumps({"results": results, "metadata": meta}), encoding="utf-8")
    return path


@given(st.lists(st.tuples(_prob, _prob, _prob, _prob, _prob, _prob,
                          st.sampled_from(["strong", "weak", "none"]),
                          st.sampled_from(["v1", "v2"])), min_size=2, max_size=8),
       st.booleans(), st.permutations(range(8)))
@settings(max_examples=20)
def test_two_direction_and_variant_layouts_round_trip(tmp_path_factory, rows, by_variant,
                                                      order):
    recs = [{"pair_id": f"p{i}", "category": cat, "p_a": a, "p_a_given_b1": a1,
             "p_a_given_b0": a0, "p_b": b, "p_b_given_a1": b1, "p_b_given_a0": b0,
             "bayes_error_mean": 9.9, "variant": var}
            for i, (a, a1, a0, b, b1, b0, cat, var) in enumerate(rows)]
    folder = tmp_path_factory.mktemp("pairs")
    if by_variant:
        results: object = {}
        for r in recs:
            results.setdefault(r["variant"], []).append(
                {k: v for k, v in r.items() if k != "variant"})
        recs = [r for v in results for r in recs if r["variant"] == v]
    else:
        results = recs
    table = read_pairs(_write(folder, results, {"model": "m", "thinking": False}))
    assert table["pair"].tolist() == [r["pair_id"] for r in recs]
    assert table["variant"].tolist() == [r["variant"] for r in recs]
    for key in ("p_a", "p_a_given_b1", "p_a_given_b0", "p_b", "p_b_given_a1",
                "p_b_given_a0"):
        np.testing.assert_array_equal(table[key], [r[key] for r in recs])
    assert "bayes_error_mean" not in table and "a_outcome" not in table
    assert set(table["run"]) == {"m (thinking=False)"}
    # records in another order: the same rows in that order
    perm = [i for i in order if i < len(recs)]
    moved = read_pairs(_write(folder, [recs[i] for i in perm], {"model": "m",
                                                                "thinking": False}))
    pd.testing.assert_frame_equal(moved.drop(columns="source"),
                                  table.iloc[perm].reset_index(drop=True).drop(
                                      columns="source"))
    # what was read, written as CSV and parquet, reads back the same
    for name in ("pairs.csv", "pairs.parquet"):
        path = folder / name
        (table.to_csv(path, index=False) if name.endswith("csv")
         else table.to_parquet(path, index=False))
        again = read_pairs(path)
        pd.testing.assert_frame_equal(again, table, check_dtype=False)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_published_result_file_round_trips_and_ignores_row_order(tmp_path, suffix):
    (published,) = sorted(DATA.glob("*.json"))
    table = read_pairs(published)
    path = tmp_path / f"pairs{suffix}"
    (table.to_csv(path, index=False) if suffix == ".csv"
     else table.to_parquet(path, index=False))
    again = read_pairs(path)
    pd.testing.assert_frame_equal(again.drop(columns="source"),
                                  table.drop(columns="source"), check_dtype=False)
    # the records reversed: the same rows reversed, the same test results
    raw = json.loads(published.read_text(encoding="utf-8"))
    raw["results"] = raw["results"][::-1]
    rev_path = tmp_path / published.name
    rev_path.write_text(json.dumps(raw), encoding="utf-8")
    rev = read_pairs(rev_path)
    pd.testing.assert_frame_equal(rev.drop(columns="source"), table.iloc[::-1].reset_index(
        drop=True).drop(columns="source"))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = conditional_forecasting(table, n_resamples=99, rng=3)
        b = conditional_forecasting(rev, n_resamples=99, rng=3)
    fa, fb = a.to_frame(), b.to_frame()
    pd.testing.assert_frame_equal(fb, fa, rtol=1e-12)
