"""belief-coherence: do stated probabilities behave like beliefs?

The statistical core. Public names are loaded on first use (PEP 562), so
``import coherence`` stays fast and never imports numba-compiled kernels,
catboost or pgmpy until a function that needs them is called.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from ._lazy import lazy_attributes as _lazy_attributes

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
    "SkippedRecordsWarning": "._warnings",
    "SmallSampleWarning": "._warnings",
    "TiesWarning": "._warnings",
    # the main job
    "CoherenceReport": "._report._result",
    "ReportCell": "._report._result",
    "ReportOptions": "._report._options",
    "TEST_NAMES": "._report._registry",
    "report": "._report._run",
    # simulated agents
    "ACTIONS": "._decision._simulate",
    "PROMPTS": "._decision._simulate",
    "Agent": "._decision._simulate",
    "SimulatedStudy": "._decision._simulate",
    "SimulationTruth": "._decision._truth",
    "simulate": "._decision._simulate",
    "snap_to_grid": "._decision._grid",
    # what the stated beliefs say before any test (degenerate elicitations flagged)
    "ElicitationDiagnostics": "._decision._diagnostics",
    "elicitation_diagnostics": "._decision._diagnostics",
    # conditional independence (kNN CMI)
    "CITestResult": "._decision._citest_result",
    "ci_test": "._decision._citest",
    "cmi": "._decision._cmi",
    "mi": "._decision._cmi",
    # decision coherence: leakage, monotone choice, prompt consistency
    "LeakageResult": "._decision._leakage",
    "leakage_test": "._decision._leakage",
    "MonotonicityResult": "._decision._monotone",
    "monotonicity_test": "._decision._monotone",
    "plot_choice_shares": "._decision._monotone",
    "IIAResult": "._decision._iia",
    "iia_test": "._decision._iia",
    "CyclicMonotonicityResult": "._decision._cyclic",
    "cyclic_monotonicity_test": "._decision._cyclic",
    "ConsistencyResult": "._decision._consistency",
    "prompt_consistency": "._decision._consistency",
    # forecast scoring at a simulated date
    "ForecastComparisonResult": "._scoring._comparison",
    "ForecastScoresResult": "._scoring._forecast",
    "forecast_scores": "._scoring._forecast",
    "BrierDecompositionResult": "._scoring._decomposition",
    "brier_decomposition": "._scoring._decomposition",
    "KnowledgeSplitResult": "._scoring._knowledge",
    "coherence_by_knowledge": "._scoring._knowledge",
    "plot_reliability": "._scoring._reliability_plots",
    "ContaminationFilterResult": "._scoring._temporal",
    "GatewayPartition": "._scoring._temporal",
    "GatewayReport": "._scoring._temporal",
    "TemporalGateway": "._scoring._temporal",
    "contamination_filter": "._scoring._temporal",
    "KeyEventRecallResult": "._scoring._events",
    "MarketAlignmentResult": "._scoring._markets",
    "SourcePrecisionResult": "._scoring._sources",
    "causal_pressure": "._scoring._markets",
    "grounding_split": "._scoring._events",
    "key_event_recall": "._scoring._events",
    "market_alignment": "._scoring._markets",
    "plot_causal_pressure": "._scoring._markets",
    "source_precision": "._scoring._sources",
    # ForecastBench leaderboard scores
    "FORECASTBENCH_SCORES": "._scoring._forecastbench",
    "ForecastBenchComparisonResult": "._scoring._forecastbench",
    "ForecastBenchResult": "._scoring._forecastbench",
    "forecastbench_scores": "._scoring._forecastbench",
    # debiased and smooth calibration error
    "CALIBRATION_BINNINGS": "._scoring._calibration",
    "CalibrationErrorResult": "._scoring._calibration",
    "SmoothECEResult": "._scoring._calibration",
    "calibration_error": "._scoring._calibration",
    "plot_smooth_reliability": "._scoring._reliability_plots",
    "smooth_ece": "._scoring._calibration",
    # the forecasting-at-a-simulated-date benchmark: tasks, horizons, graphs, markets
    "QUESTION_TYPES": "._scoring._questions",
    "TASK_COLUMNS": "._scoring._questions",
    "DatasetStatistics": "._scoring._questions",
    "QuestionScoresResult": "._scoring._questions",
    "dataset_statistics": "._scoring._questions",
    "question_scores": "._scoring._questions",
    "validate_tasks": "._scoring._questions",
    "HORIZON_BANDS": "._scoring._horizons",
    "HorizonAccuracyResult": "._scoring._horizons",
    "accuracy_by_horizon": "._scoring._horizons",
    "horizon_positions": "._scoring._horizons",
    "plot_accuracy_by_horizon": "._scoring._horizons",
    "plot_rolling_accuracy": "._scoring._horizons",
    "rolling_accuracy": "._scoring._horizons",
    "simulated_dates": "._scoring._horizons",
    "REASONING_METRICS": "._scoring._graphs",
    "GraphQualityReport": "._scoring._graph_quality",
    "ReasoningGraphResult": "._scoring._graphs",
    "graph_depth": "._scoring._graph_quality",
    "hindsight_graph_quality": "._scoring._graph_quality",
    "reasoning_graph_metrics": "._scoring._graphs",
    "MarketChecksResult": "._scoring._market_checks",
    "MarketSignalResult": "._scoring._market_signal",
    "market_checks": "._scoring._market_checks",
    "market_signal_metrics": "._scoring._market_signal",
    "turning_points": "._scoring._market_checks",
    # probability axioms and forecaster consistency
    "LIE_COLUMNS": "._probability._lie",
    "UPDATE_CLASSES": "._probability._axioms",
    "BayesCheckResult": "._probability._axioms",
    "ConditionalTupleResult": "._probability._axioms_paleka",
    "IteratedExpectationResult": "._probability._lie",
    "NegationCheckResult": "._probability._axioms_paleka",
    "TotalProbabilityResult": "._probability._axioms",
    "UpdateDirectionResult": "._probability._axioms",
    "bayes_check": "._probability._axioms",
    "conditional_tuple_check": "._probability._axioms_paleka",
    "iterated_expectation_check": "._probability._lie",
    "negation_check": "._probability._axioms_paleka",
    "random_forest_baseline": "._probability._lie",
    "total_probability_check": "._probability._axioms",
    "update_direction": "._probability._axioms",
    "ViolationSummary": "._probability._summaries",
    # the ten consistency checkers of Paleka et al. 2025
    "CHECKERS": "._probability._checks",
    "ConsistencyCheckResult": "._probability._checks",
    "arbitrage_violation": "._probability._checks",
    "consistency_check": "._probability._checks",
    "frequentist_violation": "._probability._checks",
    "read_consistency_tuples": "._probability._checks_io",
    "ConsistencyNoiseResult": "._probability._noise",
    "consistency_noise_test": "._probability._noise",
    # conditional-forecasting coherence over question pairs
    "PAIRS_ALTERNATIVES": "._probability._pairs_result",
    "PAIRS_CI_METHODS": "._probability._pairs_result",
    "PAIRS_COLUMNS": "._probability._pairs_result",
    "PAIRS_TESTS": "._probability._pairs_result",
    "PairsPowerResult": "._probability._power",
    "PairsResult": "._probability._pairs_result",
    "conditional_forecasting": "._probability._pairs",
    "pairs_power": "._probability._power",
    # study planning: power of any test at each design, by simulation
    "PLAN_TESTS": "._plan",
    "PlanResult": "._plan",
    "plan": "._plan",
    "attach_outcomes": "._probability._pairs_io",
    "read_pairs": "._probability._pairs_io",
}

__all__ = sorted([*_LAZY, "__version__"])

if TYPE_CHECKING:  # pragma: no cover - for type checkers and IDEs only
    from ._decision._citest import ci_test
    from ._decision._citest_result import CITestResult
    from ._decision._cmi import cmi
    from ._decision._cmi import mi
    from ._decision._consistency import ConsistencyResult
    from ._decision._consistency import prompt_consistency
    from ._decision._cyclic import CyclicMonotonicityResult
    from ._decision._cyclic import cyclic_monotonicity_test
    from ._decision._diagnostics import ElicitationDiagnostics
    from ._decision._diagnostics import elicitation_diagnostics
    from ._decision._grid import snap_to_grid
    from ._decision._iia import IIAResult
    from ._decision._iia import iia_test
    from ._decision._leakage import LeakageResult
    from ._decision._leakage import leakage_test
    from ._decision._monotone import MonotonicityResult
    from ._decision._monotone import monotonicity_test
    from ._decision._monotone import plot_choice_shares
    from ._decision._simulate import ACTIONS
    from ._decision._simulate import PROMPTS
    from ._decision._simulate import Agent
    from ._decision._simulate import SimulatedStudy
    from ._decision._simulate import simulate
    from ._decision._truth import SimulationTruth
    from ._plan import PLAN_TESTS
    from ._plan import PlanResult
    from ._plan import plan
    from ._probability._axioms import UPDATE_CLASSES
    from ._probability._axioms import BayesCheckResult
    from ._probability._axioms import TotalProbabilityResult
    from ._probability._axioms import UpdateDirectionResult
    from ._probability._axioms import bayes_check
    from ._probability._axioms import total_probability_check
    from ._probability._axioms import update_direction
    from ._probability._axioms_paleka import ConditionalTupleResult
    from ._probability._axioms_paleka import NegationCheckResult
    from ._probability._axioms_paleka import conditional_tuple_check
    from ._probability._axioms_paleka import negation_check
    from ._probability._checks import CHECKERS
    from ._probability._checks import ConsistencyCheckResult
    from ._probability._checks import arbitrage_violation
    from ._probability._checks import consistency_check
    from ._probability._checks import frequentist_violation
    from ._probability._checks_io import read_consistency_tuples
    from ._probability._lie import LIE_COLUMNS
    from ._probability._lie import IteratedExpectationResult
    from ._probability._lie import iterated_expectation_check
    from ._probability._lie import random_forest_baseline
    from ._probability._noise import ConsistencyNoiseResult
    from ._probability._noise import consistency_noise_test
    from ._probability._pairs import conditional_forecasting
    from ._probability._pairs_io import attach_outcomes
    from ._probability._pairs_io import read_pairs
    from ._probability._pairs_result import PAIRS_ALTERNATIVES
    from ._probability._pairs_result import PAIRS_CI_METHODS
    from ._probability._pairs_result import PAIRS_COLUMNS
    from ._probability._pairs_result import PAIRS_TESTS
    from ._probability._pairs_result import PairsResult
    from ._probability._power import PairsPowerResult
    from ._probability._power import pairs_power
    from ._probability._summaries import ViolationSummary
    from ._report._options import ReportOptions
    from ._report._registry import TEST_NAMES
    from ._report._result import CoherenceReport
    from ._report._result import ReportCell
    from ._report._run import report
    from ._results import RESULT_COLUMNS
    from ._results import CoherenceResult
    from ._results import ConfidenceInterval
    from ._scoring._calibration import CALIBRATION_BINNINGS
    from ._scoring._calibration import CalibrationErrorResult
    from ._scoring._calibration import SmoothECEResult
    from ._scoring._calibration import calibration_error
    from ._scoring._calibration import smooth_ece
    from ._scoring._comparison import ForecastComparisonResult
    from ._scoring._decomposition import BrierDecompositionResult
    from ._scoring._decomposition import brier_decomposition
    from ._scoring._events import KeyEventRecallResult
    from ._scoring._events import grounding_split
    from ._scoring._events import key_event_recall
    from ._scoring._forecast import ForecastScoresResult
    from ._scoring._forecast import forecast_scores
    from ._scoring._forecastbench import FORECASTBENCH_SCORES
    from ._scoring._forecastbench import ForecastBenchComparisonResult
    from ._scoring._forecastbench import ForecastBenchResult
    from ._scoring._forecastbench import forecastbench_scores
    from ._scoring._graph_quality import GraphQualityReport
    from ._scoring._graph_quality import graph_depth
    from ._scoring._graph_quality import hindsight_graph_quality
    from ._scoring._graphs import REASONING_METRICS
    from ._scoring._graphs import ReasoningGraphResult
    from ._scoring._graphs import reasoning_graph_metrics
    from ._scoring._horizons import HORIZON_BANDS
    from ._scoring._horizons import HorizonAccuracyResult
    from ._scoring._horizons import accuracy_by_horizon
    from ._scoring._horizons import horizon_positions
    from ._scoring._horizons import plot_accuracy_by_horizon
    from ._scoring._horizons import plot_rolling_accuracy
    from ._scoring._horizons import rolling_accuracy
    from ._scoring._horizons import simulated_dates
    from ._scoring._knowledge import KnowledgeSplitResult
    from ._scoring._knowledge import coherence_by_knowledge
    from ._scoring._market_checks import MarketChecksResult
    from ._scoring._market_checks import market_checks
    from ._scoring._market_checks import turning_points
    from ._scoring._market_signal import MarketSignalResult
    from ._scoring._market_signal import market_signal_metrics
    from ._scoring._markets import MarketAlignmentResult
    from ._scoring._markets import causal_pressure
    from ._scoring._markets import market_alignment
    from ._scoring._markets import plot_causal_pressure
    from ._scoring._questions import QUESTION_TYPES
    from ._scoring._questions import TASK_COLUMNS
    from ._scoring._questions import DatasetStatistics
    from ._scoring._questions import QuestionScoresResult
    from ._scoring._questions import dataset_statistics
    from ._scoring._questions import question_scores
    from ._scoring._questions import validate_tasks
    from ._scoring._reliability_plots import plot_reliability
    from ._scoring._reliability_plots import plot_smooth_reliability
    from ._scoring._sources import SourcePrecisionResult
    from ._scoring._sources import source_precision
    from ._scoring._temporal import ContaminationFilterResult
    from ._scoring._temporal import GatewayPartition
    from ._scoring._temporal import GatewayReport
    from ._scoring._temporal import TemporalGateway
    from ._scoring._temporal import contamination_filter
    from ._warnings import CoherenceWarning
    from ._warnings import DegenerateDataWarning
    from ._warnings import NotCalibratedWarning
    from ._warnings import SkippedRecordsWarning
    from ._warnings import SmallSampleWarning
    from ._warnings import TiesWarning

__getattr__, __dir__ = _lazy_attributes(__name__, _LAZY, globals(), __all__)
