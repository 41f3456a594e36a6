"""The grey reference lines of a curves figure (the dataset's non-private OLS and θ = 0, from the run's
datasets.json), the note under a figure that draws them, and the ticks of a short log axis."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import numpy as np
import pandas as pd
from matplotlib.ticker import NullLocator

from dpbench.analysis.figures.text import value_text
from dpbench.analysis.runs import Run, reference_lines

#: line style of each reference line
REF_STYLE = {"OLS (non-private)": ":", "θ = 0": "-."}
#: what each reference line is, for the note written under a figure that draws it
REF_MEANING = {"OLS (non-private)": "non-private OLS", "θ = 0": "θ = 0"}
REF_WORDS = {":": "dotted", "-.": "dash-dot"}
#: the note line reserved for the reference lines; written only if at least one is drawn (:func:`refs_note`)
REFS_NOTE = "\0refs"


def refs_note(handles: Mapping[str, Any]) -> str:
    """``Grey reference lines (per dataset): dotted = non-private OLS, dash-dot = θ = 0.`` for the reference lines
    actually drawn (none drawn: the empty string, and no line)."""
    drawn = [name for name in REF_STYLE if name in handles]
    if not drawn:
        return ""
    return (
        "Grey reference lines (per dataset): "
        + ", ".join(f"{REF_WORDS[REF_STYLE[name]]} = {REF_MEANING[name]}" for name in drawn)
        + "."
    )


def few_decade_ticks(ax, xs: pd.Series) -> None:
    """A log x axis spanning under two decades with few values: ticks at the values, in plain numbers."""
    values = sorted(v for v in pd.unique(xs) if v > 0)
    if 1 < len(values) <= 10 and values[-1] / values[0] < 100:
        ax.set_xticks(values, [value_text(v) for v in values])
        ax.xaxis.set_minor_locator(NullLocator())


def draw_reference_lines(ax, run: Run, dataset: str, metric: str, logy: bool, handles: dict[str, Any]) -> None:
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
