"""The demo study on a network: the table, the truths, and errors passed through."""

import pytest

import bayesnets


def test_demo_study_table_and_truths():
    data, truths = bayesnets.demo_study(n_contexts=20, n_repetitions=2, rng=0)
    assert list(truths.index) == list(data["model"].cat.categories)
    assert len(data) == 5 * 20 * 2 * 4  # agents x contexts x repetitions x prompts
    assert truths.loc["rational", "cmi_exact"] == 0.0
    assert truths.loc["leaky", "cmi_exact"] > 0.01
    assert truths.loc["nonmonotone", "nonmonotone_pairs"] == "yes/defer, defer/no"
    assert truths.loc["prompt_sensitive", "max_prompt_shift"] == pytest.approx(0.1)
    again, _ = bayesnets.demo_study(n_contexts=20, n_repetitions=2, rng=0)
    assert data.equals(again)


def test_demo_study_validates():
    with pytest.raises(ValueError, match="n_contexts"):
        bayesnets.demo_study(n_contexts=0, rng=0)
    with pytest.raises(ValueError, match="rng"):
        bayesnets.run_demo(rng=-1)


def test_designed_violations():
    _, truths = bayesnets.demo_study(n_contexts=20, n_repetitions=2, rng=0)
    shown = bayesnets.designed_violations(truths)
    design = shown["violates by design"]
    assert design["rational"] == "-"
    assert design["leaky"].startswith("ci, ci_calibrated, leakage")
    assert design["nonmonotone"] == "monotonicity"
    assert design["prompt_sensitive"] == "prompt_consistency"
    assert "cmi_exact" in shown.attrs["caption"] and "violates by design" not in truths


def test_demo_report_shows_the_ground_truth_beside_the_results():
    rep, truths = bayesnets.run_demo(n_contexts=20, n_repetitions=2, tests=["monotonicity"],
                                     n_resamples=9, progress=False, rng=0)
    assert rep.truth is not None and list(rep.truth.index) == list(truths.index)
    page = rep.to_html()
    assert "Ground truth: what each simulated agent violates by design" in page
    start = page.index("Ground truth")
    table = page[start:page.index("</table>", start)]
    for agent in truths.index:
        assert f"<td>{agent}</td>" in table
    assert "fails here (adjusted p &lt; 0.05)" in table
    assert "violates by design" in table
    # every mark of the monotonicity figure is explained under it
    assert "Red ring: the lower bin of a significant violation" in page
