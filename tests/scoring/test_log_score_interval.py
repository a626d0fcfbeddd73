"""forecast_scores' interval of the log score: the cluster bootstrap-t interval with its
pivot's quantiles widened by Student's factor sqrt(C / (C - 1)) t_nu / z, nu Satterthwaite's
degrees of freedom of the clusters' residuals (``heavy_tailed_mean_interval``), against
loops over the documented definition; its conventions, floor, clusters and a score that
does not vary."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st
from scipy import stats

from coherence import SmallSampleWarning
from coherence import forecast_scores
from coherence._resampling import cluster_mean_pivots
from coherence._resampling import heavy_tailed_mean_interval
from coherence._resampling import mean_interval
from tests._reference_bootstrap_t import bootstrap_t_by_loops
from tests._reference_bootstrap_t import heavy_tailed_by_loops
from tests.scoring.test_forecast_intervals import _table as forecasts_of_two
from tests.scoring.test_forecast_intervals import bootstrap_draws

#: forecast_scores warns of intervals on fewer than 6 questions (these have fewer)
FEW_QUESTIONS = "ignore:.*cover less than their level:coherence.SmallSampleWarning"

FLOOR = 1e-10


def _table(n_q: int = 14, seed: int = 5, clusters: int = 5) -> pd.DataFrame:
    """Two forecasters, one sharp (some forecasts near 0 and 1), one hedged."""
    return forecasts_of_two(n_q, seed, clusters, noise=(0.2, 0.05), clip=0.01)


def _log_scores(part: pd.DataFrame, convention: str = "ln") -> np.ndarray:
    q = np.where(part["outcome"] == 1, part["probability"], 1.0 - part["probability"])
    q = np.maximum(q.astype(float), FLOOR)
    return np.log(q) if convention == "ln" else -np.log2(q)


@pytest.mark.filterwarnings(FEW_QUESTIONS)
@pytest.mark.parametrize("convention", ["ln", "log2_loss"])
@pytest.mark.parametrize("cluster", [None, "topic"])
def test_log_interval_is_the_documented_one(cluster, convention):
    """Rebuilt from the documented generator order (forecast_scores' rng spawns (main,
    filtered); main one stream per model by sorted rank, then the pooled row's; each
    draws integers(0, C, size=(B, C)) over the clusters in sorted order); it holds the
    plain bootstrap-t interval, which the previous release gave."""
    df = _table()
    b, level = 300, 0.9
    res = forecast_scores(df, cluster=cluster, convention=convention, n_resamples=b,
                          confidence_level=level, timestamp=None, rng=7)
    top = -math.log(FLOOR) if convention == "ln" else -math.log2(FLOOR)
    bounds = (-top, 0.0) if convention == "ln" else (0.0, top)
    table = res.table.set_index("model")
    for name, part, units, draws in bootstrap_draws(df, cluster, b, 7):
        values = _log_scores(part, convention)
        lo, hi = heavy_tailed_by_loops(values, units, draws, level, bounds)
        got_lo, got_hi = table.loc[name, "log_score_ci_low"], table.loc[name, "log_score_ci_high"]
        assert got_lo == pytest.approx(lo, rel=1e-9)
        assert got_hi == pytest.approx(hi, rel=1e-9)
        plain_lo, plain_hi = bootstrap_t_by_loops(values, units, draws, level)
        assert got_lo <= max(plain_lo, bounds[0]) + 1e-12
        assert got_hi >= min(plain_hi, bounds[1]) - 1e-12
        assert (got_lo, got_hi) != pytest.approx((plain_lo, plain_hi), rel=1e-6)


def test_the_conventions_give_mirrored_intervals():
    """'log2_loss' is -ln / ln 2 row by row: the same draws give the mirrored interval,
    scaled by 1 / ln 2 (the factor depends on neither the sign nor the scale)."""
    df = _table(n_q=20, seed=9)
    ln = forecast_scores(df, n_resamples=400, timestamp=None, rng=3).table
    loss = forecast_scores(df, convention="log2_loss", n_resamples=400, timestamp=None,
                           rng=3).table
    k = math.log(2.0)
    np.testing.assert_allclose(loss["log_score_ci_low"], -ln["log_score_ci_high"] / k,
                               rtol=1e-9)
    np.testing.assert_allclose(loss["log_score_ci_high"], -ln["log_score_ci_low"] / k,
                               rtol=1e-9)
    # the other intervals are those of the previous release, untouched by the convention
    for col in ("brier_ci_low", "brier_ci_high", "accuracy_ci_low", "accuracy_ci_high"):
        np.testing.assert_array_equal(ln[col], loss[col])


@pytest.mark.filterwarnings(FEW_QUESTIONS)
def test_the_interval_does_not_depend_on_row_order_or_cluster_names():
    """Rows shuffled and clusters renamed in the same sorted order: the same interval."""
    df = _table(n_q=18, seed=2)
    first = forecast_scores(df, cluster="topic", n_resamples=300, timestamp=None,
                            rng=4).table.set_index("model")
    other = df.sample(frac=1.0, random_state=1).assign(
        topic=lambda d: "topic-" + d["topic"])
    second = forecast_scores(other, cluster="topic", n_resamples=300, timestamp=None,
                             rng=4).table.set_index("model")
    cols = ["log_score", "log_score_ci_low", "log_score_ci_high"]
    np.testing.assert_allclose(second.loc[first.index, cols], first[cols], rtol=1e-12)


def test_a_score_that_does_not_vary_gets_the_point_itself():
    """Every question gives a's outcome the probability 0.7: the log score is ln 0.7 on
    each, the interval is that point (and the warning says so), in both conventions."""
    df = _table(n_q=10)
    a = df["model"] == "a"
    df.loc[a, "probability"] = np.where(df.loc[a, "outcome"] == 1, 0.7, 0.3)
    for convention, point in (("ln", math.log(0.7)), ("log2_loss", -math.log2(0.7))):
        with pytest.warns(SmallSampleWarning, match="a log_score"):
            row = forecast_scores(df, convention=convention, n_resamples=200,
                                  timestamp=None, rng=0).table.set_index("model").loc["a"]
        assert row["log_score_ci_low"] == row["log_score_ci_high"] == pytest.approx(point)


def test_a_floored_forecast_keeps_the_interval_in_the_range():
    """A forecast of 0 for what happened scores ln 1e-10 = -23: the interval reaches down
    toward it but not past the floor, and still holds the mean."""
    df = _table(n_q=12, seed=8)
    first = df.index[(df["model"] == "a")][0]
    df.loc[first, "probability"] = 1.0 - df.loc[first, "outcome"]
    row = forecast_scores(df, n_resamples=400, timestamp=None,
                          rng=1).table.set_index("model").loc["a"]
    assert math.log(FLOOR) <= row["log_score_ci_low"] <= row["log_score"]
    assert row["log_score"] <= row["log_score_ci_high"] <= 0.0
    assert row["log_score_ci_low"] < row["log_score"] - 1.0


def test_the_helper_falls_back_to_mean_interval_without_a_standard_error():
    """se 0: the point; se undefined (one cluster): mean_interval's percentile interval."""
    reps = np.array([0.1, 0.2, 0.3])
    rse = np.zeros(3)
    resid = np.zeros(1)
    assert heavy_tailed_mean_interval(0.2, 0.0, reps, rse, resid, 0.9, (0, 1)) == (0.2, 0.2)
    assert (heavy_tailed_mean_interval(0.2, math.nan, reps, rse, resid, 0.9, (0, 1))
            == mean_interval(0.2, math.nan, reps, rse, 0.9, (0, 1)))


def test_the_factor_is_students_on_satterthwaites_degrees_of_freedom():
    """Normal-like residuals (kurtosis below C - 1's threshold): nu = C - 1, and the
    interval is the bootstrap-t's widened by sqrt(C / (C - 1)) t_{C-1} / z about the mean."""
    gen = np.random.default_rng(0)
    codes = np.repeat(np.arange(8), 1)
    values = np.array([-0.3, -0.5, -0.4, -0.6, -0.2, -0.45, -0.35, -0.55])
    mean, se, reps, rse = cluster_mean_pivots(values[:, None], codes, 500, gen)
    resid = values - values.mean()
    plain = mean_interval(float(mean[0]), float(se[0]), reps[:, 0], rse[:, 0], 0.95, (-23, 0))
    lo, hi = heavy_tailed_mean_interval(float(mean[0]), float(se[0]), reps[:, 0], rse[:, 0],
                                        resid, 0.95, (-23, 0))
    f = math.sqrt(8 / 7) * stats.t.ppf(0.975, 7) / stats.norm.ppf(0.975)
    assert lo == pytest.approx(mean[0] - f * (mean[0] - plain[0]), rel=1e-12)
    assert hi == pytest.approx(mean[0] + f * (plain[1] - mean[0]), rel=1e-12)


@st.composite
def _tables(draw):
    n_q = draw(st.integers(2, 12))
    probs = st.sampled_from([0.0, 0.01, 0.1, 0.3, 0.5, 0.7, 0.9, 0.99, 1.0])
    y = draw(st.lists(st.integers(0, 1), min_size=n_q, max_size=n_q))
    rows = []
    for m in ("a", "b"):
        p = draw(st.lists(probs, min_size=n_q, max_size=n_q))
        rows += [{"model": m, "question": i, "topic": i % 3, "probability": p[i],
                  "outcome": y[i]} for i in range(n_q)]
    return pd.DataFrame(rows)


@pytest.mark.filterwarnings("ignore:forecast_scores:coherence.SmallSampleWarning")
@settings(max_examples=40, deadline=None)
@given(_tables(), st.sampled_from(["ln", "log2_loss"]), st.sampled_from([None, "topic"]),
       st.sampled_from([1e-10, 1e-3]))
def test_the_interval_holds_the_mean_within_the_range(df, convention, cluster, floor):
    res = forecast_scores(df, convention=convention, cluster=cluster, floor=floor,
                          n_resamples=200, timestamp=None, rng=0)
    top = -math.log(floor) if convention == "ln" else -math.log2(floor)
    low_end, high_end = (-top, 0.0) if convention == "ln" else (0.0, top)
    for row in res.table.to_dict("records"):
        lo, mean, hi = row["log_score_ci_low"], row["log_score"], row["log_score_ci_high"]
        assert low_end <= lo <= hi <= high_end
        assert lo - 1e-9 <= mean <= hi + 1e-9


def test_the_log_recheck_measures_forecast_scores_interval(tmp_path):
    """``--log-recheck``: before and after on the same studies, the interval after being
    forecast_scores' own (the first study of a cell is checked against it); its JSON
    lands next to ``--out``, which stays unwritten."""
    from benchmarks import validate_forecast_scores as vfs

    out = tmp_path / "v.json"
    assert vfs.main(["--log-recheck", "--reps", "3", "--n-resamples", "49", "--only",
                     "noise 0.1 vs 0.1 n=20,outcome shocks shared by 10 questions (logit "
                     "sd 1) n=100", "--out", str(out)]) == 0
    assert not out.exists()
    cells = json.loads((tmp_path / "v_log.json").read_text())["cells"]
    assert [(c["n"], c["reps"]) for c in cells] == [(20, 3), (100, 3)]
    for c in cells:
        assert c["width_ratio"] >= 1.0
        assert c["after"]["k"] >= c["before"]["k"]
        assert c["before_matrix"]["n"] == 3
