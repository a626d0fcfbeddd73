"""Shared test configuration: a deterministic hypothesis profile and data paths."""

from __future__ import annotations

import os
from pathlib import Path

import matplotlib
import pytest
from hypothesis import HealthCheck, settings

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
    """The field's real result files, next to the repository; skip when absent."""
    if not SHARED_DATA.is_dir():
        pytest.skip("../shared/data is not present")
    return SHARED_DATA
