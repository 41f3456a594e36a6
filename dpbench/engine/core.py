"""The generic run loop shared by every experiment kind: plan → shards → execute (loky | dask) → assemble.

An experiment kind (registered with :func:`dpbench.registry.register_kind`) supplies four pure pieces:

* ``plan(config, log) -> Plan`` — the tasks (blocks of trials, each with a unique ``shard_name`` and its
  ``trial_start``/``trial_stop``), plus what to write to ``datasets.json`` and ``skipped.json``;
* ``run_task(task, config) -> list[row]`` — the rows of one block, a pure function of (task, config) up to timing
  columns (all randomness is seeded from the task's coordinates, see :mod:`dpbench.engine.seeds`);
* ``order(table, config, plan) -> row order`` — the sort of the assembled ``trials.csv``;
* ``parse(raw, source) -> config`` — its config schema (the built-in regression kind uses :mod:`dpbench.config`).

This module knows no kind: it resumes from finished shards, runs the rest on loky or Dask, writes each finished
block atomically from the main process, and assembles the table.
"""

from __future__ import annotations

import functools
import json
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from joblib import Parallel, delayed

from dpbench import registry
from dpbench.engine.store import SHARD_DIR, prepare_run_dir, progress_bar, write_atomic, write_meta

Rows = list[dict[str, Any]]


@dataclass
class Plan:
    """What a kind's planner returns: the tasks, and the descriptions written next to the results."""

    tasks: list[Any]
    described: dict[str, Any] = field(default_factory=dict)
    skipped: dict[str, str] = field(default_factory=dict)


def trials_in(tasks: list[Any]) -> int:
    return sum(task.trial_stop - task.trial_start for task in tasks)


def _run_indexed(task: Any, config: Any, run_task: Callable[[Any, Any], Rows]) -> tuple[Any, Rows]:
    return task, run_task(task, config)


def execute(
    tasks: list[Any], config: Any, n_jobs: int, run_task: Callable[[Any, Any], Rows]
) -> Iterator[tuple[Any, Rows]]:
    """Yield (task, rows) as tasks finish (any order); ``backend: dask`` runs them on a Dask cluster."""
    indexed = functools.partial(_run_indexed, run_task=run_task)
    if getattr(config, "backend", "loky") == "dask":
        from dpbench.engine.dask_backend import execute_dask

        yield from execute_dask(tasks, config, n_jobs, indexed)
        return
    if n_jobs == 1:
        for task in tasks:
            yield indexed(task, config)
        return
    parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
    yield from parallel(delayed(indexed)(task, config) for task in tasks)


def assemble(run_dir: Path, plan: Plan, config: Any, order: Callable[..., np.ndarray]) -> pd.DataFrame:
    """Concatenate the plan's shards into one sorted tidy table and write ``trials.csv`` atomically."""
    frames = [pd.read_csv(run_dir / SHARD_DIR / task.shard_name) for task in plan.tasks]
    if not frames:
        return pd.DataFrame()
    table = pd.concat(frames, ignore_index=True)
    table = table.iloc[order(table, config, plan)].reset_index(drop=True)
    write_atomic(run_dir / "trials.csv", table.to_csv(index=False))
    return table


def run(config: Any, *, n_jobs: int | None = None, fresh: bool = False, progress: bool = True, log=print) -> Path:
    """Run (or resume) an experiment of any registered kind; return its run directory."""
    kind = registry.get_kind(config.kind)
    started = time.time()
    n_jobs = config.n_jobs if n_jobs is None else n_jobs
    run_dir = prepare_run_dir(config, fresh)
    plan = kind.plan(config, log)
    write_atomic(run_dir / "datasets.json", json.dumps(plan.described, indent=2, default=float))
    write_atomic(run_dir / "skipped.json", json.dumps(plan.skipped, indent=2))
    shard_dir = run_dir / SHARD_DIR
    todo = [task for task in plan.tasks if not (shard_dir / task.shard_name).exists()]
    done_trials = trials_in(plan.tasks) - trials_in(todo)
    if done_trials:
        log(f"resuming {run_dir}: {done_trials} trials already done, {len(todo)} blocks to go")
    with progress_bar(trials_in(plan.tasks), progress) as bar:
        bar.update(done_trials)
        for task, rows in execute(todo, config, n_jobs, kind.run_task):
            write_atomic(shard_dir / task.shard_name, pd.DataFrame(rows).to_csv(index=False))
            bar.update(task.trial_stop - task.trial_start)
    table = assemble(run_dir, plan, config, kind.order)
    write_meta(run_dir, n_jobs, started, len(table))
    return run_dir
