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

import json
import math
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dpbench.bandits.envs import get_env
from dpbench.bandits.simulator import get_algorithm
from dpbench.config import (
    PRESENTATION_KEYS,
    ConfigError,
    _check_keys,
    _fail,
    _parse_component,
    _positive_int,
    parse_backend,
    parse_presentation,
)

TOP_LEVEL_KEYS = {
    "name": "run name; results go to <output_dir>/<name>/",
    "kind": "bandit",
    "title": "figure title",
    "caption": "figure caption",
    "output_dir": "parent folder of the run (default results)",
    "seed": "base seed (non-negative integer)",
    "n_jobs": "parallel workers (-1 = all cores)",
    "trials": "independent runs (instances θ*, contexts, noise) per (environment, algorithm, ε)",
    "trial_block": "trials per task/shard (resume granularity; default 1)",
    "T": "horizon T_max (rounds) of every run",
    "checkpoints_per_octave": "cumulative-regret checkpoints per doubling of t (default 4)",
    "epsilons": "list of ε > 0 (.inf = non-private)",
    "delta": "privacy δ in (0, 1), or '1/T' / '1/T^2'",
    "environments": "list of environment names or {env, label, options, grid}",
    "algorithms": "list of algorithm names or {algorithm, label, hyper, grid}",
    "plot": "the figure preset of `dpbench plot` (see dpbench.config.PLOT_KEYS)",
    "plots": "several named figure presets {name: {metric, x, hue, ...}} (each merged over `plot:`)",
    "analyses": "named analyses `dpbench report` runs: [name, {name: NAME, options: {key: value}}]",
    "notes": "free text kept with the run",
    "backend": "parallel engine: loky (default, this machine) or dask (Dask distributed)",
    "scheduler": "with backend dask: tcp://host:port, a scheduler JSON file, or local (default: a LocalCluster)",
}
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
        return f"{self.env}{json.dumps(dict(self.options), sort_keys=True)}"

    @property
    def id(self) -> str:
        opts = dict(self.options)
        if not self.swept:
            return self.label
        return f"{self.label} [" + ", ".join(f"{k}={opts[k]}" for k in self.swept) + "]"


@dataclass(frozen=True)
class AlgoEntry:
    algorithm: str
    label: str
    hyper: tuple[tuple[str, Any], ...] = ()

    @property
    def key(self) -> str:
        return f"{self.algorithm}{json.dumps(dict(self.hyper), sort_keys=True)}"


@dataclass
class BanditConfig:
    name: str
    environments: list[EnvEntry]
    algorithms: list[AlgoEntry]
    epsilons: tuple[float, ...]
    T: int
    delta: str | float = 1e-5
    checkpoints_per_octave: int = 4
    trials: int = 10
    trial_block: int = 1
    seed: int = 0
    n_jobs: int = 1
    kind: str = "bandit"
    output_dir: str = "results"
    title: str = ""
    caption: str = ""
    plot: dict[str, Any] = field(default_factory=dict)
    plots: dict[str, dict[str, Any]] = field(default_factory=dict)
    analyses: list[dict[str, Any]] = field(default_factory=list)
    notes: str = ""
    backend: str = "loky"
    scheduler: str | None = None
    large_trials: int | None = None  # the CLI's --trials override touches it (regression field; unused here)

    @property
    def run_dir(self) -> Path:
        return Path(self.output_dir) / self.name

    @property
    def privacy_delta(self) -> float:
        if isinstance(self.delta, str):
            power = 2.0 if self.delta == "1/T^2" else 1.0
            return float(self.T) ** (-power)
        return float(self.delta)

    def to_dict(self) -> dict[str, Any]:
        data = asdict(self)
        data["environments"] = [
            {"env": e.env, "label": e.label, "options": dict(e.options), "swept": list(e.swept)}
            for e in self.environments
        ]
        data["algorithms"] = [{"algorithm": a.algorithm, "label": a.label, "hyper": dict(a.hyper)}
                              for a in self.algorithms]
        # the generic results/plot code orders curves by config["mechanisms"][*]["label"]
        data["mechanisms"] = [{"mechanism": a.algorithm, "label": a.label} for a in self.algorithms]
        data["epsilons"] = [e if math.isfinite(e) else "inf" for e in self.epsilons]
        data.pop("large_trials")
        return data

    def fingerprint(self) -> dict[str, Any]:
        data = self.to_dict()
        for volatile in ("n_jobs", "title", "caption", *PRESENTATION_KEYS, "notes", "output_dir", "trial_block"):
            data.pop(volatile)
        for volatile in ("backend", "scheduler"):  # where trials run never changes their results
            data.pop(volatile)
        return json.loads(json.dumps(data, default=str))


def parse_epsilons(value: Any) -> tuple[float, ...]:
    if isinstance(value, (int, float)) and not isinstance(value, bool):
        value = [value]
    if not isinstance(value, list) or not value:
        raise _fail("epsilons", f"must be a non-empty list of numbers > 0 (.inf = non-private), got {value!r}")
    clean = []
    for i, eps in enumerate(value):
        if isinstance(eps, str) and eps.strip().lower() in ("inf", ".inf", "infinity"):
            eps = math.inf
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or math.isnan(eps) or eps <= 0:
            raise _fail(f"epsilons[{i}]", f"ε must be a number > 0 or .inf, got {eps!r}")
        clean.append(float(eps))
    if len(set(clean)) != len(clean):
        raise _fail("epsilons", f"values must be distinct, got {clean}")
    return tuple(clean)


def parse_delta(value: Any) -> str | float:
    if isinstance(value, str):
        if value.replace(" ", "") in ("1/T", "1/T^2"):
            return value.replace(" ", "")
        try:
            value = float(value)
        except ValueError:
            raise _fail("delta", f"must be a number in (0, 1), '1/T' or '1/T^2', got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise _fail("delta", f"δ must lie in (0, 1), got {value!r}")
    return float(value)


def parse_env(raw: Any, index: int) -> list[EnvEntry]:
    where = f"environments[{index}]"
    info, raw, options, combos = _parse_component(
        raw, where, "env", ENV_KEYS, get_env, "options", lambda i: i.options(), "option of environment"
    )
    label = str(raw.get("label") or info.name)
    entries = []
    for combo in combos:
        merged = {**options, **combo}
        try:  # build one instance to validate the options now rather than inside a worker
            import numpy as np

            info.make(np.random.default_rng(0), **merged)
        except (TypeError, ValueError) as err:
            raise _fail(f"{where}.options", str(err)) from None
        entries.append(EnvEntry(info.name, label, tuple(sorted(merged.items())), tuple(combos[0])))
    return entries


def parse_algorithm(raw: Any, index: int) -> list[AlgoEntry]:
    info, raw, hyper, combos = _parse_component(
        raw, f"algorithms[{index}]", "algorithm", ALGO_KEYS, get_algorithm, "hyper", lambda i: i.hyperparameters(),
        "hyperparameter",
    )
    base = str(raw.get("label") or info.name)
    entries = []
    for combo in combos:
        suffix = ", ".join(f"{k}={v}" for k, v in combo.items())
        entries.append(AlgoEntry(info.name, f"{base} ({suffix})" if suffix else base,
                                 tuple(sorted({**hyper, **combo}.items()))))
    return entries


def _parse_list(raw: dict[str, Any], key: str, parser) -> list:
    items = raw.get(key)
    if not isinstance(items, list) or not items:
        raise _fail(key, f"must be a non-empty list, got {items!r}")
    entries = [e for i, item in enumerate(items) for e in parser(item, i)]
    seen: dict[str, int] = {}
    for i, entry in enumerate(entries):
        ident = entry.key if key == "environments" else entry.label
        if ident in seen:
            raise _fail(key, f"entry {i} duplicates entry {seen[ident]} ({ident}); give it a distinct label/options")
        seen[ident] = i
    return entries


def parse_bandit_config(raw: dict[str, Any], *, source: str = "<config>") -> BanditConfig:
    """Validate a ``kind: bandit`` config mapping into a :class:`BanditConfig`."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: the config must be a YAML mapping, got {type(raw).__name__}")
    _check_keys(raw, TOP_LEVEL_KEYS, "")
    name = raw.get("name")
    if not isinstance(name, str) or not name or not all(c.isalnum() or c in "_.-" for c in name):
        raise _fail("name", f"must be a non-empty string of letters, digits, '_', '-', '.', got {name!r}")
    n_jobs = raw.get("n_jobs", 1)
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1:
        raise _fail("n_jobs", f"must be a positive integer or -1 (all cores), got {n_jobs!r}")
    return BanditConfig(
        name=name,
        environments=_parse_list(raw, "environments", parse_env),
        algorithms=_parse_list(raw, "algorithms", parse_algorithm),
        epsilons=parse_epsilons(raw.get("epsilons")),
        T=_positive_int(raw.get("T"), "T", minimum=2),
        delta=parse_delta(raw.get("delta", 1e-5)),
        checkpoints_per_octave=_positive_int(raw.get("checkpoints_per_octave", 4), "checkpoints_per_octave"),
        trials=_positive_int(raw.get("trials", 10), "trials"),
        trial_block=_positive_int(raw.get("trial_block", 1), "trial_block"),
        seed=_positive_int(raw.get("seed", 0), "seed", minimum=0),
        n_jobs=n_jobs,
        output_dir=str(raw.get("output_dir", "results")),
        title=str(raw.get("title", "")),
        caption=str(raw.get("caption", "")),
        **parse_presentation(raw),
        notes=str(raw.get("notes", "")),
        **parse_backend(raw.get("backend", "loky"), raw.get("scheduler")),
    )
