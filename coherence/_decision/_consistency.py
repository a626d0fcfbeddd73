"""Prompt consistency: do stated beliefs stay put when only the wording changes?

A belief is a property of the agent and the context, not of the phrasing of
the question. Per prompt variant this module measures the spread of the
belief over repetitions of the same prompt, the distance between the
repetition-averaged beliefs under a reference prompt and under each other
variant (the reference paper's Table 3) and, given a ground-truth posterior,
each variant's distance to it (Table 4).
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field
from typing import Any, ClassVar

import numpy as np
import pandas as pd

from .._resampling import (
    cluster_draws,
    cluster_weights,
    group_codes,
    monte_carlo_pvalue,
    percentile_interval,
)
from .._results import CoherenceResult, ConfidenceInterval, Summary
from .._rng import RNGLike, check_rng
from .._validation import (
    as_dataframe,
    check_float,
    check_int,
    column_error,
    label_column,
    param_error,
    probability_column,
    require_columns,
)

__all__ = ["ConsistencyResult", "prompt_consistency"]

_OWNER = "prompt_consistency"
TABLE_COLUMNS: tuple[str, ...] = (
    "prompt", "n_obs", "n_contexts", "std", "std_ci_low", "std_ci_high", "rmse_reference",
    "rmse_reference_ci_low", "rmse_reference_ci_high", "pvalue", "rmse_truth",
    "rmse_truth_ci_low", "rmse_truth_ci_high",
)


@dataclass(frozen=True, slots=True)
class ConsistencyResult(CoherenceResult):
    """Result of :func:`prompt_consistency`.

    Attributes
    ----------
    statistic : float
        Headline: the largest RMSE between the repetition-averaged beliefs
        under the reference prompt and under another variant.
    pvalue : float
        Global p-value of "prompt labels are exchangeable within contexts":
        the smallest per-variant permutation p-value times the number of
        variants (Bonferroni), capped at 1.
    confidence_interval : ConfidenceInterval
        Cluster-bootstrap interval of the headline variant's RMSE.
    n_obs : int
        Rows used.
    method : str
        ``'cluster-bootstrap+within-context-permutation'``.
    reference : str
        The reference prompt.
    headline_prompt : str
        The variant whose RMSE is the headline statistic.
    n_contexts : int
        Number of contexts.
    n_resamples : int
        Bootstrap resamples and permutations (each).
    table : pandas.DataFrame
        One row per prompt variant (reference first): ``n_obs``,
        ``n_contexts``, ``std`` (mean over
        contexts of the standard deviation of the belief over repetitions),
        ``rmse_reference`` (NaN for the reference), its permutation
        ``pvalue``, ``rmse_truth`` (NaN without ``truth``), each with
        cluster-bootstrap ``_ci_low`` / ``_ci_high`` columns (the paper's
        Tables 3 and 4).
    context_means : pandas.DataFrame
        Repetition-averaged belief per context (rows) and prompt (columns).
    """

    reference: str
    headline_prompt: str
    n_contexts: int
    n_resamples: int
    table: pd.DataFrame = field(repr=False, compare=False)
    context_means: pd.DataFrame = field(repr=False, compare=False)

    _test_name: ClassVar[str] = "prompt_consistency"
    _extra_columns: ClassVar[tuple[str, ...]] = ("reference", "n_contexts", "n_resamples")

    @property
    def prompt_table(self) -> pd.DataFrame:
        """Alias of :attr:`table`: one row per prompt variant."""
        return self.table

    @property
    def n_groups(self) -> int:
        """Alias of :attr:`n_contexts`."""
        return self.n_contexts

    def summary(self) -> Summary:
        """The headline figures followed by the per-variant table."""
        table = self.table[["prompt", "std", "rmse_reference", "pvalue", "rmse_truth"]]
        body = table.to_string(index=False, float_format=lambda x: f"{x:.4g}")
        return CoherenceResult.summary(self).extend(
            f"\n  headline      {self.headline_prompt}\n"
            + "\n".join("  " + line for line in body.splitlines()),
            tables=[("per prompt variant", table)])


# --------------------------------------------------------------------------- array layer
def _cell_stats(belief: np.ndarray, groups: np.ndarray, labels: np.ndarray, n_groups: int,
                n_labels: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Count, mean and sample standard deviation per (context, prompt) cell, (G, V) each."""
    cell = groups * n_labels + labels
    size = n_groups * n_labels
    count = np.bincount(cell, minlength=size).reshape(n_groups, n_labels)
    total = np.bincount(cell, weights=belief, minlength=size).reshape(n_groups, n_labels)
    with np.errstate(invalid="ignore", divide="ignore"):
        mean = total / count
        centred = belief - mean.ravel()[cell]
        ss = np.bincount(cell, weights=centred * centred, minlength=size).reshape(
            n_groups, n_labels)
        sd = np.sqrt(ss / (count - 1))
    sd[count < 2] = np.nan
    return count, mean, sd


def _weighted_mean(weights: np.ndarray, values: np.ndarray) -> np.ndarray:
    """Mean of ``values`` (G,) under each row of bootstrap ``weights`` (B, G), NaNs skipped."""
    ok = ~np.isnan(values)
    den = weights @ ok.astype(np.float64)
    num = weights @ np.where(ok, values, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        return num / den


def _rmse_between(belief: np.ndarray, groups: np.ndarray, is_variant: np.ndarray,
                  n_groups: int) -> float:
    cell = groups * 2 + is_variant
    count = np.bincount(cell, minlength=2 * n_groups).reshape(n_groups, 2)
    total = np.bincount(cell, weights=belief, minlength=2 * n_groups).reshape(n_groups, 2)
    both = (count[:, 0] > 0) & (count[:, 1] > 0)
    diff = total[both, 1] / count[both, 1] - total[both, 0] / count[both, 0]
    return float(np.sqrt(np.mean(diff * diff))) if both.any() else math.nan


def _permute_within_groups(groups: np.ndarray, gen: np.random.Generator) -> np.ndarray:
    keys = gen.random(len(groups))
    order = np.lexsort((keys, groups))
    perm = np.empty(len(groups), dtype=np.int64)
    perm[np.argsort(groups, kind="stable")] = order
    return perm


def permutation_pvalue(belief: np.ndarray, groups: np.ndarray, is_variant: np.ndarray,
                       n_groups: int, n_resamples: int,
                       gen: np.random.Generator) -> tuple[float, float]:
    """RMSE of averaged beliefs between two prompts and its within-context permutation p.

    Prompt labels are permuted among the rows of each context (the two prompts'
    rows only); ``p = (1 + #{T* >= T}) / (1 + B)``.
    """
    observed = _rmse_between(belief, groups, is_variant, n_groups)
    if math.isnan(observed):
        return observed, math.nan
    null = np.empty(n_resamples)
    for b in range(n_resamples):
        null[b] = _rmse_between(belief, groups, is_variant[_permute_within_groups(groups, gen)],
                                n_groups)
    return observed, monte_carlo_pvalue(null, observed)


# --------------------------------------------------------------------------- public layer
def _prompt_consistency_iv(data: Any, belief: Any, prompt: Any, group: Any, repetition: Any,
                           reference: Any, truth: Any, n_resamples: Any,
                           confidence_level: Any, rng: RNGLike) -> dict[str, Any]:
    df = as_dataframe(data, owner=_OWNER)
    for name, value in (("belief", belief), ("prompt", prompt), ("group", group)):
        if not isinstance(value, str):
            raise TypeError(param_error(name, _OWNER, "a column name (str)", value))
    for name, value in (("repetition", repetition), ("truth", truth)):
        if value is not None and not isinstance(value, str):
            raise TypeError(param_error(name, _OWNER, "a column name (str) or None", value))
    require_columns(df, {"belief": belief, "prompt": prompt, "group": group,
                         "repetition": repetition, "truth": truth}, owner=_OWNER)
    n_resamples = check_int(n_resamples, "n_resamples", _OWNER, low=1)
    confidence_level = check_float(confidence_level, "confidence_level", _OWNER, low=0.0,
                                   high=1.0, low_open=True, high_open=True)
    gen = check_rng(rng, owner=_OWNER)
    b = probability_column(df, belief, owner=_OWNER)
    labels, names = label_column(df, prompt, owner=_OWNER)
    names_list = [str(n) for n in names.tolist()]
    if reference not in names.tolist() and str(reference) not in names_list:
        raise ValueError(param_error("reference", _OWNER, "a prompt label present in column "
                                     f"'{prompt}' ({', '.join(map(repr, names.tolist()))})",
                                     reference))
    if len(names) < 2:
        raise ValueError(f"{_OWNER}: column '{prompt}' must hold at least two prompt variants; "
                         f"got {len(names)} ({', '.join(map(repr, names.tolist()))}).")
    groups = group_codes(df, group, owner=_OWNER)
    n_groups = int(groups.max()) + 1
    if repetition is not None:
        key = pd.DataFrame({"g": groups, "v": labels, "r": df[repetition].to_numpy()})
        dup = np.flatnonzero(key.duplicated(keep="first").to_numpy())
        if len(dup):
            shown = [df.index[i] for i in dup[:5]]
            raise ValueError(column_error(repetition, f"identify each repetition once per "
                                          f"('{group}', '{prompt}')", shown + [None] * (
                                              len(dup) - len(shown)), owner=_OWNER))
    truth_g = None
    if truth is not None:
        t = probability_column(df, truth, owner=_OWNER)
        count = np.bincount(groups, minlength=n_groups)
        truth_g = np.bincount(groups, weights=t, minlength=n_groups) / count
        bad = np.flatnonzero(np.abs(t - truth_g[groups]) > 1e-9)
        if len(bad):
            shown = [df.index[i] for i in bad[:5]]
            raise ValueError(column_error(truth, f"be constant within each '{group}'",
                                          shown + [None] * (len(bad) - len(shown)),
                                          [float(t[i]) for i in bad[:5]] + [None] * (
                                              len(bad) - len(shown)), owner=_OWNER))
    ref_code = (names.tolist().index(reference) if reference in names.tolist()
                else names_list.index(str(reference)))
    return {"b": b, "labels": labels, "names": names, "groups": groups, "n_groups": n_groups,
            "truth": truth_g, "ref": ref_code, "n_resamples": n_resamples,
            "confidence_level": confidence_level, "gen": gen, "reference": reference}


def prompt_consistency(
    data: Any,
    *,
    belief: str = "belief",
    prompt: str = "prompt",
    group: str = "context",
    repetition: str | None = "repetition",
    reference: str = "standard",
    truth: str | None = None,
    n_resamples: int = 999,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
) -> ConsistencyResult:
    r"""Spread of beliefs over repetitions and shifts between prompt variants.

    Parameters
    ----------
    data : pandas.DataFrame or convertible
        The belief table, one row per elicitation.
    belief, prompt, group : str
        Columns: the stated probability in [0, 1], the prompt variant and the
        context (the unit of the bootstrap and of the permutations).
    repetition : str or None
        Column numbering repetitions; used to check that no (context, prompt,
        repetition) appears twice. ``None`` skips the check.
    reference : str
        The prompt variant the others are compared with.
    truth : str, optional
        A ground-truth posterior column (constant within each context); adds
        the RMSE of each variant's averaged belief against it.
    n_resamples : int
        Cluster-bootstrap resamples and, separately, permutations per variant.
    confidence_level : float
        Level of the bootstrap intervals.
    rng : int, numpy.random.Generator or None
        Randomness of the bootstrap and the permutations.

    Returns
    -------
    ConsistencyResult
        ``table``: one row per variant; ``to_frame()``: the headline row.

    Notes
    -----
    With :math:`p_{cvr}` the belief for context :math:`c`, variant :math:`v`,
    repetition :math:`r`, :math:`\bar p_{cv}` its mean over repetitions and
    :math:`s_{cv}` its sample standard deviation (contexts with at least two
    repetitions), the figures are

    .. math::
        \mathrm{Std}_v = \frac{1}{|C_v|} \sum_{c} s_{cv}, \quad
        \mathrm{RMSE}_v = \Big(\frac{1}{|C_{v,ref}|} \sum_{c}
            (\bar p_{cv} - \bar p_{c,ref})^2\Big)^{1/2}, \quad
        \mathrm{RMSE}^{truth}_v = \Big(\frac{1}{|C_v|} \sum_c (\bar p_{cv} - q_c)^2\Big)^{1/2}

    over the contexts where each is defined. Intervals: percentile intervals
    of the figures recomputed on contexts drawn with replacement. The
    p-value of variant :math:`v` tests that, within each context, the labels
    ``reference`` and ``v`` are exchangeable (the belief does not depend on
    the prompt): the labels of the two variants' rows are permuted within
    each context, :math:`\mathrm{RMSE}_v` recomputed, and
    :math:`p = (1 + \#\{T^* \ge T\}) / (1 + B)`. This is exact under the
    null whatever the spread over repetitions. Note that
    :math:`\mathrm{RMSE}_v > 0` even for a consistent agent when beliefs
    vary over repetitions (averages of few draws differ): compare it with
    the null or with :math:`\mathrm{Std}_v`.

    References
    ----------
    The decision-coherence paper (design notes, docs/design.md, method 1): prompt
    consistency (Table 3) and RMSE against Bayesian-network ground truth
    (Table 4).

    Davison, A. C. and Hinkley, D. V. (1997). Bootstrap Methods and
    their Application, sec. 3.8 (cluster resampling). Cambridge.

    Examples
    --------
    >>> import coherence
    >>> agent = coherence.Agent.prompt_sensitive(report_noise=0.05, grid=0.01)
    >>> study = coherence.simulate(agent, n_contexts=60, rng=0)
    >>> res = coherence.prompt_consistency(study.data, truth="truth", n_resamples=199, rng=0)
    >>> res.headline_prompt, bool(res.pvalue < 0.05)
    ('absolute', True)
    """
    iv = _prompt_consistency_iv(data, belief, prompt, group, repetition, reference, truth,
                                n_resamples, confidence_level, rng)
    b, labels, groups = iv["b"], iv["labels"], iv["groups"]
    names, n_groups, ref = iv["names"], iv["n_groups"], iv["ref"]
    gen: np.random.Generator = iv["gen"]
    n_labels, level, n_res = len(names), iv["confidence_level"], iv["n_resamples"]
    boot_rng, perm_rng = gen.spawn(2)

    count, mean, sd = _cell_stats(b, groups, labels, n_groups, n_labels)
    weights = cluster_weights(cluster_draws(n_groups, n_res, boot_rng), n_groups)
    ones = np.ones((1, n_groups))

    order = [ref] + [v for v in range(n_labels) if v != ref]
    rows = []
    for v in order:
        std_hat = float(_weighted_mean(ones, sd[:, v])[0])
        std_lo, std_hi = percentile_interval(_weighted_mean(weights, sd[:, v]), level)
        row: dict[str, Any] = {
            "prompt": names[v], "n_obs": int(count[:, v].sum()),
            "n_contexts": int((count[:, v] > 0).sum()), "std": std_hat,
            "std_ci_low": std_lo, "std_ci_high": std_hi,
            "rmse_reference": math.nan, "rmse_reference_ci_low": math.nan,
            "rmse_reference_ci_high": math.nan, "pvalue": math.nan,
            "rmse_truth": math.nan, "rmse_truth_ci_low": math.nan,
            "rmse_truth_ci_high": math.nan,
        }
        if v != ref:
            sq = (mean[:, v] - mean[:, ref]) ** 2
            rmse_lo, rmse_hi = percentile_interval(np.sqrt(_weighted_mean(weights, sq)), level)
            keep = (labels == v) | (labels == ref)
            rmse, pval = permutation_pvalue(b[keep], groups[keep],
                                            (labels[keep] == v).astype(np.int64), n_groups,
                                            n_res, perm_rng)
            row.update({"rmse_reference": rmse, "rmse_reference_ci_low": rmse_lo,
                        "rmse_reference_ci_high": rmse_hi, "pvalue": pval})
        if iv["truth"] is not None:
            sq_t = (mean[:, v] - iv["truth"]) ** 2
            row["rmse_truth"] = float(np.sqrt(_weighted_mean(ones, sq_t)[0]))
            row["rmse_truth_ci_low"], row["rmse_truth_ci_high"] = percentile_interval(
                np.sqrt(_weighted_mean(weights, sq_t)), level)
        rows.append(row)
    table = pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
    others = table.iloc[1:]
    rmse_values = others["rmse_reference"].to_numpy(dtype=float)
    if np.all(np.isnan(rmse_values)):
        j = 0
        statistic = math.nan
    else:
        j = int(np.nanargmax(rmse_values))
        statistic = float(rmse_values[j])
    head = others.iloc[j]
    pv = others["pvalue"].to_numpy(dtype=float)
    pv = pv[~np.isnan(pv)]
    pvalue = min(1.0, float(pv.min()) * len(pv)) if len(pv) else math.nan
    context_means = pd.DataFrame(mean[:, order], columns=[names[v] for v in order])
    return ConsistencyResult(
        statistic=statistic, pvalue=pvalue,
        confidence_interval=ConfidenceInterval(float(head["rmse_reference_ci_low"]),
                                               float(head["rmse_reference_ci_high"]), level),
        n_obs=len(b), method="cluster-bootstrap+within-context-permutation",
        reference=str(iv["reference"]), headline_prompt=str(head["prompt"]),
        n_contexts=n_groups, n_resamples=n_res, table=table,
        context_means=context_means,
    )
