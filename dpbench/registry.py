"""Registries of mechanisms, dataset loaders, experiment kinds, analyses and plot annotations.

Mechanisms, loaders and kinds register themselves in their own module; the engine, the config validator and the
CLI only ever talk to this module (benchopt style: one file per solver/dataset, discovered). A mechanism registers
with its whole contract (:mod:`dpbench.contract`: hyperparameters, privacy rule, ε range, bounds, inputs, audit
setup, variants), checked at import; everything else reads it from :class:`MechanismInfo`.

Discovery imports every module (recursively) of :data:`DISCOVERED_PACKAGES` — the engine's built-in kind, the
mechanism families, the generic loaders, the built-in figure kinds, the bandit kind and every paper plug-in under
:mod:`dpbench.papers` —
then the ``dpbench.mechanisms`` / ``dpbench.datasets`` entry points of installed packages. A mechanism can also be
named directly in a config as ``"package.module:function"`` (see :func:`get_mechanism`). A module that fails to
import is a loud warning for users and, under the test suite (``DPBENCH_STRICT_DISCOVERY=1``), an error.
"""

from __future__ import annotations

import functools
import importlib
import inspect
import os
import pkgutil
import warnings
from collections.abc import Callable, Mapping
from dataclasses import dataclass, replace
from importlib.metadata import entry_points
from typing import Any

from dpbench.contract import (  # noqa: F401 - MechanismInfo and the privacy vocabulary are read through the registry too
    ANY_EPSILON,
    INPUTS,
    NEIGHBOURS,
    PRIVACY_MODELS,
    PRIVACY_PROFILES,
    AuditSetup,
    Bounds,
    EpsilonRange,
    Hyper,
    HyperError,
    MechanismInfo,
    Privacy,
    PrivacyRule,
    Variant,
    _check_strict,
    _privacy_of,
    declarations,
    declared_doc,
    declared_signature,
    signature_hyperparameters,
    unknown_name,
)


@dataclass(frozen=True)
class DatasetInfo:
    """A registered dataset loader: ``load(rng, **options) -> Dataset``.

    ``shape(**options) -> (n_train, d)``, when given, states the training shape without loading (synthetic
    generators: it is in the options), so a run can plan size-dependent trial counts without loading the data.

    ``prefix(dataset, **options) -> Dataset``, when given, cuts from a draw made with larger values of the size
    options in ``nests`` (e.g. n, m) the data set of the given options: its first n rows, first m public rows, ....
    The loader's rows must be iid given its instance, so that cut has the law of a draw at the given options;
    configs then may set ``nested: <option>`` for an option in ``nests``.

    ``rows_free(**options) -> bool``, when given, says without loading whether the loader returns sufficient
    statistics only (no rows) for these options: a config pairing such data with a mechanism not declared
    ``rows_free`` is refused at validation.
    """

    name: str
    load: Callable[..., Any]
    summary: str
    kind: str = "real"  # real | synthetic
    spec: str = ""
    shape: Callable[..., tuple[int, int]] | None = None
    prefix: Callable[..., Any] | None = None
    nests: tuple[str, ...] = ()
    rows_free: Callable[..., bool] | None = None
    #: the options declared once (``register_dataset(options={...Hyper...})``), or None: inferred from ``load``'s
    #: keyword defaults (a quick plug-in), as for mechanisms
    declared: Mapping[str, Hyper] | None = None

    def options(self) -> dict[str, Any]:
        params = inspect.signature(self.load).parameters.values()
        return {p.name: p.default for p in params if p.kind is inspect.Parameter.KEYWORD_ONLY}


def loader_specs(info: DatasetInfo) -> dict[str, Hyper]:
    """Every option's declaration of a loader (inferred from its default when the loader declares none)."""
    if info.declared is not None:
        return dict(info.declared)
    return {name: Hyper.infer(default) for name, default in info.options().items()}


@dataclass(frozen=True)
class KindInfo:
    """An experiment kind run by :func:`dpbench.engine.run` (see :mod:`dpbench.engine.core` for the protocol).

    ``parse(raw, source) -> config`` (its schema; :func:`dpbench.config.parse_config` dispatches on ``kind:``),
    ``plan(config, log) -> Plan``, ``run_task(task, config) -> rows``, ``order(table, config, plan) -> row order``.
    """

    name: str
    summary: str
    parse: Callable[..., Any]
    plan: Callable[..., Any]
    run_task: Callable[..., Any]
    order: Callable[..., Any]


@dataclass(frozen=True)
class AnalysisInfo:
    """A named analysis (``dpbench analyze NAME [RUN...] [-o key=value ...]``) contributed by a paper plug-in.

    ``run(runs, options, echo)``: ``runs`` are run folders (possibly none), ``options`` the ``-o key=value`` pairs (or
    a config's ``analyses:`` options) as strings, ``echo`` prints a line; it writes its outputs (tables, figures),
    echoes what it wrote, and may return the written paths (``dpbench report`` embeds the PNGs among them).
    """

    name: str
    summary: str
    run: Callable[..., Any]
    needs_runs: bool = True
    #: the options declared once (:class:`~dpbench.contract.Hyper`, each with its default): ``-o key=value`` and a
    #: config's ``options:`` are read as the declared type and checked (:func:`analysis_options`); ``dpbench list
    #: analyses NAME`` shows them. None: the defaults passed to :func:`analysis_options` give the types
    options: Mapping[str, Hyper] | None = None


@dataclass(frozen=True)
class AnnotationInfo:
    """A point annotation ``dpbench plot`` draws when a preset says ``annotate: NAME``.

    ``draw(ax, trials, dataset_info, x, points)`` is called once per curve: ``trials`` are the curve's rows,
    ``dataset_info`` the panel's datasets.json entry (``{}`` if none), ``points`` the drawn points (columns ``x``,
    ``centre``, ``lo``, ``hi``); it decides itself whether the curve is one it annotates.
    """

    name: str
    summary: str
    draw: Callable[..., Any]


MECHANISMS: dict[str, MechanismInfo] = {}
#: auditable local randomisers that are not regression mechanisms (:func:`register_randomizer`)
RANDOMIZERS: dict[str, MechanismInfo] = {}
DATASETS: dict[str, DatasetInfo] = {}
KINDS: dict[str, KindInfo] = {}
ANALYSES: dict[str, AnalysisInfo] = {}
ANNOTATIONS: dict[str, AnnotationInfo] = {}
#: deprecated mechanism name → the registered name it now is (:func:`register_alias`)
ALIASES: dict[str, str] = {}
#: deprecated name → the registered name it now is, for the other tables: {"dataset": {...}, "analysis": {...}, ...}
#: (:func:`register_alias` with ``what=``)
RENAMED: dict[str, dict[str, str]] = {}
#: packages whose modules (recursively) register components when imported
DISCOVERED_PACKAGES = (
    "dpbench.engine",
    "dpbench.mechanisms",
    "dpbench.data",
    "dpbench.analysis.figures",
    "dpbench.bandits",
    "dpbench.papers",
)


def register_mechanism(
    name: str,
    *,
    summary: str,
    privacy_model: str | PrivacyRule,
    neighbour: str | PrivacyRule,
    needs: tuple[str, ...] = (),
    spec: str = "",
    style: Mapping[str, Any] | None = None,
    hyper: Mapping[str, Hyper] | None = None,
    epsilon_range: tuple[float, float] | EpsilonRange = ANY_EPSILON,
    bounds: Bounds | None = None,
    audit: AuditSetup | None = None,
    variants: Mapping[str, Variant] | None = None,
    uses_delta: bool = True,
    check: Callable[[Mapping[str, Any]], None] | None = None,
    rows_free: bool = False,
    strict: Mapping[str, Any] | None = None,
    certify: Callable[[Mapping[str, Any]], tuple[str, str] | None] | None = None,
    intervals: tuple[str, ...] = (),
    _into: dict[str, MechanismInfo] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated ``fit`` function as mechanism ``name`` with its contract (:mod:`dpbench.contract`).

    ``privacy_model`` and ``neighbour`` are strings or functions of the resolved hyperparameters. Two forms:

    * ``hyper={name: Hyper(..., default=...)}`` and ``fit(X, y, epsilon, delta, rng, *, <inputs>, **hyper)`` — each
      hyperparameter declared once (the built-ins). The returned function validates the hyperparameters, fills the
      defaults and calls ``fit`` with every one; its signature and docstring (``help()``, IDEs) derive from the table.
    * no ``hyper`` and ``fit(..., *, name=default, ...)`` — a quick plug-in: types inferred from the defaults.

    A fit with keyword hyperparameters *and* a table is refused (TypeError saying how to write it). All is checked
    here, at import time: declarations and defaults, inputs, audit and variant settings, privacy rules at the defaults.
    """
    if not callable(privacy_model) and privacy_model not in PRIVACY_MODELS:
        raise ValueError(f"privacy_model must be one of {PRIVACY_MODELS}, got {privacy_model!r}")
    if not callable(neighbour) and neighbour not in NEIGHBOURS:
        raise ValueError(f"neighbour must be one of {NEIGHBOURS}, got {neighbour!r}")
    unknown = set(needs) - set(INPUTS)
    if unknown:
        raise ValueError(f"needs may only contain {INPUTS}, got {sorted(unknown)}")
    if rows_free and "stats" not in needs:
        raise ValueError(f"mechanism {name!r}: rows_free needs 'stats' in needs (it fits from the statistics)")

    target = MECHANISMS if _into is None else _into

    def decorator(fit: Callable[..., Any]) -> Callable[..., Any]:
        if name in target and getattr(target[name].fit, "__wrapped__", None) is not fit:
            raise ValueError(f"mechanism {name!r} is registered twice")
        declared = None if hyper is None else declarations(name, fit, hyper)
        rule = None
        if callable(privacy_model) or callable(neighbour):
            rule = functools.partial(_privacy_of, name, privacy_model, neighbour)
        info = MechanismInfo(
            name,
            fit,
            summary,
            "",
            "",
            tuple(needs),
            spec,
            dict(style or {}),
            declared,
            rule,
            epsilon_range,
            bounds or Bounds(),
            audit or AuditSetup(),
            dict(variants or {}),
            uses_delta,
            check,
            bool(rows_free),
            dict(strict or {}),
            certify,
            tuple(intervals),
        )
        defaults = _privacy_of(name, privacy_model, neighbour, info.resolve())
        info = replace(info, privacy_model=defaults.model, neighbour=defaults.neighbour)
        _check_contract(info, fit)
        _check_strict(info)
        checked = _validating(fit, info)
        target[name] = replace(info, fit=checked)
        return checked

    return decorator


def register_alias(old: str, name: str, *, what: str = "mechanism") -> None:
    """Keep the config-facing name ``old`` of a mechanism (or of a ``what`` = ``"dataset"``, ``"analysis"``,
    ``"annotation"``) working as ``name``, with a DeprecationWarning on each use. A renamed dataset keeps drawing
    from the streams of its old name (:func:`stream_name`), so the rename changes no number."""
    if what == "mechanism":
        ALIASES[old] = name
    else:
        RENAMED.setdefault(what, {})[old] = name


def stream_name(dataset: str) -> str:
    """The name a dataset's seeds derive from: its own, or for a renamed dataset the name it had (so a rename
    changes no data draw and no trial's noise)."""
    for old, new in RENAMED.get("dataset", {}).items():
        if new == dataset:
            return old
    return dataset


def register_randomizer(
    name: str,
    *,
    summary: str,
    spec: str = "",
    hyper: Mapping[str, Hyper] | None = None,
    bounds: Bounds | None = None,
    audit: AuditSetup | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register an auditable **local randomiser** that is not a regression mechanism (e.g. the regression oracle
    inside another kind of experiment): ``fit(X, y, epsilon, delta, rng, **hyper)`` runs it with one user per row
    and declares each user's report (:func:`dpbench.mechanisms.released` with ``users=True``).

    It gets the contract of a local-DP, replace-one mechanism and is checked the same way, but lives in
    :data:`RANDOMIZERS`, not :data:`MECHANISMS`: ``dpbench audit`` audits it (white-box, local view), runners and
    mechanism lists never see it."""
    return register_mechanism(name, summary=summary, privacy_model="local", neighbour="replace_one", spec=spec,
                              hyper=hyper, bounds=bounds, audit=audit, _into=RANDOMIZERS)  # fmt: skip


def _check_contract(info: MechanismInfo, fit: Callable[..., Any]) -> None:
    """Inputs, bounds, audit setup, variants and rules against the declarations (at import time)."""
    params = inspect.signature(fit).parameters
    taken = {p for p in INPUTS if p in params and params[p].kind is inspect.Parameter.KEYWORD_ONLY}
    if not set(info.needs) <= taken:
        raise TypeError(f"mechanism {info.name!r}: needs={sorted(info.needs)} but fit takes inputs {sorted(taken)}")
    specs = info.specs()
    for axis, key in info.bounds.hyper_names().items():
        if key not in specs:
            raise TypeError(f"mechanism {info.name!r}: bounds.{axis} names unknown hyperparameter {key!r}")
    if isinstance(info.bounds.clips, str) and info.bounds.clips not in specs:
        raise TypeError(f"mechanism {info.name!r}: bounds.clips names unknown hyperparameter {info.bounds.clips!r}")
    settings = {"audit.hyper": info.audit.hyper, **{f"variants.{k}": v.hyper for k, v in info.variants.items()}}
    for where, hyper in settings.items():
        try:
            resolved = info.resolve(info.check_hyper(hyper))
        except HyperError as err:
            raise TypeError(f"mechanism {info.name!r}: {where}.{err}") from None
        info.privacy(resolved)
        info.bounds.resolve(resolved)
        lo, hi = info.epsilons(resolved)
        if not 0 <= lo < hi:
            raise TypeError(f"mechanism {info.name!r}: epsilon_range gave ({lo}, {hi}] at {where}")


def _validating(fit: Callable[..., Any], info: MechanismInfo) -> Callable[..., Any]:
    """``fit`` behind a check of the hyperparameters it is called with (library callers get named errors too); with
    a declaration table, the defaults filled in and the signature and docstring derived from the table."""
    specs = info.specs()
    defaults = info.hyperparameters() if info.declared is not None else None

    @functools.wraps(fit)
    def checked(*args: Any, **kwargs: Any) -> Any:
        if defaults is not None:
            unknown = set(kwargs) - set(specs) - set(INPUTS)
            if unknown:
                key = sorted(unknown)[0]
                raise HyperError(key, unknown_name("hyperparameter", key, specs, of=f" of {info.name!r}"))
            kwargs = {**defaults, **kwargs}
        for key, value in kwargs.items():
            spec = specs.get(key)
            if spec is not None:
                try:
                    kwargs[key] = spec.check(value)
                except ValueError as err:
                    raise HyperError(key, f"{err} (mechanism {info.name!r})") from None
        if info.check is not None:
            info.check(info.resolve({k: v for k, v in kwargs.items() if k in specs}))
        return fit(*args, **kwargs)

    if info.declared is not None:
        checked.__signature__ = declared_signature(fit, specs)  # type: ignore[attr-defined]
        checked.__doc__ = declared_doc(fit, specs)
    # what `dpbench audit` reads today (until it reads info.audit): the declared audit dataset and hyperparameters
    checked.audit_data = {"n": info.audit.n, "d": info.audit.d}  # type: ignore[attr-defined]
    checked.audit_hyper = dict(info.audit.hyper)  # type: ignore[attr-defined]
    return checked


def register_dataset(
    name: str,
    *,
    summary: str,
    kind: str = "real",
    spec: str = "",
    shape: Callable[..., tuple[int, int]] | None = None,
    prefix: Callable[..., Any] | None = None,
    nests: tuple[str, ...] = (),
    rows_free: Callable[..., bool] | None = None,
    options: Mapping[str, Hyper] | None = None,
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated ``load(rng, **options)`` function as dataset ``name`` (``shape``, ``prefix``,
    ``nests``, ``rows_free``: see DatasetInfo). ``options`` declares each option once (``Hyper`` with its default),
    as a mechanism's hyperparameters: ``load`` then takes ``**options`` and is registered behind a check that fills
    the defaults and names a refused value; its signature is derived from the table."""

    def decorator(load: Callable[..., Any]) -> Callable[..., Any]:
        if name in DATASETS and getattr(DATASETS[name].load, "__wrapped__", DATASETS[name].load) is not load:
            raise ValueError(f"dataset {name!r} is registered twice")
        checked = load if options is None else _declared_loader(name, load, options)
        DATASETS[name] = DatasetInfo(name, checked, summary, kind, spec, shape, prefix, tuple(nests), rows_free,
                                     None if options is None else dict(options))  # fmt: skip
        return checked

    return decorator


def _declared_loader(name: str, load: Callable[..., Any], specs: Mapping[str, Hyper]) -> Callable[..., Any]:
    """``load(rng, **options)`` behind its declarations: unknown names and refused values raise
    :class:`~dpbench.contract.HyperError` naming the option, defaults are filled (each checked here, at import)."""
    for key, spec in specs.items():
        try:
            spec.check(spec.default)
        except ValueError as err:
            raise TypeError(f"dataset {name!r}: default of {key} is not allowed: {err}") from None
    defaults = {key: spec.default for key, spec in specs.items()}

    @functools.wraps(load)
    def checked(rng: Any, **given: Any) -> Any:
        values = {**defaults, **given}
        for key, value in values.items():
            if key not in specs:
                raise HyperError(key, unknown_name("option", key, specs, of=f" of dataset {name!r}"))
            try:
                values[key] = specs[key].check(value)
            except ValueError as err:
                raise HyperError(key, f"{err} (dataset {name!r})") from None
        return load(rng, **values)

    checked.__signature__ = declared_signature(load, specs)  # type: ignore[attr-defined]
    checked.__doc__ = declared_doc(load, specs)
    return checked


def register_kind(
    name: str,
    *,
    summary: str,
    parse: Callable[..., Any],
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
    name: str, *, summary: str, needs_runs: bool = True, options: Mapping[str, Hyper] | None = None
) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated ``run(runs, options, echo)`` function as analysis ``name``; ``options`` declares each
    option once (``Hyper`` with its default, allowed by its declaration — checked here), as a mechanism's
    hyperparameters."""

    def decorator(run: Callable[..., Any]) -> Callable[..., Any]:
        if name in ANALYSES and ANALYSES[name].run is not run:
            raise ValueError(f"analysis {name!r} is registered twice")
        for key, spec in (options or {}).items():
            try:
                spec.check(spec.default)
            except ValueError as err:
                raise TypeError(f"analysis {name!r}: default of {key} is not allowed: {err}") from None
        ANALYSES[name] = AnalysisInfo(name, summary, run, needs_runs, None if options is None else dict(options))
        return run

    return decorator


def register_annotation(name: str, *, summary: str) -> Callable[[Callable[..., Any]], Callable[..., Any]]:
    """Register the decorated ``draw(ax, trials, dataset_info, x, points)`` as plot annotation ``name``."""

    def decorator(draw: Callable[..., Any]) -> Callable[..., Any]:
        if name in ANNOTATIONS and ANNOTATIONS[name].draw is not draw:
            raise ValueError(f"annotation {name!r} is registered twice")
        ANNOTATIONS[name] = AnnotationInfo(name, summary, draw)
        return draw

    return decorator


_DISCOVERED = False
#: modules that failed to import during discovery: module name → error (reported by the lookups)
IMPORT_ERRORS: dict[str, str] = {}
#: set to 1 (the test suite does) to make a project module that fails to import an error, not a warning
STRICT_ENV = "DPBENCH_STRICT_DISCOVERY"


class DiscoveryError(ImportError):
    """A project module failed to import during discovery (raised in strict mode, e.g. under the test suite)."""


class DiscoveryWarning(RuntimeWarning):
    """A module or plug-in failed to import during discovery; what it registers is unavailable."""


def project_modules() -> list[str]:
    """Every module (recursively) of :data:`DISCOVERED_PACKAGES`, private ``_`` modules excepted."""
    names = []
    for package_name in DISCOVERED_PACKAGES:
        package = importlib.import_module(package_name)
        names += [
            m.name
            for m in pkgutil.walk_packages(package.__path__, prefix=f"{package_name}.", onerror=lambda _name: None)
            if not m.name.rpartition(".")[2].startswith("_")
        ]
    return names


def discover(*, strict: bool | None = None) -> None:
    """Import every project module of :data:`DISCOVERED_PACKAGES` and the installed plugins (idempotent).

    A module that fails to import does not hide the others: its error is recorded in :data:`IMPORT_ERRORS`, warned
    about (:class:`DiscoveryWarning`, once per module) and named by the lookups (:func:`get_mechanism`, ...).
    ``strict`` (default: the environment variable :data:`STRICT_ENV` is ``1``, as in the test suite) raises
    :class:`DiscoveryError` instead when a *project* module failed (a broken third-party plug-in only warns).
    """
    global _DISCOVERED
    strict = os.environ.get(STRICT_ENV) == "1" if strict is None else strict
    if not _DISCOVERED:
        _DISCOVERED = True
        loaders: list[tuple[str, Callable[[], Any]]] = [
            (name, functools.partial(importlib.import_module, name)) for name in project_modules()
        ]
        for group in ("dpbench.mechanisms", "dpbench.datasets"):
            loaders += [
                (f"entry point {entry.name} ({entry.value})", entry.load) for entry in entry_points(group=group)
            ]
        for name, load in loaders:
            try:
                load()
            except Exception as err:  # noqa: BLE001 - one broken module or plugin must not hide the rest
                IMPORT_ERRORS[name] = f"{type(err).__name__}: {err}"
                warnings.warn(
                    f"dpbench: could not import {name}: {IMPORT_ERRORS[name]} — what it registers is unavailable",
                    DiscoveryWarning,
                    stacklevel=2,
                )
    broken = {name: error for name, error in IMPORT_ERRORS.items() if not name.startswith("entry point")}
    if strict and broken:
        raise DiscoveryError(
            "dpbench: project modules failed to import: " + "; ".join(f"{k} ({v})" for k, v in broken.items())
        )


def import_note() -> str:
    if not IMPORT_ERRORS:
        return ""
    return "; modules that failed to import: " + "; ".join(f"{k} ({v})" for k, v in IMPORT_ERRORS.items())


#: a list of allowed names longer than this many characters is left to ``dpbench list`` instead of printed
def _import_object(path: str) -> Any:
    module_name, _, attr = path.partition(":")
    try:
        module = importlib.import_module(module_name)
        return getattr(module, attr)
    except (ImportError, AttributeError) as err:
        raise KeyError(f"cannot import {path!r}: {err}") from err


def get_auditable(name: str) -> MechanismInfo:
    """What ``dpbench audit`` can audit: a mechanism (:func:`get_mechanism`) or a registered local randomiser."""
    discover()
    return RANDOMIZERS[name] if name in RANDOMIZERS and name not in MECHANISMS else get_mechanism(name)


def get_mechanism(name: str) -> MechanismInfo:
    """Registered mechanism ``name``, or an external ``"pkg.module:fit"`` function.

    An external function is registered on first use; it may carry its metadata as attributes
    (``privacy_model``, ``neighbour``, ``needs``, ``summary``) set by :func:`register_mechanism` or by hand.
    """
    discover()
    if name in MECHANISMS:
        return MECHANISMS[name]
    if name in ALIASES:
        warnings.warn(
            f"mechanism {name!r} is deprecated: it is {ALIASES[name]!r} now; rename it in the config",
            DeprecationWarning,
            stacklevel=2,
        )
        return MECHANISMS[ALIASES[name]]
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
    raise KeyError(unknown_name("mechanism", name, MECHANISMS, see="dpbench list mechanisms") + import_note())


def _lookup(table: Mapping[str, Any], what: str, name: str, see: str = "dpbench list") -> Any:
    """``table[name]`` after discovery (a renamed ``name`` with a DeprecationWarning), or a KeyError suggesting close
    names (and naming what failed to import)."""
    discover()
    renamed = RENAMED.get(what, {}).get(name)
    if renamed is not None:
        warnings.warn(
            f"{what} {name!r} is deprecated: it is {renamed!r} now; rename it in the config",
            DeprecationWarning,
            stacklevel=3,
        )
        name = renamed
    if name in table:
        return table[name]
    raise KeyError(unknown_name(what, name, table, see=see) + import_note())


def get_dataset(name: str) -> DatasetInfo:
    return _lookup(DATASETS, "dataset", name, "dpbench list datasets")


def get_kind(name: str) -> KindInfo:
    return _lookup(KINDS, "experiment kind", name)


def get_analysis(name: str) -> AnalysisInfo:
    return _lookup(ANALYSES, "analysis", name, "dpbench analyze")


def get_annotation(name: str) -> AnnotationInfo:
    return _lookup(ANNOTATIONS, "annotation", name)


def analysis_options(name: str, given: Mapping[str, Any], defaults: Mapping[str, Any] | None = None) -> dict[str, Any]:
    """An analysis's options: ``given`` (strings from ``-o key=value`` or a config) over the defaults. An analysis
    that declares its options (``register_analysis(options=...)``) gets each read as its declared type and checked
    against its declaration; otherwise each is converted to its ``defaults`` entry's type (int, float, bool, str; a
    list default takes a comma-separated string). An unknown key or a refused value raises :class:`ValueError`
    naming it."""
    declared = ANALYSES[name].options if name in ANALYSES else None
    if declared is not None:
        return _declared_options(name, given, declared)
    defaults = defaults or {}
    unknown = sorted(set(given) - set(defaults))
    if unknown:
        raise ValueError(f"analysis {name!r}: " + unknown_name("option", unknown[0], defaults, see="dpbench analyze"))
    out = dict(defaults)
    for key, value in given.items():
        default = defaults[key]
        try:
            if isinstance(default, bool):
                if str(value).lower() not in ("true", "false", "1", "0", "yes", "no"):
                    raise ValueError(value)
                out[key] = str(value).lower() in ("true", "1", "yes")
            elif isinstance(default, (list, tuple)):
                out[key] = (
                    [v.strip() for v in str(value).split(",") if v.strip()] if isinstance(value, str) else list(value)
                )
            elif isinstance(default, int):
                out[key] = int(value)
            elif isinstance(default, float) or default is None and _is_number(value):
                out[key] = float(value)
            else:
                out[key] = str(value)
        except (TypeError, ValueError):
            raise ValueError(
                f"analysis {name!r}: option {key}={value!r} is not a valid {type(default).__name__}"
            ) from None
    return out


#: the spellings of true/false an analysis option accepts from ``-o key=value``
BOOL_TEXT = ("true", "false", "1", "0", "yes", "no")


def _declared_options(name: str, given: Mapping[str, Any], declared: Mapping[str, Hyper]) -> dict[str, Any]:
    """``given`` over the declared defaults, each text read as its declared type, then checked."""
    out = {key: spec.default for key, spec in declared.items()}
    for key, value in given.items():
        if key not in declared:
            raise ValueError(
                f"analysis {name!r}: " + unknown_name("option", key, declared, see="dpbench list analyses")
            )
        spec = declared[key]
        text = str(value).strip() if isinstance(value, str) else value
        try:
            if isinstance(text, str) and spec.type is int and text.lstrip("-").isdigit():
                text = int(text)
            elif (
                isinstance(text, str) and spec.type is bool and text.lower() in ("true", "false", "1", "0", "yes", "no")
            ):
                text = text.lower() in ("true", "1", "yes")
            out[key] = spec.check(text)
        except ValueError as err:
            raise ValueError(f"analysis {name!r}: option {key}: {err}") from None
    return out


def _is_number(value: Any) -> bool:
    try:
        float(value)
    except (TypeError, ValueError):
        return False
    return True
