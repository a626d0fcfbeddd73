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
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any

import pandas as pd

from coherence import ElicitationDiagnostics
from coherence._results import Summary
from coherence._validation import as_dataframe
from coherence._validation import no_missing
from coherence._validation import param_error
from coherence._warnings import CoherenceWarning

from ._clients import Client
from ._engine import Executed
from ._engine import failure_table

__all__ = [
    "FILLED",
    "HIDDEN",
    "ElicitationResult",
    "ParseFailureWarning",
    "check_output_names",
    "check_phrase",
    "context_fields",
    "context_table",
    "make_result",
]


#: Columns never offered to templates as placeholders (the ground truth).
HIDDEN = frozenset({"truth", "outcome", "a_outcome", "b_outcome", *(
    "p_a", "p_a_given_b1", "p_a_given_b0", "p_b", "p_b_given_a1", "p_b_given_a0")})

#: Placeholders the runners fill themselves: a contexts column of that name would
#: silently replace the text in every prompt, so it is refused.
FILLED = frozenset({
    "patient_description", "clinical_question", "answer_lines", "labels", "n_labels",
    "example_lines", "states", "auxiliary_variable_name", "auxiliary_state",
    "auxiliary_variable_condition", "condition_question", "condition_outcome",
})


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
    incoherent : pandas.DataFrame
        :func:`run` only: the belief replies that were read but whose
        numbers do not sum to 1 (``bad_sum``), one row per (context, prompt,
        repetition), with the numbers as stated (``stated_<label>``) and the
        action of the same repetition: incoherent replies are data, kept and
        counted rather than dropped. Empty for the other runners.
    """

    data: pd.DataFrame = field(repr=False)
    raw: pd.DataFrame = field(repr=False)
    failures: pd.DataFrame = field(repr=False)
    n_calls: int
    n_cached: int
    n_failed_attempts: int
    model: str
    settings: Mapping[str, Any]
    incoherent: pd.DataFrame = field(repr=False, default_factory=pd.DataFrame)

    def _repr_html_(self) -> str:
        """The :meth:`summary` as HTML (how Jupyter shows the run)."""
        return self.summary()._repr_html_()

    @property
    def diagnostics(self) -> ElicitationDiagnostics | None:
        """:func:`coherence.elicitation_diagnostics` of ``data``, with every failed or
        set-aside elicitation counted by reason (None when ``data`` has no ``belief``
        column or no row)."""
        from coherence import DegenerateDataWarning
        from coherence import elicitation_diagnostics

        if "belief" not in self.data.columns or not len(self.data):
            return None
        with warnings.catch_warnings():  # the summary shows the flag
            warnings.simplefilter("ignore", DegenerateDataWarning)
            return elicitation_diagnostics(self.data, set_aside=self.failures)

    def summary(self) -> Summary:
        """A short summary of the run (text; HTML tables in a notebook)."""
        lines = [f"Elicitation from {self.model}: {len(self.raw)} elicitations, "
                 f"{self.n_calls} calls made, {self.n_cached} from the cache, "
                 f"{self.n_failed_attempts} failed attempts; {len(self.data)} complete rows."]
        if len(self.incoherent):
            lines.append(f"{len(self.incoherent)} belief replies were read but do not sum to "
                         "1 (bad_sum): kept, with their actions, in result.incoherent.")
        if len(self.failures):
            lines.append("Failures by reason:")
            for row in self.failures.itertuples(index=False):
                lines.append(f"  {row.quantity:<14} {row.reason:<16} {row.count}")
        tables = [("failures by reason", self.failures)] if len(self.failures) else []
        diagnostics = self.diagnostics
        if diagnostics is not None:
            lines += ["", *str(diagnostics.summary()).splitlines()]
            if diagnostics.degenerate:
                lines.insert(1, "WARNING: " + diagnostics.warning)
        return Summary("\n".join(lines), title=lines[0], tables=tables)


def context_table(contexts: Any, question: Any, owner: str, *,
                  list_duplicates: bool) -> pd.DataFrame:
    """The validated contexts table of :func:`run` and :func:`run_lie`."""
    df = as_dataframe(contexts, name="contexts", owner=owner)
    for col in ("context", "description"):
        if col not in df.columns:
            raise ValueError(param_error("contexts", owner, f"a table with a {col!r} column",
                                         list(df.columns)))
    if not len(df):
        raise ValueError(param_error("contexts", owner, "a table with at least one row",
                                     "an empty table"))
    clash = sorted(str(c) for c in df.columns if c in FILLED)
    if clash:
        raise ValueError(f"Column(s) {', '.join(map(repr, clash))} of contexts (input to "
                         f"{owner}) have the name of a placeholder the runner fills itself; "
                         "such a column would replace that text in every prompt. Rename "
                         "it (the description goes in 'description', the question in "
                         "'question' or the question= argument).")
    if not df["context"].is_unique:
        dup = (f"; duplicated: {df['context'][df['context'].duplicated()].tolist()[:5]}"
               if list_duplicates else "")
        raise ValueError(f"Column 'context' (input to {owner}) must hold unique context "
                         f"ids{dup}.")
    check_text_ids(df["context"], "context", owner)
    if question is not None and "question" in df.columns:
        # one of the two went unused without a word: the argument filled the prompts
        # and the column was dropped from the output (or the column filled a template's
        # {question} while the argument was recorded as asked)
        raise ValueError(param_error("question", owner, "None when contexts has a 'question' "
                                     "column (give the question once: the argument, or the "
                                     "column for a question per context)", question))
    text_columns = ["description"] + (["question"] if question is None else [])
    if question is None and "question" not in df.columns:
        raise ValueError(param_error("question", owner, "the question text (or a 'question' "
                                     "column in contexts)", None))
    no_missing(df, "context", owner=owner)
    for col in text_columns:
        values = df[col]
        bad = values.isna().to_numpy() | ~values.map(
            lambda v: isinstance(v, str) and bool(v.strip())).to_numpy(dtype=bool)
        if bad.any():
            rows = values.index[bad].tolist()[:5]
            raise ValueError(f"Column {col!r} (input to {owner}) must hold non-empty text in "
                             f"every row; {int(bad.sum())} rows do not (first: index "
                             f"{rows}, values {values[bad].tolist()[:5]!r}). A missing "
                             "value would be sent to the model as 'nan'.")
    return df


def check_text_ids(ids: pd.Series, column: str, owner: str) -> None:
    """Refuse ids that differ but are the same as text (``1`` and ``'1'``): the response
    cache keys a call by its id as text, so the two ids' replies were pooled (one call,
    answered from the cache for the other)."""
    text = ids.map(str)
    clash = text.duplicated(keep=False).to_numpy()
    if clash.any():
        shown = [repr(v) for v in ids[clash].tolist()[:6]]
        raise ValueError(f"Column {column!r} (input to {owner}) must hold ids that differ as "
                         f"text; {int(clash.sum())} rows do not (first: index "
                         f"{ids.index[clash].tolist()[:6]}, ids {', '.join(shown)}). The "
                         "response cache keys each call by its id as text, so their replies "
                         "would be pooled: write every id one way.")


def check_output_names(df: pd.DataFrame, written: Sequence[str], owner: str,
                       hint: str = "") -> None:
    """Refuse a contexts column named like a column the runner writes itself.

    The runner copies the other context columns after the elicited ones; a column named
    ``belief`` (left over from an earlier study, say) would overwrite the elicited belief
    in ``result.data`` without a word, so it is refused before any call is made.
    """
    names = set(written)
    clash = [str(c) for c in df.columns if c in names]
    if clash:
        raise ValueError(f"Column(s) {', '.join(map(repr, clash))} of contexts (input to "
                         f"{owner}) have the name of a column {owner} writes itself (its "
                         f"output columns: {', '.join(map(repr, written))}); copied to the "
                         "output, such a column would overwrite the elicited value. Rename "
                         f"or drop it{hint}.")


def check_phrase(question: Any, where: str, owner: str) -> None:
    """The clinical question is a phrase that follows "they", never a full question."""
    if isinstance(question, str) and question.rstrip().endswith("?"):
        raise ValueError(
            f"The {where} of {owner} must be the clinical question as the phrase that "
            "follows 'they' in the papers' prompts (e.g. 'have heart disease', asked as "
            "'What is the probability that they have heart disease?'); got "
            f"{question!r}, a full question, which the templates would wrap in another one.")


def context_fields(row: Mapping[Any, Any], question: str | None) -> dict[str, Any]:
    """A context's template placeholders; the ground truth never reaches a prompt."""
    fields = {k: v for k, v in row.items() if isinstance(k, str) and k not in HIDDEN}
    fields["patient_description"] = row["description"]
    fields["clinical_question"] = question if question is not None else row["question"]
    return fields


def make_result(data: pd.DataFrame, done: Executed, client: Client, n_total: int,
                what: str, incoherent: pd.DataFrame | None = None) -> ElicitationResult:
    """The result of a run; warns when rows were left out (stacklevel: the user's call)."""
    failures = failure_table(done.raw)
    incoherent = pd.DataFrame() if incoherent is None else incoherent
    _warn_dropped(n_total - len(data), n_total, failures, what, len(incoherent))
    return ElicitationResult(data=data, raw=done.raw, failures=failures,
                             n_calls=done.engine.calls, n_cached=len(done.before),
                             n_failed_attempts=done.engine.failed_attempts,
                             model=client.model, settings=dict(client.settings),
                             incoherent=incoherent)


def _warn_dropped(n_dropped: int, n_total: int, failures: pd.DataFrame, what: str,
                  n_incoherent: int) -> None:
    if n_dropped:
        reasons = ", ".join(f"{r.quantity}/{r.reason}: {r.count}"
                            for r in failures.itertuples(index=False))
        kept = (f" {n_incoherent} incoherent belief replies are kept, with their actions, in "
                "result.incoherent;" if n_incoherent else "")
        warnings.warn(f"{n_dropped} of {n_total} {what} left out of the table because an "
                      f"elicitation failed ({reasons});{kept} see result.raw and "
                      "result.failures.", ParseFailureWarning, stacklevel=4)


def check_copied_truths(df: pd.DataFrame, probabilities: tuple[str, ...],
                        outcomes: tuple[str, ...], owner: str) -> None:
    """Columns copied to the output as the truth (a probability) or an outcome (0 or 1) must
    hold such values (or be missing): a truth of 1.2 or an outcome of 2 would be carried into
    the analysis as if it were one."""
    from coherence._validation import probability_array

    for col in probabilities:
        if col in df.columns:
            probability_array(df[col].to_numpy(), col, owner=owner, allow_nan=True)
    for col in outcomes:
        if col in df.columns:
            raw = df[col]
            numbers = pd.to_numeric(raw.astype(object), errors="coerce")
            bad = (raw.notna() & ~numbers.isin([0.0, 1.0])).to_numpy()
            if bad.any():
                first = [v.item() if hasattr(v, "item") else v for v in raw[bad].tolist()[:5]]
                raise ValueError(f"Column {col!r} (input to {owner}) must be binary (0 or 1, or "
                                 f"missing); {int(bad.sum())} row(s) are not (first: index "
                                 f"{raw.index[bad].tolist()[:5]}, values {first}).")
