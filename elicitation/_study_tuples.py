"""The consistency-checks study: base questions in, the checkers' tuples and their forecasts out.

From a set of binary base questions (a small invented demo set ships with the package,
``data/demo_questions.csv``), :func:`template_tuples` builds the tuples of the ten
checkers of :func:`coherence.consistency_check` (negation, paraphrase, consequence, and,
or, and_or, but, cond, cond_cond, expected_evidence) from fixed templates;
:func:`model_forms` asks a model instead to write the single-question forms (negation,
paraphrase, consequence) and the compound ones (and, or, but, the conditionals) and
validates each one twice (simple rules, and the model's own classification of the
relation) before it replaces the template form, keeping every raw reply. The study then
elicits every distinct question's probability and runs each checker on the tuples.

A simulated model cannot write text: :class:`SimulatedDesigner` stands in for it, replying
with the template forms (and, deliberately, a few wrong forms, so the validation has
something to reject).
"""

from __future__ import annotations

import csv
import difflib
import hashlib
import io
import re
from collections.abc import Mapping
from collections.abc import Sequence
from importlib import resources
from pathlib import Path
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from ._clients import Completion
from ._clients import Request
from ._parsing import strip_reasoning
from ._parsing_patterns import revision
from ._templates import Template

__all__ = ["COMPOUND_FORMS", "DESIGN_TEMPLATES", "MODEL_FORMS", "SINGLE_FORMS",
           "SimulatedDesigner", "ask_probabilities", "base_text", "baseline_forecasts",
           "classify_template", "compound_rule_check", "demo_questions",
           "form_template", "model_forms", "parse_reply", "reply_choice",
           "rule_check", "sources_block", "study_questions", "template_tuples", "tuple_truths"]

#: The single-question forms a model may write, by name.
SINGLE_FORMS = ("negation", "paraphrase", "consequence")
#: The compound forms a model may write, by their question key in the checkers' tuples
#: (P, Q, R are the tuple's base questions, shown to the model as questions A, B, C).
COMPOUND_FORMS = ("P_and_Q", "P_or_Q", "Q_and_not_P", "Q_given_P", "R_given_P_and_Q",
                  "P_and_Q_and_R", "P_given_Q", "P_given_not_Q")
#: Every form a model may write (``design.model_forms``); the template writes the rest.
MODEL_FORMS = SINGLE_FORMS + COMPOUND_FORMS
_RELATION = {"negation": "NEGATION", "paraphrase": "PARAPHRASE", "consequence": "CONSEQUENCE",
             "P_and_Q": "A_AND_B", "P_or_Q": "A_OR_B", "Q_and_not_P": "B_AND_NOT_A",
             "Q_given_P": "B_GIVEN_A", "R_given_P_and_Q": "C_GIVEN_A_AND_B",
             "P_and_Q_and_R": "A_AND_B_AND_C", "P_given_Q": "A_GIVEN_B",
             "P_given_not_Q": "A_GIVEN_NOT_B"}
_NEGATORS = re.compile(r"\b(not|no|never|false|fail|fails|failed|neither|nor)\b|n't\b",
                       flags=re.IGNORECASE)


def demo_questions() -> pd.DataFrame:
    """The package's invented demo set of base questions (``id``, ``fact``, ``date``,
    ``later_date``, ``probability``, ``resolution``: every fact, reference probability and
    resolution is invented)."""
    text = resources.files("elicitation").joinpath("data/demo_questions.csv").read_text()
    return read_questions(io.StringIO(text), "demo_questions.csv")


def blank_cells(column: pd.Series) -> pd.Series:
    """Which cells of a question-set column hold nothing: None, NaN or blank text."""
    return column.map(lambda v: v is None or (isinstance(v, float) and np.isnan(v))
                      or (isinstance(v, str) and not v.strip())).astype(bool)


#: The columns a question set is read by (others are kept, unread).
QUESTION_COLUMNS = ("id", "fact", "date", "later_date", "probability", "resolution")


def _refuse_misspelt(header: Sequence[str], where: str) -> None:
    """Refuse a column named like one the set is read by but not it (``probabilty``,
    ``Resolution``): the optional ones were then not read, every question given the
    default reference probability 0.5 or left unresolved, without a word."""
    near = {c: close[0] for c in header if c not in QUESTION_COLUMNS
            and (close := difflib.get_close_matches(c.strip().lower(), QUESTION_COLUMNS,
                                                     n=1, cutoff=0.8))}
    if near:
        named = ", ".join(f"{c!r} (did you mean {m!r}?)" for c, m in near.items())
        raise ValueError(f"The question set {where} has the column(s) {named}: a question "
                         f"set is read by the columns {', '.join(QUESTION_COLUMNS)} (the last "
                         "two optional), named exactly; rename them, or give another column "
                         "a name of its own")


def read_questions(source: Any, where: str) -> pd.DataFrame:
    """A base-question table from a CSV (lines starting with ``#`` are comments)."""
    lines = [line for line in (source.read() if hasattr(source, "read")
                               else Path(source).read_text()).splitlines()
             if not line.startswith("#")]
    reader = csv.DictReader(lines)
    header = list(reader.fieldnames or [])
    twice = sorted({c for c in header if header.count(c) > 1})
    if twice:   # the row dicts kept the last column of the name, the first one dropped
        raise ValueError(f"The question set {where} has the column(s) {twice} more than once "
                         "in its header; expected each column once")
    _refuse_misspelt(header, where)
    rows = list(reader)
    # a row of more or fewer fields than the header (an unquoted comma in a fact) was read
    # shifted, its extra field dropped, a missing one asked as "None"
    uneven = [i for i, row in enumerate(rows) if None in row or None in row.values()]
    frame = pd.DataFrame(rows)
    need = ("id", "fact", "date", "later_date")
    missing = [c for c in need if c not in frame.columns]
    if missing:
        raise ValueError(f"The question set {where} lacks column(s) {missing} (expected "
                         f"{', '.join(need)}, optional probability and resolution)")
    if uneven:
        raise ValueError(f"The question set {where} has {len(uneven)} row(s) whose number of "
                         f"fields is not the header's (first: rows {uneven[:5]}); quote a "
                         "text holding a comma")
    for col in need:   # a blank fact or date was asked as "on , ..." or "on 31 ..., ?"
        blank = blank_cells(frame[col])
        if blank.any():
            raise ValueError(f"The question set {where} has {int(blank.sum())} row(s) with "
                             f"an empty {col!r} (first: rows {frame.index[blank].tolist()[:5]})")
    if not frame["id"].is_unique or not len(frame):
        raise ValueError(f"The question set {where} needs at least one row and unique ids")
    given = frame["probability"] if "probability" in frame else pd.Series("", index=frame.index)
    empty = blank_cells(given)
    numbers = pd.to_numeric(given.where(~empty, np.nan), errors="coerce")
    # "70%" was NaN (then 0.5) and 1.5 clipped to 1 for the simulated forecaster
    bad = ~empty & ~numbers.between(0.0, 1.0)
    if bad.any():
        rows = frame.loc[bad, "id"].tolist()[:5]
        raise ValueError(f"The question set {where}'s 'probability' must be a number in "
                         f"[0, 1] or empty; {int(bad.sum())} questions are not (first: {rows} "
                         f"with {given[bad].tolist()[:5]})")
    frame["probability"] = numbers.where(~empty, 0.5 if "probability" not in frame
                                         else np.nan).astype(float)
    return frame


def study_questions(design: Mapping[str, Any]) -> pd.DataFrame:
    """The base questions a study's ``design.questions`` names (``'demo'`` or a CSV file),
    the first ``design.n_questions`` of them when set."""
    source = design["questions"]
    if source == "demo":
        qs = demo_questions()
    else:
        path = Path(source)
        try:
            found = path.is_file()
        except OSError:   # '[Errno 36] File name too long' named the path, not the key
            found = False
        if not found:
            raise ValueError(f"The study's design.questions must be 'demo' or a CSV file; "
                             f"{source!r} is not a file")
        qs = read_questions(path, str(path))
    from ._study_check import count_iv

    count_iv("n_questions", design.get("n_questions"), len(qs),
             f"questions of the {source!r} question set")
    return qs.iloc[:design["n_questions"]] if design.get("n_questions") else qs


def base_text(question: Mapping[str, Any]) -> str:
    """A base question as it is asked: "Will it be true that on DATE, FACT?"."""
    return _text("P", [question])


def ask_probabilities(client: Any, asked: Sequence[tuple[str, Mapping[str, Any]]],
                      template: Template, prompt: str, repetitions: int, opts: Any
                      ) -> tuple[pd.DataFrame, pd.DataFrame, int, int]:
    """Ask P(YES) of every ``(question id, template fields)`` ``repetitions`` times through
    the cached engine (``prompt``: the table's ``prompt`` column); ``(rows, raw, n_calls,
    n_cached)`` with one row per call (``question``, ``repetition``, ``p``: NaN when the
    reply did not parse)."""
    from ._engine import execute
    from ._engine import make_job
    from ._engine import settings_json

    settings = settings_json(client)
    jobs = [make_job(client, settings, template, fields, context=qid, prompt=prompt,
                     repetition=rep, quantity="belief")
            for qid, fields in asked for rep in range(repetitions)]
    done = execute(client, jobs, opts)
    rows = pd.DataFrame(
        [{"question": job.request.context, "repetition": job.request.repetition,
          "p": float(parsed.values[job.request.labels[-1]])
          if parsed is not None and parsed.ok else np.nan}
         for job, parsed in zip(jobs, done.parses, strict=True)],
        columns=["question", "repetition", "p"])
    return rows, done.raw.drop(columns=["key"]), done.engine.calls, len(done.before)


# --------------------------------------------------------------------------- template forms
def _clause(q: Mapping[str, Any], later: bool = False) -> str:
    return f"on {q['later_date'] if later else q['date']}, {q['fact']}"


def _text(form: str, qs: Sequence[Mapping[str, Any]]) -> str:
    c = [_clause(q) for q in qs]
    annulled = " If that does not turn out true, this question is annulled."
    texts = {
        "P": lambda: f"Will it be true that {c[0]}?",
        "not_P": lambda: f"Will it be false that {c[0]}?",
        "para_P": lambda: f"Is the following statement going to hold: {c[0]}?",
        "cons_P": lambda: f"Will it be true that {_clause(qs[0], later=True)}?",
        "P_and_Q": lambda: f"Will it be true both that {c[0]} and that {c[1]}?",
        "P_or_Q": lambda: f"Will it be true that {c[0]}, or that {c[1]}, or both?",
        "Q_and_not_P": lambda: f"Will it be true that {c[1]}, and false that {c[0]}?",
        "Q_given_P": lambda: f"Suppose it turns out true that {c[0]}. Given that, will it be "
                             f"true that {c[1]}?" + annulled,
        "R_given_P_and_Q": lambda: f"Suppose it turns out true both that {c[0]} and that "
                                   f"{c[1]}. Given that, will it be true that {c[2]}?"
                                   + annulled,
        "P_and_Q_and_R": lambda: f"Will it be true that {c[0]}, that {c[1]} and that {c[2]}, "
                                 "all three?",
        "P_given_Q": lambda: f"Suppose it turns out true that {c[1]}. Given that, will it be "
                             f"true that {c[0]}?" + annulled,
        "P_given_not_Q": lambda: f"Suppose it turns out false that {c[1]}. Given that, will it "
                                 f"be true that {c[0]}?" + annulled.replace("true", "false"),
    }
    return texts[form]()


# which base questions (P, Q, R) each question key of a checker is about
_ROLES: dict[str, tuple[str, ...]] = {
    "P": ("P",), "Q": ("Q",), "not_P": ("P",), "para_P": ("P",), "cons_P": ("P",),
    "P_and_Q": ("P", "Q"), "P_or_Q": ("P", "Q"), "Q_and_not_P": ("P", "Q"),
    "Q_given_P": ("P", "Q"), "R_given_P_and_Q": ("P", "Q", "R"),
    "P_and_Q_and_R": ("P", "Q", "R"), "P_given_Q": ("P", "Q"), "P_given_not_Q": ("P", "Q"),
}


def _truth(key: str, p: float, q: float, r: float) -> float:
    """A question's reference probability when P, Q, R are independent (the simulated
    forecaster's belief; the consequence adds a tenth of the remaining mass)."""
    return {"P": p, "Q": q, "not_P": 1 - p, "para_P": p, "cons_P": p + 0.1 * (1 - p),
            "P_and_Q": p * q, "P_or_Q": p + q - p * q, "Q_and_not_P": q * (1 - p),
            "Q_given_P": q, "R_given_P_and_Q": r, "P_and_Q_and_R": p * q * r,
            "P_given_Q": p, "P_given_not_Q": p}[key]


def template_tuples(questions: pd.DataFrame, checkers: Sequence[str], *, n_tuples: int,
                    rng: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The checkers' tuples from the base questions, by templates.

    Returns ``(tuples, texts)``: one row per (checker, tuple, key) with the
    question id it asks, and one row per distinct question (``question``
    id, ``text``, ``form``, the base ids and the independent-reference
    ``truth``).
    """
    from coherence import CHECKERS

    records = questions.to_dict("records")
    n = len(records)
    texts: dict[str, dict[str, Any]] = {}
    rows = []
    for checker in checkers:
        keys = CHECKERS[checker]
        k = 3 if any("R" in _ROLES[key] for key in keys) else 2 if any(
            "Q" in _ROLES[key] for key in keys) else 1
        # each checker its own stream: asking for more checkers changes no checker's tuples
        order = np.random.default_rng([rng, list(CHECKERS).index(checker)]).permutation(n)
        for t in range(min(n_tuples, n)):
            picks = [records[int(order[(t + j) % n])] for j in range(k)]
            if len({p["id"] for p in picks}) < k:
                continue
            role = dict(zip("PQR", picks, strict=False))
            for key in keys:
                about = [role[x] for x in _ROLES[key]]
                form = "P" if key == "Q" else key      # Q is asked as a plain question
                qid = f"{form}:" + ":".join(p["id"] for p in about)
                if qid not in texts:
                    probs = [float(p["probability"]) for p in about] + [0.5, 0.5]
                    texts[qid] = {"question": qid, "text": _text(form, about), "form": form,
                                  "base": ",".join(p["id"] for p in about),
                                  "truth": _truth(form, *probs[:3])}
                rows.append({"checker": checker, "tuple": f"{checker}-{t}", "key": key,
                             "question": qid})
    return pd.DataFrame(rows), pd.DataFrame(list(texts.values()))


def tuple_truths(texts: pd.DataFrame) -> pd.DataFrame:
    """The simulated forecaster's truths table: ``context`` (question id), ``truth``."""
    return pd.DataFrame({"context": texts["question"], "truth": texts["truth"].clip(0, 1)})


# --------------------------------------------------------------------------- model design
_DESIGN_SYSTEM = "You write and compare forecasting questions precisely."
_FORM_ASK = {
    "negation": "its negation: one question that resolves YES exactly when this question "
                "resolves NO.",
    "paraphrase": "a paraphrase: one question, worded differently, that resolves YES exactly "
                  "when this question resolves YES.",
    "consequence": "a consequence: one question that must resolve YES whenever this question "
                   "resolves YES (and may also resolve YES otherwise), for instance the same "
                   "event by a later date.",
}
_COMPOUND_ASK = {
    "P_and_Q": "one question that resolves YES exactly when both question A and question B "
               "resolve YES.",
    "P_or_Q": "one question that resolves YES exactly when question A or question B (or both) "
              "resolves YES.",
    "Q_and_not_P": "one question that resolves YES exactly when question B resolves YES and "
                   "question A resolves NO.",
    "Q_given_P": "one conditional question: supposing question A resolves YES, does question "
                 "B resolve YES? It is annulled if question A resolves NO.",
    "R_given_P_and_Q": "one conditional question: supposing questions A and B both resolve "
                       "YES, does question C resolve YES? It is annulled otherwise.",
    "P_and_Q_and_R": "one question that resolves YES exactly when questions A, B and C all "
                     "resolve YES.",
    "P_given_Q": "one conditional question: supposing question B resolves YES, does question "
                 "A resolve YES? It is annulled if question B resolves NO.",
    "P_given_not_Q": "one conditional question: supposing question B resolves NO, does "
                     "question A resolve YES? It is annulled if question B resolves YES.",
}
_COMPOUND_LABELS = (
    "A_AND_B (YES exactly when A and B both resolve YES), A_OR_B (YES when A or B or both "
    "do), B_AND_NOT_A (YES exactly when B resolves YES and A resolves NO), B_GIVEN_A (asks "
    "about B supposing A resolves YES), A_GIVEN_B (asks about A supposing B resolves YES), "
    "A_GIVEN_NOT_B (asks about A supposing B resolves NO), C_GIVEN_A_AND_B (asks about C "
    "supposing A and B both resolve YES), A_AND_B_AND_C (YES exactly when A, B and C all "
    "resolve YES) or OTHER")
_LABELS = ("Question", "Relation")

_WRITE_ONE = "\n\nReply with exactly one line:\nQuestion: <the new question>"


def _design(name: str, user: str, description: str) -> Template:
    """A design prompt of the toolkit's wording (a probability-kind template whose reply
    lines are ``Question`` and ``Relation``)."""
    return Template(name, "probability", system=_DESIGN_SYSTEM, labels=_LABELS, user=user,
                    description=f"study design: {description} (toolkit wording)")


#: The toolkit's design prompts (no study has published its own): one per form, and the
#: relation check.
DESIGN_TEMPLATES = {
    **{f"design_{form}": _design(
        f"design_{form}",
        "Here is a forecasting question:\n\n{question}\n\nWrite " + ask + _WRITE_ONE,
        f"write the {form} of a question")
       for form, ask in _FORM_ASK.items()},
    "design_classify": _design(
        "design_classify",
        "Question A: {question}\nQuestion B: {other}\n\nHow is question B related to "
        "question A? Answer NEGATION (B resolves YES exactly when A resolves NO), PARAPHRASE "
        "(B resolves YES exactly when A does), CONSEQUENCE (B must resolve YES whenever A "
        "does, but not conversely) or OTHER.\n\nReply with exactly one line:\n"
        "Relation: <NEGATION, PARAPHRASE, CONSEQUENCE or OTHER>",
        "classify the relation of two questions"),
    **{f"design_{key}": _design(
        f"design_{key}",
        "Here are forecasting questions:\n\n{questions}\n\nWrite " + ask + _WRITE_ONE,
        f"write the {key} question of a tuple")
       for key, ask in _COMPOUND_ASK.items()},
    "design_classify_compound": _design(
        "design_classify_compound",
        "{questions}\nNew question: {other}\n\nHow is the new question related to "
        "the questions above? Answer " + _COMPOUND_LABELS + ".\n\nReply with exactly one "
        "line:\nRelation: <one of the labels above>",
        "classify a compound question against its parts"),
}


def form_template(form: str) -> Template:
    """The design prompt that asks for one form of a question."""
    return DESIGN_TEMPLATES[f"design_{form}"]


def classify_template(form: str = "negation") -> Template:
    """The design prompt that asks how a written ``form`` relates to its source
    question(s)."""
    return DESIGN_TEMPLATES["design_classify" if form in SINGLE_FORMS
                            else "design_classify_compound"]


def sources_block(texts: Sequence[str]) -> str:
    """The source questions of a compound form as shown to the model: "Question A: ..."."""
    return "\n".join(f"Question {'ABC'[i]}: {t}" for i, t in enumerate(texts))


#: a value that is the prompt's placeholder echoed (``Relation: <NEGATION, PARAPHRASE,
#: CONSEQUENCE or OTHER>``, ``Question: <the new question>``): the reply format, no answer
_PLACEHOLDER = re.compile(r"<[^<>]*>")


def _reply_values(text: Any, label: str) -> list[str]:
    """The values of every ``Label: value`` line of a reply, in order (an echoed
    placeholder left out); none when the reply is not text or leaves a reasoning block
    open."""
    if not isinstance(text, str):
        return []
    body, unclosed = strip_reasoning(text)
    if unclosed is not None:
        return []
    found = list(re.finditer(rf"^\W*{re.escape(label)}\W*:\s*(.+?)\s*$", body,
                             flags=re.MULTILINE | re.I))
    if found and revision(body, found[-1].end()) is not None:
        return []   # "Relation: NEGATION" then "Wait, I meant PARAPHRASE." was NEGATION
    values = [m.group(1).strip(" \t*\"'`{},") for m in found]  # markdown, quotes, JSON
    return [v for v in values if v and _PLACEHOLDER.fullmatch(v) is None]


def parse_reply(text: Any, label: str) -> str | None:
    """The value of the ``Label: value`` lines of a reply (None when there is none, or
    when two of them differ).

    Closed reasoning blocks are removed first, as the probability parser does; a reply
    that leaves one open has none (a line inside may be a draft: ``<think>`` then
    ``Relation: NEGATION. Hmm`` was read as NEGATION). A reply with two lines of the
    label that say different things (in other than case, spacing and punctuation:
    ``Relation: NEGATION`` then ``Relation: PARAPHRASE``) contradicts itself and has
    none: the last line was read. So has one with a line after the last of them that
    takes it back ("Wait, I meant PARAPHRASE.", "On reflection, ..."; the rule of
    :func:`elicitation.parse_probabilities`): that line was read. A line repeated is
    read, and a line that echoes the prompt's placeholder (``Relation: <NEGATION, ...
    or OTHER>``) is left out.
    """
    values = _reply_values(text, label)
    if len({" ".join(re.findall(r"\w+", v.lower())) for v in values}) != 1:
        return None
    return values[-1]


def _choice_of(value: str, by_word: Mapping[str, str]) -> str:
    """The choice a ``Label: value`` line's value starts with ('' when none, or another
    is named too)."""
    if re.match(r"none\s+of(?![\w])", value, re.IGNORECASE):
        return ""     # "None of these; OTHER", "None of the above": no choice fits
    named = {w.lower() for w in re.findall(r"[^\W\d]\w*", value) if w.lower() in by_word}
    first = value.split(" ")[0].strip(".").lower()
    return by_word[first] if first in by_word and named == {first} else ""


def reply_choice(text: Any, label: str, choices: Sequence[str]) -> str:
    """The choice (one of ``choices``, in its own case) that the ``Label: value`` lines of
    a reply start with; '' when one starts with none, or also names another choice:
    "NEGATION or PARAPHRASE", "STRONG - no wait, WEAK" (their first word was read) are
    left unread, never guessed. So are two lines that name different choices
    (``Relation: NEGATION`` then ``Relation: PARAPHRASE``: the last was read), lines
    taken back by a later line (:func:`parse_reply`), and a line that says that none of
    the choices fits ("None of these; OTHER", "None of the above"), though "none" be a
    choice (the pairs study's ``NONE``: it was read as that)."""
    by_word = {c.lower(): c for c in choices}
    picked = {_choice_of(value, by_word) for value in _reply_values(text, label)}
    return picked.pop() if len(picked) == 1 else ""


def rule_check(form: str, source: str, written: str | None) -> str:
    """Why a written form fails the simple rules ('' when it passes).

    A question (ends with '?') that differs from its source; a negation adds or
    removes a negating word (odd change in their count), a paraphrase or a
    consequence does not.
    """
    if not written:
        return "no 'Question:' line"
    if not written.endswith("?"):
        return "not a question"

    def norm(s: str) -> str:
        return " ".join(re.findall(r"\w+", s.lower()))

    if norm(written) == norm(source):
        return "the source question, unchanged"
    flips = (len(_NEGATORS.findall(written)) - len(_NEGATORS.findall(source))) % 2
    if form == "negation" and not flips:
        return "no negating word added or removed: not a negation"
    if form != "negation" and flips:
        return f"a negating word added or removed: not a {form}"
    return ""


_STOP = frozenset(("will", "it", "be", "true", "that", "the", "has", "have", "been", "with",
                   "from", "this", "there", "their", "they", "what", "when", "which", "turn",
                   "turns", "out", "on", "of", "in", "a", "an", "by", "is", "are"))
_CONDITIONAL = re.compile(r"\b(given|if|suppose|supposing|assuming|provided|conditional)\b",
                          flags=re.IGNORECASE)


def _words(text: str) -> list[str]:
    return re.findall(r"[a-z0-9]+", text.lower())


def compound_rule_check(form: str, sources: Sequence[str], written: str | None) -> str:
    """Why a written compound question fails the simple rules ('' when it passes).

    A question (it asks something: a '?'; a conditional may end with the sentence that
    annuls it) that is none of its sources; it keeps the content words
    of every source (at least 60% of each: it is about all of them); a conjunction
    (``P_and_Q``, ``P_and_Q_and_R``) says "and", "both" or "all" and no "or" that its
    sources lack; a disjunction says "or" or "either"; ``Q_and_not_P`` adds a negating
    word; a conditional (``*_given_*``) says "given", "if", "suppose" or the like, and
    the other forms add no such word; a conjunction or disjunction adds or removes no
    negating word (an even change).
    """
    if not written:
        return "no 'Question:' line"
    if "?" not in written:
        return "not a question"
    norm = " ".join(_words(written))
    if any(norm == " ".join(_words(src)) for src in sources):
        return "a source question, unchanged"
    have = set(_words(written))
    for letter, src in zip("ABC", sources, strict=False):
        content = {w for w in _words(src) if w not in _STOP and len(w) > 2}
        if content and len(content & have) < 0.6 * len(content):
            return f"question {letter}'s event is missing"
    negations = (len(_NEGATORS.findall(written))
                 - sum(len(_NEGATORS.findall(src)) for src in sources))
    said = have - {w for src in sources for w in _words(src)}
    if form in ("P_and_Q", "P_and_Q_and_R"):
        if "or" in said:
            return "an 'or' in a conjunction"
        if not have & {"and", "both", "all"}:
            return "no 'and', 'both' or 'all': not a conjunction"
    if form == "P_or_Q" and not have & {"or", "either"}:
        return "no 'or' or 'either': not a disjunction"
    if form in ("P_and_Q", "P_and_Q_and_R", "P_or_Q") and negations % 2:
        return f"a negating word added or removed: not {form}"
    if form == "Q_and_not_P" and negations < 1:
        return "no negating word added: not B and not A"
    if "_given_" in form and not _CONDITIONAL.search(written):
        return "no 'given', 'if' or 'suppose': not a conditional question"
    if "_given_" not in form and _CONDITIONAL.search(" ".join(sorted(said))):
        return f"a conditional word in an unconditional question: not {form}"
    return ""


class SimulatedDesigner:
    """A stand-in design model for simulated studies: it writes the template forms.

    It answers :data:`DESIGN_TEMPLATES` requests (``context``: the base question id, or
    for a compound form the question id ``'P_and_Q:q01:q02'``; ``quantity``: the form or
    ``classify_<form>``), and the pairs study's labelling (``quantity`` ``'pair_label'``:
    the exact category of ``context``'s pair). Its deliberate mistakes, so that the
    validation has something to reject: one base question in five (the ids ending in 0
    or 5) gets a paraphrase where a negation was asked for (both checks reject it), and
    a tuple whose first base question is such a one gets a disjunction where a
    conjunction was asked for (both checks reject it) and P given Q where Q given P was
    asked for (only the classification rejects it).
    """

    def __init__(self, questions: pd.DataFrame | None = None,
                 categories: Mapping[Any, str] | None = None, *, name: str = "designer"
                 ) -> None:
        self._questions = ({} if questions is None
                           else {r["id"]: r for r in questions.to_dict("records")})
        self._categories = dict(categories or {})
        self._name = name

    @property
    def model(self) -> str:
        digest = hashlib.sha256(repr(sorted(self._questions)).encode()
                                + repr(sorted(self._categories.items())).encode())
        return f"simulated-designer:{self._name}:{digest.hexdigest()[:10]}"

    @property
    def settings(self) -> Mapping[str, Any]:
        return MappingProxyType({"seed": 0})

    @staticmethod
    def _slips(qid: Any) -> bool:
        return int(re.sub(r"\D", "", str(qid)) or 0) % 5 == 0

    def _written(self, qid: Any, form: str) -> str:
        if form in COMPOUND_FORMS:
            bases = str(qid).split(":")[1:]
            if self._slips(bases[0]):       # the designer's deliberate mistakes
                form = {"P_and_Q": "P_or_Q", "Q_given_P": "P_given_Q"}.get(form, form)
            return _text(form, [self._questions[b] for b in bases])
        q = self._questions[qid]
        if form == "negation" and self._slips(qid):
            form = "paraphrase"            # the designer's deliberate mistake
        return _text({"negation": "not_P", "paraphrase": "para_P",
                      "consequence": "cons_P"}[form], [q])

    def complete(self, request: Request) -> Completion:
        """Reply as the templates would."""
        quantity = request.quantity
        if quantity == "pair_label":
            return Completion(text=f"Relation: {self._categories[request.context].upper()}")
        if quantity.startswith("classify_") and quantity.removeprefix(
                "classify_") in COMPOUND_FORMS:
            form = quantity.removeprefix("classify_")
            written = self._written(request.context, form)
            bases = [self._questions[b] for b in str(request.context).split(":")[1:]]
            own = {_text(k, bases): k for k in COMPOUND_FORMS
                   if len(_ROLES[k]) == len(bases)}
            return Completion(text=f"Relation: {_RELATION.get(own.get(written, ''), 'OTHER')}")
        if quantity.startswith("classify_"):
            form = quantity.removeprefix("classify_")
            written = self._written(request.context, form)
            own = {_text(k, [self._questions[request.context]]): f for k, f in (
                ("not_P", "negation"), ("para_P", "paraphrase"), ("cons_P", "consequence"))}
            return Completion(text=f"Relation: {_RELATION.get(own.get(written, ''), 'OTHER')}")
        return Completion(text=f"Question: {self._written(request.context, quantity)}")


def _form_asks(questions: pd.DataFrame, texts: pd.DataFrame, forms: Sequence[str],
               key_of: Mapping[str, str]) -> list[tuple[Any, Any, str, Any, list[str]]]:
    """What the model is asked to write: ``(question id, base ids, form, context,
    sources)`` for each single form of each base question the tuples use and each
    compound question of the tuples."""
    present = set(texts["question"])
    source_text = {r["id"]: _text("P", [r]) for r in questions.to_dict("records")}
    asks: list[tuple[Any, Any, str, Any, list[str]]] = []
    for r in questions.to_dict("records"):
        for form in forms:
            if form in key_of and f"{key_of[form]}:{r['id']}" in present:
                asks.append((f"{key_of[form]}:{r['id']}", r["id"], form, r["id"],
                             [source_text[r["id"]]]))
    compound = [f for f in forms if f in COMPOUND_FORMS]
    for row in texts[texts["form"].isin(compound)].itertuples(index=False):
        bases = str(row.base).split(",")
        asks.append((row.question, row.base, row.form, row.question,
                     [source_text[b] for b in bases]))
    return asks


def model_forms(questions: pd.DataFrame, texts: pd.DataFrame, client: Any, opts: Any,
                forms: Sequence[str]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Ask the model to write the questions of ``forms``; validate each one.

    ``forms`` names single-question forms (negation, paraphrase, consequence: one per
    base question) and compound forms (the question keys of :data:`COMPOUND_FORMS`: one
    per distinct compound question of the tuples, shown its base questions as questions
    A, B, C). Returns ``(texts, design)``: the question texts with every validated model
    form in place of the template form (``source`` says which wrote each question), and
    one row per written question (``question`` id, ``base`` ids, ``form``) with the raw
    replies, the written question, the rule check, the model's classification and
    whether the form was kept. A form that fails either check keeps its template text
    (``source = 'template'``), so every tuple can still be asked.
    """
    from ._engine import execute
    from ._engine import make_job
    from ._engine import settings_json

    settings = settings_json(client)
    key_of = {"negation": "not_P", "paraphrase": "para_P", "consequence": "cons_P"}
    asks = _form_asks(questions, texts, forms, key_of)

    def fields(form: str, sources: list[str], other: str | None = None) -> dict[str, str]:
        block = ({"question": sources[0]} if form in key_of
                 else {"questions": sources_block(sources)})
        return block if other is None else {**block, "other": other}

    jobs = [make_job(client, settings, form_template(form), fields(form, sources),
                     context=context, prompt=f"design_{form}", repetition=0, quantity=form)
            for _, _, form, context, sources in asks]
    done = execute(client, jobs, opts)
    written = [parse_reply(t, "Question") for t in done.raw["text"]]
    rules = [("truncated" if f == "length" else
              rule_check(form, sources[0], w) if form in key_of else
              compound_rule_check(form, sources, w))
             for (_, _, form, _, sources), w, f in zip(asks, written,
                                                       done.raw["finish_reason"], strict=True)]
    check_jobs = [make_job(client, settings, classify_template(form),
                           fields(form, sources, w or ""), context=context,
                           prompt="design_classify" if form in key_of
                           else "design_classify_compound", repetition=0,
                           quantity=f"classify_{form}")
                  for (_, _, form, context, sources), w in zip(asks, written, strict=True)]
    checked = execute(client, check_jobs, opts)
    choices = [*_RELATION.values(), "OTHER"]
    relation = [reply_choice(t, "Relation", choices) for t in checked.raw["text"]]
    design = pd.DataFrame({
        "question": [a[0] for a in asks], "base": [a[1] for a in asks],
        "form": [a[2] for a in asks],
        "source_question": [sources[0] if form in key_of else sources_block(sources)
                            for _, _, form, _, sources in asks],
        "reply": done.raw["text"].to_numpy(), "written": written, "rule_problem": rules,
        "classify_reply": checked.raw["text"].to_numpy(), "classified": relation,
    }, columns=["question", "base", "form", "source_question", "reply", "written",
                "rule_problem", "classify_reply", "classified"])
    design["kept"] = (design["rule_problem"] == "") & (
        design["classified"] == design["form"].map(_RELATION))
    design.attrs["n_calls"] = done.engine.calls + checked.engine.calls
    design.attrs["n_cached"] = len(done.before) + len(checked.before)
    out = texts.copy()
    out["source"] = "template"
    for row in design[design["kept"]].itertuples(index=False):
        hit = out["question"] == row.question
        out.loc[hit, "text"] = row.written
        out.loc[hit, "source"] = "model"
    return out, design


# --------------------------------------------------------------------------- the baseline
def baseline_forecasts(forecasts: Mapping[str, float]) -> dict[str, float]:
    """The consistent-forecaster baseline: each base question's probability is the average
    of its equivalent forms' (P, 1 - not_P, para_P); not_P and para_P follow from it, the
    other questions keep the model's forecast."""
    out = dict(forecasts)
    by_base: dict[str, list[float]] = {}
    for qid, p in forecasts.items():
        form, _, base = qid.partition(":")
        if form in ("P", "not_P", "para_P") and ":" not in base and np.isfinite(p):
            by_base.setdefault(base, []).append(1.0 - p if form == "not_P" else p)
    for base, values in by_base.items():
        mean = float(np.mean(values))
        for form, value in (("P", mean), ("not_P", 1.0 - mean), ("para_P", mean)):
            if f"{form}:{base}" in out:
                out[f"{form}:{base}"] = value
    return out
