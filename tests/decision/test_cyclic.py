"""Tests of the cyclic-monotonicity test over ordered actions (coherence._decision._cyclic)."""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import coherence
from benchmarks.cyclic_designs import Design
from benchmarks.cyclic_designs import generate
from coherence import CyclicMonotonicityResult
from coherence import DegenerateDataWarning
from coherence import cyclic_monotonicity_test
from coherence._decision._cyclic import cumulative_outcomes
from coherence._decision._cyclic import distance_to_monotone
from coherence._decision._cyclic import isotonic_fit

ORDER = ("no", "defer", "yes")


def _toy(n_contexts: int = 40, seed: int = 0) -> pd.DataFrame:
    return generate(Design(n_contexts=n_contexts), seed)


@pytest.fixture(scope="module")
def null_study() -> pd.DataFrame:
    return generate(Design(n_contexts=300), 21)


@pytest.fixture(scope="module")
def violating_study() -> pd.DataFrame:
    # defer takes 90% of yes above belief 0.75: P(yes) falls from about 0.4 to 0.05
    return generate(Design(n_contexts=400, agent="steal", delta=0.9, onset=0.7, width=0.05),
                    22)


# --------------------------------------------------------------------------- validation
@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    ({"belief": 3}, TypeError, "'belief' parameter of cyclic_monotonicity_test must be a column"),
    ({"action": None}, TypeError, "'action' parameter of cyclic_monotonicity_test"),
    ({"group": 1.0}, TypeError, "'group' parameter of cyclic_monotonicity_test"),
    ({"order": "no|yes"}, TypeError, "'order' parameter .* two or more distinct action labels"),
    ({"order": ("no", 1.5)}, TypeError, "'order' parameter"),
    ({"order": ("yes",)}, ValueError, "'order' parameter .* two or more distinct"),
    ({"order": ("no", "yes", "no")}, ValueError, "'order' parameter .* distinct"),
    ({"n_bins": 1}, ValueError, "'n_bins' parameter of cyclic_monotonicity_test"),
    ({"n_resamples": 0}, ValueError, "'n_resamples' parameter"),
    ({"min_contexts": 1}, ValueError, "'min_contexts' parameter"),
    ({"rng": "seed"}, TypeError, "rng"),
    ({"group": "ctx"}, ValueError, r"column 'ctx' \(the 'group' column\) not found"),
])
def test_parameter_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        cyclic_monotonicity_test(_toy(), **kwargs)


def test_data_errors():
    with pytest.raises(TypeError, match="'data' parameter of cyclic_monotonicity_test"):
        cyclic_monotonicity_test(3)
    with pytest.raises(ValueError, match="at least one row"):
        cyclic_monotonicity_test(_toy().iloc[:0])
    bad = _toy()
    bad.loc[7, "action"] = "maybe"
    with pytest.raises(ValueError, match=r"Column 'action'.*named in 'order'.*row 7"):
        cyclic_monotonicity_test(bad)
    with pytest.raises(ValueError, match="Column 'belief'"):
        cyclic_monotonicity_test(_toy().assign(belief=1.5))


@given(labels=st.lists(st.sampled_from(["no", "defer", "yes", "other"]), min_size=1,
                       max_size=30),
       order=st.permutations(["no", "defer", "yes"]))
def test_validation_property(labels, order):
    """An action outside ``order`` is an error naming its first row; otherwise a result."""
    n = len(labels)
    data = pd.DataFrame({"context": np.arange(n) // 2, "belief": np.linspace(0, 1, n),
                         "action": labels})
    if "other" in labels:
        first = labels.index("other")
        with pytest.raises(ValueError, match=rf"Column 'action'.*row {first}\b"):
            cyclic_monotonicity_test(data, order=order, n_resamples=19, rng=0)
        return
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = cyclic_monotonicity_test(data, order=order, n_resamples=19, rng=0)
    assert isinstance(res, CyclicMonotonicityResult)
    assert len(res.table) == 2 and res.n_obs == n
    assert math.isnan(res.pvalue) or 0 < res.pvalue <= 1
    assert not res.table["testable"].any() or math.isfinite(res.statistic)


# --------------------------------------------------------------------------- array layer
def test_cumulative_outcomes():
    out = cumulative_outcomes(np.array([0, 2, 1, 3]), 4)
    assert out.tolist() == [[0, 0, 0], [1, 1, 0], [1, 0, 0], [1, 1, 1]]


@given(y=st.lists(st.floats(0, 1), min_size=1, max_size=12),
       seed=st.integers(0, 1000))
def test_isotonic_fit_is_the_least_squares_projection(y, seed):
    from sklearn.isotonic import IsotonicRegression

    y_arr = np.asarray(y)
    w = np.random.default_rng(seed).uniform(0.5, 5.0, len(y_arr))
    fit = isotonic_fit(y_arr, w)
    assert np.all(np.diff(fit) >= -1e-12)
    assert np.sum(w * fit) == pytest.approx(np.sum(w * y_arr))
    ref = IsotonicRegression().fit(np.arange(len(y_arr)), y_arr, sample_weight=w)
    np.testing.assert_allclose(fit, ref.predict(np.arange(len(y_arr))), atol=1e-10)


@given(p=st.lists(st.lists(st.floats(0.01, 1), min_size=3, max_size=3), min_size=2,
                  max_size=8))
def test_distance_is_zero_iff_monotone_and_fit_stays_cumulative(p):
    probs = np.asarray(p) / np.sum(p, axis=1, keepdims=True)
    shares = np.cumsum(probs[:, ::-1], axis=1)[:, ::-1][:, 1:]  # (B, 2): P(>=1), P(>=2)
    w = np.arange(1.0, len(shares) + 1.0)
    distance, fitted = distance_to_monotone(shares, w)
    # monotone up to round-off (shares 1e-18 apart, from 0.010000000000000002 beside
    # 0.01, are at a distance of 1e-17): at 0; a fall of 1e-9 or more: away from 0
    fall = -float(np.min(np.diff(shares, axis=0)))
    if fall <= 1e-15:
        assert distance <= 1e-12
    elif fall >= 1e-9:
        assert distance > 1e-12
    assert np.all(fitted[:, 0] >= fitted[:, 1] - 1e-12)  # still a choice distribution
    assert np.all(np.diff(fitted, axis=0) >= -1e-12)


def test_distance_by_hand():
    # one level, two equal bins 0.6 then 0.4: the fit is 0.5, 0.5; distance 0.1
    distance, fitted = distance_to_monotone(np.array([[0.6], [0.4]]), np.array([1.0, 1.0]))
    assert distance == pytest.approx(0.1)
    np.testing.assert_allclose(fitted.ravel(), [0.5, 0.5])


# --------------------------------------------------------------------------- behaviour
def test_two_actions_match_the_pairwise_localised_test():
    """With two actions the one cumulative share is the pair's share: same comparisons."""
    data = generate(Design(n_contexts=120), 3)
    data = data[data["action"] != "defer"]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        cyc = cyclic_monotonicity_test(data, order=("no", "yes"), n_resamples=199, rng=0)
        mono = coherence.monotonicity_test(data, pairs=[("yes", "no")], n_resamples=199,
                                           rng=0)
    assert cyc.statistic == pytest.approx(mono.table["global_statistic"].iloc[0], rel=1e-12)
    np.testing.assert_allclose(np.sort(cyc.comparison_table["z"].to_numpy()),
                               np.sort(mono.local_table["z"].to_numpy()), rtol=1e-12)


def test_null_study_is_not_rejected(null_study):
    res = cyclic_monotonicity_test(null_study, n_resamples=999, rng=0)
    assert res.pvalue > 0.2
    assert res.table["threshold"].tolist() == ["defer", "yes"]
    assert res.table["testable"].all() and res.n_contexts == 300
    assert res.distance < 0.02


def test_falling_top_share_is_rejected_and_located(violating_study):
    res = cyclic_monotonicity_test(violating_study, n_resamples=999, rng=0)
    assert res.pvalue < 0.01
    worst = res.comparison_table.loc[res.comparison_table["z"].idxmax()]
    assert worst["threshold"] == "yes"
    assert worst["belief_high_to"] > 0.7  # the fall is above the ramp's onset
    level = res.table.set_index("threshold")
    assert level.loc["yes", "pvalue"] < 0.01
    assert res.distance > 0.02


def test_nested_logit_is_not_rejected():
    """A random-utility agent that violates IIA satisfies the cumulative condition."""
    data = generate(Design(n_contexts=300, agent="nested", lam=0.3), 5)
    res = cyclic_monotonicity_test(data, n_resamples=999, rng=0)
    assert res.pvalue > 0.2


def test_degenerate_level_warns():
    data = _toy(60).replace({"action": {"yes": "defer"}})
    with pytest.warns(DegenerateDataWarning, match="level 2 \\('yes' or above\\) is not "
                                                    "testable: no row chose 'yes'"):
        res = cyclic_monotonicity_test(data, n_resamples=99, rng=0)
    row = res.table.set_index("threshold").loc["yes"]
    assert not row["testable"] and math.isnan(row["pvalue"]) and row["reason"]


def test_an_order_action_never_chosen_warns():
    # 'defer' named in order but never chosen: level 1 ('defer' or above) is level 2 ('yes')
    # again; the table repeated it without a word
    data = _toy(60)
    data = data[data["action"] != "defer"]
    with pytest.warns(DegenerateDataWarning, match=r"action\(s\) 'defer' of 'order' never "
                                                    r"occur in column 'action'"):
        res = cyclic_monotonicity_test(data, n_resamples=99, rng=0)
    first, second = res.table.iloc[0], res.table.iloc[1]
    assert first["share"] == second["share"] and first["statistic"] == second["statistic"]
    with warnings.catch_warnings():
        warnings.simplefilter("error", DegenerateDataWarning)
        cyclic_monotonicity_test(data, order=("no", "yes"), n_resamples=99, rng=0)


def test_frames_and_summary(null_study):
    res = cyclic_monotonicity_test(null_study, n_resamples=199, rng=1)
    assert res.to_frame()["test"].iloc[0] == "cyclic_monotonicity_test"
    assert set(res.comparison_table["threshold"]) == {"defer", "yes"}
    assert (res.bin_table["fitted"].notna()).all()
    # the distance to rationalisability, once (it was listed twice)
    lines = [line.split() for line in str(res.summary()).splitlines()]
    assert [w[1] for w in lines if w[:1] == ["distance"]] == [f"{res.distance:.4g}"]
