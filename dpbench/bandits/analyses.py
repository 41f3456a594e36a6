"""The bandit privacy gap (``dpbench analyze bandit_gap RUN``; configs name it under ``analyses:``).

``Reg(T, ε) − Reg(T, ∞)`` of the same algorithm, paired by trial (both runs see the same instance, contexts and
reward coins), mean ± 1.96·sd/√R, at the requested T; drawn vs 1/ε (spec 001 F6(b): roughly linear in 1/ε and not
growing with T for JDP), with the log–log slope of the gap vs 1/ε. Writes ``privacy_gap.csv`` and
``figure_privacy_gap.png``/``.pdf`` (the figure kind ``bandit_privacy_gap``, :mod:`dpbench.bandits.figures`, drawn
through the kinds' table). Regret vs T and its slopes are generic figure presets (``plots:``, ``fit:``).
"""

from __future__ import annotations

import math
from collections.abc import Callable
from pathlib import Path
from typing import Any

import numpy as np
import pandas as pd

from dpbench import registry
from dpbench.analysis.figures.kinds import draw
from dpbench.analysis.figures.save import save_figures
from dpbench.analysis.runs import Run, load_run, require_columns
from dpbench.analysis.stats import halfwidth95, loglog_slope
from dpbench.config.fields import positive_int
from dpbench.contract import Hyper
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


def parse_checkpoints(value: Any, where: str) -> tuple[int, ...]:
    """The T of ``at``: a list of integers ≥ 1 (``-o at=1024,4096`` as text); empty = T_max/16 and T_max."""
    items = [v.strip() for v in value.split(",") if v.strip()] if isinstance(value, str) else value
    if not isinstance(items, (list, tuple)):
        raise ValueError(f"{where}: must be a list of integers ≥ 1 (T checkpoints), got {value!r}")
    return tuple(positive_int(v, f"{where}[{i}]") for i, v in enumerate(items))


#: the options of the bandit_gap analysis and the bandit_privacy_gap figure kind (figures.py), declared once
OPTIONS = {
    "at": Hyper(
        object,
        default=(),
        parse=parse_checkpoints,
        shown="a list of integers ≥ 1",
        doc="the T at which the gap is taken (nearest checkpoint); empty: T_max/16 and T_max",
    ),  # fmt: skip
    "caption": Hyper(str, default="", doc="the gap figure's caption (empty: the run's caption)"),
}


def run_gaps(run: Run, at: tuple[int, ...] = ()) -> pd.DataFrame:
    """:func:`privacy_gaps` of a bandit run at ``at`` (empty: T_max/16 and T_max)."""
    require_columns(run, ("T", "regret"), "bandit_gap", "a bandit run has them")
    trials = run.trials.assign(epsilon=run.trials["epsilon"].astype(float))
    t_max = int(trials["T"].max())
    return privacy_gaps(trials, list(at) or [t_max // 16, t_max])


@registry.register_analysis(
    "bandit_gap",
    summary="bandit privacy gap Reg(T, ε) − Reg(T, ∞), paired by trial, vs 1/ε (spec 001 F6(b)); "
    "-o at=T1,T2 (default T_max/16, T_max); -o caption=… (default: the run's caption)",
    options=OPTIONS,
)
def bandit_gap(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> list[Path]:
    o = registry.analysis_options("bandit_gap", options)
    written = []
    for run_dir in runs:
        run = load_run(run_dir)
        if run_gaps(run, o["at"]).empty:
            echo(f"{run.name}: no algorithm ran at both ε = ∞ and a finite ε; no privacy gap")
            continue
        drawing = draw("bandit_privacy_gap", run, **o)  # figures.py
        gaps = drawing.points
        fmt = {"float_format": lambda v: f"{v:.4g}", "index": False}
        with pd.option_context("display.width", 200, "display.max_columns", 20):
            echo(gaps.to_string(**fmt))
            echo("")
            echo(drawing.slopes.to_string(**fmt))
        csv = run.path / "privacy_gap.csv"
        write_atomic(csv, gaps.to_csv(index=False))
        written.append(csv)
        written += save_figures(drawing.figure, run.path / "figure_privacy_gap")
        for path in written[-3:]:
            echo(f"wrote {path}")
    return written
