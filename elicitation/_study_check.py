"""The types of a study file's values, checked when the file is read.

:func:`load_study` checks what each key may hold before any model is asked: a value of
the wrong type used to surface as a Python error that named no key (``'int' object is
not iterable`` for ``prompts = 5``), be taken for another value without a word
(``reverse = "no"`` ran both directions, ``stop = "<|im_end|>"`` sent ten one-character
stop sequences), or stop the study only after every model had been asked (a
``reference_prompt`` the study does not ask, a consistency study's ``[tests]``).
"""

from __future__ import annotations

import io
import math
import re
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

from ._templates import NO_CONTROL
from ._templates import has_control

__all__ = ["clear_results", "config_types_iv", "control_hint", "count_iv", "designer_keys_iv",
           "model_types_iv", "pairs_count_iv", "prompt_labels_iv", "prompt_variants",
           "stale_outputs_iv", "stop_sequences", "study_outputs", "twin_models_iv"]


def _whole(value: Any) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


def _text(value: Any) -> bool:
    """A name, phrase or path of the study file: not blank, and holding no control
    character (a line break, tab or NUL went into every prompt, or split the paths the
    summary shows)."""
    return isinstance(value, str) and bool(value.strip()) and not has_control(value)


def control_hint(value: Any) -> str:
    """What an error adds when the value refused holds a control character ('' else)."""
    return f" (it must hold {NO_CONTROL})" if isinstance(value, str) and has_control(
        value) else ""


def stop_sequences(stop: Any, where: str) -> list[str] | None:
    """``model.stop`` as the list of stop sequences sent: one string is one sequence (it
    was split into its characters), a list of non-empty strings is itself.

    See Also
    --------
    model_types_iv : the checks of a model's other keys.
    """
    if stop is None:
        return None
    if isinstance(stop, str) and stop:
        return [stop]
    if isinstance(stop, list) and stop and all(isinstance(s, str) and s for s in stop):
        return list(stop)
    raise ValueError(f"{where}: stop must be a stop sequence or a non-empty list of them "
                     f"(non-empty strings); got {stop!r}")


def _reads_back(name: str, column: str = "model") -> bool:
    """Whether ``name`` is read back as itself from the table's ``column`` (a blank name
    is no row at all: it raised an IndexError)."""
    buffer = io.StringIO()
    pd.DataFrame({column: [name]}).to_csv(buffer, index=False)
    back = pd.read_csv(io.StringIO(buffer.getvalue()))[column]
    return len(back) == 1 and isinstance(back.iloc[0], str) and back.iloc[0] == name


def model_types_iv(m: Mapping[str, Any], i: int) -> None:
    """A model's name (it becomes the table's ``model`` column), ``stop``,
    ``api_key_env``, ``design_max_tokens`` and ``top_logprobs`` (only with ``logprobs``).

    See Also
    --------
    config_types_iv : the checks of the design and the tests.
    """
    name = m.get("name")
    where = f"The study's model {i} ({name!r})"
    if isinstance(name, str) and has_control(name):
        # 'a\x00b' and 'a\nb' went into the cache keys, the tables and the report as such
        raise ValueError(f"{where}: name must hold {NO_CONTROL} (it labels the tables and "
                         f"the report, and keys the cache); got {name!r}")
    if not isinstance(name, str) or not name.strip() or not _reads_back(name):
        # the report reads table.csv back: '007' came back as the model 7, 'NA' and ''
        # as a missing model, and two such names ('1', '01') as one pooled model; '   '
        # failed with an IndexError naming nothing
        raise ValueError(f"{where}: name must be text that table.csv reads back as itself "
                         "(not empty or blank, not a number, not a missing-value word such "
                         f"as 'NA' or 'null', not true/false); got {name!r}")
    _repeats_iv("stop", stop_sequences(m.get("stop"), where), f"{where}:")
    env = m.get("api_key_env")
    if env is not None and not _text(env):
        raise ValueError(f"{where}: api_key_env must be the name of an environment variable"
                         f"{control_hint(env)}; got {env!r}")
    tokens = m.get("design_max_tokens")
    if tokens is not None and (not _whole(tokens) or tokens < 1):
        raise ValueError(f"{where}: design_max_tokens must be a positive int; got {tokens!r}")
    if "top_logprobs" in m and m.get("logprobs") is not True:
        raise ValueError(f"{where}: top_logprobs is used only with logprobs = true (without "
                         "it no log-probability is asked for); set logprobs = true or drop "
                         "top_logprobs")


def twin_models_iv(models: Sequence[Mapping[str, Any]]) -> None:
    """Two simulated models of the same agent and options: under two names they drew the
    same replies (the second all from the cache), one model counted as two.

    See Also
    --------
    model_types_iv : the checks of each model's keys.
    """
    seen: dict[str, int] = {}
    for i, m in enumerate(models):
        agent = m.get("simulated")
        if agent is None:
            continue
        spec = repr(sorted(agent.items()) if isinstance(agent, Mapping) else agent)
        if spec in seen:
            j = seen[spec]
            raise ValueError(f"The study's models {j} ({models[j]['name']!r}) and {i} "
                             f"({m['name']!r}) are the same simulated agent ({agent!r}): "
                             "with one seed they give the same replies, one model counted "
                             "twice; drop one or give it other options")
        seen[spec] = i


def _list_of_text(value: Any) -> bool:
    return isinstance(value, list) and all(isinstance(v, str) for v in value)


def config_types_iv(kind: str, design: Mapping[str, Any], tests: Mapping[str, Any]) -> None:
    """The types of a study's ``[design]`` and ``[tests]`` values (their names and
    choices are checked after, by the kind's own rules).

    See Also
    --------
    model_types_iv : the checks of a model's keys.
    """
    tol = design.get("sum_tolerance")
    if isinstance(tol, bool) or not isinstance(tol, int | float) or not 0 <= tol < 1:
        raise ValueError(f"The study's design.sum_tolerance must be a number in [0, 1); got "
                         f"{tol!r}")
    checkers = design.get("checkers", "all")
    if checkers != "all" and not _list_of_text(checkers):
        raise ValueError(f"The study's design.checkers must be 'all' or a list of checker "
                         f"names; got {checkers!r}")
    for key in ("prompts", "variants", "model_forms"):
        if key in design and not (_list_of_text(design[key])
                                  and (design[key] or key == "model_forms")):
            raise ValueError(f"The study's design.{key} must be a name or a non-empty list "
                             f"of names; got {design[key]!r}")
        _repeats_iv(f"design.{key}", design.get(key))
    if checkers != "all":
        _repeats_iv("design.checkers", checkers)
    if kind == "decision" and _list_of_text(tests.get("tests")):
        # a test named twice ran once: refused as a repeat elsewhere in the file is
        _repeats_iv("tests.tests", tests["tests"])
    if kind == "decision":
        _decision_design_iv(design, tests)
    if kind == "pairs":
        _pairs_design_iv(design)
    if kind in ("consistency", "forecasting") and not _text(design["questions"]):
        raise ValueError("The study's design.questions must be 'demo' or a CSV file's path"
                         f"{control_hint(design['questions'])}; got {design['questions']!r}")
    if kind == "consistency":
        _consistency_tests_iv(design, tests)


def _decision_design_iv(design: Mapping[str, Any], tests: Mapping[str, Any]) -> None:
    """A decision study's question phrase and reference prompt."""
    if design["question"] is not None and not _text(design["question"]):
        raise ValueError("The study's design.question must be the phrase after 'they' "
                         f"(e.g. 'have the disease'){control_hint(design['question'])}; "
                         f"got {design['question']!r}")
    reference, variants = tests["reference_prompt"], prompt_variants(design["prompts"])
    if reference is not None and reference not in variants:
        raise ValueError("The study's tests.reference_prompt must be the variant of one "
                         f"of design.prompts ({', '.join(variants)}); got {reference!r}")


def _pairs_design_iv(design: Mapping[str, Any]) -> None:
    """A pairs study's ``reverse`` flag and subject phrase."""
    if not isinstance(design["reverse"], bool):
        raise ValueError("The study's design.reverse must be true or false; got "
                         f"{design['reverse']!r}")
    if not _text(design["subject"]):
        raise ValueError("The study's design.subject must be a phrase (who the questions "
                         f"are about){control_hint(design['subject'])}; got "
                         f"{design['subject']!r}")


def _repeats_iv(key: str, names: Any, where: str = "The study's") -> None:
    """A list of the study file that names one entry twice (the prompts by their variant):
    a repeated checker was asked of every model and then failed naming nothing (pandas'
    "Index contains duplicate entries"), a repeated prompt or variant stopped the study
    naming the runner's parameter, not the key; a repeated test (run once) or stop
    sequence (sent twice) was taken without a word."""
    if not isinstance(names, list):
        return
    labels = prompt_variants(names) if key == "design.prompts" else names
    twice = [n for n in dict.fromkeys(labels) if labels.count(n) > 1]
    if twice:
        raise ValueError(f"{where} {key} must name each entry once"
                         + (" (a *_toolkit prompt is its variant's)"
                            if key == "design.prompts" else "")
                         + f"; {', '.join(map(repr, twice))} repeated in {names!r}")


def prompt_labels_iv(prompts: list[str]) -> None:
    """The variants of the study's (registered) prompts are the table's ``prompt`` column:
    each must read back from ``table.csv`` as itself, as a model's name must. A template
    of variant ``'NA'`` was asked of every model, then the report refused the missing
    prompts; one of variant ``'007'`` alone came back as the prompt 7.

    See Also
    --------
    prompt_variants : the labels themselves.
    """
    for prompt, variant in zip(prompts, prompt_variants(prompts), strict=True):
        if not _reads_back(variant, "prompt"):
            raise ValueError(f"The study's design.prompts names {prompt!r}, whose variant "
                             f"{variant!r} (the table's prompt column) table.csv would not "
                             "read back as itself (a number, a missing-value word such as "
                             "'NA' or 'null', true/false); register the template with "
                             "another variant")


def prompt_variants(prompts: list[str]) -> list[str]:
    """The ``prompt`` labels of the table the prompts give (the templates' variants:
    ``standard`` for ``standard_toolkit``); an unknown template is its own name here (the
    names' check refuses it).

    See Also
    --------
    config_types_iv : where ``tests.reference_prompt`` is checked against them.
    """
    from ._templates import get_template
    from ._templates import template_names

    known = set(template_names())
    return [get_template(p).variant if p in known else p for p in prompts]


def _consistency_tests_iv(design: Mapping[str, Any], tests: Mapping[str, Any]) -> None:
    """A consistency study's ``[tests]`` (they used to be checked after every model had been
    asked) and ``model_forms`` (an empty list used to fail with ``KeyError: 'quantity'``)."""
    n = tests["n_resamples"]
    if not _whole(n) or n < 1:
        raise ValueError(f"The study's tests.n_resamples must be a positive int; got {n!r}")
    if tests["definition"] not in ("paper", "code"):
        raise ValueError("The study's tests.definition must be one of 'paper', 'code'; got "
                         f"{tests['definition']!r}")
    tol = tests["tolerance"]
    if isinstance(tol, bool) or not isinstance(tol, int | float) or not (
            math.isfinite(tol) and tol >= 0):
        raise ValueError("The study's tests.tolerance must be a non-negative number; got "
                         f"{tol!r}")
    if design["designer"] == "model" and not design["model_forms"]:
        raise ValueError("The study's design.model_forms must name at least one form with "
                         "designer = 'model' (or 'all'); got []")


def designer_keys_iv(kind: str, design: Mapping[str, Any],
                     models: Sequence[Mapping[str, Any]], default_forms: list[str]) -> None:
    """The keys that configure a model designer where no model designs: ``model_forms``
    other than its default with ``designer = 'templates'``, and a model's
    ``design_max_tokens`` where it makes no design call (a decision study, a designer that
    is not the model, a pairs study's models after the first). They were ignored without a
    word, the study run on the templates' questions.

    See Also
    --------
    config_types_iv : the checks of the design's other values.
    """
    by_model = kind in ("pairs", "consistency") and design.get("designer") == "model"
    if kind == "consistency" and not by_model and list(design["model_forms"]) != default_forms:
        raise ValueError("The study's design.model_forms (the forms a model writes) is for "
                         f"designer = 'model'; got model_forms {design['model_forms']!r} with "
                         f"designer {design['designer']!r}: set designer = 'model' or drop "
                         "model_forms")
    for i, m in enumerate(models):
        if m.get("design_max_tokens") is None or (by_model and (kind == "consistency"
                                                                or i == 0)):
            continue
        who = ("only the first model designs (labels the pairs)" if by_model
               else "no model designs: designer = 'model' is not set" if kind != "decision"
               else "a decision study makes no design call")
        raise ValueError(f"The study's model {i} ({m['name']!r}): design_max_tokens is the "
                         f"reply length of a model's design calls, and {who}; drop it")


def pairs_count_iv(pairs: pd.DataFrame, wanted: int, network: str, key: str) -> None:
    """The network has the pairs asked for: each category's share of ``wanted`` (it used to
    run on the pairs there were, fewer and unbalanced, while the summary said ``wanted``).

    See Also
    --------
    count_iv : the same rule for question sets and tuples.
    """
    per = [wanted // 3 + (k < wanted % 3) for k in range(3)]
    counts = pairs["category"].value_counts() if len(pairs) else pd.Series(dtype=int)
    names = ("strong", "weak", "none")
    short = [f"{int(counts.get(n, 0))} {n!r} of {k}" for n, k in zip(names, per, strict=True)
             if counts.get(n, 0) < k]
    if short:
        most = 3 * min(int(counts.get(n, 0)) for n in names)
        raise ValueError(f"The study's design.{key} ({wanted}) asks for more pairs than the "
                         f"{network} network has: {', '.join(short)} (the pairs are balanced "
                         f"over strong, weak and none); use at most {most}, or another "
                         "network")


def count_iv(key: str, wanted: int | None, available: int, what: str) -> None:
    """``design.<key>`` asks for no more than there are (``what``, ``available`` of them):
    more used to run on what there was without a word.

    See Also
    --------
    pairs_count_iv : the same rule for question pairs.
    """
    if wanted is not None and wanted > available:
        raise ValueError(f"The study's design.{key} ({wanted}) is more than the {available} "
                         f"{what}; use at most {available}")


#: the files (and, over several seeds, the ``seed-<s>`` folders) a study writes to its
#: ``out`` folder, of every kind: one of them in ``out`` that this study does not write is
#: another study's, and would be read beside this one's
_OUTPUTS = ("table.csv", "raw.csv", "report.html", "pairs.csv", "design.csv", "results.csv",
            "questions.csv", "tuples.csv", "forecasts.csv", "seeds.csv", "spread.csv")
_SEED_FOLDER = re.compile(r"seed-\d+")


def study_outputs(cfg: Mapping[str, Any]) -> set[str]:
    """The names in ``out`` that the study ``cfg`` writes (its cache aside)."""
    kind = cfg["kind"]
    if kind == "decision" and "seeds" in cfg:
        return {"seeds.csv", "spread.csv", *(f"seed-{s}" for s in cfg["seeds"])}
    names = {"decision": {"table.csv", "raw.csv", "report.html"},
             "pairs": {"pairs.csv", "table.csv", "raw.csv", "results.csv"},
             "consistency": {"questions.csv", "tuples.csv", "table.csv", "raw.csv",
                             "results.csv"},
             "forecasting": {"questions.csv", "table.csv", "raw.csv", "forecasts.csv",
                             "results.csv"}}[kind]
    if kind in ("pairs", "consistency") and cfg["design"]["designer"] == "model":
        names.add("design.csv")
    return names


def stale_outputs_iv(cfg: Mapping[str, Any]) -> None:
    """A ``ValueError`` naming the outputs of another study in the study's ``out`` folder
    (a report, a results table or a seed's folder this study does not write), before any
    call: they were left beside the new files without a word, and a reader took an old
    report for the new one. Nothing is deleted; ``cache.sqlite`` is never in the way (a
    rerun reads its replies)."""
    out = Path(cfg["out"])
    try:
        if not out.is_dir():
            return
    except OSError as exc:
        # '[Errno 36] File name too long' named the path, not the key
        raise ValueError(f"The study's 'out' must be a folder's path; got {str(out)!r} "
                         f"({exc.strerror})") from None
    ours = study_outputs(cfg)
    stale = sorted(p.name + ("/" if p.is_dir() else "") for p in out.iterdir()
                   if p.name not in ours and (p.name in _OUTPUTS or (
                       p.is_dir() and _SEED_FOLDER.fullmatch(p.name) is not None)))
    if stale:
        shown = f"{cfg['kind']!r}" + (f" over seeds {cfg['seeds']}" if "seeds" in cfg else "")
        raise ValueError(
            f"The study's out folder {out} holds {', '.join(stale)}, which this study (kind "
            f"{shown}) does not write: another study's outputs, which would be taken for "
            "this one's. Remove them or set another 'out' (cache.sqlite may stay: a rerun "
            "takes every reply it holds from it)")


#: the outputs made from a study's table (its analysis), by their key in the study's paths
_RESULTS = ("report", "results", "forecasts", "seeds", "spread")


def clear_results(paths: Mapping[str, str]) -> None:
    """Remove the analysis outputs of an earlier run of the same study (``report.html``,
    ``results.csv``, ...) before its table is written anew: an analysis that then fails
    or is interrupted leaves no old report beside the new table, to be read as its."""
    for key in _RESULTS:
        if key in paths:
            Path(paths[key]).unlink(missing_ok=True)
