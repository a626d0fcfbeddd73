"""The console script, end to end in subprocesses."""

import subprocess
import sys

import coherence


def run(*args):
    return subprocess.run([sys.executable, "-m", "coherence._cli", *args], capture_output=True,
                          text=True, timeout=300)


def test_version():
    out = run("--version")
    assert out.returncode == 0 and out.stdout.strip() == f"coherence {coherence.__version__}"


def test_no_command_is_usage_error():
    out = run()
    assert out.returncode == 2 and "demo" in out.stdout


def test_unknown_command():
    out = run("frobnicate")
    assert out.returncode == 2 and "invalid choice" in out.stderr
    assert "Traceback" not in out.stderr


def test_demo_quick_prints_every_agent():
    out = run("demo", "--quick", "--seed", "1")
    assert out.returncode == 0, out.stderr
    for agent in ("rational", "rational+noise", "leaky", "nonmonotone", "prompt_sensitive"):
        assert agent in out.stdout
    assert "50 contexts x 5 repetitions" in out.stdout


def test_demo_summary_matches_truth():
    from coherence._demo import demo_studies, demo_summary

    studies = demo_studies(n_contexts=20, n_repetitions=2, rng=0)
    table = demo_summary(studies)
    assert table.loc["rational", "true_cmi"] == 0.0
    assert table.loc["leaky", "true_cmi"] > 0.01
    assert table.loc["nonmonotone", "nonmonotone_pairs"] == 2
    assert table.loc["prompt_sensitive", "prompts"] == 4
    assert table.loc["rational", "rows"] == 40


def test_demo_bad_size():
    out = run("demo", "--n-contexts", "0")
    assert out.returncode == 2 and "must be >= 1" in out.stderr
    out = run("demo", "--n-contexts", "many")
    assert out.returncode == 2 and "invalid int value" in out.stderr
