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
