"""The offline model client: :class:`SimulatedClient` answers the elicitation templates
from a :class:`coherence.Agent` (and a table of true probabilities), reproducibly: the
default of the demo and of every test that needs no server. The clients' protocol and
:class:`OpenAIClient` are in :mod:`._clients`."""

from __future__ import annotations

import hashlib
import json
import math
import re
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import numpy as np

from coherence import Agent
from coherence import snap_to_grid
from coherence._parameters import check_choice
from coherence._parameters import check_float
from coherence._parameters import check_int
from coherence._validation import param_error
from coherence._validation import plain_value
from coherence._validation import probability_array

from ._clients import ClientError
from ._clients import Completion
from ._clients import Request

__all__ = ["SimulatedClient"]


def _stable_ints(*parts: Any) -> list[int]:
    digest = hashlib.sha256(json.dumps([str(p) for p in parts]).encode()).digest()
    return [int.from_bytes(digest[i:i + 4], "little") for i in range(0, 16, 4)]


#: the columns of a SimulatedClient's truths that hold probabilities
_TRUTH_COLUMN = re.compile(r"^(?:truth|p_\w+|prob_.+|belief_given_.+)$")


def _truths_digest(table: Any) -> str:
    """A stable hash of what a :class:`SimulatedClient`'s answers depend on in its truths
    table: the context ids and the probability and ``outcome`` columns, the values to 12
    significant digits (exact posteriors differ in their last bit between processes, with
    the order in which a network's weights are summed: a hash of every bit would miss the
    cache of a resumed study)."""
    import pandas as pd

    columns = sorted(c for c in table.columns if isinstance(c, str)
                     and (_TRUTH_COLUMN.match(c) or c == "outcome"))
    ids = [[type(plain_value(i)).__name__, str(plain_value(i))] for i in table.index]
    values = {}
    for c in columns:
        numbers = pd.to_numeric(table[c].astype(object), errors="coerce").to_numpy(dtype=float)
        values[c] = [None if math.isnan(v) else format(float(v), ".12g") for v in numbers]
    text = json.dumps({"ids": ids, "columns": values}, sort_keys=True)
    return hashlib.sha256(text.encode()).hexdigest()[:16]


class SimulatedClient:
    """A client that answers the templates from a simulated agent.

    Parameters
    ----------
    agent : coherence.Agent or str
        The agent (``coherence.Agent.rational()``, ``.leaky(...)``, ...) or
        the name of one with default settings.
    truths : pandas.DataFrame
        One row per context, indexed by (or with a column) ``context`` (or
        ``pair``, for :func:`run_pairs`): the
        true probability of each quantity asked, in a column named like the
        quantity (``truth`` for the belief and decision templates,
        ``p_a``, ``p_a_given_b1``, ... for conditional forecasting,
        ``prob_<state>`` and ``belief_given_<state>`` for the law of iterated
        expectation), and ``outcome`` (0/1) for the leaky agent. Those
        columns must hold probabilities in [0, 1] (``outcome`` 0 or 1), or be
        missing where that quantity is never asked.
    rng : int or numpy.random.Generator, optional
        Seed. Each call draws from its own stream, derived from the seed and
        the call's (context, template, prompt, repetition, quantity), so the
        answers do not depend on the order or concurrency of the calls.
    fail : float
        Share of replies that are unparseable prose (to exercise failure
        handling); default 0.

    Notes
    -----
    As in :func:`coherence.simulate`: for a probability template the agent
    replies ``No: 1-p`` / ``Yes: p`` with
    ``p = snap(clip(b + shift(prompt) + report_noise * eps, 0, 1))`` and
    ``b = agent.latent_belief(truth)``; for the decision template it draws
    an action from ``agent.choice_probabilities`` (on the belief updated by
    a private signal about the outcome, for the leaky agent) and replies
    ``Can decide: No`` for defer, else ``Can decide: Yes`` and its answer
    (with the template's own labels). Its
    "token probability" is its belief acted on.

    Examples
    --------
    >>> import pandas as pd, coherence
    >>> from elicitation import SimulatedClient, Request
    >>> truths = pd.DataFrame({"context": [0], "truth": [0.72], "outcome": [1]})
    >>> client = SimulatedClient(coherence.Agent.rational(), truths, rng=0)
    >>> client.complete(Request(messages=(), context=0, prompt="standard")).text
    'No: 0.3\\nYes: 0.7'
    """

    def __init__(self, agent: Agent | str, truths: Any, *, rng: int | np.random.Generator
                 | None = 0, fail: float = 0.0) -> None:
        import pandas as pd

        owner = "SimulatedClient"
        if isinstance(agent, str):
            kinds = ("rational", "leaky", "nonmonotone", "prompt_sensitive")
            check_choice(agent, "agent", owner, kinds)
            agent = getattr(Agent, agent)()
        if not isinstance(agent, Agent):
            raise TypeError(param_error("agent", owner, "a coherence.Agent or an agent name",
                                        agent))
        self.agent = agent
        if not isinstance(truths, pd.DataFrame):
            raise TypeError(param_error("truths", owner, "a pandas DataFrame", type(truths)))
        id_column = next((c for c in ("context", "pair") if c in truths.columns), None)
        table = truths.set_index(id_column) if id_column is not None else truths
        if not table.index.is_unique:
            raise ValueError(param_error("truths", owner, "one row per context",
                                         "duplicated contexts"))
        for column in table.columns:
            if isinstance(column, str) and _TRUTH_COLUMN.match(column):
                # a truth outside [0, 1] (or text) would be clipped or crash mid-run
                probability_array(table[column].to_numpy(), column, owner=owner,
                                  allow_nan=True)
        if "outcome" in table.columns:
            raw = table["outcome"]
            y = pd.to_numeric(raw.astype(object), errors="coerce")
            bad = np.flatnonzero((raw.notna() & ~y.isin([0.0, 1.0])).to_numpy())
            if len(bad):
                raise ValueError(f"Column 'outcome' (input to {owner}) must be binary (0 or 1, "
                                 f"or missing); {len(bad)} row(s) are not (first: context "
                                 f"{plain_value(table.index[bad[0]])!r} = "
                                 f"{plain_value(raw.iloc[bad[0]])!r}).")
        self._truths = table.copy()   # later edits of the caller's table change nothing
        self._truths_digest = _truths_digest(self._truths)
        if isinstance(rng, np.random.Generator):
            rng = int(rng.integers(0, 2**62))
        elif rng is None:
            rng = int(np.random.default_rng().integers(0, 2**62))
        self._seed = check_int(rng, "rng", owner, low=0)
        self.fail = check_float(fail, "fail", owner, low=0.0, high=1.0)

    @property
    def model(self) -> str:
        """``simulated:<kind>:<hash of the agent's settings>``."""
        digest = hashlib.sha256(repr(self.agent).encode()).hexdigest()[:10]
        return f"simulated:{self.agent.kind}:{digest}"

    @property
    def settings(self) -> Mapping[str, Any]:
        """The seed, the failure share and ``truths``, a hash of the columns of the truths
        table the answers are drawn from (part of every cache key: a re-run after editing a
        truth or an outcome asks again rather than reading the old answers)."""
        return MappingProxyType({"seed": self._seed, "fail": self.fail,
                                 "truths": self._truths_digest})

    def _lookup(self, context: Any, column: str) -> float:
        if column not in self._truths.columns:
            raise ClientError(f"SimulatedClient has no column {column!r} in its truths table")
        try:
            value = float(self._truths.at[context, column])
        except KeyError:
            raise ClientError(f"SimulatedClient has no context {context!r}") from None
        if math.isnan(value):
            raise ClientError(f"SimulatedClient's truths table has no value in column "
                              f"{column!r} for context {context!r}")
        return value

    def complete(self, request: Request) -> Completion:
        """Answer one request as the agent would."""
        gen = np.random.default_rng([self._seed, *_stable_ints(
            request.context, request.template, request.prompt, request.repetition,
            request.quantity, request.seed)])
        agent = self.agent
        if self.fail and gen.random() < self.fail:
            return Completion(text="I am not able to give a number for this case.")
        if request.kind == "decision":
            q = self._lookup(request.context, "truth")
            b = agent.latent_belief(np.array([q]))
            acted_on = b
            if agent.kind == "leaky" and agent.strength > 0.0:
                y = int(self._lookup(request.context, "outcome"))
                match = gen.random() < 0.5 + agent.strength / 2.0
                acted_on = agent._signal_update(b, np.array([y if match else 1 - y]))
            probs = agent.choice_probabilities(acted_on)[0]
            action = agent.actions[int(gen.choice(len(probs), p=probs))]
            forced = "Yes" if acted_on[0] >= 0.5 else "No"
            can, decision = request.labels
            text = (f"{can}: No\n{decision}: {forced}" if action == "defer"
                    else f"{can}: Yes\n{decision}: {action.capitalize()}")
            return Completion(text=text, token_belief=float(acted_on[0]))
        labels = request.labels
        if request.quantity == "state_distribution":
            # a distribution over K states: each reported like a belief, the last
            # state taking the remainder so that the reply sums to 1
            q_k = np.array([self._lookup(request.context, f"prob_{s}") for s in labels[:-1]])
            b_k = agent.latent_belief(q_k)
            if agent.report_noise:
                b_k = b_k + gen.standard_normal(len(b_k)) * agent.report_noise
            p_k = snap_to_grid(np.clip(b_k, 0.0, 1.0), agent.grid)
            scale = max(1.0, float(p_k.sum()))
            p_k = np.round(p_k / scale, 12)
            values = [*p_k.tolist(), float(np.round(max(0.0, 1.0 - p_k.sum()), 12))]
            return Completion(text="\n".join(f"{lab}: {v:g}" for lab, v in
                                             zip(labels, values, strict=True)))
        column = "truth" if request.quantity == "belief" else request.quantity
        q = self._lookup(request.context, column)
        b = agent.latent_belief(np.array([q]))
        noise = gen.standard_normal() * agent.report_noise if agent.report_noise else 0.0
        p = float(snap_to_grid(np.clip(b + agent.shift(request.prompt) + noise, 0.0, 1.0),
                               agent.grid)[0])
        if len(labels) != 2:
            raise ClientError("SimulatedClient answers K-label templates only for the "
                              "'state_distribution' quantity")
        no = float(np.round(1.0 - p, 12))
        return Completion(text=f"{labels[0]}: {no:g}\n{labels[1]}: {p:g}")

    def __repr__(self) -> str:
        return f"SimulatedClient({self.agent.kind!r}, seed={self._seed})"
