"""Reading the field's conditional-forecasting result files into the pairs table."""

from __future__ import annotations

import json
from pathlib import Path

import pandas as pd

from .._validation import param_error, require_columns
from ._pairs import REQUIRED_TABLE

__all__ = [
    "read_pairs",
]

#: result-file key -> column of the pairs table (docs/design.md)
_JSON_KEYS = {
    "pair_id": "pair", "category": "category", "p_a": "p_a", "p_a_given_b1": "p_a_given_b1",
    "p_a_given_b0": "p_a_given_b0", "resolution_a": "a_outcome", "resolution_b": "b_outcome",
    "p_b": "p_b", "p_b_given_a1": "p_b_given_a1", "p_b_given_a0": "p_b_given_a0",
}
_REQUIRED_JSON = ("pair_id", "category", "p_a", "p_a_given_b1", "p_a_given_b0",
                  "resolution_a", "resolution_b")
_REVERSE_JSON = ("p_b", "p_b_given_a1", "p_b_given_a0")




# --------------------------------------------------------------------------- reading
def read_pairs(path: str | Path) -> pd.DataFrame:
    """Read a pairs result file into the pairs table of the design notes (docs/design.md).

    Parameters
    ----------
    path : str or pathlib.Path
        A ``.json`` result file of the field's layout, or a ``.csv`` /
        ``.parquet`` file with the pairs columns of docs/design.md.

    Returns
    -------
    pandas.DataFrame
        Columns ``pair, category, p_a, p_a_given_b1, p_a_given_b0, a_outcome,
        b_outcome``, then ``p_b, p_b_given_a1, p_b_given_a0`` when any record
        has them (NaN where a record lacks them), then ``model`` when the
        file's ``metadata`` names one. Outcomes are returned as stored (the
        field writes them as floats 0.0 / 1.0).

    Raises
    ------
    ValueError
        When the file's layout is not recognised or a record lacks a required
        key (the message names the key and the first offending records).

    Notes
    -----
    The JSON layout is an object whose ``results`` list holds one record per
    pair with ``pair_id, category, p_a, p_a_given_b1, p_a_given_b0,
    resolution_a, resolution_b`` and, when elicited both ways, ``p_b,
    p_b_given_a1, p_b_given_a0``; ``metadata.model`` becomes the ``model``
    column. Every other key (question texts, the file's own derived numbers
    such as ``improvement``) is ignored: the toolkit recomputes them. Nothing
    is dropped: a record with a null probability keeps NaN, and
    :func:`conditional_forecasting` will then name that row.

    Examples
    --------
    >>> import json, tempfile, os
    >>> rec = {"pair_id": "x", "category": "strong", "p_a": 0.3, "p_a_given_b1": 0.6,
    ...        "p_a_given_b0": 0.2, "resolution_a": 1.0, "resolution_b": 0.0}
    >>> with tempfile.TemporaryDirectory() as d:
    ...     path = os.path.join(d, "run.json")
    ...     with open(path, "w") as f:
    ...         json.dump({"results": [rec], "metadata": {"model": "m"}}, f)
    ...     table = read_pairs(path)
    >>> table.columns.tolist()
    ['pair', 'category', 'p_a', 'p_a_given_b1', 'p_a_given_b0', 'a_outcome', 'b_outcome', 'model']
    """
    path = Path(path)
    suffix = path.suffix.lower()
    if suffix == ".json":
        return _read_pairs_json(path)
    if suffix == ".csv":
        table = pd.read_csv(path)
    elif suffix in (".parquet", ".pq"):
        table = pd.read_parquet(path)
    else:
        raise ValueError(param_error("path", "read_pairs",
                                     "a .json, .csv or .parquet file", str(path)))
    require_columns(table, REQUIRED_TABLE, owner="read_pairs")
    return table


def _read_pairs_json(path: Path) -> pd.DataFrame:
    with path.open(encoding="utf-8") as f:
        data = json.load(f)
    if not isinstance(data, dict) or not isinstance(data.get("results"), list):
        raise ValueError(f"read_pairs: {str(path)!r} must hold a JSON object with a 'results' "
                         f"list; got {type(data).__name__}"
                         + (f" with keys {sorted(data)[:10]}" if isinstance(data, dict) else "")
                         + ".")
    records = data["results"]
    if not records:
        raise ValueError(f"read_pairs: the 'results' list of {str(path)!r} is empty.")
    for key in _REQUIRED_JSON:
        bad = [i for i, r in enumerate(records) if not isinstance(r, dict) or key not in r]
        if bad:
            shown = ", ".join(str(i) for i in bad[:5]) + (", ..." if len(bad) > 5 else "")
            raise ValueError(f"read_pairs: key '{key}' is missing from {len(bad)} record(s) of "
                             f"'results' in {str(path)!r} (first: {shown}).")
    keys = list(_REQUIRED_JSON)
    if any(k in r for r in records for k in _REVERSE_JSON):
        keys += list(_REVERSE_JSON)
    table = pd.DataFrame({_JSON_KEYS[k]: [r.get(k) for r in records] for k in keys})
    for k in keys:
        col = _JSON_KEYS[k]
        if col not in ("pair", "category"):
            table[col] = pd.to_numeric(table[col].astype(object), errors="coerce")
    meta = data.get("metadata")
    if isinstance(meta, dict) and meta.get("model") is not None:
        table["model"] = str(meta["model"])
    return table
