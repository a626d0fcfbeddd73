"""brier_decomposition: the projection, the exact identity, coherent sets, validation."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import example
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence
from coherence import CHECKERS
from coherence import SmallSampleWarning
from coherence import brier_decomposition
from coherence import calibration_error
from coherence import forecast_scores
from coherence._probability._checks import possible_worlds
from coherence._resampling import cluster_draw_chunks
from coherence._resampling import cluster_weights
from coherence._scoring._decomposition import COMPONENTS
from coherence._scoring._decomposition import _component_intervals
from coherence._scoring._decomposition import _reliability_interval
from coherence._scoring._decomposition import _resolution_interval
from coherence._scoring._decomposition import decomposition_replicates
from coherence._scoring._decomposition import link_clusters
from coherence._scoring._decomposition import reliability_pivots
from coherence._scoring._decomposition import resolution_pivots
from coherence._scoring._decomposition import within_jackknife
from coherence._scoring._forecast import bin_index
from coherence._scoring._projection import brier_projection
from tests._reference_bootstrap_t import bootstrap_t_by_loops
from tests.scoring._helpers import DECOMPOSITION_TABLES
from tests.scoring._helpers import cluster_codes

UNCONDITIONAL = ("negation", "paraphrase", "consequence", "and", "or", "and_or", "but")
CONDITIONAL = ("cond", "cond_cond", "expected_evidence")


def _long(checker: str, forecasts: np.ndarray, world_index: np.ndarray) -> pd.DataFrame:
    """One row per forecast: set s, role, a question label per (set, role), its outcome."""
    worlds = possible_worlds(checker)
    rows = []
    for s, (f, w) in enumerate(zip(forecasts, world_index, strict=True)):
        for j, role in enumerate(CHECKERS[checker]):
            v = worlds[w, j]
            rows.append({"set": s, "role": role, "question": f"{s}:{role}",
                         "probability": float(f[j]), "outcome": np.nan if v < 0 else float(v)})
    return pd.DataFrame(rows)


def _coherent(checker: str, mu: np.ndarray) -> np.ndarray:
    worlds = possible_worlds(checker)
    t = mu @ (worlds == 1)
    m = mu @ (worlds >= 0)
    return np.where(m > 0, t / np.where(m > 0, m, 1.0), 0.5)


def _brier_in_world(f: np.ndarray, world: np.ndarray) -> float:
    scored = world >= 0
    return float(np.sum((f[scored] - world[scored]) ** 2))


def _objective(worlds: np.ndarray, p: np.ndarray, mu: np.ndarray) -> np.ndarray:
    """The dual objective at each row of ``mu``: an upper bound of the best guarantee."""
    t, m = mu @ (worlds == 1), mu @ (worlds >= 0)
    terms = np.where(m > 0, (t - p * m) ** 2 / np.where(m > 0, m, 1.0), 0.0)
    return np.asarray(terms.sum(axis=1))


# --------------------------------------------------------------------------- projection
def test_negation_and_paraphrase_projections_by_hand():
    f = np.array([[0.7, 0.5], [0.2, 0.9], [1.0, 1.0]])
    q = brier_projection(possible_worlds("negation"), f)
    expected_p = np.clip((f[:, 0] - f[:, 1] + 1) / 2, 0, 1)  # onto the segment P + not_P = 1
    np.testing.assert_allclose(q[:, 0], expected_p, atol=1e-15)
    np.testing.assert_allclose(q[:, 1], 1 - expected_p, atol=1e-15)
    q = brier_projection(possible_worlds("paraphrase"), f)
    np.testing.assert_allclose(q[:, 0], f.mean(axis=1), atol=1e-15)
    np.testing.assert_allclose(q[:, 1], f.mean(axis=1), atol=1e-15)


def test_consequence_moves_only_a_violating_pair():
    f = np.array([[0.3, 0.6], [0.8, 0.4]])
    q = brier_projection(possible_worlds("consequence"), f)
    np.testing.assert_array_equal(q[0], f[0])
    np.testing.assert_allclose(q[1], [0.6, 0.6], atol=1e-15)


@pytest.mark.parametrize("checker", CONDITIONAL)
def test_conditional_projection_beats_a_grid_of_distributions(checker):
    worlds = possible_worlds(checker)
    rng = np.random.default_rng(4)
    p = rng.uniform(0.05, 0.95, size=len(CHECKERS[checker]))
    q = brier_projection(worlds, p[None, :])[0]
    grid = rng.dirichlet(np.full(len(worlds), 0.5), size=200_000)
    best = float(_objective(worlds, p, grid).min())
    # the value reached: the guaranteed Brier reduction of q, in its worst world; no
    # forecast guarantees more than the dual minimum (<= best), and q reaches it
    reached = min(_brier_in_world(p, w) - _brier_in_world(q, w) for w in worlds)
    assert reached <= best + 1e-12
    # and no forecast found by a direct search of the max-min guarantees more
    from scipy.optimize import minimize

    def worst(x: np.ndarray) -> float:
        x = np.clip(x, 0, 1)
        return -min(_brier_in_world(p, w) - _brier_in_world(x, w) for w in worlds)

    for start in (p, q, np.full_like(p, 0.5)):
        direct = minimize(worst, start, method="Nelder-Mead",
                          options={"xatol": 1e-12, "fatol": 1e-14, "maxiter": 20_000})
        assert reached >= -direct.fun - 1e-8


@given(st.sampled_from(UNCONDITIONAL + CONDITIONAL),
       st.lists(st.floats(0, 1), min_size=4, max_size=4))
# P(A and B) 1e-9 above P(A) = P(B) = 0: projected to the vertex 0 (Brier 3 where all
# three are true, not 2.999999998), since faces closer by 3e-19 counted as tied
@example("and", [0.0, 0.0, 1e-9, 0.0])
def test_projection_is_coherent_and_never_raises_the_brier_score(checker, values):
    worlds = possible_worlds(checker)
    k = worlds.shape[1]
    p = np.array(values[:k])
    q = brier_projection(worlds, p[None, :])[0]
    assert np.all((q >= 0) & (q <= 1))
    # coherent: the projection of the projection is itself, bit for bit
    np.testing.assert_array_equal(brier_projection(worlds, q[None, :])[0], q)
    tol = 1e-12 if checker in UNCONDITIONAL else 1e-6
    for w in worlds:
        assert _brier_in_world(q, w) <= _brier_in_world(p, w) + tol


@given(st.sampled_from(UNCONDITIONAL + CONDITIONAL), st.integers(0, 2**32 - 1))
def test_coherent_sets_are_left_unchanged(checker, seed):
    worlds = possible_worlds(checker)
    rng = np.random.default_rng(seed)
    mu = rng.dirichlet(np.full(len(worlds), 0.7), size=5)
    if seed % 3 == 0:
        mu[0] = np.eye(len(worlds))[seed % len(worlds)]  # a vertex: certain forecasts
    f = np.array([_coherent(checker, m) for m in mu])
    np.testing.assert_array_equal(brier_projection(worlds, f), f)


# --------------------------------------------------------------------------- the identity
@given(st.sampled_from(UNCONDITIONAL + CONDITIONAL), st.integers(0, 2**32 - 1),
       st.integers(1, 12))
def test_components_sum_to_the_brier_score(checker, seed, n_bins):
    rng = np.random.default_rng(seed)
    n_sets, k = 6, len(CHECKERS[checker])
    f = rng.uniform(0, 1, size=(n_sets, k)).round(rng.integers(1, 4))
    data = _long(checker, f, rng.integers(0, len(possible_worlds(checker)), n_sets))
    with pytest.warns(SmallSampleWarning):
        res = brier_decomposition(data, checker=checker, n_bins=n_bins, n_resamples=20,
                                  rng=seed)
    parts = (res.incoherence + res.reliability - res.resolution + res.uncertainty
             + res.within_bin)
    assert abs(parts - res.brier) <= 1e-12
    assert abs(res.coherent_brier + res.incoherence - res.brier) <= 1e-12
    scored = data["outcome"].notna()
    assert res.brier == pytest.approx(float(np.mean(
        (data.loc[scored, "probability"] - data.loc[scored, "outcome"]) ** 2)), abs=1e-15)
    assert res.incoherence >= -1e-6  # the projection never raises a set's score
    # every bootstrap replicate satisfies the identity too (a row of zero weights, which
    # no bootstrap draws, is 0 / 0: NaN, left out)
    with np.errstate(invalid="ignore", divide="ignore"):
        boot = decomposition_replicates(
            np.random.default_rng(seed).integers(0, 3, size=(5, res.n_clusters)).astype(float),
            res.per_forecast["probability"].to_numpy(), res.per_forecast["projected"].to_numpy(),
            res.per_forecast["outcome"].to_numpy(),
            link_clusters(res.per_forecast["question"].to_numpy(),
                          res.per_forecast["set"].to_numpy()),
            n_bins)
    ok = np.isfinite(boot[:, 0])
    recon = boot[:, 1] + boot[:, 3] - boot[:, 4] + boot[:, 5] + boot[:, 6]
    np.testing.assert_allclose(recon[ok], boot[ok, 0], atol=1e-12)


@given(st.sampled_from(UNCONDITIONAL + CONDITIONAL), st.integers(0, 2**32 - 1))
def test_incoherence_is_zero_for_coherent_forecasts(checker, seed):
    worlds = possible_worlds(checker)
    rng = np.random.default_rng(seed)
    mu = rng.dirichlet(np.full(len(worlds), 0.7), size=25)
    f = np.array([_coherent(checker, m) for m in mu])
    data = _long(checker, f, rng.integers(0, len(worlds), len(f)))
    res = brier_decomposition(data, checker=checker, n_resamples=20, rng=0)
    assert res.incoherence == 0.0
    assert res.n_incoherent == 0
    lo, hi = res.table.set_index("component").loc["incoherence", ["ci_low", "ci_high"]]
    assert lo == hi == 0.0
    np.testing.assert_array_equal(res.per_forecast["projected"], res.per_forecast["probability"])


def test_point_estimate_equals_replicate_with_unit_weights():
    rng = np.random.default_rng(0)
    f = rng.uniform(size=(40, 3))
    data = _long("and", f, rng.integers(0, 4, 40))
    res = brier_decomposition(data, checker="and", n_bins=7, n_resamples=30, rng=1)
    pf = res.per_forecast
    clusters = link_clusters(pf["question"].to_numpy(), pf["set"].to_numpy())
    unit = decomposition_replicates(np.ones((1, int(clusters.max()) + 1)),
                                    pf["probability"].to_numpy(), pf["projected"].to_numpy(),
                                    pf["outcome"].to_numpy(), clusters, 7)[0]
    values = res.table.set_index("component")["value"]
    np.testing.assert_allclose(unit, values[list(COMPONENTS)].to_numpy(), atol=1e-14)
    assert res.n_incoherent > 0
    assert res.incoherence > 0
    assert res.table["ci_low"].le(res.table["value"] + 1e-12).all()


def test_without_a_checker_matches_the_murphy_decomposition_of_forecast_scores():
    rng = np.random.default_rng(2)
    n = 80
    data = pd.DataFrame({"model": "m", "question": np.arange(n),
                         "probability": rng.uniform(size=n),
                         "outcome": rng.integers(0, 2, n)})
    res = brier_decomposition(data, n_bins=5, n_resamples=50, rng=0)
    cal = forecast_scores(data, n_bins=5, n_resamples=10, rng=0).calibration.iloc[-1]
    for name in ("brier", "reliability", "resolution", "uncertainty", "within_bin"):
        assert getattr(res, name) == pytest.approx(float(cal[name]), abs=1e-14)
    assert res.incoherence == 0.0
    assert res.checker is None and res.n_sets == 0 and res.n_clusters == n


def test_sets_sharing_a_question_resample_together():
    clusters = link_clusters(np.array(["a", "b", "a", "c", "d", "e"], dtype=object),
                             np.array([0, 0, 1, 1, 2, 2], dtype=object))
    assert clusters[0] == clusters[1] == clusters[2] == clusters[3]
    assert clusters[4] == clusters[5] != clusters[0]


def test_annulled_conditional_questions_are_projected_but_not_scored():
    data = _long("cond", np.array([[0.3, 0.9, 0.5], [0.6, 0.5, 0.4]]), np.array([2, 0]))
    with pytest.warns(SmallSampleWarning):
        res = brier_decomposition(data, checker="cond", n_resamples=20, rng=0)
    assert res.n_obs == 5  # Q_given_P of the first set is annulled
    assert res.n_sets == 2 and res.n_incoherent == 2


def test_bootstrap_interval_covers_the_brier_score_of_a_population():
    # 60 questions, forecasts and outcomes drawn afresh: the interval should cover the
    # population Brier score (1/6 + 1/12 for uniform p and y ~ Bernoulli(p)) most of the time
    hits = 0
    for seed in range(40):
        rng = np.random.default_rng(seed)
        p = rng.uniform(size=60)
        data = pd.DataFrame({"question": np.arange(60), "probability": p,
                             "outcome": (rng.uniform(size=60) < p).astype(float)})
        res = brier_decomposition(data, n_resamples=400, rng=seed)
        lo, hi, _ = res.confidence_interval
        hits += lo <= 1 / 6 <= hi
    assert hits >= 34


def test_brier_and_incoherence_intervals_are_bootstrap_t_of_the_decomposition_draws():
    """The Brier scores' and the incoherence's intervals: the cluster bootstrap-t of the
    mean per-forecast score, rebuilt by loops from the decomposition's draws (each
    linked cluster one unit), cut at [0, 1]."""
    data = _long("negation", np.random.default_rng(5).uniform(size=(30, 2)),
                 np.random.default_rng(6).integers(0, 2, 30))
    res = brier_decomposition(data, checker="negation", n_resamples=99, rng=2)
    draws = np.concatenate([d for _, _, d in cluster_draw_chunks(res.n_clusters, 99,
                                                                  np.random.default_rng(2))])
    per = res.per_forecast
    units = link_clusters(per["question"].to_numpy(dtype=object),
                          per["set"].to_numpy(dtype=object))
    table = res.table.set_index("component")
    for name, values in (("brier", per["brier"]),
                         ("incoherence", per["brier"] - per["projected_brier"]),
                         ("coherent_brier", per["projected_brier"])):
        lo, hi = bootstrap_t_by_loops(values.to_numpy(), units, draws, 0.95)
        assert table.loc[name, "ci_low"] == pytest.approx(max(lo, 0.0), rel=1e-9, abs=1e-15)
        assert table.loc[name, "ci_high"] == pytest.approx(min(hi, 1.0), rel=1e-9)
    assert "bootstrap-t" in res.method


def test_reliability_interval_holds_calibration_errors_after_the_decomposition_draws():
    """The reliability's interval holds calibration_error's (equal-width bins, the
    resampling clusters) drawn from the generator after the decomposition's own draws:
    it is their hull with a bootstrap-t interval (test_decomposition_reliability.py)."""
    rng = np.random.default_rng(3)
    n = 80
    p = rng.uniform(size=n)
    data = pd.DataFrame({"question": np.arange(n), "probability": p,
                         "outcome": (rng.uniform(size=n) < p**1.3).astype(float)})
    res = brier_decomposition(data, n_resamples=99, rng=4)
    gen = np.random.default_rng(4)
    for _ in cluster_draw_chunks(n, 99, gen):
        pass
    ce = calibration_error(data.assign(cluster=np.arange(n)), binning="equal_width",
                           group="cluster", n_resamples=99, rng=gen)
    row = res.table.set_index("component").loc["reliability"]
    assert row["ci_low"] <= ce.confidence_interval.low
    assert row["ci_high"] >= ce.confidence_interval.high
    assert row["value"] == pytest.approx(ce.plugin, abs=1e-15)  # the Murphy term


@settings(max_examples=40)
@given(boot=st.lists(st.lists(st.floats(-1, 1), min_size=7, max_size=7), min_size=2,
                     max_size=25),
       mean_outcome=st.lists(st.floats(0, 1), min_size=2, max_size=25))
def test_component_intervals_against_the_written_rules(boot, mean_outcome):
    boot_a = np.array(boot)
    got = _component_intervals(boot_a, np.array(mean_outcome), 0.9)
    for j, name in enumerate(COMPONENTS):
        if name != "uncertainty":
            assert got[name] == pytest.approx(tuple(np.quantile(boot_a[:, j], [0.05, 0.95])),
                                              abs=1e-12)
    a, b = np.quantile(mean_outcome, [0.05, 0.95])
    want_hi = 0.25 if a <= 0.5 <= b else max(a * (1 - a), b * (1 - b))
    assert got["uncertainty"] == pytest.approx((min(a * (1 - a), b * (1 - b)), want_hi),
                                               abs=1e-12)


def _resolution_by_loops(q, y, clusters, n_bins):
    """(plug-in, debiased, se) of the resolution by loops over bins and clusters."""
    k = [min(int(v * n_bins), n_bins - 1) for v in q]
    n = len(q)
    ybar = sum(y) / n
    groups = sorted(set(clusters))

    def robust(rows, mean):
        units = sorted({clusters[i] for i in rows})
        if len(units) < 2:
            return 0.0
        ss = sum((sum(y[i] for i in rows if clusters[i] == c)
                  - sum(1 for i in rows if clusters[i] == c) * mean) ** 2 for c in units)
        return len(units) / (len(units) - 1) * ss / len(rows) ** 2

    plug = corr = quad = 0.0
    t = dict.fromkeys(groups, 0.0)
    freq = {}
    for b in sorted(set(k)):
        rows = [i for i in range(n) if k[i] == b]
        f = freq[b] = sum(y[i] for i in rows) / len(rows)
        v = robust(rows, f)
        plug += len(rows) / n * (f - ybar) ** 2
        corr += len(rows) / n * v
        quad += (len(rows) / n) ** 2 * 2 * v * v
        for i in rows:
            t[clusters[i]] += 2 / n * (f - ybar) * (y[i] - f)
    for i in range(n):  # the bins' shares move too
        t[clusters[i]] += ((freq[k[i]] - ybar) ** 2 - plug) / n
    linear = len(groups) / (len(groups) - 1) * sum(x * x for x in t.values())
    return plug, plug - corr + robust(list(range(n)), ybar), (linear + quad) ** 0.5


def _within_by_loops(q, y, n_bins):
    """(plug-in, debiased) of the within-bin part by loops over bins and forecasts."""
    k = [min(int(v * n_bins), n_bins - 1) for v in q]
    n = len(q)
    u = [0.0] * n
    debiased = 0.0
    for b in sorted(set(k)):
        rows = [i for i in range(n) if k[i] == b]
        qb = sum(q[i] for i in rows) / len(rows)
        yb = sum(y[i] for i in rows) / len(rows)
        for i in rows:
            u[i] = (q[i] - qb) ** 2 - 2 * (q[i] - qb) * (y[i] - yb)
        if len(rows) > 1:
            debiased += sum(u[i] for i in rows) / (len(rows) - 1) * len(rows) / n
    return sum(u) / n, debiased


@settings(max_examples=30, deadline=None)
@given(data=DECOMPOSITION_TABLES, n_bins=st.integers(1, 6))
def test_resolution_pivots_agree_with_loops(data, n_bins):
    """The resolution's (plug-in, debiased, se) against loops over bins and clusters; the
    plug-in is the Murphy decomposition's term."""
    q, y, g = (np.array(v) for v in data)
    codes = cluster_codes(g)
    ones = np.ones((1, int(codes.max()) + 1))
    got = resolution_pivots(ones, q, y.astype(float), codes, n_bins)[0]
    want = _resolution_by_loops(list(q), list(y.astype(float)), list(codes), n_bins)
    np.testing.assert_allclose(got, want, atol=1e-12)
    murphy = decomposition_replicates(ones, q, q, y.astype(float), codes, n_bins)[0, 4]
    assert got[0] == pytest.approx(murphy, abs=1e-12)


@settings(max_examples=30, deadline=None)
@given(data=DECOMPOSITION_TABLES, n_bins=st.integers(1, 6))
def test_within_jackknife_agrees_with_loops(data, n_bins):
    """The within-bin part's debiased value and its delete-one-cluster values against
    loops over the table with each cluster's rows removed (the brute-force jackknife);
    the plug-in of the loops is the Murphy decomposition's term."""
    q, y, g = (np.array(v) for v in data)
    y = y.astype(float)
    codes = cluster_codes(g)
    debiased, loo = within_jackknife(q, y, codes, n_bins)
    plug, want = _within_by_loops(list(q), list(y), n_bins)
    assert debiased == pytest.approx(want, abs=1e-12)
    ones = np.ones((1, int(codes.max()) + 1))
    murphy = decomposition_replicates(ones, q, q, y, codes, n_bins)[0, 6]
    assert plug == pytest.approx(murphy, abs=1e-12)
    for c in range(int(codes.max()) + 1):
        keep = codes != c
        assert loo[c] == pytest.approx(_within_by_loops(list(q[keep]), list(y[keep]),
                                                        n_bins)[1], abs=1e-12)


def _plugin_resolution(w, q, y, clusters, n_bins):
    return resolution_pivots(w[None, :], q, y, clusters, n_bins)[0, 0]


@pytest.mark.parametrize("separated", [False, True])
def test_resolution_se_is_the_delta_method_of_the_cluster_weights(separated):
    """The standard error's linear part is the derivative of the plug-in resolution in
    each cluster's weight (a central difference: the brute-force reference), the shares'
    movement included; a forecaster who separates the outcomes keeps a positive se."""
    rng = np.random.default_rng(5)
    g = np.repeat(np.arange(25), rng.integers(1, 4, size=25))
    q = rng.uniform(size=g.size)
    y = ((q > 0.5) if separated else (rng.uniform(size=g.size) < q)).astype(float)
    n_bins, w, h = 10, np.ones(25), 1e-6
    grad = np.array([(_plugin_resolution(w + h * e, q, y, g, n_bins)
                      - _plugin_resolution(w - h * e, q, y, g, n_bins)) / (2 * h)
                     for e in np.eye(25)])
    plug, _, se = resolution_pivots(w[None, :], q, y, g, n_bins)[0]
    counts = np.bincount(g)
    freq_var = 0.0  # the quadratic part: sum_k (n_k/n)^2 2 v_k^2
    codes = bin_index(q, n_bins)
    for b in np.unique(codes):
        rows = codes == b
        f = y[rows].mean()
        units = np.unique(g[rows])
        if len(units) > 1:
            ss = sum((y[rows & (g == c)].sum() - np.sum(rows & (g == c)) * f) ** 2
                     for c in units)
            v_k = len(units) / (len(units) - 1) * ss / rows.sum() ** 2
            freq_var += (rows.sum() / g.size) ** 2 * 2 * v_k * v_k
    want = np.sqrt(25 / 24 * np.sum(grad**2) + freq_var)
    assert counts.sum() == g.size and se == pytest.approx(want, rel=1e-6)
    assert se > 0
    if separated:  # every bin holds one outcome: the resolution is the uncertainty
        assert plug == pytest.approx(y.mean() * (1 - y.mean()))


def test_separated_outcomes_get_an_interval_around_the_resolution():
    """A forecaster whose bins each hold one outcome: the resolution equals the
    uncertainty and varies with the mean outcome; its interval has width and never
    claims more than 1/4 by much (it was a point above the estimate, [0.254, 0.254])."""
    rng = np.random.default_rng(3)
    q = np.concatenate([rng.uniform(0.0, 0.45, 20), rng.uniform(0.6, 1.0, 25)])
    y = (q > 0.5).astype(float)
    res = brier_decomposition({"question": np.arange(45), "probability": q, "outcome": y},
                              n_resamples=999, rng=0)
    row = res.table.set_index("component").loc["resolution"]
    unc = res.table.set_index("component").loc["uncertainty"]
    assert row["value"] == pytest.approx(unc["value"])
    assert row["ci_high"] - row["ci_low"] > 0.02
    assert row["ci_low"] < row["value"] < row["ci_high"]


def test_pivot_weights_count_as_copies_of_clusters():
    """The resolution's pivots under cluster weights are those of the table with each
    cluster copied as often as drawn."""
    pivots = resolution_pivots
    rng = np.random.default_rng(2)
    g = np.repeat(np.arange(6), [1, 2, 3, 1, 2, 2])
    q, y = rng.uniform(size=g.size), (rng.uniform(size=g.size) < 0.5).astype(float)
    w_c = np.array([2.0, 0.0, 1.0, 3.0, 1.0, 1.0])
    got = pivots(w_c[None, :], q, y, g, 4)[0]
    rows = np.concatenate([np.flatnonzero(g == c) for c in range(6) for _ in range(int(w_c[c]))])
    ids = np.concatenate([[c * 10 + r] * int(np.sum(g == c)) for c in range(6)
                          for r in range(int(w_c[c]))])
    codes = np.unique(ids, return_inverse=True)[1]
    want = pivots(np.ones((1, int(codes.max()) + 1)), q[rows], y[rows], codes, 4)[0]
    np.testing.assert_allclose(got, want, atol=1e-12)


def test_a_single_forecast_has_no_reliability_interval():
    data = pd.DataFrame({"question": ["a"], "probability": [0.3], "outcome": [1.0]})
    with pytest.warns(SmallSampleWarning):
        table = brier_decomposition(data, n_resamples=20, rng=0).table.set_index("component")
    assert np.isnan(table.loc["reliability", ["ci_low", "ci_high"]].astype(float)).all()
    assert table.loc["reliability", "value"] == pytest.approx(0.49)


def test_projections_stay_in_0_1_and_get_a_reliability_interval():
    # the solvers' rounding put a projection at 1 + 2e-16 (the 'but' set below, in one
    # test order); brier_projection clips it, so the reliability interval, which refuses
    # probabilities outside [0, 1], takes every projection
    q = brier_projection(possible_worlds("but"), np.array([[0.78125, 0.875, 0.875]]))
    assert np.all((q >= 0.0) & (q <= 1.0))
    q = np.concatenate([q[0], [1.0, 0.5, 0.2, 0.0]])
    y = np.array([1.0, 0.0, 1.0, 0.0, 1.0, 0.0, 1.0])
    pivots = np.vstack([reliability_pivots(cluster_weights(draws, 7), q, y, np.arange(7), 10)
                        for _, _, draws in cluster_draw_chunks(7, 50, np.random.default_rng(1))])
    low, high = _reliability_interval(q, y, np.arange(7), 10, 50, 0.95,
                                      np.random.default_rng(0), pivots[:, 1:])
    assert np.isfinite([low, high]).all() and low <= high


def test_resolution_interval_is_the_bootstrap_t_formula():
    pivots = np.array([[0.05, 0.01], [0.07, 0.02], [0.02, 0.0], [0.06, 0.015]])
    lo, hi = _resolution_interval(np.array([0.06, 0.04, 0.01]), pivots, 0.5)
    t = (pivots[:, 0] - 0.06) / np.array([0.01, 0.02, 0.01, 0.015])
    t_lo, t_hi = np.quantile(t, [0.25, 0.75])
    assert (lo, hi) == pytest.approx((0.04 - t_hi * 0.01, 0.04 - t_lo * 0.01))
    # a resample's se of 0 (or within rounding of it) takes the sample's in its pivot
    tiny = pivots.copy()
    tiny[2, 1] = 1e-17
    assert _resolution_interval(np.array([0.06, 0.04, 0.01]), tiny, 0.5) == (lo, hi)
    # the sample's se of 0: the resamples' percentile interval; one bin: 0 throughout
    assert _resolution_interval(np.array([0.06, 0.04, 0.0]), pivots, 0.5) == pytest.approx(
        tuple(np.quantile(pivots[:, 0], [0.25, 0.75])))
    assert _resolution_interval(np.zeros(3), np.zeros((4, 2)), 0.5) == (0.0, 0.0)
    # the upper end is cut at 1/4, the largest resolution there is
    assert _resolution_interval(np.array([0.24, 0.245, 0.05]), pivots, 0.95)[1] == 0.25


# --------------------------------------------------------------------------- validation
def _valid() -> pd.DataFrame:
    return _long("negation", np.array([[0.7, 0.5]] * 25), np.zeros(25, dtype=int))


@pytest.mark.parametrize(("change", "kwargs", "match"), [
    (lambda d: d, {"checker": "nand"}, "'checker' parameter"),
    (lambda d: d.assign(role=d["role"].replace("not_P", "Q")), {"checker": "negation"},
     "Column 'role'.*negation"),
    (lambda d: d.iloc[1:], {"checker": "negation"}, "complete sets"),
    (lambda d: d.assign(role="P"), {"checker": "negation"}, "once"),
    (lambda d: d.assign(outcome=1.0), {"checker": "negation"}, "possible world"),
    (lambda d: d.assign(outcome=0.5), {"checker": "negation"}, "0 or 1"),
    (lambda d: d.assign(probability=1.5), {"checker": "negation"}, "probabilities in"),
    (lambda d: d.assign(question="q", outcome=[0.0, 1.0] * 25), {}, "same on every row"),
    (lambda d: d.assign(outcome=np.nan), {}, "NaN or missing"),
    (lambda d: d.drop(columns="set"), {"checker": "negation"}, "set"),
])
def test_validation_messages(change, kwargs, match):
    with pytest.raises(ValueError, match=match):
        brier_decomposition(change(_valid()), n_resamples=10, rng=0, **kwargs)


def test_type_errors_and_resampling_checks():
    with pytest.raises(TypeError, match="'question' parameter"):
        brier_decomposition(_valid(), question=3, rng=0)
    with pytest.raises(ValueError, match="n_bins"):
        brier_decomposition(_valid(), n_bins=0, rng=0)
    with pytest.raises(ValueError, match="n_resamples"):
        brier_decomposition(_valid(), n_resamples=0, rng=0)


def test_few_clusters_warn_at_the_caller():
    data = _long("negation", np.array([[0.7, 0.5]] * 5), np.zeros(5, dtype=int))
    with pytest.warns(SmallSampleWarning) as record:
        brier_decomposition(data, checker="negation", n_resamples=10, rng=0)
    assert record[0].filename == __file__


def test_summary_and_frame():
    with pytest.warns(SmallSampleWarning, match="point itself"):  # 25 copies of one set
        res = brier_decomposition(_valid(), checker="negation", n_resamples=20, rng=0)
    assert "incoherence" in res.summary()
    with pytest.warns(DeprecationWarning, match=r"components .* BrierDecompositionResult\.table"):
        assert res.components is res.table
    assert list(res.to_frame().columns) == list(res.frame_columns())
    assert isinstance(res, coherence.BrierDecompositionResult)


def test_bool_outcomes_read_as_0_and_1():
    """A bool outcome column (numpy or nullable, pd.NA where a conditional question is
    annulled) is the 0/1 one; it was refused as not numeric."""
    rng = np.random.default_rng(4)
    p = rng.uniform(size=30).round(2)
    df = pd.DataFrame({"question": [f"q{i}" for i in range(30)], "probability": p,
                       "outcome": (rng.uniform(size=30) < p).astype(int)})
    want = brier_decomposition(df, n_resamples=50, rng=0).table
    for dtype in (bool, "boolean"):
        got = brier_decomposition(df.astype({"outcome": dtype}), n_resamples=50, rng=0)
        pd.testing.assert_frame_equal(got.table, want)
    gaps = df.astype({"outcome": "boolean"})
    gaps.loc[3, "outcome"] = pd.NA
    with pytest.raises(ValueError, match=r"'outcome'.*row 3"):
        brier_decomposition(gaps, n_resamples=50, rng=0)
    rows = []
    for s, (a, b, y) in enumerate([(0.7, 0.6, True), (0.4, 0.3, False)]):
        rows += [{"set": s, "role": "P", "question": f"p{s}", "probability": a, "outcome": y},
                 {"set": s, "role": "not_P", "question": f"n{s}", "probability": b,
                  "outcome": not y}]
    sets = pd.DataFrame(rows)
    with pytest.warns(SmallSampleWarning):
        got = brier_decomposition(sets, checker="negation", n_resamples=50, rng=0)
    with pytest.warns(SmallSampleWarning):
        want = brier_decomposition(sets.astype({"outcome": int}), checker="negation",
                                   n_resamples=50, rng=0)
    pd.testing.assert_frame_equal(got.table, want.table)
