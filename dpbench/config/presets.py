"""The figure-preset schema (``plot:``, ``plots:``, the flags of ``dpbench plot``) and named analyses
(``analyses:``): the presentation fields every experiment kind shares. Validated here, drawn by
:mod:`dpbench.analysis.figures`."""

from __future__ import annotations

from typing import Any

from dpbench import registry
from dpbench.config.fields import NAME, check_keys, fail, key_error_text, number, positive_int

#: options of one figure preset (``plot:``, each entry of ``plots:``, and the flags of ``dpbench plot``)
#: every option of a figure preset, declared once: name → (default, meaning). ``dpbench plot`` fills the
#: defaults (:data:`DEFAULTS`), the schema checks the values (:func:`parse_plot_options`), ``dpbench list keys``
#: and docs show the meanings (:data:`PLOT_KEYS`). ``metrics`` (several figures) has no default of its own.
PRESET_OPTIONS: dict[str, tuple[Any, str]] = {
    "metric": ("train_mse", "metric column drawn on y (or 'excess' = train MSE − OLS train MSE)"),
    "metrics": (None, "several metrics: one figure each"),
    "x": ("epsilon", "numeric CSV column on the x axis (default epsilon)"),
    "hue": ("label", "column keying the curves' colours (default label)"),
    "panel": ("dataset", "column keying the panels (default dataset)"),
    "row": (None, "column keying the rows of a panel grid (panels then go in columns)"),
    "style": (None, "column keying line style and marker (default: each mechanism's registered style)"),
    "stat": ("mean", "mean | median: the point drawn"),
    "interval": (
        "normal",
        "normal | bootstrap | none: the 95% band (normal: stat ± 1.96·se; bootstrap: seeded percentile)",
    ),
    "resamples": (1000, "bootstrap resamples (default 1000)"),
    "seed": (0, "bootstrap seed (default 0): the same run always gives the same bands"),
    "logx": (None, "log x axis (default: when x is ε or spans ≥ 50×)"),
    "logy": (False, "log y axis"),
    "zero_below": (
        1e-10,
        "log y: centres ≤ zero_below × the panel's largest are dropped as numerical zeros (default 1e-10)",
    ),
    "refs": (True, "draw the dataset's OLS and θ = 0 lines (train MSE / excess)"),
    "hlines": ((), "horizontal reference lines: [y, {y: 1.0, label: text}]"),
    "ref_slopes": (
        (),
        "reference power laws (grey dotted): [{slope: -0.5, label: text, through: curve label}], one through the "
        "first point of each curve of that label (of every non-baseline curve without through)",
    ),
    "where": (None, "keep only rows with {column: value | [values]}"),
    "pool": ((), "columns pooled into one point instead of splitting curves (e.g. [data_draw])"),
    "baseline": (None, "rows {column: value} drawn as grey dashed reference curves in every panel they share"),
    "tag_models": (False, "append [central]/[local]/[non-private] to legend entries when privacy models mix"),
    "fit": (False, "fit log(stat) = a + b·log(x) per curve; print the slopes b with a 95% CI (and write slopes_*.csv)"),
    "fit_min": (None, "fit on x ≥ fit_min only"),
    "fit_max": (None, "fit on x ≤ fit_max only"),
    "fit_draw": (False, "also draw the fitted lines and their slopes in the panels"),
    "title": (None, "figure title (default: the config's; '' hides it)"),
    "caption": (None, "figure caption (default: the config's; '' hides it)"),
    "ncols": (None, "panels per row"),
    "annotate": (None, "a registered point annotation (dpbench.registry.register_annotation)"),
    "out": (None, "file stem of the figure (default figure_<preset name>, or figure_<metric>[_vs_<x>])"),
}
#: option → meaning
PLOT_KEYS = {name: meaning for name, (_default, meaning) in PRESET_OPTIONS.items()}
#: option → default (of one figure: ``metrics`` excluded)
DEFAULTS: dict[str, Any] = {name: default for name, (default, _meaning) in PRESET_OPTIONS.items() if name != "metrics"}
PLOT_STATS = ("mean", "median")
PLOT_INTERVALS = ("normal", "bootstrap", "none")
PLOT_STRINGS = ("metric", "x", "hue", "panel", "row", "style", "title", "caption", "annotate", "out")
PLOT_BOOLS = ("logy", "refs", "tag_models", "fit", "fit_draw")
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


def parse_plot_options(options: Any, where: str = "plot") -> dict[str, Any]:
    """Validate one figure preset (see :data:`PLOT_KEYS`); returns a clean copy. ``None`` values mean "default"."""
    if not isinstance(options, dict):
        raise fail(where, f"must be a mapping, got {options!r}")
    check_keys(options, PLOT_KEYS, where)
    clean: dict[str, Any] = {}
    for key, value in options.items():
        field_name = f"{where}.{key}"
        if value is None:
            continue
        if key in PLOT_STRINGS:
            if not isinstance(value, (str, int, float)) or isinstance(value, bool):
                raise fail(field_name, f"must be a string, got {value!r}")
            value = str(value)
        elif key in PLOT_BOOLS or key == "logx":
            if not isinstance(value, bool):
                raise fail(field_name, f"must be true or false, got {value!r}")
        elif key == "metrics":
            value = [value] if isinstance(value, str) else value
            if not isinstance(value, list) or not value or not all(isinstance(m, str) for m in value):
                raise fail(field_name, f"must be a non-empty list of metric names, got {value!r}")
        elif key == "stat" and value not in PLOT_STATS:
            raise fail(field_name, f"must be one of {', '.join(PLOT_STATS)}, got {value!r}")
        elif key == "interval" and value not in PLOT_INTERVALS:
            raise fail(field_name, f"must be one of {', '.join(PLOT_INTERVALS)}, got {value!r}")
        elif key == "resamples":
            value = positive_int(value, field_name, minimum=100)
        elif key in ("seed", "ncols"):
            value = positive_int(value, field_name, minimum=0 if key == "seed" else 1)
        elif key == "zero_below":
            value = number(value, field_name)
            if not 0.0 <= value < 1.0:
                raise fail(field_name, f"must be in [0, 1), got {value!r}")
        elif key in ("fit_min", "fit_max"):
            value = number(value, field_name)
            if value <= 0:
                raise fail(field_name, f"must be > 0 (the fit is on log x), got {value!r}")
        elif key == "hlines":
            value = parse_hlines(value, field_name)
        elif key == "ref_slopes":
            value = parse_ref_slopes(value, field_name)
        elif key in ("where", "baseline"):
            value = parse_selection(value, field_name)
        elif key == "pool":
            value = [value] if isinstance(value, str) else value
            if not isinstance(value, list) or not all(isinstance(c, str) for c in value):
                raise fail(field_name, f"must be a list of column names, got {value!r}")
        clean[key] = value
    if "fit_min" in clean and "fit_max" in clean and clean["fit_min"] >= clean["fit_max"]:
        raise fail(f"{where}.fit_min", f"must be < fit_max ({clean['fit_max']:g}), got {clean['fit_min']:g}")
    return clean


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
