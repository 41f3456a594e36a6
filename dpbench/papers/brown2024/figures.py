"""Brown et al. 2024's own figure kind, ``brown2024_iso_error``: n*(p) — the n at which E‖θ̃ − θ*‖₂ = target —
with its bootstrap 95% intervals and the fitted power laws n* ∝ p^b, log–log.

Drawn from a brown2024 run (its trials pooled over several runs by the ``brown2024_iso_error`` analysis, which
draws it through the kinds' table); a config names it as ``plots: {iso: {kind: brown2024_iso_error}}``.
Registered by discovery; nothing imports this module.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from matplotlib.figure import Figure

from dpbench.analysis.figures.kinds import Drawing, register_figure_kind
from dpbench.analysis.runs import Run, require_columns
from dpbench.analysis.stats import fmt_ci
from dpbench.papers.brown2024.analyses import METRIC, OPTIONS, iso_error_table, with_n


def iso_error_figure(table: pd.DataFrame, fits: pd.DataFrame, target: float) -> Figure:
    """n*(p) with 95% intervals and the fitted power laws, log–log."""
    fig = Figure(figsize=(6.4, 4.6))
    ax = fig.add_subplot()
    colours = ("black", "tab:blue", "tab:red", "tab:green")
    for index, (label, curve) in enumerate(table.groupby("label")):
        colour = colours[index % len(colours)]
        fit = fits.set_index("label").loc[label]
        err = np.vstack([curve["n_star"] - curve["n_lo"], curve["n_hi"] - curve["n_star"]])
        ax.errorbar(curve["p"], curve["n_star"], yerr=np.clip(err, 0, None), fmt="o", color=colour, capsize=2,
                    label=f"{label}: b = {fmt_ci(fit['b'], fit['b_lo'], fit['b_hi'], digits=3)}")  # fmt: skip
        ps = np.linspace(curve["p"].min(), curve["p"].max(), 50)
        ax.plot(ps, np.exp(fit["a"]) * ps ** fit["b"], color=colour, lw=1)
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("dimension p")
    ax.set_ylabel(f"n with E‖θ̃ − θ*‖₂ = {target:g}")
    ax.set_title("Brown et al. 2024 iso-error: fitted n*(p) ∝ p^b (95% bootstrap CIs)", fontsize=9)
    ax.grid(True, which="both", alpha=0.3)
    ax.legend(fontsize=7, loc="lower right")
    return fig


@register_figure_kind(
    "brown2024_iso_error",
    summary="Brown et al. 2024: n*(p) at E‖θ̃ − θ*‖ = target per curve with bootstrap 95% CIs and n* ∝ p^b fits",
    options=OPTIONS,
)
def brown2024_iso_error(run: Run, *, target: float, resamples: int, seed: int) -> Drawing:
    """The crossings (``points``), the fits (``slopes``) and the figure of ``run``."""
    require_columns(run, (METRIC, "data.p", "data.n_per_p", "label"), "brown2024_iso_error", "a brown2024 run")
    table, fits = iso_error_table(with_n(run.trials), METRIC, target, resamples, seed)
    options = {"target": target, "resamples": resamples, "seed": seed}
    return Drawing(iso_error_figure(table, fits, target), table, fits, options)
