"""IHM-paper extras: the Figure 7 generator, the speed benchmark and the figure configs."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest
from typer.testing import CliRunner

from dpbench.cli import app
from dpbench.config import load_config
from dpbench.engine.bench import bench_mechanisms
from dpbench.papers.ftrl.mlp_latent import load as mlp_latent

CONFIGS = sorted(Path(__file__).resolve().parents[2].glob("configs/ihm*.yaml")) + sorted(
    Path(__file__).resolve().parents[2].glob("configs/ihm/*.yaml")
)


def test_mlp_latent_shapes_bounds_and_determinism():
    ds = mlp_latent(np.random.default_rng(3), n_total=2000, d=16)
    assert ds.X_train.shape == (1600, 16) and ds.X_test.shape == (400, 16)
    assert np.linalg.norm(ds.X_train, axis=1).max() == pytest.approx(1.0)
    assert np.abs(ds.y_train).max() <= 1.0
    again = mlp_latent(np.random.default_rng(3), n_total=2000, d=16)
    np.testing.assert_array_equal(ds.X_train, again.X_train)
    # features come from a 1-D latent through sigmoids: strongly low-rank, entries in (0, 1) before scaling
    singular = np.linalg.svd(ds.X_train, compute_uv=False)
    assert singular[3] / singular[0] < 0.05


def test_mlp_latent_literal_notebook_labels_are_not_clipped():
    ds = mlp_latent(np.random.default_rng(0), n_total=5000, d=8, noise=3.0, clip_y=False)
    assert np.abs(ds.y_train).max() > 1.0
    assert ds.y_bound == pytest.approx(np.abs(ds.y_train).max())


def test_bench_reports_both_paths():
    table = bench_mechanisms(["servo"], ["ihm", "adassp"], trials=2, explicit_trials=1, log=lambda _m: None)
    ihm = table.set_index("mechanism").loc["ihm"]
    assert ihm["fast_ms"] > 0 and ihm["explicit_ms"] > 0 and np.isfinite(ihm["ratio"])
    assert np.isnan(table.set_index("mechanism").loc["adassp", "explicit_ms"])  # AdaSSP has no sketch


@pytest.mark.parametrize("path", CONFIGS, ids=lambda p: p.stem)
def test_figure_configs_are_valid(path):
    config = load_config(path)
    assert config.trials >= 30 and config.datasets and config.mechanisms


@pytest.mark.slow  # loads every vendored dataset
def test_datasets_command_lists_loaders():
    result = CliRunner().invoke(app, ["datasets"])
    assert result.exit_code == 0, result.output
    assert "concreteslump" in result.output and "n=" in result.output
    assert "not available offline" in result.output  # 3droad, buzz, slice
