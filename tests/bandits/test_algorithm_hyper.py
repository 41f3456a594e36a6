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
