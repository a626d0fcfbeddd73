"""Discrete Bayesian networks: the bundled pgmpy models and networks fitted to data.

A :class:`Network` is a frozen, array-based copy of a discrete Bayesian network:
variables in topological order, state names, parents and one conditional
probability table (CPT) per variable, stored as a read-only array of shape
``(n_states, *parent_states)``. Every computation in :mod:`bayesnets` runs on
these arrays; pgmpy is used to read the bundled ``.bif.gz`` files and to hand a
network back to pgmpy (:meth:`Network.to_pgmpy`), imported inside the functions
that need it.
"""

from __future__ import annotations

import gzip
import importlib.resources
import numbers
from collections.abc import Mapping
from collections.abc import Sequence
from dataclasses import dataclass
from dataclasses import field
from types import MappingProxyType
from typing import Any

import numpy as np
import pandas as pd

from coherence._extras import require
from coherence._parameters import check_int
from coherence._validation import as_dataframe
from coherence._validation import check_case_distinct
from coherence._validation import first_of
from coherence._validation import is_bool
from coherence._validation import listed
from coherence._validation import param_error
from coherence._validation import plain_repr
from coherence._validation import plain_value
from coherence._validation import require_columns

__all__ = ["BUNDLED_NETWORKS", "Network", "as_network", "fit", "load"]

# The discrete networks pgmpy 1.1 ships inside its wheel (utils/example_models/*.bif.gz).
BUNDLED_NETWORKS: tuple[str, ...] = (
    "alarm", "andes", "asia", "barley", "cancer", "child", "diabetes", "earthquake",
    "hailfinder", "hepar2", "insurance", "link", "mildew", "munin", "munin1", "munin2",
    "munin3", "munin4", "pathfinder", "pigs", "sachs", "survey", "water", "win95pts",
)

_PGMPY_MIN = (1, 1)


def _require_pgmpy() -> Any:
    """Import pgmpy, checking the version (1.0 and older need torch and use other class names)."""
    require("pgmpy", "the bayesnets package (Bayesian-network ground truth)")
    import pgmpy

    parts = []
    for piece in pgmpy.__version__.split(".")[:2]:
        digits = "".join(ch for ch in piece if ch.isdigit())
        parts.append(int(digits or 0))
    if tuple(parts) < _PGMPY_MIN:
        raise ImportError(f"bayesnets needs pgmpy >= 1.1; found pgmpy {pgmpy.__version__}.")
    return pgmpy


def number_text(value: Any) -> str | None:
    """A number (not a boolean) as the text a state would name it by: ``'4'`` for 4 and
    4.0, ``'0.5'`` for 0.5; None for anything else (text, booleans, NaN)."""
    if is_bool(value) or not isinstance(value, numbers.Real):
        return None
    if isinstance(value, numbers.Integral):
        return str(int(value))
    number = float(value)
    if not np.isfinite(number):
        return None
    return str(int(number)) if number.is_integer() else str(number)


def variable_names(values: Any, name: str, owner: str) -> tuple[str, ...]:
    """``values`` as a tuple; TypeError naming ``name`` unless it is a sequence that is not
    a string (the names themselves are checked with :meth:`Network.check_variable`)."""
    if isinstance(values, str) or not isinstance(values, Sequence):
        raise TypeError(param_error(name, owner, "a sequence of variable names", values))
    return tuple(values)


@dataclass(frozen=True, slots=True, eq=False)
class Network:
    """A discrete Bayesian network held as arrays.

    Build one with :func:`load` (a network bundled with pgmpy), :func:`fit`
    (CPTs estimated from a data frame) or :meth:`from_pgmpy`.

    Attributes
    ----------
    name : str
        The network's name (``'child'``, ``'alarm'``, ... or ``'fitted'``).
    variables : tuple of str
        Variable names in a topological order (parents before children).
    states : Mapping[str, tuple]
        The state names of each variable, in CPT order.
    parents : Mapping[str, tuple of str]
        The parents of each variable, in CPT axis order.
    cpts : Mapping[str, numpy.ndarray]
        ``cpts[v][s, j1, j2, ...] = P(v = states[v][s] | parents = (j1, j2, ...))``,
        read-only, each column summing to one (renormalised when read from
        pgmpy, see :meth:`from_pgmpy`).
    support : Mapping[str, numpy.ndarray] or None
        For a fitted network, the number of data rows in each parent
        configuration (shape ``cpts[v].shape[1:]``); None for bundled networks.
    min_support : int
        The minimum support of an evidence configuration for it to be used as an
        evaluation context (:func:`bayesnets.sample_cases`); 0 for bundled
        networks.
    """

    name: str
    variables: tuple[str, ...]
    states: Mapping[str, tuple[Any, ...]]
    parents: Mapping[str, tuple[str, ...]]
    cpts: Mapping[str, np.ndarray] = field(repr=False)
    support: Mapping[str, np.ndarray] | None = field(default=None, repr=False)
    min_support: int = 0
    data_codes: np.ndarray | None = field(default=None, repr=False)
    _cache: dict[Any, Any] = field(default_factory=dict, repr=False, compare=False)

    def __post_init__(self) -> None:
        # a network built directly (not by load, fit or from_pgmpy) must hold a CPT of the
        # right shape, whose columns sum to one, for every variable: inference divides by
        # P(evidence), so a column summing to 2 gave P(b|a) normalised and P(a|b) not,
        # two answers of one network that disagree, without a word
        for v in self.variables:
            shape = (len(self.states[v]), *(len(self.states[p]) for p in self.parents[v]))
            table = np.asarray(self.cpts[v], dtype=float)
            if table.shape != shape:
                raise ValueError(param_error(
                    "cpts", "Network", f"a CPT of shape {shape} for {v!r} (its states, "
                    f"then its parents' {list(self.parents[v])})", f"shape {table.shape}"))
            _check_cpt(table, v, self.parents[v], self.states, owner="Network",
                      tol=_CPT_BUILT_TOL)

    # ------------------------------------------------------------------ derived
    @property
    def index(self) -> Mapping[str, int]:
        """Position of each variable in :attr:`variables`."""
        cached = self._cache.get("index")
        if cached is None:
            cached = MappingProxyType({v: i for i, v in enumerate(self.variables)})
            self._cache["index"] = cached
        return cached

    def cardinality(self, variable: str) -> int:
        """The number of states of ``variable``."""
        return len(self.states[variable])

    def state_code(self, variable: str, state: Any, *, owner: str = "bayesnets") -> int:
        """The position of ``state`` among the states of ``variable``; ValueError if unknown."""
        try:
            return self._code(variable, state)
        except (KeyError, TypeError):
            raise ValueError(
                f"{owner}: unknown state {state!r} of variable '{variable}'; known states: "
                f"{', '.join(map(repr, self.states[variable]))}"
                f"{self._bool_hint(variable, state)}.") from None

    def _code(self, variable: str, state: Any) -> int:
        """The code of ``state``; KeyError (or TypeError) if the variable has no such state.

        A boolean matches only a boolean state and a number only a state that is not
        one: ``True == 1`` in Python, and looked up by value a ``True`` was read as state
        ``1`` of a variable whose states are ``(1, 2)``, its first, without a word.
        """
        codes = self._state_codes(variable)
        try:
            code = codes[state]
        except KeyError:
            # a number names a text state written alike (4 or 4.0 for '4'), as text names
            # a number state ('4' for 4)
            text = number_text(state)
            if text is None or text not in codes or not isinstance(
                    self.states[variable][codes[text]], str):
                raise
            return codes[text]
        if self._kind_differs(variable, state, code):
            raise KeyError(state)
        return code

    def _kind_differs(self, variable: str, state: Any, code: int) -> bool:
        """Whether ``state`` (not text) is a boolean and the state it equals is not, or the
        other way round (text names a state of any kind: ``'True'`` for ``True``)."""
        return (not isinstance(state, str)
                and is_bool(state) != is_bool(self.states[variable][code]))

    def _bool_hint(self, variable: str, state: Any) -> str:
        """Why a boolean (or a number against a boolean state) matched no state, or ''."""
        try:
            code = self._state_codes(variable)[state]
        except (KeyError, TypeError):
            return ""
        if not self._kind_differs(variable, state, code):
            return ""
        if is_bool(state):
            return (f" (a boolean matches only a boolean state: {state!r} equals "
                    f"{self.states[variable][code]!r} in Python, but is not read as that "
                    "state; give the state itself)")
        return (f" (a number matches no boolean state: {state!r} equals "
                f"{self.states[variable][code]!r} in Python, but give True or False)")

    def _state_codes(self, variable: str) -> Mapping[Any, int]:
        key = ("codes", variable)
        codes = self._cache.get(key)
        if codes is None:
            codes = {s: i for i, s in enumerate(self.states[variable])}
            # state names given as text also match non-text states ('1' for 1)
            for i, s in enumerate(self.states[variable]):
                codes.setdefault(str(s), i)
            self._cache[key] = codes
        return codes

    def check_variable(self, variable: Any, name: str, owner: str) -> str:
        """Raise ValueError naming ``variable`` unless the network has it."""
        if not isinstance(variable, str) or variable not in self.index:
            known = listed(self.variables, 40)
            raise ValueError(param_error(name, owner, f"a variable of network '{self.name}' "
                                         f"({known})", variable))
        return variable

    def ancestors(self, variables: Sequence[str]) -> set[str]:
        """The variables together with all their ancestors."""
        out: set[str] = set()
        stack = list(variables)
        while stack:
            v = stack.pop()
            if v not in out:
                out.add(v)
                stack.extend(self.parents[v])
        return out

    def edges(self) -> list[tuple[str, str]]:
        """The directed edges (parent, child)."""
        return [(p, v) for v in self.variables for p in self.parents[v]]

    def to_pgmpy(self) -> Any:
        """The network as a pgmpy ``DiscreteBayesianNetwork`` (built once, then cached)."""
        cached = self._cache.get("pgmpy")
        if cached is not None:
            return cached
        _require_pgmpy()
        from pgmpy.factors.discrete import TabularCPD
        from pgmpy.models import DiscreteBayesianNetwork

        model = DiscreteBayesianNetwork()
        model.add_nodes_from(self.variables)
        model.add_edges_from(self.edges())
        for v in self.variables:
            pa = list(self.parents[v])
            table = self.cpts[v].reshape(self.cardinality(v), -1)
            model.add_cpds(TabularCPD(
                v, self.cardinality(v), table, evidence=pa or None,
                evidence_card=[self.cardinality(p) for p in pa] or None,
                state_names={u: list(self.states[u]) for u in [v, *pa]}))
        self._cache["pgmpy"] = model
        return model

    @classmethod
    def from_pgmpy(cls, model: Any, *, name: str = "pgmpy") -> Network:
        """Copy a pgmpy ``DiscreteBayesianNetwork`` (with CPTs) into a :class:`Network`.

        A CPD that lists a parent's states in another order than the parent's own CPD
        is read by its labels (its axis is put in the parent's order; a label given as
        text matches a non-text state, ``'1'`` for ``1``); other states are an error.
        Each CPT column is divided by its sum, so that it sums to one to rounding
        error: the BIF files of some bundled networks print CPT entries rounded (in
        ``alarm`` and ``hepar2`` columns sum to 1 +- 1e-7), and without renormalising,
        posteriors would depend on the elimination order at that level. Only rounding
        is renormalised: a column whose sum is more than 0.01 from one (pgmpy's own
        ``check_model`` tolerance), or an entry that is negative or not finite, is an
        error naming the variable and the parent states of the column.
        :meth:`to_pgmpy` returns the renormalised network.
        """
        cpds = {cpd.variable: cpd for cpd in model.get_cpds()}
        missing = [v for v in model.nodes() if v not in cpds]
        if missing:
            raise ValueError(param_error("model", "Network.from_pgmpy",
                                         "a network with a CPD for every node",
                                         f"no CPD for {listed(missing)}"))
        order = _topological_order(
            list(model.nodes()), {v: tuple(cpds[v].variables[1:]) for v in cpds})
        states = {}
        parents = {}
        cpts = {}
        for v in order:
            cpd = cpds[v]
            states[v] = tuple(cpd.state_names[v])
            parents[v] = tuple(cpd.variables[1:])
            shape = (len(states[v]), *(len(cpd.state_names[p]) for p in parents[v]))
            table = np.array(cpd.values, dtype=np.float64).reshape(shape)
            for axis, p in enumerate(parents[v], start=1):
                # the CPD may list a parent's states in another order than the parent's own
                # CPD: its axis follows its labels (read in the parent's order, it would
                # silently swap the columns), and other states are an error
                named = list(cpd.state_names[p])
                if named != list(states[p]):
                    # matched as text: a CPD may name the parent's state 1 as '1'
                    text = [str(x) for x in named]
                    own = [str(x) for x in states[p]]
                    if sorted(text) != sorted(own) or len(set(text)) != len(text):
                        raise ValueError(param_error(
                            "model", "Network.from_pgmpy", f"a network whose CPD of {v!r} "
                            f"lists the states of its parent {p!r} as {p!r}'s own CPD does "
                            f"({list(states[p])})", named))
                    table = np.take(table, [text.index(x) for x in own], axis=axis)
            _check_cpt(table, v, parents[v], states)
            # BIF files print CPTs rounded (alarm's columns sum to 1 +- 1e-7): renormalise so
            # that summing out a barren variable is exactly neutral and every elimination
            # order gives the same posterior to rounding error
            table /= table.sum(axis=0, keepdims=True)
            table.setflags(write=False)
            cpts[v] = table
        return cls(name=name, variables=tuple(order), states=MappingProxyType(states),
                   parents=MappingProxyType(parents), cpts=MappingProxyType(cpts))


#: How far from one a CPT column read from pgmpy may sum and still be renormalised: rounding
#: of printed entries (the bundled BIF files: 3e-7 at most), not a column that is wrong;
#: pgmpy's own ``check_model`` accepts columns within 0.01 (``is_valid_cpd``).
_CPT_SUM_TOL = 0.01
#: How far from one a CPT column of a network built directly may sum: rounding error only
#: (it is used as given, not renormalised).
_CPT_BUILT_TOL = 1e-9


def _check_cpt(table: np.ndarray, variable: str, parents: tuple[str, ...],
              states: Mapping[str, tuple[Any, ...]], *, owner: str = "Network.from_pgmpy",
              tol: float = _CPT_SUM_TOL) -> None:
    """Raise naming the variable and the parent states of every CPT column that holds a
    negative or non-finite entry, or that sums to more than ``tol`` from one."""
    flat = table.reshape(table.shape[0], -1)
    with np.errstate(invalid="ignore"):
        sums = flat.sum(axis=0)
        bad = (~np.isfinite(flat).all(axis=0) | (flat < 0).any(axis=0)
               | ~(np.abs(sums - 1.0) <= tol + 1e-12))
    if not bad.any():
        return
    shown = []
    for j in np.flatnonzero(bad)[:5]:
        cfg = np.unravel_index(j, table.shape[1:]) if parents else ()
        where = ", ".join(f"{p}={states[p][k]!r}" for p, k in zip(parents, cfg, strict=True))
        shown.append(f"({where or 'no parents'}): sum {float(sums[j])!r}")
    more = ", ..." if bad.sum() > 5 else ""
    within = (f"within {tol}, the rounding of printed tables, which is renormalised"
              if owner == "Network.from_pgmpy" else f"within {tol}")
    raise ValueError(param_error(
        "model" if owner == "Network.from_pgmpy" else "cpts", owner, "a network whose CPT "
        f"columns hold probabilities summing to one ({within}); the CPD of {variable!r} has "
        f"{int(bad.sum())} column(s) that do not (divide each column by its sum yourself if "
        "that is what you mean)",
        "; ".join(shown) + more))


def _topological_order(nodes: list[str], parents: Mapping[str, Sequence[str]]) -> list[str]:
    """Parents before children: a depth-first post-order from each node in turn, written
    with an explicit stack (a recursive walk failed with a RecursionError on a path of about
    a thousand variables listed child first)."""
    order: list[str] = []
    done: set[str] = set()
    visiting: set[str] = set()
    for root in nodes:
        if root in done:
            continue
        visiting.add(root)
        stack = [(root, iter(parents.get(root, ())))]
        while stack:
            v, pending = stack[-1]
            for p in pending:
                if p in done:
                    continue
                if p in visiting:
                    raise ValueError(f"The network's edges contain a cycle through '{p}'.")
                visiting.add(p)
                stack.append((p, iter(parents.get(p, ()))))
                break
            else:
                stack.pop()
                visiting.discard(v)
                done.add(v)
                order.append(v)
    return order


def as_network(model: Any, owner: str) -> Network:
    """Accept a :class:`Network`, a bundled network name or a pgmpy network."""
    if isinstance(model, Network):
        return model
    if isinstance(model, str):
        return load(model)
    if hasattr(model, "get_cpds") and hasattr(model, "nodes"):
        # converted afresh on every call (a cache could go stale if the user edits a CPD);
        # for repeated queries convert once with Network.from_pgmpy and pass the Network
        return Network.from_pgmpy(model)
    raise TypeError(param_error("model", owner, "a bayesnets.Network, a bundled network name "
                                "or a pgmpy DiscreteBayesianNetwork", type(model).__name__))


_LOADED: dict[str, Network] = {}


def load(name: str = "child") -> Network:
    """Load a discrete Bayesian network bundled with pgmpy, offline.

    The ``.bif.gz`` file inside the installed pgmpy package is read with
    pgmpy's ``BIFReader``; nothing is downloaded (pgmpy's own
    ``pgmpy.example_models.load_model`` fetches from a model hub and fails
    offline). Loaded networks are cached: a second call returns the same object.

    Parameters
    ----------
    name : str
        One of :data:`BUNDLED_NETWORKS`: ``'child'`` (20 nodes, a paediatric
        network for congenital heart disease in newborns, the default study
        network), ``'alarm'`` (37 nodes, patient monitoring, the larger check),
        ``'asia'``, ``'cancer'``, ``'insurance'``, ``'hepar2'``, ...

    Returns
    -------
    Network
        The network's variables, states, parents and CPTs, held as arrays; a repeated
        call returns the same (cached) object.

    See Also
    --------
    fit : estimate a network's CPTs from data.
    posterior : exact posteriors for many evidence rows.

    Examples
    --------
    >>> import bayesnets
    >>> net = bayesnets.load("asia")
    >>> net.variables[:3]
    ('asia', 'tub', 'smoke')
    >>> net.states["xray"]
    ('yes', 'no')

    References
    ----------
    Spiegelhalter, D. J., Dawid, A. P., Lauritzen, S. L. and Cowell, R. G. (1993).
    Bayesian analysis in expert systems. Statistical Science 8(3), 219-247 (child).
    Beinlich, I., Suermondt, H. J., Chavez, R. M. and Cooper, G. F. (1989). The
    ALARM monitoring system. Proceedings of AIME 89, 247-256.
    """
    if not isinstance(name, str) or name not in BUNDLED_NETWORKS:
        raise ValueError(param_error("name", "load", "one of " + ", ".join(
            map(repr, BUNDLED_NETWORKS)), name))
    if name in _LOADED:
        return _LOADED[name]
    _require_pgmpy()
    from pgmpy.readwrite import BIFReader

    ref = importlib.resources.files("pgmpy") / "utils" / "example_models" / f"{name}.bif.gz"
    text = gzip.decompress(ref.read_bytes()).decode("utf-8")
    model = BIFReader(string=text).get_model()
    net = Network.from_pgmpy(model, name=name)
    _LOADED[name] = net
    return net


# --------------------------------------------------------------------------- fit
def _fit_iv(data: Any, edges: Any, min_support: Any) -> tuple[pd.DataFrame, list[str],
                                                              dict[str, tuple[str, ...]], int]:
    owner = "fit"
    df = as_dataframe(data, owner=owner)
    min_support = check_int(min_support, "min_support", owner, low=0)
    nodes, edge_list = _nodes_and_edges(edges, df, owner)
    unnamed = [v for v in nodes if not isinstance(v, str)]
    if unnamed:  # every function asks for variables by name (str): refused here, not later
        raise TypeError(param_error(
            "edges", owner, "variables named by text (str), as every bayesnets function "
            "asks for them (rename the columns, e.g. df.columns = df.columns.astype(str), "
            "and name them so in the edges)", first_of(unnamed)))
    require_columns(df, nodes, owner=owner)
    parents: dict[str, list[str]] = {v: [] for v in nodes}
    for a, b in edge_list:
        if a == b:
            raise ValueError(param_error("edges", owner, "free of self-loops", (a, b)))
        if a not in parents[b]:
            parents[b].append(a)
    order = _topological_order(nodes, parents)
    _check_state_columns(df, order, owner)
    if len(df) == 0:
        raise ValueError(param_error("data", owner, "a non-empty data frame", "0 rows"))
    return df, order, {v: tuple(p) for v, p in parents.items()}, min_support


def _nodes_and_edges(edges: Any, df: pd.DataFrame,
                     owner: str) -> tuple[list[Any], list[tuple[Any, Any]]]:
    """The nodes and edges of ``fit``'s ``edges``: a pgmpy model, a Network or a
    list of (parent, child) pairs."""
    if hasattr(edges, "edges") and hasattr(edges, "nodes"):
        nodes = [str(v) for v in edges.nodes()]
        edge_list = [(str(a), str(b)) for a, b in edges.edges()]
    elif isinstance(edges, Network):
        nodes = list(edges.variables)
        edge_list = edges.edges()
    else:
        nodes, edge_list = _edge_pairs(edges, df, owner)
    return nodes, edge_list


def _edge_pairs(edges: Any, df: pd.DataFrame,
                owner: str) -> tuple[list[Any], list[tuple[Any, Any]]]:
    """The nodes and (parent, child) pairs of a list of pairs (every column when the
    list is empty)."""
    if isinstance(edges, str | bytes) or not isinstance(edges, Sequence | np.ndarray):
        raise TypeError(param_error("edges", owner, "a list of (parent, child) pairs or a "
                                    "pgmpy model", type(edges).__name__))
    edge_list = []
    for pair in edges:
        if isinstance(pair, np.ndarray) and pair.ndim == 1:  # a row of an (m, 2) array
            pair = pair.tolist()
        if (isinstance(pair, str | bytes) or not isinstance(pair, Sequence)
                or len(pair) != 2):
            raise ValueError(param_error("edges", owner, "a list of (parent, child) pairs",
                                         pair))
        edge_list.append((pair[0], pair[1]))
    nodes = []
    for a, b in edge_list:
        for v in (a, b):
            if v not in nodes:
                nodes.append(v)
    if not nodes:
        nodes = list(df.columns)
    return nodes, edge_list


def _check_state_columns(df: pd.DataFrame, order: list[str], owner: str) -> None:
    """Each variable's column: no missing value, one kind of value, no two spellings of
    one state, every declared category observed."""
    for v in order:
        missing = np.flatnonzero(df[v].isna().to_numpy())
        if len(missing):
            shown = listed(df.index[missing], show=plain_repr)
            raise ValueError(f"Column '{v}' (input to fit) must not contain missing values; "
                             f"{len(missing)} offending rows (first: {shown}).")
        if not pd.api.types.is_float_dtype(df[v].dtype):
            # 'yes' and 'Yes ', or 1 and '1', would become two states of one category
            _check_bools_apart(df[v], v, owner)  # first: it names bools beside text too
            check_case_distinct(df, v, owner=owner)
        if isinstance(df[v].dtype, pd.CategoricalDtype):
            _check_categories_observed(df[v], v, owner)


def _check_bools_apart(column: pd.Series, name: str, owner: str) -> None:
    """A column holding booleans must hold nothing else: ``True == 1`` in Python, so True
    and 1 (False and 0) became one state, and ``'True'`` another state than True."""
    if column.dtype != object:
        return
    flags = np.fromiter((is_bool(x) for x in column.to_numpy()), dtype=bool,
                        count=len(column))
    if not flags.any() or flags.all():
        return
    other = np.flatnonzero(~flags)
    shown = listed(other, show=lambda i: f"{plain_repr(column.index[i])} "
                                         f"({plain_repr(column.iloc[i])})")
    raise ValueError(
        f"Column '{name}' (input to {owner}) holds booleans (True/False) and {len(other)} "
        f"other value(s) (rows: {shown}); True equals 1 "
        "and False equals 0 in Python, so they would be pooled into one state (and 'True' "
        "would be a state apart from True). Make the column one kind: all booleans or none.")


def _check_categories_observed(column: pd.Series, name: str, owner: str) -> None:
    """A categorical column's declared categories are the variable's states: each must
    occur, as the maximum-likelihood CPT (no pseudo-count) has no estimate for a state
    never seen but 0, a state no evidence could then take."""
    seen = set(np.unique(column.cat.codes.to_numpy()).tolist())
    unseen = [c for j, c in enumerate(column.cat.categories) if j not in seen]
    if unseen:
        shown = listed(unseen, 10, show=plain_repr)
        raise ValueError(
            f"Column '{name}' (input to {owner}) is categorical with {len(unseen)} "
            f"categor{'y' if len(unseen) == 1 else 'ies'} that no row has: {shown}. {owner} "
            "estimates CPTs by maximum likelihood without a pseudo-count, so a state never "
            "observed has no probability to estimate (it would be 0). Drop the unused "
            f"categories (df['{name}'] = df['{name}'].cat.remove_unused_categories()) or "
            "add rows that have them.")


def fit(data: Any, edges: Any, *, min_support: int = 100) -> Network:
    """Estimate a network's CPTs from data by maximum likelihood, recording their support.

    The structure is given by ``edges``; each variable's table is estimated from the
    rows as conditional relative frequencies, without smoothing, and the number of rows
    behind each parent configuration is recorded (``support``): :func:`sample_cases`
    draws only contexts that enough rows support, as the reference paper does.

    Parameters
    ----------
    data : pandas.DataFrame
        One row per case, one column per variable (categorical values: strings,
        integers, booleans; a column of booleans holds nothing else); no missing
        values in the network's columns.
    edges : list of (parent, child) pairs, an (m, 2) array of them, or a pgmpy model / DAG
        The structure. Variables are the columns named by the edges (or the
        model's nodes).
    min_support : int
        Contexts used for evaluation must have at least this many data rows
        matching their evidence (the reference paper uses 100):
        :func:`bayesnets.sample_cases` only draws evidence configurations with
        ``support >= min_support``.

    Returns
    -------
    Network
        ``name='fitted'``; ``support[v]`` holds the number of rows in each
        parent configuration of ``v``.

    See Also
    --------
    load : load a network bundled with pgmpy.
    posterior : exact posteriors for many evidence rows.

    Notes
    -----
    The maximum-likelihood CPT is the conditional relative frequency

    .. math:: \\hat P(v = s \\mid \\mathrm{pa}(v) = j) = n_{s j} / n_{\\cdot j}.

    States are the sorted distinct values of each column (a pandas Categorical
    column: its categories, in their order). Every declared category must occur in
    the data: there is no pseudo-count, so the maximum-likelihood estimate of a state
    never observed would be 0 and ``fit`` raises a ``ValueError`` naming the column
    and its unobserved categories (``.cat.remove_unused_categories()`` drops them)
    rather than silently leaving them out of the states. A parent
    configuration never seen in the data (:math:`n_{\\cdot j} = 0`) gets a
    uniform distribution; its support of 0 is recorded, so such
    configurations never enter evaluation contexts when ``min_support > 0``.

    Examples
    --------
    >>> import pandas as pd, bayesnets
    >>> df = pd.DataFrame({"smoker": ["yes", "yes", "no", "no"],
    ...                    "cough": ["yes", "no", "no", "no"]})
    >>> net = bayesnets.fit(df, [("smoker", "cough")], min_support=1)
    >>> net.cpts["cough"][:, net.states["smoker"].index("yes")].tolist()
    [0.5, 0.5]
    >>> net.support["cough"].tolist()
    [2, 2]
    """
    df, order, parents, min_support = _fit_iv(data, edges, min_support)
    states: dict[str, tuple[Any, ...]] = {}
    codes = np.empty((len(df), len(order)), dtype=np.int64)
    for j, v in enumerate(order):
        col_codes, uniques = pd.factorize(df[v], sort=True)
        states[v] = tuple(plain_value(u) for u in uniques)
        codes[:, j] = col_codes
    index = {v: j for j, v in enumerate(order)}
    cpts: dict[str, np.ndarray] = {}
    support: dict[str, np.ndarray] = {}
    for v in order:
        pa = parents[v]
        shape = (len(states[v]), *(len(states[p]) for p in pa))
        counts = np.zeros(shape, dtype=np.int64)
        np.add.at(counts, tuple(codes[:, index[u]] for u in (v, *pa)), 1)
        n_cfg = counts.sum(axis=0)
        with np.errstate(invalid="ignore", divide="ignore"):
            table = np.where(n_cfg > 0, counts / np.maximum(n_cfg, 1), 1.0 / shape[0])
        table = np.ascontiguousarray(table, dtype=np.float64)
        table.setflags(write=False)
        n_cfg = np.asarray(n_cfg, dtype=np.int64)
        n_cfg.setflags(write=False)
        cpts[v] = table
        support[v] = n_cfg
    codes.setflags(write=False)
    return Network(name="fitted", variables=tuple(order), states=MappingProxyType(states),
                   parents=MappingProxyType(parents), cpts=MappingProxyType(cpts),
                   support=MappingProxyType(support), min_support=min_support,
                   data_codes=codes)
