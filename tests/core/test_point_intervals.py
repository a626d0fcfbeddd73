"""An interval that is the point itself (values that do not vary) is the statistic the
result reports, to the bit: the interval is built around that number, not around the same
mean summed in another order (six violations of 0.49 have ``numpy.mean``
0.49000000000000005, and the interval was ``(0.49, 0.49)``, excluding it)."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd
import pytest

import coherence
from coherence._resampling import cluster_mean_interval
from coherence._resampling import point_at_value

VALUES = (0.1, 0.3, 0.49, 0.09)
SIZES = range(2, 16)


def _holds(low: float, estimate: float, high: float) -> bool:
    return bool(low <= estimate <= high)


def _forecast_scores(v: float, n: int) -> list[tuple[float, float, float]]:
    df = pd.DataFrame({"model": "m", "question": [f"q{i}" for i in range(n)],
                       "probability": v, "outcome": 0})
    t = coherence.forecast_scores(df, by="model", n_resamples=99, rng=0).table
    return [(t[f"{m}_ci_low"].iloc[0], t[m].iloc[0], t[f"{m}_ci_high"].iloc[0])
            for m in ("accuracy", "brier", "log_score")]


def _brier_decomposition(v: float, n: int) -> list[tuple[float, float, float]]:
    df = pd.DataFrame({"question": [f"q{i}" for i in range(n)], "probability": v,
                       "outcome": 0})
    res = coherence.brier_decomposition(df, n_resamples=99, rng=0)
    ci = res.confidence_interval
    return [(ci.low, res.statistic, ci.high),
            *res.table[["ci_low", "value", "ci_high"]].itertuples(index=False, name=None)]


def _calibration_error(v: float, n: int) -> list[tuple[float, float, float]]:
    df = pd.DataFrame({"probability": [v] * n, "outcome": 0})
    res = coherence.calibration_error(df, n_resamples=99, rng=0)
    ci = res.confidence_interval
    return [(ci.low, res.statistic, ci.high)]


def _consistency(v: float, n: int) -> list[tuple[float, float, float]]:
    res = coherence.consistency_check(pd.DataFrame({"P": [v] * n, "not_P": [v] * n}),
                                      "negation", n_resamples=99, rng=0)
    arb, freq = res.confidence_interval, res.frequentist_interval
    return [(arb.low, res.statistic, arb.high),
            (freq.low, res.frequentist_summary.mean, freq.high)]


def _rowwise(v: float, n: int) -> list[tuple[float, float, float]]:
    out = []
    for res in (coherence.conditional_tuple_check([0.1] * n, [0.1] * n, [v] * n,
                                                  n_resamples=99, rng=0),
                coherence.negation_check([v] * n, [v] * n, n_resamples=99, rng=0)):
        ci = res.confidence_interval
        out.append((ci.low, res.statistic, ci.high))
    return out


@pytest.mark.parametrize("triples", [_forecast_scores, _brier_decomposition,
                                     _calibration_error, _consistency, _rowwise],
                         ids=["forecast_scores", "brier_decomposition", "calibration_error",
                              "consistency_check", "row-wise checks"])
def test_a_point_interval_holds_the_reported_statistic(triples):
    misses = []
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for v in VALUES:
            for n in SIZES:
                misses += [(v, n, t) for t in triples(v, n) if not _holds(*t)]
    assert misses == []


@pytest.mark.parametrize("kind", ["heavy-tailed", "nonnegative", "fraction", "proportion"])
def test_cluster_mean_interval_is_built_around_the_estimate(kind):
    """Equal values: the interval around the caller's estimate is that estimate for the
    bootstrap-t kinds; an estimate of NaN falls back to the clusters' mean."""
    for n in SIZES:
        values = np.full(n, 1.0 if kind == "proportion" else 0.49)
        est = float(values.mean())
        low, high = cluster_mean_interval(values, np.arange(n), 49, 0.95,
                                          np.random.default_rng(0), kind=kind, estimate=est)
        assert low <= est <= high
        if kind in ("heavy-tailed", "nonnegative"):
            assert low == high == est
        fallback = cluster_mean_interval(values, np.arange(n), 49, 0.95,
                                         np.random.default_rng(0), kind=kind,
                                         estimate=float("nan"))
        plain = cluster_mean_interval(values, np.arange(n), 49, 0.95,
                                      np.random.default_rng(0), kind=kind)
        assert fallback == plain


def test_point_at_value_moves_only_a_point_to_rounding_at_the_value():
    assert point_at_value(0.24010000000000015, (0.24010000000000026, 0.2401000000000003)) \
        == (0.24010000000000015, 0.24010000000000015)
    assert point_at_value(0.5, (0.4, 0.6)) == (0.4, 0.6)  # an interval with a width
    assert point_at_value(0.5, (0.3, 0.3)) == (0.3, 0.3)  # a point away from the value
    assert point_at_value(0.5, (0.5 + 2e-12, 0.5 + 2e-12)) == (0.5 + 2e-12, 0.5 + 2e-12)
