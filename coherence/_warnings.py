"""Warning classes of belief-coherence (all subclasses of :class:`CoherenceWarning`)."""

from __future__ import annotations

import contextlib
import functools
import inspect
import threading
import warnings
from collections.abc import Callable
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any
from typing import TypeVar

__all__ = [
    "CoherenceWarning",
    "DegenerateDataWarning",
    "DeprecatedAlias",
    "KeywordMerge",
    "NotCalibratedWarning",
    "SkippedRecordsWarning",
    "SmallSampleWarning",
    "TiesWarning",
    "deprecated_keywords",
    "recorded_warnings",
    "second_of_pair",
]

_F = TypeVar("_F", bound=Callable[..., Any])


class CoherenceWarning(UserWarning):
    """Base class of every warning this package emits."""


class SmallSampleWarning(CoherenceWarning):
    """The sample (or a stratum, bin or fold of it) is too small for the method to be reliable."""


class TiesWarning(CoherenceWarning):
    """Ties in the data change how the method behaves (for example, merged quantile bins)."""


class DegenerateDataWarning(CoherenceWarning):
    """A variable is constant or a class is absent, so a quantity is undefined or trivial."""


class NotCalibratedWarning(CoherenceWarning):
    """The procedure asked for is kept for comparability but is not a calibrated test."""


class SkippedRecordsWarning(CoherenceWarning):
    """Records were left out by a documented rule (for example failed elicitations in a
    result file); the warning names them and the result counts them."""


class DeprecatedAlias:
    """A read-only attribute that returns another attribute of the same object and warns.

    ``prompt_table = DeprecatedAlias("table")`` in a class body makes
    ``result.prompt_table`` return ``result.table`` with a :class:`DeprecationWarning`
    (``stacklevel=2``: the warning points at the line that read the old name) that names
    the attribute to use instead. Old names are kept this way for one release, then
    removed.
    """

    def __init__(self, new: str) -> None:
        self.new = new
        self.name = ""
        self.owner = ""
        self.__doc__ = f"Deprecated alias of :attr:`{new}`, removed in the next release."

    def __set_name__(self, owner: type, name: str) -> None:
        self.name, self.owner = name, owner.__name__

    def __get__(self, instance: object, owner: type | None = None) -> Any:
        if instance is None:
            return self
        warnings.warn(f"{self.owner}.{self.name} is deprecated and will be removed in the next "
                      f"release; use {self.owner}.{self.new} (the same object)",
                      DeprecationWarning, stacklevel=2)
        return getattr(instance, self.new)


@dataclass(frozen=True, slots=True)
class KeywordMerge:
    """How :func:`deprecated_keywords` folds an old keyword into another parameter.

    ``fold(old_value, value)`` gets the old keyword's value and the parameter's (as
    given, or its default) and returns the parameter's new value; it raises
    :class:`TypeError` where the two cannot both hold (both give the same setting).
    ``spelling`` is the new way to write the call, named in the warning.
    """

    into: str
    fold: Callable[[Any, Any], Any]
    spelling: str


def deprecated_keywords(since: str | None = None,
                        **changes: str | KeywordMerge) -> Callable[[_F], _F]:
    """Keep old keywords of a function working for one release, with a warning.

    ``@deprecated_keywords(old="new")`` makes ``f(old=x)`` call ``f(new=x)`` with a
    :class:`DeprecationWarning` that names ``new`` and points at the caller's line
    (``since``, a version, is named in it when given); ``f(old=x, new=y)`` is a
    :class:`TypeError` (two values for one setting). The new parameters are keyword-only.
    ``old=KeywordMerge(into, fold, spelling)`` folds the old value into the parameter
    ``into`` instead (see :class:`KeywordMerge`). Old keywords are handled in the order
    given, so a rename can come before a merge into the renamed parameter. The wrapper
    keeps the function's name, docstring and :func:`inspect.signature` (the new
    parameters only; the old keywords are not parameters any more). The wrapper is one
    more frame: a warning the function itself emits takes ``stacklevel=3`` to point at
    its caller.
    """

    def decorate(func: _F) -> _F:
        signature = inspect.signature(func)
        for old, change in changes.items():
            new = change if isinstance(change, str) else change.into
            param = signature.parameters.get(new)
            if (old in signature.parameters or param is None
                    or param.kind is not inspect.Parameter.KEYWORD_ONLY):
                raise ValueError(f"deprecated_keywords: {func.__name__} must take the "
                                 f"keyword-only '{new}' and not '{old}'")
        name = func.__name__
        when = "" if since is None else f" since {since}"

        @functools.wraps(func)
        def wrapper(*args: Any, **kwargs: Any) -> Any:
            for old, change in changes.items():
                if old not in kwargs:
                    continue
                value = kwargs.pop(old)
                new = change if isinstance(change, str) else change.into
                how = f"{new}=" if isinstance(change, str) else change.spelling
                warnings.warn(f"{name}({old}=...) is deprecated{when} and will be removed "
                              f"in the next release: use {how}",
                              DeprecationWarning, stacklevel=2)
                if isinstance(change, str):
                    if new in kwargs:
                        raise TypeError(f"{name}() got both '{old}' (deprecated) and its "
                                        f"replacement '{new}': give '{new}' only")
                    kwargs[new] = value
                else:
                    current = kwargs.get(new, signature.parameters[new].default)
                    kwargs[new] = change.fold(value, current)
            return func(*args, **kwargs)

        return wrapper  # type: ignore[return-value]

    return decorate


def second_of_pair(owner: str, into: str, what: str) -> Callable[[Any, Any], tuple[Any, Any]]:
    """A :class:`KeywordMerge` fold: the deprecated keyword's value becomes the second item
    of ``into=(first, second)``; a :class:`TypeError` when ``into`` is a pair already
    (``what``, the second item, given twice)."""

    def fold(old_value: Any, value: Any) -> tuple[Any, Any]:
        if isinstance(value, tuple | list):
            raise TypeError(f"{owner}() got the {what} twice, in {into}=(..., {what}) and "
                            f"in the deprecated keyword: give {into} only")
        return value, old_value

    return fold


# --------------------------------------------------------------------------- recording
_RECORDING = threading.local()
_RECORD_LOCK = threading.Lock()
#: the threads recording now, and the process-wide warnings state saved by the first
_RECORD_STATE: dict[str, Any] = {"depth": 0, "outer": None, "show": None}


def _dispatch(message: Any, category: Any, filename: str, lineno: int, file: Any = None,
              line: Any = None) -> None:
    """The process-wide ``showwarning`` while any thread records: to the recording
    thread's innermost list, else shown as before."""
    stack = getattr(_RECORDING, "stack", None)
    if stack:
        stack[-1].append(warnings.WarningMessage(message, category, filename, lineno, file,
                                                 line))
    else:
        _RECORD_STATE["show"](message, category, filename, lineno, file, line)


@contextlib.contextmanager
def recorded_warnings() -> Iterator[list[warnings.WarningMessage]]:
    """Record every warning raised in this thread while the block runs, each time it is
    raised (``warnings.catch_warnings(record=True)`` with the filter ``"always"``), also
    when several threads record at once (a report's cells on the threading backend).

    ``catch_warnings`` swaps process-wide state on entry and exit, so blocks running at
    once in several threads lost each other's warnings or took them. Here the first
    block to start swaps it once, every warning goes to the list of the thread that
    raised it, and the last block to end restores it.
    """
    records: list[warnings.WarningMessage] = []
    with _RECORD_LOCK:
        if _RECORD_STATE["depth"] == 0:
            outer = warnings.catch_warnings()
            outer.__enter__()
            warnings.simplefilter("always")
            _RECORD_STATE["outer"], _RECORD_STATE["show"] = outer, warnings.showwarning
            warnings.showwarning = _dispatch
        _RECORD_STATE["depth"] += 1
    stack = getattr(_RECORDING, "stack", None)
    if stack is None:
        stack = _RECORDING.stack = []
    stack.append(records)
    try:
        yield records
    finally:
        stack.pop()
        with _RECORD_LOCK:
            _RECORD_STATE["depth"] -= 1
            if _RECORD_STATE["depth"] == 0:
                outer = _RECORD_STATE["outer"]
                _RECORD_STATE["outer"] = _RECORD_STATE["show"] = None
                outer.__exit__(None, None, None)
