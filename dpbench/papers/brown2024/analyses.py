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
from dataclasses import replace
from pathlib import Path

import numpy as np
import pandas as pd

from dpbench import registry
from dpbench.analysis.figures.kinds import draw
from dpbench.analysis.figures.save import save_figures
from dpbench.analysis.runs import load_run
from dpbench.analysis.stats import format_table
from dpbench.contract import Hyper
from dpbench.io.atomic import write_atomic


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


#: the per-trial error the iso-error analysis interpolates (:mod:`dpbench.papers.brown2024.metrics`)
METRIC = "brown_l2_error"


def with_n(trials: pd.DataFrame) -> pd.DataFrame:
    """``trials`` with ``data.n`` = n_per_p · p (the grid's n)."""
    return trials.assign(**{"data.n": trials["data.n_per_p"] * trials["data.p"]})


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


#: the options of the brown2024_iso_error analysis and figure kind (figures.py), declared once
OPTIONS = {
    "target": Hyper(float, default=0.5, gt=0, doc="the error E‖θ̃ − θ*‖₂ whose n is found"),
    "resamples": Hyper(int, default=1000, ge=100, doc="bootstrap resamples of the trials within each n"),
    "seed": Hyper(int, default=0, ge=0, doc="bootstrap seed"),
}


@registry.register_analysis(
    "brown2024_iso_error",
    summary="Brown et al. 2024: n*(p) at E‖θ̃ − θ*‖ = 0.5 per curve, interpolated over the n grid, with the fitted "
    "exponent b of n* ∝ p^b; -o target=0.5 resamples=1000 seed=0",
    options=OPTIONS,
)
def brown2024_iso_error(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> list[Path]:
    o = registry.analysis_options("brown2024_iso_error", options)
    loaded = [load_run(run_dir) for run_dir in runs]
    pooled = replace(loaded[0], trials=pd.concat([run.trials for run in loaded], ignore_index=True))
    drawing = draw("brown2024_iso_error", pooled, **o)  # figures.py
    table, fits = drawing.points, drawing.slopes
    out = Path(runs[0]).parent if len(runs) > 1 else Path(runs[0])
    written = [out / "iso_error_crossings.csv", out / "iso_error_fits.csv"]
    write_atomic(written[0], table.to_csv(index=False))
    write_atomic(written[1], fits.to_csv(index=False))
    echo(format_table(fits))
    save_figures(drawing.figure, out / "iso_error")
    return [*written, out / "iso_error.png"]
