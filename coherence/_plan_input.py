"""The input of :func:`coherence.plan`: the test, the planned designs, the options passed
through, and the pilot table or simulated agent the studies are drawn from, checked."""

from __future__ import annotations

import dataclasses
import inspect
import numbers
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from ._parameters import check_float
from ._parameters import check_int
from ._validation import as_dataframe
from ._validation import check_case_distinct
from ._validation import column_error
from ._validation import label_column
from ._validation import no_missing
from ._validation import nonempty
from ._validation import param_error
from ._validation import plain_value
from ._validation import probability_column
from ._validation import require_columns

__all__ = ["DECISION_TESTS", "PLAN_TESTS", "PlanInput", "plan_iv"]

#: The tests :func:`plan` can plan for.
PLAN_TESTS: tuple[str, ...] = (
    "ci_test", "leakage_test", "monotonicity_test", "prompt_consistency",
    "iterated_expectation_check", "conditional_forecasting",
)
#: the decision tests, which plan studies of contexts and repetitions
DECISION_TESTS = ("ci_test", "leakage_test", "monotonicity_test", "prompt_consistency")
_PILOT_ONLY = ("iterated_expectation_check", "conditional_forecasting")
#: options plan sets itself (never passed through ``options``)
_RESERVED = {"data", "elicited", "pairs", "rng"}


@dataclass(frozen=True, slots=True)
class PlanInput:
    test: str
    agent: Any  # an Agent (source "agent") or None
    pilot: pd.DataFrame | None
    designs: tuple[tuple[int, int], ...]
    effect: float | None
    n_sims: int
    alpha: float
    target_power: float
    options: dict[str, Any]
    strata: tuple[str, ...]  # the pilot's columns a context (and prompt) is drawn by


def _sizes(value: Any, name: str, low: int) -> tuple[int, ...]:
    owner = "plan"
    if isinstance(value, numbers.Integral) and not isinstance(value, bool):
        value = [value]
    if isinstance(value, str) or not isinstance(value, Sequence | np.ndarray):
        raise TypeError(param_error(name, owner, f"an int >= {low} or a sequence of them",
                                    value))
    if len(value) == 0:
        raise ValueError(param_error(name, owner, "a non-empty sequence of ints", value))
    out = tuple(check_int(v, name, owner, low=low) for v in value)
    if len(set(out)) != len(out):
        raise ValueError(param_error(name, owner, "free of duplicates", list(out)))
    return out


def _test_parameters(test: str) -> set[str]:
    import coherence

    return set(inspect.signature(getattr(coherence, test)).parameters)


def plan_iv(data_or_agent: Any, test: Any, n_contexts: Any, n_repetitions: Any, effect: Any,
             n_sims: Any, alpha: Any, power: Any, options: Any) -> PlanInput:
    from ._decision._simulate import Agent

    owner = "plan"
    if not isinstance(test, str):
        raise TypeError(param_error("test", owner, "a test name (str)", test))
    if test not in PLAN_TESTS:
        raise ValueError(param_error("test", owner, "one of " + ", ".join(map(repr, PLAN_TESTS)),
                                     test))
    test = str(test)  # recorded in the result: not a np.str_
    contexts = _sizes(n_contexts, "n_contexts", 2)
    if n_repetitions is None:  # the default: 1 where it is the only value, else 5
        n_repetitions = 1 if test in _PILOT_ONLY else 5
    reps = _sizes(n_repetitions, "n_repetitions", 1)
    n_sims = check_int(n_sims, "n_sims", owner, low=1)
    alpha = check_float(alpha, "alpha", owner, low=0.0, high=1.0, low_open=True, high_open=True)
    power = check_float(power, "power", owner, low=0.0, high=1.0, low_open=True,
                        high_open=True)
    options = _plan_options(test, options)
    if effect is not None:
        effect = check_float(effect, "effect", owner)

    agent: Any = None
    pilot: pd.DataFrame | None = None
    strata: tuple[str, ...] = ()
    if isinstance(data_or_agent, Agent):
        if test in _PILOT_ONLY:
            raise TypeError(param_error("data_or_agent", owner, f"a pilot table for {test} "
                                        "(a simulated Agent makes belief/action tables only)",
                                        data_or_agent))
        agent = _agent_at(data_or_agent, effect)
    else:
        if isinstance(data_or_agent, str):
            raise TypeError(param_error("data_or_agent", owner, "a pilot table or an "
                                        "Agent (e.g. coherence.Agent.leaky())", data_or_agent))
        pilot, strata = _pilot(data_or_agent, test, effect, reps, options)
    designs = tuple((c, r) for c in contexts for r in reps)
    return PlanInput(test, agent, pilot, designs, effect, n_sims, alpha, power, options, strata)


def _plan_options(test: str, options: Any) -> dict[str, Any]:
    """``options`` as a dict of keywords the test takes (not the data or rng)."""
    owner = "plan"
    if options is None:
        options = {}
    if not isinstance(options, Mapping) or not all(isinstance(k, str) for k in options):
        raise TypeError(param_error("options", owner, "a mapping of keyword names to values "
                                    "(passed to the test)", options))
    options = dict(options)
    known = _test_parameters(test) - _RESERVED
    if test == "conditional_forecasting":  # delegated to pairs_power: its options
        known = {"category", "by", "test", "alternative"}
    unknown = sorted(set(options) - known)
    if unknown:
        raise ValueError(param_error("options", owner, f"keywords of {test} other than the "
                                     "data and rng (" + ", ".join(sorted(known)) + ")",
                                     unknown))
    if test == "ci_test" and options.get("method") == "bootstrap":
        # no p-value (NaN): every study would count as not rejected, power 0 at every design
        raise ValueError(param_error("options", owner, "a ci_test method with a p-value "
                                     "('permutation'; 'bootstrap' gives an interval only)",
                                     {"method": "bootstrap"}))
    return options


def _pilot(data_or_agent: Any, test: str, effect: float | None, reps: tuple[int, ...],
           options: dict[str, Any]) -> tuple[pd.DataFrame, tuple[str, ...]]:
    """The pilot table, checked as the test checks it, and the columns a study's contexts
    (and prompts) are drawn by; the LIE check's baseline in ``options`` is read into a
    table in place."""
    owner = "plan"
    strata: tuple[str, ...] = ()
    pilot = as_dataframe(data_or_agent, name="data_or_agent", owner=owner)
    nonempty(pilot, name="data_or_agent", owner=owner)
    if effect is not None and test != "conditional_forecasting":
        raise ValueError(param_error(
            "effect", owner, "None with a pilot table (the pilot is simulated as it is; "
            "an effect size applies to an Agent, or to conditional_forecasting's mean "
            "Brier improvement)", effect))
    if test in DECISION_TESTS:
        group = options.get("group", "context")
        if group is None:
            raise ValueError(param_error("options", owner, "a 'group' column for a pilot "
                                         "(contexts are what plan resamples)", options))
        strata = (group,)
        if test == "prompt_consistency":
            strata = (group, options.get("prompt", "prompt"))
    elif test == "iterated_expectation_check":
        if "baseline" not in options:
            raise ValueError(param_error("options", owner, "a 'baseline' table for the "
                                         "LIE check (the baseline's contexts are resampled "
                                         "with the agent's)", sorted(options)))
        unsupported = sorted({"ground_truth", "contexts", "evidence"} & set(options))
        if unsupported:
            raise ValueError(param_error("options", owner, "no random-forest baseline "
                                         "options (give a 'baseline' table)", unsupported))
        strata = (options.get("context", "context"),)
        options["baseline"] = as_dataframe(options["baseline"], name="options['baseline']",
                                           owner=owner)
        require_columns(options["baseline"], strata, owner=f"{owner} (options['baseline'])")
    if strata:
        require_columns(pilot, strata, owner=owner)
    _check_pilot(pilot, test, options, owner)
    if strata and pilot[strata[0]].nunique() < 2:
        # every study would repeat one context: its power says nothing of the design
        raise ValueError(param_error(
            "data_or_agent", owner, f"a pilot of at least 2 contexts (column "
            f"'{strata[0]}'; plan draws a study's contexts from the pilot's)",
            f"{pilot[strata[0]].nunique()} context(s) in {len(pilot)} row(s)"))
    if test in _PILOT_ONLY and reps != (1,):
        raise ValueError(param_error("n_repetitions", owner, f"[1] for {test} (it has no "
                                     "repetitions)", list(reps)))
    return pilot, strata


def _check_pilot(pilot: pd.DataFrame, test: str, options: Mapping[str, Any],
                 owner: str) -> None:
    """The pilot's columns, checked as the test checks them, once, up front: a bad value
    is then named by the pilot's own row, not a row of a resampled study (and a context
    id typed two ways, 0 and '0', or missing, is an error, not a crash)."""
    if test in DECISION_TESTS:
        roles = {"belief": "belief", "group": "context"}
        if test in ("ci_test", "leakage_test", "monotonicity_test"):
            roles["action"] = "action"
        if test in ("ci_test", "leakage_test"):
            roles["outcome"] = "outcome"
        if test == "prompt_consistency":
            roles["prompt"] = "prompt"
            _check_repetition(pilot, options, owner)
        cols = {role: options.get(role, default) for role, default in roles.items()}
        evidence = options.get("evidence", ())
        evidence = (evidence,) if isinstance(evidence, str) else tuple(evidence or ())
        require_columns(pilot, {**cols, **{f"evidence[{j}]": e
                                           for j, e in enumerate(evidence)}}, owner=owner)
        probability_column(pilot, cols["belief"], owner=owner)
        for role in ("group", "action", "outcome", "prompt"):
            if role in cols:
                label_column(pilot, cols[role], owner=owner,
                             discrete=role in ("action", "outcome"))
        for col in evidence:
            no_missing(pilot, col, owner=owner)
            if not pd.api.types.is_float_dtype(pilot[col].dtype):
                check_case_distinct(pilot, col, owner=owner)
    elif test == "iterated_expectation_check":
        from ._probability._lie import lie_table
        from ._probability._lie import require_same_label_types
        from ._probability._lie import require_same_states

        cols = {role: options.get(role, role) for role in (
            "context", "variable", "state", "p_y_given_x", "p_y_given_xz", "p_z_given_x")}
        table = lie_table(pilot, cols, owner, "data_or_agent")
        base = lie_table(options["baseline"], cols, owner, "options['baseline']")
        require_same_label_types(table, base, cols, owner)
        # named here by the pilot's own labels: a study would name its relabelled contexts
        # ('s0'), and only when it happened to draw the context
        keys = ["context", "variable"]
        units = table[keys].drop_duplicates().merge(base[keys].drop_duplicates(), how="left",
                                                    indicator=True)
        lost = units.loc[(units["_merge"] == "left_only").to_numpy(), keys]
        if len(lost):
            shown = [tuple(plain_value(v) for v in unit) for unit in
                     lost.head(5).itertuples(index=False)]
            raise ValueError(
                f"{owner}: options['baseline'] has no rows for {len(lost)} (context, variable) "
                f"unit(s) of the pilot (first: {shown}); plan draws a context's rows of both "
                "tables together, so the baseline must hold every unit of the pilot.")
        require_same_states(table, base, owner)


def _check_repetition(pilot: pd.DataFrame, options: Mapping[str, Any], owner: str) -> None:
    """The repetition labels plan pairs a prompt_consistency pilot's prompts by, checked as
    the test checks them: a label typed two ways (0 and '0') or given twice in a (context,
    prompt) cell would leave the prompts unpaired, silently, in every study."""
    column = options.get("repetition", "repetition")
    if column is None or (column not in pilot.columns and "repetition" not in options):
        return  # unpaired: no labels, or none under the default name
    require_columns(pilot, {"repetition": column}, owner=owner)
    no_missing(pilot, column, owner=owner)
    check_case_distinct(pilot, column, owner=owner)
    keys = [options.get("group", "context"), options.get("prompt", "prompt"), column]
    dup = np.flatnonzero(pilot[keys].duplicated(keep="first").to_numpy())
    if len(dup):
        raise ValueError(column_error(column, f"identify each repetition once per "
                                      f"('{keys[0]}', '{keys[1]}')", pilot.index[dup],
                                      pilot[column].to_numpy(dtype=object)[dup], owner=owner))


def _agent_at(agent: Any, effect: float | None) -> Any:
    """The agent with its violation set to ``effect`` (see :func:`plan`, Notes)."""
    owner = "plan"
    if effect is None:
        return agent
    if agent.kind == "leaky":
        check_float(effect, "effect", owner, low=0.0, high=1.0, high_open=True)
        return dataclasses.replace(agent, strength=effect)
    if agent.kind == "nonmonotone":
        check_float(effect, "effect", owner, low=0.0, high=agent.loss_defer)
        return dataclasses.replace(agent, loss_defer_band=agent.loss_defer - effect)
    if agent.kind == "prompt_sensitive":
        check_float(effect, "effect", owner, low=0.0, high=1.0)
        largest = max((abs(v) for v in agent.shifts.values()), default=0.0)
        if largest == 0.0:
            raise ValueError(param_error("effect", owner, "None for a prompt-sensitive agent "
                                         "whose shifts are all 0 (nothing to scale)", effect))
        scale = effect / largest
        return dataclasses.replace(agent, shifts={k: v * scale for k, v in agent.shifts.items()})
    raise ValueError(param_error("effect", owner, "None for a rational agent (an effect size "
                                 "sets the violation of a leaky, nonmonotone or "
                                 "prompt_sensitive agent)", effect))
