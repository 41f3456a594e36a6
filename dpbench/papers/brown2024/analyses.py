"""Brown et al. 2024's iso-error analysis (spec 005 §4-addendum): the n at which E‖θ̃ − θ*‖₂ = target, per p.

Instead of the script's binary search over n (one search per p, each run of trials at the probed n), the configs
run a fixed grid n = n_per_p·p around the crossing and this analysis interpolates: for each (curve, p), the mean
error at each grid n, and n*(p) = the n where the piecewise log–log linear interpolation of the mean first falls
to the target. Its 95% interval is the percentile interval of n* over bootstrap resamples of the trials (within
each n). The fit log n* = a + b·log p (least squares over p) gives the scaling exponent b, with the percentile
interval of b over the same bootstrap replicates (independent across p). DP-GD linear in p ⇔ b = 1.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from dpbench import registry
from dpbench.analysis.figures.save import save_figures
from dpbench.analysis.runs import load_run
from dpbench.analysis.stats import fmt_ci, format_table


def crossing(ns: np.ndarray, means: np.ndarray, target: float) -> float:
    """The n where the log–log interpolation of mean error vs n first falls to ``target`` (ns increasing);
    NaN when the grid does not bracket it."""
    above = means > target
    for i in range(len(ns) - 1):
        if above[i] and not above[i + 1]:
            x0, x1 = np.log(ns[i]), np.log(ns[i + 1])
            y0, y1 = np.log(means[i]), np.log(means[i + 1])
            return float(np.exp(x0 + (np.log(target) - y0) * (x1 - x0) / (y1 - y0)))
    return float("nan")


def bootstrap_crossings(
    errors: dict[int, np.ndarray], target: float, resamples: int, rng: np.random.Generator
) -> tuple[float, np.ndarray]:
    """(n* of the means, n* of each bootstrap resample of the trials within each n)."""
    ns = np.array(sorted(errors), dtype=float)
    point = crossing(ns, np.array([errors[int(n)].mean() for n in ns]), target)
    boot = np.empty((resamples, ns.size))
    for j, n in enumerate(ns):
        values = errors[int(n)]
        boot[:, j] = values[rng.integers(0, values.size, size=(resamples, values.size))].mean(axis=1)
    return point, np.array([crossing(ns, row, target) for row in boot])


def slope_fit(ps: np.ndarray, crossings: np.ndarray) -> tuple[float, float]:
    """(a, b) of log n* = a + b log p by least squares over the finite points."""
    ok = np.isfinite(crossings)
    b, a = np.polyfit(np.log(ps[ok]), np.log(crossings[ok]), 1)
    return float(a), float(b)


def iso_error_table(
    trials: pd.DataFrame, metric: str, target: float, resamples: int, seed: int
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per (label, p): n* with its 95% bootstrap interval; per label: the exponent b with its interval."""
    rng = np.random.default_rng(seed)
    rows, fits = [], []
    for label, curve in trials.groupby("label"):
        ps, points, boots = [], [], []
        for p, group in curve.groupby("data.p"):
            errors = {int(n): g[metric].to_numpy(float) for n, g in group.groupby("data.n")}
            point, boot = bootstrap_crossings(errors, target, resamples, rng)
            lo, hi = np.nanpercentile(boot, [2.5, 97.5]) if np.isfinite(boot).any() else (np.nan, np.nan)
            rows.append({"label": label, "p": int(p), "n_star": point, "n_lo": lo, "n_hi": hi,
                         "unbracketed_share": float(np.mean(~np.isfinite(boot))), "n_grid": len(errors)})  # fmt: skip
            ps.append(float(p))
            points.append(point)
            boots.append(boot)
        ps_arr, boots_arr = np.array(ps), np.array(boots).T  # (resamples, #p)
        a, b = slope_fit(ps_arr, np.array(points))
        slopes = np.array([slope_fit(ps_arr, row)[1] for row in boots_arr if np.isfinite(row).sum() >= 2])
        lo, hi = np.percentile(slopes, [2.5, 97.5])
        fits.append({"label": label, "a": a, "b": b, "b_lo": lo, "b_hi": hi,
                     "n_star_per_p_median": float(np.nanmedian(np.array(points) / ps_arr))})  # fmt: skip
    return pd.DataFrame(rows), pd.DataFrame(fits)


def iso_error_figure(table: pd.DataFrame, fits: pd.DataFrame, target: float):
    """n*(p) with 95% intervals and the fitted power laws, log–log."""
    from matplotlib.figure import Figure

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


@registry.register_analysis(
    "brown2024_iso_error",
    summary="Brown et al. 2024: n*(p) at E‖θ̃ − θ*‖ = 0.5 per curve, interpolated over the n grid, with the fitted "
    "exponent b of n* ∝ p^b; -o target=0.5 resamples=1000 seed=0",
)
def brown2024_iso_error(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> list[Path]:
    o = registry.analysis_options("brown2024_iso_error", options, {"target": 0.5, "resamples": 1000, "seed": 0})
    frames = []
    for run_dir in runs:
        trials = load_run(run_dir).trials
        for column in ("brown_l2_error", "data.p", "data.n_per_p", "label"):
            if column not in trials:
                raise ValueError(f"brown2024_iso_error: {run_dir}/trials.csv has no column {column!r}")
        frames.append(trials.assign(**{"data.n": trials["data.n_per_p"] * trials["data.p"]}))
    table, fits = iso_error_table(pd.concat(frames), "brown_l2_error", o["target"], o["resamples"], o["seed"])
    out = Path(runs[0]).parent if len(runs) > 1 else Path(runs[0])
    written = [out / "iso_error_crossings.csv", out / "iso_error_fits.csv"]
    table.to_csv(written[0], index=False)
    fits.to_csv(written[1], index=False)
    echo(format_table(fits))
    save_figures(iso_error_figure(table, fits, o["target"]), out / "iso_error")
    return [*written, out / "iso_error.png"]
