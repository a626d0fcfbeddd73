"""Prompt consistency: do stated beliefs stay put when only the wording changes?

A belief is a property of the agent and the context, not of the phrasing of
the question. Per prompt variant this module measures the spread of the
belief over repetitions of the same prompt, the distance between the
repetition-averaged beliefs under a reference prompt and under each other
variant (the reference paper's Table 3) and, given a ground-truth posterior,
each variant's distance to it (Table 4). The test of "no prompt effect" has two
statistics on the same context resamples: a paired mean difference (a common
shift) and the noise-corrected mean squared difference (disagreement context by
context), combined by their smaller p-value by default.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from scipy.stats import t as student_t

from .._parameters import check_float
from .._parameters import check_int
from .._resampling import MC_TIE_RTOL
from .._resampling import cluster_draws
from .._resampling import cluster_weights
from .._resampling import group_codes
from .._resampling import min_p_pvalue
from .._resampling import monte_carlo_pvalue
from .._resampling import percentile_interval
from .._resampling import round_off_difference
from .._resampling import tie_bound
from .._results import CoherenceResult
from .._results import ConfidenceInterval
from .._results import Summary
from .._rng import RNGLike
from .._rng import check_rng
from .._validation import as_dataframe
from .._validation import check_case_distinct
from .._validation import check_column_names
from .._validation import column_error
from .._validation import label_column
from .._validation import label_key
from .._validation import param_error
from .._validation import plain_value
from .._validation import probability_column
from .._validation import require_columns
from .._warnings import DeprecatedAlias
from ._consistency_warnings import MIN_TEST_CONTEXTS
from ._consistency_warnings import OWNER
from ._consistency_warnings import shift_alone
from ._consistency_warnings import warn_flat
from ._consistency_warnings import warn_left_out
from ._consistency_warnings import warn_no_rmse
from ._consistency_warnings import warn_shift_alone
from ._consistency_warnings import warn_untested
from ._consistency_warnings import warn_without_reference
from ._consistency_warnings import warn_without_replicate
from ._design import distinct_roles
from ._permutation import permutations_within

__all__ = ["ConsistencyResult", "prompt_consistency"]

_OWNER = OWNER
TABLE_COLUMNS: tuple[str, ...] = (
    "prompt", "n_obs", "n_contexts", "std", "std_ci_low", "std_ci_high", "rmse_reference",
    "rmse_reference_ci_low", "rmse_reference_ci_high", "shift", "shift_ci_low",
    "shift_ci_high", "pvalue", "pvalue_shift", "pvalue_disagreement", "rmse_truth",
    "rmse_truth_ci_low", "rmse_truth_ci_high",
)


@dataclass(frozen=True, slots=True)
class ConsistencyResult(CoherenceResult, test_name="prompt_consistency",
                        settings=("reference", "n_contexts", "n_resamples", "rmse", "replicate",
                                  "alternative")):
    """Result of :func:`prompt_consistency`.

    Attributes
    ----------
    statistic : float
        Headline: the largest RMSE between the mean beliefs under the
        reference prompt and under another variant (noise-corrected, or the
        paper's figure with ``rmse="paper"``; the replicate run excluded).
    pvalue : float
        Global p-value of "every variant has the reference's mean belief in
        every context" (beyond a re-run of the reference, given ``replicate``),
        against the ``alternative`` chosen: max-T over variants of the cluster
        bootstrap-t of each statistic, and for ``'combined'`` the smaller of
        the shift's and the disagreement's p-values calibrated on the same
        resamples (min-p); Bonferroni over the per-variant p-values with
        ``method="permutation"``.
    confidence_interval : ConfidenceInterval
        Cluster bootstrap-t interval of the headline variant's RMSE.
    n_obs : int
        Rows used.
    method : str
        ``'cluster-bootstrap-t'`` or ``'within-context-permutation'``, with
        ``'+replicate-baseline'`` when ``replicate`` is given, and ``"; shift alone for
        'v'"`` naming the variants whose ``'combined'`` p-value is their shift's alone
        (their disagreement untestable, see :func:`prompt_consistency`).
    rmse : str
        Which RMSE definition fills the table: ``'corrected'`` or ``'paper'``.
    alternative : str
        The departure the p-values look for: ``'combined'``, ``'shift'`` or
        ``'disagreement'`` (see :func:`prompt_consistency`).
    replicate : str or None
        The prompt label used as a re-run of the reference, if any.
    reference : str
        The reference prompt.
    headline_prompt : str
        The variant whose RMSE is the headline statistic (of variants whose RMSEs tie
        within round-off, the first in label order).
    n_contexts : int
        Number of contexts.
    n_resamples : int
        Bootstrap resamples and permutations (each).
    table : pandas.DataFrame
        One row per prompt variant (reference first): ``n_obs``,
        ``n_contexts``, ``std`` (mean over
        contexts of the standard deviation of the belief over repetitions),
        ``rmse_reference`` (NaN for the reference), ``shift`` (mean over
        contexts of the variant's mean belief minus the reference's; minus the
        mean of the reference and its re-run, given ``replicate``), the
        ``pvalue`` under ``alternative`` and the two statistics' own
        ``pvalue_shift`` and ``pvalue_disagreement`` (NaN for the reference
        and the replicate), ``rmse_truth`` (NaN without ``truth``); the
        figures with cluster-bootstrap ``_ci_low`` / ``_ci_high`` columns
        (the paper's Tables 3 and 4).
    context_means : pandas.DataFrame
        Repetition-averaged belief per context (rows, indexed by the ``group`` values)
        and prompt (columns).
    """

    reference: str
    headline_prompt: str
    n_contexts: int
    n_resamples: int
    rmse: str
    replicate: str | None
    alternative: str
    table: pd.DataFrame
    context_means: pd.DataFrame

    prompt_table = DeprecatedAlias("table")

    @property
    def n_groups(self) -> int:
        """Alias of :attr:`n_contexts`."""
        return self.n_contexts

    def summary(self) -> Summary:
        """The headline figures followed by the per-variant table."""
        table = self.table[["prompt", "std", "rmse_reference", "shift", "pvalue",
                            "rmse_truth"]]
        lead = [f"headline      {self.headline_prompt}"]
        return CoherenceResult.summary(self).with_table("per prompt variant", table, lead=lead)


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


def paired_covariance(belief: np.ndarray, groups: np.ndarray, labels: np.ndarray,
                      reps: np.ndarray, n_groups: int, n_reps: int, a: int,
                      c: int) -> tuple[np.ndarray, np.ndarray]:
    """Per context: the number ``m`` of repetition labels present under both prompts
    ``a`` and ``c``, and the sample covariance (over those ``m`` repetitions) of
    the two prompts' beliefs; 0 where ``m < 2``. Shapes (G,), (G,)."""
    size = n_groups * n_reps
    key = groups * n_reps + reps
    va = np.full(size, np.nan)
    vc = np.full(size, np.nan)
    va[key[labels == a]] = belief[labels == a]
    vc[key[labels == c]] = belief[labels == c]
    both = ~np.isnan(va) & ~np.isnan(vc)
    g = (np.arange(size) // n_reps)[both]
    xa, xc = va[both], vc[both]
    m = np.bincount(g, minlength=n_groups)
    with np.errstate(invalid="ignore", divide="ignore"):
        ma = np.bincount(g, weights=xa, minlength=n_groups) / m
        mc = np.bincount(g, weights=xc, minlength=n_groups) / m
        cp = np.bincount(g, weights=(xa - ma[g]) * (xc - mc[g]), minlength=n_groups)
        cov = cp / (m - 1)
    cov[m < 2] = 0.0
    return m, cov


def squared_difference_terms(mean: np.ndarray, sd: np.ndarray, count: np.ndarray, a: int,
                             c: int, paired: tuple[np.ndarray, np.ndarray] | None,
                             corrected: bool) -> np.ndarray:
    r"""Per context, :math:`(\bar p_{ca} - \bar p_{cc})^2`, minus (``corrected``) an
    unbiased estimate of its repetition-noise part,

    .. math:: s_{ca}^2/n_{ca} + s_{cc}^2/n_{cc} - 2\,m_c\,\hat\gamma_c/(n_{ca} n_{cc}),

    :math:`\hat\gamma_c` the covariance over the :math:`m_c` repetitions seen under
    both prompts (a shock shared by repetition). The corrected term has
    expectation :math:`(\mu_{ca} - \mu_{cc})^2` whatever the noise and the numbers
    of repetitions; it is NaN where a cell has fewer than two repetitions (fewer
    than one for the uncorrected term).
    """
    d2 = (mean[:, a] - mean[:, c]) ** 2
    if not corrected:
        return d2
    na, nc = count[:, a].astype(np.float64), count[:, c].astype(np.float64)
    with np.errstate(invalid="ignore", divide="ignore"):
        noise = sd[:, a] ** 2 / na + sd[:, c] ** 2 / nc
        if paired is not None:
            m, cov = paired
            noise = noise - 2.0 * m * cov / (na * nc)
    # heaped beliefs make the two equal in exact arithmetic (0.95, 0.85, 0.95 against 0.95,
    # 0.90: 1/14400 both): round-off is 0, not an RMSE of 1e-9
    return round_off_difference(d2, noise)  # NaN where sd is (fewer than 2 repetitions)


def truth_terms(mean: np.ndarray, sd: np.ndarray, count: np.ndarray, v: int,
                truth: np.ndarray, corrected: bool) -> np.ndarray:
    """Per context, (mean belief - truth)^2, minus (``corrected``) s^2 / n."""
    d2 = (mean[:, v] - truth) ** 2
    if not corrected:
        return d2
    with np.errstate(invalid="ignore", divide="ignore"):
        return round_off_difference(d2, sd[:, v] ** 2 / count[:, v])


def studentized_mean(values: np.ndarray, weights: np.ndarray,
                     confidence_level: float) -> tuple[float, float, float, float, int]:
    """See :func:`studentized_draws`; returns (mean, pvalue, low, high, n)."""
    mean, pvalue, low, high, n, _, _ = studentized_draws(values, weights, confidence_level)
    return mean, pvalue, low, high, n


def studentized_draws(values: np.ndarray, weights: np.ndarray, confidence_level: float, *,
                      two_sided: bool = False
                      ) -> tuple[float, float, float, float, int, float, np.ndarray]:
    r"""Cluster bootstrap-t for the mean of a per-context quantity.

    ``values`` (G,) with NaN for contexts left out; ``weights`` (B, G) the
    multiplicities of contexts in B cluster resamples. With
    :math:`T = \bar x / (s/\sqrt n)` and
    :math:`T^*_b = (\bar x^*_b - \bar x) / (s^*_b / \sqrt{n^*_b})`, returns the
    mean, the one-sided p-value of "mean <= 0", :math:`(1 + \#\{T^* \ge T\})/(1+B)`,
    the bootstrap-t interval :math:`[\bar x - t^*_{1-\alpha/2} se,\ \bar x -
    t^*_{\alpha/2} se]` (each bootstrap quantile at least as far out as Student's
    :math:`t_{n-1}` quantile), the number of contexts used, :math:`T` and the draws
    :math:`T^*` (for a max-T or min-p combination). ``two_sided``: the test of
    "mean = 0" instead, on :math:`|T|` and :math:`|T^*|` (symmetric bootstrap-t),
    and those are returned. With fewer than ``MIN_TEST_CONTEXTS`` contexts the
    p-value, :math:`T` and the draws are NaN (the interval stays).
    """
    ok = ~np.isnan(values)
    x = values[ok]
    n = int(x.size)
    if n < 2:
        return ((float(x.mean()) if n else math.nan), math.nan, math.nan, math.nan, n,
                math.nan, np.full(len(weights), np.nan))
    # terms of both signs that cancel to round-off (heaped beliefs: corrected terms whose
    # mean is 0 in exact arithmetic) have mean 0, not a 1e-18 that follows the row order
    mean = float(round_off_difference(x[x > 0].sum(), -x[x < 0].sum())) / n
    se = float(x.std(ddof=1)) / math.sqrt(n)
    w = weights[:, ok]
    nw = w.sum(axis=1)
    xc = x - mean  # centred on the data's mean: no cancellation in the resample variance
    with np.errstate(invalid="ignore", divide="ignore"):
        dev = (w @ xc) / nw  # resample mean minus the data's mean
        square = (w @ (xc * xc)) / nw
        vb = np.maximum(square - dev * dev, 0.0) * nw / (nw - 1.0)
        # a resample of one distinct value (heaped or clipped beliefs, few contexts) has
        # no spread of its own; its deviation is measured in the data's standard error
        # (dividing by its zero spread would make it infinitely extreme). Its variance is
        # round-off: next to its mean square about the data's mean, or, where that is
        # itself round-off (values equal to the data's mean), next to the values' size
        floor = (MC_TIE_RTOL * float(np.max(np.abs(x)))) ** 2
        spread = (vb > MC_TIE_RTOL * square) & (vb > floor)
        tb = dev / np.where(spread, np.sqrt(vb / nw), se)
    tb = np.nan_to_num(tb, nan=0.0, posinf=1e300, neginf=-1e300)
    alpha = 1.0 - confidence_level
    if se <= 1e-12 * max(1.0, abs(mean)):
        # no spread: the terms (differences of probabilities, at most 1 in size) are all
        # equal; a mean within rounding of 0 (identical beliefs give ~1e-25) is no evidence
        null = (abs(mean) if two_sided else mean) <= 1e-12
        pvalue = 1.0 if null else 1.0 / (1.0 + len(tb))
        t_obs = math.inf if not null else (0.0 if two_sided else -math.inf)
        if n < MIN_TEST_CONTEXTS:
            return mean, math.nan, mean, mean, n, math.nan, np.full(len(tb), np.nan)
        return mean, pvalue, mean, mean, n, t_obs, np.zeros(len(tb))
    t_obs = mean / se
    if two_sided:
        t_obs, tb_test = abs(t_obs), np.abs(tb)
    else:
        tb_test = tb
    pvalue = monte_carlo_pvalue(tb_test, t_obs)
    q_lo, q_hi = np.quantile(tb, [alpha / 2.0, 1.0 - alpha / 2.0])
    # never narrower than Student's t interval: with few contexts the bootstrap
    # understates the tails of T (20 contexts: coverage 0.924 -> 0.939)
    t_q = float(student_t.ppf(1.0 - alpha / 2.0, n - 1))
    q_lo, q_hi = min(float(q_lo), -t_q), max(float(q_hi), t_q)
    if n < MIN_TEST_CONTEXTS:  # too few contexts for a bootstrap-t p-value
        pvalue, t_obs, tb_test = math.nan, math.nan, np.full(len(tb), np.nan)
    return mean, pvalue, mean - q_hi * se, mean - q_lo * se, n, t_obs, tb_test


def _root(x: float) -> float:
    return math.sqrt(max(x, 0.0)) if not math.isnan(x) else math.nan


def _between(belief: np.ndarray, groups: np.ndarray, is_variant: np.ndarray,
             n_groups: int) -> tuple[float, float]:
    """RMSE and absolute mean of the per-context differences of averaged beliefs."""
    cell = groups * 2 + is_variant
    count = np.bincount(cell, minlength=2 * n_groups).reshape(n_groups, 2)
    total = np.bincount(cell, weights=belief, minlength=2 * n_groups).reshape(n_groups, 2)
    both = (count[:, 0] > 0) & (count[:, 1] > 0)
    if not both.any():
        return math.nan, math.nan
    diff = total[both, 1] / count[both, 1] - total[both, 0] / count[both, 0]
    return float(np.sqrt(np.mean(diff * diff))), abs(float(np.mean(diff)))


def permutation_draws(belief: np.ndarray, groups: np.ndarray, is_variant: np.ndarray,
                      n_groups: int, n_resamples: int,
                      gen: np.random.Generator) -> tuple[np.ndarray, np.ndarray]:
    """Two statistics of averaged beliefs between two prompts, on the data and on
    ``n_resamples`` within-context permutations of the prompt labels (the two
    prompts' rows only): the RMSE of the per-context differences (disagreement)
    and the absolute mean difference (shift). Shapes (2,) and (B, 2)."""
    observed = np.asarray(_between(belief, groups, is_variant, n_groups))
    null = np.empty((n_resamples, 2))
    if np.isnan(observed[0]):
        null.fill(np.nan)
        return observed, null
    b = 0
    for perms in permutations_within(groups, gen, n_resamples):
        for perm in perms:
            null[b] = _between(belief, groups, is_variant[perm], n_groups)
            b += 1
    return observed, null


# --------------------------------------------------------------------------- public layer
_METHODS = ("bootstrap-t", "permutation")
_RMSE = ("corrected", "paper")
_ALTERNATIVES = ("combined", "shift", "disagreement")


def _label_code(value: Any, names: np.ndarray, param: str, prompt: str) -> int:
    """The code of the prompt label ``value`` names, matched by value as ``pairs=`` are
    (:func:`label_key`: ``1``, ``1.0`` and ``'1'`` name the label 1; ``True`` does not)."""
    keys = [label_key(n) for n in names.tolist()]
    if label_key(value) not in keys:
        raise ValueError(param_error(param, _OWNER, "a prompt label present in column "
                                     f"'{prompt}' ({', '.join(map(repr, names.tolist()))})",
                                     value))
    return keys.index(label_key(value))


def _prompt_consistency_iv(data: Any, belief: Any, prompt: Any, group: Any, repetition: Any,
                           reference: Any, replicate: Any, truth: Any, method: Any, rmse: Any,
                           alternative: Any, n_resamples: Any, confidence_level: Any,
                           rng: RNGLike) -> dict[str, Any]:
    df = as_dataframe(data, owner=_OWNER)
    check_column_names(_OWNER, {"belief": belief, "prompt": prompt, "group": group},
                       {"repetition": repetition, "truth": truth})
    distinct_roles({"belief": belief, "prompt": prompt, "group": group,
                    "repetition": repetition, "truth": truth}, _OWNER)
    for name, value, allowed in (("method", method, _METHODS), ("rmse", rmse, _RMSE),
                                 ("alternative", alternative, _ALTERNATIVES)):
        if value not in allowed:
            raise ValueError(param_error(name, _OWNER, "one of " + ", ".join(
                map(repr, allowed)), value))
    require_columns(df, {"belief": belief, "prompt": prompt, "group": group,
                         "repetition": repetition, "truth": truth}, owner=_OWNER)
    n_resamples = check_int(n_resamples, "n_resamples", _OWNER, low=1)
    confidence_level = check_float(confidence_level, "confidence_level", _OWNER, low=0.0,
                                   high=1.0, low_open=True, high_open=True)
    gen = check_rng(rng, owner=_OWNER)
    b = probability_column(df, belief, owner=_OWNER)
    for column in (prompt, repetition):  # 'Standard' / 'standard', 0 / '0': one label
        if column is not None:
            check_case_distinct(df, column, owner=_OWNER)
    labels, names = label_column(df, prompt, owner=_OWNER)
    ref_code = _label_code(reference, names, "reference", prompt)
    if len(names) < 2:
        raise ValueError(f"{_OWNER}: column '{prompt}' must hold at least two prompt variants; "
                         f"got {len(names)} ({', '.join(map(repr, names.tolist()))}).")
    rep_code = None
    if replicate is not None:
        rep_code = _label_code(replicate, names, "replicate", prompt)
        if rep_code == ref_code:
            raise ValueError(param_error("replicate", _OWNER, "a prompt label other than "
                                         f"reference={reference!r}", replicate))
        if method == "permutation":
            raise ValueError(param_error("method", _OWNER, "'bootstrap-t' when a replicate "
                                         "run is given", method))
        if len(names) < 3:  # the re-run is the baseline, not a variant: nothing to compare
            raise ValueError(f"{_OWNER}: column '{prompt}' must hold a prompt variant besides "
                             f"the reference {reference!r} and its re-run "
                             f"replicate={replicate!r}; got only "
                             f"{', '.join(map(repr, names.tolist()))}.")
    groups, contexts = label_column(df, group, owner=_OWNER)
    n_groups = int(groups.max()) + 1
    reps, n_reps = None, 0
    if repetition is not None:
        key = pd.DataFrame({"g": groups, "v": labels, "r": df[repetition].to_numpy()})
        dup = np.flatnonzero(key.duplicated(keep="first").to_numpy())
        if len(dup):
            shown = [df.index[i] for i in dup[:5]]
            raise ValueError(column_error(repetition, f"identify each repetition once per "
                                          f"('{group}', '{prompt}')", shown + [None] * (
                                              len(dup) - len(shown)), owner=_OWNER))
        reps = group_codes(df, repetition, owner=_OWNER)
        n_reps = int(reps.max()) + 1
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
    return {"b": b, "labels": labels, "names": names, "groups": groups, "n_groups": n_groups,
            "contexts": pd.Index(contexts, name=group),
            "reps": reps, "n_reps": n_reps, "truth": truth_g, "ref": ref_code,
            "rep": rep_code, "n_resamples": n_resamples, "method": method, "rmse": rmse,
            "alternative": alternative, "confidence_level": confidence_level, "gen": gen,
            # the labels named, as the column writes them (reference=1.0 names the label 1)
            "reference": plain_value(names[ref_code]),
            "replicate": None if rep_code is None else plain_value(names[rep_code])}


@dataclass(frozen=True, slots=True)
class _Cells:
    """Per (context, prompt) cell statistics of :func:`prompt_consistency`'s validated
    table, with the rows they come from (for the paired covariances)."""

    b: np.ndarray
    groups: np.ndarray
    labels: np.ndarray
    reps: np.ndarray | None
    n_groups: int
    n_reps: int
    count: np.ndarray
    mean: np.ndarray
    sd: np.ndarray

    @classmethod
    def of(cls, iv: dict[str, Any]) -> _Cells:
        b, labels, groups, n_groups = iv["b"], iv["labels"], iv["groups"], iv["n_groups"]
        count, mean, sd = _cell_stats(b, groups, labels, n_groups, len(iv["names"]))
        return cls(b=b, groups=groups, labels=labels, reps=iv["reps"], n_groups=n_groups,
                   n_reps=iv["n_reps"], count=count, mean=mean, sd=sd)

    def pair(self, a: int, c: int, corr: bool) -> np.ndarray:
        """Per-context squared-difference terms of prompts ``a`` and ``c``."""
        paired = None
        if self.reps is not None:
            paired = paired_covariance(self.b, self.groups, self.labels, self.reps,
                                       self.n_groups, self.n_reps, a, c)
        return squared_difference_terms(self.mean, self.sd, self.count, a, c, paired, corr)


def _variant_row(iv: dict[str, Any], cells: _Cells, v: int, weights: np.ndarray,
                 perm_rng: np.random.Generator,
                 draws: dict[str, list[tuple[float, np.ndarray]]]) -> dict[str, Any]:
    """The table row of prompt variant ``v``: its spread, its RMSE and shift from the
    reference, its p-values (its bootstrap-t draws appended to ``draws``) and its RMSE
    from the truth."""
    ref, rep, level = iv["ref"], iv["rep"], iv["confidence_level"]
    mean, sd, count = cells.mean, cells.sd, cells.count
    corrected = iv["rmse"] == "corrected"
    ones = np.ones((1, cells.n_groups))
    std_hat = float(_weighted_mean(ones, sd[:, v])[0])
    std_lo, std_hi = percentile_interval(_weighted_mean(weights, sd[:, v]), level)
    row: dict[str, Any] = dict.fromkeys(TABLE_COLUMNS, math.nan)
    row.update({"prompt": iv["names"][v], "n_obs": int(count[:, v].sum()),
                "n_contexts": int((count[:, v] > 0).sum()), "std": std_hat,
                "std_ci_low": std_lo, "std_ci_high": std_hi})
    if v != ref:
        est, _, lo, hi, _ = studentized_mean(cells.pair(v, ref, corrected), weights, level)
        row.update({"rmse_reference": _root(est), "rmse_reference_ci_low": _root(lo),
                    "rmse_reference_ci_high": min(_root(hi), 1.0)})
        # the shift is measured from the reference, or from the mean of the reference and
        # its re-run (both have the variant's mean under the null)
        anchor = mean[:, ref] if rep is None else 0.5 * (mean[:, ref] + mean[:, rep])
        d = mean[:, v] - (mean[:, ref] if v == rep else anchor)
        shift, p_shift, lo, hi, _, t_shift, tb_shift = studentized_draws(
            d, weights, level, two_sided=True)
        # a mean difference of probabilities lies in [-1, 1]: with a few contexts the
        # bootstrap-t went far past (4 contexts: -45.9)
        row.update({"shift": shift, "shift_ci_low": max(lo, -1.0),
                    "shift_ci_high": min(hi, 1.0)})
        if v != rep:
            row.update(_variant_pvalues(iv, cells, v, weights, perm_rng, draws,
                                        p_shift, (t_shift, tb_shift)))
    if iv["truth"] is not None:
        est, _, lo, hi, _ = studentized_mean(
            truth_terms(mean, sd, count, v, iv["truth"], corrected), weights, level)
        row.update({"rmse_truth": _root(est), "rmse_truth_ci_low": _root(lo),
                    "rmse_truth_ci_high": min(_root(hi), 1.0)})
    return row


def _variant_pvalues(iv: dict[str, Any], cells: _Cells, v: int, weights: np.ndarray,
                     perm_rng: np.random.Generator,
                     draws: dict[str, list[tuple[float, np.ndarray]]], p_shift: float,
                     shift_draws: tuple[float, np.ndarray]) -> dict[str, float]:
    """The p-values of a variant other than the reference and its re-run: permutation
    within contexts, or bootstrap-t (its draws appended to ``draws`` for the max-T), and
    the number of contexts behind the bootstrap-t's disagreement (``n_disagreement``)."""
    ref, rep, alt, level = iv["ref"], iv["rep"], iv["alternative"], iv["confidence_level"]
    n_dis = math.nan
    if iv["method"] == "permutation":
        b, groups, labels = cells.b, cells.groups, cells.labels
        keep = np.flatnonzero((labels == v) | (labels == ref))
        is_v = (labels[keep] == v).astype(np.int64)
        # canonical order (context, prompt, belief): the permutations then give the
        # same null whatever the order of the rows, for the same rng
        keep = keep[np.lexsort((b[keep], is_v, groups[keep]))]
        obs, null = permutation_draws(b[keep], groups[keep],
                                      (labels[keep] == v).astype(np.int64), cells.n_groups,
                                      iv["n_resamples"], perm_rng)
        p_shift = monte_carlo_pvalue(null[:, 1], obs[1])
        p_dis = monte_carlo_pvalue(null[:, 0], obs[0])
        pval = (p_shift if alt == "shift" else p_dis if alt == "disagreement"
                else min_p_pvalue([obs[1], obs[0]], [null[:, 1], null[:, 0]]))
    else:
        h = cells.pair(v, ref, True)
        if rep is not None:
            h = 0.5 * (h + cells.pair(v, rep, True)) - cells.pair(ref, rep, True)
        _, p_dis, _, _, n_dis, t_dis, tb_dis = studentized_draws(h, weights, level)
        found = {"shift": shift_draws, "disagreement": (t_dis, tb_dis)}
        kinds = ("shift", "disagreement") if alt == "combined" else (alt,)
        usable = [k for k in kinds if not math.isnan(found[k][0])]
        for k in usable:
            draws[k].append(found[k])
        pval = min_p_pvalue([found[k][0] for k in kinds], [found[k][1] for k in kinds])
    return {"pvalue": pval, "pvalue_shift": p_shift, "pvalue_disagreement": p_dis,
            "n_disagreement": n_dis}


def _overall_pvalue(method: str, pv: np.ndarray,
                    draws: dict[str, list[tuple[float, np.ndarray]]],
                    kinds: tuple[str, ...]) -> float:
    """The test's p-value over the variants' p-values ``pv`` (NaN ones dropped):
    Bonferroni for the permutation method, else max-T within each statistic and min-p
    over the statistics on the same context resamples."""
    if method == "permutation":
        return min(1.0, float(pv.min()) * len(pv)) if len(pv) else math.nan
    if len(pv):
        families = [(max(t for t, _ in draws[k]), np.max([tb for _, tb in draws[k]], axis=0))
                    for k in kinds if draws[k]]
        return min_p_pvalue([t for t, _ in families], [tb for _, tb in families])
    return math.nan


def prompt_consistency(
    data: Any,
    *,
    belief: str = "belief",
    prompt: str = "prompt",
    group: str = "context",
    repetition: str | None = "repetition",
    reference: str = "standard",
    replicate: str | None = None,
    truth: str | None = None,
    method: str = "bootstrap-t",
    rmse: str = "corrected",
    alternative: str = "combined",
    n_resamples: int = 999,
    confidence_level: float = 0.95,
    rng: RNGLike = None,
) -> ConsistencyResult:
    r"""Spread of beliefs over repetitions and shifts between prompt variants.

    A coherent agent's belief should not depend on the wording of the question. For each
    prompt variant the test compares the mean belief of every context with the reference
    prompt's, corrected for the noise expected from the repetitions, so a noisy but
    unbiased variant is not flagged; the p-values are a cluster bootstrap-t over
    contexts (or a permutation of the prompt labels), and the spread over repetitions is
    reported per variant.

    Parameters
    ----------
    data : pandas.DataFrame or convertible
        The belief table, one row per elicitation.
    belief, prompt, group : str
        Columns: the stated probability in [0, 1], the prompt variant and the
        context (the unit of the bootstrap).
    repetition : str or None
        Column numbering repetitions. No (context, prompt, repetition) may
        appear twice. Repetitions with the same label under two prompts are
        taken as paired (e.g. run in the same session or with the same seed):
        their covariance enters the noise correction, so shocks shared across
        prompts by repetition do not bias the test; unrelated numbering only
        adds a little noise. ``None``: repetitions of different prompts are
        taken as independent.
    reference : str
        The prompt variant the others are compared with.
    replicate : str, optional
        A prompt label holding a second, independent run (new session) of the
        ``reference`` prompt. The null then becomes "variant *v* differs from
        the reference no more than a re-run of the reference does" (see Notes).
    truth : str, optional
        A ground-truth posterior column (constant within each context); adds
        the RMSE of each variant's averaged belief against it.
    method : {'bootstrap-t', 'permutation'}
        The per-variant test. ``'bootstrap-t'`` (default): cluster bootstrap-t
        of the statistics of ``alternative``, valid under unequal noise,
        unequal repetitions and shocks shared by repetition.
        ``'permutation'``: the earlier within-context permutation of the
        prompt labels, exact only when the two prompts' rows are exchangeable
        (same noise, same number of repetitions, independent repetitions).
    rmse : {'corrected', 'paper'}
        ``'corrected'`` (default): ``rmse_reference`` and ``rmse_truth`` estimate
        the RMSE of the *mean* beliefs, the repetition noise of the averages
        removed (contexts with at least two repetitions per prompt).
        ``'paper'``: the reference paper's figures, RMSE of the repetition
        averages as they are (noise included, larger with fewer repetitions).
    alternative : {'combined', 'shift', 'disagreement'}
        The departure from "same mean belief in every context" the p-values
        look for. ``'shift'``: a common shift, the paired mean over contexts
        of the variant's mean belief minus the reference's (two-sided); the
        most powerful when the variant moves every belief the same way, blind
        to differences that cancel over contexts. ``'disagreement'``: the
        noise-corrected mean squared difference (the statistic behind
        ``rmse_reference``); it sees differences of either sign context by
        context, but a small common shift drowns in the repetition noise it
        must subtract (weak under heavy-tailed noise). ``'combined'``
        (default): the smaller of the two p-values, calibrated on the same
        resamples (min-p), so it keeps its level and has power against both.
        Every ``table`` row also shows ``pvalue_shift`` and
        ``pvalue_disagreement``.
    n_resamples : int
        Cluster-bootstrap resamples (and permutations for ``'permutation'``).
    confidence_level : float
        Level of the intervals.
    rng : int, numpy.random.Generator or None
        Randomness of the bootstrap and the permutations.

    Returns
    -------
    ConsistencyResult
        ``table``: one row per variant; ``to_frame()``: the headline row.

    See Also
    --------
    leakage_test : does the action depend on the context beyond the belief?
    monotonicity_test : are actions monotone in the belief?
    ci_test : is the action independent of the outcome given the belief?
    iia_test : do choices between two actions depend on the other actions offered?
    report : this test and the others on every (model, dataset) cell.

    Notes
    -----
    With :math:`p_{cvr}` the belief for context :math:`c`, variant :math:`v`,
    repetition :math:`r`, :math:`\bar p_{cv}` its mean over the :math:`n_{cv}`
    repetitions, :math:`s_{cv}` their standard deviation and :math:`\mu_{cv}`
    the agent's mean belief (the expectation of :math:`\bar p_{cv}`), the
    per-context term

    .. math::
        h_{cv} = (\bar p_{cv} - \bar p_{c,ref})^2 - \frac{s_{cv}^2}{n_{cv}}
                 - \frac{s_{c,ref}^2}{n_{c,ref}} + \frac{2 m_c \hat\gamma_c}{n_{cv} n_{c,ref}}

    (:math:`\hat\gamma_c` the covariance over the :math:`m_c` repetition labels
    seen under both prompts) has expectation :math:`(\mu_{cv} - \mu_{c,ref})^2`.
    ``rmse_reference`` is :math:`\sqrt{\max(0, \bar h_v)}`, the RMSE of the mean
    beliefs; ``rmse="paper"`` gives the paper's
    :math:`(\mathrm{mean}_c (\bar p_{cv} - \bar p_{c,ref})^2)^{1/2}` instead, and
    ``rmse_truth`` likewise with :math:`q_c` and :math:`s^2_{cv}/n_{cv}`.
    ``std`` is the mean over contexts of :math:`s_{cv}` (percentile interval).
    A variant is compared with the reference on the contexts seen under both; a
    :class:`~coherence.SkippedRecordsWarning` names the contexts with no row under the
    reference (they enter only the variants' ``std``).

    **Null and p-values.** H0: :math:`\mu_{cv} = \mu_{c,ref}` in every
    context. Two statistics, each a cluster (context) bootstrap-t on the same
    resamples, :math:`T^* = (\bar x^* - \bar x) / \mathrm{se}^*`:

    * disagreement: :math:`T = \bar h_v / \mathrm{se}`, one-sided
      (:math:`\bar h_v` has mean 0 under H0 and a positive mean otherwise),
      :math:`p = (1 + \#\{T^* \ge T\}) / (1 + B)`;
    * shift: with :math:`d_{cv} = \bar p_{cv} - \bar p_{c,ref}`,
      :math:`T = \bar d_v / \mathrm{se}`, two-sided,
      :math:`p = (1 + \#\{|T^*| \ge |T|\}) / (1 + B)`; ``shift`` is
      :math:`\bar d_v` with its bootstrap-t interval.

    ``'combined'`` takes :math:`\min(p_{shift}, p_{dis})` and refers it to the
    same minimum over the resamples, each resample's p-values computed among
    the data and the other resamples (Westfall and Young's min-p), so the
    combination has the level of its parts. A resample of one distinct value
    (heaped or clipped beliefs) has no spread: its deviation is divided by the
    data's standard error instead. A statistic seen in fewer than five contexts has no
    bootstrap-t p-value (NaN; with 2-4 contexts the bootstrap rejected a true null up to a
    third of the time). The disagreement needs five contexts with two or more repetitions
    under both prompts (and the replicate), the shift five seen under both: a variant that
    has the shift's five and not the disagreement's gets, under ``'combined'``, its
    shift's p-value alone (and enters the overall p-value by its shift only), with a
    :class:`~coherence.SmallSampleWarning` naming it, and ``method`` ends in
    ``"; shift alone for 'v'"``. A variant with no p-value at all is left out of the
    overall p-value (which tests the others), with a :class:`~coherence.SmallSampleWarning`
    naming it. Intervals of the RMSEs are bootstrap-t
    intervals of the mean of :math:`h` (or of the squared differences for
    ``rmse="paper"``), mapped through the square root (clipped at 0).

    **Sessions.** :math:`\mu_{cv}` is the mean belief *within the session(s)
    the data were collected in*. If every (context, prompt) run carries its
    own session offset (a fresh conversation, a different server state), two
    runs of the same prompt already differ, and the test rightly rejects
    equality of within-session means. To ask whether a prompt matters beyond
    the session-to-session variation, give a re-run of the reference prompt
    as ``replicate``: the per-context term becomes
    :math:`(h(v, ref) + h(v, rep))/2 - h(ref, rep)`, whose mean is 0 when
    variant *v* and the reference differ only by exchangeable session
    offsets; the replicate's own row shows the session-to-session RMSE. The
    shift is then measured from the mean of the reference and its re-run,
    :math:`d_{cv} = \bar p_{cv} - (\bar p_{c,ref} + \bar p_{c,rep}) / 2` (on the contexts
    seen under all three; a :class:`~coherence.SkippedRecordsWarning` names those of the
    reference that the re-run lacks). With
    ``replicate`` the null is "no prompt effect beyond a new session". Without
    one, session offsets are a difference the disagreement statistic sees and
    the shift (offsets of mean 0) does not.

    The result's ``pvalue`` tests all variants at once: for each statistic the
    largest per-variant :math:`T` against the largest :math:`T^*` over
    variants on the same context resamples (max-T, which accounts for the
    variants sharing the reference), then, for ``'combined'``, min-p over the
    two statistics. With ``method="permutation"`` both statistics (the RMSE of
    the per-context differences and the absolute mean difference) are computed
    on the same within-context permutations, and the overall p-value is the
    smallest per-variant p-value times the number of variants (Bonferroni),
    capped at 1. ``statistic`` and ``confidence_interval`` are the largest
    RMSE and its interval whatever the ``alternative``.

    References
    ----------
    The decision-coherence paper (design notes, docs/design.md, method 1): prompt
    consistency (Table 3) and RMSE against Bayesian-network ground truth
    (Table 4).

    Davison, A. C. and Hinkley, D. V. (1997). Bootstrap Methods and
    their Application, sec. 3.8 (cluster resampling) and 5.2.1 (studentized
    intervals). Cambridge.

    Westfall, P. H. and Young, S. S. (1993). Resampling-Based Multiple
    Testing, sec. 2.6 (min-p). Wiley.

    Examples
    --------
    >>> import coherence
    >>> agent = coherence.Agent.prompt_sensitive(report_noise=0.05, grid=0.01)
    >>> study = coherence.simulate(agent, n_contexts=60, rng=0)
    >>> res = coherence.prompt_consistency(study.data, truth="truth", n_resamples=199, rng=0)
    >>> res.headline_prompt, bool(res.pvalue < 0.05)
    ('absolute', True)
    """
    iv = _prompt_consistency_iv(data, belief, prompt, group, repetition, reference, replicate,
                                truth, method, rmse, alternative, n_resamples,
                                confidence_level, rng)
    warn_without_reference(iv)
    warn_without_replicate(iv)
    names, n_groups, ref, rep = iv["names"], iv["n_groups"], iv["ref"], iv["rep"]
    gen: np.random.Generator = iv["gen"]
    level, n_res = iv["confidence_level"], iv["n_resamples"]
    boot_rng, perm_rng = gen.spawn(2)
    cells = _Cells.of(iv)
    weights = cluster_weights(cluster_draws(n_groups, n_res, boot_rng), n_groups)
    alt = iv["alternative"]
    kinds = ("shift", "disagreement") if alt == "combined" else (alt,)
    # per statistic kind, the (T, T*) of every variant tested (bootstrap-t)
    draws: dict[str, list[tuple[float, np.ndarray]]] = {"shift": [], "disagreement": []}
    order = [ref] + ([rep] if rep is not None else []) + [
        v for v in range(len(names)) if v not in (ref, rep)]
    rows = [_variant_row(iv, cells, v, weights, perm_rng, draws) for v in order]
    table = pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
    warn_flat(table)
    others = table.iloc[1 + (rep is not None):]
    rmse_values = others["rmse_reference"].to_numpy(dtype=float)
    if np.all(np.isnan(rmse_values)):
        j = 0
        statistic = math.nan
        warn_no_rmse(iv)
    else:
        # variants whose RMSEs tie (equal in exact arithmetic, summed in another order)
        # go to the first in label order, so the headline does not follow the row order
        j = int(np.flatnonzero(rmse_values >= tie_bound(np.nanmax(rmse_values)))[0])
        statistic = float(rmse_values[j])
    head = others.iloc[j]
    pv = others["pvalue"].to_numpy(dtype=float)
    pv = pv[~np.isnan(pv)]
    if len(pv) == 0:
        warn_untested(alt)
    warn_left_out(iv, rows[1 + (rep is not None):], head["prompt"])
    fell_back = shift_alone(iv, rows)
    warn_shift_alone(iv, fell_back, len(pv))
    pvalue = _overall_pvalue(iv["method"], pv, draws, kinds)
    mean = cells.mean
    context_means = pd.DataFrame(mean[:, order], columns=[names[v] for v in order],
                                 index=iv["contexts"])
    method_name = ("cluster-bootstrap-t" if iv["method"] == "bootstrap-t"
                   else "within-context-permutation")
    if rep is not None:
        method_name += "+replicate-baseline"
    if fell_back:  # the combined p-value of these variants is their shift's
        method_name += "; shift alone for " + ", ".join(repr(plain_value(r["prompt"]))
                                                        for r in fell_back)
    return ConsistencyResult(
        statistic=statistic, pvalue=pvalue,
        confidence_interval=ConfidenceInterval(float(head["rmse_reference_ci_low"]),
                                               float(head["rmse_reference_ci_high"]), level),
        n_obs=len(cells.b), method=method_name,
        reference=str(iv["reference"]), headline_prompt=str(head["prompt"]),
        n_contexts=n_groups, n_resamples=n_res, rmse=iv["rmse"],
        replicate=None if iv["replicate"] is None else str(iv["replicate"]),
        alternative=alt, table=table, context_means=context_means,
    )
