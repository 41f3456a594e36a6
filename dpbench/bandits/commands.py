"""``dpbench bandit-report RUN``: regret slopes and the privacy gap of a ``kind: bandit`` run.

* **Slopes** — per (environment, algorithm, ε): the log–log slope of the mean cumulative regret vs T over the last
  ``octaves`` doublings before T_max (spec 001 §5: 1/2 for elimination, 3/4 JDP SquareCB, 5/6 LDP SquareCB).
* **Privacy gap** — ``Reg(T, ε) − Reg(T, ∞)`` of the same algorithm, paired by trial (both runs see the same
  instance, contexts and reward coins), mean ± 1.96·sd/√R, at the requested T; drawn vs 1/ε (spec 001 F6(b):
  roughly linear in 1/ε and not growing with T for JDP). Also the log–log slope of the gap vs 1/ε.

Writes ``bandit_report.csv`` (slopes), ``privacy_gap.csv``, ``figure_privacy_gap.png`` and ``figure_regret_grid.png``
(regret vs T per environment × private algorithm, one curve per ε) in the run folder.
"""

from __future__ import annotations

import math
import textwrap
from pathlib import Path
from typing import Annotated

import numpy as np
import pandas as pd
import typer
from matplotlib.figure import Figure

Z95 = 1.96


def regret_slopes(trials: pd.DataFrame, octaves: float = 4.0) -> pd.DataFrame:
    """Log–log slope of mean regret vs T over [T_max/2^octaves, T_max] per (dataset_id, label, epsilon)."""
    rows = []
    for (ds, label, eps), g in trials.groupby(["dataset_id", "label", "epsilon"], sort=False):
        curve = g.groupby("T")["regret"].mean()
        t_max = curve.index.max()
        window = curve[(curve.index >= t_max / 2**octaves) & (curve > 0)]
        slope = np.polyfit(np.log(window.index.to_numpy(float)), np.log(window.to_numpy()), 1)[0] \
            if len(window) >= 3 else math.nan
        final = g[g["T"] == t_max]["regret"]
        rows.append({"dataset_id": ds, "label": label, "epsilon": eps, "T_max": int(t_max),
                     "regret_T_max": float(final.mean()),
                     "ci95": float(Z95 * final.std(ddof=0) / math.sqrt(len(final))),
                     "slope": float(slope), "cpu_s_per_1e5_rounds": float(
                         (g.drop_duplicates("trial")["cpu_seconds"] / t_max * 1e5).mean())
                     if "cpu_seconds" in g else math.nan})
    return pd.DataFrame(rows)


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
                rows.append({"dataset_id": ds, "label": label, "epsilon": float(eps), "inv_epsilon": 1.0 / eps,
                             "T": T, "gap": float(diff.mean()),
                             "ci95": float(Z95 * diff.std(ddof=0) / math.sqrt(len(diff))), "trials": len(diff)})
    return pd.DataFrame(rows)


def gap_slopes(gaps: pd.DataFrame) -> pd.DataFrame:
    """Log–log slope of the mean gap vs 1/ε per (dataset_id, label, T) (positive gaps only)."""
    rows = []
    for (ds, label, T), g in gaps.groupby(["dataset_id", "label", "T"], sort=False):
        ok = g[g["gap"] > 0]
        slope = np.polyfit(np.log(ok["inv_epsilon"]), np.log(ok["gap"]), 1)[0] if len(ok) >= 2 else math.nan
        rows.append({"dataset_id": ds, "label": label, "T": T, "gap_slope_vs_inv_eps": float(slope)})
    return pd.DataFrame(rows)


def gap_figure(gaps: pd.DataFrame, title: str, caption: str) -> Figure:
    panels = list(pd.unique(gaps["dataset_id"]))
    ncols = min(3, len(panels))
    nrows = math.ceil(len(panels) / ncols)
    width = 4.6 * ncols + 0.4
    cap_lines = textwrap.wrap(caption, int(width * 11)) if caption else []  # as regret_grid: no overlap with x-labels
    height = 3.6 * nrows + 0.9 + 0.16 * len(cap_lines)
    fig = Figure(figsize=(width, height), dpi=150)
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
                ax.errorbar(pts["inv_epsilon"], pts["gap"], yerr=pts["ci95"], color=f"C{ci}",
                            linestyle=styles[ti % 4], marker="o", capsize=3,
                            label=f"{label}, T = 2^{int(round(math.log2(T)))}")
        ax.set_xlabel("1/ε")
        ax.set_ylabel("Reg(T, ε) − Reg(T, ∞)")
        if (sub["gap"] > 0).all() and sub["gap"].max() > 20 * sub["gap"].min():
            ax.set_yscale("log")  # gaps at different T differ by orders of magnitude: keep the small ones visible
        else:
            ax.axhline(0, color="grey", linewidth=0.8)
        ax.grid(True, alpha=0.4)
        ax.set_title(str(panel), fontsize=10)
        ax.legend(fontsize=7)
    for extra in axes.flat[len(panels):]:
        fig.delaxes(extra)
    if title:
        fig.suptitle(title, fontsize=11)
    if cap_lines:
        fig.text(0.5, 0.01, "\n".join(cap_lines), ha="center", va="bottom", fontsize=8, style="italic")
    fig.tight_layout(rect=(0, (0.16 * len(cap_lines) + 0.15) / height, 1, 1 - 0.5 / height))
    return fig


def regret_grid(trials: pd.DataFrame, title: str, caption: str) -> Figure:
    """Regret vs T (log–log), one row per environment, one column per private algorithm, one curve per ε
    (ε = ∞ in black); non-private algorithms are drawn in every panel of their row as grey dashed references."""
    envs = list(pd.unique(trials["dataset_id"]))
    private = trials[trials["privacy_model"] != "none"] if "privacy_model" in trials else trials
    algos = list(pd.unique(private["label"]))
    refs = trials[trials["privacy_model"] == "none"] if "privacy_model" in trials else trials.iloc[:0]
    eps_values = sorted(pd.unique(private["epsilon"]), key=lambda e: (math.isinf(e), e))
    finite = [e for e in eps_values if math.isfinite(e)]
    import matplotlib

    cmap = matplotlib.colormaps["viridis"]
    color = {e: (cmap(i / max(1, len(finite) - 1) * 0.85) if math.isfinite(e) else "black")
             for i, e in enumerate(eps_values)}
    nrows, ncols = len(envs), max(1, len(algos))
    width = max(7.0, 4.2 * ncols + 0.6)
    cap_lines = textwrap.wrap(caption, int(width * 11)) if caption else []
    title_lines = textwrap.wrap(title, int(width * 9)) if title else []
    height = 3.2 * nrows + 0.6 + 0.2 * len(title_lines) + 0.16 * len(cap_lines)
    fig = Figure(figsize=(width, height), dpi=150)
    axes = fig.subplots(nrows, ncols, squeeze=False)

    def band(ax, sub, **style):
        agg = sub.groupby("T")["regret"].agg(["mean", "std", "count"])
        half = Z95 * agg["std"].fillna(0) * np.sqrt((agg["count"] - 1).clip(lower=1) / agg["count"]) / np.sqrt(
            agg["count"])
        ax.plot(agg.index, agg["mean"], **style)
        ax.fill_between(agg.index, (agg["mean"] - half).clip(lower=1e-9), agg["mean"] + half,
                        color=style.get("color"), alpha=0.15, linewidth=0)

    for r, env in enumerate(envs):
        for c, algo in enumerate(algos):
            ax = axes[r, c]
            sub = private[(private["dataset_id"] == env) & (private["label"] == algo)]
            for eps in eps_values:
                pts = sub[sub["epsilon"] == eps]
                if not pts.empty:
                    band(ax, pts, color=color[eps], linewidth=1.4,
                         label="ε = ∞ (σ = 0)" if math.isinf(eps) else f"ε = {eps:g}")
            for ref in pd.unique(refs["label"]):
                pts = refs[(refs["dataset_id"] == env) & (refs["label"] == ref)]
                if not pts.empty:
                    band(ax, pts, color="grey", linestyle="--", linewidth=1.2, label=str(ref))
            ax.set_xscale("log")
            ax.set_yscale("log")
            ax.grid(True, alpha=0.4)
            ax.set_title(f"{env}\n{algo}", fontsize=9)
            if r == nrows - 1:
                ax.set_xlabel("T")
            if c == 0:
                ax.set_ylabel("cumulative regret")
            if r == 0 and c == 0:
                ax.legend(fontsize=7)
    if title_lines:
        fig.suptitle("\n".join(title_lines), fontsize=11)
    if cap_lines:
        fig.text(0.5, 0.01, "\n".join(cap_lines), ha="center", va="bottom", fontsize=8, style="italic")
    bottom = (0.16 * len(cap_lines) + 0.15) / height
    top = 1 - (0.2 * len(title_lines) + 0.1) / height
    fig.tight_layout(rect=(0, bottom, 1, top))
    return fig


def report(run_dir: Path, at: list[int] | None = None, octaves: float = 4.0) -> dict[str, pd.DataFrame]:
    import yaml

    trials_path = run_dir / "trials.csv"
    if not trials_path.is_file():
        raise FileNotFoundError(f"{trials_path} not found (run `dpbench run` first)")
    trials = pd.read_csv(trials_path)
    if "T" not in trials or "regret" not in trials:
        raise ValueError(f"{trials_path} is not a bandit run (no T/regret columns)")
    trials["epsilon"] = trials["epsilon"].astype(float)
    t_max = int(trials["T"].max())
    at = at or [t_max // 16, t_max]
    slopes = regret_slopes(trials, octaves)
    slopes.to_csv(run_dir / "bandit_report.csv", index=False)
    gaps = privacy_gaps(trials, at)
    out = {"slopes": slopes, "gaps": gaps}
    config = yaml.safe_load((run_dir / "config.yaml").read_text()) if (run_dir / "config.yaml").exists() else {}
    fig = regret_grid(trials, str(config.get("title", run_dir.name)), str(config.get("caption", "")))
    for suffix in (".png", ".pdf"):
        fig.savefig(run_dir / f"figure_regret_grid{suffix}", dpi=150)
    if not gaps.empty:
        gaps.to_csv(run_dir / "privacy_gap.csv", index=False)
        out["gap_slopes"] = gap_slopes(gaps)
        title = f"Privacy gap vs 1/ε — {config.get('name', run_dir.name)}"
        caption = ("Paired by trial (same instance, contexts and reward coins); mean ± 1.96·sd/√R. "
                   + str(config.get("caption", "")))
        fig = gap_figure(gaps, title, caption)
        for suffix in (".png", ".pdf"):
            fig.savefig(run_dir / f"figure_privacy_gap{suffix}", dpi=150)
    return out


def register(app: typer.Typer) -> None:
    @app.command(name="bandit-report")
    def bandit_report(
        run_dir: Annotated[Path, typer.Argument(help="a kind: bandit run folder (holding trials.csv)")],
        at: Annotated[list[int] | None, typer.Option(help="T values for the privacy gap (default T_max/16, T_max)")]
        = None,
        octaves: Annotated[float, typer.Option(help="doublings before T_max used for the regret slope")] = 4.0,
    ) -> None:
        """Regret-vs-T slopes and the privacy gap Reg(T, ε) − Reg(T, ∞) vs 1/ε of a bandit run."""
        try:
            out = report(run_dir, at, octaves)
        except (ValueError, FileNotFoundError) as err:
            typer.echo(f"error: {err}", err=True)
            raise typer.Exit(code=2) from None
        with pd.option_context("display.width", 200, "display.max_columns", 20):
            typer.echo(out["slopes"].to_string(index=False, float_format=lambda v: f"{v:.4g}"))
            if not out["gaps"].empty:
                typer.echo("")
                typer.echo(out["gaps"].to_string(index=False, float_format=lambda v: f"{v:.4g}"))
                typer.echo("")
                typer.echo(out["gap_slopes"].to_string(index=False, float_format=lambda v: f"{v:.3g}"))
                typer.echo(f"wrote {run_dir / 'figure_privacy_gap.png'}")
        typer.echo(f"wrote {run_dir / 'figure_regret_grid.png'}")
