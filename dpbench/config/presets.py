"""The figure-preset schema (``plot:``, ``plots:``, the flags of ``dpbench plot``) and named analyses
(``analyses:``): the presentation fields every experiment kind shares. A preset names its figure kind (``kind:``,
default curves) and that kind's options, declared once in the kind's module (:mod:`dpbench.analysis.figures.kinds`);
the parsers of structured option values (reference lines, selections) are here."""

from __future__ import annotations

from typing import Any

from dpbench import registry
from dpbench.analysis.figures.kinds import DEFAULT_KIND, RUN, FigureKind, get_figure_kind, validate
from dpbench.config.fields import NAME, check_keys, fail, key_error_text, number
from dpbench.contract import HyperError

#: preset-level keys of every ``plot:`` entry besides its kind's options: the figure kind (default
#: :data:`~dpbench.analysis.figures.kinds.DEFAULT_KIND`) and, for a kind with a ``metric`` option, several metrics
PRESET_KEYS = {"kind": "the figure kind (default curves; `dpbench list figures` shows every kind and its options)",
               "metrics": "several metrics: one figure each (kinds with a metric option)"}  # fmt: skip
#: Config fields that only change how results are shown (never part of a run's fingerprint)
PRESENTATION_KEYS = ("plot", "plots", "analyses")


def parse_selection(value: Any, field_name: str) -> dict[str, list[Any]]:
    """``{column: value | [values]}`` → ``{column: [values]}``."""
    if not isinstance(value, dict) or not value:
        raise fail(field_name, f"must be a mapping {{column: value or [values]}}, got {value!r}")
    clean = {}
    for column, wanted in value.items():
        wanted = wanted if isinstance(wanted, list) else [wanted]
        if not wanted:
            raise fail(f"{field_name}.{column}", "must name at least one value")
        clean[str(column)] = wanted
    return clean


def parse_hlines(value: Any, field_name: str) -> list[dict[str, Any]]:
    if not isinstance(value, list):
        value = [value]
    lines = []
    for i, item in enumerate(value):
        where = f"{field_name}[{i}]"
        if isinstance(item, dict):
            check_keys(item, {"y", "label"}, where)
            lines.append({"y": number(item.get("y"), f"{where}.y"), "label": str(item.get("label") or "")})
        else:
            lines.append({"y": number(item, where), "label": ""})
    return lines


def parse_ref_slopes(value: Any, field_name: str) -> list[dict[str, Any]]:
    items = value if isinstance(value, list) else [value]
    lines = []
    for i, item in enumerate(items):
        where = f"{field_name}[{i}]"
        if not isinstance(item, dict):
            raise fail(where, f"must be a mapping {{slope, label, through}}, got {item!r}")
        check_keys(item, {"slope", "label", "through"}, where)
        lines.append(
            {
                "slope": number(item.get("slope"), f"{where}.slope"),
                "label": str(item.get("label") or ""),
                "through": str(item.get("through") or ""),
            }
        )
    return lines


def text(value: Any, field_name: str) -> str:
    """A string option (a number is taken as its text, e.g. ``title: 2018``)."""
    if not isinstance(value, (str, int, float)) or isinstance(value, bool):
        raise fail(field_name, f"must be a string, got {value!r}")
    return str(value)


def parse_columns(value: Any, field_name: str) -> list[str]:
    """A column name or a list of them."""
    value = [value] if isinstance(value, str) else value
    if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
        raise fail(field_name, f"must be a list of column names, got {value!r}")
    return value


def preset_kind(options: dict[str, Any], where: str) -> FigureKind:
    """The figure kind a ``plot:`` entry names (``kind:``, default curves): one drawn from a run."""
    name = options.get("kind", DEFAULT_KIND)
    if not isinstance(name, str):
        raise fail(f"{where}.kind", f"must be a figure kind name, got {name!r}")
    try:
        kind = get_figure_kind(name)
    except KeyError as err:
        raise fail(f"{where}.kind", key_error_text(err)) from None
    if kind.reads != RUN:
        raise fail(f"{where}.kind", f"figure kind {name!r} draws {kind.reads}, not a run: it cannot be a plot: entry")
    return kind


def parse_plot_options(options: Any, where: str = "plot") -> dict[str, Any]:
    """Validate one figure preset: its ``kind`` and that kind's options (declared with Hyper in the kind's module;
    ``dpbench list figures KIND``); returns a clean copy. ``None`` values mean "default"."""
    if not isinstance(options, dict):
        raise fail(where, f"must be a mapping, got {options!r}")
    kind = preset_kind(options, where)
    keys = set(kind.options) | {"kind"} | ({"metrics"} if "metric" in kind.options else set())
    check_keys(options, keys, where)
    clean: dict[str, Any] = {"kind": kind.name} if "kind" in options else {}
    if options.get("metrics") is not None:
        value = options["metrics"]
        value = [value] if isinstance(value, str) else value
        if not isinstance(value, list) or not value or not all(isinstance(m, str) for m in value):
            raise fail(f"{where}.metrics", f"must be a non-empty list of metric names, got {value!r}")
        clean["metrics"] = value
    rest = {k: v for k, v in options.items() if k not in ("kind", "metrics")}
    try:
        given = validate(kind, rest, where)
        if kind.check is not None:
            kind.check({**{k: None for k in kind.options}, **given})
    except HyperError as err:
        raise fail(err.name if err.name.startswith(f"{where}.") else f"{where}.{err.name}", err.reason) from None
    return {**clean, **given}


def parse_plots(value: Any) -> dict[str, dict[str, Any]]:
    """``plots: {name: preset}`` → validated presets; names become figure file names (figure_<name>.png)."""
    if value is None:
        return {}
    if not isinstance(value, dict) or not value:
        raise fail("plots", f"must be a mapping {{name: {{metric, x, ...}}}}, got {value!r}")
    presets = {}
    for name, options in value.items():
        if not isinstance(name, str) or not NAME.fullmatch(name):
            raise fail(f"plots.{name}", "a figure name is letters, digits, '_', '-', '.'")
        presets[name] = parse_plot_options(options or {}, f"plots.{name}")
    return presets


def parse_analyses(value: Any) -> list[dict[str, Any]]:
    """``analyses: [name, {name, options}]`` → ``[{name, options}]`` with options as strings (as ``-o key=value``).

    Names are checked against the registered analyses (:func:`dpbench.registry.get_analysis`).
    """
    if value is None:
        return []
    if not isinstance(value, list):
        raise fail("analyses", f"must be a list of analysis names or {{name, options}}, got {value!r}")
    entries = []
    for i, item in enumerate(value):
        where = f"analyses[{i}]"
        item = {"name": item} if isinstance(item, str) else item
        if not isinstance(item, dict) or not isinstance(item.get("name"), str):
            raise fail(where, f"must be an analysis name or {{name, options}}, got {item!r}")
        check_keys(item, {"name", "options"}, where)
        try:
            registry.get_analysis(item["name"])
        except KeyError as err:
            raise fail(f"{where}.name", key_error_text(err)) from None
        options = item.get("options") or {}
        if not isinstance(options, dict):
            raise fail(f"{where}.options", f"must be a mapping, got {options!r}")
        entries.append(
            {
                "name": item["name"],
                "options": {
                    str(k): ",".join(map(str, v)) if isinstance(v, list) else str(v) for k, v in options.items()
                },
            }
        )
    return entries


def parse_presentation(raw: dict[str, Any]) -> dict[str, Any]:
    """The ``plot`` / ``plots`` / ``analyses`` fields of a config of any kind."""
    return {
        "plot": parse_plot_options(raw.get("plot") or {}, "plot"),
        "plots": parse_plots(raw.get("plots")),
        "analyses": parse_analyses(raw.get("analyses")),
    }
