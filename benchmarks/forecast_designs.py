"""Designs of :mod:`benchmarks.validate_forecast_scores`: two forecasters, ``a`` and
``b``, answering the same binary questions, with the population's expected scores.

A question has a latent probability ``t``; its outcome is Bernoulli(``t`` moved by
the question's cluster shock on the logit scale, when the design has one). A
forecaster states a noisy view of ``t`` (the shock unseen): on the probability scale,
clipped to [0.01, 0.99], or on the logit scale; heaped on a 0.05 grid (0 and 1 among
the values) for LLM-like forecasts. With ``topic_sd``, each forecaster also misjudges a
cluster's questions as a whole: one draw of that sd per forecaster and cluster is added
to its noise (so its score differences are correlated within a cluster). Forecaster
``b`` differs by kind:

* ``same``: as ``a``, with its own noise (the scores are exchangeable: a null);
* ``hedged``: ``0.5 + lam (t - 0.5)``, without noise, ``lam`` chosen so that its
  expected Brier score equals ``a``'s (a null whose score differences are skewed), or
  that slope moved (an alternative with skewed differences);
* ``truth``: ``t`` itself, drawing nothing (how :func:`slope` gets ``a``'s score);
* ``noisier``: as ``a`` with more noise (an alternative).

The population's expected Brier score, log score (natural log, floor 1e-10) and
accuracy (1[p >= 0.5] the YES call) of each forecaster come from 4,000,000 Monte Carlo
questions of the design (the expectations given ``t``, so only the forecasts are
drawn).
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import replace
from functools import cache

import numpy as np
import pandas as pd

__all__ = ["FORECAST_DESIGNS", "ForecastDesign", "expected_scores", "sample", "slope"]

FLOOR = 1e-10


@dataclass(frozen=True)
class ForecastDesign:
    """One design (see the module's docstring)."""

    name: str
    latent: str = "uniform"          # 'uniform' U(0.05, 0.95), 'rare' Beta(0.5, 9.5)
    scale: str = "probability"       # where the forecasters' noise is added: or 'logit'
    sd_a: float = 0.1
    b: str = "same"                  # 'same', 'hedged', 'noisier', 'truth'
    sd_b: float = 0.1
    heaped: bool = False
    cluster_size: int = 1
    shock_sd: float = 0.0            # sd of the cluster's outcome shock (logit scale)
    topic_sd: float = 0.0            # sd of a forecaster's error shared by a cluster
    shift: float = 0.0               # the hedged forecaster's slope less the equal-Brier one


def _expit(x: np.ndarray) -> np.ndarray:
    out: np.ndarray = 1.0 / (1.0 + np.exp(-x))
    return out


def _logit(p: np.ndarray) -> np.ndarray:
    out: np.ndarray = np.log(p) - np.log1p(-p)
    return out


def _latent(design: ForecastDesign, n: int, gen: np.random.Generator) -> np.ndarray:
    if design.latent == "rare":
        return gen.beta(0.5, 9.5, size=n).clip(1e-6, 1 - 1e-6)
    return gen.uniform(0.05, 0.95, size=n)


def _view(design: ForecastDesign, t: np.ndarray, noise: np.ndarray) -> np.ndarray:
    if design.heaped:
        return np.clip(np.round((t + noise) / 0.05) * 0.05, 0.0, 1.0)
    if design.scale == "logit":
        return _expit(_logit(t) + noise)
    out: np.ndarray = np.clip(t + noise, 0.01, 0.99)
    return out


def _forecasts(design: ForecastDesign, t: np.ndarray, cluster: np.ndarray,
               gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    n, n_clusters = t.size, int(cluster.max()) + 1

    def noise(sd: float) -> np.ndarray:
        own = gen.normal(0.0, sd, size=n)
        if design.topic_sd == 0:
            return own
        return own + gen.normal(0.0, design.topic_sd, size=n_clusters)[cluster]

    a = _view(design, t, noise(design.sd_a))
    if design.b == "hedged":
        b = 0.5 + slope(design) * (t - 0.5)
    elif design.b == "truth":
        b = t
    else:
        b = _view(design, t, noise(design.sd_b))
    return a, b


def _outcome_probability(design: ForecastDesign, t: np.ndarray, cluster: np.ndarray,
                         gen: np.random.Generator) -> np.ndarray:
    if design.shock_sd == 0:
        return t
    shock = gen.normal(0.0, design.shock_sd, size=int(cluster.max()) + 1)
    return _expit(_logit(t) + shock[cluster])


def _scores(p: np.ndarray, pi: np.ndarray) -> np.ndarray:
    """Expected (Brier, log score, accuracy) of forecasts ``p`` of outcomes of
    probability ``pi``, per question."""
    brier = p * p - 2.0 * p * pi + pi
    log = pi * np.log(np.maximum(p, FLOOR)) + (1 - pi) * np.log(np.maximum(1 - p, FLOOR))
    acc = np.where(p >= 0.5, pi, 1.0 - pi)
    return np.column_stack([brier, log, acc])


@cache
def expected_scores(design: ForecastDesign) -> dict[str, list[float]]:
    """``{'a': [Brier, log, accuracy], 'b': [...]}``: the population's expected scores."""
    gen = np.random.default_rng(20261128)
    total = {"a": np.zeros(3), "b": np.zeros(3)}
    n, chunks = 1_000_000, 4
    for _ in range(chunks):
        t = _latent(design, n, gen)
        cluster = np.arange(n) // design.cluster_size
        pi = _outcome_probability(design, t, cluster, gen)
        a, b = _forecasts(design, t, cluster, gen)
        total["a"] += _scores(a, pi).mean(axis=0) / chunks
        total["b"] += _scores(b, pi).mean(axis=0) / chunks
    return {k: [float(x) for x in v] for k, v in total.items()}


@cache
def slope(design: ForecastDesign) -> float:
    """The hedged forecaster's slope ``lam``: the one that gives ``b`` the expected Brier
    score of ``a``, plus ``shift`` (below 0, ``b`` hedges more and scores worse). For
    ``t ~ U(0.05, 0.95)``, ``b``'s is ``(1 - lam)^2 E(t - 1/2)^2 + E t(1 - t)`` with
    ``E(t - 1/2)^2 = 0.9^2 / 12``; ``a``'s comes from :func:`expected_scores` with ``b``
    stating ``t`` (which, like the hedged one, draws nothing, so ``a``'s draws are the
    same). Computed on first use, not at import."""
    spread = 0.9**2 / 12
    a_brier = expected_scores(replace(design, b="truth"))["a"][0]
    noise = a_brier - (0.25 - spread)  # E t(1 - t) = 1/4 - spread
    return 1.0 - float(np.sqrt(noise / spread)) + design.shift


def _hedged(design: ForecastDesign, shift: float = 0.0) -> ForecastDesign:
    """``design`` with a hedged ``b`` whose slope is :func:`slope`'s."""
    return replace(design, b="hedged", shift=shift)


def sample(design: ForecastDesign, n: int, gen: np.random.Generator) -> pd.DataFrame:
    """One study of ``n`` questions: rows ``model, question, cluster, probability,
    outcome``."""
    t = _latent(design, n, gen)
    cluster = np.arange(n) // design.cluster_size
    y = (gen.uniform(size=n) < _outcome_probability(design, t, cluster, gen)).astype(int)
    a, b = _forecasts(design, t, cluster, gen)
    q = np.arange(n)
    return pd.DataFrame({"model": np.repeat(["a", "b"], n), "question": np.tile(q, 2),
                         "cluster": np.tile(cluster, 2), "probability": np.concatenate([a, b]),
                         "outcome": np.tile(y, 2)})


FORECAST_DESIGNS = {d.name: d for d in [
    ForecastDesign("uniform, noise 0.1 vs 0.1"),
    ForecastDesign("heaped on 0.05 (0 and 1 stated), noise 0.15 vs 0.15", sd_a=0.15,
                   sd_b=0.15, heaped=True),
    ForecastDesign("rare outcomes (Beta(0.5, 9.5)), logit noise 0.5 vs 0.5", latent="rare",
                   scale="logit", sd_a=0.5, sd_b=0.5),
    _hedged(ForecastDesign("sharp (noise 0.15) vs hedged, equal Brier", sd_a=0.15,
                           b="hedged")),
    ForecastDesign("topic errors (sd 0.15) by 10 questions, noise 0.05 vs 0.05", sd_a=0.05,
                   sd_b=0.05, topic_sd=0.15, cluster_size=10),
    ForecastDesign("outcome shocks shared by 10 questions (logit sd 1)", cluster_size=10,
                   shock_sd=1.0),
    # added with the skew-corrected comparison, held out from its choice: skewed nulls
    # of another noise and with clusters, and skewed alternatives in both directions
    _hedged(ForecastDesign("logit noise 1.0 vs hedged, equal Brier", scale="logit",
                           sd_a=1.0, b="hedged")),
    _hedged(ForecastDesign("sharp (noise 0.1, topic errors sd 0.1 by 5) vs hedged, equal "
                           "Brier", sd_a=0.1, topic_sd=0.1, cluster_size=5, b="hedged")),
    _hedged(ForecastDesign("power: sharp (noise 0.15) vs over-hedged (slope - 0.1)",
                           sd_a=0.15, b="hedged"), shift=-0.1),
    _hedged(ForecastDesign("power: sharp (noise 0.15) vs under-hedged (slope + 0.1)",
                           sd_a=0.15, b="hedged"), shift=0.1),
    ForecastDesign("power: noise 0.1 vs 0.2", b="noisier", sd_b=0.2),
    ForecastDesign("power: heaped, noise 0.1 vs 0.2", b="noisier", sd_b=0.2, heaped=True),
    ForecastDesign("power: outcome shocks by 10, noise 0.1 vs 0.2", b="noisier", sd_b=0.2,
                   cluster_size=10, shock_sd=1.0),
    ForecastDesign("power: topic errors (sd 0.15) by 10, noise 0.05 vs 0.15", sd_a=0.05,
                   b="noisier", sd_b=0.15, topic_sd=0.15, cluster_size=10),
]}
