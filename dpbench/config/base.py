"""The fields every experiment kind's config has — declared and parsed once here; each kind's schema
(:mod:`dpbench.engine.schema`, :mod:`dpbench.bandits.config`) adds its own fields and its δ rules."""

from __future__ import annotations

import json
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

from dpbench.config.fields import (
    ConfigError,
    check_keys,
    parse_backend,
    parse_delta,
    parse_epsilons,
    parse_n_jobs,
    parse_name,
    positive_int,
)
from dpbench.config.presets import PRESENTATION_KEYS, parse_presentation

#: top-level keys of every kind (a kind's TOP_LEVEL_KEYS adds its own and may reword these)
COMMON_KEYS = {
    "name": "run name; results go to <output_dir>/<name>/",
    "title": "figure title",
    "caption": "figure caption (e.g. 'synthetic demonstration of Thm 3, not a reproduction')",
    "kind": "experiment kind (regression by default)",
    "output_dir": "parent folder of the run (default results)",
    "seed": "base seed (non-negative integer)",
    "n_jobs": "parallel workers (-1 = all cores)",
    "trials": "independent trials per cell",
    "trial_block": "trials per task/shard (resume granularity)",
    "epsilons": "list of ε > 0, or {logspace: [start, stop, num]}",
    "delta": "privacy δ in (0, 1) or a rule",
    "plot": "the figure preset of `dpbench plot` (kind: and its options; `dpbench list figures`); with `plots:`, "
    "options shared by every figure",
    "plots": "several named figure presets {name: {metric, x, hue, ...}} (each merged over `plot:`)",
    "analyses": "named analyses `dpbench report` runs: [name, {name: NAME, options: {key: value}}]",
    "notes": "free text kept with the run",
    "backend": "parallel engine: loky (default, this machine) or dask (Dask distributed)",
    "scheduler": "with backend dask: tcp://host:port, a scheduler JSON file, or local (default: a LocalCluster)",
}
#: fields that never change a run's results (left out of its fingerprint, so a resumed run may change them)
VOLATILE_FIELDS = (
    "n_jobs",
    "title",
    "caption",
    *PRESENTATION_KEYS,
    "notes",
    "output_dir",
    "trial_block",
    "backend",
    "scheduler",
)


@dataclass(kw_only=True)
class BaseConfig:
    """The fields of every kind's config (keyword-only; each kind's dataclass adds its own)."""

    name: str
    epsilons: tuple[float, ...]
    delta: str | float
    trials: int
    trial_block: int
    seed: int = 0
    n_jobs: int = 1
    kind: str
    output_dir: str = "results"
    title: str = ""
    caption: str = ""
    plot: dict[str, Any] = field(default_factory=dict)
    plots: dict[str, dict[str, Any]] = field(default_factory=dict)
    analyses: list[dict[str, Any]] = field(default_factory=list)
    notes: str = ""
    backend: str = "loky"
    scheduler: str | None = None

    @property
    def run_dir(self) -> Path:
        return Path(self.output_dir) / self.name

    def to_dict(self) -> dict[str, Any]:
        """The resolved config as plain YAML-able data (written next to the results)."""
        return asdict(self)

    def fingerprint(self) -> dict[str, Any]:
        """The fields that determine the results (a resumed run must match them)."""
        data = self.to_dict()
        for volatile in VOLATILE_FIELDS:
            data.pop(volatile)
        return json.loads(json.dumps(data, default=str))


def parse_base(
    raw: dict[str, Any],
    keys: dict[str, str],
    *,
    kind: str,
    delta_rule: re.Pattern[str],
    delta_rules: str,
    delta: Any,
    trials: int,
    trial_block: int,
    allow_inf: bool = False,
    source: str = "<config>",
) -> dict[str, Any]:
    """The :class:`BaseConfig` fields of ``raw`` (after checking that it is a mapping — ``source`` names the file in
    the error — and its keys against the kind's ``keys``), with the kind's defaults for ``delta``, ``trials`` and
    ``trial_block``, its δ rules, and ``allow_inf`` for ε = ∞."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: the config must be a YAML mapping, got {type(raw).__name__}")
    check_keys(raw, keys, "")
    return {
        "name": parse_name(raw.get("name")),
        "epsilons": parse_epsilons(raw.get("epsilons"), allow_inf=allow_inf),
        "delta": parse_delta(raw.get("delta", delta), delta_rule, delta_rules),
        "trials": positive_int(raw.get("trials", trials), "trials"),
        "trial_block": positive_int(raw.get("trial_block", trial_block), "trial_block"),
        "seed": positive_int(raw.get("seed", 0), "seed", minimum=0),
        "n_jobs": parse_n_jobs(raw.get("n_jobs", 1)),
        "kind": kind,
        "output_dir": str(raw.get("output_dir", "results")),
        "title": str(raw.get("title", "")),
        "caption": str(raw.get("caption", "")),
        **parse_presentation(raw),
        "notes": str(raw.get("notes", "")),
        **parse_backend(raw.get("backend", "loky"), raw.get("scheduler")),
    }
