import numpy as np
import pytest

from coherence._rng import check_rng
from coherence._rng import kernel_seeds
from coherence._rng import spawn


def test_int_seed_reproducible():
    a = check_rng(7).random(5)
    b = check_rng(7).random(5)
    np.testing.assert_array_equal(a, b)


def test_generator_used_as_is():
    g = np.random.default_rng(1)
    assert check_rng(g) is g


def test_none_gives_fresh_generator():
    assert isinstance(check_rng(None), np.random.Generator)


@pytest.mark.parametrize("bad", [1.5, "3", True, np.random.RandomState(0), [1]])
def test_bad_type(bad):
    with pytest.raises(TypeError, match=r"The 'rng' parameter of f must be an int, a "
                       r"numpy.random.Generator or None; got"):
        check_rng(bad, owner="f")


def test_negative_seed():
    with pytest.raises(ValueError, match=r"The 'rng' parameter of f must be a non-negative int "
                       r"seed; got -1\."):
        check_rng(-1, owner="f")


def test_spawn_independent_and_reproducible():
    first = [g.random(3) for g in spawn(check_rng(3), 4)]
    second = [g.random(3) for g in spawn(check_rng(3), 4)]
    for a, b in zip(first, second, strict=True):
        np.testing.assert_array_equal(a, b)
    # streams differ from each other
    assert len({tuple(x) for x in first}) == 4


def test_spawn_negative():
    with pytest.raises(ValueError, match="must be >= 0"):
        spawn(check_rng(0), -1)


def test_kernel_seeds():
    s = kernel_seeds(check_rng(0), 1000)
    assert s.dtype == np.int64 and s.min() >= 0
    assert len(np.unique(s)) == 1000
    np.testing.assert_array_equal(s, kernel_seeds(check_rng(0), 1000))
