"""A whole study from one TOML file: design, elicitation, tests, report; a second run makes
no call (simulated agents, and the fake chat-completions server)."""

from __future__ import annotations

import contextlib
import copy
import html
import io
import re
import shlex
import textwrap
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

import elicitation
from tests._fake_openai_server import FakeOpenAIServer
from tests._fake_openai_server import Reply
from tests._fake_openai_server import call_key
from tests._fake_openai_server import default_answer
from tests.elicitation._shared import cli

pytest.importorskip("pgmpy")

SIMULATED = """
kind = "decision"
seed = 3
out = "out"

[[models]]
simulated = "rational"

[[models]]
name = "peeks"
simulated = "leaky"

[design]
network = "child"
n_contexts = 16
repetitions = 2
prompts = ["standard", "mse"]

[tests]
n_permutations = 49
n_resamples = 49
# a p-value at its floor is resolved with 1,001 draws, not the family size times 1,000
adjust = "none"
"""
N_CALLS = 2 * 16 * 2 * 3   # models x contexts x repetitions x (2 prompts + decision)


def _pvalues(frame: pd.DataFrame) -> np.ndarray:
    return frame.sort_values(["model", "test"])["pvalue"].to_numpy(dtype=float)


def test_simulated_study_runs_once_and_reuses_every_call(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "study.toml"
    config.write_text(SIMULATED)
    first = elicitation.run_study(config, progress=False)
    assert first.n_calls == N_CALLS and first.n_cached == 0
    assert set(first.data["model"]) == {"rational", "peeks"}
    assert set(first.data["prompt"]) == {"standard", "mse"}
    for key in ("table", "raw", "report", "cache"):
        assert (tmp_path / "out").joinpath(first.paths[key].rsplit("/", 1)[-1]).is_file()
    assert len(pd.read_csv(first.paths["raw"])) == N_CALLS
    assert [dict(c.key) for c in first.report.cells] == [{"model": "peeks"},
                                                         {"model": "rational"}]
    # the second run: every reply from the cache, the same table and p-values
    again = elicitation.run_study(config, progress=False)
    assert again.n_calls == 0 and again.n_cached == N_CALLS
    pd.testing.assert_frame_equal(again.data, first.data)
    np.testing.assert_array_equal(_pvalues(again.report.to_frame()),
                                  _pvalues(first.report.to_frame()))
    assert "0 calls made" in str(again.summary())
    # the report's rerun line runs as printed and gives the same p-values
    page = (tmp_path / "out" / "report.html").read_text()
    block = page[page.index("To rerun from the command line"):]
    argv = shlex.split(html.unescape(block[block.index("<pre>") + 5:block.index("</pre>")]))
    assert argv[2] == first.paths["table"] and "--seed" in argv
    code, _ = cli(*argv[1:], "--csv", str(tmp_path / "rerun.csv"), "--quiet")
    assert code == 0
    np.testing.assert_array_equal(_pvalues(pd.read_csv(tmp_path / "rerun.csv")),
                                  _pvalues(first.report.to_frame()))


def test_cli_study_and_its_mistakes(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "study.toml"
    config.write_text(SIMULATED.replace("n_contexts = 16", "n_contexts = 10"))
    code, out = cli("study", str(config), "--quiet")
    assert code == 0, out
    assert f"{N_CALLS * 10 // 16} calls made, 0 from the cache" in out
    assert "coherence report: 2 cell(s)" in out
    code, out = cli("study", str(config), "--quiet")
    assert code == 0 and "0 calls made" in out
    for text, message in [
            (SIMULATED.replace('kind = "decision"', 'kind = "forecast"'), "kind"),
            (SIMULATED.replace("n_contexts = 16", "n_context = 16"), "'n_context'"),
            (SIMULATED.replace('simulated = "rational"', 'name = "x"'), "base_url"),
            (SIMULATED.replace("repetitions = 2", "repetitions = 0"), "design.repetitions"),
            # an agent's misspelt option, and a server's key on a simulated model: exit 2
            (SIMULATED.replace('simulated = "leaky"',
                               'simulated = {agent = "leaky", strenght = 0.8}'),
             "model 1 ('peeks'): simulated = {agent = 'leaky', ...}: Agent.leaky got unknown "
             "option(s) 'strenght'"),
            (SIMULATED.replace('simulated = "rational"',
                               'simulated = "rational"\ntemperature = 0.1'), "'temperature'"),
            (SIMULATED.replace('simulated = "rational"',
                               'simulated = "rational"\nconcurrency = "four"'),
             "concurrency must be an int"),
            ("kind = ", "not valid TOML")]:
        config.write_text(text)
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code, _ = cli("study", str(config))
        assert code == 2 and message in err.getvalue(), err.getvalue()
        assert len(err.getvalue().strip().splitlines()) == 1


@pytest.mark.filterwarnings("ignore::coherence.DegenerateDataWarning")  # the fake server
def test_study_against_a_server_resumes_with_no_new_call(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    def behaviour(body, attempt):
        # half the decisions "No", so every decision test has two actions to compare
        text = default_answer(body)
        if "Decision:" in text and int(call_key(body), 16) % 2:
            text = text.replace("Decision: Yes", "Decision: No")
        return Reply(text=text)

    srv = FakeOpenAIServer(behaviour).start()
    try:
        config = tmp_path / "server.toml"
        config.write_text(textwrap.dedent(f"""
            seed = 1
            out = "served"

            [model]
            name = "fake"
            base_url = "{srv.url}"
            max_tokens = 24
            concurrency = 2

            [design]
            n_contexts = 6
            repetitions = 2

            [tests]
            tests = ["ci", "monotonicity", "calibration"]
            n_permutations = 19
            n_resamples = 19
            """))
        first = elicitation.run_study(config, progress=False)
        sent = len(srv.log)
        assert first.n_calls == 6 * 2 * 2 == sent
        assert set(first.data["model"]) == {"fake"} and len(first.data) == 12
        assert set(first.data["action"]) == {"yes", "no"}
        again = elicitation.run_study(config, progress=False)
        assert again.n_calls == 0 and len(srv.log) == sent
        pd.testing.assert_frame_equal(again.data, first.data)
    finally:
        srv.stop()


DOCS = Path(__file__).resolve().parents[2] / "docs"


@pytest.mark.parametrize("name", ["decision-offline", "decision-local", "decision-paper",
                                  "decision-seeds", "pairs-offline", "pairs-local",
                                  "pairs-designed-offline", "consistency-offline",
                                  "consistency-local", "forecasting-offline",
                                  "forecasting-local"])
def test_example_configs_are_valid(name):
    config = elicitation.load_study(DOCS / "studies" / f"{name}.toml")
    assert config["kind"] == name.split("-")[0] and config["name"] == name
    assert config["models"] and all(m["name"] for m in config["models"])


@pytest.mark.slow
def test_the_documented_offline_study_prints_what_the_page_shows(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    page = (DOCS / "study_config.md").read_text()
    shown = re.findall(r"```text\n(.*?)```", page, flags=re.DOTALL)[0].rstrip()
    assert re.findall(r"```toml\n(.*?)```", page, flags=re.DOTALL)[0] in \
        (DOCS / "studies" / "decision-offline.toml").read_text()
    code, out = cli("study", str(DOCS / "studies" / "decision-offline.toml"), "--quiet")
    assert code == 0 and out.rstrip() == shown
    code, out = cli("study", str(DOCS / "studies" / "decision-offline.toml"), "--quiet")
    assert "720 elicitations, 0 calls made, 720 from the cache" in out


def test_network_pairs_have_exact_coherent_answers():
    from elicitation._study_pairs import PAIR_CATEGORIES
    from elicitation._study_pairs import network_pairs

    pairs = network_pairs("child", n_pairs=9, rng=4)
    assert len(pairs) == 9 and pairs["pair"].is_unique
    assert pairs["category"].value_counts().to_dict() == {"strong": 3, "weak": 3, "none": 3}
    p_b = pairs["p_b"]
    # the law of total probability and Bayes' rule hold exactly
    np.testing.assert_allclose(pairs["p_a"], pairs["p_a_given_b1"] * p_b
                               + pairs["p_a_given_b0"] * (1 - p_b))
    np.testing.assert_allclose(pairs["p_b_given_a1"] * pairs["p_a"],
                               pairs["p_a_given_b1"] * p_b)
    gap = (pairs["p_a_given_b1"] - pairs["p_a_given_b0"]).abs()
    limits = dict(PAIR_CATEGORIES)
    assert (gap[pairs["category"] == "strong"] >= limits["strong"]).all()
    assert (gap[pairs["category"] == "none"] < limits["weak"]).all()
    assert pairs["question_a"].str.match(r"Will it turn out.*\?$").all()
    assert set(pairs["a_outcome"]) <= {0, 1} and set(pairs["b_outcome"]) <= {0, 1}
    assert network_pairs("child", n_pairs=9, rng=4).equals(pairs)


# the rational forecaster's 'none' pairs: every improvement is exactly 0 (no p-value)
@pytest.mark.filterwarnings("ignore::coherence.DegenerateDataWarning")
def test_pairs_study_from_one_file_is_cached(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "pairs.toml"
    config.write_text(textwrap.dedent("""
        kind = "pairs"
        seed = 2
        out = "pairs"

        [[models]]
        simulated = "rational"

        [design]
        n_pairs = 6

        [tests]
        n_resamples = 99
        """))
    code, out = cli("study", str(config), "--quiet")
    assert code == 0 and "36 elicitations, 36 calls made, 0 from the cache" in out
    results = pd.read_csv(tmp_path / "pairs" / "results.csv")
    assert set(results["category"]) == {"strong", "weak", "none"}
    assert set(results["model"]) == {"rational"}
    # a rational forecaster states the exact conditionals: Bayes-consistent everywhere
    assert (results["bayes_consistent"] == 1).all()
    again = elicitation.run_study(config, progress=False)
    assert again.n_calls == 0 and again.n_cached == 36
    pd.testing.assert_frame_equal(again.report.table.reset_index(drop=True), results,
                                  check_dtype=False)


def test_unset_api_key_env_sends_no_other_key(tmp_path, monkeypatch):
    # api_key_env named on purpose and unset: the study refuses before any call; it used to
    # let the client fall back to $OPENAI_API_KEY and send that key to this model's server
    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-PRIVATEKEY0123456789")
    monkeypatch.delenv("OTHER_PROVIDER_KEY", raising=False)
    srv = FakeOpenAIServer().start()
    try:
        cfg = {"out": "other", "model": {"name": "other", "base_url": srv.url,
                                         "api_key_env": "OTHER_PROVIDER_KEY"},
               "design": {"n_contexts": 2, "repetitions": 1}}
        with pytest.raises(ValueError, match=r"model 0 \('other'\): api_key_env names "
                                             r"'OTHER_PROVIDER_KEY', which is not set"):
            elicitation.run_study(cfg, progress=False)
        assert srv.auth_seen == []
        # the model's own key, when set, is the one sent
        monkeypatch.setenv("OTHER_PROVIDER_KEY", "other-key-42")
        client = elicitation._study_config.make_client(cfg["model"], pd.DataFrame(), 0)
        assert client._key == "other-key-42"
        # no key named: OpenAI's key goes to OpenAI only, never to this server
        plain = elicitation._study_config.make_client({"name": "x", "base_url": srv.url},
                                                      pd.DataFrame(), 0)
        assert plain._key is None
        openai = elicitation._study_config.make_client(
            {"name": "x", "base_url": "https://api.openai.com/v1"}, pd.DataFrame(), 0)
        assert openai._key == "sk-openai-PRIVATEKEY0123456789"
    finally:
        srv.stop()


@pytest.mark.parametrize(("setting", "match"), [
    ({"temperature": -1}, r"model 1 \('b'\): The 'temperature' parameter of OpenAIClient"),
    ({"constrained": "xml"}, r"model 1 \('b'\): The 'constrained' parameter"),
    ({"max_tokens": 2**63}, r"model 1 \('b'\): The 'max_tokens' parameter .* "
                            r"\[1, 9223372036854775807\]"),
    ({"design_max_tokens": 0}, r"model 1 \('b'\): design_max_tokens must be a positive"),
])
def test_a_bad_setting_of_the_last_model_stops_the_study_when_read(tmp_path, monkeypatch,
                                                                    setting, match):
    # the clients are made when the file is read: a bad setting of model 1 used to raise only
    # after model 0 had been asked (and paid for)
    monkeypatch.chdir(tmp_path)
    srv = FakeOpenAIServer().start()
    try:
        cfg = {"kind": "pairs" if "design_max_tokens" in setting else "decision",
               "models": [{"name": "a", "base_url": srv.url},
                          {"name": "b", "base_url": srv.url, **setting}]}
        with pytest.raises(ValueError, match=match):
            elicitation.load_study(cfg)
        with pytest.raises(ValueError, match=match):
            elicitation.run_study({**cfg, "out": "s"}, progress=False)
        assert srv.auth_seen == []  # no request reached the server
    finally:
        srv.stop()


def test_a_seed_the_cache_cannot_store_is_refused_when_read():
    for key, value in (("seed", 2**63), ("seeds", [1, 2**63])):
        with pytest.raises(ValueError, match=f"'{key}' must be .* below 2\\*\\*63"):
            elicitation.load_study({key: value, "model": {"simulated": "rational"}})
    assert elicitation.load_study({"seed": 2**63 - 1,
                                   "model": {"simulated": "rational"}})["seed"] == 2**63 - 1


#: a decision study of 8 contexts, one repetition, one cheap test
SMALL_DECISION = {"kind": "decision", "out": "out", "model": {"simulated": "rational"},
                  "design": {"n_contexts": 8, "repetitions": 1},
                  "tests": {"tests": ["calibration"], "n_resamples": 19}}


@pytest.mark.filterwarnings("ignore::coherence.DegenerateDataWarning")  # 8 contexts
def test_an_out_folder_holding_another_studys_outputs_is_refused(tmp_path, monkeypatch):
    # a study run into the folder of another kind of study left that study's report (or
    # results) beside its own files without a word, to be read as the new study's
    monkeypatch.chdir(tmp_path)
    decision = copy.deepcopy(SMALL_DECISION)
    forecasting = {"kind": "forecasting", "out": "out", "model": {"simulated": "rational"},
                   "design": {"simulated_date": "2028-01-01", "repetitions": 1},
                   "tests": {"n_resamples": 19}}
    first = elicitation.run_study(decision, progress=False)
    (tmp_path / "out" / "notes.txt").write_text("mine")   # not a study's: never in the way
    kept = {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()}
    with pytest.raises(ValueError, match=r"out folder .*out holds report.html, which this "
                       r"study \(kind 'forecasting'\) does not write"):
        elicitation.run_study(forecasting, progress=False)
    # nothing deleted, nothing asked
    assert {p.name: p.read_bytes() for p in (tmp_path / "out").iterdir()} == kept
    config = tmp_path / "forecasting.toml"
    config.write_text('kind = "forecasting"\nout = "out"\n[model]\nsimulated = "rational"\n'
                      '[design]\nsimulated_date = 2028-01-01\nrepetitions = 1\n'
                      '[tests]\nn_resamples = 19\n')
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code, _ = cli("study", str(config), "--quiet")
    assert code == 2 and "holds report.html, which" in err.getvalue()
    assert len(err.getvalue().strip().splitlines()) == 1
    # the study's own files (and the cache) are no stale outputs: a rerun is one
    assert elicitation.run_study(decision, progress=False).n_calls == 0
    # with the other study's files gone, the cache (and notes.txt) stay and serve
    (tmp_path / "out" / "report.html").unlink()
    assert elicitation.run_study(forecasting, progress=False).n_calls > 0
    with pytest.raises(ValueError, match=r"holds forecasts.csv, questions.csv, results.csv,"):
        elicitation.run_study(decision, progress=False)
    # a seed's folder of a study over more seeds
    (tmp_path / "seeds" / "seed-2").mkdir(parents=True)
    with pytest.raises(ValueError, match=r"holds seed-2/, which this study \(kind 'decision' "
                       r"over seeds \[0, 1\]\) does not write"):
        elicitation.run_study({**decision, "out": "seeds", "seeds": [0, 1]}, progress=False)
    assert first.n_calls > 0


@pytest.mark.filterwarnings("ignore::coherence.DegenerateDataWarning")  # 8 contexts
def test_a_rerun_whose_analysis_fails_leaves_no_old_report(tmp_path, monkeypatch):
    # the new table was written and the analysis then failed: the earlier run's report
    # stayed beside it, to be read as the new table's
    monkeypatch.chdir(tmp_path)
    decision = copy.deepcopy(SMALL_DECISION)
    elicitation.run_study(decision, progress=False)
    assert (tmp_path / "out" / "report.html").exists()

    def fails(*args, **kwargs):
        raise RuntimeError("analysis interrupted")

    monkeypatch.setattr("coherence.report", fails)
    with pytest.raises(RuntimeError, match="analysis interrupted"):
        elicitation.run_study(decision, progress=False)
    assert (tmp_path / "out" / "table.csv").exists()
    assert not (tmp_path / "out" / "report.html").exists()
    # the same over seeds: the summary files go with the first seed's new table
    seeds = {**decision, "out": "seeds", "seeds": [0, 1]}
    monkeypatch.undo()
    monkeypatch.chdir(tmp_path)
    elicitation.run_study(seeds, progress=False)
    assert (tmp_path / "seeds" / "spread.csv").exists()
    monkeypatch.setattr("coherence.report", fails)
    with pytest.raises(RuntimeError, match="analysis interrupted"):
        elicitation.run_study(seeds, progress=False)
    assert not (tmp_path / "seeds" / "spread.csv").exists()
    assert not (tmp_path / "seeds" / "seeds.csv").exists()
