"""belief-coherence: do stated probabilities behave like beliefs?

The statistical core. Public names are loaded on first use (PEP 562), so
``import coherence`` stays fast and never imports numba-compiled kernels,
catboost or pgmpy until a function that needs them is called.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

__version__ = "0.1.0.dev0"

# public name -> private module that defines it
_LAZY: dict[str, str] = {
    # results, errors, randomness
    "ConfidenceInterval": "._results",
    "CoherenceResult": "._results",
    "RESULT_COLUMNS": "._results",
    "CoherenceWarning": "._warnings",
    "DegenerateDataWarning": "._warnings",
    "NotCalibratedWarning": "._warnings",
    "SmallSampleWarning": "._warnings",
    "TiesWarning": "._warnings",
    # simulated agents
    "ACTIONS": "._simulate",
    "PROMPTS": "._simulate",
    "Agent": "._simulate",
    "SimulatedStudy": "._simulate",
    "SimulationTruth": "._simulate",
    "simulate": "._simulate",
    "snap_to_grid": "._simulate",
    # decision coherence: leakage, monotone choice, prompt consistency
    "LeakageResult": "._leakage",
    "leakage_test": "._leakage",
    "MonotonicityResult": "._monotone",
    "monotonicity_test": "._monotone",
    "plot_choice_shares": "._monotone",
    "ConsistencyResult": "._consistency",
    "prompt_consistency": "._consistency",
}

__all__ = sorted([*_LAZY, "__version__"])

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from ._consistency import ConsistencyResult, prompt_consistency
    from ._leakage import LeakageResult, leakage_test
    from ._monotone import MonotonicityResult, monotonicity_test, plot_choice_shares
    from ._results import RESULT_COLUMNS, CoherenceResult, ConfidenceInterval
    from ._simulate import (
        ACTIONS,
        PROMPTS,
        Agent,
        SimulatedStudy,
        SimulationTruth,
        simulate,
        snap_to_grid,
    )
    from ._warnings import (
        CoherenceWarning,
        DegenerateDataWarning,
        NotCalibratedWarning,
        SmallSampleWarning,
        TiesWarning,
    )


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'coherence' has no attribute {name!r}")
    value = getattr(importlib.import_module(module, __name__), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return __all__
