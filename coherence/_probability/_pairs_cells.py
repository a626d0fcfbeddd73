"""The cells of :func:`conditional_forecasting`: runs, failed records, unresolved runs.

Before the Brier-improvement machinery of :mod:`._pairs` sees a table,
:func:`prepare_cells`

* skips failed elicitations (rows with a non-missing ``error``) with a
  :class:`SkippedRecordsWarning` that names them, and counts them per cell and
  category;
* forms the cells, one per run (``run``, ``model``, ``variant`` where present)
  unless ``pool=True``, and refuses a pair that appears twice in a cell;
* splits the cells into those with resolutions (scored on outcomes by
  :func:`._pairs._conditional_forecasting`) and those without (only the metrics
  that need no outcomes);

and :func:`finish_cells` assembles the one table: the outcome-based columns of
unresolved cells NaN with the reason in ``note``, and for every cell the
outcome-free columns, law-of-total-probability feasibility and error on both
sides included.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._results import ConfidenceInterval
from .._rng import check_rng
from .._validation import as_dataframe
from .._validation import check_case_distinct
from .._validation import listed
from .._validation import no_missing
from .._validation import numeric_column
from .._validation import param_error
from .._validation import plain_value
from .._validation import probability_column
from .._validation import require_columns
from .._validation import same_within
from .._warnings import SkippedRecordsWarning
from ._axioms import UPDATE_CLASSES
from ._axioms import bayes_arrays
from ._axioms import below_tol
from ._axioms import classify_updates
from ._axioms import total_probability_error
from ._axioms import total_probability_feasible
from ._pairs_result import EXTRA_TABLE_COLUMNS
from ._pairs_result import PAIRS_COLUMNS
from ._pairs_result import PairsColumnNames
from ._pairs_result import PairsResult
from ._pairs_result import PairsSettings
from ._pairs_result import category_sort_key
from ._pairs_result import failed_rows

__all__ = [
    "CELL_TABLE_COLUMNS",
    "PairsCells",
    "finish_cells",
    "outcome_free_table",
    "prepare_cells",
]

#: Columns the cell machinery appends to :attr:`PairsResult.table`, after the per-pair ones.
CELL_TABLE_COLUMNS: tuple[str, ...] = (
    "n_failed", "resolved", "lotp_feasible_b", "lotp_error_a_mean", "lotp_error_b_mean",
    "note",
)
#: The outcome-free columns of the table (computed for every cell).
_OUTCOME_FREE: tuple[str, ...] = (
    "n", "mean_sensitivity", *UPDATE_CLASSES, "lotp_feasible", "bayes_consistent",
    "bayes_error_mean", "n_bayes", "lotp_feasible_b", "lotp_error_a_mean", "lotp_error_b_mean",
)
#: Name of the combined cell key handed to the array layer when a cell has several columns.
_KEY = "_cell"
_NO_OUTCOMES = ("no resolutions: the Brier improvement, its interval and p-values and the "
                "win rate need a_outcome and b_outcome")
_ALL_FAILED = "every record of this cell and category failed"


@dataclass(frozen=True)
class PairsCells:
    """The validated table of :func:`conditional_forecasting`, split by cell (internal)."""

    frame: pd.DataFrame          # successful rows, the input's index, + the cell key
    positions: np.ndarray        # positions of ``frame``'s rows in the input
    n_input: int
    cell_cols: list[str]
    key: str                     # the ``model`` argument handed to the array layer
    key_values: dict[Any, tuple[Any, ...]]  # combined key -> cell values
    resolved_rows: np.ndarray    # bool per row of ``frame``
    failed: pd.DataFrame         # failed rows: cell columns, "category"
    by: str
    pair: str
    columns: dict[str, str]      # role -> column name
    pool: bool
    tol: float
    eps: float
    confidence_level: float
    test: str
    alternative: str
    ci_method: str
    n_resamples: int

    @property
    def resolved(self) -> pd.DataFrame | None:
        """The rows scored on outcomes (``None`` when no cell has resolutions)."""
        if not self.resolved_rows.any():
            return None
        return self.frame.loc[self.resolved_rows]


def _sort_key(value: Any) -> tuple[int, str]:

    if value is None or (isinstance(value, float) and math.isnan(value)):
        return (99, "")
    return category_sort_key(value)




def _describe(cell_cols: list[str], values: tuple[Any, ...]) -> str:
    return (", ".join(f"{c}={plain_value(v)!r}" for c, v in zip(cell_cols, values, strict=True))
            or "the table")


def prepare_cells(pairs: Any, *, columns: PairsColumnNames,
                  settings: PairsSettings) -> PairsCells:
    """Validate, skip failed rows, form cells and find the resolved ones (see module doc).

    Called by :func:`conditional_forecasting` only: its warnings point two frames up."""

    owner = "conditional_forecasting"
    by, pair, model, pool = columns.by, columns.pair, columns.model, settings.pool
    df = as_dataframe(pairs, name="pairs", owner=owner)
    # the parameters, also when no cell has outcomes (the array layer then never runs)
    confidence_level, test, alternative, ci_method, n_resamples, tol, eps = settings.checked(
        owner)
    if not isinstance(pool, bool | np.bool_):
        raise TypeError(param_error("pool", owner, "a bool", pool))
    check_rng(settings.rng, owner=owner)
    require_columns(df, {"by": by, "p_a": columns.p_a, "p_a_given_b1": columns.p_a_given_b1,
                         "p_a_given_b0": columns.p_a_given_b0}, owner=owner)
    if len(df) == 0:
        raise ValueError(param_error("pairs", owner, "a table with at least one row",
                                     "an empty table"))
    _check_named_columns(df, columns, owner)
    # grouping by a column the computation reads or writes would crash deep inside
    reserved = [_KEY, *columns.probabilities.values(), pair, columns.a_outcome,
                columns.b_outcome, columns.failed]
    if by in reserved:
        raise ValueError(param_error(
            "by", owner, "a category column other than the pair, probability, outcome and "
            f"failed columns and the reserved name {_KEY!r} (reserved: "
            f"{', '.join(map(repr, dict.fromkeys(reserved)))})", by))
    if by in (*PAIRS_COLUMNS[1:], *EXTRA_TABLE_COLUMNS):  # the table's own columns
        raise ValueError(param_error(
            "by", owner, "a category column not named as a column of the result's table "
            "(n, mean_improvement, ci_low, ..., n_bayes); rename it", by))

    if pool:
        cell_cols = [model] if model in df.columns and model != by else []
    else:
        cell_cols = list(dict.fromkeys(c for c in (columns.run, model, columns.variant)
                                       if c in df.columns and c != by))
    is_failed, failed_frame = _skip_failed(df, cell_cols, columns, owner)
    ok = df.loc[~is_failed]
    # 'Strong' / 'strong', 1 / '1', True / 'True' (one run from a CSV, another from
    # JSON): one cell, category or pair, not two
    if pair in ok.columns:
        # a missing id would pool its rows into one pair (a duplicate) or count each row
        # as a pair of its own: neither is what the table says
        no_missing(ok, pair, owner=owner)
    for col in (*cell_cols, by, *([pair] if pair in ok.columns else [])):
        check_case_distinct(ok, col, owner=owner)
    _check_probabilities(ok, columns, owner)
    if pair in ok.columns:
        _check_unique_pairs(ok, cell_cols, columns, bool(pool), owner)
    resolved_rows = _resolved_rows(ok, cell_cols, columns, owner)
    if pair in ok.columns and resolved_rows.any():
        # a pair's resolutions are facts of its two questions: the same in every run, as
        # numbers (1 in one run, '1' read from a CSV in another: one outcome, as
        # attach_outcomes reads them; a value that is no number is compared as written)
        for col in (columns.a_outcome, columns.b_outcome):
            num = pd.to_numeric(ok[col].astype(object), errors="coerce").to_numpy(float)
            values = np.where(np.isnan(num), ok[col].to_numpy(dtype=object), num)
            same_within(ok, values, pair, col, owner=owner, rows=resolved_rows)
    frame, key, key_values = _cell_key(ok, cell_cols, model)
    return PairsCells(
        frame=frame, positions=np.flatnonzero(~is_failed), n_input=len(df), cell_cols=cell_cols,
        key=key, key_values=key_values, resolved_rows=resolved_rows, failed=failed_frame, by=by,
        pair=pair, columns=columns.probabilities, pool=bool(pool), tol=tol, eps=eps,
        confidence_level=confidence_level, test=test, alternative=alternative,
        ci_method=ci_method, n_resamples=n_resamples)


#: the optional columns of conditional_forecasting and their default names
_OPTIONAL_DEFAULTS = {"pair": "pair", "run": "run", "model": "model", "variant": "variant",
                      "failed": "error", "a_outcome": "a_outcome", "b_outcome": "b_outcome",
                      "p_b": "p_b", "p_b_given_a1": "p_b_given_a1",
                      "p_b_given_a0": "p_b_given_a0"}


def _check_named_columns(df: pd.DataFrame, columns: PairsColumnNames, owner: str) -> None:
    """An optional column named otherwise than its default must be in the table: absent, it
    was ignored without a word (``run='session'`` for a column ``'Session'`` pooled the runs;
    ``failed='status'`` kept the failed rows). Under its default name it may be absent."""
    for role, default in _OPTIONAL_DEFAULTS.items():
        name = getattr(columns, role)
        if name != default and name not in df.columns:
            raise ValueError(param_error(
                role, owner, f"a column of 'pairs' when named (only the default {default!r} "
                "may be absent)", name))
    reverse = (columns.p_b, columns.p_b_given_a1, columns.p_b_given_a0)
    present = [c for c in reverse if c in df.columns]
    if 0 < len(present) < len(reverse):  # the Bayes columns were NaN without a word
        absent = [c for c in reverse if c not in df.columns]
        raise ValueError(
            f"{owner}: the reverse elicitation needs all three columns "
            f"{', '.join(map(repr, reverse))}; 'pairs' has {', '.join(map(repr, present))} "
            f"but not {', '.join(map(repr, absent))} (name them with p_b=, p_b_given_a1=, "
            "p_b_given_a0=, or drop the reverse columns for a one-direction run).")


def _skip_failed(df: pd.DataFrame, cell_cols: list[str], columns: PairsColumnNames,
                 owner: str) -> tuple[np.ndarray, pd.DataFrame]:
    """Failed elicitations: skipped (True in the mask), named in a warning and returned
    with their cell columns and category, for counting."""
    by, pair, failed = columns.by, columns.pair, columns.failed
    # False, 0 and a blank string say "no error", as attach_outcomes reads the column
    is_failed = (failed_rows(df[failed]).to_numpy() if failed in df.columns
                 else np.zeros(len(df), dtype=bool))
    ok = df.loc[~is_failed]
    bad = df.loc[is_failed]
    if len(ok) == 0:
        raise ValueError(f"{owner}: every one of the {len(df)} rows is a failed record (column "
                         f"'{failed}' is set); there is nothing to analyse.")
    no_missing(ok, [*cell_cols, by], owner=owner)
    failed_frame = bad.loc[:, cell_cols].copy()
    failed_cat = bad[by].astype(object)
    if pair in df.columns and failed_cat.isna().any():
        # a category is a property of the pair: recover it from the pair's other rows
        known = ok.loc[:, [pair, by]].drop_duplicates()
        known = known[~known[pair].duplicated(keep=False)].set_index(pair)[by]
        failed_cat = failed_cat.where(failed_cat.notna(), bad[pair].map(known))
    failed_frame["category"] = failed_cat.to_numpy()
    if len(bad):
        names = [f"{plain_value(bad[pair].iloc[i])!r}" if pair in bad.columns
                 else f"row {bad.index[i]!r}" for i in range(len(bad))]
        reasons = sorted({str(v) for v in bad[failed]})
        # stacklevel: this helper, prepare_cells, conditional_forecasting, its caller
        warnings.warn(
            f"{owner}: {len(bad)} failed record(s) skipped (column '{failed}' is set: "
            f"{listed(reasons, 3, show=repr, sep='; ')}): {listed(names)}; they are counted "
            "in the table's 'n_failed' column.", SkippedRecordsWarning, stacklevel=4)
    return is_failed, failed_frame


def _check_probabilities(ok: pd.DataFrame, columns: PairsColumnNames, owner: str) -> None:
    """The numbers, validated on every successful row (outcome-free cells included)."""
    for col in (columns.p_a, columns.p_a_given_b1, columns.p_a_given_b0):
        probability_column(ok, col, owner=owner)
    for col in (columns.p_b, columns.p_b_given_a1, columns.p_b_given_a0):
        if col in ok.columns:
            v = numeric_column(ok, col, owner=owner, allow_nan=True)
            out = np.flatnonzero(~np.isnan(v) & ((v < 0) | (v > 1)))
            if len(out):
                probability_column(ok.iloc[out], col, owner=owner)  # raises with row labels


def _check_unique_pairs(ok: pd.DataFrame, cell_cols: list[str], columns: PairsColumnNames,
                        pool: bool, owner: str) -> None:
    """One pair, one row per cell (and group); grouped by a category (``by`` not the model,
    run or prompt-variant column), a pair has one category in a cell: the category is the
    pair's own, so a pair listed under two is a pair listed twice."""
    pair = columns.pair
    if columns.by not in (columns.model, columns.run, columns.variant):
        same_within(ok, ok[columns.by].to_numpy(dtype=object), [*cell_cols, pair],
                    columns.by, owner=owner)
        _check_category_across_cells(ok, cell_cols, columns, owner)
    unit = [*cell_cols, columns.by, pair]
    dup = ok.duplicated(unit, keep=False).to_numpy()
    if dup.any():
        d = ok.loc[dup]
        d = d.loc[~d.duplicated(unit)]
        first = tuple(d[cell_cols].iloc[0]) if cell_cols else ()
        in_first = (d[cell_cols].astype(object).apply(tuple, axis=1) == first
                    if cell_cols else pd.Series(True, index=d.index))
        names = [repr(plain_value(v)) for v in d.loc[in_first, pair]]
        shown = listed(names, 3, counted=True)
        how = ("pooled cell" if pool else "run")
        raise ValueError(
            f"{owner}: {len(d)} pair(s) appear more than once in one {how} "
            f"({int(dup.sum())} rows), e.g. in {_describe(cell_cols, first)}: {shown}. "
            "The same file read twice, "
            "or two runs that share a label? Give each run its own 'run' label (read_pairs "
            "labels a run by its model and settings), average repeated elicitations first, "
            + ("or do not pool." if pool else "or drop the duplicates."))


def _check_category_across_cells(ok: pd.DataFrame, cell_cols: list[str],
                                 columns: PairsColumnNames, owner: str) -> None:
    """A pair keeps its category in every run: listed as 'strong' in one run and 'weak' in
    another, its two rows were scored in two category cells (each run's strong row counting
    a pair the other run calls weak). A ``by`` column holding one value per cell is a
    setting of the run, not of the pair, and may differ between runs."""
    by, pair = columns.by, columns.pair
    if not cell_cols or ok.groupby(cell_cols, sort=False, dropna=False)[by].nunique(
            dropna=False).max() < 2:
        return
    labels = ok[by].astype(object).map(plain_value)
    per_pair = labels.groupby(ok[pair].to_numpy(), sort=False).nunique(dropna=False)
    clash = per_pair.index[per_pair.to_numpy() > 1].tolist()
    if not clash:
        return
    first = clash[0]
    rows = ok.loc[(ok[pair] == first).to_numpy()]
    cells = rows[cell_cols].astype(object).apply(tuple, axis=1)
    where = "; ".join(
        f"{plain_value(cat)!r} in {', '.join(_describe(cell_cols, c) for c in cells[r.index])}"
        for cat, r in rows.groupby(labels.loc[rows.index], sort=True))
    raise ValueError(
        f"{owner}: column '{by}' must give a pair the same category in every run "
        f"(a category is the pair's own); {len(clash)} pair(s) differ, e.g. pair "
        f"{plain_value(first)!r}: {where}. Its rows would be scored in different category "
        "cells; correct the category, or compare the runs separately.")


def _resolved_rows(ok: pd.DataFrame, cell_cols: list[str], columns: PairsColumnNames,
                   owner: str) -> np.ndarray:
    """Which rows have outcomes: all of a cell's pairs, or none of them."""
    a_outcome, b_outcome = columns.a_outcome, columns.b_outcome
    has_cols = a_outcome in ok.columns and b_outcome in ok.columns
    if not has_cols and (a_outcome in ok.columns or b_outcome in ok.columns):
        # one outcome without the other is a mistake, not a run without resolutions
        require_columns(ok, {"a_outcome": a_outcome, "b_outcome": b_outcome}, owner=owner)
    if has_cols:
        resolved_rows = (ok[a_outcome].notna() & ok[b_outcome].notna()).to_numpy()
    else:
        resolved_rows = np.zeros(len(ok), dtype=bool)
    if cell_cols:
        cell_id = ok.groupby(cell_cols, sort=False, dropna=False).ngroup().to_numpy()
    else:
        cell_id = np.zeros(len(ok), dtype=np.int64)
    for c in np.unique(cell_id):
        rows = cell_id == c
        if 0 < resolved_rows[rows].sum() < rows.sum():
            missing = np.flatnonzero(rows & ~resolved_rows)
            values = tuple(ok[cell_cols].iloc[int(np.flatnonzero(rows)[0])]) if cell_cols else ()
            labels = [repr(ok.index[i]) for i in missing]
            raise ValueError(
                f"{owner}: columns '{a_outcome}' and '{b_outcome}' must be given for every pair "
                f"of a cell or for none; {_describe(cell_cols, values)} lacks them in "
                f"{len(missing)} of {int(rows.sum())} rows (first: row {listed(labels)}). "
                "attach_outcomes borrows the resolutions of another run of the same pairs.")
    return resolved_rows


def _cell_key(ok: pd.DataFrame, cell_cols: list[str],
              model: str) -> tuple[pd.DataFrame, str, dict[Any, tuple[Any, ...]]]:
    """A copy of the rows with the one cell-key column the array layer groups by (a
    combined one when a cell has several columns), that column's name and the combined
    key's values."""
    frame = ok.copy()
    key_values: dict[Any, tuple[Any, ...]] = {}
    if len(cell_cols) == 0:
        key = model  # absent or the grouping column itself: the array layer groups by `by`
    elif len(cell_cols) == 1:
        key = cell_cols[0]
    else:
        key = _KEY
        tuples = [tuple(r) for r in frame[cell_cols].astype(object).to_numpy()]
        ordered = sorted(set(tuples), key=lambda t: tuple(_sort_key(v) for v in t))
        key_values = dict(enumerate(ordered))
        ids = {t: i for i, t in key_values.items()}
        frame[_KEY] = [ids[t] for t in tuples]
    return frame, key, key_values


# --------------------------------------------------------------------------- outcome-free
def outcome_free_table(frame: pd.DataFrame, group_cols: list[str], columns: dict[str, str],
                       tol: float, eps: float) -> pd.DataFrame:
    """Per group (``group_cols``, the last one the category): the metrics that need no
    outcomes, in the columns :data:`_OUTCOME_FREE`.

    ``frame`` holds validated probabilities; reverse columns (P(B), P(B|A=1), P(B|A=0))
    may be absent or NaN, in which case the row is left out of the columns that need them
    (``n_bayes`` counts the rows kept).
    """
    # read as the array layer reads them (float32 0.3 as 0.3, text '0.3' as 0.3): the
    # classes and tolerances of a cell must not depend on whether it has outcomes
    pa, p1, p0 = (numeric_column(frame, columns[k])
                  for k in ("p_a", "p_a_given_b1", "p_a_given_b0"))
    n = len(frame)
    rev_cols = [columns[k] for k in ("p_b", "p_b_given_a1", "p_b_given_a0")]
    if all(c in frame.columns for c in rev_cols):
        pb, b1, b0 = (numeric_column(frame, c, allow_nan=True) for c in rev_cols)
    else:
        pb = b1 = b0 = np.full(n, np.nan)
    two_way = ~(np.isnan(pb) | np.isnan(b1) | np.isnan(b0))
    direction = classify_updates(p1 - pa, p0 - pa, eps)
    _, feasible_a = total_probability_feasible(pa, p1, p0, tol)
    with np.errstate(invalid="ignore"):
        _, feasible_b = total_probability_feasible(pb, b1, b0, tol)
        a_side, b_side = bayes_arrays(pa, pb, p1, p0, b1, b0)
        bayes_error = np.abs(a_side - b_side)[:, :3].mean(axis=1)
        lotp_a = total_probability_error(pa, p1, p0, pb)
        lotp_b = total_probability_error(pb, b1, b0, pa)
    sensitivity = np.abs(p1 - p0)

    def mean(x: np.ndarray) -> float:
        return float(x.mean()) if x.size else np.nan

    rows = []
    keys = frame.loc[:, group_cols].astype(object).to_numpy()
    for idx in frame.groupby(group_cols, sort=False, dropna=False).indices.values():
        idx = np.asarray(idx)
        two = idx[two_way[idx]]
        row: dict[str, Any] = dict(zip(group_cols, keys[idx[0]], strict=True))
        row.update({"n": int(idx.size), "mean_sensitivity": mean(sensitivity[idx])})
        for c in UPDATE_CLASSES:
            row[c] = mean((direction[idx] == c).astype(float))
        row.update({
            "lotp_feasible": mean(feasible_a[idx].astype(float)),
            "bayes_consistent": mean(below_tol(bayes_error[two], tol).astype(float)),
            "bayes_error_mean": mean(bayes_error[two]), "n_bayes": int(two.size),
            "lotp_feasible_b": mean(feasible_b[two].astype(float)),
            "lotp_error_a_mean": mean(lotp_a[two]), "lotp_error_b_mean": mean(lotp_b[two]),
        })
        rows.append(row)
    return pd.DataFrame(rows, columns=[*group_cols, *_OUTCOME_FREE])


# --------------------------------------------------------------------------- assembly
def _cell_table(result: Any, cells: PairsCells) -> pd.DataFrame:
    """The table of every cell: the scored cells' rows (with their outcome-free columns),
    the cells without resolutions, and a row for each cell whose records all failed,
    with the failed records counted per cell, sorted by the cell labels."""
    cell_cols, by = cells.cell_cols, cells.by
    group = [*cell_cols, "category"]
    frame = cells.frame
    if by != "category":
        frame = frame.drop(columns="category", errors="ignore").rename(columns={by: "category"})
    free = outcome_free_table(frame, group, cells.columns, cells.tol, cells.eps)
    all_columns = [*group, *PAIRS_COLUMNS[1:], *EXTRA_TABLE_COLUMNS, *CELL_TABLE_COLUMNS]

    parts = []
    if result is not None:
        scored = result.table.copy()
        if cells.key == _KEY:
            values = scored.pop(_KEY).map(cells.key_values)
            for j, c in enumerate(cell_cols):
                scored.insert(j, c, [v[j] for v in values])
        extra = free.loc[:, [*group, *CELL_TABLE_COLUMNS[2:-1]]]
        scored = scored.merge(extra, on=group, how="left", validate="one_to_one")
        scored["resolved"] = True
        parts.append(scored)
    resolved_keys = {tuple(k) for k in parts[0].loc[:, group].to_numpy()} if parts else set()
    unscored = free.loc[[tuple(k) not in resolved_keys
                         for k in free.loc[:, group].astype(object).to_numpy()]].copy()
    if len(unscored):
        unscored["resolved"] = False
        unscored["note"] = _NO_OUTCOMES
        parts.append(unscored)
    table = pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0]
    table = table.reindex(columns=all_columns)

    # failed records: counted per cell and category, a row of their own when none succeeded
    counts = (cells.failed.groupby(group, dropna=False, sort=False).size()
              if len(cells.failed) else pd.Series(dtype=int))
    lookup = {tuple(k) if isinstance(k, tuple) else (k,): int(v) for k, v in counts.items()}
    keys = [tuple(k) for k in table.loc[:, group].astype(object).to_numpy()]
    table["n_failed"] = [lookup.pop(k, 0) for k in keys]
    if lookup:
        only_failed = pd.DataFrame([dict(zip(group, k, strict=True)) for k in lookup])
        only_failed = only_failed.reindex(columns=all_columns)
        only_failed["n"] = 0
        only_failed["n_bayes"] = 0
        only_failed["n_failed"] = list(lookup.values())
        only_failed["resolved"] = False
        only_failed["note"] = _ALL_FAILED
        table = pd.concat([table, only_failed], ignore_index=True)
    table["n"] = table["n"].astype(int)
    table["n_bayes"] = table["n_bayes"].astype(int)
    table["n_failed"] = table["n_failed"].astype(int)
    table["resolved"] = table["resolved"].astype(bool)
    table["note"] = table["note"].astype(object)
    for c in group:
        table[c] = table[c].astype(object)
    # one read of the group columns (a ``.loc`` per row took 1 ms a cell)
    keys = table.loc[:, group].to_numpy(dtype=object)
    order = sorted(range(len(table)), key=lambda i: tuple(_sort_key(v) for v in keys[i]))
    table = table.iloc[order].reset_index(drop=True)
    return table


def finish_cells(result: Any, cells: PairsCells) -> Any:
    """The :class:`PairsResult` of every cell: the array layer's ``result`` for the resolved
    cells (``None`` when there are none), completed as the module doc says."""
    by = cells.by
    table = _cell_table(result, cells)
    improvement = np.full(cells.n_input, np.nan)
    n_failed = len(cells.failed)
    if result is not None:
        improvement[cells.positions[cells.resolved_rows]] = result.improvement
        method = result.method
        if not table["resolved"].all():
            method += "; outcome-based columns not available for cells without resolutions"
        changes: dict[str, Any] = {}
        scored = cells.resolved
        if scored is not None and cells.pair in scored.columns and \
                scored[cells.pair].duplicated().any():
            # a pair scored in several runs: the pooled test would count it as independent
            changes = {"pvalue": np.nan, "confidence_interval": ConfidenceInterval(
                np.nan, np.nan, result.confidence_interval.confidence_level)}
            method += ("; pairs repeat across runs, so the pooled headline has no p-value or "
                       "interval (see the per-run rows)")
        return dataclasses.replace(result, table=table, improvement=improvement, method=method,
                                   by=by, n_failed=n_failed, pool=cells.pool, **changes)
    nan = float("nan")
    return PairsResult(
        statistic=nan, pvalue=nan,
        confidence_interval=ConfidenceInterval(nan, nan, cells.confidence_level), n_obs=0,
        method="no resolutions: the metrics that need no outcomes only", table=table,
        improvement=improvement, pvalue_method=cells.test, alternative=cells.alternative,
        ci_method=cells.ci_method, by=by, n_resamples=cells.n_resamples, tol=cells.tol,
        eps=cells.eps, n_failed=n_failed, pool=cells.pool)
