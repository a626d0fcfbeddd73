"""Conditional-independence test of action and outcome given the stated belief.

Public: :func:`ci_test` and its result :class:`CITestResult`.
"""

from __future__ import annotations

import functools
import warnings
from collections.abc import Callable
from collections.abc import Sequence
from typing import Any

import numpy as np

from .._resampling import MC_TIE_RTOL
from .._resampling import cluster_draws
from .._resampling import cluster_resample_rows
from .._resampling import grouped_folds
from .._resampling import monte_carlo_pvalue
from .._resampling import percentile_interval
from .._results import ConfidenceInterval
from .._rng import RNGLike
from .._rng import kernel_seeds
from .._validation import param_error
from .._warnings import DegenerateDataWarning
from .._warnings import NotCalibratedWarning
from .._warnings import SmallSampleWarning
from ._citest_input import Design
from ._citest_input import ci_test_inputs
from ._citest_knn import estimates_on
from ._citest_knn import model_bias
from ._citest_knn import outcome_null
from ._citest_knn import permutation_null
from ._citest_regression import permutation_statistic
from ._citest_regression import resolve_statistic
from ._citest_result import CITestResult
from ._cmi import Prepared
from ._cmi import estimate
from ._design import check_resolution
from ._permutation import block_layout
from ._permutation import outcome_units
from ._permutation import unit_keys
from ._permutation import units_and_blocks
from ._permutation import varied_units

__all__ = ["CITestResult", "ci_test"]

_OWNER = "ci_test"
#: Parametric-bootstrap replicates used to estimate the estimator's bias (ci_method="debiased").
_BIAS_REPLICATES = 200
#: half-samples on which the debiased interval refits its bias model (float evidence)
_SPREAD_HALVES = 30


# --------------------------------------------------------------------------- pieces
def _canonical_order(design: Design) -> Design:
    """The design's rows in a canonical order (context, then the row's values).

    Every random draw below (fold assignment, simulated studies, resamples)
    goes row by row or context by context, so sorting first makes the result
    for a given ``rng`` independent of the order of the input rows.
    """
    keys = [design.ev_cont[:, j] for j in range(design.ev_cont.shape[1] - 1, -1, -1)]
    keys += [design.ev_disc, design.action, design.outcome, design.belief, design.groups]
    order = np.lexsort(keys)
    return Design(design.action[order], design.outcome[order], design.belief[order],
                   design.groups[order], design.ev_disc[order], design.ev_cont[order],
                   design.outcome_binary)


def _context_mean(values: np.ndarray, groups: np.ndarray) -> np.ndarray:
    sums = np.bincount(groups, weights=values)
    counts = np.bincount(groups)
    return (sums / counts)[groups]


def _cross_fitted_isotonic(belief: np.ndarray, outcome: np.ndarray, groups: np.ndarray,
                           rng: np.random.Generator, n_splits: int = 5) -> np.ndarray:
    """Isotonic regression of the outcome on the belief, fitted out of fold by context."""
    from sklearn.isotonic import IsotonicRegression

    n_groups = int(groups.max()) + 1
    out = np.empty_like(belief)
    for train, test in grouped_folds(groups, min(n_splits, n_groups), rng):
        model = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip")
        model.fit(belief[train], outcome[train].astype(np.float64))
        out[test] = model.predict(belief[test])
    return out


def _constant_within(values: np.ndarray, groups: np.ndarray) -> bool:
    if values.ndim == 1:
        values = values[:, None]
    order = np.argsort(groups, kind="stable")
    g = groups[order]
    v = values[order]
    same_group = g[1:] == g[:-1]
    return bool(np.all(np.all(v[1:] == v[:-1], axis=1) | ~same_group))


def _tie_codes(cond: np.ndarray, groups: np.ndarray
               ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each row's code of its conditioning values, the rows per value, and each row's
    code of its (values, context) pair: the tie groups of the neighbour designs."""
    _, value_code = np.unique(cond, axis=0, return_inverse=True)
    value_code = value_code.ravel()
    rows_per_value = np.bincount(value_code)
    _, pair_code = np.unique(np.column_stack([value_code, groups]), axis=0,
                             return_inverse=True)
    return value_code, rows_per_value, pair_code.ravel()


def _auto_k(cond: np.ndarray, groups: np.ndarray) -> int:
    """The design's k: 3 unless a row's tied rows come mostly from its own context.

    When, on average, more than a quarter of the rows that share a row's
    conditioning values are its own context's repetitions (continuous beliefs
    or fine grids, constant within a context), a small k finds only the row's
    own context, whose rows share its outcome, and the estimate has no power;
    k then grows to reach other contexts: ``max(3, 2 m, round(0.6 sqrt(n)))``
    with ``m`` the mean size of a row's own tie group (validation_ci.md).
    """
    n = len(groups)
    value_code, rows_per_value, pair_code = _tie_codes(cond, groups)
    own = np.bincount(pair_code)[pair_code]
    share = float(np.mean((own - 1) / np.maximum(rows_per_value[value_code] - 1, 1)))
    if own.max() < 2 or share <= 0.25:
        return min(3, n - 1)
    k = max(3, int(np.ceil(2 * float(np.mean(own)))), round(0.6 * np.sqrt(n)))
    return int(min(k, n - 1))


def _warn_undefined(statistic: float, stacklevel: int = 4) -> None:
    warnings.warn("ci_test: the estimate is undefined (no row has a neighbour with its "
                  "discrete values, e.g. every row alone in its evidence stratum); the "
                  "statistic and the interval are NaN.", DegenerateDataWarning,
                  stacklevel=stacklevel)


def _warn_one_context(group: str | None) -> None:
    warnings.warn(
        f"ci_test: the data hold one context (column {group!r}), so no context can "
        "move: the p-value permutes single rows, which treats the rows as "
        "exchangeable (independent given their conditioning values); it is not "
        "valid if the rows share anything beyond them (a context-level shock, one "
        "conversation). Give more contexts, or group=None if each row is its own.",
        SmallSampleWarning, stacklevel=4)


def _warn_rows_fallback(group: str | None, n_groups: int) -> None:
    """``permute='auto'`` fell back to single rows with several contexts: the outcome and
    the conditioning values vary within contexts, so neither can move as a whole."""
    warnings.warn(
        f"ci_test: the outcome and the conditioning values vary within the {n_groups} "
        f"contexts (column {group!r}), so neither a context's outcome nor its actions can "
        "move as a whole: permute='auto' fell back to permuting single rows (the result's "
        "permute is 'rows'), which treats the rows as exchangeable (independent given their "
        "conditioning values); the p-value is not valid if the rows of a context share "
        "anything beyond them (a context-level shock, one conversation). "
        "condition_on='context_mean' lets whole contexts move; permute='rows' states "
        "that the rows are exchangeable.", SmallSampleWarning, stacklevel=4)


def _warn_if_neighbours_within_contexts(z_cont: np.ndarray, ev_disc: np.ndarray,
                                        groups: np.ndarray, k: int) -> None:
    """Warn when a row's tied rows come mostly from its own context and k is small.

    Then the k nearest neighbours of a row are mostly the other repetitions of
    its own context, which share its outcome, so the estimate is pulled
    towards I(action ; outcome | context) = 0 (measured in docs/validation_ci.md).
    """
    sizes = np.bincount(groups)
    if k >= sizes.max() or sizes.max() < 2:
        return
    cond = np.column_stack([ev_disc.astype(np.float64), z_cont])
    value_code, rows_per_value, pair_code = _tie_codes(cond, groups)
    if rows_per_value.max() < 2:  # no row shares its values with another: no neighbours
        return
    own = np.bincount(pair_code)[pair_code]
    own_share = float(np.mean((own - 1) / np.maximum(rows_per_value[value_code] - 1, 1)))
    if own_share > 0.25:
        warnings.warn(
            f"ci_test: on average {100 * own_share:.0f}% of the rows that share a row's "
            f"conditioning values come from its own context, and k = {k} is smaller than the "
            f"repetitions per context ({sizes.max()}): the nearest neighbours are mostly the "
            "row's own context, which shares its outcome, so the estimate and its interval "
            f"are biased towards 0{' (the p-value stays valid)' if len(sizes) > 1 else ''}. "
            "Use k larger than the "
            "repetitions per context, or coarser beliefs.",
            SmallSampleWarning, stacklevel=4)


# --------------------------------------------------------------------------- public
def ci_test(
    data: Any,
    *,
    belief: str = "belief",
    action: str = "action",
    outcome: str = "outcome",
    evidence: Sequence[str] = (),
    group: str | None = "context",
    k: int | str = "auto",
    method: str = "permutation",
    n_resamples: int = 1000,
    confidence_level: float = 0.95,
    calibrate: bool | str = False,
    condition_on: str = "row",
    permute: str | None = None,
    k_perm: int | None = None,
    ci_method: str | None = "auto",
    resolution: float | None = 1e-6,
    test_statistic: str | None = None,
    rng: RNGLike = None,
) -> CITestResult:
    r"""Test whether the action is independent of the outcome given the belief.

    The statistic is the kNN estimate (:func:`coherence.cmi`) of
    I(action ; outcome | belief [, evidence]) in nats, with its interval. The
    p-value comes from a conditional (local) permutation test, which has the
    right size; by default its test statistic is the plug-in CMI over strata of
    the belief, which detects a leak of the outcome into the action at the
    papers' study sizes far more often than the kNN estimate does
    (``test_statistic``).

    Parameters
    ----------
    data : pandas.DataFrame or convertible
        The belief/action table, one row per elicitation.
    belief, action, outcome : str
        Columns of the stated probability (in [0, 1]), of the action (any
        labels) and of the true state (any labels; with ``calibrate`` set, 0/1 or
        bool, 1 the event whose probability the belief states: other labels raise
        ``ValueError`` naming the rows).
        Labels are classes: a column of non-integer numbers (a continuous
        measurement) raises ``ValueError`` rather than count as one class per
        value.
    evidence : sequence of str
        Extra conditioning columns (the "with x" variant), other than the belief,
        action, outcome and group columns (``ValueError``). Float columns (Python
        floats held in an object column too) are continuous, all others discrete;
        a float column holding one value conditions on nothing and is read as one
        class (the result is the one without it).
        A continuous column enters by its
        ranks scaled to (0, 1] (its empirical distribution function), so its
        unit of measurement, or any increasing transformation of it, changes
        nothing; the kNN statistic's permutation blocks match on every
        conditioning value.
    group : str or None
        Column of the context: the unit that is resampled and whose rows move
        together. ``None``: every row is its own context (numbered by the rows' values,
        so the result does not depend on their order). Ids that read the same but
        compare unequal (``1`` and ``'1'``, ``'a'`` and ``'A '``) raise ``ValueError``,
        as in the action, outcome and evidence columns.
    k : int or 'auto'
        Neighbours of the CMI estimator. ``'auto'`` (default) keeps the
        reference paper's k = 3 unless a row's tied conditioning values come
        mostly from its own context (beliefs continuous or on a fine grid and
        constant within a context); then a small k finds only the row's own
        repetitions, which share its outcome, and the estimate has no power,
        so k grows to ``max(3, 2 m, round(0.6 sqrt(n)))`` with ``m`` the mean
        number of a row's tied repetitions (docs/validation_ci.md). ``k=3``
        is the paper's estimator.
    method : {'permutation', 'bootstrap'}
        ``'permutation'`` (default): conditional permutation p-value.
        ``'bootstrap'``: the reference paper's procedure, a cluster-bootstrap
        percentile interval and no p-value (NaN); kept for comparability, it
        is **not** a calibrated test (see Notes) and emits
        :class:`~coherence.NotCalibratedWarning`.
    n_resamples : int
        Number of permutations, and of CI resamples (the paper used 500
        bootstrap resamples).
    confidence_level : float
        Level of the confidence interval.
    calibrate : bool or {'cross-fitted', 'in-sample'}
        Replace the belief by its isotonic regression on the outcome
        (:class:`sklearn.isotonic.IsotonicRegression`) before conditioning:
        ``True`` or ``'cross-fitted'``, fitted over 5 context folds and read out of
        fold (our default, no row's own outcome shapes its conditioning value; one
        context raises ``ValueError``);
        ``'in-sample'``, fitted and read on every row, as the decision-coherence
        paper's calibration reads (for reproducing it). The result's ``calibrate``
        records which (``False``, ``'cross-fitted'`` or ``'in-sample'``). The
        calibration changes the estimate and its interval; the p-value's
        permutation blocks and plug-in strata stay on the stated belief, which
        no outcome shapes: calibration is monotone, so the null and the order of
        the strata are the same, while its ties (many stated beliefs mapped to
        one value) would make a coherent agent look leaky (0.11-0.18 of
        coherent studies rejected when the blocks and strata took them).
    condition_on : {'row', 'context_mean'}
        Condition on each row's belief (default) or on the mean belief of its
        context (see Notes on when each is right).
    permute : {'auto', 'outcomes', 'contexts', 'rows'} or None
        What the permutation moves (default ``None``: ``'auto'`` for
        ``method='permutation'``; not used by ``method='bootstrap'``, where
        passing it raises ``ValueError``, as for ``k_perm``, ``test_statistic``
        and ``ci_method`` below). ``'outcomes'``: the outcome of each
        context (shared by its repetitions) is shuffled among contexts
        matched on their conditioning values; the actions never move, so any
        dependence among the repetitions of a context (a context-level quirk,
        beliefs sampled per repetition, unequal repetitions) is kept intact.
        Requires the outcome to be constant within every context.
        ``'contexts'``: the actions of a whole context move onto another
        context of the same size and conditioning values (conditioning
        constant within every context). ``'rows'``: single actions move among
        rows with tied conditioning values. ``'auto'`` (default): outcomes
        when the outcome is constant within every context, else contexts when
        possible, else rows (with a warning: see Warns).
    k_perm : int or None
        Default ``None``: 3 for ``method='permutation'``; not used by
        ``method='bootstrap'``. Minimum number of units in a permutation block: units with tied
        conditioning values form a block; runs with fewer than ``k_perm`` units
        are merged with their nearest neighbours in belief order (within the
        same discrete evidence stratum; a unit alone in its stratum never
        moves). With the plug-in test statistic, runs of two or more tied
        units stay blocks of their own and only units alone in their values
        are merged, with each other (the pooled statistic would see what a
        block of distinct beliefs leaves between action and outcome).
    ci_method : {'auto', 'debiased', 'subsampling', 'bootstrap', None}
        Confidence interval of the permutation method (``'auto'``, the default:
        ``'debiased'``; ``method='bootstrap'`` takes only ``'auto'`` or
        ``'bootstrap'``, its one interval). The spread comes from
        half of the contexts drawn without replacement (no duplicated rows):
        the half-sample estimates around their mean. ``'debiased'`` (default)
        centres it on the estimate minus the estimator's bias at the data's
        own dependence, measured by a parametric bootstrap from a fitted model
        (see Notes). ``'subsampling'`` centres it on the estimate minus the
        mean of the permutation null (the bias at CMI = 0, which is too small
        when the CMI is not 0). ``'bootstrap'``: the cluster-bootstrap
        percentile interval (duplicated rows inflate kNN estimates). ``None``:
        no interval (NaN bounds, no resamples drawn), for when only the p-value
        is wanted, for instance with many permutations to resolve a small one.
    test_statistic : {'auto', 'plugin', 'regression', 'combined', 'knn'} or None
        The statistic recomputed on every permuted copy for the p-value (default
        ``None``: ``'auto'`` for ``method='permutation'``; not used by
        ``method='bootstrap'``).
        ``'plugin'``: the plug-in CMI of action and outcome over strata of the
        rows' conditioning values, each stratum a run of tied or neighbouring
        beliefs within a discrete evidence stratum, of about
        :math:`2\sqrt{C_e}` contexts' rows for the :math:`C_e` contexts of that
        evidence stratum (see Notes); with continuous evidence, cells of median
        splits on every value, each spanning about :math:`2/\sqrt{C_e}` of each
        value's ranks (the rows of 4 contexts for one continuous column).
        ``'regression'``: the share of the outcome's least-squares residual
        that the actions' residuals explain (with more than two outcome classes,
        of every class's indicator, summed), both residuals of a basis of the
        conditioning values (splines of each, their cubic cross terms, the
        discrete strata): a leak of one sign pooled over the whole study.
        ``'combined'``: the smaller of the two p-values, calibrated over the
        same permutations (min-p), so that a leak whose sign changes with the
        belief, which the regression pools to little, is still seen by the
        plug-in statistic.
        ``'knn'``: the kNN estimate ``statistic`` itself (the earlier default;
        about half the power at the papers' study size, and 0.585 against 0.940
        with continuous evidence, docs/validation_ci.md).
        ``'auto'`` (default): ``'regression'`` below ``SMALL_STUDY`` (40)
        contexts, where the permutation blocks merge contexts of distant beliefs
        and the plug-in statistic sees the trend they leave (it rejected a true
        null 0.073-0.082 of the time at 15-20 contexts; docs/cmi.md); from 40
        contexts ``'combined'`` with continuous evidence (where the plug-in
        strata are cells of two or more values: 0.690 against 0.785 for a
        stratified competitor on heaped beliefs, the combination ahead of both,
        docs/validation_ci.md), else ``'plugin'``. The result's
        ``test_statistic`` records which was used.
    resolution : float or None
        Beliefs (and continuous evidence) are snapped to integer multiples of
        ``resolution`` before distances are taken, so that beliefs on a decimal
        grid are exactly tied (default 1e-6; ``None`` keeps raw floats). One that
        would merge values 0.001 or more apart (``resolution=2``) raises
        ``ValueError``: it would pool distinct beliefs.
    rng : int, numpy.random.Generator or None
        Source of randomness; the same int gives the same result, whatever the
        number of numba threads.

    Returns
    -------
    CITestResult
        ``statistic`` the kNN estimate of the conditional mutual information in nats
        (never clipped), ``confidence_interval`` its context-resampling interval,
        ``pvalue`` the conditional-permutation p-value of the test statistic
        (NaN for ``method='bootstrap'``), ``test_statistic`` and
        ``test_statistic_value`` which statistic that was and its value,
        ``null_distribution`` its values on the permuted copies.

    Warns
    -----
    NotCalibratedWarning
        For ``method='bootstrap'``.
    SmallSampleWarning
        When, on average, more than 25% of the rows that share a row's
        conditioning values come from its own context and ``k`` is smaller
        than the repetitions per context (fine belief grids, continuous or
        context-mean beliefs): the nearest neighbours are then mostly the
        row's own repetitions, which share its outcome, and the estimate is
        biased towards 0. The p-value stays valid; power is lost. Also when the
        resampled estimates of the interval are all equal (a handful of contexts):
        the interval is then NaN, not a point. And below ``SMALL_STUDY`` (40)
        contexts with a ``test_statistic`` other than ``'regression'`` or
        ``'auto'``: its p-value was measured liberal there (docs/cmi.md). And when
        the data hold one context: no context can move, and the p-value permutes
        single rows, which treats the rows as exchangeable (not valid if they share
        a context-level shock); likewise when ``permute='auto'`` falls back to single
        rows in several contexts (outcome and conditioning values varying within
        them; ``permute='rows'`` asks for it without the warning).
    DegenerateDataWarning
        When the belief is constant (the test then conditions on nothing the agent
        stated: plain dependence of action on outcome, which a coherent agent whose
        actual beliefs track the outcome fails; the test still runs).
        When the action or the outcome is constant, and when no valid
        permutation test exists (every unit alone in its evidence stratum or
        conditioning value, every block's units alike in what is permuted, so that
        every permuted copy is the data, no row with a neighbour, or a regression-adjusted
        statistic that is one value on the data and on every copy: 0 because each
        belief level holds one context, 1 because the study has barely more rows
        than the adjustment has columns): the p-value is then
        NaN, never a small number. When the estimate itself is undefined (no
        row has a neighbour with its discrete values), the statistic and the
        interval are NaN too, for every ``method`` and ``ci_method``.

    See Also
    --------
    cmi : the estimate alone, without a test.
    leakage_test : how much the outcome improves a prediction of the action.
    monotonicity_test : whether choice shares are monotone in the belief.
    prompt_consistency : whether the belief moves with the wording.
    report : every test on every cell of a table.

    Notes
    -----
    **Null and p-value.** Under :math:`H_0`: action :math:`\perp` outcome
    :math:`\mid` belief, a context's outcome carries no information about its
    actions beyond its beliefs (and evidence), so the outcomes of contexts
    with the same conditioning values are exchangeable given all actions and
    beliefs. The default test shuffles the outcomes of whole contexts within
    blocks of contexts matched on their conditioning values (the context's
    discrete evidence stratum and mean belief; when the evidence varies
    within contexts, the context's level of logit belief after removing the
    evidence effects), recomputes the test statistic :math:`T_b` (below) and
    reports :math:`p = (1 + \#\{T_b > T\} + K) / (1 + B)`, the data's rank
    among the copies with its ties broken at random (:math:`K` uniform on
    :math:`0, \dots, \#\{T_b = T\}`): a local permutation test (Runge 2018;
    Kim et al. 2022) whose units are contexts. With few permutable contexts
    the statistic takes few distinct values, and counting every tie as more
    extreme, :math:`(1 + \#\{T_b \ge T\}) / (1 + B)`, rejected 0.025 of the
    null studies at 30 contexts on the 0.05 grid; the random rank keeps the
    level exactly where the blocks are exact (Hemerik and Goeman 2018;
    docs/cmi.md). Without ties, or when every copy ties the data (nothing
    could move: p = 1), the two rules agree. With continuous evidence the
    blocks are median splits, an approximation, and the counting rule stays:
    breaking ties there raised the size on 16 nulls from 0.036-0.056 to
    0.044-0.069. The counting rule's p-value is ``(1 + np.sum(
    res.null_distribution >= res.test_statistic_value)) / (1 + B)``. Because the
    actions never move, whatever the repetitions of a context share
    (context-level shocks, beliefs sampled per repetition, their number) is
    the same in the data and in every permuted copy. Blocks are exact ties
    when beliefs are on a grid; contexts alone in their values are merged into
    runs of ``k_perm`` with the nearest conditioning values (see ``k_perm``),
    which makes the test approximately valid (measured in
    docs/validation_ci.md).

    **The test statistic.** Any statistic recomputed on the permuted copies
    gives a valid test; the default is chosen for power. The plug-in CMI over
    strata :math:`s` of the rows' conditioning values,
    :math:`\hat I = \sum_{s,a,y} (n_{say}/n) \log(n_{say} n_s / (n_{sa} n_{sy}))`
    (:math:`2 n \hat I` is the likelihood-ratio G statistic summed over
    strata), pools a leak of one sign over the many permutation blocks of a
    stratum. Whatever association the strata leave between action and
    outcome through the belief is kept by the matched permutation and is in
    the observed and the permuted statistics alike. The kNN estimate instead
    takes each row's neighbours one belief at a time, and where a row has
    fewer than ``k`` others in its (action, outcome) cell it borrows them from
    adjacent beliefs, which dilutes the signal: at 200 contexts x 5
    repetitions and CMI 0.012 it rejects 0.30 (continuous beliefs) and 0.41
    (a 0.05 grid) of studies where the plug-in statistic rejects 0.885 and
    0.930, and a stratified chi-square competitor 0.75 (docs/validation_ci.md).
    The plug-in strata are cut from the lowest belief up, so the same data with beliefs
    :math:`1 - b` (the outcome relabelled, the same null) give other strata and another
    p-value, not the same figure: on 6 null studies of ``simulate('rational',
    n_contexts=100)`` with 999 permutations it moved by 0.17 on average (at most 0.41,
    0.459 against 0.867). The mirror leaves the regression-adjusted statistic's
    p-value and ``statistic`` (the kNN estimate) unchanged, and relabelling the outcome
    alone changes nothing. Both orientations are valid tests (the validity is the
    blocks', not the strata's); choose one before looking at the result.
    With continuous evidence the strata must be cells of two or more values,
    and cells narrow enough to keep the size hold few contexts each; the
    regression-adjusted statistic instead removes the smooth dependence of the
    actions and of the outcome on the conditioning values by least squares and
    pools what is left over the whole study (the generalised covariance
    measure of Shah and Peters 2020). The blocks still carry the validity; the
    adjustment keeps the trend a block of unequal contexts leaves from being
    pooled with the leak. The default combines the two by the smaller p-value
    over the same permutations (Westfall and Young's min-p).

    **The interval.** The kNN estimate is biased, and its bias depends on
    the CMI itself (it grows with it). ``ci_method='debiased'`` fits
    P(action | belief, evidence, outcome) (multinomial logistic regression on
    a cubic-spline basis of the belief, interacting with the outcome) and
    P(outcome | belief, evidence), computes the exact CMI of the fitted model
    over the observed rows, simulates studies from it (one outcome per
    context, or one per row where the outcome varies within a context) and
    takes the mean estimate on them minus the model's CMI as
    the bias at the data's own dependence. The spread comes from half-samples
    of the contexts, which keep whatever the contexts' rows share. With float
    evidence the bias subtracted moves with the fitted model's CMI, so the
    centre varies more than the estimate: both models are refitted on 30 of the
    half-samples and the spread is widened by the ratio of the centre's spread to
    the estimate's there (never narrowed; the p-value is unaffected). Coverage
    at known CMIs: docs/validation_ci.md.

    **Why not the bootstrap rule.** Resampling with replacement duplicates
    rows; duplicates are zero-distance neighbours and inflate kNN estimates,
    so "the bootstrap CI excludes 0" rejects exactly coherent agents far more
    often than 5% (docs/validation_ci.md).

    **Row or context-mean belief.** If the agent states its belief with
    noise (belief and action elicited in separate conversations), the action
    follows the latent belief, which the row's report measures with error;
    I(action ; outcome | report) is then positive even for a rational agent.
    The context mean averages the report noise away and is the better
    conditioning variable when all repetitions of a context share one latent
    belief; the row belief is right when the belief may change between
    repetitions (e.g. prompt variants) and the action was taken together with
    that report.

    References
    ----------
    * Runge, J. (2018). Conditional independence testing based on a
      nearest-neighbor estimator of conditional mutual information. AISTATS.
    * Mesner, O. C. and Shalizi, C. R. (2021). Conditional mutual
      information estimation for mixed, discrete and continuous data. IEEE
      Transactions on Information Theory 67(1), 464-484.
    * Politis, D. N., Romano, J. P. and Wolf, M. (1999). Subsampling.
      Springer.
    * Kim, I., Neykov, M., Balakrishnan, S. and Wasserman, L. (2022). Local
      permutation tests for conditional independence. Annals of Statistics
      50(6), 3388-3414.
    * Shah, R. D. and Peters, J. (2020). The hardness of conditional
      independence testing and the generalised covariance measure. Annals of
      Statistics 48(3), 1514-1538.
    * Westfall, P. H. and Young, S. S. (1993). Resampling-Based Multiple
      Testing. Wiley.
    * Hemerik, J. and Goeman, J. (2018). Exact testing with random
      permutations. TEST 27(4), 811-825.

    Examples
    --------
    >>> import coherence
    >>> study = coherence.simulate("rational", n_contexts=200, rng=0)
    >>> res = coherence.ci_test(study.data, n_resamples=199, rng=0)
    >>> res.pvalue > 0.05
    True
    """
    design, opt, gen = ci_test_inputs(data, belief, action, outcome, evidence, group, k,
                                      method, n_resamples, confidence_level, calibrate,
                                      condition_on, permute, k_perm, ci_method, resolution,
                                      test_statistic, rng)
    return _ci_test(design, opt, gen)


def _context_interval(prep: Prepared, k: int, design: Design, b_prob: np.ndarray,
                      statistic: float, knn_null: Callable[[], np.ndarray],
                      opt: dict[str, Any], gen: np.random.Generator,
                      outcome_per_row: bool = False) -> tuple[float, float, np.ndarray]:
    """The permutation method's interval by context resampling (see ``ci_method``):
    ``(low, high, resampled estimates)``. ``knn_null()`` gives the kNN estimate on
    permuted copies (the bias at CMI = 0), computed only when it is needed;
    ``outcome_per_row``: the outcome varies within a context (the bias model then draws
    each row's outcome, not one per context)."""
    groups = design.groups
    n_groups = int(groups.max()) + 1
    B = opt["n_resamples"]
    level = opt["confidence_level"]
    if opt["ci_method"] is None:
        return float("nan"), float("nan"), np.empty(0)
    if opt["ci_method"] == "bootstrap":
        rows, offsets = cluster_resample_rows(groups, cluster_draws(n_groups, B, gen))
        res = estimates_on(prep, k, rows, offsets)
        low, high = percentile_interval(res, level)
        if not np.isfinite(statistic):  # see method='bootstrap' above
            low = high = float("nan")
    else:
        m = max(2, n_groups // 2)
        draws = [gen.permutation(n_groups)[:m] for _ in range(B)]
        rows, offsets = cluster_resample_rows(groups, draws)
        res = estimates_on(prep, k, rows, offsets)
        scale = np.sqrt(m / max(n_groups - m, 1))
        # spread from the half-samples, centred on their own mean (the estimator's
        # bias changes with the sample size); location from the estimate minus its
        # bias: at the fitted model ('debiased') or at CMI = 0 ('subsampling')
        bias = float("nan")
        if opt["ci_method"] == "debiased" and np.isfinite(statistic):
            # with float evidence the fitted bias moves with the estimate enough to widen
            # the centre's spread (docs/validation_ci.md): measured on the first
            # half-samples, refitted; otherwise the estimate's spread stands
            halves = None
            if design.ev_cont.shape[1]:
                h = min(B, _SPREAD_HALVES)
                halves = (rows[:offsets[h]], offsets[:h + 1], res[:h])
            bias, ratio = model_bias(prep, k, b_prob, design.ev_cont, groups,
                                     min(B, _BIAS_REPLICATES), gen, outcome_per_row, halves)
            scale *= ratio
        if not np.isfinite(bias):
            null = knn_null()
            finite_null = null[np.isfinite(null)]
            bias = float(np.mean(finite_null)) if finite_null.size else 0.0
        finite = res[np.isfinite(res)]
        if finite.size and np.isfinite(statistic):
            d_low, d_high = percentile_interval(finite - np.mean(finite), level)
            centre = statistic - bias
            low, high = centre - scale * d_high, centre - scale * d_low
        else:
            low = high = float("nan")
    if np.isfinite(low) and _no_spread(res) and not _trivial(design):
        warnings.warn("ci_test: the interval's resampled estimates (samples of the "
                      f"{n_groups} contexts) are all equal, so they show no spread; the "
                      "confidence interval is NaN, not a point.",
                      SmallSampleWarning, stacklevel=4)
        low = high = float("nan")
    return float(low), float(high), res


def _no_spread(res: np.ndarray) -> bool:
    """Whether the finite resampled estimates ``res`` take a single value (or none)."""
    finite = res[np.isfinite(res)]
    return finite.size == 0 or bool(np.ptp(finite) == 0.0)


def _trivial(design: Design) -> bool:
    """The action or the outcome is constant: the CMI is 0 and the interval the point 0."""
    return len(np.unique(design.action)) < 2 or len(np.unique(design.outcome)) < 2


def _movable(block_start: np.ndarray, block_units: np.ndarray, key: np.ndarray
             ) -> tuple[int, int]:
    """Units in blocks of two or more, and those in blocks whose units differ in ``key``
    (what the permutation moves): where the second is 0 every copy is the data."""
    sizes = np.diff(block_start)
    return int(sizes[sizes > 1].sum()), varied_units(block_start, block_units, key)


def _moves(prep: Prepared, k: int, permute: str, stated_prob: np.ndarray, cond_perm: np.ndarray,
           cond_constant: bool, groups: np.ndarray, k_perm: int, exact: bool,
           seeds: np.ndarray) -> tuple[tuple[str, tuple[np.ndarray, ...]], tuple[int, int],
                                       Callable[[], np.ndarray]]:
    """What the permutations move, in which blocks: ``(moves for plugin_null, (units in
    blocks of two or more, those in blocks whose units differ in what is moved), the kNN
    null computed when first asked for)``; ``cond_perm``
    is ``[discrete stratum, values...]`` per row, the values the blocks match on."""
    ev_disc = prep.disc["z"]
    if permute == "outcomes":
        n_groups = int(groups.max()) + 1
        y_unit, unit_cond = outcome_units(prep.disc["y"], stated_prob, cond_perm[:, 1:],
                                          ev_disc, groups)
        # when the conditioning varies within contexts, a context's mean is as precise
        # as its number of rows: only contexts of equal size are exchangeable
        sizes = (np.ones(n_groups, np.int64) if cond_constant
                 else np.bincount(groups, minlength=n_groups).astype(np.int64))
        block_start, block_units = block_layout(unit_cond, sizes, k_perm, keep_ties=exact)
        movable = _movable(block_start, block_units, y_unit)
        knn_null = functools.cache(lambda: outcome_null(prep, k, y_unit, groups,
                                                        block_start, block_units, seeds))
        return ("outcomes", (y_unit, groups, block_start, block_units)), movable, knn_null
    blocks = units_and_blocks(cond_perm, groups, permute == "contexts", k_perm,
                              keep_ties=exact)
    movable = _movable(blocks[2], blocks[3], unit_keys(prep.disc["x"], blocks[0], blocks[1]))
    knn_null = functools.cache(lambda: permutation_null(prep, k, blocks, seeds))
    return ("actions", blocks), movable, knn_null


def _resolve_permute(permute: str, outcome_constant: bool,
                     cond_constant: bool) -> tuple[str, bool]:
    """What the permutation moves, and whether ``'auto'`` fell back to single rows (the
    outcome and the conditioning values both vary within contexts)."""
    if permute == "outcomes" and not outcome_constant:
        raise ValueError(param_error("permute", _OWNER, "'rows', 'contexts' or 'auto' when "
                                     "the outcome varies within a context", "outcomes"))
    if permute == "contexts" and not cond_constant:
        raise ValueError(param_error("permute", _OWNER, "'rows', 'outcomes' or 'auto' when the "
                                     "conditioning values vary within a context", "contexts"))
    if permute != "auto":
        return permute, False
    return ("outcomes" if outcome_constant else "contexts" if cond_constant else "rows",
            not (outcome_constant or cond_constant))


def _bootstrap_result(prep: Prepared, k: int, groups: np.ndarray, statistic: float,
                      opt: dict[str, Any], gen: np.random.Generator,
                      common: dict[str, Any]) -> CITestResult:
    """``method='bootstrap'``: the paper's cluster-bootstrap percentile interval, no
    p-value."""
    warnings.warn("ci_test(method='bootstrap') reproduces the reference paper's rule for "
                  "comparability; 'the bootstrap CI excludes 0' is not a calibrated test "
                  "(duplicated rows inflate kNN estimates) and no p-value is given. Use "
                  "method='permutation' for a test.", NotCalibratedWarning, stacklevel=4)
    level = opt["confidence_level"]
    rows, offsets = cluster_resample_rows(
        groups, cluster_draws(int(groups.max()) + 1, opt["n_resamples"], gen))
    boot = estimates_on(prep, k, rows, offsets)
    low, high = percentile_interval(boot, level)
    if not np.isfinite(statistic):
        # resamples duplicate rows, which gives every row a neighbour: their
        # estimates exist where the data's does not; no interval for it
        _warn_undefined(statistic, stacklevel=5)
        low = high = float("nan")
    return CITestResult(
        statistic=statistic, pvalue=np.nan,
        confidence_interval=ConfidenceInterval(low, high, level),
        method="bootstrap", permute="none", ci_method="bootstrap",
        null_distribution=np.empty(0), resample_distribution=boot, **common)


def _conditioning_beliefs(design: Design, opt: dict[str, Any], gen: np.random.Generator
                          ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """The belief the estimate conditions on (the context mean, calibrated, as the options
    ask) and the stated one, each on the resolution's grid and as a probability, and the
    continuous evidence on that grid: ``(b, stated, b_prob, stated_prob, ev_cont)``."""
    groups = design.groups
    b = design.belief
    if opt["condition_on"] == "context_mean":
        b = _context_mean(b, groups)
    stated = b
    if opt["calibrate"] == "in-sample":  # the paper's: fitted and read on every row
        from sklearn.isotonic import IsotonicRegression

        b = IsotonicRegression(y_min=0.0, y_max=1.0, out_of_bounds="clip").fit(
            b, design.outcome.astype(np.float64)).predict(b)
    elif opt["calibrate"]:
        b = _cross_fitted_isotonic(b, design.outcome, groups, gen)
    b_prob = b
    stated_prob = stated
    ev_cont = design.ev_cont
    if opt["resolution"] is not None:
        check_resolution([("belief", stated), ("continuous evidence rank", ev_cont.ravel())],
                         opt["resolution"], _OWNER)
        b = np.round(b / opt["resolution"])
        stated = np.round(stated / opt["resolution"])
        ev_cont = np.round(ev_cont / opt["resolution"])
    return b, stated, b_prob, stated_prob, ev_cont


def _no_test_reason(movable: tuple[int, int], moves: tuple[Any, ...], trivial: bool,
                    statistic: float, observed: float, blind: bool) -> str:
    """Why no valid permutation test exists for the data, or '' where one does (a trivial
    study, constant action or outcome, keeps p = 1: its dependence is 0)."""
    return ("no two units share a block (every unit is alone in its evidence stratum or "
           "conditioning value)" if movable[0] == 0
           else "no permutation changes the data (no block holds two units that differ in "
           f"their {'outcome' if moves[0] == 'outcomes' else 'actions'})"
           if movable[1] == 0 and not trivial
           else "the estimate is undefined (no row has a neighbour with its discrete "
           "values)" if not np.isfinite(statistic)
           else f"the regression-adjusted statistic is {observed:.0f} on the data and on "
           "every permuted copy (" + ("each conditioning level holds one context, whose "
           "outcome the adjustment explains)" if observed < 0.5 else "the actions explain "
           "all of the outcome that the adjustment leaves, as in a study with barely more "
           "rows than the adjustment has columns)")
           if blind else "")


def _ci_test(design: Design, opt: dict[str, Any], gen: np.random.Generator) -> CITestResult:
    """The array layer of :func:`ci_test`: validated design arrays and options in, the
    estimate, its permutation null and interval out. Warnings point at the caller of
    the public function."""
    design = _canonical_order(design)
    n = len(design.action)
    groups = design.groups
    n_groups = int(groups.max()) + 1
    b, stated, b_prob, stated_prob, ev_cont = _conditioning_beliefs(design, opt, gen)
    z_cont = np.ascontiguousarray(np.column_stack([b, ev_cont]))
    cond = np.column_stack([design.ev_disc.astype(np.float64), z_cont])
    # the permutation blocks and the plug-in strata match on the stated belief: the
    # calibrated one is shaped by outcomes (other folds', or its own in-sample) and ties
    # many stated beliefs, and a coherent agent is not independent given those ties
    z_perm = (np.ascontiguousarray(np.column_stack([stated, ev_cont])) if opt["calibrate"]
              else z_cont)
    cond_perm = np.column_stack([design.ev_disc.astype(np.float64), z_perm])
    empty = np.empty((n, 0))
    prep = Prepared(n=n, cont={"x": empty, "y": empty, "z": z_cont},
                    disc={"x": design.action, "y": design.outcome, "z": design.ev_disc})
    k = _auto_k(cond, groups) if opt["k"] == "auto" else opt["k"]
    statistic = estimate(prep, k)
    trivial = _trivial(design)
    if trivial:
        warnings.warn("ci_test: the action or the outcome is constant; the conditional "
                      "mutual information is 0 and the test is trivial.",
                      DegenerateDataWarning, stacklevel=3)
    _warn_if_neighbours_within_contexts(z_cont, design.ev_disc, groups, k)
    B = opt["n_resamples"]
    level = opt["confidence_level"]
    common = {"n_obs": n, "k": k, "n_resamples": B, "n_contexts": n_groups,
              "evidence": opt["evidence"], "condition_on": opt["condition_on"],
              "calibrate": opt["calibrate"]}

    if opt["method"] == "bootstrap":
        return _bootstrap_result(prep, k, groups, statistic, opt, gen, common)

    # ---- permutation null
    outcome_constant = _constant_within(design.outcome.astype(np.float64), groups)
    cond_constant = _constant_within(cond_perm, groups)
    permute, fell_back = _resolve_permute(opt["permute"], outcome_constant, cond_constant)
    seeds = kernel_seeds(gen, B)
    test_statistic = resolve_statistic(opt["test_statistic"], n_groups, z_cont.shape[1])
    # the pooled plug-in statistic sees what a block of distinct values leaves between
    # action and outcome: its blocks keep tie runs exact (validation_ci.md); with
    # continuous evidence the blocks are median splits on every value, ties or not
    exact = test_statistic != "knn" and z_cont.shape[1] <= 1
    moves, movable, knn_null = _moves(prep, k, permute, stated_prob, cond_perm, cond_constant,
                                      groups, opt["k_perm"], exact, seeds)
    n_strata = 0
    if test_statistic == "knn":
        observed = statistic
        null = knn_null()
    else:
        observed, null, n_strata = permutation_statistic(
            test_statistic, cond_perm, groups, design.action, design.outcome, moves, B, gen)
    # the regression-adjusted statistic is one value on the data and every copy: 0 where
    # its basis explains every context's outcome (few contexts, each alone in its belief
    # level), 1 where the actions explain all the basis leaves (rows barely more than
    # the basis's columns)
    blind = (test_statistic == "regression" and not trivial
             and ((observed == 0.0 and not np.any(null))
                  or bool(np.all(np.abs(np.r_[observed, null] - 1.0) <= MC_TIE_RTOL))))
    # a trivial study (constant action or outcome) keeps p = 1: its dependence is 0
    why = _no_test_reason(movable, moves, trivial, statistic, observed, blind)
    if why:
        warnings.warn(f"ci_test: no valid permutation test exists for these data: {why}. "
                      "The p-value is NaN; coarser evidence or more contexts per stratum "
                      "are needed.", DegenerateDataWarning, stacklevel=3)
        pvalue = float("nan")
    else:
        # where the blocks are exact tie runs, ties are broken at random: few permutable
        # contexts and a binary outcome leave the statistic few distinct values, and
        # counting every tie made the test conservative; with continuous evidence the
        # blocks are median splits, an approximation the counting rule's margin covers
        pvalue = float(monte_carlo_pvalue(null, observed, break_ties=gen if exact else None))
        if n_groups == 1:
            _warn_one_context(opt["group"])
        elif fell_back:
            _warn_rows_fallback(opt["group"], n_groups)

    # ---- confidence interval by context resampling
    low, high, res = _context_interval(prep, k, design, b_prob, statistic, knn_null, opt, gen,
                                       not outcome_constant)
    if not np.isfinite(statistic):
        pvalue = low = high = float("nan")
    return CITestResult(
        statistic=statistic, pvalue=pvalue,
        confidence_interval=ConfidenceInterval(float(low), float(high), level),
        method="permutation", permute=permute, ci_method=opt["ci_method"],
        test_statistic=test_statistic, test_statistic_value=observed, n_strata=n_strata,
        null_distribution=null, resample_distribution=res, **common)
