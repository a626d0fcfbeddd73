"""Properties of ``report``: every test of the registry, in every cell, gives the numbers of
its test function run alone with the settings the report records (``settings``) and the
cell's spawned stream; a table with an irrelevant column, or with its columns renamed and
named through report's column parameters, gives the same cells."""

from __future__ import annotations

import math
import re

import numpy as np
import pandas as pd
import pytest

import coherence
from coherence import report
from coherence._report._registry import REGISTRY

#: the studies here are small (under 60 contexts): the localised monotonicity test says
#: so (tested in tests/decision/test_monotone.py)
pytestmark = pytest.mark.filterwarnings(
    "ignore:monotonicity_test:coherence.SmallSampleWarning")

NAMES = [s.name for s in REGISTRY]


@pytest.fixture(scope="module")
def study() -> tuple[pd.DataFrame, pd.DataFrame]:
    parts = []
    for model, agent, seed in (("a", "rational", 11), ("b", coherence.Agent.leaky(strength=0.8),
                                                       12)):
        d = coherence.simulate(agent, n_contexts=40, n_repetitions=2,
                               prompts=coherence.PROMPTS, rng=seed).data
        parts.append(d.assign(model=model))
    data = pd.concat(parts, ignore_index=True)
    gen = np.random.default_rng(5)
    x = gen.integers(0, 3, int(data["context"].max()) + 1)
    data["x"] = x[data["context"].to_numpy()]
    lie = pd.DataFrame([{"model": m, "context": f"{m}{c}", "variable": "z", "state": s,
                         "p_y_given_x": 0.5, "p_y_given_xz": [0.3, 0.7][s] + e,
                         "p_z_given_x": 0.5}
                        for m, off in (("a", 0.0), ("b", 0.05)) for c in range(8)
                        for s, e in ((0, off * (c % 3)), (1, 0.0))])
    return data, lie


def _direct(name: str, part: pd.DataFrame, s: dict, rng: np.random.Generator,
            lie: pd.DataFrame | None, draws: int | None = None) -> coherence.CoherenceResult:
    """The test function called by hand with the report's recorded settings."""
    cols = s["columns"]
    std = part[part[cols["prompt"]] == s["reference_prompt"]]
    level = s["confidence_level"]
    n_res = s["n_resamples"] if draws is None else draws
    n_perm = s["n_permutations"] if draws is None else draws
    decision = {"belief": cols["belief"], "action": cols["action"], "outcome": cols["outcome"],
                "group": cols["group"]}
    per_ctx = std.groupby(cols["group"], sort=True).agg(
        probability=(cols["belief"], "mean"), outcome=(cols["outcome"], "first")
    ).reset_index().rename(columns={cols["group"]: "question"})
    if name.startswith("ci"):
        return coherence.ci_test(std, **decision, evidence=tuple(cols["evidence"])
                                 if name == "ci_evidence" else (), k=s["k"],
                                 n_resamples=n_perm, confidence_level=level,
                                 calibrate=name == "ci_calibrated", rng=rng,
                                 ci_method=None if draws else "debiased")
    if name.startswith("leakage"):
        return coherence.leakage_test(std, **decision, evidence=tuple(cols["evidence"])
                                      if name == "leakage_evidence" else (),
                                      n_splits=s["n_splits"], engine=s["engine"],
                                      n_resamples=s["n_resamples"], n_permutations=n_perm,
                                      confidence_level=level, rng=rng)
    if name == "monotonicity":
        return coherence.monotonicity_test(std, belief=cols["belief"], action=cols["action"],
                                           group=cols["group"], n_resamples=n_res, rng=rng)
    if name == "prompt_consistency":
        return coherence.prompt_consistency(part, belief=cols["belief"], prompt=cols["prompt"],
                                            group=cols["group"],
                                            repetition=cols["repetition"],
                                            reference=s["reference_prompt"], truth=cols["truth"],
                                            n_resamples=n_res, confidence_level=level, rng=rng)
    if name == "calibration":
        return coherence.forecast_scores(per_ctx.assign(model="agent"), by="model",
                                         timestamp=None, n_resamples=n_res,
                                         confidence_level=level, rng=rng)
    if name == "calibration_error":
        return coherence.calibration_error(per_ctx, n_resamples=n_res, confidence_level=level,
                                           rng=rng)
    if name == "smooth_ece":
        return coherence.smooth_ece(per_ctx, n_resamples=0, confidence_level=level, rng=rng)
    if name == "lie":
        assert lie is not None
        base = lie.assign(p_y_given_x=0.52)
        return coherence.iterated_expectation_check(lie, baseline=base, rng=rng)
    raise AssertionError(name)


def _same(a: float, b: float) -> bool:
    return a == b or (math.isnan(a) and math.isnan(b))


def _run(data: pd.DataFrame, lie: pd.DataFrame, **kw) -> coherence.CoherenceReport:
    kw = {"by": "model", "evidence": ["x"], "n_resamples": 19, "adjust": "none",
          "progress": False, "rng": 7, **kw}
    lie_options = {"baseline": lie.assign(p_y_given_x=0.52)}
    return report(data, lie=lie, lie_options=lie_options, **kw)


@pytest.fixture(scope="module")
def rep(study) -> coherence.CoherenceReport:
    data, lie = study
    return _run(data, lie)


# the study's prompts state one belief a context (no noise): prompt_consistency says so, and
# the report keeps that as a note of the cell
@pytest.mark.filterwarnings(
    "ignore:prompt_consistency.*do not vary:coherence.DegenerateDataWarning")
def test_every_cell_and_test_equals_its_test_function(study, rep):
    data, lie = study
    s = rep.settings
    cell_streams = np.random.default_rng(s["seed"]).spawn(len(rep.cells))
    compared = set()
    for cell, stream in zip(rep.cells, cell_streams, strict=True):
        model = cell.key["model"]
        part = data[data["model"] == model]
        streams = dict(zip(NAMES, stream.spawn(len(NAMES)), strict=True))
        assert not cell.errors
        for name, got in cell.results.items():
            resolved = [n for n in cell.notes.get(name, ()) if "resolved with" in n]
            draws = int(re.search(r"resolved with (\d+) draws", resolved[0]).group(1)) \
                if resolved else None
            direct = _direct(name, part, s, streams[name], lie[lie["model"] == model], draws)
            assert _same(got.statistic, direct.statistic), (model, name)
            assert _same(got.pvalue, direct.pvalue), (model, name)
            if not (resolved and name.startswith("ci")):  # the first stage's interval kept
                assert all(_same(float(u), float(v)) for u, v in zip(
                    got.confidence_interval[:2], direct.confidence_interval[:2],
                    strict=True)), (model, name)
            compared.add(name)
    assert compared == set(NAMES) - {"iia"}


def test_menu_cells_equal_the_iia_test():
    from benchmarks.iia_designs import Design
    from benchmarks.iia_designs import generate

    data = generate(Design(n_contexts=40), 3)
    n = int(data["context"].max()) + 1
    happened = np.random.default_rng(3).uniform(size=n)
    belief = data.groupby("context")["belief"].first().to_numpy()
    data = data.assign(outcome=(happened < belief)[data["context"].to_numpy()].astype(int))
    rep = report(data, tests=("iia",), n_resamples=49, adjust="none", progress=False, rng=4)
    (cell,) = rep.cells
    stream = np.random.default_rng(4).spawn(1)[0].spawn(len(NAMES))[NAMES.index("iia")]
    got = cell.results["iia"]
    resolved = [n for n in cell.notes.get("iia", ()) if "resolved with" in n]
    draws = int(re.search(r"with (\d+) draws", resolved[0]).group(1)) if resolved else 49
    direct = coherence.iia_test(data, belief="belief", action="action", menu="menu",
                                group="context", n_resamples=draws,
                                confidence_level=0.95, rng=stream)
    assert got.statistic == direct.statistic and got.pvalue == direct.pvalue
    assert tuple(got.confidence_interval) == tuple(direct.confidence_interval)


def test_renamed_columns_and_an_irrelevant_column_give_the_same_cells(study, rep):
    data, lie = study
    names = {"belief": "p", "action": "act", "outcome": "y", "context": "ctx",
             "prompt": "wording", "repetition": "run", "truth": "true_p", "x": "feature"}
    renamed = data.rename(columns=names).assign(irrelevant=np.arange(len(data)) % 7)
    other = _run(renamed, lie, belief="p", action="act", outcome="y", group="ctx",
                 prompt="wording", repetition="run", truth="true_p", evidence=["feature"])
    a, b = rep.to_frame(), other.to_frame()
    pd.testing.assert_frame_equal(b.drop(columns=["warnings"]), a.drop(columns=["warnings"]))
