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


def test_version_and_short_help() -> None:
    from dpbench import __version__

    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0 and result.output.strip() == f"dpbench {__version__}"
    result = runner.invoke(app, ["-h"])
    assert result.exit_code == 0 and "run" in result.output and "plot" in result.output
    result = runner.invoke(app, ["run", "-h"])
    assert result.exit_code == 0 and "--trials" in result.output


def test_misspelt_names_get_a_suggestion_and_no_long_list(small_config, tmp_path):
    """A typo gets "did you mean …?"; a long list of names is left to ``dpbench list`` (never a 784-char line)."""
    cases = [
        ({"mechanisms": ["adasp"]}, "mechanisms[0].mechanism", "'adassp'"),
        ({"epsilon": [1.0]}, "config field 'epsilon'", "'epsilons'"),
        ({"mechanisms": [{"mechanism": "ihm", "hyper": {"TT": 2}}]}, "mechanisms[0].hyper.TT", "'T'"),
        ({"datasets": [{"loader": "sphere_linear", "options": {"d": 3, "nn": 500}}]}, "options.nn", "'n'"),
        ({"datasets": [{"loader": "sphere_lienar", "options": {"d": 3}}]}, "datasets[0].loader", "'sphere_linear'"),
    ]
    for change, field, suggestion in cases:
        config = {**small_config, **change}
        result = runner.invoke(app, ["run", write_config(tmp_path, config)])
        assert result.exit_code == 2, result.output
        line = result.output.strip()
        assert field in line and f"did you mean {suggestion}" in line, line
        assert len(line) < 250 and "\n" not in line, line
    result = runner.invoke(app, ["analyze", "tabel2"])
    assert result.exit_code == 2 and "did you mean 'table2'?" in result.output


def test_plot_flag_errors_name_the_flag(small_config, tmp_path):
    runner.invoke(app, ["run", write_config(tmp_path, small_config), "--no-progress", "-j", "1"])
    result = runner.invoke(app, ["plot", str(tmp_path / "results"), "--stat", "mode"])
    assert result.exit_code == 2
    assert "--stat" in result.output and "config field" not in result.output and "'mean', 'median'" in result.output
    result = runner.invoke(app, ["plot", str(tmp_path / "results"), "--interval", "boot"])
    assert result.exit_code == 2 and "--interval" in result.output and "config field" not in result.output


def test_a_folder_given_to_run_is_named_as_a_folder(tmp_path):
    result = runner.invoke(app, ["run", str(tmp_path)])
    assert result.exit_code == 2
    assert "is a folder, not a config file" in result.output and "not found" not in result.output


def test_list_configs_shows_title_and_trial_count(small_config, tmp_path):
    folder = tmp_path / "mine"
    folder.mkdir()
    (folder / "a.yaml").write_text(yaml.safe_dump({**small_config, "title": "My first figure"}))
    (folder / "b.yaml").write_text(yaml.safe_dump({**small_config, "mechanisms": ["adasp"]}))
    result = runner.invoke(app, ["list", "configs", str(folder)])
    assert result.exit_code == 0, result.output
    n = len(small_config["datasets"]) * len(small_config["mechanisms"]) * len(small_config["epsilons"])
    head, a_line, b_line = result.output.strip().splitlines()
    assert head.startswith(f"configs in {folder}") and a_line.startswith("a ")  # names, as `dpbench run` takes them
    assert "My first figure" in a_line and f"= {n * small_config['trials']:,} trials" in a_line
    assert "invalid" in b_line and "did you mean 'adassp'" in b_line
    result = runner.invoke(app, ["list", "configs"])  # the repository's own configs all parse
    assert result.exit_code == 0 and "Figure 1 (IHM paper)" in result.output
    assert [line for line in result.output.splitlines() if "invalid" in line and "unavailable" not in line] == []


def test_list_topics_and_parameters():
    result = runner.invoke(app, ["list", "mechanisms", "ihm"])
    assert result.exit_code == 0 and "T" in result.output and "sketch" in result.output
    assert "one of 'gram', 'explicit' (default 'gram') — " in result.output  # in words, not a dataclass repr
    result = runner.invoke(app, ["list", "keys"])
    assert result.exit_code == 0 and "epsilons" in result.output and "interval" in result.output
    result = runner.invoke(app, ["list", "mechanism"])
    assert result.exit_code == 2 and "did you mean 'mechanisms'" in result.output


def test_datasets_listing_says_what_is_missing_in_words(monkeypatch):
    """``dpbench datasets`` never leaks an exception's name ("needs options (ValueError)")."""
    from dpbench import registry

    registry.discover()
    keep = {name: registry.DATASETS[name] for name in ("csv", "tecator", "sphere_linear")}
    monkeypatch.setattr(registry, "DATASETS", keep)
    result = runner.invoke(app, ["datasets"])
    assert result.exit_code == 0, result.output
    lines = {line.split()[0]: line for line in result.output.splitlines() if line.strip()}
    assert "Error" not in result.output
    assert "your data: needs options" in lines["csv"] and "n=192" in lines["tecator"]
    assert "dpbench list datasets csv" in result.output


def test_plot_columns_and_metrics_get_suggestions(small_config, tmp_path):
    runner.invoke(app, ["run", write_config(tmp_path, small_config), "--no-progress", "-j", "1"])
    for flag, wrong, right in (
        ("--x", "epsilom", "'epsilon'"),
        ("--metric", "trian_mse", "'train_mse'"),
        ("--hue", "lable", "'label'"),
    ):
        result = runner.invoke(app, ["plot", str(tmp_path / "results"), flag, wrong])
        assert result.exit_code == 2 and f"did you mean {right}" in result.output, result.output
        assert len(result.output.strip()) < 250
