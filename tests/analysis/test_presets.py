"""The generic figure: statistics (mean | median, normal | seeded bootstrap), slope fits with CIs, the preset options
(where, pool, baseline, row, style, hlines, tag_models), presets from plot:/plots:, the config schema and the CLI."""

from __future__ import annotations

import json
import math

import numpy as np
import pandas as pd
import pytest
import yaml
from typer.testing import CliRunner

from dpbench import registry
from dpbench.analysis.figures.curves import render
from dpbench.analysis.figures.presets import presets
from dpbench.analysis.runs import load_run
from dpbench.analysis.stats import MEDIAN_SE_FACTOR, fit_slopes, summarise
from dpbench.cli import app
from dpbench.config import ConfigError, parse_config

SLOPE = -1.0  # every curve of the toy run: value ∝ c·x^SLOPE


def toy_trials(trials: int = 40, seed: int = 0) -> pd.DataFrame:
    """Two datasets × (two private labels + one non-private) × x ∈ {1, 2, 4, 8} × two replicates × ``trials``;
    value = c·x^SLOPE·lognormal noise (σ = 0.2)."""
    rng = np.random.default_rng(seed)
    rows = []
    labels = {"Fast": ("fast", "central", 1.0), "Slow": ("slow", "local", 3.0), "Exact": ("exact", "none", 0.1)}
    for ds in ("A", "B"):
        for label, (mech, model, c) in labels.items():
            for i, eps in enumerate((1.0, 2.0, 4.0, 8.0)):
                for rep in (0, 1):
                    for t in range(trials):
                        rows.append(
                            {
                                "dataset": ds,
                                "dataset_id": ds,
                                "mechanism": mech,
                                "label": label,
                                "privacy_model": model,
                                "epsilon_index": i,
                                "epsilon": eps,
                                "data.replicate": rep,
                                "trial": t,
                                "n": 100,
                                "d": 3,
                                "err": c * eps**SLOPE * math.exp(0.2 * rng.standard_normal()),
                            }
                        )
    return pd.DataFrame(rows)


def write_run(folder, trials: pd.DataFrame, plot=None, plots=None, analyses=None):
    folder.mkdir(parents=True, exist_ok=True)
    trials.to_csv(folder / "trials.csv", index=False)
    (folder / "datasets.json").write_text(json.dumps({}))
    config = {
        "name": folder.name,
        "title": "Toy",
        "caption": "",
        "mechanisms": [{"mechanism": "fast", "label": "Fast"}, {"mechanism": "slow", "label": "Slow"}],
    }
    if plot is not None:
        config["plot"] = plot
    if plots is not None:
        config["plots"] = plots
    if analyses is not None:
        config["analyses"] = analyses
    (folder / "config.yaml").write_text(yaml.safe_dump(config, allow_unicode=True, sort_keys=False))
    return folder


@pytest.fixture
def toy_run(tmp_path):
    return write_run(tmp_path / "toy", toy_trials(), plot={"metric": "err", "pool": ["data.replicate"]})


def visible_lines(ax):
    return {line.get_label(): line for line in ax.get_lines() if not line.get_label().startswith("_")}


# ---------------------------------------------------------------------------------------------------------------
# statistics


def test_summarise_mean_and_median_normal_intervals_match_hand_computation():
    values = np.array([1.0, 2.0, 4.0, 7.0, 11.0])
    frame = pd.DataFrame({"g": "a", "v": values})
    mean = summarise(frame, "v", ["g"], stat="mean", interval="normal").iloc[0]
    se = values.std() / math.sqrt(5)
    assert mean["centre"] == pytest.approx(5.0) and mean["se"] == pytest.approx(se)
    assert (mean["lo"], mean["hi"]) == pytest.approx((5.0 - 1.96 * se, 5.0 + 1.96 * se))
    median = summarise(frame, "v", ["g"], stat="median", interval="normal").iloc[0]
    assert median["centre"] == 4.0 and median["se"] == pytest.approx(MEDIAN_SE_FACTOR * se)
    none = summarise(frame, "v", ["g"], stat="median", interval="none").iloc[0]
    assert none["lo"] == none["hi"] == 4.0
    with pytest.raises(ValueError, match="stat"):
        summarise(frame, "v", ["g"], stat="mode")


def test_bootstrap_interval_is_seeded_per_group_and_close_to_normal_for_normal_data():
    rng = np.random.default_rng(1)
    frame = pd.DataFrame({"g": np.repeat(["a", "b"], 400), "v": rng.normal(10.0, 2.0, 800)})
    boot = summarise(frame, "v", ["g"], interval="bootstrap", seed=3)
    again = summarise(frame, "v", ["g"], interval="bootstrap", seed=3)
    np.testing.assert_array_equal(boot[["lo", "hi"]], again[["lo", "hi"]])
    other = summarise(frame, "v", ["g"], interval="bootstrap", seed=4)
    assert not np.array_equal(boot[["lo", "hi"]], other[["lo", "hi"]])
    # a group's band does not depend on the other groups (seeded from its own key)
    alone = summarise(frame[frame.g == "b"], "v", ["g"], interval="bootstrap", seed=3)
    assert alone[["lo", "hi"]].to_numpy() == pytest.approx(boot[boot.g == "b"][["lo", "hi"]].to_numpy())
    normal = summarise(frame, "v", ["g"], interval="normal")
    width_boot, width_normal = boot["hi"] - boot["lo"], normal["hi"] - normal["lo"]
    assert ((width_boot / width_normal).between(0.85, 1.15)).all()
    assert ((boot["lo"] < boot["centre"]) & (boot["centre"] < boot["hi"])).all()


def test_fit_slopes_exact_power_law_and_delta_method_interval():
    xs = np.array([1.0, 2.0, 4.0, 8.0])
    points = pd.DataFrame({"c": "a", "x": xs, "centre": 3.0 * xs**-2.0, "se": 0.1 * 3.0 * xs**-2.0, "count": 10})
    fit = fit_slopes(points, "x", ["c"]).iloc[0]
    assert fit["slope"] == pytest.approx(-2.0) and math.exp(fit["intercept"]) == pytest.approx(3.0)
    u = np.log(xs) - np.log(xs).mean()
    half = 1.96 * math.sqrt(np.sum((u / (u @ u)) ** 2 * 0.1**2))  # relative se 0.1 at every point
    assert (fit["lo"], fit["hi"]) == pytest.approx((-2.0 - half, -2.0 + half))
    ranged = fit_slopes(points, "x", ["c"], xmin=2.0, xmax=4.0).iloc[0]
    assert ranged["points"] == 2 and (ranged["x_min"], ranged["x_max"]) == (2.0, 4.0)
    single = fit_slopes(points.assign(count=1), "x", ["c"]).iloc[0]
    assert single["slope"] == pytest.approx(-2.0) and math.isnan(single["lo"])  # one trial per point: no CI


def test_bootstrap_slope_interval_covers_the_true_slope(toy_run):
    drawing = render(toy_run, metric="err", stat="median", interval="bootstrap", fit=True, pool=["data.replicate"])
    slopes = drawing.slopes
    private = slopes[slopes["curve"] != "Exact"]
    assert len(slopes) == 6  # 2 datasets × 3 labels (no baseline declared)
    assert ((private["lo"] <= SLOPE) & (SLOPE <= private["hi"])).all()
    assert ((private["hi"] - private["lo"]) < 0.2).all()
    again = render(toy_run, metric="err", stat="median", interval="bootstrap", fit=True, pool=["data.replicate"])
    pd.testing.assert_frame_equal(slopes, again.slopes)


# ---------------------------------------------------------------------------------------------------------------
# preset options


def test_pool_merges_replicates_and_otherwise_they_split_curves(toy_run):
    pooled = render(toy_run, metric="err", pool=["data.replicate"])
    assert set(visible_lines(pooled.figure.axes[0])) == {"Fast", "Slow", "Exact"}
    assert pooled.points["count"].eq(80).all()
    split = render(toy_run, metric="err")
    assert "Fast, replicate=0" in visible_lines(split.figure.axes[0])
    assert "pooled over replicate" in " ".join(t.get_text() for t in pooled.figure.texts)


def test_where_baseline_style_hlines_and_model_tags(toy_run):
    drawing = render(
        toy_run,
        metric="err",
        pool=["data.replicate"],
        where={"dataset": ["A"]},
        baseline={"privacy_model": ["none"]},
        style="label",
        hue="label",
        hlines=[{"y": 0.5, "label": "target"}],
        tag_models=True,
    )
    (ax,) = drawing.figure.axes
    lines = visible_lines(ax)
    assert set(lines) == {"Fast [central]", "Slow [local]", "Exact [non-private]", "target"}
    assert lines["Exact [non-private]"].get_linestyle() == "--"
    assert lines["Exact [non-private]"].get_color() in ("black", "dimgray", "darkgrey", "silver")
    assert drawing.points["baseline"].sum() == 4 and not drawing.points.loc[drawing.points["baseline"], "private"].any()
    with pytest.raises(ValueError, match="leaves no rows"):
        render(toy_run, metric="err", where={"dataset": ["Z"]})
    with pytest.raises(ValueError, match="where: unknown column 'nope'"):
        render(toy_run, metric="err", where={"nope": [1]})


def test_numeric_hue_gets_a_sequential_map_and_baseline_ignores_it(toy_run):
    drawing = render(
        toy_run, metric="err", x="data.replicate", hue="epsilon", logx=False, baseline={"privacy_model": "none"}
    )
    lines = visible_lines(drawing.figure.axes[0])
    assert "Exact" in lines and not any(name.startswith("Exact,") for name in lines)  # drawn once, not per ε
    colours = [tuple(lines[f"Fast, ε={e}"].get_color()) for e in ("1", "8")]
    assert colours[0] != colours[1]


def test_row_grid_draws_baselines_in_every_panel_of_their_row(tmp_path):
    trials = toy_trials(trials=5)
    folder = write_run(tmp_path / "grid", trials)
    drawing = render(
        folder,
        metric="err",
        row="dataset",
        panel="label",
        hue="epsilon",
        x="data.replicate",
        logx=False,
        baseline={"privacy_model": "none"},
    )
    axes = drawing.figure.axes
    assert len(axes) == 4  # 2 datasets × 2 private labels; the baseline has no panel of its own
    for ax in axes:
        assert "Exact" in visible_lines(ax)
    assert axes[0].get_title().splitlines()[:2] == ["A", "Fast"]


def test_ref_slopes_draw_a_power_law_through_the_first_point_of_the_named_curves(toy_run):
    drawing = render(
        toy_run,
        metric="err",
        pool=["data.replicate"],
        where={"dataset": ["A"]},
        logy=True,
        baseline={"privacy_model": "none"},
        ref_slopes=[{"slope": -0.5, "label": "∝ 1/√ε", "through": "Slow"}],
    )
    (ax,) = drawing.figure.axes
    refs = [line for line in ax.get_lines() if line.get_label() == "∝ 1/√ε"]
    assert len(refs) == 1 and refs[0].get_color() == "grey"
    xs, ys = refs[0].get_data()
    first = drawing.points[drawing.points["curve"] == "Slow"].sort_values("epsilon").iloc[0]
    assert xs[0] == pytest.approx(first["epsilon"]) and ys[0] == pytest.approx(first["centre"])
    assert np.log(ys[-1] / ys[0]) / np.log(xs[-1] / xs[0]) == pytest.approx(-0.5)
    everywhere = render(
        toy_run,
        metric="err",
        pool=["data.replicate"],
        where={"dataset": ["A"]},
        baseline={"privacy_model": "none"},
        ref_slopes=[{"slope": -1}],
    )
    assert sum(line.get_label() == "slope -1" for line in everywhere.figure.axes[0].get_lines()) == 2  # not Exact
    with pytest.raises(ValueError, match=r"ref_slopes\[0\]\.slope"):
        render(toy_run, metric="err", ref_slopes=[{"slope": "steep"}])


def test_unknown_option_and_bad_values_name_the_option(toy_run):
    with pytest.raises(ValueError, match="unknown plot option.*colour"):
        render(toy_run, metric="err", colour="red")
    with pytest.raises(ValueError, match="plot.interval"):
        render(toy_run, metric="err", interval="wide")
    with pytest.raises(ValueError, match="annotate='nope'"):
        render(toy_run, metric="err", annotate="nope")


# ---------------------------------------------------------------------------------------------------------------
# presets, config schema, CLI


def test_presets_merge_plot_under_plots_and_expand_metrics(tmp_path):
    folder = write_run(
        tmp_path / "p",
        toy_trials(trials=3),
        plot={"logy": True, "metric": "err"},
        plots={"main": {"stat": "median"}, "both": {"metrics": ["err", "trial"]}},
    )
    run = load_run(folder)
    got = presets(run)
    assert [stem for stem, _ in got] == ["figure_main", "figure_both_err", "figure_both_trial"]
    assert got[0][1]["logy"] is True and got[0][1]["stat"] == "median"
    adhoc = presets(run, {"metric": "err", "x": "data.replicate"})
    assert [stem for stem, _ in adhoc] == ["figure_err_vs_data_replicate"] and adhoc[0][1]["logy"] is True
    only = presets(run, {"interval": "none"}, only="main")
    assert only == [
        ("figure_main", {"logy": True, "metric": "err", "stat": "median", "interval": "none", "out": "figure_main"})
    ]
    with pytest.raises(ValueError, match="no figure preset 'nope'.*main, both"):
        presets(run, only="nope")


def test_config_validates_plot_plots_and_analyses(small_config):
    good = parse_config(
        {
            **small_config,
            "plot": {"stat": "median", "hlines": [1, {"y": 2, "label": "two"}]},
            "plots": {"a": {"metric": "test_mse", "fit": True, "fit_min": 1}},
            "analyses": ["table2", {"name": "iwr_ratio", "options": {"by": ["data.n"]}}],
        }
    )
    assert good.plot["hlines"] == [{"y": 1.0, "label": ""}, {"y": 2.0, "label": "two"}]
    assert good.analyses[1] == {"name": "iwr_ratio", "options": {"by": "data.n"}}
    plain = parse_config(small_config)
    assert good.fingerprint() == plain.fingerprint()  # presentation never blocks resuming a run
    for bad, field in (
        ({"plot": {"stat": "mode"}}, "plot.stat"),
        ({"plots": {"a": {"interval": "wide"}}}, "plots.a.interval"),
        ({"plots": {"a b": {}}}, "plots.a b"),
        ({"plot": {"fit_min": 4, "fit_max": 2}}, "plot.fit_min"),
        ({"plot": {"baseline": []}}, "plot.baseline"),
        ({"analyses": ["nope"]}, "analyses[0].name"),
        ({"analyses": [{"name": "table2", "opts": {}}]}, "analyses[0].opts"),
    ):
        with pytest.raises(ConfigError, match=field.replace(".", r"\.").replace("[", r"\[").replace("]", r"\]")):
            parse_config({**small_config, **bad})


def test_analysis_options_convert_to_the_defaults_types():
    defaults = {"n": 1, "x": 0.5, "flag": False, "names": [], "label": "a", "nmin": None}
    got = registry.analysis_options("t", {"n": "3", "x": "2", "flag": "yes", "names": "a, b", "nmin": "40"}, defaults)
    assert got == {"n": 3, "x": 2.0, "flag": True, "names": ["a", "b"], "label": "a", "nmin": 40.0}
    with pytest.raises(ValueError, match="unknown option.*zz"):
        registry.analysis_options("t", {"zz": "1"}, defaults)
    with pytest.raises(ValueError, match="n='x' is not a valid int"):
        registry.analysis_options("t", {"n": "x"}, defaults)


def test_cli_plot_presets_one_preset_and_analyze_listing(tmp_path):
    folder = write_run(
        tmp_path / "c",
        toy_trials(trials=3),
        plot={"metric": "err", "pool": ["data.replicate"]},
        plots={"mean": {}, "median": {"stat": "median", "fit": True}},
    )
    runner = CliRunner()
    result = runner.invoke(app, ["plot", str(folder)])
    assert result.exit_code == 0, result.output
    assert (folder / "figure_mean.png").is_file() and (folder / "figure_median_slopes.csv").is_file()
    assert "log–log slopes of the median err" in result.output
    result = runner.invoke(app, ["plot", str(folder), "-p", "mean", "--interval", "bootstrap", "--out", "custom"])
    assert result.exit_code == 0 and (folder / "custom.png").is_file(), result.output
    result = runner.invoke(app, ["plot", str(folder), "--where", "label"])
    assert result.exit_code == 2 and "COLUMN=VALUE" in result.output
    listing = runner.invoke(app, ["analyze"])
    for name in (
        "table2",
        "iwr_e1",
        "iwr_ratio",
        "iwr_e5",
        "stein_table66",
        "ftrl_rates",
        "ftrl_diagnostics",
        "bandit_gap",
    ):
        assert name in listing.output


def test_report_lists_a_failing_analysis_and_keeps_going(tmp_path):
    from dpbench.analysis.report import write_report

    folder = write_run(
        tmp_path / "r",
        toy_trials(trials=3),
        plot={"metric": "err", "pool": ["data.replicate"]},
        analyses=[{"name": "iwr_e5", "options": {}}],
    )
    markdown = write_report(folder, html_page=False)[0].read_text()
    assert "## Analysis: iwr_e5" in markdown and "**failed**: iwr_e5:" in markdown and "## Config" in markdown


def test_baselines_sharing_a_registered_linestyle_get_distinct_dashes() -> None:
    """Two baseline labels registered with the same '--' (e.g. non-private Stein and least squares in one hue colour)
    are drawn with different patterns; each label keeps its pattern on every later curve (panels and legend agree)."""
    from dpbench.analysis.figures.styles import baseline_linestyles

    style_for = baseline_linestyles()
    first = style_for("non-private Stein", "--")
    second = style_for("non-private least squares", "--")
    assert first == "--"
    assert str(second) != str(first)
    assert style_for("non-private least squares", "--") == second
    assert style_for("non-private Stein", None) == first
