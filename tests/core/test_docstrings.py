"""coherence/_docstrings.py: shared docstring paragraphs, filled at import."""

from __future__ import annotations

import inspect

import pytest

import coherence
from coherence._docstrings import DOCS
from coherence._docstrings import fill_doc


def test_a_slot_takes_the_paragraph_at_its_indentation():
    def f():
        """Do a thing.

        Parameters
        ----------
        %(ax)s

        Returns
        -------
        None
        """

    filled = fill_doc(f).__doc__
    first, second = DOCS["ax"].splitlines()
    assert f"\n        {first}\n        {second}\n\n        Returns" in filled
    assert "%(" not in filled


def test_an_unknown_slot_fails_at_import_and_no_docstring_is_fine():
    def f():
        """%(no_such_paragraph)s"""

    with pytest.raises(KeyError, match="no_such_paragraph"):
        fill_doc(f)

    def g():
        pass

    assert fill_doc(g) is g and g.__doc__ is None
    # a percent sign elsewhere in a docstring is left as it is
    def h():
        """Up 5%, not %(ax)s inline."""

    assert fill_doc(h).__doc__ == "Up 5%, not %(ax)s inline."


def test_no_public_docstring_keeps_a_slot():
    for name in coherence.__all__:
        obj = getattr(coherence, name)
        docs = [inspect.getdoc(obj) or ""]
        if inspect.isclass(obj):
            docs += [inspect.getdoc(m) or "" for _, m in inspect.getmembers(obj)
                     if callable(m) and not isinstance(m, type)]
        for doc in docs:
            assert "%(" not in doc, name
    for name in ("key_event_recall", "source_precision", "market_signal_metrics"):
        assert "Wilson's at the cluster-robust" in getattr(coherence, name).__doc__
