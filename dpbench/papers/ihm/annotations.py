"""Plot annotations of the IHM paper (spec 004), drawn by ``dpbench plot`` when a preset says ``annotate: NAME``."""

from __future__ import annotations

import math
from collections.abc import Mapping
from typing import Any

import pandas as pd

from dpbench import registry


@registry.register_annotation(
    "ihm_clipping", summary="IHM paper Fig. 7: χ√κ/(2−χ) and the clipping share at each IHM point (004 §5.5)"
)
def ihm_clipping(ax, trials: pd.DataFrame, info: Mapping[str, Any], x: str, points: pd.DataFrame) -> None:
    """ "χ√κ_X/(2−χ): v, clip: p%" at each point of an IHM curve (004 §5.5).

    v = √((λ^X_max + β²)/(λ^X_min + β²))/(2√6 + 1) with β² = max{0, γ_IHM − λ^X_min} (the notebook's constant),
    p = share of IHM iterations t ≥ 1 in which clipping changed the residual (mean of ``info.clip_fraction``).
    """
    if set(trials.get("mechanism", [])) != {"ihm"} or not info:
        return
    if not {"info.gamma", "info.clip_fraction"} <= set(trials.columns):
        return
    lam_min, lam_max = max(float(info["lam_min_x"]), 0.0), float(info["lam_max_x"])
    per_x = trials.groupby(x)[["info.gamma", "info.clip_fraction"]].mean()
    last = points[x].max()
    for xv, centre in zip(points[x], points["centre"], strict=True):
        if xv not in per_x.index:
            continue
        beta_sq = max(0.0, per_x.at[xv, "info.gamma"] - lam_min)
        v = math.sqrt((lam_max + beta_sq) / (lam_min + beta_sq)) / (2 * math.sqrt(6) + 1)
        clip = 100 * per_x.at[xv, "info.clip_fraction"]
        right_edge = xv == last  # keep the last label inside the axes
        ax.annotate(
            f"χ√κ/(2−χ): {v:.2f}\nclip: {clip:.0f}%",
            (xv, centre),
            textcoords="offset points",
            xytext=(0, 8),
            ha="right" if right_edge else "center",
            va="bottom",
            fontsize=6.5,
            color="darkgreen",
            bbox={"boxstyle": "round,pad=0.15", "fc": "white", "ec": "none", "alpha": 0.7},
        )
