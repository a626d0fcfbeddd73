"""The leakage test's two engines (a spline logistic regression, CatBoost): the base and
full models' out-of-fold log-losses under grouped K-fold cross-validation, and the
units and blocks of the outcome permutation."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._cmi import combine
from ._leakage_null import PROBABILITY_FLOOR
from ._leakage_null import with_outcome
from ._permutation import block_layout
from ._permutation import outcome_units

__all__ = ["Evidence", "base_designs", "oof_losses", "permutation_blocks"]


def _spline_features(p: np.ndarray, n_knots: int, fit_on: np.ndarray) -> np.ndarray:
    from sklearn.preprocessing import SplineTransformer

    if np.ptp(fit_on) == 0.0:
        return p[:, None].copy()
    spline = SplineTransformer(n_knots=n_knots, degree=3, knots="quantile",
                               extrapolation="linear")
    spline.fit(fit_on[:, None])
    return np.asarray(spline.transform(p[:, None]))


@dataclass(frozen=True, slots=True)
class Evidence:
    """Validated evidence: numeric columns (float) and categorical ones (codes 0..L-1)."""

    numeric: np.ndarray
    codes: np.ndarray
    n_levels: tuple[int, ...]

    @property
    def stratum(self) -> np.ndarray:
        """One code per row for the combination of the categorical columns."""
        n = len(self.numeric)
        return combine([self.codes[:, j] for j in range(self.codes.shape[1])], n)


def _logistic_base_design(p: np.ndarray, ev: Evidence, options: Mapping[str, Any],
                          train: np.ndarray) -> np.ndarray:
    """Splines of the belief (knots from the training rows), one-hot categorical evidence,
    standardised numeric evidence and (``interactions``) their products with the splines."""
    basis = _spline_features(p, int(options["n_knots"]), p[train])
    evidence_parts: list[np.ndarray] = []
    for j, levels in enumerate(ev.n_levels):
        if levels > 1:
            evidence_parts.append(np.eye(levels)[ev.codes[:, j]])  # every level
    if ev.numeric.shape[1]:  # a column constant in training is 0 there (0.3's sd: 5.6e-17)
        fit, constant = ev.numeric[train], np.ptp(ev.numeric[train], axis=0) == 0.0
        mu = np.where(constant, fit[0], fit.mean(axis=0))
        sd = np.where(constant, 1.0, fit.std(axis=0))
        evidence_parts.append((ev.numeric - mu) / sd)
    parts = [basis, *evidence_parts]
    if options["interactions"] and evidence_parts:
        x = np.column_stack(evidence_parts)
        parts.append((x[:, :, None] * basis[:, None, :]).reshape(len(p), -1))
    return np.column_stack(parts)


def _fit_predict_logistic(features: np.ndarray, a: np.ndarray, train: np.ndarray,
                          test: np.ndarray, n_classes: int, options: Mapping[str, Any],
                          seed: int) -> np.ndarray:
    from sklearn.linear_model import LogisticRegression

    model = LogisticRegression(C=float(options["C"]), solver="newton-cholesky", max_iter=200)
    model.fit(features[train], a[train])
    proba = np.zeros((len(test), n_classes))
    proba[:, model.classes_] = model.predict_proba(features[test])
    return proba


def _fit_predict_catboost(features: pd.DataFrame, cat_features: list[int], a: np.ndarray,
                          groups: np.ndarray, train: np.ndarray, test: np.ndarray,
                          n_classes: int, options: Mapping[str, Any], seed: int) -> np.ndarray:
    from catboost import CatBoostClassifier

    params: dict[str, Any] = {
        "depth": int(options["depth"]), "iterations": int(options["iterations"]),
        "loss_function": "MultiClass", "random_seed": int(seed % (2**31 - 1)),
        "thread_count": int(options["thread_count"]), "verbose": False,
        "allow_writing_files": False, "class_names": list(range(n_classes)),
        "cat_features": cat_features,
    }
    if options.get("learning_rate") is not None:
        params["learning_rate"] = float(options["learning_rate"])
    fit_rows, eval_rows = train, None
    if options["early_stopping"]:
        # inner grouped split: one fifth of the training contexts for early stopping
        inner_groups = np.unique(groups[train])
        if len(inner_groups) >= 5:
            gen = np.random.default_rng(seed)
            held = gen.choice(inner_groups, size=max(1, len(inner_groups) // 5), replace=False)
            in_eval = np.isin(groups[train], held)
            if len(np.unique(a[train][~in_eval])) == len(np.unique(a[train])):
                fit_rows, eval_rows = train[~in_eval], train[in_eval]
    model = CatBoostClassifier(**params)
    rows = features.iloc
    if eval_rows is not None:
        model.fit(rows[fit_rows], a[fit_rows], eval_set=(rows[eval_rows], a[eval_rows]),
                  early_stopping_rounds=50, use_best_model=True)
    else:
        model.fit(rows[fit_rows], a[fit_rows])
    return np.asarray(model.predict_proba(rows[test]), dtype=np.float64)


def _catboost_frame(p: np.ndarray, ev: Evidence) -> tuple[pd.DataFrame, list[int]]:
    """The catboost features: belief, numeric evidence, categorical evidence (codes, declared
    as ``cat_features``); the outcome column is added by the full model."""
    cols: dict[str, np.ndarray] = {"belief": p}
    for j in range(ev.numeric.shape[1]):
        cols[f"num{j}"] = ev.numeric[:, j]
    for j in range(ev.codes.shape[1]):
        cols[f"cat{j}"] = ev.codes[:, j]
    first_cat = 1 + ev.numeric.shape[1]
    return pd.DataFrame(cols), list(range(first_cat, first_cat + ev.codes.shape[1]))


def base_designs(engine: str, p: np.ndarray, ev: Evidence,
                  folds: list[tuple[np.ndarray, np.ndarray]],
                  options: Mapping[str, Any]) -> list[np.ndarray]:
    """Per-fold logistic design matrices that do not involve the outcome (computed once);
    empty for catboost, whose features do not depend on the fold."""
    if engine == "logistic":
        return [_logistic_base_design(p, ev, options, train) for train, _ in folds]
    return []


def oof_losses(engine: str, designs: list[np.ndarray], p: np.ndarray, ev: Evidence,
                y: np.ndarray | None, a: np.ndarray, groups: np.ndarray,
                folds: list[tuple[np.ndarray, np.ndarray]], n_classes: int,
                options: Mapping[str, Any], seeds: np.ndarray) -> np.ndarray:
    """Per-row out-of-fold log-loss of one model (base when ``y is None``)."""
    loss = np.empty(len(a))
    if engine == "catboost":
        frame, cat_features = _catboost_frame(p, ev)
        if y is not None:
            frame["outcome"] = y.astype(np.float64)
    for f, ((train, test), seed) in enumerate(zip(folds, seeds, strict=True)):
        if engine == "logistic":
            features = with_outcome(designs[f], p, y)
            proba = _fit_predict_logistic(features, a, train, test, n_classes, options,
                                          int(seed))
        else:
            proba = _fit_predict_catboost(frame, cat_features, a, groups, train, test,
                                          n_classes, options, int(seed))
        picked = proba[np.arange(len(test)), a[test]]
        loss[test] = -np.log(np.maximum(picked, PROBABILITY_FLOOR))
    return loss


def permutation_blocks(p: np.ndarray, ev: Evidence, y: np.ndarray, groups: np.ndarray,
                       k_perm: int) -> tuple[str, np.ndarray, np.ndarray]:
    """The units of the outcome permutation and the block of each: ``(permute, y of each
    unit, block id of each unit)``.

    When the outcome is constant within every context the units are contexts, matched
    as in :func:`coherence.ci_test` on ``[categorical evidence stratum, mean belief,
    mean numeric evidence]`` (when the categorical evidence varies within contexts, the
    stratum is dropped and the belief summarised by the context's level once the
    evidence effects are removed); otherwise the units are rows, matched on their own
    values. Tied units form exact blocks; units alone in their values merge with adjacent
    lone units of their stratum into blocks of at least ``k_perm`` (``block_layout(...,
    keep_ties=True)``, as ci_test's plug-in); a unit alone in its stratum never moves.
    """
    n_groups = int(groups.max()) + 1
    stratum = ev.stratum
    z = np.round(np.column_stack([p, ev.numeric]), 12)
    y_group = np.bincount(groups, weights=y, minlength=n_groups) / np.bincount(
        groups, minlength=n_groups)
    if np.all((y_group == 0.0) | (y_group == 1.0)):
        permute = "outcomes"
        y_unit, unit_cond = outcome_units(y, p, z, stratum, groups)
        unit_cond = np.round(unit_cond, 12)
    else:
        permute = "rows"
        y_unit = y.copy()
        unit_cond = np.column_stack([stratum.astype(np.float64), z])
    block_start, order = block_layout(unit_cond, np.ones(len(y_unit), np.int64), k_perm,
                                      keep_ties=True)
    block = np.empty(len(y_unit), dtype=np.int64)
    block[order] = np.repeat(np.arange(len(block_start) - 1), np.diff(block_start))
    return permute, y_unit.astype(np.int64), block
