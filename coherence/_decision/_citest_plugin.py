r"""The plug-in statistic of :func:`coherence.ci_test`'s permutation p-value.

The p-value of the conditional-independence test permutes outcomes (or actions)
within small blocks of matched contexts (:mod:`._permutation`); any statistic
recomputed on the permuted copies gives a valid test. This module's statistic is
the plug-in conditional mutual information over strata of the rows' conditioning
values,

.. math::

    \hat I = \sum_{s, a, y} \frac{n_{say}}{n}
             \log \frac{n_{say}\, n_s}{n_{sa}\, n_{sy}}

(in nats; :math:`2 n \hat I` is the likelihood-ratio G statistic of action
against outcome summed over strata). The strata are runs of rows in the order of
their conditioning values within each discrete evidence stratum, tied values
never split, each run holding at least :func:`stratum_rows` rows: about
:math:`2 \sqrt{C_e}` contexts' worth of rows for the :math:`C_e` contexts of the
evidence stratum (the permutation blocks are as wide as the contexts of one
evidence stratum allow, so the pooling follows them).

Strata much wider than the permutation blocks pool a leak of one sign over many
blocks, which is where the power comes from (docs/validation_ci.md measures it
against the kNN estimate and a stratified chi-square). The permutation blocks,
not the strata, carry the test's validity: whatever association the strata leave
between action and outcome through the belief is kept by a permutation among
matched contexts, and is in the observed and the permuted statistics alike.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np

from ._permutation import block_layout
from ._permutation import permutations_within

__all__ = ["permutation_null", "plugin_null", "plugin_statistic", "strata_of_rows",
           "stratum_rows"]

#: Most entries of one batch of permuted rows (bounds the memory of the null).
_CELLS = 1 << 22


def stratum_rows(n_rows: int, n_contexts: int, n_values: int = 1) -> int:
    r"""Least rows of a stratum: a stratum spans about :math:`2 / \sqrt{C}` of each
    conditioning value's ranks, so it holds the rows of
    :math:`\max(2, 2^d C^{1 - d/2})` of the :math:`C` contexts for ``d = n_values``
    values: ``round(2 n / sqrt(C))`` for one (about :math:`2 \sqrt{C}` contexts), the
    rows of 4 contexts for two, of 2 for more (at least 1 row)."""
    c = max(n_contexts, 1)
    contexts = max(2.0, 2.0 ** n_values * c ** (1.0 - n_values / 2.0))
    return max(1, round(n_rows * contexts / c))


def strata_of_rows(cond: np.ndarray, groups: np.ndarray) -> np.ndarray:
    """Each row's stratum (codes 0..S-1) from its conditioning values ``cond``
    (``[discrete stratum, values...]`` per row) and its context ``groups``: within each
    discrete stratum, runs of tied values merged in value order until each holds
    :func:`stratum_rows` rows of that discrete stratum's rows and contexts."""
    n = len(cond)
    strata = np.empty(n, dtype=np.int64)
    by_stratum = np.argsort(cond[:, 0], kind="stable")
    cuts = np.flatnonzero(np.diff(cond[by_stratum, 0]) != 0) + 1
    offset = 0
    for rows in np.split(by_stratum, cuts) if n else []:
        least = stratum_rows(len(rows), len(np.unique(groups[rows])), cond.shape[1] - 1)
        start, order = block_layout(cond[rows], np.ones(len(rows), dtype=np.int64), least)
        strata[rows[order]] = offset + np.repeat(np.arange(len(start) - 1), np.diff(start))
        offset += len(start) - 1
    return strata


def _from_counts(counts: np.ndarray, n: int) -> np.ndarray:
    """Plug-in CMI (nats) of each batch row of ``counts`` (batch, S, A, Y)."""
    from scipy.special import xlogy

    def total(x: np.ndarray, axes: tuple[int, ...]) -> np.ndarray:
        return np.asarray(xlogy(x, x).sum(axis=axes))

    say = total(counts, (1, 2, 3))
    sa = total(counts.sum(axis=3), (1, 2))
    sy = total(counts.sum(axis=2), (1, 2))
    s = total(counts.sum(axis=(2, 3)), (1,))
    out: np.ndarray = (say - sa - sy + s) / n
    return out


def _counts(strata: np.ndarray, action: np.ndarray, outcome: np.ndarray, shape: tuple[int, ...]
            ) -> np.ndarray:
    """Counts of (stratum, action, outcome) for each batch row of ``action`` and
    ``outcome`` (arrays of shape (batch, n), one of them may be 1-d)."""
    n_s, n_a, n_y = shape
    a2 = np.atleast_2d(action)
    y2 = np.atleast_2d(outcome)
    batch = max(len(a2), len(y2))
    code = (strata * n_a + a2) * n_y + y2
    cells = n_s * n_a * n_y
    code = code + (np.arange(batch) * cells)[:, None]
    flat = np.bincount(code.ravel(), minlength=batch * cells)
    return flat.reshape(batch, n_s, n_a, n_y).astype(np.float64)


def plugin_statistic(strata: np.ndarray, action: np.ndarray, outcome: np.ndarray
                     ) -> Callable[[np.ndarray, np.ndarray], np.ndarray]:
    """The plug-in CMI (nats) of action and outcome given the stratum, as a statistic of
    ``(actions, outcomes)`` copies for :func:`permutation_null` (the data's ``action``
    and ``outcome`` fix the table's shape)."""
    n = len(strata)
    shape = (int(strata.max()) + 1, int(action.max()) + 1, int(outcome.max()) + 1)

    def statistic(actions: np.ndarray, outcomes: np.ndarray) -> np.ndarray:
        return _from_counts(_counts(strata, actions, outcomes, shape), n)

    return statistic


def _unit_blocks(block_start: np.ndarray, block_units: np.ndarray, n_units: int) -> np.ndarray:
    block = np.empty(n_units, dtype=np.int64)
    block[block_units] = np.repeat(np.arange(len(block_start) - 1), np.diff(block_start))
    return block


def plugin_null(strata: np.ndarray, action: np.ndarray, outcome: np.ndarray,
                moves: tuple[str, tuple[np.ndarray, ...]], n_resamples: int,
                gen: np.random.Generator) -> np.ndarray:
    """The plug-in CMI on ``n_resamples`` permuted copies (see :func:`permutation_null`)."""
    return permutation_null(plugin_statistic(strata, action, outcome), action, outcome, moves,
                            n_resamples, gen)


def permutation_null(statistic: Callable[[np.ndarray, np.ndarray], np.ndarray],
                     action: np.ndarray, outcome: np.ndarray,
                     moves: tuple[str, tuple[np.ndarray, ...]], n_resamples: int,
                     gen: np.random.Generator, width: int = 1) -> np.ndarray:
    """``statistic(actions, outcomes)`` on ``n_resamples`` permuted copies, in batches:
    one of the two arguments is the data's (1-d), the other a batch of permuted copies
    (2-d, a copy a row); ``statistic`` returns one value a copy (or a row of values,
    one a statistic: the result is then copies x statistics). ``width`` is the
    entries the statistic keeps per row and copy (bounds a batch's memory).

    ``moves`` is ``("outcomes", (y_unit, groups, block_start, block_units))``: each
    context's outcome shuffled among the contexts of its block; or ``("actions",
    (unit_start, unit_rows, block_start, block_units))``: the actions of each unit
    (a row or a whole context, rows paired in order) moved onto another unit of its
    block. The draws are those of :func:`permutations_within` on the units' blocks
    (the same whatever the batch size).
    """
    kind, parts = moves
    n = len(action)
    n_units = len(parts[0]) if kind == "outcomes" else len(parts[0]) - 1
    blocks = _unit_blocks(parts[2], parts[3], n_units)
    if kind == "actions":  # each row's unit and place in it, to pair rows in order
        unit_start, unit_rows = parts[0], parts[1]
        unit_of = np.repeat(np.arange(n_units), np.diff(unit_start))
        offset = np.arange(n) - unit_start[unit_of]
    out: np.ndarray | None = None
    done = 0
    batch = max(1, min(512, _CELLS // (max(n, n_units) * max(width, 1))))
    for perms in permutations_within(blocks, gen, n_resamples, batch=batch):
        if kind == "outcomes":
            y_unit, groups = parts[0], parts[1]
            values = statistic(action, y_unit[perms][:, groups])
        else:
            src = np.empty_like(perms, shape=(len(perms), n))
            src[:, unit_rows] = unit_rows[unit_start[perms[:, unit_of]] + offset]
            values = statistic(action[src], outcome)
        if out is None:  # one value a copy, or a row of values (several statistics)
            out = np.empty((n_resamples, *np.shape(values)[1:]))
        out[done:done + len(perms)] = values
        done += len(perms)
    return out if out is not None else np.empty(0)
