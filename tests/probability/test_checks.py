"""Tests of the ten consistency checkers of Paleka et al. (2025): both metrics,
the table layer, the released-file reader, against brute force and closed forms."""

from __future__ import annotations

import json
import re

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

from coherence import CHECKERS
from coherence import ConsistencyCheckResult
from coherence import SmallSampleWarning
from coherence import arbitrage_violation
from coherence import conditional_tuple_check
from coherence import consistency_check
from coherence import frequentist_violation
from coherence import negation_check
from coherence import read_consistency_tuples
from coherence._probability._arbitrage import dual_arbitrage
from coherence._probability._checks import _SPECS
from coherence._probability._checks import _arbitrage
from tests._reference_checks import brute_force_bounds

NAMES = list(CHECKERS)
SOLVED = [n for n in NAMES if n not in ("negation", "paraphrase", "consequence", "cond")]
CLOSED = ["negation", "paraphrase", "consequence", "cond"]


def worlds_of(name: str) -> list[tuple]:
    return list(_SPECS[name].worlds)


def consistent_forecasts(name: str, mu: np.ndarray) -> np.ndarray:
    """The forecasts a coherent forecaster with distribution mu over the worlds gives."""
    w = np.array([[-1 if v is None else v for v in world] for world in worlds_of(name)])
    t = mu @ (w == 1)
    m = mu @ (w >= 0)
    return t / m


def random_tuples(name: str, n: int, rng: np.random.Generator) -> np.ndarray:
    return rng.uniform(0.02, 0.98, size=(n, len(CHECKERS[name])))


# --------------------------------------------------------------------------- exactness
@pytest.mark.parametrize("name", NAMES)
def test_zero_on_consistent_tuples(name):
    rng = np.random.default_rng(1)
    mu = rng.dirichlet(np.ones(len(worlds_of(name))), size=12)
    f = np.array([consistent_forecasts(name, m) for m in mu])
    arb = arbitrage_violation(name, f)
    freq = frequentist_violation(name, f)
    assert np.all(arb >= 0.0)
    assert np.max(arb) < 1e-12
    assert np.max(freq) < 1e-12


@pytest.mark.parametrize("name", NAMES)
def test_positive_on_inconsistent_tuples(name):
    rng = np.random.default_rng(2)
    f = random_tuples(name, 30, rng)
    from coherence._probability._checks import _basic_violation
    basic = _basic_violation(name, f)
    arb = arbitrage_violation(name, f)
    assert np.all(arb[basic > 1e-3] > 0.0)
    assert np.all(arb[basic == 0.0] == 0.0)


def _coherent_by_lp(row: np.ndarray, name: str) -> bool:
    """Whether a distribution over the possible worlds gives the tuple: t_i = p_i m_i for
    every question (linear in the distribution), as a linear feasibility programme."""
    from scipy.optimize import linprog

    w = np.array([[-1 if v is None else v for v in world] for world in worlds_of(name)])
    a_eq = np.vstack([((w == 1) - row * (w >= 0)).T, np.ones(len(w))])
    b_eq = np.concatenate([np.zeros(len(row)), [1.0]])
    res = linprog(np.zeros(len(w)), A_eq=a_eq, b_eq=b_eq, bounds=(0, None), method="highs")
    return bool(res.status == 0)


@pytest.mark.parametrize("name", NAMES)
def test_arbitrage_is_zero_exactly_on_coherent_tuples(name):
    # and_or's identity P + Q = P_and_Q + P_or_Q held on tuples no distribution gives
    # (P_and_Q above min(P, Q) or below P + Q - 1), whose arbitrage read 0
    rng = np.random.default_rng(8)
    mu = rng.dirichlet(np.ones(len(worlds_of(name))), size=6)
    rows = [consistent_forecasts(name, m) for m in mu] + list(random_tuples(name, 6, rng))
    if name == "and_or":
        rows += [np.array([p, q, pq, p + q - pq]) for p, q, pq in
                 [(0.5, 0.5, 0.75), (0.25, 0.25, 0.5), (1.0, 0.0, 0.5), (0.5, 0.5, 0.9),
                  (0.5, 0.25, 0.125), (0.6, 0.3, 0.05)]]
    f = np.array(rows)
    arb = arbitrage_violation(name, f)
    coherent = np.array([_coherent_by_lp(row, name) for row in f])
    np.testing.assert_array_equal(arb > 1e-9, ~coherent)
    if name == "and_or":  # the brute-force maximin value (ln 4/3, 2 ln 2)
        assert arb[-6] == pytest.approx(np.log(4 / 3), abs=1e-6)
        assert arb[-4] == pytest.approx(2 * np.log(2), abs=1e-6)


def _check_against_brute_force(name: str, f: np.ndarray, per_axis: int, zooms: int,
                               width: float) -> None:
    """The value (with its certified gap) lies between the brute-force lower bound (the
    best worst-case profit of a grid of consistent forecasts) and upper bound (the best
    dual value on the grid), and the brute-force bracket is narrow."""
    value, gap = _arbitrage(_SPECS[name], f, "paper")
    for row, v, g in zip(f, value, gap, strict=True):
        low, high = brute_force_bounds(row, worlds_of(name), per_axis=per_axis, zooms=zooms)
        assert low <= v + g + 1e-12
        assert v <= high + 1e-12
        assert high - low < width * v + width


@pytest.mark.parametrize("name", NAMES)
def test_arbitrage_between_brute_force_bounds(name):
    rng = np.random.default_rng(3)
    _check_against_brute_force(name, random_tuples(name, 2, rng), per_axis=11, zooms=30,
                               width=1e-4)


@pytest.mark.slow
@pytest.mark.parametrize("name", NAMES)
def test_arbitrage_matches_fine_brute_force(name):
    rng = np.random.default_rng(4)
    _check_against_brute_force(name, random_tuples(name, 8, rng), per_axis=15, zooms=40,
                               width=1e-6)


@pytest.mark.parametrize("name", CLOSED)
def test_closed_forms_equal_the_solver(name):
    rng = np.random.default_rng(5)
    f = random_tuples(name, 20, rng)
    closed = arbitrage_violation(name, f)
    worlds = _SPECS[name].world_matrix("paper")
    solved = np.array([dual_arbitrage(row, worlds)[0] for row in f])
    np.testing.assert_allclose(solved, closed, rtol=0, atol=1e-7)


@pytest.mark.parametrize("name", SOLVED)
def test_duality_gap_is_small(name):
    rng = np.random.default_rng(6)
    f = random_tuples(name, 20, rng)
    _value, gap = _arbitrage(_SPECS[name], f, "paper")
    assert np.all(gap >= 0.0)
    assert np.max(gap) < 1e-6


def test_negation_check_is_the_negation_checker():
    rng = np.random.default_rng(7)
    f = rng.uniform(0, 1, size=(50, 2))
    old = negation_check(f[:, 0], f[:, 1])
    np.testing.assert_array_equal(arbitrage_violation("negation", f), old.arbitrage)
    np.testing.assert_array_equal(frequentist_violation("negation", f), old.frequentist)


def test_cond_checker_agrees_with_conditional_tuple_check():
    rng = np.random.default_rng(8)
    f = rng.uniform(0.05, 0.95, size=(10, 3))
    old = conditional_tuple_check(f[:, 0], f[:, 1], f[:, 2])
    np.testing.assert_allclose(arbitrage_violation("cond", f), old.arbitrage, atol=1e-6)


def test_known_values():
    # Negation 0.7/0.5: -2 log(sqrt(.35) + sqrt(.15))
    assert arbitrage_violation("negation", [[0.7, 0.5]])[0] == pytest.approx(
        -2 * np.log(np.sqrt(0.35) + np.sqrt(0.15)), abs=1e-15)
    # Consequence holds when P <= cons_P
    assert arbitrage_violation("consequence", [[0.3, 0.6]])[0] == 0.0
    assert arbitrage_violation("consequence", [[0.6, 0.3]])[0] > 0.0
    # frequentist And: P + Q - 1 > P_and_Q
    p, q, pq = 0.9, 0.8, 0.6
    expected = (p + q - 1 - pq) / np.sqrt(p * (1 - p) + q * (1 - q) + pq * (1 - pq) + 1e-3)
    assert frequentist_violation("and", [[p, q, pq]])[0] == pytest.approx(expected, abs=1e-15)


def test_certain_forecasts():
    # a contradicted certainty cannot be repaired: infinite arbitrage
    assert arbitrage_violation("negation", [[1.0, 1.0]])[0] == np.inf
    assert arbitrage_violation("and", [[1.0, 1.0, 0.0]])[0] == np.inf
    # certain P and Q, a tiny P_and_Q: the only possible world costs -log(P_and_Q)
    assert arbitrage_violation("and", [[1.0, 1.0, 1e-100]])[0] == pytest.approx(
        -np.log(1e-100), rel=1e-9)
    # a certainty that is consistent costs nothing
    assert arbitrage_violation("and", [[1.0, 0.3, 0.3]])[0] < 1e-12
    # the released code moves certainties to 0.001 / 0.999: finite
    assert np.isfinite(arbitrage_violation("and", [[1.0, 1.0, 0.0]], definition="code")[0])


def test_code_definition_and_or_worlds():
    f = np.array([[0.6, 0.5, 0.2, 0.4]])
    paper, gap = _arbitrage(_SPECS["and_or"], f, "paper")
    code = arbitrage_violation("and_or", f, definition="code")[0]
    assert paper[0] == arbitrage_violation("and_or", f)[0]
    # more (impossible) worlds can only lower the optimum; each value is a guaranteed profit,
    # a lower bound within its duality gap of the optimum (the solver stops at a relative gap
    # of 1e-8: here the two optima are equal and either value may be the larger, by 9e-9
    # depending on the number of BLAS threads), so code <= optimum(paper) <= paper + gap
    assert code >= 0.0 and code <= paper[0] + gap[0] + 1e-15
    tiny = np.array([[0.5, 0.5, 0.25, 0.75 + 5e-6]])
    assert arbitrage_violation("and_or", tiny, definition="code")[0] == 0.0
    assert arbitrage_violation("and_or", tiny)[0] > 0.0


@given(st.floats(0.01, 0.99), st.floats(0.01, 0.99), st.floats(0.01, 0.99))
@settings(max_examples=15)
def test_property_and_or_symmetric_in_p_q(p, q, r):
    a = arbitrage_violation("and", [[p, q, r], [q, p, r]])
    assert a[0] == pytest.approx(a[1], abs=1e-7)
    o = arbitrage_violation("or", [[p, q, r], [q, p, r]])
    assert o[0] == pytest.approx(o[1], abs=1e-7)
    fa = frequentist_violation("and", [[p, q, r], [q, p, r]])
    assert fa[0] == pytest.approx(fa[1], abs=1e-12)


@given(st.floats(0.0, 1.0), st.floats(0.0, 1.0))
def test_property_closed_forms_nonnegative_and_symmetric(p, q):
    for name in ("negation", "paraphrase"):
        v = arbitrage_violation(name, [[p, q], [q, p]])
        assert v[0] >= 0.0
        assert v[0] == pytest.approx(v[1], abs=1e-12) or np.isinf(v).all()
        assert frequentist_violation(name, [[p, q]])[0] >= 0.0


@given(st.lists(st.integers(0, 1024).map(lambda k: k / 1024), min_size=3, max_size=3))
@settings(max_examples=15)
def test_property_and_duality(f):
    """And of (P, Q, P_and_Q) equals Or of the complements (not P, not Q, not(P and Q));
    forecasts are multiples of 1/1024 so that complements are exact."""
    a = arbitrage_violation("and", [f])[0]
    o = arbitrage_violation("or", [[1 - f[0], 1 - f[1], 1 - f[2]]])[0]
    if np.isfinite(a):
        assert a == pytest.approx(o, abs=1e-6)
    else:
        assert np.isinf(o)


# --------------------------------------------------------------------------- table layer
def test_consistency_check_table_and_summaries():
    rng = np.random.default_rng(9)
    f = random_tuples("but", 12, rng)
    df = pd.DataFrame(f, columns=["p", "qnp", "por"], index=[f"t{i}" for i in range(12)])
    res = consistency_check(df, "ButChecker", columns={"P": "p", "Q_and_not_P": "qnp",
                                                       "P_or_Q": "por"}, n_resamples=199, rng=0)
    assert isinstance(res, ConsistencyCheckResult)
    assert res.checker == "but"
    assert list(res.table.index) == list(df.index)
    np.testing.assert_allclose(res.table["arbitrage"], arbitrage_violation("but", f))
    np.testing.assert_allclose(res.table["arbitrage_scaled"], res.table["arbitrage"] / 3)
    assert res.statistic == pytest.approx(res.table["arbitrage"].mean())
    assert res.median_arbitrage == pytest.approx(res.table["arbitrage"].median())
    trimmed = np.sort(res.table["arbitrage"])[1:-1].mean()
    assert res.trimmed_mean_arbitrage == pytest.approx(trimmed)
    assert res.share_frequentist_above == pytest.approx(
        np.mean(res.table["frequentist"] >= 2.58 * 0.05))
    ci = res.confidence_interval
    assert ci.low <= res.statistic <= ci.high
    row = res.to_frame()
    assert row.loc[0, "checker"] == "but" and row.loc[0, "test"] == "consistency_check"


def test_intervals_are_the_heavy_tailed_bootstrap_t_over_sorted_tuples():
    """Both intervals are cluster_mean_interval(kind='heavy-tailed') of the sorted
    violations, one tuple a unit, the arbitrage's drawn first from the generator."""
    from coherence._resampling import cluster_mean_interval

    rng = np.random.default_rng(11)
    df = pd.DataFrame(random_tuples("and", 35, rng), columns=["P", "Q", "P_and_Q"])
    res = consistency_check(df, "and", n_resamples=199, rng=4)
    gen = np.random.default_rng(4)
    for values, ci in ((res.arbitrage, res.confidence_interval),
                       (res.frequentist, res.frequentist_interval)):
        v = np.sort(values)
        want = cluster_mean_interval(v, np.arange(v.size), 199, 0.95, gen, kind="heavy-tailed")
        assert (ci.low, ci.high) == pytest.approx(want, rel=1e-12, abs=1e-15)
    assert "Student's small-sample factor over tuples" in res.method


def test_bootstrap_interval_covers_mean_and_is_reproducible():
    rng = np.random.default_rng(10)
    df = pd.DataFrame(random_tuples("negation", 40, rng), columns=["P", "not_P"])
    a = consistency_check(df, "negation", n_resamples=299, rng=3)
    b = consistency_check(df, "negation", n_resamples=299, rng=3)
    assert a.confidence_interval == b.confidence_interval
    assert a.frequentist_interval.low <= a.mean_frequentist <= a.frequentist_interval.high


@pytest.mark.parametrize("kwargs, match", [
    ({"checker": "nope"}, "'checker' parameter of consistency_check"),
    ({"definition": "other"}, "'definition' parameter"),
    ({"tolerance": -1.0}, "'tolerance' parameter"),
    ({"sigma": 0.0}, "'sigma' parameter"),
    ({"gamma": -2.0}, "'gamma' parameter"),
    ({"beta": 0.0}, "'beta' parameter"),
    ({"n_resamples": 0}, "'n_resamples' parameter"),
    ({"columns": {"R": "x"}}, "'columns' parameter"),
])
def test_parameter_errors(kwargs, match):
    df = pd.DataFrame({"P": [0.2], "not_P": [0.7]})
    args = {"checker": "negation", **kwargs}
    with pytest.raises(ValueError, match=match):
        consistency_check(df, **args)


def test_tolerance_zero_is_refused_and_positive_tolerance_is_inclusive():
    # tolerance=0 flagged every tuple, the coherent (0.3, 0.7) too (arbitrage 0 >= 0)
    df = pd.DataFrame({"P": [0.3, 0.3], "not_P": [0.7, 0.6]})
    for tolerance in (0, 0.0, -0.0):
        with pytest.raises(ValueError, match=r"'tolerance' parameter of consistency_check "
                           r"must be a finite float > 0 .*coherent tuple's arbitrage is 0"):
            consistency_check(df, "negation", tolerance=tolerance, n_resamples=99, rng=0)
    res = consistency_check(df, "negation", n_resamples=99, rng=0)
    at = consistency_check(df, "negation", tolerance=float(res.arbitrage[1]), n_resamples=99,
                           rng=0)
    tiny = consistency_check(df, "negation", tolerance=1e-9, n_resamples=99, rng=0)
    assert res.arbitrage[0] == 0.0 and res.arbitrage[1] > 0.01
    # the documented rule for tolerance > 0 unchanged: flagged at arbitrage >= tolerance
    assert at.table["arbitrage_flag"].tolist() == [False, True]
    assert tiny.table["arbitrage_flag"].tolist() == [False, True]
    assert tiny.share_arbitrage_above == at.share_arbitrage_above == 0.5


def test_data_errors_name_column_and_rows():
    df = pd.DataFrame({"P": [0.2, 1.2, 0.4], "not_P": [0.7, 0.1, np.nan]},
                      index=["a", "b", "c"])
    with pytest.raises(ValueError, match=r"'P'.*\[0, 1\].*'b'"):
        consistency_check(df[["P"]].assign(not_P=0.5), "negation")
    with pytest.raises(ValueError, match=r"'not_P'.*'c'"):
        consistency_check(df.assign(P=0.5), "negation")
    with pytest.raises(ValueError, match="column 'not_P'"):
        consistency_check(df[["P"]], "negation")
    with pytest.raises(ValueError, match="at least one tuple"):
        consistency_check(df.iloc[:0], "negation")
    with pytest.raises(ValueError, match="2-d array with 3 columns"):
        arbitrage_violation("and", [[0.1, 0.2]])
    with pytest.raises(TypeError, match="'data' parameter"):
        consistency_check(3.0, "negation")


@given(st.lists(st.floats(-1.0, 2.0) | st.just(float("nan")), min_size=2, max_size=2))
def test_property_invalid_forecasts_raise(f):
    if all(0.0 <= v <= 1.0 for v in f):
        assert arbitrage_violation("negation", [f])[0] >= 0.0
    else:
        with pytest.raises(ValueError, match="P"):
            arbitrage_violation("negation", [f])


# --------------------------------------------------------------------------- released files
def test_read_released_layout(tmp_path):
    lines = [
        {"line": {"P": {"question": {"title": "x"}, "forecast": {"prob": 0.3}},
                  "not_P": {"question": {}, "forecast": {"prob": 0.6}}},
         "violation_data": {"default": {"violation": 0.01}, "frequentist": {"violation": 0.2},
                            "default_scaled": {"violation": 0.005}}},
        {"P": {"elicited_prob": 0.5}, "not_P": {"prob": 0.5}},
    ]
    path = tmp_path / "NegChecker.jsonl"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\n")
    df = read_consistency_tuples(path)
    assert df.attrs["checker"] == "negation"
    assert df[["P", "not_P"]].to_numpy().tolist() == [[0.3, 0.6], [0.5, 0.5]]
    assert df["published_arbitrage"].tolist()[0] == 0.01
    assert np.isnan(df["published_frequentist"].iloc[1])
    res = consistency_check(df, df.attrs["checker"], n_resamples=9, rng=0)
    assert res.n_obs == 2


def test_read_refuses_a_forecast_given_twice_differently():
    """A question entry with two forecasts that differ ('forecast.prob' 0.3, 'prob' 0.9)
    was read as the first, the other dropped without a word; equal ones are one forecast."""
    two = {"P": {"forecast": {"prob": 0.3}, "prob": 0.9}, "not_P": {"prob": 0.7}}
    with pytest.raises(ValueError, match=r"line 1, question 'P' gives its forecast twice"):
        read_consistency_tuples([two], checker="negation")
    same = {"P": {"forecast": {"prob": 1}, "elicited_prob": 1.0}, "not_P": {"prob": 0.0}}
    assert read_consistency_tuples([same], checker="negation").to_numpy().tolist() == [
        [1.0, 0.0]]


def test_read_errors(tmp_path):
    with pytest.raises(ValueError, match="line 1 lacks question"):
        read_consistency_tuples([{"P": {"prob": 0.1}}], checker="negation")
    with pytest.raises(ValueError, match="no forecast"):
        read_consistency_tuples([{"P": {"prob": 0.1}, "not_P": {"x": 1}}], checker="negation")
    with pytest.raises(ValueError, match="not valid JSON"):
        read_consistency_tuples(["{oops"], checker="negation")
    with pytest.raises(ValueError, match="'checker' parameter"):
        read_consistency_tuples([{"P": 0.1, "not_P": 0.9}])


#: The checkers whose released arbitrage is a closed form (equal to ours); the others came from
#: numerical optimisers that may stop short of the optimum (docs/consistency_checks.md).
EXACT_ARBITRAGE = ("NegChecker", "ParaphraseChecker", "ConsequenceChecker")
#: The run extracted in tests/data, made after Cond's closed form entered the released code.
SHIPPED_RUN = "BasicForecaster_gpt4o_2024-08-06_tuples_newsapi"


@pytest.mark.parametrize("name", [s.authors_name for s in _SPECS.values()])
def test_published_values(name, data_roots):
    """Every released run in <root>/consistency-forecasting/<run>/<Checker>.jsonl (the extracts
    in tests/data, and ../shared/data when present): the frequentist values of all ten checkers
    and the arbitrage of the closed-form checkers equal the published ones; the arbitrage of the
    optimiser-based checkers is never below them (ours is the optimum)."""
    paths = sorted(p for root in data_roots
                   for p in root.glob(f"consistency-forecasting/*/{name}.jsonl"))
    assert data_roots[0] / "consistency-forecasting" / SHIPPED_RUN / f"{name}.jsonl" in paths
    compared = 0
    for path in paths:
        df = read_consistency_tuples(path)
        if "published_frequentist" not in df:
            continue
        res = consistency_check(df, name, definition="code", n_resamples=9, rng=0)
        np.testing.assert_allclose(res.table["frequentist"], df["published_frequentist"],
                                   rtol=0, atol=1e-12)
        compared += len(df)
        if "published_arbitrage" not in df:
            continue
        ours, published = res.table["arbitrage"].to_numpy(), df["published_arbitrage"].to_numpy()
        exact = name in EXACT_ARBITRAGE or (name == "CondChecker"
                                            and path.parent.name == SHIPPED_RUN)
        if exact:
            np.testing.assert_allclose(ours, published, rtol=0, atol=1e-12)
        else:
            assert (np.isnan(published) | (ours >= published - 1e-6)).all(), path
    assert compared >= 3


@pytest.mark.parametrize("value", [True, False, "0.3", None, 1.5, -0.1, [0.3]])
def test_read_forecast_must_be_a_probability(value):
    # a JSON boolean was read as P = 1.0 and entered the arbitrage
    line = {"P": {"forecast": {"prob": value}}, "not_P": {"forecast": {"prob": 0.4}}}
    with pytest.raises(ValueError, match=r"line 1, question 'P'"):
        read_consistency_tuples([json.dumps(line)], checker="negation")


def test_read_errors_say_what_is_wrong():
    # a forecast written as text was "has no forecast"; numpy numbers (parsed records built
    # in Python) were refused the same way; a 'line' that is a string was searched for the
    # question names and failed with "string indices must be integers", and a list of
    # 'violation_data' with "'list' object has no attribute 'get'"
    with pytest.raises(ValueError, match=r"line 1, question 'P': the forecast must be a "
                       r"number in \[0, 1\]; got '0.3'"):
        read_consistency_tuples([{"P": "0.3", "not_P": 0.7}], checker="negation")
    df = read_consistency_tuples([{"P": np.float32(0.25), "not_P": {"prob": np.int64(1)}}],
                                 checker="negation")
    assert df[["P", "not_P"]].to_numpy().tolist() == [[0.25, 1.0]]
    with pytest.raises(ValueError, match=r"line 1: its 'line' is not a JSON object of "
                       r"questions \(got str\)"):
        read_consistency_tuples(['{"line": "P not_P"}'], checker="negation")
    with pytest.raises(ValueError, match=r"line 1: its 'violation_data' is not a JSON object "
                       r"\(got list\)"):
        read_consistency_tuples([{"P": 0.3, "not_P": 0.7, "violation_data": [0.1]}],
                                checker="negation")


def test_read_numbers_in_quotes_named_all_and_explained():
    # a forecast written "0.3" was refused naming only the first line, without saying
    # why, while consistency_check reads a table column of '0.3' as 0.3: the message now
    # counts and names every offending forecast and says why a JSON file is read stricter
    lines = [{"P": 0.3, "not_P": 0.7}, {"P": "0.3", "not_P": 0.7},
             {"P": 0.4, "not_P": "0.5"}]
    with pytest.raises(ValueError, match=r"line 2, question 'P': the forecast must be a number "
                       r"in \[0, 1\]; got '0.3' \(2 forecast\(s\) are not: line 2, question "
                       r"'P': '0.3'; line 3, question 'not_P': '0.5'\)\. A number in quotes "
                       r"is a JSON string, not a JSON number.*consistency_check does read"):
        read_consistency_tuples(lines, checker="negation")
    # the table rule (docs/errors.md) is kept: text that is a number is read
    table = pd.DataFrame({"P": ["0.3"], "not_P": ["0.7"]}, dtype=object)
    with pytest.warns(SmallSampleWarning):
        assert consistency_check(table, "negation", rng=0).statistic == 0.0


def _released(p, q):
    return json.dumps({"line": {"P": {"question": {"id": "a", "title": "A?"},
                                      "forecast": {"prob": p}},
                                "not_P": {"question": {"id": "b", "title": "Not A?"},
                                          "forecast": {"prob": q}}}})


def test_read_refuses_a_tuple_given_twice():
    # one released line twice counted twice: the mean arbitrage of (0.7, 0.5) and
    # (0.7, 0.3) given twice was 0.0284 where the two tuples' mean is 0.0213
    lines = [_released(0.7, 0.5), _released(0.7, 0.3), "", _released(0.7, 0.5)]
    with pytest.raises(ValueError, match=r"read_consistency_tuples: 1 line\(s\) repeat the "
                       r"tuple of an earlier line \(the same questions with the same "
                       r"forecasts\): line 4 \(as line 1\); expected each tuple once"):
        read_consistency_tuples(lines, checker="negation")
    # other forecasts of the same questions, or forecasts without their questions, pass
    assert len(read_consistency_tuples(lines[:2], checker="negation")) == 2
    bare = [{"P": 0.7, "not_P": 0.5}] * 2
    assert len(read_consistency_tuples(bare, checker="negation")) == 2


def test_read_refuses_a_tuple_given_twice_with_a_forecast_written_1_and_1_0():
    """Regression: the copy test compared the lines' JSON text, so a forecast written 1 in
    one line and 1.0 in its copy (as JavaScript's and Python's writers write it) was two
    tuples, counted twice; the forecasts are now compared as numbers."""
    lines = [_released(1, 0.5), _released(0.7, 0.3), _released(1.0, 0.5),
             _released(0, 0.5), _released(-0.0, 0.5)]
    with pytest.raises(ValueError, match=r"2 line\(s\) repeat the tuple of an earlier "
                       r"line .*: line 3 \(as line 1\), line 5 \(as line 4\)"):
        read_consistency_tuples(lines, checker="negation")
    assert len(read_consistency_tuples(lines[:2], checker="negation")) == 2


def test_flag_boundaries_each_as_documented():
    """consistency_check flags a violation equal to its threshold (the authors' code fails a
    check unless the violation is below it); negation_check and conditional_tuple_check
    count only violations strictly above theirs."""
    at = float(negation_check([0.7, 0.7], [0.5, 0.3], rng=0).arbitrage[0])
    freq = float(frequentist_violation("negation",
                                       pd.DataFrame({"P": [0.7], "not_P": [0.5]}))[0])
    neg = negation_check([0.7, 0.7], [0.5, 0.3], arbitrage_threshold=at,
                         frequentist_threshold=freq, rng=0)
    assert neg.share_arbitrage_above == 0.0 and neg.share_frequentist_above == 0.0
    tuples = pd.DataFrame({"P": [0.7, 0.7], "not_P": [0.5, 0.3]})
    res = consistency_check(tuples, "negation", tolerance=at, gamma=1.0, sigma=freq, rng=0)
    assert res.table["arbitrage_flag"].tolist() == [True, False]
    assert res.table["frequentist_flag"].tolist() == [True, False]
    assert res.share_arbitrage_above == 0.5 and res.share_frequentist_above == 0.5
    cond = conditional_tuple_check([0.5, 0.5], [0.4, 0.4], [0.25, 0.2], absolute_threshold=0.05,
                                   arbitrage_threshold=float(
                                       conditional_tuple_check([0.5, 0.5], [0.4, 0.4],
                                                               [0.25, 0.2], rng=0)
                                       .arbitrage[0]), rng=0)
    assert cond.share_absolute_above == 0.0 and cond.share_arbitrage_above == 0.0


@pytest.mark.parametrize("value", [True, "0.12", [0.12]])
def test_read_published_violation_not_a_number_raises(value):
    # a published violation written as a string or boolean ("0.12", true) was read as NaN
    # (the column dropped), which passes for "no published value"; as a forecast written
    # that way is, it is now refused, naming the line and key
    line = {"P": {"prob": 0.3}, "not_P": {"prob": 0.6},
            "violation_data": {"default": {"violation": 0.01},
                               "frequentist": {"violation": value}}}
    with pytest.raises(ValueError, match=r"line 2: the published violation 'violation_data' "
                       r"key 'frequentist' must be a number; got " + re.escape(repr(value))):
        read_consistency_tuples([{"P": 0.3, "not_P": 0.7}, line], checker="negation")
    with pytest.raises(ValueError, match=r"line 1: its 'violation_data' key 'default' is not "
                       r"a JSON object"):
        read_consistency_tuples([{"P": 0.3, "not_P": 0.7,
                                  "violation_data": {"default": 0.12}}], checker="negation")
    # null (or no entry) is no published value: NaN, as before
    line["violation_data"]["frequentist"] = {"violation": None}
    df = read_consistency_tuples([line], checker="negation")
    assert df["published_arbitrage"].tolist() == [0.01]
    assert np.isnan(df["published_frequentist"]).all()


def test_read_file_not_utf8(tmp_path):
    path = tmp_path / "NegChecker.jsonl"
    good = json.dumps({"P": {"prob": 0.3}, "not_P": {"prob": 0.6}})
    path.write_bytes(good.encode() + b"\n" + b'{"P": "\xff\xfe"}\n')
    with pytest.raises(ValueError, match=r"NegChecker.jsonl.*is not UTF-8 text \(line 2"):
        read_consistency_tuples(path)


@pytest.mark.parametrize("content", ["", "   \n\n\t\n"])
def test_read_empty_file(tmp_path, content):
    path = tmp_path / "NegChecker.jsonl"
    path.write_text(content)
    with pytest.raises(ValueError, match=r"NegChecker.jsonl.*holds no tuples"):
        read_consistency_tuples(path)
    with pytest.raises(ValueError, match=r"The 'source' parameter of read_consistency_tuples "
                       r"must be at least one tuple"):
        read_consistency_tuples(["", "  "], checker="negation")


def test_read_bom_is_accepted(tmp_path):
    path = tmp_path / "NegChecker.jsonl"
    path.write_bytes(b"\xef\xbb\xbf" + json.dumps({"P": 0.3, "not_P": 0.6}).encode())
    assert read_consistency_tuples(path)[["P", "not_P"]].to_numpy().tolist() == [[0.3, 0.6]]


@pytest.mark.parametrize("columns", ["P", ["P"], ("P", "not_P")])
def test_columns_must_be_a_mapping(columns):
    df = pd.DataFrame({"P": [0.3], "not_P": [0.6]})
    with pytest.raises(TypeError, match=r"The 'columns' parameter of consistency_check must be "
                       r"a mapping of question key -> column name, or None"):
        consistency_check(df, "negation", columns=columns)


def test_two_questions_cannot_read_one_column():
    # {"not_P": "P"} on a table with both columns read P twice: every tuple was flagged
    df = pd.DataFrame({"P": [0.3, 0.4], "not_P": [0.7, 0.6]})
    with pytest.raises(ValueError, match=r"The 'columns' parameter of consistency_check must "
                       r"be one column per question .*column\(s\) \['P'\] read twice"):
        consistency_check(df, "negation", columns={"not_P": "P"})
    renamed = df.rename(columns={"not_P": "q"})
    assert consistency_check(renamed, "negation", columns={"not_P": "q"},
                             n_resamples=19, rng=0).table.shape[0] == 2


@pytest.mark.parametrize(("token", "shown"), [("NaN", "nan"), ("Infinity", "inf"),
                                              ("1e400", "inf"), ("1" + "0" * 400, "1000")])
def test_read_forecast_json_has_no_number_for(token, shown):
    """Python's json reads NaN and Infinity (no JSON numbers) and 1e400 as inf: each is
    refused as a forecast, saying why; a 400-digit integer raised a bare OverflowError."""
    line = '{"P": {"prob": ' + token + '}, "not_P": {"prob": 0.6}}'
    with pytest.raises(ValueError, match=rf"line 1, question 'P': the forecast must be a "
                       rf"number in \[0, 1\]; got {shown}.*NaN and Infinity are not JSON "
                       r"numbers"):
        read_consistency_tuples([line], checker="negation")


def test_read_published_violation_json_has_no_number_for():
    """A published 400-digit integer raised a bare OverflowError: refused, naming the line
    and key. Infinity reads as inf (a violation may be infinite), NaN as NaN (no number
    to compare, as with no published value), as the Notes say."""
    line = '{"P": {"prob": 0.3}, "not_P": {"prob": 0.6}, "violation_data": %s}'
    big = '{"default": {"violation": 1%s}}' % ("0" * 400)
    with pytest.raises(ValueError, match=r"line 1: the published violation 'violation_data' "
                       r"key 'default' must be a number; got 1000.*\.\.\. \(too large for a "
                       r"float\)\.$"):
        read_consistency_tuples([line % big], checker="negation")
    df = read_consistency_tuples(
        [line % '{"default": {"violation": Infinity}, "frequentist": {"violation": NaN}}'],
        checker="negation")
    assert df["published_arbitrage"].tolist() == [np.inf]
    assert np.isnan(df["published_frequentist"].iloc[0])


def test_read_file_messages_name_the_file(tmp_path):
    """A line's message named the line but not the file, though a study reads the files of
    several checkers and runs at once; a byte-order mark and CRLF line ends read as usual,
    a trailing comma is invalid JSON."""
    path = tmp_path / "NegChecker.jsonl"
    lines = ['{"P": {"prob": 0.3}, "not_P": {"prob": 0.6}}',
             '{"P": {"prob": 0.2}, "not_P": {"prob": 0.7}}']
    path.write_bytes(b"\xef\xbb\xbf" + "\r\n".join(lines).encode() + b"\r\n")
    assert read_consistency_tuples(path)[["P", "not_P"]].to_numpy().tolist() == [
        [0.3, 0.6], [0.2, 0.7]]
    path.write_text(lines[0] + "\n" + lines[1].replace("0.7}", "0.7,}") + "\n")
    with pytest.raises(ValueError, match=r"read_consistency_tuples: '.*NegChecker\.jsonl': "
                       r"line 2 is not valid JSON"):
        read_consistency_tuples(path)
    path.write_text(lines[0] + "\n" + lines[1].replace("0.2", "true") + "\n")
    with pytest.raises(ValueError, match=r"read_consistency_tuples: '.*NegChecker\.jsonl': "
                       r"line 2, question 'P': the forecast must be a number in \[0, 1\]; "
                       r"got True") as info:
        read_consistency_tuples(path)
    assert info.value.__cause__ is None
    titled = '{"P": {"title": "A?", "prob": 0.3}, "not_P": {"title": "not A?", "prob": 0.6}}'
    path.write_text(titled + "\n" + titled + "\n")
    with pytest.raises(ValueError, match=r"read_consistency_tuples: '.*NegChecker\.jsonl': "
                       r"1 line\(s\) repeat"):
        read_consistency_tuples(path)


def test_read_a_question_named_twice_is_refused():
    # json.loads keeps the last of two keys: {"P": 0.3, "P": 0.9} was read as P = 0.9, the
    # tuple's other forecast of P silently dropped (arbitrage 0.337 of (0.9, 0.6) instead of
    # an error)
    line = '{"P": {"prob": 0.3}, "not_P": {"prob": 0.6}, "P": {"prob": 0.9}}'
    with pytest.raises(ValueError, match=r"line 1 names the key 'P' twice"):
        read_consistency_tuples([line], checker="negation")
    nested = '{"line": {"P": {"forecast": {"prob": 0.3, "prob": 0.4}}, "not_P": {"prob": 0.6}}}'
    with pytest.raises(ValueError, match=r"line 1 names the key 'prob' twice"):
        read_consistency_tuples([nested], checker="negation")


def test_read_float32_forecast_as_its_decimal():
    # a float32 0.1 in a parsed record was read as 0.10000000149011612, so the coherent
    # (0.1, 0.9) had a frequentist violation of 3.5e-09 instead of 0 (a float32 column of
    # consistency_check is read as 0.1)
    df = read_consistency_tuples([{"P": np.float32(0.1), "not_P": {"prob": 0.9}}],
                                 checker="negation")
    assert df[["P", "not_P"]].to_numpy().tolist() == [[0.1, 0.9]]
    assert frequentist_violation("negation", df)[0] == 0.0


@pytest.mark.parametrize("source, named", [
    ({"P": 0.3, "not_P": 0.7}, r"one record, a dict \(pass a list of records: \[record\]\)"),
    (pd.DataFrame({"P": [0.3], "not_P": [0.7]}), r"a DataFrame"),
    (b'{"P": 0.3, "not_P": 0.7}', r"a bytes"),
])
def test_read_one_record_or_table_is_named(source, named):
    # one record alone was iterated over its keys: "line 1 is not valid JSON" (the key 'P'),
    # a table over its column names, bytes over their integers ("line 1 is not a JSON object")
    with pytest.raises(TypeError, match=r"The 'source' parameter of read_consistency_tuples "
                       r"must be a path, or an iterable of JSON lines \(str\) or of parsed "
                       r"records \(dict\); got '" + named):
        read_consistency_tuples(source, checker="negation")
    assert read_consistency_tuples([{"P": 0.3, "not_P": 0.7}], checker="negation")[
        ["P", "not_P"]].to_numpy().tolist() == [[0.3, 0.7]]
