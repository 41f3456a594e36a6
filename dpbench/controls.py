"""Evidence helpers for control experiments (issue 17): percentile-bootstrap intervals for medians, paired ratios and
log–log slopes, and a small median-with-band panel figure whose curves are styled per *label* (several entries of
one mechanism with different hyperparameters get distinct colours).

Pure functions of a trials table (no run folders, no paper knowledge); the per-paper analyses call them.

* :func:`median_ci` — median and percentile-bootstrap 95% CI.
* :func:`paired_ratio_ci` — stat(a)/stat(b) for paired samples (same data draw and noise seed: common random
  numbers), the pairs resampled jointly.
* :func:`loglog_slope_ci` — least-squares slope of log stat(values at x) vs log x with a stratified bootstrap (the
  samples at each x resampled independently), so the interval carries the variability of every point.
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd

RESAMPLES = 2000
Stat = Callable[[np.ndarray], float]


def _finite(values: Sequence[float] | np.ndarray) -> np.ndarray:
    v = np.asarray(values, dtype=float)
    return v[np.isfinite(v)]


def _percentiles(samples: np.ndarray, level: float = 0.95) -> tuple[float, float]:
    samples = samples[np.isfinite(samples)]
    if samples.size == 0:
        return math.nan, math.nan
    tail = (1.0 - level) / 2.0
    return float(np.quantile(samples, tail)), float(np.quantile(samples, 1.0 - tail))


def median_ci(values: Sequence[float] | np.ndarray, rng: np.random.Generator, resamples: int = RESAMPLES
              ) -> tuple[float, float, float]:
    """(median, lo, hi): the median of the finite values and its percentile-bootstrap 95% CI (NaN CI if < 2)."""
    v = _finite(values)
    if v.size == 0:
        return math.nan, math.nan, math.nan
    if v.size < 2:
        return float(v[0]), math.nan, math.nan
    idx = rng.integers(0, v.size, size=(resamples, v.size))
    lo, hi = _percentiles(np.median(v[idx], axis=1))
    return float(np.median(v)), lo, hi


def paired_ratio_ci(a: Sequence[float] | np.ndarray, b: Sequence[float] | np.ndarray, rng: np.random.Generator, *,
                    stat: Stat = np.median, resamples: int = RESAMPLES) -> tuple[float, float, float]:
    """(ratio, lo, hi) of stat(a)/stat(b) for paired samples a_i, b_i; pairs with a non-finite member are dropped."""
    a, b = np.asarray(a, dtype=float), np.asarray(b, dtype=float)
    if a.shape != b.shape:
        raise ValueError(f"paired samples must have the same shape, got {a.shape} and {b.shape}")
    ok = np.isfinite(a) & np.isfinite(b)
    a, b = a[ok], b[ok]
    if a.size == 0:
        return math.nan, math.nan, math.nan
    ratio = float(stat(a) / stat(b))
    if a.size < 2:
        return ratio, math.nan, math.nan
    idx = rng.integers(0, a.size, size=(resamples, a.size))
    boot = np.array([stat(a[i]) / stat(b[i]) for i in idx])
    lo, hi = _percentiles(boot)
    return ratio, lo, hi


def loglog_slope(x: Sequence[float], y: Sequence[float]) -> float:
    """Least-squares slope of log y vs log x (NaN with fewer than 2 positive points)."""
    x, y = np.asarray(x, dtype=float), np.asarray(y, dtype=float)
    ok = (x > 0) & (y > 0) & np.isfinite(y)
    if ok.sum() < 2:
        return math.nan
    return float(np.polyfit(np.log(x[ok]), np.log(y[ok]), 1)[0])


def loglog_slope_ci(groups: dict[float, Sequence[float]], rng: np.random.Generator, *, stat: Stat = np.mean,
                    resamples: int = RESAMPLES) -> tuple[float, float, float]:
    """(slope, lo, hi): slope of log stat(values) vs log x over the keys x of ``groups``, with a stratified
    percentile bootstrap (each x's values resampled independently)."""
    xs = sorted(groups)
    vals = [_finite(groups[x]) for x in xs]
    slope = loglog_slope(xs, [stat(v) if v.size else math.nan for v in vals])
    boot = np.empty(resamples)
    for r in range(resamples):
        boot[r] = loglog_slope(xs, [stat(v[rng.integers(0, v.size, v.size)]) if v.size else math.nan for v in vals])
    lo, hi = _percentiles(boot)
    return slope, lo, hi


def fmt_ci(value: float, lo: float, hi: float, digits: int = 2) -> str:
    """'v [lo, hi]' with ``digits`` significant digits (used in claims tables)."""
    def f(v: float) -> str:
        return "nan" if not math.isfinite(v) else f"{v:.{digits}g}"

    return f"{f(value)} [{f(lo)}, {f(hi)}]"


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


def save_figure(fig, path_stem) -> list[str]:
    """Write ``<stem>.png`` and ``<stem>.pdf`` atomically (:func:`dpbench.plot.save_figure`); returns the paths."""
    from pathlib import Path

    from dpbench import plot

    out = []
    for suffix in (".png", ".pdf"):
        path = f"{path_stem}{suffix}"
        plot.save_figure(fig, Path(path))
        out.append(path)
    return out
