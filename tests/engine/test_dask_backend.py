"""backend: dask — the same trials.csv as the loky backend, on a LocalCluster on loopback; config validation."""

from __future__ import annotations

import json
import logging

import pandas as pd
import pytest

from dpbench.config import ConfigError, parse_config
from dpbench.engine import run

distributed = pytest.importorskip(
    "distributed", reason="Dask distributed is optional: pip install 'dpbench[dask]' to test backend: dask"
)


@pytest.fixture(scope="module")
def cluster():
    """Two single-threaded worker processes on 127.0.0.1, as `dask scheduler` + 2 × `dask worker` would give."""
    with distributed.LocalCluster(
        n_workers=2,
        threads_per_worker=1,
        processes=True,
        host="127.0.0.1",
        dashboard_address="127.0.0.1:0",  # HTTP/diagnostics on a free loopback port
        silence_logs=logging.ERROR,
    ) as local:
        yield local


def trials(run_dir) -> pd.DataFrame:
    return pd.read_csv(run_dir / "trials.csv").drop(columns="seconds")


def quiet_run(raw: dict, **kwargs):
    return run(parse_config(raw), progress=False, log=lambda m: None, **kwargs)


@pytest.fixture(scope="module")
def reference(tmp_path_factory):
    """A small config and its trials.csv from the default loky backend with 2 workers."""
    raw = {
        "name": "loky",
        "output_dir": str(tmp_path_factory.mktemp("dask") / "results"),
        "seed": 11,
        "trials": 4,
        "trial_block": 2,
        "epsilons": [0.5, 4.0],
        "datasets": [{"loader": "sphere_linear", "options": {"n": 300, "d": 4}}],
        "mechanisms": [{"mechanism": "ihm", "hyper": {"T": 2}}, "adassp", "ols"],
    }
    return raw, trials(quiet_run(raw, n_jobs=2))


def test_dask_cluster_gives_the_same_csv_as_loky(reference, cluster, tmp_path):
    raw, loky = reference
    address = cluster.scheduler_address
    assert address.startswith("tcp://127.0.0.1:")
    dask = quiet_run({**raw, "name": "dask", "backend": "dask", "scheduler": address}, n_jobs=2)
    pd.testing.assert_frame_equal(trials(dask), loky)
    assert len(loky) == 3 * 2 * 4


def test_scheduler_file_reaches_the_same_cluster(reference, cluster, tmp_path):
    raw, loky = reference
    # the file `dask scheduler --scheduler-file` writes; its "address" is all a client reads
    (tmp_path / "scheduler.json").write_text(json.dumps({"type": "Scheduler", "address": cluster.scheduler_address}))
    via_file = {**raw, "name": "file", "backend": "dask", "scheduler": str(tmp_path / "scheduler.json")}
    pd.testing.assert_frame_equal(trials(quiet_run(via_file)), loky)


@pytest.mark.slow  # starts a second cluster (~5 s idle, ~30 s on a loaded 2-core machine)
def test_backend_dask_without_scheduler_starts_its_own_local_cluster(reference):
    raw, loky = reference
    local = trials(quiet_run({**raw, "name": "local", "backend": "dask"}, n_jobs=2))
    pd.testing.assert_frame_equal(local, loky)


def test_a_loky_run_resumes_on_dask_without_recomputing(small_config, cluster):
    first = quiet_run(small_config, n_jobs=1)
    before = {p.name: p.stat().st_mtime_ns for p in (first / "shards").glob("*.csv")}
    again = quiet_run({**small_config, "backend": "dask", "scheduler": cluster.scheduler_address})
    assert again == first
    assert {p.name: p.stat().st_mtime_ns for p in (again / "shards").glob("*.csv")} == before


def test_on_dask_a_grown_config_runs_only_its_new_trials(small_config, cluster, tmp_path):
    """The trial store works the same on Dask: trials 6 → 9 computes trials 6–8 only, 0–5 kept bit for bit, and the
    table equals a loky run of the grown config."""
    on_dask = {**small_config, "backend": "dask", "scheduler": cluster.scheduler_address}
    first = quiet_run(on_dask)
    before = pd.read_csv(first / "trials.csv")
    messages: list[str] = []
    grown = run(parse_config({**on_dask, "trials": 9}), progress=False, log=messages.append)
    assert "reusing 36 of 54 trials from the store in" in messages[0] and messages[0].endswith("running 18")
    after = pd.read_csv(grown / "trials.csv")
    pd.testing.assert_frame_equal(after[after["trial"] < 6].reset_index(drop=True), before)  # timing included
    loky = quiet_run({**small_config, "trials": 9, "output_dir": str(tmp_path / "loky")}, n_jobs=2)
    pd.testing.assert_frame_equal(trials(grown), trials(loky))


@pytest.mark.parametrize(
    ("extra", "field"),
    [
        ({"backend": "spark"}, "'backend': must be one of loky, dask"),
        ({"scheduler": "tcp://127.0.0.1:8786"}, "'scheduler': is only used with backend: dask"),
        ({"backend": "dask", "scheduler": "127.0.0.1:8786"}, "'scheduler': must be 'local', an address"),
        ({"backend": "dask", "scheduler": 8786}, "'scheduler': must be 'local', an address"),
    ],
)
def test_bad_backend_settings_name_the_field(small_config, extra, field):
    with pytest.raises(ConfigError, match=field):
        parse_config({**small_config, **extra})


def test_unreachable_scheduler_is_a_config_error(small_config, monkeypatch):
    from dpbench.engine import dask_backend

    monkeypatch.setattr(dask_backend, "CONNECT_TIMEOUT", 1)
    with pytest.raises(ConfigError, match="cannot reach tcp://127.0.0.1:9"):
        quiet_run({**small_config, "backend": "dask", "scheduler": "tcp://127.0.0.1:9"})
    with pytest.raises(ConfigError, match="scheduler file not found"):
        quiet_run({**small_config, "name": "nofile", "backend": "dask", "scheduler": "/nonexistent/s.json"})


def test_a_bandit_config_runs_on_dask_with_the_same_csv(cluster, tmp_path):
    """`--backend dask` applies to every experiment kind (a bandit config used to reject the key)."""
    raw = {
        "name": "bandit", "kind": "bandit", "output_dir": str(tmp_path / "loky"), "seed": 3, "trials": 2,
        "T": 300, "epsilons": [0.5, ".inf"], "delta": 1e-5,
        "environments": [{"env": "sphere", "label": "S", "options": {"d": 3, "n_arms": 4}}],
        "algorithms": [{"algorithm": "elim_iwr_jdp", "label": "IWR"}, "linucb"],
    }  # fmt: skip
    timing = ["seconds", "cpu_seconds"]
    loky = pd.read_csv(quiet_run(raw) / "trials.csv").drop(columns=timing)
    on_dask = {**raw, "output_dir": str(tmp_path / "dask"), "backend": "dask", "scheduler": cluster.scheduler_address}
    pd.testing.assert_frame_equal(pd.read_csv(quiet_run(on_dask) / "trials.csv").drop(columns=timing), loky)
