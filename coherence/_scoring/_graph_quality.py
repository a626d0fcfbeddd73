"""Hindsight-graph quality gates: which hindsight graphs are good enough to score against.

:func:`hindsight_graph_quality` applies the benchmark's gates to each
question's hindsight graph (events rejected by annotators removed, edges kept
at confidence >= 0.6 and strength >= 0.3, then at least 3 hops, 10 nodes, 20
sources and 1 edge) and counts what it excludes, in a :class:`GraphQualityReport`.
With it, the graph and column helpers it shares with the reasoning metrics of
:mod:`._graphs`: :func:`graph_depth` (the longest chain of edges)
and :func:`missing_or_in` (a bounded numeric column with missing values allowed); a
yes/no column is read by :func:`coherence._validation.flag_column`, as everywhere.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import numpy as np
import pandas as pd

from .._parameters import check_float
from .._parameters import check_int
from .._resampling import rows_by_key
from .._validation import as_dataframe
from .._validation import column_error
from .._validation import label_key
from .._validation import list_like_strings
from .._validation import listed
from .._validation import no_missing
from .._validation import numeric_column
from .._validation import param_error
from .._validation import plain_repr
from .._validation import require_columns
from ._dates import is_missing
from ._ids import check_edge_ends
from ._ids import check_ids
from ._ids import check_ids_within
from ._sources import no_missing_sources

__all__ = ["GraphQualityReport", "graph_depth", "hindsight_graph_quality"]


def missing_or_in(df: pd.DataFrame, column: str, owner: str, upper: float) -> np.ndarray:
    """A numeric column whose missing values are allowed; the others in [0, upper]."""
    values = numeric_column(df, column, owner=owner, allow_nan=True)
    bad = np.flatnonzero(~np.isnan(values)
                         & ~(np.isfinite(values) & (values >= 0.0) & (values <= upper)))
    if len(bad):
        rule = "hold probabilities in [0, 1]" if upper == 1.0 else "hold finite numbers >= 0"
        raise ValueError(column_error(column, f"{rule} (or be missing)", list(df.index[bad]),
                                      list(values[bad]), owner=owner))
    return values


def graph_depth(edges: Iterable[tuple[Any, Any]], nodes: Iterable[Any] | None = None) -> int:
    """The longest chain of directed edges (hops) among ``nodes``.

    Edges with an end outside ``nodes`` are ignored (``nodes=None``: every
    node an edge touches). On an acyclic graph this is the longest path, in
    edges. On a graph with cycles it follows the released evaluator: a
    depth-first walk that stops when it reaches a node already on the walk,
    counting the edge that closes the cycle (a 2-cycle has depth 2, a self-loop
    depth 1); exact and exponential in the worst case.

    See Also
    --------
    reasoning_graph_metrics : the metrics that report it.
    hindsight_graph_quality : the quality gates that use it.

    Examples
    --------
    >>> from coherence._scoring._graph_quality import graph_depth
    >>> graph_depth([("a", "b"), ("b", "c"), ("a", "c")])
    2
    """
    edge_list = list(edges)
    node_set = ({n for e in edge_list for n in e} if nodes is None else set(nodes))
    out: dict[Any, list[Any]] = defaultdict(list)
    for s, t in edge_list:
        if s in node_set and t in node_set:
            out[s].append(t)
    # acyclic? (Kahn)
    indeg: dict[Any, int] = dict.fromkeys(node_set, 0)
    for s in out:
        for t in out[s]:
            indeg[t] += 1
    stack = [n for n, d in indeg.items() if d == 0]
    order = []
    while stack:
        n = stack.pop()
        order.append(n)
        for t in out.get(n, ()):
            indeg[t] -= 1
            if indeg[t] == 0:
                stack.append(t)
    if len(order) == len(node_set):
        depth: dict[Any, int] = {}
        for n in reversed(order):
            kids = out.get(n, ())
            depth[n] = 1 + max(depth[k] for k in kids) if kids else 0
        return max(depth.values(), default=0)

    def walk(node: Any, seen: frozenset[Any]) -> int:
        if node in seen:
            return 0
        kids = out.get(node, ())
        if not kids:
            return 0
        return 1 + max(walk(k, seen | {node}) for k in kids)

    return max((walk(n, frozenset()) for n in node_set), default=0)


def id_set(cell: Any) -> set[Any]:
    """The ids of a list-like (or scalar) cell as the text they are written as
    (:func:`label_key`: ``1``, ``1.0`` and ``'1'`` are one source, as
    :func:`source_precision` counts them); a missing cell has none (a missing item
    inside a list is refused before, by :func:`no_missing_sources`)."""
    if isinstance(cell, list | tuple | set | frozenset | np.ndarray):
        return {label_key(c) for c in cell if not is_missing(c)}
    if is_missing(cell):
        return set()
    return {label_key(cell)}


# --------------------------------------------------------------------------- quality gates
@dataclass(frozen=True, slots=True)
class GraphQualityReport:
    """Which hindsight graphs pass the quality gates, and why the others do not.

    Attributes
    ----------
    table : pandas.DataFrame
        One row per question: ``built``, ``n_nodes`` (events left after
        rejected ones are removed), ``n_rejected``, ``n_sources``,
        ``n_edges`` (edges given), ``n_edges_dangling`` (an end rejected or not
        an event of the question), ``n_edges_below_gate`` (confidence or
        strength below its gate, or missing), ``n_edges_kept`` (rows; the
        ``min_edges`` gate counts distinct (source, target) pairs), ``hops`` (depth of the
        kept edges), ``passes`` and ``reasons`` (the failed gates, ``'; '``
        separated, empty when it passes).
    excluded : pandas.DataFrame
        One row per reason (``'not built'``, ``'hops < 3'``, ...): ``n``
        questions failing it (a question can fail several), and a final row
        ``'any'`` with the questions excluded.
    events : pandas.DataFrame
        The hindsight event rows kept (rejected events removed, every question).
    edges : pandas.DataFrame
        The hindsight edges kept (confidence and strength gates passed, both
        ends present and not rejected, every question).
    settings : dict
        The gates used.
    """

    table: pd.DataFrame = field(repr=False)
    excluded: pd.DataFrame = field(repr=False)
    events: pd.DataFrame = field(repr=False)
    edges: pd.DataFrame = field(repr=False)
    settings: dict[str, Any] = field(repr=False)

    @property
    def passed(self) -> tuple[Any, ...]:
        """The questions whose hindsight graph passes every gate."""
        return tuple(self.table.loc[self.table["passes"], "question"])

    @property
    def n_excluded(self) -> int:
        """Questions excluded."""
        return int((~self.table["passes"]).sum())


def hindsight_graph_quality(
    hindsight_events: Any,
    hindsight_edges: Any,
    *,
    questions: Iterable[Any] | None = None,
    min_hops: int = 3,
    min_nodes: int = 10,
    min_sources: int = 20,
    min_edges: int = 1,
    min_edge_confidence: float = 0.6,
    min_edge_strength: float = 0.3,
    exclude_rejected: bool = True,
    question: str = "question",
    event: str = "event",
    sources: str | None = "sources",
    review_status: str = "review_status",
    source: str = "source",
    target: str = "target",
    confidence: str = "confidence",
    strength: str = "strength",
) -> GraphQualityReport:
    """Apply the benchmark's quality gates to each question's hindsight graph.

    A hindsight graph too small or too shallow to judge a forecast against is set aside
    before the graph metrics, as the benchmark does: after rejected events and weak
    edges are removed, each question's graph must reach minimum numbers of hops, nodes,
    sources and edges. The report names the gates each failing question missed.

    Parameters
    ----------
    hindsight_events : pandas.DataFrame or convertible
        Hindsight events (one row per event, or per impact record: rows with
        the same (``question``, ``event``) are one node), with optional
        ``sources`` (a list-like cell of article ids, or one id, counted as the text
        they are written as: ``1`` and ``'1'`` are one source; a blank cell lists no
        sources, while a missing item inside a list, ``['s1', None]``, raises, as in
        :func:`source_precision`; a list written
        out as text, ``"['s1', 's2']"`` as a CSV stores it, raises: parse it first) and
        ``review_status`` (``'rejected'`` marks an event annotators rejected; an
        event is removed when all its rows are rejected).
    hindsight_edges : pandas.DataFrame or convertible
        Causal edges: ``question``, ``source`` and ``target`` (event ids),
        ``confidence`` and ``strength``.
    questions : iterable, optional
        Every question of the benchmark, each once (a repeated name raises); one
        without any hindsight event is excluded as ``'not built'``. Default: the
        questions of the two tables.
    min_hops, min_nodes, min_sources, min_edges : int
        Gates (defaults 3, 10, 20, 1, the paper's).
    min_edge_confidence, min_edge_strength : float
        An edge is kept when its confidence >= 0.6 and its strength >= 0.3
        (defaults, the paper's); an edge missing either value is not kept.
    exclude_rejected : bool
        Remove events annotators rejected (and the edges touching them)
        before anything else (default True).
    question, event, sources, review_status, source, target, confidence, strength : str
        Column names (``sources=None``: no source column; then ``min_sources``
        must be 0).

    Returns
    -------
    GraphQualityReport
        One row per question in ``table`` (``passes``, and the failed gates in
        ``reasons``), the questions each gate excludes (``excluded``), and the events
        and edges kept (``events``, ``edges``).

    See Also
    --------
    reasoning_graph_metrics : the metrics computed after these gates.
    graph_depth : the longest chain of a graph.

    Notes
    -----
    Order: (1) rejected events and their edges removed; (2) edges below the
    confidence or strength gate, or with an end that is not an event of the
    question, dropped; (3) per question, nodes = distinct events, sources =
    distinct ids over the events' ``sources``, edges = distinct (``source``,
    ``target``) pairs of the kept edges (a repeated row counts once), hops =
    :func:`graph_depth` of the kept edges; (4) a graph passes when hops >=
    ``min_hops``, nodes >= ``min_nodes``, sources >= ``min_sources`` and
    edges >= ``min_edges``. The outcome event counts as a node. The tables are
    joined on the question and event ids exactly: an id written two ways (``'Q1'`` and
    ``'q1'``, ``1`` and ``'1'``) between the events, the edges' ends and ``questions``
    raises, naming the rows (matched exactly, such edges would be dangling).

    Examples
    --------
    >>> import coherence
    >>> ev = {"question": ["q"] * 4, "event": ["a", "b", "c", "d"],
    ...       "sources": [["s1"], ["s2"], ["s3"], ["s4"]]}
    >>> ed = {"question": ["q"] * 3, "source": ["a", "b", "c"], "target": ["b", "c", "d"],
    ...       "confidence": [0.9, 0.9, 0.5], "strength": [0.5, 0.5, 0.5]}
    >>> gq = coherence.hindsight_graph_quality(ev, ed, min_nodes=4, min_sources=4)
    >>> gq.table[["hops", "passes", "reasons"]].values.tolist()
    [[2, False, 'hops < 3']]
    """
    owner = "hindsight_graph_quality"
    min_hops = check_int(min_hops, "min_hops", owner, low=0)
    min_nodes = check_int(min_nodes, "min_nodes", owner, low=0)
    min_sources = check_int(min_sources, "min_sources", owner, low=0)
    min_edges = check_int(min_edges, "min_edges", owner, low=0)
    min_edge_confidence = check_float(min_edge_confidence, "min_edge_confidence", owner)
    min_edge_strength = check_float(min_edge_strength, "min_edge_strength", owner)
    if not isinstance(exclude_rejected, bool):
        raise TypeError(param_error("exclude_rejected", owner, "a bool", exclude_rejected))
    hev = as_dataframe(hindsight_events, name="hindsight_events", owner=owner)
    hed = as_dataframe(hindsight_edges, name="hindsight_edges", owner=owner)
    require_columns(hev, {"question": question, "event": event}, owner=owner)
    require_columns(hed, {"question": question, "source": source, "target": target,
                          "confidence": confidence, "strength": strength}, owner=owner)
    no_missing(hev, [question, event], owner=owner)
    no_missing(hed, [question, source, target], owner=owner)
    questions = _check_graph_ids(hev, hed, questions, (question, event, source, target), owner)
    sources = _sources_column(hev, sources, min_sources, owner)
    conf = missing_or_in(hed, confidence, owner, 1.0)
    stren = missing_or_in(hed, strength, owner, np.inf)
    rejected = np.zeros(len(hev), dtype=bool)
    if exclude_rejected and review_status in hev.columns:
        rejected = rejected_rows(hev[review_status])
    kept_ev = hev.loc[~rejected]
    rejected_keys = set(zip(hev.loc[rejected, question], hev.loc[rejected, event],
                            strict=True)) - set(zip(kept_ev[question], kept_ev[event],
                                                    strict=True))
    node_keys = set(zip(kept_ev[question], kept_ev[event], strict=True))
    qs = hed[question].to_numpy(dtype=object)
    ss = hed[source].to_numpy(dtype=object)
    ts = hed[target].to_numpy(dtype=object)
    ends_ok = np.array([(q, s) in node_keys and (q, t) in node_keys
                        for q, s, t in zip(qs, ss, ts, strict=True)], dtype=bool)
    with np.errstate(invalid="ignore"):
        gate_ok = (conf >= min_edge_confidence) & (stren >= min_edge_strength)
    kept_ed = hed.loc[ends_ok & gate_ok]
    all_q = _question_order(hev[question], hed[question], questions)
    ev_rows = rows_by_key(kept_ev, [question]) if len(kept_ev) else {}
    ed_rows = rows_by_key(kept_ed, [question]) if len(kept_ed) else {}
    given_rows = rows_by_key(hed, [question]) if len(hed) else {}
    rej_count: dict[Any, int] = defaultdict(int)
    for q, _ in rejected_keys:
        rej_count[q] += 1
    src_cells = kept_ev[sources].to_numpy(dtype=object) if sources else None
    # the columns as arrays once: converted inside the loop, each question cost a pass
    # over every row (quadratic in the number of questions)
    ev_ids = kept_ev[event].to_numpy(dtype=object)
    ed_ends = (kept_ed[source].to_numpy(dtype=object), kept_ed[target].to_numpy(dtype=object))
    gates = (min_hops, min_nodes, min_sources, min_edges)
    rows = []
    for q in all_q:
        er = ev_rows.get((q,), np.empty(0, dtype=np.int64))
        dr = ed_rows.get((q,), np.empty(0, dtype=np.int64))
        nodes = set(ev_ids[er])
        srcs: set[Any] = set()
        if src_cells is not None:
            for cell in src_cells[er]:
                srcs |= id_set(cell)
        pairs = list(zip(ed_ends[0][dr], ed_ends[1][dr], strict=True))
        hops = graph_depth(pairs, nodes)
        built = len(nodes) > 0 or rej_count[q] > 0
        # the edges gate counts distinct (source, target) pairs: a repeated row is one edge
        reasons = _gate_reasons(built, (hops, len(nodes), len(srcs), len(set(pairs))), gates)
        given = given_rows.get((q,), np.empty(0, dtype=np.int64))
        rows.append({"question": q, "built": built, "n_nodes": len(nodes),
                     "n_rejected": rej_count[q], "n_sources": len(srcs),
                     "n_edges": len(given), "n_edges_dangling": int((~ends_ok[given]).sum()),
                     "n_edges_below_gate": int((ends_ok[given] & ~gate_ok[given]).sum()),
                     "n_edges_kept": len(pairs),
                     "hops": hops, "passes": not reasons, "reasons": "; ".join(reasons)})
    table = pd.DataFrame(rows, columns=["question", "built", "n_nodes", "n_rejected",
                                        "n_sources", "n_edges", "n_edges_dangling",
                                        "n_edges_below_gate", "n_edges_kept", "hops",
                                        "passes", "reasons"])
    excluded = _excluded_table(table, gates)
    settings = {"min_hops": min_hops, "min_nodes": min_nodes, "min_sources": min_sources,
                "min_edges": min_edges, "min_edge_confidence": min_edge_confidence,
                "min_edge_strength": min_edge_strength, "exclude_rejected": exclude_rejected}
    return GraphQualityReport(table=table, excluded=excluded, events=kept_ev, edges=kept_ed,
                              settings=settings)


def _check_graph_ids(hev: pd.DataFrame, hed: pd.DataFrame, questions: Iterable[Any] | None,
                     names: tuple[str, str, str, str], owner: str) -> list[Any] | None:
    """Raise when a question id, or an event id at an edge's end, is written two ways
    (``'Q1'`` and ``'q1'``, ``1`` and ``'1'``) between the tables (and ``questions``): the
    edges would be dropped as dangling, or the question split in two, without a word.
    Returns ``questions`` as a list (it may be a one-pass iterable)."""
    question, event, source, target = names
    tables = [("hindsight_events", hev), ("hindsight_edges", hed)]
    if questions is not None:
        if isinstance(questions, str | bytes):  # list('q12') would be 'q', '1', '2'
            raise TypeError(param_error("questions", owner, "an iterable of question ids "
                                        "(a list, not one string)", questions))
        questions = list(questions)
        tables.append(("questions", pd.DataFrame({question: pd.Series(questions,
                                                                      dtype=object)})))
    check_ids(tables, question, owner=owner)
    check_ids_within(hev, [question], event, name="hindsight_events", owner=owner)
    check_edge_ends(hed, (source, target), hev, event, (question,),
                    edges_name="hindsight_edges", events_name="hindsight_events",
                    owner=owner)
    return questions


def _sources_column(hev: pd.DataFrame, sources: str | None, min_sources: int,
                    owner: str) -> str | None:
    """The source-id column, or None when absent (allowed only with ``min_sources=0``);
    lists written out as text (``"['s1', 's2']"``, as a CSV stores them) raise."""
    if sources is None or sources not in hev.columns:
        if min_sources > 0:
            raise ValueError(param_error(
                "sources", owner, "a column of hindsight_events holding each event's source "
                f"ids (needed by min_sources={min_sources}; pass min_sources=0 otherwise)",
                sources))
        return None
    # "['s1', 's2']" from a CSV would count as one source named so
    list_like_strings(hev, sources, owner=owner)
    # ['s1', None]: a lost id, refused as source_precision refuses it (it was dropped);
    # a whole blank cell is a record listing no sources
    no_missing_sources(hev, sources, owner, cells=False)
    return sources


def rejected_rows(status: pd.Series) -> np.ndarray:
    """True where the review status is 'rejected' (any case, surrounding spaces ignored)."""
    return np.array([not is_missing(v) and str(v).strip().lower() == "rejected"
                     for v in status.to_numpy(dtype=object)], dtype=bool)


def _question_order(event_questions: pd.Series, edge_questions: pd.Series,
                    questions: Iterable[Any] | None) -> list[Any]:
    """The questions listed first, then those of the two tables in order of appearance."""
    all_q = list(pd.unique(pd.concat([event_questions, edge_questions], ignore_index=True)
                           .astype(object)))
    if questions is not None:
        named = list(questions)
        names = pd.Series(named, dtype=object)
        repeated = list(pd.unique(names[names.duplicated()]))
        if repeated:
            raise ValueError(param_error(
                "questions", "hindsight_graph_quality", "an iterable naming each question "
                "once", f"{len(repeated)} repeated: {listed(repeated, show=plain_repr)}"))
        all_q = [*named, *[q for q in all_q if q not in set(named)]]
    return all_q


_GATES = ("hops", "nodes", "sources", "edges")


def _gate_reasons(built: bool, sizes: tuple[int, int, int, int],
                  gates: tuple[int, int, int, int]) -> list[str]:
    """Why a graph fails: not built, or each size (hops, nodes, sources, edges) below its
    gate."""
    if not built:
        return ["not built"]
    return [f"{name} < {low}" for name, value, low in zip(_GATES, sizes, gates, strict=True)
            if value < low]


def _excluded_table(table: pd.DataFrame, gates: tuple[int, int, int, int]) -> pd.DataFrame:
    """How many questions each reason excludes, and how many any reason does."""
    labels = ["not built", *[f"{name} < {low}" for name, low in zip(_GATES, gates, strict=True)]]
    counts = [int(table["reasons"].str.split("; ").map(lambda r, lab=lab: lab in r).sum())
              for lab in labels]
    return pd.DataFrame({"reason": [*labels, "any"],
                         "n": [*counts, int((~table["passes"]).sum())]})
