"""Optional dependencies: import one, or say which extra installs it.

catboost (``leakage_test(engine="catboost")``, the paper's classifier) and pgmpy
(the :mod:`bayesnets` package, hence ``coherence demo`` and ``coherence elicit``)
are extras of the distribution, not requirements: the core installs without
them. A missing one raises :class:`ModuleNotFoundError` naming the extra and the
pip command, instead of a bare "No module named ...".
"""

from __future__ import annotations

import importlib.util

__all__ = ["EXTRAS", "require"]

#: module -> the extra of ``belief-coherence`` that installs it
EXTRAS: dict[str, str] = {"catboost": "catboost", "pgmpy": "bayesnets", "pyarrow": "parquet"}


def require(module: str, purpose: str) -> None:
    """Check that ``module`` (an optional dependency) is installed, for ``purpose``.

    The caller then imports it as usual (a static import the layering test can read).

    Raises
    ------
    ModuleNotFoundError
        When the module is not installed; the message names the extra that
        installs it and the pip command.

    Examples
    --------
    >>> require("math", "arithmetic")
    >>> require("no_such_module_xyz", "a demo")  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    ...
    ModuleNotFoundError: a demo needs no_such_module_xyz, ... pip install no_such_module_xyz
    """
    if importlib.util.find_spec(module) is not None:
        return
    extra = EXTRAS.get(module)
    how = (f"pip install 'belief-coherence[{extra}]' (or 'belief-coherence[all]')"
           if extra else f"pip install {module}")
    raise ModuleNotFoundError(
        f"{purpose} needs {module}, an optional dependency that is not installed; "
        f"install it with: {how}", name=module)
