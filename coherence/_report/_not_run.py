"""Why a requested test has no result in a cell: the one account the HTML report and
:meth:`CoherenceReport.summary` both give (a test that applied nowhere left the summary's
table empty without a word, where the HTML said why)."""

from __future__ import annotations

import math
from typing import Any

from .._text import cell_label

__all__ = ["DESCRIPTIVE", "cell_label", "no_pvalue", "not_run"]

#: the tests that give no p-value by design (a statistic and its interval alone)
DESCRIPTIVE = frozenset({"calibration", "calibration_error", "smooth_ece"})

#: why a test did not run, when it applied to no cell
NEEDS = {
    "ci": "an action and an outcome column",
    "ci_evidence": "an action and an outcome column and evidence columns (evidence=)",
    "ci_calibrated": "an action and an outcome column",
    "leakage": "an action and an outcome column",
    "leakage_evidence": "an action and an outcome column and evidence columns (evidence=)",
    "monotonicity": "an action and an outcome column",
    "prompt_consistency": "a prompt column with two or more variants and a repetition column",
    "calibration": "an outcome column",
    "lie": "the law-of-iterated-expectation table (lie=)",
    "calibration_error": "an outcome column",
    "smooth_ece": "an outcome column",
    "iia": "an action column and a 'menu' column (the offered actions joined by '|')",
}


def not_run(rep: Any, *, nowhere: bool = True) -> list[tuple[str, str]]:
    """(test, the rest of the sentence) for each requested test of the report ``rep`` that
    applied to no cell (unless ``nowhere`` is False), did not apply to some, or failed on
    one (one pair per failure)."""
    sentences = []
    for name in rep.settings.get("tests", ()):
        applied = [c for c in rep.cells if name in c.results]
        failed = [c for c in rep.cells if name in c.errors]
        # the LIE table checked in a cell of its own (it has no by columns) holds no row of
        # the data, and the data's cells hold no LIE rows: neither is a test that "did not
        # apply" there (the sentence named a column the table has, or the lie= it was given)
        own_lie_cell = name == "lie" and any(c.n_obs == 0 for c in (*applied, *failed))
        skipped = [c for c in rep.cells if name not in c.results and name not in c.errors
                   and not (c.n_obs == 0 and name != "lie") and not own_lie_cell]
        need = NEEDS.get(name, "inputs this table lacks")
        if not applied and not failed:
            if not nowhere:
                continue
            sentences.append((name, f"did not apply: it needs {need}, which this table "
                                    "does not have."))
            continue
        if skipped:
            where = ", ".join(cell_label(c.key) for c in skipped)
            sentences.append((name, f"did not apply to {where}: it needs {need}."))
        sentences += [(name, f"failed on {cell_label(cell.key)}: {cell.errors[name]}")
                      for cell in failed]
        sentences += [(name, f"ran on {cell_label(cell.key)} but gave no p-value{why}")
                      for cell, why in no_pvalue(rep, name)]
    return sentences


def no_pvalue(rep: Any, name: str) -> list[tuple[Any, str]]:
    """(cell, why) for each cell of ``rep`` where the test ``name``, one with a p-value,
    ran and gave NaN (untestable there: too few contexts, no permutation block). Such a
    test dropped out of the summary's table without a word, and the page's grid read it
    as descriptive."""
    if name in DESCRIPTIVE:
        return []
    out = []
    for cell in rep.cells:
        result = cell.results.get(name)
        if result is None or not math.isnan(float(result.pvalue)):
            continue
        # the test's own account (its warning), the last one: the overall verdict
        said = [n for n in cell.notes.get(name, ()) if "NaN" in n or "no valid" in n]
        out.append((cell, f": {said[-1]}" if said else
                    " (it could not be computed there; see its warnings in to_frame())."))
    return out
