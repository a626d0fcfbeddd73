"""The consistency-checks study of :func:`run_study` (``kind = "consistency"``).

Base questions -> the ten checkers' tuples (templates, or the model's own negations,
paraphrases and consequences, validated) -> every distinct question's probability,
``repetitions`` times, through the cached runner -> :func:`coherence.consistency_check`
per model and checker, on the model's forecasts (the mean over repetitions) and on the
consistent-forecaster baseline's (each base question averaged over its equivalent forms).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import coherence

from ._cache import ResponseCache
from ._engine import common_iv
from ._options import study_options
from ._study_check import clear_results
from ._study_check import count_iv
from ._study_tuples import SimulatedDesigner
from ._study_tuples import ask_probabilities
from ._study_tuples import baseline_forecasts
from ._study_tuples import model_forms
from ._study_tuples import study_questions
from ._study_tuples import template_tuples
from ._study_tuples import tuple_truths
from ._templates import get_template

__all__ = ["consistency_study"]


def consistency_study(cfg: dict[str, Any], paths: dict[str, str], progress: bool | None,
                      make_client: Callable[..., Any],
                      make_design_client: Callable[..., Any]) -> dict[str, Any]:
    """Run the consistency study ``cfg`` describes; the fields of its ``StudyResult``."""
    design, tests, seed = cfg["design"], cfg["tests"], cfg["seed"]
    out = Path(cfg["out"])
    paths = {"questions": str(out / "questions.csv"), "tuples": str(out / "tuples.csv"),
             "table": paths["table"], "raw": paths["raw"],
             "results": str(out / "results.csv"), "cache": paths["cache"]}
    qs = study_questions(design)
    # a checker's tuples start at distinct base questions, and need 1 to 3 distinct ones
    count_iv("n_tuples", design["n_tuples"], len(qs), "base questions (a checker's tuples "
             "start at distinct questions)")
    tuples, texts = template_tuples(qs, design["checkers"], n_tuples=design["n_tuples"],
                                    rng=seed)
    empty = [c for c in design["checkers"] if not len(tuples) or c not in set(tuples["checker"])]
    if empty:   # they were left out of the results without a word
        raise ValueError(f"The study's design.checkers names {', '.join(map(repr, empty))}, "
                         f"whose tuples need 2 or 3 distinct base questions; the question set "
                         f"gives {len(qs)}: raise design.n_questions or drop them")
    tuples.to_csv(paths["tuples"], index=False)
    template = get_template("forecast")
    frames, raws, results, question_rows, designs = [], [], [], [], []
    n_calls = n_cached = 0
    cache = ResponseCache(paths["cache"])
    try:
        for model in cfg["models"]:
            def opts(client: Any, model: dict[str, Any] = model) -> Any:
                return common_iv(client, repetitions=design["repetitions"],
                                 options=study_options(model, design["sum_tolerance"], cache,
                                                       progress), owner="run_study")

            asked = texts.assign(source="template")
            if design["designer"] == "model":
                designer = make_design_client(model, seed,
                                              SimulatedDesigner(qs, name=model["name"]))
                asked, made = model_forms(qs, texts, designer, opts(designer),
                                          design["model_forms"])
                n_calls += made.attrs["n_calls"]
                n_cached += made.attrs["n_cached"]
                designs.append(made.assign(model=model["name"]))
            client = make_client(model, tuple_truths(texts), seed)
            rows, raw_model, made_calls, from_cache = ask_probabilities(
                client, [(r["question"], {"question": r["text"]})
                         for r in asked.to_dict("records")],
                template, "forecast", design["repetitions"], opts(client))
            n_calls += made_calls
            n_cached += from_cache
            frames.append(rows.assign(model=model["name"]))
            raws.append(raw_model.assign(model=model["name"]))
            mean = rows.groupby("question", sort=False)["p"].mean()
            question_rows.append(asked.assign(model=model["name"],
                                              p_mean=asked["question"].map(mean)))
            forecasts = {str(k): float(v) for k, v in mean.items()}
            sets = [("model", forecasts)]
            if tests["baseline"]:
                sets.append(("baseline", baseline_forecasts(forecasts)))
            for forecaster, values in sets:
                results += _checks(tuples, values, design["checkers"], tests, seed,
                                   model=model["name"], forecaster=forecaster)
    finally:
        cache.close()
    clear_results(paths)   # an earlier run's results.csv is not left beside the new table
    pd.concat(frames, ignore_index=True).to_csv(paths["table"], index=False)
    raw = pd.concat(raws, ignore_index=True)
    raw.to_csv(paths["raw"], index=False)
    pd.concat(question_rows, ignore_index=True).to_csv(paths["questions"], index=False)
    if designs:
        paths["design"] = str(out / "design.csv")
        pd.concat(designs, ignore_index=True).to_csv(paths["design"], index=False)
    report = pd.concat(results, ignore_index=True)
    report.to_csv(paths["results"], index=False)
    return {"data": pd.read_csv(paths["table"]), "raw": raw, "report": report,
            "n_calls": n_calls, "n_cached": n_cached, "paths": paths}


def _not_computed(checker: str, tests: dict[str, Any], labels: dict[str, str],
                  n_dropped: int, why: str) -> pd.DataFrame:
    """The row of a checker that could not be checked: its statistic NaN, ``method``
    saying why."""
    return pd.DataFrame([{
        "test": "consistency_check", "method": f"not computed: {why}", "statistic": np.nan,
        "pvalue": np.nan, "n_obs": 0, "checker": checker, "definition": tests["definition"],
        **labels, "n_dropped": n_dropped}])


def _checks(tuples: pd.DataFrame, forecasts: dict[str, float], checkers: list[str],
            tests: dict[str, Any], seed: int, **labels: str) -> list[pd.DataFrame]:
    """``consistency_check`` per checker on the tuples whose every question has a forecast.

    A checker none of whose tuples has every forecast (the replies failed to parse) has a
    row of its own, its statistic NaN and ``method`` saying why: it was left out of the
    results without a word (and with every checker left out the study stopped after
    writing the table, beside the previous run's results)."""
    out = []
    for checker in checkers:
        long = tuples[tuples["checker"] == checker]
        if not len(long):  # (an empty pivot has none of the checker's columns)
            out.append(_not_computed(checker, tests, labels, 0, "the design holds no tuple "
                                     "of this checker"))
            continue
        wide = long.assign(p=long["question"].map(forecasts)).pivot(
            index="tuple", columns="key", values="p")
        wide = wide[list(coherence.CHECKERS[checker])].dropna()
        n_dropped = long["tuple"].nunique() - len(wide)
        if not len(wide):
            out.append(_not_computed(checker, tests, labels, n_dropped, "no tuple has a "
                                     f"forecast of every question ({n_dropped} left out, "
                                     "their replies unparsed; see raw.csv)"))
            continue
        res = coherence.consistency_check(wide, checker, definition=tests["definition"],
                                          tolerance=tests["tolerance"],
                                          n_resamples=tests["n_resamples"], rng=seed)
        out.append(res.to_frame().assign(**labels, n_dropped=n_dropped))
    return out
