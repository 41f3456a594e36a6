"""Bandit algorithms declare their hyperparameters with ``Hyper`` like mechanisms: configs are checked against the
table (the error names the field), the factory receives every value with its default filled."""

from __future__ import annotations

import math
import re

import numpy as np
import pytest

from dpbench.bandits.config import parse_bandit_config
from dpbench.bandits.envs import get_env
from dpbench.bandits.simulator import get_algorithm
from dpbench.config import ConfigError
from dpbench.contract import HyperError


def config(algorithm: dict) -> dict:
    return {
        "name": "t", "kind": "bandit", "seed": 1, "trials": 1, "T": 64, "epsilons": [math.inf],
        "environments": [{"env": "sphere", "options": {"d": 3, "n_arms": 4}}], "algorithms": [algorithm],
    }  # fmt: skip


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"algorithm": "linucb", "hyper": {"lam": -1}}, "algorithms[0].hyper.lam"),
        ({"algorithm": "linucb", "grid": {"growth": [0.1, 0]}}, "algorithms[0].grid.growth"),
        ({"algorithm": "linucb", "hyper": {"fail_prob": 2.0}}, "algorithms[0].hyper.fail_prob"),
    ],
)
def test_a_value_outside_the_declaration_is_refused_naming_its_field(entry, field):
    with pytest.raises(ConfigError, match=re.escape(f"'{field}': must be")):
        parse_bandit_config(config(entry))


def test_the_factory_gets_the_defaults_filled_and_refuses_library_callers_too():
    info = get_algorithm("linucb")
    assert info.hyperparameters() == {"lam": 1.0, "fail_prob": None, "growth": 1 / 16}
    env = get_env("sphere").make(np.random.default_rng(0), d=3, n_arms=4)
    policy = info.make(env, 100, math.inf, 1e-5, np.random.default_rng(1), lam=2.0)
    assert policy.lam == 2.0 and policy.fail == 1 / 100 and policy.growth == 1 / 16
    with pytest.raises(HyperError, match="growth: must be a number > 0"):
        info.make(env, 100, math.inf, 1e-5, np.random.default_rng(1), growth=-1.0)
    assert parse_bandit_config(config({"algorithm": "linucb", "hyper": {"lam": 0.5}})).algorithms[0].hyper == (
        ("lam", 0.5),
    )


def test_every_registered_algorithm_declares_its_hyperparameters_in_a_table():
    from dpbench.bandits.simulator import ALGORITHMS

    get_algorithm("linucb")  # discovery
    undeclared = sorted(name for name, info in ALGORITHMS.items() if not info.hyper)
    assert not undeclared, f"bandit algorithms without a Hyper table: {undeclared}"


@pytest.mark.parametrize(
    ("entry", "field"),
    [
        ({"algorithm": "elim_iwr_jdp", "hyper": {"K": 0}}, "algorithms[0].hyper.K"),
        ({"algorithm": "elim_iwr_ldp", "hyper": {"simulation": "per-user"}}, "algorithms[0].hyper.simulation"),
        ({"algorithm": "elim_ssp_jdp", "grid": {"planning": ["spanner", "random"]}}, "algorithms[0].grid.planning"),
        ({"algorithm": "elim_iwr_glm_jdp", "hyper": {"C": 0.5}}, "algorithms[0].hyper.C"),
        ({"algorithm": "squarecb_jdp", "hyper": {"R": 0}}, "algorithms[0].hyper.R"),
        ({"algorithm": "squarecb_ldp", "hyper": {"calibration": "gauss"}}, "algorithms[0].hyper.calibration"),
        ({"algorithm": "squarecb_perfect_oracle", "hyper": {"schedule": "x"}}, "algorithms[0].hyper.schedule"),
        ({"algorithm": "elim_iwr_jdp", "hyper": {"lam": 1.0}}, "algorithms[0].hyper.lam"),
    ],
)
def test_the_other_algorithms_refuse_a_value_outside_their_table_naming_the_field(entry, field):
    with pytest.raises(ConfigError, match=re.escape(f"'{field}': ")):
        parse_bandit_config(config(entry))


def test_an_elimination_factory_passes_its_table_to_its_oracle():
    """The K of the table sets the oracle's batches (2K) and the planning reaches the policy."""
    env = get_env("sphere").make(np.random.default_rng(0), d=3, n_arms=4)
    info = get_algorithm("elim_iwr_jdp")
    policy = info.make(env, 256, 1.0, 1e-5, np.random.default_rng(1), K=3, planning="uniform")
    assert policy.batches == 6 and policy.planning == "uniform" and policy.C == 2.0
    theory = info.make(env, 256, 1.0, 1e-5, np.random.default_rng(1), preset="theory")
    assert theory.batches == 2 * 4  # max(4, ⌈log log T⌉)
    assert get_algorithm("elim_ssp_ldp").make(env, 256, 1.0, 1e-5, np.random.default_rng(1)).batches == 1


def test_dpbench_list_shows_the_algorithms_and_one_algorithms_table():
    from typer.testing import CliRunner

    from dpbench.cli import app

    runner = CliRunner()
    listing = runner.invoke(app, ["list", "algorithms"])
    assert listing.exit_code == 0 and "squarecb_perfect_oracle" in listing.output and "elim_iwr_jdp" in listing.output
    table = runner.invoke(app, ["list", "algorithms", "squarecb_ldp"])
    assert table.exit_code == 0
    assert "simulation" in table.output and "R " in table.output and "(default 2.0)" in table.output
