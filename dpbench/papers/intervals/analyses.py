"""The ``coverage`` analysis (issue 37; spec 005 §10, §12): from the ``ci.*`` columns of a run (metric ``ci``,
:mod:`dpbench.papers.intervals.metrics`), per cell (dataset, ε) and interval method — coverage of the population θ*
and of θ̂_OLS with Clopper–Pearson 95% bands, the median width and the median width relative to the non-private
Wald interval of the same trial, the mean CI overlap and the sign/significance agreement with it.

A method *reaches nominal* in a cell when the band of its coverage contains 0.95 or lies above it.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from dpbench import registry
from dpbench.analysis.figures.coverage import coverage_figure
from dpbench.analysis.figures.save import save_figures, write_text
from dpbench.analysis.runs import load_run
from dpbench.analysis.stats import clopper_pearson, format_table
from dpbench.papers.intervals.metrics import ALPHA, CONTROL

CI_COLUMN = re.compile(r"^ci\.(?P<method>[^.]+)\.(?P<quantity>[^.]+)\.(?P<j>\d+)$")
#: the cell of a coverage estimate (besides the method)
CELL = ("dataset", "n", "d", "label", "epsilon")
NOMINAL = 1.0 - ALPHA
#: the control's curve name
CONTROL_NAME = "non-private Wald"


def methods_of(trials: pd.DataFrame) -> list[str]:
    """The interval methods with ``ci.*`` columns, the control first."""
    found = dict.fromkeys(m.group("method") for c in trials.columns if (m := CI_COLUMN.match(c)))
    return sorted(found, key=lambda name: (name != CONTROL, list(found).index(name)))


def curve_name(label: str, method: str) -> str:
    return CONTROL_NAME if method == CONTROL else f"{label}: {method}"


def coverage_rows(part: pd.DataFrame, method: str, j: int) -> dict[str, float]:
    """Coverage counts with Clopper–Pearson bands, widths, overlap and agreement of one method in one cell."""
    row: dict[str, float] = {}
    for target in ("pop", "ols"):
        hits = part[f"ci.{method}.cover_{target}.{j}"].dropna()
        lo, hi = clopper_pearson(hits.sum(), len(hits))
        rate = hits.mean() if len(hits) else np.nan
        row.update({f"cover_{target}": rate, f"cover_{target}_lo": float(lo), f"cover_{target}_hi": float(hi)})
        row[f"trials_{target}"] = len(hits)
    width = part[f"ci.{method}.width.{j}"]
    row["width"] = float(width.median())
    row["width_ratio"] = float((width / part[f"ci.{CONTROL}.width.{j}"]).median())
    for quantity in ("overlap", "agree"):
        column = f"ci.{method}.{quantity}.{j}"
        row[quantity] = float(part[column].mean()) if column in part else np.nan
    return row


def coverage_table(trials: pd.DataFrame, coefficient: int = 0) -> pd.DataFrame:
    """One row per (cell, method): :func:`coverage_rows` of ``coefficient``; the control once per (dataset, ε)."""
    keys = [k for k in CELL if k in trials]
    rows, seen = [], set()
    for values, part in trials.groupby(keys, sort=False):
        cell = dict(zip(keys, values, strict=True))
        for method in methods_of(part):
            if f"ci.{method}.width.{coefficient}" not in part or part[f"ci.{method}.width.{coefficient}"].isna().all():
                continue
            if method == CONTROL:  # the same data in every mechanism's trials: drawn once per (dataset, ε)
                if (cell.get("dataset"), cell.get("epsilon")) in seen:
                    continue
                seen.add((cell.get("dataset"), cell.get("epsilon")))
            rows.append({**cell, "method": method, "curve": curve_name(cell.get("label", ""), method),
                         **coverage_rows(part, method, coefficient)})  # fmt: skip
    table = pd.DataFrame(rows)
    if not table.empty:
        table["nominal_pop"] = np.where(table["cover_pop_hi"] >= NOMINAL, "yes", "no")
        table["nominal_ols"] = np.where(table["cover_ols_hi"] >= NOMINAL, "yes", "no")
        table.loc[table["trials_pop"] == 0, "nominal_pop"] = "n/a"
    return table


def panel_name(row: pd.Series) -> str:
    name = str(row["dataset"])
    return name if "n=" in name or "n" not in row else f"{name} (n={int(row['n'])}, d={int(row['d'])})"


def figure_tables(table: pd.DataFrame, target: str) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(coverage of ``target``, width ratio) tables in the figure's columns: panel, curve, epsilon, value, lo, hi."""
    base = table.assign(panel=table.apply(panel_name, axis=1))
    cover = base.assign(value=base[f"cover_{target}"], lo=base[f"cover_{target}_lo"], hi=base[f"cover_{target}_hi"])
    private = base[base["method"] != CONTROL]
    width = private.assign(value=private["width_ratio"], lo=np.nan, hi=np.nan)
    return cover.dropna(subset=["value"]), width


#: the columns of the printed table
SHOWN = ["dataset", "n", "d", "epsilon", "curve", "cover_pop", "cover_pop_lo", "cover_pop_hi", "nominal_pop",
         "cover_ols", "cover_ols_lo", "cover_ols_hi", "nominal_ols", "width", "width_ratio", "overlap",
         "agree"]  # fmt: skip


def write_coverage(run_dir: Path, table: pd.DataFrame, targets: Sequence[str], echo: Callable[[str], None]) -> list:
    """The table (CSV and text), a coverage figure per target with data, the width-ratio figure."""
    written = [write_text(run_dir / "coverage.csv", table.to_csv(index=False))]
    shown = table[[c for c in SHOWN if c in table]].round(3)
    echo(format_table(shown))
    curves = list(dict.fromkeys(table["curve"])) if not table.empty else []  # one colour per method in every figure
    for target in targets:
        cover, width = figure_tables(table, target)
        if cover.empty:
            continue
        what = "population θ*" if target == "pop" else "the data set's θ̂_OLS"
        fig = coverage_figure(cover, ylabel="coverage (coefficient 0)", title=f"95% intervals: coverage of {what}",
                              caption="Clopper–Pearson 95% bands over the trials; dashed: nominal 0.95.",
                              curves=curves)  # fmt: skip
        written += save_figures(fig, run_dir / f"coverage_{target}")
    if not width.empty:
        fig = coverage_figure(width, nominal=None, ylabel="width / non-private", curves=curves,
                              title="95% intervals: width relative to the non-private Wald interval",
                              caption="Median over trials of the per-trial width ratio (coefficient 0).")  # fmt: skip
        written += save_figures(fig, run_dir / "coverage_width")
    return written


@registry.register_analysis(
    "coverage",
    summary="interval coverage (θ*, θ̂_OLS) with Clopper–Pearson bands, width ratio, overlap (issue 37); "
    "-o coefficient=0",
)
def coverage_analysis(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> list[Path]:
    o = registry.analysis_options("coverage", options, {"coefficient": 0})
    written: list[Path] = []
    for run_dir in runs:
        run = load_run(run_dir)
        if not any(CI_COLUMN.match(c) for c in run.trials.columns):
            raise ValueError(f"coverage: {run.path / 'trials.csv'} has no ci.* columns (add metric ci to the config)")
        table = coverage_table(run.trials, int(o["coefficient"]))
        written += write_coverage(run.path, table, ("pop", "ols"), echo)
    return written


@registry.register_analysis(
    "ferrando_ols",
    summary="Ferrando et al. 2022 OLS coverage vs N, their Laplace SSP as coded and ε-corrected (spec 005 §7a); "
    "-o trials=1000 B=100 epsilon=5 output=results/ferrando_ols",
    needs_runs=False,
)
def ferrando_analysis(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> list[Path]:
    from dpbench.papers.intervals.ferrando import run

    o = registry.analysis_options(
        "ferrando_ols", options, {"trials": 1000, "B": 100, "epsilon": 5.0, "output": "results/ferrando_ols"}
    )
    out = Path(o["output"])
    out.mkdir(parents=True, exist_ok=True)
    table = run(trials=int(o["trials"]), B=int(o["B"]), epsilon=float(o["epsilon"]))
    echo(format_table(table.round(3)))
    names = {"code": "as their code runs it (NOT ε-DP)", "corrected": "corrected: ε-DP"}
    shown = table.assign(panel=table["calibration"].map(names), curve=table["method"], value=table["coverage"])
    fig = coverage_figure(shown, x="N", ylabel="coverage of β₂ (95% nominal)", ncols=2,
                          title=f"Ferrando et al. 2022 OLS experiment, ε = {o['epsilon']:g}, {o['trials']} trials",
                          caption="D = 4, γ = 5, β = 10·1; Clopper–Pearson 95% bands; dashed: nominal.")  # fmt: skip
    return [write_text(out / "coverage.csv", table.to_csv(index=False)), *save_figures(fig, out / "coverage")]
