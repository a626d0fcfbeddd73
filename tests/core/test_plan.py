"""coherence.plan: power of a test at each design, checked against brute-force loops that
rebuild the same studies from the documented seeds, and the validation of every parameter."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import coherence
from coherence import Agent
from coherence import plan


def _pilot() -> pd.DataFrame:
    return coherence.simulate(Agent.prompt_sensitive(grid=0.01, report_noise=0.05),
                              n_contexts=12, n_repetitions=2, rng=3).data


def test_agent_ci_test_matches_a_brute_force_loop():
    agent = Agent.leaky()
    designs = [(15, 2), (15, 3), (30, 2), (30, 3)]
    opts = {"n_resamples": 19, "ci_method": "subsampling"}
    res = plan(agent, test="ci_test", n_contexts=[15, 30], n_repetitions=[2, 3], effect=0.9,
               n_sims=3, options=opts, rng=0)
    # the loop of the Notes, written out: one stream per design, n_sims per study
    strong = Agent.leaky(strength=0.9)
    expected = []
    for (c, r), design in zip(designs, np.random.default_rng(0).spawn(4), strict=True):
        k = 0
        for s in design.spawn(3):
            data = coherence.simulate(strong, n_contexts=c, n_repetitions=r,
                                      prompts=("standard",), rng=s).data
            with warnings.catch_warnings():  # plan records them (15 contexts: too few;
                # a study whose blocks move nothing has no p-value, counted as kept)
                warnings.simplefilter("ignore", coherence.SmallSampleWarning)
                warnings.simplefilter("ignore", coherence.DegenerateDataWarning)
                k += coherence.ci_test(data, **opts, rng=s).pvalue <= 0.05
        expected.append(k)
    assert list(res.table["n_rejected"]) == expected
    assert list(zip(res.table["n_contexts"], res.table["n_repetitions"], strict=True)) \
        == designs
    assert list(res.table["n_calls"]) == [c * r for c, r in designs]
    assert sum(expected) > 0  # the loop compares something


def test_ci_test_planned_without_its_interval_gives_the_default_pvalues():
    """plan skips ci_test's interval (drawn after the p-value, from the same stream): each
    study's p-value is the one ci_test gives at its default interval, and an interval the
    user names is kept."""
    from coherence._plan import _run_decision

    strong = Agent.leaky(strength=0.6)
    for seed in range(4):
        data = coherence.simulate(strong, n_contexts=40, n_repetitions=3,
                                  prompts=("standard",), rng=seed).data
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", coherence.SmallSampleWarning)
            at_defaults = coherence.ci_test(data, n_resamples=49,
                                            rng=np.random.default_rng(seed)).pvalue
            planned = _run_decision("ci_test", data, {"n_resamples": 49},
                                    np.random.default_rng(seed))
        assert planned == at_defaults
    calls = []
    real = coherence.ci_test

    def fake(data, **kw):
        calls.append(kw)
        return real(data, **kw)

    with pytest.MonkeyPatch.context() as mp:
        mp.setattr(coherence, "ci_test", fake)
        _run_decision("ci_test", data, {"n_resamples": 19}, np.random.default_rng(0))
        _run_decision("ci_test", data, {"n_resamples": 19, "ci_method": "subsampling"},
                      np.random.default_rng(0))
    assert [c["ci_method"] for c in calls] == [None, "subsampling"]


def test_pilot_prompt_consistency_matches_a_brute_force_loop():
    pilot = _pilot()
    res = plan(pilot.sample(frac=1.0, random_state=1), test="prompt_consistency",
               n_contexts=10, n_repetitions=3, n_sims=5, options={"n_resamples": 49}, rng=4)
    # resampling as documented: contexts by sorted label, and in a drawn context 3 of its
    # repetition labels (sorted), every prompt's row of each label kept together
    canon = pilot.sort_values(["context", "prompt", *[c for c in pilot.columns
                                                      if c not in ("context", "prompt")]],
                              kind="mergesort").reset_index(drop=True)
    labels = sorted(canon["context"].unique())
    prompts = sorted(canon["prompt"].unique())
    k = 0
    for s in np.random.default_rng(4).spawn(1)[0].spawn(5):
        picks = s.integers(0, len(labels), 10)
        parts = []
        for new, c in enumerate(picks):
            reps = sorted(canon.loc[canon["context"] == labels[c], "repetition"].unique())
            drawn = s.integers(0, len(reps), 3)
            for p in prompts:
                cell = np.flatnonzero((canon["context"] == labels[c]).to_numpy()
                                      & (canon["prompt"] == p).to_numpy())
                cell = cell[np.argsort(canon["repetition"].to_numpy()[cell], kind="stable")]
                part = canon.iloc[cell[drawn]].copy()
                part["context"], part["repetition"] = new, np.arange(3)
                parts.append(part)
        study = pd.concat(parts, ignore_index=True)
        k += coherence.prompt_consistency(study, n_resamples=49, rng=s).pvalue <= 0.05
    row = res.table.iloc[0]
    assert row["n_rejected"] == k and row["n_simulations"] == 5
    assert row["n_prompts"] == 4 and row["n_calls"] == 10 * 3 * 4
    assert res.source == "pilot" and res.n_pilot_contexts == 12


def _shared_shock_pilot(paired: bool = True) -> pd.DataFrame:
    """20 contexts x 3 prompts x 4 repetitions: prompt 'a' moves every belief by 0.03, and
    the prompts of one repetition share a shock of SD 0.2 (one seed, one session)."""
    rng = np.random.default_rng(7)
    rows = []
    for c in range(20):
        base, shock = rng.uniform(0.3, 0.7), rng.normal(0, 0.2, 4)
        for p, shift in (("standard", 0.0), ("a", 0.03), ("b", 0.0)):
            for r in range(4):
                rows.append({"context": c, "prompt": p, "repetition": r if paired else
                             f"{p}{r}", "belief": float(np.clip(
                                 base + shift + shock[r] + rng.normal(0, 0.005), 0, 1))})
    return pd.DataFrame(rows)


def test_pilot_keeps_the_shock_the_prompts_of_a_repetition_share():
    # a context's repetitions were redrawn prompt by prompt, so the shock the prompts of one
    # repetition share no longer cancelled in their difference: 0.0 power at 10 x 3 (0.8
    # not reached below hundreds of contexts), where the study's own test, which pairs the
    # prompts by repetition, finds the 0.03 shift every time
    kw = {"test": "prompt_consistency", "n_contexts": 10, "n_repetitions": 3, "n_sims": 10,
          "options": {"n_resamples": 49}, "rng": 0}
    pilot = _shared_shock_pilot()
    assert coherence.prompt_consistency(pilot, n_resamples=199, rng=0).pvalue < 0.01
    assert plan(pilot, **kw).table["power"].iloc[0] == 1.0
    # repetition labels that do not pair the prompts: drawn cell by cell, as before
    assert plan(_shared_shock_pilot(paired=False), **kw).table["power"].iloc[0] <= 0.3


def test_effect_sets_the_violation_and_the_null_holds_its_level():
    null = plan(Agent.prompt_sensitive(grid=0.01, report_noise=0.05), test="prompt_consistency",
                n_contexts=20, n_repetitions=2, effect=0.0, n_sims=10,
                options={"n_resamples": 49}, rng=1)
    shifted = plan(Agent.prompt_sensitive(grid=0.01, report_noise=0.05),
                   test="prompt_consistency", n_contexts=20, n_repetitions=2, effect=0.1,
                   n_sims=10, options={"n_resamples": 49}, rng=1)
    assert null.table["power"].iloc[0] <= 0.3
    assert shifted.table["power"].iloc[0] == 1.0
    assert shifted.n_contexts == 20 and shifted.n_calls == 20 * 2 * 4
    assert np.isnan(null.achieved_power) and null.n_calls == -1
    lo, hi = shifted.table[["power_low", "power_high"]].iloc[0]
    assert lo < 1.0 == hi


def _pairs_pilot(low: float, shift: float, n: int = 30) -> pd.DataFrame:
    """A conditional-forecasting pilot: P(A) in [low, 1 - low], moved by +-shift."""
    rng = np.random.default_rng(3)
    p_a = rng.uniform(low, 1.0 - low, n)
    return pd.DataFrame({"category": "strong", "p_a": p_a,
                         "p_a_given_b1": np.clip(p_a + shift, 0, 1),
                         "p_a_given_b0": np.clip(p_a - shift, 0, 1),
                         "a_outcome": rng.integers(0, 2, n), "b_outcome": rng.integers(0, 2, n)})


def test_conditional_forecasting_delegates_to_pairs_power():
    pilot = _pairs_pilot(0.1, 0.2)
    res = plan(pilot, test="conditional_forecasting", n_contexts=[20, 60], n_repetitions=1,
               effect=0.02, n_sims=20, rng=5)
    gens = np.random.default_rng(5).spawn(2)
    for (_, row), m, g in zip(res.table.iterrows(), (20, 60), gens, strict=True):
        ref = coherence.pairs_power(pilot, effect=0.02, n=m, test="bernoulli", n_simulations=20,
                                    max_n=60, rng=g)
        assert row["power"] == pytest.approx(ref.simulated_power_at_n)
        assert row["n_calls"] == 3 * m


def test_conditional_forecasting_power_at_a_design_does_not_depend_on_the_others():
    # the power at 40 pairs was read from pairs_power(max_n=largest design), which searched
    # n_required up to 4000, found it, and simulated there first from the design's stream:
    # 0.13 alone and 0.10 next to a design of 4000 pairs, same seed
    pilot = _pairs_pilot(0.1, 0.2)
    alone = plan(pilot, test="conditional_forecasting", n_contexts=[40], effect=0.02,
                 n_sims=200, rng=5)
    beside = plan(pilot, test="conditional_forecasting", n_contexts=[40, 4000], effect=0.02,
                  n_sims=200, rng=5)
    assert beside.table["n_rejected"].iloc[0] == alone.table["n_rejected"].iloc[0]
    # and it is pairs_power's simulated power at 40, searched no further than 40
    ref = coherence.pairs_power(pilot, effect=0.02, n=40, test="bernoulli", n_simulations=200,
                                max_n=40, rng=np.random.default_rng(5).spawn(1)[0])
    assert ref.n_required == -1
    assert alone.table["power"].iloc[0] == pytest.approx(ref.simulated_power_at_n)


def test_conditional_forecasting_power_does_not_follow_the_pilots_row_order():
    # pairs_power drew the pilot's pairs by position: the same pilot reversed gave another
    # power at each design for one seed
    pilot = _pairs_pilot(0.1, 0.2).assign(pair=range(30))
    kw = {"test": "conditional_forecasting", "n_contexts": [14, 40], "effect": 0.02,
          "n_sims": 40, "alpha": 0.3, "rng": 5}
    ref = plan(pilot, **kw).table
    for moved in (pilot.iloc[::-1], pilot.sample(frac=1, random_state=1)):
        pd.testing.assert_frame_equal(plan(moved, **kw).table, ref)


def test_conditional_forecasting_default_effect_leaves_failed_records_out():
    # the default effect (the pilot's mean improvement) counted a failed record that
    # pairs_power and conditional_forecasting skip: 0.32 -> 0.06; one with NaN raised
    pilot = _pairs_pilot(0.1, 0.2).assign(error=None)
    failed = {"category": "strong", "p_a": 0.99, "p_a_given_b1": 0.0, "p_a_given_b0": 0.0,
              "a_outcome": 1, "b_outcome": 1, "error": "timeout"}
    blank = dict.fromkeys(["p_a", "p_a_given_b1", "p_a_given_b0", "a_outcome"], np.nan)
    ref = plan(pilot, test="conditional_forecasting", n_contexts=40, n_sims=50, rng=5)
    for row in (failed, {**failed, **blank}):
        with_failed = pd.concat([pilot, pd.DataFrame([row])], ignore_index=True)
        with pytest.warns(coherence.SkippedRecordsWarning):
            res = plan(with_failed, test="conditional_forecasting", n_contexts=40, n_sims=50,
                       rng=5)
        assert res.table["n_rejected"].iloc[0] == ref.table["n_rejected"].iloc[0]


def test_lie_check_resamples_contexts_of_agent_and_baseline_together():
    from tests.core.test_conformance import _lie_table

    elicited = _lie_table()
    baseline = elicited.assign(p_y_given_xz=elicited["p_y_given_x"])  # coherent baseline
    res = plan(elicited, test="iterated_expectation_check", n_contexts=[8, 30],
               n_repetitions=1, n_sims=10, options={"baseline": baseline, "n_resamples": 9},
               rng=0)
    # calls per context: 4 rows (a P(y | x, z) each), 2 P(z | x) and one P(y | x)
    assert list(res.table["n_prompts"]) == [7, 7]
    assert list(res.table["n_calls"]) == [8 * 7, 30 * 7]
    assert res.table["power"].iloc[1] >= res.table["power"].iloc[0]
    assert res.table["power"].iloc[1] == 1.0


def test_lie_check_baseline_lacking_a_unit_of_the_pilot_is_named_up_front():
    # a baseline without the pilot's context 'c0' failed inside a simulated study, naming
    # its relabelled contexts ('s0', 's6'), and only when a study drew 'c0'; a state of z
    # missing from the baseline likewise
    from tests.core.test_conformance import _lie_table

    elicited = _lie_table()
    baseline = elicited.assign(p_y_given_xz=elicited["p_y_given_x"])
    lacking = baseline[baseline["context"] != "c0"]
    with pytest.raises(ValueError, match=r"plan: options\['baseline'\] has no rows for 2 "
                       r"\(context, variable\) unit\(s\) of the pilot \(first: \[\('c0', "
                       r"'z1'\), \('c0', 'z2'\)\]\)"):
        plan(elicited, test="iterated_expectation_check", n_contexts=2, n_sims=1,
             options={"baseline": lacking, "n_resamples": 9}, rng=0)
    with pytest.raises(ValueError, match=r"plan: the states of z .* differ for 1 \(context, "
                       r"variable\) unit"):
        plan(elicited, test="iterated_expectation_check", n_contexts=2, n_sims=1,
             options={"baseline": baseline.iloc[1:], "n_resamples": 9}, rng=0)


def test_lie_check_pilot_with_context_ids_of_two_types():
    """Context ids 0 and 'k1' in one column (the check itself takes them): the LIE
    branch sorted them with a bare sorted() and plan failed with a TypeError ("'<' not
    supported between instances of 'str' and 'int'"); they sort as the decision pilots'
    do, numbers before text."""
    from tests.core.test_conformance import _lie_table

    elicited = _lie_table()
    baseline = elicited.assign(p_y_given_xz=elicited["p_y_given_x"])
    ids = {c: (i if i % 2 else f"k{i}") for i, c in enumerate(pd.unique(elicited["context"]))}
    mixed = [t.assign(context=t["context"].map(ids).astype(object))
             for t in (elicited, baseline)]
    kwargs = {"test": "iterated_expectation_check", "n_contexts": 8, "n_repetitions": 1,
              "n_sims": 4, "rng": 0}
    res = plan(mixed[0], options={"baseline": mixed[1], "n_resamples": 9}, **kwargs)
    assert res.table["n_simulations"].iloc[0] == 4
    assert res.n_pilot_contexts == elicited["context"].nunique()


def test_same_rng_same_table_and_independent_of_row_order():
    pilot = _pilot()
    kw = {"test": "prompt_consistency", "n_contexts": 8, "n_repetitions": 2, "n_sims": 3,
          "options": {"n_resamples": 19}, "rng": 2}
    a = plan(pilot, **kw)
    b = plan(pilot.iloc[::-1], **kw)
    pd.testing.assert_frame_equal(a.table, b.table)
    with pytest.warns(DeprecationWarning, match=r"PlanResult\.designs .* use PlanResult\.table"):
        assert a.designs is a.table


LEAKY = Agent.leaky()


@pytest.mark.parametrize(("kwargs", "error", "match"), [
    ({"test": "cmi"}, ValueError, "'test' parameter of plan must be one of"),
    ({"test": 3}, TypeError, "'test' parameter of plan"),
    ({"n_contexts": 1}, ValueError, "'n_contexts' parameter of plan must be an int >= 2"),
    ({"n_contexts": []}, ValueError, "'n_contexts' parameter of plan must be a non-empty"),
    ({"n_contexts": "10"}, TypeError, "'n_contexts' parameter of plan"),
    ({"n_contexts": [10, 10]}, ValueError, "free of duplicates"),
    ({"n_repetitions": 0}, ValueError, "'n_repetitions' parameter of plan must be an int >= 1"),
    ({"n_repetitions": [2.5]}, TypeError, "'n_repetitions' parameter"),
    ({"n_sims": 0}, ValueError, "'n_sims' parameter of plan must be an int >= 1"),
    ({"alpha": 1.0}, ValueError, "'alpha' parameter of plan"),
    ({"power": 0.0}, ValueError, "'power' parameter of plan"),
    ({"effect": "big"}, TypeError, "'effect' parameter of plan"),
    ({"effect": 1.0}, ValueError, "'effect' parameter of plan must be a finite float in"),
    ({"options": ["k"]}, TypeError, "'options' parameter of plan must be a mapping"),
    ({"options": {"nope": 1}}, ValueError, "keywords of ci_test other than the data and rng"),
    ({"options": {"rng": 1}}, ValueError, "'options' parameter of plan"),
    ({"rng": -1}, ValueError, "'rng' parameter of plan"),
    ({"data_or_agent": "leaky"}, TypeError, "a pilot table or an Agent"),
    ({"data_or_agent": Agent.rational(), "effect": 0.2}, ValueError, "None for a rational"),
    ({"data_or_agent": Agent.nonmonotone(), "effect": 0.7}, ValueError, "'effect' parameter"),
    ({"data_or_agent": Agent.prompt_sensitive(shifts={"standard": 0.0}), "effect": 0.1},
     ValueError, "whose shifts are all 0"),
    ({"test": "conditional_forecasting"}, TypeError, "a pilot table for conditional_fore"),
    ({"test": "iterated_expectation_check"}, TypeError, "a pilot table for iterated_exp"),
])
def test_validation(kwargs, error, match):
    args = {"data_or_agent": LEAKY, "test": "ci_test", "n_contexts": [10], "n_sims": 1,
            **kwargs}
    with pytest.raises(error, match=match):
        plan(args.pop("data_or_agent"), **args)


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"effect": 0.3}, "None with a pilot table"),
    ({"options": {"group": None}}, "a 'group' column for a pilot"),
    ({"options": {"group": "nope"}}, "column 'nope' not found"),
    ({"test": "iterated_expectation_check", "n_repetitions": 1}, "a 'baseline' table"),
    ({"test": "conditional_forecasting", "n_repetitions": 2}, r"\[1\] for conditional_fore"),
])
def test_validation_of_a_pilot(kwargs, match):
    args = {"test": "ci_test", "n_contexts": [10], "n_sims": 1, **kwargs}
    with pytest.raises(ValueError, match=match):
        plan(_pilot(), **args)


def test_lie_baseline_options_validated():
    from tests.core.test_conformance import _lie_table

    t = _lie_table()
    with pytest.raises(ValueError, match="no random-forest baseline"):
        plan(t, test="iterated_expectation_check", n_contexts=4, n_repetitions=1,
             options={"baseline": t, "evidence": ["a"]})
    with pytest.raises(ValueError, match="column 'context'"):
        plan(t, test="iterated_expectation_check", n_contexts=4, n_repetitions=1,
             options={"baseline": t.drop(columns="context")})


def test_command_line(tmp_path, capsys):
    from coherence_cli import main

    out = tmp_path / "power.csv"
    code = main(["plan", "--agent", "prompt_sensitive", "--effect", "0.1", "--test",
                 "prompt_consistency", "--contexts", "10", "20", "--repetitions", "2",
                 "--sims", "3", "--csv", str(out)])
    text = capsys.readouterr().out
    assert code == 0
    table = pd.read_csv(out)
    assert "Power of prompt_consistency" in text
    reached = (table["power"] >= 0.8).any()
    assert ("Cheapest design" in text) == reached and ("No design reaches" in text) != reached
    assert list(table["n_calls"]) == [80, 160]
    assert main(["plan", "--test", "ci_test", "--contexts", "10"]) == 2
    assert "either a pilot table or --agent" in capsys.readouterr().err


def test_command_line_defaults_to_one_repetition_where_it_is_the_only_value(tmp_path, capsys):
    # --repetitions defaulted to 5, which conditional_forecasting and the LIE check refuse
    from coherence_cli import main

    path = tmp_path / "pilot.csv"
    _pairs_pilot(0.2, 0.1).to_csv(path, index=False)
    out = tmp_path / "power.csv"
    code = main(["plan", str(path), "--test", "conditional_forecasting", "--contexts", "20",
                 "--sims", "3", "--csv", str(out)])
    assert code == 0, capsys.readouterr().err
    assert list(pd.read_csv(out)["n_repetitions"]) == [1]


def test_the_default_repetitions_follow_the_test():
    # n_repetitions defaulted to 5, which conditional_forecasting refuses
    res = plan(_pairs_pilot(0.2, 0.1), test="conditional_forecasting", n_contexts=20,
               n_sims=3, rng=0)
    assert list(res.table["n_repetitions"]) == [1]


def test_progress_bar_counts_the_studies_on_stderr_and_changes_nothing(capsys):
    agent = Agent.leaky()
    kw = {"test": "ci_test", "n_contexts": [15, 20], "n_repetitions": 2, "effect": 0.9,
          "n_sims": 3, "options": {"n_resamples": 19, "ci_method": "subsampling"}, "rng": 0}
    quiet = plan(agent, **kw)
    assert capsys.readouterr().err == ""   # None: no bar when stderr is not a terminal
    shown = plan(agent, **kw, progress=True)
    err = capsys.readouterr().err
    assert "plan" in err and "6/6" in err and "20 contexts x 2 repetitions" in err
    pd.testing.assert_frame_equal(shown.table, quiet.table)
    with pytest.raises(TypeError, match="progress"):
        plan(agent, **kw, progress="yes")


def test_command_line_quiet_has_no_progress_bar(capsys):
    from coherence_cli import main

    argv = ["plan", "--agent", "leaky", "--test", "ci_test", "--contexts", "15",
            "--repetitions", "2", "--sims", "2", "--quiet"]
    assert main(argv) == 0
    assert "plan" not in capsys.readouterr().err


@pytest.mark.parametrize("kind", ["rational", "leaky", "nonmonotone", "prompt_sensitive"])
@pytest.mark.parametrize("test", ["ci_test", "prompt_consistency"])
def test_agent_studies_are_simulate_tables_drawn_without_their_truth(kind, test):
    # plan draws each study's table without simulate's truth (the same for every study, and
    # most of simulate's time): the tables are simulate's, value for value
    from coherence._decision._simulate import PROMPTS
    from coherence._plan import _agent_study

    agent = getattr(Agent, kind)()
    prompts = ("standard",) if test == "ci_test" else (
        tuple(agent.shifts) if kind == "prompt_sensitive" else PROMPTS)
    for seed in range(3):
        got = _agent_study(agent, test, 17, 3, np.random.default_rng(seed))
        want = coherence.simulate(agent, n_contexts=17, n_repetitions=3, prompts=prompts,
                                  rng=np.random.default_rng(seed)).data
        pd.testing.assert_frame_equal(got, want, check_exact=True)


def test_prompt_consistency_pilot_missing_a_prompt_costs_its_mean_prompts():
    # n_prompts was the largest count of prompts in a context (4) though the studies keep a
    # missing prompt missing: n_calls 120 -> 105 at 10 x 3 for a pilot of 3.5 prompts a context
    d = _pilot()
    first = sorted(d["prompt"].unique())[0]
    pilot = d.loc[~(d["context"].isin(range(6)) & (d["prompt"] == first)).to_numpy()]
    # at 3 contexts neither study has a p-value: said, not passed off as power 0
    with pytest.warns(coherence.DegenerateDataWarning, match=r"2 design\(s\) \(3 contexts x "
                      r"1 repetitions; 3 contexts x 3 repetitions\)"):
        res = plan(pilot, test="prompt_consistency", n_contexts=[3, 10], n_repetitions=[1, 3],
                   n_sims=2, options={"n_resamples": 19}, rng=0)
    assert list(res.table["n_prompts"]) == [3.5] * 4
    assert list(res.table["n_calls"]) == [11, 32, 35, 105]  # 3 x 1 x 3.5 = 10.5, rounded up
    assert res.n_pilot_contexts == 12


def test_conditional_forecasting_counts_the_pilot_pairs_it_draws_from():
    # n_pilot_contexts counted every row (40) for 20 pairs of the planned category
    strong, weak = _pairs_pilot(0.1, 0.2, n=20), _pairs_pilot(0.1, 0.1, n=20)
    pilot = pd.concat([strong, weak.assign(category="weak")], ignore_index=True)
    res = plan(pilot, test="conditional_forecasting", n_contexts=20, n_sims=5, rng=0)
    assert res.n_pilot_contexts == 20
    every = plan(pilot, test="conditional_forecasting", n_contexts=20, n_sims=5,
                 options={"category": None}, rng=0)
    assert every.n_pilot_contexts == 40
    failed = pilot.assign(error=[None] * 39 + ["timeout"])
    with pytest.warns(coherence.SkippedRecordsWarning):
        res = plan(failed, test="conditional_forecasting", n_contexts=20, n_sims=5,
                   options={"category": "weak"}, rng=0)
    assert res.n_pilot_contexts == 19


def test_conditional_forecasting_says_its_undefined_studies_are_not_seen():
    # pairs_power gives its rejection rate alone: a t-test sample with no spread (two draws
    # of one pair, about 1 in 30 at 2 pairs) counts as not rejected and n_undefined stays 0,
    # which the result's docstring said nothing of
    res = plan(_pairs_pilot(0.1, 0.2), test="conditional_forecasting", n_contexts=2,
               effect=0.02, n_sims=200, options={"test": "t"}, rng=0)
    assert res.table["n_undefined"].iloc[0] == 0
    doc = " ".join((coherence.PlanResult.__doc__ or "").split())
    assert "Conditional forecasting reads :func:`pairs_power`'s simulated rejection rate " \
           "alone, so both are 0 there" in doc
