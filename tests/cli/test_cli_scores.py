"""``coherence scores --forecastbench --calibration`` (issue 20), in process."""

import re

import numpy as np
import pandas as pd
import pytest

from coherence import TiesWarning
from coherence import calibration_error
from coherence import forecastbench_scores
from tests.cli.test_cli import one_line_error

#: the leaderboard's warning of intervals on fewer than 40 questions (these tables have 20)
pytestmark = pytest.mark.filterwarnings(
    "ignore:.*cover less than their level:coherence.SmallSampleWarning")


@pytest.fixture(scope="module")
def table(tmp_path_factory):
    rng = np.random.default_rng(0)
    n = 40
    frame = pd.DataFrame({"model": np.repeat(["org/m1", "m2"], n // 2),
                          "question": np.tile([f"q{i}" for i in range(n // 2)], 2),
                          "probability": rng.random(n).round(3),
                          "outcome": np.tile(rng.integers(0, 2, n // 2), 2)})
    path = tmp_path_factory.mktemp("scores") / "f.csv"
    frame.to_csv(path, index=False)
    return frame, path


def test_default_output_unchanged(run, table):
    out = run("scores", str(table[1]))
    assert out.returncode == 0, out.stderr
    assert "ForecastBench" not in out.stdout and "Calibration" not in out.stdout


def test_forecastbench_and_calibration(run, table):
    frame, path = table
    out = run("scores", str(path), "--forecastbench", "--naive", "m2", "--calibration",
              "--resamples", "50")
    assert out.returncode == 0, out.stderr
    assert max(map(len, out.stdout.splitlines())) <= 100
    assert "ForecastBench scores" in out.stdout and "Calibration per model" in out.stdout
    fb = forecastbench_scores(frame, naive="m2", n_resamples=50, rng=0)
    index = fb.table.set_index("model")["brier_index"]
    assert f"{index['org/m1']:.4g}" in out.stdout and f"{index['m2']:.4g}" in out.stdout
    ce = calibration_error(frame[frame["model"] == "m2"], group="question", n_resamples=50,
                           rng=0)
    assert f"{ce.statistic:.4g}" in out.stdout


def test_unknown_naive_is_usage_error(run, table):
    out = run("scores", str(table[1]), "--forecastbench", "--naive", "nobody")
    one_line_error(out)
    assert "--naive names model 'nobody'" in out.stderr and out.stdout == ""


def test_naive_without_forecastbench_is_usage_error(run, table):
    # --naive was ignored without --forecastbench
    out = run("scores", str(table[1]), "--naive", "m2")
    one_line_error(out)
    assert "--naive is an option of --forecastbench" in out.stderr and out.stdout == ""


def test_revised_forecasts_are_scored_once_in_every_table(run, table, tmp_path):
    """With a forecast_date column the scores keep each (model, question)'s latest
    forecast; --calibration and --forecastbench read the same rows (the calibration
    table once pooled every revision: n 80 where 40 forecasts were scored, and
    --forecastbench refused the table)."""
    frame, _ = table
    frame = frame.rename(columns={"model": "llm", "question": "qid"})  # own names
    early = frame.assign(probability=0.5, forecast_date="2024-01-01")
    late = frame.assign(forecast_date="2024-02-01")
    revised, latest = tmp_path / "revised.csv", tmp_path / "latest.csv"
    pd.concat([early, late], ignore_index=True).to_csv(revised, index=False)
    late.to_csv(latest, index=False)
    outs = [run("scores", str(path), "--by", "llm", "--question", "qid", "--calibration",
                "--forecastbench", "--resamples", "50") for path in (revised, latest)]
    assert outs[0].returncode == 0, outs[0].stderr
    tail = [out.stdout[out.stdout.index("ForecastBench scores"):] for out in outs]
    assert tail[0] == tail[1]


def test_cutoffs_give_every_extra_table_before_and_after_the_filter(run, tmp_path):
    """With --cutoffs the summary shows the scores before and after the contamination
    filter; --calibration and --decomposition printed one table, of every forecast,
    unlabelled. Each now comes twice, labelled, the second on the rows the filter kept."""
    rng = np.random.default_rng(1)
    n = 60  # questions per model; the first 20 opened before m2's cutoff
    frame = pd.DataFrame({"model": np.repeat(["org/m1", "m2"], n),
                          "question": np.tile([f"q{i}" for i in range(n)], 2),
                          "probability": rng.random(2 * n).round(3),
                          "outcome": np.tile(rng.integers(0, 2, n), 2),
                          "opened": np.tile(np.where(np.arange(n) < 20, "2023-01-01",
                                                     "2024-06-01"), 2)})
    path, cutoffs = tmp_path / "f.csv", tmp_path / "cutoffs.json"
    frame.to_csv(path, index=False)
    cutoffs.write_text('{"m2": "2024-01"}')  # org/m1 has none: kept whole
    out = run("scores", str(path), "--cutoffs", str(cutoffs), "--calibration",
              "--decomposition", "--resamples", "50")
    assert out.returncode == 0, out.stderr
    assert max(map(len, out.stdout.splitlines())) <= 100
    text = " ".join(out.stdout.split())  # titles are wrapped
    for name in ("Calibration per model", "Brier decomposition per model"):
        assert f"[before the contamination filter] {name}" in text
        assert f"[after the contamination filter] {name}" in text
    blocks = out.stdout.split("\n\n")
    before = next(b for b in blocks if b.startswith("[before") and "Calibration" in b)
    after = next(b for b in blocks if b.startswith("[after") and "Calibration" in b)
    m2 = frame[frame["model"] == "m2"]
    kept = m2[m2["opened"] >= "2024-01-01"]
    every = calibration_error(m2, group="question", n_resamples=50, rng=0)
    filtered = calibration_error(kept, group="question", n_resamples=50, rng=0)
    assert every.statistic != filtered.statistic
    assert re.search(rf"^m2 +60 +{re.escape(f'{every.statistic:.4g}')} ", before, re.M)
    assert re.search(rf"^m2 +40 +{re.escape(f'{filtered.statistic:.4g}')} ", after, re.M)
    brier = next(b for b in blocks if b.startswith("[after") and "Brier decomposition" in b)
    assert re.search(rf"^m2 +brier +{re.escape(f'{kept_brier(kept):.4g}')} ", brier, re.M)


def kept_brier(rows):
    return float(((rows["probability"] - rows["outcome"]) ** 2).mean())


def test_a_named_timestamp_column_must_exist(run, table, tmp_path):
    """Regression: --timestamp naming a column the file lacks was dropped without a word
    (the revisions then refused as duplicates, or, with none, the option unused); the
    default forecast_date is still used only when present."""
    frame, path = table
    out = run("scores", str(path), "--timestamp", "when")
    one_line_error(out)
    assert "--timestamp names column 'when'" in out.stderr and out.stdout == ""
    early = frame.assign(probability=0.5, when="2024-01-01")
    late = frame.assign(when="2024-02-01")
    revised = tmp_path / "revised.csv"
    pd.concat([early, late], ignore_index=True).to_csv(revised, index=False)
    named, plain = run("scores", str(revised), "--timestamp", "when"), run("scores", str(path))
    assert named.returncode == 0, named.stderr
    assert named.stdout == plain.stdout      # the latest forecasts, the file's own


@pytest.mark.parametrize("extra", [("--set", "group"), ("--role", "kind"),
                                   ("--decomposition", "--set", "group")])
def test_set_or_role_without_a_checker_is_usage_error(run, table, extra):
    """Regression: --set or --role without --checker were ignored: the decomposition ran
    without sets, its incoherence 0 without a word."""
    out = run("scores", str(table[1]), *extra)
    one_line_error(out)
    assert f"{extra[-2]} goes with --decomposition --checker" in out.stderr
    assert out.stdout == ""


def test_opened_goes_with_cutoffs_and_must_exist(run, table, tmp_path):
    """Regression: --opened without --cutoffs was read by nothing (no filter ran) and the
    scores printed as if it had been used; a misspelt --opened is named before anything."""
    frame, path = table
    out = run("scores", str(path), "--opened", "opened_at")
    one_line_error(out)
    assert "--opened names the column the --cutoffs filter reads" in out.stderr
    assert out.stdout == ""
    cutoffs = tmp_path / "cutoffs.json"
    cutoffs.write_text('{"m2": "2023-06"}')
    dated = tmp_path / "dated.csv"
    frame.assign(opened_at="2023-01-01").to_csv(dated, index=False)
    out = run("scores", str(dated), "--cutoffs", str(cutoffs), "--opened", "opened")
    one_line_error(out)
    assert "--opened names column 'opened'" in out.stderr and out.stdout == ""
    out = run("scores", str(dated), "--cutoffs", str(cutoffs), "--opened", "opened_at")
    assert out.returncode == 0, out.stderr
    after = out.stdout.split("after the contamination filter")[1]
    assert "m2" not in after and "org/m1" in after   # m2's questions opened before its cutoff


def test_version_names_are_kept_as_written(run, tmp_path):
    """Models named '1.10' and '1.2' (versions) were read as the numbers 1.1 and 1.2: the
    '1.10' cutoff matched no model and left its forecasts unfiltered, --naive 1.10 was
    refused, and the table and --csv named the model 1.1."""
    rng = np.random.default_rng(1)
    outcome = rng.integers(0, 2, 20)
    frame = pd.DataFrame({"model": np.repeat(["1.10", "1.2"], 20),
                          "question": np.tile([f"q{i}" for i in range(20)], 2),
                          "probability": rng.random(40).round(3),
                          "outcome": np.tile(outcome, 2),
                          "opened": np.tile([f"2023-{1 + i % 9:02d}-15" for i in range(20)], 2)})
    path = tmp_path / "f.csv"
    frame.to_csv(path, index=False)
    cutoffs = tmp_path / "cutoffs.json"
    cutoffs.write_text('{"1.10": "2023-05", "1.2": "2023-05"}')
    out = run("scores", str(path), "--cutoffs", str(cutoffs), "--csv", str(tmp_path / "s.csv"))
    assert out.returncode == 0, out.stderr
    assert "without a cutoff" not in out.stdout
    written = pd.read_csv(tmp_path / "s.csv", dtype={"model": str})
    assert set(written["model"]) == {"1.10", "1.2", "(all)"}
    after = written[written["filtered"] & written["model"].eq("1.10")]
    assert int(after["n_questions"].iloc[0]) < 20  # the 1.10 cutoff was applied
    out = run("scores", str(path), "--forecastbench", "--naive", "1.10", "--resamples", "20")
    assert out.returncode == 0, out.stderr


def test_resamples_without_an_extra_table_is_refused(run, table):
    """--resamples sets the bootstrap of the extra tables only: without one it was read by
    nothing (the per-model intervals kept their 2000 replicates) and the run exited 0."""
    out = run("scores", str(table[1]), "--resamples", "50")
    one_line_error(out)
    assert "--resamples 50 sets the bootstrap of --forecastbench" in out.stderr
    out = run("scores", str(table[1]), "--calibration", "--resamples", "50")
    assert out.returncode == 0, out.stderr


@pytest.mark.parametrize("option", ["--forecastbench", "--decomposition"])
def test_cluster_with_an_unclustered_table_is_usage_error(run, table, tmp_path, option):
    """Regression: --cluster set the per-model and --calibration intervals, but
    --forecastbench and --decomposition took no cluster and printed intervals over
    questions (or linked sets) beside them, without a word. The combination is refused."""
    frame, _ = table
    path = tmp_path / "clustered.csv"
    frame.assign(topic="t" + frame["question"]).to_csv(path, index=False)
    out = run("scores", str(path), "--cluster", "topic", option, "--resamples", "50")
    one_line_error(out)
    assert f"--cluster topic cannot be honoured by {option}" in out.stderr
    assert out.stdout == ""
    out = run("scores", str(path), "--cluster", "topic", "--calibration", "--resamples", "50")
    assert out.returncode == 0, out.stderr   # --calibration resamples the clusters


def test_cutoffs_filter_the_forecastbench_table_too(run, tmp_path):
    """--forecastbench with --cutoffs: the leaderboard after the filter is that of the
    rows the filter kept (m2 on its 40 questions opened after its cutoff)."""
    rng = np.random.default_rng(2)
    n = 60
    frame = pd.DataFrame({"model": np.repeat(["m1", "m2"], n),
                          "question": np.tile([f"q{i}" for i in range(n)], 2),
                          "probability": rng.uniform(0.2, 0.8, 2 * n).round(3),
                          "outcome": np.tile(rng.integers(0, 2, n), 2),
                          "opened": np.tile(np.where(np.arange(n) < 20, "2023-01-01",
                                                     "2024-06-01"), 2)})
    path, cutoffs = tmp_path / "f.csv", tmp_path / "cutoffs.json"
    frame.to_csv(path, index=False)
    cutoffs.write_text('{"m2": "2024-01"}')
    out = run("scores", str(path), "--cutoffs", str(cutoffs), "--forecastbench",
              "--resamples", "50")
    assert out.returncode == 0, out.stderr
    blocks = out.stdout.split("\n\n")
    before = next(b for b in blocks if b.startswith("[before") and "ForecastBench scores" in b)
    after = next(b for b in blocks if b.startswith("[after") and "ForecastBench scores" in b)
    kept = frame[(frame["model"] == "m1") | (frame["opened"] >= "2024-01-01")]
    for block, rows in ((before, frame), (after, kept)):
        fb = forecastbench_scores(rows, n_resamples=50, rng=0).table.set_index("model")
        n_m2, brier = int(fb.loc["m2", "n_questions"]), f"{fb.loc['m2', 'brier']:.4g}"
        assert re.search(rf"^ *\d +m2 +{n_m2} +{re.escape(brier)} ", block, re.M), block
    assert "60 questions" in " ".join(after.split())  # m1 keeps every question


def test_a_smooth_ece_error_is_not_printed_as_nan(run, table, monkeypatch):
    """Regression: --calibration caught any ValueError of smooth_ece and printed NaN in its
    column; the error now ends the run with its message, and no table is printed."""
    import coherence

    def broken(*args, **kwargs):
        raise ValueError("Column 'probability' of smooth_ece: a future check failed")

    monkeypatch.setattr(coherence, "smooth_ece", broken)
    out = run("scores", str(table[1]), "--calibration", "--resamples", "20")
    one_line_error(out)
    assert "a future check failed" in out.stderr and out.stdout == ""


def test_calibration_table_gives_the_bins_used(run, tmp_path):
    """Tied forecasts share an equal-mass bin: m1's 40 forecasts take 4 values, so 4 of
    the 10 bins the title names are used (the 'bins' column), with a TiesWarning."""
    rng = np.random.default_rng(3)
    n = 40
    frame = pd.DataFrame({"model": np.repeat(["m1", "m2"], n),
                          "question": np.tile([f"q{i}" for i in range(n)], 2),
                          "probability": np.concatenate([rng.choice([0.2, 0.4, 0.6, 0.8], n),
                                                         rng.random(n).round(4)]),
                          "outcome": np.tile(rng.integers(0, 2, n), 2)})
    path = tmp_path / "f.csv"
    frame.to_csv(path, index=False)
    with pytest.warns(TiesWarning, match=r"n_bins=10 asked, 4 equal-mass bin\(s\) used"):
        out = run("scores", str(path), "--calibration", "--resamples", "20")
    assert out.returncode == 0, out.stderr
    block = out.stdout[out.stdout.index("Calibration per model"):]
    assert "bins: the bins used" in " ".join(block.split())
    assert re.search(r"^m1 +40 .* 4$", block, re.M), block
    assert re.search(r"^m2 +40 .* 10$", block, re.M), block
