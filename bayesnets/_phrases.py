"""Evidence to natural language: phrase tables per (variable, state).

A phrase table maps each variable to a mapping ``state -> phrase``. A phrase is
either a predicate about the subject ("is sick", "has tetralogy of Fallot") or a
whole clause ("the chest X-ray report is normal"). Built-in tables for the
networks used in the demo live in ``bayesnets/phrases/<network>.json`` with the
keys ``network``, ``subject``, ``question``, ``names`` (a readable name of each
variable, for prompts about the variable itself) and ``phrases``.
"""

from __future__ import annotations

import functools
import importlib.resources
import json
import string
from collections.abc import Mapping
from types import MappingProxyType
from typing import Any

import pandas as pd

from coherence._validation import is_bool
from coherence._validation import param_error
from coherence._validation import unique_columns

from ._network import number_text

__all__ = ["PHRASE_NETWORKS", "PhraseTable", "describe", "phrase_table", "question"]

PHRASE_NETWORKS: tuple[str, ...] = ("alarm", "asia", "cancer", "child")

# a phrase starting with one of these words is a predicate about the subject
_PREDICATE_WORDS = frozenset({
    "is", "has", "have", "was", "were", "does", "did", "suffered", "smokes", "recently",
    "visited", "had", "shows", "takes", "reports",
})


class PhraseTable(Mapping[str, Mapping[Any, str]]):
    """A read-only phrase table: ``table[variable][state] -> phrase``.

    Attributes
    ----------
    network : str or None
        The network the table belongs to.
    subject : str
        How the subject is named in questions (``'the newborn'``).
    template : str
        The question template: ``{subject} {phrase}`` once (the subject before a
        predicate; a clause replaces both) and no other field (a literal brace is
        doubled, ``{{``); ``ValueError`` otherwise.
    """

    __slots__ = ("_phrases", "network", "subject", "template")

    def __init__(self, phrases: Mapping[str, Mapping[Any, str]], *, network: str | None = None,
                 subject: str = "the patient",
                 template: str = "What is the probability that {subject} {phrase}?") -> None:
        if not isinstance(phrases, Mapping):
            raise TypeError(param_error("phrases", "PhraseTable", "a mapping of variable to a "
                                        "mapping of state to phrase",
                                        type(phrases).__name__))
        for attr, value in (("network", network), ("subject", subject),
                            ("template", template)):
            if not (isinstance(value, str) or (attr == "network" and value is None)):
                raise TypeError(param_error(attr, "PhraseTable", "a str",
                                            type(value).__name__))
        _check_template(template)
        clean: dict[str, Mapping[Any, str]] = {}
        for var, table in phrases.items():
            if not isinstance(table, Mapping):
                raise TypeError(param_error("phrases", "PhraseTable", "a mapping of variable to "
                                            "a mapping of state to phrase", table))
            for state, text in table.items():
                if not isinstance(text, str) or not text.strip():
                    raise ValueError(param_error(
                        "phrases", "PhraseTable", "non-empty text for every (variable, state)",
                        f"{text!r} for ({var!r}, {state!r})"))
            if str(var) in clean:  # 1 and '1': the second replaced the first's phrases
                raise ValueError(param_error(
                    "phrases", "PhraseTable", "a mapping naming each variable once (a variable "
                    "is named by text: 1 and '1' are one variable)",
                    f"{[v for v in phrases if str(v) == str(var)]!r}"))
            clean[str(var)] = MappingProxyType(dict(table))
        self._phrases = MappingProxyType(clean)
        self.network = network
        self.subject = subject
        self.template = template

    def __getitem__(self, key: str) -> Mapping[Any, str]:
        return self._phrases[key]

    def __iter__(self) -> Any:
        return iter(self._phrases)

    def __len__(self) -> int:
        return len(self._phrases)

    def __repr__(self) -> str:
        return f"PhraseTable(network={self.network!r}, variables={len(self)})"

    def phrase(self, variable: str, state: Any) -> str:
        """The phrase for ``variable = state``; ValueError naming both if missing."""
        table = self._phrases.get(variable)
        if table is None:
            raise ValueError(f"No phrase for variable '{variable}' (state {state!r}) in the "
                             f"phrase table{self._of()}; add an entry "
                             f"{{'{variable}': {{{state!r}: '...'}}}}.")
        # equal keys, but a boolean matches only a boolean key (True == 1 in Python: a True
        # was phrased as state 1), then text ('1' and 1, or 1.0, name the same state)
        for key, text in table.items():
            if is_bool(key) == is_bool(state) and _equal(key, state):
                return text
        for key, text in table.items():
            if isinstance(key, str) and key in (str(state), number_text(state)):
                return text
            if isinstance(state, str) and state == str(key):
                return text
        raise ValueError(f"No phrase for state {state!r} of variable '{variable}' in the "
                         f"phrase table{self._of()}; phrased states: "
                         f"{', '.join(map(repr, table))}.")

    def _of(self) -> str:
        return f" of network '{self.network}'" if self.network else ""


def _check_template(template: str) -> None:
    """``{subject} {phrase}`` once and no other field: :func:`question` fills exactly these
    (and drops ``{subject} `` before a clause); a template without ``{phrase}`` asked a
    question without the target, another field raised KeyError only when asked."""
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(template) if f is not None]
    except ValueError:  # an unbalanced brace
        fields = []
    if sorted(fields) != ["phrase", "subject"] or "{subject} {phrase}" not in template:
        raise ValueError(param_error(
            "template", "PhraseTable", "a question with '{subject} {phrase}' once and no "
            "other field (a literal brace doubled: '{{')", template))


def _equal(key: Any, state: Any) -> bool:
    try:
        return bool(key == state)
    except (TypeError, ValueError):  # an array, or a type that cannot compare
        return False


@functools.cache
def _document(network: str) -> Mapping[str, Any]:
    """The parsed ``phrases/<network>.json`` of a network of :data:`PHRASE_NETWORKS`."""
    ref = importlib.resources.files("bayesnets") / "phrases" / f"{network}.json"
    return MappingProxyType(json.loads(ref.read_text(encoding="utf-8")))


def variable_name(network: str, variable: str) -> str:
    """The readable name of a bundled network's variable; ``variable`` when none is known."""
    if network not in PHRASE_NETWORKS:
        return variable
    return str(_document(network).get("names", {}).get(variable, variable))


@functools.cache
def _builtin_table(network: str) -> PhraseTable:
    """The phrase table of ``phrases/<network>.json``, built once."""
    doc = _document(network)
    return PhraseTable(doc["phrases"], network=doc["network"], subject=doc["subject"],
                       template=doc["question"])


def phrase_table(network: str) -> PhraseTable:
    """The built-in phrase table of a bundled network.

    Each bundled network comes with phrases that put a variable's state into words
    (``'has tetralogy of Fallot'``), the subject of its questions and a question
    template; :func:`describe`, :func:`question` and :func:`predicate` read them.

    Parameters
    ----------
    network : str
        One of :data:`PHRASE_NETWORKS` (``'child'``, ``'alarm'``, ``'asia'``,
        ``'cancer'``).

    Returns
    -------
    PhraseTable
        The phrases (``table[variable][state]``), the ``subject`` and the question
        ``template``; read once, then cached.

    See Also
    --------
    describe : phrase an evidence assignment with the table.
    question : phrase a question with the table.

    Examples
    --------
    >>> import bayesnets
    >>> bayesnets.phrase_table("child")["Disease"]["Fallot"]
    'has tetralogy of Fallot'
    """
    if not isinstance(network, str) or network not in PHRASE_NETWORKS:
        raise ValueError(param_error("network", "phrase_table", "a network with a built-in "
                                     "phrase table (" + ", ".join(map(repr, PHRASE_NETWORKS))
                                     + "); pass your own phrases instead", network))
    return _builtin_table(network)


def as_table(phrases: Any, variables: list[str], owner: str) -> PhraseTable:
    if isinstance(phrases, PhraseTable):
        return phrases
    if isinstance(phrases, str):
        return phrase_table(phrases)
    name = getattr(phrases, "name", None)
    if hasattr(phrases, "variables") and isinstance(name, str):  # a Network
        return phrase_table(name)
    if isinstance(phrases, Mapping):
        return PhraseTable(phrases)
    if phrases is None:
        for net in PHRASE_NETWORKS:
            table = phrase_table(net)
            if variables and all(v in table for v in variables):
                return table
        raise ValueError(param_error("phrases", owner, "given (a mapping variable -> state -> "
                                     "phrase or a network name) for variables "
                                     f"{variables!r}, which no built-in table covers", None))
    raise TypeError(param_error("phrases", owner, "a mapping, a PhraseTable, a network name or "
                                "None", type(phrases).__name__))


def _join(parts: list[str]) -> str:
    if not parts:
        return ""
    if len(parts) == 1:
        return parts[0]
    if len(parts) == 2:
        return f"{parts[0]} and {parts[1]}"
    return ", ".join(parts[:-1]) + f", and {parts[-1]}"


def _row_items(evidence_row: Any, owner: str) -> list[tuple[str, Any]]:
    if isinstance(evidence_row, pd.DataFrame):
        if len(evidence_row) != 1:
            raise ValueError(param_error("evidence_row", owner, "one row", f"{len(evidence_row)} "
                                         "rows (use describe_rows for many)"))
        evidence_row = evidence_row.iloc[0]
    if isinstance(evidence_row, pd.Series | Mapping):
        items = list(evidence_row.items())
    else:
        raise TypeError(param_error("evidence_row", owner, "a mapping or pandas Series of "
                                    "variable -> state", type(evidence_row).__name__))
    names = [str(var) for var, _ in items]
    twice = list(dict.fromkeys(v for v in names if names.count(v) > 1))
    if twice:  # each copy was phrased: 'smokes and does not smoke'
        raise ValueError(param_error(
            "evidence_row", owner, "a row naming each variable once (one state each)",
            f"variable(s) {', '.join(map(repr, twice))} named more than once, with states "
            + "; ".join(f"{v!r}: {[s for n, (_, s) in zip(names, items, strict=True) if n == v]}"
                        for v in twice)))
    out = []
    for var, state in items:
        if state is None or (not isinstance(state, str) and pd.isna(state)):
            continue
        out.append((str(var), state))
    return out


def describe(evidence_row: Any, phrases: Any = None) -> str:
    """Turn one evidence assignment into a natural-language description.

    Each observed variable's state becomes its phrase from the network's phrase table,
    and the phrases are joined into the description of a context that a prompt quotes.

    Parameters
    ----------
    evidence_row : mapping or pandas.Series
        ``{variable: state}``; missing values (None / NaN) are skipped.
    phrases : mapping, PhraseTable, str, Network or None
        ``{variable: {state: phrase}}``, a :class:`PhraseTable`, a network name
        with a built-in table (``'child'``, ...) or a :class:`Network`. By
        default the built-in table that covers every variable of the row.

    Returns
    -------
    str
        The phrases in the row's order, joined as a list ("a, b, and c"; "a
        and b"; "a").

    Raises
    ------
    ValueError
        Naming the variable and state when a phrase is missing.

    See Also
    --------
    describe_rows : the description of every row of a frame.
    question : the question asking for a probability.
    phrase_table : the phrases used.

    Examples
    --------
    >>> import bayesnets
    >>> bayesnets.describe({"Sick": "yes", "GruntingReport": "yes", "CO2Report": "<7.5"},
    ...                    "child")
    'is sick, grunting is reported, and the reported CO2 is below 7.5 kPa'
    >>> bayesnets.describe({"colic": "yes"}, {"colic": {"yes": "have colic"}})
    'have colic'
    """
    items = _row_items(evidence_row, "describe")
    table = as_table(phrases, [v for v, _ in items], "describe")
    return _join([table.phrase(v, s) for v, s in items])


def describe_rows(evidence: pd.DataFrame, phrases: Any = None) -> pd.Series:
    """:func:`describe` for every row of a frame (a Series indexed like it).

    The contexts of a study at once: each row's evidence assignment is described as
    :func:`describe` describes one, for the prompts of every context.

    See Also
    --------
    describe : the description of one evidence assignment.
    """
    if not isinstance(evidence, pd.DataFrame):
        raise TypeError(param_error("evidence", "describe_rows", "a pandas DataFrame (one "
                                    "column per evidence variable)",
                                    type(evidence).__name__))
    unique_columns(evidence, name="evidence", owner="describe_rows")
    table = as_table(phrases, [str(c) for c in evidence.columns], "describe_rows")
    cols = [str(c) for c in evidence.columns]
    values = evidence.to_numpy(dtype=object)
    texts = []
    for row in values:
        parts = [table.phrase(v, s) for v, s in zip(cols, row, strict=True)
                 if not (s is None or (not isinstance(s, str) and pd.isna(s)))]
        texts.append(_join(parts))
    return pd.Series(texts, index=evidence.index, dtype=object, name="description")


#: third-person verbs and their plural, for the papers' "... that they <predicate>"
_PLURAL = {"has": "have", "is": "are", "was": "were", "does": "do", "suffers": "suffer",
           "shows": "show"}


def predicate(network: Any, target: str, state: Any) -> str:
    """The target's phrase as a plural predicate, the words after "they" in the papers'
    prompts ("have tetralogy of Fallot" for "has tetralogy of Fallot").

    Used to write the papers' prompts, whose subject is plural ("they have ..."), from
    the singular phrases of the phrase table.

    Parameters
    ----------
    network : str or Network
        A network with a phrase table (:data:`PHRASE_NETWORKS`).
    target : str
        The variable whose state the phrase names.
    state : object
        The state whose probability is asked for.

    Returns
    -------
    str
        The phrase with its first verb in the plural (``'have tetralogy of Fallot'``).

    Raises
    ------
    ValueError
        When the network has no phrase for the state, or the phrase does not start
        with a verb that has a plural here.

    See Also
    --------
    question : the whole question, in the singular.
    phrase_table : the phrases it reads.
    """
    name = network if isinstance(network, str) else getattr(network, "name", network)
    try:
        phrase = phrase_table(name)[target][state]
    except (KeyError, ValueError):
        phrase = None
    if isinstance(phrase, str):
        first, _, rest = phrase.partition(" ")
        if first.lower() in _PLURAL:
            return f"{_PLURAL[first.lower()]} {rest}".strip()
    raise ValueError(f"Cannot phrase the question of network {name!r} as a plural "
                     f"predicate (target {target!r}, state {state!r}); name the question "
                     "yourself (e.g. 'have the disease')")


def question(target: str, state: Any, phrases: Any = None) -> str:
    """The question asking for P(target = state) in natural language.

    Built from the network's phrase table, in the papers' wording; it asks about one
    state of one variable.

    Parameters
    ----------
    target : str
        The variable asked about.
    state : object
        The state whose probability is asked for.
    phrases : mapping, PhraseTable, str, Network or None
        As in :func:`describe`.

    Returns
    -------
    str
        The table's template filled in. A phrase that starts with a verb ("has
        ...", "is ...") is a predicate and follows the subject ("What is the
        probability that the newborn has tetralogy of Fallot?"); any other
        phrase is a clause used on its own ("What is the probability that blood
        pressure is low?").

    See Also
    --------
    describe : the description of the evidence the question is asked under.
    auxiliary_name : a readable name of a network variable.

    Examples
    --------
    >>> import bayesnets
    >>> bayesnets.question("Disease", "Fallot", "child")
    'What is the probability that the newborn has tetralogy of Fallot?'
    """
    table = as_table(phrases, [target], "question")
    text = table.phrase(target, state)
    first = text.split(" ", 1)[0].lower()
    if first in _PREDICATE_WORDS:
        return table.template.format(subject=table.subject, phrase=text)
    return table.template.replace("{subject} ", "").format(phrase=text)
