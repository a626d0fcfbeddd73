"""Live: a consistency-checks ``coherence study`` against the real local model, the model
writing a negation and a conjunction of the base questions (each validated, the template
form kept where validation rejects it), then again with every reply from the cache (see
``test_live.py`` for the server)."""

from __future__ import annotations

import re
import textwrap

import pandas as pd
import pytest

from tests.elicitation.test_live import live  # noqa: F401
from tests.elicitation.test_live import model_section
from tests.elicitation.test_live import run_study

pytestmark = pytest.mark.slow


def test_consistency_study_against_the_local_model(live, tmp_path):  # noqa: F811
    url, model = live
    config = tmp_path / "consistency.toml"
    config.write_text(textwrap.dedent(f"""
        kind = "consistency"
        seed = 0
        out = "{tmp_path / 'out'}"

        """) + model_section(url, model, design_max_tokens=96) + textwrap.dedent("""
        [design]
        n_questions = 3
        checkers = ["negation", "and"]
        n_tuples = 2
        repetitions = 1
        designer = "model"
        model_forms = ["negation", "P_and_Q"]

        [tests]
        n_resamples = 99
        """))
    done = run_study(config)
    assert "consistency checks: mean arbitrage violation" in done
    made = int(re.search(r"(\d+) calls made, 0 from the cache", done).group(1))
    out = tmp_path / "out"
    design = pd.read_csv(out / "design.csv")
    # every design call kept with the model's raw reply, and a verdict on each form
    assert len(design) and "reply" in design  # (a tiny model may reply with nothing)
    assert set(design["form"]) <= {"negation", "P_and_Q"}
    assert design["kept"].isin([True, False]).all()
    questions = pd.read_csv(out / "questions.csv")
    assert set(questions["source"]) <= {"model", "template"}
    results = pd.read_csv(out / "results.csv")
    assert {"negation", "and"} <= set(results["checker"])
    again = run_study(config, timeout=600)
    assert re.search(rf"0 calls made, {made} from the cache", again), again
    print(f"\nlive consistency study: {made} calls, {int(design['kept'].sum())} of "
          f"{len(design)} model-written forms kept")
