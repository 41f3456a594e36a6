"""The generic run loop shared by every experiment kind: plan → store → execute (loky | dask) → assemble.

An experiment kind (registered with :func:`dpbench.registry.register_kind`) supplies four pure pieces:

* ``plan(config, log) -> Plan`` — the tasks (blocks of trials), the row-key columns a task fixes
  (``Plan.key_columns``), the columns identifying a row of the final table (``Plan.coordinates``), and what is
  already known for ``datasets.json`` / ``skipped.json``. It checks every input it can in the main process (the
  regression kind opens each user CSV) and writes nothing. A task has a ``shard_name`` (readable prefix of its
  shard's file name), ``trial_start`` / ``trial_stop``, ``planned_keys()`` (one tuple over ``key_columns`` per row),
  ``describe()`` (its coordinates in words), ``trials()`` (its :class:`~dpbench.engine.identity.Trial` list: what
  each trial is, by value) and ``subset(handles)`` (tasks running exactly those of its trials);
* ``run_task(task, config) -> rows | TaskResult`` — the rows of one block, a pure function of (task, config) up to
  timing columns (all randomness is seeded from the trials' values, see :mod:`dpbench.engine.seeds`); a
  :class:`TaskResult` may add descriptions for ``datasets.json``, the files the block read (``reads``), or report
  the block as skipped (data unavailable);
* ``order(table, config, plan) -> row order`` — the sort of the assembled ``trials.csv``;
* ``parse(raw, source) -> config`` — its config schema (the built-in regression kind uses :mod:`dpbench.config`).

This module knows no kind. A run is a view of the folder's trial store (:mod:`.store`): every planned trial that
the store holds — same slot, same code version, every file it read unchanged — is reused bit for bit; the others run
(those whose stored version went stale are named with the reason, per group); ``trials.csv`` holds exactly the
config's trials. Nothing is trusted that can be checked:

* a finished block's rows must match its trials' planned keys before its shard is written (atomically, with a
  header listing its trials' slots, keys, code versions and row counts, the files read and the body's checksum);
* at start every shard is verified (checksum, name, trial keys); a damaged one is named, moved to
  ``shards/damaged/``, and its trials run again;
* assembly re-reads every shard it takes trials from and checks exactly one row per planned coordinate, naming what
  is missing or doubled, before ``trials.csv`` is written atomically;
* one run at a time per folder (a lock), temp files of killed runs are cleaned, a full disk or a read-only folder is
  one line naming the path, Ctrl-C one line saying what is kept.
"""

from __future__ import annotations

import functools
import io
import json
import os
import signal
import threading
import time
import traceback
import warnings
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
from dpbench.engine.identity import Trial, trial_key
from dpbench.engine.pages import advice_wanted, huge_page_advice
from dpbench.engine.store import ADVICE as STORE_ADVICE
from dpbench.engine.store import (
    SHARD_DIR,
    Record,
    RunError,
    ShardError,
    StoreIndex,
    csv_body,
    header_records,
    load_index,
    prepare_run_dir,
    progress_bar,
    quarantine,
    read_shard,
    record_problem,
    remove_stale_temp_files,
    run_lock,
    shard_name,
    shard_text,
    write_atomic,
    write_meta,
)
from dpbench.engine.survey import Selection, plan_lines, select
from dpbench.io.atomic import write_failure

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
    #: a kind's last touch to the merged descriptions (fields that depend on the config, not on a block)
    finish_described: Callable[[dict[str, Any]], dict[str, Any]] | None = None


@dataclass
class TaskResult:
    """A task's outcome: its rows, plus descriptions for ``datasets.json`` or a skip reason (then no rows)."""

    rows: Rows
    described: dict[str, Any] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)
    #: files the block read → their sha256 (part of each of its trials' keys)
    reads: dict[str, str | None] = field(default_factory=dict)
    #: wall seconds of the block in its worker (the store's per-trial cost, for estimates)
    seconds: float = 0.0


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
        start = time.perf_counter()
        with huge_page_advice(advice_wanted()):
            result = as_task_result(run_task(task, config))
        result.seconds = time.perf_counter() - start
        return task, result
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
    main = os.getpid()
    outputs = parallel(delayed(_run_chunk)(chunk, config, guarded, main) for chunk in affinity_chunks(tasks, n_jobs))
    try:
        for results in outputs:
            yield from results
    finally:  # stopped early (Ctrl-C, a failed block): cancel the rest now
        outputs.close()


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


def ignore_interrupts(main_pid: int | None) -> None:
    """In a worker process (not ``main_pid``, the run's own process): leave Ctrl-C (SIGINT, sent to the terminal's
    whole process group) to the main process, which stops the run, names what is kept and shuts the workers down
    (no traceback per worker)."""
    if main_pid is not None and os.getpid() != main_pid and threading.current_thread() is threading.main_thread():
        signal.signal(signal.SIGINT, signal.SIG_IGN)


def _run_chunk(
    chunk: list[Any], config: Any, guarded: Callable[[Any, Any], Any], main_pid: int | None = None
) -> list[Any]:
    """Run a chunk in one worker, then call the last task's ``release()`` if it has one: a kind frees data no later
    chunk needs (a finished data draw) before loky's between-call memory check, which restarts a worker that grew
    by > 300 MB (a restart costs a fresh interpreter and every cached dataset)."""
    ignore_interrupts(main_pid)
    results = [guarded(task, config) for task in chunk]
    release = getattr(chunk[-1], "release", None)
    if callable(release):
        release()
    return results


class RunInterrupted(Exception):
    """Ctrl-C during a run; the message (also logged the moment Ctrl-C arrives, before the workers are shut down)
    says how many trials the store keeps and that the same command resumes."""


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
    strings = [frame[c].to_numpy().astype(str) for c in columns]  # numpy's conversion: ~100× pandas' astype(str)
    return Counter(zip(*strings, strict=True))


def rows_by_trial(task: Any, trials: list[Trial], rows: Rows, columns: tuple[str, ...]) -> list[Rows]:
    """A finished block's rows cut per trial (in ``trials`` order), after checking them against the trials' planned
    keys (before anything is written); :class:`RunError` naming the block and what is wrong otherwise."""
    planned = [tuple(str(v) for v in key) for trial in trials for key in trial.keys]
    try:
        found = [tuple(str(row[c]) for c in columns) for row in rows]
    except KeyError as err:
        problem: str | None = f"rows lack the key column {err.args[0]!r}"
    else:
        problem = compare_keys(Counter(found), Counter(planned), columns)
    if problem:
        raise RunError(f"block {task.shard_name} ({describe(task)}) returned rows that break its plan: {problem}")
    owner = {tuple(str(v) for v in key): i for i, trial in enumerate(trials) for key in trial.keys}
    cut: list[Rows] = [[] for _ in trials]
    for key, row in zip(found, rows, strict=True):
        cut[owner[key]].append(row)
    return cut


def merge_described(into: dict[str, Any], new: dict[str, Any]) -> dict[str, Any]:
    """Merge dataset descriptions (nested mappings merged key by key, first value kept)."""
    for key, value in new.items():
        if isinstance(value, dict) and isinstance(into.get(key), dict):
            merge_described(into[key], value)
        else:
            into.setdefault(key, value)
    return into


# ----------------------------------------------------------------------------------------------------------------
# the plan against the store


@dataclass
class Planned:
    """The plan's trials (plan order) with the task holding each, and what the store already has for them."""

    items: list[tuple[Any, Trial]]
    chosen: dict[str, Record] = field(default_factory=dict)
    #: slot → why its stored version is stale (naming the dataset or mechanism)
    stale: dict[str, str] = field(default_factory=dict)

    @property
    def total(self) -> int:
        return len(self.items)


def planned_trials(plan: Plan) -> list[tuple[Any, Trial]]:
    return [(task, trial) for task in plan.tasks for trial in task.trials()]


def match_store(items: list[tuple[Any, Trial]], index: StoreIndex) -> Planned:
    """For each planned trial, the stored record still valid for it (same slot and code version, files unchanged),
    or — when the store holds only stale versions — the reason of the latest one."""
    planned = Planned(items)
    for _, trial in items:
        records = index.by_slot.get(trial.slot)
        if not records:
            continue
        dataset, mechanism, _ = trial.group
        problems = [record_problem(r, trial.code, dataset, mechanism) for r in records]
        valid = [r for r, p in zip(records, problems, strict=True) if p is None]
        if valid:
            planned.chosen[trial.slot] = valid[0]
        else:
            planned.stale[trial.slot] = problems[-1]
    return planned


def tasks_to_run(items: list[tuple[Any, Trial]], done: Callable[[Trial], bool]) -> list[Any]:
    """The tasks running exactly the planned trials not ``done``: whole tasks, or their ``subset``."""
    by_task: dict[int, tuple[Any, list[Trial]]] = {}
    for task, trial in items:
        by_task.setdefault(id(task), (task, []))[1].append(trial)
    todo = []
    for task, trials in by_task.values():
        missing = [trial for trial in trials if not done(trial)]
        if len(missing) == len(trials):
            todo.append(task)
        elif missing:
            todo.extend(task.subset([trial.handle for trial in missing]))
    return todo


# ----------------------------------------------------------------------------------------------------------------
# the loop


def store_block(task: Any, result: TaskResult, plan: Plan, shard_dir: Path) -> tuple[str, dict[str, Any], list[Record]]:
    """Check a finished block's rows against its trials and write them as one shard; return its name, header and
    records."""
    trials = task.trials()
    cut = rows_by_trial(task, trials, result.rows, plan.key_columns)
    reads = dict(sorted(result.reads.items()))
    keys = [trial_key(t.slot, t.code, reads) for t in trials]
    name = shard_name(task.shard_name.removesuffix(".csv"), keys)
    header = {
        "shard": name,
        "trials": [
            [t.slot, key, len(rows), [list(part) for part in t.code]]
            for t, key, rows in zip(trials, keys, cut, strict=True)
        ],
        "data": reads,
        "rows": len(result.rows),
        "seconds": result.seconds,
        "described": result.described,
    }
    body = csv_body([row for rows in cut for row in rows])  # byte for byte pandas' to_csv, no DataFrame
    write_atomic(shard_dir / name, shard_text(body, header))
    return name, header, header_records(name, header)


def run_tasks(
    todo: list[Any],
    config: Any,
    n_jobs: int,
    kind: Any,
    plan: Plan,
    run_dir: Path,
    index: StoreIndex,
    planned: Planned,
    bar: Any,
    log: Callable[[str], None],
    on_interrupt: Callable[[], None] = lambda: None,
) -> tuple[dict[str, str], set[str]]:
    """Execute, verify and store each block; return (skipped datasets → reason, slots of skipped trials).
    Ctrl-C calls ``on_interrupt`` at once, before the workers (or a Dask cluster) are shut down."""
    skipped: dict[str, str] = {}
    skipped_slots: set[str] = set()
    outcomes = execute(todo, config, n_jobs, kind.run_task)
    with warnings.catch_warnings():  # joblib's notes on tasks cancelled by an early stop (Ctrl-C, a failure)
        warnings.filterwarnings("ignore", message=r"\d+ tasks", category=UserWarning)
        try:
            for task, result in outcomes:
                lost = index.damaged_for(task, (t.slot for t in task.trials())) if index.damaged else []
                prefix = (
                    f"damaged shard {lost[0]} ({index.damaged[lost[0]]}) cannot be re-run"
                    if lost
                    else f"block {task.shard_name} failed"
                )
                if isinstance(result, TaskFailure):
                    (run_dir / "failed").mkdir(exist_ok=True)
                    write_atomic(run_dir / "failed" / f"{task.shard_name}.log", result.traceback)
                    raise RunError(f"{prefix}: {describe(task)}: {result.error} (traceback in {run_dir / 'failed'})")
                if result.skipped and lost:
                    raise RunError(f"{prefix}: {describe(task)}: {'; '.join(result.skipped.values())}")
                if result.skipped:
                    skipped_slots.update(trial.slot for trial in task.trials())
                    for ident, reason in result.skipped.items():
                        if ident not in skipped:
                            log(f"SKIPPED {ident}: {reason}")
                        skipped[ident] = reason
                    bar.update(task.trial_stop - task.trial_start)
                    continue
                name, header, records = store_block(task, result, plan, run_dir / SHARD_DIR)
                index.add(records, header["described"])
                for record in records:
                    planned.chosen[record.slot] = record
                bar.update(task.trial_stop - task.trial_start)
        except KeyboardInterrupt:
            on_interrupt()
            raise
        finally:  # stopped early (Ctrl-C, a failed block): end the workers now, not at garbage collection
            outcomes.close()
    return skipped, skipped_slots


def fixed_columns(part: pd.DataFrame, values: list[tuple[tuple[str, Any], ...]]) -> pd.DataFrame:
    """Set the columns whose values are positions in the current config (ε index, curve label) row by row."""
    if not values or not values[0]:
        return part
    columns = {column: [row[j][1] for row in values] for j, (column, _) in enumerate(values[0])}
    return part.assign(**columns)


#: assembly parses the shards that share a header line in one ``read_csv`` (:func:`joint_frame`); False: one
#: ``read_csv`` per shard, the literal path (tests/engine/test_shard_body.py pins the two byte for byte)
JOINT_PARSE = True
#: the largest integer a float64 holds exactly; an integral float beyond it may parse differently jointly
EXACT_INTEGERS = 2.0**53
BOOL_WORDS = ("True", "False", "TRUE", "FALSE", "true", "false")


def joint_parse_is_exact(frame: pd.DataFrame) -> bool:
    """True if parsing several shards jointly gave what parsing each alone and concatenating gives.

    Per shard, ``read_csv`` infers a column's dtype from that shard's tokens; ``pd.concat`` then takes the common
    dtype (int64 + float64 → float64, bool + NaN → object, ...), which is what the joint inference gives — except
    (a) in a text column that holds, in some shard, only numbers or booleans: that shard would have parsed them
    (then written ``repr``/``str`` of the parsed value), the joint parse keeps the text; (b) an integral float
    beyond 2⁵³, which an int64 shard converts while the joint parse reads it as a float token. Either → False."""
    for name in frame.columns:
        column = frame[name]
        kind = column.dtype.kind
        if kind == "f":
            values = column.to_numpy()
            big = np.abs(values) > EXACT_INTEGERS
            if big.any() and (values[big] == np.floor(values[big])).any():
                return False
        elif kind not in "iub":
            present = column.dropna()
            if len(present) and (
                pd.to_numeric(present.astype(str), errors="coerce").notna().any() or present.isin(BOOL_WORDS).any()
            ):
                return False
    return True


def line_rows(body: str) -> int | None:
    """The rows of a CSV body (after its header line) when each is one line — no quoted field holds a line break:
    every line has an even number of ``"`` —, else None."""
    if not body.endswith("\n"):
        return None
    lines = body.split("\n")
    if '"' in body and any(line.count('"') % 2 for line in lines):
        return None
    return len(lines) - 2


def joint_frame(bodies: list[str]) -> tuple[pd.DataFrame, list[int]] | None:
    """The rows of shards sharing a header line, parsed by one ``read_csv``, and each shard's row count; None when
    the joint parse could differ from per-shard parsing (:func:`joint_parse_is_exact`) or the rows cannot be
    counted by lines (:func:`line_rows`; an empty shard has no dtypes to share)."""
    counts = [line_rows(body) for body in bodies]
    if None in counts or min(counts) < 1:
        return None
    text = bodies[0] + "".join(body.partition("\n")[2] for body in bodies[1:])
    try:
        frame = pd.read_csv(io.StringIO(text))
    except (ValueError, pd.errors.ParserError):
        return None
    if len(frame) != sum(counts) or not joint_parse_is_exact(frame):
        return None
    return frame, counts


def fixed_values(items: list[tuple[Trial, Record]]) -> list[tuple[tuple[str, Any], ...]]:
    """The fixed columns' values (:attr:`Trial.fixed`) of each row the ``items`` trials hold, in order."""
    return [trial.fixed for trial, record in items for _ in range(record.rows)]


def shard_part(
    path: Path, frame: pd.DataFrame, items: list[tuple[Trial, Record]], claimed: int, plan: Plan
) -> pd.DataFrame:
    """The rows of the ``items`` trials in a shard's parsed ``frame`` (``claimed`` rows by its header) with their
    fixed columns set, keys checked against the trials' planned keys; :class:`ShardError` naming what is wrong."""
    if len(frame) != claimed:
        raise ShardError(f"holds {len(frame)} rows but its trials claim more or fewer")
    rows = np.concatenate([np.arange(r.start, r.start + r.rows) for _, r in items])
    part = fixed_columns(frame.iloc[rows].reset_index(drop=True), fixed_values(items))
    problem = compare_keys(
        frame_keys(part, plan.key_columns),
        key_strings(key for trial, _ in items for key in trial.keys),
        plan.key_columns,
    )
    if problem:
        raise ShardError(problem)
    return part


def shard_failure(path: Path, err: Exception) -> RunError:
    moved = quarantine(path) if path.exists() else path
    return RunError(
        f"shard {path} failed verification at assembly: {err}; it changed after it was written (another "
        f"process, or the disk) and was moved to {moved} — run the same command again to re-run its trials"
    )


def group_part(
    bodies: dict[str, str], by_shard: dict[str, list[tuple[Trial, Record]]], index: StoreIndex, plan: Plan
) -> pd.DataFrame | None:
    """The wanted rows of shards sharing a header line (``bodies``, plan order) from one joint parse, keys checked
    per shard; None when it cannot be done exactly (the caller then reads each shard alone, which names a bad one)."""
    names = list(bodies)
    joint = joint_frame([bodies[name] for name in names])
    if joint is None:
        return None
    frame, counts = joint
    offsets = np.cumsum([0, *counts])
    pieces = []
    for name, offset, count in zip(names, offsets, counts, strict=False):
        if count != sum(r.rows for r in index.by_shard[name]):
            return None
        pieces += [np.arange(offset + r.start, offset + r.start + r.rows) for _, r in by_shard[name]]
    items = [item for name in names for item in by_shard[name]]
    if any(c not in frame.columns for c in plan.key_columns):
        return None
    part = fixed_columns(frame.iloc[np.concatenate(pieces)].reset_index(drop=True), fixed_values(items))
    found = [tuple(s) for s in zip(*(part[c].to_numpy().astype(str) for c in plan.key_columns), strict=True)]
    start = 0
    for name in names:
        planned = key_strings(key for trial, _ in by_shard[name] for key in trial.keys)
        stop = start + sum(r.rows for _, r in by_shard[name])
        if Counter(found[start:stop]) != planned:
            return None
        start = stop
    return part


def read_parts(
    run_dir: Path, by_shard: dict[str, list[tuple[Trial, Record]]], index: StoreIndex, plan: Plan
) -> list[tuple[list[str], pd.DataFrame]]:
    """The wanted rows of every shard, as (shard names, their rows in that order) parts: shards sharing a header
    line parsed jointly (:func:`group_part`, with ``JOINT_PARSE``), the others one by one (:func:`shard_part`)."""
    bodies: dict[str, str] = {}
    for name in by_shard:
        path = run_dir / SHARD_DIR / name
        try:
            bodies[name] = read_shard(path)[1]
        except ShardError as err:
            raise shard_failure(path, err) from None
    groups: dict[str, dict[str, str]] = {}
    for name, body in bodies.items():
        groups.setdefault(body.partition("\n")[0] if JOINT_PARSE else name, {})[name] = body
    parts = []
    for group in groups.values():
        part = group_part(group, by_shard, index, plan) if len(group) > 1 else None
        if part is not None:
            parts.append((list(group), part))
            continue
        for name, body in group.items():
            path = run_dir / SHARD_DIR / name
            claimed = sum(r.rows for r in index.by_shard[name])
            try:
                parts.append(([name], shard_part(path, pd.read_csv(io.StringIO(body)), by_shard[name], claimed, plan)))
            except (ShardError, ValueError, pd.errors.ParserError) as err:
                raise shard_failure(path, err) from None
    return parts


def in_plan_order(parts: list[tuple[list[str], pd.DataFrame]], by_shard: dict[str, list]) -> pd.DataFrame:
    """The parts' rows concatenated in plan order (shard by shard as ``by_shard`` lists them, each shard's trials
    in order), as the literal path's one ``pd.concat`` of per-shard parts gives them."""
    table = pd.concat([part for _, part in parts], ignore_index=True)
    if len(parts) == 1:
        return table
    sizes = {name: sum(r.rows for _, r in items) for name, items in by_shard.items()}
    starts = dict(zip(sizes, np.cumsum([0, *sizes.values()]), strict=False))
    position = np.concatenate([np.arange(starts[n], starts[n] + sizes[n]) for names, _ in parts for n in names])
    return table.iloc[np.argsort(position, kind="stable")].reset_index(drop=True)


def assemble(
    run_dir: Path,
    plan: Plan,
    config: Any,
    order: Callable[..., np.ndarray],
    planned: Planned,
    wanted: list[Trial],
    index: StoreIndex,
) -> pd.DataFrame:
    """Read the stored rows of the ``wanted`` trials (plan order) from their verified shards, set their fixed
    columns, check one row per planned coordinate, and write ``trials.csv`` atomically. Merges the blocks'
    dataset descriptions into ``plan.described`` in plan order."""
    by_shard: dict[str, list[tuple[Trial, Record]]] = {}
    for trial in wanted:
        record = planned.chosen[trial.slot]
        by_shard.setdefault(record.shard, []).append((trial, record))
    parts = read_parts(run_dir, by_shard, index, plan)
    for name in by_shard:
        merge_described(plan.described, index.described.get(name, {}))
    if plan.finish_described is not None:
        plan.described = plan.finish_described(plan.described)
    if not parts:
        write_atomic(run_dir / "trials.csv", "")
        return pd.DataFrame()
    table = in_plan_order(parts, by_shard)
    expected = sum(len(trial.keys) for trial in wanted)
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


def run(
    config: Any,
    *,
    n_jobs: int | None = None,
    fresh: bool = False,
    progress: bool = True,
    log=print,
    selection: Selection | None = None,
    dry_run: bool = False,
    show: Callable[[str], None] | None = None,
) -> Path:
    """Run the trials of an experiment of any registered kind that its folder's store lacks (or, with a
    ``selection``, those of the selected datasets/mechanisms/ε), then assemble ``trials.csv`` from the store;
    return the run directory. ``dry_run``: print the plan against the store (with ``show``, default ``log``) and
    write nothing."""
    kind = registry.get_kind(config.kind)
    started = time.time()
    n_jobs = config.n_jobs if n_jobs is None else n_jobs
    plan = kind.plan(config, log)  # checks every input it can in this process; writes nothing
    items = planned_trials(plan)
    selected = select(items, selection)
    if dry_run:
        index = StoreIndex() if fresh else load_index(config.run_dir / SHARD_DIR, log, repair=False)
        planned = match_store(items, index)
        log_stale(planned, selected, log, "to recompute")
        for line in plan_lines(selected, lambda t: t.slot in planned.chosen, index, n_jobs):
            (show or log)(line)
        return config.run_dir
    try:
        with run_lock(config.run_dir):
            return run_locked(config, kind, plan, items, selected, selection, n_jobs, fresh, progress, log, started)
    except OSError as err:
        words = write_failure(err, err.filename or config.run_dir, STORE_ADVICE)
        if words is None:
            raise
        raise RunError(words) from None


def log_stale(planned: Planned, selected: list[tuple[Any, Trial]], log: Callable[[str], None], verb: str) -> None:
    """Name, per reason, the selected trials whose stored version is stale."""
    counts = Counter(planned.stale[t.slot] for _, t in selected if t.slot in planned.stale)
    for reason, count in counts.items():
        log(f"{reason}: {count} trials {verb}")


def run_locked(
    config: Any,
    kind: Any,
    plan: Plan,
    items: list[tuple[Any, Trial]],
    selected: list[tuple[Any, Trial]],
    selection: Selection | None,
    n_jobs: int,
    fresh: bool,
    progress: bool,
    log: Callable[[str], None],
    started: float,
) -> Path:
    run_dir = prepare_run_dir(config, fresh)
    remove_stale_temp_files(run_dir)
    index = load_index(run_dir / SHARD_DIR, log)
    planned = match_store(items, index)
    log_stale(planned, selected, log, "recomputed")
    todo = tasks_to_run(selected, lambda t: t.slot in planned.chosen)
    to_run = sum(1 for _, t in selected if t.slot not in planned.chosen)
    reused = len(selected) - to_run
    if reused or any(t.slot in planned.stale for _, t in selected):
        log(f"reusing {reused} of {len(selected)} trials from the store in {run_dir}; running {to_run}")

    def interrupted() -> str:
        kept = sum(1 for _, t in items if t.slot in planned.chosen)
        return (
            f"interrupted: {kept} of {len(items)} trials of this config are kept in {run_dir}; run the same "
            "command to resume"
        )

    said: list[str] = []

    def say_interrupted() -> None:
        said.append(interrupted())
        log(said[-1])

    try:
        with progress_bar(len(selected), progress) as bar:
            bar.update(reused)
            skipped, skipped_slots = run_tasks(
                todo, config, n_jobs, kind, plan, run_dir, index, planned, bar, log, on_interrupt=say_interrupted
            )
    except KeyboardInterrupt:
        if not said:
            say_interrupted()
        raise RunInterrupted(said[0]) from None
    plan.skipped = {**plan.skipped, **skipped}
    expected = [t for _, t in items if t.slot not in skipped_slots]
    wanted = [t for t in expected if t.slot in planned.chosen]
    write_atomic(run_dir / "skipped.json", json.dumps(plan.skipped, indent=2))
    if not expected:
        reasons = "; ".join(f"{k}: {v}" for k, v in plan.skipped.items()) or "the config plans no trial"
        raise RunError(f"nothing to run: every dataset of the config is unavailable ({reasons})")
    missing = [t for _, t in selected if t.slot not in skipped_slots and t.slot not in planned.chosen]
    if missing:
        groups = ", ".join(dict.fromkeys(f"{t.group[0]} / {t.group[1]} / ε = {t.group[2]:g}" for t in missing))
        raise RunError(f"assembly: {len(missing)} planned trials have no stored rows ({groups})")
    table = assemble(run_dir, plan, config, kind.order, planned, wanted, index)
    write_atomic(run_dir / "datasets.json", json.dumps(plan.described, indent=2, default=float))
    coverage: dict[str, Any] = {"trials": len(wanted), "planned_trials": len(expected)}
    if len(wanted) < len(expected):
        coverage["partial"] = f"{len(wanted)} of {len(expected)} trials"
        log(f"trials.csv is partial: {coverage['partial']} of the config (the rest: run without -d/-m/-e)")
    if selection:
        coverage["selection"] = selection.as_dict()
    write_meta(run_dir, n_jobs, started, len(table), coverage)
    return run_dir
