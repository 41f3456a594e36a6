"""Runner: tidy rows, determinism across n_jobs, resume after a crash (incl. SIGKILL), skipped datasets."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

import numpy as np
import pandas as pd
import pytest
import yaml

from dpbench.config import ConfigError, parse_config
from dpbench.engine import run
from dpbench.engine.store import SHARD_DIR

VOLATILE = ["seconds"]


def load_trials(run_dir):
    return pd.read_csv(run_dir / "trials.csv").drop(columns=VOLATILE)


def test_rows_are_tidy_and_complete(small_config):
    run_dir = run(parse_config(small_config), progress=False, log=lambda m: None)
    table = pd.read_csv(run_dir / "trials.csv")
    assert len(table) == 3 * 2 * 6
    assert not table.duplicated(["label", "epsilon_index", "trial"]).any()
    for column in [
        "dataset",
        "loader",
        "mechanism",
        "label",
        "privacy_model",
        "neighbour",
        "epsilon",
        "delta",
        "trial",
        "n",
        "d",
        "train_mse",
        "test_mse",
        "excess_train_mse",
        "seconds",
        "data.n",
        "hp.T",
    ]:
        assert column in table.columns, column
    assert (table["delta"] == 1 / 300**2).all()
    assert list(table["label"].unique()) == ["AdaSSP", "IHM", "ols"]
    assert (table.loc[table.mechanism == "ols", "excess_train_mse"].abs() < 1e-12).all()
    datasets = json.loads((run_dir / "datasets.json").read_text())
    (entry,) = datasets.values()
    ols_mse = table.loc[table.mechanism == "ols", "train_mse"].iloc[0]
    assert entry["ols_train_mse"] == pytest.approx(ols_mse)
    assert yaml.safe_load((run_dir / "config.yaml").read_text())["name"] == "smoke"


def test_identical_results_for_any_n_jobs(small_config, tmp_path):
    one = run(parse_config({**small_config, "output_dir": str(tmp_path / "a")}), n_jobs=1, progress=False)
    two = run(parse_config({**small_config, "output_dir": str(tmp_path / "b")}), n_jobs=2, progress=False)
    pd.testing.assert_frame_equal(load_trials(one), load_trials(two))


def test_block_size_does_not_change_results(small_config, tmp_path):
    a = run(parse_config({**small_config, "output_dir": str(tmp_path / "a")}), progress=False)
    b = run(
        parse_config({**small_config, "output_dir": str(tmp_path / "b"), "trial_block": 5}), progress=False
    )
    pd.testing.assert_frame_equal(load_trials(a), load_trials(b))


def test_trials_are_independent_across_mechanisms_and_epsilons(small_config):
    table = load_trials(run(parse_config(small_config), progress=False))
    private = table[table.mechanism == "adassp"]
    assert private["train_mse"].nunique() == len(private)


def test_resume_after_lost_shards(small_config):
    cfg = parse_config(small_config)
    run_dir = run(cfg, progress=False)
    reference = load_trials(run_dir)
    shards = sorted((run_dir / SHARD_DIR).glob("*.csv"))
    for shard in shards[::3]:
        shard.unlink()
    (run_dir / "trials.csv").unlink()
    messages = []
    run(cfg, progress=False, log=messages.append)
    assert any("resuming" in m for m in messages)
    pd.testing.assert_frame_equal(load_trials(run_dir), reference)


def test_changed_config_is_not_silently_mixed(small_config):
    run(parse_config(small_config), progress=False)
    changed = parse_config({**small_config, "seed": 8})
    with pytest.raises(ConfigError, match="different experiment"):
        run(changed, progress=False)
    run(changed, progress=False, fresh=True)


KILL_SCRIPT = """
import sys
from dpbench.config import load_config
from dpbench.engine import run
run(load_config(sys.argv[1]), progress=False)
"""


def test_sigkill_mid_run_then_resume_loses_and_duplicates_nothing(small_config, tmp_path):
    config = {**small_config, "trials": 400, "trial_block": 10, "output_dir": str(tmp_path / "killed")}
    path = tmp_path / "kill.yaml"
    path.write_text(yaml.safe_dump(config))
    shard_dir = tmp_path / "killed" / "smoke" / SHARD_DIR
    proc = subprocess.Popen([sys.executable, "-c", KILL_SCRIPT, str(path)], cwd=os.getcwd())
    deadline = time.time() + 120
    while time.time() < deadline and len(list(shard_dir.glob("*.csv"))) < 5:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    written = len(list(shard_dir.glob("*.csv")))
    assert 5 <= written < 3 * 2 * 40, "the kill must land mid-run"
    assert not (tmp_path / "killed" / "smoke" / "trials.csv").exists()
    for shard in shard_dir.glob("*.csv"):
        pd.read_csv(shard)  # every shard on disk is complete (atomic writes)
    resumed = run(parse_config(config), progress=False, log=lambda m: None)
    reference = run(parse_config({**config, "output_dir": str(tmp_path / "clean")}), progress=False)
    pd.testing.assert_frame_equal(load_trials(resumed), load_trials(reference))
    assert len(load_trials(resumed)) == 3 * 2 * 400


def test_unavailable_dataset_is_skipped_visibly(small_config, monkeypatch):
    from dpbench import registry
    from dpbench.data import DataUnavailableError

    registry.discover()

    def missing(rng, *, n: int = 1):
        raise DataUnavailableError("data unavailable: datasets/uci/nothing/data.csv.gz is missing")

    monkeypatch.setitem(registry.DATASETS, "nothing", registry.DatasetInfo("nothing", missing, "test"))
    small_config["datasets"].append({"loader": "nothing", "label": "Nothing"})
    messages = []
    run_dir = run(parse_config(small_config), progress=False, log=messages.append)
    assert any("SKIPPED Nothing" in m for m in messages)
    assert "Nothing" in json.loads((run_dir / "skipped.json").read_text())
    assert set(pd.read_csv(run_dir / "trials.csv")["dataset"]) == {"Sphere (n=300, d=4)"}


def test_synthetic_population_is_exact():
    from dpbench.data.synthetic import load

    ds = load(np.random.default_rng(0), n=200000, d=3, n_test=0)
    np.testing.assert_allclose(ds.X_train.T @ ds.X_train / ds.n, ds.population.cov, atol=5e-3)
    assert np.abs(ds.y_train).max() <= 1.0


def test_neighbour_hyperparameter_overrides_registry_default():
    from dpbench import registry
    from dpbench.engine.regression import declared_neighbour

    info = registry.get_mechanism("adassp")
    assert declared_neighbour(info, {}) == "zero_out"
    assert declared_neighbour(info, {"neighbour": "replace"}) == "replace_one"
