"""The registry of tests the report runs: for each, what it needs and how it is
called on one cell.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from .._results import CoherenceResult

__all__ = [
    "MENU_COLUMN",
    "REGISTRY",
    "TEST_NAMES",
    "Options",
    "Spec",
    "StudyColumns",
]



# --------------------------------------------------------------------------- test registry
#: Draws of the permutation p-values of the ci and leakage tests, and of every other
#: resampling, when ``n_resamples`` is not given.
DEFAULT_PERMUTATIONS, DEFAULT_RESAMPLES = 1000, 500
#: The column whose presence adds the IIA test: the offered actions joined by "|".
MENU_COLUMN = "menu"


@dataclass(frozen=True, slots=True)
class StudyColumns:
    """The study table's column names, as :func:`report` takes them."""

    belief: str
    action: str
    outcome: str
    group: str
    prompt: str | None
    repetition: str | None
    truth: str | None


@dataclass(frozen=True, slots=True)
class Options(StudyColumns):
    """The checked columns (optional ones None where absent) and settings of a report."""

    evidence: tuple[str, ...]
    k: int | str
    n_resamples: int
    n_permutations: int
    n_splits: int
    engine: str
    n_bins: int
    confidence_level: float
    reference_prompt: str
    #: False in the report's second stage (more draws for a p-value at its floor): the
    #: conditional-independence tests then skip their interval, kept from the first stage
    interval: bool = True


@dataclass(frozen=True, slots=True)
class Spec:
    name: str
    label: str
    applies: Callable[[pd.DataFrame, Options], bool]
    run: Callable[[pd.DataFrame, Options, np.random.Generator], CoherenceResult]
    #: heading of the result's detail ``table`` in the HTML report ("" = not shown)
    detail: str = ""


def _standard_rows(df: pd.DataFrame, o: Options, *, every_menu: bool = False) -> pd.DataFrame:
    """The rows the decision tests use: those of the reference prompt when a prompt
    column exists, and of the full menu when a ``menu`` column exists (a reduced menu
    changes the choice shares wherever IIA fails, so pooling menus would test a mixture;
    the menus are compared by the IIA test, which keeps them all: ``every_menu``)."""
    rows = df
    if o.prompt is not None and o.prompt in df.columns:
        rows = df[df[o.prompt].astype(str) == o.reference_prompt]
        if len(rows) == 0:  # never pool every prompt in place of the reference one
            raise ValueError(f"no row of this cell has {o.prompt} = {o.reference_prompt!r} "
                             "(the reference_prompt the decision tests run on)")
    if MENU_COLUMN in rows.columns and not every_menu:
        rows = _full_menu_rows(rows, "the decision tests run on")
    return rows


def _full_menu_rows(rows: pd.DataFrame, users: str) -> pd.DataFrame:
    """The rows offered the full menu (every action of the ``menu`` column); ``users``
    completes the error's sentence when no row offers it."""
    from .._decision._iia import parse_menus

    menus = parse_menus(rows, MENU_COLUMN, owner="report")
    full = frozenset().union(*menus)
    keep = np.fromiter((m == full for m in menus), dtype=bool, count=len(menus))
    if not keep.any():
        raise ValueError(f"no row of this cell offers the full menu "
                         f"({'|'.join(sorted(full))!r}, every action of its "
                         f"{MENU_COLUMN!r} column), which {users}")
    return rows[keep]


def _decision_columns(o: Options, *, evidence: bool) -> dict[str, Any]:
    """The column options the decision-sufficiency tests (``ci_test``, ``leakage_test``)
    take from the report, the evidence columns only where the variant conditions on them."""
    return {"belief": o.belief, "action": o.action, "outcome": o.outcome,
            "evidence": o.evidence if evidence else (), "group": o.group}


def _draws(o: Options, rng: np.random.Generator) -> dict[str, Any]:
    """The resampling options the registry's entries forward from the report."""
    return {"n_resamples": o.n_resamples, "confidence_level": o.confidence_level, "rng": rng}


def _ci(
    df: pd.DataFrame,
    o: Options,
    rng: np.random.Generator,
    *,
    evidence: bool = False,
    calibrate: bool = False,
) -> CoherenceResult:
    from .._decision._citest import ci_test

    return ci_test(
        _standard_rows(df, o),
        **_decision_columns(o, evidence=evidence),
        k=o.k,
        n_resamples=o.n_permutations,
        confidence_level=o.confidence_level,
        calibrate=calibrate,
        rng=rng,
        ci_method="debiased" if o.interval else None,
    )


def _leak(
    df: pd.DataFrame, o: Options, rng: np.random.Generator, *, evidence: bool = False
) -> CoherenceResult:
    from .._decision._leakage import leakage_test

    return leakage_test(
        _standard_rows(df, o),
        **_decision_columns(o, evidence=evidence),
        n_splits=o.n_splits,
        engine=o.engine,  # type: ignore[arg-type]  # checked in _report_iv
        n_permutations=o.n_permutations,
        **_draws(o, rng),
    )


def _mono(df: pd.DataFrame, o: Options, rng: np.random.Generator) -> CoherenceResult:
    from .._decision._monotone import monotonicity_test

    return monotonicity_test(
        _standard_rows(df, o),
        belief=o.belief,
        action=o.action,
        group=o.group,  # the paper's 5 bins (report's n_bins is the calibration's)
        # the most draws: the localised test stops early (Besag-Clifford) when far from
        # significance, and the report resolves a p-value at its floor (_resolve.py)
        n_resamples=o.n_resamples,
        rng=rng,
    )


def _iia(df: pd.DataFrame, o: Options, rng: np.random.Generator) -> CoherenceResult:
    from .._decision._iia import iia_test

    return iia_test(
        _standard_rows(df, o, every_menu=True),
        belief=o.belief,
        action=o.action,
        menu=MENU_COLUMN,
        group=o.group,
        **_draws(o, rng),
    )


def _consistency(df: pd.DataFrame, o: Options, rng: np.random.Generator) -> CoherenceResult:
    from .._decision._consistency import prompt_consistency

    assert o.prompt is not None  # guarded by applies
    if MENU_COLUMN in df.columns:
        # a menu study elicits every menu of a context, its repetitions numbered within
        # each menu: the prompts are compared on the full menu's rows, as the decision
        # tests read them (pooling the menus would repeat each repetition's label)
        df = _full_menu_rows(df, "prompt_consistency runs on")
    return prompt_consistency(
        df,
        belief=o.belief,
        prompt=o.prompt,
        group=o.group,
        repetition=o.repetition or "repetition",
        reference=o.reference_prompt,
        truth=o.truth if o.truth in df.columns else None,
        **_draws(o, rng),
    )


def _lie_placeholder(df: pd.DataFrame, o: Options, rng: np.random.Generator) -> CoherenceResult:
    raise AssertionError("the LIE check runs on the `lie` table")  # pragma: no cover


def _context_forecasts(df: pd.DataFrame, o: Options) -> pd.DataFrame:
    """One forecast per context: the repetition-averaged belief (``probability``), the
    ``outcome`` and the context (``question``), on the reference prompt's rows; an
    outcome that varies within a context is an error (the cell's), not its first row's."""
    from .._validation import same_within

    rows = _standard_rows(df, o)
    same_within(rows, rows[o.outcome].to_numpy(dtype=object), o.group, o.outcome,
                owner="report (the calibration cells: one forecast and outcome per context)")
    per_context = rows.groupby(o.group, sort=True, observed=True).agg(
        probability=(o.belief, "mean"), outcome=(o.outcome, "first")
    )
    return per_context.reset_index().rename(columns={o.group: "question"})


def _calibration(df: pd.DataFrame, o: Options, rng: np.random.Generator) -> CoherenceResult:
    """Brier score, reliability and ECE of the repetition-averaged belief per context."""
    from .._scoring._forecast import forecast_scores

    table = _context_forecasts(df, o)
    table["model"] = "agent"
    return forecast_scores(
        table,
        by="model",
        timestamp=None,
        n_bins=o.n_bins,
        **_draws(o, rng),
    )


def _calibration_error(df: pd.DataFrame, o: Options, rng: np.random.Generator) -> CoherenceResult:
    """Debiased squared l2 calibration error (``n_bins`` equal-mass bins) of the
    context-mean belief, with its interval over contexts."""
    from .._scoring._calibration import calibration_error

    return calibration_error(
        _context_forecasts(df, o),
        n_bins=o.n_bins,
        **_draws(o, rng),
    )


def _smooth_ece(df: pd.DataFrame, o: Options, rng: np.random.Generator) -> CoherenceResult:
    """SmoothECE of the context-mean belief (no band: the report draws no diagram of it)."""
    from .._scoring._calibration import smooth_ece

    return smooth_ece(
        _context_forecasts(df, o), n_resamples=0, confidence_level=o.confidence_level, rng=rng
    )


def _has_outcome(df: pd.DataFrame, o: Options) -> bool:
    return o.outcome in df.columns


def _has_actions(df: pd.DataFrame, o: Options) -> bool:
    return o.action in df.columns and o.outcome in df.columns


def _has_evidence(df: pd.DataFrame, o: Options) -> bool:
    return _has_actions(df, o) and bool(o.evidence)


def _has_menus(df: pd.DataFrame, o: Options) -> bool:
    return o.action in df.columns and MENU_COLUMN in df.columns


def _has_prompts(df: pd.DataFrame, o: Options) -> bool:
    return (
        o.prompt is not None
        and o.prompt in df.columns
        and df[o.prompt].nunique() > 1
        and o.repetition is not None
        and o.repetition in df.columns
    )


REGISTRY: tuple[Spec, ...] = (
    Spec(
        "ci",
        "is the action independent of the outcome given the stated belief? statistic: "
        "kNN estimate of I(action; outcome | belief) in nats; p: conditional permutation",
        _has_actions,
        _ci,
    ),
    Spec(
        "ci_evidence",
        "the same, conditioning also on the evidence columns",
        _has_evidence,
        lambda d, o, r: _ci(d, o, r, evidence=True),
    ),
    Spec(
        "ci_calibrated",
        "the same, with the belief replaced by its cross-fitted isotonic calibration",
        _has_actions,
        lambda d, o, r: _ci(d, o, r, calibrate=True),
    ),
    Spec(
        "leakage",
        "does knowing the outcome help predict the action beyond the belief? statistic: % "
        "reduction in out-of-fold log-loss; p: outcomes permuted among contexts matched on "
        "belief (and evidence)",
        _has_actions,
        _leak,
    ),
    Spec(
        "leakage_evidence",
        "the same, both classifiers also seeing the evidence columns",
        _has_evidence,
        lambda d, o, r: _leak(d, o, r, evidence=True),
    ),
    Spec(
        "monotonicity",
        "is the share of each action pair monotone in the belief? statistic: % of "
        "bin pairs with a significant violation (the paper's); p: largest localised fall, "
        "max-T over adjacent belief windows",
        _has_actions,
        _mono,
        detail="per action pair",
    ),
    Spec(
        "prompt_consistency",
        "does the belief move when only the wording changes? statistic: largest RMSE "
        "between prompt variants; p: cluster bootstrap-t, min-p of shift and disagreement "
        "(max over variants)",
        _has_prompts,
        _consistency,
        detail="per prompt variant",
    ),
    Spec(
        "calibration",
        "how good are the beliefs as forecasts? statistic: Brier score of the "
        "context-mean belief (descriptive, no p-value); reliability diagram below",
        _has_outcome,
        _calibration,
    ),
    Spec(
        "lie",
        "law of iterated expectation: is the agent's error in P(y|x) = sum_z P(y|x,z) P(z|x) "
        "larger than a baseline's? statistic: median error ratio; p: sign test over contexts",
        lambda d, o: False,  # runs on the separate `lie` table, see _run_cell
        _lie_placeholder,
    ),
    # after "lie": each test's random stream is spawned by its position in this tuple,
    # so the tests above keep their results
    Spec(
        "calibration_error",
        "how far are the context-mean beliefs from calibrated? statistic: debiased squared "
        "l2 calibration error, equal-mass bins (n_bins; descriptive; bootstrap interval over "
        "contexts)",
        _has_outcome,
        _calibration_error,
    ),
    Spec(
        "smooth_ece",
        "the same, binning-free: SmoothECE of the context-mean belief (descriptive)",
        _has_outcome,
        _smooth_ece,
    ),
    Spec(
        "iia",
        "are the odds between two actions the same whatever else is on the menu (IIA)? "
        "statistic: share of (pair x reduced menu) comparisons flagged; p: context sign-flip "
        "max-T over the comparisons (only with a 'menu' column)",
        _has_menus,
        _iia,
        detail="per comparison",
    ),
)

#: Names accepted by ``report(tests=...)``.
TEST_NAMES: tuple[str, ...] = tuple(s.name for s in REGISTRY)
