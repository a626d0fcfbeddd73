"""The simulated agents of the demo study and the table of their exact truths.

The network-based study itself is built by ``bayesnets.demo_study`` (the core
never imports ``bayesnets``); the CLI's ``demo`` command loads it at run time.
"""

from __future__ import annotations

from collections.abc import Mapping

import pandas as pd

from ._simulate import Agent, SimulationTruth

__all__ = ["demo_agents", "truth_table"]


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
