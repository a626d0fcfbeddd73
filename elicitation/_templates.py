"""Prompt templates as data: a registry of named templates with placeholders.

A :class:`Template` is a system message and a user message with named
``{placeholders}`` (``str.format`` syntax), the labels it asks for one line
each, and its kind (what the answer means). ``{answer_lines}`` is filled by
:meth:`Template.render` from the labels, so the reply format and the labels
the parser expects can never disagree.
"""

from __future__ import annotations

import string
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any, Literal

from coherence._validation import param_error

__all__ = [
    "BELIEF_PROMPTS",
    "CONDITIONAL_VARIANTS",
    "Template",
    "get_template",
    "register_template",
    "template_names",
]

Kind = Literal["probability", "decision"]
KINDS: tuple[str, ...] = ("probability", "decision")
BINARY_LABELS: tuple[str, str] = ("No", "Yes")
DECISION_LABELS: tuple[str, str] = ("Decide", "Answer")
#: Probability-elicitation variants of the decision-coherence study.
BELIEF_PROMPTS: tuple[str, ...] = ("standard", "mse", "absolute", "bayesian")
#: Prompt variants of the conditional-forecasting study.
CONDITIONAL_VARIANTS: tuple[str, ...] = ("baseline", "justify_first", "skeptical")


@dataclass(frozen=True, slots=True)
class Template:
    """A prompt template.

    Parameters
    ----------
    name : str
        Registry name (``'standard'``, ``'decision'``, ...).
    kind : {'probability', 'decision'}
        ``'probability'``: the reply is one ``Label: probability`` line per
        label; ``'decision'``: the reply is ``Decide: Yes/No`` (can you make a
        decision?) and ``Answer: Yes/No`` (if you had to decide), mapped to
        the action yes / no / defer.
    user : str
        The user message, with ``{placeholders}``.
    system : str
        The system message (may be empty; may hold placeholders).
    labels : tuple of str or None
        The labels asked for, in order. ``None`` means "taken from the
        ``states`` field at render time" (a distribution over K states).
    description : str
        One line for listings.

    Notes
    -----
    Every placeholder in ``system`` and ``user`` must be supplied to
    :meth:`render`, except ``answer_lines``, which is built from the labels
    (``No: <probability>`` then ``Yes: <probability>`` for binary templates).
    """

    name: str
    kind: Kind
    user: str
    system: str = ""
    labels: tuple[str, ...] | None = BINARY_LABELS
    description: str = ""
    placeholders: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        owner = "Template"
        if not isinstance(self.name, str) or not self.name:
            raise TypeError(param_error("name", owner, "a non-empty str", self.name))
        if self.kind not in KINDS:
            raise ValueError(param_error("kind", owner, "one of " + ", ".join(map(repr, KINDS)),
                                         self.kind))
        for attr in ("user", "system"):
            if not isinstance(getattr(self, attr), str):
                raise TypeError(param_error(attr, owner, "a str", getattr(self, attr)))
        if self.labels is not None:
            labels = tuple(self.labels)
            if (len(labels) < 2 or not all(isinstance(x, str) and x.strip() for x in labels)
                    or len({x.lower() for x in labels}) != len(labels)):
                raise ValueError(param_error("labels", owner, "None or at least two distinct "
                                             "non-empty str labels", self.labels))
            object.__setattr__(self, "labels", labels)
        names: set[str] = set()
        for text in (self.system, self.user):
            try:
                parsed = list(string.Formatter().parse(text))
            except ValueError as exc:
                raise ValueError(f"Template {self.name!r} is not a valid format string: "
                                 f"{exc}.") from None
            for _, fname, _, _ in parsed:
                if fname is not None:
                    if not fname.isidentifier():
                        raise ValueError(f"Template {self.name!r} has placeholder {{{fname}}}; "
                                         "placeholders must be plain names.")
                    names.add(fname)
        object.__setattr__(self, "placeholders", frozenset(names))

    def labels_for(self, fields: Mapping[str, Any]) -> tuple[str, ...]:
        """The labels this template asks for, given the render fields."""
        if self.kind == "decision":
            return DECISION_LABELS
        if self.labels is not None:
            return self.labels
        states = fields.get("states")
        if (isinstance(states, str) or not isinstance(states, Sequence) or len(states) < 2
                or len({str(s).lower() for s in states}) != len(states)):
            raise ValueError(param_error("states", f"template {self.name!r}",
                                         "a sequence of at least two distinct state names",
                                         states))
        return tuple(str(s) for s in states)

    def render(self, **fields: Any) -> list[dict[str, str]]:
        """Fill the placeholders; return chat messages ``[{'role', 'content'}, ...]``.

        Raises
        ------
        ValueError
            When a placeholder has no value (the message names it).

        Examples
        --------
        >>> from elicitation import get_template
        >>> messages = get_template("standard").render(
        ...     patient_description="is male and 50-64 years old",
        ...     clinical_question="Does the patient have heart disease?")
        >>> print(messages[-1]["content"].splitlines()[-3:-1])
        ['No: <probability>', 'Yes: <probability>']
        """
        labels = self.labels_for(fields)
        if self.kind == "decision":
            lines = "Decide: <Yes or No>\nAnswer: <Yes or No>"
        else:
            lines = "\n".join(f"{label}: <probability>" for label in labels)
        values = {k: (", ".join(map(str, v)) if k == "states" and not isinstance(v, str) else v)
                  for k, v in fields.items()}
        values["answer_lines"] = lines
        values.setdefault("labels", ", ".join(labels))
        missing = sorted(self.placeholders - set(values))
        if missing:
            raise ValueError(f"Template {self.name!r} needs the field(s) "
                             f"{', '.join(map(repr, missing))}; got {sorted(fields)}.")
        messages = []
        if self.system:
            messages.append({"role": "system", "content": self.system.format_map(values)})
        messages.append({"role": "user", "content": self.user.format_map(values)})
        return messages


# --------------------------------------------------------------------------- wording
_FORMAT = (
    "Reply with exactly one line per label, in this order, and nothing else:\n"
    "{answer_lines}\n"
    "Each probability is a number between 0 and 1, and they must sum to 1."
)
_CLINICAL_SYSTEM = "You are an experienced clinician who answers with calibrated probabilities."
_CASE = "A patient {patient_description}.\n\nQuestion: {clinical_question}\n\n"

_BUILTIN: list[Template] = [
    Template(
        "standard", "probability", system=_CLINICAL_SYSTEM,
        user=_CASE + "How likely is it that the answer is Yes? " + _FORMAT,
        description="probability elicitation, no scoring rule stated",
    ),
    Template(
        "mse", "probability", system=_CLINICAL_SYSTEM,
        user=_CASE + "How likely is it that the answer is Yes? Your answer will be scored by "
        "the mean squared error (the Brier score) between your probability of Yes and the true "
        "outcome (1 for Yes, 0 for No); lower is better. " + _FORMAT,
        description="probability elicitation, told the score is the mean squared error",
    ),
    Template(
        "absolute", "probability", system=_CLINICAL_SYSTEM,
        user=_CASE + "How likely is it that the answer is Yes? Your answer will be scored by "
        "the absolute difference between your probability of Yes and the true outcome (1 for "
        "Yes, 0 for No); lower is better. " + _FORMAT,
        description="probability elicitation, told the score is the absolute loss",
    ),
    Template(
        "bayesian", "probability", system=_CLINICAL_SYSTEM,
        user=_CASE + "Reason like a Bayesian: start from the prior probability of Yes for a "
        "patient about whom nothing is known, then update it on each piece of evidence in turn. "
        "Report only the final, updated probabilities. " + _FORMAT,
        description="probability elicitation, told to reason like a Bayesian",
    ),
    Template(
        "decision", "decision", system=_CLINICAL_SYSTEM,
        user=_CASE + "First, can you make a decision on this question with the information "
        "given (Yes or No)? Second, if you had to decide now, what would your answer be "
        "(Yes or No)? Reply with exactly these two lines and nothing else:\n{answer_lines}",
        labels=None,
        description="decision: can you decide, and if you had to; mapped to yes / no / defer",
    ),
    Template(
        "next_state", "probability", system=_CLINICAL_SYSTEM,
        user="A patient {patient_description}.\n\nThe patient's {auxiliary_variable_name} has "
        "not been recorded. What is the probability of each of its possible values "
        "({states})? " + _FORMAT,
        labels=None,
        description="law of iterated expectation: distribution of a withheld auxiliary variable",
    ),
    Template(
        "given_auxiliary", "probability", system=_CLINICAL_SYSTEM,
        user="A patient {patient_description}, and the patient's {auxiliary_variable_name} is "
        "{auxiliary_state}.\n\nQuestion: {clinical_question}\n\nHow likely is it that the "
        "answer is Yes? " + _FORMAT,
        description="law of iterated expectation: the probability given the auxiliary value",
    ),
]

_FORECAST_SYSTEM = "You are an expert forecaster who answers with calibrated probabilities."
_FORECAST = (
    "Question: {question}\n\nWhat is the probability that this question resolves YES? "
    + _FORMAT
)
_CONDITION = (
    "Consider two forecasting questions.\n\nQuestion A: {question}\n"
    "Question B: {condition_question}\n\nSuppose that question B has resolved {condition_outcome}."
    "\n\n"
)
_CONDITIONAL_ASK = (
    "Given that, what is the probability that question A resolves YES? " + _FORMAT
)
_BUILTIN += [
    Template(
        "forecast", "probability", system=_FORECAST_SYSTEM, user=_FORECAST,
        description="conditional forecasting: the unconditional probability P(A)",
    ),
    Template(
        "conditional_baseline", "probability", system=_FORECAST_SYSTEM,
        user=_CONDITION + _CONDITIONAL_ASK,
        description="conditional forecasting: P(A | B resolved), baseline",
    ),
    Template(
        "conditional_justify_first", "probability", system=_FORECAST_SYSTEM,
        user=_CONDITION + "Before answering, think about whether there is a causal or logical "
        "relationship between the two questions, and if so in which direction it runs. "
        + _CONDITIONAL_ASK,
        description="conditional forecasting: P(A | B resolved), justify the relation first",
    ),
    Template(
        "conditional_skeptical", "probability", system=_FORECAST_SYSTEM,
        user=_CONDITION + "Be skeptical of apparent links: why might these two questions be "
        "independent? Is there a direct causal mechanism connecting them? If there is none, "
        "stay close to your unconditional estimate for question A. " + _CONDITIONAL_ASK,
        description="conditional forecasting: P(A | B resolved), skeptical of links",
    ),
]

_REGISTRY: dict[str, Template] = {t.name: t for t in _BUILTIN}


def register_template(template: Template, *, overwrite: bool = False) -> Template:
    """Add a template to the registry so runners can use it by name.

    Parameters
    ----------
    template : Template
        The template; its ``name`` is the registry key.
    overwrite : bool
        Replace a template already registered under that name.

    Returns
    -------
    Template
        The template registered.

    Examples
    --------
    >>> from elicitation import Template, register_template
    >>> t = register_template(Template(
    ...     "terse", "probability",
    ...     user="{patient_description}. {clinical_question}\\n{answer_lines}"),
    ...     overwrite=True)
    >>> sorted(t.placeholders)
    ['answer_lines', 'clinical_question', 'patient_description']
    """
    if not isinstance(template, Template):
        raise TypeError(param_error("template", "register_template", "a Template", template))
    if not isinstance(overwrite, bool):
        raise TypeError(param_error("overwrite", "register_template", "a bool", overwrite))
    if template.name in _REGISTRY and not overwrite:
        raise ValueError(param_error("template", "register_template",
                                     "a template whose name is not registered yet (pass "
                                     "overwrite=True to replace it)", template.name))
    _REGISTRY[template.name] = template
    return template


def get_template(name: str | Template) -> Template:
    """The registered template called ``name`` (a :class:`Template` is returned as is)."""
    if isinstance(name, Template):
        return name
    if not isinstance(name, str) or name not in _REGISTRY:
        raise ValueError(param_error("name", "get_template", "a registered template name (one "
                                     "of " + ", ".join(map(repr, sorted(_REGISTRY))) + ")",
                                     name))
    return _REGISTRY[name]


def template_names() -> list[str]:
    """Names of the registered templates, sorted."""
    return sorted(_REGISTRY)
