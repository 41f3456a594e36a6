"""Curve styles: colours, markers and line styles from the registry (``MechanismInfo.style``) with distinct fallbacks,
a sequential colour map for a numeric hue (ε = ∞ in black), greys and dash patterns for baselines."""

from __future__ import annotations

from collections.abc import Callable, Container, Iterator, Mapping, Sequence
from typing import Any, TypeVar

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.colors import to_hex, to_rgb

FALLBACK_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "<", ">")
LINESTYLES = ("-", "--", ":", "-.")
BASELINE_GREYS = ("black", "dimgray", "darkgrey", "silver")
#: dash patterns for baselines whose registered line style another baseline label already has (dash-dot-dot,
#: sparse dots, long dashes; each visible in a legend handle): two baselines of one hue colour stay distinguishable
BASELINE_DASHES = ("--", (0, (3, 1, 1, 1, 1, 1)), (0, (1, 3)), (0, (10, 3)))
_STYLE_CACHE: dict[str, dict[str, Any]] = {}
#: colours for mechanisms that registered none (plug-ins, "pkg.module:fit"), dark enough on white; those closer than
#: :data:`PALETTE_MIN_DISTANCE` (RGB, Euclidean) to a registered mechanism's colour are skipped, so a plug-in is never
#: drawn in AdaSSP's blue
UNREGISTERED_PALETTE = (
    "#000080",
    "#e7298a",
    "#1b9e77",
    "#4b0082",
    "#d6616b",
    "#6b8e23",
    "#e7ba52",
    "#393b79",
    "#ff1493",
    "#5254a3",
    "#b5cf6b",
    "#c49c94",
)
PALETTE_MIN_DISTANCE = 0.25
#: further dash patterns once the four basic line styles are taken by curves of one colour
EXTRA_DASHES = ((0, (5, 1)), (0, (3, 1, 1, 1)), (0, (1, 1)), (0, (8, 2, 2, 2)))
T = TypeVar("T")


def registered_colours() -> list[str]:
    """Hex colours registered by any discovered mechanism (``MechanismInfo.style['color']``)."""
    try:
        from dpbench import registry

        registry.discover()
        mechanisms = list(registry.MECHANISMS.values())
    except Exception:  # noqa: BLE001 - plotting must not depend on every mechanism importing cleanly
        return []
    return sorted({to_hex(m.style["color"]) for m in mechanisms if m.style.get("color")})


def unregistered_palette() -> list[str]:
    """:data:`UNREGISTERED_PALETTE` without the colours near a registered one (then the rest of the palette)."""
    taken = np.array([to_rgb(c) for c in registered_colours()]).reshape(-1, 3)
    far = [
        c
        for c in UNREGISTERED_PALETTE
        if not len(taken) or np.sqrt(((taken - np.array(to_rgb(c))) ** 2).sum(axis=1)).min() >= PALETTE_MIN_DISTANCE
    ]
    return far + [c for c in UNREGISTERED_PALETTE if c not in far]


def mechanism_style(name: str) -> dict[str, Any]:
    """Registry style hints of mechanism ``name``; ``{}`` if it (or the registry) cannot be loaded."""
    if name not in _STYLE_CACHE:
        try:
            from dpbench import registry

            _STYLE_CACHE[name] = dict(registry.get_mechanism(name).style)
        except Exception:  # noqa: BLE001 - plotting must not depend on every mechanism importing cleanly
            _STYLE_CACHE[name] = {}
    return _STYLE_CACHE[name]


def sequential_colours(values: list[Any]) -> dict[Any, Any]:
    """Numbers → viridis (ascending), +∞ → black (e.g. ε = ∞, non-private)."""
    cmap = matplotlib.colormaps["viridis"]
    finite = sorted(v for v in values if not pd.isna(v) and np.isfinite(v))
    colours = {v: cmap(0.05 + 0.8 * i / max(1, len(finite) - 1)) for i, v in enumerate(finite)}
    colours.update({v: "black" for v in values if not pd.isna(v) and not np.isfinite(v)})
    return colours


def first_free(pool: Sequence[T], used: Container[Any], turn: int) -> T:
    """The first of ``pool`` not in ``used``; when every one is used, ``pool[turn % len(pool)]`` (cycling)."""
    free = [value for value in pool if value not in used]
    return free[0] if free else pool[turn % len(pool)]


def _registered(names: list[Any], mechanisms: list[str | None]) -> Iterator[tuple[Any, dict[str, Any]]]:
    """Each distinct name once, in order, with the registered style of its (first) mechanism ({} without one)."""
    seen: set[Any] = set()
    for name, mech in zip(names, mechanisms, strict=True):
        if name not in seen:
            seen.add(name)
            yield name, mechanism_style(mech) if mech else {}


def label_styles(names: list[Any], mechanisms: list[str | None]) -> dict[Any, dict[str, Any]]:
    """Registry colour/marker/linestyle per curve name, with distinct fallbacks where missing or taken: a name without
    a registered colour (or whose colour another name has) takes the next of :func:`unregistered_palette`."""
    palette: list[str] | None = None
    styles: dict[Any, dict[str, Any]] = {}
    used_colors: set[Any] = set()
    used_markers: set[str] = set()
    for name, base in _registered(names, mechanisms):
        color = base.get("color")  # as registered ("green"); compared as hex ("#008000")
        if color is None or to_hex(color) in used_colors:
            palette = unregistered_palette() if palette is None else palette
            color = first_free(palette, used_colors, len(styles))
        marker = base.get("marker")
        if marker is None or (
            marker in used_markers and base.get("color") is not None and to_hex(base["color"]) in used_colors
        ):
            marker = first_free(FALLBACK_MARKERS, used_markers, len(styles))
        used_colors.add(to_hex(color))
        used_markers.add(marker)
        styles[name] = {"color": color, "marker": marker or "", "linestyle": base.get("linestyle", "-")}
    return styles


def distinct_pairs(styles: Mapping[tuple, dict[str, Any]], curves: list[tuple]) -> None:
    """Give every curve in ``curves`` its own (colour, line style) pair: a curve whose pair an earlier one has takes
    the next line style free for its colour (markers alone are not enough to tell curves apart)."""
    used: set[tuple[str, str]] = set()
    for curve in curves:
        entry = styles[curve]
        colour = to_hex(entry["color"]) if entry["color"] is not None else "none"
        if (colour, str(entry["linestyle"])) in used:
            free = [ls for ls in (*LINESTYLES, *EXTRA_DASHES) if (colour, str(ls)) not in used]
            entry["linestyle"] = free[0] if free else entry["linestyle"]
        used.add((colour, str(entry["linestyle"])))


def style_map(values: list[Any], mechanisms: list[str | None], by_label: bool) -> dict[Any, dict[str, str]]:
    """Line style (and, when the style column names mechanisms, marker) per value of the ``style`` column."""
    out: dict[Any, dict[str, str]] = {}
    used_ls: set[str] = set()
    used_markers: set[str] = set()
    for value, base in _registered(values, mechanisms if by_label else [None] * len(values)):
        linestyle = base.get("linestyle")
        if linestyle is None or linestyle in used_ls:
            linestyle = first_free(LINESTYLES, used_ls, len(out))
        used_ls.add(linestyle)
        entry = {"linestyle": linestyle}
        if by_label:
            marker = base.get("marker")
            if not marker or marker in used_markers:
                marker = first_free(FALLBACK_MARKERS, used_markers, len(out))
            used_markers.add(marker)
            entry["marker"] = marker
        out[value] = entry
    return out


def baseline_linestyles() -> Callable[[Any, Any], Any]:
    """Line style per baseline label: its registered one (default dashed), or, when another baseline label has
    that already, the next free pattern of BASELINE_DASHES — fixed per label, so panels and legend agree."""
    of_label: dict[Any, Any] = {}

    def style_for(label: Any, registered: Any) -> Any:
        if label not in of_label:
            taken = [str(v) for v in of_label.values()]
            wanted = registered or "--"
            free = [d for d in (wanted, *BASELINE_DASHES) if str(d) not in taken]
            of_label[label] = free[0] if free else wanted
        return of_label[label]

    return style_for


def curve_styles(
    curves: list[tuple], meta: Mapping[tuple, Mapping[str, Any]], hue: str, style: str | None
) -> dict[tuple, dict[str, Any]]:
    """Colour from the hue (registry colours when the hue is the label/mechanism, a sequential map when numeric),
    line style/marker from the ``style`` column or the mechanism's registered style; baselines grey and dashed."""
    mains = [c for c in curves if not meta[c]["_base"]]
    mech = {c: meta[c].get("mechanism") for c in curves}
    hue_values = list(dict.fromkeys(meta[c]["_hue"] for c in mains))
    by_name = hue in ("label", "mechanism")
    if by_name:
        named = label_styles(hue_values, [next(mech[c] for c in mains if meta[c]["_hue"] == v) for v in hue_values])
        colour_of = {v: named[v]["color"] for v in hue_values}
    elif hue_values and all(
        isinstance(v, (int, float, np.number)) and not isinstance(v, bool) for v in hue_values if not pd.isna(v)
    ):
        colour_of = sequential_colours(hue_values)
    else:
        cycle = matplotlib.rcParams["axes.prop_cycle"].by_key().get("color", ["C0"])
        colour_of = {v: cycle[i % len(cycle)] for i, v in enumerate(hue_values)}
    label_named = label_styles([meta[c].get("label") for c in mains], [mech[c] for c in mains]) if mains else {}
    style_of = {}
    if style:
        values = list(dict.fromkeys(meta[c][style] for c in mains))
        style_of = style_map(
            values,
            [next(mech[c] for c in mains if meta[c][style] == v) for v in values],
            by_label=style in ("label", "mechanism"),
        )
    out: dict[tuple, dict[str, Any]] = {}
    greys = iter(BASELINE_GREYS * 4)
    base_colour: dict[Any, Any] = {}
    base_style = baseline_linestyles()
    taken = {str(v) for v in colour_of.values()}
    for c in curves:
        rec = meta[c]
        if rec["_base"]:
            reg = mechanism_style(mech[c]) if mech[c] else {}
            if not pd.isna(rec["_hue"]) and rec["_hue"] in colour_of:
                colour = colour_of[rec["_hue"]]
            elif rec.get("label") in base_colour:
                colour = base_colour[rec.get("label")]
            else:  # the registered colour unless a curve or another baseline has it; else the next grey
                colour = reg.get("color")
                while colour is None or str(colour) in taken:
                    colour = next(greys)
                taken.add(str(colour))
                base_colour[rec.get("label")] = colour
            out[c] = {"color": colour, "marker": "", "linestyle": base_style(rec.get("label"), reg.get("linestyle"))}
            continue
        named = label_named.get(rec.get("label"), {})
        entry = {
            "color": colour_of.get(rec["_hue"], "grey"),
            "marker": named.get("marker", "o"),
            "linestyle": named.get("linestyle", "-"),
        }
        if style:
            entry.update(style_of[rec[style]])
        out[c] = entry
    distinct_pairs(out, mains)
    return out
