"""The forecasting study (``kind = "forecasting"``): the model told a simulated date, its
forecasts scored against the resolutions; cached, resumable after a kill, offline with
simulated models and against a fake server."""

from __future__ import annotations

import re
import signal
import subprocess
import sys
import textwrap
import time

import numpy as np
import pandas as pd
import pytest

import elicitation
from elicitation._study_forecasting import METRICS
from elicitation._study_forecasting import scorable_questions
from elicitation._study_forecasting import simulated_date_iv
from elicitation._study_forecasting import spoken_date
from elicitation._study_tuples import demo_questions
from tests._fake_openai_server import FakeOpenAIServer
from tests._fake_openai_server import Reply
from tests._fake_openai_server import default_answer
from tests.elicitation._shared import cli
from tests.elicitation.test_live import _env
from tests.elicitation.test_live import _stored

FORECASTING = """
kind = "forecasting"
seed = 3
out = "dated"

[[models]]
simulated = "rational"

[[models]]
name = "noisy"
simulated = {{ agent = "rational", report_noise = 0.2 }}

[design]
simulated_date = {date}
repetitions = 2

[tests]
n_resamples = 199
"""


def test_demo_questions_have_invented_resolutions():
    qs = demo_questions()
    assert set(pd.to_numeric(qs["resolution"])) == {0, 1}
    from importlib import resources
    header = resources.files("elicitation").joinpath("data/demo_questions.csv").read_text()
    assert "'resolution' (1 yes, 0 no) is INVENTED" in header


def test_forecasting_study_scores_each_model_at_the_simulated_date(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "dated.toml"
    config.write_text(FORECASTING.format(date="2028-01-01"))
    code, out = cli("study", str(config), "--quiet")
    assert code == 0, out
    assert "forecasts at the simulated date 2028-01-01" in out
    assert "80 elicitations, 80 calls made, 0 from the cache" in out
    results = pd.read_csv(tmp_path / "dated" / "results.csv")
    assert (results["simulated_date"] == "2028-01-01").all()
    assert set(results["model"]) == {"rational", "noisy"}
    assert list(results.loc[results["model"] == "rational", "metric"]) == list(METRICS)
    # every score is what its definition gives on the forecasts written beside it
    forecasts = pd.read_csv(tmp_path / "dated" / "forecasts.csv")
    table = pd.read_csv(tmp_path / "dated" / "table.csv")
    for model, mine in forecasts.groupby("model"):
        p, y = mine["probability"].to_numpy(), mine["outcome"].to_numpy()
        np.testing.assert_allclose(
            p, table[table["model"] == model].groupby("question")["p"].mean()
            .loc[mine["question"]].to_numpy())
        got = results[results["model"] == model].set_index("metric")
        assert got.at["brier", "estimate"] == pytest.approx(np.mean((p - y) ** 2))
        assert got.at["log_score", "estimate"] == pytest.approx(
            np.mean(np.log(np.maximum(np.where(y == 1, p, 1 - p), 1e-10))))
        assert got.at["uncertainty", "estimate"] == pytest.approx(y.mean() * (1 - y.mean()))
        assert (got["ci_low"] <= got["estimate"] + 1e-12).loc[["brier", "log_score"]].all()
        assert (got["estimate"] <= got["ci_high"] + 1e-12).loc[["brier", "log_score"]].all()
        assert (got["n_questions"] == 20).all()
    # the rational forecaster states the reference probability, rounded to its grid
    rational = forecasts[forecasts["model"] == "rational"]
    ref = demo_questions().set_index("id")["probability"]
    np.testing.assert_allclose(rational["probability"],
                               ref.loc[rational["question"]].to_numpy(), atol=0.026)
    again = elicitation.run_study(config, progress=False)
    assert again.n_calls == 0 and again.n_cached == 80
    pd.testing.assert_frame_equal(again.report, results, check_dtype=False)
    assert "simulated date 2028-01-01" in str(again.summary())


def test_questions_resolving_by_the_simulated_date_are_not_asked(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = {"kind": "forecasting", "out": "late", "models": [{"simulated": "rational"}],
              "design": {"simulated_date": "31 December 2030", "repetitions": 1},
              "tests": {"n_resamples": 99, "n_bins": 3}}
    qs = scorable_questions(demo_questions(), "2030-12-31")
    later = qs.loc[qs["excluded"] == "", "id"]
    assert 0 < len(later) < 20
    with pytest.warns(coherence_warning()):      # fewer than 20 questions: rough intervals
        result = elicitation.run_study(config, progress=False)
    assert result.n_calls == len(later)
    assert set(result.data["question"]) == set(later)
    assert (result.report["n_excluded"] == 20 - len(later)).all()
    written = pd.read_csv(result.paths["questions"]).fillna("")
    assert written.loc[written["id"] == "q01", "excluded"].item().startswith(
        "resolves on or before the simulated date 2030-12-31")
    with pytest.raises(ValueError, match=re.escape("design.simulated_date 2041-01-01")):
        elicitation.run_study({**config, "design": {"simulated_date": "2041-01-01"}},
                              progress=False)


def coherence_warning():
    import coherence

    return coherence.SmallSampleWarning


def test_simulated_dates_are_read_and_spoken():
    import datetime as dt

    assert simulated_date_iv(dt.date(2028, 1, 1)) == "2028-01-01"
    assert simulated_date_iv("1 January 2028") == "2028-01-01"
    assert spoken_date("2028-01-01") == "1 January 2028"


def _question_set(rows):
    import io

    from elicitation._study_tuples import read_questions

    text = "id,fact,date,later_date,probability,resolution\n" + "".join(
        f"{i},the port of Q{i} is open,{date},31 December 2031,0.5,{res}\n"
        for i, date, res in rows)
    return read_questions(io.StringIO(text), "set.csv")


def test_a_resolution_in_words_is_an_error_not_no_resolution():
    # "yes" and "TRUE" were read as no resolution: the questions left out of the scores
    qs = _question_set([("q1", "31 December 2030", "1"), ("q2", "31 December 2030", "yes"),
                        ("q3", "31 December 2030", "TRUE"), ("q4", "31 December 2030", "")])
    with pytest.raises(ValueError, match=re.escape(
            "'resolution' must be 0, 1 or empty; 2 questions are not (first: ['q2', 'q3'] "
            "with ['yes', 'TRUE'])")):
        scorable_questions(qs, "2028-01-01")
    ok = scorable_questions(qs[qs["id"].isin(["q1", "q4"])], "2028-01-01")
    assert list(ok["excluded"]) == ["", "no resolution"] and ok["outcome"].iloc[0] == 1


def test_a_reference_probability_out_of_range_or_in_percent_is_an_error():
    # "70%" was read as NaN (a simulated forecaster then told 0.5) and 1.5 clipped to 1
    import io

    from elicitation._study_tuples import read_questions

    head = "id,fact,date,later_date,probability\n"
    rows = [f"q{i},the port of Q{i} is open,31 December 2030,31 December 2031,{p}\n"
            for i, p in enumerate(["0.4", "70%", "1.5", "", "-0.1"])]
    with pytest.raises(ValueError, match=re.escape(
            "'probability' must be a number in [0, 1] or empty; 3 questions are not (first: "
            "['q1', 'q2', 'q4'] with ['70%', '1.5', '-0.1'])")):
        read_questions(io.StringIO(head + "".join(rows)), "set.csv")
    ok = read_questions(io.StringIO(head + rows[0] + rows[3]), "set.csv")
    assert ok["probability"].iloc[0] == 0.4 and np.isnan(ok["probability"].iloc[1])
    plain = read_questions(io.StringIO("id,fact,date,later_date\n" + rows[0].rsplit(",", 1)[0]
                                       + "\n"), "set.csv")
    assert list(plain["probability"]) == [0.5]


def test_a_column_given_twice_in_a_question_set_is_an_error():
    # the second 'fact' replaced the first without a word: the question asked another fact
    import io

    from elicitation._study_tuples import read_questions

    text = ("id,fact,date,later_date,fact\n"
            "q1,the port is open,31 December 2030,31 December 2031,the port is closed\n")
    with pytest.raises(ValueError, match=re.escape(
            "The question set set.csv has the column(s) ['fact'] more than once in its "
            "header")):
        read_questions(io.StringIO(text), "set.csv")


@pytest.mark.parametrize("date", ["", "nan", "soon"])
def test_a_question_without_a_date_is_an_error_not_asked(date):
    # an empty date was NaT, never on or before the simulated date: asked and scored
    if not date:   # refused when the question set is read (the consistency study too)
        with pytest.raises(ValueError, match=re.escape("an empty 'date' (first: rows [1])")):
            _question_set([("q1", "31 December 2030", "1"), ("q2", date, "0")])
        return
    qs = _question_set([("q1", "31 December 2030", "1"), ("q2", date, "0")])
    with pytest.raises(ValueError, match=re.escape(
            f"'date' of row 1 (id 'q2') is not a date: {date!r}")):
        scorable_questions(qs, "2028-01-01")


@pytest.mark.parametrize(("change", "message"), [
    ({"design": {}}, "design.simulated_date"),
    ({"design": {"simulated_date": "soon"}}, "design.simulated_date"),
    ({"design": {"simulated_date": "2028-01-01", "checkers": "all"}}, "'checkers'"),
    ({"design": {"simulated_date": "2028-01-01"}, "tests": {"n_bins": 0}}, "tests.n_bins"),
    ({"design": {"simulated_date": "2028-01-01"}, "tests": {"confidence_level": 1.5}},
     "tests.confidence_level"),
])
def test_forecasting_configuration_mistakes_name_the_key(change, message):
    config = {"kind": "forecasting", "models": [{"simulated": "rational"}], **change}
    with pytest.raises(ValueError, match=re.escape(message)):
        elicitation.load_study(config)


# the fake server answers one probability: one equal-mass bin of the calibration error
@pytest.mark.filterwarnings("ignore:calibration_error:coherence.TiesWarning")
def test_forecasting_study_against_a_server_killed_and_resumed(tmp_path, monkeypatch):
    """The prompt tells the date; a kill -9 midway loses no stored reply, the resume asks
    only the rest, and a third run asks nothing."""
    monkeypatch.chdir(tmp_path)
    srv = FakeOpenAIServer(lambda body, attempt: Reply(text=default_answer(body),
                                                       delay=0.05)).start()
    try:
        config = tmp_path / "served.toml"
        config.write_text(textwrap.dedent(f"""
            kind = "forecasting"
            out = "{tmp_path / 'served'}"
            [model]
            name = "fake"
            base_url = "{srv.url}"
            concurrency = 1
            [design]
            simulated_date = "2028-01-01"
            n_questions = 20
            repetitions = 2
            [tests]
            n_resamples = 99
            """))
        n_calls = 40
        cache = tmp_path / "served" / "cache.sqlite"
        args = [sys.executable, "-m", "coherence_cli", "study", str(config), "--quiet"]
        proc = subprocess.Popen(args, env=_env(), stdout=subprocess.PIPE,
                                stderr=subprocess.PIPE)
        deadline = time.monotonic() + 120
        while _stored(cache) < n_calls // 3 and proc.poll() is None:
            assert time.monotonic() < deadline, "the study made no progress"
            time.sleep(0.05)
        assert proc.poll() is None, "the study ended before it could be killed"
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=60)
        before = _stored(cache)
        assert n_calls // 3 <= before < n_calls
        sent = len(srv.log)
        resumed = elicitation.run_study(config, progress=False)
        assert resumed.n_cached == before and resumed.n_calls == n_calls - before
        assert len(srv.log) - sent == n_calls - before
        prompts = [b["messages"][-1]["content"] for b in srv.bodies]
        assert all(p.startswith("Today's date is 1 January 2028.\n\nQuestion: Will it be "
                                "true that on ") for p in prompts)
        assert resumed.report["estimate"].notna().all()
        # one probability answered: the method names the one bin used, not the 4 asked
        method = resumed.report.set_index("metric").at["calibration_error", "method"]
        assert method.endswith("1 equal-mass bins of 4 asked: tied forecasts merge them)")
        again = elicitation.run_study(config, progress=False)
        assert again.n_calls == 0 and len(srv.log) - sent == n_calls - before
        pd.testing.assert_frame_equal(again.report, resumed.report)
    finally:
        srv.stop()


@pytest.mark.parametrize("date", ["2028", "June 2028", "01/02/2028", "2028/01/02"])
def test_a_date_without_its_day_or_in_ambiguous_figures_is_not_guessed(date):
    # '2028' was 1 January 2028, 'June 2028' 1 June, '01/02/2028' 2 January (it reads as
    # 1 February too): the model was told a date the file does not say, and questions
    # dated so were scored or excluded by it
    with pytest.raises(ValueError, match="must be a full date"):
        simulated_date_iv(date)
    qs = _question_set([("q1", "31 December 2030", "1"), ("q2", date, "0")])
    with pytest.raises(ValueError, match=re.escape(
            f"'date' of row 1 (id 'q2') is not a date: {date!r}")):
        scorable_questions(qs, "2027-01-01")
    for same in ("2028-01-02", "2 January 2028", "January 2, 2028", "2 Jan 2028",
                 "2028-01-02T10:00:00"):
        assert simulated_date_iv(same) == "2028-01-02"


@pytest.mark.parametrize(("row", "message"), [
    ("q2,,31 December 2030,31 December 2031,0.5", "1 row(s) with an empty 'fact' (first: "
     "rows [1])"),
    ("q2,fact,31 December 2030,,0.5", "an empty 'later_date'"),
    (",fact,31 December 2030,31 December 2031,0.5", "an empty 'id'"),
    ("q2,fact,31 December 2030", "number of fields is not the header's (first: rows [1])"),
    ("q2,a port, then a dam,31 December 2030,31 December 2031,0.5", "number of fields"),
])
def test_a_question_row_blank_or_shifted_is_an_error(row, message):
    # a blank fact was asked as "Will it be true that on 31 December 2030, ?", a missing
    # field as "None", and a row shifted by an unquoted comma lost its last field
    import io

    from elicitation._study_tuples import read_questions

    text = ("id,fact,date,later_date,probability\n"
            "q1,the port is open,31 December 2030,31 December 2031,0.5\n" + row + "\n")
    with pytest.raises(ValueError, match=re.escape(message)):
        read_questions(io.StringIO(text), "set.csv")


@pytest.mark.parametrize(("column", "meant"), [("probabilty", "probability"),
                                               ("Resolution", "resolution"),
                                               ("later date", "later_date")])
def test_a_misspelt_question_set_column_is_an_error(column, meant):
    # 'probabilty' was not read: every question got the default reference probability 0.5
    # ('resolutoin': every question unresolved), without a word
    import io

    from elicitation._study_tuples import read_questions

    header = ["id", "fact", "date", "later_date"]
    header = [column if c == meant else c for c in header] + (
        [] if meant in header else [column])
    text = ",".join(header) + "\n" + ",".join(
        {"id": "q1", "fact": "the port is open", "date": "31 December 2030",
         "later_date": "31 December 2031"}.get(c, "0.9" if "rob" in c else "1")
        for c in header) + "\n"
    with pytest.raises(ValueError, match=re.escape(f"{column!r} (did you mean {meant!r}?)")):
        read_questions(io.StringIO(text), "set.csv")
    other = "id,fact,date,later_date,source\nq1,x,31 December 2030,31 December 2031,web\n"
    assert read_questions(io.StringIO(other), "set.csv")["source"].tolist() == ["web"]
