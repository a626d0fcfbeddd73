"""Decision tests: labels typed two ways raise, pair/order items match by value, and
``group=None`` does not depend on the order of the rows (audit items 1, 4, 5, 8)."""

import warnings

import numpy as np
import pandas as pd
import pytest

import coherence


@pytest.fixture(scope="module")
def leaky():
    return coherence.simulate("leaky", n_contexts=30, n_repetitions=2, rng=0).data


@pytest.fixture(scope="module")
def nonmonotone():
    return coherence.simulate("nonmonotone", n_contexts=60, n_repetitions=2, rng=0).data


def _mixed_context(df):
    d = df.astype({"context": object})
    rows = d.context.isin([1, 2]) & (d.repetition == 0)
    d.loc[rows, "context"] = d.loc[rows, "context"].astype(str)
    return d


@pytest.mark.parametrize(("test", "kw"), [
    (coherence.ci_test, {"n_resamples": 9, "ci_method": None}),
    (coherence.leakage_test, {"n_permutations": 9, "n_resamples": 9, "n_fold_draws": 1}),
    (coherence.monotonicity_test, {"n_resamples": 9, "method": "permutation"}),
    (coherence.cyclic_monotonicity_test, {"n_resamples": 9}),
])
def test_context_ids_typed_two_ways_raise(leaky, test, kw):
    with pytest.raises(ValueError, match=r"Column 'context' .*'1' / 1"):
        test(_mixed_context(leaky), rng=1, **kw)


def test_outcome_typed_two_ways_raises(leaky):
    d = leaky.astype({"outcome": object})
    d.loc[d.context < 10, "outcome"] = d.loc[d.context < 10, "outcome"].astype(str)
    with pytest.raises(ValueError, match=r"Column 'outcome' .*differ by more than case"):
        coherence.ci_test(d, n_resamples=9, ci_method=None, rng=1)


def test_monotonicity_action_variants_raise(nonmonotone):
    d = nonmonotone.astype({"action": str})
    d.loc[d.index[:10][d.action[:10] == "no"], "action"] = "No"
    d.loc[d.index[10:20][d.action[10:20] == "no"], "action"] = "no "
    with pytest.raises(ValueError, match=r"Column 'action' .*differ by more than case"):
        coherence.monotonicity_test(d, pairs=[("yes", "no")], n_resamples=9, rng=1)


def test_integer_pairs_name_integer_actions(nonmonotone):
    d = nonmonotone.assign(action=nonmonotone.action.map({"no": 0, "defer": 1, "yes": 2}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        by_int = coherence.monotonicity_test(d, pairs=[(2, 0), (1, 0)], n_resamples=19,
                                             rng=1)
        by_str = coherence.monotonicity_test(d, pairs=[("2", "0"), ("1", "0")],
                                             n_resamples=19, rng=1)
    assert by_int.table["testable"].all() and not np.isnan(by_int.pvalue)
    assert by_int.pvalue == by_str.pvalue and by_int.n_obs == by_str.n_obs == len(d)


def test_pairs_of_one_label_typed_two_ways_are_rejected(nonmonotone):
    with pytest.raises(ValueError, match="The 'pairs' parameter of monotonicity_test"):
        coherence.monotonicity_test(nonmonotone, pairs=[(2, "2")], n_resamples=9, rng=1)


def test_cyclic_order_accepts_integer_labels(leaky):
    d = leaky.assign(action=leaky.action.map({"no": 0, "defer": 1, "yes": 2}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # 30 contexts: the small-sample note
        by_int = coherence.cyclic_monotonicity_test(d, order=(0, 1, 2), n_resamples=19,
                                                    rng=1)
        by_str = coherence.cyclic_monotonicity_test(leaky, n_resamples=19, rng=1)
    assert by_int.pvalue == by_str.pvalue and by_int.statistic == by_str.statistic
    with pytest.raises(TypeError, match="The 'order' parameter of cyclic_monotonicity_test"):
        coherence.cyclic_monotonicity_test(d, order=(0.5, 1, 2), n_resamples=9, rng=1)


@pytest.mark.parametrize(("test", "kw"), [
    (coherence.ci_test, {"n_resamples": 19}),
    (coherence.monotonicity_test, {"n_resamples": 19, "method": "permutation"}),
    (coherence.cyclic_monotonicity_test, {"n_resamples": 19}),
])
def test_group_none_does_not_depend_on_row_order(leaky, test, kw):
    shuffled = leaky.sample(frac=1, random_state=5)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        a = test(leaky, group=None, rng=1, **kw)
        b = test(shuffled, group=None, rng=1, **kw)
    assert a.pvalue == b.pvalue and a.statistic == b.statistic
    assert tuple(a.confidence_interval) == pytest.approx(tuple(b.confidence_interval),
                                                          nan_ok=True)


def test_text_context_ids_without_variants_still_run(leaky):
    d = leaky.assign(context="c" + leaky.context.astype(str))
    res = coherence.ci_test(d, n_resamples=9, ci_method=None, rng=1)
    assert np.isfinite(res.statistic)
    assert isinstance(pd.Series(d.context).iloc[0], str)


def _bools_and_text(s):
    """Booleans on even rows, their text ('True'/'False') on odd ones: a CSV-read table
    concatenated with one built in Python."""
    flags = s.astype(object)
    return flags.where(np.arange(len(s)) % 2 == 0, flags.astype(str))


@pytest.mark.parametrize(("test", "column", "kw"), [
    (coherence.ci_test, "outcome", {"n_resamples": 9, "ci_method": None}),
    (coherence.ci_test, "action", {"n_resamples": 9, "ci_method": None}),
    (coherence.ci_test, "evidence", {"n_resamples": 9, "ci_method": None,
                                     "evidence": ["evidence"]}),
    (coherence.leakage_test, "action", {"n_permutations": 9, "n_resamples": 9,
                                        "n_fold_draws": 1}),
    (coherence.leakage_test, "evidence", {"n_permutations": 9, "n_resamples": 9,
                                          "n_fold_draws": 1, "evidence": ["evidence"]}),
    (coherence.monotonicity_test, "action", {"n_resamples": 9, "method": "permutation",
                                             "pairs": [("True", "False")]}),
])
def test_booleans_beside_their_text_raise(leaky, test, column, kw):
    """True and 'True' in one column were two labels (a 40-context study: ci_test's
    statistic moved from
    0.045 to -0.068 (outcome) and 0.007 to -0.109 (action), leakage_test's from 17.9 to
    7.0, monotonicity_test dropped half its rows), all without a word."""
    d = leaky.assign(action=leaky.action.astype(str) == "yes",
                     outcome=leaky.outcome.astype(bool),
                     evidence=leaky.context % 3 == 0)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # few resamples, few contexts
        test(d, rng=1, **kw)  # the clean spelling runs
    d[column] = _bools_and_text(d[column])
    with pytest.raises(ValueError, match=rf"Column '{column}' .*booleans or their text"):
        test(d, rng=1, **kw)
