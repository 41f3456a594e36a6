"""The bandit kind's own figure kind, ``bandit_privacy_gap``: the paired privacy gap Reg(T, ε) − Reg(T, ∞) ± 95% CI
against 1/ε, one panel per environment, colour = algorithm, line style = T (spec 001 F6(b)).

Drawn from a bandit run (:func:`dpbench.bandits.analyses.run_gaps`); the ``bandit_gap`` analysis draws it through
the kinds' table, and a config can name it as ``plots: {gap: {kind: bandit_privacy_gap}}``. Registered by
discovery; nothing imports this module.
"""

from __future__ import annotations

import math
import textwrap

import pandas as pd
from matplotlib.figure import Figure

from dpbench.analysis.figures.kinds import Drawing, register_figure_kind
from dpbench.analysis.runs import Run
from dpbench.bandits.analyses import OPTIONS, gap_slopes, run_gaps

#: line style per T (cycled)
T_STYLES = ("-", "--", ":", "-.")
#: what every gap figure's caption starts with (how the points are computed)
PAIRING = "Paired by trial (same instance, contexts and reward coins); mean ± 1.96·sd/√R. "


def gap_figure(gaps: pd.DataFrame, title: str, caption: str) -> Figure:
    """Gap ± 95% CI vs 1/ε, one panel per environment, colour = algorithm, line style = T."""
    panels = list(pd.unique(gaps["dataset_id"]))
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    width = 4.6 * ncols + 0.4
    cap_lines = textwrap.wrap(caption, int(width * 12)) if caption else []
    fig = Figure(figsize=(width, 3.6 * nrows + 1.0 + 0.16 * len(cap_lines)), dpi=150)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    for ax, panel in zip(axes.flat, panels, strict=False):
        draw_gap_panel(ax, gaps[gaps["dataset_id"] == panel], str(panel))
    for extra in axes.flat[len(panels) :]:
        fig.delaxes(extra)
    if title:
        fig.suptitle(title, fontsize=11)
    if cap_lines:
        fig.text(0.5, 0.01, "\n".join(cap_lines), ha="center", va="bottom", fontsize=8, style="italic")
    bottom = (0.16 * len(cap_lines) + 0.15) / fig.get_figheight()
    fig.tight_layout(rect=(0, bottom, 1, 0.95))
    return fig


def draw_gap_panel(ax, sub: pd.DataFrame, title: str) -> None:
    """One environment's gaps: a curve per (algorithm, T); a log y axis when the gaps span more than 20×."""
    Ts = sorted(sub["T"].unique())
    for ci, label in enumerate(pd.unique(sub["label"])):
        for ti, T in enumerate(Ts):
            pts = sub[(sub["label"] == label) & (sub["T"] == T)].sort_values("inv_epsilon")
            if pts.empty:
                continue
            ax.errorbar(pts["inv_epsilon"], pts["gap"], yerr=pts["ci95"], color=f"C{ci}",
                        linestyle=T_STYLES[ti % len(T_STYLES)], marker="o", capsize=3,
                        label=f"{label}, T = 2^{int(round(math.log2(T)))}")  # fmt: skip
    ax.set_xlabel("1/ε")
    ax.set_ylabel("Reg(T, ε) − Reg(T, ∞)")
    if (sub["gap"] > 0).all() and sub["gap"].max() > 20 * sub["gap"].min():
        ax.set_yscale("log")  # gaps at different T differ by orders of magnitude: keep the small ones visible
    else:
        ax.axhline(0, color="grey", linewidth=0.8)
    ax.grid(True, alpha=0.4)
    ax.set_title(title, fontsize=10)
    ax.legend(fontsize=7)


@register_figure_kind(
    "bandit_privacy_gap",
    summary="bandit privacy gap Reg(T, ε) − Reg(T, ∞), paired by trial, ± 95% CI vs 1/ε per environment (001 F6(b))",
    options=OPTIONS,
)
def bandit_privacy_gap(run: Run, *, at: tuple[int, ...], caption: str) -> Drawing:
    """The gaps of ``run`` (``points``), their log–log slopes vs 1/ε (``slopes``) and the figure; the caption is
    the pairing note followed by ``caption`` or, when empty, the run's (it describes the regret figure)."""
    gaps = run_gaps(run, at)
    if gaps.empty:
        raise ValueError(f"bandit_privacy_gap: no algorithm of {run.name} ran at both ε = ∞ and a finite ε")
    figure = gap_figure(gaps, f"Privacy gap vs 1/ε — {run.name}", PAIRING + (caption or run.caption))
    return Drawing(figure, gaps, gap_slopes(gaps), options={"at": at, "caption": caption})
