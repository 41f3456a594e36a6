"""Speed shortcuts of issue 16 (full grids): each one equals (or is equal in law to) the path it replaces."""

from __future__ import annotations

import numpy as np
import pytest

from dpbench import linalg
from dpbench.linalg import gram_stats


def _design(n: int, d: int, decay: float, seed: int = 0) -> tuple[np.ndarray, np.ndarray]:
    rng = np.random.default_rng(seed)
    X = rng.standard_normal((n, d)) * np.arange(1, d + 1) ** -decay
    return X, X @ rng.standard_normal(d) + rng.standard_normal(n)


def test_gram_ols_matches_the_svd_solution_on_large_well_conditioned_data():
    X, y = _design(60_000, 40, 1.0)
    assert X.size >= linalg.GRAM_OLS_MIN_SIZE
    fast = gram_stats(X, y).theta_ols
    svd = np.linalg.lstsq(X, y, rcond=None)[0]
    np.testing.assert_allclose(fast, svd, rtol=1e-9, atol=1e-12)


def test_small_data_keeps_the_svd_path_bit_for_bit():
    X, y = _design(2_000, 10, 1.0)
    np.testing.assert_array_equal(gram_stats(X, y).theta_ols, np.linalg.lstsq(X, y, rcond=None)[0])


def test_rank_deficient_large_data_falls_back_to_the_minimum_norm_solution():
    X, y = _design(60_000, 40, 1.0)
    X = np.column_stack([X, X[:, :1]])  # duplicated column: XᵀX singular, the Cholesky path must not be taken
    theta = gram_stats(X, y).theta_ols
    np.testing.assert_allclose(theta, np.linalg.lstsq(X, y, rcond=None)[0], rtol=1e-9, atol=1e-12)
    assert theta[0] == pytest.approx(theta[-1], rel=1e-9)  # the minimum-norm split of the duplicated column


def test_tasks_of_one_data_draw_share_a_chunk_and_chunks_stay_balanced():
    from types import SimpleNamespace

    from dpbench.engine.core import CHUNKS_PER_WORKER, affinity_chunks

    tasks = [SimpleNamespace(affinity=("ds", draw), i=i) for draw in range(10) for i in range(6)]
    chunks = affinity_chunks(tasks, n_jobs=2)
    assert [t for chunk in chunks for t in chunk] == tasks  # every task once, in order
    assert all(len({t.affinity for t in chunk}) == 1 for chunk in chunks)  # never two draws in one chunk
    assert len(chunks) == 10  # one chunk per draw (cap 8 ≥ 6)
    one_dataset = [SimpleNamespace(affinity=("ds", None)) for _ in range(40)]
    assert len(affinity_chunks(one_dataset, n_jobs=2)) >= CHUNKS_PER_WORKER * 2  # split: both workers busy
    assert len(affinity_chunks([SimpleNamespace(), SimpleNamespace()], n_jobs=2)) == 2  # no affinity: one each


def test_a_finished_chunk_releases_its_data_draw_but_keeps_a_dataset_without_draws(monkeypatch):
    from dpbench.engine import core, regression

    cleared = []
    monkeypatch.setattr(regression.prepare_dataset, "cache_clear", lambda: cleared.append(True))

    class Drawn:
        draw = 3
        release = regression.Task.release

    class Plain:
        draw = None
        release = regression.Task.release

    assert core._run_chunk([Drawn(), Drawn()], None, lambda task, config: task.draw) == [3, 3]
    assert cleared == [True]  # once, after the chunk
    core._run_chunk([Plain()], None, lambda task, config: None)
    assert cleared == [True]


def test_a_config_with_data_draws_plans_one_task_per_draw_holding_every_cell():
    from dpbench.config import load_config
    from dpbench.engine.regression import plan_tasks

    config = load_config("configs/stein/stein_fig01.yaml", data_draws=3, trials=2)
    plan = plan_tasks(config, log=lambda _m: None)
    cells = len(config.mechanisms) * len(config.epsilons)
    assert len(plan.tasks) == len(config.datasets) * 3  # one per (dataset, draw): trial_block covers both trials
    assert all(len(task.cells) == cells for task in plan.tasks)
    assert all(len(set(task.planned_keys())) == len(task.planned_keys()) == cells * 2 for task in plan.tasks)
    assert sorted({task.draw for task in plan.tasks}) == [0, 1, 2]
    assert len({task.shard_name for task in plan.tasks}) == len(plan.tasks)


def test_a_config_without_draws_keeps_one_task_per_mechanism_and_epsilon():
    from dpbench.config import load_config
    from dpbench.engine.regression import plan_tasks

    config = load_config("configs/ihm_vs_adassp.yaml")
    plan = plan_tasks(config, log=lambda _m: None)
    assert all(len(task.cells) == 1 for task in plan.tasks)
    assert {task.cells[0].eps_index for task in plan.tasks} == set(range(len(config.epsilons)))
