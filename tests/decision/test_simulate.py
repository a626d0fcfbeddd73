"""Simulated agents: table layout, exact truths (two independent ways), validation."""

import math
import re
from decimal import ROUND_HALF_EVEN
from decimal import Decimal

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from coherence import ACTIONS
from coherence import Agent
from coherence import simulate
from coherence import snap_to_grid
from coherence._decision._truth import conditional_mutual_information

COLUMNS = ["context", "repetition", "prompt", "belief", "action", "outcome", "truth",
           "latent_belief"]


def plugin_cmi(data: pd.DataFrame, z=("belief",)) -> float:
    """Plug-in I(action; outcome | z) from observed frequencies (independent of the truth code)."""
    counts = data.groupby([*z, "outcome", "action"], observed=True).size()
    joint = counts.rename("probability").reset_index()
    return conditional_mutual_information(joint, "action", "outcome", list(z))


# ----------------------------------------------------------------------------- layout
@pytest.mark.parametrize("kind", ["rational", "leaky", "nonmonotone", "prompt_sensitive"])
def test_table_columns_and_dtypes(kind):
    study = simulate(kind, n_contexts=40, n_repetitions=3, rng=1)
    d = study.data
    assert list(d.columns) == COLUMNS
    assert d["context"].dtype == np.int64 and d["repetition"].dtype == np.int64
    assert d["outcome"].dtype == np.int64
    for col in ("belief", "truth", "latent_belief"):
        assert d[col].dtype == np.float64
    assert isinstance(d["prompt"].dtype, pd.CategoricalDtype)
    assert list(d["action"].cat.categories) == list(ACTIONS)
    n_prompts = 4 if kind == "prompt_sensitive" else 1
    assert len(d) == 40 * 3 * n_prompts
    assert d.groupby(["context", "prompt"], observed=True).size().eq(3).all()
    assert d["belief"].between(0, 1).all() and d["outcome"].isin([0, 1]).all()
    # beliefs lie exactly on the 0.05 grid (the same doubles as the decimals)
    grid = np.round(np.arange(21) / 20, 12)
    assert np.isin(d["belief"].to_numpy(), grid).all()
    # outcome and truth are fixed per context
    assert d.groupby("context")["outcome"].nunique().eq(1).all()
    assert d.groupby("context")["truth"].nunique().eq(1).all()


def test_reproducible_and_rng_sensitive():
    a = simulate("leaky", n_contexts=30, rng=5).data
    b = simulate("leaky", n_contexts=30, rng=5).data
    c = simulate("leaky", n_contexts=30, rng=6).data
    pd.testing.assert_frame_equal(a, b)
    assert not a.equals(c)


def test_posteriors_cover_unit_interval_evenly():
    d = simulate("rational", n_contexts=1000, n_repetitions=1, rng=0).data
    counts = np.histogram(d["truth"], bins=20, range=(0, 1))[0]
    assert counts.min() == counts.max() == 50  # stratified: exactly one per 1/1000 cell


def test_supplied_posteriors():
    q = np.array([0.1, 0.1, 0.9, 0.5])
    study = simulate("rational", posteriors=q, n_contexts=None, n_repetitions=2, rng=0)
    np.testing.assert_array_equal(study.data["truth"].to_numpy(), np.repeat(q, 2))
    assert study.truth.design == "supplied"


def test_supplied_posteriors_series_is_read_by_its_index():
    # a Series indexed by the context numbers out of order: context 2 gets 0.9, not context 0
    q = pd.Series([0.9, 0.1, 0.5], index=[2, 0, 1])
    d = simulate("rational", posteriors=q, n_contexts=None, n_repetitions=1, rng=0).data
    assert dict(zip(d["context"], d["truth"], strict=True)) == {0: 0.1, 1: 0.5, 2: 0.9}
    for index in (["a", "b", "c"], [0, 1, 3], [0, 0, 1], [0.0, 1.0, 2.0]):
        with pytest.raises(ValueError, match=r"'posteriors' parameter of simulate is a pandas "
                           r"Series, so its index must name each context by its number 0 \.\. 2"
                           r".*posteriors\.to_numpy\(\)"):
            simulate("rational", posteriors=pd.Series(q.to_numpy(), index=index),
                     n_contexts=None)


def test_binary_actions():
    d = simulate(Agent.rational(defer=False), n_contexts=50, rng=0).data
    assert list(d["action"].cat.categories) == ["yes", "no"]


def test_snap_to_grid_gives_decimal_doubles():
    out = snap_to_grid([0.349999999, 0.35 + 1e-12, 0.30000000000000004, 0.7], 0.05)
    assert list(out) == [0.35, 0.35, 0.3, 0.7]
    np.testing.assert_array_equal(snap_to_grid([0.123], None), [0.123])


def test_snap_to_grid_sends_every_decimal_midpoint_to_the_even_multiple():
    # the doubles of 0.545 and 0.5015 lie a hair above the midpoint, 0.575 and 0.5035 a hair
    # below: 0.545 went to 0.55 and 0.575 to 0.57 (odd multiples) though 0.1 went to 0.0 on
    # a grid of 0.2; every value m / 2000 that is a decimal midpoint now goes to the even one
    assert list(snap_to_grid([0.545, 0.575, 0.535, 0.555], 0.01)) == [0.54, 0.58, 0.54, 0.56]
    assert list(snap_to_grid([0.5015, 0.5035], 0.001)) == [0.502, 0.504]
    assert list(snap_to_grid([0.1, 0.9, 0.125, 0.5], 0.2)) == [0.0, 0.8, 0.2, 0.4]
    assert list(snap_to_grid([0.125, 0.375, 0.5], 0.05)) == [0.1, 0.4, 0.5]
    assert list(snap_to_grid([0.545 + 1e-9, 0.545 - 1e-9], 0.01)) == [0.55, 0.54]
    for n in (5, 10, 20, 25, 50, 100, 1000):
        values = np.arange(2001) / 2000
        got = snap_to_grid(values, 1 / n)
        k = [int((Decimal(m) * n / 2000).to_integral_value(rounding=ROUND_HALF_EVEN))
             for m in range(2001)]
        np.testing.assert_array_equal(got, [float(Decimal(j) / Decimal(n)) for j in k])


# ----------------------------------------------------------------------------- truth
def test_rational_truth_is_zero_and_plugin_agrees():
    study = simulate("rational", n_contexts=100_000, n_repetitions=2, rng=2)
    assert study.truth.cmi == 0.0 and study.truth.cmi_given_latent == 0.0
    # plug-in bias ~ (|A|-1)(|Y|-1)|Z| / (2N) ~ 1e-4 here
    assert abs(plugin_cmi(study.data)) < 5e-4


def hand_joint_leaky(strength, temperature, loss_defer):
    """P(belief, outcome, action) by hand for grid 0.5 (cells [0, .25), [.25, .75), [.75, 1])."""
    cells = {0.0: (0.0, 0.25), 0.5: (0.25, 0.75), 1.0: (0.75, 1.0)}
    lr = (1 + strength) / (1 - strength)
    rows = []
    for b, (lo, hi) in cells.items():
        mass = {1: (hi**2 - lo**2) / 2, 0: (hi - lo) - (hi**2 - lo**2) / 2}
        for y in (0, 1):
            for s in (0, 1):
                p_s = (1 + strength) / 2 if s == y else (1 - strength) / 2
                if 0 < b < 1:
                    odds = b / (1 - b) * (lr if s == 1 else 1 / lr)
                    bb = odds / (1 + odds)
                else:
                    bb = b
                losses = np.array([1 - bb, bb, loss_defer])
                probs = np.exp(-losses / temperature)
                probs /= probs.sum()
                for action, pa in zip(ACTIONS, probs, strict=True):
                    rows.append((b, y, action, mass[y] * p_s * pa))
    joint = pd.DataFrame(rows, columns=["belief", "outcome", "action", "probability"])
    return joint.groupby(["belief", "outcome", "action"], as_index=False)["probability"].sum()


def test_leaky_truth_matches_hand_computation():
    agent = Agent.leaky(strength=0.6, grid=0.5, temperature=0.2, loss_defer=0.3)
    study = simulate(agent, n_contexts=10, rng=0)
    expected = conditional_mutual_information(hand_joint_leaky(0.6, 0.2, 0.3), "action",
                                              "outcome", ["belief"])
    assert expected > 0.01
    assert study.truth.cmi == pytest.approx(expected, rel=1e-10)
    assert study.truth.cmi_given_latent == pytest.approx(expected, rel=1e-10)


@pytest.mark.parametrize("agent", [
    Agent.leaky(strength=0.5),
    Agent.leaky(strength=0.8, grid=0.1, weighting="prelec", gamma=0.6, bias=0.05),
    Agent.rational(report_noise=0.1),
    Agent.prompt_sensitive(),
])
def test_truth_matches_large_sample_plugin(agent):
    study = simulate(agent, n_contexts=200_000, n_repetitions=1, rng=3)
    truth = study.truth
    assert truth.cmi > 1e-4
    # sampling sd of the plug-in at N = 2e5 is ~1e-3 or less for these effects
    assert plugin_cmi(study.data) == pytest.approx(truth.cmi, abs=2e-3, rel=0.1)


def test_report_noise_breaks_independence_only_given_report():
    study = simulate(Agent.rational(report_noise=0.1), n_contexts=100_000, n_repetitions=2,
                     rng=4)
    assert study.truth.cmi > 1e-3
    assert study.truth.cmi_given_latent == 0.0
    assert abs(plugin_cmi(study.data, z=("latent_belief",))) < 5e-4


def test_prompt_sensitive_truth_and_shifts():
    study = simulate("prompt_sensitive", n_contexts=2000, rng=5)
    truth = study.truth
    # within a prompt only the clipping at 0 and 1 pools latent beliefs: a tiny dependence
    assert 0.0 <= truth.cmi_within_prompt < truth.cmi / 50
    assert truth.cmi_by_prompt["standard"] == 0.0  # no shift, no clipping
    assert truth.cmi_by_prompt["bayesian"] > 0.0  # clipped at 1 above 0.9
    assert set(truth.monotone.values()) == {"increasing"}  # on the standard rows
    assert dict(truth.prompt_shifts) == {"standard": 0.0, "mse": 0.05, "absolute": -0.1,
                                         "bayesian": 0.1}
    d = study.data
    interior = d[(d["latent_belief"] >= 0.15) & (d["latent_belief"] <= 0.85)]
    diff = (interior["belief"] - interior["latent_belief"]).groupby(
        interior["prompt"], observed=True).agg(["min", "max"])
    for prompt, shift in truth.prompt_shifts.items():
        assert diff.loc[prompt, "min"] == pytest.approx(shift, abs=1e-9)
        assert diff.loc[prompt, "max"] == pytest.approx(shift, abs=1e-9)


def test_nonmonotone_truth_and_empirical_shares():
    study = simulate("nonmonotone", n_contexts=100_000, n_repetitions=1, rng=6)
    truth = study.truth
    assert truth.monotone[("yes", "no")] == "increasing"
    assert truth.monotone[("yes", "defer")] == "nonmonotone"
    assert truth.monotone[("defer", "no")] == "nonmonotone"
    assert truth.cmi == 0.0
    d = study.data
    counts = d.groupby(["belief", "action"], observed=False).size().unstack()
    share = (counts["yes"] / (counts["yes"] + counts["defer"])).dropna()
    assert (np.diff(share.to_numpy()) < -0.2).any()  # a clear drop entering the band
    share = (counts["defer"] / (counts["defer"] + counts["no"])).dropna()
    assert (np.diff(share.to_numpy()) < -0.2).any()  # and another leaving it
    for kind in ("rational", "leaky"):
        assert set(simulate(kind, n_contexts=10, rng=0).truth.monotone.values()) == {
            "increasing"}


def test_continuous_beliefs():
    study = simulate(Agent.leaky(strength=0.5, grid=None), n_contexts=20, rng=0)
    assert study.truth.cmi > 0
    grid_version = simulate(Agent.leaky(strength=0.5, grid=0.01), n_contexts=20, rng=0)
    assert study.truth.cmi == pytest.approx(grid_version.truth.cmi, rel=0.05)
    noisy = simulate(Agent.rational(grid=None, report_noise=0.1), n_contexts=20, rng=0)
    assert math.isnan(noisy.truth.cmi) and noisy.truth.cmi_given_latent == 0.0


def test_joint_is_a_distribution():
    for kind in ("rational", "leaky", "nonmonotone", "prompt_sensitive"):
        joint = simulate(kind, n_contexts=5, rng=0).truth.joint
        assert joint["probability"].sum() == pytest.approx(1.0, abs=1e-12)
        assert (joint["probability"] > 0).all()


def test_supplied_posteriors_truth_is_for_those_contexts():
    q = np.linspace(0.01, 0.99, 200)
    study = simulate(Agent.leaky(strength=0.5), posteriors=q, n_contexts=None, rng=0)
    population = simulate(Agent.leaky(strength=0.5), n_contexts=10, rng=0)
    assert study.truth.cmi == pytest.approx(population.truth.cmi, rel=0.05)


@given(
    kind=st.sampled_from(["rational", "leaky", "nonmonotone", "prompt_sensitive"]),
    grid=st.sampled_from([None, 0.1, 0.05, 0.01]),
    bias=st.floats(-0.2, 0.2),
    weighting=st.sampled_from([None, "prelec", "tversky_kahneman"]),
    gamma=st.floats(0.5, 1.5),
    seed=st.integers(0, 2**32),
)
@settings(max_examples=20)  # each example simulates a study and its truth (numerical CMI)
def test_properties(kind, grid, bias, weighting, gamma, seed):
    agent = getattr(Agent, kind)(grid=grid, bias=bias, weighting=weighting, gamma=gamma)
    study = simulate(agent, n_contexts=20, n_repetitions=2, rng=seed)
    d = study.data
    assert d["belief"].between(0, 1).all()
    assert d["latent_belief"].between(0, 1).all()
    if grid is not None:
        np.testing.assert_array_equal(snap_to_grid(d["belief"], grid), d["belief"])
    t = study.truth
    assert math.isnan(t.cmi) or t.cmi >= 0
    assert t.cmi_given_latent >= 0
    if kind != "leaky":
        assert t.cmi_given_latent == 0.0


# ----------------------------------------------------------------------------- validation
@pytest.mark.parametrize(("kwargs", "error", "message"), [
    ({"agent": "bayesian"}, ValueError,
     "The 'agent' parameter of simulate must be one of 'rational', 'leaky', 'nonmonotone', "
     "'prompt_sensitive'; got 'bayesian'."),
    ({"agent": 3}, TypeError, "The 'agent' parameter of simulate must be an agent name"),
    ({"n_contexts": 0}, ValueError,
     "The 'n_contexts' parameter of simulate must be an int >= 1; got 0."),
    ({"n_repetitions": 1.5}, TypeError,
     "The 'n_repetitions' parameter of simulate must be an int >= 1; got 1.5."),
    ({"posteriors": [0.2, 1.3]}, ValueError,
     "Column 'posteriors' (input to simulate) must hold probabilities in [0, 1]; "
     "1 offending row (first: row 1 = 1.3)."),
    ({"posteriors": [0.2, np.nan]}, ValueError,
     "Column 'posteriors' (input to simulate) must not contain NaN or missing values"),
    ({"posteriors": [0.2, 0.3], "n_contexts": 5}, ValueError,
     "The 'n_contexts' parameter of simulate must be None or equal to len(posteriors) = 2; "
     "got 5."),
    ({"posteriors": [0.2, 0.3], "n_contexts": 2.7}, TypeError,
     "The 'n_contexts' parameter of simulate must be an int >= 1; got 2.7."),
    ({"posteriors": [0.2, 0.3], "n_contexts": "two"}, TypeError,
     "The 'n_contexts' parameter of simulate must be an int >= 1; got 'two'."),
    ({"prompts": ["standard", "standard"]}, ValueError,
     "The 'prompts' parameter of simulate must be free of duplicates"),
    ({"prompts": []}, ValueError,
     "The 'prompts' parameter of simulate must be a non-empty sequence of prompt names"),
    ({"rng": 1.5}, TypeError, "The 'rng' parameter of simulate must be an int"),
])
def test_simulate_validation(kwargs, error, message):
    with pytest.raises(error, match=re.escape(message)):
        simulate(**kwargs)


@pytest.mark.parametrize(("build", "error", "message"), [
    (lambda: Agent.rational(grid=0.3), ValueError,
     "The 'grid' parameter of Agent.rational must be None or a step with 1/grid an integer"),
    (lambda: Agent.rational(grid=0), ValueError,
     "The 'grid' parameter of Agent.rational must be a finite float in (0.0, 0.5]; got 0.0."),
    (lambda: Agent.rational(temperature=0), ValueError,
     "The 'temperature' parameter of Agent.rational must be a finite float in (0.0, inf]"),
    (lambda: Agent.rational(report_noise=-1), ValueError,
     "The 'report_noise' parameter of Agent.rational must be a finite float in [0.0, inf]"),
    (lambda: Agent.rational(weighting="linear"), ValueError,
     "The 'weighting' parameter of Agent.rational must be one of None, 'prelec', "
     "'tversky_kahneman'; got 'linear'."),
    (lambda: Agent.rational(weighting="tversky_kahneman", gamma=0.2), ValueError,
     "must be >= 0.28 for the Tversky-Kahneman weighting"),
    (lambda: Agent.leaky(strength=1.0), ValueError,
     "The 'strength' parameter of Agent.leaky must be a finite float in [0.0, 1.0); got 1.0."),
    (lambda: Agent.nonmonotone(band=(0.8, 0.2)), ValueError,
     "The 'band' parameter of Agent.nonmonotone must be a pair (low, high) with "
     "0 <= low < high <= 1"),
    (lambda: Agent.prompt_sensitive(shifts={"mse": "big"}), TypeError,
     "The 'shifts['mse']' parameter of Agent.prompt_sensitive must be a finite float"),
    (lambda: Agent.leaky(colour="red"), TypeError,
     "Agent.leaky got unknown option(s) 'colour'"),
    (lambda: Agent.rational(defer="no"), TypeError,
     "The 'defer' parameter of Agent.rational must be a bool; got 'no'."),
])
def test_agent_validation(build, error, message):
    with pytest.raises(error, match=re.escape(message)):
        build()


@pytest.mark.parametrize("grid, error", [(0, ValueError), (-0.05, ValueError),
                                         (1.5, ValueError), (float("nan"), ValueError),
                                         ("0.05", TypeError)])
def test_snap_to_grid_bad_grid(grid, error):
    # issue 17: grid 0 used to divide by zero
    with pytest.raises(error, match=r"The 'grid' parameter of snap_to_grid must be a finite "
                       r"float in \(0.0, 1.0\]"):
        snap_to_grid([0.3], grid)


@pytest.mark.parametrize(("options", "error", "message"), [
    ({"temperature": -1}, ValueError, "The 'temperature' parameter of Agent must be a finite "
                                      "float in (0.0, inf]; got -1.0."),
    ({"kind": "x"}, ValueError, "The 'kind' parameter of Agent must be one of 'rational', "),
    ({"grid": 0}, ValueError, "The 'grid' parameter of Agent must be a finite float in "),
    ({"grid": 0.03}, ValueError, "The 'grid' parameter of Agent must be None or a step with "
                                 "1/grid an integer"),
    ({"band": (0.8, 0.2)}, ValueError, "The 'band' parameter of Agent must be a pair "),
    ({"bias": float("nan")}, ValueError, "The 'bias' parameter of Agent must be a finite "),
    ({"strength": 1.0}, ValueError, "The 'strength' parameter of Agent must be"),
    ({"defer": 1}, TypeError, "The 'defer' parameter of Agent must be a bool"),
    ({"shifts": {"mse": 2.0}}, ValueError, "The 'shifts['mse']' parameter of Agent"),
])
def test_agent_constructed_directly_is_validated(options, error, message):
    # Agent(...) validated nothing: a negative temperature, an unknown kind, grid 0, an
    # inverted band and a NaN bias were all accepted
    with pytest.raises(error, match=re.escape(message)):
        Agent(**options)


def test_agent_direct_equals_constructor():
    assert Agent(kind="leaky", strength=0.3) == Agent.leaky(strength=0.3)
    assert Agent() == Agent.rational()
    a = Agent(kind="nonmonotone", band=[0.4, 0.6], shifts={"mse": 0.1})
    assert a.band == (0.4, 0.6) and dict(a.shifts) == {"mse": 0.1}
    import dataclasses
    with pytest.raises(ValueError, match="'temperature' parameter of Agent"):
        dataclasses.replace(Agent.rational(), temperature=0.0)


@pytest.mark.parametrize(("values", "error", "message"), [
    ([float("nan")], ValueError, "must hold probabilities in [0, 1] (no NaN); 1 do not "
                                 "(first: nan)"),
    ([0.2, 1.2], ValueError, "(first: 1.2)"),
    (["a"], TypeError, "The 'values' parameter of snap_to_grid must be probabilities"),
])
def test_snap_to_grid_bad_values(values, error, message):
    with pytest.raises(error, match=re.escape(message)):
        snap_to_grid(values, 0.05)
    with pytest.raises(error, match="'values' parameter of snap_to_grid"):
        snap_to_grid(values, None)


def test_snap_to_grid_grid_must_divide_one():
    with pytest.raises(ValueError, match=r"'grid' parameter of snap_to_grid must be None or a "
                       r"step with 1/grid an integer"):
        snap_to_grid([0.2], 0.3)


def test_simulate_unknown_prompt():
    with pytest.raises(ValueError, match=r"The 'prompts' parameter of simulate must be names of "
                       r"prompt variants \('standard', 'mse', 'absolute', 'bayesian'\); got "
                       r"\['nonexistent'\]"):
        simulate(prompts=["nonexistent"], n_contexts=3)
    agent = Agent.prompt_sensitive(shifts={"mine": 0.1})
    data = simulate(agent, prompts=["mine", "standard"], n_contexts=3, rng=0).data
    assert set(data["prompt"]) == {"mine", "standard"}


@pytest.mark.parametrize(("build", "name"), [
    (lambda: Agent.nonmonotone(strength=0.8), "strength"),
    (lambda: Agent.prompt_sensitive(strength=0.5), "strength"),
    (lambda: Agent(kind="rational", strength=0.5), "strength"),
    (lambda: Agent.nonmonotone(defer=False), "defer"),
    (lambda: Agent.leaky(0.5, band=(0.4, 0.6), defer=False), "band"),
])
def test_options_an_agent_would_not_act_on_are_refused(build, name):
    # before: Agent.nonmonotone(strength=0.8) held strength 0.8 and drew no leak (truth
    # CMI 0); a band without defer priced an action the agent could not take
    with pytest.raises(ValueError, match=f"'{name}' parameter"):
        build()
    leaky_band = Agent.leaky(0.5, band=(0.4, 0.6))  # the combination that acts on both
    assert leaky_band.band == (0.4, 0.6) and leaky_band.strength == 0.5
