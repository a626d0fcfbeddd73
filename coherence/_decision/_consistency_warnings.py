"""The warnings of :func:`coherence.prompt_consistency`: what its figures could not use,
and where a figure is not what its name says (each at the caller's caller's line).
"""

from __future__ import annotations

import math
import warnings
from typing import Any

import numpy as np
import pandas as pd

from .._validation import listed
from .._validation import plain_repr
from .._validation import plain_value
from .._warnings import DegenerateDataWarning
from .._warnings import SkippedRecordsWarning
from .._warnings import SmallSampleWarning

__all__ = [
    "MIN_TEST_CONTEXTS",
    "OWNER",
    "shift_alone",
    "warn_flat",
    "warn_left_out",
    "warn_no_rmse",
    "warn_shift_alone",
    "warn_untested",
    "warn_without_reference",
    "warn_without_replicate",
]

OWNER = "prompt_consistency"

#: fewest contexts behind a bootstrap-t p-value: with 2-4 the cluster bootstrap has 3-35
#: distinct resamples and rejected a true null 0.34, 0.21 and 0.09 of the time at 0.05
#: (noisy rational agent, 3 repetitions); from 5 contexts, 0.035-0.04
MIN_TEST_CONTEXTS = 5


def _shown(values: Any) -> str:
    return listed(list(values), show=plain_repr, counted=True)


def warn_without_reference(iv: dict[str, Any]) -> None:
    """A :class:`SkippedRecordsWarning` naming the contexts with no row under the
    reference prompt: their rows enter no comparison with it (each variant's shift and
    RMSE use the contexts seen under both), only the variants' ``std``."""
    groups, n_groups = iv["groups"], iv["n_groups"]
    lacking = np.flatnonzero(np.bincount(groups[iv["labels"] == iv["ref"]],
                                         minlength=n_groups) == 0)
    if len(lacking) == 0:
        return
    n_rows = int(np.isin(groups, lacking).sum())
    warnings.warn(f"{OWNER}: {len(lacking)} of {n_groups} contexts have no row under the "
                  f"reference prompt {iv['reference']!r} ({_shown(iv['contexts'][lacking])}); "
                  f"their {n_rows} rows enter no comparison with the reference (each "
                  "variant's shift and RMSE use the contexts seen under both), only the "
                  "variants' std.", SkippedRecordsWarning, stacklevel=3)


def warn_without_replicate(iv: dict[str, Any]) -> None:
    """A :class:`SkippedRecordsWarning` naming the contexts seen under the reference and
    not under the ``replicate``: the variants' shift and p-values measure from the
    reference and its re-run together, so they leave such contexts out (their
    ``rmse_reference``, from the reference alone, does not); they were left out without
    a word."""
    if iv["rep"] is None:
        return
    groups, labels, n_groups = iv["groups"], iv["labels"], iv["n_groups"]
    has_ref = np.bincount(groups[labels == iv["ref"]], minlength=n_groups) > 0
    has_rep = np.bincount(groups[labels == iv["rep"]], minlength=n_groups) > 0
    lacking = np.flatnonzero(has_ref & ~has_rep)
    if len(lacking) == 0:
        return
    warnings.warn(f"{OWNER}: {len(lacking)} of {int(has_ref.sum())} contexts seen under the "
                  f"reference {iv['reference']!r} have no row under its re-run "
                  f"replicate={iv['replicate']!r} ({_shown(iv['contexts'][lacking])}): each "
                  "variant's shift and p-values, measured from the reference and its re-run "
                  "together, leave them out (its rmse_reference, from the reference alone, "
                  "uses them).", SkippedRecordsWarning, stacklevel=3)


def warn_flat(table: pd.DataFrame) -> None:
    """A :class:`DegenerateDataWarning` naming the variants whose per-context mean
    differences from the reference do not vary (identical or heaped beliefs): their shift
    interval is the point itself and their p-values (1 for no difference, else the
    smallest possible) rest on no spread at all."""
    low, high = table["shift_ci_low"].to_numpy(float), table["shift_ci_high"].to_numpy(float)
    flat = table["prompt"].to_numpy()[np.isfinite(low) & (low == high)]
    if len(flat):
        warnings.warn(f"{OWNER}: the per-context differences of {len(flat)} prompt(s) from "
                      f"the reference do not vary ({listed(flat, show=plain_repr)}): their "
                      "intervals are the point itself and their p-values rest on no spread; "
                      "the sample shows no uncertainty.", DegenerateDataWarning, stacklevel=3)


def warn_no_rmse(iv: dict[str, Any]) -> None:
    """Say why the headline RMSE is NaN: the noise-corrected RMSE needs contexts with two
    or more repetitions under both prompts (it came NaN without a word)."""
    why = ("no context has two or more repetitions under both the reference and a variant "
           "(the noise-corrected RMSE subtracts their spread; rmse='paper' gives the "
           "uncorrected figure)" if iv["rmse"] == "corrected"
           else "no context is seen under both the reference and a variant")
    warnings.warn(f"{OWNER}: the RMSE (the statistic) and its interval are NaN: {why}.",
                  SmallSampleWarning, stacklevel=3)


def warn_untested(alternative: str) -> None:
    """The :class:`SmallSampleWarning` of a NaN p-value: no variant could be tested."""
    warnings.warn(f"{OWNER}: no variant could be tested under alternative={alternative!r} "
                  f"(the shift needs {MIN_TEST_CONTEXTS} contexts seen under both prompts, "
                  f"the disagreement {MIN_TEST_CONTEXTS} contexts with two or more "
                  "repetitions under both); pvalue is NaN.", SmallSampleWarning, stacklevel=3)


def warn_left_out(iv: dict[str, Any], variants: list[dict[str, Any]], headline: Any) -> None:
    """A :class:`SmallSampleWarning` naming the variants with no p-value when others have
    one: the overall p-value tests the others only (an untested variant, the headline's
    included, was left out of it without a word). ``variants``: the rows of the variants
    other than the reference and its re-run; ``headline``: the headline variant."""
    missing = [r for r in variants if math.isnan(r["pvalue"])]
    if not missing or len(missing) == len(variants):
        return  # all untested: warn_untested says so
    names = [r["prompt"] for r in missing]
    lead = (f"; the headline variant {plain_value(headline)!r} is among them"
            if any(n is headline or n == headline for n in names) else "")
    both = "both prompts" + (" and the replicate" if iv["rep"] is not None else "")
    why = ("no context seen under both prompts" if iv["method"] == "permutation" else
           f"the disagreement needs {MIN_TEST_CONTEXTS} contexts with two or more "
           f"repetitions under {both}" if iv["alternative"] == "disagreement" else
           f"the shift needs {MIN_TEST_CONTEXTS} contexts seen under {both}")
    warnings.warn(f"{OWNER}: {len(missing)} of {len(variants)} variant(s) could not be "
                  f"tested under alternative={iv['alternative']!r} ({_shown(names)}: {why}); "
                  "their pvalue is NaN and the overall pvalue tests the other variants "
                  f"only{lead}.", SmallSampleWarning, stacklevel=3)


def shift_alone(iv: dict[str, Any], rows: list[dict[str, Any]]) -> list[dict[str, Any]]:
    """The rows of the variants whose ``'combined'`` p-value is the shift's alone: the
    shift was tested and the disagreement was not (fewer than :data:`MIN_TEST_CONTEXTS`
    contexts with two or more repetitions under both prompts). Empty for the other
    alternatives and for the permutation method (its two statistics need the same
    contexts)."""
    if iv["alternative"] != "combined" or iv["method"] != "bootstrap-t":
        return []
    return [r for r in rows if not math.isnan(r["pvalue_shift"])
            and math.isnan(r["pvalue_disagreement"])]


def warn_shift_alone(iv: dict[str, Any], fell_back: list[dict[str, Any]],
                     n_tested: int) -> None:
    """A :class:`SmallSampleWarning` naming the variants of :func:`shift_alone`, why
    their disagreement has no p-value and what their ``pvalue`` and the overall one are
    (the combined p-value of such a variant was its shift's without a word)."""
    if not fell_back:
        return
    both = "both prompts" + (" and the replicate" if iv["rep"] is not None else "")
    counts = ", ".join(f"{plain_value(r['prompt'])!r}: {r['n_disagreement']}"
                       for r in fell_back[:5])
    overall = ("the overall pvalue is the shift's alone too" if len(fell_back) == n_tested
               else "the overall pvalue combines their shift with the other variants' "
                    "two statistics")
    warnings.warn(f"{OWNER}: under alternative='combined' the p-value of {len(fell_back)} "
                  f"variant(s) is the shift's alone ({_shown(r['prompt'] for r in fell_back)}"
                  "; pvalue = pvalue_shift, pvalue_disagreement NaN): the disagreement "
                  f"statistic needs {MIN_TEST_CONTEXTS} contexts with two or more "
                  f"repetitions under {both} and has fewer ({counts}); {overall}.",
                  SmallSampleWarning, stacklevel=3)
