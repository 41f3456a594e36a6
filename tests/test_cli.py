"""The command line: run → plot on a small config, `list`, and one-line errors with exit status 2."""

from __future__ import annotations

import yaml
from typer.testing import CliRunner

from dpbench.cli import app

runner = CliRunner()


def write_config(tmp_path, config) -> str:
    path = tmp_path / "config.yaml"
    path.write_text(yaml.safe_dump(config))
    return str(path)


def test_run_then_plot(small_config, tmp_path):
    path = write_config(tmp_path, small_config)
    result = runner.invoke(app, ["run", path, "--no-progress", "-j", "1"])
    assert result.exit_code == 0, result.output
    run_dir = tmp_path / "results" / "smoke"
    assert (run_dir / "trials.csv").is_file()
    result = runner.invoke(app, ["plot", str(tmp_path / "results")])
    assert result.exit_code == 0, result.output
    assert (run_dir / "figure_train_mse.png").stat().st_size > 10_000
    assert (run_dir / "figure_train_mse.pdf").is_file()


def test_list_shows_mechanisms_and_datasets():
    result = runner.invoke(app, ["list"])
    assert result.exit_code == 0
    for name in ("ihm", "linmix", "adassp", "dpgd", "ols", "crime", "pol", "sphere_linear"):
        assert name in result.output


def test_bad_config_is_one_line_naming_the_field(small_config, tmp_path):
    small_config["epsilons"] = [0.5, -1.0]
    result = runner.invoke(app, ["run", write_config(tmp_path, small_config)])
    assert result.exit_code == 2
    assert "epsilons[1]" in result.output and "Traceback" not in result.output


def test_bad_backend_and_missing_paths(small_config, tmp_path):
    result = runner.invoke(app, ["run", write_config(tmp_path, small_config), "--backend", "bogus"])
    assert result.exit_code == 2 and "backend" in result.output
    result = runner.invoke(app, ["run", str(tmp_path / "nope.yaml")])
    assert result.exit_code == 2 and "nope.yaml" in result.output
    result = runner.invoke(app, ["plot", str(tmp_path / "empty")])
    assert result.exit_code == 2 and "error:" in result.output


def test_python_dash_m_dpbench_runs_the_cli() -> None:
    """``python -m dpbench --help`` lists the commands (the module entry point is the console script's app)."""
    import subprocess
    import sys

    out = subprocess.run([sys.executable, "-m", "dpbench", "--help"], capture_output=True, text=True, check=False)
    assert out.returncode == 0, out.stderr
    assert "run" in out.stdout and "plot" in out.stdout
