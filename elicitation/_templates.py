"""Prompt templates as data: a registry of named templates with placeholders.

A :class:`Template` is a system message and a user message with named
``{placeholders}`` (``str.format`` syntax), the labels it asks for one line
each, and its kind (what the answer means). ``{answer_lines}`` is filled by
:meth:`Template.render` from the labels, so the reply format and the labels
the parser expects can never disagree.

The default templates are the published prompts of the two studies, read
from the package's data file ``prompts/published.toml`` (quoted verbatim,
with their citation); the toolkit's own paraphrases stay available under the
same names with the suffix ``_toolkit``.
"""

from __future__ import annotations

import re
import string
import tomllib
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from importlib import resources
from typing import Any
from typing import Literal

from coherence._validation import param_error

__all__ = [
    "BELIEF_PROMPTS",
    "CONDITIONAL_VARIANTS",
    "Template",
    "get_template",
    "published_prompts",
    "register_template",
    "template_names",
]

Kind = Literal["probability", "decision"]
KINDS: tuple[str, ...] = ("probability", "decision")
BINARY_LABELS: tuple[str, str] = ("No", "Yes")
#: The decision labels of the toolkit's own wording (the paper's are "Can decide", "Decision").
DECISION_LABELS: tuple[str, str] = ("Decide", "Answer")
#: Probability-elicitation variants of the decision-coherence study.
BELIEF_PROMPTS: tuple[str, ...] = ("standard", "mse", "absolute", "bayesian")
#: Prompt variants of the conditional-forecasting study.
CONDITIONAL_VARIANTS: tuple[str, ...] = ("baseline", "justify_first", "skeptical")

#: control characters (C0, DEL, C1) and the Unicode line and paragraph separators
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029]")
#: what a name may not hold, as the errors say it
NO_CONTROL = "no control character such as a line break, tab or NUL"


def has_control(text: str) -> bool:
    """Whether ``text`` holds a control character (a line break, tab, NUL, ...) or a
    Unicode line or paragraph separator: in a name (of a template, a prompt variant, a
    model) it breaks the lines of a table, a summary or a report, and is kept in the
    cache keys."""
    return _CONTROL.search(text) is not None


def _name_iv(value: Any, param: str, owner: str, rule: str = "a non-empty str") -> None:
    """A name: a str that is not blank (TypeError, as an empty one) and holds no control
    character (ValueError); the error names ``param`` and the value."""
    if not isinstance(value, str) or not value.strip():
        # '   ' was taken as a name, shown blank in listings and tables
        raise TypeError(param_error(param, owner, rule, value))
    if has_control(value):
        raise ValueError(param_error(param, owner, f"{rule} with {NO_CONTROL}", value))


def _checked_labels(labels_given: Any, kind: str, owner: str) -> tuple[str, ...] | None:
    """A template's labels as a tuple, checked (None: the states at render time; a
    decision template's default is Yes and No)."""
    labels_in = (DECISION_LABELS if kind == "decision" and labels_given is None
                 else labels_given)
    if labels_in is None:
        return None
    if not isinstance(labels_in, list | tuple):
        # a str was read as its characters ('Yes' as 'Y', 'e', 's'), a set in any order
        raise TypeError(param_error("labels", owner, "None or a list or tuple of str "
                                    "labels", labels_given))
    labels = tuple(labels_in)
    # a label with a line break split its answer line ('Y\nes: <probability>'); one
    # with outer spaces (' No', 'No ') failed the reply 'No: 0.3' as ambiguous
    if (len(labels) < 2 or not all(isinstance(x, str) and x.strip() == x and x
                                   and not has_control(x) for x in labels)
            or len({x.lower() for x in labels}) != len(labels)):
        raise ValueError(param_error("labels", owner, "None or at least two distinct "
                                     "non-empty str labels (distinct in any case, "
                                     "without leading or trailing spaces or control "
                                     "characters)", labels_given))
    if kind == "decision" and len(labels) != 2:
        raise ValueError(param_error("labels", owner, "two labels for a decision "
                                     "template", labels_given))
    return labels


def _placeholders(name: str, texts: tuple[str, ...]) -> frozenset[str]:
    """The placeholder names of a template's messages: plain names only."""
    names: set[str] = set()
    for text in texts:
        try:
            parsed = list(string.Formatter().parse(text))
        except ValueError as exc:
            raise ValueError(f"Template {name!r} is not a valid format string: "
                             f"{exc}.") from None
        for _, fname, spec, conversion in parsed:
            if fname is not None:
                # a conversion or format spec failed only in render ('{a:>{b}}' with
                # KeyError 'b', '{a:d}' with "Unknown format code 'd'"), naming nothing
                if not fname.isidentifier() or spec or conversion:
                    shown = fname + (f"!{conversion}" if conversion else "") + (
                        f":{spec}" if spec else "")
                    raise ValueError(f"Template {name!r} has placeholder {{{shown}}}; "
                                     "placeholders must be plain names (no conversion "
                                     "or format spec).")
                names.add(fname)
    return frozenset(names)


@dataclass(frozen=True, slots=True)
class Template:
    """A prompt template.

    Parameters
    ----------
    name : str
        Registry name (``'standard'``, ``'decision'``, ...): not blank, and
        without control characters (a line break, tab, NUL, ...).
    kind : {'probability', 'decision'}
        ``'probability'``: the reply gives one ``Label: probability`` line
        per label; ``'decision'``: the reply gives two ``Label: Yes/No``
        lines, "can you make a decision?" then "if you had to decide", mapped
        to the action yes / no / defer.
    user : str
        The user message, with ``{placeholders}`` (not blank: it is always sent).
    system : str
        The system message (may be empty; may hold placeholders).
    labels : tuple of str or None
        The labels asked for, in order, distinct in any case, each without
        leading or trailing spaces or control characters (the reply gives one
        line per label). For a probability template ``None``
        means "taken from the ``states`` field at render time" (a
        distribution over K states); for a decision template the two labels
        (``None``: ``('Decide', 'Answer')``).
    description : str
        One line for listings.
    variant : str
        The prompt variant the template asks (the ``prompt`` column of the
        belief/action table); default: the name. The paper's ``standard``
        and the toolkit's ``standard_toolkit`` are both variant
        ``'standard'``. Given, it is not blank and holds no control
        character, as ``name``.
    source : str
        Where the wording comes from: the citation of a published prompt, or
        ``'toolkit'``.
    reasoning : bool
        The reply may hold written reasoning before the answer lines, which
        end it; the parser reads the answer lines at the end only.

    Notes
    -----
    Every placeholder in ``system`` and ``user`` must be supplied to
    :meth:`render`, except those built from the labels: ``answer_lines``
    (``No: <probability>`` then ``Yes: <probability>``), ``labels``
    (``No, Yes``), ``n_labels`` and ``example_lines`` (each label with the
    share 1/K, as the paper's example).
    """

    name: str
    kind: Kind
    user: str
    system: str = ""
    labels: tuple[str, ...] | None = BINARY_LABELS
    description: str = ""
    variant: str = ""
    source: str = "toolkit"
    reasoning: bool = False
    placeholders: frozenset[str] = field(init=False)

    def __post_init__(self) -> None:
        owner = "Template"
        _name_iv(self.name, "name", owner)
        if self.kind not in KINDS:
            raise ValueError(param_error("kind", owner, "one of " + ", ".join(map(repr, KINDS)),
                                         self.kind))
        for attr in ("user", "system", "variant", "source", "description"):
            if not isinstance(getattr(self, attr), str):
                raise TypeError(param_error(attr, owner, "a str", getattr(self, attr)))
        if not isinstance(self.reasoning, bool):
            raise TypeError(param_error("reasoning", owner, "a bool", self.reasoning))
        if not self.user.strip():
            # an empty user message was sent as is: the model was asked nothing
            raise ValueError(param_error("user", owner, "a non-blank message", self.user))
        if not self.variant:
            object.__setattr__(self, "variant", self.name)
        # the variant is the table's prompt column: '   ' or 'a\nb' labelled the rows so
        _name_iv(self.variant, "variant", owner, "a non-empty str ('' for the name)")
        labels = _checked_labels(self.labels, self.kind, owner)
        if labels is not None:
            object.__setattr__(self, "labels", labels)
        object.__setattr__(self, "placeholders", _placeholders(self.name, (self.system, self.user)))

    def labels_for(self, fields: Mapping[str, Any]) -> tuple[str, ...]:
        """The labels this template asks for, given the render fields."""
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
        ...     clinical_question="have heart disease")
        >>> print(messages[-1]["content"].splitlines()[0])
        There is a patient who is male and 50-64 years old. What is the probability that \
they have heart disease? Return probabilities for: No and Yes.
        """
        labels = self.labels_for(fields)
        if self.kind == "decision":
            lines = "\n".join(f"{label}: <Yes or No>" for label in labels)
        else:
            lines = "\n".join(f"{label}: <probability>" for label in labels)
        values = {k: (", ".join(map(str, v)) if k == "states" and not isinstance(v, str) else v)
                  for k, v in fields.items()}
        values["answer_lines"] = lines
        values["labels"] = ", ".join(labels)
        values["n_labels"] = str(len(labels))
        values["example_lines"] = "\n".join(f"{label}: {1.0 / len(labels):.2f}"
                                            for label in labels)
        missing = sorted(self.placeholders - set(values))
        if missing:
            raise ValueError(f"Template {self.name!r} needs the field(s) "
                             f"{', '.join(map(repr, missing))}; got {sorted(fields)}.")
        messages = []
        if self.system:
            messages.append({"role": "system", "content": self.system.format_map(values)})
        messages.append({"role": "user", "content": self.user.format_map(values)})
        return messages


# --------------------------------------------------------------------------- published
def published_prompts() -> dict[str, Any]:
    """The package's data file of published prompts, as a dict (a fresh copy).

    Keys: ``sources`` (citation per study), ``templates`` (the decision
    paper's prompts, verbatim) and ``instructions`` (the conditional study's
    quoted instructions). The file's header lists the only mechanical changes
    made to the quoted text.

    See Also
    --------
    get_template : a registered template by name.
    """
    data = resources.files("elicitation").joinpath("prompts/published.toml").read_bytes()
    return tomllib.loads(data.decode("utf-8"))


_PUBLISHED = published_prompts()


def _citation(source: str) -> str:
    return str(_PUBLISHED["sources"][source]["citation"])


_BUILTIN: list[Template] = []
for _name, _entry in _PUBLISHED["templates"].items():
    _BUILTIN.append(Template(
        _name, _entry["kind"], user=_entry["user"],
        labels=None if _entry.get("states") else tuple(_entry.get("labels", BINARY_LABELS)),
        description=f"published prompt ({_entry['section']})",
        source=f"{_citation(_entry['source'])}, {_entry['section']}",
    ))

# --------------------------------------------------------------------------- toolkit wording
_FORMAT = (
    "Reply with exactly one line per label, in this order, and nothing else:\n"
    "{answer_lines}\n"
    "Each probability is a number between 0 and 1, and they must sum to 1."
)
_CLINICAL_SYSTEM = "You are an experienced clinician who answers with calibrated probabilities."
_CASE = "A patient {patient_description}.\n\nQuestion: do they {clinical_question}?\n\n"


def _scored_toolkit(variant: str, score: str, loss: str) -> Template:
    """The toolkit's probability prompt that states the scoring rule: the answer is scored
    by ``score`` between the probability of Yes and the outcome (``loss`` names it in the
    description)."""
    return Template(
        f"{variant}_toolkit", "probability", system=_CLINICAL_SYSTEM, variant=variant,
        user=_CASE + "How likely is it that the answer is Yes? Your answer will be scored by "
        + score + " between your probability of Yes and the true outcome (1 for Yes, 0 for "
        "No); lower is better. " + _FORMAT,
        description=f"probability elicitation, told the score is {loss} (toolkit wording)",
    )


_BUILTIN += [
    Template(
        "standard_toolkit", "probability", system=_CLINICAL_SYSTEM, variant="standard",
        user=_CASE + "How likely is it that the answer is Yes? " + _FORMAT,
        description="probability elicitation, no scoring rule stated (toolkit wording)",
    ),
    _scored_toolkit("mse", "the mean squared error (the Brier score)", "the mean squared error"),
    _scored_toolkit("absolute", "the absolute difference", "the absolute loss"),
    Template(
        "bayesian_toolkit", "probability", system=_CLINICAL_SYSTEM, variant="bayesian",
        user=_CASE + "Reason like a Bayesian: start from the prior probability of Yes for a "
        "patient about whom nothing is known, then update it on each piece of evidence in turn. "
        "Report only the final, updated probabilities. " + _FORMAT,
        description="probability elicitation, told to reason like a Bayesian (toolkit wording)",
    ),
    Template(
        "decision_toolkit", "decision", system=_CLINICAL_SYSTEM, variant="decision",
        user=_CASE + "First, can you make a decision on this question with the information "
        "given (Yes or No)? Second, if you had to decide now, what would your answer be "
        "(Yes or No)? Reply with exactly these two lines and nothing else:\n{answer_lines}",
        labels=None,
        description="decision: can you decide, and if you had to; mapped to yes / no / defer "
        "(toolkit wording)",
    ),
    Template(
        "next_state_toolkit", "probability", system=_CLINICAL_SYSTEM, variant="next_state",
        user="A patient {patient_description}.\n\nThe patient's {auxiliary_variable_name} has "
        "not been recorded. What is the probability of each of its possible values "
        "({states})? " + _FORMAT,
        labels=None,
        description="law of iterated expectation: distribution of a withheld auxiliary "
        "variable (toolkit wording)",
    ),
    Template(
        "given_auxiliary_toolkit", "probability", system=_CLINICAL_SYSTEM,
        variant="given_auxiliary",
        user="A patient {patient_description}, and the patient's {auxiliary_variable_name} is "
        "{auxiliary_state}.\n\nQuestion: do they {clinical_question}?\n\nHow likely is it that "
        "the answer is Yes? " + _FORMAT,
        description="law of iterated expectation: the probability given the auxiliary value "
        "(toolkit wording)",
    ),
]

# --------------------------------------------------------------------------- conditional study
_FORECAST_SYSTEM = "You are an expert forecaster who answers with calibrated probabilities."
_FORECAST = (
    "Question: {question}\n\nWhat is the probability that this question resolves YES? "
    + _FORMAT
)
_TWO = "Consider two forecasting questions.\n\nQuestion A: {question}\nQuestion B: " \
    "{condition_question}\n\n"
_CONDITION = _TWO + "Suppose that question B has resolved {condition_outcome}.\n\n"
_UNCONDITIONED = _TWO + "The outcome of question B is not known.\n\n"
_CONDITIONAL_ASK = (
    "Given that, what is the probability that question A resolves YES? " + _FORMAT
)
_END = (
    "\n\nThen end your reply with exactly these lines, one per label, in this order:\n"
    "{answer_lines}\n"
    "Each probability is a number between 0 and 1, and they must sum to 1."
)
_STUDY = _citation("conditional_study")

_BUILTIN += [
    Template(
        "forecast", "probability", system=_FORECAST_SYSTEM, user=_FORECAST, variant="baseline",
        description="conditional forecasting: the unconditional probability P(A), baseline",
    ),
    Template(
        "conditional_baseline", "probability", system=_FORECAST_SYSTEM, variant="baseline",
        user=_CONDITION + _CONDITIONAL_ASK,
        description="conditional forecasting: P(A | B resolved), baseline",
    ),
    Template(
        "conditional_justify_first_toolkit", "probability", system=_FORECAST_SYSTEM,
        variant="justify_first",
        user=_CONDITION + "Before answering, think about whether there is a causal or logical "
        "relationship between the two questions, and if so in which direction it runs. "
        + _CONDITIONAL_ASK,
        description="conditional forecasting: P(A | B resolved), justify the relation first "
        "(toolkit paraphrase, answer lines only)",
    ),
    Template(
        "conditional_skeptical_toolkit", "probability", system=_FORECAST_SYSTEM,
        variant="skeptical",
        user=_CONDITION + "Be skeptical of apparent links: why might these two questions be "
        "independent? Is there a direct causal mechanism connecting them? If there is none, "
        "stay close to your unconditional estimate for question A. " + _CONDITIONAL_ASK,
        description="conditional forecasting: P(A | B resolved), skeptical of links "
        "(toolkit paraphrase, answer lines only)",
    ),
]
for _variant, _instruction in _PUBLISHED["instructions"].items():
    _quoted = _instruction["text"].replace("{", "{{").replace("}", "}}")
    _BUILTIN += [
        Template(
            f"forecast_{_variant}", "probability", system=_FORECAST_SYSTEM, variant=_variant,
            user=_UNCONDITIONED + "What is the probability that question A resolves YES?\n\n"
            + _quoted + _END, reasoning=True, source=f"{_STUDY} (quoted instruction)",
            description=f"conditional forecasting: P(A) under the {_variant} variant "
            "(the study's instruction, reasoning allowed)",
        ),
        Template(
            f"conditional_{_variant}", "probability", system=_FORECAST_SYSTEM,
            variant=_variant, user=_CONDITION + "Given that, what is the probability that "
            "question A resolves YES?\n\n" + _quoted + _END, reasoning=True,
            source=f"{_STUDY} (quoted instruction)",
            description=f"conditional forecasting: P(A | B resolved) under the {_variant} "
            "variant (the study's instruction, reasoning allowed)",
        ),
    ]

_REGISTRY: dict[str, Template] = {t.name: t for t in _BUILTIN}
_BUILTIN_IDS = frozenset(id(t) for t in _BUILTIN)


def is_builtin(template: Template) -> bool:
    """Whether ``template`` is one of the package's own (whose question is a phrase)."""
    return id(template) in _BUILTIN_IDS


def register_template(template: Template, *, overwrite: bool = False) -> Template:
    """Add a template to the registry so runners can use it by name.

    A template is a named prompt with the labels its replies are read by; once
    registered, the runners ask it by its name (``prompts=[...]``).

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

    See Also
    --------
    get_template : a registered template by name.
    template_names : the names registered.

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
    """The registered template called ``name`` (a :class:`Template` is returned as is).

    The built-in templates are the papers' published prompts, verbatim, and the
    toolkit's paraphrases of them; :func:`register_template` adds others. A name not
    registered raises a ``ValueError``.

    See Also
    --------
    register_template : add a template to the registry.
    template_names : the names registered.
    published_prompts : the published prompts the built-in templates come from.
    """
    if isinstance(name, Template):
        return name
    if not isinstance(name, str) or name not in _REGISTRY:
        raise ValueError(param_error("name", "get_template", "a registered template name (one "
                                     "of " + ", ".join(map(repr, sorted(_REGISTRY))) + ")",
                                     name))
    return _REGISTRY[name]


def template_names() -> list[str]:
    """Names of the registered templates, sorted.

    The built-in templates (the papers' published prompts and the toolkit's paraphrases)
    and those added by :func:`register_template`: the names a runner takes
    (``prompts=``, ``decision=``).

    See Also
    --------
    get_template : a registered template by name.
    register_template : add a template to the registry.
    """
    return sorted(_REGISTRY)
