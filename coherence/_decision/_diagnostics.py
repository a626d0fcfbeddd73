"""What a belief/action table says before any test is run on it: elicitation diagnostics.

A coherence test asks whether stated beliefs behave like beliefs. On a table whose
beliefs carry no information (every belief the same number, or the number the
prompt showed as its example format) every test passes trivially: a large p-value
then says nothing about coherence. :func:`elicitation_diagnostics` describes the
stated beliefs (distinct values, share at the prompt's example value and at 0.5,
heaping), their association with the truth or the outcome, the action mix and the
replies set aside before the table was written, and flags such a table as
degenerate. :func:`coherence.report` computes it for every cell.
"""

from __future__ import annotations

import dataclasses
import math
import warnings
from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import ClassVar

import numpy as np
import pandas as pd

from .._parameters import check_float
from .._results import Summary
from .._results import format_number
from .._validation import DECIMAL_SLACK
from .._validation import MAX_ROWS_SHOWN
from .._validation import as_dataframe
from .._validation import column_error
from .._validation import first_of
from .._validation import nonempty
from .._validation import numeric_column
from .._validation import param_error
from .._validation import plain_value
from .._validation import probability_column
from .._validation import require_columns
from .._warnings import DegenerateDataWarning
from .._warnings import SkippedRecordsWarning

__all__ = ["ElicitationDiagnostics", "diagnose", "elicitation_diagnostics", "set_aside_counts"]

#: Beliefs within this distance of the example value (or of 0.5) count as that value:
#: half a unit of the example's last printed digit (the prompts print ``0.50``).
EXAMPLE_TOLERANCE = 0.005
#: Beliefs spanning at most this range count as one value.
ONE_VALUE_RANGE = 0.01

_EMPTY: Mapping[str, int] = {}


@dataclass(frozen=True, slots=True)
class ElicitationDiagnostics:
    """Result of :func:`elicitation_diagnostics`: a description, not a test.

    Attributes
    ----------
    n_obs : int
        Rows (stated beliefs) described.
    n_distinct : int
        Distinct belief values.
    belief_min, belief_max, belief_std : float
        Range and standard deviation of the beliefs.
    modal_belief, modal_share : float
        The most frequent belief and the share of rows that state it.
    example_value : float
        The value the prompt shows in its example answer (0.5 for the
        published prompts' ``Yes: 0.50``).
    share_example : float
        Share of beliefs within 0.005 of ``example_value``.
    share_half : float
        Share of beliefs within 0.005 of 0.5.
    share_tenths : float
        Heaping: share of beliefs on a multiple of 0.1.
    association : float
        Spearman rank correlation of the belief with ``association_with``
        (the truth column when present, else the outcome); NaN without
        either, or when one of them is constant.
    association_with : str
        The column ``association`` was computed against (``''``: none).
    token_association : float
        The same correlation for the token-probability belief (NaN without
        one).
    action_counts : Mapping[str, int]
        Rows per action label (empty without an action column); labels that
        print alike but differ (``1`` and ``'1'``) are counted apart, named by
        their ``repr``.
    set_aside : Mapping[str, int]
        Replies left out of the table before it was written (parse failures,
        replies whose probabilities did not sum to 1, ...), by reason.
    degenerate : bool
        The beliefs carry no usable variation: they span at most 0.01, or
        more than ``max_example_share`` of them are the prompt's example
        value. The coherence tests cannot speak to coherence on such data.
    degenerate_reason : str
        Why the table is degenerate (``''`` when it is not).
    """

    n_obs: int
    n_distinct: int
    belief_min: float
    belief_max: float
    belief_std: float
    modal_belief: float
    modal_share: float
    example_value: float
    share_example: float
    share_half: float
    share_tenths: float
    association: float
    association_with: str
    token_association: float
    action_counts: Mapping[str, int] = field(default_factory=dict)
    set_aside: Mapping[str, int] = field(default_factory=dict)
    degenerate: bool = False
    degenerate_reason: str = ""

    #: Name of the calculation, first column of ``to_frame()``.
    _name: ClassVar[str] = "elicitation_diagnostics"

    @property
    def n_set_aside(self) -> int:
        """Replies set aside, all reasons together."""
        return int(sum(self.set_aside.values()))

    @property
    def warning(self) -> str:
        """The sentence shown when the table is degenerate (``''`` otherwise)."""
        if not self.degenerate:
            return ""
        return (f"Degenerate elicitation: {self.degenerate_reason}. The coherence tests "
                "cannot speak to coherence on such data: a large p-value here means the "
                "beliefs carry no information, not that they are coherent.")

    @classmethod
    def frame_columns(cls) -> tuple[str, ...]:
        """The fixed column schema of :meth:`to_frame`."""
        scalar = [f.name for f in dataclasses.fields(cls)
                  if f.name not in ("action_counts", "set_aside")]
        return ("calculation", *scalar, "actions", "n_set_aside", "set_aside")

    def to_frame(self) -> pd.DataFrame:
        """One row: ``calculation`` (``'elicitation_diagnostics'``), every number, the
        action mix and the set-aside replies as text (``'defer 75, yes 10'``)."""
        row: dict[str, Any] = {"calculation": self._name}
        for f in dataclasses.fields(self):
            if f.name not in ("action_counts", "set_aside"):
                row[f.name] = getattr(self, f.name)
        row["actions"] = _counts_text(self.action_counts)
        row["n_set_aside"] = self.n_set_aside
        row["set_aside"] = _counts_text(self.set_aside)
        return pd.DataFrame([row], columns=list(self.frame_columns()))

    @property
    def table(self) -> pd.DataFrame:
        """Long table ``section`` (``'action'``, ``'set aside'``), ``value``, ``count``,
        ``share``: every action, every reason a reply was set aside."""
        rows = []
        for section, counts in (("action", self.action_counts),
                                ("set aside", self.set_aside)):
            total = sum(counts.values())
            rows += [(section, str(k), int(v), v / total if total else math.nan)
                     for k, v in counts.items()]
        return pd.DataFrame(rows, columns=["section", "value", "count", "share"])

    def _repr_html_(self) -> str:
        """The :meth:`summary` as HTML tables (how Jupyter shows a result)."""
        return self.summary()._repr_html_()

    def summary(self) -> Summary:
        """The diagnostics formatted, the degenerate-data warning first."""
        title = f"{self._name}: {self.n_obs} stated beliefs"
        rows = [
            ("distinct beliefs", str(self.n_distinct)),
            ("range", f"[{format_number(self.belief_min)}, {format_number(self.belief_max)}]"),
            ("most frequent", f"{format_number(self.modal_belief)} "
                              f"({self.modal_share:.0%} of rows)"),
            (f"at the example value {format_number(self.example_value)}",
             f"{self.share_example:.0%}"),
            *([("at 0.5", f"{self.share_half:.0%}")] if self.example_value != 0.5 else []),
            ("on a multiple of 0.1", f"{self.share_tenths:.0%}"),
            (f"rank correlation with {self.association_with or 'truth'}",
             format_number(self.association)),
        ]
        if not math.isnan(self.token_association):
            rows.append(("token belief's rank correlation", format_number(
                self.token_association)))
        if self.action_counts:
            rows.append(("actions", _counts_text(self.action_counts)))
        rows.append(("set aside", _counts_text(self.set_aside) or "none"))
        lines = [title]
        if self.degenerate:
            lines.append("WARNING: " + self.warning)
        lines += [f"  {k:<34} {v}" for k, v in rows]
        return Summary("\n".join(lines), title=title, rows=rows,
                       tables=[("counts", self.table)] if len(self.table) else [])


def _counts_text(counts: Mapping[str, int]) -> str:
    return ", ".join(f"{k} {v}" for k, v in counts.items())


def set_aside_counts(set_aside: Any, owner: str) -> dict[str, int]:
    """Counts by reason from a mapping ``{reason: count}`` or a table with a ``reason``
    column (and a ``count`` column when its rows are counts, as ``result.failures``)."""
    if set_aside is None:
        return {}
    if isinstance(set_aside, Mapping):
        out: dict[str, int] = {}
        for k, v in set_aside.items():
            if isinstance(v, bool) or not isinstance(v, int | np.integer) or v < 0:
                raise ValueError(param_error("set_aside", owner, "a mapping of reason to a "
                                             "count (int >= 0)", {k: v}))
            if v:
                out[str(k)] = out.get(str(k), 0) + int(v)
        return out
    if not isinstance(set_aside, pd.DataFrame):
        raise TypeError(param_error("set_aside", owner, "None, a mapping of reason to count "
                                    "or a DataFrame with a 'reason' column", set_aside))
    if "reason" not in set_aside.columns:
        raise ValueError(param_error("set_aside", owner, "a table with a 'reason' column",
                                     first_of(list(map(str, set_aside.columns)), 10)))
    if not len(set_aside):
        return {}
    reasons = set_aside["reason"].fillna("unknown").astype(str)
    if "count" in set_aside.columns:
        counts = pd.to_numeric(set_aside["count"], errors="coerce")
        bad = counts.isna() | (counts < 0) | (counts != counts.round())
        if bad.any():  # the values as given: 'abc' and 1.5, not NaN and nothing
            raise ValueError(param_error("set_aside", owner, "a 'count' column of counts "
                                         "(int >= 0)", first_of(set_aside["count"][bad])))
        grouped = counts.groupby(reasons, sort=True).sum()
    else:
        grouped = reasons.value_counts().sort_index()
    return {str(k): int(v) for k, v in grouped.items() if v}


@dataclass(frozen=True, slots=True)
class _DiagnosticsInput:
    belief: np.ndarray
    token: np.ndarray | None
    truth: np.ndarray | None
    truth_name: str
    actions: pd.Series | None
    example_value: float
    max_example_share: float
    set_aside: dict[str, int]


def _elicitation_diagnostics_iv(data: Any, belief: str, action: str | None,
                                truth: str | None, outcome: str | None,
                                token_belief: str | None, example_value: Any,
                                max_example_share: Any, set_aside: Any) -> _DiagnosticsInput:
    owner = "elicitation_diagnostics"
    df = as_dataframe(data, owner=owner)
    require_columns(df, {"belief": belief}, owner=owner)
    nonempty(df, owner=owner)
    for name, value in (("action", action), ("truth", truth), ("outcome", outcome),
                        ("token_belief", token_belief)):
        if value is not None and not isinstance(value, str):
            raise TypeError(param_error(name, owner, "a column name or None", value))
    # an optional column named on purpose (not its default name) must exist: a misspelt one
    # would silently leave the action mix or the association out
    require_columns(df, {name: value for name, value in (
        ("action", action), ("truth", truth), ("outcome", outcome),
        ("token_belief", token_belief)) if value is not None and value != name}, owner=owner)
    b = probability_column(df, belief, owner=owner)
    example = check_float(example_value, "example_value", owner, low=0.0, high=1.0)
    share = check_float(max_example_share, "max_example_share", owner, low=0.0, high=1.0)
    present = {name: column for name, column in (
        ("truth", truth), ("outcome", outcome), ("token_belief", token_belief))
        if column is not None and column in df.columns}
    read = {name: _association_column(df, column, name, owner)
            for name, column in present.items()}
    against: np.ndarray | None = None
    against_name = ""
    for name in ("truth", "outcome"):  # a truth column without a single value: the outcome
        if name in read and not np.isnan(read[name]).all():
            against, against_name = read[name], str(present[name])  # not a np.str_
            break
    token = read.get("token_belief")
    token = None if token is None or np.isnan(token).all() else token
    # the columns a correlation reads: the outcome beside a truth column, or a token
    # belief with nothing to correlate it with, leaves no row out of anything
    used = {} if against is None else {against_name: against}
    if token is not None and against is not None:
        used[present["token_belief"]] = token
    _warn_missing(df, used, owner)
    actions = (df[action] if action is not None and action in df.columns else None)
    return _DiagnosticsInput(belief=b, token=token, truth=against, truth_name=against_name,
                             actions=actions, example_value=example,
                             max_example_share=share,
                             set_aside=set_aside_counts(set_aside, owner))


def _association_column(df: pd.DataFrame, column: str, role: str, owner: str) -> np.ndarray:
    """A truth or token-belief column as probabilities, an outcome column as 0/1 (bools
    read as 0/1, as everywhere an outcome is read); missing values kept as NaN (they are
    counted and warned about), anything else raises naming the rows."""
    s = df[column]
    if role == "outcome" and (pd.api.types.is_bool_dtype(s.dtype) or (
            pd.api.types.is_object_dtype(s.dtype) and s.notna().any() and all(
                isinstance(v, bool | np.bool_) for v in s.dropna().to_numpy(dtype=object)))):
        return np.where(s.isna().to_numpy(), np.nan,
                        s.fillna(False).to_numpy(dtype=bool).astype(float))
    if role == "outcome":
        raw = s.to_numpy(dtype=object)
        numbers = pd.to_numeric(s.astype(object), errors="coerce").to_numpy(dtype=float)
        known = s.notna().to_numpy()
        bad = np.flatnonzero(known & ~np.isin(numbers, (0.0, 1.0)))
        if len(bad):  # 'yes'/'no' is not read as 1/0: no outcome column anywhere reads it
            raise ValueError(column_error(
                column, "be binary (0 or 1, or bools; map a yes/no text outcome to 1/0 "
                "first)", [plain_value(v) for v in df.index[bad]],
                [plain_value(v) for v in raw[bad]], owner=owner))
        return np.where(known, numbers, np.nan)
    values = numeric_column(df, column, owner=owner, allow_nan=True)
    bad = np.flatnonzero(~np.isnan(values) & ((values < 0.0) | (values > 1.0)))
    if len(bad):
        raise ValueError(column_error(column, "hold probabilities in [0, 1]",
                                      [plain_value(v) for v in df.index[bad]],
                                      values[bad].tolist(), owner=owner))
    return values


def _warn_missing(df: pd.DataFrame, read: Mapping[str, np.ndarray], owner: str) -> None:
    """A SkippedRecordsWarning naming the rows each association leaves out: a missing
    truth, outcome or token belief is left out of the rank correlations, never silently."""
    parts = []
    for column, values in read.items():
        rows = np.flatnonzero(np.isnan(values))
        # a column empty on every row is not used (no logprobs asked for: an elicited
        # table's token_belief), which leaves no row out of anything
        if 0 < len(rows) < len(values):
            shown = ", ".join(f"row {plain_value(v)!r}"
                              for v in df.index[rows[:MAX_ROWS_SHOWN]])
            more = ", ..." if len(rows) > MAX_ROWS_SHOWN else ""
            parts.append(f"column '{column}' is missing on {len(rows)} of {len(values)} "
                         f"rows (first: {shown}{more})")
    if parts:
        warnings.warn(f"{owner}: " + "; ".join(parts) + ". Those rows are left out of the "
                      "rank correlations (association, token_association).",
                      SkippedRecordsWarning, stacklevel=5)


def _rank_correlation(x: np.ndarray, y: np.ndarray) -> float:
    """Spearman's rank correlation over the rows where both are finite (NaN when
    fewer than 3 such rows or either is constant there)."""
    keep = np.isfinite(x) & np.isfinite(y)
    if keep.sum() < 3:
        return math.nan
    xs, ys = pd.Series(x[keep]), pd.Series(y[keep])
    if xs.nunique() < 2 or ys.nunique() < 2:
        return math.nan
    return float(xs.rank().corr(ys.rank()))


def _value_classes(actions: pd.Series) -> tuple[np.ndarray, np.ndarray] | None:
    """The first row and the number of rows of each class of rows that hold one value of
    one type, in order of first appearance: for categories, text, integers, booleans and
    floats (by their bits: ``-0.0`` and ``0.0`` apart); None for other columns (in an
    object column ``1``, ``1.0`` and ``True`` are equal, and would be pooled)."""
    dtype = actions.dtype
    if isinstance(dtype, pd.CategoricalDtype):
        codes = actions.cat.codes.to_numpy()
    elif isinstance(dtype, pd.StringDtype) or (isinstance(dtype, np.dtype)
                                               and dtype.kind in "iub"):
        codes = pd.factorize(actions)[0]  # missing: -1
    elif isinstance(dtype, np.dtype) and dtype.kind == "f":
        bits = np.ascontiguousarray(actions.to_numpy()).view(f"i{dtype.itemsize}")
        codes = pd.factorize(bits)[0]
    else:
        return None
    _, first, sizes = np.unique(codes, return_index=True, return_counts=True)
    order = np.argsort(first, kind="stable")
    return first[order], sizes[order]


def _action_counts(actions: pd.Series) -> dict[str, int]:
    """Rows per action label, most frequent first (ties in order of appearance), missing
    ones as ``'(missing)'``. Labels that print alike but differ (``1`` and ``'1'``, ``True``
    and ``'True'``) are counted apart, named by their ``repr``; ``str`` pooled them."""
    # each distinct value read once (a Python step per row took 0.5 s on 100,000 rows)
    classes = _value_classes(actions)
    if classes is None:
        rows, sizes = actions.to_numpy(dtype=object), [1] * len(actions)
    else:
        rows, sizes = actions.iloc[classes[0]].to_numpy(dtype=object), classes[1].tolist()
    counts: dict[tuple[str, str], int] = {}
    first: dict[tuple[str, str], Any] = {}
    for row, size in zip(rows, sizes, strict=True):
        v = "(missing)" if pd.isna(row) else plain_value(row)
        key = (type(v).__name__, str(v))  # keyed by type as well: 1 == True == 1.0 in a dict
        counts[key] = counts.get(key, 0) + size
        first.setdefault(key, v)
    texts = Counter(text for _, text in counts)
    named = {key: repr(first[key]) if texts[key[1]] > 1 else key[1] for key in counts}
    order = sorted(counts, key=lambda key: -counts[key])  # stable: first seen first
    return {named[key]: counts[key] for key in order}


def elicitation_diagnostics(
    data: Any,
    *,
    belief: str = "belief",
    action: str | None = "action",
    truth: str | None = "truth",
    outcome: str | None = "outcome",
    token_belief: str | None = "token_belief",
    example_value: float = 0.5,
    max_example_share: float = 0.5,
    set_aside: Any = None,
) -> ElicitationDiagnostics:
    """Describe a belief/action table's stated beliefs and flag a degenerate elicitation.

    Run it before any coherence test. On a table whose beliefs barely vary (one value,
    or mostly the prompt's example value) conditional independence, no leakage and
    monotonicity hold trivially, and their large p-values say nothing; this reports the
    beliefs' range, spread and heaping, their rank association with the truth or the
    outcome and the action mix, and flags such a table as degenerate.

    Parameters
    ----------
    data : DataFrame
        The belief/action table (one row per stated belief).
    belief : str
        Column of stated probabilities (required).
    action, truth, outcome, token_belief : str or None
        Optional columns, used when present: the action (its mix is counted),
        the true probability or else the outcome (the beliefs' association
        with it), and the token-probability belief. Under their default names
        they may be absent; a name given on purpose (``action="choice"``) must
        exist, or ``ValueError`` names it. ``None`` turns one off. ``truth`` and
        ``token_belief`` hold probabilities in [0, 1] and ``outcome`` 0/1 (or
        bools; a yes/no text outcome is not read, as no outcome column in the
        package reads it): any other value raises ``ValueError`` naming the
        column and rows. A missing value of a column a rank correlation reads
        (the truth, else the outcome; the token belief beside one of them) leaves
        its row out of it, with a ``SkippedRecordsWarning`` that counts and names
        the rows (the outcome beside a truth column is not read, nor warned
        about); a column without a single value is not used, without a warning (a
        truth column so: the outcome is used; an elicited table's ``token_belief``
        when no log-probabilities were asked for).
    example_value : float
        The probability the prompt shows in its example answer (default 0.5:
        the published prompts end with ``No: 0.50`` / ``Yes: 0.50``). A model
        that copies the example states this value.
    max_example_share : float
        The table is flagged as degenerate when more than this share of the
        beliefs are the example value (default 0.5: most rows).
    set_aside : mapping, DataFrame or None
        Replies left out of the table before it was written: ``{reason:
        count}``, a table of counts with ``reason`` and ``count`` columns
        (``ElicitationResult.failures``), or one row per reply with a
        ``reason`` column. Counted by reason.

    Returns
    -------
    ElicitationDiagnostics
        The beliefs' count, range, spread and heaping (``modal_share``,
        ``share_example``, ``share_tenths``), their rank association with the truth or
        outcome, the action mix, and ``degenerate`` with its ``degenerate_reason``.

    Warns
    -----
    DegenerateDataWarning
        When the beliefs are degenerate (see ``ElicitationDiagnostics.degenerate``).
    SkippedRecordsWarning
        When a column the rank correlations read (the truth, else the outcome;
        the token belief) is missing on some rows (they are left out of
        ``association`` and ``token_association``).

    Raises
    ------
    ValueError
        For a missing or non-probability belief column, an optional column named
        on purpose that the table lacks, a truth or token-belief value that is not
        a probability, an outcome that is not 0/1, an empty table, or a bad
        ``set_aside``.

    See Also
    --------
    coherence.report : runs this on every cell and shows its flag on the first screen.
    coherence.prompt_consistency : the beliefs' variation across prompts and repetitions.
    coherence.calibration_error : how well the beliefs forecast the outcome.

    Notes
    -----
    A belief counts as the example value (or as 0.5) within 0.005, half a
    unit of the two decimals the prompts print. The beliefs are *degenerate*
    when they span at most 0.01 (one value, up to rounding: the 0.50 / 0.501
    of a small model) or when more than ``max_example_share`` of them are the
    example value. On such a table a coherence test has nothing to test: the
    action cannot depend on a belief that does not vary, so conditional
    independence, no leakage and monotonicity all hold trivially, and their
    large p-values say nothing about coherence. ``association`` is Spearman's
    rank correlation; a belief that tracks the truth has a clearly positive one.

    Examples
    --------
    >>> import coherence, pandas as pd
    >>> table = pd.DataFrame({"belief": [0.1, 0.5, 0.7, 0.9], "truth": [0.2, 0.4, 0.6, 0.8],
    ...                       "action": ["no", "defer", "yes", "yes"]})
    >>> d = coherence.elicitation_diagnostics(table, set_aside={"bad_sum": 1})
    >>> d.degenerate, d.share_example, d.association, dict(d.action_counts)
    (False, 0.25, 1.0, {'yes': 2, 'no': 1, 'defer': 1})
    >>> d.n_set_aside
    1
    """
    result = diagnose(data, belief=belief, action=action, truth=truth, outcome=outcome,
                      token_belief=token_belief, example_value=example_value,
                      max_example_share=max_example_share, set_aside=set_aside)
    if result.degenerate:
        warnings.warn(result.warning, DegenerateDataWarning, stacklevel=2)
    return result


def diagnose(data: Any, *, belief: str = "belief", action: str | None = "action",
             truth: str | None = "truth", outcome: str | None = "outcome",
             token_belief: str | None = "token_belief", example_value: float = 0.5,
             max_example_share: float = 0.5, set_aside: Any = None) -> ElicitationDiagnostics:
    """:func:`elicitation_diagnostics` without the warning (the report warns once for all
    its cells)."""
    iv = _elicitation_diagnostics_iv(data, belief, action, truth, outcome, token_belief,
                                     example_value, max_example_share, set_aside)
    b = iv.belief
    n = len(b)
    values, counts = np.unique(b, return_counts=True)
    mode = int(np.argmax(counts))
    near = EXAMPLE_TOLERANCE + DECIMAL_SLACK
    share_example = float(np.mean(np.abs(b - iv.example_value) <= near))
    share_half = float(np.mean(np.abs(b - 0.5) <= near))
    tenths = np.abs(b * 10.0 - np.round(b * 10.0)) <= 1e-6
    lo, hi = float(b.min()), float(b.max())
    reason = ""
    # 0.51 - 0.50 is 0.010000000000000009 in floating point, 0.21 - 0.20 is
    # 0.009999999999999981; both span 0.01
    if hi - lo <= ONE_VALUE_RANGE + DECIMAL_SLACK:
        reason = (f"every stated belief is {format_number(lo)}" if lo == hi else
                  f"every stated belief lies in [{format_number(lo)}, {format_number(hi)}]")
    elif share_example > iv.max_example_share:
        reason = (f"{share_example:.0%} of the stated beliefs are the prompt's example value "
                  f"{format_number(iv.example_value)}")
    action_counts = {} if iv.actions is None else _action_counts(iv.actions)
    return ElicitationDiagnostics(
        n_obs=n, n_distinct=len(values), belief_min=lo, belief_max=hi,
        belief_std=float(b.std(ddof=1)) if n > 1 else math.nan,
        modal_belief=float(values[mode]), modal_share=float(counts[mode] / n),
        example_value=iv.example_value, share_example=share_example, share_half=share_half,
        share_tenths=float(np.mean(tenths)),
        association=(_rank_correlation(b, iv.truth) if iv.truth is not None else math.nan),
        association_with=iv.truth_name,
        token_association=(_rank_correlation(iv.token, iv.truth)
                           if iv.token is not None and iv.truth is not None else math.nan),
        action_counts=dict(action_counts),  # plain dicts: the result pickles (joblib)
        set_aside=dict(iv.set_aside),
        degenerate=bool(reason), degenerate_reason=reason)
