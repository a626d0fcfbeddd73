"""deprecated_keywords (coherence._warnings): old keywords kept for one release.

The decorator and the two functions that use it: ``pairs_power(null_win_rate=)``
(now ``win_rate=(win rate, null)``) and ``reasoning_graph_metrics(k=, min_impact=)``
(now ``key_events=k`` or ``key_events=(k, min_impact)``). An old call gives the same
result as the new spelling, with a DeprecationWarning that points at the caller.
"""

from __future__ import annotations

import inspect
import warnings
from pathlib import Path

import pandas as pd
import pytest

import coherence
from coherence._warnings import KeywordMerge
from coherence._warnings import deprecated_keywords


def _pair(extra: object, value: object) -> tuple[object, object]:
    if isinstance(value, tuple):
        raise TypeError("given twice")
    return value, extra


@deprecated_keywords("0.9", old="new", extra=KeywordMerge("new", _pair, "new=(a, b)"))
def _f(x: int = 0, *, new: object = 1, other: int = 2) -> tuple[int, object, int]:
    """Doc of _f."""
    return x, new, other


def test_rename_warns_at_the_caller_and_passes_the_value():
    with pytest.warns(DeprecationWarning, match=r"_f\(old=\.\.\.\) is deprecated since 0\.9 "
                      r"and will be removed in the next release: use new=") as record:
        assert _f(3, old=5) == (3, 5, 2)
    assert len(record) == 1
    assert Path(record[0].filename).resolve() == Path(__file__).resolve()


def test_merge_folds_the_old_value_into_the_new_one():
    with pytest.warns(DeprecationWarning, match=r"use new=\(a, b\)"):
        assert _f(extra=7) == (0, (1, 7), 2)           # into the default
    with pytest.warns(DeprecationWarning):
        assert _f(new=4, extra=7) == (0, (4, 7), 2)    # into the value given
    with pytest.warns(DeprecationWarning) as record:
        assert _f(old=4, extra=7) == (0, (4, 7), 2)    # renamed first, then merged
    assert len(record) == 2


def test_both_old_and_new_is_a_type_error():
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="both 'old'"):
        _f(old=1, new=2)
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="given twice"):
        _f(new=(1, 2), extra=3)


def test_new_calls_do_not_warn_and_metadata_is_kept():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert _f(1, new=2, other=3) == (1, 2, 3)
    assert _f.__name__ == "_f" and _f.__doc__ == "Doc of _f."
    assert list(inspect.signature(_f).parameters) == ["x", "new", "other"]


def test_misuse_is_caught_when_decorating():
    with pytest.raises(ValueError, match="keyword-only 'nope'"):
        deprecated_keywords(old="nope")(_f.__wrapped__)  # type: ignore[attr-defined]
    with pytest.raises(ValueError, match="keyword-only 'x'"):
        deprecated_keywords(old="x")(_f.__wrapped__)  # type: ignore[attr-defined]


# --------------------------------------------------------------------------- pairs_power
def _same(a: object, b: object) -> None:
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())  # type: ignore[attr-defined]


def test_pairs_power_null_win_rate_is_win_rate_pair():
    new = coherence.pairs_power(metric="win_rate", win_rate=(0.7, 0.55), n=30,
                                n_simulations=200, rng=0)
    with pytest.warns(DeprecationWarning, match=r"pairs_power\(null_win_rate=\.\.\.\).*"
                      r"use win_rate=\(win rate, null win rate\)"):
        old = coherence.pairs_power(metric="win_rate", win_rate=0.7, null_win_rate=0.55,
                                    n=30, n_simulations=200, rng=0)
    _same(new, old)
    assert (old.win_rate, old.null_win_rate) == (0.7, 0.55)
    with pytest.warns(DeprecationWarning):   # the default win rate, another null
        only_null = coherence.pairs_power(metric="win_rate", null_win_rate=0.4,
                                          n_simulations=0)
    _same(only_null, coherence.pairs_power(metric="win_rate", win_rate=(0.6, 0.4),
                                           n_simulations=0))
    plain = coherence.pairs_power(metric="win_rate", win_rate=0.6, n_simulations=0)
    assert plain.null_win_rate == 0.5


def test_pairs_power_null_win_rate_with_the_mean_improvement_raises():
    # null_win_rate=0.3 with the mean improvement went unused without a word (787 pairs, as
    # without it); like win_rate there it now raises, naming win_rate and the metric
    with pytest.warns(DeprecationWarning), pytest.raises(
            ValueError, match=r"The 'win_rate' parameter of pairs_power must be None with "
            r'metric="mean_improvement" .*deprecated null_win_rate=.*got \(0\.6, 0\.3\)'):
        coherence.pairs_power(effect=0.02, sd=0.1, null_win_rate=0.3, n_simulations=0)
    with pytest.warns(DeprecationWarning), pytest.raises(ValueError, match="'win_rate'"):
        coherence.pairs_power(sd=0.1, win_rate=0.7, null_win_rate=0.3, n_simulations=0)


def test_pairs_power_win_rate_pair_errors():
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="null win rate twice"):
        coherence.pairs_power(metric="win_rate", win_rate=(0.7, 0.5), null_win_rate=0.5)
    with pytest.raises(ValueError, match=r"'win_rate' parameter.*pair"):
        coherence.pairs_power(metric="win_rate", win_rate=(0.7, 0.5, 0.1))
    with pytest.raises(ValueError, match=r"'win_rate' parameter.*\(0\.0, 1\.0\); got 1\.5"):
        coherence.pairs_power(metric="win_rate", win_rate=(0.7, 1.5))
    with pytest.raises(ValueError, match=r"different from the null win rate \(0\.7\)"):
        coherence.pairs_power(metric="win_rate", win_rate=(0.7, 0.7))


# --------------------------------------------------------------------------- reasoning graphs
def _graphs() -> tuple[dict[str, list[object]], dict[str, list[object]]]:
    hind = {"question": ["q"] * 3, "event": ["e1", "e2", "e3"],
            "title": ["Central bank raises rates", "Dock workers strike", "Oil price jumps"],
            "date": ["2024-01-05", "2024-01-20", "2024-01-08"],
            "magnitude": [0.9, 0.5, 0.15], "confidence": [1.0, 1.0, 1.0]}
    fe = {"model": ["m", "m"], "question": ["q", "q"], "event": ["f1", "f2"],
          "title": ["Central bank raises rates again", "Oil price jumps"],
          "date": ["2024-01-06", "2024-01-08"]}
    return fe, hind


def _metrics(**kw: object) -> coherence.ReasoningGraphResult:
    fe, hind = _graphs()
    return coherence.reasoning_graph_metrics(fe, hind, gates=False, n_resamples=20, rng=0,
                                             **kw)


def _same_metrics(a: coherence.ReasoningGraphResult, b: coherence.ReasoningGraphResult) -> None:
    pd.testing.assert_frame_equal(a.to_frame(), b.to_frame())
    pd.testing.assert_frame_equal(a.table, b.table)


@pytest.mark.parametrize(("old", "new"), [
    ({"k": 2}, {"key_events": 2}),
    ({"min_impact": 0.2}, {"key_events": (5, 0.2)}),
    ({"k": 1, "min_impact": 0.1}, {"key_events": (1, 0.1)}),
    ({"k": 2, "min_impact": None, "convention": "code"},
     {"key_events": (2, None), "convention": "code"}),
])
def test_reasoning_graph_old_keywords_give_the_same_result(old, new):
    with pytest.warns(DeprecationWarning, match=r"reasoning_graph_metrics\((k|min_impact)="
                      r"\.\.\.\) is deprecated.*use key_events"):
        before = _metrics(**old)
    _same_metrics(before, _metrics(**new))


def test_reasoning_graph_key_events():
    res = _metrics(key_events=(2, 0.2))
    assert (res.k, res.min_impact) == (2, 0.2)
    assert res.table["n_key_events"].iloc[0] == 2
    assert _metrics(key_events=(5, None)).min_impact == 0.0       # the convention's
    assert _metrics().k == 5
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="both 'k'"):
        _metrics(k=2, key_events=3)
    with pytest.warns(DeprecationWarning), pytest.raises(TypeError, match="minimum impact "
                                                                          "twice"):
        _metrics(key_events=(2, 0.1), min_impact=0.2)
    with pytest.raises(ValueError, match=r"'key_events' parameter.*pair"):
        _metrics(key_events=(1, 2, 3))
    with pytest.raises(ValueError, match=r"'key_events' parameter.*>= 1"):
        _metrics(key_events=0)


def test_signatures_show_the_new_parameters():
    power = inspect.signature(coherence.pairs_power).parameters
    assert "win_rate" in power and "null_win_rate" not in power
    graphs = inspect.signature(coherence.reasoning_graph_metrics).parameters
    assert "key_events" in graphs and not {"k", "min_impact"} & set(graphs)
