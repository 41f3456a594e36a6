"""The regression kind's config schema: YAML → validated, fully resolved :class:`Config` (``kind: regression``,
the default). The fields every kind shares are :class:`dpbench.config.base.BaseConfig`'s; the validators are
:mod:`dpbench.config.fields`. Load configs with :func:`dpbench.config.load_config`.

Grids (``grid:`` under a dataset or mechanism entry) are expanded here into one entry per combination, so the
runner only sees concrete (dataset, mechanism) instances.

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
import re
from dataclasses import dataclass
from typing import Any

from dpbench import registry
from dpbench.analysis.metrics import METRICS
from dpbench.config.base import COMMON_KEYS, BaseConfig, parse_base
from dpbench.config.fields import (
    ConfigError,
    check_keys,
    entry_key,
    fail,
    parse_component,
    parse_entries,
    positive_int,
)
from dpbench.contract import HyperError
from dpbench.engine.cells import Entry, grid_entries

TOP_LEVEL_KEYS = {
    **COMMON_KEYS,
    "kind": "regression",
    "trials": "trials per (dataset, mechanism, ε) — per data draw with data_draws",
    "large_dataset_trials": "{nd_above: N, trials: R, data_draws: D}: fewer trials (and draws) when n·d > N",
    "data_draws": "independent draws of each dataset (seeded like trials; default: one draw, no data_draw column)",
    "delta": "'1/n^2', '1/n', '1/n^p' or a number in (0, 1)",
    "metrics": "metrics recorded per trial",
    "common_random_numbers": "same noise stream for every mechanism of a trial",
    "dataset_statistics": "datasets.json statistics of each dataset: full (default: OLS floor, spectrum, ‖θ_OLS‖², "
    "O(nd² + d³) once per dataset) or basic (n, d, ‖Y‖²/n: for configs whose metrics read the population, not X)",
    "datasets": "list of loader names or {loader, label, options, grid}",
    "mechanisms": "list of mechanism names or {mechanism, label, hyper, grid}",
    "privacy": "privacy profile: paper (default; each mechanism's defaults, the papers' choices) or strict (every "
    "mechanism at the accounting its theorem proves, e.g. LinMix strict: true; the leaderboard's)",
}
#: what ``datasets.json`` describes per dataset (:func:`dpbench.engine.regression.description`)
DATASET_STATISTICS = ("full", "basic")
DATASET_KEYS = {"loader", "label", "options", "grid", "nested"}
MECHANISM_KEYS = {"mechanism", "label", "hyper", "grid"}
DELTA_RULE = re.compile(r"^\s*1\s*/\s*n\s*(?:\^\s*([0-9]*\.?[0-9]+))?\s*$")
DEFAULT_METRICS = ("train_mse", "test_mse", "excess_train_mse")


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
        """Unique, stable identifier (trial seeds and shard names derive from it; a renamed loader keeps its old
        name here, :func:`~dpbench.registry.stream_name`)."""
        return entry_key(registry.stream_name(self.loader), self.options)

    @property
    def data_key(self) -> str:
        """Identifier of the data draw the entry reads: its own key, or with ``nested`` the key of the entry with the
        grid's largest value, whose draw it is cut from (data seeds and worker affinity derive from it)."""
        if self.nest_from is None:
            return self.key
        return entry_key(registry.stream_name(self.loader), self.nest_from)

    def nest_base(self) -> DatasetEntry:
        """The entry of the draw a ``nested`` entry is cut from (itself without ``nested``)."""
        options = self.options if self.nest_from is None else self.nest_from
        return DatasetEntry(self.loader, self.label, options, self.swept)


@dataclass(kw_only=True)
class Config(BaseConfig):
    """A regression run: every (dataset, mechanism, ε, trial) cell, plus the fields of every kind."""

    datasets: list[DatasetEntry]
    mechanisms: list[Entry]
    delta: str | float = "1/n^2"
    trials: int = 100
    trial_block: int = 100
    large_nd_above: float | None = None
    large_trials: int | None = None
    data_draws: int | None = None
    large_data_draws: int | None = None
    metrics: tuple[str, ...] = DEFAULT_METRICS
    common_random_numbers: bool = False
    dataset_statistics: str = "full"
    kind: str = "regression"
    privacy: str = "paper"

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
        data = super().to_dict()
        data["datasets"] = [
            {
                "loader": e.loader,
                "label": e.label,
                "options": dict(e.options),
                "swept": list(e.swept),
                **({} if e.nest_from is None else {"nest_from": dict(e.nest_from)}),
            }  # absent when off: old runs resume
            for e in self.datasets
        ]
        data["mechanisms"] = [e.as_dict("mechanism") for e in self.mechanisms]
        data["epsilons"] = list(self.epsilons)
        data["metrics"] = list(self.metrics)
        return data

    def fingerprint(self) -> dict[str, Any]:
        """The fields that determine the results (a resumed run must match them; n_jobs may change)."""
        data = super().fingerprint()
        for optional in ("data_draws", "large_data_draws"):  # absent: fingerprints of older runs stay valid
            if data[optional] is None:
                data.pop(optional)
        return data


def parse_dataset(raw: Any, index: int) -> list[DatasetEntry]:
    info, raw, options, combos = parse_component(
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
    for combo in combos:  # a loader's declared options are checked as a mechanism's hyperparameters are
        for key, value in {**options, **combo}.items():
            if info.declared is not None and key in info.declared:
                try:
                    info.declared[key].check(value)
                except ValueError as err:
                    part = "grid" if key in combo else "options"
                    raise fail(f"datasets[{index}].{part}.{key}", str(err)) from None
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
        raise fail(where, f"loader '{info.name}' cannot nest its draws in {value!r} (it nests: {nests})")
    if value not in combos[0]:
        raise fail(where, f"needs a grid over the option {value} (grid: {{{value}: [...]}})")
    if any(not isinstance(c[value], int) or isinstance(c[value], bool) for c in combos):
        raise fail(where, f"the grid values of {value} must be integers")
    return str(value)


def parse_mechanism(raw: Any, index: int, epsilons: tuple[float, ...] = (), privacy: str = "paper") -> list[Entry]:
    """One ``mechanisms[index]`` entry → its concrete instances, every hyperparameter checked against the
    mechanism's contract (type, range/choices, cross-field rules) and ``epsilons`` against the ε range its
    calibration covers — all before any work starts. Under the ``privacy`` profile ``strict`` each instance gets
    the mechanism's strict values unless it sets them, and is refused if its accounting is not a theorem
    (:meth:`~dpbench.registry.MechanismInfo.with_profile`)."""
    where = f"mechanisms[{index}]"
    info, raw, hyper, combos = parse_component(
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
        raise fail(f"mechanisms[{index}].mechanism", f"'{info.name}' is unavailable: {unavailable}")
    hyper = _checked_hyper(info, hyper, f"{where}.hyper", cross=False)
    grid = raw.get("grid") or {}
    for key, values in grid.items():
        for j, value in enumerate(values):
            _checked_hyper(info, {key: value}, f"{where}.grid", suffix=f"[{j}]", cross=False)
    base_label = str(raw.get("label") or info.name)
    # an external "pkg.module:fit" keeps its import path: worker processes only discover built-ins and entry points
    reference = str(raw["mechanism"]) if ":" in str(raw["mechanism"]) else info.name

    def resolve(combo: dict[str, Any]) -> dict[str, Any]:
        merged = _checked_hyper(info, _profiled(info, {**hyper, **combo}, privacy, where), f"{where}.hyper")
        _check_epsilon_range(info, merged, epsilons, where)
        return merged

    return grid_entries(reference, base_label, combos, resolve)


def _profiled(info: registry.MechanismInfo, hyper: dict[str, Any], privacy: str, where: str) -> dict[str, Any]:
    try:
        return info.with_profile(hyper, privacy)
    except HyperError as err:
        raise fail(f"{where}.hyper.{err.name}", err.reason) from None


def parse_privacy(value: Any) -> str:
    if value not in registry.PRIVACY_PROFILES:
        raise fail("privacy", f"must be one of {', '.join(registry.PRIVACY_PROFILES)}, got {value!r}")
    return str(value)


def _check_rows_needed(datasets: list[DatasetEntry], mechanisms: list[Entry]) -> None:
    """Refuse, before any work, a mechanism that needs data rows on a dataset whose loader returns sufficient
    statistics only for its options (``register_dataset(rows_free=...)``; e.g. stein_linear_sums with rows: false)."""
    for i, entry in enumerate(datasets):
        info = registry.get_dataset(entry.loader)
        if info.rows_free is None or not info.rows_free(**dict(entry.options)):
            continue
        for j, mech in enumerate(mechanisms):
            if not registry.get_mechanism(mech.name).rows_free:
                raise fail(
                    f"mechanisms[{j}].mechanism",
                    f"'{mech.name}' needs data rows, but datasets[{i}] ({entry.loader} with "
                    f"{dict(entry.options)}) has none (its loader returns sufficient statistics only); use a "
                    "mechanism declared rows_free, or give the loader the option that draws rows",
                )


def _checked_hyper(
    info: registry.MechanismInfo, hyper: dict[str, Any], where: str, suffix: str = "", cross: bool = True
) -> dict[str, Any]:
    try:
        return info.check_hyper(hyper, cross=cross)
    except HyperError as err:
        raise fail(f"{where}.{err.name}{suffix}", err.reason) from None


def _check_epsilon_range(
    info: registry.MechanismInfo, hyper: dict[str, Any], epsilons: tuple[float, ...], where: str
) -> None:
    lo, hi = info.epsilons(hyper)
    for i, eps in enumerate(epsilons):
        if not lo < eps <= hi:
            given = f" with hyper {hyper}" if hyper else ""
            raise fail(
                where,
                f"{info.name!r}{given} is calibrated for ε ∈ ({lo:g}, {hi:g}] only (the range its theorem covers), "
                f"but epsilons[{i}] = {eps:g}",
            )


def parse_metrics(value: Any) -> tuple[str, ...]:
    if value is None:
        return DEFAULT_METRICS
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise fail("metrics", f"must be a non-empty list, got {value!r}")
    registry.discover()  # modules of mechanisms/loaders may register their own metrics
    for i, name in enumerate(value):
        if not isinstance(name, str) or name not in METRICS:
            raise fail(f"metrics[{i}]", f"unknown metric {name!r}; allowed: {', '.join(sorted(METRICS))}")
    return tuple(value)


def _reject_replicate(datasets: Any) -> None:
    """The papers' old ``replicate`` dataset option became the engine's ``data_draws``: say so, naming the field."""
    for i, entry in enumerate(datasets if isinstance(datasets, list) else []):
        for part in ("options", "grid"):
            block = entry.get(part) if isinstance(entry, dict) else None
            if isinstance(block, dict) and "replicate" in block:
                raise fail(
                    f"datasets[{i}].{part}.replicate",
                    "'replicate' was replaced by the top-level 'data_draws: N' (N independent draws of every "
                    "dataset, seeded like trials; see docs/deviations.md)",
                )


def parse_regression_config(raw: dict[str, Any], *, source: str = "<config>") -> Config:
    """Validate a ``kind: regression`` config mapping (as loaded from YAML) into a :class:`Config`."""
    base = parse_base(
        raw,
        TOP_LEVEL_KEYS,
        source=source,
        kind="regression",
        delta_rule=DELTA_RULE,
        delta_rules="'1/n^2', '1/n', '1/n^p'",
        delta="1/n^2",
        trials=100,
        trial_block=100,
    )
    _reject_replicate(raw.get("datasets"))
    large = raw.get("large_dataset_trials")
    large_nd = large_trials = large_draws = None
    if large is not None:
        if not isinstance(large, dict):
            raise fail("large_dataset_trials", f"must be {{nd_above: N, trials: R}}, got {large!r}")
        check_keys(large, {"nd_above", "trials", "data_draws"}, "large_dataset_trials")
        large_nd = float(positive_int(large.get("nd_above"), "large_dataset_trials.nd_above"))
        large_trials = positive_int(large.get("trials"), "large_dataset_trials.trials")
        if large.get("data_draws") is not None:
            large_draws = positive_int(large["data_draws"], "large_dataset_trials.data_draws")
    data_draws = raw.get("data_draws")
    data_draws = None if data_draws is None else positive_int(data_draws, "data_draws")
    if large_draws is not None and data_draws is None:
        raise fail("large_dataset_trials.data_draws", "needs a top-level 'data_draws' (draws of the other datasets)")
    crn = raw.get("common_random_numbers", False)
    if not isinstance(crn, bool):
        raise fail("common_random_numbers", f"must be true or false, got {crn!r}")
    statistics = raw.get("dataset_statistics", "full")
    if statistics not in DATASET_STATISTICS:
        raise fail("dataset_statistics", f"must be one of {', '.join(DATASET_STATISTICS)}, got {statistics!r}")
    privacy = parse_privacy(raw.get("privacy", "paper"))
    datasets = parse_entries(raw, "datasets", parse_dataset, lambda entry: entry.key)
    mechanisms = parse_entries(
        raw,
        "mechanisms",
        functools.partial(parse_mechanism, epsilons=base["epsilons"], privacy=privacy),
        lambda entry: entry.label,
    )
    _check_rows_needed(datasets, mechanisms)
    return Config(
        **base,
        datasets=datasets,
        mechanisms=mechanisms,
        privacy=privacy,
        large_nd_above=large_nd,
        large_trials=large_trials,
        data_draws=data_draws,
        large_data_draws=large_draws,
        metrics=parse_metrics(raw.get("metrics")),
        common_random_numbers=crn,
        dataset_statistics=statistics,
    )
