"""Hypothesis strategies shared by several test modules."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hypothesis import strategies as st


def named_invalid(table: Mapping[str, st.SearchStrategy[Any]]
                  ) -> st.SearchStrategy[tuple[str, Any]]:
    """A ``(name, value)`` pair: a parameter of ``table`` and one of its invalid values."""
    return st.sampled_from(sorted(table)).flatmap(
        lambda name: st.tuples(st.just(name), table[name]))
