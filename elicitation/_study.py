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
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import coherence
from coherence._results import Summary

from ._cache import ResponseCache
from ._engine import common_iv
from ._options import study_options
from ._pairs import run_pairs
from ._runner import run
from ._study_check import clear_results
from ._study_check import pairs_count_iv
from ._study_check import prompt_variants
from ._study_check import stale_outputs_iv
from ._study_config import check_keys
from ._study_config import design_client
from ._study_config import load_study
from ._study_config import make_client
from ._study_pairs import failed_pair_rows
from ._study_pairs import label_pairs
from ._study_pairs import network_pairs
from ._study_pairs import select_pairs
from ._study_tuples import SimulatedDesigner

__all__ = ["StudyResult", "load_study", "run_study"]

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

    The call behind ``coherence study``: it draws the design, asks every configured
    model (a server or a simulated agent) through a response cache, runs the coherence
    tests of the study's kind and writes the table, the raw replies and the HTML report.

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
    check_keys(cfg["models"])
    stale_outputs_iv(cfg)
    out = Path(cfg["out"])
    out.mkdir(parents=True, exist_ok=True)
    paths = {"table": str(out / "table.csv"), "raw": str(out / "raw.csv"),
             "report": str(out / "report.html"), "cache": str(out / "cache.sqlite")}
    if cfg["kind"] == "pairs":
        return _pairs_study(cfg, paths, progress)
    if cfg["kind"] == "consistency":
        from ._study_consistency import consistency_study

        parts = consistency_study(cfg, paths, progress, make_client, design_client)
        return StudyResult(config=cfg, **parts)
    if cfg["kind"] == "forecasting":
        from ._study_forecasting import forecasting_study

        return StudyResult(config=cfg, **forecasting_study(cfg, paths, progress, make_client))
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
            contexts, make_client(model, contexts, seed), question=question,
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
        designer = design_client(first, seed, SimulatedDesigner(
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
            questions, make_client(model, pairs, seed), variants=design["variants"],
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
