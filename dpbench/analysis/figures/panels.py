"""The panels figure: a grid of panels of the median of a metric vs a coordinate, each with a bootstrap 95% band
(:func:`dpbench.analysis.stats.median_ci`), whose curves are styled per *label* (several entries of one mechanism
with different hyperparameters get distinct colours). The control experiments' figures (issue 17) use it.

The frame every grid figure of the controls shares — panels, a wrapped italic caption at the foot, a figure legend
at the right, a title — is :func:`panel_grid` + :func:`finish_grid`."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pandas as pd

from dpbench.analysis.stats import median_ci

#: a caption line: about 13 characters per inch of figure width (7-pt italic), 0.16 inch high
CAPTION_CHARS_PER_INCH = 13
CAPTION_LINE_INCHES = 0.16
#: inches kept free above the panels for the title
TITLE_INCHES = 0.45


@dataclass
class PanelGrid:
    """A figure of panels with room for its wrapped caption (:func:`panel_grid`)."""

    fig: Any
    axes: np.ndarray
    width: float
    height: float
    caption: list[str]


def panel_grid(nrows: int, ncols: int, width: float, panels_height: float, caption: str) -> PanelGrid:
    """``nrows`` × ``ncols`` axes on a figure ``width`` inches wide (130 dpi) and ``panels_height`` inches tall plus
    :data:`CAPTION_LINE_INCHES` per line of ``caption`` wrapped to the width."""
    from matplotlib.figure import Figure

    lines = textwrap.wrap(caption, int(width * CAPTION_CHARS_PER_INCH)) if caption else []
    height = panels_height + CAPTION_LINE_INCHES * len(lines)
    fig = Figure(figsize=(width, height), dpi=130)
    return PanelGrid(fig, fig.subplots(nrows, ncols, squeeze=False), width, height, lines)


def finish_grid(
    grid: PanelGrid,
    *,
    title: str = "",
    legend: Mapping[str, Any] | None = None,
    legend_inches: float = 0.0,
    foot_inches: float = 0.5,
):
    """Lay out a :func:`panel_grid` figure: the figure legend of ``legend`` (name → handle) at the right, in
    ``legend_inches`` kept free; ``title`` on top; the caption at the bottom left, with ``foot_inches`` kept free
    above it for the axis labels. Returns the figure."""
    fig = grid.fig
    if legend is not None:
        fig.legend(list(legend.values()), list(legend.keys()), loc="center right", fontsize=7, frameon=False)
    if title:
        fig.suptitle(title, fontsize=10)
    if grid.caption:
        fig.text(0.01, 0.01, "\n".join(grid.caption), ha="left", va="bottom", fontsize=7, style="italic")
    bottom = (CAPTION_LINE_INCHES * len(grid.caption) + foot_inches) / grid.height
    fig.tight_layout(rect=(0, bottom, 1 - legend_inches / grid.width, 1 - TITLE_INCHES / grid.height))
    return fig


def median_panels(
    trials: pd.DataFrame,
    metric: str,
    x: str,
    *,
    rows: str,
    cols: str,
    labels: Sequence[str] | None = None,
    reference_labels: Sequence[str] = (),
    title: str = "",
    caption: str = "",
    xlabel: str | None = None,
    ylabel: str | None = None,
    logx: bool = True,
    logy: bool = True,
    linestyle_by: str | None = None,
    seed: int = 0,
    wrap: int = 3,
):
    """Grid of panels (``rows`` × ``cols`` columns of ``trials``) of the median of ``metric`` vs ``x`` with a
    bootstrap 95% band, one colour per label (``labels`` order); ``reference_labels`` drawn grey/black without band;
    ``linestyle_by`` splits a label's curve by another column (e.g. ε). With a single ``rows`` value the ``cols``
    panels wrap after ``wrap`` columns. Returns a matplotlib Figure."""
    from matplotlib.ticker import NullFormatter

    rng = np.random.default_rng(seed)
    labels = list(labels) if labels is not None else list(dict.fromkeys(trials["label"]))
    row_values = list(dict.fromkeys(trials[rows]))
    col_values = sorted(dict.fromkeys(trials[cols]))
    ls_values = sorted(dict.fromkeys(trials[linestyle_by])) if linestyle_by else [None]
    linestyles = ("-", "--", ":", "-.")
    markers = ("o", "s", "^", "v", "D", "P", "X", "*")
    cells = [(rv, cv) for rv in row_values for cv in col_values]
    if len(row_values) == 1 and len(col_values) > wrap:
        ncols = wrap
        nrows = math.ceil(len(col_values) / wrap)
    else:
        nrows, ncols = len(row_values), len(col_values)
    panels = panel_grid(nrows, ncols, 3.9 * ncols + 2.6, 3.0 * nrows + 0.9, caption)
    fig, axes = panels.fig, panels.axes
    drawn = [lab for lab in labels if lab not in reference_labels]
    colours = {label: f"C{i % 10}" for i, label in enumerate(drawn)}
    marker_of = {label: markers[i % len(markers)] for i, label in enumerate(drawn)}
    ref_colours = {label: ("black", "grey", "dimgray")[i % 3] for i, label in enumerate(reference_labels)}
    handles: dict[str, object] = {}
    for k, (rv, cv) in enumerate(cells):
        r, c = divmod(k, ncols)
        ax = axes[r, c]
        cell = trials[(trials[rows] == rv) & (trials[cols] == cv)]
        for label in labels:
            part = cell[cell["label"] == label]
            for j, lv in enumerate(ls_values):
                sub = part if lv is None else part[part[linestyle_by] == lv]
                if sub.empty:
                    continue
                stats = [(xv, *median_ci(g[metric], rng)) for xv, g in sub.groupby(x)]
                xs, med, lo, hi = (np.array(t, dtype=float) for t in zip(*stats, strict=True))
                ref = label in reference_labels
                colour = ref_colours.get(label) if ref else colours[label]
                style = (
                    ("--", ":", "-.")[list(reference_labels).index(label) % 3]
                    if ref
                    else linestyles[j % len(linestyles)]
                )
                name = label if lv is None or ref else f"{label}, {linestyle_by.split('.')[-1]} = {lv:g}"
                (line,) = ax.plot(
                    xs,
                    med,
                    color=colour,
                    linestyle=style,
                    marker="" if ref else marker_of[label],
                    markersize=4,
                    linewidth=1.3,
                    markerfacecolor="none",
                )
                if not ref:
                    ax.fill_between(xs, lo, hi, color=colour, alpha=0.15, linewidth=0)
                handles.setdefault(name, line)
                if ref and lv is not None:
                    break  # a reference does not depend on the line-style coordinate
        ax.set_xscale("log" if logx else "linear")
        if logx:
            ax.xaxis.set_minor_formatter(NullFormatter())  # minor labels (3×10², 4×10²) collide
            xvals = np.sort(pd.unique(cell[x].astype(float)))
            if xvals.size and xvals.max() < 20 * xvals.min():  # less than ~a decade: label the grid points
                ax.set_xticks(xvals, [f"{v:g}" for v in xvals])
        ax.set_yscale("log" if logy else "linear")
        ax.grid(True, which="both", alpha=0.3)
        ax.set_title(
            f"{rv}, {cols.split('.')[-1]} = {cv:g}" if isinstance(cv, (int, float)) else f"{rv}, {cv}", fontsize=9
        )
        if k + ncols >= len(cells):
            ax.set_xlabel(xlabel or x)
        if c == 0:
            ax.set_ylabel(ylabel or metric)
    for extra in list(axes.flat)[len(cells) :]:
        fig.delaxes(extra)
    return finish_grid(panels, title=title, legend=handles, legend_inches=2.4, foot_inches=0.55)
