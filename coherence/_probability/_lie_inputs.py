"""Input checks of :func:`random_forest_baseline` (``coherence._probability._lie``): the
forest's options against a user's estimator, and the values of the tables against the
network's states."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .._validation import column_error
from .._validation import is_bool
from .._validation import param_error
from .._validation import plain_value

__all__ = ["forest_options", "require_known_states"]


def forest_options(estimator: Any, n_estimators: Any, min_samples_leaf: Any, n_splits: Any,
                   owner: str) -> tuple[int, tuple[int, ...], int]:
    """The forest's options, their defaults for None; ``TypeError`` naming the options given
    beside ``estimator`` (they would go unused without a word)."""
    given = {"n_estimators": n_estimators, "min_samples_leaf": min_samples_leaf,
             "n_splits": n_splits}
    passed = [name for name, value in given.items() if value is not None]
    if estimator is not None and passed:
        raise TypeError(
            f"{owner}: {', '.join(map(repr, passed))} given together with 'estimator'; the "
            "estimator is fitted as it is (no forest, no grid search), so the forest's "
            "options would go unused. Pass one or the other.")
    return (200 if n_estimators is None else n_estimators,
            (1, 5, 20, 50) if min_samples_leaf is None else min_samples_leaf,
            5 if n_splits is None else n_splits)


def require_known_states(states: Any, gt: pd.DataFrame, ctx: pd.DataFrame, q: pd.DataFrame,
                         evidence: list[Any], query_columns: tuple[str, str],
                         owner: str) -> None:
    """Raise naming the variable, the values, the rows and the valid states where the
    evidence columns of ``gt`` or ``ctx``, or the states of ``q`` (its columns
    ``query_columns``, variable and state), hold a value that is not among its variable's
    ``states`` (the network's; None: no check): the forests would meet a category no
    variable has, a misspelling predicted as unseen. A bool is no state of a variable
    whose states are not bools (``True == 1``)."""
    if states is None:
        return
    if not isinstance(states, Mapping):
        raise TypeError(param_error("states", owner, "a mapping of each variable to its "
                                    "states (e.g. bayesnets.Network.states)", type(states)))
    _check_states(states, {"ground_truth": gt, "contexts": ctx}, evidence, owner)
    _check_states(states, {"queries": q}, [], owner, variable=query_columns[0],
                  state=query_columns[1])


def _check_states(states: Mapping[Any, Any], tables: dict[str, pd.DataFrame],
                  columns: list[Any], owner: str, *, variable: str | None = None,
                  state: str | None = None) -> None:
    for name, df in tables.items():
        every = np.ones(len(df), dtype=bool)
        pairs = [(str(c), df[c], every) for c in columns]
        if variable is not None and state is not None:
            names = df[variable].astype(object)
            pairs = [(str(v), df[state], (names == v).to_numpy()) for v in pd.unique(names)]
        for col, values, rows in pairs:
            if col not in states:
                continue
            valid = list(states[col])
            bools = all(is_bool(s) for s in valid)
            known = set(valid)
            raw = values.astype(object).to_numpy()
            bad = [i for i, v in enumerate(raw) if rows[i] and not pd.isna(v) and (
                v not in known or is_bool(v) != bools)]
            if bad:
                raise ValueError(column_error(
                    state if variable is not None and state is not None else col,
                    f"hold states of variable '{col}' in '{name}' (one of "
                    f"{[plain_value(s) for s in valid]}, as 'states' gives them)",
                    list(df.index[bad]), raw[bad], owner=owner))

