"""A study file's values of the wrong type or meaning are refused when the file is read,
naming the key, before any model is asked; and a study's ``stop`` string, ``*_toolkit``
prompts and model names reach the model and the report as written."""

from __future__ import annotations

import contextlib
import io
import textwrap

import pandas as pd
import pytest

import elicitation
from tests._fake_openai_server import FakeOpenAIServer
from tests.elicitation._shared import cli

pytest.importorskip("pgmpy")

SIM = {"model": {"simulated": "rational"}}
TESTS = {"tests": ["ci"], "n_permutations": 19, "n_resamples": 19}


@pytest.mark.parametrize("config, message", [
    ({**SIM, "out": 5}, "'out' must be a folder's path; got 5"),
    # a NUL character failed in Path.resolve ('embedded null byte', naming no key); a list in
    # 'seeds' failed in set() ('unhashable type: list')
    ({**SIM, "out": "a\0b"}, r"'out' must be a folder's path \(it must hold no control "
     r"character such as a line break, tab or NUL\); got 'a\\x00b'"),
    # a line break split the paths the summary shows
    ({**SIM, "out": "a\nb"}, r"'out' must be a folder's path \(it must hold no control "
     r"character .*\); got 'a\\nb'"),
    ({"seeds": [[1], 2], **SIM}, r"'seeds' must be a list of distinct .*; got \[\[1\], 2\]"),
    ({**SIM, "design": {"prompts": 5}}, "design.prompts must be a name or a non-empty list"),
    ({**SIM, "design": {"prompts": []}}, "design.prompts must be a name or a non-empty list"),
    ({**SIM, "design": {"question": 5}}, "design.question must be the phrase"),
    ({**SIM, "design": {"sum_tolerance": 5}}, "design.sum_tolerance must be a number"),
    ({**SIM, "design": {"sum_tolerance": 1.0}}, r"design.sum_tolerance must be a number in "
     r"\[0, 1\); got 1.0"),
    ({**SIM, "tests": {"reference_prompt": "mse"}}, "tests.reference_prompt must be the "
     r"variant of one of design.prompts \(standard\); got 'mse'"),
    ({**SIM, "kind": "pairs", "design": {"reverse": "no"}}, "design.reverse must be true or "
     "false; got 'no'"),
    ({**SIM, "kind": "pairs", "design": {"subject": 5}}, "design.subject must be a phrase"),
    ({**SIM, "kind": "pairs", "design": {"variants": []}}, "design.variants must be"),
    ({**SIM, "kind": "consistency", "design": {"questions": 5}}, "design.questions must be"),
    ({**SIM, "kind": "consistency", "tests": {"tolerance": "x"}}, "tests.tolerance must be"),
    ({**SIM, "kind": "consistency", "tests": {"definition": "x"}}, "tests.definition must"),
    ({**SIM, "kind": "consistency", "tests": {"n_resamples": 0}}, "tests.n_resamples must"),
    ({**SIM, "kind": "consistency", "design": {"checkers": 5}}, "design.checkers must be"),
    ({**SIM, "kind": "consistency", "design": {"designer": "model", "model_forms": []}},
     "design.model_forms must name at least one form"),
    # a repeated checker was asked of every model, then failed naming nothing (pandas'
    # "Index contains duplicate entries"); a repeated prompt or variant named run's parameter
    ({**SIM, "kind": "consistency", "design": {"checkers": ["negation", "negation"]}},
     r"design.checkers must name each entry once; 'negation' repeated"),
    ({**SIM, "design": {"prompts": ["standard", "standard_toolkit"]}},
     r"design.prompts must name each entry once .*'standard' repeated"),
    ({**SIM, "kind": "pairs", "design": {"variants": ["baseline", "baseline"]}},
     r"design.variants must name each entry once; 'baseline' repeated"),
    # a test named twice ran once, its row and family unchanged, without a word; a stop
    # sequence named twice was sent twice
    ({**SIM, "tests": {"tests": ["ci", "leakage", "ci"]}},
     r"tests.tests must name each entry once; 'ci' repeated in \['ci', 'leakage', 'ci'\]"),
    ({"model": {"name": "m", "base_url": "http://127.0.0.1:9/v1", "stop": ["</s>", "</s>"]}},
     r"model 0 \('m'\): stop must name each entry once; '</s>' repeated"),
    # the same simulated agent under two names drew the same replies (the second all from
    # the cache): one model counted as two
    ({"models": [{"simulated": "leaky", "name": "a"}, {"simulated": "leaky", "name": "b"}]},
     r"models 0 \('a'\) and 1 \('b'\) are the same simulated agent \('leaky'\)"),
    ({"models": [{"simulated": {"agent": "leaky", "strength": 0.8}, "name": "a"},
                 {"simulated": {"strength": 0.8, "agent": "leaky"}, "name": "b"}]},
     "models 0 .* and 1 .* are the same simulated agent"),
    # the study's name was str()-ed: name = ["a"] was the study "['a']"
    ({**SIM, "name": ["a"]}, r"'name' must be text .*; got \['a'\]"),
    ({**SIM, "name": 5}, "'name' must be text"),
    ({**SIM, "name": " "}, "'name' must be text"),
    ({**SIM, "name": "a\tb"}, r"'name' must be text .*no control character .*got 'a\\tb'"),
    ({"model": {"simulated": "rational", "name": 5}}, r"model 0 \(5\): name must be text"),
    ({"model": {"simulated": "rational", "name": ""}}, "name must be text"),
    ({"model": {"simulated": "rational", "name": "007"}}, "name must be text"),
    ({"model": {"simulated": "rational", "name": "NA"}}, "name must be text"),
    # a blank name failed with an IndexError naming nothing; a NUL, line break or tab went
    # into the cache keys, the tables and the report
    ({"model": {"simulated": "rational", "name": "   "}}, r"model 0 \('   '\): name must be "
     r"text that table.csv reads back as itself \(not empty or blank"),
    *(({"model": {"simulated": "rational", "name": f"a{c}b"}}, rf"model 0 \('a\\{shown}b'\): "
       r"name must hold no control character such as a line break, tab or NUL")
      for c, shown in (("\0", "x00"), ("\n", "n"), ("\t", "t"))),
    ({"model": {"name": "m\n", "base_url": "http://127.0.0.1:9/v1"}},
     r"model 0 \('m\\n'\): name must hold no control character"),
    ({**SIM, "design": {"question": "have\nthe disease"}}, r"design.question must be the "
     r"phrase .*no control character.*got 'have\\nthe disease'"),
    ({**SIM, "kind": "pairs", "design": {"subject": "the\0patient"}}, r"design.subject must "
     r"be a phrase .*no control character"),
    ({**SIM, "kind": "consistency", "design": {"questions": "q\n.csv"}}, r"design.questions "
     r"must be 'demo' or a CSV file's path \(it must hold no control character"),
    ({"model": {"name": "m", "base_url": "http://127.0.0.1:9/v1", "stop": 5}},
     "stop must be a stop sequence"),
    ({"model": {"name": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": 5}},
     "api_key_env must be the name of an environment variable"),
    ({"model": {"name": "m", "base_url": "http://127.0.0.1:9/v1", "api_key_env": "KEY\n"}},
     r"api_key_env must be the name of an environment variable \(it must hold no control"),
    ({"model": {"name": "m", "base_url": "http://127.0.0.1:9/v1", "top_logprobs": 5}},
     "top_logprobs is used only with logprobs = true"),
    ({"model": {"name": "m", "base_url": "http://127.0.0.1:9/v1", "design_max_tokens": 0}},
     "design_max_tokens must be a positive int"),
])
def test_a_value_of_the_wrong_type_is_refused_when_read_naming_its_key(tmp_path, monkeypatch,
                                                                        config, message):
    # these used to fail with a Python error naming no key ('int' object is not iterable,
    # exit 1), to run with another value (reverse = "no" ran both directions), or to stop
    # the study only after every model had been asked (reference_prompt, the consistency
    # study's [tests]); model names such as '007' or 'NA' came back from table.csv as the
    # model 7 or a missing model
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=message):
        elicitation.load_study(config)
    with pytest.raises(ValueError, match=message):
        elicitation.run_study({**config, "out": "s"} if "out" not in config else config,
                              progress=False)
    assert not (tmp_path / "s" / "cache.sqlite").exists()   # nothing was asked


@pytest.mark.parametrize("config, message", [
    # '[Errno 36] File name too long' named the path, not the key
    ({"out": "x" * 10_000}, r"'out' must be a folder's path; got '.*x{200}.*' \(File name "
     "too long\\)"),
    ({"out": "s", "kind": "consistency", "design": {"questions": "x" * 10_000}},
     r"design.questions must be 'demo' or a CSV file; 'x{10000}' is not a file"),
])
def test_a_path_too_long_for_the_file_system_is_refused_naming_its_key(tmp_path, monkeypatch,
                                                                       config, message):
    monkeypatch.chdir(tmp_path)
    elicitation.load_study({**SIM, **config})   # a valid name: its length is the system's
    with pytest.raises(ValueError, match=message):
        elicitation.run_study({**SIM, **config}, progress=False)
    assert not (tmp_path / "s" / "cache.sqlite").exists()   # nothing was asked


@pytest.mark.parametrize("variant", ["NA", "null", "007", "true"])
def test_a_prompt_whose_variant_would_not_read_back_is_refused_before_a_call(
        tmp_path, monkeypatch, variant):
    # the variant is the table's prompt column: 'NA' was asked of every model, then the report
    # refused the missing prompts; '007' alone came back as the prompt 7
    from elicitation import Template
    from elicitation import get_template
    from elicitation import register_template
    from elicitation._templates import _REGISTRY

    monkeypatch.chdir(tmp_path)
    standard = get_template("standard")
    register_template(Template("t_variant", "probability", user=standard.user,
                               labels=standard.labels, variant=variant), overwrite=True)
    try:
        config = {**SIM, "out": "s", "design": {"prompts": ["standard", "t_variant"]}}
        with pytest.raises(ValueError, match=rf"design.prompts names 't_variant', whose variant "
                           rf"'{variant}' \(the table's prompt column\) table.csv would not "
                           "read back as itself"):
            elicitation.run_study(config, progress=False)
    finally:
        _REGISTRY.pop("t_variant", None)
    assert not (tmp_path / "s" / "cache.sqlite").exists()   # nothing was asked


def test_cli_study_type_mistake_exits_2_with_one_line_naming_the_key(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "s.toml"
    config.write_text('out = 5\n[model]\nsimulated = "rational"\n')
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        code, _ = cli("study", str(config))
    assert code == 2 and "'out' must be a folder's path" in err.getvalue(), err.getvalue()
    assert len(err.getvalue().strip().splitlines()) == 1


def test_a_stop_string_is_one_stop_sequence(tmp_path, monkeypatch):
    # stop = "<|im_end|>" used to be sent as ten one-character stop sequences ('<', '|',
    # 'i', ...), cutting every reply at its first 'e' or 'n'
    monkeypatch.chdir(tmp_path)
    srv = FakeOpenAIServer().start()
    try:
        config = {"out": "s", "model": {"name": "fake", "base_url": srv.url,
                                        "stop": "<|im_end|>"},
                  "design": {"n_contexts": 2, "repetitions": 1, "decision": ""},
                  "tests": {**TESTS, "tests": ["calibration"]}}
        with pytest.warns(Warning):   # the fake server's beliefs are degenerate
            elicitation.run_study(config, progress=False)
        assert srv.bodies and all(b["stop"] == ["<|im_end|>"] for b in srv.bodies)
        srv.bodies.clear()
        config["model"]["stop"] = ["<|im_end|>", "\n\n"]
        config["out"] = "t"
        with pytest.warns(Warning):
            elicitation.run_study(config, progress=False)
        assert srv.bodies and all(b["stop"] == ["<|im_end|>", "\n\n"] for b in srv.bodies)
    finally:
        srv.stop()


def test_a_study_of_the_toolkit_prompts_runs_its_report(tmp_path, monkeypatch):
    # the default reference prompt was the first prompt's template name
    # ('standard_toolkit'), not its variant ('standard', the table's prompt column): the
    # report refused it after every model had been asked
    monkeypatch.chdir(tmp_path)
    config = tmp_path / "s.toml"
    config.write_text(textwrap.dedent("""
        out = "s"
        [model]
        simulated = "rational"
        [design]
        n_contexts = 4
        repetitions = 1
        prompts = ["standard_toolkit", "mse_toolkit"]
        [tests]
        tests = ["ci", "prompt_consistency"]
        n_permutations = 19
        n_resamples = 19
        """))
    study = elicitation.run_study(config, progress=False)
    assert set(study.data["prompt"]) == {"standard", "mse"}
    assert study.report.settings["reference_prompt"] == "standard"
    table = pd.read_csv(study.paths["table"])
    assert set(table["model"]) == {"rational"}


def test_a_study_that_stops_still_prints_the_warnings_before_it(tmp_path, monkeypatch):
    # the warnings were printed only after a study that finished: model a's replies left
    # out of its table were not said when model b then stopped the study
    from tests._fake_openai_server import Reply

    monkeypatch.chdir(tmp_path)

    def behaviour(body, attempt):
        if body["model"] == "b":
            return Reply(status=401)
        return Reply(text="I am not sure") if body.get("seed") == 1 else Reply()

    srv = FakeOpenAIServer(behaviour).start()
    try:
        (tmp_path / "s.toml").write_text(textwrap.dedent(f"""
            out = "s"
            [[models]]
            name = "a"
            base_url = "{srv.url}"
            [[models]]
            name = "b"
            base_url = "{srv.url}"
            max_failures = 0
            [design]
            n_contexts = 2
            repetitions = 2
            """))
        err = io.StringIO()
        with contextlib.redirect_stderr(err):
            code, _ = cli("study", "s.toml", "--quiet")
    finally:
        srv.stop()
    lines = err.getvalue().strip().splitlines()
    assert code == 1 and "ElicitationError" in lines[-1], lines
    assert any("warning: 2 of 4 rows left out" in line for line in lines), lines


@pytest.mark.parametrize("config, message", [
    ({"kind": "pairs", "design": {"network": "asia", "n_pairs": 500}},
     r"design.n_pairs \(500\) asks for more pairs than the asia network has: .*'none' of 166"),
    ({"kind": "pairs", "design": {"network": "asia", "designer": "model",
                                  "n_candidates": 300}},
     r"design.n_candidates \(300\) asks for more pairs"),
    ({"kind": "consistency", "design": {"n_questions": 500}},
     r"design.n_questions \(500\) is more than the 20 questions"),
    ({"kind": "forecasting", "design": {"n_questions": 21, "simulated_date": "2028-01-01"}},
     r"design.n_questions \(21\) is more than the 20 questions"),
    ({"kind": "consistency", "design": {"n_questions": 3, "n_tuples": 4}},
     r"design.n_tuples \(4\) is more than the 3 base questions"),
    ({"kind": "consistency", "design": {"n_questions": 2, "n_tuples": 2,
                                        "checkers": ["negation", "cond_cond"]}},
     "design.checkers names 'cond_cond', whose tuples need 2 or 3 distinct base questions"),
])
def test_a_design_larger_than_its_source_is_refused_before_any_call(tmp_path, monkeypatch,
                                                                    config, message):
    # the study ran on what there was (60 pairs of 500, unbalanced; 20 questions of 500;
    # 3 tuples of 50; no cond_cond tuple at all) while its summary said what was asked
    monkeypatch.chdir(tmp_path)
    with pytest.raises(ValueError, match=message):
        elicitation.run_study({**SIM, "out": "s", **config}, progress=False)
    assert not (tmp_path / "s" / "cache.sqlite").exists()   # nothing was asked


def test_the_summary_counts_a_models_design_calls(tmp_path, monkeypatch):
    # "7 elicitations, 11 calls made": the design calls (questions written, checked) were in
    # the calls and not in the elicitations, so a rerun read "0 calls made, 11 from the
    # cache" of 7 elicitations
    monkeypatch.chdir(tmp_path)
    config = {**SIM, "out": "s", "kind": "consistency",
              "design": {"n_questions": 4, "n_tuples": 2, "repetitions": 1,
                         "checkers": ["negation", "and"], "designer": "model"},
              "tests": {"n_resamples": 19}}
    first = elicitation.run_study(config, progress=False)
    designed = first.n_calls - len(first.raw)
    assert designed > 0
    assert (f"{len(first.raw)} elicitations and {designed} design calls, {first.n_calls} "
            "calls made, 0 from the cache") in str(first.summary())
    again = elicitation.run_study(config, progress=False)
    assert (f"{len(first.raw)} elicitations and {designed} design calls, 0 calls made, "
            f"{first.n_calls} from the cache") in str(again.summary())


@pytest.mark.parametrize("kind", ["consistency", "forecasting"])
@pytest.mark.parametrize("questions, message", [
    ("nonexistent.csv", "design.questions must be 'demo' or a CSV file; 'nonexistent.csv' "
     "is not a file"),
    ("wrong.csv", r"wrong.csv lacks column\(s\) \['id', 'fact', 'date', 'later_date'\]"),
])
def test_a_questions_file_missing_or_without_its_columns_stops_the_study_before_a_call(
        tmp_path, monkeypatch, kind, questions, message):
    # read when the study starts (after load_study), before the cache is opened
    monkeypatch.chdir(tmp_path)
    (tmp_path / "wrong.csv").write_text("a,b\n1,2\n")
    config = {**SIM, "kind": kind, "out": "s",
              "design": {"questions": questions, "simulated_date": "2028-01-01"}
              if kind == "forecasting" else {"questions": questions}}
    with pytest.raises(ValueError, match=message):
        elicitation.run_study(config, progress=False)
    assert not (tmp_path / "s" / "cache.sqlite").exists()   # nothing was asked
