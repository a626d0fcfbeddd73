"""Property tests of a study file's validation: a valid study configuration of each kind,
mutated by hypothesis (a key dropped or added, a value replaced by one of another type, a
list nested or an entry repeated), is either a valid configuration (loading it again gives
it back) or refused with a ValueError or TypeError naming the key that was changed or its
table; never another exception. The same for a TOML file of any text."""

from __future__ import annotations

import copy
import datetime as dt
import math
import os
import tempfile
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import pytest
from hypothesis import given
from hypothesis import settings
from hypothesis import strategies as st

import elicitation

pytest.importorskip("pgmpy")

SERVER = "http://127.0.0.1:9/v1"
#: one valid configuration of each kind, every section written out
BASES: dict[str, dict[str, Any]] = {
    "decision": {
        "kind": "decision", "name": "s", "seed": 0, "out": "s",
        "models": [{"simulated": "rational"},
                   {"name": "peeks", "simulated": {"agent": "leaky", "strength": 0.8}},
                   {"name": "m", "base_url": SERVER, "stop": ["</s>"], "temperature": 0.5,
                    "max_tokens": 48, "timeout": 5, "concurrency": 2, "max_retries": 1,
                    "max_failures": 3, "api_key_env": "SOME_KEY"}],
        "design": {"network": "child", "n_contexts": 4, "repetitions": 1,
                   "prompts": ["standard", "mse"], "decision": "decision",
                   "question": "have the disease", "sum_tolerance": 0.02},
        "tests": {"tests": ["ci", "leakage"], "n_permutations": 19, "n_resamples": 19,
                  "adjust": "holm", "engine": "logistic", "reference_prompt": "standard"}},
    "seeds": {"seeds": [1, 2], "model": {"simulated": "rational"}},
    "pairs": {
        "kind": "pairs", "model": {"name": "m", "base_url": SERVER, "design_max_tokens": 64},
        "design": {"network": "child", "n_pairs": 3, "variants": ["baseline", "skeptical"],
                   "reverse": True, "subject": "the next patient", "repetitions": 1,
                   "designer": "model", "n_candidates": 6},
        "tests": {"n_resamples": 99, "test": "bernoulli", "alternative": "two-sided",
                  "ci_method": "bernoulli"}},
    "consistency": {
        "kind": "consistency", "models": [{"simulated": "rational"}],
        "design": {"questions": "demo", "checkers": ["negation", "and"], "n_tuples": 2,
                   "n_questions": 10, "repetitions": 1, "designer": "model",
                   "model_forms": ["negation"]},
        "tests": {"n_resamples": 99, "definition": "paper", "tolerance": 0.01,
                  "baseline": True}},
    "forecasting": {
        "kind": "forecasting", "model": {"simulated": "rational"},
        "design": {"questions": "demo", "simulated_date": "2028-01-01", "repetitions": 1,
                   "n_questions": 5},
        "tests": {"n_resamples": 99, "n_bins": 5, "confidence_level": 0.9}},
}

#: values of every type a TOML file or a mapping can hold
_SCALARS = st.one_of(
    st.integers(-3, 3), st.sampled_from([2**63, -(2**63), 10**30]),
    st.floats(allow_nan=True, allow_infinity=True), st.booleans(), st.none(),
    st.sampled_from(["", " ", "\t\n", "ç∂", "\x00", "all", "demo", "standard", "rational",
                     "0", "NA", "2028-01-01", "a" * 300]),
    st.text(max_size=8),
    st.sampled_from([dt.date(2028, 1, 1), dt.datetime(2028, 1, 1, 12), dt.time(12)]))
_VALUES = st.recursive(_SCALARS, lambda inner: st.one_of(
    st.lists(inner, max_size=3), st.dictionaries(st.text(max_size=4), inner, max_size=2)),
    max_leaves=4)

Path_ = tuple[str | int, ...]


def _paths(node: Any, prefix: Path_ = ()) -> list[Path_]:
    """Every key or list entry under ``node``, as the path of keys to it."""
    if isinstance(node, Mapping):
        items: Any = node.items()
    elif isinstance(node, list):
        items = enumerate(node)
    else:
        return []
    out = []
    for key, value in items:
        out.append((*prefix, key))
        out.extend(_paths(value, (*prefix, key)))
    return out


def _tables(node: Any, prefix: Path_ = ()) -> list[Path_]:
    """The paths of the tables (mappings) in ``node``, the top one included."""
    if isinstance(node, Mapping):
        return [prefix, *(p for k, v in node.items() for p in _tables(v, (*prefix, k)))]
    if isinstance(node, list):
        return [p for i, v in enumerate(node) for p in _tables(v, (*prefix, i))]
    return []


def _at(node: Any, path: Path_) -> Any:
    for key in path:
        node = node[key]
    return node


def _names(path: Path_) -> list[str]:
    """What an error about ``path`` may name: its key (a list entry: the list's key) or the
    table holding it (a model by its number, a simulated agent's options by 'simulated')."""
    keys = [k for k in path if isinstance(k, str)]
    names = [keys[-1]] if keys else []
    for i, key in enumerate(path):
        if key in ("models", "model"):
            number = path[i + 1] if i + 1 < len(path) and isinstance(path[i + 1], int) else 0
            names += [f"model {number}", f"models {number}", f"and {number} ("]
            if len(path) == i + 1 or (len(path) == i + 2 and key == "models"):
                names += ["[model]", "model table", "models"]
        if key == "simulated" and len(path) > i + 1:
            names.append("simulated")
    if keys and keys[0] in ("design", "tests"):
        names += [f"[{keys[0]}]", f"{keys[0]}."]
    if keys and keys[-1] in ("seed", "seeds"):
        names += ["seed", "seeds"]
    return names


@st.composite
def _mutated(draw) -> tuple[dict[str, Any], str, Path_]:
    """A base configuration with one change: the configuration, the change and its path."""
    config = copy.deepcopy(BASES[draw(st.sampled_from(sorted(BASES)))])
    change = draw(st.sampled_from(["drop", "add", "replace", "nest", "repeat"]))
    if change == "add":
        path = draw(st.sampled_from(_tables(config)))
        key = draw(st.sampled_from(["extra", "Name", "n_context", "seed ", "ça"]))
        table = _at(config, path)
        if key in table:
            return config, "none", ()
        table[key] = draw(_VALUES)
        return config, change, (*path, key)
    depth = draw(st.sampled_from([1, 2, None]))   # a shallow key as often as a deep one
    path = draw(st.sampled_from([p for p in _paths(config) if depth is None or len(p) == depth]
                                or _paths(config)))
    parent, key = _at(config, path[:-1]), path[-1]
    if change == "drop":
        del parent[key]
    elif change == "replace":
        parent[key] = draw(_VALUES)
    elif change == "nest":
        parent[key] = [parent[key]]
    elif not isinstance(parent[key], list) or not parent[key]:
        return config, "none", ()
    else:
        parent[key].append(copy.deepcopy(parent[key][0]))
    return config, change, path


def _is_whole(v: Any) -> bool:
    return isinstance(v, int) and not isinstance(v, bool) and v >= 1


def _is_text(v: Any) -> bool:
    return isinstance(v, str) and v.strip() != ""


def _is_names(v: Any) -> bool:
    return isinstance(v, list) and all(_is_text(x) for x in v)


def _is_number(v: Any) -> bool:
    return isinstance(v, int | float) and not isinstance(v, bool) and math.isfinite(v)


def _documented_types(cfg: Mapping[str, Any]) -> None:
    """The values of a configuration load_study accepted are of the documented types."""
    assert cfg["kind"] in ("decision", "pairs", "consistency", "forecasting")
    assert _is_text(cfg["name"]) and _is_text(cfg["out"]) and os.path.isabs(cfg["out"])
    assert isinstance(cfg["seed"], int) and not isinstance(cfg["seed"], bool)
    assert isinstance(cfg["models"], list) and cfg["models"]
    for m in cfg["models"]:
        assert _is_text(m["name"])
        for key in ("temperature", "timeout", "deadline"):
            assert key not in m or m[key] is None or _is_number(m[key]), (key, m[key])
        for key in ("max_tokens", "concurrency", "top_logprobs", "design_max_tokens"):
            assert key not in m or m[key] is None or _is_whole(m[key]), (key, m[key])
        for key in ("logprobs",):
            assert key not in m or isinstance(m[key], bool), (key, m[key])
        assert "base_url" not in m or _is_text(m["base_url"])
    design, tests = cfg["design"], cfg["tests"]
    assert _is_number(design["sum_tolerance"]) and _is_whole(design["repetitions"])
    kind = cfg["kind"]
    if kind == "decision":
        assert _is_whole(design["n_contexts"]) and _is_names(design["prompts"])
        assert isinstance(design["decision"], str) and _is_text(design["network"])
        assert _is_whole(tests["n_permutations"]) and _is_whole(tests["n_resamples"])
    elif kind == "pairs":
        assert _is_whole(design["n_pairs"]) and _is_names(design["variants"])
        assert isinstance(design["reverse"], bool) and _is_text(design["subject"])
        assert _is_whole(tests["n_resamples"])
    elif kind == "consistency":
        assert _is_whole(design["n_tuples"]) and _is_names(design["checkers"])
        assert _is_names(design["model_forms"]) and _is_text(design["questions"])
        assert _is_whole(tests["n_resamples"]) and _is_number(tests["tolerance"])
        assert isinstance(tests["baseline"], bool)
    else:
        assert _is_text(design["simulated_date"]) and _is_text(design["questions"])
        assert _is_whole(tests["n_resamples"]) and _is_whole(tests["n_bins"])
        assert _is_number(tests["confidence_level"])


@settings(max_examples=300)
@given(_mutated())
def test_a_mutated_study_is_loaded_valid_or_refused_naming_the_key(mutation):
    config, change, path = mutation
    try:
        cfg = elicitation.load_study(config)
    except (ValueError, TypeError) as exc:
        if change in ("add", "replace", "nest", "repeat"):
            assert any(name in str(exc) for name in _names(path)), (path, str(exc))
        return
    _documented_types(cfg)
    assert elicitation.load_study(cfg) == cfg


@pytest.mark.parametrize("kind", sorted(BASES))
def test_each_base_study_is_valid(kind):
    cfg = elicitation.load_study(BASES[kind])
    _documented_types(cfg)
    assert elicitation.load_study(cfg) == cfg


_TOML = st.one_of(
    st.text(max_size=40),
    st.sampled_from(['kind = "pairs"\n[model]\nsimulated = "rational"\n',
                     "[model]\nsimulated = 5\n", "seed = 1979-05-27\n[model]\nsimulated = "
                     '"rational"\n', '[[models]]\nsimulated = "rational"\n[[models]]\n',
                     "model = []\n", 'design = "x"\n[model]\nsimulated = "rational"\n']))


@settings(max_examples=150)
@given(_TOML, st.sampled_from(["utf-8", "latin-1", "utf-16"]))
def test_a_toml_file_of_any_text_is_loaded_or_refused_cleanly(text, encoding):
    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "study.toml"
        try:
            path.write_bytes(text.encode(encoding))
        except UnicodeEncodeError:
            return
        try:
            cfg = elicitation.load_study(path)
        except (ValueError, TypeError) as exc:
            assert type(exc) in (ValueError, TypeError), type(exc)   # no UnicodeDecodeError
            return
        assert elicitation.load_study(cfg) == cfg


def test_a_toml_file_that_is_not_utf8_is_refused_naming_the_file(tmp_path):
    # it raised UnicodeDecodeError ("'utf-8' codec can't decode byte 0xe9"), naming neither
    # the file nor what is wrong; a UTF-8 file is read as UTF-8 whatever the locale
    path = tmp_path / "study.toml"
    path.write_bytes("name = 'café'\n[model]\nsimulated = 'rational'\n".encode("latin-1"))
    with pytest.raises(ValueError, match=f"The study configuration {path} is not valid TOML: "
                       "not UTF-8 text"):
        elicitation.load_study(path)
    path.write_bytes("name = 'café'\n[model]\nsimulated = 'rational'\n".encode())
    assert elicitation.load_study(path)["name"] == "café"
