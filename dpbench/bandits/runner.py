"""Runner of ``kind: bandit`` experiments: (environment, algorithm, ε, trial) grid → tidy CSV of regret vs T.

Same guarantees as :mod:`dpbench.runner`:

* **Seeds.** Trial t of environment e draws its instance (θ*, fixed arms) from ``SeedSequence([seed, H(e), t, 0])``
  and its contexts/reward coins from the block stream keyed ``(seed, H(e), t, 1)`` — the same for every algorithm
  and ε (common random numbers). The algorithm's own randomness (actions, privacy noise) comes from
  ``SeedSequence([seed, H(e), H(algorithm), i_ε, t])``. Nothing depends on n_jobs or task order.
* **Tasks and resume.** One task = (environment, algorithm, ε, block of ``trial_block`` trials), written atomically
  to ``shards/<task>.csv``; a restarted run skips finished shards; ``trials.csv`` is assembled sorted at the end.
* **Rows.** One row per (trial, checkpoint T): ``regret`` = cumulative pseudo-regret Σ_{t≤T} [max_a f* − f*(a_t)]
  of the single run at T_max (anytime curve), so ``dpbench plot RUN --x T --metric regret`` draws regret vs T.
  Non-private algorithms (privacy_model ``none``) run once per trial at ε = ∞.
"""

from __future__ import annotations

import json
import math
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpbench.bandits.config import AlgoEntry, BanditConfig, EnvEntry
from dpbench.bandits.envs import ContextStream, get_env
from dpbench.bandits.simulator import checkpoints, get_algorithm, run_bandit
from dpbench.runner import SHARD_DIR, _progress, prepare_run_dir, stable_hash, write_atomic, write_meta


@dataclass(frozen=True)
class BanditTask:
    env: EnvEntry
    algo: AlgoEntry
    eps_index: int
    epsilon: float
    trial_start: int
    trial_stop: int

    @property
    def shard_name(self) -> str:
        return (f"e{stable_hash(self.env.key):08x}-a{stable_hash(self.algo.key):08x}"
                f"-p{self.eps_index}-t{self.trial_start}-{self.trial_stop}.csv")


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


def plan_tasks(config: BanditConfig) -> list[BanditTask]:
    tasks = []
    for env in config.environments:
        for algo in config.algorithms:
            private = get_algorithm(algo.algorithm).privacy_model != "none"
            if private:
                eps_list = list(enumerate(config.epsilons))
            else:  # non-private reference: once, at ε = ∞
                index = config.epsilons.index(math.inf) if math.inf in config.epsilons else len(config.epsilons)
                eps_list = [(index, math.inf)]
            for eps_index, eps in eps_list:
                for start in range(0, config.trials, config.trial_block):
                    stop = min(config.trials, start + config.trial_block)
                    tasks.append(BanditTask(env, algo, eps_index, eps, start, stop))
    return tasks


def describe_environments(config: BanditConfig) -> dict[str, Any]:
    out = {}
    for env in config.environments:
        inst = make_instance(config, env, 0)
        out[env.id] = {"label": env.label, "loader": env.env, "options": dict(env.options), "d": inst.d,
                       "n_arms": inst.n_arms, "link": inst.link, "T_max": config.T,
                       "meta": {k: v for k, v in inst.meta.items() if isinstance(v, (int, float, str, bool))}}
    return out


def _execute(tasks: list[BanditTask], config: BanditConfig, n_jobs: int):
    if n_jobs == 1:
        for task in tasks:
            yield task, run_task(task, config)
        return
    from joblib import Parallel, delayed

    parallel = Parallel(n_jobs=n_jobs, return_as="generator_unordered")
    yield from parallel(delayed(_indexed)(task, config) for task in tasks)


def _indexed(task: BanditTask, config: BanditConfig):
    return task, run_task(task, config)


def assemble(run_dir: Path, tasks: list[BanditTask], config: BanditConfig) -> pd.DataFrame:
    frames = [pd.read_csv(run_dir / SHARD_DIR / t.shard_name) for t in tasks]
    if not frames:
        return pd.DataFrame()
    table = pd.concat(frames, ignore_index=True)
    env_rank = {e.id: i for i, e in enumerate(config.environments)}
    algo_rank = {a.label: i for i, a in enumerate(config.algorithms)}
    order = np.lexsort((table["T"], table["trial"], table["epsilon_index"], table["label"].map(algo_rank),
                        table["dataset_id"].map(env_rank)))
    table = table.iloc[order].reset_index(drop=True)
    write_atomic(run_dir / "trials.csv", table.to_csv(index=False))
    return table


def run_bandit_experiment(config: BanditConfig, *, n_jobs: int | None = None, fresh: bool = False,
                          progress: bool = True, log=print) -> Path:
    """Run (or resume) a bandit experiment; return its run directory."""
    started = time.time()
    n_jobs = config.n_jobs if n_jobs is None else n_jobs
    run_dir = prepare_run_dir(config, fresh)
    tasks = plan_tasks(config)
    write_atomic(run_dir / "datasets.json", json.dumps(describe_environments(config), indent=2, default=float))
    write_atomic(run_dir / "skipped.json", json.dumps({}))
    shard_dir = run_dir / SHARD_DIR
    todo = [t for t in tasks if not (shard_dir / t.shard_name).exists()]
    total = sum(t.trial_stop - t.trial_start for t in tasks)
    done = total - sum(t.trial_stop - t.trial_start for t in todo)
    if done:
        log(f"resuming {run_dir}: {done} runs already done, {len(todo)} tasks to go")
    with _progress(total, progress) as bar:
        bar.update(done)
        for task, rows in _execute(todo, config, n_jobs):
            write_atomic(shard_dir / task.shard_name, pd.DataFrame(rows).to_csv(index=False))
            bar.update(task.trial_stop - task.trial_start)
    table = assemble(run_dir, tasks, config)
    write_meta(run_dir, n_jobs, started, len(table))
    return run_dir
