"""Lazy loading of a package's public names (PEP 562), written once.

A package lists its public names in a mapping ``name -> module that defines it``
(relative to the package) and lets :func:`lazy_attributes` build the module-level
``__getattr__`` and ``__dir__``: a name is imported on first use and then cached in
the package's namespace, so ``import package`` imports none of the modules (nor
their numba, pandas or pgmpy) until a name that needs them is used. Static imports
for type checkers stay in the package's ``if TYPE_CHECKING:`` block;
``tests/core/test_lazy.py`` checks that block names exactly the mapping.
"""

from __future__ import annotations

import importlib
from collections.abc import Callable
from collections.abc import Mapping
from collections.abc import MutableMapping
from collections.abc import Sequence
from typing import Any

__all__ = ["lazy_attributes"]


def lazy_attributes(
    package: str, names: Mapping[str, str], namespace: MutableMapping[str, Any],
    public: Sequence[str],
) -> tuple[Callable[[str], Any], Callable[[], list[str]]]:
    """``__getattr__`` and ``__dir__`` for a package whose public names load on first use.

    Parameters
    ----------
    package : str
        The package's ``__name__`` (relative module names are resolved against it).
    names : mapping of str to str
        Public name -> module defining it, relative to ``package``, for instance
        ``{"report": "._report._run"}``. An absolute module name is refused, so the
        imports never leave ``package``.
    namespace : mutable mapping
        The package's ``globals()``: a loaded name is stored there, so the next access
        does not reach ``__getattr__``.
    public : sequence of str
        What ``dir(package)`` lists (the package's ``__all__``).

    Returns
    -------
    (__getattr__, __dir__)
        Assign both at module level of the package.

    Raises
    ------
    ValueError
        If a module in ``names`` is not relative.
    """
    absolute = sorted(name for name, module in names.items() if not module.startswith("."))
    if absolute:
        # relative names keep every import inside ``package``: the layering tests rely on it
        raise ValueError(f"The 'names' parameter of lazy_attributes must map to modules "
                         f"relative to {package!r} (starting with '.'); got absolute "
                         f"modules for {absolute}")
    listed = list(public)

    def __getattr__(name: str) -> Any:
        module = names.get(name)
        if module is None:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        value = getattr(importlib.import_module(module, package), name)
        namespace[name] = value
        return value

    def __dir__() -> list[str]:
        return list(listed)

    return __getattr__, __dir__
