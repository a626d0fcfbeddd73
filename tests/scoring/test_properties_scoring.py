"""Hypothesis properties of the values of accuracy_by_horizon, source_precision and
smooth_ece: brute-force references written here from the documented definitions, bounds,
symmetries and invariance to the order of the rows and to relabelling.
"""

from __future__ import annotations

import math
import warnings

import numpy as np
import pandas as pd
import pytest
from hypothesis import assume
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import coherence
from tests._reference_bootstrap_t import fraction_interval_by_hand

# --------------------------------------------------------------------------- accuracy_by_horizon
#: the documented display order of the horizon labels, then a label of the user's own
_ORDER = ["early", "mid", "late", "near_resolution", "real_time", "other"]
_HORIZONS = [*_ORDER, "custom"]

_horizon_rows = st.lists(
    st.tuples(st.sampled_from(["m1", "m2", "m3"]), st.integers(0, 5),
              st.sampled_from(_HORIZONS),
              st.one_of(st.sampled_from([0.0, 1.0]), st.floats(0.0, 1.0))),
    min_size=1, max_size=25)


def _horizon_frame(rows: list[tuple[str, int, str, float]]) -> pd.DataFrame:
    # a forecast id keeps forecasts alike in every other column apart (deliberate repeats)
    return pd.DataFrame({"model": [r[0] for r in rows], "question": [f"q{r[1]}" for r in rows],
                         "horizon": [r[2] for r in rows], "correct": [r[3] for r in rows],
                         "forecast": range(len(rows))})


def _cells(table: pd.DataFrame, by: str = "model") -> dict[tuple[str, str], dict]:
    return {(r[by], r["horizon"]): r for r in table.to_dict("records")}


def _wilson_by_hand(vals: list[tuple[object, float]], z: float = 1.959963984540054
                    ) -> tuple[float, float]:
    """Wilson's 95% interval of the mean of (question, value) pairs at n_eff = a(1 - a) /
    se^2, se the cluster-robust standard error over questions (the number of questions
    where a is 0 or 1 or se is 0 or undefined), by loops."""
    questions = sorted({q for q, _ in vals}, key=str)
    n = len(vals)
    a = sum(c for _, c in vals) / n
    c_n = len(questions)
    ss = sum((sum(c for q2, c in vals if q2 == q) - sum(1 for q2, _ in vals if q2 == q) * a)
             ** 2 for q in questions)
    se2 = c_n / (c_n - 1) * ss / n**2 if c_n > 1 else math.nan
    n_eff = min(a * (1 - a) / se2, n) if c_n > 1 and se2 > 0 and 0 < a < 1 else c_n
    centre = (a + z * z / (2 * n_eff)) / (1 + z * z / n_eff)
    half = z * math.sqrt(a * (1 - a) / n_eff + z * z / (4 * n_eff**2)) / (1 + z * z / n_eff)
    return centre - half, centre + half


def _fraction_interval(vals: list[tuple[object, float]]) -> tuple[float, float]:
    """The interval of a mean of fractions over questions (``kind='fraction'``, whose
    kernel has its own brute-force tests)."""
    from coherence._resampling import cluster_mean_interval

    qs = np.array([str(q) for q, _ in vals], dtype=object)
    return cluster_mean_interval(np.array([c for _, c in vals]), qs, 1, 0.95,
                                 np.random.default_rng(0), kind="fraction")


@settings(max_examples=40)
@given(_horizon_rows)
def test_accuracy_by_horizon_matches_a_loop_over_cells(rows):
    """n, n_questions and accuracy of each (model, horizon) cell and of the pooled rows are
    those of a direct loop; each interval is Wilson's at the effective sample size of the
    cluster-robust standard error over questions, by hand."""
    res = coherence.accuracy_by_horizon(_horizon_frame(rows), n_resamples=30, rng=0)
    cells = _cells(res.table)
    # fractions get the recalls' interval, 0/1 values a proportion's
    fractional = any(r[3] not in (0.0, 1.0) for r in rows)
    _interval = _fraction_interval if fractional else _wilson_by_hand
    expected: dict[tuple[str, str], list[tuple[int, float]]] = {}
    for m, q, h, c in rows:
        expected.setdefault((m, h), []).append((q, c))
        expected.setdefault(("(all)", h), []).append((q, c))
    assert set(cells) == set(expected)
    for key, vals in expected.items():
        row = cells[key]
        cs = [c for _, c in vals]
        assert row["n"] == len(vals)
        assert row["n_questions"] == len({q for q, _ in vals})
        assert row["accuracy"] == pytest.approx(sum(cs) / len(cs), abs=1e-12)
        want = _interval(vals)
        assert (row["ci_low"], row["ci_high"]) == pytest.approx(want, abs=1e-9)
    allc = [r[3] for r in rows]
    assert res.statistic == pytest.approx(sum(allc) / len(allc), abs=1e-12)
    assert res.n_obs == len(rows)
    ci = res.confidence_interval
    assert (ci.low, ci.high) == pytest.approx(_interval([(r[1], r[3]) for r in rows]),
                                              abs=1e-9)
    # known horizons come in the documented display order, per model
    for m in pd.unique(res.table["model"]):
        hs = [h for h in res.table.loc[res.table["model"] == m, "horizon"] if h != "custom"]
        assert hs == sorted(hs, key=_ORDER.index)


@settings(max_examples=30)
@given(_horizon_rows, st.randoms(use_true_random=False))
def test_accuracy_by_horizon_row_order_gives_the_same_values_and_intervals(rows, rnd):
    """Shuffled rows: the same accuracy and, with the same rng, the same interval in every
    cell (each cell's bootstrap stream does not depend on which model comes first)."""
    df = _horizon_frame(rows)
    perm = list(range(len(df)))
    rnd.shuffle(perm)
    a = coherence.accuracy_by_horizon(df, n_resamples=30, rng=7)
    b = coherence.accuracy_by_horizon(df.iloc[perm], n_resamples=30, rng=7)
    ca, cb = _cells(a.table), _cells(b.table)
    assert set(ca) == set(cb)
    for key, row in ca.items():
        for col in ("n", "n_questions", "accuracy", "ci_low", "ci_high"):
            assert cb[key][col] == pytest.approx(row[col], abs=1e-12), (key, col)
    assert b.statistic == pytest.approx(a.statistic, abs=1e-12)
    assert b.confidence_interval.low == pytest.approx(a.confidence_interval.low, abs=1e-12)
    assert b.confidence_interval.high == pytest.approx(a.confidence_interval.high, abs=1e-12)


@settings(max_examples=25)
@given(_horizon_rows)
def test_accuracy_by_horizon_relabelling_models_and_questions(rows):
    """Renaming models and questions (a bijection) changes no count or accuracy."""
    df = _horizon_frame(rows)
    renamed = df.assign(model=df["model"].map({"m1": "zeta", "m2": "alpha", "m3": "mu"}),
                        question=df["question"].map(lambda q: f"x{9 - int(q[1:])}"))
    a = coherence.accuracy_by_horizon(df, n_resamples=1, rng=0)
    b = coherence.accuracy_by_horizon(renamed, n_resamples=1, rng=0)
    back = {"zeta": "m1", "alpha": "m2", "mu": "m3", "(all)": "(all)"}
    cb = {(back[m], h): r for (m, h), r in _cells(b.table).items()}
    ca = _cells(a.table)
    assert set(ca) == set(cb)
    for key, row in ca.items():
        assert (cb[key]["n"], cb[key]["n_questions"]) == (row["n"], row["n_questions"])
        assert cb[key]["accuracy"] == pytest.approx(row["accuracy"], abs=1e-12)
    assert b.statistic == pytest.approx(a.statistic, abs=1e-12)


def test_accuracy_by_horizon_cell_intervals_do_not_follow_the_first_model():
    """Regression: each cell's bootstrap stream was assigned by the order in which models
    first appear, so listing model 'n' first changed the intervals of every cell."""
    gen = np.random.default_rng(1)
    fc = pd.DataFrame({"model": np.repeat(["m", "n"], 16),
                       "question": np.tile([f"q{i}" for i in range(8)], 4),
                       "horizon": np.tile(np.repeat(["early", "late"], 8), 2),
                       "correct": gen.uniform(size=32)})
    a = coherence.accuracy_by_horizon(fc, n_resamples=200, rng=0)
    b = coherence.accuracy_by_horizon(fc.iloc[::-1], n_resamples=200, rng=0)
    key = ["model", "horizon"]
    pd.testing.assert_frame_equal(
        a.table.sort_values(key).reset_index(drop=True),
        b.table.sort_values(key).reset_index(drop=True), atol=1e-12, rtol=0)


# --------------------------------------------------------------------------- source_precision
_IDS = ["a", "b", "c", "d", "e"]
_citation_rows = st.lists(
    st.tuples(st.sampled_from(["m1", "m2"]), st.integers(0, 3),
              st.lists(st.sampled_from(_IDS), max_size=4)),
    min_size=1, max_size=12)
_reference = st.fixed_dictionaries({f"q{i}": st.lists(st.sampled_from(_IDS), max_size=4)
                                    for i in range(4)})


def _citation_frame(rows: list[tuple[str, int, list[str]]]) -> pd.DataFrame:
    return pd.DataFrame({"model": [r[0] for r in rows], "question": [f"q{r[1]}" for r in rows],
                         "sources": [list(r[2]) for r in rows]})


def _precision(citations, reference, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", coherence.DegenerateDataWarning)
        return coherence.source_precision(citations, reference, **kw)


def _reference_precisions(rows, reference, convention):
    """|C ∩ C_H| / |C| per (model, question), by hand: rows of one forecast pooled."""
    cited: dict[tuple[str, str], set[str]] = {}
    for m, q, s in rows:
        cited.setdefault((m, f"q{q}"), set()).update(s)
    out = {}
    for (m, q), c in cited.items():
        h = set(reference[q])
        hits = sum(1 for x in c if x in h)
        out[(m, q)] = (len(c), len(h), hits,
                       hits / len(c) if c else (0.0 if convention == "paper" else math.nan))
    return out


@settings(max_examples=40)
@given(_citation_rows, _reference, st.sampled_from(["paper", "code"]))
def test_source_precision_matches_hand_counts(rows, reference, convention):
    res = _precision(_citation_frame(rows), reference, convention=convention, n_resamples=30,
                     rng=0)
    expected = _reference_precisions(rows, reference, convention)
    got = {(r["model"], r["question"]): r for r in res.table.to_dict("records")}
    assert set(got) == set(expected)
    for key, (n_cited, n_ref, hits, prec) in expected.items():
        row = got[key]
        assert (row["n_cited"], row["n_reference"], row["n_correct"]) == (n_cited, n_ref, hits)
        if math.isnan(prec):
            assert math.isnan(row["precision"])
        else:
            assert row["precision"] == pytest.approx(prec, abs=1e-12)
            assert 0.0 <= row["precision"] <= 1.0
    defined = [p for *_, p in expected.values() if not math.isnan(p)]
    assert res.n_no_citations == sum(1 for n, *_ in expected.values() if n == 0)
    assert res.n_obs == len(defined)
    if defined:
        assert res.statistic == pytest.approx(sum(defined) / len(defined), abs=1e-12)
        ci = res.confidence_interval
        # Wilson's interval of a mean of fractions over questions, by hand
        ref = fraction_interval_by_hand(res.table["precision"].to_numpy(dtype=float),
                                        res.table["question"].to_numpy(dtype=object),
                                        ci.confidence_level)
        np.testing.assert_allclose((ci.low, ci.high), ref, rtol=1e-9, atol=1e-12)
        assert 0.0 <= ci.low <= res.statistic <= ci.high <= 1.0
    else:
        assert math.isnan(res.statistic)


@settings(max_examples=30)
@given(_citation_rows, _reference)
def test_source_precision_paper_and_code_share_their_sum(rows, reference):
    """A forecast citing nothing adds 0 to the paper's mean and is left out of the code's:
    the two means have the same numerator."""
    df = _citation_frame(rows)
    paper = _precision(df, reference, convention="paper", n_resamples=1, rng=0)
    code = _precision(df, reference, convention="code", n_resamples=1, rng=0)
    n_all = len(paper.table)
    assert paper.n_obs == n_all and code.n_obs == n_all - paper.n_no_citations
    if code.n_obs:
        assert paper.statistic * n_all == pytest.approx(code.statistic * code.n_obs, abs=1e-9)
    else:
        assert paper.statistic == 0.0


@settings(max_examples=30)
@given(_citation_rows, _reference, st.randoms(use_true_random=False))
def test_source_precision_row_order_and_per_citation_form(rows, reference, rnd):
    """Shuffled rows, and each forecast's list split into one row per citation (the
    documented second form), give the same precisions; with the same rng, shuffled rows
    give the same interval."""
    df = _citation_frame(rows)
    perm = list(range(len(df)))
    rnd.shuffle(perm)
    a = _precision(df, reference, n_resamples=40, rng=3)
    b = _precision(df.iloc[perm], reference, n_resamples=40, rng=3)
    long = pd.DataFrame([{"model": m, "question": f"q{q}", "sources": s}
                         for m, q, ss in rows for s in (ss or [[]])])
    c = _precision(long, reference, n_resamples=1, rng=3)
    key = ["model", "question"]

    def norm(t: pd.DataFrame) -> pd.DataFrame:
        return t.sort_values(key).reset_index(drop=True)

    pd.testing.assert_frame_equal(norm(a.table), norm(b.table))
    pd.testing.assert_frame_equal(norm(a.table), norm(c.table))
    assert b.statistic == pytest.approx(a.statistic, abs=1e-12)
    assert b.confidence_interval.low == pytest.approx(a.confidence_interval.low, abs=1e-12)
    assert b.confidence_interval.high == pytest.approx(a.confidence_interval.high, abs=1e-12)


@settings(max_examples=25)
@given(_citation_rows, _reference, st.sampled_from(_IDS), st.integers(0, 3))
def test_source_precision_more_reference_sources_never_lower_a_precision(rows, reference,
                                                                         extra, q):
    df = _citation_frame(rows)
    a = _precision(df, reference, n_resamples=1, rng=0)
    wider = {**reference, f"q{q}": [*reference[f"q{q}"], extra]}
    b = _precision(df, wider, n_resamples=1, rng=0)
    pa = a.table.set_index(["model", "question"])["precision"]
    pb = b.table.set_index(["model", "question"])["precision"].reindex(pa.index)
    assert (pb.to_numpy() >= pa.to_numpy() - 1e-12).all()
    assert b.statistic >= a.statistic - 1e-12


def test_source_precision_interval_does_not_follow_row_order():
    """Regression: the bootstrap coded questions in order of first appearance, so the same
    rng gave another interval when the rows came in another order."""
    gen = np.random.default_rng(1)
    qs = [f"q{i}" for i in range(8)]
    cites = pd.DataFrame([{"model": m, "question": q,
                           "sources": list(gen.choice(_IDS, size=gen.integers(1, 4),
                                                      replace=False))}
                          for m in ("m", "n") for q in qs])
    ref = {q: list(gen.choice(_IDS, size=3, replace=False)) for q in qs}
    a = coherence.source_precision(cites, ref, n_resamples=200, rng=0)
    b = coherence.source_precision(cites.iloc[::-1], ref, n_resamples=200, rng=0)
    assert b.statistic == pytest.approx(a.statistic, abs=1e-12)
    assert b.confidence_interval.low == pytest.approx(a.confidence_interval.low, abs=1e-12)
    assert b.confidence_interval.high == pytest.approx(a.confidence_interval.high, abs=1e-12)


# --------------------------------------------------------------------------- smooth_ece
def _reflected_gaussian(t: np.ndarray, f: np.ndarray, sigma: float) -> np.ndarray:
    """Density at t of f + sigma Z folded into [0, 1]: images +-f + 2k, written directly.
    Out to |k| = 8 (16 sigma at sigma 1): with |k| <= 3 the images 6 sigma away were
    missing, 5e-8 of the statistic at sigma = 1."""
    out = np.zeros((len(t), len(f)))
    for k in range(-8, 9):
        for image in (f + 2 * k, -f + 2 * k):
            z = (t[:, None] - image[None, :]) / sigma
            out += np.exp(-0.5 * z * z) / (sigma * math.sqrt(2 * math.pi))
    return out


def _smece_at(f: np.ndarray, y: np.ndarray, sigma: float, m: int) -> float:
    """integral_0^1 |r_hat(t)| delta_hat(t) dt = integral |(1/n) sum_i K(t, f_i)(y_i - f_i)| dt
    by the m-point midpoint rule, O(n m)."""
    t = (np.arange(m) + 0.5) / m
    k = _reflected_gaussian(t, f, sigma)
    return float(np.mean(np.abs(k @ (y - f) / len(f))))


def _grid(sigma: float, n_grid: int) -> int:
    # the documented grid: n_grid points, raised to 20 / sigma when the kernel is narrow
    return max(n_grid, math.ceil(20.0 / sigma))


_probs = st.one_of(st.floats(0.0, 1.0), st.sampled_from([0.0, 0.1, 0.5, 0.7, 0.9, 1.0]))
_forecasts = st.lists(st.tuples(_probs, st.integers(0, 1)), min_size=2, max_size=30)


def _ece_frame(rows) -> pd.DataFrame:
    return pd.DataFrame({"probability": [p for p, _ in rows],
                         "outcome": [y for _, y in rows]})


def _arrays(rows) -> tuple[np.ndarray, np.ndarray]:
    return (np.array([p for p, _ in rows], dtype=float),
            np.array([y for _, y in rows], dtype=float))


@settings(max_examples=30)
@given(_forecasts, st.sampled_from([0.02, 0.05, 0.1, 0.3, 1.0]))
def test_smooth_ece_at_a_fixed_sigma_matches_a_direct_kernel_sum(rows, sigma):
    f, y = _arrays(rows)
    res = coherence.smooth_ece(_ece_frame(rows), sigma=sigma, n_grid=200, n_resamples=0)
    m = _grid(sigma, 200)
    assert res.n_grid == m
    ref = _smece_at(f, y, sigma, m)
    assert res.statistic == pytest.approx(ref, rel=1e-9, abs=1e-12)
    # the diagram: r_hat(t) delta_hat(t) integrates to the statistic, delta_hat to ~1
    tab = res.table
    assert np.nansum(np.abs(tab["residual"]) * tab["density"]) / m == pytest.approx(
        res.statistic, rel=1e-9, abs=1e-12)
    assert tab["density"].mean() == pytest.approx(1.0, abs=1e-3)


@settings(max_examples=30)
@given(_forecasts)
def test_smooth_ece_is_the_fixed_point_and_within_its_bounds(rows):
    """statistic = smECE_sigma at the returned sigma (checked with the direct kernel sum),
    = sigma at an interior fixed point, and |mean(y - f)| <= statistic <= mean|y - f|
    (the kernel integrates to 1 and |integral| <= integral |.|)."""
    f, y = _arrays(rows)
    res = coherence.smooth_ece(_ece_frame(rows), n_grid=200, n_resamples=0)
    ref = _smece_at(f, y, res.sigma, _grid(res.sigma, 200))
    assert res.statistic == pytest.approx(ref, rel=1e-9, abs=1e-12)
    assert 1e-4 <= res.sigma <= 1.0
    if 1e-4 < res.sigma < 1.0:
        assert res.statistic == pytest.approx(res.sigma, abs=2e-7)
    elif res.sigma == 1.0:
        assert res.statistic >= 1.0 - 1e-9
    r = y - f
    assert abs(r.mean()) - 1e-6 <= res.statistic <= np.abs(r).mean() + 1e-6


@settings(max_examples=25)
@given(_forecasts, st.randoms(use_true_random=False))
def test_smooth_ece_symmetry_and_row_order(rows, rnd):
    """The reflected kernel satisfies K(1 - t, 1 - f) = K(t, f), so (p, y) -> (1 - p, 1 - y)
    leaves the SmoothECE and its bandwidth unchanged and mirrors the diagram; shuffled rows
    change nothing."""
    f, y = _arrays(rows)
    assume(np.abs(y - f).max() > 0.05)  # not the floor sigma = 1e-4 (covered above, slow)
    df = _ece_frame(rows)
    a = coherence.smooth_ece(df, n_grid=200, n_resamples=0)
    flipped = coherence.smooth_ece(df.assign(probability=1.0 - df["probability"],
                                             outcome=1 - df["outcome"]),
                                   n_grid=200, n_resamples=0)
    perm = list(range(len(df)))
    rnd.shuffle(perm)
    shuffled = coherence.smooth_ece(df.iloc[perm], n_grid=200, n_resamples=0)
    for other in (flipped, shuffled):
        assert other.statistic == pytest.approx(a.statistic, rel=1e-6, abs=1e-9)
        assert other.sigma == pytest.approx(a.sigma, rel=1e-6, abs=1e-9)
    if a.n_grid == flipped.n_grid:
        ta, tf = a.table, flipped.table
        np.testing.assert_allclose(tf["density"].to_numpy()[::-1], ta["density"], rtol=1e-6,
                                   atol=1e-9)


@settings(max_examples=8)
@given(st.integers(0, 2**32 - 1))
def test_smooth_ece_is_small_on_large_calibrated_samples(seed):
    """y ~ Bernoulli(p): the SmoothECE is of order n^(-1/2) (0.016 at n = 4000), far below
    that of the same forecasts with y ~ Bernoulli(p^2)."""
    gen = np.random.default_rng(seed)
    p = gen.uniform(size=4000)
    u = gen.uniform(size=4000)
    calibrated = coherence.smooth_ece(pd.DataFrame({"probability": p, "outcome": u < p}),
                                      n_resamples=0)
    skewed = coherence.smooth_ece(pd.DataFrame({"probability": p, "outcome": u < p**2}),
                                  n_resamples=0)
    assert calibrated.statistic < 0.05
    assert skewed.statistic > 0.1
