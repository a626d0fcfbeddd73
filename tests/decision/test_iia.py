"""Tests of the IIA test across menus (coherence._decision._iia)."""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import coherence
from benchmarks.iia_designs import Design
from benchmarks.iia_designs import generate
from benchmarks.iia_designs import mh_test
from coherence import DegenerateDataWarning
from coherence import IIAResult
from coherence import SmallSampleWarning
from coherence import iia_test
from coherence._decision._iia import comparison_scores
from coherence._decision._iia import menu_counts
from coherence._decision._iia import odds_ratio_interval
from coherence._decision._iia import sign_flip_null
from coherence._decision._iia import step_down_maxt

FULL = "defer|no|yes"


def _rows(context: object, menu: str, actions: list[str], belief: float = 0.5) -> list[dict]:
    return [{"context": context, "belief": belief, "action": a, "menu": menu} for a in actions]


def _toy() -> pd.DataFrame:
    """Two contexts, the full menu and the menu without defer; counts chosen by hand."""
    rows = (_rows("c1", FULL, ["yes", "yes", "no", "defer"])
            + _rows("c1", "no|yes", ["yes", "yes", "yes", "no"])
            + _rows("c2", FULL, ["yes", "no", "no", "defer", "defer"])
            + _rows("c2", "no|yes", ["yes", "no", "no"]))
    return pd.DataFrame(rows)


@pytest.fixture(scope="module")
def null_study() -> pd.DataFrame:
    return generate(Design(), 11)


@pytest.fixture(scope="module")
def violating_study() -> pd.DataFrame:
    return generate(Design(agent="odds", factor=3.0), 12)


# --------------------------------------------------------------------------- validation
@pytest.mark.parametrize(("kwargs", "exc", "match"), [
    ({"action": 3}, TypeError, "'action' parameter of iia_test must be a column name"),
    ({"menu": None}, TypeError, "'menu' parameter of iia_test must be a column name"),
    ({"group": None}, TypeError, "'group' parameter of iia_test must be a column name"),
    ({"belief": 1.0}, TypeError, "'belief' parameter of iia_test must be a column name"),
    ({"menu": "offered"}, ValueError, "column 'offered' \\(the 'menu' column\\) not found"),
    ({"n_resamples": 0}, ValueError, "'n_resamples' parameter of iia_test"),
    ({"confidence_level": 1.0}, ValueError, "'confidence_level' parameter of iia_test"),
    ({"rng": "seed"}, TypeError, "rng"),
])
def test_parameter_errors(kwargs, exc, match):
    with pytest.raises(exc, match=match):
        iia_test(_toy(), **kwargs)


def test_data_errors():
    with pytest.raises(TypeError, match="'data' parameter of iia_test"):
        iia_test(3)
    with pytest.raises(ValueError, match="at least one row"):
        iia_test(_toy().iloc[:0])
    bad = _toy()
    bad.loc[5, "action"] = "defer"  # row 5 is under "no|yes"
    with pytest.raises(ValueError, match=r"Column 'action'.* offered by the row's menu.*row 5"):
        iia_test(bad)
    empty = _toy()
    empty.loc[2, "menu"] = "yes||no"
    with pytest.raises(ValueError, match=r"Column 'menu'.*no empty label.*row 2"):
        iia_test(empty)
    typed = _toy()
    typed["menu"] = typed["menu"].astype(object)
    typed.loc[1, "menu"] = 7
    with pytest.raises(ValueError, match=r"Column 'menu'.*strings of action labels.*row 1"):
        iia_test(typed)
    missing = _toy()
    missing.loc[0, "menu"] = None
    with pytest.raises(ValueError, match=r"Column 'menu'.*missing"):
        iia_test(missing)
    no_full = _toy()
    no_full = no_full[no_full["menu"] != FULL]
    no_full = pd.concat([no_full, pd.DataFrame(_rows("c1", "defer|no", ["defer"]))])
    with pytest.raises(ValueError, match=r"no menu offers every action.*'defer\|no\|yes'"):
        iia_test(no_full)
    with pytest.raises(ValueError, match="Column 'belief'"):
        iia_test(_toy().assign(belief=1.5))


def test_no_reduced_menu_warns():
    data = _toy().query("menu == @FULL")
    with pytest.warns(DegenerateDataWarning, match="nothing to compare"):
        res = iia_test(data, n_resamples=19, rng=0)
    assert math.isnan(res.pvalue) and math.isnan(res.statistic) and res.n_comparisons == 0
    assert len(res.table) == 0


def test_untestable_comparison_warns_and_is_left_out():
    data = pd.concat([_toy(), pd.DataFrame(_rows("c3", "defer|yes", ["yes"]))])
    with pytest.warns(DegenerateDataWarning, match="defer/yes without no is not testable"), \
            pytest.warns(SmallSampleWarning, match="no/yes without defer has 2 informative"):
        res = iia_test(data, n_resamples=19, rng=0)
    row = res.table.set_index("comparison").loc["defer/yes without no"]
    assert not row["testable"] and row["reason"] and math.isnan(row["pvalue"])
    assert res.n_comparisons == 1


def _separated(n_contexts: int = 25) -> pd.DataFrame:
    """Every context: the full menu mixes yes and no, the menu without defer only yes."""
    rows = []
    for c in range(n_contexts):
        rows += _rows(c, FULL, ["yes", "no", "defer", "yes"][: 3 + c % 2])
        rows += _rows(c, "no|yes", ["yes"] * (2 + c % 3))
    return pd.DataFrame(rows)


def test_separated_comparison_has_a_zero_odds_ratio_and_warns():
    """No 'no' under the menu without defer: the Mantel-Haenszel odds ratio of no over yes
    is 0 (log -inf), not NaN, and the interval unbounded, with a warning that says why."""
    with pytest.warns(DegenerateDataWarning, match="no/yes without defer has odds ratio 0: "
                      "no context has both a choice of 'no' under menu 'no\\|yes'"):
        res = iia_test(_separated(), n_resamples=199, rng=0)
    row = res.table.iloc[0]
    assert row["testable"] and row["odds_ratio"] == 0.0
    assert row["log_odds_ratio"] == -math.inf
    assert row["ci_low"] == -math.inf and row["ci_high"] == math.inf
    assert row["pvalue"] <= 0.05


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 3), st.integers(0, 3),
                          st.integers(0, 3)), min_size=2, max_size=8))
def test_testable_comparisons_never_have_a_nan_odds_ratio(cells):
    """A testable comparison has an odds ratio in [0, inf] and an interval that is not NaN;
    a 0 or infinite one is warned about."""
    rows = []
    for c, (yes_full, no_full, yes_red, no_red) in enumerate(cells):
        rows += _rows(c, FULL, ["defer"] + ["yes"] * yes_full + ["no"] * no_full)
        rows += _rows(c, "no|yes", ["yes"] * yes_red + ["no"] * no_red)
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        res = iia_test(pd.DataFrame(rows), n_resamples=19, rng=0)
    if len(res.table) == 0 or not res.table.iloc[0]["testable"]:
        return
    row = res.table.iloc[0]
    assert 0.0 <= row["odds_ratio"] <= math.inf
    assert not (math.isnan(row["ci_low"]) or math.isnan(row["ci_high"]))
    assert row["ci_low"] <= row["ci_high"]
    separated = [w for w in caught if "has odds ratio" in str(w.message)]
    assert bool(separated) == (row["odds_ratio"] in (0.0, math.inf))


# --------------------------------------------------------------------------- by hand
def test_hand_computed_scores_and_odds_ratio():
    with pytest.warns(SmallSampleWarning):
        res = iia_test(_toy(), n_resamples=99, rng=0)
    row = res.table.iloc[0]
    assert row["comparison"] == "no/yes without defer"
    assert (row["action_1"], row["action_2"], row["menu"], row["removed"]) == (
        "no", "yes", "no|yes", "defer")
    # c1: reduced x=1 no of n1=4, full y=1 no of n0=3; c2: x=2 of 3, y=2 of 3
    u1 = 1 - 4 * 2 / 7
    u2 = 2 - 3 * 4 / 6
    assert row["statistic"] == pytest.approx((u1 + u2) / math.sqrt(u1 ** 2 + u2 ** 2))
    r = 1 * (3 - 1) / 7 + 2 * (3 - 2) / 6
    s = (4 - 1) * 1 / 7 + (3 - 2) * 2 / 6
    assert row["odds_ratio"] == pytest.approx(r / s)
    assert row["log_odds_ratio"] == pytest.approx(math.log(r / s))
    assert row["n_obs"] == 7 + 6 and row["n_contexts"] == 2
    assert res.n_obs == len(_toy()) and res.n_contexts == 2
    assert res.full_menu == FULL and res.group == "context"
    shares = res.menu_table.set_index(["menu", "action"])["share"]
    assert shares[(FULL, "defer")] == pytest.approx(3 / 9)
    assert shares[("no|yes", "yes")] == pytest.approx(4 / 7)


def test_menu_spelling_does_not_matter():
    respelt = _toy().assign(menu=lambda d: d["menu"].map(
        {FULL: " yes | defer|no", "no|yes": "yes|no"}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallSampleWarning)
        a = iia_test(_toy(), n_resamples=99, rng=3)
        b = iia_test(respelt, n_resamples=99, rng=3)
    pd.testing.assert_frame_equal(a.table, b.table)
    assert a.full_menu == b.full_menu == FULL


def test_number_actions_compare_with_menus_as_numbers():
    """Actions 0/1/2 as ints or floats, menus '0|1|2' or '0.0|1.0|2.0': one test. Float
    actions were refused ('1.0 not in 0|1|2') and int actions under float menus too."""
    code = {"defer": 0, "no": 1, "yes": 2}
    toy = _toy()
    ints = toy.assign(action=toy["action"].map(code),
                      menu=toy["menu"].map({FULL: "0|1|2", "no|yes": "1|2"}))
    floats = ints.assign(action=ints["action"].astype(float))
    float_menus = ints.assign(menu=ints["menu"].map({"0|1|2": "0.0|1.0|2.0",
                                                     "1|2": " 2.0 | 1"}))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", SmallSampleWarning)
        ref = iia_test(toy, n_resamples=99, rng=3)
        results = [iia_test(d, n_resamples=99, rng=3) for d in (ints, floats, float_menus)]
        paired = iia_test(floats, pairs=[(1.0, "2")], n_resamples=99, rng=3)
    for res in (*results, paired):
        assert res.full_menu == "0|1|2"
        assert res.table["comparison"].tolist() == ["1/2 without 0"]
        np.testing.assert_array_equal(res.table["statistic"], ref.table["statistic"])
        assert res.pvalue == ref.pvalue
    with pytest.raises(ValueError, match=r"Column 'menu'.*whole numbers joined by '\|', as "
                       r"the actions of column 'action' are numbers.*row 4 = '1\|two'"):
        iia_test(floats.assign(menu=floats["menu"].replace({"1|2": "1|two"})))
    with pytest.raises(ValueError, match=r"'pairs' parameter of iia_test.*whole numbers"):
        iia_test(floats, pairs=[(1.5, 2)])


def test_step_down_maxt_matches_brute_force():
    gen = np.random.default_rng(0)
    null = np.abs(gen.standard_normal((199, 4)))
    obs = np.array([2.5, 0.3, 1.9, np.nan])
    adj = step_down_maxt(obs, null)
    order = [0, 2, 1]
    expected = {}
    running = 0.0
    for k, j in enumerate(order):
        rest = order[k:]
        p = (1 + np.sum(null[:, rest].max(axis=1) >= obs[j])) / 200
        running = max(running, p)
        expected[j] = running
    for j, p in expected.items():
        assert adj[j] == pytest.approx(p)
    assert math.isnan(adj[3])
    # the smallest adjusted p-value is the single-step max-T p-value
    assert np.nanmin(adj) == pytest.approx(
        (1 + np.sum(null[:, :3].max(axis=1) >= 2.5)) / 200)


def test_sign_flip_null_enumerates_like_exact_flips():
    """With few contexts the Monte Carlo null converges to the exact sign-flip distribution."""
    scores = np.array([[1.0, -0.5], [2.0, 0.5], [-0.5, 1.5]])
    z, null = sign_flip_null(scores, 40_000, np.random.default_rng(1))
    scale = np.sqrt((scores ** 2).sum(axis=0))
    assert z == pytest.approx(scores.sum(axis=0) / scale)
    exact = np.array([np.array(w) @ scores / scale
                      for w in itertools.product([-1, 1], repeat=3)])
    for j in range(2):
        for v in exact[:, j]:
            assert np.mean(np.isclose(null[:, j], v)) == pytest.approx(
                np.mean(np.isclose(exact[:, j], v)), abs=0.01)


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 4),
                          st.integers(0, 4)), min_size=1, max_size=12))
def test_scores_vanish_and_odds_ratio_is_one_when_menus_agree(cells):
    """Identical counts under the two menus: every score is 0, the odds ratio 1 (or NaN)."""
    counts = np.zeros((len(cells), 2, 2))
    for g, (xa, xb, _, _) in enumerate(cells):
        counts[g, 0] = counts[g, 1] = (xa, xb)
    u, r, s, informative = comparison_scores(counts, 0, 1, 0, 1)
    assert np.allclose(u, 0.0)
    assert np.allclose(r, s)
    assert np.array_equal(informative, (counts[:, 0, 0] > 0) & (counts[:, 0, 1] > 0))


@given(st.lists(st.tuples(st.integers(0, 4), st.integers(0, 4), st.integers(0, 4),
                          st.integers(0, 4)), min_size=1, max_size=12))
def test_swapping_the_pair_inverts_the_odds_ratio(cells):
    counts = np.array([[[a, b], [c, d]] for a, b, c, d in cells], dtype=float)
    u, r, s, inf1 = comparison_scores(counts, 0, 1, 0, 1)
    u2, r2, s2, inf2 = comparison_scores(counts, 0, 1, 1, 0)
    assert np.allclose(u, -u2)
    assert np.allclose(r, s2) and np.allclose(s, r2)
    assert np.array_equal(inf1, inf2)


def test_odds_ratio_interval_is_the_hull_of_percentile_and_robust_wald():
    """The Wald half-width by hand (sandwich with n/(n-1), Student quantile on n-1 degrees
    of freedom over the informative contexts); the interval holds both intervals."""
    from scipy.stats import t

    r = np.array([1.0, 0.5, 2.0, 0.0, 0.2])
    s = np.array([0.5, 1.0, 0.4, 0.0, 0.3])  # context 3 informs nothing: n = 4
    theta = math.log(r.sum() / s.sum())
    influence = r / r.sum() - s / s.sum()
    half = t.ppf(0.975, 3) * math.sqrt(4 / 3 * np.sum(influence ** 2))
    narrow = np.linspace(theta - 0.1, theta + 0.1, 201)
    assert odds_ratio_interval(theta, narrow, r, s, 0.95) == pytest.approx(
        (theta - half, theta + half))
    wide = np.linspace(theta - 10, theta + 10, 201)
    low, high = odds_ratio_interval(theta, wide, r, s, 0.95)
    assert low < theta - half and high > theta + half
    assert (low, high) == pytest.approx((theta - 9.5, theta + 9.5))


def test_odds_ratio_interval_keeps_the_percentile_interval_when_separated():
    """An infinite log odds ratio, or one informative context, keeps the percentile
    interval; every resample separated the same way bounds neither end."""
    boot = np.r_[np.full(50, -np.inf), np.linspace(-3.0, -1.0, 150)]
    r, s = np.array([0.0, 0.0, 0.0]), np.array([1.0, 0.5, 0.0])
    assert odds_ratio_interval(-math.inf, boot, r, s, 0.95)[0] == -math.inf
    assert odds_ratio_interval(-math.inf, np.full(9, -np.inf), r, s, 0.95) == (
        -math.inf, math.inf)
    one = np.array([0.0, 2.0]), np.array([0.0, 1.0])
    assert odds_ratio_interval(math.log(2.0), np.full(9, math.log(2.0)), *one, 0.95) == (
        pytest.approx(math.log(2.0)), pytest.approx(math.log(2.0)))


def test_odds_ratio_interval_when_no_resample_draws_an_informative_context():
    """A few resamples of many contexts can all miss the informative ones (every
    bootstrap value NaN): the interval was (nan, nan) with no word (13 of 1,500 defined
    odds ratios at 1-9 resamples). A separated comparison bounds neither end, one
    informative context gives its own value (as every resample that draws it does), and
    two or more give the Wald interval, the hull's other half."""
    from scipy.stats import t

    empty = np.full(3, np.nan)
    separated = np.array([0.0, 0.0, 0.0]), np.array([1.0, 0.5, 0.0])
    assert odds_ratio_interval(-math.inf, empty, *separated, 0.95) == (-math.inf, math.inf)
    one = np.array([0.0, 2.0]), np.array([0.0, 1.0])
    assert odds_ratio_interval(math.log(2.0), empty, *one, 0.95) == (math.log(2.0),
                                                                      math.log(2.0))
    r, s = np.array([1.0, 0.5, 2.0]), np.array([0.5, 1.0, 0.4])
    theta = math.log(r.sum() / s.sum())
    influence = r / r.sum() - s / s.sum()
    half = t.ppf(0.975, 2) * math.sqrt(3 / 2 * np.sum(influence ** 2))
    assert odds_ratio_interval(theta, empty, r, s, 0.95) == pytest.approx(
        (theta - half, theta + half))


def test_menu_counts():
    counts = menu_counts(np.array([0, 0, 1]), np.array([2, 0, 1]), np.array([1, 1, 0]),
                         2, 2, 3)
    assert counts.shape == (2, 2, 3) and counts.sum() == 3
    assert counts[0, 1, 2] == counts[0, 1, 0] == counts[1, 0, 1] == 1


# --------------------------------------------------------------------------- behaviour
def test_null_study_is_not_flagged(null_study):
    res = iia_test(null_study, n_resamples=199, rng=0)
    assert isinstance(res, IIAResult)
    assert res.n_comparisons == 3 and res.pvalue > 0.05 and res.statistic == 0.0
    assert res.confidence_interval.low == 0.0 and res.confidence_interval.high == 1.0
    lo, hi = res.table["ci_low"].to_numpy(), res.table["ci_high"].to_numpy()
    assert np.all((lo < 0) & (hi > 0))  # every log odds ratio interval covers 0


def test_known_violation_is_found_and_located(violating_study):
    res = iia_test(violating_study, n_resamples=199, rng=0)
    table = res.table.set_index("comparison")
    assert res.pvalue <= 0.01
    assert table.loc["no/yes without defer", "violates"]
    # the agent triples the odds of yes over no without defer: no/yes odds ratio 1/3
    assert table.loc["no/yes without defer", "odds_ratio"] == pytest.approx(1 / 3, rel=0.35)
    assert table.loc["no/yes without defer", "ci_high"] < 0
    assert not table.drop("no/yes without defer")["violates"].any()
    assert res.statistic == pytest.approx(1 / 3)
    assert res.confidence_interval == (1 / 3, 1.0, 0.95)


def test_four_actions_compare_every_pair_of_every_reduced_menu():
    data = generate(Design(n_actions=4, n_contexts=60), 5)
    res = iia_test(data, n_resamples=99, rng=0)
    assert res.n_comparisons == len(res.table) == 4 * 3
    assert set(res.table["removed"]) == {"abstain", "defer", "no", "yes"}


def test_mantel_haenszel_competitor_agrees_in_direction(violating_study):
    res = iia_test(violating_study, n_resamples=99, rng=0)
    assert mh_test(violating_study, ("yes", "no"), FULL, "no|yes") < 0.01
    assert res.table.set_index("comparison").loc["no/yes without defer", "statistic"] < 0


def test_belief_none_and_other_column_names(null_study):
    renamed = null_study.rename(columns={"context": "ctx", "action": "choice",
                                         "menu": "offered"}).drop(columns="belief")
    res = iia_test(renamed, belief=None, action="choice", menu="offered", group="ctx",
                   n_resamples=99, rng=0)
    ref = iia_test(null_study, n_resamples=99, rng=0)
    pd.testing.assert_frame_equal(res.table, ref.table)
    assert res.menu_table["mean_belief"].isna().all()


@pytest.mark.slow
def test_calibrated_on_iia_agents():
    """P-values of IIA-respecting agents with context shocks are not too small (60 studies;
    the 400-study matrix is benchmarks/validate_iia.py)."""
    p = np.array([iia_test(generate(Design(per_menu=(1, 9)), 700 + s), n_resamples=199,
                           rng=s).pvalue for s in range(60)])
    assert np.mean(p <= 0.05) <= 0.15
    assert np.mean(p <= 0.5) == pytest.approx(0.5, abs=0.2)


def test_result_is_exported():
    assert coherence.iia_test is iia_test and "iia_test" in coherence.__all__


def test_pairs_restrict_the_comparisons(violating_study):
    res = iia_test(violating_study, pairs=[("yes", "no")], n_resamples=199, rng=0)
    assert res.table["comparison"].tolist() == ["no/yes without defer"]
    full = iia_test(violating_study, n_resamples=199, rng=0)
    row = res.table.iloc[0]
    ref = full.table.set_index("comparison").loc["no/yes without defer"]
    assert row["statistic"] == pytest.approx(ref["statistic"])
    assert row["odds_ratio"] == pytest.approx(ref["odds_ratio"])
    # one comparison: the adjusted p-value is the marginal one
    assert row["pvalue_adjusted"] == row["pvalue"] == res.pvalue


@pytest.mark.parametrize(("pairs", "exc", "match"), [
    ("yes", TypeError, "'pairs' parameter of iia_test must be None or a non-empty"),
    ([], TypeError, "'pairs' parameter"),
    ([("yes", "yes")], ValueError, "pairs of two different action labels"),
    ([("yes", "maybe")], ValueError, "pairs of actions offered in the table"),
])
def test_pairs_errors(pairs, exc, match):
    with pytest.raises(exc, match=match):
        iia_test(_toy(), pairs=pairs)


def test_a_requested_pair_on_no_reduced_menu_is_named():
    # pairs=[("yes", "defer"), ("yes", "no")] with only 'defer|yes' reduced: the result held
    # one comparison and said nothing of yes/no, as if it had been tested and passed
    rows = []
    for c in range(20):
        rows += _rows(c, FULL, ["yes", "no", "defer"]) + _rows(c, "defer|yes", ["yes", "defer"])
    with pytest.warns(DegenerateDataWarning, match=r"no reduced menu offers both actions of "
                      r"the requested pair\(s\) no/yes"):
        res = iia_test(pd.DataFrame(rows), pairs=[("yes", "defer"), ("yes", "no")],
                       n_resamples=99, rng=0)
    assert res.table["comparison"].tolist() == ["defer/yes without no"]
    with warnings.catch_warnings():  # every requested pair on a menu: no such warning
        warnings.filterwarnings("error", message=".*requested pair")
        iia_test(pd.DataFrame(rows), pairs=[("yes", "defer")], n_resamples=99, rng=0)


def test_validation_agents_violate_iia_by_the_stated_amount():
    """The generator's agents: logit keeps the odds, 'odds' multiplies them exactly by the
    factor, a nested logit with lam = 1 is the logit."""
    from benchmarks.iia_designs import probabilities

    v = np.random.default_rng(0).normal(size=(50, 3))
    full, reduced = ("yes", "no", "defer"), ("yes", "no")

    def log_or(design: Design) -> np.ndarray:
        p, q = probabilities(design, v, full), probabilities(design, v, reduced)
        return np.log(q[:, 0] / q[:, 1]) - np.log(p[:, 0] / p[:, 1])

    assert np.allclose(log_or(Design()), 0.0)
    assert np.allclose(log_or(Design(agent="odds", factor=2.0)), math.log(2.0))
    assert np.allclose(probabilities(Design(agent="nested", lam=1.0), v, full),
                       probabilities(Design(), v, full))
    assert np.all(log_or(Design(agent="nested", lam=0.5)) > 0)


def test_a_comparison_whose_counts_sit_at_their_expectation_has_pvalue_one():
    # every informative context's score is exactly 0: Z was 0/0 = NaN, yet the comparison
    # was testable and counted in the share's denominator with no p-value
    rows = []
    for c in range(30):
        rows += [(c, 0.5, a, "defer|no|yes") for a in ["yes", "no", "yes", "no", "defer",
                                                        "defer"]]
        rows += [(c, 0.5, a, "no|yes") for a in ["yes", "no", "yes", "no"]]
    df = pd.DataFrame(rows, columns=["context", "belief", "action", "menu"])
    res = coherence.iia_test(df, rng=0, n_resamples=199)
    row = res.table.iloc[0]
    assert row["testable"] and row["statistic"] == 0.0
    assert row["pvalue"] == row["pvalue_adjusted"] == 1.0
    assert res.pvalue == 1.0 and res.statistic == 0.0 and res.n_comparisons == 1
    z, null = sign_flip_null(np.zeros((4, 1)), 10, np.random.default_rng(0))
    assert z[0] == 0.0 and not null.any()
