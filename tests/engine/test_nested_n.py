"""``nested: n`` / ``nested: m`` (issue 16): the entries of an n (or public m) grid are cut from one draw of the
grid's largest value.

Exact in law: given the instance, a loader's rows are iid, so the first n rows of a draw of n_max rows have the law
of a draw of n rows. Checked here: the cut really is the prefix (and the largest n is the draw it would have been
without nesting, so no ``nested`` — the literal path, one draw per (draw, n) — and ``nested: n`` agree there), the
plan keeps each draw's n values in one worker chunk, configs are validated, and a two-sample KS test of an
estimate on cut vs directly drawn data (500 draws each, with a control that the test rejects).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd
import pytest
import scipy.stats as sps

from dpbench import registry
from dpbench.config import ConfigError, parse_config
from dpbench.engine import run
from dpbench.engine.core import affinity_chunks
from dpbench.engine.regression import nest_base_draw, plan_tasks, prepare_dataset
from dpbench.linalg import immutable


def stein_config(nested: bool, draws: int = 2, name: str = "nest", output_dir: str = "results") -> dict:
    entry = {
        "loader": "stein_synthetic",
        "options": {"covariates": "gauss_diag", "family": "logistic"},
        "grid": {"p": [3, 4], "n": [400, 900, 1600]},
    }
    if nested:
        entry["nested"] = "n"
    return {
        "name": name,
        "output_dir": output_dir,
        "seed": 11,
        "trials": 1,
        "data_draws": draws,
        "epsilons": [10],
        "delta": "1/n^1.1",
        "metrics": ["stein_err2"],
        "common_random_numbers": True,
        "datasets": [entry],
        "mechanisms": [
            {"mechanism": "stein_nonprivate", "hyper": {"family": "logistic", "covariates": "gaussian"}},
            {"mechanism": "stein_glm_gauss", "hyper": {"family": "logistic"}},
        ],
    }


def test_each_n_is_the_prefix_of_the_largest_n_draw() -> None:
    config = parse_config(stein_config(nested=True))
    prepare_dataset.cache_clear()
    nest_base_draw.cache_clear()
    by_p: dict[int, dict[int, object]] = {}
    for entry in config.datasets:
        dataset, stats, _ = prepare_dataset(entry, config.seed, 1)
        options = dict(entry.options)
        by_p.setdefault(options["p"], {})[options["n"]] = (dataset, stats)
    for p, cuts in by_p.items():
        big, _ = cuts[1600]
        for n, (dataset, stats) in cuts.items():
            assert dataset.X_train.shape == (n, p)
            np.testing.assert_array_equal(dataset.X_train, big.X_train[:n])
            np.testing.assert_array_equal(dataset.y_train, big.y_train[:n])
            assert dataset.X_public.shape[0] == n // p**2 == dataset.population.extra["m"]
            np.testing.assert_array_equal(dataset.X_public, big.X_public[: n // p**2])
            np.testing.assert_array_equal(dataset.population.theta, big.population.theta)
            assert immutable(stats.X) and immutable(stats.y)  # views of frozen memory: used without a copy
            if n < 1600:
                assert np.shares_memory(stats.X, big.X_train)


def test_nested_m_shares_the_private_rows_and_cuts_the_public_rows() -> None:
    raw = stein_config(nested=False)
    raw["datasets"][0].update(
        nested="m",
        options={"covariates": "gauss_diag", "family": "logistic", "n": 900, "p": 3, "instance_seed": 1},
        grid={"m": [10, 40, 25]},
    )
    config = parse_config(raw)
    prepare_dataset.cache_clear()
    nest_base_draw.cache_clear()
    cuts = {dict(e.options)["m"]: prepare_dataset(e, config.seed, 0)[0] for e in config.datasets}
    for m, dataset in cuts.items():
        assert dataset.X_public.shape == (m, 3)
        np.testing.assert_array_equal(dataset.X_public, cuts[40].X_public[:m])
        assert np.shares_memory(dataset.X_train, cuts[40].X_train)


def test_largest_n_is_the_draw_without_nesting_and_smaller_n_differ(tmp_path) -> None:
    tables = {}
    for nested in (False, True):
        config = parse_config(stein_config(nested, name=f"nest{nested}", output_dir=str(tmp_path)))
        run_dir = run(config, n_jobs=1, progress=False, log=lambda m: None)
        tables[nested] = pd.read_csv(run_dir / "trials.csv").drop(columns="seconds")
    plain, nested = tables[False], tables[True]
    assert len(plain) == len(nested) == 2 * 3 * 2 * 2
    largest = plain["n"] == 1600
    pd.testing.assert_frame_equal(plain[largest].reset_index(drop=True), nested[largest].reset_index(drop=True))
    assert (plain.loc[~largest, "stein_err2"].to_numpy() != nested.loc[~largest, "stein_err2"].to_numpy()).all()


def test_plan_keeps_a_draws_n_values_in_one_chunk() -> None:
    config = parse_config(stein_config(nested=True, draws=3))
    plan = plan_tasks(config, log=lambda m: None)
    keys = [task.affinity for task in plan.tasks]
    assert len(set(keys)) == 2 * 3  # (p, draw): every n of a draw shares one key
    runs = [k for i, k in enumerate(keys) if i == 0 or k != keys[i - 1]]
    assert len(runs) == len(set(keys))  # consecutive, so affinity_chunks keeps them together
    chunks = affinity_chunks(plan.tasks, n_jobs=1)
    assert all(len({task.affinity for task in chunk}) == 1 for chunk in chunks)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"nested": "p"}, "cannot nest its draws in 'p'"),
        ({"grid": {"p": [3, 4]}, "options": {"n": 500}}, "needs a grid over the option n"),
        ({"loader": "sphere_linear", "options": {}, "grid": {"n": [100, 200]}}, "it nests: none"),
    ],
)
def test_config_errors_name_the_field(change: dict, message: str) -> None:
    raw = stein_config(nested=True)
    raw["datasets"][0].update(change)
    with pytest.raises(ConfigError, match=rf"datasets\[0\]\.nested.*{re.escape(message)}"):
        parse_config(raw)


def ols_error(X: np.ndarray, y: np.ndarray, w_ols: np.ndarray) -> float:
    """‖θ_OLS − κw*‖: an n-dependent statistic of the rows (its spread shrinks like 1/√n)."""
    return float(np.linalg.norm(np.linalg.lstsq(X, y, rcond=None)[0] - w_ols))


def test_cut_has_the_law_of_a_direct_draw() -> None:
    """Two-sample KS, 500 data draws per path: θ_OLS error on the first 200 rows of a 1,000-row draw vs on a draw
    of 200 rows; the control (a draw of 100 rows) must be rejected."""
    info = registry.get_dataset("stein_synthetic")
    options = {"covariates": "gauss_diag", "family": "sigmoid", "p": 4}
    cut, direct, control = [], [], []
    for r in range(500):
        big = info.load(np.random.default_rng([5, r]), n=1000, **options)
        small = info.prefix(big, n=200, **options)
        cut.append(ols_error(small.X_train, small.y_train, small.population.extra["w_ols"]))
        for out, n, stream in ((direct, 200, 6), (control, 100, 7)):
            draw = info.load(np.random.default_rng([stream, r]), n=n, **options)
            out.append(ols_error(draw.X_train, draw.y_train, draw.population.extra["w_ols"]))
    assert sps.ks_2samp(cut, direct).pvalue > 0.01
    assert sps.ks_2samp(cut, control).pvalue < 1e-3
