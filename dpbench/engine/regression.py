"""The ``regression`` experiment kind: (dataset, mechanism, ε, trial) grid → tidy per-trial CSV.

Run by the generic loop of :mod:`dpbench.engine.core` (resume, loky/Dask, atomic shards, assembly).

Design
------
* **Seeds.** A dataset's split is drawn from ``SeedSequence([seed, H(dataset)])`` once, so every mechanism and ε
  of a run sees the same split. Trial t of (dataset, mechanism, ε_i) draws all its noise from
  ``SeedSequence([seed, H(dataset), H(mechanism), i, t])`` (H = a stable CRC32 of the entry's key; with
  ``common_random_numbers`` the mechanism part is 0). Results therefore do not depend on n_jobs or task order.
* **Tasks.** Trials are grouped in blocks of ``trial_block``; one task = (dataset, mechanism, ε, block). Workers
  load each dataset once (in-process cache) and compute its Gram statistics once (O(nd²)); a trial then costs
  only what the mechanism needs (O(kd² + d³) for the sketch methods).
* **Resume.** :mod:`dpbench.engine.core` writes each finished block to ``shards/<task>.csv`` atomically and skips
  the blocks already on disk when the same run starts again; ``trials.csv`` is assembled sorted at the end.
"""

from __future__ import annotations

import functools
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd
from threadpoolctl import threadpool_limits

from dpbench import registry
from dpbench.config import Config, ConfigError, DatasetEntry, MechanismEntry
from dpbench.data import Dataset, DataUnavailableError
from dpbench.engine.core import Plan
from dpbench.engine.seeds import stable_hash
from dpbench.linalg import GramStats, gram_stats
from dpbench.mechanisms import as_fit_result
from dpbench.metrics import get_metric


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


def plan_tasks(config: Config, log=print) -> Plan:
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
    return Plan(tasks, described, skipped)


def row_order(table: pd.DataFrame, config: Config, plan: Plan) -> np.ndarray:
    """Sort of ``trials.csv``: dataset (plan order), mechanism (config order), ε index, trial."""
    ds_rank = {ident: i for i, ident in enumerate(plan.described)}
    mech_rank = {m.label: i for i, m in enumerate(config.mechanisms)}
    return np.lexsort(
        (
            table["trial"],
            table["epsilon_index"],
            table["label"].map(mech_rank),
            table["dataset_id"].map(ds_rank),
        )
    )


registry.register_kind(
    "regression",
    summary="private regression: (dataset, mechanism, ε, trial) → metrics per trial",
    parse=None,
    plan=plan_tasks,
    run_task=run_block,
    order=row_order,
)
