"""Law-of-iterated-expectation studies on a Bayesian network, answered by a simulated agent.

:func:`lie_study` samples contexts of a network (:func:`bayesnets.contexts`),
computes the exact P(y | x), P(z | x) and P(y | x, z) for auxiliary variables z
withheld from x (:func:`bayesnets.auxiliary`), and lets a simulated agent
report them with noise: the long table :func:`coherence.iterated_expectation_check`
consumes, the exact (noise-free) LIE gap of the agent, and a forward sample of
the network for the random-forest baseline.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from coherence import Agent
from coherence._parameters import check_float
from coherence._parameters import check_int
from coherence._rng import RNGLike
from coherence._rng import check_rng
from coherence._validation import param_error

from ._cases import build_contexts
from ._cases import study_defaults
from ._inference import auxiliary
from ._network import Network
from ._network import as_network
from ._network import variable_names
from ._phrases import variable_name

__all__ = ["DEFAULT_AUXILIARY", "LIEStudy", "auxiliary_name", "lie_study"]

#: Default auxiliary variables (withheld from the evidence) per bundled network.
DEFAULT_AUXILIARY: Mapping[str, tuple[str, ...]] = MappingProxyType({
    # the most informative withheld variables about the default target (the
    # weighted agent's noise-free LIE error is largest for them)
    "child": ("DuctFlow", "CardiacMixing", "ChestXray"),
    "asia": ("tub", "either"),
    "alarm": ("LVEDVOLUME", "STROKEVOLUME"),
})

#: Noise-free gaps below this are floating-point rounding of exact sums: set to 0.
_ROUNDING = 1e-12


def auxiliary_name(network: str, variable: str) -> str:
    """A human-readable name of a network variable, for prompts about it.

    Network variables have short codes (``RUQO2``, ``bronc``); prompts that ask about
    them need words. The networks child, asia, cancer and alarm have their names built
    in; any other network's variable keeps its code.

    Parameters
    ----------
    network : str
        The network's name (``'child'``, ``'asia'``, ``'cancer'``, ``'alarm'``
        have names; any other network falls back to the variable itself).
    variable : str
        The variable.

    Returns
    -------
    str
        The name (``'right upper quadrant oxygen pressure (kPa)'``), or
        ``variable`` when none is known.

    See Also
    --------
    question : the question asking for a probability of a variable.
    lie_study : the studies whose prompts use the name.

    Examples
    --------
    >>> from bayesnets import auxiliary_name
    >>> auxiliary_name("asia", "bronc")
    'bronchitis status'
    """
    # a number came back as itself (not a str) or str()-ed, a list raised 'unhashable type'
    for name, value in (("network", network), ("variable", variable)):
        if not isinstance(value, str) or not value:
            raise TypeError(param_error(name, "auxiliary_name", "a non-empty str", value))
    return variable_name(network, variable)


@dataclass(frozen=True, slots=True)
class LIEStudy:
    """A law-of-iterated-expectation study answered by a simulated agent.

    Attributes
    ----------
    data : pandas.DataFrame
        The agent's reports, one row per (context, auxiliary variable, state),
        columns ``context, variable, state, p_y_given_x, p_y_given_xz,
        p_z_given_x, variable_name`` (the layout of
        :func:`coherence.iterated_expectation_check`; ``variable_name`` is the
        human-readable name for :func:`elicitation.run_lie`).
    exact : pandas.DataFrame
        The same rows with the network's exact probabilities (where
        P(z | x) = 0, P(y | x, z) is set to P(y | x)).
    truth : pandas.DataFrame
        One row per (context, variable): ``context, variable, gap, error``,
        the agent's noise-free LIE gap
        :math:`b(P(y|x)) - \\sum_z b(P(y|x,z))\\, \\pi_z` (0 below 1e-12, the
        rounding of exact sums) and its absolute value. The reported gap's
        expectation equals ``gap``.
    contexts : pandas.DataFrame
        The contexts table of :func:`bayesnets.contexts` (evidence, truth,
        outcome, description).
    ground_truth : pandas.DataFrame
        A forward sample of the network (state names; the binary ``y`` column
        is 1 when the target takes the study's state), for
        :func:`coherence.random_forest_baseline`.
    states : mapping of str to tuple
        The network's states of each variable (``bayesnets.Network.states``), for
        :func:`coherence.random_forest_baseline`'s ``states=`` (through
        :func:`coherence.iterated_expectation_check`'s ``baseline_options``), which then
        refuses an evidence value or a state that is not among its variable's states.
    evidence : tuple of str
        The evidence variables forming x.
    agent : coherence.Agent
        The agent whose weighting and bias shaped the reports.
    report_noise : float
        Standard deviation of a report of a probability 1/2.
    """

    data: pd.DataFrame = field(repr=False)
    exact: pd.DataFrame = field(repr=False)
    truth: pd.DataFrame = field(repr=False)
    contexts: pd.DataFrame = field(repr=False)
    ground_truth: pd.DataFrame = field(repr=False)
    evidence: tuple[str, ...] = ()
    agent: Agent = field(default_factory=Agent)
    report_noise: float = 0.0
    states: Mapping[str, tuple[Any, ...]] = field(
        default_factory=lambda: MappingProxyType({}), repr=False)

    def redraw(self, *, agent: str | Agent | None = None, report_noise: float | None = None,
               rng: RNGLike = None) -> pd.DataFrame:
        """Fresh reports of the same contexts: a repetition, or another agent.

        Parameters
        ----------
        agent : {'rational', 'weighted'}, coherence.Agent or None
            The agent answering (default: this study's).
        report_noise : float or None
            Its report noise (default: this study's).
        rng : int, numpy.random.Generator or None
            Randomness of the reports.

        Returns
        -------
        pandas.DataFrame
            A table laid out as :attr:`data`, with independent reports. Two
            redraws by the same agent are exchangeable: one can serve as the
            other's baseline under the null of
            :func:`coherence.iterated_expectation_check`'s sign test.
        """
        owner = "LIEStudy.redraw"
        gen = check_rng(rng, owner=owner)
        spec = self.agent if agent is None else _agent_iv(agent, owner)
        noise = self.report_noise if report_noise is None else check_float(
            report_noise, "report_noise", owner, low=0.0, high=0.5, high_open=True)
        out = _draw(_held(self.exact, spec), _kappa(noise), gen)
        names = dict(zip(self.data["variable"], self.data["variable_name"], strict=True))
        out["variable_name"] = [names[z] for z in out["variable"]]
        return out


def _agent_iv(agent: Any, owner: str) -> Agent:
    if isinstance(agent, Agent):
        if agent.kind != "rational":
            raise ValueError(param_error("agent", owner, "a rational Agent (weighting, gamma "
                                         "and bias are used)", f"a {agent.kind!r} agent"))
        return agent
    if agent == "rational":
        return Agent.rational(grid=None)
    if agent == "weighted":
        return Agent.rational(grid=None, weighting="prelec", gamma=0.6)
    raise ValueError(param_error("agent", owner, "'rational', 'weighted' or a "
                                 "coherence.Agent", agent))


def _forward_sample(net: Network, n: int, gen: np.random.Generator) -> np.ndarray:
    """Ancestral sample of state codes, shape (n, n_variables)."""
    codes = np.empty((n, len(net.variables)), dtype=np.int64)
    for j, v in enumerate(net.variables):
        cpt = net.cpts[v]
        index: tuple[Any, ...] = tuple(codes[:, net.index[p]] for p in net.parents[v])
        probs = cpt[(slice(None), *index)] if index else np.repeat(cpt[:, None], n, axis=1)
        cum = np.cumsum(probs, axis=0)
        u = gen.random(n) * cum[-1]
        codes[:, j] = np.minimum((u[None, :] >= cum).sum(axis=0), cpt.shape[0] - 1)
    return codes


def _beta_reports(q: np.ndarray, kappa: float, gen: np.random.Generator) -> np.ndarray:
    """Beta(kappa q, kappa (1 - q)) draws (mean q; 0 and 1 stay put); kappa = inf: q."""
    if not np.isfinite(kappa):
        return q.copy()
    g1 = gen.gamma(kappa * q)
    g0 = gen.gamma(kappa * (1.0 - q))
    return g1 / (g1 + g0)


def _kappa(report_noise: float) -> float:
    """Beta/Dirichlet concentration whose report of 1/2 has sd ``report_noise``."""
    return np.inf if report_noise == 0.0 else 0.25 / report_noise**2 - 1.0


def _held(exact: pd.DataFrame, spec: Agent) -> pd.DataFrame:
    """The agent's noise-free beliefs for an exact long table."""
    def belief(q: np.ndarray) -> np.ndarray:
        return np.clip(spec.weight(q) + spec.bias, 0.0, 1.0)

    out = exact.loc[:, ["context", "variable", "state"]].copy()
    out["p_y_given_x"] = belief(exact["p_y_given_x"].to_numpy(dtype=float))
    out["p_y_given_xz"] = belief(exact["p_y_given_xz"].to_numpy(dtype=float))
    w = pd.Series(spec.weight(exact["p_z_given_x"].to_numpy(dtype=float)), index=exact.index)
    total = w.groupby([exact["context"], exact["variable"]], sort=False).transform("sum")
    out["p_z_given_x"] = (w / total).to_numpy(dtype=float)
    return out


def _draw(held: pd.DataFrame, kappa: float, gen: np.random.Generator) -> pd.DataFrame:
    """Independent unbiased reports of the held beliefs (one P(y|x) per context)."""
    out = held.copy()
    first = ~held["context"].duplicated().to_numpy()
    # each row's context among the contexts in order of first appearance (the rows need
    # not be grouped by context: counting first rows gave a row of a context met again
    # after another the other's report)
    codes = pd.factorize(held["context"])[0]
    out["p_y_given_x"] = _beta_reports(held["p_y_given_x"].to_numpy()[first], kappa,
                                       gen)[codes]
    out["p_y_given_xz"] = _beta_reports(held["p_y_given_xz"].to_numpy(dtype=float), kappa, gen)
    if np.isfinite(kappa):
        g = pd.Series(gen.gamma(kappa * held["p_z_given_x"].to_numpy(dtype=float)),
                      index=held.index)
        total = g.groupby([held["context"], held["variable"]], sort=False).transform("sum")
        out["p_z_given_x"] = (g / total).to_numpy(dtype=float)
    return out


def lie_study(network: Any = "child", *, target: str | None = None, state: Any = None,
              evidence_vars: Sequence[str] | None = None,
              auxiliary_vars: Sequence[str] | None = None, agent: str | Agent = "rational",
              report_noise: float = 0.03, n_contexts: int = 100,
              n_ground_truth: int = 5000, phrases: Any = None,
              rng: RNGLike = None) -> LIEStudy:
    r"""A law-of-iterated-expectation study on a Bayesian network, answered by a simulated agent.

    Contexts are drawn from the network; for each, the three quantities the law of
    iterated expectation ties (P(y | x), P(y | x, z) for each state of a withheld
    variable z, and P(z | x)) are answered by a simulated agent with a chosen weighting,
    bias and noise. The exact answers come with them, so
    :func:`coherence.iterated_expectation_check` can be checked against a known truth.

    Parameters
    ----------
    network : Network, str or pgmpy DiscreteBayesianNetwork
        Default ``'child'``.
    target, state, evidence_vars
        As in :func:`bayesnets.contexts` (default: the network's entry of
        :data:`bayesnets.DEFAULT_STUDIES`).
    auxiliary_vars : sequence of str, optional
        The auxiliary variables z, each withheld from x (not the target, not an
        evidence variable); default :data:`DEFAULT_AUXILIARY` of the network.
    agent : {'rational', 'weighted'} or coherence.Agent
        ``'rational'`` reports noisy versions of the exact probabilities;
        ``'weighted'`` is the rational agent with Prelec weighting
        (:math:`\gamma = 0.6`). A rational :class:`coherence.Agent` contributes
        its ``weighting``, ``gamma`` and ``bias`` (its ``grid`` and
        ``report_noise`` are not used: see ``report_noise``).
    report_noise : float, default 0.03
        Standard deviation of the report of a probability 1/2, in [0, 0.5);
        0 gives noise-free reports.
    n_contexts : int, default 100
        Contexts, sampled to cover the posterior range evenly.
    n_ground_truth : int, default 5000
        Rows of the forward sample in ``ground_truth``.
    phrases : mapping, PhraseTable, str or None
        As in :func:`bayesnets.contexts`: the phrases of the contexts'
        descriptions; by default the network's built-in table. A network without
        one (fitted to data) needs them (None raises ``ValueError``).
    rng : int, numpy.random.Generator or None
        One stream for the contexts, the reports and the forward sample.

    Returns
    -------
    LIEStudy
        ``data`` (the agent's long table), ``exact``, ``truth`` (the agent's
        noise-free gap per (context, variable)), ``contexts``,
        ``ground_truth`` and ``states`` (the network's states, for the baseline's
        ``states=``).

    See Also
    --------
    auxiliary : the exact ground truth of the study.
    simulated_agent_study : a belief/action study on a network.
    coherence.iterated_expectation_check : the check run on the study.
    elicitation.run_lie : elicit the same quantities from a model.

    Notes
    -----
    With :math:`b(q) = \min(1, \max(0, w(q) + \text{bias}))` the agent's
    belief for a true probability :math:`q` (:math:`w` its weighting), the agent
    holds :math:`b(P(y|x))`, :math:`b(P(y|x,z))` and
    :math:`\pi_z \propto w(P(z|x))` (weighted, then renormalised: the agent
    states a distribution). Each report is an independent draw with that mean:
    :math:`\mathrm{Beta}(\kappa m, \kappa (1 - m))` for a probability and
    :math:`\mathrm{Dirichlet}(\kappa \pi)` for the distribution of z, with
    :math:`\kappa = 1 / (4 \sigma^2) - 1` (:math:`\sigma` = ``report_noise``,
    the standard deviation at :math:`m = 1/2`). Independence and unbiasedness
    make the expected reported gap equal the noise-free gap

    .. math::

        g(x, z) = b(P(y|x)) - \sum_z b(P(y|x,z))\, \pi_z ,

    which is 0 for an agent without weighting and bias (the law of iterated
    expectation) and not otherwise, since weighting does not commute with
    averaging. ``truth`` holds :math:`g` and :math:`|g|`. One report of
    P(y|x) per context is shared by all its auxiliary variables (it is asked
    once).

    Examples
    --------
    >>> import bayesnets
    >>> study = bayesnets.lie_study("asia", n_contexts=20, rng=0)
    >>> list(study.data.columns)  # doctest: +NORMALIZE_WHITESPACE
    ['context', 'variable', 'state', 'p_y_given_x', 'p_y_given_xz', 'p_z_given_x',
     'variable_name']
    >>> float(study.truth["error"].max())
    0.0
    >>> weighted = bayesnets.lie_study("asia", agent="weighted", n_contexts=20, rng=0)
    >>> bool(weighted.truth["error"].median() > 0.01)
    True
    """
    owner = "lie_study"
    gen = check_rng(rng, owner=owner)
    n_contexts = check_int(n_contexts, "n_contexts", owner, low=2)
    n_ground_truth = check_int(n_ground_truth, "n_ground_truth", owner, low=1)
    report_noise = check_float(report_noise, "report_noise", owner, low=0.0, high=0.5,
                               high_open=True)
    spec = _agent_iv(agent, owner)
    net = as_network(network, owner)
    if "y" in net.index:  # ground_truth's outcome column would overwrite the variable
        raise ValueError(param_error(
            "network", owner, "a network without a variable named 'y' (ground_truth's "
            "outcome column is 'y'; rename the variable)", net.name))
    target, state, evidence_vars = study_defaults(net, target, state, evidence_vars, owner)
    evidence = tuple(evidence_vars)
    if auxiliary_vars is None:
        aux_default = DEFAULT_AUXILIARY.get(net.name)
        if aux_default is None:
            raise ValueError(param_error(
                "auxiliary_vars", owner, "given for a network without default auxiliary "
                "variables (defaults exist for " + ", ".join(map(repr, DEFAULT_AUXILIARY))
                + ")", None))
        auxiliary_vars = aux_default
    aux = variable_names(auxiliary_vars, "auxiliary_vars", owner)
    if not aux:
        raise ValueError(param_error("auxiliary_vars", owner, "at least one variable", aux))
    if len(set(aux)) != len(aux):
        raise ValueError(param_error("auxiliary_vars", owner, "distinct variables", aux))
    for z in aux:
        net.check_variable(z, "auxiliary_vars", owner)
        if z == target or z in evidence:
            raise ValueError(param_error("auxiliary_vars", owner, "variables that are neither "
                                         "the target nor evidence variables", z))
    kappa = _kappa(report_noise)

    ctx = build_contexts(net, target=target, state=state, evidence_vars=list(evidence),
                         n=n_contexts, bins=20, phrases=phrases, min_support=None, rng=gen,
                         owner=owner)
    state = ctx.attrs["state"]
    ids = ctx["context"].to_numpy()
    ev = ctx.loc[:, list(evidence)]

    q_x = ctx["truth"].to_numpy(dtype=float)
    parts = []
    for z in aux:
        a = auxiliary(net, target, ev, z, state=state)
        nz = net.cardinality(z)
        p_xz = a["p_target"].to_numpy(dtype=float)
        parts.append(pd.DataFrame({
            "context": np.repeat(ids, nz), "variable": z,
            "state": pd.array(a["z"].to_numpy(dtype=object), dtype=object),
            "p_y_given_x": np.repeat(q_x, nz),
            "p_y_given_xz": np.where(np.isnan(p_xz), np.repeat(q_x, nz), p_xz),
            "p_z_given_x": a["p_z"].to_numpy(dtype=float)}))
    exact = pd.concat(parts, ignore_index=True)
    # rows ordered by context, then variable (as an elicitation run produces them)
    rank = exact["context"].map({c: i for i, c in enumerate(ids)}).to_numpy()
    exact = exact.iloc[np.lexsort((np.arange(len(exact)), rank))].reset_index(drop=True)
    exact["variable"] = exact["variable"].astype(object)
    exact["state"] = exact["state"].astype(object)
    held = _held(exact, spec)
    g = held.assign(prod=held["p_y_given_xz"] * held["p_z_given_x"]).groupby(
        ["context", "variable"], sort=False)
    truth = g.agg(p_y=("p_y_given_x", "first"), mix=("prod", "sum")).reset_index()
    gap = (truth["p_y"] - truth["mix"]).to_numpy(dtype=float)
    gap = np.where(np.abs(gap) < _ROUNDING, 0.0, gap)  # rounding of exact sums
    truth = pd.DataFrame({"context": truth["context"].to_numpy(),
                          "variable": truth["variable"].to_numpy(dtype=object),
                          "gap": gap, "error": np.abs(gap)})
    data = _draw(held, kappa, gen)
    data["variable_name"] = [auxiliary_name(net.name, z) for z in data["variable"]]

    codes = _forward_sample(net, n_ground_truth, gen)
    gt = pd.DataFrame({v: pd.array(np.asarray(net.states[v], dtype=object)[codes[:, j]],
                                   dtype=object) for j, v in enumerate(net.variables)})
    t_code = list(net.states[target]).index(state)
    gt["y"] = (codes[:, net.index[target]] == t_code).astype(np.int64)
    return LIEStudy(data=data, exact=exact, truth=truth, contexts=ctx, ground_truth=gt,
                    evidence=evidence, agent=spec, report_noise=float(report_noise),
                    states=MappingProxyType({v: tuple(net.states[v]) for v in net.variables}))
