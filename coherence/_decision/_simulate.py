"""Simulated agents with known ground truth.

A study has ``n_contexts`` contexts. Context ``i`` has a true posterior ``q_i``
and an outcome ``y_i ~ Bernoulli(q_i)`` fixed for the context. The agent forms
an internal (latent) belief

    b_i = snap(clip(w(q_i) + bias, 0, 1))

where ``w`` is an optional probability-weighting function (prospect theory) and
``snap`` rounds to the agent's grid (LLMs think and report in round numbers).
For every prompt variant ``v`` and repetition ``r`` it then, in two separate
conversations,

* reports ``p = snap(clip(b_i + shift_v + report_noise * eps, 0, 1))``, and
* acts: ``a ~ softmax(-EL(b') / temperature)`` over yes / no / defer, with the
  expected losses ``EL(yes) = (1 - b') loss_fp``, ``EL(no) = b' loss_fn`` and
  ``EL(defer) = loss_defer`` (``b' = b`` except for the leaky agent, which
  updates ``b`` on a private signal about the outcome).

Because the action depends on the outcome only through what the report also
carries, ``action _||_ outcome | belief`` holds exactly for the rational agent
without report noise. The ground truth (:class:`SimulationTruth`), from the exact
joint distribution of (belief, outcome, action), is computed in ``_truth.py``; the
grid rounding is ``_grid.py``'s.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from types import MappingProxyType
from typing import Any
from typing import Literal

import numpy as np
import pandas as pd
from scipy import special

from .._parameters import check_choice
from .._parameters import check_float
from .._parameters import check_int
from .._rng import RNGLike
from .._rng import check_rng
from .._validation import listed
from .._validation import param_error
from .._validation import probability_array
from ._grid import snap_to_grid
from ._truth import SimulationTruth
from ._truth import simulation_truth

__all__ = [
    "ACTIONS",
    "PROMPTS",
    "Agent",
    "SimulatedStudy",
    "simulate",
]

ACTIONS: tuple[str, str, str] = ("yes", "no", "defer")
PROMPTS: tuple[str, str, str, str] = ("standard", "mse", "absolute", "bayesian")
AGENT_KINDS = ("rational", "leaky", "nonmonotone", "prompt_sensitive")
DEFAULT_SHIFTS: Mapping[str, float] = MappingProxyType(
    {"standard": 0.0, "mse": 0.05, "absolute": -0.1, "bayesian": 0.1}
)


def _agent_options(owner: str, options: dict[str, Any]) -> dict[str, Any]:
    """The options of an agent checked and normalised (``owner`` names the caller)."""
    options = dict(options)
    grid = options.get("grid", 0.05)
    if grid is not None:
        grid = check_float(grid, "grid", owner, low=0.0, high=0.5, low_open=True)
        n_cells = round(1.0 / grid)
        if abs(n_cells * grid - 1.0) > 1e-9:
            raise ValueError(param_error("grid", owner, "None or a step with 1/grid an "
                                         "integer (0.1, 0.05, 0.01, ...)", grid))
        options["grid"] = 1.0 / n_cells
    weighting = options.get("weighting")
    if weighting is not None:
        check_choice(weighting, "weighting", owner, (None, "prelec", "tversky_kahneman"))
    options["gamma"] = check_float(options.get("gamma", 1.0), "gamma", owner, low=0.0,
                                   low_open=True)
    if weighting == "tversky_kahneman" and options["gamma"] < 0.28:
        raise ValueError(param_error("gamma", owner, ">= 0.28 for the Tversky-Kahneman "
                                     "weighting (below it w is not monotone)",
                                     options["gamma"]))
    options["bias"] = check_float(options.get("bias", 0.0), "bias", owner, low=-1.0, high=1.0)
    options["report_noise"] = check_float(options.get("report_noise", 0.0), "report_noise",
                                          owner, low=0.0)
    options["temperature"] = check_float(options.get("temperature", 0.1), "temperature",
                                         owner, low=0.0, low_open=True)
    for name in ("loss_fp", "loss_fn", "loss_defer", "loss_defer_band"):
        if name in options:
            options[name] = check_float(options[name], name, owner)
    options["strength"] = check_float(options.get("strength", 0.0), "strength", owner,
                                      low=0.0, high=1.0, high_open=True)
    if "defer" in options and not isinstance(options["defer"], bool):
        raise TypeError(param_error("defer", owner, "a bool", options["defer"]))
    band = options.get("band")
    if band is not None:
        if (not isinstance(band, Sequence) or len(band) != 2
                or not all(isinstance(v, int | float) for v in band)
                or not 0.0 <= band[0] < band[1] <= 1.0):
            raise ValueError(param_error("band", owner, "a pair (low, high) with "
                                         "0 <= low < high <= 1", band))
        options["band"] = (float(band[0]), float(band[1]))
    shifts = options.get("shifts")
    if shifts is not None:
        if not isinstance(shifts, Mapping):
            raise TypeError(param_error("shifts", owner, "a mapping of prompt name to "
                                        "shift", shifts))
        clean = {}
        for key, value in shifts.items():
            if not isinstance(key, str):
                raise TypeError(param_error("shifts", owner, "keyed by prompt names (str)",
                                            key))
            clean[key] = check_float(value, f"shifts[{key!r}]", owner, low=-1.0, high=1.0)
        options["shifts"] = MappingProxyType(clean)
    return options


def _kind_options(owner: str, kind: str, options: Mapping[str, Any]) -> None:
    """Refuse an option the agent of ``kind`` would hold without acting on it: a private
    signal (``strength``) outside the leaky agent, a deferral band without ``defer``."""
    if kind != "leaky" and options.get("strength", 0.0) != 0.0:
        raise ValueError(param_error(
            "strength", owner, f"0 for the {kind} agent (only the leaky agent acts on a "
            "private signal; Agent.leaky(strength, ...) takes the other options too)",
            options["strength"]))
    if kind == "nonmonotone" and not options.get("defer", True):
        raise ValueError(param_error("defer", owner, "True for the nonmonotone agent (its "
                                     "band prices deferring)", options["defer"]))
    if options.get("band") is not None and not options.get("defer", True):
        raise ValueError(param_error(
            "band", owner, "None when defer=False (the band prices deferring, which the "
            "agent then cannot do)", options["band"]))


# --------------------------------------------------------------------------- agent
@dataclass(frozen=True, slots=True)
class Agent:
    """The specification of a simulated agent.

    Build one with the constructors :meth:`rational`, :meth:`leaky`,
    :meth:`nonmonotone` and :meth:`prompt_sensitive`; all fields are
    documented there.
    """

    kind: Literal["rational", "leaky", "nonmonotone", "prompt_sensitive"] = "rational"
    grid: float | None = 0.05
    weighting: Literal["prelec", "tversky_kahneman"] | None = None
    gamma: float = 1.0
    bias: float = 0.0
    report_noise: float = 0.0
    temperature: float = 0.1
    loss_fp: float = 1.0
    loss_fn: float = 1.0
    loss_defer: float = 0.3
    defer: bool = True
    strength: float = 0.0
    band: tuple[float, float] | None = None
    loss_defer_band: float = 0.3
    shifts: Mapping[str, float] = field(default_factory=lambda: MappingProxyType({}))

    def __post_init__(self) -> None:
        # Agent(...) called directly is held to the constructors' rules (the constructors'
        # own checks name them; the values they pass come back unchanged)
        check_choice(self.kind, "kind", "Agent", AGENT_KINDS)
        options = {f: getattr(self, f) for f in self.__dataclass_fields__ if f != "kind"}
        options = _agent_options("Agent", options)
        _kind_options("Agent", self.kind, options)
        for name, value in options.items():
            object.__setattr__(self, name, value)

    # ---------------------------------------------------------------- constructors
    @classmethod
    def rational(
        cls,
        *,
        grid: float | None = 0.05,
        weighting: Literal["prelec", "tversky_kahneman"] | None = None,
        gamma: float = 1.0,
        bias: float = 0.0,
        report_noise: float = 0.0,
        temperature: float = 0.1,
        loss_fp: float = 1.0,
        loss_fn: float = 1.0,
        loss_defer: float = 0.3,
        defer: bool = True,
    ) -> Agent:
        """A random-utility agent that acts on the belief it holds.

        Its belief is the true posterior, distorted by ``weighting`` and ``bias`` and
        rounded to ``grid``; it chooses yes, no or defer with logit choice probabilities
        from the expected loss of each at that belief (``temperature`` the noise). It is
        the coherent agent of the tests' nulls; each other constructor changes one thing
        about it.

        Parameters
        ----------
        grid : float or None
            Step of the probability grid the agent thinks and reports in
            (``0.05``, ``0.1``, ``0.01``; ``1/grid`` must be an integer);
            ``None`` for continuous beliefs.
        weighting : {None, 'prelec', 'tversky_kahneman'}
            Probability weighting applied to the true posterior:
            Prelec ``w(q) = exp(-(-ln q)^gamma)`` or Tversky-Kahneman
            ``w(q) = q^gamma / (q^gamma + (1-q)^gamma)^(1/gamma)``.
        gamma : float
            Weighting parameter (> 0; 1 means no distortion).
        bias : float
            Additive bias of the belief (then clipped to [0, 1] by the agent).
        report_noise : float
            Standard deviation of Gaussian noise added to the *report* only
            (the agent still acts on its belief): belief and action asked in
            separate conversations. With noise, independence of action and
            outcome holds given the latent belief but fails mildly given the
            report.
        temperature : float
            Logit (random-utility) noise of the choice; > 0.
        loss_fp, loss_fn, loss_defer : float
            Losses of "yes" when y = 0, of "no" when y = 1, and of "defer".
        defer : bool
            Whether "defer" is available (else the choice is yes / no).
        """
        return cls._build(
            "rational", grid=grid, weighting=weighting, gamma=gamma, bias=bias,
            report_noise=report_noise, temperature=temperature, loss_fp=loss_fp,
            loss_fn=loss_fn, loss_defer=loss_defer, defer=defer,
        )

    @classmethod
    def leaky(cls, strength: float = 0.5, **options: Any) -> Agent:
        """An agent whose action also sees a private signal about the outcome.

        The signal ``s`` equals the outcome with probability
        ``(1 + strength) / 2`` (a fresh draw for every action); the agent updates
        its belief by Bayes' rule on it before acting, but its report omits it.
        ``strength`` in [0, 1): 0 is the rational agent. Other options as in
        :meth:`rational`, and ``band`` and ``loss_defer_band`` as in
        :meth:`nonmonotone` (not with ``defer=False``). Only this agent acts on a
        signal: the other constructors and ``Agent(...)`` refuse a nonzero
        ``strength`` (``ValueError``), which they would hold and not act on.
        """
        return cls._build("leaky", strength=strength, **options)

    @classmethod
    def nonmonotone(
        cls,
        band: tuple[float, float] = (0.4, 0.6),
        loss_defer_band: float = 0.1,
        **options: Any,
    ) -> Agent:
        """An agent that defers in a belief band, making choice shares non-monotone.

        Inside ``band`` (on the belief it acts on) deferring costs
        ``loss_defer_band``; outside it costs ``loss_defer`` (default 0.6 here,
        so the agent defers less outside the band), with a default
        ``temperature`` of 0.25 so that every action is seen at every belief.
        Entering the band the share of "yes" among yes/defer drops (0.45 at
        belief 0.35 to 0.12 at 0.40); leaving it the share of "defer" among
        defer/no drops (0.88 at 0.60 to 0.55 at 0.65): both pairs are
        non-monotone in the belief. Independence of action and outcome given
        the belief still holds.
        """
        options.setdefault("loss_defer", 0.6)
        options.setdefault("temperature", 0.25)
        return cls._build("nonmonotone", band=band, loss_defer_band=loss_defer_band, **options)

    @classmethod
    def prompt_sensitive(cls, shifts: Mapping[str, float] | None = None, **options: Any) -> Agent:
        """An agent whose reported belief shifts by a set amount per prompt variant.

        ``shifts`` maps prompt names to additive shifts of the report (default
        ``{'standard': 0, 'mse': +0.05, 'absolute': -0.10, 'bayesian': +0.10}``);
        the report is clipped to [0, 1] and snapped to the grid. The action does
        not depend on the prompt.
        """
        return cls._build(
            "prompt_sensitive", shifts=dict(DEFAULT_SHIFTS if shifts is None else shifts),
            **options,
        )

    @classmethod
    def _build(cls, kind: str, **options: Any) -> Agent:
        owner = f"Agent.{kind}"
        known = {f for f in cls.__dataclass_fields__ if f != "kind"}
        unknown = sorted(set(options) - known)
        if unknown:
            raise TypeError(f"{owner} got unknown option(s) {', '.join(map(repr, unknown))}; "
                            f"known options: {', '.join(sorted(known))}.")
        options = _agent_options(owner, options)
        _kind_options(owner, kind, options)
        return cls(kind=kind, **options)  # type: ignore[arg-type]

    # ---------------------------------------------------------------- the model
    @property
    def actions(self) -> tuple[str, ...]:
        """The actions this agent chooses among."""
        return ACTIONS if self.defer else ACTIONS[:2]

    def shift(self, prompt: str) -> float:
        """The report shift under ``prompt`` (0 for prompts not listed)."""
        return float(self.shifts.get(prompt, 0.0))

    def weight(self, q: np.ndarray) -> np.ndarray:
        """The probability-weighting function ``w(q)`` (identity when none)."""
        q = np.asarray(q, dtype=np.float64)
        g = self.gamma
        if self.weighting is None or g == 1.0:
            return q.copy()
        with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
            if self.weighting == "prelec":
                out = np.exp(-np.power(-np.log(q), g))
            else:
                num = np.power(q, g)
                out = num / np.power(num + np.power(1.0 - q, g), 1.0 / g)
        out = np.where(q <= 0.0, 0.0, np.where(q >= 1.0, 1.0, out))
        return out

    def _raw_belief(self, q: np.ndarray) -> np.ndarray:
        return np.clip(self.weight(q) + self.bias, 0.0, 1.0)

    def latent_belief(self, q: Any) -> np.ndarray:
        """The belief the agent holds (and acts on) for true posterior ``q``."""
        return snap_to_grid(self._raw_belief(np.asarray(q, dtype=np.float64)), self.grid)

    def choice_probabilities(self, belief: Any) -> np.ndarray:
        """P(action | the belief acted on), shape (n, n_actions), columns in :attr:`actions`."""
        b = np.asarray(belief, dtype=np.float64)
        el_yes = (1.0 - b) * self.loss_fp
        el_no = b * self.loss_fn
        columns = [el_yes, el_no]
        if self.defer:
            el_defer = np.full_like(b, self.loss_defer)
            if self.band is not None:
                inside = (b >= self.band[0]) & (b <= self.band[1])
                el_defer = np.where(inside, self.loss_defer_band, el_defer)
            columns.append(el_defer)
        logits = -np.stack(columns, axis=-1) / self.temperature
        return special.softmax(logits, axis=-1)

    def _signal_update(self, b: np.ndarray, s: np.ndarray) -> np.ndarray:
        """Bayes update of belief ``b`` on a signal ``s`` in {0, 1}."""
        if self.strength == 0.0:
            return b
        log_lr = math.log((1.0 + self.strength) / (1.0 - self.strength))
        with np.errstate(divide="ignore"):
            logit = np.log(b) - np.log1p(-b)
        updated = special.expit(logit + np.where(s == 1, log_lr, -log_lr))
        return np.where((b <= 0.0) | (b >= 1.0), b, updated)

    def action_given_outcome(self, belief: np.ndarray, outcome: int) -> np.ndarray:
        """P(action | latent belief, outcome), marginal over the private signal."""
        b = np.asarray(belief, dtype=np.float64)
        if self.kind != "leaky" or self.strength == 0.0:
            return self.choice_probabilities(b)
        p_match = 0.5 + self.strength / 2.0
        probs = np.zeros((*b.shape, len(self.actions)))
        for s in (0, 1):
            w = p_match if s == outcome else 1.0 - p_match
            probs += w * self.choice_probabilities(self._signal_update(b, np.full(b.shape, s)))
        return probs


@dataclass(frozen=True, slots=True)
class SimulatedStudy:
    """A simulated belief/action table and its ground truth."""

    data: pd.DataFrame
    truth: SimulationTruth


# --------------------------------------------------------------------------- simulate
def _by_context(values: np.ndarray, index: pd.Index, owner: str) -> np.ndarray:
    """The posteriors of a Series put in context order: the Series' index must be the
    context numbers ``0 .. n-1`` (the table's ``context`` column), in any order; any
    other index is refused rather than read by position."""
    n = len(values)
    labels = index.to_numpy(dtype=object)
    whole = [isinstance(v, int | np.integer) and not isinstance(v, bool | np.bool_)
             for v in labels]
    if all(whole) and index.is_unique and set(labels) == set(range(n)):
        return values[np.argsort(labels.astype(np.int64), kind="stable")]
    odd = [v for v, ok in zip(labels, whole, strict=True) if not ok or not 0 <= v < n]
    odd = odd or index[index.duplicated()].tolist()
    shown = listed(odd, show=repr)
    raise ValueError(
        f"The 'posteriors' parameter of {owner} is a pandas Series, so its index must name "
        f"each context by its number 0 .. {n - 1} (the table's 'context' column), once each, "
        f"in any order; {len(odd)} label(s) do not (first: {shown}). Pass "
        "posteriors.to_numpy() to give the contexts' posteriors by position instead.")


def _simulate_iv(agent: Any, n_contexts: Any, n_repetitions: Any, posteriors: Any,
                 prompts: Any) -> tuple[Agent, int, int, np.ndarray | None, tuple[str, ...]]:
    owner = "simulate"
    if isinstance(agent, str):
        agent = check_choice(agent, "agent", owner, AGENT_KINDS)
        agent = getattr(Agent, agent)()
    elif not isinstance(agent, Agent):
        raise TypeError(param_error("agent", owner, "an agent name "
                                    f"({', '.join(map(repr, AGENT_KINDS))}) or an Agent", agent))
    n_repetitions = check_int(n_repetitions, "n_repetitions", owner, low=1)
    if posteriors is not None:
        index = posteriors.index if isinstance(posteriors, pd.Series) else None
        posteriors = probability_array(posteriors, "posteriors", owner=owner)
        if index is not None:
            posteriors = _by_context(posteriors, index, owner)
        if n_contexts is not None and check_int(n_contexts, "n_contexts", owner,
                                                low=1) != len(posteriors):
            raise ValueError(param_error("n_contexts", owner,
                                         f"None or equal to len(posteriors) = {len(posteriors)}",
                                         n_contexts))
        n_contexts = len(posteriors)
        if n_contexts == 0:
            raise ValueError(param_error("posteriors", owner, "non-empty", "an empty array"))
    else:
        n_contexts = check_int(200 if n_contexts is None else n_contexts, "n_contexts", owner,
                               low=1)
    if prompts is None:
        prompts = tuple(agent.shifts) if agent.kind == "prompt_sensitive" else ("standard",)
    if isinstance(prompts, str):
        prompts = (prompts,)
    prompts = tuple(prompts)
    if not prompts or not all(isinstance(p, str) for p in prompts):
        raise ValueError(param_error("prompts", owner, "a non-empty sequence of prompt names",
                                     prompts))
    if len(set(prompts)) != len(prompts):
        raise ValueError(param_error("prompts", owner, "free of duplicates", prompts))
    known = (*PROMPTS, *[k for k in agent.shifts if k not in PROMPTS])
    unknown = [p for p in prompts if p not in known]
    if unknown:
        raise ValueError(param_error("prompts", owner, "names of prompt variants ("
                                     + ", ".join(map(repr, known)) + ")", unknown))
    return agent, n_contexts, n_repetitions, posteriors, prompts


def simulate(
    agent: str | Agent = "rational",
    *,
    n_contexts: int | None = 200,
    n_repetitions: int = 5,
    posteriors: Any = None,
    prompts: Sequence[str] | None = None,
    rng: RNGLike = None,
) -> SimulatedStudy:
    """Simulate a belief/action study with a known ground truth.

    The agents of :class:`Agent` each break one law of coherence, or none: the rational
    agent acts on the belief it holds; the leaky one also sees a signal about the
    outcome; the nonmonotone one defers in a band of beliefs, so its choice shares are
    not monotone in the belief; the prompt-sensitive one shifts its belief with the
    wording. The true posteriors and what each agent acted on are known, so the study
    says what every test should find: for checking a test's size and power, or a
    pipeline from end to end.

    Parameters
    ----------
    agent : str or Agent
        ``'rational'``, ``'leaky'``, ``'nonmonotone'``, ``'prompt_sensitive'``
        (each with its default settings) or an :class:`Agent` built by one of
        its constructors, e.g. ``Agent.leaky(strength=0.8)`` or
        ``Agent.rational(report_noise=0.05)``.
    n_contexts : int or None
        Number of contexts (None: 200). With ``posteriors`` it must be None or
        ``len(posteriors)``, the number of contexts then.
    n_repetitions : int
        Elicitations per context and prompt variant.
    posteriors : array-like, optional
        The true posterior of each context (e.g. from a Bayesian network). By
        default they are drawn to cover [0, 1] evenly (stratified uniform:
        one draw in each of ``n_contexts`` equal-width cells, in random order).
        An array gives context ``i`` its ``i``-th value; a pandas Series is read
        by its index, which must be the context numbers ``0 .. n-1`` (in any
        order): any other index is an error, never read by position.
    prompts : sequence of str, optional
        Prompt variants; default ``('standard',)``, or every variant the
        agent's ``shifts`` name for the prompt-sensitive agent.
    rng : int, numpy.random.Generator or None
        Source of randomness; the same int gives the same study.

    Returns
    -------
    SimulatedStudy
        ``data``: the belief/action table, one row per (context, prompt,
        repetition), with columns ``context`` (int64), ``repetition`` (int64),
        ``prompt`` (category), ``belief`` (float64), ``action`` (category of
        yes / no / defer), ``outcome`` (int64), ``truth`` (float64, the true
        posterior) and ``latent_belief`` (float64, the belief the agent acted
        on before any report noise or prompt shift). ``truth``: a
        :class:`SimulationTruth`.

    See Also
    --------
    snap_to_grid : the rounding of the agents' stated beliefs to their grid.
    plan : power of a test at planned study designs, by simulation.
    bayesnets.simulated_agent_study : simulated agents answering on a Bayesian network.

    Examples
    --------
    >>> import coherence
    >>> study = coherence.simulate("rational", n_contexts=50, rng=0)
    >>> study.data.shape
    (250, 8)
    >>> study.truth.cmi
    0.0
    """
    agent, n_contexts, n_repetitions, posteriors, prompts = _simulate_iv(
        agent, n_contexts, n_repetitions, posteriors, prompts)
    gen = check_rng(rng, owner="simulate")
    data = _draw_study(agent, n_contexts, n_repetitions, posteriors, prompts, gen)
    return SimulatedStudy(data=data, truth=simulation_truth(agent, prompts, posteriors))


def simulated_table(agent: Agent, *, n_contexts: int, n_repetitions: int,
                    prompts: Sequence[str], rng: RNGLike) -> pd.DataFrame:
    """``simulate(agent, n_contexts=..., n_repetitions=..., prompts=..., rng=rng).data``,
    value for value, without the study's truth: what :func:`coherence.plan` draws per
    study (the truth, the same for every study of an agent, is most of simulate's time
    and no part of the table)."""
    agent, n_contexts, n_repetitions, posteriors, prompts = _simulate_iv(
        agent, n_contexts, n_repetitions, None, prompts)
    gen = check_rng(rng, owner="simulate")
    return _draw_study(agent, n_contexts, n_repetitions, posteriors, prompts, gen)


def _draw_study(agent: Agent, n_contexts: int, n_repetitions: int,
                posteriors: np.ndarray | None, prompts: tuple[str, ...],
                gen: np.random.Generator) -> pd.DataFrame:
    """The table of :func:`simulate`, from validated arguments."""
    if posteriors is None:
        q = (gen.permutation(n_contexts) + gen.random(n_contexts)) / n_contexts
    else:
        q = posteriors.copy()
    y = (gen.random(n_contexts) < q).astype(np.int64)
    b = agent.latent_belief(q)

    n_prompts = len(prompts)
    n_rows = n_contexts * n_prompts * n_repetitions
    ctx = np.repeat(np.arange(n_contexts, dtype=np.int64), n_prompts * n_repetitions)
    prompt_idx = np.tile(np.repeat(np.arange(n_prompts), n_repetitions), n_contexts)
    rep = np.tile(np.arange(n_repetitions, dtype=np.int64), n_contexts * n_prompts)
    b_rows = b[ctx]
    y_rows = y[ctx]
    shift = np.array([agent.shift(p) for p in prompts])[prompt_idx]

    # the report (one conversation) ...
    noise = gen.standard_normal(n_rows) * agent.report_noise if agent.report_noise else 0.0
    belief = snap_to_grid(np.clip(b_rows + shift + noise, 0.0, 1.0), agent.grid)
    # ... and the action (another conversation)
    acted_on = b_rows
    if agent.kind == "leaky" and agent.strength > 0.0:
        match = gen.random(n_rows) < 0.5 + agent.strength / 2.0
        signal = np.where(match, y_rows, 1 - y_rows)
        acted_on = agent._signal_update(b_rows, signal)
    probs = agent.choice_probabilities(acted_on)
    u = gen.random(n_rows)
    choice = np.minimum((u[:, None] > np.cumsum(probs, axis=1)).sum(axis=1), probs.shape[1] - 1)

    data = pd.DataFrame({
        "context": ctx,
        "repetition": rep,
        "prompt": pd.Categorical.from_codes(prompt_idx, categories=list(prompts)),
        "belief": belief,
        "action": pd.Categorical.from_codes(choice, categories=list(agent.actions)),
        "outcome": y_rows,
        "truth": q[ctx],
        "latent_belief": b_rows,
    })
    return data
