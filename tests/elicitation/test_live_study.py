"""Live: ``coherence study CONFIG.toml`` end to end against the real local model.

Killed (SIGKILL) once a third of the calls are stored, resumed with nothing lost, then run a
third time with no new call. Needs the local model (``make live-install``); skips without it
unless ``ELICITATION_LIVE_REQUIRED`` is set (see ``test_live.py``).
"""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import textwrap
import time

import pandas as pd
import pytest

from tests.elicitation.test_live import _env
from tests.elicitation.test_live import _stored
from tests.elicitation.test_live import live  # noqa: F401 (the fixture)

pytestmark = pytest.mark.slow

N_CONTEXTS, REPETITIONS = 6, 2
N_CALLS = N_CONTEXTS * REPETITIONS * 2   # one probability prompt and the decision


def test_study_from_one_file_killed_resumed_and_cached(live, tmp_path):  # noqa: F811
    url, model = live
    config = tmp_path / "live.toml"
    config.write_text(textwrap.dedent(f"""
        kind = "decision"
        name = "live"
        seed = 0
        out = "{tmp_path / 'out'}"

        [model]
        name = "{model}"
        base_url = "{url}"
        temperature = 0.7
        max_tokens = 24
        constrained = "grammar"
        timeout = 120
        concurrency = 4

        [design]
        n_contexts = {N_CONTEXTS}
        repetitions = {REPETITIONS}

        [tests]
        tests = ["ci", "monotonicity", "calibration"]
        n_permutations = 49
        n_resamples = 49
        """))
    args = [sys.executable, "-m", "coherence_cli", "study", str(config), "--quiet"]
    cache = tmp_path / "out" / "cache.sqlite"
    proc = subprocess.Popen(args, env=_env(), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    deadline = time.monotonic() + 600
    while _stored(cache) < N_CALLS // 3 and proc.poll() is None:
        assert time.monotonic() < deadline, "the live study made no progress in 10 minutes"
        time.sleep(0.5)
    if proc.poll() is None:
        proc.send_signal(signal.SIGKILL)
    proc.communicate(timeout=60)
    before = _stored(cache)
    assert before >= N_CALLS // 3
    start = time.monotonic()
    done = subprocess.run(args, env=_env(), capture_output=True, text=True, timeout=1200)
    wall = time.monotonic() - start
    # exit 1 only when a test could not compute (a 270M model may answer one action only)
    assert done.returncode in (0, 1), (done.stdout, done.stderr)
    counts = re.search(r"(\d+) elicitations, (\d+) calls made, (\d+) from the cache",
                       done.stdout)
    assert counts is not None, done.stdout
    total, made, cached = map(int, counts.groups())
    assert total == N_CALLS and cached == before and made == N_CALLS - before
    assert _stored(cache) == N_CALLS
    raw = pd.read_csv(tmp_path / "out" / "raw.csv")
    assert len(raw) == N_CALLS and raw["text"].notna().all()
    assert (tmp_path / "out" / "report.html").stat().st_size > 1000
    # a third run: every reply from the cache
    again = subprocess.run(args, env=_env(), capture_output=True, text=True, timeout=600)
    assert f"{N_CALLS} elicitations, 0 calls made, {N_CALLS} from the cache" in again.stdout
    print(f"\nlive study from one file: {N_CALLS} calls ({before} before the kill), "
          f"{made} in {wall:.0f} s after the resume, parse rate "
          f"{raw['parse_ok'].astype(bool).mean():.0%}")
