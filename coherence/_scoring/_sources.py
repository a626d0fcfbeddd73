"""Source precision: the share of a forecast's cited sources that the hindsight
record also cites, |C ∩ C_H| / |C|, averaged over forecasts, with an interval over
questions.
"""

from __future__ import annotations

import warnings
from collections.abc import Iterable
from collections.abc import Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING
from typing import Any

import numpy as np
import pandas as pd

from .._docstrings import fill_doc
from .._parameters import check_choice
from .._results import CoherenceResult
from .._results import ConfidenceInterval
from .._rng import RNGLike
from .._rng import check_rng
from .._validation import as_dataframe
from .._validation import column_error
from .._validation import label_key
from .._validation import list_like_strings
from .._validation import listed
from .._validation import no_missing
from .._validation import nonempty
from .._validation import param_error
from .._validation import require_columns
from .._warnings import DegenerateDataWarning
from .._warnings import DeprecatedAlias

if TYPE_CHECKING:  # pragma: no cover

    pass
from .._parameters import check_resampling
from .._resampling import MEAN_KINDS
from .._resampling import cluster_mean_interval
from .._resampling import rows_by_key
from ._dates import is_missing
from ._ids import check_ids

__all__ = [
    "SourcePrecisionResult",
    "source_precision",
]


# --------------------------------------------------------------------------- source precision
@dataclass(frozen=True, slots=True)
class SourcePrecisionResult(CoherenceResult, test_name="source_precision",
                            settings=("by", "convention", "n_resamples", "n_no_citations")):
    """Source precision :math:`|C \\cap C_H| / |C|` per forecast and averaged.

    ``statistic`` is the mean precision over forecasts (``convention='paper'``:
    all of them, a forecast citing nothing scoring 0; ``'code'``: those that
    cite at least one source); ``confidence_interval`` its interval over questions
    (Wilson's at the cluster-robust effective sample size, t quantile); ``pvalue`` is
    NaN.

    Attributes
    ----------
    by : str
        Column naming the forecaster.
    n_resamples : int
        As given (the interval draws nothing).
    convention : str
        ``'paper'`` (a forecast citing nothing scores 0) or ``'code'`` (it is
        undefined and left out of the mean, as the benchmark's released code does).
    n_no_citations : int
        Forecasts citing no source (precision 0 under ``'paper'``, NaN and left
        out of the mean under ``'code'``).
    table : pandas.DataFrame
        One row per forecast: ``by``, ``question``, ``n_cited``,
        ``n_reference``, ``n_correct``, ``precision``.
    """

    by: str
    convention: str
    n_resamples: int
    n_no_citations: int
    table: pd.DataFrame

    per_forecast = DeprecatedAlias("table")


def _source_sets(df: pd.DataFrame, keys: list[str], sources: str) -> dict[tuple[Any, ...],
                                                                         frozenset[Any]]:
    """The sources of each group as the text they are written as (:func:`label_key`): a
    source id read as the number 1 from one CSV and as the text '1' from another is one
    source, as 1.0 (a column with a blank read as floats) is; case and spaces count."""
    cells = df[sources].to_numpy(dtype=object)
    out: dict[tuple[Any, ...], frozenset[Any]] = {}
    for key, rows in rows_by_key(df, keys).items():
        bucket: set[Any] = set()
        for cell in cells[rows]:
            if isinstance(cell, str | bytes) or not isinstance(cell, Iterable):
                bucket.add(label_key(cell))
            else:
                bucket.update(label_key(item) for item in cell)
        out[key] = frozenset(bucket)
    return out


def no_missing_sources(df: pd.DataFrame, sources: str, owner: str, *,
                       cells: bool = True) -> None:
    """A missing source id (None, NaN, ``pd.NA``, NaT, a blank string), as a cell or as an
    item inside a list, is not "cites nothing" (an empty list says that): it may be a lost
    value, and it is refused rather than skipped or counted as a source named ''. Raises
    naming the column, the rows and their cells. ``cells=False`` lets a whole cell be
    missing (a record listing no sources) and refuses only missing items inside a list."""
    values = df[sources].to_numpy(dtype=object)
    bad = np.array([(cells and is_missing(c)) or (
        not isinstance(c, str | bytes) and isinstance(c, Iterable)
        and any(is_missing(item) for item in c)) for c in values], dtype=bool)
    positions = np.flatnonzero(bad)
    if len(positions):
        where = "as a cell or inside a list" if cells else "inside a list"
        shown = [list(c) if isinstance(c, np.ndarray | tuple | set | frozenset) else c
                 for c in values[positions]]
        raise ValueError(column_error(
            sources, f"not contain missing values (None, NaN or a blank string) {where} "
            "(an empty list records no sources)", list(df.index[positions]), shown,
            owner=owner))


@fill_doc
def source_precision(citations: Any, reference: Any, *, by: str = "model",
                     question: str = "question", sources: str = "sources",
                     convention: str = "paper", n_resamples: int = 2000,
                     confidence_level: float = 0.95,
                     rng: RNGLike = None) -> SourcePrecisionResult:
    """Share of a forecast's cited sources that are among the reference sources.

    Sets a forecast's citations beside the reference sources of its question: the share
    of cited sources that are reference sources, per forecast, and their mean with an
    interval over questions.

    Parameters
    ----------
    citations : pandas.DataFrame or convertible
        Cited sources, one row per (``by``, ``question``) with a list-like
        ``sources`` cell, or one row per citation with a scalar cell (both
        forms may mix). An empty list records a forecast that cites nothing;
        a missing cell (None, NaN, ``pd.NA``, a blank string), or a missing item
        inside a list, raises, naming the rows and their cells.
        A list written out as text (``"['a', 'b']"``, as a CSV stores it) is
        refused with a ``ValueError``: parse the column back into lists first.
    reference : pandas.DataFrame, convertible, or mapping
        The reference sources :math:`C_H` per question: a table with
        ``question`` and ``sources`` columns (same two forms), or a mapping
        question -> iterable of sources. Every cited question needs an entry.
    by, question, sources : str
        Column names. Ids of ``by`` and ``question`` that differ only in case, surrounding
        spaces or type (``'Q1'`` and ``'q1'``, ``1`` and ``'1'``; the questions of the two
        tables together) raise rather than count as two.
    convention : {'paper', 'code'}
        How a forecast that cites nothing counts. ``'paper'`` (default, the
        WorldReasoner paper's definition): its precision is 0 and it enters the
        mean. ``'code'`` (the authors' released code): its precision is
        undefined (NaN) and it is left out of the mean. Citations ``[a]`` and
        ``[]`` against reference ``{a}`` give 0.5 under ``'paper'`` and 1.0
        under ``'code'``.
    %(wilson_over_questions)s

    Returns
    -------
    SourcePrecisionResult
        ``statistic`` the mean precision over forecasts (see ``convention``), with its
        interval over questions (``pvalue`` NaN); one row per
        forecast in ``table``.

    See Also
    --------
    key_event_recall : how many of a question's key events a forecast found.
    grounding_split : source precision of correct versus incorrect forecasts.

    Notes
    -----
    Per forecast, with cited set :math:`C` and reference set :math:`C_H`
    (duplicates removed, identifiers compared as the text they are written as: ``1``,
    ``1.0`` and ``'1'`` are one source, as ids read from two CSV files may come typed
    apart, while case and spaces count, so normalise URLs first),
    precision is :math:`|C \\cap C_H| / |C|`; when :math:`C = \\emptyset` it is
    0 (``convention='paper'``) or undefined, NaN (``convention='code'``).

    Examples
    --------
    >>> import coherence
    >>> cites = {"model": ["m", "m"], "question": ["q1", "q2"],
    ...          "sources": [["a", "b", "c", "d"], ["x"]]}
    >>> ref = {"q1": ["a", "c", "z"], "q2": ["y"]}
    >>> res = coherence.source_precision(cites, ref, rng=0)
    >>> list(res.table["precision"]), res.statistic
    ([0.5, 0.0], 0.25)
    """
    owner = "source_precision"
    convention = check_choice(convention, "convention", owner, ("paper", "code"))
    n_resamples, confidence_level = check_resampling(owner, n_resamples, confidence_level)
    df = as_dataframe(citations, name="citations", owner=owner)
    require_columns(df, {"by": by, "question": question, "sources": sources}, owner=owner)
    nonempty(df, name="citations", owner=owner)
    no_missing(df, [by, question], owner=owner)
    check_ids([("citations", df)], by, owner=owner)  # 'GPT' and 'gpt', 1 and '1': one id
    list_like_strings(df, sources, owner=owner)
    no_missing_sources(df, sources, owner)
    gen = check_rng(rng, owner=owner)
    cited = _source_sets(df, [by, question], sources)
    if isinstance(reference, Mapping):  # {question: sources}: the table's rows
        reference = pd.DataFrame({question: list(reference),
                                  sources: pd.Series(list(reference.values()), dtype=object)})
    rdf = as_dataframe(reference, name="reference", owner=owner)
    require_columns(rdf, {"question": question, "sources": sources}, owner=owner)
    no_missing(rdf, [question], owner=owner)
    list_like_strings(rdf, sources, owner=owner)
    no_missing_sources(rdf, sources, f"{owner}, reference table")
    check_ids([("citations", df), ("reference", rdf)], question, owner=owner)
    ref = {k[0]: v for k, v in _source_sets(rdf, [question], sources).items()}
    missing_q = sorted({str(q) for (_, q) in cited if q not in ref})
    if missing_q:
        raise ValueError(param_error("reference", owner, "an entry for every cited question",
                                     f"no entry for {len(missing_q)} question(s): "
                                     f"{listed(missing_q, show=repr)}"))
    rows = []
    for (model, q), c in cited.items():
        h = ref[q]
        n_ok = len(c & h)
        rows.append({by: model, "question": q, "n_cited": len(c), "n_reference": len(h),
                     "n_correct": n_ok, "precision": (n_ok / len(c) if c
                                   else 0.0 if convention == "paper" else np.nan)})
    per = pd.DataFrame(rows, columns=[by, "question", "n_cited", "n_reference", "n_correct",
                                      "precision"])
    prec = per["precision"].to_numpy(dtype=np.float64)
    n_empty = int((per["n_cited"] == 0).sum())
    n_undefined = int(np.isnan(prec).sum())
    if n_empty == len(prec):
        what = ("every precision is 0 (convention='paper')" if convention == "paper"
                else "precision is undefined")
        warnings.warn(f"source_precision: no forecast cites a source; {what}.",
                      DegenerateDataWarning, stacklevel=2)
    stat = np.nan if n_undefined == len(prec) else float(np.nanmean(prec))
    # questions coded in sorted order there: the interval does not depend on the row order
    low, high = cluster_mean_interval(prec, per["question"].to_numpy(dtype=object),
                                      n_resamples, confidence_level, gen, kind="fraction",
                                      estimate=stat)
    return SourcePrecisionResult(
        statistic=stat, pvalue=np.nan,
        confidence_interval=ConfidenceInterval(low, high, confidence_level),
        n_obs=len(per) - n_undefined,
        method=f"{MEAN_KINDS['fraction']} over questions",
        by=by, convention=convention, n_resamples=n_resamples, n_no_citations=n_empty,
        table=per)
