"""The main job: every test that applies, per (model, dataset) cell, in one report.

``report`` splits a belief/action table into cells by the ``by`` columns that
exist, runs each applicable test on each cell (cells in parallel with joblib),
and returns a :class:`CoherenceReport` holding the result objects themselves.
Every number in ``to_frame()``, ``to_markdown()`` and ``to_html()`` is read from
those objects, never recomputed.
"""

from __future__ import annotations

import copy
import inspect
import numbers
import os
import platform
import sys
import warnings
from collections.abc import Iterable
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC
from datetime import datetime
from typing import Any

import numpy as np
import pandas as pd

from .._decision._design import evidence_columns
from .._decision._design import require_design_columns
from .._decision._diagnostics import ElicitationDiagnostics
from .._decision._diagnostics import diagnose
from .._decision._diagnostics import set_aside_counts
from .._multiplicity import ADJUST_METHODS
from .._options import merge_record
from .._parameters import check_choice
from .._parameters import check_int
from .._results import CoherenceResult
from .._rng import RNGLike
from .._rng import check_rng
from .._rng import spawn
from .._validation import as_dataframe
from .._validation import binary_column
from .._validation import check_case_distinct
from .._validation import check_columns_arg
from .._validation import column_error
from .._validation import label_column
from .._validation import listed
from .._validation import no_missing
from .._validation import nonempty
from .._validation import param_error
from .._validation import plain_labels
from .._validation import probability_column
from .._validation import require_columns
from .._warnings import SkippedRecordsWarning
from .._warnings import recorded_warnings
from ._actions import check_action_spelling
from ._actions import map_actions
from ._not_run import cell_label
from ._options import ReportOptions
from ._options import check_report_options
from ._registry import DEFAULT_PERMUTATIONS
from ._registry import DEFAULT_RESAMPLES
from ._registry import MENU_COLUMN
from ._registry import REGISTRY
from ._registry import TEST_NAMES
from ._registry import Options
from ._registry import StudyColumns
from ._resolve import resolve_pvalues
from ._result import FRAME_COLUMNS
from ._result import CoherenceReport
from ._result import ReportCell
from ._split import check_lie_columns
from ._split import lie_cell
from ._split import side_tables_record
from ._split import split_lie
from ._split import split_lie_baseline
from ._split import split_set_aside

__all__ = [
    "ADJUST_METHODS", "TEST_NAMES", "CoherenceReport", "ReportCell", "ReportOptions", "report"]

#: The cell columns of report by default (each may be absent from the data).
_DEFAULT_BY: tuple[str, ...] = ("model", "dataset")


# --------------------------------------------------------------------------- report()
@dataclass(frozen=True, slots=True)
class _ReportInput:
    """Validated input of :func:`report`: the table (shared columns checked once), the
    per-test options, the cells' grouping columns, the tests asked for and how to run."""

    df: pd.DataFrame
    options: Options
    present_by: tuple[str, ...]
    names: tuple[str, ...]
    lie: pd.DataFrame | None
    lie_options: Mapping[str, Any]
    set_aside: pd.DataFrame | None
    n_jobs: int | None
    backend: str | None
    progress: bool
    gen: np.random.Generator
    settings: dict[str, Any]


@dataclass(frozen=True, slots=True)
class _ReportArgs(StudyColumns):
    """The arguments of :func:`report` as given (but the table; its settings merged into
    one :class:`ReportOptions`), for :func:`_report_iv`."""

    evidence: Iterable[str]
    by: Sequence[str] | str
    tests: Any
    adjust: str
    options: ReportOptions
    n_permutations: int | None
    lie: Any
    lie_options: Mapping[str, Any] | None
    set_aside: Any
    rng: RNGLike
    actions: Mapping[str, str] | None = None


def _cell_columns(df: pd.DataFrame, by_arg: Any, owner: str) -> tuple[str, ...]:
    """The cell columns of ``by`` the table has: each named on purpose present, none
    named like a column of the report's table, every row labelled, each label written
    one way."""
    # a column named twice is one cell column (twice, to_frame held it twice and
    # summary() raised)
    by = tuple(dict.fromkeys(check_columns_arg(by_arg, "by", owner)))
    # a cell column named on purpose must exist, as `coherence test --by` checks (a misspelt
    # one would pool every model into one cell); the default ones may be absent
    absent = [c for c in by if c not in df.columns and c not in _DEFAULT_BY]
    if absent:
        require_columns(df, {"by": absent[0]} if len(absent) == 1 else absent, owner=owner)
    present_by = tuple(c for c in by if c in df.columns)
    taken = [c for c in present_by if c in FRAME_COLUMNS]
    if taken:  # to_frame's own column would overwrite the cells' labels
        raise ValueError(param_error(
            "by", owner, "cell columns named unlike the columns of the report's table ("
            + ", ".join(FRAME_COLUMNS) + "), which would overwrite the cells' labels: "
            "rename the column", taken))
    for column in present_by:  # 'gpt' / 'GPT', 1 / '1': one cell, not two
        # a missing label was a cell of its own, labelled 'nan' (`coherence test` refused it);
        # so is a blank one, '' or '  ' (the command line reads a blank cell as missing),
        # which the summary showed as nothing and the page as "all rows"
        blanks = [v for v in pd.unique(df[column]) if isinstance(v, str) and not v.strip()]
        blank = (df[column].isna() | df[column].isin(blanks)).to_numpy()
        no_missing(df, column, owner=owner, missing=blank, rule="label every row (a blank "
                   "cell label is a cell named by nothing): fill them in, or leave the "
                   "column out of by")
        check_case_distinct(df, column, owner=owner)  # 'gpt' / 'GPT ', 1 / '1', True / 'True'
    return present_by


def _report_iv(data: Any, a: _ReportArgs) -> _ReportInput:
    owner = "report"
    df = as_dataframe(data, owner=owner)
    # called here, not deeper: its DeprecationWarning's stacklevel points at the caller
    o = a.options
    n_permutations, n_resamples = _draw_counts(a.n_permutations, o.n_resamples, owner)
    df, evidence = _table_iv(df, a, owner)
    present_by = _cell_columns(df, a.by, owner)
    names = _tests_iv(df, a, owner)
    if "monotonicity" in names and a.action in df.columns:  # it reads yes/no/defer by name
        check_action_spelling(df, a.action, owner)
    n_jobs = o.n_jobs
    gen = check_rng(a.rng, owner=owner)
    options = Options(
        belief=a.belief,
        action=a.action,
        outcome=a.outcome,
        group=a.group,
        prompt=a.prompt if a.prompt in df.columns else None,
        repetition=a.repetition if a.repetition in df.columns else None,
        truth=a.truth if a.truth in df.columns else None,
        evidence=evidence,
        k=o.k,
        n_resamples=n_resamples,
        n_permutations=n_permutations,
        n_splits=o.n_splits,
        engine=o.engine,
        n_bins=o.n_bins,
        confidence_level=o.confidence_level,
        reference_prompt=o.reference_prompt,
    )
    lie_df = (as_dataframe(a.lie, name="lie", owner=owner)
              if a.lie is not None and "lie" in names else None)
    if lie_df is not None:
        check_lie_columns(lie_df, present_by)
    _unused_lie_warning(a, names, owner)
    set_aside_df = _set_aside_iv(a.set_aside, owner)
    if a.prompt is not None:  # prompt=None pools the prompts: their repetition labels recur
        _repetitions_once(df, options, present_by, owner)
    lie_options = dict(a.lie_options or {})
    _check_lie_options(lie_options, owner)
    if o.n_resamples is not None:  # the LIE interval's draws too, unless lie_options sets them
        lie_options.setdefault("n_resamples", o.n_resamples)
    return _ReportInput(
        df=df, options=options, present_by=present_by, names=names, lie=lie_df,
        lie_options=lie_options, set_aside=set_aside_df, n_jobs=n_jobs,
        backend=o.backend,
        progress=sys.stderr.isatty() if o.progress is None else bool(o.progress), gen=gen,
        settings={**_settings(df, a, options, present_by, n_jobs),
                  **side_tables_record(lie_df, a.lie_options, a.set_aside)})


def _repetitions_once(df: pd.DataFrame, options: Options, present_by: tuple[str, ...],
                      owner: str) -> None:
    """With a repetition column, each repetition of a context's prompt is one row of a
    cell (of a menu, with a ``menu`` column). A table read twice over (every row twice),
    or two models pooled into one cell (their contexts' labels alike), doubled each
    context's repetitions in every test but the prompt-consistency test, which refused the
    table in its cell alone."""
    if options.repetition is None:
        return
    keys = [*present_by, options.group] + ([options.prompt] if options.prompt else [])
    if MENU_COLUMN in df.columns:  # a menu study numbers the repetitions of each menu
        keys.append(MENU_COLUMN)
    dup = np.flatnonzero(df.duplicated([*keys, options.repetition], keep="first").to_numpy())
    if len(dup):
        raise ValueError(column_error(
            options.repetition, f"identify each repetition once per "
            f"({', '.join(map(repr, keys))}): a table concatenated twice repeats every row, "
            "two models pooled into one cell repeat their contexts' labels (name their "
            "column in by), and so do prompts (name their column as prompt=, or pass "
            "prompt=None to pool them)", list(df.index[dup]), owner=owner))


def _check_lie_options(lie_options: Mapping[str, Any], owner: str) -> None:
    """The keys of ``lie_options`` are keywords of the LIE check, other than its table and
    ``rng`` (the cell's stream): a wrong one failed every cell with the same TypeError."""
    from .._probability._lie import iterated_expectation_check

    taken = [p for p in inspect.signature(iterated_expectation_check).parameters
             if p not in ("elicited", "rng")]
    wrong = [k for k in lie_options if k not in taken]
    if wrong:
        raise ValueError(param_error(
            "lie_options", owner, "keywords of iterated_expectation_check: "
            + ", ".join(taken) + " (the report gives each cell's rng)",
            "key(s) " + ", ".join(map(repr, wrong))))


def _unused_lie_warning(a: _ReportArgs, names: tuple[str, ...], owner: str) -> None:
    """Warn where ``lie=`` or ``lie_options=`` is given and not used (left out without a
    word, the LIE check looked run)."""
    if a.lie is not None and "lie" not in names:
        warnings.warn(f"{owner}: a lie table was given but 'lie' is not among the tests "
                      f"asked for ({', '.join(names)}): it is not checked. Add 'lie' to "
                      "tests, or leave lie out.", SkippedRecordsWarning, stacklevel=4)
    elif a.lie is None and a.lie_options:
        warnings.warn(f"{owner}: lie_options ({', '.join(map(str, a.lie_options))}) were "
                      "given without a lie table: they are not used. Pass the table as "
                      "lie=.", SkippedRecordsWarning, stacklevel=4)


def _table_iv(df: pd.DataFrame, a: _ReportArgs,
              owner: str) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The table with its shared columns checked (beliefs as floats, the user's action
    labels mapped) and the evidence columns."""
    evidence = evidence_columns(
        a.evidence if isinstance(a.evidence, str | Sequence) else tuple(a.evidence), owner
    )
    belief, action, outcome, group = a.belief, a.action, a.outcome, a.group
    require_design_columns(df, {"belief": belief, "group": group}, evidence, owner)
    # an optional column named on purpose (not its default name) must exist: a misspelt
    # one would silently pool the prompts or drop the tests that read it
    require_columns(df, {role: name for role, name in (
        ("action", action), ("outcome", outcome), ("prompt", a.prompt),
        ("repetition", a.repetition), ("truth", a.truth))
        if name is not None and name != role}, owner=owner)
    if outcome is None and action in df.columns:  # a KeyError of None before
        raise ValueError(param_error("outcome", owner, f"a column name while the table has "
                                     f"an action column ({action!r}): the action tests read "
                                     "both; pass action=None too to leave them out", None))
    if (action in df.columns) != (outcome in df.columns):
        missing = action if action not in df.columns else outcome
        require_columns(df, {"action" if missing == action else "outcome": missing}, owner=owner)
    nonempty(df, owner=owner)
    # validate the shared columns once, at the door, so a bad table fails with one
    # clear error instead of one recorded error per test and cell
    p = probability_column(df, belief, owner=owner)
    if a.actions is not None:
        df = map_actions(df, action, a.actions, owner)
    if action in df.columns:
        label_column(df, action, owner=owner, discrete=True)
        label_column(df, outcome, owner=owner, discrete=True)  # 1 / '1': raise, as ci_test
        y = binary_column(df, outcome, owner=owner)
        if not (pd.api.types.is_bool_dtype(df[outcome].dtype)
                or pd.api.types.is_integer_dtype(df[outcome].dtype)):
            # 1 and '1' (or 1.0) pass the check as one class: the tests read what it read
            df = df.assign(**{outcome: y})
    label_column(df, group, owner=owner)
    if df[belief].dtype != np.float64:
        # numbers written as text ('0.3') pass the check; every test then reads floats
        df = df.assign(**{belief: p})
    return df, evidence


def _tests_iv(df: pd.DataFrame, a: _ReportArgs, owner: str) -> tuple[str, ...]:
    """The tests asked for, after the reference prompt (on the table) and the adjustment
    are checked (the options' own rules are checked when they are merged)."""
    reference_prompt, prompt = a.options.reference_prompt, a.prompt
    if prompt is not None and prompt in df.columns:
        _check_reference_prompt(df, prompt, reference_prompt, owner)
    if a.tests == "all":
        names = TEST_NAMES
    else:
        names = (a.tests,) if isinstance(a.tests, str) else tuple(a.tests)
        if not names:  # else a report without a single test, silently
            raise ValueError(param_error("tests", owner, "'all' or a non-empty sequence of "
                                         "test names (" + ", ".join(TEST_NAMES) + ")",
                                         a.tests))
        for name in names:
            # 'all' is the whole menu as a string only: in a list it named no test, and
            # tests=["all"] gave a report without a single test
            if isinstance(name, str) and name == "all":
                raise ValueError(param_error("tests", owner, "the string 'all' or a sequence "
                                             "of test names (" + ", ".join(TEST_NAMES) + ")",
                                             a.tests))
            check_choice(name, "tests", owner, TEST_NAMES)
    check_choice(a.adjust, "adjust", owner, ADJUST_METHODS)
    return names


def _settings(df: pd.DataFrame, a: _ReportArgs, options: Options,
              present_by: tuple[str, ...], n_jobs: int | None) -> dict[str, Any]:
    """The report's ``settings`` record: the columns and options used, the seed, the
    data's provenance and the versions (``tests`` and ``created`` are filled later)."""
    rng = a.rng
    # a numpy integer seed (np.int64(7)) is a seed too: it was "not recorded", and the
    # rerun line printed SEED
    seed_source = (int(rng) if isinstance(rng, numbers.Integral) and not isinstance(rng, bool)
                   else None)
    return plain_labels({  # names given as np.str_ recorded as str
        "columns": {
            "belief": a.belief,
            "action": a.action,
            "outcome": a.outcome,
            "group": a.group,
            "prompt": options.prompt,
            "repetition": options.repetition,
            "truth": options.truth,
            "evidence": list(options.evidence),
        },
        "by": list(present_by),
        "actions": None if a.actions is None else dict(a.actions),
        "tests": [],
        # named by the caller (not "all"): summary() then says why one applied nowhere
        "tests_named": not (isinstance(a.tests, str) and a.tests == "all"),
        "adjust": a.adjust,
        "k": a.options.k,
        "n_permutations": options.n_permutations,
        "n_resamples": options.n_resamples,
        "n_splits": a.options.n_splits,
        "engine": a.options.engine,
        "n_bins": a.options.n_bins,
        "confidence_level": a.options.confidence_level,
        "reference_prompt": a.options.reference_prompt,
        "rng": seed_source if seed_source is not None else (
            "None (fresh entropy)" if rng is None else f"a {type(rng).__name__} (not recorded)"),
        "seed": seed_source,
        "data": _provenance(df, options),
        "n_jobs": n_jobs,
        "backend": a.options.backend,
        "versions": _versions(),
        "created": "",
    })


def _set_aside_iv(set_aside: Any, owner: str) -> pd.DataFrame | None:
    """The replies set aside before the table was written, as a table with a ``reason``
    column (and ``count`` when its rows are counts): checked here, split by cell later."""
    if set_aside is None:
        return None
    if isinstance(set_aside, Mapping):
        counts = set_aside_counts(set_aside, owner)
        return pd.DataFrame({"reason": list(counts), "count": list(counts.values())})
    frame = as_dataframe(set_aside, name="set_aside", owner=owner)
    set_aside_counts(frame, owner)  # the reason and count columns are valid
    return frame


def _draw_counts(n_permutations: Any, n_resamples: Any, owner: str) -> tuple[int, int]:
    """The (ci and leakage p-value draws, other resampling draws) of :func:`report`.

    ``n_resamples`` sets both; the deprecated ``n_permutations`` keeps its old meaning
    (the ci and leakage draws) for one release, with a :class:`DeprecationWarning`."""
    if n_resamples is not None:
        n_resamples = check_int(n_resamples, "n_resamples", owner, low=1)
    if n_permutations is not None:
        n_permutations = check_int(n_permutations, "n_permutations", owner, low=1)
        warnings.warn(
            "report(n_permutations=...) is deprecated and will be removed in the next "
            "release: use n_resamples, which sets the Monte Carlo draws of every test (the "
            "permutations of ci_test and leakage_test included), as the test functions "
            "name it", DeprecationWarning, stacklevel=4)
        return n_permutations, (DEFAULT_RESAMPLES if n_resamples is None else n_resamples)
    if n_resamples is None:
        return DEFAULT_PERMUTATIONS, DEFAULT_RESAMPLES
    return n_resamples, n_resamples


def _check_reference_prompt(df: pd.DataFrame, prompt: str, reference_prompt: str,
                            owner: str) -> None:
    """The reference prompt must label some rows, and prompt labels must not differ
    only in case: the decision tests run on the reference prompt's rows, and a label
    that matches nothing would leave them every prompt's rows, pooled."""
    no_missing(df, prompt, owner=owner)  # a row without a prompt would be left out silently
    check_case_distinct(df, prompt, owner=owner)
    labels = list(dict.fromkeys(df[prompt].dropna().astype(str)))
    if reference_prompt in labels:
        return
    near = [v for v in labels if v.strip().casefold() == reference_prompt.strip().casefold()]
    hint = (f" Did you mean {near[0]!r}? Labels are compared exactly, case included."
            if near else "")
    shown = listed(labels, 10, show=repr)
    raise ValueError(param_error(
        "reference_prompt", owner, f"a label of column '{prompt}' (the decision tests run on "
        f"its rows; found {shown})", reference_prompt) + hint)


def report(
    data: Any,
    *,
    belief: str = "belief",
    action: str = "action",
    outcome: str = "outcome",
    group: str = "context",
    prompt: str | None = "prompt",
    repetition: str | None = "repetition",
    truth: str | None = "truth",
    evidence: Iterable[str] = (),
    by: Sequence[str] | str = _DEFAULT_BY,
    tests: str | Sequence[str] = "all",
    adjust: str = "holm",
    options: ReportOptions | None = None,
    lie: Any = None,
    lie_options: Mapping[str, Any] | None = None,
    set_aside: Any = None,
    actions: Mapping[str, str] | None = None,
    rng: RNGLike = None,
    **overrides: Any,
) -> CoherenceReport:
    """Run every applicable coherence test on every (model, dataset) cell.

    The one call for a whole study: the belief/action table is split into cells (by
    model and dataset, those present), every test whose columns are present runs on each
    cell (conditional independence, leakage, monotonicity, prompt consistency, ...), and
    the p-values of the whole report are adjusted together (Holm by default). The report
    prints as a table, renders as HTML and records how to rerun it.

    Parameters
    ----------
    data : DataFrame
        The belief/action table (design notes, docs/design.md); see ``docs/tables.md``.
    belief, action, outcome, group, prompt, repetition, truth : str
        Column names. ``action``/``outcome``, ``prompt``, ``repetition`` and ``truth``
        are optional: tests that need them run only when they exist, and ``None`` turns
        one off (``action`` and ``outcome`` go together: turn the action off with
        ``action=None``, as ``outcome=None`` beside an action column raises). Under
        their default names they may be absent (``action`` and ``outcome`` both or
        neither: an action column without an outcome column raises); a name given on purpose
        (``prompt="variant"``) must exist, or ``ValueError`` names it (a misspelt one
        would pool the prompts or drop tests silently). A column named ``menu`` (the
        offered actions joined by ``"|"``, one row per elicitation under that menu)
        adds :func:`coherence.iia_test` (test ``"iia"``) to the report's family of
        p-values; the decision tests and ``prompt_consistency`` then read the rows
        offered the full menu. Without it the report is unchanged.
    evidence : iterable of str
        Evidence columns for the "with x" variants.
    by : sequence of str
        Columns that define cells. The default ones, ``model`` and ``dataset``, are
        ignored when absent; any other column named must exist, or ``ValueError``
        names it. A column named like one of ``to_frame()``'s (``method``,
        ``test``, ``error``, ...) raises ``ValueError``: rename it. A missing or
        blank label (``''``, spaces only) in one raises ``ValueError`` naming the rows.
    tests : "all" or sequence of str
        A non-empty subset of :data:`TEST_NAMES`; a test named twice runs once (one
        row per cell, counted once in the adjustment's family).
    adjust : {"holm", "bh", "none"}
        Multiplicity adjustment of the p-values across the whole report (every
        cell and test with a p-value): Holm's step-down (default, controls the
        family-wise error rate), Benjamini-Hochberg (``"bh"``, the false
        discovery rate) or none. Raw p-values are kept next to the adjusted ones
        (``to_frame()`` columns ``pvalue`` and ``pvalue_adjusted``).
    options : ReportOptions, optional
        The settings passed to the tests (``n_resamples``, ``reference_prompt``,
        ``k``, ``n_splits``, ``engine``, ``n_bins``, ``confidence_level``) and how
        the cells run (``n_jobs``, ``backend``, ``progress``); each field is
        documented on :class:`ReportOptions`. Default ``ReportOptions()``.
    **overrides
        Any field of :class:`ReportOptions` by keyword (``n_resamples=199``,
        ``n_jobs=2``, ``reference_prompt="plain"``, ...): it replaces that field of
        ``options``. A misspelt name is a ``TypeError`` naming the closest field.
        ``n_permutations`` (deprecated, use ``n_resamples``): the draws of the
        ``ci`` and ``leakage`` p-values only (the other tests then take
        ``n_resamples``, default 500), accepted with a :class:`DeprecationWarning`
        for one release.
    lie : DataFrame, optional
        The law-of-iterated-expectation long table of
        :func:`coherence.iterated_expectation_check` (one row per context,
        auxiliary variable and state; e.g. ``bayesnets.lie_study(...).data``).
        When it has the ``by`` columns it is split into the same cells;
        otherwise it is checked once, in a cell of its own. Given while ``tests``
        leaves ``'lie'`` out, it is not checked, and a
        :class:`SkippedRecordsWarning` says so (as for ``lie_options`` without it).
    lie_options : mapping, optional
        Keyword arguments for :func:`coherence.iterated_expectation_check`
        (``baseline=``, or ``ground_truth=``, ``contexts=``, ``evidence=``, ...; not
        ``rng``, which is the report's); its ``confidence_level`` and ``n_resamples``
        are the report's unless named here (without ``n_resamples`` in either, the
        check's own 9999: its p-value is not rerun by the report's second stage). A
        key the check does not take is refused before any test runs.
    set_aside : DataFrame, mapping or None
        Replies left out of the table before it was written (parse failures,
        probabilities that did not sum to 1): one row per reply with a
        ``reason`` column (``coherence elicit``'s ``*_incoherent.csv``), a
        table of ``reason`` and ``count``, or ``{reason: count}``. Counted by
        reason in each cell's :func:`coherence.elicitation_diagnostics`
        (split by the ``by`` columns, which a table must then have; replies
        whose labels name no cell are counted in none, with a
        :class:`SkippedRecordsWarning` naming them).
    actions : mapping, optional
        Your action labels, mapped to the tests' ``"yes"``, ``"no"`` and
        ``"defer"``: ``{"yes": "buy", "no": "sell", "defer": "hold"}`` (any of
        the three keys; the command line's ``--actions yes=buy,no=sell``). Every
        label of the ``action`` column must be mapped or already be one of the
        three (a ``ValueError`` names the others and their row counts). Recorded
        in ``settings["actions"]``.
    rng : int, Generator or None
        One seed for everything; each cell and test gets its own spawned
        stream, so results do not depend on ``n_jobs``.

    Returns
    -------
    CoherenceReport
        Each cell also holds :func:`coherence.elicitation_diagnostics` of its
        rows (``cell.diagnostics``); a cell whose beliefs are degenerate (one
        value, or mostly the prompt's example value 0.5) is flagged on the
        report's first screen and in ``to_frame()``'s ``degenerate_elicitation``.

    Warns
    -----
    DegenerateDataWarning
        When a cell's beliefs are degenerate: the tests cannot speak to
        coherence on such data.

    Raises
    ------
    ValueError
        For an empty table, a bad column (named with its offending rows), a
        ``reference_prompt`` that labels no row, an action label that
        ``actions`` leaves unmapped, or a bad setting.

    Warns
    -----
    DeprecationWarning
        When ``n_permutations`` is given (use ``n_resamples``).
    TypeError
        For a setting of the wrong type (``by=3``).

    See Also
    --------
    ci_test, leakage_test : does the action carry information beyond the belief.
    monotonicity_test : are choice shares monotone in the belief.
    prompt_consistency : does the belief move with the wording.
    elicitation_diagnostics : are the stated beliefs informative at all.
    plan : how many contexts and repetitions a study needs.
    """
    n_permutations = overrides.pop("n_permutations", None)
    merged = merge_record(ReportOptions, options, overrides, "report", check_report_options)
    iv = _report_iv(data, _ReportArgs(
        belief=belief, action=action, outcome=outcome, group=group, prompt=prompt,
        repetition=repetition, truth=truth, evidence=evidence, by=by, tests=tests,
        adjust=adjust, options=merged, n_permutations=n_permutations, lie=lie,
        lie_options=lie_options, set_aside=set_aside, rng=rng, actions=actions))
    rep = _report(iv)
    degenerate = [c for c in rep.cells if c.diagnostics is not None and c.diagnostics.degenerate]
    if degenerate:
        from .._warnings import DegenerateDataWarning

        where = "; ".join(f"{cell_label(c.key)}: {c.diagnostics.degenerate_reason}"
                          for c in degenerate
                          if c.diagnostics is not None)
        warnings.warn(f"Degenerate elicitation in {len(degenerate)} of {len(rep.cells)} "
                      f"cell(s) ({where}). The coherence tests cannot speak to coherence on "
                      "such data: their p-values say nothing about whether the beliefs are "
                      "coherent.", DegenerateDataWarning, stacklevel=2)
    return rep


def _report(iv: _ReportInput) -> CoherenceReport:
    """Split the validated table into cells, run every applicable test on each (in
    parallel with joblib, a tqdm bar when shown) and assemble the report."""
    df, present_by, options = iv.df, iv.present_by, iv.options
    if present_by:
        groups = list(df.groupby(list(present_by), sort=True, observed=True, dropna=False))
        keyed = [
            (dict(zip(present_by, key if isinstance(key, tuple) else (key,), strict=True)), part)
            for key, part in groups
        ]
    else:
        keyed = [({}, df)]
    lie_parts: list[pd.DataFrame | None] = [None] * len(keyed)
    lie_df = iv.lie
    if lie_df is not None:
        if present_by and all(c in lie_df.columns for c in present_by):
            lie_parts = split_lie(lie_df, keyed, present_by)
        elif len(keyed) == 1:
            lie_parts[0] = lie_df
        else:
            keyed.append((lie_cell(keyed, present_by), df.iloc[:0]))
            lie_parts.append(lie_df)
    lie_options: list[dict[str, Any]] = [dict(iv.lie_options) for _ in keyed]
    baseline = iv.lie_options.get("baseline")
    if (lie_df is not None and present_by and isinstance(baseline, pd.DataFrame)
            and all(c in baseline.columns and c in lie_df.columns for c in present_by)):
        # a baseline per cell, as the LIE table's rows are
        split = split_lie_baseline(baseline, keyed, present_by, lie_parts)
        for opts, rows in zip(lie_options, split, strict=True):
            opts["baseline"] = rows
    set_aside_parts = split_set_aside(iv.set_aside, keyed, present_by)
    streams = spawn(iv.gen, len(keyed))
    specs = [s for s in REGISTRY if s.name in iv.names]

    jobs = [
        # test names, not specs, travel to the workers: the registry's lambdas do not
        # pickle with the standard library (multiprocessing backend)
        (key, part, tuple(s.name for s in specs), options, stream, lie_part, lie_opts,
         set_aside_part)
        for (key, part), stream, lie_part, lie_opts, set_aside_part in zip(
            keyed, streams, lie_parts, lie_options, set_aside_parts, strict=True)
    ]
    # the cells' streams as they are before any draw: a p-value resolved with more draws
    # reruns its test from the same stream (the same statistic, folds and all)
    fresh = [copy.deepcopy(stream) for stream in streams]
    cells, used_backend, used_jobs, threads = _run_jobs(jobs, iv.n_jobs, iv.backend,
                                                        iv.progress)
    # p-values at their Monte Carlo floor get the draws the adjustment needs (valid: a
    # second stage with new draws; see _resolve.py)
    resolved, n_resolved = resolve_pvalues(list(cells), [part for _, part in keyed],
                                           options, str(iv.settings.get("adjust", "none")),
                                           fresh)
    settings = {**iv.settings, "tests": [s.name for s in specs], "backend": used_backend,
                "resolved_pvalues": n_resolved,
                "n_jobs": used_jobs, "numba_threads_per_cell": threads,
                "created": datetime.now(UTC).isoformat(timespec="seconds")}
    return CoherenceReport(cells=tuple(resolved), by=present_by, settings=settings)


#: Run each cell's tests with one BLAS thread (False: the library default, for the
#: before/after benchmark).
BLAS_ONE_THREAD = True

#: joblib backend classes and the names they are registered under
_BACKEND_NAMES = {"LokyBackend": "loky", "ThreadingBackend": "threading",
                  "MultiprocessingBackend": "multiprocessing",
                  "SequentialBackend": "sequential", "DaskDistributedBackend": "dask",
                  "RayBackend": "ray"}


def cell_threads(n_workers: int) -> int | None:
    """numba threads for each cell's permutation loops when ``n_workers`` cells run at
    once: this process's numba threads, or the cores shared out among the workers when
    that is fewer (at least 1), so that workers x threads never exceeds the machine (a
    loky worker would otherwise start a thread per core). None for one worker: the
    cells run here with the threads as set."""
    if n_workers <= 1:
        return None
    import numba

    cores = os.cpu_count() or 1
    return max(1, min(numba.get_num_threads(), cores // n_workers))


def _run_jobs(jobs: list[tuple[Any, ...]], n_jobs: int | None, backend: str | None,
              progress: bool) -> tuple[tuple[ReportCell, ...], str, int, int | None]:
    """Run the cells' jobs (the arguments of :func:`_run_cell`) with joblib: results in
    the order of ``jobs``, the name of the backend that ran them, its number of workers
    and the numba threads each cell ran with (:func:`cell_threads`).

    ``backend`` goes through :func:`joblib.parallel_config`, which registers joblib's
    external backends (``"dask"``) on first use; ``None`` keeps an enclosing
    configuration. Results stream back as a generator (for the progress bar) where
    the backend supports it, as a list otherwise (``multiprocessing``, ray). The
    ``multiprocessing`` backend starts its workers with ``forkserver`` (``spawn`` where
    that is missing), never ``fork``.
    """
    from contextlib import nullcontext

    from joblib import Parallel
    from joblib import delayed
    from joblib import parallel_config

    context = nullcontext() if backend is None else parallel_config(backend=backend)
    with context:
        try:
            runner = Parallel(n_jobs=n_jobs, return_as="generator")
        except ValueError as exc:  # the backend cannot stream results
            if "return_as" not in str(exc):
                raise
            runner = Parallel(n_jobs=n_jobs, return_as="list")
        used = runner._backend  # joblib exposes no public accessor
        if type(used).__name__ == "MultiprocessingBackend":
            # a forked child of a process whose numba kernels started OpenMP threads
            # aborts ("fork() called from a process already using GNU OpenMP")
            import multiprocessing

            method = ("forkserver" if "forkserver" in multiprocessing.get_all_start_methods()
                      else "spawn")
            runner = Parallel(n_jobs=runner.n_jobs, backend=multiprocessing.get_context(method),
                              return_as="list")
            used = runner._backend
        used_jobs = int(used.effective_n_jobs(runner.n_jobs))
        threads = cell_threads(min(used_jobs, len(jobs)))
        results = runner(delayed(_run_cell)(*job, numba_threads=threads) for job in jobs)
        if progress:
            from tqdm.auto import tqdm

            results = tqdm(results, total=len(jobs), desc="coherence cells", file=sys.stderr)
        cells = tuple(results)
    # the backend falls back to sequential when it has one worker
    used = getattr(runner, "_backend", used)
    name = _BACKEND_NAMES.get(type(used).__name__, type(used).__name__)
    return cells, name, 1 if name == "sequential" else used_jobs, threads


def _run_cell(
    key: Mapping[str, Any],
    part: pd.DataFrame,
    names: Sequence[str],
    options: Options,
    stream: np.random.Generator,
    lie_part: pd.DataFrame | None = None,
    lie_options: Mapping[str, Any] | None = None,
    set_aside: pd.DataFrame | None = None,
    numba_threads: int | None = None,
) -> ReportCell:
    """One cell's tests; ``numba_threads`` for their permutation loops (None: as set)."""
    if numba_threads is None:
        return _cell_tests(key, part, names, options, stream, lie_part, lie_options,
                           set_aside)
    import numba

    before = numba.get_num_threads()
    numba.set_num_threads(min(numba_threads,
                              numba.config.NUMBA_NUM_THREADS))  # type: ignore[attr-defined]
    try:
        return _cell_tests(key, part, names, options, stream, lie_part, lie_options,
                           set_aside)
    finally:
        numba.set_num_threads(before)


def _cell_tests(
    key: Mapping[str, Any],
    part: pd.DataFrame,
    names: Sequence[str],
    options: Options,
    stream: np.random.Generator,
    lie_part: pd.DataFrame | None,
    lie_options: Mapping[str, Any] | None,
    set_aside: pd.DataFrame | None = None,
) -> ReportCell:
    results: dict[str, CoherenceResult] = {}
    errors: dict[str, str] = {}
    notes: dict[str, tuple[str, ...]] = {}
    test_streams = spawn(stream, len(REGISTRY))
    by_name = {s.name: g for s, g in zip(REGISTRY, test_streams, strict=True)}
    from contextlib import nullcontext

    from threadpoolctl import threadpool_limits

    # one BLAS thread: the tests' models are small (n x 30), and a multi-threaded BLAS on
    # them is slower, up to 5x for ci_test's L-BFGS fits on a busy machine
    with threadpool_limits(1, user_api="blas") if BLAS_ONE_THREAD else nullcontext():
        for spec in (s for s in REGISTRY if s.name in names):
            is_lie = spec.name == "lie"
            if (is_lie and lie_part is None) or (
                not is_lie and not (len(part) and spec.applies(part, options))
            ):
                continue
            # each thread's own warnings, also when cells run at once in threads
            with recorded_warnings() as caught:
                try:
                    if is_lie:
                        from .._probability._lie import iterated_expectation_check

                        # the report's level, unless lie_options names its own
                        lie_kw = {"confidence_level": options.confidence_level,
                                  **dict(lie_options or {})}
                        results[spec.name] = iterated_expectation_check(
                            lie_part, **lie_kw, rng=by_name[spec.name])
                    else:
                        results[spec.name] = spec.run(part, options, by_name[spec.name])
                except (ValueError, TypeError) as exc:
                    errors[spec.name] = f"{type(exc).__name__}: {exc}"
            if caught:
                notes[spec.name] = tuple(
                    dict.fromkeys(f"{w.category.__name__}: {w.message}" for w in caught)
                )
    return ReportCell(key=dict(key), n_obs=len(part), results=results, errors=errors, notes=notes,
                      diagnostics=_cell_diagnostics(part, options, set_aside))


def _cell_diagnostics(part: pd.DataFrame, options: Options,
                      set_aside: pd.DataFrame | None) -> ElicitationDiagnostics | None:
    """The cell's elicitation diagnostics (None for a cell without rows: the LIE table's
    own cell); the degenerate flag is stored, and warned about once by :func:`report`."""
    if not len(part):
        return None
    return diagnose(part, belief=options.belief, action=options.action, truth=options.truth,
                    outcome=options.outcome, set_aside=set_aside)


def _provenance(df: pd.DataFrame, options: Options) -> dict[str, Any]:
    """What the report was computed from: the table's size and content hash, the
    prompt variants, the cells' models, and the columns holding one value throughout
    (an elicitation's model name, temperature, ...)."""
    import hashlib

    digest = hashlib.sha256(pd.util.hash_pandas_object(df, index=False).to_numpy().tobytes())
    constant = {}
    for col in df.columns[:200]:
        values = df[col].dropna().unique()
        if len(values) == 1 and col not in (options.belief, options.action, options.outcome):
            constant[str(col)] = values[0].item() if hasattr(values[0], "item") else values[0]
    prompts = (sorted(map(str, df[options.prompt].dropna().unique()))
               if options.prompt is not None else [])
    models = (sorted(map(str, df["model"].dropna().unique()))
              if "model" in df.columns else [])
    return {"n_rows": len(df), "columns": [str(c) for c in df.columns],
            "content_sha256": digest.hexdigest(), "prompts": prompts, "models": models,
            "constant_columns": constant}


def _versions() -> dict[str, str]:
    from importlib import metadata

    out = {"python": platform.python_version()}
    for name in (
        "belief-coherence",
        "numpy",
        "scipy",
        "pandas",
        "numba",
        "scikit-learn",
        "statsmodels",
        "catboost",
        "pgmpy",
    ):
        try:
            out[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            out[name] = "not installed"
    return out


