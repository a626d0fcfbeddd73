"""Tests of the monotone pairwise-choice test (coherence._decision._monotone)."""

from __future__ import annotations

import math
import warnings

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from scipy import stats

import coherence
from benchmarks.monotone_designs import Design
from benchmarks.monotone_designs import generate
from coherence import DegenerateDataWarning
from coherence import NotCalibratedWarning
from coherence import SmallSampleWarning
from coherence import TiesWarning
from coherence import monotonicity_test
from coherence import plot_choice_shares
from coherence._decision._monotone_isotonic import context_strata
from coherence._decision._monotone_isotonic import isotonic_lr
from coherence._decision._monotone_isotonic import isotonic_lr_test
from coherence._decision._monotone_isotonic import permutation_null
from coherence._decision._monotone_isotonic import quantile_bins


def _table(shares_by_belief: dict[float, tuple[int, int]]) -> pd.DataFrame:
    """Rows with belief b: n1 'yes' and n2 'no'."""
    rows = []
    for b, (n1, n2) in shares_by_belief.items():
        rows += [(b, "yes")] * n1 + [(b, "no")] * n2
    return pd.DataFrame(rows, columns=["belief", "action"])


@pytest.fixture(scope="module")
def nonmonotone_study() -> pd.DataFrame:
    return coherence.simulate("nonmonotone", n_contexts=300, rng=3).data


# --------------------------------------------------------------------------- validation
@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    ({"belief": 3}, TypeError, "'belief' parameter of monotonicity_test must be a column"),
    ({"belief": "nope"}, ValueError, "column 'nope' \\(the 'belief' column\\) not found"),
    ({"n_bins": 1}, ValueError, "'n_bins' parameter of monotonicity_test must be an int >= 2"),
    ({"n_bins": 2.5}, TypeError, "'n_bins' parameter"),
    ({"direction": "up"}, ValueError, "'direction' parameter .* one of 'increasing'"),
    ({"p_adjust": "bonferroni"}, ValueError, "'p_adjust' parameter .* one of 'none', 'holm'"),
    ({"n_resamples": 0}, ValueError, "'n_resamples' parameter"),
    ({"pairs": "yes"}, TypeError, "'pairs' parameter .* non-empty sequence"),
    ({"pairs": []}, TypeError, "'pairs' parameter .* non-empty sequence"),
    ({"pairs": [("yes", "yes")]}, ValueError, "pairs of two different action labels"),
    ({"pairs": [("yes", "no"), ("yes", "no")]}, ValueError, "free of duplicate pairs"),
    ({"method": "exact"}, ValueError, "'method' parameter .* one of 'local', 'permutation'"),
    ({"n_windows": 0}, ValueError, "'n_windows' parameter of monotonicity_test must be an int"),
    ({"group": 3}, TypeError, "'group' parameter of monotonicity_test must be a column"),
    ({"group": "ctx"}, ValueError, "column 'ctx' \\(the 'group' column\\) not found"),
    ({"rng": -1}, ValueError, "non-negative int seed"),
])
def test_validation_messages(kwargs, exc, match):
    data = _table({0.2: (1, 5), 0.8: (5, 1)})
    data["action"] = data["action"].astype(object)
    data.loc[len(data)] = (0.5, "defer")
    with pytest.raises(exc, match=match):
        monotonicity_test(data, **{"group": None, **kwargs})


@pytest.mark.parametrize(("kwargs", "match"), [
    ({"n_windows": 3}, r"'n_windows' .*default 5 with method='local'.*only "
                       r"method='permutation'"),
    ({"lr_on": "bins"}, r"'lr_on' .*with method='local'"),
    ({"lr_bins": 20}, r"'lr_bins' .*with method='local'"),
    ({"method": "permutation", "min_contexts": 8}, r"'min_contexts' .*method='permutation'"),
    ({"method": "bootstrap", "n_windows": 2}, r"'n_windows' .*method='bootstrap'"),
    ({"method": "bootstrap", "lr_bins": 4}, r"'lr_bins' .*lr_on='values'.*pass lr_on='bins' "
                                            r"to use it"),
    ({"method": "permutation", "lr_on": "values", "lr_bins": 4}, r"'lr_bins' .*lr_on='values'"),
])
def test_an_option_the_method_does_not_use_raises(kwargs, match):
    # these options used to be recorded in the result and change nothing: n_windows=3 with
    # the default method gave the very p-value of n_windows=5
    data = _table({0.2: (1, 5), 0.8: (5, 1)})
    with pytest.raises(ValueError, match=match):
        monotonicity_test(data, group=None, pairs=[("yes", "no")], n_resamples=19, **kwargs)


def test_the_options_a_method_uses_are_taken():
    data = _table({0.2: (3, 5), 0.5: (4, 4), 0.8: (5, 3)})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = monotonicity_test(data, group=None, pairs=[("yes", "no")], n_resamples=19,
                                method="permutation", n_windows=2, lr_bins=3, rng=0)
        assert (res.n_windows, res.lr_bins) == (2, 3)
        res = monotonicity_test(data, group=None, pairs=[("yes", "no")], n_resamples=19,
                                method="bootstrap", lr_on="bins", lr_bins=3, rng=0)
        assert (res.lr_on, res.lr_bins) == ("bins", 3)


def test_belief_out_of_range_names_rows():
    data = _table({0.2: (1, 5), 0.8: (5, 1)})
    data.loc[3, "belief"] = 1.5
    with pytest.raises(ValueError, match=r"Column 'belief' .* probabilities in \[0, 1\]; "
                                         r"1 offending row \(first: row 3 = 1.5\)"):
        monotonicity_test(data, pairs=[("yes", "no")], group=None)


# --------------------------------------------------------------------------- array layer
def test_quantile_bins_merge_ties_and_are_nonempty():
    belief = np.array([0.1] * 50 + [0.5] * 3 + [0.9] * 47)
    codes, cuts = quantile_bins(belief, 10)
    assert np.array_equal(cuts, [0.1, 0.9])
    # (-inf, 0.1] and (0.1, 0.9]: 0.5 joins 0.9
    assert np.array_equal(np.bincount(codes), [50, 50])
    codes, _ = quantile_bins(np.repeat([0.1, 0.3, 0.5], 20), 3)
    assert np.array_equal(np.bincount(codes), [20, 20, 20])


@given(st.lists(st.floats(0, 1, allow_nan=False), min_size=2, max_size=200),
       st.integers(2, 12))
def test_quantile_bins_properties(values, n_bins):
    belief = np.array(values)
    codes, _ = quantile_bins(belief, n_bins)
    k = codes.max() + 1
    assert k <= n_bins
    assert np.all(np.bincount(codes) > 0)  # no empty bin
    centres = np.bincount(codes, weights=belief) / np.bincount(codes)
    assert np.all(np.diff(centres) >= 0)  # bins are ordered in the belief
    for j in range(k - 1):  # and do not overlap
        assert belief[codes == j].max() < belief[codes == j + 1].min()


def test_isotonic_lr_zero_when_monotone_and_matches_hand_value():
    m = np.array([10, 10, 10])
    assert isotonic_lr(np.array([1, 5, 9]), m) == 0.0
    # two bins with shares 0.8 then 0.2: the isotonic fit pools them at 0.5
    x, m = np.array([8, 2]), np.array([10, 10])
    ll_free = 2 * (8 * np.log(0.8) + 2 * np.log(0.2))
    ll_pool = 20 * np.log(0.5)
    assert isotonic_lr(x, m) == pytest.approx(2 * (ll_free - ll_pool))


def test_isotonic_lr_test_pvalue_convention():
    gen = np.random.default_rng(0)
    stat, p = isotonic_lr_test(np.array([0, 10]), np.array([10, 10]), 99, gen)
    assert stat == 0.0 and p == 1.0
    stat, p = isotonic_lr_test(np.array([40, 0]), np.array([40, 40]), 99, gen)
    assert stat > 50 and p == pytest.approx(0.01)


# --------------------------------------------------------------------------- the paper's figure
def test_violation_fraction_and_fisher_pvalue_by_hand():
    data = _table({0.1: (2, 18), 0.3: (18, 2), 0.5: (10, 10)})
    res = monotonicity_test(data, pairs=[("yes", "no")], group=None, n_bins=3, n_resamples=99,
                            rng=0)
    comps = res.comparison_table
    assert list(comps["flagged"]) == [False, False, True]  # (0,1), (0,2), (1,2)
    expected = stats.fisher_exact([[18, 2], [10, 10]], alternative="greater").pvalue
    assert comps["pvalue"].iloc[2] == pytest.approx(expected)
    assert res.statistic == pytest.approx(100 / 3)
    frame = res.table
    assert frame["n_flagged"].iloc[0] == 1 and frame["n_significant"].iloc[0] == 1
    bins = res.bin_table
    assert list(bins["n_action_1"]) == [2, 18, 10] and list(bins["share"]) == [0.1, 0.9, 0.5]


def test_holm_and_bh_adjustments_are_no_smaller():
    data = coherence.simulate("nonmonotone", n_contexts=150, rng=1).data
    raw = monotonicity_test(data, n_resamples=19, rng=0).comparison_table
    for how in ("holm", "bh"):
        adj = monotonicity_test(data, p_adjust=how, n_resamples=19, rng=0).comparison_table
        flagged = raw["flagged"].to_numpy()
        assert np.all(adj["pvalue_adjusted"].to_numpy()[flagged]
                      >= raw["pvalue"].to_numpy()[flagged] - 1e-12)
        assert adj["significant"].sum() <= raw["significant"].sum()


def test_decreasing_direction_mirrors_increasing():
    data = coherence.simulate("nonmonotone", n_contexts=100, rng=2).data
    up = monotonicity_test(data, n_resamples=49, rng=0)
    mirrored = data.assign(belief=1.0 - data["belief"])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", TiesWarning)
        down = monotonicity_test(mirrored, direction="decreasing", n_resamples=49, rng=0)
    assert down.table["global_statistic"].to_numpy() == pytest.approx(
        up.table["global_statistic"].to_numpy())
    assert np.all(np.diff(down.bin_table.query("pair == 'yes/no'")["centre"]) > 0)


def test_tied_beliefs_warn_with_bins_left():
    data = _table({0.2: (3, 30), 0.8: (30, 3)})
    with pytest.warns(TiesWarning, match="tied beliefs leave 2 of 5 quantile bins"):
        res = monotonicity_test(data, pairs=[("yes", "no")], group=None, n_resamples=99, rng=0)
    assert res.table["n_bins"].iloc[0] == 2


def test_fewer_rows_than_bins_are_not_called_ties():
    # three distinct beliefs cannot fill five bins: the warning blamed tied beliefs
    data = _table({0.2: (1, 0), 0.5: (0, 1), 0.8: (1, 0)})
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = monotonicity_test(data, pairs=[("yes", "no")], group=None, n_resamples=99, rng=0)
    ties = [str(w.message) for w in caught if issubclass(w.category, TiesWarning)]
    assert len(ties) == 1 and "3 rows (< n_bins) leave 3 of 5 quantile bins" in ties[0]
    assert "tied" not in ties[0] and res.table["n_bins"].iloc[0] == 3


# --------------------------------------------------------------------------- the simulated agents
def test_nonmonotone_agent_detected():
    # 1000 contexts (was 300 before issue 14): the valid context permutation pays for its
    # size with power against a local fall in a steep share
    study = coherence.simulate("nonmonotone", n_contexts=1000, rng=3).data
    res = monotonicity_test(study, n_resamples=199, rng=0)
    table = res.table.set_index("pair")
    assert res.pvalue < 0.05
    assert table.loc["yes/defer", "pvalue"] < 0.05
    assert table.loc["yes/no", "pvalue"] > 0.05  # this pair stays monotone


def test_rational_agent_has_no_violations():
    data = coherence.simulate("rational", n_contexts=200, rng=4).data
    res = monotonicity_test(data, n_resamples=199, rng=0)
    assert res.statistic == 0.0
    assert res.pvalue > 0.05


@pytest.mark.slow
def test_size_at_flat_shares():
    """Least favourable null (nearly flat shares): rejection rate near 0.05."""
    agent = coherence.Agent.rational(temperature=5.0)
    rejections = []
    for r in range(100):
        data = coherence.simulate(agent, n_contexts=100, rng=500 + r).data
        res = monotonicity_test(data, pairs=[("yes", "no")], n_resamples=99, rng=r,
                                method="permutation")
        rejections.append(res.pvalue <= 0.05)
    assert 0 <= np.sum(rejections) <= 11  # Binomial(100, 0.05): P(X > 11) < 0.005


# --------------------------------------------------------------------------- properties
@pytest.mark.filterwarnings("ignore:monotonicity_test:coherence.SmallSampleWarning")
@given(st.integers(0, 2**32 - 1))
@settings(max_examples=10)  # each example is two full tests (the conformance suite has more)
def test_row_order_invariance(seed):
    data = coherence.simulate("nonmonotone", n_contexts=40, rng=seed % 1000).data
    a = monotonicity_test(data, n_resamples=19, rng=0)
    shuffled = data.sample(frac=1.0, random_state=np.random.default_rng(seed))
    b = monotonicity_test(shuffled, n_resamples=19, rng=0)
    pd.testing.assert_frame_equal(a.table, b.table)
    pd.testing.assert_frame_equal(a.comparison_table, b.comparison_table)


@pytest.mark.filterwarnings("ignore:monotonicity_test:coherence.SmallSampleWarning")
@given(st.permutations(["A", "B", "C"]))
def test_label_relabelling(names):
    data = coherence.simulate("nonmonotone", n_contexts=40, rng=5).data
    mapping = dict(zip(["yes", "no", "defer"], names, strict=True))
    relabelled = data.assign(action=data["action"].astype(str).map(mapping))
    pairs = [("yes", "no"), ("yes", "defer"), ("defer", "no")]
    a = monotonicity_test(data, pairs=pairs, n_resamples=19, rng=0)
    b = monotonicity_test(relabelled, pairs=[(mapping[x], mapping[y]) for x, y in pairs],
                          n_resamples=19, rng=0)
    cols = ["n_bins", "n_flagged", "n_significant", "statistic", "global_statistic", "pvalue"]
    pd.testing.assert_frame_equal(a.table[cols], b.table[cols])




def test_plot_marks_violations(nonmonotone_study):
    res = monotonicity_test(nonmonotone_study, n_resamples=19, rng=0)
    ax = plot_choice_shares(res)
    texts = [t.get_text() for t in ax.get_legend().get_texts()]
    assert len(texts) == 3 + 2  # the three pairs, then the two marks explained
    assert texts[3:] == ["lower bin of a significant violation",
                         "bins of a significant violation"]
    assert len(ax.collections) >= 1  # circled bins at significant violations
    assert (ax.get_xlabel(), ax.get_ylim()) == ("belief (bin centre)", (-0.02, 1.02))
    assert ax.get_title().startswith("Pairwise choice shares (")
    plt.close(ax.figure)
    with pytest.raises(TypeError, match="'result' parameter of plot_choice_shares"):
        plot_choice_shares("nope")  # type: ignore[arg-type]


def test_summary_lists_pairs(nonmonotone_study):
    text = monotonicity_test(nonmonotone_study, n_resamples=99, rng=0).summary()
    assert text.startswith("monotonicity_test (local)")
    assert "yes/defer" in text and "n_significant" in text


# --------------------------------------------------------------------------- issue 14: the null
def test_context_strata_group_contexts_by_rows_and_window():
    groups = np.array([0, 0, 1, 1, 2, 3, 3, 3, 4, 5])
    blocks = context_strata(groups)
    # contexts 0 and 1 (two rows each), contexts 2, 4, 5 (one row each); context 3 is alone
    assert sorted(b.shape for b in blocks) == [(2, 2), (3, 1)]
    two = next(b for b in blocks if b.shape == (2, 2))
    assert two.tolist() == [[0, 1], [2, 3]]
    window = np.array([0, 0, 0, 0, 0, 1, 1, 1, 1, 1])  # context 4 and 5 in window 1
    blocks = context_strata(groups, window)
    assert sorted(b.shape for b in blocks) == [(2, 1), (2, 2)]


def _reference_null(values, first, groups, n_resamples, rng):
    """Slow version: move each context's belief codes to another context of its size."""
    m = np.bincount(values)
    sizes = {g: np.flatnonzero(groups == g) for g in np.unique(groups)}
    out = []
    for _ in range(n_resamples):
        codes = values.copy()
        for s in {len(r) for r in sizes.values()}:
            ctx = [g for g, r in sizes.items() if len(r) == s]
            perm = rng.permutation(len(ctx))
            for dst, src in zip(ctx, np.asarray(ctx)[perm], strict=True):
                codes[sizes[dst]] = rng.permutation(values[sizes[src]])
        out.append(isotonic_lr(np.bincount(codes, weights=first, minlength=len(m)), m))
    return np.array(out)


def test_permutation_null_matches_reference_in_distribution():
    data = generate(Design(n_contexts=40, repetitions=(1, 4), grid=0.1, shock_sd=1.0), 7)
    data = data[data["action"].isin(["yes", "no"])].sort_values(["context", "belief"])
    _, values = np.unique(data["belief"].to_numpy(), return_inverse=True)
    first = (data["action"] == "yes").to_numpy(dtype=float)
    groups = np.unique(data["context"].to_numpy(), return_inverse=True)[1]
    observed, null = permutation_null(values.astype(np.int64), first, groups, 2000,
                                      np.random.default_rng(0))
    m = np.bincount(values)
    assert observed == pytest.approx(isotonic_lr(np.bincount(values, weights=first), m))
    ref = _reference_null(values, first, groups, 400, np.random.default_rng(1))
    assert stats.ks_2samp(null, ref).pvalue > 0.01
    assert np.all(null >= 0)


@given(st.lists(st.tuples(st.sampled_from([0.1, 0.3, 0.5, 0.7, 0.9]), st.booleans()),
                min_size=4, max_size=60))
def test_pvalue_is_a_monte_carlo_pvalue(rows):
    data = pd.DataFrame({"belief": [b for b, _ in rows],
                         "action": ["yes" if y else "no" for _, y in rows]})
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = monotonicity_test(data, pairs=[("yes", "no")], group=None, n_resamples=19,
                                rng=0, method="permutation")
    row = res.table.iloc[0]
    if not row["testable"]:
        assert np.isnan(row["pvalue"]) and row["reason"]
        return
    assert row["pvalue"] * 20 == pytest.approx(round(row["pvalue"] * 20))
    assert 1 / 20 <= row["pvalue"] <= 1.0
    # shares monotone over the distinct beliefs (so over the bins too): nothing is more
    # extreme. The bins' statistic (``global_statistic``) can be 0 while the values' is
    # not (0/6, 1/1, 0/5 at 0.1, 0.3, 0.5 in two bins), and lr_on='both' takes the min-p.
    shares = data.groupby("belief")["action"].apply(lambda a: float(np.mean(a == "yes")))
    if np.all(np.diff(shares.to_numpy()) >= 0):
        assert row["global_statistic"] == 0.0
        assert row["pvalue"] == 1.0


@pytest.mark.filterwarnings("ignore::coherence.TiesWarning")
def test_strongly_falling_share_gets_the_smallest_pvalue():
    data = _table({0.1: (18, 2), 0.3: (15, 5), 0.5: (10, 10), 0.7: (5, 15), 0.9: (2, 18)})
    res = monotonicity_test(data, pairs=[("yes", "no")], group=None, n_windows=1,
                            method="permutation", n_resamples=99, rng=0)
    assert res.pvalue == pytest.approx(0.01)
    # five windows on five belief values: every window holds one value, nothing to permute
    with pytest.warns(SmallSampleWarning, match="overall p-value is NaN"):
        windowed = monotonicity_test(data, pairs=[("yes", "no")], group=None,
                                     n_resamples=99, method="permutation", rng=0)
    assert math.isnan(windowed.pvalue)
    assert not windowed.table["testable"].iloc[0]
    assert windowed.table["reason"].iloc[0].startswith("no two contexts in a belief window")
    assert res.method == "permutation" and res.group is None


@pytest.mark.filterwarnings("ignore::coherence.TiesWarning")
def test_pair_with_an_action_never_chosen_is_not_testable():
    data = generate(Design(defer_logit=float("-inf"), n_contexts=60), 1)
    with pytest.warns(DegenerateDataWarning, match="action 'defer' never occurs"):
        res = monotonicity_test(data, n_resamples=19, rng=0)
    table = res.table.set_index("pair")
    assert table["testable"].tolist() == [True, False, False]
    assert table.loc["yes/defer", "reason"] == "action 'defer' never chosen"
    assert np.isnan(table.loc["defer/no", "pvalue"])
    assert res.pvalue == table.loc["yes/no", "pvalue"]  # Bonferroni over the one testable pair


@pytest.mark.filterwarnings("ignore::coherence.DegenerateDataWarning")
def test_a_pair_with_an_action_never_chosen_does_not_dilute_the_headline():
    # a yes/no table under the default pairs: yes/defer and defer/no held 10 comparisons
    # each, of shares 1 (or 0) in every bin, never flagged; the headline pooled them,
    # 30% for a study whose one real pair violates in 90% of its comparisons
    rng = np.random.default_rng(1)
    b = np.round(rng.random(400), 2)
    data = pd.DataFrame({"context": np.arange(400), "belief": b,
                         "action": np.where(rng.random(400) < 1 - b, "yes", "no")})
    alone = monotonicity_test(data, pairs=[("yes", "no")], n_resamples=19, rng=0)
    res = monotonicity_test(data, n_resamples=19, rng=0)
    assert alone.statistic == pytest.approx(90.0)
    assert res.statistic == alone.statistic
    table = res.table.set_index("pair")
    assert table.loc[["yes/defer", "defer/no"], "n_comparisons"].tolist() == [0, 0]
    assert table.loc[["yes/defer", "defer/no"], "statistic"].isna().all()
    assert set(res.comparison_table["pair"]) == {"yes/no"}
    assert len(res.bin_table[res.bin_table["pair"] == "yes/defer"]) > 0  # bins still shown


def test_a_pair_and_its_reverse_are_refused():
    # pairs=[("yes", "no"), ("no", "yes")] pooled opposite directions of one share: a
    # rational agent (0% and p = 1 on yes/no alone) read 40% violations, p = 0.01
    data = coherence.simulate("rational", n_contexts=30, rng=3).data
    for pairs in ([("yes", "no"), ("no", "yes")], [("yes", "no"), ("defer", "no"), ("no", "yes")]):
        with pytest.raises(ValueError, match=r"'pairs' parameter of monotonicity_test must be "
                           r"free of a pair and its reverse .*got \('yes', 'no'\)"):
            monotonicity_test(data, pairs=pairs, n_resamples=19, rng=0)


@pytest.mark.filterwarnings("ignore::coherence.TiesWarning")
def test_bootstrap_method_kept_and_warns():
    data = generate(Design(n_contexts=40), 2)
    with pytest.warns(NotCalibratedWarning, match="method='bootstrap'"):
        res = monotonicity_test(data, method="bootstrap", n_resamples=99, rng=0)
    assert res.method == "bootstrap"
    assert res.to_frame()["method"].iloc[0] == "bootstrap"


@pytest.mark.filterwarnings("ignore::coherence.TiesWarning")
@pytest.mark.filterwarnings("ignore::coherence.NotCalibratedWarning")
def test_bootstrap_default_statistic_is_the_first_releases_values():
    """Regression: when lr_on='both' became the default, the bootstrap (which has no min-p
    combination) fell silently to the quantile bins, while its result said 'both': its
    power against the demo's nonmonotone agent went from 0.74 to 0.57 at 200 x 5. The
    default is now the distinct values, as in the first releases, and is recorded."""
    data = coherence.simulate(coherence.Agent.nonmonotone(), n_contexts=200, rng=20_001).data
    default = monotonicity_test(data, method="bootstrap", n_resamples=99, rng=1)
    values = monotonicity_test(data, method="bootstrap", n_resamples=99, rng=1, lr_on="values")
    bins = monotonicity_test(data, method="bootstrap", n_resamples=99, rng=1, lr_on="bins")
    assert default.lr_on == values.lr_on == "values" and bins.lr_on == "bins"
    pd.testing.assert_frame_equal(default.table, values.table)
    assert not np.array_equal(default.table["global_statistic"], bins.table["global_statistic"])
    # the permutation test keeps 'both' (min-p over values and bins)
    perm = monotonicity_test(data, method="permutation", n_resamples=99, rng=1)
    assert perm.lr_on == "both"


@pytest.mark.slow  # a statistical matrix (or a long equivalence check): make test-slow
@pytest.mark.filterwarnings("ignore::coherence.TiesWarning")
def test_size_on_independent_realistic_nulls_fast():
    """Fast subset of benchmarks/validate_monotonicity.py: per-pair size on nulls where
    the earlier bootstrap rejected 0.6-1.0 of the time (issue 14)."""
    designs = [Design(n_contexts=1000, repetitions=1, grid=None),  # one row per belief value
               Design(shock_sd=1.0),  # flat shares, context shocks
               Design(slope=0.3, shock_sd=1.0, belief_sd=0.05, grid=None)]
    for design in designs:
        pvalues = []
        for seed in range(30):
            data = generate(design, 70_000 + seed)
            res = monotonicity_test(data, n_resamples=99, rng=seed)
            pvalues += res.table["pvalue"].tolist()
        rejected = int(np.sum(np.asarray(pvalues) <= 0.05))
        # 90 p-values: Binomial(90, 0.05) exceeds 12 with probability < 0.01
        assert rejected <= 12, (design, rejected)


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_min_p_pvalue_is_exact_over_exchangeable_statistics(seed):
    # Any of B + 1 exchangeable statistic pairs could have been the observed one: taken
    # in turn as observed, at most k of them may get a p-value <= k / (B + 1).
    from coherence._resampling import min_p_pvalue

    gen = np.random.default_rng(seed)
    b = 59
    z = gen.standard_normal((b + 1, 2))
    stats_ = np.column_stack([z[:, 0], 0.6 * z[:, 0] + 0.8 * z[:, 1]])
    stats_[::7, 1] = 0.0  # ties, as isotonic LR statistics have at 0
    p = np.array([min_p_pvalue(list(stats_[i]), list(np.delete(stats_, i, axis=0).T))
                  for i in range(b + 1)])
    for k in range(1, b + 2):
        assert np.sum(p <= k / (b + 1) + 1e-12) <= k
# --------------------------------------------------------------------------- numba kernels
@given(st.lists(st.tuples(st.integers(-3, 3), st.integers(1, 5)), min_size=1, max_size=30))
def test_pava_kernel_equals_scikit_learn(points):
    """The numba PAVA against scikit-learn's isotonic regression (ties and flats included)."""
    from sklearn.isotonic import isotonic_regression

    from coherence._decision._kernels_isotonic import pava

    y = np.array([p[0] for p in points], dtype=np.float64) / 3.0
    w = np.array([p[1] for p in points], dtype=np.float64)
    np.testing.assert_allclose(pava(y, w), isotonic_regression(y, sample_weight=w),
                               rtol=0, atol=1e-12)


@given(seed=st.integers(0, 2**32 - 1), n_values=st.integers(2, 25), rows=st.integers(1, 8))
def test_isotonic_lr_rows_equals_reference(seed, n_values, rows):
    """Each row's statistic equals isotonic_lr (scikit-learn's PAVA, numpy sums) up to
    1e-9 relative, the Monte Carlo p-value's tie tolerance, and is 0 exactly when the
    shares never fall."""
    from coherence._decision._kernels_isotonic import isotonic_lr_rows

    gen = np.random.default_rng(seed)
    m = gen.integers(1, 6, size=n_values)
    xs = gen.binomial(m[None, :], gen.uniform(0, 1, size=n_values), size=(rows, n_values))
    xs[0] = 0  # a flat row: statistic exactly 0
    got = isotonic_lr_rows(xs.astype(np.float64), m.astype(np.float64))
    for row, value in zip(xs, got, strict=True):
        share = row / m
        expected = 0.0 if np.all(np.diff(share) >= 0) else isotonic_lr(row, m)
        assert value == pytest.approx(expected, rel=1e-9, abs=1e-12)
        assert (value == 0.0) == (expected == 0.0)


def test_permutation_null_same_pvalues_as_reference_loop(monkeypatch):
    """The kernel leaves the monotonicity test's statistics and p-values as the per-resample
    scikit-learn loop gives them (same draws, same comparisons)."""
    from coherence._decision import _kernels_isotonic as _kernels

    study = coherence.simulate(coherence.Agent.nonmonotone(), n_contexts=80, rng=4).data
    fast = monotonicity_test(study, n_resamples=199, rng=9)

    def reference(xs, m):
        return np.array([0.0 if np.all(np.diff(x / m) >= 0) else isotonic_lr(x, m)
                         for x in xs])

    monkeypatch.setattr(_kernels, "isotonic_lr_rows", reference)
    slow = monotonicity_test(study, n_resamples=199, rng=9)
    assert fast.pvalue == slow.pvalue
    pd.testing.assert_frame_equal(fast.table, slow.table)


def test_a_study_too_small_for_the_windows_warns():
    # windows of fewer than min_contexts contexts (a third of a small study's): the draws are
    # re-studentized, and the size with context shocks still reaches 0.07 at 25-30 contexts
    from coherence import SmallSampleWarning
    from coherence import cyclic_monotonicity_test

    small = coherence.simulate("rational", n_contexts=30, n_repetitions=5, rng=0).data
    with pytest.warns(SmallSampleWarning, match=r"windows of 10 contexts \(a third of 30\) "
                      r"are fewer than min_contexts = 15.*method='permutation'"):
        monotonicity_test(small, rng=0, n_resamples=199)
    with pytest.warns(SmallSampleWarning, match=r"cyclic_monotonicity_test: windows of 10"):
        cyclic_monotonicity_test(small, rng=0, n_resamples=199)
    import warnings

    fifty = coherence.simulate("rational", n_contexts=50, n_repetitions=2, rng=0).data
    with warnings.catch_warnings():
        warnings.simplefilter("error", SmallSampleWarning)
        monotonicity_test(small, rng=0, n_resamples=199, min_contexts=7)  # windows of 10
        monotonicity_test(small, rng=0, n_resamples=199, method="permutation")
        monotonicity_test(fifty, rng=0, n_resamples=199)  # windows of 16 >= 15


def test_quantile_bins_read_from_the_low_end_as_documented():
    """The mirror asymmetry the Notes state: a tied block at a cut joins the lower bin,
    and the rows left over on distinct beliefs go to the lowest bins."""
    tied = np.repeat([0.2, 0.5, 0.8], [30, 40, 30])
    assert np.bincount(quantile_bins(tied, 2)[0]).tolist() == [70, 30]
    assert np.bincount(quantile_bins(1.0 - tied, 2)[0]).tolist() == [70, 30]  # 0.5 with 0.8
    distinct = np.random.default_rng(0).uniform(size=101)
    assert np.bincount(quantile_bins(distinct, 5)[0]).tolist() == [21, 20, 20, 20, 20]
    assert np.bincount(quantile_bins(1.0 - distinct, 5)[0]).tolist() == [21, 20, 20, 20, 20]
