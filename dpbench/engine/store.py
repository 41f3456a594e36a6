"""The run folder and its trial store: self-verifying shards indexed by trial key — every file written atomically.

Layout of ``<output_dir>/<name>/``: ``config.yaml`` (the resolved config of the last invocation),
``shards/<task>-<digest>.csv`` (the store: one finished block of trials each), ``trials.csv`` (the config's current
trials, sorted), ``datasets.json`` / ``skipped.json`` (what the run found), ``meta.json`` (versions, workers, wall
time, how many of the config's trials the table holds), ``.lock`` (held while a run writes the folder).

**A run is a view of the store.** A shard's first line ``#dpbench-shard {json}`` lists its trials — for each the slot
(what the trial is, by value: :mod:`.identity`), the trial key (slot + code version + content digests of the files
it read), its code version and row count — plus the data files' digests, the dataset descriptions, the block's wall
time and the sha256 of the CSV body below it. :func:`load_index` reads every shard, verifies its checksum and name,
and maps each slot to the records that hold it; a planned trial reuses a record with its code version whose files
still have the recorded digests (:func:`record_problem` names why one does not). A shard is never rewritten: a
recomputed trial is written to a new shard; trials a shrunk config no longer plans stay in the store for later.

Every file is replaced atomically (temp file + fsync + rename), so a reader or a crash sees either the old or the
complete new file; a failed write (disk full, ...) removes its temp file.
"""

from __future__ import annotations

import contextlib
import csv
import hashlib
import io
import json
import os
import platform
import shutil
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml

from dpbench import __version__
from dpbench.data._base import file_digest
from dpbench.engine.identity import trial_key
from dpbench.io import atomic
from dpbench.io.provenance import git_commit

SHARD_DIR = "shards"
#: damaged shards are moved here (kept for inspection) before their block is re-run
DAMAGED_DIR = "damaged"
RUN_FILES = ("trials.csv", "datasets.json", "skipped.json")
LOCK_FILE = ".lock"
SHARD_MAGIC = "#dpbench-shard "
SHARD_VERSION = 2
#: hex digits of the trial-key digest in a shard's file name
NAME_DIGITS = 12


class RunError(RuntimeError):
    """A run cannot go on (damaged shard that cannot be re-run, full disk, folder in use, ...); names what and where."""


class ShardError(ValueError):
    """A shard that fails verification; the message says why."""


class OlderShardError(ShardError):
    """A shard in the format of an older dpbench (its trials cannot be reused: seeds and identities changed)."""


# ----------------------------------------------------------------------------------------------------------------
# atomic writes


#: what to do when a run-folder file cannot be written (:func:`dpbench.io.atomic.write_failure`)
ADVICE = {
    "full": "free space and run the same command again (finished blocks are kept)",
    "denied": "choose a writable --output-dir (finished trials already in the store are kept)",
}


def _run_error(_errno: int, words: str) -> RunError:
    return RunError(words)


def atomic_path(path: Path) -> contextlib.AbstractContextManager[Path]:
    """A temporary path next to ``path``; on success it replaces ``path`` atomically, on error it is removed; a full
    disk or a folder that may not be written raises :class:`RunError` in words (:mod:`dpbench.io.atomic`).

    A crash (SIGKILL) leaves at most a hidden ``.<name>.<pid>.tmp`` file, which :func:`remove_stale_temp_files`
    deletes at the next run; ``path`` itself is never half-written.
    """
    return atomic.replace_explained(path, ADVICE, _run_error)


def write_atomic(path: Path, text: str | bytes) -> None:
    """Write ``text`` to ``path`` so that readers see either the old or the complete new file (:class:`RunError`
    in words when the disk is full or the folder may not be written)."""
    atomic.write_atomic(path, text, ADVICE, _run_error)


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


def shard_name(prefix: str, trial_keys: list[str]) -> str:
    """A shard's file name: the task's readable prefix and a digest of the keys of the trials it holds."""
    return f"{prefix}-{digest(chr(10).join(trial_keys))[:NAME_DIGITS]}.csv"


def shard_text(body: str, header: dict[str, Any]) -> str:
    """The file content of a shard: header line (with the body's sha256) + CSV body."""
    header = {"version": SHARD_VERSION, **header, "sha256": digest(body)}
    return SHARD_MAGIC + json.dumps(header, sort_keys=True, default=float) + "\n" + body


#: int64's range: a Python int outside it makes pandas choose another dtype (the body then goes through pandas)
INT64_MIN, INT64_MAX = -(2**63), 2**63 - 1


def _cell_kind(value: Any) -> str:
    """The kind of one row value as pandas' type inference sees it (``other``: left to pandas)."""
    kind = type(value)
    if value is None:
        return "null"
    if kind is bool or kind is np.bool_:
        return "bool"
    if kind is int or kind is np.int64:
        return "int" if INT64_MIN <= value <= INT64_MAX else "other"
    if kind is float or kind is np.float64:
        return "nan" if value != value else "float"
    return "str" if kind is str else "other"


def column_cells(values: list[Any]) -> list[str] | None:
    """One column's CSV cells exactly as ``pd.DataFrame(rows).to_csv(index=False)`` writes them (before quoting),
    or None when the column holds a value this shortcut does not cover (the caller then uses pandas).

    pandas' inference on a list of dicts: only ints → int64 (``str``); ints/floats with None or NaN → float64
    (``repr`` of the float, NaN → empty); only bools → bool; anything else → an object (or string) column whose
    missing values (None, NaN) are empty and the rest ``str(value)`` — ``str`` of a float is its ``repr``."""
    kinds = {_cell_kind(v) for v in values}
    if "other" in kinds:
        return None
    if kinds <= {"int", "float", "null", "nan"} and kinds & {"int", "float"}:
        if kinds == {"int"}:
            return [str(int(v)) for v in values]
        return ["" if v is None or v != v else repr(float(v)) for v in values]
    if kinds == {"bool"}:
        return [str(bool(v)) for v in values]
    return ["" if v is None or (type(v) is not str and v != v) else str(v) for v in values]


def pandas_body(rows: list[dict[str, Any]]) -> str:
    """The literal path: a block's CSV body as pandas writes the rows' DataFrame."""
    return pd.DataFrame(rows).to_csv(index=False)


def csv_body(rows: list[dict[str, Any]]) -> str:
    """A block's CSV body, byte for byte :func:`pandas_body` (pinned by tests/engine/test_shard_body.py), without
    building a DataFrame (~100× less CPU in the run's main process for a few wide rows): columns in order of first
    appearance, a key a row lacks is NaN (empty), cells by :func:`column_cells`, quoting by the ``csv`` module as
    pandas does (minimal, ``"`` doubled, ``\\n`` line ends). Falls back to pandas for any value it does not cover."""
    columns = list(dict.fromkeys(key for row in rows for key in row))
    if not rows or not all(type(c) is str for c in columns):
        return pandas_body(rows)
    cells = []
    for column in columns:
        column_values = [row.get(column, np.nan) for row in rows]
        formatted = column_cells(column_values)
        if formatted is None:
            return pandas_body(rows)
        cells.append(formatted)
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow(columns)
    writer.writerows(zip(*cells, strict=True))
    return out.getvalue()


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
        version = header.get("version") if isinstance(header, dict) else header
        raise OlderShardError(f"shard format {version!r} of an older dpbench (this one reads {SHARD_VERSION})")
    if digest(body) != header.get("sha256"):
        raise ShardError(f"content does not match its checksum (truncated or corrupted; {len(rest)} bytes of data)")
    return header, body


@dataclass(frozen=True)
class Record:
    """One stored trial: where its rows are (shard, first row, row count) and what it is (slot, key, code, data)."""

    shard: str
    slot: str
    key: str
    code: tuple[tuple[str, str], ...]
    data: tuple[tuple[str, str | None], ...]
    start: int
    rows: int
    seconds: float


def header_records(name: str, header: dict[str, Any]) -> list[Record]:
    """The trial records a verified shard header claims; :class:`ShardError` if they are inconsistent."""
    try:
        data = tuple(sorted((str(k), v) for k, v in header["data"].items()))
        trials = header["trials"]
        seconds = float(header.get("seconds", 0.0)) / max(len(trials), 1)
        records, start = [], 0
        for slot, key, rows, code in trials:
            code = tuple((str(part), str(version)) for part, version in code)
            if trial_key(slot, code, dict(data)) != key:
                raise ShardError(f"trial {slot[:12]}… does not match its key")
            records.append(Record(name, slot, key, code, data, start, int(rows), seconds))
            start += int(rows)
    except (KeyError, TypeError, ValueError) as err:
        if isinstance(err, ShardError):
            raise
        raise ShardError(f"header lacks its trial list ({type(err).__name__}: {err})") from None
    if start != header.get("rows"):
        raise ShardError(f"its trials hold {start} rows but it claims {header.get('rows')}")
    if name != shard_name(name.rsplit("-", 1)[0], [r.key for r in records]):
        raise ShardError("its name does not match the trials it holds (renamed or copied over another shard)")
    return records


def verified_records(path: Path) -> tuple[dict[str, Any], list[Record]]:
    """Header and trial records of the shard at ``path``, its checksum and claims verified."""
    header, _ = read_shard(path)
    return header, header_records(path.name, header)


@dataclass
class StoreIndex:
    """Every verified record of a run folder's store by slot, and the headers' dataset descriptions by shard."""

    by_slot: dict[str, list[Record]] = field(default_factory=dict)
    by_shard: dict[str, list[Record]] = field(default_factory=dict)
    described: dict[str, dict[str, Any]] = field(default_factory=dict)
    #: damaged shard name → why; slot → damaged shard that claimed it (when its header could still be read)
    damaged: dict[str, str] = field(default_factory=dict)
    damaged_slots: dict[str, str] = field(default_factory=dict)

    def damaged_for(self, task: Any, slots: Iterable[str]) -> list[str]:
        """The damaged shards that held trials of ``task``: by the slots their header claimed, or by the task's
        readable name prefix when the header itself is lost."""
        prefix = task.shard_name.removesuffix(".csv")
        names = {self.damaged_slots[s] for s in slots if s in self.damaged_slots}
        names |= {name for name in self.damaged if name.rsplit("-", 1)[0] == prefix}
        return sorted(names)

    def add(self, records: list[Record], described: dict[str, Any]) -> None:
        for record in records:
            self.by_slot.setdefault(record.slot, []).append(record)
        if records:
            self.by_shard[records[0].shard] = records
            self.described[records[0].shard] = described or {}


def load_index(shard_dir: Path, log: Callable[[str], None] | None = None, repair: bool = True) -> StoreIndex:
    """Read and verify every shard of the store. A damaged shard is named (``log``) and, with ``repair``, moved to
    ``shards/damaged/`` (its trials are then missing and run again); without ``repair`` (a dry run) it is left."""
    index = StoreIndex()
    paths = sorted(shard_dir.glob("*.csv"), key=lambda p: (p.stat().st_mtime_ns, p.name)) if shard_dir.is_dir() else []
    older = []
    for path in paths:
        try:
            header, records = verified_records(path)
        except OlderShardError:
            older.append(path)
            continue
        except ShardError as err:
            index.damaged[path.name] = str(err)
            index.damaged_slots.update({slot: path.name for slot in claimed_slots(path)})
            if repair:
                moved = quarantine(path)
                if log:
                    log(f"damaged shard {path}: {err}; moved to {moved}, its trials are run again")
            elif log:
                log(f"damaged shard {path}: {err} (a run moves it to shards/damaged/ and runs its trials again)")
            continue
        index.add(records, header.get("described") or {})
    if older and log:  # one line for a whole run folder of an older dpbench, not one per shard
        where = f"moved to {shard_dir / DAMAGED_DIR}" if repair else "a run moves them to shards/damaged/"
        log(
            f"{len(older)} shards in {shard_dir} were written by an older dpbench (another seed scheme); {where} "
            "and their trials are run again"
        )
    if older and repair:
        for path in older:
            quarantine(path)
    return index


def claimed_slots(path: Path) -> list[str]:
    """The slots a (damaged) shard's header line claims, if that line can still be read; else none."""
    try:
        with open(path, "rb") as handle:
            first = handle.readline()
        header = json.loads(first[len(SHARD_MAGIC) :].decode("utf-8"))
        return [str(trial[0]) for trial in header["trials"]]
    except (OSError, ValueError, KeyError, TypeError, IndexError):
        return []


def current_digests(data: tuple[tuple[str, str | None], ...]) -> dict[str, str | None]:
    return {path: file_digest(path) for path, _ in data}


def record_problem(record: Record, code: tuple[tuple[str, str], ...], dataset: str, mechanism: str) -> str | None:
    """None if a stored trial is still valid for a planned trial of code version ``code``, else why not (in words
    naming the dataset or the mechanism: "data of dataset 'mine' changed (mine.csv sha256 1a2b… → 9f8e…)")."""
    if record.code != code:
        old, new = dict(record.code), dict(code)
        if old.get("dpbench") != new.get("dpbench"):
            return f"dpbench version changed ({old.get('dpbench')} → {new.get('dpbench')})"
        parts = sorted(part for part in set(old) | set(new) if old.get(part) != new.get(part))
        words = []
        for part in parts:
            what, _, name = part.partition(" ")
            words.append(f"code of {what} '{name}'" if name else f"code of {what}")
        return " and ".join(words) + " changed"
    now = current_digests(record.data)
    for path, recorded in record.data:
        if now[path] != recorded:
            change = "is gone" if now[path] is None else f"sha256 {str(recorded)[:12]}… → {now[path][:12]}…"
            return f"data of dataset '{dataset}' changed ({Path(path).name} {change})"
    return None


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


def prepare_run_dir(config: Any, fresh: bool) -> Path:
    """Create the run folder (``--fresh``: empty its store and tables first) and record the config it now shows.

    A changed config is no reason to refuse a folder: every stored trial is identified by what it is, so the run
    reuses the ones the new config still plans and computes the rest (:func:`load_index`).
    """
    run_dir = config.run_dir
    if fresh and run_dir.exists():
        shard_dir = run_dir / SHARD_DIR
        for old in list(shard_dir.glob("*.csv")) if shard_dir.exists() else []:
            old.unlink()
        for name in (*RUN_FILES, "meta.json"):
            (run_dir / name).unlink(missing_ok=True)
    (run_dir / SHARD_DIR).mkdir(parents=True, exist_ok=True)
    document = {**config.to_dict(), "fingerprint": config.fingerprint(), "dpbench_version": __version__}
    write_atomic(run_dir / "config.yaml", yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
    return run_dir


def progress_bar(total: int, enabled: bool):
    """A tqdm bar counting trials (disabled with ``--no-progress``)."""
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="trial", disable=not enabled, dynamic_ncols=True, mininterval=0.5)


def write_meta(run_dir: Path, n_jobs: int, started: float, rows: int, coverage: dict[str, Any]) -> None:
    """meta.json: package/commit/Python/NumPy versions, workers, wall time of this invocation, row count, and how
    many of the config's trials the table holds (``coverage``: trials, planned, partial "N of M trials", selection)."""
    meta = {
        "dpbench_version": __version__,
        "commit": git_commit(),
        "python": platform.python_version(),
        "numpy": np.__version__,
        "n_jobs": n_jobs,
        "wall_seconds_last_invocation": time.time() - started,
        "rows": rows,
        **coverage,
        "finished": time.strftime("%Y-%m-%dT%H:%M:%S%z"),
    }
    write_atomic(run_dir / "meta.json", json.dumps(meta, indent=2))
