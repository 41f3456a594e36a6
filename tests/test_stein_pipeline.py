"""End-to-end: a tiny Stein config through the runner, `stein-plot` (styles, slopes) and `stein-table`."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from dpbench.cli import app
from dpbench.config import parse_config
from dpbench.engine import run
from dpbench.papers.stein.commands import fit_slopes, summarise, table_66

CONFIG = {
    "name": "stein_tiny",
    "title": "tiny",
    "caption": "test",
    "seed": 1,
    "trials": 2,
    "epsilons": [4, 20],
    "delta": "1/n^1.1",
    "metrics": ["stein_err2", "stein_errinf"],
    "datasets": [{"loader": "stein_synthetic", "label": "p = 3",
                  "options": {"covariates": "gauss_diag", "family": "logistic", "p": 3},
                  "grid": {"n": [2000, 4000]}}],
    "mechanisms": [
        {"mechanism": "stein_glm_gauss", "label": "Alg 1 (LDP)"},
        {"mechanism": "stein_central_diagnostic", "label": "DIAGNOSTIC central"},
        {"mechanism": "stein_nonprivate", "label": "non-private Stein"},
    ],
    "plot": {"metric": "stein_err2", "x": "data.n", "hue": "epsilon", "logy": True},
}


@pytest.fixture(scope="module")
def tiny_run(tmp_path_factory):
    out = tmp_path_factory.mktemp("runs")
    config = parse_config({**CONFIG, "output_dir": str(out)})
    return run(config, n_jobs=1, progress=False, log=lambda *a: None)


def test_run_records_ldp_columns(tiny_run):
    trials = pd.read_csv(tiny_run / "trials.csv")
    assert len(trials) == 2 * 3 * 2 * 2  # datasets × mechanisms × ε × trials
    assert set(trials["privacy_model"]) == {"local", "central", "none"}
    assert trials["info.root_status"].isin(["newton", "bracket", "no_root"]).all()
    assert (trials.loc[trials["privacy_model"] == "local", "info.noise_dominated"]).all()
    local = trials[trials["privacy_model"] == "local"]
    assert (local["info.s_xx"] > 0).all() and (local["info.noise_aggregation"] == "local").all()


def test_summary_collapses_nonprivate_and_labels_diagnostic(tiny_run):
    trials = pd.read_csv(tiny_run / "trials.csv")
    summary = summarise(trials, "stein_err2", "data.n", "epsilon", "median")
    curves = set(summary["curve"])
    assert "non-private Stein" in curves  # one curve, ε ignored
    assert {"Alg 1 (LDP), ε=4", "DIAGNOSTIC central, ε=20"} <= curves
    assert set(summary.loc[summary["curve"].str.startswith("DIAGNOSTIC"), "kind"]) == {"diagnostic"}
    by_eps = summarise(trials, "stein_err2", "epsilon", "data.n", "mean")
    slopes = fit_slopes(by_eps)
    assert len(slopes) == 4 and slopes["slope"].notna().all()  # 2 private labels × 2 n values


def test_cli_plot_and_table(tiny_run):
    result = CliRunner().invoke(app, ["stein-plot", str(tiny_run)])
    assert result.exit_code == 0, result.output
    assert (tiny_run / "stein_stein_err2_vs_data_n_median.png").stat().st_size > 10_000
    result = CliRunner().invoke(app, ["stein-plot", str(tiny_run), "--x", "epsilon", "--hue", "data.n",
                                      "--fit-slope", "--stat", "mean"])
    assert result.exit_code == 0 and "slope" in result.output
    bad = CliRunner().invoke(app, ["stein-plot", str(tiny_run), "--metric", "nope"])
    assert bad.exit_code == 2


def test_table66_formatting():
    rows = []
    for p, n in ((10, 100_000), (10, 300_000), (10, 700_000), (20, 700_000)):
        for label in ("literal", "central", "non-private Stein"):
            for eps in (4.0, 10.0, 20.0):
                rows.append({"dataset": f"p = {p}", "n": n, "label": label, "epsilon": eps, "stein_err2": 0.5})
    text = table_66(pd.DataFrame(rows))
    assert text.count("\n") == 5 and "0.5 / 1.29" in text and "0.5 / ≈0.002" in text
