"""Registries of mechanisms, dataset loaders and experiment kinds.

Mechanisms, loaders and kinds register themselves in their own module; the engine, the config validator and the
CLI only ever talk to this module (benchopt style: one file per solver/dataset, discovered).

Discovery imports every module (recursively) of :data:`DISCOVERED_PACKAGES` — the engine's built-in kind, the
mechanism families, the generic loaders, the bandit kind and every paper plug-in under :mod:`dpbench.papers` —
then the ``dpbench.mechanisms`` / ``dpbench.datasets`` entry points of installed packages. A mechanism can also be
named directly in a config as ``"package.module:function"`` (see :func:`get_mechanism`).
"""

from __future__ import annotations

import functools
import importlib
import inspect
import pkgutil
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from importlib.metadata import entry_points
from typing import Any

PRIVACY_MODELS = ("central", "local", "label", "none")
NEIGHBOURS = ("zero_out", "replace_one", "none")
#: inputs a mechanism may ask the runner for, besides (X, y, epsilon, delta, rng)
INPUTS = ("stats", "public_X", "population")


@dataclass(frozen=True)
class MechanismInfo:
    """What the runner needs to know about a registered mechanism.

    Attributes
    ----------
    name : registry key used in configs.
    fit : ``fit(X, y, epsilon, delta, rng, **inputs, **hyper) -> FitResult | ndarray``.
    summary : one line for ``dpbench list``.
    privacy_model : ``central`` | ``local`` | ``label`` | ``none`` (non-private reference).
    neighbour : ``zero_out`` | ``replace_one`` | ``none``.
    needs : extra inputs the runner passes by keyword (subset of :data:`INPUTS`).
    spec : spec section the implementation follows, e.g. ``"004 §3.3"``.
    style : matplotlib style hints (color, marker, linestyle) used by ``dpbench plot``.
    """

    name: str
    fit: Callable[..., Any]
    summary: str
    privacy_model: str
    neighbour: str
    needs: tuple[str, ...] = ()
    spec: str = ""
    style: Mapping[str, Any] = field(default_factory=dict)

    def hyperparameters(self) -> dict[str, Any]:
        """Keyword-only parameters of ``fit`` with their defaults (the tunable hyperparameters)."""
        params = inspect.signature(self.fit).parameters.values()
        return {p.name: p.default for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY and p.name not in INPUTS}

    @property
    def private(self) -> bool:
        return self.privacy_model != "none"


@dataclass(frozen=True)
class DatasetInfo:
    """A registered dataset loader: ``load(rng, **options) -> Dataset``."""

    name: str
    load: Callable[..., Any]
    summary: str
    kind: str = "real"  # real | synthetic
    spec: str = ""

    def options(self) -> dict[str, Any]:
        params = inspect.signature(self.load).parameters.values()
        return {p.name: p.default for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}


@dataclass(frozen=True)
class KindInfo:
    """An experiment kind run by :func:`dpbench.engine.run` (see :mod:`dpbench.engine.core` for the protocol).

    ``parse(raw, source) -> config`` (None: the regression schema of :mod:`dpbench.config`),
    ``plan(config, log) -> Plan``, ``run_task(task, config) -> rows``, ``order(table, config, plan) -> row order``.
    """

    name: str
    summary: str
    parse: Callable[..., Any] | None
    plan: Callable[..., Any]
    run_task: Callable[..., Any]
    order: Callable[..., Any]


@dataclass(frozen=True)
class AnalysisInfo:
    """A named analysis (``dpbench analyze NAME [RUN...] [-o key=value ...]``) contributed by a paper plug-in.

    ``run(runs, options, echo)``: ``runs`` are run folders (possibly none), ``options`` the ``-o key=value`` pairs as
    strings, ``echo`` prints a line; it writes its outputs (tables, figures) and echoes what it wrote.
    """

    name: str
    summary: str
    run: Callable[..., Any]
    needs_runs: bool = True


MECHANISMS: dict[str, MechanismInfo] = {}
DATASETS: dict[str, DatasetInfo] = {}
KINDS: dict[str, KindInfo] = {}
ANALYSES: dict[str, AnalysisInfo] = {}
#: packages whose modules (recursively) register components when imported
DISCOVERED_PACKAGES = ("dpbench.engine", "dpbench.mechanisms", "dpbench.data", "dpbench.bandits", "dpbench.papers")


def register_mechanism(
    name: str,
    *,
    summary: str,
    privacy_model: str,
    neighbour: str,
    needs: tuple[str, ...] = (),
    spec: str = "",
    style: Mapping[str, Any] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated ``fit`` function as mechanism ``name``."""
    if privacy_model not in PRIVACY_MODELS:
        raise ValueError(f"privacy_model must be one of {PRIVACY_MODELS}, got {privacy_model!r}")
    if neighbour not in NEIGHBOURS:
        raise ValueError(f"neighbour must be one of {NEIGHBOURS}, got {neighbour!r}")
    unknown = set(needs) - set(INPUTS)
    if unknown:
        raise ValueError(f"needs may only contain {INPUTS}, got {sorted(unknown)}")

    def decorator(fit: Callable[..., Any]) -> Callable[..., Any]:
        if name in MECHANISMS and MECHANISMS[name].fit is not fit:
            raise ValueError(f"mechanism {name!r} is registered twice")
        MECHANISMS[name] = MechanismInfo(
            name, fit, summary, privacy_model, neighbour, tuple(needs), spec, dict(style or {})
        )
        return fit

    return decorator


def register_dataset(
    name: str, *, summary: str, kind: str = "real", spec: str = ""
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated ``load(rng, **options)`` function as dataset ``name``."""

    def decorator(load: Callable[..., Any]) -> Callable[..., Any]:
        if name in DATASETS and DATASETS[name].load is not load:
            raise ValueError(f"dataset {name!r} is registered twice")
        DATASETS[name] = DatasetInfo(name, load, summary, kind, spec)
        return load

    return decorator


def register_kind(
    name: str,
    *,
    summary: str,
    parse: Callable[..., Any] | None,
    plan: Callable[..., Any],
    run_task: Callable[..., Any],
    order: Callable[..., Any],
) -> KindInfo:
    """Register an experiment kind (``kind: NAME`` in a config)."""
    if name in KINDS and KINDS[name].run_task is not run_task:
        raise ValueError(f"experiment kind {name!r} is registered twice")
    KINDS[name] = KindInfo(name, summary, parse, plan, run_task, order)
    return KINDS[name]


def register_analysis(
    name: str, *, summary: str, needs_runs: bool = True
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated ``run(runs, options, echo)`` function as analysis ``name``."""

    def decorator(run: Callable[..., Any]) -> Callable[..., Any]:
        if name in ANALYSES and ANALYSES[name].run is not run:
            raise ValueError(f"analysis {name!r} is registered twice")
        ANALYSES[name] = AnalysisInfo(name, summary, run, needs_runs)
        return run

    return decorator


_DISCOVERED = False
#: modules that failed to import during discovery: module name → error (reported by the lookups)
IMPORT_ERRORS: dict[str, str] = {}


def discover() -> None:
    """Import every built-in mechanism/loader module and installed plugins (idempotent).

    A module that fails to import does not hide the others: its error is recorded in :data:`IMPORT_ERRORS`,
    warned about, and named by :func:`get_mechanism` / :func:`get_dataset` when a lookup fails.
    """
    global _DISCOVERED
    if _DISCOVERED:
        return
    _DISCOVERED = True
    names = []
    for package_name in DISCOVERED_PACKAGES:
        package = importlib.import_module(package_name)
        names += [
            m.name
            for m in pkgutil.walk_packages(package.__path__, prefix=f"{package_name}.")
            if not m.name.rpartition(".")[2].startswith("_")
        ]
    loaders: list[tuple[str, Callable[[], Any]]] = [
        (name, functools.partial(importlib.import_module, name)) for name in names
    ]
    for group in ("dpbench.mechanisms", "dpbench.datasets"):
        loaders += [(f"entry point {entry.name} ({entry.value})", entry.load) for entry in entry_points(group=group)]
    for name, load in loaders:
        try:
            load()
        except Exception as err:  # noqa: BLE001 - one broken module or plugin must not hide the rest
            IMPORT_ERRORS[name] = f"{type(err).__name__}: {err}"
            warnings.warn(f"dpbench: could not import {name}: {IMPORT_ERRORS[name]}", RuntimeWarning, stacklevel=2)


def _import_note() -> str:
    if not IMPORT_ERRORS:
        return ""
    return "; modules that failed to import: " + "; ".join(f"{k} ({v})" for k, v in IMPORT_ERRORS.items())


def _import_object(path: str) -> Any:
    module_name, _, attr = path.partition(":")
    try:
        module = importlib.import_module(module_name)
        return getattr(module, attr)
    except (ImportError, AttributeError) as err:
        raise KeyError(f"cannot import {path!r}: {err}") from err


def get_mechanism(name: str) -> MechanismInfo:
    """Registered mechanism ``name``, or an external ``"pkg.module:fit"`` function.

    An external function is registered on first use; it may carry its metadata as attributes
    (``privacy_model``, ``neighbour``, ``needs``, ``summary``) set by :func:`register_mechanism` or by hand.
    """
    discover()
    if name in MECHANISMS:
        return MECHANISMS[name]
    if ":" in name:
        obj = _import_object(name)
        for info in MECHANISMS.values():
            if info.fit is obj:
                return info
        info = MechanismInfo(
            name=name,
            fit=obj,
            summary=getattr(obj, "summary", (obj.__doc__ or name).strip().splitlines()[0]),
            privacy_model=getattr(obj, "privacy_model", "central"),
            neighbour=getattr(obj, "neighbour", "zero_out"),
            needs=tuple(getattr(obj, "needs", ())),
        )
        MECHANISMS[name] = info
        return info
    raise KeyError(f"unknown mechanism {name!r}; registered: {', '.join(sorted(MECHANISMS))}{_import_note()}")


def get_dataset(name: str) -> DatasetInfo:
    discover()
    if name in DATASETS:
        return DATASETS[name]
    raise KeyError(f"unknown dataset {name!r}; registered: {', '.join(sorted(DATASETS))}{_import_note()}")


def get_kind(name: str) -> KindInfo:
    discover()
    if name in KINDS:
        return KINDS[name]
    raise KeyError(f"unknown experiment kind {name!r}; registered: {', '.join(sorted(KINDS))}{_import_note()}")


def get_analysis(name: str) -> AnalysisInfo:
    discover()
    if name in ANALYSES:
        return ANALYSES[name]
    raise KeyError(f"unknown analysis {name!r}; registered: {', '.join(sorted(ANALYSES))}{_import_note()}")
