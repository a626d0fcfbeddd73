import dataclasses
from dataclasses import FrozenInstanceError
from dataclasses import dataclass
from dataclasses import field

import numpy as np
import pandas as pd
import pytest

from coherence import RESULT_COLUMNS
from coherence import CoherenceResult
from coherence import ConfidenceInterval
from coherence._results import Summary


@dataclass(frozen=True, slots=True)
class _ToyResult(CoherenceResult, test_name="toy", settings=("k",)):
    k: int
    null_distribution: np.ndarray = field(repr=False)


def make():
    return _ToyResult(statistic=0.25, pvalue=0.04, confidence_interval=ConfidenceInterval(
        0.1, 0.4, 0.95), n_obs=100, method="permutation", k=3,
        null_distribution=np.array([0.1, 0.2]))


def test_frozen_and_slotted():
    r = make()
    with pytest.raises(FrozenInstanceError):
        r.statistic = 1.0  # type: ignore[misc]
    assert not hasattr(r, "__dict__")


def test_arrays_read_only_and_hidden_from_repr():
    r = make()
    with pytest.raises(ValueError, match="read-only"):
        r.null_distribution[0] = 5.0
    assert "null_distribution" not in repr(r)


def test_to_frame_schema():
    frame = make().to_frame()
    assert tuple(frame.columns) == (*RESULT_COLUMNS, "k")
    assert _ToyResult.frame_columns() == (*RESULT_COLUMNS, "k")
    row = frame.iloc[0]
    assert row["test"] == "toy" and row["ci_low"] == 0.1 and row["ci_high"] == 0.4
    assert row["confidence_level"] == 0.95 and row["n_obs"] == 100 and row["k"] == 3


def test_confidence_interval_named_tuple():
    ci = make().confidence_interval
    low, high, level = ci
    assert (low, high, level) == (ci.low, ci.high, ci.confidence_level)


def test_summary_and_n_alias():
    r = make()
    assert r.n == 100
    text = r.summary()
    assert "toy (permutation)" in text
    assert "95% CI" in text and "[0.1, 0.4]" in text and "k" in text


def test_summary_text_is_unchanged_and_renders_as_html(capsys):
    r = make()
    text = r.summary()
    expected = ("toy (permutation)\n"
                "  statistic     0.25\n"
                "  p-value       0.04\n"
                "  95% CI        [0.1, 0.4]\n"
                "  n_obs         100\n"
                "  k             3")
    assert str(text) == expected and repr(text) == expected and text == expected
    print(text)
    assert capsys.readouterr().out == expected + "\n"
    rendered = text._repr_html_()
    assert "<caption><b>toy (permutation)</b></caption>" in rendered
    assert "<th style='text-align:left'>95% CI</th>" in rendered


def test_summary_aligns_a_setting_longer_than_the_first_column():
    @dataclass(frozen=True, slots=True)
    class _Long(CoherenceResult, test_name="long", settings=("k", "accuracy_convention")):
        k: int
        accuracy_convention: str

    r = _Long(statistic=0.25, pvalue=0.04, confidence_interval=ConfidenceInterval(
        0.1, 0.4, 0.95), n_obs=100, method="exact", k=3, accuracy_convention="paper")
    lines = str(r.summary()).splitlines()[1:]
    assert lines[-1] == "  accuracy_convention paper"
    assert {line.index(value) for line, value in zip(
        lines, ["0.25", "0.04", "[0.1", "100", "3", "paper"], strict=True)} == {22}


def test_summary_extend_and_escaping():
    s = Summary("title <x>\n  a 1", rows=[("a", "<1>")])
    longer = s.extend("\nmore", tables=[("detail & co", pd.DataFrame({"c": ["<td>"]}))])
    assert longer == "title <x>\n  a 1\nmore" and longer.heading == "title <x>"
    rendered = longer._repr_html_()
    assert "&lt;x&gt;" in rendered and "&lt;1&gt;" in rendered
    assert "detail &amp; co" in rendered and "&lt;td&gt;" in rendered
    assert "<x>" not in rendered
    assert Summary("plain")._repr_html_() == "<pre>plain</pre>"


def test_summary_with_table_indents_the_lead_and_the_table():
    s = Summary("head\n  a 1", rows=[("a", "1")])
    table = pd.DataFrame({"name": ["x", "yy"], "value": [0.123456, 12.0]})
    out = s.with_table("per name", table, lead=["first:"])
    assert str(out) == "head\n  a 1\n  first:\n  name  value\n     x 0.1235\n    yy     12"
    assert out.tables[-1][0] == "per name" and out.tables[-1][1] is table
    assert out.rows == s.rows and out.heading == "head"
    twice = out.with_table("again", table)
    assert [caption for caption, _ in twice.tables] == ["per name", "again"]
    assert "<p><b>again</b></p>" in twice._repr_html_()


def test_summary_never_rounds_a_pvalue_across_0_05():
    """A p-value of 0.049996 read "0.05" in every result's summary and in its detail table
    (four significant digits), next to a ``violates True`` that says it is below 0.05."""
    r = dataclasses.replace(make(), pvalue=0.049996)
    assert "  p-value       0.049996" in str(r.summary()).splitlines()
    table = pd.DataFrame({"pvalue_adjusted": [0.049996, 0.12345], "violates": [True, False]})
    shown = Summary("head", rows=[("a", "1")]).with_table("per comparison", table)
    assert str(shown).splitlines()[-2].split() == ["0.049996", "True"]
    assert str(shown).splitlines()[-1].split() == ["0.1235", "False"]
    assert "<td>0.049996</td>" in shown._repr_html_()


def test_summary_never_rounds_a_pvalue_onto_the_results_own_level():
    """IIA flags a comparison at adjusted p <= 1 - confidence_level: at 0.99 a p-value of
    0.0099996 read "0.01" in the summary and beside ``violates True`` in its table. The
    guard holds at the result's own level as at 0.05; at 0.95 nothing changes. Nor is one
    rounded onto it: 0.0100004 read "0.01" (so at most the level) beside ``violates False``,
    as ``<=`` reads it; only 0.01 reads "0.01"."""
    ci = ConfidenceInterval(0.1, 0.4, 0.99)
    r = dataclasses.replace(make(), pvalue=0.0099996, confidence_interval=ci)
    assert "  p-value       0.0099996" in str(r.summary()).splitlines()
    assert "  p-value       0.0100004" in str(dataclasses.replace(
        r, pvalue=0.0100004).summary()).splitlines()
    assert "  p-value       0.01" in str(dataclasses.replace(
        r, pvalue=0.01).summary()).splitlines()
    assert "  p-value       0.01" in str(dataclasses.replace(
        make(), pvalue=0.0099996).summary()).splitlines()
    table = pd.DataFrame({"pvalue_adjusted": [0.0099996, 0.12345], "violates": [True, False]})
    shown = r.summary().with_table("per comparison", table)
    assert str(shown).splitlines()[-2].split() == ["0.0099996", "True"]
    assert "<td>0.0099996</td>" in shown._repr_html_()
    assert str(make().summary().with_table("t", table)).splitlines()[-2].split() == [
        "0.01", "True"]


def test_a_negative_zero_reads_0():
    """A statistic of -0.0 read "-0" in summary(), in its detail table, in to_markdown()'s
    cells and in the plain-text tables; other negative values keep their sign."""
    from coherence._text import cell_text
    from coherence._text import text_table

    r = dataclasses.replace(make(), statistic=-0.0)
    assert "  statistic     0" in str(r.summary()).splitlines()
    table = pd.DataFrame({"statistic": [-0.0, -1e-17]})
    shown = Summary("head").with_table("per row", table)
    assert [line.strip() for line in str(shown).splitlines()[-2:]] == ["0", "-1e-17"]
    assert "<td>0</td>" in shown._repr_html_() and "-0<" not in shown._repr_html_()
    assert [cell_text(v) for v in (-0.0, np.float64(-0.0), -1e-17)] == ["0", "0", "-1e-17"]
    assert text_table(table).splitlines()[1].strip() == "0"


def test_class_keywords_name_the_test_and_its_settings():
    # dataclass(slots=True) builds the class twice, the second time without
    # the keywords: what the class statement said must survive
    assert _ToyResult.__slots__ and _ToyResult._test_name == "toy"
    assert _ToyResult.frame_columns() == (*RESULT_COLUMNS, "k")
    assert make().settings() == {"k": 3}

    @dataclass(frozen=True, slots=True)
    class Child(_ToyResult, settings=("k", "extra")):
        extra: str = "x"

    assert Child._test_name == "toy"  # inherited where not restated
    assert Child.frame_columns()[-2:] == ("k", "extra")
    with pytest.raises(TypeError):
        type("Bad", (CoherenceResult,), {}, test_nme="typo")
    with pytest.raises(TypeError, match="class Bad: 'test_name' must be a non-empty str"):
        type("Bad", (CoherenceResult,), {}, test_name="")
    with pytest.raises(TypeError, match="class Bad: 'settings' must be a tuple of field names"):
        type("Bad", (CoherenceResult,), {}, settings="k")  # one string, not a tuple
    with pytest.raises(TypeError, match="got \\('k', 3\\)"):
        type("Bad", (CoherenceResult,), {}, settings=("k", 3))


@dataclass(frozen=True, slots=True)
class _DetailResult(CoherenceResult, test_name="detail", settings=("k",)):
    k: int
    table: pd.DataFrame
    draws: np.ndarray = field(default_factory=lambda: np.zeros(2))
    labels: tuple[str, ...] = ()


def _detail(draws: np.ndarray, table: pd.DataFrame, k: int = 3) -> _DetailResult:
    return _DetailResult(statistic=0.25, pvalue=0.04, confidence_interval=ConfidenceInterval(
        0.1, 0.4, 0.95), n_obs=10, method="m", k=k, table=table, draws=draws)


def test_detail_fields_leave_repr_and_equality():
    """A field annotated ``pd.DataFrame`` or ``np.ndarray`` is a detail: out of ``repr``
    and of ``==`` (which raised on two arrays before), whether bare or with a default."""
    a = _detail(np.array([0.1, 0.2, 0.3]), pd.DataFrame({"x": [1, 2]}))
    b = _detail(np.array([0.1, 0.2, 0.3]), pd.DataFrame({"x": [1, 2]}))
    assert a == b  # the headline figures and settings
    assert a != _detail(np.array([0.1, 0.2, 0.3]), pd.DataFrame({"x": [1, 2]}), k=4)
    assert "draws" not in repr(a) and "table" not in repr(a) and "labels=()" in repr(a)
    assert _detail(np.zeros(3), pd.DataFrame()).draws.shape == (3,)
    fields = {f.name: f for f in dataclasses.fields(_DetailResult)}
    assert not fields["table"].repr and not fields["table"].compare
    assert not fields["draws"].repr and not fields["draws"].compare
    assert fields["labels"].repr and fields["labels"].compare


def test_a_detail_field_with_a_plain_default_is_refused():
    with pytest.raises(TypeError, match="'draws' takes its default from field"):
        @dataclass(frozen=True, slots=True)
        class _Bad(CoherenceResult):
            draws: np.ndarray = np.zeros(2)  # noqa: RUF009


def test_every_result_class_hides_its_detail_fields():
    import importlib
    import pkgutil

    import coherence

    for mod in pkgutil.walk_packages(coherence.__path__, "coherence."):
        importlib.import_module(mod.name)
    stack, seen = [CoherenceResult], []
    while stack:
        seen.extend(sub := stack.pop().__subclasses__())
        stack.extend(sub)
    assert len(seen) >= 40
    shown = [(cls.__name__, f.name) for cls in seen for f in dataclasses.fields(cls)
             if ("DataFrame" in str(f.type) or "ndarray" in str(f.type))
             and (f.repr or f.compare)]
    assert shown == []


def test_labels_given_as_numpy_strings_are_recorded_as_plain_str():
    """A column name read from a numpy array (``by=np.str_('m')``) was kept as given, so
    the result's repr read ``by=np.str_('m')``; the settings now hold a plain ``str``,
    also inside tuples (evidence columns, action pairs)."""
    r = dataclasses.replace(make(), method=np.str_("permutation"))
    assert type(r.method) is str and "method='permutation'" in repr(r)

    rng = np.random.default_rng(0)
    data = pd.DataFrame({"m": np.repeat(["a", "b"], 20), "q": [f"q{i}" for i in range(20)] * 2,
                         "p": rng.uniform(size=40), "o": np.tile(rng.integers(0, 2, 20), 2)})
    import coherence

    res = coherence.forecast_scores(data, by=np.str_("m"), question="q", probability="p",
                                    outcome="o", n_resamples=19, rng=0)
    assert type(res.by) is str and "by='m'" in repr(res)
    d = coherence.simulate("rational", n_contexts=60, rng=1).data
    mono = coherence.monotonicity_test(
        d, pairs=[(np.str_("yes"), np.str_("no"))], group=np.str_("context"),
        n_resamples=19, rng=0)
    assert type(mono.group) is str
    assert all(type(a) is str for pair in mono.pairs for a in pair)
    assert "np.str_" not in repr(mono)
