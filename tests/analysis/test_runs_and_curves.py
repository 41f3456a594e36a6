"""Read side: results aggregation and figures, on a hand-written run folder (independent of the runner)."""

from __future__ import annotations

import json
import math
import warnings

import numpy as np
import pandas as pd
import pytest
import yaml

from dpbench.analysis.figures import styles as style_module
from dpbench.analysis.figures.curves import build_figure
from dpbench.analysis.figures.presets import plot_run
from dpbench.analysis.runs import find_runs, load_run, reference_lines
from dpbench.analysis.stats import fit_slopes, format_table, loglog_fit, summarise_metric, summary_table
from dpbench.config import ConfigError
from dpbench.config.presets import parse_plot_options

EPS = [0.1, 1.0, 10.0]
DATASETS = {
    "Alpha": {"label": "Alpha", "n": 100, "d": 3, "ols_train_mse": 0.01, "zero_train_mse": 0.2},
    "Beta": {"label": "Beta", "n": 50, "d": 2, "ols_train_mse": 0.05, "zero_train_mse": 0.3},
}
LABELS = {"IHM": "ihm", "AdaSSP": "adassp"}  # config order: IHM first


def trial_rows(n_trials: int = 4) -> pd.DataFrame:
    """train_mse = floor + c/ε + a deterministic spread (trial - 1.5)·0.001·c."""
    rows = []
    for ds, info in DATASETS.items():
        for label, mech in LABELS.items():
            c = 0.1 if label == "IHM" else 0.3
            for i, eps in enumerate(EPS):
                for t in range(n_trials):
                    value = info["ols_train_mse"] + c / eps + (t - 1.5) * 0.001 * c
                    rows.append(
                        {
                            "dataset": ds,
                            "dataset_id": ds,
                            "loader": ds.lower(),
                            "n": info["n"],
                            "d": info["d"],
                            "mechanism": mech,
                            "label": label,
                            "privacy_model": "central",
                            "neighbour": "zero_out",
                            "hp.T": 3 if label == "IHM" else np.nan,
                            "epsilon_index": i,
                            "epsilon": eps,
                            "delta": 1 / info["n"] ** 2,
                            "trial": t,
                            "train_mse": value,
                            "test_mse": value * 1.1,
                            "seconds": 0.001,
                        }
                    )
    return pd.DataFrame(rows)


def write_run(folder, trials: pd.DataFrame | None = None, skipped=None, config_extra=None):
    folder.mkdir(parents=True, exist_ok=True)
    (trials if trials is not None else trial_rows()).to_csv(folder / "trials.csv", index=False)
    (folder / "datasets.json").write_text(json.dumps(DATASETS))
    (folder / "skipped.json").write_text(json.dumps(skipped or {}))
    config = {
        "name": folder.name,
        "title": "Test figure",
        "caption": "A synthetic caption.",
        "mechanisms": [{"mechanism": m, "label": lab, "hyper": {}} for lab, m in LABELS.items()],
        "plot": {"metric": "train_mse", "x": "epsilon"},
        **(config_extra or {}),
    }
    (folder / "config.yaml").write_text(yaml.safe_dump(config, allow_unicode=True))
    (folder / "meta.json").write_text(json.dumps({"rows": 0}))
    return folder


@pytest.fixture(autouse=True)
def fake_styles(monkeypatch):
    """Do not import the mechanisms (they may be in flux): fixed registry styles for the two test mechanisms."""
    styles = {
        "ihm": {"color": "green", "marker": "D", "linestyle": "--"},
        "adassp": {"color": "tab:blue", "marker": "*", "linestyle": "-"},
    }
    monkeypatch.setattr(style_module, "mechanism_style", lambda name: dict(styles.get(name, {})))


@pytest.fixture
def run_dir(tmp_path):
    return write_run(tmp_path / "results" / "toy", skipped={"Gamma": "file gamma.csv not found"})


def curve_lines(ax):
    return [line for line in ax.get_lines() if not line.get_label().startswith("_")]


# ---------------------------------------------------------------------------------------------------------------
# results


KEYS = ["dataset", "label", "epsilon"]


def test_summary_matches_hand_computation(run_dir):
    run = load_run(run_dir)
    points = summarise_metric(run, "train_mse", KEYS)
    assert list(points.columns) == [*KEYS, "centre", "lo", "hi", "se", "count", "boot"]
    assert len(points) == 2 * 2 * 3
    # order: datasets and labels as they first appear, ε ascending
    assert list(points["dataset"].unique()) == ["Alpha", "Beta"]
    assert list(points.loc[points.dataset == "Alpha", "label"].unique()) == ["IHM", "AdaSSP"]
    row = points[(points.dataset == "Beta") & (points.label == "AdaSSP") & (points.epsilon == 1.0)].iloc[0]
    values = np.array([0.05 + 0.3 + (t - 1.5) * 0.0003 for t in range(4)])
    std = math.sqrt(np.mean((values - values.mean()) ** 2))  # ddof = 0
    assert row["centre"] == pytest.approx(values.mean())
    assert row["se"] == pytest.approx(std / 2)
    assert row["count"] == 4
    assert row["lo"] == pytest.approx(values.mean() - 1.96 * std / 2)
    assert row["hi"] == pytest.approx(values.mean() + 1.96 * std / 2)
    median = summarise_metric(run, "train_mse", KEYS, stat="median")
    assert median.iloc[0]["centre"] == pytest.approx(np.median(trial_rows()["train_mse"][:4]))


def test_summary_drops_nan_and_counts_them(run_dir):
    trials = trial_rows()
    trials.loc[0, "train_mse"] = np.nan
    points = summarise_metric(trials, "train_mse", KEYS)
    assert points.attrs["nan_dropped"] == 1
    assert points.iloc[0]["count"] == 3


def test_excess_subtracts_ols_floor(run_dir):
    run = load_run(run_dir)
    excess = summarise_metric(run, "excess", KEYS)
    plain = summarise_metric(run, "train_mse", KEYS)
    floors = plain["dataset"].map({k: v["ols_train_mse"] for k, v in DATASETS.items()})
    np.testing.assert_allclose(excess["centre"], plain["centre"] - floors)
    np.testing.assert_allclose(excess["se"], plain["se"])
    # IHM excess is exactly 0.1/ε on average
    ihm = excess[(excess.dataset == "Alpha") & (excess.label == "IHM")]
    np.testing.assert_allclose(ihm["centre"], [0.1 / e for e in EPS])
    # a recorded excess_train_mse column is used as is
    trials = trial_rows().assign(excess_train_mse=7.0)
    assert (summarise_metric(trials, "excess", KEYS)["centre"] == 7.0).all()


def test_unknown_metric_lists_available(run_dir):
    with pytest.raises(ValueError, match="unknown metric 'nope'") as err:
        summarise_metric(load_run(run_dir), "nope", KEYS)
    message = str(err.value)
    for name in ("train_mse", "test_mse", "seconds", "excess"):
        assert name in message
    with pytest.raises(ValueError, match="not in the trials"):
        summarise_metric(load_run(run_dir), "train_mse", ["hp.missing"])


def test_find_runs_nested_and_load_errors(tmp_path):
    write_run(tmp_path / "results" / "b_run")
    write_run(tmp_path / "results" / "group" / "a_run")
    (tmp_path / "results" / "b_run" / "shards").mkdir()
    (tmp_path / "results" / "empty").mkdir()
    found = find_runs(tmp_path / "results")
    assert found == sorted([tmp_path / "results" / "b_run", tmp_path / "results" / "group" / "a_run"])
    assert find_runs(tmp_path / "results" / "b_run") == [tmp_path / "results" / "b_run"]
    assert find_runs(tmp_path / "results" / "empty") == []
    with pytest.raises(FileNotFoundError, match="does not exist"):
        find_runs(tmp_path / "nowhere")
    with pytest.raises(FileNotFoundError, match="trials.csv"):
        load_run(tmp_path / "results" / "empty")
    (tmp_path / "results" / "b_run" / "datasets.json").write_text("{not json")
    with pytest.raises(ValueError, match="datasets.json"):
        load_run(tmp_path / "results" / "b_run")
    (tmp_path / "results" / "empty" / "trials.csv").write_text("")
    with pytest.raises(ValueError, match="trials.csv"):
        load_run(tmp_path / "results" / "empty")


def test_reference_lines_and_summary_table(run_dir):
    run = load_run(run_dir)
    assert reference_lines(run, "Alpha") == {"OLS (non-private)": 0.01, "θ = 0": 0.2}
    assert reference_lines(run, "Alpha", "excess") == pytest.approx({"OLS (non-private)": 0.0, "θ = 0": 0.19})
    assert reference_lines(run, "Alpha", "test_mse") == {}
    table = summary_table(run, "train_mse")
    assert table.shape == (4, 3)
    assert list(table.columns) == ["epsilon=0.1", "epsilon=1", "epsilon=10"]
    assert table.loc[("Alpha", "IHM"), "epsilon=1"].startswith("0.11 ± ")
    text = format_table(table)
    assert text.splitlines()[0].split()[:2] == ["dataset", "label"]
    assert len(text.splitlines()) == 2 + 4


def test_loglog_fit_recovers_rate():
    eps = np.logspace(-1, 1, 6)
    for c, power in ((3.0, 1), (0.5, 2)):
        slope, intercept = loglog_fit(eps, c / eps**power)
        assert slope == pytest.approx(-power, abs=1e-12)
        assert math.exp(intercept) == pytest.approx(c)
    assert math.isnan(loglog_fit([1.0, 1.0], [1.0, 2.0])[0])  # one distinct x: no line
    # on the toy run: excess of each curve is exactly c/ε on average
    run_slopes = fit_slopes(
        summarise_metric(trial_rows(), "excess", KEYS, datasets=DATASETS), "epsilon", ["dataset", "label"]
    )
    assert list(run_slopes.columns) == [
        "dataset",
        "label",
        "slope",
        "lo",
        "hi",
        "intercept",
        "points",
        "x_min",
        "x_max",
    ]
    np.testing.assert_allclose(run_slopes["slope"], -1.0)
    np.testing.assert_allclose(np.exp(run_slopes["intercept"]), [0.1, 0.3, 0.1, 0.3])
    assert run_slopes["points"].tolist() == [3] * 4


# ---------------------------------------------------------------------------------------------------------------
# figures


def test_build_figure_panels_curves_legend(run_dir):
    fig = build_figure(load_run(run_dir))
    axes = fig.get_axes()
    assert len(axes) == 2
    assert [ax.get_title().splitlines()[0] for ax in axes] == ["Alpha", "Beta"]
    assert "n=100, d=3" in axes[0].get_title()
    for ax in axes:
        labels = [line.get_label() for line in curve_lines(ax)]
        assert labels[:2] == ["IHM", "AdaSSP"]  # config order
        assert set(labels[2:]) <= {"OLS (non-private)", "θ = 0"}
        assert ax.get_xscale() == "log"
        assert ax.get_xlabel() == "ε"
        assert len(ax.collections) >= 2  # shaded bands
    ihm = curve_lines(axes[0])[0]
    assert ihm.get_color() == "green" and ihm.get_marker() == "D" and ihm.get_linestyle() == "--"
    assert axes[0].get_ylabel() == "Train MSE [(y / y_bound)²]"  # the unit of the normalised scale (issue 39)
    legend_texts = [t.get_text() for t in fig.legends[0].get_texts()]
    assert legend_texts[:2] == ["IHM", "AdaSSP"]
    texts = " ".join(t.get_text() for t in fig.texts)
    assert "Skipped" in texts and "Gamma" in texts
    assert "A synthetic caption." in texts
    assert fig._suptitle.get_text() == "Test figure"


def test_plot_run_writes_png_and_pdf(run_dir):
    files = plot_run(run_dir, metric="train_mse")
    assert [f.name for f in files] == ["figure_train_mse.png", "figure_train_mse.pdf"]
    for file in files:
        assert file.parent == run_dir and file.stat().st_size > 1000
    assert files[0].read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    assert files[1].read_bytes()[:5] == b"%PDF-"
    excess = plot_run(run_dir, metric="excess", logy=True)
    assert excess[0].name == "figure_excess.png"


def test_plot_run_rejects_unknown_option(run_dir):
    with pytest.raises(ValueError, match="unknown plot option.*colour"):
        plot_run(run_dir, colour="red")
    with pytest.raises(ValueError, match="x: unknown column 'hp.nope'"):
        plot_run(run_dir, x="hp.nope")


def test_excess_logy_has_no_refs(run_dir):
    fig = build_figure(load_run(run_dir), metric="excess", logy=True)
    for ax in fig.get_axes():
        assert [line.get_label() for line in curve_lines(ax)] == ["IHM", "AdaSSP"]
        assert ax.get_yscale() == "log"


def test_single_panel_single_point_and_nan(tmp_path):
    trials = trial_rows(n_trials=3)
    trials = trials[(trials.dataset == "Alpha")].copy()
    trials.loc[trials.index[0], "train_mse"] = np.nan
    # AdaSSP only at ε = 1: a one-point curve
    trials = trials[(trials.label == "IHM") | (trials.epsilon == 1.0)]
    folder = write_run(tmp_path / "one", trials)
    with pytest.warns(RuntimeWarning, match="1 of .* NaN"):
        fig = build_figure(load_run(folder), title="", caption="")
    (ax,) = fig.get_axes()
    assert [line.get_label() for line in curve_lines(ax)][:2] == ["IHM", "AdaSSP"]
    assert len(curve_lines(ax)[1].get_xdata()) == 1
    assert fig._suptitle is None
    assert any("NaN" in t.get_text() for t in fig.texts)


def test_many_panels_grid_and_numeric_x(tmp_path):
    frames = []
    for k in range(6):
        for n in (100, 1000, 10000):
            part = trial_rows(n_trials=2).query("dataset == 'Alpha'").copy()
            part["dataset"] = f"Synth{k}"
            part["dataset_id"] = f"Synth{k} [n={n}]"
            part["data.n"] = n
            part["n"] = n
            part["train_mse"] = part["train_mse"] * 1000 / n
            frames.append(part)
    trials = pd.concat(frames, ignore_index=True)
    folder = write_run(tmp_path / "sweep", trials)
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        fig = build_figure(load_run(folder), x="data.n", refs=False)
    axes = fig.get_axes()
    assert len(axes) == 6  # one per dataset label, datasets sharing a label share the panel
    assert axes[0].get_xlabel() == "" and axes[-1].get_xlabel() == "n"
    assert axes[0].get_xscale() == "log"  # n spans two decades
    # ε varies inside a (dataset, label, n) group: it splits the curves instead of being averaged over
    labels = [line.get_label() for line in curve_lines(axes[0])]
    assert len(labels) == 2 * 3 and labels[0] == "IHM, ε=0.1"
    assert "n=100–10,000" in axes[0].get_title()
    files = plot_run(folder, x="data.n", refs=False, ncols=2)
    assert files[0].name == "figure_train_mse_vs_data_n.png" and files[0].stat().st_size > 1000
    # x = epsilon with swept datasets: one panel per concrete dataset
    fig = build_figure(load_run(folder), refs=True)
    assert len(fig.get_axes()) == 18


def test_logy_drops_numerically_zero_curve(tmp_path):
    trials = trial_rows()
    ols = trials[trials.label == "IHM"].assign(label="OLS", mechanism="ols")
    trials = pd.concat([trials, ols], ignore_index=True)
    trials["excess_train_mse"] = trials["train_mse"] - trials["dataset"].map(
        {k: v["ols_train_mse"] for k, v in DATASETS.items()}
    )
    trials.loc[trials.label == "OLS", "excess_train_mse"] = 1e-19
    fig = build_figure(load_run(write_run(tmp_path / "z", trials)), metric="excess", logy=True)
    for ax in fig.get_axes():
        assert [line.get_label() for line in curve_lines(ax)] == ["IHM", "AdaSSP"]
        assert ax.get_ylim()[0] > 1e-4


def test_ihm_clipping_annotation(tmp_path):
    """Fig. 7's per-point text: χ√κ/(2−χ) from the spectrum and γ, and the clipping share."""
    trials = trial_rows()
    trials["info.gamma"] = np.where(trials["mechanism"] == "ihm", 10.0, np.nan)
    trials["info.clip_fraction"] = np.where(trials["mechanism"] == "ihm", 0.5, np.nan)
    datasets = {k: {**v, "lam_min_x": 0.0, "lam_max_x": 90.0} for k, v in DATASETS.items()}
    folder = write_run(tmp_path / "annotated", trials)
    (folder / "datasets.json").write_text(json.dumps(datasets))
    fig = build_figure(folder, annotate="ihm_clipping")
    texts = [t.get_text() for t in fig.axes[0].texts]
    expected = f"χ√κ/(2−χ): {math.sqrt(100 / 10) / (2 * math.sqrt(6) + 1):.2f}\nclip: 50%"
    assert texts.count(expected) == len(EPS)  # one per IHM point, none for AdaSSP
    with pytest.raises(ValueError, match="annotate"):
        build_figure(folder, annotate="nonsense")


def test_zero_below_keeps_a_curve_far_below_the_default_cut(tmp_path):
    """A real 10⁻¹²-relative curve (e.g. a non-private floor at n = 10¹²) is drawn once ``zero_below`` is lowered."""
    trials = trial_rows()
    low = trials[trials.label == "IHM"].assign(label="Low", mechanism="low", train_mse=lambda t: t.train_mse * 1e-12)
    run = load_run(write_run(tmp_path / "z", pd.concat([trials, low], ignore_index=True)))
    default = build_figure(run, logy=True, refs=False)
    lowered = build_figure(run, logy=True, refs=False, zero_below=1e-14)
    assert "Low" not in [line.get_label() for line in curve_lines(default.get_axes()[0])]
    assert "Low" in [line.get_label() for line in curve_lines(lowered.get_axes()[0])]
    assert parse_plot_options({"zero_below": 1e-14}) == {"zero_below": 1e-14}
    with pytest.raises(ConfigError, match="zero_below"):
        parse_plot_options({"zero_below": 2})
