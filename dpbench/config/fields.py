"""Field validators every config schema shares: each returns the clean value or raises :class:`ConfigError` naming
the field (``mechanisms[2].hyper.T``) and what is allowed. The kinds' schemas (:mod:`dpbench.engine.schema`,
:mod:`dpbench.bandits.config`) and the figure-preset schema (:mod:`dpbench.config.presets`) are built from them.
"""

from __future__ import annotations

import itertools
import json
import math
import re
from collections.abc import Callable, Iterable, Sequence
from typing import Any

import numpy as np

from dpbench import registry
from dpbench.privacy.validate import DELTA_MIN, EPSILON_RANGE

#: a number as YAML 1.2 spells it; PyYAML (YAML 1.1) reads ``1e6`` (no dot) as a string, so numeric fields accept it
NUMBER_TEXT = re.compile(r"^\s*[-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?\s*$")
#: a run or figure name: letters, digits, '_', '-', '.'
NAME = re.compile(r"[A-Za-z0-9_.-]+")
#: spellings of ε = ∞ (non-private) where a kind allows it
INFINITY_TEXT = ("inf", ".inf", "infinity")
BACKENDS = ("loky", "dask")
SCHEDULER_SCHEMES = ("tcp://", "tls://", "ucx://", "inproc://", "ws://", "wss://")


class ConfigError(ValueError):
    """A config problem, with the offending field in the message (``field`` and ``reason`` apart, when known)."""

    def __init__(self, message: str, field_name: str | None = None, reason: str | None = None):
        super().__init__(message)
        self.field = field_name
        self.reason = reason if reason is not None else message


def fail(field_name: str, message: str) -> ConfigError:
    """The error of ``field_name``: "config field '<field>': <message>"."""
    return ConfigError(f"config field '{field_name}': {message}", field_name, message)


def check_keys(mapping: dict[str, Any], allowed: set[str] | dict[str, str], where: str) -> None:
    """Every key of ``mapping`` is ``allowed`` (else the error names the first unknown one, with a suggestion)."""
    unknown = sorted(set(mapping) - set(allowed), key=str)
    if unknown:
        prefix = f"{where}." if where else ""
        shown = printable_key(unknown[0])
        raise fail(f"{prefix}{shown}", registry.unknown_name("key", shown, allowed, see="dpbench list keys"))


def printable_key(key: Any) -> str:
    """``key`` as one line of text: control characters escaped (a YAML key of ``"\\n"`` is shown as ``\\n``)."""
    text = str(key)
    return text if text.isprintable() else text.encode("unicode_escape").decode("ascii")


def yaml_number(value: Any) -> Any:
    """``value`` as a number if it is one, including YAML 1.2 spellings PyYAML leaves as strings (``1e6``)."""
    if isinstance(value, str) and NUMBER_TEXT.match(value):
        return float(value) if any(c in value for c in ".eE") else int(value)
    return value


def number_hint(value: Any) -> str:
    return " (a string: quote-free numbers such as 1e6 are accepted)" if isinstance(value, str) else ""


def positive_int(value: Any, field_name: str, minimum: int = 1) -> int:
    """An integer ≥ ``minimum``; integral floats (``1e6``, also as YAML's string spelling) are accepted."""
    value = yaml_number(value)
    if isinstance(value, (float, np.floating)) and math.isfinite(value) and float(value).is_integer():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, (int, np.integer)) or value < minimum:
        raise fail(field_name, f"must be an integer ≥ {minimum}, got {value!r}{number_hint(value)}")
    return int(value)


def finite_float(value: Any, field_name: str) -> float:
    """A finite number (YAML 1.2 spellings accepted)."""
    value = yaml_number(value)
    if isinstance(value, bool) or not isinstance(value, (int, float, np.integer, np.floating)):
        raise fail(field_name, f"must be a number, got {value!r}{number_hint(value)}")
    if not math.isfinite(value):
        raise fail(field_name, f"must be finite, got {value!r}")
    return float(value)


def number(value: Any, field_name: str) -> float:
    """A finite number, as given (no string spellings)."""
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise fail(field_name, f"must be a finite number, got {value!r}")
    return float(value)


def parse_name(value: Any) -> str:
    """The run name (``name``): results go to ``<output_dir>/<name>/``."""
    if not isinstance(value, str) or not NAME.fullmatch(value or ""):
        raise fail("name", f"must be a non-empty string of letters, digits, '_', '-', '.', got {value!r}")
    return value


def parse_n_jobs(value: Any) -> int:
    """Parallel workers: a positive integer, or -1 for all cores."""
    value = yaml_number(value)
    if isinstance(value, bool) or not isinstance(value, int) or value == 0 or value < -1:
        raise fail("n_jobs", f"must be a positive integer or -1 (all cores), got {value!r}")
    return value


def parse_epsilons(value: Any, *, allow_inf: bool = False) -> tuple[float, ...]:
    """A non-empty list of distinct ε (or ``{logspace | linspace: [start, stop, num]}``), each finite, > 0 and in
    the supported range :data:`~dpbench.privacy.validate.EPSILON_RANGE`; with ``allow_inf`` also ``.inf`` (the
    kind's non-private marker)."""
    if isinstance(value, dict):
        check_keys(value, {"logspace", "linspace"}, "epsilons")
        if len(value) != 1:
            raise fail("epsilons", f"must hold exactly one of logspace/linspace, got {value!r}")
        ((kind, args),) = value.items()
        if not (isinstance(args, list) and len(args) == 3):
            raise fail(f"epsilons.{kind}", f"must be [start, stop, num], got {args!r}")
        start = finite_float(args[0], f"epsilons.{kind}[0]")
        stop = finite_float(args[1], f"epsilons.{kind}[1]")
        num = positive_int(args[2], f"epsilons.{kind}[2]")
        with np.errstate(over="ignore"):
            grid = np.logspace(start, stop, num) if kind == "logspace" else np.linspace(start, stop, num)
        values = [float(v) for v in grid]
    elif isinstance(value, (list, tuple)) and value:
        values = [yaml_number(v) for v in value]
    elif isinstance(yaml_number(value), (int, float)) and not isinstance(value, bool):
        values = [yaml_number(value)]
    else:
        raise fail("epsilons", f"must be a non-empty list of numbers > 0 or {{logspace: [a, b, n]}}, got {value!r}")
    clean: list[float] = []
    low, high = EPSILON_RANGE  # the one range check of ε at config load (the calibrations': check_epsilon)
    for i, eps in enumerate(values):
        if allow_inf and isinstance(eps, str) and eps.strip().lower() in INFINITY_TEXT:
            eps = math.inf
        if allow_inf and isinstance(eps, float) and eps == math.inf:
            pass
        elif isinstance(eps, bool) or not isinstance(eps, (int, float)) or not low <= eps <= high:  # NaN fails too
            allowed = f"a number in the supported range [{low:g}, {high:g}]" + (" or .inf (non-private)" * allow_inf)
            raise fail(f"epsilons[{i}]", f"ε must be {allowed}, got {eps!r}{number_hint(eps)}")
        if float(eps) in clean:
            raise fail(f"epsilons[{i}]", f"ε = {float(eps):g} repeats epsilons[{clean.index(float(eps))}]")
        clean.append(float(eps))
    return tuple(clean)


def parse_delta(value: Any, rule: re.Pattern[str], rules_text: str) -> str | float:
    """δ: a rule of the kind (matching ``rule``, e.g. '1/n^2'; returned without spaces) or a number in (0, 1) not
    below :data:`~dpbench.privacy.validate.DELTA_MIN`. ``rules_text`` lists the rules in the error messages."""
    if isinstance(value, str):
        if rule.match(value):
            return value.replace(" ", "")
        if not NUMBER_TEXT.match(value):
            raise fail("delta", f"must be {rules_text} or a number in (0, 1), got {value!r}")
        value = float(value)
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not 0 < value < 1:
        raise fail("delta", f"δ must be in (0, 1) (or one of the rules {rules_text}), got {value!r}")
    if value < DELTA_MIN:
        raise fail("delta", f"δ = {value:g} is below the supported minimum {DELTA_MIN:g}")
    return float(value)


def parse_backend(backend: Any, scheduler: Any) -> dict[str, Any]:
    """``backend``/``scheduler`` → config fields; a scheduler is an address, a ``.json`` scheduler file or
    ``local``."""
    if backend not in BACKENDS:
        raise fail("backend", f"must be one of {', '.join(BACKENDS)}, got {backend!r}")
    if scheduler is None:
        return {"backend": backend, "scheduler": None}
    if backend != "dask":
        raise fail("scheduler", f"is only used with backend: dask (backend is {backend!r})")
    if not isinstance(scheduler, str) or not (
        scheduler == "local" or scheduler.startswith(SCHEDULER_SCHEMES) or scheduler.endswith(".json")
    ):
        raise fail(
            "scheduler",
            f"must be 'local', an address such as tcp://host:8786 or a scheduler .json file, got {scheduler!r}",
        )
    return {"backend": backend, "scheduler": scheduler}


# ----------------------------------------------------------------------------------------------------------------
# component entries (a dataset, a mechanism, an environment, an algorithm): name, parameters, grid


def grid_combinations(grid: Any, where: str) -> list[dict[str, Any]]:
    """``grid: {name: [values]}`` → every combination (``[{}]`` without a grid)."""
    if grid is None:
        return [{}]
    if not isinstance(grid, dict) or not grid:
        raise fail(where, f"must be a mapping of name → list of values, got {grid!r}")
    for key, values in grid.items():
        if not isinstance(values, list) or not values:
            raise fail(f"{where}.{key}", f"must be a non-empty list, got {values!r}")
    keys = list(grid)
    return [dict(zip(keys, combo, strict=True)) for combo in itertools.product(*(grid[k] for k in keys))]


def check_names(given: dict[str, Any], allowed: dict[str, Any], where: str, what: str, *, of: str, see: str) -> None:
    """Every name of ``given`` is ``allowed`` (else the error names the first unknown one, with a suggestion)."""
    unknown = sorted(set(given) - set(allowed), key=str)
    if unknown:
        raise fail(f"{where}.{unknown[0]}", registry.unknown_name(what, unknown[0], allowed, of=of, see=see))


def key_error_text(err: KeyError) -> str:
    """A KeyError's message as written (``str(err)`` quotes it; stripping those quotes ate a quote of the message
    itself: ``No module named 'my_mech``)."""
    return str(err.args[0]) if err.args else str(err)


def parse_component(
    raw: Any, where: str, name_key: str, keys: set[str], lookup, params_key: str, allowed_of, what: str
) -> tuple[Any, dict[str, Any], dict[str, Any], list[dict[str, Any]]]:
    """Common part of a component entry (dataset, mechanism, environment, algorithm): name lookup, parameter
    names, grid expansion.

    Returns (registry info, the raw mapping, its fixed parameters, the grid combinations).
    """
    if isinstance(raw, str):
        raw = {name_key: raw}
    if not isinstance(raw, dict) or name_key not in raw:
        raise fail(where, f"must be a {name_key} name or a mapping with '{name_key}', got {raw!r}")
    check_keys(raw, keys, where)
    if not isinstance(raw[name_key], str):
        raise fail(f"{where}.{name_key}", f"must be a {name_key} name (string), got {raw[name_key]!r}")
    try:
        info = lookup(raw[name_key])
    except KeyError as err:
        raise fail(f"{where}.{name_key}", key_error_text(err)) from None
    params = raw.get(params_key) or {}
    if not isinstance(params, dict):
        raise fail(f"{where}.{params_key}", f"must be a mapping, got {params!r}")
    allowed = allowed_of(info)
    topic = {"loader": "datasets", "mechanism": "mechanisms"}.get(name_key)
    see = f"dpbench list {topic} {info.name}" if topic else "dpbench list"
    check_names(params, allowed, f"{where}.{params_key}", what, of=f" of '{info.name}'", see=see)
    combos = grid_combinations(raw.get("grid"), f"{where}.grid")
    check_names(combos[0], allowed, f"{where}.grid", what, of=f" of '{info.name}'", see=see)
    return info, raw, params, combos


def parse_entries(
    raw: dict[str, Any], key: str, parser: Callable[[Any, int], Iterable[Any]], identity: Callable[[Any], Any]
) -> list:
    """The non-empty list ``raw[key]`` → its entries (``parser(item, index)`` gives each item's entries); two
    entries with the same ``identity`` are an error."""
    items = raw.get(key)
    if not isinstance(items, list) or not items:
        raise fail(key, f"must be a non-empty list, got {items!r}")
    entries = [entry for i, item in enumerate(items) for entry in parser(item, i)]
    seen: dict[Any, int] = {}
    for i, entry in enumerate(entries):
        ident = identity(entry)
        if ident in seen:
            raise fail(key, f"entry {i} duplicates entry {seen[ident]} ({ident}); give it a distinct label/options")
        seen[ident] = i
    return entries


def entry_key(name: str, options: Iterable[tuple[str, Any]]) -> str:
    """An entry's key by value: its registry name, then its (name, value) options as JSON with sorted keys (trial
    identities, seeds and shard names derive from it, so it must never change)."""
    return f"{name}{json.dumps(dict(options), sort_keys=True)}"


def swept_id(label: str, options: Iterable[tuple[str, Any]], swept: Sequence[str]) -> str:
    """The name of one instance of an entry with a grid: its label, then ``[k=v, ...]`` of the ``swept`` options."""
    if not swept:
        return label
    values = dict(options)
    return f"{label} [" + ", ".join(f"{k}={values[k]}" for k in swept) + "]"
