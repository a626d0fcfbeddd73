"""Contamination filter and temporal gateway."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coherence import ContaminationFilterResult
from coherence import GatewayReport
from coherence import TemporalGateway
from coherence import contamination_filter
from coherence._scoring._temporal import match_cutoff

#: forecast_scores warns of intervals on fewer than 6 questions (these have fewer)
FEW_QUESTIONS = "ignore:.*cover less than their level:coherence.SmallSampleWarning"

CUTOFFS = {"gpt-4o": "2023-10-01", "gpt-4o-mini": "2024-01-01", "Claude-3": "2023-08-01"}


# --------------------------------------------------------------------------- name matching
@pytest.mark.parametrize(("model", "key"), [
    ("gpt-4o", "gpt-4o"),                                # exact
    ("gpt-4o-2024-05-13", "gpt-4o"),                     # prefix
    ("openai/gpt-4o-mini-2024-07-18", "gpt-4o-mini"),    # longest prefix, last path segment
    ("OpenAI/GPT-4O-MINI", "gpt-4o-mini"),               # case-insensitive
    ("anthropic/claude-3-opus", "Claude-3"),
    ("llama-3", None),
])
def test_match_cutoff(model, key):
    assert match_cutoff(model, CUTOFFS) == key


def test_exact_name_wins_over_prefix():
    cut = {"org/gpt-4o": 1, "gpt-4o": 2}
    assert match_cutoff("org/gpt-4o", cut) == "org/gpt-4o"
    # both normalise to 'gpt-4o'; the exact key is preferred for the exact name
    assert match_cutoff("gpt-4o", cut) == "gpt-4o"


def test_keys_that_match_equally_well_with_different_dates_raise():
    cut = {"openai/gpt-4o": "2023-10-01", "azure/GPT-4o": "2024-01-01"}
    with pytest.raises(ValueError, match=r"'openai/gpt-4o' and 'azure/GPT-4o' match model "
                                         r"'gpt-4o-2024-05-13' equally well and differ"):
        match_cutoff("gpt-4o-2024-05-13", cut)
    assert match_cutoff("azure/GPT-4o", cut) == "azure/GPT-4o"  # an exact name is exact
    same = {"openai/gpt-4o": "2023-10-01", "gpt-4o": pd.Timestamp("2023-10-01")}
    assert match_cutoff("gpt-4o-mini", same) == "openai/gpt-4o"  # the same date: no doubt
    with pytest.raises(ValueError, match="equally well and differ"):
        contamination_filter(
            pd.DataFrame({"model": ["gpt-4o-x"], "question": ["q"], "opened": ["2024-02-01"]}),
            cutoffs=cut)


def test_a_key_matches_whole_parts_of_the_name():
    # 'gpt-4' is not gpt-4o's cutoff, nor 'llama-3' llama-3.1's: they took those models'
    # questions as clean from the older model's date
    cut = {"gpt-4": "2021-09-01", "llama-3": "2023-12-01", "b-": "2020-01-01"}
    assert match_cutoff("openai/gpt-4o-2024-05-13", cut) is None
    assert match_cutoff("llama-3.1-70b", cut) is None
    assert match_cutoff("gpt-4-turbo", cut) == "gpt-4"
    assert match_cutoff("gpt-4_0613", cut) == "gpt-4"
    assert match_cutoff("llama-3:8b", cut) == "llama-3"
    assert match_cutoff("b-x", cut) == "b-"  # a key that ends in a separator
    table = pd.DataFrame({"model": ["gpt-4o", "gpt-4-0613"], "question": ["q1", "q1"],
                          "opened": ["2022-06-01", "2022-06-01"]})
    rep = contamination_filter(table, cut)
    assert rep.unknown_models == ("gpt-4o",)
    assert rep.matches["key"].isna().tolist() == [True, False]
    assert rep.matches["key"].iloc[1] == "gpt-4"
    assert list(rep.kept["model"]) == ["gpt-4o", "gpt-4-0613"]


@given(st.text(alphabet="abc-/", min_size=1, max_size=12))
def test_match_is_a_prefix_of_the_last_segment(name):
    key = match_cutoff(name, {"a": 1, "ab": 2, "abc": 3, "b-": 4})
    if key is not None and key != name:
        assert name.rstrip("/").rsplit("/", 1)[-1].lower().startswith(key.lower())


# --------------------------------------------------------------------------- filter
def test_contamination_filter_by_hand():
    t = pd.DataFrame({
        "model": ["openai/gpt-4o", "openai/gpt-4o", "gpt-4o-mini", "llama-3", "gpt-4o"],
        "question": ["q1", "q2", "q1", "q1", "q3"],
        # gpt-4o cutoff 2023-10-01: q1 opened before -> dropped; q2 after -> kept;
        # q3 opened ON the cutoff -> kept. gpt-4o-mini cutoff 2024-01-01: q1 dropped.
        "opened": ["2023-09-01", "2024-02-01", "2023-09-01", "2023-09-01", "2023-10-01"]})
    rep = contamination_filter(t, CUTOFFS)
    assert isinstance(rep, ContaminationFilterResult)
    assert list(rep.kept.index) == [1, 3, 4]
    assert list(rep.dropped.index) == [0, 2]
    assert rep.unknown_models == ("llama-3",)
    assert rep.n_dropped == 2
    m = rep.matches.set_index("model")
    assert m.loc["openai/gpt-4o", "key"] == "gpt-4o"
    assert pd.isna(m.loc["llama-3", "key"])
    shown = rep._repr_html_()
    assert "3 rows kept, 2 dropped" in shown and "llama-3" in shown and "<table" in shown


def test_contamination_filter_aware_dates_compare_in_utc():
    t = pd.DataFrame({"model": ["m", "m"], "question": ["q1", "q2"],
                      # 2024-01-01T01:00+02:00 is 2023-12-31T23:00Z: before the cutoff
                      "opened": ["2024-01-01T01:00:00+02:00", "2024-01-01T00:00:00Z"]})
    rep = contamination_filter(t, {"m": "2024-01-01T00:00:00+00:00"})
    assert list(rep.kept["question"]) == ["q2"]


def test_contamination_filter_validation():
    t = pd.DataFrame({"model": ["m"], "question": ["q"], "opened": [None]})
    with pytest.raises(ValueError, match=r"Column 'opened'.*hold a date for every forecast"):
        contamination_filter(t, {"m": "2024-01-01"})
    with pytest.raises(ValueError, match=r"Column 'opened'.*hold dates"):
        contamination_filter(t.assign(opened="not a date"), {"m": "2024-01-01"})
    with pytest.raises(TypeError, match="'cutoffs' parameter of contamination_filter"):
        contamination_filter(t, ["m"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="both be timezone-aware or both naive"):
        contamination_filter(t.assign(opened="2024-01-01"), {"m": "2024-01-01T00:00Z"})
    with pytest.raises(ValueError, match=r"Column 'opened'.*all timezone-aware or all naive"):
        contamination_filter(pd.DataFrame({"model": ["m", "m"], "question": ["a", "b"],
                                           "opened": ["2024-01-01", "2024-01-01T00:00Z"]}),
                             {"m": "2024-01-01"})
    with pytest.raises(ValueError, match="column 'opened'"):
        contamination_filter(t.drop(columns="opened"), {"m": "2024-01-01"})
    with pytest.raises(ValueError, match="'cutoffs' parameter"):
        contamination_filter(t.assign(opened="2024-01-01"), {"m": None})
    with pytest.raises(ValueError, match=r"Column 'model'.*missing"):
        contamination_filter(t.assign(model=None, opened="2024-01-01"), {"m": "2024-01-01"})


# --------------------------------------------------------------------------- cutoff column
def test_cutoff_column_by_hand():
    t = pd.DataFrame({
        "model": ["a", "a", "a", "b", "b", "c"],
        "question": ["q1", "q2", "q3", "q1", "q2", "q1"],
        "opened": ["2023-09-01", "2023-10-01", "2024-02-01", "2023-09-01", "2023-10-01",
                   "2023-09-01"],
        # a: cutoff 2023-10-01 -> q1 dropped, q2 (on the cutoff) and q3 kept;
        # b: q1 has cutoff 2023-08-01 (kept), q2 no cutoff (kept, b unknown); c unknown.
        "cutoff": ["2023-10-01", "2023-10-01", "2023-10-01", "2023-08-01", None, ""]})
    rep = contamination_filter(t, "cutoff")
    assert list(rep.dropped.index) == [0]
    assert list(rep.kept.index) == [1, 2, 3, 4, 5]
    assert rep.unknown_models == ("b", "c")
    assert list(rep.matches.columns) == ["model", "key", "cutoff", "applied"]
    applied = rep.matches["applied"].tolist()
    assert applied[:2] == [pd.Timestamp("2023-10-01"), pd.Timestamp("2023-08-01")]
    assert pd.isna(applied[2]) and pd.isna(applied[3])
    assert list(rep.matches["model"]) == ["a", "b", "b", "c"]
    assert list(rep.matches["key"].fillna("-")) == ["cutoff", "cutoff", "-", "-"]


def test_cutoff_column_agrees_with_mapping():
    t = pd.DataFrame({"model": ["gpt-4o", "gpt-4o", "gpt-4o-mini", "llama-3"],
                      "question": ["q1", "q2", "q3", "q1"],
                      "opened": ["2023-09-01", "2024-02-01", "2023-12-01", "2023-09-01"]})
    by_map = contamination_filter(t, CUTOFFS)
    col = t.assign(cutoff=[CUTOFFS["gpt-4o"], CUTOFFS["gpt-4o"], CUTOFFS["gpt-4o-mini"], None])
    by_col = contamination_filter(col, "cutoff")
    assert list(by_col.kept.index) == list(by_map.kept.index)
    assert list(by_col.dropped.index) == list(by_map.dropped.index)
    assert by_col.unknown_models == by_map.unknown_models == ("llama-3",)


def test_cutoff_column_timezones():
    t = pd.DataFrame({"model": ["m", "m"], "question": ["q1", "q2"],
                      "opened": ["2024-01-01T01:00:00+02:00", "2024-01-01T00:00:00Z"],
                      # the same instant written in two zones: compared in UTC
                      "cutoff": ["2024-01-01T00:00:00Z", "2024-01-01T02:00:00+02:00"]})
    rep = contamination_filter(t, "cutoff")
    assert list(rep.kept["question"]) == ["q2"]
    # datetime columns work as well as strings
    rep2 = contamination_filter(t.assign(cutoff=pd.to_datetime(t["cutoff"], utc=True)),
                                "cutoff")
    assert list(rep2.kept["question"]) == ["q2"]


def test_cutoff_column_all_missing_keeps_everything():
    t = pd.DataFrame({"model": ["m", "n"], "question": ["q1", "q2"],
                      "opened": ["2024-01-01T00:00Z", "2024-01-01T00:00Z"],
                      "cutoff": [None, None]})
    rep = contamination_filter(t, "cutoff")     # no tz check: no cutoff to compare with
    assert len(rep.kept) == 2 and rep.unknown_models == ("m", "n")


def test_cutoff_column_validation():
    t = pd.DataFrame({"model": ["m", "m"], "question": ["a", "b"],
                      "opened": ["2024-01-01", "2024-01-01"], "cutoff": ["2023-01-01", None]})
    with pytest.raises(ValueError, match="column 'cut'"):
        contamination_filter(t, "cut")
    with pytest.raises(ValueError, match=r"Column 'cutoff'.*hold dates.*2023"):
        contamination_filter(t.assign(cutoff=[2023, None]), "cutoff")
    with pytest.raises(ValueError, match=r"Column 'cutoff'.*hold dates.*'soon'"):
        contamination_filter(t.assign(cutoff=["soon", None]), "cutoff")
    with pytest.raises(ValueError, match=r"Column 'cutoff'.*all timezone-aware or all naive"):
        contamination_filter(t.assign(cutoff=["2023-01-01", "2023-01-01T00:00Z"]), "cutoff")
    with pytest.raises(ValueError, match="both be timezone-aware or both naive"):
        contamination_filter(t.assign(cutoff=["2023-01-01T00:00Z", None]), "cutoff")
    with pytest.raises(TypeError, match="mapping of model name to date or the name of a "
                       "column"):
        contamination_filter(t, 3)  # type: ignore[arg-type]


@given(st.lists(st.tuples(st.integers(-30, 30), st.one_of(st.none(), st.integers(-30, 30))),
                min_size=1, max_size=20))
def test_cutoff_column_property(days):
    base = pd.Timestamp("2024-01-01T00:00:00Z")
    t = pd.DataFrame({
        "model": [f"m{i % 3}" for i in range(len(days))],
        "question": [f"q{i}" for i in range(len(days))],
        "opened": [base + pd.Timedelta(days=o) for o, _ in days],
        "cutoff": [None if c is None else base + pd.Timedelta(days=c) for _, c in days]})
    rep = contamination_filter(t, "cutoff")
    expect_drop = [i for i, (o, c) in enumerate(days) if c is not None and o < c]
    assert list(rep.dropped.index) == expect_drop
    assert len(rep.kept) + len(rep.dropped) == len(t)
    unknown = {f"m{i % 3}" for i, (_, c) in enumerate(days) if c is None}
    assert set(rep.unknown_models) == unknown


# --------------------------------------------------------------------------- gateway
ARTICLES = pd.DataFrame({
    "id": ["a", "b", "c", "d", "e"],
    "published": ["2024-02-29T23:59:59Z",        # just before -> visible
                  "2024-03-01T00:00:00Z",        # exactly at the cutoff -> hidden
                  None,                           # undated -> rejected
                  "2024-03-01T01:00:00+02:00",   # 2024-02-29T23:00Z -> visible
                  "2024-03-05T00:00:00Z"]})      # after -> hidden


def test_gateway_partition_by_hand():
    gate = TemporalGateway("2024-03-01T00:00:00+00:00")
    part = gate.partition(ARTICLES, date="published")
    assert list(part.visible["id"]) == ["a", "d"]
    assert list(part.hidden["id"]) == ["b", "e"]
    assert list(part.undated["id"]) == ["c"]
    assert list(gate.filter_articles(ARTICLES)["id"]) == ["a", "d"]
    events = ARTICLES.rename(columns={"published": "occurred"})
    assert list(gate.filter_events(events)["id"]) == ["a", "d"]
    assert "2024-03-01T00:00:00+00:00" in repr(gate)


def test_gateway_rejects_naive_and_bad_records():
    gate = TemporalGateway("2024-03-01T00:00:00Z")
    with pytest.raises(ValueError, match=r"Column 'published'.*timezone-aware"):
        gate.filter_articles({"published": ["2024-01-01"]})
    with pytest.raises(ValueError, match=r"Column 'published'.*hold dates"):
        gate.filter_articles({"published": ["yesterday-ish"]})
    with pytest.raises(ValueError, match="column 'occurred'"):
        gate.filter_events({"date": ["2024-01-01T00:00Z"]})
    with pytest.raises(ValueError, match="'cutoff' parameter"):
        TemporalGateway(None)
    with pytest.raises(ValueError, match="'cutoff' parameter"):
        TemporalGateway("not a date")


def test_validate_refuses_a_forecast_without_its_lists():
    # a misnamed list ('source') went unchecked and the report said ok, 0 checked
    gate = TemporalGateway("2024-03-01T00:00:00Z")
    late = [{"id": "s1", "published": "2024-03-02T00:00:00Z"}]
    with pytest.raises(ValueError, match=r"no 'sources' or 'events' list \(its fields: "
                                         r"'source'\)"):
        gate.validate({"source": late})
    with pytest.raises(ValueError, match="fields: none"):
        gate.validate({})
    assert not gate.validate({"source": late}, sources="source").ok
    rep = gate.validate({"sources": []})  # a forecast that cites nothing
    assert rep.ok and rep.n_checked == 0


def test_validate_reports_every_late_citation():
    gate = TemporalGateway("2024-03-01T00:00:00Z")
    forecast = {
        "sources": [{"id": "s1", "published": "2024-02-01T00:00:00Z"},
                    {"id": "s2", "published": "2024-03-01T00:00:00Z"},   # on the cutoff
                    {"id": "s3", "published": None}],
        "events": pd.DataFrame({"id": ["e1", "e2"],
                                "occurred": ["2024-03-02T00:00:00Z", "2024-01-01T00:00:00Z"]}),
    }
    rep = gate.validate(forecast)
    assert isinstance(rep, GatewayReport)
    assert not rep.ok
    assert list(zip(rep.violations["kind"], rep.violations["id"], strict=True)) == [
        ("source", "s2"), ("event", "e1")]
    assert list(rep.undated["id"]) == ["s3"]
    assert rep.n_checked == 5
    clean = gate.validate({"sources": [{"published": "2024-01-01T00:00:00Z"}], "events": []})
    assert clean.ok and clean.n_checked == 1


def test_validate_validation():
    gate = TemporalGateway("2024-03-01T00:00:00Z")
    with pytest.raises(TypeError, match=r"'forecast' parameter of TemporalGateway\.validate"):
        gate.validate(["s1"])  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="needs a 'published' date"):
        gate.validate({"sources": [{"id": "s1"}]})
    with pytest.raises(ValueError, match="timezone-aware"):
        gate.validate({"events": [{"occurred": "2024-01-01"}]})


@given(st.lists(st.integers(-10_000, 10_000), max_size=30))
def test_partition_is_exhaustive_and_strict(minutes):
    gate = TemporalGateway("2024-03-01T00:00:00Z")
    base = pd.Timestamp("2024-03-01T00:00:00Z")
    stamps = [(base + pd.Timedelta(minutes=m)).isoformat() for m in minutes]
    part = gate.partition({"t": stamps, "m": minutes}, date="t")
    assert len(part.visible) + len(part.hidden) + len(part.undated) == len(minutes)
    assert (part.visible["m"] < 0).all() and (part.hidden["m"] >= 0).all()


# --------------------------------------------------------------------------- partial cutoffs
#: opened the day before October 2023, on its first day, within it, and the day after it
OCTOBER = pd.DataFrame({"model": "m", "question": ["q1", "q2", "q3", "q4"],
                        "opened": ["2023-09-30", "2023-10-01", "2023-10-20", "2023-11-01"]})


@pytest.mark.parametrize(("cutoff", "kept", "applied"), [
    # a month or a year stands for its end: read as its first day (as pandas reads it),
    # '2023-10' kept q2 and q3, opened in a month the model may know
    ("2023-10", ["q4"], "2023-11-01"),
    ("Oct 2023", ["q4"], "2023-11-01"),
    ("2023/10", ["q4"], "2023-11-01"),
    ("2023", [], "2024-01-01"),
    ("2022", ["q1", "q2", "q3", "q4"], "2023-01-01"),
    # a quarter, however written (pandas read '2023Q4' with a deprecation warning, which
    # the suite turns into an error, and read 'Q4 2023' not at all)
    ("2023Q3", ["q2", "q3", "q4"], "2023-10-01"),
    ("2023-Q4", [], "2024-01-01"),
    ("Q3 2023", ["q2", "q3", "q4"], "2023-10-01"),
    ("q3-2023", ["q2", "q3", "q4"], "2023-10-01"),
    ("3Q2023", ["q2", "q3", "q4"], "2023-10-01"),
    # full dates, date-times and Timestamps as before (the first-day reading, written out)
    ("2023-10-01", ["q2", "q3", "q4"], "2023-10-01"),
    ("2023-10-31", ["q4"], "2023-10-31"),
    ("2023-10-01T00:00", ["q2", "q3", "q4"], "2023-10-01"),
    (pd.Timestamp("2023-10"), ["q2", "q3", "q4"], "2023-10-01"),
])
def test_month_or_year_cutoff_is_the_end_of_the_period(cutoff, kept, applied):
    by_map = contamination_filter(OCTOBER, {"m": cutoff})
    by_column = contamination_filter(OCTOBER.assign(cutoff=[cutoff] * 4), "cutoff")
    for rep in (by_map, by_column):
        assert list(rep.kept["question"]) == kept
        assert rep.matches["applied"].tolist() == [pd.Timestamp(applied)]
        assert rep.matches["cutoff"].tolist() == [cutoff]  # as given


def test_month_cutoff_aware_opening_dates_and_keys():
    # a month-only string is naive: with aware opening dates it raises as any naive cutoff
    aware = OCTOBER.assign(opened=OCTOBER["opened"] + "T00:00Z")
    with pytest.raises(ValueError, match="both be timezone-aware or both naive"):
        contamination_filter(aware, {"m": "2023-10"})
    # two keys that match equally well agree when the month's end is the full date
    same = {"openai/gpt-4o": "2023-10", "gpt-4o": "2023-11-01"}
    assert match_cutoff("gpt-4o-x", same) == "openai/gpt-4o"
    with pytest.raises(ValueError, match="equally well and differ"):
        match_cutoff("gpt-4o-x", {"openai/gpt-4o": "2023-10", "gpt-4o": "2023-10-01"})


@pytest.mark.filterwarnings(FEW_QUESTIONS)
def test_month_cutoff_through_forecast_scores():
    from coherence import forecast_scores

    # opened every 6 days from 2023-09-20: 2 before October, 5 within it, 5 from November
    t = pd.DataFrame({"model": "m", "question": [f"q{i}" for i in range(12)],
                      "opened": pd.date_range("2023-09-20", periods=12, freq="6D").astype(str),
                      "probability": [0.9, 0.8, 0.3, 0.6, 0.2, 0.7] * 2,
                      "outcome": [1, 1, 0, 1, 1, 0] * 2})
    month = forecast_scores(t, cutoffs={"m": "2023-10"}, n_resamples=20, rng=0)
    end = forecast_scores(t, cutoffs={"m": "2023-11-01"}, n_resamples=20, rng=0)
    first = forecast_scores(t, cutoffs={"m": "2023-10-01"}, n_resamples=20, rng=0)
    assert month.contamination.n_dropped == end.contamination.n_dropped == 7
    assert first.contamination.n_dropped == 2
    pd.testing.assert_frame_equal(month.filtered.table, end.filtered.table)


def test_one_question_with_two_opening_dates_raises():
    t = {"model": ["gpt-4o", "gpt-4o"], "question": ["q1", "q1"],
         "opened": ["2023-09-01", "2024-02-01"]}
    with pytest.raises(ValueError, match=r"Column 'opened'.*'question'.*'q1'.*row 0.*row 1"):
        contamination_filter(t, CUTOFFS)


def test_a_tie_among_shorter_keys_does_not_hide_the_longest_key():
    # 'openai/gpt-4o' and 'gpt-4o' tie for 'gpt-4o-mini-2024-07-18' but differ; the longer
    # key 'gpt-4o-mini' matches it better and decides (the tie raised "equally well")
    cut = {"openai/gpt-4o": "2023-10-01", "gpt-4o": "2023-12-01", "gpt-4o-mini": "2024-01-01"}
    assert match_cutoff("gpt-4o-mini-2024-07-18", cut) == "gpt-4o-mini"
    rep = contamination_filter(
        pd.DataFrame({"model": ["gpt-4o-mini-2024-07-18"], "question": ["q"],
                      "opened": ["2023-12-15"]}), cutoffs=cut)
    assert rep.n_dropped == 1 and rep.matches["key"].tolist() == ["gpt-4o-mini"]
    with pytest.raises(ValueError, match="equally well and differ"):
        match_cutoff("gpt-4o-2024-05-13", cut)


def test_a_month_precision_datetime64_cutoff_stands_for_the_month_end():
    """np.datetime64('2024-06') names a month, as the string '2024-06' does; it was read
    as 2024-06-01, keeping the questions opened on 15 and 30 June 2024 as clean (3 kept
    against 1 for the string). It now stands for the month's end, 2024-07-01, as the
    year precision np.datetime64('2024') stands for 2025-01-01."""
    import numpy as np

    table = {"model": ["gpt-4o"] * 4, "question": ["q1", "q2", "q3", "q4"],
             "opened": ["2024-05-15", "2024-06-15", "2024-06-30", "2024-07-01"]}
    rep = contamination_filter(table, {"gpt-4o": np.datetime64("2024-06")})
    assert list(rep.kept["question"]) == ["q4"]
    assert rep.matches["applied"].tolist() == [pd.Timestamp("2024-07-01")]
    year = contamination_filter(table, {"gpt-4o": np.datetime64("2024")})
    assert year.matches["applied"].tolist() == [pd.Timestamp("2025-01-01")]
    assert year.kept.empty
    day = contamination_filter(table, {"gpt-4o": np.datetime64("2024-06-15")})
    assert list(day.kept["question"]) == ["q2", "q3", "q4"]
    # the same month written two ways is one cutoff, not a clash of equally good keys
    assert match_cutoff("gpt-4o-0513", {"openai/gpt-4o": np.datetime64("2024-06"),
                                          "gpt-4o": "2024-06"}) == "openai/gpt-4o"


@pytest.mark.parametrize("blank", ["", "   "])
def test_a_blank_model_name_raises(blank):
    """A blank model name matched no cutoff, so its rows (here q1 and q2, opened before
    the cutoff) were kept unfiltered, the model listed as '' among the unknown ones. It
    now raises, naming the column and the rows; so does a blank key of the mapping, which
    matches no model."""
    table = {"model": [blank, blank, "gpt-4o"], "question": ["q1", "q2", "q3"],
             "opened": ["2023-09-01", "2023-09-02", "2023-09-01"]}
    with pytest.raises(ValueError, match=r"Column 'model' \(input to contamination_filter\) "
                                         r"must hold a model name on every row.*2 offending "
                                         r"rows \(first: row 0 = '.*', row 1"):
        contamination_filter(table, {"gpt-4o": "2023-10-01"})
    with pytest.raises(ValueError, match=r"Column 'model'"):
        contamination_filter(dict(table, cutoff=["2023-10-01"] * 3), "cutoff")
    named = dict(table, model=["gpt-4o"] * 3)
    with pytest.raises(ValueError, match=r"The 'cutoffs' parameter of contamination_filter "
                                         r"must be a mapping from model names"):
        contamination_filter(named, {"gpt-4o": "2023-10-01", blank: "2023-01-01"})
    assert contamination_filter(named, {"gpt-4o": "2023-10-01"}).n_dropped == 3


@pytest.mark.parametrize("how", ["mapping", "column"])
def test_applied_cutoff_comes_back_in_the_zone_given(how):
    """``matches`` shows a New York cutoff as given (00:00-05:00), not as the UTC wall time
    05:00; what is dropped does not move, and a month-only cutoff stays naive."""
    ny = pd.Timestamp("2024-03-01", tz="America/New_York")
    opened = pd.DatetimeIndex(["2024-02-01", "2024-04-01", "2024-02-01"])
    t = pd.DataFrame({"model": ["m", "m", "n"], "question": ["q1", "q2", "q3"],
                      "opened": opened.tz_localize("America/New_York"),
                      "cutoff": [ny, ny, pd.NaT]})
    rep = contamination_filter(t, {"mapping": {"m": ny}, "column": "cutoff"}[how])
    applied = rep.matches["applied"]
    assert applied.iloc[0] == ny and str(applied.iloc[0].tz) == "America/New_York"
    assert applied.iloc[0].hour == 0 and pd.isna(applied.iloc[1])
    assert list(rep.dropped["question"]) == ["q1"]
    naive = contamination_filter(t.assign(opened=opened), {"m": "2024-02"})
    assert naive.matches["applied"].tolist()[0] == pd.Timestamp("2024-03-01")
