"""Tests of the kNN (conditional) mutual-information estimator ``coherence.cmi`` / ``mi``."""

from __future__ import annotations

import math

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

import coherence
from coherence._decision._cmi import Prepared
from coherence._decision._cmi import estimate
from tests._reference import reference_cmi

E = np.empty


def _ref(x=None, y=None, z=None, xc=None, yc=None, zc=None, k=3):
    """The brute-force reference from plain 1-D/2-D arrays (None: no such part)."""
    n = len(next(v for v in (x, y, z, xc, yc, zc) if v is not None))

    def mat(v, dtype):
        if v is None:
            return np.empty((n, 0), dtype=dtype)
        v = np.asarray(v, dtype=dtype)
        return v[:, None] if v.ndim == 1 else v

    return reference_cmi(mat(xc, float), mat(x, np.int64), mat(yc, float), mat(y, np.int64),
                         mat(zc, float), mat(z, np.int64), k=k)


def _close(a: float, b: float) -> bool:
    if math.isnan(a) or math.isnan(b):
        return math.isnan(a) and math.isnan(b)
    return math.isclose(a, b, rel_tol=1e-12, abs_tol=1e-12)


# --------------------------------------------------------------------------- fast == reference
tied = st.integers(min_value=8, max_value=60).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 2), min_size=n, max_size=n),      # x discrete
        st.lists(st.integers(0, 1), min_size=n, max_size=n),      # y discrete
        st.lists(st.integers(0, 6), min_size=n, max_size=n),      # belief on a coarse grid
        st.lists(st.integers(0, 1), min_size=n, max_size=n),      # discrete evidence
        st.integers(1, 4),                                        # k
    ))


@given(tied)
def test_sort_kernel_equals_reference_with_heavy_ties(case):
    x, y, zi, ev = (np.asarray(v) for v in case[:4])
    k = case[4]
    k = min(k, len(x) - 1)
    zc = zi * 0.25  # exact binary fractions: ties are exact
    fast = coherence.cmi(x, y, pd.DataFrame({"b": zc, "e": ev}), k=k)
    assert _close(fast, _ref(x=x, y=y, z=ev, zc=zc, k=k))
    fast_no_ev = coherence.cmi(x, y, zc, k=k)
    assert _close(fast_no_ev, _ref(x=x, y=y, zc=zc, k=k))


@given(tied)
def test_sort_kernel_with_the_continuous_coordinate_in_x(case):
    x, y, zi, ev = (np.asarray(v) for v in case[:4])
    k = case[4]
    k = min(k, len(x) - 1)
    xc = zi * 0.5
    assert _close(coherence.cmi(xc, y, ev, k=k), _ref(xc=xc, y=y, z=ev, k=k))
    assert _close(coherence.mi(xc, y, k=k), _ref(xc=xc, y=y, k=k))
    assert _close(coherence.mi(x, y, k=k), _ref(x=x, y=y, k=k))


@given(tied)
def test_kdtree_path_equals_reference(case):
    x, y, zi, ev = (np.asarray(v) for v in case[:4])
    k = case[4]
    k = min(k, len(x) - 1)
    zc = np.column_stack([zi * 0.5, (zi * 7 + ev) % 4 * 1.0])
    assert _close(coherence.cmi(x, y, zc, k=k), _ref(x=x, y=y, zc=zc, k=k))
    xc = np.column_stack([x * 1.0, ev * 2.0])
    assert _close(coherence.cmi(xc, y, zi * 1.0, k=k), _ref(xc=xc, y=y, zc=zi * 1.0, k=k))


several_in_z = st.integers(min_value=2, max_value=70).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 2), min_size=n, max_size=n),      # x discrete
        st.lists(st.integers(0, 1), min_size=n, max_size=n),      # y discrete
        st.lists(st.integers(0, 5), min_size=n, max_size=n),      # belief on a coarse grid
        st.lists(st.floats(-3, 3, allow_nan=False), min_size=n, max_size=n),  # evidence
        st.lists(st.integers(0, 2), min_size=n, max_size=n),      # discrete evidence
        st.integers(1, 4),                                        # k
        st.sampled_from([0.0, 0.5, 1.0]),                         # evidence grid (0: none)
    ))


@given(several_in_z)
def test_kernel_of_several_continuous_coordinates_in_z_equals_reference(case):
    """x and y discrete, two or three continuous coordinates in z (a belief and a float
    evidence column), with ties and discrete strata: the numba kernel equals the
    brute-force reference and the KD-tree path, which share no code with it."""
    from coherence._decision._cmi import _estimate_kdtree
    from coherence._decision._cmi import _estimate_z_continuous
    from coherence._decision._cmi import _prepare

    x, y, zi, ev, zd = (np.asarray(v) for v in case[:5])
    k, grid = min(case[5], max(len(x) - 1, 1)), case[6]
    if grid:
        ev = np.round(ev / grid) * grid
    for zc in (np.column_stack([zi * 0.25, ev]), np.column_stack([zi * 0.25, ev, -ev])):
        p = _prepare(x, y, pd.DataFrame(zc).assign(d=zd),
                     discrete={"z": [False] * zc.shape[1] + [True]}, resolution=None,
                     owner="cmi")
        value = _estimate_z_continuous(p, k)
        assert _close(value, _ref(x=x, y=y, z=zd, zc=zc, k=k))
        assert _close(value, _estimate_kdtree(p, k))
        assert _close(coherence.cmi(x, y, zc, k=k), _ref(x=x, y=y, zc=zc, k=k))


def test_several_continuous_coordinates_in_z_take_the_kernel(monkeypatch):
    from coherence._decision import _cmi

    gen = np.random.default_rng(5)
    n = 3000
    z = np.column_stack([np.round(gen.random(n), 2), gen.normal(size=n)])
    x = (gen.random(n) < z[:, 0]).astype(np.int64)
    y = gen.integers(0, 3, n)
    expected = _cmi._estimate_kdtree(_cmi._prepare(x, y, z, discrete=None, resolution=None,
                                                    owner="cmi"), 3)
    monkeypatch.setattr(_cmi, "_estimate_kdtree", None)  # the KD-tree path is not called
    assert math.isclose(coherence.cmi(x, y, z), expected, rel_tol=1e-12, abs_tol=1e-15)


def test_continuous_random_inputs_agree_with_reference():
    rng = np.random.default_rng(3)
    n = 120
    z = rng.normal(size=n)
    x = z + rng.normal(size=n)
    y = rng.integers(0, 3, size=n)
    assert _close(coherence.cmi(x, y, z), _ref(xc=x, y=y, zc=z))
    z2 = rng.normal(size=(n, 2))
    assert _close(coherence.cmi(x, y, z2, k=5), _ref(xc=x, y=y, zc=z2, k=5))


def test_singleton_cells_are_left_out_and_small_cells_use_infinite_radius():
    x = np.array([0, 0, 0, 1, 1, 2])
    y = np.array([0, 1, 0, 1, 1, 0])
    z = np.array([0.0, 0.5, 0.25, 1.0, 0.75, 0.5])
    assert _close(coherence.cmi(x, y, z, k=3), _ref(x=x, y=y, zc=z, k=3))
    assert math.isfinite(coherence.cmi(x, y, z, k=3))
    # every point alone in its cell: nothing to average
    assert math.isnan(coherence.cmi([0, 1, 2], [0, 1, 2], k=1))


# --------------------------------------------------------------------------- decimal grids
def test_resolution_snaps_decimal_grid_to_exact_ties():
    rng = np.random.default_rng(7)
    n = 400
    cells = rng.integers(0, 21, size=n)
    z_decimal = np.round(cells * 0.05, 12)  # 0.35 as the literal 0.35
    z_sum = cells * 0.05 + 1e-13 * rng.standard_normal(n)  # the same grid, off in the last bits
    x = rng.integers(0, 3, size=n)
    y = rng.integers(0, 2, size=n)
    exact = coherence.cmi(x, y, cells.astype(np.float64))
    assert coherence.cmi(x, y, z_decimal, resolution=0.05) == exact
    assert coherence.cmi(x, y, z_sum, resolution=0.05) == exact
    assert coherence.cmi(x, y, z_sum, resolution=1e-6) == exact
    # without snapping, floating-point noise (0.35 - 0.30 != 0.40 - 0.35 in the last bits)
    # decides who is a neighbour
    assert coherence.cmi(x, y, z_sum) != exact


# --------------------------------------------------------------------------- properties
data_case = st.integers(min_value=10, max_value=50).flatmap(
    lambda n: st.tuples(
        st.lists(st.integers(0, 2), min_size=n, max_size=n),
        st.lists(st.integers(0, 2), min_size=n, max_size=n),
        st.lists(st.integers(-5, 5), min_size=n, max_size=n),
        st.randoms(use_true_random=False),
    ))


@given(data_case)
def test_invariant_to_row_order(case):
    x, y, z, r = np.asarray(case[0]), np.asarray(case[1]), np.asarray(case[2]) * 1.0, case[3]
    perm = np.array(r.sample(range(len(x)), len(x)))
    assert _close(coherence.cmi(x, y, z), coherence.cmi(x[perm], y[perm], z[perm]))


@given(data_case)
def test_invariant_to_relabelling_and_symmetric(case):
    x, y, z = np.asarray(case[0]), np.asarray(case[1]), np.asarray(case[2]) * 1.0
    relabel = np.array(["c", "a", "b"])[x]
    value = coherence.cmi(x, y, z)
    assert _close(value, coherence.cmi(relabel, y, z))
    assert _close(value, coherence.cmi(pd.Categorical(relabel), y * 10 + 3, z))
    assert _close(value, coherence.cmi(y, x, z))


@given(data_case, st.sampled_from([0.25, 0.5, 2.0, 8.0]), st.integers(-100, 100))
def test_invariant_to_shift_and_rescale_of_z(case, scale, shift):
    x, y, z = np.asarray(case[0]), np.asarray(case[1]), np.asarray(case[2]) * 1.0
    assert _close(coherence.cmi(x, y, z), coherence.cmi(x, y, z * scale + shift))


@given(data_case)
def test_constant_z_gives_the_mutual_information(case):
    x, y = np.asarray(case[0]), np.asarray(case[1])
    assert _close(coherence.cmi(x, y, np.zeros(len(x))), coherence.mi(x, y))
    assert _close(coherence.cmi(x, y, np.zeros(len(x), dtype=np.int64)), coherence.mi(x, y))


def test_never_clipped_at_zero():
    rng = np.random.default_rng(0)
    values = [coherence.cmi(rng.integers(0, 3, 200), rng.integers(0, 2, 200),
                            rng.integers(0, 10, 200) * 0.1) for _ in range(5)]
    assert min(values) < 0.0


def _exact_discrete_cmi(p: np.ndarray) -> float:
    pz = p.sum(axis=(0, 1))
    pxz = p.sum(axis=1)
    pyz = p.sum(axis=0)
    total = 0.0
    for i, j, m in np.ndindex(p.shape):
        if p[i, j, m] > 0:
            total += p[i, j, m] * math.log(p[i, j, m] * pz[m] / (pxz[i, m] * pyz[j, m]))
    return total


def test_near_exact_value_for_a_discrete_joint_distribution():
    rng = np.random.default_rng(11)
    p = rng.dirichlet(np.ones(3 * 2 * 4)).reshape(3, 2, 4)
    n = 20000
    cells = rng.choice(p.size, size=n, p=p.ravel())
    x, y, z = np.unravel_index(cells, p.shape)
    assert coherence.cmi(x, y, z) == pytest.approx(_exact_discrete_cmi(p), abs=0.01)


@pytest.mark.parametrize("rho", [0.0, 0.5, 0.8])
def test_near_gaussian_value(rho):
    rng = np.random.default_rng(5)
    n = 5000
    z = rng.normal(size=n)
    e1, e2 = rng.normal(size=n), rng.normal(size=n)
    x = 0.5 * z + e1
    y = 0.5 * z + rho * e1 + math.sqrt(1 - rho**2) * e2  # partial correlation rho given z
    exact = -0.5 * math.log(1 - rho**2)
    # Counting marginal neighbours with <= (the mixed-data rule) instead of the strict < of
    # Frenzel-Pompe biases continuous data upwards at finite n: about +0.03 nats here
    # (docs/cmi.md). Never downwards by more than noise.
    value = coherence.cmi(x, y, z)
    assert exact - 0.01 <= value <= exact + 0.06


def test_explicit_discrete_override():
    x = np.array([0.0, 1.0, 2.0] * 20)
    y = np.array([0.0, 1.0] * 30)
    as_codes = coherence.cmi(x.astype(int), y.astype(int))
    assert coherence.cmi(x, y, discrete={"x": True, "y": [True]}) == as_codes
    assert coherence.cmi(x.astype(int), y, discrete={"x": False, "y": True}) == coherence.cmi(
        x, y, discrete={"y": True})


def test_array_layer_matches_public_layer():
    rng = np.random.default_rng(2)
    n = 50
    x, y = rng.integers(0, 2, n), rng.integers(0, 2, n)
    z = rng.random(n)
    prep = Prepared(n=n, cont={"x": E((n, 0)), "y": E((n, 0)), "z": z[:, None]},
                     disc={"x": x, "y": y, "z": np.zeros(n, dtype=np.int64)})
    assert estimate(prep, 3) == coherence.cmi(x, y, z)


# --------------------------------------------------------------------------- validation
def test_k_out_of_range():
    with pytest.raises(ValueError, match=r"The 'k' parameter of cmi must be an int in \[1, 9\]; "
                                         r"got 10\."):
        coherence.cmi(np.arange(10), np.arange(10), k=10)
    with pytest.raises(TypeError, match="The 'k' parameter of mi must be an int"):
        coherence.mi(np.arange(10), np.arange(10), k=2.5)


def test_lengths_must_match():
    with pytest.raises(ValueError, match=r"The 'y' parameter of cmi must be of the same length "
                                         r"as x \(5\); got 'length 4'\."):
        coherence.cmi(np.arange(5), np.arange(4))


def test_non_finite_continuous_values():
    with pytest.raises(ValueError, match=r"The 'z' parameter of cmi must be finite \(no NaN or "
                                         r"inf\); got 'non-finite at 1 position\(s\): 2'"):
        coherence.cmi([0, 1, 0, 1], [1, 0, 1, 0], [0.1, 0.2, np.nan, 0.3])
    # counted, and the list marked where it is cut (it read "positions [0, 1, 2, 3, 4]")
    with pytest.raises(ValueError, match=r"got 'non-finite at 7 position\(s\): 0, 1, 2, 3, 4, "
                                         r"\.\.\.'"):
        coherence.cmi([0, 1] * 4, [1, 0] * 4, [np.nan] * 7 + [0.3])


def test_missing_discrete_values():
    with pytest.raises(ValueError, match="The 'x' parameter of cmi must be free of missing"):
        coherence.cmi(pd.Series(["a", None, "b", "a"]), [0, 1, 0, 1])


def test_bad_shapes_and_overrides():
    with pytest.raises(ValueError, match="must be a 1-D or 2-D array-like"):
        coherence.cmi(np.zeros((2, 2, 2)), np.zeros(2))
    with pytest.raises(ValueError, match=r"The 'discrete\['x'\]' parameter of cmi must be None, "
                                         r"a bool or a sequence of 1 bools"):
        coherence.cmi([0, 1, 0], [0, 1, 1], discrete={"x": [True, False]})
    with pytest.raises(ValueError, match="The 'discrete' parameter of cmi must be keyed by"):
        coherence.cmi([0, 1, 0], [0, 1, 1], discrete={"w": True})
    with pytest.raises(TypeError, match="The 'discrete' parameter of cmi must be None or a "
                                        "mapping"):
        coherence.cmi([0, 1, 0], [0, 1, 1], discrete=True)
    with pytest.raises(ValueError, match=r"The 'resolution' parameter of cmi must be a finite "
                                         r"float in \(0"):
        coherence.cmi([0, 1, 0], [0, 1, 1], resolution=0.0)
    with pytest.raises(ValueError, match="The 'x' parameter of mi must be of length >= 2"):
        coherence.mi([0], [1])
    with pytest.raises(ValueError, match="The 'x' parameter of cmi must be numeric when "
                                         "continuous"):
        coherence.cmi(["a", "b", "c"], [0, 1, 0], discrete={"x": False})


# --------------------------------------------------------------------------- large-n paths
def _sorted_inputs(c, x, y, z):
    """The kernel's inputs (points sorted by c) for a continuous c in the z space."""
    from coherence._decision._cmi import Prepared
    from coherence._decision._cmi import keys_1d
    from coherence._decision._cmi import psi_table
    from coherence._decision._kernels_cmi import sorted_keys

    n = len(c)
    empty = np.empty((n, 0))
    keys = keys_1d(Prepared(n=n, cont={"x": empty, "y": empty, "z": c[:, None]},
                            disc={"x": x, "y": y, "z": z}))
    order = np.argsort(keys.c, kind="stable")
    return (*sorted_keys(order, keys.c, keys.kxyz, keys.kxz, keys.kyz, keys.kz), keys.has_c,
            3, psi_table(n))


@pytest.mark.parametrize("values", ["grid", "continuous", "one value"])
def test_parallel_chunked_passes_equal_the_serial_passes_bit_for_bit(values):
    """The parallel kernel splits every pass into chunks of CHUNK positions (strata and
    tie runs cross the chunk boundaries here); its value equals the serial kernel's."""
    import numba

    from coherence._decision._kernels_cmi import CHUNK
    from coherence._decision._kernels_cmi import cmi_sorted
    from coherence._decision._kernels_cmi import cmi_sorted_parallel

    gen = np.random.default_rng(3)
    n = 2 * CHUNK + 4321
    c = {"grid": gen.integers(0, 21, n) * 0.05, "continuous": gen.standard_normal(n),
         "one value": np.zeros(n)}[values]
    x = (gen.random(n) < 0.3 + 0.4 * (c > c.mean())).astype(np.int64)
    y = gen.integers(0, 2, n)
    z = gen.integers(0, 7, n)  # many strata, some small
    z[:5] = 7  # a stratum of 5 points (fewer than k + 1 in the joint space)
    inputs = _sorted_inputs(c, x, y, z)
    serial = cmi_sorted(*inputs)
    for threads in (1, numba.config.NUMBA_NUM_THREADS):
        numba.set_num_threads(threads)
        try:
            assert cmi_sorted_parallel(*inputs) == serial
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    joint = np.unique(np.column_stack([x, y, z]), axis=0, return_inverse=True)[1].ravel()
    assert serial[1] == int(np.sum(np.bincount(joint)[joint] > 1))  # singletons left out


def test_public_estimate_same_value_whatever_the_number_of_threads():
    import numba

    from coherence._decision._cmi import PARALLEL_MIN_N

    gen = np.random.default_rng(5)
    n = PARALLEL_MIN_N + 999
    z = np.round(gen.random(n), 2)
    x, y = gen.random(n) < z, gen.random(n) < z
    values = []
    for threads in (1, numba.config.NUMBA_NUM_THREADS):
        numba.set_num_threads(threads)
        try:
            values.append(coherence.cmi(x, y, z))
        finally:
            numba.set_num_threads(numba.config.NUMBA_NUM_THREADS)
    assert values[0] == values[1]


def test_serial_kernel_on_a_large_sample_equals_the_unsorted_kernel():
    """cmi_1d (numba's sort, then the serial kernel) and estimate (numpy's sort, serial or
    parallel) agree; and both equal the per-point terms computed independently by the
    KD-tree path, which shares no code with the sorted kernels."""
    from coherence._decision._cmi import _estimate_kdtree
    from coherence._decision._cmi import _prepare
    from coherence._decision._cmi import keys_1d
    from coherence._decision._cmi import psi_table
    from coherence._decision._kernels_cmi import cmi_1d

    gen = np.random.default_rng(11)
    n = 150_000
    z = np.round(gen.random(n), 3)
    x = (gen.random(n) < z).astype(np.int64)
    y = gen.integers(0, 3, n)
    p = _prepare(x, y, z, discrete=None, resolution=None, owner="cmi")
    keys = keys_1d(p)
    value, used = cmi_1d(keys.c, keys.kxyz, keys.kxz, keys.kyz, keys.kz, keys.has_c, 3,
                         psi_table(n))
    assert used == n
    assert math.isclose(value, estimate(p, 3), rel_tol=1e-12, abs_tol=1e-15)
    assert math.isclose(value, _estimate_kdtree(p, 3), rel_tol=1e-9, abs_tol=1e-12)


@given(st.integers(1, 3_000_000))
def test_digamma_of_integers_equals_scipy(m):
    from scipy.special import digamma

    from coherence._decision._cmi import psi_table
    from coherence._decision._kernels_cmi import psi_int

    assert math.isclose(psi_int(psi_table(10**7), m), float(digamma(m)), rel_tol=4e-16,
                        abs_tol=1e-300)


@given(st.lists(st.integers(-(2**40), 2**40), min_size=1, max_size=60),
       st.integers(0, 1))
def test_compact_codes_equal_numpy_unique(values, narrow):
    from coherence._decision._cmi import compact

    arr = np.asarray(values, dtype=np.int64)
    if narrow:
        arr = arr % 97 - 13  # a small range: the lookup-table path
    expected = np.unique(arr, return_inverse=True)[1]
    np.testing.assert_array_equal(compact(arr), expected)


@given(st.lists(st.integers(0, 5), min_size=1, max_size=80), st.integers(0, 3),
       st.sampled_from([1, 10**9]))
def test_grouping_by_sparse_keys_equals_grouping_by_compact_keys(keys, ties, spread):
    """group_sorted sorts by key with a counting sort when the keys are compact and with
    a merge sort when they are sparse (permuted keys can span m_x * m_yz values); both
    give the same strata, members and values."""
    from coherence._decision._cmi import compact
    from coherence._decision._kernels_cmi import group_sorted

    key = np.asarray(keys, dtype=np.int64)
    cs = np.sort(np.round(np.random.default_rng(ties).random(len(key)), ties))
    dense = group_sorted(compact(key), cs)
    sparse = group_sorted(key * spread, cs)
    for a, b in zip(dense, sparse, strict=True):
        np.testing.assert_array_equal(a, b)
    members, bounds, cg = dense
    assert bounds[0] == 0 and bounds[-1] == len(key)
    for s in range(len(bounds) - 1):
        stratum = members[bounds[s]:bounds[s + 1]]
        assert len(set(key[stratum])) == 1 and np.all(np.diff(stratum) > 0)
    np.testing.assert_array_equal(cg, cs[members])


def test_pandas_inputs_with_other_indexes_are_not_paired_by_position():
    """x, y and z are paired by position: Series or frames from differently ordered or
    filtered tables raise, as in the axiom checks, instead of pairing the wrong rows (the
    same pairs, reversed in one Series, gave an MI of -0.015 against 0.945)."""
    rng = np.random.default_rng(0)
    x = rng.normal(size=300)
    y = x + 0.5 * rng.normal(size=300)
    sx = pd.Series(x)
    flipped = pd.Series(y[::-1], index=sx.index[::-1])  # the same (x, y) pairs by label
    with pytest.raises(ValueError, match=r"'y' parameter of mi must be a Series with the "
                                         r"same index as 'x'"):
        coherence.mi(sx, flipped)
    z = pd.DataFrame({"z": rng.normal(size=300)}, index=sx.index + 1000)
    with pytest.raises(ValueError, match=r"'z' parameter of cmi must be a DataFrame"):
        coherence.cmi(sx, pd.Series(y), z)
    aligned = flipped.loc[sx.index]
    assert coherence.mi(sx, aligned) == coherence.mi(x, y)  # aligned or arrays: run
    assert coherence.mi(sx, y) == coherence.mi(x, y)


def test_python_floats_held_as_objects_are_continuous():
    # a belief column of Python floats in an object Series (read from JSON, built row by
    # row) was one class per value: cmi -0.0357 against -0.0221 for the same numbers as
    # float64; the documented rule (floats are continuous) now holds however they are held
    rng = np.random.default_rng(0)
    z = np.round(rng.random(300), 1)
    x = (rng.random(300) < z).astype(int)
    y = (rng.random(300) < z).astype(int)
    expected = coherence.cmi(x, y, z)
    as_objects = pd.Series(z).astype(object)
    assert coherence.cmi(pd.Series(x), pd.Series(y), as_objects) == expected
    assert coherence.cmi(x, y, z.astype(object)) == expected
    mixed = pd.Series([0, 0.5, 1] * 100, dtype=object)  # ints and floats: numbers
    assert coherence.mi(mixed, y) == coherence.mi(mixed.astype(float).to_numpy(), y)
    # integers held as objects stay labels, and the override still rules
    assert coherence.cmi(x.astype(object), y, z) == coherence.cmi(x, y, z)
    assert coherence.cmi(x, y, as_objects, discrete={"z": True}) == coherence.cmi(
        x, y, z, discrete={"z": True})


def test_float32_values_are_read_as_their_decimals():
    # before: float32 0.07 became 0.0700000003 in float64, moving the distances and ties
    # of grid values (0.0201 against 0.0189 for the same values in float64)
    rng = np.random.default_rng(0)
    n = 300
    x = rng.integers(0, 3, n)
    z = rng.random(n).round(2)
    y = (rng.random(n) < z).astype(int)
    z2 = np.column_stack([z, rng.random(n).round(1)])
    want = coherence.cmi(x, y, z)
    assert coherence.cmi(x, y, z.astype(np.float32)) == want
    assert coherence.cmi(x, y, pd.Series(z, dtype="float32")) == want
    assert coherence.cmi(x, y, pd.Series(z, dtype="Float32")) == want
    want2 = coherence.cmi(x, y, z2)
    assert coherence.cmi(x, y, z2.astype(np.float32)) == want2
    assert coherence.cmi(x, y, pd.DataFrame(z2).astype("float32")) == want2
    assert coherence.mi(z.astype(np.float32), y) == coherence.mi(z, y)
    assert coherence.mi(x, z.astype(np.float32)) == coherence.mi(x, z)


@pytest.mark.parametrize("as_series", [False, True])
def test_complex_values_raise_instead_of_losing_their_imaginary_part(as_series):
    """Complex values were cast to float64, the imaginary part dropped with a numpy
    warning: mi(x, x.imag) was about -0.01 on 200 points, that of two independent
    variables."""
    gen = np.random.default_rng(0)
    x = gen.normal(size=200) + 1j * gen.normal(size=200)
    values = pd.Series(x) if as_series else x
    with pytest.raises(ValueError, match="real numbers"):
        coherence.mi(values, x.imag)


@pytest.mark.parametrize(("odd", "found"), [
    ("No", "'No' / 'no'"), ("no ", "'no ' / 'no'"),
])
def test_discrete_labels_typed_two_ways_raise(odd, found):
    """A discrete label written two ways ('no' and 'No', or beside the number it reads
    as) was coded as two labels, moving the estimate without a word (mi -0.0120 against
    -0.0121 for 'No' on every other 'no'); it raises as in the tests' columns."""
    rng = np.random.default_rng(0)
    z = rng.uniform(size=300).round(2)
    x = np.where(rng.uniform(size=300) < z, "yes", "no").astype(object)
    y = (rng.uniform(size=300) < z).astype(int)
    clean = coherence.cmi(x, y, z)
    assert np.isfinite(clean)
    typed = x.copy()
    typed[(typed == "no") & (np.arange(300) % 2 == 0)] = odd
    with pytest.raises(ValueError, match=rf"Column 'x' \(input to cmi\).*{found}"):
        coherence.cmi(typed, y, z)
    with pytest.raises(ValueError, match=r"Column 'y' \(input to mi\).*'1' / 1"):
        coherence.mi(y, np.array([str(v) if i % 2 else int(v) for i, v in enumerate(y)],
                                 dtype=object))
    with pytest.raises(ValueError, match=r"Column 'y' \(input to mi\).*booleans or numbers"):
        coherence.mi(y, np.array([bool(v) if i % 2 else int(v) for i, v in enumerate(y)],
                                 dtype=object))
