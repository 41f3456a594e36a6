"""Configs of ``kind: bandit`` experiments: YAML → validated :class:`BanditConfig` (errors name the field).

Example::

    name: bandit_jdp
    kind: bandit
    seed: 2025
    trials: 10
    T: 262144                      # T_max: one run per trial gives the whole anytime curve
    checkpoints_per_octave: 4      # cumulative regret recorded at ⌊2^{k/4}⌉ ≤ T_max (and T_max)
    epsilons: [0.1, 0.5, 1.0, .inf]   # .inf = non-private (σ = 0, same code path)
    delta: 1.0e-5                  # privacy δ; the failure probability of the algorithms is 1/T_max
    environments:
      - {env: sphere, label: "G-Sphere", options: {d: 5, n_arms: 10}}
    algorithms:
      - {algorithm: elim_iwr_jdp, label: "Elim + IWR (JDP)", hyper: {c_b: 0.05}}
      - linucb                     # non-private algorithms run once, at ε = ∞

Environments and algorithms accept ``grid:`` like the regression config (one entry per combination).
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import Any

import numpy as np

from dpbench.bandits.envs import get_env
from dpbench.bandits.simulator import get_algorithm
from dpbench.config.base import COMMON_KEYS, BaseConfig, parse_base
from dpbench.config.fields import (
    entry_key,
    fail,
    parse_component,
    parse_entries,
    positive_int,
    swept_id,
)
from dpbench.contract import HyperError
from dpbench.engine.cells import Entry, grid_entries

TOP_LEVEL_KEYS = {
    **COMMON_KEYS,
    "kind": "bandit",
    "trials": "independent runs (instances θ*, contexts, noise) per (environment, algorithm, ε)",
    "trial_block": "trials per task/shard (resume granularity; default 1)",
    "T": "horizon T_max (rounds) of every run",
    "checkpoints_per_octave": "cumulative-regret checkpoints per doubling of t (default 4)",
    "epsilons": "list of ε > 0 (.inf = non-private), or {logspace: [start, stop, num]}",
    "delta": "privacy δ in (0, 1), or '1/T' / '1/T^2'",
    "environments": "list of environment names or {env, label, options, grid}",
    "algorithms": "list of algorithm names or {algorithm, label, hyper, grid}",
}
#: δ rules of a bandit run: 1/T or 1/T² (T = T_max)
DELTA_RULE = re.compile(r"^\s*1\s*/\s*T\s*(?:\^\s*2)?\s*$")
ENV_KEYS = {"env", "label", "options", "grid"}
ALGO_KEYS = {"algorithm", "label", "hyper", "grid"}


@dataclass(frozen=True)
class EnvEntry:
    env: str
    label: str
    options: tuple[tuple[str, Any], ...] = ()
    swept: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        return entry_key(self.env, self.options)

    @property
    def id(self) -> str:
        return swept_id(self.label, self.options, self.swept)


@dataclass(kw_only=True)
class BanditConfig(BaseConfig):
    """A bandit run: every (environment, algorithm, ε, trial) cell, plus the fields of every kind."""

    environments: list[EnvEntry]
    algorithms: list[Entry]
    T: int
    delta: str | float = 1e-5
    checkpoints_per_octave: int = 4
    trials: int = 10
    trial_block: int = 1
    kind: str = "bandit"

    @property
    def privacy_delta(self) -> float:
        if isinstance(self.delta, str):
            power = 2.0 if self.delta == "1/T^2" else 1.0
            return float(self.T) ** (-power)
        return float(self.delta)

    def to_dict(self) -> dict[str, Any]:
        data = super().to_dict()
        data["environments"] = [
            {"env": e.env, "label": e.label, "options": dict(e.options), "swept": list(e.swept)}
            for e in self.environments
        ]
        data["algorithms"] = [a.as_dict("algorithm") for a in self.algorithms]
        # the generic results/plot code orders curves by config["mechanisms"][*]["label"]
        data["mechanisms"] = [a.as_dict("mechanism", hyper=False) for a in self.algorithms]
        data["epsilons"] = [e if math.isfinite(e) else "inf" for e in self.epsilons]
        return data


def parse_env(raw: Any, index: int) -> list[EnvEntry]:
    where = f"environments[{index}]"
    info, raw, options, combos = parse_component(
        raw, where, "env", ENV_KEYS, get_env, "options", lambda i: i.options(), "option of environment"
    )
    label = str(raw.get("label") or info.name)
    entries = []
    for combo in combos:
        merged = {**options, **combo}
        try:  # build one instance to validate the options now rather than inside a worker
            info.make(np.random.default_rng(0), **merged)
        except (TypeError, ValueError) as err:
            raise fail(f"{where}.options", str(err)) from None
        entries.append(EnvEntry(info.name, label, tuple(sorted(merged.items())), tuple(combos[0])))
    return entries


def parse_algorithm(raw: Any, index: int) -> list[Entry]:
    """One ``algorithms[index]`` entry → its concrete instances, every value checked against the algorithm's
    ``Hyper`` table before the first round (the error names the hyper or grid field); an entry keeps the values as
    the config gave them (its key, hence the algorithm's seeds, derives from them)."""
    info, raw, hyper, combos = parse_component(
        raw,
        f"algorithms[{index}]",
        "algorithm",
        ALGO_KEYS,
        get_algorithm,
        "hyper",
        lambda i: i.hyperparameters(),
        "hyperparameter",
    )

    def resolve(combo: dict[str, Any]) -> dict[str, Any]:
        try:
            info.check_hyper({**hyper, **combo})
        except HyperError as err:
            field_name = "grid" if err.name in combo else "hyper"
            raise fail(f"algorithms[{index}].{field_name}.{err.name}", err.reason) from None
        return {**hyper, **combo}

    return grid_entries(info.name, str(raw.get("label") or info.name), combos, resolve)


def parse_bandit_config(raw: dict[str, Any], *, source: str = "<config>") -> BanditConfig:
    """Validate a ``kind: bandit`` config mapping into a :class:`BanditConfig`."""
    base = parse_base(
        raw,
        TOP_LEVEL_KEYS,
        source=source,
        kind="bandit",
        delta_rule=DELTA_RULE,
        delta_rules="'1/T', '1/T^2'",
        delta=1e-5,
        trials=10,
        trial_block=1,
        allow_inf=True,
    )
    return BanditConfig(
        **base,
        environments=parse_entries(raw, "environments", parse_env, lambda entry: entry.key),
        algorithms=parse_entries(raw, "algorithms", parse_algorithm, lambda entry: entry.label),
        T=positive_int(raw.get("T"), "T", minimum=2),
        checkpoints_per_octave=positive_int(raw.get("checkpoints_per_octave", 4), "checkpoints_per_octave"),
    )
