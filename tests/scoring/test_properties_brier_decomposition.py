"""Hypothesis properties of brier_decomposition: the negation checker's projection in
closed form, Murphy's terms against a loop over bins, the exact identity, bounds, and
invariance of values and intervals to the order of the rows and to names (questions and
sets relabelled order-preservingly give the same intervals, order-reversingly the same
values).
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence

_probs = st.one_of(st.sampled_from([0.0, 0.1, 0.3, 0.5, 0.7, 0.9, 1.0]),
                   st.floats(0.0, 1.0))


@st.composite
def _negation_sets(draw: st.DrawFn) -> pd.DataFrame:
    """2..8 negation sets (P, not_P); some coherent, some reuse an earlier question."""
    rows = []
    outcomes: dict[str, int] = {}
    for s in range(draw(st.integers(2, 8))):
        q = f"q{draw(st.integers(0, 5))}"
        y = outcomes.setdefault(q, draw(st.integers(0, 1)))
        p = draw(_probs)
        p_not = 1.0 - p if draw(st.booleans()) else draw(_probs)
        rows.append({"set": f"s{s}", "role": "P", "question": q, "probability": p,
                     "outcome": y})
        rows.append({"set": f"s{s}", "role": "not_P", "question": f"not {q}",
                     "probability": p_not, "outcome": 1 - y})
    return pd.DataFrame(rows)


def _decompose(df: pd.DataFrame, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", coherence.SmallSampleWarning)
        return coherence.brier_decomposition(df, **kw)


def _bin(q: float, n_bins: int) -> int:
    """The documented bins [k/n, (k+1)/n) (edges as computed in floating point), the
    last closed at 1."""
    return min(max(k for k in range(n_bins + 1) if k / n_bins <= q), n_bins - 1)


@settings(max_examples=40)
@given(_negation_sets(), st.sampled_from([1, 3, 10]))
def test_negation_projection_and_murphy_terms_by_hand(df, n_bins):
    """Each set is projected to ((p - r + 1)/2, (r - p + 1)/2), a coherent one left bit for
    bit; the components are Murphy's terms of the projected forecasts computed over bins by
    hand, they add up to the Brier score, and none is negative where it cannot be."""
    res = _decompose(df, checker="negation", n_bins=n_bins, n_resamples=20, rng=0)
    per = res.per_forecast
    n_moved = 0
    for _s, sub in df.groupby("set"):
        p = float(sub.loc[sub["role"] == "P", "probability"].iloc[0])
        r = float(sub.loc[sub["role"] == "not_P", "probability"].iloc[0])
        got = per.loc[sub.index, "projected"].to_numpy()
        if abs(p + r - 1.0) <= 1e-10:
            np.testing.assert_array_equal(got, sub["probability"].to_numpy())
        else:
            n_moved += 1
            np.testing.assert_allclose(got, [(p - r + 1) / 2, (r - p + 1) / 2], atol=1e-9)
    assert res.n_incoherent == n_moved and res.n_sets == df["set"].nunique()
    q, y, p = per["projected"].to_numpy(), per["outcome"].to_numpy(), per["probability"]
    bins: dict[int, list[tuple[float, float]]] = {}
    for qi, yi in zip(q, y, strict=True):
        bins.setdefault(_bin(qi, n_bins), []).append((qi, yi))
    ybar = y.mean()
    rel = sum(len(v) * (np.mean([a for a, _ in v]) - np.mean([b for _, b in v])) ** 2
              for v in bins.values()) / len(q)
    res_ = sum(len(v) * (np.mean([b for _, b in v]) - ybar) ** 2
               for v in bins.values()) / len(q)
    assert res.brier == pytest.approx(np.mean((p - y) ** 2), abs=1e-12)
    assert res.coherent_brier == pytest.approx(np.mean((q - y) ** 2), abs=1e-12)
    assert res.reliability == pytest.approx(rel, abs=1e-12)
    assert res.resolution == pytest.approx(res_, abs=1e-12)
    assert res.uncertainty == pytest.approx(ybar * (1 - ybar), abs=1e-12)
    total = res.incoherence + res.reliability - res.resolution + res.uncertainty
    assert total + res.within_bin == pytest.approx(res.brier, abs=1e-12)
    # the projection never raises a set's score: incoherence >= 0, set by set
    for s, sub in per.groupby("set"):
        assert sub["projected_brier"].sum() <= sub["brier"].sum() + 1e-12, s
    assert min(res.reliability, res.resolution, res.uncertainty) >= -1e-15
    for row in res.table.to_dict("records"):
        assert row["ci_low"] <= row["ci_high"] + 1e-15


def _values(res) -> np.ndarray:
    return res.table[["value", "ci_low", "ci_high"]].to_numpy()


@settings(max_examples=25)
@given(_negation_sets(), st.randoms(use_true_random=False))
def test_row_order_and_names_with_the_same_rng(df, rnd):
    """Shuffled rows, and questions and sets renamed order-preservingly, give the same
    components and intervals with the same rng; renamed order-reversingly (and with an
    unused column, columns renamed through the parameters) the same components."""
    a = _decompose(df, checker="negation", n_bins=5, n_resamples=40, rng=4)
    perm = list(range(len(df)))
    rnd.shuffle(perm)
    b = _decompose(df.iloc[perm], checker="negation", n_bins=5, n_resamples=40, rng=4)
    np.testing.assert_allclose(_values(b), _values(a), rtol=1e-10, atol=1e-12)
    keep = df.assign(question="x-" + df["question"], set="set " + df["set"])
    c = _decompose(keep, checker="negation", n_bins=5, n_resamples=40, rng=4)
    np.testing.assert_allclose(_values(c), _values(a), rtol=1e-10, atol=1e-12)
    flip = {f"q{i}": f"z{9 - i}" for i in range(10)}
    rev = (df.assign(question=df["question"].map(lambda q: q.replace(q.split()[-1],
                                                                     flip[q.split()[-1]])),
                     set=df["set"].map(lambda s: f"t{99 - int(s[1:])}"), note=1.5)
           .rename(columns={"question": "item", "probability": "p", "outcome": "y",
                            "set": "bundle", "role": "part"}))
    d = _decompose(rev, checker="negation", question="item", probability="p", outcome="y",
                   group="bundle", role="part", n_bins=5, n_resamples=40, rng=4)
    np.testing.assert_allclose(d.table["value"], a.table["value"], rtol=1e-10, atol=1e-12)
    assert (d.n_clusters, d.n_incoherent) == (a.n_clusters, a.n_incoherent)


@settings(max_examples=25)
@given(st.lists(st.tuples(st.integers(0, 7), _probs), min_size=2, max_size=20))
def test_without_a_checker_there_is_no_incoherence(rows):
    """No checker: nothing is projected, incoherence is 0 and the coherent Brier score is
    the Brier score; one cluster per question."""
    outcomes = {q: q % 2 for q, _ in rows}
    df = pd.DataFrame({"question": [f"q{q}" for q, _ in rows],
                       "probability": [p for _, p in rows],
                       "outcome": [outcomes[q] for q, _ in rows]})
    res = _decompose(df, n_resamples=20, rng=0)
    assert res.incoherence == 0.0 and res.n_sets == 0 and res.n_incoherent == 0
    assert res.coherent_brier == res.brier
    assert res.n_clusters == df["question"].nunique()
    np.testing.assert_array_equal(res.per_forecast["projected"], df["probability"])
