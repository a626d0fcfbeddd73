"""The belief/action study: a contexts table in, the belief/action table of the core out.

:func:`run` asks every probability prompt and the decision template for
every (context, repetition), each in its own conversation, through the job
engine (:mod:`._engine`), and pairs repetition ``r`` of the decision with
repetition ``r`` of every prompt's belief.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from coherence._validation import param_error

from ._clients import Client
from ._common import ElicitationResult
from ._common import check_copied_truths
from ._common import check_output_names
from ._common import check_phrase
from ._common import context_fields
from ._common import context_table
from ._common import make_result
from ._engine import Executed
from ._engine import Job
from ._engine import common_iv
from ._engine import execute
from ._engine import make_job
from ._engine import settings_json
from ._options import RunOptions
from ._options import merge_options
from ._templates import Template
from ._templates import get_template
from ._templates import is_builtin

__all__ = ["ACTION_LABELS", "run"]

ACTION_LABELS = ("yes", "no", "defer")


def run(
    contexts: Any,
    client: Client,
    *,
    question: str | None = None,
    prompts: Sequence[str] = ("standard",),
    decision: str | None = "decision",
    repetitions: int = 5,
    options: RunOptions | None = None,
    **overrides: Any,
) -> ElicitationResult:
    """Elicit beliefs and actions for every context; return the belief/action table.

    Each context is asked each prompt's belief question and the decision question,
    ``repetitions`` times, through the response cache: an interrupted run resumes, a
    second run makes no call, and no reply is lost (those that do not parse are
    reported, not dropped silently).

    Parameters
    ----------
    contexts : pandas.DataFrame
        One row per context: ``context`` (its id), ``description`` (the
        evidence in words, filling ``{patient_description}``), optional
        ``outcome`` and ``truth`` (copied to the output), optional
        ``question`` (per-context question text), and any evidence columns
        (copied to the output and available to templates as placeholders).
        A column named like a placeholder the runner fills itself
        (``clinical_question``, ``patient_description``, ...) is refused, and
        so is one named like a column the runner writes (``repetition``,
        ``prompt``, ``belief``, ``action``, ``forced_choice``,
        ``token_belief``, ``stated_<label>``, ``stated_sum``), which would
        overwrite the elicited value, and a missing or empty description.
    client : Client
        :class:`OpenAIClient`, :class:`SimulatedClient` or anything with
        ``model``, ``settings`` and ``complete(request)``.
    question : str, optional
        The clinical question as the phrase that follows "they" in the
        paper's prompts (fills ``{clinical_question}``): ``'have heart
        disease'`` is asked as "What is the probability that they have heart
        disease?" and "Do they have heart disease?". A full question (ending
        in ``?``) is refused for the built-in templates. Required unless
        ``contexts`` has a ``question`` column, and refused
        (``ValueError``) when it has one: give the question once, as this
        argument or as the column.
    prompts : sequence of str
        Probability templates, one per prompt variant: the decision paper's
        prompts ``'standard'``, ``'mse'``, ``'absolute'``, ``'bayesian'``
        (verbatim, the default for a replication), the toolkit's paraphrases
        ``'standard_toolkit'``, ... (same variants), or registered ones.
        P(y=1) is the probability of the template's last label (``Yes``).
        The ``prompt`` column holds the template's variant; ``result.raw``
        records the template used.
    decision : str or None
        The decision template, asked once per (context, repetition) in its
        own conversation: the paper's ``'decision'`` (labels ``Can decide``
        and ``Decision``), the toolkit's ``'decision_toolkit'``, or ``None``
        to elicit beliefs only.
    repetitions : int
        Elicitations of each (context, template).
    options : RunOptions, optional
        How the calls are made: concurrency, the response cache (default
        ``"elicitation.sqlite"``), retries and their backoff, the failure
        budget, the parser's ``sum_tolerance`` and the progress bar (default
        ``RunOptions()``).
    **overrides
        Any field of :class:`RunOptions` by keyword (``cache=None``,
        ``concurrency=2``), replacing that field of ``options``; any other
        keyword is an error naming it.

    Returns
    -------
    ElicitationResult
        ``data`` has one row per (context, prompt, repetition) whose belief
        and action both parsed: ``context``, ``repetition``, ``prompt``
        (category), ``belief`` (float64), ``action`` (category yes / no /
        defer), ``forced_choice`` (the "if you had to decide" answer),
        ``token_belief`` (from the decision reply's log-probabilities, NaN
        when not served), then ``outcome``, ``truth`` and the evidence
        columns when given. Repetition ``r`` of the decision is paired with
        repetition ``r`` of every prompt's belief. Belief replies whose
        numbers do not sum to 1 are not in ``data`` (they have no belief a
        test could use) but in ``result.incoherent``, with the numbers as
        stated and the action of the same repetition.

    Warns
    -----
    ParseFailureWarning
        When rows are left out because an elicitation failed to parse or
        its call failed; the reasons are counted in ``result.failures``.
    EndpointMismatchWarning
        When cached replies of the same model came from another server.

    See Also
    --------
    run_pairs : elicit the pairs table of conditional forecasting.
    run_lie : elicit the quantities of the law of iterated expectation.
    run_study : design, elicit, test and report a whole study.
    bayesnets.contexts : a contexts table built on a Bayesian network.

    Examples
    --------
    >>> import pandas as pd, coherence, elicitation
    >>> contexts = pd.DataFrame({"context": [0, 1], "truth": [0.2, 0.9], "outcome": [0, 1],
    ...                          "description": ["is 30 years old", "is 70 years old"]})
    >>> client = elicitation.SimulatedClient(coherence.Agent.rational(), contexts, rng=0)
    >>> result = elicitation.run(contexts, client, question="have the disease",
    ...                          repetitions=2, cache=None)
    >>> result.data[["context", "repetition", "belief", "action"]]
       context  repetition  belief action
    0        0           0     0.2     no
    1        0           1     0.2     no
    2        1           0     0.9    yes
    3        1           1     0.9  defer
    """
    owner = "run"
    opts = common_iv(client, repetitions=repetitions,
                     options=merge_options(options, overrides, owner), owner=owner)
    df = context_table(contexts, question, owner, list_duplicates=True)
    check_copied_truths(df, ("truth",), ("outcome",), owner)
    if question is not None and not isinstance(question, str):
        raise TypeError(param_error("question", owner, "a str", question))
    templates, dec_template = _templates_iv(prompts, decision, question, df, owner)
    check_output_names(df, _output_names(templates), owner)
    records = df.to_dict("records")
    jobs = _belief_action_jobs(client, records, question, templates, dec_template, repetitions)
    done = execute(client, jobs, opts)
    replies = _read_replies(jobs, done)
    extra = [c for c in df.columns if c not in ("context", "description", "question")]
    out_rows, flagged = _belief_action_rows(records, templates, dec_template is not None,
                                            repetitions, extra, replies)
    n_total = len(records) * len(templates) * repetitions
    columns = ["context", "repetition", "prompt", "belief", "action", "forced_choice",
               "token_belief", *extra]
    data = pd.DataFrame(out_rows, columns=columns)
    data["context"] = data["context"].astype(df["context"].dtype)
    data["repetition"] = data["repetition"].astype(np.int64)
    data["prompt"] = pd.Categorical(data["prompt"], categories=[t.variant for t in templates])
    data["belief"] = data["belief"].astype(np.float64)
    data["token_belief"] = data["token_belief"].astype(np.float64)
    if dec_template is None:
        data = data.drop(columns=["action", "forced_choice", "token_belief"])
    else:
        data["action"] = pd.Categorical(data["action"], categories=list(ACTION_LABELS))
        data["forced_choice"] = data["forced_choice"].astype(object)
    for c in extra:
        data[c] = data[c].astype(df[c].dtype)
    incoherent = pd.DataFrame(flagged)
    if dec_template is None and len(incoherent):
        incoherent = incoherent.drop(columns=["action", "forced_choice", "token_belief"])
    return make_result(data, done, client, n_total, "rows", incoherent)


def _output_names(templates: Sequence[Template]) -> list[str]:
    """The columns :func:`run` writes besides ``context``: those of ``data`` and of
    ``incoherent`` (``stated_<label>``, ``stated_sum``)."""
    stated = dict.fromkeys(f"stated_{lab.lower()}" for t in templates for lab in t.labels or ())
    return ["repetition", "prompt", "belief", "action", "forced_choice", "token_belief",
            *stated, "stated_sum"]


def _templates_iv(prompts: Sequence[str], decision: str | None, question: str | None,
                  df: pd.DataFrame, owner: str) -> tuple[list[Template], Template | None]:
    """The probability templates (of distinct variants) and the decision template; the
    question phrase checked when a built-in template wraps it."""
    if isinstance(prompts, str) or not isinstance(prompts, Sequence) or not prompts:
        raise TypeError(param_error("prompts", owner, "a non-empty sequence of template names",
                                    prompts))
    templates = [get_template(p) for p in prompts]
    for t in templates:
        if t.kind != "probability":
            raise ValueError(param_error("prompts", owner, "probability templates", t.name))
    if len({t.variant for t in templates}) != len(templates):
        raise ValueError(param_error("prompts", owner, "templates of distinct prompt variants",
                                     [f"{t.name} ({t.variant})" for t in templates]))
    dec_template = None if decision is None else get_template(decision)
    if dec_template is not None and dec_template.kind != "decision":
        raise ValueError(param_error("decision", owner, "a decision template or None",
                                     dec_template.name))
    if any(is_builtin(t) for t in [*templates, *([dec_template] if dec_template else [])]):
        check_phrase(question, "'question' parameter", owner)
        if question is None:
            for q in df["question"]:
                check_phrase(q, "'question' column", owner)
    return templates, dec_template


def _belief_action_jobs(client: Client, records: list[dict[Any, Any]], question: str | None,
                        templates: list[Template], dec_template: Template | None,
                        repetitions: int) -> list[Job]:
    """One job per (context, repetition, template), the decision's after the beliefs'."""
    settings = settings_json(client)
    jobs: list[Job] = []
    for row in records:
        fields = context_fields(row, question)
        for rep in range(repetitions):
            for t in templates:
                jobs.append(make_job(client, settings, t, fields, context=row["context"],
                                     prompt=t.variant, repetition=rep, quantity="belief"))
            if dec_template is not None:
                jobs.append(make_job(client, settings, dec_template, fields,
                                     context=row["context"], prompt=dec_template.variant,
                                     repetition=rep, quantity="action"))
    return jobs


@dataclass(frozen=True, slots=True)
class _Replies:
    """The parsed replies: beliefs and the numbers of incoherent belief replies by
    (context, prompt, repetition), actions (action, forced choice, token belief) by
    (context, repetition)."""

    beliefs: dict[tuple[Any, str, int], float]
    stated: dict[tuple[Any, str, int], dict[str, float]]
    actions: dict[tuple[Any, int], tuple[str, Any, float]]


def _read_replies(jobs: list[Job], done: Executed) -> _Replies:
    """The replies that parsed, and the stated numbers of those that did not sum to 1."""
    beliefs: dict[tuple[Any, str, int], float] = {}
    stated: dict[tuple[Any, str, int], dict[str, float]] = {}
    actions: dict[tuple[Any, int], tuple[str, Any, float]] = {}
    for job, parsed, tb in zip(jobs, done.parses, done.raw["token_belief"].to_numpy(),
                              strict=True):
        if parsed is None:
            continue
        req = job.request
        if req.quantity == "belief" and parsed.reason == "bad_sum":
            stated[(req.context, req.prompt, req.repetition)] = dict(parsed.raw_values)
        if not parsed.ok:
            continue
        if req.quantity == "belief":
            beliefs[(req.context, req.prompt, req.repetition)] = float(
                parsed.values[req.labels[-1]])
        else:
            actions[(req.context, req.repetition)] = (parsed.values["action"],
                                                      parsed.values["answer"], float(tb))
    return _Replies(beliefs, stated, actions)


def _belief_action_rows(records: list[dict[Any, Any]], templates: list[Template],
                        has_decision: bool, repetitions: int, extra: list[Any],
                        replies: _Replies) -> tuple[list[dict[Any, Any]], list[dict[Any, Any]]]:
    """The complete rows (a belief and its repetition's action) and the incoherent belief
    replies with their actions."""
    out_rows = []
    flagged = []
    no_action = (None, None, math.nan)
    for row in records:
        for t in templates:
            for rep in range(repetitions):
                key = (row["context"], t.variant, rep)
                b = replies.beliefs.get(key)
                act = replies.actions.get((row["context"], rep)) if has_decision else (
                    no_action)
                if key in replies.stated:
                    numbers = replies.stated[key]
                    flagged.append({"context": row["context"], "repetition": rep,
                                    "prompt": t.variant,
                                    **{f"stated_{lab.lower()}": v for lab, v in numbers.items()},
                                    "stated_sum": math.fsum(numbers.values()),
                                    "action": (act or no_action)[0],
                                    "forced_choice": (act or no_action)[1],
                                    "token_belief": (act or no_action)[2],
                                    **{c: row[c] for c in extra}})
                if b is None or act is None:
                    continue
                out_rows.append({"context": row["context"], "repetition": rep,
                                 "prompt": t.variant, "belief": b, "action": act[0],
                                 "forced_choice": act[1], "token_belief": act[2],
                                 **{c: row[c] for c in extra}})
    return out_rows, flagged
