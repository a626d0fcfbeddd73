"""What the three study runners share around the job engine.

On the way in, the contexts table of :func:`run` and :func:`run_lie` and the
template placeholders of a context (the ground truth, :data:`HIDDEN`, never
reaches a prompt); on the way out, the result of every runner
(:class:`ElicitationResult`) and the :class:`ParseFailureWarning` when rows
were left out.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

import pandas as pd

from coherence._results import Summary
from coherence._validation import as_dataframe, param_error
from coherence._warnings import CoherenceWarning

from ._clients import Client
from ._engine import Executed, failure_table

__all__ = [
    "HIDDEN",
    "ElicitationResult",
    "ParseFailureWarning",
    "context_fields",
    "context_table",
    "make_result",
]


#: Columns never offered to templates as placeholders (the ground truth).
HIDDEN = frozenset({"truth", "outcome", "a_outcome", "b_outcome", *(
    "p_a", "p_a_given_b1", "p_a_given_b0", "p_b", "p_b_given_a1", "p_b_given_a0")})


class ParseFailureWarning(CoherenceWarning):
    """Some elicitations failed to parse or to be answered and were left out of the table."""


@dataclass(frozen=True, slots=True)
class ElicitationResult:
    """What a run returns.

    Attributes
    ----------
    data : pandas.DataFrame
        The belief/action table (:func:`run`) or the pairs table
        (:func:`run_pairs`), complete rows only, ready for the tests.
    raw : pandas.DataFrame
        One row per call: identity (``context``, ``quantity``, ``template``,
        ``prompt``, ``repetition``), ``model``, ``settings`` (JSON),
        ``seed``, ``text`` (the raw reply, NaN if the call failed),
        ``token_belief``, ``cached`` (answered from the cache), the parse
        (``parse_ok``, ``method``, ``reason``, ``detail``, ``values`` as JSON)
        and ``call_error`` (the last error of a call that failed).
    failures : pandas.DataFrame
        Counts of failed elicitations by ``quantity`` and ``reason`` (parse
        failure codes, and ``'call_failed'``).
    n_calls : int
        Calls sent during this run (retries not counted).
    n_cached : int
        Elicitations answered from the cache.
    n_failed_attempts : int
        Attempts that failed (each retry counts).
    model : str
        The client's model.
    settings : dict
        The client's sampling settings.
    """

    data: pd.DataFrame = field(repr=False)
    raw: pd.DataFrame = field(repr=False)
    failures: pd.DataFrame = field(repr=False)
    n_calls: int
    n_cached: int
    n_failed_attempts: int
    model: str
    settings: Mapping[str, Any]

    def _repr_html_(self) -> str:
        """The :meth:`summary` as HTML (how Jupyter shows the run)."""
        return self.summary()._repr_html_()

    def summary(self) -> Summary:
        """A short summary of the run (text; HTML tables in a notebook)."""
        lines = [f"Elicitation from {self.model}: {len(self.raw)} elicitations, "
                 f"{self.n_calls} calls made, {self.n_cached} from the cache, "
                 f"{self.n_failed_attempts} failed attempts; {len(self.data)} complete rows."]
        if len(self.failures):
            lines.append("Failures by reason:")
            for row in self.failures.itertuples(index=False):
                lines.append(f"  {row.quantity:<14} {row.reason:<16} {row.count}")
        tables = [("failures by reason", self.failures)] if len(self.failures) else []
        return Summary("\n".join(lines), title=lines[0], tables=tables)


def context_table(contexts: Any, question: Any, owner: str, *,
                  list_duplicates: bool) -> pd.DataFrame:
    """The validated contexts table of :func:`run` and :func:`run_lie`."""
    df = as_dataframe(contexts, name="contexts", owner=owner)
    for col in ("context", "description"):
        if col not in df.columns:
            raise ValueError(param_error("contexts", owner, f"a table with a {col!r} column",
                                         list(df.columns)))
    if not df["context"].is_unique:
        dup = (f"; duplicated: {df['context'][df['context'].duplicated()].tolist()[:5]}"
               if list_duplicates else "")
        raise ValueError(f"Column 'context' (input to {owner}) must hold unique context "
                         f"ids{dup}.")
    if question is None and "question" not in df.columns:
        raise ValueError(param_error("question", owner, "the question text (or a 'question' "
                                     "column in contexts)", None))
    return df


def context_fields(row: Mapping[Any, Any], question: str | None) -> dict[str, Any]:
    """A context's template placeholders; the ground truth never reaches a prompt."""
    fields = {k: v for k, v in row.items() if isinstance(k, str) and k not in HIDDEN}
    fields.setdefault("patient_description", row["description"])
    fields.setdefault("clinical_question", question if question is not None
                      else row["question"])
    return fields


def make_result(data: pd.DataFrame, done: Executed, client: Client, n_total: int,
                what: str) -> ElicitationResult:
    """The result of a run; warns when rows were left out (stacklevel: the user's call)."""
    failures = failure_table(done.raw)
    _warn_dropped(n_total - len(data), n_total, failures, what)
    return ElicitationResult(data=data, raw=done.raw, failures=failures,
                             n_calls=done.engine.calls, n_cached=len(done.before),
                             n_failed_attempts=done.engine.failed_attempts,
                             model=client.model, settings=dict(client.settings))


def _warn_dropped(n_dropped: int, n_total: int, failures: pd.DataFrame, what: str) -> None:
    if n_dropped:
        reasons = ", ".join(f"{r.quantity}/{r.reason}: {r.count}"
                            for r in failures.itertuples(index=False))
        warnings.warn(f"{n_dropped} of {n_total} {what} left out of the table because an "
                      f"elicitation failed ({reasons}); see result.raw and result.failures.",
                      ParseFailureWarning, stacklevel=4)
