"""Tests of coherence.consistency_noise_test (checker violations beyond repeat noise)."""

from __future__ import annotations

import itertools
import json
import warnings
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st
from scipy.stats import combine_pvalues

import coherence
from benchmarks.checker_noise_designs import Design
from benchmarks.checker_noise_designs import generate
from coherence._probability._noise import _equality
from coherence._probability._noise import equality_pieces
from coherence._probability._noise import mixed_partial
from tests._matrices import tables_text


def _study(**kw: object) -> pd.DataFrame:
    return generate(Design(**kw), 3).drop(columns="incoherent")  # type: ignore[arg-type]


# --------------------------------------------------------------------------- ground truth
@pytest.mark.parametrize("name", ["negation", "paraphrase", "and_or", "but", "cond",
                                  "cond_cond", "expected_evidence"])
def test_equality_constraint_zero_on_coherent_forecasts(name: str) -> None:
    """g is 0 on forecasts implied by any distribution over the possible worlds."""
    worlds = coherence._probability._checks.possible_worlds(name)
    gen = np.random.default_rng(0)
    mu = gen.dirichlet(np.ones(len(worlds)), size=50)
    t = mu @ (worlds == 1)
    m = mu @ (worlds >= 0)
    g = _equality(name)
    assert g is not None
    np.testing.assert_allclose(g(t / m), 0.0, atol=1e-12)


def test_mixed_partial_exact_on_multilinear() -> None:
    g = _equality("cond_cond")
    assert g is not None
    f = np.array([[0.3, 0.6, 0.8, 0.1]])
    np.testing.assert_allclose(mixed_partial(g, f, (0,)), 0.6 * 0.8)
    np.testing.assert_allclose(mixed_partial(g, f, (0, 2)), 0.6)
    np.testing.assert_allclose(mixed_partial(g, f, (0, 1, 2)), 1.0)
    np.testing.assert_allclose(mixed_partial(g, f, (3,)), -1.0)


def test_noise_correction_unbiased_by_enumeration() -> None:
    """E[g(pbar)^2 - noise] = g(pi)^2 exactly: enumerate every sample of a discrete noise."""
    g = _equality("expected_evidence")
    assert g is not None
    pi = np.array([0.5, 0.4, 0.7, 0.3])  # incoherent: g(pi) != 0
    support = np.array([-0.05, 0.0, 0.1])  # noise with mean 0.0167 -> centre it
    support = support - support.mean()
    n = np.array([2, 3, 2, 2])
    # every sample of each question (3^n_i of them), then every combination across questions,
    # evaluated in one call (one row per combination)
    per_question = [pi[i] + np.array(list(itertools.product(support, repeat=int(k))))
                    for i, k in enumerate(n)]
    means = [d.mean(axis=1) for d in per_question]
    variances = [d.var(axis=1, ddof=1) for d in per_question]
    index = np.indices([len(d) for d in per_question]).reshape(len(n), -1)
    mean = np.column_stack([m[j] for m, j in zip(means, index, strict=True)])
    var = np.column_stack([v[j] for v, j in zip(variances, index, strict=True)])
    pieces = equality_pieces(g, mean, var, np.broadcast_to(n.astype(float), mean.shape))
    total, count = float(pieces["corrected"].sum()), len(mean)
    assert count == 3 ** int(n.sum())
    assert total / count == pytest.approx(float(g(pi)) ** 2, abs=1e-12)


def test_coherent_forecasts_without_noise_have_no_violation() -> None:
    rows = [{"set": s, "role": r, "repetition": k, "probability": p}
            for s in range(25) for k in range(3)
            for r, p in (("P", 0.2 + 0.02 * s), ("not_P", 0.8 - 0.02 * s))]
    for method in ("parametric", "resampling"):
        res = coherence.consistency_noise_test(pd.DataFrame(rows), "negation", method=method,
                                               n_resamples=99, rng=0)
        assert res.table["squared_violation"].max() < 1e-24
        assert res.share_flagged == 0.0
        assert res.pvalue == pytest.approx(1.0)


def test_incoherent_forecasts_are_flagged() -> None:
    data = generate(Design(share_incoherent=0.5, delta=0.2, sd=(0.02, 0.03)), 1)
    truth = data.groupby("set")["incoherent"].first().to_numpy()
    for method in ("parametric", "resampling"):
        res = coherence.consistency_noise_test(data.drop(columns="incoherent"), "negation",
                                               method=method, n_resamples=199, rng=0)
        assert res.pvalue < 0.01
        flagged = res.table["flagged"].to_numpy()
        assert flagged[truth].mean() > 0.8
        assert flagged[~truth].mean() < 0.2
        assert res.confidence_interval.low <= 0.5 <= res.confidence_interval.high + 0.05


@pytest.mark.parametrize("method", ["parametric", "resampling"])
@pytest.mark.parametrize("checker", ["cond", "and", "consequence"])
def test_study_pvalues_not_small_under_the_null(method: str, checker: str) -> None:
    """A small calibration check (the full matrix is benchmarks/validate_checker_noise.py)."""
    p = []
    for seed in range(40):
        data = generate(Design(checker=checker, boundary=True, n_tuples=60), seed)
        res = coherence.consistency_noise_test(data.drop(columns="incoherent"), checker,
                                               method=method, n_resamples=99, rng=seed)
        p.append(res.pvalue)
    assert np.mean(np.asarray(p) <= 0.05) <= 0.15
    assert np.mean(p) > 0.3


# --------------------------------------------------------------------------- properties
@given(st.integers(0, 10_000), st.sampled_from(["negation", "cond", "and", "or"]))
def test_share_in_unit_interval_and_table_shape(seed: int, checker: str) -> None:
    data = generate(Design(checker=checker, n_tuples=20, share_incoherent=0.3, delta=0.1),
                    seed).drop(columns="incoherent")
    res = coherence.consistency_noise_test(data, checker, method="resampling",
                                           n_resamples=29, rng=seed)
    assert 0.0 <= res.statistic <= 1.0
    assert 0.0 <= res.confidence_interval.low <= res.confidence_interval.high <= 1.0
    assert len(res.table) == 20
    assert (res.table["pvalue"].between(0, 1)).all()
    assert res.n_obs == len(data)


@given(st.integers(0, 10_000))
def test_shift_invariance_of_parametric_test(seed: int) -> None:
    """Adding the same constant to every repetition of a paraphrase pair changes nothing."""
    data = generate(Design(checker="negation", n_tuples=20), seed).drop(columns="incoherent")
    data = data.assign(role=data["role"].map({"P": "P", "not_P": "para_P"}),
                       probability=np.where(data["role"] == "not_P",
                                            1.0 - data["probability"], data["probability"]))
    base = coherence.consistency_noise_test(data, "paraphrase")
    shifted = data.assign(probability=data["probability"] * 0.9 + 0.05)
    other = coherence.consistency_noise_test(shifted, "paraphrase")
    # a t near 0 (1.7e-6) is a difference of nearly equal numbers: 1e-15 absolute
    np.testing.assert_allclose(base.table["statistic"], other.table["statistic"], rtol=1e-9,
                               atol=1e-12)


# --------------------------------------------------------------------------- validation
def test_unknown_checker() -> None:
    with pytest.raises(ValueError, match="'checker' parameter of consistency_noise_test"):
        coherence.consistency_noise_test(_study(), "negations")


@pytest.mark.parametrize(("authors", "ours"), [("NegChecker", "negation"),
                                              ("CondChecker", "cond")])
def test_authors_class_name_is_the_checker(authors: str, ours: str) -> None:
    """The authors' class name (as consistency_check accepts it) gives the same result,
    recorded under the name used here."""
    data = _study(checker=ours, n_tuples=20)
    by_authors = coherence.consistency_noise_test(data, authors, rng=1)
    by_ours = coherence.consistency_noise_test(data, ours, rng=1)
    assert by_authors.checker == ours
    assert by_authors.pvalue == by_ours.pvalue
    assert by_authors.statistic == by_ours.statistic


def test_unknown_method() -> None:
    with pytest.raises(ValueError, match="'method' parameter"):
        coherence.consistency_noise_test(_study(), "negation", method="bayes")


def test_role_not_a_question() -> None:
    data = _study().assign(role=lambda d: d["role"].replace({"not_P": "Q"}))
    with pytest.raises(ValueError, match=r"Column .role..*questions of the 'negation'"):
        coherence.consistency_noise_test(data, "negation")


def test_duplicate_repetition() -> None:
    data = _study()
    data = pd.concat([data, data.iloc[:1]], ignore_index=True)
    with pytest.raises(ValueError, match=r"Column .repetition..*unique"):
        coherence.consistency_noise_test(data, "negation")


def test_a_repetition_written_two_ways_is_one_repetition() -> None:
    # the same forecasts appended with their repetitions as text (0 and '0') were more
    # repetitions: twice the forecasts, a smaller repeat variance, smaller p-values
    data = _study()
    data = pd.concat([data, data.iloc[:1].assign(repetition=str(data["repetition"].iloc[0]))],
                     ignore_index=True)
    with pytest.raises(ValueError, match=r"Column .repetition..*unique.*differ only in type"):
        coherence.consistency_noise_test(data, "negation")


def test_single_forecast_question() -> None:
    data = _study(repetitions=(3, 3))
    data = data[~((data["set"] == 0) & (data["role"] == "P") & (data["repetition"] > 0))]
    with pytest.raises(ValueError, match=r"at least two repeated forecasts.*0/P"):
        coherence.consistency_noise_test(data, "negation")


def test_resampling_refuses_two_repetitions() -> None:
    """Regression: with two repetitions of every question the residual bootstrap is
    degenerate and the resampling study test rejected 0.98 of 400 coherent studies
    (negation, 150 tuples, sd 0.01-0.20); it now refuses, naming the questions."""
    data = _study(repetitions=(3, 3))
    data = data[~((data["set"] == 4) & (data["role"] == "not_P") & (data["repetition"] == 2))]
    with pytest.raises(ValueError, match=r"method='resampling' needs at least 3.*1 \(tuple, "
                                         r"role\) have two \(first: 4/not_P\).*'parametric'"):
        coherence.consistency_noise_test(data, "negation", method="resampling")
    assert 0.0 <= coherence.consistency_noise_test(data, "negation").pvalue <= 1.0


def test_probability_out_of_range() -> None:
    data = _study().assign(probability=lambda d: d["probability"].where(d.index != 3, 1.5))
    with pytest.raises(ValueError, match="Column 'probability'"):
        coherence.consistency_noise_test(data, "negation")


def test_missing_column_and_bad_name_type() -> None:
    with pytest.raises(ValueError, match="repetition"):
        coherence.consistency_noise_test(_study().drop(columns="repetition"), "negation")
    with pytest.raises(TypeError, match="'role' parameter"):
        coherence.consistency_noise_test(_study(), "negation", role=3)  # type: ignore[arg-type]


def test_few_tuples_warn() -> None:
    with pytest.warns(coherence.SmallSampleWarning, match="tuples"):
        coherence.consistency_noise_test(_study(n_tuples=5), "negation")


def test_column_names_and_seed_reproducibility() -> None:
    data = _study().rename(columns={"set": "tuple", "probability": "p"})
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        a = coherence.consistency_noise_test(data, "negation", group="tuple", probability="p",
                                             method="resampling", n_resamples=99, rng=4)
        b = coherence.consistency_noise_test(data, "negation", group="tuple", probability="p",
                                             method="resampling", n_resamples=99, rng=4)
    assert a.pvalue == b.pvalue and a.statistic == b.statistic


def test_matrix_runs_end_to_end_and_records_the_resampling_refusal(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """benchmarks/validate_checker_noise.py, one study a cell: every cell runs, a design
    with two repetitions runs the parametric method only, and its table row says the
    resampling method refused."""
    from benchmarks import validate_checker_noise as matrix

    out = tmp_path / "noise.json"
    assert matrix.main(["--reps", "1", "--n-resamples", "9", "--out", str(out)]) == 0
    cells = json.loads(out.read_text())["cells"]
    assert list(cells) == [*matrix.NULLS, *matrix.POWER]
    two = cells["negation, 150 tuples, sd 0.01-0.20, 2 reps"]
    assert two["resampling"] is None and two["parametric"]["rejection"]["n"] == 1
    assert all(c["fisher"]["n"] == 1 for c in cells.values())  # the competitor, every cell
    pv = np.array([0.01, 0.2, 0.7, np.nan, 0.04])
    assert matrix.fisher_pvalue(pv) == pytest.approx(
        combine_pvalues(pv[~np.isnan(pv)], method="fisher").pvalue, rel=1e-12)
    text = tables_text(matrix, out, tmp_path, monkeypatch)
    assert "| negation, 150 tuples, sd 0.01-0.20, 2 reps | 1 | " in text
    assert text.count("refused (2 repetitions)") == sum(
        d.repetitions[0] < 3 for d in matrix.NULLS.values())


@pytest.mark.parametrize(("n_tuples", "floor"), [(1, 0.159), (2, 0.079)])
def test_the_parametric_floor_of_a_tiny_study_is_said(n_tuples: int, floor: float) -> None:
    # the study score is at most sqrt(n): one or two tuples cannot reject at 0.05 however
    # large their violation, and the warning only said "approximate"
    data = _study(n_tuples=n_tuples)
    with pytest.warns(coherence.SmallSampleWarning,
                      match=rf"cannot fall below {floor:.3f} with {n_tuples} tuple"):
        res = coherence.consistency_noise_test(data, "negation", rng=0, n_resamples=49)
    assert res.pvalue >= floor - 5e-4


@pytest.mark.parametrize("n_tuples", [1, 4])
def test_no_share_from_fewer_than_five_tuples(n_tuples: int) -> None:
    # Storey's share from 1-4 p-values is 0, 1 or a few steps between: on coherent studies
    # its interval held the true share 0 in 0.52-0.55 of studies of 1 tuple and 0.90-0.97
    # of 4 (the edge audit, 300-400 studies a design); no share is given, with a warning
    data = _study(n_tuples=n_tuples)
    with pytest.warns(coherence.SmallSampleWarning, match=r"share of tuples .* are NaN"):
        res = coherence.consistency_noise_test(data, "negation", rng=0, n_resamples=49)
    assert np.isnan(res.statistic)
    assert np.isnan(res.confidence_interval.low) and np.isnan(res.confidence_interval.high)
    assert np.isfinite(res.pvalue) and 0.0 <= res.share_flagged <= 1.0
    with pytest.warns(coherence.SmallSampleWarning, match=r"5 tuples \(< 20\)"):
        five = coherence.consistency_noise_test(_study(n_tuples=5), "negation", rng=0,
                                                n_resamples=49)
    assert 0.0 <= five.statistic <= 1.0


def _off_study(seed: int, n: int, share: float, off: float) -> pd.DataFrame:
    # negation tuples, 4 repetitions of noise sd 0.05; the first share of them off by ``off``
    gen = np.random.default_rng(seed)
    rows = []
    for s in range(n):
        p, shift = gen.uniform(0.2, 0.8), off if s < share * n else 0.0
        for r in range(4):
            rows += [{"set": s, "role": "P", "repetition": r,
                      "probability": p + gen.normal(0, 0.05)},
                     {"set": s, "role": "not_P", "repetition": r,
                      "probability": 1 - p + shift + gen.normal(0, 0.05)}]
    return pd.DataFrame(rows)


def test_share_interval_and_study_pvalue_can_disagree_as_documented() -> None:
    # the clipped share's interval holds 0 while the study test rejects at 0.0014, and the
    # other way an interval above 0 goes with a p-value of 0.097; the docstring says so
    res = coherence.consistency_noise_test(_off_study(7, 100, 0.1, 0.10), "negation", rng=7)
    ci = res.confidence_interval
    assert res.pvalue < 0.002 and ci.low == 0.0 and abs(ci.high - 0.34) < 1e-9
    res = coherence.consistency_noise_test(_off_study(13, 40, 0.3, 0.05), "negation", rng=13)
    ci = res.confidence_interval
    assert res.pvalue > 0.09 and abs(ci.low - 0.05) < 1e-9
    doc = " ".join(coherence.consistency_noise_test.__doc__.split())
    assert "not the inversion of the study test" in doc and "(0, 0.34)" in doc
    attrs = " ".join(coherence.ConsistencyNoiseResult.__doc__.split())
    assert "can hold 0 while ``pvalue`` rejects" in attrs
