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

import functools
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
from dpbench.contract import HyperError
from dpbench.metrics import METRICS
from dpbench.privacy.validate import DELTA_MIN, EPSILON_RANGE

TOP_LEVEL_KEYS = {
    "name": "run name; results go to <output_dir>/<name>/",
    "title": "figure title",
    "caption": "figure caption (e.g. 'synthetic demonstration of Thm 3, not a reproduction')",
    "kind": "regression",
    "output_dir": "parent folder of the run (default results)",
    "seed": "base seed (non-negative integer)",
    "n_jobs": "parallel workers (-1 = all cores)",
    "trials": "trials per (dataset, mechanism, ε) — per data draw with data_draws",
    "large_dataset_trials": "{nd_above: N, trials: R, data_draws: D}: fewer trials (and draws) when n·d > N",
    "data_draws": "independent draws of each dataset (seeded like trials; default: one draw, no data_draw column)",
    "trial_block": "trials per task/shard (resume granularity)",
    "epsilons": "list of ε > 0, or {logspace: [start, stop, num]}",
    "delta": "'1/n^2', '1/n', '1/n^p' or a number in (0, 1)",
    "metrics": "metrics recorded per trial",
    "common_random_numbers": "same noise stream for every mechanism of a trial",
    "datasets": "list of loader names or {loader, label, options, grid}",
    "mechanisms": "list of mechanism names or {mechanism, label, hyper, grid}",
    "plot": "the figure preset of `dpbench plot` (see PLOT_KEYS); with `plots:`, options shared by every figure",
    "plots": "several named figure presets {name: {metric, x, hue, ...}} (each merged over `plot:`)",
    "analyses": "named analyses `dpbench report` runs: [name, {name: NAME, options: {key: value}}]",
    "notes": "free text kept with the run",
    "backend": "parallel engine: loky (default, this machine) or dask (Dask distributed)",
    "scheduler": "with backend dask: tcp://host:port, a scheduler JSON file, or local (default: a LocalCluster)",
}
DATASET_KEYS = {"loader", "label", "options", "grid", "nested"}
MECHANISM_KEYS = {"mechanism", "label", "hyper", "grid"}
DELTA_RULE = re.compile(r"^\s*1\s*/\s*n\s*(?:\^\s*([0-9]*\.?[0-9]+))?\s*$")
#: a number as YAML 1.2 spells it; PyYAML (YAML 1.1) reads ``1e6`` (no dot) as a string, so numeric fields accept it
NUMBER_TEXT = re.compile(r"^\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*$")
DEFAULT_METRICS = ("train_mse", "test_mse", "excess_train_mse")


class ConfigError(ValueError):
    """A config problem, with the offending field in the message (``field`` and ``reason`` apart, when known)."""

    def __init__(self, message: str, field_name: str | None = None, reason: str | None = None):
        super().__init__(message)
        self.field = field_name
        self.reason = reason if reason is not None else message


@dataclass(frozen=True)
class DatasetEntry:
    """One concrete dataset instance: loader + options; ``label`` is the panel title."""

    loader: str
    label: str  # "" → the loaded dataset's meta["title"]
    options: tuple[tuple[str, Any], ...] = ()
    swept: tuple[str, ...] = ()
    #: ``nested``: the options of the draw this entry is cut from (its grid's largest n or m), else None
    nest_from: tuple[tuple[str, Any], ...] | None = None

    @property
    def key(self) -> str:
        """Unique, stable identifier (trial seeds and shard names derive from it)."""
        return f"{self.loader}{json.dumps(dict(self.options), sort_keys=True)}"

    @property
    def data_key(self) -> str:
        """Identifier of the data draw the entry reads: its own key, or with ``nested`` the key of the entry with the
        grid's largest value, whose draw it is cut from (data seeds and worker affinity derive from it)."""
        if self.nest_from is None:
            return self.key
        return f"{self.loader}{json.dumps(dict(self.nest_from), sort_keys=True)}"

    def nest_base(self) -> DatasetEntry:
        """The entry of the draw a ``nested`` entry is cut from (itself without ``nested``)."""
        options = self.options if self.nest_from is None else self.nest_from
        return DatasetEntry(self.loader, self.label, options, self.swept)


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
    data_draws: int | None = None
    large_data_draws: int | None = None
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
    plots: dict[str, dict[str, Any]] = field(default_factory=dict)
    analyses: list[dict[str, Any]] = field(default_factory=list)
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

    def is_large(self, n: int, d: int) -> bool:
        return self.large_nd_above is not None and n * d > self.large_nd_above

    def trials_for(self, n: int, d: int) -> int:
        return int(self.large_trials) if self.is_large(n, d) else self.trials

    def draws_for(self, n: int, d: int) -> int | None:
        """Data draws of a dataset of shape (n, d); None = the single historical draw (no ``data_draw`` column)."""
        if self.is_large(n, d) and self.large_data_draws is not None:
            return self.large_data_draws
        return self.data_draws

    @property
    def size_dependent(self) -> bool:
        """True when trial or draw counts depend on a dataset's shape (the plan must know n·d)."""
        return self.large_nd_above is not None

    def to_dict(self) -> dict[str, Any]:
        """Resolved config as plain YAML-able data (written next to the results)."""
        data = asdict(self)
        data["datasets"] = [
            {"loader": e.loader, "label": e.label, "options": dict(e.options), "swept": list(e.swept),
             **({} if e.nest_from is None else {"nest_from": dict(e.nest_from)})}  # absent when off: old runs resume
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
        for volatile in ("n_jobs", "title", "caption", *PRESENTATION_KEYS, "notes", "output_dir", "trial_block"):
            data.pop(volatile)
        for volatile in ("backend", "scheduler"):  # where trials run never changes their results
            data.pop(volatile)
        for optional in ("data_draws", "large_data_draws"):  # absent: fingerprints of older runs stay valid
            if data[optional] is None:
                data.pop(optional)
        return json.loads(json.dumps(data, default=str))


# ----------------------------------------------------------------------------------------------------------------
# field validators (each returns the clean value or raises ConfigError naming the field)


def _fail(field_name: str, message: str) -> ConfigError:
    return ConfigError(f"config field '{field_name}': {message}", field_name, message)


def _check_keys(mapping: dict[str, Any], allowed: set[str] | dict[str, str], where: str) -> None:
    unknown = sorted(set(mapping) - set(allowed), key=str)
    if unknown:
        prefix = f"{where}." if where else ""
        raise _fail(f"{prefix}{unknown[0]}", registry.unknown_name("key", unknown[0], allowed, see="dpbench list keys"))


def yaml_number(value: Any) -> Any:
    """``value`` as a number if it is one, including YAML 1.2 spellings PyYAML leaves as strings (``1e6``)."""
    if isinstance(value, str) and NUMBER_TEXT.match(value):
        return float(value) if any(c in value for c in ".eE") else int(value)
    return value


def _number_hint(value: Any) -> str:
    return " (a string: quote-free numbers such as 1e6 are accepted)" if isinstance(value, str) else ""


def _positive_int(value: Any, field_name: str, minimum: int = 1) -> int:
    """An integer ≥ ``minimum``; integral floats (``1e6``, also as YAML's string spelling) are accepted."""
    value = yaml_number(value)
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise _fail(field_name, f"must be an integer ≥ {minimum}, got {value!r}{_number_hint(value)}")
    return int(value)


def _finite_float(value: Any, field_name: str) -> float:
    value = yaml_number(value)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise _fail(field_name, f"must be a number, got {value!r}{_number_hint(value)}")
    if not math.isfinite(value):
        raise _fail(field_name, f"must be finite, got {value!r}")
    return float(value)


def parse_epsilons(value: Any) -> tuple[float, ...]:
    if isinstance(value, dict):
        _check_keys(value, {"logspace", "linspace"}, "epsilons")
        if len(value) != 1:
            raise _fail("epsilons", f"must hold exactly one of logspace/linspace, got {value!r}")
        ((kind, args),) = value.items()
        if not (isinstance(args, list) and len(args) == 3):
            raise _fail(f"epsilons.{kind}", f"must be [start, stop, num], got {args!r}")
        start = _finite_float(args[0], f"epsilons.{kind}[0]")
        stop = _finite_float(args[1], f"epsilons.{kind}[1]")
        num = _positive_int(args[2], f"epsilons.{kind}[2]")
        with np.errstate(over="ignore"):
            grid = np.logspace(start, stop, num) if kind == "logspace" else np.linspace(start, stop, num)
        values = [float(v) for v in grid]
    elif isinstance(value, (list, tuple)) and value:
        values = [yaml_number(v) for v in value]
    elif isinstance(yaml_number(value), (int, float)) and not isinstance(value, bool):
        values = [yaml_number(value)]
    else:
        raise _fail("epsilons", f"must be a non-empty list of numbers > 0 or {{logspace: [a, b, n]}}, got {value!r}")
    clean: list[float] = []
    for i, eps in enumerate(values):
        if isinstance(eps, bool) or not isinstance(eps, (int, float)) or not math.isfinite(eps) or eps <= 0:
            raise _fail(f"epsilons[{i}]", f"ε must be a finite number > 0, got {eps!r}{_number_hint(eps)}")
        if not EPSILON_RANGE[0] <= eps <= EPSILON_RANGE[1]:
            raise _fail(f"epsilons[{i}]", f"ε = {eps:g} is outside the supported range [{EPSILON_RANGE[0]:g}, "
                        f"{EPSILON_RANGE[1]:g}]")
        if float(eps) in clean:
            raise _fail(f"epsilons[{i}]", f"ε = {float(eps):g} repeats epsilons[{clean.index(float(eps))}]")
        clean.append(float(eps))
    return tuple(clean)


def parse_delta(value: Any) -> str | float:
    if isinstance(value, str):
        if DELTA_RULE.match(value):
            return value.replace(" ", "")
        if not NUMBER_TEXT.match(value):
            raise _fail("delta", f"must be '1/n^2', '1/n', '1/n^p' or a number in (0, 1), got {value!r}")
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise _fail("delta", f"δ must be in (0, 1) (or a rule such as '1/n^2'), got {value!r}")
    if value < DELTA_MIN:
        raise _fail("delta", f"δ = {value:g} is below the supported minimum {DELTA_MIN:g}")
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


def _check_names(given: dict[str, Any], allowed: dict[str, Any], where: str, what: str, *, of: str, see: str) -> None:
    unknown = sorted(set(given) - set(allowed), key=str)
    if unknown:
        raise _fail(f"{where}.{unknown[0]}", registry.unknown_name(what, unknown[0], allowed, of=of, see=see))


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
    topic = {"loader": "datasets", "mechanism": "mechanisms"}.get(name_key)
    see = f"dpbench list {topic} {info.name}" if topic else "dpbench list"
    _check_names(params, allowed, f"{where}.{params_key}", what, of=f" of '{info.name}'", see=see)
    combos = _grid_combinations(raw.get("grid"), f"{where}.grid")
    _check_names(combos[0], allowed, f"{where}.grid", what, of=f" of '{info.name}'", see=see)
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
        "option",
    )
    label = str(raw.get("label") or "")  # empty: the runner uses the loader's title
    swept = tuple(combos[0])
    nested = _nested_option(raw.get("nested"), info, combos, f"datasets[{index}].nested")
    entries = []
    for combo in combos:
        merged = {**options, **combo}
        nest_from = None
        if nested:
            nest_from = tuple(sorted({**merged, nested: max(c[nested] for c in combos)}.items()))
        entries.append(DatasetEntry(info.name, label, tuple(sorted(merged.items())), swept, nest_from))
    return entries


def _nested_option(value: Any, info: registry.DatasetInfo, combos: list[dict[str, Any]], where: str) -> str | None:
    """``nested: n`` (or another size option the loader nests, e.g. the public m) — the entries of that grid share
    one data draw per draw index: each is the loader's ``prefix`` cut (first n rows, first m public rows, ...) of the
    draw of the grid's largest value. Rows are iid, so each entry's data has the law of its own draw, while the
    entries of one draw share rows (common random numbers along the option)."""
    if value is None:
        return None
    if value not in info.nests:
        nests = ", ".join(info.nests) or "none"
        raise _fail(where, f"loader '{info.name}' cannot nest its draws in {value!r} (it nests: {nests})")
    if value not in combos[0]:
        raise _fail(where, f"needs a grid over the option {value} (grid: {{{value}: [...]}})")
    if any(not isinstance(c[value], int) or isinstance(c[value], bool) for c in combos):
        raise _fail(where, f"the grid values of {value} must be integers")
    return str(value)


def parse_mechanism(raw: Any, index: int, epsilons: tuple[float, ...] = ()) -> list[MechanismEntry]:
    """One ``mechanisms[index]`` entry → its concrete instances, every hyperparameter checked against the
    mechanism's contract (type, range/choices, cross-field rules) and ``epsilons`` against the ε range its
    calibration covers — all before any work starts."""
    where = f"mechanisms[{index}]"
    info, raw, hyper, combos = _parse_component(
        raw,
        where,
        "mechanism",
        MECHANISM_KEYS,
        registry.get_mechanism,
        "hyper",
        lambda i: i.hyperparameters(),
        "hyperparameter",
    )
    unavailable = getattr(info.fit, "unavailable", "")  # an optional peer whose library does not import
    if unavailable:
        raise _fail(f"mechanisms[{index}].mechanism", f"'{info.name}' is unavailable: {unavailable}")
    hyper = _checked_hyper(info, hyper, f"{where}.hyper", cross=False)
    grid = raw.get("grid") or {}
    for key, values in grid.items():
        for j, value in enumerate(values):
            _checked_hyper(info, {key: value}, f"{where}.grid", suffix=f"[{j}]", cross=False)
    base_label = str(raw.get("label") or info.name)
    # an external "pkg.module:fit" keeps its import path: worker processes only discover built-ins and entry points
    reference = str(raw["mechanism"]) if ":" in str(raw["mechanism"]) else info.name
    entries = []
    for combo in combos:
        suffix = ", ".join(f"{k}={v}" for k, v in combo.items())
        label = f"{base_label} ({suffix})" if suffix else base_label
        merged = _checked_hyper(info, {**hyper, **combo}, f"{where}.hyper")
        _check_epsilon_range(info, merged, epsilons, where)
        entries.append(MechanismEntry(reference, label, tuple(sorted(merged.items()))))
    return entries


def _checked_hyper(
    info: registry.MechanismInfo, hyper: dict[str, Any], where: str, suffix: str = "", cross: bool = True
) -> dict[str, Any]:
    try:
        return info.check_hyper(hyper, cross=cross)
    except HyperError as err:
        raise _fail(f"{where}.{err.name}{suffix}", err.reason) from None


def _check_epsilon_range(
    info: registry.MechanismInfo, hyper: dict[str, Any], epsilons: tuple[float, ...], where: str
) -> None:
    lo, hi = info.epsilons(hyper)
    for i, eps in enumerate(epsilons):
        if not lo < eps <= hi:
            given = f" with hyper {hyper}" if hyper else ""
            raise _fail(
                where,
                f"{info.name!r}{given} is calibrated for ε ∈ ({lo:g}, {hi:g}] only (the range its theorem covers), "
                f"but epsilons[{i}] = {eps:g}",
            )


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


# ----------------------------------------------------------------------------------------------------------------
# figure presets (`plot:` / `plots:`) and named analyses (`analyses:`): shared by every experiment kind

#: options of one figure preset (``plot:``, each entry of ``plots:``, and the flags of ``dpbench plot``)
PLOT_KEYS = {
    "metric": "metric column drawn on y (or 'excess' = train MSE − OLS train MSE)",
    "metrics": "several metrics: one figure each",
    "x": "numeric CSV column on the x axis (default epsilon)",
    "hue": "column keying the curves' colours (default label)",
    "panel": "column keying the panels (default dataset)",
    "row": "column keying the rows of a panel grid (panels then go in columns)",
    "style": "column keying line style and marker (default: each mechanism's registered style)",
    "stat": "mean | median: the point drawn",
    "interval": "normal | bootstrap | none: the 95% band (normal: stat ± 1.96·se; bootstrap: seeded percentile)",
    "resamples": "bootstrap resamples (default 1000)",
    "seed": "bootstrap seed (default 0): the same run always gives the same bands",
    "logx": "log x axis (default: when x is ε or spans ≥ 50×)",
    "logy": "log y axis",
    "zero_below": "log y: centres ≤ zero_below × the panel's largest are dropped as numerical zeros (default 1e-10)",
    "refs": "draw the dataset's OLS and θ = 0 lines (train MSE / excess)",
    "hlines": "horizontal reference lines: [y, {y: 1.0, label: text}]",
    "ref_slopes": "reference power laws (grey dotted): [{slope: -0.5, label: text, through: curve label}], one "
                  "through the first point of each curve of that label (of every non-baseline curve without through)",
    "where": "keep only rows with {column: value | [values]}",
    "pool": "columns pooled into one point instead of splitting curves (e.g. [data_draw])",
    "baseline": "rows {column: value} drawn as grey dashed reference curves in every panel they share",
    "tag_models": "append [central]/[local]/[non-private] to legend entries when privacy models mix",
    "fit": "fit log(stat) = a + b·log(x) per curve; print the slopes b with a 95% CI (and write slopes_*.csv)",
    "fit_min": "fit on x ≥ fit_min only",
    "fit_max": "fit on x ≤ fit_max only",
    "fit_draw": "also draw the fitted lines and their slopes in the panels",
    "title": "figure title (default: the config's; '' hides it)",
    "caption": "figure caption (default: the config's; '' hides it)",
    "ncols": "panels per row",
    "annotate": "a registered point annotation (dpbench.registry.register_annotation)",
    "out": "file stem of the figure (default figure_<preset name>, or figure_<metric>[_vs_<x>])",
}
PLOT_STATS = ("mean", "median")
PLOT_INTERVALS = ("normal", "bootstrap", "none")
_PLOT_STRINGS = ("metric", "x", "hue", "panel", "row", "style", "title", "caption", "annotate", "out")
_PLOT_BOOLS = ("logy", "refs", "tag_models", "fit", "fit_draw")
#: Config fields that only change how results are shown (never part of a run's fingerprint)
PRESENTATION_KEYS = ("plot", "plots", "analyses")
_NAME = re.compile(r"[A-Za-z0-9_.-]+")


def _number(value: Any, field_name: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise _fail(field_name, f"must be a finite number, got {value!r}")
    return float(value)


def _selection(value: Any, field_name: str) -> dict[str, list[Any]]:
    """``{column: value | [values]}`` → ``{column: [values]}``."""
    if not isinstance(value, dict) or not value:
        raise _fail(field_name, f"must be a mapping {{column: value or [values]}}, got {value!r}")
    clean = {}
    for column, wanted in value.items():
        wanted = wanted if isinstance(wanted, list) else [wanted]
        if not wanted:
            raise _fail(f"{field_name}.{column}", "must name at least one value")
        clean[str(column)] = wanted
    return clean


def _hlines(value: Any, field_name: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        value = [value]
    lines = []
    for i, item in enumerate(value):
        where = f"{field_name}[{i}]"
        if isinstance(item, dict):
            _check_keys(item, {"y", "label"}, where)
            lines.append({"y": _number(item.get("y"), f"{where}.y"), "label": str(item.get("label") or "")})
        else:
            lines.append({"y": _number(item, where), "label": ""})
    return lines


def _ref_slopes(value: Any, field_name: str) -> list[dict[str, Any]]:
    items = value if isinstance(value, list) else [value]
    lines = []
    for i, item in enumerate(items):
        where = f"{field_name}[{i}]"
        if not isinstance(item, dict):
            raise _fail(where, f"must be a mapping {{slope, label, through}}, got {item!r}")
        _check_keys(item, {"slope", "label", "through"}, where)
        lines.append({"slope": _number(item.get("slope"), f"{where}.slope"), "label": str(item.get("label") or ""),
                      "through": str(item.get("through") or "")})
    return lines


def parse_plot_options(options: Any, where: str = "plot") -> dict[str, Any]:
    """Validate one figure preset (see :data:`PLOT_KEYS`); returns a clean copy. ``None`` values mean "default"."""
    if not isinstance(options, dict):
        raise _fail(where, f"must be a mapping, got {options!r}")
    _check_keys(options, PLOT_KEYS, where)
    clean: dict[str, Any] = {}
    for key, value in options.items():
        field_name = f"{where}.{key}"
        if value is None:
            continue
        if key in _PLOT_STRINGS:
            if not isinstance(value, (str, int, float)) or isinstance(value, bool):
                raise _fail(field_name, f"must be a string, got {value!r}")
            value = str(value)
        elif key in _PLOT_BOOLS or key == "logx":
            if not isinstance(value, bool):
                raise _fail(field_name, f"must be true or false, got {value!r}")
        elif key == "metrics":
            value = [value] if isinstance(value, str) else value
            if not isinstance(value, list) or not value or not all(isinstance(m, str) for m in value):
                raise _fail(field_name, f"must be a non-empty list of metric names, got {value!r}")
        elif key == "stat" and value not in PLOT_STATS:
            raise _fail(field_name, f"must be one of {', '.join(PLOT_STATS)}, got {value!r}")
        elif key == "interval" and value not in PLOT_INTERVALS:
            raise _fail(field_name, f"must be one of {', '.join(PLOT_INTERVALS)}, got {value!r}")
        elif key == "resamples":
            value = _positive_int(value, field_name, minimum=100)
        elif key in ("seed", "ncols"):
            value = _positive_int(value, field_name, minimum=0 if key == "seed" else 1)
        elif key == "zero_below":
            value = _number(value, field_name)
            if not 0.0 <= value < 1.0:
                raise _fail(field_name, f"must be in [0, 1), got {value!r}")
        elif key in ("fit_min", "fit_max"):
            value = _number(value, field_name)
            if value <= 0:
                raise _fail(field_name, f"must be > 0 (the fit is on log x), got {value!r}")
        elif key == "hlines":
            value = _hlines(value, field_name)
        elif key == "ref_slopes":
            value = _ref_slopes(value, field_name)
        elif key in ("where", "baseline"):
            value = _selection(value, field_name)
        elif key == "pool":
            value = [value] if isinstance(value, str) else value
            if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
                raise _fail(field_name, f"must be a list of column names, got {value!r}")
        clean[key] = value
    if "fit_min" in clean and "fit_max" in clean and clean["fit_min"] >= clean["fit_max"]:
        raise _fail(f"{where}.fit_min", f"must be < fit_max ({clean['fit_max']:g}), got {clean['fit_min']:g}")
    return clean


def parse_plots(value: Any) -> dict[str, dict[str, Any]]:
    """``plots: {name: preset}`` → validated presets; names become figure file names (figure_<name>.png)."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not value:
        raise _fail("plots", f"must be a mapping {{name: {{metric, x, ...}}}}, got {value!r}")
    presets = {}
    for name, options in value.items():
        if not isinstance(name, str) or not _NAME.fullmatch(name):
            raise _fail(f"plots.{name}", "a figure name is letters, digits, '_', '-', '.'")
        presets[name] = parse_plot_options(options or {}, f"plots.{name}")
    return presets


def parse_analyses(value: Any) -> list[dict[str, Any]]:
    """``analyses: [name, {name, options}]`` → ``[{name, options}]`` with options as strings (as ``-o key=value``).

    Names are checked against the registered analyses (:func:`dpbench.registry.get_analysis`).
    """
    if value is None:
        return []
    if not isinstance(value, list):
        raise _fail("analyses", f"must be a list of analysis names or {{name, options}}, got {value!r}")
    entries = []
    for i, item in enumerate(value):
        where = f"analyses[{i}]"
        item = {"name": item} if isinstance(item, str) else item
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise _fail(where, f"must be an analysis name or {{name, options}}, got {item!r}")
        _check_keys(item, {"name", "options"}, where)
        try:
            registry.get_analysis(item["name"])
        except KeyError as err:
            raise _fail(f"{where}.name", str(err).strip("\"'")) from None
        options = item.get("options") or {}
        if not isinstance(options, dict):
            raise _fail(f"{where}.options", f"must be a mapping, got {options!r}")
        entries.append({"name": item["name"], "options": {
            str(k): ",".join(map(str, v)) if isinstance(v, list) else str(v) for k, v in options.items()}})
    return entries


def parse_presentation(raw: dict[str, Any]) -> dict[str, Any]:
    """The ``plot`` / ``plots`` / ``analyses`` fields of a config of any kind."""
    return {
        "plot": parse_plot_options(raw.get("plot") or {}, "plot"),
        "plots": parse_plots(raw.get("plots")),
        "analyses": parse_analyses(raw.get("analyses")),
    }


def _reject_replicate(datasets: Any) -> None:
    """The papers' old ``replicate`` dataset option became the engine's ``data_draws``: say so, naming the field."""
    for i, entry in enumerate(datasets if isinstance(datasets, list) else []):
        for part in ("options", "grid"):
            block = entry.get(part) if isinstance(entry, dict) else None
            if isinstance(block, dict) and "replicate" in block:
                raise _fail(
                    f"datasets[{i}].{part}.replicate",
                    "'replicate' was replaced by the top-level 'data_draws: N' (N independent draws of every "
                    "dataset, seeded like trials; see docs/deviations.md)",
                )


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
    _reject_replicate(raw.get("datasets"))
    large = raw.get("large_dataset_trials")
    large_nd = large_trials = large_draws = None
    if large is not None:
        if not isinstance(large, dict):
            raise _fail("large_dataset_trials", f"must be {{nd_above: N, trials: R}}, got {large!r}")
        _check_keys(large, {"nd_above", "trials", "data_draws"}, "large_dataset_trials")
        large_nd = float(_positive_int(large.get("nd_above"), "large_dataset_trials.nd_above"))
        large_trials = _positive_int(large.get("trials"), "large_dataset_trials.trials")
        if large.get("data_draws") is not None:
            large_draws = _positive_int(large["data_draws"], "large_dataset_trials.data_draws")
    data_draws = raw.get("data_draws")
    data_draws = None if data_draws is None else _positive_int(data_draws, "data_draws")
    if large_draws is not None and data_draws is None:
        raise _fail("large_dataset_trials.data_draws", "needs a top-level 'data_draws' (draws of the other datasets)")
    n_jobs = yaml_number(raw.get("n_jobs", 1))
    if isinstance(n_jobs, bool) or not isinstance(n_jobs, int) or n_jobs == 0 or n_jobs < -1:
        raise _fail("n_jobs", f"must be a positive integer or -1 (all cores), got {n_jobs!r}")
    crn = raw.get("common_random_numbers", False)
    if not isinstance(crn, bool):
        raise _fail("common_random_numbers", f"must be true or false, got {crn!r}")
    epsilons = parse_epsilons(raw.get("epsilons"))
    return Config(
        name=name,
        datasets=_parse_list(raw, "datasets", parse_dataset),
        epsilons=epsilons,
        mechanisms=_parse_list(raw, "mechanisms", functools.partial(parse_mechanism, epsilons=epsilons)),
        delta=parse_delta(raw.get("delta", "1/n^2")),
        trials=_positive_int(raw.get("trials", 100), "trials"),
        large_nd_above=large_nd,
        large_trials=large_trials,
        data_draws=data_draws,
        large_data_draws=large_draws,
        trial_block=_positive_int(raw.get("trial_block", 100), "trial_block"),
        seed=_positive_int(raw.get("seed", 0), "seed", minimum=0),
        n_jobs=n_jobs,
        metrics=parse_metrics(raw.get("metrics")),
        common_random_numbers=crn,
        kind=kind,
        output_dir=str(raw.get("output_dir", "results")),
        title=str(raw.get("title", "")),
        caption=str(raw.get("caption", "")),
        **parse_presentation(raw),
        notes=str(raw.get("notes", "")),
        **parse_backend(raw.get("backend", "loky"), raw.get("scheduler")),
    )


def load_config(path: str | Path, **overrides: Any) -> Config:
    """Read and validate a YAML config; ``overrides`` (e.g. trials=5, n_jobs=2) replace top-level fields."""
    path = Path(path)
    if path.is_dir():
        raise ConfigError(f"{path} is a folder, not a config file: give one YAML file, e.g. "
                          f"configs/ihm_vs_adassp.yaml (`dpbench list configs {path}` lists the configs under it; "
                          f"`dpbench plot {path}` draws the runs under it)")
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
