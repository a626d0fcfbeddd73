"""forecast_scores' bootstrap-t intervals and its ``cluster`` option, and the paired
comparison over clusters: against loops over the documented definitions and the
documented generator order."""

from __future__ import annotations

import itertools

import numpy as np
import pandas as pd
import pytest
from scipy import stats

from coherence import forecast_scores
from tests._reference_bootstrap_t import bootstrap_t_by_loops

#: forecast_scores warns of intervals on fewer than 6 questions (these have fewer)
FEW_QUESTIONS = "ignore:.*cover less than their level:coherence.SmallSampleWarning"
#: and its comparison below 20 questions (or clusters)
FEW_COMPARED = "ignore:ForecastScoresResult.compare. .* \\(< 20\\):coherence.SmallSampleWarning"


def bootstrap_draws(df: pd.DataFrame, cluster: str | None, b: int, seed: int):
    """``(name, rows, units, draws)`` for models a, b and the pooled row, as
    ``forecast_scores(rng=seed)`` draws them: its rng spawns (main, filtered), main one
    stream per model by sorted rank, then the pooled row's; each stream draws
    ``integers(0, C, size=(b, C))`` over the C clusters in sorted order."""
    streams = np.random.default_rng(seed).spawn(2)[0].spawn(3)
    unit_col = "question" if cluster is None else cluster
    for name, stream in zip(("a", "b", "(all)"), streams, strict=True):
        part = df if name == "(all)" else df[df["model"] == name]
        units = part[unit_col].to_numpy()
        c = len(set(units))
        yield name, part, units, stream.integers(0, c, size=(b, c))


def _table(n_q: int = 12, seed: int = 3, clusters: int = 4, *,
           noise: tuple[float, float] = (0.1, 0.25), clip: float = 0.0) -> pd.DataFrame:
    """Two forecasters ``a`` and ``b`` of ``n_q`` questions with normal noise of sd
    ``noise``, forecasts clipped to [clip, 1 - clip]; ``topic`` clusters of questions."""
    gen = np.random.default_rng(seed)
    t = gen.uniform(0.05, 0.95, n_q)
    y = (gen.uniform(size=n_q) < t).astype(int)
    rows = []
    for m, sd in zip(("a", "b"), noise, strict=True):
        p = np.clip(t + gen.normal(0, sd, n_q), clip, 1 - clip)
        rows += [{"model": m, "question": f"q{i:02d}", "topic": f"c{i % clusters}",
                  "probability": p[i], "outcome": y[i]} for i in range(n_q)]
    return pd.DataFrame(rows)


@pytest.mark.filterwarnings(FEW_QUESTIONS)
@pytest.mark.parametrize("cluster", [None, "topic"])
def test_intervals_are_the_documented_bootstrap_t(cluster):
    """Rebuilt from the documented order: forecast_scores' rng spawns (main, filtered);
    main spawns one stream per model by sorted rank, then the pooled row's; each draws
    ``integers(0, C, size=(B, C))`` over the clusters coded in sorted order."""
    df = _table()
    b, level = 200, 0.9
    res = forecast_scores(df, cluster=cluster, n_resamples=b, confidence_level=level,
                          timestamp=None, rng=11)
    table = res.table.set_index("model")
    for name, part, units, draws in bootstrap_draws(df, cluster, b, 11):
        c = draws.shape[1]
        brier = ((part["probability"] - part["outcome"]) ** 2).to_numpy()
        lo, hi = bootstrap_t_by_loops(brier, units, draws, level)
        assert table.loc[name, "brier_ci_low"] == pytest.approx(max(lo, 0.0), rel=1e-9)
        assert table.loc[name, "brier_ci_high"] == pytest.approx(min(hi, 1.0), rel=1e-9)
        # accuracy: Wilson's score interval at n_eff = a (1 - a) / se^2, by hand
        acc = ((part["probability"] >= 0.5) == (part["outcome"] == 1)).to_numpy(float)
        sums = pd.Series(acc).groupby(units).sum().to_numpy()
        sizes = pd.Series(acc).groupby(units).size().to_numpy()
        a = acc.mean()
        se2 = c / (c - 1) * np.sum((sums - sizes * a) ** 2) / acc.size ** 2
        n_eff = min(a * (1 - a) / se2, acc.size) if 0 < a < 1 and se2 > 0 else c
        z = stats.norm.ppf(1 - (1 - level) / 2)
        centre = (a + z * z / (2 * n_eff)) / (1 + z * z / n_eff)
        half = z * np.sqrt(a * (1 - a) / n_eff + z * z / (4 * n_eff**2)) / (1 + z * z / n_eff)
        assert table.loc[name, "accuracy_ci_low"] == pytest.approx(centre - half, rel=1e-9)
        assert table.loc[name, "accuracy_ci_high"] == pytest.approx(centre + half, rel=1e-9)
    assert "bootstrap-t" in res.method
    assert res.cluster == cluster


def test_an_interval_stays_in_the_scores_range():
    """A model right on all but one question: its accuracy's (Wilson) interval and its
    Brier score's (bootstrap-t, cut at the range) stay in [0, 1]; a model right on every
    question still gets an interval below 1, not the point 1."""
    df = _table(n_q=15)
    df.loc[df["model"] == "a", "probability"] = df.loc[df["model"] == "a", "outcome"] * 0.98
    df.loc[df.index[0], "probability"] = 1.0 - df.loc[df.index[0], "outcome"]
    row = forecast_scores(df, timestamp=None, rng=0).table.set_index("model").loc["a"]
    assert 0.0 <= row["accuracy_ci_low"] <= row["accuracy"] <= row["accuracy_ci_high"] <= 1.0
    assert 0.0 <= row["brier_ci_low"] <= row["brier"] <= row["brier_ci_high"] <= 1.0
    df.loc[df.index[0], "probability"] = df.loc[df.index[0], "outcome"] * 0.98
    row = forecast_scores(df, timestamp=None, rng=0).table.set_index("model").loc["a"]
    assert row["accuracy"] == 1.0 == row["accuracy_ci_high"]
    assert row["accuracy_ci_low"] == pytest.approx(15 / (15 + stats.norm.ppf(0.975) ** 2))


@pytest.mark.filterwarnings(FEW_COMPARED)
def test_cluster_of_one_question_each_is_no_cluster():
    df = _table()
    plain = forecast_scores(df, timestamp=None, rng=5)
    same = forecast_scores(df.assign(unit=df["question"]), cluster="unit", timestamp=None,
                           rng=5)
    cols = [c for c in plain.table.columns if c != "model"]
    np.testing.assert_allclose(same.table[cols].to_numpy(float),
                               plain.table[cols].to_numpy(float), rtol=1e-12)
    a, b = plain.compare("a", "b", rng=2), same.compare("a", "b", rng=2)
    assert (a.pvalue, tuple(a.confidence_interval)) == (b.pvalue, tuple(b.confidence_interval))
    assert b.cluster == "unit" and "cluster" in same.per_forecast


@pytest.mark.filterwarnings(FEW_COMPARED)
@pytest.mark.filterwarnings(FEW_QUESTIONS)
def test_compare_flips_whole_clusters():
    """With 4 clusters (16 sign vectors, exact), the p-value is the enumeration over the
    clusters' summed differences, not over the 12 questions."""
    df = _table()
    res = forecast_scores(df, cluster="topic", timestamp=None, rng=0)
    cmp = res.compare("a", "b", n_resamples=16, rng=0)
    d = cmp.table.set_index("question")["difference"]
    sums = d.groupby(cmp.table.set_index("question")["cluster"]).sum().to_numpy()
    obs = abs(sums.sum())
    null = [abs(np.dot(s, sums)) for s in itertools.product((1, -1), repeat=4)]
    assert cmp.pvalue == pytest.approx(np.mean([t >= obs * (1 - 1e-9) for t in null]))
    assert cmp.n_units == 4 and cmp.n_obs == 12
    assert "'topic' clusters" in cmp.method
    # with 4 clusters the exact p-value is at least 2/16: no interval end is finite at 0.95
    assert cmp.pvalue >= 2 / 16
    assert np.isinf(cmp.confidence_interval.low) and np.isinf(cmp.confidence_interval.high)


def test_compare_agrees_with_a_t_test_on_many_questions():
    """On 400 questions the sign-flip p-value and the paired t-test's are close (both
    test the mean difference; the sign-flip is exact under symmetry)."""
    df = _table(n_q=400, seed=9)
    cmp = forecast_scores(df, timestamp=None, n_resamples=1, rng=0).compare(
        "a", "b", n_resamples=9999, rng=1)
    t = stats.ttest_1samp(cmp.table["difference"], 0.0)
    assert cmp.pvalue == pytest.approx(t.pvalue, abs=0.01)


@pytest.mark.parametrize(("change", "match"), [
    ({"cluster": "nope"}, "column 'nope'"),
    ({"cluster": "topic", "by": "cluster"}, "'by' parameter of forecast_scores"),
])
def test_cluster_validation(change, match):
    df = _table().assign(cluster=lambda d: d["model"])
    with pytest.raises(ValueError, match=match):
        forecast_scores(df, timestamp=None, **change)


def test_a_question_in_two_clusters_is_named():
    df = _table()
    df.loc[df.index[-1], "topic"] = "elsewhere"  # q11 of model b moves
    with pytest.raises(ValueError, match=r"Column 'topic' .* one value per question of "
                                         r"'question'.*2 offending rows"):
        forecast_scores(df, cluster="topic", timestamp=None)
    bad = _table()
    bad.loc[bad.index[0], "topic"] = None
    with pytest.raises(ValueError, match="topic"):
        forecast_scores(bad, cluster="topic", timestamp=None)


def test_question_scores_shares_forecast_scores_accuracy_interval():
    """On binary questions, question_scores' accuracy interval is forecast_scores' Wilson
    interval, the one the matrix benchmarks/validate_forecast_scores.py measures in its
    accuracy column (accuracy_by_horizon's is the same function, question_bootstrap_ci
    with proportion=True)."""
    from coherence import question_scores

    df = _table(n_q=40, seed=8)
    fs = forecast_scores(df, timestamp=None, rng=0).table.set_index("model")
    qs = question_scores(df.assign(type="binary", prediction=np.nan), rng=0)
    got = qs.table.set_index("model")
    for name in ("a", "b", "(all)"):
        assert got.loc[name, "accuracy"] == pytest.approx(fs.loc[name, "accuracy"])
        for end in ("accuracy_ci_low", "accuracy_ci_high"):
            assert got.loc[name, end] == pytest.approx(fs.loc[name, end], rel=1e-12)


@pytest.mark.filterwarnings(FEW_COMPARED)
@pytest.mark.filterwarnings(FEW_QUESTIONS)
@pytest.mark.parametrize("skew", [True, False])
def test_compare_all_tied_interval_inverts_the_test(skew):
    """Scores tied on every question: p = 1, and the interval is the test's inversion,
    unbounded where 5 or fewer questions leave the sign flips no p-value below 0.0625
    (it was [0, 0] whatever their number), the point 0 from 6 on."""
    for n_q, finite in ((3, False), (5, False), (6, True)):
        y = np.arange(n_q) % 2
        rows = [{"model": m, "question": f"q{i}", "outcome": y[i],
                 "probability": 0.5 + (0.1 + 0.05 * i + 0.1 * (m == "a")) * (y[i] - 0.5)}
                for m in "ab" for i in range(n_q)]
        res = forecast_scores(pd.DataFrame(rows), timestamp=None, n_resamples=9, rng=0)
        cmp = res.compare("a", "b", metric="accuracy", skew_correction=skew, rng=0)
        assert (cmp.table["difference"] == 0).all() and cmp.pvalue == 1.0
        ci = cmp.confidence_interval
        assert (ci.low, ci.high) == ((0.0, 0.0) if finite else (-np.inf, np.inf))


def test_one_model_pooled_row_is_the_model_row():
    # one model: the pooled forecasts are the model's, and its '(all)' row drew a second
    # bootstrap of them ([0.102, 0.222] against [0.120, 0.213] at 49 resamples)
    gen = np.random.default_rng(0)
    df = pd.DataFrame({"model": "m", "question": [f"q{i}" for i in range(30)],
                       "probability": gen.uniform(size=30).round(2),
                       "outcome": gen.integers(0, 2, 30)})
    res = forecast_scores(df, n_resamples=49, rng=1)
    table = res.table.set_index("model")
    pd.testing.assert_series_equal(table.loc["(all)"], table.loc["m"], check_names=False)
    assert (res.confidence_interval.low, res.confidence_interval.high) == (
        table.loc["m", "brier_ci_low"], table.loc["m", "brier_ci_high"])
    cal = res.calibration.set_index("model")
    pd.testing.assert_series_equal(cal.loc["(all)"], cal.loc["m"], check_names=False)
