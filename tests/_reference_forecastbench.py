"""Slow, obviously correct reference of the ForecastBench difficulty adjustment.

The two-way fixed-effects model brier = a_model + c_question + e is fitted by
ordinary least squares on an explicit dummy-variable design (one column per
forecaster, one per question, no intercept), with numpy's minimum-norm lstsq. The
difficulty-adjusted score of a forecaster is the mean over its questions of
brier - c_question plus the mean of c over all questions (the rescaling that gives a
forecaster who always says 0.5 the score 0.25).
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def reference_adjusted_brier(df: pd.DataFrame, fe_models=None) -> dict:
    """{model: difficulty-adjusted Brier} for columns model, question, probability, outcome."""
    df = df.assign(brier=(df["probability"] - df["outcome"]) ** 2)
    fit = df if fe_models is None else df[df["model"].isin(fe_models)]
    models = sorted(fit["model"].unique())
    questions = sorted(df["question"].unique())
    design = np.zeros((len(fit), len(models) + len(questions)))
    for r, (m, q) in enumerate(zip(fit["model"], fit["question"], strict=True)):
        design[r, models.index(m)] = 1.0
        design[r, len(models) + questions.index(q)] = 1.0
    coef = np.linalg.lstsq(design, fit["brier"].to_numpy(), rcond=None)[0]
    c = dict(zip(questions, coef[len(models):], strict=True))
    mean_c = float(np.mean(list(c.values())))
    out = {}
    for m, rows in df.groupby("model"):
        out[m] = float(np.mean([b - c[q] for b, q in zip(rows["brier"], rows["question"],
                                                          strict=True)])) + mean_c
    return out
