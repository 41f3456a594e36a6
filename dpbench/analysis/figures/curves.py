"""The curves figure — one figure kind that draws every paper's per-trial figures (``dpbench plot``).

A figure is described by a *preset* (the options of :data:`OPTIONS`, the ``curves`` figure kind): any numeric CSV
coordinate on ``x``; curves keyed by ``hue`` (colour) and ``style`` (line style/marker); panels keyed by ``panel`` (and
``row`` for a grid); the point drawn is the ``stat`` (mean | median) of the trials at that coordinate and the band
its 95% ``interval`` (normal | seeded bootstrap | none, see :func:`dpbench.analysis.stats.summarise`); log axes; the
dataset's reference lines, any ``hlines`` and ``ref_slopes`` (power laws through a curve's first point);
``baseline`` rows (e.g. non-private references) drawn as grey dashed curves in every panel they share; ``fit`` adds
a log–log least-squares slope with a 95% CI per curve (a table; with ``fit_draw`` also the fitted lines). A config's
``plot:`` block holds one preset, ``plots:`` several named ones, so
``dpbench plot results/<run>`` redraws every figure of any paper with no paper-specific code.

Columns that vary inside a curve and are not ``x`` (ε when x is not ε, a swept dataset option, a hyperparameter)
split the curve rather than being averaged over, unless listed in ``pool``. Mechanism colours/markers come from
the registry (``MechanismInfo.style``); a numeric hue gets a sequential colour map (ε = ∞ in black).

:func:`render` returns a :class:`Drawing` (figure, points drawn, slopes) for tests and notebooks;
:mod:`dpbench.analysis.figures.presets` writes ``<stem>.png`` / ``.pdf`` (and ``<stem>_slopes.csv``) next to
``trials.csv``. Styles: :mod:`~dpbench.analysis.figures.styles`; fitted and reference slopes:
:mod:`~dpbench.analysis.figures.slopes`. Figures are created without
pyplot (no global state, no display needed).
"""

from __future__ import annotations

import math
import re
import textwrap
import warnings
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from dpbench.analysis.figures.kinds import FIGURE_KINDS, Drawing, register_figure_kind, resolve
from dpbench.analysis.figures.refs import REF_STYLE, REFS_NOTE, draw_reference_lines, few_decade_ticks, refs_note
from dpbench.analysis.figures.save import DPI
from dpbench.analysis.figures.slopes import draw_ref_slope, fit_curve
from dpbench.analysis.figures.styles import curve_styles
from dpbench.analysis.figures.text import axis_name, coordinate_text, metric_axis_label
from dpbench.analysis.notes import dataset_notes
from dpbench.analysis.runs import EXCESS_NAMES, Run, load_run, metric_values
from dpbench.analysis.stats import summarise
from dpbench.config.fields import number, positive_int
from dpbench.config.presets import parse_columns, parse_hlines, parse_ref_slopes, parse_selection, text
from dpbench.contract import Choice, Hyper, HyperError
from dpbench.registry import unknown_name


def _text(default: str | None, doc: str, none: str | None = None) -> Hyper:
    return Hyper(object, default=default, parse=text, shown="a string", none=none, doc=doc)


def _count(minimum: int) -> Any:
    return lambda value, where: positive_int(value, where, minimum=minimum)


def _positive(value: Any, where: str) -> float:
    value = number(value, where)
    if value <= 0:
        raise ValueError(f"must be > 0 (the fit is on log x), got {value!r}")
    return value


#: every option of a curves figure, declared once (name, default, validation, meaning); a config's ``plot:`` may
#: also hold ``metrics`` (one figure each) and ``kind: curves``
OPTIONS: dict[str, Hyper] = {
    "metric": _text("train_mse", "metric column drawn on y (or 'excess' = train MSE − OLS train MSE)"),
    "x": _text("epsilon", "numeric CSV column on the x axis"),
    "hue": _text("label", "column keying the curves' colours"),
    "panel": _text("dataset", "column keying the panels"),
    "row": _text(None, "column keying the rows of a panel grid (panels then go in columns)", "no rows"),
    "style": _text(None, "column keying line style and marker", "each mechanism's registered style"),
    "stat": Choice("mean", "median", default="mean", doc="the point drawn"),
    "interval": Choice("normal", "bootstrap", "none", default="normal",
                       doc="the 95% band (normal: stat ± 1.96·se; bootstrap: seeded percentile)"),
    "resamples": Hyper(object, default=1000, parse=_count(100), shown="an integer ≥ 100", doc="bootstrap resamples"),
    "seed": Hyper(object, default=0, parse=_count(0), shown="an integer ≥ 0",
                  doc="bootstrap seed: the same run always gives the same bands"),
    "logx": Hyper(bool, default=None, none="log when x is ε or spans ≥ 50×", doc="log x axis"),
    "logy": Hyper(bool, default=False, doc="log y axis"),
    "zero_below": Hyper(float, default=1e-10, ge=0.0, lt=1.0,
                        doc="log y: centres ≤ zero_below × the panel's largest are dropped as numerical zeros"),
    "refs": Hyper(bool, default=True, doc="draw the dataset's OLS and θ = 0 lines (train MSE / excess)"),
    "hlines": Hyper(object, default=(), parse=parse_hlines, shown="a list of y or {y, label}",
                    doc="horizontal reference lines: [y, {y: 1.0, label: text}]"),
    "ref_slopes": Hyper(object, default=(), parse=parse_ref_slopes, shown="a list of {slope, label, through}",
                        doc="reference power laws (grey dotted) through the first point of each curve of label "
                        "`through` (of every non-baseline curve without through)"),
    "where": Hyper(object, default=None, parse=parse_selection, shown="{column: value | [values]}", none="all rows",
                   doc="keep only these rows"),
    "pool": Hyper(object, default=(), parse=parse_columns, shown="a list of column names",
                  doc="columns pooled into one point instead of splitting curves (e.g. [data_draw])"),
    "baseline": Hyper(object, default=None, parse=parse_selection, shown="{column: value | [values]}", none="none",
                      doc="rows drawn as grey dashed reference curves in every panel they share"),
    "tag_models": Hyper(bool, default=False,
                        doc="append [central]/[local]/[non-private] to legend entries when privacy models mix"),
    "fit": Hyper(bool, default=False,
                 doc="fit log(stat) = a + b·log(x) per curve; print the slopes b with a 95% CI (<figure>_slopes.csv)"),
    "fit_min": Hyper(object, default=None, parse=_positive, shown="a number > 0", none="no bound",
                     doc="fit on x ≥ fit_min only"),
    "fit_max": Hyper(object, default=None, parse=_positive, shown="a number > 0", none="no bound",
                     doc="fit on x ≤ fit_max only"),
    "fit_draw": Hyper(bool, default=False, doc="also draw the fitted lines and their slopes in the panels"),
    "title": _text(None, "figure title ('' hides it)", "the config's"),
    "caption": _text(None, "figure caption ('' hides it)", "the config's"),
    "ncols": Hyper(object, default=None, parse=_count(1), shown="an integer ≥ 1", none="up to 4",
                   doc="panels per row"),
    "annotate": _text(None, "a registered point annotation (dpbench.registry.register_annotation)", "none"),
    "out": _text(None, "file stem of the figure", "figure_<preset name>, or figure_<metric>[_vs_<x>]"),
}  # fmt: skip
#: option → default
DEFAULTS: dict[str, Any] = {name: spec.default for name, spec in OPTIONS.items()}
PLOT_OPTIONS = tuple(OPTIONS)


def check_fit_range(options: Mapping[str, Any]) -> None:
    """``fit_min < fit_max`` when both are given."""
    lo, hi = options.get("fit_min"), options.get("fit_max")
    if lo is not None and hi is not None and lo >= hi:
        raise HyperError("fit_min", f"must be < fit_max ({hi:g}), got {lo:g}")


PANEL_SIZE = (4.4, 3.3)  # inches per panel
MAX_MARKERS = 12  # markers per curve at most (a curve of 70 checkpoints gets one every ~6 points)
MODEL_TAG = {"central": "central", "local": "local", "label": "label-DP", "joint": "JDP", "none": "non-private"}


def _ordered(values: pd.Series, preferred: list[Any] | None = None) -> list[Any]:
    """Unique values: ``preferred`` order first, else ascending for numbers, else order of appearance."""
    unique = list(pd.unique(values))
    if preferred is not None:
        known = [v for v in preferred if v in unique]
        return known + [v for v in unique if v not in known]
    if pd.api.types.is_numeric_dtype(values):
        return sorted(unique, key=lambda v: (pd.isna(v), v))
    return unique


def _split_columns(trials: pd.DataFrame, keys: list[str], x: str, pool: Sequence[str]) -> list[str]:
    """Columns that vary inside the (keys, x) groups and must split curves instead of being averaged over."""
    candidates = ["label", "epsilon", *[c for c in trials.columns if c.startswith(("data.", "hp."))]]
    extras: list[str] = []
    for column in candidates:
        if column not in trials or column in (*keys, x, *extras, *pool):
            continue
        varies = trials.groupby([*keys, *extras, x], dropna=False)[column].nunique(dropna=False).gt(1).any()
        if varies:
            extras.append(column)
    return extras


def _matches(frame: pd.DataFrame, selection: Mapping[str, Sequence[Any]] | None, option: str) -> pd.Series:
    """Rows of ``frame`` whose every selected column holds one of the selected values (numbers compared as such)."""
    mask = pd.Series(True, index=frame.index)
    for column, wanted in (selection or {}).items():
        if column not in frame:
            raise ValueError(
                f"{option}: " + unknown_name("column", column, frame.columns, see="the header of trials.csv")
            )
        values = frame[column]
        if pd.api.types.is_numeric_dtype(values):
            try:
                wanted = [float(w) for w in wanted]
            except (TypeError, ValueError):
                raise ValueError(f"{option}.{column}: {wanted!r} are not numbers") from None
        else:
            values, wanted = values.astype(str), [str(w) for w in wanted]
        mask &= values.isin(wanted)
    return mask


# ----------------------------------------------------------------------------------------------------------------
# the figure


def resolve_options(options: Mapping[str, Any]) -> dict[str, Any]:
    """Validate ``options`` (unknown names and bad values raise :class:`ValueError`) and fill in the defaults."""
    return resolve(FIGURE_KINDS["curves"], {k: v for k, v in options.items() if k != "kind"}, "plot")


def _panel_column(trials: pd.DataFrame, o: Mapping[str, Any]) -> str:
    """``panel: dataset`` = one panel per concrete dataset (``dataset_id``) unless a dataset option is drawn along
    x, hue, style or row (then datasets sharing a label share a panel)."""
    if o["panel"] != "dataset" or "dataset_id" not in trials:
        return o["panel"]
    drawn = [o["x"], o["hue"], o["style"], o["row"]]
    return "dataset" if any(str(c).startswith("data.") for c in drawn if c) else "dataset_id"


def _panel_title(trials: pd.DataFrame, column: str, value: Any) -> str:
    title = coordinate_text(column, value)
    sub = trials[trials[column] == value] if not pd.isna(value) else trials[trials[column].isna()]
    sizes = []
    for size in ("n", "d"):
        if size in sub and column not in (f"data.{size}",) and pd.api.types.is_numeric_dtype(sub[size]):
            vals = sorted(pd.unique(sub[size].dropna()))
            if len(vals) == 1:
                sizes.append(f"{size}={int(vals[0]):,}")
            elif vals:
                sizes.append(f"{size}={int(vals[0]):,}–{int(vals[-1]):,}")
    title = "\n".join(textwrap.wrap(title, 42)) or str(value)
    return f"{title}\n({', '.join(sizes)})" if sizes else title


def _legend_columns(labels: list[str], width_in: float) -> int:
    entry = max((0.075 * len(s) + 0.7 for s in labels), default=1.0)
    return max(1, min(len(labels), int(width_in // entry)))


def _bottom_lines(text: str, width_in: float, fontsize: float) -> list[str]:
    chars = max(30, int(width_in * 72 / (0.55 * fontsize)))
    return [line for para in text.splitlines() for line in (textwrap.wrap(para, chars) or [""])]


def preprocessing_notes(run: Run, shown: Iterable[str] | None = None) -> list[str]:
    """Notes on the preprocessing of the datasets ``shown`` (dataset ids or labels; default all): data-dependent
    ``bounds: benchmark`` (and an outlier that set it), rows clipped to declared bounds
    (:func:`dpbench.analysis.notes.dataset_notes`)."""
    return dataset_notes(run.datasets, shown)


def shown_datasets(trials: pd.DataFrame) -> list[str] | None:
    """The dataset ids (else labels) of the rows a figure draws; None when the rows name no dataset."""
    for column in ("dataset_id", "dataset"):
        if column in trials:
            return [str(v) for v in pd.unique(trials[column])]
    return None


def _describe_points(o: Mapping[str, Any], counts: pd.Series) -> str:
    """One line saying what a point and its band are, e.g. "median ± 95% bootstrap CI (1000 resamples), R = 20"."""
    band = {
        "normal": "95% normal CI (±1.96·se)",
        "bootstrap": f"95% bootstrap CI ({o['resamples']} resamples, seed {o['seed']})",
        "none": "no band",
    }[o["interval"]]
    lo, hi = (int(counts.min()), int(counts.max())) if len(counts) else (0, 0)
    trials = f"R = {lo}" if lo == hi else f"R = {lo}–{hi}"
    pooled = f"; pooled over {', '.join(axis_name(c) for c in o['pool'])}" if o["pool"] else ""
    return f"Points: {o['stat']} over {trials} trials per point{pooled}; band: {band}."


@dataclass
class _Selection:
    """The rows of one figure and how they group: grid keys (row, panel), curve keys, the points drawn."""

    run: Run
    o: dict[str, Any]
    trials: pd.DataFrame  # with _value (the metric), _base (baseline row) and _hue (the hue, NaN for baselines by ε)
    panel: str
    row: str | None
    style: str | None
    extras: list[str]  # columns that vary inside a curve and split it
    curve_keys: list[str]
    points: pd.DataFrame  # results.summarise of the groups (grid keys, curve keys, x)
    nan_count: int


@dataclass
class _Curves:
    order: list[tuple]
    legend: dict[tuple, str]
    meta: dict[tuple, dict[str, Any]]  # a row of each curve (_base, _hue, label, mechanism, privacy_model, ...)
    styles: dict[tuple, dict[str, Any]]


@dataclass
class _Layout:
    figure: Figure
    axes: np.ndarray
    positions: dict[tuple, tuple[int, int]]  # (row value, panel value) → (i, j) in the grid
    legend_labels: list[str]
    legend_columns: int
    head_in: float  # height of the suptitle block, inches
    axes_in: float  # height of one panel, inches
    draw_refs: bool


def _select(run: Run, o: dict[str, Any]) -> _Selection:
    """Filter (``where``), check the columns, mark baselines, find the curve keys and summarise every point."""
    x, hue = o["x"], o["hue"]
    trials = run.trials.copy()
    if o["where"]:
        trials = trials[_matches(trials, o["where"], "where")]
        if trials.empty:
            raise ValueError(f"where={o['where']} leaves no rows of {run.path / 'trials.csv'}")
    panel, row = _panel_column(trials, o), o["row"]
    for option, column in (("x", x), ("hue", hue), ("panel", panel), ("row", row), ("style", o["style"])):
        if column is not None and column not in trials:
            raise ValueError(
                f"{option}: "
                + unknown_name("column", column, trials.columns, see=f"the header of {run.path / 'trials.csv'}")
            )
    if not pd.api.types.is_numeric_dtype(trials[x]):
        raise ValueError(f"x={x!r} must be a numeric column")
    drawn = [c for c in (x, hue, panel, row) if c is not None]
    if len(set(drawn)) < len(drawn):
        raise ValueError(f"x, hue, panel and row must be different columns (got {', '.join(map(repr, drawn))})")
    trials["_value"] = metric_values(trials, o["metric"], run.datasets).to_numpy()
    nan_count = int(trials["_value"].isna().sum())
    if nan_count:
        warnings.warn(
            f"{run.path.name}: {nan_count} of {len(trials)} trials have a NaN {o['metric']}; ignored",
            RuntimeWarning,
            stacklevel=3,
        )

    # baseline rows (e.g. non-private references): drawn once (first ε), in every panel they share
    is_base = _matches(trials, o["baseline"], "baseline") if o["baseline"] else pd.Series(False, index=trials.index)
    if is_base.any() and "epsilon" in trials and "epsilon" not in (x, panel, row):
        first_eps = trials[is_base].groupby("label", sort=False)["epsilon"].transform("first")
        keep = ~is_base
        keep[is_base] = trials.loc[is_base, "epsilon"].to_numpy() == first_eps.to_numpy()
        trials, is_base = trials[keep], is_base[keep]
    trials["_base"] = is_base.to_numpy()
    o["pool"] = [c for c in o["pool"] if c in trials and trials[c].nunique(dropna=False) > 1]  # for the note
    grid_keys = [c for c in (row, panel) if c is not None]
    style = o["style"] if o["style"] not in (None, hue) else None
    main = trials[~trials["_base"]]
    extras = _split_columns(main if len(main) else trials, [*grid_keys, hue, *([style] if style else [])], x, o["pool"])
    # a baseline ignores ε: its hue and extras other than ε identify it
    trials["_hue"] = trials[hue]
    if hue == "epsilon":
        trials.loc[trials["_base"], "_hue"] = np.nan
    curve_keys = ["_base", "_hue", *([style] if style else []), *extras]
    if trials["_base"].any() and "label" not in (*grid_keys, *curve_keys) and hue != "label":
        curve_keys.append("label")  # a baseline's own label identifies it
    if "epsilon" in extras:
        trials.loc[trials["_base"], "epsilon"] = np.nan
    points = summarise(
        trials, "_value", [*grid_keys, *curve_keys, x], o["stat"], o["interval"], o["resamples"], o["seed"]
    )
    points = points[np.isfinite(points[x].astype(float))]
    return _Selection(run, o, trials, panel, row, style, extras, curve_keys, points, nan_count)


def _curves(sel: _Selection) -> _Curves:
    """Every curve's identity, legend text (names first, then coordinates; the privacy model with
    ``tag_models``) and style, in config order of labels, then hue, then the splitting coordinates."""
    o, trials, keys, hue, style = sel.o, sel.trials, sel.curve_keys, sel.o["hue"], sel.style
    info_cols = [c for c in ("label", "mechanism", "privacy_model") if c in trials and c not in keys]
    frame = trials.drop_duplicates(keys)[keys + info_cols]
    label_order = sel.run.label_order()
    hue_rank = {v: i for i, v in enumerate(_ordered(trials[hue], label_order if hue == "label" else None))}
    label_rank = {v: i for i, v in enumerate(label_order)}
    frame = frame.assign(
        _r0=frame["_base"].astype(int),
        _r1=frame["_hue"].map(hue_rank).fillna(len(hue_rank)),  # a dict map: no call back into this module per row
        _r2=frame["label"].map(label_rank).fillna(len(label_rank)) if "label" in frame else 0,
    ).sort_values(["_r0", "_r1", "_r2", *keys[2:]], kind="stable")
    models = set(trials.loc[trials["_value"].notna(), "privacy_model"]) if "privacy_model" in trials else set()
    tag = o["tag_models"] and len(models) > 1
    order: list[tuple] = []
    legend: dict[tuple, str] = {}
    meta: dict[tuple, dict[str, Any]] = {}
    for rec in frame.to_dict("records"):
        key = _key_of(rec, keys)
        if key in meta:
            continue
        parts = [("label", rec["label"])] if rec["_base"] and hue != "label" and "label" in rec else []
        parts += [(hue, rec["_hue"])] if not pd.isna(rec["_hue"]) else []
        parts += [(style, rec[style])] if style else []
        parts += [(e, rec[e]) for e in sel.extras if not (e == "epsilon" and pd.isna(rec[e]))]
        names = [coordinate_text(c, v) for c, v in parts if c in ("label", "mechanism")]
        coordinates = [coordinate_text(c, v) for c, v in parts if c not in ("label", "mechanism")]
        text = ", ".join(dict.fromkeys(names + coordinates))
        if tag and rec.get("privacy_model") is not None:
            text += f" [{MODEL_TAG.get(rec['privacy_model'], rec['privacy_model'])}]"
        order.append(key)
        legend[key] = text
        meta[key] = rec
    styles = curve_styles(order, meta, hue, style or (sel.extras[0] if sel.extras else None))
    return _Curves(order, legend, meta, styles)


def _layout(sel: _Selection, curves: _Curves) -> tuple[_Layout, list[str], list[str], list[str]]:
    """Panels in a grid and every text block sized in inches, so nothing overlaps whatever the panel count.

    Returns the layout and the title, caption and note lines to write."""
    o, run, points, panel, row = sel.o, sel.run, sel.points, sel.panel, sel.row
    main_points = points[~points["_base"].astype(bool)]
    source = main_points if len(main_points) else points
    panels = _ordered(
        source[panel], None if pd.api.types.is_numeric_dtype(source[panel]) else list(pd.unique(source[panel]))
    )
    if row:  # a grid: one row per `row` value, one column per `panel` value
        rows_ = _ordered(source[row])
        present = source.groupby([row, panel], dropna=False).size()
        positions = {(r, p): (i, j) for i, r in enumerate(rows_) for j, p in enumerate(panels) if (r, p) in present}
        ncols, nrows = max(1, len(panels)), max(1, len(rows_))
    else:
        ncols = max(1, min(int(o["ncols"] or min(4, len(panels))), max(1, len(panels))))
        nrows = math.ceil(max(1, len(panels)) / ncols)
        positions = {(None, p): divmod(index, ncols) for index, p in enumerate(panels)}
    title = (run.title or run.name) if o["title"] is None else o["title"]
    caption = run.caption if o["caption"] is None else o["caption"]
    fig_w = max(6.4, ncols * PANEL_SIZE[0] + 0.6)
    draw_refs = o["refs"] and (o["metric"] == "train_mse" or (o["metric"] in EXCESS_NAMES and not o["logy"]))
    legend_labels = (
        [curves.legend[c] for c in curves.order]
        + [h["label"] for h in o["hlines"] if h["label"]]
        + [r["label"] or f"slope {r['slope']:+g}" for r in o["ref_slopes"]]
    )
    legend_labels += list(REF_STYLE) if draw_refs else []
    leg_cols = _legend_columns(legend_labels, fig_w - 0.4)
    leg_rows = math.ceil(len(legend_labels) / leg_cols) if legend_labels else 0
    notes = [_describe_points(o, points["count"])] + ([REFS_NOTE] if draw_refs else [])
    if run.meta.get("partial"):  # a run of -d/-m/-e (meta.json)
        notes.append(f"Partial run: {run.meta['partial']} of the config.")
    if run.skipped:
        notes.append(
            "Skipped (data unavailable): " + "; ".join(f"{k} ({_skip_reason(v)})" for k, v in run.skipped.items())
        )
    if sel.nan_count:
        notes.append(f"{sel.nan_count} trial(s) with NaN {o['metric']} ignored.")
    notes += preprocessing_notes(run, shown_datasets(sel.trials))
    title_lines = textwrap.wrap(title, int(fig_w * 11)) if title else []
    caption_lines = _bottom_lines(caption, fig_w - 0.4, 9) if caption else []
    note_lines = _bottom_lines("\n".join(notes), fig_w - 0.4, 8)
    head_in = 0.15 + 0.25 * len(title_lines) + (0.2 if title_lines else 0)  # suptitle
    top_in = head_in + 0.1 + 0.22 * leg_rows  # + legend
    title_in = 0.2 + 0.17 * (3 if row else 2)  # a panel's title (2 lines; 3 in a grid)
    axes_in = PANEL_SIZE[1] - 0.1
    mains = sum(not curves.meta[c]["_base"] for c in curves.order)
    fits_in = 0.3 + 0.13 * (1 + mains) if o["fit"] and o["fit_draw"] else 0.0  # slopes listed under each panel
    bottom_in = 0.75 + 0.17 * len(caption_lines) + 0.16 * len(note_lines) + fits_in  # x label, caption, notes
    gap_in = title_in + 0.4 + fits_in  # tick labels of the panel above (+ its slopes) + the title of the one below
    fig_h = top_in + title_in + nrows * axes_in + (nrows - 1) * gap_in + bottom_in
    fig = Figure(figsize=(fig_w, fig_h), dpi=DPI)
    fig.subplots_adjust(
        left=1.05 / fig_w,
        right=1 - 0.25 / fig_w,
        top=1 - (top_in + title_in) / fig_h,
        bottom=bottom_in / fig_h,
        wspace=0.32,
        hspace=gap_in / axes_in,
    )
    axes = fig.subplots(nrows, ncols, squeeze=False)
    used = set(positions.values())
    for i in range(nrows):
        for j in range(ncols):
            if (i, j) not in used:
                fig.delaxes(axes[i, j])
    layout = _Layout(fig, axes, positions, legend_labels, leg_cols, head_in, axes_in, draw_refs)
    return layout, title_lines, caption_lines, note_lines


def _draw_curve(ax, sel: _Selection, curves: _Curves, curve: tuple, pts: pd.DataFrame) -> Any:
    """One curve: its points, and its band unless ``interval: none``; returns the line."""
    o, x = sel.o, sel.o["x"]
    st = curves.styles[curve]
    xs, centre = pts[x].to_numpy(float), pts["centre"].to_numpy(float)
    lo, hi = pts["lo"].to_numpy(float), pts["hi"].to_numpy(float)
    if o["logy"]:
        lo = np.where(lo > 0, lo, centre / 10)
    (line,) = ax.plot(
        xs,
        centre,
        color=st["color"],
        marker=st["marker"],
        linestyle=st["linestyle"],
        markersize=5 if st["marker"] else 0,
        linewidth=1.4,
        label=curves.legend[curve],
        markevery=max(1, len(xs) // MAX_MARKERS),
    )
    if o["interval"] != "none":
        if len(xs) > 1:
            ax.fill_between(
                xs, lo, hi, color=st["color"], alpha=0.12 if curves.meta[curve]["_base"] else 0.18, linewidth=0
            )
        else:
            ax.errorbar(xs, centre, yerr=[centre - lo, hi - centre], color=st["color"], capsize=3, linestyle="")
    return line


def _draw_panel(
    sel: _Selection, curves: _Curves, lay: _Layout, key: tuple, handles: dict[str, Any], annotation
) -> list[dict[str, Any]]:
    """Every curve of panel ``key`` = (row value, panel value), its axes and decorations; returns its fits."""
    o, x, panel, row = sel.o, sel.o["x"], sel.panel, sel.row
    r, p = key
    i, j = lay.positions[key]
    ax = lay.axes[i, j]
    sub = sel.points[cell_mask(sel.points.assign(baseline=sel.points["_base"].astype(bool)), panel, p, row, r)]
    if o["logy"]:  # drop non-positive and numerically-zero centres (e.g. an OLS curve of an excess metric)
        top = sub["centre"].max() if len(sub) else 0.0
        sub = sub[sub["centre"] > (top * o["zero_below"] if np.isfinite(top) and top > 0 else 0.0)]
    use_logx = (
        o["logx"]
        if o["logx"] is not None
        else (
            x == "epsilon"
            or bool(len(sel.points) and (sel.points[x] > 0).all() and sel.points[x].max() / sel.points[x].min() >= 50)
        )
    )
    cell = {**({row: r} if row else {}), panel: p}
    fits, fit_lines, drawn = [], [], 0
    for curve in curves.order:
        mask = pd.Series(True, index=sub.index)
        for column, v in zip(sel.curve_keys, curve, strict=True):
            mask &= sub[column].isna() if pd.isna(v) else (sub[column] == v)
        pts = sub[mask].sort_values(x)
        pts = pts[pts[x] > 0] if use_logx else pts
        if pts.empty:
            continue
        handles.setdefault(curves.legend[curve], _draw_curve(ax, sel, curves, curve, pts))
        drawn += 1
        for ref in o["ref_slopes"]:
            if not curves.meta[curve]["_base"] and ref["through"] in ("", curves.meta[curve].get("label")):
                draw_ref_slope(ax, pts, x, ref, handles)
        if annotation is not None:
            _annotate(annotation, ax, sel, pts, curve, p, r)
        if o["fit"] and not curves.meta[curve]["_base"]:
            fit, line = fit_curve(
                ax,
                pts,
                x,
                o["fit_min"],
                o["fit_max"],
                curves.legend[curve],
                curves.styles[curve]["color"],
                o["fit_draw"],
            )
            fit.update({**cell, "curve": curves.legend[curve]})
            fits.append(fit)
            fit_lines += [line] if line is not None else []
    _decorate_axes(ax, sel, lay, sub, drawn, use_logx, handles, key)
    if fit_lines:
        ax.legend(
            handles=fit_lines,
            loc="upper center",
            bbox_to_anchor=(0.5, -0.5 / lay.axes_in),
            fontsize=6.5,
            title="fitted log–log slope [95% CI] (thin dashed lines)",
            title_fontsize=6.5,
            frameon=False,
        )
    return fits


def _decorate_axes(
    ax,
    sel: _Selection,
    lay: _Layout,
    sub: pd.DataFrame,
    drawn: int,
    use_logx: bool,
    handles: dict[str, Any],
    key: tuple,
) -> None:
    """Scales, ticks, reference lines, grid, title and axis labels of one panel."""
    o, x, panel, row = sel.o, sel.o["x"], sel.panel, sel.row
    r, p = key
    i, j = lay.positions[key]
    if use_logx:
        ax.set_xscale("log")
        few_decade_ticks(ax, sub[x])
    elif drawn:  # at most ~6 linear ticks, large values with a ×10^k offset: labels never overlap
        ax.xaxis.set_major_locator(MaxNLocator(nbins=6, steps=[1, 2, 2.5, 5, 10]))
        ax.ticklabel_format(axis="x", style="sci", scilimits=(-3, 4), useMathText=True)
    if o["logy"]:
        ax.set_yscale("log")
    if drawn and lay.draw_refs and panel in ("dataset", "dataset_id"):
        draw_reference_lines(ax, sel.run, str(p), o["metric"], o["logy"], handles)
    for h in o["hlines"]:
        if o["logy"] and h["y"] <= 0:
            continue
        line = ax.axhline(h["y"], color="grey", linewidth=0.9, linestyle="-", label=h["label"] or "_nolegend_")
        if h["label"]:
            handles.setdefault(h["label"], line)
    if not drawn:
        ax.text(0.5, 0.5, "no finite values", transform=ax.transAxes, ha="center", va="center", color="grey")
    elif not o["logy"]:
        ax.ticklabel_format(axis="y", style="sci", scilimits=(-2, 3), useMathText=True)
    ax.grid(True, which="major", alpha=0.4)
    title = _panel_title(sel.trials, panel, p)
    ax.set_title(f"{coordinate_text(row, r)}\n{title}" if row else title, fontsize=9)
    if j == 0:
        ax.set_ylabel(metric_axis_label(o["metric"], o["stat"]))
    if (i + 1, j) not in set(lay.positions.values()):  # nothing below it
        ax.set_xlabel(axis_name(x))


def _write_texts(
    sel: _Selection,
    lay: _Layout,
    handles: dict[str, Any],
    title_lines: list[str],
    caption_lines: list[str],
    note_lines: list[str],
) -> None:
    """Suptitle, the figure-wide legend under it, and the caption and notes at the bottom."""
    fig = lay.figure
    fig_h = fig.get_figheight()
    note_lines = [refs_note(handles) if line == REFS_NOTE else line for line in note_lines]
    note_lines = [line for line in note_lines if line]
    if title_lines:
        fig.suptitle("\n".join(title_lines), y=1 - 0.12 / fig_h, va="top", fontsize=11.5)
    if handles:
        order = [lab for lab in lay.legend_labels if lab in handles]
        fig.legend(
            [handles[lab] for lab in order],
            order,
            loc="upper center",
            ncol=lay.legend_columns,
            fontsize=8.5,
            frameon=False,
            bbox_to_anchor=(0.5, 1 - lay.head_in / fig_h),
        )
    y = 0.1
    for line in reversed(note_lines):
        warn = line.startswith(("Skipped", f"{sel.nan_count} trial"))
        fig.text(0.5, y / fig_h, line, ha="center", va="bottom", fontsize=8, color="darkred" if warn else "dimgray")
        y += 0.16
    for line in reversed(caption_lines):
        fig.text(0.5, y / fig_h, line, ha="center", va="bottom", fontsize=9, style="italic")
        y += 0.17


def _tables(sel: _Selection, curves: _Curves, fits: list[dict[str, Any]]) -> tuple[pd.DataFrame, pd.DataFrame]:
    """The points drawn (with their curve's legend text, ``private`` and ``baseline`` flags) and the slopes."""
    points = sel.points
    records = points.to_dict("records")
    meta = [curves.meta.get(_key_of(rec, sel.curve_keys), {}) for rec in records]
    private = [
        not rec["_base"] and m.get("privacy_model", "central") != "none" for rec, m in zip(records, meta, strict=True)
    ]
    table = (
        points.drop(columns=["boot", "_hue"])
        .assign(
            curve=[curves.legend.get(_key_of(rec, sel.curve_keys), "") for rec in records],
            private=private,
            baseline=points["_base"].astype(bool),
        )
        .drop(columns=["_base"])
    )
    slope_columns = [
        *([sel.row] if sel.row else []),
        sel.panel,
        "curve",
        "slope",
        "lo",
        "hi",
        "points",
        "x_min",
        "x_max",
    ]
    slopes = pd.DataFrame(fits)[slope_columns] if fits else pd.DataFrame(columns=slope_columns)
    return table, slopes


def render(run: Run | str | Path, **options: Any) -> Drawing:
    """Draw one preset (the options of :data:`OPTIONS`, validated and filled here) of ``run``; nothing is
    written."""
    return draw_curves(run if isinstance(run, Run) else load_run(run), **resolve_options(options))


@register_figure_kind(
    "curves",
    summary="a run's metric against any coordinate: curves by hue/style, panels, stat ± 95% band, baselines, "
    "reference lines, log–log slope fits (the default kind of plot:)",
    options=OPTIONS,
    check=check_fit_range,
)
def draw_curves(run: Run, **o: Any) -> Drawing:
    """The curves figure of ``run`` with the resolved options ``o`` (every option of :data:`OPTIONS`)."""
    o = dict(o)
    annotation = None
    if o["annotate"] is not None:
        from dpbench import registry

        try:
            annotation = registry.get_annotation(o["annotate"]).draw
        except KeyError as err:
            raise ValueError(f"annotate={o['annotate']!r}: {err.args[0]}") from None
    sel = _select(run, o)
    curves = _curves(sel)
    lay, title_lines, caption_lines, note_lines = _layout(sel, curves)
    handles: dict[str, Any] = {}
    fits = [fit for key in lay.positions for fit in _draw_panel(sel, curves, lay, key, handles, annotation)]
    _write_texts(sel, lay, handles, title_lines, caption_lines, note_lines)
    table, slopes = _tables(sel, curves, fits)
    return Drawing(lay.figure, table, slopes, o, sel.panel, sel.row)


def _key_of(record: Mapping[str, Any], columns: Sequence[str]) -> tuple:
    """A curve's identity; NaN → None so that equal keys are equal."""
    return tuple(None if _isnan(record[c]) else record[c] for c in columns)


def _isnan(value: Any) -> bool:
    return isinstance(value, float) and math.isnan(value)


def cell_mask(points: pd.DataFrame, panel: str, p: Any, row: str | None = None, r: Any = None) -> pd.Series:
    """Points of panel (r, p) of a :class:`Drawing`'s ``points``: its own curves, plus every ``baseline`` curve that
    shares its coordinates — a baseline coordinate that names no panel (e.g. its own label when the panels are
    labels) matches every panel."""
    base = points["baseline"].astype(bool)
    main = points[~base]
    mask = ~base & (points[panel] == p)
    base_mask = base & ((points[panel] == p) | ~points[panel].isin(set(main[panel])))
    if row:
        mask &= points[row] == r
        base_mask &= (points[row] == r) | ~points[row].isin(set(main[row]))
    return mask | base_mask


def _annotate(draw, ax, sel: _Selection, pts: pd.DataFrame, curve: tuple, p: Any, r: Any) -> None:
    """Call a registered annotation with the curve's rows of panel (r, p) and that panel's dataset entry."""
    trials = sel.trials
    mask = trials[sel.panel] == p
    if sel.row:
        mask &= trials[sel.row] == r
    for column, v in zip(sel.curve_keys, curve, strict=True):
        mask &= trials[column].isna() if pd.isna(v) else (trials[column] == v)
    try:
        info = sel.run.dataset_info(str(p))
    except KeyError:
        info = {}
    draw(ax, trials[mask], info, sel.o["x"], pts[[sel.o["x"], "centre", "lo", "hi"]])


def _skip_reason(reason: str) -> str:
    """Short form of a skip reason: the missing file relative to the data folder, without the explanation."""
    reason = re.sub(r"^data unavailable:\s*", "", str(reason)).split(" (")[0]
    reason = re.sub(r"^.*?/datasets/", "datasets/", reason)
    return textwrap.shorten(reason, 80, placeholder="…")


def build_figure(run: Run | str | Path, **options: Any) -> Figure:
    """The figure of :func:`render` alone."""
    return render(run, **options).figure


__all__ = [
    "render",
    "draw_curves",
    "build_figure",
    "Drawing",
    "cell_mask",
    "resolve_options",
    "preprocessing_notes",
    "DEFAULTS",
    "PLOT_OPTIONS",
]
