"""Shared test configuration: a deterministic hypothesis profile and data paths."""

from __future__ import annotations

import os
from pathlib import Path

# One BLAS thread for the suite and the commands it starts: the tests' linear algebra is small
# (n x 30), where a multi-threaded OpenBLAS is slower, and on a busy 2-core machine its
# spinning threads made single tests 10-20x slower (test_logistic.py: 31 s -> 9 s). The
# library limits BLAS itself where it matters (report cells, the fast logistic null); numba's
# threads, which tests do check, are left as they are.
for _var in ("OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
    os.environ.setdefault(_var, "1")

import matplotlib  # noqa: E402
import pytest  # noqa: E402
from hypothesis import HealthCheck  # noqa: E402
from hypothesis import settings  # noqa: E402
from threadpoolctl import threadpool_limits  # noqa: E402

threadpool_limits(1, user_api="blas")  # numpy may be loaded already (a plugin, a doctest)
matplotlib.use("Agg")

# Deterministic: the same examples on every run and machine (derandomize),
# no wall-clock deadline (shared, noisy machines), no example database.
settings.register_profile(
    "deterministic",
    derandomize=True,
    deadline=None,
    database=None,
    max_examples=40,
    suppress_health_check=[HealthCheck.too_slow],
    print_blob=True,
)
settings.register_profile("thorough", parent=settings.get_profile("deterministic"),
                          max_examples=500)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "deterministic"))

#: ``../shared/data`` next to the clone, or where COHERENCE_SHARED_DATA says (as benchmarks/).
SHARED_DATA = Path(os.environ.get("COHERENCE_SHARED_DATA",
                                  Path(__file__).resolve().parents[1].parent / "shared" / "data"))


#: Small verbatim extracts of public result files, shipped with the tests (each folder's README).
TEST_DATA = Path(__file__).resolve().parent / "data"


@pytest.fixture
def data_roots() -> list[Path]:
    """Where the field's real result files are: the extracts in ``tests/data`` (always), then
    ``../shared/data`` when it is present (whole files)."""
    return [TEST_DATA, *([SHARED_DATA] if SHARED_DATA.is_dir() else [])]


@pytest.fixture
def shared_data() -> Path:
    """The field's real result files: ``../shared/data`` when it is next to the clone, else
    the copies shipped in ``tests/data`` (the conditional-pairs run and the published
    prompts, each folder's README names its source)."""
    return SHARED_DATA if SHARED_DATA.is_dir() else TEST_DATA
