"""The ``bandit`` experiment kind: (environment, algorithm, ε, trial) grid → tidy CSV of regret vs T.

Registered with the engine (:mod:`dpbench.engine.core` runs it: resume, loky/Dask, atomic shards, assembly);
same guarantees as the regression kind:

* **Seeds.** Trial t of environment e draws its instance (θ*, fixed arms) from ``SeedSequence([seed, H(e), t, 0])``
  and its contexts/reward coins from the block stream keyed ``(seed, H(e), t, 1)`` — the same for every algorithm
  and ε (common random numbers). The algorithm's own randomness (actions, privacy noise) comes from
  ``SeedSequence([seed, H(e), H(algorithm), i_ε, t])``. Nothing depends on n_jobs or task order.
* **Tasks and resume.** One task = (environment, algorithm, ε, block of ``trial_block`` trials), written atomically
  to a self-verifying ``shards/<task>.csv``; a restarted run verifies and skips finished shards (re-running damaged
  ones); assembly checks one row per (environment, algorithm, ε, trial, T) before ``trials.csv`` is written.
* **Rows.** One row per (trial, checkpoint T): ``regret`` = cumulative pseudo-regret Σ_{t≤T} [max_a f* − f*(a_t)]
  of the single run at T_max (anytime curve), so ``dpbench plot RUN --x T --metric regret`` draws regret vs T.
  Non-private algorithms (privacy_model ``none``) run once per trial at ε = ∞.
"""

from __future__ import annotations

import math
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpbench import registry
from dpbench.bandits.config import AlgoEntry, BanditConfig, EnvEntry, parse_bandit_config
from dpbench.bandits.envs import ContextStream, get_env
from dpbench.bandits.simulator import checkpoints, get_algorithm, run_bandit
from dpbench.engine.core import Plan, check_plan_size
from dpbench.engine.seeds import stable_hash


@dataclass(frozen=True)
class BanditTask:
    env: EnvEntry
    algo: AlgoEntry
    eps_index: int
    epsilon: float
    trial_start: int
    trial_stop: int
    checkpoints: tuple[int, ...] = ()  # the T values each trial reports

    @property
    def shard_name(self) -> str:
        return (f"e{stable_hash(self.env.key):08x}-a{stable_hash(self.algo.key):08x}"
                f"-p{self.eps_index}-t{self.trial_start}-{self.trial_stop}.csv")

    def planned_keys(self) -> list[tuple]:
        return [(self.env.id, self.algo.label, self.eps_index, trial, T)
                for trial in range(self.trial_start, self.trial_stop) for T in self.checkpoints]

    def describe(self) -> str:
        return (f"environment {self.env.id}, algorithm {self.algo.label}, ε = {self.epsilon:g}, "
                f"trials {self.trial_start}–{self.trial_stop - 1}")


def instance_seed(seed: int, env: EnvEntry, trial: int) -> np.random.SeedSequence:
    return np.random.SeedSequence([seed, stable_hash(env.key), trial, 0])


def stream_key(seed: int, env: EnvEntry, trial: int) -> tuple[int, ...]:
    return (seed, stable_hash(env.key), trial, 1)


def algo_seed(seed: int, env: EnvEntry, algo: AlgoEntry, eps_index: int, trial: int) -> np.random.SeedSequence:
    return np.random.SeedSequence([seed, stable_hash(env.key), stable_hash(algo.key), eps_index, trial])


def make_instance(config: BanditConfig, env: EnvEntry, trial: int):
    info = get_env(env.env)
    return info.make(np.random.default_rng(instance_seed(config.seed, env, trial)), **dict(env.options))


def _scalar_info(info: dict[str, Any]) -> dict[str, Any]:
    return {f"info.{k}": v for k, v in info.items()
            if isinstance(v, (int, float, np.number, str, bool)) and not isinstance(v, np.ndarray)}


def _single_thread_blas():
    """Limit BLAS to one thread while simulating (tiny d×d products; threads only add overhead)."""
    try:
        from threadpoolctl import threadpool_limits
    except ImportError:  # pragma: no cover
        import contextlib

        return contextlib.nullcontext()
    return threadpool_limits(1)


def run_task(task: BanditTask, config: BanditConfig) -> list[dict[str, Any]]:
    """Simulate the trials of one task; a pure function of (task, config) up to the timing column."""
    algo = get_algorithm(task.algo.algorithm)
    hyper = dict(task.algo.hyper)
    grid = checkpoints(config.T, config.checkpoints_per_octave)
    delta = config.privacy_delta
    rows: list[dict[str, Any]] = []
    with _single_thread_blas():
        for trial in range(task.trial_start, task.trial_stop):
            env = make_instance(config, task.env, trial)
            stream = ContextStream(env, stream_key(config.seed, task.env, trial))
            rng = np.random.default_rng(algo_seed(config.seed, task.env, task.algo, task.eps_index, trial))
            cpu = time.process_time()
            result = run_bandit(env, algo, config.T, task.epsilon, delta, rng, stream=stream, **hyper)
            cpu = time.process_time() - cpu
            cumulative = result.cumulative[grid - 1]
            base = {
                "dataset": task.env.label,
                "dataset_id": task.env.id,
                "loader": task.env.env,
                **{f"data.{k}": v for k, v in task.env.options},
                "d": env.d,
                "n_arms": env.n_arms,
                "mechanism": algo.name,
                "label": task.algo.label,
                "privacy_model": algo.privacy_model,
                **{f"hp.{k}": v for k, v in task.algo.hyper},
                "epsilon_index": task.eps_index,
                "epsilon": task.epsilon,
                "delta": delta,
                "trial": trial,
                "T_max": config.T,
                "seconds": result.seconds,
                "cpu_seconds": cpu,
                **_scalar_info(result.info),
            }
            for t, reg in zip(grid, cumulative, strict=True):
                rows.append({**base, "T": int(t), "regret": float(reg)})
    return rows


def eps_grid(config: BanditConfig, algo: AlgoEntry) -> list[tuple[int, float]]:
    """(ε index, ε) pairs an algorithm runs at: every ε if private, else once at ε = ∞."""
    if get_algorithm(algo.algorithm).privacy_model != "none":
        return list(enumerate(config.epsilons))
    index = config.epsilons.index(math.inf) if math.inf in config.epsilons else len(config.epsilons)
    return [(index, math.inf)]


def task_list(config: BanditConfig) -> list[BanditTask]:
    grid = tuple(int(t) for t in checkpoints(config.T, config.checkpoints_per_octave))
    runs = sum(len(eps_grid(config, algo)) for algo in config.algorithms) * len(config.environments)
    check_plan_size(runs * config.trials * len(grid), "trials")
    tasks = []
    for env in config.environments:
        for algo in config.algorithms:
            for eps_index, eps in eps_grid(config, algo):
                for start in range(0, config.trials, config.trial_block):
                    stop = min(config.trials, start + config.trial_block)
                    tasks.append(BanditTask(env, algo, eps_index, eps, start, stop, grid))
    return tasks


def describe_environments(config: BanditConfig) -> dict[str, Any]:
    out = {}
    for env in config.environments:
        inst = make_instance(config, env, 0)
        out[env.id] = {"label": env.label, "loader": env.env, "options": dict(env.options), "d": inst.d,
                       "n_arms": inst.n_arms, "link": inst.link, "T_max": config.T,
                       "meta": {k: v for k, v in inst.meta.items() if isinstance(v, (int, float, str, bool))}}
    return out


def plan_tasks(config: BanditConfig, log=print) -> Plan:
    """Every (environment, algorithm, ε, block) task, and the environments' descriptions for datasets.json."""
    keys = ("dataset_id", "label", "epsilon_index", "trial", "T")
    return Plan(task_list(config), describe_environments(config), {}, keys, keys)


def row_order(table: pd.DataFrame, config: BanditConfig, plan: Plan) -> np.ndarray:
    """Sort of ``trials.csv``: environment, algorithm (config order), ε index, trial, checkpoint T."""
    env_rank = {e.id: i for i, e in enumerate(config.environments)}
    algo_rank = {a.label: i for i, a in enumerate(config.algorithms)}
    return np.lexsort((table["T"], table["trial"], table["epsilon_index"], table["label"].map(algo_rank),
                       table["dataset_id"].map(env_rank)))


registry.register_kind(
    "bandit",
    summary="contextual bandits: (environment, algorithm, ε, trial) → cumulative regret at checkpoints T",
    parse=parse_bandit_config,
    plan=plan_tasks,
    run_task=run_task,
    order=row_order,
)
