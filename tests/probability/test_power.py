"""Tests of pairs_power."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest

from coherence import PairsPowerResult
from coherence import conditional_forecasting
from coherence import pairs_power
from coherence._probability._power import _binom_power
from coherence._probability._power import _binom_pvalues
from coherence._probability._power import _t_power
from tests.probability._helpers import coherent_pairs


# --------------------------------------------------------------------------- power
def test_t_power_matches_statsmodels():
    from statsmodels.stats.power import TTestPower

    for n, d in [(14, 0.09), (100, 0.3), (952, 0.0909)]:
        assert _t_power(n, d, 0.05, "two-sided") == pytest.approx(
            TTestPower().power(effect_size=d, nobs=n, alpha=0.05), rel=1e-6)
        assert _t_power(n, d, 0.05, "greater") == pytest.approx(
            TTestPower().power(effect_size=d, nobs=n, alpha=0.05, alternative="larger"),
            rel=1e-6)


def test_binom_pvalues_match_scipy():
    from scipy.stats import binomtest

    for n, p0 in [(13, 0.5), (20, 0.3)]:
        for alt in ("two-sided", "greater", "less"):
            ours = _binom_pvalues(n, p0, alt)
            ref = [binomtest(k, n, p0, alternative=alt).pvalue for k in range(n + 1)]
            np.testing.assert_allclose(ours, ref, rtol=1e-9)


def test_pairs_power_mean_improvement():
    res = pairs_power(effect=0.01, sd=0.11, n=14, n_simulations=1000, rng=0)
    assert isinstance(res, PairsPowerResult)
    assert res.n_required == 952
    assert res.achieved_power >= 0.8 > _t_power(951, 0.01 / 0.11, 0.05, "two-sided")
    assert abs(res.simulated_power - 0.8) < 0.05
    assert res.power_at_n == pytest.approx(0.0615, abs=5e-4)
    assert tuple(res.to_frame().columns) == PairsPowerResult.frame_columns()
    assert res._repr_html_() == res.summary()._repr_html_() and "952" in res._repr_html_()


def test_pairs_power_win_rate():
    res = pairs_power(metric="win_rate", win_rate=0.6, n_simulations=1000, rng=0)
    assert res.achieved_power >= 0.8
    from coherence._probability._power import _binom_power

    assert _binom_power(res.n_required - 1, 0.6, 0.5, 0.05, "two-sided") < 0.8
    assert abs(res.simulated_power - res.achieved_power) < 0.04


def test_pairs_power_from_pilot():
    df = coherent_pairs(40, np.random.default_rng(2))
    res = pairs_power(df, effect=0.02, n_simulations=200, rng=0)
    x = conditional_forecasting(df, rng=0).improvement
    assert res.sd == pytest.approx(x.std(ddof=1))
    assert res.source == "pilot" and res.n_pilot == 40
    a = pairs_power(df, effect=0.02, n_simulations=200, rng=5)
    b = pairs_power(df, effect=0.02, n_simulations=200, rng=5)
    assert a.simulated_power == b.simulated_power


def test_pairs_power_validation():
    with pytest.raises(ValueError, match="The 'sd' parameter of pairs_power must be a float > 0"):
        pairs_power(effect=0.01)
    with pytest.raises(ValueError, match="The 'metric' parameter of pairs_power must be one of"):
        pairs_power(metric="brier", sd=0.1)
    with pytest.raises(ValueError, match="The 'power' parameter of pairs_power"):
        pairs_power(sd=0.1, power=1.0)
    with pytest.raises(ValueError, match="The 'effect' parameter of pairs_power must be non-zero"):
        pairs_power(sd=0.1, effect=0.0)
    with pytest.raises(ValueError, match="The 'win_rate' parameter of pairs_power must be "
                       "different"):
        pairs_power(metric="win_rate", win_rate=0.5)
    with pytest.raises(ValueError, match="The 'category' parameter of pairs_power"):
        pairs_power(coherent_pairs(5, np.random.default_rng(0)), category="weak")
    with pytest.raises(ValueError, match="The 'n' parameter of pairs_power must be an int >= 2"):
        pairs_power(sd=0.1, n=1)


@pytest.mark.parametrize("value", [0.0, 1.0, 1e-15, 0.5])
def test_a_pilot_without_spread_names_its_columns(value):
    # every belief at one value (0, 1, 1e-15 from a bound, or 0.5): every improvement is
    # 0, and the error named no column or parameter
    pilot = coherent_pairs(8, np.random.default_rng(0)).assign(
        p_a=value, p_a_given_b1=value, p_a_given_b0=value)
    with pytest.raises(ValueError, match=r"every pilot improvement equals 0\.0 \(columns "
                       r"'p_a', 'p_a_given_b1', 'p_a_given_b0', 'a_outcome', 'b_outcome'\)"):
        pairs_power(pilot, effect=0.05, n_simulations=20, rng=0)


def test_pairs_power_duplicated_category_column():
    # issue 17: with two 'category' columns the category filter used to keep every pilot row
    df = coherent_pairs(20, np.random.default_rng(2))
    df = pd.concat([df, df[["category"]].assign(category="weak")], axis=1)
    with pytest.raises(ValueError, match=r"The 'pilot' parameter of pairs_power must be a table "
                       r"whose column names are unique; got .*duplicated column 'category'"):
        pairs_power(df, effect=0.02, n_simulations=50, rng=0)


# --------------------------------------------------------------------------- test="bernoulli"
def test_pairs_power_bernoulli_truth_hits_the_effect():
    """The alternative the Bernoulli power is computed under has the requested mean
    expected improvement over the pilot's pairs, with every chance in [0, 1]; c = 1/2
    (the forecasts are the truth) gives the mean squared update."""
    from coherence._probability._power import _bernoulli_truth

    rng = np.random.default_rng(2)
    p = rng.uniform(0.05, 0.95, 40)
    q = np.where(rng.random(40) < 0.3, p, np.clip(p + rng.normal(0, 0.2, 40), 0, 1))
    for effect in (0.02, -0.01, float(np.mean((p - q) ** 2))):
        truth = _bernoulli_truth(p, q, effect, "pairs_power")
        assert np.all((truth >= 0) & (truth <= 1))
        assert np.mean((p - q) * (p + q - 2 * truth)) == pytest.approx(effect, abs=1e-12)
    np.testing.assert_allclose(_bernoulli_truth(p, q, float(np.mean((p - q) ** 2)),
                                                "pairs_power"), q, atol=1e-9)
    with pytest.raises(ValueError, match="can reach"):
        _bernoulli_truth(p, q, 0.9, "pairs_power")


def test_pairs_power_bernoulli_simulation_agrees_with_its_curve():
    """Many updating pairs, balanced chances: the test's own rejection rate at the planned
    n is the target (normal approximation good), and lower at a quarter of it."""
    pilot = coherent_pairs(60, np.random.default_rng(4))
    res = pairs_power(pilot, effect=0.02, test="bernoulli", n_simulations=400, rng=1)
    assert res.method.startswith("Bernoulli")
    assert 10 < res.n_required < 2000 and res.achieved_power >= 0.8
    assert abs(res.simulated_power - 0.8) < 0.07  # 400 studies: SE 0.02
    small = pairs_power(pilot, effect=0.02, test="bernoulli", n=res.n_required // 4,
                        n_simulations=0, rng=1)
    assert small.power_at_n < 0.5
    t = pairs_power(pilot, effect=0.02, n_simulations=0, rng=1)
    assert t.n_required != res.n_required  # a different test, a different size


@pytest.mark.parametrize(("effect", "alternative"), [(-0.01, "greater"), (0.01, "less")])
def test_pairs_power_bernoulli_wrong_way_needs_no_scan(monkeypatch, effect, alternative):
    """An effect pointing away from a one-sided alternative: the normal power falls with
    n, so it is -1 from the power at 2 pairs, as the scan to max_n found (100,000
    evaluations, seconds) -- checked here against the scan to a small max_n."""
    from coherence._probability import _power

    pilot = coherent_pairs(30, np.random.default_rng(4), "strong")
    calls = []
    real = _power._bernoulli_normal_power
    monkeypatch.setattr(_power, "_bernoulli_normal_power",
                        lambda *a: calls.append(a[3]) or real(*a))
    res = pairs_power(pilot, effect=effect, alternative=alternative, test="bernoulli", rng=0)
    assert res.n_required == -1 and math.isnan(res.achieved_power)
    assert len(calls) < 10
    p_a, q, truth = _power._pairs_power_iv(pilot, _power._PowerSettings(
        metric="mean_improvement", effect=effect, sd=None, win_rate=None, category="strong",
        by="category", n=None, power=0.8, alpha=0.05, alternative=alternative,
        test="bernoulli", n_simulations=0, max_n=3000, rng=0)).pilot_pairs
    assert max(real(p_a, q, truth, m, 0.05, alternative) for m in range(2, 3001)) < 0.8


def test_pairs_power_bernoulli_validation():
    pilot = coherent_pairs(20, np.random.default_rng(0))
    with pytest.raises(ValueError, match="pilot"):
        pairs_power(effect=0.01, sd=0.1, test="bernoulli")
    with pytest.raises(ValueError, match="test"):
        pairs_power(metric="win_rate", test="bernoulli")
    with pytest.raises(ValueError, match="test"):
        pairs_power(pilot, effect=0.01, test="bootstrap-t")
    flat = pilot.assign(p_a_given_b1=pilot["p_a"], p_a_given_b0=pilot["p_a"])
    with pytest.raises(ValueError, match="spread"):
        pairs_power(flat, effect=0.01, test="bernoulli")


@pytest.mark.parametrize("kwargs", [
    {"effect": -0.01, "sd": 0.1, "alternative": "greater"},
    {"effect": 0.01, "sd": 0.1, "alternative": "less"},
    {"metric": "win_rate", "win_rate": 0.45, "alternative": "greater"},
    {"metric": "win_rate", "win_rate": 0.55, "alternative": "less"},
])
def test_an_effect_pointing_the_other_way_needs_no_scan(kwargs):
    """A one-sided test of an effect the other way never reaches the target power: the
    answer (-1) without scanning every n up to max_n equals the scan's."""
    quick = pairs_power(n_simulations=0, **kwargs)
    assert quick.n_required == -1 and np.isnan(quick.achieved_power)
    scanned = pairs_power(n_simulations=0, max_n=300, **kwargs)
    assert scanned.n_required == -1
    alt = kwargs["alternative"]
    for m in (2, 10, 100, 1000):  # the power it would scan never passes alpha
        if kwargs.get("metric") == "win_rate":
            assert _binom_power(m, kwargs["win_rate"], 0.5, 0.05, alt) <= 0.05 + 1e-12
        else:
            assert _t_power(m, kwargs["effect"] / 0.1, 0.05, alt) <= 0.05 + 1e-12


def test_pairs_power_skips_a_pilots_failed_records():
    """A pilot read by read_pairs keeps its failed elicitations, flagged in 'error' with
    NaN numbers: they are skipped with a SkippedRecordsWarning, as conditional_forecasting
    skips them (the pilot was refused: "column 'p_a' must not contain NaN")."""
    from coherence import SkippedRecordsWarning

    pilot = coherent_pairs(30, np.random.default_rng(4), "strong")
    clean = pairs_power(pilot, n_simulations=0, rng=0)
    failed = pd.DataFrame({"pair": ["f1", "f2"], "category": ["strong", None],
                           "error": ["Failed to elicit probabilities"] * 2})
    read = pd.concat([pilot.assign(error=np.nan), failed], ignore_index=True)
    with pytest.warns(SkippedRecordsWarning, match=r"2 failed record\(s\) of the pilot") as rec:
        res = pairs_power(read, n_simulations=0, rng=0)
    assert rec[0].filename == __file__
    pd.testing.assert_frame_equal(res.to_frame(), clean.to_frame())
    # a bool flag (False: no error) is no failure
    same = pairs_power(pilot.assign(error=False), n_simulations=0, rng=0)
    pd.testing.assert_frame_equal(same.to_frame(), clean.to_frame())


@pytest.mark.parametrize(("column", "values"), [("model", ["gpt", "llama"]),
                                                ("run", ["t0", "t1"]),
                                                ("variant", ["a", "b"])])
def test_pairs_power_refuses_a_pilot_of_several_cells(column, values):
    """A pilot of two models or two runs of the same pairs was pooled without a word (60
    pairs planned from as one forecaster's 30, each counted twice)."""
    pilot = coherent_pairs(30, np.random.default_rng(4), "strong")
    both = pd.concat([pilot.assign(**{column: v}) for v in values], ignore_index=True)
    with pytest.raises(ValueError, match=rf"2 values of column '{column}' "
                                         rf"\('{values[0]}', '{values[1]}'\).*Select one"):
        pairs_power(both, n_simulations=0, rng=0)
    one = pairs_power(both.loc[both[column] == values[0]], n_simulations=0, rng=0)
    assert one.n_pilot == 30


def test_pairs_power_refuses_a_pair_listed_twice():
    pilot = coherent_pairs(30, np.random.default_rng(4), "strong")
    twice = pd.concat([pilot, pilot.iloc[:2]], ignore_index=True)
    with pytest.raises(ValueError, match=r"Column 'pair' .*once.*4 offending rows"):
        pairs_power(twice, n_simulations=0, rng=0)


def test_pairs_power_refuses_a_pair_id_written_two_ways():
    # a pilot put together from a CSV (ids read as numbers) and a JSON file (ids as text):
    # pair 3 and pair '3' were two pilot pairs, the pair counted twice without a word
    pilot = coherent_pairs(30, np.random.default_rng(4), "strong").assign(pair=range(30))
    mixed = pd.concat([pilot, pilot.iloc[:2].assign(pair=["0", "1"])], ignore_index=True)
    with pytest.raises(ValueError, match=r"Column 'pair' .*differ by more than case, "
                       r"surrounding spaces or type .*'0' / 0"):
        pairs_power(mixed, n_simulations=0, rng=0)


def test_pairs_power_refuses_a_pilot_it_would_not_use():
    # with metric="win_rate" the pilot went unused without a word: the default win rate
    # 0.6 was planned for (199 pairs), whatever the pilot's win rate
    pilot = coherent_pairs(30, np.random.default_rng(0))
    with pytest.raises(ValueError, match=r"The 'pilot' parameter of pairs_power must be None "
                       r"with metric=\"win_rate\""):
        pairs_power(pilot, metric="win_rate", n_simulations=0)
    assert pairs_power(metric="win_rate", n_simulations=0).n_required == 199


def test_pilot_category_written_two_ways_is_refused():
    # 'strong' and 'Strong' were two categories: pairs_power planned from the 20 'strong'
    # pairs of 40 without a word, where conditional_forecasting refuses the column
    df = coherent_pairs(40, np.random.default_rng(2))
    df.loc[20:, "category"] = "Strong"
    with pytest.raises(ValueError, match=r"Column 'category' \(input to pairs_power\) must "
                       r"hold labels that differ by more than case.*'Strong' / 'strong'"):
        pairs_power(df, effect=0.02, n_simulations=0)
    with pytest.raises(ValueError, match="'Strong' / 'strong'"):
        conditional_forecasting(df)


def test_pairs_power_sd_beside_a_pilot_raises():
    # sd=0.5 beside a pilot was ignored without a word: the pilot's SD planned n_required
    # whatever sd said (the same n as without sd); it now names both
    pilot = coherent_pairs(30, np.random.default_rng(4), "strong")
    with pytest.raises(ValueError, match=r"The 'sd' parameter of pairs_power must be None "
                       r"with a pilot \(the spread is the pilot's sample SD.*got 0.5"):
        pairs_power(pilot, sd=0.5, n_simulations=0)
    with pytest.raises(ValueError, match=r"The 'sd' parameter of pairs_power must be None "
                       r'with metric="win_rate".*got 0.1'):
        pairs_power(metric="win_rate", sd=0.1, n_simulations=0)
    # the default None: the pilot's SD, or sd itself without a pilot, as before
    res = pairs_power(pilot, n_simulations=0)
    x = conditional_forecasting(pilot, n_resamples=9, rng=0).improvement
    assert res.sd == pytest.approx(float(np.std(x, ddof=1)), rel=1e-12)
    assert res.n_required == pairs_power(sd=res.sd, n_simulations=0).n_required > 2


def test_pairs_power_effect_with_win_rate_raises():
    # effect=0.05 with metric="win_rate" went unused without a word (199 pairs, the
    # default win rate 0.6's, as without it); it now names effect and the metric
    with pytest.raises(ValueError, match=r"The 'effect' parameter of pairs_power must be None "
                       r'with metric="win_rate".*got 0.05'):
        pairs_power(metric="win_rate", effect=0.05, n_simulations=0)
    with pytest.raises(ValueError, match=r"'effect'.*metric=\"win_rate\".*got 0.01"):
        pairs_power(metric="win_rate", effect=0.01, n_simulations=0)  # the old default too
    assert pairs_power(metric="win_rate", n_simulations=0).n_required == 199
    # left None with the mean improvement it is the documented 0.01, as before
    res = pairs_power(sd=0.11, n_simulations=0)
    assert res.effect == 0.01 and res.n_required == 952
    assert res.n_required == pairs_power(effect=0.01, sd=0.11, n_simulations=0).n_required



def test_pairs_power_win_rate_with_the_mean_improvement_raises():
    # win_rate=0.7 with the default metric went unused without a word: 787 pairs, the
    # mean improvement's (effect 0.01, sd 0.1), as without it; it now names win_rate
    # and the metric, as effect does with metric="win_rate"
    for value in (0.7, 0.6, (0.7, 0.55)):   # the old default 0.6 too
        with pytest.raises(ValueError, match=r"The 'win_rate' parameter of pairs_power must "
                           r'be None with metric="mean_improvement"'):
            pairs_power(sd=0.1, win_rate=value, n_simulations=0)
    assert pairs_power(sd=0.1, n_simulations=0).n_required == 787
    # left None with metric="win_rate" it is the documented 0.6, as before
    res = pairs_power(metric="win_rate", n_simulations=0)
    assert (res.win_rate, res.null_win_rate, res.n_required) == (0.6, 0.5, 199)
    assert res.n_required == pairs_power(metric="win_rate", win_rate=0.6,
                                         n_simulations=0).n_required


@pytest.mark.parametrize("kwargs", [{"category": "weak"}, {"category": "strong"},
                                    {"category": None}, {"by": "kind"},
                                    {"category": "weak", "metric": "win_rate"}])
def test_pairs_power_category_without_a_pilot_raises(kwargs):
    # category="weak" (or by=) without a pilot went unused without a word: 787 pairs from
    # sd=0.1, as with the default; they select pilot rows, so given alone they now raise
    name = "by" if "by" in kwargs else "category"
    given = {} if kwargs.get("metric") else {"sd": 0.1}
    with pytest.raises(ValueError, match=rf"The '{name}' parameter of pairs_power must be "
                       r"left unset without a pilot .*got "):
        pairs_power(**given, **kwargs, n_simulations=0)


def test_pairs_power_category_with_a_pilot_is_unchanged():
    # the default reads as "strong": the same plan as category="strong", by="category"
    pilot = coherent_pairs(40, np.random.default_rng(2))
    a = pairs_power(pilot, effect=0.02, n_simulations=50, rng=0)
    b = pairs_power(pilot, effect=0.02, category="strong", by="category", n_simulations=50,
                    rng=0)
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())
    assert a.n_pilot == 40
    everything = pairs_power(pilot, effect=0.02, category=None, n_simulations=0)
    assert everything.n_pilot == 40 and everything.sd == a.sd
    # by= with category=None (every row) went unused too: it now raises
    with pytest.raises(ValueError, match=r"The 'by' parameter of pairs_power must be left "
                       r"unset with category=None .*got 'kind'"):
        pairs_power(pilot, effect=0.02, category=None, by="kind", n_simulations=0)

def test_pairs_power_scan_starts_no_higher_than_max_n():
    # a win rate a hair above the null started the scan at n = 1.6e14 from the normal
    # approximation, beyond max_n, and failed allocating 1.12 PiB; it is now -1 (above
    # max_n), the power at max_n being checked
    res = pairs_power(metric="win_rate", win_rate=(0.5000001, 0.5), n_simulations=0,
                      max_n=1000)
    assert res.n_required == -1 and np.isnan(res.achieved_power)
    # a start below max_n is unchanged
    assert pairs_power(metric="win_rate", n_simulations=0).n_required == 199
    assert pairs_power(metric="win_rate", n_simulations=0, max_n=199).n_required == 199
    assert pairs_power(metric="win_rate", n_simulations=0, max_n=198).n_required == -1


@pytest.mark.parametrize("test", ["t", "bernoulli"])
def test_pairs_power_simulation_does_not_follow_the_pilots_row_order(test):
    # the simulation check drew pilot rows by position: the same pilot in another row order
    # (or with its pairs named otherwise) gave other simulated figures for one seed (0.831,
    # 0.823 and 0.8345 at n_required on the real pilot; now one figure)
    pilot = coherent_pairs(30, np.random.default_rng(4))
    pilot = pilot.assign(p_a=np.round(pilot["p_a"] * 20) / 20)  # heaped, with ties
    kw = {"effect": 0.02, "n": 14, "test": test, "n_simulations": 60, "rng": 1}
    fields = ["n_required", "achieved_power", "simulated_power", "simulated_low",
              "simulated_high", "power_at_n", "simulated_power_at_n", "sd"]
    clean = pairs_power(pilot, **kw).to_frame()[fields]
    for seed in (0, 1, 2):
        order = np.random.default_rng(seed).permutation(len(pilot))
        moved = pilot.iloc[order].set_axis(np.arange(len(pilot))[::-1] * 7)
        moved = moved.assign(pair=[f"renamed-{i}" for i in range(len(pilot))])
        pd.testing.assert_frame_equal(pairs_power(moved, **kw).to_frame()[fields], clean)


def test_t_power_is_a_number_where_scipys_noncentral_t_fails():
    # statsmodels' ttest_power reads the lower tail from scipy's nctdtr, which is NaN far in
    # that tail (df 13, noncentrality 11.2 at -2.16): the power at 300 pairs of a standardised
    # effect 0.5 was NaN (and 56 of 640 plans on a grid of effects), and n_required skipped
    # such n (7 where 4 pairs reach 0.9 at effect 3.85 sd)
    from scipy import integrate
    from scipy import stats

    def reference(n, d, alternative):  # E over V ~ chi2(n - 1) of the normal's tails
        df, nc = n - 1, np.sqrt(n) * d
        c = stats.t.isf(0.025 if alternative == "two-sided" else 0.05, df)

        def tail(sign, v):
            return stats.chi2.pdf(v, df) * stats.norm.cdf(sign * nc - c * np.sqrt(v / df))

        up, lo = (integrate.quad(lambda v, s=s: tail(s, v), 0, np.inf, epsabs=1e-13)[0]
                  for s in (1, -1))
        return {"two-sided": up + lo, "greater": up, "less": lo}[alternative]

    for n, d in [(300, 0.5), (14, 3.0), (2, 6.0), (2, 9.5), (59, 1.11), (3, 10.0)]:
        for alternative in ("two-sided", "greater", "less"):
            assert _t_power(n, d, 0.05, alternative) == pytest.approx(
                reference(n, d, alternative), abs=1e-9), (n, d, alternative)
    assert pairs_power(effect=0.05, sd=0.1, n=300, n_simulations=0).power_at_n == (
        pytest.approx(1.0, abs=1e-9))
    assert pairs_power(effect=0.385, sd=0.1, power=0.9, n_simulations=0).n_required == 4
