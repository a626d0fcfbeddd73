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
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pandas as pd

import coherence
from coherence import Agent
from coherence._results import Summary
from coherence._validation import param_error

from ._cache import ResponseCache
from ._clients import OpenAIClient, SimulatedClient
from ._pairs import run_pairs
from ._runner import run
from ._study_pairs import network_pairs

__all__ = ["StudyResult", "load_study", "run_study"]

STUDY_KINDS = ("decision", "pairs")
_TOP = {"kind", "name", "seed", "out", "model", "models", "design", "tests"}
_MODEL = {"name", "base_url", "api_key_env", "simulated", "temperature", "max_tokens",
          "constrained", "stop", "logprobs", "top_logprobs", "timeout", "deadline",
          "concurrency", "max_retries", "max_failures"}
_DESIGN = {"network", "n_contexts", "repetitions", "prompts", "decision", "question",
           "sum_tolerance"}
_DESIGN_PAIRS = {"network", "n_pairs", "subject", "variants", "reverse", "repetitions",
                 "sum_tolerance"}
_TESTS = {"tests", "n_permutations", "n_resamples", "adjust", "engine", "reference_prompt"}
_TESTS_PAIRS = {"n_resamples", "test", "alternative", "ci_method"}
_DESIGN_DEFAULTS: dict[str, Any] = {"network": "child", "n_contexts": 12, "repetitions": 2,
                                    "prompts": ["standard"], "decision": "decision",
                                    "question": None, "sum_tolerance": 0.02}
_DESIGN_PAIRS_DEFAULTS: dict[str, Any] = {"network": "child", "n_pairs": 12,
                                          "subject": "the next patient referred",
                                          "variants": ["baseline"], "reverse": True,
                                          "repetitions": 1, "sum_tolerance": 0.02}
_TESTS_PAIRS_DEFAULTS: dict[str, Any] = {"n_resamples": 9999, "test": "bernoulli",
                                         "alternative": "two-sided", "ci_method": "bernoulli"}
_TESTS_DEFAULTS: dict[str, Any] = {"tests": "all", "n_permutations": 1000,
                                   "n_resamples": 500, "adjust": "holm",
                                   "engine": "logistic", "reference_prompt": None}
_VERB = {"has": "have", "is": "are", "was": "were", "does": "do", "suffers": "suffer",
         "shows": "show"}


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
    report : coherence.CoherenceReport or coherence.PairsResult
        The tests, one cell per model (a decision study), or the
        conditional-forecasting results by model, variant and category (a
        pairs study).
    n_calls : int
        Calls sent to a model in this run (0 when every reply was cached).
    n_cached : int
        Replies taken from the cache.
    paths : dict
        The files written: ``table``, ``raw``, ``cache`` and ``report``
        (decision) or ``pairs`` (the question set with its exact answers) and
        ``results`` (pairs).
    """

    config: dict[str, Any] = field(repr=False)
    data: pd.DataFrame = field(repr=False)
    raw: pd.DataFrame = field(repr=False)
    report: Any = field(repr=False)
    n_calls: int
    n_cached: int
    paths: dict[str, str]

    def summary(self) -> Summary:
        """What was asked, how many calls were made, where everything went."""
        models = ", ".join(m["name"] for m in self.config["models"])
        design = self.config["design"]
        if self.config["kind"] == "pairs":
            shape = (f"design: {design['n_pairs']} question pairs of the {design['network']} "
                     f"network x {design['repetitions']} repetitions x variants "
                     f"{', '.join(design['variants'])}"
                     + (", both directions" if design["reverse"] else ""))
        else:
            shape = (f"design: {design['network']} network, {design['n_contexts']} contexts "
                     f"x {design['repetitions']} repetitions x prompts "
                     f"{', '.join(design['prompts'])} + decision {design['decision'] or '-'}")
        lines = [
            f"study {self.config['name']!r} ({self.config['kind']}): {models}",
            shape,
            f"{len(self.raw)} elicitations, {self.n_calls} calls made, {self.n_cached} from "
            f"the cache; {len(self.data)} usable rows",
            *(f"{key}: {_shown(value)}" for key, value in self.paths.items()),
        ]
        return Summary("\n".join(lines))


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
        try:
            raw = tomllib.loads(path.read_text())
        except tomllib.TOMLDecodeError as exc:
            raise ValueError(f"The study configuration {path} is not valid TOML: {exc}") \
                from None
    else:
        raise TypeError(param_error("config", owner, "a TOML file path or a mapping", config))
    _unknown(raw, _TOP, "the study configuration")
    kind = raw.get("kind", "decision")
    if kind not in STUDY_KINDS:
        raise ValueError(f"The study 'kind' must be one of {', '.join(STUDY_KINDS)}; "
                         f"got {kind!r}")
    seed = raw.get("seed", 0)
    if not isinstance(seed, int) or isinstance(seed, bool) or seed < 0:
        raise ValueError(f"The study 'seed' must be a non-negative int; got {seed!r}")
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
    pairs = kind == "pairs"
    design = ({**_DESIGN_PAIRS_DEFAULTS, **_section(raw, "design", _DESIGN_PAIRS)} if pairs
              else {**_DESIGN_DEFAULTS, **_section(raw, "design", _DESIGN)})
    for key in ("n_pairs" if pairs else "n_contexts", "repetitions"):
        if not isinstance(design[key], int) or isinstance(design[key], bool) \
                or design[key] < 1:
            raise ValueError(f"The study's design.{key} must be a positive int; got "
                             f"{design[key]!r}")
    for key in ("variants" if pairs else "prompts",):
        if isinstance(design[key], str):
            design[key] = [design[key]]
    tests = ({**_TESTS_PAIRS_DEFAULTS, **_section(raw, "tests", _TESTS_PAIRS)} if pairs
             else {**_TESTS_DEFAULTS, **_section(raw, "tests", _TESTS)})
    out = Path(raw.get("out", "study")).resolve()
    name = str(raw.get("name", out.name))
    return {"kind": kind, "name": name, "seed": seed, "out": str(out),
            "models": checked, "design": design, "tests": tests}


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
    if isinstance(agent, Mapping):
        kinds = ("rational", "leaky", "nonmonotone", "prompt_sensitive")
        if agent.get("agent") not in kinds:
            raise ValueError(f"The study's model {i}: simulated.agent must be one of "
                             f"{', '.join(kinds)}; got {agent.get('agent')!r}")
        m.setdefault("name", str(agent["agent"]))
    elif agent is not None:
        m.setdefault("name", str(agent))
    else:
        if not m.get("base_url"):
            raise ValueError(f"The study's model {i} needs base_url (e.g. "
                             "'http://127.0.0.1:8080/v1') or simulated = 'AGENT'")
        if not m.get("name"):
            raise ValueError(f"The study's model {i} needs the model's name")
    return m


def _client(model: Mapping[str, Any], contexts: pd.DataFrame, seed: int) -> Any:
    agent = model.get("simulated")
    if isinstance(agent, Mapping):   # {agent = "leaky", strength = 0.8}: the agent's options
        options = {k: v for k, v in agent.items() if k != "agent"}
        return SimulatedClient(getattr(Agent, agent["agent"])(**options), contexts, rng=seed)
    if agent is not None:
        return SimulatedClient(agent, contexts, rng=seed)
    stop = model.get("stop")
    return OpenAIClient(
        model["name"], base_url=model["base_url"],
        api_key=os.environ.get(model.get("api_key_env", "OPENAI_API_KEY")),
        temperature=model.get("temperature", 1.0), seed=seed,
        max_tokens=model.get("max_tokens", 48), timeout=model.get("timeout", 60.0),
        deadline=model.get("deadline"), logprobs=model.get("logprobs", False),
        top_logprobs=model.get("top_logprobs", 10),
        constrained=model.get("constrained"),
        extra_body={"stop": list(stop)} if stop else None)


def _question(network: str, attrs: Mapping[str, Any]) -> str:
    """The network's target as the phrase after "they" ("have tetralogy of Fallot")."""
    import bayesnets

    try:
        phrase = bayesnets.phrase_table(network)[attrs["target"]][attrs["state"]]
    except (KeyError, ValueError):
        phrase = None
    if isinstance(phrase, str):
        first, _, rest = phrase.partition(" ")
        if first.lower() in _VERB:
            return f"{_VERB[first.lower()]} {rest}".strip()
    raise ValueError(f"Cannot phrase the question of network {network!r} for the papers' "
                     "prompts; set design.question (e.g. 'have the disease')")


def run_study(config: str | os.PathLike[str] | Mapping[str, Any], *,
              progress: bool | None = None) -> StudyResult:
    """Design, elicit, test and report a whole study from one configuration.

    Parameters
    ----------
    config : str, path or mapping
        A study configuration (TOML; see :func:`load_study` and the user
        guide's "A study from one file"): ``kind`` (``"decision"`` or
        ``"pairs"``, the conditional-forecasting design on question pairs of a
        network, with ``[design]`` keys ``network``, ``n_pairs``, ``variants``,
        ``reverse``, ``repetitions``), ``seed``,
        ``out`` (the folder written), one ``[model]`` or several
        ``[[models]]`` (``base_url`` and ``name`` of an OpenAI-compatible
        server, or ``simulated = "AGENT"`` or ``simulated = {agent = "leaky",
        strength = 0.8}`` for a simulated agent), ``[design]`` (``network``,
        ``n_contexts``, ``repetitions``, ``prompts``, ``decision``,
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

    Notes
    -----
    The contexts are drawn with ``seed``; each model's client gets ``seed``
    (sampling seed of a server, or the simulated agent's stream); the report
    gets ``seed`` as its ``rng``, so its rerun line reproduces its p-values
    from ``table.csv``.

    See Also
    --------
    run : elicit a belief/action table from a contexts table.
    run_pairs : elicit the pairs table of conditional forecasting.
    coherence.report : the tests a study runs.
    """
    import bayesnets

    cfg = load_study(config)
    out = Path(cfg["out"])
    out.mkdir(parents=True, exist_ok=True)
    paths = {"table": str(out / "table.csv"), "raw": str(out / "raw.csv"),
             "report": str(out / "report.html"), "cache": str(out / "cache.sqlite")}
    if cfg["kind"] == "pairs":
        return _pairs_study(cfg, paths, progress)
    design, tests, seed = cfg["design"], cfg["tests"], cfg["seed"]
    contexts = bayesnets.contexts(design["network"], n=design["n_contexts"], rng=seed)
    question = design["question"] or _question(design["network"], contexts.attrs)
    design["question"] = question
    frames, raws, n_calls, n_cached = [], [], 0, 0
    cache = ResponseCache(paths["cache"])
    try:
        for model in cfg["models"]:
            client = _client(model, contexts, seed)
            result = run(contexts, client, question=question, prompts=design["prompts"],
                         decision=design["decision"] or None,
                         repetitions=design["repetitions"],
                         concurrency=int(model.get("concurrency", 4)), cache=cache,
                         max_retries=int(model.get("max_retries", 5)),
                         max_failures=int(model.get("max_failures", 50)),
                         sum_tolerance=design["sum_tolerance"], progress=progress)
            frames.append(result.data.assign(model=model["name"]))
            raws.append(result.raw.drop(columns=["key"]).assign(model=model["name"]))
            n_calls += result.n_calls
            n_cached += result.n_cached
    finally:
        cache.close()
    pd.concat(frames, ignore_index=True).to_csv(paths["table"], index=False)
    pd.concat(raws, ignore_index=True).to_csv(paths["raw"], index=False)
    # the report analyses the table as written, so its rerun line reproduces it
    data = pd.read_csv(paths["table"])
    prompts = design["prompts"]
    reference = tests["reference_prompt"] or ("standard" if "standard" in prompts
                                              else prompts[0])
    rep = coherence.report(data, by=("model",), tests=tests["tests"],
                           n_permutations=tests["n_permutations"],
                           n_resamples=tests["n_resamples"], adjust=tests["adjust"],
                           engine=tests["engine"], reference_prompt=reference,
                           progress=progress, rng=seed)
    digest = hashlib.sha256(Path(paths["table"]).read_bytes()).hexdigest()
    rep = _with_settings(rep, {"data_file": paths["table"], "data_file_sha256": digest,
                               "study": {k: cfg[k] for k in ("kind", "name", "seed")}})
    rep.to_html(paths["report"])
    return StudyResult(config=cfg, data=data, raw=pd.concat(raws, ignore_index=True),
                       report=rep, n_calls=n_calls, n_cached=n_cached, paths=paths)


def _pairs_study(cfg: dict[str, Any], paths: dict[str, str],
                 progress: bool | None) -> StudyResult:
    """The conditional-forecasting study on question pairs drawn from a network."""
    design, tests, seed = cfg["design"], cfg["tests"], cfg["seed"]
    out = Path(cfg["out"])
    paths = {"pairs": str(out / "pairs.csv"), "table": paths["table"], "raw": paths["raw"],
             "results": str(out / "results.csv"), "cache": paths["cache"]}
    pairs = network_pairs(design["network"], n_pairs=design["n_pairs"],
                          subject=design["subject"], rng=seed)
    pairs.to_csv(paths["pairs"], index=False)     # the question set, with its exact answers
    questions = pairs[["pair", "question_a", "question_b", "category", "a_outcome",
                       "b_outcome"]]
    frames, raws, n_calls, n_cached = [], [], 0, 0
    cache = ResponseCache(paths["cache"])
    try:
        for model in cfg["models"]:
            client = _client(model, pairs, seed)
            result = run_pairs(questions, client, variants=design["variants"],
                               reverse=bool(design["reverse"]),
                               repetitions=design["repetitions"],
                               concurrency=int(model.get("concurrency", 4)), cache=cache,
                               max_retries=int(model.get("max_retries", 5)),
                               max_failures=int(model.get("max_failures", 50)),
                               sum_tolerance=design["sum_tolerance"], progress=progress)
            frames.append(result.data.assign(model=model["name"]))
            raws.append(result.raw.drop(columns=["key"]).assign(model=model["name"]))
            n_calls += result.n_calls
            n_cached += result.n_cached
    finally:
        cache.close()
    pd.concat(frames, ignore_index=True).to_csv(paths["table"], index=False)
    pd.concat(raws, ignore_index=True).to_csv(paths["raw"], index=False)
    data = pd.read_csv(paths["table"])
    analysis = coherence.conditional_forecasting(
        data, n_resamples=tests["n_resamples"], test=tests["test"],
        alternative=tests["alternative"], ci_method=tests["ci_method"], rng=seed)
    analysis.table.to_csv(paths["results"], index=False)
    return StudyResult(config=cfg, data=data, raw=pd.concat(raws, ignore_index=True),
                       report=analysis, n_calls=n_calls, n_cached=n_cached, paths=paths)


def _with_settings(rep: Any, extra: Mapping[str, Any]) -> Any:
    import dataclasses

    return dataclasses.replace(rep, settings={**rep.settings, **extra})
