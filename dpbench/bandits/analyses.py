"""The bandit privacy gap (``dpbench analyze bandit_gap RUN``; configs name it under ``analyses:``).

``Reg(T, ε) − Reg(T, ∞)`` of the same algorithm, paired by trial (both runs see the same instance, contexts and
reward coins), mean ± 1.96·sd/√R, at the requested T; drawn vs 1/ε (spec 001 F6(b): roughly linear in 1/ε and not
growing with T for JDP), with the log–log slope of the gap vs 1/ε. Writes ``privacy_gap.csv`` and
``figure_privacy_gap.png``/``.pdf``. Regret vs T and its slopes are generic figure presets (``plots:``, ``fit:``).
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from dpbench import registry
from dpbench.analysis.figures.save import save_figures
from dpbench.analysis.runs import load_run, require_columns
from dpbench.analysis.stats import halfwidth95, loglog_slope
from dpbench.io.atomic import write_atomic


def privacy_gaps(trials: pd.DataFrame, at: list[int]) -> pd.DataFrame:
    """Paired Reg(T, ε) − Reg(T, ∞) per (dataset_id, label, ε, T) for the T in ``at`` (nearest checkpoint)."""
    rows = []
    for (ds, label), g in trials.groupby(["dataset_id", "label"], sort=False):
        base = g[np.isinf(g["epsilon"])]
        if base.empty or len(g["epsilon"].unique()) < 2:
            continue
        checkpoints = np.sort(g["T"].unique())
        for target in at:
            T = int(checkpoints[np.argmin(np.abs(np.log(checkpoints) - math.log(target)))])
            ref = base[base["T"] == T].set_index("trial")["regret"]
            for eps, ge in g[np.isfinite(g["epsilon"]) & (g["T"] == T)].groupby("epsilon"):
                diff = (ge.set_index("trial")["regret"] - ref).dropna()
                if diff.empty:
                    continue
                rows.append(
                    {
                        "dataset_id": ds,
                        "label": label,
                        "epsilon": float(eps),
                        "inv_epsilon": 1.0 / eps,
                        "T": T,
                        "gap": float(diff.mean()),
                        "ci95": float(halfwidth95(diff.std(ddof=0), len(diff))),
                        "trials": len(diff),
                    }
                )
    return pd.DataFrame(rows)


def gap_slopes(gaps: pd.DataFrame) -> pd.DataFrame:
    """Log–log slope of the mean gap vs 1/ε per (dataset_id, label, T) (positive gaps only)."""
    rows = []
    for (ds, label, T), g in gaps.groupby(["dataset_id", "label", "T"], sort=False):
        slope = loglog_slope(g["inv_epsilon"].to_numpy(), g["gap"].to_numpy())
        rows.append({"dataset_id": ds, "label": label, "T": T, "gap_slope_vs_inv_eps": slope})
    return pd.DataFrame(rows)


def gap_figure(gaps: pd.DataFrame, title: str, caption: str):
    """Gap ± 95% CI vs 1/ε, one panel per environment, colour = algorithm, line style = T (a matplotlib Figure)."""
    from matplotlib.figure import Figure

    panels = list(pd.unique(gaps["dataset_id"]))
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    width = 4.6 * ncols + 0.4
    cap_lines = textwrap.wrap(caption, int(width * 12)) if caption else []
    fig = Figure(figsize=(width, 3.6 * nrows + 1.0 + 0.16 * len(cap_lines)), dpi=150)
    axes = fig.subplots(nrows, ncols, squeeze=False)
    styles = ["-", "--", ":", "-."]
    for ax, panel in zip(axes.flat, panels, strict=False):
        sub = gaps[gaps["dataset_id"] == panel]
        Ts = sorted(sub["T"].unique())
        for ci, label in enumerate(pd.unique(sub["label"])):
            for ti, T in enumerate(Ts):
                pts = sub[(sub["label"] == label) & (sub["T"] == T)].sort_values("inv_epsilon")
                if pts.empty:
                    continue
                ax.errorbar(
                    pts["inv_epsilon"],
                    pts["gap"],
                    yerr=pts["ci95"],
                    color=f"C{ci}",
                    linestyle=styles[ti % 4],
                    marker="o",
                    capsize=3,
                    label=f"{label}, T = 2^{int(round(math.log2(T)))}",
                )
        ax.set_xlabel("1/ε")
        ax.set_ylabel("Reg(T, ε) − Reg(T, ∞)")
        if (sub["gap"] > 0).all() and sub["gap"].max() > 20 * sub["gap"].min():
            ax.set_yscale("log")  # gaps at different T differ by orders of magnitude: keep the small ones visible
        else:
            ax.axhline(0, color="grey", linewidth=0.8)
        ax.grid(True, alpha=0.4)
        ax.set_title(str(panel), fontsize=10)
        ax.legend(fontsize=7)
    for extra in axes.flat[len(panels) :]:
        fig.delaxes(extra)
    if title:
        fig.suptitle(title, fontsize=11)
    if cap_lines:
        fig.text(0.5, 0.01, "\n".join(cap_lines), ha="center", va="bottom", fontsize=8, style="italic")
    bottom = (0.16 * len(cap_lines) + 0.15) / fig.get_figheight()
    fig.tight_layout(rect=(0, bottom, 1, 0.95))
    return fig


@registry.register_analysis(
    "bandit_gap",
    summary="bandit privacy gap Reg(T, ε) − Reg(T, ∞), paired by trial, vs 1/ε (spec 001 F6(b)); "
    "-o at=T1,T2 (default T_max/16, T_max); -o caption=… (default: the run's caption)",
)
def bandit_gap(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> list[Path]:
    o = registry.analysis_options("bandit_gap", options, {"at": [], "caption": ""})
    written = []
    for run_dir in runs:
        run = load_run(run_dir)
        trials = run.trials
        require_columns(run, ("T", "regret"), "bandit_gap", "a bandit run has them")
        trials = trials.assign(epsilon=trials["epsilon"].astype(float))
        t_max = int(trials["T"].max())
        at = [int(float(v)) for v in o["at"]] or [t_max // 16, t_max]
        gaps = privacy_gaps(trials, at)
        if gaps.empty:
            echo(f"{run.name}: no algorithm ran at both ε = ∞ and a finite ε; no privacy gap")
            continue
        fmt = {"float_format": lambda v: f"{v:.4g}", "index": False}
        with pd.option_context("display.width", 200, "display.max_columns", 20):
            echo(gaps.to_string(**fmt))
            echo("")
            echo(gap_slopes(gaps).to_string(**fmt))
        csv = run.path / "privacy_gap.csv"
        write_atomic(csv, gaps.to_csv(index=False))
        # a run caption describes the regret figure (its curves, e.g. LinUCB); a config can give the gap its own
        caption = "Paired by trial (same instance, contexts and reward coins); mean ± 1.96·sd/√R. " + (
            o["caption"] or run.caption
        )
        fig = gap_figure(gaps, f"Privacy gap vs 1/ε — {run.name}", caption)
        written.append(csv)
        written += save_figures(fig, run.path / "figure_privacy_gap")
        for path in written[-3:]:
            echo(f"wrote {path}")
    return written
