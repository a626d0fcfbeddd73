"""Tests of prompt consistency (coherence._decision._consistency)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import coherence
from coherence import ConsistencyResult, prompt_consistency
from coherence._decision._consistency import permutation_pvalue

PROMPTS = ("standard", "mse", "absolute", "bayesian")


def _study(agent, n_contexts=60, rng=0) -> pd.DataFrame:
    return coherence.simulate(agent, n_contexts=n_contexts, prompts=PROMPTS, rng=rng).data


@pytest.fixture(scope="module")
def noisy_rational() -> pd.DataFrame:
    return _study(coherence.Agent.rational(report_noise=0.05, grid=0.01), rng=1)


@pytest.fixture(scope="module")
def sensitive() -> pd.DataFrame:
    return _study(coherence.Agent.prompt_sensitive(report_noise=0.05, grid=0.01), rng=2)


# --------------------------------------------------------------------------- validation
@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    ({"belief": None}, TypeError, "'belief' parameter of prompt_consistency must be a column"),
    ({"truth": 3}, TypeError, "'truth' parameter .* a column name \\(str\\) or None"),
    ({"prompt": "variant"}, ValueError, "column 'variant' \\(the 'prompt' column\\) not found"),
    ({"reference": "plain"}, ValueError, "'reference' parameter .* a prompt label present"),
    ({"n_resamples": 0}, ValueError, "'n_resamples' parameter"),
    ({"confidence_level": 0.0}, ValueError, "'confidence_level' parameter"),
    ({"rng": 1.5}, TypeError, "'rng' parameter of prompt_consistency"),
])
def test_validation_messages(noisy_rational, kwargs, exc, match):
    with pytest.raises(exc, match=match):
        prompt_consistency(noisy_rational, **kwargs)


def test_single_prompt_rejected(noisy_rational):
    data = noisy_rational[noisy_rational["prompt"] == "standard"]
    data = data.assign(prompt=data["prompt"].astype(str))
    with pytest.raises(ValueError, match="at least two prompt variants"):
        prompt_consistency(data)


def test_duplicate_repetition_named(noisy_rational):
    data = noisy_rational.copy()
    data.loc[1, "repetition"] = 0
    with pytest.raises(ValueError, match=r"Column 'repetition' .* identify each repetition "
                                         r"once .* 1 offending row \(first: row 1\)"):
        prompt_consistency(data)
    prompt_consistency(data, repetition=None, n_resamples=9, rng=0)  # check skipped


def test_truth_must_be_constant_within_context(noisy_rational):
    data = noisy_rational.copy()
    data.loc[3, "truth"] = 0.123
    with pytest.raises(ValueError, match=r"Column 'truth' .* constant within each 'context'"):
        prompt_consistency(data, truth="truth")


# --------------------------------------------------------------------------- figures by hand
def test_figures_match_pandas_computation(sensitive):
    res = prompt_consistency(sensitive, truth="truth", n_resamples=50, rng=0)
    assert isinstance(res, ConsistencyResult)
    df = sensitive.assign(prompt=sensitive["prompt"].astype(str))
    sd = df.groupby(["prompt", "context"])["belief"].std(ddof=1).groupby("prompt").mean()
    avg = df.groupby(["context", "prompt"])["belief"].mean().unstack()
    truth = df.groupby("context")["truth"].first()
    table = res.table.set_index("prompt")
    for prompt in PROMPTS:
        assert table.loc[prompt, "std"] == pytest.approx(sd[prompt])
        assert table.loc[prompt, "rmse_truth"] == pytest.approx(
            np.sqrt(((avg[prompt] - truth) ** 2).mean()))
        if prompt != "standard":
            assert table.loc[prompt, "rmse_reference"] == pytest.approx(
                np.sqrt(((avg[prompt] - avg["standard"]) ** 2).mean()))
            assert (table.loc[prompt, "rmse_reference_ci_low"]
                    <= table.loc[prompt, "rmse_reference"]
                    <= table.loc[prompt, "rmse_reference_ci_high"])
    assert np.isnan(table.loc["standard", "rmse_reference"])
    assert list(res.table["prompt"]) == list(PROMPTS)  # reference first
    assert len(res.table) == 4
    assert res.to_frame()["n_contexts"].iloc[0] == res.table["n_contexts"].max()


def test_without_truth_columns_are_nan(noisy_rational):
    res = prompt_consistency(noisy_rational, n_resamples=9, rng=0)
    assert res.table["rmse_truth"].isna().all()


def test_noiseless_consistent_agent_gives_zero_and_pvalue_one():
    data = _study(coherence.Agent.rational(), rng=3)
    res = prompt_consistency(data, n_resamples=19, rng=0)
    assert res.statistic == 0.0 and res.pvalue == 1.0
    assert (res.table["std"] == 0.0).all()


def test_permutation_pvalue_convention():
    gen = np.random.default_rng(0)
    groups = np.repeat(np.arange(30), 4)
    is_variant = np.tile([0, 0, 1, 1], 30)
    belief = 0.5 + 0.3 * is_variant  # a shift of 0.3 in every context
    rmse, p = permutation_pvalue(belief, groups, is_variant, 30, 99, gen)
    assert rmse == pytest.approx(0.3) and p == pytest.approx(0.01)


# --------------------------------------------------------------------------- the agents
def test_prompt_sensitive_detected(sensitive):
    res = prompt_consistency(sensitive, n_resamples=199, rng=0)
    table = res.table.set_index("prompt")
    assert res.pvalue < 0.05
    assert (table.loc[["mse", "absolute", "bayesian"], "pvalue"] <= 0.01).all()
    # the RMSE recovers the size of the shift (plus the noise of 5-draw averages)
    assert table.loc["absolute", "rmse_reference"] == pytest.approx(0.1, abs=0.02)


def test_consistent_noisy_agent_not_rejected(noisy_rational):
    res = prompt_consistency(noisy_rational, n_resamples=199, rng=0)
    assert res.pvalue > 0.05


@pytest.mark.slow
def test_size_on_noisy_rational_agent():
    """Within-context permutation is exact: per-variant rejection rate near 0.05."""
    agent = coherence.Agent.rational(report_noise=0.05, grid=0.01)
    rejections = 0
    reps = 100
    for r in range(reps):
        data = coherence.simulate(agent, n_contexts=40, prompts=("standard", "mse"),
                                  rng=900 + r).data
        rejections += prompt_consistency(data, n_resamples=99, rng=r).pvalue <= 0.05
    assert rejections <= 11  # Binomial(100, 0.05): P(X > 11) < 0.005


# --------------------------------------------------------------------------- properties
@settings(max_examples=10)
@given(st.integers(0, 2**32 - 1))
def test_row_order_invariance(seed):
    data = _study(coherence.Agent.prompt_sensitive(report_noise=0.05, grid=0.01),
                  n_contexts=20, rng=seed % 101)
    a = prompt_consistency(data, truth="truth", n_resamples=30, rng=0)
    shuffled = data.sample(frac=1.0, random_state=np.random.default_rng(seed))
    b = prompt_consistency(shuffled, truth="truth", n_resamples=30, rng=0)
    cols = ["std", "rmse_reference", "rmse_truth", "std_ci_low", "rmse_truth_ci_high"]
    pd.testing.assert_frame_equal(a.table[cols], b.table[cols], rtol=1e-9)


@given(st.permutations(["x", "y", "z"]))
def test_prompt_relabelling(names):
    data = _study(coherence.Agent.prompt_sensitive(report_noise=0.05, grid=0.01),
                  n_contexts=20, rng=4)
    mapping = dict(zip(["mse", "absolute", "bayesian"], names, strict=True))
    mapping["standard"] = "standard"
    relabelled = data.assign(prompt=data["prompt"].astype(str).map(mapping))
    a = prompt_consistency(data, n_resamples=30, rng=0).table.set_index("prompt")
    b = prompt_consistency(relabelled, n_resamples=30, rng=0).table.set_index("prompt")
    b = b.rename(index={v: k for k, v in mapping.items()})
    for col in ("std", "rmse_reference"):
        np.testing.assert_allclose(b.loc[a.index, col], a[col], rtol=1e-12)




def test_summary_lists_variants(sensitive):
    text = prompt_consistency(sensitive, n_resamples=19, rng=0).summary()
    assert text.startswith("prompt_consistency (")
    assert "headline      absolute" in text or "headline      bayesian" in text
    assert all(p in text for p in PROMPTS)
