"""Hypothesis properties of ``cmi`` / ``mi``, ``snap_to_grid``, ``simulate`` and ``plan``.

``cmi`` and ``mi`` against the O(n^2) reference on mixed frames (strings, booleans,
several continuous coordinates, decimal grids snapped by ``resolution``); ``snap_to_grid``
against the nearest grid value written as a decimal; ``simulate``'s columns against its
agent's definition (the stratified posteriors, the latent belief, the report, the
shifts) and its truth against the identities the agents satisfy; ``plan``'s table
against its definition (the designs, the calls, the Wilson interval, the headline).
"""

from __future__ import annotations

import math
import warnings
from decimal import ROUND_HALF_EVEN
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence
from coherence import DegenerateDataWarning
from coherence import SmallSampleWarning
from coherence import TiesWarning
from tests._reference import reference_cmi


# --------------------------------------------------------------------------- cmi / mi
def _codes(values: pd.Series) -> np.ndarray:
    return pd.factorize(values, sort=True)[0].astype(np.int64)[:, None]


@st.composite
def mixed_frames(draw: st.DrawFn):
    """x, y, z as frames of discrete (strings, booleans, small ints) and continuous
    coordinates on a 0.05 or 0.1 decimal grid (inexact doubles), heavily tied."""
    n = draw(st.integers(6, 40))
    step = draw(st.sampled_from([0.05, 0.1]))
    top = round(1 / step)
    seed = draw(st.integers(0, 2**31 - 1))
    rng = np.random.default_rng(seed)

    def part(kinds):
        cols, cont = {}, []
        for i, kind in enumerate(kinds):
            if kind == "str":
                cols[f"s{i}"] = rng.choice(["a", "b", "c"], size=n).astype(object)
            elif kind == "bool":
                cols[f"b{i}"] = rng.random(n) < 0.5
            elif kind == "int":
                cols[f"i{i}"] = rng.integers(0, 3, size=n)
            else:  # a continuous coordinate on the decimal grid, few distinct values
                cols[f"c{i}"] = rng.integers(0, min(top, 6) + 1, size=n) * step
                cont.append(f"c{i}")
        return pd.DataFrame(cols, index=range(n)), cont

    kinds = st.lists(st.sampled_from(["str", "bool", "int", "cont"]), min_size=1, max_size=2)
    x, y = part(draw(kinds)), part(draw(kinds))
    z = part(draw(st.lists(st.sampled_from(["str", "int", "cont"]), min_size=0, max_size=2)))
    k = draw(st.integers(1, 4))
    return x, y, z, step, min(k, n - 1)


def _split(frame: pd.DataFrame, cont: list[str], step: float):
    """The reference's (continuous, discrete) arrays: continuous coordinates snapped to
    integer multiples of ``step`` as the docstring says, discrete ones as codes."""
    n = len(frame)
    c = (np.column_stack([np.round(frame[col].to_numpy(float) / step) for col in cont])
         if cont else np.empty((n, 0)))
    disc = [col for col in frame.columns if col not in cont]
    d = (np.column_stack([_codes(frame[col])[:, 0] for col in disc]) if disc
         else np.empty((n, 0), dtype=np.int64))
    return c, d


@given(mixed_frames())
@settings(max_examples=60)
def test_cmi_on_mixed_frames_equals_the_reference(case):
    (x, xc), (y, yc), (z, zc), step, k = case
    got = coherence.cmi(x, y, z if z.shape[1] else None, k=k, resolution=step)
    ref = reference_cmi(*_split(x, xc, step), *_split(y, yc, step), *_split(z, zc, step), k=k)
    if math.isnan(ref):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(ref, rel=1e-10, abs=1e-10)
    if z.shape[1] == 0:  # without z, cmi is mi
        mi = coherence.mi(x, y, k=k, resolution=step)
        assert mi == got or (math.isnan(mi) and math.isnan(got))


@given(mixed_frames(), st.randoms(use_true_random=False))
@settings(max_examples=30)
def test_cmi_row_order_names_and_symmetry(case, shuffle):
    (x, _), (y, _), (z, _), step, k = case
    zz = z if z.shape[1] else None
    a = coherence.cmi(x, y, zz, k=k, resolution=step)
    order = list(range(len(x)))
    shuffle.shuffle(order)
    rows = [fr.iloc[order].reset_index(drop=True) for fr in (x, y, z)]
    renamed = [fr.rename(columns=lambda c: f"renamed {c}") for fr in rows]
    b = coherence.cmi(renamed[0], renamed[1], renamed[2] if z.shape[1] else None, k=k,
                      resolution=step)
    c = coherence.cmi(y, x, zz, k=k, resolution=step)  # I(x ; y | z) = I(y ; x | z)
    for v in (b, c):
        assert (math.isnan(a) and math.isnan(v)) or v == pytest.approx(a, rel=1e-12,
                                                                       abs=1e-12)


# --------------------------------------------------------------------------- snap_to_grid
STEPS = [Fraction(1, n) for n in (1, 2, 4, 5, 10, 20, 25, 50, 100, 1000)]


@given(st.sampled_from(STEPS), st.lists(st.one_of(
    st.floats(0, 1, allow_nan=False), st.integers(0, 2000).map(lambda m: m / 2000)),
    min_size=1, max_size=20))
@settings(max_examples=80)
def test_snap_to_grid_is_the_nearest_decimal_grid_value(step, values):
    """Each value goes to the nearest multiple of the step (a half, as a decimal, to the
    even multiple: 0.1 on a step of 0.2 is 0.0, though its double is a hair above 0.1),
    returned as the double of that decimal (0.35 is the literal 0.35)."""
    grid = float(step)
    n = step.denominator
    got = coherence.snap_to_grid(values, grid)
    for v, g in zip(values, got, strict=True):
        cells = Decimal(repr(float(v))) * n  # the value as written, in steps
        low = cells.to_integral_value(rounding="ROUND_FLOOR")
        if abs(cells - low - Decimal("0.5")) <= Decimal("1e-12") * n:  # DECIMAL_SLACK
            cells = low + Decimal("0.5")
        k = int(cells.to_integral_value(rounding=ROUND_HALF_EVEN))
        assert g == float(Decimal(k) / Decimal(n)), (v, g, k, n)
        assert abs(Fraction(float(g)) - Fraction(v)) <= step / 2 + Fraction(1, 10**12)
    again = coherence.snap_to_grid(got, grid)  # idempotent
    np.testing.assert_array_equal(again, got)
    order = np.argsort(values, kind="stable")  # monotone
    assert (np.diff(got[order]) >= 0).all()
    np.testing.assert_array_equal(coherence.snap_to_grid(values, None), values)


# --------------------------------------------------------------------------- simulate
AGENTS = st.sampled_from(["rational", "leaky", "nonmonotone", "prompt_sensitive",
                          "weighted", "biased", "continuous"])


def make_agent(name: str):
    if name == "weighted":
        return coherence.Agent.rational(weighting="prelec", gamma=0.6)
    if name == "biased":
        return coherence.Agent.rational(bias=0.1, grid=0.1, loss_fp=2.0)
    if name == "continuous":
        return coherence.Agent.rational(grid=None, defer=False)
    return name


@given(AGENTS, st.integers(1, 12), st.integers(1, 3), st.integers(0, 2**16))
@settings(max_examples=30)
def test_simulate_columns_follow_the_agent_definition(name, n_contexts, n_reps, seed):
    study = coherence.simulate(make_agent(name), n_contexts=n_contexts, n_repetitions=n_reps,
                               rng=seed)
    d, agent = study.data, study.truth.agent
    prompts = list(d["prompt"].cat.categories)
    assert len(d) == n_contexts * n_reps * len(prompts)
    # one stratified posterior per context: exactly one in each [i/n, (i+1)/n)
    q = d.groupby("context")["truth"].agg(["min", "max"])
    assert (q["min"] == q["max"]).all()
    cells = np.floor(q["min"].to_numpy() * n_contexts).astype(int)
    assert sorted(cells) == list(range(n_contexts))
    for col in ("outcome", "latent_belief"):  # constant within a context
        assert (d.groupby("context")[col].nunique() == 1).all()
    # the latent belief is the snapped, clipped, weighted and biased posterior
    expected = coherence.snap_to_grid(np.clip(agent.weight(d["truth"].to_numpy()) + agent.bias,
                                              0, 1), agent.grid)
    np.testing.assert_array_equal(d["latent_belief"].to_numpy(), expected)
    # without report noise the report is the latent belief plus the prompt's shift
    shift = d["prompt"].map(lambda p: agent.shift(str(p))).to_numpy(dtype=float)
    report = coherence.snap_to_grid(np.clip(d["latent_belief"].to_numpy() + shift, 0, 1),
                                    agent.grid)
    np.testing.assert_array_equal(d["belief"].to_numpy(), report)
    assert set(d["action"].astype(str)) <= set(agent.actions)
    assert (d.groupby(["context", "prompt"], observed=True)["repetition"].apply(
        lambda r: sorted(r) == list(range(n_reps)))).all()
    # the truth: no leak given the latent belief but for the leaky agent
    truth = study.truth
    if agent.kind != "leaky":
        assert truth.cmi_given_latent == pytest.approx(0.0, abs=1e-12)
    if agent.kind == "rational":  # the report is the latent belief: no CMI at all
        assert truth.cmi == pytest.approx(0.0, abs=1e-12)
        assert set(truth.monotone.values()) <= {"increasing"}
    assert truth.cmi >= -1e-12 and truth.cmi_within_prompt >= -1e-12
    # the same rng, the same study
    again = coherence.simulate(make_agent(name), n_contexts=n_contexts,
                               n_repetitions=n_reps, rng=seed)
    pd.testing.assert_frame_equal(d, again.data)


@given(st.floats(0.05, 5.0), st.floats(0.05, 1.0), st.floats(0.05, 0.9),
       st.lists(st.integers(0, 100).map(lambda m: m / 100), min_size=1, max_size=10))
@settings(max_examples=40)
def test_choice_probabilities_are_mirror_symmetric_with_equal_losses(loss, temperature,
                                                                     defer_loss, beliefs):
    """With equal losses of a false yes and a false no, P(yes | b) = P(no | 1 - b) and
    P(defer | b) = P(defer | 1 - b); each row is a distribution; the share of yes among
    yes/no rises with the belief."""
    agent = coherence.Agent.rational(loss_fp=loss, loss_fn=loss, temperature=temperature,
                                     loss_defer=defer_loss, grid=None)
    b = np.asarray(beliefs)
    p, m = agent.choice_probabilities(b), agent.choice_probabilities(1.0 - b)
    np.testing.assert_allclose(p.sum(axis=1), 1.0, rtol=0, atol=1e-12)
    np.testing.assert_allclose(p[:, 0], m[:, 1], rtol=1e-9, atol=1e-300)
    np.testing.assert_allclose(p[:, 2], m[:, 2], rtol=1e-9, atol=1e-300)
    order = np.argsort(b)
    share = p[order, 0] / (p[order, 0] + p[order, 1])
    assert (np.diff(share) >= -1e-15).all()


# --------------------------------------------------------------------------- plan
Z95 = 1.959963984540054


def wilson(k: int, n: int) -> tuple[float, float]:
    p = k / n
    centre = (p + Z95**2 / (2 * n)) / (1 + Z95**2 / n)
    half = Z95 / (1 + Z95**2 / n) * math.sqrt(p * (1 - p) / n + Z95**2 / (4 * n * n))
    return centre - half, centre + half


@given(st.lists(st.integers(6, 14), min_size=1, max_size=2, unique=True),
       st.lists(st.integers(1, 2), min_size=1, max_size=2, unique=True),
       st.sampled_from([0.2, 0.5]), st.integers(0, 2**10))
@settings(max_examples=5)
def test_plan_table_follows_its_definition(n_contexts, n_reps, target, seed):
    with warnings.catch_warnings():
        for w in (SmallSampleWarning, DegenerateDataWarning, TiesWarning):
            warnings.simplefilter("ignore", w)
        res = coherence.plan(coherence.Agent.leaky(strength=0.9), test="ci_test",
                             n_contexts=n_contexts, n_repetitions=n_reps, n_sims=4,
                             power=target, alpha=0.2,
                             options={"n_resamples": 9, "ci_method": None}, rng=seed)
    t = res.table
    assert sorted(zip(t["n_contexts"], t["n_repetitions"], strict=True)) == sorted(
        (c, r) for c in n_contexts for r in n_reps)
    assert (t["n_calls"] == t["n_contexts"] * t["n_repetitions"] * t["n_prompts"]).all()
    assert (t["n_simulations"] == 4).all() and res.n_designs == len(t)
    for row in t.itertuples():
        assert 0 <= row.n_undefined <= row.n_simulations
        assert row.power == row.n_rejected / row.n_simulations
        low, high = wilson(row.n_rejected, row.n_simulations)
        assert row.power_low == pytest.approx(low, abs=1e-12)
        assert row.power_high == pytest.approx(high, abs=1e-12)
        assert 0.0 <= row.power_low <= row.power <= row.power_high <= 1.0
    reaching = t[t["power"] >= target]
    if len(reaching):  # the cheapest design reaching the target
        assert res.n_calls == reaching["n_calls"].min()
        chosen = t[(t["n_contexts"] == res.n_contexts)
                   & (t["n_repetitions"] == res.n_repetitions)]
        assert len(chosen) == 1 and chosen["n_calls"].iloc[0] == res.n_calls
        assert res.achieved_power == chosen["power"].iloc[0] >= target
    else:
        assert res.n_contexts == res.n_repetitions == res.n_calls == -1
        assert math.isnan(res.achieved_power)
