"""Tests of the plug-in statistic of ``ci_test``'s p-value (``_citest_plugin``): the
statistic against loops and scipy's G test, the strata, the permuted copies, and the
statistic's power against the kNN estimate on the same studies."""

from __future__ import annotations

import itertools
import math
import warnings
from collections import Counter

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence
from coherence._decision._citest_plugin import plugin_null
from coherence._decision._citest_plugin import plugin_statistic
from coherence._decision._citest_plugin import strata_of_rows
from coherence._decision._citest_plugin import stratum_rows
from coherence._decision._permutation import block_layout
from coherence._decision._permutation import permutations_within
from coherence._decision._permutation import unit_keys
from coherence._decision._permutation import units_and_blocks
from coherence._decision._permutation import varied_units


def plugin_cmi(strata: np.ndarray, action: np.ndarray, outcome: np.ndarray) -> float:
    """The plug-in CMI of action and outcome given the stratum, in nats (the product's
    statistic on the data alone)."""
    return float(plugin_statistic(strata, action, outcome)(action, outcome)[0])


def _cmi_by_loops(strata: list[int], action: list[int], outcome: list[int]) -> float:
    """sum over (s, a, y) of p(s, a, y) log[p(s, a, y) p(s) / (p(s, a) p(s, y))]."""
    n = len(strata)
    say = Counter(zip(strata, action, outcome, strict=True))
    sa = Counter(zip(strata, action, strict=True))
    sy = Counter(zip(strata, outcome, strict=True))
    s_count = Counter(strata)
    total = 0.0
    for (s, a, y), c in say.items():
        total += c / n * math.log(c * s_count[s] / (sa[(s, a)] * sy[(s, y)]))
    return total


rows = st.lists(st.tuples(st.integers(0, 3), st.integers(0, 2), st.integers(0, 2)),
                min_size=1, max_size=60)


@given(rows)
@settings(max_examples=150, deadline=None)
def test_plugin_cmi_against_loops(data):
    s, a, y = (list(col) for col in zip(*data, strict=True))
    got = plugin_cmi(np.array(s), np.array(a), np.array(y))
    assert got == pytest.approx(_cmi_by_loops(s, a, y), abs=1e-12)
    assert got >= -1e-12


@given(rows)
@settings(max_examples=60, deadline=None)
def test_plugin_cmi_is_scipys_g_over_strata(data):
    from scipy.stats.contingency import chi2_contingency
    from scipy.stats.contingency import crosstab

    s, a, y = (np.array(col) for col in zip(*data, strict=True))
    g = 0.0
    for value in np.unique(s):
        table = crosstab(a[s == value], y[s == value]).count
        if min(table.shape) > 1:
            g += chi2_contingency(table, correction=False, lambda_="log-likelihood")[0]
    assert plugin_cmi(s, a, y) == pytest.approx(g / (2 * len(s)), abs=1e-10)


cond_rows = st.lists(st.tuples(st.integers(0, 2), st.integers(0, 12), st.integers(0, 9)),
                     min_size=1, max_size=80)


@given(cond_rows)
@settings(max_examples=150, deadline=None)
def test_strata_keep_ties_whole_and_hold_enough_rows(data):
    table = np.array(data, dtype=np.float64)
    cond, groups = table[:, :2], table[:, 2].astype(np.int64)
    strata = strata_of_rows(cond, groups)
    for (ev, value), members in pd.DataFrame(cond).groupby([0, 1]).groups.items():
        assert len(set(strata[members])) == 1, (ev, value)  # a tie is never split
    for code in np.unique(strata):
        members = cond[strata == code]
        assert len(set(members[:, 0])) == 1  # one discrete stratum
        in_stratum = cond[:, 0] == members[0, 0]
        least = stratum_rows(int(in_stratum.sum()), len(np.unique(groups[in_stratum])))
        if len(members) < least:  # only a whole discrete stratum may hold fewer rows
            assert len(members) == int(in_stratum.sum())
    # strata are runs of values: no two strata of one discrete stratum interleave
    for ev in np.unique(cond[:, 0]):
        sel = cond[:, 0] == ev
        order = np.argsort(cond[sel, 1], kind="stable")
        codes = strata[sel][order]
        assert len(set(codes)) == np.sum(np.diff(codes) != 0) + 1


def test_stratum_rows_is_about_two_root_c_contexts():
    assert stratum_rows(1000, 200) == round(2 * 5 * math.sqrt(200))
    assert stratum_rows(1000, 1000) == round(2 * math.sqrt(1000))
    assert stratum_rows(1, 1) == 2 and stratum_rows(0, 0) == 1
    assert stratum_rows(1000, 200, 1) == stratum_rows(1000, 200)


@given(st.integers(1, 5000), st.integers(1, 2000), st.integers(1, 4))
def test_stratum_rows_spans_two_over_root_c_of_each_value(n_rows, n_contexts, d):
    # a stratum spans 2 / sqrt(C) of each value's ranks: (2 / sqrt(C))^d of the
    # contexts, at least 2 of them (for two values: 4 contexts, whatever C)
    per = n_rows / n_contexts
    contexts = max(2.0, n_contexts * (2.0 / math.sqrt(n_contexts)) ** d)
    assert stratum_rows(n_rows, n_contexts, d) == max(1, round(per * contexts))
    if d == 2 and n_contexts >= 2:
        assert stratum_rows(n_rows, n_contexts, 2) == max(1, round(4 * per))


def test_strata_of_two_values_hold_enough_rows_close_in_both():
    # continuous evidence: strata are median-split cells of (belief, evidence), each
    # with at least the rows of 4 contexts, and narrower in each value than the whole
    gen = np.random.default_rng(3)
    groups = np.repeat(np.arange(200), 5)
    cond = np.column_stack([np.zeros(1000), gen.random(1000), 1e3 * gen.normal(size=1000)])
    strata = strata_of_rows(cond, groups)
    sizes = np.bincount(strata)
    assert sizes.min() >= stratum_rows(1000, 200, 2) == 20 and sizes.max() < 40
    for code in np.unique(strata):
        part = cond[strata == code]
        assert np.ptp(part[:, 1]) < 0.6 * np.ptp(cond[:, 1]) or (
            np.ptp(part[:, 2]) < 0.6 * np.ptp(cond[:, 2]))


def _study(seed: int, n_ctx: int = 30, varying: bool = False) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    reps = rng.integers(1, 4, n_ctx)
    groups = np.repeat(np.arange(n_ctx), reps)
    n = len(groups)
    belief = np.round(rng.uniform(size=n_ctx), 1)[groups]
    action = rng.integers(0, 3, n)
    outcome = (rng.integers(0, 2, n) if varying else rng.integers(0, 2, n_ctx)[groups])
    cond = np.column_stack([np.zeros(n), belief])
    return groups, cond, action, outcome


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_outcome_null_is_the_statistic_on_outcomes_permuted_in_blocks(seed):
    groups, cond, action, outcome = _study(seed)
    n_ctx = int(groups.max()) + 1
    y_unit = np.zeros(n_ctx, dtype=np.int64)
    y_unit[groups] = outcome
    unit_cond = cond[np.unique(groups, return_index=True)[1]]
    start, units = block_layout(unit_cond, np.ones(n_ctx, np.int64), 3)
    strata = strata_of_rows(cond, groups)
    null = plugin_null(strata, action, outcome,
                       ("outcomes", (y_unit, groups, start, units)), 25,
                       np.random.default_rng(seed))
    block = np.empty(n_ctx, np.int64)
    block[units] = np.repeat(np.arange(len(start) - 1), np.diff(start))
    perms = np.vstack(list(permutations_within(block, np.random.default_rng(seed), 25)))
    for b, perm in enumerate(perms):
        assert np.all(block[perm] == block)  # a unit moves only within its block
        expected = plugin_cmi(strata, action, y_unit[perm][groups])
        assert null[b] == pytest.approx(expected, abs=1e-12)


@pytest.mark.parametrize("use_contexts", [True, False])
def test_action_null_is_the_statistic_on_actions_moved_between_units(use_contexts):
    groups, cond, action, outcome = _study(5, n_ctx=40, varying=True)
    blocks = units_and_blocks(cond, groups, use_contexts, 3)
    unit_start, unit_rows, start, units = blocks
    strata = strata_of_rows(cond, groups)
    null = plugin_null(strata, action, outcome, ("actions", blocks), 20,
                       np.random.default_rng(9))
    n_units = len(unit_start) - 1
    block = np.empty(n_units, np.int64)
    block[units] = np.repeat(np.arange(len(start) - 1), np.diff(start))
    perms = np.vstack(list(permutations_within(block, np.random.default_rng(9), 20)))
    for b, perm in enumerate(perms):
        moved = action.copy()
        for u in range(n_units):  # unit u takes the actions of unit perm[u], row by row
            mine = unit_rows[unit_start[u]:unit_start[u + 1]]
            theirs = unit_rows[unit_start[perm[u]]:unit_start[perm[u] + 1]]
            moved[mine] = action[theirs]
        assert null[b] == pytest.approx(plugin_cmi(strata, moved, outcome), abs=1e-12)


def test_memory_bound_batches_give_the_same_null():
    groups, cond, action, outcome = _study(3)
    n_ctx = int(groups.max()) + 1
    y_unit = np.zeros(n_ctx, dtype=np.int64)
    y_unit[groups] = outcome
    start, units = block_layout(cond[np.unique(groups, return_index=True)[1]],
                                np.ones(n_ctx, np.int64), 3)
    strata = strata_of_rows(cond, groups)
    moves = ("outcomes", (y_unit, groups, start, units))
    whole = plugin_null(strata, action, outcome, moves, 30, np.random.default_rng(1))
    import coherence._decision._citest_plugin as module

    saved = module._CELLS
    try:
        module._CELLS = 7  # one permutation a batch
        small = plugin_null(strata, action, outcome, moves, 30, np.random.default_rng(1))
    finally:
        module._CELLS = saved
    np.testing.assert_array_equal(whole, small)


# --------------------------------------------------------------------------- in ci_test
def test_ci_test_records_the_test_statistic():
    data = coherence.simulate("rational", n_contexts=100, rng=2).data
    res = coherence.ci_test(data, n_resamples=49, rng=0, ci_method=None)
    assert res.test_statistic == "plugin" and res.n_strata >= 2
    assert res.null_distribution.shape == (49,)
    assert res.pvalue == (1 + np.sum(res.null_distribution >= res.test_statistic_value
                                     - 1e-9)) / 50
    assert res.settings()["test_statistic"] == "plugin"
    knn = coherence.ci_test(data, n_resamples=49, rng=0, ci_method=None, test_statistic="knn")
    assert knn.test_statistic == "knn" and knn.n_strata == 0
    assert knn.test_statistic_value == knn.statistic == res.statistic
    # continuous evidence: the plug-in statistic's strata are cells of both values, each
    # the rows of at least 4 contexts (auto takes the regression-adjusted statistic)
    data = data.assign(x=np.random.default_rng(0).normal(size=len(data)))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        plugin = coherence.ci_test(data, evidence=["x"], n_resamples=19, rng=0,
                                   ci_method=None, test_statistic="plugin")
    assert plugin.test_statistic == "plugin"
    n_ctx = data["context"].nunique()
    assert n_ctx // 8 <= plugin.n_strata <= n_ctx // 4


def _hits(studies: list[pd.DataFrame], **options: object) -> dict[str, int]:
    """Studies rejected at 0.05 by each test statistic, 99 permutations (study i: rng i)."""
    hits = {"plugin": 0, "knn": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for s, data in enumerate(studies):
            for name in hits:
                res = coherence.ci_test(data, n_resamples=99, rng=s, ci_method=None,
                                        test_statistic=name, **options)
                hits[name] += res.pvalue <= 0.05
    return hits


def test_plugin_beats_the_knn_with_continuous_evidence():
    # beliefs that miss a continuous evidence column, a leak of 0.75 at 200 x 5
    # (validation_ci.md: the kNN statistic 0.585, the plug-in one 0.940)
    from benchmarks.validate_citest_continuous import POWER
    from benchmarks.validate_citest_continuous import generate

    design = POWER["leak 0.75, continuous beliefs that miss the evidence"]
    hits = _hits([generate(design, 80_000 + s) for s in range(10)], evidence=["evidence"])
    assert hits["plugin"] >= 8 and hits["plugin"] > hits["knn"], hits


def test_plugin_p_value_beats_the_knn_on_the_same_studies():
    # continuous beliefs at the paper's size, a leak of CMI 0.024 (validation_ci.md:
    # power 0.77 for the kNN statistic; the plug-in statistic about 1.0)
    from benchmarks.citest_designs import Design
    from benchmarks.citest_designs import generate
    from benchmarks.citest_designs import leak_for

    base = Design(grid=None)
    design = base.with_(leak=leak_for(base, 0.024))
    hits = _hits([generate(design, 70_000 + s) for s in range(10)])
    assert hits["plugin"] >= 9
    assert hits["plugin"] >= hits["knn"]


def test_calibration_leaves_the_permutation_design_on_the_stated_belief():
    # the in-sample calibration draws nothing: the same permutations, strata and p-value
    data = coherence.simulate("rational", n_contexts=100, rng=4).data
    plain = coherence.ci_test(data, n_resamples=49, rng=0, ci_method=None)
    calibrated = coherence.ci_test(data, n_resamples=49, rng=0, ci_method=None,
                                   calibrate="in-sample")
    assert calibrated.calibrate == "in-sample" and calibrated.test_statistic == "plugin"
    np.testing.assert_array_equal(calibrated.null_distribution, plain.null_distribution)
    assert calibrated.pvalue == plain.pvalue and calibrated.n_strata == plain.n_strata
    assert calibrated.statistic != plain.statistic  # the estimate is given the calibration


def test_calibrated_test_holds_its_size_on_coherent_agents():
    # strata or blocks on the calibrated belief rejected 0.11-0.18 of these (100 studies
    # each, cross-fitted calibration); on the stated belief 0.01-0.02.
    # P(Binomial(40, 0.05) >= 7) = 0.005
    agents = [coherence.Agent.rational(), coherence.Agent.rational(report_noise=0.05)]
    for agent in agents:
        hits = 0
        for s in range(40):
            data = coherence.simulate(agent, n_contexts=200, rng=3000 + s).data
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                res = coherence.ci_test(data, calibrate=True, n_resamples=99, rng=s,
                                        ci_method=None)
            hits += res.pvalue <= 0.05
        assert hits <= 6, (agent, hits)


@given(st.lists(st.tuples(st.integers(0, 1), st.integers(0, 15)), min_size=1, max_size=60),
       st.integers(1, 4))
@settings(max_examples=150, deadline=None)
def test_kept_ties_are_exact_blocks_and_lone_units_merge_only_with_lone_units(data, k_perm):
    cond = np.array(data, dtype=np.float64)
    start, order = block_layout(cond, np.ones(len(cond), np.int64), k_perm, keep_ties=True)
    assert sorted(order.tolist()) == list(range(len(cond)))
    counts = Counter(map(tuple, cond.tolist()))
    for j in range(len(start) - 1):
        members = [tuple(cond[u]) for u in order[start[j]:start[j + 1]]]
        assert len({m[0] for m in members}) == 1  # one discrete stratum
        if any(counts[m] >= 2 for m in members):  # a tie run: exactly its own units
            assert len(set(members)) == 1 and len(members) == counts[members[0]]
        # otherwise lone units only, each alone in its values
        assert all(counts[m] == len(members) for m in members) or len(set(members)) == len(
            members)


def test_kept_ties_on_a_worked_example():
    values = [1, 2, 2, 3, 4, 5, 6, 7, 7, 7, 8]
    cond = np.column_stack([np.zeros(len(values)), values]).astype(np.float64)
    start, order = block_layout(cond, np.ones(len(values), np.int64), 3, keep_ties=True)
    blocks = [sorted(np.array(values)[order[start[j]:start[j + 1]]].tolist())
              for j in range(len(start) - 1)]
    # the lone 6 joins the lone run 3-5; 1 and 8, alone between tie runs, do not move
    assert blocks == [[1], [2, 2], [3, 4, 5, 6], [7, 7, 7], [8]]
    merged = block_layout(cond, np.ones(len(values), np.int64), 3)[0]
    assert len(merged) - 1 == 3  # the default merges ties into blocks of 3 or more


@given(st.integers(0, 2 ** 31), st.integers(1, 30), st.integers(1, 4), st.integers(1, 3),
       st.booleans())
@settings(max_examples=120, deadline=None)
def test_varied_units_is_a_loop_over_the_blocks(seed, n_units, levels, n_actions, contexts):
    """Brute force: the units of the blocks in which some permutation changes the data
    (two units with different action sequences, rows paired in order)."""
    gen = np.random.default_rng(seed)
    reps = gen.integers(1, 3, n_units) if contexts else np.ones(n_units, np.int64)
    groups = np.repeat(np.arange(n_units), reps)
    cond = np.column_stack([np.zeros(len(groups)),
                            np.repeat(gen.integers(0, levels, n_units), reps).astype(float)])
    action = gen.integers(0, n_actions, len(groups))
    unit_start, unit_rows, block_start, block_units = units_and_blocks(
        cond, groups, contexts, 2, keep_ties=True)
    keys = unit_keys(action, unit_start, unit_rows)
    expected = 0
    for a, b in itertools.pairwise(block_start):
        seqs = {tuple(action[unit_rows[unit_start[u]:unit_start[u + 1]]])
                for u in block_units[a:b]}
        expected += (b - a) * (len(seqs) > 1)
    assert varied_units(block_start, block_units, keys) == expected
