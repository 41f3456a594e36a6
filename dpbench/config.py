"""Experiment configuration: YAML → validated, fully resolved :class:`Config`.

Everything is checked before any work starts; each problem raises :class:`ConfigError` with one line naming the
field (``mechanisms[2].hyper.T``) and what is allowed. Grids (``grid:`` under a dataset or mechanism entry) are
expanded here into one entry per combination, so the runner only sees concrete (dataset, mechanism) instances.

Example::

    name: ihm_vs_adassp
    seed: 50
    trials: 500
    epsilons: {logspace: [-1, 1, 6]}
    delta: 1/n^2
    datasets: [crime, pol, concreteslump, solar]
    mechanisms:
      - {mechanism: linmix, label: "LinMix [Lev et al. '25]"}
      - adassp
      - {mechanism: ihm, hyper: {T: 3}, grid: {C: [0.5, 1.0]}}
"""

from __future__ import annotations

import itertools
import json
import math
import re
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any

import numpy as np
import yaml

from dpbench import registry
from dpbench.metrics import METRICS

TOP_LEVEL_KEYS = {
    "name": "run name; results go to <output_dir>/<name>/",
    "title": "figure title",
    "caption": "figure caption (e.g. 'synthetic demonstration of Thm 3, not a reproduction')",
    "kind": "regression",
    "output_dir": "parent folder of the run (default results)",
    "seed": "base seed (non-negative integer)",
    "n_jobs": "parallel workers (-1 = all cores)",
    "trials": "trials per (dataset, mechanism, ε)",
    "large_dataset_trials": "{nd_above: N, trials: R}: fewer trials when n·d > N",
    "trial_block": "trials per task/shard (resume granularity)",
    "epsilons": "list of ε > 0, or {logspace: [start, stop, num]}",
    "delta": "'1/n^2', '1/n', '1/n^p' or a number in (0, 1)",
    "metrics": "metrics recorded per trial",
    "common_random_numbers": "same noise stream for every mechanism of a trial",
    "datasets": "list of loader names or {loader, label, options, grid}",
    "mechanisms": "list of mechanism names or {mechanism, label, hyper, grid}",
    "plot": "defaults for `dpbench plot` (metric, x, hue, panel, logy, refs)",
    "notes": "free text kept with the run",
    "backend": "parallel engine: loky (default, this machine) or dask (Dask distributed)",
    "scheduler": "with backend dask: tcp://host:port, a scheduler JSON file, or local (default: a LocalCluster)",
}
DATASET_KEYS = {"loader", "label", "options", "grid"}
MECHANISM_KEYS = {"mechanism", "label", "hyper", "grid"}
PLOT_KEYS = {"metric", "metrics", "x", "hue", "panel", "logy", "logx", "refs", "title", "caption", "ncols", "annotate"}
DELTA_RULE = re.compile(r"^\s*1\s*/\s*n\s*(?:\^\s*([0-9]*\.?[0-9]+))?\s*$")
DEFAULT_METRICS = ("train_mse", "test_mse", "excess_train_mse")


class ConfigError(ValueError):
    """A config problem, with the offending field in the message."""


@dataclass(frozen=True)
class DatasetEntry:
    """One concrete dataset instance: loader + options; ``label`` is the panel title."""

    loader: str
    label: str  # "" → the loaded dataset's meta["title"]
    options: tuple[tuple[str, Any], ...] = ()
    swept: tuple[str, ...] = ()

    @property
    def key(self) -> str:
        """Unique, stable identifier (seeds and shard names derive from it)."""
        return f"{self.loader}{json.dumps(dict(self.options), sort_keys=True)}"


@dataclass(frozen=True)
class MechanismEntry:
    """One concrete mechanism instance: registry name + hyperparameters; ``label`` is the curve label."""

    mechanism: str
    label: str
    hyper: tuple[tuple[str, Any], ...] = ()

    @property
    def key(self) -> str:
        return f"{self.mechanism}{json.dumps(dict(self.hyper), sort_keys=True)}"


@dataclass
class Config:
    name: str
    datasets: list[DatasetEntry]
    mechanisms: list[MechanismEntry]
    epsilons: tuple[float, ...]
    delta: str | float = "1/n^2"
    trials: int = 100
    large_nd_above: float | None = None
    large_trials: int | None = None
    trial_block: int = 100
    seed: int = 0
    n_jobs: int = 1
    metrics: tuple[str, ...] = DEFAULT_METRICS
    common_random_numbers: bool = False
    kind: str = "regression"
    output_dir: str = "results"
    title: str = ""
    caption: str = ""
    plot: dict[str, Any] = field(default_factory=dict)
    notes: str = ""
    backend: str = "loky"
    scheduler: str | None = None

    @property
    def run_dir(self) -> Path:
        return Path(self.output_dir) / self.name

    def delta_for(self, n: int) -> float:
        """δ for a dataset with n training rows (rule or fixed number)."""
        if isinstance(self.delta, str):
            match = DELTA_RULE.match(self.delta)
            power = float(match.group(1)) if match and match.group(1) else 1.0
            value = float(n) ** (-power)
            if not 0 < value < 1:
                raise ConfigError(f"delta: rule {self.delta!r} gives δ = {value} ∉ (0, 1) for n = {n}")
            return value
        return float(self.delta)

    def trials_for(self, n: int, d: int) -> int:
        if self.large_nd_above is not None and n * d > self.large_nd_above:
            return int(self.large_trials)
        return self.trials

    def to_dict(self) -> dict[str, Any]:
        """Resolved config as plain YAML-able data (written next to the results)."""
        data = asdict(self)
        data["datasets"] = [
            {"loader": e.loader, "label": e.label, "options": dict(e.options), "swept": list(e.swept)}
            for e in self.datasets
        ]
        data["mechanisms"] = [
            {"mechanism": e.mechanism, "label": e.label, "hyper": dict(e.hyper)} for e in self.mechanisms
        ]
        data["epsilons"] = list(self.epsilons)
        data["metrics"] = list(self.metrics)
        return data

    def fingerprint(self) -> dict[str, Any]:
        """The fields that determine the results (a resumed run must match them; n_jobs may change)."""
        data = self.to_dict()
        for volatile in ("n_jobs", "title", "caption", "plot", "notes", "output_dir", "trial_block"):
            data.pop(volatile)
        for volatile in ("backend", "scheduler"):  # where trials run never changes their results
            data.pop(volatile)
        return json.loads(json.dumps(data, default=str))


# ----------------------------------------------------------------------------------------------------------------
# field validators (each returns the clean value or raises ConfigError naming the field)


def _fail(field_name: str, message: str) -> ConfigError:
    return ConfigError(f"config field '{field_name}': {message}")


def _check_keys(mapping: dict[str, Any], allowed: set[str] | dict[str, str], where: str) -> None:
    unknown = sorted(set(mapping) - set(allowed))
    if unknown:
        prefix = f"{where}." if where else ""
        raise _fail(f"{prefix}{unknown[0]}", f"unknown key; allowed: {', '.join(sorted(allowed))}")


def _positive_int(value: Any, field_name: str, minimum: int = 1) -> int:
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise _fail(field_name, f"must be an integer ≥ {minimum}, got {value!r}")
    return int(value)


def parse_epsilons(value: Any) -> tuple[float, ...]:
    if isinstance(value, dict):
        _check_keys(value, {"logspace", "linspace"}, "epsilons")
        if len(value) != 1:
            raise _fail("epsilons", f"must hold exactly one of logspace/linspace, got {value!r}")
        ((kind, args),) = value.items()
        if not (isinstance(args, list) and len(args) == 3):
            raise _fail(f"epsilons.{kind}", f"must be [start, stop, num], got {args!r}")
        start, stop, num = args
        num = _positive_int(num, f"epsilons.{kind}[2]")
        grid = np.logspace(start, stop, num) if kind == "logspace" else np.linspace(start, stop, num)
        values = [float(v) for v in grid]
    elif isinstance(value, (list, tuple)) and value:
        values = value
    elif isinstance(value, (int, float)) and not isinstance(value, bool):
        values = [value]
    else:
        raise _fail("epsilons", f"must be a non-empty list of numbers > 0 or {{logspace: [a, b, n]}}, got {value!r}")
    clean = []
    for i, eps in enumerate(values):
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not math.isfinite(eps) or eps <= 0:
            raise _fail(f"epsilons[{i}]", f"ε must be a finite number > 0, got {eps!r}")
        clean.append(float(eps))
    return tuple(clean)


def parse_delta(value: Any) -> str | float:
    if isinstance(value, str):
        if DELTA_RULE.match(value):
            return value.replace(" ", "")
        try:
            value = float(value)
        except ValueError:
            raise _fail("delta", f"must be '1/n^2', '1/n', '1/n^p' or a number in (0, 1), got {value!r}") from None
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise _fail("delta", f"δ must be in (0, 1) (or a rule such as '1/n^2'), got {value!r}")
    return float(value)


def _grid_combinations(grid: Any, where: str) -> list[dict[str, Any]]:
    if grid is None:
        return [{}]
    if not isinstance(grid, dict) or not grid:
        raise _fail(where, f"must be a mapping of name → list of values, got {grid!r}")
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise _fail(f"{where}.{key}", f"must be a non-empty list, got {values!r}")
    keys = list(grid)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(grid[k] for k in keys))]


def _check_names(given: dict[str, Any], allowed: dict[str, Any], where: str, what: str) -> None:
    unknown = sorted(set(given) - set(allowed))
    if unknown:
        raise _fail(f"{where}.{unknown[0]}", f"unknown {what}; allowed: {', '.join(sorted(allowed)) or '(none)'}")


def _parse_component(
    raw: Any, where: str, name_key: str, keys: set[str], lookup, params_key: str, allowed_of, what: str
) -> tuple[Any, dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """Common part of a dataset/mechanism entry: name lookup, parameter names, grid expansion.

    Returns (registry info, the raw mapping, its fixed parameters, the grid combinations).
    """
    if isinstance(raw, str):
        raw = {name_key: raw}
    if not isinstance(raw, dict) or name_key not in raw:
        raise _fail(where, f"must be a {name_key} name or a mapping with '{name_key}', got {raw!r}")
    _check_keys(raw, keys, where)
    if not isinstance(raw[name_key], str):
        raise _fail(f"{where}.{name_key}", f"must be a {name_key} name (string), got {raw[name_key]!r}")
    try:
        info = lookup(raw[name_key])
    except KeyError as err:
        raise _fail(f"{where}.{name_key}", str(err).strip("\"'")) from None
    params = raw.get(params_key) or {}
    if not isinstance(params, dict):
        raise _fail(f"{where}.{params_key}", f"must be a mapping, got {params!r}")
    allowed = allowed_of(info)
    _check_names(params, allowed, f"{where}.{params_key}", f"{what} '{info.name}'")
    combos = _grid_combinations(raw.get("grid"), f"{where}.grid")
    _check_names(combos[0], allowed, f"{where}.grid", f"{what} '{info.name}'")
    return info, raw, params, combos


def parse_dataset(raw: Any, index: int) -> list[DatasetEntry]:
    info, raw, options, combos = _parse_component(
        raw,
        f"datasets[{index}]",
        "loader",
        DATASET_KEYS,
        registry.get_dataset,
        "options",
        lambda i: i.options(),
        "option of loader",
    )
    label = str(raw.get("label") or "")  # empty: the runner uses the loader's title
    swept = tuple(combos[0])
    return [DatasetEntry(info.name, label, tuple(sorted({**options, **combo}.items())), swept) for combo in combos]


def parse_mechanism(raw: Any, index: int) -> list[MechanismEntry]:
    info, raw, hyper, combos = _parse_component(
        raw,
        f"mechanisms[{index}]",
        "mechanism",
        MECHANISM_KEYS,
        registry.get_mechanism,
        "hyper",
        lambda i: i.hyperparameters(),
        "hyperparameter of",
    )
    unavailable = getattr(info.fit, "unavailable", "")  # an optional peer whose library does not import
    if unavailable:
        raise _fail(f"mechanisms[{index}].mechanism", f"'{info.name}' is unavailable: {unavailable}")
    base_label = str(raw.get("label") or info.name)
    # an external "pkg.module:fit" keeps its import path: worker processes only discover built-ins and entry points
    reference = str(raw["mechanism"]) if ":" in str(raw["mechanism"]) else info.name
    entries = []
    for combo in combos:
        suffix = ", ".join(f"{k}={v}" for k, v in combo.items())
        label = f"{base_label} ({suffix})" if suffix else base_label
        entries.append(MechanismEntry(reference, label, tuple(sorted({**hyper, **combo}.items()))))
    return entries


def _parse_list(raw: dict[str, Any], key: str, parser) -> list:
    items = raw.get(key)
    if not isinstance(items, list) or not items:
        raise _fail(key, f"must be a non-empty list, got {items!r}")
    entries = [entry for i, item in enumerate(items) for entry in parser(item, i)]
    seen: dict[Any, int] = {}
    for i, entry in enumerate(entries):
        ident = entry.key if key == "datasets" else entry.label
        if ident in seen:
            raise _fail(key, f"entry {i} duplicates entry {seen[ident]} ({ident}); give it a distinct label/options")
        seen[ident] = i
    return entries


def parse_metrics(value: Any) -> tuple[str, ...]:
    if value is None:
        return DEFAULT_METRICS
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise _fail("metrics", f"must be a non-empty list, got {value!r}")
    registry.discover()  # modules of mechanisms/loaders may register their own metrics
    for i, name in enumerate(value):
        if not isinstance(name, str) or name not in METRICS:
            raise _fail(f"metrics[{i}]", f"unknown metric {name!r}; allowed: {', '.join(sorted(METRICS))}")
    return tuple(value)


BACKENDS = ("loky", "dask")
SCHEDULER_SCHEMES = ("tcp://", "tls://", "ucx://", "inproc://", "ws://", "wss://")


def parse_backend(backend: Any, scheduler: Any) -> dict[str, Any]:
    """``backend``/``scheduler`` → Config fields; a scheduler is an address, a ``.json`` scheduler file or ``local``."""
    if backend not in BACKENDS:
        raise _fail("backend", f"must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if scheduler is None:
        return {"backend": backend, "scheduler": None}
    if backend != "dask":
        raise _fail("scheduler", f"is only used with backend: dask (backend is {backend!r})")
    if not isinstance(scheduler, str) or not (
        scheduler == "local" or scheduler.startswith(SCHEDULER_SCHEMES) or scheduler.endswith(".json")
    ):
        raise _fail(
            "scheduler",
            f"must be 'local', an address such as tcp://host:8786 or a scheduler .json file, got {scheduler!r}",
        )
    return {"backend": backend, "scheduler": scheduler}


def parse_config(raw: Any, *, source: str = "<config>") -> Config:
    """Validate a config mapping (as loaded from YAML) and resolve it into a :class:`Config`."""
    if not isinstance(raw, dict):
        raise ConfigError(f"{source}: the config must be a YAML mapping, got {type(raw).__name__}")
    kind = raw.get("kind", "regression")
    if kind != "regression":  # other experiment kinds contribute their own schema through the registry
        try:
            info = registry.get_kind(str(kind))
        except KeyError:
            raise _fail("kind", f"must be one of {', '.join(sorted(registry.KINDS))}, got {kind!r}") from None
        return info.parse(raw, source=source)
    _check_keys(raw, TOP_LEVEL_KEYS, "")
    name = raw.get("name")
    if not isinstance(name, str) or not re.fullmatch(r"[A-Za-z0-9_.-]+", name or ""):
        raise _fail("name", f"must be a non-empty string of letters, digits, '_', '-', '.', got {name!r}")
    large = raw.get("large_dataset_trials")
    large_nd = large_trials = None
    if large is not None:
        if not isinstance(large, dict):
            raise _fail("large_dataset_trials", f"must be {{nd_above: N, trials: R}}, got {large!r}")
        _check_keys(large, {"nd_above", "trials"}, "large_dataset_trials")
        large_nd = float(_positive_int(large.get("nd_above"), "large_dataset_trials.nd_above"))
        large_trials = _positive_int(large.get("trials"), "large_dataset_trials.trials")
    n_jobs = raw.get("n_jobs", 1)
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1:
        raise _fail("n_jobs", f"must be a positive integer or -1 (all cores), got {n_jobs!r}")
    plot = raw.get("plot") or {}
    if not isinstance(plot, dict):
        raise _fail("plot", f"must be a mapping, got {plot!r}")
    _check_keys(plot, PLOT_KEYS, "plot")
    crn = raw.get("common_random_numbers", False)
    if not isinstance(crn, bool):
        raise _fail("common_random_numbers", f"must be true or false, got {crn!r}")
    return Config(
        name=name,
        datasets=_parse_list(raw, "datasets", parse_dataset),
        mechanisms=_parse_list(raw, "mechanisms", parse_mechanism),
        epsilons=parse_epsilons(raw.get("epsilons")),
        delta=parse_delta(raw.get("delta", "1/n^2")),
        trials=_positive_int(raw.get("trials", 100), "trials"),
        large_nd_above=large_nd,
        large_trials=large_trials,
        trial_block=_positive_int(raw.get("trial_block", 100), "trial_block"),
        seed=_positive_int(raw.get("seed", 0), "seed", minimum=0),
        n_jobs=n_jobs,
        metrics=parse_metrics(raw.get("metrics")),
        common_random_numbers=crn,
        kind=kind,
        output_dir=str(raw.get("output_dir", "results")),
        title=str(raw.get("title", "")),
        caption=str(raw.get("caption", "")),
        plot=dict(plot),
        notes=str(raw.get("notes", "")),
        **parse_backend(raw.get("backend", "loky"), raw.get("scheduler")),
    )


def load_config(path: str | Path, **overrides: Any) -> Config:
    """Read and validate a YAML config; ``overrides`` (e.g. trials=5, n_jobs=2) replace top-level fields."""
    path = Path(path)
    if not path.is_file():
        raise ConfigError(f"config file not found: {path}")
    try:
        raw = yaml.safe_load(path.read_text())
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
