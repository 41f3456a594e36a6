"""Slopes on a figure: a curve's fitted log–log slope with its 95% CI (:func:`dpbench.analysis.stats.fit_slopes`),
drawn as a thin dashed line; reference power laws through a curve's first point; the text of a slopes table."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd

from dpbench.analysis.figures.text import value_text
from dpbench.analysis.stats import fit_slopes, format_table


def fit_curve(
    ax, pts: pd.DataFrame, x: str, fit_min: float | None, fit_max: float | None, legend: str, colour: Any, draw: bool
) -> tuple[dict[str, Any], Any]:
    """The slope fit of one curve's points (a row of the slopes table) and, with ``draw``, its drawn line."""
    fit = fit_slopes(pts, x, [], fit_min, fit_max).iloc[0].to_dict()
    if not (draw and np.isfinite(fit["slope"])):
        return fit, None
    fx = np.geomspace(fit["x_min"], fit["x_max"], 20)
    (line,) = ax.plot(
        fx,
        np.exp(fit["intercept"]) * fx ** fit["slope"],
        color=colour,
        linestyle=(0, (6, 3)),
        linewidth=1.0,
        alpha=0.6,
        label=f"{legend}: {fit['slope']:+.2f} [{fit['lo']:+.2f}, {fit['hi']:+.2f}]",
    )
    return fit, line


def draw_ref_slope(ax, pts: pd.DataFrame, x: str, ref: Mapping[str, Any], handles: dict[str, Any]) -> None:
    """A reference power law y ∝ x^slope (grey dotted) through a curve's first point, over the curve's x range."""
    xs, centre = pts[x].to_numpy(float), pts["centre"].to_numpy(float)
    ok = np.isfinite(xs) & np.isfinite(centre) & (xs > 0) & (centre > 0)
    if ok.sum() < 2:
        return
    xs, centre = xs[ok], centre[ok]
    fx = np.geomspace(xs[0], xs[-1], 20)
    label = ref["label"] or f"slope {ref['slope']:+g}"
    (line,) = ax.plot(
        fx, centre[0] * (fx / xs[0]) ** ref["slope"], color="grey", linestyle=(0, (1, 1.5)), linewidth=1.2, label=label
    )
    handles.setdefault(label, line)


def slope_table_text(slopes: pd.DataFrame) -> str:
    """Fixed-width text of a slopes table (``dpbench plot`` prints it)."""
    shown = slopes.copy()
    for column in ("slope", "lo", "hi"):
        shown[column] = [f"{v:+.3f}" if np.isfinite(v) else "nan" for v in shown[column]]
    for column in ("x_min", "x_max"):
        shown[column] = [value_text(v) for v in shown[column]]
    shown["points"] = shown["points"].astype(int)
    return format_table(shown.rename(columns={"lo": "95% lo", "hi": "95% hi"}))
