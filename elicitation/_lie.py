"""The iterated-expectation study: contexts in, the quantities of the LIE check out.

:func:`run_lie` asks P(y | x), P(z | x) and P(y | x, z = z_k) for every
context, through the job engine (:mod:`._engine`); the core's LIE test reads
the table.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from coherence._validation import param_error

from ._clients import Client
from ._common import ElicitationResult
from ._common import check_output_names
from ._common import check_phrase
from ._common import context_fields
from ._common import context_table
from ._common import make_result
from ._engine import Job
from ._engine import common_iv
from ._engine import execute
from ._engine import make_job
from ._engine import settings_json
from ._options import RunOptions
from ._options import merge_options
from ._templates import get_template
from ._templates import is_builtin

__all__ = ["run_lie"]


def run_lie(
    contexts: Any,
    client: Client,
    *,
    auxiliary_variable_name: str,
    states: Sequence[str],
    question: str | None = None,
    prompt: str = "standard",
    wording: str = "paper",
    repetitions: int = 5,
    options: RunOptions | None = None,
    **overrides: Any,
) -> ElicitationResult:
    """Elicit the quantities of the law of iterated expectation for every context.

    For a context x and an auxiliary variable z withheld from x (states
    ``z_1..z_K``), each repetition asks, in separate conversations, for
    P(y | x) (template ``prompt``), the distribution P(z | x) (template
    ``next_state``, one line per state) and P(y | x, z = z_k) for every state
    (template ``given_auxiliary``).

    Parameters
    ----------
    contexts : pandas.DataFrame
        As for :func:`run` (``context``, ``description``, optional
        ``question``, ``truth``, ``outcome`` and evidence columns). A column
        named like one the runner writes (``repetition``, ``belief``,
        ``prob_<state>``, ``belief_given_<state>``, ``lie_belief``,
        ``lie_gap``) is refused: it would overwrite the elicited value.
    client : Client
        As for :func:`run`.
    auxiliary_variable_name : str
        The withheld variable in words (``'cholesterol level'``).
    states : sequence of str
        Its states, in the order asked (at least two).
    question, prompt
        The clinical question (a phrase, as for :func:`run`: required unless
        ``contexts`` has a ``question`` column, refused when it has one) and
        the probability template for P(y | x).
    wording : {'paper', 'toolkit'}
        The templates of P(z | x) and P(y | x, z): the decision paper's
        B.3.1 and B.3.2 prompts (``next_state``, ``given_auxiliary``; the
        condition reads "their <variable> is <state>") or the toolkit's
        paraphrases (``next_state_toolkit``, ``given_auxiliary_toolkit``).
    repetitions, options, **overrides
        As for :func:`run`.

    Returns
    -------
    ElicitationResult
        ``data``: one row per (context, repetition) with every quantity
        parsed: ``context``, ``repetition``, ``belief`` (P(y | x)),
        ``prob_<state>`` (P(z = state | x), normalised), ``belief_given_<state>``
        (P(y | x, z = state)), ``lie_belief`` (the sum over states of
        ``prob_<state> * belief_given_<state>``), ``lie_gap``
        (``belief - lie_belief``), then the other context columns.

    See Also
    --------
    run : elicit the belief/action table.
    coherence.iterated_expectation_check : the check run on the elicited table.
    bayesnets.lie_study : the same study answered by a simulated agent.

    Notes
    -----
    The law of iterated expectation requires, for coherent beliefs,

    .. math:: P(y \\mid x) = \\sum_k P(y \\mid x, z_k)\\, P(z_k \\mid x),

    so ``lie_gap`` is 0 for a coherent agent; its normalisation against a
    model fitted to ground truth belongs to the core's LIE test.
    """
    owner = "run_lie"
    opts = common_iv(client, repetitions=repetitions,
                     options=merge_options(options, overrides, owner), owner=owner)
    df = context_table(contexts, question, owner, list_duplicates=False)
    states, templates = _lie_iv(df, auxiliary_variable_name, states, question, prompt, wording,
                                owner)
    records = df.to_dict("records")
    jobs = _lie_jobs(client, records, templates, question, auxiliary_variable_name, states,
                     repetitions)
    done = execute(client, jobs, opts)
    data, n_total = _lie_table(df, records, jobs, done.parses, states, repetitions)
    return make_result(data, done, client, n_total, "rows")


def _lie_iv(df: pd.DataFrame, auxiliary_variable_name: Any, states: Any, question: str | None,
            prompt: str, wording: str, owner: str) -> tuple[tuple[str, ...], tuple[Any, ...]]:
    """The states as a tuple and the three templates (the belief, the distribution of the
    auxiliary variable, the belief given each of its states), after checking them and
    that the result's columns are free in ``df``."""
    if not isinstance(auxiliary_variable_name, str) or not auxiliary_variable_name:
        raise TypeError(param_error("auxiliary_variable_name", owner, "a non-empty str",
                                    auxiliary_variable_name))
    if (isinstance(states, str) or not isinstance(states, Sequence) or len(states) < 2
            or not all(isinstance(s, str) and s for s in states)
            or len({s.lower() for s in states}) != len(states)):
        raise ValueError(param_error("states", owner, "a sequence of at least two distinct "
                                     "non-empty str", states))
    states = tuple(states)
    belief_t = get_template(prompt)
    if belief_t.kind != "probability":
        raise ValueError(param_error("prompt", owner, "a probability template", prompt))
    if wording not in ("paper", "toolkit"):
        raise ValueError(param_error("wording", owner, "'paper' or 'toolkit'", wording))
    suffix = "" if wording == "paper" else "_toolkit"
    next_t = get_template("next_state" + suffix)
    given_t = get_template("given_auxiliary" + suffix)
    if is_builtin(belief_t):
        check_phrase(question, "'question' parameter", owner)
    check_output_names(df, ["repetition", "belief", *(f"prob_{s}" for s in states),
                            *(f"belief_given_{s}" for s in states), "lie_belief", "lie_gap"],
                       owner, " (a SimulatedClient's truths go in its own truths table, not in "
                       "the contexts)")
    return states, (belief_t, next_t, given_t)


def _lie_jobs(client: Client, records: list[dict[str, Any]], templates: tuple[Any, ...],
              question: str | None, auxiliary_variable_name: str, states: tuple[str, ...],
              repetitions: int) -> list[Job]:
    """Every context's and repetition's questions: the belief, the distribution of the
    auxiliary variable, the belief given each of its states."""
    belief_t, next_t, given_t = templates
    settings = settings_json(client)
    jobs: list[Job] = []
    for row in records:
        fields = context_fields(row, question)
        fields["auxiliary_variable_name"] = auxiliary_variable_name
        for rep in range(repetitions):
            ctx = row["context"]
            jobs.append(make_job(client, settings, belief_t, fields, context=ctx,
                                 prompt=belief_t.variant, repetition=rep, quantity="belief"))
            jobs.append(make_job(client, settings, next_t, {**fields, "states": states},
                                 context=ctx, prompt=next_t.name, repetition=rep,
                                 quantity="state_distribution"))
            for s in states:
                condition = f"their {auxiliary_variable_name} is {s}"
                jobs.append(make_job(client, settings, given_t,
                                     {**fields, "auxiliary_state": s,
                                      "auxiliary_variable_condition": condition}, context=ctx,
                                     prompt=given_t.name, repetition=rep,
                                     quantity=f"belief_given_{s}"))
    return jobs


def _lie_table(df: pd.DataFrame, records: list[dict[str, Any]], jobs: list[Job],
               parses: Sequence[Any], states: tuple[str, ...],
               repetitions: int) -> tuple[pd.DataFrame, int]:
    """One row per context and repetition whose every quantity was read (with the mixture
    and its gap from the belief), and the number of rows asked for."""
    got: dict[tuple[Any, int], dict[str, float]] = {}
    for job, parsed in zip(jobs, parses, strict=True):
        if parsed is None or not parsed.ok:
            continue
        req = job.request
        slot = got.setdefault((req.context, req.repetition), {})
        if req.quantity == "state_distribution":
            for s in states:
                slot[f"prob_{s}"] = float(parsed.values[s])
        else:
            slot[req.quantity] = float(parsed.values[req.labels[-1]])
    needed = ["belief", *(f"prob_{s}" for s in states), *(f"belief_given_{s}" for s in states)]
    extra = [c for c in df.columns if c not in ("context", "description", "question")]
    out_rows = []
    n_total = 0
    for row in records:
        for rep in range(repetitions):
            n_total += 1
            slot = got.get((row["context"], rep), {})
            if any(k not in slot for k in needed):
                continue
            lie = math.fsum(slot[f"prob_{s}"] * slot[f"belief_given_{s}"] for s in states)
            out_rows.append({"context": row["context"], "repetition": rep,
                             **{k: slot[k] for k in needed}, "lie_belief": lie,
                             "lie_gap": slot["belief"] - lie, **{c: row[c] for c in extra}})
    data = pd.DataFrame(out_rows, columns=["context", "repetition", *needed, "lie_belief",
                                           "lie_gap", *extra])
    data["context"] = data["context"].astype(df["context"].dtype)
    data["repetition"] = data["repetition"].astype(np.int64)
    for k in (*needed, "lie_belief", "lie_gap"):
        data[k] = data[k].astype(np.float64)
    for c in extra:
        data[c] = data[c].astype(df[c].dtype)
    return data, n_total
