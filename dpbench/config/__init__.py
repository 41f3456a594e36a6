"""Experiment configs: YAML → a validated, fully resolved config of its experiment kind.

Everything is checked before any work starts; each problem raises :class:`ConfigError` with one line naming the
field (``mechanisms[2].hyper.T``) and what is allowed.

* :func:`parse_config` / :func:`load_config` — the one entry point: ``kind:`` (default ``regression``) picks the
  kind's schema through the registry;
* :mod:`~dpbench.config.fields` — the field validators every schema shares;
* :mod:`~dpbench.config.base` — the fields every kind has (:class:`~dpbench.config.base.BaseConfig`), parsed once;
* :mod:`~dpbench.config.presets` — the figure-preset schema (``plot:``, ``plots:``) and ``analyses:``;
* each kind's schema lives beside its kind: :mod:`dpbench.engine.schema` (regression), :mod:`dpbench.bandits.config`
  (bandit).
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml

from dpbench import registry
from dpbench.config.fields import ConfigError, fail

__all__ = ["ConfigError", "load_config", "parse_config"]

#: suffixes of data files a user may give in place of a config
DATA_SUFFIXES = (".csv", ".tsv", ".txt", ".data", ".gz", ".parquet", ".xlsx")


def parse_config(raw: Any, *, source: str = "<config>") -> Any:
    """Validate a config mapping (as loaded from YAML) with the schema of its ``kind`` (default regression)."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: the config must be a YAML mapping, got {type(raw).__name__}")
    kind = raw.get("kind", "regression")
    try:
        info = registry.get_kind(str(kind))
    except KeyError:
        raise fail("kind", f"must be one of {', '.join(sorted(registry.KINDS))}, got {kind!r}") from None
    return info.parse(raw, source=source)


def load_config(path: str | Path, **overrides: Any) -> Any:
    """Read and validate a YAML config; ``overrides`` (e.g. trials=5, n_jobs=2) replace top-level fields."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(
            f"{path} is a folder, not a config file: give one YAML file, e.g. "
            f"configs/ihm_vs_adassp.yaml (`dpbench list configs {path}` lists the configs under it; "
            f"`dpbench plot {path}` draws the runs under it)"
        )
    if not path.is_file():
        raise ConfigError(
            f"config file not found: {path} (the configs shipped with dpbench, by name: dpbench list configs)"
        )
    if path.suffix.lower() in DATA_SUFFIXES:
        raise ConfigError(
            f"{path} is a data file, not a config: a config is a YAML file (name:, datasets:, mechanisms:, …) whose "
            f"datasets: list can read it with {{loader: csv, options: {{path: {path.name}, target: …, bounds: …}}}} "
            "(docs/byo_tutorial.md)"
        )
    try:
        raw = yaml.safe_load(path.read_text(encoding="utf-8"))
    except yaml.YAMLError as err:
        raise ConfigError(f"{path}: invalid YAML: {err}") from None
    if isinstance(raw, dict):
        raw.update({k: v for k, v in overrides.items() if v is not None})
        resolve_data_paths(raw, path.resolve().parent)
    return parse_config(raw, source=str(path))


def resolve_data_paths(raw: dict[str, Any], base: Path) -> None:
    """A dataset option ``path`` (e.g. ``loader: csv``) that is relative is read from the config file's folder."""
    for entry in raw.get("datasets") or []:
        options = entry.get("options") if isinstance(entry, dict) else None
        if isinstance(options, dict) and isinstance(options.get("path"), str):
            file = Path(options["path"]).expanduser()
            if not file.is_absolute():
                options["path"] = str(base / file)
