"""A whole study whose checks, scores or tests could not all be computed says so: the rows
are in its results, named on the terminal, and the command exits 1 (it exited 0, or 2 with
a pandas message, the missing rows left out without a word)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

import coherence
import elicitation
import elicitation._study as study_module
from elicitation import SimulatedClient
from tests.elicitation._shared import cli

pytest.importorskip("pgmpy")


def _failing(monkeypatch, fail):
    """Every simulated model's replies unparseable with probability ``fail``."""
    real = study_module.make_client

    def client(model, truths, seed):
        made = real(model, truths, seed)
        return SimulatedClient(made.agent, truths, rng=seed, fail=fail)

    monkeypatch.setattr(study_module, "make_client", client)


def _study_file(tmp_path, out, design, tests=(), kind=None):
    """A study file (``out``.toml) of one simulated rational model: its ``[design]`` lines
    and ``[tests]`` lines before ``n_resamples = 19``; no ``kind`` line: a decision study."""
    lines = ([f'kind = "{kind}"'] if kind else []) + [
        f'out = "{out}"', "[model]", 'simulated = "rational"', "[design]", *design,
        "[tests]", *tests, "n_resamples = 19"]
    path = tmp_path / f"{out}.toml"
    path.write_text("\n".join(lines) + "\n")
    return path


def _consistency(tmp_path):
    return _study_file(tmp_path, "tuples", ["n_tuples = 3", "repetitions = 1"],
                       kind="consistency")


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_consistency_study_keeps_a_checker_none_of_whose_tuples_parsed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    _failing(monkeypatch, 0.5)
    code, out = cli("study", str(_consistency(tmp_path)), "--quiet")
    results = pd.read_csv(tmp_path / "tuples" / "results.csv")
    # every checker and forecaster has its row (6 of the 10 checkers of the model's own
    # forecasts were left out of results.csv, and the command exited 0)
    pairs = set(zip(results["checker"], results["forecaster"], strict=True))
    assert pairs == {(c, f) for c in coherence.CHECKERS for f in ("model", "baseline")}
    lost = results[results["statistic"].isna()]
    assert len(lost) > 0 and (lost["n_obs"] == 0).all() and (lost["n_dropped"] == 3).all()
    assert lost["method"].str.startswith("not computed: no tuple has a forecast").all()
    assert code == 1
    for row in lost.itertuples():
        assert f"{row.checker} failed on rational ({row.forecaster}): not computed" in out


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_consistency_study_with_no_reply_parsed_leaves_no_old_results(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = _consistency(tmp_path)
    assert cli("study", str(config), "--quiet")[0] == 0
    _failing(monkeypatch, 1.0)
    # it stopped with "No objects to concatenate" after writing the new table, the
    # previous run's results.csv left beside it
    code, out = cli("study", str(config), "--quiet")
    results = pd.read_csv(tmp_path / "tuples" / "results.csv")
    assert "negation failed on rational (model)" in out
    assert code == 1 and len(results) == 2 * len(coherence.CHECKERS)
    assert results["statistic"].isna().all()
    table = pd.read_csv(tmp_path / "tuples" / "table.csv")
    assert table["p"].isna().all()


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_forecasting_study_whose_scores_could_not_be_computed_exits_1(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    path = _study_file(tmp_path, "forecast", ["simulated_date = 2028-01-01", "repetitions = 1"],
                       kind="forecasting")
    _failing(monkeypatch, 1.0)
    code, out = cli("study", str(path), "--quiet")
    results = pd.read_csv(tmp_path / "forecast" / "results.csv")
    assert results["estimate"].isna().all() and (results["n_questions"] == 0).all()
    assert code == 1       # it exited 0 with every score NaN
    assert "brier failed on rational: fewer than 2 parsed forecasts" in out


@pytest.mark.filterwarnings("ignore:report\\(n_permutations:DeprecationWarning")
@pytest.mark.filterwarnings("ignore::UserWarning")
def test_decision_study_whose_named_tests_ran_on_no_model_exits_1(tmp_path, monkeypatch,
                                                                 capsys):
    monkeypatch.chdir(tmp_path)
    design = ["n_contexts = 8", 'decision = ""']
    path = _study_file(tmp_path, "nodecision", design,
                       ['tests = ["ci", "leakage"]', "n_permutations = 19"])
    code, out = cli("study", str(path), "--quiet")
    # no action is asked, so neither test applies: an empty grid, and it exited 0
    assert pd.read_csv(tmp_path / "nodecision" / "table.csv").shape[0] == 16
    assert code == 1
    assert "ci, leakage did not run" in capsys.readouterr().err
    _study_file(tmp_path, "nodecision", design, ['tests = ["ci", "calibration"]',
                                                 "n_permutations = 19"])
    code, out = cli("study", str(path), "--quiet")
    assert "coherence report: 1 cell(s)" in out
    assert code == 0 and "ci did not run" in capsys.readouterr().err
    assert np.isfinite(elicitation.run_study(path, progress=False)
                       .report.to_frame()["statistic"]).all()


SERVER = {"name": "m", "base_url": "http://127.0.0.1:9/v1", "design_max_tokens": 64}


@pytest.mark.parametrize(("config", "match"), [
    # the forms a model writes, with the templates writing every form: ignored
    ({"kind": "consistency", "models": [{"simulated": "rational"}],
      "design": {"model_forms": ["P_and_Q"]}}, r"design.model_forms .* designer = 'model'"),
    ({"kind": "consistency", "models": [{"simulated": "rational"}],
      "design": {"model_forms": "all", "designer": "templates"}}, "design.model_forms"),
    # the length of design replies where no design call is made: ignored
    ({"kind": "decision", "models": [SERVER]}, r"model 0 \('m'\): design_max_tokens .* "
                                               "a decision study makes no design call"),
    ({"kind": "pairs", "models": [SERVER]}, "design_max_tokens .* no model designs"),
    ({"kind": "consistency", "models": [SERVER]}, "design_max_tokens .* no model designs"),
    ({"kind": "pairs", "models": [SERVER, {**SERVER, "name": "n"}],
      "design": {"designer": "model"}}, r"model 1 \('n'\): .* only the first model designs"),
])
def test_a_model_designers_key_where_no_model_designs_is_refused(config, match):
    with pytest.raises(ValueError, match=match):
        elicitation.load_study(config)


def test_a_model_designers_keys_are_taken_where_a_model_designs():
    served = [SERVER, {**SERVER, "name": "n"}]
    for config in ({"kind": "consistency", "models": served,
                    "design": {"designer": "model", "model_forms": ["P_and_Q"]}},
                   {"kind": "pairs", "models": [SERVER, {"name": "n", "base_url": "http://x/v1"}],
                    "design": {"designer": "model"}},
                   {"kind": "consistency", "models": [{"simulated": "rational"}]}):
        cfg = elicitation.load_study(config)
        assert elicitation.load_study(cfg) == cfg     # the loaded configuration reads again
        assert cfg["models"][0].get("design_max_tokens") in (64, None)


def _one_model_fails(monkeypatch, name, fail=1.0):
    """Replies of the model ``name`` unparseable (each with chance ``fail``: every one by
    default), the others' all parsed."""
    real = study_module.make_client

    def client(model, truths, seed):
        made = real(model, truths, seed)
        return SimulatedClient(made.agent, truths, rng=seed,
                               fail=fail if model["name"] == name else 0.0)

    monkeypatch.setattr(study_module, "make_client", client)


@pytest.mark.filterwarnings("ignore:report\\(n_permutations:DeprecationWarning")
@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("kind", ["decision", "pairs"])
def test_a_model_with_no_usable_row_is_named_and_the_study_exits_1(tmp_path, monkeypatch,
                                                                   kind):
    monkeypatch.chdir(tmp_path)
    path = tmp_path / "two.toml"
    design = ("n_contexts = 8\nrepetitions = 1\n[tests]\ntests = ['monotonicity']\n"
              "n_permutations = 19\nn_resamples = 19" if kind == "decision"
              else "n_pairs = 3\n[tests]\nn_resamples = 99")
    path.write_text(f'kind = "{kind}"\nout = "two"\n[[models]]\nsimulated = "rational"\n'
                    '[[models]]\nname = "peeks"\nsimulated = {agent = "leaky"}\n'
                    f"[design]\n{design}\n")
    _one_model_fails(monkeypatch, "peeks")
    code, out = cli("study", str(path), "--quiet")
    table = pd.read_csv(tmp_path / "two" / "table.csv")
    raw = pd.read_csv(tmp_path / "two" / "raw.csv")
    assert set(table["model"]) == {"rational"} and (raw["model"] == "peeks").sum() > 0
    # the model was left out of the report without being named, and the command exited 0
    assert "no usable row from model peeks: every reply failed to parse" in out
    assert code == 1


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_pairs_study_counts_the_pair_rows_an_elicitation_failed_on(tmp_path, monkeypatch):
    # they were dropped before the analysis: results.csv said n_failed 0 in every cell,
    # and a category whose every pair failed was not in it at all
    monkeypatch.chdir(tmp_path)
    _one_model_fails(monkeypatch, "rational", fail=0.3)
    result = elicitation.run_study({"kind": "pairs", "out": "p",
                                    "models": [{"simulated": "rational"}],
                                    "design": {"n_pairs": 6}, "tests": {"n_resamples": 99}},
                                   progress=False)
    results = pd.read_csv(tmp_path / "p" / "results.csv")
    pairs = pd.read_csv(tmp_path / "p" / "pairs.csv")
    n_missing = len(pairs) - len(result.data)
    assert n_missing >= 2      # the seed leaves pairs out (5 of 6)
    assert results["n_failed"].sum() == n_missing
    assert set(results["category"]) == set(pairs["category"])
    assert (results["n"] + results["n_failed"]).sum() == len(pairs)


@pytest.mark.filterwarnings("ignore::UserWarning")
@pytest.mark.parametrize("kind", ["decision", "pairs", "consistency"])
def test_a_study_with_no_usable_row_fails_rather_than_a_usage_error(tmp_path, monkeypatch,
                                                                     kind, capsys):
    # decision and pairs exited 2 (a mistake in the file) on the tests' "at least one
    # row"; the consistency summary said "294 usable rows" over 294 failed replies
    monkeypatch.chdir(tmp_path)
    design = {"decision": "n_contexts = 6\nrepetitions = 1",
              "pairs": "n_pairs = 3", "consistency": "n_tuples = 2"}[kind]
    path = tmp_path / "none.toml"
    path.write_text(f'kind = "{kind}"\nout = "none"\n[model]\nname = "mute"\n'
                    f'simulated = "rational"\n[design]\n{design}\n')
    _one_model_fails(monkeypatch, "mute")
    code, out = cli("study", str(path), "--quiet")
    assert code == 1
    assert (tmp_path / "none" / "raw.csv").is_file()
    if kind == "consistency":
        assert "; 0 usable rows" in out
    else:
        assert "no usable row: every row of every model had a reply that failed" in \
            capsys.readouterr().err


def test_pairs_study_with_fewer_candidates_than_pairs_is_refused():
    # it ran on the 3 candidates, the summary saying 9 question pairs
    with pytest.raises(ValueError, match=r"design.n_candidates \(3\) is fewer than "
                                         r"design.n_pairs \(9\)"):
        elicitation.load_study({"kind": "pairs", "models": [{"simulated": "rational"}],
                                "design": {"designer": "model", "n_pairs": 9,
                                           "n_candidates": 3}})


@pytest.mark.filterwarnings("ignore::UserWarning")
def test_pairs_study_summary_says_how_many_pairs_the_models_labels_kept(tmp_path,
                                                                        monkeypatch):
    from elicitation._clients import Completion
    from elicitation._study_tuples import SimulatedDesigner

    monkeypatch.chdir(tmp_path)
    real = SimulatedDesigner.complete

    def complete(self, request):    # only the strong pairs' labels parse
        done = real(self, request)
        return done if "STRONG" in done.text else Completion(text="I cannot tell.")

    monkeypatch.setattr(SimulatedDesigner, "complete", complete)
    study = elicitation.run_study({
        "kind": "pairs", "out": "found", "models": [{"simulated": "rational"}],
        "design": {"designer": "model", "n_pairs": 9, "n_candidates": 9},
        "tests": {"n_resamples": 99}}, progress=False)
    kept = pd.read_csv(study.paths["pairs"])
    assert len(kept) == 3 and set(kept["category"]) == {"strong"}
    shape = str(study.summary()).splitlines()[1]
    # it said "design: 9 question pairs"
    assert shape.startswith("design: 3 question pairs (of the 9 asked for: too few labelled)")


def test_a_checker_the_design_holds_no_tuple_of_keeps_its_row():
    # a configured checker without a single designed tuple: its row says so (it vanished,
    # and after the change that kept unparsed checkers' rows, its empty table raised)
    from elicitation._study_consistency import _checks

    tuples = pd.DataFrame({"checker": ["negation"] * 4, "tuple": [0, 0, 1, 1],
                           "key": ["P", "not_P"] * 2, "question": ["a", "b", "c", "d"]})
    tests = {"definition": "paper", "tolerance": 0.01, "n_resamples": 19}
    out = pd.concat(_checks(tuples, {"a": 0.3, "b": 0.7, "c": 0.6, "d": 0.5},
                            ["negation", "and"], tests, 0, model="m", forecaster="model"),
                    ignore_index=True).set_index("checker")
    assert list(out.index) == ["negation", "and"]
    assert out.loc["negation", "n_obs"] == 2 and np.isfinite(out.loc["negation", "statistic"])
    assert out.loc["and", "method"] == "not computed: the design holds no tuple of this checker"
    assert np.isnan(out.loc["and", "statistic"]) and out.loc["and", "n_dropped"] == 0
    assert out.loc["and", "model"] == "m" and out.loc["and", "forecaster"] == "model"
