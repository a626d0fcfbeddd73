"""Live: a conditional-forecasting ``coherence study`` against the real local model, then
again with every reply from the cache (see ``test_live.py`` for the server)."""

from __future__ import annotations

import re
import textwrap

import pandas as pd
import pytest

from tests.elicitation.test_live import live  # noqa: F401
from tests.elicitation.test_live import model_section
from tests.elicitation.test_live import run_study

pytestmark = pytest.mark.slow

N_PAIRS = 3
N_CALLS = N_PAIRS * 6    # P(A), P(A | B), P(A | not B) and the reverse direction


def test_pairs_study_against_the_local_model(live, tmp_path):  # noqa: F811
    url, model = live
    config = tmp_path / "pairs.toml"
    config.write_text(textwrap.dedent(f"""
        kind = "pairs"
        seed = 0
        out = "{tmp_path / 'out'}"

        """) + model_section(url, model) + textwrap.dedent(f"""
        [design]
        n_pairs = {N_PAIRS}

        [tests]
        n_resamples = 999
        """))
    done = run_study(config)
    assert f"{N_CALLS} elicitations, {N_CALLS} calls made, 0 from the cache" in done
    raw = pd.read_csv(tmp_path / "out" / "raw.csv")
    assert len(raw) == N_CALLS and raw["text"].notna().all()
    assert (tmp_path / "out" / "results.csv").is_file()
    again = run_study(config, timeout=600)
    assert re.search(rf"{N_CALLS} elicitations, 0 calls made, {N_CALLS} from the cache",
                     again), again
    print(f"\nlive pairs study: {N_CALLS} calls, parse rate "
          f"{raw['parse_ok'].astype(bool).mean():.0%}")
