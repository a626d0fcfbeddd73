"""The study kinds beyond one decision study: consistency tuples (templates or written by
the model, validated), pairs found and labelled by the model, and the decision study over
several seeds; each reuses every call on a second run (simulated and fake-server models)."""

from __future__ import annotations

import re
import shutil
import textwrap

import numpy as np
import pandas as pd
import pytest

import coherence
import elicitation
from elicitation._study_tuples import baseline_forecasts
from elicitation._study_tuples import demo_questions
from elicitation._study_tuples import rule_check
from elicitation._study_tuples import template_tuples
from tests._fake_openai_server import FakeOpenAIServer
from tests._fake_openai_server import Reply
from tests._fake_openai_server import default_answer
from tests.elicitation._shared import cli

pytest.importorskip("pgmpy")

CONSISTENCY = """
kind = "consistency"
seed = 1
out = "tuples"

[[models]]
simulated = "rational"

[[models]]
name = "noisy"
simulated = {{ agent = "rational", report_noise = 0.1 }}

[design]
n_questions = 10
n_tuples = 3
repetitions = 2
designer = "{designer}"

[tests]
n_resamples = 99
"""


def test_demo_questions_ship_with_the_package_and_say_they_are_invented():
    qs = demo_questions()
    assert len(qs) == 20 and qs["id"].is_unique
    assert qs["probability"].between(0, 1).all()
    from importlib import resources
    text = resources.files("elicitation").joinpath("data/demo_questions.csv").read_text()
    assert "invented" in text.splitlines()[0] and "fictional" in text


def test_template_tuples_cover_every_checker_and_their_truths_are_coherent():
    qs = demo_questions()
    tuples, texts = template_tuples(qs, list(coherence.CHECKERS), n_tuples=5, rng=0)
    assert texts["question"].is_unique and texts["text"].is_unique
    truth = dict(zip(texts["question"], texts["truth"], strict=True))
    for checker, keys in coherence.CHECKERS.items():
        long = tuples[tuples["checker"] == checker]
        assert long["tuple"].nunique() == 5
        wide = long.assign(p=long["question"].map(truth)).pivot(
            index="tuple", columns="key", values="p")[list(keys)]
        # the reference probabilities (independent base questions) are coherent: no arbitrage
        res = coherence.consistency_check(wide, checker, n_resamples=9, rng=0)
        assert res.table["arbitrage"].max() < 1e-6, checker
    # a base question is asked once, whichever tuples it is in
    assert tuples.loc[tuples["key"] == "P", "question"].str.fullmatch(r"P:q\d\d").all()
    assert template_tuples(qs, ["and"], n_tuples=5, rng=0)[0].equals(
        tuples[tuples["checker"] == "and"].reset_index(drop=True))


def test_a_negation_is_not_a_paraphrase():
    q = "Will it be true that on 1 May 2030, the bridge has been reopened?"
    neg = "Will it be false that on 1 May 2030, the bridge has been reopened?"
    para = "Is the following statement going to hold: on 1 May 2030, the bridge has been reopened?"
    assert rule_check("negation", q, neg) == "" and rule_check("paraphrase", q, para) == ""
    assert "not a negation" in rule_check("negation", q, para)
    assert "not a paraphrase" in rule_check("paraphrase", q, neg)
    assert "unchanged" in rule_check("paraphrase", q, q.upper())
    assert rule_check("negation", q, None) == "no 'Question:' line"
    assert rule_check("negation", q, "The bridge stays closed.") == "not a question"


def test_baseline_averages_the_equivalent_forms():
    forecasts = {"P:q1": 0.6, "not_P:q1": 0.5, "para_P:q1": 0.7, "P_and_Q:q1:q2": 0.3}
    out = baseline_forecasts(forecasts)
    assert out["P:q1"] == pytest.approx(0.6) and out["not_P:q1"] == pytest.approx(0.4)
    assert out["para_P:q1"] == pytest.approx(0.6) and out["P_and_Q:q1:q2"] == 0.3


def test_consistency_study_from_one_file_is_cached(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "tuples.toml"
    config.write_text(CONSISTENCY.format(designer="templates"))
    code, out = cli("study", str(config), "--quiet")
    assert code == 0, out
    assert "consistency checks: mean arbitrage violation" in out
    first_calls = int(re.search(r"(\d+) calls made", out).group(1))
    results = pd.read_csv(tmp_path / "tuples" / "results.csv")
    assert set(results["checker"]) == set(coherence.CHECKERS)
    assert set(results["forecaster"]) == {"model", "baseline"}
    assert set(results["model"]) == {"rational", "noisy"}
    stat = results.set_index(["model", "forecaster", "checker"])["statistic"]
    # the noisy forecaster contradicts itself on negations; the baseline cannot
    assert stat["noisy", "model", "negation"] > 0.01
    assert stat["noisy", "baseline", "negation"] == pytest.approx(0, abs=1e-9)
    assert stat["noisy", "baseline", "paraphrase"] == pytest.approx(0, abs=1e-9)
    table = pd.read_csv(tmp_path / "tuples" / "table.csv")
    assert len(table) == first_calls and set(table["repetition"]) == {0, 1}
    again = elicitation.run_study(config, progress=False)
    assert again.n_calls == 0 and again.n_cached == first_calls
    pd.testing.assert_frame_equal(again.report.reset_index(drop=True), results,
                                  check_dtype=False)


def test_consistency_study_with_model_written_forms_validates_them(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "tuples.toml"
    config.write_text(CONSISTENCY.format(designer="model"))
    first = elicitation.run_study(config, progress=False)
    design = pd.read_csv(first.paths["design"]).fillna("")
    assert set(design["model"]) == {"rational", "noisy"}
    assert design["reply"].str.startswith("Question: ").all()
    # the stand-in designer writes a paraphrase where q05's and q10's negation was asked
    bad = design[design["base"].isin(["q05", "q10"]) & (design["form"] == "negation")]
    good = design[~design.index.isin(bad.index)]
    assert len(bad) and not bad["kept"].any()
    assert (bad["classified"] == "PARAPHRASE").all()
    assert bad["rule_problem"].str.contains("not a negation").all()
    assert good["kept"].all()
    questions = pd.read_csv(first.paths["questions"])
    used = questions[questions["source"] == "model"]
    assert len(used) == len(good)
    again = elicitation.run_study(config, progress=False)
    assert again.n_calls == 0


def _designing_server_reply(body, attempt):
    """Writes forms the way a model would, and labels every pair WEAK."""
    content = body["messages"][-1]["content"]
    source = re.search(r"question:\n\n(.+?)\n\nWrite", content, flags=re.S)
    if source and "its negation" in content:
        return Reply(text="Question: " + source.group(1).replace("be true", "be false"))
    if source and "a paraphrase" in content:
        return Reply(text="Sure.\nQuestion: " + source.group(1).replace(
            "Will it be true that", "Is the following statement going to hold:"))
    if source:                                   # a consequence: it repeats the question
        return Reply(text="Question: " + source.group(1))
    if "How is question B related" in content:
        b = re.search(r"Question B: (.+)", content).group(1)
        return Reply(text="Relation: " + ("NEGATION" if "false" in b else "PARAPHRASE"))
    if "Relation: <STRONG, WEAK or NONE>" in content:
        return Reply(text="Relation: weak.")
    return Reply(text=default_answer(body))


# the server's canned replies give tuples of one violation: a point interval, warned about
@pytest.mark.filterwarnings("ignore:.*is the point itself:coherence.SmallSampleWarning")
def test_model_designed_studies_against_a_server_make_no_new_call(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    srv = FakeOpenAIServer(_designing_server_reply).start()
    try:
        model = f'[model]\nname = "fake"\nbase_url = "{srv.url}"\nconcurrency = 2\n'
        config = tmp_path / "tuples.toml"
        config.write_text(textwrap.dedent("""
            kind = "consistency"
            out = "tuples"
            [design]
            n_questions = 4
            n_tuples = 2
            checkers = ["negation", "paraphrase", "consequence", "and"]
            repetitions = 1
            designer = "model"
            [tests]
            n_resamples = 19
            """) + model)
        first = elicitation.run_study(config, progress=False)
        assert first.n_calls == len(srv.log) > 0
        design = pd.read_csv(first.paths["design"]).fillna("")
        kept = design.groupby("form")["kept"].all()
        assert kept["negation"] and kept["paraphrase"] and not kept["consequence"].any()
        assert (design.loc[design["form"] == "consequence", "rule_problem"]
                == "the source question, unchanged").all()
        assert elicitation.run_study(config, progress=False).n_calls == 0
        sent = len(srv.log)

        config = tmp_path / "pairs.toml"
        config.write_text(textwrap.dedent("""
            kind = "pairs"
            out = "pairs"
            [design]
            designer = "model"
            n_candidates = 6
            n_pairs = 3
            reverse = false
            [tests]
            n_resamples = 99
            """) + model)
        with pytest.warns(coherence.CoherenceWarning):
            pairs = elicitation.run_study(config, progress=False)
        assert pairs.n_calls == len(srv.log) - sent == 6 + 3 * 3
        chosen = pd.read_csv(pairs.paths["pairs"])
        assert len(chosen) == 3 and set(chosen["category"]) == {"weak"}
        assert set(pd.read_csv(pairs.paths["design"])["label"]) == {"weak"}
        with pytest.warns(coherence.CoherenceWarning):
            assert elicitation.run_study(config, progress=False).n_calls == 0
    finally:
        srv.stop()


@pytest.mark.filterwarnings("ignore::coherence.DegenerateDataWarning")
def test_pairs_found_by_a_simulated_model(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = {"kind": "pairs", "seed": 2, "out": "found", "models": [{"simulated": "rational"}],
              "design": {"designer": "model", "n_pairs": 6, "n_candidates": 9},
              "tests": {"n_resamples": 99}}
    first = elicitation.run_study(config, progress=False)
    design = pd.read_csv(first.paths["design"])
    assert len(design) == 9 and (design["label"] == design["exact_category"]).all()
    chosen = pd.read_csv(first.paths["pairs"])
    assert chosen["category"].value_counts().to_dict() == {"strong": 2, "weak": 2, "none": 2}
    assert first.n_calls == 9 + 6 * 6
    assert elicitation.run_study(config, progress=False).n_calls == 0


# run_study still passes report() its n_permutations, which report() now deprecates
@pytest.mark.filterwarnings("ignore:report\\(n_permutations:DeprecationWarning")
def test_decision_study_over_seeds_reports_the_spread(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = {"kind": "decision", "seeds": [0, 1], "out": "seeds",
              "models": [{"simulated": "rational"}],
              "design": {"n_contexts": 8, "repetitions": 2},
              "tests": {"tests": ["ci"], "n_permutations": 19, "n_resamples": 19}}
    first = elicitation.run_study(config, progress=False)
    assert first.n_calls == 2 * 8 * 2 * 2 and set(first.data["seed"]) == {0, 1}
    per_seed = pd.read_csv(first.paths["seeds"])
    spread = pd.read_csv(first.paths["spread"])
    row = spread.set_index(["model", "test"]).loc[("rational", "ci")]
    stats = per_seed.loc[per_seed["test"] == "ci", "statistic"].to_numpy(dtype=float)
    assert row["n_seeds"] == 2
    assert row["statistic_mean"] == pytest.approx(stats.mean())
    assert row["statistic_sd"] == pytest.approx(stats.std(ddof=1))
    assert stats[0] != stats[1]                        # the seeds draw different contexts
    again = elicitation.run_study(config, progress=False)
    assert again.n_calls == 0
    pd.testing.assert_frame_equal(again.spread, first.spread)
    # one seed of the same study, alone, finds every call in the shared cache (copied into
    # its own folder: the seeds' files in theirs are not its own)
    alone = {key: value for key, value in config.items() if key != "seeds"}
    with pytest.raises(ValueError, match=r"holds seed-0/, seed-1/, seeds.csv, spread.csv, "
                       r"which this study \(kind 'decision'\) does not write"):
        elicitation.run_study({**alone, "seed": 1}, progress=False)
    (tmp_path / "one").mkdir()
    shutil.copy(tmp_path / "seeds" / "cache.sqlite", tmp_path / "one" / "cache.sqlite")
    single = elicitation.run_study({**alone, "seed": 1, "out": "one"}, progress=False)
    assert single.n_calls == 0
    code, out = cli("study", str(_write(tmp_path)), "--quiet")
    assert code == 0 and "between-seed spread over seeds 0, 1" in out


def _write(tmp_path):
    path = tmp_path / "seeds.toml"
    path.write_text(textwrap.dedent("""
        seeds = [0, 1]
        out = "seeds"
        [model]
        simulated = "rational"
        [design]
        n_contexts = 8
        [tests]
        tests = ["ci"]
        n_permutations = 19
        n_resamples = 19
        """))
    return path


@pytest.mark.parametrize(("change", "message"), [
    ({"kind": "pairs", "seeds": [0, 1]}, "'seeds'"),
    ({"seed": 1, "seeds": [0, 1]}, "both 'seed' and 'seeds'"),
    ({"seeds": [0, 0]}, "distinct"),
    ({"kind": "consistency", "design": {"checkers": ["negation", "nope"]}}, "design.checkers"),
    ({"kind": "consistency", "design": {"designer": "network"}}, "design.designer"),
    ({"kind": "pairs", "design": {"designer": "templates"}}, "design.designer"),
    ({"kind": "consistency", "design": {"model_forms": ["and"]}}, "design.model_forms"),
    ({"kind": "consistency", "design": {"model_forms": ["P_and_R"]}}, "design.model_forms"),
    ({"kind": "consistency", "design": {"n_tuples": 0}}, "design.n_tuples"),
    ({"kind": "pairs", "design": {"n_candidates": 0}}, "design.n_candidates"),
    # accepted once and silently ignored, or failing after every call was made
    ({"kind": "pairs", "design": {"n_candidates": 5}}, "design.n_candidates"),
    ({"kind": "pairs", "design": {"repetitions": 3}}, "design.repetitions must be 1"),
    ({"kind": "consistency", "tests": {"baseline": "no"}}, "tests.baseline"),
    ({"models": [{"simulated": "rational", "base_url": "http://x/v1", "temperature": 0.1,
                  "max_tokens": 3}]}, "'base_url', 'max_tokens', 'temperature'"),
    ({"models": [{"simulated": "rational", "design_max_tokens": 64}]}, "'design_max_tokens'"),
    ({"models": [{"simulated": "rational", "concurrency": "four"}]}, "concurrency"),
    ({"models": [{"simulated": "rational", "concurrency": 2.7}]}, "concurrency"),
    ({"models": [{"simulated": "rational", "max_retries": True}]}, "max_retries"),
    ({"models": [{"simulated": "rational", "max_failures": -1}]}, "max_failures"),
    ({"models": [{"name": "m", "simulated": {"agent": "leaky", "strenght": 0.8}}]},
     "model 0 ('m'): simulated = {agent = 'leaky', ...}: Agent.leaky got unknown option(s) "
     "'strenght'"),
    ({"models": [{"simulated": "rationl"}]}, "simulated must be one of"),
])
def test_configuration_mistakes_name_the_key(change, message):
    config = {"models": [{"simulated": "rational"}], **change}
    with pytest.raises(ValueError, match=re.escape(message)):
        elicitation.load_study(config)


def test_consistency_defaults_fill_in():
    cfg = elicitation.load_study({"kind": "consistency", "models": [{"simulated": "rational"}]})
    assert cfg["design"]["checkers"] == list(coherence.CHECKERS)
    assert cfg["design"]["designer"] == "templates" and cfg["tests"]["baseline"] is True
    assert np.isfinite(cfg["tests"]["tolerance"])


def test_compound_rules_tell_the_forms_apart():
    from elicitation._study_tuples import _ROLES
    from elicitation._study_tuples import COMPOUND_FORMS
    from elicitation._study_tuples import _text
    from elicitation._study_tuples import compound_rule_check

    qs = demo_questions().to_dict("records")[:3]
    sources = [_text("P", [q]) for q in qs]
    for form in COMPOUND_FORMS:
        n = len(_ROLES[form])
        assert compound_rule_check(form, sources[:n], _text(form, qs[:n])) == "", form
    two = sources[:2]
    assert "an 'or' in a conjunction" in compound_rule_check(
        "P_and_Q", two, _text("P_or_Q", qs[:2]))
    assert "not a disjunction" in compound_rule_check("P_or_Q", two, _text("P_and_Q", qs[:2]))
    assert "not a conditional" in compound_rule_check("Q_given_P", two,
                                                      _text("P_and_Q", qs[:2]))
    assert "conditional word" in compound_rule_check("Q_and_not_P", two,
                                                     _text("Q_given_P", qs[:2]))
    assert "question B's event is missing" in compound_rule_check(
        "P_and_Q", two, f"Will it be true both that {sources[0][:-1]} and that it rains?")
    assert compound_rule_check("P_and_Q", two, sources[1]) == "a source question, unchanged"


def test_model_written_compound_forms_are_validated_with_the_template_as_fallback(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = {"kind": "consistency", "seed": 1, "out": "compound",
              "models": [{"simulated": "rational"}],
              "design": {"n_questions": 10, "n_tuples": 3, "repetitions": 1,
                         "designer": "model", "model_forms": "all"},
              "tests": {"n_resamples": 19}}
    first = elicitation.run_study(config, progress=False)
    design = pd.read_csv(first.paths["design"]).fillna("")
    compound = design[design["form"].str.contains("_")]
    questions = pd.read_csv(first.paths["questions"])
    # every compound question of the tuples was written by the model and checked
    want = questions[questions["form"].isin(set(compound["form"]))]
    assert set(compound["question"]) == set(want["question"])
    assert set(compound["form"]) >= {"P_and_Q", "P_or_Q", "Q_and_not_P", "Q_given_P",
                                     "R_given_P_and_Q", "P_and_Q_and_R", "P_given_Q",
                                     "P_given_not_Q"}
    assert compound["reply"].str.startswith("Question: ").all()
    # the stand-in's slips (first base q05, q10): an 'or' for an 'and', caught by both
    # checks; P given Q for Q given P, caught by the classification alone
    first_base = compound["base"].str.split(",").str[0]
    slipped = compound[first_base.isin(["q05", "q10"])
                       & compound["form"].isin(["P_and_Q", "Q_given_P"])]
    assert len(slipped) and not slipped["kept"].any()
    ands = slipped[slipped["form"] == "P_and_Q"]
    assert (ands["rule_problem"] == "an 'or' in a conjunction").all()
    conds = slipped[slipped["form"] == "Q_given_P"]
    assert len(conds) and (conds["rule_problem"] == "").all()
    assert (conds["classified"] == "A_GIVEN_B").all()
    assert compound.drop(slipped.index)["kept"].all()
    # the study records which form was used for every question
    source = questions.set_index("question")["source"]
    assert (source.loc[slipped["question"]] == "template").all()
    kept = compound.loc[compound["kept"], "question"]
    assert (source.loc[kept] == "model").all()
    text = questions.set_index("question")["text"]
    assert (text.loc[kept] == compound.set_index("question").loc[kept, "written"]).all()
    assert elicitation.run_study(config, progress=False).n_calls == 0


def _compound_server_reply(body, attempt):
    """Writes the compounds a model might: a good conjunction, a disjunction that says
    'and', and classifies by the connective it sees."""
    content = body["messages"][-1]["content"]
    found = re.findall(r"Question [AB]: Will it be true that (.+?)\?", content)
    if "Write one question that resolves YES exactly when both" in content:
        return Reply(text=f"Question: Will both of these hold: {found[0]}, and {found[1]}?")
    if "Write one question" in content:                       # the disjunction
        return Reply(text=f"Question: Will {found[0]} and {found[1]}?")
    if "New question:" in content:
        new = re.search(r"New question: (.+)", content).group(1)
        return Reply(text="Relation: " + ("A_AND_B" if "both" in new else "A_OR_B"))
    return Reply(text=default_answer(body))


def test_compound_forms_from_a_server_keep_the_raw_replies(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    srv = FakeOpenAIServer(_compound_server_reply).start()
    try:
        config = tmp_path / "compound.toml"
        config.write_text(textwrap.dedent(f"""
            kind = "consistency"
            out = "compound"
            [model]
            name = "fake"
            base_url = "{srv.url}"
            concurrency = 2
            [design]
            n_questions = 4
            n_tuples = 2
            checkers = ["and", "or"]
            repetitions = 1
            designer = "model"
            model_forms = ["P_and_Q", "P_or_Q"]
            [tests]
            n_resamples = 19
            """))
        first = elicitation.run_study(config, progress=False)
        design = pd.read_csv(first.paths["design"]).fillna("")
        assert set(design["form"]) == {"P_and_Q", "P_or_Q"}
        assert design["reply"].str.startswith("Question: Will ").all()
        by_form = design.groupby("form")["kept"].all()
        assert by_form["P_and_Q"] and not design.loc[design["form"] == "P_or_Q",
                                                     "kept"].any()
        assert (design.loc[design["form"] == "P_or_Q", "rule_problem"]
                == "no 'or' or 'either': not a disjunction").all()
        sent = [b["messages"][-1]["content"] for b in srv.bodies]
        assert any(s.startswith("Here are forecasting questions:\n\nQuestion A: ")
                   for s in sent)
        questions = pd.read_csv(first.paths["questions"]).set_index("question")
        assert set(questions.loc[questions["form"] == "P_or_Q", "source"]) == {"template"}
        assert set(questions.loc[questions["form"] == "P_and_Q", "source"]) == {"model"}
        assert elicitation.run_study(config, progress=False).n_calls == 0
    finally:
        srv.stop()


def test_pairs_study_takes_one_repetition_and_its_server_keys_only_on_a_server():
    cfg = elicitation.load_study({"kind": "pairs", "models": [{"simulated": "rational",
                                                               "concurrency": 2}],
                                  "design": {"designer": "model", "n_candidates": 5,
                                             "n_pairs": 5}})
    assert cfg["design"]["repetitions"] == 1 and cfg["models"][0]["concurrency"] == 2
    served = elicitation.load_study({"models": [{"name": "m", "base_url": "http://x/v1",
                                                 "temperature": 0.1, "max_retries": 0}]})
    assert served["models"][0]["temperature"] == 0.1


@pytest.mark.parametrize(("key", "value"), [("concurrency", 2.7), ("max_retries", True),
                                            ("max_failures", "3")])
def test_study_options_take_ints_as_they_are(key, value):
    from elicitation._options import study_options

    with pytest.raises(TypeError, match=key):
        study_options({key: value}, 0.02, None, False)
    assert study_options({key: 3}, 0.02, None, False).__getattribute__(key) == 3


@pytest.mark.filterwarnings("ignore:report\\(n_permutations:DeprecationWarning")
def test_decision_study_without_a_decision_runs_the_tests_that_need_no_action(
        tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = {"kind": "decision", "out": "nodecision", "models": [{"simulated": "rational"}],
              "design": {"n_contexts": 8, "decision": ""},
              "tests": {"tests": ["calibration", "prompt_consistency", "ci"],
                        "n_permutations": 19, "n_resamples": 19}}
    study = elicitation.run_study(config, progress=False)
    assert study.n_calls == 8 * 2 and "action" not in study.data.columns
    frame = study.report.to_frame()
    assert list(frame["test"]) == ["calibration"] and frame["error"].eq("").all()
    assert np.isfinite(frame["statistic"]).all()


def test_cli_over_seeds_labels_the_grid_and_checks_every_seed(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    real = elicitation.run_study

    def one_seed_fails(config, **kw):   # the second seed's ci could not be computed
        result = real(config, **kw)
        seeds = pd.read_csv(result.paths["seeds"], keep_default_na=False)
        seeds.loc[(seeds["seed"] == 1) & (seeds["test"] == "ci"), "error"] = "boom"
        seeds.to_csv(result.paths["seeds"], index=False)
        return result

    monkeypatch.setattr(elicitation, "run_study", one_seed_fails)
    code, out = cli("study", str(_write(tmp_path)), "--quiet")
    assert "seed 0 (the first of seeds 0, 1; every seed's report is in seeds/seed-<s>/):" \
        in out
    assert code == 1 and "ci failed on rational (seed 1): boom" in out
