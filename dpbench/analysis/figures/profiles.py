"""The profiles figure: performance profiles (Dolan & Moré 2002), one panel per ε — ρ_A(τ), the fraction of
datasets where mechanism A is within a factor τ of the best, vs τ on a log axis, as step curves. The numbers come
from :func:`dpbench.analysis.leaderboard.performance_profile`; this module only draws them."""

from __future__ import annotations

import math
from collections.abc import Mapping

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from dpbench.analysis.stats import fmt

MARKERS = "os^Dv<>PX*"
COLOURS = tuple(f"C{i}" for i in range(10))  # matplotlib's default cycle (tab10)
LINESTYLES = ("-", "--", ":", "-.")


def line_style(j: int) -> dict[str, str]:
    """Colour, marker and line style of the j-th line: colours cycle every 10 lines, and each further round of 10
    takes the next line style and shifts the markers by 3, so no two of the first 40 lines share colour and line
    style, nor colour and marker."""
    rounds = j // len(COLOURS)
    return {
        "color": COLOURS[j % len(COLOURS)],
        "marker": MARKERS[(j + 3 * rounds) % len(MARKERS)],
        "linestyle": LINESTYLES[rounds % len(LINESTYLES)],
    }


def profiles_figure(
    profiles: Mapping[float, pd.DataFrame], labels: list[str], datasets: int, privacy: str = ""
) -> Figure:
    """One panel per ε of ``profiles`` (ε → a table with column ``tau`` and one column per label)."""
    epsilons = list(profiles)
    ncols = min(3, len(epsilons))
    nrows = math.ceil(len(epsilons) / ncols)
    fig = Figure(figsize=(max(4.2 * ncols, 6.4), 3.4 * nrows + 1.2), layout=None)  # ≥ 6.4 in: the title fits
    axes = np.atleast_1d(fig.subplots(nrows, ncols, squeeze=False)).ravel()
    for ax, eps in zip(axes, epsilons, strict=False):
        profile = profiles[eps]
        for j, lab in enumerate(labels):
            ax.step(
                profile["tau"],
                profile[lab],
                where="post",
                label=lab,
                **line_style(j),
                markevery=40,
                markersize=4,
            )
        ax.set_xscale("log")
        ax.set_ylim(-0.02, 1.02)
        ax.set_title(f"ε = {fmt(eps, missing='n/a')}")
        ax.set_xlabel("τ (mean normalised excess ≤ τ × best)")
        ax.set_ylabel("fraction of datasets")
        ax.grid(alpha=0.3)
    for ax in axes[len(epsilons) :]:
        ax.set_visible(False)
    height = 3.4 * nrows + 1.2
    handles, names = axes[0].get_legend_handles_labels()
    profile = f"; privacy: {privacy}" if privacy else ""
    fig.suptitle(
        f"Performance profiles over {datasets} datasets (Dolan–Moré; higher is better{profile})",
        y=1 - 0.12 / height,
        fontsize=10 if profile else 11,
    )
    fig.legend(
        handles,
        names,
        loc="upper center",
        bbox_to_anchor=(0.5, 1 - 0.42 / height),
        ncol=min(5, len(names)),
        fontsize=8,
        frameon=False,
    )
    fig.tight_layout(rect=(0, 0, 1, 1 - 0.8 / height))
    return fig
