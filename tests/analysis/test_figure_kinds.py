"""The table of figure kinds: ``kind:`` in a config's plot: entries picks one (default curves), options declared
once with Hyper and checked at config load naming the field, a kind registered elsewhere drawn by ``dpbench plot``,
and the audit's figure drawn with the object API and saved atomically."""

from __future__ import annotations

import types

import numpy as np
import pandas as pd
import pytest
import yaml
from matplotlib.figure import Figure

from dpbench.analysis.figures import kinds
from dpbench.analysis.figures.kinds import FIGURE_KINDS, draw, get_figure_kind, register_figure_kind
from dpbench.analysis.figures.presets import plot_presets, presets
from dpbench.analysis.runs import load_run
from dpbench.config import ConfigError, parse_config
from dpbench.contract import Hyper


def toy_trials(trials: int) -> pd.DataFrame:
    """Two labels × ε ∈ {1, 2} × ``trials``: err = 1/ε (Fast) or 3/ε (Slow), times a seeded lognormal factor."""
    rng = np.random.default_rng(0)
    rows = [{"dataset": "A", "dataset_id": "A", "mechanism": label.lower(), "label": label, "privacy_model": "central",
             "epsilon": eps, "trial": t, "n": 100, "d": 3, "err": c / eps * np.exp(0.2 * rng.standard_normal())}
            for label, c in (("Fast", 1.0), ("Slow", 3.0)) for eps in (1.0, 2.0) for t in range(trials)]  # fmt: skip
    return pd.DataFrame(rows)


def write_run(folder, trials: pd.DataFrame, plot=None, plots=None):
    """A run folder: trials.csv, an empty datasets.json and the config's presentation fields."""
    folder.mkdir(parents=True, exist_ok=True)
    trials.to_csv(folder / "trials.csv", index=False)
    (folder / "datasets.json").write_text("{}")
    config = {"name": folder.name, "plot": plot or {}, "plots": plots or {}}
    (folder / "config.yaml").write_text(yaml.safe_dump(config))
    return folder


@pytest.fixture
def toy_kind():
    """A figure kind registered from outside the package (as a paper's figures.py does): the mean of a column."""

    @register_figure_kind(
        "toy_means",
        summary="the mean of a column per label",
        options={"metric": Hyper(str, default="err", doc="the column"), "title": Hyper(str, default="", doc="")},
    )
    def toy_means(run, *, metric, title):  # a metric option but no out: presets give it no curves-only option
        means = run.trials.groupby("label")[metric].mean()
        fig = Figure(figsize=(3, 2))
        fig.add_subplot().bar(list(means.index), means.to_numpy())
        fig.suptitle(title)
        return kinds.Drawing(fig, means.reset_index(), options={"metric": metric, "title": title})

    yield FIGURE_KINDS["toy_means"]
    del FIGURE_KINDS["toy_means"]


def test_a_plot_entry_without_kind_is_the_curves_kind_and_kind_curves_draws_the_same(tmp_path):
    folder = write_run(tmp_path / "r", toy_trials(trials=5), plot={"metric": "err"},
                       plots={"a": {"stat": "median"}, "b": {"kind": "curves", "stat": "median"}})  # fmt: skip
    drawings = plot_presets(folder)
    assert [d.files[0].name for d in drawings] == ["figure_a.png", "figure_b.png"]
    pd.testing.assert_frame_equal(drawings[0].points, drawings[1].points)
    assert get_figure_kind(kinds.DEFAULT_KIND).name == "curves"


@pytest.mark.parametrize(
    ("plots", "field", "says"),
    [
        ({"a": {"kind": "curvez"}}, "plots.a.kind", "did you mean 'curves'"),
        ({"a": {"kind": "audit_histogram"}}, "plots.a.kind", "not a run"),
        ({"a": {"kind": "wang2018_summary", "stat": "mean"}}, "plots.a.stat", "unknown"),
        ({"a": {"kind": "wang2018_summary", "resamples": 10}}, "plots.a.resamples", "≥ 100"),
        ({"a": {"kind": 3}}, "plots.a.kind", "figure kind name"),
    ],
)
def test_unknown_kinds_and_options_are_config_errors_naming_the_field(small_config, plots, field, says):
    with pytest.raises(ConfigError) as err:
        parse_config({**small_config, "plots": plots})
    assert err.value.field == field and says in str(err.value)


def test_a_kind_registered_elsewhere_is_drawn_from_a_plots_entry_with_its_defaults(tmp_path, toy_kind):
    folder = write_run(tmp_path / "r", toy_trials(trials=3), plot={"metric": "err", "logy": True},
                       plots={"m": {"kind": "toy_means", "title": "means"}, "c": {}})  # fmt: skip
    got = dict(presets(load_run(folder)))
    assert got["figure_m"] == {"kind": "toy_means", "title": "means", "metric": "err"}  # plot:'s metric, no logy
    assert got["figure_c"]["logy"] is True
    drawings = plot_presets(folder)
    toy = next(d for d in drawings if "title" in d.options and d.options["title"] == "means")
    assert toy.files[0].name == "figure_m.png" and toy.files[0].stat().st_size > 0
    assert toy.points.set_index("label")["err"].round(6).to_dict() == (
        toy_trials(trials=3).groupby("label")["err"].mean().round(6).to_dict()
    )


def test_options_are_declared_with_a_default_allowed_by_their_declaration():
    with pytest.raises(TypeError, match="needs a default"):
        register_figure_kind("bad1", summary="", options={"x": Hyper(int)})(lambda run, x: None)
    with pytest.raises(TypeError, match="default of x is not allowed"):
        register_figure_kind("bad2", summary="", options={"x": Hyper(int, default=0, ge=1)})(lambda run, x: None)
    assert "bad1" not in FIGURE_KINDS and "bad2" not in FIGURE_KINDS


def test_library_callers_get_the_option_named():
    with pytest.raises(ValueError, match="bins: must be an integer ≥ 2"):
        draw("audit_histogram", None, bins=1)
    with pytest.raises(ValueError, match="unknown plot option 'bin'.*did you mean 'bins'"):
        draw("audit_histogram", None, bin=3)


def fake_audit_result(threshold=0.5):
    rng = np.random.default_rng(0)
    return types.SimpleNamespace(s1=rng.normal(1, 1, 500), s0=rng.normal(0, 1, 500), mechanism="toy", broken="none",
                                 epsilon=1.0, eps_lower=0.3, trials=500,
                                 detail=types.SimpleNamespace(threshold=threshold))  # fmt: skip


def test_the_audit_figure_is_drawn_without_pyplot_and_saved_atomically(tmp_path):
    from dpbench.audit.blackbox import plot_histograms

    fig = draw("audit_histogram", fake_audit_result(), bins=21).figure
    ax = fig.axes[0]
    assert isinstance(fig, Figure) and fig.canvas.manager is None  # object API: no pyplot figure manager
    assert len(ax.patches) == 2 * 20 and ax.get_yscale() == "log"
    assert [line.get_xdata()[0] for line in ax.lines] == [0.5]  # the threshold of ε̂_lower
    path = plot_histograms(fake_audit_result(), tmp_path / "audit_toy.png")
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and [p.name for p in tmp_path.iterdir()] == ["audit_toy.png"]


def test_the_coverage_kind_declares_the_coverage_functions_defaults():
    import inspect

    from dpbench.analysis.figures.coverage import coverage_figure

    kind = get_figure_kind("coverage")
    params = inspect.signature(coverage_figure).parameters
    assert {k: spec.default for k, spec in kind.options.items()} == {
        k: p.default for k, p in params.items() if p.kind is p.KEYWORD_ONLY
    }
    table = pd.DataFrame({"panel": ["p"] * 2, "curve": ["c"] * 2, "epsilon": [1.0, 2.0], "value": [0.9, 0.95],
                          "lo": [0.8, 0.9], "hi": [0.97, 0.99]})  # fmt: skip
    assert draw("coverage", table, ncols=1).figure.axes[0].get_xscale() == "log"
