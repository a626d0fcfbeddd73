"""Exact posteriors by variable elimination, many evidence rows at once.

Rows are grouped by the set of variables they observe. For each set ``E``
shared by many rows the joint table ``P(target, E)`` is computed once by
variable elimination over the ancestors of ``{target} | E`` (every other
variable is barren and sums out to one); each row's posterior is then a lookup
and a normalisation. Joint tables are cached on the :class:`~bayesnets.Network`.
Rows of rare evidence sets are answered together by one batched elimination in
which the evidence enters as 0/1 likelihood vectors with a row axis.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Mapping
from collections.abc import Sequence
from typing import Any

import numpy as np
import pandas as pd

from coherence._validation import as_dataframe
from coherence._validation import listed
from coherence._validation import param_error
from coherence._validation import plain_repr

from ._network import Network
from ._network import as_network
from ._network import variable_names

__all__ = ["auxiliary", "joint_table", "posterior"]

# Above this many cells a joint table over (target, evidence set) is not built;
# rows are then answered one distinct evidence assignment at a time.
_MAX_JOINT_CELLS = 2_000_000
_MAX_CACHE = 256


# --------------------------------------------------------------------------- engine
def _einsum(operands: list[tuple[tuple[str, ...], np.ndarray]],
            out: tuple[str, ...]) -> np.ndarray:
    """Multiply factors and sum out every variable not in ``out`` (labels local to the call)."""
    labels: dict[str, int] = {}
    for scope, _ in operands:
        for v in scope:
            labels.setdefault(v, len(labels))
    for v in out:
        labels.setdefault(v, len(labels))
    if len(labels) > 52:
        raise ValueError(f"An elimination step spans {len(labels)} variables (at most 52 are "
                         "supported); query fewer evidence variables at once.")
    args: list[Any] = []
    for scope, table in operands:
        args.extend([table, [labels[v] for v in scope]])
    args.append([labels[v] for v in out])
    return np.einsum(*args)


class _TooLarge(Exception):
    """An elimination step would build a table above the cell budget."""


_ROWS = "\x00rows"  # the batch axis of soft evidence: never a variable name


def _eliminate(net: Network, query: tuple[str, ...],
               evidence: Mapping[str, int] | None = None,
               soft: Mapping[str, np.ndarray] | None = None,
               max_cells: float = math.inf) -> np.ndarray:
    """P(query variables [, evidence]) as an array with axes in ``query`` order.

    With ``evidence`` (variable -> state code, disjoint from ``query``) the CPTs
    are sliced first, giving the unnormalised P(query, evidence). With ``soft``
    (variable -> array (m, n_states) of 0/1 likelihoods, all ones where the
    variable is unobserved) every row of a batch is answered in one elimination:
    the result has a leading axis of length m holding P(query, evidence of row).
    Raises _TooLarge when a step would build more than ``max_cells`` cells.
    """
    evidence = evidence or {}
    soft = soft or {}
    relevant = net.ancestors([*query, *evidence, *soft])
    factors = _sliced_factors(net, relevant, evidence)
    # sizes as exact integers: a float sum of logs over a set depends on the set's iteration
    # order (string hashing, so the process), and an ulp there broke ties between equal-size
    # eliminations differently from one process to the next (posteriors then differed in
    # their last bit between runs)
    card = {v: net.cardinality(v) for v in relevant}
    out = query
    if soft:
        out = (_ROWS, *query)
        for v, lam in soft.items():
            factors.append(((_ROWS, v), lam))
        card[_ROWS] = max(len(next(iter(soft.values()))), 1)
    keep = set(out)
    to_eliminate = {v for v in relevant if v not in keep and v not in evidence}
    return _einsum(_min_weight_elimination(factors, card, to_eliminate, max_cells), out)


def _sliced_factors(net: Network, relevant: set[str] | Sequence[str],
                    evidence: Mapping[str, int]) -> list[tuple[tuple[str, ...], np.ndarray]]:
    """The CPTs of the relevant variables as (scope, table) factors, sliced at the
    evidence (an observed variable leaves the scope)."""
    factors: list[tuple[tuple[str, ...], np.ndarray]] = []
    for v in net.variables:
        if v not in relevant:
            continue
        scope = (v, *net.parents[v])
        table = net.cpts[v]
        if evidence and any(u in evidence for u in scope):
            index = tuple(evidence[u] if u in evidence else slice(None) for u in scope)
            table = table[index]
            scope = tuple(u for u in scope if u not in evidence)
        factors.append((scope, table))
    return factors


def _min_weight_elimination(factors: list[tuple[tuple[str, ...], np.ndarray]],
                            card: dict[str, int], to_eliminate: set[str],
                            max_cells: float) -> list[tuple[tuple[str, ...], np.ndarray]]:
    """Sum the variables ``to_eliminate`` out of the factors, greedily the one whose
    elimination builds the smallest table first; return the factors left.
    Raises _TooLarge when a step would build more than ``max_cells`` cells."""
    # the interaction graph: variables sharing a factor are neighbours
    nbrs: dict[str, set[str]] = {v: set() for v in card}
    holders: dict[str, list[int]] = {v: [] for v in card}
    for k, (scope, _) in enumerate(factors):
        for u in scope:
            nbrs[u].update(scope)
            holders[u].append(k)
    alive = [True] * len(factors)
    weight = {v: math.prod(card[u] for u in nbrs[v]) for v in to_eliminate}
    while to_eliminate:
        # greedy min-weight: the variable whose elimination builds the smallest table
        best = min(to_eliminate, key=lambda v: (weight[v], v))  # ties: by name
        if weight[best] > max_cells:
            raise _TooLarge
        involved_ids = [k for k in holders[best] if alive[k]]
        involved = [factors[k] for k in involved_ids]
        for k in involved_ids:
            alive[k] = False
        new_scope = tuple(sorted(u for u in nbrs[best] if u != best))
        factors.append((new_scope, _einsum(involved, new_scope)))
        alive.append(True)
        to_eliminate.discard(best)
        for u in new_scope:
            nbrs[u].update(new_scope)
            nbrs[u].discard(best)
            holders[u].append(len(factors) - 1)
            if u in weight:
                weight[u] = math.prod(card[w] for w in nbrs[u])
    return [f for f, a in zip(factors, alive, strict=True) if a]


def joint_table(model: Any, variables: Sequence[str]) -> np.ndarray:
    """The exact joint distribution of some variables of a network.

    Computed exactly from the network's tables and cached on the network, so a second
    call for the same variables costs nothing.

    Parameters
    ----------
    model : Network, str or pgmpy DiscreteBayesianNetwork
        The network (a bundled name is loaded with :func:`bayesnets.load`).
    variables : sequence of str
        Distinct variables of the network.

    Returns
    -------
    numpy.ndarray
        ``P(variables)``, one axis per variable in the order given, states in
        the network's order (read-only; cached on the network).

    See Also
    --------
    posterior : exact conditionals for many evidence rows.

    Examples
    --------
    >>> import bayesnets
    >>> table = bayesnets.joint_table("asia", ["smoke", "lung"])
    >>> round(float(table.sum()), 12)
    1.0
    """
    net = as_network(model, "joint_table")
    query = variable_names(variables, "variables", "joint_table")
    if not query:
        raise ValueError(param_error("variables", "joint_table", "a non-empty sequence of "
                                     "variable names", variables))
    for v in query:
        net.check_variable(v, "variables", "joint_table")
    if len(set(query)) != len(query):
        raise ValueError(param_error("variables", "joint_table", "free of duplicates", query))
    return cached_joint(net, query)


def cached_joint(net: Network, query: tuple[str, ...]) -> np.ndarray:
    joints = net._cache.setdefault("joints", OrderedDict())
    table = joints.get(query)
    if table is None:
        table = np.ascontiguousarray(_eliminate(net, query))
        table.setflags(write=False)
        if len(joints) >= _MAX_CACHE:
            joints.popitem(last=False)
        joints[query] = table
    return table


# --------------------------------------------------------------------------- evidence
def _is_missing(value: Any) -> bool:
    if value is None:
        return True
    try:
        return bool(pd.isna(value))
    except (TypeError, ValueError):
        return False


def _evidence_codes(net: Network, df: pd.DataFrame, owner: str,
                    exclude: Sequence[str]) -> tuple[list[str], np.ndarray]:
    """Evidence states as codes (-1 = not observed), validated at the door."""
    columns = list(df.columns)
    for c in columns:
        if not isinstance(c, str) or c not in net.index:
            known = listed(net.variables, 40)
            raise ValueError(f"{owner}: evidence column {c!r} is not a variable of network "
                             f"'{net.name}'; its variables: {known}.")
        if c in exclude:
            raise ValueError(f"{owner}: evidence column {c!r} is also the target (or the "
                             "auxiliary variable); drop it from the evidence.")
    codes = np.full((len(df), len(columns)), -1, dtype=np.int64)
    for j, c in enumerate(columns):
        values = df[c].to_numpy(dtype=object)
        for i, value in enumerate(values):
            if _is_missing(value):
                continue
            try:
                codes[i, j] = net._code(c, value)
            except (KeyError, TypeError):
                raise ValueError(
                    f"Column '{c}' (input to {owner}) must hold states of variable '{c}' ("
                    f"{', '.join(map(repr, net.states[c]))}); unknown state {value!r} in row "
                    f"{df.index[[i]].tolist()[0]!r}{net._bool_hint(c, value)}.") from None
    return columns, codes


_GROUP_MIN_ROWS = 16  # an evidence pattern with fewer rows joins the batched rows
_BATCH_ROWS = 512
_MAX_BATCH_CELLS = 2e7


def _grouped(net: Network, query: tuple[str, ...], columns: list[str], sub_codes: np.ndarray,
             pattern: np.ndarray, qshape: tuple[int, ...]) -> np.ndarray:
    """Rows sharing one evidence pattern: one joint table P(query, E), then lookups."""
    ecols = np.flatnonzero(pattern)
    evars = [columns[j] for j in ecols]
    ecards = [net.cardinality(v) for v in evars]
    sub = sub_codes[:, ecols]
    if math.prod(qshape) * math.prod(ecards) <= _MAX_JOINT_CELLS:
        joint = cached_joint(net, (*query, *evars))
        flat = joint.reshape(*qshape, -1)
        if evars:
            cell = np.ravel_multi_index(tuple(sub.T), ecards)
            return np.moveaxis(flat[..., cell], -1, 0)
        return np.broadcast_to(flat[..., 0], (len(sub), *qshape))
    # one elimination per distinct assignment, with the evidence sliced in
    distinct, back = np.unique(sub, axis=0, return_inverse=True)
    parts = np.empty((len(distinct), *qshape))
    for d, assignment in enumerate(distinct):
        ev = {v: int(s) for v, s in zip(evars, assignment, strict=True)}
        parts[d] = _eliminate(net, query, ev)
    return parts[back.ravel()]


def _batched(net: Network, query: tuple[str, ...], columns: list[str],
             sub_codes: np.ndarray) -> np.ndarray | None:
    """Rows with assorted evidence patterns: one elimination with 0/1 likelihood vectors.

    None when an elimination step would exceed the cell budget.
    """
    m = len(sub_codes)
    soft: dict[str, np.ndarray] = {}
    for j, v in enumerate(columns):
        col = sub_codes[:, j]
        seen = col >= 0
        if not seen.any():
            continue
        lam = np.ones((m, net.cardinality(v)))
        lam[seen] = 0.0
        lam[np.flatnonzero(seen), col[seen]] = 1.0
        soft[v] = lam
    if not soft:
        return None
    try:
        return _eliminate(net, query, soft=soft, max_cells=_MAX_BATCH_CELLS)
    except _TooLarge:
        return None


def _conditional(net: Network, query: tuple[str, ...], columns: list[str], codes: np.ndarray,
                 index: pd.Index, owner: str) -> np.ndarray:
    """P(query | evidence row) for every row, shape (n_rows, *query cards).

    Evidence patterns (sets of observed variables) shared by many rows get one
    joint table each; the rows of rare patterns are answered together by a
    batched elimination over 0/1 likelihood vectors.
    """
    n = codes.shape[0]
    qshape = tuple(net.cardinality(v) for v in query)
    out = np.empty((n, *qshape), dtype=np.float64)
    observed = codes >= 0
    patterns, inverse = np.unique(observed, axis=0, return_inverse=True)
    inverse = inverse.ravel()
    order = np.argsort(inverse, kind="stable")
    starts = np.searchsorted(inverse[order], np.arange(len(patterns) + 1))
    sizes = np.diff(starts)
    rare = np.flatnonzero(sizes < _GROUP_MIN_ROWS) if len(patterns) > 1 else np.empty(0, int)
    jobs: list[tuple[np.ndarray, np.ndarray | None]] = []
    if len(rare) > 1:
        rare_rows = np.sort(np.concatenate([order[starts[k]:starts[k + 1]] for k in rare]))
        jobs.extend((rare_rows[lo:lo + _BATCH_ROWS], None)
                    for lo in range(0, len(rare_rows), _BATCH_ROWS))
        common = np.setdiff1d(np.arange(len(patterns)), rare)
    else:
        common = np.arange(len(patterns))
    jobs.extend((order[starts[k]:starts[k + 1]], patterns[k]) for k in common)
    zero_rows: list[int] = []
    while jobs:
        rows, pattern = jobs.pop()
        if pattern is None:
            unnorm = _batched(net, query, columns, codes[rows])
            if unnorm is None:  # too large as one batch: one pattern at a time
                sub_patterns, sub_inverse = np.unique(observed[rows], axis=0,
                                                      return_inverse=True)
                sub_inverse = sub_inverse.ravel()
                jobs.extend((rows[sub_inverse == j], p) for j, p in enumerate(sub_patterns))
                continue
        else:
            unnorm = _grouped(net, query, columns, codes[rows], pattern, qshape)
        total = unnorm.reshape(len(rows), -1).sum(axis=1)
        bad = total <= 0.0
        if bad.any():
            zero_rows.extend(rows[bad].tolist())
        with np.errstate(invalid="ignore", divide="ignore"):
            out[rows] = unnorm / total.reshape(-1, *([1] * len(qshape)))
    if zero_rows:
        zero_rows.sort()
        raise ValueError(f"{owner}: the evidence has probability zero under network "
                         f"'{net.name}' in {len(zero_rows)} row(s) (first: "
                         f"{listed(index[zero_rows], show=plain_repr)}); the posterior is "
                         "undefined there.")
    return out


def _posterior_iv(model: Any, target: Any, evidence: Any,
                  owner: str) -> tuple[Network, pd.DataFrame]:
    net = as_network(model, owner)
    net.check_variable(target, "target", owner)
    if isinstance(evidence, Mapping):
        evidence = pd.DataFrame([dict(evidence)], dtype=object)
    elif isinstance(evidence, pd.Series):
        evidence = evidence.to_frame().T
    df = as_dataframe(evidence, name="evidence", owner=owner)
    return net, df


def posterior(model: Any, target: str, evidence: Any) -> pd.DataFrame:
    """Exact P(target | evidence) for many evidence rows at once.

    Rows that observe the same variables share one variable elimination and the others
    are answered in batches, so thousands of contexts cost a few eliminations; the
    answers are exact, not sampled.

    Parameters
    ----------
    model : Network, str or pgmpy DiscreteBayesianNetwork
        The network (a bundled name is loaded with :func:`bayesnets.load`). A
        pgmpy model is converted on every call, so nothing cached can go
        stale; for repeated queries convert it once with
        :meth:`Network.from_pgmpy` and pass the :class:`Network`, whose joint
        tables are cached.
    target : str
        The query variable.
    evidence : pandas.DataFrame or mapping
        One row per query, one column per evidence variable, holding state
        names (text names a state of any type, ``'1'`` for ``1``, and a number a
        text state written alike, ``4`` or ``4.0`` for ``'4'``; a boolean names
        only a boolean state, not ``1`` or ``0``); a missing value (None / NaN)
        means the variable is not observed
        in that row, so rows may observe different variables. A mapping
        ``{variable: state}`` is one row.

    Returns
    -------
    pandas.DataFrame
        Indexed like ``evidence``, one float64 column per state of ``target``
        (in the network's state order); each row sums to one.

    Raises
    ------
    ValueError
        For a column that is not a variable of the network (or is the target),
        a state the variable does not have, or evidence with probability zero
        (the rows are named).

    See Also
    --------
    joint_table : the exact joint distribution of some variables.
    auxiliary : ground truth for the law of iterated expectation.
    sample_cases : evaluation contexts whose posteriors cover [0, 1].

    Notes
    -----
    Rows are grouped by the set :math:`E` of variables they observe. For each
    group the joint table :math:`P(T, E)` is built once by variable
    elimination restricted to the ancestors of :math:`\\{T\\} \\cup E`
    (descendants that are not observed sum to one and are dropped), eliminating
    greedily the variable whose product table is smallest; then

    .. math:: P(T = t \\mid E = e) = P(t, e) / \\textstyle\\sum_{t'} P(t', e)

    is a lookup. Rows whose evidence set is shared by fewer than 16 rows are
    answered together (in batches of 512) by one elimination in which every
    evidence variable :math:`v` enters as a factor :math:`\\lambda_v(r, x_v)`,
    the indicator of row :math:`r`'s observed state (all ones where row
    :math:`r` does not observe :math:`v`), and the row axis is never summed
    out:

    .. math:: P(T = t, e_r) = \\sum_{x \\setminus t} \\prod_v P(x_v \\mid
              x_{\\mathrm{pa}(v)}) \\prod_{v \\in E} \\lambda_v(r, x_v).

    The result is exact up to floating-point rounding (agreement with pgmpy's
    ``VariableElimination`` and with enumeration of the full joint is tested
    to 1e-10). When a joint table would exceed two million cells, each
    distinct assignment is eliminated separately with the evidence sliced into
    the CPTs; a batch whose elimination would build more than 2e7 cells falls
    back to one joint table per evidence set.

    References
    ----------
    Zhang, N. L. and Poole, D. (1994). A simple approach to Bayesian network
    computations. Proceedings of the 10th Canadian Conference on AI, 171-178.
    Koller, D. and Friedman, N. (2009). Probabilistic Graphical Models, ch. 9.

    Examples
    --------
    >>> import pandas as pd, bayesnets
    >>> ev = pd.DataFrame({"smoke": ["yes", "no"], "xray": ["yes", None]})
    >>> bayesnets.posterior("asia", "lung", ev).round(4)
         yes     no
    0  0.646  0.354
    1  0.010  0.990
    """
    net, df = _posterior_iv(model, target, evidence, "posterior")
    columns, codes = _evidence_codes(net, df, "posterior", exclude=(target,))
    probs = _conditional(net, (target,), columns, codes, df.index, "posterior")
    return pd.DataFrame(probs, index=df.index,
                        columns=pd.Index(list(net.states[target]), dtype=object))


def auxiliary(model: Any, target: str, evidence: Any, z: str, *,
              state: Any = None) -> pd.DataFrame:
    """Ground truth for the law-of-iterated-expectation check with a withheld variable.

    For each evidence row :math:`x` and each state :math:`z` of the auxiliary
    variable, returns :math:`P(z \\mid x)` and :math:`P(T = t^* \\mid x, z)`.

    Parameters
    ----------
    model : Network, str or pgmpy DiscreteBayesianNetwork
        The network (a bundled name is loaded with :func:`bayesnets.load`).
    target : str
        The variable :math:`T` whose state :math:`t^*` has its probability reported.
    evidence : pandas.DataFrame or mapping
        The evidence rows :math:`x` (as in :func:`posterior`); they must not
        observe ``z``, and their index labels must be unique (the result's ``row``
        column names each row by its label; ``ValueError`` otherwise).
    z : str
        The auxiliary variable, withheld from ``x``.
    state : optional
        The target state :math:`t^*` whose probability is reported; by default
        the first state of a binary target (``'yes'``, ``'TRUE'``, ``'True'``
        in the bundled networks). Required for a target with more than two
        states.

    Returns
    -------
    pandas.DataFrame
        Long format, one row per (evidence row, state of ``z``), columns
        ``row`` (the evidence row's index label), ``z`` (the state),
        ``p_z`` (:math:`P(z \\mid x)`), ``p_target`` (:math:`P(t^* \\mid x, z)`,
        NaN where :math:`P(z \\mid x) = 0`) and ``p_target_given_x``
        (:math:`P(t^* \\mid x)`).

    See Also
    --------
    posterior : exact P(target | evidence).
    lie_study : a simulated study built on this ground truth.
    coherence.iterated_expectation_check : the check this ground truth is for.

    Notes
    -----
    By the law of total probability

    .. math:: P(t^* \\mid x) = \\sum_z P(t^* \\mid x, z) P(z \\mid x),

    which holds for these values to rounding error; an agent's stated beliefs
    are compared against it. Both come from one joint table
    :math:`P(T, Z, X)` per evidence-variable set.

    Examples
    --------
    >>> import bayesnets
    >>> aux = bayesnets.auxiliary("asia", "lung", {"xray": "yes"}, "smoke")
    >>> aux[["z", "p_z", "p_target"]].round(4)
         z     p_z  p_target
    0  yes  0.6878    0.6460
    1   no  0.3122    0.1423
    """
    owner = "auxiliary"
    net, df = _posterior_iv(model, target, evidence, owner)
    if not df.index.is_unique:  # the 'row' column is the only link back to the evidence
        twice = list(dict.fromkeys(df.index[df.index.duplicated()].tolist()))
        raise ValueError(param_error(
            "evidence", owner, "a table whose index labels are unique (the result's 'row' "
            "column names each evidence row by its label, so rows sharing one would be "
            "told apart by nothing; e.g. evidence.reset_index(drop=True), or "
            "pd.concat(..., ignore_index=True))", f"{len(twice)} label(s) used more than "
            f"once: {listed(twice, show=plain_repr)}"))
    net.check_variable(z, "z", owner)
    if z == target:
        raise ValueError(param_error("z", owner, "a variable other than the target", z))
    t_code = target_state_code(net, target, state, owner)
    columns, codes = _evidence_codes(net, df, owner, exclude=(target, z))
    joint = _conditional(net, (target, z), columns, codes, df.index, owner)  # P(t, z | x)
    p_z = joint.sum(axis=1)  # (n, card z)
    with np.errstate(invalid="ignore", divide="ignore"):
        p_t_given_z = np.where(p_z > 0.0, joint[:, t_code, :] / np.where(p_z > 0, p_z, 1.0),
                               np.nan)
    p_t = joint[:, t_code, :].sum(axis=1)
    nz = net.cardinality(z)
    return pd.DataFrame({
        "row": np.repeat(df.index.to_numpy(dtype=object), nz),
        "z": pd.array(np.tile(np.array(net.states[z], dtype=object), len(df)), dtype=object),
        "p_z": p_z.ravel(),
        "p_target": p_t_given_z.ravel(),
        "p_target_given_x": np.repeat(p_t, nz),
    })


def target_state_code(net: Network, target: str, state: Any, owner: str) -> int:
    """The code of the target's reported state (default: first state of a binary target)."""
    if state is None:
        if net.cardinality(target) != 2:
            raise ValueError(param_error(
                "state", owner, f"given for target '{target}' with "
                f"{net.cardinality(target)} states (one of "
                f"{', '.join(map(repr, net.states[target]))})", state))
        return 0
    return net.state_code(target, state, owner=owner)
