"""Fault injection: nothing lost, nothing silent (issue 19).

Every fault a run folder can meet — a damaged shard (truncated, corrupted, emptied, foreign, from an older
dpbench), a process killed while writing a shard or ``trials.csv``, a full disk, two runs on one folder, a block
that returns the wrong rows, an interrupted plot or report — ends either in the complete, bit-identical table or in
a one-line error naming the file and the block. docs/reliability.md maps each fault to the test that shows it.
"""

from __future__ import annotations

import errno
import json
import os
import random
import signal
import subprocess
import sys
from pathlib import Path

import matplotlib.figure
import pandas as pd
import pytest
import yaml

from dpbench import registry
from dpbench.config import ConfigError, parse_config
from dpbench.data import DataUnavailableError
from dpbench.engine import core, run, store
from dpbench.engine.store import DAMAGED_DIR, SHARD_DIR, RunError, run_lock
from dpbench.io import atomic

TIMING = ["seconds", "cpu_seconds"]


def quiet(config: dict, **kw):
    return run(parse_config(config), progress=False, log=lambda m: None, **kw)


def table(run_dir: Path) -> pd.DataFrame:
    return pd.read_csv(run_dir / "trials.csv").drop(columns=TIMING, errors="ignore")


def shards(run_dir: Path) -> list[Path]:
    return sorted((run_dir / SHARD_DIR).glob("*.csv"))


def leftovers(run_dir: Path) -> list[Path]:
    return [p for p in run_dir.rglob(".*.tmp")]


@pytest.fixture
def finished(small_config):
    """A finished small run: (config, run folder, its table)."""
    run_dir = quiet(small_config)
    return small_config, run_dir, table(run_dir)


# ------------------------------------------------------------------------------------------------------------
# damaged shards: named, quarantined, their block re-run


def _truncate_300(path: Path) -> None:  # the case: a shard cut to its first 300 bytes
    path.write_bytes(path.read_bytes()[:300])


def _cut_body(path: Path) -> None:  # header intact, last rows gone
    data = path.read_bytes()
    path.write_bytes(data[: len(data) - 40])


def _flip_byte(path: Path) -> None:  # same length, one digit changed in the body
    data = bytearray(path.read_bytes())
    index = len(data) - 30
    data[index] = ord("7") if data[index] != ord("7") else ord("3")
    path.write_bytes(bytes(data))


def _empty(path: Path) -> None:
    path.write_bytes(b"")


def _legacy(path: Path) -> None:  # a plain CSV shard as dpbench wrote before shards carried headers
    path.write_bytes(path.read_bytes().partition(b"\n")[2])


def _forged_header(path: Path) -> None:  # checksum recomputed, but a trial's slot no longer matches its key
    header, body = store.read_shard(path)
    header["trials"][0][0] = "0" * 64
    path.write_text(store.shard_text(body, header))


def _other_task(path: Path) -> None:  # another block's (valid) shard under this name
    other = next(p for p in shards(path.parents[1]) if p != path)
    path.write_bytes(other.read_bytes())


DAMAGES = {
    "truncated_300_bytes": (_truncate_300, "checksum|cut short|header"),
    "rows_cut_off": (_cut_body, "checksum"),
    "byte_flipped": (_flip_byte, "checksum"),
    "emptied": (_empty, "no dpbench shard header"),
    "older_dpbench_csv": (_legacy, "no dpbench shard header"),
    "forged_header": (_forged_header, "does not match its key"),
    "other_task": (_other_task, "name does not match"),
}


@pytest.mark.parametrize("damage", sorted(DAMAGES))
def test_damaged_shard_is_named_and_its_block_rerun(finished, damage):
    config, run_dir, reference = finished
    victim = shards(run_dir)[3]
    harm, reason = DAMAGES[damage]
    harm(victim)
    messages: list[str] = []
    run(parse_config(config), progress=False, log=messages.append)
    (report,) = [m for m in messages if "damaged shard" in m]
    assert victim.name in report
    assert pd.Series([report]).str.contains(reason).all(), report
    assert any(p.name.startswith(victim.name) for p in (run_dir / SHARD_DIR / DAMAGED_DIR).iterdir())
    pd.testing.assert_frame_equal(table(run_dir), reference)
    store.read_shard(victim)  # the re-run block is a verified shard again


def test_truncated_shard_of_a_large_run_rerun_to_the_full_row_count(small_config):
    """The issue's case at scale: 9,600 trials, one shard cut to 300 bytes → re-run → 9,600 rows, not 9,501."""
    config = {**small_config, "trials": 1600, "trial_block": 100}
    run_dir = quiet(config)
    assert len(table(run_dir)) == 9600
    _truncate_300(shards(run_dir)[5])
    (run_dir / "trials.csv").unlink()
    quiet(config)
    result = table(run_dir)
    assert len(result) == 9600
    assert not result.duplicated(["dataset_id", "label", "epsilon_index", "trial"]).any()


def test_damaged_shard_that_cannot_be_rerun_stops_the_run_naming_it(finished, monkeypatch):
    config, run_dir, reference = finished
    victim = shards(run_dir)[0]
    _flip_byte(victim)

    def gone(*args):
        raise DataUnavailableError("data unavailable: the file was removed")

    monkeypatch.setattr("dpbench.engine.regression.prepare_dataset", gone)
    with pytest.raises(RunError, match=rf"damaged shard {victim.name} .*cannot be re-run.*removed"):
        quiet(config)
    pd.testing.assert_frame_equal(table(run_dir), reference)  # the last complete table, never one with a hole


def test_damaged_shard_whose_mechanism_now_fails_stops_naming_it(finished, monkeypatch):
    config, run_dir, _ = finished
    victim = next(p for p in shards(run_dir) if pd.read_csv(p, skiprows=1)["mechanism"].iloc[0] == "adassp")
    _truncate_300(victim)
    registry.discover()
    info = registry.MECHANISMS["adassp"]

    def broken(*args, **kwargs):
        raise ValueError("adassp: this plug-in version refuses the data")

    monkeypatch.setitem(
        registry.MECHANISMS,
        "adassp",
        registry.MechanismInfo("adassp", broken, info.summary, info.privacy_model, info.neighbour, info.needs),
    )
    with pytest.raises(RunError, match=rf"damaged shard {victim.name}.*cannot be re-run.*refuses the data"):
        quiet(config)
    assert list((run_dir / "failed").glob("*.log"))  # the traceback is kept for the developer


def test_changed_config_on_a_run_with_damaged_shards_reruns_them_and_reuses_the_rest(finished):
    config, run_dir, reference = finished
    victim = shards(run_dir)[0]
    _truncate_300(victim)
    grown = {**config, "trials": config["trials"] + 1}
    messages: list[str] = []
    run(parse_config(grown), progress=False, log=messages.append)
    assert any("damaged shard" in m and victim.name in m for m in messages)
    result = table(run_dir)
    assert len(result) == len(reference) // config["trials"] * grown["trials"]
    old = result[result["trial"] < config["trials"]].reset_index(drop=True)
    pd.testing.assert_frame_equal(old, reference)  # the re-run trials and the reused ones are those of before


# ------------------------------------------------------------------------------------------------------------
# assembly: exactly one row per planned coordinate


def test_block_returning_wrong_rows_is_refused_before_anything_is_written(small_config, monkeypatch):
    from dpbench.engine import regression

    def drops_a_row(task, config):
        result = regression.run_block(task, config)
        result.rows = result.rows[:-1]
        return result

    info = registry.get_kind("regression")
    monkeypatch.setitem(
        registry.KINDS,
        "regression",
        registry.KindInfo(info.name, info.summary, info.parse, info.plan, drops_a_row, info.order),
    )
    with pytest.raises(
        RunError,
        match=r"break its plan: missing loader=sphere_linear, label=AdaSSP, "
        r"epsilon_index=0, trial=1",
    ):
        quiet(small_config)
    assert not shards(Path(small_config["output_dir"]) / "smoke")


def test_doubled_coordinates_fail_assembly_loudly(small_config):
    small_config["datasets"] = [
        {"loader": "sphere_linear", "label": "Sphere", "options": {"n": 300, "d": 4}},
        {"loader": "sphere_linear", "label": "Sphere", "options": {"n": 200, "d": 4}},
    ]
    with pytest.raises(RunError, match=r"doubled coordinates: dataset_id=Sphere, label=AdaSSP"):
        quiet(small_config)
    assert not (Path(small_config["output_dir"]) / "smoke" / "trials.csv").exists()


def test_shard_changed_after_writing_fails_assembly_then_resume_repairs_it(small_config, monkeypatch):
    real = store.shard_text
    calls = {"n": 0}

    def one_bad(body, header):
        calls["n"] += 1
        text = real(body, header)
        return text[:-3] + "9\n" if calls["n"] == 4 else text  # corrupted on its way to disk

    monkeypatch.setattr(core, "shard_text", one_bad)
    with pytest.raises(RunError, match=r"failed verification at assembly: content does not match its checksum"):
        quiet(small_config)
    monkeypatch.setattr(core, "shard_text", real)
    run_dir = quiet(small_config)
    reference = quiet({**small_config, "output_dir": str(Path(small_config["output_dir"]) / "clean")})
    pd.testing.assert_frame_equal(table(run_dir), table(reference))


def test_truncated_trials_csv_is_reassembled(finished):
    config, run_dir, reference = finished
    path = run_dir / "trials.csv"
    path.write_bytes(path.read_bytes()[:500])
    quiet(config)
    pd.testing.assert_frame_equal(table(run_dir), reference)


# ------------------------------------------------------------------------------------------------------------
# SIGKILL at random points: inside a shard write, inside the assembly write

KILL_SCRIPT = """
import os, signal, sys
from pathlib import Path
from dpbench.config import load_config
from dpbench.engine import core

mode, at = sys.argv[2], int(sys.argv[3])
real, seen = core.write_atomic, [0]

def dying(path, text):
    path = Path(path)
    if (mode == "shard" and path.parent.name == "shards") or (mode == "assembly" and path.name == "trials.csv"):
        seen[0] += 1
        if seen[0] == at:  # die half-way through the temp file, as a SIGKILL mid-write would
            data = text.encode() if isinstance(text, str) else text
            path.with_name(f".{path.name}.{os.getpid()}.tmp").write_bytes(data[: len(data) // 2])
            os.kill(os.getpid(), signal.SIGKILL)
    real(path, text)

core.write_atomic = dying
core.run(load_config(sys.argv[1]), progress=False, log=lambda m: None)
"""


def _killed_run(config: dict, tmp_path: Path, mode: str, at: int) -> Path:
    path = tmp_path / f"kill_{mode}_{at}.yaml"
    path.write_text(yaml.safe_dump(config))
    proc = subprocess.run(
        [sys.executable, "-c", KILL_SCRIPT, str(path), mode, str(at)], cwd=os.getcwd(), capture_output=True, timeout=300
    )
    assert proc.returncode == -signal.SIGKILL, proc.stderr.decode()[-2000:]
    return Path(config["output_dir"]) / config["name"]


KILL_POINTS = random.Random(19).sample(range(1, 19), 3)  # 18 shard writes in the small config


@pytest.mark.parametrize("at", KILL_POINTS)
def test_sigkill_inside_a_shard_write_then_resume(finished, tmp_path, at):
    config, _, reference = finished
    config = {**config, "output_dir": str(tmp_path / "killed")}
    run_dir = _killed_run(config, tmp_path, "shard", at)
    assert len(shards(run_dir)) == at - 1 and leftovers(run_dir)  # the half-written temp file is all that is left
    assert not (run_dir / "trials.csv").exists()
    quiet(config)
    pd.testing.assert_frame_equal(table(run_dir), reference)
    assert not leftovers(run_dir)


def test_sigkill_inside_the_assembly_write_keeps_the_old_table(finished, tmp_path):
    config, _, reference = finished
    config = {**config, "output_dir": str(tmp_path / "killed")}
    run_dir = _killed_run(config, tmp_path, "assembly", 1)
    assert not (run_dir / "trials.csv").exists() and len(shards(run_dir)) == 18
    quiet(config)
    before = (run_dir / "trials.csv").read_bytes()
    _killed_run(config, tmp_path, "assembly", 1)  # killed while replacing a complete table
    assert (run_dir / "trials.csv").read_bytes() == before
    quiet(config)
    pd.testing.assert_frame_equal(table(run_dir), reference)


@pytest.mark.slow
@pytest.mark.parametrize("at", range(1, 19))
def test_sigkill_at_every_shard_write(finished, tmp_path, at):
    config, _, reference = finished
    config = {**config, "output_dir": str(tmp_path / "killed")}
    run_dir = _killed_run(config, tmp_path, "shard", at)
    quiet(config)
    pd.testing.assert_frame_equal(table(run_dir), reference)


# ------------------------------------------------------------------------------------------------------------
# full disk


class FullDisk:
    """``open`` for the store module whose k-th write fails with ENOSPC after writing part of the data."""

    def __init__(self, fail_at: int, what: str):
        self.fail_at, self.what, self.count = fail_at, what, 0

    def __call__(self, file, mode="r", *args, **kwargs):
        handle = open(file, mode, *args, **kwargs)
        if "w" not in mode or self.what not in str(file):
            return handle
        self.count += 1
        if self.count != self.fail_at:
            return handle
        real_write = handle.write

        def write(data):
            real_write(data[: len(data) // 3])
            raise OSError(errno.ENOSPC, os.strerror(errno.ENOSPC))

        handle.write = write
        return handle


def test_full_disk_while_writing_a_shard_is_a_clear_error_and_loses_nothing(finished, tmp_path, monkeypatch):
    config, _, reference = finished
    config = {**config, "output_dir": str(tmp_path / "full")}
    monkeypatch.setattr(atomic, "open", FullDisk(3, ".csv."), raising=False)
    with pytest.raises(RunError, match=r"disk full while writing .*shards/.*No space left"):
        quiet(config)
    run_dir = tmp_path / "full" / "smoke"
    assert len(shards(run_dir)) == 2 and not leftovers(run_dir)
    for shard in shards(run_dir):
        store.read_shard(shard)
    monkeypatch.undo()  # space freed
    quiet(config)
    pd.testing.assert_frame_equal(table(run_dir), reference)


def test_full_disk_while_writing_trials_csv_keeps_the_previous_table(finished, monkeypatch):
    config, run_dir, reference = finished
    before = (run_dir / "trials.csv").read_bytes()
    monkeypatch.setattr(atomic, "open", FullDisk(1, "trials.csv"), raising=False)
    with pytest.raises(RunError, match="disk full while writing .*trials.csv"):
        quiet(config)
    assert (run_dir / "trials.csv").read_bytes() == before and not leftovers(run_dir)


# ------------------------------------------------------------------------------------------------------------
# two runs on one folder


def test_second_run_on_a_busy_folder_is_refused_with_the_owner(finished):
    config, run_dir, reference = finished
    with run_lock(run_dir):
        with pytest.raises(RunError, match=rf"{run_dir} is in use by another dpbench run \(pid {os.getpid()}"):
            quiet(config)
    quiet(config)  # the lock dies with its holder
    pd.testing.assert_frame_equal(table(run_dir), reference)


RUN_SCRIPT = """
import sys
from dpbench.config import load_config
from dpbench.engine import run
run(load_config(sys.argv[1]), progress=False, log=lambda m: None)
"""


def test_two_processes_started_on_one_folder_at_once(small_config, tmp_path):
    config = {**small_config, "trials": 30, "trial_block": 5, "output_dir": str(tmp_path / "both")}
    path = tmp_path / "both.yaml"
    path.write_text(yaml.safe_dump(config))
    procs = [subprocess.Popen([sys.executable, "-c", RUN_SCRIPT, str(path)], stderr=subprocess.PIPE) for _ in range(2)]
    outcomes = [(p.wait(timeout=300), p.stderr.read().decode()) for p in procs]
    assert any(code == 0 for code, _ in outcomes)
    for code, err in outcomes:
        assert code == 0 or "is in use by another dpbench run" in err, err[-1500:]
    reference = quiet({**config, "output_dir": str(tmp_path / "clean")})
    pd.testing.assert_frame_equal(table(tmp_path / "both" / "smoke"), table(reference))


# ------------------------------------------------------------------------------------------------------------
# interrupted plot / report: no half-written figure left as if complete


def _interrupting_savefig(monkeypatch):
    real = matplotlib.figure.Figure.savefig

    def interrupted(self, fname, *args, **kwargs):
        real(self, fname, *args, **kwargs)
        Path(fname).write_bytes(Path(fname).read_bytes()[:100])  # the first bytes reached the disk ...
        raise KeyboardInterrupt  # ... then Ctrl-C

    monkeypatch.setattr(matplotlib.figure.Figure, "savefig", interrupted)


def test_interrupted_plot_leaves_no_half_written_figure(finished, monkeypatch):
    from dpbench.analysis.figures.presets import plot_run

    _, run_dir, _ = finished
    _interrupting_savefig(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        plot_run(run_dir)
    assert not list(run_dir.glob("figure_*")) and not leftovers(run_dir)
    monkeypatch.undo()
    png, _ = plot_run(run_dir)
    good = png.read_bytes()
    _interrupting_savefig(monkeypatch)
    with pytest.raises(KeyboardInterrupt):
        plot_run(run_dir)
    assert png.read_bytes() == good  # the complete figure of the previous plot is untouched


def test_interrupted_report_leaves_no_half_written_page(finished, monkeypatch):
    from dpbench.analysis import report

    _, run_dir, _ = finished

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    monkeypatch.setattr(report, "to_html", interrupted)
    with pytest.raises(KeyboardInterrupt):
        report.write_report(run_dir)
    assert not (run_dir / "report.html").exists() and not leftovers(run_dir)
    markdown = (run_dir / "report.md").read_text()
    assert markdown.rstrip().endswith("```")  # complete: ends with the config block


# ------------------------------------------------------------------------------------------------------------
# the bandit kind has the same guarantees


def test_bandit_run_repairs_a_truncated_shard(tmp_path):
    config = {
        "kind": "bandit",
        "name": "b",
        "output_dir": str(tmp_path),
        "seed": 3,
        "trials": 4,
        "T": 256,
        "epsilons": [1.0],
        "environments": [{"env": "sphere", "options": {"d": 3, "n_arms": 4}}],
        "algorithms": ["elim_iwr_jdp", "linucb"],
    }
    run_dir = quiet(config)
    reference = table(run_dir)
    _truncate_300(shards(run_dir)[1])
    messages: list[str] = []
    run(parse_config(config), progress=False, log=messages.append)
    assert any("damaged shard" in m and shards(run_dir)[1].name in m for m in messages)
    pd.testing.assert_frame_equal(table(run_dir), reference)
    assert not table(run_dir).duplicated(["dataset_id", "label", "epsilon_index", "trial", "T"]).any()


# ------------------------------------------------------------------------------------------------------------
# plans: huge counts are refused up front, not discovered by exhausting memory


@pytest.mark.parametrize("trials", [10**12, "1e15"])
def test_huge_trial_count_is_refused_by_the_plan(small_config, trials):
    small_config["trials"] = trials
    with pytest.raises(ConfigError, match=r"'trials': the run would produce .* rows"):
        quiet(small_config)


def test_huge_bandit_trial_count_is_refused_by_the_plan(tmp_path):
    config = {
        "kind": "bandit",
        "name": "b",
        "output_dir": str(tmp_path),
        "trials": "1e13",
        "T": 256,
        "epsilons": [1.0],
        "environments": [{"env": "sphere"}],
        "algorithms": ["linucb"],
    }
    with pytest.raises(ConfigError, match="'trials'"):
        quiet(config)


def test_skipped_json_and_datasets_json_are_complete_after_resume(finished):
    config, run_dir, _ = finished
    before = json.loads((run_dir / "datasets.json").read_text())
    _truncate_300(shards(run_dir)[0])
    quiet(config)
    assert json.loads((run_dir / "datasets.json").read_text()) == before


def test_temp_files_of_dead_writers_are_removed_and_live_ones_kept(finished):
    config, run_dir, _ = finished
    dead = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = run_dir / SHARD_DIR / f".x.csv.{int(dead.stdout)}.tmp"
    live = run_dir / f".figure_train_mse.png.{os.getppid()}.tmp"  # e.g. a `dpbench plot` still saving
    stale.write_text("half")
    live.write_text("half")
    quiet(config)
    assert not stale.exists() and live.exists()
