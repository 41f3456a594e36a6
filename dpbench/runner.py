"""The experiment runner: (dataset, mechanism, ε, trial) grid → tidy per-trial CSV, in parallel, resumable.

Design
------
* **Seeds.** A dataset's split is drawn from ``SeedSequence([seed, H(dataset)])`` once, so every mechanism and ε
  of a run sees the same split. Trial t of (dataset, mechanism, ε_i) draws all its noise from
  ``SeedSequence([seed, H(dataset), H(mechanism), i, t])`` (H = a stable CRC32 of the entry's key; with
  ``common_random_numbers`` the mechanism part is 0). Results therefore do not depend on n_jobs or task order.
* **Tasks.** Trials are grouped in blocks of ``trial_block``; one task = (dataset, mechanism, ε, block). Workers
  load each dataset once (in-process cache) and compute its Gram statistics once (O(nd²)); a trial then costs
  only what the mechanism needs (O(kd² + d³) for the sketch methods).
* **Resume.** The main process writes each finished block to ``shards/<task>.csv`` atomically (temp file +
  rename). Starting the same run again skips the blocks already on disk, so a crash loses at most the blocks in
  flight and never duplicates a trial. ``trials.csv`` is assembled from the shards at the end, sorted.
"""

from __future__ import annotations

import functools
import json
import os
import platform
import subprocess
import time
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
import yaml
from joblib import Parallel, delayed
from threadpoolctl import threadpool_limits

from dpbench import __version__, registry
from dpbench.config import Config, ConfigError, DatasetEntry, MechanismEntry
from dpbench.data import Dataset, DataUnavailableError
from dpbench.linalg import GramStats, gram_stats
from dpbench.mechanisms import as_fit_result
from dpbench.metrics import get_metric

SHARD_DIR = "shards"


def stable_hash(text: str) -> int:
    """A 32-bit hash that is the same in every process and Python version (unlike ``hash``)."""
    return zlib.crc32(text.encode("utf-8"))


def dataset_seed(seed: int, entry: DatasetEntry) -> np.random.SeedSequence:
    return np.random.SeedSequence([seed, stable_hash(entry.key)])


def trial_seed(seed: int, entry: DatasetEntry, mech: MechanismEntry, eps_index: int, trial: int, crn: bool):
    mech_hash = 0 if crn else stable_hash(mech.key)
    return np.random.SeedSequence([seed, stable_hash(entry.key), mech_hash, eps_index, trial])


@functools.lru_cache(maxsize=4)
def prepare_dataset(entry: DatasetEntry, seed: int) -> tuple[Dataset, GramStats]:
    """Load (deterministically) and precompute a dataset's Gram statistics; cached per process."""
    info = registry.get_dataset(entry.loader)
    rng = np.random.default_rng(dataset_seed(seed, entry))
    dataset = info.load(rng, **dict(entry.options))
    return dataset, gram_stats(dataset.X_train, dataset.y_train)


def display_label(entry: DatasetEntry, dataset: Dataset | None) -> str:
    """Panel label: the config's label, else the loader's figure title, else the loader name."""
    if entry.label:
        return entry.label
    if dataset is not None and dataset.meta.get("title"):
        return str(dataset.meta["title"])
    return entry.loader


def dataset_id(entry: DatasetEntry, label: str) -> str:
    """Unique per concrete dataset: the label plus any swept options."""
    if not entry.swept:
        return label
    options = dict(entry.options)
    return f"{label} [" + ", ".join(f"{k}={options[k]}" for k in entry.swept) + "]"


@dataclass(frozen=True)
class Task:
    entry: DatasetEntry
    mech: MechanismEntry
    eps_index: int
    epsilon: float
    delta: float
    trial_start: int
    trial_stop: int

    @property
    def shard_name(self) -> str:
        return (
            f"d{stable_hash(self.entry.key):08x}-m{stable_hash(self.mech.key):08x}"
            f"-e{self.eps_index}-t{self.trial_start}-{self.trial_stop}.csv"
        )


def characteristics(stats: GramStats) -> dict[str, float]:
    """Per-dataset reference values written to datasets.json (OLS floor, ‖Y‖²/n, spectrum)."""
    return {
        "n": stats.n,
        "d": stats.d,
        "ols_train_mse": stats.ols_loss / stats.n,
        "zero_train_mse": stats.yty / stats.n,
        "lam_min_x": stats.lam_min_x,
        "lam_max_x": stats.lam_max_x,
        "lam_min_xy": stats.lam_min_xy,
        "theta_ols_sq_norm": float(stats.theta_ols @ stats.theta_ols),
    }


def fit_inputs(mech: registry.MechanismInfo, dataset: Dataset, stats: GramStats) -> dict[str, Any]:
    """The extra keyword inputs a mechanism declared in ``needs``."""
    available = {"stats": stats, "public_X": dataset.X_public, "population": dataset.population}
    missing = [name for name in mech.needs if available[name] is None]
    if missing:
        raise ConfigError(f"mechanism '{mech.name}' needs {missing} but dataset '{dataset.name}' provides none")
    return {name: available[name] for name in mech.needs}


def info_columns(info: dict[str, Any]) -> dict[str, Any]:
    """Scalar diagnostics of a fit as ``info.<key>`` columns (non-scalars are dropped)."""
    return {f"info.{k}": v for k, v in info.items() if isinstance(v, (int, float, np.number, str, bool))}


NEIGHBOUR_ALIASES = {"replace": "replace_one", "replace_one": "replace_one", "zero_out": "zero_out"}


def declared_neighbour(mech: registry.MechanismInfo, hyper: dict[str, Any]) -> str:
    """The neighbouring notion of this instance: a ``neighbour`` hyperparameter overrides the registry default."""
    chosen = hyper.get("neighbour")
    return NEIGHBOUR_ALIASES.get(str(chosen), str(chosen)) if chosen is not None else mech.neighbour


def run_block(task: Task, config: Config) -> list[dict[str, Any]]:
    """Run the trials of one task; pure function of (task, config) up to the timing column."""
    registry.discover()
    dataset, stats = prepare_dataset(task.entry, config.seed)
    mech = registry.get_mechanism(task.mech.mechanism)
    inputs = fit_inputs(mech, dataset, stats)
    hyper = dict(task.mech.hyper)
    metrics = [(name, get_metric(name)) for name in config.metrics]
    label = display_label(task.entry, dataset)
    base = {
        "dataset": label,
        "dataset_id": dataset_id(task.entry, label),
        "loader": task.entry.loader,
        **{f"data.{k}": v for k, v in task.entry.options},
        "n": stats.n,
        "d": stats.d,
        "mechanism": mech.name,
        "label": task.mech.label,
        "privacy_model": mech.privacy_model,
        "neighbour": declared_neighbour(mech, hyper),
        **{f"hp.{k}": v for k, v in task.mech.hyper},
        "epsilon_index": task.eps_index,
        "epsilon": task.epsilon,
        "delta": task.delta,
    }
    rows = []
    with threadpool_limits(limits=1):  # parallelism is across trials; BLAS threads would oversubscribe the cores
        for trial in range(task.trial_start, task.trial_stop):
            seed = trial_seed(config.seed, task.entry, task.mech, task.eps_index, trial, config.common_random_numbers)
            rng = np.random.default_rng(seed)
            start = time.perf_counter()
            result = as_fit_result(mech.fit(stats.X, stats.y, task.epsilon, task.delta, rng, **inputs, **hyper))
            seconds = time.perf_counter() - start
            row = {**base, "trial": trial}
            row.update({name: metric(result.theta, dataset, stats) for name, metric in metrics})
            row["seconds"] = seconds
            row.update(info_columns(result.info))
            rows.append(row)
    return rows


# ----------------------------------------------------------------------------------------------------------------
# run directory bookkeeping


def write_atomic(path: Path, text: str) -> None:
    """Write ``text`` to ``path`` so that readers see either the old or the complete new file."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(tmp, "w") as handle:
        handle.write(text)
        handle.flush()
        os.fsync(handle.fileno())
    os.replace(tmp, path)


def git_commit() -> str | None:
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


def prepare_run_dir(config: Config, fresh: bool) -> Path:
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
        for name in ("trials.csv", "datasets.json", "skipped.json"):
            (run_dir / name).unlink(missing_ok=True)
    (run_dir / SHARD_DIR).mkdir(parents=True, exist_ok=True)
    document = {**config.to_dict(), "fingerprint": config.fingerprint(), "dpbench_version": __version__}
    write_atomic(saved, yaml.safe_dump(document, sort_keys=False, allow_unicode=True))
    return run_dir


def plan_tasks(config: Config, log=print) -> tuple[list[Task], dict[str, Any], dict[str, str]]:
    """Load every dataset once (main process) to fix n, δ and trial counts; skip unavailable data visibly."""
    tasks: list[Task] = []
    described: dict[str, Any] = {}
    skipped: dict[str, str] = {}
    for entry in config.datasets:
        try:
            dataset, stats = prepare_dataset(entry, config.seed)
        except DataUnavailableError as err:
            label = display_label(entry, None)
            skipped[dataset_id(entry, label)] = str(err)
            log(f"SKIPPED {label}: {err}")
            continue
        label = display_label(entry, dataset)
        delta = config.delta_for(stats.n)
        trials = config.trials_for(stats.n, stats.d)
        described[dataset_id(entry, label)] = {
            "label": label,
            "loader": entry.loader,
            "options": dict(entry.options),
            "delta": delta,
            "trials": trials,
            **characteristics(stats),
            "meta": {k: v for k, v in dataset.meta.items() if isinstance(v, (int, float, str, bool))},
        }
        for mech in config.mechanisms:
            for eps_index, epsilon in enumerate(config.epsilons):
                for start in range(0, trials, config.trial_block):
                    stop = min(trials, start + config.trial_block)
                    tasks.append(Task(entry, mech, eps_index, epsilon, delta, start, stop))
    return tasks, described, skipped


def _progress(total: int, enabled: bool):
    from tqdm.auto import tqdm

    return tqdm(total=total, unit="trial", disable=not enabled, dynamic_ncols=True, mininterval=0.5)


def execute(tasks: list[Task], config: Config, n_jobs: int) -> Iterator[tuple[Task, list[dict[str, Any]]]]:
    """Yield (task, rows) as tasks finish (any order); ``backend: dask`` runs them on a Dask cluster."""
    if getattr(config, "backend", "loky") == "dask":
        from dpbench.dask_backend import execute_dask

        yield from execute_dask(tasks, config, n_jobs, _run_indexed)
        return
    if n_jobs == 1:
        for task in tasks:
            yield task, run_block(task, config)
        return
    parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
    yield from parallel(delayed(_run_indexed)(task, config) for task in tasks)


def _run_indexed(task: Task, config: Config) -> tuple[Task, list[dict[str, Any]]]:
    return task, run_block(task, config)


def assemble(run_dir: Path, tasks: list[Task], config: Config, dataset_order: list[str]) -> pd.DataFrame:
    """Concatenate this run's shards into a sorted tidy table and write ``trials.csv`` atomically."""
    frames = [pd.read_csv(run_dir / SHARD_DIR / task.shard_name) for task in tasks]
    if not frames:
        return pd.DataFrame()
    table = pd.concat(frames, ignore_index=True)
    ds_rank = {ident: i for i, ident in enumerate(dataset_order)}
    mech_rank = {m.label: i for i, m in enumerate(config.mechanisms)}
    order = np.lexsort(
        (
            table["trial"],
            table["epsilon_index"],
            table["label"].map(mech_rank),
            table["dataset_id"].map(ds_rank),
        )
    )
    table = table.iloc[order].reset_index(drop=True)
    write_atomic(run_dir / "trials.csv", table.to_csv(index=False))
    return table


def run(config: Config, *, n_jobs: int | None = None, fresh: bool = False, progress: bool = True, log=print) -> Path:
    """Run (or resume) an experiment; return its run directory."""
    if getattr(config, "kind", "regression") == "bandit":  # dpbench/bandits/runner.py (regret vs T)
        from dpbench.bandits.runner import run_bandit_experiment

        return run_bandit_experiment(config, n_jobs=n_jobs, fresh=fresh, progress=progress, log=log)
    started = time.time()
    n_jobs = config.n_jobs if n_jobs is None else n_jobs
    run_dir = prepare_run_dir(config, fresh)
    tasks, described, skipped = plan_tasks(config, log=log)
    write_atomic(run_dir / "datasets.json", json.dumps(described, indent=2, default=float))
    write_atomic(run_dir / "skipped.json", json.dumps(skipped, indent=2))
    shard_dir = run_dir / SHARD_DIR
    todo = [task for task in tasks if not (shard_dir / task.shard_name).exists()]
    done_trials = sum(t.trial_stop - t.trial_start for t in tasks) - sum(t.trial_stop - t.trial_start for t in todo)
    if done_trials:
        log(f"resuming {run_dir}: {done_trials} trials already done, {len(todo)} blocks to go")
    with _progress(sum(t.trial_stop - t.trial_start for t in tasks), progress) as bar:
        bar.update(done_trials)
        for task, rows in execute(todo, config, n_jobs):
            write_atomic(shard_dir / task.shard_name, pd.DataFrame(rows).to_csv(index=False))
            bar.update(len(rows))
    table = assemble(run_dir, tasks, config, list(described))
    write_meta(run_dir, n_jobs, started, len(table))
    return run_dir


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
