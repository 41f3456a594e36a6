"""The run folder: config snapshot, self-verifying shards, assembled ``trials.csv``, ``meta.json`` — written atomically.

Layout of ``<output_dir>/<name>/``: ``config.yaml`` (resolved config + fingerprint), ``shards/<task>.csv`` (one
finished block of trials each), ``trials.csv`` (all shards, sorted), ``datasets.json`` / ``skipped.json`` (what the
run found), ``meta.json`` (versions, workers, wall time), ``.lock`` (held while a run writes the folder).

Every file is replaced atomically (temp file + fsync + rename), so a reader or a crash sees either the old or the
complete new file; a failed write (disk full, ...) removes its temp file. A shard carries what it claims in a first
header line ``#dpbench-shard {json}``: the task's shard name, the experiment fingerprint, a digest of the task's
planned row keys, the row count and the sha256 of the CSV body below it (see :func:`read_shard`).
"""

from __future__ import annotations

import contextlib
import errno
import hashlib
import json
import os
import platform
import shutil
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from dpbench import __version__
from dpbench.config import ConfigError

SHARD_DIR = "shards"
#: damaged shards are moved here (kept for inspection) before their block is re-run
DAMAGED_DIR = "damaged"
RUN_FILES = ("trials.csv", "datasets.json", "skipped.json")
LOCK_FILE = ".lock"
SHARD_MAGIC = "#dpbench-shard "
SHARD_VERSION = 1


class RunError(RuntimeError):
    """A run cannot go on (damaged shard that cannot be re-run, full disk, folder in use, ...); names what and where."""


class ShardError(ValueError):
    """A shard that fails verification; the message says why."""


# ----------------------------------------------------------------------------------------------------------------
# atomic writes


@contextlib.contextmanager
def atomic_path(path: Path) -> Iterator[Path]:
    """Yield a temporary path next to ``path``; on success it replaces ``path`` atomically, on error it is removed.

    A crash (SIGKILL) leaves at most a hidden ``.<name>.<pid>.tmp`` file, which :func:`remove_stale_temp_files`
    deletes at the next run; ``path`` itself is never half-written.
    """
    path = Path(path)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        yield tmp
        with open(tmp, "rb+") as handle:
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException as err:
        with contextlib.suppress(OSError):
            tmp.unlink()
        if isinstance(err, OSError) and err.errno in (errno.ENOSPC, errno.EDQUOT):
            raise RunError(
                f"disk full while writing {path} ({os.strerror(err.errno)}); nothing half-written was left — free "
                "space and run the same command again (finished blocks are kept)"
            ) from err
        raise


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write ``text`` to ``path`` so that readers see either the old or the complete new file."""
    data = text.encode("utf-8") if isinstance(text, str) else text
    with atomic_path(path) as tmp, open(tmp, "wb") as handle:
        handle.write(data)


def _writer_alive(tmp: Path) -> bool:
    """True if the process that names ``tmp`` (``.<name>.<pid>.tmp``) still runs (e.g. a ``dpbench plot``)."""
    pid = tmp.name.rsplit(".", 2)[-2]
    if not pid.isdigit() or int(pid) == os.getpid():
        return False
    try:
        os.kill(int(pid), 0)
    except ProcessLookupError:
        return False
    except OSError:  # exists, owned by someone else
        return True
    return True


def remove_stale_temp_files(run_dir: Path) -> int:
    """Delete temp files killed processes left behind (call with the run lock held); return how many."""
    folders = (run_dir, run_dir / SHARD_DIR)
    stale = [p for f in folders if f.is_dir() for p in f.glob(".*.tmp") if not _writer_alive(p)]
    for path in stale:
        with contextlib.suppress(OSError):
            path.unlink()
    return len(stale)


# ----------------------------------------------------------------------------------------------------------------
# shards


def digest(text: str | bytes) -> str:
    return hashlib.sha256(text.encode("utf-8") if isinstance(text, str) else text).hexdigest()


def keys_digest(keys: list[tuple]) -> str:
    """Order-free digest of a task's planned row keys (values compared as strings, as they read back from CSV)."""
    return digest("\n".join(sorted("\x1f".join(str(v) for v in key) for key in keys)))


def fingerprint_digest(fingerprint: dict[str, Any]) -> str:
    return digest(json.dumps(fingerprint, sort_keys=True, default=str))


def shard_text(body: str, header: dict[str, Any]) -> str:
    """The file content of a shard: header line (with the body's row count and sha256) + CSV body."""
    header = {"version": SHARD_VERSION, **header, "sha256": digest(body)}
    return SHARD_MAGIC + json.dumps(header, sort_keys=True, default=float) + "\n" + body


def read_shard(path: Path) -> tuple[dict[str, Any], str]:
    """(header, CSV body) of a shard; :class:`ShardError` if it is unreadable or its body fails its checksum."""
    try:
        raw = path.read_bytes()
    except OSError as err:
        raise ShardError(f"unreadable ({err.strerror})") from None
    first, newline, rest = raw.partition(b"\n")
    if not first.startswith(SHARD_MAGIC.encode()):
        raise ShardError("no dpbench shard header (empty, cut short, or written by an older dpbench)")
    if not newline:
        raise ShardError("cut short inside its header")
    try:
        header = json.loads(first[len(SHARD_MAGIC) :].decode("utf-8"))
        body = rest.decode("utf-8")
    except (UnicodeDecodeError, json.JSONDecodeError):
        raise ShardError("corrupted header") from None
    if not isinstance(header, dict) or header.get("version") != SHARD_VERSION:
        raise ShardError(f"unknown shard format {header.get('version') if isinstance(header, dict) else header!r}")
    if digest(body) != header.get("sha256"):
        raise ShardError(f"content does not match its checksum (truncated or corrupted; {len(rest)} bytes of data)")
    return header, body


def check_shard_header(header: dict[str, Any], name: str, fingerprint: str, planned: str) -> None:
    """Raise :class:`ShardError` unless the header claims this task of this experiment."""
    if header.get("shard") != name:
        raise ShardError(f"holds task {header.get('shard')!r}, not this one")
    if header.get("fingerprint") != fingerprint:
        raise ShardError("was written by a different experiment (config changed)")
    if header.get("keys") != planned:
        raise ShardError("claims other trials than this task plans (trial_block or grid changed)")


def quarantine(path: Path) -> Path:
    """Move a damaged shard to ``shards/damaged/`` (kept for inspection) and return its new path."""
    target_dir = path.parent / DAMAGED_DIR
    target_dir.mkdir(exist_ok=True)
    target = target_dir / f"{path.name}.{time.strftime('%Y%m%dT%H%M%S')}.{os.getpid()}"
    shutil.move(str(path), target)
    return target


# ----------------------------------------------------------------------------------------------------------------
# the run folder


@contextlib.contextmanager
def run_lock(run_dir: Path) -> Iterator[None]:
    """Hold an exclusive lock on the run folder; a second run on the same folder stops with a clear message.

    ``flock`` locks die with their process, so a killed run never leaves a stale lock behind.
    """
    run_dir.mkdir(parents=True, exist_ok=True)
    try:
        import fcntl
    except ImportError:  # pragma: no cover - non-POSIX: no locking
        yield
        return
    path = run_dir / LOCK_FILE
    handle = open(path, "a+", encoding="utf-8")
    try:
        try:
            fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            handle.seek(0)
            owner = handle.read().strip() or "unknown pid"
            raise RunError(
                f"{run_dir} is in use by another dpbench run ({owner}); wait for it to finish, or give this run "
                "another 'name' or --output-dir"
            ) from None
        handle.seek(0)
        handle.truncate()
        handle.write(f"pid {os.getpid()} on {platform.node()} since {time.strftime('%Y-%m-%dT%H:%M:%S')}")
        handle.flush()
        yield
    finally:
        handle.close()


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
        try:
            previous = yaml.safe_load(saved.read_text(encoding="utf-8")) or {}
        except yaml.YAMLError:
            previous = {}
        if not isinstance(previous, dict) or previous.get("fingerprint") != config.fingerprint():
            raise ConfigError(
                f"{run_dir} holds a different experiment (config changed); rerun with --fresh to overwrite "
                "it or change 'name'"
            )
    if fresh and run_dir.exists():
        shard_dir = run_dir / SHARD_DIR
        for old in list(shard_dir.glob("*.csv")) if shard_dir.exists() else []:
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
