"""Size, power and interval behaviour of the law-of-iterated-expectation check, by simulation.

Run from the repository root::

    nice -n 10 python -m benchmarks.validate_lie [--only size,power] [--jobs 4] \
        [--reps 400] [--n-studies 10] [--seed 0]
    python -m benchmarks.validate_lie --tables     # docs/validation_lie.md from the JSON

The cells are written to ``benchmarks/results/validate_lie.json`` (versions,
commit, machine); ``--tables`` writes the tables of docs/validation_lie.md from
it. Each cell has its own seed (``--seed`` and the cell's name), so a cell gives
the same numbers run alone, with others, or on another number of ``--jobs``.

Studies come from :func:`bayesnets.lie_study` (contexts of a Bayesian network,
reports of a simulated agent with Beta/Dirichlet report noise of standard
deviation 0.03 at 1/2); for each of ``--n-studies`` context sets, ``--reps / --n-studies``
pairs of independent report tables are drawn with :meth:`bayesnets.LIEStudy.redraw`
(``--reps`` tests per size and power cell in all, 400 by default):

* **size**: agent and baseline are the same agent (two redraws, exchangeable),
  so the sign test's null holds exactly and the population median ratio is 1;
  the rejection rate at alpha = 0.05 is the size;
* **coverage**: the same null (three agent and network designs), with ``--n-boot``
  bootstrap resamples: the share of intervals of the median ratio containing 1
  (``benchmarks/results/validate_lie_before.json`` holds the same cells run with the
  earlier plain percentile interval);
* **power**: the agent is the Prelec-weighted agent (gamma < 1), the baseline
  the rational agent with the same report noise, on the same contexts;
* **forest**: the default baseline (cross-validated random forest on a
  forward sample of 5000 rows), for the rational and the weighted agent, with
  and without report noise: the median ratio and p-value of each study.
"""

from __future__ import annotations

import sys
import time
import warnings
import zlib
from pathlib import Path
from typing import Any

import numpy as np

import bayesnets
from benchmarks._harness import appended_note
from benchmarks._harness import format_rate
from benchmarks._harness import generated_by
from benchmarks._harness import markdown_table
from benchmarks._harness import matrix_parser
from benchmarks._harness import one_thread
from benchmarks._harness import only_words
from benchmarks._harness import rejection_rate
from benchmarks._harness import start_results
from benchmarks._harness import store_cell
from benchmarks._harness import tables_if_asked
from coherence import Agent
from coherence import iterated_expectation_check
from coherence._intervals import ttest_pvalue
from coherence._probability._lie import context_pvalue

ROOT = Path(__file__).resolve().parents[1]
RESULTS = ROOT / "benchmarks" / "results" / "validate_lie.json"
BEFORE = RESULTS.with_name("validate_lie_before.json")
DOC = ROOT / "docs" / "validation_lie.md"
ALPHA = 0.05
NOISE = 0.03
GAMMAS = (0.9, 0.8, 0.7, 0.6, 0.5)


def _agent(name: str) -> Agent:
    """``rational`` or ``weighted <gamma>`` (Prelec weighting of every quantity)."""
    if name == "rational":
        return Agent.rational(grid=None)
    return Agent.rational(grid=None, weighting="prelec", gamma=float(name.split()[1]))


def paired(network: str, n_contexts: int, agent: Agent, baseline: Agent, n_studies: int,
           n_draws: int, rng: np.random.Generator, n_boot: int = 1,
           ) -> dict[str, np.ndarray]:
    """p-values (the check's and its competitors', :func:`competitor_pvalues`), median
    ratios and interval bounds over studies x draws."""
    p, med, low, high, exact_err, n_inf, other = [], [], [], [], [], [], []
    for _ in range(n_studies):
        study = bayesnets.lie_study(network, agent=agent, n_contexts=n_contexts,
                                    report_noise=NOISE, n_ground_truth=1, rng=rng)
        exact_err.append(float(study.truth["error"].median()))
        for _ in range(n_draws):
            a = study.redraw(rng=rng)
            b = study.redraw(agent=baseline, rng=rng)
            with warnings.catch_warnings():  # units with P(y|x) in {0, 1}: both errors 0
                warnings.simplefilter("ignore")
                res = iterated_expectation_check(a, baseline=b, n_resamples=n_boot, rng=rng)
            p.append(res.pvalue)
            other.append(competitor_pvalues(res.table))
            med.append(res.statistic)
            low.append(res.confidence_interval.low)
            high.append(res.confidence_interval.high)
            n_inf.append(res.n_informative)
    return {"p": np.array(p), "median": np.array(med), "low": np.array(low),
            "high": np.array(high), "exact_error": np.array(exact_err),
            "n_informative": np.array(n_inf), "competitors": np.array(other)}


#: the competitors of the sign test, on the same per-context differences (one-sided)
COMPETITORS = ("wilcoxon", "t")


def competitor_pvalues(table: Any) -> tuple[float, float]:
    """The Wilcoxon signed-rank test and the one-sample t-test, one-sided ('greater'), of
    the contexts' mean differences d_c of agent and baseline errors (the sign test's
    units: contexts with |d_c| < 1e-12 left out, as it leaves them)."""
    diff = table["agent_error"] - table["baseline_error"]
    d = diff.groupby(table["context"]).mean().to_numpy()
    return competitor_pvalues_of(d[np.abs(d) >= 1e-12])


def competitor_pvalues_of(d: np.ndarray) -> tuple[float, float]:
    """The two competitors' one-sided p-values of the differences ``d``."""
    from scipy import stats

    if d.size < 2:
        return (np.nan, np.nan)
    return (float(stats.wilcoxon(d, alternative="greater").pvalue),
            ttest_pvalue(d, "greater"))


#: the agent's context errors of the skewed nulls: a mean of three folded normals (three
#: auxiliary variables), one folded normal, a lognormal
SKEWED = ("mean of 3 folded standard normals", "folded standard normal", "lognormal, sdlog 1")


def _skewed_errors(shape: str, size: int, rng: np.random.Generator) -> np.ndarray:
    if shape == SKEWED[0]:
        return np.abs(rng.normal(size=(size, 3))).mean(axis=1)
    if shape == SKEWED[1]:
        return np.abs(rng.normal(size=size))
    return rng.lognormal(0.0, 1.0, size)


def skewed_null(shape: str, n_contexts: int, reps: int, rng: np.random.Generator
                ) -> dict[str, Any]:
    """A null of the sign test that is not exchangeable: the baseline's error is the same
    in every context (a fitted model's, steady) and equals the median of the agent's
    context errors, which are skewed to the right; so P(d_c > 0) = 1/2 exactly but the
    d_c are not symmetric. The three tests on the same d_c (one-sided, alpha 0.05)."""

    median = float(np.median(_skewed_errors(shape, 400_000, rng)))
    rejected = np.zeros((reps, 3), dtype=bool)
    for r in range(reps):
        d = _skewed_errors(shape, n_contexts, rng) - median
        rejected[r] = np.array([context_pvalue(d, "sign", "greater"),
                                *competitor_pvalues_of(d)]) <= ALPHA
    return {"reps": reps, "rejection": rejection_rate(rejected[:, 0]),
            "competitors": {name: rejection_rate(rejected[:, j + 1])
                            for j, name in enumerate(COMPETITORS)}}


def attained_level(n_informative: np.ndarray) -> float:
    """The mean over tests of the exact size at ``ALPHA`` of the one-sided sign test on
    each test's informative units: what a calibrated discrete test rejects under the
    null (below ``ALPHA`` because the binomial has no point at exactly ``ALPHA``)."""
    from scipy.stats import binom

    levels = []
    for n in n_informative:
        k = np.arange(n + 1)
        sf = binom.sf(k - 1, n, 0.5)  # P(K >= k)
        levels.append(float(sf[sf <= ALPHA].max()) if (sf <= ALPHA).any() else 0.0)
    return float(np.mean(levels))


def _quantiles(x: np.ndarray) -> list[float]:
    """The 5%, 50% and 95% quantiles."""
    return [float(q) for q in np.quantile(x, [0.05, 0.5, 0.95])]


def plan() -> list[tuple[str, str, dict[str, Any]]]:
    """The cells ``(part, design, settings)``, in the order of the docs' tables."""
    cells: list[tuple[str, str, dict[str, Any]]] = [
        ("size", f"{net} {agent} {n} contexts",
         {"network": net, "agent": agent, "baseline": agent, "n_contexts": n})
        for net in ("child", "asia") for agent in ("rational", "weighted 0.6")
        for n in (30, 100)]
    cells += [("coverage", f"interval {net} {agent} {n} contexts",
               {"network": net, "agent": agent, "baseline": agent, "n_contexts": n})
              for net, agent in (("child", "rational"), ("asia", "rational"),
                                 ("child", "weighted 0.6"))
              for n in (30, 100)]
    cells += [("coverage", f"interval {net} rational {n} contexts",
               {"network": net, "agent": "rational", "baseline": "rational", "n_contexts": n})
              for net, n in (("child", 10), ("asia", 300))]
    cells += [("power", f"child gamma {g} against rational {n} contexts",
               {"network": "child", "agent": f"weighted {g}", "baseline": "rational",
                "n_contexts": n}) for g in GAMMAS for n in (30, 100)]
    cells += [("skewed", f"skewed null: {shape}, {n} contexts", {"shape": shape, "n_contexts": n})
              for shape in SKEWED for n in (30, 100)]
    cells += [("forest", f"child {agent} report noise {noise}",
               {"network": "child", "agent": agent, "report_noise": noise, "n_contexts": 100})
              for agent in ("rational", "weighted 0.6") for noise in (0.0, NOISE)]
    return cells


def run_cell(part: str, design: str, settings: dict[str, Any], args: Any) -> dict[str, Any]:
    """One cell's row of the JSON (its seed: ``--seed`` and the design's name)."""
    one_thread()
    rng = np.random.default_rng([args.seed, zlib.crc32(design.encode())])
    t0 = time.perf_counter()
    row: dict[str, Any] = {"design": design, "settings": settings}
    if part == "forest":
        row.update(_forest(settings, args.n_forest, rng))
    elif part == "skewed":
        row.update(skewed_null(settings["shape"], settings["n_contexts"], 10 * args.reps, rng))
    else:
        coverage = part == "coverage"
        n_studies = max(1, args.n_coverage // 20) if coverage else args.n_studies
        n_draws = 20 if coverage else args.n_draws
        r = paired(settings["network"], settings["n_contexts"], _agent(settings["agent"]),
                   _agent(settings["baseline"]), n_studies, n_draws, rng,
                   n_boot=args.n_boot if coverage else 1)
        row.update(reps=len(r["p"]), rejection=rejection_rate(r["p"] <= ALPHA),
                   competitors={name: rejection_rate(r["competitors"][:, j] <= ALPHA)
                                for j, name in enumerate(COMPETITORS)},
                   median_ratio_quantiles=_quantiles(r["median"]),
                   exact_median_error=float(np.median(r["exact_error"])),
                   attained_level=attained_level(r["n_informative"]),
                   median_informative=float(np.median(r["n_informative"])))
        if coverage:
            row.update(coverage=rejection_rate((r["low"] <= 1.0) & (r["high"] >= 1.0)),
                       mean_width=float(np.mean(r["high"] - r["low"])),
                       n_boot=args.n_boot)
    row["seconds"] = time.perf_counter() - t0
    print(f"{part:9s} {design:40s} ({row['seconds']:.0f} s)", flush=True)
    return row


def _forest(settings: dict[str, Any], n_forest: int, rng: np.random.Generator
            ) -> dict[str, Any]:
    stats, ps, agent_err, forest_err = [], [], [], []
    agent = "rational" if settings["agent"] == "rational" else "weighted"
    for _ in range(n_forest):
        study = bayesnets.lie_study(settings["network"], agent=agent,
                                    n_contexts=settings["n_contexts"],
                                    report_noise=settings["report_noise"], rng=rng)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            res = iterated_expectation_check(
                study.data, ground_truth=study.ground_truth, contexts=study.contexts,
                evidence=list(study.evidence), n_resamples=999,
                baseline_options={"n_estimators": 100}, rng=rng)
        stats.append(float(res.statistic))
        ps.append(float(res.pvalue))
        agent_err.append(res.median_agent_error)
        forest_err.append(res.median_baseline_error)
    return {"reps": n_forest, "median_ratios": stats, "pvalues": ps,
            "median_agent_error": float(np.median(agent_err)),
            "median_forest_error": float(np.median(forest_err))}


def _before() -> dict[str, Any]:
    """The coverage cells run with the plain percentile interval (the earlier release)."""
    import json

    return json.loads(BEFORE.read_text()) if BEFORE.exists() else {}


def _median_range(q: list[float]) -> str:
    return f"{q[1]:.3g} [{q[0]:.3g}, {q[2]:.3g}]"


_COMPETITOR_HEADER = ("Wilcoxon signed-rank, same studies", "t-test, same studies")


def _competitor_cells(row: dict[str, Any]) -> tuple[str, ...]:
    """The competitors' rejection rates (blank in cells run before they were recorded)."""
    other = row.get("competitors", {})
    return tuple(format_rate(other[name]) if name in other else "" for name in COMPETITORS)


def _competitors_note(results: dict[str, Any]) -> str:
    """The sentence naming the commit at which the competitors' columns were added."""
    env, skewed = results.get("environment_competitors"), results.get("environment_skewed")
    note = "" if env is None else (
        f" The competitors' columns were added at commit `{env['commit'][:10]}`, rerunning "
        "the size and power cells on the same studies (the sign test's rates reproduce "
        "to the last digit).")
    if skewed is not None:
        note += f" The skewed nulls ran at commit `{skewed['commit'][:10]}`."
    return note


def tables(results: dict[str, Any]) -> str:
    """The four tables of docs/validation_lie.md."""
    env, s = results["environment"], results["settings"]
    lines = [generated_by("validate_lie", env) + f"; seed {s['seed']}, {s['n_studies']} "
             f"context sets x {s['reps'] // s['n_studies']} report pairs per size and power "
             "cell)." + appended_note(results) + _competitors_note(results), ""]
    part = results.get("size", [])
    lines += ["### Size of the sign test at alpha = 0.05", "", *markdown_table(
        ["network", "agent", "contexts", "informative (median)", "tests",
         "size [95% Wilson]", "attained level of the exact test",
         "median ratio: median [5%, 95%]", *_COMPETITOR_HEADER],
        [(r["settings"]["network"], r["settings"]["agent"], r["settings"]["n_contexts"],
          f"{r['median_informative']:g}", r["reps"], format_rate(r["rejection"]),
          f"{r['attained_level']:.3f}", _median_range(r["median_ratio_quantiles"]),
          *_competitor_cells(r)) for r in part]), ""]
    part = results.get("coverage", [])
    earlier = _before()
    before = {r["design"]: r for r in earlier.get("coverage", [])}

    def was(r: dict[str, Any]) -> str:
        b = before.get(r["design"])
        return "" if b is None else f"{format_rate(b['coverage'])}, {b['mean_width']:.3f}"
    lines += ["### Coverage of the expanded percentile interval under the null", "",
              *markdown_table(["network", "agent", "contexts", "studies",
                               "bootstrap resamples", "coverage of 1 [95% Wilson]",
                               "mean width", "before: plain percentile, mean width"],
                              [(r["settings"]["network"], r["settings"]["agent"],
                                r["settings"]["n_contexts"], r["reps"], r["n_boot"],
                                format_rate(r["coverage"]), f"{r['mean_width']:.3f}", was(r))
                               for r in part]), ""]
    if before:
        env_b = earlier["environment"]
        lines += [f"*Before*: the same cells with the plain percentile interval, from "
                  f"`benchmarks/results/{BEFORE.name}` (commit `{env_b['commit'][:10]}`).", ""]
    part = results.get("power", [])
    lines += ["### Power against Prelec weighting", "", *markdown_table(
        ["gamma", "contexts", "tests", "exact median LIE error of the agent",
         "power [95% Wilson]", "median ratio: median [5%, 95%]", *_COMPETITOR_HEADER],
        [(r["settings"]["agent"].split()[1], r["settings"]["n_contexts"], r["reps"],
          f"{r['exact_median_error']:.4f}", format_rate(r["rejection"]),
          _median_range(r["median_ratio_quantiles"]), *_competitor_cells(r))
         for r in part]), ""]
    part = results.get("skewed", [])
    lines += ["### A null that is not exchangeable: steady baseline, skewed agent errors", "",
              *markdown_table(["agent's context errors", "contexts", "tests",
                               "sign test [95% Wilson]", *_COMPETITOR_HEADER],
                              [(r["settings"]["shape"], r["settings"]["n_contexts"], r["reps"],
                                format_rate(r["rejection"]), *_competitor_cells(r))
                               for r in part]), ""]
    part = results.get("forest", [])
    lines += ["### The default random-forest baseline", "", *markdown_table(
        ["agent", "report noise", "median ratio per study", "sign-test p-values",
         "median agent error", "median forest error"],
        [(r["settings"]["agent"], r["settings"]["report_noise"],
          ", ".join(f"{x:.3g}" for x in r["median_ratios"]),
          ", ".join(f"{x:.2g}" for x in r["pvalues"]), f"{r['median_agent_error']:.4f}",
          f"{r['median_forest_error']:.4f}") for r in part])]
    return "\n".join(lines)


def main(argv: list[str]) -> int:
    parser = matrix_parser(__doc__, results=RESULTS, page="docs/validation_lie.md",
                           n_resamples=None, power_reps=None,
                           only="comma-separated words of 'part: design' (size, coverage, "
                                "power, forest, asia, ...): the cells to run",
                           prog="python -m benchmarks.validate_lie")
    parser.add_argument("--n-studies", type=int, default=10,
                        help="context sets per size and power cell (each with --reps / "
                             "--n-studies pairs of report tables)")
    parser.add_argument("--n-coverage", type=int, default=1000,
                        help="studies per coverage cell (20 report pairs a context set)")
    parser.add_argument("--n-boot", type=int, default=999)
    parser.add_argument("--n-forest", type=int, default=3, help="studies per forest cell")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--jobs", type=int, default=1, help="cells run at once")
    parser.set_defaults(n_resamples=None, power_reps=None)
    args = parser.parse_args(argv)
    args.n_draws = max(1, args.reps // args.n_studies)
    if tables_if_asked(args, DOC, "validate_lie.py", tables):
        return 0
    results = start_results(args, ALPHA, seed=args.seed, n_studies=args.n_studies,
                            n_coverage=args.n_coverage, n_boot=args.n_boot,
                            n_forest=args.n_forest, noise=NOISE)
    only = only_words(args)
    cells = [c for c in plan() if not only or any(w in f"{c[0]}: {c[1]}" for w in only)]
    order = [design for _, design, _ in plan()]
    if args.jobs > 1:
        from joblib import Parallel
        from joblib import delayed

        rows = Parallel(n_jobs=args.jobs)(delayed(run_cell)(*c, args) for c in cells)
        for (part, _, _), row in zip(cells, rows, strict=True):
            store_cell(results, part, row, order, args.out)
    else:
        for part, design, settings in cells:
            store_cell(results, part, run_cell(part, design, settings, args), order,
                       args.out)
    print(f"wrote {args.out}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
