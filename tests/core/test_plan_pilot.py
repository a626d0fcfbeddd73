"""plan(): the pilot is validated up front, its own rows named (audit item 9)."""

import numpy as np
import pandas as pd
import pytest

import coherence

KW = {"test": "ci_test", "n_contexts": 10, "n_repetitions": 2, "n_sims": 2, "rng": 0,
      "options": {"n_resamples": 9, "ci_method": None}}


@pytest.fixture(scope="module")
def pilot():
    return coherence.simulate("leaky", n_contexts=12, n_repetitions=2, rng=0).data


def test_nan_belief_names_the_pilot_row(pilot):
    d = pilot.copy()
    d.loc[3, "belief"] = np.nan
    with pytest.raises(ValueError, match=r"Column 'belief' \(input to plan\) must not contain "
                       r"NaN or missing values; 1 offending row \(first: row 3\)"):
        coherence.plan(d, **KW)


def test_context_ids_typed_two_ways_raise(pilot):
    d = pilot.astype({"context": object})
    d.loc[0, "context"] = str(d.loc[0, "context"])
    with pytest.raises(ValueError, match=r"Column 'context' \(input to plan\) .*'0' / 0"):
        coherence.plan(d, **KW)


def test_missing_context_raises(pilot):
    d = pilot.astype({"context": float})
    d.loc[0, "context"] = np.nan
    with pytest.raises(ValueError, match=r"Column 'context' \(input to plan\) must not contain "
                       r"missing values; 1 offending row \(first: row 0\)"):
        coherence.plan(d, **KW)


def test_a_pilot_of_one_context_raises(pilot):
    """Every study would repeat that context: plan returned power 0 without a word."""
    one = pilot[pilot["context"] == 0]
    with pytest.raises(ValueError, match=r"The 'data_or_agent' parameter of plan must be a "
                       r"pilot of at least 2 contexts \(column 'context'.*; got '1 context\(s\) "
                       r"in 2 row\(s\)'"):
        coherence.plan(one, **KW)


@pytest.mark.parametrize(("value", "match"), [
    (np.nan, r"Column 'p_a' \(input to plan\) must not contain NaN or missing values; "
             r"1 offending row \(first: row 3\)"),
    (70.0, r"Column 'p_a' \(input to plan\) must hold probabilities in \[0, 1\]; "
           r"1 offending row \(first: row 3 = 70.0\)"),
])
def test_pairs_pilot_value_is_named_not_blamed_on_effect(value, match):
    # the pilot's own mean improvement (effect=None) was NaN and refused as "the 'effect'
    # parameter of pairs_power must be a finite float; got nan", a parameter never given
    rng = np.random.default_rng(0)
    p_a = rng.uniform(0.2, 0.8, 30)
    d = rng.uniform(-0.2, 0.2, 30)
    pairs = pd.DataFrame({"p_a": p_a, "p_a_given_b1": p_a + d, "p_a_given_b0": p_a - d,
                          "a_outcome": rng.integers(0, 2, 30),
                          "b_outcome": rng.integers(0, 2, 30), "category": "strong"})
    pairs.loc[3, "p_a"] = value
    with pytest.raises(ValueError, match=match):
        coherence.plan(pairs, test="conditional_forecasting", n_contexts=20, n_sims=2, rng=0)


def _paired_pilot() -> pd.DataFrame:
    """12 contexts x 2 prompts x 3 repetitions, the prompts of a repetition sharing a shock."""
    rng = np.random.default_rng(0)
    rows = []
    for c in range(12):
        base, shock = rng.uniform(0.2, 0.8), rng.normal(0, 0.08, 3)
        for r in range(3):
            for p, shift in (("standard", 0.0), ("mse", 0.02)):
                rows.append({"context": c, "repetition": r, "prompt": p, "belief": float(
                    np.clip(base + shift + shock[r] + rng.normal(0, 0.005), 0, 1))})
    return pd.DataFrame(rows)


PC = {"test": "prompt_consistency", "n_contexts": 10, "n_repetitions": 3, "n_sims": 2,
      "rng": 0, "options": {"n_resamples": 19}}


def test_repetition_labels_typed_two_ways_raise():
    # 0 under one prompt and '0' under the other: the test refuses the pilot, and plan
    # planned it unpaired, without a word (power 1.0 -> 0.35 on a 30-context pilot
    # of this kind at 30 x 4, 20 studies)
    d = _paired_pilot().astype({"repetition": object})
    mse = (d["prompt"] == "mse").to_numpy()
    d.loc[mse, "repetition"] = d.loc[mse, "repetition"].astype(str)
    with pytest.raises(ValueError, match=r"Column 'repetition' \(input to plan\) must hold "
                       r"labels that differ by more than case.*'0' / 0"):
        coherence.plan(d, **PC)


def test_repetition_label_given_twice_in_a_cell_raises():
    d = _paired_pilot()
    d["repetition"] = d["repetition"] // 2  # repetitions 0 and 1 both labelled 0
    with pytest.raises(ValueError, match=r"Column 'repetition' \(input to plan\) must identify "
                       r"each repetition once per \('context', 'prompt'\); 24 offending rows "
                       r"\(first: row 2 = 0, row 3 = 0"):
        coherence.plan(d, **PC)


def test_a_named_repetition_column_must_exist():
    with pytest.raises(ValueError, match=r"column 'rep' \(the 'repetition' column\) not found"):
        coherence.plan(_paired_pilot(), **{**PC, "options": {"n_resamples": 19,
                                                              "repetition": "rep"}})


def test_unpaired_pilots_still_plan():
    d = _paired_pilot()
    for pilot, extra in ((d.drop(columns="repetition"), {}),
                         (d.assign(repetition=0), {"repetition": None})):
        res = coherence.plan(pilot, **{**PC, "options": {"n_resamples": 19, **extra}})
        assert res.table["n_simulations"].iloc[0] == 2


def test_ci_test_bootstrap_method_raises():
    # it has no p-value: every study counted as not rejected, power 0.0 at every design
    # (n_undefined = n_sims), reported as "no design reaches the target"
    with pytest.raises(ValueError, match=r"The 'options' parameter of plan must be a ci_test "
                       r"method with a p-value.*got \{'method': 'bootstrap'\}"):
        coherence.plan(coherence.Agent.leaky(), test="ci_test", n_contexts=10, n_sims=2,
                       options={"method": "bootstrap"}, rng=0)


def test_a_design_without_any_p_value_warns(pilot):
    # one action: monotonicity_test has no p-value on any study, and plan reported power 0
    # at every design without a word, as if the test had no power there
    one = pilot.assign(action=pilot["action"].iloc[0])
    kw = {"test": "monotonicity_test", "n_contexts": [8, 10], "n_repetitions": 2,
          "n_sims": 3, "rng": 0, "options": {"n_resamples": 19}}
    with pytest.warns(coherence.DegenerateDataWarning, match=r"plan: monotonicity_test gave "
                      r"no p-value \(NaN\) on any of the 3 simulated studies of 2 design\(s\) "
                      r"\(8 contexts x 2 repetitions; 10 contexts x 2 repetitions\): their "
                      r"power 0 means the test cannot be computed") as rec:
        res = coherence.plan(one, **kw)
    assert rec[0].filename == __file__
    assert res.table["power"].tolist() == [0.0, 0.0]
    assert res.table["n_undefined"].tolist() == [3, 3]
    # an ordinary pilot: no warning, the same figures as before
    res = coherence.plan(pilot, **kw)
    assert res.table["n_undefined"].tolist() == [0, 0]
