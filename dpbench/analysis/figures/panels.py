"""The panels figure: a grid of panels of the median of a metric vs a coordinate, each with a bootstrap 95% band
(:func:`dpbench.analysis.stats.median_ci`), whose curves are styled per *label* (several entries of one mechanism
with different hyperparameters get distinct colours). The control experiments' figures (issue 17) use it."""

from __future__ import annotations

import math
import textwrap
from collections.abc import Sequence

import numpy as np
import pandas as pd

from dpbench.analysis.stats import median_ci


def median_panels(
    trials: pd.DataFrame, metric: str, x: str, *, rows: str, cols: str, labels: Sequence[str] | None = None,
    reference_labels: Sequence[str] = (), title: str = "", caption: str = "", xlabel: str | None = None,
    ylabel: str | None = None, logx: bool = True, logy: bool = True, linestyle_by: str | None = None,
    seed: int = 0, wrap: int = 3,
):
    """Grid of panels (``rows`` × ``cols`` columns of ``trials``) of the median of ``metric`` vs ``x`` with a
    bootstrap 95% band, one colour per label (``labels`` order); ``reference_labels`` drawn grey/black without band;
    ``linestyle_by`` splits a label's curve by another column (e.g. ε). With a single ``rows`` value the ``cols``
    panels wrap after ``wrap`` columns. Returns a matplotlib Figure."""
    from matplotlib.figure import Figure
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
    width = 3.9 * ncols + 2.6
    cap_lines = textwrap.wrap(caption, int(width * 13)) if caption else []
    height = 3.0 * nrows + 0.9 + 0.16 * len(cap_lines)
    fig = Figure(figsize=(width, height), dpi=130)
    axes = fig.subplots(nrows, ncols, squeeze=False)
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
                style = ("--", ":", "-.")[list(reference_labels).index(label) % 3] if ref else \
                    linestyles[j % len(linestyles)]
                name = label if lv is None or ref else f"{label}, {linestyle_by.split('.')[-1]} = {lv:g}"
                (line,) = ax.plot(xs, med, color=colour, linestyle=style, marker="" if ref else marker_of[label],
                                  markersize=4, linewidth=1.3, markerfacecolor="none")
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
        ax.set_title(f"{rv}, {cols.split('.')[-1]} = {cv:g}" if isinstance(cv, (int, float)) else f"{rv}, {cv}",
                     fontsize=9)
        if k + ncols >= len(cells):
            ax.set_xlabel(xlabel or x)
        if c == 0:
            ax.set_ylabel(ylabel or metric)
    for extra in list(axes.flat)[len(cells):]:
        fig.delaxes(extra)
    fig.legend(list(handles.values()), list(handles.keys()), loc="center right", fontsize=7, frameon=False)
    if title:
        fig.suptitle(title, fontsize=10)
    if cap_lines:
        fig.text(0.01, 0.01, "\n".join(cap_lines), ha="left", va="bottom", fontsize=7, style="italic")
    bottom = (0.16 * len(cap_lines) + 0.55) / height
    fig.tight_layout(rect=(0, bottom, 1 - 2.4 / width, 1 - 0.45 / height))
    return fig
