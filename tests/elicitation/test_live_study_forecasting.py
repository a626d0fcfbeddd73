"""Live: a forecasting ``coherence study`` at a simulated date against the real local model,
then again with every reply from the cache (see ``test_live.py`` for the server)."""

from __future__ import annotations

import re
import subprocess
import sys
import textwrap

import pandas as pd
import pytest

from tests.elicitation.test_live import _env, live  # noqa: F401 (the fixture)

pytestmark = pytest.mark.slow

N_QUESTIONS, REPETITIONS = 6, 2
N_CALLS = N_QUESTIONS * REPETITIONS


def test_forecasting_study_against_the_local_model(live, tmp_path):  # noqa: F811
    url, model = live
    config = tmp_path / "forecasting.toml"
    config.write_text(textwrap.dedent(f"""
        kind = "forecasting"
        seed = 0
        out = "{tmp_path / 'out'}"

        [model]
        name = "{model}"
        base_url = "{url}"
        temperature = 0.7
        max_tokens = 24
        constrained = "grammar"
        timeout = 120

        [design]
        n_questions = {N_QUESTIONS}
        simulated_date = 2028-01-01
        repetitions = {REPETITIONS}

        [tests]
        n_resamples = 199
        n_bins = 2
        """))
    args = [sys.executable, "-W", "ignore", "-m", "coherence_cli", "study", str(config),
            "--quiet"]
    done = subprocess.run(args, env=_env(), capture_output=True, text=True, timeout=900)
    assert done.returncode == 0, (done.stdout, done.stderr)
    assert f"{N_CALLS} elicitations, {N_CALLS} calls made, 0 from the cache" in done.stdout
    assert "forecasts at the simulated date 2028-01-01" in done.stdout
    raw = pd.read_csv(tmp_path / "out" / "raw.csv")
    assert len(raw) == N_CALLS and raw["text"].notna().all()
    results = pd.read_csv(tmp_path / "out" / "results.csv")
    assert (results["simulated_date"] == "2028-01-01").all()
    again = subprocess.run(args, env=_env(), capture_output=True, text=True, timeout=600)
    assert re.search(rf"{N_CALLS} elicitations, 0 calls made, {N_CALLS} from the cache",
                     again.stdout), again.stdout
    brier = results.set_index("metric").at["brier", "estimate"]
    print(f"\nlive forecasting study: {N_CALLS} calls, parse rate "
          f"{raw['parse_ok'].astype(bool).mean():.0%}, Brier {brier:.3f}")
