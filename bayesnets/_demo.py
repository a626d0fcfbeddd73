"""The main job: a full coherence study of simulated agents on a bundled network."""

from __future__ import annotations

import dataclasses
import hashlib
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pandas as pd

import coherence
from coherence import Agent
from coherence import SimulationTruth
from coherence._rng import RNGLike
from coherence._rng import check_rng
from coherence._rng import spawn

from ._cases import simulated_agent_study

__all__ = ["demo_agents", "demo_study", "designed_violations", "run_demo", "truth_table"]


def demo_agents() -> dict[str, Agent]:
    """The agents of the demo study, by display name.

    ``rational`` (the exact null), ``rational+noise`` (report noise 0.05 on a
    0.05 grid: independence holds given the latent belief only), ``leaky``
    (private signal of strength 0.5), ``nonmonotone`` (deferring is free in the
    band 0.4-0.6: a clearer violation than the default agent's) and
    ``prompt_sensitive`` (report shifts 0, +0.05, -0.10, +0.10).
    """
    return {
        "rational": Agent.rational(),
        "rational+noise": Agent.rational(report_noise=0.05),
        "leaky": Agent.leaky(strength=0.5),
        "nonmonotone": Agent.nonmonotone(loss_defer_band=0.0),
        "prompt_sensitive": Agent.prompt_sensitive(),
    }


def truth_table(truths: Mapping[str, SimulationTruth]) -> pd.DataFrame:
    """One row per agent: what each test should find (exact, from the agent's design).

    ``cmi_exact`` is I(action; outcome | belief) on the rows of the reference
    (first) prompt, the rows the decision tests use.
    """
    rows = []
    for name, truth in truths.items():
        reference = next(iter(truth.cmi_by_prompt))
        rows.append({
            "agent": name,
            "cmi_exact": truth.cmi_by_prompt[reference],
            "cmi_given_latent": truth.cmi_given_latent,
            "nonmonotone_pairs": ", ".join(f"{a}/{b}" for (a, b), s in truth.monotone.items()
                                           if s == "nonmonotone") or "-",
            "max_prompt_shift": max(abs(v) for v in truth.prompt_shifts.values()),
        })
    return pd.DataFrame(rows).set_index("agent")


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
        agent of :func:`demo_agents`, with a categorical
        ``model`` column naming the agent.
    truths : pandas.DataFrame
        One row per agent: exact ``cmi_exact`` (reference prompt),
        ``cmi_given_latent``, ``nonmonotone_pairs``, ``max_prompt_shift``.

    See Also
    --------
    run_demo : the table with the report run on it.
    simulated_agent_study : one simulated agent's study on a network.

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
             rng: RNGLike = None, table_out: str | os.PathLike[str] | None = None,
             **report_options: Any) -> tuple[Any, pd.DataFrame]:
    """Simulate the demo study and run :func:`coherence.report` on it, one cell per agent.

    The demo's agents each break one law of coherence, or none, so the report shows
    which test finds which violation; ``coherence demo`` (``make demo``) runs it.

    Parameters
    ----------
    network, n_contexts, n_repetitions
        As in :func:`demo_study`.
    rng : int, numpy.random.Generator or None
        One seed; the study and the report draw from separate spawned streams.
        The report gets an integer seed drawn from its stream, which it records,
        so its rerun line reproduces every p-value.
    table_out : str, path or None
        Where to write the belief/action table the report analysed (CSV). The
        report then names the file and its sha256, and its rerun line runs as
        printed (``coherence test TABLE_OUT ...``).
    **report_options
        Passed to :func:`coherence.report` (``n_resamples``, ``engine``, ...).

    Returns
    -------
    report : coherence.CoherenceReport
        One cell per agent (``by=("model",)``).
    truths : pandas.DataFrame
        As returned by :func:`demo_study`.

    See Also
    --------
    demo_study : the table and truths alone.
    coherence.report : the tests run on the table.
    """
    gen = check_rng(rng, owner="run_demo")
    study_rng, report_rng = spawn(gen, 2)
    data, truths = demo_study(network=network, n_contexts=n_contexts,
                              n_repetitions=n_repetitions, rng=study_rng)
    # the agents' names as plain strings: the cells (and their random streams) come in the
    # order a table read back from a file gives, so the rerun line reproduces the numbers
    data["model"] = data["model"].astype(str)
    seed = int(report_rng.integers(2**31 - 1))
    rep = coherence.report(data, by=("model",), rng=seed, **report_options)
    if table_out is not None:
        path = Path(table_out)
        data.to_csv(path, index=False)
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        rep = dataclasses.replace(rep, settings={**rep.settings, "data_file": str(table_out),
                                                 "data_file_sha256": digest})
    # the HTML report shows each agent's designed violations beside its results
    return dataclasses.replace(rep, truth=designed_violations(truths)), truths


#: What the columns of the demo's ground truth mean (the caption of its table in the report).
TRUTH_CAPTION = (
    "cmi_exact: I(action; outcome | belief) in nats on the reference prompt's rows, exact "
    "from the agent's design (0: the ci and leakage tests' null holds); cmi_given_latent: the "
    "same given the agent's latent belief; nonmonotone_pairs: action pairs whose share falls "
    "as the belief rises, by design; max_prompt_shift: the largest designed shift of the "
    "belief between prompt variants (0: prompt_consistency's null holds). 'violates by "
    "design' lists the tests that should flag the agent; a tiny effect may go undetected at "
    "this sample size, and a test flagging an agent whose design does not violate its "
    "property is a false positive.")


def designed_violations(truths: pd.DataFrame) -> pd.DataFrame:
    """The truth table of :func:`demo_study` with the tests each agent violates by design.

    Adds the column ``"violates by design"``: ``ci, ci_calibrated, leakage`` when
    ``cmi_exact > 0`` (marked a tiny effect below 1e-3 nats), ``monotonicity`` when a
    pair is non-monotone, ``prompt_consistency`` when a prompt shifts the belief; ``-``
    when none. The caption explaining the columns is in ``attrs["caption"]``.

    Parameters
    ----------
    truths : pandas.DataFrame
        As returned by :func:`demo_study` (or :func:`truth_table`).

    Returns
    -------
    pandas.DataFrame
        ``truths`` with the column ``"violates by design"`` added, and the caption in
        ``attrs["caption"]``.

    See Also
    --------
    run_demo : attaches this table to its report (``CoherenceReport.truth``).
    """
    expected = []
    for _, t in truths.iterrows():
        tests = []
        if t["cmi_exact"] > 0:
            size = "" if t["cmi_exact"] > 1e-3 else " (tiny effect)"
            tests.append(f"ci, ci_calibrated, leakage{size}")
        if t["nonmonotone_pairs"] != "-":
            tests.append("monotonicity")
        if t["max_prompt_shift"] > 0:
            tests.append("prompt_consistency")
        expected.append(", ".join(tests) or "-")
    out = truths.assign(**{"violates by design": expected})
    out.attrs["caption"] = TRUTH_CAPTION
    return out
