"""Evaluation contexts with known posteriors, and the bridge to simulated agents.

:func:`sample_cases` draws evidence configurations whose true posteriors cover
[0, 1] evenly (equal-width bins); :func:`contexts` adds the natural-language
description and question (the table the elicitation runner consumes);
:func:`simulated_agent_study` lets a :func:`coherence.simulate` agent answer
them, so a whole study runs offline.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from collections.abc import Sequence
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from coherence import Agent
from coherence import SimulatedStudy
from coherence import simulate
from coherence._parameters import check_int
from coherence._rng import RNGLike
from coherence._rng import check_rng
from coherence._validation import param_error

from ._inference import cached_joint
from ._inference import target_state_code
from ._network import Network
from ._network import as_network
from ._network import variable_names
from ._phrases import PHRASE_NETWORKS
from ._phrases import as_table
from ._phrases import describe_rows
from ._phrases import question

__all__ = ["DEFAULT_STUDIES", "contexts", "sample_cases", "simulated_agent_study"]

_MAX_CONFIGURATIONS = 2_000_000
# A posterior is a ratio of floating-point sums: one that is exactly k / bins (0.2 when the
# evidence is independent of the target) can come out an ulp low, and its configuration would
# fall in the bin below a twin computed exactly. Bin edges are compared with this tolerance,
# far above rounding error and far below any bin width.
_BIN_TOL = 1e-9

# Default (target, state, evidence variables) per bundled network with phrases.
DEFAULT_STUDIES: Mapping[str, tuple[str, str, tuple[str, ...]]] = MappingProxyType({
    # tetralogy of Fallot from five findings a paediatric cardiologist receives
    "child": ("Disease", "Fallot",
              ("Age", "GruntingReport", "LVHreport", "XrayReport", "LowerBodyO2")),
    "alarm": ("HYPOVOLEMIA", "TRUE", ("HISTORY", "CVP", "PCWP", "BP", "HRBP")),
    "asia": ("lung", "yes", ("asia", "smoke", "xray", "dysp")),
    "cancer": ("Cancer", "True", ("Pollution", "Smoker", "Xray", "Dyspnoea")),
})


def _cases_iv(model: Any, target: Any, evidence_vars: Any, n: Any, bins: Any,
              min_support: Any, owner: str) -> tuple[Network, str, tuple[str, ...], int, int,
                                                     int]:
    net = as_network(model, owner)
    net.check_variable(target, "target", owner)
    evars = variable_names(evidence_vars, "evidence_vars", owner)
    if not evars:
        raise ValueError(param_error("evidence_vars", owner, "non-empty", evars))
    for v in evars:
        net.check_variable(v, "evidence_vars", owner)
    if target in evars:
        raise ValueError(param_error("evidence_vars", owner, "free of the target "
                                     f"'{target}'", evars))
    if len(set(evars)) != len(evars):
        raise ValueError(param_error("evidence_vars", owner, "free of duplicates", evars))
    _check_column_names(evars, _CASE_COLUMNS, owner)
    n_cfg = math.prod(net.cardinality(v) for v in evars)
    if n_cfg > _MAX_CONFIGURATIONS:
        raise ValueError(param_error("evidence_vars", owner, "variables with at most "
                                     f"{_MAX_CONFIGURATIONS} joint configurations",
                                     f"{n_cfg} configurations"))
    n = check_int(n, "n", owner, low=1)
    bins = check_int(bins, "bins", owner, low=1)
    if min_support is None:
        min_support = net.min_support
    min_support = check_int(min_support, "min_support", owner, low=0)
    if min_support > 0 and net.data_codes is None:
        raise ValueError(param_error("min_support", owner, "0 for a network not fitted to "
                                     "data (no support is recorded)", min_support))
    return net, target, evars, n, bins, min_support


#: The columns :func:`sample_cases` writes besides the evidence (and :func:`contexts` adds).
_CASE_COLUMNS = ("context", "truth", "outcome")
_CONTEXT_COLUMNS = (*_CASE_COLUMNS, "description")


def _check_column_names(evars: Sequence[Any], written: Sequence[str], owner: str) -> None:
    """An evidence variable named like a column the function writes itself would be
    overwritten by it (its states replaced by the truth, say): refused, naming it."""
    clash = [v for v in evars if v in written]
    if clash:
        raise ValueError(param_error(
            "evidence_vars", owner, "free of variables named like a column "
            f"{owner} writes itself ({', '.join(map(repr, written))}), which would overwrite "
            f"them; rename the variable(s) {clash} in the network (e.g. fit the data with "
            "that column renamed)", list(evars)))


def _configuration_support(net: Network, evars: tuple[str, ...]) -> np.ndarray:
    """The number of data rows in each evidence configuration (C order over ``evars``)."""
    assert net.data_codes is not None  # checked by the caller
    cols = [net.index[v] for v in evars]
    cards = [net.cardinality(v) for v in evars]
    cell = np.ravel_multi_index(tuple(net.data_codes[:, c] for c in cols), cards)
    return np.bincount(cell, minlength=math.prod(cards))


def sample_cases(model: Any, target: str, evidence_vars: Sequence[str], n: int, *,
                 state: Any = None, bins: int = 20, min_support: int | None = None,
                 rng: RNGLike = None) -> pd.DataFrame:
    """Draw evaluation contexts whose true posteriors cover [0, 1] evenly.

    Drawn from the network's own distribution, contexts would have whatever posteriors
    the network makes common; these are spread evenly over bins of the posterior
    instead, so a test of belief and action sees the whole range of beliefs.

    Parameters
    ----------
    model : Network, str or pgmpy DiscreteBayesianNetwork
        The network (a bundled name is loaded with :func:`bayesnets.load`).
    target : str
        The variable whose posterior is each context's truth.
    evidence_vars : sequence of str
        The variables every context observes.
    n : int
        The number of contexts.
    state : optional
        The target state whose probability is the truth; by default the first
        state of a binary target. Required for a target with more states.
    bins : int
        The number of equal-width bins of [0, 1] (20 in the reference paper).
    min_support : int, optional
        Only evidence configurations matched by at least this many rows of the
        data the network was fitted on are used; default the network's own
        ``min_support`` (100 for :func:`bayesnets.fit`, 0 for bundled networks).
    rng : int, numpy.random.Generator or None
        Source of randomness.

    Returns
    -------
    pandas.DataFrame
        One row per context: ``context`` (int64, 0..n-1), one categorical
        column per evidence variable (its state), ``truth`` (float64,
        :math:`P(\\text{target} = \\text{state} \\mid \\text{evidence})`) and
        ``outcome`` (int64, drawn from ``truth``). ``attrs`` records
        ``network``, ``target``, ``state``, ``bins`` and ``empty_bins`` (the
        bins no eligible configuration reaches).

    Raises
    ------
    ValueError
        For unknown variables or states, an evidence variable named like a column
        of the table (``context``, ``truth``, ``outcome``), or when no configuration
        is eligible.

    See Also
    --------
    contexts : the contexts table built from the cases.
    posterior : exact posteriors for many evidence rows.

    Notes
    -----
    Every configuration :math:`e` of the evidence variables with
    :math:`P(e) > 0` (and enough support) is enumerated with its exact
    posterior :math:`q(e)` from one joint table :math:`P(T, E)`. Configuration
    :math:`e` falls in bin :math:`\\min(\\lfloor q(e) \\cdot \\text{bins} + 10^{-9}
    \\rfloor, \\text{bins} - 1)`: the tolerance keeps a posterior exactly on a bin
    edge (0.2 with 20 bins) in the upper bin when rounding leaves it an ulp low,
    so configurations with equal posteriors share a bin. The :math:`n` contexts
    are split evenly over the bins that hold at least one configuration (the
    remainder going to bins chosen at random), so bins that no configuration reaches get no contexts
    and their share goes to the others: the histogram of truths is flat over
    the reachable bins (counts differ by at most one) and their list is in
    ``attrs['empty_bins']``. Within a bin, configurations are drawn uniformly
    without replacement, starting a fresh random pass when a bin holds fewer
    configurations than it must supply (so a context repeats only when its bin
    is exhausted). Contexts are returned in random order and the outcome of
    each is an independent Bernoulli draw from its truth.

    Examples
    --------
    >>> import bayesnets
    >>> cases = bayesnets.sample_cases("asia", "lung", ["smoke", "xray", "dysp"], 40, rng=0)
    >>> list(cases.columns)
    ['context', 'smoke', 'xray', 'dysp', 'truth', 'outcome']
    """
    return draw_cases(model, target, evidence_vars, n, state=state, bins=bins,
                      min_support=min_support, rng=rng, owner="sample_cases")


def draw_cases(model: Any, target: str, evidence_vars: Sequence[str] | None, n: int, *,
               state: Any, bins: int, min_support: int | None, rng: RNGLike,
               owner: str) -> pd.DataFrame:
    """:func:`sample_cases` for the public function ``owner``, which its errors name
    (:func:`contexts` and the studies built on it draw their cases with it)."""
    net, target, evars, n, bins, min_support = _cases_iv(
        model, target, evidence_vars, n, bins, min_support, owner)
    t_code = target_state_code(net, target, state, owner)
    gen = check_rng(rng, owner=owner)

    joint = cached_joint(net, (target, *evars))
    p_e = joint.sum(axis=0).ravel()
    p_te = joint[t_code].ravel()
    eligible = p_e > 0.0
    if min_support > 0:
        eligible &= _configuration_support(net, evars) >= min_support
    if not eligible.any():
        why = f" with support >= {min_support}" if min_support > 0 else ""
        raise ValueError(f"{owner}: no configuration of {list(evars)}{why} has positive "
                         f"probability under network '{net.name}'.")
    cfg = np.flatnonzero(eligible)
    q = p_te[cfg] / p_e[cfg]
    q = np.clip(q, 0.0, 1.0)
    which = np.minimum(np.floor(q * bins + _BIN_TOL).astype(np.int64), bins - 1)
    filled = np.unique(which)
    empty = sorted(set(range(bins)) - set(filled.tolist()))

    base, extra = divmod(n, len(filled))
    counts = np.full(len(filled), base, dtype=np.int64)
    counts[gen.choice(len(filled), size=extra, replace=False)] += 1
    chosen = []
    for b, count in zip(filled, counts, strict=True):
        members = np.flatnonzero(which == b)
        passes = -(-int(count) // len(members)) if count else 0
        draws = np.concatenate([gen.permutation(members) for _ in range(passes)]) \
            if passes else np.empty(0, dtype=np.int64)
        chosen.append(draws[:count])
    picked = np.concatenate(chosen)[gen.permutation(n)]

    truth = q[picked]
    outcome = (gen.random(n) < truth).astype(np.int64)
    assignment = np.unravel_index(cfg[picked], [net.cardinality(v) for v in evars])
    columns: dict[str, Any] = {"context": np.arange(n, dtype=np.int64)}
    for v, codes in zip(evars, assignment, strict=True):
        columns[v] = pd.Categorical.from_codes(codes, categories=list(net.states[v]))
    columns["truth"] = truth
    columns["outcome"] = outcome
    table = pd.DataFrame(columns)
    table.attrs.update({
        "network": net.name, "target": target, "state": net.states[target][t_code],
        "bins": bins, "empty_bins": empty,
    })
    return table


def study_defaults(net: Network, target: Any, state: Any, evidence_vars: Any,
                    owner: str) -> tuple[str, Any, Sequence[str]]:
    if target is None or evidence_vars is None:
        default = DEFAULT_STUDIES.get(net.name)
        if default is None:
            raise ValueError(param_error(
                "target" if target is None else "evidence_vars", owner,
                "given for a network without a default study (defaults exist for "
                + ", ".join(map(repr, DEFAULT_STUDIES)) + ")", None))
        if target is None:
            target = default[0]
            state = default[1] if state is None else state
        if evidence_vars is None:
            evidence_vars = default[2]
            if target in evidence_vars:  # refused later as sample_cases' evidence_vars
                raise ValueError(param_error(
                    "evidence_vars", owner, f"given for target {target!r}, which the "
                    f"default evidence variables of network '{net.name}' "
                    f"({', '.join(evidence_vars)}) include", None))
    variable_names(evidence_vars, "evidence_vars", owner)
    return target, state, evidence_vars


def contexts(network: Any = "child", *, target: str | None = None, state: Any = None,
             evidence_vars: Sequence[str] | None = None, n: int = 200, bins: int = 20,
             phrases: Any = None, min_support: int | None = None,
             rng: RNGLike = None) -> pd.DataFrame:
    """The contexts table of a study: evidence, truth, outcome and description.

    This is the contract with the elicitation runner: a frame with exactly the
    columns ``context``, one column per evidence variable, ``truth``,
    ``outcome`` and ``description`` (in that order), whose ``attrs`` hold
    ``question`` (the natural-language question for the target),
    ``subject``, ``network``, ``target``, ``state``, ``bins`` and
    ``empty_bins``.

    Parameters
    ----------
    network : Network, str or pgmpy DiscreteBayesianNetwork
        Default ``'child'``.
    target, state, evidence_vars : optional
        The study's target, the target state whose probability is asked for,
        and the evidence variables; by default the network's entry of
        :data:`DEFAULT_STUDIES` (on ``child``: P(Disease = Fallot) given Age,
        GruntingReport, LVHreport, XrayReport and LowerBodyO2).
    n, bins, min_support, rng
        As in :func:`sample_cases`.
    phrases : mapping, PhraseTable, str or None
        As in :func:`bayesnets.describe`; by default the network's built-in
        table. A network without one (fitted to data, or a bundled network outside
        :data:`PHRASE_NETWORKS`) needs them: with None it raises ``ValueError``, even
        where a built-in table has variables of the same names (they may mean other
        things); pass that table's name (``phrases='asia'``) to use its wording.

    Returns
    -------
    pandas.DataFrame
        One row per context: ``context``, the evidence columns, ``truth`` (the exact
        posterior), ``outcome`` (drawn from it) and ``description`` (the evidence in
        words); ``attrs`` as above.

    See Also
    --------
    sample_cases : draw the evaluation contexts.
    describe : the description of one evidence assignment.
    elicitation.run : elicit beliefs and actions for the contexts.

    Examples
    --------
    >>> import bayesnets
    >>> table = bayesnets.contexts("child", n=20, rng=0)
    >>> table.attrs["question"]
    'What is the probability that the newborn has tetralogy of Fallot?'
    >>> list(table.columns)  # doctest: +NORMALIZE_WHITESPACE
    ['context', 'Age', 'GruntingReport', 'LVHreport', 'XrayReport', 'LowerBodyO2',
     'truth', 'outcome', 'description']
    """
    return build_contexts(network, target=target, state=state, evidence_vars=evidence_vars,
                          n=n, bins=bins, phrases=phrases, min_support=min_support, rng=rng,
                          owner="contexts")


def build_contexts(network: Any, *, target: str | None, state: Any,
                   evidence_vars: Sequence[str] | None, n: int, bins: int, phrases: Any,
                   min_support: int | None, rng: RNGLike, owner: str) -> pd.DataFrame:
    """:func:`contexts` for the public function ``owner``, which its errors name
    (:func:`simulated_agent_study` and ``lie_study`` build their contexts with it)."""
    net = as_network(network, owner)
    target, state, evidence_vars = study_defaults(net, target, state, evidence_vars, owner)
    _check_column_names(list(evidence_vars), _CONTEXT_COLUMNS, owner)
    cases = draw_cases(net, target, list(evidence_vars) if evidence_vars is not None
                       else evidence_vars, n, state=state, bins=bins,
                       min_support=min_support, rng=rng, owner=owner)
    if phrases is None and net.name not in PHRASE_NETWORKS:
        # another network's table may hold these names with other meanings: not borrowed
        raise ValueError(param_error(
            "phrases", owner, "given for network " + repr(net.name) + ", which has no "
            "built-in phrase table (a mapping variable -> state -> phrase; a built-in "
            "table's name, e.g. 'asia', to use its wording)", None))
    table = as_table(net.name if phrases is None else phrases,
                     [target, *cases.columns[1:-2]], owner)
    evidence = cases.iloc[:, 1:-2]
    cases["description"] = describe_rows(evidence, table).to_numpy()
    cases.attrs["question"] = question(target, cases.attrs["state"], table)
    cases.attrs["subject"] = table.subject
    return cases


def simulated_agent_study(network: Any = "child", *, target: str | None = None,
                          state: Any = None, evidence_vars: Sequence[str] | None = None,
                          agent: str | Agent = "rational", n_contexts: int = 200,
                          n_repetitions: int = 5, prompts: Sequence[str] | None = None,
                          bins: int = 20, phrases: Any = None,
                          rng: RNGLike = None) -> SimulatedStudy:
    """A belief/action study on a Bayesian network answered by a simulated agent.

    Contexts come from :func:`contexts`; their exact posteriors are passed to
    :func:`coherence.simulate` (``posteriors=truths``), so the agent's beliefs
    and actions are those of the simulated agent facing these cases.

    Parameters
    ----------
    network, target, state, evidence_vars, bins, phrases
        As in :func:`contexts` (default: ``child``, P(Disease = Fallot)).
    agent : str or coherence.Agent
        The simulated agent (``'rational'``, ``'leaky'``, ...).
    n_contexts : int
        The number of contexts.
    n_repetitions : int
        Elicitations per context and prompt.
    prompts : sequence of str, optional
        Prompt variants, as in :func:`coherence.simulate`.
    rng : int, numpy.random.Generator or None
        Source of randomness (one stream for the contexts and the agent).

    Returns
    -------
    coherence.SimulatedStudy
        ``data``: the belief/action table of :func:`coherence.simulate` (its
        ``outcome`` is the outcome drawn by the simulation from ``truth``) with
        the evidence columns and ``description`` appended; ``data.attrs``
        carries the contexts' ``question``, ``network``, ``target`` and
        ``state``. ``truth``: the simulation's exact ground truth for these
        posteriors.

    See Also
    --------
    contexts : the contexts table the agent answers.
    lie_study : the same for the law of iterated expectation.
    coherence.simulate : simulated agents without a network.

    Examples
    --------
    >>> import bayesnets
    >>> study = bayesnets.simulated_agent_study(n_contexts=30, n_repetitions=2, rng=0)
    >>> study.data.shape
    (60, 14)
    >>> study.truth.cmi
    0.0
    """
    owner = "simulated_agent_study"
    gen = check_rng(rng, owner=owner)
    n_contexts = check_int(n_contexts, "n_contexts", owner, low=1)
    n_repetitions = check_int(n_repetitions, "n_repetitions", owner, low=1)
    ctx = build_contexts(network, target=target, state=state, evidence_vars=evidence_vars,
                         n=n_contexts, bins=bins, phrases=phrases, min_support=None,
                         rng=gen, owner=owner)
    study = simulate(agent, posteriors=ctx["truth"].to_numpy(), n_contexts=None,
                     n_repetitions=n_repetitions, prompts=prompts, rng=gen)
    data = study.data
    extra = ctx.drop(columns=["context", "truth", "outcome"]).iloc[
        data["context"].to_numpy()].reset_index(drop=True)
    extra.index = data.index
    # an evidence variable named belief, action, ... would make a second column of that name
    _check_column_names(list(ctx.columns[1:-3]), list(data.columns), owner)
    data = pd.concat([data, extra], axis=1)
    data.attrs.update({k: ctx.attrs[k] for k in ("question", "subject", "network", "target",
                                                 "state")})
    return SimulatedStudy(data=data, truth=study.truth)
