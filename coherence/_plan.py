"""How many contexts, repetitions and paid calls a study needs: the power of a named test,
by simulating studies from a pilot table or a simulated agent, at each planned design.

It spans the domains (decision tests, the LIE check, conditional forecasting), so it
sits at the root of the core and imports each test inside the function that runs it.
"""

from __future__ import annotations

import dataclasses
import fractions
import math
import numbers
import sys
import warnings
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from typing import Any
from typing import ClassVar

import numpy as np
import pandas as pd

from ._intervals import wilson_interval
from ._plan_input import DECISION_TESTS
from ._plan_input import PLAN_TESTS
from ._plan_input import PlanInput
from ._plan_input import plan_iv
from ._results import Summary
from ._results import format_number
from ._rng import RNGLike
from ._rng import check_rng
from ._rng import spawn
from ._text import text_table
from ._validation import binary_column
from ._validation import listed
from ._validation import param_error
from ._validation import probability_column
from ._validation import require_columns
from ._warnings import DegenerateDataWarning
from ._warnings import DeprecatedAlias

__all__ = [
    "PLAN_TESTS",
    "PlanResult",
    "plan",
]

TABLE_COLUMNS: tuple[str, ...] = (
    "n_contexts", "n_repetitions", "n_prompts", "n_calls", "power", "power_low", "power_high",
    "n_rejected", "n_simulations", "n_undefined", "n_warned",
)


# --------------------------------------------------------------------------- result
@dataclass(frozen=True, slots=True)
class PlanResult:
    """Result of :func:`plan`: a planning computation, not a test.

    The headline is the cheapest design (fewest paid calls) whose simulated power
    reaches ``target_power``; ``table`` holds every design. There is no statistic,
    p-value or interval of its own: :meth:`to_frame` gives the fields below as one
    row (schema :meth:`frame_columns`, led by ``calculation = 'plan'``) and
    :meth:`summary` formats them with the table.

    Attributes
    ----------
    test : str
        The test planned for (one of ``PLAN_TESTS``).
    source : str
        ``"agent"`` (studies simulated from an :class:`Agent`) or ``"pilot"``
        (studies resampled from a pilot table).
    agent : str
        The agent's kind (``""`` for a pilot).
    effect : float
        The effect the studies were simulated at (NaN: the agent or pilot as given).
    n_contexts, n_repetitions, n_calls : int
        The cheapest design with power >= ``target_power`` (-1 when none reaches it).
    achieved_power : float
        Its simulated power (NaN when none reaches the target).
    target_power, alpha, n_simulations : float, float, int
        Settings used (``n_simulations`` studies per design).
    n_designs : int
        Number of designs simulated (rows of ``table``).
    n_pilot_contexts : int
        The pilot's units a study draws from (0 for an agent): its contexts; for
        conditional forecasting its pairs of the planned category, failed records left out.
    table : pandas.DataFrame
        One row per design, columns ``TABLE_COLUMNS``: ``n_contexts``,
        ``n_repetitions``, ``n_prompts`` (calls per context and repetition: see
        :func:`plan`, Notes; for a :func:`prompt_consistency` pilot whose contexts lack
        some prompts, their mean over the pilot's contexts), ``n_calls`` (contexts x
        repetitions x prompts, rounded up), ``power`` (rejection rate at ``alpha``),
        ``power_low`` and ``power_high`` (its 95% Wilson interval), ``n_rejected``,
        ``n_simulations``, ``n_undefined`` (studies whose p-value was NaN, counted as not
        rejected; equal to ``n_simulations``, a design the test cannot run on, which
        warns) and ``n_warned`` (studies on which the test warned). Conditional
        forecasting reads :func:`pairs_power`'s simulated rejection rate alone, so both are
        0 there: a study without a p-value (a t-test sample with no spread) counts as not
        rejected, unseen.
    """

    test: str
    source: str
    agent: str = ""
    effect: float = np.nan
    n_contexts: int = -1
    n_repetitions: int = -1
    n_calls: int = -1
    achieved_power: float = np.nan
    target_power: float = 0.8
    alpha: float = 0.05
    n_simulations: int = 0
    n_designs: int = 0
    n_pilot_contexts: int = 0
    table: pd.DataFrame = field(default_factory=lambda: pd.DataFrame(columns=TABLE_COLUMNS),
                                repr=False, compare=False)

    #: Name of the calculation, first column of ``to_frame()``.
    _name: ClassVar[str] = "plan"

    designs = DeprecatedAlias("table")

    @classmethod
    def frame_columns(cls) -> tuple[str, ...]:
        """The fixed column schema of :meth:`to_frame`: ``calculation`` then every field
        but ``table``."""
        return ("calculation", *(f.name for f in dataclasses.fields(cls) if f.name != "table"))

    def to_frame(self) -> pd.DataFrame:
        """One row: ``calculation`` (``'plan'``) and every field but ``table``, in order."""
        row: dict[str, Any] = {"calculation": self._name}
        row.update({f.name: getattr(self, f.name) for f in dataclasses.fields(self)
                    if f.name != "table"})
        return pd.DataFrame([row], columns=list(self.frame_columns()))

    def _repr_html_(self) -> str:
        """The :meth:`summary` as HTML tables (how Jupyter shows a result)."""
        return self.summary()._repr_html_()

    def summary(self) -> Summary:
        """The cheapest design reaching the target, the settings and the power table."""
        rows = [(f.name, format_number(getattr(self, f.name)) if not isinstance(
            getattr(self, f.name), str) else getattr(self, f.name))
            for f in dataclasses.fields(self) if f.name not in ("table", "test")]
        origin = "an agent" if self.source == "agent" else "a pilot"
        title = f"{self._name} ({self.test}, from {origin})"
        text = "\n".join([title, *(f"  {k:<20} {v}" for k, v in rows), "",
                          text_table(self.table)])
        return Summary(text, title=title, rows=rows, tables=[("power by design", self.table)])


# --------------------------------------------------------------------------- simulation
def _canonical(pilot: pd.DataFrame, strata: tuple[str, ...]) -> pd.DataFrame:
    """The pilot's rows in an order that does not depend on the input's: by the strata,
    then by every column (by the strata alone where a column cannot be sorted)."""
    try:
        return pilot.sort_values(list(strata) + [c for c in pilot.columns if c not in strata],
                                 kind="mergesort").reset_index(drop=True)
    except TypeError:
        return pilot.sort_values(list(strata), kind="mergesort").reset_index(drop=True)


def _label_order(value: Any) -> tuple[int, Any]:
    """Labels in their natural order, numbers before text (ids 0 and 'c1' in one column
    do not compare)."""
    if isinstance(value, numbers.Real) and not isinstance(value, bool | np.bool_):
        return (0, float(value))
    return (1, str(value))


def _cells(pilot: pd.DataFrame, strata: tuple[str, ...], repetition: str | None = None,
           ) -> tuple[list[Any], list[list[np.ndarray]], list[bool]]:
    """Sorted context labels; per context, the row positions of each cell (one cell per
    context, or one per prompt of the context, prompts sorted); and per context whether
    its prompts' rows are paired by ``repetition``: every prompt has each of the same
    repetition labels once (its cells then hold their rows in label order)."""
    group = strata[0]
    labels = sorted(pd.unique(pilot[group]), key=_label_order)
    by_ctx = pilot.groupby(group, sort=True, observed=True).indices
    reps = (pilot[repetition].to_numpy(dtype=object)
            if len(strata) > 1 and repetition is not None and repetition in pilot.columns
            else None)
    cells, paired = [], []
    for label in labels:
        rows = np.sort(by_ctx[label])
        if len(strata) == 1:
            cells.append([rows])
            paired.append(False)
            continue
        sub = pilot[strata[1]].to_numpy()[rows]
        ctx_cells = [rows[sub == p] for p in sorted(pd.unique(sub))]
        same = False
        if reps is not None:
            sets = [pd.unique(reps[c]) for c in ctx_cells]
            same = all(s.size == c.size for s, c in zip(sets, ctx_cells, strict=True)) and \
                all(set(s) == set(sets[0]) for s in sets)
        if same and reps is not None:  # rows in label order: drawn by label together
            order = sorted(sets[0], key=_label_order)
            ctx_cells = [c[np.argsort([order.index(v) for v in reps[c]], kind="stable")]
                         for c in ctx_cells]
        cells.append(ctx_cells)
        paired.append(same)
    return labels, cells, paired


def _resample_pilot(pilot: pd.DataFrame, labels: list[Any], cells: list[list[np.ndarray]],
                    paired: list[bool], n_contexts: int, n_repetitions: int, group: str,
                    repetition: str | None, gen: np.random.Generator) -> pd.DataFrame:
    """One study: ``n_contexts`` contexts drawn with replacement, and in each cell of a
    drawn context ``n_repetitions`` of its rows drawn with replacement; where the context's
    prompts are paired by repetition, ``n_repetitions`` repetition labels are drawn and
    every prompt's row of each label kept, with any shock the prompts of a repetition
    share."""
    picks = gen.integers(0, len(labels), n_contexts)
    rows, ctx, rep = [], [], []
    for new, c in enumerate(picks):
        joint = gen.integers(0, cells[c][0].size, n_repetitions) if paired[c] else None
        for cell in cells[c]:
            chosen = cell[joint if joint is not None
                          else gen.integers(0, cell.size, n_repetitions)]
            rows.append(chosen)
            ctx.append(np.full(n_repetitions, new, dtype=np.int64))
            rep.append(np.arange(n_repetitions, dtype=np.int64))
    out = pilot.iloc[np.concatenate(rows)].reset_index(drop=True)
    out[group] = np.concatenate(ctx)
    if repetition is not None:
        out[repetition] = np.concatenate(rep)
    return out


def _resample_lie(pilot: pd.DataFrame, baseline: pd.DataFrame, labels: list[Any],
                  context: str, n_contexts: int,
                  gen: np.random.Generator) -> tuple[pd.DataFrame, pd.DataFrame]:
    """One LIE study: contexts drawn with replacement, the agent's and the baseline's rows
    of a drawn context kept together, under a new context label."""
    picks = gen.integers(0, len(labels), n_contexts)
    a_idx = pilot.groupby(context, sort=True, observed=True).indices
    b_idx = baseline.groupby(context, sort=True, observed=True).indices
    empty = np.zeros(0, dtype=np.int64)
    a_rows, b_rows, a_ctx, b_ctx = [], [], [], []
    for new, c in enumerate(picks):
        ra, rb = np.sort(a_idx[labels[c]]), np.sort(b_idx.get(labels[c], empty))
        a_rows.append(ra)
        b_rows.append(rb)
        a_ctx += [f"s{new}"] * ra.size
        b_ctx += [f"s{new}"] * rb.size
    a = pilot.iloc[np.concatenate(a_rows)].reset_index(drop=True)
    b = baseline.iloc[np.concatenate(b_rows)].reset_index(drop=True)
    a[context] = a_ctx
    b[context] = b_ctx
    return a, b


#: Options plan adds where ``options`` does not set them: plan reads p-values only, and these
#: skip work that does not move them (ci_test draws its interval after its p-value, from
#: the same stream, so the p-values are those of the test at its defaults; 5-9 times faster)
_PVALUE_ONLY: dict[str, dict[str, Any]] = {"ci_test": {"ci_method": None}}


def _run_decision(test: str, data: pd.DataFrame, options: dict[str, Any],
                  gen: np.random.Generator) -> float:
    import coherence

    # ci_test's bootstrap method takes no ci_method (it has one interval and no p-value)
    skip = options.get("method") == "bootstrap"
    options = {**({} if skip else _PVALUE_ONLY.get(test, {})), **options}
    return float(getattr(coherence, test)(data, **options, rng=gen).pvalue)


def _rate(pvalues: list[float], warned: int, alpha: float) -> dict[str, Any]:
    p = np.asarray(pvalues, dtype=np.float64)
    k = int(np.sum(p <= alpha))
    ci = wilson_interval(k, p.size)
    return {"power": k / p.size, "power_low": ci.low, "power_high": ci.high, "n_rejected": k,
            "n_simulations": int(p.size), "n_undefined": int(np.isnan(p).sum()),
            "n_warned": warned}


def _warn_undefined(table: pd.DataFrame, test: str) -> None:
    """Warn, naming them, of the designs where no simulated study gave a p-value: their
    power 0 says the test cannot run there (too few contexts, one action, no spread), not
    that it lacks power. Called by :func:`plan` only: the warning points at its caller."""
    none = table.loc[(table["n_undefined"] == table["n_simulations"]).to_numpy()
                     & (table["n_simulations"] > 0).to_numpy()]
    if len(none) == 0:
        return
    designs = [f"{int(c)} contexts x {int(r)} repetitions"
               for c, r in zip(none["n_contexts"], none["n_repetitions"], strict=True)]
    shown = listed(designs, 3, sep="; ", counted=True)
    warnings.warn(f"plan: {test} gave no p-value (NaN) on any of the "
                  f"{int(none['n_simulations'].iloc[0])} simulated studies of "
                  f"{len(designs)} design(s) ({shown}): their power 0 means the test "
                  "cannot be computed on such studies (too few contexts, one action, no "
                  "spread), not that it lacks power; see the table's 'n_undefined' "
                  "column.", DegenerateDataWarning, stacklevel=3)


def _simulate_design(iv: PlanInput, n_ctx: int, n_rep: int, gen: np.random.Generator,
                     pilot: Any, bar: Any) -> tuple[dict[str, Any], int | fractions.Fraction]:
    """Power at one design and the number of prompts per repetition (a pilot's exact mean
    where its contexts have unequal counts); ``bar`` (a tqdm bar) advances by one per
    simulated study."""
    test, opts = iv.test, iv.options
    if test == "conditional_forecasting":
        out = _pairs_design(iv, n_ctx, gen)
        bar.update(iv.n_sims)
        return out
    studies = spawn(gen, iv.n_sims)
    pvalues: list[float] = []
    warned = 0
    n_prompts: int | fractions.Fraction = 1
    for s in studies:
        with warnings.catch_warnings(record=True) as caught:
            warnings.simplefilter("always")
            if iv.agent is not None:
                data = _agent_study(iv.agent, test, n_ctx, n_rep, s)
                if test == "prompt_consistency":
                    n_prompts = int(data["prompt"].nunique())
                pvalues.append(_run_decision(test, data, opts, s))
            elif test == "iterated_expectation_check":
                labels, context = pilot
                a, b = _resample_lie(iv.pilot, opts["baseline"], labels, context, n_ctx, s)
                import coherence

                rest = {k: v for k, v in opts.items() if k != "baseline"}
                pvalues.append(float(coherence.iterated_expectation_check(
                    a, baseline=b, **rest, rng=s).pvalue))
            else:
                labels, cells, paired = pilot
                repetition = opts.get("repetition", "repetition")
                data = _resample_pilot(iv.pilot, labels, cells, paired, n_ctx, n_rep,
                                       iv.strata[0], repetition, s)
                pvalues.append(_run_decision(test, data, opts, s))
        warned += bool(caught)
        bar.update()
    if iv.pilot is not None and test == "prompt_consistency":
        # the expected prompts of a drawn context (a prompt missing from a context of the
        # pilot stays missing in the studies), not the largest count
        n_prompts = fractions.Fraction(sum(len(c) for c in pilot[1]), len(pilot[1]))
    if test == "iterated_expectation_check":
        n_prompts = _lie_calls_per_context(iv.pilot, opts.get("variable", "variable"),
                                           pilot[1])
    return _rate(pvalues, warned, iv.alpha), n_prompts


def _lie_calls_per_context(pilot: pd.DataFrame, variable: str, context: str) -> int:
    """The calls per context of the LIE study, as ``elicitation.run_lie`` makes them (once
    per auxiliary variable, sharing one cache): one P(y | x, z = s) per row of the pilot (a
    state of a variable), one P(z | x) per (context, variable), and one P(y | x) per context,
    asked by the first variable's run and read from the cache by the others (the table holds
    one P(y | x) per context); averaged over the pilot's contexts."""
    n_contexts = int(pilot[context].nunique())
    n_units = int(pilot.groupby([context, variable], sort=False, observed=True).ngroups)
    return max(1, round((len(pilot) + n_units + n_contexts) / n_contexts))


def _agent_study(agent: Any, test: str, n_ctx: int, n_rep: int,
                 gen: np.random.Generator) -> pd.DataFrame:
    from ._decision._simulate import PROMPTS
    from ._decision._simulate import simulated_table

    if test == "prompt_consistency":
        prompts = tuple(agent.shifts) if agent.kind == "prompt_sensitive" else PROMPTS
    else:
        prompts = ("standard",)
    # simulate(...).data, without the study's truth (plan does not read it)
    return simulated_table(agent, n_contexts=n_ctx, n_repetitions=n_rep, prompts=prompts,
                           rng=gen)


def _pairs_design(iv: PlanInput, n_pairs: int,
                  gen: np.random.Generator) -> tuple[dict[str, Any], int]:
    """Conditional forecasting: delegated to :func:`pairs_power` at ``n = n_pairs`` (its
    simulated power there, from the design's stream alone: not after a search for its
    ``n_required``, which would make the figure depend on the largest design)."""
    from ._probability._power import simulated_power_at

    opts = iv.options
    simulated = simulated_power_at(
        iv.pilot, n=n_pairs, metric="mean_improvement", effect=_pairs_effect(iv), sd=None,
        win_rate=None, category=opts.get("category", "strong"), by=opts.get("by", "category"),
        power=iv.target_power, alpha=iv.alpha, alternative=opts.get("alternative", "two-sided"),
        test=opts.get("test", "bernoulli"), n_simulations=iv.n_sims, rng=gen)
    k = round(simulated * iv.n_sims)
    ci = wilson_interval(k, iv.n_sims)
    return ({"power": k / iv.n_sims, "power_low": ci.low, "power_high": ci.high,
             "n_rejected": k, "n_simulations": iv.n_sims, "n_undefined": 0, "n_warned": 0}, 3)


def _planned_pairs(iv: PlanInput) -> pd.DataFrame:
    """The pilot's pairs a conditional-forecasting study draws from: those of the planned
    category, failed records left out (skipped, as pairs_power skips them, with a warning)."""
    from ._probability._pairs_result import failed_rows

    opts = iv.options
    df = iv.pilot if iv.pilot is not None else pd.DataFrame()
    if "error" in df.columns:
        df = df.loc[~failed_rows(df["error"]).to_numpy()]
    category, by = opts.get("category", "strong"), opts.get("by", "category")
    if category is not None:
        require_columns(df, [by], owner="plan")
        df = df.loc[(df[by].astype(object) == category).to_numpy()]
    return df


def _pairs_effect(iv: PlanInput) -> float:
    """The effect to plan conditional forecasting at: ``effect``, or the pilot's own mean
    Brier improvement over the planned category (failed records left out)."""
    if iv.effect is not None:
        return iv.effect
    from ._probability._pairs import brier_improvement

    opts = iv.options
    df = _planned_pairs(iv)
    category, by = opts.get("category", "strong"), opts.get("by", "category")
    cols = ["p_a", "p_a_given_b1", "p_a_given_b0", "a_outcome", "b_outcome"]
    require_columns(df, cols, owner="plan")
    if len(df) == 0:
        raise ValueError(param_error("options", "plan", f"a category with pilot pairs "
                                     f"(no row has {by} = {category!r})", opts))
    # checked here, naming the pilot's column and rows: a missing or out-of-range value
    # would make the mean NaN, refused as an 'effect' the user never gave
    values = [probability_column(df, c, owner="plan") for c in cols[:3]]
    values += [binary_column(df, c, owner="plan") for c in cols[3:]]
    x = brier_improvement(*values)
    return float(np.mean(x))


def plan(
    data_or_agent: Any,
    *,
    test: str,
    n_contexts: int | Sequence[int],
    n_repetitions: int | Sequence[int] | None = None,
    effect: float | None = None,
    n_sims: int = 200,
    alpha: float = 0.05,
    power: float = 0.8,
    options: Mapping[str, Any] | None = None,
    rng: RNGLike = None,
    progress: bool | None = None,
) -> PlanResult:
    r"""Power of a test at each planned study design, by simulation, before paying for calls.

    Studies of every design (``n_contexts`` x ``n_repetitions``) are simulated
    ``n_sims`` times, from a pilot table or from a simulated :class:`Agent`; the
    named test runs on each at its defaults (or with ``options``) and the share of
    studies with p-value <= ``alpha`` is the design's power, with its Wilson interval
    and the number of paid calls the design costs.

    Parameters
    ----------
    data_or_agent : pandas.DataFrame or Agent
        A pilot table in the layout the test reads (belief/action table for the
        decision tests, the elicited table for :func:`iterated_expectation_check`,
        a pairs table for :func:`conditional_forecasting`), or an :class:`Agent`
        (decision tests only), whose studies are made by :func:`simulate`.
    test : str
        One of ``PLAN_TESTS``: ``"ci_test"``, ``"leakage_test"``,
        ``"monotonicity_test"``, ``"prompt_consistency"``,
        ``"iterated_expectation_check"``, ``"conditional_forecasting"``.
    n_contexts : int or sequence of int >= 2
        Contexts per study (question pairs, for conditional forecasting).
    n_repetitions : int or sequence of int >= 1, optional
        Elicitations per context (and prompt); must be 1 for the LIE check and
        conditional forecasting. Default: 1 for those two tests, 5 for the others.
    effect : float, optional
        The size of the violation to plan for (see Notes); None: the agent or the
        pilot as it is.
    n_sims : int >= 1, default 200
        Simulated studies per design. The Wilson interval's half-width is about
        :math:`1/\sqrt{n_{sims}}` at power 0.5 (0.07 at 200).
    alpha : float in (0, 1), default 0.05
        Level at which a study's p-value counts as a rejection.
    power : float in (0, 1), default 0.8
        Target power: the headline is the cheapest design whose simulated power
        reaches it.
    options : mapping, optional
        Keyword options passed to the test (for example
        ``{"engine": "logistic"}`` for :func:`leakage_test`, ``{"baseline": table}``
        for the LIE check, required there); ``data`` and ``rng`` are set by plan.
        ``ci_test``'s ``method="bootstrap"`` has no p-value and is refused.
        For conditional forecasting: ``category``, ``by``, ``test`` and
        ``alternative`` of :func:`pairs_power`.
    rng : int, numpy.random.Generator or None
        Randomness of the simulation; the same int gives the same table.
    progress : bool or None
        A progress bar on stderr over the simulated studies of every design; ``None``
        (default) shows it only when stderr is a terminal. It changes nothing else.

    Returns
    -------
    PlanResult
        The cheapest design reaching ``power`` and ``table``, the power of every
        design.

    See Also
    --------
    pairs_power : the number of pairs a conditional-forecasting study needs.
    simulate : the simulated agents' studies.
    ci_test, leakage_test, monotonicity_test, prompt_consistency : tests planned for.
    iterated_expectation_check, conditional_forecasting : the other tests planned for.

    Notes
    -----
    **From an agent.** Each study is ``simulate(agent, n_contexts=c,
    n_repetitions=r, prompts=...)``: prompt ``"standard"`` only for the decision
    tests; for :func:`prompt_consistency` every prompt the agent's ``shifts``
    name (the four ``PROMPTS`` for an agent without shifts). The simulated truth
    is the agent's model (its :class:`SimulationTruth`). ``effect`` sets the
    agent's violation: a leaky agent's ``strength`` (0 is rational); a
    nonmonotone agent's cut in the cost of deferring inside its band,
    ``loss_defer - loss_defer_band`` (0: no band); a prompt-sensitive agent's
    ``shifts`` scaled so that the largest in absolute value is ``effect``. A
    rational agent has no effect to set (it is the null: ``plan`` then measures
    the size).

    **From a pilot.** The pilot is the truth: a study draws ``n_contexts`` of the
    pilot's contexts with replacement, and within each drawn context (for
    :func:`prompt_consistency`, within each of its prompts) ``n_repetitions`` of its
    rows with replacement, keeping each row's belief, action and outcome together.
    For :func:`prompt_consistency`, where every prompt of a context has the same
    repetition labels once each, ``n_repetitions`` labels are drawn instead and every
    prompt's row of each label kept, so a shock the prompts of one repetition share
    (one seed, one session) stays shared, as the test pairs them; the repetition column
    is checked as the test checks it (a label typed two ways, or twice in a cell, raises).
    The simulated population is the pilot's empirical joint distribution of (belief,
    action, outcome) per context, so the alternative is the pilot's own violation,
    with its sampling noise: a pilot of a few dozen contexts gives a rough plan (one
    of a single context is an error), and a design with more repetitions than the
    pilot has repeats rows (its within-context spread is the pilot's). For the LIE
    check a context's rows of the elicited table and of ``options["baseline"]`` are
    drawn together. Drawn contexts are relabelled ``0, 1, ...`` (``"s0", "s1", ...``
    for the LIE check); repetitions ``0, 1, ...``. ``effect`` must be None
    (conditional forecasting aside).

    **Conditional forecasting** delegates to :func:`pairs_power` with
    ``n = n_contexts`` pairs: studies of the pilot's pairs, A drawn from a truth
    with mean Brier improvement ``effect`` (default: the pilot's own mean
    improvement over the category, its failed records left out as
    :func:`pairs_power` leaves them out), its simulated power read.

    **Paid calls.** ``n_calls = n_contexts x n_repetitions x n_prompts``, one
    call per row of the table: prompts per repetition for the decision tests (for a
    :func:`prompt_consistency` pilot, the mean over its contexts, a prompt missing from a
    context staying missing in the studies; ``n_calls`` is then rounded up, the expected
    calls of the study); for the LIE check, the calls per context of
    ``elicitation.run_lie`` (run once per auxiliary variable through one cache),
    averaged over the pilot's contexts: one
    P(y | x, z = s) per row of the pilot (a state of a variable), one P(z | x) per
    auxiliary variable and one P(y | x) per context (the first variable's run asks it,
    the others read it from the cache); 3 per pair for conditional forecasting (P(A),
    P(A | B = 1), P(A | B = 0)). Double it where belief and action are asked in
    separate conversations. A LIE baseline elicited from a model (another agent or
    condition) costs as many calls again; an exact or fitted baseline costs none.

    **Randomness.** ``rng`` is spawned into one stream per design (in the
    order ``n_contexts`` outer, ``n_repetitions`` inner), each into ``n_sims``
    study streams; a study is built and then tested with its own stream.
    Contexts of a pilot are drawn from its labels in sorted order (rows within a
    context by their values), so the plan does not depend on the pilot's row
    order. Warnings the test raises on a study are counted (``n_warned``), not
    shown; a NaN p-value counts as not rejected (``n_undefined``), and a design where
    no study has a p-value (power 0: the test cannot run there) warns, naming it
    (``DegenerateDataWarning``).

    Examples
    --------
    >>> import coherence
    >>> res = coherence.plan(coherence.Agent.leaky(), test="ci_test", n_contexts=[20, 40],
    ...                      n_repetitions=3, effect=0.8, n_sims=20,
    ...                      options={"n_resamples": 99}, rng=0)
    >>> list(res.table["n_calls"])
    [60, 120]
    """
    iv = plan_iv(data_or_agent, test, n_contexts, n_repetitions, effect, n_sims, alpha, power,
                  options)
    if progress is not None and not isinstance(progress, bool):
        raise TypeError(param_error("progress", "plan", "a bool or None", progress))
    gen = check_rng(rng, owner="plan")
    pilot_cells: Any = None
    n_pilot = 0
    if iv.pilot is not None and iv.test in DECISION_TESTS:
        pilot = _canonical(iv.pilot, iv.strata)
        iv = dataclasses.replace(iv, pilot=pilot)
        pilot_cells = _cells(pilot, iv.strata, iv.options.get("repetition", "repetition"))
        n_pilot = len(pilot_cells[0])
    elif iv.pilot is not None and iv.test == "iterated_expectation_check":
        context = iv.strata[0]
        pilot = _canonical(iv.pilot, iv.strata)
        baseline = _canonical(iv.options["baseline"], iv.strata)
        iv = dataclasses.replace(iv, pilot=pilot, options={**iv.options, "baseline": baseline})
        pilot_cells = (sorted(pd.unique(pilot[context]), key=_label_order), context)
        n_pilot = len(pilot_cells[0])
    from tqdm.auto import tqdm

    rows = []
    with tqdm(total=len(iv.designs) * iv.n_sims, desc="plan", unit="study", file=sys.stderr,
              disable=not (sys.stderr.isatty() if progress is None else progress)) as bar:
        for (n_ctx, n_rep), design_gen in zip(iv.designs, spawn(gen, len(iv.designs)),
                                              strict=True):
            bar.set_postfix_str(f"{n_ctx} contexts x {n_rep} repetitions")
            rate, n_prompts = _simulate_design(iv, n_ctx, n_rep, design_gen, pilot_cells, bar)
            whole = n_prompts.denominator == 1
            rows.append({"n_contexts": n_ctx, "n_repetitions": n_rep,
                         "n_prompts": int(n_prompts) if whole else float(n_prompts),
                         "n_calls": math.ceil(n_ctx * n_rep * n_prompts), **rate})
    table = pd.DataFrame(rows, columns=list(TABLE_COLUMNS))
    _warn_undefined(table, iv.test)
    if iv.test == "conditional_forecasting":  # the pairs drawn from (checked by pairs_power)
        n_pilot = len(_planned_pairs(iv))
    reached = table[table["power"] >= iv.target_power].sort_values(["n_calls", "n_contexts"],
                                                            kind="mergesort")
    best: dict[str, Any] = {}
    if len(reached):
        top = reached.iloc[0]
        best = {"n_contexts": int(top["n_contexts"]), "n_repetitions": int(top["n_repetitions"]),
                "n_calls": int(top["n_calls"]), "achieved_power": float(top["power"])}
    return PlanResult(
        test=iv.test, source="agent" if iv.agent is not None else "pilot",
        agent="" if iv.agent is None else iv.agent.kind,
        effect=math.nan if iv.effect is None else iv.effect, target_power=iv.target_power,
        alpha=iv.alpha, n_simulations=iv.n_sims, n_designs=len(iv.designs),
        n_pilot_contexts=n_pilot, table=table, **best)

