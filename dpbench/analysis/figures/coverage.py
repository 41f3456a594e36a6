"""The coverage figure (issue 37): a grid of panels of an interval method's coverage against a coordinate (ε or n),
each point with its Clopper–Pearson 95% band and the nominal level as a dashed line — or, with ``nominal=None``,
any positive quantity (e.g. the width relative to the non-private interval) on a log axis.

Drawn from a table with one row per (panel, curve, x): columns ``value``, ``lo``, ``hi`` (the band; NaN draws no
band). The numbers come from :func:`dpbench.analysis.stats.clopper_pearson`; this module only draws.
"""

from __future__ import annotations

import math
from typing import Any

import pandas as pd

from dpbench.analysis.figures.kinds import register_figure_kind
from dpbench.analysis.figures.panels import finish_grid, panel_grid
from dpbench.contract import Hyper

#: marker per curve, cycled (colours from matplotlib's default cycle)
MARKERS = ("o", "s", "^", "D", "v", "P", "X", "*")


def coverage_figure(
    table: pd.DataFrame,
    *,
    x: str = "epsilon",
    panel: str = "panel",
    curve: str = "curve",
    nominal: float | None = 0.95,
    ylabel: str = "coverage",
    title: str = "",
    caption: str = "",
    logx: bool = True,
    ncols: int = 3,
    curves: list[str] | None = None,
) -> Any:
    """One panel per value of ``panel`` (in order of appearance), one curve per value of ``curve``: ``value`` vs
    ``x`` with error bars [lo, hi]; a dashed line at ``nominal`` (coverage) or a log y axis (``nominal=None``).
    ``curves`` fixes the colour and marker order (the same curve looks the same in several figures)."""
    from matplotlib import colormaps

    panels = list(dict.fromkeys(table[panel]))
    curves = list(dict.fromkeys(table[curve])) if curves is None else list(curves)
    colours = colormaps["tab10"].colors
    ncols = max(1, min(ncols, len(panels)))
    nrows = math.ceil(len(panels) / ncols)
    grid = panel_grid(nrows, ncols, 3.4 * ncols + 1.8, 2.6 * nrows + 0.9, caption)
    handles: dict[str, Any] = {}
    for index, name in enumerate(panels):
        ax = grid.axes.flat[index]
        part = table[table[panel] == name]
        for k, label in enumerate(curves):
            rows = part[part[curve] == label].sort_values(x)
            if rows.empty:
                continue
            err = [(rows["value"] - rows["lo"]).clip(lower=0), (rows["hi"] - rows["value"]).clip(lower=0)]
            handle = ax.errorbar(rows[x], rows["value"], yerr=err, color=colours[k % len(colours)],
                                 marker=MARKERS[k % len(MARKERS)], ms=4, lw=1.2, capsize=2)  # fmt: skip
            handles[str(label)] = handle
        if nominal is not None:
            handles[f"nominal {nominal:g}"] = ax.axhline(nominal, color="grey", ls="--", lw=1)
            ax.set_ylim(-0.03, 1.03)
        else:
            ax.set_yscale("log")
            handles["non-private (= 1)"] = ax.axhline(1.0, color="grey", ls=":", lw=1)
        if logx:
            ax.set_xscale("log")
        ax.set_title(str(name), fontsize=9)
        ax.set_xlabel("ε" if x == "epsilon" else x)
        ax.set_ylabel(ylabel)
        ax.grid(alpha=0.3)
    for ax in list(grid.axes.flat)[len(panels) :]:
        ax.set_visible(False)
    return finish_grid(grid, title=title, legend=handles, legend_inches=1.8)


#: the coverage kind's options: ``coverage_figure``'s keyword parameters, declared (defaults equal, tested)
register_figure_kind(
    "coverage",
    summary="interval coverage (or a positive ratio) per panel and curve with Clopper–Pearson bands",
    reads="a coverage table (panel, curve, x, value, lo, hi; the coverage analysis)",
    options={
        "x": Hyper(str, default="epsilon", doc="the column on x"),
        "panel": Hyper(str, default="panel", doc="the column keying the panels"),
        "curve": Hyper(str, default="curve", doc="the column keying the curves"),
        "nominal": Hyper(
            float, default=0.95, gt=0, lt=1, none="a positive quantity on a log y axis", doc="the nominal level, dashed"
        ),  # fmt: skip
        "ylabel": Hyper(str, default="coverage", doc="y axis label"),
        "title": Hyper(str, default="", doc="figure title"),
        "caption": Hyper(str, default="", doc="figure caption"),
        "logx": Hyper(bool, default=True, doc="log x axis"),
        "ncols": Hyper(int, default=3, ge=1, doc="panels per row"),
        "curves": Hyper(
            object,
            default=None,
            none="their order of appearance",
            doc="the curves' colour and marker order (a curve looks the same in several figures)",
        ),
    },
)(coverage_figure)
