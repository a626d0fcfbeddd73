"""Studies of contexts x prompts x repetitions with known mean beliefs, for
validating :func:`coherence.prompt_consistency`.

Written apart from the package (no import of ``coherence``): the package's own
simulated agents share assumptions with the test, this generator does not.

Per context *c* a ground-truth posterior ``q_c ~ Uniform(0.2, 0.8)`` and an
agent mean ``mu_c = q_c + b_c`` (``b_c ~ N(0, bias_sd)``, kept in [0.15, 0.85]).
Prompt *v*, repetition *r* report::

    p_cvr = mu_c + delta_v(c) + u_cv + sigma_v * s_c * (a_cr * shared + e_cvr)

with ``delta_v`` the prompt's effect (0 under the null), ``u_cv`` a session
offset per (context, prompt run) of sd ``session_sd``, ``a_cr`` a shock of
repetition *r* of context *c* shared by every prompt (weight ``shared``),
``e_cvr`` independent noise, ``s_c`` a context scale larger near 0.5 (LLM
reports vary more on uncertain questions), and the noise a symmetric bounded
(scaled Beta(2, 2)) variable, so means are exact and reports stay in [0, 1]
without clipping; or (``tails=k``) a Student t with k degrees of freedom at
scale ``sigma_v``, heavy-tailed, its rare reports outside [0, 1] clipped the
same way under every prompt (the nulls stay exact). Prompts may have different
noise ``sigma_v`` and different numbers of repetitions. The exact RMSEs (population values, over the
distribution of contexts) are returned by :func:`true_rmse`.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from benchmarks._designs import DesignBase

#: sd of a Beta(2, 2) variable rescaled to [-1, 1]
_BETA_SD = np.sqrt(1.0 / 5.0)


@dataclass(frozen=True)
class Design(DesignBase):
    n_contexts: int = 60
    prompts: tuple[str, ...] = ("standard", "mse", "bayesian")
    noise: tuple[float, ...] = (0.03, 0.03, 0.03)  # sd per prompt
    repetitions: tuple[int, ...] = (5, 5, 5)  # per prompt (ragged when unequal)
    shared: float = 0.0  # share of the variance from shocks shared across prompts
    session_sd: float = 0.0  # offset per (context, prompt run)
    replicate: bool = False  # the reference run twice, as "standard_rerun"
    shift: float = 0.0  # constant shift of the last prompt
    shrink: float = 0.0  # last prompt pulled toward 0.5 by this fraction
    bias_sd: float = 0.03  # agent mean vs ground truth
    tails: int = 0  # 0: bounded Beta(2, 2) noise; k > 0: Student t with k df, scale ``noise``


_VAR_Q = 0.6**2 / 12.0  # Var(q), q ~ U(0.2, 0.8)


def true_rmse(design: Design) -> dict[str, float]:
    """Population RMSEs of the last prompt against the reference and against
    the truth (repetition noise excluded; session offsets included, as they are
    part of the within-session mean belief)."""
    # mean squared prompt effect over contexts: shift^2 + shrink^2 E(mu - 0.5)^2
    # (mu ~ q + b; the clamp to [0.15, 0.85] is ignored: b is small)
    e_mu = _VAR_Q + design.bias_sd**2
    msd = design.shift**2 + design.shrink**2 * e_mu
    ref = msd + 2 * design.session_sd**2
    # last prompt minus truth: (1 - shrink) b + shift - shrink (q - 0.5) + u
    truth = ((1 - design.shrink) ** 2 * design.bias_sd**2 + design.shrink**2 * _VAR_Q
             + design.shift**2 + design.session_sd**2)
    return {"reference": float(np.sqrt(ref)), "truth": float(np.sqrt(truth))}


def _noise(gen: np.random.Generator, tails: int, shape: tuple[int, int]) -> np.ndarray:
    """Symmetric noise: a Beta(2, 2) rescaled to sd 1 (``tails=0``), else a Student t
    with ``tails`` degrees of freedom at scale 1 (heavy tails; sd sqrt(k / (k - 2)))."""
    if tails:
        out: np.ndarray = gen.standard_t(tails, shape)
        return out
    return (gen.beta(2, 2, shape) * 2 - 1) / _BETA_SD


def generate(design: Design, seed: int) -> pd.DataFrame:
    """One study: columns context, prompt, repetition, belief, truth."""
    gen = np.random.default_rng(seed)
    g = design.n_contexts
    q = gen.uniform(0.2, 0.8, g)
    mu = np.clip(q + gen.normal(0.0, design.bias_sd, g), 0.15, 0.85)
    scale = 0.6 + 1.6 * mu * (1 - mu)  # 0.8-1.0 in the bulk
    prompts = list(design.prompts)
    noise = list(design.noise)
    reps = list(design.repetitions)
    if design.replicate:
        prompts.insert(1, prompts[0] + "_rerun")
        noise.insert(1, noise[0])
        reps.insert(1, reps[0])
    n_max = max(reps)
    shared = _noise(gen, design.tails, (g, n_max))  # a_cr
    frames = []
    last = len(prompts) - 1
    for v, (name, sd, n) in enumerate(zip(prompts, noise, reps, strict=True)):
        delta = np.zeros(g)
        if v == last:
            delta = design.shift - design.shrink * (mu - 0.5)
        u = gen.normal(0.0, design.session_sd, g) if design.session_sd else np.zeros(g)
        e = _noise(gen, design.tails, (g, n))
        w = np.sqrt(design.shared)
        shock = w * shared[:, :n] + np.sqrt(1 - design.shared) * e
        p = (mu + delta + u)[:, None] + sd * scale[:, None] * shock
        frames.append(pd.DataFrame({
            "context": np.repeat(np.arange(g), n), "prompt": name,
            "repetition": np.tile(np.arange(n), g), "belief": p.ravel(),
            "truth": np.repeat(q, n)}))
    data = pd.concat(frames, ignore_index=True)
    data["belief"] = data["belief"].clip(0.0, 1.0)  # a no-op for bounded noise
    return data
