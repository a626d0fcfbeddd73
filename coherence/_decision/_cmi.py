"""The mixed-data kNN estimator of (conditional) mutual information.

Public: :func:`cmi` and :func:`mi`. The array layer (``_prepare``,
``estimate``) is what :mod:`coherence._decision._citest`, the tests and the benchmarks
call directly.
"""

from __future__ import annotations

from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np

from .._parameters import check_float
from .._parameters import check_int
from .._validation import check_case_distinct
from .._validation import listed
from .._validation import narrow_float_decimals
from .._validation import param_error
from .._validation import same_index

__all__ = ["cmi", "mi"]

_ROLES = ("x", "y", "z")


@dataclass(frozen=True, slots=True)
class Prepared:
    """Validated arrays of one estimation problem (array layer).

    ``cont[role]`` is a float64 matrix (n, d_role) of continuous coordinates,
    ``disc[role]`` an int64 vector of compact codes of the role's discrete
    coordinates combined (all zeros when it has none).
    """

    n: int
    cont: dict[str, np.ndarray]
    disc: dict[str, np.ndarray]

    @property
    def n_continuous(self) -> int:
        return sum(m.shape[1] for m in self.cont.values())


# --------------------------------------------------------------------------- input
def _columns(value: Any, role: str, owner: str) -> list[tuple[np.ndarray, bool]]:
    """Split an array-like into columns, each with its inferred discreteness."""
    import pandas as pd

    from ._design import holds_python_floats

    if isinstance(value, pd.Series):
        frame = value.to_frame()
    elif isinstance(value, pd.DataFrame):
        frame = value
    else:
        arr = np.asarray(value)
        if arr.ndim == 0 or arr.ndim > 2:
            raise ValueError(param_error(role, owner, "a 1-D or 2-D array-like",
                                         f"an array of shape {arr.shape}"))
        if arr.ndim == 1:
            arr = arr[:, None]
        if arr.dtype.kind == "f" and arr.dtype.itemsize < 8:
            # float32 0.7 is 0.699999988 in float64: read as the decimal it prints as, so
            # that float32 data give the distances (and ties) of the same values in float64
            arr = arr.astype(str).astype(np.float64)
        if arr.dtype.kind in "biuf":  # plain numeric arrays: no pandas round trip
            return [(arr[:, j], arr.dtype.kind != "f") for j in range(arr.shape[1])]
        frame = pd.DataFrame({j: arr[:, j] for j in range(arr.shape[1])})
    out = []
    for name in frame.columns:
        s = frame[name]
        dtype = s.dtype
        discrete = not (pd.api.types.is_float_dtype(dtype) or holds_python_floats(s)
                        or pd.api.types.is_complex_dtype(dtype))
        decimals = narrow_float_decimals(s)  # float32 read as its decimals, as above
        out.append((s.to_numpy() if decimals is None else decimals, discrete))
    return out


def _discreteness(spec: Any, role: str, n_cols: int, owner: str) -> list[bool | None]:
    if spec is None:
        return [None] * n_cols
    if isinstance(spec, bool | np.bool_):
        return [bool(spec)] * n_cols
    if isinstance(spec, Sequence) and not isinstance(spec, str) and len(spec) == n_cols \
            and all(isinstance(v, bool | np.bool_) for v in spec):
        return [bool(v) for v in spec]
    raise ValueError(param_error(f"discrete[{role!r}]", owner,
                                 f"None, a bool or a sequence of {n_cols} bools", spec))


def _prepare(x: Any, y: Any, z: Any, *, discrete: Any, resolution: float | None,
             owner: str) -> Prepared:
    """Validate and convert x, y, z (the ``_iv`` of :func:`cmi`)."""

    if discrete is None:
        discrete = {}
    if not isinstance(discrete, Mapping):
        raise TypeError(param_error("discrete", owner, "None or a mapping from 'x', 'y', 'z' "
                                    "to a bool or a sequence of bools", discrete))
    unknown = sorted(set(discrete) - set(_ROLES))
    if unknown:
        raise ValueError(param_error("discrete", owner, "keyed by 'x', 'y' or 'z'",
                                     unknown[0]))
    same_index(owner, x=x, y=y, z=z)  # paired by position: never two orders silently
    cont: dict[str, np.ndarray] = {}
    disc: dict[str, np.ndarray] = {}
    n: int | None = None
    for role, value in zip(_ROLES, (x, y, z), strict=True):
        if value is None:
            cols = []
        else:
            cols = _columns(value, role, owner)
            if n is None:
                n = len(cols[0][0])
            elif len(cols[0][0]) != n:
                raise ValueError(param_error(role, owner, f"of the same length as x ({n})",
                                             f"length {len(cols[0][0])}"))
        flags = _discreteness(discrete.get(role), role, len(cols), owner)
        c_cols: list[np.ndarray] = []
        codes: list[np.ndarray] = []
        for j, ((values, inferred), flag) in enumerate(zip(cols, flags, strict=True)):
            is_disc = inferred if flag is None else flag
            label = role if len(cols) == 1 else f"{role}[:, {j}]"
            if is_disc:
                codes.append(_discrete_codes(values, label, owner))
            else:
                c_cols.append(_continuous_column(values, label, owner, resolution))
        m = n or 0
        cont[role] = (np.column_stack(c_cols) if c_cols else np.empty((m, 0)))
        disc[role] = combine(codes, m)
    if n is None:
        raise ValueError(param_error("x", owner, "an array-like", None))
    if x is None or y is None:
        raise ValueError(param_error("x" if x is None else "y", owner, "an array-like", None))
    return Prepared(n=n, cont={r: np.ascontiguousarray(v) for r, v in cont.items()}, disc=disc)


def _discrete_codes(values: np.ndarray, label: str, owner: str) -> np.ndarray:
    """Codes 0..m-1 of a discrete column; labels other than plain numbers must be
    present and written one way."""
    import pandas as pd

    plain = values.dtype.kind in "biu" or (
        values.dtype.kind == "f" and bool(np.all(np.isfinite(values))))
    if plain:
        return (compact(values) if values.dtype.kind in "biu"
                else np.unique(values, return_inverse=True)[1].astype(np.int64))
    series = pd.Series(values)
    missing = np.flatnonzero(series.isna().to_numpy())
    if len(missing):
        raise ValueError(param_error(label, owner, "free of missing values",
                                     f"missing at {len(missing)} position(s): "
                                     f"{listed(missing)}"))
    # 'no' and 'No ', 1 and '1', True and 1: one label typed two ways, which
    # coded as two (or, True and 1, pooled) would change the estimate silently
    check_case_distinct(pd.DataFrame({label: series}), label, owner=owner)
    code, _ = pd.factorize(series, sort=True)
    return code.astype(np.int64)


def _continuous_column(values: np.ndarray, label: str, owner: str,
                       resolution: float | None) -> np.ndarray:
    """A continuous column as finite floats (divided by ``resolution`` and rounded when
    one is given)."""
    if np.asarray(values).dtype.kind == "c":  # the cast would drop the imaginary part
        raise ValueError(param_error(label, owner, "real numbers",
                                     f"dtype {np.asarray(values).dtype}"))
    try:
        arr = np.asarray(values, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(param_error(label, owner, "numeric when continuous",
                                     f"dtype {np.asarray(values).dtype}")) from exc
    bad = np.flatnonzero(~np.isfinite(arr))
    if len(bad):
        raise ValueError(param_error(label, owner, "finite (no NaN or inf)",
                                     f"non-finite at {len(bad)} position(s): "
                                     f"{listed(bad)}"))
    if resolution is not None:
        arr = np.round(arr / resolution)
    return arr


def compact(values: np.ndarray) -> np.ndarray:
    """Codes 0..m-1 of integer ``values`` in sorted order (``np.unique``'s inverse).

    O(n) through a lookup table when the values span a range of at most 4n, else
    ``np.unique`` (a sort)."""
    values = np.asarray(values)
    n = len(values)
    if n == 0:
        return np.zeros(0, dtype=np.int64)
    low, high = int(values.min()), int(values.max())
    if high - low > 4 * n + 1024:
        return np.ascontiguousarray(np.unique(values, return_inverse=True)[1], dtype=np.int64)
    shifted = values.astype(np.int64) - low
    present = np.zeros(high - low + 1, dtype=np.int64)
    present[shifted] = 1
    lookup = np.cumsum(present) - 1
    return np.ascontiguousarray(lookup[shifted])


def combine(codes: list[np.ndarray], n: int) -> np.ndarray:
    """Compact codes (0..m-1) of the combination of several code vectors."""
    if not codes:
        return np.zeros(n, dtype=np.int64)
    out = compact(codes[0])
    for extra in codes[1:]:
        out = compact(out * (int(extra.max(initial=0)) + 1) + extra)
    return out


#: Entries of the digamma table handed to the kernels; larger counts use the
#: asymptotic series of :func:`._kernels_cmi.psi_int` (exact to a unit in the last place).
PSI_TABLE_SIZE = 4096


def psi_table(n: int) -> np.ndarray:
    """Digamma of 0..min(n, PSI_TABLE_SIZE) (``-inf`` at 0), for :func:`._kernels_cmi.psi_int`."""
    from scipy.special import digamma

    m = min(n, PSI_TABLE_SIZE)
    table = np.empty(m + 1)
    table[0] = -np.inf
    table[1:] = digamma(np.arange(1, m + 1, dtype=np.float64))
    return table


@dataclass(frozen=True, slots=True)
class _Keys:
    """Inputs of the one-continuous-coordinate kernels."""

    c: np.ndarray
    kxyz: np.ndarray
    kxz: np.ndarray
    kyz: np.ndarray
    kz: np.ndarray
    has_c: np.ndarray


def keys_1d(p: Prepared) -> _Keys:
    """Keys of the four spaces when at most one coordinate is continuous."""
    where = [r for r in _ROLES if p.cont[r].shape[1]]
    c = p.cont[where[0]][:, 0].copy() if where else np.zeros(p.n)
    dx, dy, dz = p.disc["x"], p.disc["y"], p.disc["z"]
    kz = dz
    kxz = combine([dx, dz], p.n)
    kyz = combine([dy, dz], p.n)
    kxyz = combine([dx, kyz], p.n)
    in_x, in_y, in_z = (bool(where) and where[0] == r for r in _ROLES)
    has_c = np.array([bool(where), in_x or in_z, in_y or in_z, in_z])
    return _Keys(np.ascontiguousarray(c), kxyz, kxz, kyz, kz, has_c)


#: Below this many points one estimate runs serially: the parallel passes only pay
#: for their thread start-up above it (measured in ``benchmarks/bench_speed.py``).
PARALLEL_MIN_N = 200_000


#: The kernel of several continuous coordinates in z runs while ``n * 10**(d - 2)`` is at
#: most this (d of them): its windows on one coordinate grow as sqrt(n) per point, and
#: the KD-trees' cost grows more slowly in n and less steeply in d. Measured
#: (``benchmarks/bench_cmi_nd.py``, docs/speed.md): the kernel was 1.8x faster at
#: n = 10^6 with 2 coordinates, 1.1x at 10^5 with 3, 1.35x at 3 x 10^4 with 4.
Z_KERNEL_MAX = 1_000_000


def estimate(p: Prepared, k: int) -> float:
    """The Mesner-Shalizi estimate (dispatches to the 1-D kernel, the kernel of several
    continuous coordinates in z, or the KD-tree path).

    With at most one continuous coordinate, the points are sorted by it here
    (numpy's sort), then the kernel runs serially below :data:`PARALLEL_MIN_N`
    points or with one numba thread, and on numba's threads above; both paths
    give the same value to the last bit.
    """
    if p.n_continuous <= 1:
        import numba

        from . import _kernels_cmi as _kernels

        keys = keys_1d(p)
        order = np.argsort(keys.c)  # ties in any order: the estimate does not see it
        parallel = p.n >= PARALLEL_MIN_N and numba.get_num_threads() > 1
        gather: Any = _kernels.sorted_keys_parallel if parallel else _kernels.sorted_keys
        kernel: Any = _kernels.cmi_sorted_parallel if parallel else _kernels.cmi_sorted
        has_c = keys.has_c
        inputs = gather(order, keys.c, keys.kxyz, keys.kxz, keys.kyz, keys.kz)
        del keys, order  # only the sorted copies from here on (memory at large n)
        value, _ = kernel(*inputs, has_c, k, psi_table(p.n))
        return float(value)
    in_z_only = not p.cont["x"].shape[1] and not p.cont["y"].shape[1]
    if in_z_only and p.n * 10 ** (p.cont["z"].shape[1] - 2) <= Z_KERNEL_MAX:
        return _estimate_z_continuous(p, k)
    return _estimate_kdtree(p, k)


def _estimate_z_continuous(p: Prepared, k: int) -> float:
    """Several continuous coordinates, all in z (x and y discrete): the numba kernel of
    :mod:`._kernels_cmi_nd` on the points sorted by (z's key, the coordinate with the
    most distinct values, put first); the value of :func:`_estimate_kdtree` up to the
    rounding of the mean."""
    from ._kernels_cmi_nd import cmi_z_continuous

    kernel: Any = cmi_z_continuous
    dx, dy, dz = p.disc["x"], p.disc["y"], p.disc["z"]
    kyz = combine([dy, dz], p.n)
    keys = (combine([dx, kyz], p.n), combine([dx, dz], p.n), kyz, dz)
    zc = p.cont["z"]
    # the sweeps' windows are on the first coordinate: the one with the most distinct
    # values (a belief on a grid ties often; the max norm ignores the columns' order)
    spread = [len(np.unique(zc[:, j])) for j in range(zc.shape[1])]
    zc = zc[:, np.argsort(spread, kind="stable")[::-1]]
    order = np.lexsort((zc[:, 0], dz))
    value, _ = kernel(np.ascontiguousarray(zc[order]),
                      *(np.ascontiguousarray(key[order]) for key in keys), k, psi_table(p.n))
    return float(value)


def _estimate_kdtree(p: Prepared, k: int) -> float:
    """Several continuous coordinates: Chebyshev KD-trees inside discrete strata."""
    from scipy.spatial import cKDTree

    n = p.n
    dx, dy, dz = p.disc["x"], p.disc["y"], p.disc["z"]
    spaces = {
        "xyz": (combine([dx, dy, dz], n), np.hstack([p.cont["x"], p.cont["y"], p.cont["z"]])),
        "xz": (combine([dx, dz], n), np.hstack([p.cont["x"], p.cont["z"]])),
        "yz": (combine([dy, dz], n), np.hstack([p.cont["y"], p.cont["z"]])),
        "z": (dz, p.cont["z"]),
    }
    rho = np.empty(n)
    counts: dict[str, np.ndarray] = {}
    for name, (key, coords) in spaces.items():
        cnt = np.empty(n, dtype=np.int64)
        order = np.argsort(key, kind="stable")
        bounds = np.flatnonzero(np.diff(key[order])) + 1
        for rows in np.split(order, bounds):
            size = len(rows)
            if coords.shape[1] == 0:
                if name == "xyz":
                    rho[rows] = 0.0 if size - 1 >= k else np.inf
                cnt[rows] = size - 1
                continue
            pts = coords[rows]
            tree = cKDTree(pts)
            if name == "xyz":
                if size - 1 < k:
                    rho[rows] = np.inf
                else:
                    dist, _ = tree.query(pts, k=[k + 1], p=np.inf)
                    rho[rows] = dist[:, 0]
            r = rho[rows]
            finite = np.isfinite(r)
            cnt_rows = np.full(size, size - 1, dtype=np.int64)
            if finite.any():
                cnt_rows[finite] = tree.query_ball_point(pts[finite], r[finite], p=np.inf,
                                                         return_length=True) - 1
            cnt[rows] = cnt_rows
        counts[name] = cnt
    from scipy.special import digamma

    used = counts["xyz"] > 0
    if not used.any():
        return float("nan")
    terms = sum(sign * digamma(counts[name][used].astype(np.float64))
                for name, sign in (("xyz", 1.0), ("xz", -1.0), ("yz", -1.0), ("z", 1.0)))
    return float(np.mean(terms))


def _check_k(k: Any, n: int, owner: str) -> int:
    return check_int(k, "k", owner, low=1, high=max(1, n - 1))


def _check_resolution(resolution: Any, owner: str) -> float | None:
    if resolution is None:
        return None
    return check_float(resolution, "resolution", owner, low=0.0, low_open=True)


# --------------------------------------------------------------------------- public
def cmi(x: Any, y: Any, z: Any = None, *, k: int = 3,
        discrete: Mapping[str, bool | Sequence[bool]] | None = None,
        resolution: float | None = None) -> float:
    r"""Conditional mutual information I(x ; y | z) in nats, by k nearest neighbours.

    The mixed-data estimator of Mesner and Shalizi (2021): continuous,
    discrete and mixed coordinates, with ties, in any combination.

    Parameters
    ----------
    x, y : array-like, shape (n,) or (n, d)
        The two variables; columns are dimensions.
    z : array-like, shape (n,) or (n, d), optional
        The conditioning variable; ``None`` gives the mutual information. The
        variables are paired by position: pandas Series or DataFrames among them
        must share one index (else ``ValueError``; align them, or pass arrays).
    k : int
        Number of neighbours, in [1, n - 1].
    discrete : mapping, optional
        Override of the inferred column types: ``{'z': False}`` or
        ``{'x': [True, False]}``. By default a column is discrete when its
        dtype is integer, bool, categorical, string or object, continuous when
        it is floating or holds Python floats as objects (alone or with
        integers). Discrete labels typed two ways (``'no'`` and ``'No '``,
        ``1`` and ``'1'``, ``True`` and ``1``) raise ``ValueError``.
    resolution : float, optional
        Snap every continuous coordinate to integer multiples of
        ``resolution`` before distances are taken (``round(v / resolution)``),
        so that values on a decimal grid (0.05, 0.1, ...) have exactly equal
        distances. ``None`` (default): distances in floating point as given (a
        float32 value read as the decimal it prints as: ``float32(0.7)`` is 0.7).

    Returns
    -------
    float
        The estimate in nats. It can be negative (it is never clipped at 0).

    See Also
    --------
    mi : the unconditional mutual information.
    ci_test : the calibrated test of I(action; outcome | belief) = 0.

    Notes
    -----
    Distances use the maximum norm over continuous coordinates; discrete
    coordinates must match exactly (points that differ in a discrete
    coordinate are infinitely far apart). For each point :math:`i`,
    :math:`\rho_i` is the distance to its k-th nearest other point in the
    joint space (x, y, z), :math:`\tilde k_i` the number of other points at
    distance :math:`\le \rho_i` in the joint space (all tied points count, so
    :math:`\tilde k_i \ge k`), and :math:`n_{xz,i}`, :math:`n_{yz,i}`,
    :math:`n_{z,i}` the numbers of other points at distance :math:`\le \rho_i`
    in the marginal spaces (:math:`n_{z,i} = n - 1` without z). The estimate is

    .. math::

        \hat I(x; y \mid z) = \frac{1}{n} \sum_i \left[\psi(\tilde k_i)
        - \psi(n_{xz,i}) - \psi(n_{yz,i}) + \psi(n_{z,i})\right].

    When a point's discrete cell in the joint space has fewer than k other
    points, :math:`\rho_i = \infty` and its neighbours are the points of its
    cell; a point alone in its cell has no neighbour and is left out of the
    mean. On continuous data without ties this is the Frenzel-Pompe / KSG
    estimator; on discrete data it is a digamma-corrected plug-in.

    With at most one continuous coordinate (the main case: z is a belief,
    plus discrete evidence) an O(n log n) sort-based numba kernel is used;
    with several, Chebyshev KD-trees (:class:`scipy.spatial.cKDTree`) inside
    the discrete strata.

    References
    ----------
    * Mesner, O. C. and Shalizi, C. R. (2021). Conditional mutual
      information estimation for mixed, discrete and continuous data. IEEE
      Transactions on Information Theory 67(1), 464-484.
    * Gao, W., Kannan, S., Oh, S. and Viswanath, P. (2017). Estimating
      mutual information for discrete-continuous mixtures. NeurIPS 30.
    * Frenzel, S. and Pompe, B. (2007). Partial mutual information for
      coupling analysis of multivariate time series. Physical Review Letters
      99, 204101.
    * Kraskov, A., Stoegbauer, H. and Grassberger, P. (2004). Estimating
      mutual information. Physical Review E 69, 066138.

    Examples
    --------
    >>> import numpy as np
    >>> import coherence
    >>> rng = np.random.default_rng(0)
    >>> z = rng.integers(0, 21, size=2000) * 0.05  # beliefs on a 0.05 grid
    >>> x = rng.random(2000) < z  # two events that depend on z only
    >>> y = rng.random(2000) < z
    >>> round(coherence.cmi(x, y, z, resolution=0.05), 3)  # independent given z
    -0.008
    >>> round(coherence.mi(x, y), 3)  # but dependent marginally
    0.064
    """
    return _validated_estimate(x, y, z, k=k, discrete=discrete, resolution=resolution,
                               owner="cmi")


def mi(x: Any, y: Any, *, k: int = 3,
       discrete: Mapping[str, bool | Sequence[bool]] | None = None,
       resolution: float | None = None) -> float:
    r"""Mutual information I(x ; y) in nats, by k nearest neighbours.

    :func:`cmi` without a conditioning variable (the mixed-data estimator of
    Gao et al. 2017 in the form of Mesner and Shalizi 2021, with
    :math:`\psi(n - 1)` in place of :math:`\psi(n_{z,i})`); see :func:`cmi`
    for the parameters, tie handling and references.

    See Also
    --------
    cmi : the conditional mutual information.
    ci_test : the calibrated test of I(action; outcome | belief) = 0.

    Examples
    --------
    >>> import numpy as np
    >>> import coherence
    >>> x = np.repeat([0, 1], 500)
    >>> round(coherence.mi(x, x), 3)  # psi(999) - psi(499), close to log 2 = 0.693
    0.695
    """
    return _validated_estimate(x, y, None, k=k, discrete=discrete, resolution=resolution,
                               owner="mi")


def _validated_estimate(x: Any, y: Any, z: Any, *, k: Any,
                        discrete: Mapping[str, bool | Sequence[bool]] | None,
                        resolution: Any, owner: str) -> float:
    """Validate the inputs of :func:`cmi` / :func:`mi` (``z=None``) and estimate."""
    resolution = _check_resolution(resolution, owner)
    p = _prepare(x, y, z, discrete=discrete, resolution=resolution, owner=owner)
    if p.n < 2:
        raise ValueError(param_error("x", owner, "of length >= 2", f"length {p.n}"))
    k = _check_k(k, p.n, owner)
    return estimate(p, k)
