"""The main job: a coherence study of the simulated agents.

Kept apart from the CLI so that notebooks can call :func:`demo_agents` and
:func:`demo_summary` directly.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from ._rng import RNGLike, check_rng, spawn
from ._simulate import PROMPTS, Agent, SimulatedStudy, simulate

__all__ = ["demo_agents", "demo_studies", "demo_summary"]


def demo_agents() -> dict[str, Agent]:
    """The agents of the demo study, by display name."""
    return {
        "rational": Agent.rational(),
        "rational+noise": Agent.rational(report_noise=0.05),
        "leaky": Agent.leaky(strength=0.5),
        "nonmonotone": Agent.nonmonotone(),
        "prompt_sensitive": Agent.prompt_sensitive(),
    }


def demo_studies(*, n_contexts: int = 200, n_repetitions: int = 5,
                 agents: dict[str, Agent] | None = None,
                 rng: RNGLike = None) -> dict[str, SimulatedStudy]:
    """Simulate one study per demo agent, each on its own random stream."""
    agents = demo_agents() if agents is None else agents
    streams = spawn(check_rng(rng, owner="demo_studies"), len(agents))
    studies = {}
    for (name, agent), stream in zip(agents.items(), streams, strict=True):
        prompts: Sequence[str] = PROMPTS if agent.kind == "prompt_sensitive" else ("standard",)
        studies[name] = simulate(agent, n_contexts=n_contexts, n_repetitions=n_repetitions,
                                 prompts=prompts, rng=stream)
    return studies


def demo_summary(studies: dict[str, SimulatedStudy]) -> pd.DataFrame:
    """One row per agent: design, observed belief/action summaries and the exact truth."""
    rows = []
    for name, study in studies.items():
        d = study.data
        truth = study.truth
        shares = d["action"].value_counts(normalize=True)
        standard = d[d["prompt"] == d["prompt"].cat.categories[0]]
        rows.append({
            "agent": name,
            "rows": len(d),
            "contexts": d["context"].nunique(),
            "prompts": d["prompt"].nunique(),
            "mean_belief": d["belief"].mean(),
            "brier": float(np.mean((standard["belief"] - standard["outcome"]) ** 2)),
            "rmse_truth": float(np.sqrt(np.mean((standard["belief"] - standard["truth"]) ** 2))),
            "share_yes": shares.get("yes", 0.0),
            "share_no": shares.get("no", 0.0),
            "share_defer": shares.get("defer", 0.0),
            "true_cmi": truth.cmi,
            "true_cmi_latent": truth.cmi_given_latent,
            "nonmonotone_pairs": sum(s == "nonmonotone" for s in truth.monotone.values()),
            "max_prompt_shift": max(abs(v) for v in truth.prompt_shifts.values()),
        })
    return pd.DataFrame(rows).set_index("agent")
