"""The same table in another pandas dtype gives the same answer (or a clear error).

Complements ``test_fuzz.py`` (whose variants are ``convert_dtypes``, arrow dtypes and
label columns as categoricals with their categories sorted) with the variants it does not
draw: categoricals whose categories are in another order, ordered, or include labels no
row has.
"""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import coherence
from coherence import _validation as v


def _study() -> pd.DataFrame:
    d = coherence.simulate("rational", n_contexts=30, rng=1).data
    return d.assign(context=[f"c{c:02d}" for c in d["context"]])


def _reordered(s: pd.Series, *, ordered: bool) -> pd.Categorical:
    """The column as a categorical whose categories run backwards, with one no row has."""
    return pd.Categorical(s, categories=[*sorted(s.unique())[::-1], "unused"], ordered=ordered)


@pytest.mark.parametrize("ordered", [False, True])
def test_label_column_codes_a_categorical_by_its_values(ordered):
    df = pd.DataFrame({"g": ["b", "a", "c", "a"]})
    want = v.label_column(df, "g")
    got = v.label_column(df.assign(g=_reordered(df["g"], ordered=ordered)), "g")
    assert got[0].tolist() == want[0].tolist() == [1, 0, 2, 0]
    assert list(got[1]) == list(want[1]) == ["a", "b", "c"]


_CALLS = {
    "ci_test": lambda d: coherence.ci_test(d, n_resamples=199, rng=0),
    "leakage_test": lambda d: coherence.leakage_test(d, engine="logistic", n_splits=2,
                                                     n_resamples=19, n_permutations=2, rng=0),
    "report": lambda d: coherence.report(d, tests=["ci"], n_resamples=19, progress=False,
                                         rng=0).to_frame(),
}


@pytest.mark.parametrize("name", sorted(_CALLS))
def test_context_categories_in_another_order_change_nothing(name):
    """The contexts numbered by a categorical's category order renumbered the clusters of
    the bootstrap: ci_test's p-value read 0.08 where it is 0.09."""
    data = _study()
    cat = data.assign(context=_reordered(data["context"], ordered=True))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", coherence.CoherenceWarning)
        want, got = _CALLS[name](data), _CALLS[name](cat)
    if isinstance(want, pd.DataFrame):
        pd.testing.assert_frame_equal(got, want)
    else:
        assert (got.statistic, got.pvalue) == (want.statistic, want.pvalue)
        assert np.allclose(tuple(got.confidence_interval), tuple(want.confidence_interval),
                           rtol=0, atol=0)


@pytest.mark.filterwarnings("ignore:.*cover less than their level:coherence.SmallSampleWarning")
def test_forecastbench_question_categories_in_another_order_change_nothing():
    """The questions numbered by category order moved the question bootstrap's interval:
    (0.279, 0.439) where it is (0.258, 0.444)."""
    rng = np.random.default_rng(0)
    questions = [f"q{i:02d}" for i in range(12)]
    data = pd.DataFrame({"model": np.repeat(["a", "b", "c"], 12), "question": questions * 3,
                         "probability": np.round(rng.uniform(0.05, 0.95, 36), 2),
                         "outcome": np.tile(rng.integers(0, 2, 12), 3)})
    cat = data.assign(question=_reordered(data["question"], ordered=True),
                      model=_reordered(data["model"], ordered=False))

    def scores(d: pd.DataFrame) -> pd.DataFrame:
        return coherence.forecastbench_scores(d, naive="c", n_resamples=199, rng=0).to_frame()

    pd.testing.assert_frame_equal(scores(cat), scores(data))
