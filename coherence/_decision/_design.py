"""Design handling shared by the tests of action on belief: evidence and role columns.

Private helpers of :mod:`coherence._decision._citest` and
:mod:`coherence._decision._leakage` (and of
any test that takes ``belief``, ``action``, ``outcome``, ``group`` and a list of
``evidence`` columns). Messages follow the template of :mod:`coherence._validation`.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from .._validation import DECIMAL_SLACK
from .._validation import check_case_distinct
from .._validation import param_error
from .._validation import require_columns
from .._warnings import DegenerateDataWarning

__all__ = ["ENGINES", "category_values", "check_resolution", "distinct_roles",
           "evidence_columns", "holds_python_floats", "no_reversed_pairs", "numeric_evidence",
           "require_design_columns", "warn_constant_belief"]

#: Values this far apart differ in what was stated (a third decimal); a ``resolution``
#: that snaps them together pools them instead of tying floating-point noise.
STATED_GAP = 1e-3

#: the classifiers of the leakage test (``leakage_test(engine=)``, ``report(engine=)``)
ENGINES = ("catboost", "logistic")


def evidence_columns(evidence: Any, owner: str) -> tuple[str, ...]:
    """The ``evidence`` argument as a tuple of column names (one name may be a str).

    Raises
    ------
    TypeError
        When ``evidence`` is not a str or a sequence of str.
    ValueError
        When a column is named twice (the tests would disagree on it: one refused it,
        the other conditioned on it once).
    """
    if isinstance(evidence, str):
        return (evidence,)
    if not isinstance(evidence, Sequence) or not all(isinstance(e, str) for e in evidence):
        raise TypeError(param_error("evidence", owner, "a sequence of column names", evidence))
    repeated = sorted({e for e in evidence if list(evidence).count(e) > 1})
    if repeated:
        raise ValueError(param_error("evidence", owner, "columns named once each (named twice: "
                                     f"{', '.join(repeated)})", list(evidence)))
    return tuple(evidence)


def distinct_roles(roles: Mapping[str, str | None], owner: str) -> None:
    """Raise when two role parameters name one column (``action='outcome'`` left with
    ``outcome='outcome'``): the column would be tested against itself, a certain
    dependence (or a certain independence) that no data could change. ``None`` roles
    (optional columns not asked for) are skipped.

    Raises
    ------
    ValueError
        Naming both parameters and the column.
    """
    seen: dict[str, str] = {}
    for name, column in roles.items():
        if column is None:
            continue
        if column in seen:
            raise ValueError(param_error(name, owner, f"a column other than the "
                                         f"{seen[column]!r} parameter's (one column cannot "
                                         "play two roles)", column))
        seen[column] = name


def no_reversed_pairs(pairs: Sequence[tuple[Any, Any]], keys: Sequence[tuple[str, str]],
                      owner: str) -> None:
    """Raise when ``pairs`` holds a pair and its reverse (``keys`` their labels' keys, in
    order): the two state opposite directions of one share, so an agent whose share moves
    at all violates one of them, and a test pooling them finds violations in any data.

    Raises
    ------
    ValueError
        Naming the first such pair.
    """
    seen = set(keys)
    for pair, (k1, k2) in zip(pairs, keys, strict=True):
        if (k2, k1) in seen:
            raise ValueError(param_error(
                "pairs", owner, "free of a pair and its reverse (they state opposite "
                "directions of one share, so any share that moves violates one of them; "
                "direction='decreasing' tests the other direction)", tuple(pair)))


def require_design_columns(df: pd.DataFrame, roles: Mapping[str, str | None],
                           evidence: tuple[str, ...], owner: str) -> None:
    """Raise the missing-column error for the role columns and ``evidence[j]`` columns,
    and :func:`distinct_roles`' error when two roles name one column.

    ``None`` roles (optional columns not asked for) are skipped.
    """
    distinct_roles(roles, owner)
    require_columns(df, {**roles, **{f"evidence[{j}]": e for j, e in enumerate(evidence)}},
                    owner=owner)
    # 'Male' / 'male', 1 / '1', True / 'True' (a CSV-read table beside one built in
    # Python): one label typed two ways, split into two classes silently
    labels = [c for c in (roles.get("action"), roles.get("outcome"), *evidence)
              if c is not None and not pd.api.types.is_float_dtype(df[c].dtype)]
    for column in dict.fromkeys(labels):
        check_case_distinct(df, column, owner=owner)


def warn_constant_belief(p: np.ndarray, belief: str, owner: str, consequence: str) -> None:
    """A :class:`DegenerateDataWarning` when the belief column ``p`` holds one value:
    a test of action on belief then conditions on nothing the agent stated (on the
    evidence alone), which ``consequence`` says for the test. Called by a test's input
    layer (``stacklevel`` points at the caller of the public function)."""
    if len(p) and np.ptp(p) == 0.0:
        warnings.warn(f"{owner}: column '{belief}' is constant ({p[0]}); {consequence}.",
                      DegenerateDataWarning, stacklevel=4)


def numeric_evidence(df: pd.DataFrame, evidence: tuple[str, ...]) -> pd.DataFrame:
    """``df`` with each evidence column of Python numbers held as objects (a table read
    from JSON or a database, or built row by row) in the float dtype the same numbers get
    in a column of their own: floats are continuous evidence however they are stored, not
    one class per value. Columns of integers, strings, bools or mixed labels are left as
    they are (discrete either way)."""
    changed = {c: df[c].astype(float) for c in dict.fromkeys(evidence)
               if holds_python_floats(df[c])}
    return df.assign(**changed) if changed else df


def holds_python_floats(s: pd.Series) -> bool:
    """Whether ``s`` holds Python floats as objects (alone or with integers; a table read
    from JSON or built row by row): continuous values, as the same numbers in a float
    column, not one class per value."""
    return pd.api.types.is_object_dtype(s.dtype) and pd.api.types.infer_dtype(
        s, skipna=True) in ("floating", "mixed-integer-float")


def category_values(df: pd.DataFrame, columns: tuple[str, ...]) -> pd.DataFrame:
    """``df`` with each pandas categorical among ``columns`` as its values (object, or the
    numbers' dtype), so that codes sorted by value follow the labels, not the order of the
    dtype's categories nor categories no row has: the same labels, however spelt, get the
    same codes (and the same strata, blocks and random draws)."""
    changed = {c: df[c].astype(object).infer_objects() for c in dict.fromkeys(columns)
               if isinstance(df[c].dtype, pd.CategoricalDtype)}
    return df.assign(**changed) if changed else df


def check_resolution(columns: Sequence[tuple[str, np.ndarray]], resolution: float,
                     owner: str) -> None:
    """Raise when snapping to integer multiples of ``resolution`` merges values of a column
    ``STATED_GAP`` or more apart: ``resolution`` ties floating-point noise (0.1 + 0.2 and
    0.3), and a coarser one (``resolution=2`` read as two decimals) silently pools distinct
    beliefs into one conditioning value. The gap is read on the stated numbers (up to
    ``DECIMAL_SLACK``): 0.013 - 0.012 is 0.0009999999999999992 in floating point."""
    for name, values in columns:
        v = np.unique(values)
        if not len(v):
            continue
        _, first = np.unique(np.round(v / resolution), return_index=True)
        last = np.append(first[1:] - 1, len(v) - 1)
        span = v[last] - v[first]
        if span.max() >= STATED_GAP - DECIMAL_SLACK:
            j = int(np.argmax(span))
            raise ValueError(param_error(
                "resolution", owner, f"fine enough to keep distinct {name} values apart (it "
                f"ties floating-point noise; it merged {v[first[j]]:.6g} and "
                f"{v[last[j]]:.6g}: {len(v)} distinct values into {len(first)}; round the "
                "values beforehand to pool them)", resolution))
