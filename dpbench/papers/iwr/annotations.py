"""Plot annotations of information-weighted regression (spec 000), drawn by ``dpbench plot`` when a preset says
``annotate: NAME``."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pandas as pd

from dpbench import registry


@registry.register_annotation(
    "iwr_zero_level", summary="spec 000: the θ̂ = 0 reference drawn above every curve and labelled with its value"
)
def iwr_zero_level(ax, trials: pd.DataFrame, info: Mapping[str, Any], x: str, points: pd.DataFrame) -> None:
    """Redraw the θ̂ = 0 curve (mechanism ``zero``) on top of the others, thicker, and write "θ̂ = 0: value"
    under its left end (under: the line is often the top of the axes), so that mechanisms whose error equals
    θ̂ = 0's (they output ≈ 0) do not hide it."""
    if set(trials.get("mechanism", [])) not in ({"zero"}, {"iw_zero"}) or points.empty:
        return
    pts = points.sort_values(x)
    ax.plot(pts[x], pts["centre"], color="dimgray", linestyle="-.", linewidth=2.2, zorder=6, label="_nolegend_")
    first = pts.iloc[0]
    ax.annotate(
        f"θ̂ = 0: {first['centre']:.2g}",
        (first[x], first["centre"]),
        textcoords="offset points",
        xytext=(3, -4),
        ha="left",
        va="top",
        fontsize=7,
        color="dimgray",
        zorder=7,
        bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.8},
    )


registry.register_alias("iw_zero_level", "iwr_zero_level", what="annotation")  # its name before the `iwr` prefix
