"""The ``bandit`` experiment kind: (environment, algorithm, ε, trial) grid → tidy CSV of regret vs T.

Registered with the engine (:mod:`dpbench.engine.core` runs it: resume, loky/Dask, atomic shards, assembly);
same guarantees as the regression kind:

* **Seeds.** Trial t of environment e draws its instance (θ*, fixed arms) from ``SeedSequence([seed, H(e), t, 0])``
  and its contexts/reward coins from the block stream keyed ``(seed, H(e), t, 1)`` — the same for every algorithm
  and ε (common random numbers). The algorithm's own randomness (actions, privacy noise) comes from
  ``SeedSequence([seed, H(e), H(algorithm), H(ε), t])`` (H(ε) of ε's value, not its position). Nothing depends on
  n_jobs, task order or a position in the config.
* **Identity.** Each trial is known to the engine's store by value (:meth:`BanditTask.trials`): environment (name,
  options, label), algorithm (name, resolved hyperparameters) and the sources of their modules and of the simulator,
  ε, T, δ, the checkpoint grid, the seed and the trial index; growing or shrinking a config reuses finished trials.
* **Tasks and resume.** One task = (environment, block of ``trial_block`` trials, group of (algorithm, ε) cells),
  written atomically to a self-verifying ``shards/<task>.csv``; a restarted run verifies and skips finished shards
  (re-running damaged ones); assembly checks one row per (environment, algorithm, ε, trial, T) before
  ``trials.csv`` is written. The cells of a group run in lockstep on one context stream per trial
  (:func:`dpbench.bandits.simulator.run_lockstep`: contexts and the all-arms spanners are drawn once per block,
  not once per cell); each cell's results are those of its own :func:`run_bandit`, bit for bit. A group holds every
  cell of the environment unless the runs' memory would exceed :data:`LOCKSTEP_BYTES` (then several groups).
* **Rows.** One row per (trial, checkpoint T): ``regret`` = cumulative pseudo-regret Σ_{t≤T} [max_a f* − f*(a_t)]
  of the single run at T_max (anytime curve), so ``dpbench plot RUN --x T --metric regret`` draws regret vs T.
  Non-private algorithms (privacy_model ``none``) run once per trial at ε = ∞.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpbench import registry
from dpbench.bandits.config import BanditConfig, EnvEntry, parse_bandit_config
from dpbench.bandits.envs import ContextStream, get_env
from dpbench.bandits.simulator import checkpoints, get_algorithm, run_lockstep
from dpbench.engine.cells import Cell, CellTask, Entry, TrialContext, cell_slot, info_columns
from dpbench.engine.core import Plan, check_plan_size
from dpbench.engine.identity import code_version
from dpbench.engine.seeds import stable_hash, value_hash
from dpbench.linalg import one_blas_thread_limit

#: memory budget of one lockstep group: its cells' per-round records and epoch data (:func:`cell_bytes`); 3 GiB lets
#: the four T = 2²⁴ cells of bandit_ctrl_ldp_agm (≈ 0.6 GB each) share one context stream: 159 → 134 CPU-s, peak 2.9 GB
LOCKSTEP_BYTES = 3 << 30


def bandit_context(config: BanditConfig) -> TrialContext:
    """The config values that enter every bandit trial's identity (besides environment, algorithm, ε, trial)."""
    return TrialContext.of(
        seed=config.seed,
        T=config.T,
        delta=config.privacy_delta,
        checkpoints_per_octave=config.checkpoints_per_octave,
    )


@functools.lru_cache(maxsize=4096)
def cell_identity(env: EnvEntry, cell: Cell, context: TrialContext) -> tuple[str, tuple[tuple[str, str], ...]]:
    """(digest of an (environment, algorithm, ε) cell's identity by value, its code version)."""
    algo = get_algorithm(cell.entry.name)
    info = get_env(env.env)
    place = {"environment": {"env": env.env, "options": dict(env.options), "label": env.label}}
    hyper = {**algo.hyperparameters(), **dict(cell.entry.hyper)}
    slot = cell_slot("bandit", place, "algorithm", algo.name, hyper, cell.epsilon, context)
    code = code_version(
        (f"algorithm {algo.name}", algo.make), (f"environment {env.env}", info.make), ("simulator", run_lockstep)
    )
    return slot, code


@dataclass(frozen=True)
class BanditTask(CellTask):
    """Trials [trial_start, trial_stop) of a group of (algorithm, ε) cells on one environment, run in lockstep."""

    env: EnvEntry
    cells: tuple[Cell, ...]
    trial_start: int
    trial_stop: int
    checkpoints: tuple[int, ...] = ()  # the T values each trial reports
    context: TrialContext | None = None

    @property
    def shard_name(self) -> str:
        cells = stable_hash(";".join(f"{c.entry.key}|{c.epsilon!r}" for c in self.cells))
        return f"e{stable_hash(self.env.key):08x}-c{cells:08x}-t{self.trial_start}-{self.trial_stop}.csv"

    def place_name(self) -> str:
        return self.env.id

    def identity(self, cell: Cell) -> tuple[str, tuple[tuple[str, str], ...]]:
        return cell_identity(self.env, cell, self.context)

    def row_keys(self, cell: Cell, trial: int) -> tuple[tuple, ...]:
        return tuple((self.env.id, cell.entry.label, cell.eps_index, trial, T) for T in self.checkpoints)

    def describe(self) -> str:
        cells = ", ".join(f"{c.entry.label} (ε = {c.epsilon:g})" for c in self.cells)
        return f"environment {self.env.id}, trials {self.trial_start}–{self.trial_stop - 1}: {cells}"


def instance_seed(seed: int, env: EnvEntry, trial: int) -> np.random.SeedSequence:
    return np.random.SeedSequence([seed, stable_hash(env.key), trial, 0])


def stream_key(seed: int, env: EnvEntry, trial: int) -> tuple[int, ...]:
    return (seed, stable_hash(env.key), trial, 1)


def algo_seed(seed: int, env: EnvEntry, algo: Entry, epsilon: float, trial: int) -> np.random.SeedSequence:
    return np.random.SeedSequence([seed, stable_hash(env.key), stable_hash(algo.key), value_hash(epsilon), trial])


def make_instance(config: BanditConfig, env: EnvEntry, trial: int):
    info = get_env(env.env)
    return info.make(np.random.default_rng(instance_seed(config.seed, env, trial)), **dict(env.options))


def run_task(task: BanditTask, config: BanditConfig) -> list[dict[str, Any]]:
    """Simulate the trials of one task (its cells in lockstep); a pure function of (task, config) up to the timing
    columns (``seconds``: the cell's own steps; ``cpu_seconds``: the trial's CPU time shared equally by its cells)."""
    grid = checkpoints(config.T, config.checkpoints_per_octave)
    delta = config.privacy_delta
    rows: list[dict[str, Any]] = []
    with one_blas_thread_limit():  # tiny d×d products: threads only add overhead
        for trial in range(task.trial_start, task.trial_stop):
            env = make_instance(config, task.env, trial)
            stream = ContextStream(env, stream_key(config.seed, task.env, trial))
            cells = [
                (
                    get_algorithm(c.entry.name),
                    c.epsilon,
                    np.random.default_rng(algo_seed(config.seed, task.env, c.entry, c.epsilon, trial)),
                    dict(c.entry.hyper),
                )
                for c in task.cells
            ]
            cpu = time.process_time()
            results = run_lockstep(env, cells, config.T, delta, stream)
            cpu = (time.process_time() - cpu) / len(cells)
            for cell, (algo, *_), result in zip(task.cells, cells, results, strict=True):
                rows.extend(_rows(task.env, cell, algo, env, trial, config, grid, result, cpu))
    return rows


def _rows(
    entry: EnvEntry, cell: Cell, algo, env, trial: int, config: BanditConfig, grid: np.ndarray, result, cpu: float
) -> list[dict[str, Any]]:
    """One row per checkpoint T of one cell's run."""
    base = {
        "dataset": entry.label,
        "dataset_id": entry.id,
        "loader": entry.env,
        **{f"data.{k}": v for k, v in entry.options},
        "d": env.d,
        "n_arms": env.n_arms,
        "mechanism": algo.name,
        "label": cell.entry.label,
        "privacy_model": algo.privacy_model,
        **{f"hp.{k}": v for k, v in cell.entry.hyper},
        "epsilon_index": cell.eps_index,
        "epsilon": cell.epsilon,
        "delta": config.privacy_delta,
        "trial": trial,
        "T_max": config.T,
        "seconds": result.seconds,
        "cpu_seconds": cpu,
        **info_columns(result.info),
    }
    cumulative = result.cumulative[grid - 1]
    return [{**base, "T": int(t), "regret": float(reg)} for t, reg in zip(grid, cumulative, strict=True)]


def eps_grid(config: BanditConfig, algo: Entry) -> list[tuple[int, float]]:
    """(ε index, ε) pairs an algorithm runs at: every ε if private, else once at ε = ∞."""
    if get_algorithm(algo.name).privacy_model != "none":
        return list(enumerate(config.epsilons))
    index = config.epsilons.index(math.inf) if math.inf in config.epsilons else len(config.epsilons)
    return [(index, math.inf)]


def cell_bytes(T: int, d: int, row_bytes: int | None = None) -> int:
    """Memory of one run: per-round records (regret, action, reward: 20 B a round) and the stored chosen features
    of its largest regressed epoch (< T/2 rounds; ``row_bytes`` a row, default 8d as float64, ⌈d/8⌉ under a
    :class:`~dpbench.bandits.envs.SignCodec`) with their rewards: T·20 + (T/2)·(row_bytes + 8) bytes
    (G-PowerLaw d = 1000, T = 2²⁰: 91 MB; float64 rows would take 4.2 GB)."""
    row = 8 * d if row_bytes is None else row_bytes
    return T * 20 + (T // 2) * (row + 8)


def task_list(config: BanditConfig) -> list[BanditTask]:
    grid = tuple(int(t) for t in checkpoints(config.T, config.checkpoints_per_octave))
    cells = [Cell(algo, eps_index, eps) for algo in config.algorithms for eps_index, eps in eps_grid(config, algo)]
    check_plan_size(len(cells) * len(config.environments) * config.trials * len(grid), "trials")
    context = bandit_context(config)
    tasks = []
    for env in config.environments:
        inst = make_instance(config, env, 0)
        row_bytes = None if inst.codec is None else (inst.d + 7) // 8
        size = max(1, LOCKSTEP_BYTES // cell_bytes(config.T, inst.d, row_bytes))
        groups = [tuple(cells[i : i + size]) for i in range(0, len(cells), size)]
        for start in range(0, config.trials, config.trial_block):
            stop = min(config.trials, start + config.trial_block)
            tasks.extend(BanditTask(env, group, start, stop, grid, context) for group in groups)
    return tasks


def describe_environments(config: BanditConfig) -> dict[str, Any]:
    out = {}
    for env in config.environments:
        inst = make_instance(config, env, 0)
        out[env.id] = {
            "label": env.label,
            "loader": env.env,
            "options": dict(env.options),
            "d": inst.d,
            "n_arms": inst.n_arms,
            "link": inst.link,
            "T_max": config.T,
            "meta": {k: v for k, v in inst.meta.items() if isinstance(v, (int, float, str, bool))},
        }
    return out


def plan_tasks(config: BanditConfig, log=print) -> Plan:
    """Every (environment, algorithm, ε, block) task, and the environments' descriptions for datasets.json."""
    keys = ("dataset_id", "label", "epsilon_index", "trial", "T")
    return Plan(task_list(config), describe_environments(config), {}, keys, keys)


def row_order(table: pd.DataFrame, config: BanditConfig, plan: Plan) -> np.ndarray:
    """Sort of ``trials.csv``: environment, algorithm (config order), ε index, trial, checkpoint T."""
    env_rank = {e.id: i for i, e in enumerate(config.environments)}
    algo_rank = {a.label: i for i, a in enumerate(config.algorithms)}
    return np.lexsort(
        (
            table["T"],
            table["trial"],
            table["epsilon_index"],
            table["label"].map(algo_rank),
            table["dataset_id"].map(env_rank),
        )
    )


registry.register_kind(
    "bandit",
    summary="contextual bandits: (environment, algorithm, ε, trial) → cumulative regret at checkpoints T",
    parse=parse_bandit_config,
    plan=plan_tasks,
    run_task=run_task,
    order=row_order,
)
