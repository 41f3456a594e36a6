"""The run folder: config snapshot, shards, assembled ``trials.csv``, ``meta.json`` — written atomically.

Layout of ``<output_dir>/<name>/``: ``config.yaml`` (resolved config + fingerprint), ``shards/<task>.csv`` (one
finished block of trials each), ``trials.csv`` (all shards, sorted), ``datasets.json`` / ``skipped.json`` (what the
plan found), ``meta.json`` (versions, workers, wall time). Every file is replaced atomically (temp file + rename),
so a reader or a crash sees either the old or the complete new file.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import time
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from dpbench import __version__
from dpbench.config import ConfigError

SHARD_DIR = "shards"
RUN_FILES = ("trials.csv", "datasets.json", "skipped.json")


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see either the old or the complete new file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def git_commit() -> str | None:
    """The commit of the installed dpbench source tree, if it is a git checkout."""
    try:
        out = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            capture_output=True,
            text=True,
            timeout=5,
            cwd=Path(__file__).resolve().parent,
        )
        return out.stdout.strip() or None
    except (OSError, subprocess.SubprocessError):
        return None


def prepare_run_dir(config: Any, fresh: bool) -> Path:
    """Create the run folder, or check that an existing one belongs to the same experiment (resume)."""
    run_dir = config.run_dir
    saved = run_dir / "config.yaml"
    if saved.exists() and not fresh:
        previous = yaml.safe_load(saved.read_text()) or {}
        if previous.get("fingerprint") != config.fingerprint():
            raise ConfigError(
                f"{run_dir} holds a different experiment (config changed); rerun with --fresh to overwrite "
                "it or change 'name'"
            )
    if fresh and run_dir.exists():
        for old in list((run_dir / SHARD_DIR).glob("*.csv")) if (run_dir / SHARD_DIR).exists() else []:
            old.unlink()
        for name in RUN_FILES:
            (run_dir / name).unlink(missing_ok=True)
    (run_dir / SHARD_DIR).mkdir(parents=True, exist_ok=True)
    document = {**config.to_dict(), "fingerprint": config.fingerprint(), "dpbench_version": __version__}
    write_atomic(saved, yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
    return run_dir


def progress_bar(total: int, enabled: bool):
    """A tqdm bar counting trials (disabled with ``--no-progress``)."""
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="trial", disable=not enabled, dynamic_ncols=True, mininterval=0.5)


def write_meta(run_dir: Path, n_jobs: int, started: float, rows: int) -> None:
    """meta.json: package/commit/Python/NumPy versions, workers, wall time of this invocation, row count."""
    meta = {
        "dpbench_version": __version__,
        "commit": git_commit(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "n_jobs": n_jobs,
        "wall_seconds_last_invocation": time.time() - started,
        "rows": rows,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    write_atomic(run_dir / "meta.json", json.dumps(meta, indent=2))
