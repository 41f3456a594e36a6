"""The generic run loop shared by every experiment kind: plan → shards → execute (loky | dask) → assemble.

An experiment kind (registered with :func:`dpbench.registry.register_kind`) supplies four pure pieces:

* ``plan(config, log) -> Plan`` — the tasks (blocks of trials), the row-key columns a task fixes
  (``Plan.key_columns``), the columns identifying a row of the final table (``Plan.coordinates``), and what is
  already known for ``datasets.json`` / ``skipped.json``. A task has a unique ``shard_name``, ``trial_start`` /
  ``trial_stop`` (progress), ``planned_keys()`` (one tuple over ``key_columns`` per row it must return) and
  ``describe()`` (its coordinates in words, for messages);
* ``run_task(task, config) -> rows | TaskResult`` — the rows of one block, a pure function of (task, config) up to
  timing columns (all randomness is seeded from the task's coordinates, see :mod:`dpbench.engine.seeds`); a
  :class:`TaskResult` may add descriptions for ``datasets.json`` or report the block as skipped (data unavailable);
* ``order(table, config, plan) -> row order`` — the sort of the assembled ``trials.csv``;
* ``parse(raw, source) -> config`` — its config schema (the built-in regression kind uses :mod:`dpbench.config`).

This module knows no kind. Nothing is trusted that can be checked:

* a finished block's rows must match its planned keys before its shard is written (atomically, with a header
  claiming shard name, experiment fingerprint, planned-keys digest, row count and checksum — :mod:`.store`);
* on resume every shard on disk is verified against its header and the plan; a shard that fails is reported by
  name, moved to ``shards/damaged/`` and its block re-run; if that re-run fails the run stops naming the shard;
* assembly re-reads every shard and checks exactly one row per planned coordinate, naming what is missing or
  doubled, before ``trials.csv`` is written atomically;
* one run at a time per folder (a lock), temp files of killed runs are cleaned, a full disk is a clear error.
"""

from __future__ import annotations

import functools
import io
import json
import os
import time
import traceback
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from dpbench import registry
from dpbench.config import ConfigError
from dpbench.engine.pages import advice_wanted, huge_page_advice
from dpbench.engine.store import (
    SHARD_DIR,
    RunError,
    ShardError,
    check_shard_header,
    fingerprint_digest,
    keys_digest,
    prepare_run_dir,
    progress_bar,
    quarantine,
    read_shard,
    remove_stale_temp_files,
    run_lock,
    shard_text,
    write_atomic,
    write_meta,
)

Rows = list[dict[str, Any]]
#: bytes of memory one assembled row may take (pandas, ~25 mixed columns); used to refuse runs that cannot fit
BYTES_PER_ROW = 1000
#: how many missing/doubled coordinates an error message lists
SHOWN = 5


@dataclass
class Plan:
    """What a kind's planner returns: the tasks, their row identity, and the descriptions written with the results."""

    tasks: list[Any]
    described: dict[str, Any] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    #: row columns a task's ``planned_keys()`` tuples refer to (its rows are checked against them)
    key_columns: tuple[str, ...] = ("trial",)
    #: row columns that identify a row of ``trials.csv`` (exactly one row per planned combination)
    coordinates: tuple[str, ...] = ("trial",)


@dataclass
class TaskResult:
    """A task's outcome: its rows, plus descriptions for ``datasets.json`` or a skip reason (then no rows)."""

    rows: Rows
    described: dict[str, Any] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)


@dataclass
class TaskFailure:
    """An exception raised by a task in a worker, carried back to the main process."""

    error: str
    traceback: str


def trials_in(tasks: Iterable[Any]) -> int:
    return sum(task.trial_stop - task.trial_start for task in tasks)


def describe(task: Any) -> str:
    return task.describe() if hasattr(task, "describe") else task.shard_name


def check_plan_size(rows: int, what: str, memory_bytes: int | None = None) -> None:
    """Refuse (naming ``what``) a plan whose assembled table cannot fit in this machine's memory."""
    if memory_bytes is None:
        try:
            memory_bytes = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
        except (ValueError, OSError, AttributeError):  # pragma: no cover - non-POSIX
            memory_bytes = 8 * 2**30
    limit = memory_bytes // (2 * BYTES_PER_ROW)
    if rows > limit:
        raise ConfigError(
            f"config field '{what}': the run would produce {rows:.3g} rows (~{rows * BYTES_PER_ROW / 2**30:.3g} GiB "
            f"when assembled) but this machine holds at most ~{limit:.3g}; lower '{what}' or split the run"
        )


def as_task_result(output: Rows | TaskResult) -> TaskResult:
    return output if isinstance(output, TaskResult) else TaskResult(list(output))


def _run_guarded(task: Any, config: Any, run_task: Callable[[Any, Any], Any]) -> tuple[Any, TaskResult | TaskFailure]:
    """Run one task in a worker (without numpy's huge-page advice, :mod:`.pages`); an exception comes back as a
    :class:`TaskFailure` naming it."""
    try:
        with huge_page_advice(advice_wanted()):
            return task, as_task_result(run_task(task, config))
    except Exception as err:  # noqa: BLE001 - reported in the main process with the task's coordinates
        return task, TaskFailure(f"{type(err).__name__}: {err}", traceback.format_exc())


def execute(
    tasks: list[Any], config: Any, n_jobs: int, run_task: Callable[[Any, Any], Any]
) -> Iterator[tuple[Any, TaskResult | TaskFailure]]:
    """Yield (task, result) as tasks finish (any order); ``backend: dask`` runs them on a Dask cluster."""
    guarded = functools.partial(_run_guarded, run_task=run_task)
    if getattr(config, "backend", "loky") == "dask":
        from dpbench.engine.dask_backend import execute_dask

        yield from execute_dask(tasks, config, n_jobs, guarded)
        return
    if n_jobs == 1 or len(tasks) <= 1:
        for task in tasks:
            yield guarded(task, config)
        return
    parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
    for results in parallel(delayed(_run_chunk)(chunk, config, guarded) for chunk in affinity_chunks(tasks, n_jobs)):
        yield from results


#: with data affinity, at least this many chunks per worker (load balance)
CHUNKS_PER_WORKER = 4


def affinity_chunks(tasks: list[Any], n_jobs: int) -> list[list[Any]]:
    """Consecutive tasks with the same ``task.affinity`` (e.g. the dataset draw they load) in one chunk, so one
    worker loads that data once instead of every worker loading it; a task without ``affinity`` is its own chunk.
    Chunks hold at most ⌈len(tasks) / (CHUNKS_PER_WORKER · n_jobs)⌉ tasks, so a run with few datasets still spreads
    over the workers. Results do not depend on the chunking (each task seeds itself)."""
    cap = max(1, -(-len(tasks) // (CHUNKS_PER_WORKER * max(n_jobs, 1))))
    chunks: list[list[Any]] = []
    key: Any = None
    for task in tasks:
        task_key = getattr(task, "affinity", None)
        if not chunks or task_key is None or task_key != key or len(chunks[-1]) >= cap:
            chunks.append([])
        chunks[-1].append(task)
        key = task_key
    return chunks


def _run_chunk(chunk: list[Any], config: Any, guarded: Callable[[Any, Any], Any]) -> list[Any]:
    """Run a chunk in one worker, then call the last task's ``release()`` if it has one: a kind frees data no later
    chunk needs (a finished data draw) before loky's between-call memory check, which restarts a worker that grew
    by > 300 MB (a restart costs a fresh interpreter and every cached dataset)."""
    results = [guarded(task, config) for task in chunk]
    release = getattr(chunk[-1], "release", None)
    if callable(release):
        release()
    return results


# ----------------------------------------------------------------------------------------------------------------
# verification


def key_strings(keys: Iterable[tuple]) -> Counter:
    return Counter(tuple(str(v) for v in key) for key in keys)


def _listing(keys: Iterable[tuple], columns: tuple[str, ...]) -> str:
    keys = list(keys)
    shown = "; ".join(", ".join(f"{c}={v}" for c, v in zip(columns, key, strict=True)) for key in keys[:SHOWN])
    return shown + (f"; … ({len(keys)} in all)" if len(keys) > SHOWN else "")


def compare_keys(found: Counter, planned: Counter, columns: tuple[str, ...]) -> str | None:
    """None if ``found`` holds every planned key exactly once, else a message naming what is missing/doubled/extra."""
    if found == planned:
        return None
    problems = []
    missing = planned - found
    doubled = [k for k, count in found.items() if count > 1 and k in planned]
    extra = [k for k in found if k not in planned]
    if missing:
        problems.append(f"missing {_listing(missing, columns)}")
    if doubled:
        problems.append(f"doubled {_listing(doubled, columns)}")
    if extra:
        problems.append(f"not planned {_listing(extra, columns)}")
    return "; ".join(problems)


def frame_keys(frame: pd.DataFrame, columns: tuple[str, ...]) -> Counter:
    absent = [c for c in columns if c not in frame.columns]
    if absent:
        raise ShardError(f"has no column {absent[0]!r}")
    return Counter(map(tuple, frame[list(columns)].astype(str).itertuples(index=False, name=None)))


def rows_problem(task: Any, rows: Rows, columns: tuple[str, ...]) -> str | None:
    """Check a finished block's rows against its planned keys (before anything is written)."""
    try:
        found = Counter(tuple(str(row[c]) for c in columns) for row in rows)
    except KeyError as err:
        return f"rows lack the key column {err.args[0]!r}"
    return compare_keys(found, key_strings(task.planned_keys()), columns)


def read_verified_shard(path: Path, task: Any, fingerprint: str, plan: Plan) -> tuple[dict[str, Any], pd.DataFrame]:
    """Read a shard and check everything it claims: header, checksum, row count, one row per planned key."""
    header, body = read_shard(path)
    check_shard_header(header, task.shard_name, fingerprint, keys_digest(task.planned_keys()))
    try:
        frame = pd.read_csv(io.StringIO(body))
        keys = frame_keys(pd.read_csv(io.StringIO(body), dtype=str, keep_default_na=False), plan.key_columns)
    except (ValueError, pd.errors.ParserError) as err:
        raise ShardError(f"unparsable CSV ({err})") from None
    if len(frame) != header.get("rows"):
        raise ShardError(f"holds {len(frame)} rows but claims {header.get('rows')}")
    problem = compare_keys(keys, key_strings(task.planned_keys()), plan.key_columns)
    if problem:
        raise ShardError(problem)
    return header, frame


def verified_on_disk(
    tasks: list[Any], shard_dir: Path, fingerprint: str, log: Callable[[str], None]
) -> tuple[list[Any], dict[str, str], dict[str, dict[str, Any]]]:
    """Split the plan into (tasks to run, damaged shard name → reason, shard name → descriptions it carries).

    Cheap check (header + checksum); assembly re-reads and checks every row. Damaged shards are moved to
    ``shards/damaged/`` and reported by name.
    """
    todo, damaged, described = [], {}, {}
    for task in tasks:
        path = shard_dir / task.shard_name
        if not path.exists():
            todo.append(task)
            continue
        try:
            header, _ = read_shard(path)
            check_shard_header(header, task.shard_name, fingerprint, keys_digest(task.planned_keys()))
        except ShardError as err:
            moved = quarantine(path)
            damaged[task.shard_name] = str(err)
            log(f"damaged shard {path}: {err}; moved to {moved}, re-running its block ({describe(task)})")
            todo.append(task)
            continue
        described[task.shard_name] = header.get("described") or {}
    return todo, damaged, described


def merge_described(into: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Merge dataset descriptions (nested mappings merged key by key, first value kept)."""
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merge_described(into[key], value)
        else:
            into.setdefault(key, value)
    return into


# ----------------------------------------------------------------------------------------------------------------
# the loop


def assemble(
    run_dir: Path, plan: Plan, config: Any, order: Callable[..., np.ndarray], skipped_tasks: set[str]
) -> pd.DataFrame:
    """Verify every planned shard, check one row per planned coordinate, write ``trials.csv`` atomically."""
    fingerprint = fingerprint_digest(config.fingerprint())
    frames, missing = [], []
    for task in plan.tasks:
        if task.shard_name in skipped_tasks:
            continue
        path = run_dir / SHARD_DIR / task.shard_name
        if not path.exists():
            missing.append(task)
            continue
        try:
            frames.append(read_verified_shard(path, task, fingerprint, plan)[1])
        except ShardError as err:
            raise RunError(
                f"shard {path} ({describe(task)}) failed verification at assembly: {err}; it changed after it was "
                "written (another process, or the disk) — run the same command again to re-run its block"
            ) from None
    if missing:
        names = ", ".join(f"{t.shard_name} ({describe(t)})" for t in missing[:SHOWN])
        raise RunError(f"assembly: {len(missing)} planned blocks have no shard: {names}")
    if not frames:
        write_atomic(run_dir / "trials.csv", "")
        return pd.DataFrame()
    table = pd.concat(frames, ignore_index=True)
    expected = sum(len(task.planned_keys()) for task in plan.tasks if task.shard_name not in skipped_tasks)
    coordinates = [c for c in plan.coordinates if c in table.columns]
    doubled = table[table.duplicated(coordinates, keep=False)] if coordinates else table.iloc[:0]
    if len(doubled) or len(table) != expected:
        keys = doubled[coordinates].drop_duplicates().itertuples(index=False, name=None)
        raise RunError(
            f"assembly: {len(table)} rows for {expected} planned; doubled coordinates: "
            f"{_listing(keys, tuple(coordinates)) or 'none'} — two dataset or mechanism entries share an identity"
        )
    table = table.iloc[order(table, config, plan)].reset_index(drop=True)
    write_atomic(run_dir / "trials.csv", table.to_csv(index=False))
    return table


def run_tasks(
    todo: list[Any],
    config: Any,
    n_jobs: int,
    kind: Any,
    plan: Plan,
    run_dir: Path,
    damaged: dict[str, str],
    bar: Any,
    log: Callable[[str], None],
) -> tuple[dict[str, dict[str, Any]], dict[str, str], set[str]]:
    """Execute, verify and write each block; return (shard → descriptions, skipped, names of skipped tasks)."""
    fingerprint = fingerprint_digest(config.fingerprint())
    described: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    skipped_tasks: set[str] = set()
    for task, result in execute(todo, config, n_jobs, kind.run_task):
        if isinstance(result, TaskFailure):
            (run_dir / "failed").mkdir(exist_ok=True)
            write_atomic(run_dir / "failed" / f"{task.shard_name}.log", result.traceback)
            prefix = (
                f"damaged shard {task.shard_name} ({damaged[task.shard_name]}) cannot be re-run"
                if task.shard_name in damaged
                else f"block {task.shard_name} failed"
            )
            raise RunError(
                f"{prefix}: {describe(task)}: {result.error} (traceback in {run_dir / 'failed'})"
            )
        if result.skipped and task.shard_name in damaged:
            reasons = "; ".join(result.skipped.values())
            raise RunError(
                f"damaged shard {task.shard_name} ({damaged[task.shard_name]}) cannot be re-run: {describe(task)}: "
                f"{reasons}"
            )
        if result.skipped:
            skipped_tasks.add(task.shard_name)
            for ident, reason in result.skipped.items():
                if ident not in skipped:
                    log(f"SKIPPED {ident}: {reason}")
                skipped[ident] = reason
            bar.update(task.trial_stop - task.trial_start)
            continue
        problem = rows_problem(task, result.rows, plan.key_columns)
        if problem:
            raise RunError(f"block {task.shard_name} ({describe(task)}) returned rows that break its plan: {problem}")
        header = {
            "shard": task.shard_name,
            "fingerprint": fingerprint,
            "keys": keys_digest(task.planned_keys()),
            "rows": len(result.rows),
            "described": result.described,
        }
        body = pd.DataFrame(result.rows).to_csv(index=False)
        write_atomic(run_dir / SHARD_DIR / task.shard_name, shard_text(body, header))
        described[task.shard_name] = result.described
        bar.update(task.trial_stop - task.trial_start)
    return described, skipped, skipped_tasks


def run(config: Any, *, n_jobs: int | None = None, fresh: bool = False, progress: bool = True, log=print) -> Path:
    """Run (or resume) an experiment of any registered kind; return its run directory."""
    kind = registry.get_kind(config.kind)
    started = time.time()
    n_jobs = config.n_jobs if n_jobs is None else n_jobs
    with run_lock(config.run_dir):
        run_dir = prepare_run_dir(config, fresh)
        remove_stale_temp_files(run_dir)
        plan = kind.plan(config, log)
        shard_dir = run_dir / SHARD_DIR
        fingerprint = fingerprint_digest(config.fingerprint())
        todo, damaged, described = verified_on_disk(plan.tasks, shard_dir, fingerprint, log)
        done_trials = trials_in(plan.tasks) - trials_in(todo)
        if done_trials:
            log(f"resuming {run_dir}: {done_trials} trials already done, {len(todo)} blocks to go")
        with progress_bar(trials_in(plan.tasks), progress) as bar:
            bar.update(done_trials)
            new_described, skipped, skipped_tasks = run_tasks(
                todo, config, n_jobs, kind, plan, run_dir, damaged, bar, log
            )
        described.update(new_described)
        for task in plan.tasks:  # plan order, so datasets.json (and any order keyed on it) never depends on timing
            merge_described(plan.described, described.get(task.shard_name, {}))
        plan.skipped = {**plan.skipped, **skipped}
        table = assemble(run_dir, plan, config, kind.order, skipped_tasks)
        write_atomic(run_dir / "datasets.json", json.dumps(plan.described, indent=2, default=float))
        write_atomic(run_dir / "skipped.json", json.dumps(plan.skipped, indent=2))
        write_meta(run_dir, n_jobs, started, len(table))
    return run_dir
