"""What a new user meets on the command line (issue 39): nothing silent (clipping, units, noise-dominated results,
workers and privacy profile said), nothing confusing (filters by name, configs by name, one-line errors for folders
that cannot be written and for the usual mistakes)."""

from __future__ import annotations

import errno
import os
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from dpbench.cli import app

runner = CliRunner()


@pytest.fixture
def study(tmp_path):
    """A CSV with one absurd row (clipped by the declared bounds) and a config running it, written in tmp_path."""
    rng = np.random.default_rng(3)
    n = 400
    frame = pd.DataFrame({"a": rng.uniform(0, 5, n), "b": rng.uniform(0, 5, n)})
    frame["y"] = frame["a"] - 2 * frame["b"] + rng.normal(0, 0.5, n)
    frame.loc[:19, "a"] = 1000.0  # 20 typos: most land in the training split and are clipped
    frame.to_csv(tmp_path / "data.csv", index=False)
    config = {
        "name": "newcomer",
        "output_dir": str(tmp_path / "results"),
        "trials": 3,
        "epsilons": [0.5, 4.0],
        "datasets": [
            {
                "loader": "csv",
                "options": {"path": "data.csv", "target": "y", "bounds": "declared", "x_bound": 8, "y_bound": 15},
            }
        ],
        "mechanisms": ["ols", {"mechanism": "adassp", "label": "AdaSSP [Wang '18]"}],
    }
    path = tmp_path / "study.yaml"
    path.write_text(yaml.safe_dump(config))
    return path, config


def run_study(path: Path, *args: str):
    result = runner.invoke(app, ["run", str(path), "--no-progress", "-j", "1", *args])
    assert result.exit_code == 0, result.output
    return result


# ------------------------------------------------------------------------------------------------------------
# item 1–2: clipping, units and noise said on the console and in the report


def test_run_says_workers_privacy_clipping_and_units(study, tmp_path):
    path, _ = study
    out = run_study(path).output
    assert "workers: 1 — from -j" in out and "privacy profile: paper (" in out
    assert "note: Clipped: data:" in out and "training rows clipped to the declared feature bounds" in out
    assert "(y / y_bound)²" in out
    report = runner.invoke(app, ["report", str(tmp_path / "results" / "newcomer"), "--no-analyses"])
    assert report.exit_code == 0, report.output
    text = (tmp_path / "results" / "newcomer" / "report.md").read_text()
    assert "**Note**: Clipped: data:" in text and "(y / y_bound)²" in text


def test_a_config_without_n_jobs_says_it_runs_serially(study):
    path, _ = study
    out = runner.invoke(app, ["run", str(path), "--no-progress"]).output
    assert "workers: 1 — n_jobs from the config (default 1: serial); -j -1 uses every core" in out


def test_clip_error_refuses_rows_beyond_the_bounds_in_one_line(study):
    path, config = study
    config["datasets"][0]["options"]["clip"] = "error"
    path.write_text(yaml.safe_dump(config))
    result = runner.invoke(app, ["run", str(path), "--no-progress", "-j", "1"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    (line,) = [m for m in result.output.splitlines() if m.startswith("error:")]
    assert "datasets[0]" in line and "clip: error" in line and "training rows lie beyond" in line
    config["datasets"][0]["options"]["clip"] = "refuse"
    path.write_text(yaml.safe_dump(config))
    result = runner.invoke(app, ["run", str(path), "--no-progress", "-j", "1"])
    assert result.exit_code == 2 and "Traceback" not in result.output
    # the loader's options table refuses the value, naming the config field and the allowed values
    assert "config field 'datasets[0].options.clip': must be one of 'clip', 'error', got 'refuse'" in result.output


# ------------------------------------------------------------------------------------------------------------
# item 3: folders that cannot be written; output folders relative to where the user is


def test_writing_commands_take_an_output_folder_relative_to_the_current_folder(study, tmp_path, monkeypatch):
    path, _ = study
    run_study(path)
    run_dir = tmp_path / "results" / "newcomer"
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["plot", str(run_dir), "--out-dir", "figs", "--interval", "bootstrap"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "figs" / "figure_train_mse.png").is_file() and not (run_dir / "figure_train_mse.png").exists()
    result = runner.invoke(app, ["plot", str(run_dir), "--metric", "test_mse", "--out", "mine/test"])
    assert result.exit_code == 0 and (tmp_path / "mine" / "test.png").is_file(), result.output
    result = runner.invoke(app, ["report", str(run_dir), "--no-analyses", "--out-dir", "rep"])
    assert result.exit_code == 0 and (tmp_path / "rep" / "report.html").is_file(), result.output
    assert not (run_dir / "report.md").exists()


@pytest.mark.parametrize("command", ["plot", "report", "leaderboard"])
def test_an_output_folder_under_a_file_is_one_line(study, tmp_path, command):
    path, _ = study
    run_study(path)
    blocker = tmp_path / "a_file"
    blocker.write_text("")
    result = runner.invoke(app, [command, str(tmp_path / "results"), "--out-dir", str(blocker / "sub")])
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    (line,) = result.output.strip().splitlines()
    assert line.startswith("error: cannot write in") and "write elsewhere with --out-dir DIR" in line


@pytest.mark.parametrize("command", ["plot", "report", "leaderboard"])
def test_a_refused_write_names_the_folder_not_the_temporary_file(study, tmp_path, monkeypatch, command):
    """A write the system refuses (a read-only run folder; simulated, since root may write anywhere) is one line."""
    import dpbench.io.atomic as base

    path, _ = study
    run_study(path)
    real = base.replace_atomically

    def refuse(target):
        raise PermissionError(errno.EACCES, "Permission denied", str(Path(target).parent / f".{target.name}.9.tmp"))

    monkeypatch.setattr(base, "replace_atomically", refuse)
    result = runner.invoke(app, [command, str(tmp_path / "results" / "newcomer")])
    monkeypatch.setattr(base, "replace_atomically", real)
    assert result.exit_code == 2 and "Traceback" not in result.output, result.output
    (line,) = result.output.strip().splitlines()
    assert ".tmp" not in line and "Permission denied" in line and "--out-dir DIR" in line


@pytest.mark.skipif(os.geteuid() == 0, reason="root writes into a read-only folder: chmod cannot block it")
def test_a_read_only_run_folder_is_one_line(study, tmp_path):
    path, _ = study
    run_study(path)
    run_dir = tmp_path / "results" / "newcomer"
    run_dir.chmod(0o555)
    try:
        result = runner.invoke(app, ["plot", str(run_dir)])
    finally:
        run_dir.chmod(0o755)
    assert result.exit_code == 2 and result.output.startswith("error: cannot write in")


# ------------------------------------------------------------------------------------------------------------
# item 4–5: shipped configs by name; filters by name or label, ε as printed


def test_a_shipped_config_runs_by_name_from_any_folder(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    result = runner.invoke(app, ["run", "ihm_vs_adassp", "--dry-run", "-d", "solar", "-m", "ihm", "-e", "0.251189"])
    assert result.exit_code == 0, result.output
    (row,) = [line for line in result.output.splitlines() if line.startswith("Solar")]
    assert "IHM (ours), T=3" in row and "0.251189" in row and "500" in row
    assert "total: 500 trials" in result.output and not (tmp_path / "results").exists()
    listing = runner.invoke(app, ["list", "configs"])
    assert listing.exit_code == 0 and "\nihm_vs_adassp " in listing.output


def test_filters_list_names_and_labels_when_nothing_matches():
    result = runner.invoke(app, ["run", "ihm_vs_adassp", "--dry-run", "-m", "lasso"])
    assert result.exit_code == 2
    assert "AdaSSP [Wang '18] (adassp)" in result.output and "Traceback" not in result.output


# ------------------------------------------------------------------------------------------------------------
# item 8: flags


def test_plot_takes_resamples_and_seed_and_the_app_offers_completion(study, tmp_path):
    path, _ = study
    run_study(path)
    run_dir = str(tmp_path / "results" / "newcomer")
    args = ["plot", run_dir, "--interval", "bootstrap", "--resamples", "200", "--seed", "5", "--out", "boot"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert (tmp_path / "results" / "newcomer" / "boot.png").is_file()
    result = runner.invoke(app, ["plot", run_dir, "--resamples", "0"])
    assert result.exit_code == 2 and "--resamples" in result.output
    assert "--install-completion" in runner.invoke(app, ["--help"]).output


@pytest.mark.parametrize("jobs", ["0", "-5"])
def test_bad_n_jobs_is_one_line(study, jobs):
    path, _ = study
    result = runner.invoke(app, ["run", str(path), "-j", jobs])
    assert result.exit_code == 2
    assert result.output.strip() == f"error: --n-jobs must be a positive integer or -1 (all cores), got {jobs}"


# ------------------------------------------------------------------------------------------------------------
# item 9: one clear line each


def test_a_csv_given_as_the_config_says_what_a_config_is(study, tmp_path):
    result = runner.invoke(app, ["run", str(tmp_path / "data.csv")])
    assert result.exit_code == 2 and "is a data file, not a config" in result.output and "loader: csv" in result.output


def test_an_import_error_keeps_its_quotes(tmp_path, small_config):
    small_config["mechanisms"] = ["no_such_module_xyz:fit"]
    path = tmp_path / "c.yaml"
    path.write_text(yaml.safe_dump(small_config))
    result = runner.invoke(app, ["run", str(path)])
    assert result.exit_code == 2 and "No module named 'no_such_module_xyz'" in result.output


def test_an_analysis_that_reads_no_run_refuses_one(tmp_path):
    result = runner.invoke(app, ["analyze", "table2", str(tmp_path)])
    assert result.exit_code == 2 and "reads no run" in result.output
