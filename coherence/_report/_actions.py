"""The action column's labels: the user's own mapped onto the tests' yes/no/defer
(``actions=``), and the tests' labels typed another way refused."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .._decision._iia import MENU_SEPARATOR
from .._validation import column_error
from .._validation import label_text
from .._validation import param_error
from .._validation import require_columns
from ._registry import MENU_COLUMN

__all__ = ["check_action_spelling", "map_actions"]

ACTIONS = ("yes", "no", "defer")


def check_action_spelling(df: pd.DataFrame, action: str, owner: str) -> None:
    """Raise where an action label reads as one of the tests' ``yes``/``no``/``defer`` but
    is spelt otherwise (``'Yes'``, ``'NO'``, ``'defer '``). Labels are compared exactly:
    such rows were no action of the monotonicity test's pairs, which left them out (or
    had no pair to test) with a warning in the report's notes, while the other tests read
    them as a class of their own."""
    values = df[action].to_numpy(dtype=object)
    odd = {v: label_text(v) for v in pd.unique(df[action].dropna())
           if isinstance(v, str) and v not in ACTIONS and label_text(v) in ACTIONS}
    if not odd:
        return
    hit = np.flatnonzero(np.isin(values, list(odd)))
    mapping = ", ".join(f"{t!r}: {v!r}" for v, t in odd.items())
    raise ValueError(column_error(
        action, "hold the tests' action labels 'yes', 'no' and 'defer' as written (compared "
        f"exactly, case included; found {', '.join(map(repr, odd))}): rewrite them, or map "
        f"them with actions={{{mapping}}}", list(df.index[hit]), list(values[hit]),
        owner=owner))


def map_actions(df: pd.DataFrame, action: str, actions: Any, owner: str) -> pd.DataFrame:
    """The table with the user's action labels replaced by the tests' yes/no/defer.

    ``actions`` maps each of ``"yes"``, ``"no"``, ``"defer"`` (some of them) to the
    user's label; every label of the column must then be mapped or already be one of
    the three, else a ``ValueError`` names the unmapped labels and their row counts."""
    ours = ACTIONS
    rule = "a mapping from 'yes', 'no', 'defer' to your action labels (str)"
    if not isinstance(actions, Mapping) or not actions:
        raise TypeError(param_error("actions", owner, rule, actions))
    for key, label in actions.items():
        if key not in ours:
            raise ValueError(param_error("actions", owner, rule + f"; key {key!r} is not "
                                         "one of 'yes', 'no', 'defer'", dict(actions)))
        if not isinstance(label, str) or not label:
            raise TypeError(param_error("actions", owner, rule + f"; the label of {key!r} "
                                        "is not a non-empty str", dict(actions)))
    labels = list(actions.values())
    twice = sorted({v for v in labels if labels.count(v) > 1})
    if twice:
        raise ValueError(param_error("actions", owner, rule + "; each label mapped once "
                                     f"(mapped twice: {', '.join(map(repr, twice))})",
                                     dict(actions)))
    require_columns(df, {"action": action}, owner=owner)
    yours = {label: key for key, label in actions.items()}
    column = df[action]
    present = column.notna().to_numpy()
    text = np.array([str(v) for v in column], dtype=object)
    unmapped = present & ~np.isin(text, [*yours, *ours])
    if unmapped.any():
        labels_, counts = np.unique(text[unmapped].astype(str), return_counts=True)
        order = np.argsort(-counts, kind="stable")[:10]
        shown = ", ".join(f"{str(labels_[i])!r} ({counts[i]} rows)" for i in order)
        raise ValueError(param_error(
            "actions", owner, f"a mapping of every label of column '{action}'; these are "
            f"neither mapped nor 'yes'/'no'/'defer': {shown}", dict(actions)))
    mapped = [yours.get(t, t) if keep else v for t, v, keep in zip(text, column, present,
                                                                    strict=True)]
    if MENU_COLUMN in df.columns:  # the offered actions are spelt like the chosen ones
        df = df.assign(**{MENU_COLUMN: df[MENU_COLUMN].map(
            lambda m: MENU_SEPARATOR.join(yours.get(a.strip(), a.strip())
                                          for a in m.split(MENU_SEPARATOR))
            if isinstance(m, str) else m)})
    if isinstance(column.dtype, pd.CategoricalDtype):  # keep the categories' order
        categories = list(dict.fromkeys(yours.get(str(c), c) for c in column.cat.categories))
        return df.assign(**{action: pd.Categorical(mapped, categories=categories)})
    return df.assign(**{action: pd.Series(mapped, index=df.index, dtype=object)})
