"""Shared design helpers (evidence and role columns)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from coherence._decision._design import evidence_columns
from coherence._decision._design import require_design_columns


def test_evidence_columns():
    assert evidence_columns("x", "f") == ("x",)
    assert evidence_columns(["x", "y"], "f") == ("x", "y")
    assert evidence_columns((), "f") == ()
    with pytest.raises(TypeError, match="The 'evidence' parameter of f must be a sequence of "
                       "column names"):
        evidence_columns(3, "f")
    with pytest.raises(TypeError, match="'evidence' parameter of f"):
        evidence_columns(["x", 1], "f")


def test_require_design_columns():
    df = pd.DataFrame({"p": [0.5], "a": [1], "x": [0.0]})
    require_design_columns(df, {"belief": "p", "action": "a", "group": None}, ("x",), "f")
    with pytest.raises(ValueError, match=r"f: column 'z' \(the 'evidence\[1\]' column\) not "
                       "found"):
        require_design_columns(df, {"belief": "p"}, ("x", "z"), "f")
    with pytest.raises(ValueError, match=r"'q' \(the 'outcome' column\)"):
        require_design_columns(df, {"outcome": "q"}, (), "f")


def test_labels_typed_two_ways_are_refused_in_evidence_and_actions():
    # 'Male' / 'male' were two classes of the evidence (ci_test's statistic -0.006 became
    # 0.021), 'Yes' / 'yes' two actions
    import coherence

    d = coherence.simulate("leaky", n_contexts=40, rng=0).data
    sex = np.where(np.random.default_rng(4).integers(0, 2, 40)[d["context"]] == 1, "Male",
                   "Female")
    d = d.assign(sex=sex, sex2=np.where(d.index % 7 == 0, np.char.lower(sex), sex))
    for test in (coherence.ci_test, coherence.leakage_test):
        with pytest.raises(ValueError, match=r"Column 'sex2' .* 'Male' / 'male'"):
            test(d, evidence=["sex2"], rng=0)
    action = d["action"].astype(str).where(d.index % 9 != 0, d["action"].astype(str).str.title())
    with pytest.raises(ValueError, match=r"Column 'action' .* differ by more than case"):
        coherence.ci_test(d.assign(action=action), rng=0)


@pytest.fixture(scope="module")
def _leaky_with_float_evidence():
    import coherence

    d = coherence.simulate("leaky", n_contexts=50, n_repetitions=2, rng=0).data
    x = np.random.default_rng(0).normal(size=int(d["context"].max()) + 1)
    return d.assign(x=x[d["context"].to_numpy()])


@pytest.mark.parametrize("call", ["ci_test", "leakage_test"])
def test_evidence_of_python_floats_in_an_object_column_is_continuous(
        _leaky_with_float_evidence, call):
    """The same numbers as a float64 column and as Python floats in an object column (a
    table read from JSON or a database, built row by row) give one result. The object
    column was read as one class per value: every context alone in its stratum, a p-value
    of NaN and another estimate."""
    import warnings

    import coherence

    d = _leaky_with_float_evidence
    kwargs = ({"n_resamples": 19, "ci_method": None} if call == "ci_test" else
              {"n_permutations": 9, "n_resamples": 9, "n_fold_draws": 1})
    run = getattr(coherence, call)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", coherence.SmallSampleWarning)
        clean = run(d, evidence=["x"], rng=1, **kwargs).to_frame()
        boxed = run(d.astype({"x": object}), evidence=["x"], rng=1, **kwargs).to_frame()
    assert np.isfinite(clean["pvalue"].iloc[0])
    pd.testing.assert_frame_equal(boxed, clean)


def test_one_column_in_two_roles_is_refused():
    # action='outcome' left beside outcome='outcome' tested the outcome against itself:
    # ci_test gave a CMI of 0.359 and p = 0.01, leakage_test a 85.4% loss reduction,
    # "violations" that no data could change; a context column that is the action
    # column made the contexts the actions
    import coherence

    d = coherence.simulate("rational", n_contexts=20, n_repetitions=2, rng=4).data
    d["menu"] = "defer|no|yes"
    calls = [
        (coherence.ci_test, {"action": "outcome"}, "outcome", "action"),
        (coherence.ci_test, {"group": "action"}, "group", "action"),
        (coherence.leakage_test, {"action": "outcome"}, "outcome", "action"),
        (coherence.monotonicity_test, {"group": "action"}, "group", "action"),
        (coherence.cyclic_monotonicity_test, {"group": "belief"}, "group", "belief"),
        (coherence.iia_test, {"group": "menu"}, "group", "menu"),
        (coherence.prompt_consistency, {"repetition": "context"}, "repetition", "group"),
        (coherence.prompt_consistency, {"truth": "belief"}, "truth", "belief"),
    ]
    for func, kwargs, second, first in calls:
        with pytest.raises(ValueError, match=rf"The '{second}' parameter of {func.__name__} "
                           rf"must be a column other than the '{first}' parameter's"):
            func(d, rng=0, **kwargs)


def test_a_resolution_merging_beliefs_a_stated_thousandth_apart_is_refused():
    # 0.013 - 0.012 is 0.0009999999999999992 in floating point, below the 0.001 gap: a
    # resolution of 0.01 pooled the two stated beliefs without a word (ci_test's statistic
    # 0.0388 became 0.0365); 0.2 and 0.201 (0.0010000000000000009 apart) were refused
    import coherence
    from coherence._decision._design import check_resolution

    for values, resolution in (([0.012, 0.013, 0.5], 0.01), ([0.008, 0.009], 0.002),
                               ([0.2, 0.201], 0.002)):
        with pytest.raises(ValueError, match=r"'resolution' parameter of ci_test .* merged"):
            check_resolution([("belief", np.array(values))], resolution, "ci_test")
    check_resolution([("belief", np.array([0.0121, 0.0129, 0.5]))], 0.01, "ci_test")
    data = coherence.simulate("rational", n_contexts=100, rng=3).data
    contexts = data["context"].unique()
    data.loc[data["context"].isin(contexts[:10]), "belief"] = 0.012
    data.loc[data["context"].isin(contexts[10:20]), "belief"] = 0.013
    with pytest.raises(ValueError, match=r"it merged 0\.012 and 0\.013"):
        coherence.ci_test(data, resolution=0.01, n_resamples=99, rng=0)
