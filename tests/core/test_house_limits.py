"""House limits on product code: file length, function length, parameter count.

No product file over 900 lines, no function over 100 code lines (lines of the
``def`` through its last line, less blank, comment-only and docstring lines), no
function over 15 parameters, where the parameters that name table columns (a
column mapping: a name in COLUMN_NAMES or ending in ``_col``/``_column``) count
together as one. What exceeds a limit today is named below with its
current size as a ceiling: the test fails when anything else crosses a limit,
when a named one grows, and when a named one is back under the limit (drop it
from the list then). Public functions' parameters are API: they are listed, not
changed; internal ones pass a small frozen dataclass instead.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("coherence", "bayesnets", "elicitation", "coherence_cli")
MAX_FILE_LINES = 900
MAX_CODE_LINES = 100
MAX_PARAMETERS = 15

#: parameter names that map a role to a table column in the public signatures
#: (``belief="belief"``, ``group="context"``, ``p_a="p_a"``, ``by=("model", ...)``...);
#: a function's column mappings count as one parameter
COLUMN_NAMES = frozenset({
    # decision and report tables
    "belief", "action", "outcome", "group", "context", "prompt", "repetition", "truth",
    "evidence", "by", "model",
    # forecasts, questions, events and graphs
    "question", "forecast", "probability", "prediction", "lower", "upper", "type",
    "timestamp", "opened", "cluster", "event", "title", "description", "date", "magnitude",
    "confidence", "is_outcome", "review_status", "simulated_date", "source", "target",
    "relation", "strength", "sources", "direction", "price", "price_date",
    # conditional-forecasting pairs and the law of iterated expectations
    "pair", "run", "variant", "failed", "p_a", "p_a_given_b1", "p_a_given_b0", "a_outcome",
    "b_outcome", "p_b", "p_b_given_a1", "p_b_given_a0", "variable", "state", "p_y_given_x",
    "p_y_given_xz", "p_z_given_x",
})
COLUMN_SUFFIXES = ("_col", "_column")

#: parameters whose name is in COLUMN_NAMES but which name no column (counted one each);
#: elsewhere such names (a network's ``model``, a variable's ``target`` and ``state``, the
#: axiom checks' ``p_a`` arrays) are far from the limit, where the count does not matter
NOT_COLUMNS = {
    "coherence/_decision/_monotone.py::monotonicity_test": frozenset({"direction"}),
    "coherence/_decision/_monotone.py::_monotonicity_test_iv": frozenset({"direction"}),
}

#: product files over MAX_FILE_LINES, with their line counts as ceilings
FILE_ALLOW: dict[str, int] = {}

#: functions over MAX_CODE_LINES, with their code lines as ceilings
LONG_ALLOW: dict[str, int] = {}

#: functions over MAX_PARAMETERS (public ones are API), with their counts as ceilings
PARAM_ALLOW: dict[str, int] = {}


def _product_files() -> list[Path]:
    return sorted(p for pkg in PACKAGES for p in (ROOT / pkg).rglob("*.py"))


def _docstring_lines(tree: ast.Module) -> set[int]:
    out: set[int] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if (isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant)
                    and isinstance(first.value.value, str)):
                out.update(range(first.lineno, (first.end_lineno or first.lineno) + 1))
    return out


def is_column(name: str) -> bool:
    """Whether a parameter of this name maps a role to a table column."""
    return name in COLUMN_NAMES or name.endswith(COLUMN_SUFFIXES)


def count_parameters(args: ast.arguments, not_columns: frozenset[str] = frozenset()) -> int:
    """Parameters of a signature, its column mappings (if any) counted as one."""
    names = [a.arg for a in (*args.posonlyargs, *args.args, *args.kwonlyargs)]
    columns = sum(1 for n in names if is_column(n) and n not in not_columns)
    return (len(names) - columns + (columns > 0)
            + (args.vararg is not None) + (args.kwarg is not None))


def function_sizes(path: Path, rel: str = "") -> list[tuple[str, int, int]]:
    """(name, code lines, parameters) of every function and method of a file.

    Parameters are counted by :func:`count_parameters`; ``rel`` (the file's path
    from the root) picks the file's entries in NOT_COLUMNS.
    """
    text = path.read_text(encoding="utf-8")
    tree = ast.parse(text)
    lines = text.splitlines()
    skip = _docstring_lines(tree) | {
        i for i, line in enumerate(lines, 1)
        if not line.strip() or line.strip().startswith("#")}
    out = []
    for node in ast.walk(tree):
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef):
            end = node.end_lineno or node.lineno
            code = sum(1 for i in range(node.lineno, end + 1) if i not in skip)
            not_columns = NOT_COLUMNS.get(f"{rel}::{node.name}", frozenset())
            n_params = count_parameters(node.args, not_columns)
            out.append((node.name, code, n_params))
    return out


def _measure() -> tuple[dict[str, int], dict[str, int], dict[str, int]]:
    files: dict[str, int] = {}
    long: dict[str, int] = {}
    params: dict[str, int] = {}
    for path in _product_files():
        rel = path.relative_to(ROOT).as_posix()
        files[rel] = len(path.read_text(encoding="utf-8").splitlines())
        for name, code, n_params in function_sizes(path, rel):
            key = f"{rel}::{name}"
            long[key] = max(long.get(key, 0), code)
            params[key] = max(params.get(key, 0), n_params)
    return files, long, params


MEASURED = _measure()


def _check(measured: dict[str, int], allow: dict[str, int], limit: int, what: str) -> None:
    over = {k: v for k, v in measured.items() if v > limit}
    new = {k: v for k, v in over.items() if k not in allow}
    grown = {k: (allow[k], v) for k, v in over.items() if k in allow and v > allow[k]}
    stale = sorted(k for k in allow if measured.get(k, 0) <= limit)
    assert not new, f"{what} over {limit}, not allowed: {new}"
    assert not grown, f"{what} grew past their ceiling (ceiling, now): {grown}"
    assert not stale, f"back under {limit} {what}: drop them from the allow-list: {stale}"


def test_the_counter_counts_code_lines_only(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text('def f(a, b, *c, d, **e):\n    """Doc.\n\n    More.\n    """\n'
                   "    # a comment\n\n    x = 1\n    return x\n", encoding="utf-8")
    assert function_sizes(src) == [("f", 3, 5)]


@pytest.mark.parametrize("what", ["files", "functions", "parameters"])
def test_house_limits(what: str) -> None:
    files, long, params = MEASURED
    if what == "files":
        _check(files, FILE_ALLOW, MAX_FILE_LINES, "product files (lines)")
    elif what == "functions":
        _check(long, LONG_ALLOW, MAX_CODE_LINES, "functions (code lines)")
    else:
        _check(params, PARAM_ALLOW, MAX_PARAMETERS, "functions (parameters)")


def _documented_parameters(doc: str) -> dict[str, str]:
    """numpydoc "Parameters" entries of a docstring: name -> header and description."""
    section = re.search(r"Parameters\n-+\n(.*?)(?:\n\n\S[^\n]*\n-+\n|\Z)", doc, re.S)
    entries: dict[str, str] = {}
    names: list[str] = []
    for line in section.group(1).splitlines() if section else []:
        if line and not line[0].isspace():
            names = [n.strip() for n in line.split(" : ")[0].split(",")]
            entries.update(dict.fromkeys(names, line))
        else:
            entries.update({n: f"{entries[n]} {line.strip()}" for n in names})
    return entries


def test_column_mappings_name_columns() -> None:
    """Where the count matters, a public parameter counted as a column is documented as one.

    The rule goes by name: where a function would be over MAX_PARAMETERS without
    it, each public parameter it counts as a column is documented as a column (or
    defaults to its own name, ``pair="pair"``) or is named in NOT_COLUMNS (then
    counted on its own).
    """
    wrong = []
    for path in _product_files():
        rel = path.relative_to(ROOT).as_posix()
        for node in ast.parse(path.read_text(encoding="utf-8")).body:
            if not isinstance(node, ast.FunctionDef) or node.name.startswith("_"):
                continue
            entries = _documented_parameters(ast.get_docstring(node) or "")
            not_columns = NOT_COLUMNS.get(f"{rel}::{node.name}", frozenset())
            a = node.args
            raw = len(a.posonlyargs) + len(a.args) + len(a.kwonlyargs)
            if raw + (a.vararg is not None) + (a.kwarg is not None) <= MAX_PARAMETERS:
                continue
            positional = [*a.posonlyargs, *a.args]
            defaults: dict[str, ast.expr | None] = dict(zip(
                [arg.arg for arg in positional[::-1]], a.defaults[::-1], strict=False))
            defaults.update(zip([arg.arg for arg in a.kwonlyargs], a.kw_defaults, strict=True))
            for arg in (*positional, *a.kwonlyargs):
                name = arg.arg
                own = defaults.get(name)
                if (is_column(name) and name not in not_columns and name in entries
                        and "column" not in entries[name].lower()
                        and not (isinstance(own, ast.Constant) and own.value == name)):
                    wrong.append(f"{rel}::{node.name}({name})")
    assert not wrong, f"counted as column mappings but not documented as columns: {wrong}"


def test_column_mappings_count_as_one(tmp_path: Path) -> None:
    src = tmp_path / "m.py"
    src.write_text("def f(data, *, belief, action, outcome_col, evidence, k, rng):\n"
                   "    return data\n\n\n"
                   "def g(data, *, k, rng):\n    return data\n", encoding="utf-8")
    assert function_sizes(src) == [("f", 2, 4), ("g", 2, 3)]
