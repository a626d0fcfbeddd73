"""Docstring paragraphs shared by several public functions, written once.

A docstring names a shared paragraph as ``%(name)s`` on a line of its own, at the
indentation the paragraph takes there; :func:`fill_doc` puts the paragraph in at that
indentation when the module is imported (scipy's ``doccer`` does the same for the
distributions' docstrings). ``help()``, Sphinx and numpydoc see the filled docstring.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import TypeVar

__all__ = ["DOCS", "fill_doc"]

_F = TypeVar("_F", bound=Callable[..., object])

#: the shared paragraphs, unindented; a name's first line is the numpydoc entry
DOCS: dict[str, str] = {
    "wilson_over_questions": """\
n_resamples, confidence_level, rng
    The interval over questions, Wilson's at the cluster-robust effective sample
    size with a t quantile, which draws nothing
    (``n_resamples`` is recorded, unused).""",
    "checker_forecasts": """\
checker : str
    One of :data:`CHECKERS` (or the authors' class name, e.g. ``'CondChecker'``).
forecasts : 2-d array_like (a row per tuple, a column per question)
    One row per tuple, the columns in the order of ``CHECKERS[checker]``.""",
    "violation_interval": """\
confidence_level : float in (0, 1), default 0.95
n_resamples : int >= 1, default 9999
    Bootstrap resamples (over rows) of the mean violation's interval; its cost
    grows as rows x resamples (about 1 s at 10,000 rows, 14 s at 100,000: pass
    fewer for a large table).
rng : int, numpy.random.Generator or None
    Seed or generator of the resamples (None: fresh entropy).""",
    "ax": """\
ax : matplotlib.axes.Axes, optional
    Axes to draw on; a new figure is made when omitted.""",
}

_SLOT = re.compile(r"^(?P<indent>[ \t]*)%\((?P<name>\w+)\)s[ \t]*$", re.MULTILINE)


def fill_doc(func: _F) -> _F:
    """Fill the ``%(name)s`` lines of ``func.__doc__`` from :data:`DOCS`, each paragraph
    indented as its line is; an unknown name raises ``KeyError`` at import."""

    def fill(match: re.Match[str]) -> str:
        indent = match["indent"]
        return "\n".join(indent + line if line else line
                         for line in DOCS[match["name"]].splitlines())

    if func.__doc__:
        func.__doc__ = _SLOT.sub(fill, func.__doc__)
    return func
