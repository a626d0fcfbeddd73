"""ci_test with continuous (float) evidence: it enters by its ranks, so its unit of
measurement changes nothing, and the permutation blocks match on every conditioning
value (``_kd_blocks``), not on the belief alone."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence
from coherence._decision._permutation import block_layout


def _leaky_with_age(seed: int = 0, n_ctx: int = 120, reps: int = 4) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    groups = np.repeat(np.arange(n_ctx), reps)
    age = np.repeat(rng.uniform(20, 80, n_ctx), reps)
    q = 1 / (1 + np.exp(-(rng.normal(0, 1, n_ctx) + (age[::reps] - 50) / 15)))
    y = np.repeat(rng.random(n_ctx) < q, reps).astype(int)
    p = np.round(np.clip(q[groups] + rng.normal(0, 0.1, len(groups)), 0, 1), 2)
    # the action reads the outcome a little (a leak) and the age
    u = 2 * (p - 0.5) + 0.6 * (y - 0.5) + (age - 50) / 20 + rng.logistic(0, 0.5, len(p))
    return pd.DataFrame({"context": groups, "belief": p, "action": (u > 0).astype(int),
                         "outcome": y, "age": age})


def _run(df: pd.DataFrame, column: str) -> coherence.CITestResult:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return coherence.ci_test(df, evidence=[column], group="context", n_resamples=99,
                                 ci_method=None, rng=3)


def test_the_unit_of_continuous_evidence_changes_nothing():
    # before: years against decades gave p 0.12 against 0.02 on a leaky agent
    df = _leaky_with_age()
    years = _run(df, "age")
    df["decades"] = df["age"] / 10
    df["log_age"] = np.log(df["age"])
    for column in ("decades", "log_age"):
        other = _run(df, column)
        assert other.statistic == years.statistic
        assert other.pvalue == years.pvalue
        np.testing.assert_array_equal(other.null_distribution, years.null_distribution)


def _check_blocks(cond: np.ndarray, sizes: np.ndarray, k_perm: int) -> None:
    start, units = block_layout(cond, sizes, k_perm)
    assert sorted(units.tolist()) == list(range(len(cond)))
    strata = {(int(s), float(c)) for s, c in zip(sizes, cond[:, 0], strict=True)}
    for j in range(len(start) - 1):
        block = units[start[j]:start[j + 1]]
        keys = {(int(sizes[u]), float(cond[u, 0])) for u in block}
        assert len(keys) == 1  # one size and stratum
        in_stratum = sum((int(s), float(c)) == next(iter(keys))
                         for s, c in zip(sizes, cond[:, 0], strict=True))
        if in_stratum >= k_perm:
            assert k_perm <= len(block) < 2 * k_perm
        else:
            assert len(block) == in_stratum
    assert len(strata) <= len(start) - 1


@settings(max_examples=60, deadline=None)
@given(n=st.integers(1, 60), k_perm=st.integers(1, 6), n_strata=st.integers(1, 3),
       seed=st.integers(0, 2**31 - 1))
def test_kd_blocks_partition_each_stratum_into_blocks_of_k_to_2k(n, k_perm, n_strata, seed):
    rng = np.random.default_rng(seed)
    cond = np.column_stack([rng.integers(0, n_strata, n), rng.random(n),
                            rng.integers(0, 4, n).astype(float)])
    sizes = rng.integers(1, 3, n).astype(np.int64)
    _check_blocks(cond, sizes, k_perm)


def test_kd_blocks_match_on_the_second_value_too():
    # continuous beliefs, evidence in two clusters: a sort on the belief puts units of
    # both clusters in a block; the blocks match on both values
    rng = np.random.default_rng(1)
    n = 400
    ev = rng.integers(0, 2, n) * 100.0 + rng.random(n)
    cond = np.column_stack([np.zeros(n), rng.random(n), ev])
    start, units = block_layout(cond, np.ones(n, np.int64), 3)
    n_blocks = len(start) - 1
    mixed = sum(np.ptp(ev[units[start[j]:start[j + 1]]]) > 50 for j in range(n_blocks))
    # a median split leaves a few blocks across the clusters' edge; a sort on the
    # belief alone would mix about three blocks in four
    assert mixed < 0.1 * n_blocks
    by_belief = np.argsort(cond[:, 1])
    sorted_mixed = sum(np.ptp(ev[by_belief[j:j + 3]]) > 50 for j in range(0, n - 2, 3))
    assert sorted_mixed > 0.5 * (n // 3)
    # the same blocks whatever the unit or an increasing transformation of a value
    scaled = cond.copy()
    scaled[:, 2] = np.log1p(ev) * 7
    np.testing.assert_array_equal(block_layout(scaled, np.ones(n, np.int64), 3)[1], units)


def test_constant_float_evidence_conditions_on_nothing():
    # before: a float column holding one value was continuous evidence, which turned on the
    # combined statistic and the median-split blocks: p 0.06 against 0.13 without it
    df = _leaky_with_age(seed=1, n_ctx=60)
    kwargs = {"group": "context", "n_resamples": 99, "rng": 3}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        alone = coherence.ci_test(df, **kwargs)
        with_age = coherence.ci_test(df, evidence=["age"], **kwargs)
        for evidence in (["flat"], ["flat", "age"]):
            base = with_age if "age" in evidence else alone
            res = coherence.ci_test(df.assign(flat=2.5), evidence=evidence, **kwargs)
            assert res.test_statistic == base.test_statistic
            assert res.statistic == base.statistic
            assert res.pvalue == base.pvalue
            assert tuple(res.confidence_interval) == tuple(base.confidence_interval)
            np.testing.assert_array_equal(res.null_distribution, base.null_distribution)
