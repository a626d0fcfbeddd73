"""Random-number handling: one ``rng`` argument, normalised once.

Every public function that uses randomness takes ``rng: int | Generator | None``
and calls :func:`check_rng` exactly once. Independent streams for parallel work
come from :func:`spawn`; numba kernels never receive a Generator, only seeds from
:func:`kernel_seeds`.
"""

from __future__ import annotations

import numbers

import numpy as np

__all__ = ["RNGLike", "check_rng", "kernel_seeds", "spawn"]

RNGLike = int | np.random.Generator | None


def check_rng(
    rng: RNGLike, *, name: str = "rng", owner: str = "this function"
) -> np.random.Generator:
    """Normalise ``rng`` to a :class:`numpy.random.Generator`.

    Parameters
    ----------
    rng : int, numpy.random.Generator or None
        A non-negative integer seed, an existing Generator (used as is, so the
        caller's stream advances) or None for fresh OS entropy.

    Raises
    ------
    TypeError
        For anything else, including ``numpy.random.RandomState`` and bools.
    ValueError
        For a negative integer seed.
    """
    if isinstance(rng, np.random.Generator):
        return rng
    if rng is None:
        return np.random.default_rng()
    if isinstance(rng, bool) or not isinstance(rng, numbers.Integral):
        raise TypeError(
            f"The '{name}' parameter of {owner} must be an int, a numpy.random.Generator "
            f"or None; got {type(rng).__name__} ({rng!r})."
        )
    if int(rng) < 0:
        raise ValueError(
            f"The '{name}' parameter of {owner} must be a non-negative int seed; got {int(rng)}."
        )
    return np.random.default_rng(int(rng))


def spawn(rng: np.random.Generator, n: int) -> list[np.random.Generator]:
    """Return ``n`` statistically independent child generators of ``rng``."""
    if n < 0:
        raise ValueError(f"The 'n' parameter of spawn must be >= 0; got {n}.")
    return list(rng.spawn(n))


def kernel_seeds(rng: np.random.Generator, n: int) -> np.ndarray:
    """Draw ``n`` independent 63-bit seeds for numba kernels (one per resample).

    Each resample's stream is fixed by its own seed, so a parallel kernel gives
    the same result whatever the number of threads.
    """
    return rng.integers(0, np.iinfo(np.int64).max, size=n, dtype=np.int64)
