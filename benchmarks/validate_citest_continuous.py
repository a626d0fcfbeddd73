"""Validation of :func:`coherence.ci_test` with continuous (float) evidence: size and power.

The main matrix (``validate_citest``) has discrete evidence only. Here a measured
quantity (an age, a price) moves both the outcome and the action, so conditioning on
it matters, and the null holds given (belief, evidence). Designs: evidence constant
within a context or drawn per row, heaped or continuous beliefs, beliefs that see the
evidence or miss it, context shocks, small and large studies. Every cell runs the
defaults a user gets (``n_resamples`` lowered, ``ci_method=None``: the p-value only)
and, on the same studies, the simplest valid competitor
(:mod:`benchmarks.citest_competitor`: outcomes permuted among the contexts of one
stratum of belief bin x evidence bin, a chi-square summed over strata) at two bin
counts::

    python -m benchmarks.validate_citest_continuous --reps 400 --jobs 2
    python -m benchmarks.validate_citest_continuous --test-statistic plugin \
        --out benchmarks/results/validate_citest_continuous_plugin.json
    python -m benchmarks.validate_citest_continuous --test-statistic knn \
        --out benchmarks/results/validate_citest_continuous_knn.json
    python -m benchmarks.validate_citest_continuous --tables
"""

from __future__ import annotations

import dataclasses
import itertools
import sys
import warnings
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from scipy import special

from benchmarks._designs import DesignBase
from benchmarks._harness import appended_note
from benchmarks._harness import format_rate
from benchmarks._harness import generated_by
from benchmarks._harness import map_jobs
from benchmarks._harness import markdown_table
from benchmarks._harness import matrix_parser
from benchmarks._harness import one_thread
from benchmarks._harness import rejection_rate
from benchmarks._harness import run_matrix
from benchmarks._harness import write_tables

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "validate_citest_continuous.json"
DOC = ROOT / "docs" / "validation_ci.md"
ALPHA = 0.05


@dataclasses.dataclass(frozen=True)
class Design(DesignBase):
    """A study: ``n_contexts`` x ``repetitions`` rows, three actions.

    Each context has a latent logit; its outcome is Bernoulli of that logit plus
    ``ev_outcome`` times the context's mean evidence (a standard normal, per context or
    per row). The stated belief is the posterior of the latent logit plus
    ``sees`` x ``ev_outcome`` x the row's evidence and normal noise (sd ``noise``), on a
    ``grid`` (None: continuous). The action is an ordered logit of the belief, of
    ``ev_action`` x the evidence, of a context shock (sd ``shock_sd``, the same for all
    rows of a context, independent of the outcome) and of ``leak`` x the outcome (the
    alternative). Under ``leak = 0`` the action is independent of the outcome given
    (belief, evidence, context shock); the shock is unobserved, so it must not move the
    outcome: it does not. ``outcome_per_row``: each row draws its own outcome from its
    own evidence (with ``within``), so ci_test permutes actions, not outcomes.
    ``unequal``: each context has 1 to ``2 repetitions - 1`` rows (uniform).
    ``sites``: a nominal column ``site`` of that many levels per context, whose normal
    effects move the outcome and the action alike (the belief misses them), conditioned
    on with the continuous evidence. ``second``: a second continuous column
    ``evidence2`` (drawn as the first), which moves the outcome and the action by
    ``second`` times its value (the belief misses it), conditioned on too. ``ev_step``:
    the action moves by that much more where the evidence is above 0.5 SD (a step the
    smooth adjustment does not fit); ``interaction``: by that much times the evidence
    times ``2 (belief - 0.5)``. ``leak_flips``: the leak's sign is the sign of
    ``belief - 0.5`` (a leak that adds nothing over the whole study).
    """

    n_contexts: int = 200
    repetitions: int = 5
    within: bool = False
    grid: float | None = 0.05
    sees: float = 1.0
    ev_action: float = 1.5
    ev_outcome: float = 1.5
    noise: float = 0.3
    shock_sd: float = 0.0
    leak: float = 0.0
    scale: float = 40.0  # the evidence's unit (an age in years, say)
    outcome_per_row: bool = False
    unequal: bool = False
    sites: int = 0
    second: float = 0.0
    ev_step: float = 0.0
    interaction: float = 0.0
    leak_flips: bool = False


def generate(design: Design, seed: int) -> pd.DataFrame:
    rng = np.random.default_rng(seed)
    g = design.n_contexts
    # draws only a design that asks for them makes: the others keep their studies
    reps = (rng.integers(1, 2 * design.repetitions, g) if design.unequal
            else np.full(g, design.repetitions))
    site = rng.integers(0, design.sites, g) if design.sites else np.zeros(g, np.int64)
    site_effect = rng.normal(0.0, 1.0, design.sites)[site] if design.sites else np.zeros(g)
    n = int(reps.sum())
    groups = np.repeat(np.arange(g), reps)
    base = rng.normal(0.0, 1.0, g)
    e = rng.normal(0.0, 1.0, n) if design.within else np.repeat(rng.normal(0.0, 1.0, g), reps)
    e_ctx = np.bincount(groups, weights=e, minlength=g) / reps
    e2 = np.zeros(n)
    if design.second:
        e2 = (rng.normal(0.0, 1.0, n) if design.within
              else np.repeat(rng.normal(0.0, 1.0, g), reps))
    e2_ctx = design.second * np.bincount(groups, weights=e2, minlength=g) / reps
    y_ctx = rng.random(g) < 1.0 / (1.0 + np.exp(-(base + design.ev_outcome * e_ctx
                                                   + site_effect + e2_ctx)))
    y = y_ctx[groups].astype(np.int64)
    if design.outcome_per_row:
        y = (rng.random(n) < 1.0 / (1.0 + np.exp(-(base[groups] + design.ev_outcome * e))
                                    )).astype(np.int64)
    logit = (base[groups] + design.sees * design.ev_outcome * e
             + rng.normal(0.0, design.noise, n))
    p = 1.0 / (1.0 + np.exp(-logit))
    if design.grid is not None:
        p = np.round(p / design.grid) * design.grid
    p = np.clip(p, 0.0, 1.0)
    shock = np.repeat(rng.normal(0.0, design.shock_sd, g), reps) if design.shock_sd else 0.0
    sign = np.where(p >= 0.5, 1.0, -1.0) if design.leak_flips else 1.0
    u = (2.0 * (p - 0.5) + design.ev_action * e + shock + design.leak * sign * (y - 0.5)
         + rng.logistic(0.0, 0.5, n) + site_effect[groups] + design.second * e2
         + design.ev_step * (e > 0.5) + design.interaction * e * 2.0 * (p - 0.5))
    action = np.where(u > 0.5, 2, np.where(u > -0.5, 1, 0))
    out = pd.DataFrame({"context": groups, "belief": p, "action": action, "outcome": y,
                        "evidence": 50.0 + design.scale * e})
    if design.sites:
        out["site"] = np.array([f"site {k}" for k in range(design.sites)])[site[groups]]
    if design.second:
        out["evidence2"] = 10.0 + 3.0 * e2
    return out


def evidence_columns(design: Design) -> list[str]:
    """The columns ci_test conditions on besides the belief."""
    return ["evidence", *(["site"] if design.sites else []),
            *(["evidence2"] if design.second else [])]


def _normal_nodes(n: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss-Hermite nodes and weights of the standard normal (weights sum to 1)."""
    x, w = np.polynomial.hermite_e.hermegauss(n)
    return x, w / w.sum()


def exact_cmi(design: Design, n_nodes: int = 96) -> float:
    """Exact I(action; outcome | belief, evidence) in nats of one row drawn at random.

    For continuous beliefs (``grid=None``) without ``sites`` or ``second``, and evidence
    per row only with the outcome per row. One row's joint involves only its own draws:
    with ``t = logit(belief) - sees * ev_outcome * e = base + noise``, the context's
    ``base`` given ``t`` is normal, so P(outcome | belief, evidence) is a normal integral
    of the logistic; P(action | belief, evidence, outcome) is the ordered logit with the
    context shock integrated. (t, e) are integrated by Gauss-Hermite quadrature.
    """
    d = design
    if d.grid is not None or d.sites or d.second or (d.within and not d.outcome_per_row):
        raise ValueError("exact_cmi needs grid=None, no sites or second column, and "
                         "evidence per row only with the outcome per row")
    s2 = d.noise ** 2
    x, w = _normal_nodes(n_nodes)
    t, e = np.meshgrid(np.sqrt(1.0 + s2) * x, x, indexing="ij")  # t ~ N(0, 1 + s2)
    p = special.expit(t + d.sees * d.ev_outcome * e)
    xb, wb = _normal_nodes(40)  # base | t ~ N(t / (1 + s2), s2 / (1 + s2))
    mu = t / (1.0 + s2) + d.ev_outcome * e
    pi1 = special.expit(mu[..., None] + np.sqrt(s2 / (1.0 + s2)) * xb) @ wb
    sign = np.where(p >= 0.5, 1.0, -1.0) if d.leak_flips else np.ones_like(p)
    m0 = (2.0 * (p - 0.5) + d.ev_action * e + d.ev_step * (e > 0.5)
          + d.interaction * e * 2.0 * (p - 0.5))
    xs, ws = _normal_nodes(24) if d.shock_sd else (np.zeros(1), np.ones(1))

    def actions(y: float) -> np.ndarray:  # P(action | belief, evidence, y): (..., 3)
        m = (m0 + d.leak * sign * (y - 0.5))[..., None] + d.shock_sd * xs
        low = special.expit((-0.5 - m) / 0.5)
        high = 1.0 - special.expit((0.5 - m) / 0.5)
        return np.stack([low, 1.0 - low - high, high], axis=-1).transpose(0, 1, 3, 2) @ ws

    a1, a0 = actions(1.0), actions(0.0)
    # the joint P(y, action | belief, evidence): a cell of positive mass has pa >= j > 0,
    # so no 0 * inf enters (an outcome of probability 0 beside an action it never takes
    # made NaN with OpenBLAS's Sandybridge kernels)
    j1, j0 = pi1[..., None] * a1, (1.0 - pi1[..., None]) * a0
    pa = j1 + j0
    with np.errstate(divide="ignore", invalid="ignore"):
        kl = (np.where(j1 > 0, j1 * np.log(a1 / pa), 0.0)
              + np.where(j0 > 0, j0 * np.log(a0 / pa), 0.0)).sum(-1)
    return float(np.sum(np.outer(w, w) * kl))


def leak_for(design: Design, target: float) -> float:
    """The leak at which :func:`exact_cmi` is ``target`` nats (bisection)."""
    lo, hi = 0.0, 10.0
    for _ in range(50):
        mid = (lo + hi) / 2.0
        lo, hi = (mid, hi) if exact_cmi(design.with_(leak=mid)) < target else (lo, mid)
    return (lo + hi) / 2.0


REF = Design()
NULLS: dict[str, Design] = {
    "evidence per context, 0.05 grid, 200 x 5": REF,
    "evidence per row, 0.05 grid, 200 x 5": REF.with_(within=True),
    "continuous beliefs that miss the evidence, strong effects": REF.with_(
        grid=None, sees=0.0, ev_action=3.0, ev_outcome=2.0),
    "evidence per row, continuous beliefs that miss it": REF.with_(
        within=True, grid=None, sees=0.0, ev_action=3.0, ev_outcome=2.0),
    "context shocks, evidence per context": REF.with_(shock_sd=1.0),
    "small study: 40 x 3": REF.with_(n_contexts=40, repetitions=3),
    "one row per context: 1000 x 1": REF.with_(n_contexts=1000, repetitions=1, grid=0.01),
    "outcome and evidence per row, beliefs that miss it (actions permuted)": REF.with_(
        within=True, outcome_per_row=True, grid=0.01, sees=0.0, ev_action=3.0,
        ev_outcome=2.0),
    # two designs written after the plug-in statistic's strata and weights were chosen
    "held out: evidence per row, 150 x 6, 0.01 grid, half-seen evidence, shocks": REF.with_(
        within=True, n_contexts=150, repetitions=6, grid=0.01, sees=0.5, ev_action=2.0,
        ev_outcome=2.5, noise=0.5, shock_sd=0.5),
    "held out: evidence per row, 300 x 3, continuous beliefs that miss it": REF.with_(
        within=True, n_contexts=300, repetitions=3, grid=None, sees=0.0, ev_action=2.0,
        ev_outcome=3.0, noise=0.2),
    "unequal repetitions (1-9 rows), evidence per row": REF.with_(within=True, unequal=True),
    "nominal site (4 levels) with continuous evidence": REF.with_(sites=4),
    # three designs written after the regression-adjusted statistic was chosen; the third
    # made its basis take the cross terms (0.158 before, in a pilot of 400), so a fourth
    # was written after that
    "held out: a step in the evidence's effect on the action, beliefs that half see it":
        REF.with_(ev_step=2.0, sees=0.5, grid=0.01),
    "held out: belief x evidence interaction in the action, 0.1 grid, evidence per row, "
    "unequal repetitions": REF.with_(interaction=2.0, grid=0.1, within=True, unequal=True),
    "two continuous evidence columns, beliefs that miss the second": REF.with_(second=1.5),
    "held out: two continuous evidence columns per row, continuous beliefs that miss both":
        REF.with_(second=2.0, within=True, grid=None, sees=0.0, ev_action=2.5,
                  ev_outcome=2.0),
}
POWER: dict[str, Design] = {
    "leak 1.0, evidence per context": REF.with_(leak=1.0),
    "leak 1.0, evidence per row": REF.with_(leak=1.0, within=True),
    "leak 1.5, continuous beliefs that miss the evidence": REF.with_(
        leak=1.5, grid=None, sees=0.0, ev_action=3.0, ev_outcome=2.0),
    "leak 0.5, evidence per context": REF.with_(leak=0.5),
    "leak 0.75, continuous beliefs that miss the evidence": REF.with_(
        leak=0.75, grid=None, sees=0.0, ev_action=3.0, ev_outcome=2.0),
    "leak 0.5, evidence per row": REF.with_(leak=0.5, within=True),
    "leak 0.5, continuous beliefs that miss the evidence": REF.with_(
        leak=0.5, grid=None, sees=0.0, ev_action=3.0, ev_outcome=2.0),
    "leak 0.75, outcome and evidence per row (actions permuted)": REF.with_(
        leak=0.75, within=True, outcome_per_row=True, grid=0.01, sees=0.0, ev_action=3.0,
        ev_outcome=2.0),
    "leak 0.5, nominal site with continuous evidence": REF.with_(leak=0.5, sites=4),
    "leak 1.0 whose sign flips with the belief, evidence per context": REF.with_(
        leak=1.0, leak_flips=True),
    "leak 0.5, two continuous evidence columns": REF.with_(leak=0.5, second=1.5),
}
#: the cells in the order they were added to the matrix: cell i's studies are seeded
#: from 10,000 (i + 1), so a cell added later never changes an earlier cell's studies
_BATCHES = ((7, 5), (10, 8), (12, 9), (16, 11))  # (nulls, power cells) after each addition
ORDER = [*list(NULLS)[:7], *list(POWER)[:5]]
for (old_n, old_p), (new_n, new_p) in itertools.pairwise(_BATCHES):
    ORDER += [*list(NULLS)[old_n:new_n], *list(POWER)[old_p:new_p]]


#: the competitor's (belief bins, evidence bins): 20 and 40 strata of the contexts
COMPETITOR_BINS = ((5, 4), (5, 8))


def _competitor_applies(settings: dict[str, Any]) -> bool:
    """The competitor moves whole contexts' outcomes and bins one evidence column."""
    return not (settings.get("outcome_per_row") or settings.get("sites")
                or settings.get("second"))


def _pvalue(args: tuple[Design, int, int, str]) -> list[float]:
    """ci_test's p-value, then the competitor's at each of :data:`COMPETITOR_BINS`."""
    import coherence
    from benchmarks.citest_competitor import strata_permutation_pvalue

    design, seed, n_resamples, test_statistic = args
    data = generate(design, seed)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = coherence.ci_test(data, evidence=evidence_columns(design), group="context",
                                n_resamples=n_resamples, ci_method=None, rng=seed,
                                test_statistic=test_statistic)
    if not _competitor_applies(dataclasses.asdict(design)):
        return [float(res.pvalue), *(np.nan for _ in COMPETITOR_BINS)]
    return [float(res.pvalue), *(
        strata_permutation_pvalue(data, n_resamples=n_resamples, bins=b, rng=seed,
                                  evidence="evidence", evidence_bins=e)
        for b, e in COMPETITOR_BINS)]


def _cell(name: str, design: Design, reps: int, n_resamples: int, jobs: int,
          test_statistic: str) -> dict[str, Any]:
    import time

    start = time.perf_counter()
    work = [(design, 10_000 * (ORDER.index(name) + 1) + s, n_resamples, test_statistic)
            for s in range(reps)]
    if jobs > 1:
        with ProcessPoolExecutor(jobs, initializer=one_thread) as pool:
            p = map_jobs(_pvalue, work, pool)
    else:
        p = map_jobs(_pvalue, work, None)
    ok = np.isfinite(p[:, 0])
    return {"design": name, "settings": dataclasses.asdict(design), "reps": reps,
            "test_statistic": test_statistic,
            "rejection": rejection_rate(p[ok, 0] <= ALPHA), "n_nan_pvalue": int(np.sum(~ok)),
            "competitor": {f"{b}x{e}": rejection_rate(p[:, j + 1] <= ALPHA)
                           for j, (b, e) in enumerate(COMPETITOR_BINS)
                           if np.all(np.isfinite(p[:, j + 1]))},
            "seconds": time.perf_counter() - start}


#: the same studies with the plug-in statistic alone (the default before the
#: combination; its first 21 cells run at commit ea1c944, the later ones at a38df3e)
PLUGIN = ROOT / "benchmarks" / "results" / "validate_citest_continuous_plugin.json"
#: the same studies with the kNN estimate as the statistic (the default before the
#: plug-in one took continuous evidence; commit 5315ad4)
KNN = ROOT / "benchmarks" / "results" / "validate_citest_continuous_knn.json"


def _rates(results: dict[str, Any] | None, part: str) -> dict[str, Any]:
    return {r["design"]: r for r in (results or {}).get(part, [])}


def tables(results: dict[str, Any], plugin: dict[str, Any] | None = None,
           knn: dict[str, Any] | None = None) -> str:
    env = results["environment"]
    bins = " and ".join(f"{b} x {e}" for b, e in COMPETITOR_BINS)
    first = ("" if knn is None else f" (the first {knn['settings']['reps']} studies of a "
             f"null, {knn['settings']['power_reps']} of a power cell)")
    lines = [generated_by("validate_citest_continuous", env)
             + f", {results['settings']['n_resamples']} permutations). *ci_test*: the "
             "defaults (`test_statistic='auto'`: the smaller p-value of the plug-in and the "
             "regression-adjusted statistics); *plug-in statistic*: the same studies with "
             "`test_statistic='plugin'`, the default before "
             "(`validate_citest_continuous_plugin.json`); *kNN statistic*: the same studies "
             "with `test_statistic='knn'`, the default before that "
             f"(`validate_citest_continuous_knn.json`){first}; *competitor*: the simplest "
             "valid competitor (`benchmarks/citest_competitor.py`) on the same studies, "
             "outcomes permuted among the contexts of one stratum of (belief bin, evidence "
             f"bin), {bins} quantile bins of the context means (it moves whole contexts' "
             "outcomes and bins one evidence column, so it does not apply where the outcome "
             "varies within a context or a nominal or second column is conditioned on too)."
             + appended_note(results), ""]
    for part, title in (("size", "Size with continuous evidence (alpha 0.05)"),
                        ("power", "Power with continuous evidence")):
        others = (_rates(plugin, part), _rates(knn, part))
        rows = []
        for r in results.get(part, []):
            name = r["design"]
            comp = r.get("competitor", {})
            rows.append((name, r["reps"], format_rate(r["rejection"]),
                         *(format_rate(other[name]["rejection"]) if name in other
                           else "not run" for other in others),
                         *(format_rate(comp[f"{b}x{e}"]) if f"{b}x{e}" in comp
                           else "not run" if _competitor_applies(r["settings"])
                           else "does not apply" for b, e in COMPETITOR_BINS), r["n_nan_pvalue"]))
        if rows:
            head = ("design", "studies", "ci_test [95% CI]", "plug-in statistic",
                    "kNN statistic", *(f"competitor {b} x {e}" for b, e in COMPETITOR_BINS),
                    "NaN p-values")
            lines += [f"### {title}", "", *markdown_table(head, rows), ""]
    return "\n".join(lines).rstrip("\n")


def main(argv: list[str] | None = None) -> int:
    parser = matrix_parser(__doc__, results=RESULTS, page="docs/validation_ci.md",
                           n_resamples=99, reps=400, power_reps=200)
    parser.add_argument("--jobs", type=int, default=2)
    parser.add_argument("--test-statistic", default="auto",
                        choices=("auto", "plugin", "regression", "combined", "knn"))
    args = parser.parse_args(argv)
    if args.tables:
        import json

        def load(path: Path) -> dict[str, Any] | None:
            return json.loads(path.read_text()) if path.exists() else None

        write_tables(DOC, "validate_citest_continuous.py",
                     tables(json.loads(args.out.read_text()), load(PLUGIN), load(KNN)))
        return 0
    plan = [*(("size", name, d, args.reps, args.n_resamples, args.jobs, args.test_statistic)
              for name, d in NULLS.items()),
            *(("power", name, d, args.power_reps, args.n_resamples, args.jobs,
               args.test_statistic) for name, d in POWER.items())]
    run_matrix(args, ALPHA, plan, _cell, ORDER)
    return 0


if __name__ == "__main__":
    sys.exit(main())
