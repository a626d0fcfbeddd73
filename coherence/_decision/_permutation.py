"""The context-permutation design shared by the conditional-independence test and
the leakage test: which units (rows or whole contexts) are exchangeable under the
null, and the blocks they are shuffled in.

A permutation moves whole contexts (all their repetitions together) or single rows,
only between units whose conditioning summaries match (:func:`block_layout`); an
outcome permutation summarises each context by its evidence stratum and its mean
conditioning values (:func:`outcome_units`), or, when the evidence varies within
contexts, by the context's level once the evidence effects are removed
(:func:`context_effects`).
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator

import numpy as np

from .._resampling import cluster_members

__all__ = ["block_layout", "context_effects", "outcome_units", "permutations_within",
           "unit_keys", "units_and_blocks", "varied_units"]

#: Permutations drawn per batch by :func:`permutations_within` (bounds its memory).
_BATCH = 512


def block_layout(unit_cond: np.ndarray, sizes: np.ndarray, k_perm: int, *,
                 keep_ties: bool = False) -> tuple[np.ndarray, np.ndarray]:
    """Blocks of exchangeable units: ``(block_start, sorted units)``.

    ``unit_cond`` has one row per unit, ``[discrete stratum, values...]``. Units
    are sorted by (size, stratum, values); runs of equal values form blocks,
    and runs with fewer than ``k_perm`` units are merged with their neighbours
    (in that order, within the same size and stratum) until each block holds at
    least ``k_perm`` units. A stratum with a single unit is a block of one unit,
    which no permutation moves.

    With two or more values (continuous evidence) and without ``keep_ties``, the
    blocks are parts of a median split on every value (:func:`_kd_blocks`).

    ``keep_ties=True``: a run of two or more tied units is a block of its own,
    never merged (its permutations are exact); only units alone in their values
    are merged, with the adjacent units alone in theirs, into blocks of at least
    ``k_perm`` (a shorter final group joins the previous group when adjacent, and
    a lone unit between two tie runs does not move).
    """
    if unit_cond.shape[1] > 2 and not keep_ties:
        return _kd_blocks(unit_cond, sizes, k_perm)
    keys = [unit_cond[:, j] for j in range(unit_cond.shape[1] - 1, -1, -1)] + [sizes]
    srt = np.lexsort(keys)
    u_cond = unit_cond[srt]
    u_size = sizes[srt]
    stratum_change = np.ones(len(srt), dtype=bool)
    tie_change = np.ones(len(srt), dtype=bool)
    if len(srt) > 1:
        stratum_change[1:] = (u_size[1:] != u_size[:-1]) | (u_cond[1:, 0] != u_cond[:-1, 0])
        tie_change[1:] = stratum_change[1:] | np.any(u_cond[1:] != u_cond[:-1], axis=1)
    block_starts: list[int] = []
    t = 0
    m = len(srt)
    while t < m:
        s = t  # start of a stratum
        t += 1
        while t < m and not stratum_change[t]:
            t += 1
        ties = [s, *[i for i in range(s + 1, t) if tie_change[i]], t]
        if keep_ties:
            block_starts.extend(_exact_blocks(ties, k_perm))
            continue
        cur = ties[0]
        local: list[int] = []
        for j in range(1, len(ties)):
            if ties[j] - cur >= k_perm or j == len(ties) - 1:
                local.append(cur)
                cur = ties[j]
        # a final short run joins the previous block of the stratum
        if len(local) > 1 and t - local[-1] < k_perm:
            local.pop()
        block_starts.extend(local)
    block_start = np.array([*block_starts, m], dtype=np.int64)
    return block_start, np.ascontiguousarray(srt, dtype=np.int64)


def _kd_blocks(unit_cond: np.ndarray, sizes: np.ndarray,
               k_perm: int) -> tuple[np.ndarray, np.ndarray]:
    """:func:`block_layout` for two or more conditioning values (without ``keep_ties``):
    blocks close in every value, not only in the first (a lexicographic sort matches on
    the first value alone wherever it is continuous and ignores the others).

    Within each (size, stratum), the units are split in two at the median of the value
    whose ranks within the stratum spread widest (so no unit of measurement matters),
    and each half again, until a part holds fewer than ``2 k_perm`` units: a block of
    ``k_perm`` to ``2 k_perm - 1`` units (all of them when the stratum has fewer).
    """
    from scipy.stats import rankdata

    lead = np.lexsort((unit_cond[:, 0], sizes))
    change = np.ones(len(lead), dtype=bool)
    change[1:] = ((sizes[lead][1:] != sizes[lead][:-1])
                  | (unit_cond[lead, 0][1:] != unit_cond[lead, 0][:-1]))
    bounds = [*np.flatnonzero(change), len(lead)]
    order: list[np.ndarray] = []
    for a, b in itertools.pairwise(bounds):
        units = lead[a:b]
        ranks = rankdata(unit_cond[units, 1:], axis=0) / len(units)
        stack = [np.arange(len(units))]
        while stack:
            part = stack.pop()
            if len(part) < 2 * k_perm:
                order.append(units[part])
                continue
            j = int(np.argmax(np.ptp(ranks[part], axis=0)))
            part = part[np.argsort(ranks[part, j], kind="stable")]
            half = len(part) // 2
            stack.extend([part[half:], part[:half]])
    block_start = np.cumsum([0, *(len(u) for u in order)]).astype(np.int64)
    return block_start, np.ascontiguousarray(np.concatenate(order), dtype=np.int64)


def _exact_blocks(ties: list[int], k_perm: int) -> list[int]:
    """Block starts of one stratum whose tie runs start at ``ties`` (its end last) under
    ``keep_ties`` (see :func:`block_layout`)."""
    starts: list[int] = []
    group: list[int] = []  # starts of adjacent lone units not yet in a block
    previous_group = -1    # start of the last closed group of lone units, if it ended here

    def close() -> None:
        nonlocal previous_group
        if not group:
            return
        if len(group) < k_perm and previous_group >= 0:
            return  # joins the previous group (its start already recorded)
        starts.append(group[0])
        previous_group = group[0]

    for j in range(len(ties) - 1):
        if ties[j + 1] - ties[j] >= 2:  # a tie run: its own exact block
            close()
            group.clear()
            previous_group = -1
            starts.append(ties[j])
        else:
            group.append(ties[j])
            if len(group) >= k_perm:
                close()
                group.clear()
    close()
    return starts


def units_and_blocks(cond: np.ndarray, groups: np.ndarray, use_contexts: bool,
                     k_perm: int, *, keep_ties: bool = False
                     ) -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray]:
    """Exchangeable units of an action permutation (rows or whole contexts) and
    the blocks they are shuffled in (see :func:`block_layout`)."""
    n = len(groups)
    if use_contexts:
        order, starts = cluster_members(groups)
        unit_rows = order
        unit_start = starts.astype(np.int64)
        first = order[starts[:-1]]
        unit_cond = cond[first]
    else:
        unit_rows = np.arange(n, dtype=np.int64)
        unit_start = np.arange(n + 1, dtype=np.int64)
        unit_cond = cond
    block_start, srt = block_layout(unit_cond, np.diff(unit_start), k_perm,
                                    keep_ties=keep_ties)
    return (unit_start, np.ascontiguousarray(unit_rows, dtype=np.int64), block_start, srt)


def unit_keys(values: np.ndarray, unit_start: np.ndarray, unit_rows: np.ndarray) -> np.ndarray:
    """A code per unit that is equal exactly where two units hold the same sequence of
    ``values`` (in their rows' order: an action permutation pairs rows in order)."""
    sizes = np.diff(unit_start)
    if np.all(sizes == 1):
        return np.asarray(values)[unit_rows]
    seqs = [tuple(values[unit_rows[a:b]].tolist()) for a, b in itertools.pairwise(unit_start)]
    codes: dict[tuple[object, ...], int] = {}
    return np.array([codes.setdefault(t, len(codes)) for t in seqs], dtype=np.int64)


def varied_units(block_start: np.ndarray, block_units: np.ndarray, key: np.ndarray) -> int:
    """How many units lie in blocks whose units do not all share their ``key`` (what the
    permutation moves: a context's outcome, a unit's actions). A permutation within the
    other blocks leaves the data as they are, so where this is 0 every permuted copy is
    the data and no permutation test exists."""
    sizes = np.diff(block_start)
    if not len(sizes):
        return 0
    k = np.asarray(key)[block_units]
    start = block_start[:-1][sizes > 0]
    differ = np.minimum.reduceat(k, start) != np.maximum.reduceat(k, start)
    return int(np.sum(sizes[sizes > 0][differ]))


def context_effects(belief: np.ndarray, ev_disc: np.ndarray, groups: np.ndarray,
                     n_iter: int = 50) -> np.ndarray:
    """Each context's level of logit(belief) once the rows' evidence effects are removed.

    Two-way additive fit ``logit(p_cr) = alpha_c + beta_{e_cr}`` by alternating
    means (evidence effects centred); returns ``alpha``. Used to match contexts
    whose rows carry different evidence (evidence varying within a context).
    """
    p = np.clip(belief, 0.005, 0.995)
    lp = np.log(p / (1.0 - p))
    n_groups = int(groups.max()) + 1
    n_ev = int(ev_disc.max()) + 1
    cnt_g = np.bincount(groups, minlength=n_groups).astype(np.float64)
    cnt_e = np.maximum(np.bincount(ev_disc, minlength=n_ev), 1).astype(np.float64)
    alpha = np.bincount(groups, weights=lp, minlength=n_groups) / cnt_g
    for _ in range(n_iter):
        beta = np.bincount(ev_disc, weights=lp - alpha[groups], minlength=n_ev) / cnt_e
        beta -= beta.mean()
        new = np.bincount(groups, weights=lp - beta[ev_disc], minlength=n_groups) / cnt_g
        if np.max(np.abs(new - alpha)) < 1e-10:
            alpha = new
            break
        alpha = new
    return alpha


def outcome_units(outcome: np.ndarray, belief: np.ndarray, z_cont: np.ndarray,
                   ev_disc: np.ndarray, groups: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Units of an outcome permutation: ``(y of each context, its matching summary)``.

    The summary of a context is ``[evidence stratum, mean of each conditioning
    coordinate]`` when the discrete evidence is constant within the context;
    when it varies within contexts the stratum is dropped and the belief is
    summarised by the context's level after removing the evidence effects
    (:func:`context_effects`).
    """
    n_groups = int(groups.max()) + 1
    cnt = np.bincount(groups, minlength=n_groups).astype(np.float64)
    y_unit = np.zeros(n_groups, dtype=np.int64)
    y_unit[groups] = outcome
    means = np.column_stack([np.bincount(groups, weights=z_cont[:, j], minlength=n_groups)
                             / cnt for j in range(z_cont.shape[1])])
    first = np.full(n_groups, -1, dtype=np.int64)
    first[groups[::-1]] = ev_disc[::-1]
    if np.all(first[groups] == ev_disc):
        stratum = first.astype(np.float64)
    else:
        stratum = np.zeros(n_groups)
        means[:, 0] = context_effects(belief, ev_disc, groups)
    return y_unit, np.column_stack([stratum, means])


def permutations_within(strata: np.ndarray, gen: np.random.Generator,
                        n: int, *, batch: int = _BATCH) -> Iterator[np.ndarray]:
    """``n`` random permutations of ``0..len(strata)-1``, each exchanging only items of the
    same stratum, yielded in batches (arrays of shape ``(batch, len(strata))``).

    Permutation ``b`` sends the items of a stratum, in order, to that stratum's positions
    sorted by ``n`` uniform keys; the keys are ``gen.random(len(strata))`` for each
    permutation in turn, so the draws (and the stream left behind) are those of ``n``
    one-at-a-time calls, whatever the batch size (at most ``batch`` permutations a batch).
    """
    strata = np.asarray(strata)
    size = len(strata)
    sorted_positions = np.argsort(strata, kind="stable")
    made = 0
    while made < n:
        count = min(batch, n - made)
        keys = gen.random((count, size))
        order = np.lexsort((keys, np.broadcast_to(strata, keys.shape)), axis=-1)
        perm = np.empty((count, size), dtype=np.int64)
        perm[:, sorted_positions] = order
        made += count
        yield perm
