"""The trial store (issue 29): a run is a view of a store of trials, each identified by what it is.

Growing, shrinking or editing a study reuses every trial that is still valid, bit for bit (timing columns
included), and recomputes exactly the trials whose inputs changed, saying which and why; bad data is refused before
anything is written; ``--dry-run`` and ``-d/-m/-e`` show and run a part; a stop speaks one line.
"""

from __future__ import annotations

import errno
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from typer.testing import CliRunner

from dpbench.cli import app
from dpbench.config import ConfigError, parse_config
from dpbench.engine import core, regression, run
from dpbench.engine.identity import cell_runs, contiguous_runs
from dpbench.engine.store import SHARD_DIR, RunError
from dpbench.engine.survey import Selection

#: the tests' plug-in package (tests/plugin_example) and its paced mechanism, by import path
PLUGIN_ROOT = Path(__file__).parents[1] / "plugin_example"
PACED = "dpbench_plugin_example.paced:fit"


def write_csv(path: Path, seed: int = 0, n: int = 40, hole: tuple[int, int] | None = None) -> Path:
    """A small numeric CSV (columns a, b, c, y); ``hole`` = (row, column index) left empty."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 3))
    y = X @ [1.0, -2.0, 0.5] + 0.1 * rng.normal(size=n)
    lines = ["a,b,c,y"]
    for i, row in enumerate(np.column_stack([X, y])):
        cells = [f"{v:.6f}" for v in row]
        if hole is not None and hole[0] == i:
            cells[hole[1]] = ""
        lines.append(",".join(cells))
    path.write_text("\n".join(lines) + "\n")
    return path


def csv_entry(path: Path, label: str) -> dict:
    return {"loader": "csv", "label": label, "options": {"path": str(path), "bounds": "benchmark"}}


@pytest.fixture
def study(tmp_path):
    """A user's study: their own CSV, two mechanisms, two ε, 4 trials."""
    mine = write_csv(tmp_path / "mine.csv")
    return {
        "name": "study",
        "output_dir": str(tmp_path / "results"),
        "seed": 3,
        "trials": 4,
        "epsilons": [0.5, 2.0],
        "datasets": [csv_entry(mine, "mine")],
        "mechanisms": ["adassp", "ols"],
    }


def go(config: dict, **kw) -> tuple[Path, list[str]]:
    messages: list[str] = []
    run_dir = run(parse_config(config), progress=False, log=messages.append, **kw)
    return run_dir, messages


def lines(run_dir: Path) -> list[str]:
    """trials.csv's data lines (every column, timing included: reuse is bit for bit)."""
    return (run_dir / "trials.csv").read_text().splitlines()[1:]


def frame(run_dir: Path) -> pd.DataFrame:
    return pd.read_csv(run_dir / "trials.csv", dtype=str, keep_default_na=False)


def ran(messages: list[str]) -> int:
    """Trials the run computed, from its 'reusing R of N …; running K' line (K = N when nothing was reused)."""
    for message in messages:
        if message.startswith("reusing"):
            return int(message.rsplit(" ", 1)[1])
    raise AssertionError(f"no reuse line in {messages}")


def shard_names(run_dir: Path) -> set[str]:
    return {p.name for p in (run_dir / SHARD_DIR).glob("*.csv")}


# ------------------------------------------------------------------------------------------------------------
# reuse: grow, shrink, add, edit, nothing


def test_trials_4_to_8_runs_only_trials_4_to_7_and_keeps_0_to_3_bit_identical(study):
    run_dir, _ = go(study)
    before, first_shards = frame(run_dir), shard_names(run_dir)
    _, messages = go({**study, "trials": 8})
    assert ran(messages) == 2 * 2 * 4
    after = frame(run_dir)
    assert len(after) == 2 * 2 * 8
    old = after[after["trial"].astype(int) < 4].reset_index(drop=True)
    pd.testing.assert_frame_equal(old, before)  # every column, the timing too: the same stored rows
    new_shards = shard_names(run_dir) - first_shards
    assert new_shards and all("-t4-8-" in name for name in new_shards)


def test_shrinking_keeps_the_extra_trials_in_the_store_for_later(study):
    run_dir, _ = go({**study, "trials": 8})
    full, stored = lines(run_dir), shard_names(run_dir)
    go(study)
    shrunk = frame(run_dir)
    assert sorted(shrunk["trial"].astype(int).unique()) == [0, 1, 2, 3]  # exactly the config's current trials
    assert shard_names(run_dir) == stored
    assert json.loads((run_dir / "meta.json").read_text())["trials"] == 16
    _, messages = go({**study, "trials": 8})
    assert ran(messages) == 0 and lines(run_dir) == full


def test_adding_an_epsilon_runs_only_it(study):
    run_dir, _ = go(study)
    before = frame(run_dir)
    _, messages = go({**study, "epsilons": [0.5, 1.0, 2.0]})
    assert ran(messages) == 2 * 4  # two mechanisms × 4 trials at ε = 1 only
    after = frame(run_dir)
    kept = after[after["epsilon"] != "1.0"].drop(columns="epsilon_index").reset_index(drop=True)
    pd.testing.assert_frame_equal(kept, before.drop(columns="epsilon_index"))
    assert sorted(after["epsilon_index"].unique()) == ["0", "1", "2"]  # the index is the new config's position


def test_adding_a_dataset_runs_only_it(study, tmp_path):
    run_dir, _ = go(study)
    before = frame(run_dir)
    other = write_csv(tmp_path / "other.csv", seed=1)
    _, messages = go({**study, "datasets": [*study["datasets"], csv_entry(other, "other")]})
    assert ran(messages) == 2 * 2 * 4
    after = frame(run_dir)
    pd.testing.assert_frame_equal(after[after["dataset"] == "mine"].reset_index(drop=True), before)
    assert set(json.loads((run_dir / "datasets.json").read_text())) == {"mine", "other"}


def test_editing_the_csv_recomputes_exactly_its_trials_and_says_so(study, tmp_path):
    other = write_csv(tmp_path / "other.csv", seed=1)
    study["datasets"].append(csv_entry(other, "other"))
    run_dir, _ = go(study)
    before = frame(run_dir)
    write_csv(tmp_path / "mine.csv", seed=5)  # the user's data changed
    _, messages = go(study)
    (reason,) = [m for m in messages if "changed" in m]
    assert reason.startswith("data of dataset 'mine' changed (mine.csv sha256 ") and reason.endswith(
        ": 16 trials recomputed"
    )
    assert ran(messages) == 16
    after = frame(run_dir)
    pd.testing.assert_frame_equal(
        after[after["dataset"] == "other"].reset_index(drop=True),
        before[before["dataset"] == "other"].reset_index(drop=True),
    )
    assert not after[after["dataset"] == "mine"]["train_mse"].equals(before[before["dataset"] == "mine"]["train_mse"])
    described = json.loads((run_dir / "datasets.json").read_text())["mine"]
    fresh_dir, _ = go({**study, "output_dir": str(tmp_path / "fresh")})
    assert described == json.loads((fresh_dir / "datasets.json").read_text())["mine"]  # OLS floor of the new data
    assert lines(run_dir) != [] and frame(fresh_dir).drop(columns="seconds").equals(after.drop(columns="seconds"))


def test_editing_nothing_recomputes_nothing(study):
    run_dir, _ = go(study)
    before, stored = lines(run_dir), {p: p.stat().st_mtime_ns for p in (run_dir / SHARD_DIR).glob("*.csv")}
    _, messages = go(study)
    assert ran(messages) == 0 and lines(run_dir) == before
    assert {p: p.stat().st_mtime_ns for p in (run_dir / SHARD_DIR).glob("*.csv")} == stored


def test_changed_mechanism_code_recomputes_its_trials_naming_it(study, monkeypatch):
    run_dir, _ = go(study)
    real = regression.code_version

    def edited(*parts):
        return tuple((part, "edited" if part == "mechanism adassp" else version) for part, version in real(*parts))

    monkeypatch.setattr(regression, "code_version", edited)
    regression.cell_identity.cache_clear()
    try:
        _, messages = go(study)
    finally:
        regression.cell_identity.cache_clear()
    assert "code of mechanism 'adassp' changed: 8 trials recomputed" in messages
    assert ran(messages) == 8


def test_inserting_an_epsilon_leaves_every_other_trials_noise_unchanged(study, tmp_path):
    """Seeds come from values: a run at ε = (0.5, 2) and one at (0.1, 0.5, 2) agree on the shared ε."""
    a, _ = go({**study, "output_dir": str(tmp_path / "a")})
    b, _ = go({**study, "output_dir": str(tmp_path / "b"), "epsilons": [0.1, 0.5, 2.0]})
    shared = frame(b)[frame(b)["epsilon"] != "0.1"].drop(columns=["epsilon_index", "seconds"])
    pd.testing.assert_frame_equal(shared.reset_index(drop=True), frame(a).drop(columns=["epsilon_index", "seconds"]))


def test_fresh_empties_the_store(study):
    run_dir, _ = go(study)
    _, messages = go(study, fresh=True)
    assert not any(m.startswith("reusing") for m in messages)
    assert len(shard_names(run_dir)) == 4


# ------------------------------------------------------------------------------------------------------------
# bad data first, nothing to run


def test_csv_with_a_missing_value_is_refused_before_any_file_is_written(study, tmp_path):
    write_csv(tmp_path / "mine.csv", hole=(6, 1))
    with pytest.raises(ConfigError) as caught:
        go(study)
    message = str(caught.value)
    assert "\n" not in message
    assert "datasets[0] (mine)" in message and "mine.csv" in message
    assert "row 7 (line 8)" in message and "column 'b'" in message and "missing: drop" in message
    assert not Path(study["output_dir"]).exists()


def test_missing_drop_is_accepted_and_reruns_only_that_dataset(study, tmp_path):
    write_csv(tmp_path / "mine.csv", hole=(6, 1))
    study["datasets"][0]["options"]["missing"] = "drop"
    run_dir, _ = go(study)
    assert json.loads((run_dir / "datasets.json").read_text())["mine"]["meta"]["rows_dropped_missing"] == 1


def test_a_config_whose_only_dataset_is_unavailable_exits_non_zero(tmp_path, monkeypatch):
    monkeypatch.setenv("DPBENCH_DATA_DIR", str(tmp_path / "no-data"))
    config = tmp_path / "c.yaml"
    config.write_text(
        f"name: none\noutput_dir: {tmp_path / 'results'}\ntrials: 2\nepsilons: [1]\n"
        "datasets: [pol]\nmechanisms: [ols]\n"
    )
    result = CliRunner().invoke(app, ["run", str(config), "--no-progress"])
    assert result.exit_code == 2
    assert "nothing to run: every dataset of the config is unavailable" in result.output


# ------------------------------------------------------------------------------------------------------------
# see and slice


def test_dry_run_prints_the_plan_with_an_estimate_and_writes_nothing(study):
    run_dir, _ = go(study)
    before = {p: p.stat().st_mtime_ns for p in run_dir.rglob("*")}
    _, messages = go({**study, "trials": 6, "epsilons": [0.5, 1.0, 2.0]}, dry_run=True)
    table = "\n".join(" ".join(m.split()) for m in messages)
    assert "mine adassp 0.5 6 4 2" in table and "mine adassp 1 6 0 6" in table
    assert "total: 36 trials, 16 finished, 20 to run" in table
    assert "from the store's measured per-trial costs" in table
    assert {p: p.stat().st_mtime_ns for p in run_dir.rglob("*")} == before


def test_dry_run_of_a_new_study_writes_nothing_and_has_no_estimate(study):
    _, messages = go(study, dry_run=True)
    assert "estimated time: unknown" in messages[-1]
    assert not Path(study["output_dir"]).exists()


def test_a_selection_runs_a_part_into_the_same_run_marked_partial(study):
    run_dir, messages = go(study, selection=Selection(mechanisms=("ols",), epsilons=(2.0,)))
    table = frame(run_dir)
    assert set(zip(table["label"], table["epsilon"], strict=True)) == {("ols", "2.0")} and len(table) == 4
    meta = json.loads((run_dir / "meta.json").read_text())
    assert meta["partial"] == "4 of 16 trials" and meta["selection"] == {"mechanism": ["ols"], "epsilon": [2.0]}
    report = CliRunner().invoke(app, ["report", str(run_dir)])
    assert report.exit_code == 0, report.output
    assert "**Partial run**: 4 of 16 trials of the config" in (run_dir / "report.md").read_text(encoding="utf-8")
    _, messages = go(study)  # the rest, reusing the part
    assert ran(messages) == 12 and "partial" not in json.loads((run_dir / "meta.json").read_text())


def test_a_selection_that_matches_nothing_names_what_the_config_has(study):
    with pytest.raises(
        ConfigError,
        match=r"-m/--mechanism 'linmix' matches nothing in the config; it has: adassp, "
        r"ols",
    ):
        go(study, selection=Selection(mechanisms=("linmix",)))


def test_cli_run_options(study, tmp_path):
    config = tmp_path / "study.yaml"
    config.write_text(json.dumps(study))
    runner = CliRunner()
    part = runner.invoke(app, ["run", str(config), "--no-progress", "-d", "mine", "-m", "adassp", "-e", "0.5"])
    assert part.exit_code == 0, part.output
    plan = runner.invoke(app, ["run", str(config), "--dry-run"])
    assert plan.exit_code == 0 and "total: 16 trials, 4 finished, 12 to run" in plan.output


# ------------------------------------------------------------------------------------------------------------
# stops that speak


def test_a_read_only_folder_is_one_line_naming_the_path(study, monkeypatch):
    def refuse(path, *args, **kwargs):
        raise PermissionError(errno.EACCES, "Permission denied", str(path))

    monkeypatch.setattr(Path, "mkdir", refuse)
    with pytest.raises(RunError, match=r"^cannot write .*results/study: Permission denied; choose a writable"):
        go(study)


def test_a_folder_that_becomes_unwritable_mid_run_is_one_line_naming_the_file(study, monkeypatch):
    from dpbench.engine import store

    real = store.os.replace

    def refuse(src, dst):
        if str(dst).endswith(".csv") and SHARD_DIR in str(dst):
            raise PermissionError(errno.EROFS, "Read-only file system", str(src))
        return real(src, dst)

    monkeypatch.setattr(store.os, "replace", refuse)
    with pytest.raises(RunError, match=r"^cannot write .*/shards/.*\.csv: Read-only file system; choose a writable"):
        go(study)
    assert not list(Path(study["output_dir"]).rglob(".*.tmp"))  # nothing half-written left


def test_a_chunk_run_in_the_main_process_leaves_ctrl_c_alone():
    """Only worker processes ignore SIGINT (the run's process must still stop on Ctrl-C)."""
    before = signal.getsignal(signal.SIGINT)
    core._run_chunk([object()], None, lambda task, config: None)
    core._run_chunk([object()], None, lambda task, config: None, os.getpid())
    assert signal.getsignal(signal.SIGINT) is before


@pytest.mark.parametrize("n_jobs", ["1", pytest.param("2", marks=pytest.mark.slow)])  # 2 workers: 20 s
def test_ctrl_c_is_one_line_saying_what_is_kept_and_the_same_command_resumes(study, tmp_path, n_jobs):
    # each fit sleeps 5 ms in the interrupted run (≥ 10 s of work on any CPU, two shards in ≈ 0.5 s), none on resume
    study.update(trials=4000, trial_block=50, mechanisms=[PACED], epsilons=[1.0])
    config = tmp_path / "long.yaml"
    config.write_text(json.dumps(study))
    command = [sys.executable, "-m", "dpbench", "run", str(config), "--no-progress", "-j", n_jobs]
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(filter(None, [str(PLUGIN_ROOT), os.environ.get("PYTHONPATH")]))}
    # a terminal's SIGINT disposition (default) whatever this process inherited (a background job's is "ignored",
    # and an ignored SIGINT stays ignored in the child: Python then never raises KeyboardInterrupt)
    proc = subprocess.Popen(
        command,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        env={**env, "DPBENCH_PACE_SECONDS": "0.005"},
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    shard_dir = Path(study["output_dir"]) / "study" / SHARD_DIR
    deadline = time.time() + 120
    while time.time() < deadline and not (shard_dir.is_dir() and len(list(shard_dir.glob("*.csv"))) >= 2):
        time.sleep(0.05)
    os.killpg(proc.pid, signal.SIGINT)  # what a terminal's Ctrl-C sends: the whole process group
    _, err = proc.communicate(timeout=60)
    assert proc.returncode == 130
    # one line besides what every run says at its start (its workers and privacy profile)
    (line,) = [m for m in err.splitlines() if m.strip() and not m.startswith(("workers: ", "privacy profile: "))]
    assert line.startswith("interrupted: ") and "of 4000 trials of this config are kept in" in line
    assert line.endswith("run the same command to resume")
    kept = int(line.split()[1])
    again = subprocess.run(command, capture_output=True, text=True, timeout=600, env=env)
    assert again.returncode == 0, again.stderr
    assert f"reusing {kept} of 4000 trials" in again.stderr
    assert len(pd.read_csv(Path(study["output_dir"]) / "study" / "trials.csv")) == 4000


# ------------------------------------------------------------------------------------------------------------
# pieces


def test_contiguous_runs_and_cell_runs():
    assert contiguous_runs([5, 0, 1, 2]) == [(0, 3), (5, 6)]
    assert cell_runs([(0, 4), (0, 5), (1, 4), (1, 5), (2, 0)]) == [((2,), 0, 1), ((0, 1), 4, 6)]


def test_a_task_partly_in_the_store_runs_as_its_subset(study):
    plan = regression.plan_tasks(parse_config({**study, "trials": 8}), log=lambda m: None)
    items = core.planned_trials(plan)
    todo = core.tasks_to_run(items, lambda trial: trial.handle[1] < 4)
    assert {(t.trial_start, t.trial_stop) for t in todo} == {(4, 8)} and len(todo) == len(plan.tasks)


def test_shards_of_an_older_dpbench_are_one_line_and_their_trials_rerun(study):
    from dpbench.engine import store

    run_dir, _ = go(study)
    before = frame(run_dir).drop(columns="seconds")
    for path in sorted((run_dir / SHARD_DIR).glob("*.csv"))[:3]:
        header, body = store.read_shard(path)
        path.write_text(store.shard_text(body, {**header, "version": 1}).replace('"version": 2', '"version": 1'))
    _, messages = go(study)
    (line,) = [m for m in messages if "older dpbench" in m]
    assert line.startswith("3 shards in ") and "moved to" in line
    assert not any("damaged shard" in m for m in messages)
    assert ran(messages) == 12
    pd.testing.assert_frame_equal(frame(run_dir).drop(columns="seconds"), before)
