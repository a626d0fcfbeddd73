"""Live: a consistency-checks ``coherence study`` against the real local model, the model
writing a negation and a conjunction of the base questions (each validated, the template
form kept where validation rejects it), then again with every reply from the cache (see
``test_live.py`` for the server)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from tests.elicitation.test_live import _env, live  # noqa: F401 (the fixture)

pytestmark = pytest.mark.slow


def test_consistency_study_against_the_local_model(live, tmp_path):  # noqa: F811
    url, model = live
    config = tmp_path / "consistency.toml"
    config.write_text(textwrap.dedent(f"""
        kind = "consistency"
        seed = 0
        out = "{tmp_path / 'out'}"

        [model]
        name = "{model}"
        base_url = "{url}"
        temperature = 0.7
        max_tokens = 24
        design_max_tokens = 96
        constrained = "grammar"
        timeout = 120

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
    args = [sys.executable, "-W", "ignore", "-m", "coherence_cli", "study", str(config),
            "--quiet"]
    done = subprocess.run(args, env=_env(), capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert "consistency checks: mean arbitrage violation" in done.stdout
    made = int(re.search(r"(\d+) calls made, 0 from the cache", done.stdout).group(1))
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
    again = subprocess.run(args, env=_env(), capture_output=True, text=True, timeout=600)
    assert again.returncode == 0, (again.stdout, again.stderr)
    assert re.search(rf"0 calls made, {made} from the cache", again.stdout), again.stdout
    print(f"\nlive consistency study: {made} calls, {int(design['kept'].sum())} of "
          f"{len(design)} model-written forms kept")
