"""Analyses of the DP-FTRL controls of issue 17 (``dpbench analyze ftrl-eta-grid|ftrl-slopes RUN...``).

* ``ftrl-eta-grid`` (configs/ftrl/ftrl_ctrl_eta_*.yaml, one run per spectrum): per spectrum and ε, the mean excess
  ½‖θ̂−w*‖²_H of DP-FTRL-I and DP-FTRL-Σ at the rule η and at the best η of the grid (non-private "oracle-η"
  tuning), and the ratio Σ/I under each, paired by (data draw, trial) with a percentile-bootstrap 95% CI; a figure
  of excess vs η (rule η marked) per spectrum × ε.
* ``ftrl-slopes`` (configs/ftrl/ftrl_ctrl_slopes_*.yaml): the log–log slope of the mean excess vs N over the N
  values of the run (≥ 5, data redrawn per trial) with a stratified bootstrap 95% CI (the draws at each N
  resampled independently), next to the §4.3 Table 1 exponent −a (an upper bound: one-sided check slope ≤ −a).

Synthetic controls, not reproductions: the paper has no experiments.
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpbench import registry
from dpbench.analysis.figures.panels import PanelGrid, finish_grid, panel_grid
from dpbench.analysis.figures.save import save_figures
from dpbench.analysis.runs import load_run
from dpbench.analysis.stats import fmt_ci, halfwidth95, loglog_slope, loglog_slope_ci, paired_ratio_ci
from dpbench.io.atomic import write_atomic

PAIR = ["data_draw", "trial"]
#: the y axis of the control figures: the excess population risk
EXCESS_LABEL = "½‖θ̂ − w*‖²_H"


def _eta_values(trials: pd.DataFrame) -> pd.Series:
    """hp.eta as text ('rule' or a number)."""
    return trials["hp.eta"].astype(str)


def _base_labels(trials: pd.DataFrame) -> pd.DataFrame:
    """Curve labels without the grid suffix ' (eta=…)' the config parser appends, and the η column as text."""
    return trials.assign(label=trials["label"].str.replace(r" \(eta=[^)]*\)$", "", regex=True), eta=_eta_values(trials))


def _spectrum_name(trials: pd.DataFrame) -> str:
    return str(trials["dataset"].iloc[0])


def _values(runs_trials: list[pd.DataFrame], column: str) -> str:
    """The runs' values of a data column for a figure title (e.g. d = 2048), ``?`` where the column is absent."""
    values = sorted({int(v) for t in runs_trials if column in t for v in t[column].unique()})
    return ", ".join(str(v) for v in values) or "?"


def eta_table(trials: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    """Rule-η and best-grid-η mean excess of every mechanism per ε, and the paired ratios Σ/I."""
    rng = np.random.default_rng(seed)
    trials = _base_labels(trials)
    rows = []
    for eps, part in trials.groupby("epsilon", sort=True):
        best = {}
        for label, sub in part.groupby("label", sort=False):
            means = sub.groupby("eta")["excess_pop_paper"].mean()
            grid = means.drop("rule", errors="ignore")
            best_eta = grid.idxmin()
            rule_eta = float(sub.loc[sub["eta"] == "rule", "info.eta"].mean()) if "info.eta" in sub else math.nan
            best[label] = best_eta
            for kind, eta in (("rule", "rule"), ("grid-best", best_eta)):
                v = sub.loc[sub["eta"] == eta, "excess_pop_paper"].to_numpy(float)
                rows.append(
                    {
                        "spectrum": _spectrum_name(trials),
                        "epsilon": float(eps),
                        "label": label,
                        "eta": kind,
                        "eta_value": rule_eta if kind == "rule" else float(eta),
                        "mean": float(v.mean()),
                        "ci95": float(halfwidth95(float(v.std()), len(v))),
                        "n": len(v),
                    }
                )
        labels = list(best)
        if len(labels) == 2:
            i_lab, s_lab = sorted(labels, key=lambda lab: "Σ" in lab)
            for kind in ("rule", "grid-best"):
                ei = "rule" if kind == "rule" else best[i_lab]
                es = "rule" if kind == "rule" else best[s_lab]
                a = part[(part["label"] == s_lab) & (part["eta"] == es)].set_index(PAIR)["excess_pop_paper"]
                b = part[(part["label"] == i_lab) & (part["eta"] == ei)].set_index(PAIR)["excess_pop_paper"]
                joined = pd.concat([a.rename("a"), b.rename("b")], axis=1, join="inner")
                ratio, lo, hi = paired_ratio_ci(joined["a"], joined["b"], rng, stat=np.mean)
                rows.append(
                    {
                        "spectrum": _spectrum_name(trials),
                        "epsilon": float(eps),
                        "label": f"{s_lab} / {i_lab}",
                        "eta": kind,
                        "eta_value": math.nan,
                        "mean": ratio,
                        "ci95": math.nan,
                        "n": len(joined),
                        "ratio_lo": lo,
                        "ratio_hi": hi,
                    }
                )
    return pd.DataFrame(rows)


@dataclass
class _Panel:
    """One panel of the control figures: its axes and place, its run's trials and ε, the trials at that ε."""

    ax: Any
    row: int
    col: int
    last_row: bool
    trials: pd.DataFrame
    epsilon: float
    part: pd.DataFrame


def _eps_panels(
    runs_trials: list[pd.DataFrame], caption: str, run_inches: float, extra_inches: float, eps_inches: float
) -> tuple[PanelGrid, list[_Panel]]:
    """The frame of the two control figures: one column per run (spectrum), one row per ε of the runs."""
    eps_values = sorted({float(e) for t in runs_trials for e in t["epsilon"].unique()})
    ncols = len(runs_trials)
    panels = panel_grid(
        len(eps_values), ncols, run_inches * ncols + extra_inches, eps_inches * len(eps_values) + 1.0, caption
    )
    cells = [
        _Panel(
            panels.axes[r, c], r, c, r == len(eps_values) - 1, trials, eps, trials[np.isclose(trials["epsilon"], eps)]
        )
        for c, trials in enumerate(runs_trials)
        for r, eps in enumerate(eps_values)
    ]
    return panels, cells


def _mean_band(ax: Any, agg: pd.DataFrame, colour: str, **plot: Any) -> Any:
    """The mean excess ± 1.96·sd/√R (floored at a tenth of the mean, log axes) of an ``agg`` of mean/std/count."""
    half = halfwidth95(agg["std"], agg["count"])
    (line,) = ax.plot(agg.index, agg["mean"], marker="o", markersize=3, color=colour, **plot)
    ax.fill_between(
        agg.index,
        np.maximum(agg["mean"] - half, 0.1 * agg["mean"]),
        agg["mean"] + half,
        color=colour,
        alpha=0.15,
        linewidth=0,
    )
    return line


def _label_axes(cell: _Panel, xlabel: str) -> None:
    ax = cell.ax
    ax.set_yscale("log")
    ax.grid(True, which="both", alpha=0.3)
    ax.set_title(f"{_spectrum_name(cell.trials)}, ε = {cell.epsilon:g}", fontsize=9)
    if cell.last_row:
        ax.set_xlabel(xlabel)
    if cell.col == 0:
        ax.set_ylabel(EXCESS_LABEL)


def eta_figure(runs_trials: list[pd.DataFrame], caption: str):
    panels, cells = _eps_panels([_base_labels(t) for t in runs_trials], caption, 3.6, 2.4, 3.0)
    handles = {}
    for cell in cells:
        ax = cell.ax
        for k, (label, sub) in enumerate(cell.part.groupby("label", sort=False)):
            grid = sub[sub["eta"] != "rule"].assign(x=lambda f: f["eta"].astype(float))
            agg = grid.groupby("x")["excess_pop_paper"].agg(["mean", "std", "count"])
            handles.setdefault(f"{label}, η grid", _mean_band(ax, agg, f"C{k}"))
            rule = sub[sub["eta"] == "rule"]
            if not rule.empty:
                m = rule["excess_pop_paper"].mean()
                h = halfwidth95(rule["excess_pop_paper"].std(), len(rule))
                eb = ax.errorbar(
                    [rule["info.eta"].mean()],
                    [m],
                    yerr=[[min(h, 0.999 * m)], [h]],
                    marker="*",
                    markersize=11,
                    color=f"C{k}",
                    linestyle="none",
                    markeredgecolor="black",
                )
                handles.setdefault(f"{label}, rule η", eb)
        ax.set_xscale("log")
        _label_axes(cell, "step size η")
    size = f"d = {_values(runs_trials, 'd')}, N = {_values(runs_trials, 'n')}"
    return finish_grid(
        panels,
        title=f"DP-FTRL: rule η (stars) vs η grid (non-private oracle tuning), {size}",
        legend=handles,
        legend_inches=2.3,
        foot_inches=0.45,
    )


@registry.register_analysis(
    "ftrl-eta-grid",
    summary="DP-FTRL rule η vs best grid η per spectrum, ratio Σ/I with CIs (issue 17); -o out=STEM",
)
def ftrl_eta_grid_analysis(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> None:
    o = registry.analysis_options("ftrl-eta-grid", options, {"out": "", "caption": ""})
    all_trials = [load_run(run).trials for run in runs]
    table = pd.concat([eta_table(t) for t in all_trials], ignore_index=True)
    stem = Path(o["out"] or Path(runs[0]) / "eta_grid")
    table.to_csv(f"{stem}.csv", index=False)
    with pd.option_context("display.width", 250, "display.max_columns", 20, "display.max_rows", 200):
        echo(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    fig = eta_figure(all_trials, o["caption"])
    for path in save_figures(fig, stem):
        echo(f"wrote {path}")


def slope_rows(trials: pd.DataFrame, seed: int = 0) -> pd.DataFrame:
    from dpbench.papers.ftrl.analyses import FAMILY, rate_exponent

    rng = np.random.default_rng(seed)
    rows = []
    for (label, mech, eps), part in trials.groupby(["label", "mechanism", "epsilon"], sort=False):
        family = FAMILY.get(mech)
        if family == "nonprivate" and rows and any(r["label"] == label for r in rows):
            continue  # the non-private reference ignores ε: one row
        groups = {float(n): g["excess_pop_paper"].to_numpy() for n, g in part.groupby("data.n")}
        slope, lo, hi = loglog_slope_ci(groups, rng, stat=np.mean)
        spectrum = str(part["data.spectrum"].iloc[0])
        r = float(part["data.r"].iloc[0]) if "data.r" in part and spectrum == "poly" else None
        a = rate_exponent(family, spectrum, r) if family else math.nan
        rows.append(
            {
                "spectrum": _spectrum_name(part),
                "label": label,
                "epsilon": "∞" if family == "nonprivate" else f"{eps:g}",
                "N values": len(groups),
                "draws per N": int(min(len(v) for v in groups.values())),
                "slope": slope,
                "lo": lo,
                "hi": hi,
                "theory -a": -a,
                "slope ≤ -a (CI upper)": bool(hi <= -a),
            }
        )
    return pd.DataFrame(rows)


def _slope_gap(groups: dict[float, pd.DataFrame], pick: dict[float, np.ndarray]) -> float:
    """slope(Σ oracle) − slope(I) of the means over the rows ``pick[N]`` of each N's (draw × mechanism) table."""
    xs = sorted(groups)
    means = {
        m: [groups[x][m].to_numpy()[pick[x]].mean() for x in xs] for m in ("dp_ftrl_sigma_oracle", "dp_ftrl_identity")
    }
    return loglog_slope(xs, means["dp_ftrl_sigma_oracle"]) - loglog_slope(xs, means["dp_ftrl_identity"])


def slope_difference_rows(trials: pd.DataFrame, seed: int = 0, resamples: int = 2000) -> pd.DataFrame:
    """Slope(DP-FTRL-Σ) − slope(DP-FTRL-I) per ε with a paired stratified bootstrap: at each N the same data draws
    (``data_draw``) are resampled for both curves (they share the data: common random numbers)."""
    rng = np.random.default_rng(seed)
    rows = []
    for eps, part in trials.groupby("epsilon", sort=True):
        wide = part.pivot_table(index=["data.n", "data_draw"], columns="mechanism", values="excess_pop_paper")
        if not {"dp_ftrl_identity", "dp_ftrl_sigma_oracle"} <= set(wide.columns):
            continue
        groups = {float(n): g.droplevel(0) for n, g in wide.groupby(level=0)}
        xs = sorted(groups)

        point = _slope_gap(groups, {x: np.arange(len(groups[x])) for x in xs})
        boot = np.array(
            [
                _slope_gap(groups, {x: rng.integers(0, len(groups[x]), len(groups[x])) for x in xs})
                for _ in range(resamples)
            ]
        )
        rows.append(
            {
                "spectrum": _spectrum_name(part),
                "epsilon": float(eps),
                "slope Σ − slope I": point,
                "lo": float(np.quantile(boot, 0.025)),
                "hi": float(np.quantile(boot, 0.975)),
            }
        )
    return pd.DataFrame(rows)


def slopes_figure(runs_trials: list[pd.DataFrame], table: pd.DataFrame, caption: str):
    """Mean ± 1.96·sd/√R of the excess vs N (data draws pooled), one column per spectrum, one row per ε; the legend
    carries each curve's fitted slope with its bootstrap CI."""
    panels, cells = _eps_panels(runs_trials, caption, 3.9, 0.6, 3.4)
    for cell in cells:
        spectrum, eps = _spectrum_name(cell.trials), cell.epsilon
        for k, (label, sub) in enumerate(cell.part.groupby("label", sort=False)):
            agg = sub.groupby("data.n")["excess_pop_paper"].agg(["mean", "std", "count"])
            row = table[
                (table["spectrum"] == spectrum) & (table["label"] == label) & (table["epsilon"].isin([f"{eps:g}", "∞"]))
            ]
            slope = fmt_ci(*row[["slope", "lo", "hi"]].iloc[0], 2) if len(row) else ""
            _mean_band(cell.ax, agg, f"C{k}", label=f"{label}: slope {slope}")
        cell.ax.set_xscale("log", base=2)
        cell.ax.legend(fontsize=6, loc="lower left")
        _label_axes(cell, "N")
    return finish_grid(
        panels,
        title=f"DP-FTRL: excess risk vs N, data redrawn per trial (d = "
        f"{_values(runs_trials, 'd')}); slopes with bootstrap 95% CIs",
        foot_inches=0.2,
    )


@registry.register_analysis(
    "ftrl-slopes",
    summary="DP-FTRL rate slopes vs N with stratified-bootstrap CIs, data redrawn per trial (issue 17)",
)
def ftrl_slopes_analysis(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> None:
    o = registry.analysis_options("ftrl-slopes", options, {"out": "", "figure": "", "caption": ""})
    all_trials = [load_run(run).trials for run in runs]
    table = pd.concat([slope_rows(t) for t in all_trials], ignore_index=True)
    out = Path(o["out"] or Path(runs[0]) / "slopes.csv")
    write_atomic(out, table.to_csv(index=False))
    shown = table.assign(
        slope=[fmt_ci(s, lo, hi, 3) for s, lo, hi in zip(table["slope"], table["lo"], table["hi"], strict=True)]
    ).drop(columns=["lo", "hi"])
    with pd.option_context("display.width", 250, "display.max_columns", 20, "display.max_rows", 200):
        echo(shown.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    echo(f"wrote {out}")
    diffs = pd.concat([slope_difference_rows(t) for t in all_trials], ignore_index=True)
    write_atomic(out.with_name(out.stem + "_difference.csv"), diffs.to_csv(index=False))
    echo("\nslope(Σ oracle) − slope(I), paired bootstrap 95% CI (negative = Σ decays faster):")
    echo(diffs.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
    if o["figure"]:
        for path in save_figures(slopes_figure(all_trials, table, o["caption"]), o["figure"]):
            echo(f"wrote {path}")
