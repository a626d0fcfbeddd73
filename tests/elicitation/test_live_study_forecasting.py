"""Live: a forecasting ``coherence study`` at a simulated date against the real local model,
then again with every reply from the cache (see ``test_live.py`` for the server)."""

from __future__ import annotations

import re
import textwrap

import pandas as pd
import pytest

from tests.elicitation.test_live import live  # noqa: F401
from tests.elicitation.test_live import model_section
from tests.elicitation.test_live import run_study

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

        """) + model_section(url, model) + textwrap.dedent(f"""
        [design]
        n_questions = {N_QUESTIONS}
        simulated_date = 2028-01-01
        repetitions = {REPETITIONS}

        [tests]
        n_resamples = 199
        n_bins = 2
        """))
    done = run_study(config)
    assert f"{N_CALLS} elicitations, {N_CALLS} calls made, 0 from the cache" in done
    assert "forecasts at the simulated date 2028-01-01" in done
    raw = pd.read_csv(tmp_path / "out" / "raw.csv")
    assert len(raw) == N_CALLS and raw["text"].notna().all()
    results = pd.read_csv(tmp_path / "out" / "results.csv")
    assert (results["simulated_date"] == "2028-01-01").all()
    again = run_study(config, timeout=600)
    assert re.search(rf"{N_CALLS} elicitations, 0 calls made, {N_CALLS} from the cache",
                     again), again
    brier = results.set_index("metric").at["brier", "estimate"]
    print(f"\nlive forecasting study: {N_CALLS} calls, parse rate "
          f"{raw['parse_ok'].astype(bool).mean():.0%}, Brier {brier:.3f}")
