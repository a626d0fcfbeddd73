"""Orientation and interval-versus-p-value behaviour of the decision tests, as documented."""

from __future__ import annotations

import warnings

import numpy as np
import pandas as pd

import coherence


def test_ci_test_plugin_pvalue_depends_on_the_belief_orientation_as_documented():
    # the same null with beliefs 1 - b: the plug-in strata are cut from the lowest belief
    # up, so the default p-value moves (0.459 against 0.867); the docstring says so
    data = coherence.simulate("rational", n_contexts=100, rng=0).data
    mirror = data.assign(belief=1.0 - data["belief"])
    relabel = data.assign(outcome=1 - data["outcome"])
    kwargs = {"n_resamples": 999, "ci_method": None, "rng": 0}
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        base = coherence.ci_test(data, **kwargs)
        assert coherence.ci_test(relabel, **kwargs).pvalue == base.pvalue
        moved = coherence.ci_test(mirror, **kwargs)
        assert abs(moved.pvalue - base.pvalue) > 0.3
        assert abs(moved.statistic - base.statistic) < 1e-12
        reg = [coherence.ci_test(d, test_statistic="regression", **kwargs).pvalue
               for d in (data, mirror)]
        assert reg[0] == reg[1]
    doc = " ".join(coherence.ci_test.__doc__.split())
    assert "beliefs :math:`1 - b`" in doc and "another p-value" in doc


def _iia_study(factor, seed, n=40, reps=4):
    # removing 'defer' multiplies every context's odds of 'yes' over 'no' by ``factor``
    gen = np.random.default_rng(seed)
    rows = []
    for c in range(n):
        py, pn = gen.uniform(0.2, 0.6, 2)
        full = np.array([py, pn, 0.3]) / (py + pn + 0.3)
        odds = factor * py / pn
        for _ in range(reps):
            rows.append((c, gen.choice(["yes", "no", "defer"], p=full), "defer|no|yes"))
            rows.append((c, "yes" if gen.random() < odds / (1 + odds) else "no", "no|yes"))
    return pd.DataFrame(rows, columns=["context", "action", "menu"])


def test_iia_interval_and_pvalue_can_disagree_as_documented():
    # the score test's p-value is 0.035 while the odds ratio's interval holds 0; a pair
    # given as ("yes", "no") is reported in sorted order, the odds of 'no' over 'yes'
    data = _iia_study(0.7, seed=1)
    rows = [coherence.iia_test(data, belief=None, pairs=[pair], n_resamples=199,
                               rng=1).table.iloc[0] for pair in (("yes", "no"), ("no", "yes"))]
    for row in rows:
        assert (row["action_1"], row["action_2"]) == ("no", "yes")
        assert row["pvalue"] < 0.05 and row["ci_low"] < 0.0 < row["ci_high"]
    assert rows[0]["log_odds_ratio"] == rows[1]["log_odds_ratio"] > 0
    doc = " ".join(coherence.IIAResult.__doc__.split())
    assert "can disagree" in doc and "in sorted order" in doc


def _leaky(seed):
    return coherence.simulate(coherence.Agent.leaky(strength=0.3), n_contexts=100,
                              rng=seed).data


def test_leakage_interval_pvalue_and_orientation_as_documented():
    # the interval is of E[S] (negative under the null), not the test's inversion: it
    # holds 0 with p = 0.01, and lies below 0 with p = 0.855; beliefs 1 - b with the
    # outcome relabelled move the statistic (-0.10 against 1.03) and the p-value (0.29
    # against 0.025) through the penalised fit; the docstring and the result's say so
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        res = coherence.leakage_test(_leaky(1), rng=1)
        ci = res.confidence_interval
        assert res.pvalue <= 0.01 and ci.low < 0.0 < ci.high
        res = coherence.leakage_test(_leaky(2), rng=2)
        assert res.pvalue > 0.8 and res.confidence_interval.high < 0.0
        data = _leaky(0)
        base = coherence.leakage_test(data, rng=0)
        mirror = data.assign(belief=1.0 - data["belief"], outcome=1 - data["outcome"])
        moved = coherence.leakage_test(mirror, rng=0)
    assert round(base.statistic, 2) == -0.10 and round(moved.statistic, 2) == 1.03
    assert abs(base.pvalue - 0.29) < 1e-12 and abs(moved.pvalue - 0.025) < 1e-12
    doc = " ".join(coherence.leakage_test.__doc__.split())
    assert "not the inversion of the permutation test" in doc and "(-1.27, 5.52)" in doc
    assert "beliefs :math:`1 - b`" in doc and "Both orientations are valid tests" in doc
    attrs = " ".join(coherence.LeakageResult.__doc__.split())
    assert "not the inversion of the permutation test" in attrs
