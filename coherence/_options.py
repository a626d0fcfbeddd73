"""Option records: settings a function takes as one frozen dataclass (``options=``)
and field by field as keywords, merged and checked in one place.

:class:`coherence.ReportOptions` (the tests' settings and how :func:`coherence.report`
runs its cells) and :class:`elicitation.RunOptions` (how a runner makes its calls)
follow the one rule written here: ``f(..., options=Record(...), field=value)``
replaces that field of ``options``; a misspelt keyword is a :class:`TypeError`
naming the closest field; a bad value an error naming the field and the function.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable
from collections.abc import Mapping
from dataclasses import fields
from typing import Any
from typing import TypeVar

from ._validation import param_error

__all__ = ["merge_record"]

R = TypeVar("R")


def merge_record(record: type[R], options: Any, overrides: Mapping[str, Any], owner: str,
                 check: Callable[[dict[str, Any], str], None] | None = None) -> R:
    """``options`` (default ``record()``) with the keyword ``overrides`` of ``owner``.

    ``check(values, owner)`` validates the merged values under the function's name
    before the record checks its own (so an error names ``owner``, not the record).
    """
    if options is None:
        options = record()
    elif not isinstance(options, record):
        raise TypeError(param_error("options", owner, f"a {record.__name__} or None", options))
    names = [f.name for f in fields(record)]  # type: ignore[arg-type]
    unknown = sorted(set(overrides) - set(names))
    if unknown:
        near = difflib.get_close_matches(unknown[0], names, n=1)
        hint = f" (did you mean {near[0]!r}?)" if near else ""
        raise TypeError(f"{owner}() got unexpected keyword argument(s) {unknown}{hint}; "
                        f"besides its own parameters it takes the fields of "
                        f"{record.__name__}: {', '.join(names)}.")
    values = {name: overrides.get(name, getattr(options, name)) for name in names}
    if check is not None:
        check(values, owner)
    return record(**values)
