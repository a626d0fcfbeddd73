"""A whole study from one configuration: design, elicitation, tests and report.

:func:`run_study` reads a study configuration (a TOML file or a mapping), draws
the design (contexts, or question pairs, of a bundled Bayesian network), asks every configured
model through the cached, resumable runner, runs :func:`coherence.report` on the
table it wrote, and writes the report. A second run with the same
configuration finds every reply in the cache and makes no call.

It lives here, not in the statistical core: ``coherence`` never imports
``bayesnets`` or ``elicitation``, and a study needs both (the network that
designs it, the clients that ask). ``bayesnets`` is imported only when a study
is run.
"""

from __future__ import annotations

import hashlib
import os
import tomllib
import warnings
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import coherence
from coherence import Agent
from coherence._results import Summary
from coherence._validation import param_error

from ._cache import ResponseCache
from ._clients import OpenAIClient
from ._engine import common_iv
from ._options import study_options
from ._pairs import run_pairs
from ._runner import run
from ._simulated import SimulatedClient
from ._study_check import clear_results
from ._study_check import config_types_iv
from ._study_check import control_hint
from ._study_check import designer_keys_iv
from ._study_check import model_types_iv
from ._study_check import pairs_count_iv
from ._study_check import prompt_labels_iv
from ._study_check import prompt_variants
from ._study_check import stale_outputs_iv
from ._study_check import stop_sequences
from ._study_check import twin_models_iv
from ._study_pairs import failed_pair_rows
from ._study_pairs import label_pairs
from ._study_pairs import network_pairs
from ._study_pairs import select_pairs
from ._study_tuples import SimulatedDesigner

__all__ = ["StudyResult", "load_study", "run_study"]

STUDY_KINDS = ("decision", "pairs", "consistency", "forecasting")
_TOP = {"kind", "name", "seed", "seeds", "out", "model", "models", "design", "tests"}
_MODEL = {"name", "base_url", "api_key_env", "simulated", "temperature", "max_tokens",
          "constrained", "stop", "logprobs", "top_logprobs", "timeout", "deadline",
          "concurrency", "max_retries", "max_failures", "design_max_tokens"}
# the keys of a server's model (the client's settings): an error on a simulated model
_SERVER_ONLY = _MODEL - {"name", "simulated", "concurrency", "max_retries", "max_failures"}
_DESIGN = {"network", "n_contexts", "repetitions", "prompts", "decision", "question",
           "sum_tolerance"}
_DESIGN_PAIRS = {"network", "n_pairs", "subject", "variants", "reverse", "repetitions",
                 "sum_tolerance", "designer", "n_candidates"}
_DESIGN_CONSISTENCY = {"questions", "n_questions", "checkers", "n_tuples", "repetitions",
                       "designer", "model_forms", "sum_tolerance"}
_TESTS_CONSISTENCY = {"n_resamples", "definition", "tolerance", "baseline"}
_DESIGN_FORECASTING = {"questions", "n_questions", "simulated_date", "repetitions",
                       "sum_tolerance"}
_DESIGN_FORECASTING_DEFAULTS: dict[str, Any] = {
    "questions": "demo", "n_questions": None, "simulated_date": None, "repetitions": 2,
    "sum_tolerance": 0.02}
_TESTS_FORECASTING = {"n_resamples", "n_bins", "confidence_level"}
_TESTS_FORECASTING_DEFAULTS: dict[str, Any] = {"n_resamples": 2000, "n_bins": 10,
                                               "confidence_level": 0.95}
_DESIGN_CONSISTENCY_DEFAULTS: dict[str, Any] = {
    "questions": "demo", "n_questions": None, "checkers": "all", "n_tuples": 8,
    "repetitions": 2, "designer": "templates",
    "model_forms": ["negation", "paraphrase", "consequence"], "sum_tolerance": 0.02}
_TESTS_CONSISTENCY_DEFAULTS: dict[str, Any] = {"n_resamples": 999, "definition": "paper",
                                               "tolerance": 0.01, "baseline": True}
_TESTS = {"tests", "n_permutations", "n_resamples", "adjust", "engine", "reference_prompt"}
_TESTS_PAIRS = {"n_resamples", "test", "alternative", "ci_method"}
_DESIGN_DEFAULTS: dict[str, Any] = {"network": "child", "n_contexts": 12, "repetitions": 2,
                                    "prompts": ["standard"], "decision": "decision",
                                    "question": None, "sum_tolerance": 0.02}
_DESIGN_PAIRS_DEFAULTS: dict[str, Any] = {"network": "child", "n_pairs": 12,
                                          "subject": "the next patient referred",
                                          "variants": ["baseline"], "reverse": True,
                                          "repetitions": 1, "sum_tolerance": 0.02,
                                          "designer": "network", "n_candidates": None}
_TESTS_PAIRS_DEFAULTS: dict[str, Any] = {"n_resamples": 9999, "test": "bernoulli",
                                         "alternative": "two-sided", "ci_method": "bernoulli"}
_TESTS_DEFAULTS: dict[str, Any] = {"tests": "all", "n_permutations": 1000,
                                   "n_resamples": 500, "adjust": "holm",
                                   "engine": "logistic", "reference_prompt": None}


@dataclass(frozen=True, slots=True)
class StudyResult:
    """What :func:`run_study` did and wrote.

    Attributes
    ----------
    config : dict
        The configuration as run, every default filled in.
    data : pandas.DataFrame
        The belief/action table the report analysed (as written to
        ``paths["table"]`` and read back), one ``model`` per configured model.
    raw : pandas.DataFrame
        Every call's raw reply, parse and error, with a ``model`` column.
    report : coherence.CoherenceReport, coherence.PairsResult or pandas.DataFrame
        The tests, one cell per model (a decision study), the
        conditional-forecasting results by model, variant and category (a
        pairs study), the checks by model, checker and forecaster (a
        consistency study) or the scores by model and metric, with intervals
        and the simulated date (a forecasting study).
    n_calls : int
        Calls sent to a model in this run (0 when every reply was cached).
    n_cached : int
        Replies taken from the cache.
    paths : dict
        The files written: ``table``, ``raw``, ``cache`` and ``report``
        (decision) or ``pairs`` (the question set with its exact answers) and
        ``results`` (pairs), ``questions``, ``tuples``, ``results`` (and
        ``design`` when a model designs) for a consistency study, ``questions``,
        ``forecasts`` and ``results`` for a forecasting study, ``seeds`` and
        ``spread`` for a decision study over several seeds.
    spread : pandas.DataFrame or None
        A decision study over several ``seeds``: per model and test, the
        number of seeds, the mean, standard deviation, minimum and maximum of
        the statistic, and the smallest, median and largest p-value across
        seeds; None otherwise.
    """

    config: dict[str, Any] = field(repr=False)
    data: pd.DataFrame = field(repr=False)
    raw: pd.DataFrame = field(repr=False)
    report: Any = field(repr=False)
    n_calls: int
    n_cached: int
    paths: dict[str, str]
    spread: pd.DataFrame | None = field(default=None, repr=False)

    def summary(self) -> Summary:
        """What was asked, how many calls were made, where everything went."""
        models = ", ".join(m["name"] for m in self.config["models"])
        design = self.config["design"]
        if self.config["kind"] == "forecasting":
            shape = (f"design: the {design['questions']!r} questions resolving after the "
                     f"simulated date {design['simulated_date']} (the model is told it is "
                     f"today) x {design['repetitions']} repetitions")
        elif self.config["kind"] == "consistency":
            shape = (f"design: {design['n_tuples']} tuples per checker "
                     f"({', '.join(design['checkers'])}) from the {design['questions']!r} "
                     f"questions, written by {design['designer']}, x "
                     f"{design['repetitions']} repetitions")
        elif self.config["kind"] == "pairs":
            # a model's labels keep up to n_pairs: the pairs asked, and what was asked for
            kept = (len(pd.read_csv(self.paths["pairs"]))
                    if Path(self.paths.get("pairs", "")).is_file() else None)
            shape = (f"design: {kept if kept is not None else design['n_pairs']} question "
                     + (f"pairs (of the {design['n_pairs']} asked for: too few labelled) "
                        if kept is not None and kept < design["n_pairs"] else "pairs ")
                     + f"of the {design['network']} "
                     f"network x {design['repetitions']} repetitions x variants "
                     f"{', '.join(design['variants'])}"
                     + (", both directions" if design["reverse"] else "")
                     + (", pairs found and labelled by the model"
                        if design["designer"] == "model" else ""))
        else:
            shape = (f"design: {design['network']} network, {design['n_contexts']} contexts "
                     f"x {design['repetitions']} repetitions x prompts "
                     f"{', '.join(design['prompts'])} + decision {design['decision'] or '-'}"
                     + (f", seeds {', '.join(map(str, self.config['seeds']))}"
                        if "seeds" in self.config else ""))
        lines = [
            f"study {self.config['name']!r} ({self.config['kind']}): {models}",
            shape,
            f"{len(self.raw)} elicitations"
            # a model's design calls (questions written, pairs labelled) are counted too
            + (f" and {designed} design calls" if (designed := self.n_calls + self.n_cached
                                                   - len(self.raw)) > 0 else "")
            + f", {self.n_calls} calls made, {self.n_cached} from the cache; "
            f"{_usable(self.config['kind'], self.data)} usable rows",
            *(f"{key}: {_shown(value)}" for key, value in self.paths.items()),
        ]
        return Summary("\n".join(lines))


def _usable(kind: str, data: pd.DataFrame) -> int:
    """The table's rows with an answer: a consistency or forecasting study's table keeps a
    row for every reply, its ``p`` missing where the reply did not parse (counted as usable,
    a study whose every reply failed said "294 usable rows")."""
    if kind in ("consistency", "forecasting") and "p" in data.columns:
        return int(data["p"].notna().sum())
    return len(data)


def _shown(path: str) -> str:
    """A path relative to the working directory when it is below it."""
    relative = os.path.relpath(path)
    return path if relative.startswith("..") else relative


def load_study(config: str | os.PathLike[str] | Mapping[str, Any]) -> dict[str, Any]:
    """A study configuration, validated, with every default filled in.

    Parameters
    ----------
    config : str, path or mapping
        A TOML file or the same content as a mapping. A relative ``out``
        folder is relative to the working directory (as the paths of the
        other commands are), wherever the file is.

    Returns
    -------
    dict
        ``kind``, ``name``, ``seed``, ``out`` (an absolute folder),
        ``models`` (a list), ``design`` and ``tests``.

    See Also
    --------
    run_study : run the study a configuration describes.
    """
    owner = "run_study"
    if isinstance(config, Mapping):
        raw = dict(config)
    elif isinstance(config, str | os.PathLike):
        path = Path(config)
        if not path.is_file():
            raise ValueError(param_error("config", owner, "a TOML file or a mapping",
                                         str(config)) + " (no such file)")
        raw = _toml(path)
    else:
        raise TypeError(param_error("config", owner, "a TOML file path or a mapping", config))
    _unknown(raw, _TOP, "the study configuration")
    kind = raw.get("kind", "decision")
    if kind not in STUDY_KINDS:
        raise ValueError(f"The study 'kind' must be one of {', '.join(STUDY_KINDS)}; "
                         f"got {kind!r}")
    seed = raw.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool) or not 0 <= seed < 2**63:
        raise ValueError(f"The study 'seed' must be a non-negative int below 2**63; got "
                         f"{seed!r}")
    seeds = raw.get("seeds")
    if seeds is not None:
        if kind != "decision":
            raise ValueError("The study's 'seeds' (one run per seed, with the between-seed "
                             f"spread) is for kind = 'decision'; got kind {kind!r}")
        # the entries' type first: set() of a list holding a list raised 'unhashable type'
        if (not isinstance(seeds, list) or not seeds
                or not all(isinstance(x, int) and not isinstance(x, bool) and 0 <= x < 2**63
                           for x in seeds) or len(set(seeds)) != len(seeds)):
            raise ValueError("The study's 'seeds' must be a list of distinct non-negative "
                             f"ints below 2**63; got {seeds!r}")
        if "seed" in raw and raw["seed"] != seeds[0]:   # (a loaded config has both)
            raise ValueError("The study configuration names both 'seed' and 'seeds'; use one")
        seed = seeds[0]
    if "model" in raw and "models" in raw:
        raise ValueError("The study configuration names both [model] and [[models]]; "
                         "use one")
    models = raw.get("models", [raw["model"]] if "model" in raw else None)
    if not isinstance(models, list) or not models:
        raise ValueError("The study configuration needs a [model] table (or [[models]]) "
                         "with base_url and name, or simulated = 'AGENT'")
    checked = [_model_iv(m, i) for i, m in enumerate(models)]
    names = [m["name"] for m in checked]
    if len(set(names)) != len(names):
        raise ValueError(f"The study's models must have distinct names; got {names}")
    twin_models_iv(checked)
    design_keys, design_defaults, tests_keys, tests_defaults, sizes, lists = {
        "decision": (_DESIGN, _DESIGN_DEFAULTS, _TESTS, _TESTS_DEFAULTS,
                     ("n_contexts", "repetitions"), ("prompts",)),
        "pairs": (_DESIGN_PAIRS, _DESIGN_PAIRS_DEFAULTS, _TESTS_PAIRS, _TESTS_PAIRS_DEFAULTS,
                  ("n_pairs", "repetitions"), ("variants",)),
        "consistency": (_DESIGN_CONSISTENCY, _DESIGN_CONSISTENCY_DEFAULTS, _TESTS_CONSISTENCY,
                        _TESTS_CONSISTENCY_DEFAULTS, ("n_tuples", "repetitions"),
                        ("checkers", "model_forms")),
        "forecasting": (_DESIGN_FORECASTING, _DESIGN_FORECASTING_DEFAULTS, _TESTS_FORECASTING,
                        _TESTS_FORECASTING_DEFAULTS, ("repetitions",), ()),
    }[kind]
    design = {**design_defaults, **_section(raw, "design", design_keys)}
    for key in (*sizes, "n_candidates", "n_questions"):
        if key not in design or (design[key] is None and key not in sizes):
            continue
        if not isinstance(design[key], int) or isinstance(design[key], bool) \
                or design[key] < 1:
            raise ValueError(f"The study's design.{key} must be a positive int; got "
                             f"{design[key]!r}")
    for key in lists:
        if isinstance(design[key], str) and not (key == "checkers" and design[key] == "all"):
            design[key] = [design[key]]
    tests = {**tests_defaults, **_section(raw, "tests", tests_keys)}
    config_types_iv(kind, design, tests)
    if kind in ("pairs", "consistency"):
        _designer_iv(kind, design)
    designer_keys_iv(kind, design, checked, _DESIGN_CONSISTENCY_DEFAULTS["model_forms"])
    if kind == "forecasting":
        _forecasting_iv(design, tests)
    if kind in ("decision", "pairs"):  # before any call is paid for
        _tests_iv(kind, tests)
        _names_iv(kind, design)
    if kind == "consistency" and not isinstance(tests["baseline"], bool):
        raise ValueError("The study's tests.baseline must be true or false; got "
                         f"{tests['baseline']!r}")
    folder = raw.get("out", "study")
    if not isinstance(folder, str) or not folder.strip() or control_hint(folder):
        # a NUL character failed in Path.resolve with 'embedded null byte', naming no key;
        # a line break split the paths the summary shows
        raise ValueError(f"The study's 'out' must be a folder's path{control_hint(folder)}; "
                         f"got {folder!r}")
    out = Path(folder).resolve()
    name = raw.get("name", out.name)
    if "name" in raw and (not isinstance(name, str) or not name.strip() or control_hint(name)):
        # it was str()-ed: name = ["a"] was the study "['a']", name = 5 the study '5'
        raise ValueError(f"The study's 'name' must be text (shown in the summary and the "
                         f"report){control_hint(name)}; got {name!r}")
    cfg = {"kind": kind, "name": name, "seed": seed, "out": str(out),
           "models": checked, "design": design, "tests": tests}
    if seeds is not None:
        cfg["seeds"] = list(seeds)
    _clients_iv(cfg)
    return cfg


def _toml(path: Path) -> dict[str, Any]:
    """A study file's content: TOML is UTF-8 whatever the locale (other bytes raised a
    UnicodeDecodeError naming neither the file nor what is wrong)."""
    try:
        return tomllib.loads(path.read_bytes().decode("utf-8"))
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise ValueError(f"The study configuration {path} is not valid TOML: "
                         + (f"not UTF-8 text ({exc})" if isinstance(exc, UnicodeError)
                            else str(exc))) from None


def _clients_iv(cfg: Mapping[str, Any]) -> None:
    """Every server model's client is made once (no call) when the file is read, so that a
    bad setting of the last model (``temperature = -1``, ``constrained = "xml"``) stops the
    study before the first model is asked and paid for."""
    for i, m in enumerate(cfg["models"]):
        if m.get("simulated") is not None:
            continue
        try:
            _client(m, pd.DataFrame(), cfg["seed"])
            if cfg["kind"] in ("pairs", "consistency"):
                _design_client(m, cfg["seed"], None)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"The study's model {i} ({m['name']!r}): {exc}") from None


def _designer_iv(kind: str, design: dict[str, Any]) -> None:
    """The designer of a pairs or consistency study, its forms and checkers."""
    from coherence import CHECKERS

    allowed = ("network", "model") if kind == "pairs" else ("templates", "model")
    if design["designer"] not in allowed:
        raise ValueError(f"The study's design.designer must be one of {', '.join(allowed)}; "
                         f"got {design['designer']!r}")
    if kind == "pairs":
        if design["n_candidates"] is not None and design["designer"] != "model":
            raise ValueError("The study's design.n_candidates (the candidate pairs a model "
                             "labels) is for designer = 'model'; got n_candidates "
                             f"{design['n_candidates']!r} with designer "
                             f"{design['designer']!r}")
        if (design["n_candidates"] or design["n_pairs"]) < design["n_pairs"]:
            # it ran on the candidates there were, the summary still saying n_pairs
            raise ValueError(f"The study's design.n_candidates ({design['n_candidates']}) "
                             f"is fewer than design.n_pairs ({design['n_pairs']}): the "
                             "pairs are kept among the candidates; show at least n_pairs")
        if design["repetitions"] != 1:
            raise ValueError("The study's design.repetitions must be 1 for kind = 'pairs' "
                             "(the conditional-forecasting analysis takes one elicitation "
                             "per pair, variant and direction; more would be repeated pairs "
                             f"it refuses); got {design['repetitions']!r}")
        return
    if design["checkers"] == "all":
        design["checkers"] = list(CHECKERS)
    bad = [c for c in design["checkers"] if c not in CHECKERS]
    if bad or not design["checkers"]:
        raise ValueError(f"The study's design.checkers must be 'all' or names among "
                         f"{', '.join(CHECKERS)}; got {design['checkers']!r}")
    from ._study_tuples import MODEL_FORMS

    if design["model_forms"] == ["all"]:
        design["model_forms"] = list(MODEL_FORMS)
    if any(f not in MODEL_FORMS for f in design["model_forms"]):
        raise ValueError(f"The study's design.model_forms must be 'all' or among "
                         f"{', '.join(MODEL_FORMS)}; got {design['model_forms']!r}")


def _forecasting_iv(design: dict[str, Any], tests: dict[str, Any]) -> None:
    """The simulated date (required) and the scores' settings of a forecasting study."""
    from ._study_forecasting import simulated_date_iv

    design["simulated_date"] = simulated_date_iv(design["simulated_date"])
    for key, low in (("n_resamples", 1), ("n_bins", 1)):
        value = tests[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < low:
            raise ValueError(f"The study's tests.{key} must be a positive int; got {value!r}")
    level = tests["confidence_level"]
    if isinstance(level, bool) or not isinstance(level, int | float) or not 0 < level < 1:
        raise ValueError("The study's tests.confidence_level must be a number in (0, 1); got "
                         f"{level!r}")


#: report()'s multiplicity adjustments (its ``adjust``)
_ADJUST = ("holm", "bh", "none")


def _tests_iv(kind: str, tests: dict[str, Any]) -> None:
    """The ``[tests]`` of a decision or pairs study, checked when the file is read: a
    misspelt test or setting must not wait until every model has been asked."""
    import coherence

    sizes = ("n_permutations", "n_resamples") if kind == "decision" else ("n_resamples",)
    for key in sizes:
        value = tests[key]
        if not isinstance(value, int) or isinstance(value, bool) or value < 1:
            raise ValueError(f"The study's tests.{key} must be a positive int; got {value!r}")
    if kind == "decision":
        names = [tests["tests"]] if isinstance(tests["tests"], str) else tests["tests"]
        if not isinstance(names, list) or not names or any(
                n not in (*coherence.TEST_NAMES, "all") for n in names):
            raise ValueError("The study's tests.tests must be 'all' or a list of some of "
                             f"{', '.join(coherence.TEST_NAMES)}; got {tests['tests']!r}")
        choices = {"adjust": _ADJUST, "engine": ("logistic", "catboost")}
    else:
        choices = {"test": coherence.PAIRS_TESTS, "alternative": coherence.PAIRS_ALTERNATIVES,
                   "ci_method": coherence.PAIRS_CI_METHODS}
    for key, allowed in choices.items():
        if tests[key] not in allowed:
            raise ValueError(f"The study's tests.{key} must be one of "
                             f"{', '.join(map(repr, allowed))}; got {tests[key]!r}")


def _names_iv(kind: str, design: dict[str, Any]) -> None:
    """The network and the prompts a decision or pairs study names, checked when the file
    is read (the design is drawn and the models asked only after)."""
    import bayesnets

    from ._templates import CONDITIONAL_VARIANTS
    from ._templates import template_names

    def one_of(key: str, value: Any, allowed: Sequence[str]) -> None:
        if value not in allowed:
            raise ValueError(f"The study's design.{key} must be one of "
                             f"{', '.join(map(repr, allowed))}; got {value!r}")

    one_of("network", design["network"], bayesnets.BUNDLED_NETWORKS)
    if kind == "decision":
        for prompt in design["prompts"]:
            one_of("prompts", prompt, template_names())
        prompt_labels_iv(design["prompts"])
        one_of("decision", design["decision"], ("", *template_names()))
    else:
        for variant in design["variants"]:
            one_of("variants", variant, CONDITIONAL_VARIANTS)


def _unknown(table: Mapping[str, Any], allowed: set[str], where: str) -> None:
    extra = sorted(set(table) - allowed)
    if extra:
        raise ValueError(f"Unknown key(s) {', '.join(map(repr, extra))} in {where}; "
                         f"expected some of {', '.join(sorted(allowed))}")


def _section(raw: Mapping[str, Any], name: str, allowed: set[str]) -> dict[str, Any]:
    table = raw.get(name, {})
    if not isinstance(table, Mapping):
        raise ValueError(f"The study's [{name}] must be a table; got {table!r}")
    _unknown(table, allowed, f"[{name}]")
    return dict(table)


def _model_iv(model: Any, i: int) -> dict[str, Any]:
    if not isinstance(model, Mapping):
        raise ValueError(f"The study's model {i} must be a table; got {model!r}")
    _unknown(model, _MODEL, f"model {i}")
    m = dict(model)
    agent = m.get("simulated")
    if agent is not None:
        if isinstance(agent, Mapping):
            m.setdefault("name", str(agent.get("agent")))
        else:
            m.setdefault("name", str(agent))
        _simulated_iv(m, i)
    else:
        if not m.get("base_url"):
            raise ValueError(f"The study's model {i} needs base_url (e.g. "
                             "'http://127.0.0.1:8080/v1') or simulated = 'AGENT'")
        if not m.get("name"):
            raise ValueError(f"The study's model {i} needs the model's name")
    for key, low in (("concurrency", 1), ("max_retries", 0), ("max_failures", 0)):
        value = m.get(key)
        if value is not None and (not isinstance(value, int) or isinstance(value, bool)
                                  or value < low):
            raise ValueError(f"The study's model {i} ({m['name']!r}): {key} must be an int "
                             f">= {low}; got {value!r}")
    model_types_iv(m, i)
    return m


def _simulated_iv(m: dict[str, Any], i: int) -> None:
    """A simulated model: a known agent whose options build it, and none of a server's keys
    (a simulated agent would silently ignore them)."""
    where = f"The study's model {i} ({m['name']!r})"
    server = sorted(k for k in m if k in _SERVER_ONLY)
    if server:
        raise ValueError(f"{where} is simulated; {', '.join(map(repr, server))} configure a "
                         "server's model and do not apply to a simulated agent (remove them, "
                         "or drop 'simulated' and give base_url)")
    agent = m["simulated"]
    kinds = ("rational", "leaky", "nonmonotone", "prompt_sensitive")
    kind = agent.get("agent") if isinstance(agent, Mapping) else agent
    if kind not in kinds:
        raise ValueError(f"{where}: simulated{'.agent' if isinstance(agent, Mapping) else ''} "
                         f"must be one of {', '.join(kinds)}; got {kind!r}")
    if isinstance(agent, Mapping):
        try:
            _agent(agent)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: simulated = {{agent = {kind!r}, ...}}: {exc}") \
                from None


def _agent(spec: Mapping[str, Any]) -> Agent:
    """The simulated agent of ``simulated = {agent = "leaky", strength = 0.8}``."""
    options = {k: v for k, v in spec.items() if k != "agent"}
    agent: Agent = getattr(Agent, spec["agent"])(**options)
    return agent


def _keys_iv(models: Sequence[Mapping[str, Any]]) -> None:
    """Every server model's ``api_key_env``, when named, is set (before any call): a variable
    named on purpose and unset (a typo) must neither send no key without a word nor let the
    client fall back to ``$OPENAI_API_KEY`` and send that key to this model's server."""
    for i, m in enumerate(models):
        env = m.get("api_key_env")
        if m.get("simulated") is not None or env is None:
            continue
        if not isinstance(env, str) or not env or not os.environ.get(env):
            raise ValueError(f"The study's model {i} ({m['name']!r}): api_key_env names "
                             f"{env!r}, which is not set (or is empty) in the environment; "
                             "expected the name of the variable holding this server's key "
                             "(the key itself is never read from the file)")


def _client(model: Mapping[str, Any], contexts: pd.DataFrame, seed: int) -> Any:
    agent = model.get("simulated")
    if isinstance(agent, Mapping):   # {agent = "leaky", strength = 0.8}: the agent's options
        return SimulatedClient(_agent(agent), contexts, rng=seed)
    if agent is not None:
        return SimulatedClient(agent, contexts, rng=seed)
    stop = stop_sequences(model.get("stop"), f"The study's model {model['name']!r}")
    return OpenAIClient(
        model["name"], base_url=model["base_url"],
        # the variable named (checked set when read); none named: the client sends
        # $OPENAI_API_KEY to OpenAI's host only, and no key to any other server
        api_key=(os.environ.get(model["api_key_env"]) or "" if "api_key_env" in model
                 else None),
        temperature=model.get("temperature", 1.0), seed=seed,
        max_tokens=model.get("max_tokens", 48), timeout=model.get("timeout", 60.0),
        deadline=model.get("deadline"), logprobs=model.get("logprobs", False),
        top_logprobs=model.get("top_logprobs"),
        constrained=model.get("constrained"),
        extra_body={"stop": stop} if stop else None)


def _design_client(model: Mapping[str, Any], seed: int, designer: Any) -> Any:
    """The client that designs: the model unconstrained (it writes text), or, for a
    simulated model, ``designer`` (which writes the template forms / exact labels)."""
    if model.get("simulated") is not None:
        return designer
    return _client({**model, "constrained": None, "logprobs": False,
                    "max_tokens": model.get("design_max_tokens", 128)}, pd.DataFrame(), seed)


def _elicit_each_model(cfg: Mapping[str, Any], cache: Any, paths: Mapping[str, str],
                       elicit: Any) -> tuple[pd.DataFrame, int, int]:
    """Run ``elicit(model)`` for every configured model (the cache closed after), write
    the table and the raw replies with a ``model`` column; the raw replies and the
    calls made and taken from the cache."""
    frames, raws, n_calls, n_cached = [], [], 0, 0
    try:
        for model in cfg["models"]:
            result = elicit(model)
            frames.append(result.data.assign(model=model["name"]))
            raws.append(result.raw.drop(columns=["key"]).assign(model=model["name"]))
            n_calls += result.n_calls
            n_cached += result.n_cached
    finally:
        cache.close()
    raw = pd.concat(raws, ignore_index=True)
    clear_results(paths)
    table = pd.concat(frames, ignore_index=True)
    table.to_csv(paths["table"], index=False)
    raw.to_csv(paths["raw"], index=False)
    if not len(table):
        # a failed study, not a usage error: the tests' "at least one row" read as one
        reasons = raw.loc[~raw["parse_ok"].astype(bool), "reason"].fillna("no reply")
        top = ", ".join(f"{r}: {n}" for r, n in reasons.value_counts().head(3).items())
        raise RuntimeError(f"no usable row: every row of every model had a reply that "
                           f"failed ({top}); see {paths['raw']}")
    return raw, n_calls, n_cached


def _question(network: str, attrs: Mapping[str, Any]) -> str:
    """The network's target as the phrase after "they" ("have tetralogy of Fallot")."""
    import bayesnets

    try:
        return str(bayesnets.predicate(network, attrs["target"], attrs["state"]))
    except (KeyError, ValueError):
        raise ValueError(f"Cannot phrase the question of network {network!r} for the "
                         "papers' prompts; set design.question (e.g. 'have the disease')"
                         ) from None


def run_study(config: str | os.PathLike[str] | Mapping[str, Any], *,
              progress: bool | None = None) -> StudyResult:
    """Design, elicit, test and report a whole study from one configuration.

    Parameters
    ----------
    config : str, path or mapping
        A study configuration (TOML; see :func:`load_study` and the user
        guide's "A study from one file"): ``kind`` (``"decision"``,
        ``"pairs"``, the conditional-forecasting design on question pairs of a
        network, with ``[design]`` keys ``network``, ``n_pairs``, ``variants``,
        ``reverse``, ``repetitions`` (1: one elicitation per pair),
        ``designer``, ``n_candidates`` (with ``designer = "model"``),
        ``"consistency"``, the
        ten consistency checkers on tuples generated from base questions, or
        ``"forecasting"``, base questions asked at ``design.simulated_date``
        and scored against their resolutions),
        ``seed`` (or ``seeds``, a decision study once per seed),
        ``out`` (the folder written), one ``[model]`` or several
        ``[[models]]`` (``base_url`` and ``name`` of an OpenAI-compatible
        server, or ``simulated = "AGENT"`` or ``simulated = {agent = "leaky",
        strength = 0.8}`` for a simulated agent, whose options are checked
        when the file is read and which takes none of a server's keys), ``[design]``
        (``network``, ``n_contexts``, ``repetitions``, ``prompts``, ``decision``:
        ``""`` asks no action and the report runs the tests that need none,
        ``question``) and ``[tests]`` (``tests``, ``n_permutations``,
        ``n_resamples``, ``adjust``, ``engine``).
    progress : bool or None
        Show the elicitation's and the tests' progress bars (default: when
        standard error is a terminal).

    Returns
    -------
    StudyResult
        The table, the raw replies, the report, the call counts and the
        files written to ``out``: ``table.csv``, ``raw.csv``, ``report.html``
        and ``cache.sqlite`` (every reply, committed before it is parsed:
        an interrupted study resumes where it stopped, and a second run makes
        no call).

    Raises
    ------
    RuntimeError
        When a decision or pairs study gets no usable row from any model (every
        row had a reply that failed to parse or to be answered); ``table.csv``
        and ``raw.csv`` are written first. A consistency or forecasting study
        keeps a NaN row per check or score instead, its ``method`` saying why.

    Notes
    -----
    The contexts are drawn with ``seed``; each model's client gets ``seed``
    (sampling seed of a server, or the simulated agent's stream); the report
    gets ``seed`` as its ``rng``, so its rerun line reproduces its p-values
    from ``table.csv``.

    An ``out`` folder that holds the outputs of another study, files or
    ``seed-<s>`` folders this study does not write (a ``report.html`` in the
    folder of a pairs study, the ``seed-2/`` of a study over more seeds), is
    refused before any call with a ``ValueError`` naming them: they would be
    read beside the new files as this study's. Nothing else is deleted; the
    files this study writes are written anew, and ``cache.sqlite`` stays (a
    rerun takes every reply it holds from it). Its analysis outputs of an
    earlier run (``report.html``, ``results.csv``, ...) are removed when the new
    table is written, so a failed analysis leaves no old report beside it.

    See Also
    --------
    run : elicit a belief/action table from a contexts table.
    run_pairs : elicit the pairs table of conditional forecasting.
    coherence.report : the tests a study runs.
    """
    cfg = load_study(config)
    _keys_iv(cfg["models"])
    stale_outputs_iv(cfg)
    out = Path(cfg["out"])
    out.mkdir(parents=True, exist_ok=True)
    paths = {"table": str(out / "table.csv"), "raw": str(out / "raw.csv"),
             "report": str(out / "report.html"), "cache": str(out / "cache.sqlite")}
    if cfg["kind"] == "pairs":
        return _pairs_study(cfg, paths, progress)
    if cfg["kind"] == "consistency":
        from ._study_consistency import consistency_study

        parts = consistency_study(cfg, paths, progress, _client, _design_client)
        return StudyResult(config=cfg, **parts)
    if cfg["kind"] == "forecasting":
        from ._study_forecasting import forecasting_study

        return StudyResult(config=cfg, **forecasting_study(cfg, paths, progress, _client))
    if "seeds" in cfg:
        return _seeds_study(cfg, paths, progress)
    return _decision_study(cfg, paths, progress)


def _decision_study(cfg: dict[str, Any], paths: dict[str, str],
                    progress: bool | None) -> StudyResult:
    """One decision-coherence study (one seed) writing ``paths``."""
    import bayesnets

    design, tests, seed = cfg["design"], cfg["tests"], cfg["seed"]
    contexts = bayesnets.contexts(design["network"], n=design["n_contexts"], rng=seed)
    question = design["question"] or _question(design["network"], contexts.attrs)
    design["question"] = question
    cache = ResponseCache(paths["cache"])
    raw, n_calls, n_cached = _elicit_each_model(
        cfg, cache, paths, lambda model: run(
            contexts, _client(model, contexts, seed), question=question,
            prompts=design["prompts"], decision=design["decision"] or None,
            repetitions=design["repetitions"],
            options=study_options(model, design["sum_tolerance"], cache, progress)))
    # the report analyses the table as written, so its rerun line reproduces it
    data = pd.read_csv(paths["table"])
    # the table's prompt column holds the variants ('standard' for 'standard_toolkit')
    variants = prompt_variants(design["prompts"])
    reference = tests["reference_prompt"] or ("standard" if "standard" in variants
                                              else variants[0])
    with warnings.catch_warnings():
        # the study file keeps the two draw counts apart (ci and leakage p-values, other
        # resamples); report() names the first n_permutations for one more release
        warnings.filterwarnings("ignore", "report.n_permutations", DeprecationWarning)
        # decision = "" asks no action: the tests that need none (calibration, prompts)
        no_action: dict[str, Any] = {} if design["decision"] else {"action": None}
        rep = coherence.report(data, by=("model",), tests=tests["tests"], **no_action,
                               n_permutations=tests["n_permutations"],
                               n_resamples=tests["n_resamples"], adjust=tests["adjust"],
                               engine=tests["engine"], reference_prompt=reference,
                               progress=progress, rng=seed)
    digest = hashlib.sha256(Path(paths["table"]).read_bytes()).hexdigest()
    rep = _with_settings(rep, {"data_file": paths["table"], "data_file_sha256": digest,
                               "study": {k: cfg[k] for k in ("kind", "name", "seed")}})
    rep.to_html(paths["report"])
    return StudyResult(config=cfg, data=data, raw=raw, report=rep, n_calls=n_calls,
                       n_cached=n_cached, paths=paths)


def _seeds_study(cfg: dict[str, Any], paths: dict[str, str],
                 progress: bool | None) -> StudyResult:
    """The decision study once per seed (one shared cache), and the between-seed spread."""
    out = Path(cfg["out"])
    new = {"seeds": str(out / "seeds.csv"), "spread": str(out / "spread.csv"),
           "cache": paths["cache"]}
    clear_results(new)
    runs = []
    for s in cfg["seeds"]:
        folder = out / f"seed-{s}"
        folder.mkdir(exist_ok=True)
        one = {**cfg, "seed": s, "design": dict(cfg["design"])}
        runs.append(_decision_study(one, {
            "table": str(folder / "table.csv"), "raw": str(folder / "raw.csv"),
            "report": str(folder / "report.html"), "cache": paths["cache"]}, progress))
        cfg["design"]["question"] = one["design"]["question"]
    frames = [r.report.to_frame().assign(seed=s) for s, r in zip(cfg["seeds"], runs,
                                                                 strict=True)]
    per_seed = pd.concat(frames, ignore_index=True)
    spread = seed_spread(per_seed)
    per_seed.to_csv(new["seeds"], index=False)
    spread.to_csv(new["spread"], index=False)
    for s, r in zip(cfg["seeds"], runs, strict=True):
        new[f"report_seed_{s}"] = r.paths["report"]
    return StudyResult(
        config=cfg,
        data=pd.concat([r.data.assign(seed=s) for s, r in zip(cfg["seeds"], runs, strict=True)],
                       ignore_index=True),
        raw=pd.concat([r.raw.assign(seed=s) for s, r in zip(cfg["seeds"], runs, strict=True)],
                      ignore_index=True),
        report=runs[0].report, n_calls=sum(r.n_calls for r in runs),
        n_cached=sum(r.n_cached for r in runs), paths=new, spread=spread)


def seed_spread(per_seed: pd.DataFrame) -> pd.DataFrame:
    """Per model and test: the statistic's mean, sd, min and max across seeds, and the
    p-values' min, median and max (NaN statistics, a test that could not run on a seed,
    are left out and counted in ``n_seeds``' complement)."""
    rows = []
    for (model, test), g in per_seed.groupby(["model", "test"], sort=True):
        stat = pd.to_numeric(g["statistic"], errors="coerce").to_numpy(dtype=float)
        pval = pd.to_numeric(g["pvalue"], errors="coerce").to_numpy(dtype=float)
        ok, okp = stat[np.isfinite(stat)], pval[np.isfinite(pval)]
        rows.append({
            "model": model, "test": test, "n_seeds": len(ok),
            "statistic_mean": float(ok.mean()) if len(ok) else np.nan,
            "statistic_sd": float(ok.std(ddof=1)) if len(ok) > 1 else np.nan,
            "statistic_min": float(ok.min()) if len(ok) else np.nan,
            "statistic_max": float(ok.max()) if len(ok) else np.nan,
            "pvalue_min": float(okp.min()) if len(okp) else np.nan,
            "pvalue_median": float(np.median(okp)) if len(okp) else np.nan,
            "pvalue_max": float(okp.max()) if len(okp) else np.nan})
    return pd.DataFrame(rows)


def _pairs_study(cfg: dict[str, Any], paths: dict[str, str],
                 progress: bool | None) -> StudyResult:
    """The conditional-forecasting study on question pairs drawn from a network."""
    design, tests, seed = cfg["design"], cfg["tests"], cfg["seed"]
    out = Path(cfg["out"])
    paths = {"pairs": str(out / "pairs.csv"), "table": paths["table"], "raw": paths["raw"],
             "results": str(out / "results.csv"), "cache": paths["cache"]}
    n_calls, n_cached = 0, 0
    if design["designer"] == "model":
        # the first model finds the pairs among candidates and labels them
        wanted = design["n_candidates"] or 3 * design["n_pairs"]
        candidates = network_pairs(design["network"], n_pairs=wanted,
                                   subject=design["subject"], rng=seed)
        pairs_count_iv(candidates, wanted, design["network"],
                       "n_candidates" if design["n_candidates"] else "n_pairs")
    else:
        pairs = network_pairs(design["network"], n_pairs=design["n_pairs"],
                              subject=design["subject"], rng=seed)
        pairs_count_iv(pairs, design["n_pairs"], design["network"], "n_pairs")
    cache = ResponseCache(paths["cache"])
    if design["designer"] == "model":
        first = cfg["models"][0]
        designer = _design_client(first, seed, SimulatedDesigner(
            categories=dict(zip(candidates["pair"], candidates["category"], strict=True)),
            name=first["name"]))
        try:
            labelled = label_pairs(candidates, designer, common_iv(
                designer, repetitions=1, options=study_options(first, 0.02, cache, progress),
                owner="run_study"))
        except BaseException:
            cache.close()
            raise
        paths["design"] = str(out / "design.csv")
        labelled.assign(model=first["name"]).to_csv(paths["design"], index=False)
        n_calls, n_cached = labelled.attrs["n_calls"], labelled.attrs["n_cached"]
        pairs = select_pairs(candidates, labelled, design["n_pairs"])
        if not len(pairs):
            cache.close()
            raise ValueError(f"The model {first['name']!r} labelled none of the "
                             f"{len(candidates)} candidate pairs strong, weak or none; see "
                             f"{paths['design']}")
    pairs.to_csv(paths["pairs"], index=False)     # the question set, with its exact answers
    questions = pairs[["pair", "question_a", "question_b", "category", "a_outcome",
                       "b_outcome"]]
    raw, made, cached = _elicit_each_model(
        cfg, cache, paths, lambda model: run_pairs(
            questions, _client(model, pairs, seed), variants=design["variants"],
            reverse=bool(design["reverse"]), repetitions=design["repetitions"],
            options=study_options(model, design["sum_tolerance"], cache, progress)))
    n_calls += made
    n_cached += cached
    data = pd.read_csv(paths["table"])
    # the pair rows left out because an elicitation failed are counted (n_failed), not lost
    failed = failed_pair_rows(data, raw, pairs, design["variants"], design["repetitions"],
                              [m["name"] for m in cfg["models"]])
    analysis = coherence.conditional_forecasting(
        pd.concat([data, failed], ignore_index=True) if len(failed) else data,
        n_resamples=tests["n_resamples"], test=tests["test"],
        alternative=tests["alternative"], ci_method=tests["ci_method"], rng=seed)
    analysis.table.to_csv(paths["results"], index=False)
    return StudyResult(config=cfg, data=data, raw=raw, report=analysis, n_calls=n_calls,
                       n_cached=n_cached, paths=paths)


def _with_settings(rep: Any, extra: Mapping[str, Any]) -> Any:
    import dataclasses

    return dataclasses.replace(rep, settings={**rep.settings, **extra})
