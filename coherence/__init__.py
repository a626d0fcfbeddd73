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
    # the main job
    "CoherenceReport": "._report",
    "ReportCell": "._report",
    "TEST_NAMES": "._report",
    "report": "._report",
    # simulated agents
    "ACTIONS": "._simulate",
    "PROMPTS": "._simulate",
    "Agent": "._simulate",
    "SimulatedStudy": "._simulate",
    "SimulationTruth": "._simulate",
    "simulate": "._simulate",
    "snap_to_grid": "._simulate",
    # conditional independence (kNN CMI)
    "CITestResult": "._citest",
    "ci_test": "._citest",
    "cmi": "._cmi",
    "mi": "._cmi",
    # decision coherence: leakage, monotone choice, prompt consistency
    "LeakageResult": "._leakage",
    "leakage_test": "._leakage",
    "MonotonicityResult": "._monotone",
    "monotonicity_test": "._monotone",
    "plot_choice_shares": "._monotone",
    "ConsistencyResult": "._consistency",
    "prompt_consistency": "._consistency",
    # forecast scoring at a simulated date (issue 8)
    "ForecastComparisonResult": "._forecast",
    "ForecastScoresResult": "._forecast",
    "forecast_scores": "._forecast",
    "plot_reliability": "._forecast",
    "ContaminationFilterResult": "._temporal",
    "GatewayPartition": "._temporal",
    "GatewayReport": "._temporal",
    "TemporalGateway": "._temporal",
    "contamination_filter": "._temporal",
    "KeyEventRecallResult": "._events",
    "MarketAlignmentResult": "._events",
    "SourcePrecisionResult": "._events",
    "causal_pressure": "._events",
    "grounding_split": "._events",
    "key_event_recall": "._events",
    "market_alignment": "._events",
    "plot_causal_pressure": "._events",
    "source_precision": "._events",
    # probability axioms and forecaster consistency (issue 5)
    "LIE_COLUMNS": "._axioms",
    "UPDATE_CLASSES": "._axioms",
    "BayesCheckResult": "._axioms",
    "ConditionalTupleResult": "._axioms",
    "IteratedExpectationResult": "._axioms",
    "NegationCheckResult": "._axioms",
    "TotalProbabilityResult": "._axioms",
    "UpdateDirectionResult": "._axioms",
    "bayes_check": "._axioms",
    "conditional_tuple_check": "._axioms",
    "iterated_expectation_check": "._axioms",
    "negation_check": "._axioms",
    "random_forest_baseline": "._axioms",
    "total_probability_check": "._axioms",
    "update_direction": "._axioms",
    # conditional-forecasting coherence over question pairs (issue 5)
    "PAIRS_COLUMNS": "._pairs",
    "PairsPowerResult": "._pairs",
    "PairsResult": "._pairs",
    "conditional_forecasting": "._pairs",
    "pairs_power": "._pairs",
    "read_pairs": "._pairs",
}

__all__ = sorted([*_LAZY, "__version__"])

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from ._axioms import (
        LIE_COLUMNS,
        UPDATE_CLASSES,
        BayesCheckResult,
        ConditionalTupleResult,
        IteratedExpectationResult,
        NegationCheckResult,
        TotalProbabilityResult,
        UpdateDirectionResult,
        bayes_check,
        conditional_tuple_check,
        iterated_expectation_check,
        negation_check,
        random_forest_baseline,
        total_probability_check,
        update_direction,
    )
    from ._citest import CITestResult, ci_test
    from ._cmi import cmi, mi
    from ._consistency import ConsistencyResult, prompt_consistency
    from ._events import (
        KeyEventRecallResult,
        MarketAlignmentResult,
        SourcePrecisionResult,
        causal_pressure,
        grounding_split,
        key_event_recall,
        market_alignment,
        plot_causal_pressure,
        source_precision,
    )
    from ._forecast import (
        ForecastComparisonResult,
        ForecastScoresResult,
        forecast_scores,
        plot_reliability,
    )
    from ._leakage import LeakageResult, leakage_test
    from ._monotone import MonotonicityResult, monotonicity_test, plot_choice_shares
    from ._pairs import (
        PAIRS_COLUMNS,
        PairsPowerResult,
        PairsResult,
        conditional_forecasting,
        pairs_power,
        read_pairs,
    )
    from ._report import TEST_NAMES, CoherenceReport, ReportCell, report
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
    from ._temporal import (
        ContaminationFilterResult,
        GatewayPartition,
        GatewayReport,
        TemporalGateway,
        contamination_filter,
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
