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

from ._cache import ResponseCache
from ._cache import cache_key
from ._clients import Client
from ._clients import ClientError
from ._clients import Completion
from ._clients import OpenAIClient
from ._clients import Request
from ._clients import TransientError
from ._clients import token_belief
from ._common import ElicitationResult
from ._common import ParseFailureWarning
from ._engine import ElicitationError
from ._engine import EndpointMismatchWarning
from ._lie import run_lie
from ._options import RunOptions
from ._pairs import run_pairs
from ._parsing import FAILURE_REASONS
from ._parsing import Parsed
from ._parsing import parse_probabilities
from ._parsing_decision import parse_decision
from ._runner import run
from ._simulated import SimulatedClient
from ._study import StudyResult
from ._study import load_study
from ._study import run_study
from ._templates import BELIEF_PROMPTS
from ._templates import CONDITIONAL_VARIANTS
from ._templates import Template
from ._templates import get_template
from ._templates import published_prompts
from ._templates import register_template
from ._templates import template_names

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
