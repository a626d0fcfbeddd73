"""The main job: a full coherence study of simulated agents on a bundled network."""

from __future__ import annotations

from typing import Any

import pandas as pd

import coherence
from coherence._decision._demo import demo_agents, truth_table
from coherence._rng import RNGLike, check_rng, spawn

from ._cases import simulated_agent_study

__all__ = ["demo_study", "run_demo"]


def demo_study(*, network: str = "child", n_contexts: int = 200, n_repetitions: int = 5,
               rng: RNGLike = None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The demo's belief/action table (one ``model`` per agent) and the agents' truths.

    Every agent answers the same kind of contexts (sampled from ``network``
    with posteriors covering [0, 1] evenly) under all four prompt variants.

    Parameters
    ----------
    network : str
        A bundled network with a default study (see :data:`DEFAULT_STUDIES`).
    n_contexts, n_repetitions : int
        Contexts per agent; elicitations per context and prompt.
    rng : int, numpy.random.Generator or None
        Source of randomness; each agent gets its own spawned stream.

    Returns
    -------
    data : pandas.DataFrame
        The belief/action table of :func:`simulated_agent_study` for every
        agent of ``coherence._decision._demo.demo_agents()``, with a categorical
        ``model`` column naming the agent.
    truths : pandas.DataFrame
        One row per agent: exact ``cmi_exact`` (reference prompt),
        ``cmi_given_latent``, ``nonmonotone_pairs``, ``max_prompt_shift``.

    Examples
    --------
    >>> import bayesnets
    >>> data, truths = bayesnets.demo_study(n_contexts=20, n_repetitions=1, rng=0)
    >>> list(data["model"].cat.categories)
    ['rational', 'rational+noise', 'leaky', 'nonmonotone', 'prompt_sensitive']
    >>> float(truths.loc["rational", "cmi_exact"])
    0.0
    """
    gen = check_rng(rng, owner="demo_study")
    agents = demo_agents()
    frames, truths = [], {}
    for (name, agent), stream in zip(agents.items(), spawn(gen, len(agents)), strict=True):
        study = simulated_agent_study(network, agent=agent, n_contexts=n_contexts,
                                      n_repetitions=n_repetitions, prompts=coherence.PROMPTS,
                                      rng=stream)
        frames.append(study.data.assign(model=name))
        truths[name] = study.truth
    data = pd.concat(frames, ignore_index=True)
    data["model"] = pd.Categorical(data["model"], categories=list(agents))
    return data, truth_table(truths)


def run_demo(*, network: str = "child", n_contexts: int = 200, n_repetitions: int = 5,
             rng: RNGLike = None, **report_options: Any) -> tuple[Any, pd.DataFrame]:
    """Simulate the demo study and run :func:`coherence.report` on it, one cell per agent.

    Parameters
    ----------
    network, n_contexts, n_repetitions
        As in :func:`demo_study`.
    rng : int, numpy.random.Generator or None
        One seed; the study and the report draw from separate spawned streams.
    **report_options
        Passed to :func:`coherence.report` (``n_permutations``, ``engine``, ...).

    Returns
    -------
    report : coherence.CoherenceReport
        One cell per agent (``by=("model",)``).
    truths : pandas.DataFrame
        As returned by :func:`demo_study`.
    """
    gen = check_rng(rng, owner="run_demo")
    study_rng, report_rng = spawn(gen, 2)
    data, truths = demo_study(network=network, n_contexts=n_contexts,
                              n_repetitions=n_repetitions, rng=study_rng)
    rep = coherence.report(data, by=("model",), rng=report_rng, **report_options)
    return rep, truths
