"""Key-event recall and the grounding split."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import given
from hypothesis import strategies as st

from coherence import DegenerateDataWarning
from coherence import KeyEventRecallResult
from coherence import SkippedRecordsWarning
from coherence import forecast_scores
from coherence import grounding_split
from coherence import key_event_recall
from coherence import source_precision
from tests.scoring._helpers import forecast_events
from tests.scoring._helpers import hindsight

#: the hand fixtures and drawn tables here are small: intervals that are the point
#: itself (scores that do not vary) warn, as test_forecast.py checks
pytestmark = pytest.mark.filterwarnings("ignore:forecast_scores:coherence.SmallSampleWarning")


# --------------------------------------------------------------------------- key-event recall
def test_key_event_recall_by_hand():
    units = pd.DataFrame({"model": ["m1", "m2", "m3"], "question": ["q"] * 3})
    res = key_event_recall(forecast_events(), hindsight(), forecasts=units, convention="code",
                           rng=0)
    assert isinstance(res, KeyEventRecallResult)
    per = res.table.set_index("model")
    # key events: h1 (0.6), h2 (0.25); h3 below min_impact; the outcome event is excluded
    assert list(res.key_events["event"]) == ["h1", "h2"]
    assert res.key_events["impact"].tolist() == pytest.approx([0.6, 0.25])
    # m1: f1 has the same tokens as h1 -> score 0.6 * 1 + 0.4 * 1 = 1.0;
    #     f2 = {strike, port, ends} vs h2 = {port, strike}: BM25 1 (only h2 shares tokens),
    #     F1 = 4/5 -> 0.6 + 0.32 = 0.92; f3 matches nothing
    assert per.loc["m1", "n_key_matched"] == 2 and per.loc["m1", "ker"] == 1.0
    assert per.loc["m1", "precision"] == pytest.approx(2 / 3)
    assert per.loc["m1", "recall"] == pytest.approx(2 / 3)     # 3 non-outcome events
    assert per.loc["m1", "f1"] == pytest.approx(4 / 6)
    scores = res.matches.set_index("hindsight_event")["score"]
    assert scores["h1"] == pytest.approx(1.0) and scores["h2"] == pytest.approx(0.92)
    # m2: nothing in common; m3: empty graph (precision undefined, F1 0)
    assert per.loc["m2", "ker"] == 0.0 and per.loc["m2", "precision"] == 0.0
    assert per.loc["m3", "ker"] == 0.0 and np.isnan(per.loc["m3", "precision"])
    assert per.loc["m3", "f1"] == 0.0
    assert res.statistic == pytest.approx(1 / 3)
    assert res.matcher == "hybrid" and res.threshold == 0.45
    assert res.event_precision == pytest.approx(1 / 3)   # mean of 2/3 and 0; m3 undefined


def test_date_window():
    # f2 dated 2024-01-01, h2 2024-01-10: 9 days apart > 7 -> no match
    res = key_event_recall(forecast_events(), hindsight(), date_window_days=7,
                           convention="code", rng=0)
    per = res.table.set_index("model")
    assert per.loc["m1", "ker"] == 0.5
    # convention='code': a missing date skips the window check
    hs = hindsight()
    hs.loc[2, "date"] = None
    res = key_event_recall(forecast_events(), hs, date_window_days=7, convention="code",
                           rng=0)
    assert res.table.set_index("model").loc["m1", "ker"] == 1.0
    # convention='paper': it cannot pass the gate
    res = key_event_recall(forecast_events(), hs, date_window_days=7, min_impact=0.2, rng=0)
    assert res.table.set_index("model").loc["m1", "ker"] == 0.5


def test_key_event_recall_conventions():
    # issue 15: the paper gates matches at 7 days (an undated pair cannot pass) and takes key
    # events among every event with an impact record; the code: no gate, impact >= 0.2
    paper = key_event_recall(forecast_events(), hindsight(), n_resamples=20, rng=0)
    code = key_event_recall(forecast_events(), hindsight(), convention="code",
                            n_resamples=20, rng=0)
    assert paper.convention == "paper" and code.convention == "code"
    assert (paper.min_impact, paper.date_window_days) == (0.0, 7.0)
    assert (code.min_impact, code.date_window_days) == (0.2, None)
    assert paper.to_frame()["convention"].iloc[0] == "paper"
    # key events: h1 (0.6), h2 (0.25) and, under the paper, h3 (0.1)
    assert list(paper.key_events["event"]) == ["h1", "h2", "h3"]
    assert list(code.key_events["event"]) == ["h1", "h2"]
    # m1 finds h1 (1 day apart) and h2 (9 days apart: fails the paper's gate); h3 undated
    pp, pc = (r.table.set_index("model") for r in (paper, code))
    assert pp.loc["m1", "ker"] == pytest.approx(1 / 3) and pc.loc["m1", "ker"] == 1.0
    assert pp.loc["m1", "n_matched"] == 1 and pc.loc["m1", "n_matched"] == 2
    # overrides: the paper's key-event set with no date gate
    res = key_event_recall(forecast_events(), hindsight(), date_window_days=None,
                           n_resamples=20, rng=0)
    assert res.table.set_index("model").loc["m1", "ker"] == pytest.approx(2 / 3)
    # an undated forecast event cannot pass the paper's gate
    fe = forecast_events().assign(date=None)
    with pytest.warns(DegenerateDataWarning, match="no row of forecast_events "
                      "has a date.*7-day date window"):
        res = key_event_recall(fe, hindsight(), n_resamples=20, rng=0)
    assert res.table["n_matched"].eq(0).all()
    res = key_event_recall(fe, hindsight(), convention="code", date_window_days=7,
                           n_resamples=20, rng=0)
    assert res.table.set_index("model").loc["m1", "ker"] == 1.0
    with pytest.raises(ValueError, match="'convention' parameter of key_event_recall"):
        key_event_recall(forecast_events(), hindsight(), convention="authors")


def test_k_and_ties_in_impact():
    hs = hindsight()
    hs["magnitude"] = 0.5      # every event has impact 0.5 * confidence...
    hs["confidence"] = 1.0     # ...= 0.5: a tie; first appearance wins
    res = key_event_recall(forecast_events(), hs, k=1, rng=0)
    assert list(res.key_events["event"]) == ["h1"]


def test_question_without_key_events():
    hs = hindsight().assign(magnitude=0.1)
    with pytest.warns(DegenerateDataWarning, match="no forecast's question has a key event"):
        res = key_event_recall(forecast_events(), hs, convention="code", rng=0)
    assert np.isnan(res.statistic) and res.n_no_key_events == 2
    assert res.table["n_key_events"].eq(0).all()
    # the paper has no impact threshold: the same events are key events
    assert key_event_recall(forecast_events(), hs, rng=0).n_no_key_events == 0


def test_threshold_changes_matches():
    res = key_event_recall(forecast_events(), hindsight(), threshold=0.95, rng=0)
    # only the identical pair (score 1.0) passes 0.95; 0.92 does not
    assert res.table.set_index("model").loc["m1", "n_matched"] == 1


def test_key_event_recall_validation():
    fe, hs = forecast_events(), hindsight()
    for kwargs, match in [({"k": 0}, "'k' parameter of key_event_recall"),
                          ({"matcher": "bm25"}, "'matcher' parameter of key_event_recall"),
                          ({"threshold": float("nan")}, "'threshold' parameter"),
                          ({"date_window_days": -1}, "'date_window_days' parameter"),
                          ({"n_resamples": 0}, "'n_resamples' parameter")]:
        with pytest.raises(ValueError, match=match):
            key_event_recall(fe, hs, **kwargs)
    with pytest.raises(ValueError, match="column 'magnitude'"):
        key_event_recall(fe, hs.drop(columns="magnitude"))
    with pytest.raises(ValueError, match=r"Column 'model'.*missing"):
        key_event_recall(fe.assign(model=None), hs)
    with pytest.raises(ValueError, match=r"Column 'magnitude'.*numeric"):
        key_event_recall(fe, hs.assign(magnitude="big"))
    with pytest.raises(ValueError, match=r"Column 'date'.*hold dates"):
        key_event_recall(fe.assign(date="soon"), hs)


def test_key_event_recall_undated_hindsight_with_aware_forecast_dates():
    """A hindsight table whose dates are all missing has no awareness to mix: with aware
    forecast dates it raised 'must both be timezone-aware or both naive' (as
    reasoning_graph_metrics does not), though the code convention scores such pairs."""
    fe = forecast_events().assign(
        date=pd.to_datetime(forecast_events()["date"]).dt.tz_localize("UTC"))
    hs = hindsight().assign(date=None)
    for dates in (hs, hs.assign(date=pd.Series(pd.NaT, index=hs.index).dt.tz_localize("UTC"))):
        res = key_event_recall(fe, dates, convention="code", rng=0)
        naive = key_event_recall(forecast_events(), dates, convention="code", rng=0)
        pd.testing.assert_frame_equal(res.table, naive.table)
        assert res.table.set_index("model").loc["m1", "ker"] == 1.0


@given(st.integers(1, 6), st.floats(0.0, 1.0))
def test_ker_in_unit_interval(k, threshold):
    res = key_event_recall(forecast_events(), hindsight(), k=k, threshold=threshold,
                           n_resamples=5, rng=0)
    ker = res.table["ker"].dropna()
    assert ((ker >= 0) & (ker <= 1)).all()
    # one-to-one: a hindsight event and a forecast row are each matched at most once
    m = res.matches
    assert not m.duplicated(["model", "hindsight_event"]).any()
    assert not m.duplicated(["forecast_row"]).any()


# --------------------------------------------------------------------------- grounding split
def test_grounding_split():
    scores = forecast_scores({"model": ["m1", "m2"], "question": ["q", "q"],
                              "probability": [0.9, 0.2], "outcome": [1, 1]},
                             n_resamples=5, rng=0)
    ker = key_event_recall(forecast_events(), hindsight(), convention="code", rng=0)
    sp = source_precision({"model": ["m1", "m2"], "question": ["q", "q"],
                           "sources": [["a"], ["b"]]}, {"q": ["a"]}, rng=0)
    split = grounding_split(scores, key_events=ker, sources=sp).set_index(["metric", "group"])
    # m1 is correct (0.9 on YES) with KER 1, precision 1; m2 incorrect with KER 0, precision 0
    assert split.loc[("ker", "correct"), "mean"] == 1.0
    assert split.loc[("ker", "incorrect"), "mean"] == 0.0
    assert split.loc[("source_precision", "correct"), "mean"] == 1.0
    assert split.loc[("source_precision", "incorrect"), "n"] == 1
    with pytest.raises(TypeError, match="'scores' parameter of grounding_split"):
        grounding_split(ker)  # type: ignore[arg-type]


def test_grounding_split_names_metric_rows_without_a_forecast():
    """Question ids typed two ways ('Q1' in the citations, 'q1' in the forecasts) matched
    nothing: n = 0 and a NaN mean in both groups, without a word."""
    scores = forecast_scores({"model": ["m"] * 3, "question": ["q1", "q2", "q3"],
                              "probability": [0.9, 0.2, 0.7], "outcome": [1, 1, 0]},
                             n_resamples=5, rng=0)
    sp = source_precision({"model": ["m"] * 3, "question": ["Q1", "Q2", "q3"],
                           "sources": [["a"], ["b"], ["a"]]},
                          {"Q1": ["a"], "Q2": ["a"], "q3": ["a"]}, rng=0)
    with pytest.warns(SkippedRecordsWarning, match=r"2 of 3 .* of 'sources' have no "
                      r"forecast in 'scores' \(\('m', 'Q1'\), \('m', 'Q2'\)\)"):
        split = grounding_split(scores, sources=sp)
    assert split["n"].sum() == 1


# --------------------------------------------------------------------------- conformance
def test_key_event_recall_per_forecast_table_ignores_row_order():
    fe, hs = forecast_events(), hindsight()
    r1 = key_event_recall(fe, hs, n_resamples=50, rng=4)
    r2 = key_event_recall(fe.iloc[::-1], hs, n_resamples=50, rng=4)
    a = r1.table.set_index("model").sort_index()
    b = r2.table.set_index("model").sort_index()
    pd.testing.assert_frame_equal(a, b)
    assert r1.to_frame()["matcher"].iloc[0] == "hybrid"


def test_grounding_split_needs_same_key():
    scores = forecast_scores({"model": ["m1"], "question": ["q"], "probability": [0.9],
                              "outcome": [1]}, n_resamples=5, rng=0)
    sp = source_precision({"who": ["m1"], "question": ["q"], "sources": [["a"]]},
                          {"q": ["a"]}, by="who", rng=0)
    with pytest.raises(ValueError, match="'sources' parameter of grounding_split"):
        grounding_split(scores, sources=sp)


# --------------------------------------------------------------------------- issue 17: input
@pytest.mark.parametrize("false, true", [("False", "True"), ("0", "1"), ("no", "yes"),
                                         (0, 1), (False, True)])
def test_is_outcome_read_as_written(false, true):
    # strings from a CSV: bool('False') is True, which used to remove every event
    h = hindsight()
    h["is_outcome"] = pd.Series([false] * 4 + [true], dtype=object)
    want = key_event_recall(forecast_events(), hindsight(), n_resamples=50, rng=0)
    got = key_event_recall(forecast_events(), h, n_resamples=50, rng=0)
    pd.testing.assert_frame_equal(got.table, want.table)
    assert got.statistic == want.statistic


def test_is_outcome_garbage_and_blank():
    h = hindsight().astype({"is_outcome": object})
    h.loc[2, "is_outcome"] = "maybe"
    with pytest.raises(ValueError, match=r"Column 'is_outcome' \(input to key_event_recall\) "
                       r"must hold yes/no flags.*row 2 = 'maybe'"):
        key_event_recall(forecast_events(), h, rng=0)
    h.loc[2, "is_outcome"] = None  # blank: not the outcome
    got = key_event_recall(forecast_events(), h, n_resamples=50, rng=0)
    assert got.statistic == key_event_recall(forecast_events(), hindsight(), n_resamples=50,
                                             rng=0).statistic


@pytest.mark.parametrize("column, value, rule", [
    ("magnitude", np.nan, "not contain NaN or missing values"),
    ("confidence", np.nan, "not contain NaN or missing values"),
    ("magnitude", -0.5, r"hold finite numbers >= 0"),
    ("magnitude", np.inf, "hold finite numbers"),
    ("confidence", 1.5, r"hold probabilities in \[0, 1\]"),
    ("confidence", -0.1, r"hold probabilities in \[0, 1\]")])
def test_magnitude_and_confidence_checked_not_dropped(column, value, rule):
    h = hindsight()
    h.loc[2, column] = value
    with pytest.raises(ValueError, match=rf"Column '{column}' \(input to key_event_recall\) "
                       rf"must {rule}.*1 offending row \(first: row 2"):
        key_event_recall(forecast_events(), h, rng=0)


@pytest.mark.parametrize(("column", "value"), [("magnitude", np.nan), ("magnitude", 1e6),
                                            ("confidence", np.nan), ("confidence", 0.0)])
def test_outcome_rows_are_not_checked(column, value):
    # the outcome record is removed before the checks: its impact is never used, so any
    # value there (a missing one included) gives the clean input's result to the last bit
    clean = key_event_recall(forecast_events(), hindsight(), n_resamples=10, rng=0)
    h = hindsight()
    h.loc[4, column] = value
    res = key_event_recall(forecast_events(), h, n_resamples=10, rng=0)
    assert res.statistic == clean.statistic and res.n_obs == clean.n_obs
    assert res.confidence_interval == clean.confidence_interval
    pd.testing.assert_frame_equal(res.table, clean.table)
    assert "out" not in set(res.key_events["event"])


def test_grounding_split_wrong_types():
    scores = forecast_scores({"model": ["m"], "question": ["q"], "probability": [0.7],
                              "outcome": [1]}, n_resamples=10, rng=0)
    with pytest.raises(TypeError, match=r"The 'key_events' parameter of grounding_split must "
                       r"be a KeyEventRecallResult or None; got 'str'"):
        grounding_split(scores, key_events="ker")
    with pytest.raises(TypeError, match=r"The 'sources' parameter of grounding_split must be a "
                       r"SourcePrecisionResult"):
        grounding_split(scores, sources=scores)


@pytest.mark.parametrize(("option", "value", "rule"), [
    ("threshold", -1, r"a finite float in \[0.0, 1.0\]; got -1.0"),
    ("threshold", 1.5, r"a finite float in \[0.0, 1.0\]; got 1.5"),
    ("threshold", np.nan, r"a finite float in \[0.0, 1.0\]; got nan"),
    ("min_impact", -0.1, r"a finite float in \[0.0, inf\]; got -0.1")])
def test_threshold_and_min_impact_ranges(option, value, rule):
    # threshold=-1 was accepted and matched every pair of events
    with pytest.raises(ValueError, match=rf"The '{option}' parameter of key_event_recall must "
                       rf"be {rule}"):
        key_event_recall(forecast_events(), hindsight(), rng=0, **{option: value})


# --------------------------------------------------------------------------- rows across tables
_H = {"question": ["q"] * 2, "event": ["e1", "e2"],
      "title": ["Central bank raises rates", "Dock workers strike"],
      "date": ["2024-01-05", "2024-01-20"], "magnitude": [0.9, 0.5], "confidence": [1.0] * 2}
_F = {"model": ["m"], "question": ["q"], "title": ["Central bank raises rates"],
      "date": ["2024-01-06"]}


def test_key_event_recall_refuses_mixed_timezones():
    f = dict(_F, date=["2024-01-06 06:00+00:00"])
    with pytest.raises(ValueError, match=r"forecast_events\['date'\] and hindsight_events"):
        key_event_recall(f, _H, rng=0)


def test_key_event_recall_refuses_an_event_with_two_dates():
    h = pd.DataFrame({k: [*v, v[0]] for k, v in _H.items()}).assign(
        date=["2024-01-05", "2024-01-20", "2024-03-01"])
    with pytest.raises(ValueError, match=r"Column 'date'.*\('q', 'e1'\).*row 0.*row 2"):
        key_event_recall(_F, h, rng=0)
    # a record without a date takes its event's date, whatever the row order
    h = h.assign(date=["2024-01-05", "2024-01-20", None])
    a = key_event_recall(_F, h, rng=0)
    b = key_event_recall(_F, h.iloc[[2, 1, 0]], rng=0)
    assert a.statistic == b.statistic == 0.5


def test_key_event_recall_refuses_an_event_with_two_titles():
    # a second record of e1 with another text: which one the matcher read would depend
    # on the row order, so it raises, naming both rows
    h = pd.DataFrame({k: [*v, v[0]] for k, v in _H.items()}).assign(
        title=["Central bank raises rates", "Dock workers strike", "Dock workers strike"])
    with pytest.raises(ValueError, match=r"Column 'title'.*\('q', 'e1'\).*row 0.*row 2"):
        key_event_recall(_F, h, rng=0)
    h = h.assign(description=["Rates up", None, "Rates down"],
                 title=["Central bank raises rates", "Dock workers strike", None])
    with pytest.raises(ValueError, match=r"Column 'description'.*row 0.*row 2"):
        key_event_recall(_F, h, rng=0)
    # a blank title, or one that differs only in surrounding white space, is the event's
    # text, from whichever record gives it: the match is found in either row order
    for title in (None, "  Central bank raises rates "):
        h = h.assign(description=None, title=[title, "Dock workers strike",
                                              "Central bank raises rates"])
        a = key_event_recall(_F, h, rng=0)
        b = key_event_recall(_F, h.iloc[[2, 1, 0]], rng=0)
        assert a.statistic == b.statistic == 0.5
        assert list(a.matches["hindsight_event"]) == list(b.matches["hindsight_event"]) == ["e1"]


def test_key_event_recall_refuses_a_repeated_forecast_event():
    f = {k: v * 2 for k, v in _F.items()}
    with pytest.raises(ValueError, match=r"Column 'title'.*once.*row 0, row 1"):
        key_event_recall(f, _H, rng=0)


def test_key_event_recall_refuses_forecast_events_of_unlisted_forecasts():
    f = {"model": ["m", "m2"], "question": ["q", "q"],
         "title": ["Central bank raises rates"] * 2, "date": ["2024-01-06"] * 2}
    with pytest.raises(ValueError, match=r"'forecasts'.*no row for 1 pair\(s\): "
                                         r"\('m2', 'q'\)"):
        key_event_recall(f, _H, forecasts={"model": ["m"], "question": ["q"]}, rng=0)


def test_equal_decimal_impacts_tie_by_first_appearance():
    """Impacts 0.3 x 0.6 and 0.2 x 0.9 are both 0.18, a tie that first appearance breaks
    (e1 the key event at k=1, KER 1.0 for the forecast naming it); in binary the second
    is 0.18000000000000002 and was ranked first (KER 0.0). At min_impact=0.18 both
    count."""
    hind = {"question": ["q"] * 2, "event": ["e1", "e2"],
            "title": ["Central bank raises interest rates", "Strike closes ports"],
            "magnitude": [0.3, 0.2], "confidence": [0.6, 0.9]}
    fc = {"model": ["m"], "question": ["q"], "title": ["Central bank raises interest rates"]}
    res = key_event_recall(fc, hind, k=1, date_window_days=None, rng=0)
    assert res.statistic == 1.0
    assert res.key_events["event"].tolist() == ["e1"]
    both = key_event_recall(fc, hind, k=5, min_impact=0.18, date_window_days=None, rng=0)
    assert both.key_events["event"].tolist() == ["e1", "e2"]


# --------------------------------------------------------------------------- rejected events
def test_key_event_recall_removes_rejected_records():
    # h2 rejected by its annotators (any case, spaces aside): it is no key event, as
    # reasoning_graph_metrics has it; the old code kept it (key events h1, h2; 3 events)
    h = hindsight()
    h["review_status"] = pd.Series([None, "accepted", " Rejected ", "", None], dtype=object)
    h.loc[2, "magnitude"] = np.nan  # a rejected record is never used, so never checked
    res = key_event_recall(forecast_events(), h, convention="code", n_resamples=10, rng=0)
    assert list(res.key_events["event"]) == ["h1"]
    assert res.n_rejected_events == 1
    per = res.table.set_index("model")
    assert per.loc["m1", "n_hindsight_events"] == 2 and per.loc["m1", "n_matched"] == 1
    assert per.loc["m1", "recall"] == 0.5
    # one record of h1 rejected: the event stays, its impact from the other record
    h = hindsight()
    h["review_status"] = ["ok", "rejected", "ok", "ok", "ok"]
    res = key_event_recall(forecast_events(), h, convention="code", n_resamples=10, rng=0)
    assert res.n_rejected_events == 0
    assert res.key_events["impact"].tolist() == pytest.approx([0.45, 0.25])
    # a column of another name is named by review_status=; without the column nothing goes
    res = key_event_recall(forecast_events(), h.rename(columns={"review_status": "verdict"}),
                           convention="code", review_status="verdict", n_resamples=10, rng=0)
    assert res.key_events["impact"].tolist() == pytest.approx([0.45, 0.25])
    res = key_event_recall(forecast_events(), h.rename(columns={"review_status": "verdict"}),
                           convention="code", n_resamples=10, rng=0)
    assert res.key_events["impact"].tolist() == pytest.approx([0.6, 0.25])
    assert res.n_rejected_events == 0


def test_key_event_recall_question_with_no_kept_record_says_why():
    """A question whose every hindsight record is rejected or the outcome has rows: the
    warning says how many and why none was kept (it said the question had no row in
    hindsight_events); a question truly absent keeps the old wording."""
    hind = {"question": ["q1", "q2", "q2", "q2", "q4"], "event": ["a", "b", "c", "d", "e"],
            "title": ["Central bank raises rates", "x", "y", "z", "w"],
            "magnitude": [0.5] * 5, "confidence": [0.9] * 5,
            "verdict": [None, "rejected", " Rejected", None, None],
            "is_outcome": [0, 0, 0, 1, 1]}
    fc = {"model": ["m"] * 4, "question": ["q1", "q2", "q3", "q4"],
          "title": ["Central bank raises rates", "x", "y", "w"]}
    with pytest.warns(SkippedRecordsWarning) as rec:
        res = key_event_recall(fc, hind, convention="code", review_status="verdict",
                               n_resamples=10, rng=0)
    texts = [str(w.message) for w in rec if issubclass(w.category, SkippedRecordsWarning)]
    assert ("key_event_recall: 1 question(s) of the forecasts have no row in "
            "hindsight_events ('q3');") in texts[0]
    assert ("key_event_recall: 2 question(s) of the forecasts have rows, none kept, in "
            "hindsight_events ('q2': 3 rows, 2 rejected in 'verdict', 1 the outcome in "
            "'is_outcome'; 'q4': 1 row, 1 the outcome in 'is_outcome');") in texts[1]
    assert len(texts) == 2
    assert res.n_no_key_events == 3 and res.statistic == 1.0


def test_key_event_recall_refuses_a_forecast_listed_twice():
    """A forecasts table with one (model, question) pair on two rows (a table of dated
    forecasts) was collapsed to one forecast without a word; it raises, naming the
    parameter, the columns and the rows."""
    f = {"model": ["m"], "question": ["q"], "title": ["Central bank raises rates"],
         "date": ["2024-01-06"]}
    units = pd.DataFrame({"model": ["m", "m", "m2"], "question": ["q", "q", "q"],
                          "date": ["2024-01-01", "2024-01-05", "2024-01-05"]},
                         index=[10, 11, 12])
    with pytest.raises(ValueError, match=r"'question'.*\(model, question\) pair of 'forecasts' "
                                         r"once.*row 10, row 11\)"):
        key_event_recall(f, _H, forecasts=units, rng=0)


@pytest.mark.parametrize("blank", ["", "  "])
def test_is_outcome_blank_string_is_false(blank):
    """A blank cell written as '' or spaces (an empty field of a text table) is false, as the
    docstring says and as reasoning_graph_metrics reads it; it raised 'must hold yes/no
    flags'."""
    h = hindsight().astype({"is_outcome": object})
    h.loc[2, "is_outcome"] = blank
    got = key_event_recall(forecast_events(), h, n_resamples=50, rng=0)
    want = key_event_recall(forecast_events(), hindsight(), n_resamples=50, rng=0)
    pd.testing.assert_frame_equal(got.table, want.table)
