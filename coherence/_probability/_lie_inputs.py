"""Input checks of :func:`random_forest_baseline` (``coherence._probability._lie``): the
forest's options against a user's estimator, the values of the tables against the
network's states, and the tables' labels, evidence and states against each other."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from .._validation import case_collisions
from .._validation import collisions_text
from .._validation import column_error
from .._validation import first_of
from .._validation import is_bool
from .._validation import listed
from .._validation import no_missing
from .._validation import param_error
from .._validation import plain_repr
from .._validation import plain_value

__all__ = [
    "forest_options",
    "require_every_state",
    "require_known_states",
    "require_matching_labels",
    "require_one_evidence_per_context",
]


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


def _distinct(values: Any) -> list[Any]:
    """The distinct labels of ``values``, a bool kept apart from the number it equals
    (``pd.unique`` pools ``True`` with ``1``)."""
    s = pd.Series(values).dropna()
    if s.dtype != object:  # one type throughout: nothing to keep apart
        return list(pd.unique(s.astype(object)))
    out: dict[tuple[bool, Any], Any] = {}
    for v in s.tolist():
        out.setdefault((is_bool(v), v), v)
    return list(out.values())


def _spelled_otherwise(known: Any, asked: Any) -> tuple[list[Any], list[tuple[Any, ...]]]:
    """The values of ``asked`` not among ``known``, and the groups of labels in which such a
    value reads as one of ``known`` (``'1'`` and ``1``, ``'Yes'`` and ``'yes'``, ``True``
    and ``1``: equal in Python, so pandas would pool them without a word)."""
    known = _distinct(known)
    seen = {(is_bool(v), v) for v in known}
    unknown = [v for v in _distinct(asked) if (is_bool(v), v) not in seen]
    missing = {(is_bool(v), v) for v in unknown}
    clash = [g for g in case_collisions([*known, *unknown])
             if any((is_bool(v), v) in missing for v in g)]
    clash += [(u, k) for u in unknown for k in known if is_bool(u) != is_bool(k) and u == k]
    return unknown, clash


def require_matching_labels(gt: pd.DataFrame, ctx: pd.DataFrame, q: pd.DataFrame,
                             evidence: list[Any], variables: list[Any], variable: str,
                             state: str, owner: str) -> None:
    """Raise where the contexts' evidence or the queried states write a label otherwise than
    the ground truth (``'1'`` against ``1``, as a table read from a CSV or JSON file gives
    it): the forests would meet an evidence value they never saw, or count the state as
    never seen (P(z|x) = 0, P(y|x,z) = P(y|x)), and the baseline would be wrong without a
    word; and where none of a variable's queried states occurs in the ground truth."""
    for col in evidence:
        _, clash = _spelled_otherwise(gt[col], ctx[col])
        if clash:
            raise ValueError(
                f"{owner}: column '{col}' of 'contexts' writes evidence otherwise than "
                f"'ground_truth' ({collisions_text(clash)}: one label typed two ways); the forests "
                "would never have seen the contexts' values (or, True against 1, would take "
                "one for the other without a word). Give the column one type and spelling "
                "in both tables.")
    for v in variables:
        asked = q.loc[(q[variable].astype(object) == v).to_numpy(), state]
        unknown, clash = _spelled_otherwise(gt[str(v)], asked)
        if clash or (unknown and len(unknown) == asked.nunique()):
            what = (f"writes states of '{v}' otherwise than column '{v}' of 'ground_truth' "
                    f"({collisions_text(clash)}: one label typed two ways)" if clash else
                    f"holds no state of '{v}' that column '{v}' of 'ground_truth' holds "
                    f"(queried {first_of(unknown)}, ground truth "
                    f"{first_of(pd.unique(gt[str(v)].dropna()))})")
            raise ValueError(
                f"{owner}: column '{state}' of 'queries' {what}; a state not in the ground "
                "truth counts as never seen (P(z|x) = 0), and the baseline would be wrong. "
                "Write the states as the ground truth does.")


def require_one_evidence_per_context(ctx: pd.DataFrame, q: pd.DataFrame, context: str,
                                      evidence: list[Any], owner: str) -> None:
    """Raise naming the rows where ``contexts`` misses an evidence value (it was encoded as
    none of the column's values, all its one-hot columns 0: the forests predicted for
    evidence no context has) or lists one context id with different evidence (the last row
    listed was used, without a word), a row repeated as it is being harmless; and naming
    the contexts of ``queries`` that ``contexts`` lacks."""
    no_missing(ctx, evidence, owner=owner)
    _, clash = _spelled_otherwise(ctx[context], q[context])
    if clash:
        shown = collisions_text(clash)
        raise ValueError(
            f"{owner}: column '{context}' of 'queries' writes context ids otherwise than "
            f"'contexts' ({shown}: one id typed two ways); the queries would be matched to "
            "no context, or to another. Give the column one type in both tables.")
    keyed = ctx[evidence].astype(object).assign(_context_id=ctx[context].astype(object))
    distinct = keyed.drop_duplicates()
    varied = distinct.loc[distinct["_context_id"].duplicated(keep=False), "_context_id"]
    if varied.empty:
        known = set(keyed["_context_id"])
        missing = [c for c in pd.unique(q[context].astype(object)) if c not in known]
        if missing:
            raise ValueError(f"{owner}: {len(missing)} context(s) of 'queries' are not rows "
                             f"of 'contexts' ({listed(missing, show=plain_repr)}).")
        return
    rows = np.flatnonzero(keyed["_context_id"].isin(varied.unique()).to_numpy())
    raise ValueError(column_error(
        context, "hold each context id with one value of the evidence columns ("
        f"{', '.join(map(repr, evidence))}) in 'contexts'; these rows list one id with "
        "different evidence", list(ctx.index[rows]), keyed["_context_id"].to_numpy()[rows],
        owner=owner))


def require_every_state(q: pd.DataFrame, z_all: dict[Any, tuple[np.ndarray, Any]],
                         context: str, variable: str, state: str, owner: str) -> None:
    """Raise naming the (context, variable) units of ``queries`` that leave out a state of z
    the ground truth holds: the sum over the listed states would lack that state's
    P(y|x,z) P(z|x) term, in the baseline and in the agent's error alike, and the ratio
    would change without a word."""
    for v, (_, levels) in z_all.items():
        known = list(levels)
        zq = q.loc[(q[variable].astype(object) == v).to_numpy()]
        short = []
        for c, states in zq.groupby(zq[context].astype(object), sort=False)[state]:
            seen = {known.index(s) for s in states.astype(object) if s in known}
            if len(seen) < len(known):
                short.append((c, [known[j] for j in range(len(known)) if j not in seen]))
        if short:
            shown = listed([f"({plain_repr(c)}, {plain_repr(v)}) lacks {first_of(miss)}"
                            for c, miss in short], sep="; ")
            raise ValueError(
                f"{owner}: {len(short)} (context, variable) unit(s) of 'queries' do not list "
                f"every state of '{v}' that column '{v}' of 'ground_truth' holds (first: "
                f"{shown}); a state left out counts as P(z|x) = 0 in the sum over states, "
                "so the baseline's error (and the agent's) would be wrong. List every state "
                "of z in every unit.")
