"""End-to-end: a tiny Stein config through the runner, the generic `dpbench plot` with the Stein preset (styles,
baseline, bootstrap medians, slopes) and the `stein_table66` analysis."""

from __future__ import annotations

import pandas as pd
import pytest
from typer.testing import CliRunner

from dpbench.cli import app
from dpbench.config import parse_config
from dpbench.engine import run
from dpbench.papers.stein.analyses import table_66

CONFIG = {
    "name": "stein_tiny",
    "title": "tiny",
    "caption": "test",
    "seed": 1,
    "trials": 2,
    "epsilons": [4, 20],
    "delta": "1/n^1.1",
    "metrics": ["stein_err2", "stein_errinf"],
    "datasets": [
        {
            "loader": "stein_synthetic",
            "label": "p = 3",
            "options": {"covariates": "gauss_diag", "family": "logistic", "p": 3},
            "grid": {"n": [2000, 4000]},
        }
    ],
    "mechanisms": [
        {"mechanism": "stein_glm_gauss", "label": "Alg 1 (LDP)"},
        {"mechanism": "stein_central_diagnostic", "label": "DIAGNOSTIC central"},
        {"mechanism": "stein_nonprivate", "label": "non-private Stein"},
    ],
    "plot": {"metric": "stein_err2", "x": "data.n", "hue": "epsilon", "logy": True},
}
#: the figure preset of configs/stein/*.yaml
PRESET = {
    "metric": "stein_err2",
    "x": "data.n",
    "hue": "epsilon",
    "style": "label",
    "stat": "median",
    "interval": "bootstrap",
    "baseline": {"privacy_model": "none"},
    "logy": True,
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


def test_preset_draws_baseline_once_and_styles_the_diagnostic(tiny_run):
    """The Stein preset: colour = ε, line style = mechanism (DIAGNOSTIC dotted as registered), the non-private
    baseline once (it ignores ε), medians with seeded bootstrap CIs (the same bands on every redraw)."""
    from dpbench.analysis.figures.curves import render

    drawing = render(tiny_run, **PRESET)
    (ax,) = drawing.figure.axes
    lines = {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}
    assert set(lines) == {
        "Alg 1 (LDP), ε=4",
        "Alg 1 (LDP), ε=20",
        "DIAGNOSTIC central, ε=4",
        "DIAGNOSTIC central, ε=20",
        "non-private Stein",
    }
    assert lines["DIAGNOSTIC central, ε=4"].get_linestyle() == ":" and lines["Alg 1 (LDP), ε=4"].get_linestyle() == "-"
    assert lines["Alg 1 (LDP), ε=4"].get_color() == lines["DIAGNOSTIC central, ε=4"].get_color()
    assert lines["non-private Stein"].get_linestyle() == "--"
    trials = pd.read_csv(tiny_run / "trials.csv")
    ldp = trials[(trials.label == "Alg 1 (LDP)") & (trials.epsilon == 4) & (trials["data.n"] == 2000)]
    point = drawing.points[(drawing.points.curve == "Alg 1 (LDP), ε=4") & (drawing.points["data.n"] == 2000)]
    assert point["centre"].iloc[0] == pytest.approx(ldp["stein_err2"].median())
    assert point["lo"].iloc[0] <= point["centre"].iloc[0] <= point["hi"].iloc[0]
    again = render(tiny_run, **PRESET).points
    pd.testing.assert_frame_equal(drawing.points, again)


def test_fit_slopes_per_curve(tiny_run):
    from dpbench.analysis.figures.curves import render

    drawing = render(tiny_run, **{**PRESET, "x": "epsilon", "hue": "data.n", "fit": True, "fit_draw": True})
    slopes = drawing.slopes
    assert len(slopes) == 4 and slopes["slope"].notna().all()  # 2 private labels × 2 n values; no baseline
    assert (slopes["lo"] <= slopes["slope"]).all() and (slopes["slope"] <= slopes["hi"]).all()


def test_cli_plot_and_table_analysis(tiny_run):
    result = CliRunner().invoke(app, ["plot", str(tiny_run)])
    assert result.exit_code == 0, result.output
    assert (tiny_run / "figure_stein_err2_vs_data_n.png").stat().st_size > 10_000
    result = CliRunner().invoke(
        app,
        ["plot", str(tiny_run), "--x", "epsilon", "--hue", "data.n", "--fit", "--stat", "mean", "--interval", "normal"],
    )
    assert result.exit_code == 0 and "slope" in result.output, result.output
    assert (tiny_run / "figure_stein_err2_slopes.csv").is_file()
    bad = CliRunner().invoke(app, ["plot", str(tiny_run), "--metric", "nope"])
    assert bad.exit_code == 2 and "unknown metric 'nope'" in bad.output
    bad = CliRunner().invoke(app, ["plot", str(tiny_run), "--stat", "mode"])
    assert bad.exit_code == 2 and "--stat" in bad.output
    table = CliRunner().invoke(app, ["analyze", "stein_table66", str(tiny_run)])
    assert table.exit_code == 0 and "| p | n |" in table.output and (tiny_run / "table66.md").is_file()


def test_table66_formatting():
    rows = []
    for p, n in ((10, 100_000), (10, 300_000), (10, 700_000), (20, 700_000)):
        for label in ("literal", "central", "non-private Stein"):
            for eps in (4.0, 10.0, 20.0):
                rows.append({"dataset": f"p = {p}", "n": n, "label": label, "epsilon": eps, "stein_err2": 0.5})
    text = table_66(pd.DataFrame(rows))
    assert text.count("\n") == 5 and "0.5 / 1.29" in text and "0.5 / ≈0.002" in text
