"""Orientation and interval-versus-p-value behaviour of the decision tests, as documented."""

from __future__ import annotations

import warnings

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
