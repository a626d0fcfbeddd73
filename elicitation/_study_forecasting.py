"""The forecasting study of :func:`run_study` (``kind = "forecasting"``).

Each model is told that today is ``design.simulated_date`` and asked every resolved base
question whose date lies after it (``repetitions`` times, through the cached runner); its
forecast of a question is the mean over repetitions. The forecasts are scored against the
resolutions with the core's scoring functions: :func:`coherence.forecast_scores` (accuracy,
Brier and log score, cluster-bootstrap intervals over questions),
:func:`coherence.brier_decomposition` (reliability, resolution, uncertainty, each with its
interval) and :func:`coherence.calibration_error` (the debiased calibration error).
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Callable
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

import coherence

from ._cache import ResponseCache
from ._engine import common_iv
from ._options import study_options
from ._study_check import clear_results
from ._study_tuples import ask_probabilities
from ._study_tuples import base_text
from ._study_tuples import blank_cells
from ._study_tuples import study_questions
from ._templates import Template
from ._templates import get_template

__all__ = ["dated_template", "forecasting_study", "scorable_questions", "simulated_date_iv",
           "spoken_date"]

#: The metrics of the forecasting study's results, in their order.
METRICS = ("brier", "log_score", "accuracy", "reliability", "resolution", "uncertainty",
           "calibration_error", "ece")


#: the written dates read besides ISO ``2028-01-01``: the day, the month in words, the year
_WORDED_DATES = ("%d %B %Y", "%d %b %Y", "%B %d, %Y", "%b %d, %Y", "%B %d %Y", "%b %d %Y")


def full_date(value: Any) -> dt.date | None:
    """A date with its day, month and year (a TOML date, ``2028-01-01`` with or without a
    time, ``1 January 2028``, ``January 1, 2028``); None for anything else. A year or a
    month alone (``2028`` was 1 January 2028) and a date in figures other than ISO
    (``01/02/2028`` was 2 January, and reads as 1 February too) are not guessed."""
    if isinstance(value, dt.datetime):
        return value.date()
    if isinstance(value, dt.date):
        return value
    if not isinstance(value, str):
        return None
    text = " ".join(value.split())
    iso = re.fullmatch(r"(\d{4})-(\d{1,2})-(\d{1,2})(?:[T ][\d:.+\-Z]*)?", text)
    try:
        if iso is not None:
            return dt.date(*map(int, iso.groups()))
    except ValueError:
        return None
    for form in _WORDED_DATES:
        try:
            return dt.datetime.strptime(text, form).date()
        except ValueError:
            continue
    return None


def simulated_date_iv(value: Any) -> str:
    """``design.simulated_date`` as an ISO date (``YYYY-MM-DD``); a TOML date or a string."""
    day = full_date(value)
    if day is not None:
        return day.isoformat()
    raise ValueError("The study's design.simulated_date (the date the model is told is "
                     "today) must be a full date such as 2028-01-01 or '1 January 2028' (a "
                     "year alone or 01/02/2028 is not guessed); got "
                     f"{value!r}")


def spoken_date(iso: str) -> str:
    """``'2028-01-01'`` as the prompt says it: ``'1 January 2028'``."""
    day = dt.date.fromisoformat(iso)
    return f"{day.day} {day:%B %Y}"


def dated_template() -> Template:
    """The conditional-forecasting study's plain ``forecast`` prompt, told today's date."""
    base = get_template("forecast")
    return Template("forecast_dated", base.kind, system=base.system,
                    user="Today's date is {today}.\n\n" + base.user, labels=base.labels,
                    variant="forecast_dated",
                    description="forecasting at a simulated date: P(YES) of a question, "
                    "told today's date (toolkit wording around the forecast prompt)")


def scorable_questions(questions: pd.DataFrame, simulated_date: str) -> pd.DataFrame:
    """The question set with ``text``, ``resolves_on``, ``outcome`` and why a question is
    not asked (``excluded``: '' when it is): it resolves on or before the simulated date
    (its outcome would be known), or it has no 0/1 resolution."""
    today = pd.Timestamp(simulated_date)
    out = questions.copy()
    dates = []
    for i, value in zip(out.index, out["date"], strict=True):
        # an empty date was NaT: never before the simulated date, so asked; '2030' was
        # 1 January 2030 and '01/02/2030' 2 January
        day = full_date(value)
        if day is None:
            raise ValueError(f"The question set's 'date' of row {i} (id "
                             f"{out.at[i, 'id']!r}) is not a date: {value!r} (expected the "
                             "date the question resolves, e.g. 31 December 2030 or "
                             "2030-12-31)")
        dates.append(pd.Timestamp(day))
    out["resolves_on"] = [d.date().isoformat() for d in dates]
    resolution = out["resolution"] if "resolution" in out else pd.Series("", index=out.index)
    empty = blank_cells(resolution)
    outcome = pd.to_numeric(resolution.where(~empty, np.nan), errors="coerce")
    # "yes", "TRUE", "resolved": not 0 or 1, and not empty either (they were read as no
    # resolution, the question silently left out of the scores)
    bad = ~empty & ~outcome.isin([0, 1])
    if bad.any():
        rows = out.loc[bad, "id"].tolist()[:5]
        raise ValueError(f"The question set's 'resolution' must be 0, 1 or empty; "
                         f"{int(bad.sum())} questions are not (first: {rows} with "
                         f"{resolution[bad].tolist()[:5]})")
    out["outcome"] = outcome
    out["text"] = [base_text(r) for r in out.to_dict("records")]
    out["excluded"] = np.where(
        np.array([d <= today for d in dates], dtype=bool),
        f"resolves on or before the simulated date {simulated_date}",
        np.where(outcome.isna(), "no resolution", ""))
    return out


def forecasting_study(cfg: dict[str, Any], paths: dict[str, str], progress: bool | None,
                      make_client: Callable[..., Any]) -> dict[str, Any]:
    """Run the forecasting study ``cfg`` describes; the fields of its ``StudyResult``."""
    design, tests, seed = cfg["design"], cfg["tests"], cfg["seed"]
    today = design["simulated_date"]
    out = Path(cfg["out"])
    paths = {"questions": str(out / "questions.csv"), "table": paths["table"],
             "raw": paths["raw"], "forecasts": str(out / "forecasts.csv"),
             "results": str(out / "results.csv"), "cache": paths["cache"]}
    qs = scorable_questions(study_questions(design), today)
    asked = qs[qs["excluded"] == ""]
    if not len(asked):
        raise ValueError(f"No question of design.questions {design['questions']!r} can be "
                         f"scored at design.simulated_date {today}: each resolves on or before "
                         "it or has no resolution (see the question set's 'date' and "
                         "'resolution')")
    template, spoken = dated_template(), spoken_date(today)
    truths = pd.DataFrame({"context": asked["id"].to_numpy(),
                           "truth": asked["probability"].fillna(0.5).clip(0, 1).to_numpy()})
    frames, raws, forecasts = [], [], []
    n_calls = n_cached = 0
    cache = ResponseCache(paths["cache"])
    try:
        for model in cfg["models"]:
            client = make_client(model, truths, seed)
            opts = common_iv(client, repetitions=design["repetitions"],
                             options=study_options(model, design["sum_tolerance"], cache,
                                                   progress), owner="run_study")
            rows, raw, made, cached = ask_probabilities(
                client, [(r["id"], {"question": r["text"], "today": spoken})
                         for r in asked.to_dict("records")],
                template, "forecast_dated", design["repetitions"], opts)
            n_calls += made
            n_cached += cached
            frames.append(rows.assign(model=model["name"], simulated_date=today))
            raws.append(raw.assign(model=model["name"]))
            mean = rows.groupby("question", sort=False)["p"].agg(["mean", "count"])
            forecasts.append(pd.DataFrame({
                "model": model["name"], "question": asked["id"].to_numpy(),
                "probability": asked["id"].map(mean["mean"]).to_numpy(dtype=float),
                "n_parsed": asked["id"].map(mean["count"]).fillna(0).to_numpy(dtype=int),
                "outcome": asked["outcome"].to_numpy(dtype=float),
                "simulated_date": today}))
    finally:
        cache.close()
    clear_results(paths)
    qs.to_csv(paths["questions"], index=False)
    pd.concat(frames, ignore_index=True).to_csv(paths["table"], index=False)
    raw_all = pd.concat(raws, ignore_index=True)
    raw_all.to_csv(paths["raw"], index=False)
    scored = pd.concat(forecasts, ignore_index=True)
    scored.to_csv(paths["forecasts"], index=False)
    report = score_forecasts(scored, tests, seed, simulated_date=today,
                             n_excluded=int((qs["excluded"] != "").sum()))
    report.to_csv(paths["results"], index=False)
    return {"data": pd.read_csv(paths["table"]), "raw": raw_all, "report": report,
            "n_calls": n_calls, "n_cached": n_cached, "paths": paths}


def score_forecasts(scored: pd.DataFrame, tests: Mapping[str, Any], seed: int, *,
                    simulated_date: str, n_excluded: int) -> pd.DataFrame:
    """One row per model and metric: the estimate and its interval.

    ``scored`` has one row per (model, question): ``probability`` (NaN when no reply
    parsed; such a question is left out of that model's scores and counted in
    ``n_unparsed``) and the 0/1 ``outcome``.
    """
    level, n_resamples = tests["confidence_level"], tests["n_resamples"]
    usable = scored[np.isfinite(scored["probability"].to_numpy(dtype=float))]
    rows: list[dict[str, Any]] = []
    models = list(dict.fromkeys(scored["model"]))
    scores = None
    if len(usable):
        scores = coherence.forecast_scores(
            usable, by="model", question="question", probability="probability",
            outcome="outcome", timestamp=None, n_bins=tests["n_bins"],
            n_resamples=n_resamples, confidence_level=level, rng=seed)
    for model in models:
        mine = usable[usable["model"] == model]
        base = {"model": model, "simulated_date": simulated_date,
                "n_questions": len(mine),
                "n_unparsed": int((scored["model"] == model).sum() - len(mine)),
                "n_excluded": n_excluded}

        def add(metric: str, value: float, low: float = np.nan, high: float = np.nan,
                method: str = "", base: dict[str, Any] = base) -> None:
            rows.append({**base, "metric": metric, "estimate": float(value),
                         "ci_low": float(low), "ci_high": float(high),
                         "confidence_level": level, "method": method})

        if scores is None or len(mine) < 2:     # nothing to score (no reply parsed)
            for metric in METRICS:
                add(metric, np.nan, method="fewer than 2 parsed forecasts")
            continue
        row = scores.table.set_index("model").loc[model]
        for metric in ("brier", "log_score", "accuracy"):
            add(metric, row[metric], row[f"{metric}_ci_low"], row[f"{metric}_ci_high"],
                "forecast_scores (cluster bootstrap over questions)")
        dec = coherence.brier_decomposition(mine, question="question",
                                            probability="probability", outcome="outcome",
                                            n_bins=tests["n_bins"], n_resamples=n_resamples,
                                            confidence_level=level, rng=seed)
        parts = dec.table.set_index("component")
        for metric in ("reliability", "resolution", "uncertainty"):
            add(metric, parts.at[metric, "value"], parts.at[metric, "ci_low"],
                parts.at[metric, "ci_high"], "brier_decomposition (Murphy; bootstrap)")
        # equal-mass bins of at least 5 forecasts: a bin of one cannot be debiased
        ce_bins = max(1, min(tests["n_bins"], len(mine) // 5))
        ce = coherence.calibration_error(mine, probability="probability", outcome="outcome",
                                         n_bins=ce_bins, n_resamples=n_resamples,
                                         confidence_level=level, rng=seed)
        add("calibration_error", ce.statistic, ce.confidence_interval.low,
            ce.confidence_interval.high,
            f"calibration_error (debiased squared l2, {ce.n_bins_used} equal-mass bins"
            + (f" of {ce_bins} asked: tied forecasts merge them)"
               if ce.n_bins_used < ce_bins else ")"))
        calib = scores.calibration.set_index("model").loc[model]
        add("ece", calib["ece"], method="forecast_scores (binned, equal width)")
    return pd.DataFrame(rows)
