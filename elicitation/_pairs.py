"""The conditional-forecasting study: question pairs in, the pairs table out.

:func:`run_pairs` asks P(A), P(A | B resolved YES) and P(A | B resolved NO)
for every pair (and the reverse direction for the Bayes-consistency check),
through the job engine (:mod:`._engine`).
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from coherence._validation import as_dataframe
from coherence._validation import no_missing
from coherence._validation import param_error

from ._clients import Client
from ._common import HIDDEN
from ._common import ElicitationResult
from ._common import check_copied_truths
from ._common import check_text_ids
from ._common import make_result
from ._engine import Job
from ._engine import common_iv
from ._engine import execute
from ._engine import make_job
from ._engine import settings_json
from ._options import RunOptions
from ._options import merge_options
from ._templates import CONDITIONAL_VARIANTS
from ._templates import Template
from ._templates import get_template

__all__ = ["PAIR_QUANTITIES", "pair_templates", "run_pairs"]

PAIR_QUANTITIES = ("p_a", "p_a_given_b1", "p_a_given_b0", "p_b", "p_b_given_a1", "p_b_given_a0")


def run_pairs(
    pairs: Any,
    client: Client,
    *,
    variants: Sequence[str] = ("baseline",),
    reverse: bool = True,
    repetitions: int = 1,
    options: RunOptions | None = None,
    **overrides: Any,
) -> ElicitationResult:
    """Elicit conditional forecasts for question pairs; return the pairs table.

    Each question pair is asked P(A), P(A | B) and P(A | not B) (and the reverse
    direction with ``reverse``), under each prompt variant, through the response cache;
    the table is the one :func:`coherence.conditional_forecasting` reads.

    Parameters
    ----------
    pairs : pandas.DataFrame
        One row per pair: ``pair`` (id), ``question_a``, ``question_b``,
        optional ``category``, ``a_outcome``, ``b_outcome`` (copied).
    client : Client
        As for :func:`run`.
    variants : sequence of str
        Distinct conditional prompt variants: ``'baseline'``, ``'justify_first'``,
        ``'skeptical'`` (templates ``conditional_<variant>``; the last two
        add the study's quoted instruction, let the model reason, and read
        the answer lines that end the reply), or names of registered
        probability templates with the same placeholders (e.g.
        ``'conditional_skeptical_toolkit'``, the toolkit's paraphrase).
    reverse : bool
        Also elicit P(B), P(B | A resolved YES), P(B | A resolved NO) for
        the Bayes-consistency check.
    repetitions, options, **overrides
        As for :func:`run`.

    Returns
    -------
    ElicitationResult
        ``data``: one row per (pair, variant, repetition) with every
        quantity parsed: ``pair``, ``category``, ``variant``, ``repetition``,
        ``p_a``, ``p_a_given_b1``, ``p_a_given_b0`` (and ``p_b``,
        ``p_b_given_a1``, ``p_b_given_a0`` when ``reverse``), ``a_outcome``,
        ``b_outcome``. The unconditional forecast P(A) is asked under the
        same variant, as in the study: ``forecast_justify_first`` and
        ``forecast_skeptical`` show both questions with the variant's quoted
        instruction; the baseline (and any other variant) uses the plain
        ``forecast`` template, asked once per (pair, repetition) and shared.

    See Also
    --------
    run : elicit the belief/action table.
    coherence.conditional_forecasting : the test run on the pairs table.
    """
    owner = "run_pairs"
    opts = common_iv(client, repetitions=repetitions,
                     options=merge_options(options, overrides, owner), owner=owner)
    df = as_dataframe(pairs, name="pairs", owner=owner)
    _pairs_iv(df, variants, reverse, owner)
    _check_question_texts(df, owner)
    cond_templates, forecast_templates = pair_templates(variants)
    records = df.to_dict("records")
    jobs = _pair_jobs(client, records, cond_templates, forecast_templates, reverse, repetitions)
    done = execute(client, jobs, opts)
    data, n_total = _pairs_table(df, records, jobs, done.parses, variants,
                                 forecast_templates, reverse, repetitions)
    return make_result(data, done, client, n_total, "pair rows")


def _pairs_iv(df: pd.DataFrame, variants: Any, reverse: Any, owner: str) -> None:
    """The pairs table's columns, ids and truths, ``reverse`` and ``variants``, checked."""
    for col in ("pair", "question_a", "question_b"):
        if col not in df.columns:
            raise ValueError(param_error("pairs", owner, f"a table with a {col!r} column",
                                         list(df.columns)))
    check_copied_truths(df, (), ("a_outcome", "b_outcome"), owner)
    # a missing id was asked and kept as the pair NaN (as run refuses a missing context)
    no_missing(df, "pair", owner=owner)
    if not df["pair"].is_unique:
        raise ValueError(f"Column 'pair' (input to {owner}) must hold unique pair ids.")
    check_text_ids(df["pair"], "pair", owner)
    if not isinstance(reverse, bool):
        raise TypeError(param_error("reverse", owner, "a bool", reverse))
    if isinstance(variants, str) or not isinstance(variants, Sequence) or not variants:
        raise TypeError(param_error("variants", owner, "a non-empty sequence of variant names",
                                    variants))
    if not all(isinstance(v, str) for v in variants):
        raise TypeError(param_error("variants", owner, "a sequence of variant names (str)",
                                    variants))
    if len(set(variants)) != len(variants):
        repeated = sorted({v for v in variants if list(variants).count(v) > 1})
        raise ValueError(param_error("variants", owner, "distinct variant names (repeated: "
                                     f"{', '.join(map(repr, repeated))})", variants))
    if not len(df):
        raise ValueError(param_error("pairs", owner, "a table with at least one row",
                                     "an empty table"))


def _pairs_table(df: pd.DataFrame, records: list[dict[Any, Any]], jobs: list[Job],
                 parses: Sequence[Any], variants: Sequence[str],
                 forecast_templates: dict[str, Template], reverse: bool,
                 repetitions: int) -> tuple[pd.DataFrame, int]:
    """One row per pair, variant and repetition whose every quantity was read, and the
    number of rows asked for."""
    values: dict[tuple[Any, str, int, str], float] = {}
    for job, parsed in zip(jobs, parses, strict=True):
        if parsed is not None and parsed.ok:
            req = job.request
            values[(req.context, req.prompt, req.repetition, req.quantity)] = float(
                parsed.values[req.labels[-1]])
    quantities = PAIR_QUANTITIES if reverse else PAIR_QUANTITIES[:3]
    passthrough = [c for c in ("category", "a_outcome", "b_outcome") if c in df.columns]
    out_rows = []
    n_total = 0
    for row in records:
        for v in variants:
            for rep in range(repetitions):
                n_total += 1
                got = {}
                for qty in quantities:
                    prompt = forecast_templates[v].name if qty in ("p_a", "p_b") else v
                    got[qty] = values.get((row["pair"], prompt, rep, qty))
                if any(x is None for x in got.values()):
                    continue
                out_rows.append({"pair": row["pair"], "variant": v, "repetition": rep,
                                 **got, **{c: row[c] for c in passthrough}})
    data = pd.DataFrame(out_rows, columns=["pair", "variant", "repetition", *quantities,
                                           *passthrough])
    data["pair"] = data["pair"].astype(df["pair"].dtype)
    data["variant"] = pd.Categorical(data["variant"], categories=list(variants))
    data["repetition"] = data["repetition"].astype(np.int64)
    for qty in quantities:
        data[qty] = data[qty].astype(np.float64)
    for c in passthrough:
        data[c] = data[c].astype(df[c].dtype)
    if "category" in data.columns:
        data = data[["pair", "category", *[c for c in data.columns if c not in ("pair",
                                                                               "category")]]]
    return data, n_total

def _check_question_texts(df: pd.DataFrame, owner: str) -> None:
    """Both question columns hold non-empty text in every row."""
    for col in ("question_a", "question_b"):
        texts = df[col]
        bad = ~texts.map(lambda v: isinstance(v, str) and bool(v.strip())).to_numpy(dtype=bool)
        if bad.any():
            raise ValueError(f"Column {col!r} (input to {owner}) must hold non-empty text in "
                             f"every row; {int(bad.sum())} rows do not (first: index "
                             f"{texts.index[bad].tolist()[:5]}).")


def pair_templates(variants: Sequence[str]) -> tuple[dict[str, Template], dict[str, Template]]:
    """Per variant, its conditional template and the template of its P(A)."""
    cond_templates = {}
    forecast_templates = {}
    for v in variants:
        name = f"conditional_{v}" if v in CONDITIONAL_VARIANTS else v
        cond_templates[v] = get_template(name)
        # P(A) is asked under the same variant (the study's design); the baseline,
        # the toolkit paraphrases and custom variants share the plain forecast
        published = v in CONDITIONAL_VARIANTS and v != "baseline"
        forecast_templates[v] = get_template(f"forecast_{v}" if published else "forecast")
    return cond_templates, forecast_templates


def _pair_jobs(client: Client, records: list[dict[Any, Any]],
               cond_templates: dict[str, Template], forecast_templates: dict[str, Template],
               reverse: bool, repetitions: int) -> list[Job]:
    """Per pair, repetition and direction: each distinct forecast template once, then each
    variant's conditional given YES and given NO."""
    settings = settings_json(client)
    directions = [("a", "b")] + ([("b", "a")] if reverse else [])
    jobs: list[Job] = []
    unique_forecasts = {t.name: t for t in forecast_templates.values()}
    for row in records:
        base = {k: v for k, v in row.items() if isinstance(k, str) and k not in HIDDEN}
        for rep in range(repetitions):
            for target, cond in directions:
                q_t, q_c = row[f"question_{target}"], row[f"question_{cond}"]
                for f in unique_forecasts.values():
                    jobs.append(make_job(client, settings, f,
                                         {**base, "question": q_t, "condition_question": q_c},
                                         context=row["pair"], prompt=f.name, repetition=rep,
                                         quantity=f"p_{target}"))
                for v, t in cond_templates.items():
                    for outcome, word in ((1, "YES"), (0, "NO")):
                        fields = {**base, "question": q_t, "condition_question": q_c,
                                  "condition_outcome": word}
                        jobs.append(make_job(client, settings, t, fields,
                                             context=row["pair"], prompt=v, repetition=rep,
                                             quantity=f"p_{target}_given_{cond}{outcome}"))
    return jobs
