"""Figures of a run: metric vs ε (or any numeric coordinate), one panel per dataset, 95% bands (spec 004 §1.4, §5.1).

Style follows the IHM paper's code: log-x ε, linear y with a scientific offset, markers, grid, mean ± 1.96·std/√R
(std with ddof=0) as a shaded band (alpha 0.2), one legend shared by the whole figure. Mechanism colours/markers
come from the registry (``MechanismInfo.style``); anything else gets the default colour cycle.

``build_figure`` returns the :class:`~matplotlib.figure.Figure` (for tests and notebooks); ``plot_run`` draws it
and writes ``figure_<metric>.png`` / ``.pdf`` next to ``trials.csv``. Figures are created without pyplot (no
global state, no display needed); PNG goes through the Agg renderer.
"""

from __future__ import annotations

import math
import re
import textwrap
import warnings
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import matplotlib
import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from dpbench.results import EXCESS_NAMES, Run, aggregate, load_run, metric_values, reference_lines

#: options ``plot_run`` understands (the config's ``plot:`` mapping may set any of them but ``metrics``)
PLOT_OPTIONS = ("metric", "x", "hue", "panel", "logy", "refs", "logx", "title", "caption", "ncols", "annotate")
#: point annotations ``annotate:`` may name
ANNOTATIONS = ("ihm_clipping",)
DPI = 150
PANEL_SIZE = (4.4, 3.3)  # inches per panel
FALLBACK_MARKERS = ("o", "s", "^", "v", "D", "P", "X", "*", "<", ">")
REF_STYLE = {"OLS (non-private)": ":", "θ = 0": "-."}
#: readable axis names for common coordinates
AXIS_NAMES = {
    "epsilon": "ε",
    "delta": "δ",
    "n": "n (training rows)",
    "d": "d (features)",
    "seconds": "seconds per fit",
    "trial": "trial",
}
_STYLE_CACHE: dict[str, dict[str, Any]] = {}


def axis_name(column: str) -> str:
    """Readable label of a coordinate: ``epsilon`` → ε, ``data.n`` → n, ``hp.T`` → T (hyperparameter)."""
    if column in AXIS_NAMES:
        return AXIS_NAMES[column]
    if column.startswith("data."):
        return column[5:]
    if column.startswith("hp."):
        return f"{column[3:]} (hyperparameter)"
    if column.startswith("info."):
        return column[5:]
    return column


def metric_name(metric: str) -> str:
    """Axis label of a metric from :data:`dpbench.metrics.LABELS` (the metric name if unknown)."""
    try:
        from dpbench import registry
        from dpbench.metrics import LABELS

        registry.discover()  # loader/mechanism modules register their own metrics (and labels)
    except Exception:  # noqa: BLE001 - plotting must not depend on every module importing cleanly
        LABELS = {}
    if metric in EXCESS_NAMES:
        return LABELS.get("excess_train_mse", "Excess train MSE (vs OLS)")
    return LABELS.get(metric, axis_name(metric))


def _short(name: str, value: Any) -> str:
    if name == "label":
        return str(value)
    if isinstance(value, (float, np.floating)):
        value = f"{value:.4g}"
    return f"{axis_name(name).split(' (')[0]}={value}"


def _mechanism_style(name: str) -> dict[str, Any]:
    """Registry style hints of mechanism ``name``; ``{}`` if it (or the registry) cannot be loaded."""
    if name not in _STYLE_CACHE:
        try:
            from dpbench import registry

            _STYLE_CACHE[name] = dict(registry.get_mechanism(name).style)
        except Exception:  # noqa: BLE001 - plotting must not depend on every mechanism importing cleanly
            _STYLE_CACHE[name] = {}
    return _STYLE_CACHE[name]


def _ordered(values: pd.Series, preferred: list[str] | None = None) -> list[Any]:
    """Unique values: ``preferred`` order first, else ascending for numbers, else order of appearance."""
    unique = list(pd.unique(values))
    if preferred is not None:
        known = [v for v in preferred if v in unique]
        return known + [v for v in unique if v not in known]
    if pd.api.types.is_numeric_dtype(values):
        return sorted(unique, key=lambda v: (pd.isna(v), v))
    return unique


def _split_columns(trials: pd.DataFrame, keys: list[str], x: str) -> list[str]:
    """Columns that vary inside the (keys, x) groups and must split curves instead of being averaged over."""
    candidates = ["label", "epsilon", *[c for c in trials.columns if c.startswith(("data.", "hp."))]]
    extras: list[str] = []
    for column in candidates:
        if column not in trials or column in (*keys, x, *extras):
            continue
        varies = trials.groupby([*keys, *extras, x], dropna=False)[column].nunique(dropna=False).gt(1).any()
        if varies:
            extras.append(column)
    return extras


def _panel_title(run: Run, trials: pd.DataFrame, panel: str, value: Any) -> str:
    title = str(value) if panel in ("dataset", "dataset_id") else _short(panel, value)
    sub = trials[trials[panel] == value] if not pd.isna(value) else trials[trials[panel].isna()]
    sizes = []
    for column in ("n", "d"):
        if column in sub:
            vals = sorted(pd.unique(sub[column].dropna()))
            if len(vals) == 1:
                sizes.append(f"{column}={int(vals[0]):,}")
            elif vals:
                sizes.append(f"{column}={int(vals[0]):,}–{int(vals[-1]):,}")
    title = "\n".join(textwrap.wrap(title, 42)) or str(value)
    return f"{title}\n({', '.join(sizes)})" if sizes else title


def _assign_styles(legend: list[str], mechanisms: list[str | None]) -> dict[str, dict]:
    colors = matplotlib.rcParams["axes.prop_cycle"].by_key().get("color", ["C0"])
    styles: dict[str, dict] = {}
    used_colors: set[str] = set()
    used_markers: set[str] = set()
    cycle = iter(range(10**6))
    for name, mech in zip(legend, mechanisms, strict=True):
        if name in styles:
            continue
        base = _mechanism_style(mech) if mech else {}
        color = base.get("color")
        if color is None or color in used_colors:
            free = [c for c in colors if c not in used_colors]
            color = free[0] if free else colors[next(cycle) % len(colors)]
        marker = base.get("marker")
        if marker is None or (marker in used_markers and base.get("color") in used_colors):
            free = [m for m in FALLBACK_MARKERS if m not in used_markers]
            marker = free[0] if free else FALLBACK_MARKERS[len(styles) % len(FALLBACK_MARKERS)]
        used_colors.add(color)
        used_markers.add(marker)
        styles[name] = {"color": color, "marker": marker or "", "linestyle": base.get("linestyle", "-")}
    return styles


def _legend_columns(labels: list[str], width_in: float) -> int:
    entry = max((0.075 * len(s) + 0.7 for s in labels), default=1.0)
    return max(1, min(len(labels), int(width_in // entry)))


def _bottom_lines(text: str, width_in: float, fontsize: float) -> list[str]:
    chars = max(30, int(width_in * 72 / (0.55 * fontsize)))
    return [line for para in text.splitlines() for line in (textwrap.wrap(para, chars) or [""])]


def preprocessing_notes(run: Run) -> list[str]:
    """A note naming the datasets whose preprocessing was declared as data-dependent (``bounds: benchmark``)."""
    benchmark = [ident for ident, info in run.datasets.items()
                 if isinstance(info, dict) and (info.get("meta") or {}).get("bounds") == "benchmark"]
    if not benchmark:
        return []
    return ["Benchmark bounds (data-dependent normalisation, NOT private): " + ", ".join(benchmark) + "."]


def build_figure(
    run: Run | str | Path,
    metric: str = "train_mse",
    x: str = "epsilon",
    hue: str = "label",
    panel: str = "dataset",
    logy: bool = False,
    refs: bool = True,
    logx: bool | None = None,
    title: str | None = None,
    caption: str | None = None,
    ncols: int | None = None,
    annotate: str | None = None,
) -> Figure:
    """Draw ``metric`` vs ``x`` with one curve per ``hue`` value and one panel per ``panel`` value.

    ``panel="dataset"`` means one panel per concrete dataset (``dataset_id``) unless ``x`` is a dataset option
    (``data.n``...), in which case datasets sharing a label share a panel. Columns that vary inside a curve and
    are not ``x`` (ε when x is not ε, a swept dataset option, a hyperparameter when hue is not the label) split
    the curve rather than being averaged over. ``title``/``caption`` default to the config's (``""`` hides them).
    """
    run = run if isinstance(run, Run) else load_run(run)
    if annotate is not None and annotate not in ANNOTATIONS:
        raise ValueError(f"annotate={annotate!r} is not known; known: {', '.join(ANNOTATIONS)}")
    trials = run.trials.copy()
    for option, column in (("x", x), ("hue", hue), ("panel", panel)):
        if column not in trials:
            raise ValueError(f"{option}={column!r} is not a column of {run.path / 'trials.csv'}; "
                             f"columns: {', '.join(trials.columns)}")
    if not pd.api.types.is_numeric_dtype(trials[x]):
        raise ValueError(f"x={x!r} must be a numeric column")
    if len({x, hue, panel}) < 3:
        raise ValueError(f"x, hue and panel must be different columns (got {x!r}, {hue!r}, {panel!r})")
    trials["_value"] = metric_values(trials, metric, run.datasets).to_numpy()
    nan_count = int(trials["_value"].isna().sum())
    if nan_count:
        warnings.warn(f"{run.path.name}: {nan_count} of {len(trials)} trials have a NaN {metric}; ignored",
                      RuntimeWarning, stacklevel=2)

    panel_col = panel
    if panel == "dataset" and "dataset_id" in trials and not x.startswith("data."):
        panel_col = "dataset_id"
    extras = _split_columns(trials, [panel_col, hue], x)
    keys = [panel_col, hue, *extras]
    agg = aggregate(trials, "_value", x=x, by=keys)

    panels = _ordered(trials[panel_col], None if pd.api.types.is_numeric_dtype(trials[panel_col]) else
                      list(pd.unique(trials[panel_col])))
    hue_order = _ordered(trials[hue], run.label_order() if hue == "label" else None)
    hue_rank = {v: i for i, v in enumerate(hue_order)}
    curve_keys = agg[[hue, *extras]].drop_duplicates()
    curve_keys = curve_keys.assign(_rank=curve_keys[hue].map(hue_rank)).sort_values(
        ["_rank", *extras], kind="stable").drop(columns="_rank")
    curves = [tuple(row) for row in curve_keys.itertuples(index=False, name=None)]
    legend_of = {c: ", ".join([_short(hue, c[0]) if hue != "label" else str(c[0]),
                               *(_short(e, v) for e, v in zip(extras, c[1:], strict=True))]) for c in curves}
    label_to_mech = (trials.groupby("label")["mechanism"].first().to_dict()
                     if {"label", "mechanism"} <= set(trials.columns) else {})
    mech_of = []
    for c in curves:
        label = c[0] if hue == "label" else (c[1 + extras.index("label")] if "label" in extras else None)
        mech_of.append(label_to_mech.get(label) if label is not None else None)
    styles = _assign_styles([legend_of[c] for c in curves], mech_of)

    # layout (inches → figure fractions, so text never overlaps whatever the panel count)
    n_panels = max(1, len(panels))
    ncols = max(1, min(int(ncols or min(4, n_panels)), n_panels))
    nrows = math.ceil(n_panels / ncols)
    title = (run.title or run.name) if title is None else title
    caption = run.caption if caption is None else caption
    fig_w = max(6.4, ncols * PANEL_SIZE[0] + 0.6)
    draw_refs = refs and (metric == "train_mse" or (metric in EXCESS_NAMES and not logy))
    legend_labels = [legend_of[c] for c in curves]
    if draw_refs:
        legend_labels += list(REF_STYLE)
    leg_cols = _legend_columns(legend_labels, fig_w - 0.4)
    leg_rows = math.ceil(len(legend_labels) / leg_cols) if legend_labels else 0
    notes = []
    if run.skipped:
        notes.append("Skipped (data unavailable): " + "; ".join(
            f"{k} ({_skip_reason(v)})" for k, v in run.skipped.items()))
    if nan_count:
        notes.append(f"{nan_count} trial(s) with NaN {metric} ignored.")
    notes += preprocessing_notes(run)
    caption_lines = _bottom_lines(caption, fig_w - 0.4, 9) if caption else []
    note_lines = _bottom_lines("\n".join(notes), fig_w - 0.4, 8) if notes else []
    top_in = 0.15 + (0.45 if title else 0) + 0.27 * leg_rows
    bottom_in = 0.65 + 0.17 * len(caption_lines) + 0.16 * len(note_lines) + (0.1 if caption_lines or note_lines else 0)
    row_h = PANEL_SIZE[1] + 0.65  # panel + its two-line title
    fig_h = top_in + nrows * row_h + bottom_in
    fig = Figure(figsize=(fig_w, fig_h), dpi=DPI)
    fig.subplots_adjust(left=1.05 / fig_w, right=1 - 0.25 / fig_w, top=1 - (top_in + 0.55) / fig_h,
                        bottom=bottom_in / fig_h, wspace=0.32, hspace=0.65 / (PANEL_SIZE[1] - 0.1) + 0.12)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for extra in axes.flat[len(panels):]:
        fig.delaxes(extra)

    use_logx = logx if logx is not None else (
        x == "epsilon" or bool((agg[x] > 0).all() and len(agg) and agg[x].max() / agg[x].min() >= 50))
    handles: dict[str, Any] = {}
    for index, value in enumerate(panels):
        ax = axes.flat[index]
        sub = agg[agg[panel_col] == value]
        if logy:  # drop non-positive and numerically-zero means (e.g. a non-private OLS curve of an excess metric)
            top = sub["mean"].max() if len(sub) else 0.0
            sub = sub[sub["mean"] > (top * 1e-10 if np.isfinite(top) and top > 0 else 0.0)]
        drawn = 0
        for curve in curves:
            mask = (sub[hue] == curve[0])
            for column, v in zip(extras, curve[1:], strict=True):
                mask &= sub[column].isna() if pd.isna(v) else (sub[column] == v)
            points = sub[mask].sort_values(x)
            if use_logx:
                points = points[points[x] > 0]
            if points.empty:
                continue
            style = styles[legend_of[curve]]
            xs, mean = points[x].to_numpy(float), points["mean"].to_numpy(float)
            lo, hi = points["lo"].to_numpy(float), points["hi"].to_numpy(float)
            if logy:
                lo = np.where(lo > 0, lo, mean / 10)
            (line,) = ax.plot(xs, mean, color=style["color"], marker=style["marker"], linestyle=style["linestyle"],
                              markersize=6, linewidth=1.5, label=legend_of[curve])
            if len(xs) > 1:
                ax.fill_between(xs, lo, hi, color=style["color"], alpha=0.2, linewidth=0)
            else:
                ax.errorbar(xs, mean, yerr=[mean - lo, hi - mean], color=style["color"], capsize=3, linestyle="")
            handles.setdefault(legend_of[curve], line)
            drawn += 1
            if annotate == "ihm_clipping" and mech_of[curves.index(curve)] == "ihm":
                curve_trials = trials[(trials[panel_col] == value) & (trials[hue] == curve[0])]
                _annotate_ihm_clipping(ax, curve_trials, run.dataset_info(str(value)), x, points)
        if use_logx:
            ax.set_xscale("log")
        if logy:
            ax.set_yscale("log")
        if drawn and draw_refs and panel_col in ("dataset", "dataset_id"):
            _draw_refs(ax, run, str(value), metric, logy, handles)
        if not drawn:
            ax.text(0.5, 0.5, "no finite values", transform=ax.transAxes, ha="center", va="center", color="grey")
        if not logy and drawn:
            ax.ticklabel_format(axis="y", style="sci", scilimits=(-1, 1), useMathText=True)
        ax.grid(True, which="major", alpha=0.4)
        ax.set_title(_panel_title(run, trials, panel_col, value), fontsize=9.5)
        row, col = divmod(index, ncols)
        if col == 0:
            ax.set_ylabel(metric_name(metric))
        if index + ncols >= len(panels):  # nothing below it
            ax.set_xlabel(axis_name(x))

    if title:
        fig.suptitle(title, y=1 - 0.15 / fig_h, va="top", fontsize=12)
    if handles:
        order = [lab for lab in legend_labels if lab in handles]
        fig.legend([handles[lab] for lab in order], order, loc="upper center", ncol=leg_cols, fontsize=8.5,
                   frameon=False, bbox_to_anchor=(0.5, 1 - (0.15 + (0.45 if title else 0)) / fig_h))
    y = 0.1
    for line in reversed(note_lines):
        fig.text(0.5, y / fig_h, line, ha="center", va="bottom", fontsize=8, color="darkred")
        y += 0.16
    for line in reversed(caption_lines):
        fig.text(0.5, y / fig_h, line, ha="center", va="bottom", fontsize=9, style="italic")
        y += 0.17
    return fig


def _draw_refs(ax, run: Run, dataset: str, metric: str, logy: bool, handles: dict[str, Any]) -> None:
    """Reference lines (grey); a reference far outside the data range is noted in the panel, not drawn."""
    try:
        refs = reference_lines(run, dataset, "train_mse" if metric == "train_mse" else metric)
    except KeyError:
        return
    ax.relim()
    ax.autoscale_view()
    lo, hi = ax.get_ylim()
    off = []
    for name, value in refs.items():
        if not np.isfinite(value) or (logy and value <= 0):
            continue
        near = (lo / 10 <= value <= hi * 10) if logy else (lo - (hi - lo) <= value <= hi + (hi - lo))
        if not near:
            off.append(f"{name}: {value:.3g} (off scale)")
            continue
        line = ax.axhline(value, color="grey", linestyle=REF_STYLE.get(name, "--"), linewidth=1.2, label=name)
        handles.setdefault(name, line)
        if logy:
            lo, hi = min(lo, value / 1.3), max(hi, value * 1.3)
        else:
            pad = 0.04 * (hi - lo)
            lo, hi = min(lo, value - pad), max(hi, value + pad)
    ax.set_ylim(lo, hi)
    if off:
        ax.text(0.98, 0.98, "\n".join(off), transform=ax.transAxes, ha="right", va="top", fontsize=7, color="grey")


def _skip_reason(reason: str) -> str:
    """Short form of a skip reason: the missing file relative to the data folder, without the explanation."""
    reason = re.sub(r"^data unavailable:\s*", "", str(reason)).split(" (")[0]
    reason = re.sub(r"^.*?/datasets/", "datasets/", reason)
    return textwrap.shorten(reason, 80, placeholder="…")


def _annotate_ihm_clipping(ax, trials: pd.DataFrame, info: Mapping[str, Any], x: str, points: pd.DataFrame) -> None:
    """IHM paper Fig. 7 annotations (004 §5.5): "χ√κ_X/(2−χ): v, clip: p%" at each IHM point.

    v = √((λ^X_max + β²)/(λ^X_min + β²))/(2√6 + 1) with β² = max{0, γ_IHM − λ^X_min} (the notebook's constant),
    p = share of IHM iterations t ≥ 1 in which clipping changed the residual (mean of ``info.clip_fraction``).
    """
    if not {"info.gamma", "info.clip_fraction"} <= set(trials.columns) or not info:
        return
    lam_min, lam_max = max(float(info["lam_min_x"]), 0.0), float(info["lam_max_x"])
    per_x = trials.groupby(x)[["info.gamma", "info.clip_fraction"]].mean()
    last = points[x].max()
    for xv, mean in zip(points[x], points["mean"], strict=True):
        if xv not in per_x.index:
            continue
        beta_sq = max(0.0, per_x.at[xv, "info.gamma"] - lam_min)
        v = math.sqrt((lam_max + beta_sq) / (lam_min + beta_sq)) / (2 * math.sqrt(6) + 1)
        clip = 100 * per_x.at[xv, "info.clip_fraction"]
        right_edge = xv == last  # keep the last label inside the axes
        ax.annotate(f"χ√κ/(2−χ): {v:.2f}\nclip: {clip:.0f}%", (xv, mean), textcoords="offset points",
                    xytext=(0, 8), ha="right" if right_edge else "center", va="bottom", fontsize=6.5,
                    color="darkgreen", bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.7})


def figure_stem(metric: str, x: str = "epsilon") -> str:
    safe = "".join(ch if ch.isalnum() or ch in "._-" else "_" for ch in metric)
    return f"figure_{safe}" if x == "epsilon" else f"figure_{safe}_vs_{''.join(c if c.isalnum() else '_' for c in x)}"


def plot_run(
    run_dir: str | Path,
    metric: str = "train_mse",
    x: str = "epsilon",
    hue: str = "label",
    panel: str = "dataset",
    logy: bool = False,
    refs: bool = True,
    logx: bool | None = None,
    title: str | None = None,
    caption: str | None = None,
    ncols: int | None = None,
    annotate: str | None = None,
    **unknown: Any,
) -> list[Path]:
    """Draw a run's figure and write ``figure_<metric>.png`` (dpi 150) and ``.pdf`` in the run folder.

    A non-ε ``x`` adds ``_vs_<x>`` to the file name. Unknown options raise :class:`ValueError`.
    """
    if unknown:
        raise ValueError(f"unknown plot option(s) {', '.join(sorted(unknown))}; known: {', '.join(PLOT_OPTIONS)}")
    run = load_run(run_dir)
    fig = build_figure(run, metric=metric, x=x, hue=hue, panel=panel, logy=logy, refs=refs, logx=logx,
                       title=title, caption=caption, ncols=ncols, annotate=annotate)
    stem = run.path / figure_stem(metric, x)
    written = []
    for suffix in (".png", ".pdf"):
        path = stem.with_suffix(suffix)
        fig.savefig(path, dpi=DPI)
        written.append(path)
    return written


def plot_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """Keep the options ``plot_run`` knows; raise on any other (used to validate a config's ``plot:``)."""
    unknown = set(options) - set(PLOT_OPTIONS) - {"metrics"}
    if unknown:
        raise ValueError(f"unknown plot option(s) {', '.join(sorted(unknown))}; known: {', '.join(PLOT_OPTIONS)}")
    return {k: v for k, v in options.items() if k != "metrics"}


__all__ = ["build_figure", "plot_run", "plot_options", "axis_name", "metric_name", "figure_stem"]
