"""Elicitation of beliefs and actions from models (templates, parsing, clients, runners).

``elicitation.run(contexts, client)`` turns a contexts table into the
belief/action table of the core; ``elicitation.run_pairs(pairs, client)``
elicits the pairs table of conditional forecasting. Clients speak one small
protocol (:class:`Client`): :class:`OpenAIClient` for any chat-completions
server, :class:`SimulatedClient` for a simulated agent (offline, the demo's
default). Every raw response is committed to a SQLite cache before it is
parsed, so an interrupted run resumes without repeating a call.
"""

from __future__ import annotations

from ._cache import ResponseCache, cache_key
from ._clients import (
    Client,
    ClientError,
    Completion,
    OpenAIClient,
    Request,
    SimulatedClient,
    TransientError,
    token_belief,
)
from ._common import ElicitationResult, ParseFailureWarning
from ._engine import ElicitationError, EndpointMismatchWarning
from ._lie import run_lie
from ._options import RunOptions
from ._pairs import run_pairs
from ._parsing import FAILURE_REASONS, Parsed, parse_decision, parse_probabilities
from ._runner import run
from ._study import StudyResult, load_study, run_study
from ._templates import (
    BELIEF_PROMPTS,
    CONDITIONAL_VARIANTS,
    Template,
    get_template,
    published_prompts,
    register_template,
    template_names,
)

__all__ = [
    "BELIEF_PROMPTS",
    "CONDITIONAL_VARIANTS",
    "FAILURE_REASONS",
    "Client",
    "ClientError",
    "Completion",
    "ElicitationError",
    "ElicitationResult",
    "EndpointMismatchWarning",
    "OpenAIClient",
    "ParseFailureWarning",
    "Parsed",
    "Request",
    "ResponseCache",
    "RunOptions",
    "SimulatedClient",
    "StudyResult",
    "Template",
    "TransientError",
    "cache_key",
    "get_template",
    "load_study",
    "parse_decision",
    "parse_probabilities",
    "published_prompts",
    "register_template",
    "run",
    "run_lie",
    "run_pairs",
    "run_study",
    "template_names",
    "token_belief",
]
