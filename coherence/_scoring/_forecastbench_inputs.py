"""What :func:`forecastbench_scores` reads and checks before it scores: the market options
and the imputation rule, the probabilities with the missing ones imputed, the forecasters
dropped for too many imputed forecasts, each question's kind, and the (question,
forecaster) panel of Brier scores, with the checks that the question fixed effects can be
estimated (every question answered by a fixed-effects forecaster, one connected group)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._parameters import check_choice
from .._validation import column_error
from .._validation import label_values
from .._validation import listed
from .._validation import numeric_column
from .._validation import param_error
from .._validation import plain_repr
from .._validation import plain_value

__all__ = ["IMPUTATION_RULES", "MARKET_ADJUSTMENTS", "QUESTION_TYPES", "BrierPanel",
           "brier_panel", "check_connected", "check_estimable", "check_market_options",
           "count_groups", "imputation_filter", "imputed_probabilities", "model_list",
           "question_type_column"]

#: How the difficulty of market questions is set (ForecastBench's baseline and tournament
#: leaderboards respectively).
MARKET_ADJUSTMENTS = ("two_way_fixed_effects", "market_brier")
#: Rules for missing forecasts: 0.5 everywhere, or the market value on market questions.
IMPUTATION_RULES = ("0.5", "market")
QUESTION_TYPES = ("dataset", "market")


@dataclass(frozen=True, slots=True)
class BrierPanel:
    """The scored forecasts as a (question, forecaster) matrix of Brier scores (NaN where a
    forecaster did not answer), with each question's kind and market Brier score."""

    brier: np.ndarray
    questions: pd.Index
    model_index: pd.Index
    models: tuple[Any, ...]
    is_market: np.ndarray
    market_brier: np.ndarray


def check_market_options(owner: str, market_adjustment: str, impute: str | None,
                          max_imputed: float, question_type: str | None,
                          market_value: str | None) -> tuple[str, str | None, bool]:
    """The validated market adjustment and imputation rule, and whether a market value
    column is needed."""
    market_adjustment = check_choice(market_adjustment, "market_adjustment", owner,
                                     MARKET_ADJUSTMENTS)
    impute = check_choice(impute, "impute", owner, (None, *IMPUTATION_RULES))
    if isinstance(max_imputed, bool) or not isinstance(max_imputed, (int, float)) \
            or not 0.0 <= max_imputed <= 1.0:
        raise ValueError(param_error("max_imputed", owner, "a number in [0, 1]", max_imputed))
    if question_type is None and (market_adjustment == "market_brier" or impute == "market"):
        what = ("market_adjustment='market_brier'" if market_adjustment == "market_brier"
                else "impute='market'")
        raise ValueError(param_error("question_type", owner,
                                     f"a column name with {what} (which questions are markets)",
                                     None))
    needs_value = market_adjustment == "market_brier" or impute == "market"
    if needs_value and market_value is None:
        raise ValueError(param_error("market_value", owner, "a column name with "
                                     "market_adjustment='market_brier' or impute='market'", None))
    return market_adjustment, impute, needs_value


def imputed_probabilities(df: pd.DataFrame, probability: str, impute: str | None,
                           is_market: np.ndarray, value: np.ndarray,
                           owner: str) -> tuple[np.ndarray, np.ndarray]:
    """The forecast probabilities, missing ones imputed by ``impute``, and which were."""
    p = numeric_column(df, probability, owner=owner, allow_nan=impute is not None)
    bad = np.flatnonzero((p < 0.0) | (p > 1.0))
    if len(bad):
        raise ValueError(column_error(probability, "hold probabilities in [0, 1]",
                                      list(df.index[bad]), list(p[bad]), owner=owner))
    imputed = np.isnan(p)
    if impute == "market":
        p = np.where(imputed, np.where(is_market, value, 0.5), p)
    elif impute == "0.5":
        p = np.where(imputed, 0.5, p)
    return p, imputed


def brier_panel(question: pd.Series, model: pd.Series, p: np.ndarray, y: np.ndarray,
                 is_market: np.ndarray, value: np.ndarray) -> BrierPanel:
    """The (question, forecaster) Brier matrix of one forecast per row."""
    q_codes, questions = pd.factorize(label_values(question), sort=True)
    m_codes, model_index = pd.factorize(label_values(model), sort=True)
    brier = np.full((len(questions), len(model_index)), np.nan)
    brier[q_codes, m_codes] = (p - y) ** 2
    q_market = np.zeros(len(questions), dtype=bool)
    q_market[q_codes] = is_market
    q_fixed = np.full(len(questions), np.nan)
    q_fixed[q_codes] = (value - y) ** 2
    # the labels as given (1 stays 1, not '1': compare and the table take what naive takes)
    return BrierPanel(brier, questions, model_index, tuple(plain_value(m) for m in model_index),
                       q_market, q_fixed)


def model_list(values: Any, name: str, column: pd.Series, model: str, owner: str) -> list:
    """A non-empty list of forecasters, each a value of the model column."""
    wanted = [values] if isinstance(values, str) else list(values)
    known = set(column)
    unknown = [m for m in wanted if m not in known]
    if unknown or not wanted:
        raise ValueError(param_error(name, owner, f"a non-empty list of values of '{model}'",
                                     unknown or wanted))
    return wanted


def question_type_column(df: pd.DataFrame, column: str | None, question: str,
                          owner: str) -> np.ndarray:
    """True for market questions; 'dataset' or 'market', one kind per question."""
    if column is None:
        return np.zeros(len(df), dtype=bool)
    s = df[column]
    bad = np.flatnonzero(~s.isin(QUESTION_TYPES).to_numpy())
    if len(bad):
        raise ValueError(column_error(column, "hold 'dataset' or 'market'", list(df.index[bad]),
                                      list(s.iloc[bad]), owner=owner))
    mixed = df.groupby(question, sort=False)[column].transform("nunique").to_numpy() > 1
    if mixed.any():
        raise ValueError(column_error(column, f"be one kind per '{question}'",
                                      list(df.index[np.flatnonzero(mixed)]), owner=owner))
    return (s == "market").to_numpy()


def imputation_filter(df: pd.DataFrame, model: str, question_set: str | None,
                       imputed: np.ndarray, is_market: np.ndarray, split: bool,
                       max_imputed: float, exempt: list) -> tuple[np.ndarray, pd.DataFrame]:
    """Rows kept and the forecasters (per question set) dropped for imputed shares above
    ``max_imputed``: overall, or (``split``) among dataset or among market questions."""
    keys = [df[model].to_numpy()]
    if question_set is not None:
        keys.append(df[question_set].to_numpy())
    frame = pd.DataFrame({"model": keys[0], "question_set": keys[1] if len(keys) > 1 else None,
                          "imputed": imputed, "market": is_market})
    rows = []
    keep = np.ones(len(df), dtype=bool)
    if imputed.any():
        groups = frame.groupby(["model", "question_set"], sort=True, dropna=False)
        for (name, qset), g in groups:
            if name in exempt or not g["imputed"].any():
                continue
            shares = [g["imputed"].mean()]
            for market in (False, True):
                part = g.loc[g["market"] == market, "imputed"]
                shares.append(part.mean() if split and len(part) else np.nan)
            if any(sh > max_imputed for sh in shares if not np.isnan(sh)):
                keep[g.index.to_numpy()] = False
                rows.append({"model": name, "question_set": qset, "n_forecasts": len(g),
                             "n_imputed": int(g["imputed"].sum()), "imputed_share": shares[0],
                             "imputed_share_dataset": shares[1],
                             "imputed_share_market": shares[2]})
    cols = ["model", "question_set", "n_forecasts", "n_imputed", "imputed_share",
            "imputed_share_dataset", "imputed_share_market"]
    return keep, pd.DataFrame(rows, columns=cols)


def check_estimable(brier: np.ndarray, fe: np.ndarray, questions: Any, owner: str) -> None:
    """Every question answered by a fixed-effects forecaster, in one connected group."""
    unanswered = np.flatnonzero(np.isnan(brier[:, fe]).all(axis=1))
    if len(unanswered):
        raise ValueError(f"{owner}: {len(unanswered)} question(s) "
                         f"({listed(questions[unanswered], show=plain_repr)}) have no "
                         "forecast from a fixed-effects forecaster ('fixed_effects_models'), "
                         "so their difficulty cannot be estimated.")
    check_connected(~np.isnan(brier[:, fe]), owner)


def count_groups(z: np.ndarray) -> int:
    """The number of groups of the question-forecaster graph of answers ``z`` (n_q, n_m)
    with no forecaster in common (questions and forecasters without an answer left out)."""
    from scipy.sparse import coo_matrix
    from scipy.sparse.csgraph import connected_components

    q, m = np.nonzero(z)
    n_q, n_m = z.shape
    graph = coo_matrix((np.ones(len(q)), (q, n_q + m)), shape=(n_q + n_m, n_q + n_m))
    _, labels = connected_components(graph, directed=False)
    used = np.concatenate([z.any(axis=1), z.any(axis=0)])
    return len(np.unique(labels[used]))


def check_connected(z: np.ndarray, owner: str) -> None:
    """Raise when the forecaster-question graph has more than one component."""
    n_groups = count_groups(z)
    if n_groups > 1:
        raise ValueError(f"{owner}: the fixed-effects forecasters and their questions form "
                         f"{n_groups} groups with no forecaster in common; "
                         "difficulty-adjusted scores cannot compare forecasters across them.")
