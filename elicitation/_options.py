"""How a runner makes its calls: the options :func:`run`, :func:`run_pairs` and
:func:`run_lie` share, written once.

A runner takes ``options=RunOptions(...)`` and any of its fields by keyword
(``run(contexts, client, cache=None)``); a keyword replaces that field of
``options``. What is asked (templates, repetitions) stays in the runner's own
signature: these are the transport, the cache, the failure budget, the
parser's tolerance and the progress bar.
"""

from __future__ import annotations

from dataclasses import dataclass
from dataclasses import fields
from pathlib import Path
from typing import Any

from coherence._options import merge_record
from coherence._parameters import check_float
from coherence._parameters import check_int
from coherence._validation import param_error

from ._cache import ResponseCache

__all__ = ["RunOptions", "merge_options", "study_options"]


@dataclass(frozen=True, slots=True)
class RunOptions:
    """How a runner makes its calls (shared by :func:`run`, :func:`run_pairs`,
    :func:`run_lie`).

    Parameters
    ----------
    concurrency : int, default 8
        Calls in flight at once (threads).
    cache : path, ResponseCache or None, default "elicitation.sqlite"
        SQLite file of raw responses (``None``: in memory, nothing kept). A
        :class:`ResponseCache` given here is left open after the run.
    max_retries : int, default 5
        Retries of a call after a transient failure (timeout, connection
        error, HTTP 429 or 5xx, malformed body).
    backoff, max_backoff : float, default 0.5 and 30.0
        Delay before retry ``i`` is ``min(max_backoff, backoff * 2**i)``
        times a uniform jitter in [0.5, 1] (at least the server's
        ``Retry-After``, capped at ``max_backoff``).
    max_failures : int, default 50
        The run stops with :class:`ElicitationError` once more calls than
        this have failed for good (after their retries; a call answered on a
        retry does not count). A failed write to the cache stops it at once.
    sum_tolerance : float in [0, 1), default 0.02
        Passed to :func:`parse_probabilities`: how far a reply's numbers may
        sum from 1 before the reply is incoherent rather than a belief.
    progress : bool, optional
        Draw a progress bar on stderr (default: when stderr is a terminal).

    See Also
    --------
    run : the belief/action study.
    run_pairs : the conditional-forecasting pairs.
    run_lie : the iterated-expectation quantities.

    Examples
    --------
    >>> from elicitation import RunOptions
    >>> RunOptions(cache=None, concurrency=2).max_retries
    5
    """

    concurrency: int = 8
    cache: str | Path | ResponseCache | None = "elicitation.sqlite"
    max_retries: int = 5
    backoff: float = 0.5
    max_backoff: float = 30.0
    max_failures: int = 50
    sum_tolerance: float = 0.02
    progress: bool | None = None

    def __post_init__(self) -> None:
        _check({f.name: getattr(self, f.name) for f in fields(self)}, "RunOptions")


def _check(values: dict[str, Any], owner: str) -> None:
    """Every field's rule, errors naming the field and ``owner``."""
    check_int(values["concurrency"], "concurrency", owner, low=1)
    check_int(values["max_retries"], "max_retries", owner, low=0)
    check_float(values["backoff"], "backoff", owner, low=0.0)
    check_float(values["max_backoff"], "max_backoff", owner, low=0.0)
    check_int(values["max_failures"], "max_failures", owner, low=0)
    # [0, 1) as parse_probabilities takes it: 1.0 was accepted here and refused by the
    # parser after every call was made
    check_float(values["sum_tolerance"], "sum_tolerance", owner, low=0.0, high=1.0,
                high_open=True)
    if values["progress"] is not None and not isinstance(values["progress"], bool):
        raise TypeError(param_error("progress", owner, "a bool or None", values["progress"]))
    if not (values["cache"] is None or isinstance(values["cache"], str | Path | ResponseCache)):
        raise TypeError(param_error("cache", owner, "a path, None (in memory) or a "
                                    "ResponseCache", values["cache"]))


def merge_options(options: Any, overrides: dict[str, Any], owner: str) -> RunOptions:
    """``options`` (default ``RunOptions()``) with the runner's keyword ``overrides``.

    An unknown keyword is a :class:`TypeError` naming it and the closest field;
    a bad value an error naming the field and the runner (the rule of
    :func:`coherence._options.merge_record`, shared with ``coherence.report``).
    """
    return merge_record(RunOptions, options, overrides, owner, _check)


def study_options(model: Any, sum_tolerance: float, cache: Any, progress: Any) -> RunOptions:
    """The options a study file's ``[[models]]`` entry gives its runs (one place for the
    study's defaults: 4 calls in flight, 5 retries, 50 failures). The values are taken as
    they are (an int, checked by :class:`RunOptions`; never truncated)."""
    return merge_options(None, {"concurrency": model.get("concurrency", 4),
                                "cache": cache, "max_retries": model.get("max_retries", 5),
                                "max_failures": model.get("max_failures", 50),
                                "sum_tolerance": sum_tolerance, "progress": progress},
                         "run_study")
