"""The isotonic likelihood-ratio test of monotone choice (``monotonicity_test(method=
'permutation')``, the earlier default, and ``method='bootstrap'``): the statistic, the
context permutation within belief windows and strata of equal size (``lr_on='both'``
combines two statistics on the same permutations by
:func:`coherence._resampling.min_p_pvalue`).

The null is "the share is non-decreasing"; its least favourable point is a flat
share, where the beliefs of contexts with the same number of rows in the pair are
exchangeable with respect to the choices. See :func:`coherence.monotonicity_test`.
"""

from __future__ import annotations

import math
from typing import Any

import numpy as np

from .._resampling import monte_carlo_pvalue
from .._validation import param_error
from ._monotone_local import MIN_CONTEXTS

__all__ = ["belief_windows", "context_strata", "isotonic_lr", "isotonic_lr_test",
           "not_testable", "permutation_null", "quantile_bins",
           "untestable_note", "unused_options"]

#: each method-specific option of ``monotonicity_test``: its default and the methods using it
_OPTIONS: dict[str, tuple[Any, tuple[str, ...]]] = {
    "n_windows": (5, ("permutation",)),
    "lr_on": ("both", ("permutation", "bootstrap")),
    "lr_bins": (10, ("permutation", "bootstrap")),
    "min_contexts": (MIN_CONTEXTS, ("local",)),
}


def quantile_bins(belief: np.ndarray, n_bins: int) -> tuple[np.ndarray, np.ndarray]:
    """Bin codes (0..K-1) and cut points of quantile bins of the belief.

    The cut points are the ``inverted_cdf`` quantiles at levels ``j / n_bins``,
    ``j = 1..n_bins-1`` (observed values), deduplicated; bin ``j`` is
    ``(c_j, c_{j+1}]`` (the first open below, the last open above), so bin
    ``j`` holds at least ``j / n_bins`` of the rows cumulatively. Empty bins
    (possible with heavy ties) are dropped, so fewer than ``n_bins`` bins may
    remain; every bin returned holds at least one row.
    """
    levels = np.arange(1, n_bins) / n_bins
    cuts = np.unique(np.quantile(belief, levels, method="inverted_cdf"))
    raw = np.searchsorted(cuts, belief, side="left")
    _, codes = np.unique(raw, return_inverse=True)
    return codes.astype(np.int64).ravel(), cuts


def unused_options(owner: str, method: str, lr_on: str, given: dict[str, Any]) -> None:
    """Refuse a method-specific option set away from its default under a method that does
    not use it (``n_windows`` but ``method='local'``; ``lr_bins`` with ``lr_on='values'``):
    it would be recorded in the result and change nothing."""
    for name, value in given.items():
        default, methods = _OPTIONS[name]
        if value == default:
            continue
        if method not in methods:
            uses = " or ".join(f"method={m!r}" for m in methods)
            raise ValueError(param_error(
                name, owner, f"left at its default {default!r} with method={method!r}, "
                f"which does not use it (only {uses} does)", value))
        if name == "lr_bins" and lr_on == "values":
            raise ValueError(param_error(
                name, owner, f"left at its default {default!r} with lr_on='values' (the "
                f"method={method!r} statistic over every distinct belief value uses no "
                "bins); pass lr_on='bins'" + ("" if method == "bootstrap" else " or 'both'")
                + " to use it", value))


def _pava(y: np.ndarray, w: np.ndarray) -> np.ndarray:
    """Weighted isotonic (non-decreasing) regression by pool-adjacent-violators."""
    from sklearn.isotonic import isotonic_regression

    return np.asarray(isotonic_regression(y, sample_weight=w, increasing=True),
                      dtype=np.float64)


def _binom_loglik(x: np.ndarray, m: np.ndarray, p: np.ndarray) -> np.ndarray:
    with np.errstate(divide="ignore", invalid="ignore"):
        a = np.where(x > 0, x * np.log(p), 0.0)
        b = np.where(m - x > 0, (m - x) * np.log1p(-p), 0.0)
    return a + b


def isotonic_lr(x: np.ndarray, m: np.ndarray) -> float:
    """Likelihood-ratio statistic of 'shares non-decreasing' against 'any shares'.

    ``x[k]`` successes out of ``m[k]`` trials in ordered bin ``k``:
    ``2 * sum_k [l(x_k; x_k/m_k) - l(x_k; p_iso_k)]`` with ``p_iso`` the
    weighted isotonic fit of the shares.
    """
    keep = m > 0
    x, m = x[keep].astype(np.float64), m[keep].astype(np.float64)
    share = x / m
    iso = _pava(share, m)
    value = 2.0 * float(np.sum(_binom_loglik(x, m, share) - _binom_loglik(x, m, iso)))
    return max(value, 0.0) if abs(value) < 1e-10 else value


def isotonic_lr_test(x: np.ndarray, m: np.ndarray, n_resamples: int,
                     rng: np.random.Generator) -> tuple[float, float]:
    """The isotonic LR statistic and its parametric-bootstrap p-value (``method='bootstrap'``).

    The null is simulated from the isotonic fit: ``x*_k ~ Binomial(m_k,
    p_iso_k)``; ``p = (1 + #{T* >= T}) / (1 + B)``. Kept for comparability with
    earlier releases: it treats rows as independent and draws from an
    over-fitted null, so it is not a calibrated test (see the module's docs).
    """
    keep = m > 0
    x, m = x[keep], m[keep]
    if len(m) < 2:
        return math.nan, math.nan
    observed = isotonic_lr(x, m)
    iso = _pava(x / m, m.astype(np.float64))
    draws = rng.binomial(m[None, :], iso[None, :], size=(n_resamples, len(m)))
    null = np.array([isotonic_lr(d, m) for d in draws])
    return observed, monte_carlo_pvalue(null, observed)


#: Most cells (permutations x rows) of one block of permuted belief codes.
_BLOCK_CELLS = 2_000_000


def context_strata(groups: np.ndarray, window: np.ndarray | None = None) -> list[np.ndarray]:
    """Row blocks of the permutation: per stratum, a (contexts, s) index matrix.

    ``groups`` are context codes of the pair's rows, the rows already in canonical
    order; ``window`` (constant within a context) is the belief window of the
    row's context. Contexts in the same window with the same number ``s`` of rows
    in the pair form a stratum; row ``i`` of a stratum's matrix lists the rows of
    one context. Strata of a single context are left out (nothing to permute).
    """
    if len(groups) == 0:
        return []
    order = np.argsort(groups, kind="stable")
    _, starts, sizes = np.unique(groups[order], return_index=True, return_counts=True)
    win = np.zeros(len(starts), dtype=np.int64) if window is None else window[order][starts]
    key = win * (int(sizes.max()) + 1) + sizes
    blocks = []
    for kv in np.unique(key):
        which = np.flatnonzero(key == kv)
        if len(which) < 2:
            continue
        s = int(sizes[which[0]])
        blocks.append(order[starts[which][:, None] + np.arange(s)[None, :]])
    return blocks


def not_testable(belief: np.ndarray, first: np.ndarray, groups: np.ndarray,
                 labels: tuple[str, str], window: np.ndarray | None = None) -> str:
    """Why the pair's global test cannot be run ('' when it can)."""
    never = [repr(a) for a, n in zip(labels, (first.sum(), len(first) - first.sum()),
                                     strict=True) if n == 0]
    if never:
        return f"action {' and '.join(never)} never chosen"
    if np.unique(belief).size < 2:
        return "one distinct belief value"
    for rows in context_strata(groups, window):
        if np.unique(belief[rows].ravel()).size > 1:
            return ""
    return ("no two contexts in a belief window with the same number of rows in the pair "
            "and different beliefs")


def untestable_note(owner: str, table: Any) -> str:
    """The warning of a study whose overall p-value is NaN: every pair of the pair table
    ``table`` (columns ``pair``, ``testable``, ``reason``) with why it is not testable."""
    why = "; ".join(f"{pair}: {reason or 'no p-value'}" for pair, reason
                    in zip(table["pair"], table["reason"], strict=True))
    return (f"{owner}: the overall p-value is NaN because no action pair is testable "
            f"({why}). See the result's table['reason']; elicit more contexts (or, for an "
            "action never chosen, test other pairs).")


def belief_windows(belief: np.ndarray, groups: np.ndarray, n_windows: int) -> np.ndarray:
    """Window code per row: quantile windows of the contexts' mean beliefs.

    Every context lies in one window (by its mean belief over the pair's rows);
    the windows are ``n_windows`` quantile bins of the contexts' mean beliefs
    (:func:`quantile_bins`, ties merged). The permutation keeps each context's
    beliefs in its window, so the multiset of means per window, hence the windows,
    is the same in every resample.
    """
    if n_windows <= 1 or len(belief) == 0:
        return np.zeros(len(belief), dtype=np.int64)
    n_groups = int(groups.max()) + 1
    counts = np.bincount(groups, minlength=n_groups)
    means = np.bincount(groups, weights=belief, minlength=n_groups)
    present = counts > 0
    codes = np.zeros(n_groups, dtype=np.int64)
    codes[present], _ = quantile_bins(means[present] / counts[present], n_windows)
    return codes[groups]


def _lr_fixed_m(x: np.ndarray, m: np.ndarray, mf: np.ndarray) -> float:
    share = x / mf
    if np.all(np.diff(share) >= 0):
        return 0.0
    return isotonic_lr(x, m)


def permutation_null(values: np.ndarray, first: np.ndarray, groups: np.ndarray,
                     n_resamples: int, rng: np.random.Generator,
                     window: np.ndarray | None = None, coarse: np.ndarray | None = None
                     ) -> tuple[Any, np.ndarray]:
    """The isotonic LR statistic and its context-permutation null distribution.

    ``values`` are codes 0..V-1 of the distinct beliefs of the pair's rows,
    ``first`` is 1 where the row chose the pair's first action, ``groups`` the
    context codes. One resample gives every context the belief codes of a
    context drawn by a random permutation within its stratum (contexts with the
    same number of rows in the pair), in random order within the context; the
    choices never move. The counts per belief value ``m_v`` are the same in every
    resample, only the successes ``x_v`` change.

    ``coarse`` (optional) maps each value code to a coarser, ordered code (the
    quantile bin of the value); the statistic is then computed on both and the
    observed statistic is a (2,) array, the null a (B, 2) array: column 0 on the
    values, column 1 on the coarse codes, on the same permutations.
    """
    n_values = int(values.max()) + 1
    m = np.bincount(values, minlength=n_values)
    mf = m.astype(np.float64)
    x = np.bincount(values, weights=first, minlength=n_values)
    observed: Any = _lr_fixed_m(x, m, mf)
    from ._kernels_isotonic import isotonic_lr_rows

    if coarse is not None:
        n_coarse = int(coarse.max()) + 1
        mc = np.bincount(coarse, weights=m, minlength=n_coarse).astype(np.int64)
        mcf = mc.astype(np.float64)
        to_coarse = np.zeros((n_values, n_coarse))
        to_coarse[np.arange(n_values), coarse] = 1.0
        observed = np.array([observed, _lr_fixed_m(x @ to_coarse, mc, mcf)])
    blocks = context_strata(groups, window)
    null = np.empty((n_resamples, 2) if coarse is not None else n_resamples,
                    dtype=np.float64)
    per_block = max(1, _BLOCK_CELLS // max(1, len(values)))
    done = 0
    while done < n_resamples:
        b = min(per_block, n_resamples - done)
        codes = np.broadcast_to(values, (b, len(values))).copy()
        for rows in blocks:
            k = rows.shape[0]
            perm = np.argsort(rng.random((b, k)), axis=1)
            moved = rng.permuted(values[rows][perm], axis=2)
            codes[:, rows.ravel()] = moved.reshape(b, -1)
        flat = (codes + n_values * np.arange(b)[:, None]).ravel()
        xs = np.bincount(flat, weights=np.broadcast_to(first, codes.shape).ravel(),
                         minlength=b * n_values).reshape(b, n_values)
        if coarse is None:
            null[done:done + b] = isotonic_lr_rows(xs, mf)
        else:
            null[done:done + b, 0] = isotonic_lr_rows(xs, mf)
            null[done:done + b, 1] = isotonic_lr_rows(xs @ to_coarse, mcf)
        done += b
    return observed, null
