"""Analyses of the information-weighted regression paper (spec 000) run by ``dpbench analyze`` / ``dpbench report``.

* ``iw_e1`` — E1 (§7.3): population information matrices vs T; no run needed (table, spec comparison, figure).
* ``iw_ratio`` — the closing notes' number: median(metric | numerator) / median(metric | denominator) per dataset
  and ε (and an extra coordinate such as data.n), with the medians of every curve.
* ``iw_e5`` — E5 (§7.7): normalised errors E|θ̂−θ*|·E|φ|·α√T and the SSP / Alg 1 ratio vs E|φ|/Eφ².

The figures (median ± bootstrap 95% CI, log–log) are generic presets (``plots:`` in configs/info_weighted/*.yaml).
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import numpy as np
import pandas as pd

from dpbench import registry
from dpbench.engine.store import write_atomic
from dpbench.plot import save_figure
from dpbench.results import load_run


@registry.register_analysis(
    "iw_e1", summary="spec 000 §7.3 E1: PoP_IW vs PoP_SSP and the W interpolation vs T (no run); -o out=results/iw_e1",
    needs_runs=False,
)
def iw_e1(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> list[Path]:
    from dpbench.papers.info_weighted.e1 import run_e1

    o = registry.analysis_options("iw_e1", options, {"out": "results/iw_e1"})
    written = run_e1(Path(o["out"]))
    for kind, path in written.items():
        echo(f"wrote {kind}: {path}")
    return list(written.values())


def ratio_table(trials: pd.DataFrame, metric: str, numerator: str, denominator: str,
                by: tuple[str, ...] = ("dataset_id", "epsilon")) -> pd.DataFrame:
    """Median(metric | numerator label) / median(metric | denominator label) per ``by`` group."""
    for label in (numerator, denominator):
        if label not in set(trials["label"]):
            raise ValueError(f"iw_ratio: no curve labelled {label!r}; labels: {', '.join(pd.unique(trials['label']))}")
    med = trials.groupby([*by, "label"])[metric].median().unstack("label")
    out = pd.DataFrame({numerator: med[numerator], denominator: med[denominator]})
    out["ratio"] = out[numerator] / out[denominator]
    return out.reset_index()


@registry.register_analysis(
    "iw_ratio", summary="median table of every curve and the ratio of medians numerator/denominator per dataset "
    "and ε; -o metric=param_error_sigma numerator=LABEL denominator=LABEL by=data.n",
)
def iw_ratio(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> list[Path]:
    o = registry.analysis_options("iw_ratio", options, {"metric": "param_error_sigma", "numerator": "IWR-DP",
                                                         "denominator": "AdaSSP", "by": ""})
    written = []
    for run_dir in runs:
        run = load_run(run_dir)
        trials, metric = run.trials, o["metric"]
        for column in (metric, o["by"] or "epsilon"):
            if column not in trials:
                raise ValueError(f"iw_ratio: {column!r} is not a column of {run.path / 'trials.csv'}")
        keys = ("dataset", o["by"], "epsilon") if o["by"] else ("dataset_id", "epsilon")
        wide = trials.groupby([*keys, "label"], sort=False)[metric].median().unstack("label")
        wide = wide[[lab for lab in run.label_order() if lab in wide.columns]]
        with pd.option_context("display.width", 200, "display.max_rows", 500, "display.max_columns", 30):
            echo(f"median {metric}:\n{wide.to_string(float_format=lambda v: f'{v:.3g}')}")
            ratios = ratio_table(trials, metric, o["numerator"], o["denominator"], by=keys)
            echo(f"\nratio of medians {o['numerator']} / {o['denominator']}:\n"
                 f"{ratios.to_string(index=False, float_format=lambda v: f'{v:.3g}')}")
        path = run.path / f"iw_ratio_{metric}.csv"
        write_atomic(path, ratios.to_csv(index=False))
        echo(f"wrote {path}")
        written.append(path)
    return written


def e5_tables(trials: pd.DataFrame) -> tuple[pd.DataFrame, pd.DataFrame]:
    """E5 (spec 000 §7.7): per (ρ, s, T, α) and mechanism the mean error, E|θ̂−θ*|·E|φ|·α√T and Alg 1's theory
    value; and the ratio of mean errors Laplace SSP / Alg 1 next to E|φ|/Eφ² (Lemma 3.1 vs Prop 3.2)."""
    t = trials.copy()
    t["E_abs_phi"] = t["data.rho"] + (1 - t["data.rho"]) * t["data.s"]
    t["E_phi2"] = t["data.rho"] + (1 - t["data.rho"]) * t["data.s"] ** 2
    cell = ["data.rho", "data.s", "data.n", "epsilon"]
    mean = t.groupby([*cell, "mechanism"]).agg(
        err=("abs_error_1d", "mean"), E_abs_phi=("E_abs_phi", "first"), E_phi2=("E_phi2", "first")).reset_index()
    mean["normalized"] = mean["err"] * mean["E_abs_phi"] * mean["epsilon"] * np.sqrt(mean["data.n"])
    mean["theory_alg1"] = 0.8 * np.sqrt((2 * (4 / mean["epsilon"]) ** 2 + 1) / mean["data.n"]) / mean["E_abs_phi"]
    wide = mean.pivot_table(index=cell, columns="mechanism", values="err").reset_index()
    wide["ratio_ssp_over_alg1"] = wide["ldp_laplace_ssp_1d"] / wide["ldp_simple_1d"]
    wide["E_abs_phi_over_E_phi2"] = (wide["data.rho"] + (1 - wide["data.rho"]) * wide["data.s"]) / (
        wide["data.rho"] + (1 - wide["data.rho"]) * wide["data.s"] ** 2)
    table = mean.merge(wide[[*cell, "ratio_ssp_over_alg1", "E_abs_phi_over_E_phi2"]], on=cell)
    return table, wide


def e5_ratio_figure(wide: pd.DataFrame, path: Path, saturation: float = 0.3) -> Path:
    """Ratio of mean errors Laplace SSP / Alg 1 vs E|φ|/Eφ², with the diagonal the two lemmas predict."""
    from matplotlib.figure import Figure

    fig = Figure(figsize=(5.6, 4.8))
    ax = fig.subplots()
    sat = (wide["ldp_laplace_ssp_1d"] > saturation) | (wide["ldp_simple_1d"] > saturation)
    ax.scatter(wide.loc[~sat, "E_abs_phi_over_E_phi2"], wide.loc[~sat, "ratio_ssp_over_alg1"],
               label=f"neither mean error > {saturation:g}")
    ax.scatter(wide.loc[sat, "E_abs_phi_over_E_phi2"], wide.loc[sat, "ratio_ssp_over_alg1"], marker="x",
               label=f"saturated (a mean error > {saturation:g})")
    lim = [0.8, float(wide["E_abs_phi_over_E_phi2"].max()) * 1.3]
    ax.plot(lim, lim, "k:", label="ratio = E|φ|/Eφ²")
    ax.set_xscale("log")
    ax.set_yscale("log")
    ax.set_xlabel("E|φ| / Eφ²")
    ax.set_ylabel("mean |θ̂−θ*|: Laplace SSP / Alg 1")
    ax.grid(True, which="major", alpha=0.4)
    ax.legend(fontsize=7.5, loc="upper left")
    ax.set_title("E5 (b): synthetic demonstration of Lemma 3.1 vs Prop 3.2\n(proposed in spec 000 §7.7), "
                 "not a reproduction", fontsize=8.5)
    fig.tight_layout()
    save_figure(fig, path, dpi=150)
    return path


@registry.register_analysis(
    "iw_e5", summary="spec 000 §7.7 E5: normalised errors E|θ̂−θ*|·E|φ|·α√T and the SSP/Alg 1 ratio figure"
)
def iw_e5(runs: list[Path], options: dict[str, str], echo: Callable[[str], None]) -> list[Path]:
    registry.analysis_options("iw_e5", options, {})
    written = []
    for run_dir in runs:
        run = load_run(run_dir)
        needed = {"data.rho", "data.s", "data.n", "abs_error_1d"}
        if not needed <= set(run.trials.columns):
            raise ValueError(f"iw_e5: {run.path / 'trials.csv'} lacks {sorted(needed - set(run.trials.columns))} "
                             "(an iw_e5_ldp_1d run)")
        table, wide = e5_tables(run.trials)
        with pd.option_context("display.width", 200, "display.max_rows", 500):
            echo(table.to_string(index=False, float_format=lambda v: f"{v:.3g}"))
        csv = run.path / "iw_e5_table.csv"
        write_atomic(csv, table.to_csv(index=False))
        figure = e5_ratio_figure(wide, run.path / "iw_e5_ratio.png")
        for path in (csv, figure):
            echo(f"wrote {path}")
        written += [csv, figure]
    return written
