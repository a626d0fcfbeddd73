"""report() under every joblib backend: the same report as serial, the backend recorded."""

from __future__ import annotations

import joblib
import pandas as pd
import pytest

import coherence
from coherence import report

#: the studies here are small (under 60 contexts): the localised monotonicity test says
#: so (tested in tests/decision/test_monotone.py)
pytestmark = pytest.mark.filterwarnings(
    "ignore:monotonicity_test:coherence.SmallSampleWarning")

# unadjusted: a p-value at its floor is resolved with 1,001 draws, not the family size x 1,000
FAST = {"by": "model", "tests": ("ci", "leakage", "monotonicity"), "n_resamples": 19,
        "adjust": "none", "progress": False, "rng": 3}


@pytest.fixture(scope="module")
def table() -> pd.DataFrame:
    parts = [coherence.simulate(agent, n_contexts=30, n_repetitions=3, rng=i).data
             .assign(model=name)
             for i, (name, agent) in enumerate([("a", "rational"), ("b", "leaky")])]
    return pd.concat(parts, ignore_index=True)


@pytest.fixture(scope="module")
def serial(table) -> coherence.CoherenceReport:
    return report(table, **FAST)


def test_serial_recorded_as_sequential(serial):
    assert serial.settings["backend"] == "sequential"
    assert serial.settings["n_jobs"] == 1
    assert serial.settings["numba_threads_per_cell"] is None  # the threads as set


def test_cells_share_the_cores_out_and_restore_the_threads(table, serial, monkeypatch):
    """Workers x numba threads never exceeds the cores; each cell sets its threads and
    gives the caller's back; the results do not depend on them."""
    import os

    import numba

    from coherence._report import _run

    assert _run.cell_threads(1) is None
    monkeypatch.setattr(os, "cpu_count", lambda: 16)
    assert _run.cell_threads(16) == 1
    assert _run.cell_threads(4) == min(4, numba.get_num_threads())
    assert _run.cell_threads(64) == 1
    seen = []
    original = _run._cell_tests

    def spy(*args):
        seen.append(numba.get_num_threads())
        return original(*args)

    monkeypatch.setattr(_run, "_cell_tests", spy)
    monkeypatch.setattr(os, "cpu_count", lambda: 2)
    before = numba.get_num_threads()
    rep = report(table, n_jobs=2, backend="threading", **FAST)
    assert seen == [1, 1]  # 2 cores shared by 2 workers
    assert rep.settings["numba_threads_per_cell"] == 1
    assert numba.get_num_threads() == before
    pd.testing.assert_frame_equal(rep.to_frame(), serial.to_frame())


@pytest.mark.parametrize("backend", [
    "threading",
    # worker processes start (and import numba, scikit-learn) in 10-20 s: slow suite
    pytest.param("loky", marks=pytest.mark.slow),
    pytest.param("multiprocessing", marks=pytest.mark.slow),
])
def test_backend_equals_serial(table, serial, backend):
    rep = report(table, n_jobs=2, backend=backend, **FAST)
    pd.testing.assert_frame_equal(rep.to_frame(), serial.to_frame())
    assert (rep.settings["backend"], rep.settings["n_jobs"]) == (backend, 2)


def test_enclosing_parallel_config_is_used_and_recorded(table, serial):
    with joblib.parallel_config(backend="threading", n_jobs=2):
        rep = report(table, **FAST)
    pd.testing.assert_frame_equal(rep.to_frame(), serial.to_frame())
    assert (rep.settings["backend"], rep.settings["n_jobs"]) == ("threading", 2)


def test_backend_validated(table):
    with pytest.raises(TypeError, match="The 'backend' parameter of report"):
        report(table, backend=2, **FAST)
    with pytest.raises(ValueError, match="Invalid backend"):
        report(table, backend="no-such-backend", n_jobs=2, **FAST)


@pytest.mark.slow
def test_dask_local_cluster_equals_serial(table, serial):
    """A real dask.distributed LocalCluster (two worker processes), named with
    ``backend='dask'`` and through ``parallel_config``."""
    distributed = pytest.importorskip("dask.distributed")
    with (distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True,
                                   dashboard_address=None) as cluster,
          distributed.Client(cluster)):
        rep = report(table, backend="dask", **FAST)
        pd.testing.assert_frame_equal(rep.to_frame(), serial.to_frame())
        assert rep.settings["backend"] == "dask"
        assert rep.settings["n_jobs"] == 2
        with joblib.parallel_config(backend="dask"):
            again = report(table, **FAST)
        pd.testing.assert_frame_equal(again.to_frame(), serial.to_frame())
        assert again.settings["backend"] == "dask"


@pytest.mark.slow
def test_ray_equals_serial(table, serial):
    """Ray's joblib backend (results come back as a list: it cannot stream)."""
    ray = pytest.importorskip("ray")
    from ray.util.joblib import register_ray

    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    try:
        register_ray()
        rep = report(table, backend="ray", n_jobs=2, **FAST)
    finally:
        ray.shutdown()
    pd.testing.assert_frame_equal(rep.to_frame(), serial.to_frame())
    assert (rep.settings["backend"], rep.settings["n_jobs"]) == ("ray", 2)
