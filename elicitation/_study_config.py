"""A study's configuration (a TOML file or a mapping): read, checked, every default filled in.

:func:`load_study` gives the configuration :func:`~elicitation.run_study` runs: its kind,
seed(s), models (servers or simulated agents), design and tests, out folder and name, each
checked before any call is paid for; the model tables' keys and simulated agents are read
here for the runner too (:func:`check_keys`, :func:`agent_of`).
"""

from __future__ import annotations

import os
import tomllib
from collections.abc import Mapping
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pandas as pd

import coherence
from coherence import Agent
from coherence._validation import param_error

from ._clients import OpenAIClient
from ._simulated import SimulatedClient
from ._study_check import config_types_iv
from ._study_check import control_hint
from ._study_check import designer_keys_iv
from ._study_check import model_types_iv
from ._study_check import prompt_labels_iv
from ._study_check import stop_sequences
from ._study_check import twin_models_iv

__all__ = ["STUDY_KINDS", "agent_of", "check_keys", "design_client", "load_study", "make_client"]

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


def load_study(config: str | os.PathLike[str] | Mapping[str, Any]) -> dict[str, Any]:
    """A study configuration, validated, with every default filled in.

    Reads a study's TOML file (or a mapping), checks every key against the study's kind,
    and fills in the defaults, so a mistake surfaces before any model is called;
    :func:`run_study` calls it first.

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
    raw = _raw_config(config, owner)
    _unknown(raw, _TOP, "the study configuration")
    kind = raw.get("kind", "decision")
    if kind not in STUDY_KINDS:
        raise ValueError(f"The study 'kind' must be one of {', '.join(STUDY_KINDS)}; "
                         f"got {kind!r}")
    seed, seeds = _seeds_iv(raw, kind)
    checked = _models_iv(raw)
    design, tests = _design_and_tests(raw, kind, checked)
    out, name = _out_and_name(raw)
    cfg = {"kind": kind, "name": name, "seed": seed, "out": str(out),
           "models": checked, "design": design, "tests": tests}
    if seeds is not None:
        cfg["seeds"] = list(seeds)
    _clients_iv(cfg)
    return cfg


def _raw_config(config: Any, owner: str) -> dict[str, Any]:
    """The configuration as given: a mapping, or a TOML file read."""
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
    return raw


def _seeds_iv(raw: Mapping[str, Any], kind: str) -> tuple[int, list[int] | None]:
    """The study's seed and its list of seeds (one run each; decision studies only)."""
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
    return seed, seeds


def _models_iv(raw: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The [model] or [[models]] tables, each checked, with distinct names."""
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
    return checked


def _design_and_tests(raw: Mapping[str, Any], kind: str, checked: list[dict[str, Any]]
                      ) -> tuple[dict[str, Any], dict[str, Any]]:
    """The [design] and [tests] tables of the study's kind with their defaults filled in,
    checked (against the models too: a designer model must be one of them)."""
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
    return design, tests


def _out_and_name(raw: Mapping[str, Any]) -> tuple[Path, Any]:
    """The out folder, resolved, and the study's name (the folder's by default)."""
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
    return out, name


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
            make_client(m, pd.DataFrame(), cfg["seed"])
            if cfg["kind"] in ("pairs", "consistency"):
                design_client(m, cfg["seed"], None)
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
            agent_of(agent)
        except (TypeError, ValueError) as exc:
            raise ValueError(f"{where}: simulated = {{agent = {kind!r}, ...}}: {exc}") \
                from None


def agent_of(spec: Mapping[str, Any]) -> Agent:
    """The simulated agent of ``simulated = {agent = "leaky", strength = 0.8}``."""
    options = {k: v for k, v in spec.items() if k != "agent"}
    agent: Agent = getattr(Agent, spec["agent"])(**options)
    return agent


def check_keys(models: Sequence[Mapping[str, Any]]) -> None:
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


def make_client(model: Mapping[str, Any], contexts: pd.DataFrame, seed: int) -> Any:
    """The client of a model table: a simulated agent's over ``contexts``, or the server's
    (its key from the variable the table names, or none)."""
    agent = model.get("simulated")
    if isinstance(agent, Mapping):   # {agent = "leaky", strength = 0.8}: the agent's options
        return SimulatedClient(agent_of(agent), contexts, rng=seed)
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


def design_client(model: Mapping[str, Any], seed: int, designer: Any) -> Any:
    """The client that designs: the model unconstrained (it writes text), or, for a
    simulated model, ``designer`` (which writes the template forms / exact labels)."""
    if model.get("simulated") is not None:
        return designer
    return make_client({**model, "constrained": None, "logprobs": False,
                    "max_tokens": model.get("design_max_tokens", 128)}, pd.DataFrame(), seed)
