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
    b = run(parse_config({**small_config, "output_dir": str(tmp_path / "b"), "trial_block": 5}), progress=False)
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
    assert any(m.startswith("reusing") for m in messages)
    pd.testing.assert_frame_equal(load_trials(run_dir), reference)


def test_changed_config_is_not_silently_mixed(small_config, tmp_path):
    """Another seed changes every trial's identity: nothing of the old run is reused, the table is a fresh run's."""
    run_dir = run(parse_config(small_config), progress=False, log=lambda m: None)
    changed = {**small_config, "seed": 8}
    run(parse_config(changed), progress=False, log=lambda m: None)
    elsewhere = run(
        parse_config({**changed, "output_dir": str(tmp_path / "elsewhere")}), progress=False, log=lambda m: None
    )
    assert csv_without_timing(run_dir) == csv_without_timing(elsewhere)


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
    while proc.poll() is None and len(list(shard_dir.glob("*.csv"))) < 5:  # no wall-clock deadline: any machine speed
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


def test_privacy_columns_follow_the_declared_rule_of_the_hyperparameters():
    """The CSV's privacy_model/neighbour come from the mechanism's contract for the instance's hyperparameters."""
    from dpbench import registry

    info = registry.get_mechanism("iwr_dp")
    assert info.privacy({}) == ("central", "replace_one")
    assert info.privacy({"neighbour": "replace"}) == ("central", "replace_one")
    assert info.privacy({"neighbour": "zero_out"}) == ("central", "zero_out")
    assert info.privacy({"nonprivate": True}) == ("none", "none")
    assert registry.get_mechanism("adassp").privacy({}) == ("central", "zero_out")


# ------------------------------------------------------------------------------------------------------------
# n_jobs / block-size invariance on real data (issue 19): bitwise identical CSVs


def real_data_config(tmp_path, name: str, **extra) -> dict:
    return {
        "name": "real",
        "output_dir": str(tmp_path / name),
        "seed": 50,
        "trials": 4,
        "trial_block": 2,
        "epsilons": [0.1, 1.0, 10.0],
        "delta": "1/n^2",
        "datasets": [{"loader": "pol", "label": "Pol"}, {"loader": "protein", "label": "Protein"}],
        "mechanisms": ["ols", "adassp", "linmix", {"mechanism": "ihm", "hyper": {"T": 3}}, "dpgd"],
        **extra,
    }


def csv_without_timing(run_dir) -> bytes:
    return pd.read_csv(run_dir / "trials.csv").drop(columns=VOLATILE).to_csv(index=False).encode()


def test_bitwise_identical_csv_for_any_n_jobs_and_block_size_on_pol_and_protein(tmp_path):
    """Every spec-004 mechanism on Pol and Protein: n_jobs 1 vs 2 and block 2 vs 3 give the same bytes.

    Before the fix LinMix differed at 1e-13: the main process computed yᵀy with a 2-thread BLAS, workers with one.
    """
    one = run(parse_config(real_data_config(tmp_path, "one")), n_jobs=1, progress=False, log=lambda m: None)
    two = run(
        parse_config(real_data_config(tmp_path, "two", trial_block=3)), n_jobs=2, progress=False, log=lambda m: None
    )
    reference = csv_without_timing(one)
    assert reference == csv_without_timing(two)
    table = pd.read_csv(one / "trials.csv")
    assert set(table["mechanism"]) == {"ols", "adassp", "linmix", "ihm", "dpgd"} and len(table) == 2 * 5 * 3 * 4


def test_gram_statistics_do_not_depend_on_the_blas_thread_count():
    from threadpoolctl import threadpool_limits

    from dpbench.engine.regression import prepare_dataset
    from dpbench.engine.schema import DatasetEntry

    entry = DatasetEntry("pol", "Pol")
    prepare_dataset.cache_clear()
    with threadpool_limits(limits=2):
        _, wide, _ = prepare_dataset(entry, 50)
    prepare_dataset.cache_clear()
    with threadpool_limits(limits=1):
        _, narrow, _ = prepare_dataset(entry, 50)
    assert wide.yty == narrow.yty and np.array_equal(wide.eigh_xy[1], narrow.eigh_xy[1])


def test_gram_stats_freezes_a_fresh_array_in_place_or_copies_it():
    from dpbench.linalg import gram_stats

    X, y = np.ones((4, 2)), np.arange(4.0)
    copied = gram_stats(X, y)
    assert copied.X is not X and X.flags.writeable and not copied.X.flags.writeable
    frozen = gram_stats(X, y, copy=False)
    assert frozen.X is X and frozen.y is y and not X.flags.writeable and not y.flags.writeable
    assert gram_stats(np.ones((4, 2), dtype=np.float32), y, copy=False).X.dtype == np.float64  # still converted
    base = np.ones((6, 2))
    viewed = gram_stats(base[:4], np.arange(4.0), copy=False)  # a view of writeable memory is copied
    assert viewed.X.base is None and not viewed.X.flags.writeable and base.flags.writeable


def test_gram_statistics_are_computed_only_when_read():
    from dpbench.engine.regression import prepare_dataset
    from dpbench.engine.schema import DatasetEntry

    prepare_dataset.cache_clear()
    _, stats, _ = prepare_dataset(DatasetEntry("pol", "Pol"), 50)
    assert not {"xtx", "eigh_x", "eigh_xy", "theta_ols"} & set(vars(stats))
    assert stats.lam_min_x >= 0 and {"xtx", "eigh_x"} <= set(vars(stats)) and "eigh_xy" not in vars(stats)


# ------------------------------------------------------------------------------------------------------------
# issue 14 runner debts: lazy data, data_draws, metrics with coordinates


def test_plan_loads_no_data_and_workers_load_each_dataset_once(small_config, monkeypatch):
    from dpbench import registry
    from dpbench.engine import regression

    registry.discover()
    calls = []
    info = registry.DATASETS["sphere_linear"]

    def counting(rng, *, n: int = 1000, d: int = 5, theta_norm: float = 0.5, noise: float = 0.5, n_test: int = 1000):
        calls.append(n)
        return info.load(rng, n=n, d=d, theta_norm=theta_norm, noise=noise, n_test=n_test)

    monkeypatch.setitem(
        registry.DATASETS,
        "sphere_linear",
        registry.DatasetInfo("sphere_linear", counting, info.summary, info.kind, info.spec, info.shape),
    )
    regression.prepare_dataset.cache_clear()
    config = parse_config({**small_config, "large_dataset_trials": {"nd_above": 1000, "trials": 2}})
    plan = regression.plan_tasks(config, log=lambda m: None)
    assert calls == []  # the loader's declared shape answers n·d = 1200 > 1000 → 2 trials
    assert {task.n_trials for task in plan.tasks} == {2}
    run(config, progress=False, log=lambda m: None)
    assert calls == [300]  # once, in the (only) worker, cached for every block
    monkeypatch.setitem(
        registry.DATASETS,
        "sphere_linear",
        registry.DatasetInfo("sphere_linear", counting, info.summary, info.kind, info.spec, None),
    )
    regression.plan_tasks(config, log=lambda m: None)
    assert calls == [300, 300]  # no declared shape: the plan needs one load to size the trial count


def test_data_draws_redraw_the_data_and_draw_zero_is_the_single_draw(small_config, tmp_path):
    plain = load_trials(run(parse_config(small_config), progress=False))
    drawn_dir = run(parse_config({**small_config, "output_dir": str(tmp_path / "d"), "data_draws": 3}), progress=False)
    drawn = load_trials(drawn_dir)
    assert len(drawn) == 3 * len(plain) and sorted(drawn["data_draw"].unique()) == [0, 1, 2]
    first = drawn[drawn["data_draw"] == 0].drop(columns="data_draw").reset_index(drop=True)
    pd.testing.assert_frame_equal(first, plain)  # draw 0 = the historical draw, noise included
    ols = drawn[drawn["mechanism"] == "ols"].groupby("data_draw")["train_mse"].first()
    assert ols.nunique() == 3  # each draw is different data
    described = json.loads((drawn_dir / "datasets.json").read_text())
    (entry,) = described.values()
    assert entry["data_draws"] == 3 and sorted(entry["draws"]) == ["0", "1", "2"]
    assert entry["draws"]["0"]["ols_train_mse"] == entry["ols_train_mse"]
    # the other draws record only the O(n) characteristics: no draw computes a Gram its trials did not need
    assert set(entry["draws"]["1"]) == {"n", "d", "delta", "zero_train_mse"}


def test_data_draws_are_identical_for_any_n_jobs(small_config, tmp_path):
    config = {**small_config, "data_draws": 2, "large_dataset_trials": {"nd_above": 1000, "trials": 3, "data_draws": 1}}
    one = run(parse_config({**config, "output_dir": str(tmp_path / "a")}), n_jobs=1, progress=False)
    two = run(parse_config({**config, "output_dir": str(tmp_path / "b"), "trial_block": 1}), n_jobs=2, progress=False)
    assert csv_without_timing(one) == csv_without_timing(two)
    table = load_trials(one)
    assert set(table["data_draw"]) == {0} and set(table["trial"]) == {0, 1, 2}  # large: 1 draw × 3 trials


def test_replicate_option_names_its_replacement(small_config):
    small_config["datasets"][0]["grid"] = {"replicate": [0, 1]}
    with pytest.raises(ConfigError, match=r"datasets\[0\].grid.replicate.*data_draws"):
        parse_config(small_config)


def test_metrics_receive_the_trial_coordinates(small_config, monkeypatch):
    from dpbench.analysis import metrics

    seen = []

    def privacy_scaled(theta, dataset, stats, trial):
        seen.append(trial)
        return trial.epsilon * 1000 + trial.hyper.get("T", 0)

    def legacy(theta, dataset, stats):
        return 1.0

    for name in ("eps_probe", "legacy_probe"):  # removed again when the test ends
        monkeypatch.setitem(metrics.METRICS, name, None)
        monkeypatch.setitem(metrics.LABELS, name, None)
    metrics.register_metric("eps_probe", "probe")(privacy_scaled)
    metrics.register_metric("legacy_probe", "legacy")(legacy)
    table = load_trials(run(parse_config({**small_config, "metrics": ["eps_probe", "legacy_probe"]}), progress=False))
    expected = table["epsilon"] * 1000 + table["hp.T"].fillna(0)
    assert np.array_equal(table["eps_probe"], expected) and (table["legacy_probe"] == 1.0).all()
    assert {t.delta for t in seen} == {1 / 300**2} and {t.mechanism for t in seen} == {"adassp", "ihm", "ols"}


def test_numeric_fields_accept_the_yaml_1e6_spelling(tmp_path):
    from dpbench.config import load_config

    path = tmp_path / "c.yaml"
    path.write_text(
        "name: e\nseed: 1e3\ntrials: 1e1\ntrial_block: 5e0\ndata_draws: 2e0\nepsilons: [1e6, 1e-2]\n"
        "delta: 1e-6\nlarge_dataset_trials: {nd_above: 1e4, trials: 1e0}\n"
        "datasets: [sphere_linear]\nmechanisms: [ols]\n"
    )
    config = load_config(path)
    assert (config.seed, config.trials, config.trial_block, config.data_draws) == (1000, 10, 5, 2)
    assert config.epsilons == (1e6, 1e-2) and config.delta == 1e-6
    assert (config.large_nd_above, config.large_trials) == (1e4, 1)
    path.write_text("name: e\ntrials: 1.5e1x\ndatasets: [sphere_linear]\nmechanisms: [ols]\nepsilons: [1]\n")
    with pytest.raises(ConfigError, match="'trials': must be an integer"):
        load_config(path)


def test_duplicate_epsilon_is_named(small_config):
    small_config["epsilons"] = [0.5, 2.0, 0.5]
    with pytest.raises(ConfigError, match=r"epsilons\[2\].*repeats epsilons\[0\]"):
        parse_config(small_config)


def test_mechanism_error_in_a_block_names_the_block(tmp_path):
    """IHM at ε = 1e-7 on Protein is below its accounting's floor: the run stops naming dataset, mechanism, ε."""
    from dpbench.engine.store import RunError

    config = real_data_config(
        tmp_path,
        "floor",
        epsilons=[1e-7],
        mechanisms=["ihm"],
        trials=1,
        datasets=[{"loader": "protein", "label": "Protein"}],
    )
    with pytest.raises(
        RunError,
        match=r"dataset Protein, mechanism ihm, ε = 1e-07, trials 0–0: ValueError: "
        r"IHM's sketch budget ε/2 = 5e-08 is below the smallest value",
    ):
        run(parse_config(config), progress=False, log=lambda m: None)


EDGE_LOADER_N = {"one_row": 1, "d_minus_1": 2, "d": 3}


@pytest.mark.parametrize("shape", ["one_row", "d_minus_1", "d", "one_column", "constant_column", "zero_y"])
def test_degenerate_data_gives_rows_or_a_named_error(small_config, monkeypatch, shape):
    """Tiny n (1, d − 1, d), d = 1, constant columns, all-zero y through the runner, for every spec-004 mechanism."""
    from dpbench import registry
    from dpbench.data import Dataset
    from dpbench.engine.store import RunError

    registry.discover()

    def edge(rng, *, kind: str = "one_row"):
        n, d = (EDGE_LOADER_N.get(kind, 40), 1 if kind == "one_column" else 3)
        X = rng.uniform(-1, 1, (n, d)) / d
        y = rng.uniform(-1, 1, n)
        if kind == "constant_column":
            X[:, 1] = 0.2
        if kind == "zero_y":
            y[:] = 0.0
        return Dataset("edge", X, y, X[:0], y[:0], meta={"title": kind})

    monkeypatch.setitem(registry.DATASETS, "edge", registry.DatasetInfo("edge", edge, "edge data"))
    for mechanism in ["ols", "adassp", "linmix", "ihm", "dpgd"]:
        config = {
            **small_config,
            "name": f"edge_{mechanism}",
            "datasets": [{"loader": "edge", "options": {"kind": shape}}],
            "mechanisms": [mechanism],
            "delta": 1e-5,
            "epsilons": [1e-8, 1.0, 1e8],
            "trials": 2,
        }
        try:
            table = load_trials(run(parse_config(config), progress=False, log=lambda m: None))
        except RunError as err:
            assert f"mechanism {mechanism}" in str(err) and "ValueError: " in str(err), str(err)
            continue
        assert np.isfinite(table[["train_mse", "excess_train_mse"]].to_numpy()).all(), (mechanism, shape)


def test_draw_zero_split_over_tasks_computes_its_characteristics_once(small_config, tmp_path, monkeypatch):
    """With draw 0's trials split over several tasks (trial_block 1), only the task of trial 0 computes the Gram
    characteristics (the worker frees a draw after each chunk, so every later task would recompute them); the
    merged datasets.json equals the one written when a single task holds the draw."""
    from dpbench.engine import regression

    calls = []
    original = regression.characteristics
    monkeypatch.setattr(regression, "characteristics", lambda stats: calls.append(stats.n) or original(stats))
    config = {**small_config, "data_draws": 2}
    whole = run(parse_config({**config, "output_dir": str(tmp_path / "whole")}), n_jobs=1, progress=False)
    calls.clear()
    split = run(
        parse_config({**config, "output_dir": str(tmp_path / "split"), "trial_block": 1}), n_jobs=1, progress=False
    )
    assert len(calls) == 1
    assert json.loads((split / "datasets.json").read_text()) == json.loads((whole / "datasets.json").read_text())
    assert csv_without_timing(split) == csv_without_timing(whole)


def test_tasks_run_without_huge_page_advice_unless_the_user_chose(monkeypatch):
    """numpy's THP advice is off while a task runs (restored after), unless NUMPY_MADVISE_HUGEPAGE is set."""
    from dpbench.engine import core, pages

    if pages._SET_ADVICE is None:
        pytest.skip("this numpy has no huge-page switch")
    before = pages._SET_ADVICE(True)
    seen = []
    monkeypatch.delenv("NUMPY_MADVISE_HUGEPAGE", raising=False)
    core._run_guarded("task", None, lambda task, config: seen.append(pages._SET_ADVICE(False)) or [])
    monkeypatch.setenv("NUMPY_MADVISE_HUGEPAGE", "1")
    core._run_guarded("task", None, lambda task, config: seen.append(pages._SET_ADVICE(True)) or [])
    assert seen == [False, True] and pages._SET_ADVICE(before) is True
