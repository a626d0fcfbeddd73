"""Leakage size: how much the outcome helps predict the action beyond the belief.

If the stated belief ``p`` is what the agent acts on, then once ``p`` is known
the true outcome ``y`` carries no further information about the action ``a``.
The leakage test fits two classifiers of the action with grouped K-fold
cross-validation, a *base* one on ``p`` (and optional evidence ``x``) and a
*full* one on ``(p, x, y)``, and reports the relative reduction in
out-of-fold log-loss (the reference paper's "% Impr").
"""

from __future__ import annotations

import copy
import math
import warnings
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any
from typing import Literal

import numpy as np
import pandas as pd
from scipy import stats

from .._extras import require
from .._parameters import check_choice
from .._parameters import check_float
from .._parameters import check_int
from .._resampling import cluster_draws
from .._resampling import group_codes
from .._resampling import grouped_folds
from .._resampling import monte_carlo_pvalue
from .._results import ConfidenceInterval
from .._rng import RNGLike
from .._rng import check_rng
from .._validation import as_dataframe
from .._validation import binary_column
from .._validation import check_column_names
from .._validation import finite_column
from .._validation import label_column
from .._validation import nonempty
from .._validation import param_error
from .._validation import plain_value
from .._validation import probability_column
from .._warnings import DegenerateDataWarning
from .._warnings import SmallSampleWarning
from ._design import ENGINES
from ._design import category_values
from ._design import evidence_columns
from ._design import numeric_evidence
from ._design import require_design_columns
from ._design import warn_constant_belief
from ._leakage_engines import Evidence
from ._leakage_engines import base_designs
from ._leakage_engines import oof_losses
from ._leakage_engines import permutation_blocks
from ._leakage_interval import between_context_fold_variance
from ._leakage_interval import widened_interval
from ._leakage_null import fast_logistic_null
from ._leakage_null import improvement
from ._leakage_result import LeakageResult
from ._permutation import permutations_within
from ._permutation import varied_units

__all__ = ["LeakageResult", "leakage_test"]

_OWNER = "leakage_test"
PVALUE_METHODS = ("permutation", "paired")
_CATBOOST_DEFAULTS: Mapping[str, Any] = {"depth": 6, "iterations": 1000, "thread_count": 1,
                                         "early_stopping": True, "learning_rate": None}
_LOGISTIC_DEFAULTS: Mapping[str, Any] = {"n_knots": 5, "C": 1.0, "interactions": True}


#: False: every permutation refitted by scikit-learn (the reference path, for the
#: tests and the before/after benchmark).
FAST_REFITS = True


# --------------------------------------------------------------------------- validation
def _engine_options(engine: str, options: Any) -> dict[str, Any]:
    defaults = dict(_CATBOOST_DEFAULTS if engine == "catboost" else _LOGISTIC_DEFAULTS)
    if options is None:
        return defaults
    if not isinstance(options, Mapping):
        raise TypeError(param_error("engine_options", _OWNER, "a mapping or None", options))
    unknown = sorted(set(options) - set(defaults))
    if unknown:
        raise ValueError(param_error("engine_options", _OWNER, f"a mapping with keys among "
                                     f"{sorted(defaults)} for engine {engine!r}", unknown))
    defaults.update(options)
    if engine == "catboost":
        defaults["depth"] = check_int(defaults["depth"], "engine_options['depth']", _OWNER,
                                      low=1, high=16)
        defaults["iterations"] = check_int(defaults["iterations"],
                                           "engine_options['iterations']", _OWNER, low=1)
        defaults["thread_count"] = check_int(defaults["thread_count"],
                                             "engine_options['thread_count']", _OWNER, low=-1)
        if not isinstance(defaults["early_stopping"], bool):
            raise TypeError(param_error("engine_options['early_stopping']", _OWNER, "a bool",
                                        defaults["early_stopping"]))
    else:
        defaults["n_knots"] = check_int(defaults["n_knots"], "engine_options['n_knots']",
                                        _OWNER, low=2, high=50)
        defaults["C"] = check_float(defaults["C"], "engine_options['C']", _OWNER, low=0.0,
                                    low_open=True)
        if not isinstance(defaults["interactions"], bool):
            raise TypeError(param_error("engine_options['interactions']", _OWNER, "a bool",
                                        defaults["interactions"]))
    return defaults


def _categorical_columns(df: pd.DataFrame, evidence: tuple[str, ...],
                         categorical: Any) -> tuple[str, ...]:
    """The evidence columns to model as categories: ``'auto'`` takes every column whose
    dtype is not floating point (integers, booleans, strings, categories)."""
    if isinstance(categorical, str):
        if categorical != "auto":
            raise ValueError(param_error("categorical", _OWNER, "'auto' or a sequence of "
                                         "evidence column names", categorical))
        return tuple(c for c in evidence if not pd.api.types.is_float_dtype(df[c].dtype))
    if not isinstance(categorical, Sequence) or not all(isinstance(c, str)
                                                       for c in categorical):
        raise TypeError(param_error("categorical", _OWNER, "'auto' or a sequence of evidence "
                                    "column names", categorical))
    unknown = [c for c in categorical if c not in evidence]
    if unknown:
        raise ValueError(param_error("categorical", _OWNER, f"names among the evidence "
                                     f"columns {list(evidence)}", unknown))
    return tuple(c for c in evidence if c in categorical)


def _evidence(df: pd.DataFrame, evidence: tuple[str, ...],
              categorical: tuple[str, ...]) -> Evidence:
    n = len(df)
    numeric = [finite_column(df, c, owner=_OWNER) for c in evidence if c not in categorical]
    labels = category_values(df, categorical)  # codes: the labels' ranks in sorted order
    codes = [label_column(labels, c, owner=_OWNER)[0] for c in categorical]
    return Evidence(
        numeric=np.column_stack(numeric) if numeric else np.empty((n, 0)),
        codes=(np.column_stack(codes) if codes else np.empty((n, 0), dtype=np.int64)),
        n_levels=tuple(int(c.max(initial=0)) + 1 for c in codes))


def _leakage_test_iv(data: Any, belief: Any, action: Any, outcome: Any, evidence: Any,
                     categorical: Any, group: Any, n_splits: Any, engine: Any,
                     n_resamples: Any, n_fold_draws: Any, n_permutations: Any, method: Any,
                     k_perm: Any, confidence_level: Any, engine_options: Any,
                     pvalue_engine: Any, rng: RNGLike) -> dict[str, Any]:
    df = as_dataframe(data, owner=_OWNER)
    roles = {"belief": belief, "action": action, "outcome": outcome, "group": group}
    check_column_names(_OWNER, roles)
    evidence = evidence_columns(evidence, _OWNER)
    require_design_columns(df, roles, evidence, _OWNER)
    nonempty(df, owner=_OWNER)
    df = numeric_evidence(df, evidence)
    overlap = set(evidence) & set(roles.values())
    if overlap or len(set(evidence)) != len(evidence):
        raise ValueError(param_error("evidence", _OWNER, "distinct columns other than the "
                                     "belief, action, outcome and group columns", evidence))
    engine = check_choice(engine, "engine", _OWNER, ENGINES)
    if pvalue_engine is None:
        pvalue_engine = engine
    elif not isinstance(pvalue_engine, str) or pvalue_engine not in ENGINES:
        raise ValueError(param_error("pvalue_engine", _OWNER, "None (the p-value of 'engine') "
                                     "or one of 'catboost', 'logistic'", pvalue_engine))
    method = check_choice(method, "method", _OWNER, PVALUE_METHODS)
    n_splits = check_int(n_splits, "n_splits", _OWNER, low=2)
    n_resamples = check_int(n_resamples, "n_resamples", _OWNER, low=1)
    n_fold_draws = check_int(n_fold_draws, "n_fold_draws", _OWNER, low=1)
    n_permutations = check_int(n_permutations, "n_permutations", _OWNER, low=1)
    k_perm = check_int(k_perm, "k_perm", _OWNER, low=1)
    categorical = _categorical_columns(df, evidence, categorical)
    confidence_level = check_float(confidence_level, "confidence_level", _OWNER, low=0.0,
                                   high=1.0, low_open=True, high_open=True)
    options = _engine_options(engine, engine_options)
    if engine == "catboost":  # an extra: fail at the door, naming it (coherence/_extras.py)
        require("catboost", "leakage_test(engine='catboost')")
    elif pvalue_engine == "catboost":
        require("catboost", "leakage_test(pvalue_engine='catboost')")
    gen = check_rng(rng, owner=_OWNER)

    p = probability_column(df, belief, owner=_OWNER)
    y = binary_column(df, outcome, owner=_OWNER)
    a, labels = label_column(df, action, owner=_OWNER, discrete=True)
    groups = group_codes(df, group, owner=_OWNER)
    ev = _evidence(df, evidence, categorical)
    n_groups = int(groups.max()) + 1 if len(groups) else 0
    if len(labels) < 2:
        raise ValueError(f"{_OWNER}: column '{action}' must hold at least two action labels "
                         f"to predict; got {len(labels)} "
                         f"({', '.join(repr(plain_value(v)) for v in labels)}).")
    if n_splits > n_groups:
        raise ValueError(param_error("n_splits", _OWNER, f"<= the number of contexts in column "
                                     f"'{group}' ({n_groups})", n_splits))
    if np.ptp(y) == 0:
        raise ValueError(f"{_OWNER}: column '{outcome}' is constant ({int(y[0])}); the "
                         f"outcome cannot add information.")
    warn_constant_belief(p, belief, _OWNER, "the base model predicts the " + (
        "action from the evidence alone" if evidence else "marginal action frequencies"))
    if n_groups < 20:
        warnings.warn(f"{_OWNER}: only {n_groups} contexts; cross-validated losses and the "
                      f"cluster bootstrap are unreliable below about 20.", SmallSampleWarning,
                      stacklevel=3)
    return {"p": p, "y": y, "a": a, "labels": labels, "groups": groups, "ev": ev,
            "evidence": evidence, "categorical": categorical, "k_perm": k_perm,
            "engine": engine, "pvalue_engine": pvalue_engine, "method": method,
            "n_splits": n_splits, "n_resamples": n_resamples, "n_fold_draws": n_fold_draws,
            "n_permutations": n_permutations, "confidence_level": confidence_level,
            "options": options, "gen": gen,
            "n_groups": n_groups, "action": action, "index": df.index}


def _spread_labels(folds: list[tuple[np.ndarray, np.ndarray]], groups: np.ndarray,
                   a: np.ndarray, n_classes: int) -> list[tuple[np.ndarray, np.ndarray]]:
    """The folds, with every action chosen in two or more contexts in every training part.

    A training part lacks an action when all the contexts choosing it fell in the same
    fold (a rare action, a few contexts). Rarest action first, one of those contexts
    (the smallest) moves to the lightest other fold, until every action chosen in two
    or more contexts is in two folds. Folds that already hold every action in every
    training part come back unchanged. The folds depend on the contexts' actions only
    (never on the outcome), so the permutation null, which refits on the same folds,
    keeps its validity.
    """
    n_splits = len(folds)
    fold = np.empty(len(groups), dtype=np.int64)
    for f, (_, test) in enumerate(folds):
        fold[test] = f
    n_groups = int(groups.max()) + 1
    gfold = np.zeros(n_groups, dtype=np.int64)
    gfold[groups] = fold
    size = np.bincount(groups, minlength=n_groups).astype(np.float64)
    has = np.zeros((n_groups, n_classes), dtype=bool)
    has[groups, a] = True
    for _ in range(n_classes * n_splits):
        moved = False
        for c in np.argsort(has.sum(axis=0), kind="stable"):
            holders = np.flatnonzero(has[:, c])
            if len(holders) < 2 or np.unique(gfold[holders]).size >= 2:
                continue
            g = holders[int(np.argmin(size[holders]))]
            load = np.bincount(gfold, weights=size, minlength=n_splits)
            load[gfold[g]] = np.inf
            gfold[g] = int(np.argmin(load))
            moved = True
        if not moved:
            break
    fold = gfold[groups]
    rows = np.arange(len(groups))
    return [(rows[fold != f], rows[fold == f]) for f in range(n_splits)]


def _training_parts_miss(folds: list[tuple[np.ndarray, np.ndarray]], a: np.ndarray,
                         n_classes: int) -> bool:
    return any(np.bincount(a[train], minlength=n_classes).min() == 0 for train, _ in folds)


def _check_folds(folds: list[tuple[np.ndarray, np.ndarray]], a: np.ndarray,
                 labels: np.ndarray, action: str) -> None:
    n_classes = len(labels)
    for f, (train, _) in enumerate(folds):
        seen = np.bincount(a[train], minlength=n_classes)
        missing = [labels[c] for c in range(n_classes) if seen[c] == 0]
        if missing:
            raise ValueError(
                f"{_OWNER}: action label(s) {', '.join(map(repr, missing))} of column "
                f"'{action}' are absent from the training part of fold {f} (chosen in too "
                f"few contexts to spread over the folds); drop those rows, merge the "
                f"labels, or lower 'n_splits'.")


def _cross_fit(iv: dict[str, Any], engine: str, options: Mapping[str, Any],
               fold_rng: np.random.Generator, seeds: np.ndarray
               ) -> tuple[list[tuple[np.ndarray, np.ndarray]], list[np.ndarray], np.ndarray,
                          np.ndarray]:
    """One cross-fitting: the folds drawn from ``fold_rng`` (a rare action spread), the
    base designs and the per-row out-of-fold losses of the base and the full model."""
    p, y, a, groups, ev = iv["p"], iv["y"], iv["a"], iv["groups"], iv["ev"]
    n_classes = len(iv["labels"])
    folds = grouped_folds(groups, iv["n_splits"], fold_rng)
    if _training_parts_miss(folds, a, n_classes):  # a rare action all in one fold
        folds = _spread_labels(folds, groups, a, n_classes)
    _check_folds(folds, a, iv["labels"], iv["action"])
    designs = base_designs(engine, p, ev, folds, options)
    loss_base = oof_losses(engine, designs, p, ev, None, a, groups, folds, n_classes,
                            options, seeds[0])
    loss_full = oof_losses(engine, designs, p, ev, y, a, groups, folds, n_classes, options,
                            seeds[1])
    return folds, designs, loss_base, loss_full


def _fold_draws(iv: dict[str, Any], engine: str, options: Mapping[str, Any],
                first: tuple[float, np.ndarray, np.ndarray], gen: np.random.Generator
                ) -> tuple[float, float]:
    """(standard deviation of the statistic, between-context variance) over
    ``n_fold_draws`` fold assignments: ``first`` (the statistic and its per-context loss
    sums) and ``n_fold_draws - 1`` fresh cross-fittings drawn from ``gen``."""
    groups, n_groups = iv["groups"], iv["n_groups"]
    values, sums_base, sums_full = [first[0]], [first[1]], [first[2]]
    for child in gen.spawn(iv["n_fold_draws"] - 1):
        seeds = child.integers(0, 2**31 - 1, size=(2, iv["n_splits"]))
        _, _, loss_base, loss_full = _cross_fit(iv, engine, options, child, seeds)
        values.append(improvement(float(loss_base.mean()), float(loss_full.mean())))
        sums_base.append(np.bincount(groups, weights=loss_base, minlength=n_groups))
        sums_full.append(np.bincount(groups, weights=loss_full, minlength=n_groups))
    if len(values) < 2:
        return 0.0, 0.0
    return (float(np.std(values, ddof=1)),
            between_context_fold_variance(np.array(sums_base), np.array(sums_full)))


def _paired_pvalue(d: np.ndarray) -> float:
    """``method='paired'``: the one-sided t-test of the contexts' loss differences ``d``.

    Differences all equal (up to rounding) leave the t statistic undefined (sd 0); its
    limit, p = 0 for a positive difference, would claim certainty from a handful of
    contexts. Then the p-value is the exact sign-flip one, ``2 ** -G`` for G contexts
    (the smallest any test of differences symmetric under the null can give), with a
    warning; a difference of 0 or below gives 1.
    """
    scale = float(np.max(np.abs(d)))
    if np.ptp(d) > 1e-12 * scale:
        return float(stats.ttest_1samp(d, 0.0, alternative="greater").pvalue)
    if float(np.mean(d)) <= 0.0:
        return 1.0
    pvalue = 0.5 ** len(d)
    warnings.warn(f"{_OWNER}(method='paired'): every context's loss difference is the same "
                  f"({float(np.mean(d)):.6g}), so the t statistic is undefined (sd 0); the "
                  f"p-value is the exact sign-flip one of the {len(d)} contexts, 2^-{len(d)} "
                  f"= {pvalue:.3g}, not 0. method='permutation' gives a calibrated p-value.",
                  DegenerateDataWarning, stacklevel=4)
    return pvalue


def _run_engine(iv: dict[str, Any], engine: str, options: Mapping[str, Any],
                gen: np.random.Generator, with_pvalue: bool) -> dict[str, Any]:
    """The statistic, interval and (``with_pvalue``) p-value of one engine on validated
    inputs ``iv``, drawing the folds, seeds, bootstrap and permutations from ``gen``."""
    p, y, a, groups, ev = iv["p"], iv["y"], iv["a"], iv["groups"], iv["ev"]
    n_classes, n_groups = len(iv["labels"]), iv["n_groups"]
    fold_rng, boot_rng, perm_rng = gen.spawn(3)
    seeds = gen.integers(0, 2**31 - 1, size=(2, iv["n_splits"]))
    folds, designs, loss_base, loss_full = _cross_fit(iv, engine, options, fold_rng, seeds)
    ll_base, ll_full = float(loss_base.mean()), float(loss_full.mean())
    statistic = improvement(ll_base, ll_full)

    # cluster bootstrap of the statistic from per-context loss sums (no refits), widened
    # by the part of the statistic's variance over fresh fold assignments that the
    # bootstrap cannot see (drawn after every other draw, so the statistic, the
    # bootstrap and the p-value are those of n_fold_draws=1)
    sum_base = np.bincount(groups, weights=loss_base, minlength=n_groups)
    sum_full = np.bincount(groups, weights=loss_full, minlength=n_groups)
    draws = cluster_draws(n_groups, iv["n_resamples"], boot_rng)
    boot = np.array([improvement(sb, sf) for sb, sf in
                     zip(sum_base[draws].sum(axis=1), sum_full[draws].sum(axis=1), strict=True)])
    fold_sd, fold_variance = _fold_draws(iv, engine, options,
                                         (statistic, sum_base, sum_full), gen)
    low, high = widened_interval(statistic, boot, fold_variance, iv["confidence_level"])

    out: dict[str, Any] = {"statistic": statistic, "low": low, "high": high,
                           "fold_sd": fold_sd,
                           "ll_base": ll_base, "ll_full": ll_full, "loss_base": loss_base,
                           "loss_full": loss_full, "boot": boot}
    if not with_pvalue:
        return out
    if iv["method"] == "paired":
        pvalue = _paired_pvalue(sum_base - sum_full)
        null = np.empty(0)
        n_perm = 0
        permute = "none"
    else:
        n_perm = iv["n_permutations"]
        permute, y_unit, block = permutation_blocks(p, ev, y, groups, iv["k_perm"])
        # all draws first, in the order of the earlier one-at-a-time loop (same stream)
        y_perms = np.empty((n_perm, len(y)), dtype=np.int8)
        done = 0
        for perms in permutations_within(block, perm_rng, n_perm):
            y_perm = y_unit[perms]
            y_perms[done:done + len(perms)] = y_perm[:, groups] if permute == "outcomes" else y_perm
            done += len(perms)

        def reference(b: int) -> float:
            lf = oof_losses(engine, designs, p, ev, y_perms[b].astype(np.int64), a, groups,
                             folds, n_classes, options, seeds[1])
            return improvement(ll_base, float(lf.mean()))

        if engine == "logistic" and FAST_REFITS:
            null = fast_logistic_null(designs, p, y, y_perms, a, folds, n_classes, options,
                                       ll_base, statistic, reference, ev.stratum)
        else:
            null = np.array([reference(b) for b in range(n_perm)], dtype=np.float64)
        units = "contexts" if permute == "outcomes" else "rows"
        sizes = np.bincount(block)
        lone = sizes.max(initial=0) < 2
        # 0 also where every block's units share their outcome: nothing moves there
        if varied_units(np.r_[0, np.cumsum(sizes)], np.argsort(block, kind="stable"),
                        y_unit) == 0:
            why = (f"no two {units} share a permutation block (each is alone in its "
                   "evidence stratum)" if lone else "no permutation changes the data (the "
                   f"{units} of each permutation block share their outcome)")
            warnings.warn(f"{_OWNER}: no valid permutation test exists for these data: {why}. "
                          "The p-value is NaN; coarser evidence or more contexts per stratum "
                          "are needed.", DegenerateDataWarning, stacklevel=3)
            pvalue = math.nan
        else:
            pvalue = monte_carlo_pvalue(null, statistic)
            if permute == "rows":
                warnings.warn(f"{_OWNER}: the outcome varies within contexts, so single "
                              "outcomes were permuted among rows matched on their values "
                              "(the result's permute is 'rows'), which treats the rows as "
                              "exchangeable; the p-value is not valid if the rows of a "
                              "context share anything beyond those values (a context-level "
                              "shock, one conversation).", SmallSampleWarning, stacklevel=3)

    out.update(pvalue=float(pvalue), null=null, n_perm=n_perm, permute=permute)
    return out


# --------------------------------------------------------------------------- public layer
def leakage_test(
    data: Any,
    *,
    belief: str = "belief",
    action: str = "action",
    outcome: str = "outcome",
    evidence: Sequence[str] = (),
    categorical: Literal["auto"] | Sequence[str] = "auto",
    group: str = "context",
    n_splits: int = 5,
    engine: Literal["catboost", "logistic"] = "logistic",
    pvalue_engine: Literal["catboost", "logistic"] | None = None,
    n_resamples: int = 500,
    n_fold_draws: int = 5,
    method: Literal["permutation", "paired"] = "permutation",
    n_permutations: int = 199,
    k_perm: int = 5,
    confidence_level: float = 0.95,
    engine_options: Mapping[str, Any] | None = None,
    rng: RNGLike = None,
) -> LeakageResult:
    r"""How much does the outcome improve the prediction of the action beyond the belief?

    An agent that acts on its stated belief gives the outcome nothing to add: once the
    belief (and the evidence) is known, the realised outcome should not help predict the
    action. The test predicts the action with and without the outcome, compares the
    out-of-fold log-losses, and tests the reduction by permuting the outcome among
    contexts matched on belief and evidence (or by a paired t-test,
    ``method='paired'``).

    Parameters
    ----------
    data : pandas.DataFrame or convertible
        The belief/action table, one row per elicitation.
    belief, action, outcome, group : str
        Columns: the stated probability in [0, 1], the action label (two or
        more labels), the 0/1 outcome and the context (the unit of
        cross-validation, bootstrap and permutation).
    evidence : sequence of str
        Evidence columns added to both models (the paper's "with x" variant);
        empty for the belief-only variant. Numeric or categorical (see
        ``categorical``).
    categorical : 'auto' or sequence of str
        The evidence columns modelled as categories: one-hot coded (a column for every
        level, none dropped, so that the penalised fit does not depend on the labels;
        interacted with the belief splines) by the logistic engine, native
        ``cat_features`` of catboost, and matched exactly by the permutation. ``'auto'``
        (default): every evidence column not of floats (Python floats in an object column
        count), so strings, booleans, categories *and integer codes* are categories (codes
        such as an age group or an ECG flag are labels, not quantities; the rule is
        :func:`ci_test`'s). Give a list to choose: listed columns are categories, the
        others must be numeric (``categorical=[]`` treats an integer count as a number).
        The coding changes the statistic and the p-value, not only the model's reading:
        a 0/1 column as a number or as a category differed by a median 0.03 in ``pvalue``
        (max 0.24) on 100 null studies of 100 contexts (docs/leakage.md); choose it
        before looking at the result.
    n_splits : int
        Folds of the grouped K-fold cross-validation (contexts never straddle folds).
    engine : {'logistic', 'catboost'}
        ``'logistic'`` (default, seconds): a multinomial logistic
        regression on cubic splines of the belief (5 quantile knots),
        one-hot categorical and standardised numeric evidence, their
        products with the splines and, in the full model, ``y`` and
        ``y * (p - 1/2)``. ``'catboost'``, **the reference paper's setting**
        (minutes: a CatBoost refit per fold and permutation):
        gradient-boosted trees with the paper's settings (depth 6, up to 1000
        iterations, early stopping on an inner grouped split of one fifth of
        the training contexts), categorical evidence as ``cat_features``;
        catboost is an optional dependency, installed by the extra
        ``belief-coherence[catboost]`` (a ``ModuleNotFoundError`` naming it
        when it is missing). ``engine='catboost', pvalue_engine='logistic'``
        gives the paper's estimate with the logistic p-value.
    pvalue_engine : {None, 'catboost', 'logistic'}
        The engine of the p-value. None (default): ``engine``, as in the paper.
        Another engine: ``statistic``, ``confidence_interval`` and the losses
        stay ``engine``'s, while ``pvalue`` and ``null_distribution`` are those of
        ``leakage_test(..., engine=pvalue_engine)`` with the same arguments and
        ``rng`` (that engine's default ``engine_options``). The affordable
        CatBoost analysis is ``engine='catboost', pvalue_engine='logistic'``:
        the paper's CatBoost estimate with the logistic permutation p-value
        (seconds instead of a CatBoost refit per fold and permutation); both
        test :math:`a \perp y \mid (p, x)`, and the p-value's validity is the
        logistic test's. Recorded as ``pvalue_engine``.
    n_resamples : int
        Cluster-bootstrap resamples of the confidence interval.
    n_fold_draws : int
        Fold assignments over which the interval estimates the part of the
        statistic's fold variance the bootstrap cannot see: the statistic's
        own and ``n_fold_draws - 1`` fresh cross-fittings of both models
        (default 5: eight more fits per fold; no permutations). ``1`` gives
        the plain bootstrap interval, which holds the folds fixed and
        under-covers (see Notes). The statistic and the p-value are the same
        whatever this number.
    method : {'permutation', 'paired'}
        How the p-value is computed. ``'permutation'`` (default, calibrated):
        each context's outcome is permuted among contexts matched on their
        belief and evidence (the actions never move) and the full model
        refitted ``n_permutations`` times. ``'paired'``: a one-sided t-test
        of the per-context sums of the out-of-fold loss differences (no
        refits; conservative, see Notes).
    n_permutations : int
        Permutations for ``method='permutation'``; each refits the full model
        in every fold (the base model does not depend on the outcome).
    k_perm : int
        The smallest block merged from contexts alone in their belief and
        evidence values; tied contexts are exact blocks (see Notes).
    confidence_level : float
        Level of the bootstrap interval.
    engine_options : mapping, optional
        catboost: ``depth`` (6), ``iterations`` (1000), ``thread_count`` (1),
        ``early_stopping`` (True), ``learning_rate`` (None: catboost's
        default). logistic: ``n_knots`` (5), ``C`` (1.0, inverse L2
        penalty).
    rng : int, numpy.random.Generator or None
        Fixes the folds, the engines' seeds, the bootstrap, the fold draws of
        the interval and the permutations.

    Returns
    -------
    LeakageResult
        ``statistic`` the relative reduction (%) of the out-of-fold log-loss when the
        outcome is added, ``pvalue`` the one-sided p-value of no reduction,
        ``confidence_interval`` its cluster-bootstrap interval; the per-row losses in
        ``loss_base`` and ``loss_full``.

    Raises
    ------
    ValueError
        If an action label is absent from the training part of a fold (name
        of the label and fold given), fewer than two action labels exist, the
        outcome is constant, or ``n_splits`` exceeds the number of contexts.

    Warns
    -----
    DegenerateDataWarning
        For a constant belief (the base model then predicts the marginal
        action frequencies, or the action from the evidence alone; the test still
        runs), for ``method='paired'`` when every context's loss difference is the
        same (see Notes), and when no permutation test exists (no two contexts share
        a permutation block, or those of each block share their outcome, so that every
        permuted copy is the data): the p-value is then NaN.
    SmallSampleWarning
        For fewer than 20 contexts, and when the outcome varies within contexts: the
        permutation then moves single outcomes among rows (``permute='rows'``), which
        treats the rows as exchangeable (not valid if they share a context-level shock).

    See Also
    --------
    ci_test : the same null, tested by a kNN conditional mutual information.
    monotonicity_test : whether choice shares are monotone in the belief.
    prompt_consistency : whether the belief moves with the wording.
    report : every test on every cell of a table.

    Notes
    -----
    With out-of-fold predicted probabilities :math:`\hat P_{base}(a_i)` from
    a model of the action given :math:`(p, x)` and :math:`\hat P_{full}(a_i)`
    given :math:`(p, x, y)`, the mean log-losses are
    :math:`LL_m = -\frac1n \sum_i \log \hat P_m(a_i)` (probabilities floored
    at :math:`10^{-12}`) and the statistic is

    .. math:: S = 100 \, \frac{LL_{base} - LL_{full}}{LL_{base}} .

    :math:`S > 0` means the outcome leaks into the action beyond what the
    stated belief carries; a rational agent gives :math:`S \le 0` up to noise
    (the full model pays for its useless extra input). The interval resamples
    contexts with replacement and recomputes :math:`S` from the fixed
    out-of-fold losses (no refits), so it reflects the sampling of contexts
    but not the random folds: :math:`S` moves with the fold assignment too
    (its standard deviation over fold draws, ``fold_sd``, is often more
    than half the bootstrap's on the validation's null designs). The
    bootstrap sees the part of that noise that is each context's own (it
    resamples the contexts' values, noise and all) but not the covariance
    between contexts that share a fold's fitted model. So the interval adds that part: over
    ``n_fold_draws`` fold assignments, with context :math:`g` contributing
    :math:`\psi_g = 100 (\bar F \ell^{base}_g / \bar B - \ell^{full}_g) / \bar B`
    (per-context loss sums, linearised at the draws' mean totals
    :math:`\bar B, \bar F`), it estimates
    :math:`v = \max(0, \operatorname{var} \sum_g \psi_g - \sum_g
    \operatorname{var} \psi_g)` and moves each end of the percentile interval,
    at distance :math:`h` from :math:`S`, to :math:`\sqrt{h^2 + z^2 v}`
    (:math:`z` the normal quantile of the level). The plain bootstrap interval
    covered :math:`E[S]` 0.899 of the time on the rare-outcome design of the
    validation, this one 0.935, and adding all of the fold variance
    over-covers (up to 0.993). Under a strong leak the fitted models' own
    sampling variability, which no bootstrap without refits sees, leaves the
    interval short (0.870); see docs/leakage.md. The interval is an interval of
    :math:`E[S]`, negative under the null, not the inversion of the permutation test,
    and the two can disagree: on 10 studies of
    ``simulate(Agent.leaky(strength=0.3), n_contexts=100)`` with the defaults, 6
    intervals held 0 while ``pvalue`` was at most 0.05 ((-1.27, 5.52) with 0.01), and
    another gave (-2.12, -0.01), wholly below 0, with 0.855. Test with ``pvalue``; the
    interval sizes the leak. The same data with beliefs :math:`1 - b` and the outcome
    relabelled (the same null) give another statistic and another p-value, not the same
    figures: the logistic engine's L2 penalty does not treat the full model's ``y`` and
    ``y (p - 1/2)`` and their mirrors alike (with ``engine_options={'C': 1e8}`` the
    statistic and the p-value of the two agreed on a leaky study, -1.308 both). On 30
    null studies of ``simulate('rational', n_contexts=100)`` the statistic moved by 0.39
    on average (at most 1.46) and ``pvalue`` by 0.20 (at most 0.575, 0.34 against
    0.915); on the 10 leaky ones by 0.32 and 0.034 (at most 0.265, 0.29 against 0.025).
    Both orientations are valid tests (the validity is the blocks', not the fit's; 2 and
    3 of the 30 nulls rejected at 0.05); choose one before looking at the result.

    The permutation p-value is :math:`(1 + \#\{S^*_b \ge S\}) / (1 + B)`,
    where :math:`S^*_b` refits the full model after permuting each context's
    outcome among contexts matched on their categorical evidence (exactly)
    and their mean belief and numeric evidence: contexts tied in these values
    are exact blocks, and contexts alone in their values are merged with
    adjacent lone contexts, in that order, into blocks of at least ``k_perm``;
    the actions, folds and base model never move (merging ties with their
    neighbours too rejected 0.083 of small null studies; docs/leakage.md).
    When the categorical evidence varies within contexts, contexts are matched
    on their belief level after removing the evidence effects; when the outcome
    varies within a context, single outcomes are permuted among rows matched
    the same way. Under
    :math:`a \perp y \mid (p, x)` with independent contexts, outcomes of
    contexts with equal :math:`(p, x)` are exchangeable whatever the
    dependence of the repetitions inside a context, so the test is exact for
    exact matches, and approximate (close matches) otherwise. A base model
    that cannot represent how the action depends on :math:`(p, x)` lowers
    the power but not the validity: the observed and the permuted statistics
    pay for it alike. When no block holds two units the p-value is NaN
    (``DegenerateDataWarning``).
    The paired p-value is the one-sided one-sample t-test of
    :math:`D_g = \sum_{i \in g} (\ell^{base}_i - \ell^{full}_i)` over
    contexts :math:`g`; because the full model over-fits a useless input
    under the null, :math:`E[D_g] < 0` and this test is conservative. When every
    :math:`D_g` is the same the t statistic is undefined (sd 0); a positive
    difference then gets the exact sign-flip p-value :math:`2^{-G}` of the
    :math:`G` contexts, not the t-test's limit 0 (``DegenerateDataWarning``).

    References
    ----------
    The decision-coherence paper (design notes, docs/design.md, method 1): leakage size
    with grouped cross-validation and CatBoost, "% Impr".

    Prokhorenkova, L. et al. (2018). CatBoost: unbiased boosting with
    categorical features. NeurIPS.

    Good, P. (2005). Permutation, Parametric and Bootstrap Tests of
    Hypotheses, 3rd ed. Springer. (Restricted permutations within strata.)

    Examples
    --------
    >>> import coherence
    >>> study = coherence.simulate("leaky", n_contexts=100, rng=0)
    >>> res = coherence.leakage_test(study.data, n_permutations=19, rng=0)
    >>> bool(res.statistic > 2), bool(res.pvalue <= 0.05)
    (True, True)
    """
    iv = _leakage_test_iv(data, belief, action, outcome, evidence, categorical, group,
                          n_splits, engine, n_resamples, n_fold_draws, n_permutations, method,
                          k_perm, confidence_level, engine_options, pvalue_engine, rng)
    gen: np.random.Generator = iv["gen"]
    engine, pvalue_engine = iv["engine"], iv["pvalue_engine"]
    if pvalue_engine == engine:
        res = pv = _run_engine(iv, engine, iv["options"], gen, with_pvalue=True)
    else:
        # the p-value engine's run draws from a copy of the generator as it is now, so
        # its p-value is leakage_test(engine=pvalue_engine)'s with the same rng
        pv_gen = copy.deepcopy(gen)
        res = _run_engine(iv, engine, iv["options"], gen, with_pvalue=False)
        pv = _run_engine(iv, pvalue_engine, _engine_options(pvalue_engine, None), pv_gen,
                         with_pvalue=True)
    return LeakageResult(
        statistic=res["statistic"], pvalue=pv["pvalue"],
        confidence_interval=ConfidenceInterval(res["low"], res["high"], iv["confidence_level"]),
        n_obs=len(iv["a"]), method=iv["method"], engine=engine, pvalue_engine=pvalue_engine,
        n_splits=iv["n_splits"], n_resamples=iv["n_resamples"],
        n_fold_draws=iv["n_fold_draws"], fold_sd=res["fold_sd"], n_permutations=pv["n_perm"],
        evidence=iv["evidence"], categorical=iv["categorical"], permute=pv["permute"],
        k_perm=iv["k_perm"], n_contexts=iv["n_groups"], log_loss_base=res["ll_base"],
        log_loss_full=res["ll_full"], loss_base=res["loss_base"], loss_full=res["loss_full"],
        bootstrap_distribution=res["boot"], null_distribution=pv["null"],
        table=pd.DataFrame(index=iv["index"]),
    )
