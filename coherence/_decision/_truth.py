"""The ground truth of a simulated study: what a test run on it should recover.

The truth (:class:`SimulationTruth`) is computed from the exact joint distribution of
(belief, outcome, action) for one row drawn at random, integrating over the context
distribution with Gauss-Legendre quadrature on panels aligned to the belief cells (exact
for grid beliefs): the conditional mutual information of action and outcome given the
belief (pooled, within prompt, per prompt, given the latent belief) and the shape of each
action pair's share along the belief.
"""

from __future__ import annotations

import math
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from types import MappingProxyType
from typing import TYPE_CHECKING
from typing import Any

import numpy as np
import pandas as pd
from scipy import stats

from .._results import Summary
from ._grid import snap_to_grid

if TYPE_CHECKING:  # pragma: no cover - annotations only: the agent module imports this one
    from ._simulate import Agent

__all__ = ["SimulationTruth", "conditional_mutual_information", "simulation_truth"]

#: the action pairs whose share along the belief the truth gives the shape of
ACTION_PAIRS: tuple[tuple[str, str], ...] = (("yes", "no"), ("yes", "defer"), ("defer", "no"))


@dataclass(frozen=True, slots=True)
class SimulationTruth:
    """What a test run on a simulated study should recover.

    Attributes
    ----------
    agent : Agent
        The agent's specification.
    cmi : float
        Exact I(action ; outcome | belief) in nats for one row drawn at random
        from the study design (pooled over prompts). NaN where not computable
        (continuous beliefs with report noise or with prompt shifts).
    cmi_within_prompt : float
        Exact I(action ; outcome | belief, prompt).
    cmi_by_prompt : Mapping[str, float]
        Exact I(action ; outcome | belief) on the rows of each prompt variant
        (what a test run on one prompt's rows should recover).
    cmi_given_latent : float
        Exact I(action ; outcome | latent belief): 0 for every agent but the
        leaky one.
    monotone : Mapping[tuple[str, str], str]
        For each action pair (a1, a2), the shape of P(a1 | belief, a in {a1, a2})
        as a function of the reported belief on the rows of the first (reference)
        prompt: ``'increasing'``, ``'decreasing'``, ``'constant'`` or
        ``'nonmonotone'``.
    prompt_shifts : Mapping[str, float]
        Report shift per prompt variant in the study.
    design : str
        ``'uniform'`` (context posteriors cover [0, 1] evenly; truths are
        population values) or ``'supplied'`` (truths are for the supplied
        posteriors, outcomes random).
    """

    agent: Agent
    cmi: float
    cmi_within_prompt: float
    cmi_by_prompt: Mapping[str, float]
    cmi_given_latent: float
    monotone: Mapping[tuple[str, str], str]
    prompt_shifts: Mapping[str, float]
    design: str
    joint: pd.DataFrame = field(repr=False)

    def summary(self) -> Summary:
        """A short description of the truth."""
        shape = ", ".join(f"{a}/{b}: {s}" for (a, b), s in self.monotone.items())
        return Summary(f"{self.agent.kind}: I(action; outcome | belief) = {self.cmi:.6g} nats "
                       f"(given latent belief: {self.cmi_given_latent:.6g}); shares {shape}")


# --------------------------------------------------------------------------- exact joint
def _gauss_legendre_nodes(breaks: np.ndarray, order: int) -> tuple[np.ndarray, np.ndarray]:
    x, w = np.polynomial.legendre.leggauss(order)
    lo, hi = breaks[:-1, None], breaks[1:, None]
    half = (hi - lo) / 2.0
    nodes = (lo + hi) / 2.0 + half * x[None, :]
    weights = half * w[None, :]
    return nodes.ravel(), weights.ravel()


def _solve_increasing(func: Any, targets: np.ndarray) -> np.ndarray:
    """q in [0, 1] with func(q) = target for an increasing func (vectorised bisection)."""
    lo = np.zeros_like(targets)
    hi = np.ones_like(targets)
    for _ in range(80):
        mid = (lo + hi) / 2.0
        below = func(mid) < targets
        lo = np.where(below, mid, lo)
        hi = np.where(below, hi, mid)
    return (lo + hi) / 2.0


def _population_nodes(agent: Agent) -> tuple[np.ndarray, np.ndarray]:
    """Quadrature nodes/weights for q ~ Uniform(0, 1), panels aligned to belief cells."""
    thresholds = [0.0, 1.0]
    if agent.grid is not None:
        n_cells = round(1.0 / agent.grid)
        thresholds += list((np.arange(n_cells) + 0.5) / n_cells)
    lo_val, hi_val = agent.weight(np.array([0.0, 1.0])) + agent.bias
    targets = np.array([t for t in thresholds if lo_val < t < hi_val])
    breaks = np.concatenate([[0.0, 1.0], _solve_increasing(
        lambda q: agent.weight(q) + agent.bias, targets)])
    if agent.grid is None:
        breaks = np.concatenate([breaks, np.linspace(0.0, 1.0, 401)])
    breaks = np.unique(breaks)
    return _gauss_legendre_nodes(breaks, 12 if agent.grid is not None else 16)


def _report_distribution(
    agent: Agent, b: np.ndarray, shift: float
) -> tuple[np.ndarray, np.ndarray]:
    """Support and P(report | latent belief) as (support, matrix n x len(support))."""
    center = np.clip(b + shift, 0.0, 1.0)
    if agent.report_noise == 0.0:
        reports = snap_to_grid(center, agent.grid)
        support, inverse = np.unique(reports, return_inverse=True)
        probs = np.zeros((len(b), len(support)))
        probs[np.arange(len(b)), inverse] = 1.0
        return support, probs
    if agent.grid is None:
        raise _NotComputable
    n_cells = round(1.0 / agent.grid)
    support = snap_to_grid(np.arange(n_cells + 1) / n_cells, agent.grid)
    edges = np.concatenate([[-np.inf], (np.arange(n_cells) + 0.5) / n_cells, [np.inf]])
    # report = snap(clip(b + shift + noise)): clipping sends the tails to 0 and 1.
    cdf = stats.norm.cdf((edges[None, :] - (b + shift)[:, None]) / agent.report_noise)
    return support, np.diff(cdf, axis=1)


class _NotComputable(Exception):
    pass


def _exact_joint(agent: Agent, q_nodes: np.ndarray, q_weights: np.ndarray,
                 prompts: Sequence[str]) -> pd.DataFrame:
    """The joint pmf of (prompt, belief, outcome, action) for one random row."""
    b = agent.latent_belief(q_nodes)
    frames = []
    for prompt in prompts:
        support, p_report = _report_distribution(agent, b, agent.shift(prompt))
        for y in (0, 1):
            p_y = q_nodes if y == 1 else 1.0 - q_nodes
            p_act = agent.action_given_outcome(b, y)  # (n, A)
            mass = (q_weights * p_y / len(prompts))[:, None, None] * p_report[:, :, None] \
                * p_act[:, None, :]
            cell = mass.sum(axis=0)  # (support, A)
            for j, belief in enumerate(support):
                for k, action in enumerate(agent.actions):
                    if cell[j, k] > 0.0:
                        frames.append((prompt, belief, y, action, cell[j, k]))
    joint = pd.DataFrame(frames, columns=["prompt", "belief", "outcome", "action", "probability"])
    return joint.groupby(["prompt", "belief", "outcome", "action"], as_index=False,
                         sort=True)["probability"].sum()


def _joint_per_node(agent: Agent, q_nodes: np.ndarray, q_weights: np.ndarray,
                    values: np.ndarray) -> pd.DataFrame:
    """Joint of (value, outcome, action) where ``values`` is a function of the node."""
    b = agent.latent_belief(q_nodes)
    rows = []
    for y in (0, 1):
        p_y = q_nodes if y == 1 else 1.0 - q_nodes
        p_act = agent.action_given_outcome(b, y)
        for k, action in enumerate(agent.actions):
            rows.append(pd.DataFrame({"belief": values, "outcome": y, "action": action,
                                      "probability": q_weights * p_y * p_act[:, k]}))
    joint = pd.concat(rows, ignore_index=True)
    joint = joint[joint["probability"] > 0.0]
    return joint.groupby(["belief", "outcome", "action"], as_index=False,
                         sort=True)["probability"].sum()


def conditional_mutual_information(joint: pd.DataFrame, x: str, y: str, z: Sequence[str],
                                   weight: str = "probability") -> float:
    """Exact I(x ; y | z) in nats of a discrete joint pmf given as a table."""
    z = list(z)
    total = joint[weight].sum()
    p = joint[weight] / total
    frame = joint.assign(_p=p)
    pxyz = frame.groupby([*z, x, y], sort=False)["_p"].sum()
    if z:
        pz = frame.groupby(z, sort=False)["_p"].sum()
        pxz = frame.groupby([*z, x], sort=False)["_p"].sum()
        pyz = frame.groupby([*z, y], sort=False)["_p"].sum()
    else:
        pz = None
        pxz = frame.groupby([x], sort=False)["_p"].sum()
        pyz = frame.groupby([y], sort=False)["_p"].sum()
    cells = pxyz[pxyz > 0].reset_index()
    num = cells["_p"].to_numpy() * (
        pz.reindex(pd.MultiIndex.from_frame(cells[z]) if len(z) > 1 else cells[z[0]]).to_numpy()
        if pz is not None else 1.0
    )
    den = pxz.reindex(pd.MultiIndex.from_frame(cells[[*z, x]])).to_numpy() * \
        pyz.reindex(pd.MultiIndex.from_frame(cells[[*z, y]])).to_numpy()
    value = float(np.sum(cells["_p"].to_numpy() * np.log(num / den)))
    # exact zeros come out as +-1e-17 from rounding: report them as 0
    return 0.0 if abs(value) < 1e-13 else value


def _shape(values: np.ndarray, tol: float = 1e-12) -> str:
    d = np.diff(values)
    if len(d) == 0 or np.all(np.abs(d) <= tol):
        return "constant"
    if np.all(d >= -tol):
        return "increasing"
    if np.all(d <= tol):
        return "decreasing"
    return "nonmonotone"


def _monotone(joint: pd.DataFrame, actions: Sequence[str]) -> dict[tuple[str, str], str]:
    pa = joint.groupby(["belief", "action"])["probability"].sum().unstack(fill_value=0.0)
    out: dict[tuple[str, str], str] = {}
    for a1, a2 in ACTION_PAIRS:
        if a1 not in actions or a2 not in actions:
            continue
        both = pa[a1] + pa[a2]
        keep = both > 1e-9 * both.max()
        share = (pa[a1][keep] / both[keep]).to_numpy()
        out[(a1, a2)] = _shape(share, tol=1e-9)
    return out


def simulation_truth(agent: Agent, prompts: Sequence[str],
                     posteriors: np.ndarray | None) -> SimulationTruth:
    """The truth of a study of ``agent`` over ``prompts``: at the population's posteriors
    (``posteriors`` None: the design is ``'uniform'``) or at the ones supplied."""
    if posteriors is None:
        nodes, weights = _population_nodes(agent)
        design = "uniform"
    else:
        nodes = posteriors
        weights = np.full(len(posteriors), 1.0 / len(posteriors))
        design = "supplied"
    b = agent.latent_belief(nodes)
    shifts = {p: agent.shift(p) for p in prompts}
    distinct_shifts = len(set(shifts.values())) > 1
    latent = _joint_per_node(agent, nodes, weights, b)
    cmi_latent = conditional_mutual_information(latent, "action", "outcome", ["belief"])
    try:
        if agent.grid is None and (agent.report_noise > 0.0 or distinct_shifts):
            raise _NotComputable
        if agent.grid is None:
            # the report is a function of q; group nodes whose report coincides (clip atoms)
            joint = _exact_joint_continuous(agent, nodes, weights, prompts)
        else:
            joint = _exact_joint(agent, nodes, weights, prompts)
        cmi = conditional_mutual_information(joint, "action", "outcome", ["belief"])
        cmi_prompt = conditional_mutual_information(joint, "action", "outcome",
                                                    ["prompt", "belief"])
        by_prompt = {p: conditional_mutual_information(joint[joint["prompt"] == p], "action",
                                                       "outcome", ["belief"])
                     for p in prompts}
        monotone = _monotone(joint[joint["prompt"] == prompts[0]], agent.actions)
    except _NotComputable:
        joint = latent.assign(prompt=prompts[0])[["prompt", "belief", "outcome", "action",
                                                  "probability"]]
        cmi = cmi_prompt = math.nan
        by_prompt = dict.fromkeys(prompts, math.nan)
        monotone = _monotone(latent, agent.actions)
    return SimulationTruth(
        agent=agent, cmi=cmi, cmi_within_prompt=cmi_prompt,
        cmi_by_prompt=MappingProxyType(by_prompt), cmi_given_latent=cmi_latent,
        monotone=MappingProxyType(monotone), prompt_shifts=MappingProxyType(shifts),
        design=design, joint=joint,
    )


def _exact_joint_continuous(agent: Agent, nodes: np.ndarray, weights: np.ndarray,
                            prompts: Sequence[str]) -> pd.DataFrame:
    b = agent.latent_belief(nodes)
    report = snap_to_grid(np.clip(b + agent.shift(prompts[0]), 0.0, 1.0), None)
    frames = []
    for prompt in prompts:
        part = _joint_per_node(agent, nodes, weights / len(prompts), report)
        frames.append(part.assign(prompt=prompt))
    joint = pd.concat(frames, ignore_index=True)
    return joint[["prompt", "belief", "outcome", "action", "probability"]]
